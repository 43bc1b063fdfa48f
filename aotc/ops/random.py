"""Random numbers. `rng-bit-generator`: XLA's counter-based generators (Threefry2x32-20,
Philox4x32-10) as kernel IR, bit for bit as XLA:CPU expands them (`RngBitGeneratorExpander`
over `xla/hlo/builder/lib/prng.cc`), the returned state included; `rng_default` is Philox
on XLA:CPU.

`rng` (rng_uniform, rng_normal) cannot match XLA's bits: XLA:CPU draws it from a
process-global state that advances on every execution, so two runs of one executable
differ. aotc's `rng` is a pure function of the module instead: Philox4x32-10 keyed by the
64-bit FNV-1a hash of the instruction's name, the counter the element's block index
(state 0); the same values on every run. The bits become samples as XLA's prng.cc makes
them: uniform floats from the top mantissa bits (`[a, b)`), uniform integers by the
remainder modulo `b - a` (XLA's two-step sum; `b <= a` gives `a`), normals by Box-Muller
on pairs (`mu + sigma * z`). f16 and bf16 are drawn in f32 (operands widened, the sample
rounded to nearest even), as XLA's RngExpander converts them. A while body or condition holding an `rng` is refused
(lower/subprogram.py): every trip would repeat the same values.

`rng-get-and-update-state` is XLA:CPU's per-call-site 128-bit counter (from 0x7012395, +delta
each execution), kept in the instance: runs of one instance give XLA's sequence.

Each loop trip runs the cipher once and stores all the words it gives (2 for Threefry, 4
for Philox): no per-element call, no recomputed block. Trips are independent, so the
block loop is threaded.
"""
from __future__ import annotations

from math import prod

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape, TupleShape
from ..kernel import ir as K
from ..kernel.host import RNG_STATE, HostCall
from ..kernel.builder import Index, compute_type, store_value
from .bitcast_convert import _from_bits
from .elementwise import _arr, call
from .rule import SIDE_EFFECT, OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

U32, U64 = DTYPES["u32"], DTYPES["u64"]
_ALGORITHMS = ("rng_default", "rng_three_fry", "rng_philox")
_UINT = {8: "u8", 16: "u16", 32: "u32", 64: "u64"}


def _algorithm(instr: Instruction) -> str:
    alg = str(instr.attr("algorithm", "rng_default")).lower()
    if alg not in _ALGORITHMS:
        raise ShapeError(f"rng-bit-generator algorithm={alg} is not one of {', '.join(_ALGORITHMS)}")
    return "rng_philox" if alg == "rng_default" else alg  # XLA:CPU's default generator


def _rbg_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) != 1:
        raise ShapeError("rng-bit-generator takes one operand, the state")
    st = _arr(shapes[0], "state")
    alg = _algorithm(instr)
    sizes = (2,) if alg == "rng_three_fry" else (2, 3)
    if st.dtype.name != "u64" or st.rank != 1 or st.dims[0] not in sizes:
        raise ShapeError(f"rng-bit-generator {alg} needs a u64[{'] or u64['.join(map(str, sizes))}] state, "
                         f"got {st.text(False)}")
    out = instr.shape
    if not isinstance(out, TupleShape) or len(out.elements) != 2 or not isinstance(out.elements[1], ArrayShape):
        raise ShapeError("rng-bit-generator returns a tuple (new state, bits)")
    bits = out.elements[1]
    dt = bits.dtype
    if dt.width not in (2, 4, 8, 16, 32, 64) or dt.kind in ("pred", "complex", "token"):
        raise ShapeError(f"rng-bit-generator cannot generate {dt.name} bits (integers and floats only)")
    return TupleShape((ArrayShape(st.dtype, st.dims), ArrayShape(dt, bits.dims)))


# ------------------------------------------------------------------ the ciphers


def _c(v: int, ty=U32) -> K.Expr:
    return K.Const(v, ty)


def _add(a: K.Expr, b: K.Expr) -> K.Expr:
    return K.Binary("+", a, b, a.ty)  # unsigned: wraps modulo 2^bits


def _xor(a: K.Expr, b: K.Expr) -> K.Expr:
    return K.Binary("^", a, b, a.ty)


def _lo(x: K.Expr) -> K.Expr:
    return K.Cast(x, U32)


def _hi(x: K.Expr) -> K.Expr:
    return K.Cast(K.Binary(">>", x, _c(32, U64), U64), U32)


def _join(lo: K.Expr, hi: K.Expr) -> K.Expr:
    return K.Binary("|", K.Cast(lo, U64), K.Binary("<<", K.Cast(hi, U64), _c(32, U64), U64), U64)


def _rotl(v: K.Expr, r: int) -> K.Expr:
    return K.Binary("|", K.Binary("<<", v, _c(r), U32), K.Binary(">>", v, _c(32 - r), U32), U32)


_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)


def threefry_keys(kb, key: tuple[K.Expr, K.Expr]) -> tuple[K.Expr, K.Expr, K.Expr]:
    """Threefry2x32's key schedule: the two key words and their parity word."""
    return key[0], key[1], kb.let(_xor(_xor(_c(0x1BD11BDA), key[0]), key[1]), "ks")


def threefry2x32(kb, ks: tuple[K.Expr, K.Expr, K.Expr], x: tuple[K.Expr, K.Expr]) -> tuple[K.Expr, K.Expr]:
    """Threefry2x32 with 20 rounds (Salmon et al. 2011) under the key schedule `ks`,
    XLA's injections."""
    x0, x1 = kb.let(_add(x[0], ks[0]), "x"), kb.let(_add(x[1], ks[1]), "x")
    for i in range(5):
        for r in _ROTATIONS[:4] if i % 2 == 0 else _ROTATIONS[4:]:
            x0 = kb.let(_add(x0, x1), "x")
            x1 = kb.let(_xor(_rotl(x1, r), x0), "x")
        x0 = kb.let(_add(x0, ks[(i + 1) % 3]), "x")
        x1 = kb.let(_add(_add(x1, ks[(i + 2) % 3]), _c(i + 1)), "x")
    return x0, x1


def philox4x32(kb, key: tuple[K.Expr, K.Expr], x: tuple[K.Expr, ...]) -> tuple[K.Expr, ...]:
    """Philox4x32 with 10 rounds: two 32x32->64 products per round, the key raised by the
    Weyl constants after each."""
    k0, k1 = key
    for r in range(10):
        p0 = kb.let(K.Binary("*", K.Cast(x[0], U64), _c(0xD2511F53, U64), U64), "p")
        p1 = kb.let(K.Binary("*", K.Cast(x[2], U64), _c(0xCD9E8D57, U64), U64), "p")
        x = (kb.let(_xor(_xor(_hi(p1), x[1]), k0), "x"), kb.let(_lo(p1), "x"),
             kb.let(_xor(_xor(_hi(p0), x[3]), k1), "x"), kb.let(_lo(p0), "x"))
        if r < 9:
            k0, k1 = kb.let(_add(k0, _c(0x9E3779B9)), "k"), kb.let(_add(k1, _c(0xBB67AE85)), "k")
    return x


# ------------------------------------------------------------------ the kernel


def _store_bits(kb, out: K.Buf, at: K.Expr, bits: K.Expr) -> None:
    """Store generated bits (u32 or u64) as an element of `out`'s type: the low bits for a
    narrower type, reinterpreted (XLA converts to the unsigned type of the width, then
    the result is those bits; a 2- or 4-bit type keeps the low bits of the 8-bit draw)."""
    dt = out.dtype
    u = DTYPES[_UINT[dt.bits]]
    b = bits if bits.ty == u else K.Cast(bits, u)
    if dt.width < 8:
        b = K.Binary("&", b, K.Const((1 << dt.width) - 1, u), u)
        if dt.is_subbyte_int:
            b = call(f"aotc_wrap_{dt.name}", compute_type(dt), K.Cast(b, compute_type(dt)))
            kb.store(out, at, store_value(dt, b))
            return
    if dt.name in ("f16", "bf16") or dt.is_narrow_float:  # stored as their bits: kept as they are
        kb.store(out, at, b)                               # (a signaling NaN is not quieted)
    else:
        kb.store(out, at, store_value(dt, _from_bits(b, dt)))


def _split(dims: tuple[int, ...]) -> tuple[int, int, int]:
    """XLA's SplitShapeIntoHalves for 32-bit Threefry: the first even dimension, else the
    largest (first of equals); as (before, size, after) element counts."""
    if not dims:
        return 1, 1, 1
    even = [i for i, n in enumerate(dims) if n % 2 == 0]
    s = even[0] if even else max(range(len(dims)), key=lambda i: (dims[i], -i))
    return prod(dims[:s]), dims[s], prod(dims[s + 1:])


def _threefry(kb, state: K.Buf, out_state: K.Buf, out: K.Buf, dims: tuple[int, ...]) -> None:
    kv = kb.let(K.Load(state, K.Const(0)), "key")
    ctr0 = kb.let(K.Load(state, K.Const(1)), "ctr")
    ks = threefry_keys(kb, (kb.let(_lo(kv), "k"), kb.let(_hi(kv), "k")))

    def block(ctr: K.Expr) -> tuple[K.Expr, K.Expr]:
        c = kb.let(_add(ctr0, K.Cast(ctr, U64)), "c")
        return threefry2x32(kb, ks, (kb.let(_lo(c), "x"), kb.let(_hi(c), "x")))

    n = prod(dims)
    if out.dtype.bits == 64:
        i = kb.loop("i", n, (K.PARALLEL,))
        w = block(i)
        _store_bits(kb, out, i, _join(*w))
        kb.close()
        count = n
    else:  # word t of block (a, c, b) is element (a, 2c + t, b) of the output
        A, D, B = _split(dims)
        H = (D + 1) // 2
        count = A * H * B
        if n:
            a = kb.loop("a", A, (K.PARALLEL,))
            for c0, c1, words in ((0, D // 2, 2), (D // 2, H, 1)):  # whole pairs, then an odd tail
                if c1 <= c0:
                    continue
                c = kb.loop("c", c1, (K.PARALLEL,), start=c0) if c1 - c0 > 1 else K.Const(c0)
                b = kb.loop("b", B, (K.PARALLEL,))
                w = block((a * H + c) * B + b)
                for t in range(words):
                    _store_bits(kb, out, (a * D + c * 2 + t) * B + b, w[t])
                kb.close()
                if c1 - c0 > 1:
                    kb.close()
            kb.close()
    kb.store(out_state, K.Const(0), kv)
    kb.store(out_state, K.Const(1), _add(ctr0, _c(count, U64)))


def _philox(kb, state: K.Buf, out_state: K.Buf, out: K.Buf, dims: tuple[int, ...], nstate: int) -> None:
    kv = kb.let(K.Load(state, K.Const(0)), "key")
    lo0 = kb.let(K.Load(state, K.Const(1)), "lo")
    hi0 = kb.let(K.Load(state, K.Const(2 if nstate == 3 else 0)), "hi")  # a 2-word state: (key, counter)
    key = (kb.let(_lo(kv), "k"), kb.let(_hi(kv), "k"))

    def counter(i: K.Expr) -> tuple[K.Expr, K.Expr]:
        """The 128-bit counter (lo0, hi0) + i, as XLA adds it: the carry when the sum wraps."""
        lo = kb.let(_add(lo0, K.Cast(i, U64)), "lo")
        hi = kb.let(K.Select(K.Binary("<", lo, lo0, K.BOOL), _add(hi0, _c(1, U64)), hi0, U64), "hi")
        return lo, hi

    def block(i: K.Expr) -> tuple[K.Expr, ...]:
        lo, hi = counter(i)
        return philox4x32(kb, key, (kb.let(_lo(lo), "x"), kb.let(_hi(lo), "x"),
                                    kb.let(_lo(hi), "x"), kb.let(_hi(hi), "x")))

    n = prod(dims)
    per = 2 if out.dtype.bits == 64 else 4  # elements one block gives
    blocks = -(-n * (2 if out.dtype.bits == 64 else 1) // 4)

    def emit(i: K.Expr, elements: int) -> None:
        w = block(i)
        vals = (_join(w[0], w[1]), _join(w[2], w[3])) if per == 2 else w
        for t in range(elements):
            _store_bits(kb, out, i * per + t, vals[t])

    if n // per:
        i = kb.loop("i", n // per, (K.PARALLEL,))
        emit(i, per)
        kb.close()
    if n % per:
        emit(K.Const(n // per), n % per)
    lo, hi = counter(K.Const(blocks))
    kb.store(out_state, K.Const(0), kv)
    kb.store(out_state, K.Const(1), lo)
    if nstate == 3:
        kb.store(out_state, K.Const(2), hi)


def _rbg_kernel(kb, instr: Instruction, outs) -> None:
    state = kb.buffers[instr.operands[0]]
    out_state, out = outs
    dims = instr.shape.elements[1].dims
    if _algorithm(instr) == "rng_three_fry":
        _threefry(kb, state, out_state, out, dims)
    else:
        _philox(kb, state, out_state, out, dims, kb.producers[instr.operands[0]].array_shape.dims[0])


RULES.append(OpRule("rng-bit-generator", shape=_rbg_shape, kernel=_rbg_kernel, buffered_operands=True))


# ------------------------------------------------------------------ rng


def _rng_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    out = instr.array_shape
    dist = str(instr.attr("distribution", "")).lower()
    if dist not in ("rng_uniform", "rng_normal"):
        raise ShapeError(f"rng distribution={dist or '?'} is not rng_uniform or rng_normal")
    ok = ("f16", "bf16", "f32", "f64") + (() if dist == "rng_normal" else ("s32", "u32", "s64", "u64"))
    if out.dtype.name not in ok:
        raise ShapeError(f"rng {dist} of {out.dtype.name} is not supported (aotc: {', '.join(ok)})")
    if len(shapes) != 2:
        raise ShapeError(f"rng takes two scalar operands, got {len(shapes)}")
    for k, s in enumerate(shapes):
        a = _arr(s, f"operand {k}")
        if a.rank != 0 or a.dtype != out.dtype:
            raise ShapeError(f"rng operand {k} must be a {out.dtype.name} scalar, got {a.text(False)}")
    return out.with_layout(None)


def fnv1a64(text: str) -> int:
    """The 64-bit FNV-1a hash of `text`'s UTF-8 bytes: an `rng` instruction's key."""
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _uniform_float(kb, bits: K.Expr, lo: K.Expr, hi: K.Expr, dt) -> K.Expr:
    """XLA's ConvertRandomBitsToUniformFloatingPoint: the top mantissa bits as an integer,
    scaled into [0, 1), then `u * (hi - lo) + lo`."""
    mant = 23 if dt.name == "f32" else 52
    top = K.Binary(">>", bits, K.Const(bits.ty.bits - mant, bits.ty), bits.ty)
    u = K.Binary("*", K.Cast(top, dt), K.Const(2.0 ** -mant, dt), dt)
    return K.Binary("+", K.Binary("*", u, K.Binary("-", hi, lo, dt), dt), lo, dt)


def _uniform_int(kb, bits: K.Expr, lo: K.Expr, hi: K.Expr, dt) -> K.Expr:
    """XLA's ConvertRandomBitsToUniformInt: `lo + d/2 + (d - d/2)`, d = bits mod (hi - lo)
    in unsigned arithmetic (so the sum never overflows); an empty range gives `lo`."""
    u = bits.ty
    as_u = (lambda e: e) if dt.kind == "uint" else (lambda e: call(f"aotc_cvt_{dt.name}_{u.name}", u, e))
    rng = kb.let(K.Binary("-", as_u(hi), as_u(lo), u), "range")
    d = kb.let(K.Binary("%", bits, K.Select(K.Binary("==", rng, K.Const(0, u), K.BOOL), K.Const(1, u), rng, u), u), "d")
    half = K.Binary(">>", d, K.Const(1, u), u)
    total = K.Binary("+", K.Binary("+", as_u(lo), half, u), K.Binary("-", d, half, u), u)
    val = total if dt.kind == "uint" else call(f"aotc_cvt_{u.name}_{dt.name}", dt, total)
    return K.Select(K.Binary("==", rng, K.Const(0, u), K.BOOL), lo, val, dt)


def _box_muller(kb, x0: K.Expr, x1: K.Expr, dt) -> tuple[K.Expr, K.Expr]:
    """prng.cc's BoxMullerTransform of two uniforms in [0, 1)."""
    sfx = dt.name
    u1 = kb.let(call(f"aotc_max_{sfx}", dt, x0, K.Const(1.0e-7, dt)), "u1")
    v1 = kb.let(K.Binary("*", K.Const(6.2831853071795864769, dt), x1, dt), "v1")
    u2 = kb.let(call(f"aotc_sqrt_{sfx}", dt, K.Binary("*", K.Const(-2.0, dt), call(f"aotc_log_{sfx}", dt, u1), dt)), "u2")
    return (K.Binary("*", call(f"aotc_sin_{sfx}", dt, v1), u2, dt), K.Binary("*", call(f"aotc_cos_{sfx}", dt, v1), u2, dt))


def _rng_kernel(kb, instr: Instruction, outs) -> None:
    (out,) = outs
    half = instr.array_shape.dtype
    dt = DTYPES["f32"] if half.name in ("f16", "bf16") else half  # XLA's RngExpander: f32, rounded
    normal = str(instr.attr("distribution")).lower() == "rng_normal"
    scalar = Index((), ())
    a = kb.let(kb.operand(instr, 0, scalar), "a")
    b = kb.let(kb.operand(instr, 1, scalar), "b")
    h = fnv1a64(instr.name)
    key = (K.Const(h & 0xFFFFFFFF, U32), K.Const(h >> 32, U32))
    n = instr.array_shape.size
    wide = dt.bits == 64
    per = 2 if wide else 4  # elements one Philox block gives

    def emit(i: K.Expr, elements: int) -> None:
        c = kb.let(K.Cast(i, U64), "ctr")
        w = philox4x32(kb, key, (kb.let(_lo(c), "x"), kb.let(_hi(c), "x"), _c(0), _c(0)))
        bits = (_join(w[0], w[1]), _join(w[2], w[3])) if wide else w
        if normal:
            zero, one = K.Const(0.0, dt), K.Const(1.0, dt)
            vals: list[K.Expr] = []
            for p in range(0, per, 2):
                z = _box_muller(kb, kb.let(_uniform_float(kb, bits[p], zero, one, dt), "u"),
                                kb.let(_uniform_float(kb, bits[p + 1], zero, one, dt), "u"), dt)
                vals += [K.Binary("+", a, K.Binary("*", b, zk, dt), dt) for zk in z]
        elif dt.kind == "float":
            vals = [_uniform_float(kb, x, a, b, dt) for x in bits]
        else:
            vals = [_uniform_int(kb, x, a, b, dt) for x in bits]
        for t in range(elements):
            kb.store(out, i * per + t, store_value(half, vals[t]))

    if n // per:
        i = kb.loop("i", n // per, (K.PARALLEL,))
        emit(i, per)
        kb.close()
    if n % per:
        emit(K.Const(n // per), n % per)


RULES.append(OpRule("rng", shape=_rng_shape, kernel=_rng_kernel))


# ------------------------------------------------------------------ rng-get-and-update-state


def _delta(instr: Instruction) -> int | None:
    """The `delta=N` attribute (kept verbatim by the parser), or None."""
    raw = instr.attr("delta")
    text = getattr(raw, "text", raw)
    if isinstance(text, bool):
        return None
    try:
        return int(str(text).strip(), 0)
    except ValueError:
        return None


def _rng_state_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    """XLA:CPU's meaning: each call site has a 128-bit counter that starts at 0x7012395 and
    grows by `delta` every time the instruction executes; the u64[2] result is its old value,
    low word first. aotc keeps that counter in the instance, one a call site
    (emit_c/host.py), so the runs of one instance give XLA's sequence."""
    if shapes:
        raise ShapeError("rng-get-and-update-state takes no operands")
    delta = _delta(instr)
    if delta is None or not 0 <= delta < 2 ** 64:
        raise ShapeError("rng-get-and-update-state needs an integer delta in [0, 2^64)")
    out = instr.shape
    if not isinstance(out, ArrayShape) or out.dtype.name != "u64" or tuple(out.dims) != (2,):
        raise ShapeError("rng-get-and-update-state gives u64[2]")
    return out


def _rng_state_kernel(kb, instr: Instruction, outs) -> None:
    (out,) = outs
    spec = HostCall(cname="", kind=RNG_STATE, hlo=instr.name, args=(), results=((U64, (2,)),),
                    delta=_delta(instr) or 0)
    kb.emit(K.CallStmt(kb.host_call(spec), (K.Ptr(out),)))


RULES.append(OpRule("rng-get-and-update-state", shape=_rng_state_shape, kernel=_rng_state_kernel,
                    traits=frozenset({SIDE_EFFECT})))

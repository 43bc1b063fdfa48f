"""rng-bit-generator: XLA's counter-based generators (Threefry2x32-20, Philox4x32-10) as
kernel IR, bit for bit as XLA:CPU expands them (`RngBitGeneratorExpander` over
`xla/hlo/builder/lib/prng.cc`), the returned state included. `rng_default` is Philox on
XLA:CPU. `rng` (XLA draws it from a process-global state that advances on every
execution, so no two runs agree) is refused with a located error.

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
from ..kernel.builder import store_value
from .bitcast_convert import _from_bits
from .elementwise import _arr
from .rule import OpRule, ShapeError

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
    (st,) = [_arr(s, "state") for s in shapes] if len(shapes) == 1 else (None,)
    if st is None:
        raise ShapeError("rng-bit-generator takes one operand, the state")
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
    if dt.bits not in (8, 16, 32, 64) or dt.kind in ("pred", "complex", "token") or dt.is_subbyte_int \
            or (dt.is_narrow_float and dt.bits != 8):
        raise ShapeError(f"rng-bit-generator cannot generate {dt.name} bits (8/16/32/64-bit integers "
                         "and floats only)")
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
    the result is those bits)."""
    dt = out.dtype
    u = DTYPES[_UINT[dt.bits]]
    b = bits if bits.ty == u else K.Cast(bits, u)
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

"""Reduce (incl. variadic): shape rule and emission.

The reducer computation becomes a small static C function (see
`aotc.lower.scalar_fn`); the kernel loops over the kept dimensions, holds one
accumulator per operand, and walks the reduced dimensions innermost, reading
inputs through the element expressions so elementwise producers fuse in.
"""
from __future__ import annotations

from ..hlo.ir import Instruction
from ..hlo.opcodes import Op
from ..hlo.shape import ArrayShape, Shape, TupleShape
from ..hlo.dtypes import DTYPES
from ..kernel import ir as K
from ..kernel.builder import Index, compute_type, store_value
from .bounds import is_reducer
from .elementwise import RULES as _ELEMENTWISE_RULES, _arr
from .rule import ASSOCIATIVE, OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py


def _reduce_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) % 2 or not shapes:
        raise ShapeError("reduce needs N operands followed by N init values")
    n = len(shapes) // 2
    ins = [_arr(s, f"operand {k}") for k, s in enumerate(shapes[:n])]
    inits = [_arr(s, f"init {k}") for k, s in enumerate(shapes[n:])]
    dims = instr.attr("dimensions")
    if dims is None:
        raise ShapeError("reduce needs a dimensions attribute")
    for d in dims:
        if not 0 <= d < ins[0].rank:
            raise ShapeError(f"dimensions value {d} is out of range for rank {ins[0].rank}")
    for k, (a, i) in enumerate(zip(ins, inits)):
        if a.dims != ins[0].dims:
            raise ShapeError(f"reduce operand {k} {a.text(False)} does not match {ins[0].text(False)}")
        if i.rank != 0 or i.dtype != a.dtype:
            raise ShapeError(f"reduce init {k} must be a {a.dtype.name} scalar, got {i.text(False)}")
    kept = tuple(n for d, n in enumerate(ins[0].dims) if d not in dims)
    outs = tuple(ArrayShape(a.dtype, kept) for a in ins)
    return outs[0] if n == 1 else TupleShape(outs)


def _reduce_elem(kb, instr: Instruction, idx) -> K.Expr:
    """One output element of a single-operand reduce, folded where it is needed (a row
    reduction fused into the kernel that consumes it; hoisting computes it once a row)."""
    operand = kb.producers[instr.operands[0]]
    in_dims = operand.array_shape.dims
    rdims = tuple(instr.attr("dimensions"))
    kept = [d for d in range(len(in_dims)) if d not in rdims]
    fn = kb.scalar_function(instr.attr("to_apply"))
    ty = compute_type(operand.array_shape.dtype)
    e = kb.exprs(idx) if kept else ()
    acc = kb.local(ty, kb.operand(instr, 1, Index(())), "acc_" + instr.name)
    sub: list[K.Expr] = [K.Const(0)] * len(in_dims)
    for j, d in enumerate(kept):
        sub[d] = e[j]
    _fold(kb, instr, in_dims, rdims, sub, acc, fn, ty)
    return acc


def _fold(kb, instr: Instruction, in_dims, rdims, sub, acc: K.Var, fn: str, ty) -> None:
    """acc = fold of fn over the reduced dimensions of operand 0 at `sub`."""
    if rdims and _lanes_apply(kb, instr, in_dims, rdims):
        _lane_reduction(kb, instr, in_dims, sorted(rdims), sub, acc, fn, ty)
        return
    if not rdims:
        kb.assign(acc, kb.operand(instr, 0, Index(in_dims, tuple(sub))))
        return
    for j, d in enumerate(rdims):
        sub[d] = kb.loop(kb.fresh(f"r{j}"), in_dims[d], (K.REDUCTION,))
    kb.assign(acc, K.Call(fn, (acc, kb.operand(instr, 0, Index(in_dims, tuple(sub)))), ty))
    for _ in rdims:
        kb.close()


def _reduce_kernel(kb, instr: Instruction, outs) -> None:
    n = len(instr.operands) // 2
    ins = [kb.producers[o] for o in instr.operands[:n]]
    in_dims = ins[0].array_shape.dims
    rdims = tuple(instr.attr("dimensions"))
    kept = [d for d in range(len(in_dims)) if d not in rdims]
    fn = kb.scalar_function(instr.attr("to_apply"))
    types = [compute_type(i.array_shape.dtype) for i in ins]
    if n == 1 and _jam_applies(kb, instr, in_dims, rdims, kept):
        _jammed_rows(kb, instr, outs[0], in_dims, kept, fn, types[0])
        return
    o_vars = [kb.loop(f"o{j}", in_dims[d], (K.PARALLEL,)) for j, d in enumerate(kept)]
    accs = [kb.local(types[k], kb.operand(instr, n + k, Index(())), f"acc{k}") for k in range(n)]
    sub: list[K.Expr] = [K.Const(0)] * len(in_dims)
    for j, d in enumerate(kept):
        sub[d] = o_vars[j]
    if n == 1:
        _fold(kb, instr, in_dims, rdims, sub, accs[0], fn, types[0])
    elif not rdims:
        # XLA returns the operands of a reduce over no dimensions unchanged (no reducer call)
        for k, acc in enumerate(accs):
            kb.assign(acc, kb.operand(instr, k, Index(in_dims, tuple(sub))))
    else:
        for j, d in enumerate(rdims):
            sub[d] = kb.loop(kb.fresh(f"r{j}"), in_dims[d], (K.REDUCTION,))
        xs = [kb.operand(instr, k, Index(in_dims, tuple(sub))) for k in range(n)]
        if n == 1:
            kb.assign(accs[0], K.Call(fn, (accs[0], xs[0]), types[0]))
        else:
            kb.emit(K.CallStmt(fn, tuple(accs) + tuple(xs) + tuple(K.Ptr(var=a) for a in accs)))
        for _ in rdims:
            kb.close()
    out_dims = tuple(in_dims[d] for d in kept)
    lin = kb.linear(Index(out_dims, tuple(o_vars)))
    for k in range(n):
        kb.store(outs[k], lin, store_value(ins[k].array_shape.dtype, accs[k]))
    for _ in kept:
        kb.close()


# reductions whose combiner is one of these associative, commutative ops of its two
# parameters keep LANES partial results (vectorizable; XLA:CPU reassociates too). The
# count is part of the result (it fixes the order of the sums), so it is the same on every
# target: 16, one zmm register with AVX-512, two ymm with AVX2, four q with NEON.
LANES = 16
_REGROUPS = frozenset(r.opcode for r in _ELEMENTWISE_RULES if ASSOCIATIVE in r.traits)
F32 = DTYPES["f32"]


def _lanes_apply(kb, instr: Instruction, in_dims, rdims) -> bool:
    if kb.scalar_computation is None:
        return False
    comp = kb.scalar_computation(instr.attr("to_apply"))
    root = comp.root_instruction
    params = {p.name for p in comp.parameters}
    simple = (root.opcode in _REGROUPS and len(comp.instructions) == 3 and set(root.operands) == params
              and len(params) == 2)
    last = len(in_dims) - 1
    return simple and max(rdims) == last and in_dims[last] >= 2 * LANES


def _lane_reduction(kb, instr: Instruction, in_dims, rdims, sub, acc: K.Var, fn: str, ty) -> None:
    """acc = fold of fn over the reduced dimensions, the innermost (contiguous) one in
    LANES interleaved partial results combined at the end. An f32 max or min first tries
    the quick fold (`_picked_extreme`) and folds exactly only when that cannot answer."""
    pick = _PICKS.get(_reducer_root(kb, instr).opcode) if kb.producers[instr.operands[0]].array_shape.dtype == F32 \
        else None
    if pick is None:
        _exact_lanes(kb, instr, in_dims, rdims, sub, acc, fn, ty)
        return
    top = _picked_extreme(kb, instr, in_dims, rdims, sub, acc, pick)
    kb.else_()
    _exact_lanes(kb, instr, in_dims, rdims, sub, acc, fn, ty)
    kb.close()


# the quick fold of an f32 max or min: `x > top ? x : top` keeps the largest number and skips
# NaNs (one instruction a vector), a second array notes whether a NaN was met. Without a
# NaN, the largest number is the exact result when it is normal or infinite (then no signed
# zero or flushed subnormal can be it): max(fold) does not depend on the order. Otherwise
# (a NaN, whose payload depends on the order, or a zero or subnormal top) the exact fold runs.
PICK_LANES = 32
_PICKS = {Op.MAXIMUM: "aotc_pick_gt_f32", Op.MINIMUM: "aotc_pick_lt_f32"}
_MIN_NORMAL = 1.1754943508222875e-38


def _picked_extreme(kb, instr: Instruction, in_dims, rdims, sub, acc: K.Var, pick: str) -> K.Var:
    """Emits the quick fold and opens `if (it answered) acc = its result;` (the caller adds
    the else branch and closes it)."""
    tops = K.Buf(kb.fresh("top"), F32, PICK_LANES)
    nans = K.Buf(kb.fresh("nan_seen"), F32, PICK_LANES)
    kb.emit(K.ArrayDecl(tops, acc))
    kb.emit(K.ArrayDecl(nans, K.Const(0.0, F32)))
    *outer, inner = rdims
    for j, d in enumerate(outer):
        sub[d] = kb.loop(kb.fresh(f"r{j}"), in_dims[d], (K.REDUCTION,))
    n = in_dims[inner]
    body = n - n % PICK_LANES

    def fold_at(pos: K.Expr, lane: K.Expr) -> None:
        sub[inner] = pos
        x = kb.operand(instr, 0, Index(in_dims, tuple(sub)))
        kb.store(tops, lane, K.Call(pick, (x, K.Load(tops, lane)), F32))
        kb.store(nans, lane, K.Call("aotc_flag_nan_f32", (K.Load(nans, lane), x), F32))
    j = kb.loop(kb.fresh("j"), body, (K.REDUCTION,), step=PICK_LANES)
    lane = kb.loop(kb.fresh("l"), PICK_LANES, (K.VECTOR,))
    fold_at(j + lane, lane)
    kb.close()
    kb.close()
    if body < n:
        fold_at(kb.loop(kb.fresh("j"), n, (K.REDUCTION,), start=body), K.Const(0))
        kb.close()
    for _ in outer:
        kb.close()
    top = kb.local(F32, K.Load(tops, K.Const(0)), "top")
    met = kb.local(F32, K.Load(nans, K.Const(0)), "nan_met")
    lane = kb.loop(kb.fresh("l"), PICK_LANES, (), start=1)
    kb.assign(top, K.Call(pick, (K.Load(tops, lane), top), F32))
    kb.assign(met, K.Binary("+", met, K.Load(nans, lane), F32))
    kb.close()
    answered = K.Binary("&&", K.Binary("==", met, K.Const(0.0, F32), K.BOOL),
                        K.Binary(">=", K.Call("aotc_abs_f32", (top,), F32), K.Const(_MIN_NORMAL, F32), K.BOOL), K.BOOL)
    kb.if_(answered)
    kb.assign(acc, top)
    return top


def _exact_lanes(kb, instr: Instruction, in_dims, rdims, sub, acc: K.Var, fn: str, ty) -> None:
    lanes = K.Buf(kb.fresh("lane"), ty, LANES)
    kb.emit(K.ArrayDecl(lanes, acc))
    *outer, inner = rdims
    for j, d in enumerate(outer):
        sub[d] = kb.loop(kb.fresh(f"r{j}"), in_dims[d], (K.REDUCTION,))
    n = in_dims[inner]
    body = n - n % LANES
    j = kb.loop(kb.fresh("j"), body, (K.REDUCTION,), step=LANES)
    lane = kb.loop(kb.fresh("l"), LANES, (K.VECTOR,))
    sub[inner] = j + lane
    x = kb.operand(instr, 0, Index(in_dims, tuple(sub)))
    combine = _combiner(kb, instr, fn, ty)
    kb.store(lanes, lane, combine(K.Load(lanes, lane), x))
    kb.close()
    kb.close()
    if body < n:
        t = kb.loop(kb.fresh("j"), n, (K.REDUCTION,), start=body)
        sub[inner] = t
        x = kb.operand(instr, 0, Index(in_dims, tuple(sub)))
        kb.store(lanes, K.Const(0), combine(K.Load(lanes, K.Const(0)), x))
        kb.close()
    for _ in outer:
        kb.close()
    kb.assign(acc, K.Load(lanes, K.Const(0)))
    lane = kb.loop(kb.fresh("l"), LANES, (), start=1)
    kb.assign(acc, combine(acc, K.Load(lanes, lane)))
    kb.close()


# Rows of JAM_MIN_ROW elements or more stream from memory, and one stream leaves most of
# the memory system idle (one thread of Zen 3: 64 MiB summed in 3.1 ms as one stream, in
# 2.1-2.5 ms as 4 or 8): JAM neighbouring results are folded together, each in its own
# LANES partial results, so each row is summed in exactly the order `_exact_lanes` sums it.
JAM = 4
JAM_MIN_ROW = 1 << 14


def _jam_applies(kb, instr: Instruction, in_dims, rdims, kept) -> bool:
    last = len(in_dims) - 1
    if tuple(rdims) != (last,) or not kept or in_dims[last] < JAM_MIN_ROW or in_dims[kept[-1]] % JAM:
        return False
    quick = (kb.producers[instr.operands[0]].array_shape.dtype == F32
             and _reducer_root(kb, instr).opcode in _PICKS)  # max/min folds take their own path
    return not quick and _lanes_apply(kb, instr, in_dims, rdims)


def _jammed_rows(kb, instr: Instruction, out: K.Buf, in_dims, kept, fn: str, ty) -> None:
    """The reduce kernel over the last dimension, JAM rows at a time (`_jam_applies`)."""
    *outer, jammed = kept
    o_vars = [kb.loop(f"o{j}", in_dims[d], (K.PARALLEL,)) for j, d in enumerate(outer)]
    g = kb.loop(f"o{len(outer)}", in_dims[jammed] // JAM, (K.PARALLEL,))
    lanes = K.Buf(kb.fresh("lane"), ty, JAM * LANES)
    kb.emit(K.ArrayDecl(lanes, kb.operand(instr, 1, Index(()))))
    inner = len(in_dims) - 1
    n = in_dims[inner]
    body = n - n % LANES
    combine = _combiner(kb, instr, fn, ty)

    def element(r: K.Expr, pos: K.Expr) -> K.Expr:
        sub: list[K.Expr] = [K.Const(0)] * len(in_dims)
        for v, d in zip(o_vars, outer):
            sub[d] = v
        sub[jammed] = g * JAM + r
        sub[inner] = pos
        return kb.operand(instr, 0, Index(in_dims, tuple(sub)))

    j = kb.loop(kb.fresh("j"), body, (K.REDUCTION,), step=LANES)
    r = kb.loop(kb.fresh("r"), JAM, (K.UNROLL,))
    lane = kb.loop(kb.fresh("l"), LANES, (K.VECTOR,))
    kb.store(lanes, r * LANES + lane, combine(K.Load(lanes, r * LANES + lane), element(r, j + lane)))
    for _ in range(3):
        kb.close()
    r = kb.loop(kb.fresh("r"), JAM, ())
    if body < n:
        t = kb.loop(kb.fresh("j"), n, (K.REDUCTION,), start=body)
        kb.store(lanes, r * LANES, combine(K.Load(lanes, r * LANES), element(r, t)))
        kb.close()
    acc = kb.local(ty, K.Load(lanes, r * LANES), "acc")
    lane = kb.loop(kb.fresh("l"), LANES, (), start=1)
    kb.assign(acc, combine(acc, K.Load(lanes, r * LANES + lane)))
    kb.close()
    out_dims = tuple(in_dims[d] for d in kept)
    dtype = kb.producers[instr.operands[0]].array_shape.dtype
    kb.store(out, kb.linear(Index(out_dims, (*o_vars, g * JAM + r))), store_value(dtype, acc))
    kb.close()
    kb.close()
    for _ in outer:
        kb.close()


# f32 combiners as the elementwise rules compute them (the reducer function's own body),
# so a lane loop is plain f32 arithmetic the vectorizer knows
_F32_COMBINE = {"add": lambda a, b: K.Binary("+", a, b, F32), "multiply": lambda a, b: K.Binary("*", a, b, F32),
                "maximum": lambda a, b: K.Call("aotc_max_f32", (a, b), F32),
                "minimum": lambda a, b: K.Call("aotc_min_f32", (a, b), F32)}


def _reducer_root(kb, instr: Instruction) -> Instruction:
    return kb.scalar_computation(instr.attr("to_apply")).root_instruction


def f32_combiner(kb, instr: Instruction):
    """(a, b) -> the reducer of `instr` as inline f32 arithmetic, when its computation is one
    f32 add, multiply, maximum or minimum of its two parameters; else None."""
    root = _reducer_root(kb, instr)
    if root.opcode not in _F32_COMBINE or not is_reducer(kb, instr.attr("to_apply"), root.opcode):
        return None
    if root.array_shape.dtype != F32:
        return None
    return _F32_COMBINE[root.opcode]


def _combiner(kb, instr: Instruction, fn: str, ty):
    """(a, b) -> the reducer applied to a and b: inline f32 arithmetic when the reducer is
    one f32 op of its two parameters, else a call of its function."""
    root = _reducer_root(kb, instr)
    if kb.producers[instr.operands[0]].array_shape.dtype == F32 and root.opcode in _F32_COMBINE:
        return _F32_COMBINE[root.opcode]
    return lambda a, b: K.Call(fn, (a, b), ty)


RULES.append(OpRule("reduce", shape=_reduce_shape, kernel=_reduce_kernel, elemental=_reduce_elem))

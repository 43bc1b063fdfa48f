"""Index-mapping op family: broadcast, reshape, transpose, slice, reverse, iota,
concatenate, pad, copy.

Each is an element expression that reads its operand at a remapped index, so
these ops fuse into their consumers with no buffer of their own. `bitcast` has
only a shape rule: lowering rewrites it to reshape/transpose first.
"""
from __future__ import annotations

from math import prod

from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape
from ..hlo.dtypes import DTYPES
from ..kernel import ir as K
from ..kernel.builder import Index, compute_type
from .elementwise import _arr, convert_expr
from .rule import CHEAP, IDENTITY, KEEPS_INDEX, SAME_ELEMENTS, OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py


def _index(dims, exprs=None, linear=None):
    return Index(tuple(dims), None if exprs is None else tuple(exprs), linear)


def _all(conds: list[K.Expr]) -> K.Expr:
    out = conds[0] if conds else K.Const(1, K.BOOL)
    for c in conds[1:]:
        out = K.Binary("&&", out, c, K.BOOL)
    return out


def _dims_attr(instr: Instruction, rank: int, what: str = "dimensions") -> tuple[int, ...]:
    dims = instr.attr(what)
    if dims is None:
        raise ShapeError(f"{instr.opcode} needs a {what} attribute")
    for d in dims:
        if not 0 <= d < rank:
            raise ShapeError(f"{what} value {d} is out of range for rank {rank}")
    if len(set(dims)) != len(dims):
        raise ShapeError(f"{what}={{{','.join(map(str, dims))}}} repeats a dimension")
    return dims


# ------------------------------------------------------------------ broadcast


def _broadcast_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    out = instr.array_shape
    dims = _dims_attr(instr, out.rank)
    if len(dims) != a.rank:
        raise ShapeError(f"broadcast dimensions={{{','.join(map(str, dims))}}} must have one entry per operand dimension ({a.rank})")
    for i, d in enumerate(dims):
        if a.dims[i] != out.dims[d] and a.dims[i] != 1:
            raise ShapeError(f"broadcast operand dimension {i} ({a.dims[i]}) does not match result dimension {d} ({out.dims[d]})")
    return ArrayShape(a.dtype, out.dims)


def _broadcast_elem(ctx, instr: Instruction, idx) -> K.Expr:
    a = ctx.producers[instr.operands[0]].array_shape
    e = ctx.exprs(idx) if a.rank else ()
    dims = instr.attr("dimensions")
    sub = [(K.Const(0) if a.dims[i] == 1 else e[d]) for i, d in enumerate(dims)]
    return ctx.operand(instr, 0, _index(a.dims, sub))


RULES.append(OpRule("broadcast", shape=_broadcast_shape, elemental=_broadcast_elem, traits=frozenset({CHEAP})))

# ------------------------------------------------------------------ reshape / copy / bitcast


def _reshape_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    out = instr.array_shape
    if prod(a.dims) != prod(out.dims):
        raise ShapeError(f"reshape changes the element count: {a.text(False)} -> {out.text(False)}")
    return ArrayShape(a.dtype, out.dims)


def _reshape_elem(ctx, instr: Instruction, idx) -> K.Expr:
    a = ctx.producers[instr.operands[0]].array_shape
    return ctx.operand(instr, 0, _index(a.dims, linear=ctx.linear(idx)))


def _copy_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    return _arr(shapes[0], "operand").with_layout(None)


def _copy_elem(ctx, instr: Instruction, idx) -> K.Expr:
    return ctx.operand(instr, 0, idx)


def _bitcast_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    out = instr.array_shape
    if a.nbytes != out.nbytes:
        raise ShapeError(f"bitcast changes the byte size: {a.text(False)} -> {out.text(False)}")
    return out


RULES.append(OpRule("reshape", shape=_reshape_shape, elemental=_reshape_elem,
                    traits=frozenset({CHEAP, KEEPS_INDEX, SAME_ELEMENTS})))
RULES.append(OpRule("copy", shape=_copy_shape, elemental=_copy_elem,
                    traits=frozenset({CHEAP, KEEPS_INDEX, IDENTITY, SAME_ELEMENTS})))
RULES.append(OpRule("bitcast", shape=_bitcast_shape, structural=True))

# ------------------------------------------------------------------ transpose


def _transpose_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    perm = _dims_attr(instr, a.rank)
    if len(perm) != a.rank:
        raise ShapeError(f"transpose dimensions must be a permutation of 0..{a.rank - 1}")
    return ArrayShape(a.dtype, tuple(a.dims[p] for p in perm))


def _transpose_elem(ctx, instr: Instruction, idx) -> K.Expr:
    a = ctx.producers[instr.operands[0]].array_shape
    e = ctx.exprs(idx)
    sub: list[K.Expr] = [K.Const(0)] * a.rank
    for i, p in enumerate(instr.attr("dimensions")):
        sub[p] = e[i]
    return ctx.operand(instr, 0, _index(a.dims, sub))


RULES.append(OpRule("transpose", shape=_transpose_shape, elemental=_transpose_elem, traits=frozenset({CHEAP})))

# ------------------------------------------------------------------ slice / reverse


def _slice_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    sl = instr.attr("slice")
    if sl is None or len(sl) != a.rank:
        raise ShapeError(f"slice needs one [start:limit:stride] per dimension ({a.rank})")
    dims = []
    for d, s in enumerate(sl):
        if not (0 <= s.start <= s.limit <= a.dims[d]) or s.stride < 1:
            raise ShapeError(f"slice [{s.start}:{s.limit}:{s.stride}] is out of range for dimension {d} of size {a.dims[d]}")
        dims.append((s.limit - s.start + s.stride - 1) // s.stride)
    return ArrayShape(a.dtype, tuple(dims))


def _slice_elem(ctx, instr: Instruction, idx) -> K.Expr:
    a = ctx.producers[instr.operands[0]].array_shape
    e = ctx.exprs(idx)
    sub = []
    for x, s in zip(e, instr.attr("slice")):
        sub.append(x * s.stride + s.start)
    return ctx.operand(instr, 0, _index(a.dims, sub))


def _reverse_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    _dims_attr(instr, a.rank)
    return a.with_layout(None)


def _reverse_elem(ctx, instr: Instruction, idx) -> K.Expr:
    a = ctx.producers[instr.operands[0]].array_shape
    e = list(ctx.exprs(idx))
    for d in instr.attr("dimensions"):
        e[d] = K.Const(a.dims[d] - 1) - e[d]
    return ctx.operand(instr, 0, _index(a.dims, e))


RULES.append(OpRule("slice", shape=_slice_shape, elemental=_slice_elem, traits=frozenset({CHEAP})))
RULES.append(OpRule("reverse", shape=_reverse_shape, elemental=_reverse_elem, traits=frozenset({CHEAP})))

# ------------------------------------------------------------------ iota


def _iota_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    out = instr.array_shape
    d = instr.attr("iota_dimension")
    if d is None or not 0 <= d < out.rank:
        raise ShapeError(f"iota_dimension={d} is out of range for rank {out.rank}")
    return out.with_layout(None)


def _iota_elem(ctx, instr: Instruction, idx) -> K.Expr:
    e = ctx.exprs(idx)[instr.attr("iota_dimension")]
    return convert_expr(e, DTYPES["s64"], instr.array_shape.dtype)


RULES.append(OpRule("iota", shape=_iota_shape, elemental=_iota_elem, traits=frozenset({CHEAP})))

# ------------------------------------------------------------------ concatenate


def _concat_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    arrs = [_arr(s, f"operand {k}") for k, s in enumerate(shapes)]
    if not arrs:
        raise ShapeError("concatenate needs at least one operand")
    (d,) = _dims_attr(instr, arrs[0].rank) or (None,)
    total = 0
    for k, a in enumerate(arrs):
        if a.rank != arrs[0].rank or a.dtype != arrs[0].dtype or any(
                x != y for i, (x, y) in enumerate(zip(a.dims, arrs[0].dims)) if i != d):
            raise ShapeError(f"concatenate operand {k} {a.text(False)} does not match {arrs[0].text(False)}")
        total += a.dims[d]
    dims = list(arrs[0].dims)
    dims[d] = total
    return ArrayShape(arrs[0].dtype, tuple(dims))


def _concat_elem(ctx, instr: Instruction, idx) -> K.Expr:
    (d,) = instr.attr("dimensions")
    e = ctx.exprs(idx)
    arms, off = [], 0
    for k, name in enumerate(instr.operands):
        a = ctx.producers[name].array_shape
        sub = list(e)
        sub[d] = e[d] - off
        cond = None if k == len(instr.operands) - 1 else e[d].lt(off + a.dims[d])
        arms.append((cond, (lambda k=k, sub=sub, a=a: ctx.operand(instr, k, _index(a.dims, sub)))))
        off += a.dims[d]
    return ctx.branch_value(compute_type(instr.array_shape.dtype), arms, "v_" + instr.name)


RULES.append(OpRule("concatenate", shape=_concat_shape, elemental=_concat_elem))

# ------------------------------------------------------------------ pad


def _pad_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a, v = _arr(shapes[0], "operand"), _arr(shapes[1], "padding value")
    if v.rank != 0 or v.dtype != a.dtype:
        raise ShapeError(f"pad value must be a {a.dtype.name} scalar, got {v.text(False)}")
    pad = instr.attr("padding")
    if pad is None or len(pad) != a.rank:
        raise ShapeError(f"padding needs one lo_hi[_interior] entry per dimension ({a.rank})")
    dims = []
    for d, p in enumerate(pad):
        if p.interior < 0:
            raise ShapeError(f"negative interior padding in dimension {d}")
        n = a.dims[d]
        size = p.lo + p.hi + n + max(n - 1, 0) * p.interior
        if size < 0:
            raise ShapeError(f"padding makes dimension {d} negative ({size})")
        dims.append(size)
    return ArrayShape(a.dtype, tuple(dims))


def _pad_elem(ctx, instr: Instruction, idx) -> K.Expr:
    a = ctx.producers[instr.operands[0]].array_shape
    e = ctx.exprs(idx)
    conds, sub = [], []
    for x, p, n in zip(e, instr.attr("padding"), a.dims):
        j = x - p.lo
        step = p.interior + 1
        if p.lo > 0:
            conds.append(j.ge(0))
        if step == 1:
            if p.hi > 0:
                conds.append(j.lt(n))
            sub.append(j)
        else:
            conds.append((j % step).eq(0))
            conds.append((j // step).lt(n))
            sub.append(j // step)
    cond = _all(list(dict.fromkeys(conds)))
    arms = [(cond, lambda: ctx.operand(instr, 0, _index(a.dims, sub))),
            (None, lambda: ctx.operand(instr, 1, _index(())))]
    return ctx.branch_value(compute_type(instr.array_shape.dtype), arms, "v_" + instr.name)


RULES.append(OpRule("pad", shape=_pad_shape, elemental=_pad_elem))

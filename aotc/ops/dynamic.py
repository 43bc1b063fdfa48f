"""dynamic-slice and dynamic-update-slice: element expressions over start indices
read at run time.

Each start is clamped into [0, dim - size] first, as XLA does (a negative start
reads as 0, a start past the end as the last valid one), for any integer index
type. Both fuse into their consumers like the other index-mapping ops.
"""
from __future__ import annotations

from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape
from .elementwise import _arr
from .gather_scatter import clamp_index
from .registry import OpRule, ShapeError, register


def _index(dims, exprs):
    from .legacy_c import Index
    return Index(tuple(dims), tuple(exprs))


def _check_starts(instr: Instruction, shapes: list[Shape], first: int, rank: int) -> None:
    starts = shapes[first:]
    if len(starts) != rank:
        raise ShapeError(f"{instr.opcode} needs one scalar start index per dimension ({rank}), got {len(starts)}")
    for k, s in enumerate(starts):
        a = _arr(s, f"start index {k}")
        if a.rank != 0 or a.dtype.kind not in ("sint", "uint"):
            raise ShapeError(f"start index {k} must be an integer scalar, got {a.text(False)}")


def _starts(ctx, instr: Instruction, first: int, limits: list[int]) -> list[str]:
    """C int64 locals: each start index clamped into [0, limit]."""
    out = []
    for d, hi in enumerate(limits):
        if hi <= 0:  # the slice spans the dimension: the start can only be 0
            out.append("0")
            continue
        opnd = ctx.producers[instr.operands[first + d]]
        v = ctx.operand(instr, first + d, _index((), ()))
        out.append(ctx.let("int64_t", clamp_index(v, opnd.array_shape.dtype, hi), "start"))
    return out


# ------------------------------------------------------------------ dynamic-slice

def _dynamic_slice_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    _check_starts(instr, shapes, 1, a.rank)
    sizes = instr.attr("dynamic_slice_sizes")
    if sizes is None or len(sizes) != a.rank:
        raise ShapeError(f"dynamic_slice_sizes needs one size per dimension ({a.rank})")
    for d, (n, s) in enumerate(zip(a.dims, sizes)):
        if not 0 <= s <= n:
            raise ShapeError(f"dynamic_slice_sizes[{d}]={s} is out of range for dimension {d} of size {n}")
    return ArrayShape(a.dtype, tuple(sizes))


def _dynamic_slice_elem(ctx, instr: Instruction, idx) -> str:
    a = ctx.producers[instr.operands[0]].array_shape
    sizes = instr.attr("dynamic_slice_sizes")
    starts = _starts(ctx, instr, 1, [n - s for n, s in zip(a.dims, sizes)])
    e = ctx.exprs(idx)
    return ctx.operand(instr, 0, _index(a.dims, [f"({s} + {x})" for s, x in zip(starts, e)]))


register(OpRule("dynamic-slice", shape=_dynamic_slice_shape, elemental=_dynamic_slice_elem))

# ------------------------------------------------------------------ dynamic-update-slice


def _dynamic_update_slice_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a, u = _arr(shapes[0], "operand"), _arr(shapes[1], "update")
    if u.dtype != a.dtype or u.rank != a.rank or any(x > n for x, n in zip(u.dims, a.dims)):
        raise ShapeError(f"update {u.text(False)} does not fit operand {a.text(False)}")
    _check_starts(instr, shapes, 2, a.rank)
    return a.with_layout(None)


def _dynamic_update_slice_elem(ctx, instr: Instruction, idx) -> str:
    from .legacy_c import compute_type
    a = ctx.producers[instr.operands[0]].array_shape
    u = ctx.producers[instr.operands[1]].array_shape
    starts = _starts(ctx, instr, 2, [n - m for n, m in zip(a.dims, u.dims)])
    e = ctx.exprs(idx)
    conds = []
    for s, x, m in zip(starts, e, u.dims):
        conds.append(f"{x} >= {s} && {x} < {s} + {m}")
    inside = " && ".join(conds) or "1"
    arms = [(inside, lambda: ctx.operand(instr, 1, _index(u.dims, [f"({x} - {s})" for s, x in zip(starts, e)]))),
            (None, lambda: ctx.operand(instr, 0, idx))]
    return ctx.branch_value(compute_type(instr.array_shape.dtype), arms, "v_" + instr.name)


register(OpRule("dynamic-update-slice", shape=_dynamic_update_slice_shape, elemental=_dynamic_update_slice_elem))

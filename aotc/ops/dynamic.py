"""dynamic-slice and dynamic-update-slice: element expressions over start indices
read at run time.

Each start is clamped into [0, dim - size] first, as XLA does (a negative start
reads as 0, a start past the end as the last valid one), for any integer index
type. Both fuse into their consumers like the other index-mapping ops.
"""
from __future__ import annotations

from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape
from ..kernel import ir as K
from ..kernel.builder import Index, compute_type
from .elementwise import _arr
from .gather_scatter import clamp_index
from .rule import OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py


def _index(dims, exprs):
    return Index(tuple(dims), tuple(exprs))


def _check_starts(instr: Instruction, shapes: list[Shape], first: int, rank: int) -> None:
    starts = shapes[first:]
    if len(starts) != rank:
        raise ShapeError(f"{instr.opcode} needs one scalar start index per dimension ({rank}), got {len(starts)}")
    for k, s in enumerate(starts):
        a = _arr(s, f"start index {k}")
        if a.rank != 0 or a.dtype.kind not in ("sint", "uint"):
            raise ShapeError(f"start index {k} must be an integer scalar, got {a.text(False)}")


def _starts(kb, instr: Instruction, first: int, limits: list[int]) -> list[K.Expr]:
    """int64 values (locals or constants): each start index clamped into [0, limit]."""
    out: list[K.Expr] = []
    for d, hi in enumerate(limits):
        if hi <= 0:  # the slice spans the dimension: the start can only be 0
            out.append(K.Const(0))
            continue
        opnd = kb.producers[instr.operands[first + d]]
        v = kb.operand(instr, first + d, _index((), ()))
        out.append(kb.let(clamp_index(v, opnd.array_shape.dtype, hi), "start"))
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


def _dynamic_slice_elem(kb, instr: Instruction, idx) -> K.Expr:
    a = kb.producers[instr.operands[0]].array_shape
    sizes = instr.attr("dynamic_slice_sizes")
    starts = _starts(kb, instr, 1, [n - s for n, s in zip(a.dims, sizes)])
    e = kb.exprs(idx)
    return kb.operand(instr, 0, _index(a.dims, [s + x for s, x in zip(starts, e)]))


RULES.append(OpRule("dynamic-slice", shape=_dynamic_slice_shape, elemental=_dynamic_slice_elem))

# ------------------------------------------------------------------ dynamic-update-slice


def _dynamic_update_slice_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a, u = _arr(shapes[0], "operand"), _arr(shapes[1], "update")
    if u.dtype != a.dtype or u.rank != a.rank or any(x > n for x, n in zip(u.dims, a.dims)):
        raise ShapeError(f"update {u.text(False)} does not fit operand {a.text(False)}")
    _check_starts(instr, shapes, 2, a.rank)
    return a.with_layout(None)


def _dynamic_update_slice_elem(kb, instr: Instruction, idx) -> K.Expr:
    a = kb.producers[instr.operands[0]].array_shape
    u = kb.producers[instr.operands[1]].array_shape
    starts = _starts(kb, instr, 2, [n - m for n, m in zip(a.dims, u.dims)])
    e = kb.exprs(idx)
    conds = [c for s, x, m in zip(starts, e, u.dims) for c in (x.ge(s), x.lt(s + m))]
    inside = conds[0] if conds else K.Const(1, K.BOOL)
    for c in conds[1:]:
        inside = K.Binary("&&", inside, c, K.BOOL)
    arms = [(inside, lambda: kb.operand(instr, 1, _index(u.dims, [x - s for s, x in zip(starts, e)]))),
            (None, lambda: kb.operand(instr, 0, idx))]
    return kb.branch_value(compute_type(instr.array_shape.dtype), arms, "v_" + instr.name)


RULES.append(OpRule("dynamic-update-slice", shape=_dynamic_update_slice_shape, elemental=_dynamic_update_slice_elem))

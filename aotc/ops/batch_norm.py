"""The batch-norm ops (batch-norm-inference, batch-norm-training, batch-norm-grad): their
attributes and shape rules. They have no kernel of their own: like XLA:CPU's
BatchNormExpander, `passes/batchnorm.py` rewrites each into elementwise ops and reductions
before the other graph passes, so the arithmetic is XLA's, step for step.
"""
from __future__ import annotations

import numpy as np

from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape, TupleShape
from .elementwise import _arr
from .rule import OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

FLOATS = ("f32", "f64", "bf16", "f16", "f8e3m4", "f8e4m3", "f8e4m3fn", "f8e4m3fnuz", "f8e4m3b11fnuz", "f8e5m2",
          "f8e5m2fnuz", "f8e8m0fnu", "f4e2m1fn")
# opcode -> the operands after the first: feature vectors, and grad_output (operand-shaped)
_OPERANDS = {"batch-norm-inference": ("scale", "offset", "mean", "variance"),
             "batch-norm-training": ("scale", "offset"),
             "batch-norm-grad": ("scale", "mean", "variance", "grad_output")}


def epsilon(instr: Instruction) -> float:
    """The epsilon attribute as the f32 XLA holds it in."""
    e = instr.attr("epsilon")
    text = getattr(e, "text", e)
    try:
        return float(np.float32(float(text)))
    except (TypeError, ValueError):
        raise ShapeError(f"{instr.opcode} needs a numeric epsilon, got {text!r}") from None


def feature_index(instr: Instruction, rank: int) -> int:
    f = instr.attr("feature_index")
    if not isinstance(f, int) or not 0 <= f < rank:
        raise ShapeError(f"{instr.opcode} feature_index must be a dimension of the rank-{rank} operand, got {f!r}")
    return f


def _shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    op = instr.opcode
    names = ("operand",) + _OPERANDS[op]
    if len(shapes) != len(names):
        raise ShapeError(f"{op} takes {len(names)} operands ({', '.join(names)}), got {len(shapes)}")
    x = _arr(shapes[0], "operand")
    if x.dtype.name not in FLOATS:
        raise ShapeError(f"{op} needs a floating-point operand, got {x.text(False)}")
    f = feature_index(instr, x.rank)
    epsilon(instr)
    feat = ArrayShape(x.dtype, (x.dims[f],))
    for name, s in zip(names[1:], shapes[1:]):
        a = _arr(s, name)
        want = x if name == "grad_output" else feat
        if a.dtype != x.dtype or a.dims != want.dims:
            raise ShapeError(f"{op} {name} must be {want.text(False)}, got {a.text(False)}")
    if op == "batch-norm-inference":
        return x.with_layout(None)
    return TupleShape((x.with_layout(None), feat, feat))


for _op in _OPERANDS:
    RULES.append(OpRule(_op, shape=_shape))

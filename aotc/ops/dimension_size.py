"""Dimension sizes: get-dimension-size and dynamic-reshape on static dimensions. A bounded
dynamic dimension (`f32[<=8]`, whose real size XLA carries beside the buffer at run time) is
lower/dynamic.py's: it handles set-dimension-size (so that op has no rule here) and
get-dimension-size of a dynamic dimension, which this expansion leaves alone. Here
get-dimension-size of a static dimension is that constant and a dynamic-reshape to a static
shape is a reshape (XLA ignores its size operands then).
"""
from __future__ import annotations

from math import prod

import numpy as np

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction, Literal
from ..hlo.opcodes import Op
from ..hlo.shape import ArrayShape, Shape
from .rule import OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

_S32 = ArrayShape(DTYPES["s32"], ())


def _dimension(instr: Instruction, shape: Shape) -> int:
    dims = instr.attr("dimensions") or ()
    if not isinstance(shape, ArrayShape):
        raise ShapeError(f"{instr.opcode} needs an array operand, got {shape}")
    if len(dims) != 1 or not 0 <= dims[0] < shape.rank:
        raise ShapeError(f"{instr.opcode} needs dimensions={{d}} with 0 <= d < {shape.rank}")
    return dims[0]


def _get_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    _dimension(instr, shapes[0])
    return _S32


def _get_expand(instr: Instruction, shapes: list[Shape], fresh) -> list[Instruction] | None:
    d = _dimension(instr, shapes[0])
    if shapes[0].dynamic and shapes[0].dynamic[d]:  # a real size at run time: lower/dynamic.py's
        return None
    return [Instruction(instr.name, Op.CONSTANT, _S32, literal=Literal(_S32, np.array(shapes[0].dims[d], np.int32)),
                        loc=instr.loc)]


def _reshape_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    out = instr.shape
    if not isinstance(out, ArrayShape) or not isinstance(shapes[0], ArrayShape):
        raise ShapeError("dynamic-reshape takes and gives arrays")
    if len(shapes) != 1 + out.rank or any(s != _S32 for s in shapes[1:]):
        raise ShapeError(f"dynamic-reshape to rank {out.rank} takes the operand and {out.rank} s32[] sizes")
    if out.dtype != shapes[0].dtype or (not any(out.dynamic) and prod(out.dims) != shapes[0].size):
        raise ShapeError(f"dynamic-reshape of {shapes[0]} cannot give {out}")
    return out


def _reshape_expand(instr: Instruction, shapes: list[Shape], fresh) -> list[Instruction]:
    # a dynamic result stays dynamic (lower/dynamic.py refuses it); to a static shape XLA ignores the sizes
    return [Instruction(instr.name, Op.RESHAPE, instr.shape, (instr.operands[0],), loc=instr.loc)]


RULES.append(OpRule("get-dimension-size", shape=_get_shape, structural=True, expand=_get_expand))
RULES.append(OpRule("dynamic-reshape", shape=_reshape_shape, structural=True, expand=_reshape_expand))

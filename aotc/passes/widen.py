"""Convolutions of the narrow types rewritten as XLA:CPU computes them: on operands converted
to a wider type, the result converted back. f8/f4 values are convolved in f32 (the result
narrowed through f16, as XLA's converts do; f8e8m0fnu straight from f32), s2/s4 in s8 and
u2/u4 in u8 (the result wrapped to the type); pred as the count of true products in s32,
converted back (nonzero is true: XLA's and-or convolution). Only the HLO changes here; the convolution
and convert rules do the arithmetic.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES, DType
from ..hlo.ir import Instruction, Module
from ..hlo.opcodes import Op
from .rewrite import Graph, Names, op, sweep


def _wide(dt: DType) -> DType:
    """The type XLA:CPU convolves `dt` values in (`dt` itself if it is not narrow)."""
    if dt.is_narrow_float:
        return DTYPES["f32"]
    if dt.is_subbyte_int:
        return DTYPES["s8" if dt.kind == "sint" else "u8"]
    if dt.kind == "pred":  # and is multiply, or is add: a nonzero count of true products
        return DTYPES["s32"]
    return dt


def _narrowing(dt: DType) -> tuple[DType, ...]:
    """The converts from the wide result to `dt`, in order."""
    if dt.is_narrow_float and dt.name != "f8e8m0fnu":
        return DTYPES["f16"], dt
    return (dt,)


def widen_narrow_convolutions(m: Module) -> tuple[Module, bool]:
    def rule(g: Graph, names: Names, ins: Instruction):
        if ins.opcode != Op.CONVOLUTION:
            return None
        shapes = [g.get(o).array_shape for o in ins.operands]
        out = ins.array_shape
        if all(_wide(s.dtype) == s.dtype for s in shapes + [out]):
            return None
        new: list[Instruction] = []
        operands = []
        for k, (o, s) in enumerate(zip(ins.operands, shapes)):
            if _wide(s.dtype) == s.dtype:
                operands.append(o)
                continue
            new.append(op(names.fresh(f"{ins.name}.in{k}"), "convert",
                          s.with_dims(s.dims, _wide(s.dtype)).with_layout(None), (o,), ins))
            operands.append(new[-1].name)
        if _wide(out.dtype) == out.dtype:  # a wide result of narrow operands
            return new + [op(ins.name, ins.opcode, out, tuple(operands), ins, ins.attrs)]
        wide = out.with_dims(out.dims, _wide(out.dtype)).with_layout(None)
        new.append(op(names.fresh(f"{ins.name}.{wide.dtype.name}"), ins.opcode, wide, tuple(operands), ins, ins.attrs))
        steps = _narrowing(out.dtype)
        prev = new[-1].name
        for k, dt in enumerate(steps):
            name = ins.name if k == len(steps) - 1 else names.fresh(f"{ins.name}.{dt.name}")
            new.append(op(name, "convert", out.with_dims(out.dims, dt), (prev,), ins))
            prev = name
        return new

    entry = m.entry_computation
    if not any(i.opcode == Op.CONVOLUTION and any(_wide(s.dtype) != s.dtype for s in
                                                   [entry.get(o).array_shape for o in i.operands] + [i.array_shape])
               for i in entry.instructions):
        return m, False  # as it was: values only a fetch reads (not the root) stay
    return sweep(m, rule)

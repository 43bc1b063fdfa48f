"""stochastic-convert: float to signed integer, rounding |x| up when the random operand is below
its fraction scaled to the random type's range. Its `expand` is XLA's own decomposition
(stochastic_convert_decomposer.cc) into plain ops, so it gives XLA:CPU's bits; other
conversions XLA:CPU refuses too, and so does aotc.
"""
from __future__ import annotations

import numpy as np

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction, Literal
from ..hlo.opcodes import Op
from ..hlo.shape import ArrayShape, Shape
from .rule import OpRule, ShapeError, Unsupported

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py


def _shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    x, r = shapes
    out = instr.shape
    if not all(isinstance(s, ArrayShape) for s in (x, r, out)):
        raise ShapeError("stochastic-convert takes and gives arrays")
    if not x.dtype.is_float or r.dtype.kind != "uint" or r.dtype.bits != x.dtype.bits:
        raise ShapeError(f"stochastic-convert takes a float operand and unsigned random bits of its width, "
                         f"got {x} and {r}")
    if x.dims != r.dims or out.dims != x.dims:
        raise ShapeError(f"stochastic-convert of {x} with {r} cannot give {out}")
    return out.with_layout(x.layout)


def _expand(instr: Instruction, shapes: list[Shape], fresh) -> list[Instruction]:
    x, r = instr.operands
    xs, rs = shapes
    to = instr.shape.dtype
    if to.kind != "sint" or to.width < 8:
        raise Unsupported(f"stochastic-convert {instr.name}: from {xs.dtype} to {to} (XLA:CPU converts floats to "
                          "signed integers s8 to s64 only)")
    dims = xs.dims
    out: list[Instruction] = []

    def add(base: str, op: Op, dt, operands: tuple[str, ...], attrs=(), name: str | None = None) -> str:
        n = name or fresh(f"{instr.name}.{base}")
        out.append(Instruction(n, op, ArrayShape(DTYPES[dt] if isinstance(dt, str) else dt, dims), operands,
                               tuple(attrs), loc=instr.loc))
        return n

    def splat(base: str, value, dt) -> str:  # MakeScalarLike: the value cast to the element type
        scalar = ArrayShape(dt, ())
        c = fresh(f"{instr.name}.{base}.scalar")
        with np.errstate(over="ignore"):  # 2^31 in f16 is inf, as XLA's cast gives
            value = np.array(value).astype(dt.numpy)
        out.append(Instruction(c, Op.CONSTANT, scalar, literal=Literal(scalar, value), loc=instr.loc))
        return add(base, Op.BROADCAST, dt, (c,), (("dimensions", ()),))

    def cmp(base: str, a: str, b: str, direction: str) -> str:
        return add(base, Op.COMPARE, "pred", (a, b), (("direction", direction),))

    fdt = xs.dtype
    sign = add("sign", Op.SIGN, fdt, (x,))
    negative = cmp("negative", sign, splat("zero", 0, fdt), "LT")
    magnitude = add("abs", Op.ABS, fdt, (x,))
    whole = add("floor", Op.FLOOR, fdt, (magnitude,))
    fraction = add("fraction", Op.SUBTRACT, fdt, (magnitude, whole))
    if fdt.name == "f16":
        fdt = DTYPES["f32"]
        fraction = add("fraction32", Op.CONVERT, fdt, (fraction,))
    scaled = add("scaled", Op.MULTIPLY, fdt, (fraction, splat("range", 2.0 ** rs.dtype.bits, fdt)))
    up = cmp("up", r, add("threshold", Op.CONVERT, rs.dtype, (scaled,)), "LT")
    truncated = add("truncated", Op.CONVERT, to, (whole,))
    rounded = add("rounded", Op.SELECT, to, (up, add("plus1", Op.ADD, to, (truncated, splat("one", 1, to))), truncated))
    signed = add("signed", Op.SELECT, to, (negative, add("negated", Op.NEGATE, to, (rounded,)), rounded))
    lo, hi = -(1 << (to.bits - 1)), (1 << (to.bits - 1)) - 1
    low = add("low", Op.SELECT, to, (cmp("is_min", x, splat("min_f", lo, xs.dtype), "LE"), splat("min", lo, to), signed))
    add("high", Op.SELECT, to, (cmp("is_max", x, splat("max_f", hi, xs.dtype), "GE"), splat("max", hi, to), low),
        name=instr.name)
    return out


RULES.append(OpRule("stochastic-convert", shape=_shape, structural=True, expand=_expand))

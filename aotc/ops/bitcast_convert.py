"""bitcast-convert between element types of one width: a value's bits as another type
(f32 <-> s32, bf16 <-> u16, an f8 code <-> u8, f4e2m1fn <-> u4). Element expressions only;
the bit helpers are in `runtime_c/aotc_math.h` and `aotc_narrow.h`.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES, DType
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape
from ..kernel import ir as K
from ..kernel.builder import compute_type
from .elementwise import F32, F64, _arr, call, pred
from .rule import KEEPS_INDEX, OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

_UINT = {8: "u8", 16: "u16", 32: "u32", 64: "u64"}


def _bitcast_convert_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    out = instr.array_shape
    if a.dtype.width != out.dtype.width or a.dims != out.dims or a.dtype.kind in ("complex", "token") \
            or out.dtype.kind in ("complex", "token"):
        raise ShapeError(f"bitcast-convert from {a.text(False)} to {out.text(False)} is supported only "
                         "between types of one width, keeping the dimensions")
    return ArrayShape(out.dtype, a.dims)


def _to_bits(x: K.Expr, dt: DType) -> K.Expr:
    """The raw bits of a computed value of type `dt`, as the unsigned type of its width."""
    u = DTYPES[_UINT[dt.bits]]
    if dt.is_narrow_float or dt.is_subbyte_int:
        return call(f"aotc_store_{dt.name}", u, x)  # the stored code, NaN payloads included
    if dt.name == "f32":
        return call("aotc_bitcast_f32_u32", u, x)
    if dt.name == "f64":
        return call("aotc_bitcast_f64_u64", u, x)
    if dt.name in ("bf16", "f16"):
        return call(f"aotc_f32_to_{dt.name}", u, x)  # exact: the value is a half already
    if dt.kind == "sint":
        return call(f"aotc_cvt_{dt.name}_{u.name}", u, x)
    return x


def _from_bits(b: K.Expr, dt: DType) -> K.Expr:
    u = _UINT[dt.bits]
    if dt.is_narrow_float:
        return call(f"aotc_{dt.name}_to_f32", F32, b)
    if dt.is_subbyte_int:
        return call(f"aotc_wrap_{dt.name}", compute_type(dt), b)
    if dt.name == "f32":
        return call("aotc_bitcast_u32_f32", F32, b)
    if dt.name == "f64":
        return call("aotc_bitcast_u64_f64", F64, b)
    if dt.name in ("bf16", "f16"):
        return call(f"aotc_{dt.name}_to_f32", F32, b)
    if dt.kind == "sint":
        return call(f"aotc_cvt_{u}_{dt.name}", dt, b)
    if dt.kind == "pred":
        return pred(K.Binary("!=", b, K.Const(0, DTYPES[u]), K.BOOL))
    return b


def _bitcast_convert_elem(ctx, instr: Instruction, idx) -> K.Expr:
    src = ctx.producers[instr.operands[0]].array_shape.dtype
    return _from_bits(_to_bits(ctx.operand(instr, 0, idx), src), instr.array_shape.dtype)


RULES.append(OpRule("bitcast-convert", shape=_bitcast_convert_shape, elemental=_bitcast_convert_elem, traits=frozenset({KEEPS_INDEX})))

"""bitcast-convert: a value's bits as another type. Between types of one width (f32 <-> s32,
bf16 <-> u16, an f8 code <-> u8, f4e2m1fn <-> u4) element for element; between widths of
8, 16, 32 and 64 bits as XLA does on a little-endian host: a wide element is the last
dimension's narrow elements, the first the least significant (u64[n] <-> u32[n,2]).
Element expressions only; the bit helpers are in `runtime_c/aotc_math.h` and `aotc_narrow.h`.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES, DType
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape
from ..kernel import ir as K
from ..kernel.builder import Index, compute_type
from .elementwise import F32, F64, _arr, call, pred
from .rule import KEEPS_INDEX, OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

_UINT = {8: "u8", 16: "u16", 32: "u32", 64: "u64"}


def _bitcast_convert_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    out = instr.array_shape
    if a.dtype.kind in ("complex", "token") or out.dtype.kind in ("complex", "token"):
        raise ShapeError(f"bitcast-convert from {a.text(False)} to {out.text(False)}: complex and token "
                         "types have no bitcast-convert in aotc")
    if a.dtype.width == out.dtype.width:
        if a.dims != out.dims:
            raise ShapeError(f"bitcast-convert from {a.text(False)} to {out.text(False)} must keep the dimensions")
        return ArrayShape(out.dtype, a.dims)
    wide, narrow = (a.dtype, out.dtype) if a.dtype.width > out.dtype.width else (out.dtype, a.dtype)
    if wide.width not in _UINT or narrow.width not in _UINT or "pred" in (a.dtype.kind, out.dtype.kind):
        raise ShapeError(f"bitcast-convert from {a.text(False)} to {out.text(False)} changes the width: "
                         "aotc supports that between 8, 16, 32 and 64-bit types only")
    r = wide.bits // narrow.bits
    dims = a.dims + (r,) if a.dtype is wide else a.dims[:-1]
    if a.dtype is not wide and (not a.dims or a.dims[-1] != r):
        raise ShapeError(f"bitcast-convert from {a.text(False)} to {out.dtype.name} needs a last dimension "
                         f"of {r}")
    return ArrayShape(out.dtype, dims)


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
    a = ctx.producers[instr.operands[0]].array_shape
    src, dst = a.dtype, instr.array_shape.dtype
    if src.bits == dst.bits:
        return _from_bits(_to_bits(ctx.operand(instr, 0, idx), src), dst)
    u = DTYPES[_UINT[dst.bits]]
    if src.bits > dst.bits:  # element j of the last dimension: bits [j*w, (j+1)*w) of the wide value
        e = ctx.exprs(idx)
        wide = _to_bits(ctx.operand(instr, 0, Index(a.dims, e[:-1])), src)
        shift = K.Cast(e[-1] * dst.bits, wide.ty)
        return _from_bits(K.Cast(K.Binary(">>", wide, shift, wide.ty), u), dst)
    e = ctx.exprs(idx)  # the wide value: its narrow parts, the first the least significant
    out: K.Expr | None = None
    for j in range(dst.bits // src.bits):
        part = K.Cast(_to_bits(ctx.operand(instr, 0, Index(a.dims, tuple(e) + (K.Const(j),))), src), u)
        if j:
            part = K.Binary("<<", part, K.Const(j * src.bits, u), u)
        out = part if out is None else K.Binary("|", out, part, u)
    return _from_bits(out, dst)


RULES.append(OpRule("bitcast-convert", shape=_bitcast_convert_shape, elemental=_bitcast_convert_elem, traits=frozenset({KEEPS_INDEX})))

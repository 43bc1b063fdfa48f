"""The narrow float types (f8*, f4e2m1fn) in the elementwise family: where XLA:CPU's result
differs from "the f32 helper, then rounded" (XLA computes them in f16, f8e8m0fnu in f32), and
their converts. Only element expressions live here; the C helpers are in
`runtime_c/aotc_narrow.h`.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES, DType
from ..kernel import ir as K
from .rule import ShapeError

F32, F64, U8 = DTYPES["f32"], DTYPES["f64"], DTYPES["u8"]


def _call(fn: str, ty: DType, *args) -> K.Expr:
    return K.Call(fn, tuple(K.lift(a) for a in args), ty)


def in_f16(dt: DType) -> bool:
    """XLA:CPU computes this narrow type's ops in f16 (all but f8e8m0fnu, which uses f32)."""
    return dt.is_narrow_float and dt.name != "f8e8m0fnu"


def unary(op: str, src: DType, x: K.Expr, plain: K.Expr) -> K.Expr:
    """Unary `op` of a narrow `src` value `x` (in f32) before rounding; `plain` is the f32
    helper's value."""
    if in_f16(src) and op == "exponential-minus-one":
        return _call("aotc_expm1_f16", F32, x)
    if in_f16(src) and op == "logistic":
        return _call("aotc_logistic_f16", F32, x)
    if op in ("log", "log-plus-one"):
        keep = K.Const(1 if op == "log" and src.name in ("f8e5m2", "f8e4m3", "f8e3m4") else 0, DTYPES["s32"])
        return _call("aotc_log_nan_f32", F32, x, plain, keep)
    if src.name == "f8e8m0fnu" and op in ("sine", "tan", "exponential-minus-one", "ceil"):
        # 2^-127 is an f32 subnormal, which XLA's helpers see where the FP environment flushes it
        tiny = _call("aotc_is_subnormal_f32", U8, x)
        return K.Select(tiny, K.Const(1.0, F32) if op == "ceil" else x, plain, F32)
    if src.name == "f8e8m0fnu" and op == "sign":
        # every f8e8m0fnu value is positive: XLA:CPU gives 1 for each code but NaN, 2^-127 included
        return K.Select(_call("aotc_is_nan_f32", U8, x), x, K.Const(1.0, F32), F32)
    return plain


def binary(op: str, a: K.Expr, b: K.Expr, plain: K.Expr) -> K.Expr:
    """Binary `op` of narrow values before rounding (`plain`: the f32 helper's value)."""
    if op in ("maximum", "minimum"):
        return _call(f"aotc_{op[:3]}_xla_f32", F32, a, b)
    return plain


def to_narrow(x: K.Expr, src: DType, dst: DType) -> K.Expr:
    """A value of `src` converted to the narrow `dst`, as a float: one rounding from the
    exact value; from a half or another narrow type through XLA's f16 path (which decides
    the NaN code)."""
    if src.name in ("bf16", "f16") or src.is_narrow_float:
        return _call(f"aotc_{dst.name}_to_f32", F32, _call(f"aotc_half_to_{dst.name}", dst, x))
    if src.name == "f32":
        return _call(f"aotc_{dst.name}_to_f32", F32, _call(f"aotc_f32_to_{dst.name}", dst, x))
    if src.name == "f64":
        return _call(f"aotc_cvt_{dst.name}", F32, x)
    if src.kind == "complex":
        raise ShapeError(f"convert from {src.name} to {dst.name} is not supported")
    s = "u8" if src.kind == "pred" else ("s8" if src.kind == "sint" else "u8") if src.is_subbyte_int else src.name
    return _call(f"aotc_cvt_{dst.name}", F32, _call(f"aotc_cvt_{s}_f64", F64, x))


def widen(x: K.Expr, src: DType, dst: DType) -> K.Expr:
    """A narrow `src` value converted to pred, f32 or f64 (a NaN becomes XLA's quiet NaN)."""
    if dst.kind == "pred":  # compared as a float: the FP environment flushes 2^-127 to 0
        return K.Cast(K.Binary("!=", x, K.Const(0.0, F32), K.BOOL), U8)
    x = _call("aotc_canon_nan_f32", F32, x)
    return _call("aotc_f32_to_f64_bits", F64, x) if dst.name == "f64" else x


def int_source(x: K.Expr, src: DType) -> K.Expr:
    """A narrow `src` value as the f32 XLA:CPU converts to an integer (f4e2m1fn's +-6
    saturate the integer type, as +-inf do)."""
    return _call("aotc_f4e2m1fn_int_edge", F32, x) if src.name == "f4e2m1fn" else x

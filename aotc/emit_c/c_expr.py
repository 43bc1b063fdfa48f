"""The C printer of kernel-IR expressions: types, literals, operators (parenthesized by C
precedence, and wherever gcc's -Wparentheses would ask). Statements: kernel_c.py."""
from __future__ import annotations

import math

import numpy as np

from ..hlo.dtypes import DType
from ..kernel import ir as K

_PREC = {"||": 4, "&&": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9, "<": 10, "<=": 10, ">": 10, ">=": 10,
         "<<": 11, ">>": 11, "+": 12, "-": 12, "*": 13, "/": 13, "%": 13}
_ARITH = frozenset({"+", "-", "*", "/", "%"})
_RELATIONAL = frozenset({"<", "<=", ">", ">=", "==", "!="})
_INT_BOUNDS = {"s8": "INT8", "s16": "INT16", "s32": "INT32", "s64": "INT64",
               "u8": "UINT8", "u16": "UINT16", "u32": "UINT32", "u64": "UINT64"}


def ctype(dt: DType | None) -> str:
    return "void" if dt is None else dt.c_type


def c_float(x: float, f64: bool) -> str:
    """An exact C literal of a float value, in f32 or f64."""
    suffix = "" if f64 else "f"
    cast = "double" if f64 else "float"
    if math.isnan(x):
        return f"(({cast})NAN)" if not np.signbit(x) else f"(-({cast})NAN)"
    if math.isinf(x):
        return f"(({cast})INFINITY)" if x > 0 else f"(-({cast})INFINITY)"
    if x == 0:
        return f"-0.0{suffix}" if math.copysign(1.0, x) < 0 else f"0.0{suffix}"
    short = str(np.float64(x)) if f64 else str(np.float32(x))
    exact = np.float64(short) == x if f64 else np.float32(short) == np.float32(x)
    if exact and "inf" not in short and "nan" not in short:
        if "e" not in short and "." not in short:
            short += ".0"
        return f"{short}{suffix}"
    return f"{float(x).hex()}{suffix}"


def c_literal(value, dt: DType) -> str:
    """The C literal of one value of type `dt` (halves are computed as f32)."""
    if dt.kind == "pred":
        return "1" if bool(value) else "0"
    if dt.kind == "float":
        return c_float(float(value), dt.name == "f64")
    if dt.kind == "complex":
        v = complex(value)
        f64 = dt.name == "c128"
        return f"aotc_complex_{dt.name}({c_float(v.real, f64)}, {c_float(v.imag, f64)})"
    v = int(value)
    pfx = _INT_BOUNDS.get(dt.name)
    if pfx is None:
        return str(v)
    if dt.name == "s64":
        if v == -(1 << 63):
            return "INT64_MIN"
        return str(v) if -(1 << 31) < v < (1 << 31) else f"INT64_C({v})"
    if dt.kind == "sint":
        if v == -(1 << (dt.bits - 1)):
            return f"{pfx}_MIN"
        return f"(({dt.c_type}){v})"
    return f"(({dt.c_type}){v}u)" if dt.bits < 64 else f"UINT64_C({v})"


# ------------------------------------------------------------------ expressions

def expr(e: K.Expr) -> str:
    if isinstance(e, K.Const):
        return c_literal(e.value, e.ty)
    if isinstance(e, K.Var):
        return e.name
    if isinstance(e, K.Load):
        return f"{e.buf.name}[{expr(e.index)}]"
    if isinstance(e, K.Binary):
        return f"{_operand(e.a, e.op, False)} {e.op} {_operand(e.b, e.op, True)}"
    if isinstance(e, K.Unary):
        return f"{e.op}{_primary(e.a, allow_cast=True)}"
    if isinstance(e, K.Cast):
        return f"({ctype(e.ty)}){_primary(e.a, allow_cast=True)}"
    if isinstance(e, K.Call):
        return f"{e.fn}({', '.join(expr(a) for a in e.args)})"
    if isinstance(e, K.Select):
        return f"{_primary(e.cond)} ? {_primary(e.a, allow_cast=True)} : {_primary(e.b, allow_cast=True)}"
    if isinstance(e, K.Field):
        return f"{_primary(e.a)}.{e.name}"
    if isinstance(e, K.Ptr):
        return _pointer(e)
    if isinstance(e, K.Pool):
        return "par ? par->fn : 0, par ? par->user : 0, par ? par->threads : 0"
    raise TypeError(f"cannot print {e!r}")


def _pointer(p: K.Ptr) -> str:
    if p.var is not None:
        return f"&{p.var.name}"
    assert p.buf is not None
    if p.byte_view:
        at = p.buf.name if isinstance(p.offset, K.Const) and p.offset.value == 0 else \
            f"((unsigned char*){p.buf.name} + {expr(p.offset)})"
        return f"({ctype(p.elem)}*)(void*){at}"
    if isinstance(p.offset, K.Const) and p.offset.value == 0:
        return p.buf.name
    return f"{p.buf.name} + {_operand(p.offset, '+', True)}"


def _primary(e: K.Expr, allow_cast: bool = False) -> str:
    text = expr(e)
    simple = isinstance(e, (K.Var, K.Load, K.Call, K.Field)) or (isinstance(e, K.Const) and not text.startswith("-")
                                                                 and not text.startswith("(("))
    if simple or (allow_cast and isinstance(e, K.Cast)) or (isinstance(e, K.Const) and text.startswith("((")):
        return text
    return f"({text})"


def _operand(e: K.Expr, parent: str, right: bool) -> str:
    if isinstance(e, K.Binary):
        p, q = _PREC[e.op], _PREC[parent]
        both_arith = e.op in _ARITH and parent in _ARITH
        if both_arith and (p > q or (p == q and not right)):
            return expr(e)
        # `i < n + 1`, `a >= 0 && a <= 2`, `a && b && c`: binding C's precedence makes plain
        # and gcc's -Wparentheses leaves alone
        if (e.op in _ARITH and parent in _RELATIONAL) or (parent in ("&&", "||") and e.op in _RELATIONAL) \
                or (parent in ("&&", "||") and e.op == parent and not right):
            return expr(e)
        return f"({expr(e)})"
    if isinstance(e, (K.Select, K.Ptr)):
        return f"({expr(e)})"
    if isinstance(e, K.Const) and expr(e).startswith("-"):
        return f"({expr(e)})"
    return expr(e)

"""Elementwise op family: unary, binary, compare, select, clamp, convert, complex.

Each op's shape rule and element expression sit side by side. Semantics C gets
wrong (NaN in max/min, integer division by zero, shifts, saturating converts)
are never written as bare C operators here: they call the helpers of
`runtime_c/aotc_math.h`, so every kernel agrees on them.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES, DType
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape
from ..kernel import ir as K
from ..kernel.builder import Index, compute_type
from . import narrow
from .bounds import is_reducer, nonpositive
from .rule import ASSOCIATIVE, KEEPS_INDEX, OpRule, ShapeError
from ..hlo.opcodes import Op

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

_ELEMENTWISE = frozenset({KEEPS_INDEX})

F32, F64, U8 = DTYPES["f32"], DTYPES["f64"], DTYPES["u8"]


def call(fn: str, ty: DType, *args: K.Expr) -> K.Expr:
    """A call of the runtime helper `fn` (aotc_math.h) returning `ty`."""
    return K.Call(fn, tuple(K.lift(a) for a in args), ty)


def pred(e: K.Expr) -> K.Expr:
    """A C truth value as a pred (0 or 1)."""
    return K.Cast(e, U8)


def suffix(dt: DType) -> str:
    """Helper-name suffix of the type a value of `dt` is computed in."""
    if dt.kind == "float":
        return "f64" if dt.name == "f64" else "f32"
    if dt.kind == "pred":
        return "u8"
    return compute_type(dt).name


def round_half(dt: DType, e: K.Expr) -> K.Expr:
    """Round a result computed in a wider type back to `dt`, as XLA:CPU does after each op:
    bf16/f16 from f32; f8/f4 from f32 through f16 (f8e8m0fnu straight from f32); s2/s4/u2/u4
    wrapped from s8/u8."""
    if dt.name in ("bf16", "f16") or dt.is_narrow_float:
        return call(f"aotc_round_{dt.name}", F32, e)
    if dt.is_subbyte_int:
        return call(f"aotc_wrap_{dt.name}", compute_type(dt), e)
    return e


def _part_type(dt: DType) -> DType:
    """The real type of a complex type's parts."""
    return F64 if dt.name == "c128" else F32


def _arr(s: Shape, what: str) -> ArrayShape:
    if not isinstance(s, ArrayShape):
        raise ShapeError(f"{what} must be an array, got {s}")
    return s


def _same_dims(instr: Instruction, shapes: list[Shape]) -> ArrayShape:
    arrs = [_arr(s, f"operand {k}") for k, s in enumerate(shapes)]
    for a in arrs[1:]:
        if a.dims != arrs[0].dims:
            ops = ", ".join(x.text(False) for x in arrs)
            raise ShapeError(f"operands of {instr.opcode} must have equal dimensions: {instr.opcode}({ops})")
    return arrs[0]


def _same_types(instr: Instruction, shapes: list[Shape]) -> ArrayShape:
    a = _same_dims(instr, shapes)
    for s in shapes[1:]:
        if s.dtype != a.dtype:  # type: ignore[union-attr]
            ops = ", ".join(x.text(False) for x in shapes)
            raise ShapeError(f"operands of {instr.opcode} must have the same element type: {instr.opcode}({ops})")
    return a


# ------------------------------------------------------------------ unary

# opcode -> helper stem for float operands (aotc_<stem>_f32 / _f64)
_FLOAT_UNARY = {
    "abs": "abs", "negate": "neg", "sign": "sign", "exponential": "exp",
    "exponential-minus-one": "expm1", "log": "log", "log-plus-one": "log1p", "sqrt": "sqrt",
    "rsqrt": "rsqrt", "cbrt": "cbrt", "tanh": "tanh", "logistic": "logistic", "sine": "sin",
    "cosine": "cos", "tan": "tan", "erf": "erf", "floor": "floor", "ceil": "ceil",
    "round-nearest-afz": "round_afz", "round-nearest-even": "round_even",
}
# opcode -> helper stem for integer operands
# ops with a complex helper in runtime_c/aotc_complex.h (aotc_<stem>_c64 / _c128)
_COMPLEX_UNARY = frozenset({"exponential", "log", "sine", "cosine", "tanh", "tan", "sqrt", "rsqrt",
                            "exponential-minus-one", "log-plus-one", "logistic"})
_INT_UNARY = {"abs": "abs", "negate": "neg", "sign": "sign", "not": "not", "popcnt": "popcnt",
              "count-leading-zeros": "clz"}


def _unary_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    op = instr.opcode
    k = a.dtype.kind
    if op == "is-finite":
        if k != "float":
            raise ShapeError(f"is-finite needs a floating-point operand, got {a.text(False)}")
        return ArrayShape(DTYPES["pred"], a.dims)
    if op in ("real", "imag"):
        if k == "complex":
            return ArrayShape(DTYPES["f64" if a.dtype.name == "c128" else "f32"], a.dims)
        return a.with_layout(None)
    if op == "not" and k not in ("pred", "sint", "uint"):
        raise ShapeError(f"not needs a pred or integer operand, got {a.text(False)}")
    if op in ("popcnt", "count-leading-zeros") and k not in ("sint", "uint"):
        raise ShapeError(f"{op} needs an integer operand, got {a.text(False)}")
    if op in _FLOAT_UNARY and op not in _INT_UNARY and k not in ("float", "complex"):
        raise ShapeError(f"{op} needs a floating-point operand, got {a.text(False)}")
    if op == "abs" and k == "complex":
        return ArrayShape(_part_type(a.dtype), a.dims)
    return a.with_layout(None)


def _unary_elem(ctx, instr: Instruction, idx) -> K.Expr:
    x = ctx.operand(instr, 0, idx)
    src = ctx.producers[instr.operands[0]].array_shape.dtype
    dt = instr.array_shape.dtype
    ct = compute_type(dt)
    op = instr.opcode
    if op == "is-finite":
        return call(f"aotc_is_finite_{suffix(src)}", U8, x)
    if op == "real":
        return K.Field(x, "re", ct) if src.kind == "complex" else x
    if op == "imag":
        return K.Field(x, "im", ct) if src.kind == "complex" else K.Const(0, ct)
    if src.kind == "complex":
        if op == "negate":
            return call(f"aotc_neg_{src.name}", src, x)
        if op == "abs":
            return call(f"aotc_abs_{src.name}", _part_type(src), x)
        if op == "sign":
            return call(f"aotc_sign_{src.name}", src, x)
        if op in _COMPLEX_UNARY:  # runtime_c/aotc_complex.h
            return call(f"aotc_{_FLOAT_UNARY[op]}_{src.name}", src, x)
        raise ShapeError(f"{op} on complex values is not supported yet")
    if src.kind == "pred":
        if op == "not":
            return pred(K.Unary("!", x, U8))
        if op in ("abs", "sign"):
            return x
        raise ShapeError(f"{op} on pred is not supported")
    if op == "exponential" and src == F32 and nonpositive(ctx.producers, instr.operands[0],
                                                         lambda c: is_reducer(ctx, c, "maximum"),
                                                         ctx.context() if ctx.context else None):
        return call("aotc_exp_nonpos_f32", F32, x)  # a softmax's exp(x - max): ops/bounds.py
    if src.kind == "float":
        r = call(f"aotc_{_FLOAT_UNARY[op]}_{suffix(src)}", compute_type(src), x)
        return round_half(dt, narrow.unary(op, src, x, r) if src.is_narrow_float else r)
    if src.kind == "uint" and op in ("abs",):
        return x
    if src.is_subbyte_int and (op == "count-leading-zeros" or op == "popcnt" and src.width == 2):
        # XLA:CPU counts in the type's own bits here (an s4 popcnt it computes in s8)
        x = call(f"aotc_store_{src.name}", src, x)
        if op == "count-leading-zeros":
            return round_half(dt, K.Binary("-", call("aotc_clz_u8", U8, x), K.Const(8 - src.width, U8), U8))
    return round_half(dt, call(f"aotc_{_INT_UNARY[op]}_{suffix(src)}", ct, x))


for _op in [*_FLOAT_UNARY, "not", "popcnt", "count-leading-zeros", "is-finite", "real", "imag"]:
    RULES.append(OpRule(_op, shape=_unary_shape, elemental=_unary_elem, traits=_ELEMENTWISE))

# ------------------------------------------------------------------ binary

_ARITH = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
_INT_STEM = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "remainder": "rem",
             "power": "pow", "maximum": "max", "minimum": "min", "shift-left": "shl",
             "shift-right-logical": "shr_logical", "shift-right-arithmetic": "shr_arith"}
_FLOAT_STEM = {"remainder": "rem", "power": "pow", "maximum": "max", "minimum": "min", "atan2": "atan2"}
_BITWISE = {"and": "&", "or": "|", "xor": "^"}


def _binary_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _same_types(instr, shapes)
    k, op = a.dtype.kind, instr.opcode
    if op in _BITWISE and k not in ("pred", "sint", "uint"):
        raise ShapeError(f"{op} needs pred or integer operands, got {a.text(False)}")
    if op.startswith("shift") and k not in ("sint", "uint"):
        raise ShapeError(f"{op} needs integer operands, got {a.text(False)}")
    if op == "atan2" and k not in ("float", "complex"):
        raise ShapeError(f"atan2 needs floating-point operands, got {a.text(False)}")
    return a.with_layout(None)


def _binary_elem(ctx, instr: Instruction, idx) -> K.Expr:
    a = ctx.operand(instr, 0, idx)
    b = ctx.operand(instr, 1, idx)
    dt = instr.array_shape.dtype
    ct = compute_type(dt)
    op = instr.opcode
    if op in _BITWISE:
        return K.Cast(K.Binary(_BITWISE[op], a, b, ct), ct)
    if dt.kind == "float":
        if op in _ARITH:
            return round_half(dt, K.Binary(_ARITH[op], a, b, ct))
        if op in ("maximum", "minimum") and _is_constant(ctx, instr.operands[0]) \
                and not _is_constant(ctx, instr.operands[1]):
            a, b = b, a  # XLA:CPU moves a constant to the right, which decides the NaN it gives
        r = call(f"aotc_{_FLOAT_STEM[op]}_{suffix(dt)}", ct, a, b)
        return round_half(dt, narrow.binary(op, a, b, r) if dt.is_narrow_float else r)
    if dt.kind == "complex":
        stems = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "power": "pow",
                 "atan2": "atan2", "maximum": "max", "minimum": "min"}  # aotc_math.h, aotc_complex.h
        if op not in stems:
            raise ShapeError(f"{op} on complex values is not supported yet")
        return call(f"aotc_{stems[op]}_{dt.name}", dt, a, b)
    if dt.kind == "pred":
        pred_ops = {"maximum": "|", "minimum": "&", "add": "|", "multiply": "&"}
        if op not in pred_ops:
            raise ShapeError(f"{op} on pred is not supported")
        return pred(K.Binary(pred_ops[op], a, b, U8))
    if dt.is_subbyte_int and op == "shift-right-logical":
        a = call(f"aotc_store_{dt.name}", dt, a)  # XLA:CPU shifts the type's own bits
    if dt.is_subbyte_int and dt.kind == "uint" and op == "shift-right-arithmetic":
        # ... and shifts a u2/u4 arithmetically from its top bit
        s8 = DTYPES["s8"]
        signed = call(f"aotc_wrap_s{dt.width}", s8, a)
        return round_half(dt, call("aotc_shr_arith_s8", s8, signed, K.Cast(b, s8)))
    return round_half(dt, call(f"aotc_{_INT_STEM[op]}_{suffix(dt)}", ct, a, b))


_REGROUPABLE = ("add", "multiply", "maximum", "minimum", "and", "or")
for _op in [*_INT_STEM, "atan2", *_BITWISE]:
    RULES.append(OpRule(_op, shape=_binary_shape, elemental=_binary_elem,
                        traits=_ELEMENTWISE | (frozenset({ASSOCIATIVE}) if _op in _REGROUPABLE else frozenset())))


def _complex_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _same_types(instr, shapes)
    if a.dtype.name not in ("f32", "f64"):
        raise ShapeError(f"complex needs f32 or f64 operands, got {a.text(False)}")
    return ArrayShape(DTYPES["c64" if a.dtype.name == "f32" else "c128"], a.dims)


def _complex_elem(ctx, instr: Instruction, idx) -> K.Expr:
    dt = instr.array_shape.dtype
    return call(f"aotc_complex_{dt.name}", dt, ctx.operand(instr, 0, idx), ctx.operand(instr, 1, idx))


RULES.append(OpRule("complex", shape=_complex_shape, elemental=_complex_elem, traits=_ELEMENTWISE))

# ------------------------------------------------------------------ compare

_DIRECTIONS = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def _compare_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _same_types(instr, shapes)
    d = instr.attr("direction")
    if d not in _DIRECTIONS:
        raise ShapeError(f"compare needs direction=EQ|NE|LT|LE|GT|GE, got {d!r}")
    return ArrayShape(DTYPES["pred"], a.dims)


def _compare_elem(ctx, instr: Instruction, idx) -> K.Expr:
    a = ctx.operand(instr, 0, idx)
    b = ctx.operand(instr, 1, idx)
    src = ctx.producers[instr.operands[0]].array_shape.dtype
    op = _DIRECTIONS[instr.attr("direction")]
    if src.kind == "complex":
        if instr.attr("type") == "TOTALORDER":
            raise ShapeError("compare of complex values with type=TOTALORDER is not supported")
        pt = _part_type(src)
        if op in ("<", ">"):  # XLA:CPU's order: real parts, then imaginary parts (aotc_complex.h)
            return pred(call(f"aotc_{'lt' if op == '<' else 'gt'}_{src.name}", DTYPES["s32"], a, b))
        if op in ("<=", ">="):  # observed on XLA:CPU: LE and GE compare the real parts only
            return pred(K.Binary(op, K.Field(a, "re", pt), K.Field(b, "re", pt), K.BOOL))
        re = K.Binary(op, K.Field(a, "re", pt), K.Field(b, "re", pt), K.BOOL)
        im = K.Binary(op, K.Field(a, "im", pt), K.Field(b, "im", pt), K.BOOL)
        return pred(K.Binary("&&" if op == "==" else "||", re, im, K.BOOL))
    if src.kind == "float" and instr.attr("type") == "TOTALORDER":
        ot = DTYPES["s64" if src.name == "f64" else "s32"]
        a, b = (call(f"aotc_totalorder_{suffix(src)}", ot, v) for v in (a, b))
    elif src.name in ("bf16", "f16") and op in ("==", "!=") and any(
            _is_zero_constant(ctx, o) for o in instr.operands):
        # Observed on XLA:CPU: a half compared for (in)equality with the constant 0 (JAX's
        # bf16 -> bool) is decided by the bits, so a subnormal is not 0 there; half-vs-half
        # compares do flush subnormals like f32.
        c = ctx.let(call("aotc_fcmp_nodaz_f32", DTYPES["s32"], a, b), "c_" + instr.name)
        return pred(K.Binary(op, c, K.Const(0, DTYPES["s32"]), K.BOOL))
    return pred(K.Binary(op, a, b, K.BOOL))


def _is_constant(ctx, name: str) -> bool:
    """Whether `name` is a constant, or a broadcast or reshape of one."""
    ins = ctx.producers[name]
    while ins.opcode in (Op.BROADCAST, Op.RESHAPE, Op.COPY) and ins.operands:
        ins = ctx.producers[ins.operands[0]]
    return ins.opcode == Op.CONSTANT


def _is_zero_constant(ctx, name: str) -> bool:
    ins = ctx.producers[name]
    while ins.opcode in (Op.BROADCAST, Op.RESHAPE, Op.COPY, Op.CONVERT) and ins.operands:
        ins = ctx.producers[ins.operands[0]]
    lit = ins.literal if ins.opcode == Op.CONSTANT else None
    return lit is not None and lit.values is not None and not isinstance(lit.values, tuple) \
        and lit.values.size == 1 and float(lit.values.reshape(-1)[0]) == 0.0


RULES.append(OpRule("compare", shape=_compare_shape, elemental=_compare_elem, traits=_ELEMENTWISE))

# ------------------------------------------------------------------ select, clamp


def _select_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    p, a, b = (_arr(s, n) for s, n in zip(shapes, ("predicate", "on_true", "on_false")))
    if p.dtype.name != "pred":
        raise ShapeError(f"select predicate must be pred, got {p.text(False)}")
    if a.dims != b.dims or a.dtype != b.dtype:
        raise ShapeError(f"select branches differ: {a.text(False)} vs {b.text(False)}")
    if p.dims not in ((), a.dims):
        raise ShapeError(f"select predicate {p.text(False)} does not match {a.text(False)}")
    return a.with_layout(None)


def _scalar_or(ctx, instr: Instruction, i: int, idx):
    opnd = ctx.producers[instr.operands[i]].array_shape
    return ctx.operand(instr, i, Index(()) if opnd.rank == 0 and idx.dims else idx)


def _select_elem(ctx, instr: Instruction, idx) -> K.Expr:
    p = _scalar_or(ctx, instr, 0, idx)
    dt = instr.array_shape.dtype
    v = K.Select(p, ctx.operand(instr, 1, idx), ctx.operand(instr, 2, idx), compute_type(dt))
    return round_half(dt, v) if dt.is_narrow_float else v  # XLA selects in f16: NaNs made quiet


def _clamp_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    lo, x, hi = (_arr(s, n) for s, n in zip(shapes, ("min", "operand", "max")))
    for b in (lo, hi):
        if b.dtype != x.dtype or b.dims not in ((), x.dims):
            raise ShapeError(f"clamp bound {b.text(False)} does not match operand {x.text(False)}")
    return x.with_layout(None)


def _clamp_elem(ctx, instr: Instruction, idx) -> K.Expr:
    lo = _scalar_or(ctx, instr, 0, idx)
    x = ctx.operand(instr, 1, idx)
    hi = _scalar_or(ctx, instr, 2, idx)
    dt = instr.array_shape.dtype
    if dt.kind == "pred":
        return pred(K.Binary("&", K.Binary("|", x, lo, U8), hi, U8))
    if dt.kind == "complex":  # minimum(maximum(lo, x), hi) in XLA:CPU's order (aotc_complex.h)
        return call(f"aotc_clamp_{dt.name}", dt, lo, x, hi)
    s, ct = suffix(dt), compute_type(dt)
    if dt.is_narrow_float:
        return round_half(dt, call("aotc_min_xla_f32", ct, call("aotc_max_xla_f32", ct, lo, x), hi))
    # minimum(maximum(lo, x), hi), in this operand order: it decides which NaN XLA:CPU gives
    # (a constant lo goes to the right, as XLA:CPU moves it)
    first, second = (x, lo) if _is_constant(ctx, instr.operands[0]) else (lo, x)
    return call(f"aotc_min_{s}", ct, call(f"aotc_max_{s}", ct, first, second), hi)


RULES.append(OpRule("select", shape=_select_shape, elemental=_select_elem, traits=_ELEMENTWISE))
RULES.append(OpRule("clamp", shape=_clamp_shape, elemental=_clamp_elem, traits=_ELEMENTWISE))

# ------------------------------------------------------------------ convert

_CVT_NAMES = {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f32", "f64"}


def _convert_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    return ArrayShape(instr.array_shape.dtype, a.dims)


def convert_expr(x: K.Expr, src: DType, dst: DType) -> K.Expr:
    """A computed value `x` of type `src` converted to `dst` (XLA semantics)."""
    x = K.lift(x)
    if src == dst:
        return x
    if src.kind == "complex" or dst.kind == "complex":
        if dst.kind == "complex" and src.kind != "complex":
            pt = _part_type(dst)
            return call(f"aotc_complex_{dst.name}", dst, convert_expr(x, src, pt), K.Const(0, pt))
        if src.kind == "complex" and dst.kind == "complex":
            pt = _part_type(src)
            return call(f"aotc_complex_{dst.name}", dst, K.Field(x, "re", pt), K.Field(x, "im", pt))
        return convert_expr(K.Field(x, "re", _part_type(src)), _part_type(src), dst)
    if dst.is_narrow_float:
        return narrow.to_narrow(x, src, dst)
    if src.is_narrow_float:
        if dst.kind == "pred" or dst.name in ("f32", "f64"):
            return narrow.widen(x, src, dst)
        if dst.name in ("bf16", "f16"):
            return round_half(dst, narrow.widen(x, src, F32))
        x, src = narrow.int_source(x, src), F32
    if dst.is_subbyte_int:
        # XLA:CPU: a float saturates to the narrow range, an integer keeps its low bits
        wide = DTYPES["s32"] if src.kind in ("float", "pred") else compute_type(dst)
        lo, hi = (-(1 << (dst.width - 1)), (1 << (dst.width - 1)) - 1) if dst.kind == "sint" else (0, (1 << dst.width) - 1)
        v = convert_expr(x, src, wide)
        if src.kind == "float":
            v = call("aotc_min_s32", wide, call("aotc_max_s32", wide, v, K.Const(lo, wide)), K.Const(hi, wide))
        return call(f"aotc_wrap_{dst.name}", compute_type(dst), convert_expr(v, wide, compute_type(dst)))
    s = "f32" if src.name in ("bf16", "f16") else compute_type(src).name
    if s != src.name and dst.name == "pred" and src.kind == "float":
        # halves reach pred by their bits: XLA does not flush a subnormal half to zero here
        bits = K.Binary("<<", call("aotc_bitcast_f32_u32", DTYPES["u32"], x), K.Const(1, DTYPES["u32"]), DTYPES["u32"])
        return pred(K.Binary("!=", bits, K.Const(0, DTYPES["u32"]), K.BOOL))
    if dst.name in ("bf16", "f16"):
        if s == "f32":
            return round_half(dst, x)
        if s == "pred":
            return K.Cast(x, F32)
        wide = x if s == "f64" else call(f"aotc_cvt_{s}_f64", F64, x)
        return call(f"aotc_{dst.name}_to_f32", F32, call(f"aotc_f64_to_{dst.name}", dst, wide))
    if s not in _CVT_NAMES or dst.name not in _CVT_NAMES:
        raise ShapeError(f"convert from {src.name} to {dst.name} is not supported yet")
    return call(f"aotc_cvt_{s}_{dst.name}", dst, x)


def _convert_elem(ctx, instr: Instruction, idx) -> K.Expr:
    src = ctx.producers[instr.operands[0]].array_shape.dtype
    return convert_expr(ctx.operand(instr, 0, idx), src, instr.array_shape.dtype)


RULES.append(OpRule("convert", shape=_convert_shape, elemental=_convert_elem, traits=_ELEMENTWISE))

# ------------------------------------------------------------------ reduce-precision


def _reduce_precision_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    e, m = instr.attr("exponent_bits"), instr.attr("mantissa_bits")
    if not isinstance(e, int) or not isinstance(m, int) or e < 1 or m < 0:
        raise ShapeError(f"reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0, got {e!r}, {m!r}")
    if a.dtype.kind != "float":
        raise ShapeError(f"reduce-precision on {a.dtype.name} is not supported (floating-point types only)")
    return a.with_layout(None)


def _reduce_precision_elem(ctx, instr: Instruction, idx) -> K.Expr:
    dt = instr.array_shape.dtype
    s32 = DTYPES["s32"]
    e, m = (K.Const(min(instr.attr(k), 64), s32) for k in ("exponent_bits", "mantissa_bits"))
    if dt.is_narrow_float:  # XLA:CPU: on the value widened to f16 (f8e8m0fnu: f32), then rounded back
        inner = "f16" if narrow.in_f16(dt) else "f32"
        return round_half(dt, call(f"aotc_reduce_precision_{inner}", F32, ctx.operand(instr, 0, idx), e, m))
    return call(f"aotc_reduce_precision_{dt.name}", compute_type(dt), ctx.operand(instr, 0, idx), e, m)


RULES.append(OpRule("reduce-precision", shape=_reduce_precision_shape, elemental=_reduce_precision_elem,
                    traits=_ELEMENTWISE))

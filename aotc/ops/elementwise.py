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
from .registry import OpRule, ShapeError, register


def suffix(dt: DType) -> str:
    """Helper-name suffix of the type a value of `dt` is computed in."""
    if dt.kind == "float":
        return "f64" if dt.name == "f64" else "f32"
    if dt.kind == "pred":
        return "u8"
    return dt.name


def round_half(dt: DType, expr: str) -> str:
    """Round an f32-computed result back to bf16/f16 precision (per-op rounding)."""
    if dt.name == "bf16":
        return f"aotc_round_bf16({expr})"
    if dt.name == "f16":
        return f"aotc_round_f16({expr})"
    return expr


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
    return a.with_layout(None)


def _unary_elem(ctx, instr: Instruction, idx) -> str:
    x = ctx.operand(instr, 0, idx)
    src = ctx.producers[instr.operands[0]].array_shape.dtype
    dt = instr.array_shape.dtype
    op = instr.opcode
    if op == "is-finite":
        return f"aotc_is_finite_{suffix(src)}({x})"
    if op == "real":
        return f"{x}.re" if src.kind == "complex" else x
    if op == "imag":
        return f"{x}.im" if src.kind == "complex" else c_zero(dt)
    if src.kind == "complex":
        if op == "negate":
            return f"aotc_neg_{src.name}({x})"
        raise ShapeError(f"{op} on complex values is not supported yet")
    if src.kind == "pred":
        if op == "not":
            return f"(uint8_t)!{x}"
        if op in ("abs", "sign"):
            return x
        raise ShapeError(f"{op} on pred is not supported")
    if src.kind == "float":
        return round_half(dt, f"aotc_{_FLOAT_UNARY[op]}_{suffix(src)}({x})")
    if src.kind == "uint" and op in ("abs",):
        return x
    return f"aotc_{_INT_UNARY[op]}_{suffix(src)}({x})"


def c_zero(dt: DType) -> str:
    return "0.0" if dt.name == "f64" else ("0.0f" if dt.kind == "float" else "0")


for _op in [*_FLOAT_UNARY, "not", "popcnt", "count-leading-zeros", "is-finite", "real", "imag"]:
    register(OpRule(_op, shape=_unary_shape, elemental=_unary_elem))

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


def _binary_elem(ctx, instr: Instruction, idx) -> str:
    a = ctx.operand(instr, 0, idx)
    b = ctx.operand(instr, 1, idx)
    dt = instr.array_shape.dtype
    op = instr.opcode
    if op in _BITWISE:
        return f"({dt.c_type})({a} {_BITWISE[op]} {b})"
    if dt.kind == "float":
        if op in _ARITH:
            return round_half(dt, f"({a} {_ARITH[op]} {b})")
        return round_half(dt, f"aotc_{_FLOAT_STEM[op]}_{suffix(dt)}({a}, {b})")
    if dt.kind == "complex":
        stems = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div"}
        if op not in stems:
            raise ShapeError(f"{op} on complex values is not supported yet")
        return f"aotc_{stems[op]}_{dt.name}({a}, {b})"
    if dt.kind == "pred":
        pred_ops = {"maximum": "|", "minimum": "&", "add": "|", "multiply": "&"}
        if op not in pred_ops:
            raise ShapeError(f"{op} on pred is not supported")
        return f"(uint8_t)({a} {pred_ops[op]} {b})"
    return f"aotc_{_INT_STEM[op]}_{dt.name}({a}, {b})"


for _op in [*_INT_STEM, "atan2", *_BITWISE]:
    register(OpRule(_op, shape=_binary_shape, elemental=_binary_elem))


def _complex_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _same_types(instr, shapes)
    if a.dtype.name not in ("f32", "f64"):
        raise ShapeError(f"complex needs f32 or f64 operands, got {a.text(False)}")
    return ArrayShape(DTYPES["c64" if a.dtype.name == "f32" else "c128"], a.dims)


def _complex_elem(ctx, instr: Instruction, idx) -> str:
    return f"aotc_complex_{instr.array_shape.dtype.name}({ctx.operand(instr, 0, idx)}, {ctx.operand(instr, 1, idx)})"


register(OpRule("complex", shape=_complex_shape, elemental=_complex_elem))

# ------------------------------------------------------------------ compare

_DIRECTIONS = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def _compare_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _same_types(instr, shapes)
    d = instr.attr("direction")
    if d not in _DIRECTIONS:
        raise ShapeError(f"compare needs direction=EQ|NE|LT|LE|GT|GE, got {d!r}")
    return ArrayShape(DTYPES["pred"], a.dims)


def _compare_elem(ctx, instr: Instruction, idx) -> str:
    a = ctx.operand(instr, 0, idx)
    b = ctx.operand(instr, 1, idx)
    src = ctx.producers[instr.operands[0]].array_shape.dtype
    op = _DIRECTIONS[instr.attr("direction")]
    if src.kind == "complex":
        if op not in ("==", "!="):
            raise ShapeError("ordered comparison of complex values")
        j = "&&" if op == "==" else "||"
        return f"(uint8_t)(({a}.re {op} {b}.re) {j} ({a}.im {op} {b}.im))"
    if src.kind == "float" and instr.attr("type") == "TOTALORDER":
        a, b = f"aotc_totalorder_{suffix(src)}({a})", f"aotc_totalorder_{suffix(src)}({b})"
    elif src.name in ("bf16", "f16") and op in ("==", "!=") and any(
            _is_zero_constant(ctx, o) for o in instr.operands):
        # Observed on XLA:CPU: a half compared for (in)equality with the constant 0 (JAX's
        # bf16 -> bool) is decided by the bits, so a subnormal is not 0 there; half-vs-half
        # compares do flush subnormals like f32.
        c = ctx.let("int", f"aotc_fcmp_nodaz_f32({a}, {b})", "c_" + instr.name)
        return f"(uint8_t)({c} {op} 0)"
    return f"(uint8_t)({a} {op} {b})"


def _is_zero_constant(ctx, name: str) -> bool:
    ins = ctx.producers[name]
    while ins.opcode in ("broadcast", "reshape", "copy", "convert") and ins.operands:
        ins = ctx.producers[ins.operands[0]]
    lit = ins.literal if ins.opcode == "constant" else None
    return lit is not None and lit.values is not None and not isinstance(lit.values, tuple) \
        and lit.values.size == 1 and float(lit.values.reshape(-1)[0]) == 0.0


register(OpRule("compare", shape=_compare_shape, elemental=_compare_elem))

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
    from ..lower.elemental import Index
    opnd = ctx.producers[instr.operands[i]].array_shape
    return ctx.operand(instr, i, Index(()) if opnd.rank == 0 and idx.dims else idx)


def _select_elem(ctx, instr: Instruction, idx) -> str:
    p = _scalar_or(ctx, instr, 0, idx)
    return f"({p} ? {ctx.operand(instr, 1, idx)} : {ctx.operand(instr, 2, idx)})"


def _clamp_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    lo, x, hi = (_arr(s, n) for s, n in zip(shapes, ("min", "operand", "max")))
    for b in (lo, hi):
        if b.dtype != x.dtype or b.dims not in ((), x.dims):
            raise ShapeError(f"clamp bound {b.text(False)} does not match operand {x.text(False)}")
    return x.with_layout(None)


def _clamp_elem(ctx, instr: Instruction, idx) -> str:
    lo = _scalar_or(ctx, instr, 0, idx)
    x = ctx.operand(instr, 1, idx)
    hi = _scalar_or(ctx, instr, 2, idx)
    dt = instr.array_shape.dtype
    if dt.kind == "pred":
        return f"(uint8_t)(({x} | {lo}) & {hi})"
    s = suffix(dt)
    return f"aotc_min_{s}(aotc_max_{s}({x}, {lo}), {hi})"


register(OpRule("select", shape=_select_shape, elemental=_select_elem))
register(OpRule("clamp", shape=_clamp_shape, elemental=_clamp_elem))

# ------------------------------------------------------------------ convert

_CVT_NAMES = {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f32", "f64"}


def _convert_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    return ArrayShape(instr.array_shape.dtype, a.dims)


def convert_expr(x: str, src: DType, dst: DType) -> str:
    """C expression converting a computed value `x` of type `src` to `dst` (XLA semantics)."""
    if src == dst:
        return x
    if src.kind == "complex" or dst.kind == "complex":
        if dst.kind == "complex" and src.kind != "complex":
            re = convert_expr(x, src, DTYPES["f64" if dst.name == "c128" else "f32"])
            return f"aotc_complex_{dst.name}({re}, 0)"
        if src.kind == "complex" and dst.kind == "complex":
            return f"aotc_complex_{dst.name}({x}.re, {x}.im)"
        return convert_expr(f"{x}.re", DTYPES["f64" if src.name == "c128" else "f32"], dst)
    s = "f32" if src.name in ("bf16", "f16") else src.name
    if s != src.name and dst.name == "pred":
        # halves reach pred by their bits: XLA does not flush a subnormal half to zero here
        return f"(uint8_t)((aotc_bitcast_f32_u32({x}) << 1) != 0u)"
    if dst.name in ("bf16", "f16"):
        if s == "f32":
            return round_half(dst, x)
        if s == "pred":
            return f"(float){x}"
        wide = x if s == "f64" else f"aotc_cvt_{s}_f64({x})"
        return f"aotc_{dst.name}_to_f32(aotc_f64_to_{dst.name}({wide}))"
    if s not in _CVT_NAMES or dst.name not in _CVT_NAMES:
        raise ShapeError(f"convert from {src.name} to {dst.name} is not supported yet")
    return f"aotc_cvt_{s}_{dst.name}({x})"


def _convert_elem(ctx, instr: Instruction, idx) -> str:
    src = ctx.producers[instr.operands[0]].array_shape.dtype
    return convert_expr(ctx.operand(instr, 0, idx), src, instr.array_shape.dtype)


register(OpRule("convert", shape=_convert_shape, elemental=_convert_elem))


# ------------------------------------------------------------------ bitcast-convert (same width)

_UINT = {8: "u8", 16: "u16", 32: "u32", 64: "u64"}


def _bitcast_convert_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    a = _arr(shapes[0], "operand")
    out = instr.array_shape
    if a.dtype.bits != out.dtype.bits or a.dims != out.dims or a.dtype.kind in ("complex", "token") \
            or out.dtype.kind in ("complex", "token"):
        raise ShapeError(f"bitcast-convert from {a.text(False)} to {out.text(False)} is supported only "
                         "between types of one width, keeping the dimensions")
    return ArrayShape(out.dtype, a.dims)


def _to_bits(x: str, dt: DType) -> str:
    """The raw bits of a computed value of type `dt`, as the unsigned type of its width."""
    u = _UINT[dt.bits]
    if dt.name == "f32":
        return f"aotc_bitcast_f32_u32({x})"
    if dt.name == "f64":
        return f"aotc_bitcast_f64_u64({x})"
    if dt.name in ("bf16", "f16"):
        return f"aotc_f32_to_{dt.name}({x})"  # exact: the value is a {dt.name} already
    if dt.kind == "sint":
        return f"aotc_cvt_{dt.name}_{u}({x})"
    return x


def _from_bits(b: str, dt: DType) -> str:
    u = _UINT[dt.bits]
    if dt.name == "f32":
        return f"aotc_bitcast_u32_f32({b})"
    if dt.name == "f64":
        return f"aotc_bitcast_u64_f64({b})"
    if dt.name in ("bf16", "f16"):
        return f"aotc_{dt.name}_to_f32({b})"
    if dt.kind == "sint":
        return f"aotc_cvt_{u}_{dt.name}({b})"
    if dt.kind == "pred":
        return f"(uint8_t)({b} != 0)"
    return b


def _bitcast_convert_elem(ctx, instr: Instruction, idx) -> str:
    src = ctx.producers[instr.operands[0]].array_shape.dtype
    return _from_bits(_to_bits(ctx.operand(instr, 0, idx), src), instr.array_shape.dtype)


register(OpRule("bitcast-convert", shape=_bitcast_convert_shape, elemental=_bitcast_convert_elem))

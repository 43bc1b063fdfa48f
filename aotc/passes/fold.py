"""Constant folding: an instruction whose operands are all constant expressions
becomes a constant, when numpy gives exactly the bits XLA's compile-time
evaluator (HloEvaluator) gives, computed in the element type.

Folded: add, subtract, multiply, divide, negate, abs, maximum, minimum, sqrt,
rsqrt (f32), compare, select, and/or/not/xor, the exact converts, reshape,
transpose, slice, concatenate, reverse, pad. `broadcast` and `iota` of
constants stay as they are (they are cheap, and materializing them would only
cost memory) but are read through as values by their users. Transcendentals are
never folded: libm would change bits. A fold may not grow memory: its result is
at most CAP_ELEMENTS elements, or no larger than a constant operand that dies.
"""
from __future__ import annotations

import numpy as np

from ..hlo.dtypes import DType
from ..hlo.ir import Instruction, Module
from .rewrite import Graph, Names, broadcast, constant, is_constant, sweep
from ..hlo.opcodes import Op

CAP_ELEMENTS = 1 << 16
_F = ("f16", "bf16", "f32", "f64")
_INT = ("s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64")
_CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
        "GT": np.greater, "GE": np.greater_equal}


def fold_constants(m: Module) -> tuple[Module, bool]:
    return sweep(m, _rule)


# ---------------------------------------------------------------- values


def value(g: Graph, name: str) -> np.ndarray | None:
    """The array an instruction holds if it is a constant expression we can read cheaply
    (broadcasts are read-only numpy views, not copies)."""
    ins = g.get(name)
    if is_constant(ins):
        return ins.literal.values
    if ins.opcode == Op.BROADCAST and len(ins.operands) == 1:
        a = value(g, ins.operands[0])
        if a is None:
            return None
        dims = ins.attr("dimensions", ())
        out = ins.array_shape.dims
        view = [1] * len(out)
        for k, d in enumerate(dims):
            view[d] = a.shape[k]
        return np.broadcast_to(a.reshape(view), out)
    if ins.opcode == Op.IOTA and ins.array_shape.dtype.name in _F + _INT:
        shape = ins.array_shape
        d = ins.attr("iota_dimension", 0)
        view = [1] * shape.rank
        view[d] = shape.dims[d]
        ramp = np.arange(shape.dims[d]).astype(shape.dtype.numpy).reshape(view)
        return np.broadcast_to(ramp, shape.dims)
    return None


def _rule(g: Graph, names: Names, ins: Instruction) -> list[Instruction] | None:
    fn = FOLDERS.get(ins.opcode)
    if fn is None or ins.shape.is_tuple or ins.shape.is_token or not ins.operands:
        return None
    vals = [value(g, o) for o in ins.operands]
    if any(v is None for v in vals):
        return None
    dt = ins.array_shape.dtype
    if dt.name not in _F + _INT + ("pred",):
        return None
    if _all_broadcasts_alike(g, ins) and ins.opcode in ELEMENTWISE:
        return _fold_under_broadcast(g, names, ins, fn)
    if not _affordable(g, ins):
        return None
    with np.errstate(all="ignore"):
        out = fn(ins, vals, [g.get(o).array_shape.dtype for o in ins.operands])
    if out is None:
        return None
    return [constant(ins.name, ins.array_shape, np.array(out, dtype=dt.numpy), ins)]


def _affordable(g: Graph, ins: Instruction) -> bool:
    size = ins.array_shape.size
    if size <= CAP_ELEMENTS:
        return True
    return any(is_constant(g.get(o)) and g.get(o).array_shape.size >= size and g.user_count(o) == 1
               for o in ins.operands)


def _all_broadcasts_alike(g: Graph, ins: Instruction) -> bool:
    """Every operand is broadcast(constant) with the same dimensions and operand dims."""
    ops = [g.get(o) for o in ins.operands]
    if not all(o.opcode == Op.BROADCAST and is_constant(g.get(o.operands[0])) for o in ops):
        return False
    keys = {(o.attr("dimensions", ()), g.get(o.operands[0]).array_shape.dims) for o in ops}
    return len(keys) == 1


def _fold_under_broadcast(g: Graph, names: Names, ins: Instruction, fn) -> list[Instruction] | None:
    """op(broadcast(c1), broadcast(c2)) => broadcast(op(c1, c2)): the small constant is computed."""
    first = g.get(ins.operands[0])
    inner = [g.get(g.get(o).operands[0]) for o in ins.operands]
    with np.errstate(all="ignore"):
        out = fn(ins, [c.literal.values for c in inner], [c.array_shape.dtype for c in inner])
    if out is None:
        return None
    shape = ins.array_shape.with_dims(inner[0].array_shape.dims)
    c = constant(names.fresh(ins.name + ".folded"), shape, np.array(out, dtype=shape.dtype.numpy), ins)
    return [c, broadcast(ins.name, ins.array_shape, c.name, first.attr("dimensions", ()), ins)]


# ---------------------------------------------------------------- elementwise


def _float_or_int(dt: DType) -> bool:
    return dt.name in _F + _INT


def _add(ins, v, t):
    return v[0] + v[1] if _float_or_int(t[0]) else None


def _sub(ins, v, t):
    return v[0] - v[1] if _float_or_int(t[0]) else None


def _mul(ins, v, t):
    return v[0] * v[1] if _float_or_int(t[0]) else None


def _div(ins, v, t):
    a, b = v
    if t[0].name in _F:
        return a / b
    if t[0].name not in _INT:
        return None
    # integers: truncating; x / 0 = -1 (all ones); INT_MIN / -1 = INT_MIN
    zero = b == 0
    overflow = np.zeros(np.broadcast(a, b).shape, bool)
    if t[0].kind == "sint":
        overflow = (a == np.iinfo(a.dtype).min) & (b == -1)
    safe = np.where(zero | overflow, 1, b).astype(b.dtype)
    q = np.floor_divide(a, safe)
    r = a - q * safe
    q = np.where((r != 0) & ((a < 0) != (safe < 0)), q + 1, q).astype(a.dtype)  # floor -> truncation
    q = np.where(overflow, a, q)
    return np.where(zero, np.array(-1).astype(a.dtype), q)


def _neg(ins, v, t):
    return -v[0] if _float_or_int(t[0]) else None


def _abs(ins, v, t):
    return np.abs(v[0]) if _float_or_int(t[0]) else None


def _minmax(pick):
    def fold(ins, v, t):
        a, b = v
        if not _float_or_int(t[0]):
            return None
        if t[0].name in _F:
            # max(-0, +0) is XLA:CPU's runtime +0 but not obviously the evaluator's: leave mixed zeros
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            if np.any((a64 == 0) & (b64 == 0) & (np.signbit(a64) != np.signbit(b64))):
                return None
        return pick(a, b)  # numpy propagates NaN from either side, as XLA does
    return fold


def _sqrt(ins, v, t):
    return np.sqrt(v[0]) if t[0].name in _F else None


def _rsqrt(ins, v, t):
    # XLA's evaluator computes 1/sqrt in double, then rounds (checked against XLA for f32)
    if t[0].name != "f32":
        return None
    return (1.0 / np.sqrt(v[0].astype(np.float64))).astype(np.float32)


def _compare(ins, v, t):
    if ins.attr("type") == "TOTALORDER" or not (_float_or_int(t[0]) or t[0].name == "pred"):
        return None
    return _CMP[ins.attr("direction")](v[0], v[1])


def _select(ins, v, t):
    return np.where(v[0], v[1], v[2])


def _bitwise(logical, bitwise):
    def fold(ins, v, t):
        if t[0].name == "pred":
            return logical(*v)
        return bitwise(*v) if t[0].name in _INT else None
    return fold


def _not(ins, v, t):
    if t[0].name == "pred":
        return np.logical_not(v[0])
    return np.invert(v[0]) if t[0].name in _INT else None


# conversions numpy performs exactly as XLA: widening floats, f64->f32, f32->f16/bf16 (nearest
# even), ints->f32/f64, int<->int (wrapping), pred<->numbers, numbers->pred. Not float->int.
def _convert(ins, v, t):
    src, dst = t[0].name, ins.array_shape.dtype.name
    a = v[0]
    if dst == "pred":
        return a != 0 if src in _F + _INT + ("pred",) else None
    if src == "pred":
        return a.astype(ins.array_shape.dtype.numpy) if dst in _F + _INT else None
    if src in _INT and dst in _INT + ("f32", "f64"):
        return a.astype(ins.array_shape.dtype.numpy)
    exact = {("f16", "f32"), ("f16", "f64"), ("bf16", "f32"), ("bf16", "f64"), ("f32", "f64"),
             ("f64", "f32"), ("f32", "f16"), ("f32", "bf16")}
    if (src, dst) in exact or src == dst:
        return a.astype(ins.array_shape.dtype.numpy)
    return None


# ---------------------------------------------------------------- data movement


def _reshape(ins, v, t):
    return np.reshape(v[0], ins.array_shape.dims)


def _transpose(ins, v, t):
    return np.transpose(v[0], ins.attr("dimensions"))


def _slice(ins, v, t):
    return v[0][tuple(slice(s.start, s.limit, s.stride) for s in ins.attr("slice"))]


def _concatenate(ins, v, t):
    return np.concatenate(v, axis=ins.attr("dimensions")[0])


def _reverse(ins, v, t):
    return np.flip(v[0], axis=tuple(ins.attr("dimensions")))


def _pad(ins, v, t):
    a, fill = v[0], v[1]
    pads = ins.attr("padding")
    # interior padding and positive edges first, then negative edges crop
    grown = [max(lo, 0) + (n + max(n - 1, 0) * p.interior) + max(hi, 0)
             for n, p, lo, hi in ((n, p, p.lo, p.hi) for n, p in zip(a.shape, pads))]
    out = np.full(grown, fill, dtype=a.dtype)
    where = tuple(slice(max(p.lo, 0), max(p.lo, 0) + n + max(n - 1, 0) * p.interior, p.interior + 1)
                  for n, p in zip(a.shape, pads))
    out[where] = a
    crop = tuple(slice(-min(p.lo, 0), g - (-min(p.hi, 0))) for g, p in zip(grown, pads))
    return out[crop]


ELEMENTWISE = frozenset({Op.ADD, Op.SUBTRACT, Op.MULTIPLY, Op.DIVIDE, Op.NEGATE, Op.ABS, Op.MAXIMUM, Op.MINIMUM,
                         Op.SQRT, Op.RSQRT, Op.COMPARE, Op.SELECT, Op.AND, Op.OR, Op.XOR, Op.NOT, Op.CONVERT})

FOLDERS = {
    Op.ADD: _add, Op.SUBTRACT: _sub, Op.MULTIPLY: _mul, Op.DIVIDE: _div, Op.NEGATE: _neg, Op.ABS: _abs,
    Op.MAXIMUM: _minmax(np.maximum), Op.MINIMUM: _minmax(np.minimum), "sqrt": _sqrt, "rsqrt": _rsqrt,
    "compare": _compare, "select": _select, "and": _bitwise(np.logical_and, np.bitwise_and),
    "or": _bitwise(np.logical_or, np.bitwise_or), "xor": _bitwise(np.logical_xor, np.bitwise_xor), "not": _not, "convert": _convert,
    "reshape": _reshape, "transpose": _transpose, "slice": _slice, "concatenate": _concatenate,
    "reverse": _reverse, "pad": _pad,
}

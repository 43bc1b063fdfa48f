"""StableHLO ops without regions, each lowered to HLO as XLA's converter does: the
elementwise ops one to one (`stablehlo.round_nearest_even` is `round-nearest-even`,
`chlo.erf` is `erf`), `compare` with its direction and type, `broadcast_in_dim` as a reshape
dropping the size-1 dimensions it expands plus a `broadcast`, `dot_general` as `dot`,
`convolution` with its window and `dim_labels`, `gather`, `chlo.top_k` as `topk`, ...

`HANDLERS` maps op names to functions `(builder, op) -> None` that emit instructions and
bind the op's results. Ops with regions are in `regions`.
"""
from __future__ import annotations

from typing import Callable

from ...hlo.ir import DimLabels, Literal, PadDim, SliceDim, Window, WindowDim
from ...hlo.opcodes import Op
from ...hlo.shape import ArrayShape, TupleShape
from .attributes import ConvDims, Dense, Elided, Enum, Ident, Struct, Typed
from .builder import Builder
from .dense import dense_values
from .syntax import Op as MlirOp

# StableHLO ops that are one HLO opcode applied to the same operands (spelled with '-')
ONE_TO_ONE = """abs add and atan2 bitcast_convert cbrt ceil clamp complex convert cosine count_leading_zeros
divide dynamic_update_slice exponential exponential_minus_one floor imag is_finite log log_plus_one
logistic maximum minimum multiply negate not or popcnt power real remainder reshape round_nearest_afz
round_nearest_even rsqrt select shift_left shift_right_arithmetic shift_right_logical sign sine sqrt
subtract tan tanh tuple xor""".split()


def ints(b: Builder, op: MlirOp, key: str, default: tuple | None = None) -> tuple[int, ...]:
    """An integer-list attribute (`[1, 2]`, `array<i64: 1, 2>`, `dense<...> : tensor<...>`),
    flattened; bools count as 0/1."""
    v = op.attrs.get(key)
    if v is None:
        if default is None:
            raise b.mb.error(f"{op.name} needs the attribute '{key}'", op.pos)
        return default
    if isinstance(v, Typed) and isinstance(v.value, Dense) and isinstance(v.shape, ArrayShape):
        return tuple(int(x) for x in dense_values(b.mb.lx, v.value, v.shape).reshape(-1))
    out: list[int] = []
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            stack.extend(reversed(x))
        elif isinstance(x, (bool, int)):
            out.append(int(x))
        else:
            raise b.mb.error(f"'{key}' of {op.name} must be a list of integers", op.pos)
    return tuple(out)


def pairs(b: Builder, op: MlirOp, key: str, n: int) -> tuple[tuple[int, int], ...]:
    flat = ints(b, op, key, (0,) * (2 * n))
    if len(flat) != 2 * n:
        raise b.mb.error(f"'{key}' of {op.name} has {len(flat)} values, expected {n} pairs", op.pos)
    return tuple(zip(flat[0::2], flat[1::2]))


def one(b: Builder, op: MlirOp, key: str, default=None):
    v = op.attrs.get(key, default)
    if v is None:
        raise b.mb.error(f"{op.name} needs the attribute '{key}'", op.pos)
    return v


def integer(b: Builder, op: MlirOp, key: str, default: int | None = None) -> int:
    """An integer attribute (a located error for a float, a list, a string, ...)."""
    v = one(b, op, key, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise b.mb.error(f"'{key}' of {op.name} must be an integer", op.pos)
    return v


def field_ints(b: Builder, op: MlirOp, fields: dict, key: str) -> tuple[int, ...]:
    """An integer-list field of a `#stablehlo.kind<...>` struct; absent is empty."""
    v = fields.get(key, ())
    if not isinstance(v, tuple) or any(isinstance(x, bool) or not isinstance(x, int) for x in v):
        raise b.mb.error(f"'{key}' of {op.name} must be a list of integers", op.pos)
    return v


def field_int(b: Builder, op: MlirOp, fields: dict, key: str, default: int) -> int:
    v = fields.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise b.mb.error(f"'{key}' of {op.name} must be an integer", op.pos)
    return v


def _one_to_one(opcode: Op) -> Callable:
    def lower(b: Builder, op: MlirOp) -> None:
        vals = b.operands(op)
        names = [n for n, _ in vals]
        out = op.result_types[0] if op.result_types else None
        if opcode is Op.SELECT and len(vals) == 3 and isinstance(out, ArrayShape) and out.rank and \
                isinstance(vals[0][1], ArrayShape) and not vals[0][1].rank:  # a scalar predicate
            pred = ArrayShape(vals[0][1].dtype, out.dims)
            names[0] = b.emit(Op.BROADCAST, pred, (names[0],), (("dimensions", ()),), pos=op.result_pos,
                              ssa=op.ssa)
        b.emit_op(op, opcode, tuple(names))
    return lower


def _compare(b: Builder, op: MlirOp) -> None:
    direction = one(b, op, "comparison_direction")
    attrs: list = [("direction", direction.value if isinstance(direction, Enum) else str(direction))]
    kind = op.attrs.get("compare_type")
    if isinstance(kind, Enum) and kind.value != "NOTYPE":
        attrs.append(("type", kind.value))
    b.emit_op(op, Op.COMPARE, tuple(n for n, _ in b.operands(op)), tuple(attrs))


def _constant(b: Builder, op: MlirOp) -> None:
    v = one(b, op, "value")
    if not isinstance(v, Typed) or not isinstance(v.shape, ArrayShape):
        raise b.mb.error("stablehlo.constant needs a dense literal of a tensor type", op.pos)
    if isinstance(v.value, Elided):
        literal = Literal(v.shape, None)
    elif isinstance(v.value, Dense):
        literal = Literal(v.shape, dense_values(b.mb.lx, v.value, v.shape))
    else:
        raise b.mb.error("stablehlo.constant needs a dense literal", op.pos)
    name = b.emit(Op.CONSTANT, v.shape, literal=literal, pos=op.result_pos, ssa=op.ssa)
    b.values[op.results[0]] = (name, v.shape)
    b.constants[op.results[0]] = b.instructions[-1]


def _broadcast_in_dim(b: Builder, op: MlirOp) -> None:
    ((x, xs),) = b.operands(op)
    out = op.result_types[0]
    dims = ints(b, op, "broadcast_dimensions")
    if not isinstance(xs, ArrayShape) or not isinstance(out, ArrayShape) or len(dims) != xs.rank \
            or any(not 0 <= d < out.rank for d in dims):
        raise b.mb.error(f"broadcast_in_dim dims {list(dims)} do not fit {xs} -> {out}", op.pos)
    keep = [i for i in range(xs.rank) if not (xs.dims[i] == 1 and out.dims[dims[i]] != 1)]
    if len(keep) != xs.rank:  # HLO's broadcast never expands a dimension: drop the 1s first
        x = b.emit(Op.RESHAPE, ArrayShape(xs.dtype, tuple(xs.dims[i] for i in keep)), (x,), pos=op.result_pos,
                   ssa=op.ssa)
        dims = tuple(dims[i] for i in keep)
    b.emit_op(op, Op.BROADCAST, (x,), (("dimensions", dims),))


def _with(opcode: Op, attr: str, key: str) -> Callable:
    def lower(b: Builder, op: MlirOp) -> None:
        b.emit_op(op, opcode, tuple(n for n, _ in b.operands(op)), ((attr, ints(b, op, key)),))
    return lower


def _slice(b: Builder, op: MlirOp) -> None:
    starts, limits = ints(b, op, "start_indices"), ints(b, op, "limit_indices")
    strides = ints(b, op, "strides", (1,) * len(starts))
    if not len(starts) == len(limits) == len(strides):
        raise b.mb.error("slice start, limit and stride lists differ in length", op.pos)
    dims = tuple(SliceDim(s, e, st) for s, e, st in zip(starts, limits, strides))
    b.emit_op(op, Op.SLICE, tuple(n for n, _ in b.operands(op)), (("slice", dims),))


def _concatenate(b: Builder, op: MlirOp) -> None:
    dim = integer(b, op, "dimension")
    b.emit_op(op, Op.CONCATENATE, tuple(n for n, _ in b.operands(op)), (("dimensions", (dim,)),))


def _iota(b: Builder, op: MlirOp) -> None:
    b.emit_op(op, Op.IOTA, (), (("iota_dimension", integer(b, op, "iota_dimension")),))


def _pad(b: Builder, op: MlirOp) -> None:
    lo, hi = ints(b, op, "edge_padding_low"), ints(b, op, "edge_padding_high")
    interior = ints(b, op, "interior_padding", (0,) * len(lo))
    if not len(lo) == len(hi) == len(interior):
        raise b.mb.error("pad low, high and interior lists differ in length", op.pos)
    padding = tuple(PadDim(a, c, i) for a, c, i in zip(lo, hi, interior))
    b.emit_op(op, Op.PAD, tuple(n for n, _ in b.operands(op)), (("padding", padding),))


def _dot_general(b: Builder, op: MlirOp) -> None:
    dn = one(b, op, "dot_dimension_numbers")
    if not isinstance(dn, Struct):
        raise b.mb.error("dot_general needs dot_dimension_numbers", op.pos)
    f = dn.fields
    attrs = []
    for side in ("lhs", "rhs"):
        batch = field_ints(b, op, f, f"{side}_batching_dimensions")
        if batch:
            attrs.append((f"{side}_batch_dims", batch))
    for side in ("lhs", "rhs"):
        attrs.append((f"{side}_contracting_dims", field_ints(b, op, f, f"{side}_contracting_dimensions")))
    b.emit_op(op, Op.DOT, tuple(n for n, _ in b.operands(op)), tuple(attrs))


def _dot(b: Builder, op: MlirOp) -> None:
    vals = b.operands(op)
    lhs = vals[0][1]
    rank = lhs.rank if isinstance(lhs, ArrayShape) else 1
    b.emit_op(op, Op.DOT, tuple(n for n, _ in vals),
              (("lhs_contracting_dims", (max(rank - 1, 0),)), ("rhs_contracting_dims", (0,))))


def _convolution(b: Builder, op: MlirOp) -> None:
    dn = one(b, op, "dimension_numbers")
    vals = b.operands(op)
    if not isinstance(dn, ConvDims) or len(vals) != 2:
        raise b.mb.error("convolution needs two operands and dimension numbers", op.pos)
    n = len(dn.lhs) - 2
    rhs = vals[1][1]
    sizes = []
    for k in range(n):
        if str(k) not in dn.rhs or not isinstance(rhs, ArrayShape) or len(dn.rhs) != rhs.rank:
            raise b.mb.error(f"convolution kernel dimensions {list(dn.rhs)} do not fit {rhs}", op.pos)
        sizes.append(rhs.dims[dn.rhs.index(str(k))])
    strides = ints(b, op, "window_strides", (1,) * n)
    pads = pairs(b, op, "padding", n)
    lhs_d, rhs_d = ints(b, op, "lhs_dilation", (1,) * n), ints(b, op, "rhs_dilation", (1,) * n)
    rev = ints(b, op, "window_reversal", (0,) * n)
    if not len(strides) == len(lhs_d) == len(rhs_d) == len(rev) == n:
        raise b.mb.error(f"convolution window attributes need {n} values each", op.pos)
    window = Window(tuple(WindowDim(sizes[k], strides[k], pads[k][0], pads[k][1], lhs_d[k], rhs_d[k], bool(rev[k]))
                          for k in range(n)))
    labels = DimLabels("".join(dn.lhs), "".join(dn.rhs), "".join(dn.out))
    attrs = [("window", window), ("dim_labels", labels)]
    for key in ("feature_group_count", "batch_group_count"):
        if integer(b, op, key, 1) != 1:
            attrs.append((key, integer(b, op, key)))
    b.emit_op(op, Op.CONVOLUTION, tuple(n for n, _ in vals), tuple(attrs))


def _gather(b: Builder, op: MlirOp) -> None:
    dn = one(b, op, "dimension_numbers")
    if not isinstance(dn, Struct):
        raise b.mb.error("gather needs #stablehlo.gather dimension numbers", op.pos)
    f = dn.fields
    attrs: list = [(k, field_ints(b, op, f, k)) for k in ("offset_dims", "collapsed_slice_dims", "start_index_map")]
    for key in ("operand_batching_dims", "start_indices_batching_dims"):
        if f.get(key):
            attrs.append((key, field_ints(b, op, f, key)))
    attrs += [("index_vector_dim", field_int(b, op, f, "index_vector_dim", 0)),
              ("slice_sizes", ints(b, op, "slice_sizes")),
              ("indices_are_sorted", bool(op.attrs.get("indices_are_sorted", False)))]
    b.emit_op(op, Op.GATHER, tuple(n for n, _ in b.operands(op)), tuple(attrs))


def _dynamic_slice(b: Builder, op: MlirOp) -> None:
    b.emit_op(op, Op.DYNAMIC_SLICE, tuple(n for n, _ in b.operands(op)),
              (("dynamic_slice_sizes", ints(b, op, "slice_sizes")),))


def _get_tuple_element(b: Builder, op: MlirOp) -> None:
    b.emit_op(op, Op.GET_TUPLE_ELEMENT, tuple(n for n, _ in b.operands(op)), (("index", integer(b, op, "index")),))


def _optimization_barrier(b: Builder, op: MlirOp) -> None:
    vals = b.operands(op)
    shape = TupleShape(tuple(s for _, s in vals))
    t = b.emit(Op.TUPLE, shape, tuple(n for n, _ in vals), pos=op.result_pos, ssa=op.ssa)
    name = b.emit(Op.OPT_BARRIER, shape, (t,), pos=op.result_pos, ssa=op.ssa)
    for i, (key, (_, s)) in enumerate(zip(op.results, vals)):
        gte = b.emit(Op.GET_TUPLE_ELEMENT, s, (name,), (("index", i),), pos=op.result_pos,
                     ssa=key[1:].replace("#", "."))
        b.values[key] = (gte, s)


def _top_k(b: Builder, op: MlirOp) -> None:
    largest = op.attrs.get("largest", True)
    b.emit_op(op, Op.TOPK, tuple(n for n, _ in b.operands(op)),
              (("k", integer(b, op, "k")), ("largest", bool(largest))))


def _reduce_precision(b: Builder, op: MlirOp) -> None:
    fmt = one(b, op, "format")
    text = fmt.text if isinstance(fmt, Ident) else str(fmt)
    e, _, m = text.lstrip("e").partition("m")
    if not (e.isdigit() and m.isdigit()):
        raise b.mb.error(f"reduce_precision format '{text}' is not of the form e8m7", op.pos)
    b.emit_op(op, Op.REDUCE_PRECISION, tuple(n for n, _ in b.operands(op)),
              (("exponent_bits", int(e)), ("mantissa_bits", int(m))))


HANDLERS: dict[str, Callable] = {
    **{f"stablehlo.{n}": _one_to_one(Op(n.replace("_", "-"))) for n in ONE_TO_ONE},
    "chlo.erf": _one_to_one(Op.ERF),
    "stablehlo.compare": _compare,
    "stablehlo.constant": _constant,
    "stablehlo.broadcast_in_dim": _broadcast_in_dim,
    "stablehlo.transpose": _with(Op.TRANSPOSE, "dimensions", "permutation"),
    "stablehlo.reverse": _with(Op.REVERSE, "dimensions", "dimensions"),
    "stablehlo.slice": _slice,
    "stablehlo.concatenate": _concatenate,
    "stablehlo.iota": _iota,
    "stablehlo.pad": _pad,
    "stablehlo.dot_general": _dot_general,
    "stablehlo.dot": _dot,
    "stablehlo.convolution": _convolution,
    "stablehlo.gather": _gather,
    "stablehlo.dynamic_slice": _dynamic_slice,
    "stablehlo.get_tuple_element": _get_tuple_element,
    "stablehlo.optimization_barrier": _optimization_barrier,
    "stablehlo.reduce_precision": _reduce_precision,
    "chlo.top_k": _top_k,
}

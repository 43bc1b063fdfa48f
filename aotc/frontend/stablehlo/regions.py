"""StableHLO ops with regions or callees, lowered to HLO as XLA's converter does: each
region becomes a computation whose parameters are the block's arguments (`reduce`,
`reduce_window`, `sort`, `scatter`, `map`, `select_and_scatter`, whose select and scatter
regions are two computations), `while` carries its loop variables (and the values its
regions capture) in one tuple, `case` becomes a `conditional` whose branches each take a
tuple of the values they capture, `func.call` becomes `call` and so does `composite` (a call
of its decomposition); several results become a tuple shape read back with get-tuple-element.

Constants defined around a region are cloned into it on use (see `builder`).
"""
from __future__ import annotations

from typing import Callable

from ...hlo.ir import Raw, Window, WindowDim
from ...hlo.opcodes import Op
from ...hlo.printer import quote_string
from ...hlo.shape import Shape, TupleShape
from .builder import Builder
from .op_table import field_int, field_ints, integer, ints, one, pairs
from .syntax import Block, Op as MlirOp, Use, free_uses


def scalar_region(b: Builder, op: MlirOp, block: Block) -> str:
    """A region whose block arguments are its computation's parameters; returns its name."""
    rb = Builder(b.mb, b.mb.fresh(f"region.{op.ssa}" if op.ssa else "region"), parent=b, what=op.name)
    for i, a in enumerate(block.args):
        rb.values[a.key] = (rb.emit(Op.PARAMETER, a.shape, pos=a.pos, base=a.key[1:], number=i), a.shape)
    vals, at = rb.lower_block(block, f"the region of {op.name}")
    root, _ = rb.tuple_or_one(vals, at, ssa=op.ssa)
    rb.finish(root, pos=block.pos)
    return rb.name


def _region(b: Builder, op: MlirOp, index: int) -> Block:
    if len(op.regions) <= index:
        raise b.mb.error(f"{op.name} needs {index + 1} region{'s' if index else ''}", op.pos)
    return op.regions[index]


def _names(vals) -> tuple[str, ...]:
    return tuple(n for n, _ in vals)


def _reduce(b: Builder, op: MlirOp) -> None:
    vals = b.operands(op)
    if not vals or len(vals) % 2:
        raise b.mb.error("stablehlo.reduce needs as many init values as operands", op.pos)
    body = scalar_region(b, op, _region(b, op, 0))
    b.emit_op(op, Op.REDUCE, _names(vals), (("dimensions", ints(b, op, "dimensions")), ("to_apply", body)))


def _reduce_window(b: Builder, op: MlirOp) -> None:
    vals = b.operands(op)
    if not vals or len(vals) % 2:
        raise b.mb.error("stablehlo.reduce_window needs as many init values as operands", op.pos)
    sizes = ints(b, op, "window_dimensions")
    n = len(sizes)
    strides = ints(b, op, "window_strides", (1,) * n)
    base, dil = ints(b, op, "base_dilations", (1,) * n), ints(b, op, "window_dilations", (1,) * n)
    pads = pairs(b, op, "padding", n)
    if not len(strides) == len(base) == len(dil) == n:
        raise b.mb.error(f"reduce_window attributes need {n} values each", op.pos)
    window = Window(tuple(WindowDim(sizes[k], strides[k], pads[k][0], pads[k][1], base[k], dil[k]) for k in range(n)))
    body = scalar_region(b, op, _region(b, op, 0))
    b.emit_op(op, Op.REDUCE_WINDOW, _names(vals), (("window", window), ("to_apply", body)))


def _sort(b: Builder, op: MlirOp) -> None:
    vals = b.operands(op)
    rank = getattr(vals[0][1], "rank", 1) if vals else 1
    dim = integer(b, op, "dimension", -1)
    dim = dim + rank if dim < 0 else dim
    body = scalar_region(b, op, _region(b, op, 0))
    b.emit_op(op, Op.SORT, _names(vals), (("dimensions", (dim,)), ("is_stable", bool(op.attrs.get("is_stable", False))),
                                          ("to_apply", body)))


def _scatter(b: Builder, op: MlirOp) -> None:
    dn = one(b, op, "scatter_dimension_numbers")
    f = getattr(dn, "fields", None)
    if f is None:
        raise b.mb.error("scatter needs #stablehlo.scatter dimension numbers", op.pos)
    attrs: list = [(k, field_ints(b, op, f, k)) for k in ("update_window_dims", "inserted_window_dims")]
    for key in ("input_batching_dims", "scatter_indices_batching_dims"):
        if f.get(key):
            attrs.append((key, field_ints(b, op, f, key)))
    attrs += [("scatter_dims_to_operand_dims", field_ints(b, op, f, "scatter_dims_to_operand_dims")),
              ("index_vector_dim", field_int(b, op, f, "index_vector_dim", 0)),
              ("indices_are_sorted", bool(op.attrs.get("indices_are_sorted", False))),
              ("unique_indices", bool(op.attrs.get("unique_indices", False)))]
    vals = b.operands(op)
    attrs.append(("to_apply", scalar_region(b, op, _region(b, op, 0))))
    b.emit_op(op, Op.SCATTER, _names(vals), tuple(attrs))


def _call(b: Builder, op: MlirOp) -> None:
    callee = op.attrs.get("callee")
    comp = b.mb.funcs.get(callee)
    if comp is None:
        raise b.mb.error(f"call to undefined function @{callee}", op.pos)
    b.emit_op(op, Op.CALL, _names(b.operands(op)), (("to_apply", comp),))


def _is_constant(b: Builder, key: str) -> bool | None:
    """Whether the value `key` seen from `b` is a constant (None: not defined anywhere)."""
    x: Builder | None = b
    while x is not None:
        if key in x.values:
            return key in x.constants
        x = x.parent
    return None


def captures(b: Builder, blocks: tuple[Block, ...]) -> list[Use]:
    """Values other than constants that `blocks` use from around them, first use first."""
    out: list[Use] = []
    seen: set[str] = set()
    for block in blocks:
        for u in free_uses(block):
            if u.key not in seen and _is_constant(b, u.key) is False:
                seen.add(u.key)
                out.append(u)
    return out


def tuple_region(b: Builder, op: MlirOp, block: Block, kind: str, state: TupleShape, taken: list[Use],
                 pass_through: bool) -> tuple[str, list[tuple[str, Shape]]]:
    """A region whose computation takes one tuple: the block's arguments, then the captured
    values. With `pass_through` (a loop body), the root returns the captured values too."""
    rb = Builder(b.mb, b.mb.fresh(f"{kind}.{op.ssa}" if op.ssa else kind), parent=b, what=op.name)
    param = rb.emit(Op.PARAMETER, state, pos=block.pos, base="arg_tuple", number=0)
    keys = [(a.key, a.pos) for a in block.args] + [(u.key, u.pos) for u in taken]
    passed = []
    for i, ((key, pos), shape) in enumerate(zip(keys, state.elements)):
        name = rb.emit(Op.GET_TUPLE_ELEMENT, shape, (param,), (("index", i),), pos=pos, base=key[1:])
        rb.values[key] = (name, shape)
        passed.append((name, shape))
    vals, at = rb.lower_block(block, f"the {kind} region of {op.name}")
    if pass_through:
        vals = vals + passed[len(block.args):]
    root, _ = rb.tuple_or_one(vals, at, ssa=op.ssa)
    rb.finish(root, pos=block.pos)
    return rb.name, vals


def _while(b: Builder, op: MlirOp) -> None:
    cond, body = _region(b, op, 0), _region(b, op, 1)
    inits = b.operands(op)
    taken = captures(b, (cond, body))
    state_vals = inits + [b.value(u) for u in taken]
    state = TupleShape(tuple(s for _, s in state_vals))
    for block in (cond, body):
        if len(block.args) != len(inits):
            raise b.mb.error(f"stablehlo.while has {len(inits)} loop variables but a region takes "
                             f"{len(block.args)}", block.pos)
    init = b.emit(Op.TUPLE, state, _names(state_vals), pos=op.result_pos, ssa=op.ssa)
    cond_name, returned = tuple_region(b, op, cond, "cond", state, taken, pass_through=False)
    if len(returned) != 1:
        raise b.mb.error("the cond region of stablehlo.while must return one i1", cond.pos)
    body_name, _ = tuple_region(b, op, body, "body", state, taken, pass_through=True)
    loop = b.emit(Op.WHILE, state, (init,), (("condition", cond_name), ("body", body_name)), pos=op.result_pos,
                  ssa=op.ssa)
    for i, key in enumerate(op.results):
        b.values[key] = (b.emit(Op.GET_TUPLE_ELEMENT, state.elements[i], (loop,), (("index", i),),
                                pos=op.result_pos, ssa=key[1:].replace("#", ".")), state.elements[i])


def _case(b: Builder, op: MlirOp) -> None:
    (index,) = b.operands(op) if len(op.operands) == 1 else (None,)
    if index is None or not op.regions:
        raise b.mb.error("stablehlo.case takes one index operand and at least one branch", op.pos)
    operands, branches = [index[0]], []
    for i, block in enumerate(op.regions):
        taken = captures(b, (block,))
        vals = [b.value(u) for u in taken]
        shape = TupleShape(tuple(s for _, s in vals))
        operands.append(b.emit(Op.TUPLE, shape, _names(vals), pos=block.pos, ssa=f"{op.ssa}.branch{i}"))
        name, _ = tuple_region(b, op, block, f"branch{i}", shape, taken, pass_through=False)
        branches.append(name)
    b.emit_op(op, Op.CONDITIONAL, tuple(operands), (("branch_computations", tuple(branches)),))


def _map(b: Builder, op: MlirOp) -> None:
    body = scalar_region(b, op, _region(b, op, 0))
    b.emit_op(op, Op.MAP, _names(b.operands(op)), (("dimensions", ints(b, op, "dimensions")), ("to_apply", body)))


def _select_and_scatter(b: Builder, op: MlirOp) -> None:
    vals = b.operands(op)
    if len(vals) != 3:
        raise b.mb.error("stablehlo.select_and_scatter takes an operand, a source and an init value", op.pos)
    rank = getattr(vals[0][1], "rank", 0)
    sizes = ints(b, op, "window_dimensions", (1,) * rank)
    n = len(sizes)
    strides, pads = ints(b, op, "window_strides", sizes), pairs(b, op, "padding", n)
    if len(strides) != n:
        raise b.mb.error(f"select_and_scatter attributes need {n} values each", op.pos)
    window = Window(tuple(WindowDim(sizes[k], strides[k], pads[k][0], pads[k][1]) for k in range(n)))
    select = scalar_region(b, op, _region(b, op, 0))
    scatter = scalar_region(b, op, _region(b, op, 1))
    b.emit_op(op, Op.SELECT_AND_SCATTER, _names(vals), (("window", window), ("select", select), ("scatter", scatter)))


def _composite(b: Builder, op: MlirOp) -> None:
    """A call of its decomposition, marked as XLA's converter marks a composite."""
    decomposition = getattr(op.attrs.get("decomposition"), "name", None)
    comp = b.mb.funcs.get(decomposition)
    if comp is None:
        raise b.mb.error(f"stablehlo.composite needs decomposition = @function (got {decomposition})", op.pos)
    name = op.attrs.get("name", "")
    version = integer(b, op, "version", 0)
    fe = Raw("{composite.name=" + quote_string(str(name)) + ",composite.version=" + quote_string(str(version)) + "}")
    b.emit_op(op, Op.CALL, _names(b.operands(op)), (("to_apply", comp), ("is_composite", Raw("true")),
                                                     ("frontend_attributes", fe)))


HANDLERS: dict[str, Callable] = {
    "stablehlo.map": _map,
    "stablehlo.select_and_scatter": _select_and_scatter,
    "stablehlo.composite": _composite,
    "stablehlo.reduce": _reduce,
    "stablehlo.reduce_window": _reduce_window,
    "stablehlo.sort": _sort,
    "stablehlo.scatter": _scatter,
    "stablehlo.while": _while,
    "stablehlo.case": _case,
    "func.call": _call,
    "call": _call,
}

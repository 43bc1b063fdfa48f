"""Tokens, I/O and collectives of StableHLO, lowered as XLA's converter does:
`after_all`/`create_token` are `after-all` (a `token[]`), `infeed` one infeed of a
(data tuple, token) read back with get-tuple-element, `outfeed` the tuple of its inputs,
`send`/`recv` a start and a done instruction; `all_reduce` and `reduce_scatter` turn their
region into `to_apply`; replica groups and source-target pairs print as HLO's nested
lists, a channel handle as `channel_id`.
"""
from __future__ import annotations

from typing import Callable

from ...hlo.dtypes import DTYPES
from ...hlo.ir import Raw
from ...hlo.opcodes import Op
from ...hlo.printer import quote_string
from ...hlo.shape import ArrayShape, Shape, TupleShape
from .attributes import Dense, Struct, Typed
from .builder import Builder
from .dense import dense_values
from .op_more import flag, names
from .op_table import integer
from .regions import scalar_region
from .syntax import Op as MlirOp

TOKEN = ArrayShape(DTYPES["token"], ())
U32 = ArrayShape(DTYPES["u32"], ())


def nested(b: Builder, op: MlirOp, key: str, required: bool = True) -> Raw | None:
    """A rank-2 dense integer attribute as HLO's `{{0,1},{2,3}}`."""
    v = op.attrs.get(key)
    if v is None and not required:
        return None
    if not (isinstance(v, Typed) and isinstance(v.value, Dense) and isinstance(v.shape, ArrayShape)
            and v.shape.rank == 2):
        raise b.mb.error(f"{op.name} needs '{key}' as a rank-2 dense<...> of integers", op.pos)
    rows = dense_values(b.mb.lx, v.value, v.shape).tolist()
    return Raw("{" + ",".join("{" + ",".join(str(int(x)) for x in r) + "}" for r in rows) + "}")


def channel(b: Builder, op: MlirOp) -> list:
    ch = op.attrs.get("channel_handle")
    if ch is None:
        return []
    if not isinstance(ch, Struct):
        raise b.mb.error(f"channel_handle of {op.name} must be #stablehlo.channel_handle<...>", op.pos)
    handle = ch.fields.get("handle", 0)
    if isinstance(handle, bool) or not isinstance(handle, int):
        raise b.mb.error(f"the channel handle of {op.name} must be an integer", op.pos)
    return [("channel_id", handle)] if handle > 0 else []


def _groups(b: Builder, op: MlirOp) -> list:
    attrs = [("replica_groups", nested(b, op, "replica_groups"))] + channel(b, op)
    if flag(b, op, "use_global_device_ids"):
        attrs.append(("use_global_device_ids", True))
    return attrs


def _after_all(b: Builder, op: MlirOp) -> None:
    b.emit_op(op, Op.AFTER_ALL, names(b, op))


def _config(b: Builder, op: MlirOp, key: str) -> list:
    text = op.attrs.get(key, "")
    if not isinstance(text, str):
        raise b.mb.error(f"'{key}' of {op.name} must be a string", op.pos)
    return [(key, Raw(quote_string(text)))] if text else []


def _bind_data(b: Builder, op: MlirOp, data: str, shapes: tuple[Shape, ...], token: str) -> None:
    """Bind the op's results: each data value read from the tuple `data`, then the token."""
    for i, s in enumerate(shapes):
        key = op.results[i]
        b.values[key] = (b.emit(Op.GET_TUPLE_ELEMENT, s, (data,), (("index", i),), pos=op.result_pos,
                                ssa=key[1:].replace("#", ".")), s)
    b.values[op.results[-1]] = (token, TOKEN)


def _infeed(b: Builder, op: MlirOp) -> None:
    shapes = tuple(op.result_types[:-1])
    data = TupleShape(shapes)
    feed = b.emit(Op.INFEED, TupleShape((data, TOKEN)), names(b, op), tuple(_config(b, op, "infeed_config")),
                  pos=op.result_pos, ssa=op.ssa)
    tup = b.emit(Op.GET_TUPLE_ELEMENT, data, (feed,), (("index", 0),), pos=op.result_pos, ssa=op.ssa)
    token = b.emit(Op.GET_TUPLE_ELEMENT, TOKEN, (feed,), (("index", 1),), pos=op.result_pos, ssa=op.ssa)
    _bind_data(b, op, tup, shapes, token)


def _outfeed(b: Builder, op: MlirOp) -> None:
    vals = b.operands(op)
    data = TupleShape(tuple(s for _, s in vals[:-1]))
    tup = b.emit(Op.TUPLE, data, tuple(n for n, _ in vals[:-1]), pos=op.result_pos, ssa=op.ssa)
    attrs = [("outfeed_shape", Raw(data.text()))] + _config(b, op, "outfeed_config")
    b.emit_op(op, Op.OUTFEED, (tup, vals[-1][0]), tuple(attrs))


def _transfer(b: Builder, op: MlirOp) -> list:
    attrs = channel(b, op)
    if flag(b, op, "is_host_transfer"):
        attrs.append(("is_host_transfer", True))
    return attrs


def _send(b: Builder, op: MlirOp) -> None:
    vals = b.operands(op)
    if len(vals) < 2:
        raise b.mb.error("stablehlo.send takes its inputs and a token", op.pos)
    inputs = vals[:-1]
    data, shape = inputs[0] if len(inputs) == 1 else \
        b.tuple_or_one(inputs, op.result_pos, ssa=op.ssa)
    attrs = tuple(_transfer(b, op))
    start = b.emit(Op.SEND, TupleShape((shape, U32, TOKEN)), (data, vals[-1][0]), attrs, pos=op.result_pos, ssa=op.ssa)
    b.emit_op(op, Op.SEND_DONE, (start,), attrs)


def _recv(b: Builder, op: MlirOp) -> None:
    shapes = tuple(op.result_types[:-1])
    data = shapes[0] if len(shapes) == 1 else TupleShape(shapes)
    attrs = tuple(_transfer(b, op))
    start = b.emit(Op.RECV, TupleShape((data, U32, TOKEN)), names(b, op), attrs, pos=op.result_pos, ssa=op.ssa)
    done = b.emit(Op.RECV_DONE, TupleShape((data, TOKEN)), (start,), attrs, pos=op.result_pos, ssa=op.ssa)
    got = b.emit(Op.GET_TUPLE_ELEMENT, data, (done,), (("index", 0),), pos=op.result_pos, ssa=op.ssa)
    token = b.emit(Op.GET_TUPLE_ELEMENT, TOKEN, (done,), (("index", 1),), pos=op.result_pos, ssa=op.ssa)
    if len(shapes) == 1:
        b.values[op.results[0]] = (got, data)
        b.values[op.results[1]] = (token, TOKEN)
    else:
        _bind_data(b, op, got, shapes, token)


def _region_of(b: Builder, op: MlirOp) -> str:
    if not op.regions:
        raise b.mb.error(f"{op.name} needs a region", op.pos)
    return scalar_region(b, op, op.regions[0])


def _all_reduce(b: Builder, op: MlirOp) -> None:
    body = _region_of(b, op)
    b.emit_op(op, Op.ALL_REDUCE, names(b, op), tuple(_groups(b, op) + [("to_apply", body)]))


def _reduce_scatter(b: Builder, op: MlirOp) -> None:
    body = _region_of(b, op)
    attrs = [("dimensions", (integer(b, op, "scatter_dimension"),))] + _groups(b, op) + [("to_apply", body)]
    b.emit_op(op, Op.REDUCE_SCATTER, names(b, op), tuple(attrs))


def _all_gather(b: Builder, op: MlirOp) -> None:
    attrs = [("dimensions", (integer(b, op, "all_gather_dim"),))] + _groups(b, op)
    b.emit_op(op, Op.ALL_GATHER, names(b, op), tuple(attrs))


def _all_to_all(b: Builder, op: MlirOp) -> None:
    """XLA's builder: an all-to-all splitting and concatenating `split_dimension`, then,
    when the concat dimension differs, reshape / transpose / reshape into place."""
    vals = b.operands(op)
    if len(vals) != 1 or not isinstance(vals[0][1], ArrayShape):
        raise b.mb.error("aotc cannot read a stablehlo.all_to_all of several operands yet", op.pos)
    (x, xs), out = vals[0], op.result_types[0]
    split, concat, count = (integer(b, op, k) for k in ("split_dimension", "concat_dimension", "split_count"))
    if not (0 <= split < xs.rank and 0 <= concat < xs.rank and count > 0 and xs.dims[split] % count == 0):
        raise b.mb.error(f"all_to_all dimensions split {split}, concat {concat}, count {count} do not fit {xs}",
                         op.pos)
    attrs = [("dimensions", (split,))] + [a for a in _groups(b, op) if a[0] != "use_global_device_ids"]
    if split == concat:
        b.emit_op(op, Op.ALL_TO_ALL, (x,), tuple(attrs))
        return
    a2a = b.emit(Op.ALL_TO_ALL, xs, (x,), tuple(attrs), pos=op.result_pos, ssa=op.ssa)
    sizes: list[int] = []
    for i, d in enumerate(xs.dims):
        sizes += [count, d // count] if i == split else [d]
    r = b.emit(Op.RESHAPE, ArrayShape(xs.dtype, tuple(sizes)), (a2a,), pos=op.result_pos, ssa=op.ssa)
    perm: list[int] = []
    for i in range(xs.rank):
        if i == concat:
            perm.append(split)
        perm.append(i + 1 if i >= split else i)
    t = b.emit(Op.TRANSPOSE, ArrayShape(xs.dtype, tuple(sizes[p] for p in perm)), (r,), (("dimensions", tuple(perm)),),
               pos=op.result_pos, ssa=op.ssa)
    b.emit_op(op, Op.RESHAPE, (t,), shape=out)


def _collective_permute(b: Builder, op: MlirOp) -> None:
    attrs = [("source_target_pairs", nested(b, op, "source_target_pairs"))] + channel(b, op)
    b.emit_op(op, Op.COLLECTIVE_PERMUTE, names(b, op), tuple(attrs))


def _collective_broadcast(b: Builder, op: MlirOp) -> None:
    b.emit_op(op, Op.COLLECTIVE_BROADCAST, names(b, op), tuple(_groups(b, op)))


HANDLERS: dict[str, Callable] = {
    "stablehlo.after_all": _after_all,
    "stablehlo.create_token": _after_all,
    "stablehlo.infeed": _infeed,
    "stablehlo.outfeed": _outfeed,
    "stablehlo.send": _send,
    "stablehlo.recv": _recv,
    "stablehlo.all_reduce": _all_reduce,
    "stablehlo.reduce_scatter": _reduce_scatter,
    "stablehlo.all_gather": _all_gather,
    "stablehlo.all_to_all": _all_to_all,
    "stablehlo.collective_permute": _collective_permute,
    "stablehlo.collective_broadcast": _collective_broadcast,
}

"""Collectives, asynchronous pairs and the ops that only order or annotate a value, with the
meaning XLA:CPU gives them for one replica and one partition (aotc compiles one program for
one device). Each rule's `expand` gives the plain instructions computing the op there (copies,
tuples, a call, zeros), which lower/expand.py splices in before inlining. A replica group or
source-target pair naming another device raises `Unsupported`: aotc never guesses.
"""
from __future__ import annotations

import re
from math import prod
from typing import Callable

import numpy as np

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction, Literal, Raw
from ..hlo.opcodes import Op
from ..hlo.shape import ArrayShape, Shape, TupleShape
from .rule import OpRule, ShapeError, Unsupported

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

Fresh = Callable[[str], str]

_IOTA = re.compile(r"\[(\d+(?:,\d+)*)\]<=\[\d+(?:,\d+)*\](?:T\(\d+(?:,\d+)*\))?")
_INT = re.compile(r"-?\d+")
_U32 = ArrayShape(DTYPES["u32"], ())


# ------------------------------------------------------------------ devices named


def _raw(instr: Instruction, key: str) -> str | None:
    v = instr.attr(key)
    return None if v is None else (v.text if isinstance(v, Raw) else str(v)).replace(" ", "")


def _devices(text: str) -> set[int]:
    """The device numbers a `replica_groups` value names: `{}` (every device: here the one),
    `{{0}}`, `{{0,1},{2,3}}`, or the iota form `[2,2]<=[4]`."""
    m = _IOTA.fullmatch(text)
    if m is not None:
        return set(range(prod(int(d) for d in m.group(1).split(","))))
    return {int(d) for d in _INT.findall(text)}


def _one_device(instr: Instruction) -> str | None:
    """Why `instr` cannot run on one device (its groups name another), or None."""
    groups = _raw(instr, "replica_groups")
    if groups is not None and _devices(groups) - {0}:
        return (f"replica_groups={groups} names devices other than device 0")
    pairs = _raw(instr, "source_target_pairs")
    if pairs is not None and {int(d) for d in _INT.findall(pairs)} - {0}:
        return f"source_target_pairs={pairs} names devices other than device 0"
    return None


def _check_one_device(instr: Instruction) -> None:
    why = _one_device(instr)
    if why is not None:
        raise Unsupported(f"{instr.opcode} {instr.name}: {why}; aotc compiles a program for one device "
                          "(one replica, one partition)")


def _permutes_to_self(instr: Instruction) -> bool:
    """Whether collective-permute's pairs send device 0's value to device 0 (else it receives
    nothing: zeros, as XLA gives a device no pair targets)."""
    return len(_INT.findall(_raw(instr, "source_target_pairs") or "")) >= 2


# ------------------------------------------------------------------ building blocks


def _copy(instr: Instruction, src: str, shape: Shape, name: str, fresh: Fresh) -> list[Instruction]:
    """`name` = the value of `src` (an array is copied; a tuple rebuilt from its elements)."""
    if isinstance(shape, ArrayShape):
        return [Instruction(name, Op.COPY, shape, (src,), loc=instr.loc)]
    out: list[Instruction] = []
    for k, e in enumerate(shape.elements):
        out.append(Instruction(fresh(f"{name}.{k}"), Op.GET_TUPLE_ELEMENT, e, (src,), (("index", k),), loc=instr.loc))
    out.append(Instruction(name, Op.TUPLE, shape, tuple(i.name for i in out), loc=instr.loc))
    return out


def _zeros(instr: Instruction, shape: Shape, name: str, fresh: Fresh) -> list[Instruction]:
    """`name` = zeros of `shape` (a tuple of zeros for a tuple)."""
    if isinstance(shape, TupleShape):
        out: list[Instruction] = []
        parts = []
        for k, e in enumerate(shape.elements):
            part = _zeros(instr, e, fresh(f"{name}.{k}"), fresh)
            out.extend(part)
            parts.append(part[-1].name)
        return out + [Instruction(name, Op.TUPLE, shape, tuple(parts), loc=instr.loc)]
    if shape.is_token:
        raise Unsupported(f"{instr.opcode} {instr.name}: a token where aotc expected an array")
    scalar = ArrayShape(shape.dtype, ())
    zero = Literal(scalar, np.zeros((), shape.dtype.numpy))
    if not shape.dims:
        return [Instruction(name, Op.CONSTANT, scalar, literal=zero, loc=instr.loc)]
    c = Instruction(fresh(f"{name}.zero"), Op.CONSTANT, scalar, literal=zero, loc=instr.loc)
    return [c, Instruction(name, Op.BROADCAST, shape.with_layout(None), (c.name,), (("dimensions", ()),), loc=instr.loc)]


def _operands_value(instr: Instruction, name: str, shape: Shape, fresh: Fresh) -> list[Instruction]:
    """`name` = the operands themselves: one array operand's value, or the tuple of them."""
    if len(instr.operands) == 1 and not isinstance(shape, TupleShape):
        return _copy(instr, instr.operands[0], shape, name, fresh)
    return [Instruction(name, Op.TUPLE, shape, instr.operands, loc=instr.loc)]


def _element(instr: Instruction, k: int) -> list[Instruction]:
    """`instr` = element k of its operand (the second half of a start/done pair)."""
    return [Instruction(instr.name, Op.GET_TUPLE_ELEMENT, instr.shape, (instr.operands[0],), (("index", k),),
                        loc=instr.loc)]


def _tuple_of(shapes: list[Shape], declared: Shape | None = None) -> Shape:
    """One operand's shape, or the tuple of several (or of one, when `declared` is a tuple)."""
    if len(shapes) == 1 and not isinstance(declared, TupleShape):
        return shapes[0]
    return TupleShape(tuple(shapes))


def _elem(shape: Shape, k: int, what: str) -> Shape:
    if not isinstance(shape, TupleShape) or len(shape.elements) <= k:
        raise ShapeError(f"{what} needs a tuple operand with an element {k}, got {shape}")
    return shape.elements[k]


# ------------------------------------------------------------------ the ops


def _same_as_operands(instr: Instruction, shapes: list[Shape]) -> Shape:
    """All-reduce, all-gather, reduce-scatter, all-to-all, collective-broadcast and
    collective-permute with one participant: each result is its operand's shape. Groups naming
    other devices keep the declared shape (lowering refuses them with their reason)."""
    if not shapes:
        raise ShapeError(f"{instr.opcode} needs an operand")
    if _one_device(instr) or (len(shapes) == 1 and shapes[0].same_logical(instr.shape)):
        return instr.shape  # (one operand that is itself a tuple: its value)
    want = _tuple_of(shapes, instr.shape)
    if not want.same_logical(instr.shape):
        raise ShapeError(f"{instr.opcode} on one device gives {want.text(False)}, not {instr.shape.text(False)} "
                         "(a module built for several devices; aotc compiles for one)")
    return want


def _all_to_all_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if isinstance(instr.shape, TupleShape) and len(shapes) != 1 and not _one_device(instr):
        raise ShapeError(f"all-to-all's tuple form takes one operand per device of its group (one here), "
                         f"not {len(shapes)}")
    return _same_as_operands(instr, shapes)


def _expand_same(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
    _check_one_device(instr)
    if len(shapes) == 1 and shapes[0].same_logical(instr.shape):  # an array, or one tuple operand
        return _copy(instr, instr.operands[0], shapes[0], instr.name, fresh)
    return _operands_value(instr, instr.name, instr.shape, fresh)


def _expand_permute(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
    _check_one_device(instr)
    if len(instr.operands) != 1:
        raise Unsupported(f"collective-permute {instr.name}: the form with {len(instr.operands)} operands "
                          "is not supported (one operand is)")
    if _permutes_to_self(instr):
        return _copy(instr, instr.operands[0], instr.shape, instr.name, fresh)
    return _zeros(instr, instr.shape, instr.name, fresh)


_KINDS = (Op.ADD, Op.MULTIPLY, Op.MAXIMUM, Op.MINIMUM, Op.AND, Op.OR, Op.XOR)


def _reduction_kind(instr: Instruction, fresh: Fresh) -> Op | None:
    """The reduction XLA:CPU recognizes in `to_apply` (a binary op of its two parameters)."""
    comp = fresh.computation(instr.attr("to_apply"))
    params = [p.name for p in comp.parameters]
    root = comp.root_instruction
    if len(params) == 2 and root.opcode in _KINDS and sorted(root.operands) == sorted(params):
        return root.opcode
    return None


def _expand_reduce_scatter(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
    """XLA:CPU's reduce-scatter folds the one participant's value into the reduction's identity
    (`0 + x`, `1 * x`, `std::max(-inf, x)`, ...), so on floats it is not quite a copy: 0 + -0
    is +0, subnormals flush, and max / min over a NaN give the identity (-inf / +inf)."""
    _check_one_device(instr)
    if len(instr.operands) != 1 or not isinstance(instr.shape, ArrayShape):
        raise Unsupported(f"reduce-scatter {instr.name}: the form with several operands is not supported")
    kind = _reduction_kind(instr, fresh)
    if kind is None:
        raise Unsupported(f"reduce-scatter {instr.name}: to_apply={instr.attr('to_apply')} is not a reduction "
                          "XLA:CPU runs (add, multiply, maximum, minimum, and, or, xor of its two parameters)")
    shape, x = instr.shape, instr.operands[0]
    if shape.dtype.kind not in ("float", "complex"):  # integers: the identity op x is x
        return _copy(instr, x, shape, instr.name, fresh)
    if kind not in (Op.ADD, Op.MULTIPLY, Op.MAXIMUM, Op.MINIMUM) or (shape.dtype.is_narrow_float and kind != Op.ADD):
        raise Unsupported(f"reduce-scatter {instr.name}: {kind} of {shape.dtype} values")
    if shape.dtype.name == "f8e8m0fnu":  # no zero to add: XLA:CPU gives the value itself
        return _copy(instr, x, shape, instr.name, fresh)
    scalar = ArrayShape(shape.dtype, ())

    def splat(value: float, what: str) -> list[Instruction]:
        c = Instruction(fresh(f"{instr.name}.{what}.scalar"), Op.CONSTANT, scalar,
                        literal=Literal(scalar, np.array(value, shape.dtype.numpy)), loc=instr.loc)
        return [c, Instruction(fresh(f"{instr.name}.{what}"), Op.BROADCAST, shape.with_layout(None), (c.name,),
                               (("dimensions", ()),), loc=instr.loc)]

    if kind == Op.ADD:  # 0 + x: +0 for -0, a subnormal flushed (FTZ), as XLA:CPU gives
        zero = splat(0.0, "zero")
        return [*zero, Instruction(instr.name, Op.ADD, shape, (zero[-1].name, x), loc=instr.loc)]
    if shape.dtype.kind == "complex":
        raise Unsupported(f"reduce-scatter {instr.name}: {kind} of {shape.dtype} values")
    # 1 * x is x with a subnormal flushed (DAZ); written as a select, since a C compiler may
    # fold a multiplication by one away
    if kind == Op.MULTIPLY:
        return _flushed(instr, x, shape, splat, fresh, instr.name)
    flushed = _flushed(instr, x, shape, splat, fresh, fresh(f"{instr.name}.flushed"))
    # std::max(init, x) is `init < x ? x : init`, std::min(init, x) is `x < init ? x : init`
    # (maxss / minss: the x taken is flushed)
    fx = flushed[-1].name
    init = splat(-np.inf if kind == Op.MAXIMUM else np.inf, "identity")
    lhs, rhs = (init[-1].name, x) if kind == Op.MAXIMUM else (x, init[-1].name)
    pred = ArrayShape(DTYPES["pred"], shape.dims)
    k = Instruction(fresh(f"{instr.name}.takes"), Op.COMPARE, pred, (lhs, rhs), (("direction", "LT"),), loc=instr.loc)
    return [*flushed, *init, k, Instruction(instr.name, Op.SELECT, shape, (k.name, fx, init[-1].name), loc=instr.loc)]


def _flushed(instr: Instruction, x: str, shape: ArrayShape, splat, fresh: Fresh, name: str) -> list[Instruction]:
    """x with a subnormal (of the type XLA:CPU computes it in: f32 for bf16, f16 has none
    there) read as a zero of its sign: `|x| < smallest normal ? x * 0 : x`, named `name`."""
    if shape.dtype.name == "f16":
        return _copy(instr, x, shape, name, fresh)
    tiny = float(np.finfo(np.float64 if shape.dtype.name == "f64" else np.float32).tiny)
    zero, limit = splat(0.0, "zero"), splat(tiny, "smallest_normal")
    pred = ArrayShape(DTYPES["pred"], shape.dims)
    a = Instruction(fresh(f"{instr.name}.abs"), Op.ABS, shape, (x,), loc=instr.loc)
    k = Instruction(fresh(f"{instr.name}.subnormal"), Op.COMPARE, pred, (a.name, limit[-1].name),
                    (("direction", "LT"),), loc=instr.loc)
    z = Instruction(fresh(f"{instr.name}.signed_zero"), Op.MULTIPLY, shape, (x, zero[-1].name), loc=instr.loc)
    return [*zero, *limit, a, k, z, Instruction(name, Op.SELECT, shape, (k.name, z.name, x), loc=instr.loc)]


def _id_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if instr.shape != _U32:
        raise ShapeError(f"{instr.opcode} gives u32[], not {instr.shape}")
    return _U32


def _expand_id(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
    return _zeros(instr, _U32, instr.name, fresh)  # the one replica and partition are number 0


def _identity_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if not shapes:
        raise ShapeError(f"{instr.opcode} needs an operand")
    return shapes[0]


def _expand_identity(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
    """all-reduce-done, async-update, domain: the value of operand 0."""
    return _copy(instr, instr.operands[0], shapes[0], instr.name, fresh)


# all-gather-start: (operand, output), or ((operands), (outputs)) for several
def _gather_start_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if _one_device(instr):
        return instr.shape
    v = _tuple_of(shapes)
    return TupleShape((v, v))


def _expand_gather_start(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
    _check_one_device(instr)
    if len(instr.operands) == 1:
        v = instr.operands[0]
        return [Instruction(instr.name, Op.TUPLE, instr.shape, (v, v), loc=instr.loc)]
    t = fresh(f"{instr.name}.operands")
    return [Instruction(t, Op.TUPLE, TupleShape(tuple(shapes)), instr.operands, loc=instr.loc),
            Instruction(instr.name, Op.TUPLE, instr.shape, (t, t), loc=instr.loc)]


# collective-permute-start: (operand, output, contexts...)
def _permute_start_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) == 1 and not _one_device(instr):
        out = instr.shape
        if not isinstance(out, TupleShape) or len(out.elements) < 2 or any(
                not e.same_logical(shapes[0]) for e in out.elements[:2]):
            raise ShapeError(f"collective-permute-start of {shapes[0]} gives ({shapes[0]}, {shapes[0]}, ...), "
                             f"not {out}")
    return instr.shape


def _expand_permute_start(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
    _check_one_device(instr)
    if len(instr.operands) != 1:
        raise Unsupported(f"collective-permute-start {instr.name}: the form with {len(instr.operands)} "
                          "operands is not supported (one operand is)")
    return _start_tuple(instr, (instr.operands[0],), shapes[0], _expand_permute, shapes, fresh)


def _start_tuple(instr, head: tuple[str, ...], out_shape: Shape, value, shapes, fresh: Fresh) -> list[Instruction]:
    """(head..., value, zero contexts...) named instr.name; `value(v, shapes, fresh)` builds the
    result element from an instruction `v` standing for the plain op."""
    elements = instr.shape.elements
    v = fresh(f"{instr.name}.value")
    plain = instr.with_(name=v, shape=out_shape)
    out = list(value(plain, shapes, fresh))
    names = [*head, v]
    for k, ctx in enumerate(elements[len(names):]):
        part = _zeros(instr, ctx, fresh(f"{instr.name}.context{k}"), fresh)
        out.extend(part)
        names.append(part[-1].name)
    out.append(Instruction(instr.name, Op.TUPLE, instr.shape, tuple(names), loc=instr.loc))
    return out


# copy-start: (destination, source, context)
def _copy_start_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    out = instr.shape
    if not isinstance(out, TupleShape) or len(out.elements) < 2 or any(
            not e.same_logical(shapes[0]) for e in out.elements[:2]):
        raise ShapeError(f"copy-start of {shapes[0]} gives ({shapes[0]}, {shapes[0]}, u32[]), not {out}")
    return out


def _expand_copy_start(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
    src = instr.operands[0]
    names = [src, src]
    out: list[Instruction] = []
    for k, ctx in enumerate(instr.shape.elements[2:]):
        part = _zeros(instr, ctx, fresh(f"{instr.name}.context{k}"), fresh)
        out.extend(part)
        names.append(part[-1].name)
    return out + [Instruction(instr.name, Op.TUPLE, instr.shape, tuple(names), loc=instr.loc)]


# async-start: ((operands), output, contexts...), its computation `calls`
def _async_start_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    out = instr.shape
    if not isinstance(out, TupleShape) or len(out.elements) < 2 or not out.elements[0].same_logical(
            TupleShape(tuple(shapes))):
        raise ShapeError(f"async-start gives ((operand shapes), output, contexts...), not {out}")
    return out


def _expand_async_start(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
    ops = fresh(f"{instr.name}.operands")
    out = [Instruction(ops, Op.TUPLE, instr.shape.elements[0], instr.operands, loc=instr.loc)]

    def call(plain: Instruction, _shapes, _fresh) -> list[Instruction]:
        return [Instruction(plain.name, Op.CALL, plain.shape, instr.operands, (("to_apply", instr.attr("calls")),),
                            loc=instr.loc)]

    return out + _start_tuple(instr, (ops,), instr.shape.elements[1], call, shapes, fresh)


def _done_shape(k: int) -> Callable[[Instruction, list[Shape]], Shape]:
    def shape(instr: Instruction, shapes: list[Shape]) -> Shape:
        return _elem(shapes[0], k, str(instr.opcode))
    return shape


def _expand_done(k: int) -> Callable:
    def expand(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
        return _element(instr, k)
    return expand


for _op in ("all-reduce", "all-reduce-start", "all-gather", "collective-broadcast"):
    RULES.append(OpRule(_op, shape=_same_as_operands, structural=True, expand=_expand_same))
RULES.append(OpRule("all-to-all", shape=_all_to_all_shape, structural=True, expand=_expand_same))
RULES.append(OpRule("reduce-scatter", shape=_same_as_operands, structural=True, expand=_expand_reduce_scatter))
RULES.append(OpRule("collective-permute", shape=_same_as_operands, structural=True, expand=_expand_permute))
for _op in ("replica-id", "partition-id"):
    RULES.append(OpRule(_op, shape=_id_shape, structural=True, expand=_expand_id))
for _op in ("all-reduce-done", "async-update", "domain"):
    RULES.append(OpRule(_op, shape=_identity_shape, structural=True, expand=_expand_identity))
RULES.append(OpRule("all-gather-start", shape=_gather_start_shape, structural=True, expand=_expand_gather_start))
RULES.append(OpRule("collective-permute-start", shape=_permute_start_shape, structural=True,
                    expand=_expand_permute_start))
RULES.append(OpRule("copy-start", shape=_copy_start_shape, structural=True, expand=_expand_copy_start))
RULES.append(OpRule("async-start", shape=_async_start_shape, structural=True, expand=_expand_async_start))
for _op, _k in (("all-gather-done", 1), ("collective-permute-done", 1), ("copy-done", 0), ("async-done", 1)):
    RULES.append(OpRule(_op, shape=_done_shape(_k), structural=True, expand=_expand_done(_k)))


# ------------------------------------------------------------------ sharding markers (custom calls)


def _marker_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) != 1:
        raise ShapeError(f"custom-call {instr.attr('custom_call_target')} takes one operand")
    return instr.shape


def _expand_marker(instr: Instruction, shapes: list[Shape], fresh: Fresh) -> list[Instruction]:
    """Sharding annotations and the SPMD partitioner's shape changes: on one device the shard
    is the whole value."""
    if not instr.shape.same_logical(shapes[0]):
        raise Unsupported(f"custom-call {instr.attr('custom_call_target')} {instr.name}: the shard shape "
                          f"{instr.shape.text(False)} differs from the full shape {shapes[0].text(False)}, so the "
                          "module is partitioned for several devices; aotc compiles for one device")
    return _copy(instr, instr.operands[0], shapes[0], instr.name, fresh)


for _target in ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"):
    RULES.append(OpRule("custom-call", shape=_marker_shape, expand=_expand_marker, target=_target))

"""Ops that talk to the application: infeed, outfeed, send/recv (and their -done halves),
custom calls the application implements (the C ABI of docs/custom_calls.md), and the
token ops that order them (after-all, add-dependency). Each kernel is one call of a
wrapper (kernel/host.py's `HostCall`, printed by emit_c/host.py); token values carry no
data. These ops act: they carry the SIDE_EFFECT trait, so lowering neither drops nor
reorders them. Writes no C.
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import located
from ..hlo.ir import Instruction, Raw
from ..hlo.shape import ArrayShape, Shape, TupleShape
from ..kernel import host as H
from ..kernel import ir as K
from ..frontend.lexer import unquote
from .rule import CHEAP, IDENTITY, KEEPS_INDEX, SAME_ELEMENTS, SIDE_EFFECT, OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

_EFFECT = frozenset({SIDE_EFFECT})

# JAX's Python host callbacks (jax.pure_callback, io_callback, jax.debug.print/callback)
PYTHON_CALLBACKS = ("xla_python_cpu_callback", "xla_ffi_python_cpu_callback", "xla_python_gpu_callback",
                    "xla_ffi_python_gpu_callback", "xla_ffi_partitioned_python_cpu_callback")


def _is_token(s: Shape) -> bool:
    return isinstance(s, ArrayShape) and s.is_token


def _token(instr: Instruction, shapes: list[Shape]) -> Shape:
    if not all(_is_token(s) for s in shapes):
        raise ShapeError(f"{instr.opcode} takes tokens only")
    return instr.shape


def _declared_with_token(*token_operands: int):
    def shape(instr: Instruction, shapes: list[Shape]) -> Shape:
        for k in token_operands:
            if k >= len(shapes) or not _is_token(shapes[k]):
                raise ShapeError(f"operand {k} of {instr.opcode} must be a token")
        return instr.shape
    return shape


def _add_dependency(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) != 2 or not _is_token(shapes[1]) or not isinstance(shapes[0], ArrayShape):
        raise ShapeError("add-dependency takes an array and a token")
    return shapes[0]


def _add_dependency_elem(kb, instr: Instruction, idx):
    """The value, unchanged: the ordering it asks for is kept by running every op in program order."""
    return kb.operand(instr, 0, idx)


def _data(bufs: list[K.Buf]) -> list[K.Buf]:
    """The buffers that hold data (token values have none)."""
    return [b for b in bufs if b.dtype.kind != "token"]


def _shape_of(b: K.Buf) -> tuple:
    return (b.dtype, tuple(b.dims))


def _call(kb, spec: H.HostCall, reads: list[K.Buf], writes: list[K.Buf]) -> None:
    cname = kb.host_call(spec)
    kb.emit(K.CallStmt(cname, tuple(K.Ptr(b) for b in reads + writes)))


def _check_types(instr: Instruction, bufs: list[K.Buf]) -> None:
    for b in bufs:
        if b.dtype.name not in H.TYPE_NUMBERS:
            raise located(f"{instr.opcode} {instr.name}: aotc cannot pass {b.dtype.name} values to the "
                          "application (see docs/custom_calls.md for the element types it can)", instr.loc)


def _spec(kb, instr: Instruction, kind: str, reads: list[K.Buf], writes: list[K.Buf], **kw) -> H.HostCall:
    _check_types(instr, reads + writes)
    return H.HostCall("", kind, instr.name, tuple(map(_shape_of, reads)), tuple(map(_shape_of, writes)), **kw)


# ---------------------------------------------------------------- infeed / outfeed

def _infeed_kernel(kb, instr: Instruction, outs) -> None:
    writes = _data(list(outs))
    _call(kb, _spec(kb, instr, H.INFEED, [], writes), [], writes)


def _outfeed_kernel(kb, instr: Instruction, outs) -> None:
    reads = _data(kb.leaves(instr.operands[0]))
    _call(kb, _spec(kb, instr, H.OUTFEED, reads, []), reads, [])


def _channel(instr: Instruction) -> int:
    ch = instr.attr("channel_id")
    if ch is None:
        raise located(f"{instr.opcode} {instr.name} has no channel_id", instr.loc)
    return int(ch)


def _send_kernel(kb, instr: Instruction, outs) -> None:
    reads = _data(kb.leaves(instr.operands[0]))
    _call(kb, _spec(kb, instr, H.SEND, reads, [], channel=_channel(instr)), reads, [])
    _pass_on(kb, reads, list(outs))


def _recv_kernel(kb, instr: Instruction, outs) -> None:
    writes = _data(list(outs))[:-1]  # the data; the last array is the u32[] context
    _call(kb, _spec(kb, instr, H.RECV, [], writes, channel=_channel(instr)), [], writes)
    _zero_context(kb, list(outs))


def _pass_on(kb, data: list[K.Buf], outs: list[K.Buf]) -> None:
    """send's result (data, u32[] context, token): the data as sent, context 0."""
    for src, dst in zip(data, outs):
        if src.dtype.nbytes and src.size:
            kb.emit(K.CallStmt("memcpy", (K.Ptr(dst), K.Ptr(src), K.Const(src.size * src.dtype.nbytes))))
    _zero_context(kb, outs)


def _zero_context(kb, outs: list[K.Buf]) -> None:
    ctx = _data(outs)[-1]
    kb.emit(K.Store(ctx, K.Const(0), K.Const(0, ctx.dtype)))


def _recv_done_kernel(kb, instr: Instruction, outs) -> None:
    """The data recv received (recv's leaves but its context and token)."""
    src = _data(kb.leaves(instr.operands[0]))[:-1]
    for s, d in zip(src, _data(list(outs))):
        if s.dtype.nbytes and s.size:
            kb.emit(K.CallStmt("memcpy", (K.Ptr(d), K.Ptr(s), K.Const(s.size * s.dtype.nbytes))))


def _token_kernel(kb, instr: Instruction, outs) -> None:
    kb.emit(K.Comment(f"{instr.opcode}: a token, no data"))


def _send_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    s = instr.shape
    if (len(shapes) != 2 or not _is_token(shapes[1]) or not isinstance(s, TupleShape) or len(s.elements) != 3
            or not s.elements[0].same_logical(shapes[0])):
        raise ShapeError("send takes (data, token) and gives (data, u32[], token)")
    return s


def _recv_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    s = instr.shape
    if (len(shapes) != 1 or not _is_token(shapes[0]) or not isinstance(s, TupleShape) or len(s.elements) != 3
            or not _is_token(s.elements[2])):
        raise ShapeError("recv takes a token and gives (data, u32[], token)")
    return s


def _infeed_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    s = instr.shape
    if (len(shapes) != 1 or not _is_token(shapes[0]) or not isinstance(s, TupleShape) or len(s.elements) != 2
            or not _is_token(s.elements[1])):
        raise ShapeError("infeed takes a token and gives (data, token)")
    return s


RULES.append(OpRule("after-all", shape=_token, kernel=_token_kernel, traits=_EFFECT))
RULES.append(OpRule("add-dependency", shape=_add_dependency, elemental=_add_dependency_elem,
                    traits=frozenset({CHEAP, KEEPS_INDEX, IDENTITY, SAME_ELEMENTS})))
RULES.append(OpRule("infeed", shape=_infeed_shape, kernel=_infeed_kernel, buffered_operands=True, traits=_EFFECT))
RULES.append(OpRule("outfeed", shape=_declared_with_token(1), kernel=_outfeed_kernel, buffered_operands=True,
                    traits=_EFFECT))
RULES.append(OpRule("send", shape=_send_shape, kernel=_send_kernel, buffered_operands=True, traits=_EFFECT))
RULES.append(OpRule("send-done", shape=_declared_with_token(), kernel=_token_kernel, traits=_EFFECT))
RULES.append(OpRule("recv", shape=_recv_shape, kernel=_recv_kernel, buffered_operands=True, traits=_EFFECT))
RULES.append(OpRule("recv-done", shape=_declared_with_token(), kernel=_recv_done_kernel, buffered_operands=True,
                    traits=_EFFECT))


# ---------------------------------------------------------------- custom calls the application implements

def user_custom_call_kernel(kb, instr: Instruction, outs) -> None:
    """A custom call whose target the application implements (CompileOptions.custom_calls)."""
    if isinstance(instr.shape, TupleShape) and any(isinstance(e, TupleShape) for e in instr.shape.elements):
        raise located(f"custom-call {instr.name}: aotc cannot pass results nested in tuples to the application "
                      "(docs/custom_calls.md)", instr.loc)
    reads = [b for o in instr.operands for b in _data(kb.leaves(o))]
    writes = _data(list(outs))
    config, attrs = backend_config(instr)
    target = instr.attr("custom_call_target")
    spec = _spec(kb, instr, H.CUSTOM_CALL, reads, writes, target=target, function=kb.custom_call_function(target),
                 config=config, attrs=attrs)
    _call(kb, spec, reads, writes)


def user_custom_call_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    """As declared: the application computes it (what it cannot pass is refused when lowered)."""
    return instr.shape


# attribute := NAME '=' value [':' TYPE]
_ATTR = re.compile(r"""\s*([A-Za-z_][\w.$-]*|"(?:[^"\\]|\\.)*")\s*=\s*
                       ("(?:[^"\\]|\\.)*"|true|false|[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|inf|nan))
                       \s*(?::\s*([A-Za-z][\w]*))?\s*(,|$)""", re.X)
_INT_TYPE = re.compile(r"(?:i|si|ui)(\d+)$")
_FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


def backend_config(instr: Instruction) -> tuple[str, tuple[H.Attr, ...]]:
    """(the string config, the typed attributes) of a custom call: a quoted backend_config is
    the string; a dictionary `{k = v : type, ...}` (typed FFI) the attributes, in order."""
    raw = instr.attr("backend_config")
    text = raw.text.strip() if isinstance(raw, Raw) else ("" if raw is None else str(raw))
    if text.startswith('"'):
        return unquote(text), ()
    if not text.startswith("{"):
        return text, ()
    body = text[1:-1].strip() if text.endswith("}") else None
    if body is None:
        raise located(f"custom-call {instr.name}: backend_config is not a dictionary", instr.loc)
    out: list[H.Attr] = []
    pos = 0
    while pos < len(body):
        m = _ATTR.match(body, pos)
        if m is None:
            raise located(f"custom-call {instr.name}: aotc reads backend_config attributes that are integers, "
                          f"floats, booleans or strings; it cannot read '{body[pos:].strip()[:40]}' "
                          "(docs/custom_calls.md)", instr.loc)
        out.append(_attr(instr, m.group(1), m.group(2), m.group(3) or ""))
        pos = m.end()
    names = [a.name for a in out]
    if len(set(names)) != len(names):
        raise located(f"custom-call {instr.name}: backend_config names an attribute twice", instr.loc)
    return "", tuple(out)


def _attr(instr: Instruction, name: str, value: str, ty: str) -> H.Attr:
    name = unquote(name) if name.startswith('"') else name
    if value.startswith('"'):
        return H.Attr(name, H.ATTR_STR, unquote(value))
    if value in ("true", "false"):
        return H.Attr(name, H.ATTR_BOOL, value == "true", ty)
    if ty in _FLOAT_TYPES:  # the value of its type (as XLA's FFI decodes it), widened to double
        v = float(value)
        if ty in ("f32", "f16"):
            v = float(np.asarray(v, np.float32 if ty == "f32" else np.float16))
        return H.Attr(name, H.ATTR_F64, v, ty)
    if ty == "" and re.fullmatch(r"[-+]?\d+|0x[0-9a-fA-F]+", value):
        ty = "i64"  # MLIR's default integer type
    m = _INT_TYPE.match(ty)
    if m is None:
        raise located(f"custom-call {instr.name}: attribute '{name}' has type '{ty or 'f64'}', which aotc "
                      "does not pass (integers, f16/bf16/f32/f64, booleans, strings)", instr.loc)
    try:
        v = int(value, 0)
    except ValueError:
        raise located(f"custom-call {instr.name}: attribute '{name}' = {value} is not an integer", instr.loc) from None
    bits, unsigned = int(m.group(1)), ty.startswith("ui")
    lo, hi = (0, 2 ** bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if bits > 64 or not lo <= v <= hi or (unsigned and v > 2 ** 63 - 1):
        raise located(f"custom-call {instr.name}: attribute '{name}' = {value} does not fit {ty} "
                      "(aotc passes integers as 64-bit signed ones)", instr.loc)
    return H.Attr(name, H.ATTR_I64, v, ty)

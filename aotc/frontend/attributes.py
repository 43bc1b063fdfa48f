"""Instruction attributes: which keys have typed values, and their decoders.

`decode_attribute` reads one value at the cursor: int lists, ints, bools,
identifiers, computation references, slices, paddings, windows and dim labels
become the typed values of `aotc.hlo.ir`; every other key stays `Raw` text,
verbatim. Whether an attribute makes sense for its opcode is not decided here.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from ..hlo.ir import (
    COMPUTATION_ATTRS,
    COMPUTATION_LIST_ATTRS,
    DimLabels,
    PadDim,
    Raw,
    SliceDim,
    Window,
    WindowDim,
)
from .lexer import Lexer, char_name, describe, unquote

INT_LIST_ATTRS = frozenset(
    "dimensions lhs_batch_dims lhs_contracting_dims rhs_batch_dims rhs_contracting_dims offset_dims "
    "collapsed_slice_dims start_index_map operand_batching_dims start_indices_batching_dims slice_sizes "
    "update_window_dims inserted_window_dims scatter_dims_to_operand_dims input_batching_dims "
    "scatter_indices_batching_dims dynamic_slice_sizes fft_length".split()
)
INT_ATTRS = frozenset(
    "index iota_dimension index_vector_dim feature_group_count batch_group_count k exponent_bits "
    "mantissa_bits feature_index channel_id".split()
)
BOOL_ATTRS = frozenset(
    "is_stable indices_are_sorted unique_indices largest lower left_side unit_diagonal use_global_device_ids "
    "custom_call_has_side_effect is_host_transfer".split()
)
STRING_ATTRS = frozenset(
    "direction type kind fft_type algorithm custom_call_target api_version distribution transpose_a".split()
)
_CHOICES = {
    "direction": ("EQ", "NE", "LT", "LE", "GT", "GE"),
    "type": ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "PARTIALORDER"),
}

_AFTER_VALUE = re.compile(r"(?=[\s,}]|/[*/]|\Z)")
_PAD_DIM = re.compile(r"(-?\d+)_(-?\d+)(?:_(-?\d+))?")
_X = re.compile(r"x")
_WINDOW_KEY = re.compile(r"([A-Za-z_]+)=")
_WINDOW_INTS = re.compile(r"-?\d+(?:x-?\d+)*")
_WINDOW_PADS = re.compile(r"-?\d+_-?\d+(?:x-?\d+_-?\d+)*")
_WINDOW_FIELDS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")
_DIM_LABELS = re.compile(r"([0-9a-z?]+)_([0-9a-z?]+)->([0-9a-z?]+)")


def decode_attribute(lx: Lexer, key: str) -> Any:
    """attribute_value := <typed by key> | raw, read at the cursor."""
    decoder = _DECODERS.get(key)
    if decoder is None:
        return Raw(lx.raw_value()[0])
    if key == "padding" and _AFTER_VALUE.match(lx.text, lx.pos):
        return ()  # a rank-0 pad prints an empty padding
    lx.skip()
    value = decoder(lx, key)
    if _AFTER_VALUE.match(lx.text, lx.pos) is None:
        raise lx.error(f"unexpected {char_name(lx.text[lx.pos])} after the value of '{key}'", lx.pos)
    return value


# int_list := '{' [INT (',' INT)*] '}'
def _int_list(lx: Lexer, key: str) -> tuple[int, ...]:
    lx.expect("{", f"to start '{key}'")
    out: list[int] = []
    if not lx.accept("}"):
        while True:
            out.append(lx.expect_int(f"an integer in '{key}'")[0])
            if lx.accept("}"):
                break
            lx.expect(",", f"or '}}' in '{key}'")
    return tuple(out)


# int := INT
def _int(lx: Lexer, key: str) -> int:
    return lx.expect_int(f"an integer value for '{key}'")[0]


# bool := 'true' | 'false'
def _bool(lx: Lexer, key: str) -> bool:
    tok = lx.peek()
    if tok.text not in ("true", "false") or tok.kind != "name":
        raise lx.error(f"expected true or false for '{key}', found {describe(tok)}", tok.pos)
    lx.next()
    return tok.text == "true"


# string := NAME | STRING | NUM
def _string(lx: Lexer, key: str) -> str:
    tok = lx.peek()
    if tok.kind not in ("name", "string", "num"):
        raise lx.error(f"expected a name or string for '{key}', found {describe(tok)}", tok.pos)
    lx.next()
    value = unquote(tok.text) if tok.kind == "string" else tok.text
    choices = _CHOICES.get(key)
    if choices and value not in choices:
        raise lx.error(f"unknown {key} {describe(tok)} (expected one of {', '.join(choices)})", tok.pos)
    return value


# computation := NAME
def _computation(lx: Lexer, key: str) -> str:
    tok = lx.expect_kind("name", f"a computation name for '{key}'")
    return tok.text.lstrip("%")


# computation_list := '{' [NAME (',' NAME)*] '}'
def _computation_list(lx: Lexer, key: str) -> tuple[str, ...]:
    lx.expect("{", f"to start '{key}'")
    out: list[str] = []
    if not lx.accept("}"):
        while True:
            out.append(_computation(lx, key))
            if lx.accept("}"):
                break
            lx.expect(",", f"or '}}' in '{key}'")
    return tuple(out)


# slice := '{' [slice_dim (',' slice_dim)*] '}' ; slice_dim := '[' INT ':' INT [':' INT] ']'
def _slice(lx: Lexer, key: str) -> tuple[SliceDim, ...]:
    lx.expect("{", "to start 'slice'")
    out: list[SliceDim] = []
    if not lx.accept("}"):
        while True:
            lx.expect("[", "to start a slice dimension")
            start = lx.expect_int("the slice start")[0]
            lx.expect(":", "after the slice start")
            limit = lx.expect_int("the slice limit")[0]
            stride = 1
            if lx.accept(":"):
                stride = lx.expect_int("the slice stride")[0]
            lx.expect("]", "to close a slice dimension")
            out.append(SliceDim(start, limit, stride))
            if lx.accept("}"):
                break
            lx.expect(",", "or '}' in 'slice'")
    return tuple(out)


# padding := [pad_dim ('x' pad_dim)*] ; pad_dim := INT '_' INT ['_' INT]
def _padding(lx: Lexer, key: str) -> tuple[PadDim, ...]:
    out: list[PadDim] = []
    while True:
        m = lx.take(_PAD_DIM)
        if m is None:
            raise lx.error("expected a padding dimension low_high or low_high_interior", lx.pos)
        lo, hi, interior = (lx.to_int(g, m.start()) for g in m.groups(default="0"))
        out.append(PadDim(lo, hi, interior))
        if lx.take(_X) is None:
            break
    if _AFTER_VALUE.match(lx.text, lx.pos) is None:
        raise lx.error(f"expected 'x' or the end of the padding, found {char_name(lx.text[lx.pos])}", lx.pos)
    return tuple(out)


# window := '{' (field '=' value)* '}' ; field := size | stride | pad | lhs_dilate | rhs_dilate | rhs_reversal
def _window(lx: Lexer, key: str) -> Window:
    lx.expect("{", "to start 'window'")
    fields: dict[str, list] = {}
    where: dict[str, int] = {}
    while not lx.accept("}"):
        lx.skip()
        at = lx.pos
        m = lx.take(_WINDOW_KEY)
        if m is None:
            raise lx.error(f"expected a window field or '}}', found {describe(lx.peek())}", lx.peek().pos)
        name = m.group(1)
        if name not in _WINDOW_FIELDS:
            raise lx.error(f"unknown window field '{name}'", at)
        if name in fields:
            raise lx.error(f"duplicate window field '{name}'", at)
        vm = lx.take(_WINDOW_PADS if name == "pad" else _WINDOW_INTS)
        if vm is None or _AFTER_VALUE.match(lx.text, lx.pos) is None:
            form = "low_high, 'x'-separated" if name == "pad" else "integers separated by 'x'"
            raise lx.error(f"malformed window {name}: expected {form}", lx.pos)
        parts = [[lx.to_int(v, vm.start()) for v in p.split("_")] for p in vm.group().split("x")]
        fields[name] = [tuple(p) for p in parts] if name == "pad" else [p[0] for p in parts]
        where[name] = at
    if not fields:
        return Window(())
    if "size" not in fields:
        raise lx.error("window has no 'size'", min(where.values()))
    rank = len(fields["size"])
    for name, values in fields.items():
        if len(values) != rank:
            plural = "" if len(values) == 1 else "s"
            raise lx.error(f"window {name} has {len(values)} dimension{plural}, size has {rank}", where[name])
    if any(v not in (0, 1) for v in fields.get("rhs_reversal", ())):
        raise lx.error("window rhs_reversal values must be 0 or 1", where["rhs_reversal"])
    dims = []
    for d in range(rank):
        pad = fields.get("pad", [(0, 0)] * rank)[d]
        dims.append(
            WindowDim(
                size=fields["size"][d],
                stride=fields.get("stride", [1] * rank)[d],
                pad_lo=pad[0],
                pad_hi=pad[1],
                lhs_dilate=fields.get("lhs_dilate", [1] * rank)[d],
                rhs_dilate=fields.get("rhs_dilate", [1] * rank)[d],
                reversal=bool(fields.get("rhs_reversal", [0] * rank)[d]),
            )
        )
    return Window(tuple(dims))


# dim_labels := LABELS '_' LABELS '->' LABELS
def _dim_labels(lx: Lexer, key: str) -> DimLabels:
    at = lx.pos
    m = lx.take(_DIM_LABELS)
    if m is None or _AFTER_VALUE.match(lx.text, lx.pos) is None:
        raise lx.error("malformed dim_labels: expected the form b01f_01io->b01f", at)
    lhs, rhs, out = m.groups()
    for labels, need in ((lhs, "bf"), (rhs, "io"), (out, "bf")):
        if any(labels.count(c) != 1 for c in need):
            raise lx.error(f"malformed dim_labels: '{labels}' needs exactly one of each of '{need}'", at)
    return DimLabels(lhs, rhs, out)


_DECODERS: dict[str, Callable[[Lexer, str], Any]] = {
    **{k: _int_list for k in INT_LIST_ATTRS},
    **{k: _int for k in INT_ATTRS},
    **{k: _bool for k in BOOL_ATTRS},
    **{k: _string for k in STRING_ATTRS},
    **{k: _computation for k in COMPUTATION_ATTRS},
    **{k: _computation_list for k in COMPUTATION_LIST_ATTRS},
    "slice": _slice,
    "padding": _padding,
    "window": _window,
    "dim_labels": _dim_labels,
}

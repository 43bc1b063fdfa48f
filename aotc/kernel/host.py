"""Calls out of the generated code into the application, as data: a custom call the
application implements, or an infeed/outfeed/send/recv callback. An op rule describes
one (`HostCall`) and calls its wrapper with `CallStmt`; the printer (emit_c/host.py)
writes the wrapper, which builds the typed buffer descriptors and reports failures.
Knows no HLO op and writes no C.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..hlo.dtypes import DType

# the kinds of call
CUSTOM_CALL, INFEED, OUTFEED, SEND, RECV = "custom_call", "infeed", "outfeed", "send", "recv"
KINDS = (CUSTOM_CALL, INFEED, OUTFEED, SEND, RECV)

# typed FFI attribute kinds (what a value is stored as in the C table)
ATTR_I64, ATTR_F64, ATTR_BOOL, ATTR_STR = "i64", "f64", "bool", "str"


@dataclass(frozen=True, slots=True)
class Attr:
    """One typed attribute of a custom call: `scale = 2.5 : f32` is ("scale", "f64", 2.5, "f32")."""

    name: str
    kind: str  # ATTR_I64 | ATTR_F64 | ATTR_BOOL | ATTR_STR
    value: object  # int, float, bool or str
    mlir_type: str = ""  # the type as written (i32, ui8, f32, ...); "" for strings and bools


@dataclass(frozen=True, slots=True)
class HostCall:
    """One call site. Its wrapper takes the argument pointers, then the result pointers,
    in the order of `args` and `results` (token values carry no data and are left out)."""

    cname: str  # the static wrapper function
    kind: str  # one of KINDS
    hlo: str  # the instruction it runs
    args: tuple[tuple[DType, tuple[int, ...]], ...]  # buffers read: (type, dims)
    results: tuple[tuple[DType, tuple[int, ...]], ...]  # buffers written
    target: str = ""  # custom_call_target
    function: str = ""  # custom calls: the application's C function
    channel: int = 0  # send/recv: channel_id
    config: str = ""  # custom calls: backend_config when it is a string
    attrs: tuple[Attr, ...] = ()  # custom calls: backend_config when it is a dictionary

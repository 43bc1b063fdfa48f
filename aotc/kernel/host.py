"""Calls out of the generated code into the application, as data: a custom call the
application implements, or an infeed/outfeed/send/recv callback; and the one call into
the instance's own state, rng-get-and-update-state's counter (RNG_STATE). An op rule describes
one (`HostCall`) and calls its wrapper with `CallStmt`; the printer (emit_c/host.py)
writes the wrapper, which builds the typed buffer descriptors and reports failures.
Knows no HLO op and writes no C.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..hlo.dtypes import DType

# the kinds of call
CUSTOM_CALL, INFEED, OUTFEED, SEND, RECV = "custom_call", "infeed", "outfeed", "send", "recv"
RNG_STATE = "rng_state"  # not the application's: a 128-bit counter the instance keeps per call site
KINDS = (CUSTOM_CALL, INFEED, OUTFEED, SEND, RECV, RNG_STATE)

# the element types the application sees, by XLA's PrimitiveType number (xla_data.proto), as
# XLA's FFI numbers them (s2/u2/s4/u4 one value a byte, in the low bits)
TYPE_NUMBERS = {
    "pred": 1, "s8": 2, "s16": 3, "s32": 4, "s64": 5, "u8": 6, "u16": 7, "u32": 8, "u64": 9, "f16": 10,
    "f32": 11, "f64": 12, "c64": 15, "bf16": 16, "c128": 18, "f8e5m2": 19, "f8e4m3fn": 20,
    "f8e4m3b11fnuz": 23, "f8e5m2fnuz": 24, "f8e4m3fnuz": 25, "f8e4m3": 28, "f8e3m4": 29, "f4e2m1fn": 32,
    "f8e8m0fnu": 33, "s4": 21, "u4": 22, "s2": 26, "u2": 27,
}

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
    delta: int = 0  # RNG_STATE: what each execution adds to the site's counter

"""The opcode table: every opcode XLA prints, with its arity, its category and
whether it acts beyond its value; and `Op`, the enum of the spellings, made from
the table (`Op.REDUCE_WINDOW == "reduce-window"`).

The parser accepts exactly these spellings and gives instructions `Op` members;
whether aotc can compile an opcode is decided by the op-rule registry in
`aotc.ops`, not here.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

VARIADIC = -1


@dataclass(frozen=True, slots=True)
class Opcode:
    name: str
    arity: int  # number of operands, or VARIADIC
    category: str  # "elementwise" | "shape" | "reduce" | "control" | "data" | "collective" | "other"


def _ops(category: str, arity: int, names: str) -> list[Opcode]:
    return [Opcode(n, arity, category) for n in names.split()]


_TABLE: list[Opcode] = [
    *_ops(
        "elementwise",
        1,
        "abs negate sign exponential exponential-minus-one log log-plus-one sqrt rsqrt cbrt tanh "
        "logistic sine cosine tan erf floor ceil round-nearest-afz round-nearest-even is-finite not "
        "popcnt count-leading-zeros real imag convert bitcast-convert reduce-precision copy",
    ),
    *_ops(
        "elementwise",
        2,
        "add subtract multiply divide remainder power maximum minimum atan2 and or xor shift-left "
        "shift-right-logical shift-right-arithmetic compare complex stochastic-convert",
    ),
    *_ops("elementwise", 3, "select clamp"),
    *_ops("shape", 1, "broadcast reshape transpose slice reverse bitcast"),
    *_ops("shape", 2, "pad"),
    *_ops("shape", 0, "iota"),
    *_ops("shape", VARIADIC, "concatenate dynamic-slice dynamic-update-slice dynamic-reshape"),
    *_ops("data", 0, "parameter constant rng-get-and-update-state partition-id replica-id"),
    *_ops("data", VARIADIC, "tuple opt-barrier"),
    *_ops("data", 1, "get-tuple-element get-dimension-size"),
    *_ops("data", 2, "set-dimension-size"),
    *_ops("reduce", VARIADIC, "reduce reduce-window sort scatter map topk"),
    *_ops("reduce", 2, "dot gather convolution"),
    *_ops("reduce", 3, "ragged-dot"),
    *_ops("reduce", 3, "select-and-scatter"),
    *_ops("control", VARIADIC, "call fusion conditional custom-call while after-all"),
    *_ops("control", 1, "domain"),
    *_ops("control", 2, "add-dependency"),
    *_ops(
        "collective",
        VARIADIC,
        "all-gather all-gather-start all-reduce all-reduce-start all-to-all collective-broadcast "
        "collective-permute collective-permute-start reduce-scatter async-start send send-done recv recv-done "
        "infeed outfeed",
    ),
    # the second halves of asynchronous pairs read the first half's value (hlo_opcode.h: arity 1)
    *_ops("collective", 1, "all-gather-done all-reduce-done collective-permute-done async-update async-done "
          "copy-start copy-done"),
    *_ops("collective", 6, "ragged-all-to-all"),
    *_ops(
        "other",
        VARIADIC,
        "batch-norm-grad batch-norm-inference batch-norm-training cholesky triangular-solve fft rng "
        "rng-bit-generator",
    ),
]

# ops whose every execution may act or give a fresh value (random numbers, I/O, custom
# calls, collectives, control flow, ordering): never merged with an identical one
_EFFECTS = frozenset((
    "parameter rng rng-bit-generator rng-get-and-update-state custom-call infeed outfeed send send-done "
    "recv recv-done after-all add-dependency domain opt-barrier while conditional call fusion all-reduce "
    "all-reduce-start all-reduce-done all-gather all-gather-start all-gather-done all-to-all "
    "collective-permute collective-permute-start collective-permute-done reduce-scatter partition-id "
    "replica-id copy-start copy-done async-start async-update async-done").split())

OPCODES: dict[str, Opcode] = {o.name: o for o in _TABLE}

# the enum of the spellings: Op.ADD, Op.REDUCE_WINDOW, ... (a StrEnum: equal to the spelling)
Op = StrEnum("Op", [(name.upper().replace("-", "_"), name) for name in OPCODES])
Op.__doc__ = "An HLO opcode, by its spelling."


def calls_inline(op: str) -> bool:
    """Whether `op` is its called computation applied to its operands (call, fusion)."""
    return op in ("call", "fusion")


def has_effects(op: str) -> bool:
    """Whether two identical instructions of `op` may still differ (or act): CSE keeps both."""
    return op in _EFFECTS


def opcode(name: str) -> Opcode:
    return OPCODES[name]


def is_opcode(name: str) -> bool:
    return name in OPCODES

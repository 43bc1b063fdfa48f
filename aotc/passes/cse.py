"""Common-subexpression elimination: instructions with the same opcode, shape,
operands and attributes compute the same value, so later ones forward to the
first; constants merge when their shape and bytes are equal.

Anything that may have an effect or yield a fresh value each time is left
alone (random numbers, custom calls, I/O, collectives, control flow), and so
are attributes that only describe provenance (metadata).
"""
from __future__ import annotations

from ..hlo.ir import Instruction, Module
from .rewrite import Graph, Names, sweep

NEVER_MERGED = frozenset({
    "parameter", "rng", "rng-bit-generator", "rng-get-and-update-state", "custom-call", "infeed",
    "outfeed", "send", "send-done", "recv", "recv-done", "after-all", "add-dependency", "domain",
    "opt-barrier", "while", "conditional", "call", "fusion", "all-reduce", "all-reduce-start",
    "all-reduce-done", "all-gather", "all-gather-start", "all-gather-done", "all-to-all",
    "collective-permute", "collective-permute-start", "collective-permute-done", "reduce-scatter",
    "partition-id", "replica-id", "copy-start", "copy-done", "async-start", "async-update", "async-done",
})
PROVENANCE = frozenset({"metadata", "frontend_attributes", "statistics_viz", "origin"})


def eliminate_common_subexpressions(m: Module) -> tuple[Module, bool]:
    seen: dict[tuple, str] = {}

    def rule(g: Graph, names: Names, ins: Instruction) -> str | None:
        if ins.opcode in NEVER_MERGED:
            return None
        key = (ins.opcode, ins.shape, ins.operands, _attrs(ins), ins.literal)
        first = seen.setdefault(key, ins.name)
        return None if first == ins.name else first

    return sweep(m, rule)


def _attrs(ins: Instruction) -> tuple:
    return tuple((k, v) for k, v in ins.attrs if k not in PROVENANCE)

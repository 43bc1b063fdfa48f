"""Common-subexpression elimination: instructions with the same opcode, shape,
operands and attributes compute the same value, so later ones forward to the
first; constants merge when their shape and bytes are equal.

Anything that may have an effect or yield a fresh value each time is left
alone (random numbers, custom calls, I/O, collectives, control flow), and so
are attributes that only describe provenance (metadata).
"""
from __future__ import annotations

from ..hlo.ir import Instruction, Module
from ..hlo.opcodes import has_effects
from .rewrite import Graph, Names, sweep

PROVENANCE = frozenset({"metadata", "frontend_attributes", "statistics_viz", "origin"})


def eliminate_common_subexpressions(m: Module) -> tuple[Module, bool]:
    seen: dict[tuple, str] = {}

    def rule(g: Graph, names: Names, ins: Instruction) -> str | None:
        if has_effects(ins.opcode):
            return None
        key = (ins.opcode, ins.shape, ins.operands, _attrs(ins), ins.literal)
        first = seen.setdefault(key, ins.name)
        return None if first == ins.name else first

    return sweep(m, rule)


def _attrs(ins: Instruction) -> tuple:
    return tuple((k, v) for k, v in ins.attrs if k not in PROVENANCE)

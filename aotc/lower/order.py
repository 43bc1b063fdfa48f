"""Instruction order and naming helpers: a stable topological order of a
computation, and fresh names for instructions a pass creates.

Source order is kept wherever it is already a valid order (pre-optimization
dumps, XLA schedules); only forward references move.
"""
from __future__ import annotations

from typing import Callable

from ..hlo.ir import Computation, Instruction, Module


def name_maker(m: Module) -> Callable[[str], str]:
    """A function giving fresh instruction names (`base`, `base.1`, ...) unused in `m`."""
    taken = {i.name for _, i in m.instructions()}

    def unique(base: str) -> str:
        name, n = base, 1
        while name in taken:
            name, n = f"{base}.{n}", n + 1
        taken.add(name)
        return name

    return unique


def topo_order(comp: Computation) -> list[Instruction]:
    """Instructions so that operands come first; ties keep source order."""
    position = {i.name: k for k, i in enumerate(comp.instructions)}
    placed: set[str] = set()
    entered: set[str] = set()  # guards against cycles (the verifier rejects them first)
    out: list[Instruction] = []
    for ins in comp.instructions:
        if ins.name in placed:
            continue
        stack = [(ins, 0)]
        entered.add(ins.name)
        while stack:
            cur, k = stack.pop()
            if k < len(cur.operands):
                stack.append((cur, k + 1))
                dep = cur.operands[k]
                if dep not in entered and dep in position:
                    entered.add(dep)
                    stack.append((comp.get(dep), 0))
                continue
            if cur.name not in placed:
                placed.add(cur.name)
                out.append(cur)
    return out

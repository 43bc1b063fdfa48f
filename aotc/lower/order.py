"""Instruction order: a stable topological order of a computation (fresh instruction names
are `hlo.ir.name_maker`'s).

Source order is kept wherever it is already a valid order (pre-optimization
dumps, XLA schedules); only forward references move.
"""
from __future__ import annotations

from ..hlo.ir import Computation, Instruction
from ..ops.registry import side_effect


def topo_order(comp: Computation) -> list[Instruction]:
    """Instructions so that operands come first; ties keep source order. An op that acts
    (`side_effect`: infeed, outfeed, ...) also comes after every such op before it in
    source order, so they run in program order."""
    position = {i.name: k for k, i in enumerate(comp.instructions)}
    after: dict[str, str] = {}  # an acting op -> the acting op before it
    last = None
    for i in comp.instructions:
        if side_effect(i):
            if last is not None:
                after[i.name] = last
            last = i.name
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
            deps = cur.operands + ((after[cur.name],) if cur.name in after else ())
            if k < len(deps):
                stack.append((cur, k + 1))
                dep = deps[k]
                if dep not in entered and dep in position:
                    entered.add(dep)
                    stack.append((comp.get(dep), 0))
                continue
            if cur.name not in placed:
                placed.add(cur.name)
                out.append(cur)
    return out

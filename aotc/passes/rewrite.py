"""Shared plumbing for graph passes: one sweep over the entry computation in
topological order, where a rule may keep an instruction, forward its uses to
another value, or replace it by new instructions; then dead code goes.

A replacement's last instruction takes the replaced instruction's name, so
names that other stages hold (the live values) stay valid. New helper
instructions get names derived from the one they serve. This module knows no
op semantics.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

import numpy as np

from ..hlo.ir import Computation, Instruction, Literal, Module
from ..hlo.shape import ArrayShape
from ..hlo.opcodes import Op
from ..ops.registry import side_effect

# what a rule returns: None (keep), a name (forward uses there), new instructions
Outcome = Union[None, str, list[Instruction]]


@dataclass(frozen=True, slots=True)
class Graph:
    """Read-only view a rule gets: instructions by name and each one's users."""

    by_name: dict
    users: dict  # name -> distinct user names, in the sweep's input graph

    def get(self, name: str) -> Instruction:
        return self.by_name[name]

    def user_count(self, name: str) -> int:
        return len(self.users.get(name, ()))


class Names:
    """Fresh instruction names derived from a base name, never reused."""

    def __init__(self, taken) -> None:
        self.taken = set(taken)

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.taken:
            name, k = f"{base}.{k}", k + 1
        self.taken.add(name)
        return name


Rule = Callable[[Graph, Names, Instruction], Outcome]


def sweep(m: Module, rule: Rule) -> tuple[Module, bool]:
    """Apply `rule` once to every instruction of the entry computation, in order."""
    comp = m.entry_computation
    by_name = {i.name: i for i in comp.instructions}
    graph = Graph(by_name, comp.users())
    names = Names(i.name for _, i in m.instructions())
    subst: dict[str, str] = {}
    out: list[Instruction] = []
    changed = False
    for ins in comp.instructions:
        ops = tuple(subst.get(o, o) for o in ins.operands)
        if ops != ins.operands:
            ins = ins.with_(operands=ops)
        by_name[ins.name] = ins
        res = rule(graph, names, ins)
        if res is None:
            out.append(ins)
        elif isinstance(res, str):
            subst[ins.name] = res
            changed = True
        else:
            assert res and res[-1].name == ins.name, "a replacement must end in the replaced name"
            for new in res:
                by_name[new.name] = new
            out.extend(res)
            changed = True
    root = subst.get(comp.root, comp.root)
    return with_entry(m, remove_dead(out, root, comp)), changed


def remove_dead(body: list[Instruction], root: str, comp: Computation) -> Computation:
    """The computation with only what `root` needs and the ops that act (parameters always stay)."""
    by_name = {i.name: i for i in body}
    keep: set[str] = set()
    todo = [root] + [i.name for i in body if side_effect(i)]
    while todo:
        n = todo.pop()
        if n not in keep:
            keep.add(n)
            todo.extend(by_name[n].operands)
    kept = tuple(i for i in body if i.name in keep or i.opcode == Op.PARAMETER)
    return Computation(comp.name, kept, root, comp.is_entry, comp.has_signature, comp.loc)


def with_entry(m: Module, comp: Computation) -> Module:
    return m.with_computations(tuple(comp if c.name == m.entry else c for c in m.computations))


# ---------------------------------------------------------------- builders


def constant(name: str, shape: ArrayShape, values: np.ndarray, like: Instruction) -> Instruction:
    values = np.array(values, dtype=shape.dtype.numpy, order="C").reshape(shape.dims)  # a copy, never a view
    return Instruction(name, "constant", shape, (), (), Literal(shape, values), loc=like.loc)


def scalar_constant(name: str, like: Instruction, value) -> Instruction:
    """A rank-0 constant of `like`'s element type holding `value`."""
    shape = like.array_shape.with_dims(())
    return constant(name, shape, np.array(value, dtype=shape.dtype.numpy), like)


def op(name: str, opcode: str, shape, operands: tuple[str, ...], like: Instruction,
       attrs: tuple = ()) -> Instruction:
    return Instruction(name, opcode, shape, operands, attrs, loc=like.loc)


def broadcast(name: str, shape: ArrayShape, operand: str, dims: tuple[int, ...], like: Instruction) -> Instruction:
    return op(name, "broadcast", shape, (operand,), like, (("dimensions", tuple(dims)),))


def scalar_like(names: Names, like: Instruction, value, base: str) -> list[Instruction]:
    """Instructions giving `value` in `like`'s shape: a scalar constant, broadcast if needed."""
    c = scalar_constant(names.fresh(base), like, value)
    if like.array_shape.rank == 0:
        return [c]
    return [c, broadcast(names.fresh(base + ".bcast"), like.array_shape, c.name, (), like)]


def is_constant(ins: Instruction) -> bool:
    """A constant with an array value (not elided, not a tuple)."""
    return (ins.opcode == Op.CONSTANT and ins.literal is not None
            and isinstance(ins.literal.values, np.ndarray))

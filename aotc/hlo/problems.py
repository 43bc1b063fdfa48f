"""The verifier's report and the readings of the IR its checks share: problems are collected
with their locations and the earliest in source order wins. It checks nothing by itself and
never changes the module."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from .ir import COMPUTATION_ATTRS, COMPUTATION_LIST_ATTRS, Computation, Instruction, Loc
from .shape import Shape, leaves

_FAR = (1 << 62, 0)  # sort key of problems without a location: after everything located


@dataclass(order=True)
class Problem:
    key: tuple[int, int]
    seq: int
    message: str = field(compare=False)
    loc: Loc | None = field(compare=False)


class Problems:
    """Collects problems; the earliest in source order wins."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def add(self, message: str, loc: Loc | None) -> None:
        key = (loc.line, loc.col) if loc is not None else _FAR
        self.items.append(Problem(key, len(self.items), message, loc))

    def first(self) -> Problem | None:
        return min(self.items) if self.items else None


def computation_loc(comp: Computation) -> Loc | None:
    """Where a computation's problems are reported: its header, else its first instruction."""
    if comp.loc is not None:
        return comp.loc
    return comp.instructions[0].loc if comp.instructions else None


def callees(instr: Instruction) -> Iterable[tuple[str, str]]:
    """(attribute key, computation name) for every computation reference."""
    for key, value in instr.attrs:
        if key in COMPUTATION_ATTRS and isinstance(value, str):
            yield key, value
        elif key in COMPUTATION_LIST_ATTRS and isinstance(value, (tuple, list)):
            for v in value:
                yield key, v


def layout_problem(shape: Shape) -> str | None:
    """Why a layout in `shape` is malformed, or None."""
    for _, leaf in leaves(shape):
        if leaf.layout is not None and sorted(leaf.layout) != list(range(leaf.rank)):
            return f"layout {{{','.join(map(str, leaf.layout))}}} of {leaf.text(False)} is not a permutation of 0..{leaf.rank - 1}" \
                if leaf.rank else f"layout {{{','.join(map(str, leaf.layout))}}} of scalar {leaf.text(False)} must be empty"
    return None

"""The parsed form of StableHLO text before it becomes HLO: functions, ops in MLIR's
generic shape (name, operands, attributes, regions, result types), blocks and regions.

Every pretty form the parser reads is normalized to this one shape, so the conversion to
HLO (`convert`, `regions`) sees a single spelling of each op. Offsets into the source ride
along for located errors. Plain data; nothing here knows what an op means.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...hlo.shape import Shape


@dataclass(frozen=True, slots=True)
class Use:
    """A use of an SSA value: `%0`, `%arg1`, `%1#2` (the key), at `pos`."""

    key: str
    pos: int


@dataclass(frozen=True, slots=True)
class Arg:
    """A block or function argument."""

    key: str
    shape: Shape
    pos: int
    attrs: dict = field(default_factory=dict)
    loc_name: str | None = None  # from loc("name") when present


@dataclass(slots=True)
class Op:
    name: str  # "stablehlo.add", "func.call", "chlo.top_k"
    results: tuple[str, ...]  # the keys it defines: ("%0",) or ("%1#0", "%1#1")
    operands: tuple[Use, ...]
    attrs: dict[str, Any]
    regions: tuple["Block", ...]  # one block per region (StableHLO regions have one)
    result_types: tuple[Shape, ...]
    pos: int  # offset of the op name
    result_pos: int  # offset of the first result name (the op name when it has none)
    ssa: str = ""  # the result group's name without '%' ("0", "cst_1", "values"), for HLO names


@dataclass(slots=True)
class Block:
    args: tuple[Arg, ...]
    ops: list[Op]
    pos: int  # offset of the block's '{'


@dataclass(slots=True)
class Func:
    name: str  # without '@'
    args: tuple[Arg, ...]
    result_types: tuple[Shape, ...]
    result_attrs: tuple[dict, ...]
    body: Block
    pos: int  # offset of the symbol


@dataclass(slots=True)
class ModuleSyntax:
    name: str
    funcs: list[Func]
    pos: int
    loc_aliases: dict[str, str] = field(default_factory=dict)  # '#loc3' -> its loc(...) text


def free_uses(block: Block) -> list[Use]:
    """Uses inside `block` (nested regions included) of values it does not define, first
    use first: the values a region captures from around it."""
    out: list[Use] = []
    seen: set[str] = set()

    def walk(b: Block, defined: set[str]) -> None:
        defined = defined | {a.key for a in b.args}
        for op in b.ops:
            for u in op.operands:
                if u.key not in defined and u.key not in seen:
                    seen.add(u.key)
                    out.append(u)
            for r in op.regions:
                walk(r, defined)
            defined |= set(op.results)
            if op.results and op.results[0].endswith("#0"):
                defined.add(op.results[0][:-2])
    walk(block, set())
    return out

"""The op-rule registry: one `OpRule` per opcode aotc understands.

Each op family module (`elementwise.py`, `shape_ops.py`, `dot.py`, ...) defines,
side by side, an op's shape rule (used by the verifier) and its emission rule
(used by lowering), and registers them here with `register`. Nothing else in
aotc maps opcodes to behaviour.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..hlo.ir import Instruction
from ..hlo.shape import Shape, ShapeError  # noqa: F401  (op families raise it)

# shape_rule(instr, operand_shapes) -> inferred result shape; raises ShapeError
ShapeRule = Callable[[Instruction, list[Shape]], Shape]


@dataclass(frozen=True, slots=True)
class OpRule:
    opcode: str
    shape: Optional[ShapeRule] = None
    # elemental(ctx, instr, index) -> C expression of one output element, where
    # index is a tuple of C index expressions (see aotc.lower.elemental)
    elemental: Optional[Callable] = None
    # kernel(ctx, instr) -> emits a whole loop nest / runtime call (dot, reduce)
    kernel: Optional[Callable] = None
    # scratch_bytes(instr, operand_shapes) -> bytes of arena scratch a kernel needs (a kernel
    # may also ask for scratch while it is emitted: KernelBuilder.need_scratch)
    scratch_bytes: Optional[Callable] = None
    # resolved structurally by lowering (parameter, tuple, call, ...): no code of its own
    structural: bool = False
    # kernel needs every operand in a buffer of its own (no fused producers)
    buffered_operands: bool = False
    # what lowering may assume of the op (the trait names below)
    traits: frozenset[str] = frozenset()


# traits
KEEPS_INDEX = "keeps_index"  # each output element reads its operands at the same linear index (scalars aside)
CHEAP = "cheap"  # index mapping only: duplicated into every consuming kernel rather than materialized
IDENTITY = "identity"  # the value of its one operand (lowering forwards it)


def has(opcode: str, trait: str) -> bool:
    """Whether the op of `opcode` declares `trait`."""
    r = rule(opcode)
    return r is not None and trait in r.traits


_RULES: dict[str, OpRule] = {}


def register(rule: OpRule) -> OpRule:
    if rule.opcode in _RULES:
        raise ValueError(f"op rule for {rule.opcode} registered twice")
    _RULES[rule.opcode] = rule
    return rule


def rules() -> dict[str, OpRule]:
    _load_families()
    return _RULES


def rule(opcode: str) -> OpRule | None:
    _load_families()
    return _RULES.get(opcode)


def compilable(opcode: str) -> bool:
    """Whether aotc can compile instructions with this opcode."""
    r = rule(opcode)
    return r is not None and (r.structural or r.elemental is not None or r.kernel is not None)


def _load_families() -> None:
    # importing a family module registers its rules
    from . import families  # noqa: F401


def shape_rule(opcode: str):
    """The shape rule of `opcode` (what the verifier takes), or None."""
    r = rule(opcode)
    return r.shape if r is not None else None

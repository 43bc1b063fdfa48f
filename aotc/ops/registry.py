"""The op registry: one explicit dict from opcode to its `OpRule`, gathered from the
`RULES` list of every op family module. Nothing else in aotc maps opcodes to behaviour.
"""
from __future__ import annotations

from . import (control, convolution, data, dot, dynamic, elementwise, gather_scatter, reduce, shape_ops, sort,
               window)
from .rule import CHEAP, IDENTITY, KEEPS_INDEX, SAME_ELEMENTS, OpRule, ShapeError  # noqa: F401  (re-exported)

FAMILIES = (data, elementwise, shape_ops, reduce, dot, gather_scatter, dynamic, sort, control, window, convolution)


def _gather() -> dict[str, OpRule]:
    out: dict[str, OpRule] = {}
    for family in FAMILIES:
        for r in family.RULES:
            if r.opcode in out:
                raise ValueError(f"op rule for {r.opcode} defined twice ({family.__name__})")
            out[r.opcode] = r
    return out


RULES: dict[str, OpRule] = _gather()


def rules() -> dict[str, OpRule]:
    return RULES


def rule(opcode: str) -> OpRule | None:
    return RULES.get(opcode)


def has(opcode: str, trait: str) -> bool:
    """Whether the op of `opcode` declares `trait`."""
    r = RULES.get(opcode)
    return r is not None and trait in r.traits


def compilable(opcode: str) -> bool:
    """Whether aotc can compile instructions with this opcode."""
    r = RULES.get(opcode)
    return r is not None and (r.structural or r.elemental is not None or r.kernel is not None)


def shape_rule(opcode: str):
    """The shape rule of `opcode` (what the verifier takes), or None."""
    r = RULES.get(opcode)
    return r.shape if r is not None else None

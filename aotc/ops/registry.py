"""The op registry: one explicit dict from opcode to its `OpRule`, gathered from the
`RULES` list of every op family module, and one from custom-call target to the rule
defining it (rules with `target` set), behind the one `custom-call` rule. Nothing else in
aotc maps opcodes or targets to behaviour.
"""
from __future__ import annotations

from . import (batch_norm, bitcast_convert, collective, control, convolution, data, dimension_size, dot, dynamic,
               elementwise, fft, gather_scatter, host, linalg, random, reduce, reduce_window, select_and_scatter, shape_ops,
               sort, stochastic)
from .custom_call import custom_call_rule
from .rule import CHEAP, IDENTITY, KEEPS_INDEX, SAME_ELEMENTS, SIDE_EFFECT, OpRule, ShapeError  # noqa: F401

FAMILIES = (data, elementwise, bitcast_convert, shape_ops, reduce, dot, gather_scatter, dynamic, sort, control,
            reduce_window, convolution, random, fft, host, select_and_scatter, batch_norm, linalg, collective, dimension_size, stochastic)


def _gather() -> tuple[dict[str, OpRule], dict[str, OpRule]]:
    out: dict[str, OpRule] = {}
    targets: dict[str, OpRule] = {}
    for family in FAMILIES:
        for r in family.RULES:
            table, key = (targets, r.target) if r.target is not None else (out, r.opcode)
            if key in table or (r.target is None and r.opcode == "custom-call"):
                raise ValueError(f"op rule for {key} defined twice ({family.__name__})")
            table[key] = r
    out["custom-call"] = custom_call_rule(targets)
    return out, targets


RULES, CUSTOM_CALL_TARGETS = _gather()  # opcode -> rule; custom_call_target -> rule


def rules() -> dict[str, OpRule]:
    return RULES


def rule(opcode: str) -> OpRule | None:
    return RULES.get(opcode)


def has(opcode: str, trait: str) -> bool:
    """Whether the op of `opcode` declares `trait`."""
    r = RULES.get(opcode)
    return r is not None and trait in r.traits


def side_effect(ins) -> bool:
    """Whether instruction `ins` acts (SIDE_EFFECT, or a custom call marked
    `custom_call_has_side_effect=true`): never dead code, never reordered with another."""
    return has(ins.opcode, SIDE_EFFECT) or (ins.opcode == "custom-call" and bool(ins.attr("custom_call_has_side_effect")))


def compilable(opcode: str) -> bool:
    """Whether aotc can compile instructions with this opcode."""
    r = RULES.get(opcode)
    return r is not None and (r.structural or r.elemental is not None or r.kernel is not None)


def shape_rule(opcode: str):
    """The shape rule of `opcode` (what the verifier takes), or None."""
    r = RULES.get(opcode)
    return r.shape if r is not None else None

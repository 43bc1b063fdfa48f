"""Structural and shape verification of a parsed HLO module.

`verify` checks what every later stage takes for granted: names resolve,
arities match the opcode table, no cycles, parameters numbered 0..n-1,
attributes in range, layouts well formed, and every shape agrees with the op's
shape rule from `aotc.ops.registry`. It reports the first problem in source
order as one located `AotcError`. It never changes the module and knows no op
semantics beyond attribute ranges and the calling conventions of control flow.
"""
from __future__ import annotations

from ..errors import AotcError, located
from .cycle_check import check_call_cycles, check_instruction_cycles
from .entry_check import check_aliases, check_entry_layout
from .ir import Module
from .problems import Problems
from .shape_check import ShapeRuleLookup, check_shape
from .structure_check import check_computation, check_computation_names, check_entry, check_instruction_names


def verify(module: Module, source_text: str | None = None, shape_rule: ShapeRuleLookup | None = None) -> None:
    """Raise one located AotcError for the first problem (in source order) in `module`.
    `shape_rule(opcode)` gives the op's shape rule (the op definitions own them: this layer
    takes them as a parameter); without it only structure is checked."""
    problems = Problems()
    bad: set[str] = set()  # instructions whose structure is broken: no shape checks on them
    check_computation_names(module, problems)
    check_entry(module, problems)
    check_instruction_names(module, problems)
    owner: dict[str, str] = {}  # instruction name -> computation defining it (first one)
    for comp, instr in module.instructions():
        owner.setdefault(instr.name, comp.name)
    for comp in module.computations:
        check_computation(module, comp, owner, problems, bad)
        check_instruction_cycles(comp, problems, bad)
    check_call_cycles(module, problems)
    check_entry_layout(module, problems)
    check_aliases(module, problems)
    if shape_rule is not None:
        for comp in module.computations:
            for instr in comp.instructions:
                if instr.name not in bad:
                    check_shape(module, comp, instr, problems, shape_rule)
    worst = problems.first()
    if worst is None:
        return
    if worst.loc is None:
        raise AotcError(worst.message, file=module.source)
    raise located(worst.message, worst.loc, source_text)

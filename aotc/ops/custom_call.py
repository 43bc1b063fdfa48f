"""custom-call: one op whose meaning is its `custom_call_target`. Each target is defined
once, by the op family it belongs to, as an `OpRule` with `target` set (TopK in sort.py);
`registry.py` gathers them into one dict and builds the custom-call rule here, which
dispatches on the target. An unknown target is a located error naming it.
"""
from __future__ import annotations

from ..errors import located
from ..hlo.ir import Instruction
from ..hlo.shape import Shape
from .rule import OpRule


def custom_call_rule(targets: dict[str, OpRule]) -> OpRule:
    """The `custom-call` rule over the target definitions `targets` (target -> rule)."""

    def target(instr: Instruction) -> OpRule | None:
        return targets.get(instr.attr("custom_call_target"))

    def shape(instr: Instruction, shapes: list[Shape]) -> Shape:
        t = target(instr)
        return instr.shape if t is None or t.shape is None else t.shape(instr, shapes)  # unknown: refused when lowered

    def kernel(kb, instr: Instruction, outs) -> None:
        t = target(instr)
        if t is None or t.kernel is None:
            known = ", ".join(f'"{k}"' for k in sorted(targets))
            raise located(f"aotc cannot compile custom-call target \"{instr.attr('custom_call_target')}\" "
                          f"(instruction {instr.name}); the targets it compiles are {known}", instr.loc)
        t.kernel(kb, instr, outs)

    def scratch(instr: Instruction, shapes: list[Shape]) -> int:
        t = target(instr)
        return t.scratch_bytes(instr, shapes) if t is not None and t.scratch_bytes is not None else 0

    return OpRule("custom-call", shape=shape, kernel=kernel, scratch_bytes=scratch, buffered_operands=True)

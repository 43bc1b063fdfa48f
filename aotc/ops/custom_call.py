"""custom-call: one op whose meaning is its `custom_call_target`. Each target is defined
once, by the op family it belongs to, as an `OpRule` with `target` set (TopK in sort.py);
`registry.py` gathers them into one dict and builds the custom-call rule here, which
dispatches on the target. A target the application implements (CompileOptions.custom_calls,
the C ABI of docs/custom_calls.md) is called through host.py; any other target is a located
error naming it, and JAX's Python callbacks get an error of their own.
"""
from __future__ import annotations

from ..errors import located
from ..hlo.ir import Instruction
from ..hlo.shape import Shape
from .host import PYTHON_CALLBACKS, user_custom_call_kernel, user_custom_call_shape
from .rule import OpRule


def custom_call_rule(targets: dict[str, OpRule]) -> OpRule:
    """The `custom-call` rule over the target definitions `targets` (target -> rule)."""

    def target(instr: Instruction) -> OpRule | None:
        return targets.get(instr.attr("custom_call_target"))

    def shape(instr: Instruction, shapes: list[Shape]) -> Shape:
        t = target(instr)
        if t is None or t.shape is None:  # the application's, or unknown: refused when lowered
            return user_custom_call_shape(instr, shapes)
        return t.shape(instr, shapes)

    def kernel(kb, instr: Instruction, outs) -> None:
        name = instr.attr("custom_call_target")
        if name in kb.custom_calls:  # the application implements it (it may also replace a built-in one)
            user_custom_call_kernel(kb, instr, outs)
            return
        t = target(instr)
        if t is not None and t.kernel is not None:
            t.kernel(kb, instr, outs)
            return
        if name in PYTHON_CALLBACKS:
            raise located(f"custom-call {instr.name} (target \"{name}\") calls a Python function: a Python "
                          "callback cannot run in compiled C; remove it (jax.debug.print, jax.pure_callback, "
                          "io_callback) before exporting, or implement the computation as a C custom call "
                          "(docs/custom_calls.md)", instr.loc)
        known = ", ".join(f'"{k}"' for k in sorted(targets))
        raise located(f"aotc cannot compile custom-call target \"{name}\" (instruction {instr.name}); the "
                      f"targets it compiles are {known}. If your application implements \"{name}\" in C, "
                      f"name it with --custom-call {name} (or `custom_calls: [{name}]` in the config): "
                      "see docs/custom_calls.md", instr.loc)

    def scratch(instr: Instruction, shapes: list[Shape]) -> int:
        t = target(instr)
        return t.scratch_bytes(instr, shapes) if t is not None and t.scratch_bytes is not None else 0

    def expand(instr: Instruction, shapes: list[Shape], fresh):
        t = target(instr)
        return None if t is None or t.expand is None else t.expand(instr, shapes, fresh)

    return OpRule("custom-call", shape=shape, kernel=kernel, scratch_bytes=scratch, buffered_operands=True,
                  expand=expand)

"""What an op definition is: `OpRule` (typed attributes are read by its own functions; its
shape rule, element rule or kernel rule, scratch needs and traits) and the trait names
lowering may rely on. Each op family module lists its rules in `RULES`; the registry
gathers them. No global state here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..hlo.ir import Computation, Instruction, Module
from ..hlo.shape import Shape, ShapeError  # noqa: F401  (op families raise it)

@dataclass(frozen=True, slots=True)
class Expansion:
    """What an `expand` rule may use: calling it gives a fresh instruction name from `base`;
    `computation(name)` is a computation of the module (a reducer, say), `producer(name)` an
    operand's instruction."""

    names: Callable[[str], str]
    module: Module
    here: Optional[Computation] = None  # the computation being expanded

    def __call__(self, base: str) -> str:
        return self.names(base)

    def computation(self, name: str) -> Computation:
        return self.module.computation(name)

    def producer(self, name: str) -> Instruction:
        """The instruction named `name` in the computation being expanded (as the source has it)."""
        assert self.here is not None
        return self.here.get(name)


class Unsupported(Exception):
    """Raised by an `expand` rule when aotc cannot compile the instruction as written (a
    collective naming other devices); lowering turns it into a located error."""


# shape_rule(instr, operand_shapes) -> inferred result shape; raises ShapeError
ShapeRule = Callable[[Instruction, list[Shape]], Shape]

# traits
KEEPS_INDEX = "keeps_index"  # each output element reads its operands at the same linear index (scalars aside)
CHEAP = "cheap"  # index mapping only: duplicated into every consuming kernel rather than materialized
IDENTITY = "identity"  # the value of its one operand (lowering forwards it)
# the result is its one operand's elements in the same row-major order (reshape, copy): a
# materialized one can be a view of a materialized operand
SAME_ELEMENTS = "same_elements"
# a reducer made of this op alone may regroup and reorder its operands (as XLA:CPU does):
# reductions over it keep partial results and may be split into chunks
ASSOCIATIVE = "associative"
# the op acts on the world outside the program (infeed, outfeed, send, recv, ...): it is never
# dead code, and such ops run in their program order (lowering drops and reorders none)
SIDE_EFFECT = "side_effect"


@dataclass(frozen=True, slots=True)
class OpRule:
    opcode: str
    shape: Optional[ShapeRule] = None
    # elemental(kb, instr, index) -> kernel-IR expression of one output element (aotc.kernel.builder)
    elemental: Optional[Callable] = None
    # kernel(kb, instr, outs) -> builds a whole kernel in IR (dot, reduce, sort, ...)
    kernel: Optional[Callable] = None
    # scratch_bytes(instr, operand_shapes) -> bytes of arena scratch a kernel needs (a kernel
    # may also ask for scratch while it is built: KernelBuilder.need_scratch)
    scratch_bytes: Optional[Callable] = None
    # resolved structurally by lowering (parameter, tuple, call, ...): no code of its own
    structural: bool = False
    # kernel needs every operand in a buffer of its own (no fused producers)
    buffered_operands: bool = False
    # what lowering may assume of the op (the trait names above)
    traits: frozenset[str] = frozenset()
    # runs(instr) -> the computations the op runs as sub-programs (while, conditional): they
    # are lowered, callees first, before the kernel that runs them is built
    runs: Optional[Callable[[Instruction], tuple[str, ...]]] = None
    # epilogue(instr, operand_shapes) -> whether the kernel can apply elementwise consumers
    # to its output rows (a GEMM): it then finds them as `kb.epilogue` (fusion.py decides)
    epilogue: Optional[Callable[[Instruction, list[Shape]], bool]] = None
    # for opcode "custom-call": the custom_call_target this rule defines (custom_call.py)
    target: Optional[str] = None
    # expand(instr, operand_shapes, fresh) -> the plain instructions computing the op as one
    # device does, the last one named instr.name (`fresh`, an Expansion, gives unused names and
    # the module's computations), or None to keep it; lower/expand.py splices them in before inlining (collectives, asynchronous pairs,
    # sharding markers, dimension sizes). Raises Unsupported for what aotc cannot compile.
    expand: Optional[Callable[[Instruction, list[Shape], Expansion], Optional[list[Instruction]]]] = None

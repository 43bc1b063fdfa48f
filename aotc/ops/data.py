"""Structural op family: parameter, constant, tuple, get-tuple-element, call,
fusion, opt-barrier.

These have shape rules only; lowering resolves them structurally (inlining
calls, forwarding tuple elements, storing constants) before any kernel exists.
"""
from __future__ import annotations

from ..hlo.ir import Instruction
from ..hlo.shape import Shape, TupleShape
from .rule import IDENTITY, OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py


def _declared(instr: Instruction, shapes: list[Shape]) -> Shape:
    return instr.shape


def _tuple_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    return TupleShape(tuple(shapes))


def _gte_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    t = shapes[0]
    k = instr.attr("index")
    if not isinstance(t, TupleShape):
        raise ShapeError(f"get-tuple-element needs a tuple operand, got {t}")
    if k is None or not 0 <= k < len(t.elements):
        raise ShapeError(f"index={k} is out of range for a tuple of {len(t.elements)} elements")
    return t.elements[k]


def _constant_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    lit = instr.literal
    if lit is None:
        raise ShapeError("constant without a literal")
    if not lit.shape.same_logical(instr.shape):
        raise ShapeError(f"literal shape {lit.shape} does not match {instr.shape}")
    return instr.shape


def _opt_barrier_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) != 1:
        raise ShapeError("opt-barrier takes one operand")
    return shapes[0]


RULES.append(OpRule("parameter", shape=_declared, structural=True))
RULES.append(OpRule("constant", shape=_constant_shape, structural=True))
RULES.append(OpRule("tuple", shape=_tuple_shape, structural=True))
RULES.append(OpRule("get-tuple-element", shape=_gte_shape, structural=True))
RULES.append(OpRule("opt-barrier", shape=_opt_barrier_shape, structural=True, traits=frozenset({IDENTITY})))
# call/fusion results are checked against the callee's root by the verifier
RULES.append(OpRule("call", shape=_declared, structural=True))
RULES.append(OpRule("fusion", shape=_declared, structural=True))

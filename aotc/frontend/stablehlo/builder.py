"""Building HLO computations from StableHLO ops: the name supply, the values in scope,
instructions with their source locations, and blocks lowered op by op.

A `Builder` is one HLO computation under construction; a region's builder sees the
constants of the builders around it (cloned on use, as XLA's converter does) and the values
its op passed in explicitly, nothing else. Names are derived from SSA names (`%0` of an add
becomes `add.0`), made valid HLO names and unique in the module. What each op becomes is
decided by the handlers in `op_table` and `regions`.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from ...errors import AotcError
from ...hlo.ir import Computation, Instruction, Literal
from ...hlo.opcodes import Op
from ...hlo.shape import Shape, TupleShape
from .lexer import Lexer
from .pretty import TERMINATORS
from .syntax import Block, Op as MlirOp, Use
from .unsupported import refusal

_INVALID = re.compile(r"[^A-Za-z0-9_.\-]")


def hlo_name(text: str) -> str:
    """A valid HLO name spelled like `text`: other characters become '_'."""
    name = _INVALID.sub("_", text).strip(".-") or "v"
    return name if re.match(r"[A-Za-z_]", name) else "_" + name


class ModuleBuilder:
    """What the computations of one module share: the source, the names, the results."""

    def __init__(self, lx: Lexer, handlers: dict[str, Callable]):
        self.lx = lx
        self.handlers = handlers
        self.taken: set[str] = set()
        self.computations: list[Computation] = []
        self.funcs: dict[str, str] = {}  # MLIR function name -> computation name
        self.func_results: dict[str, tuple[Shape, ...]] = {}
        self.library: dict[str, str] = {}  # a shared computation's key -> its name (chlo.py)

    def fresh(self, base: str) -> str:
        name = hlo_name(base)
        if name not in self.taken:
            self.taken.add(name)
            return name
        i = 1
        while f"{name}.{i}" in self.taken:
            i += 1
        self.taken.add(f"{name}.{i}")
        return f"{name}.{i}"

    def error(self, message: str, pos: int) -> AotcError:
        return self.lx.error(message, pos)


class Builder:
    def __init__(self, mb: ModuleBuilder, name: str, parent: "Builder | None" = None, what: str = ""):
        self.mb = mb
        self.name = name
        self.parent = parent
        self.what = what  # the op owning this region, for errors
        self.instructions: list[Instruction] = []
        self.values: dict[str, tuple[str, Shape]] = {}
        self.constants: dict[str, Instruction] = {}

    # ------------------------------------------------------------ instructions
    def emit(self, opcode: Op, shape: Shape, operands: tuple[str, ...] = (), attrs: tuple = (), *,
             pos: int, base: str | None = None, ssa: str = "", literal: Literal | None = None,
             number: int | None = None) -> str:
        stem = base if base is not None else str(opcode)
        name = self.mb.fresh(f"{stem}.{ssa}" if ssa else stem)
        self.instructions.append(Instruction(name, opcode, shape, tuple(operands), tuple(attrs), literal, number,
                                             loc=self.mb.lx.loc(pos)))
        return name

    def emit_op(self, op: MlirOp, opcode: Op, operands: tuple[str, ...], attrs: tuple = (),
                shape: Shape | None = None) -> str:
        """The instruction an op becomes, its results bound (through get-tuple-element when
        it has several)."""
        if shape is None:
            shape = op.result_types[0] if len(op.result_types) == 1 else TupleShape(op.result_types)
        name = self.emit(opcode, shape, operands, attrs, pos=op.result_pos, ssa=op.ssa)
        self.bind(op, name, shape)
        return name

    def bind(self, op: MlirOp, name: str, shape: Shape) -> None:
        if len(op.result_types) == 1:
            self.values[op.results[0]] = (name, shape)
            return
        assert isinstance(shape, TupleShape)
        for i, (key, s) in enumerate(zip(op.results, shape.elements)):
            gte = self.emit(Op.GET_TUPLE_ELEMENT, s, (name,), (("index", i),), pos=op.result_pos,
                            ssa=key[1:].replace("#", "."))
            self.values[key] = (gte, s)

    def tuple_or_one(self, values: list[tuple[str, Shape]], pos: int, ssa: str = "") -> tuple[str, Shape]:
        if len(values) == 1:
            return values[0]
        shape = TupleShape(tuple(s for _, s in values))
        return self.emit(Op.TUPLE, shape, tuple(n for n, _ in values), pos=pos, ssa=ssa), shape

    # ------------------------------------------------------------ values
    def value(self, use: Use) -> tuple[str, Shape]:
        """The instruction holding `use`'s value here; an outer constant is cloned in."""
        found = self.values.get(use.key)
        if found is not None:
            return found
        outer = self.parent
        while outer is not None:
            if use.key in outer.values:
                const = outer.constants.get(use.key)
                if const is None:
                    raise self.mb.error(f"aotc cannot read a value captured by the region of {self.what} "
                                        f"yet ({use.key} is defined outside it)", use.pos)
                name = self.emit(Op.CONSTANT, const.shape, literal=const.literal, pos=use.pos, base=const.name)
                self.values[use.key] = (name, const.shape)
                self.constants[use.key] = self.instructions[-1]
                return name, const.shape
            outer = outer.parent
        raise self.mb.error(f"use of undefined value {use.key}", use.pos)

    def defined_outside(self, key: str) -> tuple[bool, bool]:
        """(defined by an enclosing builder, as a constant) for a region's free value."""
        outer = self.parent
        while outer is not None:
            if key in outer.values:
                return True, key in outer.constants
            outer = outer.parent
        return False, False

    def operands(self, op: MlirOp) -> list[tuple[str, Shape]]:
        return [self.value(u) for u in op.operands]

    # ------------------------------------------------------------ blocks
    def lower_block(self, block: Block, what: str) -> tuple[list[tuple[str, Shape]], int]:
        """Lower every op of `block`; returns the values its terminator returns and its offset."""
        for i, op in enumerate(block.ops):
            if op.name in TERMINATORS:
                if i != len(block.ops) - 1:
                    raise self.mb.error(f"{op.name} must be the last op of {what}", op.pos)
                return [self.value(u) for u in op.operands], op.pos
            handler = self.mb.handlers.get(op.name)
            if handler is None:
                raise self.mb.error(refusal(op.name) or f"aotc cannot read {op.name} yet", op.pos)
            handler(self, op)
        raise self.mb.error(f"{what} does not end with a return", block.pos)

    def finish(self, root: str, is_entry: bool = False, pos: int | None = None) -> Computation:
        comp = Computation(self.name, tuple(self.instructions), root, is_entry,
                           loc=None if pos is None else self.mb.lx.loc(pos))
        self.mb.computations.append(comp)
        return comp


def attr(op: MlirOp, key: str, default: Any = None) -> Any:
    return op.attrs.get(key, default)

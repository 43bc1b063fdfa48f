"""Finding what a config entry names in the ENTRY computation: a parameter by number, HLO
name, op_name or derived C name; an output by root tuple index or instruction name; a variable's
update; each with its concrete shape. Failures are errors located at the config entry (or the
module when there is no config); it assembles no signature.
"""
from __future__ import annotations

import difflib
import re

from ..errors import AotcError, located
from ..hlo.ir import Computation, Instruction, Module, Raw
from ..hlo.opcodes import Op
from ..hlo.shape import ArrayShape, Shape, TupleShape, subshape
from .c_names import derive_names
from .config import Config, Spot
from .config_reader import Id


def _op_name(instr: Instruction) -> str | None:
    """`metadata={op_name="x" ...}` of an instruction, if any."""
    meta = instr.attr("metadata")
    if isinstance(meta, dict):
        value = meta.get("op_name")
        return value if isinstance(value, str) else None
    text = meta.text if isinstance(meta, Raw) else meta if isinstance(meta, str) else ""
    m = re.search(r'op_name="((?:[^"\\]|\\.)*)"', text)
    return m.group(1) if m else None


class EntryLookup:
    """The ENTRY computation of `module` as `config` refers to it."""

    def __init__(self, module: Module, config: Config | None):
        self.module = module
        self.config = config
        self.entry: Computation = module.entry_computation
        self.params: list[Instruction] = list(self.entry.parameters)
        self.root = self.entry.root_instruction
        self.param_names = derive_names([p.name for p in self.params])  # default names, params alone
        self.aliases: dict[int, tuple[int, ...]] = {}
        for a in module.aliases:
            if a.param_index == () and a.param_number not in self.aliases:
                self.aliases[a.param_number] = a.output_index

    # ------------------------------------------------------------ errors

    def fail(self, message: str, spot: Spot | None, key: str | None = None) -> AotcError:
        if self.config is None or spot is None:
            return AotcError(message, file=self.module.source)
        path, loc = spot.at(key)
        return self.config.error(message, path, loc)

    # ------------------------------------------------------------ shapes

    def param_shape(self, p: Instruction, spot: Spot | None, key: str | None = None) -> ArrayShape:
        n = p.parameter_number or 0
        shape: Shape = p.shape
        if self.module.entry_params is not None and n < len(self.module.entry_params):
            laid = self.module.entry_params[n]
            if isinstance(laid, ArrayShape) and laid.same_logical(shape):
                shape = laid if laid.layout is not None else laid.with_layout(p.shape.layout)  # type: ignore[union-attr]
        if isinstance(shape, ArrayShape) and not shape.is_token:
            return _concrete(shape)
        message = (f"parameter {p.name} has {'tuple' if isinstance(shape, TupleShape) else 'token'} shape "
                   f"{shape.text(False)}; feeds, variables and bound parameters must be arrays")
        if spot is None and self.config is None:
            raise located(message, p.loc)
        raise self.fail(message, spot, key)

    def output_shape(self, instr: Instruction, index: tuple[int, ...]) -> Shape:
        """A value's shape, with the entry result layout for outputs of the root."""
        shape = subshape(instr.shape, index)
        if instr.name == self.root.name and self.module.entry_result is not None \
                and self.module.entry_result.same_logical(self.root.shape):
            shape = subshape(self.module.entry_result, index)
        return _concrete(shape) if isinstance(shape, ArrayShape) and not shape.is_token else shape

    # ------------------------------------------------------------ lookups

    def param(self, ident: Id, spot: Spot) -> Instruction:
        if isinstance(ident, int):
            if ident >= len(self.params):
                raise self.fail(f"no parameter {ident}: ENTRY {self.entry.name} has {len(self.params)} "
                                f"parameter{'s' if len(self.params) != 1 else ''}", spot, "id")
            return self.params[ident]
        if self.entry.has(ident):
            instr = self.entry.get(ident)
            if instr.opcode != Op.PARAMETER:
                raise self.fail(f"{ident} is not a parameter of ENTRY {self.entry.name} (it is a {instr.opcode})",
                                spot, "id")
            return instr
        by_op = [p for p in self.params if _op_name(p) == ident]
        if len(by_op) > 1:
            raise self.fail(f"op_name '{ident}' matches several parameters: "
                            + ", ".join(p.name for p in by_op) + "; use the parameter number", spot, "id")
        if by_op:
            return by_op[0]
        if ident in self.param_names:
            return self.params[self.param_names.index(ident)]
        choices = [p.name for p in self.params]
        near = difflib.get_close_matches(ident, choices + self.param_names, n=1)
        hint = f" (did you mean {near[0]}?)" if near else f" (parameters: {', '.join(choices)})" if choices else ""
        raise self.fail(f"no parameter named '{ident}'{hint}", spot, "id")

    def root_index(self, k: int, spot: Spot, key: str) -> tuple[int, ...]:
        if isinstance(self.root.shape, TupleShape):
            n = len(self.root.shape.elements)
            if k >= n:
                raise self.fail(f"no output {k}: ROOT {self.root.name} has {n} element{'s' if n != 1 else ''}",
                                spot, key)
            return (k,)
        if k != 0:
            raise self.fail(f"no output {k}: ROOT {self.root.name} is a single array "
                            f"{self.root.shape.text(False)}; its index is 0", spot, key)
        return ()

    def instruction(self, ident: str, spot: Spot, key: str) -> Instruction:
        if self.entry.has(ident):
            return self.entry.get(ident)
        names = [i.name for i in self.entry.instructions]
        near = difflib.get_close_matches(ident, names, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise self.fail(f"no instruction named '{ident}' in ENTRY {self.entry.name}{hint}", spot, key)

    def output_of(self, ident: Id, spot: Spot, key: str) -> tuple[Instruction, tuple[int, ...], ArrayShape]:
        """A fetch id: root tuple index, or the name of an ENTRY instruction."""
        if isinstance(ident, int):
            instr, index = self.root, self.root_index(ident, spot, key)
        else:
            instr, index = self.instruction(ident, spot, key), ()
        shape = self.output_shape(instr, index)
        if isinstance(shape, TupleShape) or shape.is_token:
            what = f"output {ident} of ROOT {self.root.name}" if isinstance(ident, int) else f"instruction {instr.name}"
            raise self.fail(f"{what} has {'tuple' if isinstance(shape, TupleShape) else 'token'} shape "
                            f"{shape.text(False)}; fetches must be arrays", spot, key)
        return instr, index, shape

    def update_index(self, ident: Id, spot: Spot) -> tuple[int, ...]:
        """The root shape index named by a variable's `update:`."""
        if isinstance(ident, int):
            return self.root_index(ident, spot, "update")
        if ident == self.root.name:
            return ()
        if self.root.opcode == Op.TUPLE and ident in self.root.operands:
            return (self.root.operands.index(ident),)
        self.instruction(ident, spot, "update")
        raise self.fail(f"{ident} is not an output of ROOT {self.root.name}; only outputs can update a variable",
                        spot, "update")

    def leaf_source(self, index: tuple[int, ...]) -> str:
        """The HLO name a root output is derived from: the tuple operand that produces it."""
        instr = self.root
        rest = index
        while rest and instr.opcode == Op.TUPLE and self.entry.has(instr.operands[rest[0]]):
            instr = self.entry.get(instr.operands[rest[0]])
            rest = rest[1:]
        return instr.name + "".join(f"_{i}" for i in rest)


def _concrete(shape: ArrayShape) -> ArrayShape:
    """The shape with its layout spelled out (row-major when none was printed)."""
    return shape if shape.layout is not None else shape.with_layout(shape.minor_to_major)

"""Sub-programs: computations that control flow (`while`, `conditional`) runs.

Each such computation is lowered by the same pipeline into a `Program` of its
own, with its tuple parameter flattened into array arguments and its root's
leaves as results; the parent calls its execute function with a slice of its
own arena. Lowered once per computation and shared by every caller.
"""
from __future__ import annotations

from ..errors import located
from ..hlo.ir import Computation, Instruction, Module
from ..hlo.shape import ArrayShape, leaves
from ..frontend.signature import Feed, Fetch, Signature
from .names import NameSupply
from ..hlo.opcodes import Op


def flatten_parameters(comp: Computation) -> tuple[Computation, list[tuple[str, ArrayShape]]]:
    """Replace each tuple-shaped parameter by array parameters plus a `tuple` of them
    under the old name (simplification then forwards every get-tuple-element)."""
    taken = {i.name for i in comp.instructions}
    out: list[Instruction] = []
    params: list[tuple[str, ArrayShape]] = []
    number = 0
    for p in comp.parameters:
        if isinstance(p.shape, ArrayShape):
            out.append(p.with_(parameter_number=number))
            params.append((p.name, p.shape))
            number += 1
            continue

        def expand(name: str, shape) -> str:
            nonlocal number
            if isinstance(shape, ArrayShape):
                leaf = name
                while leaf in taken:
                    leaf += "_"
                taken.add(leaf)
                out.append(Instruction(leaf, "parameter", shape, (), (), None, number, p.loc))
                params.append((leaf, shape))
                number += 1
                return leaf
            parts = tuple(expand(f"{name}.{k}", s) for k, s in enumerate(shape.elements))
            if name == p.name:
                out.append(Instruction(name, "tuple", shape, parts, loc=p.loc))
                return name
            t = name
            while t in taken:
                t += "_"
            taken.add(t)
            out.append(Instruction(t, "tuple", shape, parts, loc=p.loc))
            return t

        expand(p.name, p.shape)
    body = [i for i in comp.instructions if i.opcode != Op.PARAMETER]
    return Computation(comp.name, tuple(out + body), comp.root, True, comp.has_signature, comp.loc), params


class SubPrograms:
    """Lowers and caches the Program of each computation control flow calls."""

    def __init__(self, module: Module, parent: str, target: str, source: str, source_text: str | None,
                 names: NameSupply, lower_fn):
        self.module = module
        self.parent = parent
        self.names = names
        self.lower_fn = lower_fn  # the pipeline's `lower`, injected: no import cycle
        self.target = target
        self.source = source
        self.source_text = source_text
        self.programs: dict[str, object] = {}

    def get(self, comp_name: str):
        if comp_name in self.programs:
            prog = self.programs[comp_name]
            if prog is None:
                comp = self.module.computation(comp_name)
                raise located(f"computation {comp_name} calls itself through control flow", comp.loc,
                              self.source_text)
            return prog
        self.programs[comp_name] = None  # recursion guard
        self.programs[comp_name] = prog = self._lower(comp_name)
        return prog

    def _lower(self, comp_name: str):
        comp = self.module.computation(comp_name)
        flat, params = flatten_parameters(comp)
        feeds = tuple(Feed(k, f"p{k}", k, shape, name) for k, (name, shape) in enumerate(params))
        fetches = tuple(Fetch(k, f"r{k}", flat.root, idx, shape)
                        for k, (idx, shape) in enumerate(leaves(comp.root_instruction.shape)))
        comps = tuple(flat if c.name == comp_name else
                      Computation(c.name, c.instructions, c.root, False, c.has_signature, c.loc)
                      for c in self.module.computations)
        m = self.module.with_computations(comps, entry=comp_name)
        name = self.names.program(self.parent, comp_name)
        return self.lower_fn(m, Signature(feeds, fetches), name=name, source=self.source, target=self.target,
                     source_text=self.source_text, names=self.names).program

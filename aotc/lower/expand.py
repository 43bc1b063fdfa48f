"""Expansion to one device: every instruction whose op rule has an `expand` (collectives,
asynchronous pairs, sharding markers, dimension sizes) is replaced by the plain instructions
that compute it on one device, under its own name, in every computation. Shapes with a bounded
dynamic dimension pass through: lower/dynamic.py, after inlining, bounds them or refuses them.
"""
from __future__ import annotations

from ..errors import located
from ..hlo.ir import Computation, Instruction, Module
from ..ops.registry import rule
from ..ops.rule import Expansion, Unsupported
from ..hlo.ir import name_maker


def expand_one_device(m: Module, source_text: str | None = None) -> Module:
    names = name_maker(m)
    comps = []
    for comp in m.computations:
        fresh = Expansion(names, m, comp)
        shapes = {i.name: i.shape for i in comp.instructions}
        out: list[Instruction] = []
        changed = False
        for ins in comp.instructions:
            r = rule(ins.opcode)
            new = None
            if r is not None and r.expand is not None:
                try:
                    new = r.expand(ins, [shapes[o] for o in ins.operands], fresh)
                except Unsupported as e:
                    raise located(str(e), ins.loc, source_text) from None
            if new is None:
                out.append(ins)
            else:
                assert new[-1].name == ins.name, f"expanding {ins.name} must end with its own name"
                out.extend(new)
                changed = True
        comps.append(Computation(comp.name, tuple(out), comp.root, comp.is_entry, comp.has_signature, comp.loc)
                     if changed else comp)
    return m.with_computations(tuple(comps))

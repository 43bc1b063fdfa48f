"""Inlining: splices the bodies of `call` and `fusion` into their callers.

After this pass no computation calls another through call/fusion; computations
still referenced as reducers or comparators (`to_apply`) remain. Returns the
module and a map from each removed call's name to the instruction that now
holds its value, so references by name (config fetches) can follow.
"""
from __future__ import annotations

from ..hlo.ir import Computation, Instruction, Module
from .order import name_maker, topo_order

INLINED = ("call", "fusion")


def inline_calls(m: Module) -> tuple[Module, dict[str, str]]:
    unique = name_maker(m)
    done: dict[str, Computation] = {}
    renamed: dict[str, str] = {}

    def expand(comp: Computation, at_entry: bool) -> Computation:
        out: list[Instruction] = []
        subst: dict[str, str] = {}
        for ins in topo_order(comp):
            ins = ins.with_(operands=tuple(subst.get(o, o) for o in ins.operands))
            if ins.opcode not in INLINED:
                out.append(ins)
                continue
            callee = expand(m.computation(ins.called_computations()[0]), False)
            rename: dict[str, str] = {}
            for ci in callee.instructions:
                if ci.opcode == "parameter":
                    rename[ci.name] = ins.operands[ci.parameter_number]
                    continue
                new = unique(f"{ins.name}.{ci.name}")
                rename[ci.name] = new
                out.append(ci.with_(name=new, operands=tuple(rename[o] for o in ci.operands)))
            subst[ins.name] = rename[callee.root]
            if at_entry:
                renamed[ins.name] = rename[callee.root]
        root = subst.get(comp.root, comp.root)
        return Computation(comp.name, tuple(out), root, comp.is_entry, comp.has_signature, comp.loc)

    comps = []
    for c in m.computations:
        if c.name not in done:
            done[c.name] = expand(c, c.is_entry)
        comps.append(done[c.name])
    # drop computations only reachable through the inlined calls
    used = {m.entry}
    for c in comps:
        for i in c.instructions:
            used.update(i.called_computations())
    reach, todo = set(), [m.entry]
    by_name = {c.name: c for c in comps}
    while todo:
        n = todo.pop()
        if n in reach:
            continue
        reach.add(n)
        for i in by_name[n].instructions:
            todo.extend(i.called_computations())
    return m.with_computations(tuple(c for c in comps if c.name in reach)), renamed

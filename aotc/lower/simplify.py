"""Simplification: forward identities and tuple plumbing, drop dead code.

`copy` and `opt-barrier` are logical identities; `get-tuple-element` of a
`tuple` is its element, and one that reaches a tuple-shaped producer (a
`while`) through tuples reads that producer directly. What remains is the arithmetic the program needs for
its live values (fetches and variable updates) and the ops that act (infeed, outfeed, ...).
Value references are
`(instruction name, shape index)` pairs; `resolve` follows tuples to leaves.
"""
from __future__ import annotations

from ..hlo.ir import Computation, Module
from ..ops.registry import IDENTITY, has, side_effect
from ..hlo.opcodes import Op

ValueRef = tuple[str, tuple[int, ...]]


def resolve(comp: Computation, ref: ValueRef) -> ValueRef:
    """Follow tuple/get-tuple-element/identity chains to the instruction producing the leaf."""
    name, idx = ref
    while True:
        ins = comp.get(name)
        if ins.opcode == Op.TUPLE and idx:
            name, idx = ins.operands[idx[0]], idx[1:]
        elif ins.opcode == Op.GET_TUPLE_ELEMENT:
            name, idx = ins.operands[0], (ins.attr("index"),) + idx
        elif has(ins.opcode, IDENTITY):
            name = ins.operands[0]
        else:
            return name, idx


def simplify(m: Module, live: list[ValueRef]) -> tuple[Module, list[ValueRef]]:
    """Forward identities and tuple elements in the entry computation; keep what `live` needs."""
    entry = m.entry_computation
    new_live = [resolve(entry, r) for r in live]
    out = []
    subst: dict[str, str] = {}
    element: dict[ValueRef, str] = {}  # (producer, index) -> the get-tuple-element kept for it
    for ins in entry.instructions:
        ops = tuple(subst.get(o, o) for o in ins.operands)
        ins = ins.with_(operands=ops)
        if has(ins.opcode, IDENTITY) or (ins.opcode == Op.GET_TUPLE_ELEMENT):
            target, idx = resolve(entry, (ins.name, ()))
            if not idx:
                subst[ins.name] = target
                continue
            if (target, idx) in element:  # another name for an element already read
                subst[ins.name] = element[(target, idx)]
                continue
            if ins.opcode == Op.GET_TUPLE_ELEMENT:
                # read the element from its producer, not through the tuples that re-packed it
                # (a while's results re-tupled by an inlined call); a nested element reads the
                # kept get-tuple-element of its parent
                parent = target if len(idx) == 1 else element.get((target, idx[:-1]))
                if parent is not None:
                    ins = ins.with_(operands=(parent,), attrs=tuple((k, idx[-1] if k == "index" else v)
                                                                    for k, v in ins.attrs))
                element[(target, idx)] = ins.name
        out.append(ins)
    by_name = {i.name: i for i in out}
    keep: set[str] = set()
    todo = [n for n, _ in new_live] + [i.name for i in out if side_effect(i)]  # what acts is never dead
    while todo:
        n = todo.pop()
        if n in keep:
            continue
        keep.add(n)
        todo.extend(by_name[n].operands)
    params = [i for i in out if i.opcode == Op.PARAMETER]
    body = tuple(i for i in out if i.name in keep or i.opcode == Op.PARAMETER)
    root = new_live[0][0] if new_live else (params[0].name if params else entry.root)
    comp = Computation(entry.name, body, root, True, entry.has_signature, entry.loc)
    comps = tuple(comp if c.name == entry.name else c for c in m.computations)
    return m.with_computations(comps), new_live

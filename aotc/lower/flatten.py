"""Flat results for ops that act: an infeed, send, recv or recv-done whose value nests tuples
(`((f32[4], s32[]), token[])`) becomes one instruction of the flat tuple of its leaves and
`tuple`s rebuilding the nesting under the old name, so its kernel writes one buffer per
leaf. Simplification then forwards the tuple plumbing. Other instructions are unchanged.
"""
from __future__ import annotations

from ..hlo.ir import Computation, Instruction, Module
from ..hlo.opcodes import Op
from ..hlo.shape import TupleShape
from ..hlo.ir import name_maker

_FLATTENED = (Op.INFEED, Op.SEND, Op.RECV, Op.RECV_DONE)


def _nested(shape) -> bool:
    return isinstance(shape, TupleShape) and any(isinstance(e, TupleShape) for e in shape.elements)


def flatten_feeds(m: Module) -> Module:
    """`m` with the entry computation's nested-tuple feeds flattened (see above)."""
    entry = m.entry_computation
    if not any(i.opcode in _FLATTENED and _nested(i.shape) for i in entry.instructions):
        return m
    fresh = name_maker(m)
    out: list[Instruction] = []
    parts: dict[str, tuple[str, ...]] = {}  # a rebuilt tuple -> its element instructions
    made: dict[str, Instruction] = {}  # the instructions the rebuild made, by name
    for ins in entry.instructions:
        if ins.opcode == Op.GET_TUPLE_ELEMENT and ins.operands[0] in parts:
            # an element of a rebuilt tuple: that element itself, under this name
            part = made[parts[ins.operands[0]][ins.attr("index")]]
            out.append(part.with_(name=ins.name, loc=ins.loc))
            if part.name in parts:
                parts[ins.name] = parts[part.name]
            made[ins.name] = out[-1]
            continue
        if ins.opcode not in _FLATTENED or not _nested(ins.shape):
            out.append(ins)
            continue
        leaves = ins.shape.leaves()
        flat = fresh(f"{ins.name}.flat")
        out.append(ins.with_(name=flat, shape=TupleShape(tuple(s for _, s in leaves))))
        position = {idx: k for k, (idx, _) in enumerate(leaves)}

        def rebuild(shape, idx: tuple[int, ...], name: str | None) -> str:
            if not isinstance(shape, TupleShape):
                leaf = fresh(f"{ins.name}.leaf")
                out.append(Instruction(leaf, "get-tuple-element", shape, (flat,), (("index", position[idx]),),
                                       loc=ins.loc))
                made[leaf] = out[-1]
                return leaf
            elems = tuple(rebuild(e, idx + (k,), None) for k, e in enumerate(shape.elements))
            t = name or fresh(f"{ins.name}.tuple")
            out.append(Instruction(t, "tuple", shape, elems, loc=ins.loc))
            made[t], parts[t] = out[-1], elems
            return t

        rebuild(ins.shape, (), ins.name)
    comp = Computation(entry.name, tuple(out), entry.root, True, entry.has_signature, entry.loc)
    return m.with_computations(tuple(comp if c.is_entry else c for c in m.computations))

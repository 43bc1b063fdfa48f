"""Tuple-shaped entry parameters, flattened: each array leaf of a tuple parameter becomes an
entry parameter of its own, numbered in order (depth first) among the others, named after the
tuple and its shape index (`p_0`, `p_1_0`, ...), and the tuple is rebuilt from them with `tuple`
instructions under its own name. The generated API then takes one array per leaf, as feeds,
variables or bound parameters like any other; the entry layout and input_output_alias follow.
It changes nothing else and never looks at what the computation does.
"""
from __future__ import annotations

from dataclasses import replace

from ..hlo.ir import Alias, Computation, Instruction, Module, name_maker
from ..hlo.opcodes import Op
from ..hlo.shape import Shape, TupleShape, leaves


def flatten_tuple_parameters(m: Module) -> Module:
    """`m` with every tuple-shaped ENTRY parameter replaced by one parameter per leaf."""
    entry = m.entry_computation
    params = entry.parameters
    if not any(isinstance(p.shape, TupleShape) for p in params):
        return m
    fresh = name_maker(m, "_")

    first: dict[int, int] = {}  # old parameter number -> number of its first leaf
    count = 0
    for p in params:
        first[p.parameter_number or 0] = count
        count += len(leaves(p.shape)) if isinstance(p.shape, TupleShape) else 1
    out: list[Instruction] = []
    for ins in entry.instructions:
        if ins.opcode != Op.PARAMETER:
            out.append(ins)
        elif not isinstance(ins.shape, TupleShape):
            out.append(ins.with_(parameter_number=first[ins.parameter_number or 0]))
        else:
            out.extend(_rebuilt(ins, first[ins.parameter_number or 0], fresh))
    comp = Computation(entry.name, tuple(out), entry.root, True, entry.has_signature, entry.loc)
    comps = tuple(comp if c.name == entry.name else c for c in m.computations)
    layout = None
    if m.entry_params is not None:
        layout = tuple(s for laid in m.entry_params for s in _flat(laid))
    aliases = []
    for a in m.aliases:
        laid = params[a.param_number].shape if a.param_number < len(params) else None
        if not isinstance(laid, TupleShape):
            aliases.append(Alias(a.output_index, first.get(a.param_number, a.param_number), a.param_index, a.kind))
            continue
        for k, (index, _) in enumerate(leaves(laid)):  # each leaf under the aliased index
            if index[:len(a.param_index)] == a.param_index:
                aliases.append(Alias(a.output_index + index[len(a.param_index):], first[a.param_number] + k, (),
                                     a.kind))
    return replace(m.with_computations(comps), entry_params=layout, aliases=tuple(aliases))


def _flat(shape: Shape) -> list[Shape]:
    return [s for _, s in leaves(shape)] if isinstance(shape, TupleShape) else [shape]


def _rebuilt(p: Instruction, number: int, fresh) -> list[Instruction]:
    """The leaf parameters of tuple parameter `p` (numbered from `number`) and the tuples that
    put them back together, the outermost named `p.name`."""
    out: list[Instruction] = []

    def build(shape: TupleShape, name: str, index: tuple[int, ...]) -> None:
        parts = []
        for k, e in enumerate(shape.elements):
            sub = index + (k,)
            part = fresh(f"{p.name}_{'_'.join(map(str, sub))}")
            if isinstance(e, TupleShape):
                build(e, part, sub)
            else:
                out.append(Instruction(part, Op.PARAMETER, e, parameter_number=number + len(
                    [i for i in out if i.opcode == Op.PARAMETER]), loc=p.loc))
            parts.append(part)
        out.append(Instruction(name, Op.TUPLE, shape, tuple(parts), loc=p.loc))

    build(p.shape, p.name, ())
    return out

"""Sub-programs: computations that control flow (`while`, `conditional`) runs, lowered
in a stage of their own before the kernels that run them are built.

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
from ..ops.registry import rule
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


MAX_CONTROL_DEPTH = 200  # each level lowers through the pipeline again (Python frames)


def lower_control_flow(m: Module, comp: Computation, kernels: tuple[str, ...], parent: str, target: str,
                       source: str, source_text: str | None, names: NameSupply, programs: dict,
                       lower_fn) -> dict[str, object]:
    """Lower, before `comp`'s kernels are built, every computation its kernels run as
    control flow (op rules' `runs`): each through the pipeline (`lower_fn`), which lowers
    its own callees first, so sub-programs come out callees first. `programs` is shared by
    the whole lowering (computation -> Program, None while one is being lowered): each
    computation is lowered once, and one that runs itself is a located error. Returns
    the sub-programs `comp` runs, by computation name."""
    out: dict[str, object] = {}
    for kname in kernels:
        r = rule(comp.get(kname).opcode)
        if comp.get(kname).opcode == Op.WHILE:
            _refuse_rng_in_loop(m, comp.get(kname), source_text)
        for callee in (r.runs(comp.get(kname)) if r is not None and r.runs is not None else ()):
            if callee not in programs and sum(p is None for p in programs.values()) >= MAX_CONTROL_DEPTH:
                raise located(f"control flow nested more than {MAX_CONTROL_DEPTH} levels deep (loop and branch "
                              f"bodies within each other): {comp.get(kname).opcode} {kname} runs {callee}",
                              comp.get(kname).loc, source_text)
            if callee not in programs:
                programs[callee] = None  # in progress: meeting it again is a cycle
                programs[callee] = _lower(m, callee, parent, target, source, source_text, names, programs,
                                          lower_fn)
            if programs[callee] is None:
                c = m.computation(callee)
                raise located(f"computation {callee} calls itself through control flow", c.loc, source_text)
            out[callee] = programs[callee]
    return out


def _refuse_rng_in_loop(m: Module, loop: Instruction, source_text: str | None) -> None:
    """aotc's `rng` gives the same values on every run (ops/random.py): in a loop every trip
    would repeat them, where XLA draws fresh ones, so a loop reaching one is refused."""
    todo, seen = list(loop.called_computations()), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for ins in m.computation(name).instructions:
            if ins.opcode == Op.RNG:
                raise located(f"rng {ins.name} runs in the loop {loop.name}: aotc's rng gives the same values on "
                              "every run, so each trip would repeat them (use rng-bit-generator with a state "
                              "the loop carries)", ins.loc or loop.loc, source_text)
            todo.extend(ins.called_computations())


def _lower(module: Module, comp_name: str, parent: str, target: str, source: str, source_text: str | None,
           names: NameSupply, programs: dict, lower_fn):
    comp = module.computation(comp_name)
    flat, params = flatten_parameters(comp)
    feeds = tuple(Feed(k, f"p{k}", k, shape, name) for k, (name, shape) in enumerate(params))
    fetches = tuple(Fetch(k, f"r{k}", flat.root, idx, shape)
                    for k, (idx, shape) in enumerate(leaves(comp.root_instruction.shape)))
    comps = tuple(flat if c.name == comp_name else
                  Computation(c.name, c.instructions, c.root, False, c.has_signature, c.loc)
                  for c in module.computations)
    m = module.with_computations(comps, entry=comp_name)
    return lower_fn(m, Signature(feeds, fetches), name=names.program(parent, comp_name), source=source,
                    target=target, source_text=source_text, names=names, programs=programs).program

"""Fusion instructions: the fusion plan made explicit in the HLO IR, as XLA does.

Every kernel that computes fused producers becomes a `fusion` instruction of the entry
computation, named after the instruction it materializes and calling a computation
`fused_<name>` that holds those producers under their own names (so kernels keep their
provenance), one parameter per materialized value it reads (named after that value) and
clones of the scalar constants it uses. `kind` says what the kernel is: kLoop (a loop
over the output), kInput (a reduction or another kernel-rule op reading fused
producers) or kOutput (a GEMM hero whose elementwise consumers are its epilogue).
The entry keeps parameters, constants, views, tuples, bare kernels and fusions, in
schedule order. Nothing here decides what fuses (fusion.py does) or builds kernels.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..hlo.ir import Computation, Instruction, Module
from ..hlo.opcodes import Op
from ..ops.registry import rule

LOOP, INPUT, OUTPUT = "kLoop", "kInput", "kOutput"


@dataclass(frozen=True, slots=True)
class Fused:
    """The fused module and what lowering needs to know of its entry."""

    module: Module
    roles: dict[str, str]  # entry instruction -> param | const | scalar | kernel | view | tuple
    order: tuple[str, ...]  # the kernels (bare or fusion), in execution order
    heroes: dict[str, str]  # kOutput fusion -> its GEMM hero inside the fused computation


def form_fusions(m: Module, comp: Computation, roles: dict[str, str], order: tuple[str, ...],
                 epilogues: dict[str, str]) -> Fused:
    """`roles` of `comp` (the entry) from the fusion plan, `epilogues` root -> hero."""
    taken = {c.name for c in m.computations}
    fused_comps: list[Computation] = []
    replaced: dict[str, Instruction] = {}
    for name in order:
        ins = comp.get(name)
        members = _members(comp, ins, roles)
        if not any(roles[i.name] == "fused" for i in members):
            continue  # a bare kernel: nothing fused into it
        cname = _fresh(f"fused_{name}", taken)
        fc, operands = _computation(comp, cname, members, ins, roles)
        fused_comps.append(fc)
        kind = OUTPUT if name in epilogues else (INPUT if _reads_rows(fc) else LOOP)
        replaced[name] = Instruction(name, Op.FUSION, ins.shape, operands, (("kind", kind), ("calls", cname)),
                                     loc=ins.loc)
    kept: list[Instruction] = []
    used: set[str] = set()
    for ins in comp.instructions:
        if roles[ins.name] == "fused":
            continue
        ins = replaced.get(ins.name, ins)
        kept.append(ins)
        used.update(ins.operands)
    used.add(comp.root)
    # scalar constants read only inside fusions now live there
    kept = [i for i in kept if roles[i.name] != "scalar" or i.name in used]
    entry = Computation(comp.name, tuple(kept), comp.root, True, comp.has_signature, comp.loc)
    comps = tuple(entry if c.is_entry else c for c in m.computations) + tuple(fused_comps)
    out_roles = {i.name: roles[i.name] for i in kept}
    return Fused(m.with_computations(comps), out_roles, order, dict(epilogues))


def _members(comp: Computation, root: Instruction, roles: dict[str, str]) -> list[Instruction]:
    """`root` and the fused producers it computes, in the computation's order (with the
    tuples it reads, so the kernel sees their elements)."""
    seen = {root.name}
    todo = list(root.operands)
    while todo:
        n = todo.pop()
        if n in seen or roles.get(n) not in ("fused", "tuple"):
            continue
        seen.add(n)
        todo.extend(comp.get(n).operands)
    return [i for i in comp.instructions if i.name in seen]


def _computation(comp: Computation, cname: str, members: list[Instruction], root: Instruction,
                 roles: dict[str, str]) -> tuple[Computation, tuple[str, ...]]:
    """The fused computation and the fusion's operands (one per parameter, in the order
    the kernel first reads them, breadth first from the root)."""
    inside = {i.name for i in members}
    params: list[Instruction] = []
    consts: list[Instruction] = []
    operands: list[str] = []
    seen: set[str] = set()
    outside: set[str] = set()
    todo = [root.name]
    while todo:
        n = todo.pop(0)
        if n in seen:
            continue
        seen.add(n)
        for o in comp.get(n).operands:
            if o in inside:
                todo.append(o)
                continue
            if o in outside:
                continue
            outside.add(o)
            src = comp.get(o)
            if roles[o] == "scalar":
                consts.append(src)
                continue
            params.append(Instruction(o, Op.PARAMETER, src.shape, parameter_number=len(params), loc=src.loc))
            operands.append(o)
    body = tuple(params) + tuple(consts) + tuple(members)
    return Computation(cname, body, root.name, False, False, root.loc), tuple(operands)


def _reads_rows(fc: Computation) -> bool:
    """Whether a fused computation reads values other than at its own index (a reduction
    or another op with a kernel rule of its own)."""
    for i in fc.instructions:
        r = rule(i.opcode)
        if i.opcode == Op.REDUCE or (r is not None and r.kernel is not None and i.name == fc.root):
            return True
    return False


def _fresh(base: str, taken: set[str]) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}.{k}", k + 1
    taken.add(name)
    return name


def fused_computation(m: Module, ins: Instruction) -> Computation | None:
    """The computation a fusion instruction calls (None for a bare kernel)."""
    return m.computation(ins.attr("calls")) if ins.opcode == Op.FUSION else None


def unfused_instructions(m: Module, comp: Computation) -> dict[str, Instruction]:
    """The instructions of `comp` by name, each fusion replaced by what it fuses (its root
    keeps the fusion's name; its parameters are the values named after them)."""
    out = {i.name: i for i in comp.instructions}
    for i in comp.instructions:
        fc = fused_computation(m, i)
        if fc is not None:
            out.update((j.name, j) for j in fc.instructions if j.opcode != Op.PARAMETER)
    return out


def kernel_op(m: Module, ins: Instruction, heroes: dict[str, str]) -> Instruction:
    """The instruction whose op rule builds the kernel of `ins`: the hero of a kOutput
    fusion, the root of another fusion, `ins` itself for a bare kernel."""
    fc = fused_computation(m, ins)
    if fc is None:
        return ins
    return fc.get(heroes[ins.name]) if ins.name in heroes else fc.root_instruction

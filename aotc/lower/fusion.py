"""Fusion: decide which instructions get a buffer and which are computed inline.

Each instruction gets one role:
- `param` / `const` (array constant) / `scalar` (scalar constant, a C literal);
- `kernel`: materialized by a kernel of its own, which inlines its fused producers;
- `view`: shares its operand's buffer (row-major reshape, tuple element of a
  multi-output kernel);
- `fused`: computed inside every kernel that consumes it, no buffer.
An elementwise value used by two kernels is materialized rather than computed
twice; cheap index-mapping ops (broadcast, iota, slice, ...) are duplicated.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import located
from ..hlo.ir import Computation
from ..hlo.shape import ArrayShape
from ..ops.registry import rule

CHEAP = frozenset({"broadcast", "iota", "reshape", "slice", "transpose", "reverse", "copy"})


@dataclass(frozen=True, slots=True)
class FusionPlan:
    roles: dict[str, str]  # instruction name -> role
    order: tuple[str, ...]  # schedule: the kernel instructions, in execution order


def plan_fusion(comp: Computation, live: set[str], source: str | None = None) -> FusionPlan:
    order = list(comp.instructions)  # already topologically ordered
    users: dict[str, list[str]] = {i.name: [] for i in order}
    for i in order:
        for o in dict.fromkeys(i.operands):
            users[o].append(i.name)
    roles: dict[str, str] = {}
    for ins in order:
        r = rule(ins.opcode)
        if ins.opcode == "parameter":
            roles[ins.name] = "param"
        elif ins.opcode == "constant":
            roles[ins.name] = "scalar" if isinstance(ins.shape, ArrayShape) and ins.shape.rank == 0 else "const"
        elif ins.opcode == "get-tuple-element":
            roles[ins.name] = "view"
        elif ins.opcode == "tuple":
            roles[ins.name] = "tuple"  # no buffer: its users see its elements' buffers
        elif r is None or (r.elemental is None and r.kernel is None):
            raise located(f"aotc cannot compile '{ins.opcode}' yet (instruction {ins.name})", ins.loc, source)
        elif r.kernel is not None:
            roles[ins.name] = "kernel"
        else:
            roles[ins.name] = "fused"
    # operands of kernels that need memory
    for ins in order:
        r = rule(ins.opcode)
        if r is not None and r.buffered_operands:
            todo = list(ins.operands)
            while todo:
                o = todo.pop()
                if roles[o] == "fused":
                    roles[o] = "kernel"
                elif roles[o] == "scalar":
                    roles[o] = "const"
                elif roles[o] == "tuple":
                    todo.extend(comp.get(o).operands)
    for n in live:
        if roles[n] == "fused":
            roles[n] = "kernel"
        elif roles[n] == "scalar":
            roles[n] = "const"
    # reverse topological: materialize values that more than one kernel would recompute
    reach: dict[str, set[str]] = {}
    for ins in reversed(order):
        n = ins.name
        roots: set[str] = set()
        for u in users[n]:
            roots |= {u} if roles[u] != "fused" else reach.get(u, set())
        if roles[n] == "fused" and len(roots) > 1 and ins.opcode not in CHEAP:
            roles[n] = "kernel"
        reach[n] = {n} if roles[n] != "fused" else roots
    # a materialized row-major reshape of a materialized value is a view of it
    for ins in order:
        if (roles[ins.name] == "kernel" and ins.opcode in ("reshape", "copy") and ins.name not in live
                and roles[ins.operands[0]] in ("kernel", "param", "const", "view")):
            roles[ins.name] = "view"
    kernels = tuple(i.name for i in order if roles[i.name] == "kernel")
    return FusionPlan(roles, kernels)

"""Fusion: decide which instructions get a buffer and which are computed inline.

Each instruction gets one role:
- `param` / `const` (array constant) / `scalar` (scalar constant, a C literal);
- `kernel`: materialized by a kernel of its own, which inlines its fused producers;
- `view`: shares its operand's buffer (row-major reshape, tuple element of a
  multi-output kernel);
- `fused`: computed inside every kernel that consumes it, no buffer. A row
  reduction (a reduce over trailing dimensions whose result is broadcast back
  over them) is fused into the loop kernel consuming it: that kernel folds each
  row before writing it, so softmax or layernorm reads its input in one kernel.
An elementwise value used by two kernels is materialized rather than computed
twice; cheap index-mapping ops (broadcast, iota, slice, ...) are duplicated.

A GEMM-shaped op whose rule takes an epilogue (dot, convolution as GEMM) is fused into
the one loop kernel its result flows into when every path there is elementwise at the
same index: that kernel becomes the GEMM, applying bias, scale and shift, activations,
residual adds and converts to each block of output rows (`FusionPlan.epilogues`).
fused.py turns the plan into fusion instructions.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import located
from ..hlo.ir import Computation
from ..hlo.shape import ArrayShape
from ..ops.registry import CHEAP, KEEPS_INDEX, SAME_ELEMENTS, has, rule
from ..hlo.opcodes import Op



@dataclass(frozen=True, slots=True)
class FusionPlan:
    roles: dict[str, str]  # instruction name -> role
    order: tuple[str, ...]  # schedule: the kernel instructions, in execution order
    epilogues: dict[str, str]  # kernel -> the GEMM hero it applies its elementwise ops to


def plan_fusion(comp: Computation, live: set[str], source: str | None = None) -> FusionPlan:
    order = list(comp.instructions)  # already topologically ordered
    users: dict[str, list[str]] = {i.name: [] for i in order}
    for i in order:
        for o in dict.fromkeys(i.operands):
            users[o].append(i.name)
    roles: dict[str, str] = {}
    for ins in order:
        r = rule(ins.opcode)
        if ins.opcode == Op.PARAMETER:
            roles[ins.name] = "param"
        elif ins.opcode == Op.CONSTANT:
            roles[ins.name] = "scalar" if isinstance(ins.shape, ArrayShape) and ins.shape.rank == 0 else "const"
        elif ins.opcode == Op.GET_TUPLE_ELEMENT:
            roles[ins.name] = "view"
        elif ins.opcode == Op.TUPLE:
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
    _fuse_row_reductions(comp, roles, users, live)
    # reverse topological: materialize values that more than one kernel would recompute
    reach: dict[str, set[str]] = {}
    for ins in reversed(order):
        n = ins.name
        roots: set[str] = set()
        for u in users[n]:
            roots |= {u} if roles[u] != "fused" else reach.get(u, set())
        if roles[n] == "fused" and len(roots) > 1 and not has(ins.opcode, CHEAP):
            roles[n] = "kernel"
        reach[n] = {n} if roles[n] != "fused" else roots
    _materialize_reused(comp, roles)
    epilogues = _fuse_epilogues(comp, roles, users, live)
    # a materialized row-major reshape of a materialized value is a view of it
    for ins in order:
        if (roles[ins.name] == "kernel" and has(ins.opcode, SAME_ELEMENTS) and ins.name not in live
                and roles[ins.operands[0]] in ("kernel", "param", "const", "view")):
            roles[ins.name] = "view"
    kernels = tuple(i.name for i in order if roles[i.name] == "kernel")
    return FusionPlan(roles, kernels, epilogues)


# ops a window consumer may recompute for each window element it reads: index mapping only
_REMAPS = (Op.PAD, Op.CONVERT, Op.COPY)


def _materialize_reused(comp: Computation, roles: dict[str, str]) -> None:
    """A reduce-window whose windows overlap reads each operand element several times:
    arithmetic fused into it would run that many times per element (a ResNet stem's
    BatchNorm and ReLU, 9 times under its 3x3 stride-2 max pool). The arithmetic is
    computed once into a buffer instead (where a GEMM's epilogue may take it); index
    mapping (pad, slice, broadcast, converts) stays fused. XLA's fusion refuses to
    duplicate expensive producers into consumers that reuse operand elements likewise."""
    for ins in comp.instructions:
        if ins.opcode != Op.REDUCE_WINDOW or roles[ins.name] != "kernel":
            continue
        window = ins.attr("window")
        if window is None or not any(d.size > d.stride for d in window.dims):
            continue
        todo = list(ins.operands[:len(ins.operands) // 2])
        while todo:
            n = todo.pop()
            if roles[n] != "fused":
                continue
            o = comp.get(n)
            if has(o.opcode, CHEAP) or o.opcode in _REMAPS:
                todo.extend(o.operands)
            else:
                roles[n] = "kernel"


def _fuse_epilogues(comp: Computation, roles: dict[str, str], users: dict[str, list[str]],
                    live: set[str]) -> dict[str, str]:
    """Fuse each materialized GEMM hero into the loop kernel consuming it (see above)."""
    out: dict[str, str] = {}
    for h in comp.instructions:
        r = rule(h.opcode)
        if (roles[h.name] != "kernel" or h.name in live or r is None or r.epilogue is None
                or not isinstance(h.shape, ArrayShape)
                or not r.epilogue(h, [comp.get(o).shape for o in h.operands])):
            continue
        root = _epilogue_root(comp, roles, users, h.name, h.array_shape.dims)
        if root is not None and root not in out:
            roles[h.name] = "fused"
            out[root] = h.name
    return out


def _epilogue_root(comp: Computation, roles: dict[str, str], users: dict[str, list[str]], hero: str,
                   dims: tuple[int, ...]) -> str | None:
    """The one loop kernel every use of `hero` reaches through elementwise ops at the
    same index on its shape, or None."""
    roots: set[str] = set()
    todo = list(users[hero])
    seen: set[str] = set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        ins = comp.get(n)
        if not has(ins.opcode, KEEPS_INDEX) or not isinstance(ins.shape, ArrayShape) or ins.shape.dims != dims:
            return None
        if roles[n] == "fused":
            todo.extend(users[n])
        elif roles[n] == "kernel" and rule(ins.opcode).kernel is None:
            roots.add(n)
        else:
            return None
    return next(iter(roots)) if len(roots) == 1 else None


def _fuse_row_reductions(comp: Computation, roles: dict[str, str], users: dict[str, list[str]],
                         live: set[str]) -> None:
    """Fuse each single-operand reduce over trailing dimensions into the one loop kernel
    that consumes it, when every path there is elementwise on the reduced shape, then a
    broadcast back over the reduced dimensions, then elementwise on the full shape (so the
    consumer reads one reduced value per row and hoisting folds each row once)."""
    for ins in reversed(comp.instructions):  # consumers first: a fused fold may feed another
        if ins.opcode != Op.REDUCE or roles[ins.name] != "kernel" or ins.name in live or len(ins.operands) != 2:
            continue
        in_dims = comp.get(ins.operands[0]).array_shape.dims
        rdims = sorted(ins.attr("dimensions"))
        if not rdims or rdims != list(range(len(in_dims) - len(rdims), len(in_dims))):
            continue
        root = _row_consumer(comp, roles, users, ins.name, ins.array_shape.dims)
        if root is not None:
            roles[ins.name] = "fused"


def _row_consumer(comp, roles, users, name: str, kept: tuple[int, ...]) -> str | None:
    """The one loop kernel the rows of `name` flow into, by the allowed paths, or None.
    Before the broadcast that expands rows, a path may also reshape (or add unit
    dimensions), which keeps each row value at its linear index."""
    size = 1
    for n in kept:
        size *= n
    roots: set[str] = set()
    todo = [(u, False) for u in users[name]]
    seen: set[tuple[str, bool]] = set()
    while todo:
        n, expanded = todo.pop()
        if (n, expanded) in seen:
            continue
        seen.add((n, expanded))
        ins = comp.get(n)
        if not isinstance(ins.shape, ArrayShape):
            return None
        dims = ins.shape.dims
        bdims = tuple(ins.attr("dimensions") or ()) if ins.opcode == Op.BROADCAST else ()
        if not expanded and ins.shape.size == size and (has(ins.opcode, SAME_ELEMENTS) or ins.opcode == Op.BROADCAST):
            if ins.opcode == Op.BROADCAST and list(bdims) != sorted(bdims):
                return None  # same elements in another order
        elif ins.opcode == Op.REDUCE and expanded and roles[n] == "fused" and ins.shape.size == size:
            expanded = False  # a fused fold of the same rows: one value per row again
        elif ins.opcode == Op.BROADCAST and not expanded:
            src = comp.get(ins.operands[0]).array_shape.dims
            if bdims != tuple(range(len(src))) or dims[:len(src)] != src:
                return None
            expanded = True
        elif not has(ins.opcode, KEEPS_INDEX) or (expanded and ins.opcode == Op.RESHAPE):
            return None
        if roles[n] == "fused":
            todo.extend((u, expanded) for u in users[n])
            continue
        if roles[n] != "kernel" or not expanded:
            return None
        roots.add(n)
    return next(iter(roots)) if len(roots) == 1 else None

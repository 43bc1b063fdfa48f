"""Kernel code: the C body of each kernel and of each scalar helper function.

A kernel is one materialized instruction plus the fused producers it inlines.
Loop kernels are written as a flat loop (pure elementwise: vectorizable, no
index arithmetic) or as a loop nest over the output dimensions; op rules with
a `kernel` hook (dot, reduce) write their own loops through the same builder.
"""
from __future__ import annotations

import re

from ..hlo.ir import Computation, Instruction, Module
from ..hlo.shape import ArrayShape, TupleShape
from ..ops.registry import rule
from .elemental import Buffer, Index, KernelBuilder, c_literal, compute_ctype, store_expr
from .names import NameSupply

# fused ops that keep the element index unchanged (a flat loop needs nothing else)
_FLAT_OK = frozenset({"reshape", "copy", "convert"})


def fused_producers(comp: Computation, root: Instruction, roles: dict[str, str]) -> set[str]:
    seen: set[str] = set()
    todo = list(root.operands)
    while todo:
        n = todo.pop()
        if n in seen or roles.get(n) != "fused":
            continue
        seen.add(n)
        todo.extend(comp.get(n).operands)
    return seen


def _is_flat(comp: Computation, names: set[str]) -> bool:
    for n in names:
        ins = comp.get(n)
        r = rule(ins.opcode)
        if ins.opcode in _FLAT_OK:
            continue
        if ins.opcode in ("broadcast", "iota", "transpose", "slice", "reverse", "pad", "concatenate"):
            return False
        if r is None or r.elemental is None:
            return False
        # elementwise ops with scalar operands broadcast implicitly (select/clamp)
        if any(isinstance(comp.get(o).shape, ArrayShape) and comp.get(o).shape.rank == 0
               and isinstance(ins.shape, ArrayShape) and ins.shape.rank > 0 for o in ins.operands):
            return False
    return True


class ScalarFunctions:
    """C functions for reducer/comparator computations, emitted once each."""

    def __init__(self, module: Module, names: NameSupply):
        self.module = module
        self.names = names
        self.texts: dict[str, str] = {}

    def get(self, comp_name: str) -> str:
        cname = self.names.scalar_function(comp_name)
        if cname not in self.texts:
            self.texts[cname] = ""  # reserve (recursion guard)
            self.texts[cname] = self._emit(self.module.computation(comp_name), cname)
        return cname

    def _emit(self, comp: Computation, cname: str) -> str:
        params = comp.parameters
        consts = {p.name: f"p{p.parameter_number}" for p in params}
        for i in comp.instructions:
            if i.opcode == "constant" and isinstance(i.shape, ArrayShape) and i.shape.rank == 0:
                consts[i.name] = c_literal(i.literal.values.reshape(()).item() if i.literal.values is not None
                                           else 0, i.shape.dtype)
        fused = {i.name for i in comp.instructions if i.name not in consts}
        kb = KernelBuilder(fused, {i.name: i for i in comp.instructions}, {}, rule, consts)
        kb.scalar_function = self.get
        root = comp.root_instruction
        outs = [comp.get(o) for o in root.operands] if root.opcode == "tuple" else [root]
        vals = [kb.value(o, Index(())) for o in outs]
        args = [f"{compute_ctype(p.array_shape.dtype)} p{p.parameter_number}" for p in params]
        head = f"static inline {{ret}} {cname}({{args}})"
        if root.opcode != "tuple":
            ret = compute_ctype(root.array_shape.dtype)
            tail = [f"    return {vals[0]};"]
        else:
            ret = "void"
            args += [f"{compute_ctype(o.array_shape.dtype)}* out{k}" for k, o in enumerate(outs)]
            tail = [f"    *out{k} = {v};" for k, v in enumerate(vals)]
        used = "\n".join(kb.lines + tail)
        unused = [f"    (void)p{p.parameter_number};" for p in params
                  if not re.search(rf"\bp{p.parameter_number}\b", used)]
        body = "\n".join(unused + kb.lines + tail)
        return f"/* HLO computation {comp.name} */\n" + head.format(ret=ret, args=", ".join(args) or "void") + \
            " {\n" + body + "\n}\n"


def kernel_body(comp: Computation, ins: Instruction, roles: dict[str, str], buffers: dict[str, Buffer],
                outs: list[Buffer], scalars: dict[str, str], functions: ScalarFunctions,
                scratch: str, scratch_bytes: int, subprogram=None) -> tuple[list[str], set[str], int, int, bool]:
    """C statements of the kernel materializing `ins`, the fused instruction names, the
    arena scratch bytes it uses, and the trip count of its outermost loop when that loop
    runs over [lo, hi) so threads can split it (0: the kernel takes no range), and whether
    it takes the thread pool itself."""
    fused = fused_producers(comp, ins, roles)
    producers = {i.name: i for i in comp.instructions}
    kb = KernelBuilder(fused | {ins.name}, producers, buffers, rule, scalars)
    kb.scalar_function = functions.get
    kb.scalar_computation = functions.module.computation
    kb.subprogram = subprogram
    kb.scratch = scratch
    kb.scratch_bytes = scratch_bytes
    r = rule(ins.opcode)
    if r is not None and r.kernel is not None:
        r.kernel(kb, ins, outs)
        return kb.lines, fused, kb.scratch_bytes, 0, kb.uses_pool
    (out,) = outs
    shape = ins.array_shape
    if _is_flat(comp, fused | {ins.name}) and shape.rank != 1:
        kb.range_loop("i")
        val = kb.value(ins, Index(shape.dims, linear="i"))
        kb.line(f"{out.cname}[i] = {store_expr(shape.dtype, val)};")
        kb.close()
        return kb.lines, fused, 0, shape.size, False
    names = [f"i{d}" for d in range(shape.rank)]
    for d, (v, n) in enumerate(zip(names, shape.dims)):
        if d == 0:
            kb.range_loop(v)
        else:
            kb.loop(v, n)
    idx = Index(shape.dims, tuple(names))
    val = kb.value(ins, idx)
    kb.line(f"{out.cname}[{kb.linear(idx)}] = {store_expr(shape.dtype, val)};")
    for _ in names:
        kb.close()
    return kb.lines, fused, 0, (shape.dims[0] if shape.rank else 0), False


def elementwise_kernel(comp: Computation, ins: Instruction, roles: dict[str, str]) -> bool:
    """Whether the kernel of `ins` reads every buffer at the element it writes (a loop
    kernel of elementwise ops only), so it may write over a buffer it reads last."""
    r = rule(ins.opcode)
    if r is None or r.kernel is not None or not isinstance(ins.shape, ArrayShape):
        return False
    return _is_flat(comp, fused_producers(comp, ins, roles) | {ins.name})


def copy_body(src: Buffer, dst: Buffer) -> list[str]:
    n = ArrayShape(src.shape.dtype, src.shape.dims).size
    return [f"    memcpy({dst.cname}, {src.cname}, {n} * sizeof(*{dst.cname}));"]


def output_shapes(ins: Instruction) -> list[ArrayShape]:
    if isinstance(ins.shape, TupleShape):
        return [e for e in ins.shape.elements]  # type: ignore[misc]
    return [ins.shape]

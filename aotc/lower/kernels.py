"""Kernel bodies as kernel IR: one per materialized instruction, plus the scalar
functions (reducers, comparators) kernels call.

A kernel is one materialized instruction plus the fused producers it inlines.
Loop kernels are a flat loop (pure elementwise: no index arithmetic) or a loop
nest over the output dimensions; op rules with a `kernel` hook (dot, reduce,
...) build their own loops through the same builder. Both mark the loops whose
iterations write disjoint outputs (`parallel`); kernel passes decide the rest.
"""
from __future__ import annotations

from ..hlo.ir import Computation, Instruction, Module
from ..hlo.shape import ArrayShape, TupleShape
from ..kernel import ir as K
from ..kernel.builder import Index, KernelBuilder, compute_type, store_value
from ..ops.registry import KEEPS_INDEX, rule
from .names import NameSupply
from ..hlo.opcodes import Op



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
    """Whether every instruction of a kernel reads its operands at the element it computes
    (so one flat loop over the linear index computes it, and it may write over a buffer it
    reads for the last time)."""
    for n in names:
        ins = comp.get(n)
        r = rule(ins.opcode)
        if r is None or KEEPS_INDEX not in r.traits:
            return False
        # elementwise ops with scalar operands broadcast implicitly (select/clamp)
        if any(isinstance(comp.get(o).shape, ArrayShape) and comp.get(o).shape.rank == 0
               and isinstance(ins.shape, ArrayShape) and ins.shape.rank > 0 for o in ins.operands):
            return False
    return True


def scalar_literal(ins: Instruction) -> K.Const:
    """The value of a scalar constant instruction, in its compute type."""
    v = ins.literal.values.reshape(()).item() if ins.literal.values is not None else 0
    return K.Const(v, compute_type(ins.shape.dtype))


class ScalarFunctions:
    """Scalar functions for reducer/comparator computations, built once each."""

    def __init__(self, module: Module, names: NameSupply):
        self.module = module
        self.names = names  # the module's name supply
        self.functions: dict[str, K.Function] = {}
        self._busy: set[str] = set()

    def get(self, comp_name: str) -> str:
        cname = self.names.scalar_function(comp_name)
        if cname not in self.functions and cname not in self._busy:
            self._busy.add(cname)  # recursion guard
            self.functions[cname] = self._build(self.module.computation(comp_name), cname)
        return cname

    def _build(self, comp: Computation, cname: str) -> K.Function:
        params = comp.parameters
        pvars = [K.Var(f"p{p.parameter_number}", compute_type(p.array_shape.dtype)) for p in params]
        consts: dict[str, K.Expr] = {p.name: v for p, v in zip(params, pvars)}
        for i in comp.instructions:
            if i.opcode == Op.CONSTANT and isinstance(i.shape, ArrayShape) and i.shape.rank == 0:
                consts[i.name] = scalar_literal(i)
        fused = {i.name for i in comp.instructions if i.name not in consts}
        kb = KernelBuilder(fused, {i.name: i for i in comp.instructions}, {}, rule, consts)
        kb.scalar_function = self.get
        kb.scalar_computation = self.module.computation
        root = comp.root_instruction
        outs = [comp.get(o) for o in root.operands] if root.opcode == Op.TUPLE else [root]
        vals = tuple(kb.value(o, Index(())) for o in outs)
        return K.Function(cname, tuple(pvars), kb.body(), vals, f"HLO computation {comp.name}")


def kernel_body(comp: Computation, ins: Instruction, roles: dict[str, str], buffers: dict[str, K.Buf],
                outs: list[K.Buf], scalars: dict[str, K.Expr], functions: ScalarFunctions,
                scratch: K.Buf, scratch_bytes: int, subprogram=None) -> tuple[tuple[K.Stmt, ...], set[str], int, bool]:
    """The IR statements of the kernel materializing `ins`, the fused instruction names, the
    arena scratch bytes it uses, and whether it takes the thread pool itself."""
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
        return kb.body(), fused, kb.scratch_bytes, kb.uses_pool
    (out,) = outs
    shape = ins.array_shape
    if _is_flat(comp, fused | {ins.name}) and shape.rank != 1:
        i = kb.loop("i", shape.size, (K.PARALLEL, K.VECTOR))
        val = kb.value(ins, Index(shape.dims, linear=i))
        kb.store(out, i, store_value(shape.dtype, val))
        kb.close()
        return kb.body(), fused, 0, False
    names = [kb.loop(f"i{d}", n, (K.PARALLEL,) if d < shape.rank - 1 else (K.PARALLEL, K.VECTOR))
             for d, n in enumerate(shape.dims)]
    idx = Index(shape.dims, tuple(names))
    val = kb.value(ins, idx)
    kb.store(out, kb.linear(idx), store_value(shape.dtype, val))
    for _ in names:
        kb.close()
    return kb.body(), fused, 0, False


def elementwise_kernel(comp: Computation, ins: Instruction, roles: dict[str, str]) -> bool:
    """Whether the kernel of `ins` reads every buffer at the element it writes (a loop
    kernel of elementwise ops only), so it may write over a buffer it reads last."""
    r = rule(ins.opcode)
    if r is None or r.kernel is not None or not isinstance(ins.shape, ArrayShape):
        return False
    return _is_flat(comp, fused_producers(comp, ins, roles) | {ins.name})


def copy_body(src: K.Buf, dst: K.Buf, n: int) -> tuple[K.Stmt, ...]:
    return (K.CallStmt("memcpy", (K.Ptr(dst), K.Ptr(src), K.Const(n * dst.dtype.nbytes))),)


def output_shapes(ins: Instruction) -> list[ArrayShape]:
    if isinstance(ins.shape, TupleShape):
        return [e for e in ins.shape.elements]  # type: ignore[misc]
    return [ins.shape]

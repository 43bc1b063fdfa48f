"""Kernel bodies as kernel IR: one per materialized instruction, plus the scalar
functions (reducers, comparators) kernels call.

A kernel is one materialized instruction: bare, or a fusion instruction whose fused
computation it computes inline (fused.py).
Loop kernels are a flat loop (pure elementwise: no index arithmetic) or a loop
nest over the output dimensions; op rules with a `kernel` hook (dot, reduce,
...) build their own loops through the same builder. Both mark the loops whose
iterations write disjoint outputs (`parallel`); kernel passes decide the rest.
"""
from __future__ import annotations

from ..hlo.ir import Computation, Instruction, Module
from ..hlo.shape import ArrayShape, ShapeError, TupleShape
from ..kernel import ir as K
from ..kernel.builder import Index, KernelBuilder, compute_type, store_value, strided_index
from ..ops.conv_gemm import gemm_conv_plan
from ..ops.conv_winograd import winograd_plan
from ..ops.registry import KEEPS_INDEX, rule
from .fused import fused_computation, kernel_op, unfused_instructions
from .names import NameSupply
from ..hlo.opcodes import Op



def fused_names(m: Module, ins: Instruction) -> set[str]:
    """The instructions a kernel computes inline besides its root: those of its fused
    computation, parameters and scalar constants aside (none for a bare kernel)."""
    fc = fused_computation(m, ins)
    if fc is None:
        return set()
    return {i.name for i in fc.instructions if i.name != fc.root and i.opcode != Op.PARAMETER
            and not (i.opcode == Op.CONSTANT and _is_scalar(i))}


def _is_scalar(ins: Instruction) -> bool:
    return isinstance(ins.shape, ArrayShape) and ins.shape.rank == 0


def _is_flat(producers: dict[str, Instruction], names: set[str]) -> bool:
    """Whether every instruction of a kernel reads its operands at the element it computes
    (so one flat loop over the linear index computes it, and it may write over a buffer it
    reads for the last time)."""
    for n in names:
        ins = producers[n]
        r = rule(ins.opcode)
        if r is None or KEEPS_INDEX not in r.traits:
            return False
        # a width-changing bitcast-convert reads another number of elements than it writes
        if any(isinstance(producers[o].shape, ArrayShape) and isinstance(ins.shape, ArrayShape)
               and producers[o].shape.rank > 0 and producers[o].shape.size != ins.shape.size for o in ins.operands):
            return False
        # elementwise ops with scalar operands broadcast implicitly (select/clamp)
        if any(isinstance(producers[o].shape, ArrayShape) and producers[o].shape.rank == 0
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
        self.calls: dict[str, set[str]] = {}  # function -> the functions its body calls
        self._busy: list[str] = []  # functions being built, innermost last (recursion guard)

    def get(self, comp_name: str) -> str:
        cname = self.names.scalar_function(comp_name)
        if self._busy:
            self.calls[self._busy[-1]].add(cname)
        if cname not in self.functions and cname not in self._busy:
            self._busy.append(cname)
            self.calls[cname] = set()
            try:
                self.functions[cname] = self._build(self.module.computation(comp_name), cname)
            finally:
                self._busy.pop()
        return cname

    def ordered(self) -> tuple[K.Function, ...]:
        """The functions by name, except that each comes after the functions it calls (a
        reducer whose body reduces calls the inner reducer, which C needs defined first)."""
        out: list[str] = []
        placed: set[str] = set()
        entered: set[str] = set()  # a cycle (a recursive computation) is cut, not followed
        for top in sorted(self.functions):
            stack = [(top, False)]
            while stack:
                name, expanded = stack.pop()
                if name in placed or (not expanded and name in entered):
                    continue
                if expanded:
                    placed.add(name)
                    out.append(name)
                    continue
                entered.add(name)
                stack.append((name, True))
                stack.extend((c, False) for c in sorted(self.calls.get(name, ()), reverse=True)
                             if c not in placed and c in self.functions)
        return tuple(self.functions[n] for n in out)

    def _build(self, comp: Computation, cname: str) -> K.Function:
        params = comp.parameters
        pvars = [K.Var(f"p{p.parameter_number}", compute_type(p.array_shape.dtype)) for p in params]
        consts: dict[str, K.Expr] = {p.name: v for p, v in zip(params, pvars)}
        for i in comp.instructions:
            if i.opcode == Op.CONSTANT and isinstance(i.shape, ArrayShape) and i.shape.rank == 0:
                consts[i.name] = scalar_literal(i)
        fused = {i.name for i in comp.instructions if i.name not in consts}
        root = comp.root_instruction
        for i in comp.instructions:
            r = rule(i.opcode)
            if i.name in fused and not (i is root and i.opcode == Op.TUPLE) and (r is None or r.elemental is None):
                raise ShapeError(f"the computation {comp.name} it calls has {i.opcode} {i.name}, and aotc "
                                 "compiles reducers and comparators of elementwise ops only")
            if i.opcode in (Op.MAXIMUM, Op.MINIMUM, Op.CLAMP) and isinstance(i.shape, ArrayShape) \
                    and i.shape.dtype.is_complex:
                # XLA's complex maximum keeps the first operand where the real parts tie, so a
                # reduction's result depends on its order of operations, which is XLA:CPU's own
                raise ShapeError(f"the computation {comp.name} it calls has {i.opcode} {i.name} of complex "
                                 "values, whose result in a reduction depends on XLA:CPU's order of operations")
        kb = KernelBuilder(fused, {i.name: i for i in comp.instructions}, {}, rule, consts)
        kb.scalar_function = self.get
        kb.scalar_computation = self.module.computation
        outs = [comp.get(o) for o in root.operands] if root.opcode == Op.TUPLE else [root]
        vals = tuple(kb.value(o, Index(())) for o in outs)
        return K.Function(cname, tuple(pvars), kb.body(), vals, f"HLO computation {comp.name}")


def kernel_body(m: Module, comp: Computation, ins: Instruction, heroes: dict[str, str],
                buffers: dict[str, K.Buf], outs: list[K.Buf], scalars: dict[str, K.Expr],
                functions: ScalarFunctions, scratch: K.Buf, scratch_bytes: int,
                subprogram=None, host=None, conv_algorithm: str = "direct",
                strided: dict[str, tuple[int, int]] | None = None,
                out_rows: tuple[int, int] | None = None) -> tuple[tuple[K.Stmt, ...], set[str], int, bool]:
    """The IR statements of the kernel materializing `ins` (an instruction of `comp`, bare
    or a fusion of `m`), the fused instruction names, the arena scratch bytes it uses, and
    whether it takes the thread pool itself. `buffers` holds every materialized value it
    reads (a fusion's parameters are named after them); those in `strided` (name -> (d,
    ld)) and the output when `out_rows` is given are parts of a concatenation's buffer,
    rows of their dims[d:] `ld` elements apart (concat_slices.py decided they may be)."""
    strided = strided or {}
    fc = fused_computation(m, ins)
    if fc is None:
        fused: set[str] = set()
        producers = {i.name: i for i in comp.instructions}
        consts = scalars
        top = ins
    else:
        fused = fused_names(m, ins)
        producers = {i.name: i for i in fc.instructions}
        consts = dict(scalars)
        consts.update((i.name, scalar_literal(i)) for i in fc.instructions
                      if i.opcode == Op.CONSTANT and _is_scalar(i))
        top = fc.root_instruction
    kop = kernel_op(m, ins, heroes)
    kb = KernelBuilder(fused | {top.name}, producers, {n: b for n, b in buffers.items() if n not in strided},
                       rule, consts)
    kb.strided = {n: (buffers[n], d, ld) for n, (d, ld) in strided.items()}
    kb.context = lambda: unfused_instructions(m, comp)
    kb.out_rows = out_rows
    kb.scalar_function = functions.get
    kb.scalar_computation = functions.module.computation
    kb.subprogram = subprogram
    kb.scratch = scratch
    kb.scratch_bytes = scratch_bytes
    kb.conv_algorithm = conv_algorithm
    if host is not None:  # calls into the application (assemble.py's HostCalls)
        kb.custom_calls, kb.host_call, kb.custom_call_function = host.targets, host.add, host.function
    if kop is not top:  # a GEMM hero with an epilogue: its value comes from the GEMM's rows
        kb.fused.discard(kop.name)
        kb.epilogue = top
    r = rule(kop.opcode)
    if r is not None and r.kernel is not None:
        r.kernel(kb, kop, outs)
        if out_rows is not None and not kb.out_rows_done:
            raise AssertionError(f"{ins.name}: the kernel of {kop.opcode} cannot write a strided part")
        return kb.body(), fused, kb.scratch_bytes, kb.uses_pool
    (out,) = outs
    shape = top.array_shape
    if _is_flat(producers, fused | {top.name}) and shape.rank != 1 and not strided and out_rows is None:
        i = kb.loop("i", shape.size, (K.PARALLEL, K.VECTOR))
        val = kb.value(top, Index(shape.dims, linear=i))
        kb.store(out, i, store_value(shape.dtype, val))
        kb.close()
        return kb.body(), fused, 0, False
    names = [kb.loop(f"i{d}", n, (K.PARALLEL,) if d < shape.rank - 1 else (K.PARALLEL, K.VECTOR))
             for d, n in enumerate(shape.dims)]
    idx = Index(shape.dims, tuple(names))
    val = kb.value(top, idx)
    at = kb.linear(idx) if out_rows is None else strided_index(shape.dims, tuple(names), *out_rows)
    kb.store(out, at, store_value(shape.dtype, val))
    for _ in names:
        kb.close()
    return kb.body(), fused, 0, False


def elementwise_kernel(m: Module, comp: Computation, ins: Instruction) -> bool:
    """Whether the kernel of `ins` (in `comp`) reads every buffer at the element it writes
    (a loop kernel of elementwise ops only), so it may write over a buffer it reads last."""
    fc = fused_computation(m, ins)
    scope, top = (comp, ins) if fc is None else (fc, fc.root_instruction)
    r = rule(top.opcode)
    if r is None or r.kernel is not None or not isinstance(top.shape, ArrayShape):
        return False
    return _is_flat({i.name: i for i in scope.instructions}, fused_names(m, ins) | {top.name})


def copy_body(src: K.Buf, dst: K.Buf, n: int) -> tuple[K.Stmt, ...]:
    return (K.CallStmt("memcpy", (K.Ptr(dst), K.Ptr(src), K.Const(n * dst.dtype.nbytes))),)


def output_shapes(ins: Instruction) -> list[ArrayShape]:
    if isinstance(ins.shape, TupleShape):
        return [e for e in ins.shape.elements]  # type: ignore[misc]
    return [ins.shape]


def strided_writer(m: Module, comp: Computation, ins: Instruction, heroes: dict[str, str], d: int,
                   conv_algorithm: str = "direct") -> bool:
    """Whether the kernel of `ins` can store its output in rows of its dims[d:] a stride
    apart: a loop kernel (kernel_body's loop nest), or a convolution run as GEMM (not by
    Winograd) with no epilogue whose rows are its output pixels (d is the features,
    innermost)."""
    if not isinstance(ins.shape, ArrayShape):
        return False
    if ins.opcode == Op.CONVOLUTION:
        lhs, rhs = (comp.get(o).shape for o in ins.operands)
        return (d == ins.array_shape.rank - 1 and isinstance(lhs, ArrayShape) and isinstance(rhs, ArrayShape)
                and winograd_plan(ins, lhs, rhs, conv_algorithm) is None
                and gemm_conv_plan(ins, lhs, rhs) is not None)
    r = rule(kernel_op(m, ins, heroes).opcode)
    return r is not None and r.kernel is None


def loop_reader(m: Module, comp: Computation, ins: Instruction, heroes: dict[str, str], value: str) -> bool:
    """Whether the kernel of `ins` reads `value` only through element values (a loop
    kernel whose instructions reading it are elementwise or concatenations), so a strided
    `value` is loaded row by row (KernelBuilder.strided)."""
    r = rule(kernel_op(m, ins, heroes).opcode)
    if r is None or r.kernel is not None or not isinstance(ins.shape, ArrayShape):
        return False
    fc = fused_computation(m, ins)
    users = [i for i in (fc.instructions if fc is not None else (ins,)) if value in i.operands]
    for u in users:
        ur = rule(u.opcode)
        if ur is None or not (KEEPS_INDEX in ur.traits or u.opcode == Op.CONCATENATE):
            return False
    return True

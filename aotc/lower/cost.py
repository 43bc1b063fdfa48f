"""Work estimates of a Program's kernels: floating-point operations and the bytes of the
buffers each kernel touches, for profiles (GFLOP/s, GB/s). Estimates only: they read the
kernel IR and the slots, and change nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..kernel import ir as K
from .program import Kernel, Program

# a GEMM micro-kernel call's `work` is m*n*k/32 (ops/dot.py, ops/conv_gemm.py): 2*m*n*k flops
_GEMM_FLOPS_PER_WORK = 64
_ARITH = frozenset("+-*/")
_TAPS_CONV = "aotc_taps_conv_"  # ops/conv_taps.py: a GEMM over window positions


@dataclass(frozen=True, slots=True)
class KernelCost:
    kernel: str  # C name of the kernel function
    flops: int  # floating-point operations of one call (estimate)
    bytes: int  # bytes of the buffers it reads and writes (each once)


def _flops_of(e: K.Expr) -> int:
    n = 0
    todo = [e]
    while todo:
        x = todo.pop()
        ty = getattr(x, "ty", None)
        floating = ty is not None and ty.kind in ("float", "complex")
        if floating and (isinstance(x, K.Binary) and x.op in _ARITH or isinstance(x, (K.Unary, K.Call))):
            n += 1
        todo.extend(K.children(x))
    return n


# a `_threads` call leads with the pool, the slice count and each slice's scratch bytes
_THREADS_HEAD = 3


def _gemm_flops(s: K.CallStmt) -> int:
    """2*m*n*k when the call's (m, n, k) are constants, else from its `work`."""
    first = _THREADS_HEAD if s.fn.endswith("_threads") else 0
    mnk = s.args[first:first + 3]
    if len(mnk) == 3 and all(isinstance(a, K.Const) for a in mnk):
        return 2 * int(mnk[0].value) * int(mnk[1].value) * int(mnk[2].value)
    return s.work * _GEMM_FLOPS_PER_WORK


def _trips(loop: K.Loop, outer: int) -> int:
    if loop.trip >= 0:
        return loop.trip
    names = {v.name for v in (loop.start, loop.stop) if isinstance(v, K.Var)}
    return outer if outer > 0 and names & {"lo", "hi"} else 1  # the split outer loop runs [0, outer)


def _body_flops(body: tuple[K.Stmt, ...], outer: int) -> int:
    total = 0
    for s in body:
        if isinstance(s, K.Loop):
            total += _trips(s, outer) * _body_flops(s.body, outer)
        elif isinstance(s, K.If):
            total += max(_body_flops(s.then, outer), _body_flops(s.orelse, outer))
        elif isinstance(s, K.Repeat):
            total += _body_flops(s.body, outer)
        elif isinstance(s, K.CallStmt):
            if "gemm" in s.fn:
                total += _gemm_flops(s)
            elif s.fn.startswith(_TAPS_CONV):  # its `work` is the product's, as a GEMM call's
                total += s.work * _GEMM_FLOPS_PER_WORK
        else:
            total += sum(_flops_of(e) for e in K.stmt_exprs(s))
    return total


def kernel_cost(p: Program, k: Kernel) -> KernelCost:
    slots = {s.cname: s for s in p.slots}
    nbytes = sum(slots[c].nbytes for c, _ in k.params if slots[c].place != "scratch")
    return KernelCost(k.cname, _body_flops(k.body, k.outer), nbytes)


def program_costs(p: Program) -> tuple[KernelCost, ...]:
    """One estimate per kernel of `p` (not its sub-programs), in execution order."""
    return tuple(kernel_cost(p, k) for k in p.kernels)

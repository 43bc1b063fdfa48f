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


def _trips(loop: K.Loop, outer: int, env: dict[str, K.Expr], ranges: dict[str, range]) -> float:
    """The loop's trip count; for one whose bounds depend on enclosing loops (a chunk's share
    of the work items, ops/conv_taps.py `chunk_items`), its mean over their iterations."""
    if loop.trip >= 0:
        return loop.trip
    if outer > 0 and _split(loop):
        return outer  # the split outer loop runs [0, outer)
    span = K.substitute_expr(K.Binary("-", loop.stop, loop.start, K.INDEX), env)
    free = sorted(K.free_vars(span))
    if not free or any(n not in ranges for n in free):
        return 1
    points = [{}]
    for n in free:
        points = [dict(p, **{n: v}) for p in points for v in ranges[n]]
        if len(points) > _MAX_POINTS:
            return 1
    trips = [_value(span, p) for p in points]
    if any(t is None for t in trips):
        return 1
    return sum(max(t, 0) for t in trips) / len(trips)


def _split(loop: K.Loop) -> bool:
    """Whether `loop` is the threaded loop, running over the kernel's [lo, hi)."""
    return loop.trip < 0 and any(isinstance(v, K.Var) and v.name in ("lo", "hi") for v in (loop.start, loop.stop))


_MAX_POINTS = 4096
_INT_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
            "/": lambda a, b: int(a / b) if b else None, "%": lambda a, b: a - b * int(a / b) if b else None,
            "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
            ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b)}


def _value(e: K.Expr, at: dict[str, int]) -> int | None:
    """An index expression's value with its variables at `at` (None: not plain arithmetic)."""
    if isinstance(e, K.Const) and isinstance(e.value, int):
        return e.value
    if isinstance(e, K.Var):
        return at.get(e.name)
    if isinstance(e, K.Binary) and e.op in _INT_OPS:
        a, b = _value(e.a, at), _value(e.b, at)
        return None if a is None or b is None else _INT_OPS[e.op](a, b)
    if isinstance(e, K.Select):
        c = _value(e.cond, at)
        return None if c is None else _value(e.a if c else e.b, at)
    return None


def _body_flops(body: tuple[K.Stmt, ...], outer: int, env: dict[str, K.Expr] | None = None,
                ranges: dict[str, range] | None = None) -> float:
    env, ranges = dict(env or {}), dict(ranges or {})
    total = 0.0
    for s in body:
        if isinstance(s, K.Let) and s.var.ty == K.INDEX:  # an index value a loop bound may read
            env[s.var.name] = K.substitute_expr(s.value, env)
        if isinstance(s, K.Loop):
            inner = ranges
            bounds = (_value(s.start, {}), _value(s.stop, {}))
            if _split(s):
                bounds = (0, outer)
            if None not in bounds and s.step == 1:
                inner = dict(ranges, **{s.var.name: range(*bounds)})
            total += _trips(s, outer, env, ranges) * _body_flops(s.body, outer, env, inner)
        elif isinstance(s, K.If):
            total += max(_body_flops(s.then, outer, env, ranges), _body_flops(s.orelse, outer, env, ranges))
        elif isinstance(s, K.Repeat):
            total += _body_flops(s.body, outer, env, ranges)
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
    return KernelCost(k.cname, round(_body_flops(k.body, k.outer)), nbytes)


def program_costs(p: Program) -> tuple[KernelCost, ...]:
    """One estimate per kernel of `p` (not its sub-programs), in execution order."""
    return tuple(kernel_cost(p, k) for k in p.kernels)

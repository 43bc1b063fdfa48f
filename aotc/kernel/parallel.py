"""Choosing the loop threads split: the outermost loop of a kernel, when its iterations
write disjoint outputs (marked `parallel` by whoever built it), with perfectly nested
outer loops collapsed into one so that a `[1,H,W,C]` nest is split over `H*W`, and only
when the kernel's work pays for the threads.

The chosen loop runs over `[lo, hi)`, parameters of the kernel; the serial call passes
`[0, trip)`. Results do not depend on how the range is split.

A parallel loop's body may read RANGE_START, the first iteration the running call
executes: work each call does once for all its iterations (weights packed into that
iteration's scratch, ops/conv_taps.py) is done when the loop variable equals it. A kernel
run whole reads the loop's start there.
"""
from __future__ import annotations

from . import ir as K
from .simplify import simplify_indices

# kernels doing less work than this (in innermost statements executed) run on the calling thread
PARALLEL_MIN_WORK = 1 << 15
# outer loops are merged until the merged loop has at least this many iterations
COLLAPSE_UNTIL = 256

LO, HI = K.Var("lo"), K.Var("hi")
RANGE_START = LO


def collapse_outer(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    """Merge perfectly nested parallel outer loops of static trip counts into one loop
    (`f`, with the old variables recomputed from it), while the merged trip is small."""
    loop = _outer(body)
    if loop is None:
        return body, False
    changed = False
    while loop.trip < COLLAPSE_UNTIL and _nest(loop) is not None:
        lets, inner = _nest(loop)
        if K.PARALLEL not in inner.marks or inner.trip <= 0 or inner.step != 1 or loop.step != 1:
            break
        if inner.start != K.Const(0) or loop.start != K.Const(0):
            break
        innermost = not any(isinstance(s, K.Loop) for s in K.walk(inner.body))
        if innermost and loop.trip > 1:
            break  # keep the contiguous loop whole (it vectorizes)
        a, b = loop.trip, inner.trip
        f = K.Var(_fresh(body, "f"))  # replaces every use of the variables it merges
        old = {loop.var.name: K.Binary("/", f, K.Const(b), K.INDEX), inner.var.name: K.Binary("%", f, K.Const(b), K.INDEX)}
        loop = K.Loop(f, K.Const(0), K.Const(a * b), substitute(lets + inner.body, old), 1, inner.marks)
        changed = True
    if not changed:
        return body, False
    return tuple(loop if isinstance(s, K.Loop) else s for s in body), True


def worth_threads(body: tuple[K.Stmt, ...]) -> bool:
    """Whether the kernel has a loop threads may split and enough work to pay for them."""
    return _outer(body) is not None and work(body) >= PARALLEL_MIN_WORK


def split_range(body: tuple[K.Stmt, ...], threaded_ok: bool) -> tuple[tuple[K.Stmt, ...], int]:
    """The body with its parallel loop running over `[lo, hi)`, and that loop's trip count
    (0: the kernel runs whole on the calling thread)."""
    loop = _outer(body)
    if not threaded_ok or loop is None or loop.trip < 2 or loop.step != 1 or loop.start != K.Const(0):
        return _whole(body, loop), 0
    if work(body) < PARALLEL_MIN_WORK:
        return _whole(body, loop), 0
    ranged = K.Loop(loop.var, LO, HI, loop.body, 1, loop.marks)
    return tuple(ranged if s is loop else s for s in body), loop.trip


def _whole(body: tuple[K.Stmt, ...], loop: K.Loop | None) -> tuple[K.Stmt, ...]:
    """A body run by one call: RANGE_START is where its parallel loop starts (0 as built)."""
    start = loop.start if loop is not None else K.Const(0)
    whole = substitute(body, {RANGE_START.name: start})
    return body if whole == body else simplify_indices(whole)[0]


def _nest(loop: K.Loop):
    """(values, inner loop) when `loop`'s body is values followed by one loop, else None."""
    if not loop.body or not isinstance(loop.body[-1], K.Loop):
        return None
    if not all(isinstance(s, K.Let) for s in loop.body[:-1]):
        return None
    return loop.body[:-1], loop.body[-1]


def substitute(body: tuple[K.Stmt, ...], values: dict[str, K.Expr]) -> tuple[K.Stmt, ...]:
    """`body` with the variables named in `values` replaced by their expressions."""
    return K.map_exprs(body, lambda e: K.substitute_expr(e, values))


def _outer(body: tuple[K.Stmt, ...]) -> K.Loop | None:
    """The kernel's one top-level parallel loop, when everything else at top level is a
    pure value or a local table (an array declared there and a loop storing only into such
    arrays: every thread computes its own)."""
    loops = [s for s in body if isinstance(s, K.Loop)]
    par = [s for s in loops if K.PARALLEL in s.marks]
    if len(par) != 1:
        return None
    tables = {s.buf.name for s in body if isinstance(s, K.ArrayDecl)}
    for s in body:
        if isinstance(s, K.Loop) and s is not par[0]:
            if any(not isinstance(x, (K.Let, K.Store)) or isinstance(x, K.Store) and x.buf.name not in tables
                   for x in K.walk(s.body)):
                return None
        elif not isinstance(s, (K.Let, K.Loop, K.Comment, K.ArrayDecl)):
            return None
    return par[0]


def work(body: tuple[K.Stmt, ...], scale: int = 1) -> int:
    """Innermost statements executed (unknown trip counts count once)."""
    total = 0
    for s in body:
        if isinstance(s, K.Loop):
            total += work(s.body, scale * max(s.trip, 1))
        elif isinstance(s, K.If):
            total += max(work(s.then, scale), work(s.orelse, scale))
        elif isinstance(s, K.Repeat):
            total += work(s.body, scale)
        elif isinstance(s, K.CallStmt):
            total += scale * s.work
        elif isinstance(s, (K.Store, K.Assign)):
            total += scale
    return total


def _fresh(body, base: str) -> str:
    names = set()
    for s in K.walk(body):
        if isinstance(s, (K.Loop,)):
            names.add(s.var.name)
        if isinstance(s, (K.Let, K.Decl)):
            names.add(s.var.name)
    name, n = base, 1
    while name in names:
        name, n = f"{base}{n}", n + 1
    return name

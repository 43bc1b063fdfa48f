"""Loop unswitching, decided on the IR: a vector loop whose body branches on a condition the
loop does not change becomes that branch around two copies of the loop, one per side; a
branch on the loop variable against a constant (`c < 224`, a fused concatenation's pieces)
splits the loop's range there instead.

A fused pad read inside a pooling window is the first case: the element loop under a
window position tests the position against the bounds on every trip, so it cannot run in
lanes; unswitched, each copy is straight-line and `vectorize` takes it. An invariant
condition must read no memory and call nothing (the loop may run zero times, and the
condition is now evaluated anyway), and use neither the loop variable nor anything the body
binds or assigns. A split needs constant bounds, step 1 and the variable with coefficient
±1. The copies are unswitched again, up to `MAX_COPIES` per loop. Only loops marked
`vector` whose bodies hold no loops are taken, and not the kernel's top-level parallel
loop (threads split that one loop); and only when a copy then vectorizes (short loops and
bodies the vocabulary lacks keep their branch: copies would only grow the code).

In each copy a local declared without a value and assigned once, at the top of the body,
becomes a `Let` (what the branch assigned is now the only assignment on the path), so the
vectorizer sees plain values. Each copy runs the same operations in the same order as
the branch it replaces, so the bits do not change.
"""
from __future__ import annotations

from . import ir as K
from .simplify import terms
from .vectorize import vectorizable


def unswitch_invariant_branches(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    return _block(body, True)


def _block(body: tuple[K.Stmt, ...], top: bool) -> tuple[tuple[K.Stmt, ...], bool]:
    out: list[K.Stmt] = []
    changed = False
    for s in body:
        kids = K.nested(s)
        if kids:
            inner = []
            for b in kids:
                nb, c = _block(b, False)
                inner.append(nb)
                changed |= c
            s = K.with_nested(s, tuple(inner))
        if isinstance(s, K.Loop) and not (top and K.PARALLEL in s.marks):
            u = _unswitch(s, MAX_COPIES)
            if u is not None and any(vectorizable(x) for x in K.walk(u) if isinstance(x, K.Loop)):
                out.extend(u)
                changed = True
                continue
        out.append(s)
    return tuple(out), changed


MAX_COPIES = 8  # copies one loop may become (nested branches double them)


def _unswitch(loop: K.Loop, budget: int) -> tuple[K.Stmt, ...] | None:
    """What replaces `loop`, or None when nothing is taken out of it."""
    if budget < 2 or K.VECTOR not in loop.marks or any(isinstance(x, (K.Loop, K.Repeat)) for x in K.walk(loop.body)):
        return None
    bound = {loop.var.name}
    for x in K.walk(loop.body):
        if isinstance(x, (K.Let, K.Decl, K.Assign)):
            bound.add(x.var.name)
        elif isinstance(x, K.ArrayDecl):
            bound.add(x.buf.name)
    for i, s in enumerate(loop.body):
        if not isinstance(s, K.If):
            continue
        head, tail = loop.body[:i], loop.body[i + 1:]
        then, orelse = _lets(head + s.then + tail), _lets(head + s.orelse + tail)
        if _invariant(s.cond, bound):
            return (K.If(s.cond, _again(_with(loop, then), budget // 2), _again(_with(loop, orelse), budget // 2)),)
        split = _split_point(s.cond, loop)
        if split is not None:
            p, below_is_then = split
            parts = ((loop.start.value, p, then if below_is_then else orelse),
                     (p, loop.stop.value, orelse if below_is_then else then))
            return tuple(x for a, b, part in parts if a < b
                         for x in _again(_with(loop, part, K.Const(a), K.Const(b)), budget // 2))
    return None


def _with(loop: K.Loop, body: tuple[K.Stmt, ...], start: K.Expr | None = None, stop: K.Expr | None = None) -> K.Loop:
    return K.Loop(loop.var, loop.start if start is None else start, loop.stop if stop is None else stop,
                  body, loop.step, loop.marks)


def _again(loop: K.Loop, budget: int) -> tuple[K.Stmt, ...]:
    u = _unswitch(loop, budget)
    return (loop,) if u is None else u


def _invariant(cond: K.Expr, bound: set[str]) -> bool:
    if K.free_vars(cond) & bound:
        return False
    return not any(isinstance(e, (K.Load, K.Call, K.Ptr)) for e in K.nodes(cond))


def _split_point(cond: K.Expr, loop: K.Loop) -> tuple[int, bool] | None:
    """For a condition `var + k OP 0` (an index comparison, constant bounds, step 1): the
    point p in [start, stop] and whether the condition holds below it (else from it on)."""
    if (not isinstance(cond, K.Binary) or cond.op not in ("<", "<=", ">", ">=") or loop.step != 1
            or cond.a.ty != K.INDEX or cond.b.ty != K.INDEX
            or not isinstance(loop.start, K.Const) or not isinstance(loop.stop, K.Const)):
        return None
    t = terms(cond.a, {})
    for atom, c in terms(cond.b, {}).items():
        t[atom] = t.get(atom, 0) - c
    t = {a: c for a, c in t.items() if c}
    c, k = t.pop(K.Var(loop.var.name), 0), t.pop(K.Const(1), 0)
    if t or c not in (1, -1):
        return None
    if c == 1:  # var < -k, var <= -k, var > -k, var >= -k
        s, below = {"<": (-k, True), "<=": (-k + 1, True), ">": (-k + 1, False), ">=": (-k, False)}[cond.op]
    else:  # var > k, var >= k, var < k, var <= k
        s, below = {"<": (k + 1, False), "<=": (k, False), ">": (k, True), ">=": (k + 1, True)}[cond.op]
    return min(max(s, loop.start.value), loop.stop.value), below


def _lets(body: tuple[K.Stmt, ...]) -> tuple[K.Stmt, ...]:
    """`Decl v; ...; Assign v = e` with that the only assignment of v at the top level (and
    none nested), v not read before it: `...; Let v = e`."""
    out = list(body)
    for d in [s for s in body if isinstance(s, K.Decl) and s.init is None]:
        i, name = out.index(d), d.var.name
        assigns = [j for j, x in enumerate(out) if isinstance(x, K.Assign) and x.var.name == name]
        every = [x for x in K.walk(tuple(out)) if isinstance(x, K.Assign) and x.var.name == name]
        if len(assigns) != 1 or len(every) != 1 or any(name in _reads(x) for x in out[i + 1:assigns[0]]):
            continue
        j = assigns[0]
        out[j] = K.Let(d.var, out[j].value)
        del out[i]
    return tuple(out)


def _reads(s: K.Stmt) -> set[str]:
    names: set[str] = set()
    for x in K.walk((s,)):
        for e in K.stmt_exprs(x):
            K.free_vars(e, names)
    return names

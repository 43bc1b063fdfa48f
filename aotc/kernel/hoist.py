"""Loop-invariant hoisting, decided on the IR: what a loop computes the same way on every
trip is computed once, before the loop.

A top-level statement of a loop body moves out when nothing it reads changes inside
the loop (no loop variable, no local defined or written by a statement that stays, no
buffer the loop stores to, no memory an opaque call may write) and it writes only
locals declared at the top of the same body. So values move, and so do whole folds:
a row reduction's accumulator, lanes and loops. The loop must run at least once, so
a moved load reads an address the loop would have read anyway.
"""
from __future__ import annotations

from . import ir as K

_MEMORY = "<memory>"  # what an opaque statement may write


def hoist_invariants(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    return _block(body)


def _block(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    out: list[K.Stmt] = []
    changed = False
    for s in body:
        if isinstance(s, K.Loop):
            inner, c = _block(s.body)
            moved, kept = _split(K.Loop(s.var, s.start, s.stop, inner, s.step, s.marks))
            out.extend(moved)
            out.append(kept)
            changed |= c or bool(moved)
        elif isinstance(s, K.If):
            t, c1 = _block(s.then)
            e, c2 = _block(s.orelse)
            out.append(K.If(s.cond, t, e))
            changed |= c1 or c2
        elif isinstance(s, K.Repeat):
            b, c = _block(s.body)
            out.append(K.Repeat(b))
            changed |= c
        else:
            out.append(s)
    return tuple(out), changed


def _split(loop: K.Loop) -> tuple[list[K.Stmt], K.Loop]:
    """The loop's invariant top-level statements, and the loop without them."""
    body = loop.body
    if loop.trip <= 0 or not body:
        return [], loop
    facts = [(_reads(s), _writes(s), _defines(s)) for s in body]
    first: dict[str, K.Stmt] = {}
    for st, (_, _, ds) in zip(body, facts):
        for d in ds:
            first.setdefault(d, st)
    local = {d for d, st in first.items() if not isinstance(st, K.Let)}
    moved = [not (w - local) for _, w, _ in facts]
    stored = {n for _, w, _ in facts for n in w if n not in local}
    loads_global = [{n for n in r if n not in local and _is_buffer(body[i], n)} for i, (r, _, _) in enumerate(facts)]
    # the greatest set of movable statements: a statement stays when it depends on the loop
    # or on what stays, or would be overwritten or read early by what stays. Statements
    # only ever change from moving to staying, so passes in order (each seeing the flips
    # before it) reach the fixpoint in a few passes whatever the body's length.
    again = True
    while again:
        again = False
        variant = {loop.var.name}
        for i, (_, w, d) in enumerate(facts):
            if not moved[i]:
                variant |= w | d
        early_readers: set[str] = set()
        for i, (r, w, d) in enumerate(facts):
            if moved[i] and (r & variant or w & variant or d & variant or w & early_readers
                             or (loads_global[i] and (_MEMORY in stored or loads_global[i] & stored))):
                moved[i] = False
                again = True
                variant |= w | d
            if not moved[i]:
                early_readers |= r
    if not any(moved):
        return [], loop
    out = [s for s, m in zip(body, moved) if m]
    kept = tuple(s for s, m in zip(body, moved) if not m)
    return out, K.Loop(loop.var, loop.start, loop.stop, kept, loop.step, loop.marks)


def _defines(s: K.Stmt) -> set[str]:
    if isinstance(s, (K.Let, K.Decl)):
        return {s.var.name}
    if isinstance(s, K.ArrayDecl):
        return {s.buf.name}
    return set()


def _bound_inside(s: K.Stmt) -> set[str]:
    """Names bound within a compound statement (its loops' variables and inner locals)."""
    out: set[str] = set()
    for x in K.walk((s,)):
        if x is s:
            continue
        out |= _defines(x)
        if isinstance(x, K.Loop):
            out.add(x.var.name)
    if isinstance(s, K.Loop):
        out.add(s.var.name)
    return out


def _writes(s: K.Stmt) -> set[str]:
    """Locals and buffers a statement changes, besides what it binds itself."""
    out: set[str] = set()
    for x in K.walk((s,)):
        if isinstance(x, K.Assign):
            out.add(x.var.name)
        elif isinstance(x, K.Store):
            out.add(x.buf.name)
        elif isinstance(x, (K.CallStmt, K.Exec)):
            out.add(_MEMORY)
            for e in K.stmt_exprs(x):  # locals passed by address are written
                out.update(p.var.name for p in K.nodes(e) if isinstance(p, K.Ptr) and p.var is not None)
    return out - _bound_inside(s)


def _reads(s: K.Stmt) -> set[str]:
    """Variables and buffers a statement reads, besides what it binds itself."""
    out: set[str] = set()
    for x in K.walk((s,)):
        for e in K.stmt_exprs(x):
            K.free_vars(e, out)
            out.update(ld.buf.name for ld in K.loads(e))
    return out - _bound_inside(s)


def _is_buffer(s: K.Stmt, name: str) -> bool:
    return any(ld.buf.name == name for x in K.walk((s,)) for e in K.stmt_exprs(x) for ld in K.loads(e))

"""Dropping values nothing reads: a `Let`, or a `Decl` with its `Assign`s, whose name no
expression, buffer access or pointer of the body mentions is removed (their values are
pure: loads, arithmetic, the runtime's math helpers), until none is left. Builders may
then compute a value eagerly without leaving an unused local in the C
(-Wunused-variable, -Wunused-but-set-variable)."""
from __future__ import annotations

from . import ir as K


def remove_unused_values(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    changed = False
    while True:
        used = _mentioned(body)
        body, dropped = _drop(body, used)
        if not dropped:
            return body, changed
        changed = True


def _mentioned(body: tuple[K.Stmt, ...]) -> set[str]:
    """Every name an expression, a store, an array or a pointer of `body` refers to."""
    out: set[str] = set()
    for s in K.walk(body):
        if isinstance(s, K.Store):
            out.add(s.buf.name)
        todo = list(K.stmt_exprs(s))
        while todo:
            e = todo.pop()
            if isinstance(e, K.Var):
                out.add(e.name)
            elif isinstance(e, K.Load):
                out.add(e.buf.name)
            elif isinstance(e, K.Ptr):
                if e.buf is not None:
                    out.add(e.buf.name)
                if e.var is not None:
                    out.add(e.var.name)
            todo.extend(K.children(e))
    return out


def _drop(body: tuple[K.Stmt, ...], used: set[str]) -> tuple[tuple[K.Stmt, ...], bool]:
    out: list[K.Stmt] = []
    dropped = False
    for s in body:
        if isinstance(s, (K.Let, K.Decl, K.Assign)) and s.var.name not in used:
            dropped = True  # an assignment's target is not a use of it
            continue
        if isinstance(s, K.Loop):
            b, d = _drop(s.body, used)
            s = K.Loop(s.var, s.start, s.stop, b, s.step, s.marks) if d else s
        elif isinstance(s, K.If):
            t, d1 = _drop(s.then, used)
            e, d2 = _drop(s.orelse, used)
            d = d1 or d2
            s = K.If(s.cond, t, e) if d else s
        elif isinstance(s, K.Repeat):
            b, d = _drop(s.body, used)
            s = K.Repeat(b) if d else s
        else:
            d = False
        dropped |= d
        out.append(s)
    return tuple(out), dropped

"""Index propagation: in an innermost `vector` loop, a local index computed from loop
variables and values by `+`, `-` and `*` (an affine form, `first + c`) is substituted into
the loads and stores that use it, so each access shows its index as an affine form of the
loop variable, which the vectorizer (contiguous accesses) and simplify can read. Values of
any other type or operator stay as they are.
"""
from __future__ import annotations

from . import ir as K

_AFFINE = frozenset({"+", "-", "*"})


def propagate_indices(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    out: list[K.Stmt] = []
    changed = False
    for s in body:
        if isinstance(s, K.Loop):
            inner, c = propagate_indices(s.body)
            changed |= c
            if K.VECTOR in s.marks and not any(isinstance(x, K.Loop) for x in K.walk(inner)):
                inner, c = _propagate(inner)
                changed |= c
            s = K.Loop(s.var, s.start, s.stop, inner, s.step, s.marks)
        elif isinstance(s, K.If):
            t, c1 = propagate_indices(s.then)
            e, c2 = propagate_indices(s.orelse)
            s, changed = K.If(s.cond, t, e), changed or c1 or c2
        elif isinstance(s, K.Repeat):
            b, c = propagate_indices(s.body)
            s, changed = K.Repeat(b), changed or c
        out.append(s)
    return tuple(out), changed


def _propagate(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    values: dict[str, K.Expr] = {}
    out: list[K.Stmt] = []
    for s in body:
        if values:
            (s,) = K.map_exprs((s,), lambda e: K.substitute_expr(e, values))
        if isinstance(s, K.Let) and _affine_index(s.value):
            values[s.var.name] = s.value
            continue
        out.append(s)
    return tuple(out), bool(values)


def _affine_index(e: K.Expr) -> bool:
    if e.ty is None or e.ty.kind not in ("sint", "uint"):
        return False
    if isinstance(e, (K.Var, K.Const)):
        return True
    return isinstance(e, K.Binary) and e.op in _AFFINE and _affine_index(e.a) and _affine_index(e.b)

"""Reusing what a row fold computed: when a loop over a row recomputes, element by element,
a costly value that an earlier fold over the same row already computed (softmax's
`exp(x - max)`, summed by the fold and divided by the map), the fold keeps each value in
a row-local array and the map loads it instead of computing it again.

Matched structurally: both loops compute the same expression tree (locals inlined) from
the same buffers, whose indices differ only in the position within the row (`j + l` or a
tail variable in the fold, the map's variable in the map), and both cover the whole row.
The value and its bits are unchanged; only the number of times it is computed is.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES
from . import ir as K
from .simplify import terms

F32 = DTYPES["f32"]
MAX_ROW = 1 << 14  # elements of a row-local array (64 KiB on the stack)
_POS = K.Var("<pos>")


def reuse_fold_values(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    out, changed = [], False
    for s in body:
        if isinstance(s, K.Loop):
            inner, c = reuse_fold_values(s.body)
            inner, c2 = _in_row(inner)
            s = K.Loop(s.var, s.start, s.stop, inner, s.step, s.marks)
            changed |= c or c2
        out.append(s)
    return tuple(out), changed


def _in_row(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    """In one loop body: folds (loop nests) followed by a map loop recomputing a fold value."""
    body = list(body)
    for mi, m in enumerate(body):
        if not (isinstance(m, K.Loop) and _innermost(m) and m.trip > 0 and m.start == K.Const(0)):
            continue
        # the row's own index locals, read by the fold and the map alike (a reshape's row)
        row_lets = tuple(s for s in body[:mi] if isinstance(s, K.Let) and s.var.ty == K.INDEX)
        for let in [s for s in m.body if isinstance(s, K.Let) and s.var.ty == F32 and _costly(s.value)]:
            want = _canon(_inline(let.value, row_lets + m.body), {m.var.name})
            if want is None:
                continue
            sites = _fold_sites(body[:mi], want, m.trip, row_lets)
            if sites is None:
                continue
            row = K.Buf(_fresh(body, "row_" + let.var.name), F32, m.trip)
            first = min(i for i, _, _ in sites)
            for i, path, fl in sites:
                body[i] = _store_after(body[i], path, fl, row)
            mapped = tuple(K.Let(s.var, K.Load(row, m.var)) if s is let else s for s in m.body)
            body[mi] = K.Loop(m.var, m.start, m.stop, _drop_dead(mapped), m.step, m.marks)
            body.insert(first, K.ArrayDecl(row))
            return tuple(body), True
    return tuple(body), False


def _innermost(loop: K.Loop) -> bool:
    return not any(isinstance(s, K.Loop) for s in K.walk(loop.body))


def _costly(e: K.Expr) -> bool:
    return isinstance(e, K.Call) or any(_costly(c) for c in K.children(e))


def _inline(e: K.Expr, body) -> K.Expr:
    """`e` with the locals of `body` replaced by their values."""
    defs = {s.var.name: s.value for s in body if isinstance(s, K.Let)}

    def sub(x: K.Expr) -> K.Expr:
        if isinstance(x, K.Var) and x.name in defs:
            return sub(defs[x.name])
        kids = K.children(x)
        return K.rebuild(x, tuple(sub(k) for k in kids)) if kids else x
    return sub(e)


def _canon(e: K.Expr, pos_vars: set[str]) -> K.Expr | None:
    """`e` with every load index written as (index without the position) + <pos>; None when
    an index does not hold the position vars exactly once each, or they occur elsewhere."""
    if isinstance(e, K.Load):
        t = terms(e.index, {})
        if {a.name for a in t if isinstance(a, K.Var)} & pos_vars != pos_vars:
            return None
        if any(t.get(K.Var(v)) != 1 for v in pos_vars):
            return None
        rest = {a: c for a, c in t.items() if not (isinstance(a, K.Var) and a.name in pos_vars)}
        if any(K.free_vars(a) & pos_vars for a in rest):
            return None
        return K.Load(e.buf, K.Binary("+", _sum(rest), _POS, K.INDEX))
    if isinstance(e, K.Var) and e.name in pos_vars:
        return None
    kids = K.children(e)
    new = []
    for k in kids:
        c = _canon(k, pos_vars)
        if c is None:
            return None
        new.append(c)
    return K.rebuild(e, tuple(new)) if kids else e


def _sum(t: dict) -> K.Expr:
    """A canonical sum of `t`'s terms (the same terms always give the same tree)."""
    out: K.Expr = K.Const(0)
    for a, c in sorted(t.items(), key=lambda kv: repr(kv[0])):
        out = K.Binary("+", out, K.Binary("*", a, K.Const(c), K.INDEX), K.INDEX)
    return out


def _drop_dead(body: tuple[K.Stmt, ...]) -> tuple[K.Stmt, ...]:
    """`body` without the values nothing after them reads."""
    out = list(body)
    while True:
        used: set[str] = set()
        for s in K.walk(tuple(out)):
            for e in K.stmt_exprs(s):
                K.free_vars(e, used)
        dead = [i for i, s in enumerate(out) if isinstance(s, K.Let) and s.var.name not in used]
        if not dead:
            return tuple(out)
        out = [s for i, s in enumerate(out) if i not in dead]


def _fold_sites(before, want: K.Expr, n: int, row_lets: tuple[K.Let, ...]):
    """Where folds before the map compute `want`: (statement index, loop path, Let), covering
    positions [0, n) exactly once; None if not found."""
    sites, covered = [], 0
    for i, s in enumerate(before):
        if not isinstance(s, K.Loop):
            continue
        for path, inner, pos_vars, lo, hi in _leaf_loops(s):
            for let in inner.body:
                if isinstance(let, K.Let) and let.var.ty == F32:
                    got = _canon(_inline(let.value, row_lets + inner.body), pos_vars)
                    if got is not None and got == want:
                        sites.append((i, path, let))
                        covered += hi - lo
                        break
    return sites if sites and covered == n else None


def _leaf_loops(s: K.Loop, path=(), outer=()):
    """Innermost loops under `s` with the position variables leading to them and the span of
    positions they cover: a `j`/`l` nest (j steps by l's trip) or a single tail loop."""
    path = path + (s,)
    if _innermost(s):
        if s.trip <= 0 or not isinstance(s.start, K.Const):
            return
        if outer and len(outer) == 1 and outer[0].step == s.trip and outer[0].start == K.Const(0) and s.start == K.Const(0):
            o = outer[0]
            yield path, s, {o.var.name, s.var.name}, 0, o.stop.value
        elif not outer and s.step == 1:
            yield path, s, {s.var.name}, s.start.value, s.stop.value
        return
    for c in s.body:
        if isinstance(c, K.Loop):
            yield from _leaf_loops(c, path, outer + (s,))


def _store_after(top: K.Loop, path, let: K.Let, row: K.Buf) -> K.Loop:
    """`top` with `row[position] = let.var` after `let` in the innermost loop of `path`."""
    pos_vars = [p.var for p in path]
    pos = pos_vars[0] if len(pos_vars) == 1 else K.Binary("+", pos_vars[0], pos_vars[1], K.INDEX)

    def rebuild(loop: K.Loop, depth: int) -> K.Loop:
        if depth == len(path) - 1:
            body = []
            for s in loop.body:
                body.append(s)
                if s is let:
                    body.append(K.Store(row, pos, let.var))
            return K.Loop(loop.var, loop.start, loop.stop, tuple(body), loop.step, loop.marks)
        nxt = path[depth + 1]
        return K.Loop(loop.var, loop.start, loop.stop,
                      tuple(rebuild(c, depth + 1) if c is nxt else c for c in loop.body), loop.step, loop.marks)
    return rebuild(top, 0)


def _fresh(body, base: str) -> str:
    names = {s.buf.name for s in K.walk(tuple(body)) if isinstance(s, K.ArrayDecl)}
    names |= {s.var.name for s in K.walk(tuple(body)) if isinstance(s, (K.Let, K.Decl))}
    name, k = base, 1
    while name in names:
        name, k = f"{base}_{k}", k + 1
    return name

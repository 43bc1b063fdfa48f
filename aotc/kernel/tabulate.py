"""Tables of values that depend only on the innermost loop's index: what a loop nest
recomputes on every row from per-column data (BatchNorm's `rsqrt(var + eps) * gamma` per
channel, in a loop over pixels) is computed once per column into a local array before the
nest, and read from there.

A candidate is an innermost loop C (from 0, step 1, a constant trip of at most
`MAX_COLUMNS`) directly in the body of a loop L that runs at least twice. A value of C is
per-column when it reads only C's index, values defined outside L that L does not change,
other per-column values, and buffers nothing in L writes (and L makes no opaque call). The
per-column values that cost something (a runtime math call or a float division) and that
the rest of C reads are tabulated: a loop before L computes them, the same expressions in
the same order, so the bits do not change. Values left unread are dropped by `dce`.
"""
from __future__ import annotations

import re

from . import ir as K

MAX_COLUMNS = 4096
MAX_TABLE_BYTES = 16384
_COSTLY_CALL = re.compile(r"aotc_(v\w+_)?(rsqrt|sqrt|cbrt|exp|expm1|log|log1p|tanh|erf|logistic|pow|atan2|sin|cos|tan)_")


def tabulate_columns(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    names = _bound_names(body)
    return _block(body, names)


def _block(body: tuple[K.Stmt, ...], names: set[str]) -> tuple[tuple[K.Stmt, ...], bool]:
    out: list[K.Stmt] = []
    changed = False
    for s in body:
        if isinstance(s, K.Loop):
            inner, c = _block(s.body, names)
            s = K.Loop(s.var, s.start, s.stop, inner, s.step, s.marks)
            tables, s = _tabulate(s, names)
            out.extend(tables)
            changed |= c or bool(tables)
        elif isinstance(s, K.If):
            t, c1 = _block(s.then, names)
            e, c2 = _block(s.orelse, names)
            s = K.If(s.cond, t, e)
            changed |= c1 or c2
        elif isinstance(s, K.Repeat):
            b, c = _block(s.body, names)
            s = K.Repeat(b)
            changed |= c
        out.append(s)
    return tuple(out), changed


def _tabulate(loop: K.Loop, names: set[str]) -> tuple[list[K.Stmt], K.Loop]:
    """(statements to put before `loop`, the loop reading tables) for loop L = `loop`."""
    if loop.trip < 2 or _opaque(loop.body):
        return [], loop
    inside_l = _bound_names(loop.body) | {loop.var.name}
    written = _written(loop.body)
    for k, c in enumerate(loop.body):
        if not (isinstance(c, K.Loop) and c.step == 1 and c.start == K.Const(0) and 1 < c.trip <= MAX_COLUMNS
                and not any(isinstance(x, K.Loop) for x in K.walk(c.body))):
            continue
        tables, new_c = _tables(c, inside_l, written, names)
        if tables:
            body = loop.body[:k] + (new_c,) + loop.body[k + 1:]
            return tables, K.Loop(loop.var, loop.start, loop.stop, body, loop.step, loop.marks)
    return [], loop


def _tables(c: K.Loop, inside_l: set[str], written: set[str], names: set[str]) -> tuple[list[K.Stmt], K.Loop]:
    per_column: dict[str, K.Let] = {}
    costly: set[str] = set()
    for s in c.body:
        if not isinstance(s, K.Let):
            continue
        free = K.free_vars(s.value)
        bufs = {ld.buf.name for ld in K.loads(s.value)}
        if (any(v != c.var.name and v not in per_column and v in inside_l for v in free)
                or bufs & written or free & written):
            continue
        if any(isinstance(x, K.Ptr) for x in K.nodes(s.value)):
            continue
        per_column[s.var.name] = s
        if _costs(s.value) or free & costly:
            costly.add(s.var.name)
    readers: set[str] = set()
    for s in c.body:
        if isinstance(s, K.Let) and s.var.name in per_column:
            continue
        for e in K.stmt_exprs(s):
            K.free_vars(e, readers)
    front = [per_column[n] for n in per_column if n in costly and n in readers]
    nbytes = sum(c.trip * max(1, (s.var.ty.bits if s.var.ty is not None else 64) // 8) for s in front)
    if not front or nbytes > MAX_TABLE_BYTES:
        return [], c
    # the per-column values the front needs, in order, renamed for the table loop
    need: set[str] = set()
    for s in reversed(list(per_column.values())):
        if s.var.name in {f.var.name for f in front} or s.var.name in need:
            need |= K.free_vars(s.value) & set(per_column)
            need.add(s.var.name)
    j = K.Var(_fresh(c.var.name + "_col", names), K.INDEX)
    rename = {c.var.name: j}
    table_body: list[K.Stmt] = []
    decls: list[K.Stmt] = []
    tabs: dict[str, K.Buf] = {}
    for s in per_column.values():
        if s.var.name not in need:
            continue
        v = K.Var(_fresh(s.var.name + "_col", names), s.var.ty)
        table_body.append(K.Let(v, K.substitute_expr(s.value, rename)))
        rename[s.var.name] = v
        if s in front:
            tab = K.Buf(_fresh("col_" + s.var.name, names), s.var.ty, c.trip)
            tabs[s.var.name] = tab
            decls.append(K.ArrayDecl(tab))
            table_body.append(K.Store(tab, j, v))
    table = K.Loop(j, K.Const(0), K.Const(c.trip), tuple(table_body), 1, frozenset({K.VECTOR}))
    body = tuple(K.Let(s.var, K.Load(tabs[s.var.name], c.var)) if isinstance(s, K.Let) and s.var.name in tabs
                 else s for s in c.body)
    return decls + [table], K.Loop(c.var, c.start, c.stop, body, c.step, c.marks)


def _costs(e: K.Expr) -> bool:
    for x in K.nodes(e):
        if isinstance(x, K.Call) and _COSTLY_CALL.match(x.fn + "_"):
            return True
        if isinstance(x, K.Binary) and x.op == "/" and x.ty is not None and x.ty.kind == "float":
            return True
    return False


def _opaque(body: tuple[K.Stmt, ...]) -> bool:
    return any(isinstance(x, (K.CallStmt, K.Exec)) for x in K.walk(body))


def _written(body: tuple[K.Stmt, ...]) -> set[str]:
    out: set[str] = set()
    for x in K.walk(body):
        if isinstance(x, K.Store):
            out.add(x.buf.name)
        elif isinstance(x, K.Assign):
            out.add(x.var.name)
    return out


def _bound_names(body: tuple[K.Stmt, ...]) -> set[str]:
    out: set[str] = set()
    for x in K.walk(body):
        if isinstance(x, (K.Let, K.Decl)):
            out.add(x.var.name)
        elif isinstance(x, K.ArrayDecl):
            out.add(x.buf.name)
        elif isinstance(x, K.Loop):
            out.add(x.var.name)
    return out


def _fresh(base: str, names: set[str]) -> str:
    name, k = base, 1
    while name in names:
        name, k = f"{base}_{k}", k + 1
    names.add(name)
    return name

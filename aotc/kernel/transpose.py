"""Tiled transposes: a copy nest whose innermost loop writes along an output row while it
reads down an input column runs as 8 x 8 tiles (runtime_c/aotc_transpose.c).

Matched on the IR after index simplification: a perfect nest of loops from 0 with
constant trip counts whose innermost body loads one f32 element and stores it (index
locals aside), the load and store indices affine in the loop variables; the innermost
variable steps the store by 1 and the load by a row of at least MIN_STRIDE elements; and
another loop variable steps the load by 1. Those two loops become calls of
`aotc_tr_f32` (strips of STRIP output rows, so threads can share a large one), inside the
remaining loops, which keep their order and marks. Elements are moved as they are: the
same bits in the same places.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES
from . import ir as K
from .simplify import simplify, terms

F32 = DTYPES["f32"]
MIN_STRIDE = 16  # a column read one cache line per element
MIN_SIDE = 8     # both sides at least one tile
STRIP = 16       # output rows per call when the rows split evenly
ONE = K.Const(1)


def tile_transposes(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    out, changed = [], False
    for s in body:
        if isinstance(s, K.Loop):
            new = _rewrite(s)
            if new is not None:
                out.append(new)
                changed = True
                continue
        out.append(s)
    return tuple(out), changed


def _rewrite(top: K.Loop) -> K.Stmt | None:
    loops = [top]
    while len(loops[-1].body) == 1 and isinstance(loops[-1].body[0], K.Loop):
        loops.append(loops[-1].body[0])
    if len(loops) < 2 or not all(_plain(lp) for lp in loops):
        return None
    copy = _copy(loops[-1].body)
    if copy is None:
        return None
    src, ia, dst, ib = copy
    env = {lp.var.name: (0, lp.stop.value - 1) for lp in loops}
    ta, tb = terms(simplify(ia, env), env), terms(simplify(ib, env), env)
    names = {lp.var.name for lp in loops}
    if not all(k == ONE or isinstance(k, K.Var) and k.name in names for k in (*ta, *tb)):
        return None
    inner = loops[-1]
    v_in = inner.var
    lds = ta.get(v_in, 0)
    if tb.get(v_in) != 1 or lds < MIN_STRIDE:
        return None
    outer = [lp for lp in loops[:-1] if ta.get(lp.var) == 1]
    if len(outer) != 1:
        return None
    row = outer[0]
    v_out, n_out, n_in = row.var, row.stop.value, inner.stop.value
    ldd = tb.get(v_out, 0)
    if n_out < MIN_SIDE or n_in < MIN_SIDE or not _distinct(tb, loops):
        return None
    rest = [lp for lp in loops if lp is not row and lp is not inner]
    base_a = _affine({k: c for k, c in ta.items() if k not in (v_out, v_in)})
    base_b = _affine({k: c for k, c in tb.items() if k not in (v_out, v_in)})
    if n_out % STRIP == 0 and n_out > STRIP:
        t = K.Var(_fresh(top, "strip"))
        call = _call(STRIP, n_in, src, base_a + t * STRIP, lds, dst, base_b + t * (STRIP * ldd), ldd)
        body: tuple[K.Stmt, ...] = (K.Loop(t, K.Const(0), K.Const(n_out // STRIP), (call,), 1,
                                           frozenset({K.PARALLEL})),)
    else:
        body = (_call(n_out, n_in, src, base_a, lds, dst, base_b, ldd),)
    for lp in reversed(rest):
        body = (K.Loop(lp.var, lp.start, lp.stop, body, lp.step, lp.marks - {K.VECTOR}),)
    return body[0]


def _distinct(t: dict[K.Expr, int], loops: list[K.Loop]) -> bool:
    """Whether the store writes a different element on every trip of the nest (so the
    calls, and threads sharing their strips, may write in any order): the coefficients,
    smallest first, each step past everything the smaller ones reach."""
    reach = 0
    for c, n in sorted((t.get(lp.var, 0), lp.stop.value) for lp in loops if lp.stop.value > 1):
        if c <= reach:
            return False
        reach += c * (n - 1)
    return True


def _plain(lp: K.Loop) -> bool:
    return (lp.step == 1 and lp.start == K.Const(0) and isinstance(lp.stop, K.Const)
            and isinstance(lp.stop.value, int) and lp.stop.value > 0)


def _copy(body: tuple[K.Stmt, ...]):
    """(source, its index, destination, its index) when `body` stores one f32 element it
    loads (index locals inlined); else None."""
    index: dict[str, K.Expr] = {}
    value: K.Let | None = None
    store: K.Store | None = None
    for s in body:
        if isinstance(s, K.Let) and s.var.ty == K.INDEX and not list(K.loads(s.value)):
            index[s.var.name] = K.substitute_expr(s.value, index)
        elif isinstance(s, K.Let) and value is None and isinstance(s.value, K.Load):
            value = s
        elif isinstance(s, K.Store) and store is None:
            store = s
        else:
            return None
    if value is None or store is None or store.value != value.var:
        return None
    src, dst = value.value.buf, store.buf
    if src.dtype != F32 or dst.dtype != F32 or value.var.ty != F32 or src.name == dst.name:
        return None
    return (src, K.substitute_expr(value.value.index, index), dst, K.substitute_expr(store.index, index))


def _affine(t: dict[K.Expr, int]) -> K.Expr:
    out: K.Expr = K.Const(t.get(ONE, 0))
    for k, c in sorted(((k, c) for k, c in t.items() if k != ONE), key=lambda kc: kc[0].name):
        out = out + k * c
    return out


def _call(rows: int, n_in: int, src: K.Buf, at_a: K.Expr, lds: int, dst: K.Buf, at_b: K.Expr,
          ldd: int) -> K.CallStmt:
    return K.CallStmt("aotc_tr_f32", (K.Const(rows), K.Const(n_in), K.Ptr(src, at_a), K.Const(lds),
                                      K.Ptr(dst, at_b), K.Const(ldd)), rows * n_in)


def _fresh(top: K.Loop, base: str) -> str:
    used = {s.var.name for s in K.walk((top,)) if isinstance(s, (K.Loop, K.Let, K.Decl))}
    name, k = base, 1
    while name in used:
        name, k = f"{base}_{k}", k + 1
    return name

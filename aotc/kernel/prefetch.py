"""Prefetching the next row while a kernel works on one it already holds.

A kernel over rows that reads each row of an input more than once (softmax: its maximum,
then exp and sum, then the division; layernorm: the mean, the variance, the map) waits on
memory in its first pass over a row and runs from the L1 cache in the later ones, where
the memory system idles. This pass puts a prefetch of the next row's elements into the
second pass over the row: each block of that pass asks for the line of the next row that
it reads itself in the current one, so the next row's first pass finds it in the cache.
Softmax [256,4096] ran in 0.75 of the time (medians, alternated), layernorm [512,1024] in
0.8, on a 2-core Zen 3.

The pattern, on the kernel's top-level row loop `r` (after split_range: over [lo, hi) or
whole): two or more statements of its body read one input row `X[r * R + ...]`, the row
at least MIN_ROW_BYTES and X at least MIN_BUFFER_BYTES (smaller ones stay in the caches).
The first later statement that is a loop over the row in blocks (a reduction's lane
blocks) or vectors gets `Prefetch(X, next * R + ...)` with `next = r + 1 < stop ? r + 1 :
r`, so the address is always inside X. A prefetch only moves a line: the results do not
change. It runs last (run_kernel_passes), so no other pass sees the hint.

prefetch_streams, after it: a vector loop over a long input stream (8 MiB or more) reads 2 KiB
ahead of its loads, where the ISA's hardware prefetch falls behind (AVX-512 on Zen 4).
"""
from __future__ import annotations

from . import ir as K
from .simplify import simplify, terms
from .vectorize import SIMD

MIN_ROW_BYTES = 1024
MIN_BUFFER_BYTES = 128 << 10
# prefetch_streams: inputs of at least this size (beyond the L2 and a slice of the L3), read
# this far ahead of the loads
MIN_STREAM_BYTES = 8 << 20
AHEAD_BYTES = 2048


def prefetch_next_rows(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    local = {s.buf.name for s in K.walk(body) if isinstance(s, K.ArrayDecl)}
    out, changed = [], False
    for s in body:
        if isinstance(s, K.Loop) and s.step == 1:
            s2 = _row_loop(s, local)
            if s2 is not None:
                s, changed = s2, True
        out.append(s)
    return tuple(out), changed


def _row_loads(s: K.Stmt, r: K.Var, local: set[str]) -> dict[str, int]:
    """{buffer: row stride} of the inputs `s` reads at `r * R + (terms without r)`."""
    found: dict[str, int] = {}
    for st in K.walk((s,)):
        for e in K.stmt_exprs(st):
            for ld in K.loads(e):
                b = ld.buf
                if b.name in local or not b.size:
                    continue
                t = terms(ld.index, {})
                stride = t.get(r, 0)
                if stride <= 0 or any(r.name in K.free_vars(a) for a in t if a != r):
                    continue
                nbytes = b.dtype.nbytes
                if stride * nbytes >= MIN_ROW_BYTES and b.size * nbytes >= MIN_BUFFER_BYTES:
                    found[b.name] = stride
    return found


def _row_loop(loop: K.Loop, local: set[str]) -> K.Loop | None:
    r = loop.var
    seen: set[str] = set()
    body = list(loop.body)
    for i, s in enumerate(body):
        rows = _row_loads(s, r, local)
        again = [b for b in rows if b in seen]
        seen |= set(rows)
        if not again:
            continue
        nxt = K.Select(K.Binary("<", loop.var + 1, loop.stop, K.BOOL), loop.var + 1, loop.var, K.INDEX)
        new = _add_prefetch(s, set(again), r.name, nxt)
        if new is None:  # not a loop over the row (a branch on what the first pass found): the next one
            continue
        body[i] = new
        return K.Loop(loop.var, loop.start, loop.stop, tuple(body), loop.step, loop.marks)
    return None


def _add_prefetch(s: K.Stmt, bufs: set[str], r: str, nxt: K.Expr) -> K.Stmt | None:
    """`s` with its block loop over the row prefetching the next row of `bufs`."""
    if not isinstance(s, K.Loop):
        return None
    if SIMD in s.marks:  # a vector loop over the row: one prefetch per vector
        return _with_prefetches(s, s.body, bufs, r, nxt)
    inner = [b for b in s.body if isinstance(b, K.Loop)]
    if len(inner) == 1 and SIMD in inner[0].marks and inner[0].start == K.Const(0):
        # blocks of lanes (a fold's lane loop): one prefetch per block, lane 0's element
        zero = {inner[0].var.name: K.Const(0)}
        return _with_prefetches(s, inner[0].body, bufs, r, nxt, zero)
    return None


def _with_prefetches(loop: K.Loop, reads: tuple[K.Stmt, ...], bufs: set[str], r: str, nxt: K.Expr,
                     zero: dict[str, K.Expr] | None = None) -> K.Loop | None:
    values = {r: nxt, **(zero or {})}
    hints, done = [], set()
    bound = {st.var.name for st in reads if isinstance(st, K.Let)}
    for st in reads:
        for e in K.stmt_exprs(st):
            for ld in K.loads(e):
                if ld.buf.name in bufs and ld.buf.name not in done and not K.free_vars(ld.index) & bound:
                    hints.append(K.Prefetch(ld.buf, simplify(K.substitute_expr(ld.index, values), {})))
                    done.add(ld.buf.name)
    if not hints:
        return None
    return K.Loop(loop.var, loop.start, loop.stop, tuple(hints) + loop.body, loop.step, loop.marks)


def prefetch_streams(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    """Each vector loop reading an input of at least MIN_STREAM_BYTES contiguously (its index
    steps by 1 with the loop's variable) starts with `Prefetch(X, min(i + AHEAD, size - 1),
    ahead=True)`, once per input: the line AHEAD_BYTES beyond the one the vector reads, always
    inside X. The hint is an instruction only where the ISA needs it (AOTC_PREFETCH_AHEAD in
    aotc_simd.h): a 16M f32 sum on Zen 4 took 1.87-1.98 ms with it on AVX-512 against 1.75-2.33
    without (medians of alternated runs), and AVX2 did not gain. It runs last, after
    prefetch_next_rows."""
    local = {s.buf.name for s in K.walk(body) if isinstance(s, K.ArrayDecl)}
    changed = False

    def visit(stmts: tuple[K.Stmt, ...]) -> tuple[K.Stmt, ...]:
        nonlocal changed
        out = []
        for st in stmts:
            if isinstance(st, K.Loop) and SIMD in st.marks:
                new = _stream_hints(st, local)
                if new is not None:
                    st, changed = new, True
            elif K.nested(st):
                st = K.with_nested(st, tuple(visit(b) for b in K.nested(st)))
            out.append(st)
        return tuple(out)

    return visit(body), changed


def _stream_hints(loop: K.Loop, local: set[str]) -> K.Loop | None:
    bound = {st.var.name for st in K.walk(loop.body) if isinstance(st, K.Let)}
    hints, done = [], set(local)
    for st in K.walk(loop.body):
        for e in K.stmt_exprs(st):
            for ld in K.loads(e):
                b = ld.buf
                if b.name in done or not b.size or b.size * b.dtype.nbytes < MIN_STREAM_BYTES:
                    continue
                if K.free_vars(ld.index) & bound or terms(ld.index, {}).get(loop.var, 0) != 1:
                    continue
                done.add(b.name)
                ahead = simplify(ld.index + max(1, AHEAD_BYTES // b.dtype.nbytes), {})
                last = K.Const(b.size - 1)
                index = K.Select(K.Binary("<", ahead, K.Const(b.size), K.BOOL), ahead, last, K.INDEX)
                hints.append(K.Prefetch(b, index, ahead=True))
    if not hints:
        return None
    return K.Loop(loop.var, loop.start, loop.stop, tuple(hints) + loop.body, loop.step, loop.marks)

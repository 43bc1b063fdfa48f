"""Non-temporal stores for outputs too large to stay in the caches.

A kernel that writes a large output with plain stores first reads every line it writes
(the store's read-for-ownership), and the lines it writes evict what the caches held. A
non-temporal store writes the line whole, around the caches. That pays when the output is
larger than the caches can hold anyway, and costs when a kernel soon reads the output
back from a cache the store bypassed, so it is used only above a size (`min_bytes`,
CompileOptions.stream_min_bytes, 16 MiB by default: on a 2-core Zen 3 slice, a 16M-float
map ran in 0.74 of its time and writing then summing 4M floats in 0.9, while 1M floats
written then summed took 1.7 times as long).

A store is streamed when it is in the body of a `simd` loop (kernel/vectorize.py, so its
elements are contiguous in the loop's variable), writes one of the kernel's outputs of at
least `min_bytes`, and the kernel neither reads that buffer (an in-place kernel writes
over what it reads) nor hands it to a micro-kernel. The printer writes such a store as
`aotc_vf_stream` (a plain store where the address is not aligned to the vector, and on
targets with no such store); the scalar tail keeps plain stores. The kernel then ends with `aotc_stream_fence()`, so every
streamed line is visible before the kernel returns to its caller or to the thread pool.
The bits stored are the same either way.
"""
from __future__ import annotations

from . import ir as K
from .vectorize import SIMD

FENCE = "aotc_stream_fence"


def stream_large_stores(body: tuple[K.Stmt, ...], outputs: dict[str, int],
                        min_bytes: int) -> tuple[tuple[K.Stmt, ...], bool]:
    """`body` with the vector stores to each output in `outputs` (name -> bytes) of at
    least `min_bytes` streamed, and the fence at its end; `min_bytes` <= 0: none."""
    if min_bytes <= 0:
        return body, False
    read = {x.buf.name for s in K.walk(body) for e in K.stmt_exprs(s) for x in K.nodes(e)
            if isinstance(x, (K.Load, K.Ptr)) and x.buf is not None}
    wide = {n for n, size in outputs.items() if size >= min_bytes and n not in read}
    if not wide:
        return body, False
    out, changed = _mark(body, wide, False)
    if not changed:
        return body, False
    return out + (K.CallStmt(FENCE, ()),), True


def _mark(body: tuple[K.Stmt, ...], wide: set[str], in_simd: bool) -> tuple[tuple[K.Stmt, ...], bool]:
    out, changed = [], False
    for s in body:
        if isinstance(s, K.Store) and in_simd and s.buf.name in wide and not s.stream:
            s, changed = K.Store(s.buf, s.index, s.value, True), True
        elif isinstance(s, K.Loop):
            inner, c = _mark(s.body, wide, SIMD in s.marks)
            if c:
                s, changed = K.Loop(s.var, s.start, s.stop, inner, s.step, s.marks), True
        elif isinstance(s, K.If):
            # an If inside a vector body is printed as scalar code: only loops below it qualify
            t, c1 = _mark(s.then, wide, False)
            e, c2 = _mark(s.orelse, wide, False)
            if c1 or c2:
                s, changed = K.If(s.cond, t, e), True
        elif isinstance(s, K.Repeat):
            b, c = _mark(s.body, wide, False)
            if c:
                s, changed = K.Repeat(b), True
        out.append(s)
    return tuple(out), changed

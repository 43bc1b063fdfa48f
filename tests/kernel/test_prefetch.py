"""kernel/prefetch.py: a kernel that reads an input row more than once prefetches the next
row in its second pass over the row, at an index that stays inside the buffer; small
buffers, single passes and local arrays get nothing. A vector loop over a long input stream
reads AHEAD_BYTES ahead of it, clamped to the buffer's last element; small buffers, strided
reads and local arrays get nothing. The results against XLA are checked in
tests/ops/test_prefetch_rows.py and tests/ops/test_prefetch_streams.py."""
from __future__ import annotations

from aotc.emit_c.kernel_c import stmts
from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.prefetch import AHEAD_BYTES, MIN_BUFFER_BYTES, MIN_STREAM_BYTES, prefetch_next_rows, prefetch_streams
from aotc.kernel.vectorize import mark_simd

F32 = DTYPES["f32"]
R, J, L = K.Var("r"), K.Var("j"), K.Var("l")
ROWS, COLS = 256, 1024


def _kernel(x: K.Buf, passes: int = 2, stop: K.Expr = K.Const(ROWS)) -> tuple[K.Stmt, ...]:
    """`passes` vector loops over row r of x (a fold's lane blocks for the first), storing
    into out."""
    out = K.Buf("out", F32, ROWS * COLS)
    lane = K.Buf("lane", F32, 16)
    body: list[K.Stmt] = [K.ArrayDecl(lane, K.Const(0.0, F32))]
    fold = K.Loop(L, K.Const(0), K.Const(16), (
        K.Store(lane, L, K.Load(lane, L) + K.Load(x, R * COLS + J + L)),), 1, frozenset({K.VECTOR}))
    body.append(K.Loop(J, K.Const(0), K.Const(COLS), (fold,), 16))
    for k in range(1, passes):
        i = K.Var(f"i{k}")
        body.append(K.Loop(i, K.Const(0), K.Const(COLS), (
            K.Store(out, R * COLS + i, K.Load(x, R * COLS + i) * K.Load(lane, K.Const(0))),), 1,
            frozenset({K.VECTOR})))
    marked, _ = mark_simd((K.Loop(R, K.Const(0), stop, tuple(body), 1, frozenset({K.PARALLEL})),))
    return marked


def _hints(body) -> list[K.Prefetch]:
    return [s for s in K.walk(body) if isinstance(s, K.Prefetch)]


def test_the_second_pass_prefetches_the_next_row_inside_the_buffer():
    x = K.Buf("x", F32, ROWS * COLS)
    out, changed = prefetch_next_rows(_kernel(x))
    (h,) = _hints(out)
    assert changed and h.buf == x
    c = "\n".join(stmts(out))
    assert "AOTC_PREFETCH_R(&x[((r + 1 < 256) ? (r + 1) : r) * 1024 + i1]);" in c
    # the hint is the first statement of the second pass's vector loop, not of the first pass
    second = [s for s in K.walk(out) if isinstance(s, K.Loop) and s.var.name == "i1"][0]
    assert second.body[0] == h
    first = [s for s in K.walk(out) if isinstance(s, K.Loop) and s.var.name == "j"][0]
    assert not _hints(first.body)


def test_a_ranged_row_loop_clamps_at_its_own_end():
    x = K.Buf("x", F32, ROWS * COLS)
    out, _ = prefetch_next_rows(_kernel(x, stop=K.Var("hi")))
    assert "(r + 1 < hi) ? (r + 1) : r" in "\n".join(stmts(out))


def test_nothing_for_one_pass_a_small_buffer_or_a_local_array():
    x = K.Buf("x", F32, ROWS * COLS)
    one = _kernel(x, passes=1)
    assert prefetch_next_rows(one) == (one, False)
    small = _kernel(K.Buf("x", F32, MIN_BUFFER_BYTES // 4 - 1))
    assert prefetch_next_rows(small) == (small, False)
    local = (K.ArrayDecl(K.Buf("x", F32, ROWS * COLS)),) + _kernel(x)
    assert not _hints(prefetch_next_rows(local)[0])


def _stream(x: K.Buf, n: int, stride: int = 1) -> tuple[K.Stmt, ...]:
    """A sum of x[0:n] in blocks of 16 lanes (a split reduction's partial kernel) reading
    element `stride * (j + l)`."""
    lane = K.Buf("lane", F32, 16)
    fold = K.Loop(L, K.Const(0), K.Const(16), (
        K.Store(lane, L, K.Load(lane, L) + K.Load(x, (J + L) * stride)),), 1, frozenset({K.VECTOR}))
    marked, _ = mark_simd((K.ArrayDecl(lane, K.Const(0.0, F32)), K.Loop(J, K.Const(0), K.Const(n), (fold,), 16)))
    return marked


def test_a_long_stream_is_read_ahead_inside_the_buffer():
    n = MIN_STREAM_BYTES // 4
    x = K.Buf("x", F32, n)
    out, changed = prefetch_streams(_stream(x, n))
    (h,) = _hints(out)
    assert changed and h.buf == x and h.ahead
    d = AHEAD_BYTES // 4
    assert f"AOTC_PREFETCH_AHEAD(&x[(j + l + {d} < {n}) ? (j + l + {d}) : {n - 1}]);" in "\n".join(stmts(out))
    lanes = [s for s in K.walk(out) if isinstance(s, K.Loop) and s.var == L][0]
    assert lanes.body[0] == h  # at the head of the vector loop: one hint per vector


def test_no_read_ahead_for_a_small_buffer_a_strided_read_or_a_local_array():
    n = MIN_STREAM_BYTES // 4
    small = _stream(K.Buf("x", F32, n - 1), n - 1)
    assert prefetch_streams(small) == (small, False)
    x = K.Buf("x", F32, 2 * n)
    strided = _stream(x, n, stride=2)
    assert not _hints(prefetch_streams(strided)[0])
    local = (K.ArrayDecl(x),) + _stream(x, n)
    assert not _hints(prefetch_streams(local)[0])


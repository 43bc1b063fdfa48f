"""Choosing the threaded loop: collapsing outer dimensions, gated by work."""
from __future__ import annotations

from aotc.emit_c.kernel_c import stmts
from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.passes import run_kernel_passes
from aotc.kernel.parallel import RANGE_START, collapse_outer, split_range, work

F32 = DTYPES["f32"]
X, OUT = K.Buf("x", F32), K.Buf("out", F32)


def _nhwc(n, h, w, c, marks=(K.PARALLEL,)):
    vs = [K.Var(f"i{d}") for d in range(4)]
    lin = ((vs[0] * h + vs[1]) * w + vs[2]) * c + vs[3]
    body: tuple[K.Stmt, ...] = (K.Store(OUT, lin, K.Load(X, lin)),)
    for v, t in reversed(list(zip(vs, (n, h, w, c)))):
        body = (K.Loop(v, K.Const(0), K.Const(t), body, 1, frozenset(marks)),)
    return body


def test_batch_one_nest_threads_over_rows_times_columns():
    body, outer = run_kernel_passes(_nhwc(1, 56, 56, 64))
    assert outer == 56 * 56
    text = "\n".join(stmts(body))
    assert "for (int64_t f = lo; f < hi; ++f)" in text
    assert "for (int64_t i3 = 0; i3 < 64; ++i3)" in text  # the contiguous loop stays whole
    assert "out[f * 64 + i3] = x[f * 64 + i3];" in text  # indices simplified through the collapse


def test_small_kernels_stay_on_one_thread():
    assert run_kernel_passes(_nhwc(1, 4, 4, 8))[1] == 0


def test_unmarked_loops_are_never_split():
    assert run_kernel_passes(_nhwc(1, 56, 56, 64, marks=()))[1] == 0


def test_no_threads_when_the_kernel_takes_the_pool_itself():
    assert run_kernel_passes(_nhwc(1, 56, 56, 64), threaded_ok=False)[1] == 0


def test_collapse_keeps_a_large_outer_loop():
    body, changed = collapse_outer(_nhwc(512, 2, 2, 64))
    assert not changed


def test_work_counts_innermost_statements():
    assert work(_nhwc(2, 3, 4, 5)) == 120
    body, outer = split_range(_nhwc(64, 32, 32, 1), True)
    assert outer == 64


def _once_per_call(chunks: int, work_per_chunk: int) -> tuple[K.Stmt, ...]:
    """A chunk loop that prepares its call's table at the call's first chunk (as the taps
    convolution packs its weights) and reads it in every chunk."""
    ch = K.Var("chunk")
    prep = K.CallStmt("prepare", (K.Ptr(OUT, RANGE_START * 8),), 1)
    use = K.CallStmt("use", (K.Ptr(OUT, RANGE_START * 8), ch), work_per_chunk)
    return (K.Loop(ch, K.Const(0), K.Const(chunks), (K.If(ch.eq(RANGE_START), (prep,)), use), 1,
                   frozenset((K.PARALLEL,))),)


def test_a_threaded_call_reads_its_own_first_iteration():
    body, outer = split_range(_once_per_call(4, 1 << 16), True)
    assert outer == 4
    text = "\n".join(stmts(body))
    assert "for (int64_t chunk = lo; chunk < hi; ++chunk)" in text
    assert "if (chunk == lo)" in text and "use(out + lo * 8, chunk);" in text


def test_a_kernel_run_whole_reads_the_loops_start():
    for body, threaded in ((_once_per_call(4, 1 << 16), False), (_once_per_call(4, 1), True)):
        whole, outer = split_range(body, threaded)
        assert outer == 0
        text = "\n".join(stmts(whole))
        assert "lo" not in text.replace("for (int64_t chunk = 0", ""), text
        assert "if (chunk == 0)" in text and "use(out, chunk);" in text, text

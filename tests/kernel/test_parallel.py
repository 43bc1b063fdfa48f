"""Choosing the threaded loop: collapsing outer dimensions, gated by work."""
from __future__ import annotations

from aotc.emit_c.kernel_c import stmts
from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.passes import run_kernel_passes
from aotc.kernel.parallel import collapse_outer, split_range, work

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

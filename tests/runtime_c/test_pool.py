"""aotc_parallel_for visits every index exactly once, for many (n, threads)."""
from __future__ import annotations

import numpy as np
import pytest

THREADS = [0, 1, 2, 3, 4, 8]
SIZES = [0, 1, 2, 3, 5, 7, 8, 9, 31, 32, 33, 100, 1000, 4097]


def visit(rt, threads: int, n: int, reps: int = 3, via_fn: bool = False) -> tuple[np.ndarray, int]:
    counts = np.zeros(max(n, 1), np.int32)
    calls = rt.lib.t_pool_visit(threads, n, reps, int(via_fn), rt.ffi.from_buffer("int32_t[]", counts))
    assert calls >= 0, "invalid [begin, end) range" if calls == -1 else "allocation failed"
    return counts[:n], calls


@pytest.mark.parametrize("threads", THREADS)
def test_each_index_once(rt, threads):
    for n in SIZES:
        counts, calls = visit(rt, threads, n)
        assert np.all(counts == 3), f"threads={threads} n={n}: {np.unique(counts)}"
        if n == 0:
            assert calls == 0
        elif threads <= 1 or n == 1:
            assert calls == 3  # serial: one fn(ctx, 0, n) per run
        else:
            # contiguous chunks: at most 4 per thread, never more than n
            assert 3 <= calls <= 3 * min(n, 4 * threads)


def test_plug_in_signature(rt):
    for threads in (1, 2, 3):
        for n in (0, 1, 2, 10, 999):
            counts, _ = visit(rt, threads, n, reps=2, via_fn=True)
            assert np.all(counts == 2)


def test_many_runs_back_to_back(rt):
    counts, _ = visit(rt, 2, 64, reps=2000)
    assert np.all(counts == 2000)


def test_nested_parallel_for_runs_serially(rt):
    for threads in (1, 2, 4):
        assert rt.lib.t_pool_nested(threads, 16, 10) == 160


def test_workers_use_callers_fp_environment(rt):
    x = np.full(10000, 1e-45, np.float32)
    y = np.ones_like(x)
    nonzero = rt.lib.t_pool_ftz(3, rt.ffi.from_buffer("float[]", x), rt.ffi.from_buffer("float[]", y), x.size)
    assert nonzero == 0


def test_create_destroy(rt):
    lib, ffi = rt.lib, rt.ffi
    assert lib.aotc_pool_create(1) == ffi.NULL and lib.aotc_pool_create(0) == ffi.NULL
    assert lib.aotc_pool_create(-3) == ffi.NULL
    assert lib.aotc_pool_threads(ffi.NULL) == 1
    lib.aotc_pool_destroy(ffi.NULL)
    p = lib.aotc_pool_create(3)
    assert p != ffi.NULL and lib.aotc_pool_threads(p) == 3
    lib.aotc_pool_destroy(p)
    assert lib.t_pool_churn(4, 50) == 0

"""Threads split large kernels: results are identical to one thread and to XLA's,
through the built-in pool and through an application's own parallel_for."""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

from .conftest import ROOT, require_aotc, require_jax

CHAIN = ROOT / "benchmarks" / "chain1m.hlo"
CHAIN_CFG = ROOT / "benchmarks" / "chain1m.yaml"


def _inputs():
    rng = np.random.default_rng(3)
    return {"x": rng.uniform(-3, 3, 1 << 20).astype(np.float32)}


def test_two_threads_give_the_one_thread_result():
    aotc = require_aotc("run")
    one = aotc.run(str(CHAIN), config=str(CHAIN_CFG), inputs=_inputs(), threads=1)
    two = aotc.run(str(CHAIN), config=str(CHAIN_CFG), inputs=_inputs(), threads=2)
    assert one.keys() == two.keys()
    for k in one:
        assert one[k].tobytes() == two[k].tobytes()


@pytest.mark.jax
def test_threaded_chain_matches_xla():
    aotc = require_aotc("run")
    require_jax()
    from tests.oracle.xla import run_hlo

    ins = _inputs()
    (want,) = run_hlo(CHAIN.read_text(), [ins["x"]])
    got = aotc.run(str(CHAIN), config=str(CHAIN_CFG), inputs=ins, threads=2)
    (name,) = got
    np.testing.assert_allclose(got[name], want, rtol=2e-5, atol=1e-6)


DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libch.h"

static int calls;
/* an application pool: runs the chunks in reverse order on the calling thread */
static void my_parallel_for(void* user, int64_t n, void (*fn)(void*, int64_t, int64_t), void* ctx) {
    int64_t chunk = (n + 3) / 4;
    ++*(int*)user;
    for (int64_t hi = n; hi > 0; hi -= chunk) fn(ctx, hi - chunk > 0 ? hi - chunk : 0, hi);
}

int main(void) {
    ch_instance* a = ch_create(ch_ALLOC_ALL);
    ch_instance* b = ch_create(ch_ALLOC_ALL);
    float* xa = ch_arg_x_data(a);
    float* xb = ch_arg_x_data(b);
    for (int i = 0; i < (1 << 20); ++i) xa[i] = xb[i] = (float)((i % 2000) - 1000) / 300.0f;
    if (ch_set_parallel_for(b, my_parallel_for, &calls) != ch_OK) return 1;
    if (ch_run(a) != ch_OK || ch_run(b) != ch_OK) return 2;
    if (calls < 1) return 3;
    if (memcmp(ch_result_data(a, 0), ch_result_data(b, 0), ch_result_bytes(0)) != 0) return 4;
    if (ch_set_num_threads(a, 2) != ch_OK || ch_run(a) != ch_OK) return 5;
    if (memcmp(ch_result_data(a, 0), ch_result_data(b, 0), ch_result_bytes(0)) != 0) return 6;
    ch_destroy(a);
    ch_destroy(b);
    puts("ok");
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_application_pool_and_builtin_pool(tmp_path):
    aotc = require_aotc("compile")
    res = aotc.compile(str(CHAIN), config=str(CHAIN_CFG), out=str(tmp_path / "libch"),
                       options=aotc.CompileOptions(name="ch", emit=()))
    (tmp_path / "driver.c").write_text(DRIVER)
    exe = str(tmp_path / "driver")
    r = subprocess.run(["gcc", "-std=c11", "-O2", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror",
                        "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-I", str(tmp_path),
                        str(tmp_path / "driver.c"), res.c_path, "-lm", "-lpthread", "-o", exe],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([exe], capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr)


def test_gemm_split_over_threads_is_bit_identical():
    """A matmul large enough to be sliced over the pool gives the serial bits, and XLA's
    values (numpy float64 here only checks the size of the error; the bits are compared
    between thread counts)."""
    aotc = require_aotc("run")
    model = ROOT / "benchmarks" / "matmul512.hlo"
    cfg = ROOT / "benchmarks" / "matmul512.yaml"
    from aotc.driver import frontend

    fe = frontend(str(model), str(cfg))
    rng = np.random.default_rng(5)
    ins = {f.name: rng.standard_normal(f.shape.dims).astype(np.float32) for f in fe.signature.feeds}
    one = aotc.run(str(model), config=str(cfg), inputs=ins, threads=1)
    two = aotc.run(str(model), config=str(cfg), inputs=ins, threads=2)
    three = aotc.run(str(model), config=str(cfg), inputs=ins, threads=3)
    (name,) = one
    assert one[name].tobytes() == two[name].tobytes() == three[name].tobytes()
    a, b = (ins[f.name].astype(np.float64) for f in fe.signature.feeds)
    np.testing.assert_allclose(one[name], a @ b, rtol=1e-4, atol=1e-3)


WINDOWED = """HloModule windowed
max {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] maximum(p, q)
}
ENTRY main {
  x = f32[1,56,56,64] parameter(0)
  w = f32[3,3,64,64] parameter(1)
  d = f32[3,3,1,64] parameter(2)
  conv = f32[1,56,56,64] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  dw = f32[1,28,28,64] convolution(x, d), window={size=3x3 stride=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f, feature_group_count=64
  ninf = f32[] constant(-inf)
  pool = f32[1,28,28,64] reduce-window(x, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
  ROOT t = (f32[1,56,56,64], f32[1,28,28,64], f32[1,28,28,64]) tuple(conv, dw, pool)
}
"""

WINDOWED_CFG = """feeds:
  - {id: 0, name: x, shape: [1, 56, 56, 64], type: f32}
  - {id: 1, name: w, shape: [3, 3, 64, 64], type: f32}
  - {id: 2, name: d, shape: [3, 3, 1, 64], type: f32}
fetches:
  - {id: 0, name: conv}
  - {id: 1, name: dw}
  - {id: 2, name: pool}
"""


def test_windowed_ops_split_over_threads_are_bit_identical(tmp_path):
    """An im2col + GEMM convolution (pixel ranges with scratch of their own), a depthwise
    convolution and a max pool (output pixels) run threaded and give the serial bits."""
    aotc = require_aotc("run", "compile")
    model, cfg = tmp_path / "windowed.hlo", tmp_path / "windowed.yaml"
    model.write_text(WINDOWED)
    cfg.write_text(WINDOWED_CFG)
    res = aotc.compile(str(model), config=str(cfg), out=str(tmp_path / "libwin"),
                       options=aotc.CompileOptions(name="win", emit=()))
    src = open(res.c_path).read()
    for k in ("conv", "dw", "pool"):
        assert f"static void k_{k}_range(" in src, k  # each kernel is split over threads
    rng = np.random.default_rng(11)
    ins = {"x": rng.standard_normal((1, 56, 56, 64)).astype(np.float32),
           "w": rng.standard_normal((3, 3, 64, 64)).astype(np.float32),
           "d": rng.standard_normal((3, 3, 1, 64)).astype(np.float32)}
    runs = [aotc.run(str(model), config=str(cfg), inputs=ins, threads=t) for t in (1, 2, 3)]
    for k in runs[0]:
        assert runs[0][k].tobytes() == runs[1][k].tobytes() == runs[2][k].tobytes(), k
    x = ins["x"][0]
    padded = np.pad(x, ((1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
    want = np.max([padded[i:i + 55:2, j:j + 55:2] for i in range(3) for j in range(3)], axis=0)
    np.testing.assert_array_equal(runs[0]["pool"][0], want)


SUM = """HloModule big_sum
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[1048576] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add
}
"""


def test_a_large_sum_split_for_threads_gives_the_same_bits_for_any_thread_count(tmp_path):
    """The chunks are fixed by the shape (lower/split_reduce.py), not by the thread count."""
    aotc = require_aotc("run")
    model = tmp_path / "big_sum.hlo"
    model.write_text(SUM)
    x = {"x": np.random.default_rng(9).standard_normal(1 << 20).astype(np.float32)}
    runs = [aotc.run(str(model), inputs=x, threads=t) for t in (1, 2, 3)]
    (name,) = runs[0]
    assert all(r[name].tobytes() == runs[0][name].tobytes() for r in runs)
    exact = x["x"].astype(np.float64)
    assert abs(float(runs[0][name]) - exact.sum()) <= 1e-6 * np.abs(exact).sum()  # f32 sums: a few ulp of the terms


HEADS = """HloModule heads
ENTRY main {
  q = f32[1,128,4,64] parameter(0)
  k = f32[1,128,4,64] parameter(1)
  v = f32[1,128,4,64] parameter(2)
  s = f32[1,4,128,128] dot(q, k), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
  c = f32[] constant(0.125)
  cb = f32[1,4,128,128] broadcast(c), dimensions={}
  scaled = f32[1,4,128,128] multiply(s, cb)
  o = f32[1,4,64,128] dot(v, scaled), lhs_batch_dims={0,2}, lhs_contracting_dims={1}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}
  ROOT t = (f32[1,4,128,128], f32[1,4,64,128]) tuple(scaled, o)
}
"""

HEADS_CFG = """feeds:
  - {id: 0, name: q, shape: [1, 128, 4, 64], type: f32}
  - {id: 1, name: k, shape: [1, 128, 4, 64], type: f32}
  - {id: 2, name: v, shape: [1, 128, 4, 64], type: f32}
fetches:
  - {id: 0, name: scaled}
  - {id: 1, name: o}
"""


def test_looped_gemm_calls_split_over_threads_are_bit_identical(tmp_path):
    """Dots batched over heads (q.k^T with an epilogue per call, and v^T.p) run their GEMM
    calls in ranges threads split, and give the serial bits for any thread count."""
    aotc = require_aotc("run", "compile")
    model, cfg = tmp_path / "heads.hlo", tmp_path / "heads.yaml"
    model.write_text(HEADS)
    cfg.write_text(HEADS_CFG)
    res = aotc.compile(str(model), config=str(cfg), out=str(tmp_path / "libheads"),
                       options=aotc.CompileOptions(name="heads", emit=()))
    src = open(res.c_path).read()
    for k in ("scaled", "o"):
        assert f"static void k_{k}_range(" in src, k  # the calls' loop is split over threads
    rng = np.random.default_rng(13)
    ins = {n: rng.standard_normal((1, 128, 4, 64)).astype(np.float32) for n in ("q", "k", "v")}
    runs = [aotc.run(str(model), config=str(cfg), inputs=ins, threads=t) for t in (1, 2, 3)]
    for key in runs[0]:
        assert runs[0][key].tobytes() == runs[1][key].tobytes() == runs[2][key].tobytes(), key

"""Sanitized runs: `aotc run --sanitize` (AddressSanitizer + UndefinedBehaviorSanitizer, any
report aborts) and `--sanitize=thread` reproduce XLA's outputs on corpus cases with loops,
sorts, scatters, windows, gathers and zero-size arrays; and a ThreadSanitizer build of a C
program drives concurrent instances, the built-in pool, create/destroy cycles and an
application's parallel_for with no report (TSan exits 66 on one)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import aotc
from aotc.cli import main
from aotc.toolchain.build import sanitizer_flags

from .conftest import corpus_all_cases

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("nm") is None,
                               reason="needs gcc with sanitizer runtimes, and nm")
CASES = {c.dir.name: c for c in corpus_all_cases() if c.dir.name in
         ("op_while", "op_sort", "op_scatter", "op_reduce_window", "tf_gather")}


@needs_gcc
@pytest.mark.parametrize("name,sanitize", [
    ("op_while", "address"),
    *[pytest.param(n, "address", marks=pytest.mark.slow) for n in ("op_sort", "op_scatter", "op_reduce_window",
                                                                  "tf_gather")],
    pytest.param("op_while", "thread", marks=pytest.mark.slow),
])
def test_a_sanitized_run_matches_xla(tmp_path, name, sanitize):
    case = CASES[name]
    inputs = tmp_path / "in.npz"
    np.savez(inputs, **case.input_dict())
    out = tmp_path / "out.npz"
    flag = "--sanitize" if sanitize == "address" else f"--sanitize={sanitize}"
    r = CliRunner().invoke(main, ["run", str(case.model_path), "--config", str(case.cfg_path), "--cc", "gcc",
                                  flag, "--inputs", str(inputs), "--output", str(out)])
    assert r.exit_code == 0, r.output
    with np.load(out) as z:
        case.check({k: z[k] for k in z.files}, label=f"aotc run {flag}")


@needs_gcc
@pytest.mark.parametrize("sanitize,symbol", [("address", "__asan_init"), ("thread", "__tsan_init")])
def test_the_sanitized_runner_is_instrumented(tmp_path, sanitize, symbol):
    from aotc.api import _runner
    _, _, runner, _, _ = _runner(str(CASES["op_while"].model_path), str(CASES["op_while"].cfg_path), None,
                              aotc.CompileOptions(cc="gcc", target="native", sanitize=sanitize), {})
    syms = subprocess.run(["nm", str(runner)], capture_output=True, text=True).stdout
    assert symbol in syms


def test_a_sanitized_run_for_another_machine_is_refused(tmp_path):
    case = CASES["op_while"]
    inputs = tmp_path / "in.npz"
    np.savez(inputs, **case.input_dict())
    r = CliRunner().invoke(main, ["run", str(case.model_path), "--config", str(case.cfg_path), "--target",
                                  "aarch64", "--sanitize", "--inputs", str(inputs), "--output", str(tmp_path / "o.npz")])
    assert r.exit_code == 1 and "--sanitize runs the model natively" in r.output


MODEL = """HloModule pooled
ENTRY main {
  x = f32[256,256] parameter(0)
  w = f32[256,256] parameter(1)
  e = f32[256,256] exponential(x)
  s = f32[256,256] add(e, x)
  ROOT d = f32[256,256] dot(s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""

DRIVER = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libpooled.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "line %d: %s\n", __LINE__, #c); exit(1); } } while (0)
#define N (256 * 256)

static float want[N];

static void fill(pooled_instance* m) {
    float* x = pooled_arg_x_data(m);
    float* w = pooled_arg_w_data(m);
    for (int i = 0; i < N; ++i) { x[i] = (float)(i % 13) / 16.0f - 0.375f; w[i] = (float)(i % 7 - 3) / 8.0f; }
}

/* An application's parallel_for: three threads of its own, each a contiguous chunk. */
typedef struct { void (*fn)(void*, int64_t, int64_t); void* ctx; int64_t lo, hi; } chunk_t;
static void* chunk_main(void* arg) {
    chunk_t* c = (chunk_t*)arg;
    if (c->lo < c->hi) c->fn(c->ctx, c->lo, c->hi);
    return NULL;
}
static void app_parallel_for(void* user, int64_t n, void (*fn)(void*, int64_t, int64_t), void* ctx) {
    (void)user;
    pthread_t t[3];
    chunk_t c[3];
    for (int i = 0; i < 3; ++i) {
        c[i].fn = fn; c[i].ctx = ctx; c[i].lo = n * i / 3; c[i].hi = n * (i + 1) / 3;
        CHECK(pthread_create(&t[i], NULL, chunk_main, &c[i]) == 0);
    }
    for (int i = 0; i < 3; ++i) CHECK(pthread_join(t[i], NULL) == 0);
}

static void* worker(void* arg) {
    int mode = *(int*)arg;
    for (int cycle = 0; cycle < 4; ++cycle) {  /* create/destroy cycles, each with its own pool */
        pooled_instance* m = pooled_create(pooled_ALLOC_ALL);
        CHECK(m != NULL);
        if (mode == 0) CHECK(pooled_set_num_threads(m, 2 + cycle % 2) == pooled_OK);
        else CHECK(pooled_set_parallel_for(m, app_parallel_for, NULL) == pooled_OK);
        fill(m);
        for (int it = 0; it < 3; ++it) {
            CHECK(pooled_run(m) == pooled_OK);
            CHECK(memcmp(pooled_result_d_data(m), want, sizeof want) == 0);  /* bits of any thread count */
        }
        pooled_destroy(m);
    }
    return NULL;
}

int main(void) {
    pooled_instance* m = pooled_create(pooled_ALLOC_ALL);
    CHECK(m != NULL);
    fill(m);
    CHECK(pooled_run(m) == pooled_OK);
    memcpy(want, pooled_result_d_data(m), sizeof want);
    pooled_destroy(m);
    pthread_t t[3];
    int modes[3] = {0, 1, 0};
    for (int i = 0; i < 3; ++i) CHECK(pthread_create(&t[i], NULL, worker, &modes[i]) == 0);
    for (int i = 0; i < 3; ++i) CHECK(pthread_join(t[i], NULL) == 0);
    puts("ok");
    return 0;
}
"""


@needs_gcc
@pytest.mark.slow
def test_concurrent_instances_pools_and_an_application_pool_under_tsan(tmp_path):
    model = tmp_path / "pooled.hlo"
    model.write_text(MODEL)
    res = aotc.compile(str(model), out=str(tmp_path / "libpooled"),
                       options=aotc.CompileOptions(name="pooled", emit=()))
    assert "par->fn(par->user" in Path(res.c_path).read_text()  # some kernel is split over the pool
    drv = tmp_path / "driver.c"
    drv.write_text(DRIVER)
    exe = str(tmp_path / "driver")
    cmd = ["gcc", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O1",
           *sanitizer_flags("thread"), "-I", str(tmp_path), str(drv), res.c_path, "-lm", "-lpthread", "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([exe], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr[-4000:]

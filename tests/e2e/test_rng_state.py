"""rng-get-and-update-state from C: one instance run RUNS times gives XLA:CPU's sequence of
results (data/rng_state.npz, written by gen_rng_state_expected.py from RUNS executions of one
XLA executable), a second instance counts on its own, run_with gives a first run each time;
built with ASan and UBSan (gcc) and -Werror with clang. Refusals name the op."""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import aotc
from aotc.errors import AotcError
from tests.e2e import rng_state_model as R

DATA = np.load(os.path.join(os.path.dirname(__file__), "data", "rng_state.npz"))
CC = shutil.which("gcc")
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
NAMES = ("a", "big", "loop")


def _expected() -> str:
    rows = []
    for r in range(R.RUNS):
        vals = [f"UINT64_C({int(v)})" for n in NAMES for v in DATA[n][r]]
        rows.append("{" + ", ".join(vals) + "}")
    return f"static const uint64_t want[{R.RUNS}][6] = {{{', '.join(rows)}}};\n"


APP = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "librs.h"
#define CHECK(c) do { if (!(c)) { printf("failed line %d: %s\n", __LINE__, #c); exit(1); } } while (0)
EXPECTED
static void check_run(rs_instance* m, int r) {
    uint64_t* x = rs_arg_x_data(m);
    x[0] = XLO; x[1] = XHI;
    CHECK(rs_run(m) == rs_OK);
    for (int k = 0; k < 3; ++k)
        CHECK(memcmp(rs_result_data(m, k), &want[r][2 * k], 16) == 0);
}
int main(void) {
    rs_instance* m = rs_create(rs_ALLOC_ALL);
    rs_instance* n = rs_create(rs_ALLOC_ALL);
    CHECK(m && n);
    check_run(m, 0);
    check_run(m, 1);
    check_run(n, 0);  /* its own counters, from the start */
    for (int r = 2; r < RUNS; ++r) check_run(m, r);
    check_run(n, 1);
    void* arena = aligned_alloc(64, 64 * ((RS_ARENA_BYTES + 63) / 64) + 64);
    uint64_t x[2] = {XLO, XHI}, out[3][2];
    void* args[1] = {x};
    void* results[3] = {out[0], out[1], out[2]};
    for (int t = 0; t < 2; ++t) {  /* no instance: a first run each time */
        CHECK(rs_run_with(args, results, arena, RS_ARENA_BYTES) == rs_OK);
        CHECK(memcmp(out, want[0], sizeof out) == 0);
    }
    free(arena);
    rs_destroy(m);
    rs_destroy(n);
    puts("ok");
    return 0;
}
"""


@pytest.mark.skipif(CC is None, reason="needs gcc with sanitizer runtimes")
def test_runs_of_one_instance_give_xlas_sequence_under_sanitizers(tmp_path):
    hlo = tmp_path / "rs.hlo"
    hlo.write_text(R.MODEL)
    res = aotc.compile(str(hlo), out=str(tmp_path / "librs"), options=aotc.CompileOptions(name="rs", emit=()))
    app = (APP.replace("EXPECTED", _expected()).replace("XLO", f"UINT64_C({R.X[0]})")
           .replace("XHI", f"UINT64_C({R.X[1]})").replace("RUNS;", f"{R.RUNS};"))
    (tmp_path / "app.c").write_text(app)
    exe = str(tmp_path / "app")
    cmd = [CC, "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-O1", *SAN,
           "-I", str(tmp_path), str(tmp_path / "app.c"), res.c_path, "-lm", "-lpthread", "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout[-3000:] + r.stderr[-3000:]
    clang = shutil.which("clang")
    if clang:
        r = subprocess.run([clang, "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", res.c_path,
                            "-o", str(tmp_path / "x.o")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.parametrize("line,msg", [
    ("a = u64[2] rng-get-and-update-state(), delta=-1", "delta"),
    ("a = u64[2] rng-get-and-update-state()", "delta"),
    ("a = u64[3] rng-get-and-update-state(), delta=1", "u64[2]"),
])
def test_malformed_sites_are_located_errors(tmp_path, line, msg):
    hlo = tmp_path / "bad.hlo"
    hlo.write_text(f"HloModule bad\nENTRY e {{\n  {line}\n  ROOT r = u64[2] copy(a)\n}}\n")
    with pytest.raises(AotcError) as e:
        aotc.compile(str(hlo), out=str(tmp_path / "libbad"), options=aotc.CompileOptions(emit=()))
    text = str(e.value)
    assert "rng-get-and-update-state" in text and msg in text and "bad.hlo:3" in text

"""PREFIX_test.c and PREFIX_benchmark.c of a `--weights file` model (tests/data/weights/mlp):
they load `PREFIX.weights` (or `-W PATH`) before running; the test program passes against
XLA's outputs for the weight set it was given, fails with another weight set, and says which
file it could not load (and `-W PATH`) when the weights are missing."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from aotc.api import compile as aotc_compile
from aotc.options import CompileOptions

DATA = Path(__file__).resolve().parents[1] / "data" / "weights" / "mlp"
COMPILERS = [c for c in ("gcc", "clang") if shutil.which(c)]
WARN = ["-Wall", "-Wextra", "-Werror"]


def _run(argv, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """libmlp with weight set a, its programs built beside it, and set b's weights file."""
    if not COMPILERS:
        pytest.skip("needs gcc or clang to build the programs")
    d = tmp_path_factory.mktemp("mlp")
    with np.load(DATA / "expected.npz") as z:
        np.savez(d / "expected_a.npz", y=z["y_a"])  # XLA's outputs with weights_a.npz, keyed by result name
    opts = CompileOptions(weights="file", programs=("test", "bench"), test_inputs=str(DATA / "inputs.npz"),
                          test_expected=str(d / "expected_a.npz"), test_rtol=1e-5, test_atol=1e-5)
    aotc_compile(str(DATA / "model.hlo"), config=str(DATA / "cfg_a.yaml"), out=str(d / "libmlp"), options=opts)
    aotc_compile(str(DATA / "model.hlo"), config=str(DATA / "cfg_b.yaml"), out=str(d / "b" / "libmlp"),
                 options=CompileOptions(weights="file", emit=()))
    for cc in COMPILERS:
        for prog in ("test", "benchmark"):
            r = subprocess.run([cc, "-std=c99", *WARN, str(d / f"libmlp_{prog}.c"), str(d / "libmlp.o"),
                                "-o", str(d / f"{prog}_{cc}"), "-lm", "-lpthread"], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr[-3000:]
    return d


@pytest.mark.parametrize("cc", COMPILERS)
def test_test_program_loads_the_weights_beside_it_and_checks_xla(built, cc):
    exe = str(built / f"test_{cc}")
    r = _run([exe], cwd=built)  # the default: libmlp.weights in the current directory
    assert r.returncode == 0 and "PASSED: mlp" in r.stdout, r.stdout + r.stderr
    r = _run([exe, "-W", str(built / "libmlp.weights"), "-t", "2"], cwd=built.parent)
    assert r.returncode == 0 and "PASSED: mlp" in r.stdout, r.stdout + r.stderr
    r = _run([exe, "-W", str(built / "b" / "libmlp.weights")], cwd=built.parent)  # valid, but other values
    assert r.returncode == 1 and "FAIL: result 0 'y' f32[8,10]" in r.stdout, r.stdout + r.stderr


def test_test_program_says_which_weights_file_is_missing(built):
    exe = str(built / f"test_{COMPILERS[0]}")
    r = _run([exe], cwd=built.parent)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("mlp_test: cannot load the weights (error 16): cannot open the weights file "
                        "libmlp.weights; give the weights file with -W PATH\n")
    bad = built / "bad.weights"
    bad.write_bytes(b"\0" * 64)
    r = _run([exe, "-W", str(bad)], cwd=built)
    assert r.returncode == 2 and "bad magic" in r.stderr
    r = _run([exe, "-W"], cwd=built)
    assert r.returncode == 3 and "usage: mlp_test [-t THREADS] [-n SHOWN] [-W WEIGHTS]" in r.stderr


def test_bench_program_loads_the_weights(built):
    exe = str(built / f"benchmark_{COMPILERS[0]}")
    r = _run([exe, "-i", "3", "-w", "1"], cwd=built)
    assert r.returncode == 0 and "model mlp: 3 timed runs" in r.stdout, r.stdout + r.stderr
    r = _run([exe, "-i", "3", "--weights", str(built / "b" / "libmlp.weights")], cwd=built.parent)
    assert r.returncode == 0 and "model mlp: 3 timed runs" in r.stdout, r.stdout + r.stderr
    r = _run([exe, "-i", "3"], cwd=built.parent)
    assert r.returncode == 1 and "cannot open the weights file libmlp.weights; give the weights file with -W PATH" \
        in r.stderr
    r = _run([exe, "-h"], cwd=built)
    assert r.returncode == 0 and "[-W WEIGHTS]" in r.stdout


def test_programs_of_bound_weights_take_no_weights_option(tmp_path):
    opts = CompileOptions(emit=(), programs=("bench",))
    aotc_compile(str(DATA / "model.hlo"), config=str(DATA / "cfg_a.yaml"), out=str(tmp_path / "libmlp"), options=opts)
    text = (tmp_path / "libmlp_benchmark.c").read_text()
    assert "load_weights" not in text and "-W" not in text

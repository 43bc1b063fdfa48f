"""PREFIX_test.c and PREFIX_benchmark.c (`aotc compile --emit test,bench`): built with
plain `cc PREFIX_test.c PREFIX.o -lm -lpthread`, warning-free as C99 and C11 with gcc and
clang. The test program passes on XLA's fixtures (inputs and expected outputs recorded by
tests/fixtures/gen_fixtures.py) and fails, naming the result and the element, when one
expected value is changed; the benchmark program prints its table and checks its options."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from aotc.api import compile as aotc_compile
from aotc.errors import AotcError
from aotc.options import CompileOptions

DATA = Path(__file__).resolve().parents[1] / "data"
COMPILERS = [c for c in ("gcc", "clang") if shutil.which(c)]
WARN = ["-Wall", "-Wextra", "-Werror"]
_AARCH64_TOOLS = [t for t in ("aarch64-linux-gnu-gcc", "qemu-aarch64") if shutil.which(t) is None]


def _case(name: str) -> Path:
    for root in ("fixtures", "corpus"):
        if (DATA / root / name).is_dir():
            return DATA / root / name
    raise AssertionError(name)


def _compile(tmp_path: Path, case: str, expected: Path | None = None, programs=("test", "bench"), **kw) -> str:
    d = _case(case)
    meta = json.loads((d / "meta.json").read_text())
    out = str(tmp_path / case)
    opts = CompileOptions(programs=programs, test_inputs=str(d / "inputs.npz"),
                          test_expected=str(expected or d / "expected.npz"), test_rtol=meta["rtol"],
                          test_atol=meta["atol"], **kw)
    aotc_compile(str(d / "model.hlo"), config=str(d / "cfg.yaml"), out=out, options=opts)
    return out


def _build(cc: str, src: str, obj: str, exe: str, std: str = "c99", extra=()) -> str:
    r = subprocess.run([cc, f"-std={std}", *WARN, *extra, src, obj, "-o", exe, "-lm", "-lpthread"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return exe


def _run(argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)


def _perturbed(tmp_path: Path, case: str, name: str, index: int) -> Path:
    """The case's expected results with one value of `name` changed: a float doubled plus one
    (a NaN or an infinity becomes 0.5), bf16 bits with their top exponent bit flipped, an
    integer plus one, a pred negated."""
    with np.load(_case(case) / "expected.npz") as z:
        vals = {k: z[k].copy() for k in z.files}
    flat = vals[name].reshape(-1)
    if flat.dtype.kind == "f":
        flat[index] = flat[index] * 2 + 1 if np.isfinite(flat[index]) else 0.5
    elif flat.dtype.kind == "b":
        flat[index] = not flat[index]
    elif flat.dtype == np.uint16:  # bf16 bits
        flat[index] ^= 0x4000
    else:
        flat[index] = flat[index] + np.ones((), flat.dtype)
    path = tmp_path / "perturbed.npz"
    np.savez(path, **vals)
    return path


@pytest.fixture(scope="module")
def add_f32(tmp_path_factory) -> str:
    """add_f32 compiled once, with both programs: the PREFIX of its files."""
    return _compile(tmp_path_factory.mktemp("add_f32"), "add_f32")


def test_test_program_passes_then_fails_on_one_changed_value(tmp_path, add_f32):
    exe = _build(COMPILERS[0], add_f32 + "_test.c", add_f32 + ".o", str(tmp_path / "test"))
    ok = _run([exe])
    assert ok.returncode == 0 and "PASSED" in ok.stdout and "ok: result 0 'z' f32[133]" in ok.stdout, ok.stdout
    assert _run([exe, "-t", "2"]).returncode == 0

    # the same model (its object is reused), one expected value changed
    bad = _compile(tmp_path, "add_f32", _perturbed(tmp_path, "add_f32", "z", 5), programs=("test",), emit=())
    exe = _build(COMPILERS[0], bad + "_test.c", add_f32 + ".o", bad + "_test")
    r = _run([exe])
    assert r.returncode == 1, r.stdout
    assert "FAIL: result 0 'z' f32[133] at [5]: got" in r.stdout
    assert "FAIL: result 0 'z' f32[133]: 1 of 133 values differ" in r.stdout
    assert "ok: result 1 'z_r'" in r.stdout and "FAILED" in r.stdout


@pytest.fixture(scope="module")
def tf_variable(tmp_path_factory) -> str:
    """tf_variable (a variable argument, two results) compiled with --profile."""
    return _compile(tmp_path_factory.mktemp("tf_variable"), "tf_variable", profile=True)


@pytest.mark.parametrize("cc", COMPILERS)
@pytest.mark.parametrize("std", ["c99", "c11"])
def test_programs_build_warning_free(tmp_path, tf_variable, cc, std):
    for prog in ("_test", "_benchmark"):
        _build(cc, tf_variable + prog + ".c", tf_variable + ".o", str(tmp_path / prog), std, ["-pedantic"])
    assert _run([str(tmp_path / "_test")]).returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("case,result,index", [
    ("add_bf16", "z", 3),  # bf16 as bits, exact
    ("add_sint", None, 0),  # every integer width, exact
    ("and_pred", None, 1),
    ("dot_f32_100x33x17", None, 7),  # within XLA's tolerance
    ("tf_variable", "new_var", 4),  # a variable argument and two results
    ("add_f64", None, 2),
])
def test_test_program_on_fixtures(tmp_path, case, result, index):
    out = _compile(tmp_path, case, programs=("test",))
    exe = _build(COMPILERS[-1], out + "_test.c", out + ".o", out + "_test", "c11")
    r = _run([exe])
    assert r.returncode == 0 and "PASSED" in r.stdout, r.stdout[-3000:]
    with np.load(_case(case) / "expected.npz") as z:
        name = result or z.files[0]
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    bad = _compile(bad_dir, case, _perturbed(tmp_path, case, name, index), programs=("test",), emit=())
    r = _run([_build(COMPILERS[-1], bad + "_test.c", out + ".o", bad + "_test")])
    assert r.returncode == 1 and re.search(rf"FAIL: result \d+ '{name}' \S+ at \[", r.stdout), r.stdout[-3000:]


def test_bench_program_prints_its_table_and_checks_options(tmp_path, add_f32):
    exe = _build(COMPILERS[0], add_f32 + "_benchmark.c", add_f32 + ".o", str(tmp_path / "bench"))
    r = _run([exe, "-i", "7", "-w", "2", "-t", "2"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "model add_f32: 7 timed runs after 2 warm-up runs, 2 thread(s)"
    assert lines[1].split() == ["min_us", "median_us", "max_us"]
    lo, med, hi = map(float, lines[2].split())
    assert 0 < lo <= med <= hi
    r = _run([exe, "--iters", "3"])
    assert r.returncode == 0 and "3 timed runs after 10 warm-up runs, 1 thread(s)" in r.stdout
    for bad in (["-i", "0"], ["-t", "x"], ["-w"], ["--bogus"], ["-t", "100000"]):
        r = _run([exe, *bad])
        assert r.returncode == 2 and r.stderr, bad
    assert "usage:" in _run([exe, "-h"]).stdout


def test_missing_or_unknown_test_values_are_errors(tmp_path):
    d = _case("add_f32")
    with pytest.raises(AotcError, match="--test-inputs"):
        aotc_compile(str(d / "model.hlo"), config=str(d / "cfg.yaml"), out=str(tmp_path / "m"),
                     options=CompileOptions(programs=("test",), emit=()))
    with np.load(d / "expected.npz") as z:
        np.savez(tmp_path / "partial.npz", z=z["z"], extra=z["z_r"])
    with pytest.raises(AotcError, match="'extra' is not one of the model's results"):
        aotc_compile(str(d / "model.hlo"), config=str(d / "cfg.yaml"), out=str(tmp_path / "m"),
                     options=CompileOptions(programs=("test",), emit=(), test_inputs=str(d / "inputs.npz"),
                                            test_expected=str(tmp_path / "partial.npz")))
    assert not list(tmp_path.glob("m*"))  # nothing written


@pytest.mark.aarch64
@pytest.mark.slow
@pytest.mark.skipif(bool(_AARCH64_TOOLS), reason=f"needs {' and '.join(_AARCH64_TOOLS)} (not installed)")
def test_programs_cross_build_and_run_under_qemu(tmp_path):
    exes = {}
    for label, expected in (("good", None), ("bad", _perturbed(tmp_path, "add_f32", "z", 9))):
        d = tmp_path / label
        d.mkdir()
        out = _compile(d, "add_f32", expected, target="aarch64", cc="aarch64-linux-gnu-gcc")
        for prog in ("_test", "_benchmark"):
            exes[label + prog] = _build("aarch64-linux-gnu-gcc", out + prog + ".c", out + ".o", out + prog, "c11",
                                        ["-static"])
    r = _run(["qemu-aarch64", exes["good_test"], "-t", "2"])
    assert r.returncode == 0 and "PASSED" in r.stdout, r.stdout + r.stderr
    r = _run(["qemu-aarch64", exes["bad_test"]])
    assert r.returncode == 1 and "FAIL: result 0 'z' f32[133] at [9]" in r.stdout, r.stdout
    r = _run(["qemu-aarch64", exes["good_benchmark"], "-i", "3", "-w", "1"])
    assert r.returncode == 0 and r.stdout.splitlines()[1].split() == ["min_us", "median_us", "max_us"]

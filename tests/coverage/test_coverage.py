"""Every opcode on every element type (aotc/coverage): aotc either compiles a probe or refuses
it with a located error, never a traceback; what it compiles computes what XLA:CPU computed
(tests/data/coverage, written by gen_coverage.py from XLA); the README's "What compiles"
section is the generated one."""
from __future__ import annotations

import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from aotc.coverage.markdown import markdown
from aotc.hlo.dtypes import DTYPES
from aotc.coverage.probes import TYPES, UNCOMPARED, probes
from aotc.coverage.report import COMPILED, CRASHED, compile_probe, summarize, xla_record
from tests.coverage.combine import combine
from tests.ops.conftest import assert_matches, run_hlo_text

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "coverage"
README_START, README_END = "## What compiles\n\n", "\n\n## How it works"


@lru_cache(maxsize=1)
def outcomes():
    return tuple(compile_probe(p) for p in probes())


def test_no_traceback_on_any_probe():
    """Each of the ~3,500 probes compiles or gets a located `FILE:LINE:COL: error:`."""
    crashed = [o for o in outcomes() if o.status == CRASHED]
    assert not crashed, f"{len(crashed)} probes crash aotc, first {crashed[0].probe.name}:\n{crashed[0].message}"
    unlocated = [o for o in outcomes() if o.status != COMPILED and not o.located]
    assert not unlocated, f"refused without a location: {unlocated[0].probe.name}: {unlocated[0].message}"


def test_record_covers_every_probe():
    record = xla_record()
    missing = [p.name for p in probes() if p.name not in record]
    assert not missing, f"no XLA record for {missing[:5]}...: run python tests/coverage/gen_coverage.py"


def test_readme_section_is_generated():
    text = (ROOT / "README.md").read_text()
    start, end = text.index(README_START) + len(README_START), text.index(README_END)
    want = markdown(summarize(list(outcomes()), xla_record()))
    assert text[start:end].strip() == want.strip(), \
        "README's 'What compiles' is stale: paste `python -m aotc.coverage --markdown` into it"


@pytest.mark.slow  # every probe compiled again: a minute
def test_cli_summary():
    r = subprocess.run([sys.executable, "-m", "aotc.coverage"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert re.match(r"\d+/\d+ opcodes XLA:CPU accepts compile on every type", r.stdout)


# ------------------------------------------------------------------ against XLA's values

_ULP = {"f16": 2 ** -10, "bf16": 2 ** -7, "f32": 2 ** -23, "f64": 2 ** -52, "c64": 2 ** -23, "c128": 2 ** -52,
        "f8e3m4": 2 ** -4, "f8e4m3": 2 ** -3, "f8e4m3fn": 2 ** -3, "f8e4m3fnuz": 2 ** -3,
        "f8e4m3b11fnuz": 2 ** -3, "f8e5m2": 2 ** -2, "f8e5m2fnuz": 2 ** -2, "f8e8m0fnu": 1.0, "f4e2m1fn": 0.5}


def _tolerance(type_name: str) -> float:
    """Four units in the last place of the type, relative to the output's largest magnitude:
    the probes are small, and transcendental ops and sums round differently from XLA in the
    last bits (the op table checks those bit for bit where aotc promises it)."""
    return 4 * _ULP.get(type_name, 0.0)


# probes whose XLA:CPU result is not the operation's meaning (an XLA defect, checked by hand):
# probe -> (why, the independent expectation of output 0 from the inputs)
XLA_DEFECTS = {
    f"sort.{t}": ("XLA:CPU sorts packed 2-bit integers wrongly (s2 [[0,0,1],[1,0,1]] gives "
                  "[[-1,-1,-1],[-2,0,0]]; u2 leaves [0,2,0] unsorted)",
                  lambda ins: np.sort(ins[0].astype(np.int64), axis=1))
    for t in ("s2", "u2")
}


# probes whose inputs sit where the formula amplifies last-bit differences of the real functions
# under it: probe -> (units in the last place allowed instead of 4, why)
LOOSER = {
    "logistic.c128": (16, "1 / (1 + exp(-z)) near its pole (z = -0.108-3.05i, where 1 + exp(-z) cancels "
                          "to a tenth of its terms); aotc's f64 exp, sin and cos differ from XLA's in the "
                          "last bits (tests/ops/test_complex_math.py); XLA and aotc are 5 ulp either side"),
}


# probes whose result has a bounded dynamic dimension: XLA returns its real-size array at the
# start of the bound-size buffer and leaves the rest unspecified; the real shape follows from
# the size input gen_coverage.py gives (2 for set-dimension-size's `f32[2,<=3]`)
REAL_SHAPE = {"set-dimension-size": (2, 2)}


def _real(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(a).reshape(-1)[:int(np.prod(shape))].reshape(shape)


# probes aotc computes with XLA:CPU's bits (tests/ops/test_complex_muldiv.py): tolerance 0
EXACT = {f"{op}.{t}" for op in ("multiply", "divide") for t in ("c64", "c128")} | \
    {f"triangular-solve.{t}" for t in ("f16", "bf16", "f8e3m4", "f8e4m3", "f8e4m3fn", "f8e4m3fnuz", "f8e4m3b11fnuz",
                                       "f8e5m2", "f8e5m2fnuz", "f8e8m0fnu", "f4e2m1fn")}  # tests/ops/test_narrow_trsolve.py


def _checked_opcodes() -> list[str]:
    record = xla_record()
    ops = []
    for o in outcomes():
        if o.status == COMPILED and record.get(o.probe.name, {}).get("ran") and o.probe.opcode not in ops:
            ops.append(o.probe.opcode)
    return ops


def _as_stored(want: np.ndarray, got: np.ndarray) -> np.ndarray:
    """XLA's output as the type aotc's has: the npz keeps bf16 as uint16 bits and the one-byte
    ml_dtypes types as their bytes, and a scalar as one element."""
    if want.shape != got.shape and want.size == got.size == 1:
        want = want.reshape(got.shape)
    if want.dtype != got.dtype and want.dtype.itemsize == got.dtype.itemsize and want.dtype.kind == "u":
        return want.view(got.dtype)
    return want


@pytest.mark.slow
@pytest.mark.parametrize("opcode", _checked_opcodes())
def test_probes_match_xla(opcode, tmp_path):
    """All probes of `opcode` that XLA ran and aotc compiles, in one module: aotc's outputs
    against XLA's stored ones."""
    record = xla_record()
    chosen = [o.probe for o in outcomes() if o.probe.opcode == opcode and o.status == COMPILED
              and record.get(o.probe.name, {}).get("ran")]
    text, where = combine(chosen, f"cov_{opcode.replace('-', '_')}")
    z = np.load(DATA / f"{opcode}.npz")
    inputs, expected = [], []
    for p in chosen:
        n_in = sum(1 for k in z.files if k.startswith(p.name + "/in"))
        n_out = sum(1 for k in z.files if k.startswith(p.name + "/out"))
        inputs += [z[f"{p.name}/in{i}"] for i in range(n_in)]
        expected.append([z[f"{p.name}/out{i}"] for i in range(n_out)])
    got = run_hlo_text(text, inputs, tmp_path, f"cov_{opcode.replace('-', '_')}")
    for p, (first_in, first), want in zip(chosen, where, expected):
        if p.opcode in UNCOMPARED:
            continue
        if p.name in XLA_DEFECTS:
            x = _as_stored(inputs[first_in], got[first])  # the npz holds one-byte types as bytes
            np.testing.assert_array_equal(got[first].astype(np.int64), XLA_DEFECTS[p.name][1]([x]), p.name)
            continue
        for k, w in enumerate(want):
            g = got[first + k]
            if p.opcode in REAL_SHAPE and k == 0:
                g, w = _real(g, REAL_SHAPE[p.opcode]), _real(w, REAL_SHAPE[p.opcode])
            tol = 0.0 if p.name in EXACT else \
                _tolerance(_type_name(g.dtype)) * (LOOSER[p.name][0] / 4 if p.name in LOOSER else 1)
            assert_matches(g, _as_stored(w, g), tol, f"{p.name} output {k}")


def _type_name(dt: np.dtype) -> str:
    return next((t for t in TYPES if DTYPES[t].numpy == dt), "")

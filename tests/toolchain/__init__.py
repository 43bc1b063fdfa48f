"""Tests of aotc.toolchain: targets, compiler discovery, builds, the cffi loader
and the runner. They build `data/tiny.c`, a hand-written model with the same C
API as generated code (see data/tiny.h); expected values are computed here with
numpy from the model's documented semantics."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

DATA = Path(__file__).resolve().parent / "data"
TINY_C = DATA / "tiny.c"
TINY_H = DATA / "tiny.h"


def tiny_inputs():
    """Inputs of the tiny model whose every value is exact in f32 and bf16."""
    x = np.array([1.5, -2.0, 3.25], np.float32)
    y = np.array([0.5, 1.0, -4.0], np.float32)
    h = np.array([[1.0, -2.5], [0.375, 96.0]], ml_dtypes.bfloat16)
    return x, y, h


def tiny_expected(x, y, h, step_before: int):
    """(sum, h2, pos, count, norm) for the tiny model, from numpy."""
    s = (x.astype(np.float64) + y).astype(np.float32)
    h2 = (h.astype(np.float64) * 2).astype(ml_dtypes.bfloat16)
    norm = np.float32(np.sqrt(np.sum(x.astype(np.float64) ** 2)))
    return [s, h2, s > 0, np.int32(step_before + 1), norm]


def assert_tiny(outs, x, y, h, step_before: int) -> None:
    want = tiny_expected(x, y, h, step_before)
    assert len(outs) == 5
    for got, exp in zip(outs, want):
        exp = np.asarray(exp)
        assert got.dtype == exp.dtype and got.shape == exp.shape, (got, exp)
        if got.dtype == np.float32 and got.ndim == 0:
            np.testing.assert_allclose(got, exp, rtol=1e-6)
        else:
            assert got.tobytes() == exp.tobytes(), (got, exp)


def have_tools(*names: str) -> tuple[bool, str]:
    missing = [n for n in names if shutil.which(n) is None]
    return not missing, ("missing " + " and ".join(missing)) if missing else ""


def zig_works() -> tuple[bool, str]:
    try:
        proc = subprocess.run([sys.executable, "-m", "ziglang", "version"], capture_output=True,
                              text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"python -m ziglang does not run: {e}"
    if proc.returncode != 0:
        return False, "python -m ziglang does not work (pip install ziglang)"
    return True, ""

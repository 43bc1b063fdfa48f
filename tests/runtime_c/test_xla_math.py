"""exp, log, tanh, erf, logistic, expm1 and log1p in f32 give XLA:CPU's bits: the runtime computes them
with XLA's own polynomials, fused exactly where XLA fuses (the vector forms give the scalar
bits: test_simd.py). The expected values are XLA's (gen_xla_math.py), run under the FP
environment of generated code."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from .test_math import cptr

DATA = Path(__file__).resolve().parent / "data" / "xla_math.npz"
HELPER = {"exponential": "exp_f32", "log": "log_f32", "tanh": "tanh_f32", "erf": "erf_f32",
          "logistic": "logistic_f32", "exponential-minus-one": "expm1_f32", "log-plus-one": "log1p_f32"}


@pytest.mark.parametrize("op", sorted(HELPER))
def test_f32_transcendental_is_xla_bit_for_bit(rt, op):
    with np.load(DATA) as z:
        x, want = z["x"], z[op]
    got = np.zeros_like(x)
    getattr(rt.lib, f"t_ftz_{HELPER[op]}")(cptr(rt.ffi, x), cptr(rt.ffi, got), x.size)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f"{op}: NaN positions")
    bad = np.nonzero(got[~nan].view(np.uint32) != want[~nan].view(np.uint32))[0]
    xs = x[~nan][bad[:5]]
    assert bad.size == 0, (f"{op}: {bad.size} of {x.size} differ from XLA, e.g. x={xs.tolist()} "
                           f"aotc={got[~nan][bad[:5]].tolist()} xla={want[~nan][bad[:5]].tolist()}")

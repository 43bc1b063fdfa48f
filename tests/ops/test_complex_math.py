"""Complex exp, log, sin, cos, tanh and tan (c64, c128) against XLA:CPU: random values of every
magnitude and every pair of edge parts (signed zeros, +-inf, NaN, subnormal, huge, 1, -1, ...).

Tolerance: XLA's formulas are kept (exp(a)cos(b) + i exp(a)sin(b), log|z| + i atan2(b, a),
sin/cos through sinh/cosh of the imaginary part, tanh/tan through expm1 with XLA's corner
cases), but the real functions under them are
XLA:CPU's vectorized polynomials for exp and log and libm-like code for sin, cos and atan2,
where aotc's helpers may differ by an ulp or two (and for huge arguments of sin/cos, in the
sign of a zero product): each part within 2e-6 (c64) / 1e-13 (c128) of its own magnitude;
NaNs and infinities in the same places, zeros' signs not compared. Measured bit-equal parts
(of 324 per part): c64 exp 324 and 324, log 322 and 324, sin 324 and 324, cos 324 and 252
(zeros' signs), tanh and tan 324 and 324; c128 214 to 324 (its exp, expm1, sin and cos differ
from XLA's in the last bits).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

_RNG = np.random.default_rng(21)
_EDGE = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3e38, -3e38, 1.0, -1.0, 0.5, 88.0, -100.0, 1e-30]


def _values(dtype, real_dtype, scale_exp: int) -> np.ndarray:
    n = 64
    re = np.concatenate([_RNG.standard_normal(n) * 3, np.exp(_RNG.uniform(-scale_exp, scale_exp, n)),
                         np.repeat(_EDGE, len(_EDGE))]).astype(real_dtype)
    im = np.concatenate([_RNG.standard_normal(n) * 3, -np.exp(_RNG.uniform(-scale_exp, scale_exp, n)),
                         np.tile(_EDGE, len(_EDGE))]).astype(real_dtype)
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im  # keeps -0 parts (re + 1j * im would not)
    return out


def _module(name: str, t: str, n: int) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = {t}[{n}] parameter(0)
  e = {t}[{n}] exponential(x)
  l = {t}[{n}] log(x)
  s = {t}[{n}] sine(x)
  c = {t}[{n}] cosine(x)
  th = {t}[{n}] tanh(x)
  tn = {t}[{n}] tan(x)
  ROOT r = ({t}[{n}], {t}[{n}], {t}[{n}], {t}[{n}], {t}[{n}], {t}[{n}]) tuple(e, l, s, c, th, tn)
}}
"""


with np.errstate(over="ignore"):
    _C64, _C128 = _values(np.complex64, np.float32, 80), _values(np.complex128, np.float64, 600)
CASES = {"complex_exp_log_c64": (_module("complex_exp_log_c64", "c64", _C64.size), [_C64], 2e-6),
         "complex_exp_log_c128": (_module("complex_exp_log_c128", "c128", _C128.size), [_C128], 1e-13)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, workdir):
    from .conftest import load_case, run_hlo_text

    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    got = run_hlo_text(text, inputs, workdir, name)
    for k, (g, w) in enumerate(zip(got, expected)):
        for part in ("real", "imag"):
            gp, wp = getattr(np.asarray(g), part), getattr(np.asarray(w), part)
            what = f"{name} output {k} {part}"
            np.testing.assert_array_equal(np.isnan(gp), np.isnan(wp), err_msg=f"{what}: NaN positions")
            inf = np.isinf(wp)
            np.testing.assert_array_equal(gp[inf], wp[inf], err_msg=f"{what}: infinities")
            fin = np.isfinite(wp)
            np.testing.assert_allclose(gp[fin], wp[fin], rtol=rtol, atol=0, err_msg=what)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_whatever_flags(name, workdir):
    """gcc and clang at -O0, -O3 and -O3 -march=native give the same bits, NaNs included (the
    helpers' NaN results are C's quiet NaN, aotc__cq in runtime_c/aotc_math.h)."""
    from .complex_values import assert_one_result, builds
    from .conftest import load_case

    text, _, _ = CASES[name]
    inputs, _ = load_case(name)
    assert_one_result(builds(text, inputs, workdir, name), name)

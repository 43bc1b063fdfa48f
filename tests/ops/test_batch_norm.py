"""batch-norm-inference, batch-norm-training and batch-norm-grad against XLA:CPU, which
expands them (BatchNormExpander) as aotc does: f32, f64, bf16, f16 and narrow floats, the feature
dimension first, in the middle and last, several epsilons, NHWC activations of realistic
size, and a NaN and an inf in one channel.

Tolerances: inference is XLA's formula step for step (its fused multiply-adds included),
but XLA:CPU's vectorized f32/f64 rsqrt is an estimate refined by a Newton step, up to 2 ulp
from the correctly rounded 1/sqrt aotc computes (with XLA's own rsqrt values in its place
the f32 result was checked to be bit-identical): within 1e-6 (f32) / 1e-14 (f64) of the
largest magnitude, one half step (1e-2) for bf16/f16. Training and grad also sum over every
element of a channel in another order than XLA's: 1e-5 / 1e-12 (the variance is
E[x^2] - E[x]^2, which cancels: XLA's formula, kept), the halves 2e-2 (one bf16 step).
The narrow floats are the f16 (f8e8m0fnu: f32) op rounded once, as XLA:CPU's optimized module
computes them; they inherit the f16 differences above, so one step of the narrow type.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

_NP = {"f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16, "f16": np.float16,
       "f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2, "f8e3m4": ml_dtypes.float8_e3m4,
       "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
       "f4e2m1fn": ml_dtypes.float4_e2m1fn}
# the narrow float types: the op in f16 (f8e8m0fnu: f32) then rounded, one step of the type
# (2^-mantissa bits) where the f16 value lies at a rounding boundary
_NARROW_TOL = {"f8e4m3fn": 2 ** -3, "f8e5m2": 2 ** -2, "f8e3m4": 2 ** -4, "f8e4m3fnuz": 2 ** -3,
               "f8e8m0fnu": 1.0, "f4e2m1fn": 0.5}
_TOL = {"f32": 1e-5, "f64": 1e-12, "bf16": 2e-2, "f16": 2e-2, **_NARROW_TOL}
_INFERENCE_TOL = {"f32": 1e-6, "f64": 1e-14, "bf16": 1e-2, "f16": 1e-2, **_NARROW_TOL}


def _module(name: str, t: str, dims, f: int, eps: str) -> str:
    x = f"{t}[{','.join(map(str, dims))}]"
    c = f"{t}[{dims[f]}]"
    return f"""HloModule {name}
ENTRY main {{
  x = {x} parameter(0)
  s = {c} parameter(1)
  o = {c} parameter(2)
  m = {c} parameter(3)
  v = {c} parameter(4)
  dy = {x} parameter(5)
  bi = {x} batch-norm-inference(x, s, o, m, v), epsilon={eps}, feature_index={f}
  tr = ({x}, {c}, {c}) batch-norm-training(x, s, o), epsilon={eps}, feature_index={f}
  y = {x} get-tuple-element(tr), index=0
  mm = {c} get-tuple-element(tr), index=1
  vv = {c} get-tuple-element(tr), index=2
  gr = ({x}, {c}, {c}) batch-norm-grad(x, s, m, v, dy), epsilon={eps}, feature_index={f}
  gx = {x} get-tuple-element(gr), index=0
  gs = {c} get-tuple-element(gr), index=1
  go = {c} get-tuple-element(gr), index=2
  ROOT t = ({x}, {x}, {c}, {c}, {x}, {c}, {c}) tuple(bi, y, mm, vv, gx, gs, go)
}}
"""


def _inputs(t: str, dims, f: int, special: bool = False) -> list[np.ndarray]:
    rng = np.random.default_rng(sum(dims) + f)
    c = dims[f]
    x = rng.standard_normal(dims) * 2 + 0.5
    if special:
        idx = [0] * len(dims)
        x[tuple(idx)] = np.nan
        idx[f] = 1 % c
        idx[0] = dims[0] - 1
        x[tuple(idx)] = np.inf
    dy = rng.standard_normal(dims)
    scale, offset = rng.uniform(0.5, 2, c), rng.standard_normal(c)
    mean, var = rng.standard_normal(c) * 0.3, rng.uniform(0.2, 3, c)
    var[0] = 0.0  # epsilon alone under the square root
    return [np.asarray(a, np.float64).astype(_NP[t]) for a in (x, scale, offset, mean, var, dy)]


_SPECS = [("bn_f32_nhwc", "f32", (2, 14, 14, 64), 3, "0.001", False),
          ("bn_f32_nchw", "f32", (4, 16, 12, 12), 1, "1e-05", False),
          ("bn_f32_first", "f32", (6, 5, 7), 0, "0.1", False),
          ("bn_f32_special", "f32", (2, 6, 6, 8), 3, "0.001", True),
          ("bn_f64", "f64", (3, 10, 10, 16), 3, "0.001", False),
          ("bn_bf16", "bf16", (2, 8, 8, 32), 3, "0.001", False),
          ("bn_f16", "f16", (2, 8, 8, 32), 3, "0.001", False),
          ("bn_f8e4m3fn", "f8e4m3fn", (1, 16, 16, 8), 3, "0.1", False),
          ("bn_f8e5m2", "f8e5m2", (2, 8, 8, 32), 1, "0.001", True),
          ("bn_f8e3m4", "f8e3m4", (2, 8, 8, 32), 3, "0.001", True),
          ("bn_f8e4m3fnuz", "f8e4m3fnuz", (2, 8, 8, 32), 3, "0.001", True),
          ("bn_f8e8m0fnu", "f8e8m0fnu", (2, 8, 8, 16), 3, "0.001", False),
          ("bn_f4e2m1fn", "f4e2m1fn", (2, 8, 8, 16), 3, "0.001", False)]

CASES = {name: (_module(name, t, dims, f, eps), _inputs(t, dims, f, sp), _TOL[t])
         for name, t, dims, f, eps, sp in _SPECS}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, workdir):
    from .conftest import assert_matches, load_case, run_hlo_text

    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    got = run_hlo_text(text, inputs, workdir, name)
    assert len(got) == len(expected)
    t = CASES[name][0].split("x = ", 1)[1].split("[", 1)[0]
    if t in _NARROW_TOL:  # the npz holds their codes
        expected = [e.view(_NP[t]) for e in expected]
    assert_matches(got[0], expected[0], _INFERENCE_TOL[t], f"{name} inference")
    for k in range(1, len(got)):
        assert_matches(got[k], expected[k], rtol, f"{name} output {k}")


def test_bad_feature_index_is_a_located_error(tmp_path):
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions

    text = _module("bad", "f32", (2, 3), 1, "0.001").replace("feature_index=1", "feature_index=2")
    with pytest.raises(AotcError) as e:
        fe = driver.frontend("bad.hlo", None, CompileOptions(), text=text)
        driver.generate(fe, str(tmp_path / "libbad"), CompileOptions())
    assert "feature_index" in str(e.value) and "bad.hlo:" in str(e.value)

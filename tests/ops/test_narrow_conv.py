"""Convolutions of the narrow types against XLA:CPU, which convolves them in a wider type
(aotc/passes/widen.py): f8/f4 in f32 then narrowed through f16 (f8e8m0fnu straight from
f32), s4 in s8 and u4 in u8 then wrapped (XLA:CPU has no s2/u2 convolution; aotc refuses it); pred as an or of ands. A 3x3 NHWC convolution 1x16x16x8 -> 16 per
type, and a strided, dilated one with feature groups.

Bits are compared exactly: the f32 sums of up to 72 products of narrow values are exact or
rounded far below the narrow type's step, so the order of summation (aotc's and XLA's
differ) only matters where an f32 sum lies on a rounding boundary of the narrow type; the
inputs here hit none. Integer sums wrap, and wrap alike in any order.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from .conftest import load_case, run_hlo_text

_NP = {"f8e3m4": ml_dtypes.float8_e3m4, "f8e4m3": ml_dtypes.float8_e4m3, "f8e4m3fn": ml_dtypes.float8_e4m3fn,
       "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
       "f8e5m2": ml_dtypes.float8_e5m2, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
       "f8e8m0fnu": ml_dtypes.float8_e8m0fnu, "f4e2m1fn": ml_dtypes.float4_e2m1fn,
       "s4": ml_dtypes.int4, "u4": ml_dtypes.uint4, "pred": np.bool_}


def _values(t: str, shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if t == "pred":  # sparse enough that some outputs stay false
        return rng.random(shape) < 0.04
    if t in ("s4", "u4"):
        info = ml_dtypes.iinfo(_NP[t])
        return rng.integers(int(info.min), int(info.max) + 1, shape).astype(_NP[t])
    if t == "f8e8m0fnu":  # powers of two
        return np.exp2(rng.integers(-6, 4, shape)).astype(np.float32).astype(_NP[t])
    if t == "f4e2m1fn":
        return rng.choice(np.array([-6, -3, -1.5, -1, -0.5, 0, 0.5, 1, 2, 4], np.float32), shape).astype(_NP[t])
    return (rng.standard_normal(shape) * 0.75).astype(np.float32).astype(_NP[t])


def _conv(name: str, t: str) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = {t}[1,16,16,8] parameter(0)
  w = {t}[3,3,8,16] parameter(1)
  ROOT c = {t}[1,16,16,16] convolution(x, w), window={{size=3x3 pad=1_1x1_1}}, dim_labels=b01f_01io->b01f
}}
"""


def _grouped(name: str, t: str) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = {t}[2,12,12,8] parameter(0)
  w = {t}[3,3,4,6] parameter(1)
  ROOT c = {t}[2,6,5,6] convolution(x, w), window={{size=3x3 stride=2x2 pad=0_1x1_1 rhs_dilate=1x2}}, dim_labels=b01f_01io->b01f, feature_group_count=2
}}
"""


CASES = {}
for _k, _t in enumerate(_NP):
    CASES[f"narrow_conv_{_t}"] = (_conv(f"narrow_conv_{_t}", _t),
                                  [_values(_t, (1, 16, 16, 8), 2 * _k), _values(_t, (3, 3, 8, 16), 2 * _k + 1)], 0.0)
for _k, _t in enumerate(("f8e4m3fn", "f8e5m2", "s4", "u4", "pred")):
    CASES[f"narrow_conv_grouped_{_t}"] = (_grouped(f"narrow_conv_grouped_{_t}", _t),
                                          [_values(_t, (2, 12, 12, 8), 50 + _k), _values(_t, (3, 3, 4, 6), 60 + _k)], 0.0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_narrow_conv_matches_xla_bits(name, workdir):
    inputs, (want,) = load_case(name)
    (got,) = run_hlo_text(CASES[name][0], inputs, workdir, name)
    g, w = np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8)
    bad = np.nonzero(g.reshape(-1) != w.reshape(-1))[0]
    assert bad.size == 0, f"{name}: {bad.size} of {g.size} differ, first at {bad[:4].tolist()}: " \
                          f"aotc {g.reshape(-1)[bad[:4]].tolist()} xla {w.reshape(-1)[bad[:4]].tolist()}"


def test_two_bit_convolution_is_refused():
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions

    text = ("HloModule m\n\nENTRY e {\n  x = s2[1,4,4,2] parameter(0)\n  w = s2[3,3,2,2] parameter(1)\n"
            "  ROOT c = s2[1,2,2,2] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f\n}\n")
    with pytest.raises(AotcError, match=r"m.hlo:6:8: error: .*convolution of s2 values is not supported"):
        fe = driver.frontend("m.hlo", None, CompileOptions(), text=text)
        driver.generate(fe, "/nonexistent/libm", CompileOptions())

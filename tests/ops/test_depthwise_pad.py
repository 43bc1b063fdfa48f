"""A zero pad before a convolution (Keras' ZeroPadding2D before a stride-2 depthwise
conv) folds into the window's padding, as XLA's FoldConvInputPad does: the kernel then
skips the border taps itself and no padded copy of the input is made. Against XLA:CPU:
stride 2 with every edge padding (low, high, both, added to the window's own), odd
sizes, 3x3 and 5x5 windows, MobileNetV2's 112x112x32 and 7x7x960, the fed-weights
BatchNorm + ReLU6 chain between a 1x1 convolution and the pad, and the pads that must
stay (a nonzero value, a padded feature dimension, a pad with another user).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

# f32 sums in another order than XLA's: a few ulps
F32_TOL = 2e-5


def _f32(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _eighths(shape, seed):
    """Multiples of 1/8 in [-1, 1): small fixtures for large shapes (their products sum exactly)."""
    return (np.random.default_rng(seed).integers(-8, 8, shape) / 8).astype(np.float32)


def _dims(d) -> str:
    return ",".join(str(v) for v in d)


def _dw(name: str, hwc: tuple[int, int, int], k: int, pad: str, window: str, out_hw: tuple[int, int],
        padded_hw: tuple[int, int], value: str = "0") -> str:
    h, w, c = hwc
    return f"""HloModule {name}
ENTRY main {{
  x = f32[1,{h},{w},{c}] parameter(0)
  f = f32[{k},{k},1,{c}] parameter(1)
  z = f32[] constant({value})
  p = f32[1,{padded_hw[0]},{padded_hw[1]},{c}] pad(x, z), padding=0_0x{pad}x0_0
  ROOT y = f32[1,{out_hw[0]},{out_hw[1]},{c}] convolution(p, f), window={{{window}}}, dim_labels=b01f_01io->b01f, feature_group_count={c}
}}
"""


# MobileNetV2's block: 1x1 conv, BatchNorm with fed statistics, ReLU6, the pad, a stride-2 depthwise conv
_FED_BLOCK = """HloModule dwpad_fed_bn_block
ENTRY main {
  x = f32[1,16,16,8] parameter(0)
  w = f32[1,1,8,24] parameter(1)
  gamma = f32[24] parameter(2)
  beta = f32[24] parameter(3)
  mean = f32[24] parameter(4)
  var = f32[24] parameter(5)
  f = f32[3,3,1,24] parameter(6)
  c = f32[1,16,16,24] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f
  eps = f32[] constant(0.001)
  epsb = f32[24] broadcast(eps), dimensions={}
  ve = f32[24] add(var, epsb)
  r = f32[24] rsqrt(ve)
  sc = f32[24] multiply(r, gamma)
  ms = f32[24] multiply(mean, sc)
  sh = f32[24] subtract(beta, ms)
  scb = f32[1,16,16,24] broadcast(sc), dimensions={3}
  shb = f32[1,16,16,24] broadcast(sh), dimensions={3}
  m = f32[1,16,16,24] multiply(c, scb)
  a = f32[1,16,16,24] add(m, shb)
  zero = f32[] constant(0)
  six = f32[] constant(6)
  zb = f32[1,16,16,24] broadcast(zero), dimensions={}
  sb = f32[1,16,16,24] broadcast(six), dimensions={}
  lo = f32[1,16,16,24] maximum(a, zb)
  r6 = f32[1,16,16,24] minimum(lo, sb)
  p = f32[1,17,17,24] pad(r6, zero), padding=0_0x0_1x0_1x0_0
  ROOT y = f32[1,8,8,24] convolution(p, f), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=24
}
"""

_TWO_USERS = """HloModule dwpad_pad_with_two_users
ENTRY main {
  x = f32[1,10,10,16] parameter(0)
  f = f32[3,3,1,16] parameter(1)
  z = f32[] constant(0)
  p = f32[1,11,11,16] pad(x, z), padding=0_0x0_1x0_1x0_0
  y = f32[1,5,5,16] convolution(p, f), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=16
  ROOT t = (f32[1,5,5,16], f32[1,11,11,16]) tuple(y, p)
}
"""

_FEATURE_PAD = """HloModule dwpad_feature_pad_stays
ENTRY main {
  x = f32[1,9,9,6] parameter(0)
  f = f32[3,3,1,8] parameter(1)
  z = f32[] constant(0)
  p = f32[1,10,10,8] pad(x, z), padding=0_0x0_1x1_0x1_1
  ROOT y = f32[1,4,4,8] convolution(p, f), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=8
}
"""

# name -> (HLO text, inputs in parameter order, rtol)
CASES = {
    "dwpad_s2_keras_112x112x32": (_dw("dwpad_s2_keras_112x112x32", (112, 112, 32), 3, "0_1x0_1", "size=3x3 stride=2x2",
                                      (56, 56), (113, 113)),
                                  [_eighths((1, 112, 112, 32), 0), _eighths((3, 3, 1, 32), 1)], F32_TOL),
    "dwpad_s2_low_only": (_dw("dwpad_s2_low_only", (14, 14, 16), 3, "1_0x1_0", "size=3x3 stride=2x2", (7, 7), (15, 15)),
                          [_f32((1, 14, 14, 16), 2), _f32((3, 3, 1, 16), 3)], F32_TOL),
    "dwpad_s2_odd_sizes": (_dw("dwpad_s2_odd_sizes", (15, 13, 24), 3, "1_1x0_1", "size=3x3 stride=2x2", (8, 6), (17, 14)),
                           [_f32((1, 15, 13, 24), 4), _f32((3, 3, 1, 24), 5)], F32_TOL),
    "dwpad_s2_plus_window_padding": (_dw("dwpad_s2_plus_window_padding", (9, 11, 8), 3, "1_1x1_1",
                                         "size=3x3 stride=2x2 pad=1_0x0_1", (5, 6), (11, 13)),
                                     [_f32((1, 9, 11, 8), 6), _f32((3, 3, 1, 8), 7)], F32_TOL),
    "dwpad_s2_5x5_28x28x40": (_dw("dwpad_s2_5x5_28x28x40", (28, 28, 40), 5, "1_2x1_2", "size=5x5 stride=2x2",
                                  (14, 14), (31, 31)),
                              [_f32((1, 28, 28, 40), 8), _f32((5, 5, 1, 40), 9)], F32_TOL),
    "dwpad_s1_7x7x960": (_dw("dwpad_s1_7x7x960", (7, 7, 960), 3, "1_1x1_1", "size=3x3", (7, 7), (9, 9)),
                         [_eighths((1, 7, 7, 960), 10), _eighths((3, 3, 1, 960), 11)], F32_TOL),
    "dwpad_s2_7x7x960": (_dw("dwpad_s2_7x7x960", (7, 7, 960), 3, "0_1x0_1", "size=3x3 stride=2x2", (3, 3), (8, 8)),
                         [_eighths((1, 7, 7, 960), 12), _eighths((3, 3, 1, 960), 13)], F32_TOL),
    "dwpad_nonzero_value_stays": (_dw("dwpad_nonzero_value_stays", (10, 10, 8), 3, "0_1x0_1", "size=3x3 stride=2x2",
                                      (5, 5), (11, 11), value="1.5"),
                                  [_f32((1, 10, 10, 8), 14), _f32((3, 3, 1, 8), 15)], F32_TOL),
    "dwpad_fed_bn_block": (_FED_BLOCK, [_f32((1, 16, 16, 8), 16), _f32((1, 1, 8, 24), 17), _f32((24,), 18),
                                        _f32((24,), 19), _f32((24,), 20),
                                        np.abs(_f32((24,), 21)) + np.float32(0.1), _f32((3, 3, 1, 24), 22)], F32_TOL),
    "dwpad_pad_with_two_users": (_TWO_USERS, [_f32((1, 10, 10, 16), 23), _f32((3, 3, 1, 16), 24)], F32_TOL),
    "dwpad_feature_pad_stays": (_FEATURE_PAD, [_f32((1, 9, 9, 6), 25), _f32((3, 3, 1, 8), 26)], F32_TOL),
}

# cases whose pad folds away: the compiled program has no pad, and no arena buffer of the padded shape
FOLDED = ("dwpad_s2_keras_112x112x32", "dwpad_s2_low_only", "dwpad_s2_odd_sizes", "dwpad_s2_plus_window_padding",
          "dwpad_s2_5x5_28x28x40", "dwpad_s1_7x7x960", "dwpad_s2_7x7x960", "dwpad_fed_bn_block")


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_pad_folds_only_where_it_may(name):
    """Every case names its pad `p`: a folded pad is in no kernel's provenance."""
    from aotc import driver
    from aotc.options import CompileOptions
    fe = driver.frontend(f"{name}.hlo", None, CompileOptions(), text=CASES[name][0])
    program = driver.generate(fe, None, CompileOptions()).lowered.program
    names = {n for k in program.kernels for n in k.provenance}
    assert ("p" not in names) == (name in FOLDED), sorted(names)

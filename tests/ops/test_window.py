"""reduce-window and convolution against XLA:CPU: padding (an init value that is
not the reducer's identity shows that padding is skipped), negative padding,
base and window dilation, strides, variadic reduce-window, every dim_labels
order, feature groups (incl. depthwise with a multiplier), batch groups, window
reversal, 1-D/3-D, bf16/f16/f64/integer element types.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

BF16 = ml_dtypes.bfloat16


def _f32(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _conv(name: str, lhs: str, rhs: str, out: str, attrs: str) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = {lhs} parameter(0)
  w = {rhs} parameter(1)
  ROOT c = {out} convolution(x, w), {attrs}
}}
"""


_ADD_F32 = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
"""
_MAX_F32 = """
max {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] maximum(p, q)
}
"""

# f32 sums in another order than XLA's: a few ulps; bf16/f16 results: one rounding apart at most
F32_TOL, HALF_TOL = 2e-5, 8e-3

# name -> (HLO text, inputs in parameter order, rtol)
CASES = {
    "rw_sum_init_padding": ("HloModule rw_sum_init_padding\n" + _ADD_F32 + """
ENTRY main {
  x = f32[4,5] parameter(0)
  i = f32[] constant(10)
  ROOT r = f32[6,3] reduce-window(x, i), window={size=2x3 stride=1x2 pad=1_2x2_1}, to_apply=add
}
""", [_f32((4, 5), 0)], 1e-6),

    "rw_dilations": ("HloModule rw_dilations\n" + _MAX_F32 + _ADD_F32 + """
ENTRY main {
  x = f32[9] parameter(0)
  ninf = f32[] constant(-inf)
  one = f32[] constant(1)
  m = f32[9] reduce-window(x, ninf), window={size=3 stride=2 pad=2_3 lhs_dilate=2 rhs_dilate=2}, to_apply=max
  s = f32[9] reduce-window(x, one), window={size=2 stride=3 pad=1_2 lhs_dilate=3 rhs_dilate=3}, to_apply=add
  ROOT t = (f32[9], f32[9]) tuple(m, s)
}
""", [_f32((9,), 1)], 1e-6),

    "rw_negative_padding": ("HloModule rw_negative_padding\n" + _ADD_F32 + """
ENTRY main {
  x = f32[8,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,3] reduce-window(x, z), window={size=2x2 stride=2x2 pad=-1_-1x1_-1}, to_apply=add
}
""", [_f32((8, 6), 2)], 1e-6),

    # max with its argmax: a two-operand reducer returning a tuple; ties keep the lower index
    "rw_variadic_argmax": ("""HloModule rw_variadic_argmax
pick {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v1, v0), direction=GT
  eq = pred[] compare(v1, v0), direction=EQ
  lo = pred[] compare(i1, i0), direction=LT
  tie = pred[] and(eq, lo)
  take = pred[] or(gt, tie)
  v = f32[] select(take, v1, v0)
  i = s32[] select(take, i1, i0)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY main {
  x = f32[6,6] parameter(0)
  n = s32[6,6] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  m1 = s32[] constant(-1)
  ROOT r = (f32[3,3], s32[3,3]) reduce-window(x, n, ninf, m1), window={size=3x3 stride=2x2 pad=1_1x1_1}, to_apply=pick
}
""", [np.round(_f32((6, 6), 3))], 0.0),

    "rw_int_types": ("""HloModule rw_int_types
mins {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] minimum(a, b)
}
addu {
  d = u8[] parameter(0)
  e = u8[] parameter(1)
  ROOT f = u8[] add(d, e)
}
ENTRY main {
  x = s32[5,4] parameter(0)
  y = u8[6] parameter(1)
  big = s32[] constant(2147483647)
  z = u8[] constant(7)
  rx = s32[4,5] reduce-window(x, big), window={size=2x2 pad=0_0x1_1}, to_apply=mins
  ry = u8[6] reduce-window(y, z), window={size=3 pad=1_1}, to_apply=addu
  ROOT t = (s32[4,5], u8[6]) tuple(rx, ry)
}
""", [np.random.default_rng(4).integers(-1000, 1000, (5, 4)).astype(np.int32),
      np.array([200, 100, 3, 255, 0, 90], np.uint8)], 0.0),

    # bf16 reducer rounds after every step; a fused elementwise producer feeds the window
    "rw_bf16_fused": ("""HloModule rw_bf16_fused
addb {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY main {
  x = bf16[12] parameter(0)
  ax = bf16[12] abs(x)
  z = bf16[] constant(0)
  ROOT r = bf16[12] reduce-window(ax, z), window={size=12 pad=11_0}, to_apply=addb
}
""", [(_f32((12,), 5) * 7).astype(BF16)], 0.0),

    "conv_nhwc_3x3": (_conv("conv_nhwc_3x3", "f32[2,6,7,3]", "f32[3,3,3,5]", "f32[2,6,7,5]",
                            "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                      [_f32((2, 6, 7, 3), 10), _f32((3, 3, 3, 5), 11)], F32_TOL),

    "conv_nchw_stride_dilate": (_conv("conv_nchw_stride_dilate", "f32[2,3,9,8]", "f32[4,3,3,2]", "f32[2,4,5,9]",
                                      "window={size=3x2 stride=2x1 pad=2_0x1_2 rhs_dilate=1x2}, "
                                      "dim_labels=bf01_oi01->bf01"),
                                [_f32((2, 3, 9, 8), 12), _f32((4, 3, 3, 2), 13)], F32_TOL),

    "conv_feature_groups": (_conv("conv_feature_groups", "f32[2,5,5,4]", "f32[3,3,2,6]", "f32[2,3,3,6]",
                                  "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                                  "feature_group_count=2"),
                            [_f32((2, 5, 5, 4), 14), _f32((3, 3, 2, 6), 15)], F32_TOL),

    "conv_depthwise_multiplier": (_conv("conv_depthwise_multiplier", "f32[1,5,5,3]", "f32[3,3,1,6]",
                                        "f32[1,5,5,6]", "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                                        "feature_group_count=3"),
                                  [_f32((1, 5, 5, 3), 16), _f32((3, 3, 1, 6), 17)], F32_TOL),

    # negative padding, base dilation (transposed convolution) and a reversed window dimension
    "conv_negpad_lhs_dilate_reversal": (_conv("conv_negpad_lhs_dilate_reversal", "f32[1,5,4,2]", "f32[3,2,2,3]",
                                              "f32[1,6,4,3]", "window={size=3x2 pad=-1_0x1_0 lhs_dilate=2x1 "
                                              "rhs_reversal=1x0}, dim_labels=b01f_01io->b01f"),
                                        [_f32((1, 5, 4, 2), 18), _f32((3, 2, 2, 3), 19)], F32_TOL),

    "conv_batch_groups": (_conv("conv_batch_groups", "f32[4,5,5,2]", "f32[3,3,2,4]", "f32[2,3,3,4]",
                                "window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2"),
                          [_f32((4, 5, 5, 2), 20), _f32((3, 3, 2, 4), 21)], F32_TOL),

    # labels in unusual orders on all three sides
    "conv_permuted_labels": (_conv("conv_permuted_labels", "f32[4,3,2,6]", "f32[4,3,5,2]", "f32[3,2,5,6]",
                                   "window={size=2x3 pad=0_1x1_1}, dim_labels=f1b0_i1o0->1bf0"),
                             [_f32((4, 3, 2, 6), 22), _f32((4, 3, 5, 2), 23)], F32_TOL),

    "conv_1d": (_conv("conv_1d", "f32[2,3,10]", "f32[4,3,3]", "f32[2,4,4]",
                      "window={size=3 stride=3 pad=2_2}, dim_labels=bf0_oi0->bf0"),
                [_f32((2, 3, 10), 24), _f32((4, 3, 3), 25)], F32_TOL),

    "conv_3d": (_conv("conv_3d", "f32[1,4,4,3,2]", "f32[2,2,2,2,3]", "f32[1,4,4,3,3]",
                      "window={size=2x2x2 pad=0_1x1_0x0_1}, dim_labels=b012f_012io->b012f"),
                [_f32((1, 4, 4, 3, 2), 26), _f32((2, 2, 2, 2, 3), 27)], F32_TOL),

    # the shapes of an SSD-MobileNet block: bf16 depthwise 3x3/2 with pad 0_1, then 1x1
    "conv_bf16_mobilenet": ("""HloModule conv_bf16_mobilenet
ENTRY main {
  x = bf16[1,10,10,8] parameter(0)
  dw = bf16[3,3,1,8] parameter(1)
  pw = bf16[1,1,8,16] parameter(2)
  d = bf16[1,5,5,8] convolution(x, dw), window={size=3x3 stride=2x2 pad=0_1x0_1}, dim_labels=b01f_01io->b01f, feature_group_count=8
  ROOT p = bf16[1,5,5,16] convolution(d, pw), window={size=1x1}, dim_labels=b01f_01io->b01f
}
""", [_f32((1, 10, 10, 8), 28).astype(BF16), _f32((3, 3, 1, 8), 29).astype(BF16),
      _f32((1, 1, 8, 16), 30).astype(BF16)], HALF_TOL),

    # long bf16 accumulations: f32 accumulators, one rounding at the end (as XLA:CPU)
    "conv_bf16_deep": ("""HloModule conv_bf16_deep
ENTRY main {
  x = bf16[1,6,6,256] parameter(0)
  w = bf16[1,1,256,32] parameter(1)
  y = bf16[1,8,8,32] parameter(2)
  v = bf16[3,3,32,16] parameter(3)
  a = bf16[1,6,6,32] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f
  b = bf16[1,8,8,16] convolution(y, v), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT t = (bf16[1,6,6,32], bf16[1,8,8,16]) tuple(a, b)
}
""", [_f32((1, 6, 6, 256), 43).astype(BF16), _f32((1, 1, 256, 32), 44).astype(BF16),
      _f32((1, 8, 8, 32), 45).astype(BF16), _f32((3, 3, 32, 16), 46).astype(BF16)], HALF_TOL),

    "conv_f16_f64": ("""HloModule conv_f16_f64
ENTRY main {
  x = f16[1,6,6,2] parameter(0)
  w = f16[3,3,2,3] parameter(1)
  y = f64[1,6,6,2] parameter(2)
  v = f64[3,3,2,3] parameter(3)
  a = f16[1,6,6,3] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  b = f64[1,4,4,3] convolution(y, v), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT t = (f16[1,6,6,3], f64[1,4,4,3]) tuple(a, b)
}
""", [_f32((1, 6, 6, 2), 31).astype(np.float16), _f32((3, 3, 2, 3), 32).astype(np.float16),
      _f32((1, 6, 6, 2), 33).astype(np.float64), _f32((3, 3, 2, 3), 34).astype(np.float64)], HALF_TOL),

    # GEMM forms: the input as the matrix itself (1x1), im2col in several row blocks with a
    # weight layout that needs packing, reversal and dilation; f64 through dgemm
    "conv_gemm_1x1": (_conv("conv_gemm_1x1", "f32[2,20,15,16]", "f32[1,1,16,24]", "f32[2,20,15,24]",
                            "window={size=1x1}, dim_labels=b01f_01io->b01f"),
                      [_f32((2, 20, 15, 16), 37), _f32((1, 1, 16, 24), 38)], F32_TOL),

    "conv_gemm_blocks_packed": (_conv("conv_gemm_blocks_packed", "f32[1,19,17,6]", "f32[8,3,2,6]",
                                      "f32[1,19,18,8]", "window={size=3x2 pad=2_2x2_0 rhs_dilate=2x1 "
                                      "rhs_reversal=0x1}, dim_labels=b01f_o01i->b01f"),
                                [_f32((1, 19, 17, 6), 39), _f32((8, 3, 2, 6), 40)], F32_TOL),

    "conv_gemm_f64": (_conv("conv_gemm_f64", "f64[1,7,6,4]", "f64[3,3,4,8]", "f64[1,5,3,8]",
                            "window={size=3x3 stride=1x2 pad=0_0x1_1}, dim_labels=b01f_01io->b01f"),
                      [_f32((1, 7, 6, 4), 41).astype(np.float64), _f32((3, 3, 4, 8), 42).astype(np.float64)],
                      1e-12),

    # integer convolutions wrap like XLA's integer arithmetic; s8 inputs widen to s32
    "conv_int": ("""HloModule conv_int
ENTRY main {
  x = s32[1,5,5,2] parameter(0)
  w = s32[3,3,2,4] parameter(1)
  y = s8[1,4,4,3] parameter(2)
  v = s8[2,2,3,2] parameter(3)
  a = s32[1,5,5,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  b = s32[1,3,3,2] convolution(y, v), window={size=2x2}, dim_labels=b01f_01io->b01f
  ROOT t = (s32[1,5,5,4], s32[1,3,3,2]) tuple(a, b)
}
""", [np.random.default_rng(47).integers(-2 ** 31, 2 ** 31 - 1, (1, 5, 5, 2)).astype(np.int32),
      np.random.default_rng(48).integers(-1000, 1000, (3, 3, 2, 4)).astype(np.int32),
      np.random.default_rng(49).integers(-128, 128, (1, 4, 4, 3)).astype(np.int8),
      np.random.default_rng(50).integers(-128, 128, (2, 2, 3, 2)).astype(np.int8)], 0.0),

    # a fused elementwise producer of the input is materialized for the kernel
    "conv_fused_input": ("""HloModule conv_fused_input
ENTRY main {
  x = f32[1,4,4,2] parameter(0)
  w = f32[2,2,2,2] parameter(1)
  two = f32[] constant(2)
  b = f32[1,4,4,2] broadcast(two), dimensions={}
  m = f32[1,4,4,2] multiply(x, b)
  c = f32[1,3,3,2] convolution(m, w), window={size=2x2}, dim_labels=b01f_01io->b01f
  ROOT n = f32[1,3,3,2] negate(c)
}
""", [_f32((1, 4, 4, 2), 35), _f32((2, 2, 2, 2), 36)], F32_TOL),
    # pools over NHWC with the channels as one vector loop (20: a vector body and a tail),
    # their BatchNorm/ReLU producer computed once into a buffer (the conv's epilogue)
    "rw_pool_stem": ("HloModule rw_pool_stem\n" + _MAX_F32 + """
ENTRY main {
  x = f32[1,16,15,3] parameter(0)
  w = f32[3,3,3,20] parameter(1)
  s = f32[20] parameter(2)
  t = f32[20] parameter(3)
  c = f32[1,8,8,20] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  sb = f32[1,8,8,20] broadcast(s), dimensions={3}
  tb = f32[1,8,8,20] broadcast(t), dimensions={3}
  m = f32[1,8,8,20] multiply(c, sb)
  a = f32[1,8,8,20] add(m, tb)
  z = f32[] constant(0)
  zb = f32[1,8,8,20] broadcast(z), dimensions={}
  u = f32[1,8,8,20] maximum(a, zb)
  ninf = f32[] constant(-inf)
  ROOT pool = f32[1,4,4,20] reduce-window(u, ninf), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
}
""", [_f32((1, 16, 15, 3), 37), _f32((3, 3, 3, 20), 38), _f32((20,), 39), _f32((20,), 40)], F32_TOL),
    "rw_avg_pool_channels": ("HloModule rw_avg_pool_channels\n" + _ADD_F32 + """
ENTRY main {
  x = f32[2,9,7,64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,5,4,64] reduce-window(x, z), window={size=1x3x2x1 stride=1x2x2x1 pad=0_0x1_1x1_0x0_0}, to_apply=add
}
""", [_f32((2, 9, 7, 64), 41)], F32_TOL),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


BAD = {
    "does not divide the input": _conv("bad", "f32[1,5,5,3]", "f32[3,3,1,4]", "f32[1,3,3,4]",
                                       "window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2"),
    "window size 2 in spatial dimension 0 does not match": _conv(
        "bad", "f32[1,5,5,3]", "f32[3,3,3,4]", "f32[1,4,3,4]", "window={size=2x3}, dim_labels=b01f_01io->b01f"),
    "dim_labels rhs part": _conv("bad", "f32[1,5,5,3]", "f32[3,3,3,4]", "f32[1,3,3,4]",
                                 "window={size=3x3}, dim_labels=b01f_02io->b01f"),
    "reduce-window window has 1 dimensions, expected 2": "HloModule bad\n" + _ADD_F32 + """
ENTRY main {
  x = f32[4,5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,5] reduce-window(x, z), window={size=2}, to_apply=add
}
""",
}


@pytest.mark.parametrize("message", sorted(BAD))
def test_shape_rule_errors(message):
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions
    with pytest.raises(AotcError, match=message):
        driver.frontend("bad.hlo", None, CompileOptions(), text=BAD[message])

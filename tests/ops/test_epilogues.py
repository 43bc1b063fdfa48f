"""GEMM epilogues: a dot or a convolution run as GEMM applies the elementwise ops consuming
it (bias, scale and shift, activations, residual adds, converts) to each block of output
rows, in one kernel. Each case is checked against XLA:CPU at sizes that take every path:
row ranges split for threads (even and uneven), column ranges for few rows and many
columns (even and uneven), columns spanning two dims, a batched and a half-precision product
computed whole, im2col in ranges and block by block, a GEMM over window positions, a 1x1
convolution read in place, and result rows of a type other than the GEMM's. The fused module must show the kOutput fusion,
so a case cannot pass without its epilogue.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from aotc import driver
from aotc.hlo.opcodes import Op
from aotc.options import CompileOptions


def _normal(seed: int, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _bf16(a: np.ndarray) -> np.ndarray:
    return a.astype(ml_dtypes.bfloat16)


# GEMM sums in another order than XLA's (blocked and vectorized differently): 1e-5 of the
# largest magnitude, in sums of 96..576 products (see conftest.assert_matches)
SUM = 1e-5

CASES = {
    # 192x256x128: four row ranges of 48 rows, each GEMM then its epilogue in place
    "epilogue_dot_bias_relu_residual": ("""HloModule epilogue_dot_bias_relu_residual
ENTRY main {
  x = f32[192,256] parameter(0)
  w = f32[256,128] parameter(1)
  b = f32[128] parameter(2)
  r = f32[192,128] parameter(3)
  d = f32[192,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[192,128] broadcast(b), dimensions={1}
  a = f32[192,128] add(d, bb)
  zero = f32[] constant(0)
  z = f32[192,128] broadcast(zero), dimensions={}
  m = f32[192,128] maximum(a, z)
  ROOT o = f32[192,128] add(m, r)
}
""", [_normal(1, 192, 256), _normal(2, 256, 128, scale=0.1), _normal(3, 128), _normal(4, 192, 128)], SUM),
    # 130 rows in four uneven ranges; the result is bf16, so the GEMM's rows go to scratch
    "epilogue_dot_uneven_rows_to_bf16": ("""HloModule epilogue_dot_uneven_rows_to_bf16
ENTRY main {
  x = f32[130,256] parameter(0)
  w = f32[256,64] parameter(1)
  s = f32[64] parameter(2)
  d = f32[130,64] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  sb = f32[130,64] broadcast(s), dimensions={1}
  m = f32[130,64] multiply(d, sb)
  ROOT c = bf16[130,64] convert(m)
}
""", [_normal(5, 130, 256), _normal(6, 256, 64, scale=0.1), _normal(7, 64)], 8e-3),
    # the product's columns span two dims (an attention head projection, N = 4 heads x 16):
    # the bias is indexed by the column split over both, not by the row
    "epilogue_dot_columns_over_two_dims": ("""HloModule epilogue_dot_columns_over_two_dims
ENTRY main {
  x = f32[1,24,32] parameter(0)
  w = f32[32,4,16] parameter(1)
  b = f32[4,16] parameter(2)
  d = f32[1,24,4,16] dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  bb = f32[1,24,4,16] broadcast(b), dimensions={2,3}
  ROOT a = f32[1,24,4,16] add(d, bb)
}
""", [_normal(28, 1, 24, 32), _normal(29, 32, 4, 16, scale=0.1), _normal(30, 4, 16)], SUM),
    # few rows, many columns (an MLP at batch 32): the weights are cut into column ranges
    # (515 columns, uneven), each packed once by its own range; bias and tanh in place
    "epilogue_dot_column_ranges": ("""HloModule epilogue_dot_column_ranges
ENTRY main {
  x = f32[32,256] parameter(0)
  w = f32[256,515] parameter(1)
  b = f32[515] parameter(2)
  d = f32[32,515] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[32,515] broadcast(b), dimensions={1}
  a = f32[32,515] add(d, bb)
  ROOT t = f32[32,515] tanh(a)
}
""", [_normal(23, 32, 256), _normal(24, 256, 515, scale=0.1), _normal(25, 515)], SUM),
    # column ranges into blocks of scratch (a bf16 result), uneven
    "epilogue_dot_column_ranges_to_bf16": ("""HloModule epilogue_dot_column_ranges_to_bf16
ENTRY main {
  x = f32[24,128] parameter(0)
  w = f32[128,515] parameter(1)
  d = f32[24,515] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  z = f32[24,515] broadcast(zero), dimensions={}
  m = f32[24,515] maximum(d, z)
  ROOT c = bf16[24,515] convert(m)
}
""", [_normal(26, 24, 128), _normal(27, 128, 515, scale=0.1)], 8e-3),
    # batched (attention scores): computed whole, then scaled and masked
    "epilogue_dot_batched_scale_mask": ("""HloModule epilogue_dot_batched_scale_mask
ENTRY main {
  q = f32[4,64,32] parameter(0)
  k = f32[4,32,48] parameter(1)
  mask = f32[64,48] parameter(2)
  d = f32[4,64,48] dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  c = f32[] constant(0.125)
  cb = f32[4,64,48] broadcast(c), dimensions={}
  s = f32[4,64,48] multiply(d, cb)
  mb = f32[4,64,48] broadcast(mask), dimensions={1,2}
  ROOT o = f32[4,64,48] add(s, mb)
}
""", [_normal(8, 4, 64, 32), _normal(9, 4, 32, 48), _normal(10, 64, 48)], SUM),
    # bf16 product (computed in f32, rounded once to bf16), then tanh in bf16
    "epilogue_dot_bf16_tanh": ("""HloModule epilogue_dot_bf16_tanh
ENTRY main {
  a = bf16[64,96] parameter(0)
  b = bf16[96,80] parameter(1)
  d = bf16[64,80] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = bf16[64,80] tanh(d)
}
""", [_bf16(_normal(11, 64, 96, scale=0.2)), _bf16(_normal(12, 96, 80, scale=0.2))], 8e-3),
    # conv 3x3 SAME 28x28x32 -> 64 with BatchNorm folded to scale/shift and ReLU: blocks of
    # output rows, each one GEMM over the window positions (ops/conv_taps.py) then its epilogue
    "epilogue_conv_bn_relu": ("""HloModule epilogue_conv_bn_relu
ENTRY main {
  x = f32[1,28,28,32] parameter(0)
  w = f32[3,3,32,64] parameter(1)
  scale = f32[64] parameter(2)
  shift = f32[64] parameter(3)
  c = f32[1,28,28,64] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  sb = f32[1,28,28,64] broadcast(scale), dimensions={3}
  m = f32[1,28,28,64] multiply(c, sb)
  hb = f32[1,28,28,64] broadcast(shift), dimensions={3}
  a = f32[1,28,28,64] add(m, hb)
  zero = f32[] constant(0)
  z = f32[1,28,28,64] broadcast(zero), dimensions={}
  ROOT r = f32[1,28,28,64] maximum(a, z)
}
""", [_normal(13, 1, 28, 28, 32), _normal(14, 3, 3, 32, 64, scale=0.1), _normal(15, 64), _normal(16, 64)], SUM),
    # 1x1 conv: the input is the GEMM's lhs in place; bias and a residual add
    "epilogue_conv1x1_residual": ("""HloModule epilogue_conv1x1_residual
ENTRY main {
  x = f32[1,14,14,64] parameter(0)
  w = f32[1,1,64,128] parameter(1)
  b = f32[128] parameter(2)
  res = f32[1,14,14,128] parameter(3)
  c = f32[1,14,14,128] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f
  bb = f32[1,14,14,128] broadcast(b), dimensions={3}
  a = f32[1,14,14,128] add(c, bb)
  ROOT o = f32[1,14,14,128] add(a, res)
}
""", [_normal(17, 1, 14, 14, 64), _normal(18, 1, 1, 64, 128, scale=0.1), _normal(19, 128),
      _normal(20, 1, 14, 14, 128)], SUM),
    # fewer pixels than output features (ResNet's last stages): the GEMM sliced over the
    # pool by columns, the epilogue over all rows after it; 1x1 (lhs in place) and 3x3 (im2col)
    "epilogue_conv1x1_few_pixels": ("""HloModule epilogue_conv1x1_few_pixels
ENTRY main {
  x = f32[1,7,7,96] parameter(0)
  w = f32[1,1,96,512] parameter(1)
  scale = f32[512] parameter(2)
  res = f32[1,7,7,512] parameter(3)
  c = f32[1,7,7,512] convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f
  sb = f32[1,7,7,512] broadcast(scale), dimensions={3}
  m = f32[1,7,7,512] multiply(c, sb)
  a = f32[1,7,7,512] add(m, res)
  zero = f32[] constant(0)
  z = f32[1,7,7,512] broadcast(zero), dimensions={}
  ROOT r = f32[1,7,7,512] maximum(a, z)
}
""", [_normal(23, 1, 7, 7, 96), _normal(24, 1, 1, 96, 512, scale=0.1), _normal(25, 512),
      _normal(26, 1, 7, 7, 512)], SUM),
    "epilogue_conv3x3_few_pixels_to_bf16": ("""HloModule epilogue_conv3x3_few_pixels_to_bf16
ENTRY main {
  x = f32[1,9,9,40] parameter(0)
  w = f32[3,3,40,300] parameter(1)
  c = f32[1,9,9,300] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  e = f32[1,9,9,300] tanh(c)
  ROOT o = bf16[1,9,9,300] convert(e)
}
""", [_normal(27, 1, 9, 9, 40, scale=0.5), _normal(28, 3, 3, 40, 300, scale=0.1)], 8e-3),
    # a stem (ResNet's and DenseNet's): 7x7 stride 2 over 3 features, im2col in pixel ranges,
    # each window row's landing columns copied as one run of up to 7*3 elements
    "epilogue_conv_stem_7x7": ("""HloModule epilogue_conv_stem_7x7
ENTRY main {
  x = f32[1,64,64,3] parameter(0)
  w = f32[7,7,3,64] parameter(1)
  scale = f32[64] parameter(2)
  shift = f32[64] parameter(3)
  c = f32[1,32,32,64] convolution(x, w), window={size=7x7 stride=2x2 pad=3_3x3_3}, dim_labels=b01f_01io->b01f
  sb = f32[1,32,32,64] broadcast(scale), dimensions={3}
  m = f32[1,32,32,64] multiply(c, sb)
  hb = f32[1,32,32,64] broadcast(shift), dimensions={3}
  a = f32[1,32,32,64] add(m, hb)
  zero = f32[] constant(0)
  z = f32[1,32,32,64] broadcast(zero), dimensions={}
  ROOT r = f32[1,32,32,64] maximum(a, z)
}
""", [_normal(29, 1, 64, 64, 3), _normal(30, 7, 7, 3, 64, scale=0.1), _normal(31, 64), _normal(32, 64)], SUM),
    # stride 2, asymmetric padding, the kernel in o01i (so it is repacked and im2col runs
    # block by block), and a bf16 result: the GEMM's rows go to scratch of their own
    "epilogue_conv_stride2_to_bf16": ("""HloModule epilogue_conv_stride2_to_bf16
ENTRY main {
  x = f32[1,29,29,16] parameter(0)
  w = f32[32,3,3,16] parameter(1)
  c = f32[1,15,15,32] convolution(x, w), window={size=3x3 stride=2x2 pad=0_2x1_1}, dim_labels=b01f_o01i->b01f
  e = f32[1,15,15,32] exponential(c)
  ROOT o = bf16[1,15,15,32] convert(e)
}
""", [_normal(21, 1, 29, 29, 16, scale=0.5), _normal(22, 32, 3, 3, 16, scale=0.1)], 8e-3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_gemm_takes_its_consumers(name):
    fe = driver.frontend(f"{name}.hlo", None, CompileOptions(), text=CASES[name][0])
    fused = driver.generate(fe, f"lib{name}", CompileOptions()).lowered.fusion
    entry = fused.module.entry_computation
    kernels = [entry.get(k) for k in fused.order]
    assert len(kernels) == 1 and kernels[0].opcode == Op.FUSION and kernels[0].attr("kind") == "kOutput"

"""Concatenation without copies (lower/concat_slices.py): producers of every kind (GEMM,
convolution, elementwise loop, reduce) write their part of the concatenation's buffer, a
contiguous range or (channels, as in DenseNet) rows a stride apart; the cases the rewrite
must refuse (a fused operand, a reduce as a strided piece, an operand used twice or also a
result, a parameter, the entry's result) keep the copy. Against XLA:CPU, with realistic
sizes; tests/lower/test_concat_slices.py checks which kernels were dropped.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest


def _arr(shape, scale=0.01, shift=0.0, seed=0):
    n = int(np.prod(shape))
    v = ((np.arange(n, dtype=np.int64) * (37 + seed) + 11 * seed) % 101).astype(np.float32)
    return (v * np.float32(scale) + np.float32(shift)).reshape(shape).astype(np.float32)


_ADD = """add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
"""

CASES = {
    # a DenseNet-like chain on the major dimension: c1 = [dot, exp], c2 = [c1, dot(tanh(c1))];
    # c1 is itself a piece of c2 (nested), every producer writes in place
    "concat_slices_chain": ("""HloModule concat_slices_chain
ENTRY main {
  x = f32[96,128] parameter(0)
  w = f32[128,128] parameter(1)
  y1 = f32[96,128] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e1 = f32[96,128] exponential(x)
  d1 = f32[96,128] dot(e1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c1 = f32[192,128] concatenate(y1, e1), dimensions={0}
  t1 = f32[192,128] tanh(c1)
  y2 = f32[192,128] dot(t1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c2 = f32[384,128] concatenate(c1, y2), dimensions={0}
  s = f32[384,128] sine(c2)
  y3 = f32[384,128] dot(c2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[384,128], f32[96,128], f32[384,128]) tuple(s, d1, y3)
}
""", [_arr((96, 128), 0.01, -0.5), _arr((128, 128), 0.001, -0.05, 1)], 1e-5),
    # a convolution and a reduce as producers, concatenated on dimension 1 behind a unit
    # dimension (still one contiguous range each); the result feeds another convolution
    "concat_slices_conv_reduce": ("HloModule concat_slices_conv_reduce\n" + _ADD + """
ENTRY main {
  x = f32[1,32,32,16] parameter(0)
  k = f32[3,3,16,16] parameter(1)
  v = f32[1,8,32,32,16] parameter(2)
  cv = f32[1,32,32,16] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  rd = f32[1,32,32,16] reduce(v, z), dimensions={1}, to_apply=add_f32
  cat = f32[1,64,32,16] concatenate(cv, rd), dimensions={1}
  k2 = f32[3,3,16,8] parameter(3)
  out = f32[1,64,32,8] convolution(cat, k2), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  m = f32[1,64,32,16] multiply(cat, cat)
  ROOT r = (f32[1,64,32,8], f32[1,64,32,16]) tuple(out, m)
}
""", [_arr((1, 32, 32, 16), 0.01, -0.5), _arr((3, 3, 16, 16), 0.002, -0.1, 1),
      _arr((1, 8, 32, 32, 16), 0.01, -0.5, 2), _arr((3, 3, 16, 8), 0.002, -0.1, 3)], 1e-4),
    # a DenseNet dense block: channel concatenations c_k = [c_(k-1), y_k] of 3x3 convolutions,
    # each c_(k-1) read by a BatchNorm-ReLU loop; one block buffer, c_0 (a max pool's output
    # is no strided writer) copied into it once, every y_k written in place, rows 64 apart
    "concat_slices_dense_block": ("""HloModule concat_slices_dense_block
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[1,30,30,16] parameter(0)
  s = f32[64] parameter(1)
  k1 = f32[3,3,16,16] parameter(2)
  k2 = f32[3,3,32,16] parameter(3)
  k3 = f32[3,3,48,16] parameter(4)
  kt = f32[1,1,64,24] parameter(5)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  p = f32[1,15,15,16] reduce-window(x, ninf), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max_f32
  r0_b = f32[1,15,15,16] broadcast(zero), dimensions={}
  r0 = f32[1,15,15,16] maximum(p, r0_b)
  y1 = f32[1,15,15,16] convolution(r0, k1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  c0 = f32[1,15,15,32] concatenate(p, y1), dimensions={3}
  sc0 = f32[32] slice(s), slice={[0:32]}
  b0_b = f32[1,15,15,32] broadcast(sc0), dimensions={3}
  b0 = f32[1,15,15,32] multiply(c0, b0_b)
  a0_b = f32[1,15,15,32] broadcast(zero), dimensions={}
  a0 = f32[1,15,15,32] maximum(b0, a0_b)
  y2 = f32[1,15,15,16] convolution(a0, k2), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  c1 = f32[1,15,15,48] concatenate(c0, y2), dimensions={3}
  sc1 = f32[48] slice(s), slice={[0:48]}
  b1_b = f32[1,15,15,48] broadcast(sc1), dimensions={3}
  b1 = f32[1,15,15,48] multiply(c1, b1_b)
  a1_b = f32[1,15,15,48] broadcast(zero), dimensions={}
  a1 = f32[1,15,15,48] maximum(b1, a1_b)
  y3 = f32[1,15,15,16] convolution(a1, k3), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  c2 = f32[1,15,15,64] concatenate(c1, y3), dimensions={3}
  b2_b = f32[1,15,15,64] broadcast(s), dimensions={3}
  b2 = f32[1,15,15,64] multiply(c2, b2_b)
  a2_b = f32[1,15,15,64] broadcast(zero), dimensions={}
  a2 = f32[1,15,15,64] maximum(b2, a2_b)
  ROOT t = f32[1,15,15,24] convolution(a2, kt), window={size=1x1}, dim_labels=b01f_01io->b01f
}
""", [_arr((1, 30, 30, 16), 0.01, -0.5), _arr((64,), 0.02, 0.5, 1), _arr((3, 3, 16, 16), 0.002, -0.1, 2),
      _arr((3, 3, 32, 16), 0.002, -0.1, 3), _arr((3, 3, 48, 16), 0.002, -0.1, 4),
      _arr((1, 1, 64, 24), 0.002, -0.1, 5)], 1e-4),
    # channel concatenation of a loop kernel's output (tanh, materialized: two readers) and
    # a convolution's, read by loop kernels and by a kept concatenation, which keeps its
    # copy since its other piece is a reduce (no strided writer); two images: rows of every
    # pixel of both
    "concat_slices_channels": ("HloModule concat_slices_channels\n" + _ADD.replace("add_f32", "sum_f32") + """
ENTRY main {
  x = f32[2,12,12,16] parameter(0)
  k = f32[3,3,16,8] parameter(1)
  v = f32[2,12,12,24,4] parameter(2)
  t = f32[2,12,12,16] tanh(x)
  y = f32[2,12,12,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  c = f32[2,12,12,24] concatenate(t, y), dimensions={3}
  z = f32[] constant(0)
  rd = f32[2,12,12,24] reduce(v, z), dimensions={4}, to_apply=sum_f32
  c3 = f32[2,12,12,48] concatenate(c, rd), dimensions={3}
  e = f32[2,12,12,48] exponential(c3)
  f = f32[2,12,12,48] sine(c3)
  g = f32[2,12,12,24] exponential(c)
  u = f32[2,12,12,16] sine(t)
  ROOT r = (f32[2,12,12,48], f32[2,12,12,48], f32[2,12,12,24], f32[2,12,12,16]) tuple(e, f, g, u)
}
""", [_arr((2, 12, 12, 16), 0.01, -0.5), _arr((3, 3, 16, 8), 0.002, -0.1, 1),
      _arr((2, 12, 12, 24, 4), 0.01, -0.5, 2)], 1e-5),
    # a fused operand (exp) makes the concatenation a fusion: the copy is kept
    "concat_slices_minor": ("""HloModule concat_slices_minor
ENTRY main {
  x = f32[1,28,28,32] parameter(0)
  k = f32[1,1,32,16] parameter(1)
  y = f32[1,28,28,16] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f
  e = f32[1,28,28,32] exponential(x)
  c = f32[1,28,28,48] concatenate(e, y), dimensions={3}
  k2 = f32[1,1,48,8] parameter(2)
  ROOT o = f32[1,28,28,8] convolution(c, k2), window={size=1x1}, dim_labels=b01f_01io->b01f
}
""", [_arr((1, 28, 28, 32), 0.01, -0.5), _arr((1, 1, 32, 16), 0.002, -0.1, 1),
                              _arr((1, 1, 48, 8), 0.002, -0.1, 2)], 1e-4),
    # an operand used twice in one concatenation, and one piece in two concatenations
    "concat_slices_twice": ("""HloModule concat_slices_twice
ENTRY main {
  x = f32[64,96] parameter(0)
  w = f32[96,96] parameter(1)
  a = f32[64,96] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,96] tanh(x)
  c1 = f32[128,96] concatenate(a, a), dimensions={0}
  c2 = f32[128,96] concatenate(b, a), dimensions={0}
  c3 = f32[128,96] concatenate(a, b), dimensions={0}
  d1 = f32[128,96] dot(c1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[128,96] dot(c2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[128,96] dot(c3, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[128,96], f32[128,96], f32[128,96]) tuple(d1, d2, d3)
}
""", [_arr((64, 96), 0.01, -0.3), _arr((96, 96), 0.002, -0.1, 1)], 1e-5),
    # a piece that is also a result of the entry, and a concatenation of a parameter
    "concat_slices_result_param": ("""HloModule concat_slices_result_param
ENTRY main {
  x = f32[64,96] parameter(0)
  w = f32[96,96] parameter(1)
  a = f32[64,96] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,96] tanh(x)
  c1 = f32[128,96] concatenate(a, b), dimensions={0}
  c2 = f32[128,96] concatenate(x, b), dimensions={0}
  d1 = f32[128,96] dot(c1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[128,96] dot(c2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[128,96], f32[128,96], f32[64,96]) tuple(d1, d2, a)
}
""", [_arr((64, 96), 0.01, -0.3), _arr((96, 96), 0.002, -0.1, 1)], 1e-5),
    # the concatenation is the entry's result: it is written by its own kernel (results are
    # never carved up), its pieces stay in the arena
    "concat_slices_root": ("""HloModule concat_slices_root
ENTRY main {
  x = f32[64,96] parameter(0)
  w = f32[96,96] parameter(1)
  a = f32[64,96] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,96] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT c = f32[128,96] concatenate(a, b), dimensions={0}
}
""", [_arr((64, 96), 0.01, -0.3), _arr((96, 96), 0.002, -0.1, 1)], 1e-5),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)

"""Concatenation without copies (lower/concat_slices.py): producers of every kind (GEMM,
convolution, elementwise loop, reduce) write their range of the concatenation's buffer;
the cases the rewrite must refuse (a strided minor-dimension concatenation, an operand
used twice or also a result, a parameter) keep the copy. Against XLA:CPU, with realistic
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
    # on the minor (channel) dimension the pieces are strided: the copy is kept
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

"""In-place reuse is only for kernels that read every buffer at the element they write.
A fused gather (or any index-mapping op) reads its table elsewhere: writing over that
table would change what later elements read. Against XLA:CPU; the kernel must not be
marked in place.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

_X = (np.arange(64, dtype=np.float32) * np.float32(0.05) - np.float32(1.5))
_I = ((np.arange(64, dtype=np.int32) * 37 + 5) % 64).reshape(64, 1)

CASES = {
    # t is materialized (two consumers), read for the last time by the kernel of r, which
    # has r's size and type: without the rule it would be written over while gathered from
    "inplace_gather_table": ("""HloModule inplace_gather_table
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[64] parameter(0)
  i = s32[64,1] parameter(1)
  t = f32[64] exponential(x)
  zero = f32[] constant(0)
  s = f32[] reduce(t, zero), dimensions={0}, to_apply=add_f32
  g = f32[64] gather(t, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  r = f32[64] multiply(g, t)
  r2 = f32[64] sqrt(r)
  r3 = f32[64] log(r)
  s1 = f32[1] reshape(s)
  ROOT out = (f32[64], f32[64], f32[1]) tuple(r2, r3, s1)
}
""", [_X, _I], 1e-6),
    # the same through a reversed read
    "inplace_reverse": ("""HloModule inplace_reverse
ENTRY main {
  x = f32[64] parameter(0)
  t = f32[64] exponential(x)
  u = f32[64] reverse(t), dimensions={0}
  r = f32[64] subtract(u, t)
  r2 = f32[64] multiply(r, r)
  r3 = f32[64] add(r, t)
  ROOT out = (f32[64], f32[64]) tuple(r2, r3)
}
""", [_X], 1e-6),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)

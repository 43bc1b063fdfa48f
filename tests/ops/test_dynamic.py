"""dynamic-slice and dynamic-update-slice against XLA:CPU: starts of several
integer types, negative and past-the-end starts (clamped), fused producers.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

BF16 = ml_dtypes.bfloat16


def _f32(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# name -> (HLO text, inputs in parameter order, rtol)
CASES = {
    "dynamic_slice_clamped": ("""HloModule dynamic_slice_clamped
ENTRY main {
  p = f32[6,5] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  a = f32[3,2] dynamic-slice(p, i, j), dynamic_slice_sizes={3,2}
  k = s64[] parameter(3)
  l = s64[] parameter(4)
  b = f32[3,2] dynamic-slice(p, k, l), dynamic_slice_sizes={3,2}
  ROOT t = (f32[3,2], f32[3,2]) tuple(a, b)
}
""", [_f32((6, 5), 0), np.int32(-3), np.int32(2), np.int64(2 ** 63 - 1), np.int64(-5)], 0.0),

    "dynamic_slice_index_types_fused": ("""HloModule dynamic_slice_index_types_fused
ENTRY main {
  p = f32[8,4] parameter(0)
  u = u8[] parameter(1)
  s = u8[] parameter(2)
  e = f32[8,4] exponential(p)
  a = f32[2,4] dynamic-slice(e, u, s), dynamic_slice_sizes={2,4}
  ROOT n = f32[2,4] negate(a)
}
""", [_f32((8, 4), 1), np.uint8(255), np.uint8(1)], 1e-6),

    "dynamic_update_slice_clamped": ("""HloModule dynamic_update_slice_clamped
ENTRY main {
  p = f32[6,5] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  a = f32[6,5] dynamic-update-slice(p, u, i, j)
  k = s32[] parameter(4)
  b = f32[6,5] dynamic-update-slice(p, u, k, k)
  ROOT t = (f32[6,5], f32[6,5]) tuple(a, b)
}
""", [_f32((6, 5), 2), _f32((2, 3), 3), np.int32(5), np.int32(-1), np.int32(1)], 0.0),

    "dynamic_update_slice_bf16_u32": ("""HloModule dynamic_update_slice_bf16_u32
ENTRY main {
  p = bf16[4,4] parameter(0)
  u = bf16[1,4] parameter(1)
  i = u32[] parameter(2)
  z = u32[] parameter(3)
  ROOT a = bf16[4,4] dynamic-update-slice(p, u, i, z)
}
""", [_f32((4, 4), 4).astype(BF16), _f32((1, 4), 5).astype(BF16), np.uint32(4000000000), np.uint32(0)], 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)

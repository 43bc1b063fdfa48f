"""gather and scatter against XLA:CPU: out-of-range starts (negative, INT_MAX,
INT_MIN, unsigned maxima) of every index type, index_vector_dim in every
position, batching dimensions, duplicate scatter indices applied in order,
windows partly out of bounds, variadic scatter, fused producers and consumers.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

BF16 = ml_dtypes.bfloat16

I32 = np.iinfo(np.int32)
I64 = np.iinfo(np.int64)


def _f32(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# name -> (HLO text, inputs in parameter order, rtol)
CASES = {
    "gather_take_s32": ("""HloModule gather_take_s32
ENTRY main {
  p = f32[5,3] parameter(0)
  i = s32[7] parameter(1)
  ROOT g = f32[7,3] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
}
""", [_f32((5, 3), 0), np.array([0, 4, -1, 5, I32.max, I32.min, 2], np.int32)], 0.0),

    # every index type, with the extremes of its range; u8 indexes a dimension larger than 255
    "gather_index_types": ("""HloModule gather_index_types
ENTRY main {
  p = f32[5,2] parameter(0)
  big = f32[300,2] parameter(1)
  a = u8[4] parameter(2)
  b = s8[4] parameter(3)
  c = u64[4] parameter(4)
  d = s64[4] parameter(5)
  e = u32[4] parameter(6)
  f = s16[4] parameter(7)
  h = u16[4] parameter(8)
  ga = f32[4,2] gather(big, a), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
  gb = f32[4,2] gather(p, b), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
  gc = f32[4,2] gather(p, c), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
  gd = f32[4,2] gather(p, d), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
  ge = f32[4,2] gather(p, e), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
  gf = f32[4,2] gather(big, f), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
  gh = f32[4,2] gather(p, h), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
  ROOT t = (f32[4,2], f32[4,2], f32[4,2], f32[4,2], f32[4,2], f32[4,2], f32[4,2]) tuple(ga, gb, gc, gd, ge, gf, gh)
}
""", [_f32((5, 2), 1), _f32((300, 2), 2),
      np.array([0, 255, 7, 128], np.uint8),
      np.array([-128, 127, -1, 3], np.int8),
      np.array([0, 3, 2 ** 63, 2 ** 64 - 1], np.uint64),
      np.array([I64.min, -1, 4, I64.max], np.int64),
      np.array([0, 2 ** 32 - 1, 2, 2 ** 31], np.uint32),
      np.array([-32768, 299, 32767, 150], np.int16),
      np.array([65535, 1, 4, 5], np.uint16)], 0.0),

    # 2-D slices, start_index_map in reverse order, starts clamped to dim - slice size
    "gather_window_2d": ("""HloModule gather_window_2d
ENTRY main {
  p = f32[6,7] parameter(0)
  i = s32[4,2] parameter(1)
  ROOT g = f32[4,2,3] gather(p, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={2,3}
}
""", [_f32((6, 7), 3), np.array([[0, 0], [6, 5], [-3, 2], [4, I32.max]], np.int32)], 0.0),

    # index vector along dimension 0; offset dimension before the batch dimension
    "gather_vector_dim0": ("""HloModule gather_vector_dim0
ENTRY main {
  p = f32[5,6] parameter(0)
  i = s32[2,4] parameter(1)
  ROOT g = f32[2,4] gather(p, i), offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,2}
}
""", [_f32((5, 6), 4), np.array([[0, 4, -2, 9], [5, 0, 3, -7]], np.int32)], 0.0),

    "gather_batching_dims": ("""HloModule gather_batching_dims
ENTRY main {
  p = f32[3,5,4] parameter(0)
  i = s32[3,2] parameter(1)
  ROOT g = f32[3,2,4] gather(p, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}
}
""", [_f32((3, 5, 4), 5), np.array([[0, 4], [9, -1], [2, 3]], np.int32)], 0.0),

    # computed indices and an elementwise consumer fuse with the gather; bf16 operand
    "gather_fused_bf16": ("""HloModule gather_fused_bf16
ENTRY main {
  p = bf16[6,4] parameter(0)
  i = s32[3] parameter(1)
  one = s32[] constant(1)
  ones = s32[3] broadcast(one), dimensions={}
  j = s32[3] add(i, ones)
  r = s32[3,1] reshape(j)
  g = bf16[3,4] gather(p, r), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  ROOT m = bf16[3,4] multiply(g, g)
}
""", [_f32((6, 4), 6).astype(BF16), np.array([-5, 2, 5], np.int32)], 0.0),

    # duplicates accumulate in order; out-of-range (incl. INT_MIN/INT_MAX) updates are skipped
    "scatter_add_dups": ("""HloModule scatter_add_dups
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[8] parameter(0)
  i = s32[9,1] parameter(1)
  u = f32[9] parameter(2)
  ROOT s = f32[8] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
""", [_f32((8,), 7), np.array([[-1], [8], [I32.max], [I32.min], [3], [3], [0], [7], [3]], np.int32),
      np.array([1, 2, 3, 4, 0.5, 0.25, 8, 9, 1e-3], np.float32)], 1e-6),

    # overwrite: with duplicate indices the last update wins (serial order)
    "scatter_overwrite_dups": ("""HloModule scatter_overwrite_dups
second {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY main {
  x = f32[6] parameter(0)
  i = s32[5] parameter(1)
  u = f32[5] parameter(2)
  ROOT s = f32[6] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=second
}
""", [_f32((6,), 8), np.array([2, 2, 5, 6, 2], np.int32), np.array([10, 20, 30, 40, 50], np.float32)], 0.0),

    # 2-D update windows: a window partly out of bounds is skipped as a whole
    "scatter_window_2d": ("""HloModule scatter_window_2d
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[5,6] parameter(0)
  i = s32[5,2] parameter(1)
  u = f32[5,2,3] parameter(2)
  ROOT s = f32[5,6] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=1, to_apply=add
}
""", [_f32((5, 6), 9), np.array([[0, 0], [3, 3], [4, 3], [-1, 0], [1, 4]], np.int32), _f32((5, 2, 3), 10)],
        1e-6),

    "scatter_index_types": ("""HloModule scatter_index_types
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  big = f32[300] parameter(1)
  ia = u8[4] parameter(2)
  ib = u64[4] parameter(3)
  ic = s8[4] parameter(4)
  id = u32[4] parameter(5)
  ie = s64[4] parameter(6)
  u = f32[4] parameter(7)
  sa = f32[300] scatter(big, ia, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  sb = f32[4] scatter(x, ib, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  sc = f32[4] scatter(x, ic, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  sd = f32[4] scatter(x, id, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  se = f32[4] scatter(x, ie, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT t = (f32[300], f32[4], f32[4], f32[4], f32[4]) tuple(sa, sb, sc, sd, se)
}
""", [_f32((4,), 11), _f32((300,), 12),
      np.array([255, 0, 128, 3], np.uint8), np.array([2 ** 64 - 1, 2 ** 63, 3, 1], np.uint64),
      np.array([-128, 127, -1, 2], np.int8), np.array([2 ** 32 - 1, 2 ** 31, 0, 3], np.uint32),
      np.array([I64.min, I64.max, 2, 2], np.int64), np.array([1, 2, 4, 8], np.float32)], 1e-6),

    # index vector along dimension 0; scatter dimension after the window dimension in the updates
    "scatter_vector_dim0": ("""HloModule scatter_vector_dim0
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] multiply(a, b)
}
ENTRY main {
  x = f32[4,5] parameter(0)
  i = s32[2,3] parameter(1)
  u = f32[2,3] parameter(2)
  ROOT s = f32[4,5] scatter(x, i, u), update_window_dims={0}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=mul
}
""", [_f32((4, 5), 13), np.array([[0, 3, 1], [0, 4, 2]], np.int32), _f32((2, 3), 14)], 1e-6),

    # two operands combined by one computation returning a tuple (keep the larger key's payload)
    "scatter_variadic": ("""HloModule scatter_variadic
pick {
  k0 = f32[] parameter(0)
  v0 = s32[] parameter(1)
  k1 = f32[] parameter(2)
  v1 = s32[] parameter(3)
  gt = pred[] compare(k1, k0), direction=GT
  kk = f32[] select(gt, k1, k0)
  vv = s32[] select(gt, v1, v0)
  ROOT t = (f32[], s32[]) tuple(kk, vv)
}
ENTRY main {
  k = f32[5] parameter(0)
  v = s32[5] parameter(1)
  i = s32[6] parameter(2)
  uk = f32[6] parameter(3)
  uv = s32[6] parameter(4)
  ROOT s = (f32[5], s32[5]) scatter(k, v, i, uk, uv), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pick
}
""", [np.zeros(5, np.float32), np.full(5, -1, np.int32), np.array([1, 1, 3, 9, -2, 1], np.int32),
      np.array([0.5, 2.0, -1.0, 7.0, 7.0, 1.0], np.float32), np.arange(10, 16, dtype=np.int32)], 0.0),

    "scatter_batching_dims": ("""HloModule scatter_batching_dims
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
ENTRY main {
  x = s32[3,5] parameter(0)
  i = s32[3,2] parameter(1)
  u = s32[3,2] parameter(2)
  ROOT s = s32[3,5] scatter(x, i, u), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=add
}
""", [np.zeros((3, 5), np.int32), np.array([[0, 0], [4, 9], [-1, 2]], np.int32),
      np.array([[1, 2], [3, 4], [5, 6]], np.int32)], 0.0),

    # fused producers of operand and updates; bf16 combiner rounds per update
    "scatter_fused_bf16": ("""HloModule scatter_fused_bf16
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY main {
  z = bf16[] constant(0.1)
  x = bf16[4,3] broadcast(z), dimensions={}
  i = s32[5,1] parameter(0)
  u = bf16[5,3] parameter(1)
  n = bf16[5,3] negate(u)
  ROOT s = bf16[4,3] scatter(x, i, n), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
""", [np.array([[1], [1], [3], [4], [1]], np.int32), (_f32((5, 3), 15) * 3).astype(BF16)], 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


BAD = {
    "slice_sizes has 1 entries": """HloModule bad
ENTRY main {
  p = f32[5,3] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = f32[2,3] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
}
""",
    "gather indices must have an integer element type": """HloModule bad
ENTRY main {
  p = f32[5,3] parameter(0)
  i = f32[2] parameter(1)
  ROOT g = f32[2,3] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
}
""",
    "shape mismatch": """HloModule bad
ENTRY main {
  p = f32[5,3] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = f32[2,2] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
}
""",
    "do not match the indices": """HloModule bad
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  x = f32[8] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[4] parameter(2)
  ROOT s = f32[8] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
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

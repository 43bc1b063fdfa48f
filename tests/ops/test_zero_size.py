"""Arrays with a zero dimension, through every kind of op, against XLA:CPU: elementwise and
shape ops on empty arrays, products and sums over an empty dimension (zeros, the init
value), padding an empty array, concatenating with one, sorting and gathering nothing,
selects, clamps, reversals, scattering no updates, empty dynamic slices and updates, and a
convolution over an empty batch.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

_E05 = np.zeros((0, 5), np.float32)
_A30 = np.zeros((3, 0), np.float32)
_B04 = np.zeros((0, 4), np.float32)
_X35 = np.arange(15, dtype=np.float32).reshape(3, 5) - 7

ADD = """add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
}
"""

CASES = {
    "zero_size_elementwise_shape": (f"""HloModule zero_size_elementwise_shape
ENTRY main {{
  x = f32[0,5] parameter(0)
  n = f32[0,5] negate(x)
  e = f32[0,5] exponential(n)
  t = f32[5,0] transpose(e), dimensions={{1,0}}
  r = f32[0] reshape(x)
  b = f32[2,0,5] broadcast(x), dimensions={{1,2}}
  c = s32[0,5] convert(x)
  i = s32[0] iota(), iota_dimension=0
  s = f32[0,2] slice(x), slice={{[0:0], [1:3]}}
  ROOT out = (f32[5,0], f32[0], f32[2,0,5], s32[0,5], s32[0], f32[0,2]) tuple(t, r, b, c, i, s)
}}
""", [_E05], 0.0),
    "zero_size_reductions": (f"""HloModule zero_size_reductions
{ADD}
ENTRY main {{
  x = f32[0,5] parameter(0)
  a = f32[3,0] parameter(1)
  b = f32[0,4] parameter(2)
  seven = f32[] constant(7)
  cols = f32[5] reduce(x, seven), dimensions={{0}}, to_apply=add
  rows = f32[0] reduce(x, seven), dimensions={{1}}, to_apply=add
  d = f32[3,4] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  e = f32[0,0] dot(x, x), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}
  ROOT out = (f32[5], f32[0], f32[3,4], f32[0,0]) tuple(cols, rows, d, e)
}}
""", [_E05, _A30, _B04], 0.0),
    "zero_size_pad_concat_sort": (f"""HloModule zero_size_pad_concat_sort
lt {{
  u = f32[] parameter(0)
  v = f32[] parameter(1)
  ROOT w = pred[] compare(u, v), direction=LT
}}
ENTRY main {{
  x = f32[0,5] parameter(0)
  y = f32[3,5] parameter(1)
  one = f32[] constant(1.5)
  p = f32[2,7] pad(x, one), padding=1_1x1_1
  c = f32[3,5] concatenate(x, y), dimensions={{0}}
  s = f32[0,5] sort(x), dimensions={{1}}, to_apply=lt
  ROOT out = (f32[2,7], f32[3,5], f32[0,5]) tuple(p, c, s)
}}
""", [_E05, _X35], 0.0),
    "zero_size_gather_window": (f"""HloModule zero_size_gather_window
{ADD}
ENTRY main {{
  y = f32[3,5] parameter(0)
  idx = s32[0,1] parameter(1)
  g = f32[0,5] gather(y, idx), offset_dims={{1}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,5}}
  x = f32[0,5] parameter(2)
  zero = f32[] constant(0)
  w = f32[0,4] reduce-window(x, zero), window={{size=1x2}}, to_apply=add
  ROOT out = (f32[0,5], f32[0,4]) tuple(g, w)
}}
""", [_X35, np.zeros((0, 1), np.int32), _E05], 0.0),
    "zero_size_select_scatter_conv": (f"""HloModule zero_size_select_scatter_conv
{ADD}
ENTRY main {{
  x = f32[0,5] parameter(0)
  y = f32[3,5] parameter(1)
  idx = s32[0,1] parameter(2)
  upd = f32[0,5] parameter(3)
  img = f32[0,4,4,2] parameter(4)
  ker = f32[3,3,2,3] parameter(5)
  lt = pred[0,5] compare(x, x), direction=LT
  sel = f32[0,5] select(lt, x, x)
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  cl = f32[0,5] clamp(lo, sel, hi)
  rv = f32[0,5] reverse(cl), dimensions={{0,1}}
  sc = f32[3,5] scatter(y, idx, upd), update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add
  one = s32[] constant(1)
  zero = s32[] constant(0)
  ds = f32[0,2] dynamic-slice(x, zero, one), dynamic_slice_sizes={{0,2}}
  e = f32[0,5] slice(y), slice={{[1:1], [0:5]}}
  dus = f32[3,5] dynamic-update-slice(y, e, one, zero)
  cv = f32[0,4,4,3] convolution(img, ker), window={{size=3x3 pad=1_1x1_1}}, dim_labels=b01f_01io->b01f
  ROOT out = (f32[0,5], f32[3,5], f32[0,2], f32[3,5], f32[0,4,4,3]) tuple(rv, sc, ds, dus, cv)
}}
""", [_E05, _X35, np.zeros((0, 1), np.int32), _E05, np.zeros((0, 4, 4, 2), np.float32),
      np.arange(54, dtype=np.float32).reshape(3, 3, 2, 3) / 8], 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)

"""Large reductions with few results run in chunks that threads share (lower/split_reduce.py),
against XLA:CPU: a full sum, row maxima, a sum over two trailing dimensions. The
inputs are multiples of 1/8 small enough that every order of summation is exact, so the
results are compared bit for bit.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

N = 1 << 18


def _eighths(n: int, salt: int) -> np.ndarray:
    i = np.arange(n, dtype=np.int64)
    return (((i * 7 + salt) % 23 - 11) / 8).astype(np.float32)


_ROWS = _eighths(4 * N, 3).reshape(4, N)
_ROWS[2, 12345] = 3.5  # one row's maximum far from the others
_ROWS[3, N - 1] = 2.25

CASES = {
    "reduce_split_sum": (f"""HloModule reduce_split_sum
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY main {{
  x = f32[{N}] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={{0}}, to_apply=add
}}
""", [_eighths(N, 0)], 0.0),
    "reduce_split_row_max": (f"""HloModule reduce_split_row_max
mx {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}}
ENTRY main {{
  x = f32[4,{N}] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[4] reduce(x, z), dimensions={{1}}, to_apply=mx
}}
""", [_ROWS], 0.0),
    "reduce_split_two_dims": (f"""HloModule reduce_split_two_dims
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY main {{
  x = f32[2,8,{N // 8}] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(x, z), dimensions={{1,2}}, to_apply=add
}}
""", [_eighths(2 * N, 5).reshape(2, 8, N // 8)], 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)

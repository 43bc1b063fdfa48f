"""Bounded dynamic dimensions against XLA:CPU: set-dimension-size with several real sizes
(0, 1, a middle one, bound - 1, the bound) feeding elementwise ops, broadcast, transpose, a
slice of the static parts, reductions over and across the dynamic dimension (XLA masks the
padding with the init value), dots contracting or batching over it, and get-dimension-size.
Bounds of a few thousand elements. A size outside [0, bound] (undefined in XLA, which reads
past the buffer) is clamped by aotc, so it gives XLA's result at the clamped size. Other ops
receiving a dynamic dimension are located errors naming the op.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

_ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
"""

B = 3000  # the bound of the dynamic dimension
SIZES = (0, 1, 1234, B - 1, B)

ELEMENTWISE = f"""HloModule dyn_elementwise
{_ADD}
ENTRY main {{
  x = f32[4,{B}] parameter(0)
  y = f32[4,{B}] parameter(1)
  n = s32[] parameter(2)
  d = f32[4,<={B}] set-dimension-size(x, n), dimensions={{1}}
  m = f32[4,<={B}] multiply(d, y)
  c = pred[4,<={B}] compare(d, y), direction=GT
  s = f32[4,<={B}] select(c, m, d)
  h = f16[4,<={B}] convert(s)
  e = f32[4,<={B}] convert(h)
  z = f32[] constant(0)
  ninf = f32[] constant(-inf)
  r = f32[4] reduce(e, z), dimensions={{1}}, to_apply=add
  mx = f32[4] reduce(s, ninf), dimensions={{1}}, to_apply=max
  all = f32[] reduce(m, z), dimensions={{0,1}}, to_apply=add
  g = s32[] get-dimension-size(e), dimensions={{1}}
  g0 = s32[] get-dimension-size(e), dimensions={{0}}
  ROOT t = (f32[4], f32[4], f32[], s32[], s32[]) tuple(r, mx, all, g, g0)
}}
"""

BROADCAST = f"""HloModule dyn_broadcast
{_ADD}
ENTRY main {{
  v = f32[{B}] parameter(0)
  w = f32[8,{B}] parameter(1)
  n = s32[] parameter(2)
  dv = f32[<={B}] set-dimension-size(v, n), dimensions={{0}}
  b = f32[<={B},8] broadcast(dv), dimensions={{0}}
  t = f32[8,<={B}] transpose(b), dimensions={{1,0}}
  m = f32[8,<={B}] multiply(t, w)
  sl = f32[5,<={B}] slice(m), slice={{[2:7], [0:{B}]}}
  z = f32[] constant(0)
  r = f32[5] reduce(sl, z), dimensions={{1}}, to_apply=add
  out = f32[8] reduce(b, z), dimensions={{0}}, to_apply=add
  ROOT res = (f32[5], f32[8]) tuple(r, out)
}}
"""

DOT = """HloModule dyn_dot
ENTRY main {
  x = f32[16,1024] parameter(0)
  y = f32[1024,24] parameter(1)
  n = s32[] parameter(2)
  dx = f32[16,<=1024] set-dimension-size(x, n), dimensions={1}
  dy = f32[<=1024,24] set-dimension-size(y, n), dimensions={0}
  both = f32[16,24] dot(dx, dy), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  one = f32[16,24] dot(dx, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[16,24], f32[16,24]) tuple(both, one)
}
"""

BATCH = f"""HloModule dyn_dot_batch
{_ADD}
ENTRY main {{
  x = f32[300,8,16] parameter(0)
  y = f32[300,16,4] parameter(1)
  n = s32[] parameter(2)
  dx = f32[<=300,8,16] set-dimension-size(x, n), dimensions={{0}}
  p = f32[<=300,8,4] dot(dx, y), lhs_batch_dims={{0}}, lhs_contracting_dims={{2}}, rhs_batch_dims={{0}}, rhs_contracting_dims={{1}}
  z = f32[] constant(0)
  ROOT r = f32[8,4] reduce(p, z), dimensions={{0}}, to_apply=add
}}
"""


class _rng:
    """Random values in steps of 1/8 (the fixtures compress well), some of them large."""

    def __init__(self, seed):
        self.g = np.random.default_rng(seed)

    def standard_normal(self, shape):
        return np.round(self.g.standard_normal(shape) * 8) / 8


def _ew(n):
    return [_rng(1).standard_normal((4, B)).astype(np.float32), _rng(2).standard_normal((4, B)).astype(np.float32),
            np.int32(n)]


def _bc(n):
    return [_rng(3).standard_normal(B).astype(np.float32), _rng(4).standard_normal((8, B)).astype(np.float32),
            np.int32(n)]


def _dot(n):
    return [_rng(5).standard_normal((16, 1024)).astype(np.float32),
            _rng(6).standard_normal((1024, 24)).astype(np.float32), np.int32(n)]


def _batch(n):
    return [_rng(7).standard_normal((300, 8, 16)).astype(np.float32),
            _rng(8).standard_normal((300, 16, 4)).astype(np.float32), np.int32(n)]


CASES = {}
for _n in SIZES:
    CASES[f"dynshape_elementwise_{_n}"] = (ELEMENTWISE, _ew(_n), 0.0)
    CASES[f"dynshape_broadcast_{_n}"] = (BROADCAST, _bc(_n), 0.0)
for _n in (0, 1, 1000, 1024):
    CASES[f"dynshape_dot_{_n}"] = (DOT, _dot(_n), 1e-5)
for _n in (0, 1, 173, 300):
    CASES[f"dynshape_dot_batch_{_n}"] = (BATCH, _batch(_n), 1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)

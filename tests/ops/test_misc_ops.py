"""Ops no other fixture exercises, against XLA:CPU: bitcast-convert between types of one
width (float bits as integers and back, halves as their bits), opt-barrier, and map (a
scalar computation with a constant, a nested call and a nested map, applied to [2,3,4]).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

_F = np.array([1.0, -2.5, 0.0, -0.0, 3.4e38, 1e-40, np.inf, -np.inf, 0.1, 7.0], np.float32)
_S = np.array([0, 1, -1, 0x7F800000, 0x7FC00000, -8388608, 1065353216, 123456789, -2, 42], np.int32)
_H = np.array([0, 1, 0x3F80, 0x7F80, 0xFF80, 0x8000, 0x4049, 0x7FC0, 0x0001, 0xBF80], np.uint16)

_RNG = np.random.default_rng(5)
_RE = np.concatenate([_RNG.standard_normal(60) * 10, np.exp(_RNG.uniform(-100, 88, 60)),
                      [0, -0.0, np.inf, np.nan, 1e-40, 3e38, 0, np.inf, np.nan, -np.inf, 2.0, -5.0]])
_IM = np.concatenate([_RNG.standard_normal(60) * 10, np.exp(_RNG.uniform(-100, 88, 60)) * -1,
                      [0, 0, np.nan, np.inf, 1e-40, 3e38, -0.0, 1, 0, np.nan, np.inf, -np.inf]])

CASES = {
    "complex_abs_sign": ("""HloModule complex_abs_sign
ENTRY main {
  x = c64[132] parameter(0)
  y = c128[132] parameter(1)
  a = f32[132] abs(x)
  b = f64[132] abs(y)
  c = c64[132] sign(x)
  d = c128[132] sign(y)
  ROOT t = (f32[132], f64[132], c64[132], c128[132]) tuple(a, b, c, d)
}
""", [(_RE + 1j * _IM).astype(np.complex64), (_RE * 1e250 + 1j * _IM).astype(np.complex128)], 0.0),
    "bitcast_convert_f32_s32": ("""HloModule bitcast_convert_f32_s32
ENTRY main {
  x = f32[10] parameter(0)
  n = s32[10] parameter(1)
  b = s32[10] bitcast-convert(x)
  one = s32[] constant(1)
  ones = s32[10] broadcast(one), dimensions={}
  c = s32[10] add(b, ones)
  f = f32[10] bitcast-convert(n)
  ROOT t = (s32[10], f32[10]) tuple(c, f)
}
""", [_F, _S], 0.0),
    "bitcast_convert_bf16_u16": ("""HloModule bitcast_convert_bf16_u16
ENTRY main {
  h = u16[10] parameter(0)
  b = bf16[10] bitcast-convert(h)
  w = f32[10] convert(b)
  u = u16[10] bitcast-convert(b)
  ROOT t = (f32[10], u16[10]) tuple(w, u)
}
""", [_H], 0.0),
    "opt_barrier": ("""HloModule opt_barrier
ENTRY main {
  x = f32[10] parameter(0)
  y = f32[10] exponential(x)
  t = (f32[10], f32[10]) tuple(x, y)
  b = (f32[10], f32[10]) opt-barrier(t)
  p = f32[10] get-tuple-element(b), index=0
  q = f32[10] get-tuple-element(b), index=1
  ROOT r = f32[10] add(p, q)
}
""", [np.linspace(-2, 2, 10, dtype=np.float32)], 1e-6),
    "map_nested": ("""HloModule map_nested
half {
  h = f32[] parameter(0)
  c = f32[] constant(0.5)
  ROOT hm = f32[] multiply(h, c)
}
square_plus {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] multiply(a, a)
  t = f32[] call(s), to_apply=half
  ROOT r = f32[] add(t, b)
}
pick {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  k = pred[] compare(x, y), direction=GT
  inner = f32[] map(x), dimensions={}, to_apply=half
  ROOT v = f32[] select(k, inner, y)
}
ENTRY main {
  p = f32[2,3,4] parameter(0)
  q = f32[2,3,4] parameter(1)
  m = f32[2,3,4] map(p, q), dimensions={0,1,2}, to_apply=square_plus
  ROOT n = f32[2,3,4] map(m, q), dimensions={0,1,2}, to_apply=pick
}
""", [np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4),
      np.cos(np.arange(24, dtype=np.float32)).reshape(2, 3, 4)], 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)

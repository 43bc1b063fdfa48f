"""Selects on f32 comparisons in vector loops (lane masks, kernel/vectorize.py) give XLA's
bits: every ordered direction, and/or of masks, NaN (every ordered comparison false) and
signed zeros in the data, a vector body plus a scalar tail (1003 elements; 20 for the
8-lane vocabulary), the erf-based
GELU as JAX exports it (jax.nn.gelu(approximate=False)) and a GEMM epilogue built of
selects.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

N = 1003


def _data(seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(N).astype(np.float32) * 2
    x[::17] = np.nan
    x[5::31] = 0.0
    x[7::37] = -0.0
    x[11::41] = 1.0
    return x


def _cmp_select(direction: str) -> str:
    return f"""HloModule simd_select_{direction.lower()}
ENTRY main {{
  x = f32[{N}] parameter(0)
  y = f32[{N}] parameter(1)
  one = f32[] constant(1)
  ones = f32[{N}] broadcast(one), dimensions={{}}
  c = pred[{N}] compare(x, y), direction={direction}
  d = pred[{N}] compare(x, ones), direction=LT
  e = pred[{N}] or(c, d)
  f = pred[{N}] and(c, d)
  m = f32[{N}] multiply(x, y)
  s = f32[{N}] select(e, m, y)
  t = f32[{N}] select(f, x, s)
  ROOT r = f32[{N}] add(s, t)
}}
"""


CASES = {f"simd_select_{d.lower()}": (_cmp_select(d), [_data(1), _data(2)], 0.0)
         for d in ("LT", "LE", "GT", "GE", "EQ")}
# a short loop (20 lanes: the 8-lane vocabulary and its mask type, then a tail)
CASES["simd_select_short"] = (_cmp_select("LE").replace(f"[{N}]", "[20]").replace("simd_select_le", "simd_select_short"),
                              [_data(6)[:20], _data(7)[:20]], 0.0)

# GELU(x) = x/2 * erfc(-x/sqrt 2), erfc as XLA's decomposition in JAX's export: two
# polynomial branches chosen by |x| < 1 and |x| < 2, exp, an underflow clamp
_GELU_BODY = """
  h = f32[R] multiply(x, half)
  nx = f32[R] negate(x)
  z = f32[R] multiply(nx, rs2)
  az = f32[R] abs(z)
  small = pred[R] compare(az, one), direction=LT
  z2 = f32[R] multiply(z, z)
  p1 = f32[R] multiply(z2, k1)
  p2 = f32[R] add(p1, k2)
  p3 = f32[R] multiply(p2, z2)
  p4 = f32[R] add(p3, k3)
  nz = f32[R] negate(z)
  p5 = f32[R] multiply(nz, p4)
  near = f32[R] add(p5, one)
  nz2 = f32[R] negate(z2)
  under = pred[R] compare(nz2, lim), direction=LT
  ex = f32[R] exponential(nz2)
  inv = f32[R] divide(one, az)
  ez = f32[R] multiply(ex, inv)
  mid = pred[R] compare(az, two), direction=LT
  q = f32[R] divide(one, z2)
  qa = f32[R] multiply(q, k4)
  qb = f32[R] add(qa, k5)
  qc = f32[R] multiply(q, k6)
  qd = f32[R] add(qc, k7)
  pick = f32[R] select(mid, qb, qd)
  far0 = f32[R] multiply(ez, pick)
  far1 = f32[R] select(under, zero, far0)
  neg = pred[R] compare(z, zero), direction=LT
  far2 = f32[R] subtract(two, far1)
  far = f32[R] select(neg, far2, far1)
  erfc = f32[R] select(small, near, far)
  g = f32[R] multiply(h, erfc)
"""


def _consts(shape: str) -> str:
    vals = {"half": 0.5, "rs2": 0.70710677, "one": 1.0, "two": 2.0, "zero": 0.0, "lim": -88.72284,
            "k1": 7.8538615e-05, "k2": -0.00080101937, "k3": 1.1283791, "k4": 0.0232682, "k5": -0.13870394,
            "k6": -10.477664, "k7": 12.9772}
    return "".join(f"  {k}_s = f32[] constant({v})\n  {k} = {shape} broadcast({k}_s), dimensions={{}}\n"
                   for k, v in vals.items())


CASES["simd_gelu_erf"] = (f"HloModule simd_gelu_erf\nENTRY main {{\n  x = f32[{N}] parameter(0)\n"
                          + _consts(f"f32[{N}]") + _GELU_BODY.replace("R", str(N)) + "  ROOT y = f32[%d] copy(g)\n}\n" % N,
                          [_data(3)], 0.0)

# the same selects as a GEMM's epilogue: applied to each block of the product in place
CASES["simd_gemm_gelu_epilogue"] = (
    "HloModule simd_gemm_gelu_epilogue\nENTRY main {\n  a = f32[64,96] parameter(0)\n  w = f32[96,256] parameter(1)\n"
    "  x = f32[64,256] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    + _consts("f32[64,256]") + _GELU_BODY.replace("R", "64,256") + "  ROOT y = f32[64,256] copy(g)\n}\n",
    [np.random.default_rng(4).standard_normal((64, 96)).astype(np.float32),
     (np.random.default_rng(5).standard_normal((96, 256)) / 8).astype(np.float32)], 2e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)

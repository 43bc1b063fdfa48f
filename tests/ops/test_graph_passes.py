"""Graph passes against XLA:CPU: modules where XLA's algebraic rewrites, constant
folding (BatchNorm arithmetic on weight constants) or CSE change what is
compiled; aotc must give XLA's bits. Cases avoid a multiply feeding an add: XLA:CPU
contracts those into an FMA, which is the emitter's business, not these passes'.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest


def _x(shape, seed, dt=np.float32):
    return (np.random.default_rng(seed).standard_normal(shape) * 10).astype(dt)


def _m(name: str, body: str) -> str:
    return f"HloModule {name}\nENTRY main {{\n{body}\n}}\n"


def _div_scalar(name: str, t: str, dt) -> tuple:
    return (_m(name, f"""  x = {t}[64] parameter(0)
  c = {t}[] constant(3)
  b = {t}[64] broadcast(c), dimensions={{}}
  ROOT d = {t}[64] divide(x, b)"""), [_x((64,), 1, dt)], 0.0)


_BN_CONSTS = """  mean = f32[4] constant({0.5, -1.25, 3, 0.1})
  var = f32[4] constant({1.5, 0.3, 7, 0.02})
  gamma = f32[4] constant({0.9, 1.1, -0.7, 2.3})
  beta = f32[4] constant({0.01, -0.2, 0.3, 1.7})
  eps = f32[] constant(0.001)
  epsb = f32[4] broadcast(eps), dimensions={}
  ve = f32[4] add(var, epsb)
  meanb = f32[3,5,4] broadcast(mean), dimensions={2}
  xc = f32[3,5,4] subtract(x, meanb)
  betab = f32[3,5,4] broadcast(beta), dimensions={2}"""

# name -> (HLO text, inputs in parameter order, rtol)
CASES = {
    "gp_div_scalar_f32": _div_scalar("gp_div_scalar_f32", "f32", np.float32),
    "gp_div_scalar_f64": _div_scalar("gp_div_scalar_f64", "f64", np.float64),
    "gp_div_scalar_bf16": _div_scalar("gp_div_scalar_bf16", "bf16", ml_dtypes.bfloat16),
    "gp_div_vector_constant": (_m("gp_div_vector_constant", """  x = f32[6,4] parameter(0)
  c = f32[4] constant({3, 7, 0.1, 11})
  b = f32[6,4] broadcast(c), dimensions={1}
  ROOT d = f32[6,4] divide(x, b)"""), [_x((6, 4), 2)], 0.0),
    "gp_div_by_broadcast_param": (_m("gp_div_by_broadcast_param", """  x = f32[6,4] parameter(0)
  y = f32[4] parameter(1)
  b = f32[6,4] broadcast(y), dimensions={1}
  ROOT d = f32[6,4] divide(x, b)"""), [_x((6, 4), 3), _x((4,), 4)], 0.0),
    "gp_nested_divides": (_m("gp_nested_divides", """  x = f32[32] parameter(0)
  y = f32[32] parameter(1)
  z = f32[32] parameter(2)
  q = f32[32] divide(x, y)
  ROOT d = f32[32] divide(q, z)"""), [_x((32,), 5), _x((32,), 6), _x((32,), 7)], 0.0),
    "gp_power_cube": (_m("gp_power_cube", """  x = f32[32] parameter(0)
  c = f32[] constant(3)
  b = f32[32] broadcast(c), dimensions={}
  ROOT p = f32[32] power(x, b)"""), [_x((32,), 8)], 0.0),
    "gp_reassociate_constants": (_m("gp_reassociate_constants", """  x = f32[32] parameter(0)
  c = f32[] constant(0.3)
  b = f32[32] broadcast(c), dimensions={}
  c2 = f32[] constant(0.7)
  b2 = f32[32] broadcast(c2), dimensions={}
  m = f32[32] multiply(x, b)
  m2 = f32[32] multiply(m, b2)
  a = f32[32] add(x, b)
  a2 = f32[32] add(a, b2)
  ROOT t = (f32[32], f32[32]) tuple(m2, a2)"""), [_x((32,), 9)], 0.0),
    "gp_batchnorm_rsqrt": (_m("gp_batchnorm_rsqrt", "  x = f32[3,5,4] parameter(0)\n" + _BN_CONSTS + """
  r = f32[4] rsqrt(ve)
  s = f32[4] multiply(r, gamma)
  sb = f32[3,5,4] broadcast(s), dimensions={2}
  ROOT y = f32[3,5,4] multiply(xc, sb)"""), [_x((3, 5, 4), 10)], 0.0),
    "gp_batchnorm_divide_sqrt": (_m("gp_batchnorm_divide_sqrt", "  x = f32[3,5,4] parameter(0)\n" + _BN_CONSTS + """
  sd = f32[4] sqrt(ve)
  sdb = f32[3,5,4] broadcast(sd), dimensions={2}
  n = f32[3,5,4] divide(xc, sdb)
  gb = f32[3,5,4] broadcast(gamma), dimensions={2}
  ROOT y = f32[3,5,4] multiply(n, gb)"""), [_x((3, 5, 4), 11)], 0.0),
    "gp_cse_duplicates": (_m("gp_cse_duplicates", """  x = f32[32] parameter(0)
  c = f32[] constant(3)
  b = f32[32] broadcast(c), dimensions={}
  c2 = f32[] constant(3)
  b2 = f32[32] broadcast(c2), dimensions={}
  d1 = f32[32] divide(x, b)
  d2 = f32[32] divide(x, b2)
  e1 = f32[32] multiply(d1, d1)
  e2 = f32[32] multiply(d2, d2)
  ROOT s = f32[32] add(e1, e2)"""), [_x((32,), 12)], 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_pass_case(check_case, name):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)

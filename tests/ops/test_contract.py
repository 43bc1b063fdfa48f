"""Products added once are fused multiply-adds, bit for bit as XLA:CPU computes them on a
machine with FMA (kernel/contract.py): which product of a sum of two is fused, subtract in
either order, a negated product, a product with two uses (not fused), a product that is
also a result (not fused), a loop-invariant product (hoisted, not fused), a polynomial,
f64, and bf16 (rounded before the add: not fused). Vector body and scalar tail both run.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

_R = np.random.default_rng(7)
N = 1003  # a vector body and a scalar tail


def _f(n=4, dt=np.float32):
    return [_R.standard_normal(N).astype(dt) for _ in range(n)]


def _module(name: str, ty: str, body: str, params: int = 4, result: str | None = None) -> str:
    ps = "\n".join(f"  {v} = {ty}[{N}] parameter({k})" for k, v in enumerate("abcd"[:params]))
    return f"HloModule {name}\nENTRY main {{\n{ps}\n{body}\n}}\n"


def _binary(name: str, expr_lines: str, ty: str = "f32") -> str:
    return _module(name, ty, expr_lines.replace("<T>", f"{ty}[{N}]"))


CASES = {
    "contract_mad": (_binary("contract_mad", "  m = <T> multiply(a, b)\n  ROOT y = <T> add(m, c)"), _f(), 0.0),
    "contract_mad_second": (_binary("contract_mad_second", "  m = <T> multiply(a, b)\n  ROOT y = <T> add(c, m)"),
                            _f(), 0.0),
    "contract_two_products": (_binary("contract_two_products", "  m = <T> multiply(a, b)\n  n = <T> multiply(c, d)\n"
                                      "  ROOT y = <T> add(m, n)"), _f(), 0.0),
    "contract_sub_both": (_binary("contract_sub_both", "  m = <T> multiply(a, b)\n  n = <T> multiply(c, d)\n"
                                  "  s = <T> subtract(m, c)\n  t = <T> subtract(d, n)\n  ROOT y = <T> add(s, t)"), _f(), 0.0),
    "contract_negated": (_binary("contract_negated", "  m = <T> multiply(a, b)\n  n = <T> negate(m)\n"
                                 "  ROOT y = <T> add(n, c)"), _f(), 0.0),
    "contract_two_uses": (_binary("contract_two_uses", "  m = <T> multiply(a, b)\n  s = <T> add(m, c)\n"
                                  "  t = <T> subtract(m, d)\n  ROOT y = <T> multiply(s, t)"), _f(), 0.0),
    "contract_result_too": (_module("contract_result_too", "f32",
                                    f"  m = f32[{N}] multiply(a, b)\n  s = f32[{N}] add(m, c)\n"
                                    f"  ROOT y = (f32[{N}], f32[{N}]) tuple(m, s)"), _f(), 0.0),
    "contract_invariant": (_module("contract_invariant", "f32",
                                   f"  p = f32[] parameter(4)\n  q = f32[] parameter(5)\n  pq = f32[] multiply(p, q)\n"
                                   f"  b1 = f32[{N}] broadcast(pq), dimensions={{}}\n  ROOT y = f32[{N}] add(b1, a)"),
                           _f() + [np.float32(1.1), np.float32(0.3)], 0.0),
    "contract_polynomial": (_binary("contract_polynomial",
                                    "  k1 = f32[] constant(0.3)\n  k2 = f32[] constant(-0.7)\n  k3 = f32[] constant(0.11)\n"
                                    "  c1 = <T> broadcast(k1), dimensions={}\n  c2 = <T> broadcast(k2), dimensions={}\n"
                                    "  c3 = <T> broadcast(k3), dimensions={}\n  p1 = <T> multiply(a, c1)\n  p2 = <T> add(p1, c2)\n"
                                    "  p3 = <T> multiply(p2, a)\n  p4 = <T> add(p3, c3)\n  p5 = <T> multiply(p4, b)\n"
                                    "  ROOT y = <T> add(p5, c)"), _f(), 0.0),
    "contract_f64": (_binary("contract_f64", "  m = <T> multiply(a, b)\n  n = <T> multiply(c, d)\n  ROOT y = <T> subtract(m, n)",
                             "f64"), _f(dt=np.float64), 0.0),
    "contract_bf16": (_binary("contract_bf16", "  m = <T> multiply(a, b)\n  ROOT y = <T> add(m, c)", "bf16"),
                      _f(dt=ml_dtypes.bfloat16), 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)

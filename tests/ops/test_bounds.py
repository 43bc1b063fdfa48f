"""exp of values proven <= 0 (ops/bounds.py) runs the vector exp without its overflow clamps
(aotc_vf_exp_nonpos): a softmax's exp(x - max(x)) through the reshapes JAX exports, a
log-softmax, and erfc's exp(-x^2); the same bits as XLA and as the full exp. Shapes the
proof must refuse keep the full exp, and one of them (exp(x - min(x)), up to e^200)
would give wrong bits if it did not.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from .conftest import c_text_of

_REGIONS = """region_max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
region_min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] minimum(a, b)
}
region_add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
region_max_const {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] constant(0)
  ROOT m = f32[] maximum(a, c)
}
"""


def _module(name: str, body: str) -> str:
    return f"HloModule {name}\n{_REGIONS}ENTRY main {{\n{body}}}\n"


# jax.nn.softmax as exported: the maximum through reshapes and broadcasts, then the sum
_SOFTMAX = _module("bounds_softmax", """  x = f32[64,1000] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[64] reduce(x, ninf), dimensions={1}, to_apply=region_max
  floor = f32[64] broadcast(ninf), dimensions={}
  m2 = f32[64] maximum(m, floor)
  r1 = f32[64,1] reshape(m2)
  b1 = f32[64,1] broadcast(r1), dimensions={0,1}
  r2 = f32[64] reshape(b1)
  b2 = f32[64,1000] broadcast(r2), dimensions={0}
  d = f32[64,1000] subtract(x, b2)
  e = f32[64,1000] exponential(d)
  zero = f32[] constant(0)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=region_add
  sb = f32[64,1000] broadcast(s), dimensions={0}
  ROOT y = f32[64,1000] divide(e, sb)
""")

# log-softmax over the first dimension of a transposed layout: x - max - log(sum(exp(x - max)))
_LOG_SOFTMAX = _module("bounds_log_softmax", """  x = f32[300,48] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[48] reduce(x, ninf), dimensions={0}, to_apply=region_max
  mb = f32[300,48] broadcast(m), dimensions={1}
  d = f32[300,48] subtract(x, mb)
  e = f32[300,48] exponential(d)
  zero = f32[] constant(0)
  s = f32[48] reduce(e, zero), dimensions={0}, to_apply=region_add
  l = f32[48] log(s)
  lb = f32[300,48] broadcast(l), dimensions={1}
  ROOT y = f32[300,48] subtract(d, lb)
""")

# erfc's exp(-x^2) and exp(-|x|), past the underflow and at the edges. x has no NaN: which
# NaN's sign x * x keeps when both operands are NaN is the C compiler's operand order
_NEG_SQUARE = _module("bounds_neg_square", """  x = f32[4096] parameter(0)
  z = f32[4096] parameter(1)
  sq = f32[4096] multiply(x, x)
  n = f32[4096] negate(sq)
  e = f32[4096] exponential(n)
  a = f32[4096] abs(z)
  na = f32[4096] negate(a)
  ea = f32[4096] exponential(na)
  ROOT t = (f32[4096], f32[4096]) tuple(e, ea)
""")

# refused: x - min(x) is >= 0 and reaches e^200 (inf); the full exp's clamps matter there
_MINUS_MIN = _module("bounds_minus_min", """  x = f32[16,512] parameter(0)
  pinf = f32[] constant(inf)
  m = f32[16] reduce(x, pinf), dimensions={1}, to_apply=region_min
  mb = f32[16,512] broadcast(m), dimensions={0}
  d = f32[16,512] subtract(x, mb)
  ROOT e = f32[16,512] exponential(d)
""")


def _rows() -> np.ndarray:
    x = np.random.default_rng(41).normal(0.0, 6.0, (64, 1000)).astype(np.float32)
    x[1, :] = -3.0e38          # huge negative: x - max is 0 everywhere
    x[2, 17] = np.inf          # inf - inf: NaN
    x[3, 5] = np.nan           # a NaN in the row
    x[4, :] = -np.inf          # -inf - -inf: NaN
    x[5, :500] = 1.0e30        # ties at a huge maximum, the rest far below (exp underflows to 0)
    x[6, :] = np.float32(1.0e-40)  # subnormals: flushed, then ties at zero
    x[7, ::2] = -200.0         # below exp's lower bound
    return x


def _edges(nan: bool) -> np.ndarray:
    x = np.random.default_rng(42).normal(0.0, 4.0, 4096).astype(np.float32)
    special = [0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-40, 9.3, 9.35, 9.4, 13.0, 1e20, 3e38, -9.35, 88.7, -88.7,
               0.5, 1.0] + ([np.nan, -np.nan] if nan else [])
    x[:len(special)] = np.array(special, np.float32)
    return x


def _minus_min() -> np.ndarray:
    """Rows whose differences from their minimum reach 200 (exp overflows to inf), none
    within a few units of exp's overflow bound (XLA:CPU computes this fusion with
    YNNPACK's exp, which overflows a little earlier than XLA's own)."""
    rng = np.random.default_rng(43)
    d = rng.uniform(0.0, 200.0, (16, 512))
    d[(d > 85.0) & (d < 92.0)] += 8.0
    d[:, 0] = 0.0
    return (d + rng.uniform(-50.0, 50.0, (16, 1))).astype(np.float32)


CASES = {
    # the divide's sums are XLA's to a few roundings (XLA:CPU adds in another order)
    "bounds_softmax": (_SOFTMAX, [_rows()], 1e-6),
    "bounds_log_softmax": (_LOG_SOFTMAX, [np.random.default_rng(44).normal(0.0, 30.0, (300, 48)).astype(np.float32)],
                           1e-6),
    "bounds_neg_square": (_NEG_SQUARE, [_edges(False), _edges(True)], 0.0),
    # XLA:CPU's exp here is YNNPACK's (a reduce fused with elementwise ops): a few ulps apart
    "bounds_minus_min": (_MINUS_MIN, [_minus_min()], 1e-6),
}
_NONPOS = {"bounds_softmax", "bounds_log_softmax", "bounds_neg_square"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_which_exponentials_drop_the_clamps(name, tmp_path):
    c = c_text_of(CASES[name][0], name, tmp_path)
    kernels = c[c.index("static void k_"):]
    assert ("exp_nonpos" in kernels) == (name in _NONPOS), kernels[:3000]


@pytest.mark.parametrize("name", sorted(_NONPOS))
def test_same_bits_as_the_full_exp(name, workdir, monkeypatch):
    """Dropping the clamps changes no bit: the kernels built with the full exp give the same."""
    from aotc.ops import elementwise

    from .conftest import assert_same_bits_without

    assert_same_bits_without(name, CASES[name][0], workdir,
                             lambda: monkeypatch.setattr(elementwise, "nonpositive", lambda *a: False),
                             "aotc_vf_exp_nonpos(")


_REFUSED = {
    "min reducer": """  x = f32[8,64] parameter(0)
  c = f32[] constant(inf)
  m = f32[8] reduce(x, c), dimensions={1}, to_apply=region_min
  mb = f32[8,64] broadcast(m), dimensions={0}
  d = f32[8,64] subtract(x, mb)""",
    "reducer with a constant": """  x = f32[8,64] parameter(0)
  c = f32[] constant(-inf)
  m = f32[8] reduce(x, c), dimensions={1}, to_apply=region_max_const
  mb = f32[8,64] broadcast(m), dimensions={0}
  d = f32[8,64] subtract(x, mb)""",
    "reversed": """  x = f32[8,64] parameter(0)
  c = f32[] constant(-inf)
  m = f32[8] reduce(x, c), dimensions={1}, to_apply=region_max
  mb = f32[8,64] broadcast(m), dimensions={0}
  d = f32[8,64] subtract(mb, x)""",
    "another array's maximum": """  x = f32[8,64] parameter(0)
  z = f32[8,64] parameter(1)
  c = f32[] constant(-inf)
  m = f32[8] reduce(z, c), dimensions={1}, to_apply=region_max
  mb = f32[8,64] broadcast(m), dimensions={0}
  d = f32[8,64] subtract(x, mb)""",
    "rows broadcast along columns": """  x = f32[64,64] parameter(0)
  c = f32[] constant(-inf)
  m = f32[64] reduce(x, c), dimensions={1}, to_apply=region_max
  mb = f32[64,64] broadcast(m), dimensions={1}
  d = f32[64,64] subtract(x, mb)""",
    "rows permuted": """  x = f32[8,8] parameter(0)
  c = f32[] constant(-inf)
  m = f32[8] reduce(x, c), dimensions={1}, to_apply=region_max
  r = f32[2,4] reshape(m)
  r1 = f32[4,2] transpose(r), dimensions={1,0}
  r2 = f32[8] reshape(r1)
  mb = f32[8,8] broadcast(r2), dimensions={0}
  d = f32[8,8] subtract(x, mb)""",
    "a product of two values": """  x = f32[64] parameter(0)
  z = f32[64] parameter(1)
  p = f32[64] multiply(x, z)
  d = f32[64] negate(p)""",
}


@pytest.mark.parametrize("what", sorted(_REFUSED))
def test_refused_shapes_keep_the_full_exp(what, tmp_path):
    body = _REFUSED[what] + "\n  ROOT e = f32[] exponential(d)\n"
    shape = body.split(" d = ")[1].split(" ")[0]
    text = _module("refused", body.replace("f32[] exponential", f"{shape} exponential"))
    c = c_text_of(text, "refused", tmp_path)
    kernels = c[c.index("static void k_"):]
    assert "exp_nonpos" not in kernels and re.search(r"aotc_(vf|v8)_exp\(|aotc_exp_f32\(", kernels), kernels[:3000]

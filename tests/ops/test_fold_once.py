"""A row reduction read through reshapes is folded once per row: attention's softmax as
JAX exports it (scores scaled, reshaped between the head and query dimensions, the
maximum broadcast back through two reshapes) reaches `reduce_max` from the sum's fold
and from the final divide at index expressions that differ only in how the reshapes
split and merge the row number. The kernel builder binds each index value once in
simplest form (kernel/builder.py `let`), so both reads are one element and the maximum
is folded once; the map then loads the exponentials the sum's fold kept
(kernel/reuse.py) instead of computing them again.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from .conftest import c_text_of


def _attention_softmax(name: str) -> str:
    return f"""HloModule {name}
region_max {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}}
region_add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY main {{
  scores = f32[1,4,128,1,128] parameter(0)
  eighth = f32[] constant(0.125)
  scale = f32[1,4,128,1,128] broadcast(eighth), dimensions={{}}
  ninf = f32[] constant(-inf)
  floor = f32[1,4,128,1] broadcast(ninf), dimensions={{}}
  zero = f32[] constant(0)
  mul.168 = f32[1,4,128,1,128] multiply(scores, scale)
  transpose.19 = f32[1,1,4,128,128] reshape(mul.168)
  reduce_max.30 = f32[1,4,128,1] reduce(mul.168, ninf), dimensions={{4}}, to_apply=region_max
  max.6 = f32[1,4,128,1] maximum(reduce_max.30, floor)
  transpose.18 = f32[1,1,4,128,1] reshape(max.6)
  sub.34 = f32[1,1,4,128,1] broadcast(transpose.18), dimensions={{0,1,2,3,4}}
  sub.35 = f32[1,1,4,128] reshape(sub.34)
  sub.36 = f32[1,1,4,128,128] broadcast(sub.35), dimensions={{0,1,2,3}}
  sub.37 = f32[1,1,4,128,128] subtract(transpose.19, sub.36)
  exp.6 = f32[1,1,4,128,128] exponential(sub.37)
  reduce_sum.106 = f32[1,1,4,128] reduce(exp.6, zero), dimensions={{4}}, to_apply=region_add
  rs = f32[1,1,4,128,1] reshape(reduce_sum.106)
  div.44 = f32[1,1,4,128,1] broadcast(rs), dimensions={{0,1,2,3,4}}
  div.45 = f32[1,1,4,128] reshape(div.44)
  div.46 = f32[1,1,4,128,128] broadcast(div.45), dimensions={{0,1,2,3}}
  ROOT div.47 = f32[1,1,4,128,128] divide(exp.6, div.46)
}}
"""


def _scores() -> np.ndarray:
    x = np.random.default_rng(31).normal(0.0, 8.0, (1, 4, 128, 1, 128)).astype(np.float32)
    x[0, 1, 5, 0, :] = -3.0e38  # a row of huge negative scores: exp(x - max) is 1 for all
    x[0, 2, 7, 0, 3] = np.inf   # a row with an infinity: NaN after x - max, as XLA gives
    x[0, 3, 9, 0, :64] = 0.0    # ties at the maximum
    return x


CASES = {
    # the sums are XLA's to a few roundings (XLA:CPU adds in another order)
    "fold_once_attention_softmax": (_attention_softmax("fold_once_attention_softmax"), [_scores()], 1e-6),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


def _kernel(c: str) -> str:
    body = c[c.index("/* ---------------------------------------------------------------- kernels"):]
    start = re.search(r"static void k_div_47\(", body).start()
    return body[start:body.index("\n}\n", start)]


def test_the_maximum_is_folded_once_and_the_exponentials_computed_once(tmp_path):
    k = _kernel(c_text_of(CASES["fold_once_attention_softmax"][0], "fold_once_attention_softmax", tmp_path))
    assert len(re.findall(r"float acc_reduce_max_30\w* = ", k)) == 1, k
    assert "row_v_exp_6" in k, k  # the map loads what the sum's fold kept
    exps = re.findall(r"aotc_vf_exp(?:_nonpos)?\(|aotc_exp(?:_nonpos)?_f32\(", k)
    assert 1 <= len(exps) <= 5, k  # one fold's loop: four interleaved vectors, or a tail


def test_same_bits_as_the_max_folded_twice(workdir, monkeypatch):
    """Sharing the index values reorders no operation: the bits of the kernel that folds
    the maximum twice and computes every exponential twice."""
    from aotc.kernel import builder

    from .conftest import assert_same_bits_without

    name = "fold_once_attention_softmax"
    assert_same_bits_without(name, CASES[name][0], workdir,
                             lambda: monkeypatch.setattr(builder.KernelBuilder, "_pure_index", lambda self, v: False),
                             "row_v_exp_6")

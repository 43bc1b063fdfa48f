"""Elementwise vector loops with long-latency functions run several vectors per trip
(kernel/vectorize.py `interleave`, printed by emit_c/vector_c.py): a static loop whose
count leaves a one-vector rest and a scalar tail, a static loop of whole interleaved
trips, a threaded loop over an unknown range, and a reduction's lane loop (four blocks
of lanes per trip, each lane still summed in order), each against XLA:CPU bit for bit,
and bit for bit against the same kernels printed one vector per trip.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

from .conftest import c_text_of


def _chain(name: str, n: int) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = f32[{n}] parameter(0)
  e = f32[{n}] exponential(x)
  t = f32[{n}] tanh(x)
  one = f32[] constant(1)
  ones = f32[{n}] broadcast(one), dimensions={{}}
  a = f32[{n}] add(e, ones)
  l = f32[{n}] log(a)
  d = f32[{n}] divide(t, a)
  ROOT r = f32[{n}] add(d, l)
}}
"""


def _logistic_rows(name: str) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = f32[37,300] parameter(0)
  s = f32[37,300] logistic(x)
  q = f32[37,300] sqrt(s)
  ROOT r = f32[37,300] multiply(q, x)
}}
"""


def _exp_sum_rows(name: str) -> str:
    return f"""HloModule {name}
region_add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY main {{
  x = f32[5,1008] parameter(0)
  e = f32[5,1008] exponential(x)
  zero = f32[] constant(0)
  ROOT r = f32[5] reduce(e, zero), dimensions={{1}}, to_apply=region_add
}}
"""


def _inputs(n: int, seed: int, edges: bool = True) -> np.ndarray:
    x = np.random.default_rng(seed).uniform(-6.0, 6.0, n).astype(np.float32)
    if edges:
        x[:6] = [0.0, -0.0, 1e-30, -1e-5, 88.0, -90.0]  # tiny arguments (tanh keeps them), near exp's limits
    return x


CASES = {
    "interleave_static_tail": (_chain("interleave_static_tail", 100), [_inputs(100, 1)], 0.0),
    "interleave_static_whole": (_chain("interleave_static_whole", 256), [_inputs(256, 2)], 0.0),
    "interleave_threaded": (_chain("interleave_threaded", 200003), [_inputs(200003, 3)], 0.0),
    "interleave_rows": (_logistic_rows("interleave_rows"), [_inputs(37 * 300, 4).reshape(37, 300)], 0.0),
    # a reduction's lane loop: four blocks of 16 lanes per trip, then three one per trip; the
    # sums are XLA's to a few roundings (XLA:CPU adds in another order), and bit for bit
    # those of one block per trip (test_same_bits_as_one_vector_per_trip)
    "interleave_exp_sum": (_exp_sum_rows("interleave_exp_sum"), [_inputs(5040, 5, False).reshape(5, 1008)], 1e-6),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_loop_runs_four_vectors_per_trip(name, tmp_path):
    c = c_text_of(CASES[name][0], name, tmp_path)
    kernels = c[c.index("/* ---------------------------------------------------------------- kernels"):]
    assert "4 * AOTC_VF_LANES" in kernels or "+= 64) {" in kernels, kernels[:3000]
    assert "_u3 = " in kernels


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_as_one_vector_per_trip(name, workdir, monkeypatch):
    """Interleaving reorders no operation of an element: the bits of the one-vector loops."""
    from aotc.kernel import vectorize

    from .conftest import assert_same_bits_without

    assert_same_bits_without(name, CASES[name][0], workdir,
                             lambda: monkeypatch.setattr(vectorize, "long_latency", lambda body: False), "_u3 = ")


@pytest.mark.parametrize("cc,opt", [("gcc", "-O0"), ("gcc", "-O2"), ("clang", "-O1"), ("clang", "-O3")])
@pytest.mark.parametrize("name", ["interleave_static_tail", "interleave_threaded"])
def test_case_with_compilers_and_native_vectors(name, cc, opt, workdir):
    """XLA's results from gcc and clang, unoptimized and optimized, with the widest vectors."""
    from .conftest import check_with_compiler

    check_with_compiler(name, CASES[name][0], CASES[name][2], cc, opt, workdir)

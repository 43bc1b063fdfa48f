"""Kernels whose element loop branches, unswitched into vector loops (kernel/unswitch.py),
give XLA's bits: a zero pad fused into max pooling (DenseNet's and ResNet's stem: the
bounds test does not change along the channels), a pad with another value under a sum
window, and a channel concatenation of three pieces fused into a BatchNorm-ReLU (the
branch splits the channel loop; the products stay contracted as XLA contracts them).
Channel counts that are not multiples of the vector width leave scalar tails; the data
holds NaN, signed zeros and negatives (which the zero pad must beat).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations


import numpy as np
import pytest


def _data(shape: tuple[int, ...], seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[::97] = np.nan
    flat[3::89] = -0.0
    flat[5::83] = 0.0
    return x


_MAX = "region_max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
_ADD = "region_add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"

_POOL_MAX = "HloModule unswitch_pad_maxpool\n" + _MAX + """
ENTRY main {
  x = f32[1,57,56,61] parameter(0)
  zero = f32[] constant(0)
  p = f32[1,59,58,61] pad(x, zero), padding=0_0x1_1x1_1x0_0
  ninf = f32[] constant(-inf)
  ROOT r = f32[1,29,28,61] reduce-window(p, ninf), window={size=1x3x3x1 stride=1x2x2x1}, to_apply=region_max
}
"""

_POOL_SUM = "HloModule unswitch_pad_sumpool\n" + _ADD + """
ENTRY main {
  x = f32[2,20,19,35] parameter(0)
  v = f32[] constant(-1.5)
  p = f32[2,22,21,35] pad(x, v), padding=0_0x1_1x1_1x0_0
  zero = f32[] constant(0)
  ROOT r = f32[2,20,19,35] reduce-window(p, zero), window={size=1x3x3x1}, to_apply=region_add
}
"""

_CONCAT_BN = """HloModule unswitch_concat_bn
ENTRY main {
  a = f32[1,14,14,40] parameter(0)
  b = f32[1,14,14,24] parameter(1)
  c = f32[1,14,14,13] parameter(2)
  scale = f32[77] parameter(3)
  shift = f32[77] parameter(4)
  cat = f32[1,14,14,77] concatenate(a, b, c), dimensions={3}
  s = f32[1,14,14,77] broadcast(scale), dimensions={3}
  t = f32[1,14,14,77] broadcast(shift), dimensions={3}
  m = f32[1,14,14,77] multiply(cat, s)
  y = f32[1,14,14,77] add(m, t)
  zero = f32[] constant(0)
  z = f32[1,14,14,77] broadcast(zero), dimensions={}
  ROOT r = f32[1,14,14,77] maximum(y, z)
}
"""

CASES = {
    "unswitch_pad_maxpool": (_POOL_MAX, [_data((1, 57, 56, 61), 1)], 0.0),
    "unswitch_pad_sumpool": (_POOL_SUM, [_data((2, 20, 19, 35), 2)], 0.0),
    "unswitch_concat_bn": (_CONCAT_BN, [_data((1, 14, 14, 40), 3), _data((1, 14, 14, 24), 4),
                                        _data((1, 14, 14, 13), 5), _data((77,), 6), _data((77,), 7)], 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


@pytest.mark.parametrize("cc,opt", [("gcc", "-O0"), ("gcc", "-O3"), ("clang", "-O1"), ("clang", "-O3")])
@pytest.mark.parametrize("name", sorted(CASES))
def test_case_with_compilers_and_native_vectors(name, cc, opt, workdir):
    """XLA's bits from gcc and clang, unoptimized and at -O3 with the machine's widest vectors."""
    from .conftest import check_with_compiler

    check_with_compiler(name, CASES[name][0], CASES[name][2], cc, opt, workdir)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_branching_loops_run_in_lanes(name, tmp_path):
    """The numbers above come from vector loops, not from the scalar loop they replace."""
    from aotc import driver
    from aotc.options import CompileOptions

    opts = CompileOptions()
    fe = driver.frontend(f"{name}.hlo", None, opts, text=CASES[name][0])
    c = driver.generate(fe, str(tmp_path / name), opts).c_text
    kernel = c[c.index("static void k_"):]
    kernel = kernel[:kernel.index("\n}\n")]
    assert "aotc_vf_load(&s_x[" in kernel or "aotc_vf_load(&s_a[" in kernel, kernel
    assert " if (" not in kernel.split("for (int64_t")[-1], kernel

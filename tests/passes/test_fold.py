"""Constant folding, HLO in -> printed HLO checked."""
import numpy as np
import pytest

from aotc.passes.fold import fold_constants
from tests.passes.filecheck import filecheck, run_pass


def _m(body: str) -> str:
    return "HloModule m\nENTRY main {\n" + body + "\n}\n"


CASES = {
    "batchnorm_scale_on_channel_constants": (_m("""
  x = f32[2,4] parameter(0)
  var = f32[4] constant({1, 4, 0.25, 9})
  gamma = f32[4] constant({2, 2, 2, 2})
  eps = f32[] constant(0.001)
  epsb = f32[4] broadcast(eps), dimensions={}
  ve = f32[4] add(var, epsb)
  r = f32[4] rsqrt(ve)
  s = f32[4] multiply(r, gamma)
  sb = f32[2,4] broadcast(s), dimensions={1}
  ROOT y = f32[2,4] multiply(x, sb)"""), """
CHECK: %s = f32[4] constant(
CHECK-NEXT: %sb = f32[2,4] broadcast(%s), dimensions={1}
CHECK-NEXT: ROOT %y = f32[2,4] multiply(%x, %sb)
CHECK-NOT: rsqrt"""),
    "broadcast_of_constant_stays": (_m("""
  x = f32[64,64] parameter(0)
  c = f32[] constant(2)
  b = f32[64,64] broadcast(c), dimensions={}
  ROOT y = f32[64,64] add(x, b)"""), """
CHECK: %b = f32[64,64] broadcast(%c)
CHECK: ROOT %y = f32[64,64] add(%x, %b)"""),
    "elementwise_of_alike_broadcasts_stays_small": (_m("""
  c = f32[] constant(2)
  d = f32[] constant(5)
  b = f32[512,512] broadcast(c), dimensions={}
  e = f32[512,512] broadcast(d), dimensions={}
  ROOT y = f32[512,512] multiply(b, e)"""), """
CHECK: %y.folded = f32[] constant(10)
CHECK-NEXT: ROOT %y = f32[512,512] broadcast(%y.folded), dimensions={}"""),
    "integer_division_rules": (_m("""
  a = s32[4] constant({7, -7, 5, -2147483648})
  b = s32[4] constant({2, 2, 0, -1})
  ROOT q = s32[4] divide(a, b)"""), """
CHECK: ROOT %q = s32[4] constant({3, -3, -1, -2147483648})"""),
    "data_movement": (_m("""
  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  t = s32[3,2] transpose(a), dimensions={1,0}
  r = s32[3,2] reverse(t), dimensions={0}
  z = s32[] constant(0)
  p = s32[4,4] pad(r, z), padding=0_1x0_1_1
  s = s32[2,4] slice(p), slice={[1:3], [0:4]}
  ROOT c = s32[4,4] concatenate(s, s), dimensions={0}"""), """
CHECK: ROOT %c = s32[4,4] constant({ { 2, 0, 5, 0 }, { 1, 0, 4, 0 }, { 2, 0, 5, 0 }, { 1, 0, 4, 0 } })"""),
    "transcendental_stays": (_m("""
  a = f32[2] constant({1, 2})
  ROOT e = f32[2] exponential(a)"""), """
CHECK: ROOT %e = f32[2] exponential(%a)"""),
    "mixed_zero_maximum_stays": (_m("""
  a = f32[2] constant({-0, 1})
  b = f32[2] constant({0, 2})
  ROOT e = f32[2] maximum(a, b)"""), """
CHECK: ROOT %e = f32[2] maximum(%a, %b)"""),
    "float_to_int_convert_stays": (_m("""
  a = f32[2] constant({1e10, nan})
  ROOT e = s32[2] convert(a)"""), """
CHECK: ROOT %e = s32[2] convert(%a)"""),
}


def test_batchnorm_scale_values_are_xla_evaluator_bits():
    """rsqrt folds as XLA's evaluator computes it: 1/sqrt in double, rounded to f32."""
    from aotc.frontend import parse_hlo
    from aotc.passes import run_passes
    m = run_passes(parse_hlo(CASES["batchnorm_scale_on_channel_constants"][0]))
    got = m.entry_computation.get("s").literal.values
    var = np.array([1, 4, 0.25, 9], np.float32) + np.float32(0.001)
    want = (1 / np.sqrt(var.astype(np.float64))).astype(np.float32) * np.float32(2)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("name", sorted(CASES))
def test_fold(name):
    hlo, checks = CASES[name]
    filecheck(run_pass(fold_constants, hlo), checks)

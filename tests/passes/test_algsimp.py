"""XLA's bit-changing algebraic rewrites, HLO in -> printed HLO checked."""
import pytest

from aotc.passes.algsimp import xla_algebraic_rewrites
from tests.passes.filecheck import filecheck, run_pass


def _m(body: str) -> str:
    return "HloModule m\nENTRY main {\n" + body + "\n}\n"


CASES = {
    "divide_by_broadcast_constant": (_m("""
  x = f32[8] parameter(0)
  c = f32[] constant(3)
  b = f32[8] broadcast(c), dimensions={}
  ROOT d = f32[8] divide(x, b)"""), """
CHECK: %c.inv = f32[] constant(0.33333334)
CHECK-NEXT: %b.inv = f32[8] broadcast(%c.inv), dimensions={}
CHECK-NEXT: ROOT %d = f32[8] multiply(%x, %b.inv)
CHECK-NOT: divide"""),
    "divide_by_vector_constant_f64": (_m("""
  x = f64[3] parameter(0)
  c = f64[3] constant({3, 7, 10})
  ROOT d = f64[3] divide(x, c)"""), """
CHECK: %c.inv = f64[3] constant({0.3333333333333333, 0.14285714285714285, 0.1})
CHECK: ROOT %d = f64[3] multiply(%x, %c.inv)"""),
    "bf16_divide_untouched": (_m("""
  x = bf16[3] parameter(0)
  c = bf16[3] constant({3, 7, 10})
  ROOT d = bf16[3] divide(x, c)"""), """
CHECK: ROOT %d = bf16[3] divide(%x, %c)"""),
    "integer_divide_untouched": (_m("""
  x = s32[8] parameter(0)
  c = s32[] constant(3)
  b = s32[8] broadcast(c), dimensions={}
  ROOT d = s32[8] divide(x, b)"""), """
CHECK: ROOT %d = s32[8] divide(%x, %b)"""),
    "divide_by_broadcast_sinks_reciprocal": (_m("""
  x = f32[4,8] parameter(0)
  y = f32[8] parameter(1)
  b = f32[4,8] broadcast(y), dimensions={1}
  ROOT d = f32[4,8] divide(x, b)"""), """
CHECK: %y.one = f32[] constant(1)
CHECK: %y.recip = f32[8] divide(%y.one.bcast, %y)
CHECK: %b.recip = f32[4,8] broadcast(%y.recip), dimensions={1}
CHECK: ROOT %d = f32[4,8] multiply(%x, %b.recip)"""),
    "divide_by_sqrt": (_m("""
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  s = f32[8] sqrt(y)
  ROOT d = f32[8] divide(x, s)"""), """
CHECK: %s.rsqrt = f32[8] rsqrt(%y)
CHECK: ROOT %d = f32[8] multiply(%x, %s.rsqrt)"""),
    "divide_by_sqrt_with_two_users_stays": (_m("""
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  s = f32[8] sqrt(y)
  d = f32[8] divide(x, s)
  ROOT r = f32[8] add(d, s)"""), """
CHECK: %d = f32[8] divide(%x, %s)"""),
    "nested_divides": (_m("""
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  z = f32[8] parameter(2)
  q = f32[8] divide(x, y)
  ROOT d = f32[8] divide(q, z)"""), """
CHECK: %d.den = f32[8] multiply(%y, %z)
CHECK: ROOT %d = f32[8] divide(%x, %d.den)"""),
    "power_small_integers": (_m("""
  x = f32[8] parameter(0)
  c2 = f32[] constant(2)
  b2 = f32[8] broadcast(c2), dimensions={}
  c3 = f32[] constant(3)
  b3 = f32[8] broadcast(c3), dimensions={}
  p2 = f32[8] power(x, b2)
  p3 = f32[8] power(x, b3)
  ROOT r = f32[8] add(p2, p3)"""), """
CHECK: %p2 = f32[8] multiply(%x, %x)
CHECK: %p3.sq = f32[8] multiply(%x, %x)
CHECK-NEXT: %p3 = f32[8] multiply(%x, %p3.sq)"""),
    "power_half_stays": (_m("""
  x = f32[8] parameter(0)
  c = f32[] constant(0.5)
  b = f32[8] broadcast(c), dimensions={}
  ROOT p = f32[8] power(x, b)"""), """
CHECK: ROOT %p = f32[8] power(%x, %b)"""),
    "multiply_constants_reassociate": (_m("""
  x = f32[8] parameter(0)
  c = f32[] constant(3)
  b = f32[8] broadcast(c), dimensions={}
  c2 = f32[] constant(7)
  b2 = f32[8] broadcast(c2), dimensions={}
  m = f32[8] multiply(x, b)
  ROOT d = f32[8] multiply(m, b2)"""), """
CHECK: %d.consts = f32[] multiply(%c, %c2)
CHECK: ROOT %d = f32[8] multiply(%x, %d.consts.bcast)"""),
    "conv_of_zero_pad_folds": (_m("""
  x = f32[1,112,112,96] parameter(0)
  w = f32[3,3,1,96] parameter(1)
  z = f32[] constant(0)
  p = f32[1,113,113,96] pad(x, z), padding=0_0x0_1x0_1x0_0
  ROOT c = f32[1,56,56,96] convolution(p, w), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=96"""), """
CHECK: ROOT %c = f32[1,56,56,96] convolution(%x, %w), window={size=3x3 stride=2x2 pad=0_1x0_1}
CHECK-NOT: pad("""),
    "conv_of_zero_pad_adds_to_window_padding": (_m("""
  x = f32[2,8,9,4] parameter(0)
  w = f32[3,3,4,5] parameter(1)
  z = f32[] constant(0)
  p = f32[2,11,11,4] pad(x, z), padding=0_0x1_2x2_0x0_0
  ROOT c = f32[2,11,5,5] convolution(p, w), window={size=3x3 stride=1x2 pad=1_1x0_1}, dim_labels=b01f_01io->b01f"""), """
CHECK: ROOT %c = f32[2,11,5,5] convolution(%x, %w), window={size=3x3 stride=1x2 pad=2_3x2_1}"""),
    "conv_of_nonzero_pad_stays": (_m("""
  x = f32[1,8,8,4] parameter(0)
  w = f32[3,3,1,4] parameter(1)
  z = f32[] constant(1)
  p = f32[1,9,9,4] pad(x, z), padding=0_0x0_1x0_1x0_0
  ROOT c = f32[1,4,4,4] convolution(p, w), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=4"""), """
CHECK: ROOT %c = f32[1,4,4,4] convolution(%p, %w)"""),
    "conv_of_feature_or_interior_pad_stays": (_m("""
  x = f32[1,8,8,4] parameter(0)
  w = f32[3,3,5,2] parameter(1)
  v = f32[3,3,4,2] parameter(2)
  z = f32[] constant(0)
  p = f32[1,8,8,5] pad(x, z), padding=0_0x0_0x0_0x0_1
  c1 = f32[1,6,6,2] convolution(p, w), window={size=3x3}, dim_labels=b01f_01io->b01f
  q = f32[1,15,8,4] pad(x, z), padding=0_0x0_0_1x0_0x0_0
  c2 = f32[1,13,6,2] convolution(q, v), window={size=3x3}, dim_labels=b01f_01io->b01f
  n = f32[1,7,8,4] pad(x, z), padding=0_0x-1_0x0_0x0_0
  c3 = f32[1,5,6,2] convolution(n, v), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[1,6,6,2], f32[1,13,6,2], f32[1,5,6,2]) tuple(c1, c2, c3)"""), """
CHECK: %c1 = f32[1,6,6,2] convolution(%p, %w)
CHECK: %c2 = f32[1,13,6,2] convolution(%q, %v)
CHECK: %c3 = f32[1,5,6,2] convolution(%n, %v)"""),
    "log_of_exp": (_m("""
  x = f32[8] parameter(0)
  e = f32[8] exponential(x)
  l = f32[8] log(e)
  ROOT r = f32[8] add(l, x)"""), """
CHECK: ROOT %r = f32[8] add(%x, %x)
CHECK-NOT: log"""),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewrite(name):
    hlo, checks = CASES[name]
    filecheck(run_pass(xla_algebraic_rewrites, hlo), checks)

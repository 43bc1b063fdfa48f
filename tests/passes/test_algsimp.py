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

"""Common-subexpression elimination, HLO in -> printed HLO checked."""
from aotc.passes.cse import eliminate_common_subexpressions
from tests.passes.filecheck import filecheck, run_pass

DUPLICATES = """HloModule m
ENTRY main {
  x = f32[8] parameter(0)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  b1 = f32[8] broadcast(c1), dimensions={}
  b2 = f32[8] broadcast(c2), dimensions={}
  e1 = f32[8] exponential(x), metadata={op_name="a"}
  e2 = f32[8] exponential(x), metadata={op_name="b"}
  m1 = f32[8] multiply(e1, b1)
  m2 = f32[8] multiply(e2, b2)
  n = f32[8] multiply(b2, e2)
  s = f32[8] add(m1, m2)
  ROOT r = f32[8] add(s, n)
}
"""


def test_duplicates_merge_but_operand_order_matters():
    filecheck(run_pass(eliminate_common_subexpressions, DUPLICATES), """
CHECK: %c1 = f32[] constant(2)
CHECK-NOT: %c2
CHECK: %e1 = f32[8] exponential(%x)
CHECK-NOT: %e2
CHECK: %n = f32[8] multiply(%b1, %e1)
CHECK: %s = f32[8] add(%m1, %m1)
""")


RANDOM = """HloModule m
ENTRY main {
  a = f32[] constant(0)
  b = f32[] constant(1)
  r1 = f32[4] rng(a, b), distribution=rng_uniform
  r2 = f32[4] rng(a, b), distribution=rng_uniform
  ROOT s = f32[4] add(r1, r2)
}
"""


def test_random_numbers_never_merge():
    filecheck(run_pass(eliminate_common_subexpressions, RANDOM), "CHECK: add(%r1, %r2)")

"""sort, topk and custom-call TopK against XLA:CPU: stability with equal keys,
NaN of both signs, signed zeros, infinities, multi-operand comparators, every
sort dimension, integer/bf16 keys, ties in top-k (lower index first).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

BF16 = ml_dtypes.bfloat16
NAN = np.float32("nan")
NEG_NAN = -np.float32("nan")
INF = np.float32("inf")

SPECIAL = np.array([[1, NAN, 3, NEG_NAN, 3, -0.0, 0.0, INF, -INF, 1, 2],
                    [2, 2, 2, -1, 2, 0.0, -0.0, 0.0, NAN, 2, -1]], np.float32)

# key comparator over (key, payload): total order on the key, equal keys by descending payload
_LEX = """
lex {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  v0 = s32[] parameter(2)
  v1 = s32[] parameter(3)
  lt = pred[] compare(k0, k1), direction=LT, type=TOTALORDER
  eq = pred[] compare(k0, k1), direction=EQ, type=TOTALORDER
  gt = pred[] compare(v0, v1), direction=GT
  tie = pred[] and(eq, gt)
  ROOT r = pred[] or(lt, tie)
}
"""

# jax.lax.sort's comparator: NaNs (both signs) last, -0 == +0, stable on equal keys
_JAX = """
jaxcmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  pa = s32[] parameter(2)
  pb = s32[] parameter(3)
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  na = pred[] compare(a, a), direction=NE
  za = pred[] compare(a, zero), direction=EQ
  a0 = f32[] select(za, zero, a)
  a1 = f32[] select(na, qnan, a0)
  nb = pred[] compare(b, b), direction=NE
  zb = pred[] compare(b, zero), direction=EQ
  b0 = f32[] select(zb, zero, b)
  b1 = f32[] select(nb, qnan, b0)
  lt = pred[] compare(a1, b1), direction=LT, type=TOTALORDER
  pl = pred[] compare(pa, pb), direction=LT
  pg = pred[] compare(pa, pb), direction=GT
  both = pred[] and(pl, pg)
  ROOT r = pred[] or(lt, both)
}
"""

# name -> (HLO text, inputs in parameter order, rtol)
CASES = {
    "sort_lex_two_operands": ("HloModule sort_lex_two_operands\n" + _LEX + """
ENTRY main {
  k = f32[2,11] parameter(0)
  v = s32[2,11] iota(), iota_dimension=1
  ROOT s = (f32[2,11], s32[2,11]) sort(k, v), dimensions={1}, is_stable=true, to_apply=lex
}
""", [SPECIAL], 0.0),

    # stability alone orders the equal keys (payload parameters unused by the comparator)
    "sort_stable_keys_only": ("""HloModule sort_stable_keys_only
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY main {
  k = f32[2,11] parameter(0)
  v = s32[2,11] iota(), iota_dimension=1
  ROOT s = (f32[2,11], s32[2,11]) sort(k, v), dimensions={1}, is_stable=true, to_apply=cmp
}
""", [SPECIAL], 0.0),

    "sort_jax_comparator": ("HloModule sort_jax_comparator\n" + _JAX + """
ENTRY main {
  k = f32[22] parameter(0)
  v = s32[22] iota(), iota_dimension=0
  ROOT s = (f32[22], s32[22]) sort(k, v), dimensions={0}, is_stable=true, to_apply=jaxcmp
}
""", [SPECIAL.reshape(-1)], 0.0),

    # descending integer sort along the major dimension, one operand
    "sort_dim0_descending": ("""HloModule sort_dim0_descending
gt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GT
}
ENTRY main {
  x = s32[6,3] parameter(0)
  ROOT s = s32[6,3] sort(x), dimensions={0}, to_apply=gt
}
""", [np.array([[3, -1, 7], [2147483647, 0, 7], [-2147483648, 5, -7], [3, 5, 0], [0, 0, 1], [-3, 9, 7]],
               np.int32)], 0.0),

    # middle dimension of a rank-3 array; u8 and bf16 keys
    "sort_middle_dim_types": ("""HloModule sort_middle_dim_types
ltu {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}
ltb {
  c = bf16[] parameter(0)
  d = bf16[] parameter(1)
  ROOT r2 = pred[] compare(c, d), direction=LT, type=TOTALORDER
}
ENTRY main {
  x = u8[2,5,3] parameter(0)
  y = bf16[2,5,3] parameter(1)
  sx = u8[2,5,3] sort(x), dimensions={1}, is_stable=true, to_apply=ltu
  sy = bf16[2,5,3] sort(y), dimensions={1}, is_stable=true, to_apply=ltb
  ROOT t = (u8[2,5,3], bf16[2,5,3]) tuple(sx, sy)
}
""", [np.random.default_rng(0).integers(0, 256, (2, 5, 3)).astype(np.uint8),
      np.concatenate([SPECIAL.reshape(-1), SPECIAL.reshape(-1)[:8]]).reshape(2, 5, 3).astype(BF16)], 0.0),

    # a longer row, so the merge sort runs several passes with a ragged tail
    "sort_long_row": ("""HloModule sort_long_row
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[3,37] parameter(0)
  ROOT s = f32[3,37] sort(x), dimensions={1}, to_apply=lt
}
""", [np.random.default_rng(1).standard_normal((3, 37)).astype(np.float32)], 0.0),

    "topk_largest": ("""HloModule topk_largest
ENTRY main {
  x = f32[2,11] parameter(0)
  ROOT t = (f32[2,5], s32[2,5]) topk(x), k=5, largest=true
}
""", [SPECIAL], 0.0),

    "topk_smallest": ("""HloModule topk_smallest
ENTRY main {
  x = f32[2,11] parameter(0)
  ROOT t = (f32[2,11], s32[2,11]) topk(x), k=11, largest=false
}
""", [SPECIAL], 0.0),

    "topk_int_bf16": ("""HloModule topk_int_bf16
ENTRY main {
  x = s32[9] parameter(0)
  y = bf16[3,4] parameter(1)
  tx = (s32[3], s32[3]) topk(x), k=3, largest=true
  ty = (bf16[3,2], s32[3,2]) topk(y), k=2, largest=true
  a = s32[3] get-tuple-element(tx), index=0
  b = s32[3] get-tuple-element(tx), index=1
  c = bf16[3,2] get-tuple-element(ty), index=0
  d = s32[3,2] get-tuple-element(ty), index=1
  ROOT t = (s32[3], s32[3], bf16[3,2], s32[3,2]) tuple(a, b, c, d)
}
""", [np.array([4, -2, 9, 4, 9, 2147483647, -2147483648, 0, 9], np.int32),
      np.array([[1, 1, 1, 1], [0, -0.0, NAN, 5], [-1, 3, 3, -INF]], np.float32).astype(BF16)], 0.0),

    # many ties: k <= 16 selects by insertion, larger k sorts the whole row
    "topk_ties_both_paths": ("""HloModule topk_ties_both_paths
ENTRY main {
  x = f32[2,48] parameter(0)
  a = (f32[2,6], s32[2,6]) topk(x), k=6, largest=true
  b = (f32[2,20], s32[2,20]) topk(x), k=20, largest=false
  av = f32[2,6] get-tuple-element(a), index=0
  ai = s32[2,6] get-tuple-element(a), index=1
  bv = f32[2,20] get-tuple-element(b), index=0
  bi = s32[2,20] get-tuple-element(b), index=1
  ROOT t = (f32[2,6], s32[2,6], f32[2,20], s32[2,20]) tuple(av, ai, bv, bi)
}
""", [np.concatenate([np.random.default_rng(2).integers(-3, 4, (2, 37)).astype(np.float32), SPECIAL], axis=1)],
        0.0),

    # XLA's optimized form of topk: the comparator is not called on XLA:CPU
    "topk_custom_call": ("""HloModule topk_custom_call
gtcmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=GT
}
ENTRY main {
  x = f32[2,11] parameter(0)
  ROOT t = (f32[2,4], s32[2,4]) custom-call(x), custom_call_target="TopK", called_computations={gtcmp}
}
""", [SPECIAL], 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


def test_custom_call_other_target_is_a_located_error(workdir):
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions
    text = """HloModule other
ENTRY main {
  x = f32[4] parameter(0)
  ROOT y = f32[4] custom-call(x), custom_call_target="my_kernel"
}
"""
    fe = driver.frontend("other.hlo", None, CompileOptions(), text=text)
    with pytest.raises(AotcError, match='custom-call target "my_kernel"'):
        driver.generate(fe, str(workdir / "libother"), CompileOptions())


BAD = {
    "does not match operand 0": """HloModule bad
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[5] parameter(0)
  y = s32[4] parameter(1)
  ROOT s = (f32[5], s32[4]) sort(x, y), dimensions={0}, to_apply=lt
}
""",
    "top-k k=7 is out of range": """HloModule bad
ENTRY main {
  x = f32[2,5] parameter(0)
  ROOT t = (f32[2,7], s32[2,7]) topk(x), k=7, largest=true
}
""",
}


@pytest.mark.parametrize("message", sorted(BAD))
def test_shape_rule_errors(message):
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions
    with pytest.raises(AotcError, match=message):
        driver.frontend("bad.hlo", None, CompileOptions(), text=BAD[message])

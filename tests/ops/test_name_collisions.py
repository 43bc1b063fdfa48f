"""HLO names that spell the same C identifier (`w.1` and `w_1`) against XLA:CPU:
constants, reducers, kernels, while condition/body computations, sort
comparators, conditional branches, and names already in the suffixed form. Each
must keep its own definition in the generated C (wrong numbers otherwise).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

_X4 = np.array([1.0, -2.0, 3.5, 0.25], np.float32)
_X43 = np.arange(12, dtype=np.float32).reshape(4, 3) * np.float32(0.5) - np.float32(2.0)

CASES = {
    "names_constants": ("""HloModule names_constants
ENTRY main {
  x = f32[4] parameter(0)
  w.1 = f32[4] constant({1, 2, 3, 4})
  w_1 = f32[4] constant({10, 20, 30, 40})
  a = f32[4] add(x, w.1)
  ROOT b = f32[4] multiply(a, w_1)
}
""", [_X4], 0.0),

    # the later of two colliding names gets `_2`; a name already spelled so pushes on to `_3`
    "names_suffix_form": ("""HloModule names_suffix_form
ENTRY main {
  x = f32[4] parameter(0)
  v.1 = f32[4] constant({1, 2, 3, 4})
  v_1 = f32[4] constant({10, 20, 30, 40})
  v_1_2 = f32[4] constant({100, 200, 300, 400})
  v_1.2 = f32[4] constant({1000, 2000, 3000, 4000})
  a = f32[4] add(x, v.1)
  b = f32[4] add(x, v_1)
  c = f32[4] add(x, v_1_2)
  d = f32[4] add(x, v_1.2)
  ROOT e = f32[16] concatenate(a, b, c, d), dimensions={0}
}
""", [_X4], 0.0),

    "names_reducers": ("""HloModule names_reducers
r.1 {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  ROOT m0 = f32[] maximum(a0, b0)
}
r_1 {
  a1 = f32[] parameter(0)
  b1 = f32[] parameter(1)
  ROOT sum1 = f32[] add(a1, b1)
}
ENTRY main {
  x = f32[4,3] parameter(0)
  z = f32[] constant(0)
  m = f32[4] reduce(x, z), dimensions={1}, to_apply=r.1
  s = f32[4] reduce(x, z), dimensions={1}, to_apply=r_1
  ROOT t = (f32[4], f32[4]) tuple(m, s)
}
""", [_X43], 0.0),

    "names_kernels": ("""HloModule names_kernels
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY main {
  x = f32[4,3] parameter(0)
  z = f32[] constant(0)
  a.1 = f32[4] reduce(x, z), dimensions={1}, to_apply=sum
  a_1 = f32[3] reduce(x, z), dimensions={0}, to_apply=sum
  bb = f32[4,3] broadcast(a_1), dimensions={1}
  a-1 = f32[4,3] add(bb, x)
  ROOT t = (f32[4], f32[3], f32[4,3]) tuple(a.1, a_1, a-1)
}
""", [_X43], 0.0),

    # condition/body computations, their constants and kernels, and a reducer shared by the
    # main program and a sub-program
    "names_while": ("""HloModule names_while
sum {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
cond.1 {
  s.c1 = (s32[], f32[4]) parameter(0)
  i.c1 = s32[] get-tuple-element(s.c1), index=0
  n.c1 = s32[] constant(3)
  ROOT lt.c1 = pred[] compare(i.c1, n.c1), direction=LT
}
body.1 {
  s.b1 = (s32[], f32[4]) parameter(0)
  i.b1 = s32[] get-tuple-element(s.b1), index=0
  v.b1 = f32[4] get-tuple-element(s.b1), index=1
  one.b1 = s32[] constant(1)
  zf.b1 = f32[] constant(0)
  k.1 = f32[4] constant({1, 2, 3, 4})
  i2.b1 = s32[] add(i.b1, one.b1)
  r.b1 = f32[] reduce(v.b1, zf.b1), dimensions={0}, to_apply=sum
  bc.b1 = f32[4] broadcast(r.b1), dimensions={}
  add.7 = f32[4] add(v.b1, k.1)
  u.b1 = f32[4] add(add.7, bc.b1)
  ROOT t.b1 = (s32[], f32[4]) tuple(i2.b1, u.b1)
}
cond_1 {
  s.c2 = (s32[], f32[4]) parameter(0)
  i.c2 = s32[] get-tuple-element(s.c2), index=0
  n.c2 = s32[] constant(5)
  ROOT lt.c2 = pred[] compare(i.c2, n.c2), direction=LT
}
body_1 {
  s.b2 = (s32[], f32[4]) parameter(0)
  i.b2 = s32[] get-tuple-element(s.b2), index=0
  v.b2 = f32[4] get-tuple-element(s.b2), index=1
  one.b2 = s32[] constant(1)
  k_1 = f32[4] constant({10, 20, 30, 40})
  i2.b2 = s32[] add(i.b2, one.b2)
  add_7.b = f32[4] multiply(v.b2, k_1)
  ROOT t.b2 = (s32[], f32[4]) tuple(i2.b2, add_7.b)
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  zf = f32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w1 = (s32[], f32[4]) while(init), condition=cond.1, body=body.1
  w2 = (s32[], f32[4]) while(init), condition=cond_1, body=body_1
  a = f32[4] get-tuple-element(w1), index=1
  b = f32[4] get-tuple-element(w2), index=1
  add_7 = f32[4] add(a, b)
  red = f32[] reduce(b, zf), dimensions={0}, to_apply=sum
  redv = f32[1] reshape(red)
  ROOT t = (f32[4], f32[4], f32[4], f32[1]) tuple(a, b, add_7, redv)
}
""", [np.array([1, -2, 3, 4], np.float32)], 0.0),

    "names_sort_comparators": ("""HloModule names_sort_comparators
cmp.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
cmp_1 {
  c = f32[] parameter(0)
  d = f32[] parameter(1)
  ROOT gt = pred[] compare(c, d), direction=GT
}
ENTRY main {
  x = f32[8] parameter(0)
  up = f32[8] sort(x), dimensions={0}, to_apply=cmp.1
  down = f32[8] sort(x), dimensions={0}, to_apply=cmp_1
  ROOT t = (f32[8], f32[8]) tuple(up, down)
}
""", [np.array([3, -1, 7, 0.5, -4, 2, 9, 1], np.float32)], 0.0),

    # three branches spelled alike, each with its own constant and kernel names alike
    "names_conditional": ("""HloModule names_conditional
br.1 {
  p.1 = f32[4] parameter(0)
  q.1 = f32[4] constant({1, 1, 1, 1})
  m.1 = f32[4] add(p.1, q.1)
  ROOT o.1 = f32[4] multiply(m.1, m.1)
}
br_1 {
  p_1 = f32[4] parameter(0)
  q_1 = f32[4] constant({2, 2, 2, 2})
  m_1 = f32[4] multiply(p_1, q_1)
  ROOT o_1 = f32[4] add(m_1, m_1)
}
br-1 {
  p-1 = f32[4] parameter(0)
  q-1 = f32[4] constant({3, 3, 3, 3})
  m-1 = f32[4] subtract(p-1, q-1)
  ROOT o-1 = f32[4] negate(m-1)
}
ENTRY main {
  x = f32[4] parameter(0)
  i0 = s32[] parameter(1)
  i1 = s32[] parameter(2)
  i2 = s32[] parameter(3)
  c0 = f32[4] conditional(i0, x, x, x), branch_computations={br.1, br_1, br-1}
  c1 = f32[4] conditional(i1, x, x, x), branch_computations={br.1, br_1, br-1}
  c2 = f32[4] conditional(i2, x, x, x), branch_computations={br.1, br_1, br-1}
  ROOT t = (f32[4], f32[4], f32[4]) tuple(c0, c1, c2)
}
""", [_X4, np.int32(0), np.int32(1), np.int32(2)], 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


def _c_text(name: str) -> str:
    from aotc import driver
    from aotc.options import CompileOptions

    fe = driver.frontend(f"{name}.hlo", None, CompileOptions(), text=CASES[name][0])
    return driver.generate(fe, "libnames", CompileOptions()).c_text


def test_colliding_constants_keep_their_names_in_module_order():
    c = _c_text("names_suffix_form")
    assert re.findall(r"\bc_v_1\w*(?= = )", c) == ["c_v_1", "c_v_1_2", "c_v_1_2_2", "c_v_1_2_3"]


def test_colliding_reducers_are_both_defined():
    c = _c_text("names_reducers")
    assert "static inline float r_r_1(" in c and "static inline float r_r_1_2(" in c


def test_reducer_shared_with_a_sub_program_is_defined_once():
    c = _c_text("names_while")
    assert c.count("static inline float r_sum(") == 1


def test_output_is_deterministic():
    assert all(_c_text(n) == _c_text(n) for n in ("names_while", "names_conditional"))

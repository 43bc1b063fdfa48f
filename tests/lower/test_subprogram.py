"""lower/subprogram.py: the computations control flow runs are lowered in a stage of their
own, callees first, once each, before the kernels that run them (dump stage
`subprograms`)."""
from __future__ import annotations

import pytest

from aotc import driver
from aotc.errors import AotcError
from aotc.options import CompileOptions
from tests.passes.filecheck import filecheck

TWO_LOOPS = """HloModule two_loops
cond {
  c = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  b = (s32[], f32[4]) parameter(0)
  j = s32[] get-tuple-element(b), index=0
  one = s32[] constant(1)
  k = s32[] add(j, one)
  v = f32[4] get-tuple-element(b), index=1
  w = f32[4] negate(v)
  ROOT t = (s32[], f32[4]) tuple(k, w)
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[4]) tuple(zero, x)
  first = (s32[], f32[4]) while(s), condition=cond, body=body
  y = f32[4] get-tuple-element(first), index=1
  s2 = (s32[], f32[4]) tuple(zero, y)
  second = (s32[], f32[4]) while(s2), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(second), index=1
}
"""


def test_a_body_two_loops_run_is_lowered_once(capsys):
    fe = driver.frontend("two_loops.hlo", None, CompileOptions(), text=TWO_LOOPS)
    gen = driver.generate(fe, "libtwo", CompileOptions(dump_after=("subprograms",)))
    filecheck(capsys.readouterr().err, """
        CHECK: // ---- after subprograms
        CHECK-NEXT: body -> two_body_execute: 
        CHECK-NEXT: cond -> two_cond_execute: 
    """)
    assert [p.name for p in gen.lowered.program.subprograms] == ["two_body", "two_cond"]
    assert gen.c_text.count("static void two_body_execute(") == 1


def test_a_computation_running_itself_is_a_located_error():
    text = TWO_LOOPS.replace("ROOT t = (s32[], f32[4]) tuple(k, w)",
                             "t0 = (s32[], f32[4]) tuple(k, w)\n  ROOT t = (s32[], f32[4]) while(t0), condition=cond, body=body")
    with pytest.raises(AotcError) as e:  # the verifier sees it first; lowering guards too
        driver.generate(driver.frontend("rec.hlo", None, CompileOptions(), text=text), "librec", CompileOptions())
    assert "recursive computation call via body=body" in e.value.format()
    assert e.value.format().startswith("rec.hlo:16:8: error:")

"""Inputs deep or long enough to break recursive code go through the CLI as a result or one
located error (exit 1), never a traceback: long fusible chains, a thousand nested calls, and
reducers or comparators that call ops a scalar function cannot compute (dot, reduce, while,
custom-call)."""
from __future__ import annotations

import numpy as np
import pytest

import aotc
from click.testing import CliRunner

from aotc.cli import main


def _chain(n: int) -> str:
    out = ["HloModule chain", "", "ENTRY main {", "  x0 = f32[16] parameter(0)"]
    out += [f"  x{i} = f32[16] {'negate' if i % 2 else 'exponential'}(x{i - 1})" for i in range(1, n)]
    return "\n".join(out + [f"  ROOT x{n} = f32[16] negate(x{n - 1})", "}"]) + "\n"


def _nested_calls(depth: int) -> str:
    out = ["HloModule nest", "", "f0 {", "  p0 = f32[4] parameter(0)", "  ROOT r0 = f32[4] negate(p0)", "}"]
    for k in range(1, depth):
        out += [f"f{k} {{", f"  p{k} = f32[4] parameter(0)", f"  ROOT r{k} = f32[4] call(p{k}), to_apply=f{k - 1}",
                "}"]
    out += ["ENTRY main {", "  x = f32[4] parameter(0)", f"  ROOT y = f32[4] call(x), to_apply=f{depth - 1}", "}"]
    return "\n".join(out) + "\n"


def _compile(tmp_path, text: str, emit: str = "none"):
    model = tmp_path / "m.hlo"
    model.write_text(text)
    r = CliRunner().invoke(main, ["compile", str(model), "-o", str(tmp_path / "libm"), "--emit", emit])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert "Traceback" not in r.output and "internal error" not in r.output, r.output
    return r


@pytest.mark.slow
def test_a_chain_of_244_ops_builds(tmp_path):
    r = _compile(tmp_path, _chain(244), emit="o")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "libm.o").stat().st_size > 0


@pytest.mark.slow
def test_a_chain_of_10000_ops_generates(tmp_path):
    r = _compile(tmp_path, _chain(10000))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "libm.c").read_text().count("aotc_vf_exp(v_") == 4999  # x2, x4, ..., x9998


def test_a_thousand_nested_calls_compile(tmp_path):
    r = _compile(tmp_path, _nested_calls(1000))
    assert r.exit_code == 0, r.output


_REDUCE = """HloModule m
{helper}add {{
  p = f32[] parameter(0)
  q = f32[] parameter(1)
{body}
}}
ENTRY main {{
  x = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT s = f32[] reduce(x, z), dimensions={{0}}, to_apply=add
}}
"""

_WHILE = """cond {
  t = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  tb = (s32[], f32[]) parameter(0)
  ib = s32[] get-tuple-element(tb), index=0
  vb = f32[] get-tuple-element(tb), index=1
  one = s32[] constant(1)
  jb = s32[] add(ib, one)
  wb = f32[] add(vb, vb)
  ROOT rb = (s32[], f32[]) tuple(jb, wb)
}
"""

REDUCERS = {
    "dot": ("", "  a = f32[1] reshape(p)\n  b = f32[1] reshape(q)\n"
                "  d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                "  ROOT r = f32[] add(d, q)", "has dot d"),
    "custom_call": ("", "  c = f32[] custom-call(p), custom_call_target=\"foo\"\n  ROOT r = f32[] add(c, q)",
                    "has custom-call c"),
    "while": (_WHILE, "  k = s32[] constant(0)\n  t0 = (s32[], f32[]) tuple(k, p)\n"
                      "  w = (s32[], f32[]) while(t0), condition=cond, body=body\n"
                      "  g = f32[] get-tuple-element(w), index=1\n  ROOT r = f32[] add(g, q)", "has tuple t0"),
    "reduce": ("inner {\n  u = f32[] parameter(0)\n  v = f32[] parameter(1)\n  ROOT uv = f32[] add(u, v)\n}\n",
               "  a = f32[2] broadcast(q), dimensions={}\n  k = f32[] constant(0)\n"
               "  s2 = f32[] reduce(a, k), dimensions={0}, to_apply=inner\n  ROOT r = f32[] add(s2, p)", None),
}


@pytest.mark.parametrize("kind", sorted(REDUCERS))
def test_a_reducer_calling_a_non_elementwise_op_is_a_located_error_or_compiles(tmp_path, kind):
    helper, body, what = REDUCERS[kind]
    r = _compile(tmp_path, _REDUCE.format(helper=helper, body=body), emit="o")
    if what is None:  # a reduce inside a reducer: the inner reducer is defined first
        assert r.exit_code == 0, r.output
        x = np.arange(1, 9, dtype=np.float32)  # acc + 2*x_i over small integers: exact in any order
        out = aotc.run(str(tmp_path / "m.hlo"), inputs={"x": x})
        assert out["s"] == np.float32(2 * x.sum())
        return
    assert r.exit_code == 1, r.output
    assert f": error: cannot compile reduce s: the computation add it calls {what}" in r.output
    assert not (tmp_path / "libm.c").exists()


def test_a_comparator_running_a_while_loop_is_a_located_error(tmp_path):
    text = "HloModule m\n" + _WHILE + """lt {
  u = f32[] parameter(0)
  v = f32[] parameter(1)
  k = s32[] constant(0)
  t0 = (s32[], f32[]) tuple(k, u)
  w = (s32[], f32[]) while(t0), condition=cond, body=body
  g = f32[] get-tuple-element(w), index=1
  ROOT lt = pred[] compare(g, v), direction=LT
}
ENTRY main {
  x = f32[8] parameter(0)
  ROOT s = f32[8] sort(x), dimensions={0}, to_apply=lt
}
"""
    r = _compile(tmp_path, text)
    assert r.exit_code == 1, r.output
    assert "error: cannot compile sort s: the computation lt it calls has tuple t0" in r.output


def _nested_whiles(depth: int) -> str:
    out = ["HloModule nw", "", "cond {", "  c = f32[2] parameter(0)", "  ROOT f = pred[] constant(false)", "}",
           "b0 {", "  q0 = f32[2] parameter(0)", "  ROOT n0 = f32[2] negate(q0)", "}"]
    for k in range(1, depth):
        out += [f"b{k} {{", f"  q{k} = f32[2] parameter(0)",
                f"  ROOT w{k} = f32[2] while(q{k}), condition=cond, body=b{k - 1}", "}"]
    out += ["ENTRY main {", "  x = f32[2] parameter(0)",
            f"  ROOT y = f32[2] while(x), condition=cond, body=b{depth - 1}", "}"]
    return "\n".join(out) + "\n"


def test_loops_nested_a_hundred_deep_compile(tmp_path):
    r = _compile(tmp_path, _nested_whiles(100))
    assert r.exit_code == 0, r.output


def test_loops_nested_past_the_limit_are_a_located_error(tmp_path):
    r = _compile(tmp_path, _nested_whiles(240))
    assert r.exit_code == 1, r.output
    assert "error: control flow nested more than 200 levels deep" in r.output
    assert r.output.rstrip().endswith("^")

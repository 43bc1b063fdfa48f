"""Tuple-shaped entry parameters, flattened into one parameter per array leaf: numbering,
names, the entry layout and input_output_alias, and a config that names the leaves. (Their
values against XLA: `tuple_parameter` in tests/ops/test_single_device.py.)"""
from __future__ import annotations

from aotc.frontend import parse_hlo
from aotc.frontend.config import parse_config
from aotc.frontend.signature import resolve_signature
from aotc.frontend.tuple_params import flatten_tuple_parameters
from aotc.hlo.opcodes import Op
from aotc.hlo.verifier import verify
from aotc.ops.registry import shape_rule

MODEL = """\
HloModule m, input_output_alias={ {1}: (1, {1,0}, may-alias) }, entry_computation_layout={(f32[2]{0}, (f32[3,2]{0,1}, (s32[4]{0}, f32[2]{0})), u8[])->(f32[3,2]{1,0}, s32[4]{0})}

ENTRY main {
  a = f32[2] parameter(0)
  p = (f32[3,2]{0,1}, (s32[4], f32[2])) parameter(1)
  u = u8[] parameter(2)
  x = f32[3,2]{0,1} get-tuple-element(p), index=0
  q = (s32[4], f32[2]) get-tuple-element(p), index=1
  n = s32[4] get-tuple-element(q), index=0
  one = s32[] constant(1)
  ones = s32[4] broadcast(one), dimensions={}
  m = s32[4] add(n, ones)
  ROOT t = (f32[3,2]{1,0}, s32[4]) tuple(x, m)
}
"""


def test_leaves_become_parameters():
    m = flatten_tuple_parameters(parse_hlo(MODEL, "m.hlo"))
    verify(m, MODEL, shape_rule)
    params = m.entry_computation.parameters
    assert [(p.name, p.parameter_number, p.shape.text()) for p in params] == [
        ("a", 0, "f32[2]"), ("p_0", 1, "f32[3,2]{0,1}"), ("p_1_0", 2, "s32[4]"), ("p_1_1", 3, "f32[2]"),
        ("u", 4, "u8[]")]
    p = m.entry_computation.get("p")
    assert p.opcode == Op.TUPLE and p.operands == ("p_0", "p_1")
    assert m.entry_computation.get("p_1").operands == ("p_1_0", "p_1_1")
    assert [s.text() for s in m.entry_params] == ["f32[2]{0}", "f32[3,2]{0,1}", "s32[4]{0}", "f32[2]{0}", "u8[]"]
    assert [(a.output_index, a.param_number, a.param_index) for a in m.aliases] == [((1,), 2, ())]


def test_signature_and_config():
    m = flatten_tuple_parameters(parse_hlo(MODEL, "m.hlo"))
    sig = resolve_signature(m)
    assert sig.signature_text() == ("(a: f32[2], p_0: f32[3,2]{0,1}, p_1_0: variable s32[4], p_1_1: f32[2], "
                                    "u: u8[]) -> (x: f32[3,2])")
    cfg = parse_config("feeds:\n  - id: p_0\n    name: weights\n  - id: 0\n  - id: p_1_1\n  - id: u\n"
                       "variables:\n  - id: 2\n    name: counter\n", "cfg.yaml")
    sig = resolve_signature(m, cfg)
    assert [(f.name, f.param_number, f.kind) for f in sig.feeds] == [
        ("weights", 1, "arg"), ("arg1", 0, "arg"), ("arg2", 3, "arg"), ("arg3", 4, "arg"), ("counter", 2, "variable")]


def test_modules_without_tuple_parameters_are_unchanged():
    m = parse_hlo("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(x)\n}\n")
    assert flatten_tuple_parameters(m) is m

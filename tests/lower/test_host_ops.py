"""Ops that talk to the application, as lowering sees them: which custom calls compile
(targets named by --custom-call / the config's `custom_calls`, docs/custom_calls.md) and
the located errors for the rest, typed FFI attributes, and that infeed/outfeed/send/recv
are never dead code and run in program order."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

import aotc
from aotc.cli import main

CALL = """HloModule m

ENTRY main {
  x = f32[8]{0} parameter(0)
  ROOT c = f32[8]{0} custom-call(x), custom_call_target="%s", backend_config=%s
}
"""


def compile_text(tmp_path, text: str, config: str | None = None, **opts):
    hlo = tmp_path / "m.hlo"
    hlo.write_text(text)
    cfg = None
    if config is not None:
        cfg = tmp_path / "cfg.yaml"
        cfg.write_text(config)
    return aotc.compile(str(hlo), config=str(cfg) if cfg else None, out=str(tmp_path / "libm"),
                        options=aotc.CompileOptions(emit=(), **opts))


def test_unknown_target_is_a_located_error_pointing_to_the_docs(tmp_path):
    with pytest.raises(aotc.AotcError) as e:
        compile_text(tmp_path, CALL % ("my_op", '""'))
    msg = e.value.format()
    assert "m.hlo:5:" in msg and '"my_op"' in msg and "docs/custom_calls.md" in msg and "--custom-call my_op" in msg


@pytest.mark.parametrize("target", ["xla_python_cpu_callback", "xla_ffi_python_cpu_callback"])
def test_python_callbacks_get_their_own_error(tmp_path, target):
    with pytest.raises(aotc.AotcError) as e:
        compile_text(tmp_path, CALL % (target, '""'), custom_calls=())
    assert "a Python callback cannot run in compiled C" in e.value.format() and "m.hlo:5:" in e.value.format()


def test_debug_print_with_side_effect_is_refused_not_dropped(tmp_path):
    text = """HloModule m

ENTRY main {
  x = f32[8]{0} parameter(0)
  cb = () custom-call(x), custom_call_target="xla_ffi_python_cpu_callback", custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, backend_config={callback = 94370 : ui64}
  ROOT n = f32[8]{0} negate(x)
}
"""
    with pytest.raises(aotc.AotcError) as e:
        compile_text(tmp_path, text)
    assert "a Python callback cannot run in compiled C" in e.value.format()


def test_config_and_cli_name_the_targets(tmp_path):
    res = compile_text(tmp_path, CALL % ("my.op-1", "{k = 7 : ui8, f = -2.5e-01 : f64, b = true, s = \"a\\\"b\"}"),
                       config="custom_calls: [my.op-1]\n")
    h = open(res.h_path).read()
    assert "extern int m_cc_my_op_1(const m_call* call);" in h
    c = open(res.c_path).read()
    assert '{"k", m_ATTR_I64, "ui8", INT64_C(7), 0.0, 0}' in c
    assert '{"f", m_ATTR_F64, "f64", 0, -0.25, 0}' in c
    assert '{"b", m_ATTR_BOOL, "", 1, 0.0, 0}' in c
    assert '{"s", m_ATTR_STR, "", 0, 0.0, "a\\"b"}' in c
    hlo = tmp_path / "m.hlo"
    r = CliRunner().invoke(main, ["compile", str(hlo), "-o", str(tmp_path / "libn"), "--emit", "c,h",
                                  "--custom-call", "my.op-1"])
    assert r.exit_code == 0, r.output


def test_config_custom_calls_errors_name_the_key(tmp_path):
    with pytest.raises(aotc.AotcError) as e:
        compile_text(tmp_path, CALL % ("a", '""'), config="custom_calls: [a, a]\n")
    assert "custom_calls[1]" in e.value.format() and "twice" in e.value.format()
    with pytest.raises(aotc.AotcError) as e:
        compile_text(tmp_path, CALL % ("a", '""'), config="custom_calls: a\n")
    assert "custom_calls" in e.value.format()


def test_an_attribute_aotc_cannot_pass_is_a_located_error(tmp_path):
    with pytest.raises(aotc.AotcError) as e:
        compile_text(tmp_path, CALL % ("a", "{d = array<i64: 1, 2>}"), custom_calls=("a",))
    assert "m.hlo:5:" in e.value.format() and "backend_config" in e.value.format()
    with pytest.raises(aotc.AotcError) as e:
        compile_text(tmp_path, CALL % ("a", "{d = 300 : ui8}"), custom_calls=("a",))
    assert "does not fit ui8" in e.value.format()


def test_two_targets_spelling_one_identifier_get_two_names(tmp_path):
    text = """HloModule m

ENTRY main {
  x = f32[8]{0} parameter(0)
  a = f32[8]{0} custom-call(x), custom_call_target="op.a"
  ROOT b = f32[8]{0} custom-call(a), custom_call_target="op_a"
}
"""
    h = open(compile_text(tmp_path, text, custom_calls=("op.a", "op_a")).h_path).read()
    names = re.findall(r"extern int (\w+)\(", h)
    assert len(names) == 2 and len(set(names)) == 2


ORDERED = """HloModule m

ENTRY main {
  x = f32[8]{0} parameter(0)
  t = token[] after-all()
  o1 = token[] outfeed(x, t)
  n = f32[8]{0} negate(x)
  o2 = token[] outfeed(n, t)
  i = (f32[8]{0}, token[]) infeed(t)
  o3 = token[] outfeed(x, t)
  ROOT r = f32[8]{0} add(x, x)
}
"""


def test_feeds_whose_tokens_nothing_uses_are_kept_in_program_order(tmp_path):
    c = open(compile_text(tmp_path, ORDERED).c_path).read()
    body = c[c.index("static void m_execute("):]
    calls = re.findall(r"\bk_(o1|o2|i|o3)\(", body)
    assert calls == ["o1", "o2", "i", "o3"]


TUPLES = """HloModule m

ENTRY main {
  tin = token[] parameter(0)
  x = f32[3]{0} parameter(1)
  in = ((f32[3]{0}, s32[]), token[]) infeed(tin)
  d = (f32[3]{0}, s32[]) get-tuple-element(in), index=0
  v = f32[3]{0} get-tuple-element(d), index=0
  k = s32[] get-tuple-element(d), index=1
  z = f32[3]{0} add(v, x)
  t1 = token[] get-tuple-element(in), index=1
  pair = (f32[3]{0}, s32[]) tuple(z, k)
  t2 = token[] outfeed(pair, t1)
  za = f32[3]{0} add-dependency(z, t2)
  ROOT r = (f32[3]{0}, token[]) tuple(za, t2)
}
"""


def test_tuple_shaped_feeds_pass_one_buffer_per_leaf_and_tokens_have_no_buffer(tmp_path):
    res = compile_text(tmp_path, TUPLES)
    c, h = open(res.c_path).read(), open(res.h_path).read()
    assert "signature: (x: f32[3], tin: token) -> (za: f32[3], token)" in h
    assert "#define M_NUM_ARGS 1" in h and "#define M_NUM_RESULTS 1" in h
    assert "The signature's tokens carry no data" in h
    feeds = re.findall(r"m_buffer bufs\[(\d)\] = \{\{m_TYPE_F32, 1, b0_dims, (\(void\*\)a0|r0), 12u\}, "
                       r"\{m_TYPE_S32, 0, b1_dims, (\(void\*\)a1|r1), 4u\}\};", c)
    assert len(feeds) == 2  # the infeed fills two buffers, the outfeed reads two


SEND_RECV_TUPLES = """HloModule m

ENTRY main {
  x = f32[3]{0} parameter(0)
  k = s32[] parameter(1)
  t = token[] after-all()
  d = (f32[3]{0}, s32[]) tuple(x, k)
  s = ((f32[3]{0}, s32[]), u32[], token[]) send(d, t), channel_id=2
  sd = token[] send-done(s), channel_id=2
  r = ((f32[3]{0}, s32[]), u32[], token[]) recv(sd), channel_id=3
  rd = ((f32[3]{0}, s32[]), token[]) recv-done(r), channel_id=3
  v = (f32[3]{0}, s32[]) get-tuple-element(rd), index=0
  ROOT y = f32[3]{0} get-tuple-element(v), index=0
}
"""


def test_tuple_shaped_send_and_recv(tmp_path):
    res = compile_text(tmp_path, SEND_RECV_TUPLES)
    c, h = open(res.c_path).read(), open(res.h_path).read()
    assert "/* send channels: 2; recv channels: 3 (m_ERR_INDEX for another) */" in h
    assert len(re.findall(r"m_buffer bufs\[2\]", c)) == 2
    body = c[c.index("static void m_execute("):]
    assert re.findall(r"\bk_(s|sd|r|rd)(?:_flat)?\(", body) == ["s", "sd", "r", "rd"]

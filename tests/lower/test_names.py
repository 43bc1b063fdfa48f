"""The name supply: unique identifiers under adversarial HLO names, the same names
for the same requests, names that collide with nothing left as spelled, and the
emitter's refusal to drop or duplicate a definition. Numeric checks of colliding
modules against XLA are in tests/ops/test_name_collisions.py."""
import dataclasses
import random
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aotc.driver import frontend, generate
from aotc.emit_c.source import emit_source
from aotc.kernel import ir as K
from aotc.lower.names import NameSupply
from aotc.options import CompileOptions

# names over a tiny alphabet collide often: `a.1`, `a_1`, `a-1`, `a_1_2`, ...
_NAMES = st.lists(st.text("a1._-", min_size=1, max_size=5), max_size=40)


def _requests(supply: NameSupply, names: list[str]) -> list[str]:
    out = []
    for n in names:
        out += [supply.kernel("p", n), supply.constant("p", n), supply.scalar_function(n),
                supply.program("p", n), supply.kernel("q", n)]
    return out


@settings(max_examples=200, deadline=None)
@given(_NAMES)
def test_unique_and_identifiers(names):
    supply = NameSupply(reserved=("p_execute",))
    got = _requests(supply, sorted(set(names)))
    assert len(got) == len(set(got))
    assert all(g.isidentifier() for g in got)
    kernels = {g for g in got if g.startswith("k_")}
    # a kernel's companions (`_args`, `_range`) are never another kernel's name
    assert not {k + d for k in kernels for d in ("_args", "_range")} & set(got)
    assert not {p + "_execute" for p in got if p.startswith("p_")} & set(got)


@settings(max_examples=100, deadline=None)
@given(_NAMES)
def test_deterministic_and_memoized(names):
    a, b = NameSupply(), NameSupply()
    first = _requests(a, names)
    assert first == _requests(b, names)
    assert _requests(a, names) == first  # asking again gives the same names


def test_readable_and_stable():
    s = NameSupply()
    assert s.kernel("m", "add.5") == "k_add_5"
    assert s.constant("m", "weights") == "c_weights"
    assert s.scalar_function("max.1") == "r_max_1"
    assert s.program("m", "body.3") == "m_body_3"
    assert s.scalar_function("max.1") == "r_max_1"  # shared by every program
    # a name nothing collides with keeps its spelling whatever else is in the module
    rng = random.Random(0)
    for _ in range(20):
        others = [f"x{rng.randrange(9)}.{rng.randrange(9)}" for _ in range(10)]
        s = NameSupply()
        for o in others:
            s.kernel("m", o)
        assert s.kernel("m", "add.5") == "k_add_5"


def test_collisions_resolved_in_request_order():
    s = NameSupply()
    assert [s.constant("m", n) for n in ("w.1", "w_1", "w_1_2", "w_1.2")] == \
        ["c_w_1", "c_w_1_2", "c_w_1_2_2", "c_w_1_2_3"]
    # the same HLO name in two programs is two kernels
    assert s.kernel("m", "result#0") == "k_result_0"
    assert s.kernel("m_body", "result#0") == "k_result_0_2"


def test_companion_names_are_reserved():
    s = NameSupply()
    assert s.kernel("m", "x_range") == "k_x_range"
    assert s.kernel("m", "x") == "k_x_2"  # k_x would define k_x_range again
    s = NameSupply(reserved=("m_execute",))
    assert s.program("m", "execute") == "m_execute_2"  # the main program's m_execute is taken
    assert s.program("m", "body") == "m_body"
    assert s.kernel("m", "z") == "k_z"


def test_local_scope():
    s = NameSupply()
    s.constant("m", "s.x")  # c_s_x
    local = s.local()
    assert local.slot("x") == "s_x"
    assert local.slot("x.0#1") == "s_x_0_o1"
    assert local.slot("x_0#1") == "s_x_0_o1_2"
    assert local.slot("x") == "s_x"
    assert s.local().slot("x") == "s_x"  # each program its own scope


_PARALLEL = """HloModule m
ENTRY main {
  x = f32[256,128] parameter(0)
  m = f32[256,128] exponential(x)
  m_range = f32[256,128] negate(x)
  m_args = f32[256,128] abs(x)
  ROOT t = (f32[256,128], f32[256,128], f32[256,128]) tuple(m, m_range, m_args)
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_kernel_companions_do_not_clash_in_c(tmp_path):
    fe = frontend("m.hlo", None, CompileOptions(), text=_PARALLEL)
    gen = generate(fe, str(tmp_path / "libm"), CompileOptions())
    assert any(k.parallel for k in gen.lowered.program.kernels)
    assert "k_m_range(void* ctx" in gen.c_text and "static void k_m_range_2(" in gen.c_text
    (tmp_path / "libm.c").write_text(gen.c_text)
    (tmp_path / gen.header_name).write_text(gen.h_text)
    cc = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", str(tmp_path / "libm.c")],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr[:3000]


def _program(text: str):
    fe = frontend("m.hlo", None, CompileOptions(), text=text)
    return generate(fe, "libm", CompileOptions()).lowered.program


_REDUCE = """HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[4,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(x, z), dimensions={1}, to_apply=sum
}
"""


def test_emitter_never_drops_a_scalar_function():
    p = _program(_REDUCE)
    (f,) = p.functions
    c = emit_source(p.__class__(**{**_fields(p), "functions": (f, f)}), "m.h")
    assert c.count("static inline float r_sum(") == 1  # the same text twice: shared, defined once
    (let,) = f.body  # v = p0 + p1
    swapped = K.Let(let.var, K.Binary("+", let.value.b, let.value.a, let.value.ty))
    other = dataclasses.replace(f, body=(swapped,))
    assert other != f
    with pytest.raises(AssertionError, match="two different scalar functions named r_sum"):
        emit_source(p.__class__(**{**_fields(p), "functions": (f, other)}), "m.h")


def test_emitter_asserts_unique_kernels_and_slots():
    p = _program(_REDUCE)
    k = p.kernels[0]
    with pytest.raises(AssertionError, match="defined twice: k_r"):
        emit_source(p.__class__(**{**_fields(p), "kernels": (k, k)}), "m.h")
    s = p.slots[0]
    with pytest.raises(AssertionError, match="slot C names defined twice"):
        emit_source(p.__class__(**{**_fields(p), "slots": p.slots + (s,)}), "m.h")


def _fields(p) -> dict:
    return {f: getattr(p, f) for f in p.__dataclass_fields__}

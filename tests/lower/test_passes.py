"""Lowering passes, each as HLO text in -> checked IR out."""
from aotc.frontend import parse_hlo
from aotc.lower.delayout import remove_layouts
from aotc.lower.fusion import plan_fusion
from aotc.lower.inline import MAX_PREFIX, inline_calls
from aotc.lower.order import topo_order
from aotc.lower.simplify import simplify

CALLS = """
HloModule m

inner {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] subtract(a, b)
}

ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  c1 = f32[4] call(x, y), to_apply=inner
  c2 = f32[4] call(c1, y), to_apply=inner
  ROOT r = f32[4] add(c2, x)
}
"""


def test_inline_splices_bodies_and_maps_names():
    m, renamed = inline_calls(parse_hlo(CALLS))
    entry = m.entry_computation
    ops = [i.opcode for i in entry.instructions]
    assert "call" not in ops and ops.count("subtract") == 2
    assert renamed == {"c1": "c1.s", "c2": "c2.s"}
    assert entry.get("c2.s").operands == ("c1.s", "y")
    assert entry.get("r").operands == ("c2.s", "x")
    assert [c.name for c in m.computations] == ["main"]  # the callee is gone


BITCAST = """
HloModule m

ENTRY main {
  p = f32[2,3]{0,1} parameter(0)
  ROOT b = f32[6]{0} bitcast(p)
}
"""


def test_bitcast_of_column_major_becomes_transpose_then_reshape():
    m = remove_layouts(parse_hlo(BITCAST))
    entry = m.entry_computation
    t = entry.get("b.to_physical")
    assert t.opcode == "transpose" and t.attr("dimensions") == (1, 0) and t.shape.dims == (3, 2)
    b = entry.get("b")
    assert b.opcode == "reshape" and b.operands == ("b.to_physical",) and b.shape.dims == (6,)


def test_row_major_bitcast_is_a_reshape():
    m = remove_layouts(parse_hlo(BITCAST.replace("{0,1}", "{1,0}")))
    assert [i.opcode for i in m.entry_computation.instructions] == ["parameter", "reshape"]


def test_bitcast_to_column_major_result():
    text = BITCAST.replace("f32[2,3]{0,1}", "f32[6]{0}").replace("f32[6]{0} bitcast", "f32[2,3]{0,1} bitcast")
    m = remove_layouts(parse_hlo(text))
    e = m.entry_computation
    assert e.get("b.physical").shape.dims == (3, 2)
    assert e.get("b").opcode == "transpose" and e.get("b").attr("dimensions") == (1, 0)


FUSE = """
HloModule m

ENTRY main {
  x = f32[8] parameter(0)
  c = f32[] constant(2)
  bc = f32[8] broadcast(c), dimensions={}
  e = f32[8] exponential(x)
  m1 = f32[8] multiply(e, bc)
  m2 = f32[8] add(e, x)
  t = (f32[8], f32[8]) tuple(m1, m2)
  g = f32[8] get-tuple-element(t), index=0
  ROOT out = (f32[8], f32[8]) tuple(g, m2)
}
"""


def test_simplify_forwards_tuples_and_fusion_materializes_shared_values():
    m = parse_hlo(FUSE)
    m, live = simplify(m, [("out", (0,)), ("out", (1,))])
    assert live == [("m1", ()), ("m2", ())]
    names = [i.name for i in m.entry_computation.instructions]
    assert "g" not in names and "t" not in names and "out" not in names
    plan = plan_fusion(m.entry_computation, {"m1", "m2"})
    assert plan.roles["e"] == "kernel"  # used by two kernels: computed once
    assert plan.roles["bc"] == "fused" and plan.roles["c"] == "scalar"
    assert plan.order == ("e", "m1", "m2")


def test_topo_order_moves_forward_references_only():
    text = """
HloModule m

ENTRY main {
  ROOT r = f32[2] add(a, b)
  a = f32[2] parameter(0)
  b = f32[2] negate(a)
}
"""
    comp = parse_hlo(text).entry_computation
    assert [i.name for i in topo_order(comp)] == ["a", "b", "r"]


def _nested_calls(depth: int) -> str:
    out = ["HloModule nest", "", "f0 {", "  p0 = f32[4] parameter(0)", "  ROOT r0 = f32[4] negate(p0)", "}"]
    for k in range(1, depth):
        out += [f"f{k} {{", f"  p{k} = f32[4] parameter(0)", f"  ROOT r{k} = f32[4] call(p{k}), to_apply=f{k - 1}",
                "}"]
    out += ["ENTRY main {", "  x = f32[4] parameter(0)", f"  ROOT y = f32[4] call(x), to_apply=f{depth - 1}", "}"]
    return "\n".join(out) + "\n"


def test_inline_thousands_of_nested_calls_without_recursion():
    """Each level is a frame on an explicit stack: no Python recursion, work linear in depth."""
    m, renamed = inline_calls(parse_hlo(_nested_calls(3000)))
    short, _ = inline_calls(parse_hlo(_nested_calls(3)))
    assert short.entry_computation.root == "y.r2.r1.r0"  # shallow chains keep every call site
    entry = m.entry_computation
    assert [i.opcode for i in entry.instructions] == ["parameter", "negate"]
    (neg,) = [i for i in entry.instructions if i.opcode == "negate"]
    assert neg.operands == ("x",) and entry.root == neg.name == renamed["y"]
    assert neg.name.endswith(".r2.r1.r0") and len(neg.name) <= MAX_PREFIX + 2  # names stay short
    assert [c.name for c in m.computations] == ["main"]

"""The verifier: malformed but parseable modules, each with its exact located
error; every corpus module and model verifies cleanly."""
from __future__ import annotations

from pathlib import Path

import pytest

from aotc.errors import AotcError
from aotc.frontend import parse_hlo
from aotc.hlo.ir import Computation, Instruction, Loc, Module
from aotc.hlo.shape import array
from aotc.hlo.verifier import verify as verify_structure
from aotc.ops.registry import shape_rule


def verify(module, source_text=None):
    """The verifier as the driver runs it: with the op definitions' shape rules."""
    return verify_structure(module, source_text, shape_rule)

DATA = Path(__file__).resolve().parents[1] / "data"
SOURCES = sorted(DATA.glob("corpus/*/model*.hlo")) + sorted(DATA.glob("models/*.hlo"))

H = "HloModule m\n\n"
ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
NEG = "f {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] negate(x)\n}\n\n"

# name -> (module text, expected first line of the error)
BAD = {
    "undefined_operand": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] add(x, y)\n}\n",
        "v.hlo:5:8: error: a: operand y is not defined in computation main",
    ),
    "operand_from_other_computation": (
        H + NEG + "ENTRY main {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] add(p, a)\n}\n",
        "v.hlo:10:8: error: n: operand a is not defined in computation main (it is defined in computation f)",
    ),
    "wrong_arity": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] add(x)\n}\n",
        "v.hlo:5:8: error: a: add takes 2 operands, got 1",
    ),
    "unary_arity": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] negate(x, x)\n}\n",
        "v.hlo:5:8: error: a: negate takes 1 operand, got 2",
    ),
    "dangling_to_apply": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT c = f32[2] call(x), to_apply=g\n}\n",
        "v.hlo:5:8: error: c: to_apply=g names no computation",
    ),
    "dangling_branch": (
        H + NEG + "ENTRY main {\n  i = s32[] parameter(0)\n  p = f32[2] parameter(1)\n"
        "  ROOT c = f32[2] conditional(i, p, p), branch_computations={f, g}\n}\n",
        "v.hlo:11:8: error: c: branch_computations=g names no computation",
    ),
    "mutual_recursion": (
        H + "f {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] call(x), to_apply=g\n}\n\n"
        "g {\n  y = f32[2] parameter(0)\n  ROOT b = f32[2] call(y), to_apply=f\n}\n\n"
        "ENTRY main {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] call(p), to_apply=f\n}\n",
        "v.hlo:5:8: error: recursive computation call via to_apply=g: f -> g -> f",
    ),
    "self_recursion": (
        H + "f {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] call(x), to_apply=f\n}\n\n"
        "ENTRY main {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] call(p), to_apply=f\n}\n",
        "v.hlo:5:8: error: recursive computation call via to_apply=f: f -> f",
    ),
    "instruction_cycle": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  a = f32[2] add(x, b)\n  b = f32[2] add(x, a)\n"
        "  ROOT c = f32[2] negate(b)\n}\n",
        "v.hlo:5:3: error: a depends on itself: a -> b -> a",
    ),
    "uses_itself": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] add(x, a)\n}\n",
        "v.hlo:5:8: error: a depends on itself: a -> a",
    ),
    "missing_parameter_number": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(2)\n  ROOT a = f32[2] add(x, y)\n}\n",
        "v.hlo:5:3: error: computation main has parameter(2) but no parameter(1); parameters must be numbered 0..n-1",
    ),
    "duplicate_parameter_number": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(0)\n  ROOT a = f32[2] add(x, y)\n}\n",
        "v.hlo:5:3: error: y: parameter number 0 is already used by x",
    ),
    "reduce_dimensions": (
        H + ADD + "ENTRY main {\n  x = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[2] reduce(x, z), dimensions={2}, to_apply=add\n}\n",
        "v.hlo:12:8: error: r: reduce dimensions={2} out of range for operand f32[2,3] (rank 2)",
    ),
    "broadcast_dimensions_count": (
        H + "ENTRY main {\n  x = f32[3] parameter(0)\n  ROOT b = f32[2,3] broadcast(x), dimensions={0,1}\n}\n",
        "v.hlo:5:8: error: b: broadcast dimensions={0,1} has 2 entries but operand f32[3] has rank 1",
    ),
    "broadcast_dimensions_range": (
        H + "ENTRY main {\n  x = f32[3] parameter(0)\n  ROOT b = f32[2,3] broadcast(x), dimensions={2}\n}\n",
        "v.hlo:5:8: error: b: broadcast dimensions={2} out of range for result f32[2,3] (rank 2)",
    ),
    "transpose_not_permutation": (
        H + "ENTRY main {\n  x = f32[2,3] parameter(0)\n  ROOT t = f32[3,2] transpose(x), dimensions={1,1}\n}\n",
        "v.hlo:5:8: error: t: transpose dimensions={1,1} is not a permutation of 0..1 for operand f32[2,3]",
    ),
    "get_tuple_element_index": (
        H + "ENTRY main {\n  x = (f32[2], s32[]) parameter(0)\n  ROOT g = f32[2] get-tuple-element(x), index=2\n}\n",
        "v.hlo:5:8: error: g: get-tuple-element index=2 out of range for operand (f32[2], s32[]) with 2 elements",
    ),
    "get_tuple_element_of_array": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT g = f32[2] get-tuple-element(x), index=0\n}\n",
        "v.hlo:5:8: error: g: get-tuple-element operand x is not a tuple: f32[2]",
    ),
    "iota_dimension": (
        H + "ENTRY main {\n  ROOT i = s32[3,4] iota(), iota_dimension=2\n}\n",
        "v.hlo:4:8: error: i: iota iota_dimension=2 out of range for result s32[3,4] (rank 2)",
    ),
    "dot_contracting_dims": (
        H + "ENTRY main {\n  x = f32[2,3] parameter(0)\n  y = f32[3,2] parameter(1)\n"
        "  ROOT d = f32[2,2] dot(x, y), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n}\n",
        "v.hlo:6:8: error: d: dot lhs_contracting_dims={2} out of range for lhs f32[2,3] (rank 2)",
    ),
    "entry_layout_parameter": (
        "HloModule m, entry_computation_layout={(f32[3]{0})->f32[2]{0}}\n\n"
        "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] negate(x)\n}\n",
        "v.hlo:4:3: error: parameter x is f32[2] but entry_computation_layout gives parameter 0 as f32[3]",
    ),
    "entry_layout_result": (
        "HloModule m, entry_computation_layout={(f32[2]{0})->f32[3]{0}}\n\n"
        "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] negate(x)\n}\n",
        "v.hlo:5:8: error: ROOT a is f32[2] but entry_computation_layout gives the result as f32[3]",
    ),
    "entry_layout_parameter_count": (
        "HloModule m, entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}\n\n"
        "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] negate(x)\n}\n",
        "v.hlo:3:7: error: entry_computation_layout has 2 parameters but ENTRY main has 1",
    ),
    "shape_mismatch": (
        H + "ENTRY main {\n  x = f32[2,3] parameter(0)\n  ROOT a = f32[3,2] add(x, x)\n}\n",
        "v.hlo:5:8: error: shape mismatch: add(f32[2,3], f32[2,3]) is f32[2,3], declared f32[3,2]",
    ),
    "shape_rule_error": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  y = f32[3] parameter(1)\n  ROOT a = f32[2] add(x, y)\n}\n",
        "v.hlo:6:8: error: operands of add must have equal dimensions: add(f32[2], f32[3])",
    ),
    "shape_inside_fusion": (
        H + "fused {\n  a = f32[2] parameter(0)\n  ROOT m = f32[3] multiply(a, a)\n}\n\n"
        "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT f = f32[3] fusion(x), kind=kLoop, calls=fused\n}\n",
        "v.hlo:5:8: error: shape mismatch: multiply(f32[2], f32[2]) is f32[2], declared f32[3]",
    ),
    "call_operand_count": (
        H + NEG + "ENTRY main {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] call(p, p), to_apply=f\n}\n",
        "v.hlo:10:8: error: c: call to_apply=f takes 1 parameter, expected 2",
    ),
    "call_result_shape": (
        H + NEG + "ENTRY main {\n  p = f32[2] parameter(0)\n  ROOT c = f32[3] call(p), to_apply=f\n}\n",
        "v.hlo:10:8: error: c: call f returns f32[2], declared f32[3]",
    ),
    "while_body_result": (
        H + "c {\n  s = s32[] parameter(0)\n  z = s32[] constant(3)\n  ROOT lt = pred[] compare(s, z), direction=LT\n}\n\n"
        "b {\n  t = s32[] parameter(0)\n  ROOT f = f32[] convert(t)\n}\n\n"
        "ENTRY main {\n  p = s32[] parameter(0)\n  ROOT w = s32[] while(p), condition=c, body=b\n}\n",
        "v.hlo:16:8: error: w: while body=b returns f32[], expected s32[]",
    ),
    "while_condition_result": (
        H + "c {\n  s = s32[] parameter(0)\n  ROOT z = s32[] negate(s)\n}\n\n"
        "b {\n  t = s32[] parameter(0)\n  ROOT n = s32[] negate(t)\n}\n\n"
        "ENTRY main {\n  p = s32[] parameter(0)\n  ROOT w = s32[] while(p), condition=c, body=b\n}\n",
        "v.hlo:15:8: error: w: while condition=c returns s32[], expected pred[]",
    ),
    "conditional_branch_operand": (
        H + NEG + "ENTRY main {\n  i = s32[] parameter(0)\n  p = f32[2] parameter(1)\n  q = f32[3] parameter(2)\n"
        "  ROOT c = f32[2] conditional(i, p, q), branch_computations={f, f}\n}\n",
        "v.hlo:12:8: error: c: conditional branch f takes f32[2] but operand 2 is f32[3]",
    ),
    "reducer_parameter_count": (
        H + "add {\n  a = f32[] parameter(0)\n  ROOT s = f32[] negate(a)\n}\n\n"
        "ENTRY main {\n  x = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add\n}\n",
        "v.hlo:11:8: error: r: reduce to_apply=add takes 1 parameter, expected 2",
    ),
    "alias_missing_parameter": (
        "HloModule m, input_output_alias={ {0}: (1, {}, may-alias) }\n\n"
        "ENTRY main {\n  x = f32[2] parameter(0)\n  n = f32[2] negate(x)\n  ROOT t = (f32[2], f32[2]) tuple(n, x)\n}\n",
        "v.hlo:3:7: error: input_output_alias {0}: (1, {}): ENTRY main has no parameter 1",
    ),
    "alias_shape": (
        "HloModule m, input_output_alias={ {1}: (0, {}, may-alias) }\n\n"
        "ENTRY main {\n  x = f32[2] parameter(0)\n  c = s32[] constant(1)\n  ROOT t = (f32[2], s32[]) tuple(x, c)\n}\n",
        "v.hlo:3:7: error: input_output_alias {1}: (0, {}): output {1} is s32[] but parameter x is f32[2]",
    ),
    "huge_parameter_number": (  # named, not counted up to: no list of 2**31 numbers
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] parameter(2147483648)\n}\n",
        "v.hlo:5:8: error: computation main has parameter(2147483648) but no parameter(1); parameters must be "
        "numbered 0..n-1",
    ),
    "while_without_computations": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT w = f32[2] while(x)\n}\n",
        "v.hlo:5:8: error: w: while needs condition= and body=, the computations it calls",
    ),
    "reduce_without_reducer": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  z = f32[] constant(0)\n"
            "  ROOT r = f32[] reduce(x, z), dimensions={0}\n}\n",
        "v.hlo:6:8: error: r: reduce needs to_apply=, the computation it calls",
    ),
    "first_error_in_source_order": (
        H + "ENTRY main {\n  x = f32[2] parameter(0)\n  a = f32[3] negate(x)\n  ROOT b = f32[2] add(x, y)\n}\n",
        "v.hlo:5:3: error: shape mismatch: negate(f32[2]) is f32[2], declared f32[3]",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_module(case):
    text, expected = BAD[case]
    module = parse_hlo(text, "v.hlo")
    with pytest.raises(AotcError) as info:
        verify(module, text)
    assert info.value.format().splitlines()[0] == expected


def test_error_shows_source_line_and_caret():
    text, _ = BAD["undefined_operand"]
    with pytest.raises(AotcError) as info:
        verify(parse_hlo(text, "v.hlo"), text)
    assert info.value.format().splitlines()[1:] == ["  ROOT a = f32[2] add(x, y)", "       ^"]


def test_forward_references_are_fine():
    text = H + "ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] add(x, b)\n  b = f32[2] negate(x)\n}\n"
    verify(parse_hlo(text, "v.hlo"), text)


# modules the parser cannot produce, built by hand

F2 = array("f32", [2])


def _module(comps, entry="main") -> Module:
    return Module("m", tuple(comps), entry, source="hand.hlo")


def test_missing_entry():
    comp = Computation("f", (Instruction("x", "parameter", F2, parameter_number=0),), "x")
    with pytest.raises(AotcError) as info:
        verify(_module([comp], entry="main"))
    assert info.value.format() == "hand.hlo: error: module has no ENTRY computation"


def test_missing_root():
    loc = Loc("hand.hlo", 3, 1)
    comp = Computation("main", (Instruction("x", "parameter", F2, parameter_number=0, loc=Loc("hand.hlo", 4, 3)),),
                       "y", is_entry=True, loc=loc)
    with pytest.raises(AotcError) as info:
        verify(_module([comp]))
    assert info.value.format() == "hand.hlo:3:1: error: ROOT y of computation main is not defined"


def test_duplicate_computation_names():
    def comp(line, entry=False):
        return Computation("main", (Instruction(f"x{line}", "parameter", F2, parameter_number=0),), f"x{line}",
                           is_entry=entry, loc=Loc("hand.hlo", line, 1))
    with pytest.raises(AotcError) as info:
        verify(_module([comp(3), comp(8, True)]))
    assert info.value.format() == "hand.hlo:8:1: error: duplicate computation name main (first defined at line 3)"


def test_bad_layout():
    comp = Computation("main", (Instruction("x", "parameter", array("f32", [2, 3], [0, 0]), parameter_number=0,
                                            loc=Loc("hand.hlo", 4, 3)),), "x", is_entry=True)
    with pytest.raises(AotcError) as info:
        verify(_module([comp]))
    assert info.value.format() == "hand.hlo:4:3: error: x: layout {0,0} of f32[2,3] is not a permutation of 0..1"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_verifies(path):
    text = path.read_text()
    verify(parse_hlo(text, str(path)), text)

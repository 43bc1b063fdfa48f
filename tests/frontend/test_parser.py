"""The HLO text parser on real exports and on hand-written forms of every syntax."""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from aotc.errors import AotcError
from aotc.frontend import parse_hlo, parse_hlo_file, parse_shape
from aotc.hlo.dtypes import DTYPES
from aotc.hlo.ir import Alias, DimLabels, PadDim, Raw, SliceDim, Window, WindowDim
from aotc.hlo.opcodes import OPCODES
from aotc.hlo.shape import ArrayShape, TupleShape, array

DATA = Path(__file__).resolve().parents[1] / "data"
FILES = sorted(DATA.glob("corpus/*/model*.hlo")) + sorted(DATA.glob("models/*.hlo"))


def _ids(paths):
    return [str(p.relative_to(DATA)) for p in paths]


def _instr(module, name):
    for _, i in module.instructions():
        if i.name == name:
            return i
    raise KeyError(name)


def test_corpus_is_present():
    assert len(FILES) >= 40


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_every_data_file_parses(path):
    m = parse_hlo_file(path)
    assert m.source == str(path)
    assert m.entry_computation.is_entry
    assert sum(c.is_entry for c in m.computations) == 1
    lines = path.read_text().split("\n")
    for c in m.computations:
        assert c.has(c.root)
        assert c.loc is not None and c.loc.file == str(path)
        for i in c.instructions:
            assert i.opcode in OPCODES
            # the location points at the instruction's name in the file
            line = lines[i.loc.line - 1]
            assert line[i.loc.col - 1:].lstrip("%").startswith(i.name + " ")
            if i.opcode == "parameter":
                assert i.parameter_number is not None and not i.operands
            if i.opcode == "constant":
                assert i.literal is not None


def test_entry_layout_and_header_attributes():
    m = parse_hlo_file(DATA / "corpus/op_conv_variants/model.opt.hlo")
    assert m.name == "jit_op_conv_variants"
    assert len(m.entry_params) == 7
    assert m.entry_params[0] == array("f32", [2, 4, 9, 9], [3, 2, 1, 0])
    assert m.entry_result == TupleShape((
        array("f32", [2, 6, 8, 10], [3, 2, 1, 0]), array("f32", [2, 6, 5, 5], [3, 2, 1, 0]),
        array("f32", [1, 5, 6, 6, 4], [4, 3, 2, 1, 0]), array("f32", [3, 3, 1, 4], [3, 2, 1, 0]),
    ))
    assert dict(m.header_attrs) == {
        "is_scheduled": Raw("true"),
        "allow_spmd_sharding_propagation_to_parameters": Raw("{true,true,true,true,true,true,true}"),
        "allow_spmd_sharding_propagation_to_output": Raw("{true,true,true,true}"),
    }


def test_convolution_window_and_dim_labels():
    m = parse_hlo_file(DATA / "corpus/op_conv_variants/model.hlo")
    conv = _instr(m, "conv_general_dilated.4")
    assert conv.attr("window") == Window((
        WindowDim(size=3, pad_lo=2, pad_hi=1, rhs_dilate=2), WindowDim(size=3, pad_lo=0, pad_hi=3, rhs_dilate=1),
    ))
    assert conv.attr("dim_labels") == DimLabels("bf01", "oi01", "bf01")
    grouped = _instr(m, "conv_general_dilated.5")
    assert grouped.attr("feature_group_count") == 2
    assert [d.stride for d in grouped.attr("window").dims] == [2, 2]
    batch = _instr(m, "conv_general_dilated.7")
    assert batch.attr("dim_labels") == DimLabels("f01b", "i01o", "01bf")
    assert batch.attr("batch_group_count") == 4


def test_padding_slice_and_dot_attributes():
    pad = _instr(parse_hlo_file(DATA / "corpus/op_pad/model.hlo"), "pad.5")
    assert pad.attr("padding") == (PadDim(-1, -2, 1), PadDim(2, -1, 2))
    sl = _instr(parse_hlo_file(DATA / "corpus/op_shape_ops/model.hlo"), "slice.4")
    assert sl.attr("slice") == (SliceDim(1, 4, 2), SliceDim(0, 3, 3), SliceDim(2, 5, 2))
    dot = _instr(parse_hlo_file(DATA / "corpus/op_dot_general_batch/model.hlo"), "dot_general.3")
    assert dot.attrs == (
        ("lhs_batch_dims", (2,)), ("lhs_contracting_dims", (4, 3)),
        ("rhs_batch_dims", (2,)), ("rhs_contracting_dims", (1, 0)),
    )


def test_control_flow_and_computation_references():
    m = parse_hlo_file(DATA / "corpus/op_while/model.opt.hlo")
    w = _instr(m, "while.2")
    assert w.attr("condition") == "region_1.4" and w.attr("body") == "region_0.1"
    fusion = _instr(m, "wrapped_add")
    assert fusion.attr("kind") == "kLoop" and fusion.attr("calls") == "wrapped_add_computation"
    call = _instr(m, "call.1")
    assert call.attr("frontend_attributes") == Raw('{xla_cpu_small_call="true"}')
    assert isinstance(_instr(m, "while.3").attr("backend_config"), Raw)
    cond = parse_hlo_file(DATA / "corpus/tf_cond/model.hlo")
    branches = [i for _, i in cond.instructions() if i.opcode == "conditional"]
    assert branches and all(isinstance(i.attr("branch_computations"), tuple) for i in branches)
    topk = parse_hlo_file(DATA / "corpus/tf_topk/model.opt.hlo")
    cc = _instr(topk, "custom-call")
    assert cc.attr("custom_call_target") == "TopK"
    assert cc.attr("called_computations") == ("compare-greater-than.1.clone",)
    assert cc.called_computations() == ("compare-greater-than.1.clone",)


def test_input_output_alias():
    m = parse_hlo_file(DATA / "corpus/tf_variable/model.hlo")
    assert m.aliases == (Alias((0,), 0, (), "may-alias"),)
    m = parse_hlo("HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1, 2}: (1, {3}, must-alias), "
                  "{3}: (2, {}) }\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert m.aliases == (Alias((0,), 0, ()), Alias((1, 2), 1, (3,), "must-alias"), Alias((3,), 2, (), "may-alias"))


def test_stack_frames():
    m = parse_hlo_file(DATA / "corpus/op_while/model.opt.hlo")
    sf = m.stack_frames
    assert sf.present == ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
    assert sf.file_names == ((1, "gen.py"),)
    assert sf.function_names[8] == (9, "_.<locals>.f.<locals>.<lambda>")
    assert sf.file_locations[0] == (1, "{file_name_id=1 function_name_id=1 line=1514 end_line=1514 column=13 end_column=19}")
    assert sf.stack_frames[-1] == (30, "{file_location_id=24 parent_frame_id=28}")
    assert parse_hlo_file(DATA / "corpus/op_while/model.hlo").stack_frames is None


def test_elided_and_bf16_constants():
    m = parse_hlo_file(DATA / "models/ssd_mobilenet_tf.hlo")
    elided = _instr(m, "add.2")
    assert elided.literal.elided and elided.literal.values is None
    assert elided.shape == array("bf16", [1917], [0])
    scalar = _instr(m, "truediv.3").literal.values
    assert scalar.dtype == ml_dtypes.bfloat16 and scalar.shape == ()
    assert scalar == ml_dtypes.bfloat16(0.1001)


def test_parameters_out_of_order():
    m = parse_hlo_file(DATA / "corpus/op_sort/model.hlo")
    region = m.computation("region_0.1")
    assert [i.parameter_number for i in region.instructions if i.opcode == "parameter"] == [4, 5, 0, 1, 2, 3]
    assert [p.name for p in region.parameters] == ["sort.6", "sort.7", "sort.8", "sort.9", "sort.10", "sort.11"]


HAND = """HloModule hand, entry_computation_layout={(f32[2]{0}, s32[])->(f32[2]{0}, s32[])}

/* a block comment before a computation */
%cmp (a: f32[], b: f32[]) -> pred[] {
  %b = f32[] parameter(1) // parameters in any order
  ROOT %lt = pred[] compare(%a, %b), direction=LT, type=TOTALORDER
  %a = f32[] parameter(0)
}

ENTRY main {
  p1 = s32[] parameter(1)
  p0 = f32[2]{0} parameter(0)
  old = f32[2]{0} add(f32[2]{0} %p0, /*lhs*/ f32[2]{0} %p0), metadata={op_name="a\\"b{" source_line=3}
  s = f32[2]{0} sort(old), dimensions={0}, is_stable=true, to_apply=%cmp
  ROOT r = (f32[2]{0}, s32[]) tuple(s, p1), sharding={replicated}
  dyn = f32[<=8]{0} parameter(2)
  tiled = f32[2,3]{1,0:T(8,128)S(1)} parameter(3)
  t = token[] after-all()
}
"""


def test_hand_written_forms():
    m = parse_hlo(HAND, "hand.hlo")
    cmp = m.computation("cmp")
    assert cmp.has_signature and not cmp.is_entry
    assert cmp.root == "lt" and cmp.instructions[-1].name == "a"  # ROOT not last
    assert cmp.get("lt").attrs == (("direction", "LT"), ("type", "TOTALORDER"))
    main = m.entry_computation
    assert m.entry == "main" and not main.has_signature
    assert main.root == "r"
    assert main.get("old").operands == ("p0", "p0")  # old-style operands with shapes
    assert main.get("old").attr("metadata") == Raw('{op_name="a\\"b{" source_line=3}')
    assert main.get("s").attr("to_apply") == "cmp" and main.get("s").attr("is_stable") is True
    assert main.get("dyn").shape == ArrayShape(DTYPES["f32"], (8,), (0,), (True,))
    assert main.get("tiled").shape == array("f32", [2, 3], [1, 0])  # tiles and memory space ignored
    assert main.get("t").shape.is_token
    assert main.get("p0").loc.line == 12 and main.get("p0").loc.col == 3
    assert cmp.get("lt").loc.line == 6 and cmp.get("lt").loc.col == 8
    assert cmp.loc.line == 4 and cmp.loc.col == 1


def test_root_defaults_to_last_instruction():
    m = parse_hlo("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(a)\n}\n")
    assert m.entry_computation.root == "b"


def test_entry_not_last_and_computation_named_like_a_section():
    text = ("HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT c = f32[] call(a), to_apply=FileNames\n}\n\n"
            "FileNames {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n")
    m = parse_hlo(text)
    assert m.entry == "e" and [c.name for c in m.computations] == ["e", "FileNames"]


def _constant(text_shape: str, literal: str):
    m = parse_hlo(f"HloModule m\nENTRY e {{\n  ROOT c = {text_shape} constant({literal})\n}}\n")
    return m.entry_computation.get("c").literal


def _bits(values, dtype):
    return np.array(values, dtype=dtype).tobytes()


def test_float_literals():
    lit = _constant("f32[2,3]{1,0}", "{ /*i0=0*/ { 0.5, 1e-05, nan }, /*i0=1*/ { -nan, inf, -inf } }")
    v = lit.values
    assert v.dtype == np.float32 and v.shape == (2, 3)
    assert v[0, 0] == 0.5 and v[0, 1] == np.float32(1e-05)
    assert np.isnan(v[0, 2]) and not np.signbit(v[0, 2])
    assert np.isnan(v[1, 0]) and np.signbit(v[1, 0])
    assert v[1, 1] == np.inf and v[1, 2] == -np.inf
    payload = _constant("f32[2]", "{nan(0x1), -nan(0x7fffff)}").values
    assert payload.view(np.uint32).tolist() == [0x7F800001, 0xFFFFFFFF]
    assert _constant("f64[]", "0.1").values == 0.1
    assert _constant("f16[2]", "{0.099976, 6.55e+04}").values.tobytes() == _bits([0.1, 65504], np.float16)
    assert _constant("bf16[3]", "{1.102, 2.203, 3.297}").values.tobytes() == _bits(
        [1.1015625, 2.203125, 3.296875], ml_dtypes.bfloat16)
    assert _constant("f8e4m3fn[2]", "{448, -0.5}").values.tobytes() == _bits([448, -0.5], ml_dtypes.float8_e4m3fn)


def test_integer_pred_and_complex_literals():
    assert _constant("u64[]", "18446744073709551615").values == np.uint64(2**64 - 1)
    assert _constant("s64[2]", "{-9223372036854775808, 9223372036854775807}").values.tolist() == [-2**63, 2**63 - 1]
    assert _constant("u32[]", "2147483648").values == np.uint32(2**31)
    assert _constant("s8[3]", "{-128, 0, 127}").values.tolist() == [-128, 0, 127]
    assert _constant("s4[2]", "{-8, 7}").values.astype(int).tolist() == [-8, 7]
    assert _constant("pred[]", "true").values.dtype == np.bool_
    assert _constant("pred[3]", "{1, 0, 1}").values.tolist() == [True, False, True]
    assert _constant("pred[3]", "{true, false, true}").values.tolist() == [True, False, True]
    assert _constant("c64[]", "(0, 1)").values == np.complex64(1j)
    c = _constant("c128[2]", "{(1, 2), (-0, -0.5)}").values
    assert c.dtype == np.complex128 and c.tolist() == [1 + 2j, -0.5j] and np.signbit(c[1].real)


def test_tuple_empty_and_zero_size_literals():
    lit = _constant("(f32[], (s32[2], pred[]))", "( 1, ( {2, 3}, false ) )")
    assert lit.values[0].values == np.float32(1)
    assert lit.values[1].values[0].values.tolist() == [2, 3]
    assert _constant("f32[0]", "{}").values.shape == (0,)
    assert _constant("f32[2,0]", "{ {}, {} }").values.shape == (2, 0)
    assert _constant("(f32[], s32[])", "{...}").values is None


def test_big_literal_takes_the_bulk_path_and_matches_the_exact_path():
    rng = np.random.default_rng(1)
    values = rng.standard_normal((64, 33)).astype(np.float32)
    values[3, 4], values[5, 6] = np.inf, -0.0
    rows = ", ".join("{ " + ", ".join(np.char.mod("%.9g", r)) + " }" for r in values)
    bulk = _constant("f32[64,33]", "{ " + rows + " }").values
    exact = _constant("f32[64,33]", "{ " + rows + " } // forces the exact path\n").values
    assert bulk.tobytes() == values.tobytes() == exact.tobytes()
    ints = rng.integers(-2**31, 2**31, size=(10, 10), dtype=np.int64)
    text = "{ " + ", ".join("{" + ", ".join(map(str, r)) + "}" for r in ints.tolist()) + " }"
    assert _constant("s32[10,10]", text).values.tolist() == ints.tolist()


def test_shapes():
    assert parse_shape("(f32[2,3]{1,0}, (s32[], token[]), pred[<=4])") == TupleShape((
        array("f32", [2, 3], [1, 0]),
        TupleShape((array("s32", []), ArrayShape(DTYPES["token"], ()))),
        ArrayShape(DTYPES["pred"], (4,), None, (True,)),
    ))
    assert parse_shape("f32[]{}").layout == ()
    assert parse_shape("()") == TupleShape(())
    deep = "(" * 150 + "f32[]" + ")" * 150
    assert parse_shape(deep) is not None


def test_unknown_opcode_is_a_located_error():
    with pytest.raises(AotcError) as info:
        parse_hlo("HloModule m\nENTRY e {\n  ROOT x = f32[] foo(), k=1\n}\n", "u.hlo")
    assert info.value.format().split("\n")[0] == "u.hlo:3:18: error: unknown opcode 'foo'"


def test_every_table_opcode_is_accepted():
    lines = [f"  i{n} = f32[] {op}()" for n, op in enumerate(sorted(OPCODES)) if op not in ("parameter", "constant")]
    m = parse_hlo("HloModule m\nENTRY e {\n" + "\n".join(lines) + "\n  ROOT z = f32[] constant(0)\n}\n")
    assert {i.opcode for i in m.entry_computation.instructions} == set(OPCODES) - {"parameter"}


def test_names_reused_across_computations_are_renamed():
    """A name may recur in another computation (XLA's parser accepts it and renames); aotc
    keeps ENTRY's names and renames the others to the first free `name.N`."""
    from aotc.hlo.printer import print_module

    text = ("HloModule m\n\nf {\n  x = f32[2] parameter(0)\n  x.1 = f32[2] negate(x)\n  ROOT y = f32[2] abs(x.1)\n}\n\n"
            "g {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] exponential(x)\n}\n\n"
            "ENTRY main {\n  x = f32[2] parameter(0)\n  y = f32[2] call(x), to_apply=f\n"
            "  ROOT z = f32[2] call(y), to_apply=g\n}\n")
    m = parse_hlo(text)
    names = {c.name: [i.name for i in c.instructions] for c in m.computations}
    assert names == {"main": ["x", "y", "z"], "f": ["x.2", "x.1", "y.1"], "g": ["x.3", "y.2"]}
    f = m.computation("f")
    assert f.get("x.1").operands == ("x.2",) and f.root == "y.1" and f.get("y.1").operands == ("x.1",)
    assert parse_hlo(print_module(m)) == m

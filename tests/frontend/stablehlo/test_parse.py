"""The StableHLO front end on the corpus and on hand-written forms: what each construct
becomes in the HLO IR (names, broadcasts, constants, regions, captures, aliases), and
that the driver picks the parser by content."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from aotc.cli import main
from aotc.frontend import is_mlir, parse_model, parse_stablehlo
from aotc.hlo.ir import Alias, DimLabels, PadDim, SliceDim
from aotc.hlo.opcodes import Op
from aotc.hlo.shape import TupleShape, array
from aotc.hlo.verifier import verify
from aotc.ops.registry import shape_rule

DATA = Path(__file__).resolve().parents[2] / "data"
FILES = sorted(DATA.glob("corpus/*/model.mlir"))


def module(sig: str, text: str, extra: str = ""):
    src = "module @m {\n  func.func public @main" + sig + " {\n" + text + "\n  }\n" + extra + "}\n"
    m = parse_stablehlo(src, "m.mlir")
    verify(m, src, shape_rule)
    return m


def entry(m):
    return {i.name: i for i in m.entry_computation.instructions}


def test_every_corpus_case_has_mlir():
    assert len(FILES) == 24


@pytest.mark.parametrize("path", FILES, ids=[p.parent.name for p in FILES])
def test_every_corpus_file_parses_and_verifies(path):
    text = path.read_text()
    m = parse_model(text, str(path))
    verify(m, text, shape_rule)
    assert m.entry_computation.is_entry and m.entry == "main"
    names = [i.name for _, i in m.instructions()]
    assert len(names) == len(set(names)), "instruction names are unique in the module"
    order = [c.name for c in m.computations]
    for c in m.computations:  # callees come before their callers
        for _, i in ((c, i) for i in c.instructions):
            for callee in i.called_computations():
                assert order.index(callee) < order.index(c.name)


def test_names_come_from_ssa_names_and_arguments():
    m = module("(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32>",
               "    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>\n"
               "    %cst = stablehlo.constant dense<2.0> : tensor<4xf32>\n"
               "    %1 = stablehlo.multiply %0, %cst : tensor<4xf32>\n    return %1 : tensor<4xf32>")
    e = entry(m)
    assert set(e) == {"Arg_0", "Arg_1", "add.0", "constant.cst", "multiply.1"}
    assert e["add.0"].opcode is Op.ADD and e["add.0"].operands == ("Arg_0", "Arg_1")
    assert m.entry_computation.root == "multiply.1"
    assert e["add.0"].loc.line == 3 and e["add.0"].loc.col == 5


def test_parameter_names_from_locations_and_arg_info():
    src = ('module @m {\n  func.func public @main(%arg0: tensor<f32> loc("x"), %arg1: tensor<f32> '
           '{jax.arg_info = "params[\'w\']"}, %arg2: tensor<f32> loc(#loc2)) -> tensor<f32> {\n'
           "    %0 = stablehlo.add %arg0, %arg1 : tensor<f32> loc(#loc3)\n"
           "    %1 = stablehlo.add %0, %arg2 : tensor<f32>\n    return %1 : tensor<f32>\n  } loc(#loc)\n} loc(#loc)\n"
           '#loc = loc(unknown)\n#loc2 = loc("bias")\n#loc3 = loc("f.py":3:4)\n')
    m = parse_stablehlo(src, "m.mlir")
    assert [p.name for p in m.entry_computation.parameters] == ["x", "params__w__", "bias"]


def test_broadcast_in_dim_expanding_size_one_is_reshape_then_broadcast():
    m = module("(%arg0: tensor<1x3xf32>) -> tensor<4x3xf32>",
               "    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<4x3xf32>\n"
               "    return %0 : tensor<4x3xf32>")
    e = entry(m)
    assert e["reshape.0"].shape == array("f32", [3]) and e["reshape.0"].operands == ("Arg_0",)
    assert e["broadcast.0"].operands == ("reshape.0",) and e["broadcast.0"].attr("dimensions") == (1,)


def test_dense_literals():
    m = module("(%arg0: tensor<f32>) -> tensor<f32>",
               "    %a = stablehlo.constant dense<[[1, -2], [3, 4]]> : tensor<2x2xi32>\n"
               "    %b = stablehlo.constant dense<0xFF800000> : tensor<3xf32>\n"
               '    %c = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>\n'
               "    %d = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
               "    %e = stablehlo.constant dense<(1.5, -2.0)> : tensor<complex<f32>>\n"
               "    %f = stablehlo.constant dense<[4294967295, 0]> : tensor<2xui32>\n"
               "    %g = stablehlo.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>\n"
               "    %h = stablehlo.constant dense_resource<__elided__> : tensor<2xf32>\n"
               "    return %arg0 : tensor<f32>")
    v = {k.split(".")[1]: i.literal for k, i in entry(m).items() if i.opcode is Op.CONSTANT}
    assert v["a"].values.tolist() == [[1, -2], [3, 4]] and v["a"].values.dtype == np.int32
    assert np.all(np.isneginf(v["b"].values)) and v["b"].values.shape == (3,)
    assert v["c"].values.tolist() == [1.0, 2.0]
    assert v["d"].values.tolist() == [True, False]
    assert v["e"].values.item() == complex(1.5, -2.0) and v["e"].values.dtype == np.complex64
    assert v["f"].values.tolist() == [4294967295, 0] and v["f"].values.dtype == np.uint32
    assert v["g"].values[0] == 1.0 and np.isnan(v["g"].values[1])
    assert v["h"].elided


def test_generic_and_pretty_forms_give_the_same_module():
    pretty = module("(%arg0: tensor<4xf32>) -> tensor<4xi1>",
                    "    %0 = stablehlo.compare LT, %arg0, %arg0, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> "
                    "tensor<4xi1>\n    return %0 : tensor<4xi1>")
    generic = module("(%arg0: tensor<4xf32>) -> tensor<4xi1>",
                     '    %0 = "stablehlo.compare"(%arg0, %arg0) <{comparison_direction = '
                     "#stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type TOTALORDER>}> : "
                     "(tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n    return %0 : tensor<4xi1>")
    assert pretty == generic
    assert entry(pretty)["compare.0"].attrs == (("direction", "LT"), ("type", "TOTALORDER"))


def test_shape_ops_attributes():
    m = module("(%arg0: tensor<4x6xf32>) -> tensor<2x3xf32>",
               "    %cst = stablehlo.constant dense<0.0> : tensor<f32>\n"
               "    %0 = stablehlo.pad %arg0, %cst, low = [1, 0], high = [0, 2], interior = [0, 1] : "
               "(tensor<4x6xf32>, tensor<f32>) -> tensor<5x13xf32>\n"
               "    %1 = stablehlo.slice %0 [0:4:2, 1:7:2] : (tensor<5x13xf32>) -> tensor<2x3xf32>\n"
               "    return %1 : tensor<2x3xf32>")
    e = entry(m)
    assert e["pad.0"].attr("padding") == (PadDim(1, 0, 0), PadDim(0, 2, 1))
    assert e["slice.1"].attr("slice") == (SliceDim(0, 4, 2), SliceDim(1, 7, 2))


def test_convolution_window_and_labels():
    m = parse_stablehlo((DATA / "corpus/op_conv_variants/model.mlir").read_text())
    conv = [i for _, i in m.instructions() if i.opcode is Op.CONVOLUTION]
    assert conv[0].attr("dim_labels") == DimLabels("bf01", "oi01", "bf01")
    w = conv[0].attr("window").dims
    assert [(d.size, d.pad_lo, d.pad_hi, d.rhs_dilate) for d in w] == [(3, 2, 1, 2), (3, 0, 3, 1)]
    assert conv[1].attr("feature_group_count") == 2 and conv[4].attr("batch_group_count") == 4


def test_multi_result_reduce_is_a_tuple_read_with_get_tuple_element():
    m = parse_stablehlo((DATA / "corpus/op_reduce/model.mlir").read_text())
    argmax = m.computation("argmax")
    (red,) = [i for i in argmax.instructions if i.opcode is Op.REDUCE]
    assert isinstance(red.shape, TupleShape) and len(red.operands) == 4
    body = m.computation(red.attr("to_apply"))
    assert [p.shape for p in body.parameters] == [array("f32", []), array("s32", []), array("f32", []),
                                                  array("s32", [])]
    root = argmax.root_instruction
    assert root.opcode is Op.GET_TUPLE_ELEMENT and root.attr("index") == 1


def test_while_and_case_carry_captured_values_in_tuples():
    m = module("(%arg0: tensor<f32>, %arg1: tensor<i32>) -> tensor<f32>",
               "    %c = stablehlo.constant dense<3> : tensor<i32>\n"
               "    %0:2 = stablehlo.while(%i = %arg1, %x = %arg0) : tensor<i32>, tensor<f32>\n"
               "    cond {\n      %1 = stablehlo.compare LT, %i, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
               "      stablehlo.return %1 : tensor<i1>\n    } do {\n"
               "      %1 = stablehlo.add %x, %arg0 : tensor<f32>\n"
               "      %2 = stablehlo.add %i, %c : tensor<i32>\n"
               "      stablehlo.return %2, %1 : tensor<i32>, tensor<f32>\n    }\n"
               '    %3 = "stablehlo.case"(%arg1) ({\n      stablehlo.return %0#1 : tensor<f32>\n    }, {\n'
               "      %4 = stablehlo.negate %arg0 : tensor<f32>\n      stablehlo.return %4 : tensor<f32>\n"
               "    }) : (tensor<i32>) -> tensor<f32>\n    return %3 : tensor<f32>")
    e = entry(m)
    loop = e["while.0"]
    assert loop.shape == TupleShape((array("s32", []), array("f32", []), array("f32", [])))  # + captured %arg0
    body = m.computation(loop.attr("body"))
    assert len(body.root_instruction.operands) == 3
    assert any(i.opcode is Op.CONSTANT for i in body.instructions), "the constant %c is cloned into the body"
    cond = e["conditional.3"]
    assert [e[o].shape for o in cond.operands[1:]] == [TupleShape((array("f32", []),)),
                                                       TupleShape((array("f32", []),))]


def test_calls_top_k_and_aliasing():
    m = module("(%arg0: tensor<4x10xf32> {tf.aliasing_output = 1 : i32}) -> (tensor<4x3xf32>, tensor<4x10xf32>)",
               "    %values, %indices = chlo.top_k(%arg0, k = 3) : tensor<4x10xf32> -> "
               "(tensor<4x3xf32>, tensor<4x3xi32>)\n"
               "    %0 = call @f(%arg0) : (tensor<4x10xf32>) -> tensor<4x10xf32>\n"
               "    return %values, %0 : tensor<4x3xf32>, tensor<4x10xf32>",
               "  func.func private @f(%arg0: tensor<4x10xf32>) -> tensor<4x10xf32> {\n"
               "    %0 = chlo.erf %arg0 : tensor<4x10xf32> -> tensor<4x10xf32>\n    return %0 : tensor<4x10xf32>\n  }\n")
    e = entry(m)
    assert e["topk.values"].attr("k") == 3 and e["topk.values"].attr("largest") is True
    assert e["call.0"].attr("to_apply") == "f" and [c.name for c in m.computations] == ["f", "main"]
    assert m.aliases == (Alias((1,), 0, ()),)


def test_file_type_is_chosen_by_content(tmp_path):
    assert is_mlir("// a comment\nmodule @m {}") and is_mlir("func.func @main() {}")
    assert not is_mlir("HloModule m\n")
    path = tmp_path / "model.txt"  # the suffix says nothing
    path.write_text((DATA / "corpus/tf_matmul/model.mlir").read_text())
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 0, res.output
    assert "dot" in res.output

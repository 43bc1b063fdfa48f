"""Malformed StableHLO text: exactly one error, the first, at its exact line:col with a
caret line, never a traceback; the verifier's errors point into the MLIR source too."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from aotc.cli import main
from aotc.errors import AotcError
from aotc.frontend import parse_model, parse_stablehlo
from aotc.hlo.verifier import verify
from aotc.ops.registry import shape_rule

H = "module @m {\n  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
T = "\n  }\n}\n"
R = "    return %0 : tensor<4xf32>"
ADD = "    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>\n"


def body(text: str) -> str:
    """A module whose @main holds `text` (its ops start at line 3)."""
    return H + text + T


def func(sig: str, text: str) -> str:
    return "module @m {\n  func.func " + sig + " {\n" + text + "\n  }\n}\n"


REDUCE_CAPTURE = func(
    "public @main(%arg0: tensor<4xf32>, %arg1: tensor<f32>) -> tensor<f32>",
    "    %cst = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "    %0 = stablehlo.reduce(%arg0 init: %cst) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
    "     reducer(%a: tensor<f32>, %b: tensor<f32>)  {\n"
    "      %1 = stablehlo.add %a, %arg1 : tensor<f32>\n"
    "      stablehlo.return %1 : tensor<f32>\n"
    "    }\n"
    "    return %0 : tensor<f32>")
ID = "    return %arg0 : tensor<f32>\n  }\n"

CASES = [
    ("empty", "", "1:1: error: empty input: expected 'module' or 'func.func'"),
    ("only_comment", "// nothing\n", "2:1: error: empty input: expected 'module' or 'func.func'"),
    ("unclosed_module", "module @m {\n", "2:1: error: unexpected end of input: the module is not closed"),
    ("unknown_op", body("    %0 = stablehlo.frobnicate %arg0 : tensor<4xf32>\n" + R),
     "3:10: error: aotc cannot read stablehlo.frobnicate yet"),
    ("unsupported_pretty", body("    %0 = stablehlo.frobnicate_more %arg0 : (tensor<4xf32>) -> tensor<4xf32>\n" + R),
     "3:10: error: aotc cannot read stablehlo.frobnicate_more yet"),
    ("unsupported_generic",
     body('    %0 = "chlo.frobnicate"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n' + R),
     "3:10: error: aotc cannot read chlo.frobnicate yet"),
    ("deprecated_generic",
     body('    %0 = "stablehlo.einsum"(%arg0, %arg0) <{einsum_config = "i,i->i"}> : '
          "(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n" + R),
     "3:10: error: aotc cannot read stablehlo.einsum: it is deprecated in StableHLO and has no HLO counterpart "
     "(re-export it with a current JAX)"),
    ("dynamic_pretty", body("    %0 = stablehlo.dynamic_reshape %arg0, %arg0 : (tensor<4xf32>, tensor<4xf32>) -> "
                            "tensor<4xf32>\n" + R),
     "3:10: error: aotc cannot read stablehlo.dynamic_reshape: it needs dynamic shapes, which aotc does "
     "not support (export with static shapes)"),
    ("quantized_generic",
     body('    %0 = "stablehlo.uniform_dequantize"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n' + R),
     "3:10: error: aotc cannot read stablehlo.uniform_dequantize: it needs quantized types, which aotc "
     "does not support"),
    ("undefined_value", body("    %0 = stablehlo.add %arg0, %arg9 : tensor<4xf32>\n" + R),
     "3:31: error: use of undefined value %arg9"),
    ("bad_char", body("    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32> $\n" + R),
     "3:53: error: unexpected character '$'"),
    ("unterminated_string", body('    %0 = stablehlo.add %arg0, %arg0 {x = "abc} : tensor<4xf32>\n' + R),
     "3:42: error: unterminated string"),
    ("bad_element_type", body("    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf33>\n" + R),
     "3:48: error: aotc cannot read the element type 'f33' yet"),
    ("dynamic_dim", body("    %0 = stablehlo.add %arg0, %arg0 : tensor<?xf32>\n" + R),
     "3:46: error: dynamic dimensions ('?') are not supported"),
    ("missing_colon", body("    %0 = stablehlo.add %arg0, %arg0 tensor<4xf32>\n" + R),
     "3:37: error: expected ':' before the op's type, found 'tensor'"),
    ("bad_direction",
     body("    %0 = stablehlo.compare XX, %arg0, %arg0, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n" + R),
     "3:28: error: unknown comparison direction 'XX' (expected one of EQ, NE, LT, LE, GT, GE)"),
    ("bad_compare_type",
     body("    %0 = stablehlo.compare LT, %arg0, %arg0, REAL : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n" + R),
     "3:46: error: unknown comparison type 'REAL' (expected one of FLOAT, TOTALORDER, SIGNED, UNSIGNED, NOTYPE)"),
    ("dense_too_few", body("    %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<4xf32>\n" + R),
     "3:49: error: dimension 0 has 3 elements, the type says 4"),
    ("dense_too_many", body("    %0 = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<4xf32>\n" + R),
     "3:56: error: too many elements in dimension 0 (expected 4)"),
    ("dense_bad_value", body("    %0 = stablehlo.constant dense<[1.0, 2.0, abc, 4.0]> : tensor<4xf32>\n" + R),
     "3:46: error: invalid f32 value 'abc'"),
    ("dense_int_range", body("    %c = stablehlo.constant dense<300> : tensor<i8>\n" + ADD + R),
     "3:35: error: value 300 is out of range for s8"),
    ("dense_hex_size", body('    %0 = stablehlo.constant dense<"0x0000803F0000"> : tensor<4xf32>\n' + R),
     "3:35: error: hexadecimal literal has 6 bytes, a tensor of 4 f32 needs 16"),
    ("dense_bool", body("    %c = stablehlo.constant dense<maybe> : tensor<i1>\n" + ADD + R),
     "3:35: error: invalid i1 value 'maybe' (expected true or false)"),
    ("dense_unclosed", body("    %0 = stablehlo.constant dense<[1.0, 2.0 : tensor<4xf32>\n" + R),
     "3:35: error: unclosed '[' in a dense literal"),
    ("result_count", body("    %0:2 = stablehlo.add %arg0, %arg0 : tensor<4xf32>\n" + R),
     "3:5: error: stablehlo.add gives 1 result but 2 are named"),
    ("missing_return", body(ADD.rstrip("\n")), "2:65: error: function @main does not end with a return"),
    ("op_after_return", body(R + "\n" + ADD.rstrip("\n")), "3:5: error: return must be the last op of function @main"),
    ("return_count", body(ADD + "    return %0, %0 : tensor<4xf32>, tensor<4xf32>"),
     "4:5: error: @main returns 2 values but its type declares 1"),
    ("return_type", func("public @main(%arg0: tensor<4xf32>) -> tensor<4xi32>", "    return %arg0 : tensor<4xf32>"),
     "3:5: error: @main returns f32[4] where its type declares s32[4]"),
    ("no_main", "module @m {\n  func.func @f(%arg0: tensor<f32>) -> tensor<f32> {\n" + ID
     + "  func.func @g(%arg0: tensor<f32>) -> tensor<f32> {\n" + ID + "}\n",
     "1:1: error: the module has no function @main to compile"),
    ("duplicate_func", "module @m {\n  func.func @main(%arg0: tensor<f32>) -> tensor<f32> {\n" + ID
     + "  func.func @main(%arg0: tensor<f32>) -> tensor<f32> {\n" + ID + "}\n",
     "5:13: error: duplicate function @main"),
    ("undefined_callee", body("    %0 = call @nowhere(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n" + R),
     "3:10: error: call to undefined function @nowhere"),
    ("broadcast_dims", body("    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<4xf32>) -> tensor<4xf32>\n" + R),
     "3:10: error: broadcast_in_dim dims [0, 1] do not fit f32[4] -> f32[4]"),
    ("slice_stride", body("    %0 = stablehlo.slice %arg0 [0:4:] : (tensor<4xf32>) -> tensor<4xf32>\n" + R),
     "3:37: error: expected the slice stride, found ']'"),
    ("captured_in_reduce", REDUCE_CAPTURE,
     "6:30: error: aotc cannot read a value captured by the region of stablehlo.reduce yet "
     "(%arg1 is defined outside it)"),
    ("generic_operand_types", body('    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<4xf32>) -> tensor<4xf32>\n' + R),
     "3:10: error: \"stablehlo.add\" has 2 operands but 1 operand types"),
    ("generic_no_function_type", body('    %0 = "stablehlo.add"(%arg0, %arg0) : tensor<4xf32>\n' + R),
     "3:42: error: expected a function type '(...) -> ...', found 'tensor'"),
    ("two_blocks", body('    %0 = "stablehlo.case"(%arg0) ({\n    ^bb0:\n      stablehlo.return %arg0 : tensor<4xf32>\n'
                        '    ^bb1:\n      stablehlo.return %arg0 : tensor<4xf32>\n    }) : (tensor<4xf32>) -> '
                        'tensor<4xf32>\n' + R),
     "6:5: error: regions with more than one block are not supported"),
    ("while_types", body("    %0 = stablehlo.while(%i = %arg0) : tensor<4xf32>, tensor<4xf32>\n    cond {\n"
                         "      stablehlo.return %i : tensor<4xf32>\n    } do {\n"
                         "      stablehlo.return %i : tensor<4xf32>\n    }\n" + R),
     "3:10: error: while has 1 loop variable but 2 types"),
    ("bad_conv_label", body("    %0 = stablehlo.convolution(%arg0, %arg0) dim_numbers = [b, q, 0]x[o, i, 0]->[b, f, 0], "
                            "window = {} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n" + R),
     "3:64: error: expected a dimension label (b, f, i, o or a number), found 'q'"),
    ("trailing_junk", body(ADD + R) + "junk\n", "7:1: error: expected end of input after the module, found 'junk'"),
    ("arg_result_number", func("public @main(%arg0#1: tensor<4xf32>) -> tensor<4xf32>", "    return %arg0 : tensor<4xf32>"),
     "2:26: error: an argument name cannot have a result number: '%arg0#1'"),
    ("gather_float_field", func(
        "public @main(%arg0: tensor<5x3xf32>, %arg1: tensor<4x1xi32>) -> tensor<4x3xf32>",
        '    %0 = "stablehlo.gather"(%arg0, %arg1)\n      <{dimension_numbers = #stablehlo.gather<offset_dims = [1], '
        'collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1e400>, slice_sizes = '
        'array<i64: 1, 3>}> : (tensor<5x3xf32>, tensor<4x1xi32>) -> tensor<4x3xf32>\n    return %0 : tensor<4x3xf32>'),
     "3:10: error: 'index_vector_dim' of stablehlo.gather must be an integer"),
    ("dot_dims_not_a_list", func(
        "public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x2xf32>) -> tensor<2x2xf32>",
        '    %0 = "stablehlo.dot_general"(%arg0, %arg1)\n      <{dot_dimension_numbers = #stablehlo.dot<'
        'lhs_contracting_dimensions = 1, rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf32>, tensor<3x2xf32>) '
        '-> tensor<2x2xf32>\n    return %0 : tensor<2x2xf32>'),
     "3:10: error: 'lhs_contracting_dimensions' of stablehlo.dot_general must be a list of integers"),
    ("concatenate_float_dimension", body(
        '    %0 = "stablehlo.concatenate"(%arg0) <{dimension = 1.5}> : (tensor<4xf32>) -> tensor<4xf32>\n' + R),
     "3:10: error: 'dimension' of stablehlo.concatenate must be an integer"),
]


@pytest.mark.parametrize("text,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed(text, expected):
    with pytest.raises(AotcError) as info:
        parse_stablehlo(text, "m.mlir")
    err = info.value
    assert err.format().split("\n")[0] == "m.mlir:" + expected
    line, col = map(int, expected.split(":")[:2])
    lines = err.format().split("\n")
    assert len(lines) == 3, "a located error shows the source line and a caret"
    assert lines[1] == text.split("\n")[line - 1]
    assert lines[2] == " " * (col - 1) + "^"


def test_enough_cases():
    assert len(CASES) >= 25


def test_verifier_errors_point_into_the_mlir():
    text = body("    %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>\n    return %arg0 : tensor<4xf32>")
    module = parse_model(text, "m.mlir")
    with pytest.raises(AotcError) as info:
        verify(module, text, shape_rule)
    assert info.value.format().split("\n")[0] == \
        "m.mlir:3:5: error: shape mismatch: add(f32[4], f32[4]) is f32[4], declared f32[8]"


def test_the_cli_reports_one_located_line(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(body("    %0 = stablehlo.frobnicate %arg0 : tensor<4xf32>\n" + R))
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 1
    assert f"{path}:3:10: error: aotc cannot read stablehlo.frobnicate yet" in res.output
    assert "Traceback" not in res.output


def test_invalid_utf8_in_mlir_is_located(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_bytes(body(ADD + "    // caf\xe9\n" + R).encode("latin-1"))
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 1
    assert f"{path}:4:11: error: invalid UTF-8 byte 0xe9" in res.output

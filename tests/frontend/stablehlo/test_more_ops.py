"""The less common StableHLO ops read into the HLO instruction XLA's converter builds:
opcode, shape and key attributes, in the pretty form JAX prints and the generic form."""
from __future__ import annotations

from aotc.frontend import parse_stablehlo
from aotc.hlo.ir import Raw, WindowDim
from aotc.hlo.opcodes import Op
from aotc.hlo.shape import TupleShape, array


def module(sig: str, text: str, extra: str = ""):
    src = "module @m {\n  func.func public @main" + sig + " {\n" + text + "\n  }\n" + extra + "}\n"
    return parse_stablehlo(src, "m.mlir")


def ops(m, opcode):
    return [i for _, i in m.instructions() if i.opcode is opcode]


def test_broadcast_puts_the_sizes_first():
    m = module("(%arg0: tensor<3xi32>) -> tensor<1x2x3xi32>",
               "    %0 = stablehlo.broadcast %arg0, sizes = [1, 2] : (tensor<3xi32>) -> tensor<1x2x3xi32>\n"
               "    return %0 : tensor<1x2x3xi32>")
    (bc,) = ops(m, Op.BROADCAST)
    assert bc.shape == array("s32", [1, 2, 3]) and bc.attr("dimensions") == (2,)


def test_map_and_select_and_scatter_regions():
    m = module("(%arg0: tensor<4xf32>, %arg1: tensor<2xf32>) -> tensor<4xf32>",
               '    %0 = "stablehlo.map"(%arg0, %arg0) <{dimensions = array<i64: 0>}> ({\n'
               "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      %1 = stablehlo.multiply %a, %b : tensor<f32>\n"
               "      stablehlo.return %1 : tensor<f32>\n    }) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
               "    %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
               '    %2 = "stablehlo.select_and_scatter"(%0, %arg1, %c) <{window_dimensions = array<i64: 2>, '
               "window_strides = array<i64: 2>, padding = dense<0> : tensor<1x2xi64>}> ({\n"
               "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
               "      %3 = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
               "      stablehlo.return %3 : tensor<i1>\n    }, {\n"
               "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      %3 = stablehlo.add %a, %b : tensor<f32>\n"
               "      stablehlo.return %3 : tensor<f32>\n"
               "    }) : (tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf32>\n    return %2 : tensor<4xf32>")
    (mp,) = ops(m, Op.MAP)
    assert mp.attr("dimensions") == (0,) and m.computation(mp.attr("to_apply")).root_instruction.opcode is Op.MULTIPLY
    (ss,) = ops(m, Op.SELECT_AND_SCATTER)
    assert ss.attr("window").dims == (WindowDim(2, 2),)
    assert m.computation(ss.attr("select")).root_instruction.opcode is Op.COMPARE
    assert m.computation(ss.attr("scatter")).root_instruction.opcode is Op.ADD


def test_custom_call_as_jax_prints_it():
    m = module("(%arg0: tensor<3x3xf32>) -> tensor<3x3xf32>",
               '    %4:2 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) {backend_config = "", mhlo.backend_config = '
               '{uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = '
               "[dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> "
               "(tensor<3x3xf32>, tensor<i32>)\n    return %4#0 : tensor<3x3xf32>")
    (cc,) = ops(m, Op.CUSTOM_CALL)
    assert cc.attr("custom_call_target") == "lapack_spotrf_ffi"
    # the typed-FFI attributes as XLA's converter carries them into HLO
    assert cc.shape == TupleShape((array("f32", [3, 3], (0, 1)), array("s32", [], ())))
    assert cc.attr("backend_config") == Raw("{uplo = 76 : ui8}")
    assert cc.attr("operand_layout_constraints") == Raw("{f32[3,3]{0,1}}")
    assert m.entry_computation.root_instruction.opcode is Op.GET_TUPLE_ELEMENT


def test_custom_call_generic_with_config_version_and_callee():
    m = module("(%arg0: tensor<f32>) -> tensor<f32>",
               '    %0 = "stablehlo.custom_call"(%arg0) <{call_target_name = "foo", backend_config = "cfg", '
               "api_version = 2 : i32, has_side_effect = true, called_computations = [@g]}> : "
               "(tensor<f32>) -> tensor<f32>\n    return %0 : tensor<f32>",
               "  func.func private @g(%arg0: tensor<f32>) -> tensor<f32> {\n    return %arg0 : tensor<f32>\n  }\n")
    (cc,) = ops(m, Op.CUSTOM_CALL)
    assert cc.attr("backend_config") == Raw('"cfg"') and cc.attr("api_version") == "API_VERSION_STATUS_RETURNING"
    assert cc.attr("called_computations") == ("g",) and cc.attr("custom_call_has_side_effect") is True


def test_rng_fft_and_linear_algebra():
    m = module("(%arg0: tensor<4xcomplex<f32>>, %arg1: tensor<3x3xf32>, %arg2: tensor<2xui64>) -> tensor<4xcomplex<f32>>",
               "    %0 = stablehlo.fft %arg0, type = FFT, length = [4] : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>\n"
               "    %s, %o = stablehlo.rng_bit_generator %arg2, algorithm = DEFAULT : (tensor<2xui64>) -> "
               "(tensor<2xui64>, tensor<3xui32>)\n"
               "    %a = stablehlo.constant dense<0.0> : tensor<f32>\n"
               "    %sh = stablehlo.constant dense<[2, 3]> : tensor<2xi64>\n"
               "    %1 = stablehlo.rng %a, %a, %sh, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<2xi64>) "
               "-> tensor<2x3xf32>\n"
               '    %2 = "stablehlo.cholesky"(%arg1) <{lower = true}> : (tensor<3x3xf32>) -> tensor<3x3xf32>\n'
               '    %3 = "stablehlo.triangular_solve"(%2, %arg1) <{left_side = true, lower = true, unit_diagonal = '
               "false, transpose_a = #stablehlo<transpose ADJOINT>}> : (tensor<3x3xf32>, tensor<3x3xf32>) -> "
               "tensor<3x3xf32>\n    return %0 : tensor<4xcomplex<f32>>")
    (fft,) = ops(m, Op.FFT)
    assert fft.attr("fft_type") == "FFT" and fft.attr("fft_length") == (4,)
    (rbg,) = ops(m, Op.RNG_BIT_GENERATOR)
    assert rbg.attr("algorithm") == "rng_default" and rbg.shape == TupleShape((array("u64", [2]), array("u32", [3])))
    (rng,) = ops(m, Op.RNG)
    assert rng.attr("distribution") == "rng_normal" and len(rng.operands) == 2 and rng.shape == array("f32", [2, 3])
    assert ops(m, Op.CHOLESKY)[0].attr("lower") is True
    ts = ops(m, Op.TRIANGULAR_SOLVE)[0]
    assert ts.attr("left_side") is True and ts.attr("unit_diagonal") is False and ts.attr("transpose_a") == "ADJOINT"


def test_batch_norm_training_is_a_tuple_and_dimension_size():
    m = module("(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<i32>",
               '    %0:3 = "stablehlo.batch_norm_training"(%x, %s, %s) <{epsilon = 1.000000e-03 : f32, feature_index = '
               "1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, "
               "tensor<3xf32>)\n"
               "    %1 = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>\n"
               "    return %1 : tensor<i32>")
    (bn,) = ops(m, Op.BATCH_NORM_TRAINING)
    assert bn.attr("epsilon") == Raw("0.001") and bn.attr("feature_index") == 1 and len(bn.shape.elements) == 3
    assert ops(m, Op.GET_DIMENSION_SIZE)[0].attr("dimensions") == (1,)


def test_tokens_infeed_outfeed_send_recv():
    m = module("(%arg0: tensor<2xf32>) -> tensor<2xf32>",
               "    %t = stablehlo.create_token : !stablehlo.token\n"
               '    %0:2 = "stablehlo.infeed"(%t) <{infeed_config = "cfg"}> : (!stablehlo.token) -> '
               "(tensor<2xf32>, !stablehlo.token)\n"
               '    %1 = "stablehlo.outfeed"(%0#0, %0#1) : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token\n'
               '    %2 = "stablehlo.send"(%arg0, %1) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 2>, '
               "is_host_transfer = true}> : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token\n"
               '    %3:2 = "stablehlo.recv"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 4, type = 3>, '
               "is_host_transfer = true}> : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)\n"
               "    %4 = stablehlo.after_all %2, %3#1 : !stablehlo.token\n    return %3#0 : tensor<2xf32>")
    after = ops(m, Op.AFTER_ALL)
    assert after[0].operands == () and after[0].shape.text() == "token[]" and len(after[1].operands) == 2
    (feed,) = ops(m, Op.INFEED)
    assert feed.shape.text(False) == "((f32[2]), token[])" and feed.attr("infeed_config") == Raw('"cfg"')
    assert ops(m, Op.OUTFEED)[0].attr("outfeed_shape") == Raw("(f32[2])")
    (send,) = ops(m, Op.SEND)
    assert send.shape.text(False) == "(f32[2], u32[], token[])" and send.attr("channel_id") == 3
    assert ops(m, Op.SEND_DONE)[0].attr("is_host_transfer") is True
    assert ops(m, Op.RECV_DONE)[0].shape.text(False) == "(f32[2], token[])"


def test_collectives():
    rg = "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>"
    m = module("(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32>",
               f'    %0 = "stablehlo.all_reduce"(%arg0) <{{channel_handle = #stablehlo.channel_handle<handle = 1, '
               f"type = 1>, {rg}, use_global_device_ids}}> ({{\n    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
               "      %9 = stablehlo.add %a, %b : tensor<f32>\n      stablehlo.return %9 : tensor<f32>\n"
               "    }) : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
               f'    %1 = "stablehlo.all_gather"(%0) <{{all_gather_dim = 1 : i64, {rg}}}> : (tensor<4x2xf32>) -> '
               "tensor<4x4xf32>\n"
               f'    %2 = "stablehlo.reduce_scatter"(%1) <{{scatter_dimension = 1 : i64, {rg}}}> ({{\n'
               "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      %9 = stablehlo.add %a, %b : tensor<f32>\n"
               "      stablehlo.return %9 : tensor<f32>\n    }) : (tensor<4x4xf32>) -> tensor<4x2xf32>\n"
               f'    %3 = "stablehlo.all_to_all"(%2) <{{split_dimension = 0 : i64, concat_dimension = 1 : i64, '
               f"split_count = 2 : i64, {rg}}}> : (tensor<4x2xf32>) -> tensor<2x4xf32>\n"
               '    %4 = "stablehlo.collective_permute"(%arg0) <{source_target_pairs = dense<[[0, 1], [1, 0]]> : '
               "tensor<2x2xi64>}> : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
               f'    %5 = "stablehlo.collective_broadcast"(%4) <{{{rg}}}> : (tensor<4x2xf32>) -> tensor<4x2xf32>\n'
               "    %6 = stablehlo.replica_id : tensor<ui32>\n    %7 = stablehlo.partition_id : tensor<ui32>\n"
               "    return %5 : tensor<4x2xf32>")
    (ar,) = ops(m, Op.ALL_REDUCE)
    assert ar.attr("replica_groups") == Raw("{{0,1}}") and ar.attr("channel_id") == 1
    assert ar.attr("use_global_device_ids") is True and m.computation(ar.attr("to_apply"))
    assert ops(m, Op.ALL_GATHER)[0].attr("dimensions") == (1,) and ops(m, Op.REDUCE_SCATTER)[0].attr("to_apply")
    (a2a,) = ops(m, Op.ALL_TO_ALL)
    assert a2a.attr("dimensions") == (0,) and a2a.shape == array("f32", [4, 2])
    assert m.entry_computation.instructions[[i.name for i in m.entry_computation.instructions].index(a2a.name) + 3] \
        .shape == array("f32", [2, 4]), "reshape, transpose, reshape into the result"
    assert ops(m, Op.COLLECTIVE_PERMUTE)[0].attr("source_target_pairs") == Raw("{{0,1},{1,0}}")
    assert ops(m, Op.COLLECTIVE_BROADCAST)[0].attr("replica_groups") == Raw("{{0,1}}")
    assert ops(m, Op.REPLICA_ID)[0].shape == array("u32", []) and ops(m, Op.PARTITION_ID)


def test_composite_calls_its_decomposition():
    m = module("(%arg0: tensor<f32>) -> tensor<f32>",
               '    %0 = stablehlo.composite "my.op" %arg0 {decomposition = @my_op, version = 1 : i32} : '
               "(tensor<f32>) -> tensor<f32>\n    return %0 : tensor<f32>",
               "  func.func private @my_op(%arg0: tensor<f32>) -> tensor<f32> {\n"
               "    %0 = stablehlo.negate %arg0 : tensor<f32>\n    return %0 : tensor<f32>\n  }\n")
    (call,) = ops(m, Op.CALL)
    assert call.attr("to_apply") == "my_op" and call.attr("is_composite") == Raw("true")
    assert 'composite.name="my.op"' in call.attr("frontend_attributes").text

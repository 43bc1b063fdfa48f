"""Program signatures: defaults without a config, config ids, names, variables,
bound parameters, and the errors of a config that does not fit its module."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from aotc.errors import AotcError
from aotc.frontend import parse_hlo
from aotc.frontend.c_names import derive_names
from aotc.frontend.config import parse_config
from aotc.frontend.signature import Bound, Feed, Fetch, resolve_signature
from aotc.hlo.shape import array

# v.1 is donated (aliased to output {0}); y.1 arrives column-major
MODEL = """\
HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }, entry_computation_layout={(f32[2,3]{1,0}, f32[3,2]{0,1}, s32[], bf16[2]{0})->(f32[2,3]{1,0}, f32[2,2]{1,0}, s32[], bf16[2]{0})}

ENTRY main.1 {
  v.1 = f32[2,3]{1,0} parameter(0), metadata={op_name="state"}
  y.1 = f32[3,2]{0,1} parameter(1), metadata={op_name="XLA_Args"}
  n.1 = s32[] parameter(2), metadata={op_name="XLA_Args"}
  w.1 = bf16[2]{0} parameter(3)
  c.1 = f32[] constant(1)
  b.1 = f32[2,3]{1,0} broadcast(c.1), dimensions={}
  add.1 = f32[2,3]{1,0} add(v.1, b.1)
  dot.1 = f32[2,2]{1,0} dot(v.1, y.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT tuple.1 = (f32[2,3]{1,0}, f32[2,2]{1,0}, s32[], bf16[2]{0}) tuple(add.1, dot.1, n.1, w.1)
}
"""


@pytest.fixture(scope="module")
def module():
    return parse_hlo(MODEL, "m.hlo")


def sig_of(module, cfg_text: str, base_dir: str | None = None):
    return resolve_signature(module, parse_config(cfg_text, "cfg.yaml", base_dir))


def error_of(module, cfg_text: str, base_dir: str | None = None) -> str:
    with pytest.raises(AotcError) as info:
        sig_of(module, cfg_text, base_dir)
    return info.value.format().splitlines()[0]


F23 = array("f32", [2, 3], [1, 0])


def test_derive_names():
    assert derive_names(["x.1", "Arg_0.1", "x.2", "int.3", "3d.1", "a-b.4", "y"]) == \
        ["x_1", "Arg_0", "x_2", "int_", "_3d", "a_b", "y"]
    assert derive_names(["x.1", "x.1"]) == ["x_1", "x_1_2"]
    assert derive_names(["x.1"], {"x"}) == ["x_1"]
    assert derive_names(["x.1"], {"x", "x_1"}) == ["x_1_2"]


def test_default_signature(module):
    sig = resolve_signature(module, None)
    assert sig.feeds == (
        Feed(0, "v", 0, F23, "v.1", "variable", False, (0,)),
        Feed(1, "y", 1, array("f32", [3, 2], [0, 1]), "y.1"),
        Feed(2, "n", 2, array("s32", [], []), "n.1"),
        Feed(3, "w", 3, array("bf16", [2], [0]), "w.1"),
    )
    # output {0} only writes the variable back; a parameter passed through gets a name of its own
    assert sig.fetches == (
        Fetch(0, "dot", "tuple.1", (1,), array("f32", [2, 2], [1, 0])),
        Fetch(1, "n_1", "tuple.1", (2,), array("s32", [], [])),
        Fetch(2, "w_1", "tuple.1", (3,), array("bf16", [2], [0])),
    )
    assert sig.signature_text() == \
        "(v: variable f32[2,3], y: f32[3,2]{0,1}, n: s32[], w: bf16[2]) -> (dot: f32[2,2], n_1: s32[], w_1: bf16[2])"
    assert sig.bound == () and sig.name is None


def test_single_array_root():
    m = parse_hlo("HloModule s\n\nENTRY e {\n  Arg_0.1 = f32[4] parameter(0)\n"
                  "  ROOT neg.2 = f32[4] negate(Arg_0.1)\n}\n", "s.hlo")
    sig = resolve_signature(m, None)
    assert sig.signature_text() == "(Arg_0: f32[4]) -> (neg: f32[4])"
    assert sig.fetches[0].shape_index == () and sig.fetches[0].instruction == "neg.2"
    sig = sig_of(m, "feeds:\n  - id: 0\nfetches:\n  - id: 0\n")
    assert sig.signature_text() == "(arg0: f32[4]) -> (result0: f32[4])"


def test_config_ids_and_names(module):
    sig = sig_of(module, "name: model\ncpp_class: a::B\n"
                         "feeds:\n  - id: y.1\n    name: y\n  - id: '%n.1'\n  - id: w\n"
                         "variables:\n  - id: state\n"
                         "fetches:\n  - id: 1\n  - id: dot.1\n    name: d\n  - id: add.1\n")
    assert [(f.name, f.param_number, f.kind) for f in sig.feeds] == \
        [("y", 1, "arg"), ("arg1", 2, "arg"), ("arg2", 3, "arg"), ("v", 0, "variable")]
    assert sig.feeds[3].update_output == (0,)
    assert [(f.name, f.instruction, f.shape_index) for f in sig.fetches] == \
        [("result0", "tuple.1", (1,)), ("d", "dot.1", ()), ("result2", "add.1", ())]
    assert sig.name == "model" and sig.cpp_class == "a::B"


def test_aliased_feed_is_a_variable_feed(module):
    sig = sig_of(module, "feeds:\n  - id: 0\n    name: var\n  - id: 1\n  - id: 2\n  - id: 3\n"
                         "fetches:\n  - id: 0\n    name: new_var\n")
    assert sig.feeds[0] == Feed(0, "var", 0, F23, "v.1", "variable", False, (0,))
    assert sig.fetches == (Fetch(0, "new_var", "tuple.1", (0,), F23),)


def test_readonly_variable_and_default_fetches(module):
    sig = sig_of(module, "variables:\n  - id: 0\n    readonly: true\n")
    assert sig.feeds[-1] == Feed(3, "v", 0, F23, "v.1", "variable", True, None)
    assert [f.name for f in sig.feeds] == ["y", "n", "w", "v"]
    assert [f.shape_index for f in sig.fetches] == [(0,), (1,), (2,), (3,)]  # nothing is written back


def test_explicit_update(module):
    sig = sig_of(module, "feeds:\n  - id: 1\n  - id: 2\n  - id: 3\nvariables:\n  - id: 0\n    update: add.1\n"
                         "fetches:\n  - id: 1\n")
    assert sig.feeds[-1].update_output == (0,)


def test_bound_parameters(module, tmp_path):
    w_bits = np.array([1.5, -2.0], ml_dtypes.bfloat16).view(np.uint16)
    np.savez(tmp_path / "w.npz", w=w_bits, other=np.zeros(3, np.float32))
    sig = sig_of(module, "bound:\n  file: w.npz\n  params:\n    - id: 3\n", str(tmp_path))
    assert sig.bound == (Bound(3, "w.1", np.array([1.5, -2.0], ml_dtypes.bfloat16)),)
    assert [f.name for f in sig.feeds] == ["v", "y", "n"]
    np.savez(tmp_path / "w2.npz", weights=np.array([1, 2], ml_dtypes.bfloat16))
    sig = sig_of(module, "bound:\n  file: w2.npz\n  params:\n    - id: w.1\n      key: weights\n", str(tmp_path))
    assert sig.bound[0].array.dtype == ml_dtypes.bfloat16 and sig.bound[0].array.tolist() == [1, 2]


FEEDS_0123 = "feeds:\n  - id: 0\n  - id: 1\n  - id: 2\n  - id: 3\n"

BAD = {
    "shape_mismatch": (
        "feeds:\n  - id: 0\n    shape: [3, 2]\n",
        "cfg.yaml:3:12: error: feeds[0].shape: [3, 2] does not match parameter v.1 f32[2,3]",
    ),
    "type_mismatch": (
        "feeds:\n  - id: 2\n    type: s64\n",
        "cfg.yaml:3:11: error: feeds[0].type: s64 does not match parameter n.1 s32[]",
    ),
    "parameter_number_out_of_range": (
        "feeds:\n  - id: 4\n",
        "cfg.yaml:2:9: error: feeds[0].id: no parameter 4: ENTRY main.1 has 4 parameters",
    ),
    "unknown_parameter_name": (
        "feeds:\n  - id: y.2\n",
        "cfg.yaml:2:9: error: feeds[0].id: no parameter named 'y.2' (did you mean y.1?)",
    ),
    "not_a_parameter": (
        "feeds:\n  - id: add.1\n",
        "cfg.yaml:2:9: error: feeds[0].id: add.1 is not a parameter of ENTRY main.1 (it is a add)",
    ),
    "ambiguous_op_name": (
        "variables:\n  - id: XLA_Args\n",
        "cfg.yaml:2:9: error: variables[0].id: op_name 'XLA_Args' matches several parameters: y.1, n.1; "
        "use the parameter number",
    ),
    "fed_twice": (
        "feeds:\n  - id: 1\n  - id: y.1\n",
        "cfg.yaml:3:9: error: feeds[1].id: parameter y.1 is listed twice (also at feeds[0])",
    ),
    "fed_and_variable": (
        "feeds:\n  - id: 0\nvariables:\n  - id: state\n",
        "cfg.yaml:4:9: error: variables[0].id: parameter v.1 is listed twice (also at feeds[0])",
    ),
    "unfed": (
        "feeds:\n  - id: 0\n  - id: 1\n",
        "cfg.yaml:2:3: error: feeds: parameter 2 (n.1 s32[]) is not fed: list it under feeds, variables or "
        "bound (1 more unfed)",
    ),
    "fetch_index_out_of_range": (
        FEEDS_0123 + "fetches:\n  - id: 4\n",
        "cfg.yaml:7:9: error: fetches[0].id: no output 4: ROOT tuple.1 has 4 elements",
    ),
    "fetch_unknown_instruction": (
        FEEDS_0123 + "fetches:\n  - id: dot\n",
        "cfg.yaml:7:9: error: fetches[0].id: no instruction named 'dot' in ENTRY main.1 (did you mean dot.1?)",
    ),
    "fetch_tuple": (
        FEEDS_0123 + "fetches:\n  - id: tuple.1\n",
        "cfg.yaml:7:9: error: fetches[0].id: instruction tuple.1 has tuple shape "
        "(f32[2,3], f32[2,2], s32[], bf16[2]); fetches must be arrays",
    ),
    "update_conflicts_with_alias": (
        "variables:\n  - id: 0\n    update: 1\n",
        "cfg.yaml:3:13: error: variables[0].update: update is output {1} but input_output_alias writes "
        "parameter v.1 from output {0}",
    ),
    "update_not_an_output": (
        "variables:\n  - id: 2\n    update: b.1\n",
        "cfg.yaml:3:13: error: variables[0].update: b.1 is not an output of ROOT tuple.1; "
        "only outputs can update a variable",
    ),
    "update_shape_mismatch": (
        "variables:\n  - id: 2\n    update: 1\n",
        "cfg.yaml:3:13: error: variables[0].update: output {1} is f32[2,2] but variable n.1 is s32[]",
    ),
    "bound_file_missing": (
        "bound:\n  file: nope.npz\n  params:\n    - id: 3\n",
        "cfg.yaml:2:9: error: bound.file: nope.npz: cannot read: No such file or directory",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_config_against_module(module, case, tmp_path):
    text, expected = BAD[case]
    assert error_of(module, text, str(tmp_path)) == expected


def test_bound_key_missing(module, tmp_path):
    np.savez(tmp_path / "w.npz", weights=np.zeros(2, ml_dtypes.bfloat16))
    assert error_of(module, "bound:\n  file: w.npz\n  params:\n    - id: 3\n", str(tmp_path)) == \
        "cfg.yaml:4:11: error: bound.params[0].id: no array 'w' in w.npz (it has: weights)"
    assert error_of(module, "bound:\n  file: w.npz\n  params:\n    - id: 3\n      key: weight\n", str(tmp_path)) == \
        "cfg.yaml:5:12: error: bound.params[0].key: no array 'weight' in w.npz (did you mean 'weights'?)"


def test_bound_shape_and_dtype_mismatch(module, tmp_path):
    np.savez(tmp_path / "w.npz", w=np.zeros(2, np.float32), v=np.zeros((3, 2), np.float32))
    assert error_of(module, "bound:\n  file: w.npz\n  params:\n    - id: 3\n", str(tmp_path)) == \
        "cfg.yaml:4:11: error: bound.params[0].id: array 'w' in w.npz is f32[2], parameter w.1 is bf16[2]"
    assert error_of(module, "bound:\n  file: w.npz\n  params:\n    - id: 0\n", str(tmp_path)) == \
        "cfg.yaml:4:11: error: bound.params[0].id: array 'v' in w.npz is f32[3,2], parameter v.1 is f32[2,3]"


def test_bound_file_not_npz(module, tmp_path):
    (tmp_path / "w.npz").write_text("not a zip")
    assert error_of(module, "bound:\n  file: w.npz\n  params:\n    - id: 3\n", str(tmp_path)).startswith(
        "cfg.yaml:2:9: error: bound.file: w.npz: not a valid .npz file")


def test_tuple_parameter_is_an_error():
    m = parse_hlo("HloModule t\n\nENTRY e {\n  p.1 = (f32[2], s32[]) parameter(0)\n"
                  "  ROOT g.2 = f32[2] get-tuple-element(p.1), index=0\n}\n", "t.hlo")
    with pytest.raises(AotcError) as info:
        resolve_signature(m, None)
    assert info.value.format() == ("t.hlo:4:3: error: parameter p.1 has tuple shape (f32[2], s32[]); "
                                   "feeds, variables and bound parameters must be arrays")
    with pytest.raises(AotcError) as info:
        resolve_signature(m, parse_config("feeds:\n  - id: p.1\n", "cfg.yaml"))
    assert info.value.format().splitlines()[0] == \
        "cfg.yaml:2:9: error: feeds[0].id: parameter p.1 has tuple shape (f32[2], s32[]); " \
        "feeds, variables and bound parameters must be arrays"

"""The cffi loader on the hand-written model: signature, calls, input checks,
bf16 in and out, variables that persist, errors from the C side."""
from __future__ import annotations

import shutil

import ml_dtypes
import numpy as np
import pytest

from aotc.errors import AotcError
from aotc.options import CompileOptions
from aotc.toolchain.build import build_outputs
from aotc.toolchain.loader import ModelInputError, ModelRunError, load_library

from . import TINY_C, TINY_H, assert_tiny, tiny_inputs

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None,
                                reason="no host C compiler")


@pytest.fixture(scope="module")
def so_path(tmp_path_factory):
    d = tmp_path_factory.mktemp("loader")
    return build_outputs(TINY_C, d / "libtiny", "host", CompileOptions(emit=("so",)))["so"]


@pytest.fixture
def model(so_path):
    m = load_library(so_path, "tiny")
    yield m
    m.close()


def test_signature(model):
    assert model.name == "tiny"
    assert model.arg_names == ["x", "y", "h", "step"]
    assert model.result_names == ["sum", "h2", "pos", "count", "norm"]
    assert model.feed_names == ["x", "y", "h"]
    x, y, h, step = model.arg_specs
    assert (x.type, x.dims, x.dtype, x.nbytes) == ("f32", (3,), np.dtype(np.float32), 12)
    assert (h.type, h.dims, h.dtype) == ("bf16", (2, 2), np.dtype(ml_dtypes.bfloat16))
    assert step.is_variable and step.dims == () and not x.is_variable
    types = [(s.type, s.dtype) for s in model.result_specs]
    assert types[2] == ("pred", np.dtype(np.bool_)) and types[3] == ("s32", np.dtype(np.int32))
    assert "step: s32[] variable" in repr(model)


def test_call_results_in_order(model):
    x, y, h = tiny_inputs()
    outs = model(x, y, h)
    assert_tiny(outs, x, y, h, step_before=0)
    assert outs[1].dtype == ml_dtypes.bfloat16  # bf16 out as ml_dtypes.bfloat16
    assert outs[2].dtype == np.bool_


def test_bf16_as_uint16_bits(model):
    x, y, h = tiny_inputs()
    a = model(x, y, h)
    b = model(x, y, h.view(np.uint16))
    assert a[1].tobytes() == b[1].tobytes()


def test_lists_and_noncontiguous_inputs(model):
    x, y, h = tiny_inputs()
    wide = np.zeros(6, np.float32)
    wide[::2] = x
    outs = model(wide[::2], y.tolist(), np.asfortranarray(h))
    assert_tiny(outs, x, y, h, step_before=0)
    assert wide[1::2].tolist() == [0, 0, 0]


def test_results_are_fresh_arrays(model):
    x, y, h = tiny_inputs()
    first = model(x, y, h)
    second = model(x, y, h)
    first[0][:] = 99
    assert second[0].tolist() == (x + y).tolist()
    assert not np.shares_memory(first[0], second[0])
    assert x.tolist() == [1.5, -2.0, 3.25]  # inputs untouched


def test_dtype_error_names_the_argument(model):
    x, y, h = tiny_inputs()
    with pytest.raises(ModelInputError) as e:
        model(x.astype(np.float64), y, h)
    assert isinstance(e.value, ValueError) and isinstance(e.value, AotcError)
    msg = str(e.value)
    assert "argument 0 'x'" in msg and "f32[3]" in msg and "float64" in msg
    with pytest.raises(ModelInputError, match="argument 2 'h'.*int16"):
        model(x, y, h.view(np.int16))


def test_shape_error_names_the_argument(model):
    x, y, h = tiny_inputs()
    with pytest.raises(ModelInputError, match=r"argument 1 'y': expected shape \(3,\).*got shape \(4,\)"):
        model(x, np.zeros(4, np.float32), h)
    with pytest.raises(ModelInputError, match=r"'h'.*got shape \(4,\)"):
        model(x, y, h.reshape(4))


def test_argument_binding_errors(model):
    x, y, h = tiny_inputs()
    with pytest.raises(ModelInputError, match="missing input h"):
        model(x, y)
    with pytest.raises(ModelInputError, match="takes 3 positional inputs"):
        model(x, y, h, h)
    with pytest.raises(ModelInputError, match="no argument 'z'"):
        model(x, y, h, z=x)
    with pytest.raises(ModelInputError, match="given twice"):
        model(x, y, h, x=x)


def test_run_dict(model):
    x, y, h = tiny_inputs()
    out = model.run_dict({"x": x, "y": y, "h": h})
    assert list(out) == ["sum", "h2", "pos", "count", "norm"]
    assert_tiny(list(out.values()), x, y, h, step_before=0)


def test_variables_persist_and_can_be_set(model):
    x, y, h = tiny_inputs()
    assert list(model.variables) == ["step"] and model.variables["step"] == 0
    counts = [int(model(x, y, h)[3]) for _ in range(3)]
    assert counts == [1, 2, 3] and model.variables["step"] == 3
    model.variables["step"] = np.int32(41)
    assert int(model(x, y, h)[3]) == 42
    view = model.variables["step"]
    view[...] = 7  # writing through the view works too
    assert int(model(x, y, h)[3]) == 8 and int(view) == 8
    assert int(model(x, y, h, step=np.int32(100))[3]) == 101
    with pytest.raises(ModelInputError, match="variable 'step'"):
        model.variables["step"] = np.float32(1)
    with pytest.raises(KeyError, match="no variable 'x'"):
        model.variables["x"]


def test_instances_are_independent(so_path):
    x, y, h = tiny_inputs()
    a, b = load_library(so_path, "tiny"), load_library(so_path, "tiny")
    a(x, y, h)
    a(x, y, h)
    assert int(b(x, y, h)[3]) == 1 and int(a.variables["step"]) == 2
    a.close()
    b.close()


def test_threads_and_errors_from_c(model):
    x, y, h = tiny_inputs()
    model.set_num_threads(3)
    assert_tiny(model(x, y, h), x, y, h, step_before=0)
    with pytest.raises(ModelRunError, match="at least 1"):
        model.set_num_threads(0)
    model.set_num_threads(9)
    with pytest.raises(ModelRunError) as e:
        model(x, y, h)
    assert e.value.code == 6 and "tiny_run failed" in str(e.value) and "at most 8" in str(e.value)


def test_load_by_header_and_by_prefix_alone(so_path, tmp_path):
    by_header = load_library(so_path, TINY_H)
    lone = tmp_path / "copy.so"  # no header beside it: the port counts are probed
    shutil.copy(so_path, lone)
    by_prefix = load_library(lone, "tiny")
    assert by_header.arg_specs == by_prefix.arg_specs
    assert by_header.result_specs == by_prefix.result_specs
    x, y, h = tiny_inputs()
    assert_tiny(by_prefix(x, y, h), x, y, h, step_before=0)
    by_header.close()
    by_prefix.close()


def test_wrong_prefix_and_missing_library(so_path, tmp_path):
    with pytest.raises(AotcError, match="no model with prefix 'other'"):
        load_library(so_path, "other")
    with pytest.raises(AotcError, match="cannot load"):
        load_library(tmp_path / "nope.so", "tiny")


def test_closed_model(so_path):
    x, y, h = tiny_inputs()
    with load_library(so_path, "tiny") as m:
        m(x, y, h)
    with pytest.raises(AotcError, match="closed"):
        m(x, y, h)
    m.close()  # idempotent

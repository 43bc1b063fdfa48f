"""Whole models against XLA:CPU: an MLP (weights as parameters, and closed over
as literal constants) and one transformer encoder block."""
from __future__ import annotations

import pytest

from .conftest import FIXTURES, FixtureCase, require_aotc


@pytest.mark.parametrize("threads", [1, 2])
def test_model(model_case, threads, models):
    model = models.get(model_case)
    model.set_num_threads(threads)
    model_case.check(model(*model_case.inputs()), label=f"threads={threads}")


def test_model_repeatable(model_case, models):
    """A second call on the same inputs (arena reused) gives the same bits."""
    import numpy as np

    model = models.get(model_case)
    model.set_num_threads(2)
    inputs = model_case.inputs()
    first = [np.array(o, copy=True) for o in model(*inputs)]
    second = model(*inputs)
    for a, b in zip(first, second):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", ["mlp_const", "transformer_block"])
def test_model_through_run(name):
    """The `aotc run` path (generic target) on the models."""
    aotc = require_aotc("run")
    case = FixtureCase(FIXTURES / name)
    outs = aotc.run(str(case.model_path), config=str(case.cfg_path),
                    inputs=case.input_dict(), target="generic")
    case.check(outs, label="aotc.run target=generic")


def test_mlp_const_carries_constants():
    text = (FIXTURES / "mlp_const" / "model.hlo").read_text()
    assert "constant({" in text and "{...}" not in text
    assert text.count("parameter(0)") >= 1 and "parameter(1)" not in text.split("ENTRY")[-1]

"""The TensorFlow-exported models XLA's CPU team benchmarks (weights elided in the
dump, filled deterministically): they compile warning-free with -Werror and run;
graphsage matches XLA run on the same filled module."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from .conftest import ROOT, require_aotc, require_jax

MODELS = ROOT / "tests" / "data" / "models"
WERROR = ("-Wall", "-Wextra", "-Werror")


def _inputs(fe, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for f in fe.signature.feeds:
        dt = f.shape.dtype
        if dt.is_int:
            out[f.name] = rng.integers(0, 4, f.shape.dims).astype(dt.numpy)
        else:
            out[f.name] = rng.uniform(-1, 1, f.shape.dims).astype(dt.numpy)
    return out


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("name", ["graphsage_tf", "ssd_mobilenet_tf"])
def test_model_compiles_with_werror_and_runs(name, tmp_path):
    aotc = require_aotc("compile", "run")
    from aotc.driver import frontend

    opts = aotc.CompileOptions(elided_constants="random", cflags=WERROR, emit=("o",))
    path = str(MODELS / f"{name}.hlo")
    aotc.compile(path, out=str(tmp_path / "libm"), options=opts)
    fe = frontend(path, None, opts)
    outs = aotc.run(path, inputs=_inputs(fe), options=opts)
    assert [o.shape for o in outs.values()] == [f.shape.dims for f in fe.signature.fetches]


@pytest.mark.jax
@pytest.mark.slow
def test_graphsage_matches_xla():
    aotc = require_aotc("run")
    require_jax()
    from aotc.driver import frontend
    from aotc.hlo.printer import print_module
    from tests.oracle.xla import run_hlo

    opts = aotc.CompileOptions(elided_constants="random")
    path = str(MODELS / "graphsage_tf.hlo")
    fe = frontend(path, None, opts)
    ins = _inputs(fe, seed=1)
    want = run_hlo(print_module(fe.module), [ins[f.name] for f in fe.signature.feeds])
    got = aotc.run(path, inputs=ins, options=opts)
    for (name, g), w in zip(got.items(), want):
        np.testing.assert_allclose(g.astype(np.float32), np.asarray(w, np.float32), rtol=2e-2, atol=2e-3,
                                   err_msg=name)

"""`aotc run` and `aotc bench` with `--weights`: `file` gives XLA's outputs for each weight
set of tests/data/weights/mlp, through a weights file in the cache that the runner loads;
`fed` takes the weights from --inputs; the runner reports a missing weights file."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from aotc.api import compile as aotc_compile
from aotc.cli import main
from aotc.options import CompileOptions
from aotc.toolchain.loader import ModelRunError
from aotc.toolchain.runner import build_runner, run_runner
from aotc.toolchain.targets import resolve_target

DATA = Path(__file__).resolve().parents[1] / "data" / "weights" / "mlp"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the build cache's documented location


def _expected(key: str) -> np.ndarray:
    with np.load(DATA / "expected.npz") as z:
        return z[f"y_{key}"]


def _run(tmp_path, key: str, *extra) -> np.ndarray:
    out = tmp_path / f"y_{key}.npz"
    res = CliRunner().invoke(main, ["run", str(DATA / "model.hlo"), "-c", str(DATA / f"cfg_{key}.yaml"),
                                    "--target", "host", "--output", str(out), *extra])
    assert res.exit_code == 0, res.output
    with np.load(out) as z:
        return z["y"]


@pytest.mark.slow
def test_run_weights_file_matches_xla_for_each_weight_set(tmp_path):
    for key in ("a", "b"):
        y = _run(tmp_path, key, "--inputs", str(DATA / "inputs.npz"), "--weights", "file")
        np.testing.assert_allclose(y, _expected(key), rtol=1e-5, atol=1e-5)
    assert len(list((tmp_path / "cache" / "aotc").glob("**/libmodel.weights"))) == 2


def test_run_weights_fed_takes_them_from_the_inputs(tmp_path):
    inputs = tmp_path / "in.npz"
    with np.load(DATA / "inputs.npz") as x, np.load(DATA / "weights_b.npz") as w:
        # fed parameters are named as unnamed feeds are: arg<id> (cfg_a binds w1, b1, w2, scale as ids 1-4)
        np.savez(inputs, x=x["x"], **{f"arg{i}": w[k] for i, k in enumerate(("w1", "b1", "w2", "scale"), 1)})
    y = _run(tmp_path, "a", "--inputs", str(inputs), "--weights", "fed")  # cfg_a's weights are replaced by b's
    np.testing.assert_allclose(y, _expected("b"), rtol=1e-5, atol=1e-5)


def test_bench_weights_file(tmp_path):
    res = CliRunner().invoke(main, ["bench", str(DATA / "model.hlo"), "-c", str(DATA / "cfg_a.yaml"), "--target",
                                    "host", "--weights", "file", "--iters", "3", "--warmup", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["iters"] == 3


def test_weights_file_without_bound_parameters_is_a_usage_error(tmp_path):
    res = CliRunner().invoke(main, ["run", str(DATA / "model.hlo"), "--inputs", str(DATA / "inputs.npz"),
                                    "--weights", "file"])
    assert res.exit_code == 1 and "--weights file: the config binds no parameters" in res.output


def test_runner_reports_missing_or_absent_weights(tmp_path):
    res = aotc_compile(str(DATA / "model.hlo"), config=str(DATA / "cfg_a.yaml"), out=str(tmp_path / "libmlp"),
                       weights="file", emit=())
    target = resolve_target("host")
    runner = build_runner(res.c_path, res.name, target, CompileOptions(weights="file", opt_level="-O0"), tmp_path)
    with np.load(DATA / "inputs.npz") as z:
        x = [z["x"]]
    with pytest.raises(ModelRunError, match="mlp_load_weights failed .*cannot open the weights file .*nope.weights"):
        run_runner(runner, target, x, weights=tmp_path / "nope.weights")
    with pytest.raises(ModelRunError, match="no weights set: call mlp_load_weights"):
        run_runner(runner, target, x)
    (y,) = run_runner(runner, target, x, weights=res.weights_path)
    np.testing.assert_allclose(y, _expected("a"), rtol=1e-5, atol=1e-5)


@pytest.mark.slow
@pytest.mark.aarch64
def test_run_weights_file_under_qemu(tmp_path):
    missing = [t for t in ("aarch64-linux-gnu-gcc", "qemu-aarch64") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt install gcc-aarch64-linux-gnu qemu-user)")
    out = tmp_path / "y.npz"
    res = CliRunner().invoke(main, ["run", str(DATA / "model.hlo"), "-c", str(DATA / "cfg_b.yaml"), "--target",
                                    "aarch64", "--inputs", str(DATA / "inputs.npz"), "--weights", "file",
                                    "--output", str(out)])
    assert res.exit_code == 0, res.output
    with np.load(out) as z:
        np.testing.assert_allclose(z["y"], _expected("b"), rtol=1e-5, atol=1e-5)

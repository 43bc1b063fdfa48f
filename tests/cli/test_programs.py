"""`aotc compile --emit test,bench` on the command line: the files it writes and lists,
and the errors for missing test values."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from aotc.cli import main

CASE = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "add_f32"


def _compile(tmp_path, *extra):
    return CliRunner().invoke(main, ["compile", str(CASE / "model.hlo"), "-c", str(CASE / "cfg.yaml"),
                                     "-o", str(tmp_path / "add"), *extra])


def test_emit_test_and_bench_write_the_programs(tmp_path):
    res = _compile(tmp_path, "--emit", "none,test,bench", "--test-inputs", str(CASE / "inputs.npz"),
                   "--test-expected", str(CASE / "expected.npz"), "--rtol", "0", "--atol", "0")
    assert res.exit_code == 0, res.output
    listed = res.output.split()
    assert listed == [str(tmp_path / f"add{s}") for s in (".h", ".c", "_test.c", "_benchmark.c")]
    test_c = (tmp_path / "add_test.c").read_text()
    assert '#include "add.h"' in test_c and '{"z", "f32[133]", K_F32, 4u, 133u, 1, 1, result0_dims' in test_c
    assert "0.0, 0.0}," in test_c  # --rtol 0 --atol 0: exact


def test_emit_test_needs_its_values(tmp_path):
    res = _compile(tmp_path, "--emit", "test")
    assert res.exit_code == 1 and "--emit test needs --test-inputs IN.npz and --test-expected OUT.npz" in res.output
    res = _compile(tmp_path, "--emit", "tests")
    assert res.exit_code == 1 and "unknown kind 'tests'" in res.output
    res = _compile(tmp_path, "--emit", "none,test", "--test-inputs", str(CASE / "expected.npz"),
                   "--test-expected", str(CASE / "expected.npz"))
    assert res.exit_code == 1 and "'z' is not one of the model's arguments" in res.output
    assert not list(tmp_path.iterdir())

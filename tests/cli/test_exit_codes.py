"""The documented exit codes of `aotc` (errors.py): 0 success, 1 bad input, 2 usage,
3 toolchain or environment, 4 an internal error (one line, the traceback only with
--debug); and inputs that are not regular files, too big, or nested too deeply are
input errors, never a hang or a traceback."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import aotc.cli as cli
from aotc.cli import main
from aotc.frontend.files import CONFIG_LIMIT

CASE = Path(__file__).resolve().parents[1] / "data" / "corpus" / "tf_add"
MODEL, CFG = str(CASE / "model.hlo"), str(CASE / "cfg.yaml")


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_success_is_0(tmp_path):
    r = run("compile", MODEL, "--config", CFG, "-o", str(tmp_path / "libm"))
    assert r.exit_code == 0, r.output


def test_bad_input_is_1(tmp_path):
    r = run("compile", str(tmp_path / "missing.hlo"))
    assert r.exit_code == 1 and "error: cannot read model" in r.output


def test_usage_is_2():
    assert run("compile").exit_code == 2
    assert run("compile", MODEL, "--no-such-option").exit_code == 2


def test_a_named_compiler_that_fails_is_3_and_never_replaced(tmp_path):
    r = run("compile", MODEL, "--config", CFG, "--cc", "/bin/false", "-o", str(tmp_path / "libm"))
    assert r.exit_code == 3 and "--cc '/bin/false' cannot build for" in r.output
    assert not list(tmp_path.iterdir())


def test_an_internal_error_is_4_with_one_line_and_debug_shows_the_traceback(monkeypatch, tmp_path):
    def broken(*a, **k):
        raise ValueError("an invariant broke")

    monkeypatch.setattr(cli, "aotc_compile", broken)
    r = run("compile", MODEL, "-o", str(tmp_path / "libm"))
    assert r.exit_code == 4
    assert "internal error (ValueError: an invariant broke)" in r.output and "Traceback" not in r.output
    assert "--debug" in r.output
    r = run("--debug", "compile", MODEL, "-o", str(tmp_path / "libm"))
    assert isinstance(r.exception, ValueError)  # raised through: click's runner keeps it


def test_a_device_as_config_is_refused():
    r = run("compile", MODEL, "--config", "/dev/zero")
    assert r.exit_code == 1 and "/dev/zero: error: cannot read config: a device" in r.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "cfg.fifo"
    os.mkfifo(fifo)
    p = subprocess.run([sys.executable, "-m", "aotc.cli", "compile", MODEL, "--config", str(fifo)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "cannot read config: a FIFO" in p.stderr


def test_a_directory_as_model_is_refused(tmp_path):
    r = run("compile", str(tmp_path))
    assert r.exit_code == 1 and "cannot read model: a directory" in r.output


def test_a_config_over_the_limit_is_refused(tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.truncate(CONFIG_LIMIT + 1)  # sparse: nothing is written
    r = run("compile", MODEL, "--config", str(big))
    assert r.exit_code == 1 and "more than the 16 MiB a config may have" in r.output


def test_deeply_nested_yaml_is_a_clean_error(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("feeds:\n  - " + "[" * 2000 + "]" * 2000 + "\n")
    r = run("compile", MODEL, "--config", str(deep))
    assert r.exit_code == 1 and "invalid YAML: nested too deeply" in r.output and "Traceback" not in r.output


def test_a_config_that_is_not_utf8_is_located(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"feeds:\n  - id: 0\n    name: \xff\n")
    r = run("compile", MODEL, "--config", str(bad))
    assert r.exit_code == 1 and "bad.yaml:3:11: error: config is not UTF-8 text" in r.output


def test_a_failed_compile_leaves_the_previous_outputs_untouched(tmp_path):
    out = tmp_path / "libm"
    assert run("compile", MODEL, "--config", CFG, "-o", str(out)).exit_code == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(before) == {"libm.c", "libm.h", "libm.o"}
    r = run("compile", MODEL, "--config", CFG, "--cc", "/bin/false", "-o", str(out))
    assert r.exit_code == 3
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no temporaries either


@pytest.mark.parametrize("bad", ["", "outdir/", "."])
def test_o_must_name_a_file_prefix(tmp_path, monkeypatch, bad):
    monkeypatch.chdir(tmp_path)
    r = run("compile", MODEL, "--config", CFG, "-o", bad)
    assert r.exit_code == 2 and "-o must name a file prefix" in r.output
    assert not list(tmp_path.iterdir())


def test_a_device_as_inputs_or_constants_is_refused(tmp_path):
    r = run("run", MODEL, "--config", CFG, "--inputs", "/dev/zero", "--output", str(tmp_path / "o.npz"))
    assert r.exit_code == 1 and "/dev/zero: error: inputs: cannot read: a device" in r.output
    r = run("compile", MODEL, "--bind-constants", "/dev/zero", "-o", str(tmp_path / "libm"))
    assert r.exit_code == 1 and "/dev/zero: error: cannot read: a device" in r.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_inputs_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    p = subprocess.run([sys.executable, "-m", "aotc.cli", "run", MODEL, "--config", CFG, "--inputs", str(fifo),
                        "--output", str(tmp_path / "o.npz")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "inputs: cannot read: a FIFO" in p.stderr

"""`aotc info` through click's CliRunner: exit codes, signatures, JSON, and
errors printed as one located line (never a traceback)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from aotc import __version__
from aotc.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"
CORPUS = DATA / "corpus"
CASES = sorted(p.name for p in CORPUS.iterdir() if (p / "cfg.yaml").exists())
GRAPHSAGE = str(DATA / "models" / "graphsage_tf.hlo")
SSD = str(DATA / "models" / "ssd_mobilenet_tf.hlo")
LOCATED = re.compile(r"^\S+:\d+:\d+: error: ")
JSON_KEYS = {"signature", "computations", "opcodes", "constant_bytes", "unsupported_opcodes", "memory_plan"}


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def signature_line(stdout: str) -> str:
    (line,) = [ln for ln in stdout.splitlines() if ln.startswith("signature: ")]
    return line[len("signature: "):]


def expected_signature(case: str) -> str:
    """The signature text written out from cfg.yaml and meta.json (layouts of op_shape_ops aside)."""
    cfg = yaml.safe_load((CORPUS / case / "cfg.yaml").read_text())
    meta = json.loads((CORPUS / case / "meta.json").read_text())
    donated = set(meta["donate_argnums"])
    ins = ", ".join(f"{f['name']}: {'variable ' if f['id'] in donated else ''}{f['type']}[{','.join(map(str, f['shape']))}]"
                    for f in cfg["feeds"])
    outs = ", ".join(f"{f['name']}: {f['type']}[{','.join(map(str, f['shape']))}]" for f in meta["fetches"])
    return f"({ins}) -> ({outs})"


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"aotc, version {__version__}"


@pytest.mark.parametrize("form", ["model.hlo", "model.opt.hlo"])
@pytest.mark.parametrize("case", CASES)
def test_info_on_corpus(case, form):
    result = run("info", str(CORPUS / case / form), "--config", str(CORPUS / case / "cfg.yaml"))
    assert result.exit_code == 0, result.output
    got = signature_line(result.stdout)
    if case == "op_shape_ops" and form == "model.hlo":  # JAX lays the transpose result out column-major
        got = got.replace("f32[5,2,2,3]{0,3,1,2}", "f32[5,2,2,3]")
    assert got == expected_signature(case)


@pytest.mark.parametrize("case", ["tf_matmul", "tf_variable", "op_while"])
def test_info_json(case):
    result = run("info", str(CORPUS / case / "model.hlo"), "-c", str(CORPUS / case / "cfg.yaml"), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert JSON_KEYS <= set(report)
    meta = json.loads((CORPUS / case / "meta.json").read_text())
    assert [(f["name"], f["type"], f["shape"]) for f in report["signature"]["fetches"]] == \
        [(f["name"], f["type"], f["shape"]) for f in meta["fetches"]]
    assert sum(report["opcodes"].values()) == sum(c["instructions"] for c in report["computations"])
    assert [c["name"] for c in report["computations"] if c["entry"]] == ["main.1"] or case == "op_while"
    assert set(report["opcodes"]) >= set(meta["ops"])


def test_info_reports_variables():
    result = run("info", str(CORPUS / "tf_variable" / "model.hlo"))
    assert result.exit_code == 0, result.output
    assert signature_line(result.stdout) == "(v: variable f32[2,3], d: f32[2,3]) -> (mul: f32[2,3])"
    assert "variable, updated by output {0}" in result.stdout


@pytest.mark.parametrize("path,signature,elided", [
    (GRAPHSAGE, "(arg0: s32[10], arg1: s32[128,10], arg2: s32[1]) -> (XLA_Retvals: f32[1,121])", 11),
    (SSD, "(arg0: f32[1,300,300,3]) -> (XLA_Retvals_3: f32[1,1917,1,4], XLA_Retvals_4: f32[1,1917,90])", 100),
])
def test_info_on_models_with_elided_constants(path, signature, elided):
    result = run("info", path)
    assert result.exit_code == 0, result.output
    assert signature_line(result.stdout) == signature
    assert f", {elided} elided (fill them with" in result.stdout
    report = json.loads(run("info", path, "--json").stdout)
    assert report["elided_constants"] == elided and report["constant_bytes"] > 0
    report = json.loads(run("info", path, "--json", "--elided-constants", "random").stdout)
    assert report["elided_constants"] == 0


def one_error(result) -> str:
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    located = [ln for ln in result.stderr.splitlines() if " error: " in ln]
    assert len(located) == 1, result.stderr
    return located[0]


def test_malformed_hlo(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] add(x, x\n}\n")
    line = one_error(run("info", str(bad)))
    assert LOCATED.match(line) and line.startswith(f"{bad}:")


def test_verifier_error(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] add(x, y)\n}\n")
    result = run("info", str(bad))
    assert one_error(result) == f"{bad}:5:8: error: a: operand y is not defined in computation main"
    assert result.stderr.splitlines()[1:] == ["  ROOT a = f32[2] add(x, y)", "       ^"]


def test_malformed_config(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("feeds:\n  - id: 0\n    shape: [3, 2]\n")
    line = one_error(run("info", str(CORPUS / "tf_matmul" / "model.hlo"), "--config", str(cfg)))
    assert line == f"{cfg}:3:12: error: feeds[0].shape: [3, 2] does not match parameter x.1 f32[2,3]"
    cfg.write_text("feeds:\n  - id: 0\n   name: x\n")
    assert LOCATED.match(one_error(run("info", str(CORPUS / "tf_matmul" / "model.hlo"), "-c", str(cfg))))


def test_unreadable_files(tmp_path):
    missing = tmp_path / "missing.hlo"
    assert one_error(run("info", str(missing))) == f"{missing}: error: cannot read model: No such file or directory"
    line = one_error(run("info", str(CORPUS / "tf_matmul" / "model.hlo"), "-c", str(tmp_path / "none.yaml")))
    assert line == f"{tmp_path / 'none.yaml'}: error: cannot read config: No such file or directory"
    line = one_error(run("info", GRAPHSAGE, "--bind-constants", str(tmp_path / "none.npz")))
    assert line == f"{tmp_path / 'none.npz'}: error: cannot read: No such file or directory"
    assert one_error(run("info", str(tmp_path))).startswith(f"{tmp_path}: error: cannot read model: a directory")


def test_info_with_bound_parameter(tmp_path):
    import numpy as np

    np.savez(tmp_path / "w.npz", y=np.ones((3, 2), np.float32))
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("name: mm\ncpp_class: a::Mm\nfeeds:\n  - id: x\nfetches:\n  - id: 0\n    name: prod\n"
                   "bound:\n  file: w.npz\n  params:\n    - id: 1\n")
    result = run("info", str(CORPUS / "tf_matmul" / "model.opt.hlo"), "-c", str(cfg))
    assert result.exit_code == 0, result.output
    assert signature_line(result.stdout) == "(arg0: f32[2,3]) -> (prod: f32[2,2])"
    assert "C prefix: mm   C++ class: a::Mm" in result.stdout
    assert "  parameter 1  y.1  f32[3,2]  24 bytes" in result.stdout.splitlines()
    report = json.loads(run("info", str(CORPUS / "tf_matmul" / "model.opt.hlo"), "-c", str(cfg), "--json").stdout)
    assert report["signature"]["bound"] == [{"parameter": 1, "hlo_name": "y.1", "type": "f32", "shape": [3, 2],
                                             "bytes": 24}]

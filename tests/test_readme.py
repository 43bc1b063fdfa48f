"""Every code block of the README is run as written, or marked with why it is not: each block
follows a `<!-- readme-example: ID -->` comment (`(saved as FILE)` names the file it becomes) or a
`<!-- readme-not-run: REASON -->` one. The first example (a JAX function to a C library, then C),
the Quickstart (export, config, `aotc` commands, the C++ program and its build command, Python) and
the Python API block run here; every `matmul_*`/`MATMUL_*`/`predict_*` symbol the README names is
declared by a generated header."""
from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aotc

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKER = re.compile(r"^\s*<!-- readme-(example: (?P<id>[\w-]+)(?: \(saved as (?P<file>[\w.]+)\))?"
                    r"|not-run: (?P<why>.{10,})) -->$")
# the ids the tests below run
TESTED = {"first-python", "first-c", "first-c-build", "quickstart-export", "quickstart-config",
          "quickstart-compile", "quickstart-cpp", "quickstart-cpp-build", "quickstart-python", "python-api"}
HAS_CC = shutil.which("cc") is not None and shutil.which("c++") is not None


def _blocks() -> list[tuple[int, str, str, re.Match | None]]:
    """(line, language, text dedented, marker match) of every fenced block; AssertionError for an
    unclosed fence or an indented code block (which could hide from the markers)."""
    lines = README.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^( *)```(\w*)\s*$", lines[i])
        if not m:
            assert not (lines[i].startswith("    ") and i > 0 and not lines[i - 1].strip()), \
                f"README.md:{i + 1}: an indented code block; fence it and mark it"
            i += 1
            continue
        indent, lang, start = len(m.group(1)), m.group(2), i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:])
            i += 1
        assert i < len(lines), f"README.md:{start + 1}: unclosed code block"
        prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        out.append((start + 1, lang, "\n".join(body) + "\n", MARKER.match(prev)))
        i += 1
    return out


def _examples() -> dict[str, tuple[str, str | None]]:
    return {m.group("id"): (text, m.group("file")) for _, _, text, m in _blocks() if m and m.group("id")}


def test_every_code_block_is_run_or_says_why_not():
    blocks = _blocks()
    unmarked = [f"README.md:{line}: ```{lang}" for line, lang, _, m in blocks if m is None]
    assert not unmarked, "blocks with neither readme-example nor readme-not-run:\n" + "\n".join(unmarked)
    ids = [m.group("id") for _, _, _, m in blocks if m.group("id")]
    assert len(ids) == len(set(ids)), ids
    assert set(ids) == TESTED, f"run here but not in the README: {TESTED - set(ids)}; " \
                               f"in the README but run by no test: {set(ids) - TESTED}"


def _aotc_on_path(tmp_path: Path) -> dict:
    """An environment whose `aotc` (and python) is this checkout's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "aotc"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m aotc "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    return dict(os.environ, PYTHONPATH=str(ROOT), PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def _run(example: str, cwd: Path, env: dict) -> str:
    """Run one README block in `cwd`: Python with this Python, shell with bash -e, anything with a
    `(saved as FILE)` only saved. Its stdout."""
    text, saved = _examples()[example]
    if saved:
        (cwd / saved).write_text(text)
        return ""
    lang = next(lang for _, lang, t, m in _blocks() if m and m.group("id") == example)
    cmd = [sys.executable, "-c", text] if lang == "python" else ["bash", "-e", "-c", text]
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"README block {example} failed:\n{text}\n{r.stdout[-2000:]}{r.stderr[-3000:]}"
    return r.stdout


@pytest.mark.jax
@pytest.mark.skipif(not HAS_CC, reason="needs a C and a C++ compiler (cc, c++)")
def test_first_example(tmp_path):
    pytest.importorskip("jax")
    env = _aotc_on_path(tmp_path)
    _run("first-python", tmp_path, env)
    assert (tmp_path / "build" / "libpredict.h").exists()
    _run("first-c", tmp_path, env)
    out = _run("first-c-build", tmp_path, env)
    assert out.strip() and float(out) == float(out), out


@pytest.mark.slow  # jax export, two compilations, a C++ build: ~10 s
@pytest.mark.jax
@pytest.mark.skipif(not HAS_CC, reason="needs a C and a C++ compiler (cc, c++)")
def test_quickstart(tmp_path):
    pytest.importorskip("jax")
    env = _aotc_on_path(tmp_path)
    for step in ("quickstart-export", "quickstart-config", "quickstart-compile", "quickstart-cpp"):
        _run(step, tmp_path, env)
    out = _run("quickstart-cpp-build", tmp_path, env)
    # the C++ program's inputs: x all 1, w[i] = 0.01 (i % 7), b all 0.5
    w = (0.01 * (np.arange(640) % 7)).astype(np.float32).reshape(64, 10)
    y = np.maximum(np.ones((8, 64), np.float32) @ w + np.float32(0.5), 0)
    assert abs(float(out) - y[0, 0]) <= 1e-5 * abs(y[0, 0]), (out, y[0, 0])
    _run("quickstart-python", tmp_path, env)


@pytest.mark.slow  # four builds of the model: the object, the cffi library, the runner, the bench runner
@pytest.mark.skipif(not HAS_CC, reason="needs a C compiler")
def test_python_api_block(tmp_path):
    os.symlink(ROOT / "examples", tmp_path / "examples")
    out = _run("python-api", tmp_path, _aotc_on_path(tmp_path))
    assert out.startswith("[[ 3.  3.]\n [12. 12.]]"), out


PREDICT_HLO = """\
HloModule predict

ENTRY main {
  x = f32[8,64] parameter(0)
  w = f32[64,10] parameter(1)
  b = f32[10] parameter(2)
  dot = f32[8,10] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bias = f32[8,10] broadcast(b), dimensions={1}
  sum = f32[8,10] add(dot, bias)
  zero = f32[] constant(0)
  zeros = f32[8,10] broadcast(zero), dimensions={}
  ROOT y = f32[8,10] maximum(sum, zeros)
}
"""


def test_every_symbol_the_readme_names_is_in_a_generated_header(tmp_path):
    """The README spells symbols as the header does (`matmul_OK`, `MATMUL_NUM_ARGS`,
    `matmul_arg_x_hold_data`): each one it names is declared by examples/matmul's header or by the
    header of the Quickstart's model (same signature, HLO written here) and config."""
    text = README.read_text(encoding="utf-8")
    matmul = aotc.compile(str(ROOT / "examples/matmul/matmul.hlo"), config=str(ROOT / "examples/matmul/matmul.yaml"),
                          out=str(tmp_path / "libmatmul"), emit=())
    (tmp_path / "predict.hlo").write_text(PREDICT_HLO)
    (tmp_path / "predict.yaml").write_text(_examples()["quickstart-config"][0])
    predict = aotc.compile(str(tmp_path / "predict.hlo"), config=str(tmp_path / "predict.yaml"),
                           out=str(tmp_path / "libpredict"), emit=())
    declared = set()
    for res in (matmul, predict):
        declared |= set(re.findall(r"\b\w+\b", Path(res.h_path).read_text()))
    named = set(re.findall(r"\b(?:matmul|MATMUL|predict|PREDICT)_\w+", text))
    assert len(named) > 40, sorted(named)  # the C API table names them
    missing = sorted(n for n in named if n not in declared)
    assert not missing, f"named in README.md but declared by no generated header: {missing}"

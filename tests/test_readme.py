"""The README's first example runs as written: its Python block (JAX function to a C library in
one call, checked against jax.jit) and its C block, compiled with the command the README
gives and run."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def _block(kind: str) -> str:
    text = open(README, encoding="utf-8").read()
    m = re.search(rf"<!-- readme-example: {kind} -->\n```{kind}\n(.*?)```", text, re.S)
    assert m, f"no '{kind}' example in the README"
    return m.group(1)


@pytest.mark.jax
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_readme_first_example(tmp_path):
    pytest.importorskip("jax")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(README))  # this checkout's aotc
    (tmp_path / "example.py").write_text(_block("python"))
    r = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "build" / "libpredict.h").exists()
    (tmp_path / "main.c").write_text(_block("c"))
    text = open(README, encoding="utf-8").read()
    cmd = re.search(r"^    (cc -std=c99 .*main\.c.*)$", text, re.M).group(1).split()
    r = subprocess.run(cmd + ["-o", "main"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["./main"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() and float(r.stdout) == float(r.stdout), r.stdout + r.stderr

"""The examples build and run: examples/matmul's C++, C and Python programs on this
machine, and its C++ program cross-built for aarch64 under qemu; examples/cmake's project
built with cmake and ninja."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "matmul")


def _make(tmp_path, target):
    build = tmp_path / "build"
    env = dict(os.environ, PYTHON=sys.executable)
    cmd = ["make", "-s", "-C", EXAMPLE, target, f"B={build}", f"BA={tmp_path / 'build-aarch64'}",
           f"AOTC={sys.executable} -m aotc.cli"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("c++") is None, reason="needs make and c++")
def test_matmul_example_runs(tmp_path):
    r = _make(tmp_path, "run")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [x for x in r.stdout.splitlines() if x.startswith(("Success", "Failed"))]
    assert len(lines) == 3 and all(x.startswith("Success") for x in lines), r.stdout


@pytest.mark.aarch64
@pytest.mark.skipif(not (shutil.which("aarch64-linux-gnu-g++") and shutil.which("qemu-aarch64")),
                    reason="needs g++-aarch64-linux-gnu and qemu-user")
def test_matmul_example_runs_on_aarch64(tmp_path):
    r = _make(tmp_path, "run-aarch64")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == "Success"


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("ninja")), reason="needs cmake and ninja (apt)")
def test_cmake_example_runs(tmp_path):
    from aotc.toolchain.buildsys import cmake_dir

    wrapper = tmp_path / "aotc"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m aotc "$@"\n')
    wrapper.chmod(0o755)
    build = tmp_path / "build"
    for cmd in (["cmake", "-S", os.path.join(ROOT, "examples", "cmake"), "-B", str(build), "-G", "Ninja",
                 f"-Daotc_DIR={cmake_dir()}", f"-DAOTC_EXECUTABLE={wrapper}"],
                ["cmake", "--build", str(build)], [str(build / "matmul_demo")]):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "[[58, 64], [139, 154]]"

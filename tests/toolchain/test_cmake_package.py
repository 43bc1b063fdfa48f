"""aotc's CMake package (aotc/toolchain/cmake): a real project with find_package(aotc) and
two aotc_add_library targets, built with cmake + ninja on this machine and for aarch64
through the shipped toolchain file (run under qemu), its C and C++ programs checked
against XLA's outputs; editing the model, or the bound .npz only the depfile names,
reruns aotc, and a build with nothing changed does not."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from aotc.toolchain.buildsys import cmake_dir

from .two_models import aotc_wrapper, run_program, write_models, write_sources

pytestmark = pytest.mark.slow

CMAKELISTS = """cmake_minimum_required(VERSION 3.20)
project(two_models LANGUAGES C CXX)
find_package(aotc 0.1 REQUIRED)

aotc_add_library(mm MODEL models/mm.hlo CONFIG models/mm.yaml)
aotc_add_library(unary MODEL models/unary.hlo CONFIG models/unary.yaml WEIGHTS bound)

add_executable(c_app main.c)
set_target_properties(c_app PROPERTIES C_STANDARD 11)
add_executable(cc_app main.cc)
target_compile_features(cc_app PRIVATE cxx_std_11)
foreach(app c_app cc_app)
  target_compile_options(${app} PRIVATE -Wall -Wextra -Werror)
  target_link_libraries(${app} PRIVATE mm unary)
endforeach()
"""


def _need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt install cmake ninja-build)")


def _project(root: Path) -> Path:
    write_models(root / "models")
    write_sources(root)
    (root / "CMakeLists.txt").write_text(CMAKELISTS)
    return root


def _configure(src: Path, build: Path, *extra: str) -> None:
    r = subprocess.run(["cmake", "-S", str(src), "-B", str(build), "-G", "Ninja", f"-Daotc_DIR={cmake_dir()}",
                        f"-DAOTC_EXECUTABLE={aotc_wrapper(src)}", *extra], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def _build(build: Path) -> list[str]:
    """Build; the models aotc compiled in this build (from the custom commands' comments)."""
    r = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return sorted(line.split("aotc: compiling ")[1].split()[0] for line in r.stdout.splitlines()
                  if "aotc: compiling " in line)


def test_cmake_project_on_host_rebuilds_on_edits(tmp_path):
    _need("cmake", "ninja")
    src = _project(tmp_path / "src")
    build = tmp_path / "build"
    _configure(src, build)
    assert _build(build) == ["models/mm.hlo", "models/unary.hlo"]
    run_program([str(build / "c_app")], "C program (CMake, host)")
    run_program([str(build / "cc_app")], "C++ program (CMake, host)")
    assert _build(build) == []  # nothing changed: aotc does not run

    model = src / "models" / "unary.hlo"
    model.write_text(model.read_text() + "\n")  # an edit that keeps the model's meaning
    assert _build(build) == ["models/unary.hlo"]

    npz = src / "models" / "y.npz"  # read through mm.yaml's `bound`: named only by the depfile
    data = npz.read_bytes()
    npz.unlink()
    npz.write_bytes(data)
    os.utime(npz, None)
    assert _build(build) == ["models/mm.hlo"]
    run_program([str(build / "cc_app")], "C++ program (CMake, host, rebuilt)")


@pytest.mark.aarch64
def test_cmake_project_cross_aarch64_runs_under_qemu(tmp_path):
    _need("cmake", "ninja")
    missing = [t for t in ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "qemu-aarch64") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt install gcc-aarch64-linux-gnu "
                    "g++-aarch64-linux-gnu qemu-user)")
    src = _project(tmp_path / "src")
    build = tmp_path / "build"
    _configure(src, build, f"-DCMAKE_TOOLCHAIN_FILE={cmake_dir()}/aarch64-linux-gnu.cmake")
    assert _build(build) == ["models/mm.hlo", "models/unary.hlo"]
    assert "target aarch64 (aarch64-linux-gnu" in (build / "aotc" / "mm" / "mm.h").read_text()
    qemu = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
    run_program([*qemu, str(build / "c_app")], "C program (CMake, aarch64 under qemu)")
    run_program([*qemu, str(build / "cc_app")], "C++ program (CMake, aarch64 under qemu)")


WEIGHTS_CMAKELISTS = """cmake_minimum_required(VERSION 3.20)
project(weights_app LANGUAGES C)
find_package(aotc 0.1 REQUIRED)

aotc_add_library(mlp MODEL models/model.hlo CONFIG models/cfg.yaml WEIGHTS file)
add_executable(app main.c)
target_link_libraries(app PRIVATE mlp)
target_compile_definitions(app PRIVATE "MLP_WEIGHTS=\\"$<TARGET_PROPERTY:mlp,AOTC_WEIGHTS_FILE>\\"")
install(TARGETS app DESTINATION bin)
install(FILES "$<TARGET_PROPERTY:mlp,AOTC_WEIGHTS_FILE>" DESTINATION share/app)
"""

WEIGHTS_MAIN = r"""/* x on stdin -> y on stdout, with the weights file the build wrote (or argv[1]) */
#include <stdio.h>
#include "mlp.h"

int main(int argc, char** argv) {
    mlp_instance* m = mlp_create(mlp_ALLOC_ALL);
    if (!m) return 1;
    if (mlp_load_weights(m, argc > 1 ? argv[1] : MLP_WEIGHTS) != mlp_OK) {
        fprintf(stderr, "%s\n", mlp_error_msg(m));
        return 2;
    }
    if (fread(mlp_arg_data(m, 0), 1, mlp_arg_bytes(0), stdin) != mlp_arg_bytes(0) || mlp_run(m) != mlp_OK) return 3;
    fwrite(mlp_result_data(m, 0), 1, mlp_result_bytes(0), stdout);
    mlp_destroy(m);
    return 0;
}
"""

MLP = Path(__file__).resolve().parents[1] / "data" / "weights" / "mlp"


def _mlp_output(argv: list[str], key: str) -> None:
    """Run the weights app on the fixture's x; its y must be XLA's with weight set `key`."""
    with np.load(MLP / "inputs.npz") as z:
        x = z["x"].tobytes()
    r = subprocess.run(argv, input=x, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    with np.load(MLP / "expected.npz") as z:
        np.testing.assert_allclose(np.frombuffer(r.stdout, np.float32).reshape(8, 10), z[f"y_{key}"],
                                   rtol=1e-5, atol=1e-5)


def test_cmake_weights_file_is_built_exported_and_installed(tmp_path):
    """WEIGHTS file: the build writes mlp.weights, AOTC_WEIGHTS_FILE names it, the program
    loads it and matches XLA; a new weight set in the .npz rebuilds the weights file (not the
    C), and install() installs it."""
    _need("cmake", "ninja")
    src = tmp_path / "src"
    (src / "models").mkdir(parents=True)
    shutil.copy(MLP / "model.hlo", src / "models" / "model.hlo")
    shutil.copy(MLP / "cfg_a.yaml", src / "models" / "cfg.yaml")
    shutil.copy(MLP / "weights_a.npz", src / "models" / "weights_a.npz")
    (src / "main.c").write_text(WEIGHTS_MAIN)
    (src / "CMakeLists.txt").write_text(WEIGHTS_CMAKELISTS)
    aotc_wrapper(src)
    build = tmp_path / "build"
    _configure(src, build)
    assert _build(build) == ["models/model.hlo"]
    weights = build / "aotc" / "mlp" / "mlp.weights"
    c_text = (build / "aotc" / "mlp" / "mlp.c").read_bytes()
    assert weights.read_bytes()[:8] == b"AOTCWGT\0"
    _mlp_output([str(build / "app")], "a")

    shutil.copy(MLP / "weights_b.npz", src / "models" / "weights_a.npz")  # another weight set, same file name
    assert _build(build) == ["models/model.hlo"]
    assert (build / "aotc" / "mlp" / "mlp.c").read_bytes() == c_text
    _mlp_output([str(build / "app")], "b")
    weights.unlink()
    assert _build(build) == ["models/model.hlo"]  # an output of aotc's command: a deleted one is rebuilt

    inst = tmp_path / "inst"
    r = subprocess.run(["cmake", "--install", str(build), "--prefix", str(inst)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (inst / "share" / "app" / "mlp.weights").read_bytes() == weights.read_bytes()
    _mlp_output([str(inst / "bin" / "app"), str(inst / "share" / "app" / "mlp.weights")], "b")


def test_cmake_refuses_an_unknown_weights_mode(tmp_path):
    _need("cmake", "ninja")
    src = _project(tmp_path / "src")
    (src / "CMakeLists.txt").write_text(CMAKELISTS.replace("WEIGHTS bound", "WEIGHTS files"))
    r = subprocess.run(["cmake", "-S", str(src), "-B", str(tmp_path / "b"), "-G", "Ninja", f"-Daotc_DIR={cmake_dir()}",
                        f"-DAOTC_EXECUTABLE={aotc_wrapper(src)}"], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "WEIGHTS files: use bound" in r.stderr and "or file" in r.stderr


@pytest.mark.parametrize("processor, compiler_target, aotc_target", [
    ("aarch64", "", "aarch64"),
    ("arm64", "aarch64-none-linux-android24", "aarch64-linux-android"),  # as the Android NDK sets it
    ("AMD64", "x86_64-pc-linux-gnu", "x86_64"),
    ("riscv64", "", "riscv64"),
])
def test_cmake_cross_target_defaults_from_the_toolchain(tmp_path, processor, compiler_target, aotc_target):
    """Configure only, with this machine's compiler posing as a cross compiler: the aotc target
    aotc_add_library passes comes from CMAKE_C_COMPILER_TARGET, else CMAKE_SYSTEM_PROCESSOR."""
    _need("cmake", "ninja")
    src = _project(tmp_path / "src")
    toolchain = tmp_path / "toolchain.cmake"
    toolchain.write_text(f"set(CMAKE_SYSTEM_NAME Linux)\nset(CMAKE_SYSTEM_PROCESSOR {processor})\n"
                         + (f"set(CMAKE_C_COMPILER_TARGET {compiler_target})\n" if compiler_target else ""))
    build = tmp_path / "build"
    _configure(src, build, f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    ninja = (build / "build.ninja").read_text()
    assert f"--target {aotc_target} --weights bound" in ninja
    assert "--target host" not in ninja

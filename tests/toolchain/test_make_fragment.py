"""aotc's Makefile fragment (aotc/toolchain/make/aotc.mk): a project that includes it
builds two models with `aotc_library` into another directory, and one with the `lib%.a`
pattern rule beside its model, on this machine and for aarch64 (run under qemu); its C
and C++ programs give XLA's outputs, the default goal stays the project's, and editing
the model or the bound .npz (known only from the depfile) reruns aotc."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .two_models import aotc_wrapper, run_program, write_models, write_sources

pytestmark = pytest.mark.slow

MAKEFILE = """include $(shell $(AOTC) --make-include)

B := out
$(eval $(call aotc_library,$(B)/mm,models/mm.hlo,models/mm.yaml))
$(eval $(call aotc_library,$(B)/unary,models/unary.hlo,models/unary.yaml))

all: c_app cc_app

c_app: main.c $(B)/mm.a $(B)/unary.a
\t$(CC) -std=c11 -Wall -Wextra -Werror -I$(B) main.c $(B)/mm.a $(B)/unary.a $(AOTC_LIBS) -o $@

cc_app: main.cc $(B)/mm.a $(B)/unary.a
\t$(CXX) -std=c++11 -Wall -Wextra -Werror -I$(B) main.cc $(B)/mm.a $(B)/unary.a $(AOTC_LIBS) -o $@

.PHONY: all
"""


def _project(root: Path) -> Path:
    write_models(root / "models")
    write_sources(root)
    (root / "Makefile").write_text(MAKEFILE)
    return root


def _make(src: Path, *args: str) -> list[str]:
    """Run make; the models aotc compiled (from the echoed recipes)."""
    run = f"{aotc_wrapper(src)} compile "
    r = subprocess.run(["make", "-C", str(src), f"AOTC={run.split()[0]}", *args], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return sorted(line[len(run):].split()[0] for line in r.stdout.splitlines() if line.startswith(run))


def test_make_project_on_host_rebuilds_on_edits(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    src = _project(tmp_path)
    assert _make(src) == ["models/mm.hlo", "models/unary.hlo"]  # `make` builds `all`, not a model
    run_program([str(src / "c_app")], "C program (make, host)")
    run_program([str(src / "cc_app")], "C++ program (make, host)")
    assert _make(src) == []

    model = src / "models" / "unary.hlo"
    model.write_text(model.read_text() + "\n")
    assert _make(src) == ["models/unary.hlo"]

    npz = src / "models" / "y.npz"
    data = npz.read_bytes()
    npz.unlink()
    npz.write_bytes(data)
    os.utime(npz, None)
    assert _make(src) == ["models/mm.hlo"]
    run_program([str(src / "cc_app")], "C++ program (make, host, rebuilt)")

    # the pattern rule: models/libmm.a from models/mm.hlo and models/mm.yaml
    assert _make(src, "models/libmm.a") == ["models/mm.hlo"]
    assert (src / "models" / "libmm.d").is_file() and (src / "models" / "libmm.pc").is_file()
    assert _make(src, "models/libmm.a") == []


@pytest.mark.aarch64
def test_make_project_cross_aarch64_runs_under_qemu(tmp_path):
    missing = [t for t in ("make", "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "qemu-aarch64")
               if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt install gcc-aarch64-linux-gnu "
                    "g++-aarch64-linux-gnu qemu-user)")
    src = _project(tmp_path)
    assert _make(src, "AOTC_TARGET=aarch64", "CC=aarch64-linux-gnu-gcc", "CXX=aarch64-linux-gnu-g++") == [
        "models/mm.hlo", "models/unary.hlo"]
    qemu = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
    run_program([*qemu, str(src / "c_app")], "C program (make, aarch64 under qemu)")
    run_program([*qemu, str(src / "cc_app")], "C++ program (make, aarch64 under qemu)")

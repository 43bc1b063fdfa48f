"""The SIMD vocabulary (runtime_c/aotc_simd.h) gives the scalar helpers' bits, lane by lane,
at both widths (8 lanes everywhere; the map width, 16 lanes with AVX-512F), on every ISA
path it has: AVX2, AVX-512F, the portable C path, and NEON on
aarch64 (cross-built and run under qemu when the toolchain is installed); with gcc and
clang, and with and without the FP environment of generated code."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from aotc.runtime_c import runtime_source

from .conftest import cpu_flags, is_x86_64

HERE = Path(__file__).resolve().parent


def _cases():
    out = []
    for cc in ("gcc", "clang"):
        if shutil.which(cc) is None:
            continue
        if is_x86_64() and {"avx2", "fma"} <= cpu_flags():
            out.append((cc, ("-O2", "-march=native", "-mno-avx512f"), "avx2+fma 8", None))
            out.append((cc, ("-O3", "-march=native"), "avx512f 16" if "avx512f" in cpu_flags() else "avx2+fma 8", None))
        out.append((cc, ("-O2", "-DAOTC_SIMD_SCALAR"), "scalar 8", None))
        out.append((cc, ("-O0", "-DAOTC_SIMD_SCALAR"), "scalar 8", None))
        out.append((cc, ("-O1",), None, None))
    if shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64"):
        out.append(("aarch64-linux-gnu-gcc", ("-O2", "-static"), "neon 8", "qemu-aarch64"))
    return out


@pytest.mark.parametrize("cc,flags,isa,runner", _cases(), ids=lambda v: " ".join(v) if isinstance(v, tuple) else str(v))
def test_vector_lanes_give_the_scalar_bits(tmp_path, cc, flags, isa, runner):
    src = tmp_path / "simd_check.c"
    src.write_text(runtime_source() + "\n" + (HERE / "simd_check.c").read_text())
    exe = tmp_path / "simd_check"
    build = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *flags, str(src), "-o", str(exe),
                            "-lm", "-lpthread"], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run(([runner] if runner else []) + [str(exe)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:]
    if isa is not None:
        assert run.stdout.startswith(f"simd {isa}\n")


def _exhaustive_cases():
    if not (is_x86_64() and {"avx2", "fma"} <= cpu_flags()):
        return [("-O2", "-DAOTC_SIMD_SCALAR")]
    out = [("-O2", "-march=native", "-mno-avx512f")]
    if "avx512f" in cpu_flags():
        out.append(("-O2", "-march=native"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("flags", _exhaustive_cases(), ids=" ".join)
@pytest.mark.parametrize("env", [False, True], ids=["ieee", "ftz"])
def test_exp_tanh_logistic_on_every_f32(tmp_path, flags, env):
    """The vector exp, tanh and logistic drop selects the scalar helpers have (exp's overflow
    and flush, tanh's clamp compares): right only because of what the polynomials give at
    the bounds, so every f32 input is checked."""
    cc = "gcc" if shutil.which("gcc") else "clang"
    src = tmp_path / "simd_exhaustive.c"
    src.write_text(runtime_source() + "\n" + (HERE / "simd_exhaustive.c").read_text())
    exe = tmp_path / "simd_exhaustive"
    build = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *flags, str(src), "-o", str(exe),
                            "-lm", "-lpthread"], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([str(exe)] + (["env"] if env else []), capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:]

"""aotc_fft's c64 transforms on 8-lane vectors (aotc_fft_v8.c: the f32 passes, and the
gather and scatter of 8 lines by transposes) give the bits of its one-line scalar code:
every line of a batch of 9 identical ones (8 in a vector block, the ninth alone) comes out
the same, and the machine's vector build, a portable build with neither vectors nor
transposes (gcc -O0 -march=x86-64) and clang -O2 agree bit for bit, along the last axis
and along the axes before it; the values are numpy's to f32 accuracy. The twiddle tables,
whose later quarters are the first one turned by exact products with -i, hold what the
direct computation gives, bit for bit."""
from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from aotc.runtime_c import FFT_KINDS, RUNTIME_DIR

HERE = Path(__file__).resolve().parent
# (kind, batch, n0, n1, n2): radix 4, 2, 3 and 5 passes; rows, columns and planes of 2-D and 3-D
# transforms (8 neighbouring lines and a rest); a batch that is not a multiple of 8. A line
# alone runs a pass on vectors once its stride reaches 8: 15, 10 and 12 points keep every
# pass of the lone line scalar, so each radix's vector pass meets its scalar one.
CASES = [("FFT", 9, 1, 1, 1024), ("IFFT", 9, 1, 1, 1000), ("FFT", 9, 1, 1, 960), ("IFFT", 9, 1, 1, 48),
         ("FFT", 2, 1, 24, 40), ("IFFT", 1, 1, 256, 256), ("FFT", 3, 5, 9, 16), ("RFFT", 11, 1, 12, 30),
         ("IRFFT", 3, 1, 16, 24), ("FFT", 17, 1, 1, 6), ("FFT", 9, 1, 1, 15), ("IFFT", 9, 1, 1, 10),
         ("FFT", 9, 1, 1, 12)]
BUILDS = {"native": ("gcc", "-O2", "-march=native"), "portable": ("gcc", "-O0", "-march=x86-64"),
          "clang": ("clang", "-O2", "-march=native")}


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the builds below name x86-64 ISA levels")
    d = tmp_path_factory.mktemp("fft_lanes")
    out = {}
    for name, (cc, opt, march) in BUILDS.items():
        if shutil.which(cc) is None:
            pytest.fail(f"{cc} is not installed (CI installs it)")
        exe = d / f"fft_{name}"
        subprocess.run([cc, "-std=c11", opt, march, "-Wall", "-Wextra", "-Werror", "-I", str(RUNTIME_DIR),
                        "-o", str(exe), str(HERE / "fft_file.c"), "-lm"], check=True)
        out[name] = exe
    return out


def _input(kind: str, b: int, n0: int, n1: int, n2: int, same_lines: bool) -> np.ndarray:
    rng = np.random.default_rng(b * 1000003 + n2)
    n = n2 // 2 + 1 if kind == "IRFFT" else n2
    shape = (1 if same_lines else b, n0, n1, n)
    if kind == "RFFT":
        x = rng.standard_normal(shape).astype(np.float32)
    else:
        x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    return np.ascontiguousarray(np.broadcast_to(x, (b, n0, n1, n))) if same_lines else x


def _run(exe: Path, kind: str, dims, x: np.ndarray, tmp: Path) -> np.ndarray:
    b, n0, n1, n2 = dims
    (tmp / "in.bin").write_bytes(x.tobytes())
    subprocess.run([str(exe), str(FFT_KINDS[kind]), str(b), str(n0), str(n1), str(n2), str(tmp / "in.bin"),
                    str(tmp / "out.bin")], check=True)
    n = n2 // 2 + 1 if kind == "RFFT" else n2
    return np.frombuffer((tmp / "out.bin").read_bytes(), np.float32 if kind == "IRFFT" else np.complex64
                         ).reshape(b, n0, n1, n)


def _numpy(kind: str, x: np.ndarray, n2: int, axes) -> np.ndarray:
    x = x.astype(np.complex128 if kind != "RFFT" else np.float64)
    return {"FFT": lambda: np.fft.fftn(x, axes=axes), "IFFT": lambda: np.fft.ifftn(x, axes=axes),
            "RFFT": lambda: np.fft.rfftn(x, axes=axes),
            "IRFFT": lambda: np.fft.irfftn(x, s=[x.shape[a] for a in axes[:-1]] + [n2], axes=axes)}[kind]()


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_builds_agree_bit_for_bit_and_with_numpy(case, programs, tmp_path):
    kind, *dims = case
    b, n0, n1, n2 = dims
    x = _input(kind, *dims, same_lines=False)
    got = {name: _run(exe, kind, dims, x, tmp_path) for name, exe in programs.items()}
    for name in ("portable", "clang"):
        assert got[name].tobytes() == got["native"].tobytes(), name
    axes = [a for a, n in zip((1, 2, 3), (n0, n1, n2)) if n > 1 or a == 3]
    want = _numpy(kind, x, n2, axes)
    scale = np.abs(want).max()
    np.testing.assert_allclose(got["native"], want, rtol=0, atol=2e-6 * scale * np.log2(max(2, n0 * n1 * n2)))


@pytest.mark.parametrize("case", [c for c in CASES if c[1] == 9], ids=lambda c: "-".join(map(str, c)))
def test_a_line_alone_gives_the_bits_of_a_line_in_a_vector_block(case, programs, tmp_path):
    kind, *dims = case
    got = _run(programs["native"], kind, dims, _input(kind, *dims, same_lines=True), tmp_path)
    for line in range(1, dims[0]):
        assert got[line].tobytes() == got[0].tobytes(), line


def test_twiddle_quarters_are_the_direct_values(tmp_path):
    if shutil.which("gcc") is None:
        pytest.fail("gcc is not installed (CI installs it)")
    exe = tmp_path / "fft_twiddles"
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(RUNTIME_DIR), "-o", str(exe),
                    str(HERE / "fft_twiddles.c"), "-lm"], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("0 of "), r.stdout + r.stderr

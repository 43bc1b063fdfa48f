"""aotc_fft on its own: the scratch it asks for (aotc_fft_scratch_need) is what the
compiler reserves (aotc.runtime_c.fft_scratch_bytes) for every kind and for smooth,
Bluestein, one and zero lengths. Its results are checked against XLA in tests/ops/test_fft.py."""
from __future__ import annotations

import ctypes
import shutil
import subprocess

import pytest

from aotc.runtime_c import FFT_KINDS, RUNTIME_DIR, fft_core_len, fft_scratch_bytes

LENGTHS = [(1, 1, 1), (1, 1, 2), (1, 1, 97), (1, 1, 1000), (1, 64, 48), (1, 7, 1), (16, 12, 10), (5, 7, 6),
           (1, 1, 0), (0, 3, 3), (3, 1, 11), (256, 256, 1), (1, 1, 4096), (13, 1, 1)]


@pytest.fixture(scope="module")
def fftlib(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not found")
    d = tmp_path_factory.mktemp("fft")
    src = d / "fft.c"
    src.write_text('#define AOTC_RT_API\n#include "aotc_rt.h"\n#include "aotc_fft.c"\n')
    so = d / "libfft.so"
    subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-I",
                    str(RUNTIME_DIR), "-o", str(so), str(src), "-lm"], check=True)
    lib = ctypes.CDLL(str(so))
    lib.aotc_fft_scratch_need.restype = ctypes.c_size_t
    lib.aotc_fft_scratch_need.argtypes = [ctypes.c_int] + [ctypes.c_int64] * 4
    return lib


@pytest.mark.parametrize("kind", sorted(FFT_KINDS))
def test_scratch_need_matches_the_compiler(fftlib, kind):
    for batch in (0, 1, 3, 256):
        for lengths in LENGTHS:
            want = fftlib.aotc_fft_scratch_need(FFT_KINDS[kind], batch, *lengths)
            assert fft_scratch_bytes(kind, batch, lengths) == want, (kind, batch, lengths)


def test_core_lengths():
    assert [fft_core_len(n) for n in (1, 2, 8, 60, 97, 210, 1000, 7)] == [1, 2, 8, 60, 200, 432, 1000, 15]

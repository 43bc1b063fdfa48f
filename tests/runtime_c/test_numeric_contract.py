"""The numeric contract at the top of aotc_rt.h holds whatever flags the user's
build passes: no FMA contraction of a*b+c under gcc in GNU mode with FMA
hardware enabled (object code and bits), explicit fmaf still fused, and
-ffast-math, -Ofast and -ffinite-math-only refused with an #error naming them.
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from aotc.runtime_c import RUNTIME_DIR

from .conftest import cpu_flags, is_x86_64

KERNEL = """
#include "aotc_rt.h"
void mac(float* AOTC_RESTRICT c, const float* a, const float* b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] * b[i] + c[i];
}
float fused(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
"""

x86_fma = pytest.mark.skipif(not is_x86_64() or shutil.which("objdump") is None,
                             reason="needs x86-64 and objdump")


def _compilers() -> list[str]:
    return [cc for cc in ("gcc", "clang") if shutil.which(cc)]


def _build(tmp_path, cc: str, flags: list[str], name: str, header: bool = True):
    src = tmp_path / f"{name}.c"
    src.write_text(KERNEL if header else KERNEL.replace('#include "aotc_rt.h"', "#include <stdint.h>\n"
                                                                             "#define AOTC_RESTRICT restrict"))
    so = tmp_path / f"{name}.so"
    subprocess.run([cc, *flags, f"-I{RUNTIME_DIR}", "-fPIC", "-shared", "-o", str(so), str(src)], check=True,
                   capture_output=True)
    return so


def _fma_functions(so) -> set[str]:
    text = subprocess.run(["objdump", "-d", str(so)], check=True, capture_output=True, text=True).stdout
    fn, found = "", set()
    for line in text.splitlines():
        if line.endswith(">:"):
            fn = line.split("<")[1].rstrip(">:")
        elif "vfmadd" in line or "vfmsub" in line or "vfnmadd" in line:
            found.add(fn)
    return found


def _mac_bits(so) -> bytes:
    lib = ctypes.CDLL(str(so))
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(1003).astype(np.float32) for _ in range(3))
    ptr = ctypes.c_void_p
    lib.mac(ptr(c.ctypes.data), ptr(a.ctypes.data), ptr(b.ctypes.data), ctypes.c_int64(c.size))
    return c.tobytes()


@x86_fma
@pytest.mark.parametrize("cc", _compilers())
def test_no_contraction_with_fma_hardware(tmp_path, cc):
    flags = ["-O2", "-march=x86-64-v3"]  # GNU dialect: gcc contracts by default
    so = _build(tmp_path, cc, flags, f"mac_{cc}")
    assert _fma_functions(so) == {"fused"}
    if cc == "gcc":  # the check has teeth: without the runtime's pragma gcc fuses the loop
        assert "mac" in _fma_functions(_build(tmp_path, cc, flags, f"bare_{cc}", header=False))
    if "fma" in cpu_flags() and "avx2" in cpu_flags():
        assert _mac_bits(so) == _mac_bits(_build(tmp_path, cc, ["-O0"], f"mac_{cc}_O0"))


@pytest.mark.parametrize("cc", _compilers())
@pytest.mark.parametrize("flag,named", [("-ffast-math", "-ffast-math"), ("-Ofast", "-Ofast"),
                                        ("-ffinite-math-only", "-ffinite-math-only")])
def test_fast_math_is_refused(tmp_path, cc, flag, named):
    src = tmp_path / "k.c"
    src.write_text(KERNEL)
    p = subprocess.run([cc, flag, f"-I{RUNTIME_DIR}", "-c", str(src), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert p.returncode != 0
    assert "#error" in p.stderr or "error:" in p.stderr
    assert named in p.stderr

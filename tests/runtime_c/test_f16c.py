"""F16C conversions (aotc_math.h with __F16C__) give the same bits as the portable
code for every f16 and a sweep of f32 values, under FTZ and DAZ (f16_check.c)."""
from __future__ import annotations

import pytest

from aotc.runtime_c import runtime_source

from .conftest import HERE, cpu_flags, run_c_program


@pytest.mark.slow
def test_f16c_matches_portable(tmp_path):
    if "f16c" not in cpu_flags():
        pytest.skip("needs a CPU with F16C")
    src = tmp_path / "f16_check.c"
    src.write_text(runtime_source() + "\n" + (HERE / "f16_check.c").read_text())
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
    f16c = run_c_program("gcc", [src], tmp_path / "f16c", flags + ["-mf16c", "-mavx2", "-mfma"])
    portable = run_c_program("gcc", [src], tmp_path / "portable", flags + ["-DAOTC_SIMD_SCALAR"])
    assert f16c.split() == portable.split()

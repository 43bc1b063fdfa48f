"""aotc_lowp.c (bf16 and s8 GEMMs) on each of its paths: this machine's (vdpbf16ps and
vpdpbusd where it has them, gcc and clang), AVX2's vpmaddwd (x86-64-v3), the portable C
(no -march, and AOTC_SIMD_SCALAR), ASan+UBSan, and NEON sdot on aarch64 under qemu. lowp_check.c
compares s8 results bit for bit with a wrapping reference and bf16 within f32 rounding."""
from __future__ import annotations

import pytest

from aotc.runtime_c import lp_bgemm_scratch_bytes, lp_igemm_scratch_bytes, runtime_source

from .conftest import HERE, aarch64_tools, have_tool, run_c_program

WARN = ["-std=c11", "-Wall", "-Wextra", "-Werror"]


def _source(tmp_path):
    src = tmp_path / "lowp_check.c"
    src.write_text(runtime_source() + "\n" + (HERE / "lowp_check.c").read_text())
    return src


@pytest.mark.parametrize("cc,flags", [
    ("gcc", ["-O2", "-march=native"]), ("clang", ["-O3", "-march=native"]), ("gcc", ["-O0", "-march=native"]),
    ("gcc", ["-O2", "-march=native", "-DAOTC_LP_DPBF16"]), ("clang", ["-O2", "-march=native", "-DAOTC_LP_DPBF16"]),
    ("gcc", ["-O2"]), ("clang", ["-O2", "-DAOTC_SIMD_SCALAR"]), ("gcc", ["-O2", "-march=x86-64-v3"]),
    ("clang", ["-O3", "-march=x86-64-v3"]), ("gcc", ["-O0", "-march=x86-64-v3"]),
    ("gcc", ["-O1", "-march=native", "-DAOTC_LP_DPBF16", "-fsanitize=address,undefined",
             "-fno-sanitize-recover=all"]),
    ("clang", ["-O1", "-march=x86-64-v3", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"])])
def test_lowp_check(tmp_path, cc, flags):
    if not have_tool(cc):
        pytest.skip(f"needs {cc}")
    out = run_c_program(cc, [_source(tmp_path)], tmp_path / "lowp_check", WARN + flags)
    assert out.strip() == "ok"


@pytest.mark.parametrize("march", ["armv8.2-a+dotprod", pytest.param("armv8-a", marks=pytest.mark.slow)])
def test_lowp_check_aarch64_under_qemu(tmp_path, march):
    """sdot (armv8.2-a+dotprod) and the portable s8 path with the NEON sgemm (armv8-a)."""
    tools = aarch64_tools()
    if tools is None:
        pytest.skip("needs aarch64-linux-gnu-gcc and qemu-aarch64")
    cc, runner = tools
    out = run_c_program(cc, [_source(tmp_path)], tmp_path / "lowp_check_aarch64", WARN + ["-O2", f"-march={march}"],
                        runner=runner)
    assert out.strip() == "ok"


def test_scratch_sizes_match_the_c(tmp_path):
    """lp_[bi]gemm_scratch_bytes mirror aotc_lp_[bi]gemm_scratch_need."""
    sizes = [(1, 1, 1), (255, 513, 129), (12, 32, 4), (2, 3, 140000), (1024, 1024, 1024), (37, 70, 1027)]
    prog = tmp_path / "need.c"
    lines = [runtime_source(), "#include <stdio.h>", "int main(void) {"]
    for m, n, k in sizes:
        lines.append(f'  printf("%zu %zu\\n", aotc_lp_bgemm_scratch_need({m}, {n}, {k}, 4, 1000), '
                     f"aotc_lp_igemm_scratch_need({m}, {n}, {k}));")
    lines.append("  return 0;\n}")
    prog.write_text("\n".join(lines))
    out = run_c_program("gcc", [prog], tmp_path / "need", WARN + ["-O0"]).split("\n")
    for (m, n, k), line in zip(sizes, out):
        assert line.split() == [str(lp_bgemm_scratch_bytes(m, n, k, 4, 1000)), str(lp_igemm_scratch_bytes(m, n, k))]

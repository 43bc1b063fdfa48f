"""The portability rules of docs/portability.md, checked on generated files."""
import os
import re
import shutil
import subprocess

import pytest

from aotc.driver import frontend, generate
from aotc.options import CompileOptions

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "corpus")
CASES = ["op_convert_matrix", "op_reduce", "op_while", "op_sort", "op_conv_variants", "tf_gather"]


def _c_text(case: str) -> str:
    d = os.path.join(DATA, case)
    fe = frontend(os.path.join(d, "model.hlo"), os.path.join(d, "cfg.yaml"))
    return generate(fe, "libport", CompileOptions()).c_text


def _code(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


@pytest.mark.parametrize("case", CASES)
def test_fixed_width_types_only(case):
    code = _code(_c_text(case))
    assert not re.search(r"\b(long|short)\b", code), re.search(r".*\b(long|short)\b.*", code).group(0)
    kernels = re.findall(r"static void k_\w+\(([^)]*)\)", code)
    assert kernels
    for params in kernels:
        for p in params.split(","):
            p = p.strip()
            if p in ("void", "") or p.startswith("void* "):
                continue
            ty = p.replace("const ", "").split("*")[0].strip().split()[0]
            assert ty in {"float", "double", "aotc_c64", "aotc_c128"} or re.fullmatch(r"u?int(8|16|32|64)_t", ty), p


def test_big_endian_is_refused_at_compile_time(tmp_path):
    cc = shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("needs a C compiler")
    d = os.path.join(DATA, "tf_add")
    fe = frontend(os.path.join(d, "model.hlo"), os.path.join(d, "cfg.yaml"))
    gen = generate(fe, str(tmp_path / "libbe"), CompileOptions())
    (tmp_path / "libbe.c").write_text(gen.c_text)
    (tmp_path / "libbe.h").write_text(gen.h_text)
    r = subprocess.run([cc, "-std=c11", "-w", "-U__BYTE_ORDER__", "-D__BYTE_ORDER__=__ORDER_BIG_ENDIAN__", "-c",
                        str(tmp_path / "libbe.c"), "-o", str(tmp_path / "be.o")], capture_output=True, text=True)
    assert r.returncode != 0 and "little-endian" in r.stderr


def test_generic_target_uses_no_intrinsics(tmp_path):
    cc = shutil.which("gcc")
    if cc is None:
        pytest.skip("needs gcc")
    text = _c_text("op_reduce")
    (tmp_path / "libport.h").write_text(generate(frontend(os.path.join(DATA, "op_reduce", "model.hlo"),
                                                          os.path.join(DATA, "op_reduce", "cfg.yaml")),
                                                 "libport", CompileOptions()).h_text)
    (tmp_path / "libport.c").write_text(text)
    r = subprocess.run([cc, "-std=c11", "-DAOTC_SIMD_SCALAR", "-E", str(tmp_path / "libport.c")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ours, keep = [], False
    for line in r.stdout.splitlines():  # only lines that come from the generated files
        if line.startswith("# "):
            keep = "libport." in line
            continue
        if keep:
            ours.append(line)
    calls = set(re.findall(r"\b(_mm\d*_\w+|vld1q_\w+|vst1q_\w+|__m\d+\w*)\b", "\n".join(ours)))
    # the floating-point environment (FTZ/DAZ, as XLA:CPU computes) and the processor's 1/sqrt
    # estimate (f32 rsqrt as XLA:CPU computes it, rsqrtss: SSE, in every x86-64) are the only
    # x86 instructions used
    assert calls <= {"_mm_getcsr", "_mm_setcsr", "_mm_rsqrt_ss", "_mm_set_ss", "_mm_cvtss_f32"}, calls


@pytest.mark.parametrize("cxx", ["g++", "clang++"])
def test_generated_c_compiles_as_cpp(tmp_path, cxx):
    """The generated .c, runtime included, is also valid C++11 without a warning (MSVC users
    may compile it with /TP; the runtime then uses std::atomic)."""
    if shutil.which(cxx) is None:
        pytest.skip(f"needs {cxx}")
    for case in ("op_conv_variants", "op_sort", "op_while", "op_convert_matrix"):
        d = os.path.join(DATA, case)
        gen = generate(frontend(os.path.join(d, "model.hlo"), os.path.join(d, "cfg.yaml")), str(tmp_path / "libport"),
                       CompileOptions())
        (tmp_path / "libport.c").write_text(gen.c_text)
        (tmp_path / "libport.h").write_text(gen.h_text)
        # no VLAs and no statement expressions either (MSVC has neither)
        extra = ["-Wvla"] + (["-Wgnu-statement-expression"] if cxx == "clang++" else [])
        r = subprocess.run([cxx, "-x", "c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", *extra, "-fsyntax-only",
                            str(tmp_path / "libport.c")], capture_output=True, text=True)
        assert r.returncode == 0, f"{case}:\n{r.stderr[:3000]}"

"""The runtime compiles warning-free everywhere it is meant to, and runs clean
under sanitizers.

- each file alone and the concatenated runtime, with -std=c11 -Wall -Wextra
  -Werror, on gcc and clang, for each SIMD path, and with the aarch64 cross
  compiler;
- two "models" that both embed the runtime link into one program;
- the math helpers' test cases (test_math.math_groups) run through a C driver
  built with ASan+UBSan, and its results equal the cffi build's;
- rt_check.c (GEMM, pool, FP env) under ASan+UBSan and TSan.
"""
from __future__ import annotations

import shutil
import struct
import subprocess

import pytest

from aotc.runtime_c import RUNTIME_DIR, RUNTIME_FILES, runtime_source

from .conftest import CTYPE, HERE, aarch64_tools, is_x86_64, native_variant, run_c_program
from .reference import BITS, bits_f32, bits_f64, call_group, math_groups, result_key, wrap

# the same check with clang runs with the heavy tests (`make test-slow`)
CLANG_SLOW = pytest.param("clang", marks=pytest.mark.slow)
WARN = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wpedantic"]


def compilers() -> list[str]:
    return [cc for cc in ("gcc", "clang") if shutil.which(cc)]


def simd_flag_sets() -> list[list[str]]:
    sets = [["-O0", "-DAOTC_SIMD_SCALAR"], ["-O2"]]
    if is_x86_64():
        sets += [["-O2", "-mavx2", "-mfma"], ["-O2", "-mavx512f", "-mavx2", "-mfma"],
                 ["-O3", "-march=native"]]
    return sets


def compile_only(cc: str, src, flags: list[str], lang_c: bool = True) -> None:
    cmd = [cc, *WARN, *flags, "-I", str(RUNTIME_DIR), "-c", *(["-x", "c"] if lang_c else []),
           str(src), "-o", "/dev/null"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"


@pytest.fixture(scope="module")
def concatenated(tmp_path_factory):
    p = tmp_path_factory.mktemp("concat") / "aotc_runtime.c"
    p.write_text(runtime_source())
    return p


@pytest.mark.parametrize("cc", ["gcc", CLANG_SLOW])
def test_each_file_alone(cc):
    if not shutil.which(cc):
        pytest.skip(f"{cc} not found")
    # that each file's includes suffice is a matter of its #if branches: the scalar path, the
    # generic build and the widest x86 one reach them all (the concatenated runtime below
    # goes through every flag set)
    sets = [f for f in simd_flag_sets() if f in (["-O0", "-DAOTC_SIMD_SCALAR"], ["-O2"]) or "-mavx512f" in f]
    for name in RUNTIME_FILES:
        for flags in sets:
            # a header declaring API functions alone needs them extern
            extra = ["-DAOTC_RT_API="] if name.endswith(".h") else []
            compile_only(cc, RUNTIME_DIR / name, flags + extra)


@pytest.mark.parametrize("cc", ["gcc", CLANG_SLOW])
def test_concatenated_runtime(cc, concatenated):
    if not shutil.which(cc):
        pytest.skip(f"{cc} not found")
    # static, as generated files embed it, under every flag set; with external linkage (every
    # function compiled, used or not) on the scalar path and the widest x86 one
    for flags in simd_flag_sets():
        compile_only(cc, concatenated, flags)
        if "-DAOTC_SIMD_SCALAR" in flags or "-mavx512f" in flags or not is_x86_64():
            compile_only(cc, concatenated, flags + ["-DAOTC_RT_API="])


@pytest.mark.slow
def test_aarch64_cross(concatenated):
    tools = aarch64_tools()
    cc = tools[0] if tools else shutil.which("aarch64-linux-gnu-gcc")
    if not cc:
        pytest.skip("aarch64-linux-gnu-gcc not found")
    for flags in (["-O2"], ["-O0", "-DAOTC_SIMD_SCALAR"], ["-O3", "-mcpu=neoverse-n1"]):
        compile_only(cc, concatenated, flags)
        for name in RUNTIME_FILES:
            extra = ["-DAOTC_RT_API="] if name.endswith(".h") else []
            compile_only(cc, RUNTIME_DIR / name, flags + extra)


def test_two_models_link_into_one_program(tmp_path):
    """Everything is static: two translation units embedding the runtime link."""
    if not shutil.which("gcc"):
        pytest.skip("gcc not found")
    rt = runtime_source()
    for m in ("a", "b"):
        (tmp_path / f"model_{m}.c").write_text(
            rt + f"""
float model_{m}(void) {{
  static AOTC_ALIGNAS(64) unsigned char scratch[AOTC_GEMM_SCRATCH_BYTES];
  float x[4] = {{1, 2, 3, 4}}, y[4];
  aotc_sgemm(2, 2, 2, x, 2, 1, x, 2, 1, y, 2, scratch);
  aotc_pool* p = aotc_pool_create(2);
  aotc_pool_destroy(p);
  return y[0] + (float)aotc_add_s32(1, 2);
}}
""")
    (tmp_path / "main.c").write_text(
        "#include <stdio.h>\nfloat model_a(void);\nfloat model_b(void);\n"
        "int main(void) { printf(\"%g %g\\n\", model_a(), model_b()); return 0; }\n")
    out = run_c_program("gcc", [tmp_path / "model_a.c", tmp_path / "model_b.c", tmp_path / "main.c"],
                        tmp_path / "two_models", [*WARN, "-O1"])
    assert out.split() == ["10", "10"]


# ------------------------------------------------------------------ sanitizers

def _load(t: str) -> str:
    return {"f32": "ld_f32", "f64": "ld_f64"}.get(t, f"ld_{t}")


def math_driver_source() -> tuple[str, list]:
    """C driver printing, for every case of math_groups(), the result bits."""
    groups = math_groups()
    lines = [runtime_source(), "#include <stdio.h>", "#include <inttypes.h>"]
    for t in ("s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "pred"):
        c = CTYPE[t]
        u = f"uint{BITS[t]}_t"
        lines.append(f"static {c} ld_{t}(uint64_t b) {{ {u} u = ({u})b; {c} v; memcpy(&v, &u, sizeof v); return v; }}")
        lines.append(f"static uint64_t st_{t}({c} v) {{ {u} u; memcpy(&u, &v, sizeof u); return u; }}")
    lines.append("static float ld_f32(uint64_t b) { uint32_t u = (uint32_t)b; float v; memcpy(&v, &u, 4); return v; }")
    lines.append("static uint64_t st_f32(float v) { uint32_t u; memcpy(&u, &v, 4); return u; }")
    lines.append("static double ld_f64(uint64_t b) { double v; memcpy(&v, &b, 8); return v; }")
    lines.append("static uint64_t st_f64(double v) { uint64_t u; memcpy(&u, &v, 8); return u; }")
    lines.append("int main(void) {")
    for gi, g in enumerate(groups):
        cols = list(zip(*g.rows))
        for ai, (t, col) in enumerate(zip(g.args, cols)):
            vals = ",".join(f"{_bits(v, t):#x}u" for v in col)
            lines.append(f"  static const uint64_t g{gi}_{ai}[] = {{{vals}}};")
        call = ", ".join(f"{_load(t)}(g{gi}_{ai}[i])" for ai, t in enumerate(g.args))
        lines.append(f"  for (size_t i = 0; i < {len(g.rows)}u; ++i)"
                     f" printf(\"%\" PRIx64 \"\\n\", st_{g.ret}({g.fn}({call})));")
    lines.append("  return 0;\n}")
    return "\n".join(lines), groups


def _bits(v, t: str) -> int:
    if t == "f32":
        return struct.unpack("<I", struct.pack("<f", v))[0]
    if t == "f64":
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    return int(v) & ((1 << BITS[t]) - 1)


def _from_bits(u: int, t: str):
    if t == "f32":
        return bits_f32(u)
    if t == "f64":
        return bits_f64(u)
    return wrap(u, t) if t != "pred" else u


SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g"]


def _san_flags(cc: str) -> list[str]:
    # gcc leaves float-cast-overflow out of -fsanitize=undefined; clang includes it
    return SAN + (["-fsanitize=float-cast-overflow"] if cc == "gcc" else [])


@pytest.mark.parametrize("cc", ["gcc", CLANG_SLOW])
def test_math_driver_under_sanitizers(cc, rt, tmp_path):
    if not shutil.which(cc):
        pytest.skip(f"{cc} not found")
    src, groups = math_driver_source()
    path = tmp_path / "math_driver.c"
    path.write_text(src)
    # the ISA flags of the build it is compared with (rt: this machine's widest SIMD path)
    flags = ["-std=c11", "-O1", *_san_flags(cc), *native_variant().cflags]
    out = run_c_program(cc, [path], tmp_path / "math_driver", flags, timeout=600).split()
    bad, pos = [], 0
    for g in groups:
        want = call_group(rt.lib, g)
        for row, w in zip(g.rows, want):
            got = _from_bits(int(out[pos], 16), g.ret)
            pos += 1
            if result_key(got, g.ret) != result_key(w, g.ret):
                bad.append(f"{g.fn}{row}: driver {got!r}, cffi build {w!r}")
    assert pos == len(out)
    assert not bad, "\n".join(bad[:30])


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_rt_check_under_asan_ubsan(cc, tmp_path):
    if not shutil.which(cc):
        pytest.skip(f"{cc} not found")
    src = tmp_path / "rt_check_full.c"
    src.write_text(runtime_source() + "\n" + (HERE / "rt_check.c").read_text())
    for extra in (["-march=native"] if is_x86_64() else [], ["-DAOTC_SIMD_SCALAR"]):
        out = run_c_program(cc, [src], tmp_path / "rt_check_san",
                            ["-std=c11", "-O1", *_san_flags(cc), *extra], timeout=600)
        assert out.startswith("ok")


def test_pool_under_tsan(tmp_path):
    cc = next((c for c in ("clang", "gcc") if shutil.which(c)), None)
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "rt_check_full.c"
    src.write_text(runtime_source() + "\n" + (HERE / "rt_check.c").read_text())
    probe = subprocess.run([cc, "-fsanitize=thread", "-x", "c", "-", "-o", str(tmp_path / "probe")],
                           input="int main(void){return 0;}", capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"{cc} cannot build with -fsanitize=thread")
    out = run_c_program(cc, [src], tmp_path / "rt_check_tsan",
                        ["-std=c11", "-O1", "-g", "-fsanitize=thread", "-DAOTC_SIMD_SCALAR"],
                        timeout=600)
    assert out.startswith("ok")

"""The x86_64-windows target: names, PE files, and (slow) generated code cross-built with
zig cc for x86_64-windows-gnu and run under wine -- the matmul example's C and C++
programs against the object and against a DLL, the runtime's own check program (GEMM,
Win32 thread pool at 1-4 threads, FP environment), and corpus models compared with the
XLA:CPU outputs stored beside them, with 1 and 3 threads."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest

import aotc
from aotc.driver import const_encoding, frontend, generate
from aotc.options import CompileOptions
from aotc.runtime_c import runtime_source
from aotc.toolchain import cc
from aotc.toolchain.targets import resolve_target, system_libs

from tests.e2e.conftest import CORPUS, FixtureCase, from_npz

from . import zig_works

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "matmul"
RT_CHECK = ROOT / "tests" / "runtime_c" / "rt_check.c"
ZIG_TARGET = ("-target", "x86_64-windows-gnu")
WINE_TIMEOUT_S = 600  # the first run in a fresh prefix creates it (tens of seconds)


def test_target_names():
    t = resolve_target("x86_64-windows")
    assert (t.triple, t.os, t.arch, t.cpu) == ("x86_64-windows-gnu", "windows", "x86_64", "x86-64-v3")
    assert (t.so_suffix, t.exe_suffix, t.zig_triple) == (".dll", ".exe", "x86_64-windows-gnu")
    assert t.gnu_prefix == "x86_64-w64-mingw32" and not t.runs_on_host
    base = resolve_target("x86_64-windows-gnu")
    assert base.cpu is None and base.simd_cflags == ()  # the full triple is the SSE2 baseline
    assert resolve_target("x86_64-pc-windows-gnu").triple == "x86_64-windows-gnu"
    assert resolve_target("x86_64-w64-mingw32").triple == "x86_64-windows-gnu"
    if resolve_target("host").triple == "x86_64-linux-gnu":
        assert t.emulator == ("wine",)
    assert "-lpthread" not in system_libs(t)  # Win32 threads, in kernel32
    assert resolve_target("x86_64").exe_suffix == ""


def test_pe_machine_is_read(tmp_path):
    head = bytearray(0x80)
    head[:2] = b"MZ"
    head[0x3C:0x40] = (0x40).to_bytes(4, "little")
    head[0x40:0x46] = b"PE\0\0" + (0x8664).to_bytes(2, "little")
    (tmp_path / "a.exe").write_bytes(bytes(head))
    assert cc.binary_arch(tmp_path / "a.exe") == "x86_64"
    head[0x44:0x46] = (0xAA64).to_bytes(2, "little")
    (tmp_path / "b.exe").write_bytes(bytes(head))
    assert cc.binary_arch(tmp_path / "b.exe") == "aarch64"
    (tmp_path / "c.exe").write_bytes(b"MZ" + bytes(0x3E) + (0x40).to_bytes(4, "little") + b"NE")
    assert cc.binary_arch(tmp_path / "c.exe") is None


def _generated(name: str, tmp_path=None):
    d = ROOT / "tests" / "data" / "corpus" / name
    gen = generate(frontend(str(d / "model.hlo"), str(d / "cfg.yaml")), "libwin", CompileOptions())
    if tmp_path is not None:
        (tmp_path / "libwin.c").write_text(gen.c_text)
        (tmp_path / "libwin.h").write_text(gen.h_text)
    return gen


def test_generated_c_guards_windows_and_msvc():
    """What MSVC and MinGW need is in the text, each behind its guard."""
    gen = _generated("tf_matmul")
    c = re.sub(r"/\*.*?\*/", "", gen.c_text, flags=re.S)  # the code, not its comments
    assert "#pragma fp_contract(off)" in c and "_M_FP_FAST" in c
    assert "_aligned_malloc" in c and "CreateThread" in c and "SleepConditionVariableSRW" in c
    assert "InterlockedExchangeAdd64" in c and "std::atomic<int64_t>" in c
    h = gen.h_text
    assert "#define WIN_API __declspec(dllexport)" in h and "#define WIN_API __declspec(dllimport)" in h
    assert "WIN_API int win_run(win_instance* m);" in h


@pytest.mark.parametrize("lang", ["c", "c++"])
def test_windows_preprocessed_text_uses_win32_only(tmp_path, lang):
    """As a Windows compiler sees it (zig cc -E for x86_64-windows-gnu), the model calls no
    POSIX thread or allocation function, and exports its API with dllexport under
    WIN_BUILD_DLL."""
    ok, why = zig_works()
    if not ok:
        pytest.skip(f"needs zig cc to preprocess for x86_64-windows-gnu: {why}; "
                    f"install it with `pip install ziglang`")
    _generated("op_conv_variants", tmp_path)
    tool, std = ("cc", "-std=c11") if lang == "c" else ("c++", "-std=c++11")
    cmd = [sys.executable, "-m", "ziglang", tool, *ZIG_TARGET, "-x", "c" if lang == "c" else "c++", std,
           "-DWIN_BUILD_DLL", "-E", "-P", str(tmp_path / "libwin.c")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ours = r.stdout[r.stdout.index("win_instance"):]  # past the system headers
    assert not re.search(r"\b(pthread_\w+|posix_memalign|aligned_alloc)\s*\(", ours)
    assert "_aligned_malloc(" in ours and "CreateThread(" in ours
    # MinGW spells __declspec(x) as __attribute__((x))
    assert re.search(r"(__declspec\(|__attribute__\(\()dllexport\)+ int win_run\(win_instance\* m\);", ours)


# ------------------------------------------------------------------ under wine

def _tools() -> None:
    ok, why = zig_works()
    if not ok:
        pytest.skip(f"needs zig cc to build for x86_64-windows-gnu: {why}; "
                    f"install it with `pip install ziglang`")
    if resolve_target("host").triple != "x86_64-linux-gnu":
        pytest.skip("runs x86_64 Windows programs under wine, which needs an x86_64 Linux host")
    if shutil.which("wine") is None:
        pytest.skip("needs wine to run x86_64-windows-gnu programs: `apt-get install wine wine64` "
                    "(Debian/Ubuntu; `wine` is the command, `wine64` the 64-bit loader)")


@pytest.fixture(scope="module")
def wine_env():
    """A wine prefix of its own under the temp directory, kept across runs (creating one
    takes tens of seconds), and no wine debug chatter."""
    _tools()
    prefix = Path(tempfile.gettempdir()) / f"aotc-wine-prefix-{os.getuid()}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WINEPREFIX", str(prefix))
        mp.setenv("WINEDEBUG", "-all")
        yield


def _zig(lang: str, *args) -> None:
    tool = "cc" if lang == "c" else "c++"
    cmd = [sys.executable, "-m", "ziglang", tool, *ZIG_TARGET, *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"


def _wine(exe: Path) -> str:
    r = subprocess.run(["wine", str(exe)], capture_output=True, text=True, timeout=WINE_TIMEOUT_S,
                       cwd=exe.parent)
    assert r.returncode == 0, f"{exe.name} exited {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.mark.slow
def test_matmul_example_under_wine(wine_env, tmp_path):
    """examples/matmul's main.c and main.cc, linked with the object (the .c also compiled
    as C++) and against a DLL through MATMUL_BUILD_DLL / MATMUL_USE_DLL."""
    gen = generate(frontend(str(MATMUL / "matmul.hlo"), str(MATMUL / "matmul.yaml")), "libmatmul",
                   CompileOptions())
    (tmp_path / "libmatmul.c").write_text(gen.c_text)
    (tmp_path / "libmatmul.h").write_text(gen.h_text)
    strict = ["-O2", "-Wall", "-Wextra", "-Werror", "-mcpu=x86_64_v3", f"-I{tmp_path}"]
    c, h = tmp_path / "libmatmul.c", tmp_path / "libmatmul.h"
    _zig("c", "-std=c11", *strict, "-c", c, "-o", tmp_path / "libmatmul.o")
    _zig("c++", "-x", "c++", "-std=c++11", *strict, "-c", c, "-o", tmp_path / "libmatmul_cxx.o")
    _zig("c", "-std=c11", *strict, "-DMATMUL_BUILD_DLL", "-shared", c, "-o", tmp_path / "matmul.dll",
         f"-Wl,--out-implib,{tmp_path / 'matmul.lib'}")
    builds = {
        "main_c.exe": ("c", ["-std=c11", MATMUL / "main.c", tmp_path / "libmatmul.o"]),
        "main_cc.exe": ("c++", ["-std=c++11", MATMUL / "main.cc", tmp_path / "libmatmul.o"]),
        "main_cc_cxxlib.exe": ("c++", ["-std=c++11", MATMUL / "main.cc", tmp_path / "libmatmul_cxx.o"]),
        "main_c_dll.exe": ("c", ["-std=c11", "-DMATMUL_USE_DLL", MATMUL / "main.c", tmp_path / "matmul.lib"]),
        "main_cc_dll.exe": ("c++", ["-std=c++11", "-DMATMUL_USE_DLL", MATMUL / "main.cc",
                                    tmp_path / "matmul.lib"]),
    }
    assert "MATMUL_API" in h.read_text()
    for exe, (lang, args) in builds.items():
        _zig(lang, *strict, *args, "-o", tmp_path / exe)
        out = _wine(tmp_path / exe)
        assert out.startswith("Success"), (exe, out)
        if "main_c" in exe and "cc" not in exe:  # XLA's product of the example's inputs
            assert "[[58, 64], [139, 154]]" in out, (exe, out)


@pytest.mark.slow
def test_runtime_check_under_wine(wine_env, tmp_path):
    """The runtime's check program: packed GEMM (AVX2) against a reference, the thread pool
    on Win32 threads at 1-4 threads visiting each index once, the FP environment."""
    src = tmp_path / "rt_check_full.c"
    src.write_text(runtime_source() + "\n" + RT_CHECK.read_text())
    exe = tmp_path / "rt_check.exe"
    _zig("c", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-mcpu=x86_64_v3", src, "-o", exe)
    assert _wine(exe).startswith("ok avx2+fma")


def _windows_cc(compiler: str) -> str:
    """The --cc of each Windows cross compiler the corpus tests use (skips when missing)."""
    if compiler == "zig":
        return f"{sys.executable} -m ziglang cc"  # found as zig; aotc adds -target
    if shutil.which("x86_64-w64-mingw32-gcc") is None:
        pytest.skip("needs x86_64-w64-mingw32-gcc: `apt-get install gcc-mingw-w64-x86-64` (Debian/Ubuntu)")
    return "x86_64-w64-mingw32-gcc"


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["zig", "mingw-gcc"])
@pytest.mark.parametrize("case", ["tf_matmul_and_add", "op_conv_variants"])
def test_corpus_model_under_wine(wine_env, case, compiler):
    """aotc.run --target x86_64-windows: the model and the runner built with zig cc or MinGW
    gcc, run under wine, compared with XLA's outputs, on 1 and 3 threads."""
    cc_cmd = _windows_cc(compiler)
    fx = FixtureCase(CORPUS / case)
    for threads in (1, 3):
        outs = aotc.run(str(fx.dir / "model.hlo"), config=str(fx.cfg_path), inputs=fx.input_dict(),
                        target="x86_64-windows", threads=threads, cc=cc_cmd)
        fx.check(outs, label=f"{case} x86_64-windows ({compiler}) under wine, {threads} threads")


def test_windows_constants_are_c_arrays():
    """`auto` never picks incbin (GNU assembler, ELF/Mach-O) or a string literal (MSVC's
    64 KiB limit, C++'s NUL) for Windows; an explicit encoding is kept."""
    big = NS(constants=[NS(data=np.zeros(1 << 20, np.uint8))], subprograms=())
    win, linux = resolve_target("x86_64-windows").banner(), resolve_target("x86_64").banner()
    assert const_encoding(big, CompileOptions(), win) == "array"
    assert const_encoding(big, CompileOptions(), linux) == "incbin"
    assert const_encoding(big, CompileOptions(const_encoding="string"), win) == "string"


@pytest.mark.slow
def test_bound_weights_under_wine(wine_env):
    """tests/data/weights/mlp with its weights bound as constants, against XLA's outputs."""
    data = ROOT / "tests" / "data" / "weights" / "mlp"
    with np.load(data / "inputs.npz") as z:
        x = z["x"]
    with np.load(data / "expected.npz") as z:
        want = from_npz(z["y_a"], "f32")
    outs = aotc.run(str(data / "model.hlo"), config=str(data / "cfg_a.yaml"), inputs={"x": x},
                    target="x86_64-windows", threads=2)
    (y,) = outs.values()
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)

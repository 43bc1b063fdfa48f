"""Build helpers for the C runtime tests.

The runtime text (``aotc.runtime_c.runtime_source()``) is compiled with cffi,
followed by ``support.c`` (test-only C helpers), into a module per build
variant; builds are cached for the session.  Every math helper is declared to
cffi from the naming scheme, so a missing or misnamed helper fails the build.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from aotc.runtime_c import runtime_source

HERE = Path(__file__).resolve().parent

INT_TYPES = ("s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64")
FLOAT_TYPES = ("f32", "f64")
CVT_TYPES = ("pred",) + INT_TYPES + FLOAT_TYPES
CTYPE = {
    "pred": "uint8_t", "s8": "int8_t", "s16": "int16_t", "s32": "int32_t", "s64": "int64_t",
    "u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t",
    "f32": "float", "f64": "double", "c64": "aotc_c64", "c128": "aotc_c128",
}

INT_BINARY = ("add", "sub", "mul", "div", "rem", "pow", "max", "min", "shl", "shr_logical",
              "shr_arith", "and", "or", "xor")
INT_UNARY = ("neg", "abs", "sign", "popcnt", "clz", "not")
FLOAT_BINARY = ("add", "sub", "mul", "div", "max", "min", "pick_gt", "pick_lt", "rem", "pow", "atan2")
FLOAT_UNARY = ("neg", "abs", "sign", "round_afz", "round_even", "floor", "ceil", "sqrt", "rsqrt",
               "cbrt", "exp", "expm1", "log", "log1p", "tanh", "sin", "cos", "tan", "erf",
               "logistic")
HALF_FUNCS = {  # name: (return type, argument type)
    "aotc_bf16_to_f32": ("float", "uint16_t"), "aotc_f32_to_bf16": ("uint16_t", "float"),
    "aotc_f16_to_f32": ("float", "uint16_t"), "aotc_f32_to_f16": ("uint16_t", "float"),
    "aotc_round_bf16": ("float", "float"), "aotc_round_f16": ("float", "float"),
    "aotc_bf16_to_f64": ("double", "uint16_t"), "aotc_f16_to_f64": ("double", "uint16_t"),
    "aotc_f64_to_bf16": ("uint16_t", "double"), "aotc_f64_to_f16": ("uint16_t", "double"),
    "aotc_f64_to_bf16_exact": ("uint16_t", "double"), "aotc_f64_to_f16_exact": ("uint16_t", "double"),
}


def math_signatures() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every helper of aotc_math.h the tests call: name -> (ret type, arg types),
    types given as aotc type names (s8 ... f64, pred) or C types."""
    sig: dict[str, tuple[str, tuple[str, ...]]] = {}
    for t in INT_TYPES:
        for op in INT_BINARY:
            sig[f"aotc_{op}_{t}"] = (t, (t, t))
        for op in INT_UNARY:
            sig[f"aotc_{op}_{t}"] = (t, (t,))
        sig[f"aotc_clamp_{t}"] = (t, (t, t, t))
    for t in FLOAT_TYPES:
        for op in FLOAT_BINARY:
            sig[f"aotc_{op}_{t}"] = (t, (t, t))
        for op in FLOAT_UNARY:
            sig[f"aotc_{op}_{t}"] = (t, (t,))
        sig[f"aotc_clamp_{t}"] = (t, (t, t, t))
        sig[f"aotc_is_finite_{t}"] = ("pred", (t,))
        sig[f"aotc_is_nan_{t}"] = ("pred", (t,))
        sig[f"aotc_totalorder_{t}"] = ("s32" if t == "f32" else "s64", (t,))
    for a in CVT_TYPES:
        for b in CVT_TYPES:
            sig[f"aotc_cvt_{a}_{b}"] = (b, (a,))
    sig["aotc_bitcast_f32_u32"] = ("u32", ("f32",))
    sig["aotc_bitcast_u32_f32"] = ("f32", ("u32",))
    sig["aotc_bitcast_f64_u64"] = ("u64", ("f64",))
    sig["aotc_bitcast_u64_f64"] = ("f64", ("u64",))
    for c, t in (("c64", "f32"), ("c128", "f64")):
        sig[f"aotc_complex_{c}"] = (c, (t, t))
        for op in ("add", "sub", "mul", "div"):
            sig[f"aotc_{op}_{c}"] = (c, (c, c))
        for op in ("neg", "conj"):
            sig[f"aotc_{op}_{c}"] = (c, (c,))
        sig[f"aotc_abs_{c}"] = (t, (c,))
        sig[f"aotc_real_{c}"] = (t, (c,))
        sig[f"aotc_imag_{c}"] = (t, (c,))
    return sig


def _c(t: str) -> str:
    return CTYPE.get(t, t)


def cdef_text(math: bool = True) -> str:
    """cffi declarations; without `math` only GEMM, pool and support helpers
    (the math helpers do not depend on the SIMD path, so one build tests them)."""
    lines = [
        "typedef struct { float re, im; } aotc_c64;",
        "typedef struct { double re, im; } aotc_c128;",
        "typedef struct { uint64_t saved; } aotc_fpenv;",
        "typedef struct aotc_pool aotc_pool;",
    ]
    if math:
        for name, (ret, args) in sorted(math_signatures().items()):
            lines.append(f"{_c(ret)} {name}({', '.join(_c(a) for a in args)});")
        for name, (ret, arg) in sorted(HALF_FUNCS.items()):
            lines.append(f"{ret} {name}({arg});")
    lines += [
        "void aotc_fpenv_enter(aotc_fpenv*);",
        "void aotc_fpenv_leave(const aotc_fpenv*);",
        "void aotc_fpenv_save(aotc_fpenv*);",
        # GEMM
        "void aotc_sgemm(int64_t, int64_t, int64_t, const float*, int64_t, int64_t,"
        " const float*, int64_t, int64_t, float*, int64_t, void*);",
        "void aotc_dgemm(int64_t, int64_t, int64_t, const double*, int64_t, int64_t,"
        " const double*, int64_t, int64_t, double*, int64_t, void*);",
        "size_t aotc_gemm_scratch_bytes(void);",
        "size_t aotc_sgemm_scratch_need(int64_t M, int64_t N, int64_t K);",
        "size_t aotc_dgemm_scratch_need(int64_t M, int64_t N, int64_t K);",
        "void aotc_sgemm_part(int64_t, int64_t, int64_t, int64_t, int64_t, const float*, int64_t,"
        " int64_t, const float*, int64_t, int64_t, float*, int64_t, void*);",
        "void aotc_dgemm_part(int64_t, int64_t, int64_t, int64_t, int64_t, const double*, int64_t,"
        " int64_t, const double*, int64_t, int64_t, double*, int64_t, void*);",
        "void aotc_sgemm_pb(int64_t, int64_t, int64_t, const float*, int64_t, const float*, float*, int64_t, void*);",
        "void aotc_sgemm_pb_part(int64_t, int64_t, int64_t, int64_t, int64_t, const float*, int64_t, const float*,"
        " float*, int64_t, void*);",
        # transpose
        "void aotc_tr_f32(int64_t, int64_t, const float*, int64_t, float*, int64_t);",
        # pool
        "aotc_pool* aotc_pool_create(int);",
        "void aotc_pool_destroy(aotc_pool*);",
        "int aotc_pool_threads(const aotc_pool*);",
        # support.c
        "const char* t_simd_name(void);",
        "void t_wino_weights(int64_t, int64_t, int64_t, const float*, float*);",
        "int t_fpenv_restored(const float*);",
        "int64_t t_pool_visit(int, int64_t, int, int, int32_t*);",
        "int64_t t_pool_nested(int, int64_t, int64_t);",
        "int64_t t_pool_ftz(int, const float*, float*, int64_t);",
        "int t_pool_churn(int, int);",
    ]
    for name, tin, tout in (
        ("add_self_f32", "float", "float"), ("gt0_f32", "float", "uint8_t"),
        ("sqrt_f32", "float", "float"), ("exp_f32", "float", "float"),
        ("logistic_f32", "float", "float"), ("f32_to_bf16", "float", "uint16_t"),
        ("f32_to_f16", "float", "uint16_t"), ("round_bf16", "float", "float"),
        ("round_f16", "float", "float"), ("f64_to_bf16", "double", "uint16_t"),
        ("f64_to_f16", "double", "uint16_t"), ("cvt_f32_f64", "float", "double"),
        ("cvt_f32_pred", "float", "uint8_t"), ("tanh_f32", "float", "float"),
        ("log_f32", "float", "float"), ("erf_f32", "float", "float"),
        ("expm1_f32", "float", "float"), ("log1p_f32", "float", "float"),
    ):
        lines.append(f"void t_ftz_{name}(const {tin}*, {tout}*, int64_t);")
    for name, tin, tout in (
        ("f32_to_bf16", "float", "uint16_t"), ("f32_to_f16", "float", "uint16_t"),
        ("bf16_to_f32", "uint16_t", "float"), ("f16_to_f32", "uint16_t", "float"),
        ("round_bf16", "float", "float"), ("round_f16", "float", "float"),
        ("f64_to_bf16", "double", "uint16_t"), ("f64_to_f16", "double", "uint16_t"),
        ("f64_to_bf16_exact", "double", "uint16_t"), ("f64_to_f16_exact", "double", "uint16_t"),
    ):
        lines.append(f"void t_map_{name}({tin}*, {tout}*, int64_t);")
    return "\n".join(lines)


# ---------------------------------------------------------------- toolchain

def have_tool(name: str) -> bool:
    return shutil.which(name) is not None


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def is_x86_64() -> bool:
    return platform.machine() in ("x86_64", "AMD64")


@dataclass(frozen=True)
class Variant:
    """One build of the runtime: extra compiler flags and the SIMD path they select."""
    name: str
    cflags: tuple[str, ...]
    simd: str  # expected AOTC_SIMD_NAME


def variants() -> list[Variant]:
    """The runtime builds this machine can run: native, AVX2 (x86), scalar."""
    out = []
    flags = cpu_flags()
    if is_x86_64():
        if "avx512f" in flags:
            out.append(Variant("avx512", ("-march=native",), "avx512f"))
        if {"avx2", "fma"} <= flags:
            out.append(Variant("avx2", ("-march=native", "-mno-avx512f"), "avx2+fma"))
    out.append(Variant("scalar", ("-DAOTC_SIMD_SCALAR",), "scalar"))
    return out


def native_variant() -> Variant:
    return variants()[0]


class RuntimeBuilds:
    """Session cache of cffi builds of the runtime, one per Variant."""

    def __init__(self, root: Path):
        self.root = root
        self._cache: dict[Variant, object] = {}

    def get(self, v: Variant):
        if v not in self._cache:
            self._cache[v] = self._build(v)
        return self._cache[v]

    def _build(self, v: Variant):
        import cffi
        modname = f"_aotc_rt_test_{v.name}"
        ffi = cffi.FFI()
        ffi.cdef(cdef_text(math=v == native_variant()))
        source = ("#define AOTC_RT_API\n" + runtime_source() + "\n"
                  + (HERE / "support.c").read_text())
        ffi.set_source(modname, source, libraries=["m", "pthread"],
                       extra_compile_args=["-std=gnu11", "-O2", "-ffp-contract=off", *v.cflags])
        d = self.root / v.name
        d.mkdir(parents=True, exist_ok=True)
        so = ffi.compile(tmpdir=str(d), verbose=False)
        loader = importlib.machinery.ExtensionFileLoader(modname, so)
        spec = importlib.util.spec_from_file_location(modname, so, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        return mod


@pytest.fixture(scope="session")
def rt_builds(tmp_path_factory) -> RuntimeBuilds:
    return RuntimeBuilds(tmp_path_factory.mktemp("aotc_rt"))


@pytest.fixture(scope="session")
def rt(rt_builds):
    """The runtime built for this machine (widest SIMD path): module with .ffi, .lib."""
    return rt_builds.get(native_variant())


def run_c_program(cc: str, sources: list[Path], out: Path, flags: list[str],
                  runner: list[str] | None = None, timeout: int = 300) -> str:
    """Compile C sources into `out` and run it; returns stdout, fails the test
    with the compiler or program output on error."""
    cmd = [cc, *flags, *map(str, sources), "-o", str(out), "-lm", "-lpthread"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(cmd)}\n{r.stderr}")
    env = dict(os.environ)
    r = subprocess.run([*(runner or []), str(out)], capture_output=True, text=True,
                       timeout=timeout, env=env)
    if r.returncode != 0:
        pytest.fail(f"{out.name} exited with {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    return r.stdout


def aarch64_tools() -> tuple[str, list[str]] | None:
    """(cross compiler, runner prefix) for aarch64, or None if either is missing."""
    cc = shutil.which("aarch64-linux-gnu-gcc")
    qemu = shutil.which("qemu-aarch64")
    if not cc or not qemu:
        return None
    sysroot = "/usr/aarch64-linux-gnu"
    return cc, [qemu, "-L", sysroot]

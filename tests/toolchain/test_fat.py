"""The x86_64-fat target: one .c whose kernels are built at x86-64, x86-64-v3 and x86-64-v4
and chosen at run time. Every level this machine runs (forced with P_set_isa) gives the same
bits as the others and as the single-target x86_64 build, with gcc and clang; the corpus
models also match XLA's outputs (their committed fixtures). The dispatcher is run under
ThreadSanitizer and ASan+UBSan with two threads creating instances at once."""
from __future__ import annotations

import ctypes
import platform
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from aotc import api
from aotc.errors import AotcError
from aotc.options import CompileOptions
from aotc.toolchain.build import build_outputs
from aotc.toolchain.loader import load_library
from aotc.toolchain.targets import resolve_target

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "corpus"
DATA = Path(__file__).resolve().parent / "data"

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or not shutil.which("gcc"),
                                reason="the fat target is built for x86-64 by gcc or clang")


def _cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _host_levels() -> list[int]:
    """The levels this machine runs, from /proc/cpuinfo (not from the code under test)."""
    f = _cpu_flags()
    levels = [1]
    if {"avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "abm"} <= f:
        levels.append(3)
        if {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= f:
            levels.append(4)
    return levels


LEVELS = _host_levels()

# Realistic sizes beyond the corpus: a dense layer with bias and tanh, a row softmax-like
# exp and sum, a matrix-vector product (the GEMV dot, K not a multiple of any width).
DENSE_HLO = """HloModule fat_dense

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[96,300] parameter(0)
  w = f32[300,200] parameter(1)
  b = f32[200] parameter(2)
  v = f32[300] parameter(3)
  d = f32[96,200] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[96,200] broadcast(b), dimensions={1}
  s = f32[96,200] add(d, bb)
  t = f32[96,200] tanh(s)
  e = f32[96,200] exponential(t)
  z = f32[] constant(0)
  r = f32[96] reduce(e, z), dimensions={1}, to_apply=add
  g = f32[96] dot(x, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (f32[96,200], f32[96], f32[96]) tuple(t, r, g)
}
"""
DENSE_CFG = """feeds:
  - {id: 0, name: x, shape: [96, 300], type: f32}
  - {id: 1, name: w, shape: [300, 200], type: f32}
  - {id: 2, name: b, shape: [200], type: f32}
  - {id: 3, name: v, shape: [300], type: f32}
fetches:
  - {id: 0, name: t}
  - {id: 1, name: r}
  - {id: 2, name: g}
"""
# f64: the GEMM and the dot of another width (4 lanes with AVX2, 8 with AVX-512)
DENSE64_HLO = """HloModule fat_dense64

ENTRY main {
  x = f64[50,130] parameter(0)
  w = f64[130,70] parameter(1)
  v = f64[130] parameter(2)
  d = f64[50,70] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f64[50] dot(x, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (f64[50,70], f64[50]) tuple(d, g)
}
"""
DENSE64_CFG = """feeds:
  - {id: 0, name: x, shape: [50, 130], type: f64}
  - {id: 1, name: w, shape: [130, 70], type: f64}
  - {id: 2, name: v, shape: [130], type: f64}
fetches:
  - {id: 0, name: d}
  - {id: 1, name: g}
"""
CONV_HLO = """HloModule fat_conv

ENTRY main {
  x = f32[2,28,28,16] parameter(0)
  k = f32[3,3,16,32] parameter(1)
  c = f32[2,28,28,32] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  zb = f32[2,28,28,32] broadcast(z), dimensions={}
  ROOT r = f32[2,28,28,32] maximum(c, zb)
}
"""
CONV_CFG = """feeds:
  - {id: 0, name: x, shape: [2, 28, 28, 16], type: f32}
  - {id: 1, name: k, shape: [3, 3, 16, 32], type: f32}
fetches:
  - {id: 0, name: r}
"""


def _random_feeds(model) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    out = {}
    for i, name in enumerate(model.arg_names):
        spec = model._spec("arg", i)
        out[name] = rng.standard_normal(spec.dims).astype(spec.dtype)
    return out


def _build(d: Path, model: Path, cfg: Path, target: str, cc: str = "gcc"):
    d.mkdir(parents=True, exist_ok=True)
    r = api.compile(str(model), str(cfg), out=str(d / d.name), target=target, cc=cc, emit=("so",))
    return r.so_path, r.name


def _run_levels(so: str, name: str, feeds) -> dict[int, dict[str, np.ndarray]]:
    """The outputs at each level of this machine, forced with P_set_isa."""
    lib = ctypes.CDLL(so)  # the same handle the loader opens: the level is process-wide
    set_isa, isa = getattr(lib, f"{name}_set_isa"), getattr(lib, f"{name}_isa")
    m = load_library(so, name)
    feeds = feeds if feeds is not None else _random_feeds(m)
    out = {}
    try:
        for level in LEVELS:
            assert set_isa(level) == 0
            assert isa() == level
            out[level] = {k: v.copy() for k, v in m.run_dict(feeds).items()}
    finally:
        set_isa(0)
        m.close()
    return out


def _same_bits(a: dict[str, np.ndarray], b: dict[str, np.ndarray], what: str) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), f"{what}: {k} differs in its bits"


def _model_files(tmp_path: Path, case: str) -> tuple[Path, Path, dict | None, dict | None, float]:
    if case == "matmul_example":
        return (ROOT / "examples/matmul/matmul.hlo", ROOT / "examples/matmul/matmul.yaml", None, None, 0.0)
    if case in ("dense", "dense64", "conv"):
        hlo, cfg = {"dense": (DENSE_HLO, DENSE_CFG), "dense64": (DENSE64_HLO, DENSE64_CFG),
                    "conv": (CONV_HLO, CONV_CFG)}[case]
        (tmp_path / "m.hlo").write_text(hlo)
        (tmp_path / "cfg.yaml").write_text(cfg)
        return tmp_path / "m.hlo", tmp_path / "cfg.yaml", None, None, 0.0
    d = CORPUS / case
    with np.load(d / "inputs.npz") as z:
        inputs = {k: z[k] for k in z}
    with np.load(d / "expected.npz") as z:
        expected = {k: z[k] for k in z}
    return d / "model.hlo", d / "cfg.yaml", inputs, expected, 2e-5


CASES = ["matmul_example", "tf_matmul_and_add", "op_conv_variants", "op_unary_f32", "op_while", "dense", "dense64", "conv"]
_FAST = {"matmul_example", "dense", "conv"}  # the rest with the heavy tests (`make test-slow`)


@pytest.mark.parametrize("case", [c if c in _FAST else pytest.param(c, marks=pytest.mark.slow) for c in CASES])
def test_levels_give_the_same_bits_as_each_other_and_x86_64(tmp_path, case):
    model, cfg, inputs, expected, rtol = _model_files(tmp_path, case)
    so, name = _build(tmp_path / "fat", model, cfg, "x86_64-fat")
    got = _run_levels(so, name, inputs)
    for level in LEVELS[1:]:
        _same_bits(got[LEVELS[0]], got[level], f"level {level} against level {LEVELS[0]}")
    if 3 in LEVELS:  # the single-target x86-64-v3 build sums in the same order
        so1, name1 = _build(tmp_path / "v3", model, cfg, "x86_64")
        m = load_library(so1, name1)
        feeds = inputs if inputs is not None else _random_feeds(m)
        _same_bits(got[3], m.run_dict(feeds), "x86_64 against the fat level 3")
        m.close()
    if expected is not None:  # XLA:CPU's outputs (committed fixtures)
        for k, want in expected.items():
            np.testing.assert_allclose(got[LEVELS[-1]][k], want, rtol=rtol, atol=1e-5, err_msg=k)


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("clang"), reason="no clang")
@pytest.mark.parametrize("case", ["matmul_example", "dense", "conv"])
def test_clang_levels_give_gccs_bits(tmp_path, case):
    model, cfg, inputs, _, _ = _model_files(tmp_path, case)
    so_c, name = _build(tmp_path / "clang", model, cfg, "x86_64-fat", cc="clang")
    got_c = _run_levels(so_c, name, inputs)
    so_g, name_g = _build(tmp_path / "gcc", model, cfg, "x86_64-fat", cc="gcc")
    got_g = _run_levels(so_g, name_g, inputs)
    for level in LEVELS:
        _same_bits(got_c[level], got_g[level], f"clang level {level} against gcc")
        _same_bits(got_c[level], got_c[LEVELS[0]], f"clang level {level} against level {LEVELS[0]}")


def test_default_build_picks_the_best_level_and_refuses_a_missing_one(tmp_path):
    """The plain object is built at -march=x86-64 (no AVX); it still chooses the best level."""
    model, cfg, _, _, _ = _model_files(tmp_path, "matmul_example")
    so, name = _build(tmp_path / "fat", model, cfg, "x86_64-fat")
    assert "-march=x86-64" in resolve_target("x86_64-fat").simd_cflags
    lib = ctypes.CDLL(so)
    isa, set_isa = getattr(lib, f"{name}_isa"), getattr(lib, f"{name}_set_isa")
    assert isa() == LEVELS[-1]
    assert set_isa(2) == 5  # ERR_INDEX: no such level
    if LEVELS[-1] < 4:
        assert set_isa(4) == 11  # ERR_ISA: this CPU lacks it
    assert set_isa(0) == 0 and isa() == LEVELS[-1]
    h = (tmp_path / "fat" / "fat.h").read_text()
    assert f"int {name}_set_isa(int level);" in h and f"{name}_ERR_ISA = 11" in h


def test_fat_output_is_deterministic_and_plain_targets_unchanged(tmp_path):
    model, cfg, _, _, _ = _model_files(tmp_path, "matmul_example")
    from aotc.driver import frontend, generate
    texts = []
    for _ in range(2):
        opts = CompileOptions(target="x86_64-fat")
        texts.append(generate(frontend(str(model), str(cfg), opts), "libm", opts).c_text)
    assert texts[0] == texts[1]
    opts = CompileOptions(target="x86_64")
    plain = generate(frontend(str(model), str(cfg), opts), "libm", opts).c_text
    assert "_fat_execute" not in plain and "#define AOTC_GEMM_SAME_ORDER" not in plain


def test_fat_target_refuses_cpu_and_features():
    with pytest.raises(AotcError, match="takes no"):
        resolve_target("x86_64-fat", "znver4")
    with pytest.raises(AotcError, match="takes no"):
        resolve_target("x86_64-fat", None, "+avx2")


@pytest.mark.slow
@pytest.mark.parametrize("sanitize", ["thread", "address"])
def test_dispatcher_under_sanitizers(tmp_path, sanitize):
    """Two threads create and run instances at once while the level is first chosen."""
    model, cfg, _, _, _ = _model_files(tmp_path, "matmul_example")
    opts = CompileOptions(target="x86_64-fat", cc="gcc", emit=("o",), sanitize=sanitize, opt_level="-O1")
    fe_dir = tmp_path / "fat"
    fe_dir.mkdir()
    r = api.compile(str(model), str(cfg), out=str(fe_dir / "libm"), options=opts)
    flags = ["-fsanitize=thread"] if sanitize == "thread" else ["-fsanitize=address,undefined",
                                                               "-fno-sanitize-recover=all"]
    exe = tmp_path / "threads"
    subprocess.run(["gcc", "-std=c11", "-g", *flags, f"-I{fe_dir}", '-DFAT_HEADER="libm.h"',
                    f"-DFAT_PREFIX={r.name}", f"-DFAT_NUM_ARGS={r.name.upper()}_NUM_ARGS",
                    str(DATA / "fat_threads.c"), r.obj_path, "-o", str(exe), "-lm", "-lpthread"], check=True)
    p = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "WARNING: ThreadSanitizer" not in p.stderr and "runtime error" not in p.stderr
    assert p.stdout.strip() == str(LEVELS[-1])


def test_build_outputs_joins_the_levels_into_one_object(tmp_path):
    model, cfg, _, _, _ = _model_files(tmp_path, "matmul_example")
    opts = CompileOptions(target="x86_64-fat", emit=("o", "a"))
    r = api.compile(str(model), str(cfg), out=str(tmp_path / "libm"), options=opts)
    syms = subprocess.run(["nm", r.obj_path], capture_output=True, text=True, check=True).stdout
    for n in (3, 4):
        assert f"{r.name}_fat_execute_v{n}" in syms
    opts_so = CompileOptions(target="x86_64-fat", emit=("so",))
    so = build_outputs(r.c_path, tmp_path / "libm2", "x86_64-fat", opts_so)["so"]
    dyn = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True, check=True).stdout
    assert "_fat_" not in dyn  # the levels' entries and the constants' table stay hidden
    assert f"{r.name}_set_isa" in dyn


@pytest.mark.slow
@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_every_object_is_warning_free(tmp_path, cc):
    if not shutil.which(cc):
        pytest.skip(f"no {cc}")
    model, cfg, _, _, _ = _model_files(tmp_path, "dense")
    opts = CompileOptions(target="x86_64-fat", emit=())
    r = api.compile(str(model), str(cfg), out=str(tmp_path / "libm"), options=opts)
    for extra in ([], ["-march=x86-64-v3", "-DAOTC_FAT_LEVEL=3"], ["-march=x86-64-v4", "-DAOTC_FAT_LEVEL=4"]):
        subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-march=x86-64", *extra, "-c",
                        r.c_path, "-o", str(tmp_path / "x.o")], check=True)


def test_build_systems_that_compile_once_are_refused():
    from aotc.toolchain.build import model_cflags
    with pytest.raises(AotcError, match="once per ISA level"):
        model_cflags(resolve_target("x86_64-fat"), CompileOptions(target="x86_64-fat"))

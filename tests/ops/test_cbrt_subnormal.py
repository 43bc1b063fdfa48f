"""cbrt against XLA:CPU, bit for bit, where subnormals meet it: XLA:CPU calls glibc's cbrtf
with DAZ set, which gives one value, -0x1.428a3p-51 (bits 0xA6214518), for every f32
subnormal of either sign (runtime_c/aotc_math.h, aotc_cbrt_f32, says why); a bf16 subnormal
is an f32 subnormal too, so it gives that value rounded to bf16 (0xA621). f16 and f64
subnormals (f16's are normal in f32; f64's read as zero) and every normal input go through
libm as before. Inputs: f32 subnormals at every exponent with several mantissas, both signs,
the values beside the smallest normal, zeros, infinities, NaN and a dense sample of normal
values; every bf16 and f16 code; f64 subnormals at every exponent; and a constant operand.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import shutil

import ml_dtypes
import numpy as np
import pytest

from .conftest import load_case, run_hlo_text


def _f32_inputs() -> np.ndarray:
    rng = np.random.default_rng(1729)
    k = np.arange(23, dtype=np.uint32)
    one = np.uint32(1)
    subnormal = np.concatenate([one << k, (one << k) | one, (one << (k + one)) - one,  # per exponent
                                rng.integers(1, 1 << 23, 1024, dtype=np.uint32)])
    edges = np.array([0, 0x00800000, 0x00800001, 0x007FFFFF, 0x7F800000, 0x7FC00000, 0x7F800001,
                      0x7F7FFFFF, 0x3F800000, 0x41000000, 0x40800000], np.uint32)
    normal = rng.integers(0x00800000, 0x7F800000, 4096, dtype=np.uint32)
    bits = np.concatenate([subnormal, edges, normal])
    bits = np.concatenate([bits, bits | np.uint32(0x80000000)])
    extra = np.array([1e-40, 1.2e-38, 1e-45, 4.0, 27.0, 1e30, 1e-30], np.float32)
    return np.concatenate([bits.view(np.float32), extra, -extra])


def _f64_inputs() -> np.ndarray:
    rng = np.random.default_rng(271)
    k = np.arange(52, dtype=np.uint64)
    one = np.uint64(1)
    bits = np.concatenate([one << k, (one << (k + one)) - one, rng.integers(1, 1 << 52, 256, dtype=np.uint64),
                           np.array([0, 0x0010000000000000, 0x7FF0000000000000, 0x7FF8000000000000,
                                     0x3FF0000000000000, 0x4020000000000000], np.uint64),
                           rng.integers(0x0010000000000000, 0x7FF0000000000000, 512, dtype=np.uint64)])
    return np.concatenate([bits, bits | np.uint64(1 << 63)]).view(np.float64)


def _module() -> tuple[str, list[np.ndarray]]:
    f32 = _f32_inputs()
    bf16 = np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16)
    f16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    f64 = _f64_inputs()
    n32, n64 = f32.size, f64.size
    text = (f"HloModule cbrt_subnormal\n\nENTRY main {{\n"
            f"  x = f32[{n32}] parameter(0)\n"
            f"  b = bf16[65536] parameter(1)\n"
            f"  h = f16[65536] parameter(2)\n"
            f"  d = f64[{n64}] parameter(3)\n"
            f"  c = f32[4] constant({{1e-40, -1e-40, 1e-45, 8}})\n"
            f"  r_f32 = f32[{n32}] cbrt(x)\n"
            f"  r_bf16 = bf16[65536] cbrt(b)\n"
            f"  r_f16 = f16[65536] cbrt(h)\n"
            f"  r_f64 = f64[{n64}] cbrt(d)\n"
            f"  r_const = f32[4] cbrt(c)\n"
            f"  ROOT out = (f32[{n32}], bf16[65536], f16[65536], f64[{n64}], f32[4]) "
            f"tuple(r_f32, r_bf16, r_f16, r_f64, r_const)\n}}\n")
    return text, [f32, bf16, f16, f64]


_TEXT, _INPUTS = _module()
CASES = {"cbrt_subnormal": (_TEXT, _INPUTS, 0.0)}
OUTPUT_NAMES = ("r_f32", "r_bf16", "r_f16", "r_f64", "r_const")

# the build the op tests use (gcc -O1, UBSan) and users' optimising builds
_BUILDS = {
    "default": None,
    "clang-O3-native": ("clang", "-std=c11", "-O3", "-march=native", "-Wall", "-Wextra", "-Werror", "-shared",
                        "-fPIC"),
    "gcc-O3-native": ("gcc", "-std=c11", "-O3", "-march=native", "-Wall", "-Wextra", "-Werror", "-shared",
                      "-fPIC"),
}


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


@pytest.mark.parametrize("build", sorted(_BUILDS))
def test_cbrt_matches_xla_bits(build, workdir):
    cmd = _BUILDS[build]
    if cmd is not None and not shutil.which(cmd[0]):
        pytest.fail(f"{cmd[0]} is not installed (CI installs it)")
    inputs, expected = load_case("cbrt_subnormal")
    got = run_hlo_text(CASES["cbrt_subnormal"][0], inputs, workdir, f"cbrt_subnormal_{build.replace('-', '_')}",
                       build_cmd=cmd)
    assert len(got) == len(expected) == len(OUTPUT_NAMES)
    bad = []
    for g, e, what in zip(got, expected, OUTPUT_NAMES):
        gb, eb = _bits(g), _bits(e)
        # NaN payloads are not part of the contract (XLA:CPU makes every bf16 NaN result its
        # canonical NaN, whatever the op); NaN positions and signs are
        nan = np.isnan(np.asarray(g, np.float64)) & np.isnan(np.asarray(e.view(g.dtype), np.float64))
        sign = np.array(1, gb.dtype) << np.array(8 * gb.itemsize - 1, gb.dtype)
        gb, eb = np.where(nan, gb & sign, gb), np.where(nan, eb & sign, eb)
        diff = np.nonzero(gb != eb)[0]
        if diff.size:
            bad.append(f"{what}: {diff.size} differ, first at {diff[:4].tolist()}: "
                       f"aotc {[hex(v) for v in gb[diff[:4]]]} xla {[hex(v) for v in eb[diff[:4]]]}")
    assert not bad, "\n".join(bad)


def test_every_f32_subnormal_gives_one_value_on_xla():
    """The fixture shows the rule aotc_cbrt_f32 encodes (the test above checks aotc)."""
    inputs, expected = load_case("cbrt_subnormal")
    x = _bits(inputs[0])
    sub = ((x & 0x7F800000) == 0) & ((x & 0x007FFFFF) != 0)
    assert sub.sum() > 2000
    assert set(_bits(expected[0])[sub].tolist()) == {0xA6214518}
    b = _bits(inputs[1])
    bsub = ((b & 0x7F80) == 0) & ((b & 0x007F) != 0)
    assert set(_bits(expected[1])[bsub].tolist()) == {0xA621}

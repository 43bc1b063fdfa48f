"""Dots on the reduced-precision GEMMs (aotc_lowp.c): bf16 x bf16 -> bf16 / f32 (f32
accumulation, one rounding) and s8 x s8 -> s32 (wrapping sums), at odd and batched sizes,
transposed operands, subnormal bf16 inputs and an s32 sum that wraps; and f16, whose
conversions use F16C where the target has it: a dot (widened to the f32 GEMM), an
elementwise chain (bit-exact) and every f16 value widened to f32 (bits compared). Each case runs on
the portable path (the default build: no -march) and, in `test_native`, with this
machine's ISA (vpdpbusd, and vdpbf16ps where aotc_lowp.h picks it or AOTC_LP_DPBF16
asks for it) under gcc and clang, -O0 to -O3.

s32 results are compared exactly. bf16 results within one bf16 ulp of XLA's, plus F32_TOL
of the largest magnitude for results that cancel to near 0 (XLA:CPU's f32 GEMM sums in
its own order); over 99% of them are bit-equal to XLA's (`test_native` asserts 99%;
measured 99.99% on 255x513x129). f32 results within F32_TOL of the largest magnitude.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.ops.conftest import CFLAGS, assert_matches, load_case, run_hlo_text

F32_TOL = 2e-5
BF16_ULP = 2.0 ** -7  # spacing of bf16 values in [1, 2)
F16_ULP = 2.0 ** -10
BF16 = ml_dtypes.bfloat16


def _dot(name: str, lhs: str, rhs: str, out: str, dnums: str) -> str:
    return (f"HloModule {name}\nENTRY main {{\n  a = {lhs} parameter(0)\n  b = {rhs} parameter(1)\n"
            f"  ROOT d = {out} dot(a, b), {dnums}\n}}\n")


def _bf(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32).astype(BF16)


def _s8(shape, seed):
    return np.random.default_rng(seed).integers(-128, 128, shape, dtype=np.int8)


def _subnormal_bf16(shape, seed):
    """Normal values with a third of them bf16 subnormals (exponent field 0), and the
    other operand of the case large enough that their products would be normal."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    bits = x.astype(BF16).view(np.uint16).copy()
    sub = rng.random(shape) < 1 / 3
    bits[sub] = (bits[sub] & 0x8000) | rng.integers(1, 0x80, int(sub.sum()), dtype=np.uint16)
    return bits.view(BF16)


MM = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"

_F16_CHAIN = """HloModule lowp_f16_chain
ENTRY main {
  a = f16[4099] parameter(0)
  b = f16[4099] parameter(1)
  m = f16[4099] multiply(a, b)
  q = f16[4099] divide(a, b)
  x = f16[4099] maximum(m, q)
  s = f16[4099] add(x, a)
  t = f16[4099] abs(s)
  r = f16[4099] sqrt(t)
  ROOT y = f16[4099] subtract(r, a)
}
"""
# (no product feeds an add: XLA:CPU on an AVX512_FP16 machine fuses f16 a*b + c into one
# f16 FMA, rounded once, which aotc's per-op rounding of f16 does not do yet)
# every f16 NaN, infinity, subnormal and a sweep of normals, widened to f32 and read as bits
_F16_CONVERT = """HloModule lowp_f16_convert
ENTRY main {
  a = f16[65536] parameter(0)
  c = f32[65536] convert(a)
  ROOT y = u32[65536] bitcast-convert(c)
}
"""



def _epilogue(name: str, t: str, out: str) -> str:
    """dot + bias + ReLU (the dot's consumers become its GEMM epilogue)."""
    return f"""HloModule {name}
ENTRY main {{
  a = {t}[200,136] parameter(0)
  b = {t}[136,72] parameter(1)
  c = {out}[72] parameter(2)
  d = {out}[200,72] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  cb = {out}[200,72] broadcast(c), dimensions={{1}}
  s = {out}[200,72] add(d, cb)
  z = {out}[] constant(0)
  zb = {out}[200,72] broadcast(z), dimensions={{}}
  ROOT y = {out}[200,72] maximum(s, zb)
}}
"""


def _f16(shape, seed, lo=-4.0, hi=4.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float16)

# name -> (HLO text, inputs in parameter order, rtol); rtol None: bf16 result, <= 1 ulp
CASES = {
    "lowp_bf16_odd": (_dot("lowp_bf16_odd", "bf16[255,129]", "bf16[129,513]", "bf16[255,513]", MM),
                      [_bf((255, 129), 1), _bf((129, 513), 2)], None),
    "lowp_bf16_256": (_dot("lowp_bf16_256", "bf16[256,256]", "bf16[256,256]", "bf16[256,256]", MM),
                      [_bf((256, 256), 3), _bf((256, 256), 4)], None),
    # jnp.dot(a, b, preferred_element_type=jnp.float32)
    "lowp_bf16_f32_odd": (_dot("lowp_bf16_f32_odd", "bf16[255,129]", "bf16[129,513]", "f32[255,513]", MM),
                          [_bf((255, 129), 5), _bf((129, 513), 6)], F32_TOL),
    # batched, the rhs read transposed (contracting its last dimension), K odd and > one block
    "lowp_bf16_batched_t": (_dot("lowp_bf16_batched_t", "bf16[3,64,601]", "bf16[3,96,601]", "f32[3,64,96]",
                                 "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                                 "rhs_contracting_dims={2}"),
                            [_bf((3, 64, 601), 7), _bf((3, 96, 601), 8)], F32_TOL),
    # subnormal inputs times 2^100: XLA:CPU flushes them (DAZ), and so does vdpbf16ps
    "lowp_bf16_subnormal": (_dot("lowp_bf16_subnormal", "bf16[48,64]", "bf16[64,40]", "f32[48,40]", MM),
                            [_subnormal_bf16((48, 64), 9), (_bf((64, 40), 10).astype(np.float32) * 2.0 ** 100)
                             .astype(BF16)], F32_TOL),
    # f16: widened to f32 (F16C where the target has it), f32 sums, one rounding
    "lowp_f16_dot": (_dot("lowp_f16_dot", "f16[130,200]", "f16[200,97]", "f16[130,97]", MM),
                     [_f16((130, 200), 15, -1, 1), _f16((200, 97), 16, -1, 1)], None),
    # elementwise f16: each op in f32, rounded to f16, bit-exact
    "lowp_f16_chain": (_F16_CHAIN, [_f16(4099, 17), _f16(4099, 18, 0.01, 4)], 0.0),
    "lowp_f16_convert": (_F16_CONVERT, [np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)], 0.0),
    "lowp_bf16_epilogue": (_epilogue("lowp_bf16_epilogue", "bf16", "bf16"),
                           [_bf((200, 136), 19), _bf((136, 72), 20), _bf(72, 21)], None),
    "lowp_s8_epilogue": (_epilogue("lowp_s8_epilogue", "s8", "s32"),
                         [_s8((200, 136), 22), _s8((136, 72), 23),
                          np.random.default_rng(24).integers(-5000, 5000, 72, dtype=np.int32)], 0.0),
    "lowp_s8_odd": (_dot("lowp_s8_odd", "s8[255,129]", "s8[129,513]", "s32[255,513]", MM),
                    [_s8((255, 129), 11), _s8((129, 513), 12)], 0.0),
    "lowp_s8_batched_t": (_dot("lowp_s8_batched_t", "s8[3,64,203]", "s8[3,96,203]", "s32[3,64,96]",
                               "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                               "rhs_contracting_dims={2}"),
                          [_s8((3, 64, 203), 13), _s8((3, 96, 203), 14)], 0.0),
    # -128 * -128 * 140000 = 2293760000 > 2^31 - 1: the s32 sum wraps, as XLA's does
    "lowp_s8_wraps": (_dot("lowp_s8_wraps", "s8[2,140000]", "s8[140000,3]", "s32[2,3]", MM),
                      [np.full((2, 140000), -128, np.int8), np.full((140000, 3), -128, np.int8)], 0.0),
}

# every case runs on aotc_lp_[bi]gemm: its (loops, m, n, k)
PLANS = {"lowp_bf16_odd": ((), 255, 513, 129), "lowp_bf16_256": ((), 256, 256, 256),
         "lowp_bf16_f32_odd": ((), 255, 513, 129), "lowp_bf16_batched_t": ((3,), 64, 96, 601),
         "lowp_bf16_subnormal": ((), 48, 40, 64), "lowp_s8_odd": ((), 255, 513, 129),
         "lowp_s8_batched_t": ((3,), 64, 96, 203), "lowp_s8_wraps": ((), 2, 3, 140000)}
# f16 dots keep the widened f32 GEMM (no lowp kind)
WIDENED = ("lowp_f16_dot",)


def _check(name: str, got: list[np.ndarray], rtol: float | None) -> float:
    """Compares with XLA's outputs; returns the fraction of bf16 elements bit-equal to XLA's."""
    _, (want,) = load_case(name)
    (g,) = got
    if rtol is not None:
        assert_matches(g, want, rtol, name)
        return 1.0
    w = np.asarray(want).view(g.dtype) if np.asarray(want).dtype == np.uint16 else np.asarray(want)
    gf, wf = g.astype(np.float32), w.astype(np.float32)
    ulp_rel = BF16_ULP if g.dtype == BF16 else F16_ULP
    # one bf16 (f16) ulp of the value (of the larger of the two, at a binade edge), plus what
    # f32 sums in two orders may differ by (a result near 0 after cancellation)
    ulp = np.maximum(np.abs(gf), np.abs(wf)) * ulp_rel + F32_TOL * float(np.abs(wf).max())
    assert np.all(np.abs(gf - wf) <= ulp), f"{name}: more than one bf16 ulp from XLA"
    return float(np.mean(g.view(np.uint16) == w.view(np.uint16)))


def test_f16_dot_is_widened():
    from aotc.frontend.hlo_parser import parse_hlo
    from aotc.ops.dot import gemm_plan, gemm_type
    from aotc.ops.dot_lowp import lowp_kind

    mod = parse_hlo(CASES["lowp_f16_dot"][0])
    (entry,) = (c for c in mod.computations if c.name == mod.entry)
    by_name = {i.name: i for i in entry.instructions}
    dot = by_name["d"]
    lhs, rhs = (by_name[o].array_shape for o in dot.operands)
    assert lowp_kind(dot, lhs, rhs) is None and gemm_type(dot, lhs, rhs) == "f32"
    assert gemm_plan(dot, lhs, rhs) is not None


@pytest.mark.parametrize("name", sorted(CASES))
def test_portable(name, workdir):
    text, _, rtol = CASES[name]
    inputs, _ = load_case(name)
    _check(name, run_hlo_text(text, inputs, workdir, name), rtol)


_SLOW = pytest.mark.slow  # the whole matrix takes minutes


@pytest.mark.parametrize("cc,opt,dpbf16", [pytest.param("gcc", "-O3", False, marks=_SLOW), ("gcc", "-O2", True),
                                            pytest.param("clang", "-O0", False, marks=_SLOW),
                                            pytest.param("clang", "-O3", True, marks=_SLOW),
                                            pytest.param("gcc", "-O0", True, marks=_SLOW)])
@pytest.mark.parametrize("name", sorted(CASES))
def test_native(name, cc, opt, dpbf16, workdir):
    """This machine's ISA (`dpbf16`: vdpbf16ps also where aotc_lowp.h prefers widening, as
    on cores with AVX512_FP16); bf16 results bit-equal to XLA's in >= 99% of elements."""
    text, _, rtol = CASES[name]
    inputs, _ = load_case(name)
    # clang's UBSan runtime is not in the Python process: undefined behaviour traps instead
    flags = ("-march=native", opt) + (("-fsanitize-trap=undefined",) if cc == "clang" else ()) \
        + (("-DAOTC_LP_DPBF16",) if dpbf16 else ())
    got = run_hlo_text(text, inputs, workdir, f"{name}_{cc}{opt[1:]}{'_dp' if dpbf16 else ''}",
                       build_cmd=(cc, *CFLAGS, *flags))
    assert _check(name, got, rtol) >= 0.99


@pytest.mark.parametrize("name", sorted(PLANS))
def test_plan(name):
    from aotc.frontend.hlo_parser import parse_hlo
    from aotc.ops.dot import gemm_plan
    from aotc.ops.dot_lowp import lowp_kind

    mod = parse_hlo(CASES[name][0])
    (entry,) = (c for c in mod.computations if c.name == mod.entry)
    by_name = {i.name: i for i in entry.instructions}
    dot = by_name["d"]
    lhs, rhs = (by_name[o].array_shape for o in dot.operands)
    assert lowp_kind(dot, lhs, rhs) is not None
    p = gemm_plan(dot, lhs, rhs)
    assert (tuple(s for s, *_ in p.loops), p.m, p.n, p.k) == PLANS[name]

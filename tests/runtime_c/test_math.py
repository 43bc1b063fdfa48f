"""aotc_math.h helpers against XLA:CPU's documented semantics.

Expected values come from the independent references in reference.py (exact
integer and rational arithmetic, XLA's rules from docs/xla-semantics.md) and
from numpy/ml_dtypes where they agree with XLA.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from .conftest import FLOAT_TYPES, INT_TYPES
from .reference import (BITS, INF, NAN, Group, half_ref_bits, bits_f32, bits_f64, call_group,
                        check_group, cvt_groups, float_exact_groups, float_libm_groups, half_groups,
                        int_groups, int_max, int_min, signed, to_f32, wrap)

# ================================================================== tests

def _gid(g: Group) -> str:
    return g.fn


@pytest.mark.parametrize("group", int_groups(), ids=_gid)
def test_int_helpers(rt, group):
    check_group(group, call_group(rt.lib, group))


@pytest.mark.parametrize("group", float_exact_groups(), ids=_gid)
def test_float_exact_helpers(rt, group):
    check_group(group, call_group(rt.lib, group))


@pytest.mark.parametrize("group", float_libm_groups(), ids=_gid)
def test_float_libm_helpers(rt, group):
    check_group(group, call_group(rt.lib, group))


@pytest.mark.parametrize("group", cvt_groups(), ids=_gid)
def test_conversions(rt, group):
    check_group(group, call_group(rt.lib, group))


@pytest.mark.parametrize("group", half_groups(), ids=_gid)
def test_half_edge_values(rt, group):
    check_group(group, call_group(rt.lib, group))


@pytest.mark.parametrize("t", INT_TYPES)
def test_int_documented_edges(rt, t):
    lib = rt.lib
    lo, hi = int_min(t), int_max(t)
    ones = wrap(-1, t)
    f = lambda op: getattr(lib, f"aotc_{op}_{t}")  # noqa: E731
    assert f("div")(5, 0) == ones and f("div")(0, 0) == ones
    assert f("rem")(5, 0) == 5
    assert f("shl")(1, BITS[t]) == 0 and f("shr_logical")(hi, BITS[t]) == 0
    if signed(t):
        assert f("abs")(lo) == lo and f("neg")(lo) == lo
        assert f("div")(lo, -1) == lo and f("rem")(lo, -1) == 0
        assert f("div")(-7, 2) == -3 and f("rem")(-7, 2) == -1
        assert f("shr_arith")(-8, BITS[t]) == -1 and f("shr_arith")(-8, -1) == -1
        assert f("shr_arith")(8, 100 % (1 << (BITS[t] - 1))) == (8 >> 100 if BITS[t] > 100 else 0)
        assert f("add")(hi, 1) == lo and f("mul")(hi, 2) == -2
        assert f("pow")(-1, -3) == -1 and f("pow")(-1, -4) == 1 and f("pow")(1, -7) == 1
        assert f("pow")(2, -1) == 0
    else:
        assert f("div")(hi, 0) == hi  # all ones
        assert f("abs")(hi) == hi
        assert f("shr_arith")(hi, BITS[t]) == hi  # sign fill of the top bit
    assert f("pow")(3, 64) == 1 and f("pow")(5, 65) == 5 and f("pow")(2, 0) == 1
    assert f("popcnt")(ones) == BITS[t] and f("clz")(0) == BITS[t] and f("clz")(1) == BITS[t] - 1


@pytest.mark.parametrize("t", FLOAT_TYPES)
def test_float_documented_edges(rt, t):
    """The special values listed in docs/xla-semantics.md."""
    lib = rt.lib
    f = lambda op: getattr(lib, f"aotc_{op}_{t}")  # noqa: E731
    neg = lambda x: math.copysign(1, x) < 0  # noqa: E731
    assert math.isnan(f("max")(NAN, 1.0)) and math.isnan(f("max")(1.0, NAN))
    assert math.isnan(f("min")(NAN, 1.0)) and math.isnan(f("min")(1.0, NAN))
    assert not neg(f("max")(-0.0, 0.0)) and not neg(f("max")(0.0, -0.0))
    assert neg(f("min")(0.0, -0.0)) and neg(f("min")(-0.0, 0.0))
    assert math.isnan(f("clamp")(0.0, NAN, 1.0))
    assert math.isnan(f("rem")(1.0, 0.0)) and math.isnan(f("rem")(INF, 2.0))
    assert f("rem")(3.0, INF) == 3.0 and neg(f("rem")(-0.0, 1.0)) and f("rem")(-5.5, 2.0) == -1.5
    assert neg(f("round_afz")(-0.0)) and neg(f("round_even")(-0.0)) and neg(f("round_even")(-0.5))
    assert f("round_afz")(2.5) == 3.0 and f("round_even")(2.5) == 2.0 and f("round_afz")(-2.5) == -3.0
    assert f("rsqrt")(-0.0) == -INF and f("rsqrt")(0.0) == INF and neg(f("sqrt")(-0.0))
    assert f("pow")(0.0, -1.0) == INF and neg(f("pow")(-0.0, 1.0)) and f("pow")(1.0, NAN) == 1.0
    assert f("pow")(NAN, 0.0) == 1.0 and math.isnan(f("pow")(-8.0, 1.0 / 3.0))
    assert f("atan2")(0.0, -0.0) == pytest.approx(math.pi) and f("atan2")(-0.0, -1.0) == pytest.approx(-math.pi)
    assert f("atan2")(-0.0, 1.0) == 0.0 and neg(f("atan2")(-0.0, 1.0))
    assert f("tanh")(1e-30) == pytest.approx(1e-30, rel=1e-6)
    assert f("expm1")(1e-10) == pytest.approx(1e-10, rel=1e-6)
    assert f("log1p")(1e-10) == pytest.approx(1e-10, rel=1e-6)
    assert math.isnan(f("sign")(NAN)) and neg(f("sign")(-0.0)) and f("sign")(-3.0) == -1.0
    assert f("logistic")(-1000.0) == 0.0 and f("logistic")(1000.0) == 1.0 and f("logistic")(0.0) == 0.5
    assert f("is_finite")(INF) == 0 and f("is_finite")(NAN) == 0 and f("is_finite")(-0.0) == 1


@pytest.mark.parametrize("t", FLOAT_TYPES)
def test_totalorder(rt, t):
    """Keys order -NaN < -inf < ... < -0 < +0 < ... < inf < NaN."""
    if t == "f32":
        big, tiny = 3.4028234663852886e38, 1.401298464324817e-45
        # quiet NaNs only: passing through a Python float quiets signalling ones
        nan_bits = [0xFFC00001, 0xFFC00000, 0x7FC00000, 0x7FC00001]
        mk = bits_f32
    else:
        big, tiny = 1.7976931348623157e308, 5e-324
        nan_bits = [0xFFF8000000000001, 0xFFF8000000000000, 0x7FF8000000000000,
                    0x7FF8000000000001]
        mk = bits_f64
    f = getattr(rt.lib, f"aotc_totalorder_{t}")
    order = [mk(nan_bits[0]), mk(nan_bits[1]), -INF, -big, -1.0, -tiny, -0.0, 0.0, tiny, 1.0,
             big, INF, mk(nan_bits[2]), mk(nan_bits[3])]
    keys = [f(x) for x in order]
    assert keys == sorted(keys) and len(set(keys)) == len(keys), keys


@pytest.mark.parametrize("t", FLOAT_TYPES)
def test_picks_are_max_and_min_at_normal_bounds(rt, t):
    """kernel/strength.py writes max(x, c) with c a positive normal number or +inf as
    pick_gt(c, x), and min(x, c) with c negative as pick_lt(c, x): the same bits for every
    x (NaNs, signed zeros, subnormals, c itself, infinities). maximum and minimum are not
    symmetric in a NaN's sign (XLA's are not), so only this operand order is checked."""
    lib = rt.lib
    mk, big, tiny = (bits_f32, 3.4028234663852886e38, 1.401298464324817e-45) if t == "f32" else \
        (bits_f64, 1.7976931348623157e308, 5e-324)
    nans = [mk(0x7FC00001), mk(0xFFC00123)] if t == "f32" else [mk(0x7FF8000000000001), mk(0xFFF8000000000123)]
    normal = float(np.finfo(np.float32 if t == "f32" else np.float64).tiny)
    rng = np.random.default_rng(11)
    xs = [0.0, -0.0, tiny, -tiny, normal, -normal, 1.0, -1.0, big, -big, INF, -INF, *nans]
    xs += [float(v) for v in rng.standard_normal(300) * 10.0 ** rng.integers(-40, 38, 300)]
    as_bits = (lambda v: np.float32(v).view(np.uint32)) if t == "f32" else (lambda v: np.float64(v).view(np.uint64))
    for c in (normal, 0.1, 1.0, 3.0e4, big, INF):
        xs_c = xs + [c, -c]
        for x in xs_c:
            for fn, pick, bound in (("max", "pick_gt", c), ("min", "pick_lt", -c)):
                want = getattr(lib, f"aotc_{fn}_{t}")(x, bound)
                assert as_bits(getattr(lib, f"aotc_{pick}_{t}")(bound, x)) == as_bits(want), (fn, x, bound)


# ------------------------------------------------------------------ half precision

def _as_bits16(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16)


_CPTR = {np.dtype(np.float32): "float[]", np.dtype(np.float64): "double[]",
         np.dtype(np.uint16): "uint16_t[]", np.dtype(np.uint8): "uint8_t[]",
         np.dtype(np.int32): "int32_t[]"}


def cptr(ffi, a: np.ndarray):
    """A typed C pointer to the data of a contiguous numpy array."""
    return ffi.from_buffer(_CPTR[a.dtype], a)


def _map(rt, name: str, x: np.ndarray, out_dtype) -> np.ndarray:
    x = np.ascontiguousarray(x)
    y = np.zeros(x.shape, out_dtype)
    getattr(rt.lib, f"t_map_{name}")(cptr(rt.ffi, x), cptr(rt.ffi, y), x.size)
    return y


def _check_half(x: np.ndarray, got: np.ndarray, ebits: int, mbits: int, pre=None) -> None:
    bad = []
    exp_nan = ((1 << ebits) - 1) << mbits
    for xi, gi in zip(x.tolist(), got.tolist()):
        src = pre(xi) if pre else xi
        ref = half_ref_bits(src, ebits, mbits)
        if ref is None:
            ok = (gi & exp_nan) == exp_nan and gi & ((1 << mbits) - 1) and gi & (1 << (mbits - 1))
        else:
            ok = gi == ref
        if not ok:
            bad.append(f"{xi!r}: got {gi:#06x}, expected {ref if ref is None else hex(ref)}")
    assert not bad, f"{len(bad)} mismatches:\n" + "\n".join(bad[:30])


def _f32_samples(rng, n=20000) -> np.ndarray:
    rand_bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    # values near the f16 / bf16 rounding boundaries and ranges
    near = np.concatenate([
        np.float32(65504.0), np.float32(65519.0), np.float32(65520.0), np.float32(65536.0),
        np.float32(6.1035156e-05), np.float32(5.9604645e-08), np.float32(2.9802322e-08),
        np.float32(2.9802326e-08), np.float32(1e-40), np.float32(-1e-40), np.float32(1.0e-45),
        np.float32(3.3895314e38), np.float32(3.4028235e38), np.float32(np.inf), np.float32(-np.inf),
        np.float32(np.nan), np.float32(-0.0), np.float32(0.0),
        np.float32([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11, 1 + 3 * 2 ** -11, -(1 + 2 ** -8)]),
    ], axis=None).astype(np.float32)
    mags = rng.uniform(-30, 17, n).astype(np.float32)
    scaled = (np.float32(2.0) ** mags * rng.choice([-1, 1], n)).astype(np.float32)
    return np.concatenate([rand_bits, near, scaled]).astype(np.float32)


def test_bf16_to_f32_exhaustive(rt):
    h = np.arange(1 << 16, dtype=np.uint16)
    got = _map(rt, "bf16_to_f32", h, np.float32)
    assert np.array_equal(got.view(np.uint32), h.astype(np.uint32) << 16)
    ref = h.view(ml_dtypes.bfloat16).astype(np.float32)
    finite = np.isfinite(ref)
    assert np.array_equal(got[finite], ref[finite])


def test_f16_to_f32_exhaustive(rt):
    h = np.arange(1 << 16, dtype=np.uint16)
    got = _map(rt, "f16_to_f32", h, np.float32)
    ref = h.view(np.float16).astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    assert np.array_equal(got[ok].view(np.uint32), ref[ok].view(np.uint32))
    # NaN payload kept (shifted), made quiet
    nan = np.isnan(ref)
    assert np.all((got[nan].view(np.uint32) >> 13 & 0x3FF) | 0x200 == (h[nan] & 0x3FF) | 0x200)


def test_f32_to_bf16(rt):
    x = _f32_samples(np.random.default_rng(1))
    got = _map(rt, "f32_to_bf16", x, np.uint16)
    nan = np.isnan(x)
    _check_half(x[~nan], got[~nan], 8, 7)
    # storage keeps a NaN's upper 16 bits (a moved bf16 NaN, signalling or not, keeps its bits);
    # one whose payload lies in the low 16 bits alone stays a NaN, made quiet
    hi = (x[nan].view(np.uint32) >> 16).astype(np.uint16)
    want = np.where(hi & 0x7F == 0, hi | 0x40, hi)
    assert np.array_equal(got[nan], want)
    fin = np.isfinite(x)  # ml_dtypes agrees (RNE, subnormals kept)
    assert np.array_equal(got[fin], _as_bits16(x[fin].astype(ml_dtypes.bfloat16)))
    assert got[x == np.float32(1e-40)][0] == 0x0001  # 1e-40 -> bf16 9.18e-41
    assert got[x == np.float32(1 + 2 ** -8)][0] == 0x3F80  # tie to even
    assert got[x == np.float32(1 + 3 * 2 ** -8)][0] == 0x3F82


def test_f32_to_f16(rt):
    x = _f32_samples(np.random.default_rng(2))
    got = _map(rt, "f32_to_f16", x, np.uint16)
    _check_half(x, got, 5, 10)
    fin = np.isfinite(x)
    with np.errstate(over="ignore"):
        assert np.array_equal(got[fin], _as_bits16(x[fin].astype(np.float16)))
    one = lambda v: int(got[x == np.float32(v)][0])  # noqa: E731
    assert one(65520.0) == 0x7C00 and one(65519.0) == 0x7BFF and one(65504.0) == 0x7BFF
    assert one(5.9604645e-08) == 0x0001 and one(2.9802322e-08) == 0x0000  # 2^-25 ties to 0


def test_round_half_in_float(rt):
    x = _f32_samples(np.random.default_rng(3), 5000)
    for name, dt in (("round_bf16", ml_dtypes.bfloat16), ("round_f16", np.float16)):
        got = _map(rt, name, x, np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            ref = x.astype(dt).astype(np.float32)
        assert np.array_equal(np.isnan(got), np.isnan(x))
        ok = ~np.isnan(x)
        assert np.array_equal(got[ok].view(np.uint32), ref[ok].view(np.uint32)), name


def _f64_samples(rng, n=4000) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        f32 = _f32_samples(rng, n).astype(np.float64)
    jitter = f32 * (1 + rng.uniform(-1e-7, 1e-7, f32.size))
    special = np.array([1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -11 + 2 ** -40, 1 + 3 * 2 ** -11 - 2 ** -45,
                        1e-40, 1e-300, 2 ** -24 + 2 ** -60, 65519.99, 1e300, -1e300, np.nan])
    return np.concatenate([f32, jitter, special])


def test_f64_to_half_as_xla(rt):
    """XLA:CPU converts f64 -> bf16/f16 through f32 (two roundings)."""
    x = _f64_samples(np.random.default_rng(4))
    got = _map(rt, "f64_to_bf16", x, np.uint16)
    _check_half(x, got, 8, 7, pre=to_f32)
    got16 = _map(rt, "f64_to_f16", x, np.uint16)
    _check_half(x, got16, 5, 10, pre=to_f32)
    # observed on XLA:CPU: f16(1 + 2^-11 + 2^-40) = 1.0, bf16(1 + 2^-8 + 2^-40) = 1.0
    assert got16[x == 1 + 2 ** -11 + 2 ** -40][0] == 0x3C00
    assert got[x == 1 + 2 ** -8 + 2 ** -40][0] == 0x3F80


def test_f64_to_half_exact(rt):
    x = _f64_samples(np.random.default_rng(5))
    _check_half(x, _map(rt, "f64_to_bf16_exact", x, np.uint16), 8, 7)
    got16 = _map(rt, "f64_to_f16_exact", x, np.uint16)
    _check_half(x, got16, 5, 10)
    fin = np.isfinite(x)
    with np.errstate(over="ignore"):  # numpy's f64 -> f16 is a single rounding
        assert np.array_equal(got16[fin], _as_bits16(x[fin].astype(np.float16)))


def test_half_scalar_wrappers(rt):
    lib = rt.lib
    assert lib.aotc_bf16_to_f64(0x3F80) == 1.0 and lib.aotc_f16_to_f64(0x3C00) == 1.0
    assert lib.aotc_f16_to_f32(0x0001) == 2.0 ** -24 and lib.aotc_f16_to_f32(0x8000) == 0.0
    assert lib.aotc_f32_to_bf16(NAN) & 0x7FC0 == 0x7FC0
    assert lib.aotc_f32_to_f16(-NAN) & 0xFE00 == 0xFE00


# ------------------------------------------------------------------ FTZ / DAZ

def _ftz(rt, name: str, x: np.ndarray, out_dtype) -> np.ndarray:
    x = np.ascontiguousarray(x)
    y = np.zeros(x.shape, out_dtype)
    getattr(rt.lib, f"t_ftz_{name}")(cptr(rt.ffi, x), cptr(rt.ffi, y), x.size)
    return y


def _fpenv_supported() -> bool:
    import platform
    return platform.machine() in ("x86_64", "AMD64", "aarch64", "arm64")


@pytest.mark.skipif(not _fpenv_supported(), reason="FTZ/DAZ control only on x86-64 and aarch64")
def test_fpenv_flushes_subnormals(rt):
    sub = np.array([1e-45, 1e-40, -1e-40], np.float32)
    assert np.all(_ftz(rt, "add_self_f32", sub, np.float32) == 0)  # 1e-45 + 1e-45 = 0
    assert np.all(_ftz(rt, "gt0_f32", sub, np.uint8) == 0)  # 1e-40 > 0 is false
    assert np.all(_ftz(rt, "sqrt_f32", sub[1:2], np.float32) == 0)
    assert _ftz(rt, "exp_f32", np.array([-100.0], np.float32), np.float32)[0] == 0
    assert np.all(_ftz(rt, "logistic_f32", np.array([-100.0, -88.0], np.float32), np.float32) == 0)
    assert _ftz(rt, "logistic_f32", np.array([-87.0], np.float32), np.float32)[0] > 0
    assert np.all(_ftz(rt, "cvt_f32_f64", sub, np.float64) == 0)
    assert np.all(_ftz(rt, "cvt_f32_pred", sub, np.uint8) == 0)
    # conversions to half keep subnormal results (integer rounding)
    assert _ftz(rt, "f32_to_bf16", np.array([1e-40], np.float32), np.uint16)[0] == 0x0001
    assert _ftz(rt, "f32_to_f16", np.array([1e-7], np.float32), np.uint16)[0] == 0x0002
    assert _ftz(rt, "round_bf16", np.array([1e-40], np.float32), np.float32).view(np.uint32)[0] == 0x00010000
    assert _ftz(rt, "round_f16", np.array([1e-7], np.float32), np.float32)[0] == np.float32(2 ** -23)
    # f64 -> half goes through f32, whose subnormal intermediate is flushed (as XLA)
    assert _ftz(rt, "f64_to_bf16", np.array([1e-40]), np.uint16)[0] == 0
    assert _ftz(rt, "f64_to_f16", np.array([1e-7]), np.uint16)[0] == 0x0002
    # leaving restores the caller's environment
    assert rt.lib.t_fpenv_restored(cptr(rt.ffi, np.array([1e-45], np.float32))) == 1


@pytest.mark.skipif(not _fpenv_supported(), reason="FTZ/DAZ control only on x86-64 and aarch64")
def test_half_conversions_ignore_ftz(rt):
    """Half rounding gives the same bits with and without FTZ/DAZ."""
    x = _f32_samples(np.random.default_rng(8), 5000)
    for name, out in (("f32_to_bf16", np.uint16), ("f32_to_f16", np.uint16),
                      ("round_bf16", np.float32), ("round_f16", np.float32)):
        plain = _map(rt, name, x, out).view(np.uint16 if out == np.uint16 else np.uint32)
        ftz = _ftz(rt, name, x, out).view(np.uint16 if out == np.uint16 else np.uint32)
        assert np.array_equal(plain, ftz), name


def test_without_ftz_subnormals_are_kept(rt):
    assert rt.lib.aotc_add_f32(1e-45, 1e-45) > 0
    assert rt.lib.aotc_f64_to_bf16(1e-40) == 0x0001


# ------------------------------------------------------------------ complex

@pytest.mark.parametrize("c,t", [("c64", np.complex64), ("c128", np.complex128)])
def test_complex(rt, c, t):
    lib = rt.lib
    mk = getattr(lib, f"aotc_complex_{c}")
    rng = np.random.default_rng(6)
    vals = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(t)
    tol = 1e-6 if c == "c64" else 1e-14
    for a, b in zip(vals[:8], vals[8:]):
        za, zb = mk(a.real, a.imag), mk(b.real, b.imag)
        for op, ref in (("add", a + b), ("sub", a - b), ("mul", a * b), ("div", a / b)):
            z = getattr(lib, f"aotc_{op}_{c}")(za, zb)
            assert abs(complex(z.re, z.im) - complex(ref)) <= tol * (abs(ref) + 1), op
        z = getattr(lib, f"aotc_neg_{c}")(za)
        assert (z.re, z.im) == (-a.real, -a.imag)
        z = getattr(lib, f"aotc_conj_{c}")(za)
        assert (z.re, z.im) == (a.real, -a.imag)
        assert getattr(lib, f"aotc_abs_{c}")(za) == pytest.approx(abs(complex(a)), rel=tol)
        assert getattr(lib, f"aotc_real_{c}")(za) == a.real
        assert getattr(lib, f"aotc_imag_{c}")(za) == a.imag


def test_bitcasts(rt):
    lib = rt.lib
    assert lib.aotc_bitcast_f32_u32(-0.0) == 0x80000000
    assert lib.aotc_bitcast_u32_f32(0x3F800000) == 1.0
    assert lib.aotc_bitcast_f64_u64(1.0) == 0x3FF0000000000000
    assert math.isinf(lib.aotc_bitcast_u64_f64(0x7FF0000000000000))

"""Complex sqrt, rsqrt, expm1, log1p, logistic, power, atan2, compare, maximum, minimum and
clamp (c64, c128) against XLA:CPU: 4096 random values of every magnitude (up to the overflow and
underflow ends of |z|, both signs, the negative real axis of the branch cuts) and every pair of
edge parts (signed zeros, +-inf, NaN, subnormal, huge, tiny, +-1).

Tolerance: the formulas are XLA's (runtime_c/aotc_complex.h), but the real functions under
them (pow, atan2, sin, cos, exp, log) are libm or aotc's helpers where XLA:CPU has its own code,
so a part may differ by a few ulp of the element's magnitude: |got - want| <= RTOL * max(|re|,
|im|) of XLA's result, RTOL 8 ulp (c64 2^-21, c128 2^-50); c128 unary ops at 2^-45, for log1p,
whose two log1p terms cancel where |a+1| is near |b| (measured up to 77 ulp there). NaNs and
infinities must be in the same places with the same signs; a part XLA gives as a zero must be a
zero of the same sign wherever an input part is a special value (zero, inf, NaN). NaN payloads
and signs are not compared (aotc's NaN results are C's quiet NaN, see aotc_complex.h).
compare, maximum, minimum, clamp and select-and-scatter are bit for bit.
Measured (share of parts bit-equal to XLA's, worst error in ulp of |z|): c64 sqrt 100%,
rsqrt 67-72% (2.2), expm1, logistic, power 99-100% (0), log1p 89% (2.3), atan2 96-97% (0);
c128 sqrt 99.95% (0.6), rsqrt 70-74% (2.2), expm1 96-98% (1.3), log1p 91% (77), logistic
96-98% (4), power 94% (1.7), atan2 97-100% (0).
XLA:CPU's order of complex values (observed, see aotc_complex.h): LT/GT lexicographic, LE/GE by
the real parts only; maximum/minimum select by the real part (the first operand on ties);
clamp(lo, x, hi) is minimum(maximum(lo, x), hi).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

from .complex_values import EDGE32 as _EDGE32, EDGE64 as _EDGE64, N as _N, pack as _pack


def _values(dtype, real_dtype, edge, max_exp: float, seed: int) -> np.ndarray:
    """_N values: edge parts pairwise, then random ones of every magnitude and sign."""
    rng = np.random.default_rng(seed)
    e = np.asarray(edge, np.float64)
    re_e, im_e = np.repeat(e, e.size), np.tile(e, e.size)
    k = _N - re_e.size
    mag_re = np.exp(rng.uniform(-max_exp, max_exp, k)) * rng.choice([-1.0, 1.0], k)
    mag_im = np.exp(rng.uniform(-max_exp, max_exp, k)) * rng.choice([-1.0, 1.0], k)
    q = k // 4  # a quarter moderate, a quarter on the real axis (negative half: the branch cuts)
    mag_re[:q], mag_im[:q] = rng.standard_normal(q) * 3, rng.standard_normal(q) * 3
    mag_im[q:2 * q] = rng.choice([0.0, -0.0], q)
    with np.errstate(over="ignore"):
        return _pack(np.concatenate([re_e, mag_re]).astype(real_dtype),
                     np.concatenate([im_e, mag_im]).astype(real_dtype), dtype)


def _moderate(dtype, real_dtype, edge, seed: int) -> np.ndarray:
    """_N values for power and atan2: edge parts pairwise, then |z| in [1e-3, 1e3]."""
    rng = np.random.default_rng(seed)
    e = np.asarray(edge, np.float64)
    re_e, im_e = np.repeat(e, e.size), np.tile(e, e.size)
    k = _N - re_e.size
    re = np.exp(rng.uniform(-7, 7, k)) * rng.choice([-1.0, 1.0], k)
    im = np.exp(rng.uniform(-7, 7, k)) * rng.choice([-1.0, 1.0], k)
    im[: k // 4] = 0.0
    return _pack(np.concatenate([re_e, re]).astype(real_dtype), np.concatenate([im_e, im]).astype(real_dtype),
                 dtype)


def _exponents(dtype, real_dtype, edge, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = np.asarray(edge, np.float64)
    re_e, im_e = np.tile(e, e.size), np.repeat(e, e.size)  # the other pairing than the bases'
    k = _N - re_e.size
    re, im = rng.uniform(-4, 4, k), rng.uniform(-2, 2, k)
    im[k // 4: k // 2] = 0.0
    re[k // 2: k // 2 + 64] = np.round(re[k // 2: k // 2 + 64])  # integer powers
    return _pack(np.concatenate([re_e, re]).astype(real_dtype), np.concatenate([im_e, im]).astype(real_dtype),
                 dtype)


_UNARY = ("sqrt", "rsqrt", "exponential-minus-one", "log-plus-one", "logistic")


def _unary_module(name: str, t: str, n: int) -> str:
    lines = [f"  v{k} = {t}[{n}] {op}(x)" for k, op in enumerate(_UNARY)]
    root = ", ".join(f"{t}[{n}]" for _ in _UNARY)
    names = ", ".join(f"v{k}" for k in range(len(_UNARY)))
    return "\n".join([f"HloModule {name}", "ENTRY main {", f"  x = {t}[{n}] parameter(0)", *lines,
                      f"  ROOT r = ({root}) tuple({names})", "}", ""])


def _binary_module(name: str, t: str, n: int) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = {t}[{n}] parameter(0)
  y = {t}[{n}] parameter(1)
  p = {t}[{n}] power(x, y)
  a = {t}[{n}] atan2(x, y)
  ROOT r = ({t}[{n}], {t}[{n}]) tuple(p, a)
}}
"""


def _order_module(name: str, t: str, n: int) -> str:
    cmps = [f"  c{d} = pred[{n}] compare(x, y), direction={d}" for d in ("EQ", "NE", "LT", "GT", "LE", "GE")]
    return "\n".join([f"HloModule {name}", "ENTRY main {", f"  x = {t}[{n}] parameter(0)",
                      f"  y = {t}[{n}] parameter(1)", f"  z = {t}[{n}] parameter(2)", *cmps,
                      f"  mx = {t}[{n}] maximum(x, y)", f"  mn = {t}[{n}] minimum(x, y)",
                      f"  cl = {t}[{n}] clamp(x, y, z)",
                      f"  ROOT r = ({', '.join(['pred[%d]' % n] * 6)}, {t}[{n}], {t}[{n}], {t}[{n}]) "
                      "tuple(cEQ, cNE, cLT, cGT, cLE, cGE, mx, mn, cl)", "}", ""])


def _grid(dtype, real_dtype, seed: int) -> list[np.ndarray]:
    """Three operands whose parts come from a small set, so ties, signed zeros and NaNs meet."""
    rng = np.random.default_rng(seed)
    p = np.array([-1.0, 0.0, -0.0, 1.0, 2.0, np.nan, np.inf, -np.inf])
    return [_pack(rng.choice(p, _N), rng.choice(p, _N), dtype).astype(dtype) for _ in range(3)]


_C64 = _values(np.complex64, np.float32, _EDGE32, 88.0, 1)
_C128 = _values(np.complex128, np.float64, _EDGE64, 709.0, 2)
CASES = {
    "complex_unary_c64": (_unary_module("complex_unary_c64", "c64", _N), [_C64], 2.0 ** -21),
    # c128 log1p: the two log1p terms of its real part cancel where a+1 is near |b| (-0.38-0.50i):
    # measured up to 77 ulp of |z| there (aotc's f64 log1p and XLA's differ in the last bits)
    "complex_unary_c128": (_unary_module("complex_unary_c128", "c128", _N), [_C128], 2.0 ** -45),
    "complex_binary_c64": (_binary_module("complex_binary_c64", "c64", _N),
                           [_moderate(np.complex64, np.float32, _EDGE32, 3),
                            _exponents(np.complex64, np.float32, _EDGE32, 4)], 2.0 ** -21),
    "complex_binary_c128": (_binary_module("complex_binary_c128", "c128", _N),
                            [_moderate(np.complex128, np.float64, _EDGE64, 5),
                             _exponents(np.complex128, np.float64, _EDGE64, 6)], 2.0 ** -50),
    "complex_order_c64": (_order_module("complex_order_c64", "c64", _N), _grid(np.complex64, np.float32, 7), 0.0),
    "complex_order_c128": (_order_module("complex_order_c128", "c128", _N), _grid(np.complex128, np.float64, 8),
                           0.0),
}


def _special(inputs: list[np.ndarray]) -> np.ndarray:
    """Elements where some input part is a zero, an infinity or a NaN."""
    out = np.zeros(inputs[0].shape, bool)
    for x in inputs:
        for part in (x.real, x.imag):
            out |= (part == 0) | ~np.isfinite(part)
    return out


def compare_complex(got, want, inputs, rtol: float, what: str) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, f"{what}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
    if g.dtype.kind != "c" or rtol == 0:  # pred, or bit for bit
        np.testing.assert_array_equal(g.view(np.uint8) if g.dtype == bool else g.view(g.real.dtype.str.replace("f", "u")),
                                      w.view(np.uint8) if w.dtype == bool else w.view(w.real.dtype.str.replace("f", "u")),
                                      err_msg=f"{what}: bits")
        return
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.maximum(np.abs(w.real), np.abs(w.imag))
    special = _special(inputs)
    for part in ("real", "imag"):
        gp, wp = getattr(g, part), getattr(w, part)
        np.testing.assert_array_equal(np.isnan(gp), np.isnan(wp), err_msg=f"{what} {part}: NaN positions")
        inf = np.isinf(wp)
        np.testing.assert_array_equal(gp[inf], wp[inf], err_msg=f"{what} {part}: infinities")
        np.testing.assert_array_equal(np.isinf(gp), inf, err_msg=f"{what} {part}: infinities")
        zero = (wp == 0) & special
        np.testing.assert_array_equal(gp[zero], wp[zero], err_msg=f"{what} {part}: zeros")
        np.testing.assert_array_equal(np.signbit(gp[zero]), np.signbit(wp[zero]), err_msg=f"{what} {part}: zero signs")
        fin = np.isfinite(wp) & np.isfinite(scale)
        err = np.abs(gp[fin].astype(np.float64) - wp[fin].astype(np.float64))
        bad = err > rtol * scale[fin].astype(np.float64)
        assert not bad.any(), (f"{what} {part}: {int(bad.sum())} parts off by more than {rtol:g} of |z|, e.g. "
                               f"got {gp[fin][bad][:4]} want {wp[fin][bad][:4]} at inputs "
                               f"{[x[fin][bad][:4] for x in inputs]}")


# ------------------------------------------------------------------ convolution, select-and-scatter
# A complex convolution is a direct loop nest of complex multiply-adds (ops/convolution.py): the
# products fused as XLA:CPU fuses them (aotc_fmul, kernel/contract.py) and summed in the order
# XLA's loop sums them, so bit for bit on these cases (on an FMA target; measured before the
# fused product: 49-58% of parts bit-equal, 1.8 eps of the largest output). select-and-scatter
# picks by XLA's complex order (compare above) and adds complex sources: bit for bit.

def _conv_module(name: str, t: str, lhs, rhs, out, attrs: str) -> str:
    dims = lambda d: ",".join(map(str, d))  # noqa: E731
    return f"""HloModule {name}
ENTRY main {{
  x = {t}[{dims(lhs)}] parameter(0)
  w = {t}[{dims(rhs)}] parameter(1)
  ROOT c = {t}[{dims(out)}] convolution(x, w), {attrs}
}}
"""


def _sas_module(name: str, t: str, shape, src, window: str, direction: str) -> str:
    dims = lambda d: ",".join(map(str, d))  # noqa: E731
    return f"""HloModule {name}
sel {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT r = pred[] compare(a, b), direction={direction}
}}
add {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT r = {t}[] add(a, b)
}}
ENTRY main {{
  x = {t}[{dims(shape)}] parameter(0)
  s = {t}[{dims(src)}] parameter(1)
  z = {t}[] constant((0, 0))
  ROOT r = {t}[{dims(shape)}] select-and-scatter(x, s, z), window={{{window}}}, select=sel, scatter=add
}}
"""


def _crandn(shape, dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _cints(shape, dtype, seed: int) -> np.ndarray:
    """Small integer parts, so windows hold ties of real parts and of whole values."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)).astype(dtype)


CONV_RTOL = {np.complex64: 0.0, np.complex128: 0.0}  # bit for bit
CONV_CASES = {
    "complex_conv_c64": ("c64", (1, 16, 16, 8), (3, 3, 8, 16), (1, 16, 16, 16),
                         "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
    "complex_conv_grouped_c64": ("c64", (2, 12, 12, 8), (3, 3, 4, 16), (2, 6, 6, 16),
                                 "window={size=3x3 stride=2x2 pad=2_2x2_2 rhs_dilate=2x2}, "
                                 "dim_labels=b01f_01io->b01f, feature_group_count=2"),
    "complex_conv_batch_group_c128": ("c128", (4, 10, 10, 4), (3, 3, 4, 8), (2, 8, 8, 8),
                                      "window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2"),
    "complex_conv_nchw_c128": ("c128", (2, 8, 14, 14), (16, 8, 3, 3), (2, 16, 7, 7),
                               "window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_reversal=1x0}, "
                               "dim_labels=bf01_oi01->bf01"),
}
SAS_CASES = {
    "complex_sas_c64": ("c64", (1, 16, 16, 8), (1, 8, 8, 8), "size=1x2x2x1 stride=1x2x2x1", "GE"),
    "complex_sas_overlap_c128": ("c128", (2, 15, 15, 4), (2, 7, 7, 4), "size=1x3x3x1 stride=1x2x2x1", "GT"),
    "complex_sas_lt_c64": ("c64", (2, 12, 12, 4), (2, 6, 6, 4), "size=1x2x2x1 stride=1x2x2x1", "LT"),
}
for _k, (_name, (_t, _l, _r, _o, _a)) in enumerate(sorted(CONV_CASES.items())):
    _dt = np.complex64 if _t == "c64" else np.complex128
    CASES[_name] = (_conv_module(_name, _t, _l, _r, _o, _a), [_crandn(_l, _dt, 40 + _k), _crandn(_r, _dt, 50 + _k)],
                    CONV_RTOL[_dt])
for _k, (_name, (_t, _shape, _src, _win, _dir)) in enumerate(sorted(SAS_CASES.items())):
    _dt = np.complex64 if _t == "c64" else np.complex128
    CASES[_name] = (_sas_module(_name, _t, _shape, _src, _win, _dir), [_cints(_shape, _dt, 60 + _k),
                                                                       _crandn(_src, _dt, 70 + _k)], 0.0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, workdir):
    from .conftest import assert_matches, load_case, run_hlo_text

    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    got = run_hlo_text(text, inputs, workdir, name)
    assert len(got) == len(expected)
    for k, (g, w) in enumerate(zip(got, expected)):
        if name in CONV_CASES:
            assert_matches(g, w, rtol, f"{name} output {k}")
        else:
            compare_complex(g, w, inputs, rtol, f"{name} output {k}")


_BUILDS = [(cc, opt) for cc in ("gcc", "clang") for opt in (("-O0",), ("-O2",), ("-O3",), ("-O3", "-march=native"))]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["complex_unary_c64", "complex_unary_c128", "complex_binary_c64",
                                  "complex_binary_c128", "complex_order_c64", "complex_conv_c64",
                                  "complex_conv_nchw_c128"])
def test_same_bits_whatever_flags(name, workdir):
    """gcc and clang at -O0, -O2, -O3 and -O3 -march=native (where gcc may fuse a complex product
    into fmaddsub unless contraction is off) give the same bits, NaNs included."""
    from .complex_values import assert_one_result, builds
    from .conftest import load_case

    text, _, _ = CASES[name]
    inputs, _ = load_case(name)
    assert_one_result(builds(text, inputs, workdir, name, _BUILDS), name)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["complex_unary_c64", "complex_binary_c128", "complex_order_c64",
                                  "complex_conv_grouped_c64", "complex_sas_overlap_c128"])
def test_case_asan(name, workdir):
    """The same cases built with AddressSanitizer and UBSan (a report aborts the run)."""
    from .conftest import assert_matches, load_case, run_hlo_text_asan

    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    got = run_hlo_text_asan(text, inputs, workdir, name)
    assert len(got) == len(expected)
    for k, (g, w) in enumerate(zip(got, expected)):
        if name in CONV_CASES:
            assert_matches(np.asarray(g), w, rtol, f"{name} output {k}")
        else:
            compare_complex(np.asarray(g), w, inputs, rtol, f"{name} output {k}")


_REDUCE_MAX = """HloModule bad
mx {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT r = c64[] OP(a, b)
}
ENTRY main {
  x = c64[8,300] parameter(0)
  z = c64[] constant((-inf, 0))
  ROOT r = c64[8] reduce(x, z), dimensions={1}, to_apply=mx
}
"""


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_complex_max_in_a_reduction_is_refused(op, workdir):
    """XLA's complex maximum keeps the first operand where the real parts tie, so a reduction's
    result depends on XLA:CPU's order of operations (measured: a [64,300] reduce differs from any
    fixed order): refused with a located error, not a different answer."""
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions

    opts = CompileOptions()
    with pytest.raises(AotcError, match=r"bad.hlo:10:\d+: error: .*" + op + r" r(\.\d+)? of complex values"):
        fe = driver.frontend("bad.hlo", None, opts, text=_REDUCE_MAX.replace("OP", op))
        driver.generate(fe, str(workdir / "libbad"), opts)

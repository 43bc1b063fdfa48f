"""Complex multiply and divide (c64, c128) bit for bit against XLA:CPU on an FMA target:
4096 random pairs of every magnitude (products and quotients up to overflow and underflow),
then every pair of edge values (each part one of signed zeros, +-inf, NaN, subnormal, huge,
tiny, +-1; 196 x 196 pairs), so each of XLA's corner cases of the quotient is met.

XLA's product fuses a.re b.re - a.im b.im and a.im b.re + a.re b.im as LLVM contracts them on an
FMA machine; its quotient is Smith's algorithm with C99 Annex G's recovery where both parts come
out NaN (runtime_c/aotc_math.h, aotc_fmul / aotc_fdiv). Every non-NaN part must have XLA's bits,
signed zeros included; NaNs must be in the same places (their payloads and signs are not
compared: aotc's NaN results are C's quiet NaN, see aotc__cq).

Measured before the fused forms (products rounded apart, Smith's algorithm without the corner
cases): of these 42,512 pairs 98% of product parts and 86% of quotient parts had XLA's bits, NaNs
in other places at the edges; now all of them.

Complex reductions and dots accumulate in aotc's order (a serial sum of fused products), XLA's
differs: each part within a tolerance of the output's largest magnitude. Measured on the cases
below (rows of 256 with |z| near 1): sum 16-22% of parts bit-equal, at most 1.3 eps; product
6-9%, at most 8.2 eps; dot 6-8%, at most 3.9 eps. Separate dots of random normal values, share
bit-equal and worst error in eps of the largest output: [1,8]x[8,1] 50% (0.9), [4,8]x[8,4] 28%
(0.6), [8,32]x[32,8] 12-16% (2.2), [1,300]x[300,1] 0% (3.2), [64,64]x[64,64] 14% (3.1): XLA:CPU
sums complex dots in another order than a serial loop even at these sizes.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

from .complex_values import EDGE32 as _EDGE32, EDGE64 as _EDGE64, N as _N, pack as _pack


def _operands(dtype, real_dtype, edge, max_exp: float, seed: int) -> list[np.ndarray]:
    """x, y: _N random pairs (a quarter moderate, the rest of every magnitude and sign; some
    with a zero part), then every pair of edge values."""
    rng = np.random.default_rng(seed)
    e = np.asarray(edge, np.float64)
    ev_re, ev_im = np.repeat(e, e.size), np.tile(e, e.size)  # every edge value
    m = ev_re.size
    out = []
    for which in range(2):
        parts = np.exp(rng.uniform(-max_exp, max_exp, (2, _N))) * rng.choice([-1.0, 1.0], (2, _N))
        q = _N // 4
        parts[:, :q] = rng.standard_normal((2, q)) * 3
        parts[which, q:q + q // 4] = 0.0
        idx_re = np.repeat(np.arange(m), m) if which == 0 else np.tile(np.arange(m), m)
        with np.errstate(over="ignore"):
            out.append(_pack(np.concatenate([parts[0], ev_re[idx_re]]).astype(real_dtype),
                             np.concatenate([parts[1], ev_im[idx_re]]).astype(real_dtype), dtype))
    return out


def _module(name: str, t: str, n: int) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = {t}[{n}] parameter(0)
  y = {t}[{n}] parameter(1)
  m = {t}[{n}] multiply(x, y)
  d = {t}[{n}] divide(x, y)
  ROOT r = ({t}[{n}], {t}[{n}]) tuple(m, d)
}}
"""


def _reduce_module(name: str, t: str, rows: int, cols: int) -> str:
    return f"""HloModule {name}
add {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT r = {t}[] add(a, b)
}}
mul {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT r = {t}[] multiply(a, b)
}}
ENTRY main {{
  x = {t}[{rows},{cols}] parameter(0)
  y = {t}[{cols},{rows}] parameter(1)
  zero = {t}[] constant((0, 0))
  one = {t}[] constant((1, 0))
  s = {t}[{rows}] reduce(x, zero), dimensions={{1}}, to_apply=add
  p = {t}[{rows}] reduce(x, one), dimensions={{1}}, to_apply=mul
  xy = {t}[{rows},{rows}] dot(x, y), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  ROOT r = ({t}[{rows}], {t}[{rows}], {t}[{rows},{rows}]) tuple(s, p, xy)
}}
"""


def _near_one(shape, dtype, seed: int) -> np.ndarray:
    """Values of modulus near 1, so a product of a row neither overflows nor underflows."""
    rng = np.random.default_rng(seed)
    r = np.exp(rng.uniform(-0.05, 0.05, shape))
    a = rng.uniform(-np.pi, np.pi, shape)
    return (r * np.cos(a) + 1j * r * np.sin(a)).astype(dtype)


_X64, _Y64 = _operands(np.complex64, np.float32, _EDGE32, 88.0, 81)
_X128, _Y128 = _operands(np.complex128, np.float64, _EDGE64, 709.0, 82)
_R, _C = 16, 256
CASES = {
    "complex_muldiv_c64": (_module("complex_muldiv_c64", "c64", _X64.size), [_X64, _Y64], 0.0),
    "complex_muldiv_c128": (_module("complex_muldiv_c128", "c128", _X128.size), [_X128, _Y128], 0.0),
    "complex_reduce_dot_c64": (_reduce_module("complex_reduce_dot_c64", "c64", _R, _C),
                               [_near_one((_R, _C), np.complex64, 83), _near_one((_C, _R), np.complex64, 84)],
                               2e-6),
    "complex_reduce_dot_c128": (_reduce_module("complex_reduce_dot_c128", "c128", _R, _C),
                                [_near_one((_R, _C), np.complex128, 85), _near_one((_C, _R), np.complex128, 86)],
                                4e-15),
}


def assert_same_bits(got, want, what: str) -> None:
    """Every part with XLA's bits, NaNs in the same places (NaN bits not compared)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, f"{what}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
    gp, wp = g.view(g.real.dtype), w.view(w.real.dtype)
    np.testing.assert_array_equal(np.isnan(gp), np.isnan(wp), err_msg=f"{what}: NaN positions")
    keep = ~np.isnan(wp)
    ut = gp.dtype.str.replace("f", "u")
    bad = gp[keep].view(ut) != wp[keep].view(ut)
    assert not bad.any(), (f"{what}: {int(bad.sum())} of {int(keep.sum())} parts differ from XLA's bits, "
                           f"e.g. got {gp[keep][bad][:4]} want {wp[keep][bad][:4]} at part index "
                           f"{np.flatnonzero(keep)[bad][:4]}")


@pytest.mark.parametrize("name", ["complex_muldiv_c64", "complex_muldiv_c128"])
def test_elementwise_bits(name, workdir):
    from .conftest import load_case, run_hlo_text

    text, _, _ = CASES[name]
    inputs, expected = load_case(name)
    got = run_hlo_text(text, inputs, workdir, name)
    for k, (g, w) in enumerate(zip(got, expected)):
        assert_same_bits(g, w, f"{name} output {('multiply', 'divide')[k]}")


@pytest.mark.parametrize("name", ["complex_reduce_dot_c64", "complex_reduce_dot_c128"])
def test_reductions_close(name, workdir):
    """Complex sum and product over rows of 256 and a 16x256x16 dot: aotc accumulates in its own
    order, so each part is within the case's tolerance of the output's largest magnitude."""
    from .conftest import assert_matches, load_case, run_hlo_text

    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    got = run_hlo_text(text, inputs, workdir, name)
    for k, (g, w) in enumerate(zip(got, expected)):
        assert_matches(np.asarray(g), w, rtol, f"{name} output {k}")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["complex_muldiv_c64", "complex_muldiv_c128"])
def test_same_bits_whatever_flags(name, workdir):
    """gcc and clang at -O0, -O3 and -O3 -march=native give the same bits, NaNs included, and
    XLA's bits (where gcc would otherwise fuse a complex product into fmaddsub)."""
    from .complex_values import assert_one_result, builds
    from .conftest import load_case

    text, _, _ = CASES[name]
    inputs, expected = load_case(name)
    runs = list(builds(text, inputs, workdir, name))
    for cmd, got in runs:
        for k, (g, w) in enumerate(zip(got, expected)):
            assert_same_bits(g, w, f"{name} output {k} ({cmd})")
    assert_one_result(runs, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["complex_muldiv_c64", "complex_muldiv_c128"])
def test_asan(name, workdir):
    """Built with AddressSanitizer and UBSan (a report aborts the run): still XLA's bits."""
    from .conftest import load_case, run_hlo_text_asan

    text, _, _ = CASES[name]
    inputs, expected = load_case(name)
    got = run_hlo_text_asan(text, inputs, workdir, name)
    for k, (g, w) in enumerate(zip(got, expected)):
        assert_same_bits(g, w, f"{name} output {k}")

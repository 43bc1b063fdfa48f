"""Cholesky of f16, bf16, the f8 types and f4e2m1fn against XLA:CPU, which expands it into
one loop of n trips (for n <= 128): an f32 dot of the factor so far with itself, its result
rounded to the type and subtracted from the matrix, `1/sqrt` of the pivot and the column
scaled by it, every step in the type except bf16's reciprocal, kept in f32 (runtime_c/aotc_linalg.c, `AOTC__LA_HALF_CHOL`).
n = 8, 33, 64, 128 (the largest unblocked size), lower and upper, batched, and a batch with
one indefinite matrix (that matrix all NaN). The f8 and f4 types compute in f16 and narrow
every result (through f16) to the type, except the pivot's sqrt and reciprocal, which stay
f16. f8e8m0fnu, which XLA:CPU computes in f32, is the root of a 1x1 matrix (every code, the
f32-subnormal 2^-127 read as zero) and NaN for every larger one: the expansion's zeros, which
that type cannot hold, enter every dot.

Bits are compared exactly. The products in the dot are exact in f32 (half values), and its
sums of at most n-1 of them round far below the type's step, so the order of summation
(aotc sums k ascending) only matters where an f32 sum lies on a rounding boundary of the
type; the well-conditioned inputs here hit none. Larger matrices, which XLA:CPU factors
blocked (block size 128), are refused with a located error.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from aotc.errors import AotcError
from .conftest import load_case, run_hlo_text

_NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}
_NARROW = {"f8e3m4": ml_dtypes.float8_e3m4, "f8e4m3": ml_dtypes.float8_e4m3, "f8e4m3fn": ml_dtypes.float8_e4m3fn,
           "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
           "f8e5m2": ml_dtypes.float8_e5m2, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
           "f4e2m1fn": ml_dtypes.float4_e2m1fn}
_ALL = {**_NP, **_NARROW}


def _spd(t: str, batch: tuple, n: int, seed: int) -> np.ndarray:
    """Well-conditioned symmetric positive definite matrices, rounded to the type."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((*batch, n, n)) / np.sqrt(n)
    a = g @ np.swapaxes(g, -1, -2) + np.eye(n) * 1.5
    return a.astype(np.float32).astype(_ALL[t])


def _chol(name: str, t: str, dims: tuple, lower: bool) -> str:
    shape = f"{t}[{','.join(map(str, dims))}]"
    return f"""HloModule {name}
ENTRY main {{
  a = {shape} parameter(0)
  ROOT c = {shape} cholesky(a), lower={'true' if lower else 'false'}
}}
"""


CASES = {}
for _k, _t in enumerate(_NP):
    for _n in (8, 33, 64, 128):
        for _lower in (True, False):
            _name = f"narrow_chol_{_t}_{_n}_{'lower' if _lower else 'upper'}"
            CASES[_name] = (_chol(_name, _t, (_n, _n), _lower), [_spd(_t, (), _n, 100 * _k + _n + _lower)], 0.0)
    _name = f"narrow_chol_{_t}_batched"
    CASES[_name] = (_chol(_name, _t, (3, 2, 17, 17), True), [_spd(_t, (3, 2), 17, 7 + _k)], 0.0)
    # not positive definite in one matrix of the batch: that matrix all NaN, as XLA
    _bad = _spd(_t, (2,), 9, 9 + _k)
    _bad[1, 4, 4] = -3.0
    _name = f"narrow_chol_{_t}_indefinite"
    CASES[_name] = (_chol(_name, _t, (2, 9, 9), True), [_bad], 0.0)


for _k, _t in enumerate(_NARROW):
    for _n, _lower in ((8, True), (33, False), (64, True)):
        _name = f"narrow_chol_{_t}_{_n}_{'lower' if _lower else 'upper'}"
        CASES[_name] = (_chol(_name, _t, (_n, _n), _lower), [_spd(_t, (), _n, 300 + 10 * _k + _n)], 0.0)
    _bad = _spd(_t, (2,), 9, 500 + _k)
    _bad[1, 4, 4] = -3.0
    _name = f"narrow_chol_{_t}_indefinite"
    CASES[_name] = (_chol(_name, _t, (2, 9, 9), True), [_bad], 0.0)


_E8M0 = ml_dtypes.float8_e8m0fnu
_codes = np.arange(256, dtype=np.uint8).view(_E8M0)
CASES["narrow_chol_f8e8m0fnu_1x1_every_code"] = (_chol("e8m0_1", "f8e8m0fnu", (256, 1, 1), True),
                                                 [_codes.reshape(256, 1, 1)], 0.0)
for _n, _lower in ((2, True), (3, False), (8, True)):
    # powers of two on a dominant diagonal: positive definite in f32, NaN in this type
    _a = np.full((2, _n, _n), 0.25) + np.eye(_n) * 4.0
    _name = f"narrow_chol_f8e8m0fnu_{_n}_{'lower' if _lower else 'upper'}"
    CASES[_name] = (_chol(_name, "f8e8m0fnu", (2, _n, _n), _lower), [_a.astype(_E8M0)], 0.0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_narrow_cholesky_matches_xla_bits(name, workdir):
    inputs, (want,) = load_case(name)
    (got,) = run_hlo_text(CASES[name][0], inputs, workdir, name)
    u = np.uint16 if np.asarray(want).dtype.itemsize == 2 else np.uint8
    g, w = np.asarray(got).view(u), np.asarray(want).view(u)
    bad = np.nonzero(g.reshape(-1) != w.reshape(-1))[0]
    assert bad.size == 0, f"{name}: {bad.size} of {g.size} differ, first at {bad[:4].tolist()}: " \
                          f"aotc {g.reshape(-1)[bad[:4]].tolist()} xla {w.reshape(-1)[bad[:4]].tolist()}"


@pytest.mark.parametrize("t", ["bf16", "f16", "f8e4m3fn"])
def test_blocked_narrow_cholesky_is_refused(t, workdir):
    text = _chol("big", t, (130, 130), True)
    with pytest.raises(AotcError, match=r"cholesky c: .*larger than 128x128"):
        run_hlo_text(text, [_spd(t, (), 130, 1)], workdir, "big")


_CLANG_CASES = ["narrow_chol_f16_64_upper", "narrow_chol_bf16_batched", "narrow_chol_f8e4m3fn_33_upper",
                "narrow_chol_f4e2m1fn_indefinite", "narrow_chol_f8e8m0fnu_1x1_every_code"]


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("name", _CLANG_CASES)
def test_narrow_cholesky_o3_native(name, cc, workdir):
    """gcc and clang at -O3 -march=native (warning-free under -Werror) give XLA's bits too."""
    import shutil

    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    inputs, (want,) = load_case(name)
    cmd = (cc, "-std=c11", "-O3", "-march=native", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC")
    (got,) = run_hlo_text(CASES[name][0], inputs, workdir, f"{name}_{cc}", build_cmd=cmd)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), name


@pytest.mark.slow
@pytest.mark.parametrize("name", ["narrow_chol_f16_batched", "narrow_chol_f8e5m2_indefinite"])
def test_narrow_cholesky_asan(name, workdir):
    """Built with AddressSanitizer and UBSan (a report aborts the run)."""
    from .conftest import run_hlo_text_asan

    inputs, (want,) = load_case(name)
    (got,) = run_hlo_text_asan(CASES[name][0], inputs, workdir, name)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), name

"""triangular-solve of f16, bf16, the f8 types and f4e2m1fn against XLA:CPU, which expands
it (for matrices up to 128x128, one diagonal block) into the inverse of the triangle: the
reciprocal of the diagonal, the triangle scaled by it, its inverse built row by row (f32
dots rounded to the type), the inverse scaled back, then one f32 dot with b rounded to the
type (runtime_c/aotc_linalg.c, `AOTC__LA_TRSOLVE`). The f8 and f4 types compute in f16 and
narrow every result (through f16) to the type, except the reciprocal, which stays f16; bf16
keeps its reciprocal in f32, and f8e8m0fnu computes in f32 (its negations make NaN, so
XLA's solution is all NaN beyond 1x1).

Every combination of left_side, lower, transpose_a (NO_TRANSPOSE, TRANSPOSE and ADJOINT,
the same for real types) and unit_diagonal at n = 8; larger orders (33, 64, 128) and batches
over a rotation of the combinations. Inputs are diagonally dominant with the other triangle
filled with noise (which the op must ignore). Bits are compared exactly; larger matrices,
which XLA:CPU solves blockwise (block size 128), are refused with a located error.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from aotc.errors import AotcError
from .conftest import load_case, run_hlo_text

_HALF = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}
_NARROW = {"f8e3m4": ml_dtypes.float8_e3m4, "f8e4m3": ml_dtypes.float8_e4m3, "f8e4m3fn": ml_dtypes.float8_e4m3fn,
           "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
           "f8e5m2": ml_dtypes.float8_e5m2, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
           "f4e2m1fn": ml_dtypes.float4_e2m1fn}
_ALL = {**_HALF, **_NARROW}
# (left_side, lower, transpose_a, unit_diagonal)
_COMBOS = list(itertools.product((True, False), (True, False), ("NO_TRANSPOSE", "TRANSPOSE"), (False, True)))


def _tri(t: str, batch: tuple, k: int, seed: int) -> np.ndarray:
    """Diagonally dominant matrices (both triangles filled), rounded to the type."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, k, k)) * (0.5 / np.sqrt(k))
    d = (1.5 + rng.random((*batch, k))) * rng.choice((-1.0, 1.0), (*batch, k))
    a = a + d[..., None] * np.eye(k)
    return a.astype(np.float32).astype(_ALL[t])


def _rhs(t: str, shape: tuple, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32).astype(_ALL[t])


def _text(name: str, t: str, adims: tuple, bdims: tuple, combo: tuple) -> str:
    left, lower, trans, unit = combo
    f = lambda d: f"{t}[{','.join(map(str, d))}]"  # noqa: E731
    tf = lambda v: "true" if v else "false"  # noqa: E731
    return f"""HloModule {name}
ENTRY main {{
  a = {f(adims)} parameter(0)
  b = {f(bdims)} parameter(1)
  ROOT x = {f(bdims)} triangular-solve(a, b), left_side={tf(left)}, lower={tf(lower)}, transpose_a={trans}, unit_diagonal={tf(unit)}
}}
"""


def _tag(combo: tuple) -> str:
    left, lower, trans, unit = combo
    return f"{'l' if left else 'r'}{'lo' if lower else 'up'}{'t' if trans != 'NO_TRANSPOSE' else 'n'}{'u' if unit else 'd'}"


def _case(t: str, batch: tuple, k: int, combo: tuple, seed: int, other: int = 5):
    bdims = (*batch, k, other) if combo[0] else (*batch, other, k)
    name = f"narrow_trs_{t}_{k}_{_tag(combo)}{'_b' if batch else ''}"
    return name, (_text(name, t, (*batch, k, k), bdims, combo), [_tri(t, batch, k, seed), _rhs(t, bdims, seed + 1)], 0.0)


CASES = {}
for _i, _t in enumerate(_ALL):
    _combos = _COMBOS if _t in _HALF else _COMBOS[_i % 2::2]
    for _j, _c in enumerate(_combos):
        _name, _v = _case(_t, (), 8, _c, 1000 * _i + _j)
        CASES[_name] = _v
    _sizes = (33, 64, 128) if _t in _HALF else (33,)
    for _s, _k in enumerate(_sizes):
        for _j in range(4 if _t in _HALF else 2):
            _c = _COMBOS[(4 * _s + _j + 3 * _i) % len(_COMBOS)]
            _name, _v = _case(_t, (), _k, _c, 1000 * _i + 100 * _s + 17 * _j + 50, other=7 + _j)
            CASES[_name] = _v
    _name, _v = _case(_t, (2, 3), 12, _COMBOS[(5 * _i + 1) % len(_COMBOS)], 1000 * _i + 900)
    CASES[_name] = _v
# f8e8m0fnu (no zero, no sign) computes in f32; XLA's expansion negates, so for k > 1 every
# element is NaN; k = 1 is a scaled product
for _j, _c in enumerate(_COMBOS[::3]):
    for _k in (1, 8):
        _name, _v = _case("f16", (), _k, _c, 5000 + 10 * _j + _k)
        _name = _name.replace("f16", "f8e8m0fnu")
        _ins = [np.abs(x.astype(np.float32)).astype(ml_dtypes.float8_e8m0fnu) for x in _v[1]]
        CASES[_name] = (_v[0].replace("f16", "f8e8m0fnu"), _ins, 0.0)
# ADJOINT is TRANSPOSE for real types
_n, _v = _case("f16", (), 8, (True, False, "ADJOINT", False), 77)
CASES[_n.replace("upt", "upa")] = (_v[0].replace(_n, _n.replace("upt", "upa")), _v[1], 0.0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_narrow_trsolve_matches_xla_bits(name, workdir):
    inputs, (want,) = load_case(name)
    (got,) = run_hlo_text(CASES[name][0], inputs, workdir, name)
    u = np.uint16 if np.asarray(want).dtype.itemsize == 2 else np.uint8
    g, w = np.asarray(got).view(u), np.asarray(want).view(u)
    bad = np.nonzero(g.reshape(-1) != w.reshape(-1))[0]
    assert bad.size == 0, f"{name}: {bad.size} of {g.size} differ, first at {bad[:4].tolist()}: " \
                          f"aotc {g.reshape(-1)[bad[:4]].tolist()} xla {w.reshape(-1)[bad[:4]].tolist()}"


@pytest.mark.parametrize("t", ["bf16", "f16", "f8e5m2"])
def test_blocked_narrow_trsolve_is_refused(t, workdir):
    combo = (True, True, "NO_TRANSPOSE", False)
    text = _text("big", t, (130, 130), (130, 3), combo)
    with pytest.raises(AotcError, match=r"triangular-solve x: .*larger than 128x128"):
        run_hlo_text(text, [_tri(t, (), 130, 1), _rhs(t, (130, 3), 2)], workdir, "big")


_CLANG_CASES = ["narrow_trs_f16_128_rlotu", "narrow_trs_bf16_12_luptd_b", "narrow_trs_f8e4m3fn_8_rupnd",
                "narrow_trs_f4e2m1fn_12_ruptd_b"]


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("name", _CLANG_CASES)
def test_narrow_trsolve_o3_native(name, cc, workdir):
    """gcc and clang at -O3 -march=native (warning-free under -Werror) give XLA's bits too."""
    import shutil

    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    inputs, (want,) = load_case(name)
    cmd = (cc, "-std=c11", "-O3", "-march=native", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC")
    (got,) = run_hlo_text(CASES[name][0], inputs, workdir, f"{name}_{cc}", build_cmd=cmd)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), name


@pytest.mark.slow
@pytest.mark.parametrize("name", ["narrow_trs_f16_12_llonu_b", "narrow_trs_f8e5m2_33_luptd"])
def test_narrow_trsolve_asan(name, workdir):
    """Built with AddressSanitizer and UBSan (a report aborts the run)."""
    from .conftest import run_hlo_text_asan

    inputs, (want,) = load_case(name)
    (got,) = run_hlo_text_asan(CASES[name][0], inputs, workdir, name)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), name

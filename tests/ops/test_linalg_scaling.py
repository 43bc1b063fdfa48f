"""The LAPACK drivers' scaling of a matrix whose largest entry is near overflow or underflow.

?geev, ?gees and ?gesdd scale a matrix whose largest magnitude is below sqrt(safmin) / eps or
above its inverse (2^-40 and 2^40 in f32, 2^-459 and 2^459 in f64) into that range first, ?syevd
and ?heevd one beyond sqrt(safmin / eps) or its inverse, and scale the eigenvalues, the Schur
form or the singular values back. Without it, squares overflow (NaN eigenvalues from eigh at
2^100 in f32) or lose every digit to underflow.

The oracle is XLA on the same matrix at a moderate scale: each case's fixture input B (from
gen_linalg.py, XLA:CPU's outputs for it) is run by aotc as A = 2^k B, and aotc's outputs times
2^-k (exact) are checked against XLA's for B with the op table's checks. XLA's own result for A
is not used: the OpenBLAS build SciPy 1.17 ships (which jaxlib calls) returns ?geev's
eigenvalues of the scaled matrix without scaling them back (2^40 / |A| times too small).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.ops.conftest import run_hlo_text
from tests.ops.linalg_cases import CASES as LINALG_CASES
from tests.ops.test_linalg import _split, check, load

# the outputs that scale with A (eigenvalues, T, singular values); the others are unit vectors
_SCALED = {"eig": (0,), "eigvals": (0,), "eig_left": (0,), "eigh": (0,), "eigvalsh": (0,), "schur": (0,),
           "schur_complex": (0,), "svd_full": (1,), "svd_values": (0,)}
_NAMES = ["eig_f32_17x17", "eig_f64_17x17", "eig_c64_17x17", "eig_c128_17x17", "eig_left_f64_17x17",
          "eigvals_f32_64x64", "schur_f32_17x17", "schur_f64_17x17", "schur_complex_c64_17x17",
          "schur_complex_c128_17x17", "eigh_f32_17x17", "eigh_c128_17x17", "eigvalsh_f64_17x17",
          "svd_full_f32_17x17", "svd_full_c128_17x17", "svd_values_f64_17x17", "svd_full_f64_7x4"]
# far beyond every threshold: unscaled, squares overflow (or underflow) in both types
_EXPONENTS = {"f32": (100, -100), "f64": (900, -900), "c64": (100, -100), "c128": (900, -900)}


@pytest.mark.parametrize("k", ["up", "down"])
@pytest.mark.parametrize("name", _NAMES)
def test_extreme_scale(name, k, workdir):
    case = LINALG_CASES[name]
    z = load(name)
    ins, want = _split(z)
    e = _EXPONENTS[case.dtype][0 if k == "up" else 1]
    a = ins[0] * ins[0].dtype.type(2.0 ** e)
    assert np.all(np.isfinite(a)) and np.array_equal(a * ins[0].dtype.type(2.0 ** -e), ins[0])
    got = run_hlo_text(str(z["hlo_pre"]), [a], workdir, f"{name}_{k}")
    back = [g * g.dtype.type(2.0 ** -e) if i in _SCALED[case.fn] else g for i, g in enumerate(got)]
    # "extreme": eigenvalues paired with XLA's by nearness, not by order (the scaled matrix rounds
    # otherwise, so a near-tie may deflate in another order)
    check(f"{name}_{k}", dataclasses.replace(case, kind="extreme"), ins, back, want)

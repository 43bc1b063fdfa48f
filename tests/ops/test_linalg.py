"""jnp.linalg and jax.scipy.linalg against XLA:CPU: the LAPACK custom calls (getrf, potrf,
trsm, geqrf, orgqr/ungqr, syevd/heevd, gesdd, geev, gees) and the cholesky and triangular-solve ops.

Every case of linalg_cases.py is compiled from JAX's pre-optimization HLO and from XLA's
post-optimization HLO, run (gcc -O1, UBSan) on the stored inputs, and compared with the
outputs XLA:CPU computed (tests/ops/data/linalg, written by gen_linalg.py). Tolerances are
LAPACK's error bounds: a result whose error grows with the condition number is within
4 n eps cond(A) of XLA's, relative to the output's largest magnitude; eigenvalues and
singular values within 4 n eps |A|. Eigenvectors and singular vectors are unique only up
to a phase, so they are checked through A v = lambda v, A = U S V^H and orthonormality, and
then compared with XLA's after a sign/phase normalization. Pivots, info, ranks, and where
XLA puts NaNs and infinities are compared exactly.
"""
from __future__ import annotations

import ctypes
import subprocess
from math import prod
from pathlib import Path

import numpy as np
import pytest

from tests.ops.conftest import run_hlo_text, run_hlo_text_asan
from tests.ops.linalg_cases import CASES as LINALG_CASES
from tests.ops.linalg_cases import HLO_OPS

DATA = Path(__file__).resolve().parent / "data" / "linalg"


def load(name: str) -> dict[str, np.ndarray]:
    path = DATA / f"{name}.npz"
    if not path.exists():
        pytest.fail(f"{path} is missing: run python tests/ops/gen_linalg.py {name}")
    z = np.load(path)
    return {k: z[k] for k in z.files}


def _split(z) -> tuple[list[np.ndarray], list[np.ndarray]]:
    ins = [z[f"in{k}"] for k in range(sum(1 for n in z if n.startswith("in")))]
    outs = [z[f"out{k}"] for k in range(sum(1 for n in z if n.startswith("out")))]
    return ins, outs


def _eps(a: np.ndarray) -> float:
    return float(np.finfo(a.real.dtype).eps)


def _cond(a: np.ndarray) -> float:
    """The largest 2-norm condition number of the batch (only to size a tolerance)."""
    with np.errstate(all="ignore"):
        c = np.linalg.cond(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    c = np.asarray(c, np.float64)
    return float(np.max(np.where(np.isfinite(c), c, np.inf))) if c.size else 1.0


def close(got: np.ndarray, want: np.ndarray, tol: float, what: str, floor: float = 0.0) -> None:
    """Same shape; NaN and infinities where XLA has them; integers exactly; finite values
    within tol times the largest finite magnitude of the expected output."""
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    got, want = np.atleast_1d(got), np.atleast_1d(want)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    g = got.view(got.real.dtype) if got.dtype.kind == "c" else got
    w = want.view(want.real.dtype) if want.dtype.kind == "c" else want
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{what}: NaN positions")
    np.testing.assert_array_equal(np.isinf(g), np.isinf(w), err_msg=f"{what}: infinite positions")
    fin = np.isfinite(w)
    np.testing.assert_array_equal(g[np.isinf(w)], w[np.isinf(w)], err_msg=f"{what}: infinities")
    scale = max(float(np.max(np.abs(w[fin]))) if fin.any() else 0.0, floor)
    err = np.abs(g[fin].astype(np.float64) - w[fin].astype(np.float64))
    assert err.size == 0 or err.max() <= tol * max(scale, 1e-300), \
        f"{what}: max error {err.max():.3g} > {tol:.3g} * {scale:.3g}"


def _phase(x: np.ndarray, axis: int) -> np.ndarray:
    """Per vector along `axis`: the phase that makes its largest entry real positive."""
    idx = np.expand_dims(np.argmax(np.abs(x), axis=axis), axis)
    top = np.take_along_axis(x, idx, axis)
    return np.where(top == 0, 1, top / np.abs(np.where(top == 0, 1, top)))


def _herm(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x.conj(), -1, -2)


def _distinct(vals: np.ndarray, gap: float) -> np.ndarray:
    """Per value (last axis): whether it is separated from its neighbours by more than gap."""
    d = np.diff(vals, axis=-1)
    left = np.concatenate([np.full(vals.shape[:-1] + (1,), np.inf), np.abs(d)], -1)
    right = np.concatenate([np.abs(d), np.full(vals.shape[:-1] + (1,), np.inf)], -1)
    return np.minimum(left, right) > gap


def check_eigh(a: np.ndarray, got, want, name: str) -> None:
    n = a.shape[-1]
    tol = 4 * n * _eps(a)
    norm = float(np.max(np.abs(np.linalg.eigvalsh(a.astype(np.complex128)))))
    w, v = got
    close(w, want[0], tol, f"{name}: eigenvalues")
    A = a.astype(np.complex128)
    V = v.astype(np.complex128)
    assert np.max(np.abs(A @ V - V * w[..., None, :])) <= tol * norm * 4, f"{name}: A v != lambda v"
    assert np.max(np.abs(_herm(V) @ V - np.eye(n))) <= tol * 4, f"{name}: eigenvectors not orthonormal"
    # each vector with its largest entry real positive; compared where the eigenvalue is isolated
    sep = _distinct(want[0].astype(np.float64), 1e3 * tol * norm)
    Vn = V / _phase(V, -2)
    Xn = want[1].astype(np.complex128) / _phase(want[1].astype(np.complex128), -2)
    gap = np.min(np.abs(np.diff(want[0].astype(np.float64), axis=-1))) if n > 1 else norm
    vtol = tol * 4 * norm / max(gap, tol * norm)
    diff = np.abs(Vn - Xn).max(axis=-2)
    assert np.all(diff[sep] <= max(vtol, 1e3 * tol)), f"{name}: normalized eigenvectors differ by {diff[sep].max()}"


def check_svd(a: np.ndarray, got, want, name: str) -> None:
    m, n = a.shape[-2:]
    tol = 4 * max(m, n) * _eps(a)
    if len(want) == 1:
        close(got[0], want[0], tol, f"{name}: singular values")
        return
    u, s, vh = got
    close(s, want[1], tol, f"{name}: singular values")
    smax = float(np.max(s)) if s.size else 1.0
    k = s.shape[-1]
    U, VH = u.astype(np.complex128), vh.astype(np.complex128)
    rec = (U[..., :, :k] * s[..., None, :]) @ VH[..., :k, :]
    assert np.max(np.abs(rec - a)) <= 4 * tol * smax, f"{name}: U S V^H != A"
    assert np.max(np.abs(_herm(U) @ U - np.eye(U.shape[-1]))) <= 4 * tol, f"{name}: U not orthonormal"
    assert np.max(np.abs(VH @ _herm(VH) - np.eye(VH.shape[-2]))) <= 4 * tol, f"{name}: V not orthonormal"
    sep = _distinct(want[1].astype(np.float64), 1e3 * tol * smax) & (want[1] > 1e3 * tol * smax)
    ph_g, ph_w = _phase(U[..., :, :k], -2), _phase(want[0].astype(np.complex128)[..., :, :k], -2)
    du = np.abs(U[..., :, :k] / ph_g - want[0][..., :, :k] / ph_w).max(axis=-2)
    dv = np.abs(VH[..., :k, :] * ph_g.swapaxes(-1, -2) - want[2][..., :k, :] * ph_w.swapaxes(-1, -2)).max(axis=-1)
    assert np.all(du[sep] <= 1e4 * tol) and np.all(dv[sep] <= 1e4 * tol), f"{name}: normalized singular vectors differ"


def _pairing(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """For each of XLA's eigenvalues (in its order), the index of aotc's nearest one not taken yet."""
    free, out = list(range(len(got))), []
    for x in want:
        j = min(free, key=lambda k: abs(complex(got[k]) - complex(x)))
        free.remove(j)
        out.append(j)
    return np.array(out, np.int64)


def _check_real_spectrum(w: np.ndarray, vecs: list[np.ndarray], what: str) -> None:
    """A real matrix's eigenvalues as LAPACK's dgeev gives them: each real (imaginary part
    exactly 0, with a real eigenvector) or one of an exactly conjugate pair, the positive
    imaginary part first, whose eigenvectors are exact conjugates."""
    k = 0
    while k < len(w):
        if w[k].imag == 0:
            assert all(np.all(v[:, k].imag == 0) for v in vecs), f"{what}: eigenvector {k} of a real eigenvalue is not real"
            k += 1
            continue
        assert k + 1 < len(w) and w[k].imag > 0 and w[k + 1] == np.conj(w[k]), f"{what}: eigenvalue {k} has no conjugate after it"
        assert all(np.array_equal(v[:, k + 1], np.conj(v[:, k])) for v in vecs), f"{what}: vectors {k}, {k + 1} not conjugate"
        k += 2


# input kinds whose eigenvalues come in XLA's order (distinct ones; balanced as ?gebal does)
ORDERED = ("general", "scaled", "isolated", "companion", "quasi")

# Past 75 x 75 LAPACK's ?hseqr runs the multishift QR (?laqr0), which aotc runs step by step too
# (the same bits as reference LAPACK built with reference BLAS), but which eigenvalue deflates
# where then follows the rounding of the BLAS kernels: XLA's own order changes with the CPU kernels
# OpenBLAS picks (scipy's eigvals of 10 random matrices under OPENBLAS_CORETYPE=Haswell and SkylakeX
# keep the order for 8, 7, 7, 1 and 0 at n = 76, 100, 128, 200, 300), and so do the signs of the
# Schur vectors. These fixtures' order, as XLA gave it where they were made, is asserted; the
# other large cases are checked by their eigenvalues, residuals and normalized vectors.
ORDERED_LARGE = ("eig_f64_76x76", "eig_f64_100x100", "eigvals_f64_2x90x90_scaled", "eigvals_f64_100x100_isolated",
                 "schur_f64_100x100", "schur_f64_100x100_isolated")


def _in_order(name: str, kind: str, n: int, single: bool) -> bool:
    """Whether aotc's eigenvalues must come in XLA's order (see ORDERED_LARGE): up to 75 x 75 for
    distinct eigenvalues (17 x 17 in f32 and c64, where rounding in the Hessenberg reduction may
    change which deflates first), beyond it the listed fixtures."""
    if n > 75:
        return name in ORDERED_LARGE
    return kind in ORDERED and n <= (17 if single else 75)


def check_eig(a: np.ndarray, got, want, name: str, kind: str) -> None:
    """geev: aotc's eigenvalues are paired with XLA's (nearest first). aotc runs LAPACK's QR
    steps (zlahqr for complex matrices, dlahqr's real double-shift QR for real ones, ?laqr0's
    multishift QR past 75 x 75) and finds them in XLA's order, asserted as _in_order says
    (repeated eigenvalues have no order). Real matrices give exactly real
    eigenvalues (imaginary part 0) and exactly conjugate pairs with conjugate vectors, as XLA. Then
    eigenvalues within 8 n eps |A| kappa(V) (Bauer-Fike; sqrt(eps) |A| for Jordan blocks),
    residuals |A v - lambda v| and |u^H A - lambda u^H| within 8 n eps |A|, unit norms, and
    each vector equal to XLA's after a phase normalization where its eigenvalue is isolated (a
    real matrix's real eigenvalue's vector without it up to 75 x 75: dgeev's sign; beyond, the
    Schur vectors' signs follow OpenBLAS's rounding, see ORDERED_LARGE). A real matrix's complex
    pair's vector has its largest component real, with dgeev's sign rule, but the sign itself
    is not compared: it depends on how many QR sweeps ran after the pair had converged, which
    rounding decides (reference LAPACK and OpenBLAS's build disagree on 11 of 200 random 5 x 5
    matrices), so it equals XLA's only where aotc's QR took XLA's LAPACK's path."""
    n = a.shape[-1]
    eps = _eps(a)
    tol = 8 * max(n, 1) * eps
    if not np.all(np.isfinite(want[0])):  # NaN input: XLA's info != 0 makes every output NaN
        for k, (g, w) in enumerate(zip(got, want)):
            close(g, w, 0.0, f"{name} output {k}")
        return
    A = a.astype(np.complex128).reshape(-1, n, n)
    outs = [g.astype(np.complex128).reshape(A.shape[0], *g.shape[-(g.ndim - a.ndim + 2):]) for g in got]
    wants = [w.astype(np.complex128).reshape(A.shape[0], *w.shape[-(w.ndim - a.ndim + 2):]) for w in want]
    for b in range(A.shape[0]):
        ab = A[b]
        norm = max(float(np.linalg.norm(ab)), 1e-300)
        wx = wants[0][b]
        perm = _pairing(outs[0][b], wx)
        if _in_order(name, kind, n, a.dtype == np.float32):
            assert np.all(perm == np.arange(n)), f"{name}[{b}]: eigenvalues in another order than XLA's: {perm}"
        if a.dtype.kind != "c":
            _check_real_spectrum(outs[0][b], [o[b] for o in outs[1:]], f"{name}[{b}]")
        wg = outs[0][b][perm]
        vx = wants[-1][b] if len(want) > 1 else np.linalg.eig(ab)[1]
        kappa = float(np.linalg.cond(vx)) if n else 1.0
        etol = np.sqrt(eps) * norm * 10 if kind == "jordan" else tol * norm * max(kappa, 1.0)
        err = np.abs(wg - wx)
        assert err.size == 0 or err.max() <= etol, f"{name}[{b}]: eigenvalues differ by {err.max():.3g} > {etol:.3g}"
        gap = np.array([min([abs(wx[i] - wx[j]) for j in range(n) if j != i] or [norm]) for i in range(n)])
        for k in range(1, len(got)):
            v = outs[k][b][:, perm]
            left = len(got) == 3 and k == 1
            res = _herm(v) @ ab - wg[:, None] * _herm(v) if left else ab @ v - v * wg[None, :]
            assert np.abs(res).max(initial=0) <= tol * norm, f"{name}[{b}] output {k}: residual {np.abs(res).max():.3g}"
            assert np.abs(np.linalg.norm(v, axis=0) - 1).max(initial=0) <= tol, f"{name}[{b}] output {k}: norms"
            x = wants[k][b]
            vn, xn = v / _phase(v, 0), x / _phase(x, 0)
            vtol = 10 * tol * norm * max(kappa, 1.0) / np.maximum(gap, 1e-300)
            iso = (gap > 1e3 * etol) & (vtol < 0.1)
            diff = np.abs(vn - xn).max(axis=0, initial=0)
            assert np.all(diff[iso] <= vtol[iso]), f"{name}[{b}] output {k}: normalized eigenvectors differ"
            if a.dtype.kind != "c" and kind in ORDERED and n <= 75:  # a real eigenvalue's vector: dgeev's sign too
                signed = iso & (wx.imag == 0)
                raw = np.abs(v - x).max(axis=0, initial=0)
                assert np.all(raw[signed] <= vtol[signed]), f"{name}[{b}] output {k}: a real eigenvector's sign"
            if a.dtype.kind != "c" and kind == "quasi":  # no QR sweep: a pair's vector has dgeev's sign too
                raw = np.abs(v - x).max(axis=0, initial=0)
                assert np.all(raw[iso] <= vtol[iso]), f"{name}[{b}] output {k}: a complex pair's vector's sign"
            if a.dtype.kind != "c":  # a pair's vector as dgeev leaves it: its largest component real
                top = np.abs(v).argmax(axis=0)
                assert np.all(v[top, np.arange(n)].imag == 0), f"{name}[{b}] output {k}: largest components not real"


def schur_values(t: np.ndarray) -> np.ndarray:
    """The eigenvalues a Schur form T shows: its diagonal, and for each 2 x 2 block of a real
    quasi-triangular T (a nonzero subdiagonal entry) the pair a +- i sqrt(|b| |c|), as LAPACK
    reads them (positive imaginary part first)."""
    n = t.shape[-1]
    out, i = [], 0
    while i < n:
        if t.dtype.kind != "c" and i + 1 < n and t[i + 1, i] != 0:
            im = np.sqrt(abs(t[i, i + 1])) * np.sqrt(abs(t[i + 1, i]))
            out += [complex(t[i, i], im), complex(t[i, i], -im)]
            i += 2
        else:
            out.append(complex(t[i, i]))
            i += 1
    return np.array(out, np.complex128)


def _check_quasi_triangular(t: np.ndarray, what: str) -> None:
    """Real Schur form: zeros below the subdiagonal, no two adjacent subdiagonal entries nonzero,
    and each 2 x 2 block in LAPACK's standard form (equal diagonal, b c < 0)."""
    n = t.shape[-1]
    assert np.all(np.tril(t, -2) == 0), f"{what}: T has entries below the subdiagonal"
    sub = np.diag(t, -1)
    for i in np.nonzero(sub)[0]:
        assert i + 1 >= len(sub) or sub[i + 1] == 0, f"{what}: 2 x 2 blocks overlap at row {i}"
        assert i == 0 or sub[i - 1] == 0, f"{what}: 2 x 2 blocks overlap at row {i}"
        assert t[i, i] == t[i + 1, i + 1] and t[i, i + 1] * t[i + 1, i] < 0, \
            f"{what}: the block at row {i} is not in standard form: {t[i:i + 2, i:i + 2]}"
    assert n == 0 or np.all(np.isfinite(t)), f"{what}: T is not finite"


def check_schur(a: np.ndarray, got, want, name: str, kind: str) -> None:
    """gees: the Schur form is not unique (it depends on the order QR finds the eigenvalues,
    on a sign or phase per Schur vector and, in the real form, on the rotation of each 2 x 2
    block), so T and Z are checked by what they are: T upper triangular (complex) or upper
    quasi-triangular in LAPACK's standard form (real), Z unitary and A = Z T Z^H within
    8 n eps |A|, and T's eigenvalues paired with those of XLA's T as check_eig's (in XLA's
    order as _in_order says: the same QR steps as LAPACK's ?lahqr and ?laqr0)."""
    n = a.shape[-1]
    eps = _eps(a)
    tol = 8 * max(n, 1) * eps
    if not np.all(np.isfinite(want[0])):
        for k, (g, w) in enumerate(zip(got, want)):
            close(g, w, 0.0, f"{name} output {k}")
        return
    real = a.dtype.kind != "c" and got[0].dtype.kind != "c"
    wide = np.float64 if real else np.complex128
    A = a.astype(wide).reshape(-1, n, n)
    T, Z = (g.astype(wide).reshape(-1, n, n) for g in got)
    TX = want[0].astype(wide).reshape(-1, n, n)
    for b in range(A.shape[0]):
        norm = max(float(np.linalg.norm(A[b])), 1e-300)
        if real:
            _check_quasi_triangular(got[0].reshape(-1, n, n)[b], f"{name}[{b}]")
        else:
            assert np.all(np.tril(T[b], -1) == 0), f"{name}[{b}]: T is not upper triangular"
        assert np.abs(_herm(Z[b]) @ Z[b] - np.eye(n)).max(initial=0) <= tol, f"{name}[{b}]: Z is not unitary"
        rec = np.abs(Z[b] @ T[b] @ _herm(Z[b]) - A[b]).max(initial=0)
        assert rec <= tol * norm, f"{name}[{b}]: Z T Z^H != A ({rec:.3g})"
        wg, wx = schur_values(T[b]), schur_values(TX[b])
        perm = _pairing(wg, wx)
        # the order QR deflates in follows rounding: in f32 past 17 x 17 aotc's Hessenberg reduction
        # (unblocked ?gehd2) and LAPACK's differ enough to change it
        if _in_order(name, kind, n, real and eps > 1e-10):
            assert np.all(perm == np.arange(n)), f"{name}[{b}]: eigenvalues in another order than XLA's: {perm}"
        kappa = float(np.linalg.cond(np.linalg.eig(A[b])[1])) if n else 1.0
        etol = np.sqrt(eps) * norm * 10 if kind == "jordan" else tol * norm * max(kappa, 1.0)
        err = np.abs(wg[perm] - wx)
        assert err.size == 0 or err.max() <= etol, f"{name}[{b}]: eigenvalues differ by {err.max():.3g} > {etol:.3g}"


def check(name: str, case, ins, got, want) -> None:
    assert len(got) == len(want), f"{name}: {len(got)} outputs, XLA gave {len(want)}"
    a = ins[0]
    if case.check == "eig":
        check_eig(a, got, want, name, case.kind)
        return
    if case.check == "schur":
        check_schur(a, got, want, name, case.kind)
        return
    if case.check == "eigh":
        check_eigh(a, got, want, name)
        return
    if case.check == "svd":
        check_svd(a, got, want, name)
        return
    n = max(a.shape[-2:])
    cond = _cond(a) if case.kind not in ("singular", "notpd") else 1.0
    tol = 4 * n * _eps(a) * max(cond, 1.0)
    for k, (g, w) in enumerate(zip(got, want)):
        # lstsq's residuals |A x - b|^2 are rounding noise when A x = b has solutions: on |b|^2's scale
        floor = float(np.max(np.abs(ins[1]))) ** 2 if case.fn == "lstsq" and k == 1 else 0.0
        close(g, w, tol, f"{name} output {k}", floor)


def _fast(name: str) -> bool:
    """The cases run by default (each compiles a C file, ~1.5 s): every function at 17 x 17 in
    f32 and c128, batched, singular and non-square (f64); the rest (sizes 1, 3, 64, 128 and the
    other types) are marked slow."""
    c = LINALG_CASES[name] if name in LINALG_CASES else None
    if c is None:  # HLO-op cases
        return "_f32_" in name and "_unit_" not in name
    if len(c.shape) > 2 or c.kind in ("singular", "notpd"):
        return True
    m, n = c.shape
    if m != n:
        return c.dtype == "f64"
    return (n == 17 and c.dtype in ("f32", "c128")) or name in LAQR_FAST


# two of the cases past 75 x 75 (LAPACK's multishift QR, ?laqr0) run by default, real and complex
LAQR_FAST = ("eig_f64_100x100", "schur_complex_c64_100x100")


def _params(names):
    return [pytest.param(n, marks=() if _fast(n) else pytest.mark.slow) for n in sorted(names)]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("linalg")


def _staged_params(cases) -> list:
    """(name, stage): JAX's text ("pre") of every case, and, in the slow step, XLA's optimized
    text ("post", where the custom-call targets and layouts are XLA's own) of every default
    case and, among the slow ones, of the largest of each (function, type): the optimized form
    depends on the function and its type, which name the LAPACK target, while the sizes and
    kinds of a function are its numerics, which the pre text reaches the same way."""
    largest: dict[tuple, str] = {}
    for n in sorted(cases):
        c = cases[n]
        key = (c.fn, c.dtype)
        if key not in largest or prod(c.shape) > prod(cases[largest[key]].shape):
            largest[key] = n
    out = []
    for n in sorted(cases):
        out.append(pytest.param(n, "pre", marks=() if _fast(n) else pytest.mark.slow, id=f"{n}-pre"))
        if _fast(n) or largest[(cases[n].fn, cases[n].dtype)] == n:  # the optimized texts: slow step
            out.append(pytest.param(n, "post", marks=pytest.mark.slow, id=f"{n}-post"))
    return out


@pytest.mark.parametrize("name,stage", _staged_params(LINALG_CASES))
def test_jax_case(name, stage, workdir):
    z = load(name)
    ins, want = _split(z)
    text = str(z[f"hlo_{stage}"])
    got = run_hlo_text(text, ins, workdir, f"{name}_{stage}")
    check(name, LINALG_CASES[name], ins, got, want)


MLIR = ["solve_f32_3x4x64x64", "svd_full_c64_4x7", "eigh_f64_17x17", "qr_complete_f64_2x3x9x5", "lu_f32_7x4",
        "cholesky_f64_2x5x5_notpd", "cho_solve_c128_17x17", "triangular_solve_right_upper_t_c64_17x17",
        "eig_c64_17x17", "schur_f64_17x17"]


@pytest.mark.parametrize("name", MLIR)
def test_stablehlo(name, workdir):
    """The StableHLO text of the case (aotc.jax's default export): the typed-FFI attributes
    come through mhlo.backend_config, operand_layouts and result_layouts."""
    z = load(name)
    ins, want = _split(z)
    got = run_hlo_text(str(z["hlo_mlir"]), ins, workdir, f"{name}_mlir")
    check(name, LINALG_CASES[name], ins, got, want)


@pytest.mark.parametrize("name", _params(HLO_OPS))
def test_hlo_op(name, workdir):
    z = load(name)
    ins, want = _split(z)
    got = run_hlo_text(str(z["hlo_pre"]), ins, workdir, name)
    a = ins[0]
    tol = 4 * a.shape[-1] * _eps(a) * (1.0 if "notpd" in name else _cond(a))
    close(got[0], want[0], tol, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["solve_f32_3x4x64x64", "svd_reduced_c128_2x3x9x5", "eigh_f32_2x3x17x17",
                                  "qr_complete_f64_2x3x9x5", "lu_f64_7x4", "cholesky_f64_2x5x5_notpd",
                                  "solve_f64_4x4_singular", "eig_f32_2x3x17x17", "eig_left_c128_2x9x9",
                                  "eig_f64_5x5_nan", "schur_complex_c128_2x3x17x17",
                                  "schur_f32_2x3x17x17", "schur_f64_9x9_jordan", "eig_left_f64_80x80",
                                  "eig_c128_100x100", "schur_f64_200x200"])
def test_asan(name, workdir):
    """Built with AddressSanitizer and UBSan: any report fails the run."""
    z = load(name)
    ins, want = _split(z)
    got = run_hlo_text_asan(str(z["hlo_post"]), ins, workdir, f"{name}_asan")
    check(name, LINALG_CASES[name], ins, got, want)


# ------------------------------------------------------------------ refusals

_TRSM = """HloModule trsm
ENTRY main {{
  a = f32[3,3]{{0,1}} parameter(0)
  b = f32[3,2]{{0,1}} parameter(1)
  ROOT x = f32[3,2]{{0,1}} custom-call(a, b), custom_call_target="{target}", {layouts}api_version=API_VERSION_TYPED_FFI, backend_config={config}
}}
"""
_LAYOUTS = "operand_layout_constraints={f32[3,3]{0,1}, f32[3,2]{0,1}}, "
_OK = "{diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}"


@pytest.mark.parametrize("target, layouts, config, message", [
    ("lapack_strsm_ffi", _LAYOUTS, "{diag = 78 : ui8, side = 76 : ui8, trans_x = 88 : ui8, uplo = 76 : ui8}",
     r"trans_x = 88 \('X'\) is not supported"),
    ("lapack_strsm_ffi", _LAYOUTS, "{diag = 78 : ui8, side = 76 : ui8, uplo = 76 : ui8}", "needs backend_config attribute 'trans_x'"),
    ("lapack_strsm_ffi", _LAYOUTS, "{diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8, alpha = 1 : ui8}",
     "attribute 'alpha', which aotc does not know"),
    ("lapack_strsm_ffi", _LAYOUTS, "{diag = N, side = L}", "cannot read backend_config entry"),
    ("lapack_strsm_ffi", "", _OK, "has no operand_layout_constraints"),
    ("lapack_strsm_ffi", "operand_layout_constraints={f32[3,3]{1,0}, f32[3,2]{0,1}}, ", _OK, r"operand 0 is constrained to layout \(1, 0\)"),
    ("lapack_dtrsm_ffi", _LAYOUTS, _OK, "target's type letter 'd' means f64"),
])
def test_refused_custom_calls(target, layouts, config, message):
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions
    text = _TRSM.format(target=target, layouts=layouts, config=config)
    with pytest.raises(AotcError, match=message) as err:
        driver.frontend("trsm.hlo", None, CompileOptions(), text=text)
    assert err.value.loc is not None and err.value.loc.line == 5


def test_gees_sorted_is_a_located_error(workdir):
    """gees with sort = 'S' (a selection function JAX never passes on CPU) is refused, located."""
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions
    text = """HloModule gees
ENTRY main {
  a = f64[3,3]{0,1} parameter(0)
  ROOT s = (f64[3,3]{0,1}, f64[3,3]{0,1}, f64[3]{0}, f64[3]{0}, s32[], s32[]) custom-call(a), custom_call_target="lapack_dgees_ffi", operand_layout_constraints={f64[3,3]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={mode = 86 : ui8, sort = 83 : ui8}
}
"""
    with pytest.raises(AotcError, match="sort") as err:
        fe = driver.frontend("gees.hlo", None, CompileOptions(), text=text)
        driver.generate(fe, str(workdir / "libgees"), CompileOptions())
    assert err.value.loc is not None and err.value.loc.line == 4


# ------------------------------------------------------------------ compilers and flags

_BUILDS = [("gcc", "-O0"), ("gcc", "-O2"), ("gcc", "-O3 -march=native"), ("clang", "-O1"), ("clang", "-O3 -march=native")]


# two cases here (a real f32 factorization, a complex eigensolver), the rest with the heavy tests
@pytest.mark.parametrize("name", ["solve_f32_17x17", "eig_c128_17x17"] + [
    pytest.param(n, marks=pytest.mark.slow)
    for n in ("eigh_c128_17x17", "svd_full_f64_7x4", "qr_complete_c64_4x7", "eig_left_f64_17x17",
              "schur_f64_200x200", "eigvals_c128_200x200")])
def test_same_bits_with_every_compiler_and_flag(name, workdir):
    """The generated C, warning-free under -Werror with gcc and clang at several -O levels,
    gives the same bits with every build (FMA contraction is off in the file)."""
    from aotc import driver
    from aotc.options import CompileOptions

    z = load(name)
    ins, want = _split(z)
    fe = driver.frontend(f"{name}.hlo", None, CompileOptions(), text=str(z["hlo_post"]))
    gen = driver.generate(fe, str(workdir / f"lib{name}_flags"), CompileOptions())
    c_path = workdir / f"lib{name}_flags.c"
    c_path.write_text(gen.c_text)
    (workdir / gen.header_name).write_text(gen.h_text)
    prog = gen.lowered.program
    by_param = {p.name: p.parameter_number for p in fe.module.entry_computation.parameters}
    results = []
    for cc, opt in _BUILDS:
        so = workdir / f"lib{name}_{cc}{opt.replace(' ', '').replace('=', '')}.so"
        build = subprocess.run([cc, "-std=c11", *opt.split(), "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                                "-o", str(so), str(c_path), "-lm", "-lpthread"], capture_output=True, text=True)
        assert build.returncode == 0, f"{cc} {opt}:\n{build.stderr[:3000]}"
        lib = ctypes.CDLL(str(so))
        args = [np.ascontiguousarray(ins[by_param[a.hlo]]) for a in prog.args]
        res = [np.zeros(r.dims, r.dtype.numpy) for r in prog.results]
        arena = np.zeros(prog.arena_bytes + 64, np.uint8)
        base = arena.ctypes.data + (-arena.ctypes.data) % 64
        a_ptrs = (ctypes.c_void_p * max(1, len(args)))(*[x.ctypes.data for x in args])
        r_ptrs = (ctypes.c_void_p * max(1, len(res)))(*[x.ctypes.data for x in res])
        rc = getattr(lib, f"{gen.name}_run_with")(a_ptrs, r_ptrs, ctypes.c_void_p(base), ctypes.c_size_t(prog.arena_bytes))
        assert rc == 0
        results.append(res)
    for other, (cc, opt) in zip(results[1:], _BUILDS[1:]):
        for k, (x, y) in enumerate(zip(results[0], other)):
            assert x.tobytes() == y.tobytes(), f"{name} output {k}: {cc} {opt} gives other bits than gcc -O0"
    check(name, LINALG_CASES[name], ins, results[0], want)

"""runtime_c/aotc_linalg.c on its own: each routine, for every element type, checked by what
its result must satisfy (P A = L U, A = L L^H, op(A) X = B, A = Q R with Q unitary,
A V = V diag(w), A = U S V^H), with LAPACK's conventions where they are fixed (pivot rows,
info, Householder signs: Q and R equal numpy's LAPACK ones). Values against XLA are in
tests/ops/test_linalg.py. Also warning-free under -Werror with gcc and clang, and n = 256
in well under a second per call at -O2.
"""
from __future__ import annotations

import ctypes
import subprocess
import time

import numpy as np
import pytest

from aotc.ops.linalg import gees_work, geev_work
from aotc.runtime_c import OPTIONAL_PARTS, RUNTIME_DIR

TYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
I64 = ctypes.c_int64


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("linalg_rt")
    src = d / "la.c"
    src.write_text('#include <math.h>\n#include <string.h>\n#include "aotc_rt.h"\n#include "aotc_linalg.c"\n#include "aotc_geev.c"\n#include "aotc_schur.c"\n')
    for cc in ("gcc", "clang"):
        r = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{RUNTIME_DIR}",
                            str(src)], capture_output=True, text=True)
        assert r.returncode == 0, f"{cc}:\n{r.stderr[:3000]}"
    so = d / "la.so"
    r = subprocess.run(["gcc", "-std=c11", "-O2", "-DAOTC_RT_API=", "-shared", "-fPIC", f"-I{RUNTIME_DIR}", "-o",
                        str(so), str(src), "-lm"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:3000]
    assert OPTIONAL_PARTS["linalg"] == ("aotc_la_", ("aotc_linalg.h", "aotc_linalg.c", "aotc_laqr5_c.c", "aotc_laqr_c.c",
                                                     "aotc_geev.c", "aotc_laqr5.c", "aotc_laqr_swap.c", "aotc_laqr.c",
                                                     "aotc_schur.c"))
    return ctypes.CDLL(str(so))


def _p(a: np.ndarray):
    return a.ctypes.data_as(ctypes.c_void_p)


def _rand(rng, shape, t):
    x = rng.standard_normal(shape)
    if t in "cz":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(TYPES[t])


def _tol(t, n):
    return 30 * n * float(np.finfo(TYPES[t]).eps)


def _real(t):
    return np.float32 if t in "sc" else np.float64


@pytest.mark.parametrize("t", "sdcz")
@pytest.mark.parametrize("m, n", [(1, 1), (5, 5), (17, 17), (9, 4), (4, 9)])
def test_getrf(lib, t, m, n):
    rng = np.random.default_rng(m * 100 + n)
    a = _rand(rng, (m, n), t)
    lu, piv, info = np.zeros_like(a), np.zeros(min(m, n), np.int32), np.zeros(1, np.int32)
    getattr(lib, f"aotc_la_{t}_getrf")(I64(m), I64(n), _p(a), _p(lu), _p(piv), _p(info))
    assert info[0] == 0
    perm = np.arange(m)
    for j, p in enumerate(piv - 1):
        perm[[j, p]] = perm[[p, j]]
    k = min(m, n)
    low = np.tril(lu, -1)[:, :k] + np.eye(m, k)
    up = np.triu(lu)[:k, :]
    assert np.abs(low @ up - a[perm]).max() <= _tol(t, n) * np.abs(a).max()
    bound = np.sqrt(2) if t in "cz" else 1  # pivots by |re| + |im|, as LAPACK's i?amax
    assert np.all(np.abs(np.tril(lu, -1)) <= bound * (1 + 1e-6))


@pytest.mark.parametrize("t", "sd")
def test_getrf_singular_info(lib, t):
    a = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], TYPES[t])
    lu, piv, info = np.zeros_like(a), np.zeros(3, np.int32), np.zeros(1, np.int32)
    getattr(lib, f"aotc_la_{t}_getrf")(I64(3), I64(3), _p(a), _p(lu), _p(piv), _p(info))
    assert list(piv) == [2, 3, 3] and info[0] == 3  # first the row of |2|, then the row of |-2|


@pytest.mark.parametrize("t", "sdcz")
@pytest.mark.parametrize("lower", [1, 0])
def test_potrf(lib, t, lower):
    rng = np.random.default_rng(7)
    n = 17
    x = _rand(rng, (n, n), t)
    s = (x @ x.conj().T + n * np.eye(n)).astype(TYPES[t])
    c, info = np.zeros_like(s), np.zeros(1, np.int32)
    getattr(lib, f"aotc_la_{t}_potrf")(lower, I64(n), _p(s), _p(c), _p(info))
    f = np.tril(c) if lower else np.triu(c)
    r = f @ f.conj().T if lower else f.conj().T @ f
    assert info[0] == 0 and np.abs(r - s).max() <= _tol(t, n) * np.abs(s).max()
    s[3, 3] = -1
    getattr(lib, f"aotc_la_{t}_potrf")(lower, I64(n), _p(s), _p(c), _p(info))
    assert info[0] == 4


@pytest.mark.parametrize("t", "sdcz")
def test_trsm_every_combination(lib, t):
    rng = np.random.default_rng(3)
    n, r = 9, 4
    a = (_rand(rng, (n, n), t) + 4 * np.eye(n)).astype(TYPES[t])
    for left in (1, 0):
        b = _rand(rng, (n, r) if left else (r, n), t)
        for lower in (1, 0):
            for trans in (0, 1, 2):
                for unit in (0, 1):
                    x = np.zeros_like(b)
                    getattr(lib, f"aotc_la_{t}_trsm")(left, lower, trans, unit, I64(b.shape[0]), I64(b.shape[1]),
                                                     _p(a), _p(b), _p(x))
                    tri = np.tril(a) if lower else np.triu(a)
                    if unit:
                        tri = tri - np.diag(np.diag(tri)) + np.eye(n)
                    op = tri if trans == 0 else tri.T if trans == 1 else tri.conj().T
                    res = op @ x - b if left else x @ op - b
                    assert np.abs(res).max() <= _tol(t, n) * 10, (left, lower, trans, unit)


@pytest.mark.parametrize("t", "sdcz")
@pytest.mark.parametrize("m, n", [(6, 6), (9, 4), (4, 9)])
def test_geqrf_orgqr_match_lapack(lib, t, m, n):
    rng = np.random.default_rng(m + 10 * n)
    a = _rand(rng, (m, n), t)
    k = min(m, n)
    r, tau, work = np.zeros_like(a), np.zeros(k, TYPES[t]), np.zeros(max(m, n), TYPES[t])
    getattr(lib, f"aotc_la_{t}_geqrf")(I64(m), I64(n), _p(a), _p(r), _p(tau), _p(work))
    qin = np.zeros((m, m), TYPES[t])
    qin[:, :k] = r[:, :k]
    q = np.zeros_like(qin)
    getattr(lib, f"aotc_la_{t}_orgqr")(I64(m), I64(m), I64(k), _p(qin), _p(q), _p(tau), _p(work))
    wq, wr = np.linalg.qr(a.astype(np.complex128 if t in "cz" else np.float64), mode="complete")
    tol = _tol(t, max(m, n)) * np.abs(a).max()
    assert np.abs(q - wq).max() <= tol and np.abs(np.triu(r) - wr).max() <= tol  # LAPACK's signs, not just |.|


@pytest.mark.parametrize("t", "sdcz")
@pytest.mark.parametrize("n", [1, 2, 17, 40])
def test_syevd(lib, t, n):
    rng = np.random.default_rng(n)
    x = _rand(rng, (n, n), t)
    h = (x + x.conj().T).astype(TYPES[t])
    for vectors in (1, 0):
        for lower in (1, 0):
            src = h.copy()
            if lower:
                src[np.triu_indices(n, 1)] = 99  # the other triangle is never read
            else:
                src[np.tril_indices(n, -1)] = 99
            v, w, info = np.zeros_like(h), np.zeros(n, _real(t)), np.zeros(1, np.int32)
            work, e, iw = np.zeros(2 * n * n + 2 * n, TYPES[t]), np.zeros(n, _real(t)), np.zeros(n, np.int64)
            getattr(lib, f"aotc_la_{t}_syevd")(vectors, lower, I64(n), _p(src), _p(v), _p(w), _p(info), _p(work),
                                               _p(e), _p(iw))
            norm = np.abs(np.linalg.eigvalsh(h.astype(np.complex128))).max()
            tol = _tol(t, n) * norm
            assert info[0] == 0 and np.all(np.diff(w) >= 0)
            assert np.abs(w - np.linalg.eigvalsh(h.astype(np.complex128))).max() <= tol
            if vectors:
                assert np.abs(h @ v - v * w).max() <= tol
                assert np.abs(v.conj().T @ v - np.eye(n)).max() <= _tol(t, n)


@pytest.mark.parametrize("t", "sdcz")
@pytest.mark.parametrize("m, n", [(1, 1), (7, 4), (4, 7), (12, 12)])
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_gesdd(lib, t, m, n, mode):
    rng = np.random.default_rng(m * n + mode)
    a = _rand(rng, (m, n), t)
    if m >= 3 and n >= 3:
        a[:, 2] = a[:, 0] + a[:, 1]  # rank deficient: vectors completed
    p, q = min(m, n), max(m, n)
    s, info = np.zeros(p, _real(t)), np.zeros(1, np.int32)
    ku, kv = (m, n) if mode == 2 else (p, p)
    u, vt, out = np.zeros((m, ku), TYPES[t]), np.zeros((kv, n), TYPES[t]), np.zeros_like(a)
    work, rw, iw = np.zeros(p * q + p * p + q * q, TYPES[t]), np.zeros(p, _real(t)), np.zeros(p, np.int64)
    getattr(lib, f"aotc_la_{t}_gesdd")(mode, I64(m), I64(n), _p(a), _p(out), _p(s), _p(u), _p(vt), _p(info), _p(work),
                                       _p(rw), _p(iw))
    want = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
    tol = _tol(t, q) * want.max()
    assert info[0] == 0 and np.abs(s - want).max() <= tol and np.all(np.diff(s) <= 0)
    if mode:
        assert np.abs((u[:, :p] * s) @ vt[:p] - a).max() <= tol
        assert np.abs(u.conj().T @ u - np.eye(ku)).max() <= _tol(t, q)
        assert np.abs(vt @ vt.conj().T - np.eye(kv)).max() <= _tol(t, q)


@pytest.mark.slow
@pytest.mark.parametrize("t", "sdcz")
def test_n256_time(lib, t):
    """One 256 x 256 matrix per routine: each well under a second at -O2 (timed once, on a
    shared machine, so the bound is loose)."""
    rng = np.random.default_rng(0)
    n = 256
    a = _rand(rng, (n, n), t)
    s = (a @ a.conj().T + n * np.eye(n)).astype(TYPES[t])
    o, o2, o3, tau = np.zeros_like(a), np.zeros_like(a), np.zeros_like(a), np.zeros(n, TYPES[t])
    ip, info = np.zeros(n, np.int32), np.zeros(1, np.int32)
    work, rw, iw = np.zeros(3 * n * n + 2 * n, TYPES[t]), np.zeros(n, _real(t)), np.zeros(n, np.int64)
    w = np.zeros(n, _real(t))
    f = {k: getattr(lib, f"aotc_la_{t}_{k}") for k in ("getrf", "potrf", "trsm", "geqrf", "orgqr", "syevd", "gesdd")}
    calls = {
        "getrf": lambda: f["getrf"](I64(n), I64(n), _p(a), _p(o), _p(ip), _p(info)),
        "potrf": lambda: f["potrf"](1, I64(n), _p(s), _p(o), _p(info)),
        "trsm": lambda: f["trsm"](1, 1, 0, 0, I64(n), I64(n), _p(s), _p(a), _p(o)),
        "geqrf": lambda: f["geqrf"](I64(n), I64(n), _p(a), _p(o), _p(tau), _p(work)),
        "orgqr": lambda: f["orgqr"](I64(n), I64(n), I64(n), _p(o), _p(o2), _p(tau), _p(work)),
        "syevd": lambda: f["syevd"](1, 1, I64(n), _p(s), _p(o), _p(w), _p(info), _p(work), _p(rw), _p(iw)),
        "gesdd": lambda: f["gesdd"](2, I64(n), I64(n), _p(a), _p(o), _p(w), _p(o2), _p(o3),
                                    _p(info), _p(work), _p(rw), _p(iw)),
    }
    for name, call in calls.items():
        t0 = time.perf_counter()
        call()
        dt = time.perf_counter() - t0
        assert dt < 5.0, f"{name} at n = 256 took {dt:.2f} s"


_COMPLEX = {"s": np.complex64, "d": np.complex128, "c": np.complex64, "z": np.complex128}


def _geev(lib, t, a):
    n = a.shape[0]
    ct = _COMPLEX[t]
    vl, vr, info = np.zeros((n, n), ct), np.zeros((n, n), ct), np.zeros(1, np.int32)
    size = geev_work(t, n)
    work = np.full(size + 16, 7.0, ct)  # the planned scratch and a guard zone behind it
    if t in "sd":
        wr, wi = np.zeros(n, a.dtype), np.zeros(n, a.dtype)
        getattr(lib, f"aotc_la_{t}_geev")(1, 1, I64(n), _p(a), _p(wr), _p(wi), _p(vl), _p(vr), _p(info), _p(work))
        w = wr + 1j * wi
    else:
        w = np.zeros(n, ct)
        getattr(lib, f"aotc_la_{t}_geev")(1, 1, I64(n), _p(a), _p(w), _p(vl), _p(vr), _p(info), _p(work))
    assert np.all(work[size:] == 7.0), "geev wrote past its planned scratch"
    return w, vl, vr, info[0]


@pytest.mark.parametrize("t", "sdcz")
@pytest.mark.parametrize("n", [1, 2, 5, 17, 64, 100, 160])
def test_geev(lib, t, n):
    """A vr = vr diag(w), vl^H A = diag(w) vl^H, unit columns with the largest entry real (and
    positive, as zgeev makes it; a real matrix's vectors keep dgeev's signs, which may be
    negative: test_geev_pair_signs)."""
    rng = np.random.default_rng(n)
    a = _rand(rng, (n, n), t)
    w, vl, vr, info = _geev(lib, t, a)
    assert info == 0
    A = a.astype(np.complex128)
    norm = np.linalg.norm(A)
    assert np.abs(A @ vr - vr * w).max() <= _tol(t, n) * norm
    assert np.abs(vl.conj().T @ A - w[:, None] * vl.conj().T).max() <= _tol(t, n) * norm
    for v in (vr, vl):
        assert np.abs(np.linalg.norm(v, axis=0) - 1).max() <= _tol(t, n)
        top = v[np.argmax(np.abs(v), axis=0), np.arange(n)]
        signed = np.ones(n, bool) if t in "sd" else np.zeros(n, bool)
        assert np.all(top.imag == 0) and np.all(top.real[~signed] > 0) and np.all(top.real != 0)


@pytest.mark.parametrize("t", "sd")
def test_geev_pair_signs(lib, t):
    """A real matrix's complex pairs: each vector's largest component real with dgeev's sign (that
    of dtrevc's vector's real part there), equal to XLA's, right and left. The matrices are already
    in standard real Schur form (gen_linalg's "quasi" kind), so neither side runs a QR sweep and the
    signs do not depend on rounding; 40 of them, 4 to 24 rows, against live XLA:CPU."""
    jax = pytest.importorskip("jax")
    from jax import lax

    from tests.ops.gen_linalg import _quasi_triangular
    rng = np.random.default_rng(2026)
    compared = negative = 0
    for trial in range(40):
        n = 4 + trial % 21
        a = _quasi_triangular(rng, (n, n), "f32" if t == "s" else "f64")
        with jax.enable_x64(t == "d"):
            xw, xl, xr = (np.asarray(o) for o in lax.linalg.eig(a, compute_left_eigenvectors=True))
        w, vl, vr, info = _geev(lib, t, a)
        assert info == 0 and np.array_equal(w, xw), f"{n} x {n}: eigenvalues not XLA's"
        for v, x in ((vr, xr), (vl, xl)):
            for k in np.nonzero(w.imag)[0]:
                mag = np.sort(np.abs(x[:, k]))
                if mag[-1] < 1.01 * mag[-2]:  # two near-largest components: rounding picks one
                    continue
                top = np.argmax(np.abs(x[:, k]))
                assert v[top, k].imag == 0 and np.sign(v[top, k].real) == np.sign(x[top, k].real), \
                    f"{n} x {n}: vector {k} is not dgeev's: {v[top, k]} where XLA has {x[top, k]}"
                compared += 1
                negative += x[top, k].real < 0
    assert compared > 200 and negative > compared // 5, (compared, negative)


@pytest.mark.parametrize("t", "sd")
def test_geev_nan_info(lib, t):
    a = _rand(np.random.default_rng(4), (4, 4), t)
    a[0, 1] = np.nan  # QR never converges: info > 0, everything NaN
    w, vl, vr, info = _geev(lib, t, a)
    assert info > 0 and np.all(np.isnan(w)) and np.all(np.isnan(vr))


@pytest.mark.parametrize("t", "cz")
@pytest.mark.parametrize("n", [1, 3, 17, 100, 160])
def test_gees(lib, t, n):
    rng = np.random.default_rng(n)
    a = _rand(rng, (n, n), t)
    tt, z, w = np.zeros_like(a), np.zeros_like(a), np.zeros(n, a.dtype)
    sdim, info = np.ones(1, np.int32), np.ones(1, np.int32)
    work = np.zeros(gees_work(t, n), a.dtype)
    getattr(lib, f"aotc_la_{t}_gees")(1, I64(n), _p(a), _p(tt), _p(z), _p(w), _p(sdim), _p(info), _p(work))
    assert info[0] == 0 and sdim[0] == 0
    assert np.all(np.tril(tt, -1) == 0) and np.array_equal(np.diag(tt), w)
    assert np.abs(z.conj().T @ z - np.eye(n)).max() <= _tol(t, n)
    assert np.abs(z @ tt @ z.conj().T - a).max() <= _tol(t, n) * np.linalg.norm(a)


def _gees_real(lib, t, a):
    n = a.shape[0]
    tt, z = np.zeros_like(a), np.zeros_like(a)
    wr, wi = np.zeros(n, a.dtype), np.zeros(n, a.dtype)
    sdim, info = np.ones(1, np.int32), np.ones(1, np.int32)
    work = np.full(gees_work(t, n) + 16, 7.0, a.dtype)  # the planned scratch and a guard zone behind it
    getattr(lib, f"aotc_la_{t}_gees")(1, I64(n), _p(a), _p(tt), _p(z), _p(wr), _p(wi), _p(sdim), _p(info), _p(work))
    assert np.all(work[gees_work(t, n):] == 7.0), "gees wrote past its planned scratch"
    return tt, z, wr, wi, int(sdim[0]), int(info[0])


def _cyclic(n):
    return np.roll(np.eye(n), 1, axis=0)  # the shift matrix: plain Francis steps stall on it


@pytest.mark.parametrize("t", "sd")
@pytest.mark.parametrize("kind, n", [("random", 1), ("random", 2), ("random", 3), ("random", 17), ("random", 80),
                                     ("random", 160), ("cyclic", 4), ("cyclic", 9), ("cyclic", 100), ("triangular", 6), ("rotation", 2),
                                     ("zero", 5), ("lower2", 2)])
def test_gees_real(lib, t, kind, n):
    """Real Schur form: T upper quasi-triangular with standardized 2 x 2 blocks (equal diagonal,
    b c < 0), wr/wi read from T (pairs with the positive imaginary part first), Z orthogonal,
    A = Z T Z^T; the cyclic shift matrix needs the exceptional shifts."""
    rng = np.random.default_rng(n)
    a = {"random": lambda: _rand(rng, (n, n), t), "cyclic": lambda: _cyclic(n).astype(TYPES[t]),
         "triangular": lambda: np.triu(_rand(rng, (n, n), t)), "rotation": lambda: np.array([[0, -1], [1, 0]], TYPES[t]),
         "zero": lambda: np.zeros((n, n), TYPES[t]), "lower2": lambda: np.array([[1, 0], [3, 2]], TYPES[t])}[kind]()
    tt, z, wr, wi, sdim, info = _gees_real(lib, t, a)
    assert info == 0 and sdim == 0
    assert np.all(np.tril(tt, -2) == 0)
    i = 0
    while i < n:
        if i + 1 < n and tt[i + 1, i] != 0:
            assert tt[i, i] == tt[i + 1, i + 1] and tt[i, i + 1] * tt[i + 1, i] < 0
            assert wr[i] == wr[i + 1] == tt[i, i] and wi[i] > 0 and wi[i + 1] == -wi[i]
            assert i + 2 >= n or tt[i + 2, i + 1] == 0
            i += 2
        else:
            assert wr[i] == tt[i, i] and wi[i] == 0
            i += 1
    assert np.abs(z.T @ z - np.eye(n)).max(initial=0) <= _tol(t, n)
    assert np.abs(z @ tt @ z.T - a).max(initial=0) <= _tol(t, n) * max(np.linalg.norm(a), 1)
    want = np.sort_complex(np.linalg.eigvals(a.astype(np.float64)))
    got = np.sort_complex(wr.astype(np.float64) + 1j * wi)
    assert np.abs(got - want).max(initial=0) <= 1e3 * _tol(t, n) * max(np.linalg.norm(a), 1)


@pytest.mark.parametrize("t", "sd")
def test_gees_real_nan_info(lib, t):
    a = _rand(np.random.default_rng(5), (5, 5), t)
    a[0, 1] = np.nan  # QR never converges: info > 0 (XLA's caller makes T and Z NaN)
    assert _gees_real(lib, t, a)[-1] > 0


def test_hseqr_work_sizes_agree(tmp_path):
    """aotc/ops/linalg.py's laqr_work plans the scratch ?hseqr's multishift QR takes: the C macros
    (AOTC_LA_LAQR_WORK, AOTC_LA_LAQR_C_WORK) give the same numbers."""
    from aotc.ops.linalg import laqr_work
    ns = [0, 1, 48, 49, 75, 76, 100, 151, 1000, 4097]
    src = tmp_path / "w.c"
    src.write_text('#include <stdio.h>\n#include "aotc_rt.h"\n#include "aotc_linalg.c"\n#include "aotc_geev.c"\n'
                   '#include "aotc_schur.c"\nint main(void) {\n'
                   + "".join(f'  printf("%lld %lld\\n", (long long)AOTC_LA_LAQR_WORK((int64_t){n}), '
                             f'(long long)AOTC_LA_LAQR_C_WORK((int64_t){n}));\n' for n in ns)
                   + "  return 0;\n}\n")
    exe = tmp_path / "w"
    r = subprocess.run(["gcc", "-std=c11", f"-I{RUNTIME_DIR}", "-o", str(exe), str(src), "-lm"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[:3000]
    got = [tuple(map(int, line.split())) for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                                     check=True).stdout.splitlines()]
    assert got == [(laqr_work("d", n), laqr_work("z", n)) for n in ns]


"""Regenerate tests/ops/data/linalg/<case>.npz for test_linalg.py: each case of
linalg_cases.py exported from JAX (pre-optimization `as_text(dialect='hlo')` and
post-optimization `.compile().as_text()`), its inputs, and the outputs XLA:CPU computes for
them (the jitted function; for the HLO-op cases, tests/oracle/xla.py on the HLO text); also
the StableHLO text (`as_text()`), which aotc.jax exports by default.
Expected values never come from aotc. f64/c128 cases are exported in x64 mode, f32/c64
ones without it (the index types differ, as users see them).

    python tests/ops/gen_linalg.py            # every case
    python tests/ops/gen_linalg.py solve_     # cases whose name contains a substring
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.ops.gen_expected import save_npz  # noqa: E402
from tests.ops.linalg_cases import CASES, HLO_OPS  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "linalg"
NP = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}


def functions():
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    from jax import lax

    return {
        "solve": jnp.linalg.solve,
        "inv": jnp.linalg.inv,
        "det": jnp.linalg.det,
        "slogdet": lambda a: tuple(jnp.linalg.slogdet(a)),
        "cholesky": jnp.linalg.cholesky,
        "qr_reduced": lambda a: tuple(jnp.linalg.qr(a)),
        "qr_complete": lambda a: tuple(jnp.linalg.qr(a, mode="complete")),
        "eigh": lambda a: tuple(jnp.linalg.eigh(a)),
        "eigvalsh": jnp.linalg.eigvalsh,
        "svd_full": lambda a: tuple(jnp.linalg.svd(a, full_matrices=True)),
        "svd_reduced": lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)),
        "svd_values": lambda a: jnp.linalg.svd(a, compute_uv=False),
        "pinv": jnp.linalg.pinv,
        "lstsq": lambda a, b: tuple(jnp.linalg.lstsq(a, b)),
        "cho_solve": lambda a, b: jsl.cho_solve((jnp.linalg.cholesky(a), True), b),
        "solve_triangular_lower": lambda a, b: jsl.solve_triangular(a, b, lower=True),
        "solve_triangular_upper_t": lambda a, b: jsl.solve_triangular(a, b, trans=1, lower=False),
        "solve_triangular_lower_h_unit": lambda a, b: jsl.solve_triangular(a, b, trans=2, lower=True,
                                                                         unit_diagonal=True),
        "triangular_solve_right": lambda a, b: lax.linalg.triangular_solve(a, b, left_side=False, lower=True),
        "triangular_solve_right_upper_t": lambda a, b: lax.linalg.triangular_solve(
            a, b, left_side=False, lower=False, transpose_a=True, conjugate_a=True),
        "lu": lambda a: tuple(jsl.lu(a)),
        "lu_factor": lambda a: tuple(jsl.lu_factor(a)),
        "eig": lambda a: tuple(jnp.linalg.eig(a)),
        "eigvals": jnp.linalg.eigvals,
        "eig_left": lambda a: tuple(lax.linalg.eig(a, compute_left_eigenvectors=True)),
        "schur_complex": lambda a: tuple(jsl.schur(a, output="complex")),
        "schur": lambda a: tuple(jsl.schur(a)),
    }


def _normal(rng, shape, dt: str) -> np.ndarray:
    x = rng.standard_normal(shape)
    if dt.startswith("c"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(NP[dt])


def _quasi_triangular(rng, shape: tuple, dt: str) -> np.ndarray:
    """Upper quasi-triangular with distinct diagonal blocks: after ?gebal and ?gehrd (nothing below
    the subdiagonal to reduce), every block deflates at once and ?lanv2 leaves a standard block
    alone, so the Schur vectors are the balancing's and dgeev's vectors are rounding-proof."""
    n = shape[-1]
    x = np.triu(_normal(rng, shape, dt)).astype(np.float64)
    x += 2 * np.triu(x, 2)  # large enough that a pair's vector's largest component is often not its own
    i = k = 0
    while i < n:
        if i + 1 < n and k % 3 != 1:
            b = rng.uniform(0.5, 3.0) * rng.choice([-1.0, 1.0])
            c = -np.sign(b) * rng.uniform(0.5, 3.0)
            x[..., i, i] = x[..., i + 1, i + 1] = 1.5 * k - 3
            x[..., i, i + 1], x[..., i + 1, i] = b, c
            i += 2
        else:
            x[..., i, i] = 1.5 * k - 2.75
            i += 1
        k += 1
    return x.astype(NP[dt])


def matrix(rng, shape: tuple, dt: str, kind: str) -> np.ndarray:
    """An input matrix (batch) of the given kind."""
    *b, m, n = shape
    if kind == "general":
        return _normal(rng, shape, dt)
    if kind == "spd":
        x = _normal(rng, shape, dt).astype(np.complex128 if dt.startswith("c") else np.float64)
        s = x @ np.swapaxes(x.conj(), -1, -2) + n * np.eye(n)
        return s.astype(NP[dt])
    if kind in ("lower", "upper"):  # the other triangle is noise the solve must ignore
        x = _normal(rng, shape, dt)
        return (x + (2 + n) * np.eye(n)).astype(NP[dt])
    if kind == "singular":  # row 1 = 2 * row 0: elimination meets an exact zero pivot
        a = rng.integers(-3, 4, shape).astype(NP[dt])
        a[..., 1, :] = 2 * a[..., 0, :]
        return a
    if kind == "notpd":  # the third leading minor is negative
        a = np.broadcast_to(4 * np.eye(n), shape).copy().astype(NP[dt])
        a[..., 0, 1] = a[..., 1, 0] = 1
        a[..., 2, 2] = -1
        return a
    if kind == "triangular":
        return np.triu(_normal(rng, shape, dt))
    if kind == "diagonal":
        return (_normal(rng, shape, dt) * np.eye(n)).astype(NP[dt])
    if kind == "repeated":  # S diag(1, 1, 2, 2, ...) S^-1: each eigenvalue twice, diagonalizable
        s = _normal(rng, shape, dt).astype(np.complex128 if dt.startswith("c") else np.float64) + 2 * n * np.eye(n)
        d = np.diag((np.arange(n) // 2 + 1).astype(np.float64))
        return (s @ d @ np.linalg.inv(s)).astype(NP[dt])
    if kind == "jordan":  # Jordan blocks of size 2 (eigenvalue 1, 2, ...): defective
        j = np.diag((np.arange(n) // 2 + 1).astype(np.float64)) + np.diag((np.arange(n - 1) % 2 == 0) * 1.0, 1)
        return np.broadcast_to(j, shape).astype(NP[dt]).copy()
    if kind == "scaled":  # D B D^-1, D over eight decades: unbalanced QR loses digits, ?gebal scales it back
        d = 10.0 ** (np.arange(n) - n // 2)
        x = _normal(rng, shape, dt)
        return (x * d[:, None] / d[None, :]).astype(NP[dt])
    if kind == "isolated":  # permuted [[T1 X Y] [0 B Z] [0 0 T2]], T1 and T2 upper triangular (2 x 2), B dense:
        x = _normal(rng, shape, dt)  # ?gebal's exchanges isolate the eigenvalues of T1 and T2
        lo, hi = 2, n - 2
        for j in range(lo):
            x[..., j + 1:, j] = 0
        for i in range(hi, n):
            x[..., i, :i] = 0
        p = rng.permutation(n)
        return np.ascontiguousarray(x[..., p, :][..., :, p])
    if kind == "companion":  # np.roots' matrix of a polynomial with roots over six decades
        roots = np.array([7e2, -4e1, 3.0, 0.5, -2e-2, 1e-3, 1.5e-1, -60.0, 9.0])[:n]
        c = np.poly(roots)
        a = np.zeros((n, n))
        a[0, :] = -c[1:] / c[0]
        a[1:, :-1] = np.eye(n - 1)
        return np.broadcast_to(a, shape).astype(NP[dt]).copy()
    if kind == "quasi":  # already a standard real Schur form: 2 x 2 blocks [a b; c a] (b c < 0, either larger)
        return _quasi_triangular(rng, shape, dt)  # and 1 x 1 ones; LAPACK's QR runs no sweep on it
    if kind == "nan":
        a = _normal(rng, shape, dt)
        a[..., 0, 1] = np.nan
        return a
    raise ValueError(kind)


def case_inputs(name: str, c, rng) -> list[np.ndarray]:
    a = matrix(rng, c.shape, c.dtype, c.kind)
    if not c.rhs:
        return [a]
    *b, m, n = c.shape
    right = c.fn.startswith("triangular_solve_right")
    return [a, _normal(rng, (*b, c.rhs, n) if right else (*b, m, c.rhs), c.dtype)]


def export(name: str, c, fns) -> dict[str, np.ndarray]:
    import jax

    jax.config.update("jax_enable_x64", c.dtype in ("f64", "c128"))
    rng = np.random.default_rng(sum(map(ord, name)))
    ins = case_inputs(name, c, rng)
    f = jax.jit(fns[c.fn])
    lowered = f.lower(*ins)
    outs = f(*ins)
    outs = outs if isinstance(outs, tuple) else (outs,)
    arrays = {f"in{k}": np.asarray(x) for k, x in enumerate(ins)}
    arrays.update({f"out{k}": np.asarray(x) for k, x in enumerate(outs)})
    arrays["hlo_pre"] = np.array(lowered.as_text(dialect="hlo"))
    arrays["hlo_post"] = np.array(lowered.compile().as_text())
    arrays["hlo_mlir"] = np.array(lowered.as_text())  # StableHLO, as aotc.jax exports by default
    return arrays


def export_hlo_op(name: str, spec) -> dict[str, np.ndarray]:
    from tests.oracle import xla as oracle

    dt, shape, kind, text = spec
    rng = np.random.default_rng(sum(map(ord, name)))
    ins = [matrix(rng, shape, dt, kind)]
    if "trisolve" in name:
        ins.append(_normal(rng, (2, 17, 5) if "_left_" in name else (2, 5, 17), dt))
    outs = oracle.run_hlo(text, ins)
    arrays = {f"in{k}": np.asarray(x) for k, x in enumerate(ins)}
    arrays.update({f"out{k}": np.asarray(x) for k, x in enumerate(outs)})
    arrays["hlo_pre"] = np.array(text)
    return arrays


def main(argv: list[str]) -> int:
    DATA.mkdir(parents=True, exist_ok=True)
    fns = functions()
    for name in sorted(CASES) + sorted(HLO_OPS):
        if argv and not any(a in name for a in argv):
            continue
        arrays = export(name, CASES[name], fns) if name in CASES else export_hlo_op(name, HLO_OPS[name])
        save_npz(DATA / f"{name}.npz", arrays)
        print(f"{name}: {sum(k.startswith('out') for k in arrays)} outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

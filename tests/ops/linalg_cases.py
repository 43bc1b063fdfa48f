"""The table of jnp.linalg / jax.scipy.linalg cases: which function, element type, input
shapes and input kind. gen_linalg.py exports each (pre- and post-optimization HLO) and
records XLA:CPU's outputs; test_linalg.py compiles both with aotc and compares. Plain data:
importing it needs no jax.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    fn: str            # a key of gen_linalg.FUNCTIONS
    dtype: str         # f32, f64, c64, c128
    shape: tuple       # the matrix operand's shape (batch dims first)
    kind: str = "general"  # general, spd, singular, notpd, lower, upper, triangular, diagonal, repeated,
    #                        jordan, nan, quasi, and for ?gebal: scaled, isolated, companion
    rhs: int = 0       # columns of a right-hand side operand (0: none)
    check: str = "close"   # close, eigh, svd, lu, eig, schur


def _cases() -> dict[str, Case]:
    out: dict[str, Case] = {}

    def add(c: Case, tag: str = "") -> None:
        name = f"{c.fn}_{c.dtype}_{'x'.join(map(str, c.shape))}{tag}"
        assert name not in out, name
        out[name] = c

    sizes = {"f32": (1, 3, 17, 64, 128), "f64": (1, 3, 17, 64), "c64": (3, 17), "c128": (3, 17, 64)}
    for dt, ns in sizes.items():
        for n in ns:
            add(Case("solve", dt, (n, n), rhs=3))
            add(Case("inv", dt, (n, n)))
            add(Case("cholesky", dt, (n, n), "spd"))
            add(Case("qr_reduced", dt, (n, n)))
            add(Case("eigh", dt, (n, n), "spd", check="eigh"))
            add(Case("svd_full", dt, (n, n), check="svd"))
        for n in ns[:3]:
            add(Case("det", dt, (n, n)))
            add(Case("slogdet", dt, (n, n)))
            add(Case("eigvalsh", dt, (n, n), "spd"))
            add(Case("svd_values", dt, (n, n)))
            add(Case("pinv", dt, (n, n)))
            add(Case("cho_solve", dt, (n, n), "spd", rhs=2))
            for fn in ("solve_triangular_lower", "solve_triangular_upper_t", "solve_triangular_lower_h_unit",
                       "triangular_solve_right", "triangular_solve_right_upper_t"):
                add(Case(fn, dt, (n, n), "lower" if "lower" in fn or fn == "triangular_solve_right" else "upper", rhs=4))
            add(Case("lu", dt, (n, n), check="lu"))
            add(Case("lu_factor", dt, (n, n), check="lu"))
    for dt in ("f32", "f64", "c64"):  # non-square
        for shape in ((7, 4), (4, 7)):
            add(Case("qr_reduced", dt, shape))
            add(Case("qr_complete", dt, shape))
            add(Case("svd_full", dt, shape, check="svd"))
            add(Case("svd_reduced", dt, shape, check="svd"))
            add(Case("lstsq", dt, shape, rhs=2))
            add(Case("lu", dt, shape, check="lu"))
    # batched
    add(Case("solve", "f32", (3, 4, 64, 64), rhs=3))
    add(Case("inv", "f64", (2, 3, 17, 17)))
    add(Case("cholesky", "c64", (2, 3, 17, 17), "spd"))
    add(Case("qr_complete", "f64", (2, 3, 9, 5)))
    add(Case("eigh", "f32", (2, 3, 17, 17), "spd", check="eigh"))
    add(Case("svd_reduced", "c128", (2, 3, 9, 5), check="svd"))
    add(Case("det", "f32", (3, 4, 17, 17)))
    add(Case("solve_triangular_lower", "f64", (2, 17, 17), "lower", rhs=4))
    # singular and not positive definite: info, zeros, infinities and NaNs as XLA gives them
    for dt in ("f32", "f64"):
        add(Case("solve", dt, (4, 4), "singular", rhs=2), "_singular")
        add(Case("det", dt, (4, 4), "singular"), "_singular")
        add(Case("slogdet", dt, (4, 4), "singular"), "_singular")
        add(Case("inv", dt, (4, 4), "singular"), "_singular")
        add(Case("lu_factor", dt, (4, 4), "singular", check="lu"), "_singular")
        add(Case("cholesky", dt, (5, 5), "notpd"), "_notpd")
        add(Case("cholesky", dt, (2, 5, 5), "notpd"), "_notpd")
    # general eigenproblem (geev): real inputs have complex-conjugate pairs
    eig_sizes = {"f32": (1, 2, 3, 17, 64, 128), "f64": (1, 2, 3, 17, 64), "c64": (3, 17), "c128": (2, 3, 17, 64)}
    for dt, ns in eig_sizes.items():
        for n in ns:
            add(Case("eigvals", dt, (n, n), check="eig"))
            if n <= 64:
                add(Case("eig", dt, (n, n), check="eig"))
        add(Case("eig_left", dt, (17, 17), check="eig"))
        for kind in ("triangular", "diagonal", "repeated", "jordan"):
            add(Case("eig", dt, (9, 9), kind, check="eig"), f"_{kind}")
    # complex Schur decomposition (gees; output="complex" converts real inputs)
    for dt, ns in {"f32": (3, 17, 64), "f64": (1, 2, 17), "c64": (3, 17), "c128": (1, 2, 3, 17, 64, 128)}.items():
        for n in ns:
            add(Case("schur_complex", dt, (n, n), check="schur"))
        for kind in ("triangular", "repeated", "jordan"):
            add(Case("schur_complex", dt, (9, 9), kind, check="schur"), f"_{kind}")
    add(Case("schur_complex", "c128", (2, 3, 17, 17), check="schur"))
    add(Case("schur_complex", "c64", (5, 5), "nan", check="schur"), "_nan")
    # real Schur decomposition (gees of f32/f64): quasi-triangular T; 100 x 100 takes LAPACK's
    # multishift QR (n > 75), where the eigenvalues may come in another order
    for dt, ns in {"f32": (3, 17, 64), "f64": (1, 2, 3, 17, 64, 100)}.items():
        for n in ns:
            add(Case("schur", dt, (n, n), check="schur"))
        for kind in ("triangular", "diagonal", "repeated", "jordan"):
            add(Case("schur", dt, (9, 9), kind, check="schur"), f"_{kind}")
    add(Case("schur", "f32", (2, 3, 17, 17), check="schur"))
    add(Case("schur", "f64", (5, 5), "nan", check="schur"), "_nan")
    add(Case("eig", "f32", (2, 3, 17, 17), check="eig"))
    add(Case("eig_left", "c128", (2, 9, 9), check="eig"))
    add(Case("eig", "f64", (5, 5), "nan", check="eig"), "_nan")
    # balancing (?gebal): geev permutes and scales, gees permutes; XLA's order and accuracy follow it
    for dt in ("f32", "f64", "c64", "c128"):
        for kind in ("scaled", "isolated"):
            add(Case("eig", dt, (9, 9), kind, check="eig"), f"_{kind}")
        add(Case("schur_complex", dt, (9, 9), "isolated", check="schur"), "_isolated")
    for dt in ("f32", "f64"):
        add(Case("schur", dt, (9, 9), "isolated", check="schur"), "_isolated")
    add(Case("eig", "f64", (9, 9), "companion", check="eig"), "_companion")
    # already quasi-triangular: no QR sweep, so XLA's signs of a real matrix's complex pairs' vectors
    # do not depend on rounding (dtrevc's starting vector and dgeev's rotation decide them)
    for dt in ("f32", "f64"):
        add(Case("eig", dt, (16, 16), "quasi", check="eig"), "_quasi")
        add(Case("eig_left", dt, (16, 16), "quasi", check="eig"), "_quasi")
    add(Case("eigvals", "f64", (2, 9, 9), "scaled", check="eig"), "_scaled")
    # past 75 x 75 LAPACK's ?hseqr runs the multishift QR with aggressive early deflation (?laqr0):
    # 10 shifts a sweep below 150 rows, 24 (accumulated in blocks) at 200
    for dt, n in (("f64", 76), ("f64", 100), ("c128", 100), ("c64", 90), ("f32", 80)):
        add(Case("eig", dt, (n, n), check="eig"))
    add(Case("eig_left", "f64", (80, 80), check="eig"))
    for dt, n in (("f64", 200), ("c128", 200), ("f64", 300)):
        add(Case("eigvals", dt, (n, n), check="eig"))
    add(Case("eigvals", "f64", (2, 90, 90), "scaled", check="eig"), "_scaled")
    add(Case("eigvals", "f64", (100, 100), "isolated", check="eig"), "_isolated")
    for dt, n in (("f64", 200), ("f32", 100), ("c64", 100)):
        add(Case("schur" if dt[0] == "f" else "schur_complex", dt, (n, n), check="schur"))
    add(Case("schur", "f64", (100, 100), "isolated", check="schur"), "_isolated")
    add(Case("eigvals", "c64", (2, 5, 5), "nan", check="eig"), "_nan")
    return out


CASES = _cases()

# hand-written HLO using the cholesky and triangular-solve ops (XLA:CPU expands both)
HLO_OPS = {
    "hlo_cholesky_lower_f32": ("f32", (17, 17), "spd", """HloModule hlo_cholesky
ENTRY main {
  a = f32[17,17] parameter(0)
  ROOT c = f32[17,17] cholesky(a), lower=true
}
"""),
    "hlo_cholesky_upper_f64": ("f64", (2, 9, 9), "spd", """HloModule hlo_cholesky
ENTRY main {
  a = f64[2,9,9] parameter(0)
  ROOT c = f64[2,9,9] cholesky(a), lower=false
}
"""),
    "hlo_cholesky_notpd_f32": ("f32", (5, 5), "notpd", """HloModule hlo_cholesky
ENTRY main {
  a = f32[5,5] parameter(0)
  ROOT c = f32[5,5] cholesky(a), lower=true
}
"""),
}
for _left in (True, False):
    for _lower in (True, False):
        for _unit in (False, True):
            for _t in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
                for _dt in ("f32", "c128"):
                    _b = "[2,17,5]" if _left else "[2,5,17]"
                    HLO_OPS[f"hlo_trisolve_{_dt}_{'left' if _left else 'right'}_{'lower' if _lower else 'upper'}"
                            f"_{'unit' if _unit else 'diag'}_{_t.lower()}"] = (
                        _dt, (2, 17, 17), "lower" if _lower else "upper", f"""HloModule hlo_trisolve
ENTRY main {{
  a = {_dt}[2,17,17] parameter(0)
  b = {_dt}{_b} parameter(1)
  ROOT x = {_dt}{_b} triangular-solve(a, b), left_side={str(_left).lower()}, lower={str(_lower).lower()}, unit_diagonal={str(_unit).lower()}, transpose_a={_t}
}}
""")

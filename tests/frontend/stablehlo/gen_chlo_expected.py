"""Regenerate tests/frontend/stablehlo/data/chlo_<op>.npz: inputs for each CHLO op that
aotc reads as a map of XLA's decomposition, and the outputs XLA:CPU computes for them,
per element type (`<type>_in0`, `<type>_in1`, `<type>_out`; bf16 stored as its uint16 bits).

    python tests/frontend/stablehlo/gen_chlo_expected.py      # needs jax
"""
from __future__ import annotations

import sys
from pathlib import Path

import jax
import numpy as np
from jax import lax

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
jax.config.update("jax_enable_x64", True)

from tests.oracle import xla as oracle  # noqa: E402
from tests.ops.gen_expected import save_npz  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
TYPES = ("f16", "bf16", "f32", "f64")
N = 256
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-30, -1e-30, 1e30, -1e30, np.inf, -np.inf, np.nan,
           0.9999, -0.9999, 3.0, 10.0, -3.5, 1e-5, 100.0]


def _values(rng, lo: float, hi: float, n: int) -> np.ndarray:
    return np.concatenate([SPECIAL, rng.uniform(lo, hi, n - len(SPECIAL))])


def _unary(lo, hi):
    return lambda rng: (_values(rng, lo, hi, N),)


# op -> (jax function, inputs from a generator)
CASES = {
    "acos": (lax.acos, _unary(-1.2, 1.2)), "acosh": (lax.acosh, _unary(0.5, 50)),
    "asin": (lax.asin, _unary(-1.2, 1.2)), "asinh": (lax.asinh, _unary(-30, 30)),
    "atan": (lax.atan, _unary(-30, 30)), "atanh": (lax.atanh, _unary(-1.1, 1.1)),
    "cosh": (lax.cosh, _unary(-12, 12)), "sinh": (lax.sinh, _unary(-12, 12)),
    "erfc": (lax.erfc, _unary(-5, 12)), "erf_inv": (lax.erf_inv, _unary(-1.05, 1.05)),
    "lgamma": (lax.lgamma, _unary(-8, 40)), "digamma": (lax.digamma, _unary(-8, 40)),
    "bessel_i1e": (lax.bessel_i1e, _unary(-40, 40)), "square": (lax.square, _unary(-1e3, 1e3)),
    "next_after": (lax.nextafter, lambda rng: (_values(rng, -4, 4, N), np.concatenate(
        [SPECIAL[::-1], rng.uniform(-4, 4, N - len(SPECIAL))]))),
    "polygamma": (lax.polygamma, lambda rng: (rng.integers(0, 4, N).astype(np.float64), _values(rng, 0.1, 20, N))),
    "zeta": (lax.zeta, lambda rng: (np.concatenate([[2.0, 3.0, 1.0, 0.5, np.inf, np.nan], rng.uniform(1.01, 12, N - 6)]),
                                    np.concatenate([[1.0, 0.5, 2.0, 1.0, 1.0, 1.0], rng.uniform(0.05, 20, N - 6)]))),
}


def main() -> int:
    DATA.mkdir(parents=True, exist_ok=True)
    for op, (fn, gen) in sorted(CASES.items()):
        arrays = {}
        for ty in TYPES:
            with np.errstate(over="ignore"):  # 1e30 is inf in f16
                ins = [v.astype(oracle.np_dtype(ty)) for v in gen(np.random.default_rng(len(op)))]
            if f"chlo.{op}" not in jax.jit(fn).lower(*ins).as_text():
                raise SystemExit(f"{fn} on {ty} is not written as chlo.{op}")
            out = np.asarray(jax.jit(fn)(*ins))
            arrays.update({f"{ty}_in{k}": v for k, v in enumerate(ins)})
            arrays[f"{ty}_out"] = out
        save_npz(DATA / f"chlo_{op}.npz", arrays)
    print(f"wrote {len(CASES)} files to {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

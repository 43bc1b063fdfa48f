"""Regenerate tests/runtime_c/data/xla_math.npz: XLA:CPU's f32 exp, log, tanh, erf,
logistic, expm1 and log1p on seeded inputs (special values, every binade, the ranges where each
approximation changes regime). Expected values never come from aotc.

    python tests/runtime_c/gen_xla_math.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.oracle import xla as oracle  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "xla_math.npz"
OPS = ("exponential", "log", "tanh", "erf", "logistic", "exponential-minus-one", "log-plus-one")
N = 1 << 14


def inputs() -> np.ndarray:
    rng = np.random.default_rng(20261124)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, -1e-40, 1.17549435e-38,
                        -1.17549435e-38, 1.0, -1.0, 0.5, 2.0, 88.72283935546875, 88.7228, 88.73, 89.0,
                        -87.33654022216797, -87.34, -104.0, 7.99881172180175781, -7.99881172180175781, 8.0,
                        0.0004, -0.0004, 0.00039, 3.832506856900711, -3.832506856900711, 3.4e38, -3.4e38,
                        0.70710678, 1.41421356, 0.41421356, -0.41421356, 0.41421357, -0.41421357, 0.4142135,
                        -0.4142135, 0.5, -0.5, 0.50000006, -0.50000006, 0.49999997, -0.49999997, 2.4e-38,
                        -2.4e-38, -0.99999994], np.float32)
    bits = rng.integers(0, 1 << 32, N // 4, dtype=np.uint64).astype(np.uint32).view(np.float32)
    parts = [special, bits, rng.uniform(-100, 100, N // 4), rng.uniform(-9, 9, N // 4),
             rng.uniform(-0.01, 0.01, N // 8), np.exp(rng.uniform(-87, 88, N // 8)), rng.uniform(-0.6, 0.6, N // 4)]
    return np.concatenate([np.asarray(p, np.float32) for p in parts])


def hlo(op: str, n: int) -> str:
    return (f"HloModule m\n\nENTRY e {{\n  x = f32[{n}] parameter(0)\n"
            f"  ROOT y = f32[{n}] {op}(x)\n}}\n")


def main() -> int:
    x = inputs()
    out = {"x": x}
    for op in OPS:
        (y,) = oracle.run_hlo(hlo(op, x.size), [x])
        out[op] = np.asarray(y, np.float32)
    DATA.parent.mkdir(exist_ok=True)
    np.savez_compressed(DATA, **out)
    print(f"wrote {DATA.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

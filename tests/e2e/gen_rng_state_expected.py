"""Writes tests/e2e/data/rng_state.npz: XLA:CPU's outputs of rng_state_model.MODEL executed
RUNS times by one compiled executable (its counters persist across the executions).

    PYTHONPATH=. python tests/e2e/gen_rng_state_expected.py
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.e2e import rng_state_model as R  # noqa: E402
from tests.oracle.xla import XlaExecutable  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "data", "rng_state.npz")


def main() -> None:
    exe = XlaExecutable(R.MODEL)
    x = np.array(R.X, np.uint64)
    runs = [[np.asarray(o) for o in exe.run([x])] for _ in range(R.RUNS)]
    d = {name: np.stack([r[k] for r in runs]) for k, name in enumerate(("a", "big", "loop"))}
    np.savez(OUT, **d)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

"""Regenerate tests/numeric/data/flag_matrix.npz from XLA:CPU (tests/oracle/xla.py):
the flag-matrix model's outputs on its seeded inputs, reduced as cases.reduce says.
Expected values never come from aotc.

    python tests/numeric/gen_expected.py
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.numeric import cases  # noqa: E402
from tests.oracle import xla as oracle  # noqa: E402
from tests.ops.gen_expected import save_npz  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"


def main() -> int:
    outs = oracle.run_hlo(cases.hlo_text(), cases.inputs())
    if len(outs) == 1 and isinstance(outs[0], (list, tuple)):
        outs = list(outs[0])
    assert len(outs) == len(cases.NAMES), f"{len(outs)} outputs for {len(cases.NAMES)} cases"
    arrays = {}
    for k, out in enumerate(outs):
        arrays.update(cases.reduce(out, k))
    DATA.mkdir(parents=True, exist_ok=True)
    save_npz(DATA / "flag_matrix.npz", arrays)
    print(f"flag_matrix: {len(outs)} outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Writes tests/e2e/data/host_calls.npz: inputs and XLA:CPU's outputs for the equivalent
modules of host_models.py (custom calls replaced by HLO, feeds by parameters and results).

    PYTHONPATH=. python tests/e2e/gen_host_expected.py
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.e2e import host_models as H  # noqa: E402
from tests.oracle.xla import run_hlo  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "data", "host_calls.npz")


def main() -> None:
    rng = np.random.default_rng(20261124)
    d: dict[str, np.ndarray] = {}
    x = rng.standard_normal((H.ROWS, H.COLS)).astype(np.float32)
    yx, s = run_hlo(H.CUSTOM_REF, [x])
    d.update(custom_x=x, custom_yx=np.asarray(yx), custom_s=np.asarray(s))

    a = rng.standard_normal(H.WIDTH).astype(np.float32)
    xs = rng.standard_normal((H.STEPS, H.WIDTH)).astype(np.float32)
    ks = rng.integers(-3, 4, H.STEPS).astype(np.int32)
    acc, ys = run_hlo(H.STREAM_REF, [a, xs, ks])
    d.update(stream_a=a, stream_xs=xs, stream_ks=ks, stream_acc=np.asarray(acc), stream_ys=np.asarray(ys))

    xr = rng.standard_normal(H.N).astype(np.float32)
    r = rng.standard_normal(H.N).astype(np.float32)
    for flag in (True, False):
        v, sent = run_hlo(H.SENDRECV_REF, [np.bool_(flag), xr, r])
        d[f"sendrecv_v_{int(flag)}"] = np.asarray(v)
        d[f"sendrecv_sent_{int(flag)}"] = np.asarray(sent)
    d.update(sendrecv_x=xr, sendrecv_r=r)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    np.savez_compressed(OUT, **d)
    print(OUT, {k: v.shape for k, v in d.items()})


if __name__ == "__main__":
    main()

"""The Winograd weight transform a bound weight is stored as (ops/conv_winograd.py
`winograd_weights`, computed in numpy at compile time) against the runtime's
aotc_wino_weights_f32 (what a call computes for a fed weight), bit for bit, for F(2x2,3x3)
and F(4x4,3x3): normal He-scaled weights, values whose transform rounds (thirds, 1/24),
subnormal weights (read as zero) and weights whose transform would be subnormal (flushed),
huge ones that overflow to infinity, infinities and NaN; on every SIMD variant of the
runtime this machine runs."""
from __future__ import annotations

import numpy as np
import pytest

from aotc.ops.conv_winograd import WinogradWeights, winograd_weights

from .conftest import variants


def _weights(C: int, O: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((3, 3, C, O)) * np.sqrt(2.0 / (9 * C))).astype(np.float32)
    flat = w.reshape(-1)
    tiny = np.finfo(np.float32).tiny
    edge = np.array([tiny / 3, -tiny / 2, tiny, tiny * 1.5, -tiny * 3, 1.0 / 3, 2.0 / 3, 1e-37, 3e38, -3e38,
                     np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0], np.float32)
    where = rng.choice(flat.size, min(flat.size, edge.size * 4), replace=False)
    flat[where] = np.tile(edge, 4)[:where.size]
    return w


@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("C,O", [(1, 1), (3, 17), (16, 16), (40, 36), (64, 96)])  # (1, 1): one edge value
def test_stored_transform_is_the_runtime_one(rt_builds, m, C, O):
    w = _weights(C, O, 100 * C + O + m)
    want = winograd_weights(w, WinogradWeights(m, C, O, (3 * C * O, C * O, O, 1)))
    assert want.shape == ((m + 2) ** 2 * C * O,)
    for v in variants():
        rt = rt_builds.get(v)
        got = np.empty_like(want)
        rt.lib.t_wino_weights(m, C, O, rt.ffi.cast("const float*", w.ctypes.data),
                              rt.ffi.cast("float*", got.ctypes.data))
        assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist(), f"{v.name}: F({m}x{m}) C={C} O={O}"

"""aotc_tr_f32 (runtime_c/aotc_transpose.c) on every SIMD path this machine runs: whole
tiles, ragged edges on either side, padded strides, and the bits of every element (NaN
payloads) moved unchanged; nothing outside the destination rows is written."""
from __future__ import annotations

import numpy as np
import pytest

from .conftest import variants

VARIANTS = variants()


@pytest.fixture(scope="module", params=VARIANTS, ids=[v.name for v in VARIANTS])
def tr_rt(request, rt_builds):
    return rt_builds.get(request.param)


SHAPES = [(8, 8), (16, 64), (64, 16), (1, 9), (9, 1), (13, 29), (37, 203), (128, 64), (7, 8), (8, 7), (100, 100)]


@pytest.mark.parametrize("rows,cols", SHAPES)
def test_transpose_moves_every_bit(tr_rt, rows, cols):
    ffi, lib = tr_rt.ffi, tr_rt.lib
    rng = np.random.default_rng(rows * 1000 + cols)
    lds, ldd = rows + 5, cols + 3  # padded rows on both sides
    bits = rng.integers(0, 2**32, (cols, lds), dtype=np.uint64).astype(np.uint32)
    bits[0, :min(rows, 3)] = [0x7F800001, 0xFFC00123, 0x80000000][:min(rows, 3)]
    src = bits.view(np.float32)
    dst = np.full((rows, ldd), 0xDEADBEEF, np.uint32).view(np.float32)
    lib.aotc_tr_f32(rows, cols, ffi.cast("float*", src.ctypes.data), lds,
                    ffi.cast("float*", dst.ctypes.data), ldd)
    d = dst.view(np.uint32)
    assert (d[:, :cols] == bits[:, :rows].T).all()
    assert (d[:, cols:] == 0xDEADBEEF).all(), "wrote past a destination row"

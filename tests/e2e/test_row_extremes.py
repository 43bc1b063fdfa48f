"""Row max and min of f32 (long enough for the quick fold of ops/reduce.py) give the bits of
the exact fold in every case the quick fold hands back: NaNs (which payload wins depends
on the order of the 16 lanes), signed zeros, subnormals, infinities, ties. The expected
bits come from a model of XLA's max/min written here from its definition, folded in the
documented order (16 interleaved partial results, the tail into the first, then combined
in lane order), not from aotc."""
from __future__ import annotations

import numpy as np
import pytest

from .conftest import require_aotc

N = 100  # three blocks of 32, a tail of 4: both loops of either fold
LANES = 16
MIN_NORMAL = np.float32(np.finfo(np.float32).tiny)

HLO = """HloModule row_extremes

max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

min_f32 {
  c = f32[] parameter(0)
  d = f32[] parameter(1)
  ROOT n = f32[] minimum(c, d)
}

ENTRY main {
  x = f32[ROWS,100]{1,0} parameter(0)
  lo = f32[] constant(-inf)
  hi = f32[] constant(inf)
  mx = f32[ROWS]{0} reduce(x, lo), dimensions={1}, to_apply=max_f32
  mn = f32[ROWS]{0} reduce(x, hi), dimensions={1}, to_apply=min_f32
  ROOT t = (f32[ROWS]{0}, f32[ROWS]{0}) tuple(mx, mn)
}
"""


def _bits(v) -> np.uint32:
    return np.asarray(v, np.float32).view(np.uint32)


def _f(bits: int) -> np.float32:
    return np.array([bits], np.uint32).view(np.float32)[0]


def _ftz(b: int) -> int:
    v = _f(b)
    return b & 0x80000000 if abs(v) < MIN_NORMAL else b  # a subnormal flushes to a zero of its sign


def _xla(op: str, a: int, b: int) -> int:
    """XLA:CPU's max/min on bits (measured against XLA in tests/ops/test_edge_sweep.py): both
    operands flushed, max(-0, +0) = +0, min(+0, -0) = -0; a NaN `a` comes back as it is, a NaN
    `b` beside a number `a` with the and (max) or the or (min) of both signs."""
    if _f(b) != _f(b) and _f(a) == _f(a):
        return b & (a | 0x7FFFFFFF) if op == "max" else b | (a & 0x80000000)
    a, b = _ftz(a), _ftz(b)
    fa, fb = _f(a), _f(b)
    neg = bool(a & 0x80000000)
    if op == "max":
        take_a = fa > fb or (fa == fb and not neg) or fa != fa
    else:
        take_a = fa < fb or (fa == fb and neg) or fa != fa
    return a if take_a else b


def _fold(op: str, row: np.ndarray, init: int) -> int:
    bits = [int(b) for b in _bits(row)]
    lanes = [init] * LANES
    body = len(bits) - len(bits) % LANES
    for j in range(0, body, LANES):
        for lane in range(LANES):
            lanes[lane] = _xla(op, lanes[lane], bits[j + lane])
    for t in range(body, len(bits)):
        lanes[0] = _xla(op, lanes[0], bits[t])
    acc = lanes[0]
    for lane in range(1, LANES):
        acc = _xla(op, acc, lanes[lane])
    return acc


def _nan(payload: int, sign: int = 0) -> np.float32:
    return _f(0x7F800000 | payload | (sign << 31))


def _rows() -> np.ndarray:
    rng = np.random.default_rng(7)
    rows = []

    def row(values=None):
        r = (rng.standard_normal(N) * 3).astype(np.float32) if values is None else values
        rows.append(np.asarray(r, np.float32))
        return rows[-1]
    row()                                                # plain numbers: the quick fold answers
    row(-np.abs(row().copy()) - 1)                       # all negative
    r = row().copy(); r[50] = np.inf; row(r)             # +inf is the max
    r = row().copy(); r[::3] = -np.inf; row(r)           # masked entries
    row(np.full(N, -np.inf))                             # all -inf
    row(np.full(N, np.inf))                              # all +inf
    for where in ((5,), (97,), (3, 40), (40, 3), (17, 66, 98)):  # NaNs in different lanes and the tail
        r = row().copy()
        for k, i in enumerate(where):
            r[i] = _nan(0x400000 | (k + 1) * 0x1111, k % 2)
        row(r)
    r = row().copy(); r[9] = _nan(0x000123); row(r)      # a signalling NaN's payload
    row(np.where(np.arange(N) % 2, np.float32(0.0), np.float32(-0.0)))  # signed zeros
    row(np.full(N, -0.0))
    r = np.full(N, -0.0, np.float32); r[77] = 0.0; row(r)
    row(np.full(N, 1e-40, np.float32) * np.where(np.arange(N) % 3, 1, -1).astype(np.float32))  # subnormals
    r = -np.abs(row().copy()); r[31] = -1e-41; row(r)    # max is a subnormal: flushed
    r = np.abs(row().copy()) + 1; r[64] = 1e-39; row(r)  # min is a subnormal
    r = row().copy(); r[12] = -0.0; r[13] = 0.0; row(r)
    row(np.full(N, 2.5))                                 # ties everywhere
    r = row().copy(); r[:] = MIN_NORMAL; r[8] = -MIN_NORMAL; row(r)
    return np.stack(rows)


@pytest.mark.parametrize("threads", [1, 2])
def test_row_max_and_min_bits(tmp_path, threads):
    aotc = require_aotc("run")
    x = _rows()
    hlo = tmp_path / "row_extremes.hlo"
    hlo.write_text(HLO.replace("ROWS", str(len(x))))
    got = aotc.run(str(hlo), inputs={"x": x}, threads=threads)
    mx, mn = (np.asarray(v) for v in got.values())
    want_max = [_fold("max", r, int(_bits(-np.inf))) for r in x]
    want_min = [_fold("min", r, int(_bits(np.inf))) for r in x]
    for k in range(len(x)):
        assert int(_bits(mx[k])) == want_max[k], f"row {k}: max {int(_bits(mx[k])):#010x} != {want_max[k]:#010x}"
        assert int(_bits(mn[k])) == want_min[k], f"row {k}: min {int(_bits(mn[k])):#010x} != {want_min[k]:#010x}"

"""kernel/vectorize.py's `interleave` mark: a wide vector loop of at least four widest
vectors (or of unknown length) whose body calls a long-latency function or divides runs
several vectors per trip; cheap bodies, short loops and 8-lane loops stay one vector per
trip. The printed loops are checked against XLA in tests/ops/test_interleave.py."""
from __future__ import annotations

from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.vectorize import INTERLEAVE, SIMD, WIDE, mark_simd, strided_lanes

F32 = DTYPES["f32"]
I = K.Var("i")
X, OUT = K.Buf("x", F32, 4096), K.Buf("out", F32, 4096)
X_I = K.Load(X, I)


def _marks(value: K.Expr, stop: K.Expr = K.Const(4096)) -> frozenset[str]:
    loop = K.Loop(I, K.Const(0), stop, (K.Store(OUT, I, value),), 1, frozenset({K.VECTOR}))
    (out,), _ = mark_simd((loop,))
    return out.marks


def test_exp_and_division_interleave():
    assert {SIMD, WIDE, INTERLEAVE} <= _marks(K.Call("aotc_exp_f32", (X_I,), F32))
    assert INTERLEAVE in _marks(K.Binary("/", K.Const(1.0, F32), X_I, F32))
    assert INTERLEAVE in _marks(K.Call("aotc_tanh_f32", (X_I,), F32), K.Var("hi"))  # unknown length


def test_cheap_bodies_and_short_loops_do_not():
    assert INTERLEAVE not in _marks(K.Binary("*", X_I, X_I, F32))
    assert INTERLEAVE not in _marks(K.Call("aotc_max_f32", (X_I, K.Const(0.0, F32)), F32))
    marks = _marks(K.Call("aotc_exp_f32", (X_I,), F32), K.Const(48))  # wide (a multiple of 16), three vectors
    assert WIDE in marks and INTERLEAVE not in marks
    marks = _marks(K.Call("aotc_exp_f32", (X_I,), F32), K.Const(20))  # 8 lanes
    assert SIMD in marks and WIDE not in marks and INTERLEAVE not in marks


def _lane_loop(value_of, trip: int = 256) -> K.Loop:
    """for j step 16 { for l < 16 { lane[l] = lane[l] + value(x[j + l]) } }"""
    j, l = K.Var("j"), K.Var("l")
    lanes = K.Buf("lane", F32, 16)
    inner = K.Loop(l, K.Const(0), K.Const(16), (K.Store(lanes, l, K.Binary(
        "+", K.Load(lanes, l), value_of(K.Load(X, K.Binary("+", j, l, K.INDEX))), F32)),), 1, frozenset({K.VECTOR}))
    (out,), _ = mark_simd((K.Loop(j, K.Const(0), K.Const(trip), (inner,), 16, frozenset({K.REDUCTION})),))
    return out


def test_a_reduction_lane_loop_interleaves_its_blocks():
    out = _lane_loop(lambda x: K.Call("aotc_exp_f32", (x,), F32))
    assert INTERLEAVE in out.marks and strided_lanes(out)
    assert INTERLEAVE not in _lane_loop(lambda x: x).marks  # a plain sum
    assert INTERLEAVE not in _lane_loop(lambda x: K.Call("aotc_exp_f32", (x,), F32), 48).marks  # three blocks

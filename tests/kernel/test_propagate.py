"""Index propagation: affine index values inside vector loops become part of the accesses
that use them, so the vectorizer sees contiguous loads and stores."""
from __future__ import annotations

from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.propagate import propagate_indices
from aotc.kernel.vectorize import mark_simd

F32 = DTYPES["f32"]
B, OUT = K.Buf("b", F32), K.Buf("out", F32)
R, C, FIRST = K.Var("r"), K.Var("c"), K.Var("first")


def _loop(inner):
    return (K.Loop(R, K.Const(0), K.Const(64), (K.Loop(C, K.Const(0), K.Const(256), inner, 1,
                                                        frozenset({K.VECTOR})),)),)


def test_an_affine_index_value_is_substituted_and_the_loop_vectorizes():
    col = K.Var("l", K.INDEX)
    body = _loop((K.Let(col, FIRST + C), K.Store(OUT, R * 1024 + col, K.Load(B, col))))
    assert mark_simd(body)[1] is False  # the index is an integer value: not a vector loop yet
    out, changed = propagate_indices(body)
    assert changed
    inner = out[0].body[0]
    assert inner.body == (K.Store(OUT, R * 1024 + (FIRST + C), K.Load(B, FIRST + C)),)
    assert mark_simd(out)[1] is True  # contiguous accesses: a vector loop


def test_other_values_stay():
    q = K.Var("q", K.INDEX)
    body = _loop((K.Let(q, (FIRST + C) // 4), K.Store(OUT, C, K.Load(B, q))))
    assert propagate_indices(body)[1] is False

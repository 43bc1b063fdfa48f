"""kernel/vectorize.py on pred values: a comparison of f32 vector values, & and | of such
masks and a select on a mask keep a loop vector (lane masks of the SIMD vocabulary); a
comparison the vocabulary lacks (!=: true on NaN), a mask stored as a pred, or a select on
a value that does not vary with the loop keep it scalar. The numbers are checked against
XLA in tests/ops/test_select_simd.py."""
from __future__ import annotations

from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.vectorize import SIMD, mark_simd

F32, U8 = DTYPES["f32"], DTYPES["u8"]
I = K.Var("i")
X, Y, OUT = K.Buf("x", F32, 64), K.Buf("y", F32, 64), K.Buf("out", F32, 64)


def _loop(*body: K.Stmt) -> K.Loop:
    return K.Loop(I, K.Const(0), K.Const(64), tuple(body), 1, frozenset({K.VECTOR}))


def _simd(loop: K.Loop) -> bool:
    (out,), _ = mark_simd((loop,))
    return SIMD in out.marks


def _cmp(op: str, a: K.Expr, b: K.Expr) -> K.Expr:
    return K.Cast(K.Binary(op, a, b, K.BOOL), U8)


X_I, Y_I = K.Load(X, I), K.Load(Y, I)


def test_select_on_comparisons_is_vector():
    c, d, e = K.Var("c", U8), K.Var("d", U8), K.Var("e", U8)
    loop = _loop(K.Let(c, _cmp("<", X_I, K.Const(1.0, F32))), K.Let(d, _cmp(">=", Y_I, X_I)),
                 K.Let(e, K.Cast(K.Binary("&", c, d, U8), U8)),
                 K.Store(OUT, I, K.Select(e, K.Binary("*", X_I, Y_I, F32), Y_I, F32)))
    assert _simd(loop)


def test_every_ordered_comparison_and_or_is_vector():
    for op in ("<", "<=", ">", ">=", "=="):
        m = K.Var("m", U8)
        n = K.Var("n", U8)
        loop = _loop(K.Let(m, _cmp(op, X_I, Y_I)), K.Let(n, K.Cast(K.Binary("|", m, _cmp("<", Y_I, X_I), U8), U8)),
                     K.Store(OUT, I, K.Select(n, X_I, Y_I, F32)))
        assert _simd(loop), op


def test_not_equal_stays_scalar():
    m = K.Var("m", U8)
    assert not _simd(_loop(K.Let(m, _cmp("!=", X_I, Y_I)), K.Store(OUT, I, K.Select(m, X_I, Y_I, F32))))


def test_a_mask_stored_as_pred_stays_scalar():
    p = K.Buf("p", U8, 64)
    m = K.Var("m", U8)
    assert not _simd(_loop(K.Let(m, _cmp("<", X_I, Y_I)), K.Store(p, I, m)))


def test_select_on_an_invariant_condition_stays_scalar():
    flag = K.Var("flag", U8)
    assert not _simd(_loop(K.Store(OUT, I, K.Select(flag, X_I, Y_I, F32))))

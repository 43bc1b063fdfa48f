"""Reusing a fold's values in the map over the same row (softmax's exp computed once)."""
from __future__ import annotations

from aotc.emit_c.kernel_c import stmts
from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.reuse import reuse_fold_values

F32 = DTYPES["f32"]
X, OUT = K.Buf("x", F32), K.Buf("out", F32)
R, J, L, T, I = (K.Var(n) for n in ("r", "j", "l", "t", "i"))
M = K.Var("m", F32)


def _exp_at(pos: K.Expr, name: str) -> tuple[K.Stmt, ...]:
    x, d, e = K.Var(f"x_{name}", F32), K.Var(f"d_{name}", F32), K.Var(f"e_{name}", F32)
    return (K.Let(x, K.Load(X, R * 20 + pos)), K.Let(d, K.Binary("-", x, M, F32)),
            K.Let(e, K.Call("aotc_exp_f32", (d,), F32)))


def _row(tail: bool = True, map_pos: K.Expr = I) -> tuple[K.Stmt, ...]:
    """sum_k exp(x[r,k] - m) over k < 20 in 8 lanes plus a tail, then out[r,i] = exp(x[r,i] - m) * s."""
    lane, acc, s = K.Buf("lane", F32, 8), K.Var("acc", F32), K.Var("s", F32)
    fold = K.Loop(J, K.Const(0), K.Const(16), (K.Loop(L, K.Const(0), K.Const(8), _exp_at(J + L, "f") + (
        K.Store(lane, L, K.Binary("+", K.Load(lane, L), K.Var("e_f", F32), F32)),), 1, frozenset({K.VECTOR})),), 8)
    tail_loop = K.Loop(T, K.Const(16), K.Const(20), _exp_at(T, "t") + (
        K.Store(lane, K.Const(0), K.Binary("+", K.Load(lane, K.Const(0)), K.Var("e_t", F32), F32)),))
    out = K.Loop(I, K.Const(0), K.Const(20), _exp_at(map_pos, "m") + (
        K.Store(OUT, R * 20 + I, K.Binary("*", K.Var("e_m", F32), s, F32)),), 1, frozenset({K.VECTOR}))
    body = (K.ArrayDecl(lane, K.Const(0.0, F32)), fold) + ((tail_loop,) if tail else ()) + (
        K.Let(s, K.Load(lane, K.Const(0))), out)
    return (K.Loop(R, K.Const(0), K.Const(4), body),)


def test_the_map_loads_what_the_fold_computed():
    body, changed = reuse_fold_values(_row())
    assert changed
    text = "\n".join(stmts(body))
    assert text.count("aotc_exp_f32") == 2  # the fold's main loop and its tail only
    assert "row_e_m[j + l] = e_f;" in text and "row_e_m[t] = e_t;" in text
    assert "const float e_m = row_e_m[i];" in text
    assert "x_m" not in text  # the map's own loads went with the value


def test_a_fold_that_misses_part_of_the_row_is_not_reused():
    assert not reuse_fold_values(_row(tail=False))[1]


def test_a_map_reading_other_elements_is_not_reused():
    assert not reuse_fold_values(_row(map_pos=K.Const(19) - I))[1]

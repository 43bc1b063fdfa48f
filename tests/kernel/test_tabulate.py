"""Per-column tables: a costly value that depends only on the innermost loop's index is
computed once per column before the nest (BatchNorm's rsqrt per channel), with the same
expression, so the bits do not change; values that could change inside the nest stay."""
from __future__ import annotations

from aotc.emit_c.kernel_c import stmts
from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.passes import run_kernel_passes
from aotc.kernel.tabulate import tabulate_columns

F32 = DTYPES["f32"]
X, V, OUT = K.Buf("x", F32), K.Buf("var", F32), K.Buf("out", F32)
R, C = K.Var("r"), K.Var("c")


def _bn_nest(rows: int = 100, marks=frozenset({K.PARALLEL})) -> tuple[K.Stmt, ...]:
    s = K.Var("s", F32)
    inner = (K.Let(s, K.Call("aotc_rsqrt_f32", (K.Binary("+", K.Load(V, C), K.Const(1e-3, F32), F32),), F32)),
             K.Store(OUT, R * 64 + C, K.Binary("*", K.Load(X, R * 64 + C), s, F32)))
    return (K.Loop(R, K.Const(0), K.Const(rows), (K.Loop(C, K.Const(0), K.Const(64), inner, 1,
                                                          frozenset({K.VECTOR})),), 1, marks),)


def test_a_costly_per_column_value_is_computed_once_per_column():
    out, changed = tabulate_columns(_bn_nest())
    assert changed
    text = "\n".join(stmts(out))
    assert text.count("aotc_rsqrt_f32") == 1
    assert text.index("aotc_rsqrt_f32") < text.index("for (int64_t r")
    assert "s = col_s[c]" in text.replace("const float ", "")


def test_the_tabled_kernel_still_splits_over_threads():
    body, trip = run_kernel_passes(_bn_nest(4096))
    assert trip == 4096  # the row loop runs the thread's [lo, hi); every thread fills its own table
    assert isinstance(body[0], K.ArrayDecl) and K.PARALLEL in body[2].marks


def test_values_the_nest_may_change_stay():
    s = K.Var("s", F32)
    inner = (K.Let(s, K.Call("aotc_rsqrt_f32", (K.Load(V, C),), F32)),
             K.Store(V, C, K.Binary("*", K.Load(X, R * 64 + C), s, F32)))  # the nest writes var
    body = (K.Loop(R, K.Const(0), K.Const(8), (K.Loop(C, K.Const(0), K.Const(64), inner),)),)
    assert tabulate_columns(body)[1] is False
    row = K.Var("row", F32)
    inner = (K.Let(row, K.Load(X, R)), K.Let(s, K.Call("aotc_rsqrt_f32", (row,), F32)),
             K.Store(OUT, R * 64 + C, s))  # depends on the row: not per column
    body = (K.Loop(R, K.Const(0), K.Const(8), (K.Loop(C, K.Const(0), K.Const(64), inner),)),)
    assert tabulate_columns(body)[1] is False


def test_cheap_values_and_single_rows_are_left_alone():
    s = K.Var("s", F32)
    inner = (K.Let(s, K.Binary("+", K.Load(V, C), K.Const(1.0, F32), F32)),
             K.Store(OUT, R * 64 + C, s))
    body = (K.Loop(R, K.Const(0), K.Const(8), (K.Loop(C, K.Const(0), K.Const(64), inner),)),)
    assert tabulate_columns(body)[1] is False
    assert tabulate_columns(_bn_nest(rows=1))[1] is False

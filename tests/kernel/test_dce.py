"""kernel/dce.py: values nothing reads are dropped, those something reads are kept."""
from __future__ import annotations

from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.dce import remove_unused_values

F32 = DTYPES["f32"]
X = K.Buf("x", F32, 8)
Y = K.Buf("y", F32, 8)


def v(name: str) -> K.Var:
    return K.Var(name, F32)


def test_a_chain_of_unread_values_goes_and_what_a_store_reads_stays():
    i = K.Var("i", K.INDEX)
    body = (K.Loop(i, K.Const(0), K.Const(8), (
        K.Let(v("a"), K.Load(X, i)),
        K.Let(v("dead1"), K.Binary("*", v("a"), v("a"), F32)),
        K.Let(v("dead2"), K.Binary("+", v("dead1"), v("a"), F32)),
        K.Store(Y, i, v("a")),
    )),)
    out, changed = remove_unused_values(body)
    assert changed
    (loop,) = out
    assert [s.var.name for s in loop.body if isinstance(s, K.Let)] == ["a"]
    assert remove_unused_values(out) == (out, False)


def test_a_local_only_assigned_goes_with_its_assignments():
    body = (K.Decl(v("t")),
            K.If(K.Binary("<", K.Load(X, K.Const(0)), K.Const(0.0), K.BOOL),
                 (K.Assign(v("t"), K.Const(1.0)),), (K.Assign(v("t"), K.Const(2.0)),)),
            K.Store(Y, K.Const(0), K.Const(3.0)))
    out, changed = remove_unused_values(body)
    assert changed and not any(isinstance(s, (K.Decl, K.Assign)) for s in K.walk(out))


def test_an_accumulator_passed_by_pointer_stays():
    body = (K.Decl(v("acc"), K.Const(0.0)),
            K.CallStmt("aotc_fold", (K.Ptr(var=v("acc")), K.Ptr(X))),
            K.Store(Y, K.Const(0), K.Const(0.0)))
    assert remove_unused_values(body) == (body, False)

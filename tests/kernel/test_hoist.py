"""Loop-invariant hoisting on the IR."""
from __future__ import annotations

from aotc.emit_c.kernel_c import stmts
from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.hoist import hoist_invariants

F32 = DTYPES["f32"]
X, Y, OUT = K.Buf("x", F32), K.Buf("y", F32), K.Buf("out", F32)
I, J = K.Var("i"), K.Var("j")


def _nest(inner: tuple[K.Stmt, ...], trip: int = 4) -> tuple[K.Stmt, ...]:
    return (K.Loop(I, K.Const(0), K.Const(trip), (K.Loop(J, K.Const(0), K.Const(8), inner),)),)


def test_a_row_value_moves_out_of_the_inner_loop():
    scale = K.Var("s", F32)
    body = _nest((K.Let(scale, K.Call("aotc_rsqrt_f32", (K.Load(Y, I),), F32)),
                  K.Store(OUT, I * 8 + J, K.Binary("*", K.Load(X, I * 8 + J), scale, F32))))
    out, changed = hoist_invariants(body)
    assert changed
    text = "\n".join(stmts(out))
    assert text.index("aotc_rsqrt_f32") < text.index("for (int64_t j")


def test_a_value_read_from_a_buffer_the_loop_writes_stays():
    v = K.Var("v", F32)
    body = _nest((K.Let(v, K.Load(OUT, I)), K.Store(OUT, I * 8 + J, v)))
    out, changed = hoist_invariants(body)
    inner = out[0].body[0]
    assert isinstance(inner, K.Loop) and inner.body[0] == K.Let(v, K.Load(OUT, I))


def test_values_inside_branches_and_loops_of_unknown_trip_stay():
    v = K.Var("v", F32)
    guarded = _nest((K.If(K.Var("c").lt(1), (K.Let(v, K.Load(X, I)), K.Store(OUT, J, v))),))
    assert hoist_invariants(guarded)[1] is False
    dynamic = (K.Loop(J, K.Const(0), K.Var("n"), (K.Let(v, K.Load(X, K.Const(0))), K.Store(OUT, J, v))),)
    assert hoist_invariants(dynamic)[1] is False


def test_a_value_of_an_accumulator_assigned_in_the_loop_stays():
    acc, v = K.Var("acc", F32), K.Var("v", F32)
    body = (K.Decl(acc, K.Const(0.0, F32)),
            K.Loop(J, K.Const(0), K.Const(8), (K.Let(v, K.Binary("+", acc, K.Const(1.0, F32), F32)),
                                              K.Assign(acc, v))))
    assert hoist_invariants(body)[1] is False


def test_values_move_out_of_every_loop_they_do_not_depend_on():
    v = K.Var("v", F32)
    body = _nest((K.Let(v, K.Load(Y, K.Const(3))), K.Store(OUT, I * 8 + J, v)))
    out, _ = hoist_invariants(body)
    assert out[0] == K.Let(v, K.Load(Y, K.Const(3)))


def _fold_in_row(extra_after: tuple[K.Stmt, ...] = ()) -> tuple[K.Stmt, ...]:
    """out[i,j] = x[i,j] / sum_k x[i,k], the sum built inside the j loop (as a fused row
    reduction is) -- it moves out of the j loop whole."""
    acc, v, k = K.Var("acc", F32), K.Var("v", F32), K.Var("k")
    fold = (K.Decl(acc, K.Const(0.0, F32)),
            K.Loop(k, K.Const(0), K.Const(8), (K.Assign(acc, K.Binary("+", acc, K.Load(X, I * 8 + k), F32)),)),
            *extra_after,
            K.Let(v, K.Binary("/", K.Load(X, I * 8 + J), acc, F32)),
            K.Store(OUT, I * 8 + J, v))
    return _nest(fold)


def test_a_row_fold_moves_out_of_the_column_loop():
    out, changed = hoist_invariants(_fold_in_row())
    assert changed
    row = out[0].body
    assert isinstance(row[0], K.Decl) and isinstance(row[1], K.Loop) and row[1].var.name == "k"
    assert isinstance(row[2], K.Loop) and row[2].var.name == "j"


def test_a_fold_whose_accumulator_the_column_loop_also_writes_stays():
    acc = K.Var("acc", F32)
    out, _ = hoist_invariants(_fold_in_row((K.Assign(acc, K.Binary("*", acc, K.Load(X, J), F32)),)))
    inner = out[0].body[-1]
    assert isinstance(inner, K.Loop) and inner.var.name == "j"
    assert isinstance(inner.body[0], K.Decl)


def test_a_fold_over_a_buffer_the_loop_stores_to_stays():
    acc, k = K.Var("acc", F32), K.Var("k")
    body = _nest((K.Decl(acc, K.Const(0.0, F32)),
                  K.Loop(k, K.Const(0), K.Const(8), (K.Assign(acc, K.Binary("+", acc, K.Load(OUT, k), F32)),)),
                  K.Store(OUT, I * 8 + J, acc)))
    out, _ = hoist_invariants(body)
    inner = out[0].body[0]
    assert isinstance(inner, K.Loop) and inner.var.name == "j" and isinstance(inner.body[0], K.Decl)


def test_an_accumulator_a_call_writes_through_its_address_stays():
    acc, k = K.Var("acc", F32), K.Var("k")
    body = _nest((K.Decl(acc, K.Const(0.0, F32)),
                  K.Loop(k, K.Const(0), K.Const(8), (K.CallStmt("r_fn", (acc, K.Load(X, k), K.Ptr(var=acc))),)),
                  K.Store(OUT, I * 8 + J, acc)))
    out, _ = hoist_invariants(body)
    inner = out[0].body[0]
    assert isinstance(inner, K.Loop) and inner.var.name == "j" and isinstance(inner.body[0], K.Decl)

"""kernel/unswitch.py: a vector loop's branch on a condition the loop does not change goes
around two copies of the loop; a branch on the loop variable against a constant splits the
loop's range; each copy is straight-line and vectorizes. Conditions that read memory, call,
or use what the body binds stay inside. The numbers are checked against XLA in
tests/ops/test_unswitch.py."""
from __future__ import annotations

import itertools

import pytest

from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.unswitch import MAX_COPIES, unswitch_invariant_branches
from aotc.kernel.vectorize import SIMD, mark_simd

F32 = DTYPES["f32"]
C, P = K.Var("c"), K.Var("p")
X, Y, OUT = K.Buf("x", F32, 640), K.Buf("y", F32, 64), K.Buf("out", F32, 64)
V = K.Var("v", F32)


def _loop(*body: K.Stmt, start: int = 0, stop: int = 64) -> K.Loop:
    return K.Loop(C, K.Const(start), K.Const(stop), tuple(body), 1, frozenset({K.VECTOR}))


def _padded(cond: K.Expr) -> K.Loop:
    """out[c] = max(out[c], in bounds ? x[p*64 + c] : 0), as a fused pad under a window."""
    return _loop(K.Decl(V),
                 K.If(cond, (K.Assign(V, K.Load(X, P * 64 + C)),), (K.Assign(V, K.Const(0.0, F32)),)),
                 K.Store(OUT, C, K.Call("aotc_max_f32", (K.Load(OUT, C), V), F32)))


def _loops(body: tuple[K.Stmt, ...]) -> list[K.Loop]:
    return [s for s in K.walk(body) if isinstance(s, K.Loop)]


def test_an_invariant_bounds_test_goes_around_two_vector_loops():
    out, changed = unswitch_invariant_branches((_padded(K.Binary("&", P.ge(0), P.lt(10), K.BOOL)),))
    assert changed and len(out) == 1 and isinstance(out[0], K.If)
    loops = _loops(out)
    assert len(loops) == 2 and not any(isinstance(s, (K.If, K.Decl, K.Assign)) for lp in loops for s in lp.body)
    marked, _ = mark_simd(out)
    assert all(SIMD in lp.marks for lp in _loops(marked))


@pytest.mark.parametrize("cond", [
    K.Load(Y, K.Const(0)).lt(K.Const(1.0, F32)),       # reads memory
    K.Binary("<", K.Call("f", (P,), K.INDEX), K.Const(3), K.BOOL),  # calls
    C.lt(K.Var("n")),                                  # the loop variable against an unknown bound
], ids=["load", "call", "unknown-bound"])
def test_conditions_that_are_not_safe_to_take_out_stay(cond):
    assert unswitch_invariant_branches((_padded(cond),))[1] is False


def test_a_condition_on_a_value_the_body_binds_stays():
    w = K.Var("w")
    loop = _loop(K.Let(w, C + 1), K.If(w.lt(3), (K.Store(OUT, C, K.Const(1.0, F32)),)))
    assert unswitch_invariant_branches((loop,))[1] is False


def test_loops_not_marked_vector_or_holding_loops_are_left():
    plain = K.Loop(C, K.Const(0), K.Const(64), _padded(P.lt(3)).body)
    assert unswitch_invariant_branches((plain,))[1] is False
    threads_split = K.Loop(C, K.Const(0), K.Const(64), _padded(P.lt(3)).body, 1, frozenset({K.VECTOR, K.PARALLEL}))
    assert unswitch_invariant_branches((threads_split,))[1] is False
    assert unswitch_invariant_branches((K.Loop(P, K.Const(0), K.Const(4), (threads_split,)),))[1] is True
    holding = _loop(K.If(P.lt(3), (K.Loop(K.Var("k"), K.Const(0), K.Const(4), (K.Store(OUT, C, K.Const(1.0, F32)),)),)))
    assert unswitch_invariant_branches((holding,))[1] is False


def _concat(*bounds: int) -> K.Loop:
    """out[c] = piece k's value for c in [bounds[k-1], bounds[k]) as nested ifs, as a fused concatenate."""
    def pick(k: int) -> tuple[K.Stmt, ...]:
        value = (K.Assign(V, K.Load(X, K.Const(k * 64) + C)),)
        if k == len(bounds) - 1:
            return value
        return (K.If(C.lt(bounds[k]), value, pick(k + 1)),)
    return _loop(K.Decl(V), *pick(0), K.Store(OUT, C, V), stop=bounds[-1])


def test_a_concatenation_splits_the_range_at_each_boundary():
    out, changed = unswitch_invariant_branches((_concat(24, 40, 61),))
    assert changed
    assert [(lp.start.value, lp.stop.value) for lp in out] == [(0, 24), (24, 40), (40, 61)]
    for k, lp in enumerate(out):
        assert lp.body == (K.Let(V, K.Load(X, K.Const(k * 64) + C)), K.Store(OUT, C, V))
    assert all(SIMD in lp.marks for lp in mark_simd(out)[0])


def _taken(body: tuple[K.Stmt, ...], c: int) -> int:
    """Which store value (1.0 then, 2.0 else) the unswitched statements run for c."""
    for s in body:
        if isinstance(s, K.Loop) and s.start.value <= c < s.stop.value:
            (st,) = s.body
            return int(st.value.value)
    raise AssertionError(f"no loop runs c={c}")


@pytest.mark.parametrize("op,side,k", list(itertools.product(("<", "<=", ">", ">="), ("left", "right"), (-70, -3, 0, 5, 64, 90))))
def test_split_points_agree_with_the_condition(op, side, k):
    """c + k OP 17 and 17 OP c + k over c in [2, 64): every comparison, either side, bounds
    inside and outside the range."""
    a, b = (C + k, K.Const(17)) if side == "left" else (K.Const(17), C + k)
    loop = _loop(K.If(K.Binary(op, a, b, K.BOOL), (K.Store(OUT, C, K.Const(1.0, F32)),),
                      (K.Store(OUT, C, K.Const(2.0, F32)),)), start=2)
    out, _ = unswitch_invariant_branches((loop,))
    py = {"<": lambda u, w: u < w, "<=": lambda u, w: u <= w, ">": lambda u, w: u > w, ">=": lambda u, w: u >= w}[op]
    for c in range(2, 64):
        u, w = (c + k, 17) if side == "left" else (17, c + k)
        assert _taken(out, c) == (1 if py(u, w) else 2), (op, side, k, c)


def test_nested_invariant_branches_stop_at_the_copy_budget():
    conds = [K.Var(f"p{i}").lt(3) for i in range(6)]
    body: tuple[K.Stmt, ...] = (K.Store(OUT, C, K.Const(0.0, F32)),)
    for cond in conds:
        body = (K.If(cond, body, (K.Store(OUT, C, K.Const(1.0, F32)),)),)
    out, changed = unswitch_invariant_branches((_loop(*body),))
    assert changed and 1 < len(_loops(out)) <= MAX_COPIES

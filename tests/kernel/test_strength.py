"""kernel/strength.py: max and min with a normal constant of the right sign become picks;
every other bound (zero, subnormal, NaN, the wrong sign, a variable) keeps the general helper.
That a pick gives max's bits is tests/runtime_c/test_math.py's business."""
from __future__ import annotations

import pytest

from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.strength import pick_constant_bounds

F32, F64 = DTYPES["f32"], DTYPES["f64"]
X = K.Buf("x", F32, 8)
Y = K.Buf("y", F32, 8)
I = K.Var("i", K.INDEX)


def _body(value: K.Expr) -> tuple[K.Stmt, ...]:
    return (K.Loop(I, K.Const(0), K.Const(8), (K.Let(K.Var("v", value.ty), value), K.Store(Y, I, K.Var("v", F32)))),)


def _value(body) -> K.Expr:
    return body[0].body[0].value


def _call(fn, a, b, ty=F32):
    return K.Call(fn, (a, b), ty)


@pytest.mark.parametrize("fn,c,pick", [
    ("aotc_max_f32", 0.1, "aotc_pick_gt_f32"),
    ("aotc_max_f32", 1.1754943508222875e-38, "aotc_pick_gt_f32"),  # the smallest normal
    ("aotc_max_f32", float("inf"), "aotc_pick_gt_f32"),
    ("aotc_min_f32", -2.0, "aotc_pick_lt_f32"),
    ("aotc_min_f32", float("-inf"), "aotc_pick_lt_f32"),
])
def test_a_normal_bound_becomes_a_pick_with_the_constant_first(fn, c, pick):
    x = K.Load(X, I)
    for args in ((x, K.Const(c, F32)), (K.Const(c, F32), x)):
        out, changed = pick_constant_bounds(_body(_call(fn, *args)))
        assert changed
        assert _value(out) == K.Call(pick, (K.Const(c, F32), x), F32)


@pytest.mark.parametrize("fn,c", [
    ("aotc_max_f32", 0.0), ("aotc_max_f32", -0.0), ("aotc_max_f32", 1e-40),  # flushed operands tie with these
    ("aotc_max_f32", -1.0), ("aotc_min_f32", 1.0), ("aotc_min_f32", -1e-40),  # the wrong sign
    ("aotc_max_f32", float("nan")), ("aotc_max_f32", float("-inf")),
])
def test_other_bounds_keep_the_general_helper(fn, c):
    body = _body(_call(fn, K.Load(X, I), K.Const(c, F32)))
    assert pick_constant_bounds(body) == (body, False)


def test_variables_and_nested_calls():
    x = K.Load(X, I)
    both_vars = _body(_call("aotc_max_f32", x, K.Var("m", F32)))
    assert pick_constant_bounds(both_vars) == (both_vars, False)
    # a clamp: min(max(x, 1), 6) -- both become picks, inside out
    clamp = _call("aotc_min_f32", _call("aotc_max_f32", x, K.Const(1.0, F32)), K.Const(6.0, F32))
    out, changed = pick_constant_bounds(_body(clamp))
    assert changed
    inner = K.Call("aotc_pick_gt_f32", (K.Const(1.0, F32), x), F32)
    assert _value(out) == K.Call("aotc_min_f32", (inner, K.Const(6.0, F32)), F32)  # 6 is not negative


def test_f64_bounds_use_the_f64_normal_range():
    x = K.Var("d", F64)
    out, changed = pick_constant_bounds(_body(_call("aotc_max_f64", x, K.Const(1e-300, F64), F64)))
    assert changed and _value(out).fn == "aotc_pick_gt_f64"
    # 1e-39 is normal as an f64 but subnormal as an f32: no f32 pick
    body = _body(_call("aotc_max_f32", K.Load(X, I), K.Const(1e-39, F32)))
    assert pick_constant_bounds(body) == (body, False)

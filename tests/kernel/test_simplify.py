"""Affine index simplification: decomposed-and-recomposed indices read as written."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from aotc.emit_c.kernel_c import expr
from aotc.kernel import ir as K
from aotc.kernel.builder import Index, KernelBuilder
from aotc.kernel.simplify import bounds, simplify, simplify_indices

L = K.Var("l")


def test_flat_index_through_three_dims_is_the_flat_index():
    env = {"l": (0, 63)}
    e = (L // 16) * 16 + ((L // 4) % 4) * 4 + L % 4
    assert expr(simplify(e, env)) == "l"


def test_partial_recomposition_is_a_remainder():
    env = {"l": (0, 1023)}
    e = ((L // 4) % 4) * 4 + L % 4
    assert expr(simplify(e, env)) == "l % 16"


def test_division_of_a_nest_index_splits_off_multiples():
    env = {"i": (0, 7), "j": (0, 15)}
    i, j = K.Var("i"), K.Var("j")
    assert expr(simplify((i * 16 + j) // 16, env)) == "i"
    assert expr(simplify((i * 16 + j) % 16, env)) == "j"


def test_remainder_of_a_small_value_is_the_value():
    assert expr(simplify(L % 64, {"l": (0, 63)})) == "l"
    assert expr(simplify(L % 64, {"l": (0, 64)})) == "l % 64"


def test_unknown_ranges_are_left_alone():
    assert expr(simplify((L // 16) * 16 + L % 16, {})) in ("l", "l / 16 * 16 + l % 16")


def test_negative_offsets_keep_their_sign():
    i = K.Var("i")
    e = simplify(i - 1, {"i": (0, 9)})
    assert expr(e) == "i - 1"
    assert bounds(e, {"i": (0, 9)}) == (-1, 8)


def test_the_builder_round_trip_simplifies_inside_a_loop():
    kb = KernelBuilder(set(), {}, {}, lambda op: None, {})
    buf = K.Buf("out", K.INDEX)
    i = kb.loop("i", 120, (K.PARALLEL,))
    idx = Index((2, 3, 4, 5), linear=i)
    kb.exprs(idx)
    idx.linear = None
    kb.store(buf, kb.linear(idx), K.Const(1))
    kb.close()
    body, changed = simplify_indices(kb.body())
    assert changed
    store = [s for s in K.walk(body) if isinstance(s, K.Store)][0]
    assert expr(store.index) == "i"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=4), st.data())
def test_simplified_index_has_the_same_value(dims, data):
    """Any row-major decomposition, permuted sums of its parts, evaluated at every point."""
    total = 1
    for n in dims:
        total *= n
    env = {"l": (0, total - 1)}
    strides = [1] * len(dims)
    for d in range(len(dims) - 2, -1, -1):
        strides[d] = strides[d + 1] * dims[d + 1]
    parts = [((L // s) % n if d else L // s) for d, (n, s) in enumerate(zip(dims, strides))]
    coeffs = data.draw(st.lists(st.integers(0, 5), min_size=len(dims), max_size=len(dims)))
    e: K.Expr = K.Const(data.draw(st.integers(-3, 3)))
    for p, c in zip(parts, coeffs):
        e = e + p * c
    s = simplify(e, env)
    for v in range(total):
        assert _eval(s, {"l": v}) == _eval(e, {"l": v})


def _eval(e: K.Expr, at: dict[str, int]) -> int:
    """C's value of index expression `e` with its variables at `at`."""
    if isinstance(e, K.Const):
        return e.value
    if isinstance(e, K.Var):
        return at[e.name]
    a, b = _eval(e.a, at), _eval(e.b, at)
    if e.op == "+":
        return a + b
    if e.op == "-":
        return a - b
    if e.op == "*":
        return a * b
    if e.op == "/":
        return int(a / b)
    return a - b * int(a / b)


def test_a_product_of_two_variables_is_an_atom():
    r, n, c = K.Var("r"), K.Var("n"), K.Var("c")
    e = (r * n + c) + (r * n + c) * 0  # r * n has no affine reading: kept, not simplified forever
    assert expr(simplify(e, {})) == "r * n + c"


def test_a_strided_loop_ends_on_its_grid():
    """`for (j = 0; j < 256; j += 16)` never passes 240, so `(j + l) % 256` with l < 16 is
    `j + l` (a broadcast weight's column in a row reduction vectorizes)."""
    j, l = K.Var("j"), K.Var("l")
    buf = K.Buf("out", K.INDEX)
    inner = K.Loop(l, K.Const(0), K.Const(16), (K.Store(buf, (j + l) % 256, K.Const(1)),))
    body, changed = simplify_indices((K.Loop(j, K.Const(0), K.Const(256), (inner,), 16),))
    assert changed
    store = [s for s in K.walk(body) if isinstance(s, K.Store)][0]
    assert expr(store.index) == "j + l"
    # a grid that does not divide the stop: the last value is 250, and 250 + 15 passes 256
    inner = K.Loop(l, K.Const(0), K.Const(16), (K.Store(buf, (j + l) % 256, K.Const(1)),))
    body, _ = simplify_indices((K.Loop(j, K.Const(0), K.Const(256), (inner,), 10),))
    store = [s for s in K.walk(body) if isinstance(s, K.Store)][0]
    assert expr(store.index) == "(j + l) % 256"


def test_a_merged_index_split_by_a_common_factor():
    """(f*64 + i) / 256 == f / 4 and (f*64 + i) % 256 == f % 4 * 64 + i for 0 <= i < 64 (a
    transpose read through a reshape: no division left in the inner loop)."""
    env = {"f": (0, 511), "i": (0, 63)}
    f, i = K.Var("f"), K.Var("i")
    assert expr(simplify((f * 64 + i) // 256, env)) == "f / 4"
    assert expr(simplify((f * 64 + i) % 256, env)) in ("f % 4 * 64 + i", "i + f % 4 * 64")
    # i may reach 64: no common factor splits it off
    assert "256" in expr(simplify((f * 64 + i) // 256, {"f": (0, 511), "i": (0, 64)}))
    # f may be negative: C's division truncates toward zero, the identity does not hold
    assert "256" in expr(simplify((f * 64 + i) // 256, {"f": (-4, 511), "i": (0, 63)}))
    # the factor comes from the coefficients, whatever the divisor's size
    big = {"f": (0, 10**7), "i": (0, 999)}
    assert expr(simplify((f * 1000 + i) // (1000 * 1009), big)) == "f / 1009"


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(0, 20), st.sampled_from([2, 4, 6, 8, 12, 16, 24, 64]),
       st.integers(0, 3), st.sampled_from(["/", "%"]))
def test_two_variable_division_has_the_same_value(nf, ni, ci, d, k, op):
    """(a*f + b*i + k) / d and % d over whole ranges of f and i, simplified, equal C's values."""
    f, i = K.Var("f"), K.Var("i")
    a = d // 2 if d % 2 == 0 else 1
    e = f * a + i * ci + K.Const(k)
    e = e // d if op == "/" else e % d
    env = {"f": (0, nf - 1), "i": (0, ni - 1)}
    s = simplify(e, env)
    for fv in range(nf):
        for iv in range(ni):
            at = {"f": fv, "i": iv}
            assert _eval(s, at) == _eval(e, at), (expr(e), expr(s), fv, iv)

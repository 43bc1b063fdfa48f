"""kernel/contract.py: a product read once, in its own block, by an add or subtract
becomes aotc_fma; a product read twice, one from an outer block, an f16 one, or a
multiply that is not a float product keeps its two roundings. That the fused forms give
XLA:CPU's bits is tests/ops/test_contract.py's business."""
from __future__ import annotations

from aotc.hlo.dtypes import DTYPES
from aotc.kernel import ir as K
from aotc.kernel.contract import contract_multiply_adds

F32, F16 = DTYPES["f32"], DTYPES["f16"]
X, Y, Z = (K.Buf(n, F32, 8) for n in "xyz")
I = K.Var("i", K.INDEX)
M, S = K.Var("m", F32), K.Var("s", F32)


def _loop(*stmts) -> tuple[K.Stmt, ...]:
    return (K.Loop(I, K.Const(0), K.Const(8), stmts),)


def _ld(buf):
    return K.Load(buf, I)


def test_single_use_product_is_fused_and_its_let_dropped():
    body = _loop(K.Let(M, K.Binary("*", _ld(X), _ld(Y), F32)),
                 K.Let(S, K.Binary("+", K.Var("m", F32), _ld(Z), F32)), K.Store(Z, I, S))
    out, changed = contract_multiply_adds(body)
    assert changed
    (let, store) = out[0].body
    assert let == K.Let(S, K.Call("aotc_fma_f32", (_ld(X), _ld(Y), _ld(Z)), F32)) and store == K.Store(Z, I, S)


def test_subtracting_a_product_negates_its_first_factor():
    body = _loop(K.Let(M, K.Binary("*", _ld(X), _ld(Y), F32)), K.Store(Z, I, K.Binary("-", _ld(Z), M, F32)))
    out, _ = contract_multiply_adds(body)
    neg = K.Call("aotc_neg_f32", (_ld(X),), F32)
    assert out[0].body == (K.Store(Z, I, K.Call("aotc_fma_f32", (neg, _ld(Y), _ld(Z)), F32)),)


def test_of_two_products_the_first_is_fused():
    e = K.Binary("+", K.Binary("*", _ld(X), _ld(Y), F32), K.Binary("*", _ld(Z), _ld(Z), F32), F32)
    out, _ = contract_multiply_adds(_loop(K.Store(Z, I, e)))
    assert out[0].body[0].value == K.Call("aotc_fma_f32", (_ld(X), _ld(Y), e.b), F32)


def test_a_product_read_twice_is_not_fused():
    body = _loop(K.Let(M, K.Binary("*", _ld(X), _ld(Y), F32)),
                 K.Let(S, K.Binary("+", M, _ld(Z), F32)), K.Store(Z, I, K.Binary("*", S, M, F32)))
    assert contract_multiply_adds(body) == (body, False)


def test_a_product_from_an_outer_block_is_not_fused():
    p = K.Var("p", F32)
    body = (K.Let(p, K.Binary("*", K.Const(2.0, F32), K.Const(3.0, F32), F32)),
            *_loop(K.Store(Z, I, K.Binary("+", p, _ld(X), F32))))
    assert contract_multiply_adds(body) == (body, False)


def test_half_precision_products_are_not_fused():
    h = K.Buf("h", F16, 8)
    e = K.Binary("+", K.Binary("*", K.Load(h, I), K.Load(h, I), F16), K.Load(h, I), F16)
    body = _loop(K.Store(h, I, e))
    assert contract_multiply_adds(body) == (body, False)

"""Dots on the packed GEMM in every dimension-number arrangement attention produces:
q.k^T and p.v batched over heads (`bqd,bkd->bqk`, `bqk,bkd->bqd`, `bqhd,bkhd->bhqk`,
`bhqk,bkhd->bhqd`, the BERT export's `dot(v, softmax)` contracting dimension 1), an
operand transposed on either side, contracting pairs listed against memory order,
free dimensions that are not one stride (looped GEMM calls, either side), epilogues on
looped calls, f64 and bf16, at attention sizes ([4,128,64] and up). The plan each case
gets is checked too (tests below), so a case cannot silently fall back to the loop nest.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

# f32 sums in another order than XLA's: a few ulps of the largest value
F32_TOL, F64_TOL, BF16_TOL = 2e-5, 1e-12, 8e-3


def _r(shape, seed, dt=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dt)


def _q(shape, seed):
    """Multiples of 1/8 in [-1, 1]: the attention-sized cases' sums are exact in f32 (and
    their fixtures compress), so any wrongly placed element shows."""
    return (np.random.default_rng(seed).integers(-8, 9, shape) / 8).astype(np.float32)


def _dot(name: str, lhs: str, rhs: str, out: str, dnums: str, tail: str = "", root: str = "ROOT ") -> str:
    return (f"HloModule {name}\nENTRY main {{\n  a = {lhs} parameter(0)\n  b = {rhs} parameter(1)\n"
            f"  {root}d = {out} dot(a, b), {dnums}\n{tail}}}\n")


def _bd(lb, lc, rb, rc) -> str:
    parts = []
    for key, v in (("lhs_batch_dims", lb), ("lhs_contracting_dims", lc), ("rhs_batch_dims", rb),
                   ("rhs_contracting_dims", rc)):
        if v:
            parts.append(f"{key}={{{','.join(map(str, v))}}}")
    return ", ".join(parts)


# name -> (HLO text, inputs in parameter order, rtol)
CASES = {
    # q.k^T: k read transposed (its rows are the GEMM's columns)
    "dotg_bqd_bkd_bqk": (_dot("dotg_bqd_bkd_bqk", "f32[4,128,64]", "f32[4,128,64]", "f32[4,128,128]",
                              _bd((0,), (2,), (0,), (2,))), [_q((4, 128, 64), 1), _q((4, 128, 64), 2)], F32_TOL),
    # p.v
    "dotg_bqk_bkd_bqd": (_dot("dotg_bqk_bkd_bqd", "f32[4,128,128]", "f32[4,128,64]", "f32[4,128,64]",
                              _bd((0,), (2,), (0,), (1,))), [_q((4, 128, 128), 3), _q((4, 128, 64), 4)], F32_TOL),
    # heads as a second batch dimension in the middle of both operands
    "dotg_bqhd_bkhd_bhqk": (_dot("dotg_bqhd_bkhd_bhqk", "f32[2,96,4,32]", "f32[2,96,4,32]", "f32[2,4,96,96]",
                                 _bd((0, 2), (3,), (0, 2), (3,))),
                            [_q((2, 96, 4, 32), 5), _q((2, 96, 4, 32), 6)], F32_TOL),
    "dotg_bhqk_bkhd_bhqd": (_dot("dotg_bhqk_bkhd_bhqd", "f32[2,4,96,96]", "f32[2,96,4,32]", "f32[2,4,96,32]",
                                 _bd((0, 1), (3,), (0, 2), (1,))),
                            [_q((2, 4, 96, 96), 7), _q((2, 96, 4, 32), 8)], F32_TOL),
    # the BERT export's value product: v [b,k,h,d] contracting its dimension 1 against the
    # softmax [1,b,h,q,k]: a transposed lhs, batch dimensions in different places
    "dotg_bert_value_product": (_dot("dotg_bert_value_product", "f32[1,128,4,64]", "f32[1,1,4,128,128]",
                                     "f32[1,4,64,1,128]", _bd((0, 2), (1,), (1, 2), (4,))),
                                [_q((1, 128, 4, 64), 9), _q((1, 1, 4, 128, 128), 10)], F32_TOL),
    # and its score product, with a unit dimension among the free ones
    "dotg_bert_scores": (_dot("dotg_bert_scores", "f32[1,128,4,1,64]", "f32[1,128,4,64]", "f32[1,4,128,1,128]",
                              _bd((0, 2), (4,), (0, 2), (3,))),
                         [_q((1, 128, 4, 1, 64), 11), _q((1, 128, 4, 64), 12)], F32_TOL),
    # k^T.v: both operands transposed (contracting their dimension 1)
    "dotg_both_transposed": (_dot("dotg_both_transposed", "f32[4,128,64]", "f32[4,128,96]", "f32[4,64,96]",
                                  _bd((0,), (1,), (0,), (1,))), [_q((4, 128, 64), 13), _q((4, 128, 96), 14)], F32_TOL),
    # a^T . b^T
    "dotg_lhs_t_rhs_t": (_dot("dotg_lhs_t_rhs_t", "f32[192,160]", "f32[96,192]", "f32[160,96]",
                              _bd((), (0,), (), (1,))), [_q((192, 160), 15), _q((96, 192), 16)], F32_TOL),
    # heads merged back: [q,h,d] . [h,d,n], contracting pairs listed against memory order
    "dotg_contracting_reordered": (_dot("dotg_contracting_reordered", "f32[128,4,64]", "f32[4,64,256]",
                                        "f32[128,256]", _bd((), (2, 1), (), (1, 0))),
                                   [_q((128, 4, 64), 17), _q((4, 64, 256), 18)], F32_TOL),
    # lhs free dimensions split by the contracting one: a loop over the outer free dimension
    "dotg_lhs_free_looped": (_dot("dotg_lhs_free_looped", "f32[4,4,8,16]", "f32[4,24]", "f32[4,8,16,24]",
                                  _bd((), (1,), (), (0,))), [_r((4, 4, 8, 16), 19), _r((4, 24), 20)], F32_TOL),
    # rhs free dimensions split by the contracting one: calls writing strided column blocks
    "dotg_rhs_free_looped": (_dot("dotg_rhs_free_looped", "f32[64,40]", "f32[3,5,40,48]", "f32[64,3,5,48]",
                                  _bd((), (1,), (), (2,))), [_q((64, 40), 21), _q((3, 5, 40, 48), 22)], F32_TOL),
    # batched matrix-vector
    "dotg_batched_matvec": (_dot("dotg_batched_matvec", "f32[4,128,64]", "f32[4,64]", "f32[4,128]",
                                 _bd((0,), (2,), (0,), (1,))), [_q((4, 128, 64), 23), _q((4, 64), 24)], F32_TOL),
    # small and odd: below the threading threshold, edge tiles everywhere
    "dotg_small_odd": (_dot("dotg_small_odd", "f32[3,7,5]", "f32[3,9,7]", "f32[3,5,9]",
                            _bd((0,), (1,), (0,), (2,))), [_r((3, 7, 5), 25), _r((3, 9, 7), 26)], F32_TOL),
    # scaled scores: an epilogue applied to each looped call's rows (threaded chunks)
    "dotg_scores_epilogue": (_dot("dotg_scores_epilogue", "f32[2,128,64]", "f32[2,128,64]", "f32[2,128,128]",
                                  _bd((0,), (2,), (0,), (2,)),
                                  "  s = f32[] constant(0.125)\n  sb = f32[2,128,128] broadcast(s), dimensions={}\n"
                                  "  m = f32[2,128,128] parameter(2)\n  t = f32[2,128,128] multiply(d, sb)\n"
                                  "  ROOT y = f32[2,128,128] add(t, m)\n", root=""),
                             [_q((2, 128, 64), 27), _q((2, 128, 64), 28), _q((2, 128, 128), 29)], F32_TOL),
    # an epilogue on calls writing strided column blocks: the whole product first
    "dotg_rhs_looped_epilogue": (_dot("dotg_rhs_looped_epilogue", "f32[64,40]", "f32[3,5,40,48]", "f32[64,3,5,48]",
                                      _bd((), (1,), (), (2,)),
                                      "  z = f32[] constant(0)\n  zb = f32[64,3,5,48] broadcast(z), dimensions={}\n"
                                      "  ROOT y = f32[64,3,5,48] maximum(d, zb)\n", root=""),
                                 [_q((64, 40), 30), _q((3, 5, 40, 48), 31)], F32_TOL),
    "dotg_f64_transposed": (_dot("dotg_f64_transposed", "f64[4,96,64]", "f64[4,80,96]", "f64[4,64,80]",
                                 _bd((0,), (1,), (0,), (2,))),
                            [_r((4, 96, 64), 32, np.float64), _r((4, 80, 96), 33, np.float64)], F64_TOL),
    "dotg_bf16_heads": (_dot("dotg_bf16_heads", "bf16[2,64,4,32]", "bf16[2,64,4,32]", "bf16[2,4,64,64]",
                             _bd((0, 2), (3,), (0, 2), (3,))),
                        [_r((2, 64, 4, 32), 34, ml_dtypes.bfloat16), _r((2, 64, 4, 32), 35, ml_dtypes.bfloat16)],
                        BF16_TOL),
}

# every case runs on the GEMM: its (loops, m, n, k, a_rs, a_cs, b_rs, b_cs, ldc)
PLANS = {
    "dotg_bqd_bkd_bqk": ((4,), 128, 128, 64, 64, 1, 1, 64, 128),
    "dotg_bqk_bkd_bqd": ((4,), 128, 64, 128, 128, 1, 64, 1, 64),
    "dotg_bqhd_bkhd_bhqk": ((2, 4), 96, 96, 32, 128, 1, 1, 128, 96),
    "dotg_bhqk_bkhd_bhqd": ((2, 4), 96, 32, 96, 96, 1, 128, 1, 32),
    "dotg_bert_value_product": ((4,), 64, 128, 128, 1, 256, 1, 128, 128),
    "dotg_bert_scores": ((4,), 128, 128, 64, 256, 1, 1, 256, 128),
    "dotg_both_transposed": ((4,), 64, 96, 128, 1, 64, 96, 1, 96),
    "dotg_lhs_t_rhs_t": ((), 160, 96, 192, 1, 160, 1, 192, 96),
    "dotg_contracting_reordered": ((), 128, 256, 256, 256, 1, 256, 1, 256),
    "dotg_lhs_free_looped": ((4,), 128, 24, 4, 1, 128, 24, 1, 24),
    "dotg_rhs_free_looped": ((3, 5), 64, 48, 40, 40, 1, 48, 1, 720),
    "dotg_batched_matvec": ((4,), 128, 1, 64, 64, 1, 1, 0, 1),
    "dotg_small_odd": ((3,), 5, 9, 7, 1, 5, 1, 7, 9),
    "dotg_scores_epilogue": ((2,), 128, 128, 64, 64, 1, 1, 64, 128),
    "dotg_rhs_looped_epilogue": ((3, 5), 64, 48, 40, 40, 1, 48, 1, 720),
    "dotg_f64_transposed": ((4,), 64, 80, 96, 1, 64, 1, 96, 80),
    "dotg_bf16_heads": ((2, 4), 64, 64, 32, 128, 1, 1, 128, 64),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


def _instructions(text: str) -> dict:
    from aotc.frontend.hlo_parser import parse_hlo

    mod = parse_hlo(text)
    (entry,) = (c for c in mod.computations if c.name == mod.entry)
    return {i.name: i for i in entry.instructions}


@pytest.mark.parametrize("name", sorted(PLANS))
def test_plan(name):
    from aotc.ops.dot import gemm_plan

    by_name = _instructions(CASES[name][0])
    dot = by_name["d"]
    lhs, rhs = (by_name[o].array_shape for o in dot.operands)
    p = gemm_plan(dot, lhs, rhs)
    assert p is not None, name
    want_loops, *rest = PLANS[name]
    assert tuple(size for size, *_ in p.loops) == want_loops
    assert (p.m, p.n, p.k, p.a_rs, p.a_cs, p.b_rs, p.b_cs, p.ldc) == tuple(rest)


def test_contracting_pairs_in_no_common_order_use_the_loop_nest():
    """lhs contracting (1, 2) against rhs (1, 0): no order reads both as one stride."""
    from aotc.ops.dot import gemm_plan

    by_name = _instructions(_dot("nest", "f32[8,4,6]", "f32[6,4,5]", "f32[8,5]", _bd((), (1, 2), (), (1, 0))))
    dot = by_name["d"]
    assert gemm_plan(dot, by_name["a"].array_shape, by_name["b"].array_shape) is None

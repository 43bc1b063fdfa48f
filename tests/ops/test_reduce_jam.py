"""Reductions over long rows fold four rows at a time (ops/reduce.py `_jammed_rows`: four
streams from memory instead of one), each row in the order it has alone: checked against
XLA:CPU and, bit for bit, against the kernel that folds one row at a time. Cases: rows
with a tail shorter than the lanes, a fused square over a rank-3 operand (a dimension
kept outside the jammed one), an s32 sum (exact), an f64 sum, a product, and a full sum
that is first split into chunks (lower/split_reduce.py).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

from .conftest import c_text_of

# sums of positive values in another order than XLA's (conftest.assert_matches)
SUM = 1e-5
# a product of 16384 factors in another order: each rounding is a relative error of its own
PRODUCT = 1e-4


def _uniform(shape, seed: int, lo=0.0, hi=1.0, dtype=np.float32) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def _module(name: str, ty: str, dims: str, rdims: str, out: str, reducer: str = "add", body: str = "") -> str:
    return f"""HloModule {name}
red {{
  a = {ty}[] parameter(0)
  b = {ty}[] parameter(1)
  ROOT s = {ty}[] {reducer}(a, b)
}}
ENTRY main {{
  x = {ty}[{dims}] parameter(0)
  z = {ty}[] constant({1 if reducer == "multiply" else 0})
{body or f"  v = {ty}[{dims}] copy(x)"}
  ROOT r = {ty}[{out}] reduce(v, z), dimensions={{{rdims}}}, to_apply=red
}}
"""


CASES = {
    "reduce_jam_tail": (_module("reduce_jam_tail", "f32", "8,16390", "1", "8"),
                        [_uniform((8, 16390), 1)], SUM),
    "reduce_jam_fused": (_module("reduce_jam_fused", "f32", "2,4,16384", "2", "2,4",
                                 body="  v = f32[2,4,16384] multiply(x, x)"),
                         [_uniform((2, 4, 16384), 2, -1.0, 1.0)], SUM),
    "reduce_jam_s32": (_module("reduce_jam_s32", "s32", "4,16387", "1", "4"),
                       [np.random.default_rng(3).integers(-1000, 1000, (4, 16387)).astype(np.int32)], 0.0),
    "reduce_jam_f64": (_module("reduce_jam_f64", "f64", "4,16386", "1", "4"),
                       [_uniform((4, 16386), 4, dtype=np.float64)], 1e-12),
    "reduce_jam_product": (_module("reduce_jam_product", "f32", "4,16384", "1", "4", "multiply"),
                           [_uniform((4, 16384), 5, 0.9999, 1.0001)], PRODUCT),
    "reduce_jam_split": (_module("reduce_jam_split", "f32", str(1 << 18), "0", ""),
                         [_uniform((1 << 18,), 6)], SUM),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_four_rows_at_a_time(name, tmp_path):
    """The numbers above come from the jammed kernel: one array of 4 x 16 partial results."""
    c = c_text_of(CASES[name][0], name, tmp_path)
    assert " lane[64];" in c[c.index("static void k_"):]


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_as_one_row_at_a_time(name, workdir, monkeypatch):
    """Every result is the one-row-at-a-time kernel's, bit for bit, with the machine's vectors."""
    from aotc.ops import reduce

    from .conftest import assert_same_bits_without

    assert_same_bits_without(name, CASES[name][0], workdir,
                             lambda: monkeypatch.setattr(reduce, "JAM_MIN_ROW", 1 << 62), " lane[64];")


def test_short_rows_and_odd_row_counts_fold_one_row_at_a_time(tmp_path):
    """Rows shorter than JAM_MIN_ROW, or a kept dimension that is not a multiple of 4, keep
    the plain lane kernel; maxima keep their quick fold."""
    from aotc.ops.reduce import JAM_MIN_ROW

    for dims, out, reducer in ((f"8,{JAM_MIN_ROW - 16}", "8", "add"), (f"6,{JAM_MIN_ROW}", "6", "add"),
                               (f"8,{JAM_MIN_ROW}", "8", "maximum")):
        c = c_text_of(_module("plain", "f32", dims, "1", out, reducer), "plain", tmp_path)
        assert " lane[64];" not in c and "[16];" in c, (dims, reducer)


@pytest.mark.parametrize("cc,opt", [("gcc", "-O0"), ("gcc", "-O3"), ("clang", "-O1"), ("clang", "-O3")])
@pytest.mark.parametrize("name", ["reduce_jam_tail", "reduce_jam_fused"])
def test_case_with_compilers_and_native_vectors(name, cc, opt, workdir):
    """XLA's results from gcc and clang, unoptimized and at -O3 with the machine's widest vectors."""
    from .conftest import check_with_compiler

    check_with_compiler(name, CASES[name][0], CASES[name][2], cc, opt, workdir)


def test_threads_give_the_one_thread_bits(tmp_path):
    """The groups of four rows split over two threads: the one-thread bits."""
    import aotc

    from .conftest import load_case

    model = tmp_path / "reduce_jam_tail.hlo"
    model.write_text(CASES["reduce_jam_tail"][0])
    inputs, _ = load_case("reduce_jam_tail")
    one = aotc.run(str(model), inputs={"x": inputs[0]}, threads=1)
    two = aotc.run(str(model), inputs={"x": inputs[0]}, threads=2)
    assert [v.tobytes() for v in one.values()] == [v.tobytes() for v in two.values()]

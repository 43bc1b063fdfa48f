"""lower/split_reduce.py: which reductions are split into chunks for threads, and how."""
from __future__ import annotations

import pytest

from aotc.frontend import parse_hlo
from aotc.hlo.printer import print_computation
from aotc.lower.split_reduce import CHUNKS, split_large_reductions
from aotc.passes import run_graph_passes

from tests.passes.filecheck import filecheck

REDUCERS = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}
addmul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  p = f32[] multiply(a, b)
  ROOT s = f32[] add(p, b)
}
"""


def _module(shape: str, out: str, dims: str, reducer: str = "add") -> str:
    return f"""HloModule m
{REDUCERS}
ENTRY main {{
  x = f32[{shape}] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[{out}] reduce(x, z), dimensions={{{dims}}}, to_apply={reducer}
}}
"""


def _split(text: str):
    m = parse_hlo(text)
    live = [(m.entry_computation.root, ())]
    out, live2 = run_graph_passes(m, live, None, (("split", split_large_reductions),), 1)
    assert live2 == live  # the result keeps its name
    return out.entry_computation


def test_full_sum_becomes_chunk_sums_then_their_sum():
    comp = _split(_module("1048576", "", "0"))
    filecheck(print_computation(comp), f"""
        CHECK: %r.rows = f32[{CHUNKS},65536] reshape(%x)
        CHECK-NEXT: %r.partial = f32[{CHUNKS}] reduce(%r.rows, %z), dimensions={{1}}, to_apply=%add
        CHECK-NEXT: %r = f32[] reduce(%r.partial, %z), dimensions={{0}}, to_apply=%add
    """)


def test_few_rows_split_each_row():
    comp = _split(_module("4,262144", "4", "1"))
    filecheck(print_computation(comp), f"""
        CHECK: %r.rows = f32[4,{CHUNKS},16384] reshape(%x)
        CHECK-NEXT: %r.partial = f32[4,{CHUNKS}] reduce(%r.rows, %z), dimensions={{2}}
        CHECK-NEXT: %r = f32[4] reduce(%r.partial, %z), dimensions={{1}}
    """)


def test_two_trailing_dims_fold_into_the_chunks():
    comp = _split(_module("2,8,32768", "2", "1,2"))
    assert comp.get("r.rows").array_shape.dims == (2, CHUNKS, 16384)


@pytest.mark.parametrize("shape,out,dims,reducer,why", [
    ("64,262144", "64", "1", "add", "enough results to thread over"),
    ("262144,2", "2", "0", "add", "not trailing dimensions"),
    ("1048576", "", "0", "sub", "subtract does not regroup"),
    ("1048576", "", "0", "addmul", "a reducer of two ops"),
    ("131072", "", "0", "add", "too small to pay"),
    ("1048584", "", "0", "add", "not a multiple of the chunk count"),
])
def test_left_alone(shape, out, dims, reducer, why):
    comp = _split(_module(shape, out, dims, reducer))
    assert [i.opcode for i in comp.instructions].count("reduce") == 1, why

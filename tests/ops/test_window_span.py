"""The window spans of aotc/ops/window.py against the definition: for many window
geometries (strides, negative and asymmetric padding, window and base dilations,
size-1 windows and outputs) the loops `window_span`/`open_span` build, printed as C,
visit exactly the (output index, window index, input index) triples that land on input.
"""
from __future__ import annotations

import itertools
import random
import subprocess

from aotc.emit_c.kernel_c import stmts
from aotc.hlo.ir import WindowDim
from aotc.kernel import ir as K
from aotc.kernel.builder import KernelBuilder
from aotc.ops.window import open_span, window_output_size, window_span


def _builder() -> KernelBuilder:
    return KernelBuilder(set(), {}, {}, lambda op: None, {})


def _expected(n, wd, n_out):
    out = []
    for o in range(n_out):
        for w in range(wd.size):
            q = o * wd.stride + w * wd.rhs_dilate - wd.pad_lo
            if 0 <= q <= (n - 1) * wd.lhs_dilate and q % wd.lhs_dilate == 0:
                out.append((o, w, q // wd.lhs_dilate))
    return out


def _geometries():
    rng = random.Random(7)
    fixed = [(32, WindowDim(3, 1, 1, 1, 1, 1, False)), (7, WindowDim(3, 2, 0, 1, 1, 1, False)),
             (5, WindowDim(4, 1, -1, 3, 1, 1, False)), (6, WindowDim(3, 2, 2, 0, 2, 1, False)),
             (4, WindowDim(3, 1, 2, 2, 1, 2, False)), (5, WindowDim(4, 3, 3, 1, 2, 3, False)),
             (3, WindowDim(1, 1, 1, 1, 1, 2, False)), (1, WindowDim(5, 1, 2, 2, 1, 1, False)),
             (9, WindowDim(2, 3, -2, -1, 1, 1, False)), (4, WindowDim(3, 1, 0, 0, 4, 6, False))]
    for n, wd in fixed:
        yield n, wd
    for _ in range(150):
        wd = WindowDim(rng.randint(1, 5), rng.randint(1, 3), rng.randint(-3, 4), rng.randint(-3, 4),
                       rng.randint(1, 3), rng.randint(1, 4), False)
        yield rng.randint(1, 9), wd


def test_spans_visit_exactly_the_landing_positions(tmp_path):
    kb, cases = _builder(), []
    for k, (n, wd) in enumerate(_geometries()):
        n_out = window_output_size(n, wd)
        if n_out == 0:
            continue
        cases.append((k, n, wd, n_out))
        o = kb.loop(kb.fresh("o"), n_out) if n_out > 1 else K.Const(0)
        span = window_span(kb, o, wd, n, n_out, "w")
        if span is not None:
            pos, opened = open_span(kb, span)
            kb.emit(K.CallStmt("record", (K.Const(k), o, span.w, pos)))
            for _ in range(opened):
                kb.close()
        if n_out > 1:
            kb.close()
    lines = ["#include <stdint.h>", "#include <stdio.h>",
             "static void record(int64_t k, int64_t o, int64_t w, int64_t p) {",
             '    printf("%d %d %d %d\\n", (int)k, (int)o, (int)w, (int)p);', "}",
             "int main(void) {", *stmts(kb.body()), "    return 0;", "}"]
    src, exe = tmp_path / "spans.c", tmp_path / "spans"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(exe), str(src)], check=True)
    got: dict[int, list] = {k: [] for k, *_ in cases}
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n"):
        if line:
            k, o, w, pos = map(int, line.split())
            got[k].append((o, w, pos))
    for k, n, wd, n_out in cases:
        assert got[k] == _expected(n, wd, n_out), f"case {k}: n={n} {wd}"
    assert len(cases) > 100 and any(itertools.chain(got.values()))

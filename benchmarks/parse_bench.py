"""Parse throughput of aotc's HLO front end on a module with a multi-MB constant.

Builds `f32[N,M]` weights (random normals printed as XLA does, nested braces,
optionally with `/*i0=..*/` row comments), parses the text, checks the values
came back bit-exactly, and prints MB/s. A script, not a test:

    python benchmarks/parse_bench.py [--rows 1000] [--cols 1000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from aotc.frontend import parse_hlo
from aotc.hlo.ir import Instruction, Literal, Module, Computation
from aotc.hlo.printer import print_module
from aotc.hlo.shape import array


def build(rows: int, cols: int, comments: bool, dtype: str) -> tuple[str, np.ndarray]:
    rng = np.random.default_rng(0)
    shape = array(dtype, (rows, cols), (1, 0))
    values = rng.standard_normal((rows, cols)).astype(shape.dtype.numpy)
    weights = Instruction("weights", "constant", shape, literal=Literal(shape, values))
    x = Instruction("x", "parameter", shape, parameter_number=0)
    add = Instruction("add", "add", shape, ("x", "weights"))
    entry = Computation("main", (x, weights, add), "add", is_entry=True)
    text = print_module(Module("bench", (entry,), "main"))
    if comments:  # the `/*i0=k*/` row markers some dumps carry
        head, sep, tail = text.partition("constant({ ")
        rows_text = tail.split("}, { ")
        tail = "}, { ".join(f"/*i0={i}*/ {r}" if i else r for i, r in enumerate(rows_text))
        text = head + sep + tail
    return text, values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--cols", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--comments", action="store_true", help="add /*i0=k*/ row comments")
    args = ap.parse_args()
    text, values = build(args.rows, args.cols, args.comments, args.dtype)
    mb = len(text.encode()) / 1e6
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        module = parse_hlo(text, "bench.hlo")
        best = min(best, time.perf_counter() - t0)
    parsed = module.entry_computation.get("weights").literal.values
    assert parsed.tobytes() == values.tobytes(), "values did not round-trip"
    t0 = time.perf_counter()
    print_module(module)
    printed = time.perf_counter() - t0
    print(f"{args.dtype}[{args.rows},{args.cols}] constant, {mb:.1f} MB of text")
    print(f"parse: {best * 1e3:.0f} ms = {mb / best:.1f} MB/s (best of {args.repeat})")
    print(f"print: {printed * 1e3:.0f} ms = {mb / printed:.1f} MB/s")


if __name__ == "__main__":
    main()

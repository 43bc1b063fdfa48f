"""Error of aotc's --conv-algorithm choices against XLA:CPU on stride-1 3x3 convolutions at the
channel counts of ResNet-style models (64..512), SAME padding, bias and ReLU: max |aotc - XLA| /
max |XLA| for direct, winograd2 and winograd4 (the numbers in docs/winograd.md).

    python benchmarks/winograd_error.py
"""
from __future__ import annotations

import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# (batch, spatial, channels): 56x56x64 .. 7x7x512; batches give the 32 tiles winograd4 needs
SIZES = ((1, 56, 64), (1, 28, 128), (2, 14, 256), (8, 7, 512))
ALGORITHMS = ("direct", "winograd2", "winograd4")


def module(b: int, s: int, c: int) -> str:
    y = f"f32[{b},{s},{s},{c}]"
    return f"""HloModule conv_{s}x{s}x{c}
ENTRY main {{
  x = {y} parameter(0)
  w = f32[3,3,{c},{c}] parameter(1)
  b = f32[{c}] parameter(2)
  c = {y} convolution(x, w), window={{size=3x3 pad=1_1x1_1}}, dim_labels=b01f_01io->b01f
  bb = {y} broadcast(b), dimensions={{3}}
  a = {y} add(c, bb)
  zero = f32[] constant(0)
  z = {y} broadcast(zero), dimensions={{}}
  ROOT r = {y} maximum(a, z)
}}
"""


def main() -> int:
    import aotc
    from aotc.options import CompileOptions
    from tests.oracle import xla as oracle

    print("size  " + "  ".join(f"{a:>10}" for a in ALGORITHMS))
    with tempfile.TemporaryDirectory(prefix="aotc_wino_") as tmp:
        for b, s, c in SIZES:
            rng = np.random.default_rng(s * c)
            x = rng.standard_normal((b, s, s, c)).astype(np.float32)
            w = (rng.standard_normal((3, 3, c, c)) * np.sqrt(2.0 / (9 * c))).astype(np.float32)
            bias = (rng.standard_normal(c) * 0.1).astype(np.float32)
            text = module(b, s, c)
            path = os.path.join(tmp, f"conv_{s}_{c}.hlo")
            with open(path, "w") as f:
                f.write(text)
            (want,) = oracle.run_hlo(text, [x, w, bias])
            errs = []
            for alg in ALGORITHMS:
                (got,) = aotc.run(path, inputs={"x": x, "w": w, "b": bias},
                                  options=CompileOptions(conv_algorithm=alg)).values()
                errs.append(float(np.abs(got.astype(np.float64) - want).max() / np.abs(want).max()))
            print(f"{b}x{s}x{s}x{c}  " + "  ".join(f"{e:10.2e}" for e in errs))
    return 0


if __name__ == "__main__":
    sys.exit(main())

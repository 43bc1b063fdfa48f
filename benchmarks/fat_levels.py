"""One x86_64-fat artifact at each ISA level this machine runs, forced with P_set_isa: the
median (min) microseconds of a call on one thread, and whether every level gave the same bits.
Nothing asserts a time; the load average is printed (the machine may be shared).

    python benchmarks/fat_levels.py [--only conv3x3] [--iters 20]
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from aotc import api  # noqa: E402
from aotc.toolchain.loader import load_library  # noqa: E402
from benchmarks.bench import WORKLOADS  # noqa: E402


def _paths(name: str) -> tuple[str, str]:
    return os.path.join(HERE, f"{name}.hlo"), os.path.join(HERE, f"{name}.yaml")


def time_levels(name: str, iters: int, tmp: str) -> dict[int, tuple[float, float, bool]]:
    hlo, cfg = _paths(name)
    r = api.compile(hlo, cfg, out=os.path.join(tmp, name), target="x86_64-fat", emit=("so",))
    lib = ctypes.CDLL(r.so_path)
    set_isa = getattr(lib, f"{r.name}_set_isa")
    m = load_library(r.so_path, r.name)
    rng = np.random.default_rng(0)
    feeds = {}
    for i, n in enumerate(m.arg_names):
        spec = m._spec("arg", i)
        feeds[n] = rng.standard_normal(spec.dims).astype(spec.dtype)
    out, bits = {}, None
    for level in (1, 3, 4):
        if set_isa(level) != 0:
            continue
        got = m.run_dict(feeds)
        b = b"".join(v.tobytes() for v in got.values())
        same = bits is None or b == bits
        bits = b if bits is None else bits
        times = []
        for _ in range(iters):
            t = time.perf_counter()
            m.run_dict(feeds)
            times.append((time.perf_counter() - t) * 1e6)
        out[level] = (float(np.median(times)), float(min(times)), same)
    set_isa(0)
    m.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", choices=sorted(WORKLOADS))
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| workload | v1 µs | v3 µs | v4 µs | same bits |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or sorted(WORKLOADS):
            res = time_levels(name, args.iters, tmp)
            cells = [f"{res[lv][0]:.1f} ({res[lv][1]:.1f})" if lv in res else "-" for lv in (1, 3, 4)]
            same = all(v[2] for v in res.values())
            print(f"| {name} | {' | '.join(cells)} | {'yes' if same else 'NO'} |")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

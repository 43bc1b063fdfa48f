"""How aotc's own compile time and memory grow with the size of a module.

Generates modules of growing size and runs `aotc compile --emit none` (no C
compiler: the Python pipeline only) on each in a child process, printing wall
and CPU seconds and peak memory. Nothing here asserts a time.

    python benchmarks/scale.py [--quick]

Shapes: a wide DAG (N independent elementwise ops summed by a tree of adds), a
chain of N fused elementwise ops (one kernel), N nested calls, and N outputs.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def wide(n: int) -> str:
    out = ["HloModule wide", "", "ENTRY main {", "  p = f32[8] parameter(0)"]
    out += [f"  a{i} = f32[8] {'negate' if i % 2 else 'exponential'}(p)" for i in range(n)]
    names, k = [f"a{i}" for i in range(n)], 0
    while len(names) > 1:
        nxt = []
        for j in range(0, len(names) - 1, 2):
            out.append(f"  s{k} = f32[8] add({names[j]}, {names[j + 1]})")
            nxt.append(f"s{k}")
            k += 1
        names = nxt + ([names[-1]] if len(names) % 2 else [])
    return "\n".join(out + [f"  ROOT r = f32[8] negate({names[0]})", "}"]) + "\n"


def chain(n: int) -> str:
    out = ["HloModule chain", "", "ENTRY main {", "  x0 = f32[16] parameter(0)"]
    out += [f"  x{i} = f32[16] {'negate' if i % 2 else 'exponential'}(x{i - 1})" for i in range(1, n)]
    out.append(f"  ROOT x{n} = f32[16] negate(x{n - 1})")
    return "\n".join(out + ["}"]) + "\n"


def nested(n: int) -> str:
    out = ["HloModule nest", "", "f0 {", "  p0 = f32[4] parameter(0)", "  ROOT r0 = f32[4] negate(p0)", "}"]
    for k in range(1, n):
        out += [f"f{k} {{", f"  p{k} = f32[4] parameter(0)", f"  ROOT r{k} = f32[4] call(p{k}), to_apply=f{k - 1}",
                "}"]
    out += ["ENTRY main {", "  x = f32[4] parameter(0)", f"  ROOT y = f32[4] call(x), to_apply=f{n - 1}", "}"]
    return "\n".join(out) + "\n"


def outputs(n: int) -> str:
    out = ["HloModule outs", "", "ENTRY main {", "  p = f32[4] parameter(0)"]
    out += [f"  o{i} = f32[4] {'negate' if i % 2 else 'exponential'}(p)" for i in range(n)]
    shapes = ", ".join(["f32[4]"] * n)
    return "\n".join(out + [f"  ROOT t = ({shapes}) tuple({', '.join(f'o{i}' for i in range(n))})", "}"]) + "\n"


SHAPES = {"wide DAG": (wide, (10_000, 50_000, 100_000)), "fused chain": (chain, (1_000, 5_000)),
          "nested calls": (nested, (1_000, 5_000)), "outputs": (outputs, (1_000, 5_000))}
QUICK = {"wide DAG": (1_000, 10_000), "fused chain": (1_000,), "nested calls": (1_000,), "outputs": (1_000,)}


def measure(text: str, tmp: str) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MiB) of `aotc compile --emit none` in a child process."""
    model = os.path.join(tmp, "m.hlo")
    with open(model, "w") as f:
        f.write(text)
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "aotc.cli", "compile", model, "-o", os.path.join(tmp, "libm"),
                          "--emit", "none"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)  # this child's own resource usage
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(err.strip().splitlines()[-1] if err.strip() else f"exit {p.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KiB


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    a = ap.parse_args(argv)
    print(f"{'shape':<14} {'size':>8} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9}")
    with tempfile.TemporaryDirectory(prefix="aotc_scale_") as tmp:
        for name, (make, sizes) in SHAPES.items():
            for n in (QUICK[name] if a.quick else sizes):
                try:
                    wall, cpu, mib = measure(make(n), tmp)
                    print(f"{name:<14} {n:>8} {wall:>8.2f} {cpu:>8.2f} {mib:>9.0f}")
                except RuntimeError as e:
                    print(f"{name:<14} {n:>8}  failed: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

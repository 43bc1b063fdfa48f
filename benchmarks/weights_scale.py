"""How compiling grows with the bytes of baked-in weights: aotc's own time and memory, the
size of what it writes, and the C compiler's time and memory on it.

Each model adds weights to one f32 input: one large constant in the HLO (an elided
literal filled by `--elided-constants random`), or 100 bound parameters (`bound:` in the
config, values from an .npz) totalling the same bytes, each added to the input. Each measurement is a child
process timed with `os.wait4` (CPU seconds and peak RSS of that process and the processes
it waited for, such as cc1 and as), forked by a small launcher.

    python benchmarks/weights_scale.py [--sizes 100,200] [--encoding auto] [--no-cc]

Columns: aotc CPU s and peak MiB (`compile --emit none`), the .c (and blob) MiB, cc CPU s
and peak MiB (`cc -c` with aotc's flags, run by hand on the written .c), and MB/s of
weights over aotc + cc CPU time. Nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from aotc.options import CompileOptions  # noqa: E402
from aotc.toolchain import cc  # noqa: E402
from aotc.toolchain.build import base_cflags  # noqa: E402
from aotc.toolchain.targets import resolve_target  # noqa: E402

MB = 1_000_000


def one_constant(tmp: str, nbytes: int) -> tuple[str, list[str]]:
    n = nbytes // 4
    text = "\n".join(["HloModule one_constant", "", "ENTRY main {", f"  x = f32[{n}] parameter(0)",
                      f"  w = f32[{n}] constant({{...}})", f"  ROOT y = f32[{n}] add(x, w)", "}", ""])
    path = os.path.join(tmp, "one.hlo")
    with open(path, "w") as f:
        f.write(text)
    return path, ["--elided-constants", "random"]


def many_bound(tmp: str, nbytes: int, count: int = 100) -> tuple[str, list[str]]:
    n = nbytes // 4 // count
    lines = ["HloModule many_bound", "", "ENTRY main {", f"  x = f32[{n}] parameter(0)"]
    lines += [f"  w{i} = f32[{n}] parameter({i + 1})" for i in range(count)]
    lines += [f"  s{i} = f32[{n}] add(x, w{i})" for i in range(count)]  # nothing folds
    lines.append(f"  ROOT t = ({', '.join([f'f32[{n}]'] * count)}) tuple({', '.join(f's{i}' for i in range(count))})")
    path = os.path.join(tmp, "many.hlo")
    with open(path, "w") as f:
        f.write("\n".join(lines + ["}", ""]))
    rng = np.random.default_rng(0)
    np.savez(os.path.join(tmp, "many.npz"), **{f"w{i}": rng.standard_normal(n, np.float32) for i in range(count)})
    cfg = os.path.join(tmp, "many.yaml")
    with open(cfg, "w") as f:
        f.write("feeds:\n  - {id: 0, name: x}\nbound:\n  file: many.npz\n  params:\n")
        f.write("".join(f"    - {{id: {i + 1}, key: w{i}}}\n" for i in range(count)))
    return path, ["--config", cfg]


# A small Python process forks the command and reports its usage: a child forked from this
# (big) process would count this process's memory in its peak until it execs.
LAUNCHER = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n"
            "_, status, u = os.wait4(pid, 0)\n"
            "sys.stdout.write('%d %r %d' % (os.waitstatus_to_exitcode(status), u.ru_utime + u.ru_stime, u.ru_maxrss))")


def child(cmd: list[str]) -> tuple[float, float]:
    """(CPU s, peak MiB) of one child process; RuntimeError if it fails."""
    p = subprocess.run([sys.executable, "-c", LAUNCHER, *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, cwd=ROOT)
    code, cpu, kib = p.stdout.split()[-3:]
    if int(code) != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {code}")
    return float(cpu), int(kib) / 1024


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,200", help="MB of weights, comma separated")
    ap.add_argument("--encoding", default=None, help="--const-encoding to pass (default: aotc's)")
    ap.add_argument("--shapes", default="one,many", help="one (a constant), many (100 bound parameters)")
    ap.add_argument("--no-cc", action="store_true", help="measure aotc only")
    ap.add_argument("--cc", default=None, help="C compiler command (default: aotc's choice)")
    a = ap.parse_args(argv)
    target = resolve_target("host")
    tc = cc.find_toolchain(target, a.cc)
    flags = [*tc.argv, *tc.flags, *base_cflags(CompileOptions())]
    makers = {"one": ("1 constant", one_constant), "many": ("100 bound", many_bound)}
    print(f"{'weights':<11} {'MB':>5} {'aotc s':>7} {'aotc MiB':>9} {'.c MiB':>8} {'blob MiB':>9} "
          f"{'cc s':>7} {'cc MiB':>8} {'MB/s':>7}")
    for shape in a.shapes.split(","):
        label, make = makers[shape]
        for size in (int(s) for s in a.sizes.split(",")):
            with tempfile.TemporaryDirectory(prefix="aotc_wscale_") as tmp:
                model, extra = make(tmp, size * MB)
                out = os.path.join(tmp, "libm")
                cmd = [sys.executable, "-m", "aotc.cli", "compile", model, *extra, "-o", out, "--emit", "none"]
                if a.encoding:
                    cmd += ["--const-encoding", a.encoding]
                try:
                    cpu, mib = child(cmd)
                    c_mib = os.path.getsize(out + ".c") / 2**20
                    blobs = [f for f in os.listdir(tmp) if f.startswith("libm") and f.endswith(".bin")]
                    b_mib = sum(os.path.getsize(os.path.join(tmp, f)) for f in blobs) / 2**20
                    cc_cpu = cc_mib = float("nan")
                    if not a.no_cc:
                        cc_cpu, cc_mib = child([*flags, "-c", out + ".c", "-o", out + ".o"])
                    total = cpu + (0 if a.no_cc else cc_cpu)
                    print(f"{label:<11} {size:>5} {cpu:>7.1f} {mib:>9.0f} {c_mib:>8.1f} {b_mib:>9.1f} "
                          f"{cc_cpu:>7.1f} {cc_mib:>8.0f} {size / total:>7.1f}", flush=True)
                except RuntimeError as e:
                    print(f"{label:<11} {size:>5}  failed: {e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

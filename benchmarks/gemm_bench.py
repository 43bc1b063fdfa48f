"""Single-thread f32 GEMM speed of the runtime's aotc_sgemm against numpy (OpenBLAS).

Builds the embedded runtime (``aotc.runtime_c.runtime_source()``) as a shared
library with ``cc -O2 -march=native``, then times C = A @ B for square sizes,
alternating the two implementations so both see the same machine state, and
prints ms, GFLOP/s and the speed ratio.  A script, not a test:

    python benchmarks/gemm_bench.py [--sizes 256 512 1024] [--reps 20] [--cc gcc]
"""
from __future__ import annotations

import os

# numpy must be single-threaded too; these are read when numpy loads its BLAS
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import ctypes  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from aotc.runtime_c import ALIGNMENT, GEMM_SCRATCH_BYTES, runtime_source  # noqa: E402


def build_runtime(cc: str, flags: list[str], workdir: Path) -> ctypes.CDLL:
    src = workdir / "aotc_runtime.c"
    lib = workdir / "libaotc_runtime.so"
    src.write_text("#define AOTC_RT_API\n" + runtime_source()
                   + "\nconst char* bench_simd_name(void) { return AOTC_SIMD_NAME; }\n")
    cmd = [cc, "-std=c11", *flags, "-shared", "-fPIC", str(src), "-o", str(lib), "-lm", "-lpthread"]
    subprocess.run(cmd, check=True)
    dll = ctypes.CDLL(str(lib))
    i64, p = ctypes.c_int64, ctypes.c_void_p
    dll.aotc_sgemm.argtypes = [i64, i64, i64, p, i64, i64, p, i64, i64, p, i64, p]
    dll.aotc_sgemm.restype = None
    dll.bench_simd_name.restype = ctypes.c_char_p
    return dll


def aligned(nbytes: int) -> np.ndarray:
    raw = np.zeros(nbytes + ALIGNMENT, np.uint8)
    off = (-raw.ctypes.data) % ALIGNMENT
    return raw[off:off + nbytes]


def bench(dll: ctypes.CDLL, n: int, reps: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(n)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = np.empty((n, n), np.float32)
    scratch = aligned(GEMM_SCRATCH_BYTES)
    args = (n, n, n, a.ctypes.data, n, 1, b.ctypes.data, n, 1, c.ctypes.data, n, scratch.ctypes.data)

    def ours() -> None:
        dll.aotc_sgemm(*args)

    def theirs() -> None:
        np.matmul(a, b, out=c)

    ours()
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.max(np.abs(c - ref)))
    best_ours = best_theirs = float("inf")
    for _ in range(reps):  # alternate, keep the best of each
        t0 = time.perf_counter()
        ours()
        t1 = time.perf_counter()
        theirs()
        t2 = time.perf_counter()
        best_ours = min(best_ours, t1 - t0)
        best_theirs = min(best_theirs, t2 - t1)
    return best_ours, best_theirs, err


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--flags", default="-O2 -march=native", help="compiler flags for the runtime")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        dll = build_runtime(opts.cc, opts.flags.split(), Path(d))
        print(f"aotc_sgemm ({dll.bench_simd_name().decode()}, {opts.cc} {opts.flags}) vs numpy "
              f"{np.__version__} matmul, single thread, best of {opts.reps}")
        print(f"{'n':>6} {'aotc ms':>9} {'GFLOP/s':>8} {'numpy ms':>9} {'GFLOP/s':>8} {'ratio':>6} {'max err':>9}")
        for n in opts.sizes:
            t_ours, t_np, err = bench(dll, n, opts.reps)
            flop = 2.0 * n ** 3
            g_ours, g_np = flop / t_ours * 1e-9, flop / t_np * 1e-9
            print(f"{n:>6} {t_ours * 1e3:>9.3f} {g_ours:>8.1f} {t_np * 1e3:>9.3f} {g_np:>8.1f} "
                  f"{g_ours / g_np:>6.2f} {err:>9.2e}")


if __name__ == "__main__":
    main()

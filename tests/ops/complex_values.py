"""Shared by the complex-number tests (test_complex, test_complex_math, test_complex_muldiv):
the edge values of c64/c128 parts, packing parts into complex arrays with their signed zeros,
and one case built by several compilers and flags, each build's outputs returned."""
from __future__ import annotations

import shutil

import numpy as np

EDGE32 = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, -3e38, 1.0, -1.0, 0.5, -2.0, 1e-30]
EDGE64 = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 1.7e308, -1.7e308, 1.0, -1.0, 0.5, -2.0,
          1e-300]
N = 4096  # values per elementwise case

# gcc and clang at -O0, -O3 and -O3 -march=native (where gcc may fuse a complex product into
# fmaddsub unless contraction is off)
BUILDS = [(cc, opt) for cc in ("gcc", "clang") for opt in (("-O0",), ("-O3",), ("-O3", "-march=native"))]


def pack(re, im, dtype) -> np.ndarray:
    out = np.empty(np.shape(re), dtype)
    out.real, out.imag = re, im  # keeps -0 parts
    return out


def builds(text: str, inputs, workdir, name: str, flag_sets=BUILDS):
    """(command, outputs) of `text` built by each installed compiler with each flag set."""
    from .conftest import run_hlo_text

    for cc, opt in flag_sets:
        if shutil.which(cc) is None:
            continue
        cmd = (cc, "-std=c11", *opt, "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC")
        yield " ".join(cmd), run_hlo_text(text, inputs, workdir,
                                          f"{name}_{cc}_{'_'.join(o.strip('-=') for o in opt)}", build_cmd=cmd)


def assert_one_result(runs, name: str) -> None:
    """Every build of `runs` ((command, outputs) pairs) gave the same bits, NaNs included."""
    seen: dict[bytes, str] = {}
    for cmd, got in runs:
        seen.setdefault(b"".join(np.ascontiguousarray(g).tobytes() for g in got), cmd)
    assert len(seen) == 1, f"{name}: different bits from {sorted(seen.values())}"

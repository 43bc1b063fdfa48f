"""Long input streams read ahead (kernel/prefetch.py, prefetch_streams) give XLA's results: a
sum of 4M f32 (16 MiB, in the lane blocks of a reduction split over threads), a row-sum of
the same matrix and a map over 2M + 5 f32 (8 MiB and a scalar tail that reads ahead to the
buffer's last element), built by gcc and clang -O3 with the machine's vectors (the hint is
an instruction with AVX-512) and by the default flags under UBSan. The inputs are drawn here and
XLA runs live: 16 MiB fixtures do not belong in the repository.
"""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from aotc.kernel.prefetch import MIN_STREAM_BYTES

from .conftest import assert_matches, c_text_of, run_hlo_text

_ROWS, _COLS = 4096, 1024
_MAP_N = MIN_STREAM_BYTES // 4 + 5

_ADD = """add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}"""

CASES = {
    "stream_sum": (f"""HloModule stream_sum
{_ADD}
ENTRY main {{
  x = f32[{_ROWS},{_COLS}] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[] reduce(x, zero), dimensions={{0,1}}, to_apply=add_f
}}
""", (_ROWS, _COLS), 1e-5),
    "stream_row_sums": (f"""HloModule stream_row_sums
{_ADD}
ENTRY main {{
  x = f32[{_ROWS},{_COLS}] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[{_ROWS}] reduce(x, zero), dimensions={{1}}, to_apply=add_f
}}
""", (_ROWS, _COLS), 1e-5),
    "stream_map": (f"""HloModule stream_map
ENTRY main {{
  x = f32[{_MAP_N}] parameter(0)
  a = f32[] constant(1.7)
  ab = f32[{_MAP_N}] broadcast(a), dimensions={{}}
  m = f32[{_MAP_N}] multiply(x, ab)
  e = f32[{_MAP_N}] exponential(m)
  ROOT y = f32[{_MAP_N}] add(e, x)
}}
""", (_MAP_N,), 0.0),
}


def _input(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(23).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_kernels_read_their_input_ahead(name, tmp_path):
    text = CASES[name][0]
    c = c_text_of(text, name, tmp_path)
    assert "AOTC_PREFETCH_AHEAD(&" in c
    small = text.replace(f"{_ROWS},{_COLS}", "64,1024").replace(f"[{_ROWS}]", "[64]").replace(f"[{_MAP_N}]", "[4096]")
    assert "AOTC_PREFETCH_AHEAD(&" not in c_text_of(small, f"{name}_small", tmp_path)


@pytest.mark.parametrize("flags", ["gcc-native-O3", "clang-native-O3", "ubsan-O1"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_live_xla(name, flags, workdir):
    pytest.importorskip("jax", reason="the XLA oracle needs jax (installed in CI)")
    from tests.oracle import xla as oracle

    cc = flags.split("-")[0]
    if cc != "ubsan" and shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    text, shape, rtol = CASES[name]
    x = _input(shape)
    (want,) = oracle.run_hlo(text, [x])
    cmd = (cc, "-std=c11", "-O3", "-march=native", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC") \
        if cc != "ubsan" else None
    (got,) = run_hlo_text(text, [x], workdir, f"{name}_{flags.replace('-', '_')}", build_cmd=cmd)
    assert_matches(np.asarray(got), np.asarray(want), rtol, name)

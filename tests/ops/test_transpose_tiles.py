"""Copies that read down columns run as 8 x 8 tiles (kernel/transpose.py, aotc_tr_f32 in
runtime_c/aotc_transpose.c): attention's head merge as JAX exports it (a transpose behind
a reshape), plain 2-D transposes with sides that are and are not whole tiles, a large one
cut into strips over threads, and a 3-D permutation; every element's bits are XLA's,
NaN payloads included, from gcc and clang at several optimization levels.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

from .conftest import c_text_of


def _heads(name: str) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = f32[1,4,64,1,128] parameter(0)
  t = f32[1,128,4,1,64]{{1,3,4,2,0}} transpose(x), dimensions={{0,4,1,3,2}}
  ROOT r = f32[1,128,4,64] reshape(t)
}}
"""


def _plain(name: str, m: int, n: int) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = f32[{m},{n}] parameter(0)
  ROOT t = f32[{n},{m}] transpose(x), dimensions={{1,0}}
}}
"""


def _three(name: str) -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = f32[6,40,24] parameter(0)
  ROOT t = f32[24,6,40] transpose(x), dimensions={{2,0,1}}
}}
"""


def _values(shape, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1).view(np.uint32)
    flat[:4] = [0x7F800001, 0xFFC00123, 0x80000000, 0x00000001]  # NaN payloads, -0, a subnormal
    flat[-1] = 0x7FC0BEEF
    return x


CASES = {
    "transpose_tiles_heads": (_heads("transpose_tiles_heads"), [_values((1, 4, 64, 1, 128), 1)], 0.0),
    "transpose_tiles_ragged": (_plain("transpose_tiles_ragged", 37, 203), [_values((37, 203), 2)], 0.0),
    "transpose_tiles_large": (_plain("transpose_tiles_large", 384, 512), [_values((384, 512), 3)], 0.0),
    "transpose_tiles_three": (_three("transpose_tiles_three"), [_values((6, 40, 24), 4)], 0.0),
}


def _bits_equal(name: str, got: list[np.ndarray]) -> None:
    from .conftest import load_case

    _, expected = load_case(name)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        assert g.tobytes() == e.tobytes(), f"{name}: {np.sum(g.view(np.uint32) != e.view(np.uint32))} elements differ"


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_copy_runs_in_tiles(name, tmp_path):
    c = c_text_of(CASES[name][0], name, tmp_path)
    kernels = c[c.index("/* ---------------------------------------------------------------- kernels"):]
    assert "aotc_tr_f32(" in kernels, kernels[:3000]


@pytest.mark.parametrize("cc,opt", [("gcc", "-O0"), ("gcc", "-O2"), ("clang", "-O1"), ("clang", "-O3")])
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_as_xla_with_compilers(name, cc, opt, workdir):
    """Every element's bits (NaN payloads too) from gcc and clang with the widest vectors."""
    import shutil

    from .conftest import load_case, run_hlo_text

    if shutil.which(cc) is None:
        pytest.fail(f"{cc} is not installed (CI installs it)")
    cmd = (cc, "-std=c11", opt, "-march=native", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC")
    inputs, _ = load_case(name)
    _bits_equal(name, run_hlo_text(CASES[name][0], inputs, workdir, f"{name}_{cc}_{opt.strip('-')}", build_cmd=cmd))


def test_a_copy_that_computes_is_not_a_transpose(tmp_path):
    text = """HloModule t
ENTRY main {
  x = f32[64,64] parameter(0)
  t = f32[64,64] transpose(x), dimensions={1,0}
  ROOT n = f32[64,64] negate(t)
}
"""
    c = c_text_of(text, "t", tmp_path)
    assert "aotc_tr_f32(" not in c[c.index("/* ---------------------------------------------------------------- kernels"):]

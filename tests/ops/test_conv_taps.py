"""Convolutions run as one GEMM over the window positions, with no im2col matrix
(ops/conv_taps.py, runtime_c/aotc_taps.c), checked against XLA:CPU and, bit for bit,
against the im2col GEMM they replace: DenseNet's 3x3 convolution to 32 features (three
K blocks, blocks of output rows with a short last one, split over threads) and the same on
its last block's 7 x 7 pixels (blocks of 14 and 7 pixels: short register tiles), two
pixels per image (one padded tile, a partial panel), a batch of
odd sizes with a bias-ReLU epilogue and 40 features (a partial register panel, pixels not
a multiple of the tile), a 5x5 window with asymmetric and negative padding and 160
features (two column blocks), and a one-dimensional convolution over a batch.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations


import numpy as np
import pytest

from .conftest import c_text_of

# the GEMM sums in another order than XLA's: 1e-5 of the largest magnitude (conftest.assert_matches)
SUM = 1e-5


def _normal(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


_DENSE = """HloModule taps_dense_3x3
ENTRY main {
  x = f32[1,28,28,128] parameter(0)
  w = f32[3,3,128,32] parameter(1)
  ROOT y = f32[1,28,28,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
"""

_BIAS_RELU = """HloModule taps_bias_relu
ENTRY main {
  x = f32[2,17,19,24] parameter(0)
  w = f32[3,3,24,40] parameter(1)
  b = f32[40] parameter(2)
  c = f32[2,17,19,40] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,17,19,40] broadcast(b), dimensions={3}
  a = f32[2,17,19,40] add(c, bb)
  zero = f32[] constant(0)
  z = f32[2,17,19,40] broadcast(zero), dimensions={}
  ROOT r = f32[2,17,19,40] maximum(a, z)
}
"""

_WIDE = """HloModule taps_wide_5x5
ENTRY main {
  x = f32[1,12,13,20] parameter(0)
  w = f32[5,5,20,160] parameter(1)
  ROOT y = f32[1,11,11,160] convolution(x, w), window={size=5x5 pad=2_1x-1_3}, dim_labels=b01f_01io->b01f
}
"""

_CONV1D = """HloModule taps_conv1d
ENTRY main {
  x = f32[3,50,32] parameter(0)
  w = f32[7,32,48] parameter(1)
  ROOT y = f32[3,50,48] convolution(x, w), window={size=7 pad=3_3}, dim_labels=b0f_0io->b0f
}
"""

# DenseNet121's last block: 7 x 7 pixels in blocks of 2 rows (14 and 7 pixels: short row tiles)
_SMALL = """HloModule taps_small_7x7
ENTRY main {
  x = f32[1,7,7,128] parameter(0)
  w = f32[3,3,128,32] parameter(1)
  ROOT y = f32[1,7,7,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
"""

# two pixels per image: fewer than a short tile, so one padded tile; 24 features: a partial panel
_TINY = """HloModule taps_tiny
ENTRY main {
  x = f32[2,1,2,16] parameter(0)
  w = f32[1,3,16,24] parameter(1)
  ROOT y = f32[2,1,2,24] convolution(x, w), window={size=1x3 pad=0_0x1_1}, dim_labels=b01f_01io->b01f
}
"""

CASES = {
    "taps_dense_3x3": (_DENSE, [_normal((1, 28, 28, 128), 1), _normal((3, 3, 128, 32), 2)], SUM),
    "taps_bias_relu": (_BIAS_RELU, [_normal((2, 17, 19, 24), 3), _normal((3, 3, 24, 40), 4), _normal((40,), 5)], SUM),
    "taps_wide_5x5": (_WIDE, [_normal((1, 12, 13, 20), 6), _normal((5, 5, 20, 160), 7)], SUM),
    "taps_conv1d": (_CONV1D, [_normal((3, 50, 32), 8), _normal((7, 32, 48), 9)], SUM),
    "taps_small_7x7": (_SMALL, [_normal((1, 7, 7, 128), 10), _normal((3, 3, 128, 32), 11)], SUM),
    "taps_tiny": (_TINY, [_normal((2, 1, 2, 16), 12), _normal((1, 3, 16, 24), 13)], SUM),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_convolution_takes_the_window_positions_in_place(name, tmp_path):
    """The numbers above come from aotc_taps_conv_f32, with no im2col rows."""
    c = c_text_of(CASES[name][0], name, tmp_path)
    assert "aotc_taps_conv_f32(" in c[c.index("static void k_"):]
    assert "col[" not in c


def test_the_blocks_are_split_over_threads(tmp_path):
    """The kernel's slices of blocks are its threaded loop (nothing runs before it)."""
    c = c_text_of(_DENSE, "taps_dense_3x3", tmp_path)
    kernel = c[c.index("static void k_"):]
    kernel = kernel[:kernel.index("\n}\n")]
    assert "int64_t lo, int64_t hi)" in kernel.splitlines()[0], kernel.splitlines()[0]
    assert "for (int64_t chunk = lo; chunk < hi; ++chunk)" in kernel, kernel


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_as_the_im2col_gemm(name, workdir, monkeypatch):
    """Every output element is the im2col GEMM's, bit for bit, with the machine's vectors."""
    from aotc.ops import convolution

    from .conftest import assert_same_bits_without

    assert_same_bits_without(name, CASES[name][0], workdir,
                             lambda: monkeypatch.setattr(convolution, "taps_plan", lambda *a: None),
                             "aotc_taps_conv_f32(")


@pytest.mark.parametrize("cc,opt", [("gcc", "-O0"), ("gcc", "-O3"), ("clang", "-O1"), ("clang", "-O3")])
@pytest.mark.parametrize("name", ["taps_bias_relu", "taps_wide_5x5"])
def test_case_with_compilers_and_native_vectors(name, cc, opt, workdir):
    """XLA's results from gcc and clang, unoptimized and at -O3 with the machine's widest vectors."""
    from .conftest import check_with_compiler

    check_with_compiler(name, CASES[name][0], CASES[name][2], cc, opt, workdir)


@pytest.mark.parametrize("name", sorted(CASES))
def test_threads_give_the_one_thread_bits(name, tmp_path):
    """Blocks of output rows (a short last one in taps_bias_relu) split over two threads:
    the one-thread bits."""
    import aotc
    from aotc import driver
    from aotc.options import CompileOptions

    from .conftest import load_case

    model = tmp_path / f"{name}.hlo"
    model.write_text(CASES[name][0])
    inputs, _ = load_case(name)
    names = [f.name for f in sorted(driver.frontend(str(model), None, CompileOptions()).signature.feeds,
                                    key=lambda f: f.param_number)]
    feeds = dict(zip(names, inputs))
    one = aotc.run(str(model), inputs=feeds, threads=1)
    two = aotc.run(str(model), inputs=feeds, threads=2)
    assert one.keys() == two.keys()
    for k in one:
        assert one[k].tobytes() == two[k].tobytes()


_BLOCKS_14 = """HloModule taps_blocks_14
ENTRY main {
  x = f32[1,56,56,64] parameter(0)
  w = f32[3,3,64,64] parameter(1)
  ROOT y = f32[1,56,56,64] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
"""


def test_larger_shares_of_blocks_come_first(tmp_path):
    """56 output rows in 14 blocks over 4 chunks: shares 4, 3, 4, 3 (the pool hands chunks out
    in order, so two threads end after 7 blocks each; 3, 4, 3, 4 ended after 6 and 8)."""
    import re

    c = c_text_of(_BLOCKS_14, "taps_blocks_14", tmp_path)
    first = re.search(r"const int64_t first = \(chunk \* (\d+) \+ (\d+)\) / (\d+);", c)
    assert first, c[c.index("static void k_"):][:2000]
    items, bias, chunks = (int(g) for g in first.groups())
    starts = [(ch * items + bias) // chunks for ch in range(chunks + 1)]
    assert [b - a for a, b in zip(starts, starts[1:])] == [4, 3, 4, 3]


@pytest.mark.parametrize("march", ["x86-64", "native"])
@pytest.mark.parametrize("name", ["taps_small_7x7", "taps_tiny"])
def test_short_tiles_on_the_portable_and_vector_kernels(name, march, workdir):
    """Short register tiles (14 and 7 pixels per block) and the padded tile (2 pixels) give XLA's
    results from the portable kernels (x86-64: no AVX) and the machine's vector kernels, the
    latter bit for bit as the im2col GEMM (test_same_bits_as_the_im2col_gemm)."""
    from .conftest import assert_matches, load_case, run_hlo_text

    cmd = ("gcc", "-std=c11", "-O2", f"-march={march}", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC")
    inputs, expected = load_case(name)
    got = run_hlo_text(CASES[name][0], inputs, workdir, f"{name}_{march.replace('-', '_')}", build_cmd=cmd)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_matches(g, e, CASES[name][2], f"{name} output {k} (-march={march})")


@pytest.mark.parametrize("name", ["taps_small_7x7", "taps_tiny"])
def test_short_tiles_under_sanitizers(name, workdir):
    """No read or write outside the slices, the packed weights or the output (ASan, UBSan)."""
    from .conftest import assert_matches, load_case, run_hlo_text_asan

    inputs, expected = load_case(name)
    got = run_hlo_text_asan(CASES[name][0], inputs, workdir, name)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_matches(g, e, CASES[name][2], f"{name} output {k} (sanitizers)")

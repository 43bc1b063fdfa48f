"""Winograd convolution (--conv-algorithm winograd2 / winograd4, ops/conv_winograd.py)
against XLA:CPU: stride-1 3x3 f32 convolutions at the sizes of ResNet-style models (56x56x64,
28x28x128, 14x14x256), odd sizes that leave partial tiles (7x7 in a batch of 8, 15x17 in a batch of 2), SAME, VALID
and explicit asymmetric and negative padding, an NCHW/OIHW operand layout, each with a bias
and ReLU epilogue. Winograd rounds differently from XLA's direct sums, so each case must
match within 1e-4 of the output's largest magnitude (the documented bound, docs/winograd.md).
Also: gcc and clang at -O0 and -O3, ASan+UBSan (slow), the same bits on any thread count,
`direct` (the default) compiling exactly what aotc compiled before, and convolutions Winograd
does not take falling back to the direct path.

Weights are rounded to bf16 values (stored as f32) so the fixtures compress; the weight
transform's 1/6 and 1/24 still round. Expected outputs: tests/ops/data/<case>.npz from
gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import aotc
from aotc import driver
from aotc.options import CompileOptions

from .conftest import assert_matches, load_case

TOL = 1e-4
ALGORITHMS = ("winograd2", "winograd4")


def _input(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _weights(seed: int, *shape: int, fan_in: int = 0) -> np.ndarray:
    """He-scaled 3x3 kernels (fan-in: 9 x the input features, HWIO's second-to-last dim by
    default), rounded to bf16 values."""
    w = np.random.default_rng(seed).standard_normal(shape) * np.sqrt(2.0 / (9 * (fan_in or shape[-2])))
    return w.astype(ml_dtypes.bfloat16).astype(np.float32)


def _conv_bias_relu(name: str, x: str, w: str, y: str, window: str, labels: str = "b01f_01io->b01f") -> str:
    o = y.split("[")[1].rstrip("]").split(",")[3 if labels.endswith("b01f") else 1]
    fdim = 3 if labels.endswith("b01f") else 1
    return f"""HloModule {name}
ENTRY main {{
  x = {x} parameter(0)
  w = {w} parameter(1)
  b = f32[{o}] parameter(2)
  c = {y} convolution(x, w), window={{{window}}}, dim_labels={labels}
  bb = {y} broadcast(b), dimensions={{{fdim}}}
  a = {y} add(c, bb)
  zero = f32[] constant(0)
  z = {y} broadcast(zero), dimensions={{}}
  ROOT r = {y} maximum(a, z)
}}
"""


CASES = {
    # ResNet50's stage-1 3x3 conv: 14 x 14 tiles of 4x4 (28 x 28 of 2x2); 14x14 in a batch of 2
    # (16 4x4 tiles an image: fewer than Winograd needs)
    "wino_56x56x64_same": (_conv_bias_relu(
        "wino_56x56x64_same", "f32[1,56,56,64]", "f32[3,3,64,64]", "f32[1,56,56,64]", "size=3x3 pad=1_1x1_1"),
        [_input(1, 1, 56, 56, 64), _weights(2, 3, 3, 64, 64), _input(3, 64) * 0.1], TOL),
    "wino_28x28x128_same": (_conv_bias_relu(
        "wino_28x28x128_same", "f32[1,28,28,128]", "f32[3,3,128,128]", "f32[1,28,28,128]", "size=3x3 pad=1_1x1_1"),
        [_input(4, 1, 28, 28, 128), _weights(5, 3, 3, 128, 128), _input(6, 128) * 0.1], TOL),
    "wino_b2_14x14x256_same": (_conv_bias_relu(
        "wino_b2_14x14x256_same", "f32[2,14,14,256]", "f32[3,3,256,256]", "f32[2,14,14,256]", "size=3x3 pad=1_1x1_1"),
        [_input(7, 2, 14, 14, 256), _weights(8, 3, 3, 256, 256), _input(9, 256) * 0.1], TOL),
    # 5x5 outputs: the last tile row and column are partial (4x4 tiles) or half (2x2); batch 8
    # gives the 32 tiles Winograd needs (ops/conv_winograd._MIN_TILES)
    "wino_b8_7x7x64_valid": (_conv_bias_relu(
        "wino_b8_7x7x64_valid", "f32[8,7,7,64]", "f32[3,3,64,96]", "f32[8,5,5,96]", "size=3x3"),
        [_input(10, 8, 7, 7, 64), _weights(11, 3, 3, 64, 96), _input(12, 96) * 0.1], TOL),
    "wino_b8_7x7x64_same": (_conv_bias_relu(
        "wino_b8_7x7x64_same", "f32[8,7,7,64]", "f32[3,3,64,64]", "f32[8,7,7,64]", "size=3x3 pad=1_1x1_1"),
        [_input(13, 8, 7, 7, 64), _weights(14, 3, 3, 64, 64), _input(15, 64) * 0.1], TOL),
    # explicit asymmetric padding, a negative one, odd sizes, features not a multiple of 16
    "wino_b2_15x17x40_explicit": (_conv_bias_relu(
        "wino_b2_15x17x40_explicit", "f32[2,15,17,40]", "f32[3,3,40,36]", "f32[2,15,14,36]",
        "size=3x3 pad=2_0x-1_0"),
        [_input(16, 2, 15, 17, 40), _weights(17, 3, 3, 40, 36), _input(18, 36) * 0.1], TOL),
    # NCHW input and OIHW kernel read in place through their strides, NHWC result
    "wino_b2_15x17x32_nchw": (_conv_bias_relu(
        "wino_b2_15x17x32_nchw", "f32[2,32,15,17]", "f32[48,32,3,3]", "f32[2,15,17,48]", "size=3x3 pad=1_1x1_1",
        "bf01_oi01->b01f"),
        [_input(19, 2, 32, 15, 17), _weights(20, 48, 32, 3, 3, fan_in=32), _input(21, 48) * 0.1],
        TOL),
}


def _write(workdir, name: str) -> str:
    path = workdir / f"{name}.hlo"
    path.write_text(CASES[name][0])
    return str(path)


def _run(workdir, name: str, threads: int = 1, **opts) -> np.ndarray:
    inputs, _ = load_case(name)
    outs = aotc.run(_write(workdir, name), inputs={"x": inputs[0], "w": inputs[1], "b": inputs[2]},
                    options=CompileOptions(**opts), threads=threads)
    (y,) = outs.values()
    return y


def _c_text(name: str, algorithm: str) -> str:
    opts = CompileOptions(conv_algorithm=algorithm)
    fe = driver.frontend(f"{name}.hlo", None, opts, text=CASES[name][0])
    return driver.generate(fe, f"lib{name}", opts).c_text


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_xla(name, algorithm, workdir):
    _, (want,) = load_case(name)
    got = _run(workdir, name, conv_algorithm=algorithm)
    assert_matches(got, want, CASES[name][2], f"{name} {algorithm}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_winograd_is_what_runs(name):
    for algorithm in ALGORITHMS:
        assert "aotc_wino_conv_f32(" in _c_text(name, algorithm)
    assert "aotc_wino" not in _c_text(name, "direct")


@pytest.mark.parametrize("cc,level", [("gcc", "-O0"), ("clang", "-O0"), ("clang", "-O3")])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_compilers(cc, level, algorithm, workdir):
    name = "wino_b2_15x17x40_explicit"
    _, (want,) = load_case(name)
    got = _run(workdir, name, cc=cc, opt_level=level, cflags=("-Wall", "-Wextra", "-Werror"),
               conv_algorithm=algorithm)
    assert_matches(got, want, TOL, f"{name} {algorithm} {cc} {level}")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["wino_b2_15x17x40_explicit", "wino_b8_7x7x64_valid", "wino_b2_15x17x32_nchw"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_sanitized(name, algorithm, workdir):
    _, (want,) = load_case(name)
    got = _run(workdir, name, cc="gcc", opt_level="-O1", sanitize="address", conv_algorithm=algorithm)
    assert_matches(got, want, TOL, f"{name} {algorithm} asan")


@pytest.mark.parametrize("name", ["wino_56x56x64_same", "wino_b8_7x7x64_same"])
def test_same_bits_on_any_thread_count(name, workdir):
    one = _run(workdir, name, threads=1, conv_algorithm="winograd4")
    for threads in (2, 3, 4):
        np.testing.assert_array_equal(_run(workdir, name, threads=threads, conv_algorithm="winograd4").view(np.uint32),
                                      one.view(np.uint32), err_msg=f"{name} on {threads} threads")


def test_the_chunks_are_split_over_threads():
    """The chunks of tile blocks are the kernel's threaded loop (nothing runs before it: the
    weights were once transformed before the loop, which kept the kernel on one thread)."""
    c = _c_text("wino_56x56x64_same", "winograd4")
    kernel = c[c.index("static void k_"):]
    kernel = kernel[:kernel.index("\n}\n")]
    assert "int64_t lo, int64_t hi)" in kernel.splitlines()[0], kernel.splitlines()[0]
    assert "for (int64_t chunk = lo; chunk < hi; ++chunk)" in kernel, kernel


def test_direct_is_the_default_and_unchanged():
    name = "wino_28x28x128_same"
    fe = driver.frontend(f"{name}.hlo", None, CompileOptions(), text=CASES[name][0])
    default = driver.generate(fe, f"lib{name}", CompileOptions()).c_text
    assert CompileOptions().conv_algorithm == "direct"
    assert default == _c_text(name, "direct")
    assert "aotc_wino" not in default and "aotc_winograd" not in default


NOT_TAKEN = {
    "stride 2": ("f32[1,16,16,32]", "f32[3,3,32,32]", "f32[1,8,8,32]", "size=3x3 stride=2x2 pad=1_1x1_1"),
    "5x5": ("f32[1,16,16,32]", "f32[5,5,32,32]", "f32[1,16,16,32]", "size=5x5 pad=2_2x2_2"),
    "dilated": ("f32[1,16,16,32]", "f32[3,3,32,32]", "f32[1,16,16,32]", "size=3x3 pad=2_2x2_2 rhs_dilate=2x2"),
    "f64": ("f64[1,16,16,32]", "f64[3,3,32,32]", "f64[1,16,16,32]", "size=3x3 pad=1_1x1_1"),
    "reversed": ("f32[1,16,16,32]", "f32[3,3,32,32]", "f32[1,16,16,32]", "size=3x3 pad=1_1x1_1 rhs_reversal=1x1"),
}


@pytest.mark.parametrize("what", sorted(NOT_TAKEN) + ["epilogue to bf16"])
def test_other_convolutions_stay_direct(what):
    # a result converted to bf16 in the GEMM's epilogue: 64 tiles, but Winograd writes f32 rows
    x, w, y, window = NOT_TAKEN.get(what, ("f32[1,32,32,32]", "f32[3,3,32,32]", "f32[1,32,32,32]",
                                           "size=3x3 pad=1_1x1_1"))
    root = "ROOT c" if what != "epilogue to bf16" else "c"
    tail = "" if what != "epilogue to bf16" else "\n  ROOT o = bf16[1,32,32,32] convert(c)"
    text = f"""HloModule not_taken
ENTRY main {{
  x = {x} parameter(0)
  w = {w} parameter(1)
  {root} = {y} convolution(x, w), window={{{window}}}, dim_labels=b01f_01io->b01f{tail}
}}
"""
    opts = CompileOptions(conv_algorithm="winograd4")
    fe = driver.frontend("not_taken.hlo", None, opts, text=text)
    assert "aotc_wino" not in driver.generate(fe, "libnot_taken", opts).c_text


def _bound_config(workdir, name: str, w: np.ndarray, params: tuple[str, ...] = ("x", "w", "b")) -> str:
    """cfg.yaml feeding every parameter but `w` (parameter 1), bound from <name>_w.npz."""
    import yaml

    np.savez(workdir / f"{name}_w.npz", w=w)
    cfg = {"feeds": [{"id": i, "name": n} for i, n in enumerate(params) if n != "w"],
           "bound": {"file": f"{name}_w.npz", "params": [{"id": 1, "key": "w"}]}}
    path = workdir / f"{name}_bound.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


_BOUND_FAST = {("wino_b2_15x17x32_nchw", "winograd4"), ("wino_b2_15x17x40_explicit", "winograd2")}


@pytest.mark.parametrize("name,algorithm", [
    (n, a) if (n, a) in _BOUND_FAST else pytest.param(n, a, marks=pytest.mark.slow)
    for n in ("wino_28x28x128_same", "wino_b8_7x7x64_valid", "wino_b2_15x17x40_explicit", "wino_b2_15x17x32_nchw")
    for a in ALGORITHMS])
def test_bound_weight_is_stored_transformed(name, algorithm, workdir):
    """A bound weight is stored as its transform U (lower/panels.py, computed at compile time):
    no call transforms it, and the results are the fed weight's bits, on one and two threads
    (features not a multiple of the transform's 16 lanes, an OIHW kernel read through its
    strides), and XLA's within the Winograd tolerance."""
    inputs, (want,) = load_case(name)
    cfg = _bound_config(workdir, f"{name}_{algorithm}", inputs[1])
    opts = CompileOptions(conv_algorithm=algorithm)
    res = aotc.compile(_write(workdir, name), config=cfg, out=str(workdir / f"lib{name}_{algorithm}_bound"),
                       options=opts)
    with open(res.c_path) as f:
        kernels = f.read().split("static void k_", 1)[1]
    assert "aotc_wino_conv_f32(" in kernels and "aotc_wino_weights_f32(" not in kernels
    for threads in (1, 2):
        got = aotc.run(_write(workdir, name), config=cfg, inputs={"x": inputs[0], "b": inputs[2]},
                       options=opts, threads=threads)["r"]
        fed = _run(workdir, name, threads=threads, conv_algorithm=algorithm)
        assert got.tobytes() == fed.tobytes(), f"{name} {algorithm} on {threads} threads: other bits than fed"
        assert_matches(got, want, TOL, f"{name} {algorithm} bound")


def test_bound_weight_of_a_direct_convolution_stays_as_it_is(workdir):
    """A bound weight whose convolution leaves the Winograd path (its result converted to bf16
    in the epilogue) is stored untransformed, and gives the fed weight's bits."""
    text = """HloModule wino_bf16_out
ENTRY main {
  x = f32[1,32,32,32] parameter(0)
  w = f32[3,3,32,32] parameter(1)
  c = f32[1,32,32,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT o = bf16[1,32,32,32] convert(c)
}
"""
    path = workdir / "wino_bf16_out.hlo"
    path.write_text(text)
    x, w = _input(30, 1, 32, 32, 32), _weights(31, 3, 3, 32, 32)
    opts = CompileOptions(conv_algorithm="winograd4")
    cfg = _bound_config(workdir, "wino_bf16_out", w, ("x", "w"))
    res = aotc.compile(str(path), config=cfg, out=str(workdir / "libwino_bf16_out"), options=opts)
    with open(res.c_path) as f:
        assert "aotc_wino" not in f.read().split("static void k_", 1)[1]
    bound = aotc.run(str(path), config=cfg, inputs={"x": x}, options=opts)["o"]
    fed = aotc.run(str(path), inputs={"x": x, "w": w}, options=opts)["o"]
    assert np.asarray(bound).tobytes() == np.asarray(fed).tobytes()

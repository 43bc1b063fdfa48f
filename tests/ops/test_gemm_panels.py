"""Bound GEMM weights stored in panels (ops/dot.py `rhs_in_panels`, `pack_panels`,
ops/convolution.py `conv_rhs_in_panels`; lower/panels.py; runtime aotc_sgemm_pb and
aotc_taps_conv_pb_f32): each case's module is compiled twice, with its weight `w` fed and
with `w` bound by the config. The bound build must read the stored panels (no call packs
the weight), give the bits of the fed build on one and two threads, and match XLA:CPU.
Cases: an epilogue cut into column ranges of whole panels, a product sliced over the pool
with no epilogue, K deeper than a K block with rows in two row blocks, two rows (copied
into the scratch), one row (the matrix-vector path, a panel at a time), one weight read by
two products; convolutions as im2col GEMMs: 1x1 sliced over the pool and in row ranges with
their epilogues, 3x3 stride 2, a 1-D one whose last block of rows has one row; convolutions
the taps kernel runs: 3x3 to 64 and DenseNet's to 32 features, 160 features in two column
blocks, a 1-D window; and, kept row-major, a weight also read by an add, 48 columns, a
convolution with 48 features and a taps one with 48. The taps cases also run on the
portable kernels, under clang and on aarch64 (NEON tiles of 8 columns reading panels of 32).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU, w an argument).
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import yaml

from aotc.ops.dot import pack_panels

from .conftest import assert_matches, load_case

# f32 products of K terms in another order than XLA's (conftest.assert_matches)
RTOL = 2e-5


def _dense(name: str, m: int, k: int, n: int, epilogue: bool) -> str:
    body = (f"""  b = f32[{n}] parameter(2)
  bb = f32[{m},{n}] broadcast(b), dimensions={{1}}
  a = f32[{m},{n}] add(d, bb)
  z = f32[] constant(0)
  zz = f32[{m},{n}] broadcast(z), dimensions={{}}
  ROOT r = f32[{m},{n}] maximum(a, zz)""" if epilogue else f"  ROOT r = f32[{m},{n}] copy(d)")
    return f"""HloModule {name}
ENTRY main {{
  x = f32[{m},{k}] parameter(0)
  w = f32[{k},{n}] parameter(1)
  d = f32[{m},{n}] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
{body}
}}
"""


def _shared(name: str, m: int, k: int, n: int, also_add: bool) -> str:
    extra = (f"  s = f32[] parameter(3)\n  ss = f32[{k},{n}] broadcast(s), dimensions={{}}\n"
             f"  e = f32[{k},{n}] add(w, ss)\n") if also_add else ""
    out = f"(f32[{m},{n}], f32[{m},{n}]{f', f32[{k},{n}]' if also_add else ''})"
    outs = "d1, d2" + (", e" if also_add else "")
    return f"""HloModule {name}
ENTRY main {{
  x = f32[{m},{k}] parameter(0)
  w = f32[{k},{n}] parameter(1)
  y = f32[{m},{k}] parameter(2)
  d1 = f32[{m},{n}] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  d2 = f32[{m},{n}] dot(y, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
{extra}  ROOT t = {out} tuple({outs})
}}
"""


def _conv(name: str, x: str, w: str, out: str, window: str, labels: str, epilogue: bool) -> str:
    o = out.split(",")[-1]
    body = (f"""  b = f32[{o}] parameter(2)
  bb = f32[{out}] broadcast(b), dimensions={{{out.count(",")}}}
  a = f32[{out}] add(c, bb)
  z = f32[] constant(0)
  zz = f32[{out}] broadcast(z), dimensions={{}}
  ROOT r = f32[{out}] maximum(a, zz)""" if epilogue else f"  ROOT r = f32[{out}] copy(c)")
    return f"""HloModule {name}
ENTRY main {{
  x = f32[{x}] parameter(0)
  w = f32[{w}] parameter(1)
  c = f32[{out}] convolution(x, w), window={{{window}}}, dim_labels={labels}
{body}
}}
"""


def _inputs(seed: int, *shapes) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


CASES: dict[str, tuple] = {}
PANELS: dict[str, bool] = {}  # case -> whether the bound weight is stored in panels
# cases also built under the sanitizers: their fed/bound comparison runs with the heavy tests
_UNDER_SANITIZERS = ["panels_deep_rows", "panels_two_rows", "panels_epilogue_cols", "panels_conv1d_last_row",
                     "panels_conv1x1_ranges", "panels_taps_wide"]


def _add(name: str, text: str, inputs: list[np.ndarray], panels: bool) -> None:
    CASES[name] = (text, inputs, RTOL)
    PANELS[name] = panels


_add("panels_epilogue_cols", _dense("panels_epilogue_cols", 64, 256, 512, True),
     _inputs(1, (64, 256), (256, 512), (512,)), True)
_add("panels_sliced", _dense("panels_sliced", 96, 512, 128, False), _inputs(2, (96, 512), (512, 128)), True)
_add("panels_deep_rows", _dense("panels_deep_rows", 150, 600, 64, True),
     _inputs(3, (150, 600), (600, 64), (64,)), True)
_add("panels_two_rows", _dense("panels_two_rows", 2, 256, 96, True), _inputs(4, (2, 256), (256, 96), (96,)), True)
_add("panels_shared", _shared("panels_shared", 40, 128, 64, False), _inputs(5, (40, 128), (128, 64), (40, 128)), True)
_add("panels_also_added", _shared("panels_also_added", 40, 128, 64, True),
     _inputs(6, (40, 128), (128, 64), (40, 128), ()), False)
_add("panels_one_row", _dense("panels_one_row", 1, 256, 128, True), _inputs(7, (1, 256), (256, 128), (128,)), True)
# convolutions run as im2col GEMMs reading the weight in place (ops/convolution.py)
_add("panels_conv1x1_sliced", _conv("panels_conv1x1_sliced", "1,14,14,128", "1,1,128,64", "1,14,14,64", "size=1x1",
                                    "b01f_01io->b01f", True),
     _inputs(11, (1, 14, 14, 128), (1, 1, 128, 64), (64,)), True)
_add("panels_conv1x1_ranges", _conv("panels_conv1x1_ranges", "1,28,28,64", "1,1,64,128", "1,28,28,128", "size=1x1",
                                    "b01f_01io->b01f", True),
     _inputs(12, (1, 28, 28, 64), (1, 1, 64, 128), (128,)), True)
_add("panels_conv3x3_stride2", _conv("panels_conv3x3_stride2", "2,16,16,32", "3,3,32,64", "2,8,8,64",
                                     "size=3x3 stride=2x2 pad=1_1x1_1", "b01f_01io->b01f", True),
     _inputs(13, (2, 16, 16, 32), (3, 3, 32, 64), (64,)), True)
_add("panels_conv1d_last_row", _conv("panels_conv1d_last_row", "1,259,8", "3,8,32", "1,257,32", "size=3",
                                     "b0f_0io->b0f", False),
     _inputs(14, (1, 259, 8), (3, 8, 32)), True)
_add("panels_conv_taps", _conv("panels_conv_taps", "1,12,12,32", "3,3,32,64", "1,12,12,64",
                               "size=3x3 pad=1_1x1_1", "b01f_01io->b01f", True),
     _inputs(15, (1, 12, 12, 32), (3, 3, 32, 64), (64,)), True)
# convolutions the taps kernel runs (ops/conv_taps.py) read the stored panels in place
# (aotc_taps_conv_pb_f32): DenseNet's 3x3 to 32 features (three K blocks, blocks of rows over
# threads, bias + ReLU on each block), 160 features in two column blocks (K = 576, two K
# blocks) over a batch of two, a 1-D window of 5; 48 features stay row-major, packed per call
_add("panels_taps_densenet", _conv("panels_taps_densenet", "1,28,28,128", "3,3,128,32", "1,28,28,32",
                                   "size=3x3 pad=1_1x1_1", "b01f_01io->b01f", True),
     _inputs(17, (1, 28, 28, 128), (3, 3, 128, 32), (32,)), True)
_add("panels_taps_wide", _conv("panels_taps_wide", "2,14,15,64", "3,3,64,160", "2,14,15,160",
                               "size=3x3 pad=1_1x1_1", "b01f_01io->b01f", False),
     _inputs(18, (2, 14, 15, 64), (3, 3, 64, 160)), True)
_add("panels_taps_conv1d", _conv("panels_taps_conv1d", "1,300,32", "5,32,64", "1,300,64", "size=5 pad=2_2",
                                 "b0f_0io->b0f", True),
     _inputs(19, (1, 300, 32), (5, 32, 64), (64,)), True)
_add("panels_taps_48_features", _conv("panels_taps_48_features", "1,12,12,32", "3,3,32,48", "1,12,12,48",
                                      "size=3x3 pad=1_1x1_1", "b01f_01io->b01f", False),
     _inputs(20, (1, 12, 12, 32), (3, 3, 32, 48)), False)
_add("panels_conv_48_features", _conv("panels_conv_48_features", "1,14,14,64", "1,1,64,48", "1,14,14,48", "size=1x1",
                                      "b01f_01io->b01f", True),
     _inputs(16, (1, 14, 14, 64), (1, 1, 64, 48), (48,)), False)
_add("panels_48_columns", _dense("panels_48_columns", 32, 64, 48, True), _inputs(8, (32, 64), (64, 48), (48,)), False)


def _params(text: str) -> dict[int, str]:
    """Parameter number -> name."""
    return dict(sorted((int(i), n) for n, i in re.findall(r"(\w+) = f32\[[\d,]*\] parameter\((\d+)\)", text)))


def _config(path, text: str, bound: bool) -> str:
    """cfg.yaml feeding every parameter, or binding `w` (parameter 1) from w.npz."""
    cfg: dict = {"feeds": [{"id": i, "name": n} for i, n in _params(text).items() if not (bound and i == 1)]}
    if bound:
        cfg["bound"] = {"file": "w.npz", "params": [{"id": 1, "key": "w"}]}
    out = path / ("bound.yaml" if bound else "fed.yaml")
    out.write_text(yaml.safe_dump(cfg))
    return str(out)


def _prepare(name: str, tmp_path) -> tuple[str, str, dict[str, np.ndarray], list[np.ndarray]]:
    """(module text, its file, every parameter's input by name, XLA's outputs), with w.npz
    beside the file for the bound config."""
    text = CASES[name][0]
    inputs, expected = load_case(name)
    model = tmp_path / f"{name}.hlo"
    model.write_text(text)
    np.savez(tmp_path / "w.npz", w=inputs[1])
    return text, str(model), {_params(text)[i]: a for i, a in enumerate(inputs)}, expected


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in _UNDER_SANITIZERS else n
                                  for n in sorted(CASES)])
def test_bound_weight_in_panels(name, tmp_path):
    import aotc

    text, model, feeds, expected = _prepare(name, tmp_path)
    runs = {}
    for bound in (False, True):
        cfg = _config(tmp_path, text, bound)
        res = aotc.compile(model, config=cfg, out=str(tmp_path / f"lib_{int(bound)}"))
        with open(res.c_path) as f:
            c_text = f.read()
        assert _kernels_call_pb(c_text) == (bound and PANELS[name]), (name, bound)
        if "_taps" in name:  # the taps kernel, not im2col GEMMs, whichever way the weight is stored
            assert "aotc_taps_conv_" in c_text.split("static void k_", 1)[-1], name
        ins = {k: v for k, v in feeds.items() if not (bound and k == "w")}
        for threads in (1, 2):
            runs[bound, threads] = [np.asarray(v) for v in aotc.run(model, config=cfg, inputs=ins,
                                                                    threads=threads).values()]
    for key, got in runs.items():
        assert len(got) == len(expected)
        for k, (g, e) in enumerate(zip(got, expected)):
            assert_matches(g, e, RTOL, f"{name} output {k} {key}")
            assert g.tobytes() == runs[False, 1][k].tobytes(), f"{name} output {k} {key}: other bits than fed"


def _kernels_call_pb(c_text: str) -> bool:
    """Whether a kernel (not the embedded runtime) calls aotc_sgemm_pb or the taps kernel's
    aotc_taps_conv_pb_f32, and none packs a weight per call."""
    lines = [ln.lstrip() for ln in c_text.split("static void k_", 1)[-1].splitlines()]
    if any(ln.startswith("aotc_taps_pack_f32(") for ln in lines):
        return False
    return any(ln.startswith(("aotc_sgemm_pb(", "aotc_sgemm_pb_threads(", "aotc_taps_conv_pb_f32(")) for ln in lines)


@pytest.mark.parametrize("shape", [(256, 512), (600, 64), (7, 32), (2, 4, 96)])
def test_pack_panels_is_the_runtime_layout(shape):
    """Element (k, j) of the [K, N] matrix at (j // 32) * K * 32 + k * 32 + j % 32, the
    formula of aotc_gemm_panels.c, for a weight of any shape holding K * N elements."""
    n = shape[-1] if len(shape) == 2 else shape[-2] * shape[-1]
    w = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    flat = w.reshape(-1, n)
    k = flat.shape[0]
    got = pack_panels(w, n).reshape(-1)
    kk, jj = np.meshgrid(np.arange(k), np.arange(n), indexing="ij")
    assert got.shape == (w.size,)
    np.testing.assert_array_equal(got[(jj // 32) * k * 32 + kk * 32 + jj % 32], flat)


@pytest.mark.parametrize("name", _UNDER_SANITIZERS)
def test_bound_weight_in_panels_under_sanitizers(name, tmp_path):
    """The bound build under AddressSanitizer and UBSan (a report fails the run), on two
    threads: the panel reads, their prefetches and the copied short rows stay in bounds."""
    import aotc
    from aotc.options import CompileOptions

    text, model, feeds, expected = _prepare(name, tmp_path)
    ins = {k: v for k, v in feeds.items() if k != "w"}
    outs = aotc.run(model, config=_config(tmp_path, text, True), inputs=ins, threads=2,
                    options=CompileOptions(cc="gcc", opt_level="-O1", sanitize="address"))
    for k, (g, e) in enumerate(zip(outs.values(), expected)):
        assert_matches(np.asarray(g), e, RTOL, f"{name} output {k}")


def _have_aarch64() -> tuple[bool, str]:
    from tests.e2e.conftest import have_aarch64

    return have_aarch64()


_TAPS_KERNELS = [pytest.param({"target_cpu": "x86-64"}, id="portable"),
                 pytest.param({"cc": "clang", "opt_level": "-O1"}, id="clang-O1", marks=pytest.mark.slow),
                 pytest.param({"target": "aarch64"}, id="aarch64",
                              marks=[pytest.mark.slow, pytest.mark.aarch64,
                                     pytest.mark.skipif(not _have_aarch64()[0], reason=_have_aarch64()[1])])]


@pytest.mark.parametrize("options", _TAPS_KERNELS)
@pytest.mark.parametrize("name", ["panels_taps_densenet", "panels_taps_wide"])
def test_bound_taps_weight_on_other_kernels(name, options, tmp_path):
    """The taps kernel reading stored panels with the portable kernels (no vectors), clang's
    build, and aarch64's NEON tiles (8 columns of each panel of 32, under qemu): XLA's
    results, and the fed build's bits with the same kernels."""
    import shutil

    import aotc
    from aotc.options import CompileOptions

    if options.get("cc") and not shutil.which(options["cc"]):
        pytest.skip(f"{options['cc']} is not installed")
    text, model, feeds, expected = _prepare(name, tmp_path)
    runs = []
    for bound in (False, True):
        ins = {k: v for k, v in feeds.items() if not (bound and k == "w")}
        outs = aotc.run(model, config=_config(tmp_path, text, bound), inputs=ins, threads=2,
                        options=CompileOptions(**options))
        runs.append([np.asarray(v) for v in outs.values()])
    for k, (fed, bnd, e) in enumerate(zip(*runs, expected)):
        assert_matches(bnd, e, RTOL, f"{name} output {k}")
        assert bnd.tobytes() == fed.tobytes(), f"{name} output {k}: other bits than fed"

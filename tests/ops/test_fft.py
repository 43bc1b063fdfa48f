"""fft (FFT, IFFT, RFFT, IRFFT over 1-3 trailing dimensions) against XLA:CPU (DUCC):
lengths with factors 2, 3, 5 and others (Bluestein), batched, c64 and c128, IRFFT of
non-Hermitian input (XLA ignores the imaginary parts of the zero and Nyquist
frequencies), zero and one lengths, and jnp.fft functions as JAX exports them before
and after optimization (tests/ops/data/fft_jax, from gen_fft_modules.py).

Tolerance: errors relative to the largest magnitude of the output. DUCC rounds each
butterfly in the data's precision, so its error grows like eps * log2(N); so does aotc's
(f32 Stockham passes for c64 data of 5-smooth lengths; double for c128 and for Bluestein's
lengths, rounded once). Each output gets 2 eps * (log2 N + 2), N the transform's total
length: about one ulp per radix pass for each of the two, plus the final roundings.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

from functools import partial
from math import log2, prod
from pathlib import Path

import numpy as np
import pytest

from .gen_fft_modules import MODULES
from .conftest import CFLAGS, assert_matches, load_case, run_hlo_text, run_hlo_text_asan

JAX_DIR = Path(__file__).resolve().parent / "data" / "fft_jax"
EPS = {"c64": float(np.finfo(np.float32).eps), "f32": float(np.finfo(np.float32).eps),
       "c128": float(np.finfo(np.float64).eps), "f64": float(np.finfo(np.float64).eps)}
NP = {"c64": np.complex64, "c128": np.complex128, "f32": np.float32, "f64": np.float64}
COMPLEX = {"f32": "c64", "f64": "c128"}
REAL = {"c64": "f32", "c128": "f64"}


def tol(ty: str, n: int) -> float:
    return 2 * EPS[ty] * (log2(max(n, 2)) + 2)


def _data(rng, ty: str, dims: tuple[int, ...]) -> np.ndarray:
    if ty in ("c64", "c128"):
        return (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(NP[ty])
    return rng.standard_normal(dims).astype(NP[ty])


def _module(kind: str, ty: str, items: list[tuple[tuple[int, ...], tuple[int, ...]]], seed: int):
    """One module: an fft of `kind` per (batch dims, fft_length) on parameters of type `ty`;
    returns (text, inputs, per-output rtol)."""
    rng = np.random.default_rng(seed)
    lines, roots, outs, inputs, rtols = [], [], [], [], []
    for k, (batch, lengths) in enumerate(items):
        tail = lengths[:-1] + (lengths[-1] // 2 + 1,) if kind == "IRFFT" else lengths
        out_tail = lengths[:-1] + (lengths[-1] // 2 + 1,) if kind == "RFFT" else lengths
        out_ty = COMPLEX[ty] if kind == "RFFT" else REAL[ty] if kind == "IRFFT" else ty
        dims, odims = batch + tail, batch + out_tail
        shp = f"{ty}[{','.join(map(str, dims))}]"
        oshp = f"{out_ty}[{','.join(map(str, odims))}]"
        lines.append(f"  p{k} = {shp} parameter({k})")
        lines.append(f"  f{k} = {oshp} fft(p{k}), fft_type={kind}, fft_length={{{','.join(map(str, lengths))}}}")
        roots.append(f"f{k}")
        outs.append(oshp)
        inputs.append(_data(rng, ty, dims))
        rtols.append(tol(ty, prod(lengths)))
    text = "HloModule m\n\nENTRY e {\n" + "\n".join(lines) + \
        f"\n  ROOT t = ({', '.join(outs)}) tuple({', '.join(roots)})\n}}\n"
    return text, inputs, tuple(rtols)


SIZES_1D = [1, 2, 8, 12, 60, 97, 128, 210, 1000, 1024, 4096]


def _batch(n: int) -> tuple[int, ...]:
    return (2,) if n >= 1000 else (3,)


# name -> (HLO text, inputs in parameter order, rtol: one, or one per output)
CASES: dict[str, tuple] = {}
for _kind in ("FFT", "IFFT", "RFFT", "IRFFT"):
    for _ty in (("f32", "f64") if _kind == "RFFT" else ("c64", "c128")):
        _s = len(CASES)
        CASES[f"fft_1d_{_kind.lower()}_{_ty}"] = _module(_kind, _ty, [(_batch(n), (n,)) for n in SIZES_1D], _s)
        CASES[f"fft_nd_{_kind.lower()}_{_ty}"] = _module(
            _kind, _ty, [((2,), (64, 48)), ((), (16, 12, 10)), ((2, 2), (5, 7, 6)), ((3,), (1, 97))], 100 + _s)
CASES["fft_256x256_c64"] = _module("FFT", "c64", [((), (256, 256))], 7)
CASES["fft_256x256_irfft_c64"] = _module("IRFFT", "c64", [((), (256, 256))], 10)
# enough work for the kernel to split the batch into ranges (threads may take them)
CASES["fft_batch_ranges_c64"] = _module("FFT", "c64", [((32,), (512,))], 16)
CASES["fft_batch_ranges_irfft_c64"] = _module("IRFFT", "c64", [((16,), (32, 48))], 17)
# ranges of Bluestein transforms (prime length), which share their chirp tables
CASES["fft_batch_ranges_bluestein_c64"] = _module("FFT", "c64", [((40,), (509,))], 18)
# one transform big enough to split each axis's lines over threads (aotc_fft_*_threads), lines
# not a whole number of blocks: a c128 2-D transform with a Bluestein axis, a 3-D RFFT and a
# 2-D IRFFT of odd sizes (f32 passes, the intermediate in double)
CASES["fft_lines_bluestein_c128"] = _module("FFT", "c128", [((), (40, 509))], 19)
CASES["fft_lines_rfft_3d_f32"] = _module("RFFT", "f32", [((), (20, 24, 66))], 20)
CASES["fft_lines_irfft_2d_c64"] = _module("IRFFT", "c64", [((), (100, 90))], 21)
# length 1 (identity; IRFFT keeps the real part), fft_length {1,1}, and IRFFT of non-Hermitian
# spectra of even and odd length (imaginary parts of the DC and Nyquist terms ignored)
CASES["fft_ones_c64"] = _module("FFT", "c64", [((4,), (1,)), ((2,), (1, 1)), ((3, 2), (1, 5))], 12)
CASES["fft_ones_ifft_c64"] = _module("IFFT", "c64", [((4,), (1,)), ((2,), (1, 1))], 13)
CASES["fft_ones_rfft_f32"] = _module("RFFT", "f32", [((4,), (1,)), ((2,), (1, 1))], 14)
CASES["fft_ones_irfft_c64"] = _module("IRFFT", "c64", [((4,), (1,)), ((2,), (1, 1)), ((2,), (2,)), ((2,), (3,))], 15)

_EMPTY = """HloModule m

ENTRY e {
  p0 = c64[3,0] parameter(0)
  p1 = f32[0,8] parameter(1)
  p2 = c64[2,0] parameter(2)
  p3 = c64[0,4,5] parameter(3)
  f0 = c64[3,0] fft(p0), fft_type=FFT, fft_length={0}
  f1 = c64[0,5] fft(p1), fft_type=RFFT, fft_length={8}
  f2 = f32[2,0] fft(p2), fft_type=IRFFT, fft_length={0}
  f3 = c64[0,4,5] fft(p3), fft_type=IFFT, fft_length={4,5}
  ROOT t = (c64[3,0], c64[0,5], f32[2,0], c64[0,4,5]) tuple(f0, f1, f2, f3)
}
"""
CASES["fft_empty"] = (_EMPTY, [np.zeros((3, 0), np.complex64), np.zeros((0, 8), np.float32),
                               np.zeros((2, 0), np.complex64), np.zeros((0, 4, 5), np.complex64)], 0.0)


def _jax_case(name: str, stage: str, seed: int):
    text = (JAX_DIR / f"{name}.{stage}.hlo").read_text()
    param = text.split("ENTRY", 1)[1].split("parameter(0)")[0].rsplit("=", 1)[1].split("{")[0].strip()
    ty, dims = param.split("[")
    dims = tuple(int(d) for d in dims.rstrip("]").split(",") if d)
    fn, kw, shape, _ = MODULES[name]
    rank = 1 if fn in ("fft", "ifft", "rfft", "irfft") else 2 if fn.endswith("2") else len(shape)
    lengths = prod(kw["s"]) if "s" in kw else kw.get("n") or prod(shape[-rank:])
    real = ty in ("f32", "f64")
    return text, [_data(np.random.default_rng(seed), ty, dims)], tol(REAL[ty] if not real else ty, lengths)


for _i, _name in enumerate(sorted(p.name.split(".")[0] for p in JAX_DIR.glob("*.pre.hlo"))):
    for _stage in ("pre", "post"):
        CASES[f"fft_jax_{_name}_{_stage}"] = _jax_case(_name, _stage, 200 + _i)


def _check(name: str, run, workdir) -> None:
    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    got = run(text, inputs, workdir, name)
    assert len(got) == len(expected), f"{name}: {len(got)} outputs, XLA gave {len(expected)}"
    rtols = rtol if isinstance(rtol, tuple) else (rtol,) * len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_matches(g, e, rtols[k], f"{name} output {k}")


_HEAVY: set[str] = set()


# UBSan at -O0: the same checks (the instrumentation comes before any optimization), and a
# sixth of the compile time: at -O1 gcc spends ~8 s a case on the instrumented vector passes
UBSAN_O0 = ("gcc", *(f if f != "-O1" else "-O0" for f in CFLAGS))


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in _HEAVY else n for n in CASES])
def test_fft_case(name, workdir):
    _check(name, partial(run_hlo_text, build_cmd=UBSAN_O0), workdir)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fft_1d_fft_c64", "fft_nd_irfft_c128", "fft_nd_rfft_f32", "fft_ones_irfft_c64",
                                  "fft_jax_irfft2_c64_post"])
def test_fft_case_asan(name, workdir):
    _check(name, run_hlo_text_asan, workdir)


def _bad(shape: str, out: str, attrs: str) -> str:
    return f"HloModule bad\n\nENTRY e {{\n  p = {shape} parameter(0)\n  ROOT f = {out} fft(p), {attrs}\n}}\n"


# XLA:CPU runs the first one and reads out of range; aotc refuses it
BAD = {
    r"FFT with fft_length=\{4\} needs trailing dimensions \[4\], got c64\[3,5\]":
        _bad("c64[3,5]", "c64[3,5]", "fft_type=FFT, fft_length={4}"),
    r"IRFFT with fft_length=\{8\} needs trailing dimensions \[5\]": _bad("c64[3,4]", "f32[3,8]", "fft_type=IRFFT, fft_length={8}"),
    r"RFFT needs an f32 or f64 operand, got c64": _bad("c64[8]", "c64[5]", "fft_type=RFFT, fft_length={8}"),
    r"FFT needs a c64 or c128 operand, got f32": _bad("f32[8]", "c64[8]", "fft_type=FFT, fft_length={8}"),
    r"fft_length of 1 to 3 dimensions": _bad("c64[2,2,2,2]", "c64[2,2,2,2]", "fft_type=FFT, fft_length={2,2,2,2}"),
    r"fewer dimensions than fft_length": _bad("c64[4]", "c64[4]", "fft_type=FFT, fft_length={1,4}"),
}


@pytest.mark.parametrize("message", sorted(BAD))
def test_shape_rule_errors(message):
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions
    with pytest.raises(AotcError, match=r"bad.hlo:5:\d+: error: .*" + message):
        driver.frontend("bad.hlo", None, CompileOptions(), text=BAD[message])


_FLAG_CASES = ["fft_nd_irfft_c64", "fft_1d_fft_c128", "fft_jax_rfft2_f32_post", "fft_batch_ranges_c64",
               "fft_batch_ranges_irfft_c64", "fft_batch_ranges_bluestein_c64", "fft_lines_rfft_3d_f32"]


@pytest.mark.parametrize("name", [n for n in CASES if n.startswith("fft_batch_ranges")])
def test_ranges_of_a_batch_compute_the_tables_once_per_thread(name, tmp_path):
    """Each range of the batch is a call of its own; the ranges a thread runs share the scratch
    of its first one, whose call computes the tables there (fill = ch == lo)."""
    from .conftest import c_text_of

    c = c_text_of(CASES[name][0], name, tmp_path)
    kernel = c[c.index("static void k_"):]
    kernel = kernel[:kernel.index("\n}\n")]
    assert "_shared(" in kernel and kernel.rstrip().endswith("ch == lo);\n    }"), kernel


_LINE_CASES = ["fft_256x256_c64", "fft_256x256_irfft_c64"] + [n for n in CASES if n.startswith("fft_lines_")]


# two in the fast step (f32 passes; a Bluestein axis in double), the rest with the heavy tests
@pytest.mark.parametrize("name", [n if n in ("fft_256x256_c64", "fft_lines_bluestein_c128") else
                                  pytest.param(n, marks=pytest.mark.slow) for n in _LINE_CASES])
def test_lines_split_over_threads_give_the_serial_bits(name, workdir, tmp_path):
    """A single transform's lines in ranges over the pool (aotc_fft_*_threads: whole blocks of
    lines per range): the bits of one thread on 2 and 3 threads, within tolerance of XLA."""
    import aotc
    from aotc import driver
    from aotc.options import CompileOptions

    from .conftest import c_text_of

    text, _, rtol = CASES[name]
    c = c_text_of(text, name, tmp_path)
    assert "_threads(" in c[c.index("static void k_"):], name
    inputs, expected = load_case(name)
    model = workdir / f"{name}.lines.hlo"
    model.write_text(text)
    feeds = driver.frontend(str(model), None, CompileOptions()).signature.feeds
    feed = {f.name: inputs[f.param_number] for f in feeds}
    runs = {t: list(aotc.run(str(model), inputs=feed, threads=t).values()) for t in (1, 2, 3)}
    rtols = rtol if isinstance(rtol, tuple) else (rtol,) * len(expected)
    for k, (g, e) in enumerate(zip(runs[1], expected)):
        assert_matches(g, e, rtols[k], f"{name} output {k}")
    for t in (2, 3):
        for k, (g, f) in enumerate(zip(runs[t], runs[1])):
            assert g.tobytes() == f.tobytes(), f"{name} output {k}: {t} threads"


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in _LINE_CASES if n.startswith("fft_lines_")])
def test_lines_split_over_threads_under_sanitizers(name, workdir):
    """The ranges of lines on two threads under ASan and UBSan: each range's work buffers and
    the shared tables stay in bounds."""
    import aotc
    from aotc import driver
    from aotc.options import CompileOptions

    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    model = workdir / f"{name}.lines_asan.hlo"
    model.write_text(text)
    feeds = driver.frontend(str(model), None, CompileOptions()).signature.feeds
    outs = aotc.run(str(model), inputs={f.name: inputs[f.param_number] for f in feeds}, threads=2,
                    options=CompileOptions(cc="gcc", opt_level="-O1", sanitize="address"))
    rtols = rtol if isinstance(rtol, tuple) else (rtol,) * len(expected)
    for k, (g, e) in enumerate(zip(outs.values(), expected)):
        assert_matches(np.asarray(g), e, rtols[k], f"{name} output {k} (sanitizers)")


@pytest.mark.slow
@pytest.mark.parametrize("name", _FLAG_CASES)
def test_same_bits_under_compilers_flags_and_threads(name, workdir):
    """gcc and clang at -O0, -O2, -O3 (and -O2 -march=native), 1 and 2 threads: the same
    bits everywhere, within tolerance of XLA."""
    import shutil

    import aotc
    from aotc import driver
    from aotc.options import CompileOptions
    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    model = workdir / f"{name}.flags.hlo"
    model.write_text(text)
    feeds = driver.frontend(str(model), None, CompileOptions()).signature.feeds
    feed = {f.name: inputs[f.param_number] for f in feeds}
    first = None
    for cc in ("gcc", "clang"):
        if shutil.which(cc) is None:
            continue
        for opt, extra in (("-O0", ()), ("-O2", ()), ("-O3", ()), ("-O2", ("-march=native",))):
            for threads in (1, 2):
                outs = list(aotc.run(str(model), inputs=feed, threads=threads,
                                     options=CompileOptions(cc=cc, opt_level=opt, cflags=extra)).values())
                if first is None:
                    first = outs
                    rtols = rtol if isinstance(rtol, tuple) else (rtol,) * len(expected)
                    for k, (g, e) in enumerate(zip(outs, expected)):
                        assert_matches(g, e, rtols[k], f"{name} output {k}")
                for k, (g, f) in enumerate(zip(outs, first)):
                    assert g.tobytes() == f.tobytes(), f"{name} output {k}: {cc} {opt} {extra} {threads} threads"

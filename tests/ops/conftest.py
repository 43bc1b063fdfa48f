"""Compile-and-run helper for the op-family tests.

Each case is a small hand-written HLO module whose inputs and XLA:CPU outputs
are stored in tests/ops/data/<case>.npz (written by gen_expected.py; nothing
here computes expected values). `run_case` compiles the module with aotc,
builds it with gcc under -Werror and UBSan, runs it through ctypes and
returns the outputs; any UBSan report fails the test. The slow variant of every
case builds it with AddressSanitizer and UBSan (`aotc.run` with sanitize="address",
any report aborts the run) instead.
"""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = Path(__file__).resolve().parent / "data"
CFLAGS = ["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-fsanitize=undefined", "-shared", "-fPIC"]


def load_case(name: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(inputs, expected outputs) of a case, as XLA saw and produced them."""
    path = DATA / f"{name}.npz"
    if not path.exists():
        pytest.fail(f"{path} is missing: run python tests/ops/gen_expected.py")
    z = np.load(path)
    ins = [z[f"in{k}"] for k in range(sum(1 for n in z.files if n.startswith("in")))]
    outs = [z[f"out{k}"] for k in range(sum(1 for n in z.files if n.startswith("out")))]
    return ins, outs


def _storage(a: np.ndarray, type_name: str) -> np.ndarray:
    if type_name in ("bf16", "f16"):
        return np.ascontiguousarray(np.asarray(a).view(np.uint16))
    if type_name == "pred":
        return np.ascontiguousarray(a, dtype=np.uint8)
    return np.ascontiguousarray(a)


def _from_storage(a: np.ndarray, type_name: str) -> np.ndarray:
    if type_name == "bf16":
        return a.view(ml_dtypes.bfloat16)
    if type_name == "f16":
        return a.view(np.float16)
    if type_name == "pred":
        return a.astype(np.bool_)
    return a


class _Stderr:
    """Captures what C code writes to file descriptor 2 (UBSan's reports)."""

    def __enter__(self):
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()
        return False


def run_hlo_text(text: str, inputs: list[np.ndarray], workdir: Path, name: str,
                 const_encoding: str = "auto", build_cmd: tuple[str, ...] | None = None,
                 stream_min_bytes: int | None = None, misalign: int = 0) -> list[np.ndarray]:
    """Compile HLO text with aotc and run it on `inputs` (in parameter order). Large
    constants need `const_encoding="array"` (this runner writes only the .c and .h).
    `build_cmd` replaces gcc and CFLAGS (the compiler and its flags, before the files);
    `stream_min_bytes` is CompileOptions'; each result buffer starts `misalign` bytes past
    a 64-byte boundary."""
    from aotc import driver
    from aotc.options import CompileOptions

    opts = CompileOptions(const_encoding=const_encoding)
    if stream_min_bytes is not None:
        opts = replace(opts, stream_min_bytes=stream_min_bytes)
    fe = driver.frontend(f"{name}.hlo", None, opts, text=text)
    gen = driver.generate(fe, str(workdir / f"lib{name}"), opts)
    c_path, so_path = workdir / f"lib{name}.c", workdir / f"lib{name}.so"
    c_path.write_text(gen.c_text)
    (workdir / gen.header_name).write_text(gen.h_text)
    if gen.blob is not None:  # large constants: the blob the .c includes with .incbin
        with open(str(c_path) + ".bin", "wb") as f:
            gen.blob.write(f)
    build = subprocess.run([*(build_cmd or ("gcc", *CFLAGS)), "-o", str(so_path), str(c_path), "-lm", "-lpthread"],
                           capture_output=True, text=True)
    assert build.returncode == 0, f"gcc failed on {c_path}:\n{build.stderr[:4000]}"
    lib = ctypes.CDLL(str(so_path))
    prog = gen.lowered.program
    by_param = {p.name: p.parameter_number for p in fe.module.entry_computation.parameters}
    args = [_storage(inputs[by_param[a.hlo]], a.dtype.name) for a in prog.args]
    res = [_buffer(r.dims, np.uint16 if r.dtype.name in ("bf16", "f16") else
                   np.uint8 if r.dtype.name == "pred" else r.dtype.numpy, misalign) for r in prog.results]
    arena = np.zeros(prog.arena_bytes + 64, np.uint8)
    base = arena.ctypes.data + (-arena.ctypes.data) % 64
    a_ptrs = (ctypes.c_void_p * max(1, len(args)))(*[x.ctypes.data for x in args])
    r_ptrs = (ctypes.c_void_p * max(1, len(res)))(*[x.ctypes.data for x in res])
    with _Stderr() as err:
        rc = getattr(lib, f"{gen.name}_run_with")(a_ptrs, r_ptrs, ctypes.c_void_p(base), ctypes.c_size_t(prog.arena_bytes))
    assert "runtime error" not in err.text, f"UBSan in {c_path}:\n{err.text[:4000]}"
    assert rc == 0
    return [_from_storage(x, r.dtype.name) for x, r in zip(res, prog.results)]


def _buffer(dims, dtype, misalign: int) -> np.ndarray:
    """Zeros of `dims`, starting `misalign` bytes past a 64-byte boundary."""
    dtype = np.dtype(dtype)
    n = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    raw = np.zeros(n + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + misalign
    return raw[start:start + n].view(dtype).reshape(dims)


def run_hlo_text_asan(text: str, inputs: list[np.ndarray], workdir: Path, name: str) -> list[np.ndarray]:
    """run_hlo_text, built with AddressSanitizer and UBSan by `aotc.run` (a report aborts the
    runner, which aotc.run turns into an error)."""
    import aotc
    from aotc import driver
    from aotc.options import CompileOptions

    model = workdir / f"{name}.asan.hlo"
    model.write_text(text)
    feeds = driver.frontend(str(model), None, CompileOptions()).signature.feeds
    # the stored inputs of a scalar may be one-element arrays (the ctypes runner takes any)
    outs = aotc.run(str(model), inputs={f.name: np.reshape(inputs[f.param_number], f.shape.dims) for f in feeds},
                    options=CompileOptions(cc="gcc", opt_level="-O1", sanitize="address"))
    return list(outs.values())


def assert_matches(got: np.ndarray, want: np.ndarray, rtol: float, name: str) -> None:
    """Integers and pred exactly; floats with NaN in the same places, and either bit-exact
    (rtol 0, signed zeros included) or within rtol of the value plus rtol of the largest
    magnitude (sums in another order than XLA's cancel differently)."""
    want = np.asarray(want)
    if want.dtype == np.uint16 and got.dtype == ml_dtypes.bfloat16:
        want = want.view(ml_dtypes.bfloat16)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    if got.dtype.kind == "c":  # real and imaginary parts side by side
        got, want = got.view(got.real.dtype), want.view(want.real.dtype)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{name}: NaN positions")
    if rtol == 0:
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=f"{name}: signs")
    finite = np.abs(w[np.isfinite(w)])
    atol = rtol * float(finite.max()) if finite.size else 0.0
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ops")


@pytest.fixture(params=["ubsan", pytest.param("asan", marks=pytest.mark.slow)])
def check_case(workdir, request):
    """check_case(name, text, rtol): compile the case, run it on its stored inputs, compare;
    built with UBSan (ctypes), and in the slow variant with ASan and UBSan (a runner)."""
    run = run_hlo_text if request.param == "ubsan" else run_hlo_text_asan

    def check(name: str, text: str, rtol: float = 0.0) -> None:
        inputs, expected = load_case(name)
        got = run(text, inputs, workdir, name)
        assert len(got) == len(expected), f"{name}: {len(got)} outputs, XLA gave {len(expected)}"
        for k, (g, e) in enumerate(zip(got, expected)):
            if e.dtype == np.uint8 and g.dtype.itemsize == 1 and g.dtype.kind not in "biu":
                e = e.view(g.dtype)  # the npz holds the one-byte ml_dtypes types as their codes
            assert_matches(g, e, rtol, f"{name} output {k}")

    return check


def check_with_compiler(name: str, text: str, rtol: float, cc: str, opt: str, workdir: Path) -> None:
    """Case `name` built by `cc` at `opt` with the machine's widest vectors (-march=native) and
    warnings as errors, against its stored XLA outputs."""
    import shutil

    if shutil.which(cc) is None:
        pytest.fail(f"{cc} is not installed (CI installs it)")
    cmd = (cc, "-std=c11", opt, "-march=native", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC")
    inputs, expected = load_case(name)
    got = run_hlo_text(text, inputs, workdir, f"{name}_{cc}_{opt.strip('-')}", build_cmd=cmd)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_matches(g, e, rtol, f"{name} output {k} ({cc} {opt})")


def c_text_of(text: str, name: str, tmp_path: Path) -> str:
    """The generated C of HLO `text` (default options)."""
    from aotc import driver
    from aotc.options import CompileOptions

    opts = CompileOptions()
    return driver.generate(driver.frontend(f"{name}.hlo", None, opts, text=text), str(tmp_path / name), opts).c_text


def assert_same_bits_without(name: str, text: str, workdir: Path, switch_off, marker: str) -> None:
    """Case `name` built by gcc -O3 with the machine's vectors, then again after
    `switch_off()` (which must remove `marker` from the generated C): the same output bits."""
    inputs, _ = load_case(name)
    cmd = ("gcc", "-std=c11", "-O3", "-march=native", "-shared", "-fPIC")
    on = run_hlo_text(text, inputs, workdir, f"{name}_on", build_cmd=cmd)
    switch_off()
    assert marker not in c_text_of(text, name, workdir)
    off = run_hlo_text(text, inputs, workdir, f"{name}_off", build_cmd=cmd)
    for k, (a, b) in enumerate(zip(on, off)):
        assert a.tobytes() == b.tobytes(), f"{name} output {k}: {np.sum(a != b)} elements differ"

"""Bound weights in each constant encoding (`--const-encoding incbin|string|array`), built
with gcc and clang under -Wall -Wextra -Werror, against XLA's outputs
(tests/data/weights/mlp, from tests/fixtures/gen_weights.py); aarch64 under qemu; the
written files are deterministic; a 100 MB constant compiles in bounded time and memory."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import aotc
from aotc.emit_c.constants import AUTO_ARRAY_BYTES, resolve_encoding

from .conftest import from_npz, have_aarch64

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "weights", "mlp")
MODEL, CFG = os.path.join(DATA, "model.hlo"), os.path.join(DATA, "cfg_a.yaml")
WERROR = ("-Wall", "-Wextra", "-Werror")
_AARCH64, _AARCH64_WHY = have_aarch64()


def _io():
    with np.load(os.path.join(DATA, "inputs.npz")) as z:
        x = z["x"]
    with np.load(os.path.join(DATA, "expected.npz")) as z:
        return x, {k: from_npz(z[k], "f32") for k in z.files}


_SLOW = pytest.mark.slow  # the array encoding is every other test's; one compiler each for the rest


@pytest.mark.parametrize("encoding,cc", [("incbin", "gcc"), ("incbin", "clang"), ("string", "gcc"),
                                         pytest.param("string", "clang", marks=_SLOW),
                                         pytest.param("array", "gcc", marks=_SLOW),
                                         pytest.param("array", "clang", marks=_SLOW)])
def test_bound_weights_match_xla(tmp_path, encoding, cc):
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    res = aotc.compile(MODEL, config=CFG, out=str(tmp_path / "libmlp"), const_encoding=encoding, cc=cc,
                       cflags=WERROR, opt_level="-O0", emit=("o", "so"))  # the bytes do not depend on -O
    blob = tmp_path / "libmlp.c.bin"
    assert blob.exists() == (encoding == "incbin") and (res.blob_path is not None) == (encoding == "incbin")
    c_text = (tmp_path / "libmlp.c").read_text()
    assert ("__asm__(AOTC_CONST_SECTION" in c_text) == (encoding == "incbin")
    assert ("unsigned char bytes[" in c_text) == (encoding == "string")
    x, expected = _io()
    (y,) = aotc.load(res)(x)
    np.testing.assert_allclose(y, expected["y_a"], rtol=1e-5, atol=1e-5)
    if encoding == "incbin":
        # two models with the same constant names link into one program: the blob's symbols
        # are local, in a read-only section, 64-byte aligned
        nm = subprocess.run(["nm", res.obj_path], capture_output=True, text=True, check=True).stdout
        consts = [ln.split() for ln in nm.splitlines() if "_const_" in ln]
        assert consts and all(kind == "r" for _, kind, _ in consts), consts
        assert all(int(addr, 16) % 64 == 0 for addr, _, _ in consts)


def test_written_files_are_deterministic(tmp_path):
    for d in ("a", "b"):
        aotc.compile(MODEL, config=CFG, out=str(tmp_path / d / "libmlp"), const_encoding="incbin", emit=())
    for ext in (".c", ".h", ".c.bin"):
        assert (tmp_path / "a" / f"libmlp{ext}").read_bytes() == (tmp_path / "b" / f"libmlp{ext}").read_bytes()


def test_a_new_build_without_blob_removes_the_old_blob(tmp_path):
    out = str(tmp_path / "libmlp")
    aotc.compile(MODEL, config=CFG, out=out, const_encoding="incbin", emit=())
    assert os.path.exists(out + ".c.bin")
    aotc.compile(MODEL, config=CFG, out=out, const_encoding="array", emit=())
    assert not os.path.exists(out + ".c.bin")


def test_auto_encoding():
    assert resolve_encoding("auto", False, AUTO_ARRAY_BYTES - 1) == "array"
    assert resolve_encoding("auto", False, AUTO_ARRAY_BYTES) == "incbin"
    assert resolve_encoding("auto", True, AUTO_ARRAY_BYTES) == "string"
    assert resolve_encoding("string", False, 0) == "string"


@pytest.mark.aarch64
@pytest.mark.skipif(not _AARCH64, reason=_AARCH64_WHY)
@pytest.mark.slow  # emulated; the runner and the example run aarch64 in the fast step
@pytest.mark.parametrize("encoding", ["incbin", "string"])
def test_aarch64_under_qemu(encoding):
    x, expected = _io()
    outs = aotc.run(MODEL, config=CFG, inputs={"x": x}, target="aarch64", const_encoding=encoding)
    np.testing.assert_allclose(outs["y"], expected["y_a"], rtol=1e-5, atol=1e-5)


LAUNCHER = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n"
            "_, status, u = os.wait4(pid, 0)\n"
            "sys.stdout.write('%d %r %d' % (os.waitstatus_to_exitcode(status), u.ru_utime + u.ru_stime, u.ru_maxrss))")


def _child(cmd, cwd=None):
    """(CPU s, peak MiB) of one child process, forked by a small launcher (a child forked from
    this big process would count its memory until it execs)."""
    p = subprocess.run([sys.executable, "-c", LAUNCHER, *cmd], capture_output=True, text=True, cwd=cwd)
    code, cpu, kib = p.stdout.split()[-3:]
    assert code == "0", p.stderr[-2000:]
    return float(cpu), int(kib) / 1024


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["incbin", "string"])
def test_100mb_constant(tmp_path, encoding):
    """A 100 MB bound constant: aotc within 2x its size in memory, the C compiler (incbin)
    within 1.5x, and the library adds it to its input as XLA does."""
    pytest.importorskip("jax")
    import jax
    n = 25_000_000
    (tmp_path / "m.hlo").write_text("HloModule big\n\nENTRY main {\n  x = f32[%d] parameter(0)\n"
                                    "  w = f32[%d] parameter(1)\n  ROOT y = f32[%d] add(x, w)\n}\n" % (n, n, n))
    w = np.random.default_rng(3).standard_normal(n, np.float32)
    np.save(tmp_path / "w.npy", w)
    np.savez(tmp_path / "w.npz", w=w)
    (tmp_path / "cfg.yaml").write_text("feeds:\n  - {id: 0, name: x}\nbound:\n  file: w.npz\n  params:\n"
                                       "    - {id: 1, key: w}\n")
    del w
    root = ROOT
    out = str(tmp_path / "libbig")
    cpu, mib = _child([sys.executable, "-m", "aotc.cli", "compile", str(tmp_path / "m.hlo"), "--config",
                       str(tmp_path / "cfg.yaml"), "-o", out, "--emit", "none", "--const-encoding", encoding], cwd=root)
    assert mib < 2 * 100e6 / 2**20 + 120, mib  # twice the constant, plus the interpreter and numpy
    cc_cpu, cc_mib = _child(["gcc", "-std=c11", "-O2", "-fPIC", "-c", out + ".c", "-o", out + ".o"])
    if encoding == "incbin":
        assert cc_mib < 1.5 * 100e6 / 2**20, cc_mib
        assert cpu + cc_cpu < 10, (cpu, cc_cpu)  # well over 10 MB/s even on a loaded machine
    so = out + ".so"
    subprocess.run(["gcc", "-shared", out + ".o", "-o", so, "-lm", "-lpthread"], check=True)
    from aotc.toolchain.loader import load_library
    model = load_library(so, "big")
    x = np.random.default_rng(4).standard_normal(n, np.float32)
    (y,) = model(x)
    expected = np.asarray(jax.jit(lambda a, b: a + b)(x, np.load(tmp_path / "w.npy")))
    assert y.tobytes() == expected.tobytes()

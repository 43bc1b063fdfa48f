"""Generated C gives XLA's results whatever flags build it: the flag-matrix model
(cases.py: depthwise, multiplier, grouped, dilated convolutions with SAME, VALID
and asymmetric padding at strides 1 and 2, max and average pools) is generated
once, compiled by gcc and clang at -O1/-O2/-O3/-Os, at `-O2 -march=native`
(GNU dialect: contraction allowed by default) and with aotc's own flags, and
compared with XLA:CPU's outputs (data/flag_matrix.npz from gen_expected.py).
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from aotc import driver
from aotc.options import CompileOptions
from aotc.toolchain.build import base_cflags
from aotc.toolchain.targets import resolve_target
from tests.numeric import cases
from tests.numeric.gen_expected import DATA

# f32 sums in another order than XLA's: a few ulps of the largest magnitude
TOL = 2e-5
FLAG_SETS = {"O1": ["-O1"], "O2": ["-O2"], "O3": ["-O3"], "Os": ["-Os"], "O2-native": ["-O2", "-march=native"],
             "aotc": None}
MATRIX = [(cc, fl) for cc in ("gcc", "clang") for fl in FLAG_SETS]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("flag_matrix")
    fe = driver.frontend("flag_matrix.hlo", None, CompileOptions(), text=cases.hlo_text())
    gen = driver.generate(fe, str(d / "libflag_matrix"), CompileOptions())
    c_path = d / "libflag_matrix.c"
    c_path.write_text(gen.c_text)
    (d / gen.header_name).write_text(gen.h_text)
    path = DATA / "flag_matrix.npz"
    if not path.exists():
        pytest.fail(f"{path} is missing: run python tests/numeric/gen_expected.py")
    by_param = {p.name: p.parameter_number for p in fe.module.entry_computation.parameters}
    return d, c_path, gen, by_param, dict(np.load(path))


def _flags(cc: str, name: str) -> list[str]:
    if FLAG_SETS[name] is not None:
        return FLAG_SETS[name]
    return [*resolve_target("host").flags_for(cc), *base_cflags(CompileOptions())]


def _run(so, gen, by_param, ins):
    lib = ctypes.CDLL(str(so))
    prog = gen.lowered.program
    args = [ins[by_param[a.hlo]] for a in prog.args]
    res = [np.zeros(r.dims, np.float32) for r in prog.results]
    arena = np.zeros(prog.arena_bytes + 64, np.uint8)
    base = arena.ctypes.data + (-arena.ctypes.data) % 64
    a_ptrs = (ctypes.c_void_p * len(args))(*[x.ctypes.data for x in args])
    r_ptrs = (ctypes.c_void_p * len(res))(*[x.ctypes.data for x in res])
    assert getattr(lib, f"{gen.name}_run_with")(a_ptrs, r_ptrs, ctypes.c_void_p(base), ctypes.c_size_t(prog.arena_bytes)) == 0
    return res


@pytest.mark.parametrize("cc,flags", MATRIX, ids=[f"{c}-{f}" for c, f in MATRIX])
def test_matches_xla(model, cc, flags):
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    d, c_path, gen, by_param, want = model
    so = d / f"libflag_matrix_{cc}_{flags}.so"
    subprocess.run([cc, *_flags(cc, flags), "-fPIC", "-shared", "-o", str(so), str(c_path), "-lm", "-lpthread"],
                   check=True, capture_output=True)
    outs = _run(so, gen, by_param, cases.inputs())
    assert len(outs) == len(cases.NAMES)
    for k, (name, out) in enumerate(zip(cases.NAMES, outs)):
        got = cases.reduce(out, k)
        w = want[f"val{k}"]
        atol = TOL * float(np.abs(w).max())
        np.testing.assert_allclose(got[f"val{k}"], w, rtol=TOL, atol=atol, err_msg=f"{name} ({cc} {flags})")
        np.testing.assert_allclose(got[f"sum{k}"], want[f"sum{k}"], rtol=0, atol=TOL * float(want[f"abs{k}"].max()),
                                   err_msg=f"{name} per-channel sums ({cc} {flags})")

"""Bounded dynamic dimensions against XLA:CPU: set-dimension-size with several real sizes
(0, 1, a middle one, bound - 1, the bound) feeding elementwise ops, broadcast, transpose, a
slice of the static parts, concatenate along a static dimension, reductions over and across
the dynamic dimension (XLA masks the padding with the init value), dots contracting or
batching over it, get-dimension-size, and dynamic entry results on every type.
Bounds of a few thousand elements. A size outside [0, bound] (undefined in XLA, which reads
past the buffer) is clamped by aotc, so it gives XLA's result at the clamped size. Other ops
receiving a dynamic dimension are located errors naming the op.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

_ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
"""

B = 3000  # the bound of the dynamic dimension
SIZES = (0, 1, 1234, B - 1, B)

ELEMENTWISE = f"""HloModule dyn_elementwise
{_ADD}
ENTRY main {{
  x = f32[4,{B}] parameter(0)
  y = f32[4,{B}] parameter(1)
  n = s32[] parameter(2)
  d = f32[4,<={B}] set-dimension-size(x, n), dimensions={{1}}
  m = f32[4,<={B}] multiply(d, y)
  c = pred[4,<={B}] compare(d, y), direction=GT
  s = f32[4,<={B}] select(c, m, d)
  h = f16[4,<={B}] convert(s)
  e = f32[4,<={B}] convert(h)
  z = f32[] constant(0)
  ninf = f32[] constant(-inf)
  r = f32[4] reduce(e, z), dimensions={{1}}, to_apply=add
  mx = f32[4] reduce(s, ninf), dimensions={{1}}, to_apply=max
  all = f32[] reduce(m, z), dimensions={{0,1}}, to_apply=add
  g = s32[] get-dimension-size(e), dimensions={{1}}
  g0 = s32[] get-dimension-size(e), dimensions={{0}}
  ROOT t = (f32[4], f32[4], f32[], s32[], s32[]) tuple(r, mx, all, g, g0)
}}
"""

BROADCAST = f"""HloModule dyn_broadcast
{_ADD}
ENTRY main {{
  v = f32[{B}] parameter(0)
  w = f32[8,{B}] parameter(1)
  n = s32[] parameter(2)
  dv = f32[<={B}] set-dimension-size(v, n), dimensions={{0}}
  b = f32[<={B},8] broadcast(dv), dimensions={{0}}
  t = f32[8,<={B}] transpose(b), dimensions={{1,0}}
  m = f32[8,<={B}] multiply(t, w)
  sl = f32[5,<={B}] slice(m), slice={{[2:7], [0:{B}]}}
  cat = f32[13,<={B}] concatenate(sl, t), dimensions={{0}}
  z = f32[] constant(0)
  r = f32[13] reduce(cat, z), dimensions={{1}}, to_apply=add
  out = f32[8] reduce(b, z), dimensions={{0}}, to_apply=add
  ROOT res = (f32[13], f32[8]) tuple(r, out)
}}
"""

DOT = """HloModule dyn_dot
ENTRY main {
  x = f32[16,1024] parameter(0)
  y = f32[1024,24] parameter(1)
  n = s32[] parameter(2)
  dx = f32[16,<=1024] set-dimension-size(x, n), dimensions={1}
  dy = f32[<=1024,24] set-dimension-size(y, n), dimensions={0}
  both = f32[16,24] dot(dx, dy), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  one = f32[16,24] dot(dx, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[16,24], f32[16,24]) tuple(both, one)
}
"""

BATCH = f"""HloModule dyn_dot_batch
{_ADD}
ENTRY main {{
  x = f32[300,8,16] parameter(0)
  y = f32[300,16,4] parameter(1)
  n = s32[] parameter(2)
  dx = f32[<=300,8,16] set-dimension-size(x, n), dimensions={{0}}
  p = f32[<=300,8,4] dot(dx, y), lhs_batch_dims={{0}}, lhs_contracting_dims={{2}}, rhs_batch_dims={{0}}, rhs_contracting_dims={{1}}
  z = f32[] constant(0)
  ROOT r = f32[8,4] reduce(p, z), dimensions={{0}}, to_apply=add
}}
"""


class _rng:
    """Random values in steps of 1/8 (the fixtures compress well), some of them large."""

    def __init__(self, seed):
        self.g = np.random.default_rng(seed)

    def standard_normal(self, shape):
        return np.round(self.g.standard_normal(shape) * 8) / 8


def _ew(n):
    return [_rng(1).standard_normal((4, B)).astype(np.float32), _rng(2).standard_normal((4, B)).astype(np.float32),
            np.int32(n)]


def _bc(n):
    return [_rng(3).standard_normal(B).astype(np.float32), _rng(4).standard_normal((8, B)).astype(np.float32),
            np.int32(n)]


def _dot(n):
    return [_rng(5).standard_normal((16, 1024)).astype(np.float32),
            _rng(6).standard_normal((1024, 24)).astype(np.float32), np.int32(n)]


def _batch(n):
    return [_rng(7).standard_normal((300, 8, 16)).astype(np.float32),
            _rng(8).standard_normal((300, 16, 4)).astype(np.float32), np.int32(n)]


CASES = {}
for _n in SIZES:
    CASES[f"dynshape_elementwise_{_n}"] = (ELEMENTWISE, _ew(_n), 0.0)
    CASES[f"dynshape_broadcast_{_n}"] = (BROADCAST, _bc(_n), 0.0)
for _n in (0, 1, 1000, 1024):
    CASES[f"dynshape_dot_{_n}"] = (DOT, _dot(_n), 1e-5)
for _n in (0, 1, 173, 300):
    CASES[f"dynshape_dot_batch_{_n}"] = (BATCH, _batch(_n), 1e-5)

# dynamic entry results: each returned with get-dimension-size of each of its dimensions, so
# the real dims come from XLA too
RESULTS = """HloModule dyn_results
ENTRY main {
  x = f32[40,300] parameter(0)
  y = f32[300] parameter(1)
  n = s32[] parameter(2)
  m = s32[] parameter(3)
  d = f32[<=40,300] set-dimension-size(x, n), dimensions={0}
  e = f32[<=40,<=300] set-dimension-size(d, m), dimensions={1}
  yb = f32[40,300] broadcast(y), dimensions={1}
  a = f32[<=40,<=300] add(e, yb)
  t = f32[<=300,<=40] transpose(a), dimensions={1,0}
  c = s32[<=300,<=40] convert(t)
  ga0 = s32[] get-dimension-size(a), dimensions={0}
  ga1 = s32[] get-dimension-size(a), dimensions={1}
  gt0 = s32[] get-dimension-size(c), dimensions={0}
  gt1 = s32[] get-dimension-size(c), dimensions={1}
  ROOT r = (f32[<=40,<=300], s32[<=300,<=40], s32[], s32[], s32[], s32[]) tuple(a, c, ga0, ga1, gt0, gt1)
}
"""
RESULT_DIMS = {0: (2, 3), 1: (4, 5)}


def _results(n, m):
    return [_rng(9).standard_normal((40, 300)).astype(np.float32), _rng(10).standard_normal(300).astype(np.float32),
            np.int32(n), np.int32(m)]


# set-dimension-size as the root on each type (the coverage probe's module, at a realistic bound)
TYPES = ("pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "c64", "c128")


def _root_module(t: str) -> str:
    return f"""HloModule dyn_root_{t}
ENTRY main {{
  x = {t}[7,1000] parameter(0)
  n = s32[] parameter(1)
  r = {t}[7,<=1000] set-dimension-size(x, n), dimensions={{1}}
  g = s32[] get-dimension-size(r), dimensions={{1}}
  h = s32[] get-dimension-size(r), dimensions={{0}}
  ROOT out = ({t}[7,<=1000], s32[], s32[]) tuple(r, h, g)
}}
"""


def _typed(t: str) -> np.ndarray:
    from tests.oracle.xla import np_dtype
    v = _rng(11).standard_normal((7, 1000)) * 40
    dt = np_dtype(t)
    if dt.kind == "c":
        return (v + 1j * v[::-1]).astype(dt)
    if dt.kind == "b":
        return v > 0
    if dt.kind in "iu":
        return np.abs(v).astype(dt) if dt.kind == "u" else v.astype(dt)
    return v.astype(dt)


DYNAMIC_RESULTS = {}
for _n, _m in ((0, 0), (40, 300), (17, 123), (40, 0), (1, 299)):
    CASES[f"dynshape_results_{_n}_{_m}"] = (RESULTS, _results(_n, _m), 0.0)
    DYNAMIC_RESULTS[f"dynshape_results_{_n}_{_m}"] = RESULT_DIMS
for _t in TYPES:
    CASES[f"dynshape_root_{_t}"] = (_root_module(_t), [_typed(_t), np.int32(613)], 0.0)
    DYNAMIC_RESULTS[f"dynshape_root_{_t}"] = {0: (1, 2)}


@pytest.mark.parametrize("name", sorted(set(CASES) - set(DYNAMIC_RESULTS)))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


def _real(a: np.ndarray, dims) -> np.ndarray:
    dims = tuple(int(d) for d in dims)
    return np.asarray(a).reshape(-1)[:int(np.prod(dims))].reshape(dims)


@pytest.mark.parametrize("name", sorted(DYNAMIC_RESULTS))
def test_dynamic_result(name, workdir):
    """The raw C API (UBSan build): each dynamic result's buffer holds XLA's real-size array
    at its start and zeros after; the dims result after the fetches holds XLA's real dims."""
    from tests.ops.conftest import assert_matches, load_case, run_hlo_text
    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    got = run_hlo_text(text, inputs, workdir, name)
    dyn = DYNAMIC_RESULTS[name]
    assert len(got) == len(expected) + len(dyn)
    for extra, (i, dims_at) in zip(got[len(expected):], sorted(dyn.items())):
        want_dims = [int(expected[k]) for k in dims_at]
        assert [int(d) for d in extra] == want_dims, f"{name} result {i} dims"
        assert_matches(_real(got[i], want_dims), _real(expected[i], want_dims), rtol, f"{name} result {i}")
        rest = np.asarray(got[i]).reshape(-1)[int(np.prod(want_dims)):]
        assert not rest.any(), f"{name} result {i}: nonzero past the real size"
    for k in set(range(len(expected))) - set(dyn):
        assert_matches(got[k], expected[k], rtol, f"{name} output {k}")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dynshape_results_17_123", "dynshape_results_0_0", "dynshape_root_c64"])
def test_dynamic_result_asan(name, workdir):
    """`aotc.run` (ASan and UBSan): results at their real size, as XLA returns them."""
    from tests.ops.conftest import assert_matches, load_case, run_hlo_text_asan
    text, _, rtol = CASES[name]
    inputs, expected = load_case(name)
    got = run_hlo_text_asan(text, inputs, workdir, name)
    assert len(got) == len(expected)
    for k, e in enumerate(expected):
        want = _real(e, [int(expected[d]) for d in DYNAMIC_RESULTS[name][k]]) if k in DYNAMIC_RESULTS[name] else e
        assert_matches(got[k], want, rtol, f"{name} output {k}")


@pytest.mark.parametrize("outside, inside", [(4000, 3000), (2 ** 31 - 1, 3000), (-5, 0), (-2 ** 31, 0)])
def test_size_outside_the_bound_is_clamped(outside, inside, workdir):
    """XLA reads past the buffer for a size above the bound (and crashes below 0); aotc clamps
    the size into [0, bound], so the result is XLA's at the clamped size."""
    from tests.ops.conftest import assert_matches, load_case, run_hlo_text
    name = f"dynshape_elementwise_{inside}"
    inputs, expected = load_case(name)
    got = run_hlo_text(ELEMENTWISE, inputs[:2] + [np.int32(outside)], workdir, f"dynshape_clamp_{outside % 7}")
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_matches(g, e, 0.0, f"{name} output {k} at size {outside}")


_ERRORS = {
    "sort": ("""  d = f32[4,<=300] set-dimension-size(x, n), dimensions={1}
  ROOT s = f32[4,<=300] sort(d), dimensions={1}, to_apply=lt""", "dynamic dimension reaches `sort`", 2),
    "slice": ("""  d = f32[4,<=300] set-dimension-size(x, n), dimensions={1}
  ROOT s = f32[4,<=100] slice(d), slice={[0:4], [0:100]}""", "slice s cuts the dynamic dimension 1", 2),
    "concatenate": ("""  d = f32[4,<=300] set-dimension-size(x, n), dimensions={1}
  ROOT c = f32[4,<=600] concatenate(d, d), dimensions={1}""", "concatenate c joins along the dynamic dimension 1", 2),
    "reshape": ("""  d = f32[4,<=300] set-dimension-size(x, n), dimensions={1}
  ROOT s = f32[<=1200] reshape(d)""", "dynamic dimension reaches `reshape`", 2),
    "no dimension": ("""  ROOT d = f32[4,<=300] set-dimension-size(x, n)""",
                     "set-dimension-size d takes an array, an s32[] size and one dimension", 1),
    "parameter": ("""  p = f32[<=8] parameter(2)
  ROOT s = f32[<=8] negate(p)""", "dynamic entry parameters are not supported", 1),
    "sizes": ("""  d = f32[4,<=300] set-dimension-size(x, n), dimensions={1}
  e = f32[4,<=300] set-dimension-size(x, n), dimensions={1}
  ROOT s = f32[4,<=300] add(d, e)""", "dynamic dimensions of different sizes reach add", 3),
    "while": ("""  d = f32[4,<=300] set-dimension-size(x, n), dimensions={1}
  ROOT w = f32[4,<=300] while(d), condition=cond, body=neg""", "in neg has the bounded dynamic shape", -9),
    "call": ("""  d = f32[4,<=300] set-dimension-size(x, n), dimensions={1}
  c = f32[4,<=300] call(d), to_apply=neg
  ROOT s = f32[4,<=300] sort(c), dimensions={1}, to_apply=lt""", "dynamic dimension reaches `sort`", 3),
}


@pytest.mark.parametrize("what", sorted(_ERRORS))
def test_unsupported_is_a_located_error(what, tmp_path):
    """A dynamic dimension reaching an op aotc cannot bound is refused at that op: no padding
    leaks into a result."""
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions
    body, message, line = _ERRORS[what]
    text = ("HloModule m\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
            "neg {\n  a = f32[4,<=300] parameter(0)\n  ROOT c = f32[4,<=300] negate(a)\n}\n"
            "cond {\n  a = f32[4,<=300] parameter(0)\n  ROOT c = pred[] constant(false)\n}\n"
            "ENTRY e {\n  x = f32[4,300] parameter(0)\n  n = s32[] parameter(1)\n" + body + "\n}\n")
    with pytest.raises(AotcError) as e:
        fe = driver.frontend("m.hlo", None, CompileOptions(), text=text)
        driver.generate(fe, str(tmp_path / "libm"), CompileOptions())
    assert message in str(e.value), str(e.value)
    assert f"m.hlo:{line + 17}:" in str(e.value), str(e.value)


_MAIN_C = r"""
#include <stdio.h>
#include <string.h>
#include "libdynres.h"

int main(void) {
    dynres_instance* m = dynres_create(dynres_ALLOC_ALL);
    if (!m) return 1;
    float* x = dynres_arg_x_data(m);
    float* y = dynres_arg_y_data(m);
    for (int i = 0; i < 40 * 300; ++i) x[i] = (float)(i % 97) * 0.25f;
    for (int j = 0; j < 300; ++j) y[j] = (float)j;
    *dynres_arg_n_data(m) = 17;
    *dynres_arg_m_data(m) = 123;
    if (dynres_run(m) != dynres_OK) return 2;
    const int32_t* dims = dynres_result_a_dims_data(m);
    const float* a = dynres_result_a_data(m);
    /* a's real-size array is row-major at the start: a[i][j] = x[i][j] + y[j] */
    for (int i = 0; i < dims[0]; ++i)
        for (int j = 0; j < dims[1]; ++j)
            if (a[i * dims[1] + j] != x[i * 300 + j] + y[j]) return 3;
    for (int k = dims[0] * dims[1]; k < 40 * 300; ++k)
        if (a[k] != 0.0f) return 4;
    printf("%d %d %d %d\n", dims[0], dims[1], dynres_result_c_dims_data(m)[0], dynres_result_c_dims_data(m)[1]);
    dynres_destroy(m);
    return 0;
}
"""


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_api_builds_with_both_compilers(cc, tmp_path):
    """The generated .c and a program reading a dynamic result through the header's typed
    accessors, warning-free under -Werror; the same .c/.h from two compilations."""
    import shutil
    import subprocess

    from aotc import driver
    from aotc.options import CompileOptions
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    texts = []
    for k in range(2):
        opts = CompileOptions()
        text = RESULTS.replace("HloModule dyn_results", "HloModule dynres")
        fe = driver.frontend("dynres.hlo", None, opts, text=text)
        gen = driver.generate(fe, str(tmp_path / "libdynres"), opts)
        texts.append((gen.c_text, gen.h_text))
    assert texts[0] == texts[1], "output is not deterministic"
    c_text, h_text = texts[0]
    assert "result 0 'a': real dims in result 6 'a_dims'" in h_text
    (tmp_path / "libdynres.c").write_text(c_text)
    (tmp_path / gen.header_name).write_text(h_text)
    (tmp_path / "main.c").write_text(_MAIN_C.replace("libdynres.h", gen.header_name))
    exe = tmp_path / f"main_{cc}"
    build = subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I", str(tmp_path), "-o", str(exe),
                            str(tmp_path / "main.c"), str(tmp_path / "libdynres.c"), "-lm", "-lpthread"],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[:4000]
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, f"exit {run.returncode}"
    assert run.stdout.split() == ["17", "123", "123", "17"]


def test_cli_run_writes_the_real_size(tmp_path):
    """`aotc run --output`: a dynamic result at its real size, as XLA returns it, and no
    `_dims` result."""
    from click.testing import CliRunner

    from aotc.cli import main
    name = "dynshape_results_17_123"
    from tests.ops.conftest import load_case
    inputs, expected = load_case(name)
    (tmp_path / "m.hlo").write_text(RESULTS)
    np.savez(tmp_path / "in.npz", x=inputs[0], y=inputs[1], n=inputs[2], m=inputs[3])
    r = CliRunner().invoke(main, ["run", str(tmp_path / "m.hlo"), "--inputs", str(tmp_path / "in.npz"),
                                  "--output", str(tmp_path / "out.npz")])
    assert r.exit_code == 0, r.output
    z = np.load(tmp_path / "out.npz")
    assert len(z.files) == 6, z.files
    outs = [z[k] for k in z.files]
    assert outs[0].shape == (17, 123) and outs[1].shape == (123, 17)
    np.testing.assert_array_equal(outs[0], _real(expected[0], (17, 123)))
    np.testing.assert_array_equal(outs[1], _real(expected[1], (123, 17)))


@pytest.mark.slow
def test_threads_give_the_same_bits(tmp_path):
    """The masked reductions and the compaction split over 3 threads: XLA's bits still."""
    import aotc
    for name, text, keys in (("dynshape_elementwise_1234", ELEMENTWISE, "xyn"),
                             ("dynshape_results_17_123", RESULTS, "xynm")):
        from tests.ops.conftest import assert_matches, load_case
        inputs, expected = load_case(name)
        (tmp_path / f"{name}.hlo").write_text(text)
        got = list(aotc.run(str(tmp_path / f"{name}.hlo"), inputs=dict(zip(keys, inputs)), threads=3).values())
        for k, e in enumerate(expected):
            if name in DYNAMIC_RESULTS and k in DYNAMIC_RESULTS[name]:
                e = _real(e, [int(expected[d]) for d in DYNAMIC_RESULTS[name][k]])
            assert_matches(got[k], e, 0.0, f"{name} output {k}")

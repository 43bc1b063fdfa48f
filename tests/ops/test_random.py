"""rng-bit-generator (Threefry, Philox, rng_default) and width-changing bitcast-convert
against XLA:CPU, bit for bit, the returned state included; the plumbing jax.random
leaves after inlining (a while loop's results re-tupled by a call and read back); and
jax.random's samplers under the threefry2x32, rbg and unsafe_rbg implementations, as
exported before and after XLA's optimizations (tests/data/random, export.py there).

Halves carry quiet NaNs only: a signaling f16/bf16 NaN read as a value is quieted by the
runtime's f16 -> f32 -> f16 path (the same for every bitcast-convert of halves).
Generated bits are compared as unsigned integers of their width: the oracle hands some
types back as their bits, and bits are what the generator defines.
Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from .conftest import load_case, run_hlo_text, run_hlo_text_asan

_U64MAX = 2**64 - 1


def _rbg(name: str, alg: str, ty: str, dims: tuple[int, ...], nstate: int = 2) -> str:
    d = ",".join(map(str, dims))
    return f"""HloModule {name}
ENTRY main {{
  s = u64[{nstate}] parameter(0)
  ROOT r = (u64[{nstate}], {ty}[{d}]) rng-bit-generator(s), algorithm={alg}
}}
"""


_STATES = {
    "plain": np.array([0x123456789ABCDEF0, 5], np.uint64),
    "wrap": np.array([0xDEADBEEF, _U64MAX - 2], np.uint64),  # the counter wraps (Philox carries)
    "three": np.array([7, _U64MAX - 1, _U64MAX], np.uint64),  # a 128-bit counter that wraps whole
}

CASES: dict[str, tuple] = {}
for _alg, _short in (("rng_three_fry", "tf"), ("rng_philox", "ph"), ("rng_default", "def")):
    for _ty, _dims, _st in (("u32", (1000,), "plain"), ("u32", (64, 128), "wrap"), ("u32", (7, 3, 5), "plain"),
                            ("u32", (), "wrap"), ("u32", (1, 9), "plain"), ("u32", (6, 1, 5), "wrap"),
                            ("u64", (1000,), "wrap"), ("u64", (3, 5), "plain"), ("u64", (), "plain"),
                            ("s32", (33,), "plain"), ("f32", (17, 2), "plain"), ("f64", (9,), "wrap"),
                            ("u16", (11,), "plain"), ("s16", (4, 5), "wrap"), ("f16", (7,), "plain"),
                            ("bf16", (7,), "plain"), ("u8", (13,), "plain"), ("s8", (5,), "wrap"),
                            ("s64", (5,), "plain"), ("f8e4m3fn", (9,), "wrap"), ("f8e5m2", (6,), "plain")):
        _name = f"rbg_{_short}_{_ty}_{'x'.join(map(str, _dims)) or 'scalar'}_{_st}"
        CASES[_name] = (_rbg(_name, _alg, _ty, _dims), [_STATES[_st]], 0.0)
    if _alg != "rng_three_fry":
        for _ty, _dims in (("u32", (1001,)), ("u64", (3, 5)), ("u32", ())):
            _name = f"rbg_{_short}_{_ty}_{'x'.join(map(str, _dims)) or 'scalar'}_state3"
            CASES[_name] = (_rbg(_name, _alg, _ty, _dims, 3), [_STATES["three"]], 0.0)

# a while loop's results re-tupled by a call and read back by get-tuple-element (the
# shape jax.random's threefry leaves once the call is inlined)
CASES["while_retupled_through_call"] = ("""HloModule while_retupled_through_call
cond {
  p = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  q = (s32[], f32[8], f32[8]) parameter(0)
  k = s32[] get-tuple-element(q), index=0
  a = f32[8] get-tuple-element(q), index=1
  b = f32[8] get-tuple-element(q), index=2
  one = s32[] constant(1)
  j = s32[] add(k, one)
  s = f32[8] add(a, b)
  m = f32[8] multiply(a, b)
  ROOT t = (s32[], f32[8], f32[8]) tuple(j, s, m)
}
inner {
  xi = f32[8] parameter(0)
  yi = f32[8] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[8], f32[8]) tuple(zero, xi, yi)
  w = (s32[], f32[8], f32[8]) while(init), condition=cond, body=body
  w1 = f32[8] get-tuple-element(w), index=1
  w2 = f32[8] get-tuple-element(w), index=2
  ROOT r = (f32[8], f32[8]) tuple(w1, w2)
}
ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  c = (f32[8], f32[8]) call(x, y), to_apply=inner
  g0 = f32[8] get-tuple-element(c), index=0
  g1 = f32[8] get-tuple-element(c), index=1
  d = f32[8] subtract(g0, g1)
  ROOT o = (f32[8], f32[8], f32[8]) tuple(d, g1, g0)
}
""", [np.linspace(-1, 1, 8).astype(np.float32), np.linspace(0.5, 2, 8).astype(np.float32)], 0.0)


def _bitcast(name: str, src: str, dst: str, extra: str = "") -> str:
    return f"""HloModule {name}
ENTRY main {{
  x = {src} parameter(0)
  b = {dst} bitcast-convert(x){extra}
  ROOT t = ({dst}) tuple(b)
}}
"""


_W = np.random.default_rng(11)
_U64 = _W.integers(0, 2**64 - 1, (37,), dtype=np.uint64, endpoint=True)
for _name, _src, _dst, _x in (
        ("u64_to_u32", "u64[37]", "u32[37,2]", _U64),
        ("u32_to_u64", "u32[5,37,2]", "u64[5,37]", _W.integers(0, 2**32, (5, 37, 2), dtype=np.uint64).astype(np.uint32)),
        ("s64_to_s8", "s64[9]", "s8[9,8]", _U64.view(np.int64)[:9]),
        ("u8_to_s64", "u8[3,8]", "s64[3]", _W.integers(0, 256, (3, 8)).astype(np.uint8)),
        ("f32_to_u8", "f32[10]", "u8[10,4]", np.array([1.0, -2.5, 0.0, -0.0, 3.4e38, 1e-40, np.inf, -np.inf, np.nan, 7.0], np.float32)),
        ("u16_to_f32", "u16[6,2]", "f32[6]", np.array([[0, 0x3F80], [0, 0x7FC0], [1, 0x7F80], [0xFFFF, 0xFFFF], [0, 0x8000], [0x1234, 0x4049]], np.uint16)),
        ("f64_to_f32", "f64[4]", "f32[4,2]", np.array([1.0, -1e300, np.pi, 2.0**-1074], np.float64)),
        ("s32_to_f64", "s32[4,2]", "f64[4]", np.array([[0, 0x3FF00000], [1, -1], [0, 0x7FF80000], [-7, 0]], np.int32)),
        ("bf16_to_u32", "bf16[3,2]", "u32[3]", np.array([[0x3F80, 0x4000], [0x0001, 0x8000], [0x7F80, 0xFF80]], np.uint16).view(ml_dtypes.bfloat16)),
        ("u64_to_u16", "u64[7]", "u16[7,4]", _U64[:7]),
        ("u32_to_f16", "u32[3]", "f16[3,2]", np.array([0x7E1C3C00, 0xFE017C00, 0x80000001], np.uint32)),
        ("f16_to_u32", "f16[3,2]", "u32[3]", np.array([[0x3C00, 0x7E1C], [0x7C00, 0xFE01], [1, 0x8000]], np.uint16).view(np.float16))):
    _n = f"bitcast_width_{_name}"
    CASES[_n] = (_bitcast(_n, _src, _dst), [_x], 0.0)


# rng: XLA's values differ on every execution, so these cases hold XLA's samples, and aotc's
# are compared with them as distributions (two-sample Kolmogorov-Smirnov) and by range
def _rng(name: str, dist: str, ty: str, n: int) -> str:
    return f"""HloModule {name}
ENTRY main {{
  a = {ty}[] parameter(0)
  b = {ty}[] parameter(1)
  ROOT r = {ty}[{n}] rng(a, b), distribution={dist}
}}
"""


RNG_CASES = {
    "rng_dist_uniform_f32": ("rng_uniform", "f32", (np.float32(-2.0), np.float32(3.0))),
    "rng_dist_uniform_f64": ("rng_uniform", "f64", (np.float64(0.5), np.float64(0.75))),
    "rng_dist_normal_f32": ("rng_normal", "f32", (np.float32(1.0), np.float32(2.0))),
    "rng_dist_normal_f64": ("rng_normal", "f64", (np.float64(-3.0), np.float64(0.5))),
    "rng_dist_uniform_s32": ("rng_uniform", "s32", (np.int32(-1000), np.int32(77777))),
    "rng_dist_uniform_u64": ("rng_uniform", "u64", (np.uint64(5), np.uint64(2**40 + 3))),
    # halves: drawn in f32 and rounded (XLA's RngExpander), so b itself can come out
    "rng_dist_uniform_f16": ("rng_uniform", "f16", (np.float16(-2.0), np.float16(3.0))),
    "rng_dist_uniform_bf16": ("rng_uniform", "bf16", (ml_dtypes.bfloat16(0.5), ml_dtypes.bfloat16(0.75))),
    "rng_dist_normal_f16": ("rng_normal", "f16", (np.float16(1.0), np.float16(2.0))),
    "rng_dist_normal_bf16": ("rng_normal", "bf16", (ml_dtypes.bfloat16(-3.0), ml_dtypes.bfloat16(0.5))),
}
for _name, (_dist, _ty, _ab) in RNG_CASES.items():
    CASES[_name] = (_rng(_name, _dist, _ty, 10001), list(_ab), None)


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind != "b" else a


@pytest.mark.parametrize("sanitize", ["ubsan", pytest.param("asan", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in RNG_CASES))
def test_case(name, sanitize, workdir):
    """Built with UBSan (ctypes), and in the slow variant with ASan and UBSan (a runner)."""
    text = CASES[name][0]
    inputs, expected = load_case(name)
    got = (run_hlo_text if sanitize == "ubsan" else run_hlo_text_asan)(text, inputs, workdir, name)
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.shape == e.shape, f"{name} output {k}: shape {g.shape} != {e.shape}"
        np.testing.assert_array_equal(_bits(g), _bits(e), err_msg=f"{name} output {k}")


# ------------------------------------------------------------------ jax.random models

MODELS = Path(__file__).resolve().parents[1] / "data" / "random"
# before optimization, XLA's constant folder computes erf of the (constant) bounds with
# libm's erff, where aotc runs XLA's erf polynomial (aotc folds no transcendental): the
# uniform sample's range, and so the sample, can differ by an ulp or two
_TOL = {"truncated_normal.pre": 2e-6}
# in the fast run: one model per generator path; the rest are slow
_FAST = {"tf_normal.pre", "tf_normal.post", "tf_split_fold_in.pre", "rbg_normal.pre",
         "rbg_split_fold_in.pre", "urbg_split_fold_in.pre"}


def _models() -> list:
    out = []
    for path in sorted(MODELS.glob("*.hlo")):
        name = path.name[:-len(".hlo")]
        marks = () if name in _FAST else (pytest.mark.slow,)
        out.append(pytest.param(name, marks=marks, id=name))
    return out


@pytest.mark.parametrize("model", _models())
def test_jax_random(model, workdir):
    z = np.load(MODELS / f"{model.split('.')[0]}.npz")
    expected = [z[f"out{k}"] for k in range(sum(1 for n in z.files if n.startswith("out")))]
    got = run_hlo_text((MODELS / f"{model}.hlo").read_text(), [z["in0"]], workdir,
                       model.replace(".", "_"), const_encoding="array")
    assert len(got) == len(expected)
    rtol = next((t for k, t in _TOL.items() if model.endswith(k)), 0.0)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.shape == e.shape, f"{model} output {k}: shape {g.shape} != {e.shape}"
        if rtol:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol, err_msg=f"{model} output {k}")
        else:
            np.testing.assert_array_equal(_bits(g), _bits(e), err_msg=f"{model} output {k}")


@pytest.mark.parametrize("name", sorted(RNG_CASES))
def test_rng_distribution(name, workdir):
    stats = pytest.importorskip("scipy.stats")
    dist, ty, (a, b) = RNG_CASES[name]
    inputs, (xla,) = load_case(name)
    (got,) = run_hlo_text(CASES[name][0], inputs, workdir, name)
    if ty == "bf16":  # the npz holds bf16 as its bits
        xla = xla.view(ml_dtypes.bfloat16)
    assert got.dtype == xla.dtype and got.shape == xla.shape
    assert np.all(np.isfinite(got.astype(np.float64)))
    if dist == "rng_uniform":
        top = got.max() <= b if ty in ("f16", "bf16") else got.max() < b
        assert got.min() >= a and top, (got.min(), got.max())
    p = stats.ks_2samp(got.astype(np.float64), xla.astype(np.float64)).pvalue
    assert p > 1e-3, f"{name}: aotc's samples and XLA's differ in distribution (KS p = {p:.2g})"
    (again,) = run_hlo_text(CASES[name][0], inputs, workdir, name + "_again")
    np.testing.assert_array_equal(again, got)  # the same values on every run


def test_rng_in_loop_is_refused(workdir):
    from aotc.errors import AotcError
    text = """HloModule rng_loop
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  q = (s32[], f32[4]) parameter(0)
  k = s32[] get-tuple-element(q), index=0
  one = s32[] constant(1)
  j = s32[] add(k, one)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  ROOT t = (s32[], f32[4]) tuple(j, r)
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT o = f32[4] get-tuple-element(w), index=1
}
"""
    with pytest.raises(AotcError, match=r"rng r runs in the loop w"):
        run_hlo_text(text, [np.zeros(4, np.float32)], workdir, "rng_loop")

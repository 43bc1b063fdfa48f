"""select-and-scatter against XLA:CPU: GE and GT selections (ties and NaN and -inf decide
which element wins), a general select computation, add and other scatter reducers, a pad instruction in front
(as JAX writes it), operand elements no window covers, overlapping windows,
f32/f64/bf16/f16 and integers (window padding, which changes the order XLA:CPU visits a
window's positions in, is test_window_order.py's); and the gradient of max pooling (`jax.grad` of
`lax.reduce_window` with `lax.max`) as JAX exports it before XLA's optimizations and after
them (where XLA:CPU has rewritten it into a reduce-window over indices and a scatter), on
NHWC 1x56x56x64 3x3 stride 2 SAME, 2x2 stride 2 VALID, and 3x3 stride 1 windows.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU). The exported
modules are tests/ops/data/pool_grad_*.hlo, written by `python -m tests.ops.test_select_and_scatter`
(JAX).
"""
from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

DATA = Path(__file__).resolve().parent / "data"


def _computations(t: str, select: str = "GE", scatter: str = "add") -> str:
    return f"""sel {{
  sa = {t}[] parameter(0)
  sb = {t}[] parameter(1)
  ROOT sc = pred[] compare(sa, sb), direction={select}
}}
sca {{
  ca = {t}[] parameter(0)
  cb = {t}[] parameter(1)
  ROOT cc = {t}[] {scatter}(ca, cb)
}}
"""


def _module(name: str, t: str, operand, source, window: str, select="GE", scatter="add", init="0") -> str:
    od = ",".join(map(str, operand))
    sd = ",".join(map(str, source))
    return f"""HloModule {name}
{_computations(t, select, scatter)}
ENTRY main {{
  x = {t}[{od}] parameter(0)
  g = {t}[{sd}] parameter(1)
  i = {t}[] constant({init})
  ROOT r = {t}[{od}] select-and-scatter(x, g, i), window={{{window}}}, select=sel, scatter=sca
}}
"""


_RNG = np.random.default_rng(11)


def _ties(shape, dtype, specials=True) -> np.ndarray:
    """Small integers (so windows hold ties), with NaN and -inf sprinkled in for floats."""
    x = _RNG.integers(-3, 4, shape).astype(np.float64)
    if specials:
        flat = x.reshape(-1)
        k = _RNG.choice(flat.size, size=max(2, flat.size // 12), replace=False)
        flat[k[: len(k) // 2]] = np.nan
        flat[k[len(k) // 2:]] = -np.inf
    return x.astype(dtype)


def _src(shape, dtype) -> np.ndarray:
    return (_RNG.standard_normal(shape) * 4).astype(dtype) if np.dtype(dtype).kind == "f" or dtype == ml_dtypes.bfloat16 \
        else _RNG.integers(1, 9, shape).astype(dtype)


CASES = {
    "sas_ge_add_pad": ("""HloModule sas_ge_add_pad
""" + _computations("f32") + """
ENTRY main {
  x = f32[2,9,10,5] parameter(0)
  g = f32[2,5,5,5] parameter(1)
  i = f32[] constant(0)
  ninf = f32[] constant(-inf)
  p = f32[2,11,12,5] pad(x, ninf), padding=0_0x1_1x1_1x0_0
  s = f32[2,11,12,5] select-and-scatter(p, g, i), window={size=1x3x3x1 stride=1x2x2x1}, select=sel, scatter=sca
  ROOT r = f32[2,9,10,5] slice(s), slice={[0:2], [1:10], [1:11], [0:5]}
}
""", [_ties((2, 9, 10, 5), np.float32), _src((2, 5, 5, 5), np.float32)], 0.0),
    "sas_gt_overlap": (_module("sas_gt_overlap", "f32", (7, 8), (5, 3), "size=3x4 stride=1x2", select="GT"),
                       [_ties((7, 8), np.float32), _src((5, 3), np.float32)], 0.0),
    "sas_le_max_scatter": (_module("sas_le_max_scatter", "f64", (7, 6, 3), (3, 2, 2), "size=3x3x2 stride=2x2x1",
                                   select="LE", scatter="maximum", init="-1"),
                           [_ties((7, 6, 3), np.float64), _src((3, 2, 2), np.float64)], 0.0),
    "sas_bf16": (_module("sas_bf16", "bf16", (1, 9, 9, 16), (1, 4, 4, 16), "size=1x3x3x1 stride=1x2x2x1"),
                 [_ties((1, 9, 9, 16), ml_dtypes.bfloat16), _src((1, 4, 4, 16), ml_dtypes.bfloat16)], 0.0),
    "sas_f16": (_module("sas_f16", "f16", (1, 8, 8, 16), (1, 7, 7, 16), "size=1x2x2x1 stride=1x1x1x1"),
                [_ties((1, 8, 8, 16), np.float16), _src((1, 7, 7, 16), np.float16)], 0.0),
    "sas_s32_multiply": (_module("sas_s32_multiply", "s32", (9, 9), (4, 4), "size=3x3 stride=2x2", scatter="multiply",
                                 init="1"),
                         [_ties((9, 9), np.int32, False), _src((4, 4), np.int32)], 0.0),
    "sas_u8_gt": (_module("sas_u8_gt", "u8", (10, 4), (4, 2), "size=4x2 stride=2x2", select="GT"),
                  [_RNG.integers(0, 3, (10, 4)).astype(np.uint8), _src((4, 2), np.uint8)], 0.0),
    # the last window position of each dimension is never in a window: stays the init value
    "sas_uncovered": (_module("sas_uncovered", "f32", (6,), (2,), "size=2 stride=3"),
                      [_ties((6,), np.float32, False), np.array([1.5, 2.5], np.float32)], 0.0),
    "sas_general_select": ("""HloModule sas_general_select
sel {
  sa = f32[] parameter(0)
  sb = f32[] parameter(1)
  aa = f32[] abs(sa)
  ab = f32[] abs(sb)
  ROOT sc = pred[] compare(aa, ab), direction=GT
}
sca {
  ca = f32[] parameter(0)
  cb = f32[] parameter(1)
  ROOT cc = f32[] subtract(ca, cb)
}
ENTRY main {
  x = f32[12,12] parameter(0)
  g = f32[5,5] parameter(1)
  i = f32[] constant(0.5)
  ROOT r = f32[12,12] select-and-scatter(x, g, i), window={size=3x3 stride=2x2}, select=sel, scatter=sca
}
""", [_ties((12, 12), np.float32), _src((5, 5), np.float32)], 0.0),
}

# jax.grad of max pooling: (name, operand shape, window, strides, padding)
POOLS = (("pool_grad_same", (1, 56, 56, 64), (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
         ("pool_grad_valid", (1, 56, 56, 64), (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
         ("pool_grad_overlap", (2, 15, 13, 8), (1, 3, 3, 1), (1, 1, 1, 1), "VALID"))


def _pool_inputs(shape, out_shape) -> list[np.ndarray]:
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-20, 20, shape).astype(np.float32) / 4  # ties in most windows
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, 40, replace=False)] = np.nan
    flat[rng.choice(flat.size, 40, replace=False)] = -np.inf
    if shape[1] < 56:  # overlapping windows add in XLA's order
        return [x, rng.standard_normal(out_shape).astype(np.float32)]
    return [x, rng.integers(-64, 64, out_shape).astype(np.float32) / 16]  # compressible fixtures


def _pool_cases() -> None:
    for name, shape, win, strides, pad in POOLS:
        pre, post = DATA / f"{name}_pre.hlo", DATA / f"{name}_post.hlo"
        if pre.exists() and post.exists():
            out_shape = tuple(-(-n // st) if pad == "SAME" else (n - w) // st + 1
                              for n, w, st in zip(shape, win, strides))
            CASES[f"{name}_pre"] = (pre.read_text(), _pool_inputs(shape, out_shape), 0.0)


_pool_cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


@pytest.mark.parametrize("name", [p[0] for p in POOLS])
def test_pool_grad_post_optimization(name, workdir):
    """The module XLA:CPU compiled (its select-and-scatter rewritten into a reduce-window over
    indices and a scatter) gives the bits XLA computes for the module it came from (XLA does
    not compile its optimized text again, so the pre-optimization case's outputs are the
    expected ones)."""
    from .conftest import assert_matches, load_case, run_hlo_text

    inputs, expected = load_case(f"{name}_pre")
    got = run_hlo_text((DATA / f"{name}_post.hlo").read_text(), inputs, workdir, f"{name}_post")
    assert len(got) == 1
    assert_matches(got[0], expected[0], 0.0, f"{name}_post")


def test_pool_modules_exported():
    assert all(f"{n}_pre" in CASES and (DATA / f"{n}_post.hlo").exists() for n, *_ in POOLS), \
        "run python -m tests.ops.test_select_and_scatter to export the pool gradient modules"


def _export() -> None:
    """Write tests/ops/data/pool_grad_*.hlo: JAX's pre- and post-optimization modules."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    from tests.oracle.xla import strip_debug_info

    for name, shape, win, strides, pad in POOLS:
        def pool(x):
            return lax.reduce_window(x, -jnp.inf, lax.max, win, strides, pad)

        out_shape = jax.eval_shape(pool, jax.ShapeDtypeStruct(shape, jnp.float32)).shape

        def grad(x, g):
            return jax.vjp(pool, x)[1](g)[0]

        lowered = jax.jit(grad).lower(jax.ShapeDtypeStruct(shape, jnp.float32),
                                      jax.ShapeDtypeStruct(out_shape, jnp.float32))
        (DATA / f"{name}_pre.hlo").write_text(strip_debug_info(lowered.as_text(dialect="hlo")))
        (DATA / f"{name}_post.hlo").write_text(strip_debug_info(lowered.compile().as_text()))
        print(name, shape, "->", out_shape)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    _export()

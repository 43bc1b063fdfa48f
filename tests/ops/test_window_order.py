"""The order XLA:CPU visits a window's positions in, bit for bit: reduce-window sums of f32
values spread over eight decades (any other order of additions rounds differently) and
select-and-scatter on small integers (ties: the order decides which element is selected),
against XLA:CPU. XLA's loop emitter peels one window dimension (aotc/ops/window.py,
`peeled_dim`): positions before that dimension's last index first, then the last index.
Cases: padding (0, 1) in the minor, a middle and two dimensions, a window of 2 with low
padding, base and window dilation, one output index, SAME pooling windows as Keras writes
them (NHWC 3x3 and 2x2 stride 2 on even sizes), a window large enough that XLA stops
scanning for a dimension to peel (the product of trip counts reaches 64), and 40 random
windows of rank 1 to 4.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import numpy as np
import pytest

from .test_select_and_scatter import _module as _sas_module


def _win(size, stride, pads, lhs=None, rhs=None) -> str:
    text = "size=" + "x".join(map(str, size)) + " stride=" + "x".join(map(str, stride))
    text += " pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pads)
    if lhs and any(v > 1 for v in lhs):
        text += " lhs_dilate=" + "x".join(map(str, lhs))
    if rhs and any(v > 1 for v in rhs):
        text += " rhs_dilate=" + "x".join(map(str, rhs))
    return text


def _out(shape, size, stride, pads, lhs=None, rhs=None) -> tuple[int, ...]:
    lhs, rhs = lhs or (1,) * len(shape), rhs or (1,) * len(shape)
    return tuple(((n - 1) * ld + 1 + lo + hi - ((w - 1) * rd + 1)) // s + 1
                 for n, w, s, (lo, hi), ld, rd in zip(shape, size, stride, pads, lhs, rhs))


def _sum_module(name: str, shape, out, window: str) -> str:
    sh, od = ",".join(map(str, shape)), ",".join(map(str, out))
    return f"""HloModule {name}
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}}
ENTRY main {{
  x = f32[{sh}] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[{od}] reduce-window(x, z), window={{{window}}}, to_apply=add
}}
"""


def _spread(rng, shape) -> np.ndarray:
    """Values over eight decades, both signs: a sum in another order has other bits."""
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 5, shape)).astype(np.float32)


CASES: dict[str, tuple] = {}


def _add(name: str, shape, size, stride, pads, lhs=None, rhs=None, kind: str = "both") -> None:
    rng = np.random.default_rng(sum(map(ord, name)))
    out = _out(shape, size, stride, pads, lhs, rhs)
    assert min(out) >= 1, name
    window = _win(size, stride, pads, lhs, rhs)
    if kind in ("both", "sum"):
        CASES[f"wo_sum_{name}"] = (_sum_module(f"wo_sum_{name}", shape, out, window), [_spread(rng, shape)], 0.0)
    if kind in ("both", "sas") and not (lhs and any(v > 1 for v in lhs)) and not (rhs and any(v > 1 for v in rhs)):
        for sel in ("GE", "GT"):
            x = rng.integers(-2, 3, shape).astype(np.float32)
            g = rng.standard_normal(out).astype(np.float32)
            CASES[f"wo_sas_{sel.lower()}_{name}"] = (_sas_module(f"wo_sas_{name}", "f32", shape, out, window, select=sel),
                                                     [x, g], 0.0)


_add("minor_0_1", (6, 6), (3, 3), (2, 2), ((1, 0), (0, 1)))
_add("middle_0_1", (4, 5, 5), (2, 3, 3), (1, 1, 1), ((0, 0), (0, 1), (0, 0)))
_add("two_0_1", (4, 5, 5), (2, 3, 3), (1, 1, 1), ((0, 0), (0, 1), (0, 1)))
_add("outer_and_minor_0_1", (4, 5, 5), (3, 3, 3), (1, 1, 1), ((0, 1), (0, 0), (0, 1)))
_add("size2_low_pad", (7, 8), (3, 2), (1, 3), ((0, 0), (1, 0)))
_add("size2_both_pads", (2, 6, 5), (3, 2, 5), (3, 2, 3), ((2, 0), (2, 2), (0, 1)))
_add("pads_1_1", (7, 9), (3, 3), (1, 1), ((1, 1), (1, 1)))
_add("pad_0_2_two_out", (7, 7), (4, 4), (1, 1), ((0, 0), (0, 2)))
_add("pad_0_2_one_past", (6, 6), (3, 3), (2, 2), ((0, 0), (0, 2)))
_add("same_pool_3x3", (1, 8, 8, 16), (1, 3, 3, 1), (1, 2, 2, 1), ((0, 0), (0, 1), (0, 1), (0, 0)))
_add("same_pool_2x2_odd", (1, 7, 7, 8), (1, 2, 2, 1), (1, 2, 2, 1), ((0, 0), (0, 1), (0, 1), (0, 0)))
_add("one_output", (3, 4), (2, 5), (1, 1), ((0, 0), (0, 1)))
_add("scan_stops_at_64", (5, 9, 9), (3, 8, 8), (1, 1, 1), ((0, 1), (1, 1), (1, 1)))
_add("scan_reaches", (5, 9, 9), (3, 7, 8), (1, 1, 1), ((0, 1), (1, 1), (1, 1)))
_add("base_dilation_size2", (5, 6), (2, 2), (1, 2), ((0, 1), (1, 0)), lhs=(2, 2), kind="sum")
_add("base_dilation_size3", (5, 6), (3, 3), (2, 1), ((0, 1), (0, 1)), lhs=(1, 2), kind="sum")
_add("window_dilation", (9, 9), (3, 3), (2, 2), ((0, 0), (0, 1)), rhs=(1, 2), kind="sum")
_add("stride_bounds_output", (7, 5, 6, 3), (5, 1, 2, 2), (3, 2, 2, 3), ((0, 1), (1, 0), (2, 1), (0, 2)), kind="sas")
_add("stride_bounds_output_4d", (6, 6, 8, 5), (4, 5, 2, 1), (1, 1, 3, 3), ((0, 1), (2, 0), (2, 0), (1, 2)), kind="sas")

# XLA:CPU's sum over these windows is not a sequential fold in any order of the window's
# positions that aotc models (a peel of a dimension with an unpadded one inside it); aotc's
# sums there are within rounding of XLA's, not its bits
_SUM_ORDER_UNKNOWN = {"wo_sum_middle_0_1"}


def _random_cases(count: int) -> None:
    rng = np.random.default_rng(2026)
    made = 0
    while made < count:
        rank = int(rng.integers(1, 5))
        shape = tuple(int(rng.integers(1, 9)) for _ in range(rank))
        size = tuple(int(rng.integers(1, min(5, n + 2) + 1)) for n in shape)
        stride = tuple(int(rng.integers(1, 4)) for _ in range(rank))
        pads = tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(rank))
        sas = made % 2 == 0
        lhs = tuple(1 if sas or rng.random() < 0.7 else int(rng.integers(2, 4)) for _ in range(rank))
        rhs = tuple(1 if sas else int(rng.integers(1, 3)) for _ in range(rank))
        if min(_out(shape, size, stride, pads, lhs, rhs)) < 1:
            continue
        _add(f"random{made}", shape, size, stride, pads, lhs, rhs, kind="sas" if sas else "sum")
        made += 1


_random_cases(40)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="XLA's sum order here is not modeled"))
                                  if n in _SUM_ORDER_UNKNOWN else n for n in sorted(CASES)])
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


def test_peeled_dim_follows_xla_scan():
    """The rule itself on hand-checked windows (XLA's EmitLoopNest: the last dimension
    first, while the trip counts so far multiply to under 64)."""
    from aotc.hlo.ir import WindowDim
    from aotc.ops.window import peeled_dim

    def wd(size, stride=1, lo=0, hi=0, lhs=1, rhs=1):
        return WindowDim(size, stride, lo, hi, lhs, rhs)

    assert peeled_dim((6, 6), (3, 3), (wd(3, 2, 1, 0), wd(3, 2, 0, 1))) == 1
    assert peeled_dim((7, 9), (7, 9), (wd(3, 1, 1, 1), wd(3, 1, 1, 1))) is None  # low padding stays
    assert peeled_dim((7, 7), (4, 6), (wd(4), wd(4, 1, 0, 2))) is None  # two positions can miss
    assert peeled_dim((7, 8), (5, 3), (wd(3), wd(2, 3, 1, 0))) == 1  # the rest of a window of 2 is index 0
    assert peeled_dim((3, 4), (2, 1), (wd(2), wd(5, 1, 0, 1))) is None  # one output index
    assert peeled_dim((5, 9, 9), (4, 4, 4), (wd(3, 1, 0, 1), wd(8, 1, 1, 1), wd(8, 1, 1, 1))) is None
    assert peeled_dim((5, 9, 9), (4, 5, 4), (wd(3, 1, 0, 1), wd(7, 1, 1, 1), wd(8, 1, 1, 1))) == 0
    # 3*o + k in [0, 2] with k < 3 bounds o alone in XLA's map: the minor window index is
    # free, and the scan goes on to the major dimension
    assert peeled_dim((7, 3), (2, 2), (wd(5, 3, 0, 1), wd(2, 3, 0, 2))) == 0

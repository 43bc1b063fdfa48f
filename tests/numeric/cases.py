"""The flag-matrix model: depthwise and grouped convolutions and pools on
MobileNet-sized NHWC tensors, as one HLO module with one output per case.

Inputs come from a fixed seed (never stored); expected values are XLA:CPU's,
reduced to a sample of elements (every border frame of a few channels plus
random positions) and per-channel sums, written by gen_expected.py.
"""
from __future__ import annotations

import numpy as np

# lhs parameters; 16 and 8 channels are where gcc 12 once if-converted guarded window loops into garbage
LHS = {"x112": "f32[1,112,112,32]", "x56": "f32[1,56,56,128]", "x112c16": "f32[1,112,112,16]",
       "x32c8": "f32[1,32,32,8]"}
DW = "dim_labels=b01f_01io->b01f"

# (name, lhs, rhs shape, window, feature groups, result shape)
CONVS = [
    ("dw112_same", "x112", "f32[3,3,1,32]", "size=3x3 pad=1_1x1_1", 32, "f32[1,112,112,32]"),
    ("dw112_same_s2", "x112", "f32[3,3,1,32]", "size=3x3 stride=2x2 pad=0_1x0_1", 32, "f32[1,56,56,32]"),
    ("dw112_valid", "x112", "f32[3,3,1,32]", "size=3x3", 32, "f32[1,110,110,32]"),
    ("dw112_5x5_asym", "x112", "f32[5,5,1,32]", "size=5x5 pad=1_3x3_1", 32, "f32[1,112,112,32]"),
    ("dw56_asym_s2", "x56", "f32[3,3,1,128]", "size=3x3 stride=2x2 pad=2_0x0_2", 128, "f32[1,28,28,128]"),
    ("dw56_dilated", "x56", "f32[3,3,1,128]", "size=3x3 pad=2_2x2_2 rhs_dilate=2x2", 128, "f32[1,56,56,128]"),
    ("dw56_multiplier", "x56", "f32[3,3,1,256]", "size=3x3 pad=1_1x1_1", 128, "f32[1,56,56,256]"),
    ("g4_56_same", "x56", "f32[3,3,32,128]", "size=3x3 pad=1_1x1_1", 4, "f32[1,56,56,128]"),
    ("g4_112_valid_s2", "x112", "f32[3,3,8,32]", "size=3x3 stride=2x2", 4, "f32[1,55,55,32]"),
    ("dw112c16_same", "x112c16", "f32[3,3,1,16]", "size=3x3 pad=1_1x1_1", 16, "f32[1,112,112,16]"),
    ("g4_112c16_asym_s2", "x112c16", "f32[3,3,4,16]", "size=3x3 stride=2x2 pad=0_2x1_1", 4, "f32[1,56,56,16]"),
    ("dw32c8_same", "x32c8", "f32[3,3,1,8]", "size=3x3 pad=1_1x1_1", 8, "f32[1,32,32,8]"),
]
POOLS = [
    ("maxpool112_s2", "f32[1,56,56,32]"),
    ("avgpool56_same", "f32[1,56,56,128]"),
]
NAMES = [c[0] for c in CONVS] + [p[0] for p in POOLS]


def hlo_text() -> str:
    params = [f"  {name} = {t} parameter({k})" for k, (name, t) in enumerate(LHS.items())]
    body, outs = [], []
    for k, (name, lhs, rhs, window, groups, res) in enumerate(CONVS):
        params.append(f"  w_{name} = {rhs} parameter({k + len(LHS)})")
        body.append(f"  {name} = {res} convolution({lhs}, w_{name}), window={{{window}}}, {DW}, "
                    f"feature_group_count={groups}")
        outs.append(name)
    body += [
        "  ninf = f32[] constant(-inf)",
        "  zero = f32[] constant(0)",
        "  maxpool112_s2 = f32[1,56,56,32] reduce-window(x112, ninf), "
        "window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max",
        "  sum56 = f32[1,56,56,128] reduce-window(x56, zero), window={size=1x3x3x1 pad=0_0x1_1x1_1x0_0}, "
        "to_apply=add",
        "  nine = f32[] constant(9)",
        "  nines = f32[1,56,56,128] broadcast(nine), dimensions={}",
        "  avgpool56_same = f32[1,56,56,128] divide(sum56, nines)",
    ]
    outs += [p[0] for p in POOLS]
    types = [c[5] for c in CONVS] + [p[1] for p in POOLS]
    root = f"  ROOT out = ({', '.join(types)}) tuple({', '.join(outs)})"
    return "\n".join([
        "HloModule flag_matrix", "",
        "max {", "  a = f32[] parameter(0)", "  b = f32[] parameter(1)", "  ROOT m = f32[] maximum(a, b)", "}", "",
        "add {", "  p = f32[] parameter(0)", "  q = f32[] parameter(1)", "  ROOT s = f32[] add(p, q)", "}", "",
        "ENTRY main {", *params, *body, root, "}", ""])


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in text[text.index("[") + 1:-1].split(","))


def inputs() -> list[np.ndarray]:
    """The parameters in order, from a fixed seed."""
    rng = np.random.default_rng(20240611)
    shapes = [_shape(t) for t in LHS.values()] + [_shape(c[2]) for c in CONVS]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def sample(shape: tuple[int, ...], k: int) -> np.ndarray:
    """Flat indices compared element by element: the two outermost rows and columns of
    four channels (where padding matters), and 1024 random positions."""
    _, h, w, c = shape
    hh, ww, cc = np.meshgrid(np.arange(h), np.arange(w), np.unique([0, 1, c // 2, c - 1]), indexing="ij")
    frame = (np.minimum(hh, h - 1 - hh) < 2) | (np.minimum(ww, w - 1 - ww) < 2)
    border = (hh[frame] * w + ww[frame]) * c + cc[frame]
    rand = np.random.default_rng(1000 + k).integers(0, h * w * c, 1024)
    return np.unique(np.concatenate([border, rand]))


def reduce(out: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """What is stored of output k: sampled values and per-channel sums (plain and absolute)."""
    flat = out.reshape(-1)
    per_c = out.reshape(-1, out.shape[-1]).astype(np.float64)
    return {f"val{k}": flat[sample(out.shape, k)].astype(np.float32),
            f"sum{k}": per_c.sum(axis=0), f"abs{k}": np.abs(per_c).sum(axis=0)}

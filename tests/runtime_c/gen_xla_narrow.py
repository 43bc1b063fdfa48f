"""Regenerate tests/runtime_c/data/xla_narrow.npz: XLA:CPU's converts into the f8 types and
f4e2m1fn, as codes, from seeded f32 and f64 values (every code of every type, midpoints
and values just beside them, overflow, subnormals, NaN, inf) and from every f16 and bf16
bit pattern. Expected values never come from aotc.

    python tests/runtime_c/gen_xla_narrow.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.oracle import xla as oracle  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "xla_narrow.npz"
TYPES = {"f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2,
         "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
         "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz, "f8e4m3": ml_dtypes.float8_e4m3,
         "f8e3m4": ml_dtypes.float8_e3m4, "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
         "f4e2m1fn": ml_dtypes.float4_e2m1fn}


def values() -> np.ndarray:
    """f64 values; their f32 roundings are the f32 inputs."""
    rng = np.random.default_rng(20261124)
    parts = [np.array([0.0, np.inf, np.nan, 1e300, 1e-300, 1e30, 65504.0, 7e4, 2.0 ** -126, 2.0 ** -127,
                       2.0 ** -128, 1.5 * 2.0 ** -127, 1.25 * 2.0 ** -127, 2.0 ** -149, 1.5 * 2.0 ** 127,
                       3 * 2.0 ** 125, 2.0 ** 128])]
    for t in TYPES.values():
        n = 16 if t is ml_dtypes.float4_e2m1fn else 256
        f = np.unique(np.asarray(np.arange(n, dtype=np.uint8).view(t), np.float64))
        f = f[np.isfinite(f)]
        mid = (f[:-1] + f[1:]) / 2
        parts += [f, mid] + [mid * (1 + s * 2.0 ** -k) for k in (3, 11, 12, 13, 24, 40) for s in (1, -1)]
        parts.append(f.max() * np.array([1.0625, 1.125, 1.2, 2.0]))
    parts += [rng.standard_normal(2000) * 100, np.exp2(rng.uniform(-150, 128, 2000))]
    v = np.concatenate(parts)
    return np.concatenate([v, -v])


def _convert(src: str, dst: str, x: np.ndarray) -> np.ndarray:
    n = x.size
    text = (f"HloModule m\n\nENTRY e {{\n  x = {src}[{n}] parameter(0)\n"
            f"  ROOT y = {dst}[{n}] convert(x)\n}}\n")
    (y,) = oracle.run_hlo(text, [x])
    return np.asarray(y).view(np.uint8)


def main() -> int:
    d = values()
    with np.errstate(over="ignore"):
        f = d.astype(np.float32)
    bits16 = np.arange(1 << 16, dtype=np.uint16)
    out = {"f64": d, "f32": f}
    for name in TYPES:
        out[f"{name}_from_f64"] = _convert("f64", name, d)
        out[f"{name}_from_f32"] = _convert("f32", name, f)
        out[f"{name}_from_f16"] = _convert("f16", name, bits16.view(np.float16))
        out[f"{name}_from_bf16"] = _convert("bf16", name, bits16.view(ml_dtypes.bfloat16))
    DATA.parent.mkdir(exist_ok=True)
    np.savez_compressed(DATA, **out)
    print(f"wrote {DATA.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

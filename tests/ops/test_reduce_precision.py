"""reduce-precision against XLA:CPU, bit for bit: every (exponent_bits, mantissa_bits) pair
with E from 1 to the type's exponent width and M from 0 to its mantissa width, for f32, f64,
bf16 and f16, on edge values (signed zeros, +-inf, quiet and signalling NaNs of both signs,
the smallest and largest subnormals, the smallest normal, the largest finite value, values at
and beside rounding ties) and random bit patterns; and a reduce-precision fused between other
elementwise ops. The narrow float types (computed by XLA:CPU in f16, f8e8m0fnu in f32, then
rounded back) on every code, with E and M up to one past the type's widths.

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

# type -> (numpy type, bits type, exponent bits, mantissa bits, elements)
TYPES = {"f32": (np.float32, np.uint32, 8, 23, 96), "f64": (np.float64, np.uint64, 11, 52, 48),
         "bf16": (ml_dtypes.bfloat16, np.uint16, 8, 7, 96), "f16": (np.float16, np.uint16, 5, 10, 96)}


def _inputs(t: str) -> np.ndarray:
    fty, uty, e, m, n = TYPES[t]
    nb = 1 + e + m
    sign, expm = 1 << (nb - 1), ((1 << e) - 1) << m
    edges = [0, sign, expm, sign | expm, expm | (1 << (m - 1)), sign | expm | (1 << (m - 1)) | 3, expm | 1,
             1, sign | 1, (1 << m) - 1, 1 << m, sign | (1 << m), expm - 1, sign | (expm - 1)]
    bias = (1 << (e - 1)) - 1
    for k in (1, 2, 3, 7, min(m, 10)):  # 1 + ties and values beside them at several positions
        one = bias << m
        half = 1 << (k - 1) if k >= 1 else 0
        edges += [one | half, one | half | (1 << k), one | (half - 1 if half else 0), one | (half + 1)]
    rng = np.random.default_rng(nb + e)
    rand = rng.integers(0, 1 << min(nb, 63), n - len(edges), dtype=np.uint64)
    if nb == 64:
        rand |= rng.integers(0, 2, rand.size, dtype=np.uint64) << np.uint64(63)
    return np.array(edges + [int(v) for v in rand], dtype=np.uint64).astype(uty).view(fty)


def _module(t: str) -> str:
    _, _, e, m, n = TYPES[t]
    lines = [f"HloModule reduce_precision_{t}", "ENTRY main {", f"  x = {t}[{n}] parameter(0)"]
    names = []
    for ee in range(1, e + 1):
        for mm in range(0, m + 1):
            names.append(f"r_{ee}_{mm}")
            lines.append(f"  {names[-1]} = {t}[{n}] reduce-precision(x), exponent_bits={ee}, mantissa_bits={mm}")
    shapes = ", ".join([f"{t}[{n}]"] * len(names))
    lines.append(f"  ROOT out = ({shapes}) tuple({', '.join(names)})")
    return "\n".join(lines + ["}", ""])


CASES = {f"reduce_precision_{t}": (_module(t), [_inputs(t)], 0.0) for t in TYPES}

# narrow type -> (numpy type, exponent bits, mantissa bits, codes)
NARROW = {"f8e3m4": (ml_dtypes.float8_e3m4, 3, 4, 256), "f8e4m3": (ml_dtypes.float8_e4m3, 4, 3, 256),
          "f8e4m3fn": (ml_dtypes.float8_e4m3fn, 4, 3, 256), "f8e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, 4, 3, 256),
          "f8e4m3b11fnuz": (ml_dtypes.float8_e4m3b11fnuz, 4, 3, 256), "f8e5m2": (ml_dtypes.float8_e5m2, 5, 2, 256),
          "f8e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, 5, 2, 256), "f8e8m0fnu": (ml_dtypes.float8_e8m0fnu, 8, 0, 256),
          "f4e2m1fn": (ml_dtypes.float4_e2m1fn, 2, 1, 16)}


def _narrow_module(t: str) -> str:
    _, e, m, n = NARROW[t]
    lines = [f"HloModule reduce_precision_{t}", "ENTRY main {", f"  x = {t}[{n}] parameter(0)"]
    names = [f"r_{ee}_{mm}" for ee in range(1, max(e, 5) + 2) for mm in range(0, m + 2)]
    for nm in names:
        ee, mm = nm.split("_")[1:]
        lines.append(f"  {nm} = {t}[{n}] reduce-precision(x), exponent_bits={ee}, mantissa_bits={mm}")
    lines.append(f"  ROOT out = ({', '.join([f'{t}[{n}]'] * len(names))}) tuple({', '.join(names)})")
    return "\n".join(lines + ["}", ""])


for _t, (_np, _e, _m, _n) in NARROW.items():
    CASES[f"reduce_precision_{_t}"] = (_narrow_module(_t), [np.arange(_n, dtype=np.uint8).view(_np)], 0.0)
CASES["reduce_precision_fused"] = ("""HloModule reduce_precision_fused
ENTRY main {
  x = f32[1000] parameter(0)
  y = f32[1000] parameter(1)
  a = f32[1000] multiply(x, y)
  r = f32[1000] reduce-precision(a), exponent_bits=5, mantissa_bits=10
  b = bf16[1000] convert(r)
  rb = bf16[1000] reduce-precision(b), exponent_bits=5, mantissa_bits=2
  c = f32[1000] convert(rb)
  ROOT s = f32[1000] add(c, x)
}
""", [np.random.default_rng(1).standard_normal(1000).astype(np.float32) * 300,
      np.random.default_rng(2).standard_normal(1000).astype(np.float32)], 0.0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, check_case):
    text, _, rtol = CASES[name]
    check_case(name, text, rtol)


def test_bad_attributes_are_located_errors(tmp_path):
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions

    text = ("HloModule m\nENTRY e {\n  x = s32[4] parameter(0)\n"
            "  ROOT r = s32[4] reduce-precision(x), exponent_bits=5, mantissa_bits=2\n}\n")
    with pytest.raises(AotcError) as e:
        fe = driver.frontend("m.hlo", None, CompileOptions(), text=text)
        driver.generate(fe, str(tmp_path / "libm"), CompileOptions())
    assert "reduce-precision" in str(e.value) and "m.hlo:4" in str(e.value)


@pytest.mark.parametrize("t", sorted(TYPES) + sorted(NARROW))
def test_bits(t, workdir):
    """The outputs' bits, NaN payloads included (assert_matches compares NaNs by position);
    f16's signalling NaNs leave aotc quiet, as every f16 store does."""
    from .conftest import load_case, run_hlo_text

    name = f"reduce_precision_{t}"
    inputs, expected = load_case(name)
    got = run_hlo_text(CASES[name][0], inputs, workdir, name + "_bits")
    uty = TYPES[t][1] if t in TYPES else np.uint8
    for k, (g, w) in enumerate(zip(got, expected)):
        g = np.asarray(g).view(uty)
        w = np.asarray(w).view(uty)
        if t == "f16":  # aotc stores an f16 NaN quiet (f32 -> f16), XLA keeps a signalling one
            w = np.where((w & 0x7C00) == 0x7C00, w | (w & 0x3FF != 0) * np.uint16(0x200), w).astype(uty)
        bad = np.nonzero(g != w)[0]
        assert bad.size == 0, f"{name} output {k}: {[(hex(g[i]), hex(w[i])) for i in bad[:4]]}"

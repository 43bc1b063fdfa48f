"""aotc_narrow.h on its own: every code of the f8 types and f4e2m1fn decodes to ml_dtypes'
value; storing a decoded value gives its code back (NaN payloads included); converting
f32, f64, every f16 and every bf16 bit pattern gives XLA:CPU's code (gen_xla_narrow.py),
with the generated code's FP environment (FTZ/DAZ) on and off; s2/u2/s4/u4 wrap and store
as XLA and ml_dtypes do."""
from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from aotc.runtime_c import runtime_source

DATA = Path(__file__).resolve().parent / "data" / "xla_narrow.npz"
TYPES = {"f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2,
         "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
         "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz, "f8e4m3": ml_dtypes.float8_e4m3,
         "f8e3m4": ml_dtypes.float8_e3m4, "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
         "f4e2m1fn": ml_dtypes.float4_e2m1fn}
INTS = {"s2": ml_dtypes.int2, "u2": ml_dtypes.uint2, "s4": ml_dtypes.int4, "u4": ml_dtypes.uint4}

_LOOP = """
void {name}(const {tin}* x, {tout}* y, int64_t n, int ftz) {{
  aotc_fpenv env;
  if (ftz) aotc_fpenv_enter(&env);
  for (int64_t i = 0; i < n; ++i) y[i] = {expr};
  if (ftz) aotc_fpenv_leave(&env);
}}
"""


def _wrappers() -> str:
    out = []
    for t in TYPES:
        out.append(_LOOP.format(name=f"dec_{t}", tin="uint8_t", tout="float", expr=f"aotc_{t}_to_f32(x[i])"))
        out.append(_LOOP.format(name=f"store_{t}", tin="uint8_t", tout="uint8_t",
                                expr=f"aotc_store_{t}(aotc_{t}_to_f32(x[i]))"))
        out.append(_LOOP.format(name=f"from_f32_{t}", tin="float", tout="uint8_t", expr=f"aotc_f32_to_{t}(x[i])"))
        out.append(_LOOP.format(name=f"from_f64_{t}", tin="double", tout="uint8_t", expr=f"aotc_f64_to_{t}(x[i])"))
        out.append(_LOOP.format(name=f"from_f16_{t}", tin="uint16_t", tout="uint8_t",
                                expr=f"aotc_half_to_{t}(aotc_f16_to_f32(x[i]))"))
        out.append(_LOOP.format(name=f"from_bf16_{t}", tin="uint16_t", tout="uint8_t",
                                expr=f"aotc_half_to_{t}(aotc_bf16_to_f32(x[i]))"))
    for t, ct in (("s2", "int8_t"), ("u2", "uint8_t"), ("s4", "int8_t"), ("u4", "uint8_t")):
        out.append(_LOOP.format(name=f"wrap_{t}", tin=ct, tout=ct, expr=f"aotc_wrap_{t}(x[i])"))
        out.append(_LOOP.format(name=f"istore_{t}", tin=ct, tout=ct, expr=f"aotc_store_{t}(x[i])"))
    return "\n".join(out)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler on PATH: the runtime cannot be built")
    d = tmp_path_factory.mktemp("narrow")
    src = d / "narrow.c"
    src.write_text(runtime_source() + "\n" + _wrappers())
    so = d / "narrow.so"
    r = subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fsanitize=undefined",
                        "-fno-sanitize-recover=all", "-shared", "-fPIC", "-o", str(so), str(src), "-lm", "-lpthread"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:4000]
    return ctypes.CDLL(str(so))


def _run(lib, name: str, x: np.ndarray, out_dtype, ftz: bool) -> np.ndarray:
    x = np.ascontiguousarray(x)
    y = np.zeros(x.shape, out_dtype)
    getattr(lib, name)(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data),
                       ctypes.c_int64(x.size), ctypes.c_int(int(ftz)))
    return y


def _codes(t: str) -> np.ndarray:
    return np.arange(16 if t == "f4e2m1fn" else 256, dtype=np.uint8)


@pytest.mark.parametrize("ftz", [False, True])
@pytest.mark.parametrize("t", sorted(TYPES))
def test_every_code_decodes_to_ml_dtypes_value_and_stores_back(lib, t, ftz):
    codes = _codes(t)
    got = _run(lib, f"dec_{t}", codes, np.float32, ftz)
    want = np.asarray(codes.view(TYPES[t]), np.float32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f"{t}: NaN codes")
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32), err_msg=t)
    if not t.endswith(("fnuz", "fnu")):  # types with a sign bit in their NaN codes
        np.testing.assert_array_equal(np.signbit(got[nan]), codes[nan] >= 128, err_msg=f"{t}: NaN signs")
    back = _run(lib, f"store_{t}", codes, np.uint8, ftz)
    np.testing.assert_array_equal(back, codes, err_msg=f"{t}: store(decode(code)) != code")


@pytest.mark.parametrize("ftz", [False, True])
@pytest.mark.parametrize("t", sorted(TYPES))
def test_converts_give_xla_codes(lib, t, ftz):
    with np.load(DATA) as z:
        cases = [("f32", z["f32"], np.float32), ("f64", z["f64"], np.float64),
                 ("f16", np.arange(1 << 16, dtype=np.uint16), np.uint16),
                 ("bf16", np.arange(1 << 16, dtype=np.uint16), np.uint16)]
        want = {src: z[f"{t}_from_{src}"] for src, _, _ in cases}
    bad = []
    for src, x, dt in cases:
        got = _run(lib, f"from_{src}_{t}", x.astype(dt), np.uint8, ftz)
        diff = np.nonzero(got != want[src])[0]
        if diff.size:
            bad.append(f"from {src}: {diff.size} differ, e.g. x={x[diff[:3]].tolist()} "
                       f"aotc={got[diff[:3]].tolist()} xla={want[src][diff[:3]].tolist()}")
    assert not bad, f"{t}:\n" + "\n".join(bad)


def test_f32_encoding_matches_ml_dtypes_off_nan(lib):
    """ml_dtypes rounds f32 as XLA does (to nearest even, the type's overflow) except where
    XLA differs on NaN (f4e2m1fn) and f8e8m0fnu's rounding; a second, independent check."""
    with np.load(DATA) as z:
        f = z["f32"]
    f = f[~np.isnan(f)]
    for t in TYPES:
        if t == "f8e8m0fnu":
            continue
        got = _run(lib, f"from_f32_{t}", f, np.uint8, False)
        want = f.astype(TYPES[t]).view(np.uint8)
        np.testing.assert_array_equal(got, want, err_msg=t)


@pytest.mark.parametrize("t", sorted(INTS))
def test_subbyte_ints_wrap_and_store_like_ml_dtypes(lib, t):
    ct = np.int8 if t.startswith("s") else np.uint8
    x = np.arange(256, dtype=np.uint8).view(ct)
    w = int(t[1:])
    wrapped = _run(lib, f"wrap_{t}", x, ct, False)
    low = x.view(np.uint8) & ((1 << w) - 1)
    want = (low.astype(np.int16) ^ (1 << (w - 1))) - (1 << (w - 1)) if t.startswith("s") else low
    np.testing.assert_array_equal(wrapped.astype(np.int16), np.asarray(want, np.int16))
    stored = _run(lib, f"istore_{t}", wrapped, ct, False)
    # what ml_dtypes keeps in the byte for the same value
    np.testing.assert_array_equal(stored.view(np.uint8), wrapped.astype(INTS[t]).view(np.uint8))

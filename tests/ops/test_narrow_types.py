"""The narrow types against XLA:CPU, bit for bit: the f8 types and f4e2m1fn (every code as
an operand of unary, binary, compare, select, reduce, dot, bitcast-convert and converts to
and from f32/f16/bf16/s32 and each other, with edge values: max finite, min normal,
subnormals, NaN, signed zeros, inf where the type has it) and s2/u2/s4/u4 (every value,
every pair for the binary ops).

Expected outputs: tests/ops/data/<case>.npz from gen_expected.py (XLA:CPU); the arrays of
these types are stored there as their uint8 codes.
"""
from __future__ import annotations

import shutil

import ml_dtypes
import numpy as np
import pytest

from .conftest import load_case, run_hlo_text

FLOATS = ("f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e4m3", "f8e3m4",
          "f8e8m0fnu", "f4e2m1fn")
INTS = ("s2", "u2", "s4", "u4")
_NP = {"f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2,
       "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
       "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz, "f8e4m3": ml_dtypes.float8_e4m3,
       "f8e3m4": ml_dtypes.float8_e3m4, "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
       "f4e2m1fn": ml_dtypes.float4_e2m1fn, "s2": ml_dtypes.int2, "u2": ml_dtypes.uint2,
       "s4": ml_dtypes.int4, "u4": ml_dtypes.uint4}
N = 512  # elements per operand: every code twice (f4: 32 times), paired with two shuffles

UNARY = ("negate", "abs", "sign", "exponential", "exponential-minus-one", "log", "log-plus-one",
         "sqrt", "rsqrt", "cbrt", "tanh", "logistic", "sine", "cosine", "tan", "erf", "floor",
         "ceil", "round-nearest-even", "round-nearest-afz")
BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder", "atan2")
INT_UNARY = ("negate", "abs", "sign", "not", "popcnt", "count-leading-zeros")
INT_BINARY = ("add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power",
              "shift-left", "shift-right-logical", "shift-right-arithmetic", "and", "or", "xor")


def _codes(t: str) -> np.ndarray:
    n = 16 if t in ("f4e2m1fn", "u4", "s4") else 4 if t in ("s2", "u2") else 256
    return np.arange(n, dtype=np.uint8)


def _operands(t: str) -> tuple[np.ndarray, np.ndarray]:
    """x: every code in order, repeated; y: two seeded shuffles of the same."""
    codes = _codes(t)
    rng = np.random.default_rng(sum(map(ord, t)))
    x = np.resize(codes, N)
    y = np.concatenate([rng.permutation(x[:N // 2]), rng.permutation(x[N // 2:])])
    return x.view(_NP[t]), y.view(_NP[t])


def _wide_edges() -> np.ndarray:
    """f32 values for converts into the narrow types: every type's codes, their midpoints
    and values just beside them, overflow, tiny values, NaN, inf, signed zeros."""
    vals = [np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 65504.0, 7e4, 2.0 ** -126,
                      2.0 ** -127, 2.0 ** -128, 1e-40, 2.0 ** -24, 2.0 ** -25, 3.0 * 2 ** -26], np.float64)]
    for t in FLOATS:
        f = np.unique(np.asarray(_codes(t).view(_NP[t]), np.float64))
        f = f[np.isfinite(f)]
        mid = (f[:-1] + f[1:]) / 2
        vals += [f, mid, mid * (1 + 2.0 ** -12), mid * (1 - 2.0 ** -12), f * 1.0625]
    v = np.concatenate(vals)
    v = np.concatenate([v, -v]).astype(np.float32)
    return np.resize(v, 4096)


def _float_module(t: str) -> tuple[str, list[np.ndarray], list[str]]:
    """One type's elementwise, reduce, dot and bitcast ops in one module (outputs named)."""
    n = N
    lines = [f"  x = {t}[{n}] parameter(0)", f"  y = {t}[{n}] parameter(1)"]
    outs: list[tuple[str, str]] = []

    def out(name: str, shape: str, text: str) -> None:
        lines.append(f"  {name} = {shape} {text}")
        outs.append((name, shape))

    for op in UNARY:
        out(f"u_{op.replace('-', '_')}", f"{t}[{n}]", f"{op}(x)")
    for op in BINARY:
        out(f"b_{op}", f"{t}[{n}]", f"{op}(x, y)")
    out("isfin", f"pred[{n}]", "is-finite(x)")
    for d in ("LT", "EQ", "NE", "GE"):
        out(f"cmp_{d}", f"pred[{n}]", f"compare(x, y), direction={d}")
    lines.append(f"  lt = pred[{n}] compare(x, y), direction=LT")
    out("sel", f"{t}[{n}]", "select(lt, x, y)")
    out("clamp", f"{t}[{n}]", "clamp(y, x, y)")
    for w in ("f32", "f16", "bf16", "f64", "s32", "u8", "pred"):
        out(f"to_{w}", f"{w}[{n}]", "convert(x)")
    ut = "u4" if t == "f4e2m1fn" else "u8"  # bitcast-convert keeps the width
    out("bits", f"{ut}[{n}]", "bitcast-convert(x)")
    lines.append(f"  sx = {t}[{n // 16},16] reshape(x)")
    lines.append(f"  zero = {t}[] constant(0)" if t != "f8e8m0fnu" else f"  zero = {t}[] constant(1)")
    out("sum_rows", f"{t}[{n // 16}]", "reduce(sx, zero), dimensions={1}, to_apply=add")
    out("max_rows", f"{t}[{n // 16}]", "reduce(sx, zero), dimensions={1}, to_apply=mx")
    # the dot reads finite operands: with NaNs and infinities, the sign of the NaN it gives
    # depends on XLA's order of summation
    lines.append(f"  dl = {t}[512] parameter(8)")
    lines.append(f"  dr = {t}[512] parameter(9)")
    lines.append(f"  a = {t}[16,32] reshape(dl)")
    lines.append(f"  b = {t}[32,16] reshape(dr)")
    out("dot", f"{t}[16,16]", "dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}")
    lines.append(f"  img = {t}[1,16,16,2] reshape(dl)")
    out("pool_max", f"{t}[1,8,8,2]", "reduce-window(img, zero), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=mx")
    out("pool_sum", f"{t}[1,8,8,2]", "reduce-window(img, zero), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=add")
    out("sorted", f"{t}[{n}]", "sort(dl), dimensions={0}, to_apply=lt")
    # converts into the type from wider ones
    lines.append("  w = f32[4096] parameter(2)")
    lines.append("  h = f16[4096] parameter(3)")
    lines.append("  bh = bf16[4096] parameter(4)")
    lines.append("  i = s32[4096] parameter(5)")
    lines.append("  d = f64[4096] parameter(6)")
    lines.append(f"  u = {ut}[256] parameter(7)")
    for src, p in (("f32", "w"), ("f16", "h"), ("bf16", "bh"), ("s32", "i"), ("f64", "d")):
        out(f"from_{src}", f"{t}[4096]", f"convert({p})")
    out("from_bits", f"{t}[256]", "bitcast-convert(u)")
    body = "\n".join(lines)
    root = ", ".join(name for name, _ in outs)
    shapes = ", ".join(shape for _, shape in outs)
    text = (f"HloModule narrow_{t}\n\nadd {{\n  p = {t}[] parameter(0)\n  q = {t}[] parameter(1)\n"
            f"  ROOT r = {t}[] add(p, q)\n}}\n\nmx {{\n  p2 = {t}[] parameter(0)\n  q2 = {t}[] parameter(1)\n"
            f"  ROOT r2 = {t}[] maximum(p2, q2)\n}}\n\nlt {{\n  p3 = {t}[] parameter(0)\n  q3 = {t}[] parameter(1)\n"
            f"  ROOT r3 = pred[] compare(p3, q3), direction=LT\n}}\n\nENTRY main {{\n{body}\n  ROOT out = ({shapes}) tuple({root})\n}}\n")
    x, y = _operands(t)
    with np.errstate(over="ignore"):
        w = _wide_edges()
    rng = np.random.default_rng(7)
    ints = np.concatenate([np.arange(-600, 600), rng.integers(-2 ** 31, 2 ** 31 - 1, 4096 - 1200)]).astype(np.int32)
    d = w.astype(np.float64) * (1 + rng.choice([0.0, 2.0 ** -40, -2.0 ** -40], w.size))
    u = np.arange(256, dtype=np.uint8)
    u = (u % 16).view(ml_dtypes.uint4) if t == "f4e2m1fn" else u
    # finite, and no -0: sort is unstable, so where -0 and +0 land among equal keys is XLA's
    # algorithm's choice
    f32 = np.asarray(x, np.float32)
    finite = x[np.isfinite(f32) & ~((f32 == 0) & np.signbit(f32))]
    dl = np.resize(finite, N)
    dr = np.resize(rng.permutation(finite), N)
    with np.errstate(over="ignore"):
        inputs = [x, y, w, w.astype(np.float16), w.astype(ml_dtypes.bfloat16), ints, d, u, dl, dr]
    return text, inputs, [name for name, _ in outs]


def _int_module(t: str) -> tuple[str, list[np.ndarray], list[str]]:
    n = N
    lines = [f"  x = {t}[{n}] parameter(0)", f"  y = {t}[{n}] parameter(1)",
             "  w = f32[64] parameter(2)", "  i = s32[64] parameter(3)"]
    outs: list[tuple[str, str]] = []

    def out(name: str, shape: str, text: str) -> None:
        lines.append(f"  {name} = {shape} {text}")
        outs.append((name, shape))

    for op in INT_UNARY:
        if t.startswith("u") and op in ("abs", "sign"):
            continue  # StableHLO takes abs and sign of signed integers only
        out(f"u_{op.replace('-', '_')}", f"{t}[{n}]", f"{op}(x)")
    for op in INT_BINARY:
        out(f"b_{op.replace('-', '_')}", f"{t}[{n}]", f"{op}(x, y)")
    for d in ("LT", "EQ", "GE"):
        out(f"cmp_{d}", f"pred[{n}]", f"compare(x, y), direction={d}")
    lines.append(f"  lt = pred[{n}] compare(x, y), direction=LT")
    out("sel", f"{t}[{n}]", "select(lt, x, y)")
    for w in ("f32", "s32", "u8", "f8e4m3fn", "pred"):
        out(f"to_{w}", f"{w}[{n}]", "convert(x)")
    other = {"s2": "u2", "u2": "s2", "s4": "u4", "u4": "s4"}[t]
    out("bits", f"{other}[{n}]", "bitcast-convert(x)")
    out("from_f32", f"{t}[64]", "convert(w)")
    out("from_s32", f"{t}[64]", "convert(i)")
    lines.append(f"  sx = {t}[{n // 16},16] reshape(x)")
    lines.append(f"  zero = {t}[] constant(0)")
    out("sum_rows", f"{t}[{n // 16}]", "reduce(sx, zero), dimensions={1}, to_apply=add")
    if t in ("s4", "u4"):  # XLA:CPU refuses a dot of s2/u2 (test_dot_of_2_bit_ints_is_refused)
        lines.append(f"  a = {t}[16,32] reshape(x)")
        lines.append(f"  b = {t}[32,16] reshape(y)")
        out("dot", f"{t}[16,16]", "dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}")
    body = "\n".join(lines)
    text = (f"HloModule narrow_{t}\n\nadd {{\n  p = {t}[] parameter(0)\n  q = {t}[] parameter(1)\n"
            f"  ROOT r = {t}[] add(p, q)\n}}\n\nENTRY main {{\n{body}\n"
            f"  ROOT out = ({', '.join(s for _, s in outs)}) tuple({', '.join(n for n, _ in outs)})\n}}\n")
    codes = _codes(t)
    x = np.repeat(codes, 1)
    pairs = np.array([(a, b) for a in codes for b in codes], np.uint8)
    x = np.resize(pairs[:, 0], n)
    y = np.resize(pairs[:, 1], n)
    w = np.array([0, -0.0, 0.4, 0.5, 0.6, 1.5, -1.5, 2.5, -2.5, 3, -3, 7, 7.5, 8, -8, -8.5, -9, 15, 16, 17,
                  1e10, -1e10, np.inf, -np.inf, np.nan, 1.99, -1.99, 3.5, -4, 4, -5, 100], np.float32)
    w = np.resize(w, 64)
    i = np.resize(np.array([0, 1, -1, 2, -2, 3, -3, 4, -4, 7, 8, -8, -9, 15, 16, 17, 255, 256, -256,
                            2 ** 31 - 1, -2 ** 31, 1000003, -1000003], np.int32), 64)
    return text, [x.view(_NP[t]), y.view(_NP[t]), w, i], [name for name, _ in outs]


def _convert_module() -> tuple[str, list[np.ndarray], list[str]]:
    """Every narrow float type to every other one, from all its codes."""
    lines, outs = [], []
    for k, t in enumerate(FLOATS):
        lines.append(f"  x{k} = {t}[256] parameter({k})")
        for t2 in FLOATS:
            if t2 != t:
                name = f"{t}_to_{t2}"
                lines.append(f"  {name} = {t2}[256] convert(x{k})")
                outs.append((name, f"{t2}[256]"))
    text = ("HloModule narrow_converts\n\nENTRY main {\n" + "\n".join(lines) +
            f"\n  ROOT out = ({', '.join(s for _, s in outs)}) tuple({', '.join(n for n, _ in outs)})\n}}\n")
    inputs = [np.resize(_codes(t), 256).view(_NP[t]) for t in FLOATS]
    return text, inputs, [n for n, _ in outs]


_MODULES = {f"narrow_{t}": (lambda t=t: _float_module(t)) for t in FLOATS}
_MODULES.update({f"narrow_{t}": (lambda t=t: _int_module(t)) for t in INTS})
_MODULES["narrow_converts"] = _convert_module
CASES = {name: (lambda m: (m[0], m[1], 0.0))(make()) for name, make in _MODULES.items()}
OUTPUT_NAMES = {name: make()[2] for name, make in _MODULES.items()}


_BOTH_NAN = ("b_add", "b_subtract", "b_multiply", "b_divide")


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind == "V" or a.dtype.kind == "f":
        return a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return a.astype(np.int64) if a.dtype.kind in "biu" else a


# one f8 type of each family and one sub-byte integer run in the fast suite; the rest (about
# 2 s of compiling each) are slow
_FAST = {"narrow_f8e4m3fn", "narrow_f8e5m2", "narrow_s4"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in _FAST else pytest.mark.slow)
                                  for n in sorted(CASES)])
def test_narrow_types_match_xla_bits(name, workdir):
    inputs, expected = load_case(name)
    _check_bits(name, inputs, expected, run_hlo_text(CASES[name][0], inputs, workdir, name))


# the flags aotc builds with and a user's -march=native build: f8e8m0fnu's 2^-127 is an f32
# subnormal, which a compiler must never fold into a constant outside the FTZ/DAZ environment
_USER_BUILDS = {
    "gcc-O3-x86-64-v3": ("gcc", "-std=c11", "-O3", "-march=x86-64-v3", "-fno-math-errno", "-fno-trapping-math",
                         "-ffp-contract=off", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"),
    "clang-O3-native": ("clang", "-std=c11", "-O3", "-march=native", "-Wall", "-Wextra", "-Werror", "-shared",
                        "-fPIC"),
    "gcc-O2": ("gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"),
}


@pytest.mark.slow
@pytest.mark.parametrize("build", sorted(_USER_BUILDS))
@pytest.mark.parametrize("name", sorted(f"narrow_{t}" for t in FLOATS))
def test_narrow_floats_match_xla_bits_under_user_flags(name, build, workdir):
    if not shutil.which(_USER_BUILDS[build][0]):
        pytest.fail(f"{_USER_BUILDS[build][0]} is not installed (CI installs it)")
    inputs, expected = load_case(name)
    _check_bits(name, inputs, expected, run_hlo_text(CASES[name][0], inputs, workdir, name,
                                                     build_cmd=_USER_BUILDS[build]))


def _check_bits(name: str, inputs, expected, got) -> None:
    names = OUTPUT_NAMES[name]
    assert len(got) == len(expected) == len(names)
    bad = []
    t = name[len("narrow_"):]
    x, y = (np.asarray(a.view(_NP[t]), np.float32) if t in FLOATS else None for a in inputs[:2])
    for g, e, what in zip(got, expected, names):
        gb, eb = _bits(g), _bits(e)
        if what in _BOTH_NAN and x is not None and e.shape == x.shape:
            # both operands NaN: which one's sign survives depends on the C compiler's operand
            # order for +, -, *, / (x86 keeps the first source's NaN); the result is NaN in both
            both = (np.isnan(x) & np.isnan(y)).reshape(e.shape)
            gb, eb = np.where(both, 0, gb), np.where(both, 0, eb)
        if g.dtype.kind == "f":  # NaN payloads of f16/f32/f64 results are not part of the contract
            nan = np.isnan(np.asarray(g, np.float64)) & np.isnan(np.asarray(e, np.float64))
            gb, eb = np.where(nan, 0, gb), np.where(nan, 0, eb)
        diff = np.nonzero(gb.reshape(-1) != eb.reshape(-1))[0]
        if diff.size:
            bad.append(f"{what}: {diff.size} differ, first at {diff[:4].tolist()}: "
                       f"aotc {gb.reshape(-1)[diff[:4]].tolist()} xla {eb.reshape(-1)[diff[:4]].tolist()}")
    assert not bad, f"{name}:\n" + "\n".join(bad)


def test_dot_of_2_bit_ints_is_refused():
    from aotc import driver
    from aotc.errors import AotcError
    from aotc.options import CompileOptions

    text = ("HloModule m\n\nENTRY e {\n  x = s2[2,3] parameter(0)\n  y = s2[3,2] parameter(1)\n"
            "  ROOT d = s2[2,2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n")
    fe = driver.frontend("m.hlo", None, CompileOptions(), text=text)
    with pytest.raises(AotcError, match=r"m.hlo:6:8: error: .*dot of s2 values is not supported"):
        driver.generate(fe, "/nonexistent/libm", CompileOptions())

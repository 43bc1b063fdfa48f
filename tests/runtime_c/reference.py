"""Independent references for the aotc_math.h tests.

Exact integer arithmetic with explicit wrapping, exact rational rounding to
binary formats (``round_to_format``), and XLA:CPU's documented rules
(docs/xla-semantics.md), organised as ``Group``s: one helper, many argument
tuples, the expected results.  Nothing here calls the C code; test_math.py
and test_warnings.py (sanitizer driver) run the groups.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import ml_dtypes
import numpy as np

from .conftest import CVT_TYPES, FLOAT_TYPES, INT_TYPES

BITS = {"pred": 8, "s8": 8, "s16": 16, "s32": 32, "s64": 64, "u8": 8, "u16": 16, "u32": 32,
        "u64": 64, "f32": 32, "f64": 64}
NAN = float("nan")
INF = float("inf")


def signed(t: str) -> bool:
    return t.startswith("s")


def wrap(v: int, t: str) -> int:
    """v reduced modulo 2^bits into the range of integer type t."""
    b = BITS[t]
    m = v & ((1 << b) - 1)
    return m - (1 << b) if signed(t) and m >> (b - 1) else m


def int_min(t: str) -> int:
    return -(1 << (BITS[t] - 1)) if signed(t) else 0


def int_max(t: str) -> int:
    return (1 << (BITS[t] - 1)) - 1 if signed(t) else (1 << BITS[t]) - 1


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def bits_f32(u: int) -> float:
    return struct.unpack("<f", struct.pack("<I", u))[0]


def bits_f64(u: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", u))[0]


def round_to_format(x, ebits: int, mbits: int) -> float:
    """x (float or Fraction) rounded to nearest-even in a binary format with
    `ebits` exponent and `mbits` mantissa bits; subnormals kept, overflow to
    inf, NaN and signed zeros kept.  Exact (rational arithmetic)."""
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x) or x == 0:
            return x
        q = Fraction(x)
    else:
        q = x
        if q == 0:
            return 0.0
    neg = q < 0
    q = abs(q)
    bias = (1 << (ebits - 1)) - 1
    emin = 1 - bias
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - mbits)
    n, rem = divmod(q, ulp)
    n = int(n)
    if rem * 2 > ulp or (rem * 2 == ulp and n & 1):
        n += 1
    r = n * ulp
    max_finite = (2 - Fraction(2) ** -mbits) * Fraction(2) ** bias
    v = INF if r > max_finite else float(r)
    return -v if neg else v


def to_f32(x) -> float:
    return round_to_format(x, 8, 23)


def to_f64(x) -> float:
    return round_to_format(x, 11, 52)


# ------------------------------------------------------------------ groups

@dataclass
class Group:
    """One helper applied to many argument tuples, with expected results.
    cmp: "exact" (bitwise; any NaN matches a NaN), or "ulp:N"."""
    fn: str
    ret: str
    args: tuple[str, ...]
    rows: list[tuple]
    expected: list
    cmp: str = "exact"


def result_key(v, t: str) -> tuple:
    """Normalises a value of aotc type t for comparison."""
    if t in ("f32", "f64"):
        v = float(v)
        if math.isnan(v):
            return ("nan",)
        return ("bits", f32_bits(v) if t == "f32" else f64_bits(v))
    return ("int", wrap(int(v), t) if t != "pred" else int(v))


def ordered(v: float, t: str) -> int:
    """Monotonic integer image of a float (for ULP distances)."""
    u = f32_bits(v) if t == "f32" else f64_bits(v)
    sign = 1 << (BITS[t] - 1)
    return -(u & (sign - 1)) if u & sign else u


def check_group(g: Group, got: list) -> None:
    bad = []
    for row, exp, res in zip(g.rows, g.expected, got):
        if g.cmp.startswith("ulp:") and not (isinstance(exp, float) and math.isnan(exp)):
            tol = int(g.cmp[4:])
            ok = (not math.isnan(res) and
                  (math.isinf(exp) and res == exp or
                   not math.isinf(exp) and abs(ordered(res, g.ret) - ordered(exp, g.ret)) <= tol))
        else:
            ok = result_key(res, g.ret) == result_key(exp, g.ret)
        if not ok:
            bad.append(f"{g.fn}{row} = {res!r}, expected {exp!r}")
    assert not bad, f"{len(bad)} mismatches:\n" + "\n".join(bad[:40])


def call_group(lib, g: Group) -> list:
    f = getattr(lib, g.fn)
    return [f(*row) for row in g.rows]


# ------------------------------------------------------------------ integers

def int_edge_values(t: str) -> list[int]:
    b = BITS[t]
    raw = [0, 1, 2, 3, 7, b - 1, b, b + 1, 100, -1, -2, -3, -7, int_min(t), int_min(t) + 1,
           int_max(t), int_max(t) - 1, 1 << (b - 1), (1 << (b - 1)) - 1]
    return sorted({wrap(v, t) for v in raw})


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _signed_view(v: int, t: str) -> int:
    return wrap(v, "s" + t[1:])


def ref_int_pow(base: int, exponent: int, t: str) -> int:
    """XLA:CPU integer power: square-and-multiply over the low six exponent
    bits; negative exponent (signed view of the bits) -> 1 / +-1 / 0."""
    sb, se = _signed_view(base, t), _signed_view(exponent, t)
    if se < 0:
        if sb == 1:
            return 1
        if sb == -1:
            return wrap(-1 if se & 1 else 1, t)
        return 0
    acc, b, e = 1, base, exponent & 63
    while e:
        if e & 1:
            acc = wrap(acc * b, t)
        b = wrap(b * b, t)
        e >>= 1
    return wrap(acc, t)


def ref_int_binary(op: str, a: int, b: int, t: str) -> int:
    nb = BITS[t]
    mask = (1 << nb) - 1
    ones = wrap(-1, t)
    if op == "add":
        return wrap(a + b, t)
    if op == "sub":
        return wrap(a - b, t)
    if op == "mul":
        return wrap(a * b, t)
    if op == "div":
        return ones if b == 0 else wrap(_tdiv(a, b), t)
    if op == "rem":
        return a if b == 0 else wrap(a - b * _tdiv(a, b), t)
    if op == "pow":
        return ref_int_pow(a, b, t)
    if op == "max":
        return max(a, b)
    if op == "min":
        return min(a, b)
    n = b & mask  # shift amounts are read as unsigned
    if op == "shl":
        return 0 if n >= nb else wrap(a << n, t)
    if op == "shr_logical":
        return 0 if n >= nb else wrap((a & mask) >> n, t)
    if op == "shr_arith":
        sa = _signed_view(a, t)
        return wrap(sa >> min(n, nb - 1), t)
    if op == "and":
        return wrap(a & b, t)
    if op == "or":
        return wrap(a | b, t)
    if op == "xor":
        return wrap(a ^ b, t)
    raise KeyError(op)


def ref_int_unary(op: str, a: int, t: str) -> int:
    nb = BITS[t]
    mask = (1 << nb) - 1
    if op == "neg":
        return wrap(-a, t)
    if op == "abs":
        return wrap(abs(a), t)
    if op == "sign":
        return (a > 0) - (a < 0)
    if op == "popcnt":
        return bin(a & mask).count("1")
    if op == "clz":
        return nb - (a & mask).bit_length()
    if op == "not":
        return wrap(~a, t)
    raise KeyError(op)


INT_BINARY_OPS = ("add", "sub", "mul", "div", "rem", "pow", "max", "min", "shl", "shr_logical",
                  "shr_arith", "and", "or", "xor")
INT_UNARY_OPS = ("neg", "abs", "sign", "popcnt", "clz", "not")


def int_groups() -> list[Group]:
    out = []
    for t in INT_TYPES:
        vals = int_edge_values(t)
        pairs = [(a, b) for a in vals for b in vals]
        for op in INT_BINARY_OPS:
            out.append(Group(f"aotc_{op}_{t}", t, (t, t), pairs,
                             [ref_int_binary(op, a, b, t) for a, b in pairs]))
        for op in INT_UNARY_OPS:
            out.append(Group(f"aotc_{op}_{t}", t, (t,), [(a,) for a in vals],
                             [ref_int_unary(op, a, t) for a in vals]))
        triples = [(lo, x, hi) for lo in vals[:3] for x in vals for hi in vals[-3:]]
        out.append(Group(f"aotc_clamp_{t}", t, (t, t, t), triples,
                         [min(max(x, lo), hi) for lo, x, hi in triples]))
    return out


# ------------------------------------------------------------------ floats

def float_edge_values(t: str) -> list[float]:
    big = 3.4028234663852886e38 if t == "f32" else 1.7976931348623157e308
    tiny = 1.401298464324817e-45 if t == "f32" else 5e-324
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -7.25, 1e-30, -1e-30,
            tiny, -tiny, big, -big, INF, -INF, NAN, -NAN, 0.49999997, 100.0, 1e10]
    return [to_f32(v) if t == "f32" else v for v in vals]


def ftz(v: float, t: str = "f32") -> float:
    """XLA:CPU reads and writes a subnormal as a zero of the same sign (DAZ/FTZ)."""
    tiny = 2.0 ** -126 if t == "f32" else 2.0 ** -1022
    return math.copysign(0.0, v) if v != 0 and abs(v) < tiny else v


def _fmax(a: float, b: float, t: str = "f32") -> float:
    a, b = ftz(a, t), ftz(b, t)
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == b == 0:
        return a if math.copysign(1, a) > 0 else b
    return max(a, b)


def _fmin(a: float, b: float, t: str = "f32") -> float:
    a, b = ftz(a, t), ftz(b, t)
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == b == 0:
        return a if math.copysign(1, a) < 0 else b
    return min(a, b)


def _exact_binary(op: str, a: float, b: float, rnd: Callable) -> float:
    """IEEE result of a correctly rounded operation, via rationals."""
    if any(math.isnan(v) or math.isinf(v) for v in (a, b)) or (op == "div" and b == 0):
        with np.errstate(all="ignore"):
            return float({"add": np.add, "sub": np.subtract, "mul": np.multiply,
                          "div": np.divide}[op](np.float64(a), np.float64(b)))
    fa, fb = Fraction(a), Fraction(b)
    r = {"add": fa + fb, "sub": fa - fb, "mul": fa * fb, "div": fa / fb if b else None}[op]
    if r == 0:  # signed zero rules of IEEE 754 (round to nearest)
        if op in ("mul", "div"):
            return -0.0 if (math.copysign(1, a) * math.copysign(1, b)) < 0 else 0.0
        both_neg = math.copysign(1, a) < 0 and math.copysign(1, b if op == "add" else -b) < 0
        return -0.0 if both_neg else 0.0
    return rnd(r)


def _sign(x: float) -> float:
    if math.isnan(x):
        return x
    if x == 0:
        return x
    return math.copysign(1.0, x)


def _round_afz(x: float) -> float:
    if math.isnan(x) or math.isinf(x):
        return x
    r = float(math.floor(abs(Fraction(x)) + Fraction(1, 2)))
    return math.copysign(r, x)


def _round_even(x: float) -> float:
    if math.isnan(x) or math.isinf(x):
        return x
    return math.copysign(float(round(Fraction(x))), x)  # Fraction rounds half to even


def _fmod(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
        return NAN
    if math.isinf(b):
        return a
    return math.fmod(a, b)


def _sqrt(x: float, rnd: Callable) -> float:
    if math.isnan(x) or x < 0:
        return NAN
    if x == 0 or math.isinf(x):
        return x
    # correctly rounded: integer square root on a scaled value
    q = Fraction(x)
    scale = max(0, (240 - q.numerator.bit_length() + q.denominator.bit_length()) // 2 + 1)
    n = math.isqrt(q.numerator * 4 ** scale // q.denominator)
    lo = Fraction(n, 2 ** scale)
    return rnd(lo + Fraction(1, 2 ** (scale + 1)))  # between n and n+1: never a tie


def float_exact_groups() -> list[Group]:
    out = []
    for t in FLOAT_TYPES:
        rnd = to_f32 if t == "f32" else to_f64
        vals = float_edge_values(t)
        pairs = [(a, b) for a in vals for b in vals]
        for op in ("add", "sub", "mul", "div"):
            out.append(Group(f"aotc_{op}_{t}", t, (t, t), pairs,
                             [_exact_binary(op, a, b, rnd) for a, b in pairs]))
        out.append(Group(f"aotc_max_{t}", t, (t, t), pairs, [_fmax(a, b, t) for a, b in pairs]))
        out.append(Group(f"aotc_min_{t}", t, (t, t), pairs, [_fmin(a, b, t) for a, b in pairs]))
        out.append(Group(f"aotc_rem_{t}", t, (t, t), pairs, [_fmod(a, b) for a, b in pairs]))
        one = [(a,) for a in vals]
        for op, f in (("neg", lambda x: -x), ("abs", abs), ("sign", _sign),
                      ("round_afz", _round_afz), ("round_even", _round_even),
                      ("floor", lambda x: x if not math.isfinite(x) else math.copysign(float(math.floor(x)), x)),
                      ("ceil", lambda x: x if not math.isfinite(x) else math.copysign(float(math.ceil(x)), x)),
                      ("sqrt", lambda x: _sqrt(x, rnd))):
            out.append(Group(f"aotc_{op}_{t}", t, (t,), one, [f(a) for a, in one]))
        rng = np.random.default_rng(7)
        rand = [float(v) for v in rng.uniform(-1, 1, 300) * 2.0 ** rng.integers(-3, 60, 300)]
        rand += [k + 0.5 for k in range(-6, 6)] + [-(2.0 ** 23) - 0.5, 2.0 ** 52 + 1, -(2.0 ** 23) + 0.5]
        rand = [to_f32(v) if t == "f32" else v for v in rand]
        for op, f in (("round_afz", _round_afz), ("round_even", _round_even),
                      ("floor", lambda x: math.copysign(float(math.floor(x)), x)),
                      ("ceil", lambda x: math.copysign(float(math.ceil(x)), x))):
            out.append(Group(f"aotc_{op}_{t}", t, (t,), [(x,) for x in rand], [f(x) for x in rand]))
        out.append(Group(f"aotc_is_finite_{t}", "pred", (t,), one,
                         [int(math.isfinite(a)) for a, in one]))
        out.append(Group(f"aotc_is_nan_{t}", "pred", (t,), one, [int(math.isnan(a)) for a, in one]))
        triples = [(-1.0, x, 1.0) for x in vals] + [(NAN, 0.0, 1.0), (0.0, 0.5, NAN)]
        out.append(Group(f"aotc_clamp_{t}", t, (t, t, t), triples,
                         [_fmin(_fmax(x, lo, t), hi, t) for lo, x, hi in triples]))
    return out


LIBM_INPUTS = [-10.0, -3.5, -1.0, -0.75, -1e-3, -1e-10, 0.0, -0.0, 1e-10, 1e-3, 0.5, 1.0, 2.0,
               3.5, 10.0, 30.0, INF, -INF, NAN]


def _m(f: Callable) -> Callable:
    def g(*a):
        try:
            return f(*a)
        except (ValueError, ZeroDivisionError):
            return NAN
        except OverflowError:
            return INF
    return g


def _logistic(x: float) -> float:
    if math.isnan(x):
        return x
    if x < -745:
        return 0.0
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else math.exp(x)


def _cbrt(x: float) -> float:
    q = abs(Fraction(x))
    r = Fraction(abs(x) ** (1 / 3))
    for _ in range(2):  # Newton steps in exact arithmetic
        r = r - (r ** 3 - q) / (3 * r * r)
    return math.copysign(to_f64(r), x)


def _rsqrt(x: float) -> float:
    if math.isnan(x) or x < 0:
        return NAN
    if x == 0:
        return math.copysign(INF, x)
    if math.isinf(x):
        return 0.0
    return 1.0 / math.sqrt(x)


LIBM_UNARY = {
    "exp": _m(math.exp), "expm1": _m(math.expm1), "log": _m(lambda x: -INF if x == 0 else math.log(x)),
    "log1p": _m(lambda x: -INF if x == -1 else math.log1p(x)), "tanh": math.tanh,
    "sin": _m(math.sin), "cos": _m(math.cos), "tan": _m(math.tan), "erf": math.erf,
    "cbrt": lambda x: x if x == 0 or not math.isfinite(x) else _cbrt(x),
    "logistic": _logistic, "rsqrt": _rsqrt,
}


def float_libm_groups() -> list[Group]:
    out = []
    for t in FLOAT_TYPES:
        rnd = to_f32 if t == "f32" else float
        cast = to_f32 if t == "f32" else float
        xs = [cast(x) for x in LIBM_INPUTS]
        for op, f in LIBM_UNARY.items():
            rows = [(x,) for x in xs if not (op in ("tan",) and abs(x) > 5)]
            exp = []
            for (x,) in rows:
                with np.errstate(all="ignore"):
                    v = f(x)
                exp.append(v if math.isnan(v) or math.isinf(v) else rnd(v))
            out.append(Group(f"aotc_{op}_{t}", t, (t,), rows, exp, "ulp:4"))
        pairs = [(cast(a), cast(b)) for a in (-2.0, -0.5, 0.0, 0.5, 2.0, 3.0, 10.0)
                 for b in (-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 7.0)]
        out.append(Group(f"aotc_pow_{t}", t, (t, t), pairs,
                         [rnd(_m(math.pow)(a, b)) if not (a == 0 and b < 0) else INF
                          for a, b in pairs], "ulp:4"))
        out.append(Group(f"aotc_atan2_{t}", t, (t, t), pairs,
                         [rnd(math.atan2(a, b)) for a, b in pairs], "ulp:4"))
    return out


# ------------------------------------------------------------------ conversions

def cvt_inputs(src: str) -> list:
    if src == "pred":
        return [0, 1]
    if src in INT_TYPES:
        return int_edge_values(src)
    vals = float_edge_values(src) + [-0.7, 0.7, 127.9, 128.0, -128.5, -129.0, 255.5, 256.0,
                                     65535.9, 65536.0, 2147483520.0, 2147483648.0, -2147483648.0,
                                     -2147483904.0, 4294967040.0, 4294967296.0,
                                     9.223371487098962e18, 9.223372036854775807e18,
                                     -9.223372036854775808e18, 1.8446742974197924e19,
                                     1.8446744073709552e19, 1e-40, 3.4e38, 1e39, 16777217.0]
    return [to_f32(v) if src == "f32" else v for v in vals]


def ref_cvt(x, src: str, dst: str):
    if dst == "pred":
        return int(x != 0 or (isinstance(x, float) and math.isnan(x)))
    if src == "pred":
        x = int(x != 0)
    if dst in INT_TYPES:
        if isinstance(x, float):
            if math.isnan(x):
                return 0
            if math.isinf(x):
                return int_max(dst) if x > 0 else int_min(dst)
            return min(max(math.trunc(x), int_min(dst)), int_max(dst))
        return wrap(x, dst)
    if dst == "f32":
        if isinstance(x, float):
            return to_f32(x)
        return to_f32(Fraction(x)) if x else 0.0
    return float(x) if isinstance(x, float) else to_f64(Fraction(x))


def cvt_groups() -> list[Group]:
    out = []
    for a in CVT_TYPES:
        xs = cvt_inputs(a)
        for b in CVT_TYPES:
            out.append(Group(f"aotc_cvt_{a}_{b}", b, (a,), [(x,) for x in xs],
                             [ref_cvt(x, a, b) for x in xs]))
    return out


def half_ref_bits(x: float, ebits: int, mbits: int) -> int | None:
    """Bits of round_to_format(x) in the half format; None for NaN."""
    if math.isnan(x):
        return None
    v = round_to_format(x, ebits, mbits)
    total = 1 + ebits + mbits
    sign = (1 << (total - 1)) if math.copysign(1, v) < 0 else 0
    v = abs(v)
    if math.isinf(v):
        return sign | (((1 << ebits) - 1) << mbits)
    bias = (1 << (ebits - 1)) - 1
    if v == 0:
        return sign
    q = Fraction(v)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    if e < 1 - bias:  # subnormal
        return sign | int(q / Fraction(2) ** (1 - bias - mbits))
    m = int(q / Fraction(2) ** (e - mbits)) - (1 << mbits)
    return sign | ((e + bias) << mbits) | m


HALF_EDGE_F32 = [0.0, -0.0, 1.0, -1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11, 1 + 3 * 2 ** -11,
                 65504.0, 65519.0, 65520.0, 65536.0, 1e10, -1e10, 3.3895313892515355e38,
                 3.4028234663852886e38, 6.103515625e-05, 6.0e-05, 5.960464477539063e-08,
                 2.9802322387695312e-08, 2.98023259e-08, 1e-7, -1e-7, 1e-40, -1e-40, 1e-45, INF, -INF,
                 NAN, -NAN, 0.333333343267, -2.7182817459106445]


def half_groups() -> list[Group]:
    """Half-precision conversions on edge values (the sanitizer driver sees
    these too; bulk comparisons are in the tests below)."""
    xs = [to_f32(v) for v in HALF_EDGE_F32]
    out = []
    for fn, e, m in (("aotc_f32_to_bf16", 8, 7), ("aotc_f32_to_f16", 5, 10)):
        exp = [half_ref_bits(x, e, m) for x in xs]
        rows = [(x,) for x, r in zip(xs, exp) if r is not None]
        out.append(Group(fn, "u16", ("f32",), rows, [r for r in exp if r is not None]))
    for fn, dt in (("aotc_round_bf16", ml_dtypes.bfloat16), ("aotc_round_f16", np.float16)):
        with np.errstate(over="ignore", invalid="ignore"):
            exp = [float(np.float32(x).astype(dt).astype(np.float32)) for x in xs]
        out.append(Group(fn, "f32", ("f32",), [(x,) for x in xs], exp))
    hs = [0, 1, 0x3FF, 0x400, 0x3C00, 0x7BFF, 0x7C00, 0x7E00, 0x7C01, 0x8000, 0x8001, 0xFC00, 0xFFFF,
          0x3F80, 0x7F80, 0x7FC0, 0x0080, 0x007F]
    out.append(Group("aotc_f16_to_f32", "f32", ("u16",), [(h,) for h in hs],
                     [float(np.uint16(h).view(np.float16).astype(np.float32)) for h in hs]))
    out.append(Group("aotc_bf16_to_f32", "f32", ("u16",), [(h,) for h in hs],
                     [bits_f32(h << 16) for h in hs]))
    ds = [x for x in xs] + [1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -11 + 2 ** -40, 1e300, 1e-300]
    for fn, e, m, pre in (("aotc_f64_to_bf16", 8, 7, to_f32), ("aotc_f64_to_f16", 5, 10, to_f32),
                          ("aotc_f64_to_bf16_exact", 8, 7, None),
                          ("aotc_f64_to_f16_exact", 5, 10, None)):
        exp = [half_ref_bits(pre(d) if pre else d, e, m) for d in ds]
        rows = [(d,) for d, r in zip(ds, exp) if r is not None]
        out.append(Group(fn, "u16", ("f64",), rows, [r for r in exp if r is not None]))
    return out


def math_groups() -> list[Group]:
    """All scalar helper cases (also run through the sanitizer driver)."""
    return (int_groups() + float_exact_groups() + float_libm_groups() + cvt_groups()
            + half_groups())

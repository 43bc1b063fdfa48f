/* aotc_narrow.h: the narrow float types (f8*, f4e2m1fn), stored one value a
 * byte, computed in float.  XLA:CPU computes on them by widening to f16 (to
 * f32 for f8e8m0fnu), doing the op there and narrowing after every op; these
 * helpers give its bits:
 *   aotc_<T>_to_f32(code)    decode (exact; every value is a normal f32 or 0,
 *                            except f8e8m0fnu's 2^-127, built from its bits; a
 *                            NaN is quiet, as XLA widens it, and keeps its code's
 *                            mantissa in its lowest bits, which rounding drops)
 *   aotc_f64_to_<T>(x)       convert from f64/f32 (one rounding, to nearest even)
 *   aotc_half_to_<T>(x)      convert from an f16 or bf16 value held in a float
 *                            (differs only in f8e5m2's NaN code: XLA's f16 path)
 *   aotc_round_<T>(x)        an f32 result rounded as XLA rounds an op's result:
 *                            to f16, then to T (for f8e8m0fnu straight from f32)
 *   aotc_cvt_<T>(x)          an f32/f64 value converted to T, kept as a float
 *   aotc_store_<T>(x)        the code to store: a value of T (from aotc_<T>_to_f32,
 *                            any NaN code included) gives its own code; any other
 *                            f32 is rounded as aotc_round_<T> does
 * Rounding works on integer bit patterns only, so FTZ/DAZ cannot change it.
 * Per type: IEEE-like types (f8e5m2, f8e4m3, f8e3m4) overflow to inf; "fn"
 * types have no inf (overflow and inf give NaN, S.1111.111); "fnuz" types have
 * one NaN, 0x80, and no -0; f4e2m1fn has no NaN or inf (saturates, NaN gives
 * 0x8 as XLA does); f8e8m0fnu is a bare power of two 2^(c-127), 0xff is NaN. */
#ifndef AOTC_NARROW_H
#define AOTC_NARROW_H
#ifndef AOTC_MATH_H
#include "aotc_math.h"
#endif

/* flavors */
#define AOTC__NR_IEEE 0u
#define AOTC__NR_FN 1u
#define AOTC__NR_FNUZ 2u
#define AOTC__NR_SAT 3u

/* The code of a narrow value from its sign, biased exponent and mantissa
 * fields; every call site passes constants, so this folds. */
AOTC_INLINE float aotc__narrow_decode(uint32_t c, unsigned eb, unsigned mb, unsigned bias,
                                      unsigned flavor) {
  const uint32_t sign = (c >> (eb + mb)) & 1u;
  const uint32_t e = (c >> mb) & ((1u << eb) - 1u);
  const uint32_t m = c & ((1u << mb) - 1u);
  const uint32_t s32 = sign << 31;
  if (flavor == AOTC__NR_FNUZ && c == 0x80u) return aotc_bitcast_u32_f32(0x7FC00000u);
  if (flavor == AOTC__NR_FN && e == (1u << eb) - 1u && m == (1u << mb) - 1u)
    return aotc_bitcast_u32_f32(s32 | 0x7FC00000u);
  if (flavor == AOTC__NR_IEEE && e == (1u << eb) - 1u) /* inf; a NaN quiet, its code in the low bits */
    return aotc_bitcast_u32_f32(s32 | (m ? 0x7FC00000u | m : 0x7F800000u));
  if (e == 0) {
    /* subnormal m * 2^(1 - bias - mb): (float)m is exact and normal; scale it
     * through the exponent field (the result is a normal f32) */
    return aotc_bitcast_u32_f32(m ? s32 | (aotc_bitcast_f32_u32((float)m) - ((bias + mb - 1u) << 23)) : s32);
  }
  return aotc_bitcast_u32_f32(s32 | ((e + 127u - bias) << 23) | (m << (23u - mb)));
}

/* x (f64 bits) rounded to nearest even into the narrow format; nan is the
 * code a NaN becomes (with the sign bit or-ed in for IEEE and fn types). */
AOTC_INLINE uint8_t aotc__narrow_encode(uint64_t x, unsigned eb, unsigned mb, unsigned bias,
                                        unsigned flavor, uint32_t nan) {
  const uint32_t sbit = 1u << (eb + mb);
  const uint32_t sign = (uint32_t)(x >> 63) ? sbit : 0u;
  const uint64_t a = x & 0x7FFFFFFFFFFFFFFFull;
  const uint32_t max_fn = sbit - 2u;                        /* S.1111.110 */
  const uint32_t inf = ((1u << eb) - 1u) << mb;
  const uint32_t maxmag = flavor == AOTC__NR_IEEE ? inf - 1u : flavor == AOTC__NR_FN ? max_fn : sbit - 1u;
  if (a > 0x7FF0000000000000ull) {
    if (flavor == AOTC__NR_IEEE || flavor == AOTC__NR_FN) return (uint8_t)(sign | nan);
    return (uint8_t)nan;
  }
  uint32_t mag;
  if (a == 0x7FF0000000000000ull) {
    mag = maxmag + 1u; /* treated as an overflow */
  } else {
    const int64_t e = (int64_t)(a >> 52) - 1023 + (int64_t)bias; /* biased narrow exponent */
    const uint64_t sig = (a & 0xFFFFFFFFFFFFFull) | (1ull << 52);
    if (a < (1ull << 52) || e < -(int64_t)mb - 2) {
      mag = 0; /* below half the smallest subnormal (f64 subnormals included) */
    } else if (e > (int64_t)(1u << eb) + 1) {
      mag = maxmag + 1u;
    } else {
      const unsigned sh = 52u - mb + (e >= 1 ? 0u : (unsigned)(1 - e));
      const uint64_t half = 1ull << (sh - 1u);
      const uint64_t rem = sig & ((1ull << sh) - 1u);
      uint64_t q = sig >> sh;
      q += (uint64_t)((rem > half) | ((rem == half) & (q & 1u)));
      /* a normal's q carries the implicit bit, which adds the 1 to e - 1;
       * a carry out of the mantissa moves into the exponent correctly */
      const uint64_t m64 = e >= 1 ? ((uint64_t)(e - 1) << mb) + q : q;
      mag = m64 > (uint64_t)maxmag ? maxmag + 1u : (uint32_t)m64;
    }
  }
  if (mag > maxmag) {
    if (flavor == AOTC__NR_IEEE) return (uint8_t)(sign | inf);
    if (flavor == AOTC__NR_FN) return (uint8_t)(sign | nan);
    if (flavor == AOTC__NR_SAT) return (uint8_t)(sign | maxmag);
    return (uint8_t)nan;
  }
  if (flavor == AOTC__NR_FNUZ && mag == 0) return 0; /* no -0 */
  return (uint8_t)(sign | mag);
}

/* One narrow float type: T its name, EB/MB/BIAS its fields, FL its flavor,
 * NAN the NaN code from f32/f64, HNAN the NaN code from an f16/bf16 value (when
 * the two differ, a NaN from a half also loses its sign: f8e5m2 gets 0x7f). */
#define AOTC__DEF_NARROW_TYPE(T, EB, MB, BIAS, FL, NAN, HNAN)                          \
  AOTC_INLINE float aotc_##T##_to_f32(uint8_t c) {                                     \
    return aotc__narrow_decode(c, EB, MB, BIAS, FL);                                   \
  }                                                                                    \
  AOTC_INLINE double aotc_##T##_to_f64(uint8_t c) { return (double)aotc_##T##_to_f32(c); } \
  AOTC_INLINE uint8_t aotc_f64_to_##T(double x) {                                      \
    return aotc__narrow_encode(aotc_bitcast_f64_u64(x), EB, MB, BIAS, FL, NAN);        \
  }                                                                                    \
  AOTC_INLINE uint8_t aotc_f32_to_##T(float x) { return aotc_f64_to_##T((double)x); }  \
  AOTC_INLINE uint8_t aotc_half_to_##T(float x) {                                      \
    const uint64_t b = aotc_bitcast_f64_u64((double)x);                                \
    const uint64_t keep = HNAN == NAN || (b << 1) <= 0xFFE0000000000000ull ? ~0ull : ~0ull >> 1; \
    return aotc__narrow_encode(b & keep, EB, MB, BIAS, FL, HNAN);                      \
  }                                                                                    \
  AOTC_INLINE float aotc_cvt_##T(double x) { return aotc_##T##_to_f32(aotc_f64_to_##T(x)); } \
  AOTC_INLINE float aotc_round_##T(float x) {                                          \
    return aotc_##T##_to_f32(aotc_half_to_##T(aotc_round_f16(x)));                     \
  }                                                                                    \
  AOTC_INLINE uint8_t aotc_store_##T(float x) {                                        \
    const uint32_t u = aotc_bitcast_f32_u32(x);                                        \
    const uint32_t pay = u & ((1u << MB) - 1u);                                        \
    if ((u & 0x7FFFFFFFu) <= 0x7F800000u) return aotc_half_to_##T(aotc_round_f16(x));  \
    if (FL != AOTC__NR_IEEE || pay == 0u) return aotc_half_to_##T(x);                  \
    return (uint8_t)(((u >> 31) << (EB + MB)) | (((1u << EB) - 1u) << MB) | pay);      \
  }

AOTC__DEF_NARROW_TYPE(f8e4m3fn, 4u, 3u, 7u, AOTC__NR_FN, 0x7Fu, 0x7Fu)
AOTC__DEF_NARROW_TYPE(f8e5m2, 5u, 2u, 15u, AOTC__NR_IEEE, 0x7Eu, 0x7Fu)
AOTC__DEF_NARROW_TYPE(f8e4m3fnuz, 4u, 3u, 8u, AOTC__NR_FNUZ, 0x80u, 0x80u)
AOTC__DEF_NARROW_TYPE(f8e5m2fnuz, 5u, 2u, 16u, AOTC__NR_FNUZ, 0x80u, 0x80u)
AOTC__DEF_NARROW_TYPE(f8e4m3b11fnuz, 4u, 3u, 11u, AOTC__NR_FNUZ, 0x80u, 0x80u)
AOTC__DEF_NARROW_TYPE(f8e4m3, 4u, 3u, 7u, AOTC__NR_IEEE, 0x7Cu, 0x7Cu)
AOTC__DEF_NARROW_TYPE(f8e3m4, 3u, 4u, 3u, AOTC__NR_IEEE, 0x78u, 0x78u)
AOTC__DEF_NARROW_TYPE(f4e2m1fn, 2u, 1u, 1u, AOTC__NR_SAT, 0x8u, 0x8u)

/* f8e8m0fnu: 2^(c - 127), c = 0 ... 254; 0xff is NaN.  No sign, no zero:
 * zero, negatives, inf and NaN give NaN.  Rounding as XLA:CPU does it, on
 * the exponent field: a mantissa of 1.5 or more rounds up (ties away), and
 * overflow gives NaN.  From f32, an f32 subnormal is 0 ... 2^-126 (code 0 or
 * 1, 2^-127 exact); from f64, anything below 2^-127 gives NaN and anything
 * above 2^-127 but below 2^-126 gives 2^-126. */
/* Branch-free, so no compiler can give code 0 a path of its own on which it folds the
 * f32 subnormal 2^-127 into a constant expression (folded without FTZ/DAZ, it would not read
 * as zero as it does at run time): code 0 is 0x00400000 and 0xff is 0x7FC00000. */
AOTC_INLINE float aotc_f8e8m0fnu_to_f32(uint8_t c) {
  return aotc_bitcast_u32_f32(((uint32_t)c << 23) | ((uint32_t)(c == 0u || c == 0xFFu) << 22));
}
AOTC_INLINE double aotc_f8e8m0fnu_to_f64(uint8_t c) { return (double)aotc_f8e8m0fnu_to_f32(c); }
AOTC_INLINE uint8_t aotc_f32_to_f8e8m0fnu(float x) {
  const uint32_t u = aotc_bitcast_f32_u32(x);
  if ((u >> 31) || u == 0u || u >= 0x7F800000u) return 0xFFu;
  const uint32_t e = u >> 23, m = u & 0x7FFFFFu;
  const uint32_t c = e + (e ? m >= 0x400000u : m > 0x400000u);
  return (uint8_t)(c > 254u ? 0xFFu : c);
}
AOTC_INLINE uint8_t aotc_f64_to_f8e8m0fnu(double x) {
  const uint64_t u = aotc_bitcast_f64_u64(x);
  if ((u >> 63) || u >= 0x7FF0000000000000ull || (u >> 52) < 896u) return 0xFFu;
  const uint64_t e = (u >> 52) - 896u, m = u & 0xFFFFFFFFFFFFFull;
  const uint64_t c = e + (e ? m >= (1ull << 51) : m != 0u);
  return (uint8_t)(c > 254u ? 0xFFu : c);
}
AOTC_INLINE uint8_t aotc_half_to_f8e8m0fnu(float x) { return aotc_f32_to_f8e8m0fnu(x); }
AOTC_INLINE float aotc_cvt_f8e8m0fnu(double x) { return aotc_f8e8m0fnu_to_f32(aotc_f64_to_f8e8m0fnu(x)); }
AOTC_INLINE float aotc_round_f8e8m0fnu(float x) { return aotc_f8e8m0fnu_to_f32(aotc_f32_to_f8e8m0fnu(x)); }
AOTC_INLINE uint8_t aotc_store_f8e8m0fnu(float x) { return aotc_f32_to_f8e8m0fnu(x); }

/* Sub-byte integers s2, u2, s4, u4: stored one a byte with the value in the
 * low bits (the upper bits zero, as ml_dtypes stores them), computed in
 * s8/u8.  aotc_wrap_<T> reduces an s8/u8 value to T's range modulo 2^width
 * (XLA narrows every op's result so); aotc_store_<T> keeps the low bits. */
#define AOTC__DEF_SUBBYTE(T, CT, W, SIGNED)                                              \
  AOTC_INLINE CT aotc_wrap_##T(CT x) {                                                 \
    const uint32_t m = (uint32_t)(uint8_t)x & ((1u << W) - 1u);                        \
    return (CT)(SIGNED ? (int32_t)(m ^ (1u << (W - 1u))) - (int32_t)(1u << (W - 1u)) : (int32_t)m); \
  }                                                                                    \
  AOTC_INLINE CT aotc_store_##T(CT x) { return (CT)((uint32_t)(uint8_t)x & ((1u << W) - 1u)); }
AOTC__DEF_SUBBYTE(s2, int8_t, 2u, 1)
AOTC__DEF_SUBBYTE(u2, uint8_t, 2u, 0)
AOTC__DEF_SUBBYTE(s4, int8_t, 4u, 1)
AOTC__DEF_SUBBYTE(u4, uint8_t, 4u, 0)

/* XLA:CPU's f16 (and f8) results where they differ from the f32 helpers:
 *  - maximum/minimum give a NaN first operand itself; else a NaN second
 *    operand with the and (max) or the or (min) of the operands' signs;
 *  - log and log1p give a negative NaN (but log passes a NaN through in the
 *    types with inf);
 *  - logistic of a half is 1 / (1 + exp(-x)) with each step rounded to f16, and
 *    so is expm1's expansion.
 * f8e8m0fnu's 2^-127 is an f32 subnormal: the FP environment flushes it in
 * arithmetic and in (double) casts, so its conversions use the bits. */
AOTC_INLINE float aotc_max_xla_f32(float x, float y) {
  const uint32_t s = aotc_bitcast_f32_u32(x) & aotc_bitcast_f32_u32(y) & 0x80000000u;
  if (x != x) return x;
  return y != y ? aotc_bitcast_u32_f32(s | (aotc_bitcast_f32_u32(y) & 0x7FFFFFFFu)) : aotc_max_f32(x, y);
}
AOTC_INLINE float aotc_min_xla_f32(float x, float y) {
  const uint32_t s = (aotc_bitcast_f32_u32(x) | aotc_bitcast_f32_u32(y)) & 0x80000000u;
  if (x != x) return x;
  return y != y ? aotc_bitcast_u32_f32(s | (aotc_bitcast_f32_u32(y) & 0x7FFFFFFFu)) : aotc_min_f32(x, y);
}
/* a NaN result r = log(x) or log1p(x) as the narrow types get it: negative,
 * except that log of the IEEE-like types (keep = 1) passes a NaN x through */
AOTC_INLINE float aotc_log_nan_f32(float x, float r, int keep) {
  if (keep && x != x) return x;
  return r != r ? aotc_bitcast_u32_f32(0xFFC00000u) : r;
}
AOTC_INLINE float aotc_logistic_f16(float x) {
  return aotc_round_f16(1.0f / aotc_round_f16(1.0f + aotc_round_f16(aotc_exp_f32(-x))));
}
/* expm1 of a half as XLA's elemental emitter expands it, each step rounded to f16
 * (exp and tanh in f32): e - 1 above 1/2 in magnitude, tanh(x/2) (e + 1) below */
AOTC_INLINE float aotc_expm1_f16(float x) {
  const float h = aotc_round_f16(x * 0.5f);
  const float e = aotc_round_f16(aotc_exp_f32(x));
  const float r = aotc_round_f16(aotc_round_f16(aotc_tanh_f32(h)) * aotc_round_f16(e + 1.0f));
  if (h == 0.0f) return x;
  return fabsf(x) > 0.5f ? aotc_round_f16(e - 1.0f) : r;
}
/* the quiet NaN XLA gives when a narrow value is widened (sign kept) */
AOTC_INLINE float aotc_canon_nan_f32(float x) {
  const uint32_t u = aotc_bitcast_f32_u32(x);
  return (u & 0x7FFFFFFFu) > 0x7F800000u ? aotc_bitcast_u32_f32((u & 0x80000000u) | 0x7FC00000u) : x;
}
AOTC_INLINE uint8_t aotc_is_subnormal_f32(float x) {
  const uint32_t a = aotc_bitcast_f32_u32(x) & 0x7FFFFFFFu;
  return (uint8_t)(a != 0u && a < 0x00800000u);
}
AOTC_INLINE double aotc_f32_to_f64_bits(float x) {
  const uint32_t u = aotc_bitcast_f32_u32(x);
  const double sub = (double)(u & 0x7FFFFFu) * 1.401298464324817e-45; /* exact: 2^-149 (no hex float: C++ before 17) */
  const double mag = aotc_is_subnormal_f32(x) ? sub : (double)aotc_bitcast_u32_f32(u & 0x7FFFFFFFu);
  return (u >> 31) ? -mag : mag;
}
/* f4e2m1fn to an integer: XLA:CPU saturates its largest magnitude, +-6, as if
 * it were +-inf */
AOTC_INLINE float aotc_f4e2m1fn_int_edge(float x) {
  return x == 6.0f ? (float)INFINITY : x == -6.0f ? -(float)INFINITY : x;
}

#endif /* AOTC_NARROW_H */

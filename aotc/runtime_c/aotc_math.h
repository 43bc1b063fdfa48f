/* aotc_math.h -- scalar semantics of XLA:CPU operations, as C helpers.
 *
 * Every elementwise operation whose XLA meaning differs from the bare C
 * operator (integer overflow, division by zero, over-wide shifts, NaN in
 * max/min, saturating float->int, half-precision rounding, ...) lives here as
 * a small static inline function, so every emitter -- and the vector body and
 * scalar tail of one loop -- computes exactly the same thing.  The rules are
 * those of docs/xla-semantics.md (observed on XLA:CPU).  No state, no
 * allocation; the only side effect in this file is the floating-point
 * environment switch at the end.
 *
 * Naming: aotc_<op>_<T> with T in
 *   s8 s16 s32 s64 (int8_t..int64_t)  u8 u16 u32 u64  f32 (float)  f64 (double)
 *   pred (uint8_t holding 0 or 1; conversions only)
 * and aotc_cvt_<FROM>_<TO> for conversions.  Half types (bf16, f16) are stored
 * as uint16_t bit patterns and computed in float: see "half precision".
 *
 * Helpers are written without undefined or implementation-defined behaviour:
 * integer arithmetic goes through unsigned types, unsigned -> signed goes
 * through aotc__u2s_N (an arithmetic identity compilers reduce to nothing),
 * and every shift amount is masked into range before use.
 */
#ifndef AOTC_MATH_H
#define AOTC_MATH_H

#ifndef AOTC_RT_H
#include "aotc_rt.h"
#endif

#include <math.h>
#include <string.h>

#if defined(__x86_64__) || defined(_M_X64) || (defined(__i386__) && defined(__SSE__))
#include <xmmintrin.h>
#define AOTC__FPENV_X86 1
#elif defined(__aarch64__)
#define AOTC__FPENV_AARCH64 1
#elif defined(__arm__) && defined(__ARM_FP) && (defined(__GNUC__) || defined(__clang__))
#define AOTC__FPENV_ARM32 1
#endif

/* ======================================================================== */
/* Bit reinterpretation (also bitcast-convert between same-width types).    */
/* ======================================================================== */

AOTC_INLINE uint32_t aotc_bitcast_f32_u32(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
AOTC_INLINE float aotc_bitcast_u32_f32(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}
AOTC_INLINE uint64_t aotc_bitcast_f64_u64(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
AOTC_INLINE double aotc_bitcast_u64_f64(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* Two's complement reinterpretation of an unsigned value as signed.  For
 * u < 2^(N-1) this is u; otherwise u - 2^N = -(~u) - 1, computed without any
 * out-of-range conversion.  gcc and clang compile it to nothing. */
#define AOTC__DEF_U2S(BITS)                                                   \
  AOTC_INLINE int##BITS##_t aotc__u2s_##BITS(uint##BITS##_t u) {              \
    return u <= (uint##BITS##_t)INT##BITS##_MAX                               \
               ? (int##BITS##_t)u                                             \
               : (int##BITS##_t)(-(int##BITS##_t)(uint##BITS##_t)(~u) - 1);   \
  }
AOTC__DEF_U2S(8)
AOTC__DEF_U2S(16)
AOTC__DEF_U2S(32)
AOTC__DEF_U2S(64)

#define AOTC__CAT_(a, b) a##b
#define AOTC__CAT(a, b) AOTC__CAT_(a, b)

/* ======================================================================== */
/* Integers: two's complement, wrapping.                                    */
/* ======================================================================== */
/* Per type: name, C type, same-width unsigned type, "wide" unsigned type the
 * arithmetic is done in (never promoted to signed int), bit width, min, max. */
#define AOTC__SINT_TYPES(X)                                     \
  X(s8, int8_t, uint8_t, uint32_t, 8, INT8_MIN, INT8_MAX)       \
  X(s16, int16_t, uint16_t, uint32_t, 16, INT16_MIN, INT16_MAX) \
  X(s32, int32_t, uint32_t, uint32_t, 32, INT32_MIN, INT32_MAX) \
  X(s64, int64_t, uint64_t, uint64_t, 64, INT64_MIN, INT64_MAX)
#define AOTC__UINT_TYPES(X)                        \
  X(u8, uint8_t, int8_t, uint32_t, 8, UINT8_MAX)     \
  X(u16, uint16_t, int16_t, uint32_t, 16, UINT16_MAX) \
  X(u32, uint32_t, int32_t, uint32_t, 32, UINT32_MAX) \
  X(u64, uint64_t, int64_t, uint64_t, 64, UINT64_MAX)

/* popcount / count-leading-zeros of the low BITS bits of an unsigned value */
#if defined(__GNUC__) || defined(__clang__)
AOTC_INLINE uint32_t aotc__popcnt32(uint32_t x) { return (uint32_t)__builtin_popcount(x); }
AOTC_INLINE uint32_t aotc__popcnt64(uint64_t x) { return (uint32_t)__builtin_popcountll(x); }
AOTC_INLINE uint32_t aotc__clz32(uint32_t x) { return x ? (uint32_t)__builtin_clz(x) : 32u; }
AOTC_INLINE uint32_t aotc__clz64(uint64_t x) { return x ? (uint32_t)__builtin_clzll(x) : 64u; }
#else
AOTC_INLINE uint32_t aotc__popcnt64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555u);
  x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
  return (uint32_t)((x * 0x0101010101010101u) >> 56);
}
AOTC_INLINE uint32_t aotc__popcnt32(uint32_t x) { return aotc__popcnt64(x); }
AOTC_INLINE uint32_t aotc__clz64(uint64_t x) {
  uint32_t n = 0;
  if (x == 0) return 64u;
  while (!(x & 0x8000000000000000u)) {
    x <<= 1;
    ++n;
  }
  return n;
}
AOTC_INLINE uint32_t aotc__clz32(uint32_t x) { return aotc__clz64(x) - 32u; }
#endif
#define AOTC__POPCNT_8(x) aotc__popcnt32(x)
#define AOTC__POPCNT_16(x) aotc__popcnt32(x)
#define AOTC__POPCNT_32(x) aotc__popcnt32(x)
#define AOTC__POPCNT_64(x) aotc__popcnt64(x)
#define AOTC__CLZ_8(x) (aotc__clz32(x) - 24u)
#define AOTC__CLZ_16(x) (aotc__clz32(x) - 16u)
#define AOTC__CLZ_32(x) aotc__clz32(x)
#define AOTC__CLZ_64(x) aotc__clz64(x)

/* Operations whose definition is the same for signed and unsigned types
 * (bit patterns in, bit pattern out).  FROMU converts the unsigned result
 * back to T. */
#define AOTC__DEF_INT_COMMON(N, T, U, W, BITS, FROMU)                                     \
  AOTC_INLINE T aotc_add_##N(T a, T b) { return FROMU((U)((W)(U)a + (W)(U)b)); }          \
  AOTC_INLINE T aotc_sub_##N(T a, T b) { return FROMU((U)((W)(U)a - (W)(U)b)); }          \
  AOTC_INLINE T aotc_mul_##N(T a, T b) { return FROMU((U)((W)(U)a * (W)(U)b)); }          \
  AOTC_INLINE T aotc_neg_##N(T a) { return FROMU((U)((W)0 - (W)(U)a)); }                  \
  AOTC_INLINE T aotc_not_##N(T a) { return FROMU((U)~(W)(U)a); }                          \
  AOTC_INLINE T aotc_and_##N(T a, T b) { return FROMU((U)((U)a & (U)b)); }                \
  AOTC_INLINE T aotc_or_##N(T a, T b) { return FROMU((U)((U)a | (U)b)); }                 \
  AOTC_INLINE T aotc_xor_##N(T a, T b) { return FROMU((U)((U)a ^ (U)b)); }                \
  AOTC_INLINE T aotc_max_##N(T a, T b) { return a > b ? a : b; }                          \
  AOTC_INLINE T aotc_min_##N(T a, T b) { return a < b ? a : b; }                          \
  /* minimum(maximum(lo, x), hi): the operand order decides which NaN XLA:CPU gives */  \
  AOTC_INLINE T aotc_clamp_##N(T lo, T x, T hi) { return aotc_min_##N(aotc_max_##N(lo, x), hi); } \
  /* shift amounts are read as unsigned; >= BITS gives 0 */                               \
  AOTC_INLINE T aotc_shl_##N(T a, T b) {                                                  \
    U n = (U)b;                                                                           \
    U r = (U)((W)(U)a << (n & (BITS - 1)));                                               \
    return FROMU(n < BITS ? r : (U)0);                                                    \
  }                                                                                       \
  AOTC_INLINE T aotc_shr_logical_##N(T a, T b) {                                          \
    U n = (U)b;                                                                           \
    U r = (U)((W)(U)a >> (n & (BITS - 1)));                                               \
    return FROMU(n < BITS ? r : (U)0);                                                    \
  }                                                                                       \
  AOTC_INLINE T aotc_popcnt_##N(T a) { return (T)AOTC__POPCNT_##BITS((U)a); }             \
  AOTC_INLINE T aotc_clz_##N(T a) { return (T)AOTC__CLZ_##BITS((U)a); }

#define AOTC__IDENT(x) (x)

/* signed: shr_arith fills with the sign bit; div/rem follow XLA for x/0 and
 * INT_MIN/-1; pow is XLA's square-and-multiply (see aotc_pow_s32 below). */
#define AOTC__DEF_SINT(N, T, U, W, BITS, MIN, MAX)                                        \
  AOTC__DEF_INT_COMMON(N, T, U, W, BITS, aotc__u2s_##BITS)                                \
  AOTC_INLINE T aotc_abs_##N(T a) { return a < 0 ? aotc_neg_##N(a) : a; }                 \
  AOTC_INLINE T aotc_sign_##N(T a) { return (T)((a > 0) - (a < 0)); }                     \
  AOTC_INLINE T aotc_shr_arith_##N(T a, T b) {                                            \
    U n = (U)b;                                                                           \
    U s = n < BITS ? n : (U)(BITS - 1);                                                   \
    /* ~a is non-negative when a is negative: no negative operand is shifted */           \
    return a < 0 ? (T) ~(T)(~a >> s) : (T)(a >> s);                                       \
  }                                                                                       \
  AOTC_INLINE T aotc_div_##N(T a, T b) {                                                  \
    /* a safe divisor first, so both outcomes can be computed and selected */           \
    T sb = (b == 0 || (a == MIN && b == -1)) ? (T)1 : b;                                  \
    T q = (T)(a / sb); /* INT_MIN / 1 = INT_MIN is the XLA result */                      \
    return b == 0 ? (T)-1 : q;                                                            \
  }                                                                                       \
  AOTC_INLINE T aotc_rem_##N(T a, T b) {                                                  \
    T sb = (b == 0 || (a == MIN && b == -1)) ? (T)1 : b;                                  \
    T r = (T)(a % sb); /* INT_MIN % 1 = 0 is the XLA result */                            \
    return b == 0 ? a : r;                                                                \
  }                                                                                       \
  AOTC_INLINE T aotc_pow_##N(T base, T exponent) {                                        \
    U acc = 1, b = (U)base, e = (U)exponent;                                              \
    for (int i = 0; i < 6; ++i) {                                                         \
      acc = (e & 1u) ? (U)((W)acc * (W)b) : acc;                                          \
      b = (U)((W)b * (W)b);                                                               \
      e = (U)(e >> 1);                                                                    \
    }                                                                                     \
    if (exponent < 0) {                                                                   \
      T odd = (T)((U)exponent & 1u);                                                      \
      return base == 1 ? (T)1 : base == -1 ? (odd ? (T)-1 : (T)1) : (T)0;                \
    }                                                                                     \
    return aotc__u2s_##BITS(acc);                                                         \
  }
AOTC__SINT_TYPES(AOTC__DEF_SINT)

/* unsigned: XLA's integer ops are sign-agnostic except where noted, so
 * shr_arith and pow use the signed view of the same bits. */
#define AOTC__DEF_UINT(N, T, S, W, BITS, MAX)                                             \
  AOTC__DEF_INT_COMMON(N, T, T, W, BITS, AOTC__IDENT)                                     \
  AOTC_INLINE T aotc_abs_##N(T a) { return a; }                                           \
  AOTC_INLINE T aotc_sign_##N(T a) { return (T)(a != 0); }                                \
  AOTC_INLINE T aotc_shr_arith_##N(T a, T b) {                                            \
    return (T)aotc_shr_arith_s##BITS(aotc__u2s_##BITS(a), aotc__u2s_##BITS(b));           \
  }                                                                                       \
  AOTC_INLINE T aotc_div_##N(T a, T b) {                                                  \
    T q = (T)(a / (b == 0 ? (T)1 : b));                                                   \
    return b == 0 ? (T)MAX : q;                                                           \
  }                                                                                       \
  AOTC_INLINE T aotc_rem_##N(T a, T b) {                                                  \
    T r = (T)(a % (b == 0 ? (T)1 : b));                                                   \
    return b == 0 ? a : r;                                                                \
  }                                                                                       \
  AOTC_INLINE T aotc_pow_##N(T base, T exponent) {                                        \
    return (T)aotc_pow_s##BITS(aotc__u2s_##BITS(base), aotc__u2s_##BITS(exponent));       \
  }
AOTC__UINT_TYPES(AOTC__DEF_UINT)

/* Integer power, as XLA:CPU computes it (all widths, signed and unsigned):
 *   - square-and-multiply over the LOW SIX BITS of the exponent only, with
 *     wrapping multiplication: pow(3, 64) = 1, pow(5, 65) = 5;
 *   - exponent negative (its top bit set, also for unsigned types): 1 if the
 *     base is 1; +-1 by parity if the base is -1 (all ones); otherwise 0. */

/* ======================================================================== */
/* Floating point (f32 = float, f64 = double).                              */
/* ======================================================================== */
/* SFX is the libm suffix (f or nothing); I/UI are the same-width integers. */
/* ------------------------------------------------------------------------ */
/* exp, log, tanh and erf in f32 without libm, as XLA:CPU computes them: the  */
/* same polynomials, the same operations in the same order, and fused        */
/* multiply-adds (fmaf) exactly where XLA's code generator fuses, so results */
/* are XLA's bits.  fmaf is exactly rounded on every target (one instruction */
/* with FMA hardware, libm otherwise), so the vector forms in aotc_simd.h,   */
/* written step for step on the same operations, give the same bits too.     */
/* Branch-free, so loops over them vectorise.                                */
/* ------------------------------------------------------------------------ */
/* the smallest normal numbers: below them, values are flushed to zero */
#define AOTC__MINNORM_f32 1.17549435e-38f
#define AOTC__MINNORM_f64 2.2250738585072014e-308
#define AOTC__EXP_HI_f32 88.72283935546875f
#define AOTC__EXP_LO_f32 -87.33654022216797f
/* e^x = 2^n * e^r: n = floor(x log2(e) + 1/2), at most 127 (so 2^n is built
 * in the exponent bits; e^r then carries the last factor below the overflow
 * bound), r = x - n ln2 in two fused steps (Cephes' split of ln 2), e^r from
 * Cephes' degree-6 polynomial. */
AOTC_INLINE float aotc__exp_f32(float x) {
  const float hi = AOTC__EXP_HI_f32, lo = AOTC__EXP_LO_f32;
  float xc = x > hi ? hi : (x < lo ? lo : (x == x ? x : 0.0f)); /* NaN: any finite n, result NaN below */
  float n = floorf(fmaf(xc, 1.44269504088896341f, 0.5f));
  n = n > 127.0f ? 127.0f : n;
  float r = fmaf(n, -0.693359375f, xc);
  r = fmaf(n, 2.12194440e-4f, r);
  float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = fmaf(p, r, 1.3981999507e-3f);
  p = fmaf(p, r, 8.3334519073e-3f);
  p = fmaf(p, r, 4.1665795894e-2f);
  p = fmaf(p, r, 1.6666665459e-1f);
  p = fmaf(p, r, 5.0000001201e-1f);
  p = fmaf(p, r2, r) + 1.0f;
  float scale = aotc_bitcast_u32_f32((uint32_t)((int32_t)n + 127) << 23);
  float y = p * scale;
  y = x > hi ? (float)INFINITY : y;
  y = x < lo ? 0.0f : y;
  return x != x ? x + x : y; /* a NaN comes back quiet, as from XLA's arithmetic */
}
/* e^x in f64 as XLA:CPU computes it (its own xla.exp.f64, not libm): x clamped to
 * [lo, hi], n = floor(x log2(e) + 1/2), g = x - n ln2 in two fused steps (ln2 split as
 * 0.693145751953125 + 1.42860682030941723212e-6), e^g = 1 + 2 P(g) / (Q(g) - P(g)) with
 * Cephes' Pade polynomials in g^2 (fused from the highest degree), then scaled by 2^n
 * as Eigen's ldexp does: by 2^b three times (b = floor(n / 4)), then by 2^(n - 3b).
 * Below lo 0, above hi inf, a NaN quiet. */
#define AOTC__EXP_HI_f64 709.782712893384
#define AOTC__EXP_LO_f64 -708.3964185322641
AOTC_INLINE double aotc__exp_f64(double x) {
  const double hi = AOTC__EXP_HI_f64, lo = AOTC__EXP_LO_f64;
  const double xc = x > hi ? hi : (x < lo ? lo : (x == x ? x : 0.0));
  const double n = floor(fma(xc, 1.4426950408889634073599, 0.5));
  double g = fma(-n, 0.693145751953125, xc);
  g = fma(-n, 1.42860682030941723212e-6, g);
  const double g2 = g * g;
  const double p = fma(fma(1.26177193074810590878e-4, g2, 3.02994407707441961300e-2), g2,
                       9.99999999999999999910e-1) * g;
  const double q = fma(fma(fma(3.00198505138664455042e-6, g2, 2.52448340349684104192e-3), g2,
                           2.27265548208155028766e-1), g2, 2.00000000000000000009e0);
  const double e = p / (q - p) * 2.0 + 1.0;
  const int64_t k = (int64_t)n; /* |n| <= 1025: exact */
  const int64_t b = k >= 0 ? k / 4 : -((3 - k) / 4); /* floor(k / 4) without shifting a negative */
  const double c = aotc_bitcast_u64_f64((uint64_t)(b + 1023) << 52);
  const double c2 = aotc_bitcast_u64_f64((uint64_t)(k - 3 * b + 1023) << 52);
  double y = e * c * c * c * c2;
  y = x < lo ? 0.0 : y;
  y = x > hi ? (double)INFINITY : y;
  return x != x ? x + x : y;
}

/* tanh: an odd rational polynomial (Eigen's) on x clamped to
 * +-7.99881172180175781, the smallest bound where it reaches 1; x itself when
 * |x| < 0.0004. */
#define AOTC__TANH_BOUND_f32 7.99881172180175781f
AOTC_INLINE float aotc__tanh_f32(float x) {
  const float bound = AOTC__TANH_BOUND_f32;
  float xc = x > bound ? bound : (x < -bound ? -bound : x);
  float x2 = xc * xc;
  float p = -2.76076847742355e-16f;
  p = fmaf(p, x2, 2.00018790482477e-13f);
  p = fmaf(p, x2, -8.60467152213735e-11f);
  p = fmaf(p, x2, 5.12229709037114e-08f);
  p = fmaf(p, x2, 1.48572235717979e-05f);
  p = fmaf(p, x2, 6.37261928875436e-04f);
  p = fmaf(p, x2, 4.89352455891786e-03f);
  p = p * xc;
  float q = 1.19825839466702e-06f;
  q = fmaf(q, x2, 1.18534705686654e-04f);
  q = fmaf(q, x2, 2.26843463243900e-03f);
  q = fmaf(q, x2, 4.89352518554385e-03f);
  float y = p / q;
  int keep = (x < 0.0004f) & (x > -0.0004f); /* tiny: tanh(x) = x; NaN: y is NaN too */
  return keep ? x : y;
}
/* tanh in f64 as XLA:CPU computes it (its own xla.tanh.f64, after Eigen's ptanh_double):
 * x clamped to +-17.714196154005176 (the bound Eigen gives for a build without FMA, which
 * XLA always takes), then x P(x^2) / Q(x^2), Eigen's degree-19/18 odd/even rational
 * approximation, both polynomials fused from the highest degree (XLA allows contraction,
 * which fuses them on FMA hardware); +-1 from |x| >= 20.  tanh(+-0) = +-0; a NaN stays NaN. */
#define AOTC__TANH_BOUND_f64 17.714196154005176
AOTC_INLINE double aotc__tanh_f64(double x) {
  const double bound = AOTC__TANH_BOUND_f64;
  const double xc = x > bound ? bound : (x < -bound ? -bound : x);
  const double x2 = xc * xc;
  double p = 2.6158007860482230e-23;
  p = fma(x2, p, 7.6534862268749319e-19);
  p = fma(x2, p, 3.1309488231386680e-15);
  p = fma(x2, p, 4.2303918148209176e-12);
  p = fma(x2, p, 2.4618379131293676e-09);
  p = fma(x2, p, 6.8644367682497074e-07);
  p = fma(x2, p, 9.3839087674268880e-05);
  p = fma(x2, p, 5.9809711724441161e-03);
  p = fma(x2, p, 1.5184719640284322e-01);
  p = fma(x2, p, 1.0);
  double q = 6.463747022670968018e-21;
  q = fma(x2, q, 5.782506856739003571e-17);
  q = fma(x2, q, 1.293019623712687916e-13);
  q = fma(x2, q, 1.123643448069621992e-10);
  q = fma(x2, q, 4.492975677839633985e-08);
  q = fma(x2, q, 8.785185266237658698e-06);
  q = fma(x2, q, 8.295161192716231542e-04);
  q = fma(x2, q, 3.437448108450402717e-02);
  q = fma(x2, q, 4.851805297361760360e-01);
  q = fma(x2, q, 1.0);
  const double y = xc * p / q;
  /* copysign(1, x) */
  const double one = aotc_bitcast_u64_f64(0x3FF0000000000000u | (aotc_bitcast_f64_u64(x) & 0x8000000000000000u));
  return fabs(x) >= 20.0 ? one : y;
}

/* log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) from Cephes' degree-8
 * polynomial in m - 1, plus e ln2 in Cephes' two parts.  log(0) = -inf,
 * log(x < 0) = NaN, log(inf) = inf, NaN stays NaN. */
#define AOTC__SQRT_HALF_f32 0.707106781186547524f
AOTC_INLINE float aotc__log_f32(float x) {
  float xm = x < AOTC__MINNORM_f32 ? AOTC__MINNORM_f32 : x; /* zero, negatives, NaN: fixed below */
  uint32_t u = aotc_bitcast_f32_u32(xm);
  float e = (float)((int32_t)(u >> 23) - 126);
  float m = aotc_bitcast_u32_f32((u & 0x807fffffu) | 0x3f000000u); /* in [1/2, 1) */
  float below = m < AOTC__SQRT_HALF_f32 ? m : 0.0f;
  e = m < AOTC__SQRT_HALF_f32 ? e - 1.0f : e;
  float t = (m - 1.0f) + below; /* in [sqrt(1/2) - 1, sqrt(2) - 1) */
  float t2 = t * t;
  float t3 = t2 * t;
  float y = fmaf(7.0376836292e-2f, t, -1.1514610310e-1f);
  float y1 = fmaf(-1.2420140846e-1f, t, 1.4249322787e-1f);
  float y2 = fmaf(2.0000714765e-1f, t, -2.4999993993e-1f);
  y = fmaf(y, t, 1.1676998740e-1f);
  y1 = fmaf(y1, t, -1.6668057665e-1f);
  y2 = fmaf(y2, t, 3.3333331174e-1f);
  y = fmaf(y, t3, y1);
  y = fmaf(y, t3, y2);
  y = fmaf(y, t3, -2.12194440e-4f * e);
  float r = fmaf(-0.5f, t2, t) + y;
  r = fmaf(0.693359375f, e, r);
  r = x == (float)INFINITY ? x : r;
  r = x == 0.0f ? -(float)INFINITY : r;
  /* a NaN or negative x: XLA's polynomial ors in an all-ones mask */
  return x < 0.0f || x != x ? aotc_bitcast_u32_f32(0xFFFFFFFFu) : r;
}
/* f64 log is libm's on XLA:CPU, but an invalid x (negative, -inf) gives the positive
 * quiet NaN, where glibc's log gives the negative one */
AOTC_INLINE double aotc__log_f64(double x) {
  return x < 0.0 ? aotc_bitcast_u64_f64(0x7FF8000000000000u) : log(x);
}

/* erf: x P(x^2) / Q(x^2) (Eigen's rational interpolant, degrees 9 and 12),
 * and +-1 from |x| >= 3.832506856900711, where it rounds to 1. */
#define AOTC__ERF_ONE_f32 3.832506856900711f
AOTC_INLINE float aotc__erf_f32(float x) {
  float x2 = x * x;
  float p = fmaf(x2, 0.00022905065861350646f, 0.0034082910107109506f);
  p = fmaf(x2, p, 0.050955695062380861f);
  p = fmaf(x2, p, 0.18520832239976145f);
  p = fmaf(x2, p, 1.128379143519084f);
  p = x * p;
  float q = fmaf(x2, -1.1791602954361697e-7f, 0.000023547966471313185f);
  q = fmaf(x2, q, 0.0010179625278914885f);
  q = fmaf(x2, q, 0.014070470171167667f);
  q = fmaf(x2, q, 0.11098505178285362f);
  q = fmaf(x2, q, 0.49746925110067538f);
  q = fmaf(x2, q, 1.0f);
  float one = aotc_bitcast_u32_f32(0x3f800000u | (aotc_bitcast_f32_u32(x) & 0x80000000u)); /* copysign(1, x) */
  return AOTC__ERF_ONE_f32 <= fabsf(x) ? one : p / q;
}
AOTC_INLINE double aotc__erf_f64(double x) { return erf(x); }

/* log1p: below sqrt(2) - 1 in magnitude, x - x^2/2 + x^3 P(x)/Q(x) (Cephes' rational
 * approximation, both polynomials evaluated with fused multiply-adds from the highest
 * degree, as XLA's elemental emitter does), log(1 + x) elsewhere.  Same steps in f64,
 * where XLA's log is libm's. */
#define AOTC__LOG1P_BODY(T, FMA, LOG, ABS)                                                   \
  T x2 = x * x;                                                                              \
  T q = FMA(FMA(FMA(FMA(FMA(FMA((T)1, x, (T)1.5062909083469192043167E1), x,                  \
      (T)8.3047565967967209469434E1), x, (T)2.2176239823732856465394E2), x,                   \
      (T)3.0909872225312059774938E2), x, (T)2.1642788614495947685003E2), x,                   \
      (T)6.0118660497603843919306E1);                                                         \
  T p = FMA(FMA(FMA(FMA(FMA(FMA((T)4.5270000862445199635215E-5, x,                           \
      (T)4.9854102823193375972212E-1), x, (T)6.5787325942061044846969E0), x,                  \
      (T)2.9911919328553073277375E1), x, (T)6.0949667980987787057556E1), x,                   \
      (T)5.7112963590585538103336E1), x, (T)2.0039553499201281259648E1);                      \
  T small = x + ((T)-0.5 * x2 + (x * x2) * (p / q));                                         \
  T large = LOG(x + (T)1);                                                                    \
  return ABS(x) < (T)0.41421356237309504880 ? small : large;
AOTC_INLINE float aotc__log1p_f32(float x) { AOTC__LOG1P_BODY(float, fmaf, aotc__log_f32, fabsf) }
AOTC_INLINE double aotc__log1p_f64(double x) { AOTC__LOG1P_BODY(double, fma, aotc__log_f64, fabs) }

/* expm1: e^x - 1 above 1/2 in magnitude, tanh(x/2) (e^x + 1) below, and x where x/2 is
 * zero, as XLA's elemental emitter computes it, through XLA's own exp and tanh (f64 too). */
#define AOTC__EXPM1_BODY(T, EXP, TANH, ABS)                                                  \
  T h = x * (T)0.5;                                                                          \
  T e = EXP(x);                                                                              \
  T r = TANH(h) * (e + (T)1);                                                                \
  r = ABS(x) > (T)0.5 ? e - (T)1 : r;                                                        \
  return h == (T)0 ? x : r;
AOTC_INLINE float aotc__expm1_f32(float x) { AOTC__EXPM1_BODY(float, aotc__exp_f32, aotc__tanh_f32, fabsf) }
AOTC_INLINE double aotc__expm1_f64(double x) { AOTC__EXPM1_BODY(double, aotc__exp_f64, aotc__tanh_f64, fabs) }

/* rsqrt as XLA:CPU computes it.  On an x86 host with AVX, f32 rsqrt is the hardware
 * estimate (rsqrtss / vrsqrtps: the same table on one CPU, not the same on every CPU)
 * refined by Newton-Raphson steps g' = fma(g * -1/2, fma(x g, g, -1), g): one step on AMD
 * processors, two on others (XLA's xla.rsqrt intrinsic; one step measured on AMD EPYC
 * bit for bit, two taken from its source).  Zero, a subnormal (read as zero) and +inf
 * keep the estimate (+-inf, 0); a NaN or a negative x gives the NaN the steps make.
 * On a processor without AVX, elsewhere and in f64, XLA takes 1 / sqrt(x), and so does
 * aotc.  The choice is made at run time from the processor, never from the flags the
 * code is compiled with: rsqrtss is SSE, so a build for the generic x86-64 target gives
 * the bits of an AVX2 or AVX-512 build on the same processor. */
#if defined(AOTC__FPENV_X86) && (defined(__GNUC__) || defined(__clang__))
#define AOTC__RSQRT_HW 1
/* 0: 1 / sqrt(x); else the number of Newton steps.  The compilers' CPU model is filled
 * in once, before main, by their runtime library. */
AOTC_INLINE int aotc__rsqrt_steps(void) {
  return !__builtin_cpu_supports("avx") ? 0 : __builtin_cpu_is("amd") ? 1 : 2;
}
AOTC_INLINE float aotc__rsqrt_step_f32(float x, float g) {
  return fmaf(g * -0.5f, fmaf(x * g, g, -1.0f), g);
}
AOTC_INLINE float aotc__rsqrt_f32(float x) {
  const int steps = aotc__rsqrt_steps();
  x = fabsf(x) < AOTC__MINNORM_f32 ? x * 0.0f : x; /* DAZ, whatever the FP environment */
  const float g = _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(x)));
  const float g1 = aotc__rsqrt_step_f32(x, g);
  const float r = steps == 1 ? g1 : aotc__rsqrt_step_f32(x, g1);
  const float hw = x < AOTC__MINNORM_f32 || x == (float)INFINITY ? g : r;
  return steps == 0 ? 1.0f / sqrtf(x) : hw;
}
#else
AOTC_INLINE float aotc__rsqrt_f32(float x) { return 1.0f / sqrtf(x); }
#endif
AOTC_INLINE double aotc__rsqrt_f64(double x) { return 1.0 / sqrt(x); }

#define AOTC__DEF_FLOAT(N, T, SFX, I, UI, BITCAST_TO, SIGNMASK, EXPMASK)           \
  AOTC_INLINE T aotc_add_##N(T a, T b) { return a + b; }                                  \
  AOTC_INLINE T aotc_sub_##N(T a, T b) { return a - b; }                                  \
  AOTC_INLINE T aotc_mul_##N(T a, T b) { return a * b; }                                  \
  AOTC_INLINE T aotc_div_##N(T a, T b) { return a / b; }                                  \
  AOTC_INLINE T aotc_neg_##N(T a) { return -a; }                                          \
  /* one rounding, as XLA:CPU's contracted multiply-adds (kernel/contract.py) */          \
  AOTC_INLINE T aotc_fma_##N(T a, T b, T c) { return fma##SFX(a, b, c); }                 \
  AOTC_INLINE T aotc_abs_##N(T a) { return fabs##SFX(a); }                                \
  AOTC_INLINE uint8_t aotc_is_nan_##N(T a) { return (uint8_t)(a != a); }                  \
  /* by bits, so it also holds under -ffinite-math-only */                                \
  AOTC_INLINE uint8_t aotc_is_finite_##N(T a) {                                           \
    return (uint8_t)((BITCAST_TO(a) & EXPMASK) != EXPMASK);                               \
  }                                                                                       \
  /* Subnormals read as zero (DAZ) and subnormal results written as zero (FTZ), by     \
   * bits: XLA:CPU computes with both, and a value a libm routine or a select passes   \
   * through untouched would otherwise escape the hardware flush. */                      \
  AOTC_INLINE T aotc_ftz_##N(T a) {                                                       \
    return fabs##SFX(a) < AOTC__MINNORM_##N ? a * (T)0 : a; /* a * 0 keeps the sign */    \
  }                                                                                       \
  /* NaN from either side; max(-0,+0) = +0, min(+0,-0) = -0; a subnormal result is     \
   * flushed to zero, as XLA:CPU gives.  A NaN a comes back as it is (signalling or     \
   * not); a NaN b only when a is a number, and then with the and (max) or the or (min)  \
   * of both signs, as XLA:CPU gives (max(0, -NaN) = +NaN, min(-0, +NaN) = -NaN) */      \
  AOTC_INLINE T aotc_max_##N(T a, T b) {                                                  \
    const UI nb = BITCAST_TO(b) & (BITCAST_TO(a) | ~(UI)SIGNMASK);                        \
    a = aotc_ftz_##N(a);                                                                  \
    b = aotc_ftz_##N(b);                                                                  \
    int take_a = a > b || (a == b && !(BITCAST_TO(a) & SIGNMASK)) || a != a;              \
    T r = take_a ? a : b;                                                                 \
    T n = AOTC__CAT(aotc_bitcast_u, AOTC__FBITS_##N##_TO)(nb);                            \
    return b != b && a == a ? n : r;                                                      \
  }                                                                                       \
  AOTC_INLINE T aotc_min_##N(T a, T b) {                                                  \
    const UI nb = BITCAST_TO(b) | (BITCAST_TO(a) & (UI)SIGNMASK);                         \
    a = aotc_ftz_##N(a);                                                                  \
    b = aotc_ftz_##N(b);                                                                  \
    int take_a = a < b || (a == b && (BITCAST_TO(a) & SIGNMASK)) || a != a;               \
    T r = take_a ? a : b;                                                                 \
    T n = AOTC__CAT(aotc_bitcast_u, AOTC__FBITS_##N##_TO)(nb);                            \
    return b != b && a == a ? n : r;                                                      \
  }                                                                                       \
  /* a > b ? a : b and a < b ? a : b, b when equal or unordered: max and min where an     \
   * operand is a known normal constant (kernel/strength.py), and folds that check       \
   * their result (a subnormal operand may come back flushed under DAZ) */                \
  AOTC_INLINE T aotc_pick_gt_##N(T a, T b) { return a > b ? a : b; }                      \
  AOTC_INLINE T aotc_pick_lt_##N(T a, T b) { return a < b ? a : b; }                      \
  /* IEEE comparison read from the bits, so DAZ does not apply (XLA:CPU compares      \
   * bf16/f16 values without flushing): -1 less, 0 equal, 1 greater, 2 unordered */     \
  AOTC_INLINE int aotc_fcmp_nodaz_##N(T a, T b) {                                         \
    UI ua = BITCAST_TO(a), ub = BITCAST_TO(b);                                            \
    if ((ua & ~(UI)SIGNMASK) > EXPMASK || (ub & ~(UI)SIGNMASK) > EXPMASK) return 2;      \
    UI ta = (ua & SIGNMASK) ? (UI)(ua ^ (SIGNMASK - 1u)) : ua;                             \
    UI tb = (ub & SIGNMASK) ? (UI)(ub ^ (SIGNMASK - 1u)) : ub;                             \
    I ka = (ua & ~(UI)SIGNMASK) == 0 ? (I)0 : AOTC__CAT(aotc__u2s_, AOTC__FBITS_##N)(ta); \
    I kb = (ub & ~(UI)SIGNMASK) == 0 ? (I)0 : AOTC__CAT(aotc__u2s_, AOTC__FBITS_##N)(tb); \
    return ka < kb ? -1 : ka > kb;                                                        \
  }                                                                                       \
  /* minimum(maximum(lo, x), hi): the operand order decides which NaN XLA:CPU gives */  \
  AOTC_INLINE T aotc_clamp_##N(T lo, T x, T hi) { return aotc_min_##N(aotc_max_##N(lo, x), hi); } \
  /* fmod: sign of the dividend; x%0 = NaN, inf%x = NaN, x%inf = x */                     \
  AOTC_INLINE T aotc_rem_##N(T a, T b) { return fmod##SFX(a, b); }                        \
  AOTC_INLINE T aotc_pow_##N(T a, T b) { return pow##SFX(a, b); }                         \
  AOTC_INLINE T aotc_atan2_##N(T a, T b) { return atan2##SFX(a, b); }                     \
  /* NaN -> NaN, +-0 -> +-0, else +-1 */                                                  \
  AOTC_INLINE T aotc_sign_##N(T a) {                                                      \
    T s = copysign##SFX(a != 0 ? (T)1 : (T)0, a);                                         \
    return a != a ? a : s;                                                                \
  }                                                                                       \
  /* round half to even; assumes the default rounding mode (never changed) */             \
  AOTC_INLINE T aotc_round_even_##N(T a) { return nearbyint##SFX(a); }                    \
  /* round, floor and ceil are derived from nearbyint (one vector instruction on          \
   * SSE4.1/AVX/NEON, which compilers vectorise without -ffast-math; the libm             \
   * calls they replace are not).  a - r is exact; a result of 0 takes the sign           \
   * of a; NaN and +-inf pass through. */                                                 \
  AOTC_INLINE T aotc_round_afz_##N(T a) {                                                 \
    T r = nearbyint##SFX(a);                                                              \
    return fabs##SFX(a - r) == (T)0.5 ? a + copysign##SFX((T)0.5, a) : r;                 \
  }                                                                                       \
  AOTC_INLINE T aotc_floor_##N(T a) {                                                     \
    T r = nearbyint##SFX(a);                                                              \
    return copysign##SFX(r > a ? r - (T)1 : r, a);                                        \
  }                                                                                       \
  AOTC_INLINE T aotc_ceil_##N(T a) {                                                      \
    T r = nearbyint##SFX(a);                                                              \
    return copysign##SFX(r < a ? r + (T)1 : r, a);                                        \
  }                                                                                       \
  AOTC_INLINE T aotc_sqrt_##N(T a) { return sqrt##SFX(a); }                               \
  /* rsqrt(-0) = -inf, like 1/sqrt; f32 as XLA:CPU computes it (aotc__rsqrt_f32) */       \
  AOTC_INLINE T aotc_rsqrt_##N(T a) { return aotc__rsqrt_##N(a); }                        \
  AOTC_INLINE T aotc_exp_##N(T a) { return aotc_ftz_##N(aotc__exp_##N(a)); }              \
  /* expm1 passes x through unflushed where x/2 flushes to zero, as XLA's select does */   \
  AOTC_INLINE T aotc_expm1_##N(T a) {                                                     \
    T r = aotc_ftz_##N(aotc__expm1_##N(aotc_ftz_##N(a)));                                  \
    return aotc_ftz_##N(a * (T)0.5) == (T)0 ? a : r;                                      \
  }                                                                                       \
  AOTC_INLINE T aotc_log_##N(T a) { return aotc_ftz_##N(aotc__log_##N(aotc_ftz_##N(a))); }   \
  AOTC_INLINE T aotc_log1p_##N(T a) { return aotc_ftz_##N(aotc__log1p_##N(aotc_ftz_##N(a))); }  \
  /* libm, as XLA:CPU calls it: for a tiny x (subnormals included) sin and tan return x   \
   * itself, by a test on the bits, so XLA passes subnormals through */                    \
  AOTC_INLINE T aotc_sin_##N(T a) { return sin##SFX(a); }                                 \
  AOTC_INLINE T aotc_cos_##N(T a) { return cos##SFX(a); }                                 \
  AOTC_INLINE T aotc_tan_##N(T a) { return tan##SFX(a); }                                 \
  AOTC_INLINE T aotc_erf_##N(T a) { return aotc_ftz_##N(aotc__erf_##N(aotc_ftz_##N(a))); }   \
  /* 1/(1+e^-x): exp overflows to inf for very negative x and gives exactly 0;           \
   * results below the normal range are flushed to 0 under FTZ, as in XLA */              \
  AOTC_INLINE T aotc_logistic_##N(T a) { return aotc_ftz_##N((T)1 / ((T)1 + aotc__exp_##N(-a))); } \
  /* Key whose signed integer order is XLA's TOTALORDER:                                  \
   * -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN */                                   \
  AOTC_INLINE I aotc_totalorder_##N(T a) {                                                \
    UI u = BITCAST_TO(a);                                                                 \
    UI k = (u & SIGNMASK) ? (UI)(u ^ (SIGNMASK - 1u)) : u;                                \
    return AOTC__CAT(aotc__u2s_, AOTC__FBITS_##N)(k);                                     \
  }
#define AOTC__FBITS_f32 32
#define AOTC__FBITS_f64 64
#define AOTC__FBITS_f32_TO 32_f32
#define AOTC__FBITS_f64_TO 64_f64
AOTC__DEF_FLOAT(f32, float, f, int32_t, uint32_t, aotc_bitcast_f32_u32, 0x80000000u,
                0x7F800000u)
AOTC__DEF_FLOAT(f64, double, , int64_t, uint64_t, aotc_bitcast_f64_u64,
                0x8000000000000000u, 0x7FF0000000000000u)
/* exp of an x known to be <= 0 or NaN (ops/bounds.py): exp's bits; its vector form
 * (aotc_simd.h) leaves out the clamps from above */
AOTC_INLINE float aotc_exp_nonpos_f32(float a) { return aotc_exp_f32(a); }
/* f, or the NaN of all-ones bits when x is NaN: a fold's record of having met a NaN */
AOTC_INLINE float aotc_flag_nan_f32(float f, float x) { return x != x ? aotc_bitcast_u32_f32(0xffffffffu) : f; }
/* tanh(x) = x for |x| < 0.0004 passes x through as it is, subnormal or not, as
 * XLA:CPU does; no other result is subnormal.  f64 has no such pass: a subnormal x reads
 * as zero and gives +-0. */
AOTC_INLINE float aotc_tanh_f32(float a) { return aotc__tanh_f32(a); }
AOTC_INLINE double aotc_tanh_f64(double a) { return aotc_ftz_f64(aotc__tanh_f64(aotc_ftz_f64(a))); }
/* cbrt: XLA:CPU calls the host libm's cbrtf / cbrt (glibc's), as aotc does, but with DAZ
 * and FTZ set.  Under DAZ glibc's frexpf-based cbrtf (measured: glibc 2.36) maps every f32
 * subnormal, of either sign, to one value: frexpf scales |x| by 2^25, which DAZ reads as 0,
 * leaving mantissa 0.5 and exponent -151, and the sign test x > 0 is false, so the result is
 * -(float)2^(-2/3) * 2^-50.  aotc gives that value by the bits, whatever FP environment the
 * libm call would see.  Zeros, infinities and NaN go to libm; no normal f32 has a subnormal
 * cube root.  f64 subnormals read as zero and give +-0, as on XLA:CPU. */
AOTC_INLINE float aotc_cbrt_f32(float a) {
  uint32_t m = aotc_bitcast_f32_u32(a) & 0x7FFFFFFFu;
  /* -0x1.428a3p-51, by its bits: C++ before 17 has no hexadecimal float literals */
  return m != 0u && m < 0x00800000u ? aotc_bitcast_u32_f32(0xA6214518u) : cbrtf(a);
}
AOTC_INLINE double aotc_cbrt_f64(double a) { return aotc_ftz_f64(cbrt(aotc_ftz_f64(a))); }

/* ======================================================================== */
/* Conversions aotc_cvt_<FROM>_<TO>.                                        */
/* ======================================================================== */
/* float -> int saturates and truncates toward zero, NaN -> 0; int -> int
 * wraps; -> pred is x != 0 (NaN -> 1); pred -> number is 0/1; f64 -> f32
 * rounds to nearest and overflows to inf (the C cast). */
#define AOTC__T_pred uint8_t
#define AOTC__T_s8 int8_t
#define AOTC__T_s16 int16_t
#define AOTC__T_s32 int32_t
#define AOTC__T_s64 int64_t
#define AOTC__T_u8 uint8_t
#define AOTC__T_u16 uint16_t
#define AOTC__T_u32 uint32_t
#define AOTC__T_u64 uint64_t
#define AOTC__T_f32 float
#define AOTC__T_f64 double
/* kind: P pred, S signed, U unsigned, F float */
#define AOTC__K_pred P
#define AOTC__K_s8 S
#define AOTC__K_s16 S
#define AOTC__K_s32 S
#define AOTC__K_s64 S
#define AOTC__K_u8 U
#define AOTC__K_u16 U
#define AOTC__K_u32 U
#define AOTC__K_u64 U
#define AOTC__K_f32 F
#define AOTC__K_f64 F
#define AOTC__BITS_s8 8
#define AOTC__BITS_s16 16
#define AOTC__BITS_s32 32
#define AOTC__BITS_s64 64
#define AOTC__MIN_s8 INT8_MIN
#define AOTC__MIN_s16 INT16_MIN
#define AOTC__MIN_s32 INT32_MIN
#define AOTC__MIN_s64 INT64_MIN
#define AOTC__MAX_s8 INT8_MAX
#define AOTC__MAX_s16 INT16_MAX
#define AOTC__MAX_s32 INT32_MAX
#define AOTC__MAX_s64 INT64_MAX
#define AOTC__MAX_u8 UINT8_MAX
#define AOTC__MAX_u16 UINT16_MAX
#define AOTC__MAX_u32 UINT32_MAX
#define AOTC__MAX_u64 UINT64_MAX
#define AOTC__UT_s8 uint8_t
#define AOTC__UT_s16 uint16_t
#define AOTC__UT_s32 uint32_t
#define AOTC__UT_s64 uint64_t

#define AOTC__CVT_HEAD(F, T) \
  AOTC_INLINE AOTC__T_##T aotc_cvt_##F##_##T(AOTC__T_##F x)

/* anything -> pred */
#define AOTC__CVT_PP(F, T) AOTC__CVT_HEAD(F, T) { return (uint8_t)(x != 0); }
#define AOTC__CVT_SP AOTC__CVT_PP
#define AOTC__CVT_UP AOTC__CVT_PP
#define AOTC__CVT_FP AOTC__CVT_PP
/* pred -> number */
#define AOTC__CVT_PS(F, T) AOTC__CVT_HEAD(F, T) { return (AOTC__T_##T)(x != 0); }
#define AOTC__CVT_PU AOTC__CVT_PS
#define AOTC__CVT_PF AOTC__CVT_PS
/* int -> signed: wrap through the unsigned type of the destination width */
#define AOTC__CVT_SS(F, T)                                            \
  AOTC__CVT_HEAD(F, T) {                                              \
    return AOTC__CAT(aotc__u2s_, AOTC__BITS_##T)((AOTC__UT_##T)x);    \
  }
#define AOTC__CVT_US AOTC__CVT_SS
/* int -> unsigned: C conversion to unsigned is already modular */
#define AOTC__CVT_SU(F, T) AOTC__CVT_HEAD(F, T) { return (AOTC__T_##T)x; }
#define AOTC__CVT_UU AOTC__CVT_SU
/* int -> float, float -> float: the C conversion (round to nearest) */
#define AOTC__CVT_SF AOTC__CVT_SU
#define AOTC__CVT_UF AOTC__CVT_SU
#define AOTC__CVT_FF AOTC__CVT_SU
/* float -> signed: saturate; -(float)MIN = 2^(bits-1) is exact */
#define AOTC__CVT_FS(F, T)                                                    \
  AOTC__CVT_HEAD(F, T) {                                                      \
    const AOTC__T_##F lo = (AOTC__T_##F)AOTC__MIN_##T;                        \
    return x >= -lo   ? (AOTC__T_##T)AOTC__MAX_##T                            \
           : x >= lo  ? (AOTC__T_##T)x                                        \
           : x != x   ? (AOTC__T_##T)0                                        \
                      : (AOTC__T_##T)AOTC__MIN_##T;                           \
  }
/* float -> unsigned: saturate; 2 * 2^(bits-1) = 2^bits is exact; (-1, 0)
 * truncates to 0, which C defines; NaN fails both tests and gives 0 */
#define AOTC__CVT_FU(F, T)                                                    \
  AOTC__CVT_HEAD(F, T) {                                                      \
    const AOTC__T_##F hi =                                                    \
        (AOTC__T_##F)2 * (AOTC__T_##F)((AOTC__MAX_##T >> 1) + 1u);            \
    return x >= hi                  ? (AOTC__T_##T)AOTC__MAX_##T              \
           : x > (AOTC__T_##F)(-1)  ? (AOTC__T_##T)x                          \
                                    : (AOTC__T_##T)0;                         \
  }

#define AOTC__CVT3(KF, KT, F, T) AOTC__CVT_##KF##KT(F, T)
#define AOTC__CVT2(KF, KT, F, T) AOTC__CVT3(KF, KT, F, T)
#define AOTC__CVT(F, T) AOTC__CVT2(AOTC__K_##F, AOTC__K_##T, F, T)
#define AOTC__CVT_ROW(F)                                                       \
  AOTC__CVT(F, pred) AOTC__CVT(F, s8) AOTC__CVT(F, s16) AOTC__CVT(F, s32)      \
  AOTC__CVT(F, s64) AOTC__CVT(F, u8) AOTC__CVT(F, u16) AOTC__CVT(F, u32)       \
  AOTC__CVT(F, u64) AOTC__CVT(F, f32) AOTC__CVT(F, f64)
AOTC__CVT_ROW(pred)
AOTC__CVT_ROW(s8)
AOTC__CVT_ROW(s16)
AOTC__CVT_ROW(s32)
AOTC__CVT_ROW(s64)
AOTC__CVT_ROW(u8)
AOTC__CVT_ROW(u16)
AOTC__CVT_ROW(u32)
AOTC__CVT_ROW(u64)
AOTC__CVT_ROW(f32)
AOTC__CVT_ROW(f64)

/* ======================================================================== */
/* Half precision: bf16 and f16 stored as uint16_t, computed in float.      */
/* ======================================================================== */
/* All rounding here is done with integer operations on the bit patterns:
 * generated code runs with FTZ/DAZ on, which would flush the subnormal
 * intermediates a float-arithmetic formulation relies on.  Rounding is to
 * nearest, ties to even; NaN stays NaN (made quiet); overflow gives inf;
 * subnormal results are kept. */

/* Round the magnitude bits of a binary32/binary64 value into a narrower
 * format with ED exponent bits and MD mantissa bits; returns its bits. */
#define AOTC__DEF_NARROW(NAME, UT, MS, BS)                                        \
  AOTC_INLINE uint16_t NAME(UT x, unsigned ed, unsigned md) {                     \
    const UT one = 1;                                                             \
    const UT mmask = (one << MS) - 1u;                                            \
    const UT sinf = ~(UT)0 >> 1 & ~mmask; /* exponent all ones */                 \
    const UT bd = (one << (ed - 1u)) - 1u;                                        \
    const uint16_t sign = (uint16_t)((x >> (sizeof(UT) * 8u - 1u)) << (ed + md)); \
    const uint16_t dinf = (uint16_t)(((1u << ed) - 1u) << md);                    \
    const UT a = x & (~(UT)0 >> 1);                                               \
    if (a >= sinf) {                                                              \
      if (a == sinf) return (uint16_t)(sign | dinf);                              \
      return (uint16_t)(sign | dinf | (1u << (md - 1u)) |                         \
                        (uint16_t)((a & mmask) >> (MS - md)));                    \
    }                                                                             \
    const UT e = a >> MS;                                                         \
    if (e + bd > (UT)BS) { /* normal in the narrow format */                      \
      const unsigned sh = MS - md;                                                \
      UT r = a - (((UT)BS - bd) << MS);                                           \
      r = (r + ((one << (sh - 1u)) - 1u) + ((r >> sh) & 1u)) >> sh;               \
      return (uint16_t)(sign | (r >= dinf ? (UT)dinf : r));                       \
    }                                                                             \
    /* subnormal or zero in the narrow format */                                  \
    const UT sig = e ? ((a & mmask) | (one << MS)) : a;                           \
    const UT sh = (UT)(MS - md) + ((UT)BS - bd) + 1u - (e ? e : 1u);              \
    if (sh >= (UT)MS + 2u) return sign; /* below half the smallest subnormal */   \
    const UT half = one << (sh - 1u);                                             \
    const UT rem = sig & ((one << sh) - 1u);                                      \
    UT q = sig >> sh;                                                             \
    q += (UT)((rem > half) | ((rem == half) & (q & 1u)));                         \
    return (uint16_t)(sign | q);                                                  \
  }
AOTC__DEF_NARROW(aotc__narrow_from32, uint32_t, 23u, 127u)
AOTC__DEF_NARROW(aotc__narrow_from64, uint64_t, 52u, 1023u)

AOTC_INLINE float aotc_bf16_to_f32(uint16_t h) {
  return aotc_bitcast_u32_f32((uint32_t)h << 16);
}

/* f32 -> bf16 storage: same exponent range, so rounding the low 16 bits is enough;
 * a carry into the exponent is the correct result (up to inf).  A NaN keeps its upper
 * 16 bits, so a bf16 value that was only moved (select, copy, a loaded operand) is
 * stored with its own bits, a signalling NaN included; one whose payload lies in the low
 * bits alone stays a NaN (quiet).  Computed values and converts from f32 are rounded
 * first by aotc_round_bf16, which gives XLA:CPU's NaN. */
AOTC_INLINE uint16_t aotc_f32_to_bf16(float f) {
  uint32_t u = aotc_bitcast_f32_u32(f);
  uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  uint32_t hi = u >> 16;
  uint32_t nan = (hi & 0x7Fu) == 0u ? hi | 0x40u : hi;
  return (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

/* round an f32 to the nearest bf16 value, kept in a float, as XLA:CPU rounds the f32
 * result of a bf16 op: a NaN becomes the quiet NaN of its sign with no payload
 * (0x7FC0 / 0xFFC0) */
AOTC_INLINE float aotc_round_bf16(float f) {
  uint32_t u = aotc_bitcast_f32_u32(f);
  uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  uint32_t quiet = (u & 0x80000000u) | 0x7FC00000u;
  return aotc_bitcast_u32_f32((u & 0x7FFFFFFFu) > 0x7F800000u ? quiet : rounded);
}

/* f16 -> f32 is exact; a signalling NaN comes out quiet, as vcvtph2ps gives it
 * (XLA:CPU's convert on x86 with F16C), and f16 subnormals are never flushed.
 * With F16C it is that instruction. */
#if defined(AOTC_HAVE_F16C)
AOTC_INLINE float aotc_f16_to_f32(uint16_t h) { return _cvtsh_ss(h); }
#else
AOTC_INLINE float aotc_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t m = h & 0x3FFu;
  uint32_t bits;
  if (e == 0x1Fu) {
    bits = sign | 0x7F800000u | (m << 13) | (m ? 0x00400000u : 0u);
  } else if (e != 0) {
    bits = sign | ((e + 112u) << 23) | (m << 13);
  } else {
    /* +-0 or subnormal m * 2^-24: (float)m is exact and normal; scale it by
     * 2^-24 through the exponent field (stays normal, no FTZ involved) */
    bits = m ? sign | (aotc_bitcast_f32_u32((float)m) - (24u << 23)) : sign;
  }
  return aotc_bitcast_u32_f32(bits);
}
#endif

/* round an f32 to the nearest f16 value, kept in a float.  Branch-free so
 * loops of it vectorise:
 *  - f16 normal range: round the f32 mantissa to 10 bits on the bit pattern
 *    (a carry into the exponent is correct; reaching 65536 means inf);
 *  - f16 subnormal range (|f| < 2^-14): the result is a multiple of 2^-24,
 *    nearbyint(|f| * 2^24) * 2^-24.  Every intermediate is a normal f32 or
 *    zero, so FTZ/DAZ cannot change it (an f32-subnormal input rounds to 0
 *    either way);
 *  - NaN: made quiet, low 13 payload bits dropped (as f32 -> f16 -> f32). */
#if defined(AOTC_HAVE_F16C)
/* vcvtps2ph rounds to nearest even, gives f16 subnormals and quiets NaN
 * keeping the high payload bits: the same as the portable code below (an f32
 * subnormal input, which DAZ may flush, rounds to a zero of its sign anyway). */
AOTC_INLINE float aotc_round_f16(float f) { return _cvtsh_ss(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)); }
AOTC_INLINE uint16_t aotc_f32_to_f16(float f) { return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
#else
AOTC_INLINE float aotc_round_f16(float f) {
  const uint32_t u = aotc_bitcast_f32_u32(f);
  const uint32_t a = u & 0x7FFFFFFFu;
  uint32_t normal = (a + 0xFFFu + ((a >> 13) & 1u)) & 0xFFFFE000u;
  normal = normal >= 0x47800000u ? 0x7F800000u : normal;
  const float sub = nearbyintf(aotc_bitcast_u32_f32(a) * 16777216.0f) * 5.9604644775390625e-8f;
  uint32_t r = a < 0x38800000u ? aotc_bitcast_f32_u32(sub) : normal;
  r = a > 0x7F800000u ? (a | 0x00400000u) & 0xFFFFE000u : r;
  return aotc_bitcast_u32_f32((u & 0x80000000u) | r);
}

/* f32 -> f16 bits: aotc_round_f16, then re-encoding the (now exact) value. */
AOTC_INLINE uint16_t aotc_f32_to_f16(float f) {
  const uint32_t r = aotc_bitcast_f32_u32(aotc_round_f16(f));
  const uint32_t a = r & 0x7FFFFFFFu;
  const uint32_t sign = (r >> 16) & 0x8000u;
  const uint32_t normal = (a >> 13) - (112u << 10);                 /* rebias 127 -> 15 */
  const uint32_t special = 0x7C00u | ((a >> 13) & 0x3FFu);          /* inf, NaN */
  /* subnormal: |r| * 2^24 is an integer < 1024 (other lanes convert 0) */
  const uint32_t sub = (uint32_t)(aotc_bitcast_u32_f32(a < 0x38800000u ? a : 0u) * 16777216.0f);
  const uint32_t h = a >= 0x7F800000u ? special : a >= 0x38800000u ? normal : sub;
  return (uint16_t)(sign | h);
}
#endif

AOTC_INLINE double aotc_bf16_to_f64(uint16_t h) { return (double)aotc_bf16_to_f32(h); }
AOTC_INLINE double aotc_f16_to_f64(uint16_t h) { return (double)aotc_f16_to_f32(h); }

/* f64 -> bf16 / f16 as XLA:CPU does it: through f32 (so twice rounded, and
 * an f32-subnormal intermediate is flushed to zero when FTZ is on).  For
 * example XLA gives f16(1 + 2^-11 + 2^-40) = 1.0, not 1 + 2^-10. */
AOTC_INLINE uint16_t aotc_f64_to_bf16(double d) { return aotc_f32_to_bf16(aotc_round_bf16((float)d)); }
AOTC_INLINE uint16_t aotc_f64_to_f16(double d) { return aotc_f32_to_f16((float)d); }

/* Correctly rounded f64 -> bf16 / f16 (a single rounding from double). */
AOTC_INLINE uint16_t aotc_f64_to_bf16_exact(double d) {
  return aotc__narrow_from64(aotc_bitcast_f64_u64(d), 8u, 7u);
}
AOTC_INLINE uint16_t aotc_f64_to_f16_exact(double d) {
  return aotc__narrow_from64(aotc_bitcast_f64_u64(d), 5u, 10u);
}

/* ======================================================================== */
/* Complex numbers (c64 = two floats, c128 = two doubles).                  */
/* ======================================================================== */
/* XLA's complex product and quotient (elemental_ir_emitter.cc), in two forms:
 * aotc_mul/aotc_div round every product apart (targets without FMA), and
 * aotc_fmul/aotc_fdiv fuse exactly the products XLA:CPU's LLVM contracts on
 * an FMA target (the kernel pass kernel/contract.py picks them there):
 *   (a+bi)(c+di) = fma(a, c, -(b d)) + i fma(b, c, a d)
 *   (a+bi)/(c+di): Smith's algorithm, scaled by the larger of |c|, |d|
 *     (|c| < |d|: r = c/d, t = fma(r, c, d), ((r a + b) + i (r b - a)) / t;
 *      else       r = d/c, t = fma(r, d, c), ((r b + a) + i (b - r a)) / t),
 *   then, where both parts came out NaN, C99 Annex G's recovery: a zero
 *   divisor gives copysign(inf, c) times the numerator; an infinite numerator
 *   over a finite divisor inf times (s_a c + s_b d, s_b c - s_a d) with s the
 *   parts' signs (1 for an infinite part, 0 else); a finite numerator over an
 *   infinite divisor 0 times the same form with the roles swapped.
 * NaN results are C's quiet NaN (aotc__cq).  MA(x, y, z) is x y + z, fused or
 * not. */
#define AOTC__MA_APART(x, y, z) ((x) * (y) + (z))
#define AOTC__DEF_COMPLEX_MULDIV(N, MUL, DIV, CT, T, SFX, MA)                        \
  AOTC_INLINE CT aotc_##MUL##_##N(CT a, CT b) {                                      \
    return aotc__cq_##N(MA(a.re, b.re, -(a.im * b.im)), MA(a.im, b.re, a.re * b.im)); \
  }                                                                                  \
  AOTC_INLINE CT aotc_##DIV##_##N(CT a, CT b) {                                      \
    const T inf = (T)INFINITY;                                                       \
    const T abr = fabs##SFX(b.re), abi = fabs##SFX(b.im);                            \
    const T aar = fabs##SFX(a.re), aai = fabs##SFX(a.im);                            \
    T cr, ci;                                                                        \
    if (abr < abi) {                                                                 \
      const T r = b.re / b.im, t = MA(r, b.re, b.im);                                \
      cr = MA(r, a.re, a.im) / t;                                                    \
      ci = MA(r, a.im, -a.re) / t;                                                   \
    } else {                                                                         \
      const T r = b.im / b.re, t = MA(r, b.im, b.re);                                \
      cr = MA(r, a.im, a.re) / t;                                                    \
      ci = MA(-r, a.re, a.im) / t;                                                   \
    }                                                                                \
    if (!(cr != cr && ci != ci)) return aotc__cq_##N(cr, ci);                        \
    if (abr == (T)0 && abi == (T)0 && (a.re == a.re || a.im == a.im)) {              \
      const T s = copysign##SFX(inf, b.re);                                          \
      return aotc__cq_##N(s * a.re, s * a.im);                                       \
    }                                                                                \
    if ((aar == inf || aai == inf) && abr != inf && abi != inf && b.re == b.re &&    \
        b.im == b.im) {                                                              \
      const T sr = copysign##SFX(aar == inf ? (T)1 : (T)0, a.re);                    \
      const T si = copysign##SFX(aai == inf ? (T)1 : (T)0, a.im);                    \
      return aotc__cq_##N(inf * MA(sr, b.re, si * b.im), inf * MA(si, b.re, -(sr * b.im))); \
    }                                                                                \
    if ((abr == inf || abi == inf) && aar != inf && aai != inf && a.re == a.re &&    \
        a.im == a.im) {                                                              \
      const T sr = copysign##SFX(abr == inf ? (T)1 : (T)0, b.re);                    \
      const T si = copysign##SFX(abi == inf ? (T)1 : (T)0, b.im);                    \
      return aotc__cq_##N((T)0 * MA(a.re, sr, a.im * si), (T)0 * MA(a.im, sr, -(a.re * si))); \
    }                                                                                \
    return aotc__cq_##N(cr, ci);                                                     \
  }
#define AOTC__DEF_COMPLEX(N, CT, T, SFX)                                         \
  AOTC_INLINE CT aotc_complex_##N(T re, T im) {                                  \
    CT z;                                                                        \
    z.re = re;                                                                   \
    z.im = im;                                                                   \
    return z;                                                                    \
  }                                                                              \
  AOTC_INLINE T aotc_real_##N(CT a) { return a.re; }                             \
  AOTC_INLINE T aotc_imag_##N(CT a) { return a.im; }                             \
  AOTC_INLINE CT aotc_add_##N(CT a, CT b) { return aotc_complex_##N(a.re + b.re, a.im + b.im); } \
  AOTC_INLINE CT aotc_sub_##N(CT a, CT b) { return aotc_complex_##N(a.re - b.re, a.im - b.im); } \
  AOTC_INLINE CT aotc_neg_##N(CT a) { return aotc_complex_##N(-a.re, -a.im); }   \
  AOTC_INLINE CT aotc_conj_##N(CT a) { return aotc_complex_##N(a.re, -a.im); }   \
  /* |a| as XLA:CPU computes it: max * sqrt(fma(r, r, 1)), r = min / max; a NaN  \
   * real part gives NaN, then an infinite part inf, then a NaN imaginary part NaN */ \
  AOTC_INLINE T aotc_abs_##N(CT a) {                                             \
    const T x = fabs##SFX(a.re), y = fabs##SFX(a.im);                            \
    const T mx = x > y ? x : y, mn = x > y ? y : x;                              \
    if (x != x) return x;                                                        \
    if (mx == (T)INFINITY) return mx;                                            \
    if (y != y) return y;                                                        \
    if (mx == (T)0) return (T)0;                                                 \
    const T r = mn / mx;                                                         \
    return mx * sqrt##SFX(fma##SFX(r, r, (T)1));                                 \
  }                                                                              \
  /* sign as XLA:CPU computes it: a / |a|, and a itself where |a| is 0 */        \
  AOTC_INLINE CT aotc_sign_##N(CT a) {                                           \
    const T r = aotc_abs_##N(a);                                                 \
    return r == (T)0 ? a : aotc_complex_##N(a.re / r, a.im / r);                 \
  }                                                                              \
  /* A result whose parts are NaN gets the one quiet NaN of C's NAN: which     \
   * NaN an operation with two NaN operands keeps (and the sign of the NaN an   \
   * invalid operation makes) follows the compiler's choice of instructions,    \
   * so every complex helper gives the same bits whatever the flags */         \
  AOTC_INLINE CT aotc__cq_##N(T re, T im) {                                      \
    return aotc_complex_##N(re != re ? (T)NAN : re, im != im ? (T)NAN : im);     \
  }                                                                              \
  AOTC__DEF_COMPLEX_MULDIV(N, mul, div, CT, T, SFX, AOTC__MA_APART)              \
  AOTC__DEF_COMPLEX_MULDIV(N, fmul, fdiv, CT, T, SFX, fma##SFX)
AOTC__DEF_COMPLEX(c64, aotc_c64, float, f)
AOTC__DEF_COMPLEX(c128, aotc_c128, double, )

/* ======================================================================== */
/* Floating-point environment: flush-to-zero + denormals-are-zero.          */
/* ======================================================================== */
/* XLA:CPU computes f32 with subnormals flushed (1e-45 + 1e-45 = 0).  A
 * generated entry point calls aotc_fpenv_enter on entry and
 * aotc_fpenv_leave before returning, on the calling thread and on every pool
 * thread that runs its work, so the caller's own environment is restored.
 *   x86-64:  MXCSR.FTZ (bit 15) and MXCSR.DAZ (bit 6).
 *   aarch64: FPCR.FZ (bit 24), which flushes both inputs and outputs.
 *   32-bit ARM with VFP: FPSCR.FZ (bit 24), same meaning.
 *   other targets: no-op (subnormals are then computed exactly; results can
 *   differ from XLA:CPU in the subnormal range only). */
typedef struct {
  uint64_t saved;
} aotc_fpenv;

/* Keeps the compiler from moving memory accesses across the switch, so loads
 * and stores of the generated code stay inside the FTZ region.  Arithmetic
 * on values held in registers is not pinned (compilers treat FP operations as
 * free of side effects): a result must be stored to memory before
 * aotc_fpenv_leave, as generated kernels always do.  Constant expressions are
 * folded at compile time, without FTZ. */
#if defined(__GNUC__) || defined(__clang__)
#define AOTC__COMPILER_BARRIER() __asm__ __volatile__("" ::: "memory")
#elif defined(_MSC_VER)
#include <intrin.h>
#define AOTC__COMPILER_BARRIER() _ReadWriteBarrier()
#else
#define AOTC__COMPILER_BARRIER() ((void)0)
#endif

AOTC_INLINE void aotc_fpenv_enter(aotc_fpenv* saved) {
#if defined(AOTC__FPENV_X86)
  unsigned int csr = _mm_getcsr();
  saved->saved = csr;
  _mm_setcsr(csr | 0x8040u);
  AOTC__COMPILER_BARRIER();
#elif defined(AOTC__FPENV_AARCH64)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  saved->saved = fpcr;
  fpcr |= (uint64_t)1 << 24;
  __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr) : "memory");
#elif defined(AOTC__FPENV_ARM32)
  uint32_t fpscr;
  __asm__ __volatile__("vmrs %0, fpscr" : "=r"(fpscr));
  saved->saved = fpscr;
  fpscr |= (uint32_t)1 << 24;
  __asm__ __volatile__("vmsr fpscr, %0" : : "r"(fpscr) : "memory");
#else
  saved->saved = 0;
#endif
}

/* Records the current state without changing it (restore it with
 * aotc_fpenv_leave). */
AOTC_INLINE void aotc_fpenv_save(aotc_fpenv* saved) {
#if defined(AOTC__FPENV_X86)
  saved->saved = _mm_getcsr();
#elif defined(AOTC__FPENV_AARCH64)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  saved->saved = fpcr;
#elif defined(AOTC__FPENV_ARM32)
  uint32_t fpscr;
  __asm__ __volatile__("vmrs %0, fpscr" : "=r"(fpscr));
  saved->saved = fpscr;
#else
  saved->saved = 0;
#endif
}

AOTC_INLINE void aotc_fpenv_leave(const aotc_fpenv* saved) {
#if defined(AOTC__FPENV_X86)
  AOTC__COMPILER_BARRIER();
  _mm_setcsr((unsigned int)saved->saved);
#elif defined(AOTC__FPENV_AARCH64)
  __asm__ __volatile__("msr fpcr, %0" : : "r"(saved->saved) : "memory");
#elif defined(AOTC__FPENV_ARM32)
  __asm__ __volatile__("vmsr fpscr, %0" : : "r"((uint32_t)saved->saved) : "memory");
#else
  (void)saved;
#endif
}

#endif /* AOTC_MATH_H */

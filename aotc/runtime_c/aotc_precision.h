/* aotc_precision.h -- reduce-precision: a value rounded to E exponent bits and
 * M mantissa bits and kept in its own type, with the bit steps of XLA's
 * elemental emitter (integer operations only, so FTZ/DAZ change nothing).
 *
 * Steps on the bits of a value of S exponent and P mantissa bits:
 *   - M < P: round the mantissa to M bits, to nearest, ties to even (a carry
 *     into the exponent is the right result);
 *   - E < S: an exponent above bias + (2^(E-1) - 1) becomes +-inf, one at or
 *     below bias - (2^(E-1) - 1) becomes +-0 (subnormals of the narrower
 *     format flush, they do not round);
 *   - a NaN input is returned as it is (XLA keeps its bits, M = 0 included).
 * E > S or M > P leave that step out.  bf16 NaNs leave as XLA:CPU's f32 path
 * gives them: the quiet NaN of their sign.
 */
#ifndef AOTC_PRECISION_H
#define AOTC_PRECISION_H

#ifndef AOTC_MATH_H
#include "aotc_math.h"
#endif

#define AOTC__DEF_REDUCE_PRECISION(NAME, U, NB, S, P)                          \
  AOTC_INLINE U NAME(U x, int e, int m) {                                      \
    const U sign = (U)((U)1 << (NB - 1));                                      \
    const U expm = (U)((((U)1 << S) - 1u) << P);                               \
    const U in = x;                                                            \
    if ((U)(x & (U)~sign) > expm) return in; /* NaN */                         \
    if (m >= 0 && m < P) {                                                     \
      const U last = (U)((U)1 << (P - m));                                     \
      x = (U)(x + ((x & last) >> (P - m)) + ((last >> 1) - 1u));               \
      x = (U)(x & (U)~(U)(last - 1u));                                         \
    }                                                                          \
    if (e >= 1 && e < S) {                                                     \
      const U bias = (U)(((U)1 << (S - 1)) - 1u);                              \
      const U rbias = (U)(((U)1 << (e - 1)) - 1u);                             \
      const U xe = (U)(x & expm);                                              \
      if (xe > (U)((U)(bias + rbias) << P)) {                                  \
        x = (U)((x & sign) | expm);                                            \
      } else if (xe <= (U)((U)(bias - rbias) << P)) {                          \
        x = (U)(x & sign);                                                     \
      }                                                                        \
    }                                                                          \
    return x;                                                                  \
  }
AOTC__DEF_REDUCE_PRECISION(aotc__reduce_precision_u16, uint16_t, 16, 5, 10)
AOTC__DEF_REDUCE_PRECISION(aotc__reduce_precision_u32, uint32_t, 32, 8, 23)
AOTC__DEF_REDUCE_PRECISION(aotc__reduce_precision_u64, uint64_t, 64, 11, 52)

AOTC_INLINE float aotc_reduce_precision_f32(float x, int e, int m) {
  return aotc_bitcast_u32_f32(aotc__reduce_precision_u32(aotc_bitcast_f32_u32(x), e, m));
}

AOTC_INLINE double aotc_reduce_precision_f64(double x, int e, int m) {
  return aotc_bitcast_u64_f64(aotc__reduce_precision_u64(aotc_bitcast_f64_u64(x), e, m));
}

/* f16 on its own bits (an f16 value in a float is exact in f16): its
 * subnormals round in the mantissa step, as XLA:CPU's f16 code does */
AOTC_INLINE float aotc_reduce_precision_f16(float x, int e, int m) {
  if (x != x) return x;
  return aotc_f16_to_f32(aotc__reduce_precision_u16(aotc_f32_to_f16(x), e, m));
}

/* bf16 has f32's exponent: its steps are f32's with at most 7 mantissa bits */
AOTC_INLINE float aotc_reduce_precision_bf16(float x, int e, int m) {
  const uint32_t u = aotc_bitcast_f32_u32(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return aotc_bitcast_u32_f32((u & 0x80000000u) | 0x7FC00000u);
  return aotc_reduce_precision_f32(x, e, m < 7 ? m : 7);
}

#endif /* AOTC_PRECISION_H */

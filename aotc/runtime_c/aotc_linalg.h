/* aotc_linalg.h -- scalar arithmetic of the dense linear-algebra kernels (aotc_linalg.c).
 *
 * One small set of helpers per element type, named by LAPACK's letters: aotc_la_s (f32),
 * aotc_la_d (f64), aotc_la_c (c64) and aotc_la_z (c128).  The kernels are written once over
 * these names (a macro instantiated per type), so the real and complex versions run the same
 * steps.  Embedded into a generated file only when one of its kernels calls a linalg routine.
 */
#ifndef AOTC_LINALG_H
#define AOTC_LINALG_H

#ifndef AOTC_RT_H
#include "aotc_rt.h"
#endif
#include <float.h>
#include <math.h>
#include <stdint.h>

/* ---- real element types: T and R are the same ---- */
#define AOTC__LA_REAL(P, T, SQRT, FABS, EPS, TINY)                                          \
  AOTC_INLINE T P##_add(T a, T b) { return a + b; }                                        \
  AOTC_INLINE T P##_sub(T a, T b) { return a - b; }                                        \
  AOTC_INLINE T P##_mul(T a, T b) { return a * b; }                                        \
  AOTC_INLINE T P##_div(T a, T b) { return a / b; }                                        \
  AOTC_INLINE T P##_conj(T a) { return a; }                                                \
  AOTC_INLINE T P##_rmul(T a, T r) { return a * r; }                                       \
  AOTC_INLINE T P##_re(T a) { return a; }                                                  \
  AOTC_INLINE T P##_im(T a) { (void)a; return (T)0; }                                      \
  AOTC_INLINE T P##_mk(T re, T im) { (void)im; return re; }                                \
  AOTC_INLINE T P##_abs1(T a) { return FABS(a); }                                          \
  AOTC_INLINE T P##_abs2(T a) { return a * a; }                                            \
  AOTC_INLINE T P##_abs(T a) { return FABS(a); }                                           \
  AOTC_INLINE int P##_iszero(T a) { return a == (T)0; }                                    \
  AOTC_INLINE T P##_sqrt(T a) { return SQRT(a); }                                          \
  AOTC_INLINE T P##_fabs(T a) { return FABS(a); }                                          \
  AOTC_INLINE T P##_eps(void) { return EPS; }                                              \
  AOTC_INLINE T P##_sfmin(void) { return TINY; }

/* ---- complex element types: T a struct {re, im} of R ---- */
#define AOTC__LA_COMPLEX(P, T, R, SQRT, FABS, EPS, TINY)                                    \
  AOTC_INLINE T P##_mk(R re, R im) { T z; z.re = re; z.im = im; return z; }                \
  AOTC_INLINE T P##_add(T a, T b) { return P##_mk(a.re + b.re, a.im + b.im); }             \
  AOTC_INLINE T P##_sub(T a, T b) { return P##_mk(a.re - b.re, a.im - b.im); }             \
  AOTC_INLINE T P##_mul(T a, T b) {                                                        \
    return P##_mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);                   \
  }                                                                                        \
  /* Smith's division, as LAPACK's ?ladiv scales */                                       \
  AOTC_INLINE T P##_div(T a, T b) {                                                        \
    if (FABS(b.im) <= FABS(b.re)) {                                                        \
      R r = b.im / b.re, d = b.re + b.im * r;                                              \
      return P##_mk((a.re + a.im * r) / d, (a.im - a.re * r) / d);                         \
    }                                                                                      \
    R r = b.re / b.im, d = b.im + b.re * r;                                                \
    return P##_mk((a.re * r + a.im) / d, (a.im * r - a.re) / d);                           \
  }                                                                                        \
  AOTC_INLINE T P##_conj(T a) { return P##_mk(a.re, -a.im); }                              \
  AOTC_INLINE T P##_rmul(T a, R r) { return P##_mk(a.re * r, a.im * r); }                  \
  AOTC_INLINE R P##_re(T a) { return a.re; }                                               \
  AOTC_INLINE R P##_im(T a) { return a.im; }                                               \
  AOTC_INLINE R P##_abs1(T a) { return FABS(a.re) + FABS(a.im); }                          \
  AOTC_INLINE R P##_abs2(T a) { return a.re * a.re + a.im * a.im; }                        \
  AOTC_INLINE R P##_abs(T a) {                                                             \
    R x = FABS(a.re), y = FABS(a.im), w = x > y ? x : y, v = x > y ? y : x;                \
    if (w == (R)0 || v == (R)0) return w + v;                                              \
    v /= w;                                                                                \
    return w * SQRT((R)1 + v * v);                                                         \
  }                                                                                        \
  AOTC_INLINE int P##_iszero(T a) { return a.re == (R)0 && a.im == (R)0; }                 \
  AOTC_INLINE R P##_sqrt(R a) { return SQRT(a); }                                          \
  AOTC_INLINE R P##_fabs(R a) { return FABS(a); }                                          \
  AOTC_INLINE R P##_eps(void) { return EPS; }                                              \
  AOTC_INLINE R P##_sfmin(void) { return TINY; }

AOTC__LA_REAL(aotc_la_s, float, sqrtf, fabsf, FLT_EPSILON, FLT_MIN)
AOTC__LA_REAL(aotc_la_d, double, sqrt, fabs, DBL_EPSILON, DBL_MIN)
/* Not vectorized by GCC, as the complex routines of aotc_linalg.c (see there). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("no-tree-vectorize")
#endif
AOTC__LA_COMPLEX(aotc_la_c, aotc_c64, float, sqrtf, fabsf, FLT_EPSILON, FLT_MIN)
AOTC__LA_COMPLEX(aotc_la_z, aotc_c128, double, sqrt, fabs, DBL_EPSILON, DBL_MIN)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#endif /* AOTC_LINALG_H */

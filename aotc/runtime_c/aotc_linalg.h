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

/* ---- the drivers' scaling of a matrix whose largest entry is near underflow or overflow ---- */
/* Entries (i, j) of an m x n row-major matrix (leading dimension ld) in `part`: AOTC_LA_ALL, the upper
   Hessenberg part (j >= i - 1), the upper triangle (j >= i). */
enum { AOTC_LA_ALL = 0, AOTC_LA_HESS = 1, AOTC_LA_UPPER = 2 };
#define AOTC__LA_PART_LOOP(part, m, n, BODY)                                                \
  for (int64_t i_ = 0; i_ < (m); ++i_) {                                                   \
    int64_t j0_ = (part) == AOTC_LA_HESS ? i_ - 1 : (part) == AOTC_LA_UPPER ? i_ : 0;      \
    if (j0_ < 0) j0_ = 0;                                                                  \
    for (int64_t j_ = j0_; j_ < (n); ++j_) { BODY }                                        \
  }
#define AOTC__LA_SCALING(P, T, R, ABSM)                                                     \
  /* ?lange('M'): the largest magnitude over `part`, NaN if an entry is NaN */              \
  AOTC_INLINE R P##_lange_max(int part, int64_t m, int64_t n, const T* a, int64_t ld) {    \
    R v = (R)0;                                                                            \
    AOTC__LA_PART_LOOP(part, m, n, {                                                       \
      R x = ABSM(a[i_ * ld + j_]);                                                         \
      if (v < x || x != x) v = x;                                                          \
    })                                                                                     \
    return v;                                                                              \
  }                                                                                        \
  /* ?lascl's factors: cto / cfrom as the product of mul[0..count) (count returned; 0 when it is 1), each    \
     step by the safe minimum or its inverse where the quotient itself would overflow or underflow */       \
  AOTC_INLINE int P##_lascl_factors(R cfrom, R cto, R* mul) {                                              \
    const R smlnum = P##_sfmin(), bignum = (R)1 / smlnum;                                                  \
    R cfromc = cfrom, ctoc = cto;                                                                          \
    for (int k = 0; k < 8; ++k) {                                                                          \
      const R cfrom1 = cfromc * smlnum;                                                                    \
      if (cfrom1 == cfromc) { /* cfromc infinite */                                                        \
        mul[k] = ctoc / cfromc;                                                                            \
        return k + 1;                                                                                      \
      }                                                                                                    \
      const R cto1 = ctoc / bignum;                                                                        \
      if (cto1 == ctoc) { /* ctoc 0 or infinite */                                                         \
        mul[k] = ctoc;                                                                                     \
        return k + 1;                                                                                      \
      } else if (P##_fabs(cfrom1) > P##_fabs(ctoc) && ctoc != (R)0) {                                      \
        mul[k] = smlnum;                                                                                   \
        cfromc = cfrom1;                                                                                   \
      } else if (P##_fabs(cto1) > P##_fabs(cfromc)) {                                                      \
        mul[k] = bignum;                                                                                   \
        ctoc = cto1;                                                                                       \
      } else {                                                                                             \
        mul[k] = ctoc / cfromc;                                                                            \
        return mul[k] == (R)1 ? k : k + 1;                                                                 \
      }                                                                                                    \
    }                                                                                                      \
    return 8; /* not reached: each step moves the exponent by the whole range */                           \
  }                                                                                                        \
  /* ?lascl: `part` of a multiplied by cto / cfrom */                                                      \
  AOTC_INLINE void P##_lascl(int part, R cfrom, R cto, int64_t m, int64_t n, T* a, int64_t ld) {           \
    R mul[8];                                                                                              \
    const int count = P##_lascl_factors(cfrom, cto, mul);                                                  \
    for (int k = 0; k < count; ++k)                                                                        \
      AOTC__LA_PART_LOOP(part, m, n, { a[i_ * ld + j_] = P##_rmul(a[i_ * ld + j_], mul[k]); })             \
  }                                                                                                        \
  /* ?lascl of the real vector x[0..m) */                                                                  \
  AOTC_INLINE void P##_lascl_r(R cfrom, R cto, int64_t m, R* x) {                                          \
    R mul[8];                                                                                              \
    const int count = P##_lascl_factors(cfrom, cto, mul);                                                  \
    for (int k = 0; k < count; ++k)                                                                        \
      for (int64_t i = 0; i < m; ++i) x[i] *= mul[k];                                                      \
  }                                                                                                        \
  /* ?geev's, ?gees's and ?gesdd's thresholds: the target scale of a matrix whose largest  \
     magnitude anrm is below sqrt(safmin) / eps or above its inverse, else 0 */            \
  AOTC_INLINE R P##_drv_scale(R anrm) {                                                    \
    const R smlnum = P##_sqrt(P##_sfmin()) / P##_eps(), bignum = (R)1 / smlnum;            \
    return anrm > (R)0 && anrm < smlnum ? smlnum : anrm > bignum ? bignum : (R)0;          \
  }
/* complex magnitudes as ?lange's ABS of a complex entry (cabs: hypot, no overflow) */
#define AOTC__LA_ABS_C64(x) hypotf((x).re, (x).im)
#define AOTC__LA_ABS_C128(x) hypot((x).re, (x).im)
AOTC__LA_SCALING(aotc_la_s, float, float, fabsf)
AOTC__LA_SCALING(aotc_la_d, double, double, fabs)
AOTC__LA_SCALING(aotc_la_c, aotc_c64, float, AOTC__LA_ABS_C64)
AOTC__LA_SCALING(aotc_la_z, aotc_c128, double, AOTC__LA_ABS_C128)

#endif /* AOTC_LINALG_H */

/* aotc_complex.h -- complex functions of c64/c128 as XLA:CPU computes them,
 * built on the real helpers of aotc_math.h (so FTZ/DAZ act as they do there):
 *   exp(a+bi) = exp(a)*cos(b) + i exp(a)*sin(b), the imaginary part +0 where
 *               b is zero (observed: exp(inf-0i) = inf+0i, not inf+NaNi)
 *   log(a+bi) = log(m) + 0.5 log1p((n/m)^2) + i atan2(b, a), m and n the
 *               larger and smaller of |a| and |b| (XLA's |z| near 1 keeps its
 *               digits); NaN if a part is NaN, inf if a part is inf, -inf at 0
 *   sin(x+iy) = sin(x)cosh(y) + i cos(x)sinh(y)
 *   cos(x+iy) = cos(x)cosh(y) - i sin(x)sinh(y)
 *   tanh, tan   as below (tan(z) = -i tanh(iz))
 */
#ifndef AOTC_COMPLEX_H
#define AOTC_COMPLEX_H

#ifndef AOTC_MATH_H
#include "aotc_math.h"
#endif

#define AOTC__DEF_COMPLEX_FN(N, CT, T, R, S)                                   \
  AOTC_INLINE CT aotc_exp_##N(CT z) {                                       \
    const T e = aotc_exp_##R(z.re);                                         \
    const T im = z.im == (T)0 ? (T)0 : e * aotc_sin_##R(z.im);               \
    return aotc_complex_##N(e * aotc_cos_##R(z.im), im);                    \
  }                                                                         \
  AOTC_INLINE CT aotc_log_##N(CT z) {                                       \
    const T angle = aotc_atan2_##R(z.im, z.re);                             \
    const T x = fabs##S(z.re), y = fabs##S(z.im);                           \
    const T mx = x > y ? x : y, mn = x > y ? y : x;                         \
    T re;                                                                   \
    if (x != x || y != y) {                                                 \
      re = x + y; /* NaN */                                                 \
    } else if (mx == (T)INFINITY) {                                         \
      re = mx;                                                              \
    } else if (mx == (T)0) {                                                \
      re = -(T)INFINITY;                                                    \
    } else {                                                                \
      const T r = mn / mx;                                                  \
      re = fma##S((T)0.5, aotc_log1p_##R(r * r), aotc_log_##R(mx));         \
    }                                                                       \
    return aotc_complex_##N(re, angle);                                     \
  }                                                                         \
  /* sin/cos(x+iy) from sinh/cosh(y) = (e^y -+ e^-y)/2, e^-y/2 as 0.5/e^y */ \
  AOTC_INLINE CT aotc_sin_##N(CT z) {                                       \
    const T e = aotc_exp_##R(z.im);                                         \
    const T h = (T)0.5 * e, hn = (T)0.5 / e;                                \
    return aotc_complex_##N(aotc_sin_##R(z.re) * (h + hn),                  \
                            aotc_cos_##R(z.re) * (h - hn));                 \
  }                                                                         \
  AOTC_INLINE CT aotc_cos_##N(CT z) {                                       \
    const T e = aotc_exp_##R(z.im);                                         \
    const T h = (T)0.5 * e, hn = (T)0.5 / e;                                \
    return aotc_complex_##N(aotc_cos_##R(z.re) * (h + hn),                  \
                            -(aotc_sin_##R(z.re) * (h - hn)));              \
  }                                                                         \
  /* tanh(a+bi) = (e^2a - e^-2a + 2i sin 2b) / (e^2a + e^-2a + 2 cos 2b), the  \
   * exponentials as expm1, cos 2b + 1 as 2cos^2 b, sin 2b as 2 sin b cos b;  \
   * +-1 where e^2a + e^-2a overflows, XLA's corner cases after */          \
  AOTC_INLINE CT aotc__tanh_##N(T a, T b) {                                 \
    const T inf = (T)INFINITY;                                              \
    const T em = aotc_expm1_##R(a + a), en = aotc_expm1_##R((T)-1 * (a + a)); \
    const T cb = aotc_cos_##R(b), sb = aotc_sin_##R(b);                     \
    const T imag_num = (T)4 * (cb * sb);                                    \
    const T sum = em + en;                                                  \
    const T denom = sum + cb * cb * (T)4;                                   \
    T re = sum == inf ? (signbit(a) ? (T)-1 : (T)1) : (em - en) / denom;    \
    T im = imag_num / denom;                                                \
    const int a_inf = fabs##S(a) == inf, sin_nan = imag_num != imag_num;    \
    if (sin_nan && !a_inf) re = (T)NAN;                                     \
    if (b == (T)0 || (a_inf && sin_nan)) im = (T)0;                         \
    return aotc_complex_##N(re, im);                                        \
  }                                                                         \
  AOTC_INLINE CT aotc_tanh_##N(CT z) { return aotc__tanh_##N(z.re, z.im); } \
  /* tan(x+yi) = -i tanh(-y + xi) */                                        \
  AOTC_INLINE CT aotc_tan_##N(CT z) {                                       \
    const CT t = aotc__tanh_##N((T)-1 * z.im, z.re);                        \
    return aotc_complex_##N(t.im, (T)-1 * t.re);                            \
  }
AOTC__DEF_COMPLEX_FN(c64, aotc_c64, float, f32, f)
AOTC__DEF_COMPLEX_FN(c128, aotc_c128, double, f64, )

#endif /* AOTC_COMPLEX_H */

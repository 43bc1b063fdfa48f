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
 * (NaN results as C's quiet NaN, aotc__cq in aotc_math.h, like every complex helper)
 * and, below those, sqrt, rsqrt, expm1, log1p, logistic, pow, atan2 and the
 * order XLA:CPU gives complex values in compare, maximum, minimum and clamp.
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
    return aotc__cq_##N(e * aotc_cos_##R(z.im), im);                    \
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
    return aotc__cq_##N(re, angle);                                     \
  }                                                                         \
  /* sin/cos(x+iy) from sinh/cosh(y) = (e^y -+ e^-y)/2, e^-y/2 as 0.5/e^y */ \
  AOTC_INLINE CT aotc_sin_##N(CT z) {                                       \
    const T e = aotc_exp_##R(z.im);                                         \
    const T h = (T)0.5 * e, hn = (T)0.5 / e;                                \
    return aotc__cq_##N(aotc_sin_##R(z.re) * (h + hn),                  \
                            aotc_cos_##R(z.re) * (h - hn));                 \
  }                                                                         \
  AOTC_INLINE CT aotc_cos_##N(CT z) {                                       \
    const T e = aotc_exp_##R(z.im);                                         \
    const T h = (T)0.5 * e, hn = (T)0.5 / e;                                \
    return aotc__cq_##N(aotc_cos_##R(z.re) * (h + hn),                  \
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
    return aotc__cq_##N(re, im);                                        \
  }                                                                         \
  AOTC_INLINE CT aotc_tanh_##N(CT z) { return aotc__tanh_##N(z.re, z.im); } \
  /* tan(x+yi) = -i tanh(-y + xi) */                                        \
  AOTC_INLINE CT aotc_tan_##N(CT z) {                                       \
    const CT t = aotc__tanh_##N((T)-1 * z.im, z.re);                        \
    return aotc__cq_##N(t.im, (T)-1 * t.re);                            \
  }
AOTC__DEF_COMPLEX_FN(c64, aotc_c64, float, f32, f)
AOTC__DEF_COMPLEX_FN(c128, aotc_c128, double, f64, )

/* sqrt, rsqrt, expm1, log1p, pow, atan2, logistic as XLA:CPU computes them:
 * sqrt is the algorithm XLA took from pearu/functional_algorithms (observed:
 * sqrt(-1+0i) is exactly i, sqrt(1-0i) is 1+0i, sqrt(inf+NaNi) is NaN+NaNi);
 * the others are the elemental emitter's (EmitComplexRsqrt, EmitComplexPower,
 * the kExpm1, kLog1p and kAtan2 cases; LogisticExpander's 1 / (1 + exp(-z))),
 * whose atan2 still uses the emitter's own sqrt and log (aotc__esqrt,
 * aotc__elog). fma where XLA:CPU's LLVM contracts a product into the add that
 * reads it; a division by a constant is a product with its reciprocal, as
 * XLA's algebraic simplifier makes it.
 *   |z| parts: mx, mn the larger and smaller of |re|, |im| (NaN if either is);
 *              s = 1 + (mn/mx)^2; where a result is NaN the special value
 *              comes from mn (0/0, inf/inf and NaN inputs)
 *   rsqrt(z) = rsqrt(mx) rsqrt(sqrt s) (cos -t/2 + i sin -t/2), t = atan2(im, re)
 *   expm1(a+bi) = expm1(a) cos b + cosm1(b) + i e^a sin b
 *   log1p(a+bi) = log1p(max(|a+1|,|b|) - 1) + 0.5 log1p((min/max)^2)
 *                 + i atan2(b, a+1)   (real part -inf where a+1 and b are 0)
 *   pow(z, c+di) = |z|^c e^(-d t) (cos q + i sin q), q = c t + d log|z|
 *   atan2(y, x)  = -i log((x + iy) / sqrt(x^2 + y^2)) in complex arithmetic
 */
#define AOTC__DEF_COMPLEX_FN2(N, CT, T, R, S)                                  \
  /* XLA's max and min of |re| and |im|: NaN if either is NaN */             \
  AOTC_INLINE void aotc__minmax_##N(CT z, T *mn, T *mx) {                   \
    const T x = fabs##S(z.re), y = fabs##S(z.im);                           \
    if (x != x || y != y) {                                                 \
      *mn = *mx = x + y;                                                    \
    } else {                                                                \
      *mx = x > y ? x : y;                                                  \
      *mn = x > y ? y : x;                                                  \
    }                                                                       \
  }                                                                         \
  /* XLA's max and min: NaN if either is NaN */                             \
  AOTC_INLINE T aotc__xmax_##N(T x, T y) { return x != x || y != y ? x + y : x > y ? x : y; } \
  AOTC_INLINE T aotc__xmin_##N(T x, T y) { return x != x || y != y ? x + y : x > y ? y : x; } \
  /* hypot(mx, mn) for mx >= mn >= 0 as XLA writes it: sqrt(2) mx where they  \
   * are equal, mx + mx r / 2 where 1 + r rounds to 1, else mx sqrt(1 + r) */ \
  AOTC_INLINE T aotc__xhypot_##N(T mx, T mn) {                              \
    const T q = mn / mx, r = q * q, sqa = sqrt##S((T)1 + r);                \
    if (mx == mn) return sqrt##S((T)2) * mx;                                \
    if (sqa == (T)1 && r > (T)0) return mx + mx * r * (T)0.5;               \
    return mx * sqa;                                                        \
  }                                                                         \
  /* sqrt as XLA:CPU computes it (the algorithm of pearu/functional_algorithms \
   * that XLA's complex sqrt is): u = sqrt((|z| + |x|) / 2) and |y| / (2u),  \
   * rescaled through sqrt|x|, sqrt|y| where u under- or overflows; the     \
   * signs from x < 0 and y < 0 (so -0 counts as +0) */                     \
  AOTC_INLINE CT aotc_sqrt_##N(CT z) {                                      \
    const T x = z.re, y = z.im, ax = fabs##S(x), ay = fabs##S(y);           \
    /* XLA's constants sqrt(2), sqrt(1 + sqrt(2)) and their product, in T;  \
     * a division by a constant is a product with its reciprocal, as XLA's  \
     * algebraic simplifier makes it */                                     \
    const T one = (T)1, two = (T)2, sq2 = sqrt##S(two);                     \
    const T sq12 = sqrt##S(one + sq2), sq12x2 = sq12 * sq2, rsq2 = one / sq2; \
    const int eq = ax == ay, gt = ax > ay, lt = ax < ay;                    \
    const T sq_ax = sqrt##S(ax), sq_ay = sqrt##S(ay);                       \
    const T mx = aotc__xmax_##N(ax, ay), mn = aotc__xmin_##N(ax, ay);       \
    const T ug = sqrt##S(aotc__xhypot_##N(mx, mn) * (T)0.5 + ax * (T)0.5);  \
    const int edge = ug == (T)0 || ug == (T)INFINITY;                       \
    const T r0 = eq ? one : lt ? ax / ay : ay / ax;                         \
    const T ar0 = fabs##S(r0);                                              \
    const T h = aotc__xhypot_##N(aotc__xmax_##N(one, ar0), aotc__xmin_##N(one, ar0)); \
    const T sq_1h = sqrt##S(one + h), sq_rh = sqrt##S(r0 + h);              \
    const T u = eq ? sq_ax * sq12 * rsq2                                    \
              : edge ? (gt ? sq_ax * (sq_1h * rsq2) : sq_ay * (sq_rh * rsq2)) : ug; \
    const T ay_u = eq ? sq_ay * ((T)1 / sq12x2)                             \
              : edge ? (gt ? sq_ay * (lt ? sq_ax / sq_ay : sq_ay / sq_ax) / (sq_1h * sq2) \
                           : sq_ay / (sq_rh * sq2))                         \
              : ay / (ug * two);                                            \
    const int yneg = y < (T)0;                                              \
    return aotc__cq_##N(x >= (T)0 ? u : ay_u,                           \
                            x < (T)0 ? (yneg ? -u : u) : (yneg ? -ay_u : ay_u)); \
  }                                                                         \
  AOTC_INLINE CT aotc_rsqrt_##N(CT z) {                                     \
    const T inf = (T)INFINITY, a = z.re, b = z.im;                          \
    T mn, mx;                                                               \
    aotc__minmax_##N(z, &mn, &mx);                                          \
    const T d = mn / mx;                                                    \
    const T sq = sqrt##S(fma##S(d, d, (T)1));                               \
    T r = aotc_rsqrt_##R(mx) * aotc_rsqrt_##R(sq);                          \
    if (r != r) r = aotc_rsqrt_##R(mn);                                     \
    const T angle = aotc_atan2_##R(b, a) * (T)-0.5;                         \
    const T c = aotc_cos_##R(angle), s = aotc_sin_##R(angle);               \
    if (a == (T)0 && b == (T)0) return aotc__cq_##N(inf, (T)NAN);       \
    if ((fabs##S(b) == inf && a != a) || fabs##S(a) == inf)                 \
      return aotc__cq_##N(copysign##S((T)0, a), copysign##S((T)0, b) * (T)-1); \
    return aotc__cq_##N(r * c, r * s);                                  \
  }                                                                         \
  /* cos(x) - 1: cephes' polynomial in x^2 where x^2 <= 0.61685 */          \
  AOTC_INLINE T aotc__cosm1_##R(T x) {                                      \
    const T xx = x * x;                                                     \
    if (xx > (T)0.61685) return aotc_cos_##R(x) + (T)-1;                    \
    T p = (T)4.7377507964246204691685E-14;                                  \
    p = fma##S(p, xx, (T)-1.1470284843425359765671E-11);                    \
    p = fma##S(p, xx, (T)2.0876754287081521758361E-9);                      \
    p = fma##S(p, xx, (T)-2.7557319214999787979814E-7);                     \
    p = fma##S(p, xx, (T)2.4801587301570552304991E-5);                      \
    p = fma##S(p, xx, (T)-1.3888888888888872993737E-3);                     \
    p = fma##S(p, xx, (T)4.1666666666666666609054E-2);                      \
    return fma##S(xx * xx, p, (T)-0.5 * xx);                                \
  }                                                                         \
  AOTC_INLINE CT aotc_expm1_##N(CT z) {                                     \
    const T em = aotc_expm1_##R(z.re), cm = aotc__cosm1_##R(z.im);          \
    const T re = fma##S(em, cm + (T)1, cm);                                 \
    const T im = z.im == (T)0 ? (T)0 : (em + (T)1) * aotc_sin_##R(z.im);    \
    return aotc__cq_##N(re, im);                                        \
  }                                                                         \
  AOTC_INLINE CT aotc_log1p_##N(CT z) {                                     \
    const T a = z.re, b = z.im, a1 = a + (T)1;                              \
    const T x = fabs##S(a1), y = fabs##S(b);                                \
    T mx, mn;                                                               \
    if (x != x || y != y) {                                                 \
      mx = mn = x + y;                                                      \
    } else {                                                                \
      mx = x > y ? x : y;                                                   \
      mn = x > y ? y : x;                                                   \
    }                                                                       \
    const T m1 = a1 > y ? a : mx - (T)1, q = mn / mx;                       \
    T re = fma##S((T)0.5, aotc_log1p_##R(q * q), aotc_log1p_##R(m1));       \
    if (re != re) re = mx == (T)0 ? -(T)INFINITY : mn;                      \
    return aotc__cq_##N(re, aotc_atan2_##R(b, a1));                     \
  }                                                                         \
  AOTC_INLINE CT aotc_pow_##N(CT x, CT y) {                                 \
    const T inf = (T)INFINITY, a = x.re, b = x.im, c = y.re, d = y.im;      \
    if (a == inf && b == (T)0 && d == (T)0 && c < (T)0) return aotc__cq_##N((T)0, (T)0); \
    if (a == inf && b == (T)0 && d == (T)0 && c > (T)0) return aotc__cq_##N(inf, (T)0); \
    if (a == (T)1 && b == (T)0) return aotc__cq_##N((T)1, (T)0);        \
    if (c == (T)0 && d == (T)0) return aotc__cq_##N((T)1, (T)0);        \
    const T m = aotc_abs_##N(x);                                            \
    if (m == (T)0 && d == (T)0 && (T)0 <= c)                                \
      return aotc__cq_##N(c == (T)0 ? (T)1 : (T)0, (T)0);               \
    const T t = aotc_atan2_##R(b, a);                                       \
    const T coeff = aotc_pow_##R(m, c) * aotc_exp_##R(-d * t);              \
    const T q = fma##S(c, t, d * aotc_log_##R(m));                          \
    return aotc__cq_##N(coeff * aotc_cos_##R(q), coeff * aotc_sin_##R(q)); \
  }                                                                         \
  /* The elemental emitter's sqrt and log, which XLA:CPU's complex atan2     \
   * still uses: sqrt|z| (cos t/2 + i sin t/2), sqrt|z| = sqrt(mx) s^0.25,    \
   * and log|z| + i atan2(im, re) with |z| = mx sqrt(s), s = 1 + (mn/mx)^2   \
   * (NaN results replaced by mn), t = atan2(im, re) */                      \
  AOTC_INLINE CT aotc__esqrt_##N(CT z) {                                    \
    const T inf = (T)INFINITY, a = z.re, b = z.im, ab = fabs##S(b);         \
    T mn, mx;                                                               \
    aotc__minmax_##N(z, &mn, &mx);                                          \
    const T d = mn / mx;                                                    \
    T r = sqrt##S(mx) * aotc_pow_##R(fma##S(d, d, (T)1), (T)0.25);          \
    if (r != r) r = mn;                                                     \
    const T angle = aotc_atan2_##R(b, a) * (T)0.5;                          \
    const T c = aotc_cos_##R(angle), s = aotc_sin_##R(angle);               \
    if (r == (T)0) return aotc_complex_##N((T)0, (T)0);                     \
    const T re = (ab == inf || a == inf) ? inf                              \
               : (a == -inf && ab != inf) ? (T)0 : r * c;                   \
    const T im = (ab == inf || a == -inf) ? copysign##S(inf, b)             \
               : r != r ? (T)NAN : s == (T)0 ? s : r * s;                   \
    return aotc_complex_##N(re, im);                                        \
  }                                                                         \
  AOTC_INLINE CT aotc__elog_##N(CT z) {                                     \
    T mn, mx;                                                               \
    aotc__minmax_##N(z, &mn, &mx);                                          \
    const T d = mn / mx;                                                    \
    T m = mx * sqrt##S(fma##S(d, d, (T)1));                                 \
    if (m != m) m = mn;                                                     \
    return aotc_complex_##N(aotc_log_##R(m), aotc_atan2_##R(z.im, z.re));   \
  }                                                                         \
  /* atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)) in complex arithmetic */ \
  AOTC_INLINE CT aotc_atan2_##N(CT y, CT x) {                               \
    const CT s = aotc_fmul_##N(x, x), t = aotc_fmul_##N(y, y);            \
    const CT r = aotc__esqrt_##N(aotc_add_##N(s, t));                       \
    const CT iy = aotc_fmul_##N(aotc_complex_##N((T)0, (T)1), y);          \
    const CT l = aotc__elog_##N(aotc_fdiv_##N(aotc_add_##N(x, iy), r));    \
    const CT r2 = aotc_fmul_##N(aotc_complex_##N((T)0, (T)-1), l);         \
    return aotc__cq_##N(r2.re, r2.im);                                      \
  }                                                                         \
  AOTC_INLINE CT aotc_logistic_##N(CT z) {                                  \
    const CT e = aotc_exp_##N(aotc_neg_##N(z));                             \
    const CT one = aotc_complex_##N((T)1, (T)0);                            \
    const CT r = aotc_fdiv_##N(one, aotc_add_##N(one, e));                 \
    return aotc__cq_##N(r.re, r.im);                                        \
  }                                                                         \
  /* XLA:CPU's order of complex values (observed): LT and GT compare the     \
   * real parts, then the imaginary parts where the real parts are equal;    \
   * LE and GE compare the real parts only. maximum(a, b) is a where         \
   * a.re >= b.re, else b; minimum(a, b) is a where a.re <= b.re, else b;    \
   * clamp(lo, x, hi) is minimum(maximum(lo, x), hi). */                    \
  AOTC_INLINE int aotc_lt_##N(CT a, CT b) {                                 \
    return a.re < b.re || (a.re == b.re && a.im < b.im);                    \
  }                                                                         \
  AOTC_INLINE int aotc_gt_##N(CT a, CT b) {                                 \
    return a.re > b.re || (a.re == b.re && a.im > b.im);                    \
  }                                                                         \
  AOTC_INLINE CT aotc_max_##N(CT a, CT b) { return a.re >= b.re ? a : b; }  \
  AOTC_INLINE CT aotc_min_##N(CT a, CT b) { return a.re <= b.re ? a : b; }  \
  AOTC_INLINE CT aotc_clamp_##N(CT lo, CT x, CT hi) {                       \
    return aotc_min_##N(aotc_max_##N(lo, x), hi);                           \
  }
AOTC__DEF_COMPLEX_FN2(c64, aotc_c64, float, f32, f)
AOTC__DEF_COMPLEX_FN2(c128, aotc_c128, double, f64, )

#endif /* AOTC_COMPLEX_H */

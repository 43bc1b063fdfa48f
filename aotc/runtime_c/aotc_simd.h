/* aotc_simd.h -- the SIMD vocabulary of generated kernels: 8 f32 lanes.
 *
 * One small set of operations per ISA (AVX2, NEON, portable C), in the manner of
 * ggml's simd-mappings.h.  The lane count is 8 everywhere, so a vectorized
 * kernel computes the same thing in the same order on every target.  Every
 * operation gives, lane by lane, exactly the bits of the scalar helper of
 * aotc_math.h it replaces: arithmetic is IEEE (no contraction: see aotc_rt.h),
 * and exp, tanh and logistic are the scalar polynomials written once below on
 * these primitives, step for step.  Kernels use it as a vector body plus a
 * scalar tail.
 */
#ifndef AOTC_SIMD_H
#define AOTC_SIMD_H

#ifndef AOTC_MATH_H
#include "aotc_math.h"
#endif

#define AOTC_V8_LANES 8

#if defined(AOTC_HAVE_AVX2)
/* ------------------------------------------------------------------ AVX2 */
typedef __m256 aotc_v8f; /* 8 floats */
typedef __m256 aotc_v8m; /* 8 lane masks: all ones or all zeros */
AOTC_INLINE aotc_v8f aotc_v8_load(const float* p) { return _mm256_loadu_ps(p); }
AOTC_INLINE void aotc_v8_store(float* p, aotc_v8f a) { _mm256_storeu_ps(p, a); }
AOTC_INLINE aotc_v8f aotc_v8_set1(float x) { return _mm256_set1_ps(x); }
AOTC_INLINE aotc_v8f aotc_v8_add(aotc_v8f a, aotc_v8f b) { return _mm256_add_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_sub(aotc_v8f a, aotc_v8f b) { return _mm256_sub_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_mul(aotc_v8f a, aotc_v8f b) { return _mm256_mul_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_div(aotc_v8f a, aotc_v8f b) { return _mm256_div_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_sqrt(aotc_v8f a) { return _mm256_sqrt_ps(a); }
AOTC_INLINE aotc_v8f aotc_v8_round_even(aotc_v8f a) {
  return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
AOTC_INLINE aotc_v8m aotc_v8_lt(aotc_v8f a, aotc_v8f b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
AOTC_INLINE aotc_v8m aotc_v8_gt(aotc_v8f a, aotc_v8f b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
AOTC_INLINE aotc_v8m aotc_v8_eq(aotc_v8f a, aotc_v8f b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
AOTC_INLINE aotc_v8m aotc_v8_isnan(aotc_v8f a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
AOTC_INLINE aotc_v8m aotc_v8_signbit(aotc_v8f a) {
  return _mm256_castsi256_ps(_mm256_srai_epi32(_mm256_castps_si256(a), 31));
}
AOTC_INLINE aotc_v8m aotc_v8_and(aotc_v8m a, aotc_v8m b) { return _mm256_and_ps(a, b); }
AOTC_INLINE aotc_v8m aotc_v8_or(aotc_v8m a, aotc_v8m b) { return _mm256_or_ps(a, b); }
AOTC_INLINE aotc_v8m aotc_v8_andnot(aotc_v8m a, aotc_v8m b) { return _mm256_andnot_ps(a, b); } /* ~a & b */
/* m ? a : b, lane by lane */
AOTC_INLINE aotc_v8f aotc_v8_select(aotc_v8m m, aotc_v8f a, aotc_v8f b) { return _mm256_blendv_ps(b, a, m); }
AOTC_INLINE aotc_v8f aotc_v8_abs(aotc_v8f a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
AOTC_INLINE aotc_v8f aotc_v8_neg(aotc_v8f a) { return _mm256_xor_ps(_mm256_set1_ps(-0.0f), a); }
/* 2^n for integer-valued n in [-126, 127]: the exponent field built from bits */
AOTC_INLINE aotc_v8f aotc_v8_pow2i(aotc_v8f n) {
  __m256i e = _mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127));
  return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}
#elif defined(AOTC_HAVE_NEON)
/* ------------------------------------------------------------------ NEON (two q registers) */
typedef struct { float32x4_t lo, hi; } aotc_v8f;
typedef struct { uint32x4_t lo, hi; } aotc_v8m;
#define AOTC__V8F(LO, HI) do { aotc_v8f r_; r_.lo = (LO); r_.hi = (HI); return r_; } while (0)
#define AOTC__V8M(LO, HI) do { aotc_v8m r_; r_.lo = (LO); r_.hi = (HI); return r_; } while (0)
AOTC_INLINE aotc_v8f aotc_v8_load(const float* p) { AOTC__V8F(vld1q_f32(p), vld1q_f32(p + 4)); }
AOTC_INLINE void aotc_v8_store(float* p, aotc_v8f a) { vst1q_f32(p, a.lo); vst1q_f32(p + 4, a.hi); }
AOTC_INLINE aotc_v8f aotc_v8_set1(float x) { AOTC__V8F(vdupq_n_f32(x), vdupq_n_f32(x)); }
AOTC_INLINE aotc_v8f aotc_v8_add(aotc_v8f a, aotc_v8f b) { AOTC__V8F(vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_sub(aotc_v8f a, aotc_v8f b) { AOTC__V8F(vsubq_f32(a.lo, b.lo), vsubq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_mul(aotc_v8f a, aotc_v8f b) { AOTC__V8F(vmulq_f32(a.lo, b.lo), vmulq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_div(aotc_v8f a, aotc_v8f b) { AOTC__V8F(vdivq_f32(a.lo, b.lo), vdivq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_sqrt(aotc_v8f a) { AOTC__V8F(vsqrtq_f32(a.lo), vsqrtq_f32(a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_round_even(aotc_v8f a) { AOTC__V8F(vrndnq_f32(a.lo), vrndnq_f32(a.hi)); }
AOTC_INLINE aotc_v8m aotc_v8_lt(aotc_v8f a, aotc_v8f b) { AOTC__V8M(vcltq_f32(a.lo, b.lo), vcltq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8m aotc_v8_gt(aotc_v8f a, aotc_v8f b) { AOTC__V8M(vcgtq_f32(a.lo, b.lo), vcgtq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8m aotc_v8_eq(aotc_v8f a, aotc_v8f b) { AOTC__V8M(vceqq_f32(a.lo, b.lo), vceqq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8m aotc_v8_isnan(aotc_v8f a) {
  AOTC__V8M(vmvnq_u32(vceqq_f32(a.lo, a.lo)), vmvnq_u32(vceqq_f32(a.hi, a.hi)));
}
AOTC_INLINE aotc_v8m aotc_v8_signbit(aotc_v8f a) {
  AOTC__V8M(vreinterpretq_u32_s32(vshrq_n_s32(vreinterpretq_s32_f32(a.lo), 31)),
            vreinterpretq_u32_s32(vshrq_n_s32(vreinterpretq_s32_f32(a.hi), 31)));
}
AOTC_INLINE aotc_v8m aotc_v8_and(aotc_v8m a, aotc_v8m b) { AOTC__V8M(vandq_u32(a.lo, b.lo), vandq_u32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8m aotc_v8_or(aotc_v8m a, aotc_v8m b) { AOTC__V8M(vorrq_u32(a.lo, b.lo), vorrq_u32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8m aotc_v8_andnot(aotc_v8m a, aotc_v8m b) { AOTC__V8M(vbicq_u32(b.lo, a.lo), vbicq_u32(b.hi, a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_select(aotc_v8m m, aotc_v8f a, aotc_v8f b) {
  AOTC__V8F(vbslq_f32(m.lo, a.lo, b.lo), vbslq_f32(m.hi, a.hi, b.hi));
}
AOTC_INLINE aotc_v8f aotc_v8_abs(aotc_v8f a) { AOTC__V8F(vabsq_f32(a.lo), vabsq_f32(a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_neg(aotc_v8f a) { AOTC__V8F(vnegq_f32(a.lo), vnegq_f32(a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_pow2i(aotc_v8f n) {
  int32x4_t b = vdupq_n_s32(127);
  AOTC__V8F(vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n.lo), b), 23)),
            vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n.hi), b), 23)));
}
#else
/* ------------------------------------------------------------------ portable C */
typedef struct { float v[8]; } aotc_v8f;
typedef struct { uint32_t v[8]; } aotc_v8m;
#define AOTC__V8_MAP(T, EXPR) do { T r_; for (int l_ = 0; l_ < 8; ++l_) r_.v[l_] = (EXPR); return r_; } while (0)
AOTC_INLINE aotc_v8f aotc_v8_load(const float* p) { AOTC__V8_MAP(aotc_v8f, p[l_]); }
AOTC_INLINE void aotc_v8_store(float* p, aotc_v8f a) { for (int l = 0; l < 8; ++l) p[l] = a.v[l]; }
AOTC_INLINE aotc_v8f aotc_v8_set1(float x) { AOTC__V8_MAP(aotc_v8f, x); }
AOTC_INLINE aotc_v8f aotc_v8_add(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, a.v[l_] + b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_sub(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, a.v[l_] - b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_mul(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, a.v[l_] * b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_div(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, a.v[l_] / b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_sqrt(aotc_v8f a) { AOTC__V8_MAP(aotc_v8f, sqrtf(a.v[l_])); }
AOTC_INLINE aotc_v8f aotc_v8_round_even(aotc_v8f a) { AOTC__V8_MAP(aotc_v8f, nearbyintf(a.v[l_])); }
AOTC_INLINE aotc_v8m aotc_v8_lt(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8m, a.v[l_] < b.v[l_] ? ~0u : 0u); }
AOTC_INLINE aotc_v8m aotc_v8_gt(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8m, a.v[l_] > b.v[l_] ? ~0u : 0u); }
AOTC_INLINE aotc_v8m aotc_v8_eq(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8m, a.v[l_] == b.v[l_] ? ~0u : 0u); }
AOTC_INLINE aotc_v8m aotc_v8_isnan(aotc_v8f a) { AOTC__V8_MAP(aotc_v8m, a.v[l_] != a.v[l_] ? ~0u : 0u); }
AOTC_INLINE aotc_v8m aotc_v8_signbit(aotc_v8f a) {
  AOTC__V8_MAP(aotc_v8m, (aotc_bitcast_f32_u32(a.v[l_]) >> 31) ? ~0u : 0u);
}
AOTC_INLINE aotc_v8m aotc_v8_and(aotc_v8m a, aotc_v8m b) { AOTC__V8_MAP(aotc_v8m, a.v[l_] & b.v[l_]); }
AOTC_INLINE aotc_v8m aotc_v8_or(aotc_v8m a, aotc_v8m b) { AOTC__V8_MAP(aotc_v8m, a.v[l_] | b.v[l_]); }
AOTC_INLINE aotc_v8m aotc_v8_andnot(aotc_v8m a, aotc_v8m b) { AOTC__V8_MAP(aotc_v8m, ~a.v[l_] & b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_select(aotc_v8m m, aotc_v8f a, aotc_v8f b) {
  AOTC__V8_MAP(aotc_v8f, m.v[l_] ? a.v[l_] : b.v[l_]);
}
AOTC_INLINE aotc_v8f aotc_v8_abs(aotc_v8f a) { AOTC__V8_MAP(aotc_v8f, fabsf(a.v[l_])); }
AOTC_INLINE aotc_v8f aotc_v8_neg(aotc_v8f a) { AOTC__V8_MAP(aotc_v8f, -a.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_pow2i(aotc_v8f n) {
  AOTC__V8_MAP(aotc_v8f, aotc_bitcast_u32_f32((uint32_t)((int32_t)n.v[l_] + 127) << 23));
}
#endif

/* ------------------------------------------------------------------ written once on the primitives */

/* aotc_ftz_f32, lane by lane */
AOTC_INLINE aotc_v8f aotc_v8_ftz(aotc_v8f a) {
  aotc_v8m tiny = aotc_v8_lt(aotc_v8_abs(a), aotc_v8_set1(AOTC__MINNORM_f32));
  return aotc_v8_select(tiny, aotc_v8_mul(a, aotc_v8_set1(0.0f)), a);
}

/* aotc_max_f32 / aotc_min_f32: NaN from either side, max(-0,+0) = +0, min(+0,-0) = -0 */
AOTC_INLINE aotc_v8f aotc_v8_max(aotc_v8f a, aotc_v8f b) {
  a = aotc_v8_ftz(a);
  b = aotc_v8_ftz(b);
  aotc_v8m take_a = aotc_v8_or(aotc_v8_or(aotc_v8_gt(a, b), aotc_v8_andnot(aotc_v8_signbit(a), aotc_v8_eq(a, b))),
                               aotc_v8_isnan(a));
  return aotc_v8_select(take_a, a, b);
}
AOTC_INLINE aotc_v8f aotc_v8_min(aotc_v8f a, aotc_v8f b) {
  a = aotc_v8_ftz(a);
  b = aotc_v8_ftz(b);
  aotc_v8m take_a = aotc_v8_or(aotc_v8_or(aotc_v8_lt(a, b), aotc_v8_and(aotc_v8_signbit(a), aotc_v8_eq(a, b))),
                               aotc_v8_isnan(a));
  return aotc_v8_select(take_a, a, b);
}

/* aotc__exp_f32, step for step */
AOTC_INLINE aotc_v8f aotc_v8__exp(aotc_v8f x) {
  const aotc_v8f hi = aotc_v8_set1(88.72283935546875f), lo = aotc_v8_set1(-87.33654022216797f);
  aotc_v8m nan = aotc_v8_isnan(x);
  aotc_v8f xc = aotc_v8_select(aotc_v8_gt(x, hi), hi,
                               aotc_v8_select(aotc_v8_lt(x, lo), lo, aotc_v8_select(nan, aotc_v8_set1(0.0f), x)));
  aotc_v8f n = aotc_v8_round_even(aotc_v8_mul(xc, aotc_v8_set1(1.44269504088896341f)));
  aotc_v8f r = aotc_v8_sub(xc, aotc_v8_mul(n, aotc_v8_set1(0.693359375f)));
  r = aotc_v8_sub(r, aotc_v8_mul(n, aotc_v8_set1(-2.12194440e-4f)));
  aotc_v8f r2 = aotc_v8_mul(r, r);
  aotc_v8f p = aotc_v8_set1(1.9875691500e-4f);
  p = aotc_v8_add(aotc_v8_mul(p, r), aotc_v8_set1(1.3981999507e-3f));
  p = aotc_v8_add(aotc_v8_mul(p, r), aotc_v8_set1(8.3334519073e-3f));
  p = aotc_v8_add(aotc_v8_mul(p, r), aotc_v8_set1(4.1665795894e-2f));
  p = aotc_v8_add(aotc_v8_mul(p, r), aotc_v8_set1(1.6666665459e-1f));
  p = aotc_v8_add(aotc_v8_mul(p, r), aotc_v8_set1(5.0000001201e-1f));
  p = aotc_v8_add(aotc_v8_add(aotc_v8_mul(p, r2), r), aotc_v8_set1(1.0f));
  aotc_v8m top = aotc_v8_gt(n, aotc_v8_set1(127.0f));
  p = aotc_v8_select(top, aotc_v8_mul(p, aotc_v8_set1(2.0f)), p);
  n = aotc_v8_select(top, aotc_v8_set1(127.0f), n);
  aotc_v8f y = aotc_v8_mul(p, aotc_v8_pow2i(n));
  y = aotc_v8_select(aotc_v8_gt(x, hi), aotc_v8_set1((float)INFINITY), y);
  y = aotc_v8_select(aotc_v8_lt(x, lo), aotc_v8_set1(0.0f), y);
  return aotc_v8_select(nan, x, y);
}

/* aotc__tanh_f32, step for step */
AOTC_INLINE aotc_v8f aotc_v8__tanh(aotc_v8f x) {
  const aotc_v8f bound = aotc_v8_set1(7.90531110763549805f), nbound = aotc_v8_set1(-7.90531110763549805f);
  aotc_v8f xc = aotc_v8_select(aotc_v8_gt(x, bound), bound, aotc_v8_select(aotc_v8_lt(x, nbound), nbound, x));
  aotc_v8f x2 = aotc_v8_mul(xc, xc);
  aotc_v8f p = aotc_v8_set1(-2.76076847742355e-16f);
  p = aotc_v8_add(aotc_v8_mul(p, x2), aotc_v8_set1(2.00018790482477e-13f));
  p = aotc_v8_add(aotc_v8_mul(p, x2), aotc_v8_set1(-8.60467152213735e-11f));
  p = aotc_v8_add(aotc_v8_mul(p, x2), aotc_v8_set1(5.12229709037114e-08f));
  p = aotc_v8_add(aotc_v8_mul(p, x2), aotc_v8_set1(1.48572235717979e-05f));
  p = aotc_v8_add(aotc_v8_mul(p, x2), aotc_v8_set1(6.37261928875436e-04f));
  p = aotc_v8_add(aotc_v8_mul(p, x2), aotc_v8_set1(4.89352455891786e-03f));
  p = aotc_v8_mul(p, xc);
  aotc_v8f q = aotc_v8_set1(1.19825839466702e-06f);
  q = aotc_v8_add(aotc_v8_mul(q, x2), aotc_v8_set1(1.18534705686654e-04f));
  q = aotc_v8_add(aotc_v8_mul(q, x2), aotc_v8_set1(2.26843463243900e-03f));
  q = aotc_v8_add(aotc_v8_mul(q, x2), aotc_v8_set1(4.89352518554385e-03f));
  aotc_v8f y = aotc_v8_div(p, q);
  aotc_v8m keep = aotc_v8_and(aotc_v8_lt(x, aotc_v8_set1(0.0004f)), aotc_v8_gt(x, aotc_v8_set1(-0.0004f)));
  return aotc_v8_select(keep, x, y);
}

/* the vector forms of the f32 helpers generated kernels call (same names, `v8` for `f32`) */
AOTC_INLINE aotc_v8f aotc_v8_exp(aotc_v8f a) { return aotc_v8_ftz(aotc_v8__exp(a)); }
AOTC_INLINE aotc_v8f aotc_v8_tanh(aotc_v8f a) { return aotc_v8_ftz(aotc_v8__tanh(aotc_v8_ftz(a))); }
AOTC_INLINE aotc_v8f aotc_v8_logistic(aotc_v8f a) {
  return aotc_v8_ftz(aotc_v8_div(aotc_v8_set1(1.0f), aotc_v8_add(aotc_v8_set1(1.0f), aotc_v8__exp(aotc_v8_neg(a)))));
}
AOTC_INLINE aotc_v8f aotc_v8_rsqrt(aotc_v8f a) { return aotc_v8_div(aotc_v8_set1(1.0f), aotc_v8_sqrt(a)); }

#endif /* AOTC_SIMD_H */

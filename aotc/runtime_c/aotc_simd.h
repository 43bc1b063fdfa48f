/* aotc_simd.h -- the SIMD vocabulary of generated kernels, f32 lanes.
 *
 * One small set of primitives per ISA, in the manner of ggml's simd-mappings.h,
 * at two widths:
 *   - aotc_v8*: 8 lanes on every target (AVX2, also on AVX-512 hosts; NEON as two
 *     q registers; portable C).  Loops whose lanes carry state, such as the
 *     8 partial sums of a reduction, use it, so they compute the same thing in
 *     the same order on every target;
 *   - aotc_vf*: the widest the target has, for loops whose lanes are
 *     independent elements (maps): 16 lanes (zmm) with AVX-512F, otherwise the
 *     8-lane type under another name.  AOTC_VF_LANES is its width.
 * Every operation gives, lane by lane, exactly the bits of the scalar helper of
 * aotc_math.h it replaces: arithmetic is IEEE (no contraction: see aotc_rt.h;
 * fma only where the scalar helper calls fmaf), and exp, log, tanh, erf and
 * logistic are the scalar polynomials written once below on the primitives,
 * step for step (exp and tanh leave out selects that give nothing new on any
 * input, checked on every f32 by tests/runtime_c).  Kernels use it as a vector
 * body plus a scalar tail.
 */
#ifndef AOTC_SIMD_H
#define AOTC_SIMD_H

#ifndef AOTC_MATH_H
#include "aotc_math.h"
#endif

#define AOTC_V8_LANES 8

/* A read ahead of a long input stream (kernel/prefetch.py, prefetch_streams), a few lines
 * beyond what the loop reads now.  Zen 4's hardware prefetch fell behind a sum of 16M f32
 * read as one zmm per line (2.3 ms against 1.9-2.0 with the same loop in ymm, and 2.0 with
 * this hint), while AVX2 gained nothing from it: an instruction only with AVX-512. */
#if defined(AOTC_HAVE_AVX512F)
#define AOTC_PREFETCH_AHEAD(p) AOTC_PREFETCH_R(p)
#else
#define AOTC_PREFETCH_AHEAD(p) ((void)(p))
#endif

#if defined(AOTC_HAVE_AVX2)
/* ------------------------------------------------------------------ AVX2 */
typedef __m256 aotc_v8f; /* 8 floats */
typedef __m256 aotc_v8m; /* 8 lane masks: all ones or all zeros */
AOTC_INLINE aotc_v8f aotc_v8_load(const float* p) { return _mm256_loadu_ps(p); }
AOTC_INLINE void aotc_v8_store(float* p, aotc_v8f a) { _mm256_storeu_ps(p, a); }
/* a non-temporal store (kernel/stream.py) where p is 32-byte aligned, a plain one elsewhere;
 * the kernel ends with aotc_stream_fence() */
AOTC_INLINE void aotc_v8_stream(float* p, aotc_v8f a) {
  if (((uintptr_t)p & 31u) == 0) _mm256_stream_ps(p, a);
  else _mm256_storeu_ps(p, a);
}
AOTC_INLINE void aotc_stream_fence(void) { _mm_sfence(); }
AOTC_INLINE aotc_v8f aotc_v8_set1(float x) { return _mm256_set1_ps(x); }
AOTC_INLINE aotc_v8f aotc_v8_add(aotc_v8f a, aotc_v8f b) { return _mm256_add_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_sub(aotc_v8f a, aotc_v8f b) { return _mm256_sub_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_mul(aotc_v8f a, aotc_v8f b) { return _mm256_mul_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_div(aotc_v8f a, aotc_v8f b) { return _mm256_div_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_sqrt(aotc_v8f a) { return _mm256_sqrt_ps(a); }
/* the hardware estimate of 1/sqrt (aotc__rsqrt_f32) */
AOTC_INLINE aotc_v8f aotc_v8_rsqrt_est(aotc_v8f a) { return _mm256_rsqrt_ps(a); }
AOTC_INLINE aotc_v8f aotc_v8_fma(aotc_v8f a, aotc_v8f b, aotc_v8f c) { return _mm256_fmadd_ps(a, b, c); }
AOTC_INLINE aotc_v8f aotc_v8_floor(aotc_v8f a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
/* a < b ? a : b and a > b ? a : b for numbers; NaN lanes: either operand */
AOTC_INLINE aotc_v8f aotc_v8_lesser(aotc_v8f a, aotc_v8f b) { return _mm256_min_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_greater(aotc_v8f a, aotc_v8f b) { return _mm256_max_ps(a, b); }
/* the bits of a & b and of a | b */
AOTC_INLINE aotc_v8f aotc_v8_both(aotc_v8f a, aotc_v8f b) { return _mm256_and_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_either(aotc_v8f a, aotc_v8f b) { return _mm256_or_ps(a, b); }
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
/* a > b ? a : b and a < b ? a : b as C evaluates them: b when they are equal or either is
 * NaN (maxps/minps are defined so) */
AOTC_INLINE aotc_v8f aotc_v8_pick_gt(aotc_v8f a, aotc_v8f b) { return _mm256_max_ps(a, b); }
AOTC_INLINE aotc_v8f aotc_v8_pick_lt(aotc_v8f a, aotc_v8f b) { return _mm256_min_ps(a, b); }
AOTC_INLINE aotc_v8m aotc_v8_ge(aotc_v8f a, aotc_v8f b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
/* m ? a : +0 */
AOTC_INLINE aotc_v8f aotc_v8_keep(aotc_v8m m, aotc_v8f a) { return _mm256_and_ps(m, a); }
/* the bits of f, all ones (a NaN) where x is NaN */
AOTC_INLINE aotc_v8f aotc_v8_flag_nan(aotc_v8f f, aotc_v8f x) { return _mm256_or_ps(f, _mm256_cmp_ps(x, x, _CMP_UNORD_Q)); }
AOTC_INLINE aotc_v8f aotc_v8_abs(aotc_v8f a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
AOTC_INLINE aotc_v8f aotc_v8_neg(aotc_v8f a) { return _mm256_xor_ps(_mm256_set1_ps(-0.0f), a); }
/* 2^n for integer-valued n in [-126, 127]: the exponent field built from bits */
#define AOTC__POW2I_BIAS 8388735.0f /* 2^23 + 127 */
AOTC_INLINE aotc_v8f aotc_v8_pow2i(aotc_v8f n) {
  /* n + 2^23 + 127 is exact and holds n + 127 in its low mantissa bits: one add, where a
   * conversion and an integer add were two instructions (exp: 4% faster on a Zen 3) */
  __m256i e = _mm256_castps_si256(_mm256_add_ps(n, _mm256_set1_ps(AOTC__POW2I_BIAS)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}
/* for a positive normal a: the exponent e and the mantissa m in [1/2, 1), a = m 2^e */
AOTC_INLINE aotc_v8f aotc_v8_frexp_e(aotc_v8f a) {
  __m256i u = _mm256_srli_epi32(_mm256_castps_si256(a), 23);
  return _mm256_cvtepi32_ps(_mm256_sub_epi32(u, _mm256_set1_epi32(126)));
}
AOTC_INLINE aotc_v8f aotc_v8_frexp_m(aotc_v8f a) {
  __m256i u = _mm256_and_si256(_mm256_castps_si256(a), _mm256_set1_epi32((int)0x807fffffu));
  return _mm256_castsi256_ps(_mm256_or_si256(u, _mm256_set1_epi32(0x3f000000)));
}
/* copysign(1, a) */
AOTC_INLINE aotc_v8f aotc_v8_sign1(aotc_v8f a) {
  return _mm256_or_ps(_mm256_and_ps(a, _mm256_set1_ps(-0.0f)), _mm256_set1_ps(1.0f));
}
#elif defined(AOTC_HAVE_NEON)
/* ------------------------------------------------------------------ NEON (two q registers) */
typedef struct { float32x4_t lo, hi; } aotc_v8f;
typedef struct { uint32x4_t lo, hi; } aotc_v8m;
#define AOTC__V8F(LO, HI) do { aotc_v8f r_; r_.lo = (LO); r_.hi = (HI); return r_; } while (0)
#define AOTC__V8M(LO, HI) do { aotc_v8m r_; r_.lo = (LO); r_.hi = (HI); return r_; } while (0)
AOTC_INLINE aotc_v8f aotc_v8_load(const float* p) { AOTC__V8F(vld1q_f32(p), vld1q_f32(p + 4)); }
AOTC_INLINE void aotc_v8_store(float* p, aotc_v8f a) { vst1q_f32(p, a.lo); vst1q_f32(p + 4, a.hi); }
/* no non-temporal store in the NEON intrinsics: plain stores, nothing to fence */
#define aotc_v8_stream aotc_v8_store
AOTC_INLINE void aotc_stream_fence(void) {}
AOTC_INLINE aotc_v8f aotc_v8_set1(float x) { AOTC__V8F(vdupq_n_f32(x), vdupq_n_f32(x)); }
AOTC_INLINE aotc_v8f aotc_v8_add(aotc_v8f a, aotc_v8f b) { AOTC__V8F(vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_sub(aotc_v8f a, aotc_v8f b) { AOTC__V8F(vsubq_f32(a.lo, b.lo), vsubq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_mul(aotc_v8f a, aotc_v8f b) { AOTC__V8F(vmulq_f32(a.lo, b.lo), vmulq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_div(aotc_v8f a, aotc_v8f b) { AOTC__V8F(vdivq_f32(a.lo, b.lo), vdivq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_sqrt(aotc_v8f a) { AOTC__V8F(vsqrtq_f32(a.lo), vsqrtq_f32(a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_round_even(aotc_v8f a) { AOTC__V8F(vrndnq_f32(a.lo), vrndnq_f32(a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_fma(aotc_v8f a, aotc_v8f b, aotc_v8f c) {
  AOTC__V8F(vfmaq_f32(c.lo, a.lo, b.lo), vfmaq_f32(c.hi, a.hi, b.hi));
}
AOTC_INLINE aotc_v8f aotc_v8_floor(aotc_v8f a) { AOTC__V8F(vrndmq_f32(a.lo), vrndmq_f32(a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_lesser(aotc_v8f a, aotc_v8f b) { AOTC__V8F(vminq_f32(a.lo, b.lo), vminq_f32(a.hi, b.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_greater(aotc_v8f a, aotc_v8f b) { AOTC__V8F(vmaxq_f32(a.lo, b.lo), vmaxq_f32(a.hi, b.hi)); }
AOTC_INLINE float32x4_t aotc__q_and(float32x4_t a, float32x4_t b) {
  return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
AOTC_INLINE float32x4_t aotc__q_or(float32x4_t a, float32x4_t b) {
  return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
AOTC_INLINE aotc_v8f aotc_v8_both(aotc_v8f a, aotc_v8f b) { AOTC__V8F(aotc__q_and(a.lo, b.lo), aotc__q_and(a.hi, b.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_either(aotc_v8f a, aotc_v8f b) { AOTC__V8F(aotc__q_or(a.lo, b.lo), aotc__q_or(a.hi, b.hi)); }
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
AOTC_INLINE aotc_v8f aotc_v8_pick_gt(aotc_v8f a, aotc_v8f b) {
  AOTC__V8F(vbslq_f32(vcgtq_f32(a.lo, b.lo), a.lo, b.lo), vbslq_f32(vcgtq_f32(a.hi, b.hi), a.hi, b.hi));
}
AOTC_INLINE aotc_v8f aotc_v8_pick_lt(aotc_v8f a, aotc_v8f b) {
  AOTC__V8F(vbslq_f32(vcltq_f32(a.lo, b.lo), a.lo, b.lo), vbslq_f32(vcltq_f32(a.hi, b.hi), a.hi, b.hi));
}
AOTC_INLINE aotc_v8m aotc_v8_ge(aotc_v8f a, aotc_v8f b) { AOTC__V8M(vcgeq_f32(a.lo, b.lo), vcgeq_f32(a.hi, b.hi)); }
AOTC_INLINE float32x4_t aotc__q_keep(uint32x4_t m, float32x4_t a) {
  return vreinterpretq_f32_u32(vandq_u32(m, vreinterpretq_u32_f32(a)));
}
AOTC_INLINE aotc_v8f aotc_v8_keep(aotc_v8m m, aotc_v8f a) { AOTC__V8F(aotc__q_keep(m.lo, a.lo), aotc__q_keep(m.hi, a.hi)); }
AOTC_INLINE float32x4_t aotc__q_flag_nan(float32x4_t f, float32x4_t x) {
  return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(f), vmvnq_u32(vceqq_f32(x, x))));
}
AOTC_INLINE aotc_v8f aotc_v8_flag_nan(aotc_v8f f, aotc_v8f x) {
  AOTC__V8F(aotc__q_flag_nan(f.lo, x.lo), aotc__q_flag_nan(f.hi, x.hi));
}
AOTC_INLINE aotc_v8f aotc_v8_abs(aotc_v8f a) { AOTC__V8F(vabsq_f32(a.lo), vabsq_f32(a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_neg(aotc_v8f a) { AOTC__V8F(vnegq_f32(a.lo), vnegq_f32(a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_pow2i(aotc_v8f n) {
  int32x4_t b = vdupq_n_s32(127);
  AOTC__V8F(vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n.lo), b), 23)),
            vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n.hi), b), 23)));
}
AOTC_INLINE float32x4_t aotc__q_frexp_e(float32x4_t a) {
  int32x4_t u = vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_f32(a), 23));
  return vcvtq_f32_s32(vsubq_s32(u, vdupq_n_s32(126)));
}
AOTC_INLINE float32x4_t aotc__q_frexp_m(float32x4_t a) {
  uint32x4_t u = vandq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0x807fffffu));
  return vreinterpretq_f32_u32(vorrq_u32(u, vdupq_n_u32(0x3f000000u)));
}
AOTC_INLINE float32x4_t aotc__q_sign1(float32x4_t a) {
  uint32x4_t s = vandq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0x80000000u));
  return vreinterpretq_f32_u32(vorrq_u32(s, vdupq_n_u32(0x3f800000u)));
}
AOTC_INLINE aotc_v8f aotc_v8_frexp_e(aotc_v8f a) { AOTC__V8F(aotc__q_frexp_e(a.lo), aotc__q_frexp_e(a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_frexp_m(aotc_v8f a) { AOTC__V8F(aotc__q_frexp_m(a.lo), aotc__q_frexp_m(a.hi)); }
AOTC_INLINE aotc_v8f aotc_v8_sign1(aotc_v8f a) { AOTC__V8F(aotc__q_sign1(a.lo), aotc__q_sign1(a.hi)); }
#else
/* ------------------------------------------------------------------ portable C */
typedef struct { float v[8]; } aotc_v8f;
typedef struct { uint32_t v[8]; } aotc_v8m;
#define AOTC__V8_MAP(T, EXPR) do { T r_; for (int l_ = 0; l_ < 8; ++l_) r_.v[l_] = (EXPR); return r_; } while (0)
AOTC_INLINE aotc_v8f aotc_v8_load(const float* p) { AOTC__V8_MAP(aotc_v8f, p[l_]); }
AOTC_INLINE void aotc_v8_store(float* p, aotc_v8f a) { for (int l = 0; l < 8; ++l) p[l] = a.v[l]; }
/* portable C has no non-temporal store: plain stores, nothing to fence */
#define aotc_v8_stream aotc_v8_store
AOTC_INLINE void aotc_stream_fence(void) {}
AOTC_INLINE aotc_v8f aotc_v8_set1(float x) { AOTC__V8_MAP(aotc_v8f, x); }
AOTC_INLINE aotc_v8f aotc_v8_add(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, a.v[l_] + b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_sub(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, a.v[l_] - b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_mul(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, a.v[l_] * b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_div(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, a.v[l_] / b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_sqrt(aotc_v8f a) { AOTC__V8_MAP(aotc_v8f, sqrtf(a.v[l_])); }
#if defined(AOTC__RSQRT_HW)
AOTC_INLINE aotc_v8f aotc_v8_rsqrt_est(aotc_v8f a) {
  AOTC__V8_MAP(aotc_v8f, _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(a.v[l_]))));
}
#endif
AOTC_INLINE aotc_v8f aotc_v8_round_even(aotc_v8f a) { AOTC__V8_MAP(aotc_v8f, nearbyintf(a.v[l_])); }
AOTC_INLINE aotc_v8f aotc_v8_fma(aotc_v8f a, aotc_v8f b, aotc_v8f c) { AOTC__V8_MAP(aotc_v8f, fmaf(a.v[l_], b.v[l_], c.v[l_])); }
AOTC_INLINE aotc_v8f aotc_v8_floor(aotc_v8f a) { AOTC__V8_MAP(aotc_v8f, floorf(a.v[l_])); }
AOTC_INLINE aotc_v8f aotc_v8_lesser(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, a.v[l_] < b.v[l_] ? a.v[l_] : b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_greater(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, a.v[l_] > b.v[l_] ? a.v[l_] : b.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_both(aotc_v8f a, aotc_v8f b) {
  AOTC__V8_MAP(aotc_v8f, aotc_bitcast_u32_f32(aotc_bitcast_f32_u32(a.v[l_]) & aotc_bitcast_f32_u32(b.v[l_])));
}
AOTC_INLINE aotc_v8f aotc_v8_either(aotc_v8f a, aotc_v8f b) {
  AOTC__V8_MAP(aotc_v8f, aotc_bitcast_u32_f32(aotc_bitcast_f32_u32(a.v[l_]) | aotc_bitcast_f32_u32(b.v[l_])));
}
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
AOTC_INLINE aotc_v8f aotc_v8_pick_gt(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, aotc_pick_gt_f32(a.v[l_], b.v[l_])); }
AOTC_INLINE aotc_v8f aotc_v8_pick_lt(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8f, aotc_pick_lt_f32(a.v[l_], b.v[l_])); }
AOTC_INLINE aotc_v8m aotc_v8_ge(aotc_v8f a, aotc_v8f b) { AOTC__V8_MAP(aotc_v8m, a.v[l_] >= b.v[l_] ? ~0u : 0u); }
AOTC_INLINE aotc_v8f aotc_v8_keep(aotc_v8m m, aotc_v8f a) { AOTC__V8_MAP(aotc_v8f, m.v[l_] ? a.v[l_] : 0.0f); }
AOTC_INLINE aotc_v8f aotc_v8_flag_nan(aotc_v8f f, aotc_v8f x) { AOTC__V8_MAP(aotc_v8f, aotc_flag_nan_f32(f.v[l_], x.v[l_])); }
AOTC_INLINE aotc_v8f aotc_v8_abs(aotc_v8f a) { AOTC__V8_MAP(aotc_v8f, fabsf(a.v[l_])); }
AOTC_INLINE aotc_v8f aotc_v8_neg(aotc_v8f a) { AOTC__V8_MAP(aotc_v8f, -a.v[l_]); }
AOTC_INLINE aotc_v8f aotc_v8_pow2i(aotc_v8f n) {
  AOTC__V8_MAP(aotc_v8f, aotc_bitcast_u32_f32((uint32_t)((int32_t)n.v[l_] + 127) << 23));
}
AOTC_INLINE aotc_v8f aotc_v8_frexp_e(aotc_v8f a) {
  AOTC__V8_MAP(aotc_v8f, (float)((int32_t)(aotc_bitcast_f32_u32(a.v[l_]) >> 23) - 126));
}
AOTC_INLINE aotc_v8f aotc_v8_frexp_m(aotc_v8f a) {
  AOTC__V8_MAP(aotc_v8f, aotc_bitcast_u32_f32((aotc_bitcast_f32_u32(a.v[l_]) & 0x807fffffu) | 0x3f000000u));
}
AOTC_INLINE aotc_v8f aotc_v8_sign1(aotc_v8f a) {
  AOTC__V8_MAP(aotc_v8f, aotc_bitcast_u32_f32((aotc_bitcast_f32_u32(a.v[l_]) & 0x80000000u) | 0x3f800000u));
}
#endif

/* ------------------------------------------------------------------ the map width */
#if defined(AOTC_HAVE_AVX512F)
/* 16 lanes in a zmm register; masks are __mmask16 (AVX-512F instructions only) */
#define AOTC_VF_LANES 16
typedef __m512 aotc_vf;
typedef __mmask16 aotc_vfm;
AOTC_INLINE aotc_vf aotc_vf_load(const float* p) { return _mm512_loadu_ps(p); }
AOTC_INLINE void aotc_vf_store(float* p, aotc_vf a) { _mm512_storeu_ps(p, a); }
AOTC_INLINE void aotc_vf_stream(float* p, aotc_vf a) { /* as aotc_v8_stream, 64-byte aligned */
  if (((uintptr_t)p & 63u) == 0) _mm512_stream_ps(p, a);
  else _mm512_storeu_ps(p, a);
}
AOTC_INLINE aotc_vf aotc_vf_set1(float x) { return _mm512_set1_ps(x); }
AOTC_INLINE aotc_vf aotc_vf_add(aotc_vf a, aotc_vf b) { return _mm512_add_ps(a, b); }
AOTC_INLINE aotc_vf aotc_vf_sub(aotc_vf a, aotc_vf b) { return _mm512_sub_ps(a, b); }
AOTC_INLINE aotc_vf aotc_vf_mul(aotc_vf a, aotc_vf b) { return _mm512_mul_ps(a, b); }
AOTC_INLINE aotc_vf aotc_vf_div(aotc_vf a, aotc_vf b) { return _mm512_div_ps(a, b); }
AOTC_INLINE aotc_vf aotc_vf_sqrt(aotc_vf a) { return _mm512_sqrt_ps(a); }
/* two halves through vrsqrtps: vrsqrt14ps is another estimate than the scalar helper's */
AOTC_INLINE aotc_vf aotc_vf_rsqrt_est(aotc_vf a) {
  __m256 lo = _mm256_rsqrt_ps(_mm512_castps512_ps256(a));
  __m256 hi = _mm256_rsqrt_ps(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
  return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
}
AOTC_INLINE aotc_vf aotc_vf_fma(aotc_vf a, aotc_vf b, aotc_vf c) { return _mm512_fmadd_ps(a, b, c); }
AOTC_INLINE aotc_vf aotc_vf_round_even(aotc_vf a) {
  return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
AOTC_INLINE aotc_vf aotc_vf_floor(aotc_vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
AOTC_INLINE aotc_vf aotc_vf_lesser(aotc_vf a, aotc_vf b) { return _mm512_min_ps(a, b); }
AOTC_INLINE aotc_vf aotc_vf_greater(aotc_vf a, aotc_vf b) { return _mm512_max_ps(a, b); }
AOTC_INLINE aotc_vf aotc_vf_both(aotc_vf a, aotc_vf b) {
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
AOTC_INLINE aotc_vf aotc_vf_either(aotc_vf a, aotc_vf b) {
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
AOTC_INLINE aotc_vfm aotc_vf_lt(aotc_vf a, aotc_vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
AOTC_INLINE aotc_vfm aotc_vf_gt(aotc_vf a, aotc_vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
AOTC_INLINE aotc_vfm aotc_vf_eq(aotc_vf a, aotc_vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
AOTC_INLINE aotc_vfm aotc_vf_isnan(aotc_vf a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
AOTC_INLINE aotc_vfm aotc_vf_signbit(aotc_vf a) {
  return _mm512_cmplt_epi32_mask(_mm512_castps_si512(a), _mm512_setzero_si512());
}
AOTC_INLINE aotc_vfm aotc_vf_and(aotc_vfm a, aotc_vfm b) { return (aotc_vfm)(a & b); }
AOTC_INLINE aotc_vfm aotc_vf_or(aotc_vfm a, aotc_vfm b) { return (aotc_vfm)(a | b); }
AOTC_INLINE aotc_vfm aotc_vf_andnot(aotc_vfm a, aotc_vfm b) { return (aotc_vfm)(~a & b); }
AOTC_INLINE aotc_vf aotc_vf_select(aotc_vfm m, aotc_vf a, aotc_vf b) { return _mm512_mask_blend_ps(m, b, a); }
AOTC_INLINE aotc_vf aotc_vf_pick_gt(aotc_vf a, aotc_vf b) { return _mm512_max_ps(a, b); }
AOTC_INLINE aotc_vf aotc_vf_pick_lt(aotc_vf a, aotc_vf b) { return _mm512_min_ps(a, b); }
AOTC_INLINE aotc_vfm aotc_vf_ge(aotc_vf a, aotc_vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
AOTC_INLINE aotc_vf aotc_vf_keep(aotc_vfm m, aotc_vf a) { return _mm512_maskz_mov_ps(m, a); }
AOTC_INLINE aotc_vf aotc_vf_flag_nan(aotc_vf f, aotc_vf x) {
  return _mm512_mask_mov_ps(f, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), _mm512_castsi512_ps(_mm512_set1_epi32(-1)));
}
AOTC_INLINE aotc_vf aotc__vf_bits(aotc_vf a, int and_mask, int or_mask) {
  __m512i u = _mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(and_mask));
  return _mm512_castsi512_ps(_mm512_or_si512(u, _mm512_set1_epi32(or_mask)));
}
AOTC_INLINE aotc_vf aotc_vf_abs(aotc_vf a) { return aotc__vf_bits(a, 0x7fffffff, 0); }
AOTC_INLINE aotc_vf aotc_vf_neg(aotc_vf a) {
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int)0x80000000u)));
}
AOTC_INLINE aotc_vf aotc_vf_pow2i(aotc_vf n) { /* as aotc_v8_pow2i */
  __m512i e = _mm512_castps_si512(_mm512_add_ps(n, _mm512_set1_ps(AOTC__POW2I_BIAS)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
}
AOTC_INLINE aotc_vf aotc_vf_frexp_e(aotc_vf a) {
  __m512i u = _mm512_srli_epi32(_mm512_castps_si512(a), 23);
  return _mm512_cvtepi32_ps(_mm512_sub_epi32(u, _mm512_set1_epi32(126)));
}
AOTC_INLINE aotc_vf aotc_vf_frexp_m(aotc_vf a) { return aotc__vf_bits(a, (int)0x807fffffu, 0x3f000000); }
AOTC_INLINE aotc_vf aotc_vf_sign1(aotc_vf a) { return aotc__vf_bits(a, (int)0x80000000u, 0x3f800000); }
#else
/* the 8-lane vocabulary under the map names */
#define AOTC_VF_LANES 8
typedef aotc_v8f aotc_vf;
typedef aotc_v8m aotc_vfm;
#define aotc_vf_load aotc_v8_load
#define aotc_vf_store aotc_v8_store
#define aotc_vf_stream aotc_v8_stream
#define aotc_vf_set1 aotc_v8_set1
#define aotc_vf_add aotc_v8_add
#define aotc_vf_sub aotc_v8_sub
#define aotc_vf_mul aotc_v8_mul
#define aotc_vf_div aotc_v8_div
#define aotc_vf_sqrt aotc_v8_sqrt
#define aotc_vf_rsqrt_est aotc_v8_rsqrt_est
#define aotc_vf_fma aotc_v8_fma
#define aotc_vf_round_even aotc_v8_round_even
#define aotc_vf_floor aotc_v8_floor
#define aotc_vf_lesser aotc_v8_lesser
#define aotc_vf_greater aotc_v8_greater
#define aotc_vf_both aotc_v8_both
#define aotc_vf_either aotc_v8_either
#define aotc_vf_lt aotc_v8_lt
#define aotc_vf_gt aotc_v8_gt
#define aotc_vf_eq aotc_v8_eq
#define aotc_vf_isnan aotc_v8_isnan
#define aotc_vf_signbit aotc_v8_signbit
#define aotc_vf_and aotc_v8_and
#define aotc_vf_or aotc_v8_or
#define aotc_vf_andnot aotc_v8_andnot
#define aotc_vf_select aotc_v8_select
#define aotc_vf_pick_gt aotc_v8_pick_gt
#define aotc_vf_pick_lt aotc_v8_pick_lt
#define aotc_vf_ge aotc_v8_ge
#define aotc_vf_keep aotc_v8_keep
#define aotc_vf_flag_nan aotc_v8_flag_nan
#define aotc_vf_abs aotc_v8_abs
#define aotc_vf_neg aotc_v8_neg
#define aotc_vf_pow2i aotc_v8_pow2i
#define aotc_vf_frexp_e aotc_v8_frexp_e
#define aotc_vf_frexp_m aotc_v8_frexp_m
#define aotc_vf_sign1 aotc_v8_sign1
#endif

/* ------------------------------------------------------------------ written once on the primitives */
/* AOTC__V_MATH(P, F, M) defines, for the vocabulary aotc_P_* with vector type F and
 * mask type M, the vector forms of the f32 helpers generated kernels call (same
 * names, P for f32), each the scalar helper of aotc_math.h step for step. */
#define AOTC__V_MATH(P, F, M)                                                                    \
  /* aotc_ftz_f32 */                                                                             \
  AOTC_INLINE F aotc_##P##_ftz(F a) {                                                            \
    M tiny = aotc_##P##_lt(aotc_##P##_abs(a), aotc_##P##_set1(AOTC__MINNORM_f32));               \
    return aotc_##P##_select(tiny, aotc_##P##_mul(a, aotc_##P##_set1(0.0f)), a);                 \
  }                                                                                              \
  /* aotc_max_f32 / aotc_min_f32: NaN from either side (b's with both signs and-ed / or-ed), \
   * max(-0,+0) = +0, min(+0,-0) = -0;                                                      \
   * flushing the result is flushing both operands (the flush keeps the order) */            \
  AOTC_INLINE F aotc_##P##_max(F a, F b) {                                                       \
    F m = aotc_##P##_greater(a, b);                                                              \
    m = aotc_##P##_select(aotc_##P##_eq(a, b), aotc_##P##_both(a, b), m); /* +0 unless both -0 */ \
    F nb = aotc_##P##_both(b, aotc_##P##_either(a, aotc_##P##_set1(aotc_bitcast_u32_f32(0x7FFFFFFFu)))); \
    m = aotc_##P##_select(aotc_##P##_isnan(a), a, aotc_##P##_select(aotc_##P##_isnan(b), nb, m)); \
    return aotc_##P##_ftz(m);                                                                    \
  }                                                                                              \
  AOTC_INLINE F aotc_##P##_min(F a, F b) {                                                       \
    F m = aotc_##P##_lesser(a, b);                                                               \
    m = aotc_##P##_select(aotc_##P##_eq(a, b), aotc_##P##_either(a, b), m); /* -0 if either -0 */ \
    F nb = aotc_##P##_either(b, aotc_##P##_both(a, aotc_##P##_set1(-0.0f)));                     \
    m = aotc_##P##_select(aotc_##P##_isnan(a), a, aotc_##P##_select(aotc_##P##_isnan(b), nb, m)); \
    return aotc_##P##_ftz(m);                                                                    \
  }                                                                                              \
  /* aotc__exp_f32, and aotc_exp_f32 too: its flush never applies.  Two of the scalar     \
   * selects are implied (tests/runtime_c checks every f32): the polynomial at hi already    \
   * overflows to inf, so x > hi needs nothing but the clamp; and every x >= lo gives a     \
   * normal y > 2x (e^x - 2x >= 2 - 2 ln 2), so "x < lo: 0, NaN: x quieted" is keep, then    \
   * pick_gt(y, x + x) (maxps gives its second operand where either is NaN).                  \
   * NaN lanes are clamped to anything finite. */                                           \
  AOTC_INLINE F aotc_##P##__exp_at(F x, F xc, F n) { /* from the clamped x and its power of 2 */ \
    const F lo = aotc_##P##_set1(AOTC__EXP_LO_f32);                                              \
    F r = aotc_##P##_fma(n, aotc_##P##_set1(-0.693359375f), xc);                                 \
    r = aotc_##P##_fma(n, aotc_##P##_set1(2.12194440e-4f), r);                                   \
    F r2 = aotc_##P##_mul(r, r);                                                                 \
    F p = aotc_##P##_set1(1.9875691500e-4f);                                                     \
    p = aotc_##P##_fma(p, r, aotc_##P##_set1(1.3981999507e-3f));                                 \
    p = aotc_##P##_fma(p, r, aotc_##P##_set1(8.3334519073e-3f));                                 \
    p = aotc_##P##_fma(p, r, aotc_##P##_set1(4.1665795894e-2f));                                 \
    p = aotc_##P##_fma(p, r, aotc_##P##_set1(1.6666665459e-1f));                                 \
    p = aotc_##P##_fma(p, r, aotc_##P##_set1(5.0000001201e-1f));                                 \
    p = aotc_##P##_add(aotc_##P##_fma(p, r2, r), aotc_##P##_set1(1.0f));                         \
    F y = aotc_##P##_mul(p, aotc_##P##_pow2i(n));                                                \
    return aotc_##P##_pick_gt(aotc_##P##_keep(aotc_##P##_ge(x, lo), y), aotc_##P##_add(x, x));    \
  }                                                                                              \
  AOTC_INLINE F aotc_##P##__exp(F x) {                                                           \
    const F hi = aotc_##P##_set1(AOTC__EXP_HI_f32), lo = aotc_##P##_set1(AOTC__EXP_LO_f32);      \
    F xc = aotc_##P##_lesser(aotc_##P##_greater(x, lo), hi);                                     \
    F n = aotc_##P##_floor(aotc_##P##_fma(xc, aotc_##P##_set1(1.44269504088896341f), aotc_##P##_set1(0.5f))); \
    return aotc_##P##__exp_at(x, xc, aotc_##P##_lesser(n, aotc_##P##_set1(127.0f)));            \
  }                                                                                              \
  /* exp of x < 88.37 or NaN (a softmax's x - max(x), which is <= 0: ops/bounds.py): the     \
   * same bits without the two clamps from above, which change nothing there (xc <= hi and  \
   * n <= 127 already; tests/runtime_c checks every such f32) */                             \
  AOTC_INLINE F aotc_##P##_exp_nonpos(F x) {                                                     \
    F xc = aotc_##P##_greater(x, aotc_##P##_set1(AOTC__EXP_LO_f32));                            \
    F n = aotc_##P##_floor(aotc_##P##_fma(xc, aotc_##P##_set1(1.44269504088896341f), aotc_##P##_set1(0.5f))); \
    return aotc_##P##__exp_at(x, xc, n);                                                         \
  }                                                                                              \
  /* aotc__tanh_f32 */                                                                           \
  AOTC_INLINE F aotc_##P##__tanh(F x) {                                                          \
    const F bound = aotc_##P##_set1(AOTC__TANH_BOUND_f32), nbound = aotc_##P##_set1(-AOTC__TANH_BOUND_f32); \
    F xc = aotc_##P##_pick_lt(bound, aotc_##P##_pick_gt(nbound, x)); /* NaN: x */               \
    F x2 = aotc_##P##_mul(xc, xc);                                                               \
    F p = aotc_##P##_set1(-2.76076847742355e-16f);                                               \
    p = aotc_##P##_fma(p, x2, aotc_##P##_set1(2.00018790482477e-13f));                           \
    p = aotc_##P##_fma(p, x2, aotc_##P##_set1(-8.60467152213735e-11f));                          \
    p = aotc_##P##_fma(p, x2, aotc_##P##_set1(5.12229709037114e-08f));                           \
    p = aotc_##P##_fma(p, x2, aotc_##P##_set1(1.48572235717979e-05f));                           \
    p = aotc_##P##_fma(p, x2, aotc_##P##_set1(6.37261928875436e-04f));                           \
    p = aotc_##P##_fma(p, x2, aotc_##P##_set1(4.89352455891786e-03f));                           \
    p = aotc_##P##_mul(p, xc);                                                                   \
    F q = aotc_##P##_set1(1.19825839466702e-06f);                                                \
    q = aotc_##P##_fma(q, x2, aotc_##P##_set1(1.18534705686654e-04f));                           \
    q = aotc_##P##_fma(q, x2, aotc_##P##_set1(2.26843463243900e-03f));                           \
    q = aotc_##P##_fma(q, x2, aotc_##P##_set1(4.89352518554385e-03f));                           \
    F y = aotc_##P##_div(p, q);                                                                  \
    M keep = aotc_##P##_lt(aotc_##P##_abs(x), aotc_##P##_set1(0.0004f));                        \
    return aotc_##P##_select(keep, x, y);                                                        \
  }                                                                                              \
  /* aotc__log_f32 */                                                                            \
  AOTC_INLINE F aotc_##P##__log(F x) {                                                           \
    const F one = aotc_##P##_set1(1.0f), half_sqrt2 = aotc_##P##_set1(AOTC__SQRT_HALF_f32);      \
    M tiny = aotc_##P##_lt(x, aotc_##P##_set1(AOTC__MINNORM_f32));                                \
    F xm = aotc_##P##_select(tiny, aotc_##P##_set1(AOTC__MINNORM_f32), x);                       \
    F e = aotc_##P##_frexp_e(xm);                                                                \
    F m = aotc_##P##_frexp_m(xm);                                                                \
    M low = aotc_##P##_lt(m, half_sqrt2);                                                        \
    F below = aotc_##P##_select(low, m, aotc_##P##_set1(0.0f));                                  \
    e = aotc_##P##_select(low, aotc_##P##_sub(e, one), e);                                       \
    F t = aotc_##P##_add(aotc_##P##_sub(m, one), below);                                         \
    F t2 = aotc_##P##_mul(t, t);                                                                 \
    F t3 = aotc_##P##_mul(t2, t);                                                                \
    F y = aotc_##P##_fma(aotc_##P##_set1(7.0376836292e-2f), t, aotc_##P##_set1(-1.1514610310e-1f)); \
    F y1 = aotc_##P##_fma(aotc_##P##_set1(-1.2420140846e-1f), t, aotc_##P##_set1(1.4249322787e-1f)); \
    F y2 = aotc_##P##_fma(aotc_##P##_set1(2.0000714765e-1f), t, aotc_##P##_set1(-2.4999993993e-1f)); \
    y = aotc_##P##_fma(y, t, aotc_##P##_set1(1.1676998740e-1f));                                 \
    y1 = aotc_##P##_fma(y1, t, aotc_##P##_set1(-1.6668057665e-1f));                              \
    y2 = aotc_##P##_fma(y2, t, aotc_##P##_set1(3.3333331174e-1f));                               \
    y = aotc_##P##_fma(y, t3, y1);                                                               \
    y = aotc_##P##_fma(y, t3, y2);                                                               \
    y = aotc_##P##_fma(y, t3, aotc_##P##_mul(aotc_##P##_set1(-2.12194440e-4f), e));              \
    F r = aotc_##P##_add(aotc_##P##_fma(aotc_##P##_set1(-0.5f), t2, t), y);                      \
    r = aotc_##P##_fma(aotc_##P##_set1(0.693359375f), e, r);                                     \
    r = aotc_##P##_select(aotc_##P##_eq(x, aotc_##P##_set1((float)INFINITY)), x, r);             \
    r = aotc_##P##_select(aotc_##P##_eq(x, aotc_##P##_set1(0.0f)), aotc_##P##_set1(-(float)INFINITY), r); \
    M bad = aotc_##P##_or(aotc_##P##_lt(x, aotc_##P##_set1(0.0f)), aotc_##P##_isnan(x));         \
    return aotc_##P##_select(bad, aotc_##P##_set1(aotc_bitcast_u32_f32(0xFFFFFFFFu)), r);        \
  }                                                                                              \
  /* aotc__erf_f32 */                                                                            \
  AOTC_INLINE F aotc_##P##__erf(F x) {                                                           \
    F x2 = aotc_##P##_mul(x, x);                                                                 \
    F p = aotc_##P##_fma(x2, aotc_##P##_set1(0.00022905065861350646f), aotc_##P##_set1(0.0034082910107109506f)); \
    p = aotc_##P##_fma(x2, p, aotc_##P##_set1(0.050955695062380861f));                           \
    p = aotc_##P##_fma(x2, p, aotc_##P##_set1(0.18520832239976145f));                            \
    p = aotc_##P##_fma(x2, p, aotc_##P##_set1(1.128379143519084f));                              \
    p = aotc_##P##_mul(x, p);                                                                    \
    F q = aotc_##P##_fma(x2, aotc_##P##_set1(-1.1791602954361697e-7f), aotc_##P##_set1(0.000023547966471313185f)); \
    q = aotc_##P##_fma(x2, q, aotc_##P##_set1(0.0010179625278914885f));                          \
    q = aotc_##P##_fma(x2, q, aotc_##P##_set1(0.014070470171167667f));                           \
    q = aotc_##P##_fma(x2, q, aotc_##P##_set1(0.11098505178285362f));                            \
    q = aotc_##P##_fma(x2, q, aotc_##P##_set1(0.49746925110067538f));                            \
    q = aotc_##P##_fma(x2, q, aotc_##P##_set1(1.0f));                                            \
    M one = aotc_##P##_andnot(aotc_##P##_gt(aotc_##P##_set1(AOTC__ERF_ONE_f32), aotc_##P##_abs(x)), \
                              aotc_##P##_eq(x, x)); /* ERF_ONE <= |x| */                         \
    return aotc_##P##_select(one, aotc_##P##_sign1(x), aotc_##P##_div(p, q));                   \
  }                                                                                              \
  AOTC_INLINE F aotc_##P##_exp(F a) { return aotc_##P##__exp(a); }                               \
  AOTC_INLINE F aotc_##P##_tanh(F a) { return aotc_##P##__tanh(a); }                             \
  AOTC_INLINE F aotc_##P##_log(F a) { return aotc_##P##_ftz(aotc_##P##__log(aotc_##P##_ftz(a))); } \
  AOTC_INLINE F aotc_##P##_erf(F a) { return aotc_##P##_ftz(aotc_##P##__erf(aotc_##P##_ftz(a))); } \
  AOTC_INLINE F aotc_##P##_logistic(F a) {                                                       \
    const F one = aotc_##P##_set1(1.0f);                                                         \
    return aotc_##P##_ftz(aotc_##P##_div(one, aotc_##P##_add(one, aotc_##P##__exp(aotc_##P##_neg(a))))); \
  }                                                                                              \
  AOTC__V_RSQRT(P, F, M)

/* aotc__rsqrt_f32: the hardware estimate and XLA's Newton steps on x86, 1 / sqrt elsewhere */
#if defined(AOTC__RSQRT_HW)
#define AOTC__V_RSQRT(P, F, M)                                                                   \
  AOTC_INLINE F aotc_##P##__rsqrt_step(F x, F g) {                                               \
    F h = aotc_##P##_fma(aotc_##P##_mul(x, g), g, aotc_##P##_set1(-1.0f));                       \
    return aotc_##P##_fma(aotc_##P##_mul(g, aotc_##P##_set1(-0.5f)), h, g);                      \
  }                                                                                              \
  AOTC_INLINE F aotc_##P##_rsqrt(F a) {                                                          \
    const int steps = aotc__rsqrt_steps();                                                       \
    F x = aotc_##P##_ftz(a);                                                                     \
    if (steps == 0) return aotc_##P##_div(aotc_##P##_set1(1.0f), aotc_##P##_sqrt(x));            \
    F g = aotc_##P##_rsqrt_est(x);                                                               \
    F r = aotc_##P##__rsqrt_step(x, g);                                                          \
    r = steps == 1 ? r : aotc_##P##__rsqrt_step(x, r);                                           \
    M est = aotc_##P##_or(aotc_##P##_lt(x, aotc_##P##_set1(AOTC__MINNORM_f32)),                  \
                          aotc_##P##_eq(x, aotc_##P##_set1((float)INFINITY)));                   \
    return aotc_##P##_select(est, g, r);                                                         \
  }
#else
#define AOTC__V_RSQRT(P, F, M) \
  AOTC_INLINE F aotc_##P##_rsqrt(F a) { return aotc_##P##_div(aotc_##P##_set1(1.0f), aotc_##P##_sqrt(a)); }
#endif

AOTC__V_MATH(v8, aotc_v8f, aotc_v8m)
#if defined(AOTC_HAVE_AVX512F)
AOTC__V_MATH(vf, aotc_vf, aotc_vfm)
#else
#define aotc_vf_ftz aotc_v8_ftz
#define aotc_vf_max aotc_v8_max
#define aotc_vf_min aotc_v8_min
#define aotc_vf_exp aotc_v8_exp
#define aotc_vf_exp_nonpos aotc_v8_exp_nonpos
#define aotc_vf_tanh aotc_v8_tanh
#define aotc_vf_log aotc_v8_log
#define aotc_vf_erf aotc_v8_erf
#define aotc_vf_logistic aotc_v8_logistic
#define aotc_vf_rsqrt aotc_v8_rsqrt
#endif

#endif /* AOTC_SIMD_H */

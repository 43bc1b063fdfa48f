/* aotc_fft_v8.c -- the f32 Stockham passes of aotc_fft.c on 8-lane vectors, and the
 * gather and scatter of c64 lines into and out of their planes by 8 x 8 transposes.
 *
 * aotc_fft.c holds AOTC_FFT_LANES = 8 lines side by side, so a pass's runs of lanes
 * (s * 8 of them) are whole aotc_v8f vectors; these passes compute exactly what the
 * scalar passes of AOTC__FFT_KERNELS compute, operation for operation (products and
 * sums in the same order, no contraction), so the bits do not change, but they do not
 * depend on the C compiler vectorizing (gcc 12 -O2 does not: 5x slower).  The gather
 * of 8 contiguous c64 lines (the last axis) loads 4 elements of each line and
 * transposes the 8 x 8 floats into 4 rows of real and 4 of imaginary parts; 8
 * neighbouring lines of another axis have their elements side by side, split into
 * real and imaginary parts; the scatters are the reverse.  Without AVX2 they are the
 * scalar loops of aotc_fft.c.
 */
#ifndef AOTC_FFT_V8_C
#define AOTC_FFT_V8_C

#ifndef AOTC_SIMD_H
#include "aotc_simd.h"
#endif

#define AOTC__V8 aotc_v8f
#define AOTC__LD aotc_v8_load
#define AOTC__ST aotc_v8_store
#define AOTC__ADD aotc_v8_add
#define AOTC__SUB aotc_v8_sub
#define AOTC__MUL aotc_v8_mul
#define AOTC__SET aotc_v8_set1

/* y_k = (tr + i ti) * w_k at lane u: the scalar AOTC__FFT_PUT */
#define AOTC__FFT_VPUT(k, xr, xi)                                                         \
  do {                                                                                    \
    AOTC__V8 tr_ = (xr), ti_ = (xi);                                                      \
    AOTC__ST(y##k##r + u, AOTC__SUB(AOTC__MUL(tr_, w##k##r), AOTC__MUL(ti_, w##k##i)));   \
    AOTC__ST(y##k##i + u, AOTC__ADD(AOTC__MUL(tr_, w##k##i), AOTC__MUL(ti_, w##k##r)));   \
  } while (0)
#define AOTC__FFT_VTW(k)                                \
  const AOTC__V8 w##k##r = AOTC__SET(tw[2 * ((k) * j * s)]), \
                 w##k##i = AOTC__SET(tw[2 * ((k) * j * s) + 1])

AOTC_INTERNAL void aotc__fft_vpass2(int64_t m, int64_t s, int64_t sv, const float* tw, const float* ar,
                                    const float* ai, float* br, float* bi) {
  for (int64_t j = 0; j < m; j++) {
    AOTC__FFT_VTW(1);
    const float *x0r = ar + j * sv, *x0i = ai + j * sv, *x1r = ar + (j + m) * sv, *x1i = ai + (j + m) * sv;
    float *y0r = br + 2 * j * sv, *y0i = bi + 2 * j * sv, *y1r = y0r + sv, *y1i = y0i + sv;
    for (int64_t u = 0; u < sv; u += 8) {
      AOTC__V8 a0r = AOTC__LD(x0r + u), a0i = AOTC__LD(x0i + u), a1r = AOTC__LD(x1r + u), a1i = AOTC__LD(x1i + u);
      AOTC__ST(y0r + u, AOTC__ADD(a0r, a1r));
      AOTC__ST(y0i + u, AOTC__ADD(a0i, a1i));
      AOTC__FFT_VPUT(1, AOTC__SUB(a0r, a1r), AOTC__SUB(a0i, a1i));
    }
  }
}

AOTC_INTERNAL void aotc__fft_vpass4(int64_t m, int64_t s, int64_t sv, const float* tw, const float* ar,
                                    const float* ai, float* br, float* bi) {
  for (int64_t j = 0; j < m; j++) {
    AOTC__FFT_VTW(1);
    AOTC__FFT_VTW(2);
    AOTC__FFT_VTW(3);
    const float *x0r = ar + j * sv, *x0i = ai + j * sv;
    const float *x1r = x0r + m * sv, *x1i = x0i + m * sv, *x2r = x1r + m * sv, *x2i = x1i + m * sv;
    const float *x3r = x2r + m * sv, *x3i = x2i + m * sv;
    float *y0r = br + 4 * j * sv, *y0i = bi + 4 * j * sv, *y1r = y0r + sv, *y1i = y0i + sv;
    float *y2r = y1r + sv, *y2i = y1i + sv, *y3r = y2r + sv, *y3i = y2i + sv;
    for (int64_t u = 0; u < sv; u += 8) {
      AOTC__V8 a0r = AOTC__LD(x0r + u), a0i = AOTC__LD(x0i + u), a1r = AOTC__LD(x1r + u), a1i = AOTC__LD(x1i + u);
      AOTC__V8 a2r = AOTC__LD(x2r + u), a2i = AOTC__LD(x2i + u), a3r = AOTC__LD(x3r + u), a3i = AOTC__LD(x3i + u);
      AOTC__V8 s02r = AOTC__ADD(a0r, a2r), s02i = AOTC__ADD(a0i, a2i);
      AOTC__V8 d02r = AOTC__SUB(a0r, a2r), d02i = AOTC__SUB(a0i, a2i);
      AOTC__V8 s13r = AOTC__ADD(a1r, a3r), s13i = AOTC__ADD(a1i, a3i);
      AOTC__V8 d13r = AOTC__SUB(a1r, a3r), d13i = AOTC__SUB(a1i, a3i);
      AOTC__ST(y0r + u, AOTC__ADD(s02r, s13r));
      AOTC__ST(y0i + u, AOTC__ADD(s02i, s13i));
      AOTC__FFT_VPUT(1, AOTC__ADD(d02r, d13i), AOTC__SUB(d02i, d13r));
      AOTC__FFT_VPUT(2, AOTC__SUB(s02r, s13r), AOTC__SUB(s02i, s13i));
      AOTC__FFT_VPUT(3, AOTC__SUB(d02r, d13i), AOTC__ADD(d02i, d13r));
    }
  }
}

AOTC_INTERNAL void aotc__fft_vpass3(int64_t m, int64_t s, int64_t sv, const float* tw, const float* ar,
                                    const float* ai, float* br, float* bi) {
  const AOTC__V8 c = AOTC__SET(-0.5f), sn = AOTC__SET((float)0.86602540378443864676);
  for (int64_t j = 0; j < m; j++) {
    AOTC__FFT_VTW(1);
    AOTC__FFT_VTW(2);
    const float *x0r = ar + j * sv, *x0i = ai + j * sv;
    const float *x1r = x0r + m * sv, *x1i = x0i + m * sv, *x2r = x1r + m * sv, *x2i = x1i + m * sv;
    float *y0r = br + 3 * j * sv, *y0i = bi + 3 * j * sv, *y1r = y0r + sv, *y1i = y0i + sv;
    float *y2r = y1r + sv, *y2i = y1i + sv;
    for (int64_t u = 0; u < sv; u += 8) {
      AOTC__V8 a0r = AOTC__LD(x0r + u), a0i = AOTC__LD(x0i + u), a1r = AOTC__LD(x1r + u), a1i = AOTC__LD(x1i + u);
      AOTC__V8 a2r = AOTC__LD(x2r + u), a2i = AOTC__LD(x2i + u);
      AOTC__V8 tr = AOTC__ADD(a1r, a2r), ti = AOTC__ADD(a1i, a2i);
      AOTC__V8 dr = AOTC__MUL(sn, AOTC__SUB(a1r, a2r)), di = AOTC__MUL(sn, AOTC__SUB(a1i, a2i));
      AOTC__V8 mr = AOTC__ADD(a0r, AOTC__MUL(c, tr)), mi = AOTC__ADD(a0i, AOTC__MUL(c, ti));
      AOTC__ST(y0r + u, AOTC__ADD(a0r, tr));
      AOTC__ST(y0i + u, AOTC__ADD(a0i, ti));
      AOTC__FFT_VPUT(1, AOTC__ADD(mr, di), AOTC__SUB(mi, dr));
      AOTC__FFT_VPUT(2, AOTC__SUB(mr, di), AOTC__ADD(mi, dr));
    }
  }
}

AOTC_INTERNAL void aotc__fft_vpass5(int64_t m, int64_t s, int64_t sv, const float* tw, const float* ar,
                                    const float* ai, float* br, float* bi) {
  const AOTC__V8 c1 = AOTC__SET((float)0.30901699437494742410), c2 = AOTC__SET((float)-0.80901699437494742410);
  const AOTC__V8 s1 = AOTC__SET((float)0.95105651629515357212), s2 = AOTC__SET((float)0.58778525229247312917);
  for (int64_t j = 0; j < m; j++) {
    AOTC__FFT_VTW(1);
    AOTC__FFT_VTW(2);
    AOTC__FFT_VTW(3);
    AOTC__FFT_VTW(4);
    const float *x0r = ar + j * sv, *x0i = ai + j * sv;
    const float *x1r = x0r + m * sv, *x1i = x0i + m * sv, *x2r = x1r + m * sv, *x2i = x1i + m * sv;
    const float *x3r = x2r + m * sv, *x3i = x2i + m * sv, *x4r = x3r + m * sv, *x4i = x3i + m * sv;
    float *y0r = br + 5 * j * sv, *y0i = bi + 5 * j * sv, *y1r = y0r + sv, *y1i = y0i + sv;
    float *y2r = y1r + sv, *y2i = y1i + sv, *y3r = y2r + sv, *y3i = y2i + sv, *y4r = y3r + sv, *y4i = y3i + sv;
    for (int64_t u = 0; u < sv; u += 8) {
      AOTC__V8 a0r = AOTC__LD(x0r + u), a0i = AOTC__LD(x0i + u);
      AOTC__V8 a1r = AOTC__LD(x1r + u), a1i = AOTC__LD(x1i + u), a2r = AOTC__LD(x2r + u), a2i = AOTC__LD(x2i + u);
      AOTC__V8 a3r = AOTC__LD(x3r + u), a3i = AOTC__LD(x3i + u), a4r = AOTC__LD(x4r + u), a4i = AOTC__LD(x4i + u);
      AOTC__V8 t1r = AOTC__ADD(a1r, a4r), t1i = AOTC__ADD(a1i, a4i), t2r = AOTC__ADD(a2r, a3r), t2i = AOTC__ADD(a2i, a3i);
      AOTC__V8 t3r = AOTC__SUB(a1r, a4r), t3i = AOTC__SUB(a1i, a4i), t4r = AOTC__SUB(a2r, a3r), t4i = AOTC__SUB(a2i, a3i);
      AOTC__V8 m1r = AOTC__ADD(AOTC__ADD(a0r, AOTC__MUL(c1, t1r)), AOTC__MUL(c2, t2r));
      AOTC__V8 m1i = AOTC__ADD(AOTC__ADD(a0i, AOTC__MUL(c1, t1i)), AOTC__MUL(c2, t2i));
      AOTC__V8 m2r = AOTC__ADD(AOTC__ADD(a0r, AOTC__MUL(c2, t1r)), AOTC__MUL(c1, t2r));
      AOTC__V8 m2i = AOTC__ADD(AOTC__ADD(a0i, AOTC__MUL(c2, t1i)), AOTC__MUL(c1, t2i));
      AOTC__V8 e1r = AOTC__ADD(AOTC__MUL(s1, t3r), AOTC__MUL(s2, t4r));
      AOTC__V8 e1i = AOTC__ADD(AOTC__MUL(s1, t3i), AOTC__MUL(s2, t4i));
      AOTC__V8 e2r = AOTC__SUB(AOTC__MUL(s2, t3r), AOTC__MUL(s1, t4r));
      AOTC__V8 e2i = AOTC__SUB(AOTC__MUL(s2, t3i), AOTC__MUL(s1, t4i));
      AOTC__ST(y0r + u, AOTC__ADD(AOTC__ADD(a0r, t1r), t2r));
      AOTC__ST(y0i + u, AOTC__ADD(AOTC__ADD(a0i, t1i), t2i));
      AOTC__FFT_VPUT(1, AOTC__ADD(m1r, e1i), AOTC__SUB(m1i, e1r));
      AOTC__FFT_VPUT(4, AOTC__SUB(m1r, e1i), AOTC__ADD(m1i, e1r));
      AOTC__FFT_VPUT(2, AOTC__ADD(m2r, e2i), AOTC__SUB(m2i, e2r));
      AOTC__FFT_VPUT(3, AOTC__SUB(m2r, e2i), AOTC__ADD(m2i, e2r));
    }
  }
}

#undef AOTC__FFT_VPUT
#undef AOTC__FFT_VTW

/* ---- c64 lines <-> planes, 8 lines at a time ------------------------------
 * line v's element i is at src + 2 * (base[v] + i) (re, im); plane row i holds the
 * 8 lines' values at element i.  `sign` (+-1) multiplies the imaginary parts on the
 * way in, `scale` / `iscale` the real / imaginary parts on the way out, as the scalar
 * loops do.  Returns how many elements it moved (a multiple of 4; the caller moves
 * the rest one by one). */
#if defined(AOTC_HAVE_AVX2)
/* rows x0..x7 -> columns: out[c] = (x0[c], ..., x7[c]) */
#define AOTC__FFT_T8(x0, x1, x2, x3, x4, x5, x6, x7, out)                                  \
  do {                                                                                     \
    __m256 t0 = _mm256_unpacklo_ps(x0, x1), t1 = _mm256_unpackhi_ps(x0, x1);               \
    __m256 t2 = _mm256_unpacklo_ps(x2, x3), t3 = _mm256_unpackhi_ps(x2, x3);               \
    __m256 t4 = _mm256_unpacklo_ps(x4, x5), t5 = _mm256_unpackhi_ps(x4, x5);               \
    __m256 t6 = _mm256_unpacklo_ps(x6, x7), t7 = _mm256_unpackhi_ps(x6, x7);               \
    __m256 q0 = _mm256_shuffle_ps(t0, t2, 0x44), q1 = _mm256_shuffle_ps(t0, t2, 0xEE);     \
    __m256 q2 = _mm256_shuffle_ps(t1, t3, 0x44), q3 = _mm256_shuffle_ps(t1, t3, 0xEE);     \
    __m256 q4 = _mm256_shuffle_ps(t4, t6, 0x44), q5 = _mm256_shuffle_ps(t4, t6, 0xEE);     \
    __m256 q6 = _mm256_shuffle_ps(t5, t7, 0x44), q7 = _mm256_shuffle_ps(t5, t7, 0xEE);     \
    out[0] = _mm256_permute2f128_ps(q0, q4, 0x20);                                         \
    out[1] = _mm256_permute2f128_ps(q1, q5, 0x20);                                         \
    out[2] = _mm256_permute2f128_ps(q2, q6, 0x20);                                         \
    out[3] = _mm256_permute2f128_ps(q3, q7, 0x20);                                         \
    out[4] = _mm256_permute2f128_ps(q0, q4, 0x31);                                         \
    out[5] = _mm256_permute2f128_ps(q1, q5, 0x31);                                         \
    out[6] = _mm256_permute2f128_ps(q2, q6, 0x31);                                         \
    out[7] = _mm256_permute2f128_ps(q3, q7, 0x31);                                         \
  } while (0)

AOTC_INTERNAL int64_t aotc__fft_gather8_c64(const float* src, const int64_t* base, int64_t n, float sign,
                                            float* AOTC_RESTRICT xr, float* AOTC_RESTRICT xi) {
  const __m256 sg = _mm256_set1_ps(sign);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256 c[8];
    AOTC__FFT_T8(_mm256_loadu_ps(src + 2 * (base[0] + i)), _mm256_loadu_ps(src + 2 * (base[1] + i)),
                 _mm256_loadu_ps(src + 2 * (base[2] + i)), _mm256_loadu_ps(src + 2 * (base[3] + i)),
                 _mm256_loadu_ps(src + 2 * (base[4] + i)), _mm256_loadu_ps(src + 2 * (base[5] + i)),
                 _mm256_loadu_ps(src + 2 * (base[6] + i)), _mm256_loadu_ps(src + 2 * (base[7] + i)), c);
    for (int k = 0; k < 4; k++) {
      _mm256_storeu_ps(xr + (i + k) * 8, c[2 * k]);
      _mm256_storeu_ps(xi + (i + k) * 8, _mm256_mul_ps(sg, c[2 * k + 1]));
    }
  }
  return i;
}

AOTC_INTERNAL int64_t aotc__fft_scatter8_c64(float* dst, const int64_t* base, int64_t n, float scale,
                                             float iscale, const float* xr, const float* xi) {
  const __m256 sr = _mm256_set1_ps(scale), si = _mm256_set1_ps(iscale);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256 c[8];
    AOTC__FFT_T8(_mm256_mul_ps(_mm256_loadu_ps(xr + i * 8), sr), _mm256_mul_ps(_mm256_loadu_ps(xi + i * 8), si),
                 _mm256_mul_ps(_mm256_loadu_ps(xr + (i + 1) * 8), sr),
                 _mm256_mul_ps(_mm256_loadu_ps(xi + (i + 1) * 8), si),
                 _mm256_mul_ps(_mm256_loadu_ps(xr + (i + 2) * 8), sr),
                 _mm256_mul_ps(_mm256_loadu_ps(xi + (i + 2) * 8), si),
                 _mm256_mul_ps(_mm256_loadu_ps(xr + (i + 3) * 8), sr),
                 _mm256_mul_ps(_mm256_loadu_ps(xi + (i + 3) * 8), si), c);
    for (int v = 0; v < 8; v++) _mm256_storeu_ps(dst + 2 * (base[v] + i), c[v]);
  }
  return i;
}
#undef AOTC__FFT_T8

/* 8 consecutive lines at stride `step` (an axis before the last): element i of the 8
 * lines is 16 contiguous floats, split into real and imaginary parts */
AOTC_INTERNAL int64_t aotc__fft_gather8_cols_c64(const float* src, int64_t base, int64_t step, int64_t n,
                                                 float sign, float* AOTC_RESTRICT xr, float* AOTC_RESTRICT xi) {
  const __m256 sg = _mm256_set1_ps(sign);
  for (int64_t i = 0; i < n; i++) {
    const float* p = src + 2 * (base + i * step);
    __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    __m256 re = _mm256_shuffle_ps(a, b, 0x88), im = _mm256_shuffle_ps(a, b, 0xDD); /* 0 1 4 5 | 2 3 6 7 */
    re = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(re), 0xD8));
    im = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(im), 0xD8));
    _mm256_storeu_ps(xr + i * 8, re);
    _mm256_storeu_ps(xi + i * 8, _mm256_mul_ps(sg, im));
  }
  return n;
}

AOTC_INTERNAL int64_t aotc__fft_scatter8_cols_c64(float* dst, int64_t base, int64_t step, int64_t n, float scale,
                                                  float iscale, const float* xr, const float* xi) {
  const __m256 sr = _mm256_set1_ps(scale), si = _mm256_set1_ps(iscale);
  for (int64_t i = 0; i < n; i++) {
    __m256 re = _mm256_mul_ps(_mm256_loadu_ps(xr + i * 8), sr), im = _mm256_mul_ps(_mm256_loadu_ps(xi + i * 8), si);
    __m256 lo = _mm256_unpacklo_ps(re, im), hi = _mm256_unpackhi_ps(re, im); /* lines 0 1 4 5, 2 3 6 7 */
    float* p = dst + 2 * (base + i * step);
    _mm256_storeu_ps(p, _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(p + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
  }
  return n;
}
#else
AOTC_INTERNAL int64_t aotc__fft_gather8_c64(const float* src, const int64_t* base, int64_t n, float sign,
                                            float* AOTC_RESTRICT xr, float* AOTC_RESTRICT xi) {
  (void)src, (void)base, (void)n, (void)sign, (void)xr, (void)xi;
  return 0;
}
AOTC_INTERNAL int64_t aotc__fft_scatter8_c64(float* dst, const int64_t* base, int64_t n, float scale,
                                             float iscale, const float* xr, const float* xi) {
  (void)dst, (void)base, (void)n, (void)scale, (void)iscale, (void)xr, (void)xi;
  return 0;
}
AOTC_INTERNAL int64_t aotc__fft_gather8_cols_c64(const float* src, int64_t base, int64_t step, int64_t n,
                                                 float sign, float* AOTC_RESTRICT xr, float* AOTC_RESTRICT xi) {
  (void)src, (void)base, (void)step, (void)n, (void)sign, (void)xr, (void)xi;
  return 0;
}
AOTC_INTERNAL int64_t aotc__fft_scatter8_cols_c64(float* dst, int64_t base, int64_t step, int64_t n, float scale,
                                                  float iscale, const float* xr, const float* xi) {
  (void)dst, (void)base, (void)step, (void)n, (void)scale, (void)iscale, (void)xr, (void)xi;
  return 0;
}
#endif

#undef AOTC__V8
#undef AOTC__LD
#undef AOTC__ST
#undef AOTC__ADD
#undef AOTC__SUB
#undef AOTC__MUL
#undef AOTC__SET

#endif /* AOTC_FFT_V8_C */

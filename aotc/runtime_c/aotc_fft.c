/* aotc_fft.c -- mixed-radix Stockham FFT with Bluestein's algorithm for other lengths.
 *
 * Owns the transforms declared in aotc_fft.h.  A length whose prime factors
 * are 2, 3 and 5 runs as a self-sorting (Stockham) sequence of radix-4, 2, 3
 * and 5 passes; any other length as Bluestein's chirp convolution over such a
 * length.  c64 data computes in f32 when every length is 5-smooth, everything
 * else (c128 data, Bluestein's transforms) in double; AOTC_FFT_LANES lines at a
 * time are held side by side (re and im planes), so the butterflies run over
 * contiguous lanes.  The passes are written once (AOTC__FFT_KERNELS) and
 * instantiated for f32 and f64 planes.  Twiddles are exp(-2 pi i k/n) from an
 * exact integer reduction of the angle to [0, pi/4], computed once per call
 * into the scratch.  Several axes are transformed one after the other (last
 * axis first for FFT/RFFT, last for IRFFT); a line along any axis is gathered
 * into the work buffers, transformed and scattered back.
 */
#ifndef AOTC_FFT_C
#define AOTC_FFT_C

#ifndef AOTC_FFT_H
#include "aotc_fft.h"
#endif
#ifndef AOTC_FFT_V8_C
#include "aotc_fft_v8.c"
#endif
#include <math.h>

#define AOTC__FFT_MAX_FACTORS 64

/* A pass's lanes are independent: its outputs never overlap its inputs (restrict), but
 * the compilers cannot see that its p output rows at distinct offsets of one buffer do
 * not overlap each other, and give up vectorizing over a dozen runtime alias checks. */
#if defined(__clang__)
#define AOTC__FFT_LANES_INDEPENDENT _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define AOTC__FFT_LANES_INDEPENDENT _Pragma("GCC ivdep")
#else
#define AOTC__FFT_LANES_INDEPENDENT
#endif
#define AOTC__FFT_HALF_PI 1.57079632679489661923

/* One length's tables: Stockham core of length `len` (n itself, or Bluestein's m). */
typedef struct {
  int64_t n;
  int64_t len;
  int nf;
  int f[AOTC__FFT_MAX_FACTORS];
  /* computed in double; the f32 copies are those values rounded */
  double* tw_f64;    /* len values exp(-2 pi i k/len), re and im interleaved */
  double* chirp_f64; /* Bluestein: n values exp(-pi i k^2/n); NULL otherwise */
  double* bf_f64;    /* Bluestein: the m-point FFT of the conjugate chirp, divided by m */
  float* tw_f32;
  float* chirp_f32;
  float* bf_f32;
} aotc__fft_plan;

AOTC_INTERNAL size_t aotc__fft_up64(size_t b) { return (b + 63u) / 64u * 64u; }

/* n > 0 with no prime factor but 2, 3 and 5 */
AOTC_INTERNAL int aotc__fft_smooth(int64_t n) {
  if (n < 1) return 0;
  while (n % 2 == 0) n /= 2;
  while (n % 3 == 0) n /= 3;
  while (n % 5 == 0) n /= 5;
  return n == 1;
}

/* The Stockham core's length for a transform of length n (n, or the smallest
 * 5-smooth length holding Bluestein's linear convolution, >= 2n-1). */
AOTC_INTERNAL int64_t aotc__fft_core_len(int64_t n) {
  if (n <= 1 || aotc__fft_smooth(n)) return n;
  int64_t m = 2 * n - 1;
  while (!aotc__fft_smooth(m)) m++;
  return m;
}

AOTC_INTERNAL size_t aotc__fft_plan_bytes(int64_t n) {
  int64_t len = aotc__fft_core_len(n);
  size_t b = aotc__fft_up64((size_t)len * 16u) + aotc__fft_up64((size_t)len * 8u);
  if (len != n) b += aotc__fft_up64((size_t)n * 16u) + aotc__fft_up64((size_t)len * 16u);
  return b;
}

/* exp(-2 pi i k/n) for 0 <= k < n.  The angle is (q + r/n) quarter turns with
 * integers q, r; the part of a quarter turn above an eighth is taken from the
 * complementary angle, so cos and sin only see [0, pi/4]. */
AOTC_INTERNAL void aotc__fft_unit(int64_t k, int64_t n, double* re, double* im) {
  int64_t q = (4 * k) / n;
  int64_t r = 4 * k - q * n;
  double c, s;
  if (2 * r <= n) {
    double a = AOTC__FFT_HALF_PI * (double)r / (double)n;
    c = cos(a);
    s = sin(a);
  } else {
    double a = AOTC__FFT_HALF_PI * (double)(n - r) / (double)n;
    c = sin(a);
    s = cos(a);
  }
  double x, y; /* (c + i s) turned by q quarter turns */
  switch (q & 3) {
    case 0: x = c; y = s; break;
    case 1: x = -s; y = c; break;
    case 2: x = -c; y = -s; break;
    default: x = s; y = -c; break;
  }
  *re = x;
  *im = -y;
}

/* ---- Stockham passes ------------------------------------------------------
 * A pass of radix p over a sub-length l = p*m at stride s (l*s = len) reads
 * a[(j + k*m) s + q] and writes b[(p*j + r) s + q] = DFT_p(a_k)[r] * w^(r j s),
 * for 0 <= j < m, 0 <= q < s; every index is in units of `sv` = s lanes. */

#define AOTC__FFT_TW(T, k) \
  const T w##k##r = tw[2 * ((k) * j * s)], w##k##i = tw[2 * ((k) * j * s) + 1]
#define AOTC__FFT_PUT(k, xr, xi)                \
  do {                                          \
    tr_ = (xr);                                 \
    ti_ = (xi);                                 \
    y##k##r[u] = tr_ * w##k##r - ti_ * w##k##i; \
    y##k##i[u] = tr_ * w##k##i + ti_ * w##k##r; \
  } while (0)

/* element types of the buffers a pass reads and writes */
enum { AOTC__FFT_F32, AOTC__FFT_F64, AOTC__FFT_C64, AOTC__FFT_C128 };

/* x[i*V + v] = line v's element i (src + base[v] + i*step, in elements of type T), for
 * the V lines of a block; imaginary parts times `sign` (zero for real data) */
#define AOTC__FFT_GATHER(TP, T, cplx)                                      \
  for (int64_t i = i0; i < n; i++) {                                       \
    for (int64_t v = 0; v < V; v++) {                                      \
      const T* p_ = (const T*)src + (cplx ? 2 : 1) * (base[v] + i * step); \
      xr[i * V + v] = (TP)p_[0];                                           \
      xi[i * V + v] = cplx ? (TP)sign * (TP)p_[cplx ? 1 : 0] : (TP)0;      \
    }                                                                      \
  }

/* line v's element i = x[i*V + v] * scale (imaginary parts times sign*scale; only the
 * real parts for real data) */
#define AOTC__FFT_SCATTER(TP, T, cplx)                              \
  for (int64_t i = i0; i < n; i++) {                                \
    for (int64_t v = 0; v < V; v++) {                               \
      T* p_ = (T*)dst + (cplx ? 2 : 1) * (base[v] + i * step);      \
      p_[0] = (T)(xr[i * V + v] * (TP)scale);                       \
      if (cplx) p_[cplx ? 1 : 0] = (T)(xi[i * V + v] * (TP)iscale); \
    }                                                               \
  }

/* One axis of a transform: `outer` x `inner` lines, each read as n_in elements
 * at stride `inner` from src (line (o, c) at o*n_in*inner + c) and written as
 * n_out elements the same way into dst.  `inverse` conjugates in and out and
 * scales by 1/n; `hermitian` extends n_in = n/2+1 values to n by symmetry.
 * src may be dst when n_in == n_out (a block of lines is read before it is
 * written). */
typedef struct {
  const aotc__fft_plan* plan;
  const void* src;
  int src_type;
  int64_t n_in;
  void* dst;
  int dst_type;
  int64_t n_out;
  int64_t outer, inner;
  int inverse, hermitian;
} aotc__fft_axis;

/* The 8-lane forms of the f32 passes, gather and scatter (aotc_fft_v8.c), where they
 * apply: a pass whose runs of lanes are whole vectors; 8 lines of c64 data, each
 * contiguous, or 8 neighbouring lines of an axis before the last.  They return 0 (the pass not run, no element moved) otherwise, and always
 * for f64 planes. */
AOTC_INTERNAL int aotc__fft_vpass_f32(int r, int64_t m, int64_t s, int64_t sv, const float* tw, const float* ar,
                                      const float* ai, float* br, float* bi) {
  if (sv % 8) return 0;
  switch (r) {
    case 4: aotc__fft_vpass4(m, s, sv, tw, ar, ai, br, bi); break;
    case 2: aotc__fft_vpass2(m, s, sv, tw, ar, ai, br, bi); break;
    case 3: aotc__fft_vpass3(m, s, sv, tw, ar, ai, br, bi); break;
    default: aotc__fft_vpass5(m, s, sv, tw, ar, ai, br, bi); break;
  }
  return 1;
}
AOTC_INTERNAL int aotc__fft_vpass_f64(int r, int64_t m, int64_t s, int64_t sv, const double* tw, const double* ar,
                                      const double* ai, double* br, double* bi) {
  (void)r, (void)m, (void)s, (void)sv, (void)tw, (void)ar, (void)ai, (void)br, (void)bi;
  return 0;
}
AOTC_INTERNAL int64_t aotc__fft_vgather_f32(const void* src, int type, const int64_t* base, int64_t step, int64_t n,
                                            int64_t V, double sign, float* xr, float* xi) {
  if (V != 8 || type != AOTC__FFT_C64) return 0;
  if (step == 1) return aotc__fft_gather8_c64((const float*)src, base, n, (float)sign, xr, xi);
  return base[7] - base[0] == 7 ? aotc__fft_gather8_cols_c64((const float*)src, base[0], step, n, (float)sign, xr, xi)
                                : 0;
}
AOTC_INTERNAL int64_t aotc__fft_vgather_f64(const void* src, int type, const int64_t* base, int64_t step, int64_t n,
                                            int64_t V, double sign, double* xr, double* xi) {
  (void)src, (void)type, (void)base, (void)step, (void)n, (void)V, (void)sign, (void)xr, (void)xi;
  return 0;
}
AOTC_INTERNAL int64_t aotc__fft_vscatter_f32(void* dst, int type, const int64_t* base, int64_t step, int64_t n,
                                             int64_t V, double scale, double iscale, const float* xr, const float* xi) {
  if (V != 8 || type != AOTC__FFT_C64) return 0;
  if (step == 1) return aotc__fft_scatter8_c64((float*)dst, base, n, (float)scale, (float)iscale, xr, xi);
  return base[7] - base[0] == 7
             ? aotc__fft_scatter8_cols_c64((float*)dst, base[0], step, n, (float)scale, (float)iscale, xr, xi)
             : 0;
}
AOTC_INTERNAL int64_t aotc__fft_vscatter_f64(void* dst, int type, const int64_t* base, int64_t step, int64_t n,
                                             int64_t V, double scale, double iscale, const double* xr,
                                             const double* xi) {
  (void)dst, (void)type, (void)base, (void)step, (void)n, (void)V, (void)scale, (void)iscale, (void)xr, (void)xi;
  return 0;
}

/* Where the planes start in the work buffers X, A, W (in elements of the planes' type):
 * a line's imaginary plane AOTC__FFT_PAD after the end of its real one, A and W moved
 * on by AOTC__FFT_SHIFT_A / _W.  For lengths of 2^k the planes and the butterflies'
 * rows are 4 KiB apart, so loads and stores of different planes would share their low
 * 12 address bits (false store-to-load dependences, one L1 set): these offsets put the
 * four planes a pass reads and writes at different places of a 4 KiB page (1024 points:
 * 515 -> 405 us for 256 lines, 4096: 2.85 -> 2.17 ms; Zen 3).  Each buffer has
 * AOTC__FFT_SLACK bytes for them. */
#define AOTC__FFT_PAD 48
#define AOTC__FFT_SHIFT_A 272
#define AOTC__FFT_SHIFT_W 528
#define AOTC__FFT_SLACK 8192u

/* The passes, the transform of a block of lines, its gather and scatter, for planes of
 * type T (the suffix S: f64, f32). */
#define AOTC__FFT_KERNELS(T, S)                                                                                        \
AOTC_INTERNAL void aotc__fft_pass2_##S(int64_t m, int64_t s, int64_t sv, const T* tw,                                  \
                                   const T* AOTC_RESTRICT ar, const T* AOTC_RESTRICT ai,                               \
                                   T* AOTC_RESTRICT br, T* AOTC_RESTRICT bi) {                                         \
  for (int64_t j = 0; j < m; j++) {                                                                                    \
    AOTC__FFT_TW(T, 1);                                                                                                \
    const T *x0r = ar + j * sv, *x0i = ai + j * sv, *x1r = ar + (j + m) * sv, *x1i = ai + (j + m) * sv;                \
    T *y0r = br + 2 * j * sv, *y0i = bi + 2 * j * sv, *y1r = y0r + sv, *y1i = y0i + sv;                                \
    AOTC__FFT_LANES_INDEPENDENT                                                                                        \
    for (int64_t u = 0; u < sv; u++) {                                                                                 \
      T tr_, ti_;                                                                                                      \
      T a0r = x0r[u], a0i = x0i[u], a1r = x1r[u], a1i = x1i[u];                                                        \
      y0r[u] = a0r + a1r;                                                                                              \
      y0i[u] = a0i + a1i;                                                                                              \
      AOTC__FFT_PUT(1, a0r - a1r, a0i - a1i);                                                                          \
    }                                                                                                                  \
  }                                                                                                                    \
}                                                                                                                      \
                                                                                                                       \
AOTC_INTERNAL void aotc__fft_pass4_##S(int64_t m, int64_t s, int64_t sv, const T* tw,                                  \
                                   const T* AOTC_RESTRICT ar, const T* AOTC_RESTRICT ai,                               \
                                   T* AOTC_RESTRICT br, T* AOTC_RESTRICT bi) {                                         \
  for (int64_t j = 0; j < m; j++) {                                                                                    \
    AOTC__FFT_TW(T, 1);                                                                                                \
    AOTC__FFT_TW(T, 2);                                                                                                \
    AOTC__FFT_TW(T, 3);                                                                                                \
    const T *x0r = ar + j * sv, *x0i = ai + j * sv;                                                                    \
    const T *x1r = x0r + m * sv, *x1i = x0i + m * sv, *x2r = x1r + m * sv, *x2i = x1i + m * sv;                        \
    const T *x3r = x2r + m * sv, *x3i = x2i + m * sv;                                                                  \
    T *y0r = br + 4 * j * sv, *y0i = bi + 4 * j * sv, *y1r = y0r + sv, *y1i = y0i + sv;                                \
    T *y2r = y1r + sv, *y2i = y1i + sv, *y3r = y2r + sv, *y3i = y2i + sv;                                              \
    AOTC__FFT_LANES_INDEPENDENT                                                                                        \
    for (int64_t u = 0; u < sv; u++) {                                                                                 \
      T tr_, ti_;                                                                                                      \
      T s02r = x0r[u] + x2r[u], s02i = x0i[u] + x2i[u], d02r = x0r[u] - x2r[u], d02i = x0i[u] - x2i[u];                \
      T s13r = x1r[u] + x3r[u], s13i = x1i[u] + x3i[u], d13r = x1r[u] - x3r[u], d13i = x1i[u] - x3i[u];                \
      y0r[u] = s02r + s13r;                                                                                            \
      y0i[u] = s02i + s13i;                                                                                            \
      /* -i (a1 - a3) = d13i - i d13r */                                                                               \
      AOTC__FFT_PUT(1, d02r + d13i, d02i - d13r);                                                                      \
      AOTC__FFT_PUT(2, s02r - s13r, s02i - s13i);                                                                      \
      AOTC__FFT_PUT(3, d02r - d13i, d02i + d13r);                                                                      \
    }                                                                                                                  \
  }                                                                                                                    \
}                                                                                                                      \
                                                                                                                       \
AOTC_INTERNAL void aotc__fft_pass3_##S(int64_t m, int64_t s, int64_t sv, const T* tw,                                  \
                                   const T* AOTC_RESTRICT ar, const T* AOTC_RESTRICT ai,                               \
                                   T* AOTC_RESTRICT br, T* AOTC_RESTRICT bi) {                                         \
  const T c = -0.5, sn = 0.86602540378443864676; /* exp(-2 pi i/3) = c - i sn */                                       \
  for (int64_t j = 0; j < m; j++) {                                                                                    \
    AOTC__FFT_TW(T, 1);                                                                                                \
    AOTC__FFT_TW(T, 2);                                                                                                \
    const T *x0r = ar + j * sv, *x0i = ai + j * sv;                                                                    \
    const T *x1r = x0r + m * sv, *x1i = x0i + m * sv, *x2r = x1r + m * sv, *x2i = x1i + m * sv;                        \
    T *y0r = br + 3 * j * sv, *y0i = bi + 3 * j * sv, *y1r = y0r + sv, *y1i = y0i + sv;                                \
    T *y2r = y1r + sv, *y2i = y1i + sv;                                                                                \
    AOTC__FFT_LANES_INDEPENDENT                                                                                        \
    for (int64_t u = 0; u < sv; u++) {                                                                                 \
      T tr_, ti_;                                                                                                      \
      T tr = x1r[u] + x2r[u], ti = x1i[u] + x2i[u];                                                                    \
      T dr = sn * (x1r[u] - x2r[u]), di = sn * (x1i[u] - x2i[u]);                                                      \
      T mr = x0r[u] + c * tr, mi = x0i[u] + c * ti;                                                                    \
      y0r[u] = x0r[u] + tr;                                                                                            \
      y0i[u] = x0i[u] + ti;                                                                                            \
      /* b1 = m - i d, b2 = m + i d */                                                                                 \
      AOTC__FFT_PUT(1, mr + di, mi - dr);                                                                              \
      AOTC__FFT_PUT(2, mr - di, mi + dr);                                                                              \
    }                                                                                                                  \
  }                                                                                                                    \
}                                                                                                                      \
                                                                                                                       \
AOTC_INTERNAL void aotc__fft_pass5_##S(int64_t m, int64_t s, int64_t sv, const T* tw,                                  \
                                   const T* AOTC_RESTRICT ar, const T* AOTC_RESTRICT ai,                               \
                                   T* AOTC_RESTRICT br, T* AOTC_RESTRICT bi) {                                         \
  /* exp(-2 pi i/5) = c1 - i s1, exp(-4 pi i/5) = c2 - i s2 */                                                         \
  const T c1 = 0.30901699437494742410, c2 = -0.80901699437494742410;                                                   \
  const T s1 = 0.95105651629515357212, s2 = 0.58778525229247312917;                                                    \
  for (int64_t j = 0; j < m; j++) {                                                                                    \
    AOTC__FFT_TW(T, 1);                                                                                                \
    AOTC__FFT_TW(T, 2);                                                                                                \
    AOTC__FFT_TW(T, 3);                                                                                                \
    AOTC__FFT_TW(T, 4);                                                                                                \
    const T *x0r = ar + j * sv, *x0i = ai + j * sv;                                                                    \
    const T *x1r = x0r + m * sv, *x1i = x0i + m * sv, *x2r = x1r + m * sv, *x2i = x1i + m * sv;                        \
    const T *x3r = x2r + m * sv, *x3i = x2i + m * sv, *x4r = x3r + m * sv, *x4i = x3i + m * sv;                        \
    T *y0r = br + 5 * j * sv, *y0i = bi + 5 * j * sv, *y1r = y0r + sv, *y1i = y0i + sv;                                \
    T *y2r = y1r + sv, *y2i = y1i + sv, *y3r = y2r + sv, *y3i = y2i + sv, *y4r = y3r + sv, *y4i = y3i + sv;            \
    AOTC__FFT_LANES_INDEPENDENT                                                                                        \
    for (int64_t u = 0; u < sv; u++) {                                                                                 \
      T tr_, ti_;                                                                                                      \
      T t1r = x1r[u] + x4r[u], t1i = x1i[u] + x4i[u], t2r = x2r[u] + x3r[u], t2i = x2i[u] + x3i[u];                    \
      T t3r = x1r[u] - x4r[u], t3i = x1i[u] - x4i[u], t4r = x2r[u] - x3r[u], t4i = x2i[u] - x3i[u];                    \
      T m1r = x0r[u] + c1 * t1r + c2 * t2r, m1i = x0i[u] + c1 * t1i + c2 * t2i;                                        \
      T m2r = x0r[u] + c2 * t1r + c1 * t2r, m2i = x0i[u] + c2 * t1i + c1 * t2i;                                        \
      T e1r = s1 * t3r + s2 * t4r, e1i = s1 * t3i + s2 * t4i; /* b1,4 = m1 -/+ i e1 */                                 \
      T e2r = s2 * t3r - s1 * t4r, e2i = s2 * t3i - s1 * t4i; /* b2,3 = m2 -/+ i e2 */                                 \
      y0r[u] = x0r[u] + t1r + t2r;                                                                                     \
      y0i[u] = x0i[u] + t1i + t2i;                                                                                     \
      AOTC__FFT_PUT(1, m1r + e1i, m1i - e1r);                                                                          \
      AOTC__FFT_PUT(4, m1r - e1i, m1i + e1r);                                                                          \
      AOTC__FFT_PUT(2, m2r + e2i, m2i - e2r);                                                                          \
      AOTC__FFT_PUT(3, m2r - e2i, m2i + e2r);                                                                          \
    }                                                                                                                  \
  }                                                                                                                    \
}                                                                                                                      \
                                                                                                                       \
/* The forward transform of V lines of length p->len in planes (xr, xi), with                                          \
 * (yr, yi) as the other buffer; returns 1 when the result is in y, 0 in x. */                                         \
AOTC_INTERNAL int aotc__fft_core_##S(const aotc__fft_plan* p, int64_t V, T* xr, T* xi, T* yr,                          \
                                 T* yi) {                                                                              \
  int64_t s = 1, l = p->len;                                                                                           \
  int in_y = 0;                                                                                                        \
  for (int k = 0; k < p->nf; k++) {                                                                                    \
    int r = p->f[k];                                                                                                   \
    int64_t m = l / r;                                                                                                 \
    T *ar = in_y ? yr : xr, *ai = in_y ? yi : xi, *br = in_y ? xr : yr, *bi = in_y ? xi : yi;                          \
    if (!aotc__fft_vpass_##S(r, m, s, s * V, p->tw_##S, ar, ai, br, bi))                                               \
    switch (r) {                                                                                                       \
      case 4: aotc__fft_pass4_##S(m, s, s * V, p->tw_##S, ar, ai, br, bi); break;                                      \
      case 2: aotc__fft_pass2_##S(m, s, s * V, p->tw_##S, ar, ai, br, bi); break;                                      \
      case 3: aotc__fft_pass3_##S(m, s, s * V, p->tw_##S, ar, ai, br, bi); break;                                      \
      default: aotc__fft_pass5_##S(m, s, s * V, p->tw_##S, ar, ai, br, bi); break;                                     \
    }                                                                                                                  \
    in_y = !in_y;                                                                                                      \
    s *= r;                                                                                                            \
    l = m;                                                                                                             \
  }                                                                                                                    \
  return in_y;                                                                                                         \
}                                                                                                                      \
                                                                                                                       \
/* The forward transform of V lines of length p->n in X (planes of n*V), with                                          \
 * A and W (planes of len*V each) as work; sets *res to the planes holding it. */                                      \
AOTC_INTERNAL void aotc__fft_exec_##S(const aotc__fft_plan* p, int64_t V, T* X, T* A, T* W,                            \
                                  T** res) {                                                                           \
  int64_t n = p->n, m = p->len;                                                                                        \
  T *xr = X, *xi = X + n * V + AOTC__FFT_PAD;                                                                          \
  A += AOTC__FFT_SHIFT_A;                                                                                              \
  W += AOTC__FFT_SHIFT_W;                                                                                              \
  if (m == n) {                                                                                                        \
    if (aotc__fft_core_##S(p, V, xr, xi, A, A + n * V + AOTC__FFT_PAD)) {                                             \
      xr = A;                                                                                                          \
      xi = A + n * V + AOTC__FFT_PAD;                                                                                  \
    }                                                                                                                  \
    res[0] = xr;                                                                                                       \
    res[1] = xi;                                                                                                       \
    return;                                                                                                            \
  }                                                                                                                    \
  T *ar = A, *ai = A + m * V + AOTC__FFT_PAD, *wr = W, *wi = W + m * V + AOTC__FFT_PAD;                                \
  for (int64_t k = 0; k < n; k++) { /* a = x * chirp, zero-padded to m */                                              \
    T cr = p->chirp_##S[2 * k], ci = p->chirp_##S[2 * k + 1];                                                          \
    for (int64_t v = 0; v < V; v++) {                                                                                  \
      T r = xr[k * V + v], i = xi[k * V + v];                                                                          \
      ar[k * V + v] = r * cr - i * ci;                                                                                 \
      ai[k * V + v] = r * ci + i * cr;                                                                                 \
    }                                                                                                                  \
  }                                                                                                                    \
  for (int64_t k = n * V; k < m * V; k++) ar[k] = ai[k] = 0.0;                                                         \
  int in_w = aotc__fft_core_##S(p, V, ar, ai, wr, wi);                                                                 \
  T *rr = in_w ? wr : ar, *ri = in_w ? wi : ai, *or_ = in_w ? ar : wr, *oi = in_w ? ai : wi;                           \
  for (int64_t k = 0; k < m; k++) { /* conj(A * B / m): the inverse by a forward transform */                          \
    T br = p->bf_##S[2 * k], bi = p->bf_##S[2 * k + 1];                                                                \
    for (int64_t v = 0; v < V; v++) {                                                                                  \
      T r = rr[k * V + v], i = ri[k * V + v];                                                                          \
      rr[k * V + v] = r * br - i * bi;                                                                                 \
      ri[k * V + v] = -(r * bi + i * br);                                                                              \
    }                                                                                                                  \
  }                                                                                                                    \
  if (aotc__fft_core_##S(p, V, rr, ri, or_, oi)) {                                                                     \
    rr = or_;                                                                                                          \
    ri = oi;                                                                                                           \
  }                                                                                                                    \
  for (int64_t k = 0; k < n; k++) { /* x = chirp * conj(c) */                                                          \
    T cr = p->chirp_##S[2 * k], ci = p->chirp_##S[2 * k + 1];                                                          \
    for (int64_t v = 0; v < V; v++) {                                                                                  \
      T r = rr[k * V + v], i = -ri[k * V + v];                                                                         \
      xr[k * V + v] = r * cr - i * ci;                                                                                 \
      xi[k * V + v] = r * ci + i * cr;                                                                                 \
    }                                                                                                                  \
  }                                                                                                                    \
  res[0] = xr;                                                                                                         \
  res[1] = xi;                                                                                                         \
}                                                                                                                      \
                                                                                                                       \
AOTC_INTERNAL void aotc__fft_gather_##S(const void* src, int type, const int64_t* base, int64_t step, int64_t n,       \
                                    int64_t V, double sign, T* AOTC_RESTRICT xr, T* AOTC_RESTRICT xi) {                \
  int64_t i0 = aotc__fft_vgather_##S(src, type, base, step, n, V, sign, xr, xi);                                      \
  switch (type) {                                                                                                      \
    case AOTC__FFT_F32: AOTC__FFT_GATHER(T, float, 0) break;                                                              \
    case AOTC__FFT_F64: AOTC__FFT_GATHER(T, double, 0) break;                                                                  \
    case AOTC__FFT_C64: AOTC__FFT_GATHER(T, float, 1) break;                                                              \
    default: AOTC__FFT_GATHER(T, double, 1) break;                                                                             \
  }                                                                                                                    \
}                                                                                                                      \
                                                                                                                       \
AOTC_INTERNAL void aotc__fft_scatter_##S(void* dst, int type, const int64_t* base, int64_t step, int64_t n, int64_t V, \
                                     double scale, double iscale, const T* AOTC_RESTRICT xr,                           \
                                     const T* AOTC_RESTRICT xi) {                                                      \
  int64_t i0 = aotc__fft_vscatter_##S(dst, type, base, step, n, V, scale, iscale, xr, xi);                            \
  switch (type) {                                                                                                      \
    case AOTC__FFT_F32: AOTC__FFT_SCATTER(T, float, 0) break;                                                             \
    case AOTC__FFT_F64: AOTC__FFT_SCATTER(T, double, 0) break;                                                                 \
    case AOTC__FFT_C64: AOTC__FFT_SCATTER(T, float, 1) break;                                                             \
    default: AOTC__FFT_SCATTER(T, double, 1) break;                                                                            \
  }                                                                                                                    \
}                                                                                                                      \
                                                                                                                       \
AOTC_INTERNAL void aotc__fft_block_##S(const aotc__fft_axis* ax, int64_t t0, int64_t V, T* X, T* A,                    \
                                   T* W) {                                                                             \
  int64_t n = ax->plan->n, in_base[AOTC_FFT_LANES], out_base[AOTC_FFT_LANES];                                          \
  for (int64_t v = 0; v < V; v++) {                                                                                    \
    int64_t o = (t0 + v) / ax->inner, c = (t0 + v) % ax->inner;                                                        \
    in_base[v] = o * ax->n_in * ax->inner + c;                                                                         \
    out_base[v] = o * ax->n_out * ax->inner + c;                                                                       \
  }                                                                                                                    \
  T *xr = X, *xi = X + n * V + AOTC__FFT_PAD;                                                                          \
  aotc__fft_gather_##S(ax->src, ax->src_type, in_base, ax->inner, ax->n_in, V, ax->inverse ? -1.0 : 1.0, xr, xi);      \
  if (ax->hermitian) { /* x[i] = conj(x[n-i]) for n/2 < i < n */                                                       \
    for (int64_t i = ax->n_in; i < n; i++) {                                                                           \
      for (int64_t v = 0; v < V; v++) {                                                                                \
        xr[i * V + v] = xr[(n - i) * V + v];                                                                           \
        xi[i * V + v] = -xi[(n - i) * V + v];                                                                          \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
  T* res[2];                                                                                                           \
  aotc__fft_exec_##S(ax->plan, V, X, A, W, res);                                                                       \
  /* the inverse: conjugated and scaled by 1/n (a product by 1.0 is exact) */                                          \
  double scale = ax->inverse ? 1.0 / (double)n : 1.0;                                                                  \
  aotc__fft_scatter_##S(ax->dst, ax->dst_type, out_base, ax->inner, ax->n_out, V, scale, ax->inverse ? -scale : 1.0,   \
                    res[0], res[1]);                                                                                   \
}                                                                                                                      \
                                                                                                                       \
/* Lines [t0, t1) of the axis, t0 a multiple of AOTC_FFT_LANES: blocks of that many, then single lines. */             \
AOTC_INTERNAL void aotc__fft_axis_run_##S(const aotc__fft_axis* ax, int64_t t0, int64_t t1, T* X, T* A, T* W) {        \
  int64_t t = t0;                                                                                                      \
  for (; t + AOTC_FFT_LANES <= t1; t += AOTC_FFT_LANES) aotc__fft_block_##S(ax, t, AOTC_FFT_LANES, X, A, W);           \
  for (; t < t1; t++) aotc__fft_block_##S(ax, t, 1, X, A, W);                                                          \
}                                                                                                                      \
  /* end of AOTC__FFT_KERNELS */
AOTC__FFT_KERNELS(double, f64)
AOTC__FFT_KERNELS(float, f32)

#undef AOTC__FFT_TW
#undef AOTC__FFT_PUT
#undef AOTC__FFT_GATHER
#undef AOTC__FFT_SCATTER
#undef AOTC__FFT_KERNELS

/* Tables for length n at `*mem` (which moves on by aotc__fft_plan_bytes(n)), computed
 * when `fill`, else taken as an earlier call with `fill` left them there; A and W
 * (2*len doubles each) are work for Bluestein's transformed chirp. */
AOTC_INTERNAL void aotc__fft_plan_init(aotc__fft_plan* p, int64_t n, unsigned char** mem, double* A, double* W,
                                       int fill) {
  p->n = n;
  p->len = aotc__fft_core_len(n);
  int64_t len = p->len, rest = len;
  p->nf = 0;
  while (rest % 4 == 0) { p->f[p->nf++] = 4; rest /= 4; }
  while (rest % 2 == 0) { p->f[p->nf++] = 2; rest /= 2; }
  while (rest % 3 == 0) { p->f[p->nf++] = 3; rest /= 3; }
  while (rest % 5 == 0) { p->f[p->nf++] = 5; rest /= 5; }
  p->tw_f64 = (double*)(void*)*mem;
  *mem += aotc__fft_up64((size_t)len * 16u);
  p->tw_f32 = (float*)(void*)*mem;
  *mem += aotc__fft_up64((size_t)len * 8u);
  p->chirp_f64 = p->bf_f64 = NULL;
  p->chirp_f32 = p->bf_f32 = NULL;
  if (len != n) {
    p->chirp_f64 = (double*)(void*)*mem;
    *mem += aotc__fft_up64((size_t)n * 16u);
    p->bf_f64 = (double*)(void*)*mem;
    *mem += aotc__fft_up64((size_t)len * 16u);
  }
  if (!fill) return;
  /* a quarter turn further is a product by -i: exp(-2 pi i (k + len/4)/len) = (im, -re) of
   * exp(-2 pi i k/len), exactly what aotc__fft_unit gives there (the same reduced angle, one
   * more quarter turn), so for len a multiple of 4 only the first quarter calls cos and sin */
  const int64_t quarter = len % 4 == 0 ? len / 4 : len;
  for (int64_t k = 0; k < len; k++) {
    if (k < quarter) {
      aotc__fft_unit(k, len, &p->tw_f64[2 * k], &p->tw_f64[2 * k + 1]);
    } else {
      p->tw_f64[2 * k] = p->tw_f64[2 * (k - quarter) + 1];
      p->tw_f64[2 * k + 1] = -p->tw_f64[2 * (k - quarter)];
    }
    p->tw_f32[2 * k] = (float)p->tw_f64[2 * k];
    p->tw_f32[2 * k + 1] = (float)p->tw_f64[2 * k + 1];
  }
  /* Bluestein's tables exist in double only: its transforms always compute in double */
  if (len == n) return;
  double *chirp = p->chirp_f64, *bf = p->bf_f64;
  for (int64_t k = 0; k < n; k++) { /* exp(-pi i k^2/n) = exp(-2 pi i (k^2 mod 2n)/(2n)) */
    int64_t kk = (int64_t)(((uint64_t)k * (uint64_t)k) % (uint64_t)(2 * n));
    aotc__fft_unit(kk, 2 * n, &chirp[2 * k], &chirp[2 * k + 1]);
  }
  for (int64_t k = 0; k < len; k++) A[k] = A[len + k] = 0.0;
  for (int64_t k = 0; k < n; k++) { /* b[k] = b[len-k] = conj(chirp[k]) */
    A[k] = chirp[2 * k];
    A[len + k] = -chirp[2 * k + 1];
    if (k > 0) {
      A[len - k] = A[k];
      A[2 * len - k] = A[len + k];
    }
  }
  double* r = aotc__fft_core_f64(p, 1, A, A + len, W, W + len) ? W : A;
  for (int64_t k = 0; k < len; k++) {
    bf[2 * k] = r[k] / (double)len;
    bf[2 * k + 1] = r[len + k] / (double)len;
  }
}

/* The scratch layout (aotc_fft_scratch_need sums it): the tables of each transformed
 * axis, the IRFFT intermediate, then the work buffers X, A, W.  The tables come first
 * so that calls over parts of one batch can share those of one call
 * (aotc_fft_c64_shared). */
AOTC_INTERNAL int aotc__fft_axis_used(int kind, int d, const int64_t* n) {
  (void)kind;
  return n[d] > 1 || d == 2; /* the last axis converts between the types even at length 1 */
}

AOTC_INTERNAL size_t aotc__fft_tmp_bytes(int kind, int64_t batch, const int64_t* n) {
  if (kind != AOTC_FFT_IRFFT || (n[0] <= 1 && n[1] <= 1)) return 0;
  return aotc__fft_up64((size_t)batch * (size_t)n[0] * (size_t)n[1] * (size_t)(n[2] / 2 + 1) * 16u);
}

AOTC_RT_API size_t aotc_fft_scratch_need(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2) {
  int64_t n[3] = {n0, n1, n2};
  if (batch <= 0 || n0 <= 0 || n1 <= 0 || n2 <= 0) return 0;
  size_t bytes = aotc__fft_tmp_bytes(kind, batch, n);
  int64_t nmax = 1, lmax = 1;
  for (int d = 0; d < 3; d++) {
    if (!aotc__fft_axis_used(kind, d, n)) continue;
    bytes += aotc__fft_plan_bytes(n[d]);
    if (n[d] > nmax) nmax = n[d];
    if (aotc__fft_core_len(n[d]) > lmax) lmax = aotc__fft_core_len(n[d]);
  }
  bytes += aotc__fft_up64((size_t)nmax * 16u * AOTC_FFT_LANES) + AOTC__FFT_SLACK;
  bytes += 2u * (aotc__fft_up64((size_t)lmax * 16u * AOTC_FFT_LANES) + AOTC__FFT_SLACK);
  return bytes;
}

/* The bytes of one set of work buffers X, A, W (each with its slack) for these lengths. */
AOTC_INTERNAL size_t aotc__fft_work_bytes(int kind, const int64_t* n, size_t* x_bytes) {
  int64_t nmax = 1, lmax = 1;
  for (int d = 0; d < 3; d++) {
    if (!aotc__fft_axis_used(kind, d, n)) continue;
    if (n[d] > nmax) nmax = n[d];
    if (aotc__fft_core_len(n[d]) > lmax) lmax = aotc__fft_core_len(n[d]);
  }
  *x_bytes = aotc__fft_up64((size_t)nmax * 16u * AOTC_FFT_LANES) + AOTC__FFT_SLACK;
  return *x_bytes + 2u * (aotc__fft_up64((size_t)lmax * 16u * AOTC_FFT_LANES) + AOTC__FFT_SLACK);
}

/* An axis's lines split into `parts` ranges of whole blocks of AOTC_FFT_LANES lines (the last
 * range also takes the single lines after the last block: the grouping of one serial pass,
 * so the bits are the same), run through a parallel_for; the ranges one call runs use the
 * work buffers of its first, at work + first * work_bytes. */
typedef struct {
  const aotc__fft_axis* ax;
  int single;
  int64_t parts;
  unsigned char* work;
  size_t work_bytes, x_bytes;
} aotc__fft_split;

AOTC_INTERNAL void aotc__fft_split_range(void* ctx, int64_t begin, int64_t end) {
  const aotc__fft_split* j = (const aotc__fft_split*)ctx;
  const int64_t lines = j->ax->outer * j->ax->inner, blocks = lines / AOTC_FFT_LANES;
  unsigned char* w = j->work + (size_t)begin * j->work_bytes;
  size_t a_bytes = (j->work_bytes - j->x_bytes) / 2u;
  aotc_fpenv saved;
  aotc_fpenv_enter(&saved);
  for (int64_t p = begin; p < end; ++p) {
    int64_t t0 = p * blocks / j->parts * AOTC_FFT_LANES;
    int64_t t1 = p + 1 == j->parts ? lines : (p + 1) * blocks / j->parts * AOTC_FFT_LANES;
    if (j->single)
      aotc__fft_axis_run_f32(j->ax, t0, t1, (float*)(void*)w, (float*)(void*)(w + j->x_bytes),
                             (float*)(void*)(w + j->x_bytes + a_bytes));
    else
      aotc__fft_axis_run_f64(j->ax, t0, t1, (double*)(void*)w, (double*)(void*)(w + j->x_bytes),
                             (double*)(void*)(w + j->x_bytes + a_bytes));
  }
  aotc_fpenv_leave(&saved);
}

/* The transform, each axis's lines split into `parts` ranges run through parallel_for (none,
 * or parts 1: one serial pass); the scratch holds aotc_fft_scratch_need plus parts - 1 more
 * sets of work buffers. */
AOTC_INTERNAL void aotc__fft_run(int kind, int f64, int64_t batch, int64_t n0, int64_t n1, int64_t n2,
                                 const void* in, void* out, void* scratch, int fill, aotc__fft_parallel_for parallel_for,
                                 void* user, int64_t parts) {
  int64_t n[3] = {n0, n1, n2};
  if (batch <= 0 || n0 <= 0 || n1 <= 0 || n2 <= 0) return; /* an empty result */
  if (!parallel_for || parts < 1) parts = 1;
  unsigned char* mem = (unsigned char*)scratch;
  for (int d = 0; d < 3; d++)
    if (aotc__fft_axis_used(kind, d, n)) mem += aotc__fft_plan_bytes(n[d]);
  unsigned char* plans = (unsigned char*)scratch;
  void* tmp = mem;
  mem += aotc__fft_tmp_bytes(kind, batch, n);
  size_t x_bytes, work_bytes = aotc__fft_work_bytes(kind, n, &x_bytes);
  double* A = (double*)(void*)(mem + x_bytes);
  double* W = (double*)(void*)(mem + x_bytes + (work_bytes - x_bytes) / 2u);
  aotc__fft_plan plan[3];
  /* c64 data computes in f32 when every length is 5-smooth; Bluestein's transforms, and
   * c128 data, in double */
  int single = !f64;
  for (int d = 0; d < 3; d++) {
    if (!aotc__fft_axis_used(kind, d, n)) continue;
    aotc__fft_plan_init(&plan[d], n[d], &plans, A, W, fill);
    if (plan[d].len != n[d]) single = 0;
  }
  aotc__fft_split split;
  split.single = single;
  split.work = mem;
  split.work_bytes = work_bytes;
  split.x_bytes = x_bytes;

#define AOTC__FFT_AXIS_RUN(axp)                                                                \
  do {                                                                                         \
    split.ax = (axp);                                                                          \
    split.parts = parts < (axp)->outer * (axp)->inner / AOTC_FFT_LANES                          \
                      ? parts : (axp)->outer * (axp)->inner / AOTC_FFT_LANES;                    \
    if (split.parts > 1) {                                                                     \
      parallel_for(user, split.parts, aotc__fft_split_range, &split);                          \
    } else {                                                                                   \
      split.parts = 1;                                                                         \
      aotc__fft_split_range(&split, 0, 1);                                                     \
    }                                                                                          \
  } while (0)
  int real = f64 ? AOTC__FFT_F64 : AOTC__FFT_F32, cplx = f64 ? AOTC__FFT_C128 : AOTC__FFT_C64;
  int64_t h = n2 / 2 + 1;
  int64_t last = (kind == AOTC_FFT_FFT || kind == AOTC_FFT_IFFT) ? n2 : h; /* complex side's last dim */
  int64_t dims[3] = {n0, n1, last};
  aotc__fft_axis ax;
  ax.inverse = kind == AOTC_FFT_IFFT || kind == AOTC_FFT_IRFFT;
  ax.hermitian = 0;
  if (kind != AOTC_FFT_IRFFT) { /* the last axis from `in`, then the others in place in `out` */
    ax.plan = &plan[2];
    ax.src = in;
    ax.src_type = kind == AOTC_FFT_RFFT ? real : cplx;
    ax.n_in = n2;
    ax.dst = out;
    ax.dst_type = cplx;
    ax.n_out = last;
    ax.outer = batch * n0 * n1;
    ax.inner = 1;
    AOTC__FFT_AXIS_RUN(&ax);
    for (int d = 1; d >= 0; d--) {
      if (n[d] <= 1) continue;
      ax.plan = &plan[d];
      ax.src = out;
      ax.src_type = cplx;
      ax.n_in = ax.n_out = n[d];
      ax.outer = batch * (d == 1 ? n0 : 1);
      ax.inner = (d == 0 ? n1 : 1) * last;
      AOTC__FFT_AXIS_RUN(&ax);
    }
    return;
  }
  /* IRFFT: the leading axes from `in` into tmp (complex, in double), the last one into `out` */
  const void* src = in;
  int src_type = cplx;
  for (int d = 0; d < 2; d++) {
    if (n[d] <= 1) continue;
    ax.plan = &plan[d];
    ax.src = src;
    ax.src_type = src_type;
    ax.n_in = ax.n_out = n[d];
    ax.dst = tmp;
    ax.dst_type = AOTC__FFT_C128;
    ax.outer = batch * (d == 1 ? n0 : 1);
    ax.inner = (d == 0 ? n1 : 1) * dims[2];
    AOTC__FFT_AXIS_RUN(&ax);
    src = tmp;
    src_type = AOTC__FFT_C128;
  }
  ax.plan = &plan[2];
  ax.src = src;
  ax.src_type = src_type;
  ax.n_in = h;
  ax.dst = out;
  ax.dst_type = real;
  ax.n_out = n2;
  ax.outer = batch * n0 * n1;
  ax.inner = 1;
  ax.hermitian = 1;
  AOTC__FFT_AXIS_RUN(&ax);
}
#undef AOTC__FFT_AXIS_RUN

AOTC_RT_API void aotc_fft_c64(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in,
                              void* out, void* scratch) {
  aotc__fft_run(kind, 0, batch, n0, n1, n2, in, out, scratch, 1, 0, 0, 1);
}

AOTC_RT_API void aotc_fft_c128(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in,
                               void* out, void* scratch) {
  aotc__fft_run(kind, 1, batch, n0, n1, n2, in, out, scratch, 1, 0, 0, 1);
}

AOTC_RT_API void aotc_fft_c64_shared(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in,
                                     void* out, void* scratch, int fill) {
  aotc__fft_run(kind, 0, batch, n0, n1, n2, in, out, scratch, fill, 0, 0, 1);
}

AOTC_RT_API void aotc_fft_c128_shared(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in,
                                      void* out, void* scratch, int fill) {
  aotc__fft_run(kind, 1, batch, n0, n1, n2, in, out, scratch, fill, 0, 0, 1);
}

AOTC_RT_API size_t aotc_fft_threads_scratch_need(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2,
                                                 int64_t parts) {
  int64_t n[3] = {n0, n1, n2};
  size_t x_bytes, bytes = aotc_fft_scratch_need(kind, batch, n0, n1, n2);
  if (bytes == 0 || parts <= 1) return bytes;
  return bytes + (size_t)(parts - 1) * aotc__fft_work_bytes(kind, n, &x_bytes);
}

AOTC_RT_API void aotc_fft_c64_threads(aotc__fft_parallel_for parallel_for, void* user, int threads, int64_t parts, int kind,
                                      int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in, void* out,
                                      void* scratch) {
  aotc__fft_run(kind, 0, batch, n0, n1, n2, in, out, scratch, 1, parallel_for, user,
                threads > 0 && threads < parts ? threads : parts);
}

AOTC_RT_API void aotc_fft_c128_threads(aotc__fft_parallel_for parallel_for, void* user, int threads, int64_t parts, int kind,
                                       int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in, void* out,
                                       void* scratch) {
  aotc__fft_run(kind, 1, batch, n0, n1, n2, in, out, scratch, 1, parallel_for, user,
                threads > 0 && threads < parts ? threads : parts);
}

#endif /* AOTC_FFT_C */

/* aotc_transpose.c -- aotc_tr_f32 (aotc_transpose.h). */
#ifndef AOTC_TRANSPOSE_H
#include "aotc_transpose.h"
#endif

/* One 8 x 8 tile: dst[r * ldd + c] = src[c * lds + r] for r, c < 8. */
#if defined(AOTC_HAVE_AVX2) || defined(AOTC_HAVE_AVX512F)
AOTC_INLINE void aotc__tr_tile8(const float* src, int64_t lds, float* dst, int64_t ldd) {
  /* rows c of src: x0..x7; unpack pairs, then quads, then halves */
  __m256 x0 = _mm256_loadu_ps(src + 0 * lds), x1 = _mm256_loadu_ps(src + 1 * lds);
  __m256 x2 = _mm256_loadu_ps(src + 2 * lds), x3 = _mm256_loadu_ps(src + 3 * lds);
  __m256 x4 = _mm256_loadu_ps(src + 4 * lds), x5 = _mm256_loadu_ps(src + 5 * lds);
  __m256 x6 = _mm256_loadu_ps(src + 6 * lds), x7 = _mm256_loadu_ps(src + 7 * lds);
  __m256 t0 = _mm256_unpacklo_ps(x0, x1), t1 = _mm256_unpackhi_ps(x0, x1);
  __m256 t2 = _mm256_unpacklo_ps(x2, x3), t3 = _mm256_unpackhi_ps(x2, x3);
  __m256 t4 = _mm256_unpacklo_ps(x4, x5), t5 = _mm256_unpackhi_ps(x4, x5);
  __m256 t6 = _mm256_unpacklo_ps(x6, x7), t7 = _mm256_unpackhi_ps(x6, x7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(dst + 0 * ldd, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(dst + 1 * ldd, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(dst + 2 * ldd, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(dst + 3 * ldd, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(dst + 4 * ldd, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(dst + 5 * ldd, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(dst + 6 * ldd, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(dst + 7 * ldd, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#else
AOTC_INLINE void aotc__tr_tile8(const float* src, int64_t lds, float* dst, int64_t ldd) {
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) dst[r * ldd + c] = src[c * lds + r];
}
#endif

/* rows x cols elements one by one (the edges of the tiles).  Kept out of line: inlined
 * with constant sizes, gcc 12 -O2 warns (-Waggressive-loop-optimizations) of an index
 * overflow in an iteration the loop never reaches. */
AOTC_INTERNAL AOTC_NOIPA void aotc__tr_edge(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst,
                                            int64_t ldd) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[r * ldd + c] = src[c * lds + r];
}

AOTC_RT_API void aotc_tr_f32(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst,
                             int64_t ldd) {
  /* strips of 8 output rows: each reads 32 bytes of every input row it crosses, and the
   * next strip the rest of those lines while they are still in cache */
  const int64_t whole_r = rows / 8 * 8, whole_c = cols / 8 * 8;
  for (int64_t r0 = 0; r0 < whole_r; r0 += 8) {
    for (int64_t c0 = 0; c0 < whole_c; c0 += 8)
      aotc__tr_tile8(src + c0 * lds + r0, lds, dst + r0 * ldd + c0, ldd);
    if (whole_c < cols) aotc__tr_edge(8, cols - whole_c, src + whole_c * lds + r0, lds, dst + r0 * ldd + whole_c, ldd);
  }
  if (whole_r < rows) aotc__tr_edge(rows - whole_r, cols, src + whole_r, lds, dst + whole_r * ldd, ldd);
}

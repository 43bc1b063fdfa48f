/* aotc_gemm.c -- packed GEMM (GotoBLAS / BLIS structure) for f32 and f64.
 *
 * Loop nest, outermost first:
 *   jc over N in NC blocks
 *     pc over K in KC blocks        pack B[pc.., jc..] into KC x NC panels
 *       ic over M in MC blocks      pack A[ic.., pc..] into MC x KC panels
 *         jr over the block in NR steps
 *           ir over the block in MR steps:  MR x NR micro-kernel
 * Packed panels are zero-padded to whole tiles, so the micro-kernel always
 * runs full tiles; a tile that hangs over the edge of C is computed into a
 * local buffer and only its valid part is written.  The first K block
 * overwrites C, later ones accumulate.  A row-major A (column stride 1) is not
 * packed: its full MR-row tiles are read in place by a micro-kernel with a row
 * stride, only a last partial panel is packed.  A row-major B of exactly NR
 * aligned columns is its own packed panel.  Either way every element of C sees
 * the same operations in the same order, so the bits do not depend on it.
 *
 * Micro-kernels are chosen at compile time: AVX-512F, AVX2+FMA, NEON, or a
 * portable scalar kernel written for auto-vectorisation.  The vector kernels
 * share one body, written against a small per-ISA macro vocabulary
 * (AOTC__SV_* for f32, AOTC__DV_* for f64).  No allocation, no state.
 *
 * AOTC_GEMM_SAME_ORDER (a fat x86-64 file defines it for all its levels): every
 * ISA computes the bits of the AVX2+FMA kernels.  The portable kernels then
 * fuse each product as those do (fmaf), and the matrix-vector dot keeps the
 * AVX2 kernel's 8 (f64: 4) partial sums and its order of adding them, also
 * with AVX-512F.  Elsewhere the dot keeps as many partial sums as the vector
 * has lanes.
 */
#ifndef AOTC_GEMM_H
#include "aotc_gemm.h"
#endif
#ifndef AOTC_MATH_H
#include "aotc_math.h"
#endif

#include <math.h>
#include <string.h>

/* ---- per-ISA vector vocabulary ------------------------------------------ */
/* _T vector type, _L lanes, _LOAD aligned load, _LOADU/_STOREU unaligned,
 * _BCAST(p) splat *p, _FMA(a, b, c) = a*b + c, _ADD, _ZERO, _REDUCE(v) sum
 * of the lanes, _FMAS(a, b, c) the scalar fused a*b + c (one instruction on
 * these ISAs), so scalar tails round exactly like vector lanes. */
#if defined(AOTC_HAVE_AVX512F)
#define AOTC__SV_T __m512
#define AOTC__SV_L 16
#define AOTC__SV_LOAD(p) _mm512_load_ps(p)
#define AOTC__SV_LOADU(p) _mm512_loadu_ps(p)
#define AOTC__SV_STOREU(p, v) _mm512_storeu_ps((p), (v))
#define AOTC__SV_BCAST(p) _mm512_set1_ps(*(p))
#define AOTC__SV_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define AOTC__SV_ADD(a, b) _mm512_add_ps((a), (b))
#define AOTC__SV_ZERO() _mm512_setzero_ps()
#define AOTC__DV_T __m512d
#define AOTC__DV_L 8
#define AOTC__DV_LOAD(p) _mm512_load_pd(p)
#define AOTC__DV_LOADU(p) _mm512_loadu_pd(p)
#define AOTC__DV_STOREU(p, v) _mm512_storeu_pd((p), (v))
#define AOTC__DV_BCAST(p) _mm512_set1_pd(*(p))
#define AOTC__DV_FMA(a, b, c) _mm512_fmadd_pd((a), (b), (c))
#define AOTC__DV_ADD(a, b) _mm512_add_pd((a), (b))
#define AOTC__DV_ZERO() _mm512_setzero_pd()
#define AOTC__SV_REDUCE(v) _mm512_reduce_add_ps(v)
#define AOTC__SV_FMAS(a, b, c) fmaf((a), (b), (c))
#define AOTC__DV_FMAS(a, b, c) fma((a), (b), (c))
#define AOTC__DV_REDUCE(v) _mm512_reduce_add_pd(v)
#define AOTC__VREG_CONSTRAINT "+v"
#define AOTC__GEMM_VECTOR 1
#if defined(AOTC_GEMM_SAME_ORDER)
#define AOTC__GEMV_AVX2 1 /* the matrix-vector kernels in AVX2's lanes and order */
#endif
#elif defined(AOTC_HAVE_AVX2)
#define AOTC__SV_T __m256
#define AOTC__SV_L 8
#define AOTC__SV_LOAD(p) _mm256_load_ps(p)
#define AOTC__SV_LOADU(p) _mm256_loadu_ps(p)
#define AOTC__SV_STOREU(p, v) _mm256_storeu_ps((p), (v))
#define AOTC__SV_BCAST(p) _mm256_broadcast_ss(p)
#define AOTC__SV_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define AOTC__SV_ADD(a, b) _mm256_add_ps((a), (b))
#define AOTC__SV_ZERO() _mm256_setzero_ps()
#define AOTC__DV_T __m256d
#define AOTC__DV_L 4
#define AOTC__DV_LOAD(p) _mm256_load_pd(p)
#define AOTC__DV_LOADU(p) _mm256_loadu_pd(p)
#define AOTC__DV_STOREU(p, v) _mm256_storeu_pd((p), (v))
#define AOTC__DV_BCAST(p) _mm256_broadcast_sd(p)
#define AOTC__DV_FMA(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#define AOTC__DV_ADD(a, b) _mm256_add_pd((a), (b))
#define AOTC__DV_ZERO() _mm256_setzero_pd()
#define AOTC__SV_REDUCE(v) aotc__hsum_ps256(v)
#define AOTC__SV_FMAS(a, b, c) fmaf((a), (b), (c))
#define AOTC__DV_FMAS(a, b, c) fma((a), (b), (c))
#define AOTC__DV_REDUCE(v) aotc__hsum_pd256(v)
#define AOTC__VREG_CONSTRAINT "+x"
#define AOTC__GEMM_VECTOR 1
#define AOTC__GEMV_AVX2 1
#elif defined(AOTC_HAVE_NEON)
#define AOTC__SV_T float32x4_t
#define AOTC__SV_L 4
#define AOTC__SV_LOAD(p) vld1q_f32(p)
#define AOTC__SV_LOADU(p) vld1q_f32(p)
#define AOTC__SV_STOREU(p, v) vst1q_f32((p), (v))
#define AOTC__SV_BCAST(p) vld1q_dup_f32(p)
#define AOTC__SV_FMA(a, b, c) vfmaq_f32((c), (a), (b))
#define AOTC__SV_ADD(a, b) vaddq_f32((a), (b))
#define AOTC__SV_ZERO() vdupq_n_f32(0.0f)
#define AOTC__DV_T float64x2_t
#define AOTC__DV_L 2
#define AOTC__DV_LOAD(p) vld1q_f64(p)
#define AOTC__DV_LOADU(p) vld1q_f64(p)
#define AOTC__DV_STOREU(p, v) vst1q_f64((p), (v))
#define AOTC__DV_BCAST(p) vld1q_dup_f64(p)
#define AOTC__DV_FMA(a, b, c) vfmaq_f64((c), (a), (b))
#define AOTC__DV_ADD(a, b) vaddq_f64((a), (b))
#define AOTC__DV_ZERO() vdupq_n_f64(0.0)
#define AOTC__SV_REDUCE(v) vaddvq_f32(v)
#define AOTC__SV_FMAS(a, b, c) fmaf((a), (b), (c))
#define AOTC__DV_FMAS(a, b, c) fma((a), (b), (c))
#define AOTC__DV_REDUCE(v) vaddvq_f64(v)
#define AOTC__VREG_CONSTRAINT "+w"
#define AOTC__GEMM_VECTOR 1
#endif

/* The matrix-vector kernels' vocabulary: AVX2's (AOTC__S8_* f32, AOTC__D4_* f64), or the
 * micro-kernels' own. */
#if defined(AOTC__GEMV_AVX2)
#define AOTC__S8_T __m256
#define AOTC__S8_L 8
#define AOTC__S8_LOADU(p) _mm256_loadu_ps(p)
#define AOTC__S8_STOREU(p, v) _mm256_storeu_ps((p), (v))
#define AOTC__S8_BCAST(p) _mm256_broadcast_ss(p)
#define AOTC__S8_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define AOTC__S8_ZERO() _mm256_setzero_ps()
#define AOTC__S8_FMAS(a, b, c) fmaf((a), (b), (c))
#define AOTC__S8_REDUCE(v) aotc__hsum_ps256(v)
#define AOTC__D4_T __m256d
#define AOTC__D4_L 4
#define AOTC__D4_LOADU(p) _mm256_loadu_pd(p)
#define AOTC__D4_STOREU(p, v) _mm256_storeu_pd((p), (v))
#define AOTC__D4_BCAST(p) _mm256_broadcast_sd(p)
#define AOTC__D4_FMA(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#define AOTC__D4_ZERO() _mm256_setzero_pd()
#define AOTC__D4_FMAS(a, b, c) fma((a), (b), (c))
#define AOTC__D4_REDUCE(v) aotc__hsum_pd256(v)
/* lanes (0+4)+(2+6) + (1+5)+(3+7); f64 (0+2)+(1+3) */
AOTC_INLINE float aotc__hsum_ps256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
AOTC_INLINE double aotc__hsum_pd256(__m256d v) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
#define AOTC__GEMV_S AOTC__S8
#define AOTC__GEMV_D AOTC__D4
#else
#define AOTC__GEMV_S AOTC__SV
#define AOTC__GEMV_D AOTC__DV
#endif

/* ---- micro-kernels -------------------------------------------------------- */
/* AOTC__KEEP(v): v stays in a register.  The tiles' B vectors are loaded once per k and
 * used by every row; in a tile of few rows gcc 12 instead folds the load into each
 * row's FMA as a memory operand, and the tile becomes bound by loads (Zen 3: a 4-row
 * tile slower than a 6-row one).  An empty asm statement with the value as a register
 * operand keeps it loaded; it emits no instruction and changes no value. */
#if defined(__GNUC__) && defined(AOTC__VREG_CONSTRAINT)
#define AOTC__KEEP(v) __asm__("" : AOTC__VREG_CONSTRAINT(v))
#else
#define AOTC__KEEP(v) ((void)0)
#endif
/* kernel(kc, a, b, c, ldc, accumulate):
 *   for i < MR, j < NR:  c[i*ldc + j] (+)= sum_k a[k*MR + i] * b[k*NR + j]
 * a and b are packed panels (b 64-byte aligned); c is any row-major tile. */

#define AOTC__REP2(M, P) M(0, P) M(1, P)
#define AOTC__REP3(M, P) AOTC__REP2(M, P) M(2, P)
#define AOTC__REP4(M, P) AOTC__REP3(M, P) M(3, P)
#define AOTC__REP5(M, P) AOTC__REP4(M, P) M(4, P)
#define AOTC__REP6(M, P) AOTC__REP5(M, P) M(5, P)
#define AOTC__REP7(M, P) AOTC__REP6(M, P) M(6, P)
#define AOTC__REP8(M, P) AOTC__REP7(M, P) M(7, P)
#define AOTC__REP9(M, P) AOTC__REP8(M, P) M(8, P)
#define AOTC__REP10(M, P) AOTC__REP9(M, P) M(9, P)
#define AOTC__REP11(M, P) AOTC__REP10(M, P) M(10, P)
#define AOTC__REP12(M, P) AOTC__REP11(M, P) M(11, P)
#define AOTC__REP14(M, P) AOTC__REP12(M, P) M(12, P) M(13, P)
/* The short tiles' heights for each MR: (MR+1)/2 .. MR-1 (see aotc__tile_rows). */
#define AOTC__SHORT_4(X, A, B, C, D) X(A, B, C, D, 2) X(A, B, C, D, 3)
#define AOTC__SHORT_6(X, A, B, C, D) X(A, B, C, D, 3) X(A, B, C, D, 4) X(A, B, C, D, 5)
#define AOTC__SHORT_12(X, A, B, C, D)                                          \
  X(A, B, C, D, 6) X(A, B, C, D, 7) X(A, B, C, D, 8) X(A, B, C, D, 9) X(A, B, C, D, 10) \
  X(A, B, C, D, 11)
#define AOTC__SHORT_ROWS_(mr) AOTC__SHORT_##mr
#define AOTC__SHORT_ROWS(mr) AOTC__SHORT_ROWS_(mr)
#define AOTC__REPN_(n) AOTC__REP##n
#define AOTC__REPN(n) AOTC__REPN_(n)

#if defined(AOTC__GEMM_VECTOR)
/* Register tile of MR rows x 2 vectors: accumulators c<i>_0, c<i>_1. */
#define AOTC__K_DECL(i, P) P##_T c##i##_0 = P##_ZERO(), c##i##_1 = P##_ZERO();
#define AOTC__K_PREFETCH(i, P)                    \
  AOTC_PREFETCH_W(c + i * ldc);                   \
  AOTC_PREFETCH_W(c + i * ldc + 2 * P##_L - 1);
#define AOTC__K_FMA(i, P)                   \
  {                                         \
    P##_T ai = P##_BCAST(a + i);            \
    c##i##_0 = P##_FMA(ai, b0, c##i##_0);   \
    c##i##_1 = P##_FMA(ai, b1, c##i##_1);   \
  }
#define AOTC__K_STORE(i, P)                                   \
  {                                                           \
    if (accumulate) {                                         \
      c##i##_0 = P##_ADD(c##i##_0, P##_LOADU(c + i * ldc));   \
      c##i##_1 = P##_ADD(c##i##_1, P##_LOADU(c + i * ldc + P##_L)); \
    }                                                         \
    P##_STOREU(c + i * ldc, c##i##_0);                        \
    P##_STOREU(c + i * ldc + P##_L, c##i##_1);                \
  }
#define AOTC__DEF_VKERNEL(NAME, T, P, MR)                                              \
  AOTC_INTERNAL void NAME(int64_t kc, const T* AOTC_RESTRICT a,                        \
                          const T* AOTC_RESTRICT b, T* AOTC_RESTRICT c, int64_t ldc,   \
                          int accumulate) {                                            \
    AOTC__REPN(MR)(AOTC__K_DECL, P)                                                    \
    AOTC__REPN(MR)(AOTC__K_PREFETCH, P)                                                \
    for (int64_t k = 0; k < kc; ++k) {                                                 \
      P##_T b0 = P##_LOAD(b);                                                          \
      P##_T b1 = P##_LOAD(b + P##_L);                                                  \
      AOTC__KEEP(b0);                                                                  \
      AOTC__KEEP(b1);                                                                  \
      AOTC__REPN(MR)(AOTC__K_FMA, P)                                                   \
      a += MR;                                                                         \
      b += 2 * P##_L;                                                                  \
    }                                                                                  \
    AOTC__REPN(MR)(AOTC__K_STORE, P)                                                   \
  }
/* The same tile with A read in place: row i of the tile is a + i*lda (a[k] of each
 * row contiguous), so a product whose A is row-major needs no packed copy of A.
 * Every accumulator sees the same operations in the same order as above, so the
 * two kernels give the same bits. */
#define AOTC__K_FMA_ROWS(i, P)                  \
  {                                             \
    P##_T ai = P##_BCAST(a + i * lda + k);      \
    c##i##_0 = P##_FMA(ai, b0, c##i##_0);       \
    c##i##_1 = P##_FMA(ai, b1, c##i##_1);       \
  }
#define AOTC__DEF_VKERNEL_ROWS(NAME, T, P, MR)                                         \
  AOTC_INTERNAL void NAME(int64_t kc, const T* AOTC_RESTRICT a, int64_t lda,           \
                          const T* AOTC_RESTRICT b, T* AOTC_RESTRICT c, int64_t ldc,   \
                          int accumulate) {                                            \
    AOTC__REPN(MR)(AOTC__K_DECL, P)                                                    \
    AOTC__REPN(MR)(AOTC__K_PREFETCH, P)                                                \
    for (int64_t k = 0; k < kc; ++k) {                                                 \
      P##_T b0 = P##_LOAD(b);                                                          \
      P##_T b1 = P##_LOAD(b + P##_L);                                                  \
      AOTC__KEEP(b0);                                                                  \
      AOTC__KEEP(b1);                                                                  \
      AOTC__REPN(MR)(AOTC__K_FMA_ROWS, P)                                              \
      b += 2 * P##_L;                                                                  \
    }                                                                                  \
    AOTC__REPN(MR)(AOTC__K_STORE, P)                                                   \
  }
/* Both operands read in place: B's rows k of the tile's 2 vectors are b + k*ldb.  The
 * same operations in the same order again, so the same bits. */
#define AOTC__DEF_VKERNEL_DIRECT(NAME, T, P, MR)                                       \
  AOTC_INTERNAL void NAME(int64_t kc, const T* AOTC_RESTRICT a, int64_t lda,           \
                          const T* AOTC_RESTRICT b, int64_t ldb, T* AOTC_RESTRICT c,   \
                          int64_t ldc, int accumulate) {                               \
    AOTC__REPN(MR)(AOTC__K_DECL, P)                                                    \
    AOTC__REPN(MR)(AOTC__K_PREFETCH, P)                                                \
    for (int64_t k = 0; k < kc; ++k) {                                                 \
      P##_T b0 = P##_LOADU(b);                                                         \
      P##_T b1 = P##_LOADU(b + P##_L);                                                 \
      AOTC__KEEP(b0);                                                                  \
      AOTC__KEEP(b1);                                                                  \
      AOTC__REPN(MR)(AOTC__K_FMA_ROWS, P)                                              \
      b += ldb;                                                                        \
    }                                                                                  \
    AOTC__REPN(MR)(AOTC__K_STORE, P)                                                   \
  }
AOTC__DEF_VKERNEL(aotc__sgemm_kernel, float, AOTC__SV, AOTC_SGEMM_MR)
AOTC__DEF_VKERNEL(aotc__dgemm_kernel, double, AOTC__DV, AOTC_DGEMM_MR)
AOTC__DEF_VKERNEL_ROWS(aotc__sgemm_kernel_rows, float, AOTC__SV, AOTC_SGEMM_MR)
AOTC__DEF_VKERNEL_ROWS(aotc__dgemm_kernel_rows, double, AOTC__DV, AOTC_DGEMM_MR)
AOTC__DEF_VKERNEL_DIRECT(aotc__sgemm_kernel_direct, float, AOTC__SV, AOTC_SGEMM_MR)
AOTC__DEF_VKERNEL_DIRECT(aotc__dgemm_kernel_direct, double, AOTC__DV, AOTC_DGEMM_MR)
#define AOTC__DEF_SHORT(X, NAME, T, P, n) X(NAME##_##n, T, P, n)
AOTC__SHORT_ROWS(AOTC_SGEMM_MR)(AOTC__DEF_SHORT, AOTC__DEF_VKERNEL_ROWS, aotc__sgemm_kernel_rows, float, AOTC__SV)
AOTC__SHORT_ROWS(AOTC_DGEMM_MR)(AOTC__DEF_SHORT, AOTC__DEF_VKERNEL_ROWS, aotc__dgemm_kernel_rows, double, AOTC__DV)
AOTC__SHORT_ROWS(AOTC_SGEMM_MR)(AOTC__DEF_SHORT, AOTC__DEF_VKERNEL_DIRECT, aotc__sgemm_kernel_direct, float, AOTC__SV)
AOTC__SHORT_ROWS(AOTC_DGEMM_MR)(AOTC__DEF_SHORT, AOTC__DEF_VKERNEL_DIRECT, aotc__dgemm_kernel_direct, double, AOTC__DV)
AOTC_STATIC_ASSERT(AOTC_SGEMM_NR == 2 * AOTC__SV_L, "sgemm tile is two vectors wide");
AOTC_STATIC_ASSERT(AOTC_DGEMM_NR == 2 * AOTC__DV_L, "dgemm tile is two vectors wide");
#else
/* a*b + c as the portable kernels compute it: rounded twice, or under
 * AOTC_GEMM_SAME_ORDER once, as the vector kernels do (T is float or double) */
#if defined(AOTC_GEMM_SAME_ORDER)
#define AOTC__PMAD_float(a, b, c) fmaf((a), (b), (c))
#define AOTC__PMAD_double(a, b, c) fma((a), (b), (c))
#else
#define AOTC__PMAD_float(a, b, c) ((c) + (a) * (b))
#define AOTC__PMAD_double(a, b, c) ((c) + (a) * (b))
#endif
#define AOTC__PMAD(T, a, b, c) AOTC__PMAD_##T(a, b, c)
/* Portable kernel: the accumulator tile is a local array with constant
 * bounds, which gcc and clang keep in vector registers. */
#define AOTC__DEF_SKERNEL(NAME, T, MR, NR)                                             \
  AOTC_INTERNAL void NAME(int64_t kc, const T* AOTC_RESTRICT a,                        \
                          const T* AOTC_RESTRICT b, T* AOTC_RESTRICT c, int64_t ldc,   \
                          int accumulate) {                                            \
    T acc[MR][NR];                                                                     \
    for (int i = 0; i < MR; ++i)                                                       \
      for (int j = 0; j < NR; ++j) acc[i][j] = 0;                                      \
    for (int64_t k = 0; k < kc; ++k) {                                                 \
      for (int i = 0; i < MR; ++i)                                                     \
        for (int j = 0; j < NR; ++j) acc[i][j] = AOTC__PMAD(T, a[i], b[j], acc[i][j]); \
      a += MR;                                                                         \
      b += NR;                                                                         \
    }                                                                                  \
    for (int i = 0; i < MR; ++i)                                                       \
      for (int j = 0; j < NR; ++j)                                                     \
        c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];          \
  }
#define AOTC__DEF_SKERNEL_ROWS(NAME, T, MR, NR)                                        \
  AOTC_INTERNAL void NAME(int64_t kc, const T* AOTC_RESTRICT a, int64_t lda,           \
                          const T* AOTC_RESTRICT b, T* AOTC_RESTRICT c, int64_t ldc,   \
                          int accumulate) {                                            \
    T acc[MR][NR];                                                                     \
    for (int i = 0; i < MR; ++i)                                                       \
      for (int j = 0; j < NR; ++j) acc[i][j] = 0;                                      \
    for (int64_t k = 0; k < kc; ++k) {                                                 \
      for (int i = 0; i < MR; ++i)                                                     \
        for (int j = 0; j < NR; ++j) acc[i][j] = AOTC__PMAD(T, a[i * lda + k], b[j], acc[i][j]); \
      b += NR;                                                                         \
    }                                                                                  \
    for (int i = 0; i < MR; ++i)                                                       \
      for (int j = 0; j < NR; ++j)                                                     \
        c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];          \
  }
AOTC__DEF_SKERNEL(aotc__sgemm_kernel, float, AOTC_SGEMM_MR, AOTC_SGEMM_NR)
AOTC__DEF_SKERNEL(aotc__dgemm_kernel, double, AOTC_DGEMM_MR, AOTC_DGEMM_NR)
#define AOTC__DEF_SKERNEL_DIRECT(NAME, T, MR, NR)                                      \
  AOTC_INTERNAL void NAME(int64_t kc, const T* AOTC_RESTRICT a, int64_t lda,           \
                          const T* AOTC_RESTRICT b, int64_t ldb, T* AOTC_RESTRICT c,   \
                          int64_t ldc, int accumulate) {                               \
    T acc[MR][NR];                                                                     \
    for (int i = 0; i < MR; ++i)                                                       \
      for (int j = 0; j < NR; ++j) acc[i][j] = 0;                                      \
    for (int64_t k = 0; k < kc; ++k) {                                                 \
      for (int i = 0; i < MR; ++i)                                                     \
        for (int j = 0; j < NR; ++j) acc[i][j] = AOTC__PMAD(T, a[i * lda + k], b[j], acc[i][j]); \
      b += ldb;                                                                        \
    }                                                                                  \
    for (int i = 0; i < MR; ++i)                                                       \
      for (int j = 0; j < NR; ++j)                                                     \
        c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];          \
  }
AOTC__DEF_SKERNEL_ROWS(aotc__sgemm_kernel_rows, float, AOTC_SGEMM_MR, AOTC_SGEMM_NR)
AOTC__DEF_SKERNEL_ROWS(aotc__dgemm_kernel_rows, double, AOTC_DGEMM_MR, AOTC_DGEMM_NR)
AOTC__DEF_SKERNEL_DIRECT(aotc__sgemm_kernel_direct, float, AOTC_SGEMM_MR, AOTC_SGEMM_NR)
AOTC__DEF_SKERNEL_DIRECT(aotc__dgemm_kernel_direct, double, AOTC_DGEMM_MR, AOTC_DGEMM_NR)
/* short tiles: the portable kernels take (rows, NR) */
#define AOTC__DEF_SHORT(X, NAME, T, NR, n) X(NAME##_##n, T, n, NR)
AOTC__SHORT_ROWS(AOTC_SGEMM_MR)(AOTC__DEF_SHORT, AOTC__DEF_SKERNEL_ROWS, aotc__sgemm_kernel_rows, float, AOTC_SGEMM_NR)
AOTC__SHORT_ROWS(AOTC_DGEMM_MR)(AOTC__DEF_SHORT, AOTC__DEF_SKERNEL_ROWS, aotc__dgemm_kernel_rows, double, AOTC_DGEMM_NR)
AOTC__SHORT_ROWS(AOTC_SGEMM_MR)(AOTC__DEF_SHORT, AOTC__DEF_SKERNEL_DIRECT, aotc__sgemm_kernel_direct, float, AOTC_SGEMM_NR)
AOTC__SHORT_ROWS(AOTC_DGEMM_MR)(AOTC__DEF_SHORT, AOTC__DEF_SKERNEL_DIRECT, aotc__dgemm_kernel_direct, double, AOTC_DGEMM_NR)
#endif

/* A tile of `rows` rows, MR or one of the short ones, with A read in place (_rows) or
 * A and B read in place (_direct).  Each element of C sees the same products in the
 * same order whatever the tile's height: the same bits. */
#define AOTC__CASE_ROWS(X, NAME, T, P, n) \
  case n:                                 \
    NAME##_##n(kc, a, lda, b, c, ldc, accumulate); \
    return;
#define AOTC__CASE_DIRECT(X, NAME, T, P, n) \
  case n:                                   \
    NAME##_##n(kc, a, lda, b, ldb, c, ldc, accumulate); \
    return;
#define AOTC__DEF_TILE_N(NAME, T, MR)                                                       \
  AOTC_INTERNAL void NAME##_rows_n(int64_t rows, int64_t kc, const T* AOTC_RESTRICT a,      \
                                   int64_t lda, const T* AOTC_RESTRICT b,                   \
                                   T* AOTC_RESTRICT c, int64_t ldc, int accumulate) {       \
    switch (rows) {                                                                         \
      AOTC__SHORT_ROWS(MR)(AOTC__CASE_ROWS, _, NAME##_rows, T, _)                           \
      default:                                                                              \
        NAME##_rows(kc, a, lda, b, c, ldc, accumulate);                                     \
    }                                                                                       \
  }                                                                                         \
  AOTC_INTERNAL void NAME##_direct_n(int64_t rows, int64_t kc, const T* AOTC_RESTRICT a,    \
                                     int64_t lda, const T* AOTC_RESTRICT b, int64_t ldb,    \
                                     T* AOTC_RESTRICT c, int64_t ldc, int accumulate) {     \
    switch (rows) {                                                                         \
      AOTC__SHORT_ROWS(MR)(AOTC__CASE_DIRECT, _, NAME##_direct, T, _)                       \
      default:                                                                              \
        NAME##_direct(kc, a, lda, b, ldb, c, ldc, accumulate);                              \
    }                                                                                       \
  }
AOTC__DEF_TILE_N(aotc__sgemm_kernel, float, AOTC_SGEMM_MR)
AOTC__DEF_TILE_N(aotc__dgemm_kernel, double, AOTC_DGEMM_MR)

/* Rows of the next row tile of a block with `left` rows to go, for the kernels that
 * read A in place: whole MR tiles, and a last tile of the r = left % MR rows left
 * when r >= (MR+1)/2; a shorter rest is taken with the last whole tile as two
 * tiles of about (MR+r)/2 rows.  A tile of r < MR rows is computed by a kernel of
 * r rows, so no row is computed in vain (a 2-row rest through a 6-row tile and an
 * edge copy cost a Zen 3 more than a whole tile: 128x256x256, 86 -> 90 GFLOP/s).
 * A block of fewer than (MR+1)/2 rows is packed and computed as one MR tile. */
#define AOTC__SHORT_MIN(MR) (((MR) + 1) / 2)
AOTC_INTERNAL int64_t aotc__tile_rows(int64_t left, int64_t MR) {
  if (left >= 2 * MR || left == MR) return MR;
  if (left > MR) return left - MR >= AOTC__SHORT_MIN(MR) ? MR : left - left / 2;
  return left;
}

/* Row tiles of an in-place A whose rows are a multiple of 2 KiB apart: such rows
 * share a few sets of the L1 cache, and a 12-row tile's lines (with B's) overflow
 * their 8 ways.  Tiles of MR/2 rows instead, the last one (MR/2+1 .. MR rows) as
 * aotc__tile_rows takes it.  The tile's height changes no bits: each element of C
 * sums its products in K order whatever the tile.  Only the 12-row AVX-512 tiles
 * need it (Zen 4, 1024^3 f32 from row-major A: 101 -> 110 GFLOP/s; K = 1000, whose
 * rows do not alias, ran at 109 either way). */
#if defined(AOTC_HAVE_AVX512F)
#define AOTC__GEMM_SPLIT_ALIASED 1
#else
#define AOTC__GEMM_SPLIT_ALIASED 0
#endif
AOTC_INTERNAL int aotc__rows_alias(int64_t rs_bytes, int64_t MR) {
  return AOTC__GEMM_SPLIT_ALIASED && MR > 8 && rs_bytes % 2048 == 0;
}
AOTC_INTERNAL int64_t aotc__tile_rows_in_place(int64_t left, int64_t MR, int alias) {
  return alias && left > MR ? MR / 2 : aotc__tile_rows(left, MR);
}

/* ---- matrix-vector shapes (M == 1 or N == 1) ------------------------------ */
/* Packing would read the matrix twice and pad the vector to a whole tile, so
 * these shapes stream the matrix once instead:
 *   axpy: out[i] = sum_k coef[k*cs] * rows[k*rs + i], i < len (rows contiguous)
 *   dot:  out[r*os] = sum_k rows[r*rs + k] * vec[k], r < count (rows contiguous)
 */
#define AOTC__AXPY_CHUNK 2048 /* output elements kept in L1 per pass over K */
#if defined(AOTC__GEMM_VECTOR)
#define AOTC__DEF_GEMV(NAME, T, P)                                                         \
  AOTC_INTERNAL void NAME##_axpy(int64_t len, int64_t K, const T* coef, int64_t cs,        \
                                 const T* rows, int64_t rs, T* AOTC_RESTRICT out) {        \
    for (int64_t i0 = 0; i0 < len; i0 += AOTC__AXPY_CHUNK) {                               \
      const int64_t il = len - i0 < AOTC__AXPY_CHUNK ? len - i0 : AOTC__AXPY_CHUNK;         \
      const int64_t iv = il / P##_L * P##_L;                                                \
      T* o = out + i0;                                                                      \
      for (int64_t i = 0; i < il; ++i) o[i] = 0;                                            \
      int64_t k = 0;                                                                        \
      for (; k + 4 <= K; k += 4) {                                                          \
        const T c0 = coef[k * cs], c1 = coef[(k + 1) * cs];                                 \
        const T c2 = coef[(k + 2) * cs], c3 = coef[(k + 3) * cs];                           \
        const P##_T v0 = P##_BCAST(&c0), v1 = P##_BCAST(&c1);                              \
        const P##_T v2 = P##_BCAST(&c2), v3 = P##_BCAST(&c3);                               \
        const T* r0 = rows + k * rs + i0;                                                   \
        const T* r1 = r0 + rs;                                                              \
        const T* r2 = r1 + rs;                                                              \
        const T* r3 = r2 + rs;                                                              \
        for (int64_t i = 0; i < iv; i += P##_L) {                                           \
          P##_T acc = P##_LOADU(o + i);                                                     \
          acc = P##_FMA(v0, P##_LOADU(r0 + i), acc);                                        \
          acc = P##_FMA(v1, P##_LOADU(r1 + i), acc);                                        \
          acc = P##_FMA(v2, P##_LOADU(r2 + i), acc);                                        \
          acc = P##_FMA(v3, P##_LOADU(r3 + i), acc);                                        \
          P##_STOREU(o + i, acc);                                                           \
        }                                                                                   \
        for (int64_t i = iv; i < il; ++i) /* fused, in the order of the vector lanes */      \
          o[i] = P##_FMAS(c3, r3[i], P##_FMAS(c2, r2[i], P##_FMAS(c1, r1[i],                 \
                                                               P##_FMAS(c0, r0[i], o[i])))); \
      }                                                                                     \
      for (; k < K; ++k) {                                                                  \
        const T c0 = coef[k * cs];                                                          \
        const P##_T v0 = P##_BCAST(&c0);                                                    \
        const T* r0 = rows + k * rs + i0;                                                   \
        for (int64_t i = 0; i < iv; i += P##_L)                                             \
          P##_STOREU(o + i, P##_FMA(v0, P##_LOADU(r0 + i), P##_LOADU(o + i)));              \
        for (int64_t i = iv; i < il; ++i) o[i] = P##_FMAS(c0, r0[i], o[i]);                 \
      }                                                                                     \
    }                                                                                       \
  }                                                                                         \
  AOTC_INTERNAL void NAME##_dot(int64_t count, int64_t K, const T* rows, int64_t rs,        \
                                const T* AOTC_RESTRICT vec, T* out, int64_t os) {           \
    const int64_t kv = K / P##_L * P##_L;                                                   \
    int64_t r = 0;                                                                          \
    for (; r + 4 <= count; r += 4) {                                                        \
      const T* a0 = rows + r * rs;                                                          \
      const T* a1 = a0 + rs;                                                                \
      const T* a2 = a1 + rs;                                                                \
      const T* a3 = a2 + rs;                                                                \
      P##_T s0 = P##_ZERO(), s1 = P##_ZERO(), s2 = P##_ZERO(), s3 = P##_ZERO();             \
      for (int64_t k = 0; k < kv; k += P##_L) {                                             \
        const P##_T v = P##_LOADU(vec + k);                                                 \
        s0 = P##_FMA(P##_LOADU(a0 + k), v, s0);                                             \
        s1 = P##_FMA(P##_LOADU(a1 + k), v, s1);                                             \
        s2 = P##_FMA(P##_LOADU(a2 + k), v, s2);                                             \
        s3 = P##_FMA(P##_LOADU(a3 + k), v, s3);                                             \
      }                                                                                     \
      T t0 = P##_REDUCE(s0), t1 = P##_REDUCE(s1), t2 = P##_REDUCE(s2), t3 = P##_REDUCE(s3); \
      for (int64_t k = kv; k < K; ++k) {                                                    \
        t0 += a0[k] * vec[k];                                                               \
        t1 += a1[k] * vec[k];                                                               \
        t2 += a2[k] * vec[k];                                                               \
        t3 += a3[k] * vec[k];                                                               \
      }                                                                                     \
      out[r * os] = t0;                                                                     \
      out[(r + 1) * os] = t1;                                                               \
      out[(r + 2) * os] = t2;                                                               \
      out[(r + 3) * os] = t3;                                                               \
    }                                                                                       \
    for (; r < count; ++r) {                                                                \
      const T* a0 = rows + r * rs;                                                          \
      P##_T s0 = P##_ZERO();                                                                \
      for (int64_t k = 0; k < kv; k += P##_L)                                               \
        s0 = P##_FMA(P##_LOADU(a0 + k), P##_LOADU(vec + k), s0);                            \
      T t0 = P##_REDUCE(s0);                                                                \
      for (int64_t k = kv; k < K; ++k) t0 += a0[k] * vec[k];                                \
      out[r * os] = t0;                                                                     \
    }                                                                                       \
  }
#define AOTC__DEF_GEMV_X(NAME, T, P) AOTC__DEF_GEMV(NAME, T, P) /* P expanded first */
AOTC__DEF_GEMV_X(aotc_sgemm, float, AOTC__GEMV_S)
AOTC__DEF_GEMV_X(aotc_dgemm, double, AOTC__GEMV_D)
#elif defined(AOTC_GEMM_SAME_ORDER)
/* portable, in the order of the AVX2 kernels: fused products, the dot's 8 (f64: 4)
 * partial sums added as aotc__hsum_ps256 (pd256) adds the lanes */
#define AOTC__DEF_GEMV(NAME, T, L, REDUCE)                                                  \
  AOTC_INTERNAL void NAME##_axpy(int64_t len, int64_t K, const T* coef, int64_t cs,        \
                                 const T* rows, int64_t rs, T* AOTC_RESTRICT out) {        \
    for (int64_t i0 = 0; i0 < len; i0 += AOTC__AXPY_CHUNK) {                               \
      const int64_t il = len - i0 < AOTC__AXPY_CHUNK ? len - i0 : AOTC__AXPY_CHUNK;         \
      T* o = out + i0;                                                                      \
      for (int64_t i = 0; i < il; ++i) o[i] = 0;                                            \
      for (int64_t k = 0; k < K; ++k) {                                                     \
        const T c = coef[k * cs];                                                           \
        const T* AOTC_RESTRICT r = rows + k * rs + i0;                                      \
        for (int64_t i = 0; i < il; ++i) o[i] = AOTC__PMAD(T, c, r[i], o[i]);               \
      }                                                                                     \
    }                                                                                       \
  }                                                                                         \
  AOTC_INTERNAL void NAME##_dot(int64_t count, int64_t K, const T* rows, int64_t rs,        \
                                const T* AOTC_RESTRICT vec, T* out, int64_t os) {           \
    const int64_t kv = K / L * L;                                                           \
    for (int64_t r = 0; r < count; ++r) {                                                   \
      const T* a = rows + r * rs;                                                           \
      T s[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                    \
      for (int64_t k = 0; k < kv; k += L)                                                   \
        for (int j = 0; j < L; ++j) s[j] = AOTC__PMAD(T, a[k + j], vec[k + j], s[j]);       \
      T t = REDUCE(s);                                                                      \
      for (int64_t k = kv; k < K; ++k) t += a[k] * vec[k];                                  \
      out[r * os] = t;                                                                      \
    }                                                                                       \
  }
#define AOTC__REDUCE8(s) (((s)[0] + (s)[4]) + ((s)[2] + (s)[6])) + (((s)[1] + (s)[5]) + ((s)[3] + (s)[7]))
#define AOTC__REDUCE4(s) (((s)[0] + (s)[2]) + ((s)[1] + (s)[3]))
AOTC__DEF_GEMV(aotc_sgemm, float, 8, AOTC__REDUCE8)
AOTC__DEF_GEMV(aotc_dgemm, double, 4, AOTC__REDUCE4)
#else
/* portable: eight partial sums per dot product (a fixed summation order
 * compilers can vectorise without reassociating) */
#define AOTC__DEF_GEMV(NAME, T, P)                                                         \
  AOTC_INTERNAL void NAME##_axpy(int64_t len, int64_t K, const T* coef, int64_t cs,        \
                                 const T* rows, int64_t rs, T* AOTC_RESTRICT out) {        \
    for (int64_t i0 = 0; i0 < len; i0 += AOTC__AXPY_CHUNK) {                               \
      const int64_t il = len - i0 < AOTC__AXPY_CHUNK ? len - i0 : AOTC__AXPY_CHUNK;         \
      T* o = out + i0;                                                                      \
      for (int64_t i = 0; i < il; ++i) o[i] = 0;                                            \
      for (int64_t k = 0; k < K; ++k) {                                                     \
        const T c = coef[k * cs];                                                           \
        const T* AOTC_RESTRICT r = rows + k * rs + i0;                                      \
        for (int64_t i = 0; i < il; ++i) o[i] += c * r[i];                                  \
      }                                                                                     \
    }                                                                                       \
  }                                                                                         \
  AOTC_INTERNAL void NAME##_dot(int64_t count, int64_t K, const T* rows, int64_t rs,        \
                                const T* AOTC_RESTRICT vec, T* out, int64_t os) {           \
    const int64_t k8 = K / 8 * 8;                                                           \
    for (int64_t r = 0; r < count; ++r) {                                                   \
      const T* a = rows + r * rs;                                                           \
      T s[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                    \
      for (int64_t k = 0; k < k8; k += 8)                                                   \
        for (int j = 0; j < 8; ++j) s[j] += a[k + j] * vec[k + j];                          \
      T t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));              \
      for (int64_t k = k8; k < K; ++k) t += a[k] * vec[k];                                  \
      out[r * os] = t;                                                                      \
    }                                                                                       \
  }
AOTC__DEF_GEMV(aotc_sgemm, float, AOTC__SV)
AOTC__DEF_GEMV(aotc_dgemm, double, AOTC__DV)
#endif

/* Elements of the packed A block (rounded to 16 so B's panel stays 64-byte
 * aligned) and of the packed B panel for an M x N x K problem: a problem
 * smaller than the cache blocks needs less scratch than AOTC_GEMM_SCRATCH_BYTES. */
#define AOTC__DEF_GEMM_NEED(NAME, P)                                                        \
  AOTC_INTERNAL size_t NAME##_a_panel_elems(int64_t M, int64_t K) {                         \
    int64_t mc = M < P##_MC ? M : P##_MC, kc = K < P##_KC ? K : P##_KC;                     \
    if (mc < 0) mc = 0;                                                                     \
    if (kc < 0) kc = 0;                                                                     \
    return ((size_t)((mc + P##_MR - 1) / P##_MR * P##_MR) * (size_t)kc + 15u) / 16u * 16u;  \
  }                                                                                         \
  AOTC_INTERNAL size_t NAME##_b_panel_elems(int64_t N, int64_t K) {                         \
    int64_t nc = N < P##_NC ? N : P##_NC, kc = K < P##_KC ? K : P##_KC;                     \
    if (nc < 0) nc = 0;                                                                     \
    if (kc < 0) kc = 0;                                                                     \
    return (size_t)((nc + P##_NR - 1) / P##_NR * P##_NR) * (size_t)kc;                      \
  }
AOTC__DEF_GEMM_NEED(aotc_sgemm, AOTC_SGEMM)
AOTC__DEF_GEMM_NEED(aotc_dgemm, AOTC_DGEMM)

/* Bytes: the packed panels, or the K-vector a matrix-vector shape copies. */
AOTC_INTERNAL size_t aotc__gemm_need(size_t a_elems, size_t b_elems, int64_t K, size_t esize) {
  size_t panels = (a_elems + b_elems) * esize;
  size_t vec = K > 0 && (size_t)K * esize <= AOTC_GEMM_SCRATCH_BYTES ? (size_t)K * esize : 0;
  size_t n = panels > vec ? panels : vec;
  return (n + AOTC_ALIGNMENT - 1) / AOTC_ALIGNMENT * AOTC_ALIGNMENT;
}

/* Runs a matrix-vector shape through axpy/dot and returns 1, or returns 0 if
 * the shape or strides do not fit them (then the blocked path runs). */
#define AOTC__DEF_GEMV_DISPATCH(NAME, T)                                                    \
  AOTC_INTERNAL int NAME##_vector_shape(int64_t M, int64_t N, int64_t K, const T* A,        \
                                        int64_t a_rs, int64_t a_cs, const T* B,            \
                                        int64_t b_rs, int64_t b_cs, T* C, int64_t ldc,     \
                                        void* scratch) {                                   \
    const int64_t fits = (int64_t)(AOTC_GEMM_SCRATCH_BYTES / sizeof(T));                   \
    if (N == 1 && a_cs == 1 && (b_rs == 1 || K <= fits)) { /* rows of A . column of B */  \
      const T* v = B;                                                                      \
      if (b_rs != 1) {                                                                     \
        T* tmp = (T*)scratch;                                                              \
        for (int64_t k = 0; k < K; ++k) tmp[k] = B[k * b_rs];                              \
        v = tmp;                                                                           \
      }                                                                                    \
      NAME##_dot(M, K, A, a_rs, v, C, ldc);                                                \
      return 1;                                                                            \
    }                                                                                      \
    if (M == 1 && b_rs == 1 && (a_cs == 1 || K <= fits)) { /* row of A . columns of B */  \
      const T* v = A;                                                                      \
      if (a_cs != 1) {                                                                     \
        T* tmp = (T*)scratch;                                                              \
        for (int64_t k = 0; k < K; ++k) tmp[k] = A[k * a_cs];                              \
        v = tmp;                                                                           \
      }                                                                                    \
      NAME##_dot(N, K, B, b_cs, v, C, 1);                                                  \
      return 1;                                                                            \
    }                                                                                      \
    if (M == 1 && b_cs == 1) { /* sum over k of A[k] * row k of B */                       \
      NAME##_axpy(N, K, A, a_cs, B, b_rs, C);                                              \
      return 1;                                                                            \
    }                                                                                      \
    if (N == 1 && a_rs == 1 && ldc == 1) { /* sum over k of B[k] * column k of A */        \
      NAME##_axpy(M, K, B, b_rs, A, a_cs, C);                                              \
      return 1;                                                                            \
    }                                                                                      \
    return 0;                                                                              \
  }
AOTC__DEF_GEMV_DISPATCH(aotc_sgemm, float)
AOTC__DEF_GEMV_DISPATCH(aotc_dgemm, double)

/* ---- packing and the blocked driver --------------------------------------- */
/* copy one NR-wide row of B into a packed panel (a plain loop would become a
 * memcpy call per row) */
#if defined(AOTC__GEMM_VECTOR)
#define AOTC__COPY_ROW_(P, dst, src)                      \
  do {                                                    \
    P##_STOREU((dst), P##_LOADU(src));                    \
    P##_STOREU((dst) + P##_L, P##_LOADU((src) + P##_L));  \
  } while (0)
#define AOTC__COPY_ROW_AOTC_SGEMM(dst, src) AOTC__COPY_ROW_(AOTC__SV, dst, src)
#define AOTC__COPY_ROW_AOTC_DGEMM(dst, src) AOTC__COPY_ROW_(AOTC__DV, dst, src)
#else
#define AOTC__COPY_ROW_AOTC_SGEMM(dst, src) \
  memcpy((dst), (src), AOTC_SGEMM_NR * sizeof(float))
#define AOTC__COPY_ROW_AOTC_DGEMM(dst, src) \
  memcpy((dst), (src), AOTC_DGEMM_NR * sizeof(double))
#endif

/* P is the parameter prefix (AOTC_SGEMM / AOTC_DGEMM). */
/* A product with few rows whose A and B are both row-major and N a whole number of
 * tiles reads B in place instead of packing it (a fed weight is then not copied on
 * every call): each B panel serves only a few row tiles, so packing it costs more
 * than the strided reads; not when B's rows are a multiple of 2 KB apart, since a
 * panel's rows then fall into a few L1 sets and evict each other, and not when K is
 * deeper than 256 with rows more than 256 bytes apart: a panel of kc rows spread over
 * that many lines no longer stays in cache beside the tile's rows of A (Zen 3,
 * 128x1024x256: 67 GFLOP/s in place against 77 packed; with B 32 wide, as in a 3x3
 * convolution to 32 features, 112x1152x32: 91 in place against 81 packed).  A is read in
 * place too, in the row tiles of aotc__tile_rows; a product of fewer than (MR+1)/2 rows
 * copies them, zero-padded, into the scratch as rows of kc elements. */
/* the rows up to which the blocked path packs B a panel at a time (the planner's
 * scratch sizes assume it: runtime_c/__init__.py, GEMM_PANEL_B_MAX_M) */
#define AOTC__GEMM_PANEL_B_MAX_M 192
#ifndef AOTC_GEMM_DIRECT_B_MAX_M
#define AOTC_GEMM_DIRECT_B_MAX_M 192
#endif
#define AOTC__GEMM_DIRECT_B_MAX_K 256
#define AOTC__DEF_GEMM_DIRECT(NAME, T, P, DIRECT_KERNEL)                                    \
  AOTC_INTERNAL void NAME##_direct_b(int64_t M, int64_t N, int64_t K, const T* A,          \
                                     int64_t a_rs, const T* B, int64_t b_rs, T* C,          \
                                     int64_t ldc, void* scratch) {                          \
    T* rows = (T*)AOTC_ASSUME_ALIGNED(scratch, AOTC_ALIGNMENT);                             \
    AOTC_ALIGNAS(AOTC_ALIGNMENT) T edge[P##_MR * P##_NR];                                  \
    /* every row in place (aotc__tile_rows), or fewer than (MR+1)/2 rows copied */          \
    const int64_t mfull = M >= AOTC__SHORT_MIN(P##_MR) ? M : 0;                              \
    const int64_t tiles = (mfull + P##_MR - 1) / P##_MR;                                     \
    for (int64_t pc = 0; pc < K; pc += P##_KC) {                                           \
      const int64_t kc = K - pc < P##_KC ? K - pc : P##_KC;                                \
      const int accumulate = pc > 0;                                                       \
      const int64_t pf_step = tiles > 0 ? (kc + tiles - 1) / tiles : 0;                    \
      for (int64_t i = 0; mfull < M && i < P##_MR; ++i)                                    \
        for (int64_t k = 0; k < kc; ++k) rows[i * kc + k] = i < M ? A[i * a_rs + pc + k] : 0; \
      for (int64_t jr = 0; jr < N; jr += P##_NR) {                                         \
        const T* bpanel = B + pc * b_rs + jr;                                              \
        int64_t mr = 0;                                                                    \
        for (int64_t ir = 0, t = 0; ir < mfull; ir += mr, ++t) {                           \
          mr = aotc__tile_rows(mfull - ir, P##_MR);                                        \
          if (jr + P##_NR < N) { /* the next panel's rows, a share per tile (see below) */  \
            const int64_t k0 = t * pf_step;                                                \
            const int64_t k1 = k0 + pf_step < kc ? k0 + pf_step : kc;                      \
            for (int64_t k = k0; k < k1; ++k) {                                            \
              AOTC_PREFETCH_R(bpanel + P##_NR + k * b_rs);                                 \
              AOTC_PREFETCH_R(bpanel + P##_NR + k * b_rs + P##_NR - 1);                    \
            }                                                                              \
          }                                                                                \
          DIRECT_KERNEL(mr, kc, A + ir * a_rs + pc, a_rs, bpanel, b_rs, C + ir * ldc + jr, \
                        ldc, accumulate);                                                  \
        }                                                                                  \
        if (mfull < M) {                                                                   \
          DIRECT_KERNEL(P##_MR, kc, rows, kc, bpanel, b_rs, edge, P##_NR, 0);              \
          T* ctile = C + mfull * ldc + jr;                                                 \
          for (int64_t i = 0; i < M - mfull; ++i)                                          \
            for (int64_t j = 0; j < P##_NR; ++j)                                           \
              ctile[i * ldc + j] = accumulate ? ctile[i * ldc + j] + edge[i * P##_NR + j]  \
                                              : edge[i * P##_NR + j];                      \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
  }
AOTC__DEF_GEMM_DIRECT(aotc_sgemm, float, AOTC_SGEMM, aotc__sgemm_kernel_direct_n)
AOTC__DEF_GEMM_DIRECT(aotc_dgemm, double, AOTC_DGEMM, aotc__dgemm_kernel_direct_n)

/* The B panel the blocked loops below pack after panel jr of block (jc, pc): the next
 * panel of the block, else the first of the next K block, else of the next column block
 * (rows 0 if none).  Loop order: jc, then pc, then jr. */
typedef struct {
  int64_t row0, col0, rows, width;
} aotc__panel;
AOTC_INTERNAL aotc__panel aotc__next_panel(int64_t N, int64_t K, int64_t KC, int64_t NR,
                                            int64_t jc, int64_t nc, int64_t pc, int64_t kc,
                                            int64_t jr) {
  aotc__panel p = {pc, jc + jr + NR, kc, 0};
  if (jr + NR < nc) {
    p.width = nc - jr - NR;
  } else if (pc + kc < K) {
    p.row0 = pc + kc;
    p.col0 = jc;
    p.rows = K - p.row0 < KC ? K - p.row0 : KC;
    p.width = nc;
  } else if (jc + nc < N) {
    p.row0 = 0;
    p.col0 = jc + nc;
    p.rows = K < KC ? K : KC;
    p.width = N - p.col0;
  } else {
    p.rows = 0;
  }
  if (p.width > NR) p.width = NR;
  return p;
}

#define AOTC__DEF_GEMM(NAME, T, P, KERNEL, ROWS_KERNEL)                                               \
  /* A[0:mc, 0:kc] -> panels of MR rows: ap[panel][k][i], zero-padded rows */              \
  AOTC_INTERNAL void NAME##_pack_a(int64_t mc, int64_t kc, const T* A, int64_t rs,         \
                                   int64_t cs, T* AOTC_RESTRICT ap) {                      \
    for (int64_t i0 = 0; i0 < mc; i0 += P##_MR) {                                          \
      const int64_t mr = mc - i0 < P##_MR ? mc - i0 : P##_MR;                              \
      const T* src = A + i0 * rs;                                                          \
      if (cs == 1 && mr == P##_MR) {                                                       \
        for (int64_t k = 0; k < kc; ++k)                                                   \
          for (int64_t i = 0; i < P##_MR; ++i) ap[k * P##_MR + i] = src[i * rs + k];       \
      } else {                                                                             \
        for (int64_t k = 0; k < kc; ++k) {                                                 \
          for (int64_t i = 0; i < mr; ++i) ap[k * P##_MR + i] = src[i * rs + k * cs];      \
          for (int64_t i = mr; i < P##_MR; ++i) ap[k * P##_MR + i] = 0;                    \
        }                                                                                  \
      }                                                                                    \
      ap += kc * P##_MR;                                                                   \
    }                                                                                      \
  }                                                                                        \
  /* B[0:kc, 0:nc] -> panels of NR columns: bp[panel][k][j], zero-padded */                \
  AOTC_INTERNAL void NAME##_pack_b(int64_t kc, int64_t nc, const T* B, int64_t rs,         \
                                   int64_t cs, T* AOTC_RESTRICT bp) {                      \
    for (int64_t j0 = 0; j0 < nc; j0 += P##_NR) {                                          \
      const int64_t nr = nc - j0 < P##_NR ? nc - j0 : P##_NR;                              \
      const T* src = B + j0 * cs;                                                          \
      if (cs == 1 && nr == P##_NR) {                                                       \
        for (int64_t k = 0; k < kc; ++k) AOTC__COPY_ROW_##P(bp + k * P##_NR, src + k * rs);  \
      } else if (rs == 1) {                                                                \
        for (int64_t j = 0; j < nr; ++j)                                                   \
          for (int64_t k = 0; k < kc; ++k) bp[k * P##_NR + j] = src[j * cs + k];           \
        for (int64_t k = 0; k < kc; ++k)                                                   \
          for (int64_t j = nr; j < P##_NR; ++j) bp[k * P##_NR + j] = 0;                    \
      } else {                                                                             \
        for (int64_t k = 0; k < kc; ++k) {                                                 \
          for (int64_t j = 0; j < nr; ++j) bp[k * P##_NR + j] = src[k * rs + j * cs];      \
          for (int64_t j = nr; j < P##_NR; ++j) bp[k * P##_NR + j] = 0;                    \
        }                                                                                  \
      }                                                                                    \
      bp += kc * P##_NR;                                                                   \
    }                                                                                      \
  }                                                                                        \
  AOTC_INTERNAL void NAME##_blocked(int64_t M, int64_t N, int64_t K, const T* A,           \
                                    int64_t a_rs, int64_t a_cs, const T* B, int64_t b_rs,  \
                                    int64_t b_cs, T* C, int64_t ldc, void* scratch) {      \
    if (M <= 0 || N <= 0) return;                                                          \
    if (K <= 0) {                                                                          \
      for (int64_t m = 0; m < M; ++m)                                                      \
        for (int64_t n = 0; n < N; ++n) C[m * ldc + n] = 0;                                \
      return;                                                                              \
    }                                                                                      \
    if (a_cs == 1 && b_cs == 1 && M <= AOTC_GEMM_DIRECT_B_MAX_M && N % P##_NR == 0 &&     \
        (K <= AOTC__GEMM_DIRECT_B_MAX_K || (size_t)b_rs * sizeof(T) <= 256u) &&           \
        (size_t)b_rs * sizeof(T) % 2048u != 0) {                                           \
      NAME##_direct_b(M, N, K, A, a_rs, B, b_rs, C, ldc, scratch);                         \
      return;                                                                              \
    }                                                                                      \
    T* ap = (T*)AOTC_ASSUME_ALIGNED(scratch, AOTC_ALIGNMENT);                              \
    /* a row-major A packs at most one partial panel (see below) */                        \
    T* bp = ap + NAME##_a_panel_elems(a_cs == 1 && M > P##_MR ? P##_MR : M, K);            \
    AOTC_ALIGNAS(AOTC_ALIGNMENT) T edge[P##_MR * P##_NR];                                  \
    /* few rows of a row-major A (read in place): one block of all M rows, and B packed  \
     * one NR panel at a time, right before the row tiles use it, so the scratch holds   \
     * one panel, not the whole KC x NC block.  Every tile sees the same operands and    \
     * K blocks as in the MC x NC blocking (MC is a multiple of MR): the same bits. */    \
    const int by_panel = a_cs == 1 && M <= AOTC__GEMM_PANEL_B_MAX_M;                      \
    const int64_t mcb = by_panel ? M : P##_MC;                                             \
    for (int64_t jc = 0; jc < N; jc += P##_NC) {                                           \
      const int64_t nc = N - jc < P##_NC ? N - jc : P##_NC;                                \
      for (int64_t pc = 0; pc < K; pc += P##_KC) {                                         \
        const int64_t kc = K - pc < P##_KC ? K - pc : P##_KC;                              \
        const int accumulate = pc > 0;                                                     \
        /* B of exactly NR contiguous, aligned columns already is its packed panel */       \
        const T* bblock = bp;                                                              \
        const int own = N == P##_NR && b_cs == 1 && b_rs == P##_NR &&                      \
                        (uintptr_t)(const void*)B % AOTC_ALIGNMENT == 0;                   \
        if (own)                                                                           \
          bblock = B + pc * b_rs;                                                          \
        else if (!by_panel)                                                                \
          NAME##_pack_b(kc, nc, B + pc * b_rs + jc * b_cs, b_rs, b_cs, bp);                \
        for (int64_t ic = 0; ic < M; ic += mcb) {                                          \
          const int64_t mc = M - ic < mcb ? M - ic : mcb;                                  \
          /* row-major A is read in place (aotc__tile_rows), but for a block of fewer than \
           * (MR+1)/2 rows, packed as one partial panel */                                 \
          const int in_place = a_cs == 1 && mc >= AOTC__SHORT_MIN(P##_MR);                  \
          if (!in_place) NAME##_pack_a(mc, kc, A + ic * a_rs + pc * a_cs, a_rs, a_cs, ap);  \
          const int alias = in_place && aotc__rows_alias(a_rs * (int64_t)sizeof(T), P##_MR); \
          for (int64_t jr = 0; jr < nc; jr += P##_NR) {                                    \
            const int64_t nr = nc - jr < P##_NR ? nc - jr : P##_NR;                        \
            if (by_panel && !own)                                                          \
              NAME##_pack_b(kc, nr, B + pc * b_rs + (jc + jr) * b_cs, b_rs, b_cs, bp);      \
            const T* bpanel = by_panel && !own ? bp : bblock + jr * kc;                    \
            /* the row tiles of this panel prefetch the next panel's rows, a share each:  \
             * a fed weight is cold, and packing it waited on every strided row          \
             * (128x256x1024 with 24 MB of weights cycled: 81 -> 86 GFLOP/s) */          \
            aotc__panel next = {0, 0, 0, 0};                                               \
            if (by_panel && !own && b_cs == 1)                                             \
              next = aotc__next_panel(N, K, P##_KC, P##_NR, jc, nc, pc, kc, jr);           \
            const T* bnext = next.rows > 0 ? B + next.row0 * b_rs + next.col0 : 0;         \
            const int64_t tile_h = alias ? P##_MR / 2 : P##_MR;                            \
            const int64_t tiles = (mc + tile_h - 1) / tile_h;                               \
            const int64_t pf_step = (next.rows + tiles - 1) / tiles;                         \
            const int64_t pf_last = next.width - 1;                                         \
            int64_t mr = 0;                                                                \
            for (int64_t ir = 0, t = 0; ir < mc; ir += mr, ++t) {                          \
              mr = in_place ? aotc__tile_rows_in_place(mc - ir, P##_MR, alias)             \
                            : (mc - ir < P##_MR ? mc - ir : P##_MR);                       \
              if (bnext) {                                                                 \
                const int64_t k0 = t * pf_step;                                            \
                const int64_t k1 = k0 + pf_step < next.rows ? k0 + pf_step : next.rows;    \
                for (int64_t k = k0; k < k1; ++k) {                                        \
                  AOTC_PREFETCH_R(bnext + k * b_rs);                                       \
                  AOTC_PREFETCH_R(bnext + k * b_rs + pf_last);                             \
                }                                                                          \
              }                                                                            \
              const T* apanel = ap + ir * kc;                                              \
              const T* arows = A + (ic + ir) * a_rs + pc;                                  \
              T* ctile = C + (ic + ir) * ldc + jc + jr;                                    \
              if ((in_place || mr == P##_MR) && nr == P##_NR) {                            \
                if (in_place)                                                              \
                  ROWS_KERNEL(mr, kc, arows, a_rs, bpanel, ctile, ldc, accumulate);        \
                else                                                                       \
                  KERNEL(kc, apanel, bpanel, ctile, ldc, accumulate);                      \
              } else {                                                                     \
                if (in_place)                                                              \
                  ROWS_KERNEL(mr, kc, arows, a_rs, bpanel, edge, P##_NR, 0);               \
                else                                                                       \
                  KERNEL(kc, apanel, bpanel, edge, P##_NR, 0);                             \
                for (int64_t i = 0; i < mr; ++i)                                           \
                  for (int64_t j = 0; j < nr; ++j)                                         \
                    ctile[i * ldc + j] = accumulate ? ctile[i * ldc + j] + edge[i * P##_NR + j] \
                                                    : edge[i * P##_NR + j];                \
              }                                                                            \
            }                                                                              \
          }                                                                                \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
  }                                                                                        \
  AOTC_RT_API AOTC_NOIPA void NAME(int64_t M, int64_t N, int64_t K, const T* A,           \
                                  int64_t a_rs,                                            \
                        int64_t a_cs, const T* B, int64_t b_rs, int64_t b_cs, T* C,        \
                        int64_t ldc, void* scratch) {                                      \
    if (K > 0 && (M == 1 || N == 1) &&                                                     \
        NAME##_vector_shape(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, scratch))       \
      return;                                                                              \
    NAME##_blocked(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, scratch);                \
  }

AOTC__DEF_GEMM(aotc_sgemm, float, AOTC_SGEMM, aotc__sgemm_kernel, aotc__sgemm_kernel_rows_n)
AOTC__DEF_GEMM(aotc_dgemm, double, AOTC_DGEMM, aotc__dgemm_kernel, aotc__dgemm_kernel_rows_n)

/* One of `parts` slices of a GEMM (see aotc_gemm.h): the longer of M and N is cut into
 * contiguous, tile-aligned ranges (cutting N duplicates the packing of A in
 * every part, cutting M that of B: the smaller operand is duplicated). */
#define AOTC__DEF_GEMM_PART(NAME, T, P)                                                    \
  AOTC_RT_API void NAME##_part(int64_t part, int64_t parts, int64_t M, int64_t N,          \
                               int64_t K, const T* A, int64_t a_rs, int64_t a_cs,          \
                               const T* B, int64_t b_rs, int64_t b_cs, T* C, int64_t ldc,  \
                               void* scratch) {                                            \
    if (parts <= 1) {                                                                      \
      NAME(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, scratch);                        \
      return;                                                                              \
    }                                                                                      \
    if (part < 0 || part >= parts || M <= 0 || N <= 0) return;                             \
    const int split_n = M < N;                                                             \
    const int64_t len = split_n ? N : M, tile = split_n ? P##_NR : P##_MR;                 \
    const int64_t tiles = (len + tile - 1) / tile;                                         \
    const int64_t begin = tiles / parts * part + (part < tiles % parts ? part : tiles % parts); \
    const int64_t count = tiles / parts + (part < tiles % parts ? 1 : 0);                  \
    const int64_t lo = begin * tile;                                                       \
    const int64_t hi = (begin + count) * tile < len ? (begin + count) * tile : len;        \
    if (lo >= hi) return;                                                                  \
    /* a slice takes the path the whole product takes (a one-row slice of a    \
     * matrix product stays on the blocked path), so the bits agree */          \
    void (*fn)(int64_t, int64_t, int64_t, const T*, int64_t, int64_t, const T*, int64_t,   \
               int64_t, T*, int64_t, void*) = (M == 1 || N == 1) ? NAME : NAME##_blocked;  \
    if (split_n)                                                                           \
      fn(M, hi - lo, K, A, a_rs, a_cs, B + lo * b_cs, b_rs, b_cs, C + lo, ldc, scratch);   \
    else                                                                                   \
      fn(hi - lo, N, K, A + lo * a_rs, a_rs, a_cs, B, b_rs, b_cs, C + lo * ldc, ldc,       \
         scratch);                                                                         \
  }
AOTC__DEF_GEMM_PART(aotc_sgemm, float, AOTC_SGEMM)
AOTC__DEF_GEMM_PART(aotc_dgemm, double, AOTC_DGEMM)

/* One product split into `parts` slices run through an application's or the
 * built-in pool's parallel_for; slice p uses scratch + p * part_scratch.  The
 * result is bit-identical to the serial call (slices are whole tiles, each
 * computed as the whole product computes it), so the slice count may follow
 * the pool's size.  Without a pool it is the serial call.  Each slice enters the caller's FP environment itself, since an
 * application's threads do not have it. */
#define AOTC__DEF_GEMM_THREADS(NAME, T)                                                     \
  typedef struct {                                                                          \
    int64_t parts, M, N, K, a_rs, a_cs, b_rs, b_cs, ldc;                                    \
    const T* A;                                                                             \
    const T* B;                                                                             \
    T* C;                                                                                   \
    unsigned char* scratch;                                                                 \
    size_t part_scratch;                                                                    \
  } NAME##_job;                                                                             \
  AOTC_INTERNAL void NAME##_job_range(void* ctx, int64_t begin, int64_t end) {              \
    const NAME##_job* j = (const NAME##_job*)ctx;                                           \
    aotc_fpenv saved;                                                                       \
    aotc_fpenv_enter(&saved);                                                               \
    for (int64_t p = begin; p < end; ++p)                                                   \
      NAME##_part(p, j->parts, j->M, j->N, j->K, j->A, j->a_rs, j->a_cs, j->B, j->b_rs,     \
                  j->b_cs, j->C, j->ldc, j->scratch + (size_t)p * j->part_scratch);         \
    aotc_fpenv_leave(&saved);                                                               \
  }                                                                                         \
  AOTC_RT_API void NAME##_threads(void (*parallel_for)(void*, int64_t,                     \
                                                         void (*)(void*, int64_t, int64_t), \
                                                         void*),                            \
                                  void* user, int threads, int64_t parts,                  \
                                  size_t part_scratch,                                      \
                                  int64_t M, int64_t N, int64_t K, const T* A,              \
                                  int64_t a_rs, int64_t a_cs, const T* B, int64_t b_rs,     \
                                  int64_t b_cs, T* C, int64_t ldc, void* scratch) {         \
    if (threads > 0 && threads < parts && parts % threads == 0) {                           \
      /* one slice per thread: slice q is at most parts / threads slices of the           \
       * `parts` cut (whole tiles), whose scratch needs add up to at least its own */      \
      part_scratch *= (size_t)(parts / threads);                                            \
      parts = threads;                                                                      \
    }                                                                                       \
    if (!parallel_for || parts <= 1) {                                                      \
      NAME(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, scratch);                         \
      return;                                                                               \
    }                                                                                       \
    NAME##_job j;                                                                           \
    j.parts = parts; j.M = M; j.N = N; j.K = K; j.a_rs = a_rs; j.a_cs = a_cs;               \
    j.b_rs = b_rs; j.b_cs = b_cs; j.ldc = ldc; j.A = A; j.B = B; j.C = C;                   \
    j.scratch = (unsigned char*)scratch;                                                    \
    j.part_scratch = part_scratch;                                                          \
    parallel_for(user, parts, NAME##_job_range, &j);                                        \
  }
AOTC__DEF_GEMM_THREADS(aotc_sgemm, float)
AOTC__DEF_GEMM_THREADS(aotc_dgemm, double)

AOTC_RT_API size_t aotc_gemm_scratch_bytes(void) { return AOTC_GEMM_SCRATCH_BYTES; }

AOTC_RT_API size_t aotc_sgemm_scratch_need(int64_t M, int64_t N, int64_t K) {
  return aotc__gemm_need(aotc_sgemm_a_panel_elems(M, K), aotc_sgemm_b_panel_elems(N, K), K, sizeof(float));
}
AOTC_RT_API size_t aotc_dgemm_scratch_need(int64_t M, int64_t N, int64_t K) {
  return aotc__gemm_need(aotc_dgemm_a_panel_elems(M, K), aotc_dgemm_b_panel_elems(N, K), K, sizeof(double));
}

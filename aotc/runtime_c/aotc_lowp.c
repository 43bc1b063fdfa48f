/* aotc_lowp.c -- packed bf16 and s8 GEMMs (declared in aotc_lowp.h).
 *
 * Layout shared by both: K is cut into groups of G values that one 32-bit lane
 * multiplies at once (G = 2 bf16 for vdpbf16ps, 4 s8 for vpdpbusd / sdot, 2 s8
 * widened to s16 for AVX2's vpmaddwd).
 *   packed A: per tile of MR rows, per group g: MR lanes (row r's G values);
 *   packed B: per panel of NR columns, per group g: NR lanes (column c's G values).
 * Both are zero-padded to whole tiles and whole groups (a zero times a zero
 * adds +0).  The column panels are cut into `parts` ranges for the pool; a
 * range packs its own panels of B, so ranges only share the packed A, which
 * is packed first.  Every element of C sees the same operations in the same
 * order whatever the range cut, so the thread count changes no bits.
 * Paths without the instructions: bf16 is widened to f32 for aotc_sgemm;
 * s8 is summed by portable C (which compilers vectorise for the baseline ISA).
 */
#ifndef AOTC_GEMM_H /* compiled on its own: the f32 GEMM and conversions it falls back on */
#include "aotc_gemm.c"
#endif
#ifndef AOTC_LOWP_H
#include "aotc_lowp.h"
#endif

#include <string.h>

AOTC_INTERNAL int64_t aotc__lp_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
AOTC_INTERNAL size_t aotc__lp_up64(size_t x) { return (x + 63u) & ~(size_t)63u; }

/* Bytes of `rows` packed in tiles of `tile` and groups of G (A: M rows in
 * MR-row tiles; B: N columns in NR-column panels). */
AOTC_INTERNAL size_t aotc__lp_packed_bytes(int64_t rows, int64_t tile, int64_t K, int64_t G) {
  return aotc__lp_up64((size_t)aotc__lp_up(rows, tile) * (size_t)((K + G - 1) / G) * 4u);
}

/* The work of one range of column panels (the pool's job). */
typedef struct {
  int64_t parts, M, N, K, a_rs, a_cs, b_rs, b_cs, ldc;
  const void* A;
  const void* B;
  void* C;
  unsigned char* pa; /* packed A (the s8 GEMM's packing job writes it) */
  unsigned char* pb; /* packed B: panel p at p * panel_bytes */
} aotc__lp_job;

AOTC_INTERNAL void aotc__lp_panels(const aotc__lp_job* j, int64_t nr, int64_t part, int64_t* lo, int64_t* hi) {
  int64_t np = (j->N + nr - 1) / nr;
  *lo = part * np / j->parts;
  *hi = (part + 1) * np / j->parts;
}

/* ======================================================================== bf16 */
#if defined(AOTC_HAVE_AVX512BF16)

/* Pack G=2: lane = lo | hi << 16 (the even K index in the low half). */
AOTC_INTERNAL uint32_t aotc__lp_pair(const uint16_t* p, int64_t k, int64_t K, int64_t stride) {
  uint32_t lo = p[k * stride];
  uint32_t hi = k + 1 < K ? p[(k + 1) * stride] : 0u;
  return lo | hi << 16;
}

AOTC_INTERNAL void aotc__lp_bpack_a(int64_t M, int64_t K, const uint16_t* A, int64_t a_rs, int64_t a_cs,
                                    uint32_t* pa) {
  int64_t kg = (K + 1) / 2;
  for (int64_t t = 0; t < M; t += AOTC_LP_MR)
    for (int64_t g = 0; g < kg; ++g)
      for (int64_t r = 0; r < AOTC_LP_MR; ++r)
        *pa++ = t + r < M ? aotc__lp_pair(A + (t + r) * a_rs, 2 * g, K, a_cs) : 0u;
}

AOTC_INTERNAL void aotc__lp_bpack_b(int64_t n0, int64_t N, int64_t K, const uint16_t* B, int64_t b_rs,
                                    int64_t b_cs, uint32_t* pb) {
  int64_t kg = (K + 1) / 2;
  for (int64_t g = 0; g < kg; ++g)
    for (int64_t c = 0; c < AOTC_LP_NR; ++c)
      *pb++ = n0 + c < N ? aotc__lp_pair(B + (n0 + c) * b_cs, 2 * g, K, b_rs) : 0u;
}

#define AOTC__LPB_DECL(i, P) __m512 c##i##_0, c##i##_1;
#define AOTC__LPB_INIT(i, P)                              \
  if (first) {                                            \
    c##i##_0 = _mm512_setzero_ps();                       \
    c##i##_1 = _mm512_setzero_ps();                       \
  } else {                                                \
    c##i##_0 = _mm512_loadu_ps(c + i * ldc);              \
    c##i##_1 = _mm512_loadu_ps(c + i * ldc + 16);         \
  }
#define AOTC__LPB_DOT(i, P)                                                   \
  {                                                                           \
    __m512bh ai = (__m512bh)_mm512_set1_epi32((int)a[i]);                     \
    c##i##_0 = _mm512_dpbf16_ps(c##i##_0, ai, b0);                            \
    c##i##_1 = _mm512_dpbf16_ps(c##i##_1, ai, b1);                            \
  }
#define AOTC__LPB_STORE(i, P)                      \
  _mm512_storeu_ps(c + i * ldc, c##i##_0);         \
  _mm512_storeu_ps(c + i * ldc + 16, c##i##_1);

/* c (MR x NR, row stride ldc) = (first ? 0 : c) + the kg groups of a and b. */
AOTC_INTERNAL AOTC_NOIPA void aotc__lp_bkernel(int64_t kg, const uint32_t* AOTC_RESTRICT a, const uint32_t* AOTC_RESTRICT b,
                                    float* AOTC_RESTRICT c, int64_t ldc, int first) {
  AOTC__REPN(AOTC_LP_MR)(AOTC__LPB_DECL, 0)
  AOTC__REPN(AOTC_LP_MR)(AOTC__LPB_INIT, 0)
  for (int64_t g = 0; g < kg; ++g) {
    __m512bh b0 = (__m512bh)_mm512_load_si512((const void*)b);
    __m512bh b1 = (__m512bh)_mm512_load_si512((const void*)(b + 16));
    AOTC__REPN(AOTC_LP_MR)(AOTC__LPB_DOT, 0)
    a += AOTC_LP_MR;
    b += AOTC_LP_NR;
  }
  AOTC__REPN(AOTC_LP_MR)(AOTC__LPB_STORE, 0)
}

AOTC_INTERNAL void aotc__lp_bgemm_range(void* ctx, int64_t begin, int64_t end) {
  const aotc__lp_job* j = (const aotc__lp_job*)ctx;
  int64_t kg = (j->K + 1) / 2;
  size_t panel = (size_t)kg * AOTC_LP_NR;
  float* C = (float*)j->C;
  for (int64_t part = begin; part < end; ++part) {
    int64_t lo, hi;
    aotc__lp_panels(j, AOTC_LP_NR, part, &lo, &hi);
    for (int64_t p = lo; p < hi; ++p) {
      uint32_t* pb = (uint32_t*)(void*)j->pb + (size_t)p * panel;
      int64_t n0 = p * AOTC_LP_NR, nc = j->N - n0 < AOTC_LP_NR ? j->N - n0 : AOTC_LP_NR;
      aotc__lp_bpack_b(n0, j->N, j->K, (const uint16_t*)j->B, j->b_rs, j->b_cs, pb);
      for (int64_t g0 = 0; g0 < kg; g0 += AOTC_LP_KC) {
        int64_t gc = kg - g0 < AOTC_LP_KC ? kg - g0 : AOTC_LP_KC;
        for (int64_t t = 0; t < j->M; t += AOTC_LP_MR) {
          const uint32_t* pa = (const uint32_t*)(const void*)j->pa + (size_t)t * (size_t)kg + (size_t)g0 * AOTC_LP_MR;
          float* c = C + t * j->ldc + n0;
          int64_t mr = j->M - t < AOTC_LP_MR ? j->M - t : AOTC_LP_MR;
          if (mr == AOTC_LP_MR && nc == AOTC_LP_NR) {
            aotc__lp_bkernel(gc, pa, pb + (size_t)g0 * AOTC_LP_NR, c, j->ldc, g0 == 0);
            continue;
          }
          float tile[AOTC_LP_MR * AOTC_LP_NR];
          if (g0 > 0)
            for (int64_t r = 0; r < mr; ++r) memcpy(tile + r * AOTC_LP_NR, c + r * j->ldc, (size_t)nc * sizeof(float));
          aotc__lp_bkernel(gc, pa, pb + (size_t)g0 * AOTC_LP_NR, tile, AOTC_LP_NR, g0 == 0);
          for (int64_t r = 0; r < mr; ++r) memcpy(c + r * j->ldc, tile + r * AOTC_LP_NR, (size_t)nc * sizeof(float));
        }
      }
    }
  }
}
#endif /* AOTC_HAVE_AVX512BF16 */

AOTC_RT_API size_t aotc_lp_bgemm_scratch_need(int64_t M, int64_t N, int64_t K, int64_t parts,
                                              size_t part_scratch) {
  size_t packed = aotc__lp_packed_bytes(M, AOTC_LP_MR, K, 2) + aotc__lp_packed_bytes(N, AOTC_LP_NR, K, 2);
  size_t wide = aotc__lp_up64((size_t)M * (size_t)K * 4u) + aotc__lp_up64((size_t)K * (size_t)N * 4u) +
                (size_t)(parts > 1 ? parts : 1) * part_scratch;
  return packed > wide ? packed : wide;
}

AOTC_RT_API void aotc_lp_bgemm(aotc_lp_parallel_for parallel_for, void* user, int threads, int64_t parts,
                               size_t part_scratch, int64_t M, int64_t N, int64_t K, const uint16_t* A,
                               int64_t a_rs, int64_t a_cs, const uint16_t* B, int64_t b_rs, int64_t b_cs,
                               float* C, int64_t ldc, void* scratch) {
  if (M <= 0 || N <= 0) return;
#if defined(AOTC_HAVE_AVX512BF16)
  (void)threads;
  (void)part_scratch;
  if (K <= 0) {
    for (int64_t i = 0; i < M; ++i) memset(C + i * ldc, 0, (size_t)N * sizeof(float));
    return;
  }
  aotc__lp_job j;
  j.parts = parts > 1 ? parts : 1;
  j.M = M; j.N = N; j.K = K; j.a_rs = a_rs; j.a_cs = a_cs; j.b_rs = b_rs; j.b_cs = b_cs; j.ldc = ldc;
  j.A = A; j.B = B; j.C = C;
  j.pa = (unsigned char*)scratch;
  j.pb = (unsigned char*)scratch + aotc__lp_packed_bytes(M, AOTC_LP_MR, K, 2);
  aotc__lp_bpack_a(M, K, A, a_rs, a_cs, (uint32_t*)scratch);
  if (parallel_for && j.parts > 1)
    parallel_for(user, j.parts, aotc__lp_bgemm_range, &j);
  else
    aotc__lp_bgemm_range(&j, 0, j.parts);
#else
  /* widened to dense row-major f32 copies: aotc_sgemm sums in the same order
   * whatever the strides */
  float* wa = (float*)scratch;
  float* wb = (float*)(void*)((unsigned char*)scratch + aotc__lp_up64((size_t)M * (size_t)K * 4u));
  unsigned char* gs = (unsigned char*)wb + aotc__lp_up64((size_t)K * (size_t)N * 4u);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) wa[i * K + k] = aotc_bf16_to_f32(A[i * a_rs + k * a_cs]);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) wb[k * N + n] = aotc_bf16_to_f32(B[k * b_rs + n * b_cs]);
  aotc_sgemm_threads(parallel_for, user, threads, parts, part_scratch, M, N, K, wa, K, 1, wb, N, 1, C, ldc, gs);
#endif
}

/* ========================================================================== s8 */
/* The s8 paths pack G values of K into each 32-bit lane and multiply tiles of
 * IMR x INR:
 *   AVX512_VNNI  G = 4 s8 (a + 128 as u8, for vpdpbusd), 12 x 32;
 *   NEON sdot    G = 4 s8, 12 x 32;
 *   AVX2         G = 2 s8 widened to s16 (vpmaddwd: a pair of products, each
 *                at most 2^14, summed exactly into an s32 lane), 6 x 16;
 *   portable     G = 4 s8, B's groups as 4 rows of NR bytes, 12 x 32. */
#if defined(AOTC_HAVE_AVX512VNNI)
#define AOTC__LPI_G 4
#define AOTC__LP_FLIP 0x80u
#elif defined(AOTC_HAVE_NEON_DOTPROD)
#define AOTC__LPI_G 4
#define AOTC__LP_FLIP 0u
#elif defined(AOTC_HAVE_AVX2)
#define AOTC__LPI_G 2
#define AOTC__LP_FLIP 0u
#else
#define AOTC__LPI_G 4
#define AOTC__LP_FLIP 0u
#define AOTC__LP_BYTE_ROWS 1
#endif
#ifndef AOTC__LP_BYTE_ROWS
#define AOTC__LP_BYTE_ROWS 0
#endif
#define AOTC__LPI_PAIR_MR 6 /* the tile of the G = 2 path */
#define AOTC__LPI_PAIR_NR 16
#if AOTC__LPI_G == 2
#define AOTC__LPI_MR AOTC__LPI_PAIR_MR
#define AOTC__LPI_NR AOTC__LPI_PAIR_NR
#else
#define AOTC__LPI_MR AOTC_LP_MR
#define AOTC__LPI_NR AOTC_LP_NR
#endif

/* One lane: K indices k .. k+G-1 (zeros past K), the first in the low bits;
 * G = 4: bytes (`flip` adds 128, a u8), G = 2: sign-extended s16 halves. */
AOTC_INTERNAL uint32_t aotc__lp_lane(const int8_t* p, int64_t k, int64_t K, int64_t stride, uint32_t flip) {
  uint32_t v = 0;
  for (int64_t i = 0; i < AOTC__LPI_G; ++i) {
    uint32_t x = 0u;
    if (k + i < K) {
      int8_t e = p[(k + i) * stride];
      x = AOTC__LPI_G == 4 ? ((uint32_t)(uint8_t)e ^ flip) : (uint32_t)(uint16_t)(int16_t)e;
    }
    v |= x << (32 / AOTC__LPI_G * i);
  }
  return v;
}

/* Packs row tiles [t0, t1) of A (each tile is kg * IMR lanes at t * kg * IMR). */
AOTC_INTERNAL void aotc__lp_ipack_a(int64_t M, int64_t K, const int8_t* A, int64_t a_rs, int64_t a_cs,
                                    uint32_t* pa, int64_t t0, int64_t t1) {
  int64_t kg = (K + AOTC__LPI_G - 1) / AOTC__LPI_G;
  pa += (size_t)t0 * (size_t)kg * AOTC__LPI_MR;
  for (int64_t t = t0 * AOTC__LPI_MR; t < M && t < t1 * AOTC__LPI_MR; t += AOTC__LPI_MR)
    for (int64_t g = 0; g < kg; ++g)
      for (int64_t r = 0; r < AOTC__LPI_MR; ++r)
        *pa++ = t + r < M ? aotc__lp_lane(A + (t + r) * a_rs, AOTC__LPI_G * g, K, a_cs, AOTC__LP_FLIP) : 0u;
}

/* Packs a panel of B, then INR words after it: -128 times each column's sum
 * modulo 2^32 (the correction of the +128 on A), or zeros without VNNI.  With
 * AOTC__LP_BYTE_ROWS a group is 4 rows of NR bytes (K index 4g + i in row i)
 * instead of NR quads: the same bytes, transposed. */
AOTC_INTERNAL void aotc__lp_ipack_b(int64_t n0, int64_t N, int64_t K, const int8_t* B, int64_t b_rs,
                                    int64_t b_cs, uint32_t* pb) {
  int64_t kg = (K + AOTC__LPI_G - 1) / AOTC__LPI_G;
  uint32_t* corr = pb + (size_t)kg * AOTC__LPI_NR;
  for (int64_t c = 0; c < AOTC__LPI_NR; ++c) corr[c] = 0u;
  for (int64_t g = 0; g < kg; ++g)
    for (int64_t c = 0; c < AOTC__LPI_NR; ++c) {
      uint32_t q = n0 + c < N ? aotc__lp_lane(B + (n0 + c) * b_cs, AOTC__LPI_G * g, K, b_rs, 0u) : 0u;
      if (AOTC__LP_BYTE_ROWS) {
        unsigned char* rows = (unsigned char*)(void*)(pb - c) + c;
        for (int i = 0; i < 4; ++i) rows[i * AOTC__LPI_NR] = (unsigned char)(q >> (8 * i));
      } else {
        pb[0] = q;
      }
      ++pb;
      if (AOTC__LP_FLIP)
        for (int i = 0; i < 4; ++i) corr[c] -= (uint32_t)(int32_t)(int8_t)(uint8_t)(q >> (8 * i)) << 7;
    }
}

/* kernel(kg, a, b, c, ldc): c (IMR x INR, row stride ldc) += the kg groups of a
 * and b, modulo 2^32.  The first K block finds the column corrections in c (the
 * caller writes them there), later ones the sums so far.  AOTC_NOIPA: what gcc
 * (12) propagates into the AVX-512 kernels from their callers makes it spill a
 * third of the 24 accumulators on every iteration. */
#if defined(AOTC_HAVE_AVX512VNNI)
#define AOTC__LPI_LOAD(i, P)                                                         \
  __m512i c##i##_0 = _mm512_loadu_si512((const void*)(c + i * ldc));                 \
  __m512i c##i##_1 = _mm512_loadu_si512((const void*)(c + i * ldc + 16));
#define AOTC__LPI_DOT(i, P)                                     \
  {                                                             \
    __m512i ai = _mm512_set1_epi32((int)a[i]);                  \
    c##i##_0 = _mm512_dpbusd_epi32(c##i##_0, ai, b0);           \
    c##i##_1 = _mm512_dpbusd_epi32(c##i##_1, ai, b1);           \
  }
#define AOTC__LPI_STORE(i, P)                                     \
  _mm512_storeu_si512((void*)(c + i * ldc), c##i##_0);            \
  _mm512_storeu_si512((void*)(c + i * ldc + 16), c##i##_1);
AOTC_INTERNAL AOTC_NOIPA void aotc__lp_ikernel(int64_t kg, const uint32_t* AOTC_RESTRICT a, const uint32_t* AOTC_RESTRICT b,
                                    int32_t* AOTC_RESTRICT c, int64_t ldc) {
  AOTC__REPN(AOTC__LPI_MR)(AOTC__LPI_LOAD, 0)
  for (int64_t g = 0; g < kg; ++g) {
    __m512i b0 = _mm512_load_si512((const void*)b);
    __m512i b1 = _mm512_load_si512((const void*)(b + 16));
    AOTC__REPN(AOTC__LPI_MR)(AOTC__LPI_DOT, 0)
    a += AOTC__LPI_MR;
    b += AOTC__LPI_NR;
  }
  AOTC__REPN(AOTC__LPI_MR)(AOTC__LPI_STORE, 0)
}
#elif defined(AOTC_HAVE_NEON_DOTPROD)
/* sdot: each s32 lane adds the 4 products of its s8 quads (no offset). */
AOTC_INTERNAL AOTC_NOIPA void aotc__lp_ikernel(int64_t kg, const uint32_t* AOTC_RESTRICT a, const uint32_t* AOTC_RESTRICT b,
                                    int32_t* AOTC_RESTRICT c, int64_t ldc) {
  for (int64_t r = 0; r < AOTC__LPI_MR; ++r) {
    int32x4_t acc[AOTC__LPI_NR / 4];
    for (int v = 0; v < AOTC__LPI_NR / 4; ++v) acc[v] = vld1q_s32(c + r * ldc + 4 * v);
    for (int64_t g = 0; g < kg; ++g) {
      int8x16_t ar = vreinterpretq_s8_u32(vdupq_n_u32(a[g * AOTC__LPI_MR + r]));
      for (int v = 0; v < AOTC__LPI_NR / 4; ++v)
        acc[v] = vdotq_s32(acc[v], ar, vreinterpretq_s8_u32(vld1q_u32(b + g * AOTC__LPI_NR + 4 * v)));
    }
    for (int v = 0; v < AOTC__LPI_NR / 4; ++v) vst1q_s32(c + r * ldc + 4 * v, acc[v]);
  }
}
#elif defined(AOTC_HAVE_AVX2)
/* vpmaddwd: each s32 lane gets a0*b0 + a1*b1 of its s16 pairs, exactly (no
 * pair of s8 products reaches the one saturating case, -32768 * -32768 * 2);
 * vpaddd wraps.  12 accumulators, 2 B vectors and a broadcast fit the 16 ymm. */
#define AOTC__LPI_LOAD(i, P)                                                          \
  __m256i c##i##_0 = _mm256_loadu_si256((const __m256i*)(const void*)(c + i * ldc));  \
  __m256i c##i##_1 = _mm256_loadu_si256((const __m256i*)(const void*)(c + i * ldc + 8));
#define AOTC__LPI_DOT(i, P)                                                \
  {                                                                        \
    __m256i ai = _mm256_set1_epi32((int)a[i]);                             \
    c##i##_0 = _mm256_add_epi32(c##i##_0, _mm256_madd_epi16(ai, b0));      \
    c##i##_1 = _mm256_add_epi32(c##i##_1, _mm256_madd_epi16(ai, b1));      \
  }
#define AOTC__LPI_STORE(i, P)                                               \
  _mm256_storeu_si256((__m256i*)(void*)(c + i * ldc), c##i##_0);            \
  _mm256_storeu_si256((__m256i*)(void*)(c + i * ldc + 8), c##i##_1);
AOTC_INTERNAL AOTC_NOIPA void aotc__lp_ikernel(int64_t kg, const uint32_t* AOTC_RESTRICT a, const uint32_t* AOTC_RESTRICT b,
                                    int32_t* AOTC_RESTRICT c, int64_t ldc) {
  AOTC__REPN(AOTC__LPI_MR)(AOTC__LPI_LOAD, 0)
  for (int64_t g = 0; g < kg; ++g) {
    __m256i b0 = _mm256_load_si256((const __m256i*)(const void*)b);
    __m256i b1 = _mm256_load_si256((const __m256i*)(const void*)(b + 8));
    AOTC__REPN(AOTC__LPI_MR)(AOTC__LPI_DOT, 0)
    a += AOTC__LPI_MR;
    b += AOTC__LPI_NR;
  }
  AOTC__REPN(AOTC__LPI_MR)(AOTC__LPI_STORE, 0)
}
#else
/* Portable: B's groups are stored as 4 rows of NR bytes (AOTC__LP_BYTE_ROWS), so
 * the inner loop reads contiguous s8 and multiplies in 16 bits (an s8 x s8
 * product fits), which compilers vectorise with baseline SIMD; the sums are
 * unsigned (wrapping, no undefined overflow). */
AOTC_INTERNAL void aotc__lp_ikernel(int64_t kg, const uint32_t* AOTC_RESTRICT a, const uint32_t* AOTC_RESTRICT b,
                                    int32_t* AOTC_RESTRICT c, int64_t ldc) {
  const int8_t* bb = (const int8_t*)(const void*)b;
  uint32_t acc[AOTC__LPI_MR][AOTC__LPI_NR];
  for (int64_t r = 0; r < AOTC__LPI_MR; ++r) memcpy(acc[r], c + r * ldc, sizeof acc[r]);
  for (int64_t g = 0; g < kg; ++g)
    for (int i = 0; i < 4; ++i) {
      const int8_t* row = bb + (g * 4 + i) * AOTC__LPI_NR;
      for (int64_t r = 0; r < AOTC__LPI_MR; ++r) {
        int16_t av = (int16_t)(int8_t)(uint8_t)(a[g * AOTC__LPI_MR + r] >> (8 * i));
        for (int64_t n = 0; n < AOTC__LPI_NR; ++n) acc[r][n] += (uint32_t)(int32_t)(int16_t)(av * row[n]);
      }
    }
  for (int64_t r = 0; r < AOTC__LPI_MR; ++r) memcpy(c + r * ldc, acc[r], sizeof acc[r]);
}
#endif

AOTC_INTERNAL void aotc__lp_igemm_range(void* ctx, int64_t begin, int64_t end) {
  const aotc__lp_job* j = (const aotc__lp_job*)ctx;
  int64_t kg = (j->K + AOTC__LPI_G - 1) / AOTC__LPI_G;
  size_t panel = (size_t)(kg + 1) * AOTC__LPI_NR; /* the groups, then the correction */
  int32_t* C = (int32_t*)j->C;
  for (int64_t part = begin; part < end; ++part) {
    int64_t lo, hi;
    aotc__lp_panels(j, AOTC__LPI_NR, part, &lo, &hi);
    for (int64_t p = lo; p < hi; ++p) {
      uint32_t* pb = (uint32_t*)(void*)j->pb + (size_t)p * panel;
      const uint32_t* corr = pb + (size_t)kg * AOTC__LPI_NR;
      int64_t n0 = p * AOTC__LPI_NR, nc = j->N - n0 < AOTC__LPI_NR ? j->N - n0 : AOTC__LPI_NR;
      aotc__lp_ipack_b(n0, j->N, j->K, (const int8_t*)j->B, j->b_rs, j->b_cs, pb);
      for (int64_t g0 = 0; g0 < kg; g0 += AOTC_LP_KC) {
        int64_t gc = kg - g0 < AOTC_LP_KC ? kg - g0 : AOTC_LP_KC;
        for (int64_t t = 0; t < j->M; t += AOTC__LPI_MR) {
          const uint32_t* pa = (const uint32_t*)(const void*)j->pa + (size_t)t * (size_t)kg + (size_t)g0 * AOTC__LPI_MR;
          int32_t* c = C + t * j->ldc + n0;
          int64_t mr = j->M - t < AOTC__LPI_MR ? j->M - t : AOTC__LPI_MR;
          if (mr == AOTC__LPI_MR && nc == AOTC__LPI_NR) {
            if (g0 == 0)
              for (int64_t r = 0; r < AOTC__LPI_MR; ++r) memcpy(c + r * j->ldc, corr, AOTC__LPI_NR * sizeof(int32_t));
            aotc__lp_ikernel(gc, pa, pb + (size_t)g0 * AOTC__LPI_NR, c, j->ldc);
            continue;
          }
          int32_t tile[AOTC__LPI_MR * AOTC__LPI_NR];
          for (int64_t r = 0; r < AOTC__LPI_MR; ++r) {
            if (g0 == 0 || r >= mr)
              memcpy(tile + r * AOTC__LPI_NR, corr, AOTC__LPI_NR * sizeof(int32_t));
            else
              memcpy(tile + r * AOTC__LPI_NR, c + r * j->ldc, (size_t)nc * sizeof(int32_t));
          }
          aotc__lp_ikernel(gc, pa, pb + (size_t)g0 * AOTC__LPI_NR, tile, AOTC__LPI_NR);
          for (int64_t r = 0; r < mr; ++r) memcpy(c + r * j->ldc, tile + r * AOTC__LPI_NR, (size_t)nc * sizeof(int32_t));
        }
      }
    }
  }
}

/* The pool's job before the panels: part `part` packs its share of A's row tiles. */
AOTC_INTERNAL void aotc__lp_ipack_a_range(void* ctx, int64_t begin, int64_t end) {
  const aotc__lp_job* j = (const aotc__lp_job*)ctx;
  int64_t tiles = (j->M + AOTC__LPI_MR - 1) / AOTC__LPI_MR;
  for (int64_t part = begin; part < end; ++part)
    aotc__lp_ipack_a(j->M, j->K, (const int8_t*)j->A, j->a_rs, j->a_cs, (uint32_t*)(void*)j->pa,
                     part * tiles / j->parts, (part + 1) * tiles / j->parts);
}

AOTC_RT_API size_t aotc_lp_igemm_scratch_need(int64_t M, int64_t N, int64_t K) {
  /* packed B: each panel also carries its NR correction words (one more group).
   * The larger of the two layouts, so the size is the same for every target. */
  size_t quads = aotc__lp_packed_bytes(M, AOTC_LP_MR, K, 4) + aotc__lp_packed_bytes(N, AOTC_LP_NR, K + 4, 4);
  size_t pairs = aotc__lp_packed_bytes(M, AOTC__LPI_PAIR_MR, K, 2) +
                 aotc__lp_packed_bytes(N, AOTC__LPI_PAIR_NR, K + 2, 2);
  return quads > pairs ? quads : pairs;
}

AOTC_RT_API void aotc_lp_igemm(aotc_lp_parallel_for parallel_for, void* user, int threads, int64_t parts,
                               size_t part_scratch, int64_t M, int64_t N, int64_t K, const int8_t* A,
                               int64_t a_rs, int64_t a_cs, const int8_t* B, int64_t b_rs, int64_t b_cs,
                               int32_t* C, int64_t ldc, void* scratch) {
  (void)threads;
  (void)part_scratch;
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int64_t i = 0; i < M; ++i) memset(C + i * ldc, 0, (size_t)N * sizeof(int32_t));
    return;
  }
  aotc__lp_job j;
  j.parts = parts > 1 ? parts : 1;
  j.M = M; j.N = N; j.K = K; j.a_rs = a_rs; j.a_cs = a_cs; j.b_rs = b_rs; j.b_cs = b_cs; j.ldc = ldc;
  j.A = A; j.B = B; j.C = C;
  j.pa = (unsigned char*)scratch;
  j.pb = (unsigned char*)scratch + aotc__lp_packed_bytes(M, AOTC__LPI_MR, K, AOTC__LPI_G);
  if (parallel_for && j.parts > 1) { /* A's tiles packed over the pool, then the panels */
    parallel_for(user, j.parts, aotc__lp_ipack_a_range, &j);
    parallel_for(user, j.parts, aotc__lp_igemm_range, &j);
  } else {
    aotc__lp_ipack_a(M, K, A, a_rs, a_cs, (uint32_t*)scratch, 0, (M + AOTC__LPI_MR - 1) / AOTC__LPI_MR);
    aotc__lp_igemm_range(&j, 0, j.parts);
  }
}

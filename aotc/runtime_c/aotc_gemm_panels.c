/* aotc_gemm_panels.c -- f32 GEMM whose B is stored in panels (aotc_sgemm_pb).
 *
 * A constant B (a bound weight) is stored by the compiler in the layout the
 * micro-kernels read, so no call packs it: B[k][n] of a K x N matrix (N a
 * multiple of AOTC_GEMM_PANEL) is at
 *
 *     Bp[(n / AOTC_GEMM_PANEL) * K * AOTC_GEMM_PANEL + k * AOTC_GEMM_PANEL + n % AOTC_GEMM_PANEL]
 *
 * (panels of 32 columns, each K rows deep: aotc/ops/dot.py pack_panels writes
 * it).  32 is a whole number of register tiles on every ISA (NR = 32, 16 or 8),
 * so one layout serves every micro-kernel, the fat binary's included: a tile
 * reads its NR columns of a panel with a row stride of 32.
 *
 * The loops are those of the blocked product (column blocks of NC, K blocks of
 * KC, row blocks, NR-wide tiles), with A read in place and the kernels that
 * read B in place (_direct), which compute the same operations in the same
 * order as the packed ones: every element of C gets the bits aotc_sgemm gives
 * for the same A and the row-major B.  One row takes aotc_sgemm's matrix-vector
 * path, a panel at a time (each element's sum is the same).
 */
#ifndef AOTC_GEMM_H /* compiled on its own: the GEMM's kernels, static like the rest */
#include "aotc_gemm.c"
#endif

/* The API: an f32 product whose B was stored by the compiler in panels of AOTC_GEMM_PANEL
 * columns (the layout above; N a multiple of the panel): no call
 * packs it.  A is row-major with rows a_rs apart.  Bit-identical to aotc_sgemm on
 * the same A and the row-major B.  The scratch is aotc_sgemm's; _part
 * and _threads cut it as aotc_sgemm_part and aotc_sgemm_threads do (columns in
 * whole panels). */
#define AOTC_GEMM_PANEL 32
AOTC_RT_API void aotc_sgemm_pb(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs,
                               const float* Bp, float* C, int64_t ldc, void* scratch);
AOTC_RT_API void aotc_sgemm_pb_part(int64_t part, int64_t parts, int64_t M, int64_t N, int64_t K,
                                    const float* A, int64_t a_rs, const float* Bp, float* C,
                                    int64_t ldc, void* scratch);
AOTC_RT_API void aotc_sgemm_pb_threads(void (*parallel_for)(void*, int64_t, void (*)(void*, int64_t, int64_t), void*),
                                       void* user, int threads, int64_t parts, size_t part_scratch,
                                       int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs,
                                       const float* Bp, float* C, int64_t ldc, void* scratch);

AOTC_STATIC_ASSERT(AOTC_GEMM_PANEL % AOTC_SGEMM_NR == 0, "a B panel is whole register tiles wide");

/* Rows of the next row block of the `left` rows to go: MC, or all of them when fewer than
 * 2 * MC are left (so no block is shorter than MC and its tiles follow aotc__tile_rows). */
AOTC_INTERNAL int64_t aotc__pb_block_rows(int64_t left) {
  return left < 2 * AOTC_SGEMM_MC ? left : AOTC_SGEMM_MC;
}

/* Where column j's run of rows pc.. of a panel-stored B starts (the layout above). */
AOTC_INTERNAL const float* aotc__pb_at(const float* Bp, int64_t K, int64_t pc, int64_t j) {
  return Bp + (j / AOTC_GEMM_PANEL) * K * AOTC_GEMM_PANEL + pc * AOTC_GEMM_PANEL + j % AOTC_GEMM_PANEL;
}

AOTC_RT_API void aotc_sgemm_pb(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs,
                               const float* Bp, float* C, int64_t ldc, void* scratch) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) C[m * ldc + n] = 0;
    return;
  }
  if (M == 1) { /* aotc_sgemm's matrix-vector path, a panel at a time: the same sums */
    for (int64_t j = 0; j < N; j += AOTC_GEMM_PANEL)
      aotc_sgemm_axpy(AOTC_GEMM_PANEL, K, A, 1, Bp + j * K, AOTC_GEMM_PANEL, C + j);
    return;
  }
  float* rows = (float*)AOTC_ASSUME_ALIGNED(scratch, AOTC_ALIGNMENT);
  AOTC_ALIGNAS(AOTC_ALIGNMENT) float edge[AOTC_SGEMM_MR * AOTC_SGEMM_NR];
  /* every row in place, or fewer than (MR+1)/2 rows copied (zero-padded) to `rows` */
  const int64_t mfull = M >= AOTC__SHORT_MIN(AOTC_SGEMM_MR) ? M : 0;
  for (int64_t jc = 0; jc < N; jc += AOTC_SGEMM_NC) {
    const int64_t nc = N - jc < AOTC_SGEMM_NC ? N - jc : AOTC_SGEMM_NC;
    for (int64_t pc = 0; pc < K; pc += AOTC_SGEMM_KC) {
      const int64_t kc = K - pc < AOTC_SGEMM_KC ? K - pc : AOTC_SGEMM_KC;
      const int accumulate = pc > 0;
      for (int64_t i = 0; mfull < M && i < AOTC_SGEMM_MR; ++i)
        for (int64_t k = 0; k < kc; ++k) rows[i * kc + k] = i < M ? A[i * a_rs + pc + k] : 0;
      int64_t mc = 0;
      for (int64_t ic = 0; ic < mfull; ic += mc) {
        mc = aotc__pb_block_rows(mfull - ic);
        /* the weight comes from memory, not from a packing that just touched it: each
         * row tile prefetches its share of the next tile column's kc rows */
        const int64_t tiles = (mc + AOTC_SGEMM_MR - 1) / AOTC_SGEMM_MR;
        const int64_t pf_step = (kc + tiles - 1) / tiles;
        for (int64_t jr = jc; jr < jc + nc; jr += AOTC_SGEMM_NR) {
          const float* b = aotc__pb_at(Bp, K, pc, jr);
          const int64_t jn = jr + AOTC_SGEMM_NR;
          const float* next = jn < jc + nc ? aotc__pb_at(Bp, K, pc, jn) : b;
          int64_t mr = 0;
          for (int64_t ir = ic, t = 0; ir < ic + mc; ir += mr, ++t) {
            mr = aotc__tile_rows(ic + mc - ir, AOTC_SGEMM_MR);
            if (jn < jc + nc) {
              const int64_t k0 = t * pf_step;
              const int64_t k1 = k0 + pf_step < kc ? k0 + pf_step : kc;
              for (int64_t k = k0; k < k1; ++k) {
                AOTC_PREFETCH_R(next + k * AOTC_GEMM_PANEL);
                AOTC_PREFETCH_R(next + k * AOTC_GEMM_PANEL + AOTC_SGEMM_NR - 1);
              }
            }
            aotc__sgemm_kernel_direct_n(mr, kc, A + ir * a_rs + pc, a_rs, b, AOTC_GEMM_PANEL,
                                        C + ir * ldc + jr, ldc, accumulate);
          }
        }
      }
      for (int64_t jr = jc; mfull < M && jr < jc + nc; jr += AOTC_SGEMM_NR) {
        const float* b = aotc__pb_at(Bp, K, pc, jr);
        aotc__sgemm_kernel_direct_n(AOTC_SGEMM_MR, kc, rows, kc, b, AOTC_GEMM_PANEL, edge,
                                    AOTC_SGEMM_NR, 0);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < AOTC_SGEMM_NR; ++j)
            C[i * ldc + jr + j] = accumulate ? C[i * ldc + jr + j] + edge[i * AOTC_SGEMM_NR + j]
                                             : edge[i * AOTC_SGEMM_NR + j];
      }
    }
  }
}

AOTC_RT_API void aotc_sgemm_pb_part(int64_t part, int64_t parts, int64_t M, int64_t N, int64_t K,
                                    const float* A, int64_t a_rs, const float* Bp, float* C,
                                    int64_t ldc, void* scratch) {
  if (parts <= 1) {
    aotc_sgemm_pb(M, N, K, A, a_rs, Bp, C, ldc, scratch);
    return;
  }
  if (part < 0 || part >= parts || M <= 0 || N <= 0) return;
  /* the longer side is cut: columns in whole panels, rows in whole MR tiles */
  const int split_n = M < N;
  const int64_t len = split_n ? N : M, tile = split_n ? AOTC_GEMM_PANEL : AOTC_SGEMM_MR;
  const int64_t tiles = (len + tile - 1) / tile;
  const int64_t begin = tiles / parts * part + (part < tiles % parts ? part : tiles % parts);
  const int64_t count = tiles / parts + (part < tiles % parts ? 1 : 0);
  const int64_t lo = begin * tile;
  const int64_t hi = (begin + count) * tile < len ? (begin + count) * tile : len;
  if (lo >= hi) return;
  if (split_n)
    aotc_sgemm_pb(M, hi - lo, K, A, a_rs, Bp + lo * K, C + lo, ldc, scratch);
  else
    aotc_sgemm_pb(hi - lo, N, K, A + lo * a_rs, a_rs, Bp, C + lo * ldc, ldc, scratch);
}

typedef struct {
  int64_t parts, M, N, K, a_rs, ldc;
  const float* A;
  const float* Bp;
  float* C;
  unsigned char* scratch;
  size_t part_scratch;
} aotc__sgemm_pb_job;

AOTC_INTERNAL void aotc__sgemm_pb_range(void* ctx, int64_t begin, int64_t end) {
  const aotc__sgemm_pb_job* j = (const aotc__sgemm_pb_job*)ctx;
  aotc_fpenv saved;
  aotc_fpenv_enter(&saved);
  for (int64_t p = begin; p < end; ++p)
    aotc_sgemm_pb_part(p, j->parts, j->M, j->N, j->K, j->A, j->a_rs, j->Bp, j->C, j->ldc,
                       j->scratch + (size_t)p * j->part_scratch);
  aotc_fpenv_leave(&saved);
}

AOTC_RT_API void aotc_sgemm_pb_threads(void (*parallel_for)(void*, int64_t, void (*)(void*, int64_t, int64_t),
                                                            void*),
                                       void* user, int threads, int64_t parts, size_t part_scratch,
                                       int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs,
                                       const float* Bp, float* C, int64_t ldc, void* scratch) {
  if (threads > 0 && threads < parts && parts % threads == 0) { /* one slice per thread */
    part_scratch *= (size_t)(parts / threads);
    parts = threads;
  }
  if (!parallel_for || parts <= 1) {
    aotc_sgemm_pb(M, N, K, A, a_rs, Bp, C, ldc, scratch);
    return;
  }
  aotc__sgemm_pb_job j;
  j.parts = parts; j.M = M; j.N = N; j.K = K; j.a_rs = a_rs; j.ldc = ldc;
  j.A = A; j.Bp = Bp; j.C = C;
  j.scratch = (unsigned char*)scratch;
  j.part_scratch = part_scratch;
  parallel_for(user, parts, aotc__sgemm_pb_range, &j);
}

/* aotc_gemm.h -- packed, cache-blocked matrix multiply for f32 and f64.
 *
 * Declares the GEMM entry points and the blocking parameters of the micro-
 * kernel selected for the target ISA (see aotc_rt.h).  The implementation is
 * aotc_gemm.c.  Only float GEMM lives here; integer and bf16 dots are plain
 * loops emitted by the compiler.
 */
#ifndef AOTC_GEMM_H
#define AOTC_GEMM_H

#ifndef AOTC_RT_H
#include "aotc_rt.h"
#endif

/* Register tile (MR x NR), and cache blocks: an MC x KC block of A and a
 * KC x NC block of B are packed per step.  MC is a multiple of MR and NC of
 * NR.  Zen 4 / Skylake-X: a 12x32 f32 tile keeps 24 zmm accumulators.  KC and
 * NC are the same on every ISA (f32: 512 deep, 128 columns; f64: 256 and 128:
 * a 256 KB block of B), so the scratch of each threaded slice stays small; a
 * row-major A is read in place, not packed, so a narrow NC costs no repacking
 * of A.  A deep KC makes each row of A a long sequential stream for the tiles
 * that read it in place (on a Zen 3, 1152-deep products with 32 columns ran at
 * 71 GFLOP/s with KC 256 and 81 with 512; square ones 81 and 86).  Only KC
 * decides the order of the sums, so MC and NC change no bits. */
#if defined(AOTC_HAVE_AVX512F)
#define AOTC_SGEMM_MR 12
#define AOTC_SGEMM_NR 32
#define AOTC_DGEMM_MR 12
#define AOTC_DGEMM_NR 16
#elif defined(AOTC_HAVE_AVX2)
#define AOTC_SGEMM_MR 6
#define AOTC_SGEMM_NR 16
#define AOTC_DGEMM_MR 6
#define AOTC_DGEMM_NR 8
#elif defined(AOTC_HAVE_NEON)
#define AOTC_SGEMM_MR 12
#define AOTC_SGEMM_NR 8
#define AOTC_DGEMM_MR 12
#define AOTC_DGEMM_NR 4
#else
#define AOTC_SGEMM_MR 4
#define AOTC_SGEMM_NR 16
#define AOTC_DGEMM_MR 4
#define AOTC_DGEMM_NR 8
#endif

#ifndef AOTC_SGEMM_KC
#define AOTC_SGEMM_KC 512
#endif
#ifndef AOTC_SGEMM_MC
#define AOTC_SGEMM_MC (AOTC_SGEMM_MR * 12)
#endif
#ifndef AOTC_SGEMM_NC
#define AOTC_SGEMM_NC 128
#endif
#ifndef AOTC_DGEMM_KC
#define AOTC_DGEMM_KC 256
#endif
#ifndef AOTC_DGEMM_MC
#define AOTC_DGEMM_MC (AOTC_DGEMM_MR * 8)
#endif
#ifndef AOTC_DGEMM_NC
#define AOTC_DGEMM_NC 128
#endif

/* Scratch the caller provides to aotc_sgemm / aotc_dgemm: a fixed size,
 * independent of M, N, K and of the ISA, 64-byte aligned.  One scratch per
 * concurrent call. */
#define AOTC_GEMM_SCRATCH_BYTES ((size_t)4 * 1024 * 1024)

#define AOTC__GEMM_NEED(T, P) \
  (((size_t)P##_MC * P##_KC + (size_t)P##_KC * P##_NC) * sizeof(T) + 128u)
AOTC_STATIC_ASSERT(AOTC__GEMM_NEED(float, AOTC_SGEMM) <= AOTC_GEMM_SCRATCH_BYTES,
                   "sgemm blocking exceeds AOTC_GEMM_SCRATCH_BYTES");
AOTC_STATIC_ASSERT(AOTC__GEMM_NEED(double, AOTC_DGEMM) <= AOTC_GEMM_SCRATCH_BYTES,
                   "dgemm blocking exceeds AOTC_GEMM_SCRATCH_BYTES");

/* C[m*ldc + n] = sum_k A[m*a_rs + k*a_cs] * B[k*b_rs + n*b_cs]
 * for 0 <= m < M, 0 <= n < N.  C is overwritten (K == 0 gives zeros); C must
 * not overlap A or B.  Strides are in elements and may be any value, so a
 * transposed operand needs no copy.  `scratch` is AOTC_GEMM_SCRATCH_BYTES
 * bytes, 64-byte aligned.  Single-threaded; reentrant. */
AOTC_RT_API void aotc_sgemm(int64_t M, int64_t N, int64_t K, const float* A, int64_t a_rs,
                            int64_t a_cs, const float* B, int64_t b_rs, int64_t b_cs,
                            float* C, int64_t ldc, void* scratch);
AOTC_RT_API void aotc_dgemm(int64_t M, int64_t N, int64_t K, const double* A, int64_t a_rs,
                            int64_t a_cs, const double* B, int64_t b_rs, int64_t b_cs,
                            double* C, int64_t ldc, void* scratch);
AOTC_RT_API size_t aotc_gemm_scratch_bytes(void);
/* The scratch one call of the given size really uses (<= AOTC_GEMM_SCRATCH_BYTES,
 * a multiple of 64): what a caller that knows M, N, K must provide. */
AOTC_RT_API size_t aotc_sgemm_scratch_need(int64_t M, int64_t N, int64_t K);
AOTC_RT_API size_t aotc_dgemm_scratch_need(int64_t M, int64_t N, int64_t K);

/* Slice `part` (0 <= part < parts) of the same product, for running one GEMM
 * on several threads: calling it for every part, in any order or
 * concurrently, each with its own scratch, computes exactly what aotc_sgemm
 * computes (same summation order, bit-identical).  parts <= 1 is the whole
 * product.  Slices are tile-aligned ranges of rows or columns of C; a part
 * may get nothing to do when the matrix is small. */
AOTC_RT_API void aotc_sgemm_part(int64_t part, int64_t parts, int64_t M, int64_t N, int64_t K,
                                 const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                                 int64_t b_rs, int64_t b_cs, float* C, int64_t ldc,
                                 void* scratch);
AOTC_RT_API void aotc_dgemm_part(int64_t part, int64_t parts, int64_t M, int64_t N, int64_t K,
                                 const double* A, int64_t a_rs, int64_t a_cs, const double* B,
                                 int64_t b_rs, int64_t b_cs, double* C, int64_t ldc,
                                 void* scratch);

/* aotc_sgemm split into at most `parts` slices (aotc_sgemm_part) run by
 * parallel_for (an aotc_parallel_for_fn: the built-in pool's or an
 * application's), slice p with scratch + p * part_scratch; bit-identical to
 * aotc_sgemm, which it is when parallel_for is NULL or parts <= 1.  `threads`
 * is the pool's size when known (else 0): a pool whose thread count divides
 * `parts` gets one slice per thread (in the scratch of parts / threads
 * slices), since each slice packs the operand it does not cut again, and
 * slices beyond one per thread only add that work. */
AOTC_RT_API void aotc_sgemm_threads(void (*parallel_for)(void*, int64_t, void (*)(void*, int64_t, int64_t), void*),
                                    void* user, int threads, int64_t parts, size_t part_scratch, int64_t M, int64_t N,
                                    int64_t K, const float* A, int64_t a_rs, int64_t a_cs, const float* B,
                                    int64_t b_rs, int64_t b_cs, float* C, int64_t ldc, void* scratch);
AOTC_RT_API void aotc_dgemm_threads(void (*parallel_for)(void*, int64_t, void (*)(void*, int64_t, int64_t), void*),
                                    void* user, int threads, int64_t parts, size_t part_scratch, int64_t M, int64_t N,
                                    int64_t K, const double* A, int64_t a_rs, int64_t a_cs, const double* B,
                                    int64_t b_rs, int64_t b_cs, double* C, int64_t ldc, void* scratch);

#endif /* AOTC_GEMM_H */

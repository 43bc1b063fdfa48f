/* aotc_lowp.h -- reduced-precision GEMMs: bf16 x bf16 with f32 accumulation, and
 * s8 x s8 with s32 (wrapping) accumulation.
 *
 * Each has a fast path chosen from the compiler's feature macros (AVX512_BF16
 * vdpbf16ps; AVX512_VNNI vpdpbusd, NEON sdot or AVX2 vpmaddwd) and a portable one, so the same
 * text builds for every target.  The implementation is aotc_lowp.c.
 */
#ifndef AOTC_LOWP_H
#define AOTC_LOWP_H

#ifndef AOTC_GEMM_H
#include "aotc_gemm.h"
#endif

/* vdpbf16ps does 32 flops where an f32 FMA does 32 too, so it pays only where it
 * issues as often as the FMA: Zen 4, not Sapphire Rapids and later Intel cores (the
 * ones with AVX512_FP16), where it measured 3.6x slower per instruction than
 * vfmadd231ps and a bf16 GEMM on it 1.7x slower than widening to f32 for
 * aotc_sgemm.  Define AOTC_LP_DPBF16 to use it there all the same. */
#if defined(AOTC_HAVE_AVX512F) && defined(__AVX512BF16__) && \
    (!defined(__AVX512FP16__) || defined(AOTC_LP_DPBF16))
#define AOTC_HAVE_AVX512BF16 1
#endif
#if defined(AOTC_HAVE_AVX512F) && defined(__AVX512VNNI__)
#define AOTC_HAVE_AVX512VNNI 1
#endif
#if defined(AOTC_HAVE_NEON) && defined(__ARM_FEATURE_DOTPROD)
#define AOTC_HAVE_NEON_DOTPROD 1
#endif

/* Register tile of the packed kernels: MR rows x NR columns (two zmm of f32 or
 * s32).  K is packed in groups (2 bf16 or 4 s8 per 32-bit lane) and cut into
 * blocks of KC groups; C carries the f32/s32 sums from one block to the next
 * exactly, so no block size changes any bit. */
#define AOTC_LP_MR 12
#define AOTC_LP_NR 32
#define AOTC_LP_KC 256

/* The parallel_for of aotc_pool.h / an application's pool. */
typedef void (*aotc_lp_parallel_for)(void*, int64_t, void (*)(void*, int64_t, int64_t), void*);

/* C[m*ldc + n] = sum_k A[m*a_rs + k*a_cs] * B[k*b_rs + n*b_cs] for bf16 A and B
 * (uint16_t bit patterns) and an f32 C: each product exact in f32, the sum
 * accumulated in f32 (flushing subnormals, as XLA:CPU does).  With AVX512_BF16:
 * pairs of K per vdpbf16ps, split over `parts` column ranges on the pool;
 * elsewhere A and B are widened to f32 and multiplied by aotc_sgemm_threads
 * (`parts` slices of `part_scratch` bytes).  `scratch`, 64-byte aligned, is
 * aotc_lp_bgemm_scratch_need bytes. */
AOTC_RT_API size_t aotc_lp_bgemm_scratch_need(int64_t M, int64_t N, int64_t K, int64_t parts,
                                              size_t part_scratch);
AOTC_RT_API void aotc_lp_bgemm(aotc_lp_parallel_for parallel_for, void* user, int threads, int64_t parts,
                               size_t part_scratch, int64_t M, int64_t N, int64_t K, const uint16_t* A,
                               int64_t a_rs, int64_t a_cs, const uint16_t* B, int64_t b_rs, int64_t b_cs,
                               float* C, int64_t ldc, void* scratch);

/* The same for s8 A and B and an s32 C, summed modulo 2^32 as XLA:CPU's s32
 * dot wraps: bit-exact on every path.  AVX512_VNNI: vpdpbusd on (a + 128) as
 * u8 times b, minus 128 * (column sums of B); NEON with the dot-product
 * extension: sdot; AVX2: vpmaddwd on s16 pairs; elsewhere portable C.
 * `part_scratch` is unused. */
AOTC_RT_API size_t aotc_lp_igemm_scratch_need(int64_t M, int64_t N, int64_t K);
AOTC_RT_API void aotc_lp_igemm(aotc_lp_parallel_for parallel_for, void* user, int threads, int64_t parts,
                               size_t part_scratch, int64_t M, int64_t N, int64_t K, const int8_t* A,
                               int64_t a_rs, int64_t a_cs, const int8_t* B, int64_t b_rs, int64_t b_cs,
                               int32_t* C, int64_t ldc, void* scratch);

#endif /* AOTC_LOWP_H */

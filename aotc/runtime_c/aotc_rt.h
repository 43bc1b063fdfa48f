/* aotc_rt.h -- base definitions of the aotc C runtime.
 *
 * Owns the portability layer every other runtime file builds on: linkage and
 * inlining macros, alignment, complex storage types, the little-endian check and
 * compile-time SIMD ISA selection.  It declares no functions and holds no state.
 *
 * The runtime files are compiled on their own (tests) and also concatenated, in
 * the order given by aotc/runtime_c/__init__.py, into every generated .c file.
 * Each file therefore has an include guard, and a file that needs an earlier
 * one includes it only when that guard is not yet defined, so the concatenated
 * text never reaches for a file on the include path.
 *
 * Linkage: every runtime function is either AOTC_INLINE (static inline) or
 * AOTC_RT_API, which defaults to static so that two generated models link into
 * one program without clashing.  A test that wants to call the functions from
 * outside defines AOTC_RT_API as empty before the first runtime file.
 */
#ifndef AOTC_RT_H
#define AOTC_RT_H

#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ < 201112L
#error "the aotc runtime needs a C11 compiler"
#endif

/* ---- numeric contract ----------------------------------------------------
 * The results must not depend on the flags of the user's build.
 *
 * No fused multiply-add unless written explicitly (fma(), intrinsics): every
 * target and compiler then rounds a*b+c the same way.  gcc ignores
 * `#pragma STDC FP_CONTRACT` and contracts by default in GNU mode (-std=gnu*,
 * the default), so it gets the optimize pragma, which applies to every function
 * defined after it and leaves the other options (-O level, -march, ...) as
 * they were.  clang honours the standard pragma unless built with
 * -ffp-contract=fast, which it documents as overriding pragmas.
 *
 * MSVC (cl, not clang-cl) contracts only under /fp:fast or /fp:contract;
 * `#pragma fp_contract(off)` turns contraction off whatever the flags.
 *
 * -ffast-math, -Ofast and -ffinite-math-only (MSVC: /fp:fast) let the compiler
 * reassociate sums, drop NaN and infinity handling and flush differently:
 * refused outright. */
#if defined(__FAST_MATH__)
#error "aotc: generated code must not be built with -ffast-math or -Ofast: they reassociate float arithmetic and ignore NaN/inf, so results would differ from XLA"
#endif
#if defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__
#error "aotc: generated code must not be built with -ffinite-math-only: NaN and infinity must propagate as in XLA"
#endif
#if defined(_MSC_VER) && !defined(__clang__) && defined(_M_FP_FAST)
#error "aotc: generated code must not be built with /fp:fast: it reassociates float arithmetic and ignores NaN/inf, so results would differ from XLA (use the default /fp:precise)"
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#elif defined(_MSC_VER)
#pragma fp_contract(off)
#endif

#include <stddef.h>
#include <stdint.h>

/* ---- compiler attributes ------------------------------------------------ */

#if defined(__GNUC__) || defined(__clang__)
#define AOTC_UNUSED __attribute__((unused))
#define AOTC_LIKELY(x) __builtin_expect(!!(x), 1)
#define AOTC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define AOTC_ASSUME_ALIGNED(p, n) __builtin_assume_aligned((p), (n))
#define AOTC_NOINLINE __attribute__((noinline))
#if defined(__clang__)
#define AOTC_NOIPA __attribute__((noinline))
#else
/* no inlining or constant propagation into it: keeps gcc's loop analysis from
 * warning about paths of a call's clone that the constants make unreachable */
#define AOTC_NOIPA __attribute__((noipa))
#endif
#define AOTC_PREFETCH_W(p) __builtin_prefetch((p), 1, 3)
#define AOTC_PREFETCH_R(p) __builtin_prefetch((p), 0, 2)
#else
#define AOTC_UNUSED
#define AOTC_LIKELY(x) (x)
#define AOTC_UNLIKELY(x) (x)
#define AOTC_ASSUME_ALIGNED(p, n) (p)
#define AOTC_NOINLINE
#define AOTC_NOIPA
#define AOTC_PREFETCH_W(p) ((void)(p))
#define AOTC_PREFETCH_R(p) ((void)(p))
#endif

/* Entry points of the runtime (GEMM, thread pool).  static by default; marked
 * unused so a generated file that calls none of them still compiles cleanly
 * under -Wall -Werror. */
#ifndef AOTC_RT_API
#define AOTC_RT_API static AOTC_UNUSED
#endif

/* Small helpers used by generated loops: always internal, always inlinable. */
#define AOTC_INLINE static inline AOTC_UNUSED

/* Internal runtime functions that are not part of the API (never exported,
 * even when a test empties AOTC_RT_API). */
#define AOTC_INTERNAL static AOTC_UNUSED

/* The file also compiles as C++ (g++, clang++, MSVC's cl /TP), where
 * `restrict`, `_Alignas` and `_Static_assert` are spelled differently. */
#if defined(__cplusplus) || (defined(_MSC_VER) && !defined(__clang__))
#define AOTC_RESTRICT __restrict /* MSVC's C before /std:c11 has no `restrict` either */
#else
#define AOTC_RESTRICT restrict
#endif
#if defined(__cplusplus)
#define AOTC_ALIGNAS(n) alignas(n)
#define AOTC_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
/* Alignment of a declaration: `AOTC_ALIGNAS(64) float buf[16];` */
#define AOTC_ALIGNAS(n) _Alignas(n)
#define AOTC_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
/* Alignment of arena buffers, GEMM scratch and packed panels (one cache line,
 * also the width of an AVX-512 register). */
#define AOTC_ALIGNMENT 64

/* Aligned heap blocks, released with AOTC_ALIGNED_FREE: `align` is a power of
 * two no smaller than sizeof(void*); NULL when allocation fails.  Windows: its
 * CRT's `_aligned_malloc` / `_aligned_free` (it has neither posix_memalign nor
 * aligned_alloc, and such a block must not reach free()).  POSIX (the generated
 * .c defines _POSIX_C_SOURCE): posix_memalign.  Other C11 libraries:
 * aligned_alloc, the size rounded up to a multiple of `align`.  Everywhere but
 * Windows, AOTC_ALIGNED_FREE is free(). */
#if defined(_WIN32)
#include <malloc.h>
#define AOTC_ALIGNED_ALLOC(align, size) _aligned_malloc((size), (align))
#define AOTC_ALIGNED_FREE(p) _aligned_free(p)
#else
#include <stdlib.h>
AOTC_UNUSED static inline void* aotc__aligned_alloc(size_t align, size_t size) {
#if defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 200112L
  void* p = NULL;
  return posix_memalign(&p, align, size) == 0 ? p : NULL;
#else
  if (size > SIZE_MAX - align) return NULL;
  return aligned_alloc(align, (size + align - 1u) / align * align);
#endif
}
#define AOTC_ALIGNED_ALLOC(align, size) aotc__aligned_alloc((align), (size))
#define AOTC_ALIGNED_FREE(p) free(p)
#endif

/* A zeroed block for an instance's own buffers (arguments, results, arena,
 * weights), released with AOTC_ALIGNED_FREE; NULL when allocation fails.
 * 64-byte aligned.  On Linux a block of AOTC_HUGE_MIN (2 MiB) or more is
 * aligned to 2 MiB, rounded up to whole 2 MiB pages and advised MADV_HUGEPAGE
 * before it is first touched: where transparent huge pages are "madvise" (the
 * default of most distributions) a kernel streaming through it then takes one
 * TLB entry per 2 MiB, not per 4 KiB (sum of 16M f32 from one thread: 4.4 ->
 * 3.5 ms on Zen 3), and the cache sets a buffer maps to no longer depend on
 * which 4 KiB pages the OS gave it (an FFT of 256 x 1024 points took 430 or
 * 590 us from run to run in a 3.4 MB arena of small pages, 430 us in huge
 * pages).  The advice is only advice: a kernel without THP ignores it.  The
 * generated .c defines _DEFAULT_SOURCE on Linux so <sys/mman.h> declares
 * madvise; where it does not, the block is a plain aligned one. */
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <string.h>
#define AOTC_HUGE_MIN ((size_t)2 << 20)
AOTC_UNUSED static inline void* aotc__alloc_zeroed(size_t n) {
  size_t align = 64, size = n ? n : 1;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (size >= AOTC_HUGE_MIN) align = (size_t)2 << 20;
#endif
  if (size > SIZE_MAX - align) return NULL;
  size = (size + align - 1u) / align * align;
  void* p = AOTC_ALIGNED_ALLOC(align, size);
  if (!p) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (align > 64) (void)madvise(p, size, MADV_HUGEPAGE);
#endif
  memset(p, 0, size);
  return p;
}

/* ---- byte order --------------------------------------------------------- */
/* Generated code reinterprets bits (bitcast-convert, half types, weights
 * stored as bytes) assuming little-endian storage, as XLA:CPU does. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the aotc runtime requires a little-endian target"
#endif
#elif defined(__BIG_ENDIAN__) || defined(__ARMEB__) || defined(__AARCH64EB__) || \
    defined(__MIPSEB__)
#error "the aotc runtime requires a little-endian target"
#endif

/* ---- complex storage ---------------------------------------------------- */
/* Layout-compatible with XLA's c64/c128 (real part first).  Plain structs so
 * C11 <complex.h> (optional in C11) is not needed. */
typedef struct {
  float re, im;
} aotc_c64;
typedef struct {
  double re, im;
} aotc_c128;

/* ---- SIMD ISA selection ------------------------------------------------- */
/* Chosen at compile time from the compiler's predefined macros, so the same
 * text builds for any target; at most the widest available ISA family is
 * used by each kernel.  Define AOTC_SIMD_SCALAR to force the portable scalar
 * code on every target (used by tests to cover the fallback path). */
#if !defined(AOTC_SIMD_SCALAR)
#if defined(__AVX512F__)
#define AOTC_HAVE_AVX512F 1
#endif
/* MSVC's /arch:AVX2 (and /arch:AVX512) defines __AVX2__ but never __FMA__,
 * though it implies FMA3 and emits it for the intrinsics. */
#if defined(__AVX2__) && (defined(__FMA__) || (defined(_MSC_VER) && !defined(__clang__)))
#define AOTC_HAVE_AVX2 1
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#define AOTC_HAVE_NEON 1
#endif
#endif

/* F16C: f16 <-> f32 conversions in one instruction (aotc_math.h) */
#if !defined(AOTC_SIMD_SCALAR) && !defined(AOTC__NO_VECTOR_CODE) && defined(__F16C__)
#define AOTC_HAVE_F16C 1
#endif

/* The intrinsics headers, unless the file embedding the runtime has no vector code (it then
 * leaves out the vector part, aotc_simd.h and the GEMM: runtime_c/__init__.py) */
#if !defined(AOTC__NO_VECTOR_CODE)
#if defined(AOTC_HAVE_AVX512F) || defined(AOTC_HAVE_AVX2) || defined(AOTC_HAVE_F16C)
#include <immintrin.h>
#endif
#if defined(AOTC_HAVE_NEON)
#include <arm_neon.h>
#endif
#endif

/* Name of the SIMD path selected, for banners and benchmarks. */
#if defined(AOTC_HAVE_AVX512F)
#define AOTC_SIMD_NAME "avx512f"
#elif defined(AOTC_HAVE_AVX2)
#define AOTC_SIMD_NAME "avx2+fma"
#elif defined(AOTC_HAVE_NEON)
#define AOTC_SIMD_NAME "neon"
#else
#define AOTC_SIMD_NAME "scalar"
#endif

#endif /* AOTC_RT_H */

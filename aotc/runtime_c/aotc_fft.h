/* aotc_fft.h -- fast Fourier transforms of XLA's `fft` op (FFT, IFFT, RFFT, IRFFT).
 *
 * Declares the entry points and the scratch they need; the implementation is
 * aotc_fft.c.  Transforms of 1 to 3 trailing dimensions, batched over the
 * leading ones, for c64 (f32) and c128 (f64) data.  No allocation: every table
 * and work buffer lives in the caller's scratch.
 */
#ifndef AOTC_FFT_H
#define AOTC_FFT_H

#ifndef AOTC_RT_H
#include "aotc_rt.h"
#endif

/* fft_type, as XLA spells it */
#define AOTC_FFT_FFT 0   /* complex -> complex, exp(-2 pi i jk/n) */
#define AOTC_FFT_IFFT 1  /* complex -> complex, exp(+2 pi i jk/n), scaled by 1/n */
#define AOTC_FFT_RFFT 2  /* real -> complex, n/2+1 values along the last axis */
#define AOTC_FFT_IRFFT 3 /* complex (n/2+1 along the last axis) -> real, scaled by 1/n */

/* Lines transformed together: the work buffers hold this many lines side by
 * side, so the butterflies run over contiguous lanes. */
#define AOTC_FFT_LANES 8

/* Bytes of scratch (64-byte aligned) one call of the given kind and lengths
 * needs.  n0, n1, n2 are the fft_length of a 3-D transform (a 1-D transform of
 * length n is 1, 1, n); for RFFT and IRFFT n2 is the real length.  The same
 * for f32 and f64 data. */
AOTC_RT_API size_t aotc_fft_scratch_need(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2);

/* out = the transform `kind` of `batch` arrays [n0, n1, n2] of `in`, both
 * row-major.  FFT/IFFT: in and out are complex [batch, n0, n1, n2] (they may
 * be the same buffer).  RFFT: in is real [batch, n0, n1, n2], out complex
 * [batch, n0, n1, n2/2+1].  IRFFT: in is complex [batch, n0, n1, n2/2+1] (the
 * imaginary parts of the zero and, for even n2, the n2/2 frequency are
 * ignored along the last axis), out real [batch, n0, n1, n2].  aotc_fft_c64
 * reads and writes f32 / c64, aotc_fft_c128 f64 / c128.  `scratch` holds
 * aotc_fft_scratch_need bytes, 64-byte aligned.  Single-threaded; reentrant. */
AOTC_RT_API void aotc_fft_c64(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in,
                              void* out, void* scratch);
AOTC_RT_API void aotc_fft_c128(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in,
                               void* out, void* scratch);

/* The same transforms into scratch that keeps its tables (twiddles; Bluestein's chirp)
 * from a call before: computed there when `fill`, else read as an earlier call of the
 * same kind and lengths with `fill` left them (the tables come first in the scratch, the
 * same place for every batch size).  Calls over the parts of one batch, run one after
 * the other with one scratch, compute them once: the first with fill = 1, the others 0.
 * `scratch` holds aotc_fft_scratch_need bytes for the largest part. */
AOTC_RT_API void aotc_fft_c64_shared(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in,
                                     void* out, void* scratch, int fill);
AOTC_RT_API void aotc_fft_c128_shared(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in,
                                      void* out, void* scratch, int fill);

/* The transforms of aotc_fft_c64 / aotc_fft_c128, each axis's lines split into at most
 * `parts` ranges (at most `threads` when that is known, > 0) of whole blocks of lines run
 * through `parallel_for` (the pool's, or an application's; none: serial), each range with work buffers of its own; every line is
 * transformed as the serial call transforms it, so the bits do not depend on `parts` or
 * on the threads.  `scratch` holds aotc_fft_threads_scratch_need bytes, 64-byte aligned. */
typedef void (*aotc__fft_parallel_for)(void* user, int64_t n, void (*fn)(void* ctx, int64_t begin, int64_t end),
                                       void* ctx); /* aotc_parallel_for_fn (aotc_pool.h) */
AOTC_RT_API size_t aotc_fft_threads_scratch_need(int kind, int64_t batch, int64_t n0, int64_t n1, int64_t n2,
                                                 int64_t parts);
AOTC_RT_API void aotc_fft_c64_threads(aotc__fft_parallel_for parallel_for, void* user, int threads, int64_t parts, int kind,
                                      int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in, void* out,
                                      void* scratch);
AOTC_RT_API void aotc_fft_c128_threads(aotc__fft_parallel_for parallel_for, void* user, int threads, int64_t parts, int kind,
                                       int64_t batch, int64_t n0, int64_t n1, int64_t n2, const void* in, void* out,
                                       void* scratch);

#endif /* AOTC_FFT_H */

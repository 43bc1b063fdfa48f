/* aotc_transpose.h -- a strided 2-D transpose of 32-bit elements, in tiles.
 *
 * A copy kernel whose innermost loop writes one output row while reading a column of its
 * input (a transpose, alone or behind reshapes: attention's head split and merge) reads
 * one element per cache line.  kernel/transpose.py hands such a nest to aotc_tr_f32, which
 * moves 8 x 8 tiles (AVX2: eight row loads, three rounds of shuffles, eight row stores;
 * elsewhere a loop over the tile).  Elements are moved, never computed: the bits of every
 * value, NaN payloads included, are the input's.  No allocation, no state.
 */
#ifndef AOTC_TRANSPOSE_H
#define AOTC_TRANSPOSE_H

#ifndef AOTC_RT_H
#include "aotc_rt.h"
#endif

/* dst[r * ldd + c] = src[c * lds + r] for r < rows, c < cols.  src and dst do not overlap. */
AOTC_RT_API void aotc_tr_f32(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst,
                             int64_t ldd);

#endif /* AOTC_TRANSPOSE_H */

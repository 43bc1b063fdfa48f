/* aotc_winograd.h -- Winograd F(2x2,3x3) and F(4x4,3x3) for stride-1 3x3 f32 convolutions.
 *
 * Declares the weight transform (G g G^T) and the per-block convolution (input
 * transform B^T d B, one GEMM per tile position through aotc_sgemm, output
 * transform A^T m A); the implementation is aotc_winograd.c.  No allocation, no
 * state: the caller passes every buffer.  Each output element's value depends
 * only on the input and weights, not on how the caller blocks the tiles.
 */
#ifndef AOTC_WINOGRAD_H
#define AOTC_WINOGRAD_H

#ifndef AOTC_GEMM_H
#include "aotc_gemm.h"
#endif

/* U[(i*n + j)*C*O + c*O + o] = (G g G^T)[i][j] for the 3x3 kernel g of input feature c and
 * output feature o, n = m + 2 (m: 2 or 4, the output tile).  g[r][s] is
 * w[r*w_r + s*w_s + c*w_i + o*w_o], so any kernel layout is read in place. */
AOTC_RT_API void aotc_wino_weights_f32(int64_t m, int64_t C, int64_t O, const float* w, int64_t w_r, int64_t w_s,
                                       int64_t w_i, int64_t w_o, float* U);

/* Scratch bytes (64-byte aligned) aotc_wino_conv_f32 needs for blocks of at most T tiles. */
AOTC_RT_API size_t aotc_wino_scratch_need(int64_t m, int64_t T, int64_t C, int64_t O);

/* Output rows [tr0*m, min(OH, (tr0 + ntr)*m)) of one image: y[(oh*OW + ow)*O + o] for
 * every output column and feature, where the input pixel (ih, iw, c) is
 * x[ih*x_h + iw*x_w + c*x_c] for 0 <= ih < H, 0 <= iw < W (zero elsewhere) and output
 * (oh, ow) reads input rows oh - pad_h ... oh - pad_h + 2 (columns likewise).  U is
 * aotc_wino_weights_f32's.  At most `ntr` tile rows of ceil(OW / m) tiles each: T in
 * aotc_wino_scratch_need is ntr * ceil(OW / m). */
AOTC_RT_API void aotc_wino_conv_f32(int64_t m, int64_t C, int64_t O, const float* x, int64_t H, int64_t W,
                                    int64_t x_h, int64_t x_w, int64_t x_c, int64_t pad_h, int64_t pad_w,
                                    int64_t OH, int64_t OW, int64_t tr0, int64_t ntr, const float* U, float* y,
                                    void* scratch);

#endif /* AOTC_WINOGRAD_H */

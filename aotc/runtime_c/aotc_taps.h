/* aotc_taps.h -- convolution as one GEMM over the window positions, with no im2col matrix.
 *
 * For stride-1, undilated f32 convolutions with features innermost (NHWC input, HWIO
 * weights): a block of output rows reads its input rows, zero-padded, into a small slice,
 * and the GEMM's micro-kernel reads each window position's features straight from the
 * slice (a tile's rows are pointers into it), so the P x (KH*KW*C) matrix is never
 * written.  The sums run in the order and K blocks of aotc_sgemm on the im2col matrix
 * (aotc_gemm.c): the bits are the im2col GEMM's, on every ISA.  No allocation, no state.
 */
#ifndef AOTC_TAPS_H
#define AOTC_TAPS_H

#ifndef AOTC_GEMM_H
#include "aotc_gemm.h"
#endif

/* Elements of the packed weights: O rounded up to the widest register tile (32 columns,
 * so the size is the same on every ISA) times K = KH * KW * C. */
AOTC_RT_API size_t aotc_taps_packed_elems(int64_t K, int64_t O);

/* Packs w (row-major K x O: window position, input feature; output feature) into bp, in
 * the panels aotc_taps_conv_f32 reads.  bp is 64-byte aligned. */
AOTC_RT_API void aotc_taps_pack_f32(int64_t K, int64_t O, const float* w, float* bp);

/* Scratch bytes (64-byte aligned) of one call of aotc_taps_conv_f32 for `nr` output rows. */
AOTC_RT_API size_t aotc_taps_scratch_need(int64_t C, int64_t KH, int64_t KW, int64_t OW, int64_t nr);

/* Output rows [r0, r0 + nr) of one image: y[((r - r0) * OW + ow) * ldy + o] for every
 * output column ow < OW and feature o < O, as
 *   sum over i < KH, j < KW, c < C of x(r + i - pad_h, ow + j - pad_w, c) * w[((i*KW + j)*C + c)*O + o]
 * where x(ih, iw, c) = x[ih*x_h + iw*x_w + c] for 0 <= ih < H, 0 <= iw < W and 0 outside.
 * bp is aotc_taps_pack_f32's packing of w.  Any C >= 1 gives the im2col GEMM's bits; the
 * compiler takes this path only for C >= 16, where each run keeps the micro-kernel busy. */
AOTC_RT_API void aotc_taps_conv_f32(int64_t C, int64_t O, int64_t KH, int64_t KW, const float* x, int64_t H,
                                    int64_t W, int64_t x_h, int64_t x_w, int64_t pad_h, int64_t pad_w,
                                    int64_t OW, int64_t r0, int64_t nr, const float* bp, float* y, int64_t ldy,
                                    void* scratch);

/* The same convolution, with the same bits, reading a constant weight the compiler stored in
 * aotc_sgemm_pb's layout (aotc_gemm_panels.c: w[k][o] at (o / 32) * K * 32 + k * 32 + o % 32,
 * K = KH * KW * C), so no call packs it.  O is a multiple of 32 (else nothing is written). */
AOTC_RT_API void aotc_taps_conv_pb_f32(int64_t C, int64_t O, int64_t KH, int64_t KW, const float* x, int64_t H,
                                       int64_t W, int64_t x_h, int64_t x_w, int64_t pad_h, int64_t pad_w,
                                       int64_t OW, int64_t r0, int64_t nr, const float* wp, float* y, int64_t ldy,
                                       void* scratch);

#endif /* AOTC_TAPS_H */

/* aotc_taps.c -- stride-1 convolution as one GEMM over the window positions (aotc_taps.h).
 *
 * A block of output rows first copies the input rows it reads into a slice with the
 * zero padding written out: slice row s is input row r0 + s - pad_h, slice column q is
 * input column q - pad_w, each of C features, (OW + KW - 1) columns per row.  Output pixel
 * (r, ow) then reads window position (i, j) at slice row (r - r0 + i), column (ow + j):
 * the features of one window position are contiguous, so the K = KH*KW*C elements of an
 * im2col row are KH*KW runs of C, each at a fixed offset from the pixel's slice address.
 *
 * The weights come packed per call (aotc_taps_pack_f32: panels of NR columns per K block,
 * rows NR apart) or, for a constant weight, stored by the compiler in aotc_sgemm_pb's
 * layout (aotc_gemm_panels.c: panels of 32 columns, K rows deep, rows 32 apart); the
 * micro-kernel reads a tile's NR columns of either with the layout's row stride.
 *
 * The blocking is aotc_sgemm's (aotc_gemm.c): K blocks of AOTC_SGEMM_KC, panels of
 * AOTC_SGEMM_NR columns in blocks of AOTC_SGEMM_NC, tiles of AOTC_SGEMM_MR rows.  Inside a
 * K block the micro-kernel walks the runs (segments) the block covers, in order, with its
 * accumulators kept in registers across them: every output element is the same chain of
 * fused (or, in the portable kernels, the same) multiply-adds as the GEMM's on the im2col
 * matrix, and K blocks are added to the output in the same order, so the bits are the same.
 */
#ifndef AOTC_GEMM_H /* compiled on its own: the GEMM's micro-kernel macros, static like the rest */
#include "aotc_gemm.c"
#endif
#ifndef AOTC_TAPS_H
#include "aotc_taps.h"
#endif

#define AOTC__TAPS_NR_MAX 32 /* the widest f32 register tile of any ISA (aotc_gemm.h) */
#define AOTC__TAPS_PANEL 32  /* aotc_sgemm_pb's panel width (AOTC_GEMM_PANEL, aotc_gemm_panels.c) */
AOTC_STATIC_ASSERT(AOTC__TAPS_PANEL % AOTC_SGEMM_NR == 0, "a stored panel is whole register tiles wide");

#if defined(AOTC__GEMM_VECTOR)
/* row i of the tile reads r<i>[k]: the pixel's slice address plus the segment's offset */
#define AOTC__K_ROWP(i, P) const aotc__taps_elem* r##i = rows[i] + off;
#define AOTC__K_FMA_TAPS(i, P)                \
  {                                           \
    P##_T ai = P##_BCAST(r##i + k);           \
    c##i##_0 = P##_FMA(ai, b0, c##i##_0);     \
    c##i##_1 = P##_FMA(ai, b1, c##i##_1);     \
  }
#define AOTC__DEF_VKERNEL_TAPS(NAME, T, P, MR)                                                  \
  AOTC_INTERNAL void NAME(int64_t nseg, const int64_t* seg_off, const int64_t* seg_len,         \
                          const T* const* rows, const T* AOTC_RESTRICT b, int64_t ldb,          \
                          T* AOTC_RESTRICT c, int64_t ldc, int accumulate) {                    \
    typedef T aotc__taps_elem;                                                                  \
    AOTC__REPN(MR)(AOTC__K_DECL, P)                                                             \
    AOTC__REPN(MR)(AOTC__K_PREFETCH, P)                                                         \
    for (int64_t s = 0; s < nseg; ++s) {                                                        \
      const int64_t off = seg_off[s], len = seg_len[s];                                         \
      AOTC__REPN(MR)(AOTC__K_ROWP, P)                                                           \
      for (int64_t k = 0; k < len; ++k) {                                                       \
        P##_T b0 = P##_LOADU(b);                                                                \
        P##_T b1 = P##_LOADU(b + P##_L);                                                        \
        AOTC__KEEP(b0);                                                                         \
        AOTC__KEEP(b1);                                                                         \
        AOTC__REPN(MR)(AOTC__K_FMA_TAPS, P)                                                     \
        b += ldb;                                                                               \
      }                                                                                         \
    }                                                                                           \
    AOTC__REPN(MR)(AOTC__K_STORE, P)                                                            \
  }
AOTC__DEF_VKERNEL_TAPS(aotc__taps_kernel, float, AOTC__SV, AOTC_SGEMM_MR)
/* short tiles (aotc__tile_rows): the same kernel body for (MR+1)/2 .. MR-1 rows */
AOTC__SHORT_ROWS(AOTC_SGEMM_MR)(AOTC__DEF_SHORT, AOTC__DEF_VKERNEL_TAPS, aotc__taps_kernel, float, AOTC__SV)
#define AOTC__CASE_TAPS(X, NAME, T, P, n)                                 \
  case n:                                                                 \
    NAME##_##n(nseg, seg_off, seg_len, rows, b, ldb, c, ldc, accumulate); \
    return;
/* a tile of mr rows: MR, or a short tile's height */
AOTC_INTERNAL void aotc__taps_kernel_n(int64_t mr, int64_t nseg, const int64_t* seg_off, const int64_t* seg_len,
                                       const float* const* rows, const float* AOTC_RESTRICT b, int64_t ldb,
                                       float* AOTC_RESTRICT c, int64_t ldc, int accumulate) {
  switch (mr) {
    AOTC__SHORT_ROWS(AOTC_SGEMM_MR)(AOTC__CASE_TAPS, _, aotc__taps_kernel, float, _)
    default:
      aotc__taps_kernel(nseg, seg_off, seg_len, rows, b, ldb, c, ldc, accumulate);
  }
}
#else
/* the portable kernels' multiply-add (AOTC__PMAD), as aotc__sgemm_kernel_rows does; a
 * tile of mr <= MR rows (short tiles run the same loop over fewer rows) */
AOTC_INTERNAL void aotc__taps_kernel_n(int64_t mr, int64_t nseg, const int64_t* seg_off, const int64_t* seg_len,
                                       const float* const* rows, const float* AOTC_RESTRICT b, int64_t ldb,
                                       float* AOTC_RESTRICT c, int64_t ldc, int accumulate) {
  float acc[AOTC_SGEMM_MR][AOTC_SGEMM_NR];
  for (int i = 0; i < AOTC_SGEMM_MR; ++i)
    for (int j = 0; j < AOTC_SGEMM_NR; ++j) acc[i][j] = 0;
  for (int64_t s = 0; s < nseg; ++s) {
    for (int64_t k = 0; k < seg_len[s]; ++k) {
      for (int i = 0; i < mr; ++i)
        for (int j = 0; j < AOTC_SGEMM_NR; ++j)
          acc[i][j] = AOTC__PMAD(float, rows[i][seg_off[s] + k], b[j], acc[i][j]);
      b += ldb;
    }
  }
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < AOTC_SGEMM_NR; ++j)
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
}
#endif

AOTC_RT_API size_t aotc_taps_packed_elems(int64_t K, int64_t O) {
  if (K <= 0 || O <= 0) return 0;
  return (size_t)((O + AOTC__TAPS_NR_MAX - 1) / AOTC__TAPS_NR_MAX * AOTC__TAPS_NR_MAX) * (size_t)K;
}

/* Column block jc (AOTC_SGEMM_NC wide, its width rounded up to whole panels: ncr), K block
 * pc: bp + jc*K + ncr*pc, panel jr of it kc x NR at + jr*kc, zero past column O. */
AOTC_RT_API void aotc_taps_pack_f32(int64_t K, int64_t O, const float* w, float* bp) {
  for (int64_t jc = 0; jc < O; jc += AOTC_SGEMM_NC) {
    const int64_t nc = O - jc < AOTC_SGEMM_NC ? O - jc : AOTC_SGEMM_NC;
    const int64_t ncr = (nc + AOTC_SGEMM_NR - 1) / AOTC_SGEMM_NR * AOTC_SGEMM_NR;
    for (int64_t pc = 0; pc < K; pc += AOTC_SGEMM_KC) {
      const int64_t kc = K - pc < AOTC_SGEMM_KC ? K - pc : AOTC_SGEMM_KC;
      float* block = bp + jc * K + ncr * pc;
      for (int64_t jr = 0; jr < ncr; jr += AOTC_SGEMM_NR) {
        /* the panel's columns, then zeros: two plain copies gcc vectorizes */
        const int64_t nrr = nc - jr < AOTC_SGEMM_NR ? nc - jr : AOTC_SGEMM_NR;
        for (int64_t k = 0; k < kc; ++k) {
          float* dst = block + jr * kc + k * AOTC_SGEMM_NR;
          const float* src = w + (pc + k) * O + jc + jr;
          for (int64_t j = 0; j < nrr; ++j) dst[j] = src[j];
          for (int64_t j = nrr; j < AOTC_SGEMM_NR; ++j) dst[j] = 0.0f;
        }
      }
    }
  }
}

AOTC_RT_API size_t aotc_taps_scratch_need(int64_t C, int64_t KH, int64_t KW, int64_t OW, int64_t nr) {
  if (C <= 0 || nr <= 0 || OW <= 0) return 0;
  size_t n = (size_t)(nr + KH - 1) * (size_t)(OW + KW - 1) * (size_t)C * sizeof(float);
  return (n + AOTC_ALIGNMENT - 1) / AOTC_ALIGNMENT * AOTC_ALIGNMENT;
}

/* The convolution of aotc_taps_conv_f32 (stored == 0: bp packed by aotc_taps_pack_f32) and
 * aotc_taps_conv_pb_f32 (stored == 1: bp in aotc_sgemm_pb's panels, O a whole number of them). */
AOTC_INTERNAL void aotc__taps_conv(int64_t C, int64_t O, int64_t KH, int64_t KW, const float* x, int64_t H,
                                   int64_t W, int64_t x_h, int64_t x_w, int64_t pad_h, int64_t pad_w,
                                   int64_t OW, int64_t r0, int64_t nr, const float* bp, int stored, float* y,
                                   int64_t ldy, void* scratch) {
  const int64_t Wp = OW + KW - 1, K = KH * KW * C, P = nr * OW;
  if (P <= 0 || O <= 0 || C <= 0) return;
  float* xp = (float*)AOTC_ASSUME_ALIGNED(scratch, AOTC_ALIGNMENT);
  for (int64_t s = 0; s < nr + KH - 1; ++s) {
    const int64_t ih = r0 + s - pad_h;
    float* dst = xp + s * Wp * C;
    for (int64_t q = 0; q < Wp; ++q) {
      const int64_t iw = q - pad_w;
      if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
        for (int64_t c = 0; c < C; ++c) dst[q * C + c] = 0.0f;
      } else {
        const float* src = x + ih * x_h + iw * x_w;
        for (int64_t c = 0; c < C; ++c) dst[q * C + c] = src[c];
      }
    }
  }
  /* a segment is at least one element, so a K block has at most KC of them */
  int64_t seg_off[AOTC_SGEMM_KC], seg_len[AOTC_SGEMM_KC];
  const float* rows[AOTC_SGEMM_MR];
  AOTC_ALIGNAS(AOTC_ALIGNMENT) float edge[AOTC_SGEMM_MR * AOTC_SGEMM_NR];
  for (int64_t jc = 0; jc < O; jc += AOTC_SGEMM_NC) {
    const int64_t nc = O - jc < AOTC_SGEMM_NC ? O - jc : AOTC_SGEMM_NC;
    const int64_t ncr = (nc + AOTC_SGEMM_NR - 1) / AOTC_SGEMM_NR * AOTC_SGEMM_NR;
    for (int64_t pc = 0; pc < K; pc += AOTC_SGEMM_KC) {
      const int64_t kc = K - pc < AOTC_SGEMM_KC ? K - pc : AOTC_SGEMM_KC;
      const int accumulate = pc > 0;
      const float* block = bp + jc * K + ncr * pc; /* packed: panel jr at block + jr * kc */
      int64_t nseg = 0;
      for (int64_t k = pc; k < pc + kc; ++nseg) { /* window position t, features c0 on */
        const int64_t t = k / C, c0 = k - t * C;
        const int64_t len = C - c0 < pc + kc - k ? C - c0 : pc + kc - k;
        seg_off[nseg] = ((t / KW) * Wp + t % KW) * C + c0;
        seg_len[nseg] = len;
        k += len;
      }
      int64_t mr;
      for (int64_t ir = 0; ir < P; ir += mr) {
        /* whole tiles and short ones (aotc__tile_rows), or, for fewer than (MR+1)/2
         * pixels in all, one whole tile whose rows past the last pixel repeat it */
        mr = aotc__tile_rows(P - ir, AOTC_SGEMM_MR);
        const int64_t kr = mr >= AOTC__SHORT_MIN(AOTC_SGEMM_MR) ? mr : AOTC_SGEMM_MR;
        for (int64_t i = 0; i < kr; ++i) {
          const int64_t p = ir + (i < mr ? i : mr - 1);
          rows[i] = xp + ((p / OW) * Wp + p % OW) * C;
        }
        for (int64_t jr = 0; jr < nc; jr += AOTC_SGEMM_NR) {
          const int64_t nrr = nc - jr < AOTC_SGEMM_NR ? nc - jr : AOTC_SGEMM_NR;
          const int64_t j = jc + jr; /* stored: column j's rows pc.. (aotc__pb_at's formula) */
          const float* bpanel = stored ? bp + j / AOTC__TAPS_PANEL * K * AOTC__TAPS_PANEL +
                                             pc * AOTC__TAPS_PANEL + j % AOTC__TAPS_PANEL
                                       : block + jr * kc;
          const int64_t ldb = stored ? AOTC__TAPS_PANEL : AOTC_SGEMM_NR;
          float* ctile = y + ir * ldy + jc + jr;
          if (kr == mr && nrr == AOTC_SGEMM_NR) {
            aotc__taps_kernel_n(mr, nseg, seg_off, seg_len, rows, bpanel, ldb, ctile, ldy, accumulate);
          } else {
            aotc__taps_kernel_n(kr, nseg, seg_off, seg_len, rows, bpanel, ldb, edge, AOTC_SGEMM_NR, 0);
            for (int64_t i = 0; i < mr; ++i)
              for (int64_t j = 0; j < nrr; ++j)
                ctile[i * ldy + j] = accumulate ? ctile[i * ldy + j] + edge[i * AOTC_SGEMM_NR + j]
                                                : edge[i * AOTC_SGEMM_NR + j];
          }
        }
      }
    }
  }
}

AOTC_RT_API void aotc_taps_conv_f32(int64_t C, int64_t O, int64_t KH, int64_t KW, const float* x, int64_t H,
                                    int64_t W, int64_t x_h, int64_t x_w, int64_t pad_h, int64_t pad_w,
                                    int64_t OW, int64_t r0, int64_t nr, const float* bp, float* y, int64_t ldy,
                                    void* scratch) {
  aotc__taps_conv(C, O, KH, KW, x, H, W, x_h, x_w, pad_h, pad_w, OW, r0, nr, bp, 0, y, ldy, scratch);
}

AOTC_RT_API void aotc_taps_conv_pb_f32(int64_t C, int64_t O, int64_t KH, int64_t KW, const float* x, int64_t H,
                                       int64_t W, int64_t x_h, int64_t x_w, int64_t pad_h, int64_t pad_w,
                                       int64_t OW, int64_t r0, int64_t nr, const float* wp, float* y, int64_t ldy,
                                       void* scratch) {
  if (O % AOTC__TAPS_PANEL != 0) return; /* not a whole number of stored panels: no such weight */
  aotc__taps_conv(C, O, KH, KW, x, H, W, x_h, x_w, pad_h, pad_w, OW, r0, nr, wp, 1, y, ldy, scratch);
}

/* aotc_winograd.c -- Winograd F(2x2,3x3) and F(4x4,3x3) convolution for f32.
 *
 * A block of output tiles runs in three steps: every tile's n x n input patch
 * (n = m + 2, zero outside the image) is transformed to B^T d B, for all input
 * features at once (lanes of AOTC__WINO_LANES features side by side, so the
 * transforms vectorize); then one GEMM per tile position (n*n of them) over the
 * features, V[pos] (tiles x C) times U[pos] (C x O), through aotc_sgemm; then
 * each tile's A^T M A is written to the output.  A tile's value depends only on
 * its own inputs and the GEMM sums in an order fixed by K (aotc_gemm.c), so the
 * bits do not depend on how tiles are grouped into blocks or threads.  The
 * weight transform G g G^T is computed in double and rounded once.
 */
#ifndef AOTC_GEMM_H /* compiled on its own: the GEMM it calls, static like the rest */
#include "aotc_gemm.c"
#endif
#ifndef AOTC_WINOGRAD_H
#include "aotc_winograd.h"
#endif

#define AOTC__WINO_LANES 16

static size_t aotc__wino_align(size_t n) { return (n + 63u) / 64u * 64u; }

/* The 1-D transforms: `cb` lanes, element j of lane k at in[j*is + k], out[j*os + k]. */
static void aotc__wino_bt2(const float* AOTC_RESTRICT in, int64_t is, float* AOTC_RESTRICT out, int64_t os,
                           int64_t cb) {
  for (int64_t k = 0; k < cb; k++) {
    float d0 = in[k], d1 = in[is + k], d2 = in[2 * is + k], d3 = in[3 * is + k];
    out[k] = d0 - d2;
    out[os + k] = d1 + d2;
    out[2 * os + k] = d2 - d1;
    out[3 * os + k] = d1 - d3;
  }
}

static void aotc__wino_bt4(const float* AOTC_RESTRICT in, int64_t is, float* AOTC_RESTRICT out, int64_t os,
                           int64_t cb) {
  for (int64_t k = 0; k < cb; k++) {
    float d0 = in[k], d1 = in[is + k], d2 = in[2 * is + k], d3 = in[3 * is + k], d4 = in[4 * is + k],
          d5 = in[5 * is + k];
    out[k] = (4.0f * d0 - 5.0f * d2) + d4;
    out[os + k] = (d3 + d4) - 4.0f * (d1 + d2);
    out[2 * os + k] = 4.0f * (d1 - d2) + (d4 - d3);
    out[3 * os + k] = 2.0f * (d3 - d1) + (d4 - d2);
    out[4 * os + k] = 2.0f * (d1 - d3) + (d4 - d2);
    out[5 * os + k] = (4.0f * d1 - 5.0f * d3) + d5;
  }
}

static void aotc__wino_at2(const float* AOTC_RESTRICT in, int64_t is, float* AOTC_RESTRICT out, int64_t os,
                           int64_t cb) {
  for (int64_t k = 0; k < cb; k++) {
    float m0 = in[k], m1 = in[is + k], m2 = in[2 * is + k], m3 = in[3 * is + k];
    out[k] = (m0 + m1) + m2;
    out[os + k] = (m1 - m2) - m3;
  }
}

static void aotc__wino_at4(const float* AOTC_RESTRICT in, int64_t is, float* AOTC_RESTRICT out, int64_t os,
                           int64_t cb) {
  for (int64_t k = 0; k < cb; k++) {
    float m0 = in[k], m1 = in[is + k], m2 = in[2 * is + k], m3 = in[3 * is + k], m4 = in[4 * is + k],
          m5 = in[5 * is + k];
    float s12 = m1 + m2, d12 = m1 - m2, s34 = m3 + m4, d34 = m3 - m4;
    out[k] = (m0 + s12) + s34;
    out[os + k] = d12 + 2.0f * d34;
    out[2 * os + k] = s12 + 4.0f * s34;
    out[3 * os + k] = (d12 + 8.0f * d34) + m5;
  }
}

/* G v over `cb` lanes: 3 values at in[r*is + k] into n values at out[i*os + k], in double. */
static void aotc__wino_g2(const double* AOTC_RESTRICT in, int64_t is, double* AOTC_RESTRICT out, int64_t os,
                          int64_t cb) {
  for (int64_t k = 0; k < cb; k++) {
    double v0 = in[k], v1 = in[is + k], v2 = in[2 * is + k];
    out[k] = v0;
    out[os + k] = ((v0 + v1) + v2) * 0.5;
    out[2 * os + k] = ((v0 - v1) + v2) * 0.5;
    out[3 * os + k] = v2;
  }
}

static void aotc__wino_g4(const double* AOTC_RESTRICT in, int64_t is, double* AOTC_RESTRICT out, int64_t os,
                          int64_t cb) {
  for (int64_t k = 0; k < cb; k++) {
    double v0 = in[k], v1 = in[is + k], v2 = in[2 * is + k];
    out[k] = v0 * 0.25;
    out[os + k] = ((v0 + v1) + v2) * (-1.0 / 6.0);
    out[2 * os + k] = ((v0 - v1) + v2) * (-1.0 / 6.0);
    out[3 * os + k] = (v0 * (1.0 / 24.0) + v1 * (1.0 / 12.0)) + v2 * (1.0 / 6.0);
    out[4 * os + k] = (v0 * (1.0 / 24.0) - v1 * (1.0 / 12.0)) + v2 * (1.0 / 6.0);
    out[5 * os + k] = v2;
  }
}

/* Whole tiles of AOTC__WINO_LANES lanes, element (i, j) of lane k at [(i*N + j)*L + k], every
 * stride a constant: G g G^T (3x3 -> NxN, double), B^T d B (NxN), A^T m A (NxN -> MxM). */
#define AOTC__WINO_TILES(M, N)                                                                   \
  static void aotc__wino_wtile##M(const double* AOTC_RESTRICT g, double* AOTC_RESTRICT u) {      \
    const int64_t L = AOTC__WINO_LANES;                                                          \
    double t[N * 3 * AOTC__WINO_LANES];                                                          \
    for (int64_t s = 0; s < 3; s++) aotc__wino_g##M(g + s * L, 3 * L, t + s * L, 3 * L, L);      \
    for (int64_t i = 0; i < N; i++) aotc__wino_g##M(t + i * 3 * L, L, u + i * N * L, L, L);      \
  }                                                                                              \
  static void aotc__wino_itile##M(const float* AOTC_RESTRICT d, float* AOTC_RESTRICT e) {        \
    const int64_t L = AOTC__WINO_LANES;                                                          \
    float t[N * N * AOTC__WINO_LANES];                                                           \
    for (int64_t s = 0; s < N; s++) aotc__wino_bt##M(d + s * L, N * L, t + s * L, N * L, L);     \
    for (int64_t i = 0; i < N; i++) aotc__wino_bt##M(t + i * N * L, L, e + i * N * L, L, L);     \
  }                                                                                              \
  static void aotc__wino_otile##M(const float* AOTC_RESTRICT mm, float* AOTC_RESTRICT r) {       \
    const int64_t L = AOTC__WINO_LANES;                                                          \
    float t[M * N * AOTC__WINO_LANES];                                                           \
    for (int64_t j = 0; j < N; j++) aotc__wino_at##M(mm + j * L, N * L, t + j * L, N * L, L);    \
    for (int64_t a = 0; a < M; a++) aotc__wino_at##M(t + a * N * L, L, r + a * M * L, L, L);     \
  }
AOTC__WINO_TILES(2, 4)
AOTC__WINO_TILES(4, 6)

AOTC_RT_API void aotc_wino_weights_f32(int64_t m, int64_t C, int64_t O, const float* w, int64_t w_r, int64_t w_s,
                                       int64_t w_i, int64_t w_o, float* U) {
  const int64_t n = m + 2, L = AOTC__WINO_LANES;
  double g[9 * AOTC__WINO_LANES], u[36 * AOTC__WINO_LANES];
  for (int64_t c = 0; c < C; c++) {
    for (int64_t o0 = 0; o0 < O; o0 += L) {
      const int64_t ob = O - o0 < L ? O - o0 : L;
      for (int64_t r = 0; r < 3; r++) {
        for (int64_t s = 0; s < 3; s++) {
          const float* src = w + r * w_r + s * w_s + c * w_i + o0 * w_o;
          double* dst = g + (r * 3 + s) * L;
          for (int64_t k = 0; k < ob; k++) dst[k] = src[k * w_o];
          for (int64_t k = ob; k < L; k++) dst[k] = 0.0;
        }
      }
      if (m == 2)
        aotc__wino_wtile2(g, u);
      else
        aotc__wino_wtile4(g, u);
      for (int64_t p = 0; p < n * n; p++) {
        float* dst = U + p * C * O + c * O + o0;
        for (int64_t k = 0; k < ob; k++) dst[k] = (float)u[p * L + k];
      }
    }
  }
}

AOTC_RT_API size_t aotc_wino_scratch_need(int64_t m, int64_t T, int64_t C, int64_t O) {
  size_t nn = (size_t)((m + 2) * (m + 2));
  return aotc__wino_align(nn * (size_t)(T * C) * sizeof(float)) +
         aotc__wino_align(nn * (size_t)(T * O) * sizeof(float)) + aotc_sgemm_scratch_need(T, O, C);
}

AOTC_RT_API void aotc_wino_conv_f32(int64_t m, int64_t C, int64_t O, const float* x, int64_t H, int64_t W,
                                    int64_t x_h, int64_t x_w, int64_t x_c, int64_t pad_h, int64_t pad_w,
                                    int64_t OH, int64_t OW, int64_t tr0, int64_t ntr, const float* U, float* y,
                                    void* scratch) {
  const int64_t n = m + 2, nn = n * n, L = AOTC__WINO_LANES;
  const int64_t tw = (OW + m - 1) / m, th = (OH + m - 1) / m;
  if (tr0 + ntr > th) ntr = th - tr0;
  if (ntr <= 0) return;
  const int64_t T = ntr * tw;
  float* V = (float*)scratch;
  float* M = (float*)((char*)scratch + aotc__wino_align((size_t)(nn * T * C) * sizeof(float)));
  void* gs = (char*)M + aotc__wino_align((size_t)(nn * T * O) * sizeof(float));
  float d[36 * AOTC__WINO_LANES], e[36 * AOTC__WINO_LANES];
  /* input transform: V[pos][tile][c] */
  for (int64_t tt = 0; tt < T; tt++) {
    const int64_t ih0 = (tr0 + tt / tw) * m - pad_h, iw0 = (tt % tw) * m - pad_w;
    for (int64_t c0 = 0; c0 < C; c0 += L) {
      const int64_t cb = C - c0 < L ? C - c0 : L;
      for (int64_t r = 0; r < n; r++) {
        for (int64_t s = 0; s < n; s++) {
          float* dst = d + (r * n + s) * L;
          const int64_t ih = ih0 + r, iw = iw0 + s;
          int64_t k = 0;
          if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
            const float* src = x + ih * x_h + iw * x_w + c0 * x_c;
            if (x_c == 1) {
              for (; k < cb; k++) dst[k] = src[k];
            } else {
              for (; k < cb; k++) dst[k] = src[k * x_c];
            }
          }
          for (; k < L; k++) dst[k] = 0.0f;
        }
      }
      if (m == 2)
        aotc__wino_itile2(d, e);
      else
        aotc__wino_itile4(d, e);
      for (int64_t p = 0; p < nn; p++) {
        float* dst = V + p * T * C + tt * C + c0;
        for (int64_t k = 0; k < cb; k++) dst[k] = e[p * L + k];
      }
    }
  }
  /* one GEMM per tile position */
  for (int64_t p = 0; p < nn; p++)
    aotc_sgemm(T, O, C, V + p * T * C, C, 1, U + p * C * O, O, 1, M + p * T * O, O, gs);
  /* output transform */
  for (int64_t tt = 0; tt < T; tt++) {
    const int64_t oh0 = (tr0 + tt / tw) * m, ow0 = (tt % tw) * m;
    for (int64_t o0 = 0; o0 < O; o0 += L) {
      const int64_t ob = O - o0 < L ? O - o0 : L;
      for (int64_t p = 0; p < nn; p++) {
        const float* src = M + p * T * O + tt * O + o0;
        float* dst = d + p * L;
        int64_t k = 0;
        for (; k < ob; k++) dst[k] = src[k];
        for (; k < L; k++) dst[k] = 0.0f;
      }
      if (m == 2)
        aotc__wino_otile2(d, e);
      else
        aotc__wino_otile4(d, e);
      for (int64_t a = 0; a < m && oh0 + a < OH; a++) {
        for (int64_t b = 0; b < m && ow0 + b < OW; b++) {
          float* dst = y + ((oh0 + a) * OW + ow0 + b) * O + o0;
          const float* src = e + (a * m + b) * L;
          for (int64_t k = 0; k < ob; k++) dst[k] = src[k];
        }
      }
    }
  }
}

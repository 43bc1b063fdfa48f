/* Standalone check of aotc_lowp.c, compiled after the concatenated runtime text
 * (see test_lowp.py): s8 GEMMs bit-exact against a wrapping reference, bf16
 * GEMMs within f32 rounding of a double reference, and every column-range cut
 * bit-identical to the whole product, for strided and transposed operands.
 * Runs on each path: vdpbf16ps / vpdpbusd, NEON sdot (under qemu), portable.
 * Prints "ok" or one line per failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t seed = 12345u;
static uint32_t next(void) {
  seed = seed * 1103515245u + 12345u;
  return seed >> 8;
}

/* a pool stand-in: the ranges one at a time, last first */
static void serial_for(void* user, int64_t n, void (*fn)(void*, int64_t, int64_t), void* ctx) {
  (void)user;
  for (int64_t p = n - 1; p >= 0; --p) fn(ctx, p, p + 1);
}

static void* scratch_of(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64); }

static int check_s8(int64_t M, int64_t N, int64_t K, int trans_a, int trans_b, int fill) {
  int8_t* A = malloc((size_t)(M * K));
  int8_t* B = malloc((size_t)(K * N));
  int32_t* C = malloc((size_t)(M * N) * 4);
  int32_t* D = malloc((size_t)(M * N) * 4);
  for (int64_t i = 0; i < M * K; ++i) A[i] = fill ? (int8_t)-128 : (int8_t)(next() & 0xFF);
  for (int64_t i = 0; i < K * N; ++i) B[i] = fill ? (int8_t)-128 : (int8_t)(next() & 0xFF);
  int64_t a_rs = trans_a ? 1 : K, a_cs = trans_a ? M : 1, b_rs = trans_b ? 1 : N, b_cs = trans_b ? K : 1;
  void* s = scratch_of(aotc_lp_igemm_scratch_need(M, N, K));
  aotc_lp_igemm(NULL, NULL, 0, 1, 0, M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, N, s);
  aotc_lp_igemm(serial_for, NULL, 0, 4, 0, M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, D, N, s);
  int bad = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      uint32_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (uint32_t)((int32_t)A[i * a_rs + k * a_cs] * (int32_t)B[k * b_rs + j * b_cs]);
      uint32_t c, d;
      memcpy(&c, C + i * N + j, 4);
      memcpy(&d, D + i * N + j, 4);
      bad += c != acc || d != acc;
    }
  if (bad) printf("s8 %lldx%lldx%lld ta=%d tb=%d: %d wrong\n", (long long)M, (long long)N, (long long)K, trans_a, trans_b, bad);
  free(A); free(B); free(C); free(D); free(s);
  return bad;
}

static float bf(uint16_t h) { return aotc_bf16_to_f32(h); }

static int check_bf16(int64_t M, int64_t N, int64_t K, int trans_a, int trans_b) {
  uint16_t* A = malloc((size_t)(M * K) * 2);
  uint16_t* B = malloc((size_t)(K * N) * 2);
  float* C = malloc((size_t)(M * N) * 4);
  float* D = malloc((size_t)(M * N) * 4);
  for (int64_t i = 0; i < M * K; ++i) A[i] = aotc_f32_to_bf16((float)((int)(next() % 2001) - 1000) / 300.0f);
  for (int64_t i = 0; i < K * N; ++i) B[i] = aotc_f32_to_bf16((float)((int)(next() % 2001) - 1000) / 300.0f);
  int64_t a_rs = trans_a ? 1 : K, a_cs = trans_a ? M : 1, b_rs = trans_b ? 1 : N, b_cs = trans_b ? K : 1;
  int64_t parts = 4;
  size_t part = aotc_sgemm_scratch_need(M, N, K);
  void* s = scratch_of(aotc_lp_bgemm_scratch_need(M, N, K, parts, part));
  aotc_lp_bgemm(NULL, NULL, 0, 1, part, M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, C, N, s);
  aotc_lp_bgemm(serial_for, NULL, 0, parts, part, M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, D, N, s);
  int bad = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        double p = (double)bf(A[i * a_rs + k * a_cs]) * (double)bf(B[k * b_rs + j * b_cs]);
        ref += p;
        mag += fabs(p);
      }
      double c = C[i * N + j];
      bad += fabs(c - ref) > 1e-6 * mag * (double)(K + 1) || memcmp(C + i * N + j, D + i * N + j, 4) != 0;
    }
  if (bad) printf("bf16 %lldx%lldx%lld ta=%d tb=%d: %d wrong\n", (long long)M, (long long)N, (long long)K, trans_a, trans_b, bad);
  free(A); free(B); free(C); free(D); free(s);
  return bad;
}

int main(void) {
  int bad = 0;
  bad += check_s8(255, 513, 129, 0, 0, 0);
  bad += check_s8(37, 70, 1027, 1, 1, 0);
  bad += check_s8(12, 32, 4, 0, 1, 0);
  bad += check_s8(1, 1, 1, 0, 0, 0);
  bad += check_s8(2, 3, 140000, 0, 0, 1); /* the s32 sum wraps */
  bad += check_s8(6, 16, 2, 0, 0, 0);     /* one whole tile of the s16-pair path */
  bad += check_s8(30, 48, 1025, 1, 0, 1); /* whole tiles, three K blocks of pairs, all -128 */
  bad += check_bf16(255, 513, 129, 0, 0);
  bad += check_bf16(37, 70, 1027, 1, 1);
  bad += check_bf16(12, 32, 3, 0, 1);
  bad += check_bf16(1, 1, 1, 0, 0);
  if (!bad) printf("ok\n");
  return bad != 0;
}

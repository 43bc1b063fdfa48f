/* Standalone check of the runtime's GEMM, thread pool and FP environment,
 * compiled after the concatenated runtime text (see test_gemm.py and
 * test_warnings.py).  Used where cffi cannot go: cross builds run under qemu
 * (the NEON kernels) and sanitizer builds.  Prints one line per failure and
 * exits non-zero if any check fails; prints "ok ..." otherwise. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static double rnd(void) { /* xorshift64*, uniform in [-1, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545F4914F6CDD1Du) >> 11) / 4503599627370496.0 - 1.0;
}
static int64_t irnd(int64_t n) { return (int64_t)((rnd() + 1.0) * 0.5 * (double)n) % n; }

static int failures = 0;

/* One GEMM case with strides chosen by `layout`:
 * 0 row-major, 1 A transposed, 2 B transposed, 3 both, 4 padded rows,
 * 5 column broadcast (stride 0) and reversed rows (negative stride). */
#define CHECK_GEMM(NAME, T, FN, EPS)                                                        \
  static void NAME(int64_t M, int64_t N, int64_t K, int layout, void* scratch) {            \
    int64_t a_rs = K, a_cs = 1, b_rs = N, b_cs = 1, a_off = 0, b_off = 0;                   \
    size_t a_len = (size_t)(M * K + 1), b_len = (size_t)(K * N + 1);                        \
    if (layout == 1 || layout == 3) { a_rs = 1; a_cs = M; }                                 \
    if (layout == 2 || layout == 3) { b_rs = 1; b_cs = K; }                                 \
    if (layout == 4) {                                                                      \
      a_rs = K + 3; b_rs = N + 5;                                                           \
      a_len = (size_t)(M * (K + 3) + 1); b_len = (size_t)(K * (N + 5) + 1);                 \
    }                                                                                       \
    if (layout == 5) {                                                                      \
      a_rs = -K; a_off = M > 0 ? (M - 1) * K : 0; b_cs = 0; b_rs = 1; b_len = (size_t)K + 1u;           \
    }                                                                                       \
    const int64_t ldc = N + 2;                                                              \
    T* a = (T*)malloc(a_len * sizeof(T));                                                   \
    T* b = (T*)malloc(b_len * sizeof(T));                                                   \
    T* c = (T*)malloc((size_t)(M * ldc + 1) * sizeof(T));                                   \
    if (!a || !b || !c) { printf("alloc failed\n"); exit(2); }                              \
    for (size_t i = 0; i < a_len; ++i) a[i] = (T)rnd();                                     \
    for (size_t i = 0; i < b_len; ++i) b[i] = (T)rnd();                                     \
    for (int64_t i = 0; i < M * ldc + 1; ++i) c[i] = (T)NAN;                                \
    const T* A = a + a_off;                                                                 \
    const T* B = b + b_off;                                                                 \
    FN(M, N, K, A, a_rs, a_cs, B, b_rs, b_cs, c, ldc, scratch);                             \
    double worst = 0.0;                                                                     \
    for (int64_t m = 0; m < M; ++m) {                                                       \
      for (int64_t n = 0; n < N; ++n) {                                                     \
        double ref = 0.0, mag = 0.0;                                                        \
        for (int64_t k = 0; k < K; ++k) {                                                   \
          double p = (double)A[m * a_rs + k * a_cs] * (double)B[k * b_rs + n * b_cs];       \
          ref += p;                                                                         \
          mag += fabs(p);                                                                   \
        }                                                                                   \
        double got = (double)c[m * ldc + n];                                                \
        double tol = 3.0 * (double)(K + 1) * (EPS) * mag + 1e-300;                          \
        if (!(fabs(got - ref) <= tol)) {                                                    \
          if (failures < 20)                                                                \
            printf(#FN " M=%lld N=%lld K=%lld layout=%d: C[%lld,%lld] = %g, expected %g\n", \
                   (long long)M, (long long)N, (long long)K, layout, (long long)m,          \
                   (long long)n, got, ref);                                                 \
          ++failures;                                                                       \
          m = M;                                                                            \
          break;                                                                            \
        }                                                                                   \
        worst = fmax(worst, fabs(got - ref));                                               \
      }                                                                                     \
      for (int64_t n = N; n < ldc && m < M; ++n)                                            \
        if (!isnan((double)c[m * ldc + n])) {                                               \
          printf(#FN " wrote outside the C tile (layout %d)\n", layout);                    \
          ++failures;                                                                       \
          break;                                                                            \
        }                                                                                   \
    }                                                                                       \
    free(a);                                                                                \
    free(b);                                                                                \
    free(c);                                                                                \
  }
CHECK_GEMM(check_sgemm, float, aotc_sgemm, 5.96e-8)
CHECK_GEMM(check_dgemm, double, aotc_dgemm, 1.12e-16)

/* ---- B in panels: the bits of aotc_sgemm on the row-major B, whole and in slices ---- */
static void check_sgemm_pb(int64_t M, int64_t N, int64_t K, void* scratch) {
  float* a = (float*)malloc((size_t)(M * K) * sizeof(float));
  float* b = (float*)malloc((size_t)(K * N) * sizeof(float));
  float* bp = (float*)malloc((size_t)(K * N) * sizeof(float));
  float* want = (float*)malloc((size_t)(M * N) * sizeof(float));
  float* got = (float*)malloc((size_t)(M * N) * sizeof(float));
  for (int64_t i = 0; i < M * K; ++i) a[i] = (float)rnd();
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      b[k * N + n] = (float)rnd();
      bp[(n / AOTC_GEMM_PANEL) * K * AOTC_GEMM_PANEL + k * AOTC_GEMM_PANEL + n % AOTC_GEMM_PANEL] = b[k * N + n];
    }
  aotc_sgemm(M, N, K, a, K, 1, b, N, 1, want, N, scratch);
  for (int parts = 1; parts <= 3; ++parts) {
    for (int64_t i = 0; i < M * N; ++i) got[i] = NAN;
    for (int p = 0; p < parts; ++p) aotc_sgemm_pb_part(p, parts, M, N, K, a, K, bp, got, N, scratch);
    if (memcmp(got, want, (size_t)(M * N) * sizeof(float)) != 0) {
      printf("aotc_sgemm_pb M=%lld N=%lld K=%lld parts=%d: other bits than aotc_sgemm\n", (long long)M,
             (long long)N, (long long)K, parts);
      ++failures;
    }
  }
  free(a);
  free(b);
  free(bp);
  free(want);
  free(got);
}

/* ---- pool ---- */
typedef struct {
  _Atomic int32_t* counts;
  int64_t n;
} visit_ctx;
static void visit(void* p, int64_t begin, int64_t end) {
  visit_ctx* c = (visit_ctx*)p;
  for (int64_t i = begin; i < end; ++i) atomic_fetch_add(&c->counts[i], 1);
}
static void check_pool(int threads, int64_t n) {
  aotc_pool* pool = aotc_pool_create(threads);
  visit_ctx c;
  c.counts = (_Atomic int32_t*)calloc((size_t)n + 1u, sizeof(_Atomic int32_t));
  c.n = n;
  for (int r = 0; r < 3; ++r) aotc_parallel_for(pool, n, visit, &c);
  for (int64_t i = 0; i < n; ++i)
    if (atomic_load(&c.counts[i]) != 3) {
      printf("pool threads=%d n=%lld: index %lld visited %d times\n", threads, (long long)n,
             (long long)i, (int)atomic_load(&c.counts[i]));
      ++failures;
      break;
    }
  free((void*)c.counts);
  aotc_pool_destroy(pool);
}

/* ---- floating-point environment ---- */
static void check_fpenv(void) {
  /* results go through memory: register arithmetic may legally be moved
   * across the switch, stores may not */
  volatile float tiny = 1e-45f, flushed, kept;
  aotc_fpenv env;
  aotc_fpenv_enter(&env);
  flushed = tiny + tiny;
  aotc_fpenv_leave(&env);
  kept = tiny + tiny;
#if defined(__x86_64__) || defined(__aarch64__) || (defined(__arm__) && defined(__ARM_FP))
  if (flushed != 0.0f) {
    printf("fpenv: 1e-45 + 1e-45 = %g under FTZ\n", (double)flushed);
    ++failures;
  }
#else
  (void)flushed;
#endif
  if (kept == 0.0f) {
    printf("fpenv: not restored\n");
    ++failures;
  }
}

int main(int argc, char** argv) {
  int cases = argc > 1 ? atoi(argv[1]) : 40;
  void* scratch = AOTC_ALIGNED_ALLOC(AOTC_ALIGNMENT, AOTC_GEMM_SCRATCH_BYTES);
  if (!scratch) return 2;
  if (aotc_gemm_scratch_bytes() != AOTC_GEMM_SCRATCH_BYTES) {
    printf("scratch size mismatch\n");
    ++failures;
  }
  static const int64_t fixed[][3] = {
      {0, 3, 3}, {3, 0, 3}, {3, 3, 0}, {1, 1, 1}, {1, 1, 300},
      {AOTC_SGEMM_MR, AOTC_SGEMM_NR, 7}, {AOTC_SGEMM_MR + 1, AOTC_SGEMM_NR + 1, 9},
      {AOTC_DGEMM_MR - 1, AOTC_DGEMM_NR - 1, 257}, {AOTC_SGEMM_MC + 3, 20, 5},
      {2, AOTC_SGEMM_NC + 3, 4}, {2, AOTC_DGEMM_NC + 3, 4}, {30, 30, 2 * AOTC_SGEMM_KC + 1},
      {1, 37, 50}, {37, 1, 50}, {1, 2500, 9}, {2500, 1, 9}, {1, 33, 1000}, {33, 1, 1000}};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i)
    for (int layout = 0; layout < 6; ++layout) {
      check_sgemm(fixed[i][0], fixed[i][1], fixed[i][2], layout, scratch);
      check_dgemm(fixed[i][0], fixed[i][1], fixed[i][2], layout, scratch);
    }
  for (int i = 0; i < cases; ++i) {
    int64_t M = 1 + irnd(70), N = 1 + irnd(90), K = 1 + irnd(300);
    check_sgemm(M, N, K, (int)irnd(6), scratch);
    check_dgemm(M, N, K, (int)irnd(6), scratch);
  }
  static const int64_t pb[][3] = {{1, 96, 300}, {2, 32, 5}, {3, 64, 700}, {AOTC_SGEMM_MR + 1, 96, 33},
                                  {2 * AOTC_SGEMM_MC + 5, 160, 2 * AOTC_SGEMM_KC + 3}, {70, 32, 1}};
  for (size_t i = 0; i < sizeof pb / sizeof pb[0]; ++i) check_sgemm_pb(pb[i][0], pb[i][1], pb[i][2], scratch);
  AOTC_ALIGNED_FREE(scratch);
  static const int64_t pool_n[] = {0, 1, 2, 3, 7, 64, 1000};
  for (int threads = 1; threads <= 4; ++threads)
    for (size_t i = 0; i < sizeof pool_n / sizeof pool_n[0]; ++i) check_pool(threads, pool_n[i]);
  check_fpenv();
  if (failures) {
    printf("%d failures (%s)\n", failures, AOTC_SIMD_NAME);
    return 1;
  }
  printf("ok %s\n", AOTC_SIMD_NAME);
  return 0;
}

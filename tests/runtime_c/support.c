/* Test-only C helpers compiled after the runtime into the cffi test module
 * (see conftest.py): work that must happen on the C side -- loops under a
 * changed floating-point environment, thread-pool callbacks, bulk conversion
 * of arrays. */
#include <stdatomic.h>
#include <stdlib.h>

const char* t_simd_name(void) { return AOTC_SIMD_NAME; }

/* ---- floating-point environment ---------------------------------------- */
/* Each runs a loop between aotc_fpenv_enter and aotc_fpenv_leave; the
 * operands come from memory so nothing is folded at compile time. */
#define T_FTZ_LOOP(NAME, TIN, TOUT, EXPR)                            \
  void NAME(const TIN* x, TOUT* y, int64_t n) {                      \
    aotc_fpenv env;                                                  \
    aotc_fpenv_enter(&env);                                          \
    for (int64_t i = 0; i < n; ++i) y[i] = (EXPR);                   \
    aotc_fpenv_leave(&env);                                          \
  }
T_FTZ_LOOP(t_ftz_add_self_f32, float, float, x[i] + x[i])
T_FTZ_LOOP(t_ftz_gt0_f32, float, uint8_t, (uint8_t)(x[i] > 0.0f))
T_FTZ_LOOP(t_ftz_sqrt_f32, float, float, aotc_sqrt_f32(x[i]))
T_FTZ_LOOP(t_ftz_exp_f32, float, float, aotc_exp_f32(x[i]))
T_FTZ_LOOP(t_ftz_logistic_f32, float, float, aotc_logistic_f32(x[i]))
T_FTZ_LOOP(t_ftz_tanh_f32, float, float, aotc_tanh_f32(x[i]))
T_FTZ_LOOP(t_ftz_log_f32, float, float, aotc_log_f32(x[i]))
T_FTZ_LOOP(t_ftz_erf_f32, float, float, aotc_erf_f32(x[i]))
T_FTZ_LOOP(t_ftz_expm1_f32, float, float, aotc_expm1_f32(x[i]))
T_FTZ_LOOP(t_ftz_log1p_f32, float, float, aotc_log1p_f32(x[i]))
T_FTZ_LOOP(t_ftz_f32_to_bf16, float, uint16_t, aotc_f32_to_bf16(x[i]))
T_FTZ_LOOP(t_ftz_f32_to_f16, float, uint16_t, aotc_f32_to_f16(x[i]))
T_FTZ_LOOP(t_ftz_round_bf16, float, float, aotc_round_bf16(x[i]))
T_FTZ_LOOP(t_ftz_round_f16, float, float, aotc_round_f16(x[i]))
T_FTZ_LOOP(t_ftz_f64_to_bf16, double, uint16_t, aotc_f64_to_bf16(x[i]))
T_FTZ_LOOP(t_ftz_f64_to_f16, double, uint16_t, aotc_f64_to_f16(x[i]))
T_FTZ_LOOP(t_ftz_cvt_f32_f64, float, double, aotc_cvt_f32_f64(x[i]))
T_FTZ_LOOP(t_ftz_cvt_f32_pred, float, uint8_t, aotc_cvt_f32_pred(x[i]))

/* 1 if the environment is restored by aotc_fpenv_leave (checked through a
 * subnormal sum computed after leaving) */
int t_fpenv_restored(const float* tiny) {
  aotc_fpenv env;
  aotc_fpenv_enter(&env);
  aotc_fpenv_leave(&env);
  return tiny[0] + tiny[0] != 0.0f;
}

/* ---- bulk conversions ----------------------------------------------------- */
#define T_MAP(NAME, TIN, TOUT, FN) \
  void NAME(const TIN* x, TOUT* y, int64_t n) { for (int64_t i = 0; i < n; ++i) y[i] = FN(x[i]); }
T_MAP(t_map_f32_to_bf16, float, uint16_t, aotc_f32_to_bf16)
T_MAP(t_map_f32_to_f16, float, uint16_t, aotc_f32_to_f16)
T_MAP(t_map_bf16_to_f32, uint16_t, float, aotc_bf16_to_f32)
T_MAP(t_map_f16_to_f32, uint16_t, float, aotc_f16_to_f32)
T_MAP(t_map_round_bf16, float, float, aotc_round_bf16)
T_MAP(t_map_round_f16, float, float, aotc_round_f16)
T_MAP(t_map_f64_to_bf16, double, uint16_t, aotc_f64_to_bf16)
T_MAP(t_map_f64_to_f16, double, uint16_t, aotc_f64_to_f16)
T_MAP(t_map_f64_to_bf16_exact, double, uint16_t, aotc_f64_to_bf16_exact)
T_MAP(t_map_f64_to_f16_exact, double, uint16_t, aotc_f64_to_f16_exact)

/* ---- thread pool ----------------------------------------------------------- */
typedef struct {
  _Atomic int32_t* counts;
  int64_t n;
  atomic_int_fast64_t calls;
  atomic_int bad_range;
} t_visit_ctx;

static void t_visit(void* p, int64_t begin, int64_t end) {
  t_visit_ctx* c = (t_visit_ctx*)p;
  atomic_fetch_add(&c->calls, 1);
  if (begin < 0 || end > c->n || begin >= end) {
    atomic_store(&c->bad_range, 1);
    return;
  }
  for (int64_t i = begin; i < end; ++i) atomic_fetch_add(&c->counts[i], 1);
}

/* Runs parallel_for(n) `reps` times on a pool of `threads` (via the plug-in
 * signature when `via_fn`), adds the visit counts into counts[0..n), returns
 * the number of fn calls, or -1 on an invalid range, -2 on allocation
 * failure. */
int64_t t_pool_visit(int threads, int64_t n, int reps, int via_fn, int32_t* counts) {
  aotc_pool* pool = aotc_pool_create(threads);
  if (threads > 1 && !pool) return -2;
  t_visit_ctx c;
  c.counts = (_Atomic int32_t*)calloc(n > 0 ? (size_t)n : 1u, sizeof(_Atomic int32_t));
  if (!c.counts) return -2;
  c.n = n;
  atomic_init(&c.calls, 0);
  atomic_init(&c.bad_range, 0);
  aotc_parallel_for_fn pf = aotc_pool_parallel_for_fn;
  for (int r = 0; r < reps; ++r) {
    if (via_fn)
      pf(pool, n, t_visit, &c);
    else
      aotc_parallel_for(pool, n, t_visit, &c);
  }
  for (int64_t i = 0; i < n; ++i) counts[i] = atomic_load(&c.counts[i]);
  free((void*)c.counts);
  aotc_pool_destroy(pool);
  return atomic_load(&c.bad_range) ? -1 : (int64_t)atomic_load(&c.calls);
}

/* parallel_for from inside a parallel_for body must not deadlock: the inner
 * loop runs serially.  Returns the total of inner visits (n_outer * n_inner). */
typedef struct {
  aotc_pool* pool;
  int64_t n_inner;
  atomic_int_fast64_t visits;
} t_nested_ctx;

static void t_nested_inner(void* p, int64_t begin, int64_t end) {
  t_nested_ctx* c = (t_nested_ctx*)p;
  atomic_fetch_add(&c->visits, end - begin);
}
static void t_nested_outer(void* p, int64_t begin, int64_t end) {
  t_nested_ctx* c = (t_nested_ctx*)p;
  for (int64_t i = begin; i < end; ++i) aotc_parallel_for(c->pool, c->n_inner, t_nested_inner, c);
}
int64_t t_pool_nested(int threads, int64_t n_outer, int64_t n_inner) {
  t_nested_ctx c;
  c.pool = aotc_pool_create(threads);
  c.n_inner = n_inner;
  atomic_init(&c.visits, 0);
  aotc_parallel_for(c.pool, n_outer, t_nested_outer, &c);
  aotc_pool_destroy(c.pool);
  return (int64_t)atomic_load(&c.visits);
}

/* Workers run with the caller's floating-point environment: with FTZ on in
 * the caller, x + x for a subnormal x is 0 on every thread.  Returns the
 * number of nonzero results (0 expected). */
typedef struct {
  const float* x;
  float* y;
} t_ftz_ctx;
static void t_ftz_body(void* p, int64_t begin, int64_t end) {
  t_ftz_ctx* c = (t_ftz_ctx*)p;
  for (int64_t i = begin; i < end; ++i) c->y[i] = c->x[i] + c->x[i];
}
int64_t t_pool_ftz(int threads, const float* x, float* y, int64_t n) {
  aotc_pool* pool = aotc_pool_create(threads);
  t_ftz_ctx c = {x, y};
  aotc_fpenv env;
  aotc_fpenv_enter(&env);
  aotc_parallel_for(pool, n, t_ftz_body, &c);
  aotc_fpenv_leave(&env);
  aotc_pool_destroy(pool);
  int64_t nonzero = 0;
  for (int64_t i = 0; i < n; ++i) nonzero += y[i] != 0.0f;
  return nonzero;
}

/* Creates and destroys pools repeatedly (thread start/stop races). */
int t_pool_churn(int threads, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    aotc_pool* pool = aotc_pool_create(threads);
    if (!pool) return -1;
    if (aotc_pool_threads(pool) != threads) return -2;
    aotc_pool_destroy(pool);
  }
  return 0;
}

/* aotc_wino_weights_f32 of an HWIO 3x3 weight (C in, O out) under the kernels'
 * floating-point environment (flush to zero, denormals as zero), as a kernel calls it. */
void t_wino_weights(int64_t m, int64_t C, int64_t O, const float* w, float* U) {
  aotc_fpenv env;
  aotc_fpenv_enter(&env);
  aotc_wino_weights_f32(m, C, O, w, 3 * C * O, C * O, O, 1, U);
  aotc_fpenv_leave(&env);
}

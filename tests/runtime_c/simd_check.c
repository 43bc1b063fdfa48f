/* The SIMD vocabulary against the scalar helpers it replaces: every lane of every
 * vector function must give the scalar function's bits.  Reads no input; prints the
 * number of mismatching lanes per function and exits 1 if any.  Run with the FP
 * environment of generated code (FTZ/DAZ) and without it. */
#include <stdio.h>
#include <stdlib.h>

static uint32_t rng_state = 12345u;
static uint32_t next_u32(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

#define N (1 << 16)
static float xs[N], ys[N];

static void fill(void) {
  static const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, -1e-40f, 1.17549435e-38f, (float)INFINITY,
                                  -(float)INFINITY, (float)NAN, -(float)NAN, 88.72283935546875f, 88.7228f,
                                  89.0f, -87.33654022216797f, -87.34f, -88.0f, -104.0f, 7.90531110763549805f,
                                  -7.9053111f, 7.99881172180175781f, -7.9988117f, 3.832506856900711f, -3.8325069f, 0.0004f, -0.0004f, 0.00039f, 3.4e38f, -3.4e38f, 0.5f, 2.5f};
  const int ns = (int)(sizeof special / sizeof special[0]);
  for (int i = 0; i < N; ++i) {
    uint32_t r = next_u32();
    float v;
    if (i < ns * ns) {
      v = special[i % ns];
      ys[i] = special[(i / ns) % ns];
      xs[i] = v;
      continue;
    }
    switch (r % 4) {
      case 0: v = aotc_bitcast_u32_f32(next_u32()); break;                        /* any bits */
      case 1: v = ((float)(next_u32() >> 8) / 16777216.0f - 0.5f) * 200.0f; break; /* [-100, 100) */
      case 2: v = ((float)(next_u32() >> 8) / 16777216.0f - 0.5f) * 20.0f; break;  /* [-10, 10) */
      default: v = ((float)(next_u32() >> 8) / 16777216.0f - 0.5f) * 0.002f; break;
    }
    xs[i] = v;
    ys[i] = (r & 0x100u) ? aotc_bitcast_u32_f32(next_u32()) : -v * 0.75f;
  }
}

typedef float (*sun)(float);
typedef float (*sbin)(float, float);

static int same(float a, float b) { return aotc_bitcast_f32_u32(a) == aotc_bitcast_f32_u32(b); }
/* which NaN operand an IEEE operation returns when both are NaN is the compiler's operand
 * order, for scalar code as much as vector code: any NaN is right there */
static int same2(float a, float b, float x, float y) { return same(a, b) || (x != x && y != y && a != a && b != b); }

/* check_unary_P / check_binary_P: every lane of the vocabulary aotc_P_* (LANES wide) */
#define CHECKS(P, F, LANES)                                                                        \
  static long check_unary_##P(const char* name, F (*v)(F), sun s) {                               \
    long bad = 0;                                                                                  \
    float out[LANES];                                                                              \
    for (int i = 0; i < N; i += LANES) {                                                           \
      aotc_##P##_store(out, v(aotc_##P##_load(xs + i)));                                           \
      for (int l = 0; l < LANES; ++l) {                                                            \
        if (!same(out[l], s(xs[i + l]))) {                                                         \
          if (bad < 3) printf("  %s(%a): vector %a scalar %a\n", name, (double)xs[i + l], (double)out[l], \
                              (double)s(xs[i + l]));                                               \
          ++bad;                                                                                   \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
    printf("%s %s %ld\n", #P, name, bad);                                                          \
    return bad;                                                                                    \
  }                                                                                                \
  static long check_binary_##P(const char* name, F (*v)(F, F), sbin s) {                          \
    long bad = 0;                                                                                  \
    float out[LANES];                                                                              \
    for (int i = 0; i < N; i += LANES) {                                                           \
      aotc_##P##_store(out, v(aotc_##P##_load(xs + i), aotc_##P##_load(ys + i)));                  \
      for (int l = 0; l < LANES; ++l) {                                                            \
        if (!same2(out[l], s(xs[i + l], ys[i + l]), xs[i + l], ys[i + l])) {                       \
          if (bad < 3) printf("  %s(%a, %a): vector %a scalar %a\n", name, (double)xs[i + l],      \
                              (double)ys[i + l], (double)out[l], (double)s(xs[i + l], ys[i + l])); \
          ++bad;                                                                                   \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
    printf("%s %s %ld\n", #P, name, bad);                                                          \
    return bad;                                                                                    \
  }

/* exp_nonpos on its domain: x <= 0 (-|x|, NaN kept) */
static float s_exp_nonpos(float a) { return aotc_exp_f32(aotc_neg_f32(aotc_abs_f32(a))); }
static float s_add(float a, float b) { return a + b; }
static float s_sub(float a, float b) { return a - b; }
static float s_mul(float a, float b) { return a * b; }
static float s_div(float a, float b) { return a / b; }
/* the vocabulary's functions, so that a name defined as a macro has an address too */
#define WRAPS(P, F)                                                                                \
  static F P##_exp(F a) { return aotc_##P##_exp(a); }                                              \
  static F P##_exp_nonpos(F a) { return aotc_##P##_exp_nonpos(aotc_##P##_neg(aotc_##P##_abs(a))); } \
  static F P##_tanh(F a) { return aotc_##P##_tanh(a); }                                            \
  static F P##_log(F a) { return aotc_##P##_log(a); }                                              \
  static F P##_erf(F a) { return aotc_##P##_erf(a); }                                              \
  static F P##_logistic(F a) { return aotc_##P##_logistic(a); }                                    \
  static F P##_sqrt(F a) { return aotc_##P##_sqrt(a); }                                            \
  static F P##_rsqrt(F a) { return aotc_##P##_rsqrt(a); }                                          \
  static F P##_abs(F a) { return aotc_##P##_abs(a); }                                              \
  static F P##_neg(F a) { return aotc_##P##_neg(a); }                                              \
  static F P##_max(F a, F b) { return aotc_##P##_max(a, b); }                                      \
  static F P##_min(F a, F b) { return aotc_##P##_min(a, b); }                                      \
  static F P##_pick_gt(F a, F b) { return aotc_##P##_pick_gt(a, b); }                              \
  static F P##_pick_lt(F a, F b) { return aotc_##P##_pick_lt(a, b); }                              \
  static F P##_flag_nan(F a, F b) { return aotc_##P##_flag_nan(a, b); }                            \
  static F P##_add(F a, F b) { return aotc_##P##_add(a, b); }                                      \
  static F P##_sub(F a, F b) { return aotc_##P##_sub(a, b); }                                      \
  static F P##_mul(F a, F b) { return aotc_##P##_mul(a, b); }                                      \
  static F P##_div(F a, F b) { return aotc_##P##_div(a, b); }                                      \
  static long run_##P(void) {                                                                      \
    long bad = 0;                                                                                  \
    bad += check_unary_##P("exp", P##_exp, aotc_exp_f32);                                          \
    bad += check_unary_##P("exp_nonpos", P##_exp_nonpos, s_exp_nonpos);                            \
    bad += check_unary_##P("tanh", P##_tanh, aotc_tanh_f32);                                       \
    bad += check_unary_##P("log", P##_log, aotc_log_f32);                                          \
    bad += check_unary_##P("erf", P##_erf, aotc_erf_f32);                                          \
    bad += check_unary_##P("logistic", P##_logistic, aotc_logistic_f32);                           \
    bad += check_unary_##P("sqrt", P##_sqrt, aotc_sqrt_f32);                                       \
    bad += check_unary_##P("rsqrt", P##_rsqrt, aotc_rsqrt_f32);                                    \
    bad += check_unary_##P("abs", P##_abs, aotc_abs_f32);                                          \
    bad += check_unary_##P("neg", P##_neg, aotc_neg_f32);                                          \
    bad += check_binary_##P("max", P##_max, aotc_max_f32);                                         \
    bad += check_binary_##P("min", P##_min, aotc_min_f32);                                         \
    bad += check_binary_##P("pick_gt", P##_pick_gt, aotc_pick_gt_f32);                             \
    bad += check_binary_##P("pick_lt", P##_pick_lt, aotc_pick_lt_f32);                             \
    bad += check_binary_##P("flag_nan", P##_flag_nan, aotc_flag_nan_f32);                          \
    bad += check_binary_##P("add", P##_add, s_add);                                               \
    bad += check_binary_##P("sub", P##_sub, s_sub);                                                \
    bad += check_binary_##P("mul", P##_mul, s_mul);                                                \
    bad += check_binary_##P("div", P##_div, s_div);                                                \
    return bad;                                                                                    \
  }

CHECKS(v8, aotc_v8f, 8)
CHECKS(vf, aotc_vf, AOTC_VF_LANES)
WRAPS(v8, aotc_v8f)
WRAPS(vf, aotc_vf)

static long run_all(void) { return run_v8() + run_vf(); }

int main(void) {
  fill();
  printf("simd %s %d\n", AOTC_SIMD_NAME, AOTC_VF_LANES);
  long bad = run_all();
  aotc_fpenv env;
  aotc_fpenv_enter(&env);
  printf("with the FP environment of generated code\n");
  bad += run_all();
  aotc_fpenv_leave(&env);
  return bad ? 1 : 0;
}

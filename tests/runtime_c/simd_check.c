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
                                  -7.9053111f, 0.0004f, -0.0004f, 0.00039f, 3.4e38f, -3.4e38f, 0.5f, 2.5f};
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

typedef aotc_v8f (*vun)(aotc_v8f);
typedef float (*sun)(float);
typedef aotc_v8f (*vbin)(aotc_v8f, aotc_v8f);
typedef float (*sbin)(float, float);

static int same(float a, float b) { return aotc_bitcast_f32_u32(a) == aotc_bitcast_f32_u32(b); }
/* which NaN operand an IEEE operation returns when both are NaN is the compiler's operand
 * order, for scalar code as much as vector code: any NaN is right there */
static int same2(float a, float b, float x, float y) { return same(a, b) || (x != x && y != y && a != a && b != b); }

static long check_unary(const char* name, vun v, sun s) {
  long bad = 0;
  float out[8];
  for (int i = 0; i < N; i += 8) {
    aotc_v8_store(out, v(aotc_v8_load(xs + i)));
    for (int l = 0; l < 8; ++l) {
      if (!same(out[l], s(xs[i + l]))) {
        if (bad < 3) printf("  %s(%a): vector %a scalar %a\n", name, (double)xs[i + l], (double)out[l], (double)s(xs[i + l]));
        ++bad;
      }
    }
  }
  printf("%s %ld\n", name, bad);
  return bad;
}

static long check_binary(const char* name, vbin v, sbin s) {
  long bad = 0;
  float out[8];
  for (int i = 0; i < N; i += 8) {
    aotc_v8_store(out, v(aotc_v8_load(xs + i), aotc_v8_load(ys + i)));
    for (int l = 0; l < 8; ++l) {
      if (!same2(out[l], s(xs[i + l], ys[i + l]), xs[i + l], ys[i + l])) {
        if (bad < 3) printf("  %s(%a, %a): vector %a scalar %a\n", name, (double)xs[i + l], (double)ys[i + l],
                            (double)out[l], (double)s(xs[i + l], ys[i + l]));
        ++bad;
      }
    }
  }
  printf("%s %ld\n", name, bad);
  return bad;
}

static float s_add(float a, float b) { return a + b; }
static float s_sub(float a, float b) { return a - b; }
static float s_mul(float a, float b) { return a * b; }
static float s_div(float a, float b) { return a / b; }

static long run_all(void) {
  long bad = 0;
  bad += check_unary("exp", aotc_v8_exp, aotc_exp_f32);
  bad += check_unary("tanh", aotc_v8_tanh, aotc_tanh_f32);
  bad += check_unary("logistic", aotc_v8_logistic, aotc_logistic_f32);
  bad += check_unary("sqrt", aotc_v8_sqrt, aotc_sqrt_f32);
  bad += check_unary("rsqrt", aotc_v8_rsqrt, aotc_rsqrt_f32);
  bad += check_unary("abs", aotc_v8_abs, aotc_abs_f32);
  bad += check_unary("neg", aotc_v8_neg, aotc_neg_f32);
  bad += check_binary("max", aotc_v8_max, aotc_max_f32);
  bad += check_binary("min", aotc_v8_min, aotc_min_f32);
  bad += check_binary("add", aotc_v8_add, s_add);
  bad += check_binary("sub", aotc_v8_sub, s_sub);
  bad += check_binary("mul", aotc_v8_mul, s_mul);
  bad += check_binary("div", aotc_v8_div, s_div);
  return bad;
}

int main(void) {
  fill();
  printf("simd %s\n", AOTC_SIMD_NAME);
  long bad = run_all();
  aotc_fpenv env;
  aotc_fpenv_enter(&env);
  printf("with the FP environment of generated code\n");
  bad += run_all();
  aotc_fpenv_leave(&env);
  return bad ? 1 : 0;
}

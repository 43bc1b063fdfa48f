/* exp (and exp_nonpos below 88), tanh and logistic of the SIMD vocabulary (the map width) against the scalar helpers on
 * every f32 bit pattern: their vector forms leave out selects the scalar code has, on the
 * strength of facts about the polynomials that only an exhaustive run shows.  Two threads,
 * each half the patterns; prints the mismatches per function, exits 1 if any.  With an
 * argument, runs in the FP environment of generated code. */
#include <pthread.h>
#include <stdio.h>

typedef aotc_vf (*vun)(aotc_vf);
typedef float (*sun)(float);
typedef int (*dom)(float);
static aotc_vf w_exp(aotc_vf a) { return aotc_vf_exp(a); }
static aotc_vf w_exp_nonpos(aotc_vf a) { return aotc_vf_exp_nonpos(a); }
static aotc_vf w_tanh(aotc_vf a) { return aotc_vf_tanh(a); }
static aotc_vf w_logistic(aotc_vf a) { return aotc_vf_logistic(a); }
/* exp_nonpos promises exp's bits below 88 (its callers pass x <= 0) and for NaN */
static int below_88(float x) { return x < 88.0f || x != x; }
static const struct { const char* name; vun v; sun s; dom d; } FUNCS[] = {
    {"exp", w_exp, aotc_exp_f32, NULL}, {"exp_nonpos", w_exp_nonpos, aotc_exp_f32, below_88},
    {"tanh", w_tanh, aotc_tanh_f32, NULL}, {"logistic", w_logistic, aotc_logistic_f32, NULL}};
#define NF (int)(sizeof FUNCS / sizeof FUNCS[0])

typedef struct { uint64_t lo, hi; int env; long bad[NF]; } part;

static void* run(void* arg) {
  part* p = (part*)arg;
  aotc_fpenv e = {0};
  if (p->env) aotc_fpenv_enter(&e);
  float in[AOTC_VF_LANES], out[AOTC_VF_LANES];
  for (uint64_t u = p->lo; u < p->hi; u += AOTC_VF_LANES) {
    for (int l = 0; l < AOTC_VF_LANES; ++l) in[l] = aotc_bitcast_u32_f32((uint32_t)(u + (uint64_t)l));
    for (int f = 0; f < NF; ++f) {
      aotc_vf_store(out, FUNCS[f].v(aotc_vf_load(in)));
      for (int l = 0; l < AOTC_VF_LANES; ++l) {
        if (FUNCS[f].d && !FUNCS[f].d(in[l])) continue;
        float r = FUNCS[f].s(in[l]);
        if (aotc_bitcast_f32_u32(r) != aotc_bitcast_f32_u32(out[l])) {
          if (p->bad[f] < 3) printf("  %s(%a): vector %a scalar %a\n", FUNCS[f].name, (double)in[l], (double)out[l], (double)r);
          ++p->bad[f];
        }
      }
    }
  }
  if (p->env) aotc_fpenv_leave(&e);
  return NULL;
}

int main(int argc, char** argv) {
  (void)argv;
  part parts[2] = {{0, 1ull << 31, argc > 1, {0}}, {1ull << 31, 1ull << 32, argc > 1, {0}}};
  pthread_t t;
  if (pthread_create(&t, NULL, run, &parts[1]) != 0) return 2;
  run(&parts[0]);
  pthread_join(t, NULL);
  long bad = 0;
  printf("simd %s %d env %d\n", AOTC_SIMD_NAME, AOTC_VF_LANES, argc > 1);
  for (int f = 0; f < NF; ++f) {
    printf("%s %ld\n", FUNCS[f].name, parts[0].bad[f] + parts[1].bad[f]);
    bad += parts[0].bad[f] + parts[1].bad[f];
  }
  return bad ? 1 : 0;
}

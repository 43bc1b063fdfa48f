/* The f32 FMA peak of one core, the yardstick of benchmarks/models.py's "% peak" column.
   Twelve independent multiply-add chains per vector width keep every FMA port busy;
   prints one JSON object with GFLOP/s for each width the build supports (-march=native).
   cc -O2 -march=native benchmarks/peak_fma.c -o peak_fma && ./peak_fma */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CHAINS 12
#define ROUNDS 50000000L

#ifdef __AVX512F__
static double zmm(float *sink) {
    __m512 a[CHAINS], b = _mm512_set1_ps(1.0000001f), c = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < CHAINS; i++) a[i] = _mm512_set1_ps((float)i);
    double t = now();
    for (long n = 0; n < ROUNDS; n++) {
#pragma GCC unroll 12
        for (int i = 0; i < CHAINS; i++) a[i] = _mm512_fmadd_ps(a[i], b, c);
    }
    t = now() - t;
    for (int i = 0; i < CHAINS; i++) *sink += _mm512_reduce_add_ps(a[i]);
    return (double)ROUNDS * CHAINS * 16 * 2 / t / 1e9;
}
#endif

#ifdef __FMA__
static double ymm(float *sink) {
    __m256 a[CHAINS], b = _mm256_set1_ps(1.0000001f), c = _mm256_set1_ps(1e-7f);
    float lanes[8];
    for (int i = 0; i < CHAINS; i++) a[i] = _mm256_set1_ps((float)i);
    double t = now();
    for (long n = 0; n < ROUNDS; n++) {
#pragma GCC unroll 12
        for (int i = 0; i < CHAINS; i++) a[i] = _mm256_fmadd_ps(a[i], b, c);
    }
    t = now() - t;
    for (int i = 0; i < CHAINS; i++) {
        _mm256_storeu_ps(lanes, a[i]);
        for (int k = 0; k < 8; k++) *sink += lanes[k];
    }
    return (double)ROUNDS * CHAINS * 8 * 2 / t / 1e9;
}
#endif

int main(void) {
    float sink = 0.0f;  /* printed, so the chains are not optimized away */
    double best_z = 0.0, best_y = 0.0;
    for (int rep = 0; rep < 3; rep++) { /* best of three: the machine is shared */
#ifdef __AVX512F__
        double z = zmm(&sink);
        best_z = z > best_z ? z : best_z;
#endif
#ifdef __FMA__
        double y = ymm(&sink);
        best_y = y > best_y ? y : best_y;
#endif
    }
    printf("{\"zmm_gflops\": %.2f, \"ymm_gflops\": %.2f, \"sink\": %g}\n", best_z, best_y, (double)sink);
    return 0;
}

/* fft_twiddles: every twiddle table aotc__fft_plan_init fills for 5-smooth lengths that are
 * multiples of 4, up to 12000, bit for bit against aotc__fft_unit called for each entry (the
 * table takes the quarters after the first from the first by exact products with -i). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AOTC_RT_API
#include "aotc_rt.h"
#include "aotc_fft.c"

int main(void) {
  long bad = 0, total = 0;
  for (int64_t len = 4; len <= 12000; len += 4) {
    if (!aotc__fft_smooth(len)) continue;
    size_t bytes = aotc__fft_plan_bytes(len);
    unsigned char* mem = (unsigned char*)AOTC_ALIGNED_ALLOC(64, (bytes + 63u) / 64u * 64u);
    if (!mem) return 2;
    unsigned char* at = mem;
    aotc__fft_plan p;
    aotc__fft_plan_init(&p, len, &at, NULL, NULL, 1);
    for (int64_t k = 0; k < len; k++) {
      double re, im;
      aotc__fft_unit(k, len, &re, &im);
      float re32 = (float)re, im32 = (float)im;
      total++;
      if (memcmp(&re, &p.tw_f64[2 * k], 8) || memcmp(&im, &p.tw_f64[2 * k + 1], 8) ||
          memcmp(&re32, &p.tw_f32[2 * k], 4) || memcmp(&im32, &p.tw_f32[2 * k + 1], 4)) {
        if (bad++ < 5) printf("length %lld, k %lld differs\n", (long long)len, (long long)k);
      }
    }
    AOTC_ALIGNED_FREE(mem);
  }
  printf("%ld of %ld twiddles differ\n", bad, total);
  return bad != 0;
}

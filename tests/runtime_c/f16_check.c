/* Prints a digest of aotc_f16_to_f32 over every f16 and of aotc_f32_to_f16 /
 * aotc_round_f16 over every 7th f32 bit pattern (and each around the f16
 * boundaries), inside the FP environment of a generated function (FTZ, DAZ).
 * test_f16c.py compares the F16C build with the portable one (AOTC_SIMD_SCALAR)
 * digest for digest; both run after the concatenated runtime text. */
#include <stdio.h>

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001B3u; }

int main(void) {
  aotc_fpenv saved;
  aotc_fpenv_enter(&saved);
  uint64_t h16 = 0xCBF29CE484222325u, h32 = h16, hr = h16;
  for (uint32_t x = 0; x < 0x10000u; ++x) h16 = mix(h16, aotc_bitcast_f32_u32(aotc_f16_to_f32((uint16_t)x)));
  for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 7u) {
    float f = aotc_bitcast_u32_f32((uint32_t)u);
    h32 = mix(h32, aotc_f32_to_f16(f));
    hr = mix(hr, aotc_bitcast_f32_u32(aotc_round_f16(f)));
  }
  for (uint32_t x = 0; x < 0x10000u; ++x) { /* every f16 and the f32 values halfway around it */
    uint32_t b = aotc_bitcast_f32_u32(aotc_f16_to_f32((uint16_t)x));
    for (uint32_t d = 0; d < 3u; ++d) {
      float f = aotc_bitcast_u32_f32(b + 0x0FFFu + d);
      h32 = mix(h32, aotc_f32_to_f16(f));
      hr = mix(hr, aotc_bitcast_f32_u32(aotc_round_f16(f)));
    }
  }
  aotc_fpenv_leave(&saved);
  printf("%016llx %016llx %016llx\n", (unsigned long long)h16, (unsigned long long)h32, (unsigned long long)hr);
  return 0;
}

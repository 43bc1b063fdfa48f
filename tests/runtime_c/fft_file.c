/* fft_file KIND B N0 N1 N2 IN OUT: aotc_fft_c64 of the raw input file into the raw output file
 * (c64 / f32 data as aotc_fft.h lays it out). */
#include <stdio.h>
#include <stdlib.h>

#define AOTC_RT_API
#include "aotc_rt.h"
#include "aotc_fft.c"

static void* read_all(const char* path, size_t bytes) {
  FILE* f = fopen(path, "rb");
  void* p = malloc(bytes + 1);
  if (!f || !p || fread(p, 1, bytes, f) != bytes) exit(2);
  fclose(f);
  return p;
}

int main(int argc, char** argv) {
  if (argc != 8) return 2;
  int kind = atoi(argv[1]);
  int64_t b = atol(argv[2]), n0 = atol(argv[3]), n1 = atol(argv[4]), n2 = atol(argv[5]);
  int64_t lines = b * n0 * n1, nin = kind == AOTC_FFT_IRFFT ? n2 / 2 + 1 : n2;
  int64_t nout = kind == AOTC_FFT_RFFT ? n2 / 2 + 1 : n2;
  size_t in_bytes = (size_t)(lines * nin) * (kind == AOTC_FFT_RFFT ? 4u : 8u);
  size_t out_bytes = (size_t)(lines * nout) * (kind == AOTC_FFT_IRFFT ? 4u : 8u);
  size_t need = aotc_fft_scratch_need(kind, b, n0, n1, n2);
  void* in = read_all(argv[6], in_bytes);
  void* out = malloc(out_bytes + 1);
  void* scratch = AOTC_ALIGNED_ALLOC(64, (need + 63u) / 64u * 64u + 64u);
  if (!out || !scratch) return 2;
  aotc_fft_c64(kind, b, n0, n1, n2, in, out, scratch);
  FILE* f = fopen(argv[7], "wb");
  if (!f || fwrite(out, 1, out_bytes, f) != out_bytes) return 2;
  fclose(f);
  free(in);
  free(out);
  AOTC_ALIGNED_FREE(scratch);
  return 0;
}

/* Two threads create, run and destroy instances of a fat model at once, while the first
 * run of each chooses the ISA level: built with ThreadSanitizer or ASan+UBSan by
 * tests/toolchain/test_fat.py (FAT_HEADER, FAT_PREFIX, FAT_NUM_ARGS given with -D).
 * Prints the level the model runs. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include FAT_HEADER

#define FAT_CAT_(a, b) a##b
#define FAT_CAT(a, b) FAT_CAT_(a, b)
#define F(name) FAT_CAT(FAT_PREFIX, name)

static void* work(void* arg) {
  int* rc = (int*)arg;
  for (int round = 0; round < 3 && !*rc; ++round) {
    F(_instance)* m = F(_create)(F(_ALLOC_ALL));
    if (!m) {
      *rc = 1;
      break;
    }
    if (F(_set_num_threads)(m, 2)) *rc = 2;
    for (int i = 0; i < FAT_NUM_ARGS; ++i) {
      float* p = (float*)F(_arg_data)(m, i);
      size_t n = F(_arg_bytes)(i) / sizeof(float);
      for (size_t j = 0; j < n; ++j) p[j] = (float)((j * 7 + (size_t)i) % 13) * 0.125f - 0.75f;
    }
    if (F(_run)(m)) *rc = 3;
    F(_destroy)(m);
  }
  return NULL;
}

int main(void) {
  pthread_t t[2];
  int rc[2] = {0, 0};
  for (int i = 0; i < 2; ++i)
    if (pthread_create(&t[i], NULL, work, &rc[i])) return 10;
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  printf("%d\n", F(_isa)());
  return rc[0] | rc[1];
}

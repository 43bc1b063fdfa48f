/* A hand-written stand-in for a generated model: the same C API contract as
   aotc's emitter, with prefix `tiny`.
     (x: f32[3], y: f32[3], h: bf16[2,2], step: s32[] variable)
       -> (sum: f32[3], h2: bf16[2,2], pos: pred[3], count: s32[], norm: f32[])
   sum = x + y, h2 = 2 * h, pos = sum > 0, step += 1 then count = step,
   norm = sqrt(sum of x*x). P_run fails with TINY_ERR_THREADS above 8 threads. */
#ifndef TINY_H_
#define TINY_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TINY_NUM_ARGS 4
#define TINY_NUM_RESULTS 5
#define TINY_ARENA_BYTES 64u
#define TINY_ARG0_BYTES 12u
#define TINY_ARG1_BYTES 12u
#define TINY_ARG2_BYTES 8u
#define TINY_ARG3_BYTES 4u
#define TINY_RESULT0_BYTES 12u
#define TINY_RESULT1_BYTES 8u
#define TINY_RESULT2_BYTES 3u
#define TINY_RESULT3_BYTES 4u
#define TINY_RESULT4_BYTES 4u

enum { tiny_OK = 0, tiny_ERR_NULL_ARG = 1, tiny_ERR_NULL_RESULT = 2, tiny_ERR_NO_ARENA = 3,
       tiny_ERR_MISALIGNED = 4, tiny_ERR_INDEX = 5, tiny_ERR_THREADS = 6, tiny_ERR_ALLOC = 7 };
typedef enum { tiny_ALLOC_ALL = 0, tiny_ALLOC_RESULTS_AND_TEMPS = 1, tiny_ALLOC_NONE = 2 } tiny_alloc_mode;
typedef struct tiny_instance tiny_instance;

tiny_instance* tiny_create(tiny_alloc_mode mode);
void tiny_destroy(tiny_instance* m);
int tiny_run(tiny_instance* m);
const char* tiny_error_msg(const tiny_instance* m);
int tiny_set_num_threads(tiny_instance* m, int n);
/* The run budget: the tiny model has no loops, so a run always finishes. */
int tiny_set_deadline(tiny_instance* m, uint64_t ns);
void* tiny_arg_data(tiny_instance* m, int i);
int tiny_set_arg_data(tiny_instance* m, int i, void* data);
void* tiny_result_data(tiny_instance* m, int i);
int tiny_set_result_data(tiny_instance* m, int i, void* data);
int tiny_set_arena(tiny_instance* m, void* arena);
int tiny_lookup_arg_index(const char* name);
int tiny_lookup_result_index(const char* name);

const char* tiny_arg_name(int i);
const char* tiny_arg_type(int i);
int tiny_arg_rank(int i);
const int64_t* tiny_arg_dims(int i);
size_t tiny_arg_bytes(int i);
int tiny_arg_is_variable(int i);
const char* tiny_result_name(int i);
const char* tiny_result_type(int i);
int tiny_result_rank(int i);
const int64_t* tiny_result_dims(int i);
size_t tiny_result_bytes(int i);

int tiny_run_with(void* const* args, void* const* results, void* arena);

#ifdef __cplusplus
}
#endif

#endif /* TINY_H_ */

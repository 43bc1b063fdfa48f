/* Hand-written stand-in for a generated model (see tiny.h), used by the
   toolchain tests until they run on emitter output. Needs libc, libm, pthreads. */
#define _POSIX_C_SOURCE 200809L
#include "tiny.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NA 4
#define NR 5
#define MAX_THREADS 8

static const char* const arg_names[NA] = {"x", "y", "h", "step"};
static const char* const arg_types[NA] = {"f32", "f32", "bf16", "s32"};
static const int arg_ranks[NA] = {1, 1, 2, 0};
static const int64_t arg_dims_x[1] = {3}, arg_dims_h[2] = {2, 2};
static const int64_t* const arg_dims_[NA] = {arg_dims_x, arg_dims_x, arg_dims_h, 0};
static const size_t arg_bytes_[NA] = {12, 12, 8, 4};
static const size_t arg_align_[NA] = {4, 4, 2, 4};
static const int arg_variable_[NA] = {0, 0, 0, 1};

static const char* const result_names[NR] = {"sum", "h2", "pos", "count", "norm"};
static const char* const result_types[NR] = {"f32", "bf16", "pred", "s32", "f32"};
static const int result_ranks[NR] = {1, 2, 1, 0, 0};
static const int64_t* const result_dims_[NR] = {arg_dims_x, arg_dims_h, arg_dims_x, 0, 0};
static const size_t result_bytes_[NR] = {12, 8, 3, 4, 4};
static const size_t result_align_[NR] = {4, 2, 1, 4, 4};

struct tiny_instance {
    void* args[NA];
    void* results[NR];
    void* arena;
    unsigned char owned_args[NA], owned_results[NR], owned_arena;
    int threads;
    char error[160];
};

const char* tiny_arg_name(int i) { return i >= 0 && i < NA ? arg_names[i] : 0; }
const char* tiny_arg_type(int i) { return i >= 0 && i < NA ? arg_types[i] : 0; }
int tiny_arg_rank(int i) { return i >= 0 && i < NA ? arg_ranks[i] : -1; }
const int64_t* tiny_arg_dims(int i) { return i >= 0 && i < NA ? arg_dims_[i] : 0; }
size_t tiny_arg_bytes(int i) { return i >= 0 && i < NA ? arg_bytes_[i] : 0; }
int tiny_arg_is_variable(int i) { return i >= 0 && i < NA ? arg_variable_[i] : 0; }
const char* tiny_result_name(int i) { return i >= 0 && i < NR ? result_names[i] : 0; }
const char* tiny_result_type(int i) { return i >= 0 && i < NR ? result_types[i] : 0; }
int tiny_result_rank(int i) { return i >= 0 && i < NR ? result_ranks[i] : -1; }
const int64_t* tiny_result_dims(int i) { return i >= 0 && i < NR ? result_dims_[i] : 0; }
size_t tiny_result_bytes(int i) { return i >= 0 && i < NR ? result_bytes_[i] : 0; }

int tiny_lookup_arg_index(const char* name) {
    for (int i = 0; name && i < NA; ++i) if (strcmp(name, arg_names[i]) == 0) return i;
    return -1;
}
int tiny_lookup_result_index(const char* name) {
    for (int i = 0; name && i < NR; ++i) if (strcmp(name, result_names[i]) == 0) return i;
    return -1;
}

static void* alloc64(size_t n) {
    void* p = 0;
    size_t size = (n + 63u) / 64u * 64u;
    if (posix_memalign(&p, 64, size ? size : 64) != 0) return 0;
    memset(p, 0, size ? size : 64);
    return p;
}

tiny_instance* tiny_create(tiny_alloc_mode mode) {
    tiny_instance* m = (tiny_instance*)calloc(1, sizeof(*m));
    if (!m) return 0;
    m->threads = 1;
    if (mode == tiny_ALLOC_ALL)
        for (int i = 0; i < NA; ++i) {
            m->owned_args[i] = 1;
            if (!(m->args[i] = alloc64(arg_bytes_[i]))) { tiny_destroy(m); return 0; }
        }
    if (mode != tiny_ALLOC_NONE) {
        for (int i = 0; i < NR; ++i) {
            m->owned_results[i] = 1;
            if (!(m->results[i] = alloc64(result_bytes_[i]))) { tiny_destroy(m); return 0; }
        }
        m->owned_arena = 1;
        if (!(m->arena = alloc64(TINY_ARENA_BYTES))) { tiny_destroy(m); return 0; }
    }
    return m;
}

void tiny_destroy(tiny_instance* m) {
    if (!m) return;
    for (int i = 0; i < NA; ++i) if (m->owned_args[i]) free(m->args[i]);
    for (int i = 0; i < NR; ++i) if (m->owned_results[i]) free(m->results[i]);
    if (m->owned_arena) free(m->arena);
    free(m);
}

const char* tiny_error_msg(const tiny_instance* m) { return m ? m->error : "no instance"; }

static int fail(tiny_instance* m, int code, const char* msg, int i) {
    if (m) snprintf(m->error, sizeof m->error, msg, i);
    return code;
}

void* tiny_arg_data(tiny_instance* m, int i) { return m && i >= 0 && i < NA ? m->args[i] : 0; }
void* tiny_result_data(tiny_instance* m, int i) { return m && i >= 0 && i < NR ? m->results[i] : 0; }

int tiny_set_arg_data(tiny_instance* m, int i, void* data) {
    if (!m || i < 0 || i >= NA) return fail(m, tiny_ERR_INDEX, "argument index %d out of range", i);
    if (m->owned_args[i]) { free(m->args[i]); m->owned_args[i] = 0; }
    m->args[i] = data;
    return tiny_OK;
}

int tiny_set_result_data(tiny_instance* m, int i, void* data) {
    if (!m || i < 0 || i >= NR) return fail(m, tiny_ERR_INDEX, "result index %d out of range", i);
    if (m->owned_results[i]) { free(m->results[i]); m->owned_results[i] = 0; }
    m->results[i] = data;
    return tiny_OK;
}

int tiny_set_arena(tiny_instance* m, void* arena) {
    if (!m) return tiny_ERR_NO_ARENA;
    if (m->owned_arena) { free(m->arena); m->owned_arena = 0; }
    m->arena = arena;
    return tiny_OK;
}

int tiny_set_num_threads(tiny_instance* m, int n) {
    if (!m || n < 1) return fail(m, tiny_ERR_THREADS, "thread count %d must be at least 1", n);
    m->threads = n;
    return tiny_OK;
}

int tiny_set_deadline(tiny_instance* m, uint64_t ns) {
    if (!m) return tiny_ERR_NO_ARENA;
    (void)ns;
    return tiny_OK;
}

/* ------------------------------------------------------------------ the model */

static float bf16_to_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t f32_to_bf16(float f) { /* round to nearest even; no NaN inputs here */
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

typedef struct { const float *x, *y; float* out; int begin, end; } add_job;

static void* add_range(void* p) {
    add_job* j = (add_job*)p;
    for (int i = j->begin; i < j->end; ++i) j->out[i] = j->x[i] + j->y[i];
    return 0;
}

static int execute(tiny_instance* m, void* const* args, void* const* results, void* arena, int threads) {
    const float* x = (const float*)args[0];
    const float* y = (const float*)args[1];
    const uint16_t* h = (const uint16_t*)args[2];
    int32_t* step = (int32_t*)args[3];
    float* tmp = (float*)arena; /* x + y lives in the arena */
    pthread_t tid[MAX_THREADS];
    add_job jobs[MAX_THREADS];
    int n = threads < 3 ? threads : 3;
    for (int t = 0; t < n; ++t) {
        jobs[t] = (add_job){x, y, tmp, t * 3 / n, (t + 1) * 3 / n};
        if (t > 0 && pthread_create(&tid[t], 0, add_range, &jobs[t]) != 0)
            return fail(m, tiny_ERR_THREADS, "cannot start thread %d", t);
    }
    add_range(&jobs[0]);
    for (int t = 1; t < n; ++t) pthread_join(tid[t], 0);

    float* sum = (float*)results[0];
    uint16_t* h2 = (uint16_t*)results[1];
    uint8_t* pos = (uint8_t*)results[2];
    float ss = 0.0f;
    for (int i = 0; i < 3; ++i) {
        sum[i] = tmp[i];
        pos[i] = tmp[i] > 0.0f;
        ss += x[i] * x[i];
    }
    for (int i = 0; i < 4; ++i) h2[i] = f32_to_bf16(2.0f * bf16_to_f32(h[i]));
    *step += 1;
    *(int32_t*)results[3] = *step;
    *(float*)results[4] = sqrtf(ss);
    return tiny_OK;
}

static int run_checked(tiny_instance* m, void* const* args, void* const* results, void* arena, int threads) {
    for (int i = 0; i < NA; ++i) {
        if (!args[i]) return fail(m, tiny_ERR_NULL_ARG, "argument %d has no buffer", i);
        if ((uintptr_t)args[i] % arg_align_[i]) return fail(m, tiny_ERR_MISALIGNED, "argument %d is misaligned", i);
    }
    for (int i = 0; i < NR; ++i) {
        if (!results[i]) return fail(m, tiny_ERR_NULL_RESULT, "result %d has no buffer", i);
        if ((uintptr_t)results[i] % result_align_[i]) return fail(m, tiny_ERR_MISALIGNED, "result %d is misaligned", i);
    }
    if (!arena) return fail(m, tiny_ERR_NO_ARENA, "no arena set (%d bytes needed)", (int)TINY_ARENA_BYTES);
    if ((uintptr_t)arena % 64u) return fail(m, tiny_ERR_MISALIGNED, "the arena is not %d-byte aligned", 64);
    if (threads > MAX_THREADS)
        return fail(m, tiny_ERR_THREADS, "cannot run with %d threads: this model allows at most 8", threads);
    return execute(m, args, results, arena, threads);
}

int tiny_run(tiny_instance* m) {
    if (!m) return tiny_ERR_NULL_ARG;
    m->error[0] = 0;
    return run_checked(m, m->args, m->results, m->arena, m->threads);
}

int tiny_run_with(void* const* args, void* const* results, void* arena) {
    return run_checked(0, args, results, arena, 1);
}

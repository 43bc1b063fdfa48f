/* aotc_pool.h -- a small fixed-size thread pool with one operation,
 * parallel_for.
 *
 * Generated code splits a loop over n independent work items with
 * aotc_parallel_for; an application that already owns threads can instead
 * hand the generated code its own function of type aotc_parallel_for_fn.
 * The pool allocates everything when it is created; running work allocates
 * nothing.
 */
#ifndef AOTC_POOL_H
#define AOTC_POOL_H

#ifndef AOTC_RT_H
#include "aotc_rt.h"
#endif

typedef struct aotc_pool aotc_pool;

/* The body of a parallel loop: processes items [begin, end). */
typedef void (*aotc_range_fn)(void* ctx, int64_t begin, int64_t end);

/* Plug-in point for an application's own pool.  Must behave like
 * aotc_parallel_for: every index in [0, n) passed to fn exactly once, in
 * contiguous [begin, end) ranges, all finished before it returns. */
typedef void (*aotc_parallel_for_fn)(void* user, int64_t n,
                                     void (*fn)(void*, int64_t, int64_t), void* ctx);

/* The most threads a pool runs: more cannot help the kernels (they split work
 * into at most a few chunks per thread) and would only spend time starting. */
#define AOTC_MAX_THREADS 256

/* A pool running work on `threads` threads in total: the caller of
 * aotc_parallel_for plus threads-1 workers started here.  threads <= 1
 * returns NULL, which every function below accepts and treats as "run
 * serially on the caller".  Also returns NULL if threads cannot be
 * started or exceed AOTC_MAX_THREADS (then work simply runs serially). */
AOTC_RT_API aotc_pool* aotc_pool_create(int threads);

/* Stops and joins the workers and frees the pool.  NULL is allowed.  Must
 * not be called while a parallel_for on the pool is running. */
AOTC_RT_API void aotc_pool_destroy(aotc_pool* pool);

/* Number of threads that run work (1 for NULL). */
AOTC_RT_API int aotc_pool_threads(const aotc_pool* pool);

/* Equivalent to the serial loop
 *     fn(ctx, 0, n);
 * split into contiguous chunks [begin, end) that together cover [0, n)
 * exactly once and run concurrently on the pool's threads, the caller
 * included; returns when all chunks are done (their writes are then
 * visible to the caller).  n <= 0 does nothing.  A NULL pool, n == 1, or a
 * call made while the pool is already busy (from inside fn, or from a second
 * thread) runs fn(ctx, 0, n) on the calling thread. */
AOTC_RT_API void aotc_parallel_for(aotc_pool* pool, int64_t n,
                                   void (*fn)(void* ctx, int64_t begin, int64_t end),
                                   void* ctx);

/* aotc_parallel_for with the signature of aotc_parallel_for_fn, `user` being
 * an aotc_pool* (or NULL). */
AOTC_RT_API void aotc_pool_parallel_for_fn(void* user, int64_t n,
                                           void (*fn)(void*, int64_t, int64_t), void* ctx);

#endif /* AOTC_POOL_H */

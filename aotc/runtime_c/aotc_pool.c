/* aotc_pool.c -- the thread pool behind aotc_parallel_for.
 *
 * One job at a time.  The caller publishes a job (function, context, item
 * count, chunk count, its floating-point control state) and bumps
 * `generation`; workers notice (spinning briefly, then sleeping on a
 * condition variable), and everyone -- caller included -- claims chunks from
 * one atomic counter until none are left.  Each worker then decrements
 * `pending`; the caller returns once it reaches zero.  Chunks are contiguous
 * and fixed by (n, chunk count) alone, so which thread runs a chunk never
 * changes what is computed.
 */
#ifndef AOTC_POOL_H
#include "aotc_pool.h"
#endif
#ifndef AOTC_MATH_H
#include "aotc_math.h"
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Chunks per thread: a few, so a thread that is descheduled (a shared
 * 2-vCPU machine) delays only a small part of the loop. */
#define AOTC__POOL_CHUNKS_PER_THREAD 4
/* Polls of a flag before blocking on a condition variable (~10-40 us):
 * back-to-back parallel loops in a model then avoid a futex round trip. */
#define AOTC__POOL_SPINS 2000

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define AOTC__CPU_RELAX() __builtin_ia32_pause()
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
#define AOTC__CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define AOTC__CPU_RELAX() ((void)0)
#endif

struct aotc_pool {
  /* Written by aotc_pool_create before any worker starts; read-only after. */
  void* allocation;     /* what malloc returned (the pool is aligned inside) */
  int threads;          /* caller + workers */
  pthread_t* workers;   /* threads - 1 handles */
  pthread_mutex_t mutex;
  pthread_cond_t wake;  /* workers sleep here waiting for a job or stop */
  pthread_cond_t done;  /* the caller sleeps here waiting for pending == 0 */

  /* The current job.  Written by the caller in aotc_parallel_for while no
   * worker is running a job (pending was 0), before it publishes the job by
   * incrementing `generation` with release order; read by workers only after
   * an acquire load of `generation` shows the new value. */
  void (*fn)(void*, int64_t, int64_t);
  void* ctx;
  int64_t n;
  int64_t chunks;
  aotc_fpenv fpenv; /* caller's floating-point control state */

  /* Incremented (release, under `mutex`) by the caller to publish a job;
   * workers compare it with the last value they served. */
  _Alignas(64) atomic_uint_fast64_t generation;
  /* Next unclaimed chunk: reset to 0 by the caller before publishing, then
   * fetch_add by every thread running the job (values past `chunks` mean
   * no work left). */
  _Alignas(64) atomic_int_fast64_t next_chunk;
  /* Workers that have not finished the current job: set to threads - 1 by
   * the caller before publishing; each worker decrements it once (release)
   * after its last chunk; the caller waits (acquire) for 0. */
  _Alignas(64) atomic_int pending;
  /* Set to 1 by aotc_pool_destroy, under `mutex`; workers then exit. */
  atomic_int stop;
  /* Held by the thread inside aotc_parallel_for; another call that finds it
   * taken (nested, or concurrent) runs serially instead. */
  atomic_flag busy;
};

/* Claims and runs chunks of the published job until none are left. */
AOTC_INTERNAL void aotc__pool_run_chunks(aotc_pool* p) {
  const int64_t n = p->n, chunks = p->chunks;
  const int64_t q = n / chunks, r = n % chunks;
  for (;;) {
    const int64_t c = atomic_fetch_add_explicit(&p->next_chunk, 1, memory_order_relaxed);
    if (c >= chunks) break;
    /* chunk c covers [c*q + min(c, r), ... + q + (c < r)): no overflow, c*q <= n */
    const int64_t begin = c * q + (c < r ? c : r);
    const int64_t end = begin + q + (c < r ? 1 : 0);
    p->fn(p->ctx, begin, end);
  }
}

AOTC_INTERNAL void* aotc__pool_worker(void* arg) {
  aotc_pool* p = (aotc_pool*)arg;
  uint_fast64_t served = 0; /* generation of the last job this worker ran */
  for (;;) {
    uint_fast64_t g = atomic_load_explicit(&p->generation, memory_order_acquire);
    for (int i = 0; g == served && i < AOTC__POOL_SPINS; ++i) {
      if (atomic_load_explicit(&p->stop, memory_order_relaxed)) break;
      AOTC__CPU_RELAX();
      g = atomic_load_explicit(&p->generation, memory_order_acquire);
    }
    if (g == served) {
      pthread_mutex_lock(&p->mutex);
      while ((g = atomic_load_explicit(&p->generation, memory_order_acquire)) == served &&
             !atomic_load_explicit(&p->stop, memory_order_relaxed))
        pthread_cond_wait(&p->wake, &p->mutex);
      pthread_mutex_unlock(&p->mutex);
    }
    if (g == served) break; /* woken without a job: stop */
    served = g;

    aotc_fpenv own;
    aotc_fpenv_save(&own);
    aotc_fpenv_leave(&p->fpenv); /* run with the caller's state */
    aotc__pool_run_chunks(p);
    aotc_fpenv_leave(&own);

    if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&p->mutex);
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->mutex);
    }
  }
  return NULL;
}

AOTC_INTERNAL void aotc__pool_stop_and_join(aotc_pool* p, int started) {
  pthread_mutex_lock(&p->mutex);
  atomic_store_explicit(&p->stop, 1, memory_order_relaxed);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mutex);
  for (int i = 0; i < started; ++i) pthread_join(p->workers[i], NULL);
}

AOTC_INTERNAL void aotc__pool_free(aotc_pool* p) {
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->mutex);
  free(p->workers);
  free(p->allocation);
}

AOTC_RT_API aotc_pool* aotc_pool_create(int threads) {
  if (threads <= 1 || threads > AOTC_MAX_THREADS) return NULL;
  /* malloc + manual alignment (aligned_alloc is missing on some C libraries) */
  char* raw = (char*)malloc(sizeof(aotc_pool) + 64u);
  if (!raw) return NULL;
  aotc_pool* p = (aotc_pool*)(void*)(raw + (64u - (uintptr_t)raw % 64u) % 64u);
  memset(p, 0, sizeof *p);
  p->allocation = raw;
  p->threads = threads;
  p->workers = (pthread_t*)calloc((size_t)threads - 1u, sizeof(pthread_t));
  if (!p->workers) {
    free(raw);
    return NULL;
  }
  atomic_init(&p->generation, 0);
  atomic_init(&p->next_chunk, 0);
  atomic_init(&p->pending, 0);
  atomic_init(&p->stop, 0);
  atomic_flag_clear(&p->busy);
  if (pthread_mutex_init(&p->mutex, NULL) != 0) {
    free(p->workers);
    free(raw);
    return NULL;
  }
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  for (int i = 0; i < threads - 1; ++i) {
    if (pthread_create(&p->workers[i], NULL, aotc__pool_worker, p) != 0) {
      aotc__pool_stop_and_join(p, i);
      aotc__pool_free(p);
      return NULL;
    }
  }
  return p;
}

AOTC_RT_API void aotc_pool_destroy(aotc_pool* pool) {
  if (!pool) return;
  aotc__pool_stop_and_join(pool, pool->threads - 1);
  aotc__pool_free(pool);
}

AOTC_RT_API int aotc_pool_threads(const aotc_pool* pool) { return pool ? pool->threads : 1; }

AOTC_RT_API void aotc_parallel_for(aotc_pool* pool, int64_t n,
                                   void (*fn)(void* ctx, int64_t begin, int64_t end),
                                   void* ctx) {
  if (n <= 0) return;
  if (!pool || n == 1 || atomic_flag_test_and_set_explicit(&pool->busy, memory_order_acquire)) {
    fn(ctx, 0, n);
    return;
  }
  const int64_t max_chunks = (int64_t)pool->threads * AOTC__POOL_CHUNKS_PER_THREAD;
  pool->fn = fn;
  pool->ctx = ctx;
  pool->n = n;
  pool->chunks = n < max_chunks ? n : max_chunks;
  aotc_fpenv_save(&pool->fpenv);
  atomic_store_explicit(&pool->next_chunk, 0, memory_order_relaxed);
  atomic_store_explicit(&pool->pending, pool->threads - 1, memory_order_relaxed);

  pthread_mutex_lock(&pool->mutex);
  atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);

  aotc__pool_run_chunks(pool);

  for (int i = 0; i < AOTC__POOL_SPINS; ++i) {
    if (atomic_load_explicit(&pool->pending, memory_order_acquire) == 0) break;
    AOTC__CPU_RELAX();
  }
  if (atomic_load_explicit(&pool->pending, memory_order_acquire) != 0) {
    pthread_mutex_lock(&pool->mutex);
    while (atomic_load_explicit(&pool->pending, memory_order_acquire) != 0)
      pthread_cond_wait(&pool->done, &pool->mutex);
    pthread_mutex_unlock(&pool->mutex);
  }
  atomic_flag_clear_explicit(&pool->busy, memory_order_release);
}

AOTC_RT_API void aotc_pool_parallel_for_fn(void* user, int64_t n,
                                           void (*fn)(void*, int64_t, int64_t), void* ctx) {
  aotc_parallel_for((aotc_pool*)user, n, fn, ctx);
}

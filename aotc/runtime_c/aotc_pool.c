/* aotc_pool.c -- the thread pool behind aotc_parallel_for.
 *
 * One job at a time.  The caller publishes a job (function, context, item
 * count, chunk count, its floating-point control state) and bumps
 * `generation`; workers notice (spinning briefly, then sleeping on a
 * condition variable), join the job while it is open, and everyone -- caller
 * included -- claims chunks from one atomic counter until none are left.  The
 * caller then closes the job and waits only for the workers that joined it: a
 * worker the OS has not scheduled yet (a shared machine) is not waited for,
 * it finds the job closed when it runs and skips it.  Chunks are contiguous
 * and fixed by (n, chunk count) alone, so which thread runs a chunk never
 * changes what is computed.
 */
#ifndef AOTC_POOL_H
#include "aotc_pool.h"
#endif
#ifndef AOTC_MATH_H
#include "aotc_math.h"
#endif
#ifndef AOTC_THREAD_H
#include "aotc_thread.h"
#endif

#include <stdlib.h>
#include <string.h>

/* Chunks per thread: a few, so a thread that is descheduled (a shared
 * 2-vCPU machine) delays only a small part of the loop. */
#define AOTC__POOL_CHUNKS_PER_THREAD 4
/* Polls of a flag before blocking on a condition variable (~10-40 us):
 * back-to-back parallel loops in a model then avoid a futex round trip. */
#define AOTC__POOL_SPINS 2000

struct aotc_pool {
  /* Written by aotc_pool_create before any worker starts; read-only after. */
  void* allocation;     /* what malloc returned (the pool is aligned inside) */
  int threads;          /* caller + workers */
  aotc__thread* workers; /* threads - 1 handles */
  aotc__mutex mutex;
  aotc__cond wake;  /* workers sleep here waiting for a job or stop */
  aotc__cond done;  /* the caller sleeps here waiting for joined == 0 */

  /* The current job.  Written by the caller in aotc_parallel_for while no
   * worker is inside a job (the last one closed, joined was 0), before it publishes the job by
   * incrementing `generation` with release order; read by workers only after
   * an acquire load of `generation` shows the new value. */
  void (*fn)(void*, int64_t, int64_t);
  void* ctx;
  int64_t n;
  int64_t chunks;
  aotc_fpenv fpenv; /* caller's floating-point control state */


  /* Incremented (release, under `mutex`) by the caller to publish a job;
   * workers compare it with the last value they served. */
  AOTC_ALIGNAS(64) aotc__atomic_i64 generation;
  /* Next unclaimed chunk: reset to 0 by the caller before publishing, then
   * fetch_add by every thread running the job (values past `chunks` mean
   * no work left). */
  AOTC_ALIGNAS(64) aotc__atomic_i64 next_chunk;
  /* The generation of the job workers may still join, 0 when none: stored
   * (seq_cst) by the caller as it publishes a job, and 0 once it has claimed
   * the last chunk. */
  AOTC_ALIGNAS(64) aotc__atomic_i64 open;
  /* Workers inside a job: a worker increments it (seq_cst), then reads `open`
   * (seq_cst): the job it saw published is still open, so it joins, or it
   * decrements again and skips the job.  A joined worker decrements it once
   * (release) after its last chunk.  The caller, having closed the job, waits
   * (acquire) for 0: with both sides seq_cst, a worker that read the job open is
   * counted here, and one that finds it closed never touches the job. */
  AOTC_ALIGNAS(64) aotc__atomic_i64 joined;
  /* Set to 1 by aotc_pool_destroy, under `mutex`; workers then exit. */
  aotc__atomic_i64 stop;
  /* 1 while a thread is inside aotc_parallel_for (set by exchange, acquire;
   * cleared, release, when it returns); another call that finds it set
   * (nested, or concurrent) runs serially instead. */
  aotc__atomic_i64 busy;
};

/* Claims and runs chunks of the published job until none are left. */
AOTC_INTERNAL void aotc__pool_run_chunks(aotc_pool* p) {
  const int64_t n = p->n, chunks = p->chunks;
  const int64_t q = n / chunks, r = n % chunks;
  for (;;) {
    const int64_t c = aotc__afetch_add(&p->next_chunk, 1, relaxed);
    if (c >= chunks) break;
    /* chunk c covers [c*q + min(c, r), ... + q + (c < r)): no overflow, c*q <= n */
    const int64_t begin = c * q + (c < r ? c : r);
    const int64_t end = begin + q + (c < r ? 1 : 0);
    p->fn(p->ctx, begin, end);
  }
}

/* A worker leaves the job (joined or not); the last one out wakes a waiting caller. */
AOTC_INTERNAL void aotc__pool_leave(aotc_pool* p) {
  if (aotc__afetch_add(&p->joined, -1, acq_rel) == 1) {
    aotc__mutex_lock(&p->mutex);
    aotc__cond_signal(&p->done);
    aotc__mutex_unlock(&p->mutex);
  }
}

AOTC_INTERNAL aotc__thread_ret AOTC__THREAD_CALL aotc__pool_worker(void* arg) {
  aotc_pool* p = (aotc_pool*)arg;
  int64_t served = 0; /* generation of the last job this worker ran */
  for (;;) {
    int64_t g = aotc__aload(&p->generation, acquire);
    for (int i = 0; g == served && i < AOTC__POOL_SPINS; ++i) {
      if (aotc__aload(&p->stop, relaxed)) break;
      AOTC__CPU_RELAX();
      g = aotc__aload(&p->generation, acquire);
    }
    if (g == served) {
      aotc__mutex_lock(&p->mutex);
      while ((g = aotc__aload(&p->generation, acquire)) == served &&
             !aotc__aload(&p->stop, relaxed))
        aotc__cond_wait(&p->wake, &p->mutex);
      aotc__mutex_unlock(&p->mutex);
    }
    if (g == served) break; /* woken without a job: stop */
    served = g;
    aotc__afetch_add(&p->joined, 1, seq_cst);
    if (aotc__aload(&p->open, seq_cst) != g) { /* the caller has claimed every chunk already */
      aotc__pool_leave(p);
      continue;
    }

    aotc_fpenv own;
    aotc_fpenv_save(&own);
    aotc_fpenv_leave(&p->fpenv); /* run with the caller's state */
    aotc__pool_run_chunks(p);
    aotc_fpenv_leave(&own);

    aotc__pool_leave(p);
  }
  return AOTC__THREAD_RETURN;
}

AOTC_INTERNAL void aotc__pool_stop_and_join(aotc_pool* p, int started) {
  aotc__mutex_lock(&p->mutex);
  aotc__astore(&p->stop, 1, relaxed);
  aotc__cond_broadcast(&p->wake);
  aotc__mutex_unlock(&p->mutex);
  for (int i = 0; i < started; ++i) aotc__thread_join(p->workers[i]);
}

AOTC_INTERNAL void aotc__pool_free(aotc_pool* p) {
  void* allocation = p->allocation;
  aotc__cond_destroy(&p->done);
  aotc__cond_destroy(&p->wake);
  aotc__mutex_destroy(&p->mutex);
  free(p->workers);
#if defined(__cplusplus)
  p->~aotc_pool();
#endif
  free(allocation);
}

AOTC_RT_API aotc_pool* aotc_pool_create(int threads) {
  if (threads <= 1 || threads > AOTC_MAX_THREADS) return NULL;
  /* malloc + manual alignment (aligned_alloc is missing on some C libraries) */
  char* raw = (char*)malloc(sizeof(aotc_pool) + 64u);
  if (!raw) return NULL;
  void* at = raw + (64u - (uintptr_t)raw % 64u) % 64u;
#if defined(__cplusplus)
  aotc_pool* p = new (at) aotc_pool(); /* value-initialized: every field zero */
#else
  aotc_pool* p = (aotc_pool*)at;
  memset(p, 0, sizeof *p);
#endif
  aotc__ainit(&p->generation, 0);
  aotc__ainit(&p->next_chunk, 0);
  aotc__ainit(&p->joined, 0);
  aotc__ainit(&p->open, 0);
  aotc__ainit(&p->stop, 0);
  aotc__ainit(&p->busy, 0);
  p->allocation = raw;
  p->threads = threads;
  p->workers = (aotc__thread*)calloc((size_t)threads - 1u, sizeof(aotc__thread));
  if (!p->workers) {
    free(raw);
    return NULL;
  }
  if (aotc__mutex_init(&p->mutex) != 0) {
    free(p->workers);
    free(raw);
    return NULL;
  }
  aotc__cond_init(&p->wake);
  aotc__cond_init(&p->done);
  for (int i = 0; i < threads - 1; ++i) {
    if (aotc__thread_start(&p->workers[i], aotc__pool_worker, p) != 0) {
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
  if (!pool || n == 1 || aotc__aexchange(&pool->busy, 1, acquire) != 0) {
    fn(ctx, 0, n);
    return;
  }
  const int64_t max_chunks = (int64_t)pool->threads * AOTC__POOL_CHUNKS_PER_THREAD;
  pool->fn = fn;
  pool->ctx = ctx;
  pool->n = n;
  pool->chunks = n < max_chunks ? n : max_chunks;
  aotc_fpenv_save(&pool->fpenv);
  aotc__astore(&pool->next_chunk, 0, relaxed);

  aotc__astore(&pool->open, aotc__aload(&pool->generation, relaxed) + 1, seq_cst);

  aotc__mutex_lock(&pool->mutex);
  aotc__afetch_add(&pool->generation, 1, release);
  aotc__cond_broadcast(&pool->wake);
  aotc__mutex_unlock(&pool->mutex);

  aotc__pool_run_chunks(pool);

  aotc__astore(&pool->open, 0, seq_cst); /* every chunk is claimed: no worker joins any more */
  for (int i = 0; i < AOTC__POOL_SPINS; ++i) {
    if (aotc__aload(&pool->joined, seq_cst) == 0) break;
    AOTC__CPU_RELAX();
  }
  if (aotc__aload(&pool->joined, seq_cst) != 0) {
    aotc__mutex_lock(&pool->mutex);
    while (aotc__aload(&pool->joined, acquire) != 0)
      aotc__cond_wait(&pool->done, &pool->mutex);
    aotc__mutex_unlock(&pool->mutex);
  }
  aotc__astore(&pool->busy, 0, release);
}

AOTC_RT_API void aotc_pool_parallel_for_fn(void* user, int64_t n,
                                           void (*fn)(void*, int64_t, int64_t), void* ctx) {
  aotc_parallel_for((aotc_pool*)user, n, fn, ctx);
}

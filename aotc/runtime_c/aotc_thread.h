/* aotc_thread.h -- the threads, locks and atomics the thread pool is written on.
 *
 * One small vocabulary with two implementations of each part, chosen by the
 * compiler's predefined macros:
 *   threads, mutex, condition variable: Win32 (CreateThread, SRWLOCK,
 *     CONDITION_VARIABLE) under _WIN32, POSIX threads elsewhere;
 *   atomics on int64_t: C11 <stdatomic.h>; std::atomic when the file is
 *     compiled as C++; the Interlocked functions for MSVC's C compiler, whose
 *     <stdatomic.h> needs an experimental switch.
 * It holds no state and knows nothing of the pool built on it.
 */
#ifndef AOTC_THREAD_H
#define AOTC_THREAD_H

#ifndef AOTC_RT_H
#include "aotc_rt.h"
#endif

/* ---- threads, mutex, condition variable --------------------------------- */
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

typedef HANDLE aotc__thread;
typedef SRWLOCK aotc__mutex;
typedef CONDITION_VARIABLE aotc__cond;
typedef DWORD aotc__thread_ret;
#define AOTC__THREAD_CALL WINAPI
#define AOTC__THREAD_RETURN 0

/* Starts fn(arg) on a new thread; 0 on success. */
AOTC_INTERNAL int aotc__thread_start(aotc__thread* t, aotc__thread_ret(WINAPI* fn)(void*),
                                     void* arg) {
  *t = CreateThread(NULL, 0, fn, arg, 0, NULL);
  return *t != NULL ? 0 : -1;
}
AOTC_INTERNAL void aotc__thread_join(aotc__thread t) {
  WaitForSingleObject(t, INFINITE);
  CloseHandle(t);
}
AOTC_INTERNAL int aotc__mutex_init(aotc__mutex* m) {
  InitializeSRWLock(m);
  return 0;
}
AOTC_INTERNAL void aotc__mutex_destroy(aotc__mutex* m) { (void)m; }
AOTC_INTERNAL void aotc__mutex_lock(aotc__mutex* m) { AcquireSRWLockExclusive(m); }
AOTC_INTERNAL void aotc__mutex_unlock(aotc__mutex* m) { ReleaseSRWLockExclusive(m); }
AOTC_INTERNAL void aotc__cond_init(aotc__cond* c) { InitializeConditionVariable(c); }
AOTC_INTERNAL void aotc__cond_destroy(aotc__cond* c) { (void)c; }
AOTC_INTERNAL void aotc__cond_wait(aotc__cond* c, aotc__mutex* m) {
  SleepConditionVariableSRW(c, m, INFINITE, 0);
}
AOTC_INTERNAL void aotc__cond_signal(aotc__cond* c) { WakeConditionVariable(c); }
AOTC_INTERNAL void aotc__cond_broadcast(aotc__cond* c) { WakeAllConditionVariable(c); }
#else
#include <pthread.h>

typedef pthread_t aotc__thread;
typedef pthread_mutex_t aotc__mutex;
typedef pthread_cond_t aotc__cond;
typedef void* aotc__thread_ret;
#define AOTC__THREAD_CALL
#define AOTC__THREAD_RETURN NULL

AOTC_INTERNAL int aotc__thread_start(aotc__thread* t, aotc__thread_ret (*fn)(void*), void* arg) {
  return pthread_create(t, NULL, fn, arg) == 0 ? 0 : -1;
}
AOTC_INTERNAL void aotc__thread_join(aotc__thread t) { pthread_join(t, NULL); }
AOTC_INTERNAL int aotc__mutex_init(aotc__mutex* m) { return pthread_mutex_init(m, NULL); }
AOTC_INTERNAL void aotc__mutex_destroy(aotc__mutex* m) { pthread_mutex_destroy(m); }
AOTC_INTERNAL void aotc__mutex_lock(aotc__mutex* m) { pthread_mutex_lock(m); }
AOTC_INTERNAL void aotc__mutex_unlock(aotc__mutex* m) { pthread_mutex_unlock(m); }
AOTC_INTERNAL void aotc__cond_init(aotc__cond* c) { pthread_cond_init(c, NULL); }
AOTC_INTERNAL void aotc__cond_destroy(aotc__cond* c) { pthread_cond_destroy(c); }
AOTC_INTERNAL void aotc__cond_wait(aotc__cond* c, aotc__mutex* m) { pthread_cond_wait(c, m); }
AOTC_INTERNAL void aotc__cond_signal(aotc__cond* c) { pthread_cond_signal(c); }
AOTC_INTERNAL void aotc__cond_broadcast(aotc__cond* c) { pthread_cond_broadcast(c); }
#endif

/* Storage of one object per thread. */
#if defined(__cplusplus)
#define AOTC_THREAD_LOCAL thread_local
#elif defined(_MSC_VER) && !defined(__clang__)
#define AOTC_THREAD_LOCAL __declspec(thread)
#else
#define AOTC_THREAD_LOCAL _Thread_local
#endif

/* A pause inside spin-wait loops. */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define AOTC__CPU_RELAX() __builtin_ia32_pause()
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
#define AOTC__CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#elif defined(_WIN32)
#define AOTC__CPU_RELAX() YieldProcessor()
#else
#define AOTC__CPU_RELAX() ((void)0)
#endif

/* ---- atomics on int64_t ------------------------------------------------- */
/* aotc__atomic_i64 is only ever accessed through these, `order` being one of
 * relaxed, acquire, release, acq_rel, seq_cst:
 *   aotc__aload(p, order)           the value
 *   aotc__astore(p, v, order)
 *   aotc__afetch_add(p, v, order)   the value before adding v
 *   aotc__aexchange(p, v, order)    the value before storing v
 *   aotc__ainit(p, v)               before any other access (not atomic) */
#if defined(__cplusplus)
#include <atomic>
#include <new>
typedef std::atomic<int64_t> aotc__atomic_i64;
#define aotc__aload(p, o) (p)->load(std::memory_order_##o)
#define aotc__astore(p, v, o) (p)->store((v), std::memory_order_##o)
#define aotc__afetch_add(p, v, o) (p)->fetch_add((v), std::memory_order_##o)
#define aotc__aexchange(p, v, o) (p)->exchange((v), std::memory_order_##o)
#define aotc__ainit(p, v) (p)->store((v), std::memory_order_relaxed)
#elif defined(_MSC_VER) && !defined(__clang__)
/* Every Interlocked function is a full barrier, stronger than any order. */
typedef LONG64 aotc__atomic_i64;
#define aotc__aload(p, o) ((int64_t)InterlockedCompareExchange64((p), 0, 0))
#define aotc__astore(p, v, o) ((void)InterlockedExchange64((p), (v)))
#define aotc__afetch_add(p, v, o) ((int64_t)InterlockedExchangeAdd64((p), (v)))
#define aotc__aexchange(p, v, o) ((int64_t)InterlockedExchange64((p), (v)))
#define aotc__ainit(p, v) ((void)(*(p) = (v)))
#else
#include <stdatomic.h>
typedef _Atomic(int64_t) aotc__atomic_i64;
#define aotc__aload(p, o) atomic_load_explicit((p), memory_order_##o)
#define aotc__astore(p, v, o) atomic_store_explicit((p), (v), memory_order_##o)
#define aotc__afetch_add(p, v, o) atomic_fetch_add_explicit((p), (v), memory_order_##o)
#define aotc__aexchange(p, v, o) atomic_exchange_explicit((p), (v), memory_order_##o)
#define aotc__ainit(p, v) atomic_init((p), (v))
#endif

#endif /* AOTC_THREAD_H */

/* runtime.h — the small C runtime that generated code and users call: error reporting,
 * aligned buffers, DLTensor helpers and the thread pool of parallel loops. It is built as its
 * own static library (tec_runtime, needs pthreads) so ahead-of-time objects can link against
 * it on any target.
 */
#ifndef TEC_RUNTIME_H
#define TEC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <dlpack/dlpack.h>
#include "tec/dtype.h"

/* Alignment of every buffer tec allocates, and what generated code assumes of its own. */
#define TEC_ALIGN 64

/* The message of the last failed call of generated code on this thread ("" if none). */
const char *tec_rt_last_error(void);
/* Records a message (printf format) for this thread; returns -1. */
int32_t tec_rt_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Called by generated entry checks: fmt has up to two %lld conversions. Returns -1. */
int32_t tec_rt_check_fail(const char *fmt, int64_t a, int64_t b);

/* Allocation hook: every runtime allocation goes through it. The contract: the returned
 * block is TEC_ALIGN-aligned and at least `bytes` long rounded up to TEC_ALIGN (vector code
 * may read, never write, up to the rounded end). NULL on failure. */
typedef void *(*tec_rt_alloc_fn)(size_t bytes, void *user);
typedef void (*tec_rt_free_fn)(void *p, void *user);
void tec_rt_set_allocator(tec_rt_alloc_fn alloc, tec_rt_free_fn free_fn, void *user);
void *tec_rt_alloc(size_t bytes);
void tec_rt_free(void *p);

/* What an extern stage's C function receives (te_extern, tec/te.h), one per input then the
 * output: `dl` views the region (data: its first element; shape: its extents; strides in
 * elements, never NULL; byte_offset 0; CPU), `min` gives the region's first index in the
 * tensor's coordinates (ndim values), `name` the tensor's name. Valid during the call only.
 *
 *   int32_t my_kernel(const struct tec_extern_buffer *bufs, int32_t nbuf);
 *   bufs[0 .. nbuf-2]: the inputs' regions, bufs[nbuf-1]: the output region to fill */
#define TEC_EXTERN_MAX_BUF 16 /* buffers of one call: at most 15 inputs and the output */
typedef struct tec_extern_buffer {
  DLTensor dl;
  const int64_t *min;
  const char *name;
} tec_extern_buffer;
/* Called by generated code for each call of an extern stage: builds the buffers from
 * data[b] and desc (per buffer: ndim, dtype code, bits, lanes, then ndim extents, ndim
 * strides, ndim mins), calls fn and returns 0, or -1 with a message naming `stage` when fn
 * returns nonzero. names: nbuf tensor names. */
int32_t tec_rt_extern_call(int32_t (*fn)(const tec_extern_buffer *, int32_t), const char *stage,
                           int32_t nbuf, void *const *data, const int64_t *desc,
                           const char *const *names);

/* DLTensor helpers. tec_dl_alloc fills t with a fresh CPU tensor (shape copied into storage
 * the tensor owns); free it with tec_dl_free. Returns 0 or -1 (message in tec_rt_last_error). */
int tec_dl_alloc(DLTensor *t, tec_dtype type, int ndim, const int64_t *shape);
void tec_dl_free(DLTensor *t);
/* A DLTensor view of user memory; shape must outlive the view. */
DLTensor tec_dl_view(void *data, tec_dtype type, int ndim, int64_t *shape);
int64_t tec_dl_numel(const DLTensor *t);

/* ---- parallel loops (parallel.c) ----
 * A pool of pthreads made on first use; the calling thread takes part. The thread count is
 * TEC_NUM_THREADS when that is a positive integer, else the number of online CPUs, until
 * tec_rt_set_num_threads changes it (n <= 0: back to that default, read again; at most
 * TEC_RT_MAX_THREADS). Workers sleep between jobs and are joined at exit. */
#define TEC_RT_MAX_THREADS 256
void tec_rt_set_num_threads(int n);
int tec_rt_get_num_threads(void);
/* Runs body over [0, n) cut into min(threads, n) contiguous chunks, one per thread (chunk t
 * on worker t; the caller runs a chunk itself when that worker has not started it by the time
 * the caller's own chunk is done), and returns when all are done: 0, or the nonzero code of
 * the lowest-numbered failing chunk, whose tec_rt_last_error() message is then set on the
 * calling thread. Every chunk runs, failing or not. n <= 0 does nothing.
 * Calls from inside a body (nested parallelism) and calls while the pool serves another
 * thread run serially, as body(0, n, closure), on the calling thread. Generated code calls
 * this for every parallel loop. */
/* The checked entry's general path (runtime/strided.c): 1 if t is compact row-major (strides
 * NULL or compact; extent-1 dimensions any) and data + byte_offset is TEC_ALIGN-aligned, else 0.
 * tec_rt_call_strided calls thunk(ptrs, sizes) with a compact aligned copy of each argument
 * that is not (written ones copied back after), the others as they are; 0, or the thunk's
 * code, or -1 with the message in tec_rt_last_error (a written argument with a zero stride, a
 * written argument overlapping another, out of memory). Generated entries make the first's test
 * inline and call the second. */
typedef int32_t (*tec_rt_strided_thunk)(void *const *ptrs, const int64_t *sizes);
int32_t tec_rt_dl_compact(const DLTensor *t);
int32_t tec_rt_call_strided(DLTensor *const *args, int32_t nargs, const uint8_t *written, const int64_t *sizes,
                            tec_rt_strided_thunk thunk, const char *fname);
typedef int32_t (*tec_rt_strided_call_fn)(DLTensor *const *, int32_t, const uint8_t *, const int64_t *,
                                          tec_rt_strided_thunk, const char *);
extern tec_rt_strided_call_fn const tec_rt_strided_link; /* runtime/error.c: see there */

typedef int32_t (*tec_rt_parallel_body)(int64_t begin, int64_t end, void *closure);
int32_t tec_rt_parallel_for(int64_t n, tec_rt_parallel_body body, void *closure);
/* As tec_rt_parallel_for, but the threads (the caller's included) take chunks of `chunk`
 * iterations, [0, chunk), [chunk, 2*chunk), ..., in turn from a shared counter until none are
 * left: a thread slowed by other load does fewer of them. chunk <= 0 picks about four chunks
 * per thread (at least one iteration each). Once a chunk has failed, threads that see it claim
 * no more (one already running finishes), and the call returns the code and message of the
 * failing chunk with the lowest start (every chunk below it was claimed earlier and ran).
 * Which thread runs which chunk changes from call to call. Generated code calls this for a
 * parallel loop with pragma parallel_dynamic. Serial in the same cases as
 * tec_rt_parallel_for. */
int32_t tec_rt_parallel_for_dynamic(int64_t n, int64_t chunk, tec_rt_parallel_body body,
                                    void *closure);

/* Enters the pool once: body(task, ntask, closure) runs on ntask threads at once (the caller
 * is task 0; ntask is the thread count, fewer only if the system refuses threads) and the
 * call returns when every task has: 0, or the nonzero code of the lowest-numbered task that
 * failed by itself, whose message is then set on the calling thread. Generated code calls
 * this at a parallel_launch_point and runs its own static chunk of each parallel loop inside.
 * One thread, a call from inside a task, or the pool busy with another thread's job: one task,
 * body(0, 1, closure), on the calling thread (its barriers return at once). */
typedef int32_t (*tec_rt_launch_body)(int32_t task, int32_t ntask, void *closure);
int32_t tec_rt_parallel_launch(tec_rt_launch_body body, void *closure);
/* Inside a launch's body: waits until every task of the launch that is still running got
 * here (memory written before is visible to all after). 0, or -1 when a task has failed: the
 * caller must return (nonzero) at once, without reaching further barriers. Outside a launch,
 * or in a one-task launch, returns 0 immediately. */
int32_t tec_rt_parallel_barrier(void);

/* ---- timing (timer.c): the one timing loop of tec's measurements (the tuner, `tec bench`,
 * networks, benches) ---- */
/* Seconds on the monotonic clock. */
double tec_rt_now(void);
/* One call of the thing timed: 0, or a nonzero code that stops the timing. */
typedef int32_t (*tec_rt_timed_fn)(void *user);
/* `warmup` untimed calls of fn(user), then `runs` timed runs of `calls` calls each back to
 * back (calls < 1: 1); secs[r] (when secs is not NULL): run r's seconds per call. 0, or the
 * first nonzero code fn returned (nothing runs after it; the failing run's secs entry holds the
 * time up to the failure per call made). */
int32_t tec_rt_time(tec_rt_timed_fn fn, void *user, int warmup, int runs, int64_t calls,
                    double *secs);
/* The median of v[0..n) (n >= 1; v is sorted ascending in place). */
double tec_rt_median(double *v, int n);

#endif

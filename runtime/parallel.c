/* parallel.c — the thread pool behind tec_rt_parallel_for.
 *
 *   tec_rt_parallel_for(10, body, c) on 3 threads:
 *     caller   body(0, 4, c)      task 0: the calling thread takes part
 *     worker 1 body(4, 7, c)      task 1
 *     worker 2 body(7, 10, c)     task 2
 *   then the caller waits for the workers and returns the first failing task's code.
 *
 * Static chunking: [0, n) is cut into min(threads, n) contiguous ranges whose lengths differ
 * by at most one; task t goes to worker t, so a schedule's iterations land on the same
 * threads from call to call. The pool is made lazily by the first call that needs a second
 * thread and grows when tec_rt_set_num_threads asks for more; workers sleep on a condition
 * variable between jobs after a short spin (tens of microseconds, yielding the core now and
 * then), so an idle pool costs nothing.
 *
 * Dynamic chunking (tec_rt_parallel_for_dynamic, a loop with pragma parallel_dynamic): every
 * task, the caller's included, claims the next `chunk` iterations from a shared counter until
 * none are left, so a thread slowed by other load on its core does less of the loop instead of
 * holding up the join (on a shared 2-core machine static halves cost up to a quarter of the
 * time). Which thread runs which iterations changes from call to call.
 *
 *   tec_rt_parallel_for_dynamic(8, 1, body, c) on 2 threads, worker slowed down:
 *     caller   body(0,1) body(2,3) body(3,4) body(5,6) body(6,7) body(7,8)
 *     worker 1 body(1,2)                  body(4,5)
 *
 * Stealing: the caller never waits for a worker that has not started. Each worker task has a
 * claim word (rt_worker.claim: 2 * gen open, 2 * gen + 1 taken, gen the job's generation);
 * a worker takes its task by compare-and-swap before running it, and the caller, done with
 * its own part, takes every task still open (highest first) and runs it itself. A worker
 * that wakes late finds its task taken and goes back to waiting without touching the job; the
 * join waits only for the tasks workers took. So a worker asleep on its condition variable,
 * or whose core is busy with another process, costs the caller nothing beyond the work: a
 * 10 us loop (median of 2000 calls, 2-core machine with a load of 6-8) on 2 threads took
 * ~100 us back to back and ~77 us with workers asleep before; now ~10 us and ~16-22 us
 * (1 thread: 10-15 us; see also the yield in rt_worker_main).
 * Without contention, workers spinning for the next job take their task within well under a
 * microsecond, long before the caller finishes its own range, so task t still runs on worker
 * t. The generation in the claim word rules out ABA: a worker still holding job g's view
 * compares against 2 * g and cannot take a task of job g + 1 (valued 2 * (g + 1)).
 *
 *   tec_rt_parallel_for(10, body, c) on 3 threads, worker 2 asleep:
 *     caller   body(0, 4, c)  body(7, 10, c)   task 2 stolen: claim 2g -> 2g+1 by the caller
 *     worker 1 body(4, 7, c)                   took task 1 first; the join waits for it
 *     worker 2                  (wakes) claim is 2g+1: not ours, wait for job g+1
 *
 * Dynamic jobs steal the same way, except that a task still open once the caller found the
 * counter exhausted has nothing left to run: taking it just closes the job to its worker,
 * which then never enters. Launches never steal: their barriers need every task
 * running at once on a thread of its own, so the caller waits for every worker.
 *
 * Serial cases (run as body(0, n, c) on the calling thread): one thread; n == 1; a call made
 * from inside a task (nested parallelism never waits on the pool it runs in, so it cannot
 * deadlock); a call from a second user thread while the pool is busy with another job.
 *
 * Errors: a task that returns nonzero has its thread's tec_rt_last_error() copied into the
 * pool (the caller's own and stolen tasks too, so a stolen task failing after task 0 does not
 * overwrite task 0's message); the caller returns the code of the lowest-numbered failing task
 * with that message set on its own thread. Every static task runs, whether or not another
 * failed, and whichever thread runs it. Dynamic jobs report by chunk start: once a task sees
 * that a chunk failed it claims no other, and every chunk below the failing one was claimed
 * before it (the counter only grows) and runs to its end, so the failure reported is always
 * that of the lowest failing chunk. At exit the workers are told to stop and joined (an
 * atexit handler), so leak checkers see nothing; a forked child forgets the parent's workers
 * and starts a new pool.
 * Launches (tec_rt_parallel_launch, a schedule's parallel_launch_point): the pool is entered
 * once and body(task, ntask, c) runs on every thread; generated code cuts each parallel loop
 * inside into static chunks by task and meets at tec_rt_parallel_barrier after it.
 *
 *   launch on 3 threads            task 0 (caller)   task 1        task 2
 *     for ko: chunk of jo            jo in [0,4)      [4,8)         [8,10)
 *             barrier                ----------------- all three arrive ----------------
 *
 * The barrier counts arrivals against the tasks still running (a task that returned is no
 * longer waited for), under the pool's mutex; the last to arrive opens it by bumping its
 * generation. The others spin a little on that generation without the mutex and leave as soon
 * as it moves; only one that must sleep takes the mutex again, counts itself a sleeper and
 * waits on a condition variable (the opener broadcasts only when there are sleepers). A
 * failing task (body returns nonzero) marks the launch failed and wakes every waiter: from
 * then on every barrier returns -1 at once, the other tasks return, and the launch returns
 * the code and message of the lowest-numbered task that failed by itself (one that returned
 * because a barrier said so does not count). So a failure never hangs the pool.
 *
 * Plain pthreads and C11 atomics: builds for x86-64, AArch64 and ARMv7 alike.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tec/runtime.h"
#include "rt_test.h"

#define RT_SPIN 2000   /* pause iterations before a thread sleeps on a condition variable
                        * (bench/gemm.c gives GNU OpenMP the same budget: keep them equal) */
#define RT_YIELD 64    /* an idle worker's spin gives its core away every this many pauses
                        * (GNU OpenMP's spin does not: same count, not the same wall time) */
#define RT_MSG_MAX 1024

typedef struct rt_worker {
  /* who runs this worker's task of the current parallel_for job: 2 * gen while nobody has
   * claimed it, 2 * gen + 1 once its worker or the caller (stealing) did, gen being the
   * job's generation. A worker that wakes late still holding an older job's generation
   * never matches a newer job's value, so it cannot take that job's task with a stale view.
   * On a cache line of its own: the worker and the caller both write it. */
  _Alignas(64) _Atomic uint64_t claim;
  pthread_t thread;
  int task;          /* the task index this worker runs (1-based: task 0 is the caller's) */
  uint64_t gen0;     /* the job generation when it was started: it waits for a newer one */
} rt_worker;

/* A launch in progress (on the launching caller's stack; the pool points at it). */
typedef struct rt_launch {
  tec_rt_launch_body body;
  void *closure;
  int ntask;
  /* the barrier (written under the pool's mu; bar_gen and failed are also read without it) */
  int active;                   /* tasks not returned yet */
  int arrived;                  /* tasks waiting at the current barrier */
  int sleepers;                 /* tasks asleep on bar_cv: broadcasts are skipped when none */
  _Atomic uint64_t bar_gen;     /* bumped when a barrier opens */
  _Atomic int failed;           /* a task failed by itself: barriers return -1 */
  pthread_cond_t bar_cv;        /* waiters of a barrier sleep here after spinning */
  /* the lowest-numbered task that failed by itself (under mu) */
  int err_task;                 /* -1: none */
  int32_t err_rc;
  char err_msg[RT_MSG_MAX];
} rt_launch;

typedef struct rt_pool {
  pthread_mutex_t mu;
  pthread_cond_t wake;          /* workers: a new job, or shutdown */
  pthread_cond_t done;          /* the caller: the last worker task finished */
  rt_worker workers[TEC_RT_MAX_THREADS];
  int nworkers;                 /* started and not joined */
  int busy;                     /* a job is running (later callers run serially) */
  int shutdown;                 /* set at exit: workers leave */
  int dead;                     /* after shutdown every call is serial */
  _Atomic uint64_t generation;  /* bumped (under mu) for every job */
  _Atomic int pending;          /* worker tasks of the current job not finished yet (a task
                                 * the caller stole is taken off when it stole it) */
  /* the current job (written under mu before generation is bumped) */
  tec_rt_parallel_body body;    /* a parallel_for job, or NULL for a launch */
  rt_launch *launch;            /* a launch job, or NULL */
  void *closure;
  int64_t n;
  int ntasks;
  int64_t chunk;                /* > 0: a dynamic job, chunks of this many iterations */
  int64_t nchunks;              /* dynamic: how many */
  /* dynamic: the index of the first chunk not claimed yet (nchunks once one failed); on a
   * cache line of its own, as every claim writes it */
  _Alignas(64) _Atomic int64_t next;
  /* the failure to report (under mu): static jobs, the lowest-numbered failing worker task;
   * dynamic jobs, the failing chunk (any task's) with the lowest start. INT64_MAX: none */
  int64_t err_key;
  int32_t err_rc;
  char err_msg[RT_MSG_MAX];
} rt_pool;

static rt_pool rt_pool_g = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static _Atomic int rt_nthreads;      /* the setting: always >= 1 after rt_init */
static _Thread_local int rt_in_task; /* this thread is running a task: nested calls are serial */
static _Thread_local rt_launch *rt_cur_launch; /* the launch this thread is a task of, or NULL */
static _Thread_local int rt_saw_abort;  /* a barrier of the current task returned -1 */
/* tests only (rt_test.h): called by a worker between seeing a parallel_for job and claiming
 * its task, so a test can make workers late */
static _Atomic(tec_rt_test_worker_hook) rt_worker_hook;

void tec_rt_test_set_worker_hook(tec_rt_test_worker_hook hook) {
  atomic_store(&rt_worker_hook, hook);
}

static void rt_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield");
#endif
}

/* TEC_NUM_THREADS when it is a positive integer, else the number of online CPUs. */
static int rt_default_threads(void) {
  const char *env = getenv("TEC_NUM_THREADS");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end == '\0' && v > 0) return v > TEC_RT_MAX_THREADS ? TEC_RT_MAX_THREADS : (int)v;
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) cpus = 1;
  return cpus > TEC_RT_MAX_THREADS ? TEC_RT_MAX_THREADS : (int)cpus;
}

static void rt_shutdown(void);
static void rt_after_fork_child(void);

static void rt_init(void) {
  atomic_store(&rt_nthreads, rt_default_threads());
  atexit(rt_shutdown);
  pthread_atfork(NULL, NULL, rt_after_fork_child);
}

void tec_rt_set_num_threads(int n) {
  pthread_once(&rt_once, rt_init);
  if (n <= 0) n = rt_default_threads();
  if (n > TEC_RT_MAX_THREADS) n = TEC_RT_MAX_THREADS;
  atomic_store(&rt_nthreads, n);
}

int tec_rt_get_num_threads(void) {
  pthread_once(&rt_once, rt_init);
  return atomic_load(&rt_nthreads);
}

/* Task t of ntasks over [0, n): the first n % ntasks tasks get one extra iteration. */
static void rt_task_range(int64_t n, int ntasks, int t, int64_t *begin, int64_t *end) {
  int64_t q = n / ntasks, r = n % ntasks;
  *begin = (int64_t)t * q + (t < r ? t : r);
  *end = *begin + q + (t < r ? 1 : 0);
}

/* Keeps the failure of `key` (a task number or a chunk start) if no lower one was kept. */
static void rt_record_error(rt_pool *p, int64_t key, int32_t rc) {
  pthread_mutex_lock(&p->mu);
  if (key < p->err_key) {
    p->err_key = key;
    p->err_rc = rc;
    snprintf(p->err_msg, sizeof p->err_msg, "%s", tec_rt_last_error());
  }
  pthread_mutex_unlock(&p->mu);
}

/* One task's part of a dynamic job: chunks from the shared counter until none is left or one
 * (of any task) failed. The counter counts chunks, not iterations, so it cannot overflow
 * (each task adds one past the last chunk at most). Failures are recorded in the pool. */
static void rt_run_chunks(rt_pool *p, tec_rt_parallel_body body, void *closure, int64_t n,
                          int64_t chunk, int64_t nchunks) {
  for (;;) {
    int64_t c = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
    if (c >= nchunks) return;
    int64_t b = c * chunk;
    int32_t rc = body(b, n - b > chunk ? b + chunk : n, closure);
    if (rc != 0) {
      /* the others stop claiming first (every later claim sees >= nchunks); the message is
       * copied after */
      atomic_store_explicit(&p->next, nchunks, memory_order_relaxed);
      rt_record_error(p, b, rc);
      return;
    }
  }
}

/* A worker task of the current job finished: the last one wakes the caller. */
static void rt_task_done(rt_pool *p) {
  if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_signal(&p->done);
    pthread_mutex_unlock(&p->mu);
  }
}

/* Opens the current barrier of l (under mu). bar_gen moves before sleepers is read, both under
 * mu: a waiter either counted itself in sleepers (under mu) before this and is woken, or
 * takes mu after this and sees the new bar_gen before it would wait. */
static void rt_barrier_open(rt_launch *l) {
  l->arrived = 0;
  atomic_fetch_add_explicit(&l->bar_gen, 1, memory_order_release);
  if (l->sleepers > 0) pthread_cond_broadcast(&l->bar_cv);
}

/* Runs task `task` of launch l on this thread and records how it ended. */
static void rt_launch_task(rt_pool *p, rt_launch *l, int task) {
  rt_launch *saved = rt_cur_launch;
  rt_cur_launch = l;
  rt_saw_abort = 0;
  int32_t rc = l->body(task, l->ntask, l->closure);
  int aborted = rt_saw_abort;
  rt_cur_launch = saved;
  rt_saw_abort = 0;
  pthread_mutex_lock(&p->mu);
  if (rc != 0 && !aborted) {
    if (l->err_task < 0 || task < l->err_task) {
      l->err_task = task;
      l->err_rc = rc;
      snprintf(l->err_msg, sizeof l->err_msg, "%s", tec_rt_last_error());
    }
    atomic_store_explicit(&l->failed, 1, memory_order_release);
    if (l->sleepers > 0) pthread_cond_broadcast(&l->bar_cv); /* as rt_barrier_open */
  }
  l->active--; /* the others no longer wait for this task at a barrier */
  if (l->arrived > 0 && l->arrived >= l->active) rt_barrier_open(l);
  pthread_mutex_unlock(&p->mu);
}

/* An idle worker's spin for the next job yields its core every RT_YIELD pauses. On a loaded
 * machine the kernel wakes a sleeping worker onto its caller's core (the others are busy):
 * after its task the worker's pure spin kept the caller, the thread the job waits for, off
 * that core for the whole spin (a 10 us loop on 2 threads: ~58 us with stealing and a pure
 * spin, ~8.5 us with the yield). With the core to itself the yield returns at once. */
static void *rt_worker_main(void *arg) {
  rt_pool *p = &rt_pool_g;
  rt_worker *w = arg;
  uint64_t seen = w->gen0;
  rt_in_task = 1; /* anything a task calls runs serially here */
  for (;;) {
    for (int s = 0; s < RT_SPIN && atomic_load_explicit(&p->generation, memory_order_acquire) == seen;
         s++) {
      if (s % RT_YIELD == RT_YIELD - 1) sched_yield();
      else rt_pause();
    }
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->generation) == seen && !p->shutdown) pthread_cond_wait(&p->wake, &p->mu);
    if (p->shutdown) {
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    seen = atomic_load(&p->generation);
    tec_rt_parallel_body body = p->body;
    rt_launch *launch = p->launch;
    void *closure = p->closure;
    int64_t n = p->n;
    int ntasks = p->ntasks;
    int64_t chunk = p->chunk, nchunks = p->nchunks;
    pthread_mutex_unlock(&p->mu);
    if (w->task >= ntasks) continue; /* not needed by this job */
    if (launch) { /* never stolen: its barriers need every task on a thread of its own */
      rt_launch_task(p, launch, w->task);
      rt_task_done(p);
      continue;
    }
    tec_rt_test_worker_hook hook = atomic_load_explicit(&rt_worker_hook, memory_order_relaxed);
    if (hook) hook(w->task);
    uint64_t open = 2 * seen;
    if (!atomic_compare_exchange_strong_explicit(&w->claim, &open, open + 1, memory_order_acq_rel,
                                                 memory_order_relaxed))
      continue; /* the caller took the task (this job may even be over): nothing here is ours */
    if (chunk > 0) {
      rt_run_chunks(p, body, closure, n, chunk, nchunks);
    } else {
      int64_t begin, end;
      rt_task_range(n, ntasks, w->task, &begin, &end);
      int32_t rc = body(begin, end, closure);
      if (rc != 0) rt_record_error(p, w->task, rc);
    }
    rt_task_done(p);
  }
}

/* Starts workers until there are `want` (under mu). Returns how many there are. */
static int rt_grow(rt_pool *p, int want) {
  if (p->nworkers >= want) return p->nworkers;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* workers never take asynchronous signals */
  while (p->nworkers < want) {
    rt_worker *w = &p->workers[p->nworkers];
    w->task = p->nworkers + 1;
    w->gen0 = atomic_load(&p->generation);
    if (pthread_create(&w->thread, NULL, rt_worker_main, w) != 0) break;
    p->nworkers++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return p->nworkers;
}

static void rt_shutdown(void) {
  rt_pool *p = &rt_pool_g;
  pthread_mutex_lock(&p->mu);
  p->shutdown = 1;
  p->dead = 1;
  int n = p->nworkers;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < n; i++) pthread_join(p->workers[i].thread, NULL);
  pthread_mutex_lock(&p->mu);
  p->nworkers = 0;
  pthread_mutex_unlock(&p->mu);
}

/* Only the forking thread survives in the child: forget the parent's workers. */
static void rt_after_fork_child(void) {
  rt_pool *p = &rt_pool_g;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  p->nworkers = 0;
  p->busy = 0;
  p->launch = NULL;
  atomic_store(&p->pending, 0);
}

/* Takes the pool for a job of up to `want` (>= 2) tasks. Returns the number of tasks (>= 2),
 * fewer if the system refuses threads, with mu held; or 0 with mu not held when the job must
 * run serially (another thread's job is running, exit began, or no worker could start). */
static int rt_claim(rt_pool *p, int want) {
  pthread_mutex_lock(&p->mu);
  if (p->busy || p->dead) { /* another thread's job, or after exit began */
    pthread_mutex_unlock(&p->mu);
    return 0;
  }
  int ntasks = want;
  int have = rt_grow(p, ntasks - 1); /* fewer if the system refuses threads */
  if (have + 1 < ntasks) ntasks = have + 1;
  if (ntasks <= 1) {
    pthread_mutex_unlock(&p->mu);
    return 0;
  }
  return ntasks;
}

/* Publishes a job of ntasks tasks to the workers (under mu, which it releases): a parallel_for
 * (body set, launch NULL; chunk > 0: dynamic) or a launch (body NULL). Returns the job's
 * generation. The caller then runs task 0, rt_steal (parallel_for only) and rt_join. */
static uint64_t rt_dispatch(rt_pool *p, tec_rt_parallel_body body, rt_launch *launch, void *closure,
                        int64_t n, int ntasks, int64_t chunk) {
  p->busy = 1;
  p->body = body;
  p->launch = launch;
  p->closure = closure;
  p->n = n;
  p->ntasks = ntasks;
  p->chunk = chunk;
  p->nchunks = chunk > 0 ? (n - 1) / chunk + 1 : 0;
  atomic_store_explicit(&p->next, 0, memory_order_relaxed);
  p->err_key = INT64_MAX;
  p->err_rc = 0;
  atomic_store(&p->pending, ntasks - 1);
  uint64_t gen = atomic_load_explicit(&p->generation, memory_order_relaxed) + 1;
  for (int t = 1; t < ntasks; t++)
    atomic_store_explicit(&p->workers[t - 1].claim, 2 * gen, memory_order_relaxed);
  atomic_store_explicit(&p->generation, gen, memory_order_release);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  return gen;
}

/* After the caller's own part of parallel_for job gen: takes every worker task no worker has
 * claimed yet, highest first (workers woken last are the likeliest to be late), and runs it:
 * a static task's range (body set; failures recorded as the worker would), or nothing for a
 * dynamic job (body NULL), whose counter is exhausted by now, so the task is just closed to
 * its worker. Stolen tasks leave pending: the join waits only for tasks a worker claimed. */
static void rt_steal(rt_pool *p, uint64_t gen, int ntasks, tec_rt_parallel_body body,
                     void *closure, int64_t n) {
  int stolen = 0;
  for (int t = ntasks - 1; t >= 1; t--) {
    uint64_t open = 2 * gen;
    if (!atomic_compare_exchange_strong_explicit(&p->workers[t - 1].claim, &open, open + 1,
                                                 memory_order_acq_rel, memory_order_relaxed))
      continue; /* its worker has it */
    stolen++;
    if (body) {
      int64_t begin, end;
      rt_task_range(n, ntasks, t, &begin, &end);
      int32_t rc = body(begin, end, closure);
      if (rc != 0) rt_record_error(p, t, rc);
    }
  }
  if (stolen) atomic_fetch_sub_explicit(&p->pending, stolen, memory_order_acq_rel);
}

/* Waits for the worker tasks of the current job that were not stolen (spin, then sleep) and
 * frees the pool. Returns 0, or the recorded failure's code with its message set on this
 * thread (parallel_for records every failure, task 0's included; launch tasks record theirs
 * in the launch, never here). */
static int32_t rt_join(rt_pool *p) {
  int32_t rc = 0;
  for (int s = 0; s < RT_SPIN && atomic_load_explicit(&p->pending, memory_order_acquire) != 0; s++)
    rt_pause();
  pthread_mutex_lock(&p->mu);
  while (atomic_load(&p->pending) != 0) pthread_cond_wait(&p->done, &p->mu);
  if (p->err_key != INT64_MAX) {
    rc = p->err_rc;
    tec_rt_set_error("%s", p->err_msg);
  }
  p->launch = NULL;
  p->busy = 0;
  pthread_mutex_unlock(&p->mu);
  return rc;
}

/* tec_rt_parallel_for (chunk 0: one static range per task) and tec_rt_parallel_for_dynamic
 * (chunk > 0, or < 0 for automatic). who names the entry in errors. */
static int32_t rt_parallel_run(int64_t n, int64_t chunk, tec_rt_parallel_body body,
                               void *closure, const char *who) {
  if (n <= 0) return 0;
  if (!body) return tec_rt_set_error("%s: the body is NULL", who);
  int threads = tec_rt_get_num_threads();
  if (threads <= 1 || n == 1 || rt_in_task) return body(0, n, closure);
  if (chunk < 0) { /* automatic: about four chunks per thread */
    int64_t q = n / (4 * (int64_t)threads);
    chunk = q > 1 ? q : 1;
  }
  int64_t pieces = chunk ? (n - 1) / chunk + 1 : n;
  if (pieces == 1) return body(0, n, closure);
  rt_pool *p = &rt_pool_g;
  int ntasks = rt_claim(p, pieces < threads ? (int)pieces : threads);
  if (ntasks == 0) return body(0, n, closure);
  uint64_t gen = rt_dispatch(p, body, NULL, closure, n, ntasks, chunk);

  /* every failure, the caller's included, is recorded in the pool: a stolen task failing
   * after task 0 must not overwrite task 0's message on this thread */
  rt_in_task = 1;
  if (chunk) {
    rt_run_chunks(p, body, closure, n, chunk, p->nchunks);
  } else {
    int64_t begin, end;
    rt_task_range(n, ntasks, 0, &begin, &end);
    int32_t rc = body(begin, end, closure);
    if (rc != 0) rt_record_error(p, 0, rc);
  }
  rt_steal(p, gen, ntasks, chunk ? NULL : body, closure, n);
  rt_in_task = 0;
  return rt_join(p);
}

int32_t tec_rt_parallel_for(int64_t n, tec_rt_parallel_body body, void *closure) {
  return rt_parallel_run(n, 0, body, closure, "tec_rt_parallel_for");
}

int32_t tec_rt_parallel_for_dynamic(int64_t n, int64_t chunk, tec_rt_parallel_body body,
                                    void *closure) {
  return rt_parallel_run(n, chunk > 0 ? chunk : -1, body, closure,
                         "tec_rt_parallel_for_dynamic");
}

/* ---- launches ---- */

int32_t tec_rt_parallel_barrier(void) {
  rt_launch *l = rt_cur_launch;
  if (!l) return 0; /* a serial launch (one task): nothing to wait for */
  rt_pool *p = &rt_pool_g;
  pthread_mutex_lock(&p->mu);
  if (atomic_load_explicit(&l->failed, memory_order_acquire)) {
    pthread_mutex_unlock(&p->mu);
    rt_saw_abort = 1;
    return -1;
  }
  uint64_t gen = atomic_load_explicit(&l->bar_gen, memory_order_relaxed);
  if (++l->arrived >= l->active) {
    rt_barrier_open(l);
    pthread_mutex_unlock(&p->mu);
    return 0;
  }
  pthread_mutex_unlock(&p->mu);
  for (int s = 0; s < RT_SPIN; s++) {
    if (atomic_load_explicit(&l->bar_gen, memory_order_acquire) != gen) return 0; /* opened */
    if (atomic_load_explicit(&l->failed, memory_order_acquire)) break;
    rt_pause();
  }
  /* Not open yet (or a task failed): settle it under mu, sleeping if need be. bar_gen is
   * re-checked under mu before every wait, so an opener (which bumps it under mu, then looks
   * at sleepers) cannot slip in between the check and the wait. */
  pthread_mutex_lock(&p->mu);
  l->sleepers++;
  while (atomic_load(&l->bar_gen) == gen && !atomic_load(&l->failed))
    pthread_cond_wait(&l->bar_cv, &p->mu);
  l->sleepers--;
  int failed = atomic_load(&l->bar_gen) == gen; /* woken by a failure, not by the others */
  pthread_mutex_unlock(&p->mu);
  if (failed) {
    rt_saw_abort = 1;
    return -1;
  }
  return 0;
}

/* One task on the calling thread, barriers free (nested, one thread, pool busy). */
static int32_t rt_launch_serial(tec_rt_launch_body body, void *closure) {
  rt_launch *saved = rt_cur_launch;
  int saved_in_task = rt_in_task;
  rt_cur_launch = NULL;
  rt_in_task = 1;
  int32_t rc = body(0, 1, closure);
  rt_in_task = saved_in_task;
  rt_cur_launch = saved;
  return rc;
}

int32_t tec_rt_parallel_launch(tec_rt_launch_body body, void *closure) {
  if (!body) return tec_rt_set_error("tec_rt_parallel_launch: the body is NULL");
  int threads = tec_rt_get_num_threads();
  if (threads <= 1 || rt_in_task) return rt_launch_serial(body, closure);
  rt_launch l; /* set up before taking the pool: the workers see it only after rt_dispatch */
  memset(&l, 0, sizeof l);
  l.body = body;
  l.closure = closure;
  l.err_task = -1;
  atomic_init(&l.bar_gen, 0);
  atomic_init(&l.failed, 0);
  pthread_cond_init(&l.bar_cv, NULL);
  rt_pool *p = &rt_pool_g;
  int ntasks = rt_claim(p, threads);
  if (ntasks == 0) {
    pthread_cond_destroy(&l.bar_cv);
    return rt_launch_serial(body, closure);
  }
  l.ntask = ntasks; /* under mu (rt_claim holds it) */
  l.active = ntasks;
  rt_dispatch(p, NULL, &l, closure, ntasks, ntasks, 0);

  rt_in_task = 1;
  rt_launch_task(p, &l, 0);
  rt_in_task = 0;
  rt_join(p); /* launch tasks never record in the pool's err_key: 0 */
  pthread_cond_destroy(&l.bar_cv);
  if (l.err_task >= 0) {
    tec_rt_set_error("%s", l.err_msg);
    return l.err_rc;
  }
  return 0;
}

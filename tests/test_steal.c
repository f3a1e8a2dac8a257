/* test_steal.c — the thread pool's caller steals the tasks of late workers
 * (runtime/parallel.c, "Stealing"): every index exactly once over thousands of consecutive
 * static and dynamic jobs of 1..1000 iterations on 1-4 threads; workers held back by the
 * runtime's test hook (runtime/rt_test.h) so that the caller runs every task itself; the
 * lowest failing task's code and message when stolen tasks fail; workers let go while the
 * next job runs (a stale view of the previous job claims nothing of the new one); and, when
 * nobody is late, static task t on worker t, the same thread from call to call. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime/rt_test.h"
#include "testutil.h"

#define WAIT_SECONDS 20 /* generous: TSan on a loaded 2-core machine */

static void nap_us(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

/* Polls until *v == want; 0 after WAIT_SECONDS (the caller records the failure). */
static int wait_for(_Atomic int *v, int want) {
  for (long k = 0; k < WAIT_SECONDS * 20000L; k++) {
    if (atomic_load(v) == want) return 1;
    nap_us(50);
  }
  return 0;
}

/* ---- the hook: workers wait in it while `hold` is set ---- */
static _Atomic int hold;
static _Atomic int in_hook; /* workers waiting in the hook now */
static _Atomic int hook_calls;

static void hold_hook(int task) {
  (void)task;
  atomic_fetch_add(&hook_calls, 1);
  atomic_fetch_add(&in_hook, 1);
  while (atomic_load(&hold)) nap_us(50);
  atomic_fetch_sub(&in_hook, 1);
}

static void hold_workers(void) {
  atomic_store(&hold, 1);
  tec_rt_test_set_worker_hook(hold_hook);
}

/* Lets the held workers go and waits until none is left in the hook. */
static void release_workers(void) {
  atomic_store(&hold, 0);
  ck_assert_msg(wait_for(&in_hook, 0), "workers still in the hook after %d s", WAIT_SECONDS);
  tec_rt_test_set_worker_hook(NULL);
}

/* ---- a body that counts ---- */
typedef struct rec {
  _Atomic int *hits;
  _Atomic int calls;
  _Atomic int on_caller;  /* iterations run on the calling thread */
  _Atomic int late;       /* calls after the job returned */
  _Atomic int timeout;    /* a wait inside the body gave up */
  _Atomic int done;       /* set by the test when the job has returned */
  pthread_t caller;
  /* the caller's first call (begin == 0) before it returns: 1 waits until `want` workers are
   * in the hook; 2 lets them go, then waits until every other iteration is done */
  int mode;
  int want;
  int64_t n;
} rec;

static int32_t rec_body(int64_t begin, int64_t end, void *u) {
  rec *r = u;
  if (atomic_load(&r->done)) atomic_fetch_add(&r->late, 1);
  int on_caller = pthread_equal(pthread_self(), r->caller);
  if (on_caller && begin == 0 && r->mode == 1 && !wait_for(&in_hook, r->want))
    atomic_store(&r->timeout, 1);
  if (on_caller && begin == 0 && r->mode == 2) {
    atomic_store(&hold, 0);
    /* the others' iterations are counted in hits[n] below */
    if (!wait_for(&r->hits[r->n], (int)(r->n - end))) atomic_store(&r->timeout, 1);
  }
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&r->hits[i], 1);
  if (on_caller) atomic_fetch_add(&r->on_caller, (int)(end - begin));
  else atomic_fetch_add(&r->hits[r->n], (int)(end - begin));
  atomic_fetch_add(&r->calls, 1);
  return 0;
}

static rec *rec_new(int64_t n, int mode, int want) {
  rec *r = calloc(1, sizeof *r);
  r->hits = calloc((size_t)n + 1, sizeof(_Atomic int)); /* [n]: iterations on workers */
  r->caller = pthread_self();
  r->mode = mode;
  r->want = want;
  r->n = n;
  return r;
}

static void rec_free(rec *r) {
  free(r->hits);
  free(r);
}

/* Every index of r exactly once. */
static void assert_once(rec *r, const char *what) {
  int64_t bad = -1;
  for (int64_t i = 0; i < r->n && bad < 0; i++)
    if (atomic_load(&r->hits[i]) != 1) bad = i;
  ck_assert_msg(bad < 0, "%s: index %lld ran %d times", what, (long long)bad,
                bad < 0 ? 1 : atomic_load(&r->hits[bad]));
  ck_assert_int_eq(atomic_load(&r->late), 0);
  ck_assert_int_eq(atomic_load(&r->timeout), 0);
}

/* Static and dynamic jobs back to back, 1-4 threads, every size from 1 to 1000; now and then
 * a pause long enough for the workers to fall asleep, so that some jobs find them late. */
START_TEST(consecutive_jobs_cover_each_index_once) {
  _Atomic int hits[1001];
  int jobs = 0;
  for (int threads = 1; threads <= 4; threads++) {
    tec_rt_set_num_threads(threads);
    for (int64_t n = 1; n <= 1000; n++)
      for (int dyn = 0; dyn < 2; dyn++) {
        for (int64_t i = 0; i <= n; i++) atomic_store(&hits[i], 0);
        rec r = {.hits = hits, .caller = pthread_self(), .n = n};
        int64_t chunk = n % 7 == 0 ? 0 : 1 + n % 5; /* 0: automatic */
        int32_t rc = dyn ? tec_rt_parallel_for_dynamic(n, chunk, rec_body, &r)
                         : tec_rt_parallel_for(n, rec_body, &r);
        atomic_store(&r.done, 1);
        ck_assert_int_eq(rc, 0);
        int64_t bad = -1; /* the first index not run exactly once (one Check call per job:
                           * each costs a write to Check's pipe) */
        for (int64_t i = 0; i < n && bad < 0; i++)
          if (atomic_load(&hits[i]) != 1) bad = i;
        ck_assert_msg(bad < 0, "%s threads %d n %lld: index %lld ran %d times",
                      dyn ? "dynamic" : "static", threads, (long long)n, (long long)bad,
                      bad < 0 ? 1 : atomic_load(&hits[bad]));
        /* one call per task (static) or chunk (dynamic), whoever ran it; one when serial */
        if (chunk == 0) chunk = n / (4 * threads) > 1 ? n / (4 * threads) : 1;
        int64_t pieces = dyn ? (n + chunk - 1) / chunk : (n < threads ? n : threads);
        ck_assert_int_eq(atomic_load(&r.calls), threads == 1 || pieces == 1 ? 1 : pieces);
        if (++jobs % 97 == 0) nap_us(3000);
      }
  }
}
END_TEST

/* Workers held before they claim: the caller runs every task (static) or every chunk
 * (dynamic) itself, and the job still completes. The first job waits until every worker is
 * in the hook, so it is certain they saw a job they could not take. */
START_TEST(held_workers_caller_runs_everything) {
  static const int64_t ns[] = {2, 3, 5, 17, 100, 1000};
  for (int threads = 2; threads <= 4; threads++) {
    tec_rt_set_num_threads(threads);
    hold_workers();
    rec *first = rec_new(10 * threads, 1, threads - 1);
    ck_assert_int_eq(tec_rt_parallel_for(first->n, rec_body, first), 0);
    atomic_store(&first->done, 1);
    assert_once(first, "first job");
    ck_assert_int_eq(atomic_load(&first->on_caller), first->n);
    ck_assert_int_eq(atomic_load(&first->calls), threads); /* one call per task */
    ck_assert_int_eq(atomic_load(&in_hook), threads - 1);
    rec_free(first);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
      for (int dyn = 0; dyn < 2; dyn++) {
        rec *r = rec_new(ns[k], 0, 0);
        int32_t rc = dyn ? tec_rt_parallel_for_dynamic(r->n, 1, rec_body, r)
                         : tec_rt_parallel_for(r->n, rec_body, r);
        atomic_store(&r->done, 1);
        ck_assert_int_eq(rc, 0);
        assert_once(r, dyn ? "dynamic" : "static");
        ck_assert_int_eq(atomic_load(&r->on_caller), r->n);
        ck_assert_int_eq(atomic_load(&r->calls),
                         dyn ? r->n : (r->n < threads ? r->n : threads));
        rec_free(r);
      }
    release_workers();
    /* the workers are back: a job afterwards is right again */
    rec *after = rec_new(1000, 0, 0);
    ck_assert_int_eq(tec_rt_parallel_for(after->n, rec_body, after), 0);
    atomic_store(&after->done, 1);
    assert_once(after, "after release");
    rec_free(after);
  }
  ck_assert_int_gt(atomic_load(&hook_calls), 0);
}
END_TEST

/* ---- errors of stolen tasks ---- */
typedef struct failing {
  int64_t fail_at[2]; /* the call whose range holds this index fails with code + k */
  int32_t code;
  _Atomic int *hits;
  int64_t order[8];   /* begins, in the order the calls ran (all on the caller here) */
  _Atomic int ncalls;
} failing;

static int32_t failing_body(int64_t begin, int64_t end, void *u) {
  failing *fl = u;
  int k = atomic_fetch_add(&fl->ncalls, 1);
  if (k < 8) fl->order[k] = begin;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&fl->hits[i], 1);
  for (int j = 0; j < 2; j++)
    if (fl->fail_at[j] >= begin && fl->fail_at[j] < end) {
      tec_rt_set_error("chunk [%lld, %lld) failed", (long long)begin, (long long)end);
      return fl->code + j;
    }
  return 0;
}

static void failing_reset(failing *fl, _Atomic int *hits, int64_t a, int64_t b, int32_t code) {
  memset(fl, 0, sizeof *fl);
  for (int i = 0; i < 30; i++) atomic_store(&hits[i], 0);
  fl->hits = hits;
  fl->fail_at[0] = a;
  fl->fail_at[1] = b;
  fl->code = code;
}

START_TEST(stolen_task_errors_lowest_wins) {
  _Atomic int hits[30];
  failing fl;
  tec_rt_set_num_threads(3);
  hold_workers();
  /* 30 iterations, 3 tasks [0,10) [10,20) [20,30), all on the caller: task 0, then the
   * stolen ones highest first */
  tec_rt_set_error("stale");
  failing_reset(&fl, hits, 25, 15, -20);
  ck_assert_int_eq(tec_rt_parallel_for(30, failing_body, &fl), -19);
  ck_assert_str_eq(tec_rt_last_error(), "chunk [10, 20) failed"); /* ran after [20, 30) */
  ck_assert_int_eq(atomic_load(&fl.ncalls), 3);
  ck_assert_int_eq(fl.order[0], 0);
  ck_assert_int_eq(fl.order[1], 20);
  ck_assert_int_eq(fl.order[2], 10);
  for (int i = 0; i < 30; i++) ck_assert_int_eq(atomic_load(&hits[i]), 1); /* every task ran */
  /* the caller's own task failed, then a stolen one: the caller's message stays */
  failing_reset(&fl, hits, 3, 25, -9);
  ck_assert_int_eq(tec_rt_parallel_for(30, failing_body, &fl), -9);
  ck_assert_str_eq(tec_rt_last_error(), "chunk [0, 10) failed");
  for (int i = 0; i < 30; i++) ck_assert_int_eq(atomic_load(&hits[i]), 1);
  /* only a stolen task fails */
  failing_reset(&fl, hits, 29, -1, -3);
  ck_assert_int_eq(tec_rt_parallel_for(30, failing_body, &fl), -3);
  ck_assert_str_eq(tec_rt_last_error(), "chunk [20, 30) failed");
  failing_reset(&fl, hits, -1, -1, -1);
  ck_assert_int_eq(tec_rt_parallel_for(30, failing_body, &fl), 0);
  /* dynamic, chunks of 5, the caller alone: [0,5) [5,10) [10,15) fails, no chunk after */
  failing_reset(&fl, hits, 25, 12, -20);
  ck_assert_int_eq(tec_rt_parallel_for_dynamic(30, 5, failing_body, &fl), -19);
  ck_assert_str_eq(tec_rt_last_error(), "chunk [10, 15) failed");
  ck_assert_int_eq(atomic_load(&fl.ncalls), 3);
  for (int i = 0; i < 30; i++) ck_assert_int_eq(atomic_load(&hits[i]), i < 15 ? 1 : 0);
  release_workers();
  /* the workers run their own tasks again: the same answers */
  failing_reset(&fl, hits, 25, 15, -20);
  ck_assert_int_eq(tec_rt_parallel_for(30, failing_body, &fl), -19);
  ck_assert_str_eq(tec_rt_last_error(), "chunk [10, 20) failed");
  for (int i = 0; i < 30; i++) ck_assert_int_eq(atomic_load(&hits[i]), 1);
}
END_TEST

/* Job A runs while every worker is held in the hook with A's view; A returns (the caller ran
 * it all). Job B's caller then lets the workers go from inside its own first range and waits
 * there until the workers have done everything else of B: a worker must fail to claim with
 * its stale view of A, see B, and run B's task. A worker that took B's task with A's view
 * would run A's body again (A's indices twice, a call after A returned) and leave B's part
 * undone (the wait times out). Static and dynamic, 2-4 threads, several rounds each. */
START_TEST(late_workers_never_claim_a_later_job) {
  for (int threads = 2; threads <= 4; threads++) {
    tec_rt_set_num_threads(threads);
    for (int round = 0; round < 4; round++)
      for (int dyn = 0; dyn < 2; dyn++) {
        const char *what = dyn ? "dynamic" : "static";
        hold_workers();
        rec *a = rec_new(25 * threads, 1, threads - 1);
        int32_t rc = dyn ? tec_rt_parallel_for_dynamic(a->n, 1, rec_body, a)
                         : tec_rt_parallel_for(a->n, rec_body, a);
        atomic_store(&a->done, 1);
        ck_assert_int_eq(rc, 0);
        assert_once(a, what);
        ck_assert_int_eq(atomic_load(&a->on_caller), a->n);

        rec *b = rec_new(25 * threads, 2, 0);
        rc = dyn ? tec_rt_parallel_for_dynamic(b->n, 1, rec_body, b)
                 : tec_rt_parallel_for(b->n, rec_body, b);
        atomic_store(&b->done, 1);
        ck_assert_int_eq(rc, 0);
        release_workers();
        assert_once(a, what); /* again: nothing of A ran after it returned */
        assert_once(b, what);
        /* the caller ran only its first range of B: static task 0, or dynamic chunk 0 */
        ck_assert_int_eq(atomic_load(&b->on_caller), dyn ? 1 : 25);
        ck_assert_int_eq(atomic_load(&b->hits[b->n]), b->n - (dyn ? 1 : 25));
        rec_free(a);
        rec_free(b);
      }
  }
}
END_TEST

/* ---- nobody late: task t on worker t ---- */
typedef struct where {
  int ntask;
  int64_t n;
  pthread_t thread[4];
  _Atomic int others_done; /* tasks other than 0 finished */
  _Atomic int timeout;
} where;

static int32_t where_body(int64_t begin, int64_t end, void *u) {
  where *w = u;
  int t = (int)(begin / (w->n / w->ntask));
  w->thread[t] = pthread_self();
  if (t == 0) { /* the caller cannot steal before its own range ends: wait for the workers */
    if (!wait_for(&w->others_done, w->ntask - 1)) atomic_store(&w->timeout, 1);
  } else {
    atomic_fetch_add(&w->others_done, 1);
  }
  (void)end;
  return 0;
}

START_TEST(static_tasks_stay_on_their_workers) {
  for (int threads = 2; threads <= 4; threads++) {
    tec_rt_set_num_threads(threads);
    pthread_t first[4];
    for (int call = 0; call < 3; call++) {
      where w = {.ntask = threads, .n = 12 * threads};
      ck_assert_int_eq(tec_rt_parallel_for(w.n, where_body, &w), 0);
      ck_assert_int_eq(atomic_load(&w.timeout), 0);
      ck_assert(pthread_equal(w.thread[0], pthread_self()));
      for (int t = 1; t < threads; t++) {
        ck_assert_msg(!pthread_equal(w.thread[t], pthread_self()), "task %d stolen", t);
        for (int u = 1; u < t; u++) ck_assert(!pthread_equal(w.thread[t], w.thread[u]));
        if (call == 0) first[t] = w.thread[t];
        else ck_assert_msg(pthread_equal(w.thread[t], first[t]), "task %d moved thread", t);
      }
    }
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("steal");
  TCase *tc = tcase_create("pool");
  tcase_add_test(tc, consecutive_jobs_cover_each_index_once);
  tcase_add_test(tc, held_workers_caller_runs_everything);
  tcase_add_test(tc, stolen_task_errors_lowest_wins);
  tcase_add_test(tc, late_workers_never_claim_a_later_job);
  tcase_add_test(tc, static_tasks_stay_on_their_workers);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

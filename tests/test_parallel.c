/* test_parallel.c — parallel loops: the runtime's thread pool (thread count setting and
 * TEC_NUM_THREADS, every index covered exactly once, errors with their message, nested and
 * concurrent calls) and parallel schedules end to end (vector add over a symbolic size, GEMM
 * with cache_write + compute_at into a parallel tile loop, a reduction, a fused-and-split
 * loop, a heap temporary failing inside a parallel body), numbers against naive C with 1, 2
 * and 3 threads; the outlined function in the LLVM IR, vector code in the asm, AOT objects
 * linked with the runtime library. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"


static const int thread_counts[] = {1, 2, 3};
#define NTHREAD_COUNTS 3

/* ================= runtime ================= */

START_TEST(threads_api) {
  tec_rt_set_num_threads(3);
  ck_assert_int_eq(tec_rt_get_num_threads(), 3);
  tec_rt_set_num_threads(1);
  ck_assert_int_eq(tec_rt_get_num_threads(), 1);
  tec_rt_set_num_threads(100000);
  ck_assert_int_eq(tec_rt_get_num_threads(), TEC_RT_MAX_THREADS);
  /* <= 0: the default, TEC_NUM_THREADS read again */
  setenv("TEC_NUM_THREADS", "5", 1);
  tec_rt_set_num_threads(0);
  ck_assert_int_eq(tec_rt_get_num_threads(), 5);
  setenv("TEC_NUM_THREADS", "junk", 1);
  tec_rt_set_num_threads(-1);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ck_assert_int_eq(tec_rt_get_num_threads(), cpus < 1 ? 1 : cpus);
  unsetenv("TEC_NUM_THREADS");
}
END_TEST

/* A fresh process reads TEC_NUM_THREADS on first use (main answers --print-threads). */
static int child_threads(const char *env) {
  char cmd[512], self[256]; /* /proc/self/exe in the shell would be the shell */
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  ck_assert_int_gt(k, 0);
  self[k] = '\0';
  const char *run = getenv("TEC_TEST_RUN"); /* cross-built: the emulator (tests/CMakeLists.txt) */
  snprintf(cmd, sizeof cmd, "%s %s '%s' --print-threads", env, run ? run : "", self);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  int n = -1;
  ck_assert_int_eq(fscanf(p, "%d", &n), 1);
  ck_assert_int_eq(pclose(p), 0);
  return n;
}

START_TEST(threads_env_subprocess) {
  ck_assert_int_eq(child_threads("TEC_NUM_THREADS=3"), 3);
  ck_assert_int_eq(child_threads("TEC_NUM_THREADS=1"), 1);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ck_assert_int_eq(child_threads("TEC_NUM_THREADS=0"), cpus < 1 ? 1 : cpus);
  ck_assert_int_eq(child_threads("env -u TEC_NUM_THREADS"), cpus < 1 ? 1 : cpus);
}
END_TEST

typedef struct cover {
  _Atomic int *hits;
  _Atomic int calls;
  _Atomic int64_t max_chunk;
} cover;

/* Runs on any thread: no Check assertions here (they belong to the test's thread). */
static int32_t cover_body(int64_t begin, int64_t end, void *u) {
  cover *c = u;
  if (begin > end) return 1;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&c->hits[i], 1);
  atomic_fetch_add(&c->calls, 1);
  int64_t len = end - begin, m = atomic_load(&c->max_chunk);
  while (len > m && !atomic_compare_exchange_weak(&c->max_chunk, &m, len)) {
  }
  return 0;
}

START_TEST(parallel_for_covers_each_index_once) {
  static const int64_t ns[] = {0, 1, 2, 3, 4, 5, 7, 64, 100, 1000, 100003};
  static const int ts[] = {1, 2, 3, 4, 7};
  for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++) {
    tec_rt_set_num_threads(ts[t]);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      int64_t n = ns[k];
      cover c = {calloc((size_t)(n ? n : 1), sizeof(_Atomic int)), 0, 0};
      ck_assert_int_eq(tec_rt_parallel_for(n, cover_body, &c), 0);
      for (int64_t i = 0; i < n; i++)
        ck_assert_msg(atomic_load(&c.hits[i]) == 1, "threads %d n %lld: index %lld ran %d times",
                      ts[t], (long long)n, (long long)i, atomic_load(&c.hits[i]));
      int expect_calls = n == 0 ? 0 : (n < ts[t] ? (int)n : ts[t]);
      ck_assert_int_eq(atomic_load(&c.calls), expect_calls);
      if (n > 0) /* static chunks differ by at most one iteration */
        ck_assert_int_eq(atomic_load(&c.max_chunk), (n + expect_calls - 1) / expect_calls);
      free(c.hits);
    }
  }
  ck_assert_int_eq(tec_rt_parallel_for(-5, cover_body, NULL), 0); /* never calls the body */
  ck_assert_int_eq(tec_rt_parallel_for(4, NULL, NULL), -1);
  tu_assert_contains(tec_rt_last_error(), "the body is NULL");
}
END_TEST

/* Many small jobs back to back: no lost wake-ups, no deadlock. */
START_TEST(parallel_for_many_jobs) {
  tec_rt_set_num_threads(3);
  _Atomic int hits[16];
  for (int rep = 0; rep < 3000; rep++) {
    int64_t n = 1 + rep % 16;
    for (int i = 0; i < 16; i++) atomic_store(&hits[i], 0);
    cover c = {hits, 0, 0};
    ck_assert_int_eq(tec_rt_parallel_for(n, cover_body, &c), 0);
    for (int64_t i = 0; i < n; i++) ck_assert_int_eq(atomic_load(&hits[i]), 1);
  }
}
END_TEST

typedef struct failing {
  int64_t fail_at[2]; /* chunks containing these indices fail (-1: none) */
  int32_t code;
} failing;

static int32_t failing_body(int64_t begin, int64_t end, void *u) {
  failing *fl = u;
  for (int k = 0; k < 2; k++)
    if (fl->fail_at[k] >= begin && fl->fail_at[k] < end) {
      tec_rt_set_error("chunk [%lld, %lld) failed", (long long)begin, (long long)end);
      return fl->code + k;
    }
  return 0;
}

START_TEST(parallel_for_error_propagates) {
  tec_rt_set_num_threads(3);
  tec_rt_set_error("stale");
  /* 30 iterations on 3 threads: chunks [0,10) [10,20) [20,30) */
  failing fl = {{25, -1}, -7};
  ck_assert_int_eq(tec_rt_parallel_for(30, failing_body, &fl), -7); /* a worker's chunk */
  ck_assert_str_eq(tec_rt_last_error(), "chunk [20, 30) failed");
  fl = (failing){{3, -1}, -9};
  ck_assert_int_eq(tec_rt_parallel_for(30, failing_body, &fl), -9); /* the caller's chunk */
  ck_assert_str_eq(tec_rt_last_error(), "chunk [0, 10) failed");
  fl = (failing){{25, 15}, -20}; /* two fail: the lowest-numbered chunk wins */
  ck_assert_int_eq(tec_rt_parallel_for(30, failing_body, &fl), -19);
  ck_assert_str_eq(tec_rt_last_error(), "chunk [10, 20) failed");
  fl = (failing){{-1, -1}, -1};
  ck_assert_int_eq(tec_rt_parallel_for(30, failing_body, &fl), 0);
  tec_rt_set_num_threads(1);
  fl = (failing){{29, -1}, -3};
  ck_assert_int_eq(tec_rt_parallel_for(30, failing_body, &fl), -3);
  ck_assert_str_eq(tec_rt_last_error(), "chunk [0, 30) failed");
}
END_TEST

typedef struct nested {
  _Atomic int *hits; /* 40 x 50 */
  _Atomic int inner_serial;
  pthread_t outer_thread[64];
} nested;
typedef struct nested_row { nested *nt; int64_t row; pthread_t self; } nested_row;

static int32_t nested_inner(int64_t begin, int64_t end, void *u) {
  nested_row *r = u;
  if (!pthread_equal(pthread_self(), r->self)) return 1; /* must run on the calling worker */
  if (begin != 0 || end != 50) return 2;                 /* and in one piece */
  for (int64_t j = begin; j < end; j++) atomic_fetch_add(&r->nt->hits[r->row * 50 + j], 1);
  atomic_fetch_add(&r->nt->inner_serial, 1);
  return 0;
}

static int32_t nested_outer(int64_t begin, int64_t end, void *u) {
  for (int64_t i = begin; i < end; i++) {
    nested_row r = {u, i, pthread_self()};
    int32_t rc = tec_rt_parallel_for(50, nested_inner, &r);
    if (rc != 0) return rc;
  }
  return 0;
}

START_TEST(parallel_for_nested_runs_serially) {
  for (int t = 1; t <= 3; t++) {
    tec_rt_set_num_threads(t);
    nested nt = {calloc(40 * 50, sizeof(_Atomic int)), 0, {0}};
    ck_assert_int_eq(tec_rt_parallel_for(40, nested_outer, &nt), 0);
    for (int i = 0; i < 40 * 50; i++) ck_assert_int_eq(atomic_load(&nt.hits[i]), 1);
    ck_assert_int_eq(atomic_load(&nt.inner_serial), 40);
    free(nt.hits);
  }
}
END_TEST

/* Two user threads at once: one gets the pool, the other runs serially; both are right. */
static void *concurrent_user(void *arg) {
  (void)arg;
  _Atomic int *hits = calloc(5000, sizeof(_Atomic int));
  for (int rep = 0; rep < 200; rep++) {
    cover c = {hits, 0, 0};
    if (tec_rt_parallel_for(5000, cover_body, &c) != 0) return (void *)1;
  }
  for (int i = 0; i < 5000; i++)
    if (atomic_load(&hits[i]) != 200) return (void *)2;
  free(hits);
  return NULL;
}

START_TEST(parallel_for_concurrent_callers) {
  tec_rt_set_num_threads(3);
  pthread_t th[3];
  for (int i = 0; i < 3; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, concurrent_user, NULL), 0);
  for (int i = 0; i < 3; i++) {
    void *r;
    pthread_join(th[i], &r);
    ck_assert_ptr_null(r);
  }
}
END_TEST

/* A child forked after the pool exists forgets the parent's workers and makes its own. */
START_TEST(parallel_for_after_fork) {
  /* qemu-user 7.2 aborts in a child forked from a threaded process (cpu_exec assertion) */
  if (getenv("TEC_TEST_EMULATED")) return;
  tec_rt_set_num_threads(3);
  _Atomic int hits[100];
  for (int i = 0; i < 100; i++) atomic_store(&hits[i], 0);
  cover c = {hits, 0, 0};
  ck_assert_int_eq(tec_rt_parallel_for(100, cover_body, &c), 0);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    cover cc = {hits, 0, 0};
    int rc = tec_rt_parallel_for(100, cover_body, &cc);
    int ok = rc == 0 && atomic_load(&cc.calls) == 3;
    for (int i = 0; i < 100; i++) ok = ok && atomic_load(&hits[i]) == 2;
    _exit(ok ? 0 : 1); /* no leak check here: the sanitizers still list the parent's threads */
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}
END_TEST


/* ---- launches: every thread enters once, barriers inside ---- */
typedef struct phased {
  int nphase;
  _Atomic int *arrived;   /* per phase: tasks that reached it */
  _Atomic int tasks_seen; /* bit per task */
  _Atomic int bad;        /* a task saw a phase not complete after a barrier */
  _Atomic int ntask_seen;
  int fail_task, fail_phase; /* this task returns -5 before this phase's barrier (-1: none) */
} phased;

static int32_t phased_body(int32_t task, int32_t ntask, void *u) {
  phased *p = u;
  atomic_fetch_or(&p->tasks_seen, 1 << task);
  atomic_store(&p->ntask_seen, ntask);
  for (int ph = 0; ph < p->nphase; ph++) {
    atomic_fetch_add(&p->arrived[ph], 1);
    if (task == p->fail_task && ph == p->fail_phase) {
      tec_rt_set_error("task %d failed in phase %d", task, ph);
      return -5;
    }
    int32_t rc = tec_rt_parallel_barrier();
    if (rc != 0) return rc;
    if (atomic_load(&p->arrived[ph]) != ntask) atomic_store(&p->bad, 1);
  }
  return 0;
}

START_TEST(launch_runs_every_task_with_barriers) {
  for (int t = 1; t <= 4; t++) {
    tec_rt_set_num_threads(t);
    for (int rep = 0; rep < 200; rep++) {
      _Atomic int arrived[8] = {0};
      phased p = {8, arrived, 0, 0, 0, -1, -1};
      ck_assert_int_eq(tec_rt_parallel_launch(phased_body, &p), 0);
      ck_assert_int_eq(atomic_load(&p.ntask_seen), t);
      ck_assert_int_eq(atomic_load(&p.tasks_seen), (1 << t) - 1);
      ck_assert_int_eq(atomic_load(&p.bad), 0);
      for (int ph = 0; ph < 8; ph++) ck_assert_int_eq(atomic_load(&arrived[ph]), t);
    }
  }
  ck_assert_int_eq(tec_rt_parallel_barrier(), 0); /* outside a launch: returns at once */
  ck_assert_int_eq(tec_rt_parallel_launch(NULL, NULL), -1);
  tu_assert_contains(tec_rt_last_error(), "the body is NULL");
}
END_TEST

/* A task failing before a barrier: the others are released, the launch returns its code and
 * message (not the -1 of the tasks a barrier sent home), the pool works afterwards. */
START_TEST(launch_failure_releases_barriers) {
  tec_rt_set_num_threads(3);
  for (int ft = 0; ft < 3; ft++)
    for (int fp = 0; fp < 4; fp++) {
      _Atomic int arrived[4] = {0};
      phased p = {4, arrived, 0, 0, 0, ft, fp};
      tec_rt_set_error(NULL);
      ck_assert_int_eq(tec_rt_parallel_launch(phased_body, &p), -5);
      char want[64];
      snprintf(want, sizeof want, "task %d failed in phase %d", ft, fp);
      ck_assert_str_eq(tec_rt_last_error(), want);
      ck_assert_int_eq(atomic_load(&p.bad), 0);
    }
  _Atomic int arrived[4] = {0};
  phased p = {4, arrived, 0, 0, 0, -1, -1};
  ck_assert_int_eq(tec_rt_parallel_launch(phased_body, &p), 0);
  tec_rt_set_num_threads(1); /* one thread: inline, its failure too */
  phased q = {4, arrived, 0, 0, 0, 0, 2};
  ck_assert_int_eq(tec_rt_parallel_launch(phased_body, &q), -5);
  ck_assert_str_eq(tec_rt_last_error(), "task 0 failed in phase 2");
}
END_TEST

/* Launches from inside a launch task or a parallel_for chunk run as one task, inline. */
typedef struct nest_launch { _Atomic int inner_ntask_max; _Atomic int inner_calls; } nest_launch;
static int32_t inner_launch(int32_t task, int32_t ntask, void *u) {
  nest_launch *n = u;
  if (task != 0) return 1;
  int m = atomic_load(&n->inner_ntask_max);
  if (ntask > m) atomic_store(&n->inner_ntask_max, ntask);
  atomic_fetch_add(&n->inner_calls, 1);
  return tec_rt_parallel_barrier(); /* the inner launch's: returns at once */
}
static int32_t outer_launch(int32_t task, int32_t ntask, void *u) {
  (void)task, (void)ntask;
  int32_t rc = tec_rt_parallel_launch(inner_launch, u);
  if (rc != 0) return rc;
  return tec_rt_parallel_barrier(); /* the outer launch's barrier still works */
}
static int32_t launch_in_chunk(int64_t begin, int64_t end, void *u) {
  for (int64_t i = begin; i < end; i++) {
    int32_t rc = tec_rt_parallel_launch(inner_launch, u);
    if (rc != 0) return rc;
  }
  return 0;
}

START_TEST(launch_nested_runs_serially) {
  tec_rt_set_num_threads(3);
  nest_launch n = {0, 0};
  ck_assert_int_eq(tec_rt_parallel_launch(outer_launch, &n), 0);
  ck_assert_int_eq(atomic_load(&n.inner_calls), 3);
  ck_assert_int_eq(atomic_load(&n.inner_ntask_max), 1);
  nest_launch m = {0, 0};
  ck_assert_int_eq(tec_rt_parallel_for(10, launch_in_chunk, &m), 0);
  ck_assert_int_eq(atomic_load(&m.inner_calls), 10);
  ck_assert_int_eq(atomic_load(&m.inner_ntask_max), 1);
}
END_TEST

/* ================= parallel schedules, end to end ================= */

/* (a) vector add over a symbolic n, outer loop parallel */
static const ir_expr *vadd_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor **t = u;
  return ir_add(TE_AT(t[0], i[0]), TE_AT(t[1], i[0]));
}

typedef struct vadd_fx {
  tec_ctx *ctx;
  lower_func *f;
  te_tensor *ab[2];
} vadd_fx;

static vadd_fx make_vadd(int64_t split, int vectorize) {
  vadd_fx x;
  x.ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(x.ctx, "n");
  te_tensor *A = te_placeholder(x.ctx, "A", TEC_F32, 1, &n);
  te_tensor *B = te_placeholder(x.ctx, "B", TEC_F32, 1, &n);
  x.ab[0] = A, x.ab[1] = B;
  te_tensor *C = te_compute(x.ctx, &(te_compute_decl){.name = "C", .ndim = 1, .shape = &n,
                                                      .body = vadd_body, .user = x.ab});
  sch_schedule *s = sch_create(x.ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *o, *in;
  OK(x.ctx, sch_split(sc, sch_axis(sc, 0), split, &o, &in));
  OK(x.ctx, sch_parallel(sc, o));
  if (vectorize) OK(x.ctx, sch_vectorize(sc, in));
  x.f = tec_lower(s, "vadd", 3, (te_tensor *[]){A, B, C});
  ck_assert_msg(x.f != NULL, "%s", tec_ctx_error(x.ctx));
  return x;
}

START_TEST(e2e_vadd_symbolic) {
  for (int vec = 0; vec < 2; vec++) {
    vadd_fx x = make_vadd(16, vec);
    tu_assert_contains(tec_lower_str(x.f), ") parallel {");
    tec_module *m = tec_build(x.ctx, 1, &x.f, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(x.ctx));
    tec_packed_fn fn = tec_module_get(m, "vadd");
    static const int64_t ns[] = {1, 15, 16, 17, 48, 1000, 4099};
    for (int k = 0; k < 7; k++)
      for (int t = 0; t < NTHREAD_COUNTS; t++) {
        tec_rt_set_num_threads(thread_counts[t]);
        int64_t n = ns[k];
        DLTensor a = tu_rand_f32(1, &n, 1), b = tu_rand_f32(1, &n, 2), c = tu_zeros(TEC_F32, 1, &n);
        ck_assert_msg(fn((DLTensor *[]){&a, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
        for (int64_t i = 0; i < n; i++)
          ck_assert_msg(tu_f32(&c)[i] == tu_f32(&a)[i] + tu_f32(&b)[i],
                        "vec %d n %lld threads %d i %lld", vec, (long long)n, thread_counts[t],
                        (long long)i);
        tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
      }
    tec_ctx_free(x.ctx);
  }
}
END_TEST

/* The outlined function and the runtime call are in the IR; the loop inside is still vector
 * code with aligned accesses (the buffers keep noalias/align 64 through the closure). */
START_TEST(e2e_outlined_ir_and_asm) {
  vadd_fx x = make_vadd(64, 0);
  tec_module *m = tec_build(x.ctx, 1, &x.f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(x.ctx));
  const char *ir = tec_module_llvm_ir(m);
  tu_assert_contains(tu_ir_head(ir, "vadd_par0"), "define internal i32 @vadd_par0(i64");
  tu_assert_contains(ir, "call i32 @tec_rt_parallel_for(i64");
  tu_assert_contains(ir, "@vadd_par0, ");
  tu_assert_contains(ir, "!alias.scope"); /* noalias parameters of the inlined body */
  ck_assert_ptr_null(strstr(ir, "vector.memcheck")); /* no runtime overlap checks */
  const char *as = tec_module_asm(m);
  ck_assert_msg(as != NULL, "%s", tec_ctx_error(x.ctx));
  tu_assert_contains(as, "vadd_par0:");
#if defined(__x86_64__)
  tu_assert_contains(as, "vaddps");
#elif defined(__aarch64__)
  tu_assert_contains(as, ".4s");
#endif
  /* a user function named like an outlined body takes the name over */
  vadd_fx y = make_vadd(64, 0);
  y.f->name = "vadd_par0";
  lower_func *two[2] = {x.f, y.f};
  tec_module *m2 = tec_build(x.ctx, 2, two, NULL);
  ck_assert_msg(m2 != NULL, "%s", tec_ctx_error(x.ctx));
  ck_assert_ptr_nonnull(tec_module_get(m2, "vadd_par0"));
  int64_t n = 100;
  DLTensor a = tu_rand_f32(1, &n, 1), b = tu_rand_f32(1, &n, 2), c = tu_zeros(TEC_F32, 1, &n);
  tec_rt_set_num_threads(2);
  ck_assert_int_eq(tec_module_get(m2, "vadd_par0")((DLTensor *[]){&a, &b, &c}, 3), 0);
  ck_assert_float_eq(tu_f32(&c)[99], tu_f32(&a)[99] + tu_f32(&b)[99]);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  tec_ctx_free(y.ctx);
  tec_ctx_free(x.ctx);
}
END_TEST

/* (b) GEMM: cache_write accumulator computed at a tile loop whose outer row loop is parallel */
typedef struct mm { te_tensor *a, *b; const ir_expr *k; } mm;
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u;
  return te_sum(ir_mul(TE_AT(m->a, i[0], m->k), TE_AT(m->b, m->k, i[1])), 1, &m->k, NULL);
}

/* C = A B (M x K times K x N); A and B through a and b. */
static te_tensor *gemm_decl(tec_ctx *ctx, int64_t M, int64_t N, int64_t K, te_tensor **a,
                            te_tensor **b) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, K, N));
  mm *m = tec_ctx_alloc(ctx, sizeof *m);
  *m = (mm){A, B, te_reduce_axis_n(ctx, "k", K)};
  *a = A, *b = B;
  return te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = TE_SHAPE(ctx, M, N),
                                            .body = mm_body, .user = m});
}

/* how 0: tile 4x16, accumulator at jo, vectorize, unroll, parallel io;
 * how 1: + B packed through cache_read; how 2: io and jo fused, then parallel. */
static sch_schedule *gemm_schedule(tec_ctx *ctx, int64_t M, int64_t N, int64_t K, int how,
                                   int64_t ti, int64_t tj, te_tensor **args) {
  te_tensor *A, *B, *C = gemm_decl(ctx, M, N, K, &A, &B);
  sch_schedule *s = sch_create(ctx, 1, &C);
  te_tensor *CL = sch_cache_write(s, C, "local");
  ck_assert_msg(CL != NULL, "%s", tec_ctx_error(ctx));
  sch_stage *sc = sch_stage_of(s, C), *sl = sch_stage_of(s, CL);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki, *fused;
  OK(ctx, sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), ti, tj, &io, &jo, &ii, &ji));
  sch_iter *at = jo;
  if (how == 2) {
    OK(ctx, sch_fuse(sc, io, jo, &fused));
    at = fused;
  }
  OK(ctx, sch_compute_at(sl, sc, at));
  sch_iter *li = sch_axis(sl, 0), *lj = sch_axis(sl, 1), *lk = sch_reduce_axis(sl, 0);
  OK(ctx, sch_split(sl, lk, 4, &ko, &ki));
  OK(ctx, sch_reorder(sl, 4, (sch_iter *[]){ko, ki, li, lj}));
  OK(ctx, sch_vectorize(sl, lj));
  OK(ctx, sch_vectorize(sc, ji));
  OK(ctx, sch_unroll(sl, li));
  OK(ctx, sch_parallel(sc, how == 2 ? fused : io));
  if (how == 1) {
    te_tensor *BP = sch_cache_read(s, B, "global", 1, &CL);
    ck_assert_msg(BP != NULL, "%s", tec_ctx_error(ctx));
    sch_stage *sb = sch_stage_of(s, BP);
    sch_iter *bo, *bi;
    OK(ctx, sch_split(sb, sch_axis(sb, 1), tj, &bo, &bi));
    OK(ctx, sch_reorder(sb, 3, (sch_iter *[]){bo, sch_axis(sb, 0), bi}));
    OK(ctx, sch_vectorize(sb, bi));
    OK(ctx, sch_parallel(sb, bo)); /* the packing is parallel too */
  }
  args[0] = A, args[1] = B, args[2] = C;
  return s;
}

static void run_gemm(int64_t M, int64_t N, int64_t K, int how) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *args[3];
  sch_schedule *s = gemm_schedule(ctx, M, N, K, how, 4, 16, args);
  tec_packed_fn fn = tu_build(ctx, s, "gemm", 3, args);
  int64_t sa[2] = {M, K}, sb_[2] = {K, N}, sc_[2] = {M, N};
  DLTensor a = tu_rand_f32(2, sa, 31), b = tu_rand_f32(2, sb_, 32);
  float *ref = malloc(sizeof(float) * (size_t)(M * N));
  tu_ref_matmul(tu_f32(&a), tu_f32(&b), ref, M, N, K);
  for (int t = 0; t < NTHREAD_COUNTS; t++) {
    tec_rt_set_num_threads(thread_counts[t]);
    DLTensor c = tu_zeros(TEC_F32, 2, sc_);
    ck_assert_msg(fn((DLTensor *[]){&a, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
    double err = tu_max_err(tu_f32(&c), ref, M * N);
    ck_assert_msg(err < 1e-4, "gemm %lldx%lldx%lld how %d threads %d: error %g", (long long)M,
                  (long long)N, (long long)K, how, thread_counts[t], err);
    tec_dl_free(&c);
  }
  free(ref);
  tec_dl_free(&a), tec_dl_free(&b);
  tec_ctx_free(ctx);
}

START_TEST(e2e_gemm_parallel_tiles) {
  for (int how = 0; how < 3; how++) {
    run_gemm(64, 48, 80, how);
    run_gemm(37, 50, 19, how);
    run_gemm(5, 16, 8, how);
  }
}
END_TEST

/* (c) a reduction (row sums and row maxima) over a symbolic number of rows, rows parallel */
typedef struct red { te_tensor *a; const ir_expr *k; int is_max; } red;
static const ir_expr *red_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  red *r = u;
  const ir_expr *x = TE_AT(r->a, i[0], r->k);
  return r->is_max ? te_max(x, 1, &r->k, NULL) : te_sum(x, 1, &r->k, NULL);
}

START_TEST(e2e_reduction_parallel_rows) {
  for (int is_max = 0; is_max < 2; is_max++) {
    tec_ctx *ctx = tec_ctx_new();
    const ir_expr *n = te_size_var(ctx, "n");
    const int64_t K = 37;
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *[]){n, ir_int(ctx, K)});
    red r = {A, te_reduce_axis_n(ctx, "k", K), is_max};
    te_tensor *R = te_compute(ctx, &(te_compute_decl){.name = "R", .ndim = 1, .shape = &n,
                                                      .body = red_body, .user = &r});
    sch_schedule *s = sch_create(ctx, 1, &R);
    sch_stage *sr = sch_stage_of(s, R);
    sch_iter *o, *in;
    OK(ctx, sch_split(sr, sch_axis(sr, 0), 8, &o, &in));
    OK(ctx, sch_parallel(sr, o));
    tec_packed_fn fn = tu_build(ctx, s, "rowred", 2, (te_tensor *[]){A, R});
    static const int64_t ns[] = {1, 7, 8, 9, 100, 333};
    for (int k = 0; k < 6; k++)
      for (int t = 0; t < NTHREAD_COUNTS; t++) {
        tec_rt_set_num_threads(thread_counts[t]);
        int64_t sh[2] = {ns[k], K};
        DLTensor a = tu_rand_f32(2, sh, 7), out = tu_zeros(TEC_F32, 1, &sh[0]);
        ck_assert_msg(fn((DLTensor *[]){&a, &out}, 2) == 0, "%s", tec_rt_last_error());
        for (int64_t i = 0; i < ns[k]; i++) {
          double acc = is_max ? -INFINITY : 0;
          for (int64_t j = 0; j < K; j++) {
            double v = tu_f32(&a)[i * K + j];
            acc = is_max ? fmax(acc, v) : acc + v;
          }
          ck_assert_msg(fabs(tu_f32(&out)[i] - acc) < 1e-4, "max %d n %lld threads %d row %lld",
                        is_max, (long long)ns[k], thread_counts[t], (long long)i);
        }
        tec_dl_free(&a), tec_dl_free(&out);
      }
    tec_ctx_free(ctx);
  }
}
END_TEST

/* (d) two axes fused, split, the outer part parallel and the inner vectorized */
static const ir_expr *affine2(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(ir_mul(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 2.0)), ir_float(ctx, 1.0));
}

START_TEST(e2e_fused_split_parallel) {
  static const int64_t shapes[][2] = {{33, 70}, {16, 16}, {1, 5}, {7, 64}};
  for (int k = 0; k < 4; k++) {
    tec_ctx *ctx = tec_ctx_new();
    int64_t M = shapes[k][0], N = shapes[k][1];
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, N));
    te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = A->shape,
                                                      .body = affine2, .user = A});
    sch_schedule *s = sch_create(ctx, 1, &B);
    sch_stage *sb = sch_stage_of(s, B);
    sch_iter *f, *o, *in;
    OK(ctx, sch_fuse(sb, sch_axis(sb, 0), sch_axis(sb, 1), &f));
    OK(ctx, sch_split(sb, f, 16, &o, &in));
    OK(ctx, sch_parallel(sb, o));
    OK(ctx, sch_vectorize(sb, in));
    tec_packed_fn fn = tu_build(ctx, s, "fused", 2, (te_tensor *[]){A, B});
    int64_t sh[2] = {M, N};
    DLTensor a = tu_rand_f32(2, sh, 3);
    for (int t = 0; t < NTHREAD_COUNTS; t++) {
      tec_rt_set_num_threads(thread_counts[t]);
      DLTensor b = tu_zeros(TEC_F32, 2, sh);
      ck_assert_msg(fn((DLTensor *[]){&a, &b}, 2) == 0, "%s", tec_rt_last_error());
      for (int64_t i = 0; i < M * N; i++)
        ck_assert_msg(tu_f32(&b)[i] == tu_f32(&a)[i] * 2.0f + 1.0f, "%lldx%lld threads %d i %lld",
                      (long long)M, (long long)N, thread_counts[t], (long long)i);
      tec_dl_free(&b);
    }
    tec_dl_free(&a);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* A heap temporary inside the parallel body (a 32768-float producer tile per iteration): with an
 * allocator that fails, the kernel returns -1 with the message of the failing chunk; with one
 * that fails only sometimes, what was allocated is still freed (ASan's leak check). */
static const ir_expr *times2(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0]), ir_float(ctx, 2.0));
}
static const ir_expr *plus1(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT((te_tensor *)u, i[0]), ir_float(ctx, 1.0));
}
static _Atomic int alloc_budget;
static void *budget_alloc(size_t bytes, void *user) {
  (void)user;
  if (atomic_fetch_sub(&alloc_budget, 1) <= 0) return NULL;
  return aligned_alloc(TEC_ALIGN, bytes);
}
static void budget_free(void *p, void *user) {
  (void)user;
  free(p);
}

/* fn computes C = A * 2 + 1 over n floats through a 131072-byte heap tile 'B'. With 1, 2 and
 * 3 threads: right numbers with the default allocator, then with allocations allowed to
 * succeed budget = 0, step, 2 * step, ... (below nbudget) times: -1 with the tile's message
 * below ok_from, success from it on. */
static void check_tile_oom(tec_packed_fn fn, int64_t n, int nbudget, int step, int ok_from) {
  DLTensor a = tu_rand_f32(1, &n, 4), c = tu_zeros(TEC_F32, 1, &n);
  for (int t = 0; t < NTHREAD_COUNTS; t++) {
    tec_rt_set_num_threads(thread_counts[t]);
    ck_assert_msg(fn((DLTensor *[]){&a, &c}, 2) == 0, "%s", tec_rt_last_error());
    for (int64_t i = 0; i < n; i++) ck_assert_float_eq(tu_f32(&c)[i], tu_f32(&a)[i] * 2.0f + 1.0f);
    for (int budget = 0; budget < nbudget; budget += step) {
      atomic_store(&alloc_budget, budget);
      tec_rt_set_allocator(budget_alloc, budget_free, NULL);
      tec_rt_set_error(NULL);
      int32_t rc = fn((DLTensor *[]){&a, &c}, 2);
      tec_rt_set_allocator(NULL, NULL, NULL);
      if (budget >= ok_from) {
        ck_assert_int_eq(rc, 0);
        continue;
      }
      ck_assert_int_eq(rc, -1);
      tu_assert_contains(tec_rt_last_error(), "tile: out of memory allocating 131072 bytes for 'B'");
    }
  }
  tec_dl_free(&a), tec_dl_free(&c);
}

START_TEST(e2e_heap_failure_inside_parallel_body) {
  tec_ctx *ctx = tec_ctx_new();
  const int64_t n = 32768 * 9; /* a tile of 128 KiB: past the stack limit, on the heap */
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, n));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = A->shape,
                                                    .body = times2, .user = A});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1, .shape = A->shape,
                                                    .body = plus1, .user = B});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sb = sch_stage_of(s, B), *sc = sch_stage_of(s, C);
  sch_iter *o, *in;
  OK(ctx, sch_split(sc, sch_axis(sc, 0), 32768, &o, &in));
  OK(ctx, sch_parallel(sc, o));
  OK(ctx, sch_compute_at(sb, sc, o));
  tec_packed_fn fn = tu_build(ctx, s, "tile", 2, (te_tensor *[]){A, C});
  check_tile_oom(fn, n, 10, 3, 9);
  tec_ctx_free(ctx);
}
END_TEST

/* A generated parallel kernel called from inside a parallel_for body runs serially there. */
typedef struct kernel_job { tec_packed_fn fn; DLTensor *a, *b, *c; int64_t n; } kernel_job;
static int32_t call_kernel(int64_t begin, int64_t end, void *u) {
  kernel_job *j = u;
  for (int64_t r = begin; r < end; r++) {
    DLTensor a = *j->a, b = *j->b, c = *j->c;
    a.byte_offset = b.byte_offset = c.byte_offset = (uint64_t)(r * j->n * 4);
    int32_t rc = j->fn((DLTensor *[]){&a, &b, &c}, 3);
    if (rc != 0) return rc;
  }
  return 0;
}

START_TEST(e2e_kernel_inside_parallel_for) {
  vadd_fx x = make_vadd(16, 1);
  tec_module *m = tec_build(x.ctx, 1, &x.f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(x.ctx));
  int64_t rows = 6, n = 96, total = rows * n;
  DLTensor a = tu_rand_f32(1, &total, 1), b = tu_rand_f32(1, &total, 2), c = tu_zeros(TEC_F32, 1, &total);
  int64_t shape = n;
  a.shape = b.shape = c.shape = &shape;
  kernel_job j = {tec_module_get(m, "vadd"), &a, &b, &c, n};
  tec_rt_set_num_threads(3);
  ck_assert_msg(tec_rt_parallel_for(rows, call_kernel, &j) == 0, "%s", tec_rt_last_error());
  for (int64_t i = 0; i < total; i++) ck_assert_float_eq(tu_f32(&c)[i], tu_f32(&a)[i] + tu_f32(&b)[i]);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  tec_ctx_free(x.ctx);
}
END_TEST


/* ================= parallel_launch_point ================= */

/* The k-blocked GEMM (accumulate into C): tile (mr x nr), k split by kb, order k.outer,
 * j.outer (parallel), i.outer, k.inner, i.inner (unrolled), j.inner (vectorized); launch
 * point on k.outer when `launch`. */
static lower_func *kblock_gemm(tec_ctx *ctx, int64_t M, int64_t N, int64_t K, int64_t kb,
                               int launch, const char *name) {
  te_tensor *A, *B, *C = gemm_decl(ctx, M, N, K, &A, &B);
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki;
  OK(ctx, sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 4, 16, &io, &jo, &ii, &ji));
  OK(ctx, sch_split(sc, sch_reduce_axis(sc, 0), kb, &ko, &ki));
  OK(ctx, sch_reorder(sc, 6, (sch_iter *[]){ko, jo, io, ki, ii, ji}));
  OK(ctx, sch_unroll(sc, ii));
  OK(ctx, sch_vectorize(sc, ji));
  OK(ctx, sch_parallel(sc, jo));
  if (launch) OK(ctx, sch_pragma(sc, ko, "parallel_launch_point", NULL));
  lower_func *f = tec_lower(s, name, 3, (te_tensor *[]){A, B, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  return f;
}

/* Occurrences of needle in the definition of raw kernel `fn` in the LLVM IR text (the checked
 * entry inlines the raw kernel, so the module holds every call twice). */
static int count_in_raw(tec_module *m, const char *fn, const char *needle) {
  const char *ir = tec_module_llvm_ir(m);
  char raw[128];
  snprintf(raw, sizeof raw, "%s_raw", fn);
  const char *p = tu_ir_define(ir, raw);
  ck_assert_msg(p != NULL, "no define of @%s in the IR", raw);
  const char *end = strstr(p, "\n}\n");
  int n = 0;
  for (; (p = strstr(p, needle)) && (!end || p < end); p += strlen(needle)) n++;
  return n;
}

static void check_gemm(tec_packed_fn fn, int64_t M, int64_t N, int64_t K, const char *what) {
  int64_t sa[2] = {M, K}, sb_[2] = {K, N}, sc_[2] = {M, N};
  DLTensor a = tu_rand_f32(2, sa, 41), b = tu_rand_f32(2, sb_, 42);
  float *ref = malloc(sizeof(float) * (size_t)(M * N));
  tu_ref_matmul(tu_f32(&a), tu_f32(&b), ref, M, N, K);
  for (int t = 0; t < NTHREAD_COUNTS; t++) {
    tec_rt_set_num_threads(thread_counts[t]);
    for (int rep = 0; rep < 3; rep++) {
      DLTensor c = tu_rand_f32(2, sc_, 43 + rep); /* garbage: the init nest must clear it */
      ck_assert_msg(fn((DLTensor *[]){&a, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
      double err = tu_max_err(tu_f32(&c), ref, M * N);
      ck_assert_msg(err < 1e-4, "%s %lldx%lldx%lld threads %d: error %g", what, (long long)M,
                    (long long)N, (long long)K, thread_counts[t], err);
      tec_dl_free(&c);
    }
  }
  free(ref);
  tec_dl_free(&a), tec_dl_free(&b);
}

START_TEST(launch_kblocked_gemm) {
  static const int64_t shapes[][4] = {{64, 64, 64, 16}, {64, 96, 48, 8}, {37, 50, 19, 8},
                                      {5, 16, 8, 4}, {33, 130, 70, 16}};
  for (int k = 0; k < 5; k++) {
    tec_ctx *ctx = tec_ctx_new();
    const int64_t *sh = shapes[k];
    lower_func *f = kblock_gemm(ctx, sh[0], sh[1], sh[2], sh[3], 1, "kgemm");
    tu_assert_contains(tec_lower_str(f), "attr pragma_parallel_launch_point");
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
    check_gemm(tec_module_get(m, "kgemm"), sh[0], sh[1], sh[2], "launch");
    if (k == 0) {
      const char *ir = tec_module_llvm_ir(m);
      tu_assert_contains(tu_ir_head(ir, "kgemm_launch0"), "define internal i32 @kgemm_launch0(i32");
      tu_assert_contains(ir, "call i32 @tec_rt_parallel_barrier()");
      ck_assert_int_eq(count_in_raw(m, "kgemm", "call i32 @tec_rt_parallel_launch("), 1);
      /* the init nest (C = 0, its own parallel nest before k.outer) is outside the region */
      ck_assert_int_eq(count_in_raw(m, "kgemm", "call i32 @tec_rt_parallel_for("), 1);
      ck_assert_ptr_null(tu_ir_define(ir, "kgemm_par1")); /* no trampoline */
    }
    tec_ctx_free(ctx);
  }
}
END_TEST

/* Stores outside the parallel loop run once (task 0), and every task sees them after the
 * barrier: a per-tile row sum S (a serial reduction, computed at the marked loop i.outer) read
 * by the parallel loop over column tiles. If every task ran S's update, S would be counted
 * several times (or torn). */
typedef struct center { te_tensor *a, *s; const ir_expr *k; } center;
static const ir_expr *rowsum_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  center *c = u;
  return te_sum(TE_AT(c->a, i[0], c->k), 1, &c->k, NULL);
}
static const ir_expr *center_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  center *c = u;
  return ir_sub(TE_AT(c->a, i[0], i[1]), TE_AT(c->s, i[0]));
}

START_TEST(launch_stores_outside_parallel_run_once) {
  static const int64_t shapes[][2] = {{16, 64}, {13, 70}, {3, 5}};
  for (int k = 0; k < 3; k++) {
    tec_ctx *ctx = tec_ctx_new();
    int64_t M = shapes[k][0], N = shapes[k][1];
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, N));
    center *c = tec_ctx_alloc(ctx, sizeof *c);
    c->a = A;
    c->k = te_reduce_axis_n(ctx, "k", N);
    te_tensor *S = te_compute(ctx, &(te_compute_decl){.name = "S", .ndim = 1,
                                                      .shape = TE_SHAPE(ctx, M),
                                                      .body = rowsum_body, .user = c});
    c->s = S;
    te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                                      .body = center_body, .user = c});
    sch_schedule *s = sch_create(ctx, 1, &C);
    sch_stage *sc = sch_stage_of(s, C), *ss = sch_stage_of(s, S);
    sch_iter *io, *jo, *ii, *ji;
    OK(ctx, sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 4, 8, &io, &jo, &ii, &ji));
    OK(ctx, sch_parallel(sc, jo));
    OK(ctx, sch_compute_at(ss, sc, io));
    OK(ctx, sch_pragma(sc, io, "parallel_launch_point", NULL));
    lower_func *f = tec_lower(s, "center", 2, (te_tensor *[]){A, C});
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
    if (k < 2) { /* 3x5: one tile, no loop left to launch over */
      ck_assert_int_eq(count_in_raw(m, "center", "call i32 @tec_rt_parallel_launch("), 1);
      ck_assert_int_eq(count_in_raw(m, "center", "call i32 @tec_rt_parallel_for("), 0);
    }
    tec_packed_fn fn = tec_module_get(m, "center");
    int64_t sh[2] = {M, N};
    DLTensor a = tu_rand_f32(2, sh, 9);
    for (int t = 0; t < NTHREAD_COUNTS; t++) {
      tec_rt_set_num_threads(thread_counts[t]);
      for (int rep = 0; rep < 20; rep++) {
        DLTensor out = tu_zeros(TEC_F32, 2, sh);
        ck_assert_msg(fn((DLTensor *[]){&a, &out}, 2) == 0, "%s", tec_rt_last_error());
        for (int64_t i = 0; i < M; i++) {
          double sum = 0;
          for (int64_t j = 0; j < N; j++) sum += tu_f32(&a)[i * N + j];
          for (int64_t j = 0; j < N; j++)
            ck_assert_msg(fabs(tu_f32(&out)[i * N + j] - (tu_f32(&a)[i * N + j] - sum)) < 1e-4,
                          "%lldx%lld threads %d (%lld, %lld)", (long long)M, (long long)N,
                          thread_counts[t], (long long)i, (long long)j);
        }
        tec_dl_free(&out);
      }
    }
    tec_dl_free(&a);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* A heap temporary failing inside one task's chunk: -1 with its message, no hang, nothing
 * leaked; the tile example with the parallel loop inside a marked serial loop. */
START_TEST(launch_heap_failure_inside_task) {
  tec_ctx *ctx = tec_ctx_new();
  const int64_t n = 32768 * 12;
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, n));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = A->shape,
                                                    .body = times2, .user = A});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1, .shape = A->shape,
                                                    .body = plus1, .user = B});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sb = sch_stage_of(s, B), *sc = sch_stage_of(s, C);
  sch_iter *o, *in, *oo, *oi;
  OK(ctx, sch_split(sc, sch_axis(sc, 0), 32768, &o, &in));
  OK(ctx, sch_split(sc, o, 6, &oo, &oi));
  OK(ctx, sch_parallel(sc, oi));
  OK(ctx, sch_compute_at(sb, sc, oi));
  OK(ctx, sch_pragma(sc, oo, "parallel_launch_point", NULL));
  lower_func *f = tec_lower(s, "tile", 2, (te_tensor *[]){A, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(count_in_raw(m, "tile", "call i32 @tec_rt_parallel_launch("), 1);
  tec_packed_fn fn = tec_module_get(m, "tile");
  check_tile_oom(fn, n, 14, 1, 12);
  tec_ctx_free(ctx);
}
END_TEST

/* Without a parallel loop inside, the marked loop is plain serial code; inside a parallel
 * loop, the pragma is refused by tec_lower with what to do. */
START_TEST(launch_point_plain_and_refused) {
  tec_ctx *ctx = tec_ctx_new();
  const int64_t n = 100;
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, n));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = A->shape,
                                                    .body = times2, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &B);
  sch_stage *sb = sch_stage_of(s, B);
  sch_iter *o, *in;
  OK(ctx, sch_split(sb, sch_axis(sb, 0), 8, &o, &in));
  OK(ctx, sch_pragma(sb, o, "parallel_launch_point", NULL));
  lower_func *f = tec_lower(s, "plain", 2, (te_tensor *[]){A, B});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_ptr_null(strstr(tec_module_llvm_ir(m), "tec_rt_parallel_launch"));
  DLTensor a = tu_rand_f32(1, &n, 4), b = tu_zeros(TEC_F32, 1, &n);
  tec_rt_set_num_threads(3);
  ck_assert_int_eq(tec_module_get(m, "plain")((DLTensor *[]){&a, &b}, 2), 0);
  for (int64_t i = 0; i < n; i++) ck_assert_float_eq(tu_f32(&b)[i], tu_f32(&a)[i] * 2.0f);
  tec_dl_free(&a), tec_dl_free(&b);
  tec_ctx_free(ctx);

  ctx = tec_ctx_new();
  A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, n));
  B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = A->shape, .body = times2,
                                         .user = A});
  s = sch_create(ctx, 1, &B);
  sb = sch_stage_of(s, B);
  OK(ctx, sch_split(sb, sch_axis(sb, 0), 8, &o, &in));
  OK(ctx, sch_parallel(sb, o));
  OK(ctx, sch_pragma(sb, in, "parallel_launch_point", NULL));
  ck_assert_ptr_null(tec_lower(s, "bad", 2, (te_tensor *[]){A, B}));
  tu_assert_contains(tec_ctx_error(ctx), "tec_lower 'bad': pragma parallel_launch_point: loop "
                                         "'i.inner' is inside parallel loop 'i.outer'");
  tec_ctx_free(ctx);
}
END_TEST

/* ================= ahead of time ================= */

static const char *aot_main =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include \"vadd.h\"\n"
    "void tec_rt_set_num_threads(int n);\n"
    "int main(void) {\n"
    "  int64_t n = 1000;\n"
    "  float *a = aligned_alloc(64, 4096), *b = aligned_alloc(64, 4096), *c = aligned_alloc(64, 4096);\n"
    "  for (int i = 0; i < n; i++) a[i] = i, b[i] = 2 * i;\n"
    "  for (int t = 1; t <= 3; t++) {\n"
    "    tec_rt_set_num_threads(t);\n"
    "    for (int i = 0; i < n; i++) c[i] = -1;\n"
    "    if (vadd_raw(a, b, c, n) != 0) return 1;\n"
    "    for (int i = 0; i < n; i++) if (c[i] != 3 * i) return 2;\n"
    "  }\n"
    "  free(a), free(b), free(c);\n"
    "  puts(\"ok\");\n"
    "  return 0;\n"
    "}\n";

START_TEST(aot_object_links_with_runtime) {
  vadd_fx x = make_vadd(16, 1);
  char self[512];
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
  ck_assert_int_gt(k, 0);
  self[k] = '\0';
  *strrchr(self, '/') = '\0'; /* <build>/tests */
  char rtlib[600];
  snprintf(rtlib, sizeof rtlib, "%s/../libtec_runtime.a", self);
  /* other targets: the outlined body and the runtime call are there too */
  char dir[] = "/tmp/tec_par_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[256], cmd[2048];
  char *txt = tu_emit_text(x.ctx, x.f, "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72",
                           TEC_EMIT_ASM);
  tu_assert_contains(txt, "bl\ttec_rt_parallel_for");
  tu_assert_contains(txt, "vadd_par0:");
  tu_assert_contains(txt, "fadd\tv"); /* NEON inside the outlined body */
  free(txt);
  if (access(rtlib, R_OK) == 0 && system("cc --version > /dev/null 2>&1") == 0) {
    snprintf(path, sizeof path, "%s/vadd.o", dir);
    ck_assert_int_eq(tec_emit(x.ctx, 1, &x.f, NULL, TEC_EMIT_OBJECT, path), 0);
    snprintf(path, sizeof path, "%s/vadd.h", dir);
    ck_assert_int_eq(tec_emit(x.ctx, 1, &x.f, NULL, TEC_EMIT_HEADER, path), 0);
    snprintf(path, sizeof path, "%s/main.c", dir);
    FILE *f = fopen(path, "w");
    fputs(aot_main, f);
    fclose(f);
    const char *san = tu_san_flags(); /* the runtime library's sanitizers, if any */
    snprintf(cmd, sizeof cmd,
             "cd %s && cc -std=c11 -Wall -Werror %s -o prog main.c vadd.o '%s' -lpthread && "
             "./prog > out.txt && grep -q ok out.txt",
             dir, san, rtlib);
    ck_assert_int_eq(system(cmd), 0);
  }
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
  tec_ctx_free(x.ctx);
}
END_TEST

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--print-threads") == 0) {
    printf("%d\n", tec_rt_get_num_threads());
    return 0;
  }
  Suite *s = suite_create("parallel");
  TCase *rt = tcase_create("runtime");
  tcase_add_test(rt, threads_api);
  tcase_add_test(rt, threads_env_subprocess);
  tcase_add_test(rt, parallel_for_covers_each_index_once);
  tcase_add_test(rt, parallel_for_many_jobs);
  tcase_add_test(rt, parallel_for_error_propagates);
  tcase_add_test(rt, parallel_for_nested_runs_serially);
  tcase_add_test(rt, parallel_for_concurrent_callers);
  tcase_add_test(rt, parallel_for_after_fork);
  tcase_add_test(rt, launch_runs_every_task_with_barriers);
  tcase_add_test(rt, launch_failure_releases_barriers);
  tcase_add_test(rt, launch_nested_runs_serially);
  suite_add_tcase(s, rt);
  TCase *e2e = tcase_create("schedules");
  tcase_add_test(e2e, e2e_vadd_symbolic);
  tcase_add_test(e2e, e2e_outlined_ir_and_asm);
  tcase_add_test(e2e, e2e_gemm_parallel_tiles);
  tcase_add_test(e2e, e2e_reduction_parallel_rows);
  tcase_add_test(e2e, e2e_fused_split_parallel);
  tcase_add_test(e2e, e2e_heap_failure_inside_parallel_body);
  tcase_add_test(e2e, e2e_kernel_inside_parallel_for);
  tcase_add_test(e2e, aot_object_links_with_runtime);
  tcase_add_test(e2e, launch_kblocked_gemm);
  tcase_add_test(e2e, launch_stores_outside_parallel_run_once);
  tcase_add_test(e2e, launch_heap_failure_inside_task);
  tcase_add_test(e2e, launch_point_plain_and_refused);
  suite_add_tcase(s, e2e);
  return tu_run(s);
}

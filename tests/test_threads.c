/* test_threads.c — tec used from 8 threads at once (run under ThreadSanitizer by
 * `scripts/dev test`: the build-tsan tree, TEC_SANITIZE=thread).
 *
 *   own_ctx:       8 threads, each with its own ctx, declare + schedule (split, reorder,
 *                  parallel, vectorize) + lower + JIT-build + run a matmul, three times, each
 *                  result against a naive reference.
 *   shared_module: one module with a prepare/run split (a topi dense layer, constant weights
 *                  packed in prepare) called by 8 threads at once on their own inputs and
 *                  outputs, from the very first call: every output right, prepare run once.
 *   shared_pool:   8 threads calling parallel functions at once share the runtime's pool
 *                  (a call that finds it busy runs serially): every output right. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include "testutil.h"

#define NTHREADS 8
/* under qemu-user (tu_emulated) a JIT build takes seconds: each own_ctx thread builds once */
static int reps(void) { return tu_emulated() ? 1 : 3; }

/* ---- own_ctx ---- */

typedef struct mm { te_tensor *a, *b; const ir_expr *k; } mm;
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  mm *m = user;
  return te_sum(ir_mul(TE_AT(m->a, i[0], m->k), TE_AT(m->b, m->k, i[1])), 1, &m->k, NULL);
}

static int build_and_check(unsigned seed, char *msg, size_t cap) {
  const int64_t M = 40 + seed % 7, N = 48, K = 36;
  tec_ctx *ctx = tec_ctx_new();
  if (!ctx) return snprintf(msg, cap, "tec_ctx_new failed"), -1;
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, K, N));
  mm mmu = {A, B, te_reduce_axis_n(ctx, "k", K)};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, M, N),
                                                    .body = mm_body, .user = &mmu});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *st = sch_stage_of(s, C);
  sch_iter *io, *ii, *jo, *ji;
  int rc = sch_split(st, sch_axis(st, 0), 8, &io, &ii);
  rc |= sch_split(st, sch_axis(st, 1), 16, &jo, &ji);
  rc |= sch_reorder(st, 5, (sch_iter *[]){io, jo, sch_reduce_axis(st, 0), ii, ji});
  rc |= sch_parallel(st, io);
  rc |= sch_vectorize(st, ji);
  lower_func *f = rc ? NULL : tec_lower(s, "mm", 3, (te_tensor *[]){A, B, C});
  tec_module *m = f ? tec_build(ctx, 1, &f, NULL) : NULL;
  int ret = 0;
  if (!m) {
    snprintf(msg, cap, "build: %s", tec_ctx_error(ctx));
    ret = -1;
  } else {
    DLTensor a = tu_rand_f32(2, (int64_t[]){M, K}, seed);
    DLTensor b = tu_rand_f32(2, (int64_t[]){K, N}, seed + 100);
    DLTensor c = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
    float *want = malloc(sizeof(float) * (size_t)(M * N));
    tu_ref_matmul(a.data, b.data, want, M, N, K);
    if (tec_module_run(m, "mm", 3, (DLTensor *[]){&a, &b, &c}) != 0) {
      snprintf(msg, cap, "run: %s", tec_rt_last_error());
      ret = -1;
    } else if (tu_max_err(c.data, want, M * N) > 1e-5) {
      snprintf(msg, cap, "error %g", tu_max_err(c.data, want, M * N));
      ret = -1;
    }
    free(want);
    tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
    tec_module_free(m);
  }
  tec_ctx_free(ctx);
  return ret;
}

typedef struct job {
  unsigned seed;
  int fails;
  char msg[256];
  /* shared_module */
  tec_module *m;
  DLTensor *w, *bias;
  const float *want_w;
} job;

static void *own_ctx_main(void *arg) {
  job *j = arg;
  for (int r = 0; r < reps(); r++)
    if (build_and_check(j->seed * 10 + (unsigned)r, j->msg, sizeof j->msg)) j->fails++;
  return NULL;
}

START_TEST(own_ctx) {
  pthread_t th[NTHREADS];
  job jobs[NTHREADS] = {0};
  for (int i = 0; i < NTHREADS; i++) {
    jobs[i].seed = (unsigned)i + 1;
    ck_assert_int_eq(pthread_create(&th[i], NULL, own_ctx_main, &jobs[i]), 0);
  }
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < NTHREADS; i++)
    ck_assert_msg(jobs[i].fails == 0, "thread %d: %d failures, last: %s", i, jobs[i].fails,
                  jobs[i].msg);
}
END_TEST

/* ---- shared_module: dense with constant (transposed) weights, packed in prepare ---- */

enum { DM = 6, DN = 40, DK = 24 };

static void ref_dense(const float *a, const float *w, const float *bias, float *out) {
  for (int i = 0; i < DM; i++)
    for (int j = 0; j < DN; j++) {
      double s = bias[j];
      for (int k = 0; k < DK; k++) s += (double)a[i * DK + k] * w[j * DK + k];
      out[i * DN + j] = (float)s;
    }
}

static void *shared_main(void *arg) {
  job *j = arg;
  DLTensor a = tu_rand_f32(2, (int64_t[]){DM, DK}, j->seed);
  DLTensor o = tu_zeros(TEC_F32, 2, (int64_t[]){DM, DN});
  float want[DM * DN];
  ref_dense(a.data, j->w->data, j->bias->data, want);
  for (int r = 0; r < 20; r++) {
    if (tec_module_run(j->m, "dense", 4, (DLTensor *[]){&a, j->w, j->bias, &o}) != 0) {
      snprintf(j->msg, sizeof j->msg, "run: %s", tec_rt_last_error());
      j->fails++;
    } else if (tu_max_err(o.data, want, DM * DN) > 1e-5) {
      snprintf(j->msg, sizeof j->msg, "error %g", tu_max_err(o.data, want, DM * DN));
      j->fails++;
    }
  }
  tec_dl_free(&a), tec_dl_free(&o);
  return NULL;
}

START_TEST(shared_module) {
  tec_ctx *ctx = tec_ctx_new();
  topi_dense p = {.m = DM, .n = DN, .k = DK, .b_transposed = 1, .const_b = 1,
                  .epi = {.bias = 1}};
  topi_op op;
  ck_assert_msg(topi_instantiate(ctx, topi_template_find("dense"), &p, NULL, &op) == 0, "%s",
                tec_ctx_error(ctx));
  lower_func *f = tec_lower(op.sched, "dense", op.nargs, op.args);
  ck_assert_msg(f && f->prepare, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  DLTensor w = tu_rand_f32(2, (int64_t[]){DN, DK}, 7);
  DLTensor bias = tu_rand_f32(1, (int64_t[]){DN}, 8);
  pthread_t th[NTHREADS];
  job jobs[NTHREADS] = {0};
  for (int i = 0; i < NTHREADS; i++) {
    jobs[i] = (job){.seed = (unsigned)i + 20, .m = m, .w = &w, .bias = &bias};
    ck_assert_int_eq(pthread_create(&th[i], NULL, shared_main, &jobs[i]), 0);
  }
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < NTHREADS; i++)
    ck_assert_msg(jobs[i].fails == 0, "thread %d: %d failures, last: %s", i, jobs[i].fails,
                  jobs[i].msg);
  ck_assert_int_eq(tec_module_prepare_count(m, "dense"), 1);
  tec_dl_free(&w), tec_dl_free(&bias);
  tec_ctx_free(ctx);
}
END_TEST

/* ---- shared_pool: parallel functions called from many threads at once ---- */

typedef struct pjob {
  tec_packed_fn fn;
  unsigned seed;
  int fails;
  char msg[128];
} pjob;

enum { PN = 4096 };

static void *pool_main(void *arg) {
  pjob *j = arg;
  DLTensor a = tu_rand_f32(1, (int64_t[]){PN}, j->seed), b = tu_zeros(TEC_F32, 1, (int64_t[]){PN});
  for (int r = 0; r < 50; r++) {
    if (tec_call(j->fn, 2, (DLTensor *[]){&a, &b}) != 0) {
      snprintf(j->msg, sizeof j->msg, "%s", tec_rt_last_error());
      j->fails++;
      continue;
    }
    const float *x = a.data, *y = b.data;
    for (int i = 0; i < PN; i++)
      if (fabsf(y[i] - (x[i] * 3.0f + 1.0f)) > 1e-6f) { /* 1 ulp: the code may fuse the FMA */
        snprintf(j->msg, sizeof j->msg, "element %d: %g, expected %g", i, y[i], x[i] * 3.0f + 1.0f);
        j->fails++;
        break;
      }
  }
  tec_dl_free(&a), tec_dl_free(&b);
  return NULL;
}

static const ir_expr *affine(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  const te_tensor *A = user;
  return ir_add(ir_mul(TE_AT(A, i[0]), ir_float(ctx, 3.0)), ir_float(ctx, 1.0));
}

START_TEST(shared_pool) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, PN));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, PN),
                                                    .body = affine, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &B);
  sch_stage *st = sch_stage_of(s, B);
  sch_iter *o, *i;
  OK(ctx, sch_split(st, sch_axis(st, 0), 256, &o, &i));
  OK(ctx, sch_parallel(st, o));
  OK(ctx, sch_vectorize(st, i));
  tec_packed_fn fn = tu_build(ctx, s, "affine", 2, (te_tensor *[]){A, B});
  pthread_t th[NTHREADS];
  pjob jobs[NTHREADS] = {0};
  for (int k = 0; k < NTHREADS; k++) {
    jobs[k] = (pjob){.fn = fn, .seed = (unsigned)k + 40};
    ck_assert_int_eq(pthread_create(&th[k], NULL, pool_main, &jobs[k]), 0);
  }
  for (int k = 0; k < NTHREADS; k++) pthread_join(th[k], NULL);
  for (int k = 0; k < NTHREADS; k++)
    ck_assert_msg(jobs[k].fails == 0, "thread %d: %d failures, last: %s", k, jobs[k].fails,
                  jobs[k].msg);
  tec_ctx_free(ctx);
}
END_TEST

Suite *threads_suite(void) {
  Suite *s = suite_create("threads");
  TCase *t = tcase_create("threads");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, own_ctx);
  tcase_add_test(t, shared_module);
  tcase_add_test(t, shared_pool);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(threads_suite()); }

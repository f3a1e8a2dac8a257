/* test_dynamic.c — dynamic chunking of parallel loops: tec_rt_parallel_for_dynamic (every
 * index once, chunk boundaries, the automatic chunk size, the lowest failing chunk reported,
 * no chunk started after a failure, nested and bad calls) and the schedule's pragma
 * parallel_dynamic end to end (a tiled GEMM against naive C with 1-3 threads, the runtime
 * call in the IR; a serial loop, a bad chunk value and a loop inside a
 * parallel_launch_point region refused with their messages). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"


/* ================= runtime ================= */

typedef struct cover {
  _Atomic int *hits;
  _Atomic int calls;
  _Atomic int bad_start; /* a chunk that did not start at a multiple of chunk */
  _Atomic int64_t max_len;
  int64_t chunk;
} cover;

static int32_t cover_body(int64_t begin, int64_t end, void *u) {
  cover *c = u;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&c->hits[i], 1);
  atomic_fetch_add(&c->calls, 1);
  if (c->chunk > 0 && begin % c->chunk != 0) atomic_store(&c->bad_start, 1);
  int64_t len = end - begin, m = atomic_load(&c->max_len);
  while (len > m && !atomic_compare_exchange_weak(&c->max_len, &m, len)) {
  }
  return 0;
}

START_TEST(dynamic_covers_each_index_once) {
  static const int64_t ns[] = {1, 2, 3, 7, 64, 100, 1001, 100003};
  static const int64_t chunks[] = {1, 3, 16, 5000};
  static const int ts[] = {1, 2, 3, 4};
  for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++) {
    tec_rt_set_num_threads(ts[t]);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
      for (size_t q = 0; q < sizeof chunks / sizeof chunks[0]; q++) {
        int64_t n = ns[k], ch = chunks[q];
        cover c = {.hits = calloc((size_t)n, sizeof(_Atomic int)), .chunk = ch};
        ck_assert_int_eq(tec_rt_parallel_for_dynamic(n, ch, cover_body, &c), 0);
        for (int64_t i = 0; i < n; i++)
          ck_assert_msg(atomic_load(&c.hits[i]) == 1,
                        "threads %d n %lld chunk %lld: index %lld ran %d times", ts[t],
                        (long long)n, (long long)ch, (long long)i, atomic_load(&c.hits[i]));
        /* one call per chunk when parallel; one call for all when serial */
        int64_t nchunks = (n + ch - 1) / ch;
        int serial = ts[t] == 1 || nchunks == 1;
        ck_assert_int_eq(atomic_load(&c.calls), serial ? 1 : (int)nchunks);
        ck_assert_int_eq(atomic_load(&c.max_len), serial ? n : (ch < n ? ch : n));
        ck_assert_int_eq(atomic_load(&c.bad_start), 0);
        free(c.hits);
      }
  }
}
END_TEST

/* chunk <= 0: about four chunks per thread, at least one iteration each */
START_TEST(dynamic_automatic_chunk) {
  tec_rt_set_num_threads(2);
  static const int64_t ns[] = {2, 7, 8, 9, 80, 1000};
  static const int64_t want[] = {1, 1, 1, 1, 10, 125};
  for (int k = 0; k < 6; k++)
    for (int64_t ch = 0; ch >= -3; ch -= 3) {
      int64_t n = ns[k];
      cover c = {.hits = calloc((size_t)n, sizeof(_Atomic int)), .chunk = want[k]};
      ck_assert_int_eq(tec_rt_parallel_for_dynamic(n, ch, cover_body, &c), 0);
      for (int64_t i = 0; i < n; i++) ck_assert_int_eq(atomic_load(&c.hits[i]), 1);
      ck_assert_int_eq(atomic_load(&c.calls), (int)((n + want[k] - 1) / want[k]));
      ck_assert_int_eq(atomic_load(&c.max_len), want[k]);
      ck_assert_int_eq(atomic_load(&c.bad_start), 0);
      free(c.hits);
    }
}
END_TEST

typedef struct failing {
  int64_t fail_at[2]; /* chunks containing these indices fail (-1: none) */
  int32_t code;
  _Atomic int calls;
  int slow;           /* sleep in the chunks that do not fail (microseconds) */
  int slow_fail;      /* the chunk of fail_at[1] sleeps this long (us) before it fails */
} failing;

static int32_t failing_body(int64_t begin, int64_t end, void *u) {
  failing *fl = u;
  atomic_fetch_add(&fl->calls, 1);
  for (int k = 0; k < 2; k++)
    if (fl->fail_at[k] >= begin && fl->fail_at[k] < end) {
      if (k == 1 && fl->slow_fail && !(fl->fail_at[0] >= begin && fl->fail_at[0] < end))
        usleep((useconds_t)fl->slow_fail);
      tec_rt_set_error("chunk [%lld, %lld) failed", (long long)begin, (long long)end);
      return fl->code + k;
    }
  if (fl->slow) usleep((useconds_t)fl->slow);
  return 0;
}

START_TEST(dynamic_lowest_failing_chunk_wins) {
  for (int threads = 1; threads <= 3; threads++) {
    tec_rt_set_num_threads(threads);
    for (int rep = 0; rep < 20; rep++) { /* the same answer whatever thread ran what */
      tec_rt_set_error("stale");
      /* chunks of 5: [10, 15) is the lowest failing */
      failing fl = {.fail_at = {25, 12}, .code = -20};
      ck_assert_int_eq(tec_rt_parallel_for_dynamic(30, 5, failing_body, &fl),
                       threads == 1 ? -20 : -19);
      /* serial: one call, [0, 30), which meets index 25 first */
      ck_assert_str_eq(tec_rt_last_error(),
                       threads == 1 ? "chunk [0, 30) failed" : "chunk [10, 15) failed");
      fl = (failing){.fail_at = {3, -1}, .code = -9};
      ck_assert_int_eq(tec_rt_parallel_for_dynamic(30, 5, failing_body, &fl), -9);
      ck_assert_str_eq(tec_rt_last_error(),
                       threads == 1 ? "chunk [0, 30) failed" : "chunk [0, 5) failed");
      fl = (failing){.fail_at = {29, -1}, .code = -3};
      ck_assert_int_eq(tec_rt_parallel_for_dynamic(30, 4, failing_body, &fl), -3);
      ck_assert_str_eq(tec_rt_last_error(),
                       threads == 1 ? "chunk [0, 30) failed" : "chunk [28, 30) failed");
      fl = (failing){.fail_at = {-1, -1}, .code = -1};
      ck_assert_int_eq(tec_rt_parallel_for_dynamic(30, 4, failing_body, &fl), 0);
    }
  }
  /* The lower failing chunk takes 20 ms, so the higher one has failed and been recorded
   * first: the lower one must still replace it. */
  tec_rt_set_num_threads(2);
  for (int rep = 0; rep < 3; rep++) {
    failing fl = {.fail_at = {25, 7}, .code = -40, .slow_fail = 20000};
    ck_assert_int_eq(tec_rt_parallel_for_dynamic(30, 5, failing_body, &fl), -39);
    ck_assert_str_eq(tec_rt_last_error(), "chunk [5, 10) failed");
  }
}
END_TEST

/* Once a chunk has failed the others stop claiming: 1000 chunks of 200 us, the first one
 * fails at once; the other thread may finish the chunk it has and claim one more before it
 * sees the failure (the bound leaves room for a descheduled thread on a loaded machine; with
 * no stop the body would run 1000 times). */
START_TEST(dynamic_stops_after_failure) {
  tec_rt_set_num_threads(2);
  failing fl = {.fail_at = {0, -1}, .code = -5, .slow = 200};
  ck_assert_int_eq(tec_rt_parallel_for_dynamic(1000, 1, failing_body, &fl), -5);
  ck_assert_str_eq(tec_rt_last_error(), "chunk [0, 1) failed");
  ck_assert_msg(atomic_load(&fl.calls) < 500, "%d chunks ran after the first failed",
                atomic_load(&fl.calls) - 1);
}
END_TEST

static int32_t nested_outer(int64_t begin, int64_t end, void *u) {
  _Atomic int *serial_inner = u;
  for (int64_t i = begin; i < end; i++) {
    _Atomic int hits[50] = {0};
    cover c = {.hits = hits, .chunk = 0};
    if (tec_rt_parallel_for_dynamic(50, 2, cover_body, &c) != 0) return -1;
    if (atomic_load(&c.calls) != 1) atomic_store(serial_inner, 0); /* nested: one call */
    for (int k = 0; k < 50; k++)
      if (atomic_load(&hits[k]) != 1) return -2;
  }
  return 0;
}

START_TEST(dynamic_nested_and_bad_calls) {
  tec_rt_set_num_threads(3);
  _Atomic int serial_inner = 1;
  ck_assert_int_eq(tec_rt_parallel_for_dynamic(12, 1, nested_outer, &serial_inner), 0);
  ck_assert_int_eq(atomic_load(&serial_inner), 1);
  ck_assert_int_eq(tec_rt_parallel_for(12, nested_outer, &serial_inner), 0);
  ck_assert_int_eq(atomic_load(&serial_inner), 1);
  ck_assert_int_eq(tec_rt_parallel_for_dynamic(0, 1, cover_body, NULL), 0); /* no call */
  ck_assert_int_eq(tec_rt_parallel_for_dynamic(-4, 1, cover_body, NULL), 0);
  ck_assert_int_eq(tec_rt_parallel_for_dynamic(8, 1, NULL, NULL), -1);
  ck_assert_str_eq(tec_rt_last_error(), "tec_rt_parallel_for_dynamic: the body is NULL");
}
END_TEST

/* ================= pragma parallel_dynamic ================= */

typedef struct mm {
  te_tensor *a, *b;
  const ir_expr *k;
} mm;
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  mm *m = u;
  return te_sum(ir_mul(TE_AT(m->a, i[0], m->k), TE_AT(m->b, m->k, i[1])), 1, &m->k, NULL);
}
/* C = A * B for A: M x K, B: K x N */
static te_tensor *te_matmul(tec_ctx *ctx, const char *name, te_tensor *A, te_tensor *B) {
  mm *m = tec_ctx_alloc(ctx, sizeof *m);
  ck_assert_ptr_nonnull(m);
  int64_t K;
  ck_assert(ir_is_const_int(A->shape[1], &K));
  *m = (mm){A, B, te_reduce_axis_n(ctx, "k", K)};
  const ir_expr *shape[2] = {A->shape[0], B->shape[1]};
  return te_compute(ctx, &(te_compute_decl){.name = name, .ndim = 2, .shape = shape,
                                            .body = mm_body, .user = m});
}

/* C = A * B, 4x16 tiles, the row-tile loop parallel with pragma parallel_dynamic (chunk). */
static lower_func *dyn_gemm(tec_ctx *ctx, int64_t M, int64_t N, int64_t K, int64_t chunk,
                            int on_inner) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, K, N));
  te_tensor *C = te_matmul(ctx, "C", A, B);
  ck_assert_msg(C != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *io, *jo, *ii, *ji;
  OK(ctx, sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 4, 16, &io, &jo, &ii, &ji));
  OK(ctx, sch_vectorize(sc, ji));
  OK(ctx, sch_parallel(sc, io));
  OK(ctx, sch_pragma(sc, on_inner ? jo : io, "parallel_dynamic",
                     chunk < 0 ? NULL : ir_int(ctx, chunk)));
  return tec_lower(s, "dgemm", 3, (te_tensor *[]){A, B, C});
}

START_TEST(pragma_dynamic_gemm) {
  static const int64_t shapes[][3] = {{64, 48, 32}, {37, 50, 19}, {5, 16, 8}, {130, 33, 7}};
  static const int64_t chunks[] = {-1, 0, 1, 3, 100};
  for (int k = 0; k < 4; k++)
    for (int q = 0; q < 5; q++) {
      tec_ctx *ctx = tec_ctx_new();
      int64_t M = shapes[k][0], N = shapes[k][1], K = shapes[k][2];
      lower_func *f = dyn_gemm(ctx, M, N, K, chunks[q], 0);
      ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
      tu_assert_contains(tec_lower_str(f), "attr pragma_parallel_dynamic");
      tec_module *m = tec_build(ctx, 1, &f, NULL);
      ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
      if (k == 0) {
        char want[96];
        snprintf(want, sizeof want, "call i32 @tec_rt_parallel_for_dynamic(i64 16, i64 %lld, ",
                 (long long)(chunks[q] < 0 ? 0 : chunks[q]));
        tu_assert_contains(tec_module_llvm_ir(m), want);
        assert_not_contains(tec_module_llvm_ir(m), "@tec_rt_parallel_for(");
      }
      tec_packed_fn fn = tec_module_get(m, "dgemm");
      int64_t sa[2] = {M, K}, sb[2] = {K, N}, scs[2] = {M, N};
      DLTensor a = tu_rand_f32(2, sa, 11), b = tu_rand_f32(2, sb, 12);
      float *ref = malloc(sizeof(float) * (size_t)(M * N));
      tu_ref_matmul(tu_f32(&a), tu_f32(&b), ref, M, N, K);
      for (int t = 1; t <= 3; t++) {
        tec_rt_set_num_threads(t);
        DLTensor c = tu_rand_f32(2, scs, 13); /* garbage to overwrite */
        ck_assert_msg(fn((DLTensor *[]){&a, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
        double err = tu_max_err(tu_f32(&c), ref, M * N);
        ck_assert_msg(err < 1e-4, "%lldx%lldx%lld chunk %lld threads %d: error %g",
                      (long long)M, (long long)N, (long long)K, (long long)chunks[q], t, err);
        tec_dl_free(&c);
      }
      free(ref);
      tec_dl_free(&a), tec_dl_free(&b);
      tec_ctx_free(ctx);
    }
}
END_TEST

START_TEST(pragma_dynamic_refused) {
  /* on a loop that is not parallel */
  tec_ctx *ctx = tec_ctx_new();
  ck_assert_ptr_null(dyn_gemm(ctx, 16, 32, 8, 1, 1));
  assert_err(ctx, "tec_lower 'dgemm': pragma parallel_dynamic on loop 'j.outer' of stage 'C': "
                  "the loop is serial, not parallel; it chooses how a parallel loop's iterations "
                  "are shared out, so call sch_parallel on the loop or drop the pragma");
  tec_ctx_free(ctx);

  /* a chunk that is negative or not a constant */
  ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 8, 8));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, 8, 8));
  te_tensor *C = te_matmul(ctx, "C", A, B);
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  ck_assert_int_eq(sch_pragma(sc, sch_axis(sc, 0), "parallel_dynamic", ir_int(ctx, -2)), -1);
  assert_err(ctx, "pragma: parallel_dynamic on loop 'i' of stage 'C' takes the chunk size, a "
                  "constant integer >= 0 (0 or NULL: about four chunks per thread), not -2");
  const ir_expr *n = te_size_var(ctx, "n");
  ck_assert_int_eq(sch_pragma(sc, sch_axis(sc, 0), "parallel_dynamic", n), -1);
  tu_assert_contains(tec_ctx_error(ctx), "a constant integer >= 0");
  ck_assert_int_eq(sch_pragma(sc, sch_axis(sc, 0), "parallel_dynamic", ir_float(ctx, 2.0)), -1);
  tu_assert_contains(tec_ctx_error(ctx), "takes the chunk size");
  tec_ctx_free(ctx);

  /* inside a parallel_launch_point region, whose loops are cut statically */
  ctx = tec_ctx_new();
  A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 16, 16));
  B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, 16, 16));
  C = te_matmul(ctx, "C", A, B);
  s = sch_create(ctx, 1, &C);
  sc = sch_stage_of(s, C);
  sch_iter *ko, *ki, *io, *ii;
  OK(ctx, sch_split(sc, sch_reduce_axis(sc, 0), 4, &ko, &ki));
  OK(ctx, sch_split(sc, sch_axis(sc, 0), 4, &io, &ii));
  OK(ctx, sch_reorder(sc, 5, (sch_iter *[]){ko, io, ii, sch_axis(sc, 1), ki}));
  OK(ctx, sch_parallel(sc, io));
  OK(ctx, sch_pragma(sc, io, "parallel_dynamic", NULL));
  OK(ctx, sch_pragma(sc, ko, "parallel_launch_point", NULL));
  lower_func *f = tec_lower(s, "lgemm", 3, (te_tensor *[]){A, B, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_ptr_null(tec_build(ctx, 1, &f, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "'lgemm': pragma parallel_dynamic on parallel loop "
                                         "'i.outer', which is inside a parallel_launch_point "
                                         "region");
  tu_assert_contains(tec_ctx_error(ctx), "drop one of the two pragmas");
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("dynamic");
  TCase *rt = tcase_create("runtime");
  tcase_add_test(rt, dynamic_covers_each_index_once);
  tcase_add_test(rt, dynamic_automatic_chunk);
  tcase_add_test(rt, dynamic_lowest_failing_chunk_wins);
  tcase_add_test(rt, dynamic_stops_after_failure);
  tcase_add_test(rt, dynamic_nested_and_bad_calls);
  suite_add_tcase(s, rt);
  TCase *e2e = tcase_create("pragma");
  tcase_add_test(e2e, pragma_dynamic_gemm);
  tcase_add_test(e2e, pragma_dynamic_refused);
  suite_add_tcase(s, e2e);
  return tu_run(s);
}

/* test_numeric.c — end to end: declare, schedule, lower, JIT, run, and compare with naive C
 * loops written here (the independent reference). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

/* ---------- vector add with symbolic n ---------- */
typedef struct two { te_tensor *a, *b; const ir_expr *k; } two;

static const ir_expr *vadd_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  two *t = u;
  return ir_add(TE_AT(t->a, i[0]), TE_AT(t->b, i[0]));
}

static void run_vadd(int sched, int64_t n) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *nv = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &nv);
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 1, &nv);
  two u = {A, B, NULL};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1, .shape = &nv,
                                                     .body = vadd_body, .user = &u});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *st = sch_stage_of(s, C);
  sch_iter *o, *in;
  if (sched == 1) ck_assert_int_eq(sch_split(st, sch_axis(st, 0), 4, &o, &in), 0);
  if (sched == 2) ck_assert_int_eq(sch_split_nparts(st, sch_axis(st, 0), 3, &o, &in), 0);
  tec_packed_fn fn = tu_build(ctx, s, "vadd", 3, (te_tensor *[]){A, B, C});
  DLTensor a = tu_rand_f32(1, &n, 1), b = tu_rand_f32(1, &n, 2), c = tu_zeros(TEC_F32, 1, &n);
  ck_assert_msg(fn((DLTensor *[]){&a, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
  for (int64_t i = 0; i < n; i++)
    ck_assert_float_eq(tu_f32(&c)[i], tu_f32(&a)[i] + tu_f32(&b)[i]);
  /* a mismatched n is refused with a message, not read out of bounds */
  int64_t m = n + 1;
  DLTensor d = tu_zeros(TEC_F32, 1, &m);
  ck_assert_int_ne(fn((DLTensor *[]){&a, &b, &d}, 3), 0);
  tu_assert_contains(tec_rt_last_error(), "shape[0]");
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c), tec_dl_free(&d);
  tec_ctx_free(ctx);
}

START_TEST(vadd_symbolic) {
  static const int64_t ns[] = {1, 7, 1000};
  for (int sched = 0; sched < 3; sched++)
    for (int k = 0; k < 3; k++) run_vadd(sched, ns[k]);
}
END_TEST

/* ---------- an elementwise chain with intermediates ---------- */
static const ir_expr *scale_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 2.0));
}
static const ir_expr *exp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(ir_exp(TE_AT((te_tensor *)u, i[0], i[1])), ir_float(ctx, 1.0));
}
static const ir_expr *relu_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ir_expr *x = ir_sub(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 2.0));
  return ir_select(ir_gt(x, ir_float(ctx, 0.0)), x, ir_float(ctx, 0.0));
}

START_TEST(elementwise_chain) {
  for (int sched = 0; sched < 3; sched++) {
    tec_ctx *ctx = tec_ctx_new();
    const ir_expr *const *shp = TE_SHAPE(ctx, 13, 21);
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, shp);
    te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = shp,
                                                      .body = scale_body, .user = A});
    te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = shp,
                                                      .body = exp_body, .user = B});
    te_tensor *D = te_compute(ctx, &(te_compute_decl){.name = "D", .ndim = 2, .shape = shp,
                                                      .body = relu_body, .user = C});
    sch_schedule *s = sch_create(ctx, 1, &D);
    sch_stage *sd = sch_stage_of(s, D), *sb = sch_stage_of(s, B);
    sch_iter *f, *o, *in;
    if (sched == 1) {
      ck_assert_int_eq(sch_fuse(sd, sch_axis(sd, 0), sch_axis(sd, 1), &f), 0);
      ck_assert_int_eq(sch_split(sd, f, 8, &o, &in), 0);
    }
    if (sched == 2) {
      ck_assert_int_eq(sch_reorder(sb, 2, (sch_iter *[]){sch_axis(sb, 1), sch_axis(sb, 0)}), 0);
      ck_assert_int_eq(sch_split(sb, sch_axis(sb, 0), 5, &o, &in), 0);
    }
    tec_packed_fn fn = tu_build(ctx, s, "chain", 2, (te_tensor *[]){A, D});
    int64_t shape[2] = {13, 21};
    DLTensor a = tu_rand_f32(2, shape, 3), d = tu_zeros(TEC_F32, 2, shape);
    ck_assert_msg(fn((DLTensor *[]){&a, &d}, 2) == 0, "%s", tec_rt_last_error());
    float ref[13 * 21];
    for (int i = 0; i < 13 * 21; i++) {
      float x = expf(tu_f32(&a)[i] * 2.0f) + 1.0f - 2.0f;
      ref[i] = x > 0 ? x : 0;
    }
    ck_assert_double_lt(tu_max_err(tu_f32(&d), ref, 13 * 21), 1e-5);
    tec_dl_free(&a), tec_dl_free(&d);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* ---------- row reductions: sum, max, min with a condition ---------- */
typedef struct red { te_tensor *a; const ir_expr *j; int kind; } red;

static const ir_expr *red_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  red *r = u;
  const ir_expr *x = TE_AT(r->a, i[0], r->j);
  switch (r->kind) {
  case 0: return te_sum(x, 1, &r->j, NULL);
  case 1: return te_max(x, 1, &r->j, NULL);
  case 2: return te_min(x, 1, &r->j, ir_lt(r->j, ir_int(ctx, 10))); /* first 10 columns */
  default: return te_prod(ir_add(ir_mul(x, ir_float(ctx, 0.1)), ir_float(ctx, 1.0)), 1, &r->j,
                          NULL);
  }
}

START_TEST(row_reductions) {
  for (int kind = 0; kind < 4; kind++)
    for (int sched = 0; sched < 4; sched++) {
      tec_ctx *ctx = tec_ctx_new();
      te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 37, 45));
      red r = {A, te_reduce_axis_n(ctx, "j", 45), kind};
      te_tensor *R = te_compute(ctx, &(te_compute_decl){.name = "R", .ndim = 1,
                                                        .shape = TE_SHAPE(ctx, 37),
                                                        .body = red_body, .user = &r,
                                                        .axis_names = (const char *[]){"i"}});
      sch_schedule *s = sch_create(ctx, 1, &R);
      sch_stage *st = sch_stage_of(s, R);
      sch_iter *jo, *ji, *io, *ii;
      if (sched >= 1) ck_assert_int_eq(sch_split(st, sch_reduce_axis(st, 0), 8, &jo, &ji), 0);
      if (sched == 2) ck_assert_int_eq(sch_reorder(st, 2, (sch_iter *[]){jo, sch_axis(st, 0)}), 0);
      if (sched == 3) {
        ck_assert_int_eq(sch_split(st, sch_axis(st, 0), 4, &io, &ii), 0);
        ck_assert_int_eq(sch_reorder(st, 4, (sch_iter *[]){io, jo, ii, ji}), 0);
      }
      tec_packed_fn fn = tu_build(ctx, s, "rowred", 2, (te_tensor *[]){A, R});
      int64_t sh[2] = {37, 45}, rs = 37;
      DLTensor a = tu_rand_f32(2, sh, 7), out = tu_zeros(TEC_F32, 1, &rs);
      ck_assert_msg(fn((DLTensor *[]){&a, &out}, 2) == 0, "%s", tec_rt_last_error());
      float ref[37];
      for (int i = 0; i < 37; i++) {
        double acc = kind == 0 ? 0 : kind == 1 ? -INFINITY : kind == 2 ? INFINITY : 1;
        for (int j = 0; j < 45; j++) {
          double x = tu_f32(&a)[i * 45 + j];
          if (kind == 0) acc += x;
          if (kind == 1) acc = x > acc ? x : acc;
          if (kind == 2 && j < 10) acc = x < acc ? x : acc;
          if (kind == 3) acc *= x * 0.1 + 1.0;
        }
        ref[i] = (float)acc;
      }
      ck_assert_msg(tu_max_err(tu_f32(&out), ref, 37) < 1e-5, "kind %d sched %d", kind, sched);
      tec_dl_free(&a), tec_dl_free(&out);
      tec_ctx_free(ctx);
    }
}
END_TEST

/* ---------- matmul under many schedules ---------- */
typedef struct mm { te_tensor *a, *b; const ir_expr *k; } mm;
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u;
  return te_sum(ir_mul(TE_AT(m->a, i[0], m->k), TE_AT(m->b, m->k, i[1])), 1, &m->k, NULL);
}

static void apply_schedule(sch_stage *st, int which) {
  sch_iter *i = sch_axis(st, 0), *j = sch_axis(st, 1), *k = sch_reduce_axis(st, 0);
  sch_iter *io, *ii, *jo, *ji, *ko, *ki, *f, *fo, *fi, *a, *b;
  tec_ctx *sctx = sch_schedule_ctx(sch_stage_schedule(st));
  switch (which) {
  case 0: break;                                                       /* naive */
  case 1: OK(sctx, sch_split(st, i, 8, &io, &ii)); break;
  case 2: OK(sctx, sch_split(st, j, 16, &jo, &ji)); break;
  case 3: OK(sctx, sch_tile(st, i, j, 8, 16, &io, &jo, &ii, &ji)); break;
  case 4:
    OK(sctx, sch_tile(st, i, j, 8, 16, &io, &jo, &ii, &ji));
    OK(sctx, sch_reorder(st, 5, (sch_iter *[]){io, jo, k, ii, ji}));
    break;
  case 5:
    OK(sctx, sch_split(st, k, 7, &ko, &ki));
    OK(sctx, sch_reorder(st, 4, (sch_iter *[]){ko, i, j, ki}));
    break;
  case 6: OK(sctx, sch_fuse(st, i, j, &f)); break;
  case 7:
    OK(sctx, sch_fuse(st, i, j, &f));
    OK(sctx, sch_split(st, f, 13, &fo, &fi));
    break;
  case 8: OK(sctx, sch_reorder(st, 3, (sch_iter *[]){k, i, j})); break;
  case 9: OK(sctx, sch_split_nparts(st, i, 3, &io, &ii)); break;
  case 10:
    OK(sctx, sch_tile(st, i, j, 32, 32, &io, &jo, &ii, &ji));
    OK(sctx, sch_split(st, k, 4, &ko, &ki));
    OK(sctx, sch_reorder(st, 6, (sch_iter *[]){io, jo, ko, ki, ii, ji}));
    break;
  case 11:
    OK(sctx, sch_split(st, j, 4, &jo, &ji));
    OK(sctx, sch_split(st, ji, 2, &a, &b));
    OK(sctx, sch_reorder(st, 5, (sch_iter *[]){jo, i, a, k, b}));
    break;
  case 12:
    OK(sctx, sch_split(st, i, 4, &io, &ii));
    OK(sctx, sch_reorder(st, 4, (sch_iter *[]){io, j, ii, k}));
    OK(sctx, sch_fuse(st, j, ii, &f));
    break;
  case 13:
    OK(sctx, sch_split(st, k, 16, &ko, &ki));
    OK(sctx, sch_fuse(st, ko, ki, &f));
    OK(sctx, sch_split_nparts(st, i, 5, &io, &ii));
    break;
  }
}
#define N_SCHEDULES 14

static void run_matmul(int64_t M, int64_t N, int64_t K, int which) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, K, N));
  mm m = {A, B, te_reduce_axis_n(ctx, "k", K)};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, M, N), .body = mm_body,
                                                    .user = &m});
  sch_schedule *s = sch_create(ctx, 1, &C);
  apply_schedule(sch_stage_of(s, C), which);
  tec_packed_fn fn = tu_build(ctx, s, "matmul", 3, (te_tensor *[]){A, B, C});
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  DLTensor a = tu_rand_f32(2, sa, 11), b = tu_rand_f32(2, sb, 12), c = tu_zeros(TEC_F32, 2, sc);
  ck_assert_msg(fn((DLTensor *[]){&a, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
  float *ref = malloc(sizeof(float) * (size_t)(M * N));
  tu_ref_matmul(tu_f32(&a), tu_f32(&b), ref, M, N, K);
  double err = tu_max_err(tu_f32(&c), ref, M * N);
  ck_assert_msg(err < 1e-4, "matmul %lldx%lldx%lld schedule %d: max error %g", (long long)M,
                (long long)N, (long long)K, which, err);
  free(ref);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  tec_ctx_free(ctx);
}

START_TEST(matmul_64x48x80) { run_matmul(64, 48, 80, _i); }
END_TEST
START_TEST(matmul_127x129x131) { run_matmul(127, 129, 131, _i); }
END_TEST

int main(void) {
  Suite *s = suite_create("numeric");
  TCase *tc = tcase_create("numeric");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, vadd_symbolic);
  tcase_add_test(tc, elementwise_chain);
  tcase_add_test(tc, row_reductions);
  tcase_add_loop_test(tc, matmul_64x48x80, 0, N_SCHEDULES);
  tcase_add_loop_test(tc, matmul_127x129x131, 0, N_SCHEDULES);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

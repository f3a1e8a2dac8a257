/* test_errors.c — errors belong to the call that made them: an ignored refusal does not make
 * a later valid call fail (tec_lower, tec_build, tec_emit, sch_create of another schedule),
 * a compile call that fails reports its own message even after an ignored error, the chain
 * rule (check once at the end: the first error, NULLs propagate silently) still holds, and
 * every error has a kind (user, unsupported, internal, out of memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  ck_assert_ptr_nonnull(tec_ctx_error(sch_schedule_ctx(p->s)));
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
  char *text = tu_emit_text(ctx, f, NULL, TEC_EMIT_LLVM_IR); /* fails the test if emit fails */
  tu_assert_contains(text, "define");
  free(text);
}
END_TEST


/* ======== a compile call that fails reports its own error ======== */

START_TEST(failing_compile_call_reports_its_own_error) {
  mm p = make_mm(ctx);
  refused_split(&p);
  /* tec_lower without the output among the arguments */
  ck_assert_ptr_null(tec_lower(p.s, "mm", 2, p.args));
  assert_err(ctx, "tec_lower 'mm': output 'C' must be one of the arguments");
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_USER);

  lower_func *f = tec_lower(p.s, "mm", 3, p.args);
  ck_assert_ptr_nonnull(f);
  refused_split(&p);
  ck_assert_ptr_null(tec_build(ctx, 1, &f, "no-such-target"));
  tu_assert_contains(tec_ctx_error(ctx), "no-such-target");
  assert_not_contains(tec_ctx_error(ctx), "split");

  refused_split(&p);
  ck_assert_int_eq(tec_emit(ctx, 1, &f, NULL, TEC_EMIT_ASM, ""), -1);
  assert_err(ctx, "tec_emit: no output path");
}
END_TEST

/* A compile call that fails only because its argument came from an earlier failure keeps
 * the earlier message: the chain's root. */
START_TEST(compile_call_propagating_keeps_the_older_error) {
  mm p = make_mm(ctx);
  refused_split(&p);
  const char *refusal = tec_ctx_error(ctx);
  ck_assert_ptr_null(tec_lower(NULL, "mm", 3, p.args));
  lower_func *none = NULL;
  ck_assert_ptr_null(tec_build(ctx, 1, &none, NULL));
  ck_assert_int_eq(tec_emit(ctx, 1, &none, NULL, TEC_EMIT_ASM, "/tmp/never_written.s"), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), refusal);
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_USER);
  /* without an earlier error, the NULL is the caller's mistake and says so */
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_build(ctx, 1, &none, NULL));
  assert_err(ctx, "tec_build: function 0 is NULL");
}
END_TEST

/* ======== the chain rule: check once at the end ======== */

static const ir_expr *read_user(tec_ctx *c, const ir_expr *const *idx, void *user) {
  return ir_add(te_read(user, 1, idx), ir_float(c, 1));
}

START_TEST(chain_checked_once_at_the_end) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, -3)); /* refused */
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, 3), .body = read_user,
                                                    .user = A});
  sch_schedule *s = sch_create(ctx, 1, &B);
  sch_stage *st = sch_stage_of(s, B);
  sch_iter *o, *i;
  int rc = sch_split(st, sch_axis(st, 0), 2, &o, &i);
  lower_func *f = tec_lower(s, "chain", 2, (te_tensor *const[]){A, B});
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  int erc = tec_emit(ctx, 1, &f, NULL, TEC_EMIT_HEADER, "/tmp/never_written.h");
  ck_assert(!A && !B && !s && !st && rc == -1 && !f && !m && erc == -1);
  assert_err(ctx, "te_placeholder 'A': extent 0 is -3; extents must be >= 0");
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_USER);
}
END_TEST

/* Two refusals in a chain of primitives: the first is what the end check sees. */
START_TEST(chain_keeps_the_first_refusal) {
  mm p = make_mm(ctx);
  sch_iter *o, *i;
  ck_assert_int_eq(sch_split(p.st, sch_axis(p.st, 0), 0, &o, &i), -1);
  ck_assert_int_eq(sch_split(p.st, sch_axis(p.st, 1), -2, &o, &i), -1);
  ck_assert_int_eq(sch_vectorize(p.st, sch_axis(p.st, 1)), 0);
  lower_func *f = tec_lower(p.s, "mm", 3, p.args);
  ck_assert_ptr_nonnull(f);
  tu_assert_contains(tec_ctx_error(ctx), "factor 0 for axis 'i'");
}
END_TEST

/* ======== kinds ======== */

START_TEST(kind_api) {
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_NONE);
  ck_assert_ptr_null(tec_ctx_error(ctx));
  ck_assert_int_eq(tec_ctx_set_error(ctx, "plain %d", 1), -1);
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_USER);
  ck_assert_int_eq(tec_ctx_set_error_kind(ctx, TEC_ERR_INTERNAL, "second"), -1);
  assert_err(ctx, "plain 1"); /* the first stays, with its kind */
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_USER);
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_NONE);
  ck_assert_int_eq(tec_ctx_set_error_kind(ctx, TEC_ERR_UNSUPPORTED, "not %s", "here"), -1);
  assert_err(ctx, "not here");
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_UNSUPPORTED);
  ck_assert_int_eq(tec_ctx_error_kind(NULL), TEC_ERR_USER);
  ck_assert_str_eq(tec_ctx_error(NULL), "no context");
  ck_assert_int_eq(tec_ctx_set_error_kind(NULL, TEC_ERR_OOM, "x"), -1);
}
END_TEST

START_TEST(kind_user) {
  mm p = make_mm(ctx);
  refused_split(&p);
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_USER);
}
END_TEST

START_TEST(kind_unsupported) {
  mm p = make_mm(ctx);
  OK(ctx, sch_parallel(p.st, sch_axis(p.st, 0)));
  ck_assert_int_eq(sch_parallel(p.st, sch_axis(p.st, 1)), -1);
  tu_assert_contains(tec_ctx_error(ctx), "nested parallel loops are not supported");
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_UNSUPPORTED);
  tec_ctx_clear_error(ctx);
  /* JIT for another machine: tec_emit can, tec_build cannot */
  lower_func *f = tec_lower(p.s, "mm", 3, p.args);
  ck_assert_ptr_nonnull(f);
#if defined(__aarch64__)
  const char *other = "llvm -mtriple=x86_64-linux-gnu";
#else
  const char *other = "rasp4b";
#endif
  ck_assert_ptr_null(tec_build(ctx, 1, &f, other));
  tu_assert_contains(tec_ctx_error(ctx), "cannot run on this host");
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_UNSUPPORTED);
}
END_TEST

START_TEST(kind_internal) {
  mm p = make_mm(ctx);
  lower_func *f = tec_lower(p.s, "mm", 3, p.args);
  ck_assert_ptr_nonnull(f);
  /* a READ that lowering should have removed reaches codegen: tec's bug, not the user's */
  lower_func rd = *f;
  rd.name = "rd";
  const ir_expr *i = ir_var(ctx, "i", TEC_INDEX, IR_VAR_INDEX);
  rd.body = ir_for(i, ir_int(ctx, 0), ir_int(ctx, M), IR_FOR_SERIAL,
                   ir_evaluate(TE_AT(p.args[0], i, ir_int(ctx, 0))));
  lower_func *pr = &rd;
  refused_split(&p); /* an older user error does not hide it */
  ck_assert_ptr_null(tec_build(ctx, 1, &pr, NULL));
  tu_assert_contains(tec_ctx_error(ctx), "internal error generating 'rd'");
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_INTERNAL);
}
END_TEST

START_TEST(kind_oom) {
  tec_ctx_set_alloc_budget(ctx, 0);
  ck_assert_ptr_null(ir_int(ctx, 1));
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_OOM);
  tec_ctx_set_alloc_budget(ctx, -1);
  tec_ctx_clear_error(ctx);
  mm p = make_mm(ctx);
  schedule_mm(ctx, &p);
  refused_split(&p);
  tec_ctx_set_alloc_budget(ctx, 3);
  ck_assert_ptr_null(tec_lower(p.s, "mm", 3, p.args));
  tec_ctx_set_alloc_budget(ctx, -1);
  tu_assert_contains(tec_ctx_error(ctx), "out of memory");
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_OOM);
}
END_TEST

/* Under every allocation budget, after an ignored refusal: tec_lower, then tec_build, either
 * fail with an out-of-memory error of their own or succeed with a program that computes the
 * right numbers (a pass that runs out half way must not hand on a half-built program because
 * the ctx already held an error). */
START_TEST(oom_sweep_after_ignored_error) {
  mm p = make_mm(ctx);
  schedule_mm(ctx, &p);
  lower_func *f = NULL;
  long budget = 0;
  for (; !f; budget++) {
    ck_assert_int_lt(budget, 100000);
    tec_ctx_clear_error(ctx);
    refused_split(&p);
    tec_ctx_set_alloc_budget(ctx, budget);
    f = tec_lower(p.s, "mm", 3, p.args);
    tec_ctx_set_alloc_budget(ctx, -1);
    if (!f) {
      ck_assert_msg(tec_ctx_error_kind(ctx) == TEC_ERR_OOM, "budget %ld: %s", budget,
                    tec_ctx_error(ctx));
      tu_assert_contains(tec_ctx_error(ctx), "out of memory");
    }
  }
  ck_assert_int_gt(budget, 100); /* the sweep went through the passes */
  tu_assert_contains(tec_ctx_error(ctx), "factor 0"); /* success left the refusal alone */
  tec_module *m = NULL;
  for (budget = 0; !m; budget += 7) {
    ck_assert_int_lt(budget, 100000);
    tec_ctx_clear_error(ctx);
    refused_split(&p);
    tec_ctx_set_alloc_budget(ctx, budget);
    m = tec_build(ctx, 1, &f, NULL);
    tec_ctx_set_alloc_budget(ctx, -1);
    if (!m)
      ck_assert_msg(tec_ctx_error_kind(ctx) == TEC_ERR_OOM, "budget %ld: %s", budget,
                    tec_ctx_error(ctx));
  }
  check_numbers(m, "mm");
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
  TCase *o = tcase_create("own_or_chain");
  tcase_add_checked_fixture(o, setup, teardown);
  tcase_add_test(o, failing_compile_call_reports_its_own_error);
  tcase_add_test(o, compile_call_propagating_keeps_the_older_error);
  tcase_add_test(o, chain_checked_once_at_the_end);
  tcase_add_test(o, chain_keeps_the_first_refusal);
  suite_add_tcase(s, o);
  TCase *k = tcase_create("kinds");
  tcase_add_checked_fixture(k, setup, teardown);
  tcase_add_test(k, kind_api);
  tcase_add_test(k, kind_user);
  tcase_add_test(k, kind_unsupported);
  tcase_add_test(k, kind_internal);
  tcase_add_test(k, kind_oom);
  tcase_add_test(k, oom_sweep_after_ignored_error);
  suite_add_tcase(s, k);
  return s;
}

int main(void) { return tu_run(errors_suite()); }

/* test_limits.c — integer arguments at their limits (issue #38 items 2 and 4): factors past the
 * extent (clamped), extents, strides and byte counts past int64 (refused with a message, at
 * the primitive, at tec_lower or at the checked entry), NULL arguments, aliased buffers. Each
 * sequence of the issue is here as it was reported, on the difftest programs
 * (difftest/dt_programs.c), and must now match the plain C loops or be refused by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "tec/difftest.h"
#include "tec/runtime.h"

#define I64MAX INT64_MAX

static sch_stage *stage(dt_instance *p, const char *name) {
  return sch_stage_of(p->sched, dt_instance_tensor(p, name));
}

/* Lowers p, asserts its IR holds want (if any) and not unwanted (if any), and that it
 * matches the plain C loops. */
static void check_ok(dt_instance *p, const char *want, const char *unwanted) {
  lower_func *f = tec_lower(p->sched, "f", p->nargs, p->args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(p->ctx));
  const char *text = tec_lower_str(f);
  if (want) tu_assert_contains(text, want);
  if (unwanted) ck_assert_msg(!strstr(text, unwanted), "unexpected '%s' in\n%s", unwanted, text);
  char msg[1024] = "";
  ck_assert_msg(dt_instance_check(p, msg, sizeof msg) == 0, "%s", msg);
}

/* tec_lower of p fails with exactly err */
static void check_refused(dt_instance *p, const char *err) {
  ck_assert_ptr_null(tec_lower(p->sched, "f", p->nargs, p->args));
  ck_assert_str_eq(tec_ctx_error(p->ctx), err);
}

/* storage_align(B, i, INT64_MAX, 0) on an intermediate: was allocate B[float32 * 0] with
 * index B[j - i*9223372036854775807]; the stride times 4 bytes passes int64 */
START_TEST(storage_align_int64_max) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_PRODCONS, 0);
  sch_stage *b = stage(p, "B");
  OK(ctx, sch_storage_align(b, sch_axis(b, 0), I64MAX, 0));
  check_refused(p, "lower: the buffer of 'B' would hold more than 2^63 - 1 bytes: "
                   "storage_align(axis 0, factor 9223372036854775807, offset 0) pads the stride "
                   "of dimension 0 past what int64 holds; use a factor below the buffer's size");
  tec_ctx_free(ctx);
  /* a large factor that fits: the stride is the factor, the allocation rows times it */
  ctx = tec_ctx_new();
  p = dt_instance_new(ctx, DT_PRODCONS, 0);
  b = stage(p, "B");
  OK(ctx, sch_storage_align(b, sch_axis(b, 0), 4096, 3));
  check_ok(p, "allocate B[float32 * 40990]", NULL); /* 10 rows of 9 padded to 4099 */
  tec_ctx_free(ctx);
}
END_TEST

/* a stride that fits but a buffer larger than the machine's memory: the call refuses it with a
 * message (the runtime's allocator), which difftest counts as a refusal at run time */
START_TEST(storage_align_past_memory) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_PRODCONS, 0);
  sch_stage *b = stage(p, "B");
  OK(ctx, sch_storage_align(b, sch_axis(b, 0), (int64_t)1 << 40, 0));
  char msg[1024] = "";
  ck_assert_int_eq(dt_instance_check(p, msg, sizeof msg), 1);
  ck_assert_str_eq(msg, "refused at run time: dt_case: out of memory allocating 43980465111040 "
                        "bytes for 'B'");
  tec_ctx_free(ctx);
}
END_TEST

/* the same on an rfactor stage: was SIGSEGV */
START_TEST(storage_align_int64_max_rfactor) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_REDUCE, 0);
  sch_stage *r = stage(p, "R");
  te_tensor *rf = sch_rfactor(p->sched, dt_instance_tensor(p, "R"), sch_reduce_axis(r, 0), 0);
  ck_assert_msg(rf != NULL, "%s", tec_ctx_error(ctx));
  sch_stage *s_rf = sch_stage_of(p->sched, rf);
  OK(ctx, sch_storage_align(s_rf, sch_axis(s_rf, 0), I64MAX, 0));
  check_refused(p, "lower: the buffer of 'R.rf' would hold more than 2^63 - 1 bytes: "
                   "storage_align(axis 0, factor 9223372036854775807, offset 0) pads the stride "
                   "of dimension 0 past what int64 holds; use a factor below the buffer's size");
  OK(ctx, sch_storage_align(s_rf, sch_axis(s_rf, 1), I64MAX - 1, 5));
  tec_ctx_free(ctx);
}
END_TEST

/* split(C, j, 2^62), fuse(j.inner, k): the fused extent wrapped negative and C was all zeros.
 * The factor is clamped to j's 12 iterations: j.inner.k.fused has 12*6. */
START_TEST(split_huge_then_fuse) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_MATMUL, 0); /* 8x12x6 */
  sch_stage *c = stage(p, "C");
  sch_iter *jo, *ji, *f;
  OK(ctx, sch_split(c, sch_axis(c, 1), (int64_t)1 << 62, &jo, &ji));
  OK(ctx, sch_fuse(c, ji, sch_reduce_axis(c, 0), &f));
  check_ok(p, "for (j.inner.k.fused, 0, 72)", "4611686018427387904");
  /* the trace keeps the factor given; its replay clamps it the same way */
  const char *js = sch_trace_json(ctx, sch_get_trace(p->sched));
  ck_assert_ptr_nonnull(js);
  tu_assert_contains(js, "\"factor\": 4611686018427387904");
  sch_schedule *again = sch_clone(p->sched);
  ck_assert_msg(again != NULL, "%s", tec_ctx_error(ctx));
  lower_func *a = tec_lower(p->sched, "f", p->nargs, p->args);
  lower_func *b = tec_lower(again, "f", p->nargs, p->args);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_str_eq(tec_lower_str(a), tec_lower_str(b));
  tec_ctx_free(ctx);
}
END_TEST

/* split(C, j, INT64_MAX), tile(C, j.outer, k, 8, 1): was SIGSEGV */
START_TEST(split_max_then_tile) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_MATMUL, 0);
  sch_stage *c = stage(p, "C");
  sch_iter *jo, *ji, *xo, *yo, *xi, *yi;
  OK(ctx, sch_split(c, sch_axis(c, 1), I64MAX, &jo, &ji));
  OK(ctx, sch_tile(c, jo, sch_reduce_axis(c, 0), 8, 1, &xo, &yo, &xi, &yi));
  check_ok(p, "for (j.inner, 0, 12)", "9223372036854775807");
  tec_ctx_free(ctx);
}
END_TEST

/* split(E, j, 2^62 - 1), cache_write(E): was "out of memory allocating -40 bytes"; a
 * cache_write of the cache_write: SIGSEGV. The cache is sized by the extent. */
START_TEST(split_huge_then_cache_write) {
  for (int twice = 0; twice < 2; twice++) {
    tec_ctx *ctx = tec_ctx_new();
    dt_instance *p = dt_instance_new(ctx, DT_ELEMWISE, 0); /* 6x10 */
    sch_stage *e = stage(p, "E");
    sch_iter *jo, *ji;
    OK(ctx, sch_split(e, sch_axis(e, 1), ((int64_t)1 << 62) - 1, &jo, &ji));
    te_tensor *el = sch_cache_write(p->sched, dt_instance_tensor(p, "E"), "local");
    ck_assert_msg(el != NULL, "%s", tec_ctx_error(ctx));
    if (twice)
      ck_assert_msg(sch_cache_write(p->sched, el, "local") != NULL, "%s", tec_ctx_error(ctx));
    check_ok(p, "allocate E.local[float32 * 60]", "4611686018427387903");
    tec_ctx_free(ctx);
  }
}
END_TEST

/* split_nparts(R, ka, INT64_MAX), split_nparts(R, ka.inner, 2) on the window sum: the loop
 * for (ka.outer, 6, 9223372036854775801) never ended. nparts is clamped to ka's 3. */
START_TEST(split_nparts_max_twice) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_REDUCE, 0);
  sch_stage *r = stage(p, "R");
  sch_iter *o, *in, *o2, *in2;
  OK(ctx, sch_split_nparts(r, sch_reduce_axis(r, 0), I64MAX, &o, &in));
  OK(ctx, sch_split_nparts(r, in, 2, &o2, &in2));
  check_ok(p, NULL, "922337203685477");
  tec_ctx_free(ctx);
}
END_TEST

/* factors 2^31 - 1 .. 2^63 - 1: no loop or allocation sized by the factor */
START_TEST(factors_past_int32) {
  static const int64_t factors[] = {((int64_t)1 << 31) - 1, (int64_t)1 << 31,
                                    ((int64_t)1 << 31) + 1, (int64_t)1 << 40, (int64_t)1 << 62,
                                    I64MAX};
  for (int k = 0; k < 6; k++) {
    tec_ctx *ctx = tec_ctx_new();
    dt_instance *p = dt_instance_new(ctx, DT_ELEMWISE, 0);
    sch_stage *b = stage(p, "B"), *e = stage(p, "E");
    sch_iter *io, *ii, *jo, *ji;
    OK(ctx, sch_split(b, sch_axis(b, 0), factors[k], &io, &ii));
    OK(ctx, sch_split_nparts(e, sch_axis(e, 1), factors[k], &jo, &ji));
    OK(ctx, sch_vectorize(b, sch_axis(b, 1)));
    check_ok(p, "allocate B[float32 * 60]", "483648");
    tec_ctx_free(ctx);
  }
}
END_TEST

/* a symbolic extent: the factor stays, the guard bounds the loop by n */
START_TEST(huge_factor_symbolic_extent) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_ELEMWISE, 1); /* n x 8 */
  sch_stage *e = stage(p, "E");
  sch_iter *io, *ii;
  OK(ctx, sch_split(e, sch_axis(e, 0), (int64_t)1 << 62, &io, &ii));
  check_ok(p, NULL, NULL);
  tec_ctx_free(ctx);
}
END_TEST

/* 2^40 x 2^40 iterations do not fit an int64: fuse refuses them */
static const ir_expr *plus_one(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 1.0));
}
START_TEST(fuse_past_int64) {
  tec_ctx *ctx = tec_ctx_new();
  int64_t big = (int64_t)1 << 40;
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, big, big));
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = A->shape,
                                                     .body = plus_one, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &B);
  sch_stage *b = sch_stage_of(s, B);
  sch_iter *f;
  ck_assert_int_eq(sch_fuse(b, sch_axis(b, 0), sch_axis(b, 1), &f), -1);
  ck_assert_str_eq(tec_ctx_error(ctx),
                   "fuse: axes 'i' (1099511627776 iterations) and 'j' (1099511627776) of stage "
                   "'B' would make a loop of more than 2^63 - 1 iterations, which overflows "
                   "int64; fuse loops whose extents multiply to less");
  /* and the buffers' byte counts: refused by tec_lower */
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_lower(s, "f", 2, (te_tensor *[]){A, B}));
  ck_assert_str_eq(tec_ctx_error(ctx),
                   "lower: the buffer of 'A' would hold more than 2^63 - 1 bytes (from "
                   "dimension 0 on, its extents multiply past what int64 holds); shapes must "
                   "fit in memory");
  tec_ctx_free(ctx);
}
END_TEST

/* a NULL stage or axis: -1 with a message in the ctx of the other argument */
START_TEST(null_stage_or_axis) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_MATMUL, 0);
  sch_stage *c = stage(p, "C");
  sch_iter *o, *in, *f;
  ck_assert_int_eq(sch_split(NULL, sch_axis(c, 0), 4, &o, &in), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "split: the stage is NULL (give the result of "
                                       "sch_stage_of)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_fuse(NULL, sch_axis(c, 0), sch_axis(c, 1), &f), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "fuse: the stage is NULL (give the result of "
                                       "sch_stage_of)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_vectorize(NULL, sch_axis(c, 1)), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "vectorize: the stage is NULL (give the result of "
                                       "sch_stage_of)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_compute_at(NULL, c, sch_axis(c, 0)), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "compute_at: the stage is NULL (give the result of "
                                       "sch_stage_of)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_split(c, NULL, 4, &o, &in), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "split: the axis given for stage 'C' is NULL");
  tec_ctx_clear_error(ctx);
  /* a NULL from an earlier failure keeps that failure's message */
  ck_assert_ptr_null(sch_axis(c, 7));
  const char *first = tec_ctx_error(ctx);
  ck_assert_int_eq(sch_split(c, sch_axis(c, 7), 4, &o, &in), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), first);
  tec_ctx_free(ctx);
}
END_TEST

/* vectorize or unroll of an output's loop of symbolic extent: refused at the call */
START_TEST(vectorize_symbolic_output) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_ELEMWISE, 1);
  sch_stage *e = stage(p, "E");
  ck_assert_int_eq(sch_vectorize(e, sch_axis(e, 0)), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "vectorize: loop 'i' of stage 'E' has extent n, which is "
                                       "not a constant; split it by a constant factor and "
                                       "vectorize the inner loop");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_unroll(e, sch_axis(e, 0)), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "unroll: loop 'i' of stage 'E' has extent n, which is "
                                       "not a constant; split it by a constant factor and "
                                       "unroll the inner loop");
  OK(ctx, sch_vectorize(e, sch_axis(e, 1))); /* 8 columns: a constant */
  tec_ctx_free(ctx);
}
END_TEST

/* C = A + 1 over n elements, built for the host */
static tec_packed_fn build_add1(tec_ctx *ctx) {
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *[]){ir_int(ctx, 1), n});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = A->shape,
                                                     .body = plus_one, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &C);
  return tu_build(ctx, s, "f", 2, (te_tensor *[]){A, C});
}

/* the checked entry refuses an output overlapping an input (the raw form is noalias) */
START_TEST(entry_refuses_aliased_output) {
  tec_ctx *ctx = tec_ctx_new();
  tec_packed_fn fn = build_add1(ctx);
  ck_assert_ptr_nonnull(fn);
  DLTensor a, c;
  ck_assert_int_eq(tec_dl_alloc(&a, TEC_F32, 2, (int64_t[]){1, 64}), 0);
  ck_assert_int_eq(tec_dl_alloc(&c, TEC_F32, 2, (int64_t[]){1, 64}), 0);
  float *ap = a.data;
  for (int i = 0; i < 64; i++) ap[i] = (float)i;
  ck_assert_int_eq(TEC_CALL(fn, &a, &a), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 1 ('C') overlaps argument 0 ('A') in "
                                        "memory; the function writes 'C' and assumes no argument "
                                        "overlaps another: pass separate buffers");
  ck_assert_float_eq(ap[5], 5.0f); /* not written */
  /* overlapping by one element: refused; adjacent: runs */
  DLTensor view = a; /* 16 elements in: 64-byte aligned */
  int64_t sh[2] = {1, 48};
  view.shape = sh;
  view.byte_offset = 16 * 4;
  DLTensor in = a;
  int64_t sh_in[2] = {1, 48};
  in.shape = sh_in;
  ck_assert_int_eq(TEC_CALL(fn, &in, &view), -1); /* [0, 48) and [16, 64) */
  int64_t sh16[2] = {1, 16};
  in.shape = sh16, view.shape = sh16;
  ck_assert_int_eq(TEC_CALL(fn, &in, &view), 0); /* [0, 16) and [16, 32) */
  ck_assert_float_eq(ap[16], 1.0f);
  ck_assert_int_eq(TEC_CALL(fn, &a, &c), 0);
  ck_assert_float_eq(((float *)c.data)[63], 64.0f);
  tec_dl_free(&a);
  tec_dl_free(&c);
  tec_ctx_free(ctx);
}
END_TEST

/* a shape whose byte count passes int64 is refused at the entry, before anything is read */
START_TEST(entry_refuses_shape_past_int64) {
  tec_ctx *ctx = tec_ctx_new();
  tec_packed_fn fn = build_add1(ctx);
  ck_assert_ptr_nonnull(fn);
  DLTensor a, c;
  ck_assert_int_eq(tec_dl_alloc(&a, TEC_F32, 2, (int64_t[]){1, 64}), 0);
  ck_assert_int_eq(tec_dl_alloc(&c, TEC_F32, 2, (int64_t[]){1, 64}), 0);
  int64_t big[2] = {1, (int64_t)1 << 62}, *sa = a.shape, *sc = c.shape;
  a.shape = big, c.shape = big;
  ck_assert_int_eq(TEC_CALL(fn, &a, &c), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 0 ('A') has more than 2^63 - 1 bytes "
                                        "(shape[1] is 4611686018427387904); a tensor must fit "
                                        "in memory");
  a.shape = sa, c.shape = sc;
  tec_dl_free(&a);
  tec_dl_free(&c);
  tec_ctx_free(ctx);
}
END_TEST

/* tec_module_run of a NULL module says so */
START_TEST(module_run_null) {
  ck_assert_int_eq(tec_module_run(NULL, "f", 0, NULL), -1);
  ck_assert_str_eq(tec_rt_last_error(), "tec_module_run: the module is NULL (did tec_build "
                                        "fail? its error is in its ctx)");
}
END_TEST

Suite *limits_suite(void) {
  Suite *s = suite_create("limits");
  TCase *t = tcase_create("limits");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, storage_align_int64_max);
  tcase_add_test(t, storage_align_int64_max_rfactor);
  tcase_add_test(t, storage_align_past_memory);
  tcase_add_test(t, split_huge_then_fuse);
  tcase_add_test(t, split_max_then_tile);
  tcase_add_test(t, split_huge_then_cache_write);
  tcase_add_test(t, split_nparts_max_twice);
  tcase_add_test(t, factors_past_int32);
  tcase_add_test(t, huge_factor_symbolic_extent);
  tcase_add_test(t, fuse_past_int64);
  tcase_add_test(t, null_stage_or_axis);
  tcase_add_test(t, vectorize_symbolic_output);
  tcase_add_test(t, entry_refuses_aliased_output);
  tcase_add_test(t, entry_refuses_shape_past_int64);
  tcase_add_test(t, module_run_null);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(limits_suite()); }

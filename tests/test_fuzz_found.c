/* test_fuzz_found.c — schedules the schedule-API fuzzer (tec-difftest, difftest/) found
 * failing, each kept as its shrunk reproducer: it must now lower, build and match the plain C
 * loops of its program (dt_instance_check), and its IR must show the fix where one is visible.
 * The fuzzer run that found each is named beside it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "tec/difftest.h"

/* Lowers the scheduled instance, asserts its IR holds each of want[] (and none of
 * unwanted[]), and that it matches the plain C loops of its program. */
static void lower_check(dt_instance *p, const char *const *want, const char *const *unwanted) {
  lower_func *f = tec_lower(p->sched, "f", p->nargs, p->args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(p->ctx));
  const char *text = tec_lower_str(f);
  for (int k = 0; want && want[k]; k++) tu_assert_contains(text, want[k]);
  for (int k = 0; unwanted && unwanted[k]; k++)
    ck_assert_msg(!strstr(text, unwanted[k]), "unexpected '%s' in\n%s", unwanted[k], text);
  char msg[1024] = "";
  ck_assert_msg(dt_instance_check(p, msg, sizeof msg) == 0, "%s", msg);
}

/* seed 20261202 case 1335 (elemwise, symbolic rows n = 5): C computed at the outer loop of D
 * split into 9 parts. Iterations 5..8 of i.outer are past the last row: C's region there is
 * empty, its extent negative (min(i.outer + 1, n) - i.outer), and the run failed with "out of
 * memory allocating -32 bytes for 'C'". The allocation is now clamped at 0 elements. */
START_TEST(empty_region_of_an_attached_stage) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_ELEMWISE, 1);
  ck_assert_ptr_nonnull(p);
  sch_schedule *s = p->sched;
  sch_stage *s_C = sch_stage_of(s, dt_instance_tensor(p, "C"));
  sch_stage *s_D = sch_stage_of(s, dt_instance_tensor(p, "D"));
  sch_iter *o, *i;
  OK(ctx, sch_split_nparts(s_D, sch_axis(s_D, 0), 9, &o, &i));
  OK(ctx, sch_compute_at(s_C, s_D, o));
  /* D's allocation provably non-negative: as it was */
  lower_check(p, (const char *[]){"allocate C[float32 * max(", "allocate D[float32 * (n*8)]", NULL},
              NULL);
  tec_ctx_free(ctx);
}
END_TEST

/* seed 20261204 case 13954 (reduce): fuse(i, j), split the fused loop into 10 parts, fuse the
 * inner part with reduce axis ka. The init before the reduce loop covered the box of rows and
 * columns the chunk's elements span, which includes elements of the previous chunk already
 * reduced: R[1] became 0 (a wrong result). (The fuse was refused for a while.) The init now
 * loops over the fused data axis itself and undoes the data fuse: exactly the chunk's
 * elements. */
START_TEST(data_fuse_then_reduce_fuse) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_REDUCE, 0);
  ck_assert_ptr_nonnull(p);
  sch_stage *s_R = sch_stage_of(p->sched, dt_instance_tensor(p, "R"));
  sch_iter *f, *o, *in, *g;
  OK(ctx, sch_fuse(s_R, sch_axis(s_R, 0), sch_axis(s_R, 1), &f));
  OK(ctx, sch_split_nparts(s_R, f, 10, &o, &in));
  OK(ctx, sch_fuse(s_R, in, sch_reduce_axis(s_R, 0), &g));
  lower_check(p, (const char *[]){"for (i.j.fused.inner.init, 0, ", NULL}, NULL);
  tec_ctx_free(ctx);
}
END_TEST

/* seed 20261212 case 23538 (matmul, 16x16x8): tile(i, j, 13, 3), reorder to (j.outer,
 * j.inner, i.inner, i.outer, k), fuse(i.outer, k). Row i = i.outer*13 + i.inner lives in the
 * fused reduce loop; the init before it zeroed the interval of rows it spans, [i.inner,
 * i.inner + 13], which holds rows of other i.inner iterations already reduced: C[208] became
 * 0. The init now loops over i.outer (i.outer.init) with the split's tail guard. */
START_TEST(split_outer_fused_with_reduce) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_MATMUL, 2);
  ck_assert_ptr_nonnull(p);
  sch_stage *s_C = sch_stage_of(p->sched, dt_instance_tensor(p, "C"));
  sch_iter *io, *jo, *ii, *ji, *g;
  OK(ctx, sch_tile(s_C, sch_axis(s_C, 0), sch_axis(s_C, 1), 13, 3, &io, &jo, &ii, &ji));
  OK(ctx, sch_reorder(s_C, 5, (sch_iter *[]){jo, ji, ii, io, sch_reduce_axis(s_C, 0)}));
  OK(ctx, sch_fuse(s_C, io, sch_reduce_axis(s_C, 0), &g));
  /* no loop over an interval of rows */
  lower_check(p, (const char *[]){"for (i.outer.init, 0, 2)", NULL},
              (const char *[]){"for (i.init", NULL});
  tec_ctx_free(ctx);
}
END_TEST

/* seed 38001 case 5667 (elemwise, symbolic rows n = 5), issue #38's extreme draws:
 * split_nparts(D, i, INT64_MAX - 1). The extent n is known only at run time, so the split could
 * not clamp nparts: the outer loop ran 2^63 - 2 iterations under a guard (a hang, killed after
 * 120 s). A count past 65536 is now min(count, extent) as a loop extent. */
START_TEST(nparts_past_a_symbolic_extent) {
  static const int64_t counts[] = {INT64_MAX - 1, INT64_MAX, (int64_t)1 << 62, 65537};
  for (int k = 0; k < 4; k++) {
    tec_ctx *ctx = tec_ctx_new();
    dt_instance *p = dt_instance_new(ctx, DT_ELEMWISE, 1);
    ck_assert_ptr_nonnull(p);
    sch_stage *s_D = sch_stage_of(p->sched, dt_instance_tensor(p, "D"));
    sch_iter *o, *i;
    OK(ctx, sch_split_nparts(s_D, sch_axis(s_D, 0), counts[k], &o, &i));
    lower_check(p, (const char *[]){"for (D.i.outer, 0, min(", NULL}, NULL);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* the same with a factor: the inner loop is min(factor, n). Computed at E's outer loop, D's
 * region is bounded by the constant 2^62 rows (bound inference's constant bound of min(2^62,
 * n)), whose bytes pass int64: refused by name instead of a wrapped allocation. */
START_TEST(factor_past_a_symbolic_extent) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_ELEMWISE, 1);
  sch_stage *s_D = sch_stage_of(p->sched, dt_instance_tensor(p, "D"));
  sch_stage *s_E = sch_stage_of(p->sched, dt_instance_tensor(p, "E"));
  sch_iter *o, *i, *eo, *ei;
  OK(ctx, sch_split(s_D, sch_axis(s_D, 0), INT64_MAX, &o, &i));
  OK(ctx, sch_split(s_E, sch_axis(s_E, 0), (int64_t)1 << 62, &eo, &ei));
  lower_check(p, (const char *[]){"(D.i.outer*min(9223372036854775807, n))",
                                  "(i.outer*min(4611686018427387904, n))", NULL}, NULL);
  OK(ctx, sch_compute_at(s_D, s_E, eo));
  ck_assert_ptr_null(tec_lower(p->sched, "f", p->nargs, p->args));
  ck_assert_str_eq(tec_ctx_error(ctx), "lower: the buffer of 'D' would hold more than 2^63 - 1 "
                                       "bytes (from dimension 0 on, its extents multiply past "
                                       "what int64 holds); shapes must fit in memory");
  tec_ctx_free(ctx);
}
END_TEST

/* seed 38101 case 917 (ASan build; prodcons): split_tail(B, i, 2^31 - 1, round_up) then
 * compute_at(B, C, j): round_up was left out of the clamp, so B's loop ran 2^31 - 1 rounded-up
 * iterations at every j (a hang). And seed 38002 case 1599 (elemwise, symbolic n):
 * split_tail(B, i, INT64_MAX - 1, round_up): B's buffer, rounded up to the factor, was
 * INT64_MAX - 1 floats (SIGSEGV). round_up is clamped like the others: its buffer is the
 * extent. */
START_TEST(round_up_past_the_extent) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_PRODCONS, 0);
  sch_stage *s_B = sch_stage_of(p->sched, dt_instance_tensor(p, "B"));
  sch_stage *s_C = sch_stage_of(p->sched, dt_instance_tensor(p, "C"));
  sch_iter *o, *i;
  OK(ctx, sch_split_tail(s_B, sch_axis(s_B, 0), 2147483647, SCH_TAIL_ROUND_UP, &o, &i));
  OK(ctx, sch_compute_at(s_B, s_C, sch_axis(s_C, 1)));
  lower_check(p, NULL, (const char *[]){"2147483647", NULL});
  tec_ctx_free(ctx);
  ctx = tec_ctx_new();
  p = dt_instance_new(ctx, DT_ELEMWISE, 1);
  s_B = sch_stage_of(p->sched, dt_instance_tensor(p, "B"));
  OK(ctx, sch_split_tail(s_B, sch_axis(s_B, 0), INT64_MAX - 1, SCH_TAIL_ROUND_UP, &o, &i));
  /* the buffer: ceil(n / min(f, n)) * min(f, n) rows, n at run time */
  lower_check(p,
              (const char *[]){"min(9223372036854775806, n)) + 1)*min(9223372036854775806, n))",
                               NULL},
              NULL);
  tec_ctx_free(ctx);
}
END_TEST

/* seed 38215 case 1444 (reduce, the issue #38 long run with extreme draws; session 23): a
 * prefetch 2^62 iterations ahead of kb. Its index arithmetic wrapped, the prefetch loop's extent
 * became about 2^58 and the run never ended. The offset is now clamped to the loop's extent
 * (and to 2^31): the prefetch stays, its loop short. */
START_TEST(prefetch_past_the_loop) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_REDUCE, 1);
  ck_assert_ptr_nonnull(p);
  p->target = "llvm -O0";
  sch_schedule *s = p->sched;
  te_tensor *A = dt_instance_tensor(p, "A");
  sch_stage *s_R = sch_stage_of(s, dt_instance_tensor(p, "R"));
  sch_iter *ka_o, *ka_i;
  OK(ctx, sch_split(s_R, sch_reduce_axis(s_R, 0), 3, &ka_o, &ka_i));
  OK(ctx, sch_prefetch(s_R, A, sch_reduce_axis(s_R, 1), (int64_t)1 << 62));
  lower_check(p, (const char *[]){"prefetch(", NULL}, (const char *[]){"4611686018427387904", NULL});
  tec_ctx_free(ctx);
}
END_TEST

Suite *fuzz_found_suite(void) {
  Suite *s = suite_create("fuzz_found");
  TCase *t = tcase_create("found");
  tcase_set_timeout(t, 120); /* each lowers, builds and runs several programs */
  tcase_add_test(t, empty_region_of_an_attached_stage);
  tcase_add_test(t, data_fuse_then_reduce_fuse);
  tcase_add_test(t, split_outer_fused_with_reduce);
  tcase_add_test(t, nparts_past_a_symbolic_extent);
  tcase_add_test(t, factor_past_a_symbolic_extent);
  tcase_add_test(t, round_up_past_the_extent);
  tcase_add_test(t, prefetch_past_the_loop);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(fuzz_found_suite()); }

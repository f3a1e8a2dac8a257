/* test_fuzz_found.c — schedules the schedule-API fuzzer (tec-difftest, difftest/) found
 * failing, each kept as its shrunk reproducer: it must now lower, build and match the plain C
 * loops of its program (dt_instance_check), and its IR must show the fix where one is visible.
 * The fuzzer run that found each is named beside it. */
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"
#include "tec/difftest.h"

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
  lower_func *f = tec_lower(s, "f", p->nargs, p->args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  const char *text = tec_lower_str(f);
  tu_assert_contains(text, "allocate C[float32 * max(");
  tu_assert_contains(text, "allocate D[float32 * (n*8)]"); /* provably non-negative: as it was */
  char msg[1024] = "";
  ck_assert_msg(dt_instance_check(p, msg, sizeof msg) == 0, "%s", msg);
  tec_ctx_free(ctx);
}
END_TEST

/* seed 20261204 case 13954 (reduce): fuse(i, j), split the fused loop into 10 parts, fuse the
 * inner part with reduce axis ka. The init before the reduce loop covered the box of rows and
 * columns the chunk's elements span, which includes elements of the previous chunk already
 * reduced: R[1] became 0 (a wrong result). Such a fuse is now refused; fusing a split of one
 * data axis with a reduce axis still computes. */
START_TEST(data_fuse_then_reduce_fuse) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *p = dt_instance_new(ctx, DT_REDUCE, 0);
  ck_assert_ptr_nonnull(p);
  sch_stage *s_R = sch_stage_of(p->sched, dt_instance_tensor(p, "R"));
  sch_iter *f, *o, *in, *g;
  OK(ctx, sch_fuse(s_R, sch_axis(s_R, 0), sch_axis(s_R, 1), &f));
  OK(ctx, sch_split_nparts(s_R, f, 10, &o, &in));
  ck_assert_int_eq(sch_fuse(s_R, in, sch_reduce_axis(s_R, 0), &g), -1);
  ck_assert_str_eq(tec_ctx_error(ctx),
                   "fuse: data loop 'i.j.fused.inner' of stage 'R' comes from fusing data axes, "
                   "and the reduction's init before a reduce loop needs a box of elements per "
                   "iteration, which a fused data loop does not cover; fuse reduce axis 'ka' "
                   "with a data axis or a split of one");
  tec_ctx_clear_error(ctx);
  char msg[1024] = "";
  ck_assert_msg(dt_instance_check(p, msg, sizeof msg) == 0, "%s", msg); /* the rest computes */
  tec_ctx_free(ctx);
}
END_TEST

Suite *fuzz_found_suite(void) {
  Suite *s = suite_create("fuzz_found");
  TCase *t = tcase_create("found");
  tcase_add_test(t, empty_region_of_an_attached_stage);
  tcase_add_test(t, data_fuse_then_reduce_fuse);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(fuzz_found_suite()); }

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

Suite *fuzz_found_suite(void) {
  Suite *s = suite_create("fuzz_found");
  TCase *t = tcase_create("found");
  tcase_add_test(t, empty_region_of_an_attached_stage);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(fuzz_found_suite()); }

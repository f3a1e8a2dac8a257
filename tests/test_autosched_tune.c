/* test_autosched_tune.c — the auto-scheduler's tuned mode measured (slow tier): tune_run over
 * the generated space of a matmul with bias and ReLU and of a two-stage stencil, a few trials
 * with the cost-model tuner (per-stage features) and the confirmation stage, every candidate's
 * output checked against the unscheduled program (the tuner's reference callback: 0 wrong), the
 * records holding each trial's config, trace and per-stage features, the confirmed best never
 * slower than the instant schedule measured beside it, tec_autoschedule_tuned applying that
 * record (its output against plain C), and no longer applying it once a constant of the compute
 * is edited. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include "asprog.h"
#include "tec/autosched.h"
#include "tec/tune_model.h"
#include "testutil.h"

/* the tuner's reference: the unscheduled program, built at -O0 */
typedef struct ref_ctx {
  const asprog *g;
  tec_module *m;
} ref_ctx;

static int reference(void *user, DLTensor *const *args, int nargs, float *out, int64_t nout) {
  ref_ctx *r = user;
  if (nargs != r->g->nargs || tec_module_run(r->m, "ref_f", nargs, args) != 0) return -1;
  memcpy(out, args[nargs - 1]->data, sizeof *out * (size_t)nout);
  return 0;
}

static sch_schedule *fresh(const asprog *g) {
  return sch_create(g->ctx, 1, (te_tensor *[]){g->args[g->nargs - 1]});
}

static void tune_and_apply(asprog *g, asprog *edited, const char *records) {
  tec_ctx *ctx = g->ctx;
  lower_func *rf = tec_lower(fresh(g), "ref_f", g->nargs, g->args);
  ref_ctx rc = {g, rf ? tec_build(ctx, 1, &rf, "llvm -O0") : NULL};
  ck_assert_msg(rc.m != NULL, "%s", tec_ctx_error(ctx));
  tune_task task;
  ck_assert_msg(tune_task_auto(fresh(g), NULL, NULL, &task) == 0, "%s", tec_ctx_error(ctx));
  tune_options o = tune_options_default();
  o.trials = 16, o.batch = 8, o.repeats = 3, o.confirm = 3, o.confirm_rounds = 4;
  o.tuner = tune_have_xgb() ? "xgb" : "random";
  o.records = records, o.reference = reference, o.reference_user = &rc, o.seed = 3;
  tune_result r;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  int ok = 0, wrong = 0;
  for (int i = 0; i < r.ntrials; i++) {
    ok += r.trials[i].status == TUNE_OK;
    wrong += r.trials[i].status == TUNE_WRONG;
    if (r.trials[i].status != TUNE_OK)
      fprintf(stderr, "%s: %s\n", r.trials[i].config, r.trials[i].error);
  }
  ck_assert_int_eq(wrong, 0);
  ck_assert_int_eq(ok, r.ntrials);
  ck_assert_int_ge(r.ntrials, 12); /* the spaces have hundreds of configs */
  ck_assert_int_eq(r.trials[0].index, task.default_index); /* the instant schedule first */
  /* confirmed side by side: the best is never slower than the instant schedule beside it */
  ck_assert_int_ge(r.best_confirmed, 0);
  double def = -1, best = r.confirmed[r.best_confirmed].median;
  for (int i = 0; i < r.nconfirmed; i++)
    if (r.confirmed[i].index == task.default_index) def = r.confirmed[i].median;
  ck_assert_msg(def > 0, "the instant schedule was not confirmed");
  ck_assert_msg(best <= def, "tuned %g s > instant %g s", best, def);
  const char *best_cfg = tec_ctx_strdup(ctx, r.confirmed[r.best_confirmed].config);
  tune_result_free(&r);

  /* the records: every trial's config, trace and per-stage features */
  char *text = tu_read_file(records, NULL);
  ck_assert_ptr_nonnull(text);
  tu_assert_contains(text, "\"template\":\"auto\"");
  tu_assert_contains(text, "\"features_version\":101");
  tu_assert_contains(text, "\"trace\":{\"tec_trace\"");
  assert_not_contains(text, "\"trace\":null");
  free(text);

  /* applied: the confirmed best's config, right against plain C */
  sch_schedule *s = fresh(g);
  tec_autosched_report rep;
  ck_assert_msg(tec_autoschedule_tuned(s, NULL, NULL, records, &rep) == 0, "%s",
                tec_ctx_error(ctx));
  ck_assert_msg(rep.warning == NULL, "%s", rep.warning);
  ck_assert_str_eq(rep.config, best_cfg);
  DLTensor dl[4];
  asprog_args(g, dl, 5);
  char msg[512];
  ck_assert_msg(asprog_run(g, s, NULL, dl, msg, sizeof msg) == 0, "%s", msg);
  float *want = asprog_plain(g, dl);
  int64_t n = tec_dl_numel(&dl[g->nargs - 1]);
  ck_assert_double_lt(tu_max_err(tu_f32(&dl[g->nargs - 1]), want, n), 1e-4);
  free(want);
  asprog_free_args(g, dl);

  /* a constant of the compute edited: the record no longer applies */
  ck_assert_int_eq(tec_autoschedule_tuned(fresh(edited), NULL, NULL, records, &rep), 0);
  ck_assert_ptr_nonnull(rep.warning);
  tu_assert_contains(rep.warning, "no record for auto h=");
  tec_module_free(rc.m);
}

/* the program (stencil: 0 the matmul, 1 the stencil) tuned, and an edited copy */
static void tune_case(int stencil) {
  char path[] = "/tmp/tec_autosched_tuneXXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  tec_ctx *ctx = tec_ctx_new();
  asprog g, e;
  if (stencil) {
    asprog_stencil(&g, ctx, 90, 140, 1.0 / 9);
    asprog_stencil(&e, ctx, 90, 140, 1.0 / 8);
  } else {
    asprog_matmul(&g, ctx, 64, 96, 70, 0);
    asprog_matmul(&e, ctx, 64, 96, 70, 0.25);
  }
  tune_and_apply(&g, &e, path);
  unlink(path);
  tec_ctx_free(ctx);
}

START_TEST(tune_matmul_bias_relu) { tune_case(0); }
END_TEST

START_TEST(tune_stencil) { tune_case(1); }
END_TEST

START_TEST(stage_features) {
  /* two configs of the stencil that differ in bx's level: the per-stage features tell them
   * apart where the hottest-store features see the same nest for by */
  tec_ctx *ctx = tec_ctx_new();
  asprog g;
  asprog_stencil(&g, ctx, 90, 140, 1.0 / 9);
  tune_task task;
  ck_assert_msg(tune_task_auto(fresh(&g), NULL, NULL, &task) == 0, "%s", tec_ctx_error(ctx));
  int k = tune_space_find(task.space, "bx.at");
  ck_assert_int_ge(k, 0);
  int64_t kidx[64], idx[3];
  for (int64_t v = 0; v < 3; v++) {
    tune_space_decode(task.space, task.default_index, kidx);
    kidx[k] = v; /* inline, attach, root */
    idx[v] = tune_space_encode(task.space, kidx);
  }
  float x[3][TUNE_NFEATURES];
  size_t before = tec_ctx_arena_bytes(ctx);
  for (int v = 0; v < 3; v++) { /* each candidate in a ctx of its own, as the tuner does */
    tec_ctx *c = tec_ctx_new();
    lower_func *f = task.lower(&task, c, idx[v], NULL, NULL);
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(c));
    ck_assert_int_eq(task.features(c, f, x[v], TUNE_NFEATURES), TUNE_NFEATURES);
    tec_ctx_free(c);
  }
  /* the candidates scheduled copies of the program: nothing was allocated in the user's ctx
   * (the tuner lowers candidates on two threads at once) */
  ck_assert_uint_eq(tec_ctx_arena_bytes(ctx), before);
  /* inlined: one stage; attached: bx allocated inside a loop (level >= 1); at the root: 0.
   * Slots are ordered by work, which the tile's loop bounds change, so bx is looked for in
   * both slots (the other, by, is an argument: -1) */
  int depth = 11, second = TUNE_PER_STAGE; /* slot 1's features */
  ck_assert_float_eq(x[0][second], 0.0f);
  float d1 = fmaxf(x[1][depth], x[1][second + depth]), d2 = fmaxf(x[2][depth], x[2][second + depth]);
  ck_assert_float_ge(d1, 1.0f);
  ck_assert_float_eq(d2, 0.0f);
  ck_assert_float_eq(fminf(x[1][depth], x[1][second + depth]), -1.0f);
  ck_assert_float_eq(fminf(x[2][depth], x[2][second + depth]), -1.0f);
  ck_assert_str_eq(tune_feature_stage_name(ctx, second + depth), "S1.alloc_depth");
  ck_assert_int_eq(tune_features_stages(ctx, NULL, x[0], TUNE_NFEATURES), -1);
  tu_assert_contains(tec_ctx_error(ctx), "needs a ctx, a lowered function");
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("autosched_tune");
  TCase *tc = tcase_create("tune");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, stage_features);
  tcase_add_test(tc, tune_matmul_bias_relu);
  tcase_add_test(tc, tune_stencil);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

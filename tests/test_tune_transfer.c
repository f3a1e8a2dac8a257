/* test_tune_transfer.c — the cost-model tuner's transfer (tune_options.transfer, tune/
 * transfer.c): every record carries its candidate's features and their set's version, read
 * back as written; a records file of another workload trains the model before the new
 * workload's first measurement, so the first batch follows what those records say (labels set
 * by this test: configs whose nr is one vector (16 with AVX-512, 8 with AVX2) fastest, so the
 * model's picks must all have it, which 6 random picks would have with odds of about 1 in
 * 4000); the rows taken and every kind skipped
 * (another template, another target, no features, a workload of one row, the workload's own)
 * are counted; the first batch is the same for the same seed; bad input (a tuner that does
 * not learn, a missing file, a directory, a space of tune_define_* knobs, a bad group weight)
 * is refused with a message; corrupt lines and non-finite numbers are counted, not used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tec/tune.h"
#include "tec/tune_model.h"
#include "testutil.h"

static char dir[64];

static void setup(void) {
  strcpy(dir, "/tmp/tec_transfer_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "test_tune_transfer: could not remove %s\n", dir);
}

static void dense_task(tec_ctx *ctx, const topi_dense *p, const char *shape, tune_task *task) {
  ck_assert_msg(tune_task_topi(ctx, topi_template_find("dense"), p, shape, NULL, task) == 0, "%s",
                tec_ctx_error(ctx));
}

static tune_options quick(int trials, const char *tuner) {
  tune_options o = tune_options_default();
  o.trials = trials, o.batch = 8, o.repeats = 1, o.warmup = 0, o.seed = 11, o.tuner = tuner;
  return o;
}

static const topi_dense prob_a = {.m = 64, .n = 64, .k = 64, .const_b = 1};
static const topi_dense prob_b = {.m = 32, .n = 64, .k = 96, .const_b = 1};

/* Every record has the features of its trial (to the 5 digits written) and the version. */
START_TEST(records_carry_features) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  dense_task(ctx, &prob_a, "m=64,n=64,k=64", &task);
  char rec[128];
  snprintf(rec, sizeof rec, "%s/a.jsonl", dir);
  tune_options o = quick(6, "random");
  o.records = rec;
  tune_result r;
  ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  tune_record *recs;
  int n;
  ck_assert_int_eq(tune_records_load(ctx, rec, stderr, &recs, &n), 0);
  ck_assert_int_eq(r.nconfirmed, 6); /* all six configs: confirm is 8 */
  ck_assert_int_eq(n, 6 + 6); /* the trials, then the confirmation's: the features of the same configs */
  for (int i = 0; i < n; i++) {
    ck_assert_int_eq(recs[i].features_version, TUNE_FEATURES_VERSION);
    ck_assert_int_eq(recs[i].nfeatures, TUNE_NFEATURES);
    const tune_trial *t = i < 6 ? &r.trials[i] : &r.confirmed[i - 6];
    ck_assert_ptr_nonnull(t->features);
    for (int f = 0; f < TUNE_NFEATURES; f++) {
      double a = recs[i].features[f], b = t->features[f];
      ck_assert_msg(a - b <= 1e-4 * (1 + (b < 0 ? -b : b)) && b - a <= 1e-4 * (1 + (b < 0 ? -b : b)),
                    "record %d feature %d (%s): %g read back, %g measured", i, f, tune_feature_name(f), a, b);
    }
  }
  tune_result_free(&r);
  tec_ctx_free(ctx);
}
END_TEST

/* appends a record line for trial t of task, its gflops replaced by g (no features if drop) */
static void put(tec_ctx *ctx, FILE *f, const tune_task *task, const tune_trial *t, double g, int drop) {
  tune_trial c = *t;
  c.gflops = g, c.status = TUNE_OK;
  if (drop) c.features = NULL;
  const char *line = tune_record_json(ctx, task, &c);
  ck_assert_ptr_nonnull(line);
  fprintf(f, "%s\n", line);
}

/* " nr=L " with L the host's float lanes (16 with AVX-512, 8 with AVX2): the register tile
 * one vector wide, whose features (vector count and width per row) the model can tell from the
 * wider tiles' on any host; set by transfer_learns */
static char one_vector[32];
static int one_vec(const char *config) { return strstr(config, one_vector) != NULL; }

START_TEST(transfer_learns) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task ta, tb, tother;
  int bits = tec_target_vector_bits(ctx, NULL);
  ck_assert_int_ge(bits, 128);
  snprintf(one_vector, sizeof one_vector, " nr=%d ", bits / 32);
  dense_task(ctx, &prob_a, "m=64,n=64,k=64", &ta);
  dense_task(ctx, &prob_b, "m=32,n=64,k=96", &tb);
  if (!tune_have_xgb()) { /* the refusal names the package (a cross build: no XGBoost) */
    tune_options ox = quick(9, "xgb");
    ox.transfer = "unused.jsonl";
    tune_result rx;
    ck_assert_int_eq(tune_run(ctx, &tb, &ox, &rx), -1);
    tu_assert_contains(tec_ctx_error(ctx), "libxgboost-dev");
    tec_ctx_free(ctx);
    return;
  }
  tune_result ra;
  tune_options oa = quick(24, "random");
  ck_assert_msg(tune_run(ctx, &ta, &oa, &ra) == 0, "%s", tec_ctx_error(ctx));
  int with = 0;
  for (int i = 0; i < ra.ntrials; i++) with += one_vec(ra.trials[i].config);
  ck_assert_msg(with >= 2 && with <= ra.ntrials - 2, "the random trials should mix%sand others: %d of %d",
                one_vector, with,
                ra.ntrials);

  /* the transfer file: workload A's 24 rows labelled "nr one vector is 10x faster", and one line of
   * each kind that must be skipped */
  char path[128];
  snprintf(path, sizeof path, "%s/t.jsonl", dir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  for (int i = 0; i < ra.ntrials; i++) put(ctx, f, &ta, &ra.trials[i], one_vec(ra.trials[i].config) ? 100 : 10, 0);
  tother = ta, tother.template_name = "matmul_own", tother.workload = "matmul_own n=64";
  put(ctx, f, &tother, &ra.trials[0], 50, 0);                      /* another template */
  tother = ta, tother.target = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72";
  put(ctx, f, &tother, &ra.trials[1], 50, 0);                      /* another target */
  tother = ta, tother.workload = "dense k=8,m=8,n=8";
  put(ctx, f, &tother, &ra.trials[2], 50, 0);                      /* a workload of one row */
  tother = ta, tother.workload = "dense k=16,m=16,n=16";
  put(ctx, f, &tother, &ra.trials[3], 50, 1);                      /* no features */
  put(ctx, f, &tb, &ra.trials[4], 50, 0);                          /* B's own */
  fprintf(f, "{\"workload\": \"dense\", this line is cut\n");     /* corrupt: counted */
  fprintf(f, "{\"workload\":\"dense k=4,m=4,n=4\",\"target\":\"x\",\"template\":\"dense\",\"config\":\"\","
             "\"status\":\"ok\",\"gflops\":1e999}\n");                   /* not a finite number: counted */
  fprintf(f, "{\"workload\":\"dense k=4,m=4,n=4\",\"target\":\"%s\",\"template\":\"dense\",\"config\":\"\","
             "\"status\":\"ok\",\"gflops\":3,\"features_version\":1,\"features\":null}\n",
          ta.target);                                                 /* features not an array: none */
  ck_assert_int_eq(fclose(f), 0);

  tune_options ob = quick(9, "xgb");
  ob.transfer = path;
  tune_result rb;
  ck_assert_msg(tune_run(ctx, &tb, &ob, &rb) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(rb.transfer_rows, 24);
  ck_assert_int_eq(rb.transfer_groups, 1);
  ck_assert_int_eq(rb.transfer_skipped_other, 2);
  ck_assert_int_eq(rb.transfer_skipped_small, 1);
  ck_assert_int_eq(rb.transfer_skipped_nofeat, 2);
  ck_assert_int_eq(rb.transfer_skipped_corrupt, 2);
  ck_assert_int_eq(rb.transfer_skipped_self, 1);
  ck_assert_int_eq(rb.ntrials, 9);
  /* trial 0: the default; 1..6: the model's six best; 7, 8: exploration */
  for (int i = 1; i <= 6; i++)
    ck_assert_msg(one_vec(rb.trials[i].config), "trial %d of the first batch, %s, does not follow the transfer rows",
                  i, rb.trials[i].config);

  /* the same seed and file: the same first batch */
  tune_result rc;
  ck_assert_msg(tune_run(ctx, &tb, &ob, &rc) == 0, "%s", tec_ctx_error(ctx));
  for (int i = 0; i < 9; i++) ck_assert_int_eq(rc.trials[i].index, rb.trials[i].index);
  tune_result_free(&rc);

  /* labels reversed (one vector the slowest): none such among the model's picks */
  f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  for (int i = 0; i < ra.ntrials; i++) put(ctx, f, &ta, &ra.trials[i], one_vec(ra.trials[i].config) ? 10 : 100, 0);
  ck_assert_int_eq(fclose(f), 0);
  ck_assert_msg(tune_run(ctx, &tb, &ob, &rc) == 0, "%s", tec_ctx_error(ctx));
  for (int i = 1; i <= 6; i++)
    ck_assert_msg(!one_vec(rc.trials[i].config), "trial %d, %s: the transfer rows rank%slast", i, rc.trials[i].config, one_vector);
  tune_result_free(&rc);
  tune_result_free(&rb);
  tune_result_free(&ra);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(transfer_bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  dense_task(ctx, &prob_a, "m=64,n=64,k=64", &task);
  char path[128];
  snprintf(path, sizeof path, "%s/none.jsonl", dir);
  tune_result r;
  tune_options o = quick(4, "random");
  o.transfer = path;
  ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1); /* random does not learn */
  tu_assert_contains(tec_ctx_error(ctx), "for the cost-model tuner, xgb");
  tu_assert_contains(tec_ctx_error(ctx), "tuner random");
  if (tune_have_xgb()) {
    o.tuner = "xgb";
    tec_ctx_clear_error(ctx);
    ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1); /* no such file */
    tu_assert_contains(tec_ctx_error(ctx), "cannot read the records file");
    tu_assert_contains(tec_ctx_error(ctx), "transfer");
    tu_assert_contains(tec_ctx_error(ctx), path);

    /* a directory is not a records file */
    o.transfer = dir;
    tec_ctx_clear_error(ctx);
    ck_assert_int_eq(tune_run(ctx, &task, &o, &r), -1);
    tu_assert_contains(tec_ctx_error(ctx), "reading the records file");
    tu_assert_contains(tec_ctx_error(ctx), "(the transfer records)");
    o.transfer = path;

    /* a space of the user's own knobs has no features: refused */
    tune_space *sp = tune_space_new(ctx);
    ck_assert_int_eq(tune_define_knob(sp, "u", 2, (const int64_t[]){1, 2}, NULL), 0);
    tune_task own = task;
    own.space = sp, own.template_name = "mine", own.workload = "mine n=1", own.default_index = 0;
    tec_ctx_clear_error(ctx);
    ck_assert_int_eq(tune_run(ctx, &own, &o, &r), -1);
    tu_assert_contains(tec_ctx_error(ctx), "needs a topi template's space");

    /* an empty file: nothing to learn from, the tuner runs (random first batch) */
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_msg(tune_run(ctx, &task, &o, &r) == 0, "%s", tec_ctx_error(ctx));
    ck_assert_int_eq(r.transfer_rows, 0);
    ck_assert_int_eq(r.ntrials, 4);
    tune_result_free(&r);

    /* group weights must be finite and > 0 */
    tec_ctx_clear_error(ctx);
    tune_model *m = tune_model_new(ctx, 1);
    ck_assert_ptr_nonnull(m);
    float x[3 * TUNE_NFEATURES] = {0};
    double y[3] = {1, 2, 3};
    ck_assert_int_eq(tune_model_fit_weighted(m, x, y, 3, (int[]){1, 2}, (float[]){1, 0}, 2), -1);
    tu_assert_contains(tec_ctx_error(ctx), "group 1 has weight 0");
    ck_assert_int_eq(tune_model_fit_weighted(m, x, y, 3, (int[]){1, 2}, (float[]){1, 3}, 2), 0);
    tune_model_free(m);
  }
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tune_transfer");
  TCase *tc = tcase_create("tune_transfer");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, records_carry_features);
  tcase_add_test(tc, transfer_learns);
  tcase_add_test(tc, transfer_bad_input);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

/* test_autosched_net.c — the auto-scheduler at the network level: the task scheduler
 * (autosched/tasks.c) on three programs, two of one structure, with a fake measurer (seconds
 * from a formula, no clock): programs deduplicated into tasks, the instant schedule measured
 * first, the budget allocated by the gradient of count x time (the heavy task gets the rounds,
 * two equally slow tasks share them about as their counts), deterministic for a seed, one record
 * per trial, failed trials kept out of the best; and a small network with no template
 * (options.autosched: instant, then tuned by net_tune_auto measuring in place, then built on its
 * records) against the naive reference (support/netref.c). Bad input refused by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "asprog.h"
#include "net/internal.h"
#include "netref.h"
#include "tec/autosched.h"
#include "testutil.h"

typedef struct fake {
  double base[3];  /* seconds of each program's configs: base x (1 + a config's hash share) */
  int calls[3];    /* measure calls per program */
  int64_t wrong;   /* a config index that is reported wrong (-1: none) */
} fake;

static tune_status fake_measure(void *user, int prog, int64_t index, double *s, char *err, size_t len) {
  fake *f = user;
  f->calls[prog]++;
  if (index == f->wrong) {
    snprintf(err, len, "fake: config %lld is wrong", (long long)index);
    return TUNE_WRONG;
  }
  *s = f->base[prog] * (1 + (double)((uint64_t)index * 2654435761u % 97) / 97.0);
  return TUNE_OK;
}

/* matmul, stencil, matmul (the same structure as the first): three programs in ctx */
static void three(tec_ctx *ctx, asprog *g, sch_schedule **s) {
  asprog_matmul(&g[0], ctx, 32, 32, 32, 0);
  asprog_stencil(&g[1], ctx, 16, 16, 0.5);
  asprog_matmul(&g[2], ctx, 32, 32, 32, 0);
  for (int i = 0; i < 3; i++) {
    s[i] = sch_create(ctx, 1, (te_tensor *[]){g[i].args[g[i].nargs - 1]});
    ck_assert_ptr_nonnull(s[i]);
  }
}

static tec_autosched_tasks_result run(tec_ctx *ctx, fake *f, int trials, const char *records) {
  asprog g[3];
  sch_schedule *s[3];
  three(ctx, g, s);
  tec_autosched_tasks_options o = {.trials = trials, .batch = 2, .tuner = "random", .seed = 5,
                                   .records = records, .measure = fake_measure, .user = f};
  tec_autosched_tasks_result r;
  ck_assert_msg(tec_autosched_tune_tasks(ctx, 3, s, &o, &r) == 0, "%s", tec_ctx_error(ctx));
  return r;
}

START_TEST(allocates_by_weight) {
  tec_ctx *ctx = tec_ctx_new();
  char rec[] = "/tmp/tec_as_net_XXXXXX";
  int fd = mkstemp(rec);
  ck_assert_int_ge(fd, 0);
  close(fd);
  /* the matmul (twice in the network) 100x slower than the stencil: every round after the
   * warm-up goes to it */
  fake f = {.base = {1e-3, 1e-5, 1e-3}, .wrong = -1};
  tec_autosched_tasks_result r = run(ctx, &f, 20, rec);
  ck_assert_int_eq(r.ntasks, 2);
  ck_assert_int_eq(r.prog_task[0], 0);
  ck_assert_int_eq(r.prog_task[1], 1);
  ck_assert_int_eq(r.prog_task[2], 0);
  ck_assert_int_eq(r.tasks[0].count, 2);
  ck_assert_int_eq(r.tasks[1].count, 1);
  ck_assert_int_eq(r.tasks[0].first, 0);
  ck_assert_int_eq(r.tasks[1].first, 1);
  ck_assert_int_eq(f.calls[2], 0); /* a task is measured at its first program */
  ck_assert_int_eq(r.tasks[0].trials + r.tasks[1].trials, 20);
  ck_assert_int_eq(r.tasks[1].trials, 1);
  ck_assert_int_eq(r.tasks[0].trials, 19);
  ck_assert_int_eq(r.nrounds, 2 + 18 / 2); /* the warm-up, then 9 rounds of 2 */
  ck_assert_int_eq(r.round_task[0], 0);
  ck_assert_int_eq(r.round_task[1], 1);
  for (int i = 2; i < r.nrounds; i++) ck_assert_int_eq(r.round_task[i], 0);
  /* the instant schedule first, its time the formula's for the default config */
  tune_space sp;
  asprog g;
  asprog_matmul(&g, ctx, 32, 32, 32, 0);
  ck_assert_int_eq(tec_autosched_space(sch_create(ctx, 1, (te_tensor *[]){g.args[g.nargs - 1]}),
                                       NULL, NULL, &sp), 0);
  int64_t d = tune_space_default_index(&sp);
  double want = 1e-3 * (1 + (double)((uint64_t)d * 2654435761u % 97) / 97.0);
  ck_assert_double_eq_tol(r.tasks[0].initial_s, want, 1e-12);
  ck_assert(r.tasks[0].best_s <= r.tasks[0].initial_s && r.tasks[0].best_s >= 1e-3);
  ck_assert_double_eq_tol(r.initial_s, 2 * r.tasks[0].initial_s + r.tasks[1].initial_s, 1e-12);
  /* one record per trial, keyed as tune_task_auto's */
  tune_record *recs;
  int n;
  ck_assert_int_eq(tune_records_load(ctx, rec, NULL, &recs, &n), 0);
  ck_assert_int_eq(n, 20);
  for (int i = 0; i < n; i++) {
    ck_assert_str_eq(recs[i].template_name, "auto");
    ck_assert(!strcmp(recs[i].workload, r.tasks[0].workload) || !strcmp(recs[i].workload, r.tasks[1].workload));
  }
  unlink(rec);
  /* the same seed, the same rounds and best configs */
  fake f2 = {.base = {1e-3, 1e-5, 1e-3}, .wrong = -1};
  tec_autosched_tasks_result r2 = run(ctx, &f2, 20, NULL);
  ck_assert_int_eq(r2.nrounds, r.nrounds);
  ck_assert_int_eq(r2.tasks[0].best_index, r.tasks[0].best_index);
  ck_assert_double_eq(r2.tasks[0].best_s, r.tasks[0].best_s);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(shares_by_time) {
  tec_ctx *ctx = tec_ctx_new();
  /* equally slow configs: the stencil, once in the network, gets about half the matmul's
   * trials (the matmul counts twice); Ansor's forward term count x best / trials balances */
  fake f = {.base = {1e-3, 1e-3, 1e-3}, .wrong = -1};
  tec_autosched_tasks_result r = run(ctx, &f, 32, NULL);
  int a = r.tasks[0].trials, b = r.tasks[1].trials;
  printf("matmul x2: %d trials, stencil x1: %d trials (spaces %lld, %lld)\n", a, b,
         (long long)r.tasks[0].space, (long long)r.tasks[1].space);
  ck_assert_int_eq(a + b, 32);
  ck_assert_msg(a > b && b >= 6 && a <= 3 * b, "matmul %d, stencil %d trials", a, b);
  /* the stencil 100x slower instead: it takes the rounds */
  fake g = {.base = {1e-5, 1e-3, 1e-5}, .wrong = -1};
  r = run(ctx, &g, 20, NULL);
  ck_assert_int_eq(r.tasks[0].trials, 1);
  ck_assert_int_eq(r.tasks[1].trials, 19);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(failed_trials) {
  tec_ctx *ctx = tec_ctx_new();
  asprog g;
  asprog_matmul(&g, ctx, 32, 32, 32, 0);
  tune_space sp;
  ck_assert_int_eq(tec_autosched_space(sch_create(ctx, 1, (te_tensor *[]){g.args[g.nargs - 1]}),
                                       NULL, NULL, &sp), 0);
  /* the instant schedule reported wrong: no initial time, the task still gets rounds (the
   * first after the warm-up: it has no estimate yet) and its best is among the others */
  fake f = {.base = {1e-3, 1e-5, 1e-3}, .wrong = tune_space_default_index(&sp)};
  tec_autosched_tasks_result r = run(ctx, &f, 12, NULL);
  ck_assert_double_eq(r.tasks[0].initial_s, 0);
  ck_assert_int_ge(r.tasks[0].trials, 3);
  ck_assert_int_eq(r.round_task[2], 0);
  ck_assert_int_ne(r.tasks[0].best_index, f.wrong);
  ck_assert(r.tasks[0].best_s >= 1e-3);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  asprog g[3];
  sch_schedule *s[3];
  three(ctx, g, s);
  fake f = {.wrong = -1};
  tec_autosched_tasks_result r;
  tec_autosched_tasks_options o = {.trials = 1, .measure = fake_measure, .user = &f};
  ck_assert_int_eq(tec_autosched_tune_tasks(ctx, 3, s, &o, &r), -1);
  tu_assert_contains(tec_ctx_error(ctx), "a budget of 1 trials for 2 tasks; give at least 2");
  tec_ctx_clear_error(ctx);
  o.trials = 4, o.measure = NULL;
  ck_assert_int_eq(tec_autosched_tune_tasks(ctx, 3, s, &o, &r), -1);
  tu_assert_contains(tec_ctx_error(ctx), "options.measure is NULL");
  tec_ctx_clear_error(ctx);
  o.measure = fake_measure, o.tuner = "best";
  ck_assert_int_eq(tec_autosched_tune_tasks(ctx, 3, s, &o, &r), -1);
  tu_assert_contains(tec_ctx_error(ctx), "tuner 'best'; legal: xgb, random, grid, anneal");
  tec_ctx_clear_error(ctx);
  o.tuner = "random", o.alpha = 2;
  ck_assert_int_eq(tec_autosched_tune_tasks(ctx, 3, s, &o, &r), -1);
  tu_assert_contains(tec_ctx_error(ctx), "alpha in [0, 1]");
  tec_ctx_clear_error(ctx);
  o.alpha = 0;
  s[1] = NULL;
  ck_assert_int_eq(tec_autosched_tune_tasks(ctx, 3, s, &o, &r), -1);
  tu_assert_contains(tec_ctx_error(ctx), "program 1 is NULL");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tec_autosched_tune_tasks(ctx, 0, s, &o, &r), -1);
  tu_assert_contains(tec_ctx_error(ctx), "0 programs");
  /* the network's side */
  char err[256];
  ck_assert_ptr_null(net_new(&(net_options){.autosched = 2}, 3, 8, 8, err, sizeof err));
  tu_assert_contains(err, "autosched 2; legal: 0 (the templates) or 1");
  net *n = net_new(&(net_options){.seed = 1}, 3, 8, 8, err, sizeof err);
  ck_assert_int_ge(net_conv(n, "c", 0, 4, 3, 1, 0, TOPI_ACT_NONE, -1), 0);
  net_tune_auto_options to = {.trials = 4, .records = "/tmp/x.jsonl"};
  ck_assert_int_eq(net_tune_auto(n, &to, ctx, &r), -1);
  tu_assert_contains(net_error(n), "the network is not auto-scheduled");
  net_free(n);
  tec_ctx_free(ctx);
}
END_TEST

/* input 3x12x12, conv 3x3 (8, relu), depthwise 3x3/2 (relu6), pointwise (16) + the head */
static net *small(const char *records) {
  char err[256];
  net *n = net_new(&(net_options){.seed = 3, .autosched = 1, .records = records}, 3, 12, 12,
                   err, sizeof err);
  ck_assert_msg(n != NULL, "%s", err);
  int x = net_conv(n, "conv", 0, 8, 3, 1, 0, TOPI_ACT_RELU, -1);
  x = net_conv(n, "dw", x, 8, 3, 2, 1, TOPI_ACT_RELU6, -1);
  x = net_conv(n, "pw", x, 16, 1, 1, 0, TOPI_ACT_NONE, -1);
  x = net_global_pool(n, "gpool", x);
  x = net_dense(n, "fc", x, 10);
  ck_assert_msg(net_softmax(n, "softmax", x) >= 0, "%s", net_error(n));
  return n;
}

/* runs n on a seeded image against the naive reference: the logits' error of their largest */
static double check(net *n) {
  ck_assert_msg(net_compile(n) == 0 && net_prepare(n) == 0, "%s", net_error(n));
  float *img = net_image(n, 5), logits[10], probs[10];
  nr_forward(n, img, logits, probs);
  ck_assert_msg(net_run(n, img, NULL) == 0, "%s", net_error(n));
  double dm = 0, lm = 0;
  for (int i = 0; i < 10; i++)
    dm = fmax(dm, fabs((double)net_logits(n)[i] - logits[i])), lm = fmax(lm, fabs((double)logits[i]));
  free(img);
  ck_assert_msg(lm > 0.05, "the reference's logits are all near 0 (%g): a weak test", lm);
  return dm / lm;
}

START_TEST(network_no_template) {
  net *n = small(NULL);
  double e = check(n);
  ck_assert_msg(e < 1e-4, "instant: logits' error %g", e);
  for (int i = 0; i < n->nlayers; i++) ck_assert_str_eq(n->layers[i].config, "auto (instant)");
  char rec[] = "/tmp/tec_as_netrec_XXXXXX";
  int fd = mkstemp(rec);
  ck_assert_int_ge(fd, 0);
  close(fd);
  tec_ctx *ctx = tec_ctx_new();
  tec_autosched_tasks_result r;
  net_tune_auto_options o = {.trials = 9, .batch = 3, .tuner = "random", .seed = 2,
                             .records = rec, .repeats = 2};
  ck_assert_msg(net_tune_auto(n, &o, ctx, &r) == 0, "%s", net_error(n));
  ck_assert_int_eq(r.ntasks, 6); /* six distinct layers */
  int sum = 0;
  for (int k = 0; k < r.ntasks; k++) {
    sum += r.tasks[k].trials;
    ck_assert_msg(r.tasks[k].initial_s > 0 && r.tasks[k].best_s > 0, "task %d (%s) has no correct "
                  "trial", k, r.tasks[k].workload);
  }
  ck_assert_int_eq(sum, 9);
  net_free(n);
  /* built on the records: every layer has one (its instant schedule at least) */
  n = small(rec);
  e = check(n);
  ck_assert_msg(e < 1e-4, "tuned: logits' error %g", e);
  for (int i = 0; i < n->nlayers; i++) ck_assert_msg(n->layers[i].tuned, "layer %s: %s",
                                                     n->layers[i].name, n->layers[i].note);
  net_free(n);
  unlink(rec);
  tec_ctx_free(ctx);
}
END_TEST

/* input 3x24x24: a 3x3 conv to 16 channels (direct: an NCHW input), max pool 2x2/2 (12x12, no
 * margin), two 3x3 convs 16 -> 16 (F(4x4): the first reads the pool's output without a margin,
 * the second its margin, with the first as residual), a 3x3/2 conv to 24 channels at 6x6
 * (direct), a 3x3 conv 24 -> 24 with that as residual (F(2x2): 4 does not divide 6); the head */
static net *winograd_net(void) {
  char err[256];
  net *n = net_new(&(net_options){.seed = 11, .autosched = 1}, 3, 24, 24, err, sizeof err);
  ck_assert_msg(n != NULL, "%s", err);
  int x = net_conv(n, "c0", 0, 16, 3, 1, 0, TOPI_ACT_RELU, -1);
  x = net_max_pool(n, "pool", x, 2, 2, 0);
  int a = net_conv(n, "wa", x, 16, 3, 1, 0, TOPI_ACT_RELU, -1);
  x = net_conv(n, "wb", a, 16, 3, 1, 0, TOPI_ACT_RELU, a);
  int b = net_conv(n, "sb", x, 24, 3, 2, 0, TOPI_ACT_RELU, -1);
  x = net_conv(n, "wc", b, 24, 3, 1, 0, TOPI_ACT_NONE, b);
  x = net_global_pool(n, "gpool", x);
  x = net_dense(n, "fc", x, 10);
  ck_assert_msg(net_softmax(n, "softmax", x) >= 0, "%s", net_error(n));
  return n;
}

START_TEST(winograd_layers) {
  net *n = winograd_net();
  double e = check(n); /* compiles: the layers' problems carry their margins */
  ck_assert_msg(e < 1e-4, "winograd network: logits' error %g", e);
  /* the rule: direct (NCHW input), -, F(4x4) twice, direct (stride 2), F(2x2) */
  const int64_t want[6] = {0, 0, 4, 4, 0, 2};
  for (int i = 0; i < 6; i++) {
    if (n->layers[i].op != NET_CONV) continue;
    ck_assert_msg(net_auto_winograd_m(&n->layers[i].conv) == want[i], "layer %s: m %lld, want %lld",
                  n->layers[i].name, (long long)net_auto_winograd_m(&n->layers[i].conv),
                  (long long)want[i]);
  }
  /* declared directly for a problem the rule does not take: refused, naming what is legal */
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  const topi_template *t = topi_template_find("conv2d_nchwc");
  topi_conv2d p = n->layers[4].conv; /* stride 2 */
  ck_assert_int_ne(net_auto_declare_winograd(ctx, t, &p, &d), 0);
  ck_assert_ptr_nonnull(strstr(tec_ctx_error(ctx), "3x3 stride-1"));
  p = n->layers[2].conv;
  p.h = p.w = 7; /* odd rows: no F(2x2) tiling */
  ck_assert_int_eq(net_auto_winograd_m(&p), 0);
  p = n->layers[2].conv;
  p.c_in = 8, p.in_layout.block = 8; /* too few channels for a batched GEMM */
  ck_assert_int_eq(net_auto_winograd_m(&p), 0);
  tec_ctx_free(ctx);
  net_free(n);
}
END_TEST

int main(void) {
  Suite *s = suite_create("autosched_net");
  TCase *tc = tcase_create("net");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, allocates_by_weight);
  tcase_add_test(tc, shares_by_time);
  tcase_add_test(tc, failed_trials);
  tcase_add_test(tc, bad_input);
  tcase_add_test(tc, network_no_template);
  tcase_add_test(tc, winograd_layers);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

/* tune_noise.c — tune-study --noise N: the measurement's own noise on one layer, the floor under
 * every % the study reports. The layer's default config is measured N times in one tune run
 * (a grid over a knob whose N values all lower that config; tune's measurement with the
 * study's settings: each trial built, prepared, warmed up, its timed runs' median), once with
 * compiling beside the measurement (tune_options.overlap 1, the default on 2 or more CPUs) and
 * once without, and the spread of the N results printed: median GFLOP/s, coefficient of
 * variation, the 10th percentile over the median, the share of trials more than 10 % below the
 * median. The same config measured again is as different as these say, so a tuner's best and
 * the reference's best differ by as much with no difference in the configs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "tec/tune.h"
#include "tune_study.h"

int study_noise(const char *name, const char *tmpl, const void *problem, const char *shape,
                const study_noise_opts *no) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task base, same;
  study_pick su;
  int64_t *idx = malloc(sizeof *idx * (size_t)no->n);
  double *g = malloc(sizeof *g * (size_t)no->n);
  int rc = 0;
  if (!ctx || !idx || !g || tune_task_topi(ctx, topi_template_find(tmpl), problem, shape, NULL, &base)) {
    fprintf(stderr, "tune-study: %s: --noise: %s\n", name, ctx ? tec_ctx_error(ctx) : "out of memory");
    rc = -1;
    goto done;
  }
  for (int i = 0; i < no->n; i++) idx[i] = base.default_index < 0 ? 0 : base.default_index;
  if (study_pick_task(ctx, "again", &base, idx, no->n, &su, &same) != 0) {
    fprintf(stderr, "tune-study: %s: --noise: %s\n", name, tec_ctx_error(ctx));
    rc = -1;
    goto done;
  }
  for (int overlap = 1; overlap >= 0 && rc == 0; overlap--) {
    tune_options to = tune_options_default();
    to.trials = no->n, to.tuner = "grid", to.repeats = no->repeats, to.min_repeat_ms = no->min_repeat_ms;
    to.timeout = no->timeout, to.overlap = overlap, to.confirm = 0; /* the trials alone */
    tune_result r;
    memset(&r, 0, sizeof r);
    if (tune_run(ctx, &same, &to, &r) != 0) {
      fprintf(stderr, "tune-study: %s: --noise: %s\n", name, tec_ctx_error(ctx));
      rc = -1;
      break;
    }
    int k = 0;
    for (int t = 0; t < r.ntrials; t++)
      if (r.trials[t].status == TUNE_OK) g[k++] = r.trials[t].gflops;
    tune_result_free(&r);
    if (k < 2) {
      printf("  %-6s overlap %d: %d of %d trials ran correctly\n", name, overlap, k, no->n);
      continue;
    }
    double sum = 0, sq = 0;
    for (int i = 0; i < k; i++) sum += g[i];
    double mean = sum / k;
    for (int i = 0; i < k; i++) sq += (g[i] - mean) * (g[i] - mean);
    double med = bench_median(g, k); /* sorts g */
    int below = 0;
    for (int i = 0; i < k; i++) below += g[i] < 0.9 * med;
    printf("  %-6s overlap %d: %3d trials, median %7.2f GFLOP/s, min %7.2f, max %7.2f, cv %.3f, "
           "q10/median %.3f, %2d %% of trials > 10 %% below the median\n",
           name, overlap, k, med, g[0], g[k - 1], sqrt(sq / k) / mean, g[k / 10] / med, 100 * below / k);
  }
done:
  free(idx);
  free(g);
  tec_ctx_free(ctx);
  return rc;
}

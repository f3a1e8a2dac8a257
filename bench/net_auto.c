/* net_auto.c — MobileNet v1 and ResNet-18 with no template against the templated networks
 * (issue #36, item 5): the same layer list and weights (examples/net/models.c, copied through
 * net_text / net_parse), scheduled three ways, tec alone, 1 thread:
 *
 *   template   every layer on its topi template's default config (topi_conv2d_pick's choice:
 *              winograd on 3x3 stride-1 layers of 14x14 and up), as bench/run net runs it
 *   template-direct  the same with every convolution on the direct templates (conv2d_nchwc,
 *              depthwise_nchwc: model_options.direct) (MobileNet v1 has no winograd layer: the
 *              same network)
 *   instant    options.autosched: each layer declared as plain te compute in the same NCHW16c
 *              layouts (net/auto_decl.c; 3x3 stride-1 layers as Winograd where
 *              net_auto_winograd_m takes them: net/auto_wino.c), scheduled by
 *              tec_autoschedule, no measurement
 *   tuned      the same, each layer on its best record after net_tune_auto: the task scheduler
 *              sharing --trials over the network's tasks, candidates measured in place
 *
 *   net_auto [--net mobilenet,resnet18] [--rounds 5] [--runs 5] [--trials 200] [--batch 4]
 *            [--records DIR] [--size 224] [--tuner xgb|random] [--layers]
 *
 * --trials 0 with --records DIR: the records already there (DIR/<net>.jsonl) are used, no
 * tuning. Outputs: every activation of each variant against the template network's, where
 * their buffers have one layout (max |a - b| over max |b| per activation; above 1e-3 the bench
 * stops). Timing: `rounds` rounds, each runs the variants in turn (the order rotated per
 * round), `runs` whole-network runs each, timed in the process's CPU time (one thread: less
 * disturbed by other tenants than wall time); a round's value is the median of its runs, the
 * result the median of the rounds with their min-max. --layers adds each layer's median (ms)
 * over all rounds per variant. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "common.h"
#include "net/models.h"

enum { TMPL, DIRECT, INSTANT, TUNED, NVAR };
static const char *var_name[NVAR] = {"template", "template-direct", "auto-instant", "auto-tuned"};

typedef struct opts {
  int nets[2], nnets, rounds, runs, trials, batch, layers;
  int64_t size;
  const char *records, *tuner;
} opts;

static int parse(int argc, char **argv, opts *o) {
  *o = (opts){.nets = {NET_MOBILENET_V1, NET_RESNET18}, .nnets = 2, .rounds = 5, .runs = 5,
              .trials = 200, .batch = 4, .size = 224, .records = "/tmp/tec-net-auto"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--layers")) {
      o->layers = 1;
      continue;
    }
    if (!v) return fprintf(stderr, "net_auto: %s: unknown option or missing value\n", a), -1;
    i++;
    if (!strcmp(a, "--net")) {
      o->nnets = 0;
      if (strstr(v, "mobilenet")) o->nets[o->nnets++] = NET_MOBILENET_V1;
      if (strstr(v, "resnet18")) o->nets[o->nnets++] = NET_RESNET18;
      if (!o->nnets) return fprintf(stderr, "net_auto: --net %s: mobilenet, resnet18 or both\n", v), -1;
    } else if (!strcmp(a, "--rounds") || !strcmp(a, "--runs") || !strcmp(a, "--trials") ||
               !strcmp(a, "--batch")) {
      int x = atoi(v), *dst = a[2] == 'r' && a[3] == 'o' ? &o->rounds
                              : a[2] == 'r'               ? &o->runs
                              : a[2] == 't'               ? &o->trials
                                                          : &o->batch;
      if (x < (dst == &o->trials ? 0 : 1) || x > 100000)
        return fprintf(stderr, "net_auto: %s %s: a count (trials >= 0, the others >= 1)\n", a, v), -1;
      *dst = x;
    } else if (!strcmp(a, "--size")) {
      o->size = atoll(v);
      if (o->size < 32 || o->size > 1024) return fprintf(stderr, "net_auto: --size %s: 32 to 1024\n", v), -1;
    } else if (!strcmp(a, "--records")) {
      o->records = v;
    } else if (!strcmp(a, "--tuner")) {
      o->tuner = v;
    } else {
      return fprintf(stderr, "net_auto: unknown option '%s'\n", a), -1;
    }
  }
  return 0;
}

static void die(const char *what, const char *why) {
  fprintf(stderr, "net_auto: %s: %s\n", what, why);
  exit(1);
}

/* the template network's layers, as auto-scheduled ones (records: the tuned mode) */
static net *auto_copy(net *tmpl, const char *records) {
  tec_ctx *c = tec_ctx_new();
  const char *text = c ? net_text(tmpl, c) : NULL;
  char err[512];
  net_options no = {.seed = 1, .autosched = 1, .records = records};
  net *n = text ? net_parse(&no, text, err, sizeof err) : NULL;
  if (!n) die("net_parse", text ? err : "out of memory");
  tec_ctx_free(c);
  return n;
}

/* every activation of a against b's where their buffers have one layout (a margin decided
 * otherwise, next to a winograd layer, is skipped): the largest error relative to the largest
 * magnitude of that activation; *n the activations compared */
static double max_rel(const net *a, const net *b, int *n) {
  double worst = 0;
  *n = 0;
  for (int v = 1; v < b->nvalues; v++) {
    const net_value *x = &a->values[v], *y = &b->values[v];
    if (x->layout.kind != y->layout.kind || x->layout.block != y->layout.block ||
        x->layout.margin != y->layout.margin)
      continue;
    int64_t k = net_value_floats(b, v);
    double dm = 0, bm = 0;
    for (int64_t i = 0; i < k; i++) {
      dm = fmax(dm, fabs((double)x->data[i] - y->data[i]));
      bm = fmax(bm, fabs((double)y->data[i]));
    }
    worst = fmax(worst, bm > 0 ? dm / bm : dm);
    ++*n;
  }
  return worst;
}

static void tune(net *tmpl, const char *path, const opts *o) {
  net *t = auto_copy(tmpl, NULL);
  tec_ctx *c = tec_ctx_new();
  tec_autosched_tasks_result r;
  net_tune_auto_options to = {.trials = o->trials, .batch = o->batch, .tuner = o->tuner, .seed = 1,
                              .records = path, .progress = 1};
  remove(path);
  if (!c || net_tune_auto(t, &to, c, &r)) die("net_tune_auto", net_error(t));
  printf("tuning: %d trials over %d tasks (%d layers) in %.0f s; the layers' sum measured in place: "
         "instant %.3f ms, best %.3f ms\n", o->trials, r.ntasks, t->nlayers, r.seconds,
         1e3 * r.initial_s, 1e3 * r.best_s);
  printf("%-4s %-22s %5s %6s %10s %10s  %s\n", "task", "first layer", "count", "trials",
         "instant ms", "best ms", "share of instant");
  for (int k = 0; k < r.ntasks; k++) {
    const tec_autosched_task_stat *s = &r.tasks[k];
    printf("%-4d %-22s %5d %6d %10.4f %10.4f  %.1f %%\n", k, t->layers[s->first].name, s->count,
           s->trials, 1e3 * s->initial_s, 1e3 * s->best_s,
           100 * s->count * s->initial_s / (r.initial_s > 0 ? r.initial_s : 1));
  }
  net_free(t), tec_ctx_free(c);
}

static void bench_net(net_kind kind, const opts *o) {
  char err[512], path[1024];
  model_options mo = {.kind = kind, .size = o->size, .seed = 1};
  net *v[NVAR] = {model_create(&mo, err, sizeof err)};
  if (!v[TMPL]) die("model_create", err);
  mo.direct = 1;
  if (!(v[DIRECT] = model_create(&mo, err, sizeof err))) die("model_create", err);
  mkdir(o->records, 0755);
  snprintf(path, sizeof path, "%s/%s.jsonl", o->records, kind == NET_RESNET18 ? "resnet18" : "mobilenet");
  printf("== %s %lldx%lld, 1 thread ==\n", model_title(kind), (long long)o->size, (long long)o->size);
  if (o->trials > 0) tune(v[TMPL], path, o);
  FILE *touch = fopen(path, "a"); /* no records yet: the tuned network is the instant one */
  if (touch) fclose(touch);
  v[INSTANT] = auto_copy(v[TMPL], NULL);
  v[TUNED] = auto_copy(v[TMPL], path);
  float *img = net_image(v[TMPL], 7);
  int nl = v[TMPL]->nlayers, nr = o->rounds * o->runs;
  double *tot = malloc(sizeof(double) * (size_t)(NVAR * o->rounds)), *runs = malloc(sizeof(double) * (size_t)o->runs);
  double *lay = malloc(sizeof(double) * (size_t)(NVAR * nl * nr)), *secs = malloc(sizeof(double) * (size_t)nl);
  if (!img || !tot || !runs || !lay || !secs) die("bench", "out of memory");
  for (int k = 0; k < NVAR; k++) {
    double t0 = bench_now(CLOCK_MONOTONIC);
    if (net_compile(v[k]) || net_prepare(v[k]) || net_run(v[k], img, NULL)) die(var_name[k], net_error(v[k]));
    int cmp;
    double e = max_rel(v[k], v[TMPL], &cmp);
    printf("%-16s compiled in %.1f s; against the template network: max error %.2g of the largest "
           "over %d of %d activations\n", var_name[k], bench_now(CLOCK_MONOTONIC) - t0, e, cmp,
           v[TMPL]->nvalues - 1);
    if (!(e < 1e-3)) die(var_name[k], "its activations differ from the template network's");
  }
  int untuned = 0;
  for (int i = 0; i < nl; i++) untuned += !v[TUNED]->layers[i].tuned;
  if (untuned) printf("auto-tuned: %d of %d layers without a record (instant schedule)\n", untuned, nl);
  for (int r = 0; r < o->rounds; r++)
    for (int j = 0; j < NVAR; j++) {
      int k = (r + j) % NVAR;
      for (int u = 0; u < o->runs; u++) {
        double t0 = bench_now(CLOCK_PROCESS_CPUTIME_ID);
        if (net_run(v[k], img, secs)) die(var_name[k], net_error(v[k]));
        runs[u] = bench_now(CLOCK_PROCESS_CPUTIME_ID) - t0;
        for (int i = 0; i < nl; i++) lay[((size_t)k * nl + i) * nr + r * o->runs + u] = secs[i];
      }
      tot[k * o->rounds + r] = bench_median(runs, o->runs);
    }
  double med[NVAR];
  printf("%-16s %10s %18s %14s %12s\n", "variant", "median ms", "rounds min-max", "template/this",
         "direct/this");
  for (int k = 0; k < NVAR; k++) {
    double *t = tot + k * o->rounds;
    med[k] = bench_median(t, o->rounds); /* sorts t */
    printf("%-16s %10.3f %8.3f - %7.3f", var_name[k], 1e3 * med[k], 1e3 * t[0], 1e3 * t[o->rounds - 1]);
    printf(" %13.3fx", med[TMPL] / med[k]);
    if (k >= DIRECT) printf(" %11.3fx", med[DIRECT] / med[k]);
    printf("\n");
  }
  if (o->layers) {
    printf("%-18s %-16s %10s %10s %10s %10s\n", "layer", "template", "template", "direct", "instant",
         "tuned");
    for (int i = 0; i < nl; i++) {
      printf("%-18s %-16s", v[TMPL]->layers[i].name, v[TMPL]->layers[i].tmpl);
      for (int k = 0; k < NVAR; k++) printf(" %10.4f", 1e3 * bench_median(lay + ((size_t)k * nl + i) * nr, nr));
      printf("\n");
    }
  }
  for (int k = 0; k < NVAR; k++) net_free(v[k]);
  free(img), free(tot), free(runs), free(lay), free(secs);
}

int main(int argc, char **argv) {
  opts o;
  if (parse(argc, argv, &o)) return 2;
  tec_rt_set_num_threads(1);
  for (int i = 0; i < o.nnets; i++) bench_net((net_kind)o.nets[i], &o);
  return 0;
}

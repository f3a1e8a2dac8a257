/* tune_study.c — issue #16's tuning targets measured on MobileNet v1's convolutions: for each
 * unique workload of the network's layer list (examples/net/models.c with the templates
 * topi_conv2d_pick chooses there; layers with the same template and problem are tuned once),
 *
 *   reference   a random search of --trials (1000) configs: its best is "the best config";
 *   random, anneal, xgb   --tuner-trials (64) each, seed --seed, records fresh per run,
 *   xgb-t      (--tuners ...,xgb-t) xgb with transfer (tune_options.transfer) from the xgb-t
 *              records in DIR/records of the layers before it in the network (transfer_file),
 *              as when a network is tuned layer by layer into one file,
 *
 * each run timed on the wall clock (the task, the default config's reference output, every
 * trial, the confirmation stage: tune_options.confirm, tune's default, 8 and the default
 * config). Then the reference's 7 fastest confirmed configs, each tuner's 2 and the default
 * config are measured again side by side (tune_compare, 64 rounds): a run's re-measured speed
 * is the fastest of its own there. Per tuner: that as % of the reference's; its trials on one
 * scale, their speed-up over the default config (speedup(): anchored trials are at the quiet
 * machine's speed, unanchored ones at their moment's), the best of them as % of the
 * reference's re-measured speed-up over the default, and the first trial whose best-so-far
 * reaches 95 % of that; its seconds. Rows are appended to DIR/study.csv when a layer's runs are
 * all done (a layer cut short leaves none), layers already there with the same settings are
 * skipped (--redo runs them again), and DIR/study.md is rewritten from the whole CSV after each
 * layer (tune_study_report.c), so a study can be split over several quiet windows (--layers,
 * --count). Every trial is in DIR/records/LAYER-TUNER.jsonl (and .csv, .svg) and appended to
 * DIR/TUNER.jsonl, the records `bench/run net --records` applies. --no-margins: the layers of
 * the network without activation margins (model_options.no_margins; the studies before margins).
 *
 * --reference DIR0: the reference is not searched but loaded from an earlier study's
 * DIR0/records/LAYER-random-refN.jsonl (load_reference: checked to be this layer's, on this
 * target, with this build's configs, as many trials as the search would make; an error
 * otherwise), for re-running the tuners after a tuner change without the ~5 min per layer. Its
 * 8 fastest configs (its confirmation's, or its trials' when it has none: a study before the
 * confirmation stage) are still re-measured side by side with the tuners' in this run. The file
 * (and its .csv, .svg) is copied into DIR/records, so DIR is self-contained, but not appended
 * to DIR/random-refN.jsonl (nothing was measured). Its row's note says where it came from; it
 * counts as this layer's reference for the skipping below like a searched one (same settings:
 * threads and seed are checked against DIR0/study.csv), so --redo is needed to run a layer
 * already in DIR again, with or without --reference.
 *
 *   usage: printed by main() on a bad option.
 *
 * The random tuner draws from its seeded generator and the visited set only, so with the same
 * seed its N trials are the reference's first N configs; it is run (and timed) on its own
 * anyway and the study checks that the configs agree (the note column). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common.h"
#include "net/models.h"
#include "peak.h"
#include "tec/tune.h"
#include "tune_study.h"

#define MAX_UNIQUE 64
#define MAX_RUNS 5 /* the reference and at most 4 tuners */
/* configs re-measured: the reference's 7 fastest (of the 8 and the default its confirmation
 * stage confirms), each tuner's 2 (of its 8 and the default), and the default config: 16,
 * tune_compare's most */
#define REF_TOP 7
#define TUNER_TOP 2
#define REMEASURE_MAX (REF_TOP + (MAX_RUNS - 1) * TUNER_TOP + 1)

typedef struct opts {
  const char *layers, *out;
  int trials, tuner_trials, threads, repeats, count, redo, list, report, no_margins, noise;
  double min_repeat_ms;
  unsigned seed;
  double timeout, width;
  int64_t size;
  int ntuners;
  const char *tuners[4];
  const char *reference; /* --reference DIR0, or NULL */
} opts;

typedef struct unique {
  int layer;          /* its first layer in the network */
  char same_as[160];
  char shape[640];    /* net_layer_shape */
  char workload[720]; /* template + canonical shape */
} unique;

static void usage(void) {
  fprintf(stderr,
          "usage: tune_study [--layers all|NAME,...] [--count N] [--trials 1000] [--tuner-trials 64]\n"
          "                  [--tuners random,anneal,xgb(,xgb-t)] [--seed 1] [--threads 1] [--repeats 5]\n"
          "                  [--timeout 1] [--out tune-study] [--redo] [--list] [--report]\n"
          "                  [--size 224] [--width 1.0] [--no-margins] [--min-repeat-ms 0]\n"
          "                  [--reference DIR0]  (the reference's records from an earlier study's --out)\n"
          "                  [--noise N]  (each layer's default config measured N times: the noise floor)\n");
}

static int parse(int argc, char **argv, opts *o) {
  *o = (opts){.layers = "all", .out = "tune-study", .trials = 1000, .tuner_trials = 64,
              .threads = 1, .repeats = 5, .count = 1 << 30, .seed = 1, .timeout = 1.0,
              .width = 1.0, .size = 224, .ntuners = 3, .tuners = {"random", "anneal", "xgb"}};
  static char tuners[64];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int *flag = !strcmp(a, "--redo") ? &o->redo : !strcmp(a, "--list") ? &o->list
                : !strcmp(a, "--report") ? &o->report
                : !strcmp(a, "--no-margins") ? &o->no_margins : NULL;
    if (flag) {
      *flag = 1;
      continue;
    }
    if (!v) {
      fprintf(stderr, "tune-study: %s: unknown option or missing value\n", a);
      return -1;
    }
    i++;
    const char *bad = NULL;
    if (!strcmp(a, "--layers")) o->layers = v;
    else if (!strcmp(a, "--out")) o->out = v;
    else if (!strcmp(a, "--reference")) o->reference = v;
    else if (!strcmp(a, "--trials")) bad = (o->trials = atoi(v)) < 2 ? "at least 2" : NULL;
    else if (!strcmp(a, "--tuner-trials")) bad = (o->tuner_trials = atoi(v)) < 2 ? "at least 2" : NULL;
    else if (!strcmp(a, "--count")) bad = (o->count = atoi(v)) < 1 ? "at least 1" : NULL;
    else if (!strcmp(a, "--noise")) bad = (o->noise = atoi(v)) < 2 || o->noise > 10000 ? "2 to 10000" : NULL;
    else if (!strcmp(a, "--seed")) o->seed = (unsigned)strtoul(v, NULL, 10);
    else if (!strcmp(a, "--threads")) bad = (o->threads = atoi(v)) < 1 || o->threads > 256 ? "1 to 256" : NULL;
    else if (!strcmp(a, "--repeats")) bad = (o->repeats = atoi(v)) < 1 || o->repeats > 16 ? "1 to 16" : NULL;
    else if (!strcmp(a, "--min-repeat-ms"))
      bad = !((o->min_repeat_ms = atof(v)) >= 0) || o->min_repeat_ms > 1000 ? "0 to 1000 ms" : NULL;
    else if (!strcmp(a, "--timeout")) bad = !((o->timeout = atof(v)) > 0) ? "above 0 seconds" : NULL;
    else if (!strcmp(a, "--size")) bad = (o->size = atoll(v)) < 32 || o->size > 1024 ? "32 to 1024" : NULL;
    else if (!strcmp(a, "--width")) bad = !((o->width = atof(v)) > 0 && o->width <= 4) ? "above 0, at most 4" : NULL;
    else if (!strcmp(a, "--tuners")) {
      snprintf(tuners, sizeof tuners, "%s", v);
      o->ntuners = 0;
      for (char *t = strtok(tuners, ","); t; t = strtok(NULL, ",")) {
        if (o->ntuners == 4 || (strcmp(t, "random") && strcmp(t, "anneal") && strcmp(t, "xgb") && strcmp(t, "xgb-t"))) {
          bad = "a list of random, anneal, xgb, xgb-t";
          break;
        }
        o->tuners[o->ntuners++] = t;
      }
      if (!o->ntuners) bad = "a list of random, anneal, xgb, xgb-t";
    } else {
      fprintf(stderr, "tune-study: unknown option '%s'\n", a);
      return -1;
    }
    if (bad) {
      fprintf(stderr, "tune-study: %s %s: %s\n", a, v, bad);
      return -1;
    }
  }
  return 0;
}

/* The network's convolutions, one per workload, in network order. */
static int uniques(tec_ctx *ctx, const net *n, unique *u) {
  int nu = 0;
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    if (L->op != NET_CONV) continue;
    char shape[640];
    net_layer_shape(n, i, shape, sizeof shape);
    char wl[720];
    snprintf(wl, sizeof wl, "%s %s", L->tmpl, tune_problem_canon(ctx, shape));
    int k = 0;
    while (k < nu && strcmp(u[k].workload, wl)) k++;
    if (k < nu) {
      size_t len = strlen(u[k].same_as);
      snprintf(u[k].same_as + len, sizeof u[k].same_as - len, "%s%s", len ? " " : "", L->name);
      continue;
    }
    if (nu == MAX_UNIQUE) return -1;
    u[nu] = (unique){.layer = i};
    snprintf(u[nu].shape, sizeof u[nu].shape, "%s", shape);
    snprintf(u[nu].workload, sizeof u[nu].workload, "%s", wl);
    nu++;
  }
  return nu;
}

static void now_iso(char *buf, size_t len) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double load1(void) {
  double l[3] = {0, 0, 0};
  getloadavg(l, 3);
  return l[0];
}

/* Trial i's speed-up over the default config (trial 1), the scale every run's trials share:
 * anchored (tune_options.anchor: the anchor is the default config), the anchor's base over the
 * trial's cost; else the default's trial cost over it. GFLOP/s would not do: an anchored run's
 * are at the quiet machine's speed when it started, an unanchored one's at the speeds of its
 * moments. 0: failed. */
static double speedup(const tune_result *r, int i) {
  const tune_trial *t = &r->trials[i], *d = &r->trials[0];
  if (t->status != TUNE_OK || !(t->median > 0)) return 0;
  if (t->anchor_base_s > 0) return t->anchor_base_s / t->median;
  return d->status == TUNE_OK && d->median > 0 ? d->median / t->median : 0;
}

/* The trials' best-so-far speed-up against target: the first 1-based trial reaching it, 0 if
 * none; *best: the best speed-up of all. */
static int trials_to(const tune_result *r, double target, double *best_all) {
  double best = 0;
  int at = 0;
  for (int i = 0; i < r->ntrials; i++) {
    double x = speedup(r, i);
    if (x > best) best = x;
    if (!at && best >= target) at = i + 1;
  }
  *best_all = best;
  return at;
}

/* Appends the lines of file src to dst. */
static int append_file(const char *src, const char *dst);

/* xgb-t's transfer file for unique layer k: the xgb-t records of the unique layers before it
 * in the network's order that DIR holds (a layer never run is left out), concatenated into
 * DIR/records/LAYER-TAG-transfer.jsonl, so a layer learns from the same layers whichever
 * invocation ran them and whatever ran after. NULL on error (printed). */
static const char *transfer_file(const net *n, const unique *u, int k, const opts *o, const char *tag, char *path,
                                 size_t len) {
  snprintf(path, len, "%s/records/%s-%s-transfer.jsonl", o->out, n->layers[u[k].layer].name, tag);
  FILE *f = fopen(path, "w");
  if (!f || fclose(f) != 0) {
    fprintf(stderr, "tune-study: cannot create %s: %s\n", path, strerror(errno));
    return NULL;
  }
  for (int j = 0; j < k; j++) {
    char src[600];
    snprintf(src, sizeof src, "%s/records/%s-%s.jsonl", o->out, n->layers[u[j].layer].name, tag);
    if (access(src, R_OK) == 0 && append_file(src, path) != 0) {
      fprintf(stderr, "tune-study: cannot append %s to %s\n", src, path);
      return NULL;
    }
  }
  return path;
}

static int append_file(const char *src, const char *dst) {
  FILE *a = fopen(src, "r"), *b = a ? fopen(dst, "a") : NULL;
  char buf[1 << 16];
  size_t k;
  int rc = a && b ? 0 : -1;
  while (rc == 0 && (k = fread(buf, 1, sizeof buf, a)) > 0) rc = fwrite(buf, 1, k, b) == k ? 0 : -1;
  if (a) fclose(a);
  if (b && fclose(b) != 0) rc = -1;
  return rc;
}

/* The row's fields from a run's result (pct_of_ref, trials_to_95, the re-measurement: later). */
static void fill_row(study_row *row, const net_layer *L, const unique *u, const tune_task *task, const char *label,
                     const tune_result *res, double secs) {
  snprintf(row->tmpl, sizeof row->tmpl, "%s", L->tmpl);
  snprintf(row->workload, sizeof row->workload, "%s", u->shape);
  row->space = (long long)tune_space_size(task->space);
  row->mflops = task->flops * 1e-6;
  snprintf(row->tuner, sizeof row->tuner, "%s", label);
  row->trials = res->ntrials, row->seconds = secs;
  row->best_trial = res->best + 1;
  row->best_gflops = res->best >= 0 ? res->trials[res->best].gflops : 0;
  row->default_gflops = res->ntrials && res->trials[0].status == TUNE_OK ? res->trials[0].gflops : 0;
  for (int i = 0; i < res->ntrials; i++) row->errors += res->trials[i].status != TUNE_OK;
}

/* One tuner on one layer: fresh records, the run timed, the row filled (pct and t95 later). */
static int run_tuner(const net *n, const unique *u, const opts *o, const char *tuner, int trials,
                     const char *label, const char *tag, const char *transfer, tune_result *res, study_row *row) {
  const net_layer *L = &n->layers[u->layer];
  char base[512], rec[600], csv[600], svg[600], all[600];
  snprintf(base, sizeof base, "%s/records/%s-%s", o->out, L->name, tag);
  snprintf(rec, sizeof rec, "%s.jsonl", base);
  snprintf(csv, sizeof csv, "%s.csv", base);
  snprintf(svg, sizeof svg, "%s.svg", base);
  snprintf(all, sizeof all, "%s/%s.jsonl", o->out, tag);
  if (unlink(rec) != 0 && errno != ENOENT) {
    fprintf(stderr, "tune-study: cannot remove %s: %s\n", rec, strerror(errno));
    return -1;
  }
  tec_ctx *ctx = tec_ctx_new();
  tune_options to = tune_options_default();
  to.trials = trials, to.tuner = tuner, to.seed = o->seed, to.repeats = o->repeats;
  to.min_repeat_ms = o->min_repeat_ms;
  to.timeout = o->timeout, to.records = rec, to.csv = csv, to.svg = svg, to.progress = 1;
  if (transfer) to.tuner = "xgb", to.transfer = transfer; /* xgb-t */
  tune_task task;
  double t0 = bench_now(CLOCK_MONOTONIC);
  int rc = ctx ? tune_task_topi(ctx, topi_template_find(L->tmpl), &L->conv, u->shape, NULL, &task) : -1;
  if (rc == 0) rc = tune_run(ctx, &task, &to, res);
  double secs = bench_now(CLOCK_MONOTONIC) - t0;
  if (rc != 0) {
    fprintf(stderr, "tune-study: %s, %s: %s\n", L->name, tuner, ctx ? tec_ctx_error(ctx) : "out of memory");
    tec_ctx_free(ctx);
    return -1;
  }
  if (append_file(rec, all) != 0) fprintf(stderr, "tune-study: warning: %s not appended to %s\n", rec, all);
  fill_row(row, L, u, &task, label, res, secs);
  tec_ctx_free(ctx);
  return 0;
}

/* Copies file src to dst (nothing to do when they are the same file). 0 or -1 (errno). */
static int copy_file(const char *src, const char *dst) {
  struct stat a, b;
  if (stat(src, &a) == 0 && stat(dst, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) return 0;
  if (unlink(dst) != 0 && errno != ENOENT) return -1;
  return append_file(src, dst);
}

static int status_of(const char *name) {
  for (int s = TUNE_OK; s <= TUNE_TIMEOUT; s++)
    if (!strcmp(name, tune_status_name((tune_status)s))) return s;
  return -1;
}

/* --reference: the reference of an earlier study, DIR0/records/LAYER-TAG.jsonl, as this run's
 * (its trials in file order, nothing measured). Every record must be this layer's workload on
 * this target, its config the one its index names in this build's space (a changed space
 * would re-measure other configs), the first the default config, and there must be as many as
 * the search makes. Its seconds, threads and seed: DIR0/study.csv's reference row of this layer
 * with the same results (fastest trial, its GFLOP/s, the default's), threads and seed checked;
 * without one, an error (a layer cut short leaves no row). The files
 * (.jsonl, .csv, .svg) are copied to DIR/records (one DIR0 lacks: DIR's removed). -1 with the
 * mismatch on stderr. */
static int load_reference(const net *n, const unique *u, const opts *o, const char *tag, tune_result *res,
                          study_row *row) {
  const net_layer *L = &n->layers[u->layer];
  const topi_template *tmpl = topi_template_find(L->tmpl);
  char src[600];
  snprintf(src, sizeof src, "%s/records/%s-%s.jsonl", o->reference, L->name, tag);
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  tune_space sp;
  tune_record *rec = NULL;
  int nrec = 0;
  if (!ctx || tune_task_topi(ctx, tmpl, &L->conv, u->shape, NULL, &task) || tmpl->space(ctx, &L->conv, NULL, &sp) ||
      tune_records_load(ctx, src, stderr, &rec, &nrec)) {
    fprintf(stderr, "tune-study: %s: --reference: %s\n", L->name, ctx ? tec_ctx_error(ctx) : "out of memory");
    tec_ctx_free(ctx);
    return -1;
  }
  long long space = (long long)tune_space_size(task.space);
  int64_t def = task.default_index < 0 ? 0 : task.default_index;
  int want = study_trials(o->trials, space);
  void *cfg = tec_ctx_alloc(ctx, sp.config_size);
  const char *bad = !cfg ? "out of memory" : NULL;
  int ntr = 0; /* the trials; the confirmation's records follow them */
  while (ntr < nrec && !rec[ntr].confirmed) ntr++;
  tec_target_memo memo = {0};
  for (int i = 0; i < nrec && !bad; i++) {
    const tune_record *r = &rec[i];
    const char *have;
    int in;
    if (i >= ntr && !r->confirmed)
      bad = tec_ctx_printf(ctx, "record %d: a trial after the confirmation's records", i + 1);
    else if (strcmp(r->workload, task.workload))
      bad = tec_ctx_printf(ctx, "record %d: workload '%s', not this layer's '%s'", i + 1, r->workload, task.workload);
    else if (!tec_target_matches(ctx, &memo, r->target, task.target_value))
      bad = tec_ctx_printf(ctx, "record %d: target '%s', not this machine's '%s'", i + 1, r->target, task.target);
    else if (status_of(r->status) < 0)
      bad = tec_ctx_printf(ctx, "record %d: unknown status '%s'", i + 1, r->status);
    else if ((in = tune_space_config(&sp, r->index, cfg)) != 0)
      bad = tec_ctx_printf(ctx, "record %d: config index %lld is not in this build's space (%s; the space changed?)",
                           i + 1, (long long)r->index, in < 0 ? "out of its range" : "its rule refuses it");
    else if (strcmp(have = tune_config_str(ctx, &sp, cfg), r->config))
      bad = tec_ctx_printf(ctx, "record %d: config '%s' at index %lld, but this build's config %lld is '%s' (the space "
                           "changed?)", i + 1, r->config, (long long)r->index, (long long)r->index, have);
    else if (i == 0 && r->index != def)
      bad = tec_ctx_printf(ctx, "record 1: config index %lld, not the default config's %lld", (long long)r->index,
                           (long long)def);
  }
  if (!bad && ntr != want)
    bad = tec_ctx_printf(ctx, "%d trial records, not the %d of a reference search of --trials %d (space %lld)", ntr,
                         want, o->trials, space);
  if (!bad && !(res->trials = calloc((size_t)nrec, sizeof *res->trials))) bad = "out of memory";
  if (!bad && nrec > ntr && !(res->confirmed = calloc((size_t)(nrec - ntr), sizeof *res->confirmed)))
    bad = "out of memory";
  if (bad) {
    free(res->trials), free(res->confirmed);
    res->trials = res->confirmed = NULL;
    fprintf(stderr, "tune-study: %s: --reference: %s: %s\n", L->name, src, bad);
    tec_ctx_free(ctx);
    return -1;
  }
  res->ntrials = ntr, res->nconfirmed = nrec - ntr, res->best = res->best_confirmed = -1;
  for (int i = 0; i < nrec; i++) {
    const tune_record *r = &rec[i];
    int c = i >= ntr, k = c ? i - ntr : i;
    tune_trial *t = c ? &res->confirmed[k] : &res->trials[k];
    t->index = r->index, t->status = (tune_status)status_of(r->status), t->confirmed = c;
    t->config = strdup(r->config), t->error = strdup(r->error ? r->error : "");
    t->ncosts = r->ncosts, t->median = r->median, t->gflops = r->gflops;
    t->anchor_s = r->anchor_s, t->anchor_base_s = r->anchor_base_s;
    memcpy(t->costs, r->costs, sizeof t->costs);
    int *best = c ? &res->best_confirmed : &res->best;
    const tune_trial *bt = *best < 0 ? NULL : c ? &res->confirmed[*best] : &res->trials[*best];
    if (t->status == TUNE_OK && t->median > 0 && (!bt || t->median < bt->median)) *best = k; /* as tune picks them */
  }
  fill_row(row, L, u, &task, "reference", res, 0);
  /* its row in DIR0's CSV (the newest reference row of the layer with these results): its
   * seconds, threads and seed */
  char csv[600];
  snprintf(csv, sizeof csv, "%s/study.csv", o->reference);
  study_row *rows = NULL;
  int nrows = 0, rc = 0;
  const study_row *from = NULL;
  if (study_rows_load(csv, &rows, &nrows) != 0) nrows = 0;
  for (int i = 0; i < nrows; i++) {
    const study_row *r = &rows[i];
    if (!strcmp(r->layer, L->name) && !strcmp(r->tuner, "reference") && r->trials == row->trials &&
        r->best_trial == row->best_trial && fabs(r->best_gflops - row->best_gflops) < 1e-3 &&
        fabs(r->default_gflops - row->default_gflops) < 1e-3 && (!from || strcmp(r->run, from->run) >= 0))
      from = r;
  }
  if (!from) {
    fprintf(stderr, "tune-study: %s: --reference: %s has no reference row of %s with these results, so its "
            "threads and seed are unknown\n", L->name, csv, src);
    rc = -1;
  } else if (from->threads != o->threads || from->seed != o->seed) {
    fprintf(stderr, "tune-study: %s: --reference: %s was measured with %d thread%s, seed %u (%s, run %s); this "
            "run: %d thread%s, seed %u\n", L->name, src, from->threads, from->threads > 1 ? "s" : "", from->seed, csv,
            from->run, o->threads, o->threads > 1 ? "s" : "", o->seed);
    rc = -1;
  } else {
    row->seconds = from->seconds;
    snprintf(row->note, sizeof row->note, "%s%s (run %s)", STUDY_REF_LOADED, o->reference, from->run);
  }
  for (int e = 0; e < 3 && rc == 0; e++) { /* DIR self-contained: the records, CSV and plot */
    static const char *const ext[] = {"jsonl", "csv", "svg"};
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/records/%s-%s.%s", o->reference, L->name, tag, ext[e]);
    snprintf(b, sizeof b, "%s/records/%s-%s.%s", o->out, L->name, tag, ext[e]);
    int failed = access(a, F_OK) == 0 ? copy_file(a, b) != 0 : unlink(b) != 0 && errno != ENOENT;
    if (failed) {
      fprintf(stderr, "tune-study: cannot copy %s to %s: %s\n", a, b, strerror(errno));
      rc = -1;
    }
  }
  free(rows);
  tec_ctx_free(ctx);
  return rc;
}

static lower_func *pick_lower(const tune_task *t, tec_ctx *ctx, int64_t i, const char **config,
                              const char **trace) {
  const study_pick *p = t->user;
  return p->base->lower(p->base, ctx, p->idx[i], config, trace);
}

int study_pick_task(tec_ctx *ctx, const char *knob, const tune_task *base, const int64_t *idx, int n,
                    study_pick *user, tune_task *out) {
  tune_space *sp = tune_space_new(ctx);
  int64_t *vals = sp ? tec_ctx_alloc(ctx, sizeof *vals * (size_t)n) : NULL;
  if (!vals) return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "out of memory");
  for (int i = 0; i < n; i++) vals[i] = i;
  if (tune_define_knob(sp, knob, n, vals, NULL) != 0) return -1;
  *user = (study_pick){base, idx};
  *out = *base;
  out->space = sp, out->lower = pick_lower, out->user = user, out->default_index = 0;
  return 0;
}

/* rounds of the re-measurement: with 16 rounds of 2 ms, one config built in 8 slots of a
 * compare gets medians 1.6-1.9 % apart (relative sd), with 64 0.8-1.0 % (bench/README.md,
 * session 18); 16 configs * 64 rounds * ~2.5 ms is ~3 s a layer. And REMEASURE_BUILDS such
 * compares, each building every config anew, a config's speed the mean of its medians: a
 * build's own speed differs from another's of the same config (dw13: 8 builds 76-83 GFLOP/s,
 * one module in 8 slots 82.7-83.3; session 19), and the reference, with the more configs
 * re-measured, would otherwise win on the luck of its builds */
#define REMEASURE_ROUNDS 64
#define REMEASURE_BUILDS 2

/* The config indices of r's k fastest correct configs, distinct, fastest first, into out; the
 * count (fewer when fewer configs ran correctly): from its confirmation stage (the configs
 * measured side by side after the trials, by their medians there) when it has one, else from
 * its trials (a reference loaded from a study before the confirmation stage). */
static int fastest_configs(const tune_result *r, int k, int64_t *out) {
  return r->nconfirmed ? tune_fastest(r->confirmed, r->nconfirmed, k, out, NULL)
                       : tune_fastest(r->trials, r->ntrials, k, out, NULL);
}

/* The configs idx[0..n) (distinct, n <= REMEASURE_MAX = 16) measured again side
 * by side, REMEASURE_BUILDS times (tune_compare: each built, prepared, checked, then
 * REMEASURE_ROUNDS rounds timing every one in turn, a config's median over the rounds);
 * gflops[i]: config i's mean over the compares (0 if it failed in one). */
static int remeasure(const unique *u, const net_layer *L, const opts *o, const int64_t *idx, int n,
                     double *gflops) {
  tec_ctx *ctx = tec_ctx_new();
  tune_task base;
  tune_trial out[REMEASURE_MAX];
  tune_options to = tune_options_default();
  to.min_repeat_ms = o->min_repeat_ms, to.timeout = o->timeout;
  int rc = !ctx || tune_task_topi(ctx, topi_template_find(L->tmpl), &L->conv, u->shape, NULL, &base);
  int failed[REMEASURE_MAX] = {0};
  for (int i = 0; i < n; i++) gflops[i] = 0;
  for (int k = 0; k < REMEASURE_BUILDS && !rc; k++) {
    if ((rc = tune_compare(ctx, &base, &to, idx, n, REMEASURE_ROUNDS, out)) != 0) break;
    for (int i = 0; i < n; i++) {
      if (out[i].status == TUNE_OK) gflops[i] += out[i].gflops / REMEASURE_BUILDS;
      else if (!failed[i]++)
        fprintf(stderr, "tune-study: %s: re-measuring config %s: %s\n", L->name, out[i].config, out[i].error);
      tune_trial_free(&out[i]);
    }
  }
  if (rc) {
    fprintf(stderr, "tune-study: %s: re-measuring: %s\n", L->name, ctx ? tec_ctx_error(ctx) : "out of memory");
    tec_ctx_free(ctx);
    return -1;
  }
  for (int i = 0; i < n; i++)
    if (failed[i]) gflops[i] = 0;
  tec_ctx_free(ctx);
  return 0;
}

/* The layers already in the CSV with these settings (every requested tuner there). */
static int done_before(const study_row *rows, int nrows, const opts *o, const char *layer) {
  for (int i = 0; i < nrows; i++) {
    const study_row *r = &rows[i];
    if (strcmp(r->layer, layer) || strcmp(r->tuner, "reference") || r->trials != study_trials(o->trials, r->space) ||
        r->threads != o->threads || r->seed != o->seed)
      continue;
    int have = 0;
    for (int t = 0; t < o->ntuners; t++)
      for (int j = 0; j < nrows; j++)
        if (!strcmp(rows[j].run, r->run) && !strcmp(rows[j].layer, layer) &&
            !strcmp(rows[j].tuner, o->tuners[t]) && rows[j].trials == study_trials(o->tuner_trials, r->space)) {
          have++;
          break;
        }
    if (have == o->ntuners) return 1;
  }
  return 0;
}

static int write_report(const opts *o, const net *n, const unique *u, int nu) {
  char csv[600], md[600];
  snprintf(csv, sizeof csv, "%s/study.csv", o->out);
  snprintf(md, sizeof md, "%s/study.md", o->out);
  study_row *rows;
  int nrows;
  if (study_rows_load(csv, &rows, &nrows) != 0) {
    fprintf(stderr, "tune-study: cannot read %s: %s\n", csv, strerror(errno));
    return -1;
  }
  const char *names[MAX_UNIQUE];
  for (int k = 0; k < nu; k++) names[k] = n->layers[u[k].layer].name;
  study_filter f = {.ref_trials = o->trials, .tuner_trials = o->tuner_trials, .threads = o->threads,
                    .seed = o->seed, .nlayers = nu, .layers = names};
  FILE *out = fopen(md, "w");
  if (!out) {
    fprintf(stderr, "tune-study: cannot write %s: %s\n", md, strerror(errno));
    free(rows);
    return -1;
  }
  study_report(out, rows, nrows, &f, csv);
  fclose(out);
  free(rows);
  return 0;
}

int main(int argc, char **argv) {
  opts o;
  if (parse(argc, argv, &o) != 0) {
    usage();
    return 2;
  }
  char env[16];
  snprintf(env, sizeof env, "%d", o.threads);
  setenv("TEC_NUM_THREADS", env, 1);
  tec_rt_set_num_threads(o.threads);
  char err[256];
  net *n = model_create(&(model_options){.kind = NET_MOBILENET_V1, .size = o.size, .width = o.width, .seed = 1,
                                    .no_margins = o.no_margins},
                      err, sizeof err);
  if (!n) {
    fprintf(stderr, "tune-study: %s\n", err);
    return 1;
  }
  tec_ctx *ctx = tec_ctx_new();
  static unique u[MAX_UNIQUE];
  int nu = uniques(ctx, n, u);
  if (nu < 0) {
    fprintf(stderr, "tune-study: more than %d unique layers\n", MAX_UNIQUE);
    tec_ctx_free(ctx);
    net_free(n);
    return 1;
  }
  /* --layers: names of the network's convolutions (any layer of a workload picks it) */
  int want[MAX_UNIQUE] = {0};
  if (!strcmp(o.layers, "all")) {
    for (int k = 0; k < nu; k++) want[k] = 1;
  } else {
    char list[1024];
    snprintf(list, sizeof list, "%s", o.layers);
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
      int k = 0, found = 0;
      for (; k < nu && !found; k++) {
        char pad[170];
        snprintf(pad, sizeof pad, " %s ", u[k].same_as);
        char key[40];
        snprintf(key, sizeof key, " %s ", name);
        found = !strcmp(n->layers[u[k].layer].name, name) || strstr(pad, key);
        if (found) want[k] = 1;
      }
      if (!found) {
        fprintf(stderr, "tune-study: --layers: no convolution '%s'; the layers are conv1, dw1..dw13, pw1..pw13 "
                "(--list shows the unique ones)\n", name);
        tec_ctx_free(ctx);
        net_free(n);
        return 2;
      }
    }
  }
  char cpu[128];
  bench_cpu_model(cpu, sizeof cpu);
  char machine[160];
  snprintf(machine, sizeof machine, "%s, %ld online CPUs", cpu, sysconf(_SC_NPROCESSORS_ONLN));
  printf("tune-study: MobileNet v1 %lldx%lld width %.2f, %d unique convolutions; %s; load %.2f; "
         "%d thread%s; reference: random %d trials%s%s; tuners %d trials, seed %u%s\n",
         (long long)o.size, (long long)o.size, o.width, nu, machine, load1(), o.threads,
         o.threads > 1 ? "s" : "", o.trials, o.reference ? ", loaded from " : "", o.reference ? o.reference : "",
         o.tuner_trials, o.seed,
         tune_have_xgb() ? "" : "; xgb: not built in (libxgboost-dev), skipped");
  if (o.list) {
    printf("%-6s %-16s %-28s %10s %9s  %s\n", "layer", "template", "same workload", "space", "MFLOP",
           "shape (tec tune --shape)");
    for (int k = 0; k < nu; k++) {
      const net_layer *L = &n->layers[u[k].layer];
      tune_task task;
      long long size = -1;
      if (net_task(n, u[k].layer, ctx, NULL, &task) == 0) /* the layer's tuning task */
        size = (long long)tune_space_size(task.space);
      printf("%-6s %-16s %-28s %10lld %9.1f  %s\n", L->name, L->tmpl, u[k].same_as, size,
             topi_conv2d_flops(&L->conv) * 1e-6, u[k].shape);
    }
    return 0;
  }
  if (o.noise) { /* tune_noise.c: nothing written, no tuner run */
    study_noise_opts no = {.n = o.noise, .repeats = o.repeats, .min_repeat_ms = o.min_repeat_ms,
                           .timeout = o.timeout};
    int bad = 0, ran = 0;
    printf("noise: each layer's default config measured %d times in one tune run, with (overlap 1) and "
           "without (overlap 0) compiling beside it\n", o.noise);
    for (int k = 0; k < nu && ran < o.count; k++)
      if (want[k]) {
        const net_layer *L = &n->layers[u[k].layer];
        bad |= study_noise(L->name, L->tmpl, &L->conv, u[k].shape, &no) != 0;
        ran++;
      }
    tec_ctx_free(ctx);
    net_free(n);
    return bad;
  }
  char dir[600];
  snprintf(dir, sizeof dir, "%s/records", o.out);
  if ((mkdir(o.out, 0777) != 0 && errno != EEXIST) || (mkdir(dir, 0777) != 0 && errno != EEXIST)) {
    fprintf(stderr, "tune-study: cannot make %s: %s\n", dir, strerror(errno));
    return 1;
  }
  char csv[600];
  snprintf(csv, sizeof csv, "%s/study.csv", o.out);
  if (o.report) {
    if (write_report(&o, n, u, nu) != 0) return 1;
    printf("report: %s/study.md\n", o.out);
    return 0;
  }
  study_row *rows;
  int nrows;
  if (study_rows_load(csv, &rows, &nrows) != 0) {
    fprintf(stderr, "tune-study: cannot read %s: %s\n", csv, strerror(errno));
    return 1;
  }
  for (int k = 0; o.reference && k < nu; k++) { /* a missing reference: before any layer runs */
    char path[600];
    snprintf(path, sizeof path, "%s/records/%s-random-ref%d.jsonl", o.reference, n->layers[u[k].layer].name, o.trials);
    if (want[k] && (o.redo || !done_before(rows, nrows, &o, n->layers[u[k].layer].name)) && access(path, R_OK) != 0) {
      fprintf(stderr, "tune-study: %s: --reference: cannot read %s: %s\n", n->layers[u[k].layer].name, path,
              strerror(errno));
      free(rows);
      tec_ctx_free(ctx);
      net_free(n);
      return 1;
    }
  }
  int ran = 0, status = 0;
  for (int k = 0; k < nu && ran < o.count && !status; k++) {
    const net_layer *L = &n->layers[u[k].layer];
    if (!want[k]) continue;
    if (!o.redo && done_before(rows, nrows, &o, L->name)) {
      printf("%s: in %s already with these settings (--redo runs it again)\n", L->name, csv);
      continue;
    }
    ran++;
    study_row rr[MAX_RUNS];
    memset(rr, 0, sizeof rr);
    now_iso(rr[0].run, sizeof rr[0].run);
    rr[0].load_start = load1();
    printf("\n%s%s%s%s: %s %s\n", L->name, u[k].same_as[0] ? " (same workload: " : "", u[k].same_as,
           u[k].same_as[0] ? ")" : "", L->tmpl, u[k].shape);
    fflush(stdout);
    tune_result res[MAX_RUNS];
    memset(res, 0, sizeof res);
    char tag[MAX_RUNS][32];
    snprintf(tag[0], sizeof tag[0], "random-ref%d", o.trials);
    int nr = 1;
    if (o.reference ? load_reference(n, &u[k], &o, tag[0], &res[0], &rr[0])
                    : run_tuner(n, &u[k], &o, "random", o.trials, "reference", tag[0], NULL, &res[0], &rr[0]))
      status = 1;
    else if (o.reference)
      printf("  reference: %d trials loaded from %s/records/%s-%s.jsonl\n", rr[0].trials, o.reference, L->name, tag[0]);
    for (int t = 0; t < o.ntuners && !status; t++) {
      if (!strncmp(o.tuners[t], "xgb", 3) && !tune_have_xgb()) continue;
      snprintf(tag[nr], sizeof tag[nr], "%s%d", o.tuners[t], o.tuner_trials);
      char tpath[700];
      const char *tr = NULL; /* xgb-t: the layers before it (transfer_file) */
      if ((!strcmp(o.tuners[t], "xgb-t") && !(tr = transfer_file(n, u, k, &o, tag[nr], tpath, sizeof tpath))) ||
          run_tuner(n, &u[k], &o, o.tuners[t], o.tuner_trials, o.tuners[t], tag[nr], tr, &res[nr], &rr[nr]) != 0)
        status = 1;
      nr++;
    }
    /* the reference's REF_TOP and every tuner's TUNER_TOP fastest confirmed configs again,
     * side by side (distinct configs); a run's speed: the fastest of its own re-measured (the
     * reference has the more chances: the tuners are held to its best) */
    int64_t bidx[REMEASURE_MAX];
    int nb = 0, which[MAX_RUNS][REF_TOP], nw[MAX_RUNS] = {0};
    for (int r = 0; r < nr && !status; r++) {
      int64_t top[REF_TOP];
      nw[r] = fastest_configs(&res[r], r == 0 ? REF_TOP : TUNER_TOP, top);
      for (int j = 0; j < nw[r]; j++) { /* its slot among the distinct configs */
        int slot = 0;
        while (slot < nb && bidx[slot] != top[j]) slot++;
        if (slot == nb) bidx[nb++] = top[j];
        which[r][j] = slot;
      }
    }
    int def_slot = -1; /* the default config (every run's trial 1): the scale of speed-ups */
    for (int j = 0; j < nb; j++)
      if (bidx[j] == res[0].trials[0].index) def_slot = j;
    if (def_slot < 0 && !status) def_slot = nb, bidx[nb++] = res[0].trials[0].index;
    double bg[REMEASURE_MAX] = {0};
    if (!status && nb > 0) {
      printf("  re-measuring %d distinct configs (the reference's %d fastest and each tuner's %d after their "
             "confirmation, and the default), %d rounds side by side, %d times (builds)\n", nb, REF_TOP, TUNER_TOP,
             REMEASURE_ROUNDS, REMEASURE_BUILDS);
      fflush(stdout);
      if (remeasure(&u[k], L, &o, bidx, nb, bg) != 0) status = 1;
    }
    for (int r = 0; r < nr && !status; r++)
      for (int j = 0; j < nw[r]; j++)
        if (bg[which[r][j]] > rr[r].remeasured_gflops) rr[r].remeasured_gflops = bg[which[r][j]];
    double ref_re = rr[0].remeasured_gflops, def_re = def_slot >= 0 ? bg[def_slot] : 0, ref_up = def_re > 0 ? ref_re / def_re : 0;
    for (int r = 0; r < nr && !status; r++)
      rr[r].pct_remeasured = ref_re > 0 ? 100 * rr[r].remeasured_gflops / ref_re : 0;
    double load_end = load1(), ref = rr[0].best_gflops, start = rr[0].load_start;
    char run[32];
    snprintf(run, sizeof run, "%s", rr[0].run);
    for (int r = 0; r < nr && !status; r++) {
      study_row *w = &rr[r];
      snprintf(w->run, sizeof w->run, "%s", run);
      snprintf(w->cpu, sizeof w->cpu, "%s", machine);
      snprintf(w->layer, sizeof w->layer, "%s", L->name);
      snprintf(w->same_as, sizeof w->same_as, "%s", u[k].same_as);
      w->load_start = start, w->load_end = load_end;
      w->threads = o.threads, w->seed = o.seed;
      /* trials on one scale, the speed-up over the default: the reference's best re-measured
       * over the default re-measured beside it is 100 % */
      double best_up = 0;
      w->trials_to_95 = ref_up > 0 ? trials_to(&res[r], 0.95 * ref_up, &best_up) : 0;
      w->pct_of_ref = ref_up > 0 ? 100 * best_up / ref_up : 0;
      if (!strcmp(w->tuner, "random")) { /* the same seed: the reference's first configs? */
        int same = res[r].ntrials <= res[0].ntrials;
        for (int i = 0; same && i < res[r].ntrials; i++) same = res[r].trials[i].index == res[0].trials[i].index;
        snprintf(w->note, sizeof w->note, "%s the reference's first %d configs", same ? "same as" : "NOT",
                 res[r].ntrials);
      }
      if (ref <= 0) snprintf(w->note, sizeof w->note, "no reference trial ran correctly");
      char k95[16];
      if (w->trials_to_95) snprintf(k95, sizeof k95, "%d", w->trials_to_95);
      else snprintf(k95, sizeof k95, ">%d", w->trials);
      printf("  %-9s %5d trials %8.1f s (%.3f s/trial), best %8.2f GFLOP/s (trial %d), %.2fx the default = "
             "%5.1f %% of the reference's, 95 %% at trial %s, %d failed; re-measured %.2f GFLOP/s = %.1f %%%s%s\n",
             w->tuner, w->trials, w->seconds, w->seconds / w->trials, w->best_gflops,
             w->best_trial, best_up, w->pct_of_ref, k95, w->errors, w->remeasured_gflops,
             w->pct_remeasured, w->note[0] ? "; " : "", w->note);
      if (study_row_append(csv, w) != 0) {
        fprintf(stderr, "tune-study: cannot append to %s: %s\n", csv, strerror(errno));
        status = 1;
      }
    }
    for (int r = 0; r < MAX_RUNS; r++) tune_result_free(&res[r]);
    if (!status) {
      printf("  default config: re-measured %.2f GFLOP/s = %.1f %% of the reference; load %.2f -> %.2f\n",
             def_re, ref_re > 0 ? 100 * def_re / ref_re : 0, rr[0].load_start, load_end);
      free(rows);
      if (study_rows_load(csv, &rows, &nrows) != 0 || write_report(&o, n, u, nu) != 0) status = 1;
    }
    fflush(stdout);
  }
  free(rows);
  if (!status) {
    write_report(&o, n, u, nu);
    printf("\n%d layer%s run; results: %s, %s/study.md; records: %s/<tuner>.jsonl\n", ran,
           ran == 1 ? "" : "s", csv, o.out, o.out);
  }
  tec_ctx_free(ctx);
  net_free(n);
  return status;
}

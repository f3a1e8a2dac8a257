/* auto.c — `bench/run auto`: tec's auto-scheduler (instant and tuned) against Halide 14's
 * three autoschedulers and the Halide apps' expert schedules, on the programs of issue #36
 * item 6 (auto_progs.c / halide_progs.cpp), 1 thread. Per program: every implementation is
 * built, run once and compared with the reference (Halide, every stage compute_root, serial),
 * then timed in R interleaved rounds (each round times every implementation in turn, a
 * round's value the median of its calls' process CPU times); the table gives each one's median
 * over the rounds and the spread (max - min) / median, and the ratios best-Halide / tec.
 * "tec-hand": the expert's decisions written in tec (auto_hand.c, store_at), where written.
 *
 *   auto [--quick] [--programs a,b] [--rounds 5] [--trials 64] [--out DIR] [--no-tune]
 * --quick: small sizes, 1 round, 4 tuning trials (a smoke run; no timing claim). Tuning records,
 * tuning times and the printed schedules (tec's report and trace, Halide's schedule source)
 * go to DIR (default /tmp/tec-bench-auto); a program with records there is not tuned again. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "auto.h"
#include "common.h"

enum { MAXIMPL = 10, MAXROUNDS = 64 };
typedef enum { K_TEC, K_HALIDE, K_DNNL } impl_kind;

typedef struct impl {
  const char *name;
  impl_kind kind;
  int autosched;            /* a Halide autoscheduler (the "best autoscheduler" ratio) */
  int halide;               /* any Halide schedule (the "best Halide" ratio) */
  tec_module *m;            /* K_TEC */
  const char *fname;
  hl_pipe *hp;              /* K_HALIDE */
  auto_dnnl *dn;            /* K_DNNL */
  int nargs;
  DLTensor *args[6];        /* the shared inputs (or own ones: a template), own output */
  int own_inputs;           /* 1: args are the implementation's own (a template's layout) */
  const DLTensor *check_ref;/* NULL: the program's reference; else this one (template's naive) */
  int reps;
  double sched_s, build_s, err_abs, err_rel;
  int ok;                   /* 1 correct, 0 wrong, -1 failed to build (msg) */
  char msg[300];
  double t[MAXROUNDS];
} impl;

static const char *out_dir = "/tmp/tec-bench-auto";

static void fill(DLTensor *t, unsigned seed) {
  float *p = t->data;
  unsigned s = seed * 2654435761u + 12345u;
  for (int64_t i = 0, n = tec_dl_numel(t); i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = (float)((s >> 8) % 20000) / 10000.0f - 1.0f;
  }
}
static DLTensor *alloc_like(const te_tensor *t) {
  int64_t shape[8];
  for (int d = 0; d < t->ndim; d++) ir_is_const_int(te_buffer_shape(t)[d], &shape[d]);
  DLTensor *dl = calloc(1, sizeof *dl);
  if (!dl || tec_dl_alloc(dl, TEC_F32, t->ndim, shape)) {
    fprintf(stderr, "auto: out of memory\n");
    exit(1);
  }
  return dl;
}

static int run_impl(impl *v) {
  switch (v->kind) {
    case K_TEC: return tec_module_run(v->m, v->fname, v->nargs, v->args);
    case K_HALIDE: return hl_run(v->hp, v->msg, sizeof v->msg);
    case K_DNNL: return auto_dnnl_run(v->dn);
  }
  return -1;
}

/* a tec implementation from a scheduled schedule */
static void tec_impl(tec_ctx *ctx, impl *v, sch_schedule *s, int nargs, te_tensor *const *targs) {
  lower_func *f = tec_lower(s, v->fname, nargs, targs);
  double t0 = bench_now(CLOCK_MONOTONIC);
  v->m = f ? tec_build(ctx, 1, &f, NULL) : NULL;
  v->build_s = bench_now(CLOCK_MONOTONIC) - t0;
  if (!v->m) v->ok = -1, snprintf(v->msg, sizeof v->msg, "%s", tec_ctx_error(ctx));
}

static void save_text(const char *prog, const char *what, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.%s.txt", out_dir, prog, what);
  FILE *f = fopen(path, "w");
  if (f) fputs(text ? text : "", f), fclose(f);
}

/* tunes p's program into records (unless they exist); the trials and seconds, from the
 * run or from DIR/<prog>.tune of an earlier run */
static void tune(tec_ctx *ctx, const char *prog, te_tensor *out, const char *records, int trials, int quick,
                 int *ntrials, double *secs) {
  char tpath[512];
  snprintf(tpath, sizeof tpath, "%s/%s.tune", out_dir, prog);
  FILE *f = fopen(records, "r");
  if (f) {
    fclose(f);
    FILE *t = fopen(tpath, "r");
    if (t) {
      if (fscanf(t, "%d %lf", ntrials, secs) != 2) *ntrials = 0;
      fclose(t);
    }
    return;
  }
  if (trials <= 0) return;
  tune_task task;
  if (tune_task_auto(sch_create(ctx, 1, &out), NULL, NULL, &task)) {
    fprintf(stderr, "auto: %s: tune_task_auto: %s\n", prog, tec_ctx_error(ctx));
    return;
  }
  tune_options o = tune_options_default();
  o.trials = trials, o.tuner = tune_have_xgb() ? "xgb" : "random", o.records = records, o.progress = 1;
  o.build_timeout = 20; /* a candidate inlining a long stencil chain builds for minutes */
  if (quick) o.confirm = 0, o.repeats = 1; /* the smoke run: the path, not the result */
  tune_result r;
  double t0 = bench_now(CLOCK_MONOTONIC);
  if (tune_run(ctx, &task, &o, &r)) {
    fprintf(stderr, "auto: %s: tune_run: %s\n", prog, tec_ctx_error(ctx));
    return;
  }
  *secs = bench_now(CLOCK_MONOTONIC) - t0, *ntrials = r.ntrials;
  tune_result_free(&r);
  FILE *t = fopen(tpath, "w");
  if (t) fprintf(t, "%d %.1f\n", *ntrials, *secs), fclose(t);
}

static void compare(impl *v, const DLTensor *ref) {
  const float *x = v->args[v->nargs - 1]->data, *y = ref->data;
  double ea = 0, er = 0;
  int bad = 0;
  for (int64_t i = 0, n = tec_dl_numel(ref); i < n; i++) {
    double d = fabs((double)x[i] - y[i]), r = d / fmax(fabs((double)y[i]), 1e-6);
    if (!(d <= ea)) ea = d;
    if (!(r <= er) && fabs((double)y[i]) > 1e-4) er = r;
    if (!(d <= 1e-4 + 1e-3 * fabs((double)y[i]))) bad = 1;
  }
  v->err_abs = ea, v->err_rel = er, v->ok = bad ? 0 : 1;
}

typedef struct row {
  const char *prog;
  int nimpl;
  impl *v;
  int trials;
  double tune_s;
} row;

static double med(const impl *v, int rounds, double *spread) {
  double x[MAXROUNDS];
  memcpy(x, v->t, sizeof(double) * (size_t)rounds);
  double m = bench_median(x, rounds);
  *spread = m > 0 ? (x[rounds - 1] - x[0]) / m : 0;
  return m;
}

/* one program: build everything, check, time; prints its lines, fills r */
static int bench_prog(const char *name, int quick, int rounds, int trials, row *r) {
  tec_ctx *ctx = tec_ctx_new();
  auto_prog p;
  if (auto_prog_declare(ctx, name, quick, &p) || !p.args[p.nargs - 1]) {
    fprintf(stderr, "auto: %s: %s\n", name, tec_ctx_error(ctx));
    return -1;
  }
  te_tensor *out = p.args[p.nargs - 1];
  DLTensor *in[6];
  for (int a = 0; a < p.nargs - 1; a++) fill(in[a] = alloc_like(p.args[a]), (unsigned)a + 1);
  impl *v = calloc(MAXIMPL, sizeof *v);
  int nv = 0;
  /* the reference: Halide, every stage at the root, serial */
  impl ref = {.name = "root", .kind = K_HALIDE, .nargs = p.nargs};
  static const char *const hs[] = {"Mullapudi2016", "Li2018", "Adams2019", "expert"};
  impl *all[MAXIMPL + 1];
  int na = 0;
  all[na++] = &ref;
  v[nv++] = (impl){.name = "tec-instant", .kind = K_TEC, .fname = "instant"};
  v[nv++] = (impl){.name = "tec-tuned", .kind = K_TEC, .fname = "tuned"};
  v[nv++] = (impl){.name = "tec-hand", .kind = K_TEC, .fname = "hand"};
  if (p.tmpl) v[nv++] = (impl){.name = "tec-template", .kind = K_TEC, .fname = "tmpl", .own_inputs = 1};
  v[nv++] = (impl){.name = "oneDNN", .kind = K_DNNL};
  for (int k = 0; k < 4; k++) v[nv++] = (impl){.name = hs[k], .kind = K_HALIDE, .autosched = k < 3, .halide = 1};
  for (int k = 0; k < nv; k++) {
    all[na++] = &v[k];
    if (v[k].own_inputs) continue;
    v[k].nargs = p.nargs;
    for (int a = 0; a < p.nargs - 1; a++) v[k].args[a] = in[a];
    v[k].args[p.nargs - 1] = alloc_like(out);
  }
  for (int a = 0; a < p.nargs - 1; a++) ref.args[a] = in[a];
  ref.args[p.nargs - 1] = alloc_like(out);
  const char *tag = quick ? tec_ctx_printf(ctx, "%s-quick", name) : name;
  printf("== %s\n", p.title);
  fflush(stdout);
  r->trials = 0, r->tune_s = 0;
  for (int k = 0; k < na; k++) {
    impl *x = all[k];
    x->ok = 1;
    if (x->kind == K_HALIDE) {
      x->hp = hl_create(name, x->kind == K_HALIDE && x != &ref ? x->name : "root", x->nargs, x->args, &x->sched_s,
                        &x->build_s, x->msg, sizeof x->msg);
      if (!x->hp) x->ok = strncmp(x->msg, "no expert schedule", 18) ? -1 : -2;
    } else if (x->kind == K_DNNL) {
      x->dn = auto_dnnl_create(name, x->nargs, x->args, x->msg, sizeof x->msg);
      if (!x->dn) x->ok = strncmp(x->msg, "oneDNN has no", 13) ? -1 : -2; /* -2: not in the row */
    } else if (!strcmp(x->name, "tec-instant")) {
      sch_schedule *s = sch_create(ctx, 1, &out);
      tec_autosched_report rep;
      if (tec_autoschedule(s, NULL, NULL, &rep)) {
        x->ok = -1, snprintf(x->msg, sizeof x->msg, "%s", tec_ctx_error(ctx));
        continue;
      }
      x->sched_s = rep.seconds;
      save_text(tag, "tec-instant", tec_ctx_printf(ctx, "%s\n%s", rep.text, rep.trace_c));
      tec_impl(ctx, x, s, p.nargs, p.args);
    } else if (!strcmp(x->name, "tec-hand")) { /* the expert's decisions in tec (auto_hand.c) */
      sch_schedule *s = sch_create(ctx, 1, &out);
      int rc = auto_hand_schedule(ctx, name, s);
      if (rc) {
        x->ok = rc > 0 ? -2 : -1;
        snprintf(x->msg, sizeof x->msg, "%s", rc > 0 ? "no hand schedule" : tec_ctx_error(ctx));
        continue;
      }
      save_text(tag, "tec-hand", sch_trace_c(ctx, sch_get_trace(s)));
      tec_impl(ctx, x, s, p.nargs, p.args);
    } else if (!strcmp(x->name, "tec-tuned")) {
      const char *records = tec_ctx_printf(ctx, "%s/%s.jsonl", out_dir, tag);
      tune(ctx, tag, out, records, quick && trials > 4 ? 4 : trials, quick, &r->trials, &r->tune_s);
      sch_schedule *s = sch_create(ctx, 1, &out);
      tec_autosched_report rep;
      if (tec_autoschedule_tuned(s, NULL, NULL, records, &rep)) {
        x->ok = -1, snprintf(x->msg, sizeof x->msg, "%s", tec_ctx_error(ctx));
        continue;
      }
      x->sched_s = rep.seconds;
      if (rep.warning) snprintf(x->msg, sizeof x->msg, "(no record: the instant schedule)");
      save_text(tag, "tec-tuned", tec_ctx_printf(ctx, "%s\n%s\n%s", rep.config ? rep.config : "", rep.text, rep.trace_c));
      tec_impl(ctx, x, s, p.nargs, p.args);
    } else if (!strcmp(x->name, "tec-template")) {
      /* the template in its own layouts, checked against the naive nest of its declaration */
      topi_op op;
      topi_decl d;
      const topi_template *t = topi_template_find(p.tmpl);
      if (topi_instantiate(ctx, t, p.problem, NULL, &op) || t->declare(ctx, p.problem, &d)) {
        x->ok = -1, snprintf(x->msg, sizeof x->msg, "%s", tec_ctx_error(ctx));
        continue;
      }
      x->nargs = op.nargs;
      for (int a = 0; a < op.nargs; a++) {
        x->args[a] = alloc_like(op.args[a]);
        if (a < op.nargs - 1) fill(x->args[a], (unsigned)a + 1);
      }
      tec_impl(ctx, x, op.sched, op.nargs, op.args);
      impl naive = {.fname = "naive", .nargs = op.nargs};
      tec_impl(ctx, &naive, sch_create(ctx, 1, &d.out), d.nargs, d.args);
      if (x->ok < 0 || !naive.m) {
        if (naive.m == NULL && x->ok >= 0) x->ok = -1, snprintf(x->msg, sizeof x->msg, "naive: %s", naive.msg);
        continue;
      }
      for (int a = 0; a < op.nargs - 1; a++) naive.args[a] = x->args[a];
      DLTensor *nout = alloc_like(op.args[op.nargs - 1]);
      naive.args[op.nargs - 1] = nout;
      if (tec_module_run(naive.m, "naive", naive.nargs, naive.args)) x->ok = -1, snprintf(x->msg, sizeof x->msg, "naive run");
      x->check_ref = nout;
      tec_module_free(naive.m);
    }
    if (x->ok >= 0 && run_impl(x)) /* the first call: prepare, the output to check */
      {
      x->ok = -1;
      if (x->kind != K_HALIDE) snprintf(x->msg, sizeof x->msg, "run: %s", x->kind == K_TEC ? tec_rt_last_error() : "failed");
    }
  }
  int failures = 0;
  if (ref.ok < 0) {
    printf("  reference (Halide, root): FAILED: %s\n", ref.msg);
    failures++;
  }
  for (int k = 0; k < nv && ref.ok > 0; k++) {
    impl *x = &v[k];
    if (x->ok < 0) continue;
    compare(x, x->check_ref ? x->check_ref : ref.args[p.nargs - 1]);
    if (!x->ok) failures++;
  }
  /* calls per round: about 0.1 s each (at least 1, at most 50) */
  for (int k = 0; k < nv; k++) {
    impl *x = &v[k];
    if (x->ok <= 0) continue;
    double t0 = bench_now(CLOCK_PROCESS_CPUTIME_ID);
    run_impl(x);
    double dt = bench_now(CLOCK_PROCESS_CPUTIME_ID) - t0;
    x->reps = quick ? 1 : (int)fmin(50, fmax(1, 0.1 / fmax(dt, 1e-6)));
  }
  for (int rd = 0; rd < rounds; rd++)
    for (int k = 0; k < nv; k++) {
      impl *x = &v[k];
      if (x->ok <= 0) continue;
      double c[64];
      for (int i = 0; i < x->reps; i++) {
        double t0 = bench_now(CLOCK_PROCESS_CPUTIME_ID);
        run_impl(x);
        c[i] = bench_now(CLOCK_PROCESS_CPUTIME_ID) - t0;
      }
      x->t[rd] = bench_median(c, x->reps);
    }
  for (int k = 0; k < nv; k++) {
    impl *x = &v[k];
    double sp = 0, m = x->ok > 0 ? med(x, rounds, &sp) : 0;
    if (x->ok == -2) continue;
    if (x->ok > 0)
      printf("  %-14s %10.3f ms  spread %4.1f%%  sched %7.2f s  build %5.2f s  err abs %.1e rel %.1e%s %s\n", x->name,
             1e3 * m, 100 * sp, x->sched_s, x->build_s, x->err_abs, x->err_rel, x->check_ref ? " (vs its naive)" : "",
             x->msg);
    else
      printf("  %-14s %s: %s\n", x->name, x->ok == 0 ? "WRONG" : "failed", x->ok == 0 ? tec_ctx_printf(ctx,
             "err abs %.1e rel %.1e", x->err_abs, x->err_rel) : x->msg);
  }
  if (r->trials) printf("  tuned: %d trials, %.0f s of tuning (records %s/%s.jsonl)\n", r->trials, r->tune_s, out_dir, tag);
  fflush(stdout);
  r->prog = p.title ? strdup(p.title) : name;
  r->nimpl = nv, r->v = v;
  for (int k = 0; k < na; k++) {
    impl *x = all[k];
    if (x->m) tec_module_free(x->m);
    if (x->hp) hl_free(x->hp);
    if (x->dn) auto_dnnl_free(x->dn);
    x->m = NULL, x->hp = NULL, x->dn = NULL;
  }
  tec_ctx_free(ctx); /* the table reads names and times only (static strings, copied title) */
  return failures;
}

static void table(const row *rows, int n, int rounds) {
  printf("\nmedian ms over %d interleaved rounds (spread = (max - min) / median), 1 thread, process CPU time;\n"
         "AS/x = best Halide autoscheduler time / x, H/x = best Halide (autoscheduler or expert) / x (> 1: x faster)\n",
         rounds);
  printf("| program | tec instant | tec tuned | tec template | oneDNN | Mullapudi2016 | Li2018 | Adams2019 | Halide expert "
         "| tec hand | AS/instant | AS/tuned | H/instant | H/tuned | trials, tuning s |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  static const char *const col[] = {"tec-instant", "tec-tuned", "tec-template", "oneDNN", "Mullapudi2016", "Li2018",
                                    "Adams2019", "expert", "tec-hand"};
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    double best_as = 0, best_h = 0, tm[2] = {0, 0};
    printf("| %s |", r->prog);
    for (int c = 0; c < 9; c++) {
      const impl *x = NULL;
      for (int k = 0; k < r->nimpl; k++)
        if (!strcmp(r->v[k].name, col[c])) x = &r->v[k];
      if (!x || x->ok == -2) {
        printf(" - |");
        continue;
      }
      if (x->ok <= 0) {
        printf(" %s |", x->ok == 0 ? "WRONG" : "n/a");
        continue;
      }
      double sp, m = med(x, rounds, &sp);
      printf(" %.3f ±%.0f%% |", 1e3 * m, 100 * sp);
      if (c < 2) tm[c] = m;
      if (x->autosched && (!best_as || m < best_as)) best_as = m;
      if (x->halide && (!best_h || m < best_h)) best_h = m;
    }
    for (int q = 0; q < 4; q++) {
      double h = q < 2 ? best_as : best_h, t = tm[q % 2];
      if (h > 0 && t > 0) printf(" %.2f |", h / t);
      else printf(" - |");
    }
    if (r->trials) printf(" %d, %.0f |\n", r->trials, r->tune_s);
    else printf(" - |\n");
  }
}

int main(int argc, char **argv) {
  int quick = 0, rounds = 5, trials = 64;
  const char *progs = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quick")) quick = 1;
    else if (!strcmp(a, "--no-tune")) trials = 0;
    else if (!strcmp(a, "--programs") && val) progs = val, i++;
    else if (!strcmp(a, "--rounds") && val) rounds = atoi(val), i++;
    else if (!strcmp(a, "--trials") && val) trials = atoi(val), i++;
    else if (!strcmp(a, "--out") && val) out_dir = val, i++;
    else {
      fprintf(stderr, "usage: auto [--quick] [--programs a,b] [--rounds 5] [--trials 64] [--out DIR] [--no-tune]\n"
                      "programs:");
      for (int k = 0; auto_prog_names[k]; k++) fprintf(stderr, " %s", auto_prog_names[k]);
      fprintf(stderr, "\n");
      return 2;
    }
  }
  if (quick && rounds == 5) rounds = 1;
  if (rounds < 1 || rounds > MAXROUNDS || trials < 0 || trials > 1000) {
    fprintf(stderr, "auto: --rounds is 1..%d, --trials 0..1000\n", MAXROUNDS);
    return 2;
  }
  if (!hl_available()) {
    fprintf(stderr, "auto: built without Halide (libhalide14-0-dev): skipped\n");
    return 0;
  }
  char cmd[600];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", out_dir);
  if (system(cmd)) return 1;
  tec_rt_set_num_threads(1);
  omp_set_num_threads(1);
  setenv("HL_NUM_THREADS", "1", 1);
  setenv("TEC_BENCH_AUTO_DIR", out_dir, 1); /* halide_auto.cpp writes the autoschedulers' schedules there */
  printf("auto: 1 thread, %d round(s)%s, tuned with <= %d trials; records and schedules in %s\n", rounds,
         quick ? " (quick: small sizes, no timing claim)" : "", trials, out_dir);
  int nprog = 0;
  while (auto_prog_names[nprog]) nprog++;
  row *rows = calloc((size_t)nprog + 1, sizeof *rows); /* one per program at most */
  if (!rows) return 1;
  int n = 0, failures = 0;
  for (int k = 0; auto_prog_names[k]; k++) {
    const char *nm = auto_prog_names[k];
    if (progs) {
      const char *f = strstr(progs, nm);
      size_t l = strlen(nm);
      if (!f || (f != progs && f[-1] != ',') || (f[l] && f[l] != ',')) continue;
    }
    int fl = bench_prog(nm, quick, rounds, trials, &rows[n]);
    if (fl < 0) return free(rows), 1;
    failures += fl, n++;
  }
  table(rows, n, rounds);
  free(rows);
  if (failures) fprintf(stderr, "auto: %d implementation(s) disagree with the reference\n", failures);
  return failures != 0;
}

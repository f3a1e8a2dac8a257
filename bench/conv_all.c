/* conv_all.c — bench/run conv --all-templates: every conv2d template of tec's registry on each
 * layer it applies to (its applies() in some layout pair conv_tec_setup tries), beside oneDNN
 * and XNNPACK, in one run.
 *
 * Per layer, once: the data, the reference and XNNPACK's operator (conv_case_init), then one
 * conv_tec_variant per template sharing them (each its own module, default config). Per
 * (thread count, layer): every implementation called once and checked against the reference,
 * warmed up twice, then timed round-robin — oneDNN, XNNPACK, template 1, template 2, ... — at
 * least --reps calls each, more for small layers (about BUDGET seconds for all together).
 * Printed per layer: each one's median, each template's speed against oneDNN (oneDNN's time /
 * the template's: above 1 the template is faster), the fastest of all and the best template's
 * ratio; then per template the geomean of its ratios, its wins and the layers it ran on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common.h"
#include "conv.h"

#define BUDGET 0.8 /* seconds of timed calls per (layer, thread count), all implementations */
#define MAX_REPS 2000
#define MAX_TMPL 16
#define LIB 2 /* entries 0 and 1: oneDNN, XNNPACK; then the templates */

typedef struct entry {
  conv_case *c;
  int impl, ok;
} entry;

/* "conv2d_winograd" -> "winograd": the column label */
static const char *label(const char *name) {
  return strncmp(name, "conv2d_", 7) ? name : name + 7;
}

/* One (layer, thread count): med[e] (seconds, 0 where e did not run), err[e]. 1 if a check
 * failed, -1 on OOM. */
static int measure(entry *es, int ne, int ti, int t, pthreadpool_t pool, int min_reps,
                   double *med, double *err) {
  int status = 0;
  double est = 0;
  conv_set_threads(t);
  conv_case *base = es[0].c;
  if (!base->dnnl[ti].tried) conv_dnnl_setup(base, ti); /* after the thread count */
  es[0].ok = base->dnnl[ti].ok, es[1].ok = base->xnn_ok;
  for (int e = 0; e < ne; e++) {
    med[e] = 0, err[e] = -1;
    if (e >= LIB) es[e].ok = es[e].c->tec_ok;
    if (!es[e].ok) continue;
    conv_clear_output(es[e].c, es[e].impl, ti);
    if (conv_run(es[e].c, es[e].impl, ti, pool)) {
      es[e].ok = 0;
      continue;
    }
    err[e] = conv_check(es[e].c, es[e].impl, ti);
    if (!(err[e] <= 1e-4)) {
      printf("CHECK FAILED: %s %s threads=%d: max relative error %.3g (limit 1e-4)\n",
             base->L->name, e >= LIB ? es[e].c->tec_template : conv_impl_name[es[e].impl], t,
             err[e]);
      status = 1;
    }
    double t0 = 0;
    for (int w = 0; w < 2 && es[e].ok; w++) {
      t0 = bench_now(CLOCK_MONOTONIC);
      if (conv_run(es[e].c, es[e].impl, ti, pool)) es[e].ok = 0;
    }
    est += bench_now(CLOCK_MONOTONIC) - t0;
  }
  int reps = min_reps;
  if (est > 0 && reps * est < BUDGET) reps = (int)(BUDGET / est);
  if (reps > MAX_REPS) reps = MAX_REPS;
  if (reps < min_reps) reps = min_reps;
  double *ts = malloc(sizeof(double) * (size_t)(reps * ne)); /* ts[e * reps + r] */
  if (!ts) return -1;
  for (int r = 0; r < reps; r++)
    for (int e = 0; e < ne; e++) {
      if (!es[e].ok) continue;
      double t0 = bench_now(CLOCK_MONOTONIC);
      if (conv_run(es[e].c, es[e].impl, ti, pool)) es[e].ok = 0;
      ts[e * reps + r] = bench_now(CLOCK_MONOTONIC) - t0;
    }
  for (int e = 0; e < ne; e++)
    if (es[e].ok) med[e] = bench_median(ts + e * reps, reps);
  free(ts);
  return status;
}

static void print_header(int t, const char *const *tn, int nt) {
  printf("\n%d thread%s: median ms; per template also onednn time / its time (> 1: faster)\n", t,
         t > 1 ? "s" : "");
  printf("%-9s %-20s %8s %8s", "layer", "shape", "onednn", "xnnpack");
  for (int k = 0; k < nt; k++) printf(" %15.15s", label(tn[k]));
  printf("  %-15s %9s\n", "fastest", "best/dnnl");
}

static void print_row(const conv_case *b, const char *const *tn, int nt, const double *med,
                      const double *err) {
  char shape[64];
  const conv_layer *L = b->L;
  snprintf(shape, sizeof shape, "%lldx%lldx%lld>%lld k%lld s%lld%s", (long long)L->c_in,
           (long long)L->h, (long long)L->w, (long long)L->c_out, (long long)L->k,
           (long long)L->stride, L->groups > 1 ? " dw" : "");
  printf("%-9s %-20s", L->name, shape);
  for (int e = 0; e < LIB; e++)
    med[e] > 0 ? printf(" %7.3f%c", med[e] * 1e3, err[e] > 1e-4 ? '!' : ' ')
               : printf(" %8s", "-");
  int win = -1, best_t = -1;
  for (int e = 0; e < LIB + nt; e++)
    if (med[e] > 0 && (win < 0 || med[e] < med[win])) win = e;
  for (int k = 0; k < nt; k++) {
    double m = med[LIB + k];
    if (m > 0 && (best_t < 0 || m < med[LIB + best_t])) best_t = k;
    if (m <= 0) printf(" %15s", "-");
    else {
      char bad = err[LIB + k] > 1e-4 ? '!' : ' ';
      med[0] > 0 ? printf(" %7.3f%c%5.2fx", m * 1e3, bad, med[0] / m)
                 : printf(" %7.3f%c%6s", m * 1e3, bad, "");
    }
  }
  printf("  %-15s", win < 0 ? "-" : win < LIB ? conv_impl_name[win] : label(tn[win - LIB]));
  if (best_t >= 0 && med[0] > 0) printf(" %8.2fx\n", med[0] / med[LIB + best_t]);
  else printf(" %9s\n", "-");
  fflush(stdout);
}

/* per template: the geomean of onednn/template over the layers it ran, its wins (fastest of
 * every implementation), the layers where it beat oneDNN; and the best template's geomean */
static void print_summary(int n, const char *const *tn, int nt, const double *med) {
  int ne = LIB + nt;
  for (int k = 0; k < nt; k++) {
    double ls = 0;
    int cnt = 0, wins = 0, above = 0;
    for (int i = 0; i < n; i++) {
      const double *m = med + i * ne;
      if (m[LIB + k] <= 0) continue;
      int fastest = 1;
      for (int e = 0; e < ne; e++)
        if (m[e] > 0 && m[e] < m[LIB + k]) fastest = 0;
      wins += fastest;
      if (m[0] > 0) ls += log(m[0] / m[LIB + k]), cnt++, above += m[0] > m[LIB + k];
    }
    if (cnt)
      printf("%-19s onednn/template geomean %.2fx over %2d layers, faster than onednn on %2d, "
             "fastest of all on %2d\n", tn[k], exp(ls / cnt), cnt, above, wins);
    else
      printf("%-19s ran on no layer here\n", tn[k]);
  }
  double ls = 0;
  int cnt = 0;
  for (int i = 0; i < n; i++) {
    const double *m = med + i * ne;
    double best = 0;
    for (int k = 0; k < nt; k++)
      if (m[LIB + k] > 0 && (best == 0 || m[LIB + k] < best)) best = m[LIB + k];
    if (best > 0 && m[0] > 0) ls += log(m[0] / best), cnt++;
  }
  if (cnt) printf("best template: onednn/best geomean %.2fx over %d layers\n", exp(ls / cnt), cnt);
}

int conv_all_templates(const conv_layer *const *layers, int n, const int *threads, int nthreads,
                       int reps, int xnn_yield) {
  const char *tn[MAX_TMPL];
  int nt = 0;
  for (int i = 0; i < topi_template_count() && nt < MAX_TMPL; i++)
    if (topi_template_at(i)->problem_kind == TOPI_PROBLEM_CONV2D)
      tn[nt++] = topi_template_at(i)->name;
  int ne = LIB + nt;
  conv_case *bs = calloc((size_t)n, sizeof *bs), *vs = calloc((size_t)(n * nt), sizeof *vs);
  entry *es = calloc((size_t)ne, sizeof *es);
  double *med = calloc((size_t)(n * ne), sizeof *med), *err = calloc((size_t)ne, sizeof *err);
  pthreadpool_t *pools = calloc((size_t)nthreads, sizeof *pools);
  if (!bs || !vs || !es || !med || !err || !pools) return -1;
  double t0 = bench_now(CLOCK_MONOTONIC);
  for (int i = 0; i < n; i++) {
    if (conv_case_init(&bs[i], layers[i], 1234u + (unsigned)i)) return -1;
    conv_xnn_setup(&bs[i], xnn_yield);
    for (int k = 0; k < nt; k++) conv_tec_variant(&vs[i * nt + k], &bs[i], tn[k]);
  }
  printf("%d layers x %d templates: built in %.1f s; where each runs (default config, layouts):\n",
         n, nt, bench_now(CLOCK_MONOTONIC) - t0);
  for (int k = 0; k < nt; k++) {
    printf("  %s:", tn[k]);
    int any = 0;
    for (int i = 0; i < n; i++)
      if (vs[i * nt + k].tec_ok) printf(" %s", layers[i]->name), any = 1;
    printf(any ? "\n" : " none\n");
  }
  for (int ti = 0; ti < nthreads; ti++)
    if (!(pools[ti] = pthreadpool_create((size_t)threads[ti]))) return -1;
  int status = 0;
  for (int ti = 0; ti < nthreads; ti++) {
    print_header(threads[ti], tn, nt);
    for (int i = 0; i < n; i++) {
      es[0] = (entry){&bs[i], IMPL_DNNL, 0}, es[1] = (entry){&bs[i], IMPL_XNN, 0};
      for (int k = 0; k < nt; k++) es[LIB + k] = (entry){&vs[i * nt + k], IMPL_TEC, 0};
      int rc = measure(es, ne, ti, threads[ti], pools[ti], reps, med + i * ne, err);
      if (rc < 0) return -1;
      status |= rc;
      print_row(&bs[i], tn, nt, med + i * ne, err);
    }
    print_summary(n, tn, nt, med);
  }
  for (int ti = 0; ti < nthreads; ti++) pthreadpool_destroy(pools[ti]);
  for (int i = 0; i < n * nt; i++) conv_case_free(&vs[i]);
  for (int i = 0; i < n; i++) conv_case_free(&bs[i]);
  free(bs), free(vs), free(es), free(med), free(err), free(pools);
  return status;
}

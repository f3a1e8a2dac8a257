/* run.c — a compiled network at work: every weight packed once (the templates' prepare steps),
 * the layers run in order with a per-layer clock, the outputs read back, and the report both
 * network examples print (per-layer medians, totals, top-5) timed through tec_rt_time. */
#include <stdlib.h>
#include <string.h>
#include "net/internal.h"

int net_prepare(net *n) {
  if (!n->mod) return net_fail(n, "net_prepare: compile the network first");
  for (int i = 0; i < n->nlayers; i++) {
    net_layer *L = &n->layers[i];
    if (tec_module_bind_constants(n->mod, L->name, L->nargs, L->args))
      return net_fail(n, "net_prepare: layer %s: %s", L->name, tec_rt_last_error());
  }
  return 0;
}

int net_run(net *n, const float *image, double *secs) {
  if (!n->mod) return net_fail(n, "net_run: compile the network first");
  if (!image) return net_fail(n, "net_run: the image is NULL");
  memcpy(n->values[0].data, image, sizeof(float) * (size_t)net_value_floats(n, 0));
  for (int i = 0; i < n->nlayers; i++) {
    net_layer *L = &n->layers[i];
    double t0 = secs ? tec_rt_now() : 0;
    if (tec_module_run(n->mod, L->name, L->nargs, L->args))
      return net_fail(n, "net_run: layer %s: %s", L->name, tec_rt_last_error());
    if (secs) secs[i] = tec_rt_now() - t0;
  }
  return 0;
}

const float *net_probs(const net *n) { return n->values[n->nvalues - 1].data; }
const float *net_logits(const net *n) { return n->values[n->nvalues > 1 ? n->nvalues - 2 : 0].data; }
int64_t net_classes(const net *n) { return n->values[n->nvalues - 1].c; }

/* ---- the report ---- */

typedef struct timed_run {
  net *n;
  const float *img;
  double *secs; /* [iters][nlayers]: the layers' seconds of each timed run */
  int it;       /* the next run's row (-1: the warm-up) */
} timed_run;

static int32_t one_run(void *user) {
  timed_run *r = user;
  double *row = r->it >= 0 ? r->secs + (size_t)r->it * (size_t)r->n->nlayers : r->secs;
  r->it++;
  return net_run(r->n, r->img, row);
}

static void top5(const net *n, FILE *f) {
  const float *p = net_probs(n);
  int64_t classes = net_classes(n), best[5];
  fprintf(f, "top-5:");
  for (int k = 0; k < 5 && k < classes; k++) {
    best[k] = -1;
    for (int64_t c = 0; c < classes; c++) {
      int taken = 0;
      for (int j = 0; j < k; j++) taken |= best[j] == c;
      if (!taken && (best[k] < 0 || p[c] > p[best[k]])) best[k] = c;
    }
    fprintf(f, " class %lld (%.4f)", (long long)best[k], (double)p[best[k]]);
  }
  fprintf(f, "\n");
}

int net_report(net *n, int iters, FILE *f) {
  if (iters < 1) iters = 1;
  double t0 = tec_rt_now();
  if (net_compile(n)) return -1;
  double t1 = tec_rt_now();
  if (net_prepare(n)) return -1;
  double t2 = tec_rt_now();
  fprintf(f, "compile %.2f s (%d layers, one module), prepare (weights packed) %.1f ms, %d "
          "thread(s)\n", t1 - t0, n->nlayers, 1e3 * (t2 - t1), tec_rt_get_num_threads());
  float *img = net_image(n, 7);
  double *secs = malloc(sizeof(double) * (size_t)(n->nlayers * iters));
  double *tot = malloc(sizeof(double) * (size_t)iters), *col = malloc(sizeof(double) * (size_t)iters);
  if (!img || !secs || !tot || !col) {
    free(img), free(secs), free(tot), free(col);
    return net_fail(n, "net_report: out of memory");
  }
  timed_run r = {n, img, secs, -1}; /* one warm-up run, then iters timed runs of one call */
  int rc = tec_rt_time(one_run, &r, 1, iters, 1, tot) ? -1 : 0;
  if (!rc) {
    fprintf(f, "%-18s %-16s %-22s %10s\n", "layer", "template", "output", "median ms");
    double sum = 0;
    for (int i = 0; i < n->nlayers; i++) {
      for (int it = 0; it < iters; it++) col[it] = secs[(size_t)it * (size_t)n->nlayers + (size_t)i];
      double m = tec_rt_median(col, iters);
      sum += m;
      const net_layer *L = &n->layers[i];
      const net_value *o = &n->values[L->out];
      char shape[64];
      snprintf(shape, sizeof shape, "%lldx%lldx%lld %s", (long long)o->c, (long long)o->h,
               (long long)o->w, o->layout.kind == TOPI_NCHWC ? "packed" : "NCHW");
      fprintf(f, "%-18s %-16s %-22s %10.3f\n", L->name, L->tmpl, shape, 1e3 * m);
    }
    double med = tec_rt_median(tot, iters), fastest = tot[0]; /* tec_rt_median sorts */
    /* on a loaded machine a run's total collects the preemptions of all its layers: the
     * fastest run and the sum of the layers' medians say more than the median run */
    fprintf(f, "total: median %.3f ms, fastest %.3f ms of %d runs; the layers' medians sum to "
            "%.3f ms\n", 1e3 * med, 1e3 * fastest, iters, 1e3 * sum);
    top5(n, f);
  }
  free(img), free(secs), free(tot), free(col);
  return rc;
}

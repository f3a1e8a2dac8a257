/* net.c — a whole network end to end: tec (include/tec/net.h over examples/net/models.c:
 * every layer a topi template, activations NCHW16c, weights packed once) against oneDNN running the same network with the
 * same weights, in one run, round-robin, 1 and 2 threads.
 *
 *   net [--net mobilenet|mobilenet_v2|resnet18] [--threads 1,2] [--runs 30] [--layers] [--prepadded]
 *       [--no-margins] [--csv FILE] [--size 224] [--width 1.0] [--records FILE]
 *
 * --dtype int8: also tec's int8 network (include/tec/qnet.h: the same layers and weights on the
 * qnn templates, calibrated on another seeded image; its distance from the fp32 logits printed)
 * and oneDNN's int8 network over the same int8 layers, weights and params (bench/net_dnnl_int8.c:
 * s8 convolutions with per-channel output scales, run-time zero points, clip and the residual
 * as sum post-ops; its logits' distance from tec's int8 printed, not checked: oneDNN rounds its
 * own way), timed in the same round-robin (tec, oneDNN, tec int8, oneDNN int8, ...): whole
 * network and convolution times beside the fp32 ones, and with --layers a per-layer table.
 *
 * The spread: each round's ratio oneDNN / tec of the two whole runs next to each other, their
 * median and the range of the middle half (the rounds' 25th to 75th percentile).
 *
 * --no-margins: tec's activations without margins (model_options.no_margins: every padded layer
 * reads its input through compares or copies it, as before margins), for a side-by-side run.
 *
 * oneDNN's network (built from tec's layer list, so the shapes and weights are the same):
 *   conv      dnnl convolution by the fastest of three whole networks: every convolution
 *             direct, every one auto (oneDNN's choice), every one winograd where oneDNN has one
 *             for the layer and CPU, else auto (each network timed over PICK_RUNS runs, the
 *             fastest kept for the round-robin; the three medians printed); src / weights /
 *             dst format `any` (oneDNN picks blocked
 *             layouts); bias, then post-ops: residual as a sum post-op (the conv writes in place
 *             into the shortcut's buffer, which no later layer reads), relu as eltwise relu,
 *             relu6 as eltwise clip [0, 6]
 *   max pool  pooling max, dst `any`; global pool: pooling avg over the whole plane
 *   fc        inner product (weights `any`), bias; softmax over the classes
 * A reorder runs only where a layer's chosen src format differs from what its producer wrote
 * (counted in that layer's time; none in MobileNet v1 and ResNet-18 here) and at the edge: the
 * NCHW image into the first convolution's format, timed on a line of its own. tec's net_run
 * copies the image into its input buffer (untimed per layer). Both are in the whole network's
 * time, neither in "convs". Weights are reordered once, outside the timing.
 *
 * Per thread count: oneDNN's primitives are made after omp_set_num_threads; both networks run
 * once and their logits are compared (max |a - b| / max |b|, limit 1e-3), then `runs` times
 * round-robin (tec, oneDNN, tec, ...) so the machine's load falls on both alike; each run times
 * every layer (clock around each call) and the whole run. Medians. "convs" is the sum of the
 * convolution layers' medians (the network's body); ratios are oneDNN / tec (above 1: tec is
 * faster). "cores used" is the process's CPU time over the wall time of a run (median): below
 * the thread count, its workers were not on a core (other tenants of the machine) or idle;
 * the calling thread's share beside it (the rest is the workers': their work and spinning). GNU OpenMP reads GOMP_SPINCOUNT when loaded: main() re-executes itself once with 2000,
 * tec's own spin budget (as bench/conv.c).
 *
 * --records FILE: a second tec network built with every layer on the best tuning record of its
 * workload (model_options.records: tune_apply_best; a layer without one keeps its default and is
 * named in a warning), checked against the default network's logits, and timed in the same
 * round-robin (tec, tec tuned, oneDNN, ...): its convs and whole-network times beside the
 * defaults', and the ratio default / tuned (above 1: the records made it faster). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common.h"
#include "net_dnnl.h"
#include "tec/qnet.h"
#include "peak.h"

#define PICK_RUNS 5 /* whole oneDNN runs per algorithm when picking */

#define MAX_THREADS 8

typedef struct opts {
  net_kind kind;
  int nthreads, threads[MAX_THREADS], runs, layers, prepadded, no_margins, int8;
  int64_t size;
  double width;
  const char *csv, *records;
} opts;

static int parse_opts(int argc, char **argv, opts *o) {
  *o = (opts){.kind = NET_MOBILENET_V1, .nthreads = 2, .threads = {1, 2}, .runs = 30,
              .size = 224, .width = 1.0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--layers") || !strcmp(a, "--prepadded") || !strcmp(a, "--no-margins")) {
      *(a[2] == 'l' ? &o->layers : a[2] == 'p' ? &o->prepadded : &o->no_margins) = 1;
      continue;
    }
    if (!v) {
      fprintf(stderr, "net: %s: unknown option or missing value\n", a);
      return -1;
    }
    i++;
    if (!strcmp(a, "--net")) {
      if (!strcmp(v, "mobilenet") || !strcmp(v, "mobilenet_v1")) o->kind = NET_MOBILENET_V1;
      else if (!strcmp(v, "mobilenet_v2")) o->kind = NET_MOBILENET_V2;
      else if (!strcmp(v, "resnet18")) o->kind = NET_RESNET18;
      else {
        fprintf(stderr, "net: --net %s: mobilenet (v1), mobilenet_v2 or resnet18\n", v);
        return -1;
      }
    } else if (!strcmp(a, "--threads")) {
      if ((o->nthreads = bench_parse_list(v, o->threads, MAX_THREADS, 1, 256)) < 1) {
        fprintf(stderr, "net: --threads %s: a list of 1 to %d positive counts, like 1,2\n", v,
                MAX_THREADS);
        return -1;
      }
    } else if (!strcmp(a, "--runs")) {
      o->runs = atoi(v);
      if (o->runs < 5 || o->runs > 10000) {
        fprintf(stderr, "net: --runs %s: 5 to 10000\n", v);
        return -1;
      }
    } else if (!strcmp(a, "--size")) {
      o->size = atoll(v);
      if (o->size < 32 || o->size > 1024) {
        fprintf(stderr, "net: --size %s: 32 to 1024\n", v);
        return -1;
      }
    } else if (!strcmp(a, "--width")) {
      o->width = atof(v);
      if (!(o->width > 0 && o->width <= 4)) {
        fprintf(stderr, "net: --width %s: above 0, at most 4\n", v);
        return -1;
      }
    } else if (!strcmp(a, "--dtype")) {
      if (strcmp(v, "int8") && strcmp(v, "fp32")) {
        fprintf(stderr, "net: --dtype %s: fp32 or int8\n", v);
        return -1;
      }
      o->int8 = !strcmp(v, "int8");
    } else if (!strcmp(a, "--csv")) {
      o->csv = v;
    } else if (!strcmp(a, "--records")) {
      o->records = v;
    } else {
      fprintf(stderr, "net: unknown option '%s'\n", a);
      return -1;
    }
  }
  return 0;
}


/* ---------------- --prepadded: what a padded layer costs without its pad copy ----------------
 * A convolution with padding p whose template copies its input into a zero-bordered buffer
 * first (conv2d_nchwc's pad_copy) is timed again as the same layer declared over an input that
 * already has the border (h + 2p, w + 2p, padding 0): same output, same arithmetic, no copy and
 * no border test, which is what a producer writing into the consumer's padded buffer would
 * give. Layers without padding, or whose input is not blocked, get no variant. */

typedef struct prepad {
  int on[64];
  tec_ctx *ctx;
  tec_module *mod;
  DLTensor t[64][5];
  DLTensor *args[64][5];
  int64_t shape[64][5][5];
  int nargs[64];
} prepad;

static int prepad_build(prepad *pp, const net *n) {
  memset(pp, 0, sizeof *pp);
  if (!(pp->ctx = tec_ctx_new())) return -1;
  lower_func *fs[64];
  int nf = 0;
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    const topi_conv2d *p = &L->conv;
    if (L->op != NET_CONV || !(p->pad_h || p->pad_w) || p->in_layout.kind != TOPI_NCHWC ||
        p->in_layout.margin) /* a margin already holds the padding */
      continue;
    topi_conv2d q = *p;
    q.h += 2 * p->pad_h, q.w += 2 * p->pad_w, q.pad_h = q.pad_w = 0;
    topi_op op;
    const topi_template *t = topi_template_find(L->tmpl);
    if (!t || topi_instantiate(pp->ctx, t, &q, NULL, &op) ||
        !(fs[nf] = tec_lower(op.sched, L->name, op.nargs, op.args))) {
      fprintf(stderr, "net: --prepadded: %s: %s\n", L->name, tec_ctx_error(pp->ctx));
      return -1;
    }
    nf++, pp->on[i] = 1;
    /* arguments: data (padded), the layer's own weights, bias, residual, out */
    int64_t cb = (q.c_in + p->in_layout.block - 1) / p->in_layout.block;
    int64_t xs[5] = {q.n, cb, q.h, q.w, p->in_layout.block};
    DLTensor x;
    if (tec_dl_alloc(&x, TEC_F32, 5, xs)) return -1;
    memset(x.data, 0, sizeof(float) * (size_t)tec_dl_numel(&x));
    pp->nargs[i] = L->nargs;
    for (int k = 0; k < L->nargs; k++) {
      pp->t[i][k] = k ? L->t[k] : x;
      memcpy(pp->shape[i][k], k ? L->shape[k] : xs, sizeof xs);
      pp->t[i][k].shape = pp->shape[i][k];
      pp->args[i][k] = &pp->t[i][k];
    }
  }
  if (!nf) return 0;
  if (!(pp->mod = tec_build(pp->ctx, nf, fs, NULL))) {
    fprintf(stderr, "net: --prepadded: %s\n", tec_ctx_error(pp->ctx));
    return -1;
  }
  for (int i = 0; i < n->nlayers; i++)
    if (pp->on[i] && tec_module_bind_constants(pp->mod, n->layers[i].name, pp->nargs[i], pp->args[i])) {
      fprintf(stderr, "net: --prepadded: %s: %s\n", n->layers[i].name, tec_rt_last_error());
      return -1;
    }
  return 0;
}

/* the variants once each, in the network's order; secs[i] (0 where layer i has none) */
static int prepad_run(prepad *pp, const net *n, double *secs) {
  for (int i = 0; i < n->nlayers; i++) {
    secs[i] = 0;
    if (!pp->on[i]) continue;
    double t0 = bench_now(CLOCK_MONOTONIC);
    if (tec_module_run(pp->mod, n->layers[i].name, pp->nargs[i], pp->args[i])) {
      fprintf(stderr, "net: --prepadded: %s: %s\n", n->layers[i].name, tec_rt_last_error());
      return -1;
    }
    secs[i] = bench_now(CLOCK_MONOTONIC) - t0;
  }
  return 0;
}

/* one whole oneDNN run, for tec_rt_time */
typedef struct dn_call {
  dn_net *d;
  double *secs;
} dn_call;
static int32_t dn_once(void *user) {
  dn_call *c = user;
  return dn_run(c->d, c->secs) ? -1 : 0;
}

/* ---------------- the run ---------------- */

static void set_threads(int t) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", t);
  setenv("TEC_NUM_THREADS", buf, 1);
  tec_rt_set_num_threads(t);
  omp_set_num_threads(t);
}

static void reexec_for_omp(char **argv) {
  if (getenv("GOMP_SPINCOUNT") || getenv("TEC_BENCH_REEXEC")) return;
  setenv("GOMP_SPINCOUNT", "2000", 0);
  setenv("TEC_BENCH_REEXEC", "1", 1);
  execv("/proc/self/exe", argv);
  fprintf(stderr, "net: re-exec with GOMP_SPINCOUNT=2000 failed: %s\n", strerror(errno));
}

/* num[r] / den[r] of each round into out (R of them, left sorted); m: their median and the
 * middle half's ends */
static void round_ratios(const double *num, const double *den, int R, double *out, double m[3]) {
  for (int r = 0; r < R; r++) out[r] = num[r] / den[r];
  m[0] = bench_median(out, R); /* sorts out */
  m[1] = out[R / 4], m[2] = out[(3 * R) / 4 - (R % 4 == 0)];
}

int main(int argc, char **argv) {
  reexec_for_omp(argv);
  opts o;
  if (parse_opts(argc, argv, &o)) {
    fprintf(stderr, "usage: net [--net mobilenet|mobilenet_v2|resnet18] [--threads 1,2] [--runs 30] [--layers]\n"
                    "           [--prepadded] [--csv FILE] [--size 224] [--width 1.0] [--records FILE]\n"
                    "           [--dtype fp32|int8]\n");
    return 2;
  }
  char cpu[256];
  bench_cpu_model(cpu, sizeof cpu);
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  const dnnl_version_t *dv = dnnl_version();
  printf("CPU: %s, %ld online CPUs, load %.2f %.2f %.2f; oneDNN %d.%d.%d; GOMP_SPINCOUNT=%s\n",
         cpu, sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1], load[2], dv->major, dv->minor,
         dv->patch, getenv("GOMP_SPINCOUNT") ? getenv("GOMP_SPINCOUNT") : "unset");
  char err[256];
  net *n = model_create(&(model_options){.kind = o.kind, .size = o.size, .width = o.width, .seed = 1,
                                    .no_margins = o.no_margins},
                      err, sizeof err);
  if (!n) {
    fprintf(stderr, "net: %s\n", err);
    return 1;
  }
  double t0 = bench_now(CLOCK_MONOTONIC);
  if (net_compile(n) || net_prepare(n)) {
    fprintf(stderr, "net: %s\n", net_error(n));
    return 1;
  }
  printf("%s %lldx%lld width %.2f: %d layers, tec compiled and prepared in %.1f s\n",
         model_title(o.kind), (long long)o.size,
         (long long)o.size, o.width, n->nlayers, bench_now(CLOCK_MONOTONIC) - t0);
  net *tn = NULL; /* --records: the same network on the records' configs */
  if (o.records) {
    tn = model_create(&(model_options){.kind = o.kind, .size = o.size, .width = o.width, .seed = 1,
                                   .records = o.records, .no_margins = o.no_margins},
                    err, sizeof err);
    if (!tn || net_compile(tn) || net_prepare(tn)) {
      fprintf(stderr, "net: --records: %s\n", tn ? net_error(tn) : err);
      return 1;
    }
    int tuned = 0;
    for (int i = 0; i < tn->nlayers; i++) tuned += tn->layers[i].tuned;
    printf("tuned network (--records %s): %d of %d layers on a record, the others on their "
           "default (named above)\n", o.records, tuned, tn->nlayers);
  }
  int nl = n->nlayers, R = o.runs;
  float *img = net_image(n, 7);
  qnet *q = NULL; /* --dtype int8 */
  if (o.int8) {
    float *calib = net_image(n, 11);
    t0 = bench_now(CLOCK_MONOTONIC);
    q = calib ? qnet_new(n, calib, err, sizeof err) : NULL;
    free(calib);
    if (!q || qnet_compile(q) || qnet_prepare(q)) {
      fprintf(stderr, "net: --dtype int8: %s\n", q ? qnet_error(q) : err);
      return 1;
    }
    printf("int8 network: %d layers (the residual adds apart), calibrated, compiled and "
           "prepared in %.1f s\n", q->nlayers, bench_now(CLOCK_MONOTONIC) - t0);
  }
  int ql = q ? q->nlayers : 1;
  double *qs = calloc((size_t)(ql * R), sizeof(double)), *qt = malloc(sizeof(double) * (size_t)R);
  /* oneDNN int8: per run ql layers and its input edge */
  double *es = calloc((size_t)((ql + 1) * R), sizeof(double)), *et = malloc(sizeof(double) * (size_t)R);
  double *emed = calloc((size_t)(ql + 1), sizeof(double));
  if (!es || !et || !emed) return 1;
  double *rr = malloc(sizeof(double) * (size_t)R), *rq = malloc(sizeof(double) * (size_t)R);
  if (!qs || !qt || !rr || !rq) return 1;
  /* per run: nl layers, then the edge (oneDNN's input reorder; tec: its image copy, untimed) */
  int nc = nl + 1;
  double *ts = calloc((size_t)(nc * R), sizeof(double)), *ds = calloc((size_t)(nc * R), sizeof(double));
  double *tt = malloc(sizeof(double) * (size_t)R), *dt = malloc(sizeof(double) * (size_t)R);
  double *col = malloc(sizeof(double) * (size_t)R), *tmed = malloc(sizeof(double) * (size_t)nl);
  double *dmed = malloc(sizeof(double) * (size_t)nc);
  /* process CPU seconds per run over wall seconds: the cores each one actually got */
  double *cu = malloc(sizeof(double) * (size_t)(4 * R)); /* per run: tec, oneDNN, callers' */
  if (!cu) return 1;
  double *ps = malloc(sizeof(double) * (size_t)(nl * R)), *pmed = calloc((size_t)nl, sizeof(double));
  /* --records: the tuned network's per-layer seconds, whole runs, medians */
  double *us = calloc((size_t)(nc * R), sizeof(double)), *ut = malloc(sizeof(double) * (size_t)R);
  double *umed = calloc((size_t)nl, sizeof(double));
  if (!us || !ut || !umed) return 1;
  if (!img || !ts || !ds || !tt || !dt || !col || !tmed || !dmed || !ps || !pmed) return 1;
  static prepad pp;
  if (o.prepadded && prepad_build(&pp, n)) return 1;
  FILE *csv = NULL;
  if (o.csv && !(csv = fopen(o.csv, "w"))) {
    fprintf(stderr, "net: cannot write %s: %s\n", o.csv, strerror(errno));
    return 1;
  }
  if (csv) fprintf(csv, "net,threads,layer,tec_ms,onednn_ms%s\n", tn ? ",tec_tuned_ms" : "");
  const char *nname = o.kind == NET_RESNET18      ? "resnet18"
                      : o.kind == NET_MOBILENET_V2 ? "mobilenet_v2"
                                                   : "mobilenet";
  int status = 0;
  for (int ti = 0; ti < o.nthreads && !status; ti++) {
    int t = o.threads[ti];
    set_threads(t);
    /* oneDNN's network by each algorithm, the fastest (median of PICK_RUNS whole runs after 2
     * warm-up runs) kept for the round-robin against tec */
    static const dnnl_alg_kind_t algs[] = {dnnl_convolution_direct, dnnl_convolution_auto,
                                           dnnl_convolution_winograd};
    static const char *const alg_names[] = {"direct", "auto", "winograd (auto where none)"};
    dn_net *d = NULL;
    double dbest = 0;
    int dalg = 0;
    printf("\n%d thread%s: oneDNN's convolution algorithms, whole network (median of %d runs):\n",
           t, t > 1 ? "s" : "", PICK_RUNS);
    for (int a = 0; a < 3; a++) {
      dn_net *c = calloc(1, sizeof *c);
      if (!c || dn_build(c, n, img, algs[a])) {
        fprintf(stderr, "net: oneDNN (%s): %s\n", alg_names[a], c ? c->err : "out of memory");
        return 1;
      }
      double pt[PICK_RUNS];
      if (tec_rt_time(dn_once, &(dn_call){c, ds}, 2, PICK_RUNS, 1, pt)) { /* the one timing loop */
        fprintf(stderr, "net: oneDNN (%s): %s\n", alg_names[a], c->err);
        return 1;
      }
      double med = tec_rt_median(pt, PICK_RUNS);
      printf("  %-28s %9.3f ms\n", alg_names[a], med * 1e3);
      if (!d || med < dbest) {
        if (d) dn_free(d), free(d);
        d = c, dbest = med, dalg = a;
      } else {
        dn_free(c), free(c);
      }
    }
    printf("  compared below: %s (each layer's implementation with --layers)\n", alg_names[dalg]);
    /* once each, checked: the logits (value nvalues - 2) */
    if (net_run(n, img, ts) || dn_run(d, ds)) {
      fprintf(stderr, "net: %s\n", n->err[0] ? net_error(n) : d->err);
      return 1;
    }
    const float *a = net_logits(n), *b = dn_logits(d, n->nvalues - 2);
    double worst = 0, mag = 0;
    for (int64_t k = 0; k < net_classes(n); k++) {
      worst = fmax(worst, fabs((double)a[k] - b[k]));
      mag = fmax(mag, fabs((double)b[k]));
    }
    double rel = worst / (mag + 1e-30);
    if (!(rel < 1e-3)) {
      printf("CHECK FAILED: %d threads: logits differ, max |tec - oneDNN| / max |oneDNN| = %.3g\n", t, rel);
      status = 1;
    }
    double qrel = 0, erel = 0;
    dn_net *dq = NULL;
    if (q) { /* the int8 logits: quantization error, and oneDNN's int8 against tec's */
      if (qnet_run(q, img, qs)) {
        fprintf(stderr, "net: --dtype int8: %s\n", qnet_error(q));
        return 1;
      }
      dq = calloc(1, sizeof *dq);
      if (!dq || dn_build_int8(dq, q) || dn_run(dq, es)) {
        fprintf(stderr, "net: --dtype int8: oneDNN: %s\n", dq ? dq->err : "out of memory");
        return 1;
      }
      const float *el = dn_logits_f32(dq, q->logits);
      double qmag = 0;
      for (int64_t k = 0; k < net_classes(n); k++) {
        qrel = fmax(qrel, fabs((double)qnet_logits(q)[k] - a[k]));
        erel = fmax(erel, fabs((double)el[k] - qnet_logits(q)[k]));
        qmag = fmax(qmag, fabs((double)qnet_logits(q)[k]));
      }
      qrel /= mag + 1e-30, erel /= qmag + 1e-30;
    }
    double urel = 0;
    if (tn) { /* the tuned network against the default one */
      if (net_run(tn, img, us)) {
        fprintf(stderr, "net: --records: %s\n", net_error(tn));
        return 1;
      }
      double uw = 0;
      for (int64_t k = 0; k < net_classes(n); k++)
        uw = fmax(uw, fabs((double)net_logits(tn)[k] - a[k]));
      urel = uw / (mag + 1e-30);
      if (!(urel < 1e-3)) {
        printf("CHECK FAILED: %d threads: the tuned network's logits differ from the default's by %.3g "
               "(of max |logit|)\n", t, urel);
        status = 1;
      }
    }
    for (int r = 0; r < R; r++) { /* round-robin */
      double s = bench_now(CLOCK_MONOTONIC), c = bench_now(CLOCK_PROCESS_CPUTIME_ID);
      double m = bench_now(CLOCK_THREAD_CPUTIME_ID);
      if (net_run(n, img, ts + (size_t)r * (size_t)nc)) return 1;
      tt[r] = bench_now(CLOCK_MONOTONIC) - s;
      cu[r] = (bench_now(CLOCK_PROCESS_CPUTIME_ID) - c) / tt[r];
      cu[2 * R + r] = (bench_now(CLOCK_THREAD_CPUTIME_ID) - m) / tt[r];
      s = bench_now(CLOCK_MONOTONIC), c = bench_now(CLOCK_PROCESS_CPUTIME_ID);
      m = bench_now(CLOCK_THREAD_CPUTIME_ID);
      if (dn_run(d, ds + (size_t)r * (size_t)nc)) return 1;
      dt[r] = bench_now(CLOCK_MONOTONIC) - s;
      cu[R + r] = (bench_now(CLOCK_PROCESS_CPUTIME_ID) - c) / dt[r];
      cu[3 * R + r] = (bench_now(CLOCK_THREAD_CPUTIME_ID) - m) / dt[r];
      if (o.prepadded && prepad_run(&pp, n, ps + (size_t)r * (size_t)nl)) return 1;
      if (q) {
        s = bench_now(CLOCK_MONOTONIC);
        if (qnet_run(q, img, qs + (size_t)r * (size_t)ql)) return 1;
        qt[r] = bench_now(CLOCK_MONOTONIC) - s;
        s = bench_now(CLOCK_MONOTONIC);
        if (dn_run(dq, es + (size_t)r * (size_t)(ql + 1))) return 1;
        et[r] = bench_now(CLOCK_MONOTONIC) - s;
      }
      if (tn) {
        s = bench_now(CLOCK_MONOTONIC);
        if (net_run(tn, img, us + (size_t)r * (size_t)nc)) return 1;
        ut[r] = bench_now(CLOCK_MONOTONIC) - s;
      }
    }
    double tconv = 0, dconv = 0, uconv = 0;
    for (int i = 0; i < nl; i++) {
      for (int r = 0; r < R; r++) col[r] = ts[(size_t)r * (size_t)nc + (size_t)i];
      tmed[i] = bench_median(col, R);
      for (int r = 0; r < R; r++) col[r] = ds[(size_t)r * (size_t)nc + (size_t)i];
      dmed[i] = bench_median(col, R);
      if (o.prepadded && pp.on[i]) {
        for (int r = 0; r < R; r++) col[r] = ps[(size_t)r * (size_t)nl + (size_t)i];
        pmed[i] = bench_median(col, R);
      }
      if (tn) {
        for (int r = 0; r < R; r++) col[r] = us[(size_t)r * (size_t)nc + (size_t)i];
        umed[i] = bench_median(col, R);
      }
      if (n->layers[i].op == NET_CONV) tconv += tmed[i], dconv += dmed[i], uconv += umed[i];
      if (csv) fprintf(csv, "%s,%d,%s,%.4f,%.4f", nname, t, n->layers[i].name, tmed[i] * 1e3, dmed[i] * 1e3);
      if (csv) fprintf(csv, tn ? ",%.4f\n" : "\n", umed[i] * 1e3);
    }
    for (int r = 0; r < R; r++) col[r] = ds[(size_t)r * (size_t)nc + (size_t)nl];
    double edge = bench_median(col, R);
    double rrm[3], rqm[3]; /* oneDNN / tec of each round's pair: fp32, int8 */
    round_ratios(dt, tt, R, rr, rrm);
    if (q) round_ratios(et, qt, R, rq, rqm);
    double qconv = 0, econv = 0; /* int8: the convolutions and adds, per-layer medians */
    for (int i = 0; q && i <= ql; i++) {
      for (int r = 0; r < R; r++) col[r] = es[(size_t)r * (size_t)(ql + 1) + (size_t)i];
      emed[i] = bench_median(col, R);
      if (i == ql) break; /* oneDNN's input edge */
      for (int r = 0; r < R; r++) col[r] = qs[(size_t)r * (size_t)ql + (size_t)i];
      double m = bench_median(col, R);
      qs[i] = m; /* row 0 keeps the medians (the runs are done) */
      if (strcmp(q->layers[i].tmpl, "qnn_pool") && strcmp(q->layers[i].tmpl, "qnn_dense"))
        qconv += m, econv += emed[i];
    }
    double tm = bench_median(tt, R), dm = bench_median(dt, R), um = tn ? bench_median(ut, R) : 0;
    if (csv) {
      fprintf(csv, "%s,%d,convs,%.4f,%.4f", nname, t, tconv * 1e3, dconv * 1e3);
      fprintf(csv, tn ? ",%.4f\n" : "\n", uconv * 1e3);
      fprintf(csv, "%s,%d,total,%.4f,%.4f", nname, t, tm * 1e3, dm * 1e3);
      fprintf(csv, tn ? ",%.4f\n" : "\n", um * 1e3);
    }
    printf("\n%d thread%s (%d runs each, round-robin; logits agree to %.1e):\n", t,
           t > 1 ? "s" : "", R, rel);
    if (o.layers) {
      printf("%-16s %-16s %9s %9s %7s  %s\n", "layer", "tec template", "tec ms", "oneDNN ms",
             "ratio", o.prepadded ? "tec prepadded ms  oneDNN impl" : "oneDNN impl");
      for (int i = 0; i < nl; i++) {
        printf("%-16s %-16s %9.3f %9.3f %7.2f  ", n->layers[i].name, n->layers[i].tmpl,
               tmed[i] * 1e3, dmed[i] * 1e3, dmed[i] / tmed[i]);
        if (o.prepadded && pp.on[i]) printf("%16.3f  ", pmed[i] * 1e3);
        else if (o.prepadded) printf("%16s  ", "-");
        printf("%s%s\n", d->impl[i], d->nsteps[i] > 1 ? " (+reorder)" : "");
      }
      printf("%-16s %-16s %9s %9.3f %7s  the NCHW image into %s's format\n", "(input edge)",
             "(memcpy)", "-", edge * 1e3, "", n->layers[0].name);
      if (o.prepadded) {
        double a = 0, b = 0;
        for (int i = 0; i < nl; i++)
          if (pp.on[i]) a += tmed[i], b += pmed[i];
        printf("padded layers: %.3f ms as run, %.3f ms over an input with the border already "
               "there (the copies and border tests: %.3f ms)\n", a * 1e3, b * 1e3, (a - b) * 1e3);
      }
    }
    printf("  %-34s %9s %9s %7s\n", "", "tec ms", "oneDNN ms", "oneDNN/tec");
    printf("  %-34s %9.3f %9.3f %7.2f\n", "convs (sum of the layers' medians)", tconv * 1e3,
           dconv * 1e3, dconv / tconv);
    printf("  %-34s %9.3f %9.3f %7.2f\n", "whole network (median run)", tm * 1e3, dm * 1e3, dm / tm);
    double qm = q ? bench_median(qt, R) : 0;
    bench_sort(tt, R), bench_sort(dt, R);
    printf("  %-34s %9.3f %9.3f %7.2f\n", "whole network (fastest run)", tt[0] * 1e3, dt[0] * 1e3,
           dt[0] / tt[0]);
    printf("  %-34s %9s %9s %7.2f  (middle half %.2f .. %.2f)\n", "per round: oneDNN / tec", "", "",
           rrm[0], rrm[1], rrm[2]);
    if (q) {
      double qm2 = qm, em = bench_median(et, R);
      bench_sort(qt, R), bench_sort(et, R);
      printf("\n  int8 (tec: qnn templates, logits within %.2g of max |logit| of fp32's; oneDNN int8 "
             "within %.2g of tec int8's):\n", qrel, erel);
      if (o.layers) {
        printf("  %-16s %-16s %9s %9s %7s  %s\n", "layer", "tec template", "int8 ms", "oneDNN ms",
               "ratio", "oneDNN impl");
        for (int i = 0; i < ql; i++)
          printf("  %-16s %-16s %9.3f %9.3f %7.2f  %s\n", q->layers[i].name, q->layers[i].tmpl,
                 qs[i] * 1e3, emed[i] * 1e3, emed[i] / qs[i], dq->impl[i]);
        printf("  %-16s %-16s %9s %9.3f\n", "(input edge)", "", "-", emed[ql] * 1e3);
      }
      printf("  %-34s %9s %9s %9s %9s %9s\n", "", "int8 ms", "oneDNN i8", "fp32 ms", "oneDNN f32",
             "oDNNi8/i8");
      printf("  %-34s %9.3f %9.3f %9.3f %9.3f %9.2f\n", "convs (+ adds; layers' medians)", qconv * 1e3,
             econv * 1e3, tconv * 1e3, dconv * 1e3, econv / qconv);
      printf("  %-34s %9.3f %9.3f %9.3f %9.3f %9.2f\n", "whole network (median run)", qm2 * 1e3,
             em * 1e3, tm * 1e3, dm * 1e3, em / qm2);
      printf("  %-34s %9.3f %9.3f %9.3f %9.3f %9.2f\n", "whole network (fastest run)", qt[0] * 1e3,
             et[0] * 1e3, tt[0] * 1e3, dt[0] * 1e3, et[0] / qt[0]);
      printf("  %-34s %9s %9s %9s %9s %9.2f  (middle half %.2f .. %.2f)\n",
             "per round: oneDNN i8 / tec i8", "", "", "", "", rqm[0], rqm[1], rqm[2]);
      if (csv) fprintf(csv, "%s,%d,int8_total,%.4f,%.4f\n", nname, t, qm * 1e3, em * 1e3);
      dn_free(dq);
      free(dq);
    }
    printf("  %-34s %9.2f %9.2f\n", "cores used (process CPU / wall)", bench_median(cu, R),
           bench_median(cu + R, R));
    printf("  %-34s %9.2f %9.2f\n", "  of which the calling thread's", bench_median(cu + 2 * R, R),
           bench_median(cu + 3 * R, R));
    if (tn) {
      printf("\n  tuned (--records %s; logits agree with the default's to %.1e):\n", o.records, urel);
      if (o.layers) {
        printf("  %-16s %9s %9s %7s  %s\n", "layer", "tec ms", "tuned ms", "ratio", "config (* a record's)");
        for (int i = 0; i < nl; i++)
          printf("  %-16s %9.3f %9.3f %7.2f  %s%s\n", n->layers[i].name, tmed[i] * 1e3, umed[i] * 1e3,
                 tmed[i] / umed[i], tn->layers[i].tuned ? "* " : "", tn->layers[i].config);
      }
      printf("  %-34s %9s %9s %7s\n", "", "tec ms", "tuned ms", "tec/tuned");
      printf("  %-34s %9.3f %9.3f %7.2f\n", "convs (sum of the layers' medians)", tconv * 1e3, uconv * 1e3,
             tconv / uconv);
      printf("  %-34s %9.3f %9.3f %7.2f\n", "whole network (median run)", tm * 1e3, um * 1e3, tm / um);
      bench_sort(ut, R);
      printf("  %-34s %9.3f %9.3f %7.2f\n", "whole network (fastest run)", tt[0] * 1e3, ut[0] * 1e3,
             tt[0] / ut[0]);
    }
    dn_free(d);
    free(d);
  }
  if (csv) fclose(csv);
  getloadavg(load, 3);
  printf("load at the end %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  for (int i = 0; i < nl; i++)
    if (pp.on[i]) tec_dl_free(&pp.t[i][0]);
  if (pp.mod) tec_module_free(pp.mod);
  tec_ctx_free(pp.ctx);
  free(ps), free(pmed), free(cu), free(us), free(ut), free(umed);
  net_free(tn);
  qnet_free(q);
  free(qs), free(qt), free(rr), free(rq), free(es), free(et), free(emed);
  free(img), free(ts), free(ds), free(tt), free(dt), free(col), free(tmed), free(dmed);
  net_free(n);
  return status;
}

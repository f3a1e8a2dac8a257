/* conv.c — every convolution of MobileNet v1 and ResNet-18: tec's template against oneDNN and
 * XNNPACK, same data, same thread count, in one run.
 *
 *   usage: printed by main() on a bad option (the options and their defaults, one place)
 *
 * At startup: the CPU model (/proc/cpuinfo) and the FMA peak of one thread (peak.c: a
 * register-only AVX-512 FMA loop, the best of many short tries); the tables' "% peak" columns
 * divide by threads x that. The same loop on all threads at once is shown beside it: below
 * threads x one, other tenants held a core at startup.
 *
 * Per layer, once: data and weights seeded random, the naive reference (double accumulation),
 * tec's template built (conv_impl.c says which and in which layout), XNNPACK's operator made.
 * Per (thread count, layer): oneDNN's primitive made for that thread count, src and weights
 * reordered into its formats; every implementation called once and checked against the
 * reference (max relative error, first round only), warmed up twice, then timed round-robin —
 * tec, oneDNN, XNNPACK, tec, ... — so that the load of this shared machine falls on all three
 * alike: at least --reps calls each, more for small layers (about TIME_BUDGET seconds for the
 * three together). Medians; ratios are speed ratios (other's time / tec's time): above 1 tec
 * is faster. tec's first call (the weights' packing, prepare) is the checked one, never timed.
 *
 * GNU OpenMP (oneDNN's runtime) reads GOMP_SPINCOUNT when it is loaded, so main() re-executes
 * itself once with GOMP_SPINCOUNT=2000, as gemm.c does (bench/README.md: "One command").
 * XNNPACK's pool gets XNN_FLAG_YIELD_WORKERS unless --xnn-spin: its workers would otherwise spin
 * a million pause instructions after each call, on the core the next implementation runs on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common.h"
#include "conv.h"
#include "conv_roof.h"
#include "peak.h"

#define TIME_BUDGET 0.8 /* seconds of timed calls per (layer, thread count), all impls */
#define MAX_REPS 2000

/* MobileNet v1 (224x224) and ResNet-18, /work/shared/workloads.md */
static const conv_layer layers[] = {
    /* name      count c_in  h    w    c_out k  s  pad groups */
    {"mb00_conv", 1, 3, 224, 224, 32, 3, 2, 1, 1},
    {"mb01_dw", 1, 32, 112, 112, 32, 3, 1, 1, 32},
    {"mb02_pw", 1, 32, 112, 112, 64, 1, 1, 0, 1},
    {"mb03_dw", 1, 64, 112, 112, 64, 3, 2, 1, 64},
    {"mb04_pw", 1, 64, 56, 56, 128, 1, 1, 0, 1},
    {"mb05_dw", 1, 128, 56, 56, 128, 3, 1, 1, 128},
    {"mb06_pw", 1, 128, 56, 56, 128, 1, 1, 0, 1},
    {"mb07_dw", 1, 128, 56, 56, 128, 3, 2, 1, 128},
    {"mb08_pw", 1, 128, 28, 28, 256, 1, 1, 0, 1},
    {"mb09_dw", 1, 256, 28, 28, 256, 3, 1, 1, 256},
    {"mb10_pw", 1, 256, 28, 28, 256, 1, 1, 0, 1},
    {"mb11_dw", 1, 256, 28, 28, 256, 3, 2, 1, 256},
    {"mb12_pw", 1, 256, 14, 14, 512, 1, 1, 0, 1},
    {"mb13_dw", 5, 512, 14, 14, 512, 3, 1, 1, 512}, /* 13, 15, 17, 19, 21 */
    {"mb14_pw", 5, 512, 14, 14, 512, 1, 1, 0, 1},   /* 14, 16, 18, 20, 22 */
    {"mb23_dw", 1, 512, 14, 14, 512, 3, 2, 1, 512},
    {"mb24_pw", 1, 512, 7, 7, 1024, 1, 1, 0, 1},
    {"mb25_dw", 1, 1024, 7, 7, 1024, 3, 1, 1, 1024},
    {"mb26_pw", 1, 1024, 7, 7, 1024, 1, 1, 0, 1},
    {"rn_conv1", 1, 3, 224, 224, 64, 7, 2, 3, 1},
    {"rn_l1", 4, 64, 56, 56, 64, 3, 1, 1, 1},
    {"rn_l2_0", 1, 64, 56, 56, 128, 3, 2, 1, 1},
    {"rn_l2", 3, 128, 28, 28, 128, 3, 1, 1, 1},
    {"rn_l2_ds", 1, 64, 56, 56, 128, 1, 2, 0, 1},
    {"rn_l3_0", 1, 128, 28, 28, 256, 3, 2, 1, 1},
    {"rn_l3", 3, 256, 14, 14, 256, 3, 1, 1, 1},
    {"rn_l3_ds", 1, 128, 28, 28, 256, 1, 2, 0, 1},
    {"rn_l4_0", 1, 256, 14, 14, 512, 3, 2, 1, 1},
    {"rn_l4", 3, 512, 7, 7, 512, 3, 1, 1, 1},
    {"rn_l4_ds", 1, 256, 14, 14, 512, 1, 2, 0, 1},
};
#define NLAYERS ((int)(sizeof layers / sizeof layers[0]))

/* the networks: layers whose name starts with prefix, their convolutions counted */
static const struct {
  const char *prefix, *name;
  int convs;
} nets[] = {{"mb", "MobileNet v1", 27}, {"rn", "ResNet-18", 20}};
#define NNETS 2

/* ---------------- options ---------------- */
typedef struct opts {
  const char *layers; /* comma-separated substrings of layer names, NULL: all */
  int nthreads, threads[CONV_MAX_THREADS];
  int reps, rounds, list, verbose, xnn_spin, all_templates;
  const char *csv_path, *tec_template, *tec_config;
} opts;


static int parse_opts(int argc, char **argv, opts *o) {
  *o = (opts){.nthreads = 2, .threads = {1, 2}, .reps = 20, .rounds = 1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--list")) o->list = 1;
    else if (!strcmp(a, "--verbose")) o->verbose = 1;
    else if (!strcmp(a, "--xnn-spin")) o->xnn_spin = 1;
    else if (!strcmp(a, "--all-templates")) o->all_templates = 1;
    else if (!v) {
      fprintf(stderr, "conv: %s: unknown option or missing value\n", a);
      return -1;
    } else {
      i++;
      if (!strcmp(a, "--layers")) o->layers = v;
      else if (!strcmp(a, "--csv")) o->csv_path = v;
      else if (!strcmp(a, "--tec-template")) o->tec_template = v;
      else if (!strcmp(a, "--tec-config")) o->tec_config = v;
      else if (!strcmp(a, "--reps")) o->reps = atoi(v);
      else if (!strcmp(a, "--rounds")) o->rounds = atoi(v);
      else if (!strcmp(a, "--threads")) {
        if ((o->nthreads = bench_parse_list(v, o->threads, CONV_MAX_THREADS, 1, 256)) < 1) {
          fprintf(stderr, "conv: --threads %s: a list of 1 to %d positive counts, like 1,2\n", v,
                  CONV_MAX_THREADS);
          return -1;
        }
      } else {
        fprintf(stderr, "conv: unknown option '%s'\n", a);
        return -1;
      }
    }
  }
  if (o->reps < 20) {
    fprintf(stderr, "conv: --reps %d: at least 20 timed calls per implementation\n", o->reps);
    return -1;
  }
  if (o->rounds < 1 || o->rounds > 100) {
    fprintf(stderr, "conv: --rounds %d: 1 to 100\n", o->rounds);
    return -1;
  }
  if (o->all_templates && (o->tec_template || o->tec_config || o->rounds > 1 || o->csv_path)) {
    fprintf(stderr, "conv: --all-templates runs every template at its defaults, one round, no "
                    "CSV: not with --tec-template, --tec-config, --rounds or --csv\n");
    return -1;
  }
  return 0;
}

/* --layers: a layer runs if its name contains one of the comma-separated words */
static int selected(const opts *o, const char *name) {
  if (!o->layers) return 1;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", o->layers);
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
    if (strstr(name, t)) return 1;
  return 0;
}

static void shape_str(const conv_layer *L, char *buf, size_t size) {
  snprintf(buf, size, "%lldx%lldx%lld>%lld k%lld s%lld%s", (long long)L->c_in, (long long)L->h,
           (long long)L->w, (long long)L->c_out, (long long)L->k, (long long)L->stride,
           L->groups > 1 ? " dw" : "");
}

/* ---------------- timing ---------------- */



void conv_set_threads(int t) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", t);
  setenv("TEC_NUM_THREADS", buf, 1);
  tec_rt_set_num_threads(t);
  omp_set_num_threads(t); /* Debian's oneDNN is built on GNU OpenMP */
}

/* tec's speed against the fastest other implementation (its time / tec's; > 1: tec is faster)
 * and XNNPACK's time over oneDNN's, from one layer's medians; 0 where one did not run. */
static double tec_over_best(const double *med) {
  double best = 0;
  for (int i = IMPL_DNNL; i < NIMPL; i++)
    if (med[i] > 0 && (best == 0 || med[i] < best)) best = med[i];
  return med[IMPL_TEC] > 0 && best > 0 ? best / med[IMPL_TEC] : 0;
}
static double xnn_over_dnnl(const double *med) {
  return med[IMPL_DNNL] > 0 && med[IMPL_XNN] > 0 ? med[IMPL_XNN] / med[IMPL_DNNL] : 0;
}

/* One (layer, thread count): med[impl] (seconds; 0 where impl did not run), err[impl] (max
 * relative error, -1 where not checked). 0, or 1 if a check failed. */
static int measure(conv_case *c, const opts *o, int ti, pthreadpool_t pool, int check,
                   double *med, double *err) {
  int t = o->threads[ti], status = 0, avail[NIMPL];
  conv_set_threads(t);
  if (!c->dnnl[ti].tried) conv_dnnl_setup(c, ti); /* after omp_set_num_threads */
  avail[IMPL_TEC] = c->tec_ok, avail[IMPL_DNNL] = c->dnnl[ti].ok, avail[IMPL_XNN] = c->xnn_ok;
  double est = 0;
  for (int impl = 0; impl < NIMPL; impl++) {
    med[impl] = 0, err[impl] = -1;
    if (!avail[impl]) continue;
    if (check) {
      conv_clear_output(c, impl, ti);
      if (conv_run(c, impl, ti, pool)) {
        avail[impl] = 0;
        continue;
      }
      err[impl] = conv_check(c, impl, ti);
      if (!(err[impl] <= 1e-4)) {
        printf("CHECK FAILED: %s %s threads=%d: max relative error %.3g (limit 1e-4)\n",
               c->L->name, conv_impl_name[impl], t, err[impl]);
        status = 1;
      }
    }
    double t0 = 0;
    for (int w = 0; w < 2 && avail[impl]; w++) {
      t0 = bench_now(CLOCK_MONOTONIC);
      if (conv_run(c, impl, ti, pool)) avail[impl] = 0;
    }
    est += bench_now(CLOCK_MONOTONIC) - t0;
  }
  int reps = o->reps;
  if (est > 0 && reps * est < TIME_BUDGET) reps = (int)(TIME_BUDGET / est);
  if (reps > MAX_REPS) reps = MAX_REPS;
  if (reps < o->reps) reps = o->reps;
  double *ts = malloc(sizeof(double) * (size_t)(reps * NIMPL)); /* ts[impl * reps + r] */
  if (!ts) return -1;
  for (int r = 0; r < reps; r++)
    for (int impl = 0; impl < NIMPL; impl++) {
      if (!avail[impl]) continue;
      double t0 = bench_now(CLOCK_MONOTONIC);
      if (conv_run(c, impl, ti, pool)) avail[impl] = 0;
      ts[impl * reps + r] = bench_now(CLOCK_MONOTONIC) - t0;
    }
  for (int impl = 0; impl < NIMPL; impl++)
    if (avail[impl]) med[impl] = bench_median(ts + impl * reps, reps);
  free(ts);
  return status;
}

/* ---------------- output ---------------- */
static void print_header(int t, double peak) {
  printf("\n%d thread%s (%% peak of %.1f GFLOP/s)\n", t, t > 1 ? "s" : "", peak);
  printf("%-9s %-22s %8s %8s %8s  %6s %6s %6s  %5s %5s %5s  %8s  %8s\n", "layer", "shape",
         "tec ms", "dnnl ms", "xnn ms", "tec GF", "dnnlGF", "xnn GF", "tec%", "dnnl%", "xnn%",
         "tec/best", "max err");
}

static void print_ms(double s, double err) {
  if (s > 0) printf(" %7.3f%c", s * 1e3, err > 1e-4 || err != err ? '!' : ' ');
  else printf(" %7s ", "-");
}

static void print_row(const conv_case *c, const double *med, const double *err, double peak) {
  char shape[64];
  shape_str(c->L, shape, sizeof shape);
  printf("%-9s %-22s", c->L->name, shape);
  for (int i = 0; i < NIMPL; i++) print_ms(med[i], err[i]);
  printf(" ");
  for (int i = 0; i < NIMPL; i++)
    med[i] > 0 ? printf(" %6.1f", c->flops / med[i] * 1e-9) : printf(" %6s", "-");
  printf(" ");
  for (int i = 0; i < NIMPL; i++)
    med[i] > 0 ? printf(" %5.1f", 100 * c->flops / med[i] * 1e-9 / peak) : printf(" %5s", "-");
  double r = tec_over_best(med);
  if (r > 0) printf("  %7.2fx", r);
  else printf("  %8s", "-");
  double worst = -1;
  for (int i = 0; i < NIMPL; i++)
    if (err[i] > worst || err[i] != err[i]) worst = err[i];
  worst >= 0 || worst != worst ? printf("  %8.1e\n", worst) : printf("  %8s\n", "-");
  fflush(stdout);
}

/* The summary of one table: tec/fastest other over the layers, the libraries against each
 * other, each network's total (count-weighted sum of medians), the worst errors. */
static void print_summary(const opts *o, conv_case *cs, int ncase, double (*med)[NIMPL],
                          double (*err)[NIMPL]) {
  double logsum = 0, minr = 0;
  int n = 0;
  const char *minl = NULL;
  char below[1024] = "";
  size_t bl = 0;
  for (int i = 0; i < ncase; i++) {
    double r = tec_over_best(med[i]);
    if (r <= 0) continue;
    logsum += log(r), n++;
    if (!minl || r < minr) minr = r, minl = cs[i].L->name;
    if (r < 1.0 && bl < sizeof below - 32)
      bl += (size_t)snprintf(below + bl, sizeof below - bl, " %s", cs[i].L->name);
  }
  if (n)
    printf("tec/fastest other: geomean %.2fx over %d layers, min %.2fx (%s), below 1.0: %s\n",
           exp(logsum / n), n, minr, minl, bl ? below + 1 : "none");
  else
    printf("tec/fastest other: no layer ran with tec (see the 'tec:' lines above)\n");
  double lx = 0;
  int nx = 0;
  for (int i = 0; i < ncase; i++)
    if (xnn_over_dnnl(med[i]) > 0) lx += log(xnn_over_dnnl(med[i])), nx++;
  if (nx) printf("xnnpack time / onednn time: geomean %.2f over %d layers\n", exp(lx / nx), nx);
  for (int k = 0; k < NNETS; k++) {
    int have = 0;
    double tot[NIMPL] = {0}, flops = 0;
    int complete[NIMPL] = {1, 1, 1};
    for (int i = 0; i < ncase; i++) {
      if (strncmp(cs[i].L->name, nets[k].prefix, strlen(nets[k].prefix))) continue;
      have += cs[i].L->count;
      flops += cs[i].L->count * cs[i].flops;
      for (int m = 0; m < NIMPL; m++) {
        tot[m] += cs[i].L->count * med[i][m];
        complete[m] &= med[i][m] > 0;
      }
    }
    if (have != nets[k].convs) continue; /* only when --layers kept the whole network */
    printf("%s, all %d convolutions (%.2f GFLOP), sum of medians:", nets[k].name, have, flops * 1e-9);
    for (int m = 0; m < NIMPL; m++)
      complete[m] ? printf(" %s %.3f ms", conv_impl_name[m], tot[m] * 1e3)
                  : printf(" %s -", conv_impl_name[m]);
    printf("\n");
  }
  printf("max relative error:");
  for (int m = 0; m < NIMPL; m++) {
    double w = -1;
    const char *wl = NULL;
    for (int i = 0; i < ncase; i++)
      if (err[i][m] > w || err[i][m] != err[i][m]) w = err[i][m], wl = cs[i].L->name;
    wl ? printf(" %s %.1e (%s)", conv_impl_name[m], w, wl) : printf(" %s -", conv_impl_name[m]);
  }
  printf(o->rounds > 1 ? " (checked in round 1)\n" : "\n");
}

/* oneDNN's implementations in this table, each with its layers */
static void print_dnnl_impls(const opts *o, conv_case *cs, int ncase, int ti) {
  printf("onednn implementations:");
  for (int i = 0; i < ncase; i++) {
    int seen = 0;
    for (int j = 0; j < i && !seen; j++) seen = !strcmp(cs[j].dnnl[ti].impl, cs[i].dnnl[ti].impl);
    if (seen || !cs[i].dnnl[ti].ok) continue;
    printf(" %s (", cs[i].dnnl[ti].impl);
    for (int j = i, first = 1; j < ncase; j++)
      if (cs[j].dnnl[ti].ok && !strcmp(cs[j].dnnl[ti].impl, cs[i].dnnl[ti].impl))
        printf("%s%s", first ? "" : " ", cs[j].L->name), first = 0;
    printf(")");
  }
  printf("\n");
  /* what each algorithm ran as and took when the fastest was picked (the table's onednn) */
  for (int i = 0; i < ncase; i++)
    if (cs[i].dnnl[ti].tried) printf("  %-9s onednn %s\n", cs[i].L->name, cs[i].dnnl[ti].algs);
  if (o->verbose)
    for (int i = 0; i < ncase; i++)
      if (cs[i].dnnl[ti].ok) printf("  %-9s %s\n", cs[i].L->name, cs[i].dnnl[ti].formats);
}

/* --rounds R > 1: tec/fastest and xnnpack/onednn per layer, min / median / max over rounds */
static void print_spread(const opts *o, conv_case *cs, int ncase, double *ratio) {
  /* ratio[((round * nthreads + ti) * ncase + i) * 2 + what] */
  printf("\nover %d rounds, min / median / max:\n%-9s %3s  %20s  %20s\n", o->rounds, "layer",
         "thr", "tec/fastest", "xnn time/dnnl time");
  for (int ti = 0; ti < o->nthreads; ti++)
    for (int i = 0; i < ncase; i++) {
      printf("%-9s %3d", cs[i].L->name, o->threads[ti]);
      for (int w = 0; w < 2; w++) {
        double v[100];
        int n = 0;
        for (int r = 0; r < o->rounds; r++) {
          double x = ratio[((r * o->nthreads + ti) * ncase + i) * 2 + w];
          if (x > 0) v[n++] = x;
        }
        if (!n) {
          printf("  %20s", "-");
          continue;
        }
        double mid = bench_median(v, n);
        printf("  %6.2f %6.2f %6.2f", v[0], mid, v[n - 1]);
      }
      printf("\n");
    }
}

static void list_layers(void) {
  printf("%-9s %5s  %-22s %5s %9s\n", "layer", "count", "shape", "pad", "MFLOP");
  for (int i = 0; i < NLAYERS; i++) {
    const conv_layer *L = &layers[i];
    char shape[64];
    shape_str(L, shape, sizeof shape);
    int64_t oh = (L->h + 2 * L->pad - L->k) / L->stride + 1, ow = (L->w + 2 * L->pad - L->k) / L->stride + 1;
    double f = 2.0 * (double)(L->c_out * oh * ow) * (double)(L->c_in / L->groups * L->k * L->k);
    printf("%-9s %5d  %-22s %5lld %9.1f\n", L->name, L->count, shape, (long long)L->pad, f * 1e-6);
  }
}

/* The one place the OpenMP environment is set: GNU OpenMP reads GOMP_SPINCOUNT when loaded,
 * so the process re-executes itself once with it (gemm.c's reexec_for_openblas, same value:
 * tec's own RT_SPIN, the same spinning budget for oneDNN's and tec's idle workers). */
static void reexec_for_omp(char **argv) {
  if (getenv("GOMP_SPINCOUNT") || getenv("TEC_BENCH_REEXEC")) return;
  setenv("GOMP_SPINCOUNT", "2000", 0);
  setenv("TEC_BENCH_REEXEC", "1", 1);
  execv("/proc/self/exe", argv);
  fprintf(stderr, "conv: re-exec with GOMP_SPINCOUNT=2000 failed: %s\n", strerror(errno));
}

int main(int argc, char **argv) {
  reexec_for_omp(argv);
  opts o;
  if (parse_opts(argc, argv, &o)) {
    fprintf(stderr,
            "usage: conv [--list] [--layers WORD,...] [--threads 1,2] [--reps 20] [--rounds 1]\n"
            "            [--csv FILE] [--tec-template NAME] [--tec-config 'KNOB=V ...']\n"
            "            [--xnn-spin] [--verbose] [--all-templates]\n"
            "  --layers: the layers whose name contains one of the words (--list shows them)\n"
            "  --tec-template: this template for every layer instead of depthwise_nchwc /\n"
            "                  conv2d_nchwc (layers it does not apply to run without tec);\n"
            "                  pick: topi_conv2d_pick's rule table chooses per layer\n"
            "  --tec-config: these knobs instead of the template's defaults (the others stay);\n"
            "                a layer whose space refuses them runs without tec, saying why\n"
            "  --xnn-spin: XNNPACK's workers spin after a call (default: they sleep at once)\n"
            "  --all-templates: every conv2d template (where it applies) on ResNet-18's 3x3\n"
            "                   layers and every MobileNet v1 layer, beside oneDNN and XNNPACK\n");
    return 2;
  }
  if (o.list) {
    list_layers();
    return 0;
  }
  char cpu[256];
  bench_cpu_model(cpu, sizeof cpu);
  printf("CPU: %s, %ld online CPUs\n", cpu, sysconf(_SC_NPROCESSORS_ONLN));
  /* % peak divides by t x the 1-thread peak: what t cores can do, whatever the other tenants
   * of the machine were doing at startup; t threads at once is measured and shown beside it */
  double peak1, peak[CONV_MAX_THREADS];
  const char *isa = "";
  peak1 = bench_fma_peak(1, 0.02, 25, &isa);
  printf("FMA peak (%s register-only FMA loop, best of 25 x 20 ms): %.1f GFLOP/s per thread", isa,
         peak1);
  for (int ti = 0; ti < o.nthreads; ti++) {
    peak[ti] = o.threads[ti] * peak1;
    if (o.threads[ti] == 1) continue;
    double all = bench_fma_peak(o.threads[ti], 0.02, 25, &isa);
    printf("; %d threads at once %.1f (%.2fx one)", o.threads[ti], all, all / peak1);
  }
  printf("\n");
  conv_roof roof;
  if (conv_roof_measure(&roof, peak1)) return 1;
  const dnnl_version_t *dv = dnnl_version();
  printf("oneDNN %d.%d.%d (cpu runtime %s, the fastest of direct, auto, winograd per layer, format any); XNNPACK (NHWC, "
         "workers %s); GOMP_SPINCOUNT=%s\n",
         dv->major, dv->minor, dv->patch, dv->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other",
         o.xnn_spin ? "spin" : "yield", getenv("GOMP_SPINCOUNT") ? getenv("GOMP_SPINCOUNT") : "unset");
  if (conv_libs_init()) return 1;
  tec_ctx *tctx = tec_ctx_new();
  if (tctx) { /* the host target: its -mcpu and vector width (the NCHW[x]c block) */
    const tec_target *host = tec_target_parse(tctx, NULL);
    int bits = host ? host->vector_bits : -1;
    printf("tec: host target -mcpu=%s, %d-bit vectors (NCHW%dc)\n", host ? host->cpu : "?", bits,
           bits / 32);
  }
  tec_ctx_free(tctx);

  if (o.all_templates) { /* ResNet-18's 3x3 layers and all of MobileNet v1's, as --layers says */
    const conv_layer *ls[NLAYERS];
    int n = 0;
    for (int i = 0; i < NLAYERS; i++)
      if (selected(&o, layers[i].name) && (!strncmp(layers[i].name, "mb", 2) ||
                                           (!strncmp(layers[i].name, "rn", 2) && layers[i].k == 3)))
        ls[n++] = &layers[i];
    if (!n) {
      fprintf(stderr, "conv: --all-templates: no ResNet-18 3x3 or MobileNet v1 layer in --layers "
                      "%s\n", o.layers);
      return 2;
    }
    int rc = conv_all_templates(ls, n, o.threads, o.nthreads, o.reps, !o.xnn_spin);
    conv_libs_free();
    return rc < 0 ? 1 : rc;
  }
  conv_case *cs = calloc(NLAYERS, sizeof *cs);
  int ncase = 0;
  if (!cs) return 1;
  double t0 = bench_now(CLOCK_MONOTONIC);
  for (int i = 0; i < NLAYERS; i++) {
    if (!selected(&o, layers[i].name)) continue;
    conv_case *c = &cs[ncase++];
    if (conv_case_init(c, &layers[i], 1234u + (unsigned)i)) {
      fprintf(stderr, "conv: out of memory for %s\n", layers[i].name);
      return 1;
    }
    if (conv_tec_setup(c, o.tec_template, o.tec_config) == 0 && o.verbose)
      printf("tec: %s: %s\n", c->L->name, c->tec_desc);
    conv_xnn_setup(c, !o.xnn_spin);
  }
  if (!ncase) {
    fprintf(stderr, "conv: --layers %s matches no layer (--list shows them)\n", o.layers);
    return 2;
  }
  int ntec = 0;
  for (int i = 0; i < ncase; i++) ntec += cs[i].tec_ok;
  printf("%d layers: references computed, tec built for %d, in %.1f s\n", ncase, ntec, bench_now(CLOCK_MONOTONIC) - t0);
  if (ntec && !o.verbose) { /* which template ran where, once */
    printf("tec templates:");
    for (int i = 0; i < ncase; i++)
      if (cs[i].tec_ok) printf(" %s=%s", cs[i].L->name, cs[i].tec_template);
    printf(" (--verbose: layouts and configs)\n");
  }
  pthreadpool_t pools[CONV_MAX_THREADS];
  for (int ti = 0; ti < o.nthreads; ti++)
    if (!(pools[ti] = pthreadpool_create((size_t)o.threads[ti]))) {
      fprintf(stderr, "conv: pthreadpool_create(%d) failed\n", o.threads[ti]);
      return 1;
    }
  FILE *csv = NULL;
  if (o.csv_path) {
    if (!(csv = fopen(o.csv_path, "w"))) {
      fprintf(stderr, "conv: cannot write %s: %s\n", o.csv_path, strerror(errno));
      return 1;
    }
    fprintf(csv, "workload,threads,impl,median_ms,gflops\n");
  }
  double(*med)[NIMPL] = calloc((size_t)ncase, sizeof *med);
  double(*err)[NIMPL] = calloc((size_t)ncase, sizeof *err);
  double(*err0)[NIMPL] = calloc((size_t)(ncase * o.nthreads), sizeof *err0); /* round 1's */
  double *ratio = calloc((size_t)(o.rounds * o.nthreads * ncase * 2), sizeof *ratio);
  double *times1 = calloc((size_t)(o.rounds * ncase * NIMPL), sizeof *times1); /* 1 thread */
  int ti1 = -1; /* the index of 1 thread in --threads: the roofline's */
  for (int ti = 0; ti < o.nthreads; ti++)
    if (o.threads[ti] == 1) ti1 = ti;
  if (!med || !err || !err0 || !ratio || !times1) return 1;
  int status = 0;
  for (int round = 0; round < o.rounds; round++) {
    if (o.rounds > 1) printf("\nround %d of %d", round + 1, o.rounds);
    for (int ti = 0; ti < o.nthreads; ti++) {
      print_header(o.threads[ti], peak[ti]);
      for (int i = 0; i < ncase; i++) {
        int rc = measure(&cs[i], &o, ti, pools[ti], round == 0, med[i], err[i]);
        if (rc < 0) return 1;
        status |= rc;
        if (round == 0) memcpy(err0[ti * ncase + i], err[i], sizeof err[i]);
        else memcpy(err[i], err0[ti * ncase + i], sizeof err[i]);
        print_row(&cs[i], med[i], err[i], peak[ti]);
        for (int m = 0; csv && m < NIMPL; m++)
          if (med[i][m] > 0)
            fprintf(csv, "%s,%d,%s,%.4f,%.2f\n", cs[i].L->name, o.threads[ti], conv_impl_name[m],
                    med[i][m] * 1e3, cs[i].flops / med[i][m] * 1e-9);
        double *r = ratio + ((round * o.nthreads + ti) * ncase + i) * 2;
        r[0] = tec_over_best(med[i]);
        r[1] = xnn_over_dnnl(med[i]);
        if (ti == ti1) memcpy(times1 + ((size_t)round * ncase + i) * NIMPL, med[i], sizeof med[i]);
      }
      print_summary(&o, cs, ncase, med, err);
      if (round == 0) print_dnnl_impls(&o, cs, ncase, ti);
    }
  }
  if (o.rounds > 1) print_spread(&o, cs, ncase, ratio);
  if (ti1 >= 0) conv_roof_print(&roof, cs, ncase, times1, o.rounds);
  if (csv) fclose(csv);
  for (int ti = 0; ti < o.nthreads; ti++) pthreadpool_destroy(pools[ti]);
  for (int i = 0; i < ncase; i++) conv_case_free(&cs[i]);
  free(cs), free(med), free(err), free(err0), free(ratio), free(times1);
  conv_libs_free();
  return status;
}

/* gemm.c — square sgemm C = A·B (row-major, float32): tec's dense template (topi/dense.c) against
 * OpenBLAS cblas_sgemm and oneDNN dnnl_sgemm, same buffers, same thread count, in one run.
 *
 *   usage: printed by main() on a bad option (the options and their defaults, one place)
 *
 * tec's code is topi dense: topi_dense_declare, the host's default config from
 * topi_dense_space (the best schedule found: bench/README.md), the schedule options (--mr,
 * --nr, --ku, --jb, --parallel, --pack: the template's knobs) applied on top, then
 * topi_dense_schedule. A value the template does not accept is refused with its message. --vs
 * takes schedule options only (schedule_options), applied on top of the main ones.
 * bench/README.md says what each option does.
 *
 * Per (size, threads): every implementation is called once and checked against a naive
 * double-precision reference on a sample of rows, warmed up, then timed `reps` times
 * (at least 20) round-robin — tec, oneDNN, OpenBLAS, tec, ... — so that the load of this shared
 * machine hits all three alike; the median of each is reported (--stat min: the fastest). Ratios are speed ratios
 * (other's time / tec's time): above 1 means tec is faster.
 *
 * tec's schedule (topi/dense.c; the AVX-512 defaults mr 6, nr 64, ku 8, pack panel):
 *
 *   Bp[jo, k, ji] = B[k, jo*nr + ji]        B packed into nr-column panels, [N/nr][K][nr]
 *   C[i, j] = sum_k A[i, k] * Bp[j/nr, k, j%nr]
 *
 *   for jo in N/(nr*jb)       parallel          (jb panels of C and of Bp, --jb)
 *     Bp for these panels, 16-wide copies      (--pack panel; root: all of Bp up front)
 *     for io in M/mr
 *       for js in jb                            (A's mr rows stay in L1 for the next panel)
 *         C.local[mr][nr] = 0                   (compute_at js: the accumulator tile)
 *         for ko in K/ku, ki in ku unrolled     (--ku)
 *           for ii in mr      unrolled
 *             for ji in nr    vectorized        C.local[ii, ji] += A[io*mr+ii, k] * Bp[..]
 *         C[io*mr.., (jo*jb+js)*nr..] = C.local (vectorized copy)
 *
 * OpenBLAS and GNU OpenMP read their settings when they are loaded, so main() re-executes itself
 * once with them (OPENBLAS_CORETYPE=SkylakeX, no OPENBLAS_L2_SIZE, OPENBLAS_THREAD_TIMEOUT=4,
 * GOMP_SPINCOUNT=2000; see reexec_for_openblas): this is the only place they are set, and it
 * works however the program is started.
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
#include <cblas.h>
#include <dnnl.h>
#include "common.h"
#include "tec/tec.h"

/* ---------------- options ---------------- */
/* --pack's names, in the order of topi_dense_config.pack's values */
enum { PACK_ROOT, PACK_PANEL, PACK_NONE, NPACK };
static const char *const pack_names[NPACK] = {"root", "panel", "none"};

/* The index of v in names[0..n), or -1 */
static int name_index(const char *v, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v, names[i])) return i;
  return -1;
}

/* A knob given on the command line, or UNSET: the template's default for the size */
#define UNSET (-1000)

typedef struct opts {
  int nsizes, sizes[16];
  int nthreads, threads[8];
  int reps;
  int rounds;     /* --rounds: the whole sweep repeated, each round timed on its own */
  /* topi_dense_config's knobs, or UNSET */
  int mr, nr, ku, jb, parallel, pack;
  int print_ir;
  int stat_min;   /* --stat min: report the fastest call instead of the median (tuning only) */
  int cpu_clock;  /* time with CLOCK_PROCESS_CPUTIME_ID (tuning on a loaded machine, 1 thread) */
  const char *asm_path, *csv_path;
  const char *vs; /* "--vs 'OPTIONS'": a second tec schedule timed in the same round-robin */
} opts;


/* An integer option's value: the whole string, or -1 with a message */
static int parse_int(const char *opt, const char *v, int *out) {
  char *end;
  long x = strtol(v, &end, 10);
  if (end == v || *end || x < -100000 || x > 100000) {
    fprintf(stderr, "gemm: %s takes an integer, got '%s'\n", opt, v);
    return -1;
  }
  *out = (int)x;
  return 0;
}

/* The schedule options: what --vs may contain (everything else says what is run and how it
 * is timed). One list, so an option added later is refused inside --vs until it is put here. */
static const char *const schedule_options[] = {"--mr", "--nr", "--ku", "--jb", "--parallel",
                                               "--pack"};
#define NSCHEDULE_OPTIONS (sizeof schedule_options / sizeof *schedule_options)

/* Applies argv[1..argc) to *o (which holds defaults or another option set). schedule_only: the
 * options of --vs, which may contain schedule_options only. */
static int apply_opts(int argc, char **argv, opts *o, int schedule_only) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int is_schedule = 0;
    for (size_t r = 0; r < NSCHEDULE_OPTIONS; r++) is_schedule |= !strcmp(a, schedule_options[r]);
    if (schedule_only && !is_schedule) {
      fprintf(stderr, "gemm: %s inside --vs: --vs takes schedule options only (", a);
      for (size_t r = 0; r < NSCHEDULE_OPTIONS; r++)
        fprintf(stderr, "%s%s", r ? ", " : "", schedule_options[r]);
      fprintf(stderr, ")\n");
      return -1;
    }
    int has = v != NULL && strncmp(a, "--", 2) == 0;
    if (!strcmp(a, "--print-ir")) {
      o->print_ir = 1;
      continue;
    }
    if (!has) {
      fprintf(stderr, "gemm: %s: unknown option or missing value\n", a);
      return -1;
    }
    i++;
    int bad = 0;
    if (!strcmp(a, "--csv")) o->csv_path = v;
    else if (!strcmp(a, "--vs")) o->vs = v;
    else if (!strcmp(a, "--asm")) o->asm_path = v;
    else if (!strcmp(a, "--sizes")) bad = (o->nsizes = bench_parse_list(v, o->sizes, 16, 1, 1 << 20)) < 1;
    else if (!strcmp(a, "--threads")) bad = (o->nthreads = bench_parse_list(v, o->threads, 8, 1, 256)) < 1;
    else if (!strcmp(a, "--reps")) bad = parse_int(a, v, &o->reps);
    else if (!strcmp(a, "--rounds")) bad = parse_int(a, v, &o->rounds);
    else if (!strcmp(a, "--mr")) bad = parse_int(a, v, &o->mr);
    else if (!strcmp(a, "--nr")) bad = parse_int(a, v, &o->nr);
    else if (!strcmp(a, "--ku")) bad = parse_int(a, v, &o->ku);
    else if (!strcmp(a, "--jb")) bad = parse_int(a, v, &o->jb);
    else if (!strcmp(a, "--parallel")) bad = parse_int(a, v, &o->parallel);
    else if (!strcmp(a, "--pack")) bad = (o->pack = name_index(v, pack_names, NPACK)) < 0;
    else if (!strcmp(a, "--stat")) {
      bad = strcmp(v, "median") && strcmp(v, "min");
      o->stat_min = !strcmp(v, "min");
    } else if (!strcmp(a, "--clock")) {
      bad = strcmp(v, "wall") && strcmp(v, "cpu");
      o->cpu_clock = !strcmp(v, "cpu");
    } else {
      fprintf(stderr, "gemm: unknown option '%s'\n", a);
      return -1;
    }
    if (bad) {
      fprintf(stderr, "gemm: bad value '%s' for %s\n", v, a);
      return -1;
    }
  }
  if (o->reps < 20) o->reps = 20; /* the floor the benchmark promises */
  if (o->rounds < 1 || o->rounds > 100) {
    fprintf(stderr, "gemm: --rounds must be in [1, 100]\n");
    return -1;
  }
  return 0;
}

static int parse_opts(int argc, char **argv, opts *o) {
  *o = (opts){.nsizes = 4, .sizes = {256, 512, 1024, 2048}, .nthreads = 2, .threads = {1, 2},
              .reps = 20, .rounds = 1, .mr = UNSET, .nr = UNSET, .ku = UNSET, .jb = UNSET,
              .parallel = UNSET, .pack = UNSET};
  return apply_opts(argc, argv, o, 0);
}

/* --vs 'OPTIONS': the main option set with OPTIONS (schedule options only) applied on top. */
static int parse_vs(const opts *main_o, opts *vs) {
  static char buf[512];
  char *tok[64] = {"gemm"};
  int n = 1;
  snprintf(buf, sizeof buf, "%s", main_o->vs);
  for (char *t = strtok(buf, " \t"); t && n < 64; t = strtok(NULL, " \t")) tok[n++] = t;
  *vs = *main_o;
  vs->print_ir = 0, vs->asm_path = NULL; /* IR and assembly: the main schedule's */
  return apply_opts(n, tok, vs, 1);
}

/* ---------------- tec: topi dense ---------------- */
/* Builds tec's GEMM for n x n x n with the host's default config of topi dense and o's knobs on
 * top; the packed function in *fn and the config as text in *cfg_str. NULL on error (printed). */
static tec_module *tec_gemm_build(tec_ctx *ctx, int64_t n, const opts *o, tec_packed_fn *fn,
                                  const char **cfg_str) {
  topi_dense p = {.m = n, .n = n, .k = n};
  topi_decl d;
  tune_space sp;
  topi_op op;
  if (topi_declare(ctx, "dense", &p, &d) || topi_space_of(ctx, "dense", &p, NULL, &sp)) return NULL;
  topi_dense_config c = *(const topi_dense_config *)sp.default_config;
  if (o->mr != UNSET) c.mr = o->mr;
  if (o->nr != UNSET) c.nr = o->nr;
  if (o->ku != UNSET) c.ku = o->ku;
  if (o->jb != UNSET) c.jb = o->jb;
  if (o->parallel != UNSET) c.parallel = o->parallel;
  if (o->pack != UNSET) c.pack = o->pack;
  *cfg_str = tune_config_str(ctx, &sp, &c);
  if (topi_schedule(&d, &c, NULL, &op)) return NULL;
  lower_func *f = tec_lower(op.sched, "tec_gemm", op.nargs, op.args);
  if (!f) return NULL;
  if (o->print_ir) tec_lower_print(stdout, f);
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  if (!m) return NULL;
  if (o->asm_path) {
    FILE *out = fopen(o->asm_path, "w");
    if (out) fputs(tec_module_asm(m), out), fclose(out);
  }
  *fn = tec_module_get(m, "tec_gemm");
  return *fn ? m : NULL;
}

/* ---------------- the three implementations ---------------- */
enum { IMPL_TEC, IMPL_DNNL, IMPL_OPENBLAS, IMPL_TEC_VS, NIMPL };
static const char *impl_name[NIMPL] = {"tec", "onednn", "openblas", "tec-vs"};

typedef struct problem {
  int64_t n;
  float *a, *b, *c;
  DLTensor ta, tb, tc;
  tec_packed_fn tec, tec_vs; /* tec_vs: the --vs schedule, or NULL */
  double *ref;               /* check(): the sampled rows' exact values, then their magnitudes */
} problem;

static int run_impl(problem *p, int impl) {
  int n = (int)p->n;
  switch (impl) {
  case IMPL_TEC:
  case IMPL_TEC_VS: {
    DLTensor *args[3] = {&p->ta, &p->tb, &p->tc};
    if ((impl == IMPL_TEC ? p->tec : p->tec_vs)(args, 3) != 0) {
      fprintf(stderr, "gemm: tec: %s\n", tec_rt_last_error());
      return -1;
    }
    return 0;
  }
  case IMPL_DNNL:
    if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, p->a, n, p->b, n, 0.0f, p->c, n) != dnnl_success) {
      fprintf(stderr, "gemm: dnnl_sgemm failed\n");
      return -1;
    }
    return 0;
  case IMPL_OPENBLAS:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, p->a, n, p->b, n,
                0.0f, p->c, n);
    return 0;
  }
  return -1;
}

/* Max relative error of C against a double-precision reference on a sample of rows (the
 * reference computed on the first call, kept in p->ref). -1 if it cannot be computed. */
static double check(problem *p) {
  int64_t n = p->n, step = n > 128 ? n / 32 : 1, rows = (n + step - 1) / step;
  if (!p->ref) {
    if (!(p->ref = malloc(sizeof(double) * (size_t)(2 * rows * n)))) return -1;
    double *acc = p->ref, *mag = p->ref + rows * n;
    for (int64_t r = 0; r < rows; r++)
      for (int64_t j = 0; j < n; j++) {
        acc[r * n + j] = mag[r * n + j] = 0;
        for (int64_t k = 0; k < n; k++) {
          double t = (double)p->a[r * step * n + k] * p->b[k * n + j];
          acc[r * n + j] += t;
          mag[r * n + j] += fabs(t);
        }
      }
  }
  const double *acc = p->ref, *mag = p->ref + rows * n;
  double worst = 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < n; j++) {
      double e = fabs(acc[r * n + j] - p->c[r * step * n + j]) / (1.0 + mag[r * n + j]);
      if (e > worst) worst = e;
    }
  return worst;
}

static void set_threads(int t) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", t);
  setenv("TEC_NUM_THREADS", buf, 1);
  tec_rt_set_num_threads(t);
  openblas_set_num_threads(t);
  omp_set_num_threads(t); /* Debian's oneDNN is built on GNU OpenMP */
}

static clockid_t bench_clock = CLOCK_MONOTONIC;



/* One (size, threads) row: every implementation checked (first round only) and warmed up,
 * then timed round-robin so machine load hits all alike; med gets each one's median (or
 * minimum). 0, 1 if a result was wrong (med filled), -1 if a call failed (med not filled). */
static int measure(problem *p, const opts *o, int nimpl, int t, int check_first, double *med) {
  int64_t n = p->n;
  int status = 0;
  set_threads(t);
  double flops = 2.0 * (double)n * (double)n * (double)n;
  for (int impl = 0; impl < nimpl; impl++) {
    if (check_first) {
      memset(p->c, 0, sizeof(float) * (size_t)(n * n));
      if (run_impl(p, impl)) return -1;
      double err = check(p);
      if (err < 0) {
        fprintf(stderr, "gemm: out of memory for the reference\n");
        return -1;
      }
      if (err > 1e-5) {
        fprintf(stderr, "gemm: %s n=%lld threads=%d: WRONG, relative error %g\n",
                impl_name[impl], (long long)n, t, err);
        status = 1;
      }
    }
    for (int w = 0; w < 2; w++) run_impl(p, impl);
  }
  /* more reps for small sizes */
  int reps = o->reps;
  double est = flops / 100e9; /* seconds per call at ~100 GFLOP/s */
  while (reps < 400 && reps * est < 0.25) reps *= 2;
  double *ts = malloc(sizeof(double) * (size_t)(reps * nimpl)); /* ts[impl * reps + r] */
  if (!ts) {
    fprintf(stderr, "gemm: out of memory\n");
    return -1;
  }
  for (int r = 0; r < reps; r++)
    for (int impl = 0; impl < nimpl; impl++) {
      double t0 = bench_now(bench_clock);
      run_impl(p, impl);
      ts[impl * reps + r] = bench_now(bench_clock) - t0;
    }
  for (int impl = 0; impl < nimpl; impl++) {
    double *x = ts + impl * reps;
    bench_sort(x, reps);
    med[impl] = o->stat_min ? x[0]
                : reps % 2  ? x[reps / 2]
                            : 0.5 * (x[reps / 2 - 1] + x[reps / 2]);
  }
  free(ts);
  return status;
}

static void print_header(const opts *o) {
  printf("%-10s %3s  %9s %9s %9s  %7s %7s %7s  %8s %8s", "workload", "thr", "tec ms",
         "onednn ms", "oblas ms", "tec GF", "dnnl GF", "oblas GF", "tec/dnnl", "tec/oblas");
  printf(o->vs ? " %9s %8s\n" : "\n", "vs ms", "tec/vs");
}

static void print_row(const opts *o, int nimpl, int64_t n, int t, const double *med,
                      FILE *csv) {
  double flops = 2.0 * (double)n * (double)n * (double)n;
  for (int impl = 0; csv && impl < nimpl; impl++)
    fprintf(csv, "gemm%lld,%d,%s,%.4f,%.2f\n", (long long)n, t, impl_name[impl],
            med[impl] * 1e3, flops / med[impl] * 1e-9);
  char wl[32];
  snprintf(wl, sizeof wl, "gemm%lld", (long long)n);
  printf("%-10s %3d  %9.3f %9.3f %9.3f  %7.1f %7.1f %7.1f  %7.2fx %7.2fx", wl, t,
         med[IMPL_TEC] * 1e3, med[IMPL_DNNL] * 1e3, med[IMPL_OPENBLAS] * 1e3,
         flops / med[IMPL_TEC] * 1e-9, flops / med[IMPL_DNNL] * 1e-9,
         flops / med[IMPL_OPENBLAS] * 1e-9, med[IMPL_DNNL] / med[IMPL_TEC],
         med[IMPL_OPENBLAS] / med[IMPL_TEC]);
  if (o->vs) printf(" %9.3f %7.2fx", med[IMPL_TEC_VS] * 1e3, med[IMPL_TEC_VS] / med[IMPL_TEC]);
  printf("\n");
  fflush(stdout);
}

/* --rounds R > 1: each ratio's spread over the rounds, min / median / max */
static void print_spread(const opts *o, int nimpl, double ratio[][16][8][3]) {
  static const char *const what[3] = {"tec/dnnl", "tec/oblas", "tec/vs"};
  printf("\nover %d rounds, min / median / max:\n%-10s %3s", o->rounds, "workload", "thr");
  for (int w = 0; w < nimpl - 1; w++) printf("  %20s", what[w]);
  printf("\n");
  for (int si = 0; si < o->nsizes; si++)
    for (int ti = 0; ti < o->nthreads; ti++) {
      char wl[32];
      snprintf(wl, sizeof wl, "gemm%d", o->sizes[si]);
      printf("%-10s %3d", wl, o->threads[ti]);
      for (int w = 0; w < nimpl - 1; w++) {
        double v[100];
        for (int r = 0; r < o->rounds; r++) v[r] = ratio[r][si][ti][w];
        bench_sort(v, o->rounds);
        int h = o->rounds / 2;
        double mid = o->rounds % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
        printf("  %6.2f %6.2f %6.2f", v[0], mid, v[o->rounds - 1]);
      }
      printf("\n");
    }
}

/* The one place the libraries' environment is set (bench/run only execs this program). It is
 * read when the libraries load, so the process re-executes itself once with it:
 * - OPENBLAS_CORETYPE=SkylakeX and no OPENBLAS_L2_SIZE: OpenBLAS picks its kernel when loaded,
 *   and this environment forces Haswell, which leaves AVX-512 unused on
 *   these AVX-512 machines (Zen 5, Xeon);
 * - OPENBLAS_THREAD_TIMEOUT=4 and GOMP_SPINCOUNT=2000 (unless already set): idle worker threads
 *   stop spinning soon after a call, or they take a core from the next implementation in the
 *   round-robin (OpenBLAS spins 2^28 cycles by default, GNU OpenMP 300000 pauses). 2000 pauses
 *   is what tec's own workers spin (RT_SPIN, runtime/parallel.c): the same budget for both. */
static void reexec_for_openblas(char **argv) {
  const char *ct = getenv("OPENBLAS_CORETYPE");
  if (ct && !strcmp(ct, "SkylakeX") && !getenv("OPENBLAS_L2_SIZE") &&
      getenv("OPENBLAS_THREAD_TIMEOUT") && getenv("GOMP_SPINCOUNT"))
    return;
  if (getenv("TEC_BENCH_REEXEC")) return; /* once only */
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  unsetenv("OPENBLAS_L2_SIZE");
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  setenv("GOMP_SPINCOUNT", "2000", 0); /* = tec's RT_SPIN */
  setenv("TEC_BENCH_REEXEC", "1", 1);
  execv("/proc/self/exe", argv);
  fprintf(stderr, "gemm: re-exec with OPENBLAS_CORETYPE=SkylakeX failed: %s\n", strerror(errno));
}

int main(int argc, char **argv) {
  reexec_for_openblas(argv);
  opts o;
  if (parse_opts(argc, argv, &o)) {
    fprintf(stderr,
            "usage: gemm [--csv FILE] [--sizes 256,512,...] [--threads 1,2] [--reps N] [--rounds 1]\n"
            "            [--stat median|min] [--clock wall|cpu] [--print-ir] [--asm FILE]\n"
            "            [--mr N] [--nr N] [--ku N] [--jb N] [--parallel 0|1|2]\n"
            "            [--pack root|panel|none]  (topi dense's knobs; default: its config)\n"
            "            [--vs 'SCHEDULE OPTIONS']  (a second tec schedule, same run)\n");
    return 2;
  }
  opts vs = o; /* the --vs schedule (read only when --vs is given) */
  if (o.vs && parse_vs(&o, &vs)) {
    fprintf(stderr, "gemm: bad --vs '%s'\n", o.vs);
    return 2;
  }
  int nimpl = o.vs ? NIMPL : IMPL_TEC_VS; /* tec-vs only with --vs */
  if (o.cpu_clock) bench_clock = CLOCK_PROCESS_CPUTIME_ID;
  FILE *csv = NULL;
  if (o.csv_path) {
    csv = fopen(o.csv_path, "w");
    if (!csv) {
      fprintf(stderr, "gemm: cannot write %s: %s\n", o.csv_path, strerror(errno));
      return 1;
    }
    fprintf(csv, "workload,threads,impl,%s_ms,gflops\n", o.stat_min ? "min" : "median");
  }
  printf("OpenBLAS core: %s (config: %s)\n", openblas_get_corename(), openblas_get_config());
  const dnnl_version_t *dv = dnnl_version();
  printf("oneDNN %d.%d.%d (cpu runtime %s)\n", dv->major, dv->minor, dv->patch,
         dv->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other");
  printf("tec: topi dense; reps>=%d, %s of %s time, ratio = other/tec time\n", o.reps,
         o.stat_min ? "minimum" : "medians", o.cpu_clock ? "process CPU" : "wall-clock");
  if (o.vs) printf("tec-vs: '%s' on top of tec's options; tec/vs = vs time / tec time\n", o.vs);

  /* every size's buffers and modules first (JIT once per size), then the rounds */
  problem probs[16];
  tec_ctx *ctxs[16];
  for (int si = 0; si < o.nsizes; si++) {
    int64_t n = o.sizes[si];
    problem *p = &probs[si];
    ctxs[si] = tec_ctx_new();
    *p = (problem){.n = n};
    int64_t shape[2] = {n, n};
    if (!ctxs[si] || tec_dl_alloc(&p->ta, TEC_F32, 2, shape) ||
        tec_dl_alloc(&p->tb, TEC_F32, 2, shape) || tec_dl_alloc(&p->tc, TEC_F32, 2, shape)) {
      fprintf(stderr, "gemm: %s\n", tec_rt_last_error());
      return 1;
    }
    p->a = p->ta.data, p->b = p->tb.data, p->c = p->tc.data;
    unsigned seed = 12345;
    for (int64_t i = 0; i < n * n; i++) {
      seed = seed * 1103515245u + 12345u;
      p->a[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
      seed = seed * 1103515245u + 12345u;
      p->b[i] = (float)((seed >> 9) & 0xffff) / 65536.0f - 0.5f;
    }
    const char *cfg = "", *cfg_vs = "";
    if (!tec_gemm_build(ctxs[si], n, &o, &p->tec, &cfg) ||
        (o.vs && !tec_gemm_build(ctxs[si], n, &vs, &p->tec_vs, &cfg_vs))) {
      fprintf(stderr, "gemm: tec for %lld: %s\n", (long long)n,
              tec_ctx_error(ctxs[si]) ? tec_ctx_error(ctxs[si]) : "(see above)");
      return 1;
    }
    printf("tec config for %lld: %s (pack: 0 root, 1 panel, 2 none)%s%s\n", (long long)n, cfg,
           o.vs ? "; tec-vs: " : "", cfg_vs);
    o.print_ir = 0, o.asm_path = NULL; /* only for the first size */
  }
  /* ratio[round][size][threads]: tec/oneDNN, tec/OpenBLAS, tec/vs speed ratios */
  static double ratio[100][16][8][3];
  int status = 0;
  for (int round = 0; round < o.rounds; round++) {
    printf("\n");
    if (o.rounds > 1) printf("round %d of %d\n", round + 1, o.rounds);
    print_header(&o);
    for (int si = 0; si < o.nsizes; si++)
      for (int ti = 0; ti < o.nthreads; ti++) {
        double med[NIMPL];
        int rc = measure(&probs[si], &o, nimpl, o.threads[ti], round == 0, med);
        if (rc < 0) return 1; /* a call failed: its message is above */
        status |= rc;
        print_row(&o, nimpl, probs[si].n, o.threads[ti], med, csv);
        ratio[round][si][ti][0] = med[IMPL_DNNL] / med[IMPL_TEC];
        ratio[round][si][ti][1] = med[IMPL_OPENBLAS] / med[IMPL_TEC];
        ratio[round][si][ti][2] = o.vs ? med[IMPL_TEC_VS] / med[IMPL_TEC] : 0;
      }
  }
  if (o.rounds > 1) print_spread(&o, nimpl, ratio);
  for (int si = 0; si < o.nsizes; si++) {
    tec_dl_free(&probs[si].ta), tec_dl_free(&probs[si].tb), tec_dl_free(&probs[si].tc);
    free(probs[si].ref);
    tec_ctx_free(ctxs[si]);
  }
  if (csv) fclose(csv);
  return status;
}

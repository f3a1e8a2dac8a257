/* auto_quick.c — the auto-scheduler's instant mode (tec_autoschedule) against the naive loop
 * nest of the same program and, for GEMM and a ResNet 3x3 layer, against tec's templates
 * (topi "dense" and "conv2d_nchwc" at their default configs). Per program: tec's scheduling
 * time, LLVM's build time, and the median per-call CPU time over interleaved rounds (naive,
 * auto, template, naive, auto, ...), then the ratios. The auto-scheduled output is checked
 * against the naive one.
 *
 *   TEC_NUM_THREADS=1 ./auto_quick [rounds (5)] [full | small] [programs]
 * small: tiny sizes, a check (ctest runs it); programs: a comma list of gemm, conv, dw, blur,
 * softmax, chain (default all); AUTO_QUICK_REPORT=1 prints each report and schedule.
 * The tuned mode too: AUTO_QUICK_RECORDS=DIR adds a "tuned" variant (tec_autoschedule_tuned with
 * DIR/<program>.jsonl); when that file does not exist yet and AUTO_QUICK_TUNE=N, the program is
 * tuned first (tune_task_auto, N trials of the cost-model tuner; its time printed;
 * AUTO_QUICK_MIN_REPEAT_MS=MS: each timed cost lasts MS, anchored by the instant schedule).
 *
 * Programs: GEMM 1024 (Halide's GEMM), ResNet conv 128x28x28 3x3 (NCHW, padding a stage),
 * depthwise 3x3 32x112x112, 3x3 blur 2160x3840 (two stages), softmax rows 4096x4096, a
 * 30-stage chain of element-wise steps and 3-point stencils at 1536x2560. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "example_args.h"
#include "tec/tec.h"

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmp_d);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}
static void die(tec_ctx *ctx, const char *what) {
  fprintf(stderr, "auto_quick: %s: %s\n", what, ctx ? tec_ctx_error(ctx) : tec_rt_last_error());
  exit(1);
}

/* ---- the programs (plain declarations, no schedule) ---- */
typedef struct prog {
  const char *name;
  int nin;
  te_tensor *in[4], *out;
  const char *tmpl;      /* a template to compare with, or NULL */
  const void *problem;
} prog;

typedef struct U {
  te_tensor *a, *b, *c;
  const ir_expr *r[3];
  int64_t h, w;
  int kind;
} U;

static U *dup_u(tec_ctx *ctx, U u) {
  U *p = tec_ctx_alloc(ctx, sizeof *p);
  *p = u;
  return p;
}
static te_tensor *comp(tec_ctx *ctx, const char *name, int nd, const ir_expr *const *shape,
                       te_body_fn body, U *u) {
  te_tensor *t = te_compute(
      ctx, &(te_compute_decl){.name = name, .ndim = nd, .shape = shape, .body = body, .user = u});
  if (!t) die(ctx, name);
  return t;
}

static const ir_expr *mm(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return TE_SUM(ir_mul(TE_AT(u->a, i[0], u->r[0]), TE_AT(u->b, u->r[0], i[1])), u->r[0]);
}
static prog gemm(tec_ctx *ctx, int64_t n) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, n, n));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, n, n));
  U *u = dup_u(ctx, (U){.a = A, .b = B, .r = {te_reduce_axis_n(ctx, "k", n)}});
  topi_dense *d = tec_ctx_alloc(ctx, sizeof *d);
  *d = (topi_dense){.m = n, .n = n, .k = n};
  return (prog){tec_ctx_printf(ctx, "gemm %lld", (long long)n), 2, {A, B},
                comp(ctx, "C", 2, TE_SHAPE(ctx, n, n), mm, u), "dense", d};
}

static const ir_expr *pad_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  int nd = u->a->ndim;
  const ir_expr *y = i[nd - 2], *x = i[nd - 1], *one = ir_int(ctx, 1);
  const ir_expr *in = ir_and(ir_and(ir_ge(y, one), ir_le(y, ir_int(ctx, u->h))),
                             ir_and(ir_ge(x, one), ir_le(x, ir_int(ctx, u->w))));
  const ir_expr *idx[4];
  for (int d = 0; d < nd - 2; d++) idx[d] = i[d];
  idx[nd - 2] = ir_sub(y, one);
  idx[nd - 1] = ir_sub(x, one);
  return ir_select(in, te_read(u->a, nd, idx), ir_float(ctx, 0));
}
static const ir_expr *conv_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return TE_SUM(ir_mul(TE_AT(u->a, i[0], u->r[0], ir_add(i[2], u->r[1]), ir_add(i[3], u->r[2])),
                       TE_AT(u->b, i[1], u->r[0], u->r[1], u->r[2])),
                u->r[0], u->r[1], u->r[2]);
}
static prog conv(tec_ctx *ctx, int64_t c, int64_t k, int64_t h) {
  te_tensor *X = te_placeholder(ctx, "data", TEC_F32, 4, TE_SHAPE(ctx, 1, c, h, h));
  te_tensor *W = te_const_placeholder(ctx, "weight", TEC_F32, 4, TE_SHAPE(ctx, k, c, 3, 3));
  te_tensor *P = comp(ctx, "pad", 4, TE_SHAPE(ctx, 1, c, h + 2, h + 2), pad_b,
                      dup_u(ctx, (U){.a = X, .h = h, .w = h}));
  U *u = dup_u(ctx, (U){.a = P, .b = W,
                        .r = {te_reduce_axis_n(ctx, "rc", c), te_reduce_axis_n(ctx, "ry", 3),
                              te_reduce_axis_n(ctx, "rx", 3)}});
  topi_conv2d *q = tec_ctx_alloc(ctx, sizeof *q);
  *q = (topi_conv2d){.n = 1, .c_in = c, .h = h, .w = h, .c_out = k, .kh = 3, .kw = 3,
                     .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1, .groups = 1,
                     .in_layout = {TOPI_NCHWC, 16, 0}, .out_layout = {TOPI_NCHWC, 16, 0}};
  return (prog){tec_ctx_printf(ctx, "conv %lldx%lldx%lld 3x3", (long long)c, (long long)h,
                               (long long)h),
                2, {X, W}, comp(ctx, "conv", 4, TE_SHAPE(ctx, 1, k, h, h), conv_b, u),
                "conv2d_nchwc", q};
}

static const ir_expr *dw_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return TE_SUM(ir_mul(TE_AT(u->a, i[0], ir_add(i[1], u->r[0]), ir_add(i[2], u->r[1])),
                       TE_AT(u->b, i[0], u->r[0], u->r[1])),
                u->r[0], u->r[1]);
}
static prog depthwise(tec_ctx *ctx, int64_t c, int64_t h) {
  te_tensor *X = te_placeholder(ctx, "data", TEC_F32, 3, TE_SHAPE(ctx, c, h, h));
  te_tensor *W = te_const_placeholder(ctx, "weight", TEC_F32, 3, TE_SHAPE(ctx, c, 3, 3));
  te_tensor *P = comp(ctx, "pad", 3, TE_SHAPE(ctx, c, h + 2, h + 2), pad_b,
                      dup_u(ctx, (U){.a = X, .h = h, .w = h}));
  U *u = dup_u(ctx, (U){.a = P, .b = W,
                        .r = {te_reduce_axis_n(ctx, "ry", 3), te_reduce_axis_n(ctx, "rx", 3)}});
  return (prog){tec_ctx_printf(ctx, "depthwise %lldx%lldx%lld", (long long)c, (long long)h,
                               (long long)h),
                2, {X, W}, comp(ctx, "dw", 3, TE_SHAPE(ctx, c, h, h), dw_b, u), NULL, NULL};
}

/* 3-point stencils along rows (kind 1) or columns (kind 2), element-wise steps (kind 0) */
static const ir_expr *step_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *one = ir_int(ctx, 1), *two = ir_int(ctx, 2), *third = ir_float(ctx, 1.0 / 3);
  if (u->kind == 1)
    return ir_mul(ir_add(ir_add(TE_AT(u->a, i[0], i[1]), TE_AT(u->a, ir_add(i[0], one), i[1])),
                         TE_AT(u->a, ir_add(i[0], two), i[1])),
                  third);
  if (u->kind == 2)
    return ir_mul(ir_add(ir_add(TE_AT(u->a, i[0], i[1]), TE_AT(u->a, i[0], ir_add(i[1], one))),
                         TE_AT(u->a, i[0], ir_add(i[1], two))),
                  third);
  const ir_expr *x = TE_AT(u->a, i[0], i[1]);
  return ir_max(ir_sub(ir_mul(x, ir_float(ctx, 0.9)), ir_float(ctx, 0.01)), ir_float(ctx, -2));
}
static prog blur(tec_ctx *ctx, int64_t h, int64_t w) {
  te_tensor *in = te_placeholder(ctx, "in", TEC_F32, 2, TE_SHAPE(ctx, h + 2, w + 2));
  te_tensor *bx = comp(ctx, "blur_x", 2, TE_SHAPE(ctx, h + 2, w), step_b,
                       dup_u(ctx, (U){.a = in, .kind = 2}));
  return (prog){tec_ctx_printf(ctx, "blur %lldx%lld", (long long)h, (long long)w), 1, {in},
                comp(ctx, "blur_y", 2, TE_SHAPE(ctx, h, w), step_b,
                     dup_u(ctx, (U){.a = bx, .kind = 1})),
                NULL, NULL};
}
static prog chain(tec_ctx *ctx, int64_t h, int64_t w) {
  te_tensor *in = te_placeholder(ctx, "in", TEC_F32, 2, TE_SHAPE(ctx, h, w)), *cur = in;
  for (int k = 0; k < 30; k++) {
    int kind = k % 3 == 2 ? 1 + (k / 3) % 2 : 0;
    h -= kind == 1 ? 2 : 0;
    w -= kind == 2 ? 2 : 0;
    cur = comp(ctx, tec_ctx_printf(ctx, "s%d", k), 2, TE_SHAPE(ctx, h, w), step_b,
               dup_u(ctx, (U){.a = cur, .kind = kind}));
  }
  return (prog){"chain of 30 stages", 1, {in}, cur, NULL, NULL};
}

static const ir_expr *smax_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return TE_MAX(TE_AT(u->a, i[0], u->r[0]), u->r[0]);
}
static const ir_expr *sexp_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return ir_exp(ir_sub(TE_AT(u->a, i[0], i[1]), TE_AT(u->b, i[0])));
}
static const ir_expr *ssum_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return TE_SUM(TE_AT(u->a, i[0], u->r[0]), u->r[0]);
}
static const ir_expr *sdiv_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return ir_div(TE_AT(u->a, i[0], i[1]), TE_AT(u->b, i[0]));
}
static prog softmax(tec_ctx *ctx, int64_t m, int64_t n) {
  te_tensor *x = te_placeholder(ctx, "x", TEC_F32, 2, TE_SHAPE(ctx, m, n));
  const ir_expr *k = te_reduce_axis_n(ctx, "k", n);
  te_tensor *mx = comp(ctx, "max", 1, TE_SHAPE(ctx, m), smax_b, dup_u(ctx, (U){.a = x, .r = {k}}));
  te_tensor *e = comp(ctx, "exp", 2, TE_SHAPE(ctx, m, n), sexp_b, dup_u(ctx, (U){.a = x, .b = mx}));
  te_tensor *s = comp(ctx, "sum", 1, TE_SHAPE(ctx, m), ssum_b, dup_u(ctx, (U){.a = e, .r = {k}}));
  return (prog){tec_ctx_printf(ctx, "softmax %lldx%lld", (long long)m, (long long)n), 1, {x},
                comp(ctx, "softmax", 2, TE_SHAPE(ctx, m, n), sdiv_b,
                     dup_u(ctx, (U){.a = e, .b = s})),
                NULL, NULL};
}

/* ---- building and timing ---- */
typedef struct variant {
  const char *what;
  tec_module *m;
  const char *fname;
  int nargs;
  DLTensor *args[8];
  DLTensor *out;
  double times[64];
} variant;

static void alloc_args(tec_ctx *ctx, variant *v, int nargs, te_tensor *const *ts) {
  v->nargs = nargs;
  for (int a = 0; a < nargs; a++) {
    const te_tensor *t = ts[a];
    int64_t shape[8];
    for (int d = 0; d < t->ndim; d++) ir_is_const_int(te_buffer_shape(t)[d], &shape[d]);
    DLTensor *dl = calloc(1, sizeof *dl);
    if (tec_dl_alloc(dl, TEC_F32, t->ndim, shape)) die(NULL, "alloc");
    int64_t n = tec_dl_numel(dl);
    unsigned s = 12345u + (unsigned)a * 777u;
    float *p = dl->data;
    for (int64_t i = 0; i < n; i++) {
      s = s * 1664525u + 1013904223u;
      p[i] = a == nargs - 1 ? 0.0f : (float)((s >> 8) % 20000) / 10000.0f - 1.0f;
    }
    v->args[a] = dl;
  }
  v->out = v->args[nargs - 1];
  (void)ctx;
}

static void build(tec_ctx *ctx, variant *v, sch_schedule *s, const char *fname, int nargs,
                  te_tensor *const *args, double *llvm_s) {
  lower_func *f = tec_lower(s, fname, nargs, args);
  if (!f) die(ctx, fname);
  const char *r = getenv("AUTO_QUICK_REPORT");
  if (r && !strcmp(r, "2")) tec_lower_print(stdout, f);
  double t0 = wall_now();
  v->m = tec_build(ctx, 1, &f, NULL);
  if (llvm_s) *llvm_s = wall_now() - t0;
  if (!v->m) die(ctx, fname);
  v->fname = fname;
  alloc_args(ctx, v, nargs, args);
  if (tec_module_run(v->m, fname, v->nargs, v->args)) die(NULL, fname); /* prepare, warm */
}

static double run_once(variant *v) {
  double t0 = cpu_now();
  if (tec_module_run(v->m, v->fname, v->nargs, v->args)) die(NULL, v->fname);
  return cpu_now() - t0;
}

static void bench(prog (*make)(tec_ctx *, int64_t, int64_t), int64_t a, int64_t b, int rounds,
                  int small, int *failures) {
  tec_ctx *ctx = tec_ctx_new();
  prog g = make(ctx, a, b);
  te_tensor *args[6];
  int nargs = 0;
  for (int i = 0; i < g.nin; i++) args[nargs++] = g.in[i];
  args[nargs++] = g.out;
  variant v[4] = {{.what = "naive"}, {.what = "auto"}, {.what = "template"}, {.what = "tuned"}};
  int nv = 2, tuned = 0;
  build(ctx, &v[0], sch_create(ctx, 1, &g.out), "naive", nargs, args, NULL);
  sch_schedule *s = sch_create(ctx, 1, &g.out);
  tec_autosched_report rep;
  if (tec_autoschedule(s, NULL, NULL, &rep)) die(ctx, "tec_autoschedule");
  double llvm_s = 0;
  build(ctx, &v[1], s, "autos", nargs, args, &llvm_s);
  if (g.tmpl && !small) {
    const topi_template *t = topi_template_find(g.tmpl);
    topi_op op;
    if (!t || topi_instantiate(ctx, t, g.problem, NULL, &op)) die(ctx, g.tmpl);
    build(ctx, &v[2], op.sched, "tmpl", op.nargs, op.args, NULL);
    nv = 3;
  }
  const char *dir = getenv("AUTO_QUICK_RECORDS");
  if (dir && !small) { /* the tuned mode: tuned here unless its records exist */
    const char *path = tec_ctx_printf(ctx, "%s/%.*s.jsonl", dir, (int)strcspn(g.name, " "), g.name);
    const char *trials = getenv("AUTO_QUICK_TUNE");
    FILE *exists = fopen(path, "r");
    if (exists) fclose(exists);
    if (!exists && trials && atoi(trials) > 0) {
      tune_task task;
      if (tune_task_auto(sch_create(ctx, 1, &g.out), NULL, NULL, &task)) die(ctx, "tune_task_auto");
      tune_options o = tune_options_default();
      o.trials = atoi(trials), o.tuner = tune_have_xgb() ? "xgb" : "random", o.records = path;
      o.progress = 1;
      const char *mr = getenv("AUTO_QUICK_MIN_REPEAT_MS"); /* > 0: anchored trials */
      if (mr && atof(mr) > 0) o.min_repeat_ms = atof(mr);
      tune_result r;
      double t0 = wall_now();
      if (tune_run(ctx, &task, &o, &r)) die(ctx, "tune_run");
      printf("%-28s tuned %d trials in %.0f s (%s)\n", g.name, r.ntrials, wall_now() - t0, path);
      tune_result_free(&r);
    }
    sch_schedule *st = sch_create(ctx, 1, &g.out);
    tec_autosched_report tr;
    if (tec_autoschedule_tuned(st, NULL, NULL, path, &tr)) die(ctx, "tec_autoschedule_tuned");
    if (tr.warning) printf("%s\n", tr.warning);
    if (getenv("AUTO_QUICK_REPORT")) printf("tuned: %s\n%s%s\n", tr.config, tr.text, tr.trace_c);
    build(ctx, &v[3], st, "tuned", nargs, args, NULL);
    if (nv == 2) v[2] = v[3], nv = 3; /* no template: the tuned variant in its place */
    else nv = 4;
    tuned = 1;
  }
  /* the auto schedule computes what the naive nest does */
  int64_t n = tec_dl_numel(v[0].out);
  double err = 0;
  for (int64_t i = 0; i < n; i++) {
    float x = ((float *)v[1].out->data)[i], y = ((float *)v[0].out->data)[i];
    double e = fabs((double)x - y) / (1.0 + fabs((double)y));
    if (!(e <= err)) err = e;
  }
  if (tuned) { /* the tuned output too */
    const variant *t = &v[nv == 4 ? 3 : 2];
    for (int64_t i = 0; i < n; i++) {
      float x = ((float *)t->out->data)[i], y = ((float *)v[0].out->data)[i];
      double e = fabs((double)x - y) / (1.0 + fabs((double)y));
      if (!(e <= err)) err = e;
    }
  }
  if (!(err < 1e-3)) ++*failures;
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < nv; k++) v[k].times[r] = run_once(&v[k]);
  double med[4], lo[4], hi[4];
  for (int k = 0; k < nv; k++) {
    med[k] = median(v[k].times, rounds); /* sorts */
    lo[k] = v[k].times[0], hi[k] = v[k].times[rounds - 1];
  }
  printf("%-28s naive %9.3f ms  auto %8.3f ms", g.name, 1e3 * med[0], 1e3 * med[1]);
  for (int k = 2; k < nv; k++) printf("  %s %7.3f ms", v[k].what, 1e3 * med[k]);
  printf("  | naive/auto %6.1fx", med[0] / med[1]);
  if (nv >= 3 && !strcmp(v[2].what, "template")) printf("  auto/template %5.2fx", med[1] / med[2]);
  if (tuned) {
    int t = nv == 4 ? 3 : 2;
    printf("  auto/tuned %5.2fx", med[1] / med[t]);
    if (nv == 4) printf("  tuned/template %5.2fx", med[3] / med[2]);
  }
  if (getenv("AUTO_QUICK_SPREAD"))
    for (int k = 0; k < nv; k++) printf("\n    %-8s min %.3f max %.3f ms", v[k].what, 1e3 * lo[k], 1e3 * hi[k]);
  printf("  | schedule %.1f ms, LLVM %.0f ms, err %.1e%s\n", 1e3 * rep.seconds, 1e3 * llvm_s,
         err, err < 1e-3 ? "" : "  WRONG");
  if (getenv("AUTO_QUICK_REPORT")) printf("%s%s\n", rep.text, rep.trace_c);
  for (int k = 0; k < nv; k++) {
    for (int i = 0; i < v[k].nargs; i++) tec_dl_free(v[k].args[i]), free(v[k].args[i]);
    tec_module_free(v[k].m);
  }
  tec_ctx_free(ctx);
}

static prog gemm2(tec_ctx *c, int64_t n, int64_t u) { (void)u; return gemm(c, n); }
static prog conv2(tec_ctx *c, int64_t ch, int64_t h) { return conv(c, ch, ch, h); }

int main(int argc, char **argv) {
  int64_t rounds64 = 5;
  const char *size = "full", *only = "gemm,conv,dw,blur,softmax,chain";
  ex_opt opts[] = {{"rounds", EX_INT, &rounds64, 1, 64, "interleaved timing rounds"},
                   {"size", EX_WORD, &size, 0, 0, "full (the bench's sizes) or small (a quick check)"},
                   {"only", EX_WORD, &only, 0, 0, "a comma list of gemm, conv, dw, blur, softmax, chain"}};
  int rc = ex_args_parse("The auto-scheduler's instant mode on six programs nobody wrote a template for, checked "
                         "against the naive nest and timed beside it.", argc, argv, opts, 3);
  if (rc) return rc == 1 ? 0 : 2;
  if (strcmp(size, "full") && strcmp(size, "small")) {
    fprintf(stderr, "auto_quick: --size is full or small, got '%s'\n", size);
    return 2;
  }
  int rounds = (int)rounds64, small = !strcmp(size, "small");
  printf("threads %d, rounds %d, per-call CPU time (median)\n", tec_rt_get_num_threads(), rounds);
  int failures = 0;
#define WANT(name) (strstr(only, name) != NULL)
  if (WANT("gemm")) bench(gemm2, small ? 67 : 1024, 0, rounds, small, &failures);
  if (WANT("conv")) bench(conv2, small ? 16 : 128, small ? 9 : 28, rounds, small, &failures);
  if (WANT("dw")) bench(depthwise, small ? 8 : 32, small ? 13 : 112, rounds, small, &failures);
  if (WANT("blur")) bench(blur, small ? 30 : 2160, small ? 41 : 3840, rounds, small, &failures);
  if (WANT("softmax"))
    bench(softmax, small ? 9 : 4096, small ? 50 : 4096, rounds, small, &failures);
  if (WANT("chain")) bench(chain, small ? 80 : 1536, small ? 90 : 2560, rounds, small, &failures);
  if (failures) fprintf(stderr, "auto_quick: %d program(s) disagree with the naive nest\n", failures);
  return failures != 0;
}

/* fused.c — MobileNet v1's depthwise + pointwise blocks: the two layers as two calls
 * (depthwise_nchwc then conv2d_nchwc, each at its default config, the intermediate in a buffer
 * between them) against the dw_pw_fused template, unfused (fused=0: both nests in one
 * function) and fused per tile of R output rows, in one run. tec only (no other library).
 *
 *   usage: printed by main() on a bad option
 *
 * Per block: data and weights seeded random, NCHW16c (the host's vector width), bias + ReLU on
 * both convolutions. Per (thread count, block): each variant called once and its output
 * compared with the two calls' (max |a - b| / (1 + |b|), limit 1e-5: the same arithmetic in
 * the same order), warmed up twice, then timed round-robin (pair, variant 1, variant 2, ...)
 * for about TIME_BUDGET seconds, at least --reps calls each; medians. The variants: the
 * template's default config, fused=0, and each R of --rows (R: fused=R with the pointwise's
 * register tile that conv2d_nchwc's space picks for an R-row problem). `pair/x` columns are
 * speed ratios against the two calls: above 1 the variant is faster.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common.h"
#include "tec/tec.h"
#include "tec/topi.h"

#define TIME_BUDGET 0.6
#define MAX_REPS 3000
#define MAX_VAR 8

/* MobileNet v1's dw + pw pairs (224x224): the depthwise's input and the pointwise's output */
static const struct {
  const char *name;
  int count;
  int64_t c, h, w, stride, c_out;
} blocks[] = {
    {"mb01+02", 1, 32, 112, 112, 1, 64},   {"mb03+04", 1, 64, 112, 112, 2, 128},
    {"mb05+06", 1, 128, 56, 56, 1, 128},   {"mb07+08", 1, 128, 56, 56, 2, 256},
    {"mb09+10", 1, 256, 28, 28, 1, 256},   {"mb11+12", 1, 256, 28, 28, 2, 512},
    {"mb13+14", 5, 512, 14, 14, 1, 512},   {"mb23+24", 1, 512, 14, 14, 2, 1024},
    {"mb25+26", 1, 1024, 7, 7, 1, 1024},
};
#define NBLOCKS ((int)(sizeof blocks / sizeof blocks[0]))

typedef struct variant {
  char label[32];
  tec_module *m;
  DLTensor out;
} variant;

typedef struct bcase {
  tec_ctx *ctx;
  topi_dw_pw p;
  DLTensor x, wd, bd, wp, bp, mid, out; /* the pair: x -> mid -> out */
  tec_module *mdw, *mpw;
  int nvar;
  variant v[MAX_VAR];
} bcase;

static int fail(tec_ctx *ctx, const char *what) {
  fprintf(stderr, "fused: %s: %s\n", what, ctx ? tec_ctx_error(ctx) : tec_rt_last_error());
  return -1;
}

static tec_module *build(tec_ctx *ctx, const topi_template *t, const void *prob, const void *cfg,
                         tune_space *sp_out) {
  topi_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  tune_space sp;
  topi_op op;
  if (!d || t->declare(ctx, prob, d) || t->space(ctx, prob, NULL, &sp) ||
      t->schedule(d, cfg ? cfg : sp.default_config, NULL, &op))
    return NULL;
  if (sp_out) *sp_out = sp;
  lower_func *f = tec_lower(op.sched, t->name, op.nargs, op.args);
  return f ? tec_build(ctx, 1, &f, NULL) : NULL;
}

static int alloc5(DLTensor *t, int64_t c, int64_t h, int64_t w, int64_t b) {
  int64_t s[5] = {1, (c + b - 1) / b, h, w, b};
  if (tec_dl_alloc(t, TEC_F32, 5, s)) return -1;
  memset(t->data, 0, sizeof(float) * (size_t)tec_dl_numel(t));
  return 0;
}

static void fill(DLTensor *t, unsigned seed) {
  float *f = t->data;
  for (int64_t i = 0; i < tec_dl_numel(t); i++) {
    seed = seed * 1103515245u + 12345u;
    f[i] = (float)((seed >> 9) & 0xffff) / 32768.0f - 1.0f;
  }
}

/* The two calls; the seconds of each into t[0], t[1] when t is not NULL. */
static int run_pair(bcase *c, double *t) {
  DLTensor *a1[4] = {&c->x, &c->wd, &c->bd, &c->mid}, *a2[4] = {&c->mid, &c->wp, &c->bp, &c->out};
  double t0 = bench_now(CLOCK_MONOTONIC);
  if (tec_module_run(c->mdw, "depthwise_nchwc", 4, a1)) return -1;
  double t1 = bench_now(CLOCK_MONOTONIC);
  if (tec_module_run(c->mpw, "conv2d_nchwc", 4, a2)) return -1;
  if (t) t[0] = t1 - t0, t[1] = bench_now(CLOCK_MONOTONIC) - t1;
  return 0;
}

static int run_var(bcase *c, int i) {
  DLTensor *a[6] = {&c->x, &c->wd, &c->bd, &c->wp, &c->bp, &c->v[i].out};
  return tec_module_run(c->v[i].m, "dw_pw_fused", 6, a);
}

/* The pair, and the variants: default, fused=0, each of rows (skipping repeats and R that do
 * not divide the output height). */
static int setup(bcase *c, int bi, const int *rows, int nrows, int64_t block, int verbose) {
  const __typeof__(blocks[0]) *B = &blocks[bi];
  int64_t oh = (B->h + 2 - 3) / B->stride + 1, ow = (B->w + 2 - 3) / B->stride + 1;
  topi_layout l = {.kind = TOPI_NCHWC, .block = block};
  topi_epilogue e = {.bias = 1, .residual = 0, .act = TOPI_ACT_RELU};
  c->p.dw = (topi_conv2d){.n = 1, .c_in = B->c, .h = B->h, .w = B->w, .c_out = B->c, .kh = 3,
                          .kw = 3, .stride_h = B->stride, .stride_w = B->stride, .pad_h = 1,
                          .pad_w = 1, .groups = B->c, .in_layout = l, .out_layout = l, .epi = e};
  c->p.pw = (topi_conv2d){.n = 1, .c_in = B->c, .h = oh, .w = ow, .c_out = B->c_out, .kh = 1,
                          .kw = 1, .stride_h = 1, .stride_w = 1, .groups = 1, .in_layout = l,
                          .out_layout = l, .epi = e};
  if (!(c->ctx = tec_ctx_new())) return -1;
  int64_t swd[4] = {B->c, 1, 3, 3}, swp[4] = {B->c_out, B->c, 1, 1};
  if (alloc5(&c->x, B->c, B->h, B->w, block) || alloc5(&c->mid, B->c, oh, ow, block) ||
      alloc5(&c->out, B->c_out, oh, ow, block) || tec_dl_alloc(&c->wd, TEC_F32, 4, swd) ||
      tec_dl_alloc(&c->bd, TEC_F32, 1, &B->c) || tec_dl_alloc(&c->wp, TEC_F32, 4, swp) ||
      tec_dl_alloc(&c->bp, TEC_F32, 1, &B->c_out))
    return fail(NULL, "allocation");
  fill(&c->x, 1u + (unsigned)bi), fill(&c->wd, 2), fill(&c->bd, 3), fill(&c->wp, 4),
      fill(&c->bp, 5);
  float *x = c->x.data; /* the lanes past c are zero (NCHW16c's promise) */
  for (int64_t i = 0; B->c % block && i < tec_dl_numel(&c->x); i++)
    if ((i % block) + (i / (block * B->h * B->w) % ((B->c + block - 1) / block)) * block >= B->c)
      x[i] = 0;
  if (!(c->mdw = build(c->ctx, topi_template_find("depthwise_nchwc"), &c->p.dw, NULL, NULL)) ||
      !(c->mpw = build(c->ctx, topi_template_find("conv2d_nchwc"), &c->p.pw, NULL, NULL)))
    return fail(c->ctx, B->name);
  const topi_template *t = topi_template_find("dw_pw_fused");
  tune_space sp;
  if (t->space(c->ctx, &c->p, NULL, &sp)) return fail(c->ctx, B->name);
  const topi_dw_pw_fused_config *def = sp.default_config;
  int64_t want[MAX_VAR];
  int nw = 0;
  want[nw++] = -1; /* the default */
  if (def->fused != 0) want[nw++] = 0;
  for (int i = 0; i < nrows && nw < MAX_VAR; i++) {
    int dup = rows[i] == def->fused || (rows[i] && oh % rows[i]);
    for (int j = 1; j < nw; j++) dup |= want[j] == rows[i];
    if (!dup) want[nw++] = rows[i];
  }
  for (int i = 0; i < nw; i++) {
    variant *v = &c->v[c->nvar];
    topi_dw_pw_fused_config cfg = *def;
    if (want[i] >= 0) { /* fused = R, the pointwise's tile for an R-row (or the whole) problem */
      topi_conv2d tp = c->p.pw;
      tune_space ps;
      if (want[i] > 0) tp.h = want[i];
      if (topi_space_of(c->ctx, "conv2d_nchwc", &tp, NULL, &ps)) return fail(c->ctx, B->name);
      const topi_conv2d_nchwc_config *pd = ps.default_config;
      cfg.fused = want[i], cfg.ow_tile = pd->ow_tile, cfg.oc_tiles = pd->oc_tiles;
      cfg.ic_split = pd->ic_split, cfg.ic_unroll = pd->ic_unroll;
    }
    if (i == 0) snprintf(v->label, sizeof v->label, "def(%lld)", (long long)cfg.fused);
    else snprintf(v->label, sizeof v->label, "fused=%lld", (long long)cfg.fused);
    if (!(v->m = build(c->ctx, t, &c->p, &cfg, NULL))) return fail(c->ctx, B->name);
    if (verbose) printf("%s %s: %s\n", B->name, v->label, tune_config_str(c->ctx, &sp, &cfg));
    if (alloc5(&v->out, B->c_out, oh, ow, block)) return fail(NULL, "allocation");
    c->nvar++;
  }
  return 0;
}

/* --blocks: a block runs if its name contains one of the comma-separated words */
static int selected(const char *only, const char *name) {
  if (!only) return 1;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", only);
  for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
    if (strstr(name, t)) return 1;
  return 0;
}

static double stat(double *t, int n, int use_min) {
  if (!use_min) return bench_median(t, n);
  double m = t[0];
  for (int i = 1; i < n; i++) m = t[i] < m ? t[i] : m;
  return m;
}

int main(int argc, char **argv) {
  int threads[4] = {1, 2}, nthreads = 2, rows[16], nrows = 0, reps = 20, use_min = 0,
      verbose = 0;
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = v != NULL;
    if (!strcmp(a, "--verbose")) {
      verbose = 1;
      continue;
    }
    if (ok && !strcmp(a, "--stat")) ok = !strcmp(v, "min") || !strcmp(v, "median"), use_min = !strcmp(v, "min");
    else if (ok && !strcmp(a, "--threads")) ok = (nthreads = bench_parse_list(v, threads, 4, 1, 64)) > 0;
    else if (ok && !strcmp(a, "--rows")) ok = (nrows = bench_parse_list(v, rows, 16, 0, 512)) > 0;
    else if (ok && !strcmp(a, "--reps")) ok = (reps = atoi(v)) >= 5;
    else if (ok && !strcmp(a, "--blocks")) only = v;
    else ok = 0;
    if (!ok) {
      fprintf(stderr, "usage: fused [--threads 1,2] [--rows R,...] [--reps 20] [--blocks WORD,...]\n"
                      "             [--stat median|min] [--verbose]\n"
                      "  --stat: the median (default) or the fastest call of each\n"
                      "  --verbose: each variant's config\n"
                      "  --rows: also time fused=R for these R (output rows per tile; 0: unfused)\n"
                      "  --blocks: the blocks whose name contains one of the words (mb09,mb13)\n");
      return 2;
    }
    i++;
  }
  tec_ctx *hc = tec_ctx_new();
  int bits = tec_target_vector_bits(hc, NULL);
  tec_ctx_free(hc);
  int64_t block = bits >= 128 ? bits / 32 : 4;
  printf("dw + pw blocks of MobileNet v1, NCHW%lldc, bias + ReLU on both; %s, ms; pair/x: "
         "the two calls' time over x's (> 1: x faster)\n", (long long)block,
         use_min ? "fastest calls" : "medians");
  bcase cs[NBLOCKS];
  memset(cs, 0, sizeof cs);
  int status = 0;
  for (int ti = 0; ti < nthreads; ti++) {
    tec_rt_set_num_threads(threads[ti]);
    printf("\n%d thread%s\n", threads[ti], threads[ti] > 1 ? "s" : "");
    double tot_pair = 0, tot_def = 0;
    for (int bi = 0; bi < NBLOCKS; bi++) {
      if (!selected(only, blocks[bi].name)) continue;
      bcase *c = &cs[bi];
      if (!c->ctx && setup(c, bi, rows, nrows, block, verbose)) return 1;
      if (run_pair(c, NULL)) return fail(NULL, "pair"), 1;
      double est = 0, t0;
      for (int i = 0; i < c->nvar; i++) {
        if (run_var(c, i)) return fail(NULL, c->v[i].label), 1;
        double e = bench_max_err(c->v[i].out.data, c->out.data, tec_dl_numel(&c->out));
        if (!(e <= 1e-5)) {
          printf("CHECK FAILED: %s %s: max error %.3g against the two calls\n", blocks[bi].name,
                 c->v[i].label, e);
          status = 1;
        }
      }
      for (int w = 0; w < 2; w++) {
        t0 = bench_now(CLOCK_MONOTONIC);
        run_pair(c, NULL);
        for (int i = 0; i < c->nvar; i++) run_var(c, i);
        est = bench_now(CLOCK_MONOTONIC) - t0;
      }
      int n = est > 0 ? (int)(TIME_BUDGET / est) : reps;
      if (n < reps) n = reps;
      if (n > MAX_REPS) n = MAX_REPS;
      /* ts[0..n): the pair; then each variant's n; then the dw's and the pw's */
      double *ts = malloc(sizeof(double) * (size_t)(n * (MAX_VAR + 3)));
      if (!ts) return 1;
      double *tdw = ts + (size_t)(MAX_VAR + 1) * n, *tpw = tdw + n;
      for (int r = 0; r < n; r++) {
        double two[2];
        t0 = bench_now(CLOCK_MONOTONIC);
        run_pair(c, two);
        ts[r] = bench_now(CLOCK_MONOTONIC) - t0;
        tdw[r] = two[0], tpw[r] = two[1];
        for (int i = 0; i < c->nvar; i++) {
          t0 = bench_now(CLOCK_MONOTONIC);
          run_var(c, i);
          ts[(i + 1) * n + r] = bench_now(CLOCK_MONOTONIC) - t0;
        }
      }
      double pair = stat(ts, n, use_min);
      double pw = stat(tpw, n, use_min);
      printf("%-8s %4lldx%3lldx%-3lld s%lld >%4lld  pair %6.3f (dw %5.3f pw %5.3f, %3.0f GF/s)",
             blocks[bi].name, (long long)blocks[bi].c, (long long)blocks[bi].h,
             (long long)blocks[bi].w, (long long)blocks[bi].stride, (long long)blocks[bi].c_out,
             pair * 1e3, stat(tdw, n, use_min) * 1e3, pw * 1e3,
             topi_conv2d_flops(&c->p.pw) / pw * 1e-9);
      for (int i = 0; i < c->nvar; i++) {
        double m = stat(ts + (i + 1) * n, n, use_min);
        printf("  %s %7.3f (%.2fx)", c->v[i].label, m * 1e3, pair / m);
        if (i == 0) tot_pair += blocks[bi].count * pair, tot_def += blocks[bi].count * m;
      }
      printf("\n");
      fflush(stdout);
      free(ts);
    }
    printf("sum over the blocks run (x count): pair %.3f ms, template default %.3f ms (%.2fx)\n",
           tot_pair * 1e3, tot_def * 1e3, tot_def > 0 ? tot_pair / tot_def : 0);
  }
  for (int bi = 0; bi < NBLOCKS; bi++)
    if (cs[bi].ctx) {
      bcase *c = &cs[bi];
      tec_dl_free(&c->x), tec_dl_free(&c->wd), tec_dl_free(&c->bd), tec_dl_free(&c->wp);
      tec_dl_free(&c->bp), tec_dl_free(&c->mid), tec_dl_free(&c->out);
      for (int i = 0; i < c->nvar; i++) tec_dl_free(&c->v[i].out), tec_module_free(c->v[i].m);
      tec_module_free(c->mdw), tec_module_free(c->mpw);
      tec_ctx_free(c->ctx);
    }
  return status;
}

/* pw_dw.c — the measurement behind issue #39's choice for stride 2: MobileNet v1's pointwise
 * layers followed by a stride-2 depthwise, as two calls (conv2d_nchwc then depthwise_nchwc at
 * their defaults, the 4x larger intermediate in a buffer between them) against the two chained
 * in one loop nest: the depthwise declared on the pointwise's output and scheduled rows-outer
 * (topi_depthwise_nchwc_declare_on / _schedule_in, topi/internal.h), the pointwise computed per
 * tile of R depthwise output rows, 2R + 1 of its rows (the halo row is computed twice: tec has
 * no sliding window). tec only, 1 thread.
 *
 *   usage: printed by main() on a bad option
 *
 * Per block: data and weights seeded random, NCHW16c, bias + ReLU on both. Each fused variant
 * is checked against the two calls once (max |a - b| / (1 + |b|) <= 1e-5); then per round
 * round-robin (pair, R1, R2, ...) for about TIME_BUDGET seconds, medians; the ratios
 * pair / fused (> 1: fusing wins) per round, then min / median / max over the rounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common.h"
#include "tec/tec.h"
#include "tec/topi.h"
#include "topi/internal.h"

#define TIME_BUDGET 0.5
#define MAX_REPS 2000
#define MAX_R 8
#define MAX_ROUNDS 32

static const struct {
  const char *name;
  int64_t c, m, h; /* pointwise c -> m on h x h, then the 3x3 stride-2 depthwise on m */
} blocks[] = {{"mb02+03", 32, 64, 112},
              {"mb06+07", 128, 128, 56},
              {"mb10+11", 256, 256, 28},
              {"mb22+23", 512, 512, 14}};
#define NBLOCKS ((int)(sizeof blocks / sizeof blocks[0]))

typedef struct pcase {
  tec_ctx *ctx;
  topi_conv2d pw, dw;
  DLTensor x, w1, b1, w2, b2, mid, out, vout[MAX_R];
  tec_module *mpw, *mdw, *mv[MAX_R];
} pcase;

static void prefix_names(tec_ctx *ctx, te_tensor *t) {
  if ((t->op == TE_PLACEHOLDER && !t->is_const) || !strncmp(t->name, "pw_", 3)) return;
  t->name = tec_ctx_printf(ctx, "pw_%s", t->name);
  for (int i = 0; i < t->ninputs; i++) prefix_names(ctx, (te_tensor *)t->inputs[i]);
}

static tec_module *build_one(tec_ctx *ctx, const char *name, const topi_conv2d *p) {
  topi_decl d;
  tune_space sp;
  topi_op op;
  if (topi_declare(ctx, name, p, &d) || topi_space_of(ctx, name, p, NULL, &sp) ||
      topi_schedule(&d, sp.default_config, NULL, &op))
    return NULL;
  lower_func *f = tec_lower(op.sched, "f", op.nargs, op.args);
  return f ? tec_build(ctx, 1, &f, NULL) : NULL;
}

/* The chain, the depthwise in tiles of R output rows, the pointwise computed per tile. */
static tec_module *build_fused(pcase *c, int64_t R) {
  tec_ctx *ctx = c->ctx;
  topi_decl dp, dd;
  tune_space psp, dsp;
  if (topi_conv2d_nchwc_declare_on(ctx, &c->pw, NULL, &dp) ||
      topi_depthwise_nchwc_declare_on(ctx, &c->dw, dp.out, &dd) ||
      topi_space_of(ctx, "conv2d_nchwc", &c->pw, NULL, &psp) ||
      topi_space_of(ctx, "depthwise_nchwc", &c->dw, NULL, &dsp))
    return NULL;
  topi_conv2d_nchwc_config pc = *(const topi_conv2d_nchwc_config *)psp.default_config;
  topi_depthwise_nchwc_config dc = *(const topi_depthwise_nchwc_config *)dsp.default_config;
  pc.parallel = 0, dc.oh_tile = R;
  prefix_names(ctx, dp.out);
  te_tensor **args = tec_ctx_alloc(ctx, 6 * sizeof *args);
  if (!args) return NULL;
  args[0] = dp.args[0], args[1] = dp.args[1], args[2] = dp.args[2];
  args[3] = dd.args[1], args[4] = dd.args[2], args[5] = dd.out;
  topi_decl fd = dd;
  fd.nargs = 6, fd.args = args;
  topi_op op;
  sch_iter *rows = NULL;
  if (topi_op_begin(&fd, &op) || topi_conv2d_nchwc_schedule_in(&dp, &pc, op.sched, 0, NULL) ||
      topi_depthwise_nchwc_schedule_in(&dd, &dc, op.sched, 1, &rows) ||
      sch_compute_at(sch_stage_of(op.sched, dp.out), sch_stage_of(op.sched, dd.out), rows))
    return NULL;
  lower_func *f = tec_lower(op.sched, "f", op.nargs, op.args);
  return f ? tec_build(ctx, 1, &f, NULL) : NULL;
}

static int alloc_fill(DLTensor *t, int nd, const int64_t *s, unsigned seed) {
  if (tec_dl_alloc(t, TEC_F32, nd, s)) return -1;
  float *f = t->data;
  for (int64_t i = 0; i < tec_dl_numel(t); i++) {
    seed = seed * 1103515245u + 12345u;
    f[i] = (float)((seed >> 9) & 0xffff) / 32768.0f - 1.0f;
  }
  return 0;
}

static int setup(pcase *c, int bi, const int *rs, int nr) {
  const __typeof__(blocks[0]) *B = &blocks[bi];
  topi_layout l = {.kind = TOPI_NCHWC, .block = 16};
  topi_epilogue e = {.bias = 1, .act = TOPI_ACT_RELU};
  int64_t oh = (B->h - 1) / 2 + 1;
  c->pw = (topi_conv2d){.n = 1, .c_in = B->c, .h = B->h, .w = B->h, .c_out = B->m, .kh = 1,
                        .kw = 1, .stride_h = 1, .stride_w = 1, .groups = 1, .in_layout = l,
                        .out_layout = l, .epi = e};
  c->dw = (topi_conv2d){.n = 1, .c_in = B->m, .h = B->h, .w = B->h, .c_out = B->m, .kh = 3,
                        .kw = 3, .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1,
                        .groups = B->m, .in_layout = l, .out_layout = l, .epi = e};
  int64_t sx[5] = {1, B->c / 16, B->h, B->h, 16}, sm[5] = {1, B->m / 16, B->h, B->h, 16},
          so[5] = {1, B->m / 16, oh, oh, 16}, s1[4] = {B->m, B->c, 1, 1}, s2[4] = {B->m, 1, 3, 3};
  if (!(c->ctx = tec_ctx_new()) || alloc_fill(&c->x, 5, sx, 1u + (unsigned)bi) ||
      alloc_fill(&c->w1, 4, s1, 2) || alloc_fill(&c->b1, 1, &B->m, 3) ||
      alloc_fill(&c->w2, 4, s2, 4) || alloc_fill(&c->b2, 1, &B->m, 5) ||
      alloc_fill(&c->mid, 5, sm, 6) || alloc_fill(&c->out, 5, so, 7))
    return -1;
  for (int i = 0; i < nr; i++)
    if (alloc_fill(&c->vout[i], 5, so, 8)) return -1;
  if (!(c->mpw = build_one(c->ctx, "conv2d_nchwc", &c->pw)) ||
      !(c->mdw = build_one(c->ctx, "depthwise_nchwc", &c->dw)))
    return -1;
  for (int i = 0; i < nr; i++)
    if (!(c->mv[i] = build_fused(c, rs[i]))) return -1;
  return 0;
}

static int run_pair(pcase *c) {
  DLTensor *a1[4] = {&c->x, &c->w1, &c->b1, &c->mid}, *a2[4] = {&c->mid, &c->w2, &c->b2, &c->out};
  return tec_module_run(c->mpw, "f", 4, a1) || tec_module_run(c->mdw, "f", 4, a2);
}

static int run_fused(pcase *c, int i) {
  DLTensor *a[6] = {&c->x, &c->w1, &c->b1, &c->w2, &c->b2, &c->vout[i]};
  return tec_module_run(c->mv[i], "f", 6, a);
}

int main(int argc, char **argv) {
  int rs[MAX_R] = {1, 2, 4, 7}, nr = 4, rounds = 5;
  for (int i = 1; i < argc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = v != NULL;
    if (ok && !strcmp(a, "--rows")) ok = (nr = bench_parse_list(v, rs, MAX_R, 1, 512)) > 0;
    else if (ok && !strcmp(a, "--rounds")) ok = (rounds = atoi(v)) >= 1 && rounds <= MAX_ROUNDS;
    else ok = 0;
    if (!ok) {
      fprintf(stderr, "usage: pw_dw [--rows 1,2,4,7] [--rounds 5]\n"
                      "  --rows: the depthwise's output rows per fused tile (at most %d values)\n"
                      "  --rounds: 1 to %d\n", MAX_R, MAX_ROUNDS);
      return 2;
    }
  }
  tec_rt_set_num_threads(1);
  printf("pointwise -> 3x3 stride-2 depthwise of MobileNet v1, NCHW16c, bias + ReLU, 1 thread; "
         "medians (ms); pair/fR: the two calls' time over the fused one's (> 1: fusing wins)\n");
  static pcase cs[NBLOCKS];
  static double ratio[NBLOCKS][MAX_R][MAX_ROUNDS];
  int status = 0;
  for (int bi = 0; bi < NBLOCKS; bi++) {
    pcase *c = &cs[bi];
    if (setup(c, bi, rs, nr)) {
      fprintf(stderr, "pw_dw: %s: %s\n", blocks[bi].name, c->ctx ? tec_ctx_error(c->ctx) : "out of memory");
      return 1;
    }
    if (run_pair(c)) return fprintf(stderr, "pw_dw: %s\n", tec_rt_last_error()), 1;
    for (int i = 0; i < nr; i++) {
      if (run_fused(c, i)) return fprintf(stderr, "pw_dw: %s\n", tec_rt_last_error()), 1;
      double e = bench_max_err(c->vout[i].data, c->out.data, tec_dl_numel(&c->out));
      if (!(e <= 1e-5)) {
        printf("CHECK FAILED: %s R=%d: max error %.3g against the two calls\n", blocks[bi].name, rs[i], e);
        status = 1;
      }
    }
  }
  for (int round = 0; round < rounds; round++) {
    printf("\nround %d of %d\n", round + 1, rounds);
    for (int bi = 0; bi < NBLOCKS; bi++) {
      pcase *c = &cs[bi];
      double t0 = bench_now(CLOCK_MONOTONIC);
      run_pair(c);
      for (int i = 0; i < nr; i++) run_fused(c, i);
      double est = bench_now(CLOCK_MONOTONIC) - t0;
      int n = est > 0 ? (int)(TIME_BUDGET / est) : 20;
      n = n < 20 ? 20 : n > MAX_REPS ? MAX_REPS : n;
      double *ts = malloc(sizeof(double) * (size_t)(n * (MAX_R + 1)));
      if (!ts) return 1;
      for (int r = 0; r < n; r++) {
        t0 = bench_now(CLOCK_MONOTONIC);
        run_pair(c);
        ts[r] = bench_now(CLOCK_MONOTONIC) - t0;
        for (int i = 0; i < nr; i++) {
          t0 = bench_now(CLOCK_MONOTONIC);
          run_fused(c, i);
          ts[(i + 1) * n + r] = bench_now(CLOCK_MONOTONIC) - t0;
        }
      }
      double pair = bench_median(ts, n);
      printf("%-8s %4lld>%-4lld %3lldx%-3lld pair %7.3f", blocks[bi].name, (long long)blocks[bi].c,
             (long long)blocks[bi].m, (long long)blocks[bi].h, (long long)blocks[bi].h, pair * 1e3);
      for (int i = 0; i < nr; i++) {
        double m = bench_median(ts + (i + 1) * n, n);
        ratio[bi][i][round] = pair / m;
        printf("  f%d %7.3f (%.2fx)", rs[i], m * 1e3, pair / m);
      }
      printf("\n");
      fflush(stdout);
      free(ts);
    }
  }
  printf("\npair / fused over %d rounds, min / median / max\n", rounds);
  for (int bi = 0; bi < NBLOCKS; bi++) {
    printf("%-8s", blocks[bi].name);
    for (int i = 0; i < nr; i++) {
      double v[MAX_ROUNDS];
      memcpy(v, ratio[bi][i], sizeof(double) * (size_t)rounds);
      bench_sort(v, rounds);
      printf("  R=%d %.2f %.2f %.2f", rs[i], v[0], bench_median(v, rounds), v[rounds - 1]);
    }
    printf("\n");
  }
  for (int bi = 0; bi < NBLOCKS; bi++) {
    pcase *c = &cs[bi];
    tec_dl_free(&c->x), tec_dl_free(&c->w1), tec_dl_free(&c->b1), tec_dl_free(&c->w2);
    tec_dl_free(&c->b2), tec_dl_free(&c->mid), tec_dl_free(&c->out);
    for (int i = 0; i < nr; i++) tec_dl_free(&c->vout[i]), tec_module_free(c->mv[i]);
    tec_module_free(c->mpw), tec_module_free(c->mdw);
    tec_ctx_free(c->ctx);
  }
  return status;
}

/* pw_dw.c — issue #39's pointwise -> stride-2 depthwise fusion, measured: MobileNet v1's four
 * pointwise layers that feed a 3x3 stride-2 depthwise and MobileNet v2's four expansions that
 * do, each block three ways, 1 thread:
 *
 *   tec pair   conv2d_nchwc then depthwise_nchwc at their defaults, two calls, the 4x larger
 *              intermediate in a buffer between them (what a network runs today)
 *   fused fR   one loop nest: the depthwise in tiles of R output rows (rows outermost,
 *              topi_depthwise_nchwc_schedule_in), the pointwise's conv computed per tile and
 *              stored at the top level with a sliding window (sch_store_root: each tile
 *              computes the 2R new rows only, the buffer folded to a power of two of rows,
 *              L1/L2 resident), its ReLU applied where the depthwise reads it
 *              (topi_conv2d_nchwc_declare_rows / _schedule_slid, topi/internal.h)
 *   onednn     its pointwise then its depthwise, each the fastest of its algorithms
 *              (conv_dnnl_setup), the depthwise reading the pointwise's output in place
 *              (conv_dnnl_chain) when their formats agree
 *
 *   usage: printed by main() on a bad option
 *   PWDW_PRINT=1: the fused variants' lowered programs and notes on stdout;
 *   PWDW_ASM=FILE: the last fused module's assembly into FILE
 *
 * Per block: data and weights seeded random, NCHW16c, bias + ReLU on both layers (v2's ReLU6
 * too: oneDNN's side is built with ReLU, conv_impl.c). The fused variants are checked against
 * the tec pair (max |a - b| / (1 + |b|) <= 1e-5), oneDNN's layers against conv_impl.c's
 * reference. Then per round, round-robin, every call timed in process CPU time; per round the
 * medians and the ratios; at the end min / median / max of the ratios over the rounds, and a
 * roofline line per block (bench/conv_roof.c's probes: the FMA peak, the read bandwidth from
 * L3 at the pair's bytes): the compute bound, and the bytes each way must move (the pair: the
 * intermediate written and read back; fused: input, weights, output) over that bandwidth.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common.h"
#include "conv.h"
#include "peak.h"
#include "stream.h"
#include "tec/tec.h"
#include "tec/topi.h"
#include "topi/internal.h"

#define TIME_BUDGET 0.4
#define MAX_REPS 2000
#define MAX_R 4
#define MAX_ROUNDS 32
#define CLK CLOCK_PROCESS_CPUTIME_ID

static const struct {
  const char *name;
  int64_t c, m, h; /* pointwise c -> m on h x h, then the 3x3 stride-2 depthwise on m */
} blocks[] = {{"v1_pw2", 32, 64, 112},   {"v1_pw4", 128, 128, 56}, {"v1_pw6", 256, 256, 28},
              {"v1_pw12", 512, 512, 14}, {"v2_b2", 16, 96, 112},   {"v2_b4", 24, 144, 56},
              {"v2_b7", 32, 192, 28},    {"v2_b14", 96, 576, 14}};
#define NBLOCKS ((int)(sizeof blocks / sizeof blocks[0]))

/* timed columns per block: tec pw, tec dw, fused R..., onednn pw, onednn dw */
enum { T_PW, T_DW, T_FUSED };

typedef struct pcase {
  const char *name;
  tec_ctx *ctx;
  topi_conv2d pw, dw;
  DLTensor x, w1, b1, w2, b2, mid, out, vout[MAX_R];
  tec_module *mpw, *mdw, *mv[MAX_R];
  conv_layer lpw, ldw;
  conv_case dpw, ddw;
  int dn_ok, chained;
} pcase;

static int64_t tile_t = 0, tile_b = 0; /* --tile: the fused pointwise's register tile */

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

/* The fused pointwise's register tile: T columns (a last tile past the width computes the
 * columns it has, under a guard), B blocks dividing the channel blocks, T * B accumulators + B
 * weights + a broadcast within AVX-512's 32 registers (7 x 4 = 33 spilled two accumulators in
 * the hot loop): the most multiply-adds per load, T * B / (T + B), times the share of the
 * tiles' columns that exist. */
static void pick_tile(int64_t w, int64_t nob, int64_t *bt, int64_t *bb) {
  double best = -1;
  *bt = *bb = 1;
  for (int64_t t = 1; t <= 28 && t <= w; t++)
    for (int64_t b = 1; b <= 8 && b <= nob; b++) {
      double rate = (double)(t * b) / (double)(t + b) * (double)w / (double)((w + t - 1) / t * t);
      if (nob % b == 0 && t * b + b + 1 <= 32 && rate > best) best = rate, *bt = t, *bb = b;
    }
}

/* The chain, the depthwise in tiles of R output rows, the pointwise slid along them. */
static tec_module *build_fused(pcase *c, int64_t R) {
  tec_ctx *ctx = c->ctx;
  topi_decl dp, dd;
  tune_space psp, dsp;
  if (topi_conv2d_nchwc_declare_rows(ctx, &c->pw, NULL, &dp) ||
      topi_depthwise_nchwc_declare_on(ctx, &c->dw, dp.out, &dd) ||
      topi_space_of(ctx, "conv2d_nchwc", &c->pw, NULL, &psp) ||
      topi_space_of(ctx, "depthwise_nchwc", &c->dw, NULL, &dsp))
    return NULL;
  topi_conv2d_nchwc_config pc = *(const topi_conv2d_nchwc_config *)psp.default_config;
  topi_depthwise_nchwc_config dc = *(const topi_depthwise_nchwc_config *)dsp.default_config;
  dc.oh_tile = R, dc.parallel = 0;
  if (R == 1)
    printf("%-8s tec pw default ow_tile=%lld oc_tiles=%lld ic_split=%lld ic_unroll=%lld; ",
           c->name, (long long)pc.ow_tile, (long long)pc.oc_tiles, (long long)pc.ic_split,
           (long long)pc.ic_unroll);
  pick_tile(c->pw.w, c->pw.c_out / 16, &pc.ow_tile, &pc.oc_tiles);
  if (tile_t) pc.ow_tile = tile_t, pc.oc_tiles = tile_b;
  if (R == 1)
    printf("fused tile ow_tile=%lld oc_tiles=%lld\n", (long long)pc.ow_tile,
           (long long)pc.oc_tiles);
  prefix_names(ctx, dp.out);
  te_tensor **args = tec_ctx_alloc(ctx, 6 * sizeof *args);
  if (!args) return NULL;
  args[0] = dp.args[0], args[1] = dp.args[1], args[2] = dp.args[2];
  args[3] = dd.args[1], args[4] = dd.args[2], args[5] = dd.out;
  topi_decl fd = dd;
  fd.nargs = 6, fd.args = args;
  topi_op op;
  sch_iter *rows = NULL;
  if (topi_op_begin(&fd, &op) || topi_depthwise_nchwc_schedule_in(&dd, &dc, op.sched, 1, &rows) ||
      topi_conv2d_nchwc_schedule_slid(&dp, &pc, op.sched, sch_stage_of(op.sched, dd.out), rows))
    return NULL;
  lower_func *f = tec_lower(op.sched, "f", op.nargs, op.args);
  if (f && getenv("PWDW_PRINT")) {
    tec_lower_print(stdout, f);
    for (int k = 0; k < f->nnotes; k++) printf("note: %s\n", f->notes[k]);
  }
  tec_module *m = f ? tec_build(ctx, 1, &f, NULL) : NULL;
  const char *asm_file = getenv("PWDW_ASM");
  if (m && asm_file) {
    FILE *fp = fopen(asm_file, "w");
    if (fp) fputs(tec_module_asm(m), fp), fclose(fp);
  }
  return m;
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

static int setup_tec(pcase *c, int bi, const int *rs, int nr) {
  const __typeof__(blocks[0]) *B = &blocks[bi];
  topi_layout l = {.kind = TOPI_NCHWC, .block = 16};
  topi_epilogue e = {.bias = 1, .act = TOPI_ACT_RELU};
  int64_t oh = (B->h - 1) / 2 + 1, cb = (B->c + 15) / 16;
  c->name = B->name;
  c->pw = (topi_conv2d){.n = 1, .c_in = B->c, .h = B->h, .w = B->h, .c_out = B->m, .kh = 1,
                        .kw = 1, .stride_h = 1, .stride_w = 1, .groups = 1, .in_layout = l,
                        .out_layout = l, .epi = e};
  c->dw = (topi_conv2d){.n = 1, .c_in = B->m, .h = B->h, .w = B->h, .c_out = B->m, .kh = 3,
                        .kw = 3, .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1,
                        .groups = B->m, .in_layout = l, .out_layout = l, .epi = e};
  int64_t sx[5] = {1, cb, B->h, B->h, 16}, sm[5] = {1, B->m / 16, B->h, B->h, 16},
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

/* oneDNN's two layers on their own data, checked, then chained */
static int setup_dnnl(pcase *c, int bi) {
  const __typeof__(blocks[0]) *B = &blocks[bi];
  c->lpw = (conv_layer){blocks[bi].name, 1, B->c, B->h, B->h, B->m, 1, 1, 0, 1};
  c->ldw = (conv_layer){"dw", 1, B->m, B->h, B->h, B->m, 3, 2, 1, B->m};
  if (conv_case_init(&c->dpw, &c->lpw, 11u + (unsigned)bi) ||
      conv_case_init(&c->ddw, &c->ldw, 13u + (unsigned)bi) || conv_dnnl_setup(&c->dpw, 0) ||
      conv_dnnl_setup(&c->ddw, 0))
    return -1;
  conv_case *cc[2] = {&c->dpw, &c->ddw};
  for (int k = 0; k < 2; k++) {
    conv_clear_output(cc[k], IMPL_DNNL, 0);
    double e = conv_run(cc[k], IMPL_DNNL, 0, NULL) ? INFINITY : conv_check(cc[k], IMPL_DNNL, 0);
    if (!(e <= 1e-4)) {
      printf("CHECK FAILED: %s onednn %s: max relative error %.3g (limit 1e-4)\n", B->name,
             k ? "dw" : "pw", e);
      return -1;
    }
  }
  if ((c->chained = conv_dnnl_chain(&c->dpw, &c->ddw, 0)) < 0) return -1;
  c->dn_ok = 1;
  return 0;
}

static int run_pw(pcase *c) {
  DLTensor *a[4] = {&c->x, &c->w1, &c->b1, &c->mid};
  return tec_module_run(c->mpw, "f", 4, a);
}
static int run_dw(pcase *c) {
  DLTensor *a[4] = {&c->mid, &c->w2, &c->b2, &c->out};
  return tec_module_run(c->mdw, "f", 4, a);
}
static int run_fused(pcase *c, int i) {
  DLTensor *a[6] = {&c->x, &c->w1, &c->b1, &c->w2, &c->b2, &c->vout[i]};
  return tec_module_run(c->mv[i], "f", 6, a);
}

/* column k of a round: 0 tec pw, 1 tec dw, 2.. fused, then onednn pw, onednn dw */
static int run_col(pcase *c, int k, int nr) {
  if (k == T_PW) return run_pw(c);
  if (k == T_DW) return run_dw(c);
  if (k < T_FUSED + nr) return run_fused(c, k - T_FUSED);
  return conv_run(k == T_FUSED + nr ? &c->dpw : &c->ddw, IMPL_DNNL, 0, NULL);
}

/* min, median, max of v_in[0..n) (one sort: bench_median's) */
static void stats(const double *v_in, int n, double *out3) {
  double v[MAX_ROUNDS];
  memcpy(v, v_in, sizeof(double) * (size_t)n);
  out3[1] = bench_median(v, n);
  out3[0] = v[0], out3[2] = v[n - 1];
}

int main(int argc, char **argv) {
  int rs[MAX_R] = {1, 2}, nr = 2, rounds = 5, tile[2] = {0, 0}, only = -1;
  for (int i = 1; i < argc; i += 2) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = v != NULL;
    if (ok && !strcmp(a, "--rows")) ok = (nr = bench_parse_list(v, rs, MAX_R, 1, 4)) > 0;
    else if (ok && !strcmp(a, "--rounds")) ok = (rounds = atoi(v)) >= 1 && rounds <= MAX_ROUNDS;
    else if (ok && !strcmp(a, "--tile")) ok = bench_parse_list(v, tile, 2, 1, 28) == 2;
    else if (ok && !strcmp(a, "--block")) {
      ok = 0;
      for (int b = 0; b < NBLOCKS; b++)
        if (!strcmp(v, blocks[b].name)) only = b, ok = 1;
    } else ok = 0;
    if (!ok) {
      fprintf(stderr, "usage: pw_dw [--rows 1,2] [--rounds 5] [--tile T,B] [--block NAME]\n"
                      "  --rows: the depthwise's output rows per fused tile (1 to 4, at most %d "
                      "values)\n  --rounds: 1 to %d\n  --tile: the fused pointwise's register "
                      "tile, T columns x B channel blocks, each 1 to 28 (a B that does not "
                      "divide the layer's channel blocks leaves a guarded tail); default per "
                      "layer (pick_tile): T <= 28, B <= 8 dividing the blocks, T * B + B + 1 "
                      "<= 32 registers, the most multiply-adds per load\n  --block: one of "
                      "v1_pw2 v1_pw4 v1_pw6 v1_pw12 v2_b2 v2_b4 v2_b7 v2_b14\n",
              MAX_R, MAX_ROUNDS);
      return 2;
    }
  }
  tile_t = tile[0], tile_b = tile[1];
  tec_rt_set_num_threads(1);
  omp_set_num_threads(1);
  if (conv_libs_init()) return 1;
  const char *isa = "";
  double peak = bench_fma_peak(1, 0.02, 25, &isa);
  printf("pointwise -> 3x3 stride-2 depthwise (MobileNet v1 and v2 blocks), NCHW16c, bias + ReLU, "
         "1 thread, process CPU time; FMA peak %.1f GFLOP/s (%s)\n", peak, isa);
  static pcase cs[NBLOCKS];
  int ncol = T_FUSED + nr + 2, status = 0;
  static double med[MAX_ROUNDS][NBLOCKS][T_FUSED + MAX_R + 2];
  /* per round and block: the tec pair's and oneDNN's pw + dw medians */
  static double pair_m[MAX_ROUNDS][NBLOCKS], dnn_m[MAX_ROUNDS][NBLOCKS];
  for (int bi = 0; bi < NBLOCKS; bi++) {
    if (only >= 0 && bi != only) continue;
    pcase *c = &cs[bi];
    if (setup_tec(c, bi, rs, nr)) {
      fprintf(stderr, "pw_dw: %s: %s\n", blocks[bi].name, c->ctx ? tec_ctx_error(c->ctx) : "out of memory");
      return 1;
    }
    if (setup_dnnl(c, bi)) return 1;
    printf("%-8s onednn pw %s, dw %s; dw reads pw's output %s\n", blocks[bi].name,
           c->dpw.dnnl[0].impl, c->ddw.dnnl[0].impl,
           c->chained ? "in place" : "no (formats differ: its own input)");
    if (run_pw(c) || run_dw(c)) return fprintf(stderr, "pw_dw: %s\n", tec_rt_last_error()), 1;
    for (int i = 0; i < nr; i++) {
      memset(c->vout[i].data, 0, sizeof(float) * (size_t)tec_dl_numel(&c->vout[i]));
      if (run_fused(c, i)) return fprintf(stderr, "pw_dw: %s\n", tec_rt_last_error()), 1;
      double e = bench_max_err(c->vout[i].data, c->out.data, tec_dl_numel(&c->out));
      if (!(e <= 1e-5)) {
        printf("CHECK FAILED: %s R=%d: max error %.3g against the two calls\n", blocks[bi].name, rs[i], e);
        status = 1;
      }
    }
  }
  for (int round = 0; round < rounds; round++) {
    printf("\nround %d of %d: medians, ms (pair: tec pw + dw; ratios > 1: fused faster)\n",
           round + 1, rounds);
    for (int bi = 0; bi < NBLOCKS; bi++) {
      if (only >= 0 && bi != only) continue;
      pcase *c = &cs[bi];
      double t0 = bench_now(CLK);
      for (int k = 0; k < ncol; k++) run_col(c, k, nr);
      double est = bench_now(CLK) - t0;
      int n = est > 0 ? (int)(TIME_BUDGET / est) : 20;
      n = n < 15 ? 15 : n > MAX_REPS ? MAX_REPS : n;
      double *ts = malloc(sizeof(double) * (size_t)(n * ncol));
      if (!ts) return 1;
      for (int r = 0; r < n; r++)
        for (int k = 0; k < ncol; k++) {
          t0 = bench_now(CLK);
          if (run_col(c, k, nr)) return fprintf(stderr, "pw_dw: a call failed\n"), 1;
          ts[k * n + r] = bench_now(CLK) - t0;
        }
      double *m = med[round][bi];
      for (int k = 0; k < ncol; k++) m[k] = bench_median(ts + k * n, n);
      double pair = pair_m[round][bi] = m[T_PW] + m[T_DW];
      double dn = dnn_m[round][bi] = m[T_FUSED + nr] + m[T_FUSED + nr + 1];
      printf("%-8s tec pw %6.3f dw %6.3f pair %6.3f | onednn pw %6.3f dw %6.3f pair %6.3f |",
             blocks[bi].name, m[T_PW] * 1e3, m[T_DW] * 1e3, pair * 1e3, m[T_FUSED + nr] * 1e3,
             m[T_FUSED + nr + 1] * 1e3, dn * 1e3);
      for (int i = 0; i < nr; i++)
        printf(" f%d %6.3f (tec %.2fx, onednn %.2fx)", rs[i], m[T_FUSED + i] * 1e3,
               pair / m[T_FUSED + i], dn / m[T_FUSED + i]);
      printf("\n");
      fflush(stdout);
      free(ts);
    }
  }
  printf("\nover %d rounds, min / median / max of the per-round ratios (> 1: the second is "
         "faster)\n", rounds);
  printf("%-8s %-17s %-17s", "block", "onednn / pair", "dnn dw / tec dw");
  for (int i = 0; i < nr; i++) printf(" pair / f%d         onednn / f%d      ", rs[i], rs[i]);
  printf("\n");
  for (int bi = 0; bi < NBLOCKS; bi++) {
    if (only >= 0 && bi != only) continue;
    double v[MAX_ROUNDS], s[3];
    for (int r = 0; r < rounds; r++) v[r] = dnn_m[r][bi] / pair_m[r][bi];
    stats(v, rounds, s);
    printf("%-8s %.2f %.2f %.2f    ", blocks[bi].name, s[0], s[1], s[2]);
    for (int r = 0; r < rounds; r++) v[r] = med[r][bi][T_FUSED + nr + 1] / med[r][bi][T_DW];
    stats(v, rounds, s);
    printf(" %.2f %.2f %.2f    ", s[0], s[1], s[2]);
    for (int i = 0; i < nr; i++) {
      for (int r = 0; r < rounds; r++) v[r] = pair_m[r][bi] / med[r][bi][T_FUSED + i];
      stats(v, rounds, s);
      printf(" %.2f %.2f %.2f    ", s[0], s[1], s[2]);
      for (int r = 0; r < rounds; r++) v[r] = dnn_m[r][bi] / med[r][bi][T_FUSED + i];
      stats(v, rounds, s);
      printf(" %.2f %.2f %.2f    ", s[0], s[1], s[2]);
    }
    printf("\n");
  }
  /* roofline: the FMA peak again (the better of the two), L3 read bandwidth at the pair's bytes */
  double again = bench_fma_peak(1, 0.02, 25, &isa);
  if (again > peak) peak = again;
  printf("\nroofline, 1 thread (peak %.1f GFLOP/s; bytes as reads, fp32; L3: the read bandwidth "
         "at the pair's bytes, pushed out of L2 first; times: medians over the rounds)\n", peak);
  printf("%-8s %7s %7s %6s %8s %8s %8s | %7s %5s %7s %5s %7s %5s", "block", "pairMB", "fusedMB",
         "L3GB/s", "comp ms", "pairL3", "fusedL3", "pair", "%roof", "onednn", "%roof", "best f",
         "%roof");
  printf("\n");
  for (int bi = 0; bi < NBLOCKS; bi++) {
    if (only >= 0 && bi != only) continue;
    const __typeof__(blocks[0]) *B = &blocks[bi];
    double in = (double)(B->c * B->h * B->h), mid = (double)(B->m * B->h * B->h),
           out = (double)(B->m * ((B->h + 1) / 2) * ((B->h + 1) / 2)),
           w = (double)(B->m * B->c + B->m * 9 + 2 * B->m);
    double flops = 2.0 * (mid * (double)B->c + out * 9.0);
    double pb = 4.0 * (in + 2 * mid + out + w), fb = 4.0 * (in + out + w);
    double bw3 = bench_read_bw((size_t)pb, 1, 15), tc = flops / peak * 1e-9;
    double tp = pb / bw3 * 1e-9, tf = fb / bw3 * 1e-9, v[MAX_ROUNDS], mp, mdn, mf = INFINITY;
    for (int r = 0; r < rounds; r++) v[r] = pair_m[r][bi];
    mp = bench_median(v, rounds);
    for (int r = 0; r < rounds; r++) v[r] = dnn_m[r][bi];
    mdn = bench_median(v, rounds);
    for (int i = 0; i < nr; i++) {
      for (int r = 0; r < rounds; r++) v[r] = med[r][bi][T_FUSED + i];
      double x = bench_median(v, rounds);
      if (x < mf) mf = x;
    }
    printf("%-8s %7.2f %7.2f %6.1f %8.4f %8.4f %8.4f | %7.4f %4.0f%% %7.4f %4.0f%% %7.4f %4.0f%%\n",
           B->name, pb * 1e-6, fb * 1e-6, bw3, tc * 1e3, tp * 1e3, tf * 1e3, mp * 1e3,
           100 * fmax(tc, tp) / mp, mdn * 1e3, 100 * fmax(tc, tp) / mdn, mf * 1e3,
           100 * fmax(tc, tf) / mf);
  }
  for (int bi = 0; bi < NBLOCKS; bi++) {
    if (only >= 0 && bi != only) continue;
    pcase *c = &cs[bi];
    tec_dl_free(&c->x), tec_dl_free(&c->w1), tec_dl_free(&c->b1), tec_dl_free(&c->w2);
    tec_dl_free(&c->b2), tec_dl_free(&c->mid), tec_dl_free(&c->out);
    for (int i = 0; i < nr; i++) tec_dl_free(&c->vout[i]), tec_module_free(c->mv[i]);
    tec_module_free(c->mpw), tec_module_free(c->mdw);
    tec_ctx_free(c->ctx);
    conv_case_free(&c->ddw), conv_case_free(&c->dpw);
  }
  conv_libs_free();
  return status;
}

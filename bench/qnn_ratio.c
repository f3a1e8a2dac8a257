/* qnn_ratio.c — tec's int8 convolution templates (requantization fused) against tec's fp32
 * ones on MobileNet v1 layers, both at their host defaults, timed in interleaved rounds on one
 * thread: qnn_conv2d against conv2d_nchwc (its GEMM form) on a pointwise layer, qnn_depthwise
 * against depthwise_nchwc on a depthwise one.
 *
 *   qnn_ratio [rounds=7] [runs=20] [layer=256|512|dw] [--print]
 *
 * Layers: pointwise 256x28x28 -> 256 or 512x14x14 -> 512; dw: depthwise 3x3 128x56x56 pad 1;
 * NCHW16c, bias + ReLU6 (int8: the clamp).
 * Each round times `runs` calls of each module (the order alternating round by round) and keeps
 * the median call; the report is the median over rounds of each and of fp32/int8 (above 1:
 * int8 faster), with the smallest and largest ratio. Times are the calling thread's CPU time.
 * --print prints the int8 program (tec_lower_print). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "tec/tec.h"
#include "tec/topi.h"

typedef struct impl {
  tec_module *m;
  int nargs;
  DLTensor *args, **ap;
} impl;

static int build(tec_ctx *ctx, const char *tmpl, const void *problem, int print, impl *o) {
  topi_op op;
  if (topi_instantiate(ctx, topi_template_find(tmpl), problem, NULL, &op)) return -1;
  lower_func *f = tec_lower(op.sched, "conv", op.nargs, op.args);
  if (!f) return -1;
  if (print) tec_lower_print(stdout, f);
  if (!(o->m = tec_build(ctx, 1, &f, NULL))) return -1;
  o->args = calloc((size_t)f->nuser, sizeof *o->args);
  o->ap = calloc((size_t)f->nuser, sizeof *o->ap);
  return !o->args || !o->ap || (o->nargs = bench_args_alloc(f, o->args, o->ap)) < 0 ? -1 : 0;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 7, runs = argc > 2 ? atoi(argv[2]) : 20;
  int dw = argc > 3 && !strcmp(argv[3], "dw"), c = dw ? 128 : argc > 3 ? atoi(argv[3]) : 256;
  int print = argc > 4 && !strcmp(argv[4], "--print");
  if (rounds < 1 || runs < 1 || (!dw && c != 256 && c != 512))
    return fprintf(stderr, "usage: qnn_ratio [rounds] [runs] [256|512|dw] [--print]\n"), 2;
  tec_rt_set_num_threads(1);
  tec_ctx *ctx = tec_ctx_new();
  const topi_layout l16 = {.kind = TOPI_NCHWC, .block = 16};
  int64_t hw = dw ? 56 : c == 256 ? 28 : 14;
  topi_conv2d p = {.n = 1, .c_in = c, .h = hw, .w = hw, .c_out = c, .kh = 1, .kw = 1,
                   .stride_h = 1, .stride_w = 1, .groups = 1, .in_layout = l16, .out_layout = l16,
                   .epi = {1, 0, TOPI_ACT_RELU6}};
  if (dw) p.kh = p.kw = 3, p.pad_h = p.pad_w = 1, p.groups = c;
  topi_qconv2d q = {.conv = p, .in = {0.05f, -3}, .out = {0.04f, -128}};
  impl m[2];
  if (build(ctx, dw ? "depthwise_nchwc" : "conv2d_nchwc", &p, 0, &m[0]) ||
      build(ctx, dw ? "qnn_depthwise" : "qnn_conv2d", &q, print, &m[1]))
    return fprintf(stderr, "qnn_ratio: %s\n", tec_ctx_error(ctx)), 1;
  for (int k = 0; k < 2; k++) bench_module_median(m[k].m, "conv", m[k].nargs, m[k].ap, 3, "qnn_ratio"); /* warm-up, prepare */
  double *t0 = malloc(sizeof *t0 * (size_t)rounds), *t1 = malloc(sizeof *t1 * (size_t)rounds);
  double *ratio = malloc(sizeof *ratio * (size_t)rounds);
  for (int r = 0; r < rounds; r++) {
    int first = r % 2;
    double a = bench_module_median(m[first].m, "conv", m[first].nargs, m[first].ap, runs, "qnn_ratio"),
           b = bench_module_median(m[!first].m, "conv", m[!first].nargs, m[!first].ap, runs, "qnn_ratio");
    t0[r] = first ? b : a;
    t1[r] = first ? a : b;
    ratio[r] = t0[r] / t1[r];
    printf("round %d: fp32 %.3f ms, int8 %.3f ms, fp32/int8 %.3f\n", r, t0[r] * 1e3, t1[r] * 1e3,
           ratio[r]);
  }
  bench_sort(ratio, rounds);
  double lo = ratio[0], hi = ratio[rounds - 1];
  printf("%s %dx%dx%d -> %d, 1 thread, %d rounds x %d runs: fp32 %s %.3f ms, int8 %s %.3f ms "
         "(medians), fp32/int8 %.3f (spread %.3f .. %.3f)\n",
         dw ? "depthwise 3x3" : "pointwise", c, (int)p.h, (int)p.w, c, rounds, runs,
         dw ? "depthwise_nchwc" : "conv2d_nchwc", bench_median(t0, rounds) * 1e3,
         dw ? "qnn_depthwise" : "qnn_conv2d",
         bench_median(t1, rounds) * 1e3, bench_median(ratio, rounds), lo, hi);
  tec_ctx_free(ctx);
  return 0;
}

/* bounds_check.c — what the debug option tec_lower_options.check_bounds (lower/bound_checkers.c)
 * costs on one convolution layer: the same template, config and arguments built twice, with
 * and without the run-time checks, timed in interleaved rounds on one thread.
 *
 *   bounds_check [rounds=7] [runs=20] [layer=resnet|mobilenet]
 *
 * Each round times `runs` calls of each module (the order alternating round by round) and
 * keeps the median call; the report is the median over rounds of each and of their ratio,
 * with the smallest and largest ratio (the spread). Times are the calling thread's CPU time
 * (one thread: the runtime runs the parallel loop on the caller), which a loaded machine
 * disturbs less than wall time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "tec/tec.h"
#include "tec/topi.h"

static tec_module *build(tec_ctx *ctx, const topi_conv2d *p, int check, lower_func **fo) {
  topi_op op;
  if (topi_instantiate(ctx, topi_template_find("conv2d_nchwc"), p, NULL, &op)) return NULL;
  lower_func *f = tec_lower_with(op.sched, "conv", op.nargs, op.args,
                                 &(tec_lower_options){.check_bounds = check});
  *fo = f;
  return f ? tec_build(ctx, 1, &f, NULL) : NULL;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 7, runs = argc > 2 ? atoi(argv[2]) : 20;
  int mobile = argc > 3 && strcmp(argv[3], "mobilenet") == 0;
  if (rounds < 1 || runs < 1) return fprintf(stderr, "usage: bounds_check [rounds] [runs]\n"), 2;
  tec_rt_set_num_threads(1);
  tec_ctx *ctx = tec_ctx_new();
  const topi_layout l16 = {.kind = TOPI_NCHWC, .block = 16};
  /* ResNet-18's conv2_x 3x3 (64x56x56 -> 64) or a MobileNet pointwise (256x28x28 -> 256) */
  topi_conv2d p = {.n = 1, .c_in = 64, .h = 56, .w = 56, .c_out = 64, .kh = 3, .kw = 3,
                   .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1, .groups = 1,
                   .in_layout = l16, .out_layout = l16, .epi = {1, 0, TOPI_ACT_RELU}};
  if (mobile)
    p.c_in = p.c_out = 256, p.h = p.w = 28, p.kh = p.kw = 1, p.pad_h = p.pad_w = 0;
  lower_func *f0, *f1;
  tec_module *m[2] = {build(ctx, &p, 0, &f0), build(ctx, &p, 1, &f1)};
  if (!m[0] || !m[1]) return fprintf(stderr, "bounds_check: %s\n", tec_ctx_error(ctx)), 1;
  int nargs = f0->nuser;
  DLTensor *args = calloc((size_t)nargs, sizeof *args);
  DLTensor **ap = calloc((size_t)nargs, sizeof *ap);
  for (int i = 0; i < nargs; i++) {
    const te_tensor *t = f0->user_args[i];
    int64_t shape[16];
    for (int d = 0; d < t->ndim; d++)
      if (!ir_is_const_int(te_buffer_shape(t)[d], &shape[d])) return 1;
    if (tec_dl_alloc(&args[i], TEC_F32, t->ndim, shape)) return 1;
    float *x = args[i].data;
    for (int64_t k = 0; k < tec_dl_numel(&args[i]); k++) x[k] = (float)((k * 7919) % 17) / 17.0f - 0.5f;
    ap[i] = &args[i];
  }
  for (int k = 0; k < 2; k++) bench_module_median(m[k], "conv", nargs, ap, 3, "bounds_check"); /* warm-up, prepare */
  double *t0 = malloc(sizeof *t0 * (size_t)rounds), *t1 = malloc(sizeof *t1 * (size_t)rounds);
  double *ratio = malloc(sizeof *ratio * (size_t)rounds);
  for (int r = 0; r < rounds; r++) {
    int first = r % 2;
    double a = bench_module_median(m[first], "conv", nargs, ap, runs, "bounds_check"),
           b = bench_module_median(m[!first], "conv", nargs, ap, runs, "bounds_check");
    t0[r] = first ? b : a;
    t1[r] = first ? a : b;
    ratio[r] = t1[r] / t0[r];
    printf("round %d: plain %.3f ms, checked %.3f ms, ratio %.3f\n", r, t0[r] * 1e3, t1[r] * 1e3,
           ratio[r]);
  }
  double lo, hi;
  bench_sort(ratio, rounds);
  lo = ratio[0], hi = ratio[rounds - 1];
  printf("conv2d_nchwc %s, 1 thread, %d rounds x %d runs: plain %.3f ms, checked %.3f ms "
         "(medians), checked/plain %.3f (spread %.3f .. %.3f)\n",
         mobile ? "256x28x28 1x1 -> 256" : "64x56x56 3x3 -> 64", rounds, runs,
         bench_median(t0, rounds) * 1e3, bench_median(t1, rounds) * 1e3, bench_median(ratio, rounds),
         lo, hi);
  tec_ctx_free(ctx);
  return 0;
}

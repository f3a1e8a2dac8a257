/* scan_iir.c — a recurrence (te_scan) vectorized across columns against the same recurrence
 * left scalar: the IIR filter y[t][x] = a*y[t-1][x] + b*in[t][x] along the rows of an image.
 *
 *   scan_iir [rounds=7] [runs=10] [n=2048]
 *
 * Builds, for one n x n image:
 *   vector   the scan's column loop split by 16, the inner loop vectorized (tec's vectorizer)
 *   scalar   no vectorize in the schedule, at the target's -O1 (LLVM's loop vectorizer off, so
 *            the loop stays scalar; at -O3 LLVM would vectorize it on its own, reported too)
 *   auto     no vectorize in the schedule, at -O3 (what LLVM makes of the plain loop)
 * checks each against a plain C reference, then times them in interleaved rounds on one
 * thread: each round times `runs` calls of each (the order rotating round by round) and keeps
 * the median call; the report is the median over rounds of each time and of the ratios
 * scalar/vector and auto/vector, with the smallest and largest ratio (the spread). Times are
 * the calling thread's CPU time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "tec/tec.h"

static const float A = 0.75f, B = 0.25f;

typedef struct iir {
  te_tensor *X, *S;
} iir;

static const ir_expr *init_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(ir_float(ctx, B), TE_AT(((iir *)u)->X, i[0], i[1]));
}
static const ir_expr *upd_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  iir *p = u;
  return ir_add(ir_mul(ir_float(ctx, A), TE_AT(p->S, ir_sub(i[0], ir_int(ctx, 1)), i[1])),
                ir_mul(ir_float(ctx, B), TE_AT(p->X, i[0], i[1])));
}

/* kind 0 vector, 1 scalar (-O1), 2 auto (-O3, no vectorize in the schedule) */
static tec_module *build(tec_ctx *ctx, int64_t n, int kind) {
  iir *p = tec_ctx_alloc(ctx, sizeof *p);
  p->X = te_placeholder(ctx, "X", TEC_F32, 2, TE_SHAPE(ctx, n, n));
  p->S = te_placeholder(ctx, "Y_state", TEC_F32, 2, TE_SHAPE(ctx, n, n));
  te_tensor *init = te_compute(ctx, &(te_compute_decl){.name = "Y_init", .ndim = 2,
                                                       .shape = TE_SHAPE(ctx, 1, n),
                                                       .body = init_body, .user = p});
  te_tensor *up = te_compute(ctx, &(te_compute_decl){.name = "Y_upd", .ndim = 2,
                                                     .shape = TE_SHAPE(ctx, n, n),
                                                     .body = upd_body, .user = p});
  te_tensor *y = te_scan(ctx, &(te_scan_decl){.name = "Y", .state = p->S, .init = init,
                                              .update = up});
  sch_schedule *s = y ? sch_create(ctx, 1, &y) : NULL;
  if (!s || sch_compute_inline(sch_stage_of(s, up)) || sch_compute_inline(sch_stage_of(s, init)))
    return NULL;
  sch_stage *ys = sch_stage_of(s, y);
  sch_iter *xo, *xi;
  if (kind == 0 && (sch_split(ys, sch_axis(ys, 1), 16, &xo, &xi) || sch_vectorize(ys, xi)))
    return NULL;
  lower_func *f = tec_lower(s, "iir", 2, (te_tensor *[]){p->X, y});
  if (!f) return NULL;
  return tec_build(ctx, 1, &f, kind == 1 ? "llvm -O1" : NULL);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 7, runs = argc > 2 ? atoi(argv[2]) : 10;
  int64_t n = argc > 3 ? atoll(argv[3]) : 2048;
  if (rounds < 1 || runs < 1 || n < 2)
    return fprintf(stderr, "usage: scan_iir [rounds] [runs] [n]\n"), 2;
  tec_rt_set_num_threads(1);
  tec_ctx *ctx = tec_ctx_new();
  static const char *const names[3] = {"vector", "scalar", "auto"};
  tec_module *m[3];
  for (int k = 0; k < 3; k++)
    if (!(m[k] = build(ctx, n, k)))
      return fprintf(stderr, "scan_iir: %s\n", tec_ctx_error(ctx)), 1;
  DLTensor x, y;
  if (tec_dl_alloc(&x, TEC_F32, 2, (int64_t[]){n, n}) ||
      tec_dl_alloc(&y, TEC_F32, 2, (int64_t[]){n, n}))
    return 1;
  float *xp = x.data, *ref = malloc(sizeof *ref * (size_t)(n * n));
  for (int64_t k = 0; k < n * n; k++) xp[k] = (float)((k * 7919) % 17) / 17.0f - 0.5f;
  for (int64_t j = 0; j < n; j++) ref[j] = B * xp[j];
  for (int64_t t = 1; t < n; t++)
    for (int64_t j = 0; j < n; j++) ref[t * n + j] = A * ref[(t - 1) * n + j] + B * xp[t * n + j];
  DLTensor *ap[2] = {&x, &y};
  for (int k = 0; k < 3; k++) {
    memset(y.data, 0, sizeof(float) * (size_t)(n * n));
    bench_module_median(m[k], "iir", 2, ap, 2, "scan_iir"); /* warm-up, and the result */
    double err = bench_max_err(y.data, ref, n * n);
    if (!(err < 1e-5)) return fprintf(stderr, "scan_iir: %s differs from C (%g)\n", names[k], err), 1;
  }
  double *t[3], *ratio[2];
  for (int k = 0; k < 3; k++) t[k] = malloc(sizeof(double) * (size_t)rounds);
  for (int k = 0; k < 2; k++) ratio[k] = malloc(sizeof(double) * (size_t)rounds);
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < 3; i++) {
      int k = (r + i) % 3;
      t[k][r] = bench_module_median(m[k], "iir", 2, ap, runs, "scan_iir");
    }
    ratio[0][r] = t[1][r] / t[0][r];
    ratio[1][r] = t[2][r] / t[0][r];
    printf("round %d: vector %.3f ms, scalar %.3f ms, auto %.3f ms\n", r, t[0][r] * 1e3,
           t[1][r] * 1e3, t[2][r] * 1e3);
  }
  double med[3];
  for (int k = 0; k < 3; k++) med[k] = bench_median(t[k], rounds);
  printf("IIR along rows of %lldx%lld, 1 thread, %d rounds x %d runs (medians): vector %.3f ms, "
         "scalar %.3f ms, auto %.3f ms\n",
         (long long)n, (long long)n, rounds, runs, med[0] * 1e3, med[1] * 1e3, med[2] * 1e3);
  for (int k = 0; k < 2; k++) {
    double mr = bench_median(ratio[k], rounds);
    printf("  %s/vector %.2fx (spread %.2f .. %.2f)\n", names[k + 1], mr, ratio[k][0],
           ratio[k][rounds - 1]);
  }
  tec_ctx_free(ctx);
  return 0;
}

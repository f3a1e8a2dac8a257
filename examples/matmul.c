/* matmul.c — C = A·B with a blocked schedule: declare, schedule, print the lowered IR,
 * JIT-compile, check against a naive loop and report GFLOP/s.
 *   usage: matmul [--n N]   (square N x N x N, default 512; `matmul N` too; --help) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "example_args.h"
#include "tec/tec.h"

typedef struct mm { te_tensor *a, *b; const ir_expr *k; } mm;

static const ir_expr *matmul_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  mm *m = user;
  return TE_SUM(ir_mul(TE_AT(m->a, i[0], m->k), TE_AT(m->b, m->k, i[1])), m->k);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  int64_t n = 512;
  ex_opt opts[] = {{"n", EX_INT, &n, 1, 8192, "the size: C (n x n) = A (n x n) * B (n x n)"}};
  int rc = ex_args_parse("A blocked matrix multiply, timed and checked against a plain C loop.", argc, argv, opts, 1);
  if (rc) return rc == 1 ? 0 : 2;
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, n, n));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, n, n));
  mm m = {A, B, te_reduce_axis_n(ctx, "k", n)};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                     .shape = TE_SHAPE(ctx, n, n),
                                                     .body = matmul_body, .user = &m});
  /* blocked: 32 x 64 tiles of C, k blocked by 4, the unit-stride j loop innermost */
  sch_schedule *s = SCH_CREATE(ctx, C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki;
  sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 32, 64, &io, &jo, &ii, &ji);
  sch_split(sc, sch_reduce_axis(sc, 0), 4, &ko, &ki);
  SCH_REORDER(sc, io, jo, ko, ii, ki, ji);
  lower_func *f = TEC_LOWER(s, "matmul", A, B, C);
  tec_module *mod = f ? tec_build(ctx, 1, &f, NULL) : NULL;
  if (!mod) {
    fprintf(stderr, "matmul: %s\n", tec_ctx_error(ctx));
    tec_ctx_free(ctx);
    return 1;
  }
  tec_lower_print(stdout, f);
  tec_packed_fn fn = tec_module_get(mod, "matmul");

  int64_t shape[2] = {n, n};
  DLTensor a, b, c;
  tec_dl_alloc(&a, TEC_F32, 2, shape);
  tec_dl_alloc(&b, TEC_F32, 2, shape);
  tec_dl_alloc(&c, TEC_F32, 2, shape);
  float *pa = a.data, *pb = b.data, *pc = c.data;
  for (int64_t i = 0; i < n * n; i++) {
    pa[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    pb[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
  }
  int status = 0;
  if (TEC_CALL(fn, &a, &b, &c) != 0) {
    fprintf(stderr, "matmul: %s\n", tec_rt_last_error());
    status = 1;
  }
  /* check against a naive loop (a sample of rows for large N) */
  double max_err = 0;
  int64_t step = n > 256 ? n / 64 : 1;
  for (int64_t i = 0; i < n; i += step)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0;
      for (int64_t k = 0; k < n; k++) acc += (double)pa[i * n + k] * pb[k * n + j];
      double e = acc - pc[i * n + j];
      e = e < 0 ? -e : e;
      if (e > max_err) max_err = e;
    }
  if (max_err > 1e-3 * (double)n) status = 1;
  int reps = n <= 256 ? 50 : n <= 1024 ? 10 : 2;
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    TEC_CALL(fn, &a, &b, &c);
    double t = now() - t0;
    if (t < best) best = t;
  }
  double gflops = 2.0 * (double)n * (double)n * (double)n / best * 1e-9;
  printf("matmul %lld x %lld x %lld: max error %.3g (%s), best of %d: %.3f ms, %.1f GFLOP/s\n",
         (long long)n, (long long)n, (long long)n, max_err, status ? "WRONG" : "ok", reps,
         best * 1e3, gflops);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  tec_ctx_free(ctx);
  return status;
}

/* bmm.c — batched matmul: tec's batch_matmul template (default config) against oneDNN's matmul
 * primitive with a batch dimension, on the attention shapes (12 heads, 128 tokens, 64 dims):
 * Q·Kᵀ (batch 12, m 128, n 128, k 64, b transposed) and P·V (batch 12, m 128, n 64, k 128).
 * Same buffers, 1 thread each (tec_rt_set_num_threads, omp_set_num_threads), results checked
 * against each other first; then --rounds interleaved rounds (tec, then oneDNN), each the
 * median of --reps calls; printed: the median over rounds per implementation, the spread
 * (max - min over rounds, % of the median) and tec/oneDNN's speed ratio (> 1: tec faster).
 *   bmm [--rounds 7] [--reps 50]
 */
#include <dnnl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "tec/tec.h"

typedef struct shape {
  const char *name;
  topi_batch_matmul p;
} shape;

#define DN(x)                                                                   \
  do {                                                                          \
    if ((x) != dnnl_success) {                                                  \
      fprintf(stderr, "bmm: %s failed\n", #x);                                  \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

static void fill(float *x, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++) x[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 1023) / 512.0f - 1.0f;
}

static void stats(double *x, int n, double *med, double *spread) {
  bench_sort(x, n);
  *med = bench_median(x, n);
  *spread = (x[n - 1] - x[0]) / *med * 100.0;
}

int main(int argc, char **argv) {
  int rounds = 7, reps = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else return fprintf(stderr, "usage: bmm [--rounds N] [--reps N]\n"), 2;
  }
  if (rounds < 5 || rounds > 64 || reps < 1) return fprintf(stderr, "bmm: --rounds 5..64, --reps >= 1\n"), 2;
  tec_rt_set_num_threads(1);
  omp_set_num_threads(1);
  const shape shapes[] = {
      {"QK^T b12 128x128x64 tb", {.batch = 12, .m = 128, .n = 128, .k = 64, .transpose_b = 1}},
      {"PV   b12 128x64x128", {.batch = 12, .m = 128, .n = 64, .k = 128}},
  };
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  DN(dnnl_engine_create(&eng, dnnl_cpu, 0));
  DN(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
  printf("1 thread each; %d interleaved rounds of the median of %d calls\n", rounds, reps);
  printf("%-24s %10s %8s %10s %8s %9s  %s\n", "shape", "tec ms", "spread", "dnnl ms", "spread",
         "tec/dnnl", "config");
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    const topi_batch_matmul *p = &shapes[s].p;
    tec_ctx *ctx = tec_ctx_new();
    topi_op op;
    tune_space sp;
    if (topi_instantiate(ctx, topi_template_find("batch_matmul"), p, NULL, &op) ||
        topi_space_of(ctx, "batch_matmul", p, NULL, &sp))
      return fprintf(stderr, "bmm: %s\n", tec_ctx_error(ctx)), 1;
    lower_func *f = tec_lower(op.sched, "bmm", op.nargs, op.args);
    tec_module *m = f ? tec_build(ctx, 1, &f, NULL) : NULL;
    if (!m) return fprintf(stderr, "bmm: %s\n", tec_ctx_error(ctx)), 1;
    int64_t sa[3] = {p->batch, p->m, p->k};
    int64_t sb[3] = {p->batch, p->transpose_b ? p->n : p->k, p->transpose_b ? p->k : p->n};
    int64_t so[3] = {p->batch, p->m, p->n};
    DLTensor a, b, o, o2;
    if (tec_dl_alloc(&a, TEC_F32, 3, sa) || tec_dl_alloc(&b, TEC_F32, 3, sb) ||
        tec_dl_alloc(&o, TEC_F32, 3, so) || tec_dl_alloc(&o2, TEC_F32, 3, so))
      return fprintf(stderr, "bmm: out of memory\n"), 1;
    fill(a.data, tec_dl_numel(&a), 1), fill(b.data, tec_dl_numel(&b), 2);
    DLTensor *args[3] = {&a, &b, &o};
    /* oneDNN: src [b][m][k] abc, weights [b][k][n] (abc, or acb when given as [b][n][k]) */
    dnnl_dims_t ds = {p->batch, p->m, p->k}, dw = {p->batch, p->k, p->n}, dd = {p->batch, p->m, p->n};
    dnnl_memory_desc_t smd, wmd, dmd;
    DN(dnnl_memory_desc_init_by_tag(&smd, 3, ds, dnnl_f32, dnnl_abc));
    DN(dnnl_memory_desc_init_by_tag(&wmd, 3, dw, dnnl_f32, p->transpose_b ? dnnl_acb : dnnl_abc));
    DN(dnnl_memory_desc_init_by_tag(&dmd, 3, dd, dnnl_f32, dnnl_abc));
    dnnl_matmul_desc_t md;
    DN(dnnl_matmul_desc_init(&md, &smd, &wmd, NULL, &dmd));
    dnnl_primitive_desc_t pd;
    DN(dnnl_primitive_desc_create(&pd, &md, NULL, eng, NULL));
    const char *impl = "";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    dnnl_primitive_t prim;
    DN(dnnl_primitive_create(&prim, pd));
    dnnl_memory_t ms, mw, mdst;
    DN(dnnl_memory_create(&ms, &smd, eng, a.data));
    DN(dnnl_memory_create(&mw, &wmd, eng, b.data));
    DN(dnnl_memory_create(&mdst, &dmd, eng, o2.data));
    dnnl_exec_arg_t ea[3] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, mdst}};
    /* checked against each other once */
    if (tec_module_run(m, "bmm", 3, args)) return fprintf(stderr, "bmm: %s\n", tec_rt_last_error()), 1;
    DN(dnnl_primitive_execute(prim, strm, 3, ea));
    DN(dnnl_stream_wait(strm));
    double err = 0;
    for (int64_t i = 0; i < tec_dl_numel(&o); i++) {
      double e = fabs(((float *)o.data)[i] - ((float *)o2.data)[i]);
      err = e > err ? e : err;
    }
    if (err > 1e-3) return fprintf(stderr, "bmm: %s: tec and oneDNN differ by %g\n", shapes[s].name, err), 1;
    double rt[64], rd[64], *t = malloc(sizeof(double) * (size_t)reps);
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < reps; i++) {
        double t0 = bench_now(CLOCK_MONOTONIC);
        tec_module_run(m, "bmm", 3, args);
        t[i] = bench_now(CLOCK_MONOTONIC) - t0;
      }
      rt[r] = bench_median(t, reps) * 1e3;
      for (int i = 0; i < reps; i++) {
        double t0 = bench_now(CLOCK_MONOTONIC);
        dnnl_primitive_execute(prim, strm, 3, ea);
        dnnl_stream_wait(strm);
        t[i] = bench_now(CLOCK_MONOTONIC) - t0;
      }
      rd[r] = bench_median(t, reps) * 1e3;
    }
    double mt, st, md2, sd;
    stats(rt, rounds, &mt, &st);
    stats(rd, rounds, &md2, &sd);
    printf("%-24s %10.4f %7.1f%% %10.4f %7.1f%% %9.3f  %s (oneDNN: %s)\n", shapes[s].name, mt, st, md2,
           sd, md2 / mt, tune_config_str(ctx, &sp, sp.default_config), impl);
    free(t);
    dnnl_memory_destroy(ms), dnnl_memory_destroy(mw), dnnl_memory_destroy(mdst);
    dnnl_primitive_destroy(prim), dnnl_primitive_desc_destroy(pd);
    tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&o), tec_dl_free(&o2);
    tec_ctx_free(ctx);
  }
  dnnl_stream_destroy(strm), dnnl_engine_destroy(eng);
  return 0;
}

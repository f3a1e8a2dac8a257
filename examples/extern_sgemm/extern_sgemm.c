/* extern_sgemm.c — tec stages and an OpenBLAS sgemm in one scheduled program (te_extern):
 *
 *   Xn[i, k] = X[i, k] * s[k]           tec: a per-column scale
 *   G        = Xn . W                    extern: cblas_sgemm, one call per tile of rows
 *   Y[i, j]  = max(G[i, j] + b[j], 0)    tec: bias + relu, vectorized
 *
 * Y's rows are split by --tile; G and Xn are computed at that tile loop. Bound inference goes
 * through the sgemm's region function (the rows of Xn are G's rows, W is needed whole), so each
 * tile scales only its own rows of X and calls sgemm on them; the printed program shows it.
 * The result is checked against plain C. With --parallel 1 the tile loop runs on the thread
 * pool (the wrapper is declared thread-safe; OpenBLAS itself is kept to one thread).
 *
 * --emit DIR writes the same program for AArch64 (extern_gemm.o, extern_gemm.h) calling the
 * function by the name `user_sgemm`, which the header declares; run_arm.sh links it with a
 * plain-C user_sgemm (driver_arm.c) and runs it under qemu-aarch64. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "example_args.h"
#include "tec/tec.h"

void openblas_set_num_threads(int n);

/* bufs: Xn's rows of this tile [rows, K], W [K, N], G's rows [rows, N] */
static int32_t sgemm_tile(const tec_extern_buffer *b, int32_t nbuf) {
  if (nbuf != 3) return 1;
  const DLTensor *a = &b[0].dl, *w = &b[1].dl, *g = &b[2].dl;
  if (a->strides[1] != 1 || w->strides[1] != 1 || g->strides[1] != 1) return 2; /* rows only */
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g->shape[0], (int)g->shape[1],
              (int)a->shape[1], 1.0f, a->data, (int)a->strides[0], w->data, (int)w->strides[0],
              0.0f, g->data, (int)g->strides[0]);
  return 0;
}

/* input 0 (Xn): the output's rows, every column; input 1 (W): all of it */
static int gemm_region(tec_ctx *ctx, int input, const ir_expr *const *omin,
                       const ir_expr *const *oext, const ir_expr **imin, const ir_expr **iext,
                       void *user) {
  const int64_t *shape = user; /* M, N, K */
  if (input == 0) {
    imin[0] = omin[0], iext[0] = oext[0];
    imin[1] = ir_int(ctx, 0), iext[1] = ir_int(ctx, shape[2]);
  } else {
    imin[0] = ir_int(ctx, 0), iext[0] = ir_int(ctx, shape[2]);
    imin[1] = ir_int(ctx, 0), iext[1] = ir_int(ctx, shape[1]);
  }
  return 0;
}

typedef struct prog {
  te_tensor *X, *s, *W, *b, *Xn, *G, *Y;
} prog;

static const ir_expr *scale(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  (void)ctx;
  prog *p = user;
  return ir_mul(TE_AT(p->X, i[0], i[1]), TE_AT(p->s, i[1]));
}

static const ir_expr *bias_relu(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  prog *p = user;
  return ir_max(ir_add(TE_AT(p->G, i[0], i[1]), TE_AT(p->b, i[1])), ir_float(ctx, 0));
}

static float *rnd(size_t n, unsigned seed) {
  float *x = malloc(n * sizeof *x);
  for (size_t k = 0; x && k < n; k++) {
    seed = seed * 1664525u + 1013904223u;
    x[k] = (float)(seed >> 8) / 16777216.0f - 0.5f;
  }
  return x;
}

int main(int argc, char **argv) {
  int64_t M = 256, N = 192, K = 128, tile = 32, par = 0;
  const char *emit = "";
  ex_opt opts[] = {
      {"m", EX_INT, &M, 1, 4096, "rows of X and Y"},
      {"n", EX_INT, &N, 1, 4096, "columns of W and Y (a multiple of 16 vectorizes)"},
      {"k", EX_INT, &K, 1, 4096, "columns of X, rows of W"},
      {"tile", EX_INT, &tile, 1, 4096, "rows per tile: one sgemm call each"},
      {"parallel", EX_INT, &par, 0, 1, "1: the tile loop on the thread pool"},
      {"emit", EX_WORD, &emit, 0, 0, "a directory: write the AArch64 object and header there instead"},
  };
  int rc = ex_args_parse("Y = relu((X * s) . W + b): tec stages around an OpenBLAS sgemm called "
                         "per tile of rows (te_extern), checked against plain C.",
                         argc, argv, opts, 6);
  if (rc) return rc == 1 ? 0 : 2;
  openblas_set_num_threads(1);
  tec_ctx *ctx = tec_ctx_new();
  int64_t shape[3] = {M, N, K};
  prog p = {0};
  p.X = te_placeholder(ctx, "X", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  p.s = te_placeholder(ctx, "s", TEC_F32, 1, TE_SHAPE(ctx, K));
  p.W = te_placeholder(ctx, "W", TEC_F32, 2, TE_SHAPE(ctx, K, N));
  p.b = te_placeholder(ctx, "b", TEC_F32, 1, TE_SHAPE(ctx, N));
  p.Xn = te_compute(ctx, &(te_compute_decl){.name = "Xn", .ndim = 2, .shape = TE_SHAPE(ctx, M, K),
                                            .body = scale, .user = &p});
  te_tensor *gin[2] = {p.Xn, p.W};
  p.G = te_extern(ctx, &(te_extern_decl){.name = "G", .type = TEC_F32, .ndim = 2,
                                         .shape = TE_SHAPE(ctx, M, N), .ninputs = 2,
                                         .inputs = gin, .symbol = "user_sgemm",
                                         .fn = *emit ? NULL : sgemm_tile, .region = gemm_region,
                                         .user = shape, .thread_safe = 1});
  p.Y = p.G ? te_compute(ctx, &(te_compute_decl){.name = "Y", .ndim = 2,
                                                  .shape = TE_SHAPE(ctx, M, N), .body = bias_relu,
                                                  .user = &p})
            : NULL;
  sch_schedule *s = p.Y ? sch_create(ctx, 1, &p.Y) : NULL;
  sch_stage *y = s ? sch_stage_of(s, p.Y) : NULL;
  sch_iter *io = NULL, *ii = NULL, *jo = NULL, *ji = NULL;
  int bad = !s || sch_split(y, sch_axis(y, 0), tile, &io, &ii) ||
            sch_split(y, sch_axis(y, 1), 16, &jo, &ji) || sch_vectorize(y, ji) ||
            (par && sch_parallel(y, io)) || sch_compute_at(sch_stage_of(s, p.G), y, io) ||
            sch_compute_at(sch_stage_of(s, p.Xn), y, io);
  te_tensor *args[5] = {p.X, p.s, p.W, p.b, p.Y};
  lower_func *f = bad ? NULL : tec_lower(s, "extern_gemm", 5, args);
  if (!f) {
    fprintf(stderr, "extern_sgemm: %s\n", tec_ctx_error(ctx));
    tec_ctx_free(ctx);
    return 1;
  }
  tec_lower_print(stdout, f);
  if (*emit) { /* AArch64: the object calls user_sgemm by name; the header declares it */
    static const struct { tec_emit_kind kind; const char *ext; } out[] = {
        {TEC_EMIT_OBJECT, "o"}, {TEC_EMIT_HEADER, "h"}};
    for (int k = 0; k < 2; k++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/extern_gemm.%s", emit, out[k].ext);
      if (tec_emit(ctx, 1, &f, "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon",
                   out[k].kind, path)) {
        fprintf(stderr, "extern_sgemm: %s\n", tec_ctx_error(ctx));
        tec_ctx_free(ctx);
        return 1;
      }
      printf("wrote %s\n", path);
    }
    tec_ctx_free(ctx);
    return 0;
  }
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  tec_packed_fn fn = m ? tec_module_get(m, "extern_gemm") : NULL;
  if (!fn) {
    fprintf(stderr, "extern_sgemm: %s\n", tec_ctx_error(ctx));
    tec_ctx_free(ctx);
    return 1;
  }
  DLTensor t[5];
  int64_t shp[5][2] = {{M, K}, {K, 0}, {K, N}, {N, 0}, {M, N}};
  int nd[5] = {2, 1, 2, 1, 2};
  for (int a = 0; a < 5; a++) tec_dl_alloc(&t[a], TEC_F32, nd[a], shp[a]);
  float *x = rnd((size_t)(M * K), 1), *sc = rnd((size_t)K, 2), *w = rnd((size_t)(K * N), 3),
        *bb = rnd((size_t)N, 4);
  memcpy(t[0].data, x, sizeof(float) * (size_t)(M * K));
  memcpy(t[1].data, sc, sizeof(float) * (size_t)K);
  memcpy(t[2].data, w, sizeof(float) * (size_t)(K * N));
  memcpy(t[3].data, bb, sizeof(float) * (size_t)N);
  int status = 0;
  if (fn((DLTensor *[]){&t[0], &t[1], &t[2], &t[3], &t[4]}, 5) != 0) {
    fprintf(stderr, "extern_sgemm: %s\n", tec_rt_last_error());
    status = 1;
  }
  /* the plain-C reference: the same three steps, accumulated in double */
  double worst = 0;
  const float *yv = t[4].data;
  for (int64_t i = 0; i < M && !status; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) acc += (double)(x[i * K + k] * sc[k]) * w[k * N + j];
      double want = acc + bb[j] > 0 ? acc + bb[j] : 0;
      double e = fabs(yv[i * N + j] - want) / (1 + fabs(want));
      if (!(e <= worst)) worst = e;
    }
  if (!status) {
    printf("Y = relu((X * s) . W + b), %lldx%lldx%lld, %lld sgemm calls of %lld rows: max "
           "relative error %.2e vs plain C\n", (long long)M, (long long)N, (long long)K,
           (long long)((M + tile - 1) / tile), (long long)tile, worst);
    if (!(worst < 1e-5)) status = 1;
  }
  for (int a = 0; a < 5; a++) tec_dl_free(&t[a]);
  free(x), free(sc), free(w), free(bb);
  tec_ctx_free(ctx);
  puts(status ? "FAILED" : "ok");
  return status;
}

/* arm_kernels.c — the GEMM micro-kernel and the depthwise 3x3 of arm_kernels.h. */
#include "arm_kernels.h"

typedef struct gemm_in {
  te_tensor *a, *b;
  const ir_expr *k;
} gemm_in;

static const ir_expr *gemm_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  gemm_in *g = user;
  return te_sum(ir_mul(TE_AT(g->a, i[0], g->k), TE_AT(g->b, g->k, i[1])), 1, &g->k, NULL);
}

#define TRY(x)                 \
  do {                         \
    if ((x) != 0) return NULL; \
  } while (0)

lower_func *ak_gemm(tec_ctx *ctx, const char *name, int64_t M, int64_t N, int64_t K, int mr,
                    int nr) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, K, N));
  gemm_in g = {A, B, te_reduce_axis_n(ctx, "k", K)};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                     .shape = TE_SHAPE(ctx, M, N),
                                                     .body = gemm_body, .user = &g});
  if (!C) return NULL;
  sch_schedule *s = sch_create(ctx, 1, &C);
  te_tensor *CL = s ? sch_cache_write(s, C, "local") : NULL;
  if (!CL) return NULL;
  sch_stage *sc = sch_stage_of(s, C), *sl = sch_stage_of(s, CL);
  sch_iter *io, *jo, *ii, *ji;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), mr, nr, &io, &jo, &ii, &ji));
  TRY(sch_vectorize(sc, ji));
  TRY(sch_compute_at(sl, sc, jo));
  sch_iter *li = sch_axis(sl, 0), *lj = sch_axis(sl, 1), *lk = sch_reduce_axis(sl, 0);
  TRY(sch_reorder(sl, 3, (sch_iter *[]){lk, li, lj}));
  TRY(sch_unroll(sl, li));
  TRY(sch_vectorize(sl, lj));
  return tec_lower(s, name, 3, (te_tensor *[]){A, B, C});
}

typedef struct dw_in {
  te_tensor *in, *w;
  const ir_expr *ry, *rx;
} dw_in;

static const ir_expr *dw_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  dw_in *d = user;
  const ir_expr *x = TE_AT(d->in, ir_add(i[0], d->ry), ir_add(i[1], d->rx), i[2]);
  return te_sum(ir_mul(x, TE_AT(d->w, d->ry, d->rx, i[2])), 2,
                (const ir_expr *[]){d->ry, d->rx}, NULL);
}

lower_func *ak_dwconv3x3(tec_ctx *ctx, const char *name, int64_t C, int64_t H, int64_t W,
                         int wt, int cb) {
  te_tensor *In = te_placeholder(ctx, "In", TEC_F32, 3, TE_SHAPE(ctx, H + 2, W + 2, C));
  te_tensor *Wt = te_placeholder(ctx, "Wt", TEC_F32, 3, TE_SHAPE(ctx, 3, 3, C));
  dw_in d = {In, Wt, te_reduce_axis_n(ctx, "ry", 3), te_reduce_axis_n(ctx, "rx", 3)};
  te_tensor *Out = te_compute(ctx, &(te_compute_decl){.name = "Out", .ndim = 3,
                                                       .shape = TE_SHAPE(ctx, H, W, C),
                                                       .body = dw_body, .user = &d,
                                                       .axis_names = (const char *[]){"h", "w", "c"}});
  if (!Out) return NULL;
  sch_schedule *s = sch_create(ctx, 1, &Out);
  te_tensor *OL = s ? sch_cache_write(s, Out, "local") : NULL;
  if (!OL) return NULL;
  sch_stage *so = sch_stage_of(s, Out), *sl = sch_stage_of(s, OL);
  sch_iter *wo, *wi, *co, *ci;
  TRY(sch_split(so, sch_axis(so, 1), wt, &wo, &wi));
  TRY(sch_split(so, sch_axis(so, 2), cb, &co, &ci));
  TRY(sch_reorder(so, 5, (sch_iter *[]){sch_axis(so, 0), wo, co, wi, ci}));
  TRY(sch_vectorize(so, ci));
  TRY(sch_compute_at(sl, so, co));
  sch_iter *lw = sch_axis(sl, 1), *lc = sch_axis(sl, 2);
  sch_iter *ry = sch_reduce_axis(sl, 0), *rx = sch_reduce_axis(sl, 1);
  TRY(sch_reorder(sl, 4, (sch_iter *[]){ry, rx, lw, lc}));
  TRY(sch_unroll(sl, ry));
  TRY(sch_unroll(sl, rx));
  TRY(sch_unroll(sl, lw));
  TRY(sch_vectorize(sl, lc));
  return tec_lower(s, name, 3, (te_tensor *[]){In, Wt, Out});
}

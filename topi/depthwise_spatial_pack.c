/* depthwise_spatial_pack.c — depthwise convolution with spatial packing (TVM arm_cpu, 2018).
 *
 *   pad[n, c, y, x]   = in bounds ? data[n, c, y - p, x - p] : 0            (inlined)
 *   A1[n, C, y, x, v] = pad[n, C*VC + v, y, x]                 packed data  (every call)
 *   B1[C, m, i, j, v] = kernel[C*VC + v, m, i, j]              packed kernel (prepare: constant)
 *   C0[n, C, oy, ox, v] = sum_{i,j} A1[..., oy*s + i, ox*s + j, v] * B1[C, 0, i, j, v]
 *   out[n, c, oy, ox] = max(C0[n, c/VC, oy, ox, c%VC] + bias[c], 0)
 * C0 is computed per tile of output rows inside the output's loops, its VC lanes vectorized,
 * the tile's columns unrolled so the accumulators stay in registers. */
#include <string.h>
#include "tec/topi.h"
#include "tec/te.h"

typedef struct dw_decl {
  const topi_dw_problem *p;
  te_tensor *data, *kernel, *bias, *pad, *dw;
  const ir_expr *ri, *rj;
} dw_decl;

static const ir_expr *pad_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dw_decl *d = u;
  const ir_expr *p = ir_int(ctx, d->p->pad);
  const ir_expr *y = ir_sub(i[2], p), *x = ir_sub(i[3], p);
  const ir_expr *zero = ir_int(ctx, 0);
  const ir_expr *in = ir_and(ir_and(ir_ge(y, zero), ir_lt(y, ir_int(ctx, d->p->h))),
                             ir_and(ir_ge(x, zero), ir_lt(x, ir_int(ctx, d->p->w))));
  return ir_select(in, TE_AT(d->data, i[0], i[1], y, x), ir_float(ctx, 0.0));
}

static const ir_expr *dw_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dw_decl *d = u;
  const ir_expr *s = ir_int(ctx, d->p->stride);
  const ir_expr *x = TE_AT(d->pad, i[0], i[1], ir_add(ir_mul(i[2], s), d->ri),
                           ir_add(ir_mul(i[3], s), d->rj));
  const ir_expr *w = TE_AT(d->kernel, i[1], ir_int(ctx, 0), d->ri, d->rj);
  return te_sum(ir_mul(x, w), 2, (const ir_expr *[]){d->ri, d->rj}, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dw_decl *d = u;
  const ir_expr *v = ir_add(TE_AT(d->dw, i[0], i[1], i[2], i[3]), TE_AT(d->bias, i[1]));
  return ir_max(v, ir_float(ctx, 0.0));
}

/* split + reorder so `c` is packed innermost, then cache_write the copy into that layout and
 * inline the copy: the reader now reads the packed tensor. */
static te_tensor *pack(sch_schedule *s, te_tensor *copy, int caxis, int64_t vc) {
  sch_stage *st = sch_stage_of(s, copy);
  sch_iter *co, *ci;
  if (!st || sch_split(st, sch_axis(st, caxis), vc, &co, &ci)) return NULL;
  sch_iter *order[5];
  int n = 0;
  for (int i = 0; i < copy->ndim; i++) order[n++] = i == caxis ? co : sch_axis(st, i);
  order[n++] = ci;
  if (sch_reorder(st, n, order)) return NULL;
  te_tensor *packed = sch_cache_write(s, copy, "global");
  if (!packed || sch_compute_inline(sch_stage_of(s, copy))) return NULL;
  return packed;
}

int topi_depthwise_spatial_pack(tec_ctx *ctx, const topi_dw_problem *p, const topi_dw_config *cfg,
                                topi_op *op) {
  if (!ctx) return -1;
  if (!p || !cfg || !op)
    return tec_ctx_set_error(ctx, "topi_depthwise_spatial_pack: problem, config and op are required");
  if (p->n < 1 || p->c < 1 || p->h < 1 || p->w < 1 || p->kh < 1 || p->kw < 1 || p->stride < 1 ||
      p->pad < 0)
    return tec_ctx_set_error(ctx, "topi_depthwise_spatial_pack: sizes must be >= 1 and pad >= 0 "
                                  "(got n=%lld c=%lld h=%lld w=%lld k=%lldx%lld stride=%lld pad=%lld)",
                             (long long)p->n, (long long)p->c, (long long)p->h, (long long)p->w,
                             (long long)p->kh, (long long)p->kw, (long long)p->stride,
                             (long long)p->pad);
  int64_t oh = (p->h + 2 * p->pad - p->kh) / p->stride + 1;
  int64_t ow = (p->w + 2 * p->pad - p->kw) / p->stride + 1;
  if (oh < 1 || ow < 1)
    return tec_ctx_set_error(ctx, "topi_depthwise_spatial_pack: the kernel is larger than the "
                                  "padded input");
  if (cfg->vc < 1 || cfg->tile_h < 1 || cfg->tile_w < 1)
    return tec_ctx_set_error(ctx, "topi_depthwise_spatial_pack: vc, tile_h and tile_w must be >= 1");
  memset(op, 0, sizeof *op);
  dw_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  if (!d) return -1;
  d->p = p;
  d->data = te_placeholder(ctx, "data", TEC_F32, 4, TE_SHAPE(ctx, p->n, p->c, p->h, p->w));
  d->kernel = te_const_placeholder(ctx, "kernel", TEC_F32, 4, TE_SHAPE(ctx, p->c, 1, p->kh, p->kw));
  d->bias = te_const_placeholder(ctx, "bias", TEC_F32, 1, TE_SHAPE(ctx, p->c));
  d->ri = te_reduce_axis_n(ctx, "ki", p->kh);
  d->rj = te_reduce_axis_n(ctx, "kj", p->kw);
  static const char *const nchw[] = {"n", "c", "y", "x"};
  d->pad = te_compute(ctx, &(te_compute_decl){"pad", 4,
                                              TE_SHAPE(ctx, p->n, p->c, p->h + 2 * p->pad,
                                                       p->w + 2 * p->pad),
                                              pad_body, d, "pad", nchw});
  d->dw = te_compute(ctx, &(te_compute_decl){"dw", 4, TE_SHAPE(ctx, p->n, p->c, oh, ow), dw_body,
                                             d, "depthwise_conv2d_nchw", nchw});
  te_tensor *out = te_compute(ctx, &(te_compute_decl){"out", 4, TE_SHAPE(ctx, p->n, p->c, oh, ow),
                                                      out_body, d, "bias_relu", nchw});
  sch_schedule *s = sch_create(ctx, 1, &out);
  if (!s) return -1;
  int64_t vc = cfg->vc;
  /* data: pad inlined into its packed copy A1 [n, C, y, x, VC] */
  if (sch_compute_inline(sch_stage_of(s, d->pad))) return -1;
  te_tensor *a0 = sch_cache_read(s, d->pad, "global", 1, &d->dw);
  if (!a0 || !pack(s, a0, 1, vc)) return -1;
  /* kernel: B1 [C, 1, kh, kw, VC], constant-derived: prepare */
  te_tensor *b0 = sch_cache_read(s, d->kernel, "global", 1, &d->dw);
  if (!b0 || !pack(s, b0, 0, vc)) return -1;
  /* the accumulator C0 [n, C, oy, ox, VC]; dw becomes its unpacking, inlined into out */
  te_tensor *c0 = pack(s, d->dw, 1, vc);
  if (!c0) return -1;
  /* out: parallel over channel blocks, C0 computed per tile of rows */
  sch_stage *so = sch_stage_of(s, out), *sc = sch_stage_of(s, c0);
  sch_iter *co, *cv, *yo, *yi, *xo, *xi;
  if (sch_split(so, sch_axis(so, 1), vc, &co, &cv) ||
      sch_split(so, sch_axis(so, 2), cfg->tile_h, &yo, &yi) ||
      sch_reorder(so, 6, (sch_iter *[]){sch_axis(so, 0), co, yo, yi, cv, sch_axis(so, 3)}) ||
      (cfg->parallel && sch_parallel(so, co)) || sch_compute_at(sc, so, yo))
    return -1;
  /* C0: rows of the tile, columns in register tiles, VC lanes vectorized */
  sch_iter *ky = sch_reduce_axis(sc, 0), *kx = sch_reduce_axis(sc, 1);
  if (sch_split(sc, sch_axis(sc, 3), cfg->tile_w, &xo, &xi) ||
      sch_reorder(sc, 8, (sch_iter *[]){sch_axis(sc, 0), sch_axis(sc, 1), sch_axis(sc, 2), xo, ky,
                                        kx, xi, sch_axis(sc, 4)}) ||
      sch_unroll(sc, ky) || sch_unroll(sc, kx) || sch_unroll(sc, xi) ||
      sch_vectorize(sc, sch_axis(sc, 4)))
    return -1;
  op->sched = s;
  op->nargs = 4;
  op->args[0] = d->data;
  op->args[1] = d->kernel;
  op->args[2] = d->bias;
  op->args[3] = out;
  op->out = out;
  return 0;
}

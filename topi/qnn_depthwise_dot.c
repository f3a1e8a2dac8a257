/* qnn_depthwise_dot.c — qnn_depthwise's dot path (config dot = 1): the window's taps along a
 * row as dot4's group of 4, the block's channels as its lanes (docs/quantized.md). A channel
 * reads 4 consecutive input pixels, which in NCHW[x]c lie x bytes apart: dot4's transposed
 * operand (ir_dot4_t; one 4x-byte read permuted by vpermb), against the kernel packed with its
 * columns padded to a multiple of 4 (zero taps) in prepare:
 *
 *   kp[C, ky, g, v, q]  = kernel[C*x + v, 0, ky, g*4 + q] (0 past c and past kw)         int8
 *   dp[n, C, yy, xx, v] = data[.., yy - pad_h, xx - pad_w, v] (+128 as uint8 on VNNI: vpdpbusd
 *                         multiplies u8 by s8), zp_in (+128) in the padding and past the right
 *                         edge (read by the zero taps and the padded tile only)
 *   acc[n, C, oy, ox, v] = sum_{ky, g, q} dp[n, C, oy*s + ky, ox*s + g*4 + q, v] * kp[C, ky, g, v, q]
 *   out = requant(acc + bias_q[C, v], mult[C, v]), bias_q with zp_in (+128) * sum(kernel)
 *   (on x86 acc starts from bias_q instead: te_reduce_init, no zeroing and no add per vector)
 *
 *   for n, C (parallel, fused): dp's rows of the block (its 16-byte pixels vectorized)
 *     for oy.outer: [in_row: dp's rows of the row tile, in place of the block's]
 *       for ox.outer: acc[oh_tile][ow_tile][x] = 0 (x86: bias_q[C])
 *         for ky, g: for oy.inner, ox.inner (unrolled): acc[..] = dot4_t(acc[..], dp[4 px], kp[..])
 *         out[..] = requant(acc[..])
 *
 * A 3x3 window is 3 vpdpbusd (and 3 permutes) per 16 outputs, against 9 multiply-adds on the
 * s16 path. acc (and dp) are padded to whole tiles, so the tensorized nest has no guard.
 * It needs the block to be dot4's lane count (16, 8 or 4 within the target's lanes). */
#include "topi/qnn_internal.h"

typedef struct qdd {
  const qnn_conv_args *a;
  int shift;
  int bias_init;       /* x86: acc starts from bias_q (te_reduce_init), not from 0 */
  int64_t kw4, hr, dpw; /* data_p: rows (whole tiles of output rows) and columns */
  const ir_expr *r[3]; /* ky, g, q */
  te_tensor *kp, *dp, *acc, *bias_q;
} qdd;

static const ir_expr *kp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const qdd *s = u;
  const topi_conv2d *p = &s->a->p.conv;
  const ir_expr *ch = ir_add(ir_mul(i[0], ir_int(ctx, s->a->bx)), i[3]);
  const ir_expr *kx = ir_add(ir_mul(i[2], ir_int(ctx, 4)), i[4]);
  const ir_expr *ok = ir_and(ir_lt(ch, ir_int(ctx, p->c_in)), ir_lt(kx, ir_int(ctx, p->kw)));
  const ir_expr *v = TE_AT(s->a->kernel, ir_min(ch, ir_int(ctx, p->c_in - 1)), ir_int(ctx, 0), i[1],
                           ir_min(kx, ir_int(ctx, p->kw - 1)));
  return ir_select(ok, v, ir_int_t(ctx, TEC_I8, 0));
}

static const ir_expr *dp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const qdd *s = u;
  return qnn_dot_input(ctx, i, s->a->data, &s->a->p.conv, s->hr, s->dpw, s->shift,
                       s->a->p.in.zero_point);
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const qdd *s = u;
  const topi_conv2d *p = &s->a->p.conv;
  const ir_expr *const *r = s->r;
  const ir_expr *y = ir_add(ir_mul(i[2], ir_int(ctx, p->stride_h)), r[0]);
  const ir_expr *x = ir_add(ir_add(ir_mul(i[3], ir_int(ctx, p->stride_w)),
                                   ir_mul(r[1], ir_int(ctx, 4))), r[2]);
  const ir_expr *v = TE_AT(s->dp, i[0], i[1], y, x, i[4]);
  const ir_expr *w = TE_AT(s->kp, i[1], r[0], r[1], i[4], r[2]);
  const ir_expr *sum = te_sum(ir_mul(ir_cast(TEC_I32, v), ir_cast(TEC_I32, w)), 3, r, NULL);
  /* acc's channel blocks are the output's (only its rows and columns are padded to whole
   * tiles), so bias_q[C, v] is always in bounds */
  return s->bias_init ? te_reduce_init(sum, TE_AT(s->bias_q, i[1], i[4])) : sum;
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const qdd *s = u;
  const ir_expr *acc = TE_AT(s->acc, i[0], i[1], i[2], i[3], i[4]);
  if (!s->bias_init) acc = ir_add(acc, TE_AT(s->bias_q, i[1], i[4]));
  return qnn_requant(ctx, acc, TE_AT(s->a->mult, i[1], i[4]), s->a->p.out, s->a->p.conv.epi.act);
}

int qnn_depthwise_dot_ok(int64_t block, int lanes) {
  return (block == 4 || block == 8 || block == 16) && qnn_dot_lanes(block, lanes) == block;
}

/* The dot path's stages for cfg's tile; out returned (NULL with the context's error). */
static te_tensor *stages(tec_ctx *ctx, const qnn_conv_args *a, const topi_qdepthwise_config *cfg,
                         const tec_target *target, qdd *s) {
  const topi_conv2d *c = &a->p.conv;
  int64_t cb = topi_ceil_div(c->c_in, a->bx);
  int64_t ohp = topi_ceil_div(a->oh, cfg->oh_tile) * cfg->oh_tile;
  int64_t owp = topi_ceil_div(a->ow, cfg->ow_tile) * cfg->ow_tile;
  s->a = a, s->shift = qnn_dot_shift(target), s->kw4 = topi_ceil_div(c->kw, 4) * 4;
  /* x86: the accumulators start from the bias, as qnn_conv2d's (int32 sums: the same numbers
   * in any order): no zeroing and no vpaddd per output vector. AArch64 keeps its nest (its
   * instruction counts are measured under qemu, docs/arm.md). */
  s->bias_init = target && target->arch == TEC_ARCH_X86_64;
  int64_t hr = s->hr = (ohp - 1) * c->stride_h + c->kh;
  s->dpw = (owp - 1) * c->stride_w + s->kw4;
  static const char *const rn[] = {"ky", "g", "q"}, *const kn[] = {"C", "ky", "g", "v", "q"},
                           *const dn[] = {"n", "C", "yy", "xx", "v"},
                           *const on[] = {"n", "C", "oy", "ox", "v"};
  const int64_t re[] = {c->kh, s->kw4 / 4, 4};
  for (int k = 0; k < 3; k++)
    if (!(s->r[k] = te_reduce_axis_n(ctx, rn[k], re[k]))) return NULL;
  s->kp = te_compute(ctx, &(te_compute_decl){.name = "kernel_p", .ndim = 5,
                                             .shape = TE_SHAPE(ctx, cb, c->kh, s->kw4 / 4, a->bx, 4),
                                             .body = kp_body, .user = s, .tag = "pack_kernel",
                                             .axis_names = kn});
  s->dp = te_compute(ctx, &(te_compute_decl){.name = "data_p", .ndim = 5,
                                             .shape = TE_SHAPE(ctx, c->n, cb, hr, s->dpw, a->bx),
                                             .body = dp_body, .user = s, .tag = "pad_shift",
                                             .axis_names = dn});
  s->bias_q = s->shift ? qnn_bias(ctx, a->bias, qnn_wsum(ctx, a->kernel), c->c_in, a->bx,
                                  a->p.in.zero_point + 128)
                       : a->bias_q;
  if (!s->kp || !s->dp || !s->bias_q) return NULL;
  s->acc = te_compute(ctx, &(te_compute_decl){.name = "acc", .ndim = 5,
                                              .shape = TE_SHAPE(ctx, c->n, cb, ohp, owp, a->bx),
                                              .body = acc_body, .user = s, .tag = "qnn_depthwise",
                                              .axis_names = on});
  return s->acc ? te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 5,
                                                     .shape = TE_SHAPE(ctx, c->n, cb, a->oh, a->ow, a->bx),
                                                     .body = out_body, .user = s, .tag = "requant",
                                                     .axis_names = on})
                : NULL;
}

int qnn_depthwise_dot_schedule(const topi_decl *dc, const topi_qdepthwise_config *cfg,
                               const tec_target *target, topi_op *op) {
  tec_ctx *ctx = dc->ctx;
  const qnn_conv_args *a = dc->priv;
  int lanes = topi_target_lanes(ctx, target);
  if (lanes < 0) return -1;
  if (!qnn_depthwise_dot_ok(a->bx, lanes)) {
    tec_ctx_set_error(ctx, "qnn_depthwise: dot = 1 needs the channel block (%lld) to be 4, 8 or "
                           "16 within the target's %d int32 lanes; use dot = 0",
                      (long long)a->bx, lanes);
    return -1;
  }
  qdd *s = tec_ctx_alloc(ctx, sizeof *s);
  te_tensor *o = s ? stages(ctx, a, cfg, topi_target_of(ctx, target), s) : NULL;
  if (topi_op_begin_out(dc, o, op)) return -1;
  sch_stage *so = sch_stage_of(op->sched, o), *sa = sch_stage_of(op->sched, s->acc),
            *sp = sch_stage_of(op->sched, s->dp);
  sch_iter *yo, *yi, *xo, *xi, *blk = so ? sch_axis(so, 1) : NULL;
  if (!so || !sa || !sp || sch_split(so, sch_axis(so, 2), cfg->oh_tile, &yo, &yi) ||
      sch_split(so, sch_axis(so, 3), cfg->ow_tile, &xo, &xi) ||
      sch_reorder(so, 7, (sch_iter *[]){sch_axis(so, 0), blk, yo, xo, yi, xi, sch_axis(so, 4)}) ||
      sch_unroll(so, yi) || sch_unroll(so, xi) || sch_vectorize(so, sch_axis(so, 4)))
    return -1;
  if (cfg->parallel && (sch_fuse(so, sch_axis(so, 0), blk, &blk) || sch_parallel(so, blk)))
    return -1;
  /* acc at the tile; the padded input at its block (in L2) or, in_row, at the row tile (the
   * rows it reads, in L1: (oh_tile - 1) * s + kh rows per oh_tile), its pixels vectorized */
  if (sch_compute_at(sa, so, xo) || sch_compute_at(sp, so, cfg->in_row ? yo : blk) ||
      sch_vectorize(sp, sch_axis(sp, 4)))
    return -1;
  sch_iter *ky = sch_reduce_axis(sa, 0), *g = sch_reduce_axis(sa, 1), *q = sch_reduce_axis(sa, 2);
  if (sch_reorder(sa, 8, (sch_iter *[]){sch_axis(sa, 0), sch_axis(sa, 1), ky, g, sch_axis(sa, 2),
                                        sch_axis(sa, 3), sch_axis(sa, 4), q}) ||
      sch_unroll(sa, sch_axis(sa, 2)) || sch_unroll(sa, sch_axis(sa, 3)) ||
      sch_tensorize(sa, sch_axis(sa, 4), SCH_INTRIN_DOT4))
    return -1;
  return 0;
}

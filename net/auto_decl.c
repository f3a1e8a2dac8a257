/* auto_decl.c — the convolutions and the fully connected layer of an auto-scheduled network (options.autosched) as plain te
 * compute in the templated layers' layouts: the same arguments (data in its NCHW[x]c buffer with
 * its margin, the kernel OIHW and the bias plain and constant, a residual and the output as
 * windows of their buffers: topi_conv_declare_args, topi_set_margin), three stages and the
 * constants' packing:
 *
 *   kp[O][I][ky][kx][u][v] = kernel[O*B + v][I*X + u][ky][kx]       (depthwise: kp[O][ky][kx][v])
 *   conv[n][O][oy][ox][v]  = sum over I, ky, kx, u of data(n, I*X + u, oy*s + ky - p, ...) kp[...]
 *   out[n][O][oy][ox][v]   = act(conv + bias_p[O][v] (+ residual))          the output's margin
 *
 * The templates' own declarations are shaped for their schedules (conv2d_nchwc flattens a 1x1
 * layer's rows and columns into one axis, so its epilogue cannot be a tile's anchor); this is
 * the declaration a user writes, and what the auto-scheduler tiles, fuses and vectorizes
 * without a template. The constants' layout (output channels innermost, as the output's block)
 * is the declaration's: computed once, in prepare. Padding past the input's margin is read
 * through compares (topi_pad_read). */
#include "net/internal.h"
#include "topi/internal.h"

#define WHO "net autosched conv"

typedef struct ad_conv {
  topi_conv2d p;
  topi_conv_args a;
  int64_t xb, yb, nib, nob;
  int dw;
  te_tensor *kp, *bp, *conv;
  const ir_expr *ric, *rky, *rkx, *ru;
} ad_conv;

/* the kernel packed into channel blocks (topi_kernel_at: zero past the channel counts) */
static const ir_expr *kp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ad_conv *d = u;
  int gy = d->p.c_out % d->yb != 0;
  if (d->dw) /* [O][ky][kx][v] */
    return topi_kernel_at(ctx, d->a.kernel, ir_add(ir_mul(i[0], ir_int(ctx, d->yb)), i[3]),
                          d->p.c_out, gy, NULL, 0, 0, i[1], i[2]);
  return topi_kernel_at(ctx, d->a.kernel, ir_add(ir_mul(i[0], ir_int(ctx, d->yb)), i[5]),
                        d->p.c_out, gy, ir_add(ir_mul(i[1], ir_int(ctx, d->xb)), i[4]), d->p.c_in,
                        d->p.c_in % d->xb != 0, i[2], i[3]);
}

static const ir_expr *conv_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ad_conv *d = u;
  const ir_expr *y = ir_add(ir_mul(i[2], ir_int(ctx, d->p.stride_h)), topi_dilate(ctx, d->rky, d->p.dilation_h));
  const ir_expr *x = ir_add(ir_mul(i[3], ir_int(ctx, d->p.stride_w)), topi_dilate(ctx, d->rkx, d->p.dilation_w));
  if (d->p.pad_h) y = ir_sub(y, ir_int(ctx, d->p.pad_h));
  if (d->p.pad_w) x = ir_sub(x, ir_int(ctx, d->p.pad_w));
  if (d->dw) {
    const ir_expr *c = ir_add(ir_mul(i[1], ir_int(ctx, d->yb)), i[4]);
    const ir_expr *a = topi_pad_read(d->a.data, d->p.in_layout, d->p.h, d->p.w, i[0], c, y, x,
                                     d->p.pad_h, d->p.pad_w);
    const ir_expr *w = TE_AT(d->kp, i[1], d->rky, d->rkx, i[4]);
    return te_sum(ir_mul(a, w), 2, (const ir_expr *[]){d->rky, d->rkx}, NULL);
  }
  const ir_expr *c = ir_add(ir_mul(d->ric, ir_int(ctx, d->xb)), d->ru);
  const ir_expr *a = topi_pad_read(d->a.data, d->p.in_layout, d->p.h, d->p.w, i[0], c, y, x,
                                   d->p.pad_h, d->p.pad_w);
  const ir_expr *w = TE_AT(d->kp, i[1], d->ric, d->rky, d->rkx, d->ru, i[4]);
  return te_sum(ir_mul(a, w), 4, (const ir_expr *[]){d->ric, d->rky, d->rkx, d->ru}, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ad_conv *d = u;
  const ir_expr *acc = TE_AT(d->conv, i[0], i[1], i[2], i[3], i[4]);
  return topi_epilogue_expr(ctx, &d->p.epi, acc, d->bp ? TE_AT(d->bp, i[1], i[4]) : NULL,
                            d->a.residual ? TE_AT(d->a.residual, i[0], i[1], i[2], i[3], i[4])
                                          : NULL);
}

int net_auto_declare_conv(tec_ctx *ctx, const topi_template *t, const topi_conv2d *p,
                          topi_decl *out) {
  if (p->out_layout.kind != TOPI_NCHWC || (p->in_layout.kind != TOPI_NCHWC && p->in_layout.kind != TOPI_NCHW) ||
      (p->groups != 1 && (p->groups != p->c_in || p->c_out != p->c_in)))
    return tec_ctx_set_error(ctx, WHO ": an NCHW or NCHW<x>c input, an NCHW<x>c output and groups "
                                  "1 or depthwise (groups = channels); this layer has an %s input, "
                                  "an %s output and groups %lld",
                             p->in_layout.kind == TOPI_NCHWC ? "NCHW<x>c" : p->in_layout.kind == TOPI_NCHW ? "NCHW" : "other",
                             p->out_layout.kind == TOPI_NCHWC ? "NCHW<x>c" : p->out_layout.kind == TOPI_NCHW ? "NCHW" : "other",
                             (long long)p->groups);
  if (net_auto_winograd_m(p)) return net_auto_declare_winograd(ctx, t, p, out);
  ad_conv *d = tec_ctx_alloc(ctx, sizeof *d);
  if (!d) return -1;
  d->p = *p;
  if (topi_conv_declare_args(ctx, WHO, p, &d->a)) return -1;
  d->dw = p->groups > 1;
  d->yb = p->out_layout.block;
  d->xb = p->in_layout.kind == TOPI_NCHWC ? p->in_layout.block : topi_divisor_upto(p->c_in, 16);
  if (d->dw && (p->in_layout.kind != TOPI_NCHWC || d->xb != d->yb))
    return tec_ctx_set_error(ctx, WHO ": a depthwise layer reads and writes NCHW<x>c of one block "
                                  "size; in %lld, out %lld", (long long)d->xb, (long long)d->yb);
  d->nib = topi_ceil_div(p->c_in, d->xb);
  d->nob = topi_ceil_div(p->c_out, d->yb);
  d->rky = te_reduce_axis_n(ctx, "ky", p->kh);
  d->rkx = te_reduce_axis_n(ctx, "kx", p->kw);
  if (!d->dw) {
    d->ric = te_reduce_axis_n(ctx, "ic", d->nib);
    d->ru = te_reduce_axis_n(ctx, "icv", d->xb);
  }
  static const char *const kpn[] = {"O", "I", "i", "j", "u", "v"}, *const kdn[] = {"O", "i", "j", "v"};
  d->kp = te_compute(ctx, &(te_compute_decl){
                              .name = "kernel_p", .ndim = d->dw ? 4 : 6,
                              .shape = d->dw ? TE_SHAPE(ctx, d->nob, p->kh, p->kw, d->yb)
                                             : TE_SHAPE(ctx, d->nob, d->nib, p->kh, p->kw, d->xb, d->yb),
                              .body = kp_body, .user = d, .axis_names = d->dw ? kdn : kpn});
  if (d->a.bias && !(d->bp = topi_pack_bias(ctx, d->a.bias, p->c_out, d->yb))) return -1;
  static const char *const n5[] = {"n", "oc", "oy", "ox", "ocv"};
  d->conv = te_compute(ctx, &(te_compute_decl){
                                .name = "conv", .ndim = 5,
                                .shape = TE_SHAPE(ctx, p->n, d->nob, d->a.oh, d->a.ow, d->yb),
                                .body = conv_body, .user = d, .axis_names = n5});
  te_tensor *o = te_compute(ctx, &(te_compute_decl){
                                     .name = "out", .ndim = 5,
                                     .shape = TE_SHAPE(ctx, p->n, d->nob, d->a.oh, d->a.ow, d->yb),
                                     .body = out_body, .user = d, .axis_names = n5});
  if (!d->kp || !d->conv || !o || topi_set_margin(ctx, WHO, o, p->out_layout)) return -1;
  return topi_conv_finish_decl(ctx, t, p, &d->a, o, d, out);
}

/* ---- the fully connected layer: out[i][j] = sum over k of a[i][k] bt[k][j] + bias[j], the
 * weights [classes][c] transposed once (constants: in prepare) so the classes are the
 * unit-stride axis the output's vectors run along ---- */

typedef struct ad_dense {
  topi_dense p;
  te_tensor *a, *b, *bias, *bt, *acc;
  const ir_expr *k;
} ad_dense;

static const ir_expr *bt_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  const ad_dense *d = u;
  return TE_AT(d->b, i[1], i[0]);
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  const ad_dense *d = u;
  return te_sum(ir_mul(TE_AT(d->a, i[0], d->k), TE_AT(d->bt, d->k, i[1])), 1, &d->k, NULL);
}

static const ir_expr *fc_out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ad_dense *d = u;
  return topi_epilogue_expr(ctx, &d->p.epi, TE_AT(d->acc, i[0], i[1]),
                            d->bias ? TE_AT(d->bias, i[1]) : NULL, NULL);
}

int net_auto_declare_dense(tec_ctx *ctx, const topi_template *t, const topi_dense *p,
                           topi_decl *out) {
  if (!p->b_transposed || !p->const_b || p->epi.residual)
    return tec_ctx_set_error(ctx, "net autosched dense: constant weights [n][k] and no residual "
                                  "(what net_dense declares)");
  ad_dense *d = tec_ctx_alloc(ctx, sizeof *d);
  te_tensor **args = tec_ctx_alloc(ctx, 4 * sizeof *args);
  if (!d || !args) return -1;
  *d = (ad_dense){.p = *p, .k = te_reduce_axis_n(ctx, "k", p->k)};
  d->a = te_placeholder(ctx, "a", TEC_F32, 2, TE_SHAPE(ctx, p->m, p->k));
  d->b = te_const_placeholder(ctx, "b", TEC_F32, 2, TE_SHAPE(ctx, p->n, p->k));
  if (p->epi.bias) d->bias = te_const_placeholder(ctx, "bias", TEC_F32, 1, TE_SHAPE(ctx, p->n));
  static const char *const btn[] = {"kk", "jj"}, *const on[] = {"i", "j"};
  d->bt = te_compute(ctx, &(te_compute_decl){.name = "b_t", .ndim = 2,
                                             .shape = TE_SHAPE(ctx, p->k, p->n), .body = bt_body,
                                             .user = d, .axis_names = btn});
  d->acc = te_compute(ctx, &(te_compute_decl){.name = "acc", .ndim = 2,
                                              .shape = TE_SHAPE(ctx, p->m, p->n), .body = acc_body,
                                              .user = d, .axis_names = on});
  te_tensor *o = d->acc ? te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 2,
                                                             .shape = TE_SHAPE(ctx, p->m, p->n),
                                                             .body = fc_out_body, .user = d,
                                                             .axis_names = on})
                        : NULL;
  if (!d->a || !d->b || (p->epi.bias && !d->bias) || !d->bt || !o) return -1;
  int n = 0;
  args[n++] = d->a, args[n++] = d->b;
  if (d->bias) args[n++] = d->bias;
  args[n++] = o;
  topi_dense *copy = tec_ctx_alloc(ctx, sizeof *copy);
  if (!copy) return -1;
  *copy = *p;
  *out = (topi_decl){t, ctx, copy, n, args, o, d};
  return 0;
}

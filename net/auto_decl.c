/* auto_decl.c — the convolutions of an auto-scheduled network (options.autosched) as plain te
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

/* the kernel's element (oc, ic, ky, kx), zero past the channel counts */
static const ir_expr *kernel_at(tec_ctx *ctx, const ad_conv *d, const ir_expr *oc,
                                const ir_expr *ic, const ir_expr *ky, const ir_expr *kx) {
  const ir_expr *cond = NULL;
  if (d->p.c_out % d->yb) {
    cond = ir_lt(oc, ir_int(ctx, d->p.c_out));
    oc = ir_min(oc, ir_int(ctx, d->p.c_out - 1));
  }
  if (ic && !d->dw && d->p.c_in % d->xb) {
    const ir_expr *c = ir_lt(ic, ir_int(ctx, d->p.c_in));
    cond = cond ? ir_and(cond, c) : c;
    ic = ir_min(ic, ir_int(ctx, d->p.c_in - 1));
  }
  const ir_expr *v = TE_AT(d->a.kernel, oc, ic ? ic : ir_int(ctx, 0), ky, kx);
  return cond ? ir_select(cond, v, ir_float(ctx, 0.0)) : v;
}

static const ir_expr *kp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ad_conv *d = u;
  if (d->dw) /* [O][ky][kx][v] */
    return kernel_at(ctx, d, ir_add(ir_mul(i[0], ir_int(ctx, d->yb)), i[3]), NULL, i[1], i[2]);
  return kernel_at(ctx, d, ir_add(ir_mul(i[0], ir_int(ctx, d->yb)), i[5]),
                   ir_add(ir_mul(i[1], ir_int(ctx, d->xb)), i[4]), i[2], i[3]);
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
                                  "1 or depthwise (groups = channels); this layer has groups %lld",
                             (long long)p->groups);
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

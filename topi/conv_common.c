/* conv_common.c — what every convolution template shares: checking a topi_conv2d, the output
 * size and FLOP count, the declared arguments (data in its layout, its margin's buffer whole;
 * plain OIHW kernel and bias as constants; the residual in the output's layout, a window of
 * its buffer with a margin), the fused epilogue expression and the
 * blocked bias (packed once, in prepare):
 *
 *   bias [c_out]  ->  bias_p[C, v] = C*block + v < c_out ? bias[C*block + v] : 0
 */
#include <string.h>
#include "topi/internal.h"

int64_t topi_conv2d_dilation_h(const topi_conv2d *p) {
  return p->dilation_h > 1 ? p->dilation_h : 1;
}
int64_t topi_conv2d_dilation_w(const topi_conv2d *p) {
  return p->dilation_w > 1 ? p->dilation_w : 1;
}

/* The kernel's extent with dilation d: (k - 1) * d + 1. */
static int64_t extent(int64_t k, int64_t d) { return (k - 1) * d + 1; }

int topi_conv2d_out_hw(tec_ctx *ctx, const topi_conv2d *p, int64_t *oh, int64_t *ow) {
  int64_t eh = extent(p->kh, topi_conv2d_dilation_h(p));
  int64_t ew = extent(p->kw, topi_conv2d_dilation_w(p));
  int64_t h = p->h + 2 * p->pad_h - eh, w = p->w + 2 * p->pad_w - ew;
  if (p->stride_h < 1 || p->stride_w < 1 || p->dilation_h < 0 || p->dilation_w < 0 || h < 0 ||
      w < 0) {
    if (ctx && eh == p->kh && ew == p->kw)
      tec_ctx_set_error(ctx, "conv2d: the %lldx%lld kernel is larger than the padded %lldx%lld "
                             "input, or a stride is < 1 or a dilation < 0",
                        (long long)p->kh, (long long)p->kw, (long long)(p->h + 2 * p->pad_h),
                        (long long)(p->w + 2 * p->pad_w));
    else if (ctx)
      tec_ctx_set_error(ctx, "conv2d: the %lldx%lld kernel spans %lldx%lld with dilation, larger "
                             "than the padded %lldx%lld input, or a stride is < 1",
                        (long long)p->kh, (long long)p->kw, (long long)eh, (long long)ew,
                        (long long)(p->h + 2 * p->pad_h), (long long)(p->w + 2 * p->pad_w));
    return -1;
  }
  *oh = h / p->stride_h + 1;
  *ow = w / p->stride_w + 1;
  return 0;
}

int topi_conv2d_check(tec_ctx *ctx, const char *who, const topi_conv2d *p) {
  if (!p) return tec_ctx_set_error(ctx, "%s: the problem is NULL", who);
  if (p->n < 1 || p->c_in < 1 || p->h < 1 || p->w < 1 || p->c_out < 1 || p->kh < 1 ||
      p->kw < 1 || p->stride_h < 1 || p->stride_w < 1 || p->pad_h < 0 || p->pad_w < 0)
    return tec_ctx_set_error(ctx, "%s: sizes, kernel and strides must be >= 1 and padding >= 0 "
                                  "(got n=%lld c_in=%lld h=%lld w=%lld c_out=%lld kernel=%lldx%lld "
                                  "stride=%lldx%lld pad=%lldx%lld)",
                             who, (long long)p->n, (long long)p->c_in, (long long)p->h,
                             (long long)p->w, (long long)p->c_out, (long long)p->kh,
                             (long long)p->kw, (long long)p->stride_h, (long long)p->stride_w,
                             (long long)p->pad_h, (long long)p->pad_w);
  if (topi_fp_check(ctx, who, p->fp)) return -1;
  if (p->dilation_h < 0 || p->dilation_w < 0)
    return tec_ctx_set_error(ctx, "%s: dilation must be >= 1 (0 is read as 1; got %lldx%lld)",
                             who, (long long)p->dilation_h, (long long)p->dilation_w);
  int64_t g = p->groups ? p->groups : 1;
  if (g < 1 || p->c_in % g || p->c_out % g)
    return tec_ctx_set_error(ctx, "%s: groups = %lld must be >= 1 and divide c_in = %lld and "
                                  "c_out = %lld", who, (long long)p->groups, (long long)p->c_in,
                             (long long)p->c_out);
  if (p->epi.act < TOPI_ACT_NONE || p->epi.act > TOPI_ACT_RELU6)
    return tec_ctx_set_error(ctx, "%s: activation %d is not one of TOPI_ACT_NONE, _RELU, _RELU6",
                             who, (int)p->epi.act);
  if (topi_layout_check(ctx, who, "input", p->in_layout) ||
      topi_layout_check(ctx, who, "output", p->out_layout))
    return -1;
  int64_t oh, ow;
  if (topi_conv2d_out_hw(NULL, p, &oh, &ow)) {
    int64_t dh = topi_conv2d_dilation_h(p), dw = topi_conv2d_dilation_w(p);
    if (dh == 1 && dw == 1)
      return tec_ctx_set_error(ctx, "%s: the %lldx%lld kernel is larger than the padded "
                                    "%lldx%lld input", who, (long long)p->kh, (long long)p->kw,
                               (long long)(p->h + 2 * p->pad_h), (long long)(p->w + 2 * p->pad_w));
    return tec_ctx_set_error(ctx, "%s: the %lldx%lld kernel with dilation %lldx%lld spans "
                                  "%lldx%lld, larger than the padded %lldx%lld input",
                             who, (long long)p->kh, (long long)p->kw, (long long)dh, (long long)dw,
                             (long long)extent(p->kh, dh), (long long)extent(p->kw, dw),
                             (long long)(p->h + 2 * p->pad_h), (long long)(p->w + 2 * p->pad_w));
  }
  return 0;
}

double topi_conv2d_flops(const topi_conv2d *p) {
  int64_t oh, ow, g = p->groups ? p->groups : 1;
  if (topi_conv2d_out_hw(NULL, p, &oh, &ow)) return 0;
  return 2.0 * (double)p->n * (double)p->c_out * (double)oh * (double)ow * (double)(p->c_in / g) *
         (double)p->kh * (double)p->kw;
}

int topi_conv_declare_args(tec_ctx *ctx, const char *who, const topi_conv2d *p,
                           topi_conv_args *a) {
  memset(a, 0, sizeof *a);
  if (topi_conv2d_check(ctx, who, p) || topi_conv2d_out_hw(ctx, p, &a->oh, &a->ow)) return -1;
  int64_t g = p->groups ? p->groups : 1;
  int nd;
  /* an input margin: the whole buffer, read at + margin (topi_layout_read) */
  const ir_expr *const *s =
      topi_layout_buffer_shape(ctx, p->in_layout, p->n, p->c_in, p->h, p->w, &nd);
  tec_dtype t = topi_fp_storage(p->fp); /* float32, or float16 (topi_fp) */
  a->data = te_placeholder(ctx, "data", t, nd, s);
  a->kernel = te_const_placeholder(ctx, "kernel", t, 4,
                                   TE_SHAPE(ctx, p->c_out, p->c_in / g, p->kh, p->kw));
  if (p->epi.bias) a->bias = te_const_placeholder(ctx, "bias", t, 1, TE_SHAPE(ctx, p->c_out));
  if (p->epi.residual) {
    s = topi_layout_shape(ctx, p->out_layout, p->n, p->c_out, a->oh, a->ow, &nd);
    a->residual = te_placeholder(ctx, "residual", t, nd, s);
    if (a->residual && topi_set_margin(ctx, who, a->residual, p->out_layout)) return -1;
  }
  if (!a->data || !a->kernel || (p->epi.bias && !a->bias) || (p->epi.residual && !a->residual))
    return -1;
  return 0;
}

int topi_conv_finish_decl(tec_ctx *ctx, const topi_template *t, const topi_conv2d *p,
                          const topi_conv_args *a, te_tensor *out, void *priv, topi_decl *d) {
  if (!out) return -1;
  topi_conv2d *copy = tec_ctx_alloc(ctx, sizeof *copy);
  te_tensor **args = tec_ctx_alloc(ctx, 5 * sizeof *args);
  if (!copy || !args) return -1;
  *copy = *p;
  int n = 0;
  args[n++] = a->data;
  args[n++] = a->kernel;
  if (a->bias) args[n++] = a->bias;
  if (a->residual) args[n++] = a->residual;
  args[n++] = out;
  *d = (topi_decl){t, ctx, copy, n, args, out, priv};
  return 0;
}

const ir_expr *topi_epilogue_expr(tec_ctx *ctx, const topi_epilogue *e, const ir_expr *v,
                                  const ir_expr *bias_v, const ir_expr *res_v) {
  if (bias_v) v = ir_add(v, bias_v);
  if (res_v) v = ir_add(v, res_v);
  if (e->act == TOPI_ACT_RELU || e->act == TOPI_ACT_RELU6) v = ir_max(v, ir_float(ctx, 0.0));
  if (e->act == TOPI_ACT_RELU6) v = ir_min(v, ir_float(ctx, 6.0));
  return v;
}

typedef struct pb_decl {
  te_tensor *bias;
  int64_t c, block;
} pb_decl;

static const ir_expr *pack_bias_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  pb_decl *d = u;
  const ir_expr *c = ir_add(ir_mul(i[0], ir_int(ctx, d->block)), i[1]);
  if (d->c % d->block == 0) return TE_AT(d->bias, c);
  const ir_expr *in = ir_lt(c, ir_int(ctx, d->c));
  return ir_select(in, TE_AT(d->bias, ir_min(c, ir_int(ctx, d->c - 1))), ir_float(ctx, 0.0));
}

const ir_expr *topi_kernel_at(tec_ctx *ctx, const te_tensor *kernel, const ir_expr *oc,
                              int64_t c_out, int guard_oc, const ir_expr *ic, int64_t c_in,
                              int guard_ic, const ir_expr *ky, const ir_expr *kx) {
  const ir_expr *cond = NULL;
  if (guard_oc) {
    cond = ir_lt(oc, ir_int(ctx, c_out));
    oc = ir_min(oc, ir_int(ctx, c_out - 1));
  }
  if (ic && guard_ic) {
    const ir_expr *c = ir_lt(ic, ir_int(ctx, c_in));
    cond = cond ? ir_and(cond, c) : c;
    ic = ir_min(ic, ir_int(ctx, c_in - 1));
  }
  const ir_expr *v = TE_AT(kernel, oc, ic ? ic : ir_int(ctx, 0), ky, kx);
  return cond ? ir_select(cond, v, ir_float(ctx, 0.0)) : v;
}

te_tensor *topi_pack_bias(tec_ctx *ctx, te_tensor *bias, int64_t c, int64_t block) {
  pb_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  if (!d) return NULL;
  *d = (pb_decl){bias, c, block};
  static const char *const names[] = {"C", "v"};
  return te_compute(ctx, &(te_compute_decl){.name = "bias_p", .ndim = 2,
                                            .shape = TE_SHAPE(ctx, topi_ceil_div(c, block), block),
                                            .body = pack_bias_body, .user = d,
                                            .tag = "pack_bias", .axis_names = names});
}

const char *topi_conv2d_blocked_out_why(tec_ctx *ctx, const topi_conv2d *p) {
  if (p->in_layout.kind != TOPI_NCHWC && p->in_layout.kind != TOPI_NCHW)
    return tec_ctx_printf(ctx, "input layout %s is not supported (NCHW<x>c or NCHW)",
                          topi_layout_str(ctx, p->in_layout));
  if (p->out_layout.kind != TOPI_NCHWC)
    return tec_ctx_printf(ctx, "output layout %s is not supported (NCHW<y>c)",
                          topi_layout_str(ctx, p->out_layout));
  return NULL;
}

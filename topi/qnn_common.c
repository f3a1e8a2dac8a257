/* qnn_common.c — the pieces every int8 template shares (docs/quantized.md): params and scale
 * checks, the clamp bounds of an activation, the requantization expression fused into each
 * template's output stage, the padding read that yields the zero point, and the prepare-time
 * per-channel stages (the fp32 multipliers; the bias with -zp_in * sum(w) folded in). */
#include <math.h>
#include <string.h>
#include "topi/qnn_internal.h"

int topi_qparams_check(tec_ctx *ctx, const char *who, const char *what, topi_qparams q) {
  if (!(q.scale > 0.0f) || !isfinite(q.scale))
    return tec_ctx_set_error(ctx, "%s: %s.scale must be > 0 and finite (got %g)", who, what,
                             (double)q.scale);
  if (q.zero_point < -128 || q.zero_point > 127)
    return tec_ctx_set_error(ctx, "%s: %s.zero_point must be in [-128, 127] for int8 (got %d)",
                             who, what, (int)q.zero_point);
  return 0;
}

int topi_qnn_check_scales(tec_ctx *ctx, const char *who, const float *w_scale, int64_t count,
                          int64_t c_out) {
  if (!w_scale) return tec_ctx_set_error(ctx, "%s: the weight scales are NULL", who);
  if (count != c_out)
    return tec_ctx_set_error(ctx, "%s: %lld weight scales for %lld output channels; give one per "
                                  "output channel (a per-tensor scale as %lld copies)",
                             who, (long long)count, (long long)c_out, (long long)c_out);
  for (int64_t c = 0; c < count; c++)
    if (!(w_scale[c] > 0.0f) || !isfinite(w_scale[c]))
      return tec_ctx_set_error(ctx, "%s: weight scale %lld must be > 0 and finite (got %g)", who,
                               (long long)c, (double)w_scale[c]);
  return 0;
}

void topi_qnn_bounds(topi_qparams out, topi_act act, int32_t *lo, int32_t *hi) {
  *lo = -128, *hi = 127;
  if (act == TOPI_ACT_RELU || act == TOPI_ACT_RELU6) *lo = out.zero_point;
  if (act == TOPI_ACT_RELU6) {
    float six = nearbyintf(6.0f / out.scale); /* the default mode: ties to even */
    if (six < 255.0f && (int32_t)six + out.zero_point < 127) *hi = (int32_t)six + out.zero_point;
  }
  if (*lo > *hi) *lo = *hi; /* not reached with a legal zero point */
}

const char *qnn_conv_why(tec_ctx *ctx, const char *who, const topi_qconv2d *p) {
  if (!p) return tec_ctx_printf(ctx, "%s: the problem is NULL", who);
  const topi_conv2d *c = &p->conv;
  if (topi_conv2d_check(ctx, who, c) || topi_qparams_check(ctx, who, "in", p->in) ||
      topi_qparams_check(ctx, who, "out", p->out))
    return tec_ctx_error(ctx);
  if (c->epi.residual)
    return tec_ctx_printf(ctx, "%s: no residual epilogue (add with template qnn_add)", who);
  if (c->in_layout.kind != TOPI_NCHWC || c->out_layout.kind != TOPI_NCHWC ||
      c->in_layout.block % 4 || c->out_layout.block % 4)
    return tec_ctx_printf(ctx, "%s: reads and writes NCHW[x]c with x a multiple of 4 (got %s -> "
                               "%s)", who, topi_layout_str(ctx, c->in_layout),
                          topi_layout_str(ctx, c->out_layout));
  if (topi_conv2d_dilation_h(c) > 1 || topi_conv2d_dilation_w(c) > 1)
    return tec_ctx_printf(ctx, "%s: no dilation (got %lldx%lld)", who, (long long)c->dilation_h,
                          (long long)c->dilation_w);
  const char *m = topi_conv2d_margin_refused(ctx, who, c);
  return m ? tec_ctx_printf(ctx, "%s: %s", who, m) : NULL;
}

int qnn_refuse(tec_ctx *ctx, const topi_template *t, const void *problem) {
  const char *why = NULL;
  if (t->applies(ctx, problem, &why)) return 0;
  return tec_ctx_set_error(ctx, "%s", why ? why : t->name); /* the reasons name t */
}

int qnn_conv_declare(tec_ctx *ctx, const topi_template *t, const topi_qconv2d *p,
                     qnn_conv_args *a) {
  if (!ctx) return -1;
  if (!p || !a) return tec_ctx_set_error(ctx, "%s: problem and decl are required", t->name);
  if (qnn_refuse(ctx, t, p)) return -1;
  const topi_conv2d *c = &p->conv;
  memset(a, 0, sizeof *a);
  a->p = *p;
  a->bx = c->in_layout.block, a->by = c->out_layout.block;
  if (topi_conv2d_out_hw(ctx, c, &a->oh, &a->ow)) return -1;
  int64_t g = c->groups ? c->groups : 1;
  a->data = te_placeholder(ctx, "data", TEC_I8, 5,
                           TE_SHAPE(ctx, c->n, topi_ceil_div(c->c_in, a->bx), c->h, c->w, a->bx));
  a->kernel = te_const_placeholder(ctx, "kernel", TEC_I8, 4,
                                   TE_SHAPE(ctx, c->c_out, c->c_in / g, c->kh, c->kw));
  if (c->epi.bias) a->bias = te_const_placeholder(ctx, "bias", TEC_I32, 1, TE_SHAPE(ctx, c->c_out));
  a->w_scale = te_const_placeholder(ctx, "w_scale", TEC_F32, 1, TE_SHAPE(ctx, c->c_out));
  a->mult = qnn_mult(ctx, a->w_scale, c->c_out, a->by, p->in, p->out);
  a->bias_q = qnn_bias(ctx, a->bias, qnn_wsum(ctx, a->kernel), c->c_out, a->by, p->in.zero_point);
  return a->data && a->kernel && (!c->epi.bias || a->bias) && a->w_scale && a->mult && a->bias_q
             ? 0 : -1;
}

int qnn_conv_finish(tec_ctx *ctx, const topi_template *t, qnn_conv_args *a, te_tensor *out,
                    topi_decl *d) {
  te_tensor **args = tec_ctx_alloc(ctx, 5 * sizeof *args);
  topi_qconv2d *copy = tec_ctx_alloc(ctx, sizeof *copy);
  if (!args || !copy || !out) return -1;
  *copy = a->p;
  int na = 0;
  args[na++] = a->data, args[na++] = a->kernel;
  if (a->bias) args[na++] = a->bias;
  args[na++] = a->w_scale, args[na++] = out;
  *d = (topi_decl){t, ctx, copy, na, args, out, a};
  return 0;
}

const ir_expr *qnn_requant_f(tec_ctx *ctx, const ir_expr *f, topi_qparams out, topi_act act) {
  int32_t lo, hi;
  topi_qnn_bounds(out, act, &lo, &hi);
  tec_dtype ft = f ? f->type : TEC_F32;
  f = ir_min(ir_max(f, ir_float_t(ctx, ft, (double)(lo - out.zero_point))),
             ir_float_t(ctx, ft, (double)(hi - out.zero_point)));
  const ir_expr *q = ir_add(ir_cast(TEC_I32, ir_round_even(f)),
                            ir_int_t(ctx, TEC_I32, out.zero_point));
  return ir_cast(TEC_I8, q);
}

const ir_expr *qnn_requant(tec_ctx *ctx, const ir_expr *acc, const ir_expr *mult,
                           topi_qparams out, topi_act act) {
  return qnn_requant_f(ctx, ir_mul(ir_cast(TEC_F32, acc), mult), out, act);
}

const ir_expr *qnn_pad(tec_ctx *ctx, tec_dtype t, const ir_expr *v, const ir_expr *y,
                       const ir_expr *x, int64_t h, int64_t w, int64_t pad_h, int64_t pad_w,
                       int32_t zp) {
  const ir_expr *cond = NULL;
#define QNN_AND(e) cond = cond ? ir_and(cond, (e)) : (e)
  if (pad_h > 0) QNN_AND(ir_ge(y, ir_int(ctx, 0))), QNN_AND(ir_lt(y, ir_int(ctx, h)));
  if (pad_w > 0) QNN_AND(ir_ge(x, ir_int(ctx, 0))), QNN_AND(ir_lt(x, ir_int(ctx, w)));
#undef QNN_AND
  v = ir_cast(t, v);
  return cond ? ir_select(ir_likely(cond), v, ir_int_t(ctx, t, zp)) : v;
}

typedef struct qnn_chan {
  te_tensor *src, *bias, *wsum;
  int64_t c, block;
  float ratio;  /* in.scale / out.scale, rounded to fp32 once */
  int32_t zp;
} qnn_chan;

/* channel index of [C][block] element idx (block 1: [c]) and whether it is < c */
static const ir_expr *chan(tec_ctx *ctx, const qnn_chan *q, const ir_expr *const *i,
                           const ir_expr **valid) {
  const ir_expr *c = q->block == 1 ? i[0] : ir_add(ir_mul(i[0], ir_int(ctx, q->block)), i[1]);
  *valid = q->c % q->block ? ir_lt(c, ir_int(ctx, q->c)) : NULL;
  return *valid ? ir_min(c, ir_int(ctx, q->c - 1)) : c;
}

static const ir_expr *mult_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const qnn_chan *q = u;
  const ir_expr *valid, *c = chan(ctx, q, i, &valid);
  const ir_expr *m = ir_mul(TE_AT(q->src, c), ir_float(ctx, (double)q->ratio));
  return valid ? ir_select(valid, m, ir_float(ctx, 0.0)) : m;
}

static const ir_expr *bias_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const qnn_chan *q = u;
  const ir_expr *valid, *c = chan(ctx, q, i, &valid);
  const ir_expr *b = ir_mul(TE_AT(q->wsum, c), ir_int_t(ctx, TEC_I32, -q->zp));
  if (q->bias) b = ir_add(TE_AT(q->bias, c), b);
  return valid ? ir_select(valid, b, ir_int_t(ctx, TEC_I32, 0)) : b;
}

static te_tensor *chan_stage(tec_ctx *ctx, qnn_chan *q, const char *name, te_body_fn body) {
  qnn_chan *keep = tec_ctx_alloc(ctx, sizeof *keep);
  if (!keep) return NULL;
  *keep = *q;
  int nd = q->block == 1 ? 1 : 2;
  const ir_expr *const *s = nd == 1 ? TE_SHAPE(ctx, q->c)
                                    : TE_SHAPE(ctx, topi_ceil_div(q->c, q->block), q->block);
  return te_compute(ctx, &(te_compute_decl){.name = name, .ndim = nd, .shape = s, .body = body,
                                            .user = keep, .tag = "qnn_prepare"});
}

te_tensor *qnn_mult(tec_ctx *ctx, te_tensor *w_scale, int64_t c, int64_t block,
                    topi_qparams in, topi_qparams out) {
  qnn_chan q = {.src = w_scale, .c = c, .block = block, .ratio = in.scale / out.scale};
  return chan_stage(ctx, &q, "mult", mult_body);
}

te_tensor *qnn_bias(tec_ctx *ctx, te_tensor *bias, te_tensor *wsum, int64_t c, int64_t block,
                    int32_t zp_in) {
  qnn_chan q = {.bias = bias, .wsum = wsum, .c = c, .block = block, .zp = zp_in};
  return chan_stage(ctx, &q, "bias_q", bias_body);
}

typedef struct wsum_u {
  te_tensor *w;
  const ir_expr *r[3];
} wsum_u;

static const ir_expr *wsum_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  wsum_u *s = u;
  int nr = s->w->ndim - 1;
  const ir_expr *idx[4] = {i[0], s->r[0], s->r[1], s->r[2]};
  return te_sum(ir_cast(TEC_I32, te_read(s->w, nr + 1, idx)), nr, s->r, NULL);
}

te_tensor *qnn_wsum(tec_ctx *ctx, te_tensor *w) {
  wsum_u *s = tec_ctx_alloc(ctx, sizeof *s);
  if (!s || !w) return NULL;
  s->w = w;
  static const char *const rn[] = {"ri", "rj", "rk"};
  for (int d = 1; d < w->ndim; d++) {
    int64_t e;
    if (!ir_is_const_int(w->shape[d], &e)) return NULL;
    if (!(s->r[d - 1] = te_reduce_axis_n(ctx, rn[d - 1], e))) return NULL;
  }
  return te_compute(ctx, &(te_compute_decl){.name = "wsum", .ndim = 1, .shape = w->shape,
                                            .body = wsum_body, .user = s, .tag = "qnn_prepare"});
}

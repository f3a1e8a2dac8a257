/* qnn_pool.c — int8 max and average pooling (docs/quantized.md), any of NCHW, NHWC,
 * NCHW[x]c (in and out alike). A reduction stage per output element, then the requantization:
 *
 *   max: red = max over the taps inside the input of q      out = requant(red - zp_in, m)
 *   avg: red = sum over the taps inside the input of (q - zp_in)
 *        out = clamp(round_even(((float)red * m) / (float)cnt) + zp_out)
 *
 * m = in.scale / out.scale (fp32); cnt the taps inside the input, or kh*kw with
 * count_include_pad. The taps in the padding are left out by the reduction's condition (max:
 * the padding never wins). The reduction is computed per output vector (compute_at), the
 * innermost dimension vectorized, the outer two parallel. */
#include "topi/qnn_internal.h"

typedef struct qp_decl {
  topi_qpool p;
  int64_t oh, ow;
  te_tensor *in, *red;
  const ir_expr *ry, *rx;
} qp_decl;

static const ir_expr *red_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qp_decl *d = u;
  const topi_pool *p = &d->p.pool;
  const ir_expr *n, *c, *oy, *ox;
  topi_layout_coords(ctx, p->in_layout, i, &n, &c, &oy, &ox);
  const ir_expr *y = ir_add(ir_mul(oy, ir_int(ctx, p->stride_h)), ir_sub(d->ry, ir_int(ctx, p->pad_h)));
  const ir_expr *x = ir_add(ir_mul(ox, ir_int(ctx, p->stride_w)), ir_sub(d->rx, ir_int(ctx, p->pad_w)));
  const ir_expr *cond = NULL;
  if (p->pad_h) cond = ir_and(ir_ge(y, ir_int(ctx, 0)), ir_lt(y, ir_int(ctx, p->h)));
  if (p->pad_w) {
    const ir_expr *cx = ir_and(ir_ge(x, ir_int(ctx, 0)), ir_lt(x, ir_int(ctx, p->w)));
    cond = cond ? ir_and(cond, cx) : cx;
  }
  const ir_expr *v = ir_cast(TEC_I32, topi_layout_read(d->in, p->in_layout, n, c, y, x));
  const ir_expr *ax[2] = {d->ry, d->rx};
  if (p->mode == TOPI_POOL_MAX) return te_max(v, 2, ax, cond ? ir_likely(cond) : NULL);
  return te_sum(ir_sub(v, ir_int_t(ctx, TEC_I32, d->p.in.zero_point)), 2, ax,
                cond ? ir_likely(cond) : NULL);
}

/* the taps of window start s (size k) inside [0, size) */
static const ir_expr *taps(tec_ctx *ctx, const ir_expr *o, int64_t stride, int64_t pad, int64_t k,
                           int64_t size) {
  const ir_expr *s = ir_sub(ir_mul(o, ir_int(ctx, stride)), ir_int(ctx, pad));
  return ir_sub(ir_min(ir_add(s, ir_int(ctx, k)), ir_int(ctx, size)), ir_max(s, ir_int(ctx, 0)));
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qp_decl *d = u;
  const topi_pool *p = &d->p.pool;
  const ir_expr *r = te_read(d->red, d->red->ndim, i);
  const ir_expr *m = ir_float(ctx, (double)(d->p.in.scale / d->p.out.scale));
  if (p->mode == TOPI_POOL_MAX)
    return qnn_requant(ctx, ir_sub(r, ir_int_t(ctx, TEC_I32, d->p.in.zero_point)), m, d->p.out,
                       TOPI_ACT_NONE);
  const ir_expr *n, *c, *oy, *ox, *cnt;
  topi_layout_coords(ctx, p->out_layout, i, &n, &c, &oy, &ox);
  if (p->count_include_pad) cnt = ir_int(ctx, p->kh * p->kw);
  else cnt = ir_mul(taps(ctx, oy, p->stride_h, p->pad_h, p->kh, p->h),
                    taps(ctx, ox, p->stride_w, p->pad_w, p->kw, p->w));
  const ir_expr *f = ir_div(ir_mul(ir_cast(TEC_F32, r), m), ir_cast(TEC_F32, cnt));
  return qnn_requant_f(ctx, f, d->p.out, TOPI_ACT_NONE);
}

static const char *qp_why(tec_ctx *ctx, const topi_qpool *q) {
  if (!q) return "qnn_pool: the problem is NULL";
  const topi_pool *p = &q->pool;
  int64_t oh, ow;
  if (p->dilation_h > 1 || p->dilation_w > 1 || p->ceil_mode || p->pad_end_given)
    return "qnn_pool: no dilation, ceil_mode or pad_end_given (symmetric padding only)";
  if (p->mode != TOPI_POOL_MAX && p->mode != TOPI_POOL_AVG)
    return tec_ctx_printf(ctx, "qnn_pool: mode %d is not TOPI_POOL_MAX or _AVG", (int)p->mode);
  if (topi_pool_out_hw(ctx, p, &oh, &ow)) return tec_ctx_printf(ctx, "qnn_pool: %s", tec_ctx_error(ctx));
  if (topi_layout_check(ctx, "qnn_pool", "input", p->in_layout)) return tec_ctx_error(ctx);
  if (p->in_layout.kind != p->out_layout.kind || p->in_layout.block != p->out_layout.block)
    return tec_ctx_printf(ctx, "qnn_pool: the input and output layouts must be equal (got %s -> %s)",
                          topi_layout_str(ctx, p->in_layout), topi_layout_str(ctx, p->out_layout));
  const char *m = topi_margin_refused(ctx, "qnn_pool", "the", p->in_layout);
  if (!m) m = topi_margin_refused(ctx, "qnn_pool", "the output", p->out_layout);
  if (m) return tec_ctx_printf(ctx, "qnn_pool: %s", m);
  if (topi_qparams_check(ctx, "qnn_pool", "in", q->in) ||
      topi_qparams_check(ctx, "qnn_pool", "out", q->out))
    return tec_ctx_error(ctx);
  return NULL;
}

static int qp_applies(tec_ctx *ctx, const void *p, const char **why) {
  const char *w = qp_why(ctx, p);
  if (why) *why = w;
  return w == NULL;
}

static int qp_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_qpool *q = p_arg;
  if (!ctx) return -1;
  if (!out) return tec_ctx_set_error(ctx, "qnn_pool: problem and decl are required");
  const char *why = qp_why(ctx, q);
  if (why) return tec_ctx_set_error(ctx, "%s", why);
  const topi_pool *p = &q->pool;
  qp_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  te_tensor **args = tec_ctx_alloc(ctx, 2 * sizeof *args);
  topi_qpool *copy = tec_ctx_alloc(ctx, sizeof *copy);
  if (!d || !args || !copy || topi_pool_out_hw(ctx, p, &d->oh, &d->ow)) return -1;
  d->p = *copy = *q;
  int nd;
  const ir_expr *const *s = topi_layout_shape(ctx, p->in_layout, p->n, p->c, p->h, p->w, &nd);
  d->in = te_placeholder(ctx, "in", TEC_I8, nd, s);
  const ir_expr *const *os = topi_layout_shape(ctx, p->out_layout, p->n, p->c, d->oh, d->ow, &nd);
  d->ry = te_reduce_axis_n(ctx, "ky", p->kh);
  d->rx = te_reduce_axis_n(ctx, "kx", p->kw);
  d->red = te_compute(ctx, &(te_compute_decl){.name = "red", .ndim = nd, .shape = os,
                                              .body = red_body, .user = d, .tag = "qnn_pool"});
  te_tensor *o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = nd, .shape = os,
                                                    .body = out_body, .user = d, .tag = "requant"});
  if (!d->in || !d->red || !o) return -1;
  args[0] = d->in, args[1] = o;
  *out = (topi_decl){&topi_tmpl_qnn_pool, ctx, copy, 2, args, o, d};
  return 0;
}

/* out: the two outer dimensions fused (parallel), the innermost split by the lanes (vector);
 * red computed per output vector. Shared by qnn_add (no red). */
int qnn_elem_schedule(const topi_decl *dc, const topi_qelem_config *cfg,
                      const tec_target *target, sch_schedule *sched, te_tensor *red,
                      int64_t inner) {
  sch_stage *so = sch_stage_of(sched, dc->out);
  int nd = dc->out->ndim;
  if (!so) return -1;
  sch_iter *f, *at = sch_axis(so, nd - 2), *o = NULL, *i = sch_axis(so, nd - 1);
  if (cfg->parallel && (sch_fuse(so, sch_axis(so, 0), sch_axis(so, 1), &f) || sch_parallel(so, f)))
    return -1;
  int lanes = topi_target_lanes(dc->ctx, target);
  if (lanes < 0) return -1;
  if (cfg->vectorize) {
    if (inner > lanes && sch_split(so, i, lanes, &o, &i)) return -1;
    if (sch_vectorize(so, i)) return -1;
    if (o) at = o;
  }
  if (!red) return 0;
  sch_stage *sr = sch_stage_of(sched, red);
  if (!sr || sch_compute_at(sr, so, at)) return -1;
  return cfg->vectorize ? sch_vectorize(sr, sch_axis(sr, nd - 1)) : 0;
}

/* the innermost dimension's extent of an (n, c, h, w) activation in layout l */
int64_t qnn_inner_extent(topi_layout l, int64_t c, int64_t w) {
  return l.kind == TOPI_NCHWC ? l.block : l.kind == TOPI_NHWC ? c : w;
}

static int qp_schedule(const topi_decl *dc, const void *cfg_arg, const tec_target *target,
                       topi_op *op) {
  const topi_qelem_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_qnn_pool, dc, cfg, target) || topi_op_begin(dc, op)) return -1;
  const qp_decl *d = dc->priv;
  return qnn_elem_schedule(dc, cfg, target, op->sched, d->red,
                           qnn_inner_extent(d->p.pool.out_layout, d->p.pool.c, d->ow));
}

int qnn_elem_space(tec_ctx *ctx, const topi_template *t, const tec_target *target,
                   tune_space *sp) {
  static const int64_t b01[] = {0, 1};
  if (topi_target_lanes(ctx, target) < 0 ||
      tune_space_init(ctx, sp, t->name, t->config_size) ||
      tune_define_field(sp, "vectorize", "innermost dimension vectorized (by lanes)",
                        offsetof(topi_qelem_config, vectorize), 2, b01, 1) < 0 ||
      tune_define_field(sp, "parallel", "parallel over the two outer dimensions",
                        offsetof(topi_qelem_config, parallel), 2, b01, 1) < 0)
    return -1;
  return 0;
}

static int qp_space(tec_ctx *ctx, const void *p_arg, const tec_target *target, tune_space *sp) {
  if (qnn_refuse(ctx, &topi_tmpl_qnn_pool, p_arg)) return -1;
  return qnn_elem_space(ctx, &topi_tmpl_qnn_pool, target, sp);
}

const topi_template topi_tmpl_qnn_pool = {
    "qnn_pool", "int8 max / average pooling, requantization fused", TOPI_PROBLEM_QPOOL,
    sizeof(topi_qelem_config), qp_applies, qp_declare, qp_schedule, qp_space,
    "topi_qelem_config"};

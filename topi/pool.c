/* pool.c — 2-d pooling as two three-function templates: "pool2d" (max or average over
 * kh x kw windows with stride and zero padding) and "global_pool" (the whole input), from any
 * activation layout to any (so the last pool of a network can also be its layout change).
 *
 *   acc[o]  = max / sum_{i, j} in[n, c, oy*s + i - p, ox*s + j - p]   (padding: excluded)
 *   out[o]  = acc[o]                                  (max)
 *           = acc[o] / count(oy, ox)                  (average: the taps inside the input, or
 *                                                      kh*kw with count_include_pad)
 *           = 0 for the channels past c of an NCHW[x]c output
 *
 * o runs over the output in out_layout; (n, c, oy, ox) are its logical coordinates
 * (topi_layout_coords). The reads outside the input are selects under likely() (max: -FLT_MAX,
 * sum: 0), so loop partitioning leaves the interior without compares. Schedule: acc computed
 * per output vector (compute_at the innermost output loop, split by the lanes), its taps
 * unrolled, the lanes vectorized; the two outer output dimensions fused and parallel.
 */
#include <float.h>
#include <string.h>
#include "topi/internal.h"

typedef struct pool_decl {
  topi_pool p;
  int global;
  int64_t oh, ow;
  te_tensor *in, *acc;
  const ir_expr *ry, *rx;
} pool_decl;

int topi_pool_out_hw(tec_ctx *ctx, const topi_pool *p, int64_t *oh, int64_t *ow) {
  int64_t h = p->h + 2 * p->pad_h - p->kh, w = p->w + 2 * p->pad_w - p->kw;
  if (p->stride_h < 1 || p->stride_w < 1 || p->kh < 1 || p->kw < 1 || h < 0 || w < 0) {
    if (ctx)
      tec_ctx_set_error(ctx, "pool2d: the %lldx%lld window is larger than the padded %lldx%lld "
                             "input, or a window size or stride is < 1",
                        (long long)p->kh, (long long)p->kw, (long long)(p->h + 2 * p->pad_h),
                        (long long)(p->w + 2 * p->pad_w));
    return -1;
  }
  *oh = h / p->stride_h + 1;
  *ow = w / p->stride_w + 1;
  return 0;
}

/* NULL if the template (global or not) applies to p, else the reason (arena). */
static const char *pool_why(tec_ctx *ctx, const topi_pool *p, int global) {
  const char *who = global ? "global_pool" : "pool2d";
  if (!p) return tec_ctx_printf(ctx, "%s: the problem is NULL", who);
  if (p->n < 1 || p->c < 1 || p->h < 1 || p->w < 1)
    return tec_ctx_printf(ctx, "%s: sizes must be >= 1 (got n=%lld c=%lld h=%lld w=%lld)", who,
                          (long long)p->n, (long long)p->c, (long long)p->h, (long long)p->w);
  if (p->mode != TOPI_POOL_MAX && p->mode != TOPI_POOL_AVG)
    return tec_ctx_printf(ctx, "%s: mode %d is not TOPI_POOL_MAX or TOPI_POOL_AVG", who,
                          (int)p->mode);
  if (p->count_include_pad != 0 && p->count_include_pad != 1)
    return tec_ctx_printf(ctx, "%s: count_include_pad = %d (legal: 0, 1)", who,
                          p->count_include_pad);
  if (p->count_include_pad && p->mode != TOPI_POOL_AVG)
    return tec_ctx_printf(ctx, "%s: count_include_pad = 1 applies to average pooling only", who);
  if (topi_layout_check(ctx, who, "input", p->in_layout) ||
      topi_layout_check(ctx, who, "output", p->out_layout))
    return tec_ctx_error(ctx);
  const char *m = topi_margin_refused(ctx, who, "input", p->in_layout);
  if (m || (m = topi_margin_refused(ctx, who, "output", p->out_layout)))
    return tec_ctx_printf(ctx, "%s: %s", who, m);
  if (global) {
    if (p->kh || p->kw || p->stride_h || p->stride_w || p->pad_h || p->pad_w)
      return tec_ctx_printf(ctx, "global_pool: the window is the whole input: kh, kw, strides "
                                 "and padding must be 0 (got kernel %lldx%lld stride %lldx%lld "
                                 "pad %lldx%lld)",
                            (long long)p->kh, (long long)p->kw, (long long)p->stride_h,
                            (long long)p->stride_w, (long long)p->pad_h, (long long)p->pad_w);
    return NULL;
  }
  if (p->kh < 1 || p->kw < 1 || p->stride_h < 1 || p->stride_w < 1)
    return tec_ctx_printf(ctx, "pool2d: window and strides must be >= 1 (got kernel %lldx%lld "
                               "stride %lldx%lld)",
                          (long long)p->kh, (long long)p->kw, (long long)p->stride_h,
                          (long long)p->stride_w);
  if (p->pad_h < 0 || p->pad_w < 0 || p->pad_h >= p->kh || p->pad_w >= p->kw)
    return tec_ctx_printf(ctx, "pool2d: padding %lldx%lld must be >= 0 and smaller than the "
                               "%lldx%lld window (a window wholly in the padding has no value)",
                          (long long)p->pad_h, (long long)p->pad_w, (long long)p->kh,
                          (long long)p->kw);
  int64_t oh, ow;
  if (topi_pool_out_hw(ctx, p, &oh, &ow)) return tec_ctx_error(ctx);
  return NULL;
}

/* The window's first input row / column of output coordinate o. */
static const ir_expr *win0(tec_ctx *ctx, const ir_expr *o, int64_t s, int64_t pad) {
  return ir_sub(ir_mul(o, ir_int(ctx, s)), ir_int(ctx, pad));
}

/* The logical channel an output element reads: clamped below c (the lanes past c of an
 * NCHW[x]c output are zeroed by out, and their reads must stay inside the input). */
static const ir_expr *read_channel(tec_ctx *ctx, const pool_decl *d, const ir_expr *c) {
  const topi_layout *l = &d->p.out_layout;
  if (l->kind == TOPI_NCHWC && d->p.c % l->block) c = ir_min(c, ir_int(ctx, d->p.c - 1));
  return c;
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  pool_decl *d = u;
  const topi_pool *p = &d->p;
  const ir_expr *n, *c, *y, *x;
  topi_layout_coords(ctx, p->out_layout, i, &n, &c, &y, &x);
  c = read_channel(ctx, d, c);
  const ir_expr *axes[2] = {d->ry, d->rx};
  if (d->global) {
    const ir_expr *v = topi_layout_read(d->in, p->in_layout, n, c, d->ry, d->rx);
    return p->mode == TOPI_POOL_MAX ? te_max(v, 2, axes, NULL) : te_sum(v, 2, axes, NULL);
  }
  const ir_expr *iy = ir_add(win0(ctx, y, p->stride_h, p->pad_h), d->ry);
  const ir_expr *ix = ir_add(win0(ctx, x, p->stride_w, p->pad_w), d->rx);
  if (p->mode == TOPI_POOL_AVG)
    return te_sum(topi_pad_read(d->in, p->in_layout, p->h, p->w, n, c, iy, ix, p->pad_h, p->pad_w),
                  2, axes, NULL);
  /* max: the padding is -FLT_MAX, so it never wins (pad < kernel: every window has a tap) */
  const ir_expr *v = topi_layout_read(d->in, p->in_layout, n, c, iy, ix), *cond = NULL;
  const ir_expr *zero = ir_int(ctx, 0);
#define POOL_AND(e) cond = cond ? ir_and(cond, (e)) : (e)
  if (p->pad_h) POOL_AND(ir_ge(iy, zero)), POOL_AND(ir_lt(iy, ir_int(ctx, p->h)));
  if (p->pad_w) POOL_AND(ir_ge(ix, zero)), POOL_AND(ir_lt(ix, ir_int(ctx, p->w)));
#undef POOL_AND
  if (cond) v = ir_select(ir_likely(cond), v, ir_float(ctx, -FLT_MAX));
  return te_max(v, 2, axes, NULL);
}

/* The taps of a window inside the input along one dimension: min(o0 + k, size) - max(o0, 0). */
static const ir_expr *inside(tec_ctx *ctx, const ir_expr *o0, int64_t k, int64_t size) {
  return ir_sub(ir_min(ir_add(o0, ir_int(ctx, k)), ir_int(ctx, size)), ir_max(o0, ir_int(ctx, 0)));
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  pool_decl *d = u;
  const topi_pool *p = &d->p;
  int nd = d->acc->ndim;
  const ir_expr *v = te_read(d->acc, nd, i);
  const ir_expr *n, *c, *y, *x;
  topi_layout_coords(ctx, p->out_layout, i, &n, &c, &y, &x);
  if (p->mode == TOPI_POOL_AVG) {
    const ir_expr *cnt;
    if (d->global) cnt = ir_float(ctx, (double)(p->h * p->w));
    else if (p->count_include_pad || (!p->pad_h && !p->pad_w))
      cnt = ir_float(ctx, (double)(p->kh * p->kw));
    else
      cnt = ir_cast(TEC_F32, ir_mul(inside(ctx, win0(ctx, y, p->stride_h, p->pad_h), p->kh, p->h),
                                    inside(ctx, win0(ctx, x, p->stride_w, p->pad_w), p->kw, p->w)));
    v = ir_div(v, cnt);
  }
  const topi_layout *l = &p->out_layout;
  if (l->kind == TOPI_NCHWC && p->c % l->block)
    v = ir_select(ir_lt(c, ir_int(ctx, p->c)), v, ir_float(ctx, 0.0));
  return v;
}

static int declare(tec_ctx *ctx, const topi_pool *p, int global, topi_decl *out) {
  if (!ctx) return -1;
  const char *who = global ? "global_pool" : "pool2d";
  if (!p || !out) return tec_ctx_set_error(ctx, "%s: problem and decl are required", who);
  const char *why = pool_why(ctx, p, global);
  if (why) return tec_ctx_set_error(ctx, "%s", why);
  pool_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  te_tensor **args = tec_ctx_alloc(ctx, 2 * sizeof *args);
  topi_pool *copy = tec_ctx_alloc(ctx, sizeof *copy);
  if (!d || !args || !copy) return -1;
  memset(d, 0, sizeof *d);
  d->p = *copy = *p;
  d->global = global;
  if (global) d->oh = d->ow = 1;
  else if (topi_pool_out_hw(ctx, p, &d->oh, &d->ow)) return -1;
  d->ry = te_reduce_axis_n(ctx, "ky", global ? p->h : p->kh);
  d->rx = te_reduce_axis_n(ctx, "kx", global ? p->w : p->kw);
  int nd_in, nd_out;
  const ir_expr *const *sin = topi_layout_shape(ctx, p->in_layout, p->n, p->c, p->h, p->w, &nd_in);
  const ir_expr *const *so = topi_layout_shape(ctx, p->out_layout, p->n, p->c, d->oh, d->ow, &nd_out);
  d->in = te_placeholder(ctx, "in", TEC_F32, nd_in, sin);
  const char *tag = p->mode == TOPI_POOL_MAX ? (global ? "global_max_pool" : "max_pool")
                                             : (global ? "global_avg_pool" : "avg_pool");
  d->acc = te_compute(ctx, &(te_compute_decl){.name = "pool_acc", .ndim = nd_out, .shape = so,
                                              .body = acc_body, .user = d, .tag = tag});
  if (!d->in || !d->acc) return -1;
  te_tensor *o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = nd_out, .shape = so,
                                                    .body = out_body, .user = d,
                                                    .tag = "pool_out"});
  if (!o) return -1;
  args[0] = d->in, args[1] = o;
  *out = (topi_decl){global ? &topi_tmpl_global_pool : &topi_tmpl_pool, ctx, copy, 2, args, o, d};
  return 0;
}

/* The extent of the innermost dimension of an (n, c, h, w) activation in layout l. */
static int64_t inner_extent(topi_layout l, int64_t c, int64_t w) {
  return l.kind == TOPI_NCHWC ? l.block : l.kind == TOPI_NHWC ? c : w;
}

static int schedule(const topi_template *t, const topi_decl *dc, const topi_pool_config *cfg,
                    const tec_target *target, topi_op *op) {
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(t, dc, cfg, target) || topi_op_begin(dc, op)) return -1;
  const pool_decl *d = dc->priv;
  sch_schedule *s = op->sched;
  sch_stage *so = sch_stage_of(s, dc->out), *sa = sch_stage_of(s, d->acc);
  if (!so || !sa) return -1;
  int nd = dc->out->ndim;
  int64_t ext = inner_extent(d->p.out_layout, d->p.c, d->ow);
  int lanes = topi_target_lanes(dc->ctx, target);
  if (lanes < 0) return -1;
  /* acc per output vector (or per element when not vectorized) */
  sch_iter *at = sch_axis(so, nd - 1), *vo = NULL, *vi = NULL;
  if (cfg->vectorize) {
    if (ext > lanes) {
      if (sch_split(so, at, lanes, &vo, &vi) || sch_vectorize(so, vi)) return -1;
      at = vo;
    } else {
      if (sch_vectorize(so, at)) return -1;
      at = sch_axis(so, nd - 2);
    }
  }
  if (cfg->parallel) {
    sch_iter *f;
    if (sch_fuse(so, sch_axis(so, 0), sch_axis(so, 1), &f) || sch_parallel(so, f)) return -1;
  }
  if (sch_compute_at(sa, so, at)) return -1;
  sch_iter *order[8], *ry = sch_reduce_axis(sa, 0), *rx = sch_reduce_axis(sa, 1);
  int k = 0;
  for (int a = 0; a < nd - 1; a++) order[k++] = sch_axis(sa, a);
  order[k++] = ry, order[k++] = rx, order[k++] = sch_axis(sa, nd - 1);
  if (sch_reorder(sa, k, order)) return -1;
  if (cfg->unroll && (sch_unroll(sa, ry) || sch_unroll(sa, rx))) return -1;
  if (cfg->vectorize) {
    sch_iter *last = sch_axis(sa, nd - 1), *o, *i;
    if (ext > lanes) return sch_split(sa, last, lanes, &o, &i) || sch_vectorize(sa, i) ? -1 : 0;
    return sch_vectorize(sa, last);
  }
  return 0;
}

static int space(const topi_template *t, tec_ctx *ctx, const topi_pool *p, const tec_target *target,
                 tune_space *sp) {
  if (!ctx) return -1;
  const char *why = pool_why(ctx, p, t == &topi_tmpl_global_pool);
  if (why) return tec_ctx_set_error(ctx, "%s", why);
  if (topi_target_lanes(ctx, target) < 0) return -1;
  static const int64_t b01[] = {0, 1};
  int global = t == &topi_tmpl_global_pool;
  int64_t unroll_def = !global && p->kh * p->kw <= 16;
  if (tune_space_init(ctx, sp, t->name, t->config_size) ||
      tune_define_field(sp, "vectorize", "innermost output dimension vectorized (by lanes)",
                        offsetof(topi_pool_config, vectorize), 2, b01, 1) < 0 ||
      tune_define_field(sp, "unroll", "the window's taps unrolled (global_pool: 0)",
                        offsetof(topi_pool_config, unroll), global ? 1 : 2, b01, unroll_def) < 0 ||
      tune_define_field(sp, "parallel", "parallel over the two outer output dimensions",
                        offsetof(topi_pool_config, parallel), 2, b01, 1) < 0)
    return -1;
  return 0;
}

static int pool_applies(tec_ctx *ctx, const void *p, const char **why) {
  const char *w = pool_why(ctx, p, 0);
  if (why) *why = w;
  return w == NULL;
}
static int gpool_applies(tec_ctx *ctx, const void *p, const char **why) {
  const char *w = pool_why(ctx, p, 1);
  if (why) *why = w;
  return w == NULL;
}
static int pool_decl_fn(tec_ctx *ctx, const void *p, topi_decl *d) { return declare(ctx, p, 0, d); }
static int gpool_decl_fn(tec_ctx *ctx, const void *p, topi_decl *d) { return declare(ctx, p, 1, d); }
static int pool_sched_fn(const topi_decl *d, const void *c, const tec_target *t, topi_op *o) {
  return schedule(&topi_tmpl_pool, d, c, t, o);
}
static int gpool_sched_fn(const topi_decl *d, const void *c, const tec_target *t, topi_op *o) {
  return schedule(&topi_tmpl_global_pool, d, c, t, o);
}
static int pool_space_fn(tec_ctx *ctx, const void *p, const tec_target *t, tune_space *s) {
  return space(&topi_tmpl_pool, ctx, p, t, s);
}
static int gpool_space_fn(tec_ctx *ctx, const void *p, const tec_target *t, tune_space *s) {
  return space(&topi_tmpl_global_pool, ctx, p, t, s);
}

const topi_template topi_tmpl_pool = {
    "pool2d", "max / average pooling, any layout to any, taps unrolled, lanes vectorized",
    TOPI_PROBLEM_POOL, sizeof(topi_pool_config), pool_applies, pool_decl_fn, pool_sched_fn,
    pool_space_fn, "topi_pool_config"};
const topi_template topi_tmpl_global_pool = {
    "global_pool", "global max / average pooling, any layout to any (e.g. NCHW[x]c -> NCHW)",
    TOPI_PROBLEM_POOL, sizeof(topi_pool_config), gpool_applies, gpool_decl_fn, gpool_sched_fn,
    gpool_space_fn, "topi_pool_config"};

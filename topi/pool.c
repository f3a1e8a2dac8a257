/* pool.c — 2-d pooling as two three-function templates: "pool2d" (max or average over
 * kh x kw windows with stride, dilation, zero padding (asymmetric too) and ceil mode) and
 * "global_pool" (the whole input), from any activation layout to any (so the last pool of a
 * network can also be its layout change).
 *
 *   acc[o]  = max / sum_{i, j} in[n, c, oy*sh - pt + i*dh, ox*sw - pl + j*dw]   (padding: excluded)
 *   out[o]  = acc[o]                                  (max)
 *           = acc[o] / count(oy, ox)                  (average: the taps inside the input, or
 *                                                      with count_include_pad those inside the
 *                                                      padded input)
 *           = 0 for the channels past c of an NCHW[x]c output
 *
 * o runs over the output in out_layout; (n, c, oy, ox) are its logical coordinates
 * (topi_layout_coords). The reads outside the input (the padding, and the rows / columns a
 * ceil_mode window runs past it) are selects under likely() (max: -FLT_MAX, sum: 0), so loop
 * partitioning leaves the interior without compares. The count is closed form per dimension
 * (a constant when every window is whole). Schedule: acc computed per output vector
 * (compute_at the innermost output loop, split by the lanes), its taps unrolled, the lanes
 * vectorized; the two outer output dimensions fused and parallel.
 */
#include <float.h>
#include <string.h>
#include "topi/internal.h"

/* One spatial dimension of a pooling: window k taps d apart (extent ext), stride s, padding
 * pb before and pe after, out outputs; over: how far the last window reads past the input. */
typedef struct pool_dim {
  int64_t size, k, s, d, pb, pe, ext, out, over;
} pool_dim;

typedef struct pool_decl {
  topi_pool p;
  int global;
  pool_dim dy, dx;
  te_tensor *in, *acc;
  const ir_expr *ry, *rx;
} pool_decl;

static int64_t pad_end(const topi_pool *p, int h) {
  return p->pad_end_given ? (h ? p->pad_bottom : p->pad_right) : (h ? p->pad_h : p->pad_w);
}

/* The geometry of dimension h (1) or w (0); -1 with an error (ctx may be NULL). */
static int dim_of(tec_ctx *ctx, const topi_pool *p, int h, pool_dim *g) {
  int64_t dil = h ? p->dilation_h : p->dilation_w;
  *g = (pool_dim){.size = h ? p->h : p->w, .k = h ? p->kh : p->kw,
                  .s = h ? p->stride_h : p->stride_w, .d = dil > 1 ? dil : 1,
                  .pb = h ? p->pad_h : p->pad_w, .pe = pad_end(p, h)};
  const char *dim = h ? "height" : "width";
  if (g->k < 1 || g->s < 1 || dil < 0 || p->ceil_mode < 0 || p->ceil_mode > 1) {
    if (ctx)
      tec_ctx_set_error(ctx, "pool2d: %s: window %lld, stride %lld, dilation %lld, ceil_mode %d "
                             "(legal: window and stride >= 1, dilation >= 0 (0, 1: none), "
                             "ceil_mode 0 or 1)",
                        dim, (long long)g->k, (long long)g->s, (long long)dil, p->ceil_mode);
    return -1;
  }
  g->ext = (g->k - 1) * g->d + 1;
  int64_t span = g->size + g->pb + g->pe - g->ext;
  if (g->pb < 0 || g->pe < 0 || span < 0) {
    if (ctx)
      tec_ctx_set_error(ctx, "pool2d: %s: the window's extent %lld (%lld taps, dilation %lld) "
                             "is larger than the padded input %lld (%lld + %lld + %lld), or a "
                             "padding is < 0",
                        dim, (long long)g->ext, (long long)g->k, (long long)g->d,
                        (long long)(g->size + g->pb + g->pe), (long long)g->pb,
                        (long long)g->size, (long long)g->pe);
    return -1;
  }
  g->out = (p->ceil_mode ? topi_ceil_div(span, g->s) : span / g->s) + 1;
  if (p->ceil_mode && (g->out - 1) * g->s >= g->size + g->pb) g->out--; /* starts past it */
  int64_t last = (g->out - 1) * g->s - g->pb + g->ext - g->size;
  g->over = last > 0 ? last : 0;
  return 0;
}

int topi_pool_out_hw(tec_ctx *ctx, const topi_pool *p, int64_t *oh, int64_t *ow) {
  pool_dim y, x;
  if (!p || !oh || !ow) return ctx ? tec_ctx_set_error(ctx, "pool2d: problem and sizes are required") : -1;
  if (dim_of(ctx, p, 1, &y) || dim_of(ctx, p, 0, &x)) return -1;
  *oh = y.out, *ow = x.out;
  return 0;
}

int topi_pool_auto_pad(tec_ctx *ctx, topi_pool *p, topi_auto_pad mode) {
  if (!ctx) return -1;
  if (!p) return tec_ctx_set_error(ctx, "topi_pool_auto_pad: the problem is NULL");
  if (mode < TOPI_AUTO_PAD_NOTSET || mode > TOPI_AUTO_PAD_VALID)
    return tec_ctx_set_error(ctx, "topi_pool_auto_pad: mode %d (legal: TOPI_AUTO_PAD_NOTSET, "
                                  "_SAME_UPPER, _SAME_LOWER, _VALID)", (int)mode);
  if (mode == TOPI_AUTO_PAD_NOTSET) return 0;
  int64_t pads[2][2] = {{0, 0}, {0, 0}}; /* [h, w][begin, end] */
  for (int h = 1; h >= 0; h--) {
    int64_t size = h ? p->h : p->w, k = h ? p->kh : p->kw, s = h ? p->stride_h : p->stride_w;
    int64_t dil = h ? p->dilation_h : p->dilation_w, d = dil > 1 ? dil : 1;
    if (size < 1 || k < 1 || s < 1 || dil < 0)
      return tec_ctx_set_error(ctx, "topi_pool_auto_pad: %s: size %lld, window %lld, stride "
                                    "%lld, dilation %lld (legal: >= 1, dilation >= 0)",
                               h ? "height" : "width", (long long)size, (long long)k,
                               (long long)s, (long long)dil);
    if (mode == TOPI_AUTO_PAD_VALID) continue;
    int64_t total = (topi_ceil_div(size, s) - 1) * s + (k - 1) * d + 1 - size;
    if (total < 0) total = 0;
    int64_t small = total / 2, big = total - small;
    pads[!h][0] = mode == TOPI_AUTO_PAD_SAME_UPPER ? small : big;
    pads[!h][1] = mode == TOPI_AUTO_PAD_SAME_UPPER ? big : small;
  }
  p->pad_h = pads[0][0], p->pad_bottom = pads[0][1];
  p->pad_w = pads[1][0], p->pad_right = pads[1][1];
  p->pad_end_given = 1;
  return 0;
}

/* NULL if every window of g holds a tap inside the input, else the first empty one (arena). */
static const char *empty_window(tec_ctx *ctx, const pool_dim *g, const char *dim) {
  for (int64_t o = 0; o < g->out; o++) {
    int64_t start = o * g->s - g->pb, i0 = start >= 0 ? 0 : topi_ceil_div(-start, g->d);
    if (i0 >= g->k || start + i0 * g->d >= g->size)
      return tec_ctx_printf(ctx, "pool2d: %s: output %lld's window (taps %lld + i*%lld, i < "
                                 "%lld) holds no input element (input 0..%lld): it would have "
                                 "no value; less padding or dilation",
                            dim, (long long)o, (long long)start, (long long)g->d,
                            (long long)g->k, (long long)g->size - 1);
  }
  return NULL;
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
  if (p->pad_end_given != 0 && p->pad_end_given != 1)
    return tec_ctx_printf(ctx, "%s: pad_end_given = %d (legal: 0, 1)", who, p->pad_end_given);
  if (topi_layout_check(ctx, who, "input", p->in_layout) ||
      topi_layout_check(ctx, who, "output", p->out_layout))
    return tec_ctx_error(ctx);
  const char *m = topi_margin_refused(ctx, who, "input", p->in_layout);
  if (m || (m = topi_margin_refused(ctx, who, "output", p->out_layout)))
    return tec_ctx_printf(ctx, "%s: %s", who, m);
  if (global) {
    if (p->kh || p->kw || p->stride_h || p->stride_w || p->pad_h || p->pad_w || p->pad_end_given ||
        p->pad_bottom || p->pad_right || p->dilation_h || p->dilation_w || p->ceil_mode)
      return tec_ctx_printf(ctx, "global_pool: the window is the whole input: kh, kw, strides, "
                                 "paddings, dilations and ceil_mode must be 0 (got kernel "
                                 "%lldx%lld stride %lldx%lld pad %lld,%lld,%lld,%lld dilation "
                                 "%lldx%lld ceil_mode %d); pool2d takes them",
                            (long long)p->kh, (long long)p->kw, (long long)p->stride_h,
                            (long long)p->stride_w, (long long)p->pad_h, (long long)p->pad_w,
                            (long long)p->pad_bottom, (long long)p->pad_right,
                            (long long)p->dilation_h, (long long)p->dilation_w, p->ceil_mode);
    return NULL;
  }
  pool_dim g[2];
  if (dim_of(ctx, p, 1, &g[0]) || dim_of(ctx, p, 0, &g[1])) return tec_ctx_error(ctx);
  for (int i = 0; i < 2; i++) {
    const char *dim = i ? "width" : "height";
    if (g[i].pb >= g[i].ext || g[i].pe >= g[i].ext)
      return tec_ctx_printf(ctx, "pool2d: %s: padding %lld before, %lld after must be >= 0 and "
                                 "smaller than the window's extent %lld (%lld taps, dilation "
                                 "%lld): a window wholly in the padding has no value",
                            dim, (long long)g[i].pb, (long long)g[i].pe, (long long)g[i].ext,
                            (long long)g[i].k, (long long)g[i].d);
    const char *e = empty_window(ctx, &g[i], dim);
    if (e) return e;
  }
  return NULL;
}

/* The window's first input row / column of output coordinate o. */
static const ir_expr *win0(tec_ctx *ctx, const ir_expr *o, const pool_dim *g) {
  return ir_sub(ir_mul(o, ir_int(ctx, g->s)), ir_int(ctx, g->pb));
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
  const ir_expr *iy = ir_add(win0(ctx, y, &d->dy), topi_dilate(ctx, d->ry, d->dy.d));
  const ir_expr *ix = ir_add(win0(ctx, x, &d->dx), topi_dilate(ctx, d->rx, d->dx.d));
  /* the rows / columns read past the input: the padding, and a ceil_mode window's overhang */
  int64_t ny = d->dy.pb > d->dy.over ? d->dy.pb : d->dy.over;
  int64_t nx = d->dx.pb > d->dx.over ? d->dx.pb : d->dx.over;
  if (p->mode == TOPI_POOL_AVG)
    return te_sum(topi_pad_read(d->in, p->in_layout, p->h, p->w, n, c, iy, ix, ny, nx), 2, axes,
                  NULL);
  /* max: the padding is -FLT_MAX, so it never wins (every window holds a tap: pool_why) */
  const ir_expr *v = topi_layout_read(d->in, p->in_layout, n, c, iy, ix), *cond = NULL;
  const ir_expr *zero = ir_int(ctx, 0);
#define POOL_AND(e) cond = cond ? ir_and(cond, (e)) : (e)
  if (d->dy.pb) POOL_AND(ir_ge(iy, zero));
  if (d->dy.over) POOL_AND(ir_lt(iy, ir_int(ctx, p->h)));
  if (d->dx.pb) POOL_AND(ir_ge(ix, zero));
  if (d->dx.over) POOL_AND(ir_lt(ix, ir_int(ctx, p->w)));
#undef POOL_AND
  if (cond) v = ir_select(ir_likely(cond), v, ir_float(ctx, -FLT_MAX));
  return te_max(v, 2, axes, NULL);
}

/* ceil(a / d) for an IR a (d >= 1; floor division, so right for a of either sign). */
static const ir_expr *ceil_by(tec_ctx *ctx, const ir_expr *a, int64_t d) {
  return d == 1 ? a : ir_floordiv(ir_add(a, ir_int(ctx, d - 1)), ir_int(ctx, d));
}

/* The taps of output o's window along g inside [lo, hi): the i < k with lo <= o0 + i*d < hi,
 * min(k, ceil((hi - o0) / d)) - max(0, ceil((lo - o0) / d)); NULL when it is k everywhere. */
static const ir_expr *taps(tec_ctx *ctx, const ir_expr *o, const pool_dim *g, int64_t lo,
                           int64_t hi) {
  if (-g->pb >= lo && (g->out - 1) * g->s - g->pb + g->ext <= hi) return NULL;
  const ir_expr *o0 = win0(ctx, o, g);
  const ir_expr *last = ir_min(ceil_by(ctx, ir_sub(ir_int(ctx, hi), o0), g->d), ir_int(ctx, g->k));
  const ir_expr *first = ir_max(ceil_by(ctx, ir_sub(ir_int(ctx, lo), o0), g->d), ir_int(ctx, 0));
  return ir_sub(last, first);
}

/* The divisor of an average: the taps inside the input, or (count_include_pad) inside the
 * padded input (a ceil_mode window's overhang past the end padding is not counted). */
static const ir_expr *count(tec_ctx *ctx, const pool_decl *d, const ir_expr *y, const ir_expr *x) {
  int inc = d->p.count_include_pad;
  const pool_dim *gy = &d->dy, *gx = &d->dx;
  const ir_expr *cy = taps(ctx, y, gy, inc ? -gy->pb : 0, gy->size + (inc ? gy->pe : 0));
  const ir_expr *cx = taps(ctx, x, gx, inc ? -gx->pb : 0, gx->size + (inc ? gx->pe : 0));
  if (!cy && !cx) return ir_float(ctx, (double)(gy->k * gx->k));
  const ir_expr *c = !cy ? ir_mul(cx, ir_int(ctx, gy->k))
                   : !cx ? ir_mul(cy, ir_int(ctx, gx->k)) : ir_mul(cy, cx);
  return ir_cast(TEC_F32, c);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  pool_decl *d = u;
  const topi_pool *p = &d->p;
  int nd = d->acc->ndim;
  const ir_expr *v = te_read(d->acc, nd, i);
  const ir_expr *n, *c, *y, *x;
  topi_layout_coords(ctx, p->out_layout, i, &n, &c, &y, &x);
  if (p->mode == TOPI_POOL_AVG) {
    const ir_expr *cnt = d->global ? ir_float(ctx, (double)(p->h * p->w)) : count(ctx, d, y, x);
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
  int64_t oh = 1, ow = 1;
  if (!global) {
    if (dim_of(ctx, p, 1, &d->dy) || dim_of(ctx, p, 0, &d->dx)) return -1;
    oh = d->dy.out, ow = d->dx.out;
  }
  d->ry = te_reduce_axis_n(ctx, "ky", global ? p->h : p->kh);
  d->rx = te_reduce_axis_n(ctx, "kx", global ? p->w : p->kw);
  int nd_in, nd_out;
  const ir_expr *const *sin = topi_layout_shape(ctx, p->in_layout, p->n, p->c, p->h, p->w, &nd_in);
  const ir_expr *const *so = topi_layout_shape(ctx, p->out_layout, p->n, p->c, oh, ow, &nd_out);
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
  int64_t ext = inner_extent(d->p.out_layout, d->p.c, d->global ? 1 : d->dx.out);
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
  /* the taps unrolled (with the accumulator's zeroing and its result, twice for a peeled
   * border copy) within the cap on unrolled bodies (topi_unroll_ok): else a loop only */
  int unrollable = !global && topi_unroll_ok(2 * (p->kh * p->kw + 2));
  if (tune_space_init(ctx, sp, t->name, t->config_size) ||
      tune_define_field(sp, "vectorize", "innermost output dimension vectorized (by lanes)",
                        offsetof(topi_pool_config, vectorize), 2, b01, 1) < 0 ||
      tune_define_field(sp, "unroll",
                        "the window's taps unrolled (global_pool and windows past the unroll cap: 0)",
                        offsetof(topi_pool_config, unroll), unrollable ? 2 : 1, b01, unroll_def) < 0 ||
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

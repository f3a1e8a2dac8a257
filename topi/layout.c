/* layout.c — activation layouts (NCHW, NHWC, NCHW[x]c, each with an optional zero margin
 * "+m<k>": topi/margin.c): parsing, shapes (logical and the buffer's), indexing (a margin read
 * at +m), the inlined zero padding, and the layout-transform template used at a network's
 * edges.
 *
 *   NCHW -> NCHW16c:  out[n, C, y, x, v] = c < channels ? in[n, C*16 + v, y, x] : 0
 *   NCHW16c -> NCHW:  out[n, c, y, x]    = in[n, c / 16, y, x, c % 16]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topi/internal.h"

#define TOPI_MARGIN_MAX 1024

/* The layout without its suffix (s[0..len)) -> kind and block; 0 or -1. */
static int parse_base(const char *s, size_t len, topi_layout *out) {
  if (len == 4 && !strncmp(s, "NCHW", 4)) return *out = (topi_layout){TOPI_NCHW, 0, 0}, 0;
  if (len == 4 && !strncmp(s, "NHWC", 4)) return *out = (topi_layout){TOPI_NHWC, 0, 0}, 0;
  if (len > 5 && !strncmp(s, "NCHW", 4) && s[4] >= '1' && s[4] <= '9' && s[len - 1] == 'c') {
    long long b = 0;
    for (size_t i = 4; i < len - 1; i++) {
      if (s[i] < '0' || s[i] > '9' || b > 4096) return -1;
      b = b * 10 + (s[i] - '0');
    }
    if (b >= 1 && b <= 4096) return *out = (topi_layout){TOPI_NCHWC, b, 0}, 0;
  }
  return -1;
}

/* "<k>" (decimal digits only, 0 <= k <= TOPI_MARGIN_MAX) -> *m; 0 or -1. */
static int parse_margin(const char *s, int64_t *m) {
  int64_t v = 0;
  if (!*s) return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > TOPI_MARGIN_MAX) return -1;
    v = v * 10 + (*s - '0');
  }
  if (v > TOPI_MARGIN_MAX) return -1;
  return *m = v, 0;
}

int topi_layout_parse(tec_ctx *ctx, const char *s, topi_layout *out) {
  if (!s) return tec_ctx_set_error(ctx, "topi_layout_parse: layout is NULL");
  const char *plus = strchr(s, '+');
  size_t len = plus ? (size_t)(plus - s) : strlen(s);
  topi_layout l;
  if (parse_base(s, len, &l) == 0 && (!plus || (plus[1] == 'm' && !parse_margin(plus + 2, &l.margin))))
    return *out = l, 0;
  return tec_ctx_set_error(ctx, "topi_layout_parse: unknown layout '%s' (legal: NCHW, NHWC, "
                                "NCHW<x>c with 1 <= x <= 4096, e.g. NCHW16c; each optionally "
                                "with a zero margin '+m<k>', 0 <= k <= %d, e.g. NCHW16c+m1)",
                           s, TOPI_MARGIN_MAX);
}

const char *topi_layout_str(tec_ctx *ctx, topi_layout l) {
  const char *base = "?";
  switch (l.kind) {
  case TOPI_NCHW: base = "NCHW"; break;
  case TOPI_NHWC: base = "NHWC"; break;
  case TOPI_NCHWC: base = tec_ctx_printf(ctx, "NCHW%lldc", (long long)l.block); break;
  }
  return l.margin ? tec_ctx_printf(ctx, "%s+m%lld", base, (long long)l.margin) : base;
}

int topi_layout_check(tec_ctx *ctx, const char *who, const char *what, topi_layout l) {
  if (l.margin < 0 || l.margin > TOPI_MARGIN_MAX)
    return tec_ctx_set_error(ctx, "%s: %s layout's margin %lld is not legal (0 <= margin <= %d)",
                             who, what, (long long)l.margin, TOPI_MARGIN_MAX);
  if (l.kind == TOPI_NCHWC ? l.block >= 1 && l.block <= 4096
                           : (l.kind == TOPI_NCHW || l.kind == TOPI_NHWC) && l.block == 0)
    return 0;
  return tec_ctx_set_error(ctx, "%s: %s layout {kind %d, block %lld} is not legal (TOPI_NCHW or "
                                "TOPI_NHWC with block 0, TOPI_NCHWC with 1 <= block <= 4096)",
                           who, what, (int)l.kind, (long long)l.block);
}

const ir_expr *const *topi_layout_buffer_shape(tec_ctx *ctx, topi_layout l, int64_t n, int64_t c,
                                               int64_t h, int64_t w, int *nd) {
  return topi_layout_shape(ctx, l, n, c, h + 2 * l.margin, w + 2 * l.margin, nd);
}

const ir_expr *const *topi_layout_shape(tec_ctx *ctx, topi_layout l, int64_t n, int64_t c,
                                        int64_t h, int64_t w, int *nd) {
  switch (l.kind) {
  case TOPI_NHWC: *nd = 4; return TE_SHAPE(ctx, n, h, w, c);
  case TOPI_NCHWC: *nd = 5; return TE_SHAPE(ctx, n, topi_ceil_div(c, l.block), h, w, l.block);
  default: *nd = 4; return TE_SHAPE(ctx, n, c, h, w);
  }
}

const ir_expr *topi_layout_read(const te_tensor *t, topi_layout l, const ir_expr *n,
                                const ir_expr *c, const ir_expr *y, const ir_expr *x) {
  if (!t || !c) return NULL;
  if (l.margin) { /* the interior of the buffer */
    const ir_expr *m = ir_int(t->ctx, l.margin);
    y = ir_add(y, m), x = ir_add(x, m);
  }
  switch (l.kind) {
  case TOPI_NHWC: return TE_AT(t, n, y, x, c);
  case TOPI_NCHWC: {
    const ir_expr *b = ir_int(t->ctx, l.block);
    return TE_AT(t, n, ir_floordiv(c, b), y, x, ir_floormod(c, b));
  }
  default: return TE_AT(t, n, c, y, x);
  }
}

const ir_expr *topi_pad_read(const te_tensor *t, topi_layout l, int64_t h, int64_t w,
                             const ir_expr *n, const ir_expr *c, const ir_expr *y,
                             const ir_expr *x, int64_t pad_h, int64_t pad_w) {
  if (!t) return NULL;
  tec_ctx *ctx = t->ctx;
  const ir_expr *cond = NULL;
#define TOPI_AND(e) cond = cond ? ir_and(cond, (e)) : (e)
  int64_t m = l.margin; /* the ring's zeros are read in place: compares only past it */
  if (pad_h > m) TOPI_AND(ir_ge(y, ir_int(ctx, -m))), TOPI_AND(ir_lt(y, ir_int(ctx, h + m)));
  if (pad_w > m) TOPI_AND(ir_ge(x, ir_int(ctx, -m))), TOPI_AND(ir_lt(x, ir_int(ctx, w + m)));
#undef TOPI_AND
  const ir_expr *v = topi_layout_read(t, l, n, c, y, x);
  return cond ? ir_select(ir_likely(cond), v, ir_float(ctx, 0.0)) : v;
}

void topi_layout_coords(tec_ctx *ctx, topi_layout l, const ir_expr *const *i, const ir_expr **n,
                        const ir_expr **c, const ir_expr **y, const ir_expr **x) {
  *n = i[0];
  switch (l.kind) {
  case TOPI_NHWC: *y = i[1], *x = i[2], *c = i[3]; break;
  case TOPI_NCHWC:
    *c = ir_add(ir_mul(i[1], ir_int(ctx, l.block)), i[4]), *y = i[2], *x = i[3];
    break;
  default: *c = i[1], *y = i[2], *x = i[3]; break;
  }
}

/* ---- the layout-transform template ---- */

typedef struct lt_decl {
  topi_layout_problem p;
  te_tensor *in;
} lt_decl;

static const ir_expr *lt_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  lt_decl *d = u;
  const ir_expr *n, *c, *y, *x;
  topi_layout_coords(ctx, d->p.to, i, &n, &c, &y, &x);
  const ir_expr *v = topi_layout_read(d->in, d->p.from, n, c, y, x);
  if (d->p.to.kind == TOPI_NCHWC && d->p.c % d->p.to.block)
    v = ir_select(ir_lt(c, ir_int(ctx, d->p.c)), v, ir_float(ctx, 0.0));
  return v;
}

static int lt_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_layout_problem *p = problem;
  if (p->n < 1 || p->c < 1 || p->h < 1 || p->w < 1) {
    if (why) *why = "sizes must be >= 1";
    return 0;
  }
  if (topi_layout_check(ctx, "layout_transform", "from", p->from) ||
      topi_layout_check(ctx, "layout_transform", "to", p->to)) {
    if (why) *why = tec_ctx_error(ctx);
    return 0;
  }
  const char *m = topi_margin_refused(ctx, "layout_transform", "from", p->from);
  if (m || (m = topi_margin_refused(ctx, "layout_transform", "to", p->to))) {
    if (why) *why = m;
    return 0;
  }
  return 1;
}

static int lt_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_layout_problem *p = p_arg;
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, "topi_layout_declare: problem and decl are required");
  if (p->n < 1 || p->c < 1 || p->h < 1 || p->w < 1)
    return tec_ctx_set_error(ctx, "topi_layout_declare: sizes must be >= 1 (got n=%lld c=%lld "
                                  "h=%lld w=%lld)", (long long)p->n, (long long)p->c,
                             (long long)p->h, (long long)p->w);
  if (topi_layout_check(ctx, "topi_layout_declare", "from", p->from) ||
      topi_layout_check(ctx, "topi_layout_declare", "to", p->to))
    return -1;
  if (topi_refuse(ctx, &topi_tmpl_layout, p)) return -1;
  lt_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  te_tensor **args = tec_ctx_alloc(ctx, 2 * sizeof *args);
  if (!d || !args) return -1;
  d->p = *p;
  int nd_in, nd_out;
  const ir_expr *const *sin = topi_layout_shape(ctx, p->from, p->n, p->c, p->h, p->w, &nd_in);
  const ir_expr *const *sout = topi_layout_shape(ctx, p->to, p->n, p->c, p->h, p->w, &nd_out);
  d->in = te_placeholder(ctx, "in", TEC_F32, nd_in, sin);
  te_tensor *o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = nd_out, .shape = sout,
                                                    .body = lt_body, .user = d,
                                                    .tag = "layout_transform"});
  if (!o) return -1;
  args[0] = d->in, args[1] = o;
  *out = (topi_decl){&topi_tmpl_layout, ctx, d, 2, args, o, d};
  return 0;
}

static int lt_schedule(const topi_decl *d, const void *cfg_arg, const tec_target *target,
                       topi_op *op) {
  const topi_layout_config *cfg = cfg_arg;
  if (!d || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_layout, d, cfg, target) || topi_op_begin(d, op)) return -1;
  sch_stage *st = sch_stage_of(op->sched, d->out);
  int nd = d->out->ndim;
  if (cfg->parallel) {
    sch_iter *f = sch_axis(st, 0);
    if (sch_fuse(st, f, sch_axis(st, 1), &f) || sch_parallel(st, f)) return -1;
  }
  if (cfg->vectorize) {
    const lt_decl *ld = d->priv;
    int lanes = topi_target_lanes(d->ctx, target);
    if (lanes < 0) return -1;
    sch_iter *last = sch_axis(st, nd - 1), *o, *i;
    int64_t ext = ld->p.to.kind == TOPI_NCHWC ? ld->p.to.block
                  : ld->p.to.kind == TOPI_NHWC ? ld->p.c : ld->p.w;
    if (ext <= lanes) return sch_vectorize(st, last);
    if (sch_split(st, last, lanes, &o, &i) || sch_vectorize(st, i)) return -1;
  }
  return 0;
}

static int lt_space(tec_ctx *ctx, const void *p_arg, const tec_target *target,
                    tune_space *sp) {
  const topi_layout_problem *p = p_arg;
  (void)p;
  if (topi_target_lanes(ctx, target) < 0) return -1;
  static const int64_t b01[] = {0, 1};
  if (tune_space_init(ctx, sp, topi_tmpl_layout.name, topi_tmpl_layout.config_size) ||
      tune_define_field(sp, "vectorize", "innermost output dimension vectorized",
                        offsetof(topi_layout_config, vectorize), 2, b01, 1) < 0 ||
      tune_define_field(sp, "parallel", "parallel over the two outer dimensions",
                        offsetof(topi_layout_config, parallel), 2, b01, 1) < 0)
    return -1;
  return 0;
}

const topi_template topi_tmpl_layout = {
    "layout_transform", "activation layout transform NCHW <-> NHWC <-> NCHW[x]c",
    TOPI_PROBLEM_LAYOUT, sizeof(topi_layout_config), lt_applies, lt_declare, lt_schedule, lt_space,
    "topi_layout_config"};

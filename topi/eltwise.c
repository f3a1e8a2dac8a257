/* eltwise.c — the residual add as a three-function template: out = act(a + b) for two
 * activations of one layout (NCHW, NHWC or NCHW[x]c; the zero lanes past c of a blocked
 * layout stay zero: 0 + 0 through relu / relu6 is 0). One pass: the innermost dimension
 * vectorized in groups of the target's lanes, the two outer dimensions fused and parallel.
 * Inside a network the convolution's residual epilogue does the same with no pass at all.
 */
#include <string.h>
#include "topi/internal.h"

typedef struct ew_decl {
  topi_eltwise p;
  te_tensor *a, *b;
} ew_decl;

static const ir_expr *add_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  ew_decl *d = u;
  int nd = d->a->ndim;
  topi_epilogue e = {0, 0, d->p.act};
  return topi_epilogue_expr(ctx, &e, ir_add(te_read(d->a, nd, i), te_read(d->b, nd, i)), NULL,
                            NULL);
}

static const char *ew_why(tec_ctx *ctx, const topi_eltwise *p) {
  if (!p) return "eltwise_add: the problem is NULL";
  if (p->n < 1 || p->c < 1 || p->h < 1 || p->w < 1)
    return tec_ctx_printf(ctx, "eltwise_add: sizes must be >= 1 (got n=%lld c=%lld h=%lld "
                               "w=%lld)", (long long)p->n, (long long)p->c, (long long)p->h,
                          (long long)p->w);
  if (p->act < TOPI_ACT_NONE || p->act > TOPI_ACT_RELU6)
    return tec_ctx_printf(ctx, "eltwise_add: activation %d is not one of TOPI_ACT_NONE, _RELU, "
                               "_RELU6", (int)p->act);
  if (topi_layout_check(ctx, "eltwise_add", "the", p->layout)) return tec_ctx_error(ctx);
  const char *m = topi_margin_refused(ctx, "eltwise_add", "the", p->layout);
  return m ? tec_ctx_printf(ctx, "eltwise_add: %s", m) : NULL;
}

static int ew_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_eltwise *p = p_arg;
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, "eltwise_add: problem and decl are required");
  const char *why = ew_why(ctx, p);
  if (why) return tec_ctx_set_error(ctx, "%s", why);
  ew_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  te_tensor **args = tec_ctx_alloc(ctx, 3 * sizeof *args);
  topi_eltwise *copy = tec_ctx_alloc(ctx, sizeof *copy);
  if (!d || !args || !copy) return -1;
  d->p = *copy = *p;
  int nd;
  const ir_expr *const *s = topi_layout_shape(ctx, p->layout, p->n, p->c, p->h, p->w, &nd);
  d->a = te_placeholder(ctx, "a", TEC_F32, nd, s);
  d->b = te_placeholder(ctx, "b", TEC_F32, nd, s);
  if (!d->a || !d->b) return -1;
  te_tensor *o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = nd, .shape = s,
                                                    .body = add_body, .user = d,
                                                    .tag = "residual_add"});
  if (!o) return -1;
  args[0] = d->a, args[1] = d->b, args[2] = o;
  *out = (topi_decl){&topi_tmpl_eltwise, ctx, copy, 3, args, o, d};
  return 0;
}

static int ew_schedule(const topi_decl *dc, const void *cfg_arg,
                       const tec_target *target, topi_op *op) {
  const topi_eltwise_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_eltwise, dc, cfg, target) || topi_op_begin(dc, op)) return -1;
  const ew_decl *d = dc->priv;
  sch_stage *st = sch_stage_of(op->sched, dc->out);
  int nd = dc->out->ndim;
  if (!st) return -1;
  if (cfg->parallel) {
    sch_iter *f;
    if (sch_fuse(st, sch_axis(st, 0), sch_axis(st, 1), &f) || sch_parallel(st, f)) return -1;
  }
  if (cfg->vectorize) {
    int lanes = topi_target_lanes(dc->ctx, target);
    const topi_layout l = d->p.layout;
    int64_t ext = l.kind == TOPI_NCHWC ? l.block : l.kind == TOPI_NHWC ? d->p.c : d->p.w;
    sch_iter *last = sch_axis(st, nd - 1), *o, *i;
    if (lanes < 0) return -1;
    if (ext <= lanes) return sch_vectorize(st, last);
    if (sch_split(st, last, lanes, &o, &i) || sch_vectorize(st, i)) return -1;
  }
  return 0;
}

static int ew_space(tec_ctx *ctx, const void *p_arg, const tec_target *target,
                    tune_space *sp) {
  const topi_eltwise *p = p_arg;
  if (!ctx) return -1;
  const char *why = ew_why(ctx, p);
  if (why) return tec_ctx_set_error(ctx, "%s", why);
  if (topi_target_lanes(ctx, target) < 0) return -1;
  static const int64_t b01[] = {0, 1};
  if (tune_space_init(ctx, sp, topi_tmpl_eltwise.name, topi_tmpl_eltwise.config_size) ||
      tune_define_field(sp, "vectorize", "innermost dimension vectorized (by lanes)",
                        offsetof(topi_eltwise_config, vectorize), 2, b01, 1) < 0 ||
      tune_define_field(sp, "parallel", "parallel over the two outer dimensions",
                        offsetof(topi_eltwise_config, parallel), 2, b01, 1) < 0)
    return -1;
  return 0;
}

static int ew_applies(tec_ctx *ctx, const void *p, const char **why) {
  const char *w = ew_why(ctx, p);
  if (why) *why = w;
  return w == NULL;
}

const topi_template topi_tmpl_eltwise = {
    "eltwise_add", "residual add out = act(a + b), any layout, vectorized, parallel",
    TOPI_PROBLEM_ELTWISE, sizeof(topi_eltwise_config), ew_applies, ew_declare, ew_schedule,
    ew_space, "topi_eltwise_config"};

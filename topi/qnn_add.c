/* qnn_add.c — int8 elementwise add of two activations with their own params
 * (docs/quantized.md), any of NCHW, NHWC, NCHW[x]c. One pass:
 *
 *   out = clamp(round_even((double)(a - zp_a) * ra + (double)(b - zp_b) * rb) + zp_out)
 *
 * ra = a.scale / out.scale and rb likewise, each rounded to fp32 once. The products are exact
 * in double (8-bit integer x 24-bit significand), so the one rounding is the sum's, whether or
 * not the target fuses the multiply-add: the same bits on every target. */
#include "topi/qnn_internal.h"

typedef struct qa_decl {
  topi_qadd p;
  te_tensor *a, *b;
} qa_decl;

static const ir_expr *term(tec_ctx *ctx, const te_tensor *t, const ir_expr *const *i,
                           topi_qparams q, float out_scale) {
  const ir_expr *v = ir_sub(ir_cast(TEC_I32, te_read(t, t->ndim, i)), ir_int_t(ctx, TEC_I32, q.zero_point));
  return ir_mul(ir_cast(TEC_F64, v), ir_float_t(ctx, TEC_F64, (double)(q.scale / out_scale)));
}

static const ir_expr *add_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qa_decl *d = u;
  const ir_expr *f = ir_add(term(ctx, d->a, i, d->p.a, d->p.out.scale),
                            term(ctx, d->b, i, d->p.b, d->p.out.scale));
  return qnn_requant_f(ctx, f, d->p.out, d->p.act);
}

static const char *qa_why(tec_ctx *ctx, const topi_qadd *p) {
  if (!p) return "qnn_add: the problem is NULL";
  if (p->n < 1 || p->c < 1 || p->h < 1 || p->w < 1)
    return tec_ctx_printf(ctx, "qnn_add: sizes must be >= 1 (got n=%lld c=%lld h=%lld w=%lld)",
                          (long long)p->n, (long long)p->c, (long long)p->h, (long long)p->w);
  if (p->act < TOPI_ACT_NONE || p->act > TOPI_ACT_RELU6)
    return tec_ctx_printf(ctx, "qnn_add: activation %d is not one of TOPI_ACT_NONE, _RELU, "
                               "_RELU6", (int)p->act);
  if (topi_layout_check(ctx, "qnn_add", "the", p->layout)) return tec_ctx_error(ctx);
  const char *m = topi_margin_refused(ctx, "qnn_add", "the", p->layout);
  if (m) return tec_ctx_printf(ctx, "qnn_add: %s", m);
  if (topi_qparams_check(ctx, "qnn_add", "a", p->a) || topi_qparams_check(ctx, "qnn_add", "b", p->b) ||
      topi_qparams_check(ctx, "qnn_add", "out", p->out))
    return tec_ctx_error(ctx);
  return NULL;
}

static int qa_applies(tec_ctx *ctx, const void *p, const char **why) {
  const char *w = qa_why(ctx, p);
  if (why) *why = w;
  return w == NULL;
}

static int qa_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_qadd *p = p_arg;
  if (!ctx) return -1;
  if (!out) return tec_ctx_set_error(ctx, "qnn_add: problem and decl are required");
  const char *why = qa_why(ctx, p);
  if (why) return tec_ctx_set_error(ctx, "%s", why);
  qa_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  te_tensor **args = tec_ctx_alloc(ctx, 3 * sizeof *args);
  topi_qadd *copy = tec_ctx_alloc(ctx, sizeof *copy);
  if (!d || !args || !copy) return -1;
  d->p = *copy = *p;
  int nd;
  const ir_expr *const *s = topi_layout_shape(ctx, p->layout, p->n, p->c, p->h, p->w, &nd);
  d->a = te_placeholder(ctx, "a", TEC_I8, nd, s);
  d->b = te_placeholder(ctx, "b", TEC_I8, nd, s);
  te_tensor *o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = nd, .shape = s,
                                                    .body = add_body, .user = d, .tag = "qnn_add"});
  if (!d->a || !d->b || !o) return -1;
  args[0] = d->a, args[1] = d->b, args[2] = o;
  *out = (topi_decl){&topi_tmpl_qnn_add, ctx, copy, 3, args, o, d};
  return 0;
}

static int qa_schedule(const topi_decl *dc, const void *cfg_arg, const tec_target *target,
                       topi_op *op) {
  const topi_qelem_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_qnn_add, dc, cfg, target) || topi_op_begin(dc, op)) return -1;
  const qa_decl *d = dc->priv;
  return qnn_elem_schedule(dc, cfg, target, op->sched, NULL,
                           qnn_inner_extent(d->p.layout, d->p.c, d->p.w));
}

static int qa_space(tec_ctx *ctx, const void *p_arg, const tec_target *target, tune_space *sp) {
  if (qnn_refuse(ctx, &topi_tmpl_qnn_add, p_arg)) return -1;
  return qnn_elem_space(ctx, &topi_tmpl_qnn_add, target, sp);
}

const topi_template topi_tmpl_qnn_add = {
    "qnn_add", "int8 add of two activations with their own scales, requantization fused",
    TOPI_PROBLEM_QADD, sizeof(topi_qelem_config), qa_applies, qa_declare, qa_schedule, qa_space,
    "topi_qelem_config"};

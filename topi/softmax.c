/* softmax.c — softmax over the rows of [m][n] (a classifier's [batch][classes]) as a
 * three-function template, numerically stable (the row's max subtracted before exp):
 *
 *   mx[i]     = max_j in[i, j]
 *   e[i, j]   = exp(in[i, j] - mx[i])
 *   s[i]      = sum_j e[i, j]
 *   out[i, j] = e[i, j] / s[i]
 *
 * Schedule: a row at a time (the output's row loop, parallel): the row's max, exponentials
 * and sum are computed inside it (compute_at), so a row's exponentials are still in cache when
 * the quotients read them. With `vectorize`, the exponential and the quotient run in groups of
 * the target's lanes and the two reductions are factored by the lanes (rfactor: a vector of
 * partial maxima / sums per row, then one horizontal step), as the auto-scheduler's instant
 * mode schedules this program.
 */
#include <string.h>
#include "topi/internal.h"

typedef struct sm_decl {
  topi_softmax p;
  te_tensor *in, *mx, *e, *s;
  const ir_expr *rk, *rk2;
} sm_decl;

static const ir_expr *mx_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  sm_decl *d = u;
  return te_max(TE_AT(d->in, i[0], d->rk), 1, &d->rk, NULL);
}
static const ir_expr *e_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  sm_decl *d = u;
  return ir_exp(ir_sub(TE_AT(d->in, i[0], i[1]), TE_AT(d->mx, i[0])));
}
static const ir_expr *s_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  sm_decl *d = u;
  return te_sum(TE_AT(d->e, i[0], d->rk2), 1, &d->rk2, NULL);
}
static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  sm_decl *d = u;
  return ir_div(TE_AT(d->e, i[0], i[1]), TE_AT(d->s, i[0]));
}

static const char *sm_why(tec_ctx *ctx, const topi_softmax *p) {
  if (!p) return "softmax: the problem is NULL";
  if (p->m < 1 || p->n < 1)
    return tec_ctx_printf(ctx, "softmax: sizes must be >= 1 (got m=%lld rows, n=%lld classes)",
                          (long long)p->m, (long long)p->n);
  return NULL;
}

static int sm_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_softmax *p = p_arg;
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, "softmax: problem and decl are required");
  const char *why = sm_why(ctx, p);
  if (why) return tec_ctx_set_error(ctx, "%s", why);
  sm_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  te_tensor **args = tec_ctx_alloc(ctx, 2 * sizeof *args);
  topi_softmax *copy = tec_ctx_alloc(ctx, sizeof *copy);
  if (!d || !args || !copy) return -1;
  memset(d, 0, sizeof *d);
  d->p = *copy = *p;
  d->rk = te_reduce_axis_n(ctx, "k", p->n);
  d->rk2 = te_reduce_axis_n(ctx, "k2", p->n);
  const ir_expr *const *s2 = TE_SHAPE(ctx, p->m, p->n), *const *s1 = TE_SHAPE(ctx, p->m);
  d->in = te_placeholder(ctx, "in", TEC_F32, 2, s2);
  d->mx = te_compute(ctx, &(te_compute_decl){.name = "row_max", .ndim = 1, .shape = s1,
                                             .body = mx_body, .user = d, .tag = "softmax_max"});
  d->e = te_compute(ctx, &(te_compute_decl){.name = "row_exp", .ndim = 2, .shape = s2,
                                            .body = e_body, .user = d, .tag = "softmax_exp"});
  d->s = te_compute(ctx, &(te_compute_decl){.name = "row_sum", .ndim = 1, .shape = s1,
                                            .body = s_body, .user = d, .tag = "softmax_sum"});
  if (!d->in || !d->mx || !d->e || !d->s) return -1;
  te_tensor *o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 2, .shape = s2,
                                                    .body = out_body, .user = d,
                                                    .tag = "softmax"});
  if (!o) return -1;
  args[0] = d->in, args[1] = o;
  *out = (topi_decl){&topi_tmpl_softmax, ctx, copy, 2, args, o, d};
  return 0;
}

/* Splits the column loop of st by lanes (unless n fits one vector) and vectorizes it. */
static int vec_cols(sch_stage *st, int64_t n, int lanes) {
  sch_iter *j = sch_axis(st, 1), *o, *i;
  if (n <= lanes) return sch_vectorize(st, j);
  return sch_split(st, j, lanes, &o, &i) || sch_vectorize(st, i) ? -1 : 0;
}

/* The row reduction t (stage st, reduce axis k over n) computed at the output's row `row`:
 * with lanes > 0 and n > lanes, factored by the lanes (a vector of partials per row, the
 * partials' loop vectorized), both stages attached there. */
static int row_reduce(sch_schedule *s, sch_stage *st, te_tensor *t, const char *k, int64_t n,
                      int lanes, sch_stage *so, sch_iter *row) {
  if (lanes > 0 && n > lanes) {
    sch_iter *ko, *ki;
    if (sch_split(st, sch_leaf_named(st, k), lanes, &ko, &ki)) return -1;
    te_tensor *rf = sch_rfactor(s, t, ki, 1);
    sch_stage *srf = rf ? sch_stage_of(s, rf) : NULL;
    if (!srf) return -1;
    /* the partials' loops: the row, the chunks, the lanes innermost */
    const char *kout = tec_ctx_printf(sch_schedule_ctx(s), "%s.outer", k);
    sch_iter *order[3] = {sch_axis(srf, 0), kout ? sch_leaf_named(srf, kout) : NULL,
                          sch_axis(srf, 1)};
    /* the partials attached after their reader, the reduction */
    return !order[1] || sch_reorder(srf, 3, order) || sch_vectorize(srf, order[2]) ||
                   sch_compute_at(st, so, row) || sch_compute_at(srf, so, row)
               ? -1
               : 0;
  }
  return sch_compute_at(st, so, row);
}

static int sm_schedule(const topi_decl *dc, const void *cfg_arg,
                       const tec_target *target, topi_op *op) {
  const topi_softmax_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_softmax, dc, cfg, target) || topi_op_begin(dc, op)) return -1;
  const sm_decl *d = dc->priv;
  sch_schedule *s = op->sched;
  sch_stage *so = sch_stage_of(s, dc->out), *sm = sch_stage_of(s, d->mx);
  sch_stage *se = sch_stage_of(s, d->e), *ss = sch_stage_of(s, d->s);
  if (!so || !sm || !se || !ss) return -1;
  int lanes = 0;
  if (cfg->vectorize) {
    lanes = topi_target_lanes(dc->ctx, target);
    if (lanes < 0 || vec_cols(so, d->p.n, lanes)) return -1;
  }
  sch_iter *row = sch_axis(so, 0);
  if (cfg->parallel && sch_parallel(so, row)) return -1;
  /* exp first: the max is attached where its reader exp runs */
  if (sch_compute_at(se, so, row) || row_reduce(s, sm, d->mx, "k", d->p.n, lanes, so, row) ||
      row_reduce(s, ss, d->s, "k2", d->p.n, lanes, so, row))
    return -1;
  return cfg->vectorize ? vec_cols(se, d->p.n, lanes) : 0;
}

static int sm_space(tec_ctx *ctx, const void *p_arg, const tec_target *target,
                    tune_space *sp) {
  const topi_softmax *p = p_arg;
  if (!ctx) return -1;
  const char *why = sm_why(ctx, p);
  if (why) return tec_ctx_set_error(ctx, "%s", why);
  if (topi_target_lanes(ctx, target) < 0) return -1;
  static const int64_t b01[] = {0, 1};
  if (tune_space_init(ctx, sp, topi_tmpl_softmax.name, topi_tmpl_softmax.config_size) ||
      tune_define_field(sp, "vectorize",
                        "the exponential and the quotient vectorized, the max and sum by rfactor",
                        offsetof(topi_softmax_config, vectorize), 2, b01, 1) < 0 ||
      tune_define_field(sp, "parallel", "parallel over the rows",
                        offsetof(topi_softmax_config, parallel), 2, b01, p->m > 1) < 0)
    return -1;
  return 0;
}

static int sm_applies(tec_ctx *ctx, const void *p, const char **why) {
  const char *w = sm_why(ctx, p);
  if (why) *why = w;
  return w == NULL;
}

const topi_template topi_tmpl_softmax = {
    "softmax", "softmax over the rows of [m][n], max-subtracted, per-row buffers",
    TOPI_PROBLEM_SOFTMAX, sizeof(topi_softmax_config), sm_applies, sm_declare, sm_schedule,
    sm_space, "topi_softmax_config"};

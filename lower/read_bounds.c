/* read_bounds.c — lower_read_bounds: every tensor read checked against the tensor's declared
 * shape, at tec_lower where the sizes are known and by the checked entry where they are not.
 *
 * A stage computed at root runs its whole declared domain, so a read that every iteration
 * makes (not under a select's arm, nor a reduction's condition) and whose index is affine in
 * the stage's axes reads exactly the box the axes' corners give:
 *   B[i] = A[i + 5], A and B of 8:  A read at [5, 12]  -> refused here, naming A, dimension 0,
 *                                   the region and the shape ("beyond the max (7)")
 *   B[i] = A[i + 1], A and B of n:  A read at [1, n]   -> the entry asserts n <= 0 || n <= n - 1
 *                                   (lower_func.read_checks, run by entry_checks.c after the
 *                                   sizes are bound), so a call returns -1 instead of reading
 *   select(i >= 1, A[i - 1], 0)     conditional: neither (guard_loads.c predicates the load)
 * Nothing else is refused: an index that is not affine in the axes (i / 2, i % 4, a load), a
 * domain that uses another axis (a triangular reduction), a stage computed at another stage's
 * loop (it computes only the region its readers need, which bound inference clamps to its
 * domain) or inside a debug_skip_region are left to the run-time checks
 * (tec_lower_options.check_bounds, bound_checkers.c), and so is an index that uses a LET
 * variable. An argument with a margin may be read in its whole buffer ([-before, shape +
 * after)). */
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"
#include "schedule/internal.h"
#include "schedule/pragma.h"

typedef struct rb_state {
  lower_state *ls;
  lower_func *f;
  const sch_stage *st;
  arith_env *env;              /* every size >= 0 */
  int nlet, caplet;
  struct rb_let { const ir_expr *var, *val; } *lets; /* LETs around, outermost first */
  int n, cap;
  const ir_stmt **checks;      /* the entry's asserts */
  int failed;
} rb_state;

/* Adds the variables of e not yet in vars[0..*n) to it; -1 past max of them. */
static int vars_of(const ir_expr *e, const ir_expr **vars, int *n, int max) {
  if (!e) return 0;
  if (e->kind == IR_VAR) {
    for (int k = 0; k < *n; k++)
      if (vars[k] == e) return 0;
    if (*n == max) return -1;
    vars[(*n)++] = e;
    return 0;
  }
  if (vars_of(e->a, vars, n, max) || vars_of(e->b, vars, n, max) ||
      vars_of(e->c, vars, n, max) || vars_of(e->var, vars, n, max)) /* (a LET's own) */
    return -1;
  for (int k = 0; k < e->nargs; k++)
    if (vars_of(e->args[k], vars, n, max)) return -1;
  return 0;
}

/* 1 when e uses a variable of a LET around it (inlined values are never inside an index,
 * inline.c: such an index is left alone rather than rebuilt from the LET values). e's few
 * distinct variables against the LETs: a deep inline chain has thousands of them around
 * each read. */
static int uses_let(const rb_state *r, const ir_expr *e) {
  enum { MAXV = 16 };
  const ir_expr *vars[MAXV];
  int n = 0;
  if (vars_of(e, vars, &n, MAXV)) { /* many: one walk per LET */
    for (int k = 0; k < r->nlet; k++)
      if (ir_uses_var(e, r->lets[k].var)) return 1;
    return 0;
  }
  for (int k = 0; k < r->nlet; k++)
    for (int i = 0; i < n; i++)
      if (vars[i] == r->lets[k].var) return 1;
  return 0;
}

static int root_index(const sch_stage *st, const ir_expr *v) {
  for (int i = 0; i < st->nroot; i++)
    if (st->root[i]->var == v) return i;
  return -1;
}

static int uses_root(const sch_stage *st, const ir_expr *e) {
  for (int i = 0; i < st->nroot; i++)
    if (ir_uses_var(e, st->root[i]->var)) return 1;
  return 0;
}

/* The exact range [lo, hi] of idx over st's domain when idx is affine in st's axes; 0 when
 * it is not (or a domain uses another axis). */
static int affine_range(rb_state *r, const ir_expr *idx, const ir_expr **lo, const ir_expr **hi) {
  tec_ctx *ctx = r->ls->ctx;
  const sch_stage *st = r->st;
  if (!arith_is_index_type(idx->type)) return 0;
  arith_linear l;
  arith_linear_init(&l, ctx, TEC_I64);
  arith_linear_add_expr(&l, idx, 1);
  int ok = !l.oom;
  const ir_expr *a = ir_int(ctx, l.c), *b = ir_int(ctx, l.c);
  for (int k = 0; ok && k < l.n; k++) {
    const ir_expr *t = l.t[k].e, *c = ir_int(ctx, l.t[k].coef);
    int ri = root_index(st, t);
    if (ri < 0) { /* a term of sizes alone: itself on both sides */
      ok = !uses_root(st, t);
      a = ir_add(a, ir_mul(c, t));
      b = ir_add(b, ir_mul(c, t));
      continue;
    }
    const sch_iter *it = st->root[ri];
    ok = it->dom_min && it->dom_extent && !uses_root(st, it->dom_min) &&
         !uses_root(st, it->dom_extent);
    if (!ok) break;
    const ir_expr *mn = it->dom_min, *mx = ir_sub(ir_add(it->dom_min, it->dom_extent), ir_int(ctx, 1));
    a = ir_add(a, ir_mul(c, l.t[k].coef > 0 ? mn : mx));
    b = ir_add(b, ir_mul(c, l.t[k].coef > 0 ? mx : mn));
  }
  arith_linear_free(&l);
  if (!ok || !a || !b) return 0;
  *lo = arith_simplify(a, r->env);
  *hi = arith_simplify(b, r->env);
  return 1;
}

/* 1 when the stage's domain is empty (some axis of extent <= 0), as an expression */
static const ir_expr *domain_empty(rb_state *r) {
  const ir_expr *e = ir_bool(r->ls->ctx, 0);
  for (int i = 0; i < r->st->nroot; i++)
    e = ir_or(e, ir_le(r->st->root[i]->dom_extent, ir_int(r->ls->ctx, 0)));
  return arith_simplify(e, r->env);
}

static int only_sizes(const lower_func *f, const ir_expr *e);

static void size_var_found(ir_visitor *v, const ir_expr *e) {
  int *bad = ((void **)v->user)[1];
  const lower_func *f = ((void **)v->user)[0];
  if (e->kind == IR_VAR) {
    int ok = 0;
    for (int k = 0; k < f->nsize; k++) ok |= f->size_vars[k] == e;
    if (!ok) *bad = 1;
  }
  ir_visit_expr_default(v, e);
}

/* 1 if every variable of e is a size the entry binds */
static int only_sizes(const lower_func *f, const ir_expr *e) {
  int bad = 0;
  void *u[2] = {(void *)f, &bad};
  ir_visitor v;
  ir_visitor_init(&v, u);
  v.expr[IR_VAR] = size_var_found;
  ir_visit_expr(&v, e);
  return !bad;
}

/* e's text without outer parentheses */
static const char *bare(tec_ctx *ctx, const ir_expr *e) {
  const char *s = ir_expr_str(e);
  size_t n = s ? strlen(s) : 0;
  if (n > 1 && s[0] == '(' && s[n - 1] == ')') return tec_ctx_printf(ctx, "%.*s", (int)n - 2, s + 1);
  return s ? s : "?";
}

static const char *shape_text(tec_ctx *ctx, const te_tensor *t) {
  const char *s = "[";
  for (int d = 0; d < t->ndim; d++)
    s = tec_ctx_printf(ctx, "%s%s%s", s, d ? ", " : "", bare(ctx, t->shape[d]));
  s = tec_ctx_printf(ctx, "%s]", s);
  if (!te_has_margin(t)) return tec_ctx_printf(ctx, "its shape %s", s);
  const char *m = "";
  for (int d = 0; d < t->ndim; d++)
    m = tec_ctx_printf(ctx, "%s%s%lld+%lld", m, d ? ", " : "", (long long)te_margin(t, d, 0),
                       (long long)te_margin(t, d, 1));
  return tec_ctx_printf(ctx, "its buffer (shape %s, margin [%s])", s, m);
}

/* One side of one dimension of one read: at = lo (below the min) or hi (beyond the max). */
static int check_side(rb_state *r, const ir_expr *read, int d, int upper, const ir_expr *at,
                      const ir_expr *lo, const ir_expr *hi) {
  tec_ctx *ctx = r->ls->ctx;
  const te_tensor *t = read->tensor;
  const ir_expr *limit = upper ? ir_sub(te_buffer_shape(t)[d], ir_int(ctx, 1 + te_margin(t, d, 0)))
                               : ir_int(ctx, -te_margin(t, d, 0));
  limit = arith_simplify(limit, r->env);
  const ir_expr *inside = upper ? ir_le(at, limit) : ir_ge(at, limit);
  const ir_expr *ok = arith_simplify(ir_or(domain_empty(r), inside), r->env);
  int64_t v;
  if (ir_is_const_int(ok, &v) && v) return 0;
  const char *name = t->name, *by = r->st->tensor->name;
  const char *side = upper ? "beyond the max" : "below the min";
  if (ir_is_const_int(ok, &v)) { /* out for every size that runs the stage */
    tec_ctx_set_error(ctx, "tec_lower '%s': tensor '%s' is accessed at %s in dimension %d, "
                           "which is %s (%s) of %s: '%s' reads %s at indices %s to %s over its "
                           "domain; keep the index inside the shape, or guard the read with a "
                           "select on the index (as a padding does)",
                      r->ls->fname, name, bare(ctx, at), d, side, bare(ctx, limit),
                      shape_text(ctx, t), by, ir_expr_str(read), bare(ctx, lo), bare(ctx, hi));
    r->failed = 1;
    return -1;
  }
  /* sizes decide: the checked entry asserts it once they are bound */
  if (!only_sizes(r->f, ok) || !only_sizes(r->f, at) || !only_sizes(r->f, limit)) return 0;
  for (int k = 0; k < r->n; k++)
    if (ir_expr_equal(r->checks[k]->a, ok)) return 0;
  const char *msg = tec_ctx_printf(ctx, "%s: tensor '%s' is accessed at %%lld in dimension %d, "
                                        "which is %s (%%lld) for the sizes passed: '%s' reads %s "
                                        "over its whole domain",
                                   r->f->name, tec_ctx_fmt_escape(ctx, name), d, side,
                                   tec_ctx_fmt_escape(ctx, by),
                                   tec_ctx_fmt_escape(ctx, ir_expr_str(read)));
  const ir_stmt *a = msg ? ir_assert(ok, msg, at, limit) : NULL;
  if (!a || tec_grow(ctx, (void **)&r->checks, &r->cap, r->n + 1, sizeof *r->checks)) {
    r->failed = 1;
    return -1;
  }
  r->checks[r->n++] = a;
  return 0;
}

static int check_read(rb_state *r, const ir_expr *e) {
  for (int d = 0; d < e->nargs; d++) {
    const ir_expr *idx = e->args[d], *lo, *hi;
    if (uses_let(r, idx) || !affine_range(r, idx, &lo, &hi)) continue;
    if (check_side(r, e, d, 0, lo, lo, hi) || check_side(r, e, d, 1, hi, lo, hi)) return -1;
  }
  return 0;
}

/* Walks e; cond: e runs only on some iterations (a select's arm, a reduction's condition). */
static int walk(rb_state *r, const ir_expr *e, int cond) {
  if (!e || r->failed) return r->failed ? -1 : 0;
  switch (e->kind) {
  case IR_SELECT:
    return walk(r, e->a, cond) || walk(r, e->b, 1) || walk(r, e->c, 1);
  case IR_REDUCE: /* the init (c) is read once per output element */
    return walk(r, e->c, cond) || walk(r, e->b, cond) || walk(r, e->a, cond || e->b);
  case IR_LET: {
    if (walk(r, e->a, cond)) return -1;
    if (tec_grow(r->ls->ctx, (void **)&r->lets, &r->caplet, r->nlet + 1, sizeof *r->lets))
      return -1;
    r->lets[r->nlet++] = (struct rb_let){e->var, e->a};
    int rc = walk(r, e->b, cond);
    r->nlet--;
    return rc;
  }
  case IR_CALL:
    if (e->v.i == IR_INTRIN_PREFETCH) return 0; /* a hint: reads nothing */
    break;
  default: break;
  }
  if (walk(r, e->a, cond) || walk(r, e->b, cond) || walk(r, e->c, cond)) return -1;
  for (int k = 0; k < e->nargs; k++)
    if (walk(r, e->args[k], cond)) return -1;
  if (e->kind == IR_READ && !cond && e->tensor && e->tensor->ndim == e->nargs)
    return check_read(r, e);
  return 0;
}

static int skipped_region(const sch_stage *st) {
  for (int i = 0; i < st->nleaf; i++)
    for (int p = 0; p < st->leaf[i]->npragma; p++)
      if (sch_pragma_id_of(st->leaf[i]->pragma_keys[p]) == SCH_PRAGMA_DEBUG_SKIP_REGION) return 1;
  return 0;
}

int lower_read_bounds(lower_state *ls, lower_func *f) {
  tec_ctx *ctx = ls->ctx;
  rb_state r = {.ls = ls, .f = f, .env = arith_env_new(ctx)};
  if (!r.env) return -1;
  for (int k = 0; k < f->nsize; k++)
    arith_env_push(r.env, f->size_vars[k], (arith_range){0, INT64_MAX, 1, 1});
  for (int si = 0; si < ls->s->nstage; si++) {
    const sch_stage *st = ls->s->stages[si];
    if (st->tensor->op != TE_COMPUTE || st->tensor->ext || !ls->body[si] || /* extern: a call */
        (ls->skip && ls->skip[si]) ||
        lower_attach_of(ls, st) != SCH_ATTACH_ROOT || skipped_region(st))
      continue;
    r.st = st;
    if (walk(&r, ls->body[si], 0)) return -1;
    for (int k = 1; k < st->tensor->nout; k++) /* the other outputs of a multi-output op */
      if (walk(&r, lower_inline_body(ls, st->tensor->outputs[k]->body), 0)) return -1;
  }
  f->read_checks = r.n ? ir_seq(ctx, r.n, r.checks) : NULL;
  return r.n && !f->read_checks ? -1 : 0;
}

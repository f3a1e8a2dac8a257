/* schedule_ops.c — turns each stage into a loop nest and places the nests in order.
 *
 * A stage's leaves become loops, outermost first. The value of every root axis is rebuilt
 * from the leaf variables through the relations, newest first:
 *   split p -> (o, i):   p = min(p) + o * ext(i) + i
 *   fuse (o, i) -> f:    o = min(o) + f / ext(i),  i = min(i) + f % ext(i)
 * Each split that may not divide its parent leaves a guard `p < min(p) + ext(p)` around the
 * body (the simplifier drops the ones it can prove). A reduction
 *   C[i, j] = sum(A[i, k] * B[k, j], axis=[k])
 * becomes an init nest over the data loops that sit inside the first reduce loop, followed by
 * the update nest:
 *   for (i ...) { for (j ...) C[i, j] = 0f;  for (j ...) for (k ...) C[i, j] = C[i, j] + ... }
 * Intermediate tensors are wrapped in `realize`, which spans their producer and consumers. */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"

typedef struct iter_val {
  const sch_iter *iter;
  const ir_expr *val;
} iter_val;

typedef struct nest_ctx {
  tec_ctx *ctx;
  sch_stage *st;
  const lower_bounds *b;
  int nval, cap;
  iter_val *vals;          /* iter -> value expression in terms of leaf variables */
  int nguard;
  const ir_expr *guards[64];
  int guard_reduce[64];    /* guard depends on a reduce iter */
} nest_ctx;

static const ir_expr *get_val(const nest_ctx *n, const sch_iter *it) {
  for (int i = n->nval - 1; i >= 0; i--)
    if (n->vals[i].iter == it) return n->vals[i].val;
  return NULL;
}

static int bind(nest_ctx *n, const sch_iter *it, const ir_expr *v) {
  if (!v || tec_grow(n->ctx, (void **)&n->vals, &n->cap, n->nval + 1, sizeof *n->vals)) return -1;
  n->vals[n->nval++] = (iter_val){it, v};
  return 0;
}

static const lower_range *range_of(const nest_ctx *n, const sch_iter *it) {
  return lower_bounds_get(n->b, it);
}

/* min of an iter's range as it appears in value formulas (derived iters start at 0) */
static const ir_expr *vmin(const nest_ctx *n, const sch_iter *it) {
  return range_of(n, it)->min;
}

/* Rebuilds root values from leaf variables; collects guards. */
static int derive_values(nest_ctx *n) {
  sch_stage *st = n->st;
  for (int i = 0; i < st->nleaf; i++)
    if (bind(n, st->leaf[i], st->leaf[i]->var)) return -1;
  for (int r = st->nrel - 1; r >= 0; r--) {
    const sch_relation *rel = &st->rel[r];
    if (rel->kind == SCH_REL_SPLIT) {
      const ir_expr *o = get_val(n, rel->outer), *i = get_val(n, rel->inner);
      if (!o || !i) return TEC_INTERNAL(n->ctx, "split child without a value");
      const lower_range *pr = range_of(n, rel->parent), *ir = range_of(n, rel->inner);
      const ir_expr *v = ir_add(ir_add(ir_mul(o, ir->extent), i), pr->min);
      if (bind(n, rel->parent, v)) return -1;
      if (n->nguard >= 64) return tec_ctx_set_error(n->ctx, "lower: stage '%s' has more than 64 "
                                                   "splits", st->tensor->name);
      n->guard_reduce[n->nguard] = rel->parent->kind == SCH_ITER_REDUCE;
      n->guards[n->nguard++] = ir_lt(v, ir_add(pr->min, pr->extent));
    } else {
      const ir_expr *f = get_val(n, rel->fused);
      if (!f) return TEC_INTERNAL(n->ctx, "fuse child without a value");
      const lower_range *ir = range_of(n, rel->inner);
      if (bind(n, rel->outer, ir_add(ir_floordiv(f, ir->extent), vmin(n, rel->outer))) ||
          bind(n, rel->inner, ir_add(ir_floormod(f, ir->extent), vmin(n, rel->inner))))
        return -1;
    }
  }
  return 0;
}

/* Wraps body in the loop for leaf it. */
static const ir_stmt *make_loop(const nest_ctx *n, const sch_iter *it, const ir_stmt *body) {
  const lower_range *r = range_of(n, it);
  const ir_stmt *loop = ir_for(it->var, r->min, r->extent, it->for_kind, body);
  for (int p = it->npragma - 1; p >= 0; p--)
    loop = ir_attr(tec_ctx_printf(n->ctx, "pragma_%s", it->pragma_keys[p]), it->pragma_values[p],
                   loop);
  return loop;
}

/* body under the guards (data-only guards when data_only) */
static const ir_stmt *guard(const nest_ctx *n, const ir_stmt *body, int data_only) {
  const ir_expr *cond = NULL;
  for (int g = 0; g < n->nguard; g++) {
    if (data_only && n->guard_reduce[g]) continue;
    cond = cond ? ir_and(cond, n->guards[g]) : n->guards[g];
  }
  return cond ? ir_if(cond, body, NULL) : body;
}

/* The nest computing stage st. */
static const ir_stmt *stage_nest(tec_ctx *ctx, sch_stage *st, const lower_bounds *b) {
  nest_ctx n = {ctx, st, b, 0, 0, NULL, 0, {0}, {0}};
  if (derive_values(&n)) return NULL;
  te_tensor *t = st->tensor;
  int nr = st->nroot;
  const ir_expr **vars = tec_ctx_alloc(ctx, sizeof *vars * (size_t)nr);
  const ir_expr **vals = tec_ctx_alloc(ctx, sizeof *vals * (size_t)nr);
  if (!vars || !vals) return NULL;
  for (int i = 0; i < nr; i++) {
    vars[i] = st->root[i]->var;
    vals[i] = get_val(&n, st->root[i]);
    if (!vals[i]) {
      TEC_INTERNAL(ctx, "root axis without a value");
      return NULL;
    }
  }
  const ir_expr *const *idx = vals; /* the first ndim values are the data axes */
  const ir_expr *body = st->body;
  if (body->kind != IR_REDUCE) {
    const ir_stmt *s = ir_provide(t, t->ndim, idx, ir_substitute(body, nr, vars, vals));
    s = guard(&n, s, 0);
    for (int i = st->nleaf - 1; i >= 0; i--) s = make_loop(&n, st->leaf[i], s);
    return s;
  }
  /* reduction: init and update */
  ir_combiner comb = (ir_combiner)body->v.i;
  const ir_expr *src = ir_substitute(body->a, nr, vars, vals);
  const ir_expr *cond = body->b ? ir_substitute(body->b, nr, vars, vals) : NULL;
  const ir_expr *cur = ir_read(ctx, t, t->ndim, idx);
  const ir_stmt *update = ir_provide(t, t->ndim, idx, ir_combine(comb, cur, src));
  if (cond) update = ir_if(cond, update, NULL);
  update = guard(&n, update, 0);
  const ir_stmt *init = ir_provide(t, t->ndim, idx, ir_combiner_identity(ctx, comb, t->type));
  init = guard(&n, init, 1);
  int first_red = st->nleaf;
  for (int i = 0; i < st->nleaf; i++)
    if (st->leaf[i]->kind == SCH_ITER_REDUCE) {
      first_red = i;
      break;
    }
  for (int i = st->nleaf - 1; i >= first_red; i--) {
    update = make_loop(&n, st->leaf[i], update);
    if (st->leaf[i]->kind == SCH_ITER_DATA) init = make_loop(&n, st->leaf[i], init);
  }
  const ir_stmt *s = ir_seq2(init, update);
  for (int i = first_red - 1; i >= 0; i--) s = make_loop(&n, st->leaf[i], s);
  return s;
}

static int in_args(const te_tensor *t, int nargs, te_tensor *const *args) {
  for (int i = 0; i < nargs; i++)
    if (args[i] == t) return 1;
  return 0;
}

const ir_stmt *lower_schedule_ops(sch_schedule *s, const lower_bounds *b, int nargs,
                                  te_tensor *const *args) {
  tec_ctx *ctx = s->ctx;
  const ir_stmt *body = NULL;
  for (int si = s->nstage - 1; si >= 0; si--) {
    sch_stage *st = s->stages[si];
    te_tensor *t = st->tensor;
    if (t->op != TE_COMPUTE) continue;
    const ir_stmt *nest = stage_nest(ctx, st, b);
    if (!nest) return NULL;
    body = ir_seq2(ir_produce(t, nest), body);
    if (!in_args(t, nargs, args)) {
      const ir_expr **bounds = tec_ctx_alloc(ctx, sizeof *bounds * (size_t)(2 * t->ndim));
      if (!bounds) return NULL;
      for (int i = 0; i < t->ndim; i++) {
        bounds[2 * i] = ir_int(ctx, 0);
        bounds[2 * i + 1] = t->shape[i];
      }
      body = ir_realize(t, t->ndim, bounds, body);
    }
    if (!body) return NULL;
  }
  return body;
}

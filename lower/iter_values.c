/* iter_values.c — the value of every iter var of a stage in terms of its leaf loops.
 *
 * Loops run from 0, so a leaf's value is its loop variable plus its range's min; relations are
 * undone newest first:
 *   split p -> (o, i):   p = min(p) + o * ext(i) + i
 *   fuse (o, i) -> f:    o = min(o) + f / ext(i),  i = min(i) + f % ext(i)
 * Each split adds the guard `p < min(p) + ext(p)` (kept only where the simplifier cannot prove
 * it: the tail of a split that does not divide). */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "schedule/internal.h"

const ir_expr *lower_ivals_get(const lower_ivals *v, const sch_iter *it) {
  for (int i = v->n - 1; i >= 0; i--)
    if (v->v[i].iter == it) return v->v[i].val;
  return NULL;
}

static int bind(tec_ctx *ctx, lower_ivals *v, const sch_iter *it, const ir_expr *val) {
  if (!val || tec_grow(ctx, (void **)&v->v, &v->cap, v->n + 1, sizeof *v->v)) return -1;
  v->v[v->n].iter = it;
  v->v[v->n].val = val;
  v->n++;
  return 0;
}

static int guard(tec_ctx *ctx, lower_ivals *v, const ir_expr *cond, int reduce) {
  if (!cond || tec_grow(ctx, (void **)&v->g, &v->gcap, v->nguard + 1, sizeof *v->g)) return -1;
  v->g[v->nguard].cond = cond;
  v->g[v->nguard].reduce = reduce;
  v->nguard++;
  return 0;
}

int lower_iter_values(tec_ctx *ctx, const sch_stage *st, const lower_bounds *b, lower_ivals *out) {
  /* every loop runs from 0; a leaf's value adds its range's min (non-zero for the root axes of
   * an attached stage, or a reduce axis declared from a non-zero min) */
  for (int i = 0; i < st->nleaf; i++) {
    const lower_range *r = lower_bounds_get(b, st->leaf[i]);
    if (!r) return TEC_INTERNAL(ctx, "leaf without a range");
    const ir_expr *v = st->leaf[i]->var;
    if (bind(ctx, out, st->leaf[i], ir_is_zero(r->min) ? v : ir_add(v, r->min))) return -1;
  }
  for (int r = st->nrel - 1; r >= 0; r--) {
    const sch_relation *rel = &st->rel[r];
    if (rel->kind == SCH_REL_SPLIT) {
      const ir_expr *o = lower_ivals_get(out, rel->outer), *i = lower_ivals_get(out, rel->inner);
      const lower_range *pr = lower_bounds_get(b, rel->parent);
      const lower_range *ir = lower_bounds_get(b, rel->inner);
      if (!o || !i || !pr || !ir) return TEC_INTERNAL(ctx, "split without values or ranges");
      const ir_expr *v = ir_add(ir_add(ir_mul(o, ir->extent), i), pr->min);
      if (bind(ctx, out, rel->parent, v) ||
          guard(ctx, out, ir_lt(v, ir_add(pr->min, pr->extent)),
                rel->parent->kind == SCH_ITER_REDUCE))
        return -1;
    } else {
      const ir_expr *f = lower_ivals_get(out, rel->fused);
      const lower_range *orr = lower_bounds_get(b, rel->outer);
      const lower_range *ir = lower_bounds_get(b, rel->inner);
      if (!f || !orr || !ir) return TEC_INTERNAL(ctx, "fuse without values or ranges");
      if (bind(ctx, out, rel->outer, ir_add(ir_floordiv(f, ir->extent), orr->min)) ||
          bind(ctx, out, rel->inner, ir_add(ir_floormod(f, ir->extent), ir->min)))
        return -1;
    }
  }
  return 0;
}

/* iter_values.c — the value of every iter var of a stage in terms of its leaf loops, with the
 * ranges bound inference found (the relation engine, schedule/relation.c, does the work).
 *
 * Loops run from 0, so a leaf's value is its loop variable plus its range's min; relations are
 * undone newest first:
 *   split p -> (o, i):   p = min(p) + o * ext(i) + i
 *   fuse (o, i) -> f:    o = min(o) + f / ext(i),  i = min(i) + f % ext(i)
 * Each split adds the guard `p < min(p) + ext(p)` (kept only where the simplifier cannot prove
 * it: the tail of a split that does not divide), applied as its tail strategy says. */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "schedule/internal.h"

const ir_expr *lower_ivals_get(const lower_ivals *v, const sch_iter *it) {
  return sch_relvals_get(v, it);
}

static const ir_expr *range_min(void *user, const sch_iter *it) {
  const lower_range *r = lower_bounds_get(user, it);
  return r ? r->min : NULL;
}
static const ir_expr *range_extent(void *user, const sch_iter *it) {
  const lower_range *r = lower_bounds_get(user, it);
  return r ? r->extent : NULL;
}

int lower_iter_values(tec_ctx *ctx, const sch_stage *st, const lower_bounds *b, lower_ivals *out) {
  /* every loop runs from 0; a leaf's value adds its range's min (non-zero for the root axes of
   * an attached stage, or a reduce axis declared from a non-zero min) */
  for (int i = 0; i < st->nleaf; i++) {
    const lower_range *r = lower_bounds_get(b, st->leaf[i]);
    if (!r) return TEC_INTERNAL(ctx, "leaf without a range");
    const ir_expr *v = st->leaf[i]->var;
    if (sch_relvals_put(ctx, out, st->leaf[i], ir_is_zero(r->min) ? v : ir_add(v, r->min)))
      return -1;
  }
  sch_reldims d = {range_min, range_extent, (void *)b};
  return sch_rel_to_root(ctx, st, &d, 0, out);
}

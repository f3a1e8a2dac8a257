/* iter_values.c — the value of every iter var of a stage in terms of its leaf loops, with the
 * ranges bound inference found (the relation engine, schedule/relation.c, does the work).
 *
 * Loops run from 0, so a leaf's value is its loop variable plus its range's min; relations are
 * undone newest first:
 *   split p -> (o, i):   p = min(p) + o * ext(i) + i
 *   fuse (o, i) -> f:    o = min(o) + f / ext(i),  i = min(i) + f % ext(i)
 * Each split adds the guard `p < min(p) + ext(p)` (kept only where the simplifier cannot prove
 * it: the tail of a split that does not divide), applied as its tail strategy says.
 *
 * The init of a reduction runs outside its reduce loops (lower_init_values). A data axis fused
 * with a reduce axis has no loop there: the init loops over that data axis itself, and the
 * engine undoes the rest (relations whose inputs have no value, those of the reduce loops, are
 * left alone):
 *   tile i by 13, fuse(i.outer, k):  i = i.outer.init*13 + i.inner, guard i < 16
 * so the init writes exactly the elements the reduce loops update, not a box around them. */
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

int lower_init_values(tec_ctx *ctx, const sch_stage *st, const lower_bounds *b, lower_ivals *out,
                      int *nfresh, const ir_expr ***fresh_var, const ir_expr ***fresh_ext) {
  *nfresh = 0;
  const ir_expr **fv = tec_ctx_alloc(ctx, sizeof *fv * (size_t)(2 * st->nrel + 1));
  if (!fv) return -1;
  *fresh_var = fv, *fresh_ext = fv + st->nrel;
  for (int i = 0; i < st->nleaf; i++) {
    if (st->leaf[i]->kind != SCH_ITER_DATA) continue;
    const lower_range *r = lower_bounds_get(b, st->leaf[i]);
    if (!r) return TEC_INTERNAL(ctx, "leaf without a range");
    const ir_expr *v = st->leaf[i]->var;
    if (sch_relvals_put(ctx, out, st->leaf[i], ir_is_zero(r->min) ? v : ir_add(v, r->min)))
      return -1;
  }
  for (int k = 0; k < st->nrel; k++) {
    const sch_relation *rel = &st->rel[k];
    if (rel->kind != SCH_REL_FUSE || rel->outer->kind == rel->inner->kind) continue;
    const sch_iter *d = rel->outer->kind == SCH_ITER_DATA ? rel->outer : rel->inner;
    const lower_range *r = lower_bounds_get(b, d);
    if (!r) return TEC_INTERNAL(ctx, "fused data axis without a range");
    const ir_expr *v = ir_var(ctx, tec_ctx_printf(ctx, "%s.init", d->name), TEC_INDEX,
                              IR_VAR_INDEX);
    if (!v || sch_relvals_put(ctx, out, d, ir_is_zero(r->min) ? v : ir_add(v, r->min)))
      return -1;
    fv[*nfresh] = v;
    (*fresh_ext)[(*nfresh)++] = r->extent;
  }
  sch_reldims dims = {range_min, range_extent, (void *)b};
  return sch_rel_to_root(ctx, st, &dims, 0, out);
}

/* bound.c — bound inference: the range of every iteration variable.
 *
 * Root iters of a root-attached stage range over the op's declared domain (axis i in
 * [0, shape[i]), reduce axis k in its te_reduce_axis range). Ranges then flow through the
 * stage's relations in the order they were made:
 *   split(p, factor f):  outer in [0, ceil(ext(p) / f)), inner in [0, f)
 *   split(p, nparts n):  outer in [0, n), inner in [0, ceil(ext(p) / n))
 *   fuse(o, i):          fused in [0, ext(o) * ext(i))
 * Derived iters start at 0; their values map back to the root through the relations (see
 * schedule_ops.c). */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "lower/arith.h"

static int put(tec_ctx *ctx, lower_bounds *b, const sch_iter *it, const ir_expr *min,
               const ir_expr *extent) {
  if (!min || !extent) return -1;
  if (tec_grow(ctx, (void **)&b->r, &b->cap, b->n + 1, sizeof *b->r)) return -1;
  b->r[b->n++] = (lower_range){it, arith_simplify(min, NULL), arith_simplify(extent, NULL)};
  return 0;
}

const lower_range *lower_bounds_get(const lower_bounds *b, const sch_iter *it) {
  for (int i = b->n - 1; i >= 0; i--)
    if (b->r[i].iter == it) return &b->r[i];
  return NULL;
}

static const ir_expr *ceildiv(const ir_expr *a, const ir_expr *b) {
  return ir_floordiv(ir_sub(ir_add(a, b), ir_int(a->ctx, 1)), b);
}

int lower_infer_bounds(sch_schedule *s, lower_bounds *b) {
  tec_ctx *ctx = s->ctx;
  for (int si = 0; si < s->nstage; si++) {
    sch_stage *st = s->stages[si];
    if (st->tensor->op != TE_COMPUTE) continue;
    for (int i = 0; i < st->nroot; i++)
      if (put(ctx, b, st->root[i], st->root[i]->dom_min, st->root[i]->dom_extent)) return -1;
    for (int r = 0; r < st->nrel; r++) {
      const sch_relation *rel = &st->rel[r];
      const ir_expr *zero = ir_int(ctx, 0);
      if (rel->kind == SCH_REL_SPLIT) {
        const lower_range *p = lower_bounds_get(b, rel->parent);
        if (!p) return TEC_INTERNAL(ctx, "split parent without a range");
        const ir_expr *inner = rel->factor ? rel->factor : ceildiv(p->extent, rel->nparts);
        const ir_expr *outer = rel->factor ? ceildiv(p->extent, rel->factor) : rel->nparts;
        if (put(ctx, b, rel->outer, zero, outer) || put(ctx, b, rel->inner, zero, inner))
          return -1;
      } else {
        const lower_range *o = lower_bounds_get(b, rel->outer);
        const lower_range *in = lower_bounds_get(b, rel->inner);
        if (!o || !in) return TEC_INTERNAL(ctx, "fuse input without a range");
        if (put(ctx, b, rel->fused, zero, ir_mul(o->extent, in->extent))) return -1;
      }
    }
  }
  return 0;
}

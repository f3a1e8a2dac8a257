/* fuse.c — fuse two adjacent loops into one.
 *
 *   for (i, 0, 4) for (j, 0, 8)  ->  for (i.j.fused, 0, 32)  (i = fused / 8, j = fused % 8)
 *
 * Two data axes make a data loop, anything with a reduce axis a reduce loop: fusing data axis
 * i with reduce axis k (C[i] = sum(A[i, k])) makes a loop that walks the partial sums of one
 * element after another; the lowering initializes the elements it covers before it, in
 * loops over the fused data axis itself (schedule_ops.c, iter_values.c), and the loop is refused for parallel and vectorize like any reduce loop.
 */
#include "tec/schedule.h"
#include "schedule/internal.h"

int sch_fuse(sch_stage *st, sch_iter *outer, sch_iter *inner, sch_iter **fused) {
  if (fused) *fused = NULL;
  if (!st) return sch_null_arg("fuse", "stage", sch_iter_ctx(outer ? outer : inner));
  tec_ctx *ctx = st->sched->ctx;
  if (sch_check_leaf("fuse", st, outer) || sch_check_leaf("fuse", st, inner)) return -1;
  if (outer == inner)
    return tec_ctx_set_error(ctx, "fuse: cannot fuse axis '%s' of stage '%s' with itself",
                             outer->name, st->tensor->name);
  int po = sch_leaf_index(st, outer), pi = sch_leaf_index(st, inner);
  if (pi != po + 1)
    return tec_ctx_set_error(ctx, "fuse: axes '%s' and '%s' of stage '%s' are not adjacent "
                                  "(outer immediately before inner); the loops are: %s. "
                                  "Reorder them first",
                             outer->name, inner->name, st->tensor->name, sch_stage_str(st));
  /* a data axis with a reduce axis: the fused loop is a reduce loop (a data point's partial
   * sums are spread over it), lowered with the init outside it (schedule_ops.c) */
  sch_iter_kind kind = outer->kind == SCH_ITER_REDUCE || inner->kind == SCH_ITER_REDUCE
                           ? SCH_ITER_REDUCE
                           : SCH_ITER_DATA;
  if (kind == SCH_ITER_REDUCE && outer->kind != inner->kind) {
    sch_iter *red = outer->kind == SCH_ITER_REDUCE ? outer : inner;
    const ir_expr *ext = sch_iter_extent(st, red);
    for (int d = 0; ext && d < st->tensor->ndim; d++)
      if (ir_uses_var(ext, st->root[d]->var) ||
          (red->dom_min && ir_uses_var(red->dom_min, st->root[d]->var)))
        return tec_ctx_set_error(ctx, "fuse: reduce axis '%s' of stage '%s' runs over a range "
                                      "that depends on data axis '%s' (%s iterations); a "
                                      "fused loop needs its parts' extents fixed, so only a "
                                      "reduce axis of fixed range fuses with a data axis",
                                 red->name, st->tensor->name, st->root[d]->name,
                                 ir_expr_str(ext));
  }
  /* the fused extent is the product of the two: refused when it does not fit an int64 */
  const ir_expr *eo = sch_iter_extent(st, outer), *ei = sch_iter_extent(st, inner);
  int64_t vo, vi, prod;
  if (eo && ei && ir_is_const_int(eo, &vo) && ir_is_const_int(ei, &vi) &&
      __builtin_mul_overflow(vo, vi, &prod))
    return tec_ctx_set_error(ctx, "fuse: axes '%s' (%lld iterations) and '%s' (%lld) of stage "
                                  "'%s' would make a loop of more than 2^63 - 1 iterations, "
                                  "which overflows int64; fuse loops whose extents multiply "
                                  "to less",
                             outer->name, (long long)vo, inner->name, (long long)vi,
                             st->tensor->name);
  sch_iter *f = sch_iter_new(st, tec_ctx_printf(ctx, "%s.%s.fused", outer->name, inner->name),
                             kind);
  if (!f) return -1;
  sch_relation r = {0};
  r.kind = SCH_REL_FUSE;
  r.outer = outer;
  r.inner = inner;
  r.fused = f;
  if (sch_add_relation(st, r)) return -1;
  if (sch_replace_leaf(st, pi, 0, NULL) || sch_replace_leaf(st, po, 1, (sch_iter *const[]){f}))
    return -1;
  outer->dead = inner->dead = 1;
  sch_move_attachments(st, outer, f); /* computed per fused iteration: finer, still right */
  sch_move_attachments(st, inner, f);
  sch_move_stores(st, outer, f);
  sch_move_stores(st, inner, f);
  if (sch_trace_add(st->sched, SCH_PRIM_FUSE,
                    (sch_arg[]){{.stage = st}, {.iter = outer}, {.iter = inner}, {.iter = f}}))
    return -1;
  if (fused) *fused = f;
  return 0;
}

const sch_relation *sch_mixed_fuse(const sch_stage *st, const sch_iter **data,
                                   const sch_iter **red) {
  for (int r = 0; st && r < st->nrel; r++) {
    const sch_relation *rel = &st->rel[r];
    if (rel->kind != SCH_REL_FUSE || rel->outer->kind == rel->inner->kind) continue;
    int outer_data = rel->outer->kind == SCH_ITER_DATA;
    *data = outer_data ? rel->outer : rel->inner;
    *red = outer_data ? rel->inner : rel->outer;
    return rel;
  }
  return NULL;
}

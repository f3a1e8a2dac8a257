/* fuse.c — fuse two adjacent loops into one.
 *
 *   for (i, 0, 4) for (j, 0, 8)  ->  for (i.j.fused, 0, 32)  (i = fused / 8, j = fused % 8)
 */
#include "tec/schedule.h"
#include "schedule/internal.h"

int sch_fuse(sch_stage *st, sch_iter *outer, sch_iter *inner, sch_iter **fused) {
  if (fused) *fused = NULL;
  if (!st) return -1;
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
  if (outer->kind != inner->kind)
    return tec_ctx_set_error(ctx, "fuse: axis '%s' is %s and '%s' is %s in stage '%s'; only "
                                  "two data-parallel or two reduce axes can be fused",
                             outer->name, outer->kind == SCH_ITER_REDUCE ? "a reduce axis" : "data-parallel",
                             inner->name, inner->kind == SCH_ITER_REDUCE ? "a reduce axis" : "data-parallel",
                             st->tensor->name);
  sch_iter *f = sch_iter_new(st, tec_ctx_printf(ctx, "%s.%s.fused", outer->name, inner->name),
                             outer->kind);
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
  if (sch_trace_add(st->sched, SCH_PRIM_FUSE,
                    (sch_arg[]){{.stage = st}, {.iter = outer}, {.iter = inner}, {.iter = f}}))
    return -1;
  if (fused) *fused = f;
  return 0;
}

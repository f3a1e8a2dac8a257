/* reorder.c — put some leaves in a new order, in the positions they hold now.
 *
 *   loops i, j, k; reorder(k, i)  ->  k, j, i
 */
#include "tec/schedule.h"
#include "schedule/internal.h"

int sch_reorder(sch_stage *st, int n, sch_iter *const *order) {
  if (sch_reorder_leaves(st, n, order)) return -1;
  return sch_trace_add(st->sched, SCH_PRIM_REORDER,
                       (sch_arg[]){{.stage = st}, {.n = n, .iters = order}});
}

int sch_reorder_leaves(sch_stage *st, int n, sch_iter *const *order) {
  if (!st) {
    tec_ctx *ctx = NULL;
    for (int i = 0; !ctx && order && i < n; i++) ctx = sch_iter_ctx(order[i]);
    return sch_null_arg("reorder", "stage", ctx);
  }
  tec_ctx *ctx = st->sched->ctx;
  if (n < 1 || !order)
    return tec_ctx_set_error(ctx, "reorder: stage '%s': give at least one axis", st->tensor->name);
  int pos[64];
  if (n > 64 || n > st->nleaf)
    return tec_ctx_set_error(ctx, "reorder: stage '%s' has %d loops, %d axes given",
                             st->tensor->name, st->nleaf, n);
  for (int i = 0; i < n; i++) {
    if (sch_check_leaf("reorder", st, order[i])) return -1;
    for (int j = 0; j < i; j++)
      if (order[j] == order[i])
        return tec_ctx_set_error(ctx, "reorder: axis '%s' of stage '%s' is listed twice; list "
                                      "each loop once", order[i]->name, st->tensor->name);
    pos[i] = sch_leaf_index(st, order[i]);
  }
  /* the positions, sorted, receive the axes in the given order */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && pos[j - 1] > pos[j]; j--) {
      int t = pos[j];
      pos[j] = pos[j - 1];
      pos[j - 1] = t;
    }
  sch_iter *was[64];
  for (int i = 0; i < n; i++) was[i] = st->leaf[pos[i]], st->leaf[pos[i]] = order[i];
  if (sch_scan_check_order("reorder", st)) { /* a scan's t inside a data loop: undone */
    for (int i = 0; i < n; i++) st->leaf[pos[i]] = was[i];
    return -1;
  }
  return 0;
}

/* apply.c — the choices as primitives on a fresh schedule, in an order the primitives need:
 * inlining first (it changes no loops), then rfactor (it rebuilds its stage), then every
 * stage's loops from the outputs back to the inputs, so a stage's consumer has its final loops
 * when the stage is computed at one of them (splitting a loop afterwards would move it). Loops
 * are looked up by name in the schedule at hand: the same choices applied twice give the same
 * trace. Siblings computed with each other (rule_with.c) last, when both loops are final. */
#include <string.h>
#include "autosched/internal.h"

sch_stage *as_stage_named(sch_schedule *s, const char *name) {
  te_tensor *t = sch_tensor_named(s, name);
  return t ? sch_stage_of(s, t) : NULL;
}

/* fuse the outermost leaves (at most upto of them, extents ext) while there are fewer than
 * 8 iterations per thread (depth 0), or exactly depth of them (depth >= 1; fewer when there
 * are fewer), and make the fused loop parallel; nothing with one iteration */
int as_parallel_outer(as_prog *p, sch_stage *st, int upto, int64_t *ext, int depth) {
  if (upto < 1) return 0;
  int64_t want = p->threads > 1 ? 8 * (int64_t)p->threads : 1, prod = ext[0];
  sch_iter *f = sch_stage_leaf(st, 0);
  for (int k = 1; k < upto && (depth > 0 ? k < depth : prod < want); k++) {
    if (sch_fuse(st, f, sch_stage_leaf(st, 1), &f)) return -1;
    prod *= ext[k];
  }
  if (prod < 2) return 0;
  return sch_parallel(st, f);
}

int as_apply(as_prog *p, sch_schedule *s, int *bad, as_fail *fail) {
  *bad = -1;
  *fail = AS_FAIL_OTHER;
  for (int i = 0; i < p->n; i++) {
    as_stage *a = &p->st[i];
    if (a->ch.kind != TEC_AS_INLINE) continue;
    sch_stage *st = as_stage_named(s, a->t->name);
    if (!st || sch_compute_inline(st)) return *bad = i, -1;
  }
  for (int i = 0; i < p->n; i++)
    if ((p->st[i].ch.kind == TEC_AS_RFACTOR || p->st[i].ch.rfactor) && as_apply_rfactor(p, s, i))
      return *bad = i, -1;
  for (int i = p->n - 1; i >= 0; i--) {
    as_stage *a = &p->st[i];
    int rc = 0;
    a->at_loop = NULL;
    switch (a->ch.kind) {
      case TEC_AS_TILE: rc = as_apply_tile(p, s, i); break;
      case TEC_AS_LOOPS:
        rc = as_apply_loops(p, s, i);
        if (!rc && a->ch.stream) rc = as_apply_stream(p, s, i);
        break;
      case TEC_AS_ATTACH: rc = as_apply_attach(p, s, i); break;
      default: break;
    }
    if (rc) {
      *bad = i;
      /* a reduction fused into its anchor: the anchor is the group's other half */
      return -1;
    }
  }
  /* siblings fused (rule_with.c): once both have their final loops */
  for (int i = 0; i < p->n; i++)
    if (p->st[i].with_to && as_apply_with(p, s, i)) return *bad = i, *fail = AS_FAIL_WITH, -1;
  return 0;
}

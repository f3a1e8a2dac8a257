/* compute_with.c — Halide's compute_with: two stages computed in one loop nest.
 *
 *   compute_with(Ix, Iy, Iy.x):  for (y) for (x) { Iy[y, x] = g(gray..); Ix[y, x] = f(gray..); }
 *
 * The two stages must be computed at the same place, have loops of the same kinds over data
 * axes down to `at`, and not depend on each other. What needs the bounds (the fused loops'
 * ranges) is checked by tec_lower (lower/compute_with.c), which builds the fused nest. */
#include <string.h>
#include "tec/schedule.h"
#include "schedule/internal.h"

/* 1 if stage a reads b's tensor, directly or through any stage in between (seen: per stage
 * index, those walked already) */
static int depends(const sch_schedule *s, const sch_stage *a, const sch_stage *b,
                   unsigned char *seen) {
  for (int k = 0; k < a->ninputs; k++) {
    if (a->inputs[k] == b->tensor) return 1;
    for (int i = 0; i < s->nstage; i++) {
      const sch_stage *x = s->stages[i];
      if (x->tensor != a->inputs[k] || seen[i]) continue;
      seen[i] = 1;
      if (depends(s, x, b, seen)) return 1;
    }
  }
  return 0;
}

int sch_stage_index(const sch_schedule *s, const sch_stage *st) {
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i] == st) return i;
  return -1;
}

int sch_stage_depends(const sch_schedule *s, const sch_stage *a, const sch_stage *b) {
  unsigned char *seen = tec_ctx_alloc(s->ctx, (size_t)s->nstage + 1);
  if (!seen) return -1;
  memset(seen, 0, (size_t)s->nstage + 1);
  return depends(s, a, b, seen);
}

static const char *where(tec_ctx *ctx, const sch_stage *st) {
  switch (st->attach) {
    case SCH_ATTACH_ROOT: return "at the root";
    case SCH_ATTACH_INLINE: return "inline";
    default: return tec_ctx_printf(ctx, "at loop '%s' of '%s'", st->attach_iter->name,
                                   st->attach_stage->tensor->name);
  }
}

static int refuse_kind(tec_ctx *ctx, const sch_stage *st) {
  const te_tensor *t = st->tensor;
  const char *what = t->op != TE_COMPUTE                      ? "a placeholder"
                     : t->nout > 1                            ? "a multi-output op"
                     : t->scan                                ? "a scan (recurrence)"
                     : t->ext                                 ? "an extern stage"
                     : st->body && st->body->kind == IR_REDUCE ? "a reduction"
                     : st->attach == SCH_ATTACH_INLINE        ? "inlined (it has no loops)"
                                                              : NULL;
  if (!what) return 0;
  return tec_ctx_set_error(ctx, "compute_with: '%s' is %s; compute_with fuses the loops of two "
                                "element-wise stages that keep their loops",
                           t->name, what);
}

int sch_compute_with(sch_stage *st, sch_stage *other, sch_iter *at) {
  if (!st || !other) {
    tec_ctx *ctx = st ? st->sched->ctx : other ? other->sched->ctx : sch_iter_ctx(at);
    return sch_null_arg("compute_with", st ? "other stage" : "stage", ctx);
  }
  tec_ctx *ctx = st->sched->ctx;
  sch_schedule *s = st->sched;
  if (st == other)
    return tec_ctx_set_error(ctx, "compute_with: stage '%s' cannot be fused with itself",
                             st->tensor->name);
  if (other->sched != s)
    return tec_ctx_set_error(ctx, "compute_with: stages '%s' and '%s' belong to different "
                                  "schedules", st->tensor->name, other->tensor->name);
  if (refuse_kind(ctx, st) || refuse_kind(ctx, other)) return -1;
  if (sch_consumer_loop("compute_with", other, at)) return -1;
  if (st->attach != other->attach ||
      (st->attach == SCH_ATTACH_SCOPE &&
       (st->attach_stage != other->attach_stage || st->attach_iter != other->attach_iter)))
    return tec_ctx_set_error(ctx, "compute_with: '%s' is computed %s and '%s' %s; fused loops "
                                  "need both computed at the same place (compute_at '%s' there "
                                  "first)",
                             st->tensor->name, where(ctx, st), other->tensor->name,
                             where(ctx, other), st->tensor->name);
  if (st->with_stage || other->with_stage)
    return tec_ctx_set_error(ctx, "compute_with: '%s' is already fused with '%s'; a stage "
                                  "shares its loops with one other at most",
                             st->with_stage ? st->tensor->name : other->tensor->name,
                             (st->with_stage ? st->with_stage : other->with_stage)->tensor->name);
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i]->with_stage == st || s->stages[i]->with_stage == other)
      return tec_ctx_set_error(ctx, "compute_with: '%s' already has '%s' fused with it; a stage "
                                    "shares its loops with one other at most",
                               s->stages[i]->with_stage->tensor->name,
                               s->stages[i]->tensor->name);
  int pos = sch_leaf_index(other, at);
  if (st->nleaf <= pos)
    return tec_ctx_set_error(ctx, "compute_with: '%s' has %d loops, '%s' down to '%s' %d; the "
                                  "fused levels need a loop of each: one of %s",
                             st->tensor->name, st->nleaf, other->tensor->name, at->name, pos + 1,
                             sch_leaves_upto(ctx, other, st->nleaf - 1));
  for (int i = 0; i <= pos; i++) {
    const sch_iter *a = st->leaf[i], *b = other->leaf[i];
    if (a->kind != SCH_ITER_DATA || b->kind != SCH_ITER_DATA)
      return tec_ctx_set_error(ctx, "compute_with: loop '%s' is a reduce loop; only data loops "
                                    "can be fused", (a->kind != SCH_ITER_DATA ? a : b)->name);
    if (a->for_kind != b->for_kind)
      return tec_ctx_set_error(ctx, "compute_with: loop '%s' of '%s' is %s and loop '%s' of '%s' "
                                    "%s; fused loops need the same kind",
                               a->name, st->tensor->name, ir_for_kind_name(a->for_kind), b->name,
                               other->tensor->name, ir_for_kind_name(b->for_kind));
  }
  int ab = sch_stage_depends(s, st, other), ba = ab ? 0 : sch_stage_depends(s, other, st);
  if (ab < 0 || ba < 0) return -1;
  if (ab || ba)
    return tec_ctx_set_error(ctx, "compute_with: '%s' reads '%s'%s; stages in one loop must not "
                                  "depend on each other",
                             (ab ? st : other)->tensor->name, (ab ? other : st)->tensor->name,
                             " (directly or through other stages)");
  st->with_stage = other;
  st->with_iter = at;
  return sch_trace_add(s, SCH_PRIM_COMPUTE_WITH,
                       (sch_arg[]){{.stage = st}, {.stage = other}, {.iter = at}});
}

sch_stage *sch_stage_compute_with(const sch_stage *st, sch_iter **at) {
  if (at) *at = st ? st->with_iter : NULL;
  return st ? st->with_stage : NULL;
}

void sch_drop_with(sch_stage *p) {
  p->with_stage = NULL, p->with_iter = NULL;
  for (int i = 0; i < p->sched->nstage; i++)
    if (p->sched->stages[i]->with_stage == p)
      p->sched->stages[i]->with_stage = NULL, p->sched->stages[i]->with_iter = NULL;
}

/* scan.c — the schedule's rules for recurrences (te_scan): what may happen to the loops over
 * the recurrent axis t, where the update's stages are computed, and what is refused.
 *
 *   y[t, x] = a * y[t - 1, x] + b * in[t, x]     (pointwise: the step reads its own x only)
 *     for (t, 1, T) for (x.o) for (x.i) vectorized     ok
 *     for (x.o) parallel for (t, 1, T) for (x.i) ...   ok: each x runs its own recurrence
 *   h[t, j] = tanh(sum_k U[j, k] * h[t - 1, k])      (not pointwise: a step reads all of t - 1)
 *     for (j) for (t) ...                              refused: row t - 1 is not complete
 *
 * The scan stage's t loop covers the update's steps [L, T) (its domain is set at sch_create;
 * init's steps are copied before it, lower/scan.c). Every loop made from t stays serial and in
 * order: parallel and vectorize of it are refused here. The update's stages (the chain) start
 * computed at the scan's t loop and must stay inside it, at or below the innermost loop made
 * from t; the scan itself is neither inlined nor computed at another stage's loop. The
 * primitives call the checks that need nothing but the stage; tec_lower calls
 * sch_scan_check for the whole schedule (lower/legality.c). */
#include <string.h>
#include "schedule/internal.h"
#include "ir/internal.h"

/* 1 if leaf (or iter) it is made from the recurrent axis of scan stage st (its root 0) */
int sch_scan_has_axis(const sch_stage *st, const sch_iter *it) {
  if (!st->tensor->scan || !st->nroot) return 0;
  const sch_iter *from[64];
  int n = 0;
  from[n++] = st->root[0];
  for (int r = 0; r < st->nrel && n < 62; r++) {
    const sch_relation *rel = &st->rel[r];
    int in = 0;
    for (int k = 0; k < n; k++)
      in |= rel->kind == SCH_REL_SPLIT ? from[k] == rel->parent
                                       : from[k] == rel->outer || from[k] == rel->inner;
    if (!in) continue;
    if (rel->kind == SCH_REL_SPLIT) {
      from[n++] = rel->outer;
      from[n++] = rel->inner;
    } else
      from[n++] = rel->fused;
  }
  for (int k = 0; k < n; k++)
    if (from[k] == it) return 1;
  return 0;
}

int sch_scan_check_kind(const char *who, const sch_stage *st, const sch_iter *it,
                        ir_for_kind kind) {
  if (kind == IR_FOR_UNROLLED || !sch_scan_has_axis(st, it)) return 0;
  return tec_ctx_set_error(st->sched->ctx,
                           "%s: loop '%s' of stage '%s' runs over the recurrent axis '%s' of the "
                           "scan: step %s reads step %s - 1, so the steps run one after the other "
                           "and cannot be %s; %s a loop over the other axes (%s)",
                           who, it->name, st->tensor->name, st->root[0]->name,
                           st->root[0]->name, st->root[0]->name,
                           kind == IR_FOR_PARALLEL ? "run in parallel" : "vector lanes", who,
                           sch_stage_str(st));
}

/* Where each loop made from t sits in the order of the steps: t is [0, 1); a split gives its
 * outer loop the first half of its parent's interval and its inner loop the second; a fuse of
 * two such loops (outer's interval just before inner's) their union, a fuse with another axis
 * the interval of its t part. The steps run in order when the leaves' intervals start in
 * increasing order, outermost first. lo[] per leaf (-1: not made from t); -1 when a fuse
 * joins t's loops out of order (*bad: that loop). */
static int step_order(const sch_stage *st, double *lo, const sch_iter **bad) {
  const sch_iter *it[128];
  double a[128], b[128];
  int n = 0;
  it[n] = st->root[0], a[n] = 0, b[n++] = 1;
  for (int r = 0; r < st->nrel && n < 126; r++) {
    const sch_relation *rel = &st->rel[r];
    int p = -1, q = -1;
    for (int k = 0; k < n; k++) {
      if (rel->kind == SCH_REL_SPLIT ? it[k] == rel->parent : it[k] == rel->outer) p = k;
      if (rel->kind == SCH_REL_FUSE && it[k] == rel->inner) q = k;
    }
    if (rel->kind == SCH_REL_SPLIT) {
      if (p < 0) continue;
      double mid = (a[p] + b[p]) / 2;
      it[n] = rel->outer, a[n] = a[p], b[n++] = mid;
      it[n] = rel->inner, a[n] = mid, b[n++] = b[p];
    } else if (p >= 0 && q >= 0) {
      if (b[p] != a[q]) return *bad = rel->fused, -1;
      it[n] = rel->fused, a[n] = a[p], b[n++] = b[q];
    } else if (p >= 0 || q >= 0) {
      int k = p >= 0 ? p : q;
      it[n] = rel->fused, a[n] = a[k], b[n++] = b[k];
    }
  }
  for (int l = 0; l < st->nleaf; l++) {
    lo[l] = -1;
    for (int k = 0; k < n; k++)
      if (it[k] == st->leaf[l]) lo[l] = a[k];
  }
  return 0;
}

/* The order rules: the loops made from t keep the steps in order; without pointwise steps,
 * they come before every other loop. */
int sch_scan_check_order(const char *who, const sch_stage *st) {
  const te_scan_info *sc = st->tensor->scan;
  if (!sc || !st->nroot) return 0;
  double lo[128];
  const sch_iter *bad = NULL, *prev = NULL;
  if (st->nleaf > 128) return 0;
  if (step_order(st, lo, &bad))
    return tec_ctx_set_error(st->sched->ctx,
                             "%s: loop '%s' of stage '%s' fuses two loops over the recurrent "
                             "axis '%s' in the wrong order: the steps would not run one after "
                             "the other (loops: %s)", who, bad->name, st->tensor->name,
                             st->root[0]->name, sch_stage_str(st));
  for (int l = 0; l < st->nleaf; l++) {
    if (lo[l] < 0) continue;
    for (int k = 0; k < l; k++)
      if (lo[k] > lo[l]) prev = st->leaf[k];
    if (prev)
      return tec_ctx_set_error(st->sched->ctx,
                               "%s: stage '%s' would run loop '%s' outside loop '%s', both over "
                               "the recurrent axis '%s', so the steps would not run in order "
                               "(step t reads step t - 1); keep the loops made from '%s' in the "
                               "order split made them (loops: %s)",
                               who, st->tensor->name, prev->name, st->leaf[l]->name,
                               st->root[0]->name, st->root[0]->name, sch_stage_str(st));
  }
  if (sc->pointwise) return 0;
  const sch_iter *data = NULL;
  for (int i = 0; i < st->nleaf; i++) {
    const sch_iter *it = st->leaf[i];
    int scan = sch_scan_has_axis(st, it);
    int only = 1; /* a fused loop made from t and another axis is not "only t" */
    for (int r = 0; r < st->nrel && scan; r++)
      if (st->rel[r].kind == SCH_REL_FUSE && st->rel[r].fused == it &&
          (!sch_scan_has_axis(st, st->rel[r].outer) || !sch_scan_has_axis(st, st->rel[r].inner)))
        only = 0;
    if (scan && only && !data) continue;
    if (!scan) {
      if (!data) data = it;
      continue;
    }
    if (!only)
      return tec_ctx_set_error(
          st->sched->ctx,
          "%s: loop '%s' of stage '%s' fuses the recurrent axis '%s' with another axis; a step "
          "reads all of the previous step (the update '%s' reads the state '%s' at other "
          "indices), so the loops over '%s' stay apart, outside the others (loops: %s)",
          who, it->name, st->tensor->name, st->root[0]->name, sc->update->name,
          sc->state->name, st->root[0]->name, sch_stage_str(st));
    return tec_ctx_set_error(
        st->sched->ctx,
        "%s: stage '%s' would run loop '%s' (over the recurrent axis '%s') inside loop '%s' "
        "(over another axis); a step of '%s' reads all of the previous step (not only its own "
        "element: the update '%s' reads the state '%s' at other indices), which is complete "
        "only when the loops over '%s' are outside the others; keep them outermost (loops: %s)",
        who, st->tensor->name, it->name, st->root[0]->name, data ? data->name : it->name,
        st->tensor->name, sc->update->name, sc->state->name, st->root[0]->name,
        sch_stage_str(st));
  }
  return 0;
}

int sch_scan_check_tile(const sch_stage *st, const sch_iter *x, const sch_iter *y) {
  const te_scan_info *sc = st->tensor->scan;
  if (!sc) return 0;
  int hx = sch_scan_has_axis(st, x), hy = sch_scan_has_axis(st, y);
  if (hx && hy)
    return tec_ctx_set_error(st->sched->ctx,
                             "tile: loops '%s' and '%s' of stage '%s' both run over the recurrent "
                             "axis '%s'; a tile would run '%s''s inner loop inside '%s''s outer "
                             "one, so the steps would not run in order (split them instead)",
                             x->name, y->name, st->tensor->name, st->root[0]->name, x->name,
                             y->name);
  if ((hx || hy) && !sc->pointwise)
    return tec_ctx_set_error(st->sched->ctx,
                             "tile: stage '%s' would run a loop over the recurrent axis '%s' "
                             "inside a loop over another axis; a step reads all of the previous "
                             "step (the update '%s' reads the state '%s' at other indices), so "
                             "the loops over '%s' stay outside (split the other axis instead)",
                             st->tensor->name, st->root[0]->name, sc->update->name,
                             sc->state->name, st->root[0]->name);
  return 0;
}

int sch_scan_refuse(const char *who, const sch_schedule *s, const te_tensor *t) {
  if (t->scan)
    return tec_ctx_set_error(s->ctx, "%s: '%s' is a scan (te_scan): its steps are computed in "
                                     "order at root, reading its own buffer, so it cannot be "
                                     "inlined, computed at another loop, cached or rfactored; "
                                     "schedule its loops instead", who, t->name);
  if (t->scan_of)
    return tec_ctx_set_error(s->ctx, "%s: '%s' is the state of scan '%s' (its earlier steps, "
                                     "read from the scan's own buffer); it has no buffer of its "
                                     "own", who, t->name, t->scan_of->name);
  for (int i = 0; i < s->nstage; i++) {
    const te_tensor *sc = s->stages[i]->tensor;
    if (sc->scan && te_scan_in_chain(sc->scan, t) && t != sc->scan->update)
      return tec_ctx_set_error(s->ctx, "%s: '%s' is a stage of scan '%s''s update (it reads the "
                                       "state '%s'), computed one step at a time inside the "
                                       "scan; %s of it is not supported (compute it at a loop "
                                       "of '%s' or inline it)", who, t->name, sc->name,
                               sc->scan->state->name, who, sc->name);
    if (sc->scan && t == sc->scan->update)
      return tec_ctx_set_error(s->ctx, "%s: '%s' is the update of scan '%s', computed one step "
                                       "at a time inside the scan; %s of it is not supported "
                                       "(compute it at a loop of '%s' or inline it)", who,
                               t->name, sc->name, who, sc->name);
  }
  return 0;
}

int sch_scan_check_init_reader(const char *who, const sch_schedule *s, const te_tensor *t,
                                int nreaders, te_tensor *const *readers) {
  for (int i = 0; i < s->nstage; i++) {
    const te_tensor *sc = s->stages[i]->tensor;
    if (!sc->scan || sc->scan->init != t) continue;
    int listed = nreaders < 0;
    for (int k = 0; k < nreaders; k++) listed |= readers[k] == sc;
    if (listed)
      return tec_ctx_set_error(s->ctx, "%s: '%s' is the init of scan '%s', whose first steps "
                                       "copy it as it is; leave '%s' out of the readers",
                               who, t->name, sc->name, sc->name);
  }
  return 0;
}

void sch_scan_default_attach(sch_schedule *s) {
  for (int i = 0; i < s->nstage; i++) {
    sch_stage *sst = s->stages[i];
    const te_scan_info *sc = sst->tensor->scan;
    for (int k = 0; sc && k < i; k++) {
      sch_stage *p = s->stages[k];
      if (!te_scan_in_chain(sc, p->tensor) || p->is_output) continue;
      p->attach = SCH_ATTACH_SCOPE;
      p->attach_stage = sst;
      p->attach_iter = sst->root[0];
    }
  }
}

/* The innermost leaf of scan stage st made from t. */
static int last_scan_leaf(const sch_stage *st) {
  int last = -1;
  for (int i = 0; i < st->nleaf; i++)
    if (sch_scan_has_axis(st, st->leaf[i])) last = i;
  return last;
}

/* Where chain stage p is computed: inside scan stage sst at or below its innermost t loop */
static int check_chain_stage(const char *who, const sch_stage *sst, const sch_stage *p) {
  tec_ctx *ctx = sst->sched->ctx;
  if (p->attach == SCH_ATTACH_INLINE) return 0;
  const sch_stage *a = p;
  int last = last_scan_leaf(sst);
  for (int depth = 0; a->attach == SCH_ATTACH_SCOPE && depth < 1000; depth++) {
    if (a->attach_stage == sst) {
      if (last >= 0 && sch_leaf_index(sst, a->attach_iter) >= last) return 0;
      break;
    }
    a = a->attach_stage;
  }
  const sch_iter *t = last >= 0 ? sst->leaf[last] : NULL;
  return tec_ctx_set_error(ctx, "%s: stage '%s' is part of scan '%s''s update (it reads the "
                                "state '%s'), so it must be computed one step at a time: at "
                                "loop '%s' of '%s' (the innermost over the recurrent axis) or "
                                "a loop inside it, or inlined; it is computed %s",
                           who, p->tensor->name, sst->tensor->name,
                           sst->tensor->scan->state->name, t ? t->name : "?", sst->tensor->name,
                           p->attach == SCH_ATTACH_ROOT ? "at root"
                                                        : "outside the loops over that axis");
}

int sch_scan_check(const sch_schedule *s, const char *who, const sch_attach_kind *attach) {
  for (int i = 0; i < s->nstage; i++) {
    const sch_stage *sst = s->stages[i];
    const te_scan_info *sc = sst->tensor->scan;
    if (!sc) continue;
    if (attach[i] != SCH_ATTACH_ROOT) return sch_scan_refuse(who, s, sst->tensor);
    if (sch_scan_check_order(who, sst)) return -1;
    for (int l = 0; l < sst->nleaf; l++)
      if (sst->leaf[l]->for_kind != IR_FOR_SERIAL &&
          sch_scan_check_kind(who, sst, sst->leaf[l], sst->leaf[l]->for_kind))
        return -1;
    for (int k = 0; k < s->nstage; k++) {
      const sch_stage *p = s->stages[k];
      if (p == sst) continue;
      if (te_scan_in_chain(sc, p->tensor)) {
        if (check_chain_stage(who, sst, p)) return -1;
      } else if (p->tensor == sc->init && attach[k] == SCH_ATTACH_SCOPE) {
        return tec_ctx_set_error(s->ctx, "%s: '%s' is the init of scan '%s', copied before the "
                                         "scan's loops; compute it at root or inline it",
                                 who, p->tensor->name, sst->tensor->name);
      }
      /* the state is read from the scan's buffer: only the update's stages may read it */
      for (int r = 0; r < p->ninputs; r++)
        if (p->inputs[r] == sc->state && !te_scan_in_chain(sc, p->tensor))
          return tec_ctx_set_error(s->ctx, "%s: stage '%s' reads the state '%s' of scan '%s' but "
                                           "is not part of its update (the update '%s' does not "
                                           "read it); read '%s' itself instead", who,
                                   p->tensor->name, sc->state->name, sst->tensor->name,
                                   sc->update->name, sst->tensor->name);
    }
  }
  return 0;
}

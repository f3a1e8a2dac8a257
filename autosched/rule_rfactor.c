/* rule_rfactor.c — a reduction running along the unit-stride dimension of what it reads (a
 * full sum, a row norm) that leaves little parallel work (at most 64 output elements): its
 * last reduce loop is split by the vector lanes and factored (rfactor), so the partial sums
 * are a vector accumulated across the loop, and the stage adds the lanes at the end.
 *
 *   S = sum(A[k])            ->  S.rf[ki] = sum(A[ko*16 + ki], ko)   (ki vectorized)
 *                                S        = sum(S.rf[ki], ki)
 * The summation order changes (as any vectorized sum does): results agree with the serial
 * sum to rounding. A row reduction computed at a consumer's row loop (rule_attach.c: softmax's
 * max and sum, layer norm's mean) is factored the same way, its partials computed at the same
 * loop. */
#include "autosched/internal.h"

void as_decide_rfactor(as_prog *p) {
  for (int i = 0; i < p->n; i++) {
    as_stage *s = &p->st[i];
    if (s->is_input || s->ch.kind || !s->is_reduce || s->const_only || !s->unit_reduce) continue;
    if (s->t->body->c) continue; /* an init (te_reduce_init): rfactor refuses it */
    if (AS_TUNED(p, s, rfactor) == 0) continue; /* the tuned mode's "no" */
    int L = as_lanes(p, s->t);
    if (s->rext[s->nred - 1] < 2 * L || L < 2) continue;
    int64_t work = 1;
    for (int d = 0; d < s->t->ndim; d++) work *= s->ext[d];
    if (work > 64) continue;
    s->ch.kind = TEC_AS_RFACTOR;
    s->ch.vector = L;
    s->ch.parallel = 1;
    s->rule = as_fmt(p, "rfactor by %d lanes", L);
    s->why = as_fmt(p,
                    "a reduction along its unit-stride axis with %lld output element%s: "
                    "partial sums in one vector",
                    (long long)work, work == 1 ? "" : "s");
  }
}

int as_apply_rfactor(as_prog *p, sch_schedule *s, int i) {
  as_stage *a = &p->st[i];
  int nd = a->t->ndim, nr = a->nred;
  te_tensor *t = sch_tensor_named(s, a->t->name);
  sch_stage *st = t ? sch_stage_of(s, t) : NULL;
  sch_iter *ko, *ki;
  if (!st || sch_split(st, sch_reduce_axis(st, nr - 1), a->ch.vector, &ko, &ki)) return -1;
  te_tensor *rf = sch_rfactor(s, t, ki, nd);
  sch_stage *rs = rf ? sch_stage_of(s, rf) : NULL;
  st = rs ? as_stage_named(s, a->t->name) : NULL; /* rebuilt by rfactor */
  if (!rs || !st) return -1;
  /* the partials: [data..., reduce..., lanes (vector)] */
  sch_iter *order[AS_MAX_DIM * 2 + 2];
  int n = 0;
  for (int d = 0; d < nd; d++)
    if (!(order[n++] = sch_axis(rs, d))) return -1;
  for (int k = 0; k < nr; k++)
    if (!(order[n++] = sch_reduce_axis(rs, k))) return -1;
  sch_iter *lane = sch_axis(rs, nd);
  if (!lane) return -1;
  order[n++] = lane;
  if (sch_reorder(rs, n, order) || sch_vectorize(rs, lane)) return -1;
  a->rf_name = sch_stage_tensor(rs)->name;
  if (a->ch.kind == TEC_AS_ATTACH) return 0; /* placed with its stage (rule_attach.c) */
  if (nd > 0 && a->ch.parallel) {
    int64_t ext[AS_MAX_DIM];
    for (int d = 0; d < nd; d++) ext[d] = a->ext[d];
    if (as_parallel_outer(p, rs, nd, ext, a->ch.par_depth) ||
        as_parallel_outer(p, st, nd, ext, a->ch.par_depth)) return -1;
  }
  return 0;
}

/* rule_with.c — siblings in one loop (sch_compute_with, Halide's compute_with).
 *
 * Two stages computed at the same loop of one host, over the same domain, with the same loops
 * (vector width, tail, halo), that read one producer and do not depend on each other, share
 * their loops down to the vector loop's outer part: each vector of both is computed in one
 * iteration, so the producer's elements both read are loaded once. Harris' Ix and Iy read 6
 * taps each of gray, 4 of them the same: 8 loads per vector pair instead of 12 (and one loop
 * instead of two); measured on the expert's decisions in tec (Zen 4, 3840 x 2160): 1.13x.
 * Pairs are taken in stage order, each stage in one pair at most; the later stage of a pair
 * is computed with the earlier one. The `with` knob (space.c) turns a pair off. */
#include <string.h>
#include "autosched/internal.h"
#include "schedule/internal.h"

/* 1 if a and b read one tensor (their inputs: every reader, not the first 32 consumers) */
static int read_one(const te_tensor *a, const te_tensor *b) {
  for (int x = 0; x < a->ninputs; x++)
    for (int y = 0; y < b->ninputs; y++)
      if (a->inputs[x] == b->inputs[y]) return 1;
  return 0;
}

int as_with_pair(const as_prog *p, int i, int j) {
  const as_stage *a = &p->st[i], *b = &p->st[j];
  if (i == j || a->ch.kind != TEC_AS_ATTACH || b->ch.kind != TEC_AS_ATTACH ||
      a->attach_to != b->attach_to || a->ch.rfactor || b->ch.rfactor || a->is_reduce ||
      b->is_reduce || a->nred || b->nred || a->t->ndim != b->t->ndim || a->t->ndim < 1 ||
      a->ch.vector != b->ch.vector || a->ch.tail != b->ch.tail || a->halo != b->halo ||
      a->has_attached || b->has_attached)
    return 0;
  for (int d = 0; d < a->t->ndim; d++)
    if (a->ext[d] != b->ext[d] || a->fold[d] || b->fold[d]) return 0;
  if (!read_one(a->t, b->t)) return 0;
  /* neither reads the other, directly or through other stages (the user's schedule holds
   * every stage of the program) */
  const sch_stage *sa = sch_stage_of(p->s, a->t), *sb = sch_stage_of(p->s, b->t);
  return sa && sb && sch_stage_depends(p->s, sa, sb) == 0 && sch_stage_depends(p->s, sb, sa) == 0;
}

void as_decide_with(as_prog *p) {
  for (int i = 0; i < p->n; i++) p->st[i].with_to = 0, p->st[i].ch.with = 0;
  /* a stage is in a pair once it is either one: the later (with_to set) or the earlier
   * (taken; pairs are made in stage order: the stages before j are all marked that will be
   * when j looks) */
  unsigned char *taken = tec_ctx_alloc(p->ctx, (size_t)p->n + 1);
  if (!taken) return; /* no pairs: a plainer schedule, never a wrong one */
  for (int j = 0; j < p->n; j++) {
    as_stage *b = &p->st[j];
    if (taken[j] || AS_TUNED(p, b, with) == 0) continue;
    for (int i = 0; i < j; i++) {
      as_stage *a = &p->st[i];
      if (taken[i] || !as_with_pair(p, i, j)) continue;
      taken[i] = taken[j] = 1;
      b->with_to = i + 1, b->ch.with = 1;
      b->rule = as_fmt(p, "%s; computed with %s (one loop down to the vector loop)",
                       b->rule ? b->rule : "attach", a->t->name);
      b->why = as_fmt(p, "%s; %s and %s read one producer over the same domain at the same "
                         "loop: each vector of both in one iteration, the producer loaded once",
                      b->why ? b->why : "", a->t->name, b->t->name);
      break;
    }
  }
}

int as_apply_with(as_prog *p, sch_schedule *s, int i) {
  as_stage *a = &p->st[i], *b = &p->st[a->with_to - 1];
  sch_stage *st = as_stage_named(s, a->t->name), *ot = as_stage_named(s, b->t->name);
  if (!st || !ot) return -1;
  /* down to the loop outside the vector loop; sch_compute_with checks the loops (their
   * number and kinds) and names the ones that differ */
  int d = sch_stage_nleaf(ot) - 1;
  while (d >= 0 && sch_iter_loop_kind(sch_stage_leaf(ot, d)) == IR_FOR_VECTORIZED) d--;
  if (d < 0)
    return tec_ctx_set_error(p->ctx, "tec_autoschedule: compute_with('%s', '%s'): every loop of "
                                     "'%s' is vectorized; no loop outside the vector loop to "
                                     "fuse down to",
                             a->t->name, b->t->name, b->t->name);
  return sch_compute_with(st, ot, sch_stage_leaf(ot, d));
}

/* fallback.c — when a choice cannot be applied (a primitive refuses it) or its schedule does
 * not lower, the stage gets a plainer one and the schedule is made again from the start:
 *   tile, rfactor, attach, inline  ->  its own loops at the root (vectorized, parallel)
 *   loops hosting attached stages   ->  the attached stages go to the root too
 *   loops                           ->  left as declared
 *   (first, when the pairing is what failed, a stage sharing its loops with a sibling gets
 *   its own again; a stage that moves for another reason leaves its pair too)
 * Each step is final for the stage (ch.fallback counts them) and the report says why, so the
 * retries end: at worst every stage is left as declared, the unscheduled program. */
#include "autosched/internal.h"

/* s hosts no stage: what the attach rule set on it as a host cleared */
static void unhost(as_stage *s) {
  s->has_attached = s->slide_only = 0;
  s->halo = s->halo_x = 0;
  s->host_row = -1;
  s->host_mask = 0;
}

static void to_loops(as_prog *p, int i, const char *why);

/* the stages attached to stage i go to their own loops at the root (why) */
static void detach_all(as_prog *p, int i, const char *why) {
  for (int k = 0; k < p->n; k++)
    if (p->st[k].ch.kind == TEC_AS_ATTACH && p->st[k].attach_to == i) to_loops(p, k, why);
}

/* the pair (rule_with.c) stage i is in, apart: 1, or 0 when it is in none (moving: i's own
 * choice changes too and is counted there) */
static int unpair(as_prog *p, int i, const char *why, int moving) {
  for (int k = 0; k < p->n; k++) {
    as_stage *a = &p->st[k];
    if (!a->with_to || (k != i && a->with_to - 1 != i)) continue;
    as_stage *b = &p->st[a->with_to - 1];
    a->with_to = 0, a->ch.with = 0, a->ch.fallback += !(moving && k == i);
    a->why = as_fmt(p, "its loops stay its own (not fused with %s): %s", b->t->name, why);
    return 1;
  }
  return 0;
}

static void to_loops(as_prog *p, int i, const char *why) {
  as_stage *s = &p->st[i];
  /* at the root now: no longer where its partner is */
  unpair(p, i, as_fmt(p, "%s fell back", s->t->name), 1);
  int attached_host = s->has_attached;
  tec_autosched_choice old = s->ch;
  s->ch = (tec_autosched_choice){
      .kind = TEC_AS_LOOPS, .parallel = 1, .tile_axis_i = -1, .tile_axis_k = -1, .fallback = old.fallback + 1};
  unhost(s);
  s->anchor = s->attach_to = -1;
  s->npack = 0;
  /* no longer inlined: the row walks through it are walked again (as_row_walk) */
  for (int k = 0; old.kind == TEC_AS_INLINE && k < p->n; k++) p->st[k].row_walk = -1;
  as_loops_choice(p, s);
  s->rule = as_fmt(p, "loops (fallback from %s)", tec_autosched_kind_name(old.kind));
  s->why = why;
  if (attached_host) detach_all(p, i, as_fmt(p, "its host %s fell back", s->t->name));
}

int as_fallback(as_prog *p, int i, const char *why, as_fail fail) {
  as_stage *s = &p->st[i];
  /* the pairing failed (as_apply_with or sch_compute_with refused it, or the schedule lowers
   * without it: as_schedule asked): first the two apart, the rest kept */
  if (fail == AS_FAIL_WITH && unpair(p, i, why, 0)) return 0;
  switch (s->ch.kind) {
    case TEC_AS_TILE: {
      int other = s->anchor;
      to_loops(p, i, why);
      if (other >= 0 && p->st[other].ch.kind == TEC_AS_TILE)
        to_loops(p, other, as_fmt(p, "its tile partner %s fell back", s->t->name));
      return 0;
    }
    case TEC_AS_RFACTOR:
    case TEC_AS_ATTACH:
    case TEC_AS_INLINE: to_loops(p, i, why); return 0;
    case TEC_AS_LOOPS:
      if (s->has_attached) {
        detach_all(p, i, as_fmt(p, "its host %s could not take it: %s", s->t->name, why));
        unhost(s);
        s->ch.rows = s->ch.cols = 0;
        s->ch.slide = 0;
        s->ch.fallback++;
        return 0;
      }
      s->ch = (tec_autosched_choice){ /* (paired stages are attached: to_loops unpairs them) */
          .kind = TEC_AS_LEAVE, .tile_axis_i = -1, .tile_axis_k = -1, .fallback = s->ch.fallback + 1};
      s->rule = "leave (fallback)";
      s->why = why;
      return 0;
    default: return -1;
  }
}

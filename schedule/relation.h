/* relation.h — the one relation engine: a stage's split and fuse records, undone or replayed
 * (schedule/relation.c). Internal; used by the schedule primitives that rebuild tensors
 * (cache_write's relayout, rfactor) and by lowering (iter values, bound inference). */
#ifndef TEC_SCHEDULE_RELATION_H
#define TEC_SCHEDULE_RELATION_H

#include "tec/schedule.h"
#include "schedule/internal.h"

/* Where an engine user takes the ranges of iters from: its min (NULL result: 0) and its
 * extent (NULL: unknown, an error). Iters made by split and fuse always start at 0. */
typedef struct sch_reldims {
  const ir_expr *(*min)(void *user, const sch_iter *it);
  const ir_expr *(*extent)(void *user, const sch_iter *it);
  void *user;
} sch_reldims;

/* A tail condition left by a split: cond holds where the root index is inside its extent. */
typedef struct sch_relguard {
  const ir_expr *cond;
  int reduce;     /* the split's parent is a reduce axis */
  sch_tail tail;  /* how the lowering applies it (GUARD_WITH_IF, SHIFT_INWARDS: an if around
                     the body; PREDICATE: loads and stores predicated; ROUND_UP: loads only) */
} sch_relguard;

/* Values of iters (later entries win) and the tail guards. Arena-allocated: no free. */
typedef struct sch_relvals {
  int n, cap;
  struct sch_relval { const sch_iter *iter; const ir_expr *val; } *v;
  int nguard, gcap;
  sch_relguard *g;
} sch_relvals;

int sch_relvals_put(tec_ctx *ctx, sch_relvals *v, const sch_iter *it, const ir_expr *val);
const ir_expr *sch_relvals_get(const sch_relvals *v, const sch_iter *it);

/* flags of sch_rel_to_root */
enum {
  SCH_REL_PLAIN = 1 /* every tail as GUARD_WITH_IF: for a tensor laid out over the leaf domain
                       (cache_write's relayout), where leaf (outer, inner) must be root
                       outer*factor + inner */
};
/* leaf -> root: v holds the values of (some) leaves; every relation whose inputs have values
 * is undone, newest first:
 *   split p -> (o, i):  p = min(p) + o*ext(i) + i          (guard p < min(p) + ext(p))
 *     SHIFT_INWARDS:    p = min(p) + min(o*ext(i), ext(p) - ext(i)) + i   (no guard when
 *                       ext(p) >= ext(i) is known; else the start is also max(.., 0), guarded)
 *   fuse (o, i) -> f:   o = min(o) + f / ext(i),  i = min(i) + f % ext(i)
 * 0, or -1 with an error (out of memory, an extent unknown). */
int sch_rel_to_root(tec_ctx *ctx, const sch_stage *st, const sch_reldims *d, int flags,
                    sch_relvals *v);
/* root -> leaf: v holds the values of the roots; every relation is replayed, oldest first:
 *   split: o = (p - min(p)) / ext(i), i = (p - min(p)) % ext(i);  fuse: f = o*ext(i) + i */
int sch_rel_to_leaf(tec_ctx *ctx, const sch_stage *st, const sch_reldims *d, sch_relvals *v);
/* Factors (and nparts) up to this are kept as given even above the extent: a loop that long
 * under its guard is exact and cheap (loop partitioning drops the dead tail), and tuned
 * schedules and their records (a jb of 8 panels where there are 4) keep the programs and
 * features they had. Past it a factor alone could overflow an extent, size a buffer of
 * gigabytes or make a loop that never ends: the split clamps it to a constant extent when it
 * is recorded (split.c), and sch_rel_split_extents to the extent it is given otherwise. */
#define SCH_CLAMP_FROM ((int64_t)1 << 16)
/* The extents of a split's outer and inner loops when its parent has extent pext:
 *   factor f: outer ceil(pext / f), inner f;  nparts n: outer n, inner ceil(pext / n)
 * folded when constant; a constant f or n past SCH_CLAMP_FROM is min(f, pext) (min(n, pext))
 * instead (round_up's buffer, rounded to a multiple of the inner extent, is then pext). */
void sch_rel_split_extents(const sch_relation *rel, const ir_expr *pext, const ir_expr **outer,
                           const ir_expr **inner);
/* ceil(a / b) for a >= 0, b >= 1, without the overflow of (a + b - 1) / b; folded when both
 * are constants. */
const ir_expr *sch_ceildiv(const ir_expr *a, const ir_expr *b);
/* The name of a tail strategy ("guard_with_if", ...), or NULL. */
const char *sch_tail_name(sch_tail t);

#endif

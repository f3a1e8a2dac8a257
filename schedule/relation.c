/* relation.c — the one relation engine: what a stage's splits and fuses mean, in one place.
 *
 *   split i (100) by 8:  i.outer in [0, 13), i.inner in [0, 8)
 *     leaf -> root:  i = i.outer*8 + i.inner, tail guard i < 100      (sch_rel_to_root)
 *     root -> leaf:  i.outer = i / 8, i.inner = i % 8                 (sch_rel_to_leaf)
 * The tail strategy of a split (schedule.h) is applied here: SHIFT_INWARDS moves the start of
 * the last chunk back (i = min(i.outer*8, 92) + i.inner, no guard); the other strategies keep
 * the value and say how the guard is applied (an if, predicated loads/stores, or loads only).
 * Users: lower/iter_values.c (lowering), lower/bound.c (loop extents), schedule/relayout.c
 * (cache_write's leaf layout), schedule/rfactor.c. Ranges come from the caller (sch_reldims):
 * inferred bounds when lowering, declared domains in the schedule. */
#include "schedule/relation.h"
#include "ir/internal.h"
#include "schedule/internal.h"

int sch_relvals_put(tec_ctx *ctx, sch_relvals *v, const sch_iter *it, const ir_expr *val) {
  if (!val || tec_grow(ctx, (void **)&v->v, &v->cap, v->n + 1, sizeof *v->v)) return -1;
  v->v[v->n].iter = it;
  v->v[v->n].val = val;
  v->n++;
  return 0;
}

const ir_expr *sch_relvals_get(const sch_relvals *v, const sch_iter *it) {
  for (int i = v->n - 1; i >= 0; i--)
    if (v->v[i].iter == it) return v->v[i].val;
  return NULL;
}

static int add_guard(tec_ctx *ctx, sch_relvals *v, const ir_expr *cond, int reduce,
                     sch_tail tail) {
  if (!cond || tec_grow(ctx, (void **)&v->g, &v->gcap, v->nguard + 1, sizeof *v->g)) return -1;
  v->g[v->nguard++] = (sch_relguard){cond, reduce, tail};
  return 0;
}

const char *sch_tail_name(sch_tail t) {
  switch (t) {
  case SCH_TAIL_GUARD_WITH_IF: return "guard_with_if";
  case SCH_TAIL_SHIFT_INWARDS: return "shift_inwards";
  case SCH_TAIL_ROUND_UP: return "round_up";
  case SCH_TAIL_PREDICATE: return "predicate";
  }
  return NULL;
}

const ir_expr *sch_ceildiv(const ir_expr *a, const ir_expr *b) {
  if (!a || !b) return NULL;
  int64_t av, bv;
  if (ir_is_const_int(a, &av) && ir_is_const_int(b, &bv) && bv > 0)
    return ir_int(a->ctx, av > 0 ? (av - 1) / bv + 1 : 0);
  const ir_expr *one = ir_int(a->ctx, 1);
  return ir_add(ir_floordiv(ir_sub(a, one), b), one);
}

/* v, or min(v, pext) when v is a constant past SCH_CLAMP_FROM (folded when pext is one) */
static const ir_expr *clamped(const sch_relation *rel, const ir_expr *v, const ir_expr *pext) {
  int64_t c, p;
  if (!v || !pext || !ir_is_const_int(v, &c) || c <= SCH_CLAMP_FROM)
    return v;
  if (ir_is_const_int(pext, &p)) return p < c ? pext : v;
  return ir_min(v, pext);
}

void sch_rel_split_extents(const sch_relation *rel, const ir_expr *pext, const ir_expr **outer,
                           const ir_expr **inner) {
  *inner = rel->factor ? clamped(rel, rel->factor, pext) : sch_ceildiv(pext, rel->nparts);
  *outer = rel->factor ? sch_ceildiv(pext, rel->factor) : clamped(rel, rel->nparts, pext);
}

static const ir_expr *min_of(const sch_reldims *d, const sch_iter *it) {
  return d->min ? d->min(d->user, it) : NULL;
}

/* v + m, v - m: m NULL adds nothing (a 0 is kept: the simplifier folds it) */
static const ir_expr *plus(const ir_expr *v, const ir_expr *m) {
  return !v || !m ? v : ir_add(v, m);
}
static const ir_expr *minus(const ir_expr *v, const ir_expr *m) {
  return !v || !m ? v : ir_sub(v, m);
}

static int unknown(tec_ctx *ctx, const sch_iter *it) {
  return TEC_INTERNAL(ctx, tec_ctx_printf(ctx, "relation: no extent for loop '%s'", it->name));
}

int sch_rel_to_root(tec_ctx *ctx, const sch_stage *st, const sch_reldims *d, int flags,
                    sch_relvals *v) {
  for (int r = st->nrel - 1; r >= 0; r--) {
    const sch_relation *rel = &st->rel[r];
    if (rel->kind == SCH_REL_SPLIT) {
      const ir_expr *o = sch_relvals_get(v, rel->outer), *i = sch_relvals_get(v, rel->inner);
      if (!o || !i) continue; /* a part the caller did not ask for */
      const ir_expr *ie = d->extent(d->user, rel->inner), *pe = d->extent(d->user, rel->parent);
      if (!ie) return unknown(ctx, rel->inner);
      if (!pe) return unknown(ctx, rel->parent);
      const ir_expr *pmin = min_of(d, rel->parent);
      sch_tail tail = flags & SCH_REL_PLAIN ? SCH_TAIL_GUARD_WITH_IF : rel->tail;
      const ir_expr *start = ir_mul(o, ie);
      int guard = 1;
      if (tail == SCH_TAIL_SHIFT_INWARDS) {
        int64_t pv, iv;
        start = ir_min(start, ir_sub(pe, ie));
        if (ir_is_const_int(pe, &pv) && ir_is_const_int(ie, &iv) && pv >= iv)
          guard = 0; /* every chunk is whole */
        else
          start = ir_max(start, ir_int(ctx, 0)); /* extent < factor at run time: guarded */
      }
      const ir_expr *p = plus(ir_add(start, i), pmin);
      if (sch_relvals_put(ctx, v, rel->parent, p)) return -1;
      if (guard && add_guard(ctx, v, ir_lt(p, pmin ? ir_add(pmin, pe) : pe),
                             rel->parent->kind == SCH_ITER_REDUCE, tail))
        return -1;
    } else {
      const ir_expr *f = sch_relvals_get(v, rel->fused);
      if (!f) continue;
      const ir_expr *ie = d->extent(d->user, rel->inner);
      if (!ie) return unknown(ctx, rel->inner);
      if (sch_relvals_put(ctx, v, rel->outer, plus(ir_floordiv(f, ie), min_of(d, rel->outer))) ||
          sch_relvals_put(ctx, v, rel->inner, plus(ir_floormod(f, ie), min_of(d, rel->inner))))
        return -1;
    }
  }
  return 0;
}

int sch_rel_to_leaf(tec_ctx *ctx, const sch_stage *st, const sch_reldims *d, sch_relvals *v) {
  for (int r = 0; r < st->nrel; r++) {
    const sch_relation *rel = &st->rel[r];
    if (rel->kind == SCH_REL_SPLIT) {
      const ir_expr *p = sch_relvals_get(v, rel->parent);
      if (!p) continue;
      const ir_expr *ie = d->extent(d->user, rel->inner);
      if (!ie) return unknown(ctx, rel->inner);
      p = minus(p, min_of(d, rel->parent));
      if (sch_relvals_put(ctx, v, rel->outer, ir_floordiv(p, ie)) ||
          sch_relvals_put(ctx, v, rel->inner, ir_floormod(p, ie)))
        return -1;
    } else {
      const ir_expr *o = sch_relvals_get(v, rel->outer), *i = sch_relvals_get(v, rel->inner);
      if (!o || !i) continue;
      const ir_expr *ie = d->extent(d->user, rel->inner);
      if (!ie) return unknown(ctx, rel->inner);
      o = minus(o, min_of(d, rel->outer));
      i = minus(i, min_of(d, rel->inner));
      if (sch_relvals_put(ctx, v, rel->fused, ir_add(ir_mul(o, ie), i))) return -1;
    }
  }
  return 0;
}

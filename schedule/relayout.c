/* relayout.c — a stage's iteration structure as index maps between its root axes and its
 * leaf loops, for the primitives that rebuild tensors from the schedule (cache_write of a
 * split/reordered stage: the cache is laid out in leaf order, the packed layout trick).
 *
 *   split c by 4, reorder (c.outer, h, c.inner):
 *     to leaves: c.outer = c / 4, c.inner = c % 4          (sch_root_to_leaf)
 *     to roots:  c = c.outer*4 + c.inner, guard c < C      (sch_leaf_to_root)
 * Extents come from the declared domains (valid for root-attached stages); the relation
 * engine (relation.c) does the mapping. */
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"
#include "schedule/relation.h"

const ir_expr *sch_iter_extent(const sch_stage *st, const sch_iter *it) {
  for (int i = 0; i < st->nroot; i++)
    if (st->root[i] == it) return it->dom_extent;
  for (int r = 0; r < st->nrel; r++) {
    const sch_relation *rel = &st->rel[r];
    if (rel->kind == SCH_REL_SPLIT && (rel->outer == it || rel->inner == it)) {
      const ir_expr *p = sch_iter_extent(st, rel->parent), *o, *in;
      if (!p) return NULL;
      sch_rel_split_extents(rel, p, &o, &in);
      return rel->outer == it ? o : in;
    }
    if (rel->kind == SCH_REL_FUSE && rel->fused == it) {
      const ir_expr *a = sch_iter_extent(st, rel->outer), *b = sch_iter_extent(st, rel->inner);
      int64_t av, bv;
      int64_t pv;
      if (a && b && ir_is_const_int(a, &av) && ir_is_const_int(b, &bv) &&
          !__builtin_mul_overflow(av, bv, &pv))
        return ir_int(a->ctx, pv); /* fuse refuses a product past int64 */
      return a && b ? ir_mul(a, b) : NULL;
    }
  }
  return NULL;
}

/* the declared domains: roots start at their min, the loops relations make at 0 */
static const ir_expr *dom_min(void *user, const sch_iter *it) {
  const sch_stage *st = user;
  for (int i = 0; i < st->nroot; i++)
    if (st->root[i] == it) return it->dom_min;
  return NULL;
}
static const ir_expr *dom_extent(void *user, const sch_iter *it) {
  return sch_iter_extent(user, it);
}

int sch_root_to_leaf(const sch_stage *st, const ir_expr *const *root_vals,
                     const ir_expr **leaf_vals) {
  tec_ctx *ctx = st->sched->ctx;
  sch_relvals v = {0};
  sch_reldims d = {dom_min, dom_extent, (void *)st};
  for (int i = 0; i < st->nroot; i++)
    if (sch_relvals_put(ctx, &v, st->root[i], root_vals[i])) return -1;
  if (sch_rel_to_leaf(ctx, st, &d, &v)) return -1;
  for (int l = 0; l < st->nleaf; l++)
    if (!(leaf_vals[l] = sch_relvals_get(&v, st->leaf[l]))) return -1;
  return 0;
}

int sch_leaf_to_root(const sch_stage *st, const ir_expr *const *leaf_vals,
                     const ir_expr **root_vals, const ir_expr **guard) {
  tec_ctx *ctx = st->sched->ctx;
  sch_relvals v = {0};
  sch_reldims d = {dom_min, dom_extent, (void *)st};
  *guard = NULL;
  for (int l = 0; l < st->nleaf; l++)
    if (sch_relvals_put(ctx, &v, st->leaf[l], leaf_vals[l])) return -1;
  /* a root that is still a leaf is a loop from 0: its value adds its min */
  for (int l = 0; l < st->nleaf; l++)
    if (dom_min((void *)st, st->leaf[l]) &&
        sch_relvals_put(ctx, &v, st->leaf[l], ir_add(leaf_vals[l], st->leaf[l]->dom_min)))
      return -1;
  if (sch_rel_to_root(ctx, st, &d, SCH_REL_PLAIN, &v)) return -1;
  for (int g = 0; g < v.nguard; g++) *guard = *guard ? ir_and(*guard, v.g[g].cond) : v.g[g].cond;
  for (int i = 0; i < st->nroot; i++)
    if (!(root_vals[i] = sch_relvals_get(&v, st->root[i]))) return -1;
  return 0;
}

/* A reduction's axes may range over domains that use the data axes (r in [0, j + 1): a
 * triangular sum). A tensor made from the reduction with new data axes (a cache, a relayout)
 * needs axes whose domains use the new ones: red with every such axis replaced by a fresh one
 * whose min and extent have vars replaced by vals (the source and condition then read the
 * fresh axes; the caller substitutes vars in them). red itself when no domain uses vars. */
const ir_expr *sch_reduce_rebind(tec_ctx *ctx, const ir_expr *red, int n,
                                 const ir_expr *const *vars, const ir_expr *const *vals) {
  if (!red || red->kind != IR_REDUCE) return red;
  int uses = 0;
  for (int a = 0; a < red->nargs; a++)
    for (int v = 0; v < n; v++)
      uses |= ir_uses_var(red->args[a]->dom_min, vars[v]) ||
              ir_uses_var(red->args[a]->dom_extent, vars[v]);
  if (!uses) return red;
  const ir_expr **axes = tec_ctx_alloc(ctx, sizeof *axes * (size_t)red->nargs);
  if (!axes) return NULL;
  for (int a = 0; a < red->nargs; a++) {
    const ir_expr *old = red->args[a];
    axes[a] = te_reduce_axis(ctx, old->name, ir_substitute(old->dom_min, n, vars, vals),
                             ir_substitute(old->dom_extent, n, vars, vals));
    if (!axes[a]) return NULL;
  }
  const ir_expr *src = ir_substitute(red->a, red->nargs, red->args, axes);
  const ir_expr *cond = red->b ? ir_substitute(red->b, red->nargs, red->args, axes) : NULL;
  if (!src || (red->b && !cond)) return NULL;
  return ir_reduce_like(red, src, red->nargs, axes, cond);
}

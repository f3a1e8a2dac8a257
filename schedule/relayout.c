/* relayout.c — a stage's iteration structure as index maps between its root axes and its
 * leaf loops, for the primitives that rebuild tensors from the schedule (cache_write of a
 * split/reordered stage: the cache is laid out in leaf order, the packed layout trick).
 *
 *   split c by 4, reorder (c.outer, h, c.inner):
 *     to leaves: c.outer = c / 4, c.inner = c % 4          (sch_root_to_leaf)
 *     to roots:  c = c.outer*4 + c.inner, guard c < C      (sch_leaf_to_root)
 * Extents come from the declared domains (valid for root-attached stages). */
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"

const ir_expr *sch_iter_extent(const sch_stage *st, const sch_iter *it) {
  for (int i = 0; i < st->nroot; i++)
    if (st->root[i] == it) return it->dom_extent;
  for (int r = 0; r < st->nrel; r++) {
    const sch_relation *rel = &st->rel[r];
    if (rel->kind == SCH_REL_SPLIT && (rel->outer == it || rel->inner == it)) {
      const ir_expr *p = sch_iter_extent(st, rel->parent);
      if (!p) return NULL;
      const ir_expr *one = ir_int(p->ctx, 1);
      const ir_expr *n = rel->factor ? rel->factor : rel->nparts;
      int64_t pv, nv; /* ceil(p / n), folded when both are known */
      const ir_expr *other = ir_is_const_int(p, &pv) && ir_is_const_int(n, &nv) && nv > 0
                                 ? ir_int(p->ctx, pv > 0 ? (pv - 1) / nv + 1 : 0)
                                 : ir_add(ir_floordiv(ir_sub(p, one), n), one);
      if (rel->factor) return rel->outer == it ? other : rel->factor;
      return rel->outer == it ? rel->nparts : other;
    }
    if (rel->kind == SCH_REL_FUSE && rel->fused == it) {
      const ir_expr *a = sch_iter_extent(st, rel->outer), *b = sch_iter_extent(st, rel->inner);
      int64_t av, bv;
      if (a && b && ir_is_const_int(a, &av) && ir_is_const_int(b, &bv)) return ir_int(a->ctx, av * bv);
      return a && b ? ir_mul(a, b) : NULL;
    }
  }
  return NULL;
}

typedef struct imap {
  int n;
  const sch_iter *it[256];
  const ir_expr *val[256];
} imap;

static const ir_expr *get(const imap *m, const sch_iter *it) {
  for (int i = m->n - 1; i >= 0; i--)
    if (m->it[i] == it) return m->val[i];
  return NULL;
}
static int put(imap *m, const sch_iter *it, const ir_expr *v) {
  if (!v || m->n >= 256) return -1;
  m->it[m->n] = it;
  m->val[m->n++] = v;
  return 0;
}

int sch_root_to_leaf(const sch_stage *st, const ir_expr *const *root_vals,
                     const ir_expr **leaf_vals) {
  imap m = {0};
  for (int i = 0; i < st->nroot; i++)
    if (put(&m, st->root[i], ir_sub(root_vals[i], st->root[i]->dom_min))) return -1;
  for (int r = 0; r < st->nrel; r++) {
    const sch_relation *rel = &st->rel[r];
    if (rel->kind == SCH_REL_SPLIT) {
      const ir_expr *p = get(&m, rel->parent), *ie = sch_iter_extent(st, rel->inner);
      if (!p || !ie || put(&m, rel->outer, ir_floordiv(p, ie)) ||
          put(&m, rel->inner, ir_floormod(p, ie)))
        return -1;
    } else {
      const ir_expr *o = get(&m, rel->outer), *i = get(&m, rel->inner);
      const ir_expr *ie = sch_iter_extent(st, rel->inner);
      if (!o || !i || !ie || put(&m, rel->fused, ir_add(ir_mul(o, ie), i))) return -1;
    }
  }
  for (int l = 0; l < st->nleaf; l++)
    if (!(leaf_vals[l] = get(&m, st->leaf[l]))) return -1;
  return 0;
}

int sch_leaf_to_root(const sch_stage *st, const ir_expr *const *leaf_vals,
                     const ir_expr **root_vals, const ir_expr **guard) {
  imap m = {0};
  *guard = NULL;
  for (int l = 0; l < st->nleaf; l++)
    if (put(&m, st->leaf[l], leaf_vals[l])) return -1;
  for (int r = st->nrel - 1; r >= 0; r--) {
    const sch_relation *rel = &st->rel[r];
    if (rel->kind == SCH_REL_SPLIT) {
      const ir_expr *o = get(&m, rel->outer), *i = get(&m, rel->inner);
      const ir_expr *ie = sch_iter_extent(st, rel->inner), *pe = sch_iter_extent(st, rel->parent);
      if (!o || !i || !ie || !pe) return -1;
      const ir_expr *p = ir_add(ir_mul(o, ie), i);
      if (put(&m, rel->parent, p)) return -1;
      const ir_expr *g = ir_lt(p, pe);
      *guard = *guard ? ir_and(*guard, g) : g;
    } else {
      const ir_expr *f = get(&m, rel->fused), *ie = sch_iter_extent(st, rel->inner);
      if (!f || !ie || put(&m, rel->outer, ir_floordiv(f, ie)) ||
          put(&m, rel->inner, ir_floormod(f, ie)))
        return -1;
    }
  }
  for (int i = 0; i < st->nroot; i++) {
    const ir_expr *v = get(&m, st->root[i]);
    if (!v) return -1;
    root_vals[i] = ir_add(v, st->root[i]->dom_min);
  }
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

/* rfactor.c — factor a reduction: partial results over one of its (split) reduce loops become
 * a data axis of a new stage, and the original stage reduces those partials.
 *
 *   C[i] = sum(A[i, k], k in 64);  split k -> k.outer(16), k.inner(4);  rfactor(C, k.inner)
 *     C.rf[k.inner, i] = sum(A[i, k.outer*4 + k.inner], k.outer in 16)
 *     C[i]             = sum(C.rf[k.inner.v, i], k.inner.v in 4)
 * The partials can then be vectorized or parallelized over the new data axis. The original
 * stage is rebuilt: its data axes come back unsplit and its only reduce axis is the new one. */
#include <string.h>
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"
#include "schedule/relation.h"

/* the declared domains (relation engine): reduce roots start at their min */
static const ir_expr *dom_min(void *user, const sch_iter *it) {
  const sch_stage *st = user;
  for (int i = 0; i < st->nroot; i++)
    if (st->root[i] == it) return it->dom_min;
  return NULL;
}
static const ir_expr *dom_extent(void *user, const sch_iter *it) {
  return sch_iter_extent(user, it);
}

typedef struct rf_user {
  const sch_stage *st;
  const sch_iter *factored;
  const ir_expr *const *leaf_vars;  /* new reduce axis vars for the other reduce leaves */
  const sch_iter *const *leaves;
  int nleaves;
  int factor_axis;
} rf_user;

static const ir_expr *rf_body(tec_ctx *ctx, const ir_expr *const *idx, void *user) {
  rf_user *u = user;
  const sch_stage *st = u->st;
  const te_tensor *t = st->tensor;
  sch_relvals v = {0};
  sch_reldims dims = {dom_min, dom_extent, (void *)st};
  /* leaves: the factored one is a data axis of the new op, the others new reduce axes */
  for (int i = 0; i < st->nleaf; i++) {
    const sch_iter *l = st->leaf[i];
    if (l->kind != SCH_ITER_REDUCE) continue;
    const ir_expr *e = idx[u->factor_axis];
    if (l != u->factored) { /* the new reduce axis that stands for this loop */
      int j = 0;
      while (j < u->nleaves && u->leaves[j] != l) j++;
      if (j == u->nleaves) return NULL;
      e = u->leaf_vars[j];
    }
    /* a reduce root that is still a leaf is a loop from 0: its value adds its min */
    if (dom_min((void *)st, l)) e = ir_add(e, l->dom_min);
    if (sch_relvals_put(ctx, &v, l, e)) return NULL;
  }
  /* only reduce leaves have values: the data axes' relations are left alone (the engine
   * skips a relation without values) */
  if (sch_rel_to_root(ctx, st, &dims, 0, &v)) return NULL;
  const ir_expr *guard = NULL;
  for (int g = 0; g < v.nguard; g++) guard = guard ? ir_and(guard, v.g[g].cond) : v.g[g].cond;
  int nred = st->nroot - t->ndim;
  const ir_expr *vars[64], *vals[64];
  int nv = 0;
  for (int i = 0; i < t->ndim; i++) {
    vars[nv] = st->root[i]->var;
    vals[nv++] = idx[i < u->factor_axis ? i : i + 1];
  }
  for (int i = 0; i < nred; i++) {
    const sch_iter *r = st->root[t->ndim + i];
    const ir_expr *rv = sch_relvals_get(&v, r);
    if (!rv) return NULL;
    vars[nv] = r->var;
    vals[nv++] = rv;
  }
  const ir_expr *red = st->body;
  const ir_expr *src = ir_substitute(red->a, nv, vars, vals);
  const ir_expr *cond = red->b ? ir_substitute(red->b, nv, vars, vals) : NULL;
  if (guard) cond = cond ? ir_and(cond, guard) : guard;
  if (u->nleaves == 0) /* nothing left to reduce: the partial is one term */
    return cond ? ir_select(cond, src, ir_combiner_identity(ctx, (ir_combiner)red->v.i, src->type))
                : src;
  return ir_reduce((ir_combiner)red->v.i, src, u->nleaves, u->leaf_vars, cond);
}

typedef struct fin_user {
  const te_tensor *rf;
  const ir_expr *k;
  int factor_axis;
  ir_combiner comb;
} fin_user;

static const ir_expr *final_body(tec_ctx *ctx, const ir_expr *const *idx, void *user) {
  fin_user *u = user;
  const ir_expr *a[17];
  int nd = u->rf->ndim;
  for (int i = 0, j = 0; i < nd; i++) a[i] = i == u->factor_axis ? u->k : idx[j++];
  return ir_reduce(u->comb, ir_read(ctx, u->rf, nd, a), 1, &u->k, NULL);
}

/* Whether loop a comes from the same reduce axes as loop b: the two are connected through the
 * stage's splits and fuses (TVM's touched axes). */
static int connected(tec_ctx *ctx, const sch_stage *st, const sch_iter *a, const sch_iter *b) {
  int n = 0, cap = 0, grew = 1;
  const sch_iter **set = NULL;
  if (tec_grow(ctx, (void **)&set, &cap, 1, sizeof *set)) return -1;
  set[n++] = a;
  while (grew) {
    grew = 0;
    for (int r = 0; r < st->nrel; r++) {
      const sch_relation *rel = &st->rel[r];
      const sch_iter *m[3] = {rel->parent, rel->outer, rel->inner};
      if (rel->kind == SCH_REL_FUSE) m[0] = rel->fused;
      int in = 0, all = 1;
      for (int k = 0; k < 3; k++) {
        int found = 0;
        for (int j = 0; j < n && !found; j++) found = set[j] == m[k];
        in |= found;
        all &= found || !m[k];
      }
      if (!in || all) continue;
      for (int k = 0; k < 3; k++) {
        int found = !m[k];
        for (int j = 0; j < n && !found; j++) found = set[j] == m[k];
        if (found) continue;
        if (tec_grow(ctx, (void **)&set, &cap, n + 1, sizeof *set)) return -1;
        set[n++] = m[k];
        grew = 1;
      }
    }
  }
  for (int j = 0; j < n; j++)
    if (set[j] == b) return 1;
  return 0;
}

/* The reduce leaves other than axis, in the order the new stage reduces them (sch_rfactor's
 * comment): loop order for a version 1 trace, else the leaves of the reduce roots axis does
 * not come from (root by root) and then the rest. Their number, or -1 out of memory. */
static int reduce_order(tec_ctx *ctx, const sch_stage *st, const sch_iter *axis, int loop_order,
                        const sch_iter **out) {
  int n = 0;
  if (loop_order) {
    for (int i = 0; i < st->nleaf; i++)
      if (st->leaf[i]->kind == SCH_ITER_REDUCE && st->leaf[i] != axis) out[n++] = st->leaf[i];
    return n;
  }
  for (int touched = 0; touched < 2; touched++)
    for (int r = st->tensor->ndim; r < st->nroot; r++) {
      int c = connected(ctx, st, st->root[r], axis);
      if (c < 0) return -1;
      if (c != touched) continue;
      for (int i = 0; i < st->nleaf; i++) {
        const sch_iter *l = st->leaf[i];
        if (l->kind != SCH_ITER_REDUCE || l == axis) continue;
        int from = connected(ctx, st, st->root[r], l), seen = 0;
        if (from < 0) return -1;
        for (int j = 0; j < n && !seen; j++) seen = out[j] == l;
        if (from && !seen) out[n++] = l;
      }
    }
  return n;
}

te_tensor *sch_rfactor(sch_schedule *s, te_tensor *t, sch_iter *axis, int factor_axis) {
  if (!s) return NULL;
  tec_ctx *ctx = s->ctx;
  if (!t) {
    if (!tec_ctx_error(ctx)) tec_ctx_set_error(ctx, "rfactor: the tensor is NULL");
    return NULL;
  }
  if (sch_scan_refuse("rfactor", s, t)) return NULL;
  sch_stage *st = NULL;
  int si = -1;
  for (int i = 0; i < s->nstage; i++) /* a multi-output op's stage is its first output's */
    if (s->stages[i]->tensor == (t->nout > 1 ? t->outputs[0] : t)) st = s->stages[i], si = i;
  if (!st || t->op != TE_COMPUTE || !st->body || st->body->kind != IR_REDUCE) {
    tec_ctx_set_error(ctx, "rfactor: '%s' is not a reduction of this schedule; rfactor needs a "
                           "stage whose body is a reduction", t->name);
    return NULL;
  }
  if (st->body->c) {
    tec_ctx_set_error(ctx, "rfactor: '%s' has an init (te_reduce_init); the partial results "
                           "start from the identity, so rfactor would add the init once per "
                           "partial: add it in a consumer instead", t->name);
    return NULL;
  }
  if (t->nout > 1 || st->body->v.i == IR_COMB_USER) {
    int user = st->body->v.i == IR_COMB_USER;
    tec_ctx_set_error(ctx, "rfactor: '%s' is %s; rfactor is built for one-output sum, prod, max "
                           "and min only (the partial results would need %s in the rfactor "
                           "stage)",
                      t->name, user ? "reduced by a user reducer" : "an output of a multi-output op",
                      user ? "the reducer's whole tuple" : "every output");
    return NULL;
  }
  if (sch_check_leaf("rfactor", st, axis)) return NULL;
  if (axis->kind != SCH_ITER_REDUCE) {
    tec_ctx_set_error(ctx, "rfactor: '%s' is a data-parallel loop of stage '%s'; pass one of its "
                           "reduce loops", axis->name, t->name);
    return NULL;
  }
  const sch_iter *md, *mr;
  const sch_relation *mixed = sch_mixed_fuse(st, &md, &mr);
  if (mixed) {
    tec_ctx_set_error(ctx, "rfactor: loop '%s' of stage '%s' fuses data axis '%s' with reduce "
                           "axis '%s'; rfactor factors reduce axes only (rfactor before fusing)",
                      mixed->fused->name, t->name, md->name, mr->name);
    return NULL;
  }
  if (factor_axis < 0 || factor_axis > t->ndim || t->ndim + 1 > 16) {
    tec_ctx_set_error(ctx, "rfactor: factor_axis %d for stage '%s'; it must be in [0, %d]",
                      factor_axis, t->name, t->ndim);
    return NULL;
  }
  const ir_expr *kext = sch_iter_extent(st, axis);
  if (!kext) {
    tec_ctx_set_error(ctx, "rfactor: the extent of loop '%s' of stage '%s' is unknown", axis->name,
                      t->name);
    return NULL;
  }
  /* the other reduce leaves become reduce axes of the new op, in the trace version's order */
  rf_user u = {0};
  u.st = st;
  u.factored = axis;
  u.factor_axis = factor_axis;
  const ir_expr **lv = tec_ctx_alloc(ctx, sizeof *lv * (size_t)(st->nleaf + 1));
  const sch_iter **order = tec_ctx_alloc(ctx, sizeof *order * (size_t)(st->nleaf + 1));
  if (!lv || !order) return NULL;
  int nord = reduce_order(ctx, st, axis, s->trace.version == 1, order);
  if (nord < 0) return NULL;
  u.leaves = order;
  for (int i = 0; i < nord; i++) {
    const sch_iter *l = order[i];
    const ir_expr *e = sch_iter_extent(st, l);
    if (!e) {
      tec_ctx_set_error(ctx, "rfactor: the extent of loop '%s' is unknown", l->name);
      return NULL;
    }
    lv[u.nleaves++] = te_reduce_axis(ctx, l->name, ir_int(ctx, 0), e);
  }
  u.leaf_vars = lv;
  const ir_expr **shape = tec_ctx_alloc(ctx, sizeof *shape * (size_t)(t->ndim + 1));
  const char **names = tec_ctx_alloc(ctx, sizeof *names * (size_t)(t->ndim + 1));
  if (!shape || !names) return NULL;
  for (int i = 0, j = 0; i <= t->ndim; i++) {
    shape[i] = i == factor_axis ? kext : t->shape[j];
    names[i] = i == factor_axis ? axis->name : t->axis[j]->name;
    if (i != factor_axis) j++;
  }
  te_compute_decl d = {0};
  d.name = sch_cache_name(s, t->name, "rf"); /* "C.rf", or "C.rf1" for a second one */
  if (!d.name) return NULL;
  d.ndim = t->ndim + 1;
  d.shape = shape;
  d.body = rf_body;
  d.user = &u;
  d.axis_names = names;
  te_tensor *rf = te_compute(ctx, &d);
  if (!rf) return NULL;
  sch_stage *rs = sch_stage_new(s, rf);
  if (!rs) return NULL;
  /* the original stage now reduces the partials over a fresh axis */
  fin_user fu = {rf, te_reduce_axis(ctx, tec_ctx_printf(ctx, "%s.v", axis->name), ir_int(ctx, 0),
                                    kext),
                 factor_axis, (ir_combiner)st->body->v.i};
  if (!fu.k) return NULL;
  const ir_expr *nb = final_body(ctx, t->axis, &fu);
  if (!nb) return NULL;
  if (tec_grow(ctx, (void **)&s->stages, &s->cap_stage, s->nstage + 1, sizeof *s->stages))
    return NULL;
  memmove(s->stages + si + 1, s->stages + si, sizeof *s->stages * (size_t)(s->nstage - si));
  s->stages[si] = rs;
  s->nstage++;
  st->body = nb;
  const te_tensor **in = tec_ctx_alloc(ctx, sizeof *in);
  sch_iter *kr = tec_ctx_alloc(ctx, sizeof *kr);
  sch_iter **root = tec_ctx_alloc(ctx, sizeof *root * (size_t)(t->ndim + 1));
  if (!in || !kr || !root) return NULL;
  in[0] = rf;
  st->inputs = in;
  st->ninputs = 1;
  kr->var = fu.k;
  kr->name = fu.k->name;
  kr->kind = SCH_ITER_REDUCE;
  kr->dom_min = fu.k->dom_min;
  kr->dom_extent = fu.k->dom_extent;
  kr->stage = st;
  for (int i = 0; i < t->ndim; i++) {
    root[i] = st->root[i];
    root[i]->dead = 0;
    root[i]->for_kind = IR_FOR_SERIAL;
  }
  root[t->ndim] = kr;
  st->root = root;
  st->nroot = t->ndim + 1;
  st->nrel = 0;
  st->nleaf = 0;
  if (tec_grow(ctx, (void **)&st->leaf, &st->cap_leaf, st->nroot, sizeof *st->leaf)) return NULL;
  for (int i = 0; i < st->nroot; i++) st->leaf[st->nleaf++] = root[i];
  if (sch_trace_add(s, SCH_PRIM_RFACTOR,
                    (sch_arg[]){{.tensor = t}, {.iter = axis}, {.i = factor_axis}, {.tensor = rf}}))
    return NULL;
  return rf;
}

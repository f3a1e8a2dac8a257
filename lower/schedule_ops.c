/* schedule_ops.c — turns each stage into a loop nest and places the nests.
 *
 * A stage's leaves become loops, outermost first; its root values come from iter_values.c
 * and the guards of non-dividing splits wrap the body. A reduction
 *   C[i, j] = sum(A[i, k] * B[k, j], axis=[k])
 * becomes an init nest over the data loops that sit inside the first reduce loop, then the
 * update nest:
 *   for (i ...) { for (j ...) C[i, j] = 0f;  for (j ...) for (k ...) C[i, j] = C[i, j] + ... }
 * A data axis fused with a reduce one lives in a reduce loop; the init loops over the range it
 * covers there, outside it (init_store):
 *   for (i.init, 0, 4) C[i.init] = 0f;  for (i.k.fused, 0, 32) C[i.k.fused / 8] = ... + ...
 * A stage attached at loop L of a consumer is realized and produced at the top of L's body
 * (over the region bound.c found); root stages are placed in stage order at the top level,
 * intermediates wrapped in `realize`. Loop kinds and pragmas come from the leaves; a loop
 * marked debug_skip_region is dropped with its body; the body of a loop with prefetches is
 * marked `attr prefetch_scope` for the prefetch pass (prefetch.c). */
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "lower/arith.h"

static const ir_stmt *stage_nest(lower_state *ls, int si);

static int in_args(const lower_state *ls, const te_tensor *t) {
  for (int i = 0; i < ls->nargs; i++)
    if (ls->args[i] == t) return 1;
  return 0;
}

/* realize + produce of stage si around `rest` */
static const ir_stmt *place(lower_state *ls, int si, const ir_stmt *rest,
                            const ir_expr *const *region) {
  sch_stage *st = ls->s->stages[si];
  te_tensor *t = st->tensor;
  const ir_stmt *nest = stage_nest(ls, si);
  if (!nest) return NULL;
  const ir_stmt *body = ir_seq2(ir_produce(t, nest), rest);
  if (in_args(ls, t)) return body;
  const ir_expr **bounds = tec_ctx_alloc(ls->ctx, sizeof *bounds * (size_t)(2 * t->ndim));
  if (!bounds) return NULL;
  for (int i = 0; i < t->ndim; i++) {
    bounds[2 * i] = region ? region[2 * i] : ir_int(ls->ctx, 0);
    bounds[2 * i + 1] = region ? region[2 * i + 1] : t->shape[i];
  }
  return ir_realize(t, t->ndim, bounds, body);
}

/* passes.h; parallel: nested parallel loops and launch points; vectorized: prefetch.c */
const sch_iter *lower_loop_around(const sch_stage *st, int pos, ir_for_kind kind) {
  for (int depth = 0; st && depth < 1000; depth++) {
    for (int i = 0; i <= pos && i < st->nleaf; i++)
      if (st->leaf[i]->for_kind == kind) return st->leaf[i];
    if (st->attach != SCH_ATTACH_SCOPE) return NULL;
    const sch_stage *c = st->attach_stage;
    pos = -1;
    for (int i = 0; i < c->nleaf; i++)
      if (c->leaf[i] == st->attach_iter) pos = i;
    st = c;
  }
  return NULL;
}

/* Wraps body in the loop for leaf `pos` of stage si; attached stages go first in its body. */
static const ir_stmt *make_loop(lower_state *ls, int si, int pos, const ir_stmt *body,
                                int attach) {
  tec_ctx *ctx = ls->ctx;
  sch_stage *st = ls->s->stages[si];
  const sch_iter *it = st->leaf[pos];
  if (attach)
    for (int k = si - 1; k >= 0 && body; k--) {
      sch_stage *p = ls->s->stages[k];
      if (p->attach != SCH_ATTACH_SCOPE || p->attach_iter != it) continue;
      for (int i = 0; i < p->nleaf; i++)
        if (p->leaf[i]->for_kind == IR_FOR_PARALLEL &&
            lower_loop_around(st, pos, IR_FOR_PARALLEL)) {
          tec_ctx_set_error_kind(ctx, TEC_ERR_UNSUPPORTED,
                                 "parallel: loop '%s' of stage '%s' would run inside parallel "
                                 "loops of '%s' (it is computed at '%s'); nested parallel loops "
                                 "are not supported",
                                 p->leaf[i]->name, p->tensor->name, st->tensor->name, it->name);
          return NULL;
        }
      body = place(ls, k, body, ls->region[k]);
    }
  /* the main nest only, not an init: marked for the prefetch pass (prefetch.c) */
  if (attach && it->nprefetch && body) body = ir_attr("prefetch_scope", ir_int(ctx, si), body);
  if (!body) return NULL;
  const lower_range *r = lower_bounds_get(&ls->b, it);
  if (!r) {
    TEC_INTERNAL(ctx, "leaf without a range");
    return NULL;
  }
  if (it->for_kind == IR_FOR_VECTORIZED || it->for_kind == IR_FOR_UNROLLED) {
    if (!ir_is_const_int(arith_simplify(r->extent, NULL), NULL)) {
      const char *what = it->for_kind == IR_FOR_VECTORIZED ? "vectorize" : "unroll";
      tec_ctx_set_error(ctx, "%s: loop '%s' of stage '%s' has extent %s, which is not a "
                             "constant; split it by a constant factor and %s the inner loop",
                        what, it->name, st->tensor->name, ir_expr_str(r->extent), what);
      return NULL;
    }
  }
  for (int p = 0; p < it->npragma; p++) {
    if (strcmp(it->pragma_keys[p], "debug_skip_region") == 0)
      return ir_evaluate(ir_int(ctx, 0)); /* dropped on purpose: output wrong by design */
    /* the pool is entered once, at the marked loop: inside a parallel loop every thread
     * already runs */
    const sch_iter *par = strcmp(it->pragma_keys[p], "parallel_launch_point") == 0
                              ? lower_loop_around(st, pos - 1, IR_FOR_PARALLEL)
                              : NULL;
    if (strcmp(it->pragma_keys[p], "parallel_dynamic") == 0 && it->for_kind != IR_FOR_PARALLEL) {
      tec_ctx_set_error(ctx, "tec_lower '%s': pragma parallel_dynamic on loop '%s' of stage "
                             "'%s': the loop is %s, not parallel; it chooses how a parallel "
                             "loop's iterations are shared out, so call sch_parallel on the loop "
                             "or drop the pragma",
                        ls->fname ? ls->fname : "?", it->name, st->tensor->name,
                        ir_for_kind_name(it->for_kind));
      return NULL;
    }
    if (par) {
      tec_ctx_set_error(ctx, "tec_lower '%s': pragma parallel_launch_point: loop '%s' is inside "
                             "parallel loop '%s', where every thread already runs; put the "
                             "pragma on '%s' or on a loop outside it",
                        ls->fname ? ls->fname : "?", it->name, par->name, par->name);
      return NULL;
    }
  }
  const ir_stmt *loop = ir_for(it->var, ir_int(ctx, 0), r->extent, it->for_kind, body);
  for (int p = it->npragma - 1; p >= 0; p--)
    loop = ir_attr(tec_ctx_printf(ctx, "pragma_%s", it->pragma_keys[p]), it->pragma_values[p],
                   loop);
  return loop;
}

/* body under the guards (data-only guards when data_only) */
static const ir_stmt *guarded(const lower_ivals *iv, const ir_stmt *body, int data_only) {
  const ir_expr *cond = NULL;
  for (int g = 0; g < iv->nguard; g++) {
    if (data_only && iv->g[g].reduce) continue;
    cond = cond ? ir_and(cond, iv->g[g].cond) : iv->g[g].cond;
  }
  return cond ? ir_if(cond, body, NULL) : body;
}

/* The init of a reduction whose data axes are all outside its reduce loops: idx. A data axis
 * fused with a reduce axis (sch_fuse) has a value that uses reduce loops, i = f / K for
 * fused f: the init, outside those loops, runs instead over the range the axis takes while
 * they run (lower_interval, with the reduce loops free), clamped to the axis's own range, in
 * fresh loops `<axis>.init` around it (in *nfresh, *fresh_var, *fresh_ext). Guards that use
 * a reduce loop are dropped: the clamp stands for them. */
static const ir_stmt *init_store(lower_state *ls, const sch_stage *st, const lower_ivals *iv,
                                 const ir_expr *const *idx, const ir_expr *identity,
                                 int *nfresh, const ir_expr **fresh_var,
                                 const ir_expr **fresh_ext) {
  tec_ctx *ctx = ls->ctx;
  te_tensor *t = st->tensor;
  lower_relax rx = {0, NULL, NULL, NULL};
  rx.vars = tec_ctx_alloc(ctx, sizeof *rx.vars * (size_t)(3 * st->nleaf + 1));
  const ir_expr **idx2 = tec_ctx_alloc(ctx, sizeof *idx2 * (size_t)(t->ndim + 1));
  if (!rx.vars || !idx2) return NULL;
  rx.lo = rx.vars + st->nleaf, rx.hi = rx.vars + 2 * st->nleaf;
  for (int i = 0; i < st->nleaf; i++) {
    const lower_range *r = lower_bounds_get(&ls->b, st->leaf[i]);
    if (st->leaf[i]->kind != SCH_ITER_REDUCE || !r) continue;
    rx.vars[rx.n] = st->leaf[i]->var;
    rx.lo[rx.n] = ir_int(ctx, 0);
    rx.hi[rx.n++] = ir_sub(r->extent, ir_int(ctx, 1));
  }
  *nfresh = 0;
  for (int d = 0; d < t->ndim; d++) {
    idx2[d] = idx[d];
    int mixed = 0;
    for (int k = 0; k < rx.n; k++) mixed |= ir_uses_var(idx[d], rx.vars[k]);
    if (!mixed) continue;
    const lower_range *r = lower_bounds_get(&ls->b, st->root[d]);
    const ir_expr *lo, *hi;
    if (!r || !lower_interval(idx[d], &rx, &lo, &hi)) {
      tec_ctx_set_error(ctx, "tec_lower '%s': data axis '%s' of stage '%s' is fused into a "
                             "reduce loop, and the range it takes there (%s) has no bound to "
                             "initialize the reduction over; fuse it with the reduce axis "
                             "before splitting either",
                        ls->fname ? ls->fname : "?", st->root[d]->name, t->name,
                        ir_expr_str(idx[d]));
      return NULL;
    }
    const ir_expr *start = ir_max(lo, r->min);
    const ir_expr *end = ir_min(ir_add(hi, ir_int(ctx, 1)), ir_add(r->min, r->extent));
    fresh_var[*nfresh] = ir_var(ctx, tec_ctx_printf(ctx, "%s.init", st->root[d]->name),
                                TEC_INDEX, IR_VAR_INDEX);
    fresh_ext[*nfresh] = arith_simplify(ir_sub(end, start), NULL);
    idx2[d] = ir_add(fresh_var[*nfresh], start);
    ++*nfresh;
  }
  const ir_stmt *init = ir_provide(t, t->ndim, idx2, identity);
  const ir_expr *cond = NULL;
  for (int g = 0; g < iv->nguard; g++) {
    int uses = 0;
    for (int k = 0; k < rx.n && *nfresh; k++) uses |= ir_uses_var(iv->g[g].cond, rx.vars[k]);
    if (iv->g[g].reduce || uses) continue;
    cond = cond ? ir_and(cond, iv->g[g].cond) : iv->g[g].cond;
  }
  return cond ? ir_if(cond, init, NULL) : init;
}

/* The nest computing stage si (attached producers included). */
static const ir_stmt *stage_nest(lower_state *ls, int si) {
  tec_ctx *ctx = ls->ctx;
  sch_stage *st = ls->s->stages[si];
  lower_ivals iv = {0};
  if (lower_iter_values(ctx, st, &ls->b, &iv)) return NULL;
  te_tensor *t = st->tensor;
  int nr = st->nroot;
  const ir_expr **vars = tec_ctx_alloc(ctx, sizeof *vars * (size_t)nr);
  const ir_expr **vals = tec_ctx_alloc(ctx, sizeof *vals * (size_t)nr);
  if (!vars || !vals) return NULL;
  for (int i = 0; i < nr; i++) {
    vars[i] = st->root[i]->var;
    vals[i] = lower_ivals_get(&iv, st->root[i]);
    if (!vals[i]) {
      TEC_INTERNAL(ctx, "root axis without a value");
      return NULL;
    }
  }
  const ir_expr *const *idx = vals; /* the first ndim values are the data axes */
  const ir_expr *body = ls->body[si];
  /* an attached stage's loops may run past its tensor's end: guard those iterations */
  for (int d = 0; st->attach == SCH_ATTACH_SCOPE && ls->clamp[si] && d < t->ndim; d++)
    if (ls->clamp[si][d]) {
      struct lower_guard g = {ir_lt(vals[d], ls->clamp[si][d]), 0};
      if (tec_grow(ctx, (void **)&iv.g, &iv.gcap, iv.nguard + 1, sizeof *iv.g)) return NULL;
      iv.g[iv.nguard++] = g;
    }
  if (body->kind != IR_REDUCE) {
    const ir_stmt *s = ir_provide(t, t->ndim, idx, ir_substitute(body, nr, vars, vals));
    s = guarded(&iv, s, 0);
    for (int i = st->nleaf - 1; i >= 0 && s; i--) s = make_loop(ls, si, i, s, 1);
    return s;
  }
  /* reduction: init and update */
  ir_combiner comb = (ir_combiner)body->v.i;
  const ir_expr *src = ir_substitute(body->a, nr, vars, vals);
  const ir_expr *cond = body->b ? ir_substitute(body->b, nr, vars, vals) : NULL;
  const ir_expr *cur = ir_read(ctx, t, t->ndim, idx);
  const ir_stmt *update = ir_provide(t, t->ndim, idx, ir_combine(comb, cur, src));
  if (cond) update = ir_if(cond, update, NULL);
  update = guarded(&iv, update, 0);
  const ir_expr **fresh_var = tec_ctx_alloc(ctx, sizeof *fresh_var * (size_t)(2 * t->ndim + 1));
  if (!fresh_var) return NULL;
  const ir_expr **fresh_ext = fresh_var + t->ndim;
  int nfresh = 0;
  const ir_stmt *init = init_store(ls, st, &iv, idx, ir_combiner_identity(ctx, comb, t->type),
                                   &nfresh, fresh_var, fresh_ext);
  if (!init) return NULL;
  int first_red = st->nleaf;
  for (int i = 0; i < st->nleaf; i++)
    if (st->leaf[i]->kind == SCH_ITER_REDUCE) {
      first_red = i;
      break;
    }
  for (int i = st->nleaf - 1; i >= first_red && update; i--) {
    update = make_loop(ls, si, i, update, 1);
    if (st->leaf[i]->kind == SCH_ITER_DATA) init = make_loop(ls, si, i, init, 0);
  }
  for (int k = nfresh - 1; k >= 0 && init; k--)
    init = ir_for(fresh_var[k], ir_int(ctx, 0), fresh_ext[k], IR_FOR_SERIAL, init);
  /* a failed nest is NULL, and ir_seq2 would drop it silently: stop with its error */
  if (!init || !update) return NULL;
  const ir_stmt *s = ir_seq2(init, update);
  for (int i = first_red - 1; i >= 0 && s; i--) s = make_loop(ls, si, i, s, 1);
  return s;
}

const ir_stmt *lower_schedule_ops(lower_state *ls) {
  sch_schedule *s = ls->s;
  const ir_stmt *body = NULL;
  for (int si = s->nstage - 1; si >= 0; si--) {
    sch_stage *st = s->stages[si];
    if (st->tensor->op != TE_COMPUTE || st->attach != SCH_ATTACH_ROOT) continue;
    if (ls->skip && ls->skip[si]) continue; /* computed by the other half of a split */
    body = place(ls, si, body, NULL);
    if (!body) return NULL;
  }
  return body;
}

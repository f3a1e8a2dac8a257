/* schedule_ops.c — turns each stage into a loop nest and places the nests.
 *
 * A stage's leaves become loops, outermost first; its root values come from iter_values.c
 * and the guards of non-dividing splits wrap the body. A reduction
 *   C[i, j] = sum(A[i, k] * B[k, j], axis=[k])
 * becomes an init nest over the data loops that sit inside the first reduce loop, then the
 * update nest:
 *   for (i ...) { for (j ...) C[i, j] = 0f;  for (j ...) for (k ...) C[i, j] = C[i, j] + ... }
 * A data axis fused with a reduce one lives in a reduce loop; the init loops over that axis
 * itself, outside it (init_store):
 *   for (i.init, 0, 4) C[i.init] = 0f;  for (i.k.fused, 0, 32) C[i.k.fused / 8] = ... + ...
 * A stage attached at loop L of a consumer is realized and produced at the top of L's body
 * (over the region bound.c found), or only produced there when its buffer is stored at an
 * outer loop (sch_store_at: the realize goes in that loop's body, store_at.c); a multi-output
 * op's nest writes all its outputs (user
 * reducers: reduce_update); two stages computed with each other (sch_compute_with) are
 * placed as one nest (compute_with.c); root stages are placed in stage order at the top level,
 * intermediates wrapped in `realize`. Loop kinds and pragmas come from the leaves; a loop
 * marked debug_skip_region is dropped with its body; the body of a loop with prefetches is
 * marked `attr prefetch_scope` for the prefetch pass (prefetch.c). The schedule is legal by
 * now (legality.c checked it): this pass only builds. */
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"
#include "schedule/internal.h"
#include "schedule/pragma.h"

static const ir_stmt *stage_nest(lower_state *ls, int si);

static int in_args(const lower_state *ls, const te_tensor *t) {
  for (int i = 0; i < ls->nargs; i++)
    if (ls->args[i] == t) return 1;
  return 0;
}

/* The extent st's buffer needs along dimension d: a ROUND_UP split of that axis (schedule.h)
 * rounds it up to a multiple of its factor; NULL when there is none. */
static const ir_expr *rounded_up(const sch_stage *st, int d, const ir_expr *ext) {
  for (int r = 0; r < st->nrel; r++) {
    const sch_relation *rel = &st->rel[r];
    if (rel->kind != SCH_REL_SPLIT || rel->tail != SCH_TAIL_ROUND_UP || rel->parent != st->root[d])
      continue;
    const ir_expr *outer, *f; /* the inner extent: the factor, or the extent when clamped */
    sch_rel_split_extents(rel, ext, &outer, &f);
    const ir_expr *n = sch_ceildiv(ext, f);
    int64_t nv, fv, pv;
    return ir_is_const_int(n, &nv) && ir_is_const_int(f, &fv) && !__builtin_mul_overflow(nv, fv, &pv)
               ? ir_int(ext->ctx, pv)
               : ir_mul(n, f);
  }
  return NULL;
}

/* the nest computing stage si, then `rest`: its own nest, or for the later of a pair
 * computed with each other (with >= 0, before si: compute_with.c) the fused nest of both */
static const ir_stmt *nest_then(lower_state *ls, int si, int with, const ir_stmt *rest) {
  const ir_stmt *nest = stage_nest(ls, si);
  if (!nest) return NULL;
  if (with < 0) return ir_seq2(ir_produce(ls->s->stages[si]->tensor, nest), rest);
  const ir_stmt *other = stage_nest(ls, with);
  const ir_stmt *both = other ? lower_with_fuse(ls, with, si, other, nest) : NULL;
  return both ? ir_seq2(both, rest) : NULL;
}

/* realize + produce of stage si around `rest` */
static const ir_stmt *place(lower_state *ls, int si, const ir_stmt *rest,
                            const ir_expr *const *region) {
  sch_stage *st = ls->s->stages[si];
  te_tensor *t = st->tensor;
  /* compute_with (compute_with.c): the earlier of the pair has only its buffer here, the
   * later one the fused nest of both */
  int with = lower_with_partner(ls, si);
  if (with >= 0 && lower_with_check(ls, si, with)) return NULL;
  const ir_stmt *body = with < si ? nest_then(ls, si, with, rest) : rest;
  if (with < si && !body) return NULL;
  int nv = t->nout > 1 ? t->nout : 1;
  for (int k = 0; k < nv; k++) {
    te_tensor *o = nv > 1 ? t->outputs[k] : t;
    if (!in_args(ls, o)) continue;
    for (int i = 0; i < t->ndim; i++)
      if (rounded_up(st, i, t->shape[i])) {
        tec_ctx_set_error(ls->ctx, "tec_lower '%s': axis '%s' of stage '%s' is split with tail "
                                   "strategy round_up, which writes past the tensor's end, but "
                                   "'%s' is an argument of the function (the caller's buffer, "
                                   "which tec cannot round up); use guard_with_if, predicate or "
                                   "shift_inwards, or do not pass '%s'",
                          ls->fname ? ls->fname : "?", st->root[i]->name, t->name, o->name,
                          o->name);
        return NULL;
      }
  }
  /* a store_at buffer lives at an outer loop (make_loop, store_at.c) */
  if (ls->store && (ls->store[si].pos >= 0 || ls->store[si].root)) return body;
  const ir_expr **bounds = tec_ctx_alloc(ls->ctx, sizeof *bounds * (size_t)(2 * t->ndim + 1));
  if (!bounds) return NULL;
  for (int i = 0; i < t->ndim; i++) {
    bounds[2 * i] = region ? region[2 * i] : ir_int(ls->ctx, 0);
    bounds[2 * i + 1] = region ? region[2 * i + 1] : t->shape[i];
    const ir_expr *up = rounded_up(st, i, bounds[2 * i + 1]);
    if (up) bounds[2 * i + 1] = up;
  }
  /* every output of a multi-output op that is not an argument lives around the nest */
  for (int k = nv - 1; k >= 0 && body; k--) {
    te_tensor *o = nv > 1 ? t->outputs[k] : t;
    if (!in_args(ls, o)) body = ir_realize(o, o->ndim, bounds, body);
  }
  return body;
}

/* Wraps body in the loop for leaf `pos` of stage si; attached stages go first in its body. */
static const ir_stmt *make_loop(lower_state *ls, int si, int pos, const ir_stmt *body,
                                int attach) {
  tec_ctx *ctx = ls->ctx;
  sch_stage *st = ls->s->stages[si];
  const sch_iter *it = st->leaf[pos];
  /* warm-up (store_at.c): the loop starts early for the stages computed here; the rest of
   * its body waits for the loop's own first iteration */
  int64_t warm = attach ? lower_store_warm_of(ls, si, it) : 0;
  if (warm && body) body = ir_if(ir_ge(it->var, ir_int(ctx, 0)), body, NULL);
  if (attach)
    for (int k = si - 1; k >= 0 && body; k--) {
      const sch_stage *p = ls->s->stages[k];
      if (ls->attach[k] != SCH_ATTACH_SCOPE || p->attach_iter != it) continue;
      body = place(ls, k, body, ls->region[k]);
    }
  /* buffers stored at this loop (store_at) hold its body: the stages computed inside it */
  if (attach && ls->store)
    for (int k = si - 1; k >= 0 && body; k--)
      if (ls->attach[k] == SCH_ATTACH_SCOPE && ls->store[k].pos == pos &&
          ls->s->stages[k]->attach_stage == st)
        body = lower_store_realize(ls, k, body);
  /* the main nest only, not an init: marked for the prefetch pass (prefetch.c) */
  if (attach && it->nprefetch && body) body = ir_attr("prefetch_scope", ir_int(ctx, si), body);
  if (!body) return NULL;
  const lower_range *r = lower_bounds_get(&ls->b, it);
  if (!r) {
    TEC_INTERNAL(ctx, "leaf without a range");
    return NULL;
  }
  for (int p = 0; p < it->npragma; p++)
    if (sch_pragma_id_of(it->pragma_keys[p]) == SCH_PRAGMA_DEBUG_SKIP_REGION)
      return ir_evaluate(ir_int(ctx, 0)); /* dropped on purpose: output wrong by design */
  const ir_stmt *loop =
      warm ? ir_for(it->var, ir_int(ctx, -warm), ir_add(r->extent, ir_int(ctx, warm)),
                    it->for_kind, body)
           : ir_for(it->var, ir_int(ctx, 0), r->extent, it->for_kind, body);
  for (int p = it->npragma - 1; p >= 0; p--) /* stream_store: the value names the stage */
    loop = ir_attr(sch_pragma_attr_name(ctx, it->pragma_keys[p]),
                   sch_pragma_id_of(it->pragma_keys[p]) == SCH_PRAGMA_STREAM_STORE
                       ? ir_int(ctx, si)
                       : it->pragma_values[p],
                   loop);
  return loop;
}

/* body under the guards (data-only guards when data_only), as their tail strategies say
 * (schedule.h): an if around the body; PREDICATE: an attr that guard_loads.c turns into
 * predicates on every load and store; ROUND_UP: on every load (the stores stay plain: the
 * buffer is rounded up, place above) */
static const ir_stmt *guarded(const lower_ivals *iv, const ir_stmt *body, int data_only) {
  const ir_expr *cond = NULL, *pred = NULL, *loads = NULL;
  for (int g = 0; g < iv->nguard; g++) {
    if (data_only && iv->g[g].reduce) continue;
    const ir_expr *c = iv->g[g].cond, **to = &cond;
    if (iv->g[g].tail == SCH_TAIL_PREDICATE) to = &pred;
    if (iv->g[g].tail == SCH_TAIL_ROUND_UP) to = &loads;
    *to = *to ? ir_and(*to, c) : c;
  }
  if (loads) body = ir_attr("tail_predicate_loads", loads, body);
  if (pred) body = ir_attr("tail_predicate", pred, body);
  return cond ? ir_if(cond, body, NULL) : body;
}

/* Where nv reductions of stage st start, one store per output at idx: the identity, or the
 * init (te_reduce_init) over st's data axes at idx. */
static const ir_stmt *reduce_init(tec_ctx *ctx, const sch_stage *st, int nv,
                                  te_tensor *const *outs, const ir_expr *const *bodies,
                                  const ir_expr *const *idx) {
  const ir_stmt **ps = tec_ctx_alloc(ctx, sizeof *ps * (size_t)nv);
  const ir_expr **dv = tec_ctx_alloc(ctx, sizeof *dv * (size_t)(outs[0]->ndim + 1));
  if (!ps || !dv) return NULL;
  for (int d = 0; d < outs[0]->ndim; d++) dv[d] = st->root[d]->var;
  for (int k = 0; k < nv; k++) {
    const ir_expr *b = bodies[k];
    const ir_expr *id = b->c ? ir_substitute(b->c, outs[0]->ndim, dv, idx)
                        : b->v.i == IR_COMB_USER
                            ? b->reducer->identity[b->value_index]
                            : ir_combiner_identity(ctx, (ir_combiner)b->v.i, outs[k]->type);
    if (!id || !(ps[k] = ir_provide(outs[k], outs[k]->ndim, idx, id))) return NULL;
  }
  return ir_seq(ctx, nv, ps);
}

/* One step of nv reductions. Built-in combiners each update their own output; the values of a
 * user reducer combine together, all read before any is written:
 *   let x0 = O0[i], y0 = src0, ..., n0 = result0(x, y), ... in O0[i] = n0; O1[i] = n1 */
static const ir_stmt *reduce_update(tec_ctx *ctx, int nv, te_tensor *const *outs,
                                    const ir_expr *const *bodies, const ir_expr *const *idx,
                                    int nr, const ir_expr *const *vars,
                                    const ir_expr *const *vals) {
  const ir_stmt **ps = tec_ctx_alloc(ctx, sizeof *ps * (size_t)nv);
  const ir_expr **cur = tec_ctx_alloc(ctx, sizeof *cur * (size_t)nv);
  const ir_expr **src = tec_ctx_alloc(ctx, sizeof *src * (size_t)nv);
  if (!ps || !cur || !src) return NULL;
  for (int k = 0; k < nv; k++) {
    cur[k] = ir_read(ctx, outs[k], outs[k]->ndim, idx);
    src[k] = ir_substitute(bodies[k]->a, nr, vars, vals);
    if (!cur[k] || !src[k]) return NULL;
  }
  const te_reducer *r = bodies[0]->v.i == IR_COMB_USER ? bodies[0]->reducer : NULL;
  if (!r) {
    for (int k = 0; k < nv; k++)
      if (!(ps[k] = ir_provide(outs[k], outs[k]->ndim, idx,
                               ir_combine((ir_combiner)bodies[k]->v.i, cur[k], src[k]))))
        return NULL;
    return ir_seq(ctx, nv, ps);
  }
  /* fresh variables per nest: the reducer's own lhs/rhs are shared by every use */
  int k2 = 2 * nv;
  const ir_expr **from = tec_ctx_alloc(ctx, sizeof *from * (size_t)k2);
  const ir_expr **to = tec_ctx_alloc(ctx, sizeof *to * (size_t)k2);
  const ir_expr **nw = tec_ctx_alloc(ctx, sizeof *nw * (size_t)nv);
  if (!from || !to || !nw) return NULL;
  for (int k = 0; k < nv; k++) {
    from[k] = r->lhs[k];
    from[nv + k] = r->rhs[k];
    to[k] = ir_var(ctx, r->lhs[k]->name, r->types[k], IR_VAR_LET);
    to[nv + k] = ir_var(ctx, r->rhs[k]->name, r->types[k], IR_VAR_LET);
    nw[k] = ir_var(ctx, tec_ctx_printf(ctx, "%s_new%d", r->name, k), r->types[k], IR_VAR_LET);
    if (!to[k] || !to[nv + k] || !nw[k]) return NULL;
    if (!(ps[k] = ir_provide(outs[k], outs[k]->ndim, idx, nw[k]))) return NULL;
  }
  const ir_stmt *s = ir_seq(ctx, nv, ps);
  for (int k = nv - 1; k >= 0 && s; k--)
    s = ir_let_stmt(nw[k], ir_substitute(r->result[k], k2, from, to), s);
  for (int k = nv - 1; k >= 0 && s; k--) s = ir_let_stmt(to[nv + k], src[k], s);
  for (int k = nv - 1; k >= 0 && s; k--) s = ir_let_stmt(to[k], cur[k], s);
  return s;
}

/* The tail guards an attached stage's loops need where they run past its tensor's end
 * (vals: the values of its data axes), added to iv. */
static int clamp_guards(lower_state *ls, int si, const ir_expr *const *vals, lower_ivals *iv) {
  const te_tensor *t = ls->s->stages[si]->tensor;
  for (int d = 0; ls->attach[si] == SCH_ATTACH_SCOPE && ls->clamp[si] && d < t->ndim; d++)
    if (ls->clamp[si][d]) {
      sch_relguard g = {ir_lt(vals[d], ls->clamp[si][d]), 0, SCH_TAIL_GUARD_WITH_IF};
      if (tec_grow(ls->ctx, (void **)&iv->g, &iv->gcap, iv->nguard + 1, sizeof *iv->g)) return -1;
      iv->g[iv->nguard++] = g;
    }
  return 0;
}

/* The init of a reduction, to run before its outermost reduce loop. When every data axis is
 * outside the reduce loops it stores at idx under the data guards. A data axis fused with a
 * reduce axis (sch_fuse) has its value in a reduce loop: the init then takes its values from
 * lower_init_values (iter_values.c), which loops over the fused data axes themselves in fresh
 * loops `<axis>.init` (in *nfresh, *fresh_var, *fresh_ext), so that it writes exactly the
 * elements the reduce loops go on to update. */
static const ir_stmt *init_store(lower_state *ls, int si, const lower_ivals *iv,
                                 const ir_expr *const *idx, int nv, te_tensor *const *outs,
                                 const ir_expr *const *bodies, int *nfresh,
                                 const ir_expr ***fresh_var, const ir_expr ***fresh_ext) {
  tec_ctx *ctx = ls->ctx;
  const sch_stage *st = ls->s->stages[si];
  const sch_iter *md, *mr;
  *nfresh = 0;
  if (!sch_mixed_fuse(st, &md, &mr)) {
    const ir_stmt *init = reduce_init(ctx, st, nv, outs, bodies, idx);
    return init ? guarded(iv, init, 1) : NULL;
  }
  lower_ivals w = {0};
  if (lower_init_values(ctx, st, &ls->b, &w, nfresh, fresh_var, fresh_ext)) return NULL;
  const te_tensor *t = st->tensor;
  const ir_expr **idx2 = tec_ctx_alloc(ctx, sizeof *idx2 * (size_t)(t->ndim + 1));
  if (!idx2) return NULL;
  for (int d = 0; d < t->ndim; d++)
    if (!(idx2[d] = lower_ivals_get(&w, st->root[d]))) {
      TEC_INTERNAL(ctx, "data axis without a value in the init");
      return NULL;
    }
  if (clamp_guards(ls, si, idx2, &w)) return NULL;
  const ir_stmt *init = reduce_init(ctx, st, nv, outs, bodies, idx2);
  return init ? guarded(&w, init, 1) : NULL;
}

/* The nest computing stage si (attached producers included). */
static const ir_stmt *stage_nest(lower_state *ls, int si) {
  tec_ctx *ctx = ls->ctx;
  sch_stage *st = ls->s->stages[si];
  if (st->tensor->ext) return lower_extern_nest(ls, si); /* a call, no loops */
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
  if (clamp_guards(ls, si, vals, &iv)) return NULL;
  /* a multi-output op writes each of its outputs in the one nest */
  int nv = t->nout > 1 ? t->nout : 1;
  te_tensor *const *outs = nv > 1 ? t->outputs : &t;
  const ir_expr **bodies = tec_ctx_alloc(ctx, sizeof *bodies * (size_t)nv);
  if (!bodies) return NULL;
  bodies[0] = body;
  for (int k = 1; k < nv; k++)
    if (!(bodies[k] = lower_inline_body(ls, t->outputs[k]->body))) return NULL;
  if (body->kind != IR_REDUCE) {
    const ir_stmt **ps = tec_ctx_alloc(ctx, sizeof *ps * (size_t)nv);
    if (!ps) return NULL;
    for (int k = 0; k < nv; k++)
      if (!(ps[k] = ir_provide(outs[k], t->ndim, idx, ir_substitute(bodies[k], nr, vars, vals))))
        return NULL;
    const ir_stmt *s = guarded(&iv, ir_seq(ctx, nv, ps), 0);
    for (int i = st->nleaf - 1; i >= 0 && s; i--) s = make_loop(ls, si, i, s, 1);
    return s;
  }
  /* reduction: init and update */
  const ir_expr *cond = body->b ? ir_substitute(body->b, nr, vars, vals) : NULL;
  const ir_stmt *update = reduce_update(ctx, nv, outs, bodies, idx, nr, vars, vals);
  const ir_stmt *init = NULL;
  if (!update) return NULL;
  if (cond) update = ir_if(cond, update, NULL);
  update = guarded(&iv, update, 0);
  const ir_expr **fresh_var = NULL, **fresh_ext = NULL;
  int nfresh = 0;
  init = init_store(ls, si, &iv, idx, nv, outs, bodies, &nfresh, &fresh_var, &fresh_ext);
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
  const sch_schedule *s = ls->s;
  const ir_stmt *body = NULL;
  if (lower_with_table(ls)) return NULL;
  for (int si = s->nstage - 1; si >= 0; si--) {
    const sch_stage *st = s->stages[si];
    if (st->tensor->op != TE_COMPUTE || ls->attach[si] != SCH_ATTACH_ROOT) continue;
    if (ls->skip && ls->skip[si]) continue; /* computed by the other half of a split */
    body = place(ls, si, body, NULL);
    if (!body) return NULL;
  }
  /* buffers stored at the top level (store_root) hold everything */
  for (int si = s->nstage - 1; si >= 0 && body && ls->store; si--)
    if (ls->attach[si] == SCH_ATTACH_SCOPE && ls->store[si].root && !(ls->skip && ls->skip[si]))
      body = lower_store_realize(ls, si, body);
  return body;
}

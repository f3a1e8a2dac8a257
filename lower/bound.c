/* bound.c — bound inference: the range of every iteration variable, and the region of its
 * tensor that an attached stage must compute.
 *
 * A stage at root covers its op's declared domain. A stage attached at loop L of consumer C
 * covers what C's iterations inside L read of it: the consumer's root values are written in
 * terms of its leaf loops (iter_values.c); loops outside and at L are fixed, loops inside L
 * range over their extents, and each index of each read is bounded by the symbolic interval
 * analysis (arith_interval, arith/arith_interval.c: the loops inside L relaxed, the env
 * holding every loop's range):
 *   C[i] = P[i.outer*8 + i.inner - 1] + P[i.outer*8 + i.inner + 1], P at i.outer
 *     -> P region: [i.outer*8 - 1, i.outer*8 + 8], clamped to P's domain
 * Consumers are processed before producers (reverse stage order). Then ranges flow through
 * each stage's relations (the split rule is the relation engine's, schedule/relation.c):
 *   split(p, factor f):  outer in [0, ceil(ext(p) / f)), inner in [0, f)
 *   split(p, nparts n):  outer in [0, n), inner in [0, ceil(ext(p) / n))
 *   fuse(o, i):          fused in [0, ext(o) * ext(i))
 * (Division and modulo by a fused loop's inner extent are monotone or stay in one period
 * there, so a consumer tile of a fused-then-split loop needs one or two rows of its
 * producer, not all of them.) */
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"
#include "schedule/internal.h"

static int put(tec_ctx *ctx, lower_bounds *b, const sch_iter *it, const ir_expr *min,
               const ir_expr *extent, const arith_env *env) {
  if (!min || !extent) return -1;
  if (tec_grow(ctx, (void **)&b->r, &b->cap, b->n + 1, sizeof *b->r)) return -1;
  b->r[b->n++] = (lower_range){it, arith_simplify(min, env), arith_simplify(extent, env)};
  return 0;
}

const lower_range *lower_bounds_get(const lower_bounds *b, const sch_iter *it) {
  for (int i = b->n - 1; i >= 0; i--)
    if (b->r[i].iter == it) return &b->r[i];
  return NULL;
}

typedef arith_relax relax;

/* ---- collecting reads of one tensor ---- */
typedef lower_reads reads;

static void find_read(ir_visitor *v, const ir_expr *e) {
  reads *rd = v->user;
  if (e->kind == IR_READ && e->tensor == rd->t &&
      !tec_grow(rd->ctx, (void **)&rd->r, &rd->cap, rd->n + 1, sizeof *rd->r))
    rd->r[rd->n++] = e;
  ir_visit_expr_default(v, e);
}

int lower_collect_reads(lower_reads *rd, const ir_expr *e, const ir_stmt *s) {
  ir_visitor v;
  ir_visitor_init(&v, rd);
  v.expr[IR_READ] = find_read;
  ir_visit_expr(&v, e);
  ir_visit_stmt(&v, s);
  return rd->n;
}

/* The reads of rd->t in stage si's body: every output's, for a multi-output op (te/multi.c). */
static int stage_reads(lower_state *ls, int si, reads *rd) {
  const te_tensor *t = ls->s->stages[si]->tensor;
  lower_collect_reads(rd, ls->body[si], NULL);
  for (int k = 1; k < t->nout; k++)
    lower_collect_reads(rd, lower_inline_body(ls, t->outputs[k]->body), NULL);
  return rd->n;
}

/* The box of t that reader stage ri reads in one iteration of loop pos of c (ri is c, or a
 * stage computed inside c at or within that loop): per dimension [lo[d], hi[d]], or NULL in
 * lo[d] when a read's index has no bound. -1 with an error when ri is not inside the loop. */
static int reader_box(lower_state *ls, int pi, sch_stage *c, int pos, int ri, arith_env *env,
                      const ir_expr **lo, const ir_expr **hi) {
  tec_ctx *ctx = ls->ctx;
  sch_stage *p = ls->s->stages[pi], *rs = ls->s->stages[ri];
  te_tensor *t = p->tensor;
  reads rd = {t, 0, 0, NULL, ctx};
  stage_reads(ls, ri, &rd);
  /* the chain from the reader up to c: every loop in it ranges freely */
  sch_stage *chain[64];
  int nchain = 0;
  for (sch_stage *x = rs; x != c; x = x->attach_stage) {
    /* (legality.c: every reader is computed inside the loop) */
    if (lower_attach_of(ls, x) != SCH_ATTACH_SCOPE || nchain >= 64)
      return TEC_INTERNAL(ctx, "a reader outside its producer's attach loop");
    chain[nchain++] = x;
  }
  lower_ivals iv = {0};
  if (lower_iter_values(ctx, rs, &ls->b, &iv)) return -1;
  int nrel = c->nleaf;
  for (int k = 0; k < nchain; k++) nrel += chain[k]->nleaf;
  relax rx = {0, NULL, NULL, NULL};
  rx.vars = tec_ctx_alloc(ctx, sizeof *rx.vars * (size_t)(nrel + 1));
  rx.lo = tec_ctx_alloc(ctx, sizeof *rx.lo * (size_t)(nrel + 1));
  rx.hi = tec_ctx_alloc(ctx, sizeof *rx.hi * (size_t)(nrel + 1));
  if (!rx.vars || !rx.lo || !rx.hi) return -1;
  int depth0 = arith_env_depth(env);
  for (int k = -1; k < nchain; k++) {
    const sch_stage *x = k < 0 ? c : chain[k];
    for (int i = 0; i < x->nleaf; i++) {
      const lower_range *r = lower_bounds_get(&ls->b, x->leaf[i]);
      if (!r) return TEC_INTERNAL(ctx, "reader leaf without a range");
      arith_env_push_loop(env, x->leaf[i]->var, ir_int(ctx, 0), r->extent);
      if (k >= 0 || i > pos) { /* loops run from 0 (iter_values.c) */
        rx.vars[rx.n] = x->leaf[i]->var;
        rx.lo[rx.n] = ir_int(ctx, 0);
        rx.hi[rx.n] = ir_sub(r->extent, ir_int(ctx, 1));
        rx.n++;
      }
    }
  }
  if (rs->tensor->ext) { /* an extern stage reads what its region function says */
    int rc = lower_extern_box(ls, ri, t, &rx, env, lo, hi);
    arith_env_pop(env, arith_env_depth(env) - depth0);
    return rc;
  }
  /* root values of the reader, substituted into its reads of t */
  const ir_expr **rv = tec_ctx_alloc(ctx, sizeof *rv * (size_t)rs->nroot);
  const ir_expr **rvar = tec_ctx_alloc(ctx, sizeof *rvar * (size_t)rs->nroot);
  if (!rv || !rvar) return -1;
  for (int i = 0; i < rs->nroot; i++) {
    rvar[i] = rs->root[i]->var;
    rv[i] = lower_ivals_get(&iv, rs->root[i]);
    if (!rv[i]) return TEC_INTERNAL(ctx, "reader root without a value");
  }
  for (int d = 0; d < t->ndim; d++) {
    lo[d] = hi[d] = NULL;
    for (int k = 0; k < rd.n; k++) {
      const ir_expr *idx = ir_substitute(rd.r[k]->args[d], rs->nroot, rvar, rv);
      const ir_expr *xlo, *xhi;
      if (!arith_interval(arith_simplify(idx, env), &rx, env, &xlo, &xhi)) {
        lo[d] = hi[d] = NULL;
        break;
      }
      lo[d] = lo[d] ? ir_min(lo[d], xlo) : xlo;
      hi[d] = hi[d] ? ir_max(hi[d], xhi) : xhi;
    }
  }
  arith_env_pop(env, arith_env_depth(env) - depth0);
  return 0;
}

/* The union of what every reader of producer pi reads in one iteration of loop pos of c
 * (c itself, and stages computed inside c at or within that loop): per dimension [lo, hi], or
 * NULL in lo[d] when some read's index has no bound there. */
static int readers_box(lower_state *ls, int pi, sch_stage *c, int pos, arith_env *env,
                       const ir_expr **lo, const ir_expr **hi) {
  tec_ctx *ctx = ls->ctx;
  te_tensor *t = ls->s->stages[pi]->tensor;
  const ir_expr **rlo = tec_ctx_alloc(ctx, sizeof *rlo * (size_t)(2 * t->ndim));
  unsigned char *unknown = tec_ctx_alloc(ctx, (size_t)t->ndim);
  if (!rlo || !unknown) return -1;
  const ir_expr **rhi = rlo + t->ndim;
  int nreaders = 0;
  for (int j = pi + 1; j < ls->s->nstage; j++) {
    sch_stage *r = ls->s->stages[j];
    if (r->attach == SCH_ATTACH_INLINE || !ls->body[j]) continue; /* (never overridden) */
    reads probe = {t, 0, 0, NULL, ctx};
    if (!stage_reads(ls, j, &probe)) continue;
    if (reader_box(ls, pi, c, pos, j, env, rlo, rhi)) return -1;
    for (int d = 0; d < t->ndim; d++) {
      if (!rlo[d]) unknown[d] = 1;
      if (unknown[d]) continue;
      lo[d] = nreaders ? ir_min(lo[d], rlo[d]) : rlo[d];
      hi[d] = nreaders ? ir_max(hi[d], rhi[d]) : rhi[d];
    }
    nreaders++;
  }
  if (!nreaders) return TEC_INTERNAL(ctx, "attached stage without a reader");
  for (int d = 0; d < t->ndim; d++)
    if (unknown[d]) lo[d] = hi[d] = NULL;
  return 0;
}

/* Region of producer p computed at loop `at` of its consumer c: the union of what every
 * reader reads in one iteration of `at` (c itself, and stages computed inside c at or within
 * `at`, such as a cache_write accumulator attached to c's tile loop, or another reader of p
 * attached there too). Fills the root ranges of p's data axes and ls->region[pi]. */
static int attach_region(lower_state *ls, int pi, arith_env *env) {
  tec_ctx *ctx = ls->ctx;
  sch_stage *p = ls->s->stages[pi], *c = p->attach_stage;
  te_tensor *t = p->tensor;
  int ci = sch_stage_index(ls->s, c);
  if (ci < 0 || ci <= pi) return TEC_INTERNAL(ctx, "consumer stage after its producer");
  int pos = -1;
  for (int i = 0; i < c->nleaf; i++)
    if (c->leaf[i] == p->attach_iter) pos = i;
  /* (legality.c: the consumer keeps its loops, the loop is one of them) */
  if (pos < 0 || lower_attach_of(ls, c) == SCH_ATTACH_INLINE)
    return TEC_INTERNAL(ctx, "an attach loop that is not a loop of its consumer");
  const ir_expr **lo = tec_ctx_alloc(ctx, sizeof *lo * (size_t)(8 * t->ndim));
  if (!lo) return -1;
  const ir_expr **hi = lo + t->ndim, **slo = lo + 2 * t->ndim, **shi = lo + 3 * t->ndim;
  const ir_expr **cmin = lo + 4 * t->ndim, **wend = lo + 5 * t->ndim;
  const ir_expr **rlo = lo + 6 * t->ndim, **rhi = lo + 7 * t->ndim;
  /* a reader that warms up (store_at.c) computes only its new rows per iteration: the box
   * is what those read; the store box what its whole range over the store loop reads */
  int nt = lower_store_push_warm(ls, 0, p->attach_iter);
  if (nt < 0 || readers_box(ls, pi, c, pos, env, lo, hi)) return -1;
  ls->b.n -= nt;
  /* store_at: the buffer covers what the readers read over the loops inside the store loop */
  int spos = lower_store_pos(ls, pi, pos);
  if (spos >= -1) {
    nt = lower_store_push_warm(ls, 1, NULL);
    if (nt < 0 || readers_box(ls, pi, c, spos, env, slo, shi)) return -1;
    /* one run of the compute loop (the loops outside it fixed): where a warm-up starts
     * (only warm_plan reads it) */
    if (ls->no_warm[pi])
      rlo = rhi = NULL;
    else if (spos == pos - 1)
      rlo = slo, rhi = shi;
    else if (readers_box(ls, pi, c, pos - 1, env, rlo, rhi))
      return -1;
    ls->b.n -= nt;
  }
  const ir_expr **reg = tec_ctx_alloc(ctx, sizeof *reg * (size_t)(2 * t->ndim));
  ls->clamp[pi] = tec_ctx_alloc(ctx, sizeof *ls->clamp[pi] * (size_t)t->ndim);
  if (!reg || !ls->clamp[pi]) return -1;
  int depth0 = arith_env_depth(env);
  for (int i = 0; i <= pos; i++) { /* the loops around: fixed, bounded by their ranges */
    const lower_range *r = lower_bounds_get(&ls->b, c->leaf[i]);
    if (!r) return TEC_INTERNAL(ctx, "consumer leaf without a range");
    arith_env_push_loop(env, c->leaf[i]->var, ir_int(ctx, 0), r->extent);
  }
  for (int d = 0; d < t->ndim; d++) {
    const ir_expr *zero = ir_int(ctx, 0), *shape = t->shape[d];
    const ir_expr *min, *ext, *full;
    if (!lo[d]) {
      min = zero;
      full = ext = shape;
    } else { /* clamp to the tensor's domain */
      min = arith_simplify(ir_max(lo[d], zero), env);
      const ir_expr *end = arith_simplify(ir_min(ir_add(hi[d], ir_int(ctx, 1)), shape), env);
      ext = arith_simplify(ir_sub(end, min), env);
      full = arith_simplify(ir_add(ir_sub(hi[d], lo[d]), ir_int(ctx, 1)), env);
    }
    /* storage: a loop-invariant bound on the extent (the unclamped one bounds it better) */
    arith_range er = arith_bound(ext, env), fr = arith_bound(full, env);
    if (fr.has_hi && (!er.has_hi || fr.hi < er.hi)) er = fr;
    const ir_expr *store = er.has_hi ? ir_int(ctx, er.hi > 0 ? er.hi : 1) : ext;
    reg[2 * d] = min;
    reg[2 * d + 1] = store;
    /* A constant storage extent is also the loop extent (vectorizable, unrollable): the
     * iterations past the tensor's end are guarded off (schedule_ops.c), the others compute
     * in-domain elements the consumer may not need. */
    int fixed = er.has_hi && lo[d];
    if (put(ctx, &ls->b, p->root[d], min, fixed ? store : ext, env)) return -1;
    ls->clamp[pi][d] = fixed ? shape : NULL;
    cmin[d] = min; /* what the produce writes: [min, wend) under the domain guard */
    wend[d] = ir_add(min, fixed ? store : ext);
  }
  int rc = spos >= -1 ? lower_store_plan(ls, pi, spos, pos, lo, hi, slo, shi, rlo, rhi, cmin,
                                        wend, env, reg)
                     : 0;
  arith_env_pop(env, arith_env_depth(env) - depth0);
  ls->region[pi] = reg;
  return rc;
}

/* Ranges of the loops st's relations make (split: outer and inner; fuse: fused). */
static int relation_ranges(lower_state *ls, sch_stage *st, arith_env *env) {
  tec_ctx *ctx = ls->ctx;
  lower_bounds *b = &ls->b;
  for (int r = 0; r < st->nrel; r++) {
    const sch_relation *rel = &st->rel[r];
    const ir_expr *zero = ir_int(ctx, 0);
    if (rel->kind == SCH_REL_SPLIT) {
      const lower_range *p = lower_bounds_get(b, rel->parent);
      if (!p) return TEC_INTERNAL(ctx, "split parent without a range");
      /* an attached stage's extents may vary with outer loops: use their bound */
      const ir_expr *pext = p->extent;
      int64_t cv;
      if (!ir_is_const_int(pext, &cv)) {
        arith_range er = arith_bound(pext, env);
        if (er.has_hi && lower_attach_of(ls, st) == SCH_ATTACH_SCOPE) pext = ir_int(ctx, er.hi);
      }
      int64_t fv;
      if (rel->tail == SCH_TAIL_SHIFT_INWARDS && ir_is_const_int(p->extent, &cv) &&
          ir_is_const_int(rel->factor, &fv) && cv < fv)
        return tec_ctx_set_error(ctx, "tec_lower '%s': axis '%s' of stage '%s' is split by %lld "
                                      "with tail strategy shift_inwards, but here it has %lld "
                                      "iterations, fewer than the factor, so no chunk fits "
                                      "inside it; use a factor <= %lld, or guard_with_if or "
                                      "predicate",
                                 ls->fname ? ls->fname : "?", rel->parent->name, st->tensor->name,
                                 (long long)fv, (long long)cv, (long long)cv);
      const ir_expr *outer, *inner; /* the relation engine's rule (schedule/relation.c) */
      sch_rel_split_extents(rel, pext, &outer, &inner);
      if (put(ctx, b, rel->outer, zero, outer, NULL) || put(ctx, b, rel->inner, zero, inner, NULL))
        return -1;
    } else {
      const lower_range *o = lower_bounds_get(b, rel->outer);
      const lower_range *in = lower_bounds_get(b, rel->inner);
      if (!o || !in) return TEC_INTERNAL(ctx, "fuse input without a range");
      int64_t ov, iv, fv;
      if (ir_is_const_int(o->extent, &ov) && ir_is_const_int(in->extent, &iv) &&
          __builtin_mul_overflow(ov, iv, &fv))
        return tec_ctx_set_error(ctx, "tec_lower '%s': loop '%s' of stage '%s' fuses %lld and "
                                      "%lld iterations, more than 2^63 - 1; fuse loops whose "
                                      "extents multiply to less",
                                 ls->fname ? ls->fname : "?", rel->fused->name,
                                 st->tensor->name, (long long)ov, (long long)iv);
      if (put(ctx, b, rel->fused, zero, ir_mul(o->extent, in->extent), NULL)) return -1;
    }
  }
  return 0;
}

/* A reduce axis may range over a domain that uses the data axes (r in [0, j + 1): a
 * triangular sum). Its range is declared over the root variables; the loops see root values
 * (a split j is j.outer*4 + j.inner, an attached stage's j is j + its region's min), so the
 * range is restated in those, and the loops it depends on must stay outside it. */
static int reduce_ranges(lower_state *ls, sch_stage *st, arith_env *env) {
  tec_ctx *ctx = ls->ctx;
  te_tensor *t = st->tensor;
  int uses = 0;
  for (int i = t->ndim; i < st->nroot; i++)
    for (int d = 0; d < t->ndim; d++)
      uses |= ir_uses_var(st->root[i]->dom_min, st->root[d]->var) ||
              ir_uses_var(st->root[i]->dom_extent, st->root[d]->var);
  if (!uses) return 0;
  lower_ivals iv = {0};
  if (lower_iter_values(ctx, st, &ls->b, &iv)) return -1;
  const ir_expr **vars = tec_ctx_alloc(ctx, sizeof *vars * (size_t)t->ndim);
  const ir_expr **vals = tec_ctx_alloc(ctx, sizeof *vals * (size_t)t->ndim);
  if (!vars || !vals) return -1;
  for (int d = 0; d < t->ndim; d++) {
    vars[d] = st->root[d]->var;
    vals[d] = lower_ivals_get(&iv, st->root[d]);
    if (!vals[d]) return TEC_INTERNAL(ctx, "data axis without a value");
  }
  for (int i = t->ndim; i < st->nroot; i++)
    if (put(ctx, &ls->b, st->root[i], ir_substitute(st->root[i]->dom_min, t->ndim, vars, vals),
            ir_substitute(st->root[i]->dom_extent, t->ndim, vars, vals), NULL))
      return -1;
  /* (a loop's range may use only loops outside it: legality.c checks) */
  return relation_ranges(ls, st, env);
}

static int infer_once(lower_state *ls, arith_env *env) {
  const sch_schedule *s = ls->s;
  tec_ctx *ctx = ls->ctx;
  for (int si = 0; si < s->nstage; si++) ls->store[si] = (lower_store){.pos = -1, .dim = -1};
  lower_bounds *b = &ls->b;
  for (int si = s->nstage - 1; si >= 0; si--) {
    sch_stage *st = s->stages[si];
    if (st->tensor->op != TE_COMPUTE || ls->attach[si] == SCH_ATTACH_INLINE) continue;
    int first = 0;
    if (ls->attach[si] == SCH_ATTACH_SCOPE) {
      if (attach_region(ls, si, env)) return -1;
      first = st->tensor->ndim; /* data axes done */
    }
    for (int i = first; i < st->nroot; i++)
      if (put(ctx, b, st->root[i], st->root[i]->dom_min, st->root[i]->dom_extent, NULL))
        return -1;
    if (relation_ranges(ls, st, env) || reduce_ranges(ls, st, env)) return -1;
  }
  return 0;
}

int lower_infer_bounds(lower_state *ls) {
  const sch_schedule *s = ls->s;
  tec_ctx *ctx = ls->ctx;
  ls->region = tec_ctx_alloc(ctx, sizeof *ls->region * (size_t)s->nstage);
  ls->clamp = tec_ctx_alloc(ctx, sizeof *ls->clamp * (size_t)s->nstage);
  ls->store = tec_ctx_alloc(ctx, sizeof *ls->store * (size_t)s->nstage);
  ls->no_warm = tec_ctx_alloc(ctx, (size_t)s->nstage);
  arith_env *env = arith_env_new(ctx);
  if (!ls->region || !ls->clamp || !ls->store || !ls->no_warm || !env) return -1;
  if (lower_store_warm_groups(ls)) return -1;
  /* again without warm-up where a compute loop mixes stages that warm up and stages that
   * cannot (each pass turns at least one loop off) */
  int n0 = ls->b.n, again;
  do {
    ls->b.n = n0;
    if (infer_once(ls, env)) return -1;
    again = lower_store_warm_check(ls);
    if (again < 0) return -1;
  } while (again);
  /* sliding windows: the nests compute only the new part (store_at.c); the producers' own
   * regions above came from the whole boxes, as Halide's bounds do */
  return lower_store_finish(ls);
}

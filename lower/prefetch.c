/* prefetch.c — sch_prefetch(st, t, k, offset) becomes prefetch statements at the top of loop k:
 *
 *   for (k, 0, 1024) {                       for (k, 0, 1024) {
 *     for (ji, 0, 64) vectorized       ->      for (pf, 0, 4) prefetch(Bp[jo, k + 8, pf*16])
 *       C.local[..] += .. Bp[jo, k, ji]        for (ji, 0, 64) vectorized ...
 *
 * The region of t that one iteration reads is bounded over the loops inside k by the symbolic
 * interval analysis (arith_interval: every index must have a bound free of those loops),
 * k is replaced by k + offset, and one prefetch is issued per 64-byte line
 * along t's last dimension (the first element of each line, counted from a multiple of the
 * line's element count; exact when rows start on a line, one line off at worst otherwise: a
 * prefetch is only a hint). The other dimensions of the region get plain loops. A pass of its
 * own, right after schedule_ops, which marks the body of each main-nest loop that prefetches
 * with `attr prefetch_scope = <stage index>`; markers are replaced innermost first, so an
 * outer loop's region includes the prefetches of the loops inside it. */
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"
#include "schedule/internal.h"

#define PF_LINE_BYTES 64

/* What a loop's body holds: every loop (and let) variable inside it, free to range over its
 * loop (a let's is unbounded), and the stages realized there. Read once per prefetched loop. */
typedef struct pf_scan {
  tec_ctx *ctx;
  arith_relax rx;
  int cap[3], oom;             /* of rx's three arrays */
  arith_env *env;        /* the loops' ranges, to simplify indices before bounding them */
  const te_tensor **realized;
  int nrealized, rcap;
} pf_scan;

static void pf_free_var(pf_scan *sc, const ir_expr *var, const ir_expr *min, const ir_expr *max) {
  int need = sc->rx.n + 1;
  if (tec_grow(sc->ctx, (void **)&sc->rx.vars, &sc->cap[0], need, sizeof *sc->rx.vars) ||
      tec_grow(sc->ctx, (void **)&sc->rx.lo, &sc->cap[1], need, sizeof *sc->rx.lo) ||
      tec_grow(sc->ctx, (void **)&sc->rx.hi, &sc->cap[2], need, sizeof *sc->rx.hi)) {
    sc->oom = 1;
    return;
  }
  sc->rx.vars[sc->rx.n] = var, sc->rx.lo[sc->rx.n] = min, sc->rx.hi[sc->rx.n] = max;
  sc->rx.n++;
}

static void pf_for(ir_visitor *v, const ir_stmt *s) {
  pf_scan *sc = v->user;
  pf_free_var(sc, s->var, s->a, ir_sub(ir_add(s->a, s->b), ir_int(sc->ctx, 1)));
  arith_env_push_loop(sc->env, s->var, s->a, s->b);
  ir_visit_stmt_default(v, s);
}
static void pf_let_stmt(ir_visitor *v, const ir_stmt *s) {
  pf_free_var(v->user, s->var, NULL, NULL);
  ir_visit_stmt_default(v, s);
}
static void pf_let(ir_visitor *v, const ir_expr *e) {
  pf_free_var(v->user, e->var, NULL, NULL);
  ir_visit_expr_default(v, e);
}
static void pf_realize(ir_visitor *v, const ir_stmt *s) {
  pf_scan *sc = v->user;
  if (tec_grow(sc->ctx, (void **)&sc->realized, &sc->rcap, sc->nrealized + 1,
               sizeof *sc->realized))
    sc->oom = 1;
  else
    sc->realized[sc->nrealized++] = s->tensor;
  ir_visit_stmt_default(v, s);
}

/* The prefetch nest for t, offset iterations ahead of loop `it`, whose body sc scanned. */
static const ir_stmt *pf_nest(lower_state *ls, const sch_stage *st, const sch_iter *it,
                              const te_tensor *t, int64_t offset, const ir_stmt *body,
                              const pf_scan *sc) {
  tec_ctx *ctx = ls->ctx;
  const char *who = tec_ctx_printf(ctx, "prefetch of '%s' at loop '%s' of stage '%s'", t->name,
                                   it->name, st->tensor->name);
  for (int i = 0; i < sc->nrealized; i++)
    if (sc->realized[i] == t) {
      tec_ctx_set_error(ctx, "%s: '%s' is computed inside that loop (compute_at), so its next "
                             "iterations do not exist yet; prefetch it at a loop inside its "
                             "attach point, or prefetch what it reads", who, t->name);
      return NULL;
    }
  lower_reads rd = {t, 0, 0, NULL, ctx};
  if (!lower_collect_reads(&rd, NULL, body)) {
    tec_ctx_set_error(ctx, "%s: that loop reads no element of '%s' (was it inlined, or read "
                           "through a cache_read made after the prefetch?)", who, t->name);
    return NULL;
  }
  /* the region one iteration reads, as bound.c bounds an attached stage's */
  int nd = t->ndim;
  const ir_expr **lo = tec_ctx_alloc(ctx, sizeof *lo * (size_t)nd);
  const ir_expr **hi = tec_ctx_alloc(ctx, sizeof *hi * (size_t)nd);
  if (!lo || !hi) return NULL;
  for (int k = 0; k < rd.n; k++)
    for (int d = 0; d < nd; d++) {
      const ir_expr *idx = arith_simplify(rd.r[k]->args[d], sc->env), *a, *b;
      if (!arith_interval(idx, &sc->rx, sc->env, &a, &b)) {
        tec_ctx_set_error(ctx, "%s: index %s has no bound over the loops inside '%s' (sums, "
                               "multiples by a factor of known sign that does not vary, "
                               "division and modulo by a positive divisor that does not vary, "
                               "min, max and select of their variables have one); prefetch at "
                               "a loop where it has", who, ir_expr_str(idx), it->name);
        return NULL;
      }
      lo[d] = k ? ir_min(lo[d], a) : a;
      hi[d] = k ? ir_max(hi[d], b) : b;
    }
  /* iteration it + offset; dimensions but the last get loops, the last one a prefetch per
   * line. An offset past the loop's extent is clamped to it (those iterations do not exist)
   * and any offset to 2^31, so no index arithmetic over it wraps (issue #38: an offset of 2^62
   * wrapped a region extent into a loop of 2^58 prefetches) */
  int64_t ext;
  if (it->dom_extent && ir_is_const_int(it->dom_extent, &ext) && ext >= 1 && offset > ext) offset = ext;
  if (offset > ((int64_t)1 << 31)) offset = (int64_t)1 << 31;
  const ir_expr *ahead = ir_add(it->var, ir_int(ctx, offset));
  const ir_expr **idx = tec_ctx_alloc(ctx, sizeof *idx * (size_t)nd);
  const ir_expr **vars = tec_ctx_alloc(ctx, sizeof *vars * (size_t)nd);
  if (!idx || !vars) return NULL;
  for (int d = 0; d < nd; d++) {
    /* simplified here: these bounds are evaluated on every iteration of the loop */
    lo[d] = arith_simplify(ir_substitute(lo[d], 1, &it->var, &ahead), sc->env);
    hi[d] = arith_simplify(ir_substitute(hi[d], 1, &it->var, &ahead), sc->env);
    vars[d] = ir_var(ctx, tec_ctx_printf(ctx, "pf.%s.%d", t->name, d), TEC_INDEX, IR_VAR_INDEX);
    if (!lo[d] || !hi[d] || !vars[d]) return NULL;
    idx[d] = vars[d];
  }
  int64_t line = PF_LINE_BYTES / tec_dtype_bytes(t->type);
  const ir_expr *L = ir_int(ctx, line < 1 ? 1 : line);
  const ir_expr *first = ir_floordiv(lo[nd - 1], L);
  idx[nd - 1] = ir_mul(ir_add(first, vars[nd - 1]), L);
  const ir_stmt *s = ir_evaluate(ir_prefetch(ir_read(ctx, t, nd, idx)));
  s = ir_for(vars[nd - 1], ir_int(ctx, 0),
             ir_add(ir_sub(ir_floordiv(hi[nd - 1], L), first), ir_int(ctx, 1)), IR_FOR_SERIAL, s);
  for (int d = nd - 2; d >= 0 && s; d--)
    s = ir_for(vars[d], lo[d], ir_add(ir_sub(hi[d], lo[d]), ir_int(ctx, 1)), IR_FOR_SERIAL, s);
  return s;
}

static const ir_stmt *prefetch_loop(lower_state *ls, const sch_stage *st, int pos,
                                   const ir_stmt *body) {
  const sch_iter *it = st->leaf[pos];
  if (!body || it->nprefetch == 0) return body;
  /* (a vectorized loop here or around it is refused by legality.c) */
  pf_scan sc = {.ctx = ls->ctx, .env = arith_env_new(ls->ctx)};
  ir_visitor v;
  ir_visitor_init(&v, &sc);
  v.stmt[IR_S_FOR] = pf_for;
  v.stmt[IR_S_LET_STMT] = pf_let_stmt;
  v.expr[IR_LET] = pf_let;
  v.stmt[IR_S_REALIZE] = pf_realize;
  if (sc.env) ir_visit_stmt(&v, body);
  const ir_stmt **items = tec_ctx_alloc(ls->ctx, sizeof *items * (size_t)(it->nprefetch + 1));
  if (!items || !sc.env || sc.oom) return NULL;
  for (int p = 0; p < it->nprefetch; p++) {
    items[p] = pf_nest(ls, st, it, it->prefetch_tensors[p], it->prefetch_offsets[p], body, &sc);
    if (!items[p]) return NULL;
  }
  items[it->nprefetch] = body;
  return ir_seq(ls->ctx, it->nprefetch + 1, items);
}

/* The FOR whose body is a prefetch_scope marker: the marker becomes the loop's prefetches. */
static const ir_stmt *pf_mutate_for(ir_mutator *m, const ir_stmt *s) {
  lower_state *ls = m->user;
  const ir_stmt *mark = s->body;
  if (!mark || mark->kind != IR_S_ATTR || !mark->name || strcmp(mark->name, "prefetch_scope"))
    return ir_mutate_stmt_default(m, s);
  const ir_stmt *inner = ir_mutate_stmt(m, mark->body); /* innermost first */
  int64_t si = -1;
  if (!inner) return NULL;
  if (!ir_is_const_int(mark->a, &si) || si < 0 || si >= ls->s->nstage) {
    TEC_INTERNAL(ls->ctx, "prefetch_scope marker without a stage");
    return NULL;
  }
  const sch_stage *st = ls->s->stages[si];
  for (int pos = 0; pos < st->nleaf; pos++)
    if (st->leaf[pos]->var == s->var) {
      const ir_stmt *body = prefetch_loop(ls, st, pos, inner);
      return body ? ir_stmt_with(s, s->a, s->b, s->c, body, NULL, NULL, NULL) : NULL;
    }
  TEC_INTERNAL(ls->ctx, "prefetch_scope marker on a loop that is no leaf of its stage");
  return NULL;
}

const ir_stmt *lower_prefetch(lower_state *ls, const ir_stmt *body) {
  if (!body) return NULL;
  unsigned long errors_before = tec_ctx_error_count(ls->ctx);
  ir_mutator m;
  ir_mutator_init(&m, ls->ctx, ls);
  m.stmt[IR_S_FOR] = pf_mutate_for;
  const ir_stmt *r = ir_mutate_stmt(&m, body);
  return tec_ctx_error_count(ls->ctx) != errors_before ? NULL : r;
}

/* prefetch.c — sch_prefetch(st, t, k, offset) becomes prefetch statements at the top of loop k:
 *
 *   for (k, 0, 1024) {                       for (k, 0, 1024) {
 *     for (ji, 0, 64) vectorized       ->      for (pf, 0, 4) prefetch(Bp[jo, k + 8, pf*16])
 *       C.local[..] += .. Bp[jo, k, ji]        for (ji, 0, 64) vectorized ...
 *
 * The region of t that one iteration reads is found over the loops inside k (every index of t
 * must be affine in them: a sum of constant multiples of those loop variables plus terms that
 * do not use them), k is replaced by k + offset, and one prefetch is issued per 64-byte line
 * along t's last dimension (the first element of each line, counted from a multiple of the
 * line's element count; exact when rows start on a line, one line off at worst otherwise: a
 * prefetch is only a hint). The other dimensions of the region get plain loops. Called by
 * schedule_ops.c for each loop of a stage's main nest. */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "lower/arith.h"

#define PF_LINE_BYTES 64
#define PF_MAX_LOOPS 64

typedef struct pf_loop {
  const ir_expr *var, *min, *extent; /* extent NULL: a let variable (no range) */
} pf_loop;

typedef struct pf_state {
  tec_ctx *ctx;
  const te_tensor *t;
  int nloop;
  pf_loop loop[PF_MAX_LOOPS]; /* the loops (and lets) around the current node, inside k */
  arith_env *env;             /* the same loops' ranges, to simplify indices first */
  int nreads, realized, failed;
  const ir_expr *bad;         /* the index that is not affine in the inner loops */
  const ir_expr **lo, **hi;   /* per dimension of t: the region's bounds (inclusive) */
} pf_state;

static int pf_push(pf_state *ps, const ir_expr *var, const ir_expr *min, const ir_expr *extent) {
  if (ps->nloop >= PF_MAX_LOOPS) {
    ps->failed = 1;
    return 0;
  }
  ps->loop[ps->nloop++] = (pf_loop){var, min, extent};
  return 1;
}

static const pf_loop *pf_inner(const pf_state *ps, const ir_expr *e) {
  for (int i = ps->nloop - 1; i >= 0; i--)
    if (ps->loop[i].var == e) return &ps->loop[i];
  return NULL;
}

static int pf_uses_inner(const pf_state *ps, const ir_expr *e) {
  for (int i = 0; i < ps->nloop; i++)
    if (ir_uses_var(e, ps->loop[i].var)) return 1;
  return 0;
}

/* [lo, hi] of an index over the inner loops; 0 if it is not affine in them. */
static int pf_index_range(pf_state *ps, const ir_expr *idx, const ir_expr **lo,
                          const ir_expr **hi) {
  tec_ctx *ctx = ps->ctx;
  idx = arith_simplify(idx, ps->env); /* floordiv(j + jo*64, 64) with j in [0, 64): jo */
  arith_linear l;
  arith_linear_init(&l, ctx, idx->type);
  arith_linear_add_expr(&l, idx, 1);
  arith_linear_normalize(&l);
  const ir_expr *a = ir_int_t(ctx, idx->type, l.c), *b = a;
  int ok = !l.oom;
  for (int i = 0; i < l.n && ok; i++) {
    const ir_expr *e = l.t[i].e, *k = ir_int_t(ctx, idx->type, l.t[i].coef);
    const pf_loop *in = pf_inner(ps, e);
    if (in && in->extent && !pf_uses_inner(ps, in->min) && !pf_uses_inner(ps, in->extent)) {
      const ir_expr *first = in->min, *last = ir_sub(ir_add(in->min, in->extent), ir_int(ctx, 1));
      int up = l.t[i].coef > 0;
      a = ir_add(a, ir_mul(k, up ? first : last));
      b = ir_add(b, ir_mul(k, up ? last : first));
    } else if (!in && !pf_uses_inner(ps, e)) {
      a = ir_add(a, ir_mul(k, e));
      b = ir_add(b, ir_mul(k, e));
    } else {
      ok = 0;
    }
  }
  arith_linear_free(&l);
  if (!ok || !a || !b) return 0;
  *lo = a, *hi = b;
  return 1;
}

static void pf_read(ir_visitor *v, const ir_expr *e) {
  pf_state *ps = v->user;
  ir_visit_expr_default(v, e);
  if (e->tensor != ps->t || ps->failed || ps->bad) return;
  for (int d = 0; d < e->nargs; d++) {
    const ir_expr *lo, *hi;
    if (!pf_index_range(ps, e->args[d], &lo, &hi)) {
      ps->bad = e->args[d];
      return;
    }
    ps->lo[d] = ps->nreads ? ir_min(ps->lo[d], lo) : lo;
    ps->hi[d] = ps->nreads ? ir_max(ps->hi[d], hi) : hi;
  }
  ps->nreads++;
}

static void pf_let(ir_visitor *v, const ir_expr *e) {
  pf_state *ps = v->user;
  ir_visit_expr(v, e->a);
  if (pf_push(ps, e->var, NULL, NULL)) {
    ir_visit_expr(v, e->b);
    ps->nloop--;
  }
}

static void pf_for(ir_visitor *v, const ir_stmt *s) {
  pf_state *ps = v->user;
  ir_visit_expr(v, s->a);
  ir_visit_expr(v, s->b);
  if (pf_push(ps, s->var, s->a, s->b)) {
    arith_env_push_loop(ps->env, s->var, s->a, s->b);
    ir_visit_stmt(v, s->body);
    arith_env_pop(ps->env, 1);
    ps->nloop--;
  }
}

static void pf_let_stmt(ir_visitor *v, const ir_stmt *s) {
  pf_state *ps = v->user;
  ir_visit_expr(v, s->a);
  if (pf_push(ps, s->var, NULL, NULL)) {
    ir_visit_stmt(v, s->body);
    ps->nloop--;
  }
}

static void pf_realize(ir_visitor *v, const ir_stmt *s) {
  pf_state *ps = v->user;
  if (s->tensor == ps->t) ps->realized = 1;
  ir_visit_stmt_default(v, s);
}

/* The prefetch nest for t, offset iterations ahead of loop `it` with body `body`. */
static const ir_stmt *pf_nest(lower_state *ls, const sch_stage *st, const sch_iter *it,
                              const te_tensor *t, int64_t offset, const ir_stmt *body) {
  tec_ctx *ctx = ls->ctx;
  pf_state ps = {.ctx = ctx, .t = t, .env = arith_env_new(ctx)};
  int nd = t->ndim;
  ps.lo = tec_ctx_alloc(ctx, sizeof *ps.lo * (size_t)(nd ? nd : 1));
  ps.hi = tec_ctx_alloc(ctx, sizeof *ps.hi * (size_t)(nd ? nd : 1));
  if (!ps.lo || !ps.hi || !ps.env) return NULL;
  ir_visitor v;
  ir_visitor_init(&v, &ps);
  v.expr[IR_READ] = pf_read;
  v.expr[IR_LET] = pf_let;
  v.stmt[IR_S_FOR] = pf_for;
  v.stmt[IR_S_LET_STMT] = pf_let_stmt;
  v.stmt[IR_S_REALIZE] = pf_realize;
  ir_visit_stmt(&v, body);
  const char *who = tec_ctx_printf(ctx, "prefetch of '%s' at loop '%s' of stage '%s'", t->name,
                                   it->name, st->tensor->name);
  if (ps.failed) {
    tec_ctx_set_error(ctx, "%s: more than %d loops inside it", who, PF_MAX_LOOPS);
    return NULL;
  }
  if (ps.realized) {
    tec_ctx_set_error(ctx, "%s: '%s' is computed inside that loop (compute_at), so its next "
                           "iterations do not exist yet; prefetch it at a loop inside its "
                           "attach point, or prefetch what it reads", who, t->name);
    return NULL;
  }
  if (ps.bad) {
    tec_ctx_set_error(ctx, "%s: index %s is not affine in the loops inside '%s' (a sum of "
                           "constant multiples of their variables); prefetch at a loop where "
                           "it is", who, ir_expr_str(ps.bad), it->name);
    return NULL;
  }
  if (ps.nreads == 0) {
    tec_ctx_set_error(ctx, "%s: that loop reads no element of '%s' (was it inlined, or read "
                           "through a cache_read made after the prefetch?)", who, t->name);
    return NULL;
  }
  /* iteration it + offset; dimensions but the last get loops, the last one a prefetch per
   * line */
  const ir_expr *ahead = ir_add(it->var, ir_int(ctx, offset));
  if (nd == 0) /* a scalar: its one element */
    return ir_evaluate(ir_prefetch(ir_read(ctx, t, 0, NULL)));
  const ir_expr **idx = tec_ctx_alloc(ctx, sizeof *idx * (size_t)nd);
  const ir_expr **vars = tec_ctx_alloc(ctx, sizeof *vars * (size_t)nd);
  if (!idx || !vars) return NULL;
  for (int d = 0; d < nd; d++) {
    ps.lo[d] = ir_substitute(ps.lo[d], 1, &it->var, &ahead);
    ps.hi[d] = ir_substitute(ps.hi[d], 1, &it->var, &ahead);
    vars[d] = ir_var(ctx, tec_ctx_printf(ctx, "pf.%s.%d", t->name, d), TEC_INDEX, IR_VAR_INDEX);
    if (!ps.lo[d] || !ps.hi[d] || !vars[d]) return NULL;
    idx[d] = d + 1 < nd ? vars[d] : NULL;
  }
  int64_t line = PF_LINE_BYTES / tec_dtype_bytes(t->type);
  if (line < 1) line = 1;
  const ir_expr *L = ir_int(ctx, line);
  const ir_expr *first = ir_floordiv(ps.lo[nd - 1], L);
  idx[nd - 1] = ir_mul(ir_add(first, vars[nd - 1]), L);
  const ir_stmt *s = ir_evaluate(ir_prefetch(ir_read(ctx, t, nd, idx)));
  s = ir_for(vars[nd - 1], ir_int(ctx, 0),
             ir_add(ir_sub(ir_floordiv(ps.hi[nd - 1], L), first), ir_int(ctx, 1)), IR_FOR_SERIAL,
             s);
  for (int d = nd - 2; d >= 0 && s; d--)
    s = ir_for(vars[d], ps.lo[d], ir_add(ir_sub(ps.hi[d], ps.lo[d]), ir_int(ctx, 1)),
               IR_FOR_SERIAL, s);
  return s;
}

const ir_stmt *lower_prefetch(lower_state *ls, const sch_stage *st, int pos,
                              const ir_stmt *body) {
  const sch_iter *it = st->leaf[pos];
  if (!body || it->nprefetch == 0) return body;
  for (int i = 0; i <= pos; i++)
    if (st->leaf[i]->for_kind == IR_FOR_VECTORIZED) {
      tec_ctx_set_error(ls->ctx, "prefetch at loop '%s' of stage '%s': %s vectorized; put the "
                                 "prefetch on a loop outside the vectorized one",
                        it->name, st->tensor->name,
                        i == pos ? "the loop is" : tec_ctx_printf(ls->ctx, "it is inside '%s', "
                                                                  "which is", st->leaf[i]->name));
      return NULL;
    }
  const ir_stmt **items = tec_ctx_alloc(ls->ctx, sizeof *items * (size_t)(it->nprefetch + 1));
  if (!items) return NULL;
  for (int p = 0; p < it->nprefetch; p++) {
    items[p] = pf_nest(ls, st, it, it->prefetch_tensors[p], it->prefetch_offsets[p], body);
    if (!items[p]) return NULL;
  }
  items[it->nprefetch] = body;
  return ir_seq(ls->ctx, it->nprefetch + 1, items);
}

/* loop_partition.c — lower_loop_partition: peel the guards of non-dividing splits out of the
 * hot loop, so the main part of a loop nest carries no condition.
 *
 *   for (i.outer, 0, ((n + 7) / 8)) {          for (i.outer, 0, s) {             // s = n/8
 *     for (i.inner, 0, 8) {                      for (i.inner, 0, 8) {
 *       if (((i.outer*8) + i.inner) < n) {  ->      B[((i.outer*8) + i.inner)] = ...
 *         B[((i.outer*8) + i.inner)] = ...       }
 *                                              }
 *                                              for (i.outer, s, (((n + 7) / 8) - s)) {
 *                                                for (i.inner, 0, min(n - i.outer*8, 8)) {
 *                                                  B[...] = ...
 *
 * For a loop over v, every IF in its body whose condition is (a conjunction containing)
 * `x < y` / `x <= y` (or > / >=) with x - y linear in v gives a threshold: with
 * x - y = c*v + g(inner) + h(outer), the conjunct holds for every inner value exactly when
 * c*v + max(g) + h < 0 (or <= 0). c > 0 gives the first v where it can fail (s_hi), c < 0
 * the first v from which it always holds (s_lo). The loop becomes up to three loops over the
 * same variable and with the same kind:
 *   [min, lo)   the original body                  (only if some c < 0)
 *   [lo, hi)    the body with those conjuncts removed (the hot loop)
 *   [hi, end)   the original body                  (only if some c > 0)
 * with lo and hi clamped into [min, end] by min/max (arith_simplify folds what it can), so it
 * is exact for every value of the symbols, including loops shorter than one tile. A parallel
 * loop stays one loop whose body picks its part per iteration (see lp_for).
 * A lone threshold that involves no inner variable is also false on the whole tail, so the
 * tail gets the IF's else branch (usually nothing): that is how the inner loop of the tail
 * above lost its guard.
 *
 * Conditions marked likely() (ir_likely: TVM's tir.likely) count too, wherever they are: a
 * select's condition, the load predicate guard_loads copied from it, an IF's condition. Their
 * conjuncts go through the same analysis, and in the clean part each one that gave a
 * threshold becomes true (tracked by node: one that failed somewhere else is kept), so the
 * zero padding of a convolution leaves the hot loop:
 *
 *   for (oy, 0, 28) {                          for (oy, 0, 1) { <the original body> }
 *     out[..] += select(likely(oy + ky >= 1 &&  for (oy, 1, 26) {
 *                 oy + ky < 29), data[..] if      out[..] += select(likely(true), data[..]
 *                 likely(..), 0f) * w[..]    ->                   if likely(true), 0f) * w[..]
 *                                             }                   (simplify: data[..] * w[..])
 *                                             for (oy, 27, 1) { <the original body> }
 *
 * An unmarked select never splits a loop (the copies cost code size). When likely()
 * thresholds leave no middle but every bound is a constant (a 28-wide row in two tiles of
 * 14, both touching the padding), the loop still splits into head and tail, so the loops
 * inside each part (unrolled taps) can split or fold in turn.
 *
 * Inner loop variables contribute max(g) from their loop bounds (symbolic allowed, as long as
 * the bounds do not depend on v or other inner variables) or from arith_bound. Terms reading
 * memory (LOAD) or depending on LET variables bound inside the loop disqualify a conjunct.
 * Vectorized and unrolled loops are partitioned only where every split point is a constant
 * (the tail of a vectorized j loop: `for (j.inner, 0, 16) vectorized { if (j.inner + 16 < 29)`
 * becomes a 13-lane loop); otherwise their extent must stay constant and the vectorizer
 * scalarizes the guarded loop. The pass runs outermost loop first and recurses into every
 * part.
 */
#include <stdlib.h>
#include "arith/arith.h"
#include "lower/passes.h"

#define LP_MAX_BOUND 64 /* nesting depth tracked inside one candidate loop */
#define LP_MAX_IFS 64   /* guarded IFs considered per loop */
#define LP_MAX_CONJ 256 /* distinct conjuncts under likely() considered per loop */

typedef struct lp_if {
  const ir_stmt *s;         /* the IF */
  const ir_expr *rest;      /* its condition without the partitioned conjuncts (NULL: none) */
} lp_if;

typedef struct lp_state {
  tec_ctx *ctx;
  arith_env *env;           /* ranges of the enclosing loops (and inner ones while analysing) */
  const ir_expr *v;         /* the loop being analysed */
  int nb;                   /* variables bound between v and the current point */
  const ir_expr *bvar[LP_MAX_BOUND], *bmin[LP_MAX_BOUND], *bext[LP_MAX_BOUND];
  int has_likely;           /* lp_pass.has_likely */
  int overflow;             /* too deep / too many IFs / conflicting copies: give up */
  int nif;
  lp_if ifs[LP_MAX_IFS];
  int in_likely;            /* analysing the argument of a likely() call */
  int nlikely;              /* thresholds that came from conjuncts under likely() */
  int ncj;                  /* conjuncts met under likely(), by pointer: */
  const ir_expr *cj[LP_MAX_CONJ];
  unsigned char cj_ok[LP_MAX_CONJ]; /* every occurrence gave a threshold: true in the middle */
  const ir_expr *hi, *lo;   /* min of increasing thresholds, max of decreasing ones */
  int ninc, ndec;           /* conjuncts contributing to hi, lo */
  int inc_exact, dec_exact; /* the contributing conjunct has no inner terms (when n == 1) */
  const ir_stmt *inc_if, *dec_if;
  /* rewriting */
  int mode;                 /* 0: clean part; 1: tail (inc_if -> else); 2: head (dec_if) */
} lp_state;

/* ---- analysis ---- */

static int is_bound_inside(const lp_state *st, const ir_expr *e) {
  for (int i = 0; i < st->nb; i++)
    if (ir_uses_var(e, st->bvar[i])) return 1;
  return 0;
}

static int has_load_rec(const ir_expr *e) {
  if (!e) return 0;
  if (e->kind == IR_LOAD || e->kind == IR_READ || e->kind == IR_REDUCE) return 1;
  if (has_load_rec(e->a) || has_load_rec(e->b) || has_load_rec(e->c)) return 1;
  for (int i = 0; i < e->nargs; i++)
    if (has_load_rec(e->args[i])) return 1;
  return 0;
}

/* The index of a bound loop variable with usable bounds, or -1. */
static int usable_inner_loop(const lp_state *st, const ir_expr *e) {
  if (e->kind != IR_VAR) return -1;
  for (int i = st->nb - 1; i >= 0; i--) {
    if (st->bvar[i] != e) continue;
    if (!st->bmin[i]) return -1;
    if (ir_uses_var(st->bmin[i], st->v) || ir_uses_var(st->bext[i], st->v)) return -1;
    for (int j = 0; j < st->nb; j++)
      if (ir_uses_var(st->bmin[i], st->bvar[j]) || ir_uses_var(st->bext[i], st->bvar[j]))
        return -1;
    return i;
  }
  return -1;
}

static int is_likely(const ir_expr *e) { return ir_likely_arg(e) != NULL; }

/* Notes how an occurrence of conjunct e under likely() fared. One node can occur in several
 * places (guard_loads puts the select's condition into the load's predicate); the clean part
 * drops it only if every occurrence gave a threshold. */
static void record_conjunct(lp_state *st, const ir_expr *e, int ok) {
  for (int i = 0; i < st->ncj; i++)
    if (st->cj[i] == e) {
      st->cj_ok[i] &= (unsigned char)ok;
      return;
    }
  if (st->ncj >= LP_MAX_CONJ) {
    st->overflow = 1;
    return;
  }
  st->cj[st->ncj] = e;
  st->cj_ok[st->ncj++] = (unsigned char)ok;
}

static int conjunct_ok(const lp_state *st, const ir_expr *e) {
  for (int i = 0; i < st->ncj; i++)
    if (st->cj[i] == e) return st->cj_ok[i];
  return 0;
}

static const ir_expr *addx(const ir_expr *a, const ir_expr *b) { return a ? ir_add(a, b) : b; }

/* Analyses `x < y` (strict) or `x <= y` with respect to st->v. Returns 1 and records a
 * threshold if the conjunct can be partitioned. */
static int analyse_cmp(lp_state *st, const ir_expr *x, const ir_expr *y, int strict) {
  if (!arith_is_index_type(x->type) || !tec_dtype_eq(x->type, TEC_INDEX) ||
      !tec_dtype_eq(y->type, TEC_INDEX))
    return 0;
  arith_linear l;
  arith_linear_init(&l, st->ctx, TEC_INDEX);
  arith_linear_add_expr(&l, x, 1);
  arith_linear_add_expr(&l, y, -1);
  arith_linear_normalize(&l);
  int ok = !l.oom, inner = 0;
  int64_t c = 0;
  const ir_expr *m = ir_int(st->ctx, l.c); /* max over inner values of g + h */
  for (int i = 0; ok && i < l.n; i++) {
    const ir_expr *t = l.t[i].e;
    int64_t k = l.t[i].coef;
    if (t == st->v) {
      c += k;
    } else if (ir_uses_var(t, st->v) || has_load_rec(t)) {
      ok = 0;
    } else if (is_bound_inside(st, t)) {
      int b = usable_inner_loop(st, t);
      inner = 1;
      if (b >= 0) {
        const ir_expr *at = k > 0 ? ir_sub(ir_add(st->bmin[b], st->bext[b]), ir_int(st->ctx, 1))
                                  : st->bmin[b];
        m = addx(m, ir_mul(at, ir_int(st->ctx, k)));
      } else {
        arith_range r = arith_bound(t, st->env);
        int64_t lim, prod;
        if (k > 0 ? !r.has_hi : !r.has_lo) {
          ok = 0;
          break;
        }
        lim = k > 0 ? r.hi : r.lo;
        if (__builtin_mul_overflow(lim, k, &prod)) {
          ok = 0;
          break;
        }
        m = addx(m, ir_int(st->ctx, prod));
      }
    } else {
      m = addx(m, ir_mul(t, ir_int(st->ctx, k)));
    }
  }
  arith_linear_free(&l);
  if (!ok || c == 0 || !m) return 0;
  /* holds for every inner value  <=>  c*v <= K */
  const ir_expr *K = strict ? ir_sub(ir_int(st->ctx, -1), m) : ir_sub(ir_int(st->ctx, 0), m);
  if (c > 0) {
    const ir_expr *s = ir_floordiv(arith_simplify(ir_add(K, ir_int(st->ctx, c)), NULL), ir_int(st->ctx, c));
    if (!s) return 0;
    st->hi = st->hi ? ir_min(st->hi, s) : s;
    st->ninc++;
    st->nlikely += st->in_likely > 0;
    st->inc_exact = !inner;
  } else {
    const ir_expr *s = ir_sub(ir_int(st->ctx, 0), ir_floordiv(K, ir_int(st->ctx, -c)));
    if (!s) return 0;
    st->lo = st->lo ? ir_max(st->lo, s) : s;
    st->ndec++;
    st->nlikely += st->in_likely > 0;
    st->dec_exact = !inner;
  }
  return 1;
}

static int analyse_conjunct(lp_state *st, const ir_expr *e) {
  switch (e->kind) {
  case IR_LT: return analyse_cmp(st, e->a, e->b, 1);
  case IR_LE: return analyse_cmp(st, e->a, e->b, 0);
  case IR_GT: return analyse_cmp(st, e->b, e->a, 1);
  case IR_GE: return analyse_cmp(st, e->b, e->a, 0);
  default: return 0;
  }
}

static void push_bound(lp_state *st, const ir_expr *var, const ir_expr *min,
                       const ir_expr *ext);
static void analyse_expr(lp_state *st, const ir_expr *e);

/* Splits cond into conjuncts (through && and likely()); returns the conjunction of those that
 * were not partitioned (NULL if all were), and sets *any when at least one was. The operands
 * of every conjunct are searched for likely() calls too (a select inside a comparison). */
static const ir_expr *analyse_cond(lp_state *st, const ir_expr *cond, int *any) {
  if (cond->kind == IR_AND) {
    const ir_expr *a = analyse_cond(st, cond->a, any);
    const ir_expr *b = analyse_cond(st, cond->b, any);
    if (!a) return b;
    if (!b) return a;
    return a == cond->a && b == cond->b ? cond : ir_and(a, b);
  }
  if (is_likely(cond)) {
    st->in_likely++;
    const ir_expr *r = analyse_cond(st, cond->args[0], any);
    st->in_likely--;
    return !r ? NULL : r == cond->args[0] ? cond : ir_likely(r);
  }
  int ok = analyse_conjunct(st, cond);
  if (st->in_likely) record_conjunct(st, cond, ok);
  analyse_expr(st, cond->a);
  analyse_expr(st, cond->b);
  analyse_expr(st, cond->c);
  if (ok) {
    *any = 1;
    return NULL;
  }
  return cond;
}

/* Finds the likely() calls of an expression (a select's condition, a load's predicate) and
 * analyses their conjuncts; unmarked conditions give no thresholds. */
static void analyse_expr(lp_state *st, const ir_expr *e) {
  if (!e || st->overflow) return;
  if (is_likely(e)) {
    int any = 0;
    analyse_cond(st, e, &any);
    return;
  }
  if (e->kind == IR_LET) {
    int nb = st->nb;
    analyse_expr(st, e->a);
    push_bound(st, e->var, NULL, NULL);
    analyse_expr(st, e->b);
    st->nb = nb;
    return;
  }
  analyse_expr(st, e->a);
  analyse_expr(st, e->b);
  analyse_expr(st, e->c);
  for (int i = 0; e->args && i < e->nargs; i++) analyse_expr(st, e->args[i]);
}

static void push_bound(lp_state *st, const ir_expr *var, const ir_expr *min,
                       const ir_expr *ext) {
  if (st->nb >= LP_MAX_BOUND) {
    st->overflow = 1;
    return;
  }
  st->bvar[st->nb] = var;
  st->bmin[st->nb] = min;
  st->bext[st->nb] = ext;
  st->nb++;
}

static void analyse_stmt(lp_state *st, const ir_stmt *s) {
  if (!s || st->overflow) return;
  if (s->kind != IR_S_IF && st->has_likely) { /* the expressions evaluated here (an IF's: analyse_cond) */
    analyse_expr(st, s->a);
    analyse_expr(st, s->b);
    analyse_expr(st, s->c);
    int nargs = s->kind == IR_S_REALIZE ? 2 * s->n : s->kind == IR_S_SEQ ? 0 : s->n;
    for (int i = 0; s->args && i < nargs; i++) analyse_expr(st, s->args[i]);
  }
  switch (s->kind) {
  case IR_S_FOR: {
    int depth = arith_env_depth(st->env), nb = st->nb;
    arith_env_push_loop(st->env, s->var, s->a, s->b);
    push_bound(st, s->var, s->a, s->b);
    analyse_stmt(st, s->body);
    st->nb = nb;
    arith_env_pop(st->env, arith_env_depth(st->env) - depth);
    return;
  }
  case IR_S_LET_STMT: {
    int nb = st->nb;
    push_bound(st, s->var, NULL, NULL);
    analyse_stmt(st, s->body);
    st->nb = nb;
    return;
  }
  case IR_S_IF: {
    int any = 0, seen = 0;
    for (int i = 0; i < st->nif; i++) seen |= st->ifs[i].s == s;
    if (seen) { /* one IF reached twice (a shared subtree): too subtle, leave the loop */
      st->overflow = 1;
      return;
    }
    int ninc = st->ninc, ndec = st->ndec;
    const ir_expr *rest = analyse_cond(st, s->a, &any);
    if (any) {
      if (st->nif >= LP_MAX_IFS) {
        st->overflow = 1;
        return;
      }
      if (st->ninc > ninc) st->inc_if = s; /* one false conjunct falsifies the IF */
      if (st->ndec > ndec) st->dec_if = s;
      st->ifs[st->nif++] = (lp_if){s, rest};
    }
    analyse_stmt(st, s->body);
    analyse_stmt(st, s->else_body);
    return;
  }
  case IR_S_SEQ:
    for (int i = 0; i < s->n; i++) analyse_stmt(st, s->seq[i]);
    return;
  default:
    analyse_stmt(st, s->body);
    analyse_stmt(st, s->else_body);
    return;
  }
}

/* ---- rewriting the parts ---- */

static const ir_stmt *rw_if(ir_mutator *m, const ir_stmt *s) {
  lp_state *st = m->user;
  for (int i = 0; i < st->nif; i++) {
    if (st->ifs[i].s != s) continue;
    if (st->mode == 1 && s == st->inc_if && st->ninc == 1 && st->inc_exact)
      return ir_mutate_stmt(m, s->else_body);
    if (st->mode == 2 && s == st->dec_if && st->ndec == 1 && st->dec_exact)
      return ir_mutate_stmt(m, s->else_body);
    if (st->mode != 0) break;
    const ir_stmt *t = ir_mutate_stmt(m, s->body);
    if (!st->ifs[i].rest) return t;
    const ir_stmt *e = ir_mutate_stmt(m, s->else_body);
    if (!t && !e) return NULL;
    return ir_if(st->ifs[i].rest, t ? t : ir_evaluate(ir_int(st->ctx, 0)), e);
  }
  return ir_mutate_stmt_default(m, s);
}

/* The conjunction cond without the conjuncts true in the clean part (NULL: all were). */
static const ir_expr *rw_drop(ir_mutator *m, const ir_expr *cond) {
  lp_state *st = m->user;
  if (cond->kind == IR_AND) {
    const ir_expr *a = rw_drop(m, cond->a), *b = rw_drop(m, cond->b);
    if (!a) return b;
    if (!b) return a;
    return a == cond->a && b == cond->b ? cond : ir_and(a, b);
  }
  if (is_likely(cond)) {
    const ir_expr *r = rw_drop(m, cond->args[0]);
    return !r ? NULL : r == cond->args[0] ? cond : ir_likely(r);
  }
  if (conjunct_ok(st, cond)) return NULL;
  return ir_mutate_expr(m, cond); /* likely() calls further down */
}

/* In the clean part, likely(c && d) loses the conjuncts that hold there: likely(d), or true. */
static const ir_expr *rw_call(ir_mutator *m, const ir_expr *e) {
  lp_state *st = m->user;
  if (st->mode != 0 || !is_likely(e)) return ir_mutate_expr_default(m, e);
  const ir_expr *r = rw_drop(m, e);
  return r ? r : arith_const(st->ctx, e->type, 1);
}

static const ir_stmt *rewrite(lp_state *st, const ir_stmt *body, int mode) {
  ir_mutator m;
  ir_mutator_init(&m, st->ctx, st);
  m.stmt[IR_S_IF] = rw_if;
  m.expr[IR_CALL] = rw_call;
  st->mode = mode;
  return ir_mutate_stmt(&m, body);
}

/* ---- the driver ---- */

typedef struct lp_pass {
  tec_ctx *ctx;
  arith_env *env;
  int has_likely;           /* the program has a likely() call: expressions are worth a walk */
} lp_pass;

/* One part's body, partitioned further with the loop's variable ranging over [lo, lo + ext)
 * (ext simplified); NULL when the part is provably empty or its body is. */
static const ir_stmt *part_body(lp_pass *p, ir_mutator *m, const ir_stmt *loop,
                                const ir_expr *lo, const ir_expr *ext, const ir_stmt *body) {
  if (!body || !ext) return NULL;
  arith_range r = arith_bound(ext, p->env);
  if (r.has_hi && r.hi <= 0) return NULL;
  int depth = arith_env_depth(p->env);
  arith_env_push_loop(p->env, loop->var, lo, ext);
  body = ir_mutate_stmt(m, body);
  arith_env_pop(p->env, arith_env_depth(p->env) - depth);
  return body;
}

static const ir_stmt *recurse_loop(lp_pass *p, ir_mutator *m, const ir_stmt *s) {
  int depth = arith_env_depth(p->env);
  arith_env_push_loop(p->env, s->var, s->a, s->b);
  const ir_stmt *body = ir_mutate_stmt(m, s->body);
  arith_env_pop(p->env, arith_env_depth(p->env) - depth);
  if (!body) return NULL;
  return ir_stmt_with(s, s->a, s->b, s->c, body, s->else_body, s->seq, s->args);
}

static const ir_stmt *lp_for(ir_mutator *m, const ir_stmt *s) {
  lp_pass *p = m->user;
  /* vectorized/unrolled loops must keep constant extents: split only at constant points */
  int need_const = s->for_kind == IR_FOR_VECTORIZED || s->for_kind == IR_FOR_UNROLLED;
  if (!arith_is_index_type(s->var->type)) return recurse_loop(p, m, s);
  lp_state *st = calloc(1, sizeof *st);
  if (!st) {
    tec_ctx_set_error_kind(p->ctx, TEC_ERR_OOM, "out of memory (partitioning a loop)");
    return recurse_loop(p, m, s);
  }
  st->ctx = p->ctx;
  st->env = p->env;
  st->has_likely = p->has_likely;
  st->v = s->var;
  int depth = arith_env_depth(p->env);
  arith_env_push_loop(p->env, s->var, s->a, s->b); /* for arith_bound of inner terms */
  analyse_stmt(st, s->body);
  arith_env_pop(p->env, arith_env_depth(p->env) - depth);
  if (st->overflow || (!st->lo && !st->hi)) {
    free(st);
    return recurse_loop(p, m, s);
  }
  tec_ctx *ctx = p->ctx;
  const ir_expr *min = s->a, *end = arith_simplify(ir_add(s->a, s->b), p->env);
  const ir_expr *lo = min, *hi = end;
  if (st->lo) lo = arith_simplify(ir_max(min, ir_min(st->lo, end)), p->env);
  if (st->hi) hi = arith_simplify(ir_max(lo, ir_min(st->hi, end)), p->env);
  const ir_stmt *out = NULL;
  if (!lo || !hi || !end ||
      (need_const && !(arith_is_imm(lo, NULL) && arith_is_imm(hi, NULL) && arith_is_imm(end, NULL)))) {
    out = recurse_loop(p, m, s);
  } else if (st->lo && st->hi && arith_prove(ir_le(hi, lo), p->env) &&
             !(st->nlikely && arith_is_imm(min, NULL) && arith_is_imm(lo, NULL) &&
               arith_is_imm(end, NULL))) {
    /* no clean middle: nothing to gain, unless likely() conditions and constant bounds, where
     * each part's narrower range lets the loops inside it split (a padded row's two tiles) */
    out = recurse_loop(p, m, s);
  } else {
    /* the parts [min, lo) head, [lo, hi) clean, [hi, end) tail (rewrite modes 2, 0, 1) */
    int head = st->lo && !arith_prove(ir_le(lo, min), p->env);
    int tail = st->hi && !arith_prove(ir_ge(hi, end), p->env);
    const ir_expr *from[3] = {min, lo, hi}, *to[3] = {lo, hi, end}, *ext[3] = {NULL};
    const ir_stmt *body[3] = {NULL, NULL, NULL};
    static const int mode[3] = {2, 0, 1};
    for (int k = 0; k < 3; k++) {
      if ((k == 0 && !head) || (k == 2 && !tail)) continue;
      ext[k] = arith_simplify(ir_sub(to[k], from[k]), p->env);
      body[k] = part_body(p, m, s, from[k], ext[k], rewrite(st, s->body, mode[k]));
    }
    if (s->for_kind == IR_FOR_PARALLEL && (head || tail)) {
      /* A parallel loop keeps one loop, each iteration picking its part:
       *   for (v, min, end - min) parallel { if (v < lo) head else if (v < hi) clean else tail }
       * Three loops one after the other would be three parallel jobs, and a one-iteration
       * tail job runs on one thread while the others wait (at N = 1000, a 6x64-tiled GEMM's
       * last panel pair left one of two threads idle for a fifth of the time). The test costs
       * one branch per iteration; the loops inside stay guard-free. */
      const ir_stmt *nop = ir_evaluate(ir_int(ctx, 0)), *b = body[1];
      if (tail) b = b || body[2] ? ir_if(ir_lt(s->var, hi), b ? b : nop, body[2]) : NULL;
      if (head) b = b || body[0] ? ir_if(ir_lt(s->var, lo), body[0] ? body[0] : nop, b) : NULL;
      out = b ? ir_for(s->var, s->a, s->b, s->for_kind, b) : NULL; /* the loop's own range */
    } else {
      const ir_stmt *parts[3];
      for (int k = 0; k < 3; k++)
        parts[k] = body[k] ? ir_for(s->var, from[k], ext[k], s->for_kind, body[k]) : NULL;
      out = ir_seq(ctx, 3, parts); /* NULL: every part provably empty */
    }
  }
  free(st);
  return out;
}

static void find_likely(ir_visitor *v, const ir_expr *e) {
  if (ir_likely_arg(e)) *(int *)v->user = 1;
  else ir_visit_expr_default(v, e);
}

/* Whether a likely() call appears anywhere: without one, the per-loop analysis looks at IF
 * conditions only, not at every expression of the loop's body. */
static int has_likely(const ir_stmt *s) {
  int found = 0;
  ir_visitor v;
  ir_visitor_init(&v, &found);
  v.expr[IR_CALL] = find_likely;
  ir_visit_stmt(&v, s);
  return found;
}

const ir_stmt *lower_loop_partition(const ir_stmt *s) {
  if (!s) return NULL;
  lp_pass p = {s->ctx, arith_env_new(s->ctx), has_likely(s)};
  if (!p.env) return s;
  ir_mutator m;
  ir_mutator_init(&m, s->ctx, &p);
  m.stmt[IR_S_FOR] = lp_for;
  unsigned long errors = tec_ctx_error_count(s->ctx);
  const ir_stmt *r = ir_mutate_stmt(&m, s);
  /* an allocation failed half way (the arena reported it): no half-partitioned program */
  if (tec_ctx_error_count(s->ctx) != errors) return NULL;
  return r ? r : ir_evaluate(ir_int(s->ctx, 0)); /* the whole program was provably empty */
}

/* simplify_expr.c — arith_simplify: bottom-up rewriting of one expression.
 *
 * Children are simplified first (through an ir_mutator whose every expression slot is the
 * simplifier), then one node-level rule set applies (arith_rewrite):
 *
 *   3 + 4                         ->  7            (constants of every kind; floats only when
 *   cast(float32, 2)              ->  2f            all operands are constants; never
 *                                                   reassociated)
 *   (i*4 + j) - i*4               ->  j            (canonical linear form, simplify_linear.c)
 *   floordiv(io*8 + ii, 8)        ->  io           (division rules, simplify_div.c)
 *   min(x, x + 1)                 ->  x            (decided by the range of the difference)
 *   io*8 + ii < 104               ->  true         when io in [0, 12], ii in [0, 7]
 *   i < n                         ->  true         inside for i in [0, n) (symbolic bounds)
 *   select(true, a, b)            ->  a
 *   likely(true)                  ->  true         (likely(c) stays otherwise: partitioning
 *                                                   reads it)
 *   !(a < b)                      ->  a >= b       (integers only: NaN makes it wrong for floats)
 *
 * The result is e itself (the same pointer) when it is structurally unchanged.
 */
#include <math.h>
#include <string.h>
#include "arith/arith.h"

static int is_float_imm(const ir_expr *e, double *v) {
  if (!e || e->kind != IR_FLOAT_IMM || e->type.lanes != 1) return 0;
  *v = e->v.f;
  return 1;
}

static const ir_expr *float_const(const ir_expr *e, double v) {
  tec_dtype t = e->type;
  if (t.bits == 32)
    v = (float)v;
  else if (t.bits != 64)
    return e; /* float16 is storage only: leave it to codegen */
  return ir_float_t(e->ctx, t, v);
}

static uint64_t as_unsigned(tec_dtype t, int64_t v) {
  uint64_t u = (uint64_t)v;
  if (t.bits < 64) u &= (UINT64_C(1) << t.bits) - 1;
  return u;
}

/* op(broadcast(x), broadcast(y)) -> broadcast(op(x, y)). */
static const ir_expr *lift_broadcast(const ir_expr *e, const arith_env *env) {
  const ir_expr *a = e->a, *b = e->b;
  if (e->type.lanes <= 1 || !a || !b || a->kind != IR_BROADCAST || b->kind != IR_BROADCAST ||
      !a->a || !b->a)
    return NULL;
  const ir_expr *s = ir_expr_with(e, a->a, b->a, NULL, NULL);
  if (!s) return NULL;
  s = arith_rewrite(s, env);
  return s ? ir_broadcast(s, e->type.lanes) : NULL;
}

/* ---- the difference of two index expressions, bounded (with symbolic loop bounds) ---- */

/* Replaces each loop variable with a symbolic bound (its max where it counts upward). */
static arith_range sym_side(const arith_linear *l, const arith_env *env, int upper) {
  arith_linear s;
  arith_linear_init(&s, l->ctx, l->type);
  int used = 0;
  for (int i = 0; i < l->n; i++) {
    const ir_expr *t = l->t[i].e;
    const struct arith_fact *f = t->kind == IR_VAR ? arith_env_find(env, t) : NULL;
    const ir_expr *sub = NULL;
    if (f) sub = (l->t[i].coef > 0) == upper ? f->smax : f->smin;
    if (sub && tec_dtype_eq(sub->type, l->type)) {
      arith_linear_add_expr(&s, sub, l->t[i].coef);
      used = 1;
    } else {
      arith_linear_add_term(&s, t, l->t[i].coef);
    }
  }
  s.c = arith_wrap(l->type, (int64_t)((uint64_t)s.c + (uint64_t)l->c)); /* a ring: exact */
  arith_range r = arith_range_unknown();
  if (used && !s.oom) {
    arith_linear_normalize(&s);
    r = arith_linear_bound(&s, env);
  }
  arith_linear_free(&s);
  return r;
}

static arith_range diff_bound(const ir_expr *a, const ir_expr *b, const arith_env *env) {
  /* x / c - y / c with c > 0: floor and truncating division keep order, so it has x - y's sign
   * (min(n / 4, (n + 3) / 4) -> n / 4, as loop partitioning writes it; n / 4 <= (n + 3) / 4) */
  int64_t c1, c2;
  if ((a->kind == IR_FLOORDIV || a->kind == IR_DIV) && b->kind == a->kind &&
      arith_is_imm(a->b, &c1) && c1 > 0 && arith_is_imm(b->b, &c2) && c1 == c2) {
    arith_range d = diff_bound(a->a, b->a, env), r = {0};
    if (d.has_hi && d.hi <= 0) r.has_hi = 1, r.hi = 0;
    if (d.has_lo && d.lo >= 0) r.has_lo = 1, r.lo = 0;
    if (r.has_hi || r.has_lo) return r;
  }
  arith_linear l;
  arith_linear_init(&l, a->ctx, a->type);
  arith_linear_add_expr(&l, a, 1);
  arith_linear_add_expr(&l, b, -1);
  arith_linear_normalize(&l);
  arith_range r = arith_linear_bound(&l, env);
  if (!l.oom && env && (!r.has_lo || !r.has_hi)) {
    arith_range u = sym_side(&l, env, 1), d = sym_side(&l, env, 0);
    if (u.has_hi && (!r.has_hi || u.hi < r.hi)) r.hi = u.hi, r.has_hi = 1;
    if (d.has_lo && (!r.has_lo || d.lo > r.lo)) r.lo = d.lo, r.has_lo = 1;
  }
  arith_linear_free(&l);
  return r;
}

/* ---- rules by kind ---- */

static const ir_expr *rewrite_arith(const ir_expr *e, const arith_env *env) {
  const ir_expr *a = e->a, *b = e->b, *r;
  tec_dtype t = e->type;
  double x, y;
  int64_t i, j;
  if (!a || !b) return e;
  if (t.code == TEC_FLOAT) {
    if (is_float_imm(a, &x) && is_float_imm(b, &y))
      return float_const(e, e->kind == IR_ADD ? x + y : e->kind == IR_SUB ? x - y : x * y);
    if (e->kind == IR_MUL && is_float_imm(b, &y) && y == 1.0) return a;
    if (e->kind == IR_MUL && is_float_imm(a, &x) && x == 1.0) return b;
    return (r = lift_broadcast(e, env)) ? r : e;
  }
  if (t.code != TEC_INT && t.code != TEC_UINT) return e;
  if (t.lanes > 1) {
    if ((r = lift_broadcast(e, env))) return r;
    if (t.code != TEC_INT) return e;
    int lanes = t.lanes;
    /* ramp arithmetic (exact for integers) */
    if (e->kind != IR_MUL && a->kind == IR_RAMP && b->kind == IR_RAMP) {
      const ir_expr *base = ir_expr_with(e, a->a, b->a, NULL, NULL);
      const ir_expr *st = ir_expr_with(e, a->b, b->b, NULL, NULL);
      if (base && st)
        return ir_ramp(arith_rewrite(base, env), arith_rewrite(st, env), lanes);
    }
    if (e->kind != IR_MUL && a->kind == IR_RAMP && b->kind == IR_BROADCAST) {
      const ir_expr *base = ir_expr_with(e, a->a, b->a, NULL, NULL);
      if (base) return ir_ramp(arith_rewrite(base, env), a->b, lanes);
    }
    if (e->kind == IR_ADD && a->kind == IR_BROADCAST && b->kind == IR_RAMP) {
      const ir_expr *base = ir_add(a->a, b->a);
      if (base) return ir_ramp(arith_rewrite(base, env), b->b, lanes);
    }
    if (e->kind == IR_MUL && (a->kind == IR_RAMP) != (b->kind == IR_RAMP)) {
      const ir_expr *rp = a->kind == IR_RAMP ? a : b, *bc = a->kind == IR_RAMP ? b : a;
      if (bc->kind == IR_BROADCAST && bc->a) {
        const ir_expr *base = ir_mul(rp->a, bc->a), *st = ir_mul(rp->b, bc->a);
        if (base && st)
          return ir_ramp(arith_rewrite(base, env), arith_rewrite(st, env), lanes);
      }
    }
    return e;
  }
  if (t.code == TEC_UINT) {
    if (!arith_is_imm(a, &i) || !arith_is_imm(b, &j)) return e;
    uint64_t ua = as_unsigned(t, i), ub = as_unsigned(t, j);
    uint64_t u = e->kind == IR_ADD ? ua + ub : e->kind == IR_SUB ? ua - ub : ua * ub;
    return arith_const(e->ctx, t, (int64_t)u);
  }
  if (!arith_is_index_type(t)) return e;
  r = arith_canonical(e);
  return r ? r : e;
}

static const ir_expr *rewrite_minmax(const ir_expr *e, const arith_env *env) {
  const ir_expr *a = e->a, *b = e->b, *r;
  int is_min = e->kind == IR_MIN;
  double x, y;
  int64_t i, j;
  if (!a || !b) return e;
  if (a == b || ir_expr_equal(a, b)) return a;
  tec_dtype t = e->type;
  if (t.lanes > 1) return (r = lift_broadcast(e, env)) ? r : e;
  if (t.code == TEC_FLOAT) {
    if (is_float_imm(a, &x) && is_float_imm(b, &y) && !isnan(x) && !isnan(y))
      return is_min ? (x <= y ? a : b) : (x >= y ? a : b);
    return e;
  }
  if (t.code == TEC_UINT) {
    if (!arith_is_imm(a, &i) || !arith_is_imm(b, &j)) return e;
    int a_le = as_unsigned(t, i) <= as_unsigned(t, j);
    return is_min == a_le ? a : b;
  }
  if (!arith_is_index_type(t)) return e;
  arith_range d = diff_bound(a, b, env); /* a - b */
  if (d.has_hi && d.hi <= 0) return is_min ? a : b;
  if (d.has_lo && d.lo >= 0) return is_min ? b : a;
  /* min(min(x, c1), c2) -> min(x, min(c1, c2)) */
  if (a->kind == e->kind && arith_is_imm(a->b, &i) && arith_is_imm(b, &j)) {
    int64_t k = is_min ? (i < j ? i : j) : (i > j ? i : j);
    return ir_expr_with(e, a->a, ir_int_t(e->ctx, t, k), NULL, NULL);
  }
  return e;
}

static int cmp_decide(ir_expr_kind k, arith_range d, int *out) {
  /* d bounds a - b */
  switch (k) {
  case IR_LT:
    if (d.has_hi && d.hi < 0) return *out = 1, 1;
    if (d.has_lo && d.lo >= 0) return *out = 0, 1;
    return 0;
  case IR_LE:
    if (d.has_hi && d.hi <= 0) return *out = 1, 1;
    if (d.has_lo && d.lo > 0) return *out = 0, 1;
    return 0;
  case IR_GT:
    if (d.has_lo && d.lo > 0) return *out = 1, 1;
    if (d.has_hi && d.hi <= 0) return *out = 0, 1;
    return 0;
  case IR_GE:
    if (d.has_lo && d.lo >= 0) return *out = 1, 1;
    if (d.has_hi && d.hi < 0) return *out = 0, 1;
    return 0;
  case IR_EQ:
  case IR_NE: {
    int eq;
    if (d.has_lo && d.has_hi && d.lo == 0 && d.hi == 0)
      eq = 1;
    else if ((d.has_lo && d.lo > 0) || (d.has_hi && d.hi < 0))
      eq = 0;
    else
      return 0;
    *out = k == IR_EQ ? eq : !eq;
    return 1;
  }
  default:
    return 0;
  }
}

static const ir_expr *rewrite_cmp(const ir_expr *e, const arith_env *env) {
  const ir_expr *a = e->a, *b = e->b, *r;
  double x, y;
  int64_t i, j;
  int v;
  if (!a || !b) return e;
  tec_dtype ot = a->type;
  if (e->type.lanes > 1) return (r = lift_broadcast(e, env)) ? r : e;
  if (ot.code == TEC_FLOAT) {
    if (!is_float_imm(a, &x) || !is_float_imm(b, &y)) return e;
    switch (e->kind) {
    case IR_EQ: v = x == y; break;
    case IR_NE: v = x != y; break;
    case IR_LT: v = x < y; break;
    case IR_LE: v = x <= y; break;
    case IR_GT: v = x > y; break;
    default: v = x >= y; break;
    }
    return arith_const(e->ctx, e->type, v);
  }
  if (ot.code == TEC_UINT || ot.code == TEC_BOOL) {
    if (!arith_is_imm(a, &i) || !arith_is_imm(b, &j)) return e;
    uint64_t ua = as_unsigned(ot, i), ub = as_unsigned(ot, j);
    switch (e->kind) {
    case IR_EQ: v = ua == ub; break;
    case IR_NE: v = ua != ub; break;
    case IR_LT: v = ua < ub; break;
    case IR_LE: v = ua <= ub; break;
    case IR_GT: v = ua > ub; break;
    default: v = ua >= ub; break;
    }
    return arith_const(e->ctx, e->type, v);
  }
  if (!arith_is_index_type(ot) || !tec_dtype_eq(ot, b->type)) return e;
  if (a == b || ir_expr_equal(a, b))
    return arith_const(e->ctx, e->type, e->kind == IR_EQ || e->kind == IR_LE || e->kind == IR_GE);
  if (cmp_decide(e->kind, diff_bound(a, b, env), &v)) return arith_const(e->ctx, e->type, v);
  return e;
}

static int const_truth(const ir_expr *e, int *v) {
  int64_t x;
  if (!e || !ir_is_const_int(e, &x)) return 0;
  *v = x != 0;
  return 1;
}

static const ir_expr *rewrite_logic(const ir_expr *e, const arith_env *env) {
  const ir_expr *a = e->a, *b = e->b;
  int va, vb;
  if (!a) return e;
  if (e->kind == IR_NOT) {
    if (const_truth(a, &va)) return arith_const(e->ctx, e->type, !va);
    if (a->kind == IR_NOT && a->a) return a->a;
    if (a->a && (a->a->type.code == TEC_INT || a->a->type.code == TEC_UINT)) {
      switch (a->kind) {
      case IR_LT: return ir_ge(a->a, a->b);
      case IR_LE: return ir_gt(a->a, a->b);
      case IR_GT: return ir_le(a->a, a->b);
      case IR_GE: return ir_lt(a->a, a->b);
      case IR_EQ: return ir_ne(a->a, a->b);
      case IR_NE: return ir_eq(a->a, a->b);
      default: break;
      }
    }
    return e;
  }
  if (!b) return e;
  int is_and = e->kind == IR_AND;
  if (const_truth(a, &va)) return va == is_and ? b : a; /* true && b -> b; false && b -> false */
  if (const_truth(b, &vb)) return vb == is_and ? a : b;
  if (a == b || ir_expr_equal(a, b)) return a;
  return e;
}

static const ir_expr *rewrite_select(const ir_expr *e) {
  int v;
  if (!e->a || !e->b || !e->c) return e;
  if (const_truth(e->a, &v)) return v ? e->b : e->c;
  if (e->b == e->c || ir_expr_equal(e->b, e->c)) return e->b;
  return e;
}

static const ir_expr *rewrite_call(const ir_expr *e) {
  int v;
  const ir_expr *c = ir_likely_arg(e);
  if (!c) return e;
  if (const_truth(c, &v)) return c;                                  /* likely(true) */
  if (ir_likely_arg(c)) return c;                                    /* likely(likely(c)) */
  return e;
}

static const ir_expr *rewrite_cast(const ir_expr *e, const arith_env *env) {
  const ir_expr *a = e->a;
  tec_dtype t = e->type;
  int64_t i;
  double x;
  if (!a) return e;
  if (tec_dtype_eq(a->type, t)) return a;
  if (t.lanes > 1) {
    if (a->kind != IR_BROADCAST || !a->a) return e;
    const ir_expr *s = ir_cast(tec_dtype_scalar(t), a->a);
    return s ? ir_broadcast(arith_rewrite(s, env), t.lanes) : e;
  }
  if (arith_is_imm(a, &i)) {
    if (a->type.code == TEC_UINT) i = (int64_t)as_unsigned(a->type, i);
    if (t.code == TEC_INT || t.code == TEC_UINT || t.code == TEC_BOOL)
      return arith_const(e->ctx, t, i);
    if (t.code == TEC_FLOAT) {
      if (a->type.code == TEC_UINT && i < 0) return float_const(e, (double)(uint64_t)i);
      return float_const(e, (double)i);
    }
    return e;
  }
  if (is_float_imm(a, &x)) {
    if (t.code == TEC_FLOAT) return float_const(e, x);
    if (t.code == TEC_BOOL) return arith_const(e->ctx, t, x != 0);
    if (t.code == TEC_INT || t.code == TEC_UINT) {
      arith_range r = arith_type_range(t);
      /* only values the target holds (and int64 can carry): [lo, hi_excl) */
      double tr = trunc(x), lo = r.has_lo ? (double)r.lo : -0x1p63;
      double hi_excl = r.has_hi ? (double)r.hi + 1 : 0x1p63;
      if (!isfinite(x) || tr < lo || tr >= hi_excl) return e;
      return arith_const(e->ctx, t, (int64_t)tr);
    }
  }
  return e;
}

const ir_expr *arith_rewrite(const ir_expr *e, const arith_env *env) {
  if (!e) return e;
  int64_t v;
  switch (e->kind) {
  case IR_VAR: {
    const struct arith_fact *f = arith_env_find(env, e);
    if (f && f->r.has_lo && f->r.has_hi && f->r.lo == f->r.hi && arith_is_index_type(e->type))
      return ir_int_t(e->ctx, e->type, f->r.lo);
    return e;
  }
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
    return rewrite_arith(e, env);
  case IR_DIV:
  case IR_MOD:
  case IR_FLOORDIV:
  case IR_FLOORMOD:
    return arith_rewrite_div(e, env);
  case IR_MIN:
  case IR_MAX:
    return rewrite_minmax(e, env);
  case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
    return rewrite_cmp(e, env);
  case IR_AND:
  case IR_OR:
  case IR_NOT:
    return rewrite_logic(e, env);
  case IR_SELECT:
    return rewrite_select(e);
  case IR_CAST:
    return rewrite_cast(e, env);
  case IR_CALL:
    return rewrite_call(e);
  case IR_RAMP:
    if (e->a && arith_is_imm(e->b, &v) && v == 0) return ir_broadcast(e->a, e->type.lanes);
    return e;
  case IR_LOAD:
    if (e->c && ir_is_const_int(e->c, &v) && v != 0)
      return ir_expr_with(e, e->a, e->b, NULL, e->args);
    return e;
  default:
    return e;
  }
}

/* ---- the mutator ---- */

static const ir_expr *simp_expr(ir_mutator *m, const ir_expr *e);

/* let x = v in b: constants and variables are substituted; otherwise x gets v's range. */
static const ir_expr *simp_let(ir_mutator *m, const ir_expr *e) {
  arith_env *env = m->user;
  if (!e->a || !e->b || !e->var) return e;
  const ir_expr *val = ir_mutate_expr(m, e->a);
  if (!val) return e;
  if (val->kind == IR_INT_IMM || val->kind == IR_FLOAT_IMM || val->kind == IR_VAR) {
    const ir_expr *body = ir_substitute(e->b, 1, &e->var, &val);
    const ir_expr *r = body ? ir_mutate_expr(m, body) : NULL;
    return r ? r : e;
  }
  int depth = arith_env_depth(env);
  if (arith_is_index_type(e->var->type)) arith_env_push(env, e->var, arith_bound(val, env));
  const ir_expr *body = ir_mutate_expr(m, e->b);
  arith_env_pop(env, arith_env_depth(env) - depth);
  if (!body) return e;
  if (!ir_uses_var(body, e->var)) return body;
  if (val == e->a && body == e->b) return e;
  const ir_expr *r = ir_let(e->var, val, body);
  return r ? r : e;
}

static const ir_expr *simp_expr(ir_mutator *m, const ir_expr *e) {
  if (!e) return e;
  if (e->kind == IR_LET) return simp_let(m, e);
  const ir_expr *r = ir_mutate_expr_default(m, e);
  if (!r) return e;
  const ir_expr *s = arith_rewrite(r, m->user);
  if (!s) s = r;
  if (s != e && ir_expr_equal(s, e)) return e;
  return s;
}

void arith_simplify_mutator(ir_mutator *m) {
  for (int k = 0; k < IR_EXPR_KIND_COUNT; k++) m->expr[k] = simp_expr;
}

const ir_expr *arith_simplify(const ir_expr *e, const arith_env *env) {
  if (!e) return NULL;
  arith_env tmp;
  if (!env) {
    memset(&tmp, 0, sizeof tmp);
    tmp.ctx = e->ctx;
    env = &tmp;
  }
  arith_env *w = (arith_env *)env; /* LET bodies push and pop; the depth is restored */
  int depth = w->n;
  ir_mutator m;
  ir_mutator_init(&m, e->ctx, w);
  arith_simplify_mutator(&m);
  const ir_expr *r = ir_mutate_expr(&m, e);
  w->n = depth;
  return r ? r : e;
}

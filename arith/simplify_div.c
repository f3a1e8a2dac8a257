/* simplify_div.c — rules for integer division and modulo by a positive constant c.
 *
 *   floordiv(i.outer*8 + i.inner, 8)   i.inner in [0, 8)   ->  i.outer
 *   floormod(i.outer*8 + i.inner, 8)                       ->  i.inner
 *   floordiv(x*16 + y, 8)                                  ->  x*2 + floordiv(y, 8)
 *   floordiv(floordiv(x, 4), 2)                            ->  floordiv(x, 8)
 *   floormod(floormod(x, 16), 8)                           ->  floormod(x, 8)
 *   floordiv(y, 8)   y in [0, 8)                           ->  0
 *   floordiv(n + 7, 8)   n >= 0                            ->  (n + 7)/8     (plain division)
 *   floordiv(ramp(x*8, 1, 8), broadcast(8))                ->  broadcast(x)
 *
 * Terms whose coefficient c divides leave the division; the rest is decided by its range when
 * it lies within one period [k*c, k*c + c). What remains of a FLOORDIV/FLOORMOD whose
 * numerator is provably >= 0 becomes DIV/MOD (truncating), which codegen emits as plain udiv.
 * DIV/MOD (only ever introduced here, with numerator >= 0) are treated like the floor forms
 * where the numerator is again provably >= 0, and are otherwise only constant folded.
 */
#include "arith/arith.h"

static int is_floor(ir_expr_kind k) { return k == IR_FLOORDIV || k == IR_FLOORMOD; }
static int is_div(ir_expr_kind k) { return k == IR_FLOORDIV || k == IR_DIV; }

static int nonneg(const ir_expr *e, const arith_env *env) {
  arith_range r = arith_bound(e, env);
  return r.has_lo && r.lo >= 0;
}

static const ir_expr *fold_const(const ir_expr *e, int64_t a, int64_t b) {
  tec_dtype t = e->type;
  int64_t r;
  if (b == 0) return e;
  if (t.code == TEC_UINT) {
    uint64_t ua = (uint64_t)arith_wrap(t, a), ub = (uint64_t)arith_wrap(t, b);
    if (t.bits < 64) ua &= (UINT64_C(1) << t.bits) - 1, ub &= (UINT64_C(1) << t.bits) - 1;
    r = (int64_t)(is_div(e->kind) ? ua / ub : ua % ub);
  } else if (e->kind == IR_FLOORDIV) {
    if (!arith_floordiv64(a, b, &r)) return e;
  } else if (e->kind == IR_FLOORMOD) {
    if (!arith_floormod64(a, b, &r)) return e;
  } else {
    if (a == INT64_MIN && b == -1) return e;
    r = e->kind == IR_DIV ? a / b : a % b;
  }
  return arith_const(e->ctx, t, r);
}

/* The floor division/modulo of a by c as a (simplified) node, plain division if a >= 0. */
static const ir_expr *make(ir_expr_kind kind, const ir_expr *a, int64_t c, const arith_env *env) {
  if (!a) return NULL;
  const ir_expr *ce = ir_int_t(a->ctx, a->type, c);
  if (nonneg(a, env))
    return is_div(kind) ? ir_truncdiv(a, ce) : ir_truncmod(a, ce);
  return is_div(kind) ? ir_floordiv(a, ce) : ir_floormod(a, ce);
}

/* Adds two scalar index expressions canonically. */
static const ir_expr *canon_add(const ir_expr *a, const ir_expr *b) {
  if (!a || !b) return NULL;
  return arith_canonical(ir_add(a, b));
}

/* floor op of numerator x (a scalar index expression) by c > 0; kind is FLOORDIV/FLOORMOD.
 * NULL when a node could not be built. */
static const ir_expr *floor_by_const(ir_expr_kind kind, const ir_expr *x, int64_t c,
                                     const arith_env *env) {
  tec_ctx *ctx = x->ctx;
  tec_dtype t = x->type;
  if (c == 1) return kind == IR_FLOORDIV ? x : arith_const(ctx, t, 0);

  /* Nested divisions and modulos. */
  int64_t c1, cc;
  if (arith_is_imm(x->b, &c1) && c1 > 0) {
    int inner_div = x->kind == IR_FLOORDIV || (x->kind == IR_DIV && nonneg(x->a, env));
    int inner_mod = x->kind == IR_FLOORMOD || (x->kind == IR_MOD && nonneg(x->a, env));
    if (kind == IR_FLOORDIV && inner_div && !__builtin_mul_overflow(c1, c, &cc))
      return floor_by_const(kind, x->a, cc, env);
    if (kind == IR_FLOORMOD && inner_mod && c1 % c == 0) return floor_by_const(kind, x->a, c, env);
  }

  /* Split the linear form: x == q*c + rest. */
  arith_linear l, q, rest;
  arith_linear_init(&l, ctx, t);
  arith_linear_init(&q, ctx, t);
  arith_linear_init(&rest, ctx, t);
  arith_linear_add_expr(&l, x, 1);
  arith_linear_normalize(&l);
  const ir_expr *res = NULL;
  int nquot = 0;
  for (int i = 0; i < l.n; i++) {
    if (l.t[i].coef % c == 0) {
      arith_linear_add_term(&q, l.t[i].e, l.t[i].coef / c);
      nquot++;
    } else {
      arith_linear_add_term(&rest, l.t[i].e, l.t[i].coef);
    }
  }
  int64_t qc = 0, rc = 0;
  arith_floordiv64(l.c, c, &qc);
  arith_floormod64(l.c, c, &rc);
  int ok = !l.oom && !q.oom && !rest.oom;

  /* The rest with its constant reduced mod c, then with the constant kept: if either lies in
   * one period [k*c, k*c + c), the division is decided. */
  for (int pass = 0; pass < 2 && ok; pass++) {
    rest.c = pass == 0 ? rc : l.c;
    int64_t qconst = pass == 0 ? qc : 0;
    arith_range r = arith_linear_bound(&rest, env);
    int64_t k0, k1;
    if (!r.has_lo || !r.has_hi || !arith_floordiv64(r.lo, c, &k0) ||
        !arith_floordiv64(r.hi, c, &k1) || k0 != k1)
      continue;
    if (kind == IR_FLOORDIV) {
      q.c = qconst + k0;
      res = arith_linear_build(&q);
    } else {
      rest.c -= k0 * c;
      res = arith_linear_build(&rest);
    }
    goto done;
  }
  if (ok && nquot > 0) {
    /* Undecided: pull the divisible terms out, keep the constant inside. */
    rest.c = l.c;
    q.c = 0;
    const ir_expr *rx = arith_linear_build(&rest);
    const ir_expr *inner = rx ? floor_by_const(kind, rx, c, env) : NULL; /* no term divides */
    res = kind == IR_FLOORDIV ? canon_add(arith_linear_build(&q), inner) : inner;
    goto done;
  }
  /* Nothing to split: the node itself, as plain division when possible. */
  res = make(kind, x, c, env);
done:
  arith_linear_free(&l);
  arith_linear_free(&q);
  arith_linear_free(&rest);
  return res;
}

/* floordiv/floormod of a ramp by a broadcast constant. */
static const ir_expr *ramp_by_const(const ir_expr *e, ir_expr_kind kind, const ir_expr *ramp,
                                    int64_t c, const arith_env *env) {
  int64_t s;
  const ir_expr *base = ramp->a;
  int lanes = ramp->type.lanes;
  if (!base || !arith_is_index_type(base->type) || !arith_is_imm(ramp->b, &s) || s < 0) return e;
  if (s % c == 0) {
    /* (b + s*j) / c == b/c + (s/c)*j exactly. */
    const ir_expr *bq = floor_by_const(kind, base, c, env);
    if (!bq) return e;
    if (kind == IR_FLOORDIV) return ir_ramp(bq, ir_int_t(e->ctx, base->type, s / c), lanes);
    return ir_broadcast(bq, lanes);
  }
  arith_linear l, q, rest;
  arith_linear_init(&l, e->ctx, base->type);
  arith_linear_init(&q, e->ctx, base->type);
  arith_linear_init(&rest, e->ctx, base->type);
  arith_linear_add_expr(&l, base, 1);
  for (int i = 0; i < l.n; i++) {
    if (l.t[i].coef % c == 0)
      arith_linear_add_term(&q, l.t[i].e, l.t[i].coef / c);
    else
      arith_linear_add_term(&rest, l.t[i].e, l.t[i].coef);
  }
  int64_t qc = 0, rc = 0, span, k0, k1;
  const ir_expr *res = e;
  arith_floordiv64(l.c, c, &qc);
  arith_floormod64(l.c, c, &rc);
  rest.c = rc;
  arith_range r = arith_linear_bound(&rest, env);
  if (!l.oom && !q.oom && !rest.oom && r.has_lo && r.has_hi &&
      !__builtin_mul_overflow(s, (int64_t)(lanes - 1), &span) &&
      !__builtin_add_overflow(r.hi, span, &r.hi) && arith_floordiv64(r.lo, c, &k0) &&
      arith_floordiv64(r.hi, c, &k1) && k0 == k1) {
    if (kind == IR_FLOORDIV) {
      q.c = qc + k0;
      const ir_expr *b = arith_linear_build(&q);
      if (b) res = ir_broadcast(b, lanes);
    } else {
      rest.c -= k0 * c;
      const ir_expr *b = arith_linear_build(&rest);
      if (b) res = ir_ramp(b, ramp->b, lanes);
    }
  }
  arith_linear_free(&l);
  arith_linear_free(&q);
  arith_linear_free(&rest);
  return res ? res : e;
}

const ir_expr *arith_rewrite_div(const ir_expr *e, const arith_env *env) {
  const ir_expr *a = e->a, *b = e->b;
  if (!a || !b) return e;
  tec_dtype t = e->type;
  if (t.code == TEC_FLOAT) {
    double x, y;
    if (e->kind == IR_DIV && t.lanes == 1 && ir_is_const_float(a, &x) &&
        ir_is_const_float(b, &y) && y != 0 && a->kind == IR_FLOAT_IMM && b->kind == IR_FLOAT_IMM) {
      double r = x / y;
      if (t.bits == 32) r = (float)r;
      if (t.bits == 32 || t.bits == 64) return ir_float_t(e->ctx, t, r);
    }
    if (e->kind == IR_DIV && b->kind == IR_FLOAT_IMM && b->v.f == 1.0) return a;
    return e;
  }
  if (t.code != TEC_INT && t.code != TEC_UINT) return e;
  int64_t x, c;
  if (t.lanes == 1 && arith_is_imm(a, &x) && arith_is_imm(b, &c)) return fold_const(e, x, c);
  if (t.code == TEC_UINT) return e;
  if (t.lanes > 1) {
    if (b->kind == IR_BROADCAST && arith_is_imm(b->a, &c) && c > 0) {
      if (a->kind == IR_BROADCAST && a->a) {
        const ir_expr *s = ir_expr_with(e, a->a, b->a, NULL, NULL);
        s = s ? arith_rewrite(s, env) : NULL;
        return s ? ir_broadcast(s, t.lanes) : e;
      }
      if (a->kind == IR_RAMP && is_floor(e->kind)) return ramp_by_const(e, e->kind, a, c, env);
    }
    return e;
  }
  if (!arith_is_index_type(t) || !arith_is_imm(b, &c) || c <= 0) return e;
  if (!is_floor(e->kind)) {
    if (c == 1) return e->kind == IR_DIV ? a : arith_const(e->ctx, t, 0);
    if (!nonneg(a, env)) return e;
  }
  ir_expr_kind k = e->kind == IR_DIV ? IR_FLOORDIV : e->kind == IR_MOD ? IR_FLOORMOD : e->kind;
  const ir_expr *r = floor_by_const(k, a, c, env);
  return r ? r : e;
}

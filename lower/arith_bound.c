/* arith_bound.c — the env of known facts and interval analysis of integer expressions.
 *
 *   env: i.outer in [0, 12], i.inner in [0, 7]
 *   arith_bound(i.outer*8 + i.inner)          -> [0, 103]
 *   arith_bound(floormod(i.outer*8 + 3, 8))   -> [0, 7]   (the linear form is bounded, so
 *                                                 (i*4 + j) - i*4 is bounded like j)
 *   arith_prove(i.inner < 8)                  -> 1        (simplify, then look for `true`)
 *
 * Every side of a range is either exact-or-looser or unknown; overflow makes a side unknown.
 */
#include <stdlib.h>
#include <string.h>
#include "lower/arith.h"

/* ---- env ---- */

arith_env *arith_env_new(tec_ctx *ctx) {
  arith_env *env = tec_ctx_alloc(ctx, sizeof *env);
  if (env) env->ctx = ctx;
  return env;
}

static struct arith_fact *env_slot(arith_env *env) {
  if (env->n == env->cap) {
    int cap = env->cap ? env->cap * 2 : 16;
    struct arith_fact *f = tec_ctx_alloc(env->ctx, sizeof *f * (size_t)cap);
    if (!f) return NULL;
    if (env->n) memcpy(f, env->facts, sizeof *f * (size_t)env->n);
    env->facts = f;
    env->cap = cap;
  }
  struct arith_fact *s = &env->facts[env->n++];
  memset(s, 0, sizeof *s);
  return s;
}

void arith_env_push(arith_env *env, const ir_expr *var, arith_range r) {
  if (!env) return;
  struct arith_fact *f = env_slot(env);
  if (!f) return; /* out of memory: the fact is just not known */
  f->var = var;
  f->r = r;
}

void arith_env_push_loop(arith_env *env, const ir_expr *var, const ir_expr *min,
                         const ir_expr *extent) {
  if (!env) return;
  arith_range rm = arith_bound(min, env), re = arith_bound(extent, env);
  arith_range r = arith_range_unknown();
  if (rm.has_lo) r.lo = rm.lo, r.has_lo = 1;
  if (rm.has_hi && re.has_hi) {
    arith_range s = arith_range_add(arith_range_of(rm.hi, rm.hi), arith_range_of(re.hi, re.hi));
    if (s.has_hi && s.hi > INT64_MIN) r.hi = s.hi - 1, r.has_hi = 1;
  }
  int64_t v;
  const ir_expr *smin = NULL, *smax = NULL;
  if (min && extent && arith_is_index_type(min->type) &&
      tec_dtype_eq(min->type, extent->type) && !(arith_is_imm(min, &v) && arith_is_imm(extent, &v))) {
    smin = min;
    smax = arith_canonical(ir_sub(ir_add(min, extent), ir_int_t(min->ctx, min->type, 1)));
  }
  struct arith_fact *f = env_slot(env);
  if (!f) return;
  f->var = var;
  f->r = r;
  f->smin = smin;
  f->smax = smax;
}

void arith_env_push_fact(arith_env *env, const struct arith_fact *f) {
  if (!env || !f) return;
  struct arith_fact *s = env_slot(env);
  if (s) *s = *f;
}

static ir_expr_kind flip_cmp(ir_expr_kind k) {
  switch (k) {
  case IR_LT: return IR_GT;
  case IR_LE: return IR_GE;
  case IR_GT: return IR_LT;
  case IR_GE: return IR_LE;
  default: return k;
  }
}

void arith_env_assume(arith_env *env, const ir_expr *cond) {
  if (!env || !cond) return;
  if (cond->kind == IR_AND) {
    arith_env_assume(env, cond->a);
    arith_env_assume(env, cond->b);
    return;
  }
  if (ir_likely_arg(cond)) {
    arith_env_assume(env, ir_likely_arg(cond)); /* likely(c) is c */
    return;
  }
  ir_expr_kind k = cond->kind;
  if (k != IR_LT && k != IR_LE && k != IR_GT && k != IR_GE && k != IR_EQ) return;
  const ir_expr *v = cond->a, *b = cond->b;
  if (!v || !b) return;
  if (v->kind != IR_VAR) {
    const ir_expr *t = v;
    v = b, b = t, k = flip_cmp(k);
  }
  if (v->kind != IR_VAR || !arith_is_index_type(v->type) || !tec_dtype_eq(v->type, b->type) ||
      ir_uses_var(b, v))
    return;
  const struct arith_fact *old = arith_env_find(env, v);
  struct arith_fact f = {v, arith_range_unknown(), NULL, NULL};
  if (old) f = *old;
  arith_range rb = arith_bound(b, env), nr = arith_range_unknown();
  int64_t c;
  int is_const = arith_is_imm(b, &c);
  const ir_expr *one = ir_int_t(v->ctx, v->type, 1);
  if (k == IR_LT || k == IR_LE || k == IR_EQ) {
    int64_t adj = k == IR_LT ? 1 : 0;
    if (rb.has_hi && rb.hi > INT64_MIN + 1) nr.hi = rb.hi - adj, nr.has_hi = 1;
    if (!is_const) f.smax = k == IR_LT ? arith_canonical(ir_sub(b, one)) : b;
  }
  if (k == IR_GT || k == IR_GE || k == IR_EQ) {
    int64_t adj = k == IR_GT ? 1 : 0;
    if (rb.has_lo && rb.lo < INT64_MAX - 1) nr.lo = rb.lo + adj, nr.has_lo = 1;
    if (!is_const) f.smin = k == IR_GT ? arith_canonical(ir_add(b, one)) : b;
  }
  f.r = arith_range_intersect(f.r, nr);
  arith_env_push_fact(env, &f);
}

/* A push that failed for lack of memory did not count: callers pop back to a saved depth
 * (arith_env_depth), and popping too much only forgets facts, which is safe. */
void arith_env_pop(arith_env *env, int n) {
  if (!env || n <= 0) return;
  env->n = n > env->n ? 0 : env->n - n;
}

int arith_env_depth(const arith_env *env) { return env ? env->n : 0; }

const struct arith_fact *arith_env_find(const arith_env *env, const ir_expr *var) {
  if (!env) return NULL;
  for (int i = env->n - 1; i >= 0; i--)
    if (env->facts[i].var == var) return &env->facts[i];
  return NULL;
}

/* ---- constants and types ---- */

int64_t arith_wrap(tec_dtype t, int64_t v) {
  if (t.code == TEC_BOOL) return v != 0;
  if (t.bits >= 64 || t.bits == 0) return v;
  uint64_t mask = (UINT64_C(1) << t.bits) - 1, u = (uint64_t)v & mask;
  if (t.code == TEC_INT && (u >> (t.bits - 1)) & 1) u |= ~mask;
  return (int64_t)u;
}

arith_range arith_type_range(tec_dtype t) {
  if (t.code == TEC_BOOL) return arith_range_of(0, 1);
  if (t.code == TEC_INT && t.bits >= 1 && t.bits < 64)
    return arith_range_of(-(INT64_C(1) << (t.bits - 1)), (INT64_C(1) << (t.bits - 1)) - 1);
  if (t.code == TEC_UINT) {
    arith_range r = {0, 0, 1, 0};
    if (t.bits < 63) r.hi = (INT64_C(1) << t.bits) - 1, r.has_hi = 1;
    return r;
  }
  return arith_range_unknown();
}

const ir_expr *arith_const(tec_ctx *ctx, tec_dtype t, int64_t v) {
  tec_dtype s = tec_dtype_scalar(t);
  const ir_expr *c = s.code == TEC_BOOL ? ir_bool(ctx, v != 0) : ir_int_t(ctx, s, arith_wrap(s, v));
  return t.lanes > 1 ? ir_broadcast(c, t.lanes) : c;
}

int arith_floordiv64(int64_t a, int64_t b, int64_t *q) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
  int64_t d = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) d--;
  *q = d;
  return 1;
}

int arith_floormod64(int64_t a, int64_t b, int64_t *r) {
  if (b == 0) return 0;
  if (b == -1) return *r = 0, 1;
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  *r = m;
  return 1;
}

/* ---- range arithmetic ---- */

arith_range arith_range_add(arith_range a, arith_range b) {
  arith_range r = arith_range_unknown();
  if (a.has_lo && b.has_lo && !__builtin_add_overflow(a.lo, b.lo, &r.lo)) r.has_lo = 1;
  if (a.has_hi && b.has_hi && !__builtin_add_overflow(a.hi, b.hi, &r.hi)) r.has_hi = 1;
  return r;
}

arith_range arith_range_scale(arith_range a, int64_t k) {
  arith_range r = arith_range_unknown();
  if (k == 0) return arith_range_of(0, 0);
  int64_t x;
  if (k > 0) {
    if (a.has_lo && !__builtin_mul_overflow(a.lo, k, &x)) r.lo = x, r.has_lo = 1;
    if (a.has_hi && !__builtin_mul_overflow(a.hi, k, &x)) r.hi = x, r.has_hi = 1;
  } else {
    if (a.has_hi && !__builtin_mul_overflow(a.hi, k, &x)) r.lo = x, r.has_lo = 1;
    if (a.has_lo && !__builtin_mul_overflow(a.lo, k, &x)) r.hi = x, r.has_hi = 1;
  }
  return r;
}

arith_range arith_range_union(arith_range a, arith_range b) {
  arith_range r = arith_range_unknown();
  if (a.has_lo && b.has_lo) r.lo = a.lo < b.lo ? a.lo : b.lo, r.has_lo = 1;
  if (a.has_hi && b.has_hi) r.hi = a.hi > b.hi ? a.hi : b.hi, r.has_hi = 1;
  return r;
}

arith_range arith_range_intersect(arith_range a, arith_range b) {
  arith_range r = a;
  if (b.has_lo && (!r.has_lo || b.lo > r.lo)) r.lo = b.lo, r.has_lo = 1;
  if (b.has_hi && (!r.has_hi || b.hi < r.hi)) r.hi = b.hi, r.has_hi = 1;
  return r;
}

static arith_range range_mul(arith_range a, arith_range b) {
  if (a.has_lo && a.has_hi && a.lo == a.hi) return arith_range_scale(b, a.lo);
  if (b.has_lo && b.has_hi && b.lo == b.hi) return arith_range_scale(a, b.lo);
  arith_range r = arith_range_unknown();
  if (a.has_lo && a.has_hi && b.has_lo && b.has_hi) {
    int64_t p[4];
    if (__builtin_mul_overflow(a.lo, b.lo, &p[0]) || __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
        __builtin_mul_overflow(a.hi, b.lo, &p[2]) || __builtin_mul_overflow(a.hi, b.hi, &p[3]))
      return r;
    r = arith_range_of(p[0], p[0]);
    for (int i = 1; i < 4; i++) {
      if (p[i] < r.lo) r.lo = p[i];
      if (p[i] > r.hi) r.hi = p[i];
    }
  } else if (a.has_lo && b.has_lo && a.lo >= 0 && b.lo >= 0) {
    if (!__builtin_mul_overflow(a.lo, b.lo, &r.lo)) r.has_lo = 1;
  }
  return r;
}

static arith_range range_floordiv(arith_range a, arith_range d) {
  arith_range r = arith_range_unknown();
  if (!(d.has_lo && d.lo > 0)) return r; /* only positive divisors */
  int64_t q;
  if (d.has_hi && d.lo == d.hi) {
    if (a.has_lo && arith_floordiv64(a.lo, d.lo, &q)) r.lo = q, r.has_lo = 1;
    if (a.has_hi && arith_floordiv64(a.hi, d.lo, &q)) r.hi = q, r.has_hi = 1;
    return r;
  }
  /* floor(x / d) for d > 0 is extreme at the corners of the box. */
  if (a.has_lo) {
    if (a.lo >= 0) r.lo = 0, r.has_lo = 1; /* x >= 0, d large: 0 */
    else if (arith_floordiv64(a.lo, d.lo, &q)) r.lo = q, r.has_lo = 1;
  }
  if (a.has_hi) {
    if (a.hi >= 0 && arith_floordiv64(a.hi, d.lo, &q)) r.hi = q, r.has_hi = 1;
    else if (a.hi < 0) r.hi = -1, r.has_hi = 1; /* a negative x stays <= -1 */
  }
  return r;
}

static arith_range range_floormod(arith_range a, arith_range d) {
  arith_range r = arith_range_unknown();
  if (!(d.has_lo && d.lo > 0)) return r;
  r.lo = 0, r.has_lo = 1;
  if (d.has_hi) r.hi = d.hi - 1, r.has_hi = 1;
  if (d.has_hi && d.lo == d.hi && a.has_lo && a.has_hi) {
    int64_t qa, qb, ma, mb;
    if (arith_floordiv64(a.lo, d.lo, &qa) && arith_floordiv64(a.hi, d.lo, &qb) && qa == qb &&
        arith_floormod64(a.lo, d.lo, &ma) && arith_floormod64(a.hi, d.lo, &mb))
      return arith_range_of(ma, mb);
  }
  if (a.has_lo && a.lo >= 0 && a.has_hi && a.hi < d.lo) return a;
  return r;
}

/* Truncating division and modulo with a constant positive divisor. */
static arith_range range_truncdiv(arith_range a, arith_range d) {
  arith_range r = arith_range_unknown();
  if (!(d.has_lo && d.has_hi && d.lo == d.hi && d.lo > 0)) {
    if (a.has_lo && a.lo >= 0) return range_floordiv(a, d);
    return r;
  }
  if (a.has_lo) r.lo = a.lo / d.lo, r.has_lo = 1;
  if (a.has_hi) r.hi = a.hi / d.lo, r.has_hi = 1;
  return r;
}

static arith_range range_truncmod(arith_range a, arith_range d) {
  if (a.has_lo && a.lo >= 0) return range_floormod(a, d);
  arith_range r = arith_range_unknown();
  if (!(d.has_lo && d.has_hi && d.lo == d.hi && d.lo > 0)) return r;
  int64_t c = d.lo;
  r.lo = a.has_lo ? (a.lo > -(c - 1) ? a.lo : -(c - 1)) : -(c - 1);
  r.hi = a.has_hi ? (a.hi <= 0 ? 0 : (a.hi < c - 1 ? a.hi : c - 1)) : c - 1;
  r.has_lo = r.has_hi = 1;
  return r;
}

static arith_range range_min(arith_range a, arith_range b) {
  arith_range r = arith_range_unknown();
  if (a.has_lo && b.has_lo) r.lo = a.lo < b.lo ? a.lo : b.lo, r.has_lo = 1;
  if (a.has_hi || b.has_hi) {
    r.has_hi = 1;
    r.hi = !a.has_hi ? b.hi : !b.has_hi ? a.hi : (a.hi < b.hi ? a.hi : b.hi);
  }
  return r;
}

static arith_range range_max(arith_range a, arith_range b) {
  arith_range r = arith_range_unknown();
  if (a.has_hi && b.has_hi) r.hi = a.hi > b.hi ? a.hi : b.hi, r.has_hi = 1;
  if (a.has_lo || b.has_lo) {
    r.has_lo = 1;
    r.lo = !a.has_lo ? b.lo : !b.has_lo ? a.lo : (a.lo > b.lo ? a.lo : b.lo);
  }
  return r;
}

/* ---- bounds ---- */

arith_range arith_linear_bound(const arith_linear *l, const arith_env *env) {
  if (l->oom) return arith_range_unknown();
  arith_range r = arith_range_of(l->c, l->c);
  for (int i = 0; i < l->n && (r.has_lo || r.has_hi); i++)
    r = arith_range_add(r, arith_range_scale(arith_bound(l->t[i].e, env), l->t[i].coef));
  return r;
}

static arith_range bound_rec(const ir_expr *e, const arith_env *env) {
  arith_range a, b;
  int64_t v;
  switch (e->kind) {
  case IR_INT_IMM:
    if (e->type.code == TEC_UINT && e->v.i < 0) return arith_range_unknown();
    return arith_range_of(e->v.i, e->v.i);
  case IR_VAR: {
    const struct arith_fact *f = arith_env_find(env, e);
    if (f) return f->r;
    if (e->v.i == IR_VAR_SIZE) return (arith_range){0, 0, 1, 0}; /* sizes are >= 0 */
    return arith_range_unknown();
  }
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
    if (e->kind == IR_MUL && !arith_is_imm(e->a, NULL) && !arith_is_imm(e->b, NULL)) {
      if (!e->a || !e->b) return arith_range_unknown();
      return range_mul(bound_rec(e->a, env), bound_rec(e->b, env));
    } else {
      arith_linear l;
      arith_linear_init(&l, e->ctx, e->type);
      arith_linear_add_expr(&l, e, 1);
      arith_range r = arith_linear_bound(&l, env);
      arith_linear_free(&l);
      return r;
    }
  case IR_FLOORDIV:
  case IR_FLOORMOD:
  case IR_DIV:
  case IR_MOD:
    if (!e->a || !e->b) return arith_range_unknown();
    a = bound_rec(e->a, env), b = bound_rec(e->b, env);
    if (e->kind == IR_FLOORDIV) return range_floordiv(a, b);
    if (e->kind == IR_FLOORMOD) return range_floormod(a, b);
    if (e->kind == IR_DIV) return range_truncdiv(a, b);
    return range_truncmod(a, b);
  case IR_MIN:
  case IR_MAX:
    if (!e->a || !e->b) return arith_range_unknown();
    a = bound_rec(e->a, env), b = bound_rec(e->b, env);
    return e->kind == IR_MIN ? range_min(a, b) : range_max(a, b);
  case IR_SELECT:
    if (!e->a || !e->b || !e->c) return arith_range_unknown();
    if (ir_is_const_int(e->a, &v)) return bound_rec(v ? e->b : e->c, env);
    return arith_range_union(bound_rec(e->b, env), bound_rec(e->c, env));
  case IR_CAST: {
    if (!e->a) return arith_range_unknown();
    arith_range t = arith_type_range(e->type);
    if (e->a->type.code == TEC_BOOL) return arith_range_of(0, 1);
    if (e->a->type.code != TEC_INT && e->a->type.code != TEC_UINT) return t;
    a = bound_rec(e->a, env);
    /* An int that fits the target type is unchanged by the cast. */
    if (a.has_lo && a.has_hi && (!t.has_lo || a.lo >= t.lo) && (!t.has_hi || a.hi <= t.hi))
      return a;
    if (e->type.code == TEC_INT && e->type.bits == 64 && e->a->type.code == TEC_INT) return a;
    return t;
  }
  case IR_BROADCAST:
    return e->a ? bound_rec(e->a, env) : arith_range_unknown();
  case IR_RAMP: {
    if (!e->a || !e->b) return arith_range_unknown();
    arith_range lanes = arith_range_of(0, e->type.lanes - 1);
    return arith_range_add(bound_rec(e->a, env), range_mul(bound_rec(e->b, env), lanes));
  }
  case IR_LET: {
    if (!e->a || !e->b || !e->var || !env) return arith_range_unknown();
    arith_env *w = (arith_env *)env; /* restored below */
    int d = w->n;
    arith_env_push(w, e->var, bound_rec(e->a, env));
    arith_range r = bound_rec(e->b, env);
    arith_env_pop(w, w->n - d);
    return r;
  }
  case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
  case IR_AND: case IR_OR: case IR_NOT:
    return arith_range_of(0, 1);
  default:
    return arith_range_unknown();
  }
}

arith_range arith_bound(const ir_expr *e, const arith_env *env) {
  if (!e) return arith_range_unknown();
  tec_dtype t = e->type;
  if (t.code != TEC_INT && t.code != TEC_UINT && t.code != TEC_BOOL) return arith_range_unknown();
  arith_range tr = arith_type_range(t);
  /* Unsigned arithmetic wraps; only constants and the type's range are trusted. */
  if (t.code == TEC_UINT && e->kind != IR_INT_IMM && e->kind != IR_BROADCAST) return tr;
  arith_range r = bound_rec(e, env);
  r = arith_range_intersect(r, tr);
  if (r.has_lo && r.has_hi && r.lo > r.hi) return tr; /* contradictory facts: trust nothing */
  return r;
}

int arith_prove(const ir_expr *cond, const arith_env *env) {
  if (!cond) return 0;
  const ir_expr *s = arith_simplify(cond, env);
  int64_t v;
  return s && ir_is_const_int(s, &v) && v != 0;
}

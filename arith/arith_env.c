/* arith_env.c — the env of known facts (var in [lo, hi], with symbolic bounds), constants
 * and types of the integer arithmetic, and proofs:
 *
 *   arith_env_push_loop(env, i.inner, 0, 8)    i.inner in [0, 7]
 *   arith_env_assume(env, i < n)               i's upper bound becomes n - 1
 *   arith_prove(i.inner < 8, env)              -> 1  (simplify, then look for `true`)
 *
 * The ranges themselves (arith_bound, arith_interval) are computed in arith_interval.c.
 */
#include <stdlib.h>
#include <string.h>
#include "arith/arith.h"

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

int arith_prove(const ir_expr *cond, const arith_env *env) {
  if (!cond) return 0;
  const ir_expr *s = arith_simplify(cond, env);
  int64_t v;
  return s && ir_is_const_int(s, &v) && v != 0;
}

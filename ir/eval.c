/* eval.c — the integer evaluator of IR expressions (ir/eval.h): one recursion, one case per
 * node kind, C arithmetic on int64_t with the IR's floor division written out. */
#include "ir/eval.h"

/* v wrapped to an integer type of `bits` bits (sign- or zero-extended back to 64). */
static int64_t wrap(int64_t v, tec_dtype t) {
  if (t.code == TEC_BOOL) return v != 0;
  if (t.bits >= 64 || t.bits <= 0) return v;
  uint64_t m = ((uint64_t)1 << t.bits) - 1, u = (uint64_t)v & m;
  if (t.code == TEC_INT && (u >> (t.bits - 1))) u |= ~m;
  return (int64_t)u;
}

static int64_t undefined(ir_eval_env *env) {
  env->bad = 1;
  return 0;
}

int64_t ir_eval_int(const ir_expr *e, ir_eval_env *env) {
  if (!e || e->type.lanes != 1) return undefined(env);
  if (e->type.code != TEC_INT && e->type.code != TEC_UINT && e->type.code != TEC_BOOL)
    return undefined(env);
  int64_t a, b;
  switch (e->kind) {
  case IR_INT_IMM: return e->v.i;
  case IR_VAR:
    for (int i = 0; i < env->n; i++)
      if (env->vars[i] == e) return env->vals[i];
    return undefined(env);
  case IR_CAST:
    if (e->a->type.code == TEC_FLOAT) return undefined(env);
    return wrap(ir_eval_int(e->a, env), e->type);
  case IR_ADD: return (int64_t)((uint64_t)ir_eval_int(e->a, env) + (uint64_t)ir_eval_int(e->b, env));
  case IR_SUB: return (int64_t)((uint64_t)ir_eval_int(e->a, env) - (uint64_t)ir_eval_int(e->b, env));
  case IR_MUL: return (int64_t)((uint64_t)ir_eval_int(e->a, env) * (uint64_t)ir_eval_int(e->b, env));
  case IR_FLOORDIV:
  case IR_FLOORMOD:
  case IR_DIV:
  case IR_MOD: {
    a = ir_eval_int(e->a, env), b = ir_eval_int(e->b, env);
    if (b == 0 || (a == INT64_MIN && b == -1)) return undefined(env);
    int trunc = e->kind == IR_DIV || e->kind == IR_MOD;
    if (trunc && env->strict_trunc && (a < 0 || b < 0)) return undefined(env);
    int64_t q = a / b, r = a % b;
    if (!trunc && r != 0 && ((r < 0) != (b < 0))) q--, r += b;
    return e->kind == IR_FLOORDIV || e->kind == IR_DIV ? q : r;
  }
  case IR_MIN: a = ir_eval_int(e->a, env), b = ir_eval_int(e->b, env); return a < b ? a : b;
  case IR_MAX: a = ir_eval_int(e->a, env), b = ir_eval_int(e->b, env); return a > b ? a : b;
  case IR_EQ: return ir_eval_int(e->a, env) == ir_eval_int(e->b, env);
  case IR_NE: return ir_eval_int(e->a, env) != ir_eval_int(e->b, env);
  case IR_LT: return ir_eval_int(e->a, env) < ir_eval_int(e->b, env);
  case IR_LE: return ir_eval_int(e->a, env) <= ir_eval_int(e->b, env);
  case IR_GT: return ir_eval_int(e->a, env) > ir_eval_int(e->b, env);
  case IR_GE: return ir_eval_int(e->a, env) >= ir_eval_int(e->b, env);
  case IR_AND: a = ir_eval_int(e->a, env), b = ir_eval_int(e->b, env); return a && b;
  case IR_OR: a = ir_eval_int(e->a, env), b = ir_eval_int(e->b, env); return a || b;
  case IR_NOT: return !ir_eval_int(e->a, env);
  case IR_SELECT:
    return ir_eval_int(e->a, env) ? ir_eval_int(e->b, env) : ir_eval_int(e->c, env);
  default: return undefined(env);
  }
}

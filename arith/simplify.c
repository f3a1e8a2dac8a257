/* simplify.c — lower_simplify: the simplification pass over a loop program.
 *
 * Walks the statements with an arith_env holding the range of every enclosing loop variable
 * (and LET variable) and simplifies every expression with arith_simplify. Statements:
 *
 *   for (i.outer, 0, 13) {                         for (i.outer, 0, 13) {
 *     for (i.inner, 0, 8) {                          for (i.inner, 0, 8) {
 *       for (j, 0, 1) {                                if (((i.outer*8) + i.inner) < 100) {
 *         if ((i.outer*8 + i.inner) < 100) {   ->        B[((i.outer*8) + i.inner)] = ...
 *           if (i.inner < 8) {                         }
 *             B[...] = ...                           }
 *                                                  }
 *
 * - FOR of extent 1: the variable is replaced by the loop's min and the loop dropped;
 *   extent <= 0: the loop is removed, and a statement whose body is removed goes too.
 * - IF with a provable (or refutable) condition: the branch taken. Inside a branch, what
 *   the condition says about a variable (`x < 10`, `x >= n`) tightens its range.
 * - STORE with a false predicate is removed; a true predicate is dropped.
 * - Nothing changed: the same pointer comes back.
 */
#include "arith/arith.h"

static int const_truth(const ir_expr *e, int *v) {
  int64_t x;
  if (!e || !ir_is_const_int(e, &x)) return 0;
  *v = x != 0;
  return 1;
}

static const ir_stmt *simp_for(ir_mutator *m, const ir_stmt *s) {
  arith_env *env = m->user;
  const ir_expr *min = ir_mutate_expr(m, s->a), *ext = ir_mutate_expr(m, s->b);
  if (!min || !ext || !s->var) return ir_mutate_stmt_default(m, s);
  arith_range re = arith_bound(ext, env);
  if (re.has_hi && re.hi <= 0) return NULL; /* never runs */
  int64_t n;
  if (arith_is_imm(ext, &n) && n == 1) {
    const ir_stmt *body = ir_substitute_stmt(s->body, 1, &s->var, &min);
    return body ? ir_mutate_stmt(m, body) : NULL;
  }
  int depth = arith_env_depth(env);
  arith_env_push_loop(env, s->var, min, ext);
  const ir_stmt *body = ir_mutate_stmt(m, s->body);
  arith_env_pop(env, arith_env_depth(env) - depth);
  if (!body) return NULL;
  return ir_stmt_with(s, min, ext, s->c, body, s->else_body, s->seq, s->args);
}

static const ir_stmt *simp_if(ir_mutator *m, const ir_stmt *s) {
  const ir_expr *cond = ir_mutate_expr(m, s->a);
  int v;
  if (cond && const_truth(cond, &v)) return ir_mutate_stmt(m, v ? s->body : s->else_body);
  if (!cond) return ir_mutate_stmt_default(m, s);
  /* Each branch knows its condition (or its negation) holds. */
  arith_env *env = m->user;
  int depth = arith_env_depth(env);
  arith_env_assume(env, cond);
  const ir_stmt *then_s = ir_mutate_stmt(m, s->body);
  arith_env_pop(env, arith_env_depth(env) - depth);
  const ir_stmt *else_s = NULL;
  if (s->else_body) {
    arith_env_assume(env, arith_simplify(ir_not(cond), env));
    else_s = ir_mutate_stmt(m, s->else_body);
    arith_env_pop(env, arith_env_depth(env) - depth);
  }
  if (!then_s && !else_s) return NULL;
  if (!then_s) {
    const ir_expr *nc = arith_simplify(ir_not(cond), m->user);
    const ir_stmt *r = nc ? ir_if(nc, else_s, NULL) : NULL;
    return r ? r : s;
  }
  return ir_stmt_with(s, cond, s->b, s->c, then_s, else_s, s->seq, s->args);
}

static const ir_stmt *simp_let_stmt(ir_mutator *m, const ir_stmt *s) {
  arith_env *env = m->user;
  const ir_expr *val = ir_mutate_expr(m, s->a);
  if (!val || !s->var) return ir_mutate_stmt_default(m, s);
  int depth = arith_env_depth(env);
  if (arith_is_index_type(s->var->type)) arith_env_push(env, s->var, arith_bound(val, env));
  const ir_stmt *body = ir_mutate_stmt(m, s->body);
  arith_env_pop(env, arith_env_depth(env) - depth);
  if (!body) return NULL;
  return ir_stmt_with(s, val, s->b, s->c, body, s->else_body, s->seq, s->args);
}

static const ir_stmt *simp_store(ir_mutator *m, const ir_stmt *s) {
  const ir_expr *idx = ir_mutate_expr(m, s->a), *val = ir_mutate_expr(m, s->b);
  const ir_expr *pred = ir_mutate_expr(m, s->c);
  int v;
  if (pred && const_truth(pred, &v)) {
    if (!v) return NULL;
    pred = NULL;
  }
  if (!idx || !val) return s;
  return ir_stmt_with(s, idx, val, pred, s->body, s->else_body, s->seq, s->args);
}

static const ir_stmt *simp_evaluate(ir_mutator *m, const ir_stmt *s) {
  const ir_expr *a = ir_mutate_expr(m, s->a);
  if (a && (a->kind == IR_INT_IMM || a->kind == IR_FLOAT_IMM || a->kind == IR_VAR))
    return NULL; /* no effect */
  if (!a) return s;
  return ir_stmt_with(s, a, s->b, s->c, s->body, s->else_body, s->seq, s->args);
}

/* An assert whose condition folds to true checks nothing (an extern stage's region check the
 * loop ranges prove, lower/extern_nest.c). */
static const ir_stmt *simp_assert(ir_mutator *m, const ir_stmt *s) {
  const ir_stmt *r = ir_mutate_stmt_default(m, s);
  int64_t v;
  return r && ir_is_const_int(r->a, &v) && v ? NULL : r;
}

const ir_stmt *lower_simplify(const ir_stmt *s) {
  if (!s) return NULL;
  arith_env *env = arith_env_new(s->ctx);
  if (!env) return s;
  ir_mutator m;
  ir_mutator_init(&m, s->ctx, env);
  arith_simplify_mutator(&m);
  m.stmt[IR_S_FOR] = simp_for;
  m.stmt[IR_S_IF] = simp_if;
  m.stmt[IR_S_LET_STMT] = simp_let_stmt;
  m.stmt[IR_S_STORE] = simp_store;
  m.stmt[IR_S_EVALUATE] = simp_evaluate;
  m.stmt[IR_S_ASSERT] = simp_assert;
  return ir_mutate_stmt(&m, s);
}

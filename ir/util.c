/* util.c — substitution, variable use and structural equality, shared by many passes. */
#include "tec/te.h"

typedef struct subst {
  int n;
  const ir_expr *const *vars;
  const ir_expr *const *values;
} subst;

static const ir_expr *subst_var(ir_mutator *m, const ir_expr *e) {
  subst *s = m->user;
  for (int i = 0; i < s->n; i++)
    if (s->vars[i] == e) return s->values[i];
  return e;
}

static void subst_init(ir_mutator *m, tec_ctx *ctx, subst *s) {
  ir_mutator_init(m, ctx, s);
  m->expr[IR_VAR] = subst_var;
}

const ir_expr *ir_substitute(const ir_expr *e, int n, const ir_expr *const *vars,
                             const ir_expr *const *values) {
  if (!e || n == 0) return e;
  subst s = {n, vars, values};
  ir_mutator m;
  subst_init(&m, e->ctx, &s);
  return ir_mutate_expr(&m, e);
}

const ir_stmt *ir_substitute_stmt(const ir_stmt *st, int n, const ir_expr *const *vars,
                                  const ir_expr *const *values) {
  if (!st || n == 0) return st;
  subst s = {n, vars, values};
  ir_mutator m;
  subst_init(&m, st->ctx, &s);
  return ir_mutate_stmt(&m, st);
}

typedef struct uses {
  const ir_expr *var;
  int found;
} uses;

static void uses_expr(ir_visitor *v, const ir_expr *e) {
  uses *u = v->user;
  if (u->found) return;
  if (e == u->var || e->var == u->var) {
    u->found = 1;
    return;
  }
  ir_visit_expr_default(v, e);
}
static void uses_stmt(ir_visitor *v, const ir_stmt *s) {
  uses *u = v->user;
  if (u->found) return;
  if (s->var == u->var) {
    u->found = 1;
    return;
  }
  ir_visit_stmt_default(v, s);
}

int ir_uses_var(const ir_expr *e, const ir_expr *var) {
  uses u = {var, 0};
  ir_visitor v;
  ir_visitor_init(&v, &u);
  for (int i = 0; i < IR_EXPR_KIND_COUNT; i++) v.expr[i] = uses_expr;
  ir_visit_expr(&v, e);
  return u.found;
}

int ir_stmt_uses_var(const ir_stmt *s, const ir_expr *var) {
  uses u = {var, 0};
  ir_visitor v;
  ir_visitor_init(&v, &u);
  for (int i = 0; i < IR_EXPR_KIND_COUNT; i++) v.expr[i] = uses_expr;
  for (int i = 0; i < IR_STMT_KIND_COUNT; i++) v.stmt[i] = uses_stmt;
  ir_visit_stmt(&v, s);
  return u.found;
}

int ir_expr_equal(const ir_expr *a, const ir_expr *b) {
  if (a == b) return 1;
  if (!a || !b || a->kind != b->kind || !tec_dtype_eq(a->type, b->type)) return 0;
  switch (a->kind) {
  case IR_INT_IMM: return a->v.i == b->v.i;
  case IR_FLOAT_IMM: return a->v.f == b->v.f;
  case IR_VAR: return 0; /* distinct pointers: distinct variables */
  default: break;
  }
  if (a->kind == IR_CALL || a->kind == IR_REDUCE) {
    if (a->v.i != b->v.i) return 0;
    if (a->reducer != b->reducer || a->value_index != b->value_index) return 0;
  }
  if (a->tensor != b->tensor || a->var != b->var || a->nargs != b->nargs) return 0;
  if (!ir_expr_equal(a->a, b->a) || !ir_expr_equal(a->b, b->b) || !ir_expr_equal(a->c, b->c))
    return 0;
  for (int i = 0; i < a->nargs; i++)
    if (!ir_expr_equal(a->args[i], b->args[i])) return 0;
  return 1;
}

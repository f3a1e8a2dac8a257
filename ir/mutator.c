/* mutator.c — default mutator and visitor tables.
 *
 * The default slot of every kind recurses into the children (a, b, c, args; body, else,
 * seq) and rebuilds a node only when a child changed. A statement whose body a mutator
 * removes (returns NULL) disappears too; an IF whose then-branch vanishes keeps its
 * else-branch under the negated condition; SEQ drops removed items. */
#include "tec/te.h"

static const ir_expr *const *mutate_args(ir_mutator *m, int n, const ir_expr *const *args) {
  if (!args) return NULL;
  const ir_expr **out = NULL;
  for (int i = 0; i < n; i++) {
    const ir_expr *x = ir_mutate_expr(m, args[i]);
    if (x != args[i] && !out) {
      out = tec_ctx_alloc(m->ctx, sizeof *out * (size_t)(n ? n : 1));
      if (!out) return args;
      for (int j = 0; j < i; j++) out[j] = args[j];
    }
    if (out) out[i] = x;
  }
  return out ? out : args;
}

const ir_expr *ir_mutate_expr_default(ir_mutator *m, const ir_expr *e) {
  const ir_expr *a = ir_mutate_expr(m, e->a);
  const ir_expr *b = ir_mutate_expr(m, e->b);
  const ir_expr *c = ir_mutate_expr(m, e->c);
  const ir_expr *const *args = mutate_args(m, e->nargs, e->args);
  return ir_expr_with(e, a, b, c, args);
}

const ir_stmt *ir_mutate_stmt_default(ir_mutator *m, const ir_stmt *s) {
  const ir_expr *a = ir_mutate_expr(m, s->a);
  const ir_expr *b = ir_mutate_expr(m, s->b);
  const ir_expr *c = ir_mutate_expr(m, s->c);
  int nargs = s->kind == IR_S_REALIZE ? 2 * s->n : s->n;
  const ir_expr *const *args = s->kind == IR_S_SEQ ? NULL : mutate_args(m, nargs, s->args);
  if (s->kind == IR_S_SEQ) {
    const ir_stmt **items = NULL;
    int dropped = 0;
    for (int i = 0; i < s->n; i++) {
      const ir_stmt *x = ir_mutate_stmt(m, s->seq[i]);
      if (x != s->seq[i] && !items) {
        items = tec_ctx_alloc(m->ctx, sizeof *items * (size_t)s->n);
        if (!items) return s;
        for (int j = 0; j < i; j++) items[j] = s->seq[j];
      }
      if (items) items[i] = x;
      if (!x) dropped = 1;
    }
    if (!items) return s;
    (void)dropped;
    return ir_seq(m->ctx, s->n, items);
  }
  const ir_stmt *body = ir_mutate_stmt(m, s->body);
  const ir_stmt *else_body = ir_mutate_stmt(m, s->else_body);
  if (s->body && !body) {
    if (s->kind == IR_S_IF && else_body) return ir_if(ir_not(a), else_body, NULL);
    return NULL;
  }
  return ir_stmt_with(s, a, b, c, body, else_body, s->seq, args);
}

static const ir_expr *expr_default(ir_mutator *m, const ir_expr *e) {
  return ir_mutate_expr_default(m, e);
}
static const ir_stmt *stmt_default(ir_mutator *m, const ir_stmt *s) {
  return ir_mutate_stmt_default(m, s);
}

void ir_mutator_init(ir_mutator *m, tec_ctx *ctx, void *user) {
  for (int i = 0; i < IR_EXPR_KIND_COUNT; i++) m->expr[i] = expr_default;
  for (int i = 0; i < IR_STMT_KIND_COUNT; i++) m->stmt[i] = stmt_default;
  m->ctx = ctx;
  m->user = user;
}

const ir_expr *ir_mutate_expr(ir_mutator *m, const ir_expr *e) {
  return e ? m->expr[e->kind](m, e) : NULL;
}
const ir_stmt *ir_mutate_stmt(ir_mutator *m, const ir_stmt *s) {
  return s ? m->stmt[s->kind](m, s) : NULL;
}

void ir_visit_expr_default(ir_visitor *v, const ir_expr *e) {
  ir_visit_expr(v, e->a);
  ir_visit_expr(v, e->b);
  ir_visit_expr(v, e->c);
  for (int i = 0; e->args && i < e->nargs; i++) ir_visit_expr(v, e->args[i]);
}

void ir_visit_stmt_default(ir_visitor *v, const ir_stmt *s) {
  ir_visit_expr(v, s->a);
  ir_visit_expr(v, s->b);
  ir_visit_expr(v, s->c);
  if (s->kind == IR_S_SEQ) {
    for (int i = 0; i < s->n; i++) ir_visit_stmt(v, s->seq[i]);
    return;
  }
  int nargs = s->kind == IR_S_REALIZE ? 2 * s->n : s->n;
  for (int i = 0; s->args && i < nargs; i++) ir_visit_expr(v, s->args[i]);
  ir_visit_stmt(v, s->body);
  ir_visit_stmt(v, s->else_body);
}

static void vexpr_default(ir_visitor *v, const ir_expr *e) { ir_visit_expr_default(v, e); }
static void vstmt_default(ir_visitor *v, const ir_stmt *s) { ir_visit_stmt_default(v, s); }

void ir_visitor_init(ir_visitor *v, void *user) {
  for (int i = 0; i < IR_EXPR_KIND_COUNT; i++) v->expr[i] = vexpr_default;
  for (int i = 0; i < IR_STMT_KIND_COUNT; i++) v->stmt[i] = vstmt_default;
  v->user = user;
}

void ir_visit_expr(ir_visitor *v, const ir_expr *e) {
  if (e) v->expr[e->kind](v, e);
}
void ir_visit_stmt(ir_visitor *v, const ir_stmt *s) {
  if (s) v->stmt[s->kind](v, s);
}

/* guard_loads.c — loads under a select happen only where their arm is taken.
 *
 *   select((h >= 1), A[(h - 1)], 0f)   ->   select((h >= 1), A[(h - 1)] if (h >= 1), 0f)
 * A predicated load reads nothing when its predicate is false (codegen), so the padding
 * idiom never touches memory outside the buffer. A likely() condition is copied as it is, so
 * loop partitioning drops it from the predicate where it drops it from the select. Runs after storage_flatten (loads exist) and
 * before vectorize (predicates become lane masks there). */
#include "tec/lower.h"
#include "lower/passes.h"

typedef struct guard {
  const ir_expr *pred; /* conjunction of the arms' conditions on the way down, or NULL */
} guard;

static const ir_expr *and_pred(const ir_expr *a, const ir_expr *b) {
  if (!a) return b;
  if (!b) return a;
  return ir_and(a, b);
}

static const ir_expr *guard_load(ir_mutator *m, const ir_expr *e) {
  guard *g = m->user;
  e = ir_mutate_expr_default(m, e);
  if (!e || !g->pred) return e;
  return ir_expr_with(e, e->a, e->b, and_pred(e->c, g->pred), e->args);
}

static const ir_expr *guard_select(ir_mutator *m, const ir_expr *e) {
  guard *g = m->user;
  const ir_expr *saved = g->pred;
  const ir_expr *c = ir_mutate_expr(m, e->a);
  if (c && c->type.lanes != 1) return ir_mutate_expr_default(m, e); /* vector cond: leave */
  g->pred = and_pred(saved, e->a);
  const ir_expr *t = ir_mutate_expr(m, e->b);
  g->pred = and_pred(saved, ir_not(e->a));
  const ir_expr *f = ir_mutate_expr(m, e->c);
  g->pred = saved;
  return ir_expr_with(e, c, t, f, e->args);
}

const ir_stmt *lower_guard_loads(const ir_stmt *s) {
  if (!s) return s;
  guard g = {NULL};
  ir_mutator m;
  ir_mutator_init(&m, s->ctx, &g);
  m.expr[IR_LOAD] = guard_load;
  m.expr[IR_SELECT] = guard_select;
  return ir_mutate_stmt(&m, s);
}

/* guard_loads.c — loads under a select happen only where their arm is taken.
 *
 *   select((h >= 1), A[(h - 1)], 0f)   ->   select((h >= 1), A[(h - 1)] if (h >= 1), 0f)
 * A predicated load reads nothing when its predicate is false (codegen), so the padding
 * idiom never touches memory outside the buffer. A likely() condition is copied as it is, so
 * loop partitioning drops it from the predicate where it drops it from the select.
 * The tails of splits with strategy predicate or round_up (schedule.h) arrive as
 *   attr tail_predicate (c) { body }        -> every load and store in body predicated on c
 *   attr tail_predicate_loads (c) { body }  -> every load in body predicated on c
 * (lower/schedule_ops.c makes them) and leave without the attr. Runs after storage_flatten
 * (loads exist) and before vectorize (predicates become lane masks there). */
#include "tec/lower.h"
#include <string.h>
#include "lower/passes.h"

typedef struct guard {
  const ir_expr *pred;  /* conjunction of the arms' conditions on the way down, or NULL */
  const ir_expr *tail;  /* loads: the tail predicates around, or NULL */
  const ir_expr *store; /* stores: the tail predicates around, or NULL */
} guard;

static const ir_expr *and_pred(const ir_expr *a, const ir_expr *b) {
  if (!a) return b;
  if (!b) return a;
  return ir_and(a, b);
}

static const ir_expr *guard_load(ir_mutator *m, const ir_expr *e) {
  guard *g = m->user;
  e = ir_mutate_expr_default(m, e);
  const ir_expr *p = and_pred(g->tail, g->pred);
  if (!e || !p) return e;
  return ir_expr_with(e, e->a, e->b, and_pred(e->c, p), e->args);
}

static const ir_stmt *tail_attr(ir_mutator *m, const ir_stmt *s) {
  guard *g = m->user;
  int all = s->name && strcmp(s->name, "tail_predicate") == 0;
  if (!all && !(s->name && strcmp(s->name, "tail_predicate_loads") == 0))
    return ir_mutate_stmt_default(m, s);
  guard saved = *g;
  g->tail = and_pred(g->tail, s->a);
  if (all) g->store = and_pred(g->store, s->a);
  const ir_stmt *body = ir_mutate_stmt(m, s->body);
  *g = saved;
  return body;
}

static const ir_stmt *tail_store(ir_mutator *m, const ir_stmt *s) {
  guard *g = m->user;
  s = ir_mutate_stmt_default(m, s);
  if (!s || !g->store) return s;
  return ir_stmt_with(s, s->a, s->b, and_pred(s->c, g->store), s->body, s->else_body, s->seq,
                      s->args);
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
  guard g = {NULL, NULL, NULL};
  ir_mutator m;
  ir_mutator_init(&m, s->ctx, &g);
  m.expr[IR_LOAD] = guard_load;
  m.expr[IR_SELECT] = guard_select;
  m.stmt[IR_S_ATTR] = tail_attr;
  m.stmt[IR_S_STORE] = tail_store;
  return ir_mutate_stmt(&m, s);
}

/* launch_check.c — lower_launch_check: a loop marked pragma parallel_launch_point must not be
 * inside a parallel loop (the pool is entered once, at the marked loop; inside a parallel loop
 * every thread is already in it).
 *
 *   for (i.outer, 0, 8) parallel {                  tec_lower fails:
 *     attr pragma_parallel_launch_point {     ->     "pragma parallel_launch_point: loop
 *       for (k.outer, 0, 4) { ... } } }               'k.outer' is inside parallel loop ..."
 *
 * It only reads the program (after schedule_ops, where the pragma's ATTR appears). */
#include <string.h>
#include "lower/passes.h"

typedef struct lc_state {
  tec_ctx *ctx;
  const char *fn;
  const ir_expr *par; /* the innermost enclosing parallel loop's variable, or NULL */
  int bad;
} lc_state;

static void lc_for(ir_visitor *v, const ir_stmt *s) {
  lc_state *st = v->user;
  const ir_expr *saved = st->par;
  if (s->for_kind == IR_FOR_PARALLEL) st->par = s->var;
  ir_visit_stmt_default(v, s);
  st->par = saved;
}

static void lc_attr(ir_visitor *v, const ir_stmt *s) {
  lc_state *st = v->user;
  if (st->par && !st->bad && s->name && strcmp(s->name, "pragma_parallel_launch_point") == 0) {
    const ir_stmt *loop = s->body;
    while (loop && loop->kind == IR_S_ATTR) loop = loop->body;
    const char *name = loop && loop->kind == IR_S_FOR && loop->var->name ? loop->var->name : "?";
    st->bad = 1;
    tec_ctx_set_error(st->ctx, "tec_lower '%s': pragma parallel_launch_point: loop '%s' is inside "
                               "parallel loop '%s', where every thread already runs; put the "
                               "pragma on '%s' or on a loop outside it",
                      st->fn, name, st->par->name ? st->par->name : "?",
                      st->par->name ? st->par->name : "?");
    return;
  }
  ir_visit_stmt_default(v, s);
}

int lower_launch_check(tec_ctx *ctx, const char *fn, const ir_stmt *body) {
  lc_state st = {ctx, fn, NULL, 0};
  ir_visitor v;
  ir_visitor_init(&v, &st);
  v.stmt[IR_S_FOR] = lc_for;
  v.stmt[IR_S_ATTR] = lc_attr;
  ir_visit_stmt(&v, body);
  return st.bad ? -1 : 0;
}

/* unroll.c — lower_unroll: UNROLLED loops of constant extent become straight-line code.
 *
 *   for (k, 0, 3) unrolled {                 C[i] = (C[i] + A[(i + 0)])
 *     C[i] = (C[i] + A[(i + k)])      ->     C[i] = (C[i] + A[(i + 1)])
 *   }                                        C[i] = (C[i] + A[(i + 2)])
 *
 * Each copy is the body with the variable replaced by min + k (the simplify pass that follows
 * folds the arithmetic). A loop with more than UNROLL_MAX iterations, or a non-constant extent,
 * stays a (serial) loop; its body is still processed.
 *
 * Pragmas (ATTR "pragma_<key>" around a loop nest, from sch_pragma):
 * - "pragma_auto_unroll_max_step" = N: every serial loop of constant extent inside whose total
 *   step count (iterations times the steps of its body; a store or evaluate is one step, a
 *   sequence adds up) is at most N is unrolled. The attribute is consumed.
 * - "pragma_unroll": the loop directly inside is unrolled as if marked UNROLLED. Consumed.
 * Parallel loops are never unrolled by a pragma.
 */
#include <string.h>
#include "arith/arith.h"
#include "lower/passes.h"
#include "schedule/pragma.h"

#define UNROLL_MAX 1024
#define STEPS_INF INT64_MAX

typedef struct unroll_state {
  int64_t auto_max; /* innermost auto_unroll_max_step in force, 0 if none */
} unroll_state;

/* Steps of s: how many stores/evaluates one execution runs (saturating; STEPS_INF when a loop
 * extent is not constant). */
static int64_t steps(const ir_stmt *s) {
  if (!s) return 0;
  switch (s->kind) {
  case IR_S_STORE: case IR_S_EVALUATE: case IR_S_PROVIDE: return 1;
  case IR_S_FOR: {
    int64_t ext, b = steps(s->body), r;
    if (!ir_is_const_int(s->b, &ext) || b == STEPS_INF) return STEPS_INF;
    if (ext <= 0) return 0;
    return __builtin_mul_overflow(ext, b, &r) ? STEPS_INF : r;
  }
  case IR_S_SEQ: {
    int64_t sum = 0;
    for (int i = 0; i < s->n; i++) {
      int64_t x = steps(s->seq[i]);
      if (x == STEPS_INF || __builtin_add_overflow(sum, x, &sum)) return STEPS_INF;
    }
    return sum;
  }
  case IR_S_IF: {
    int64_t a = steps(s->body), b = steps(s->else_body);
    return a == STEPS_INF || b == STEPS_INF ? STEPS_INF : a + b;
  }
  default: return steps(s->body);
  }
}

/* The unrolled copies of loop s (with an already processed body), or NULL if it cannot be. */
static const ir_stmt *unroll_loop(const ir_stmt *s, const ir_stmt *body, int *ok) {
  int64_t ext;
  *ok = 0;
  if (!ir_is_const_int(s->b, &ext) || s->b->type.lanes != 1 || ext > UNROLL_MAX) return NULL;
  *ok = 1;
  if (ext <= 0 || !body) return NULL;
  const ir_stmt **items = tec_ctx_alloc(s->ctx, sizeof *items * (size_t)ext);
  if (!items) return *ok = 0, NULL;
  for (int64_t k = 0; k < ext; k++) {
    const ir_expr *val = arith_simplify(ir_add(s->a, ir_int_t(s->ctx, s->a->type, k)), NULL);
    items[k] = ir_substitute_stmt(body, 1, &s->var, &val);
    if (!items[k]) return *ok = 0, NULL;
  }
  return ir_seq(s->ctx, (int)ext, items);
}

static const ir_stmt *un_for(ir_mutator *m, const ir_stmt *s) {
  unroll_state *st = m->user;
  const ir_stmt *body = ir_mutate_stmt(m, s->body);
  int want = s->for_kind == IR_FOR_UNROLLED;
  if (!want && s->for_kind == IR_FOR_SERIAL && st->auto_max > 0) {
    int64_t n = steps(ir_stmt_with(s, s->a, s->b, s->c, body, NULL, NULL, NULL));
    want = n != STEPS_INF && n <= st->auto_max;
  }
  if (want) {
    int ok;
    const ir_stmt *r = unroll_loop(s, body, &ok);
    if (ok) return r;
  }
  if (!body) return NULL;
  if (s->for_kind == IR_FOR_UNROLLED) /* too long or not constant: stays a loop */
    return ir_for(s->var, s->a, s->b, IR_FOR_SERIAL, body);
  return ir_stmt_with(s, s->a, s->b, s->c, body, NULL, NULL, NULL);
}

static const ir_stmt *un_attr(ir_mutator *m, const ir_stmt *s) {
  unroll_state *st = m->user;
  int64_t n;
  if (sch_pragma_id_of_attr(s->name) == SCH_PRAGMA_AUTO_UNROLL_MAX_STEP) {
    int64_t saved = st->auto_max;
    if (s->a && ir_is_const_int(s->a, &n) && n > 0) st->auto_max = n;
    const ir_stmt *body = ir_mutate_stmt(m, s->body);
    st->auto_max = saved;
    return body;
  }
  if (sch_pragma_id_of_attr(s->name) == SCH_PRAGMA_UNROLL && s->body &&
      s->body->kind == IR_S_FOR && s->body->for_kind == IR_FOR_SERIAL) {
    const ir_stmt *f = s->body;
    return ir_mutate_stmt(m, ir_for(f->var, f->a, f->b, IR_FOR_UNROLLED, f->body));
  }
  return ir_mutate_stmt_default(m, s);
}

const ir_stmt *lower_unroll(const ir_stmt *s) {
  if (!s) return NULL;
  unroll_state st = {0};
  ir_mutator m;
  ir_mutator_init(&m, s->ctx, &st);
  m.stmt[IR_S_FOR] = un_for;
  m.stmt[IR_S_ATTR] = un_attr;
  unsigned long errors_before = tec_ctx_error_count(s->ctx);
  const ir_stmt *r = ir_mutate_stmt(&m, s);
  if (tec_ctx_error_count(s->ctx) != errors_before) return NULL; /* out of memory half way */
  return r ? r : ir_evaluate(ir_int(s->ctx, 0));
}

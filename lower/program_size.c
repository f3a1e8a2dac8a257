/* program_size.c — tec_lower_program_size: how large a lowered program is (lower.h).
 *
 *   for (xo, 0, 4) {                       nodes: every expression and statement node walked
 *     for (k, 0, 8) { C[..] = C[..] + .. } stores: 1 + 2 = 3
 *     D[..] = ..; E[..] = ..               unrolled_body: 2 (xo's body; k's body has 1)
 *   }
 * A loop's body counts the stores in it but not those of loops nested inside (they are
 * another body); of an if's two arms the one with more stores counts (loop partitioning
 * puts a border copy of the body beside the interior one: the body is one copy). Nothing is
 * changed. */
#include "tec/lower.h"

typedef struct psize {
  tec_program_size r;
  int64_t body; /* stores of the body being walked */
} psize;

static void size_expr(ir_visitor *v, const ir_expr *e) {
  ((psize *)v->user)->r.nodes++;
  ir_visit_expr_default(v, e);
}

static void size_stmt(ir_visitor *v, const ir_stmt *s) {
  psize *p = v->user;
  p->r.nodes++;
  if (s->kind == IR_S_STORE || s->kind == IR_S_PROVIDE) p->r.stores++, p->body++;
  if (s->kind == IR_S_IF && s->else_body) { /* one arm runs: the longer one counts */
    ir_visit_expr(v, s->a);
    int64_t before = p->body;
    ir_visit_stmt(v, s->body);
    int64_t then = p->body;
    p->body = before;
    ir_visit_stmt(v, s->else_body);
    if (then > p->body) p->body = then;
    return;
  }
  if (s->kind != IR_S_FOR) {
    ir_visit_stmt_default(v, s);
    return;
  }
  int64_t outer = p->body;
  p->body = 0;
  ir_visit_stmt_default(v, s);
  if (p->body > p->r.unrolled_body) p->r.unrolled_body = p->body;
  p->body = outer;
}

static void size_of(psize *p, const ir_stmt *body) {
  ir_visitor v;
  ir_visitor_init(&v, p);
  for (int k = 0; k < IR_EXPR_KIND_COUNT; k++) v.expr[k] = size_expr;
  for (int k = 0; k < IR_STMT_KIND_COUNT; k++) v.stmt[k] = size_stmt;
  p->body = 0;
  ir_visit_stmt(&v, body);
  if (p->body > p->r.unrolled_body) p->r.unrolled_body = p->body;
}

tec_program_size tec_lower_program_size(const lower_func *f) {
  psize p = {{0, 0, 0}, 0};
  if (!f) return p.r;
  if (f->body) size_of(&p, f->body);
  if (f->prepare && f->prepare->body) size_of(&p, f->prepare->body);
  return p.r;
}

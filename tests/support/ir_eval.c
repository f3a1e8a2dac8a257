/* ir_eval.c — the tests' independent evaluator of integer IR expressions (ir_eval.h). */
#include "ir_eval.h"

int64_t tu_eval(const ir_expr *e, tu_evalenv *en) {
  int64_t a, b;
  switch (e->kind) {
  case IR_INT_IMM: return e->v.i;
  case IR_VAR:
    for (int i = 0; i < en->n; i++)
      if (en->vars[i] == e) return en->vals[i];
    return en->bad = 1, 0;
  case IR_ADD: return tu_eval(e->a, en) + tu_eval(e->b, en);
  case IR_SUB: return tu_eval(e->a, en) - tu_eval(e->b, en);
  case IR_MUL: return tu_eval(e->a, en) * tu_eval(e->b, en);
  case IR_FLOORDIV:
  case IR_FLOORMOD: {
    a = tu_eval(e->a, en), b = tu_eval(e->b, en);
    if (b == 0) return en->bad = 1, 0;
    int64_t q = a / b, r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) q--, r += b;
    return e->kind == IR_FLOORDIV ? q : r;
  }
  case IR_DIV:
  case IR_MOD:
    a = tu_eval(e->a, en), b = tu_eval(e->b, en);
    if (b == 0 || (en->strict_trunc && (b < 0 || a < 0))) return en->bad = 1, 0;
    return e->kind == IR_DIV ? a / b : a % b;
  case IR_MIN: a = tu_eval(e->a, en), b = tu_eval(e->b, en); return a < b ? a : b;
  case IR_MAX: a = tu_eval(e->a, en), b = tu_eval(e->b, en); return a > b ? a : b;
  case IR_EQ: return tu_eval(e->a, en) == tu_eval(e->b, en);
  case IR_NE: return tu_eval(e->a, en) != tu_eval(e->b, en);
  case IR_LT: return tu_eval(e->a, en) < tu_eval(e->b, en);
  case IR_LE: return tu_eval(e->a, en) <= tu_eval(e->b, en);
  case IR_GT: return tu_eval(e->a, en) > tu_eval(e->b, en);
  case IR_GE: return tu_eval(e->a, en) >= tu_eval(e->b, en);
  case IR_AND: a = tu_eval(e->a, en), b = tu_eval(e->b, en); return a && b;
  case IR_OR: a = tu_eval(e->a, en), b = tu_eval(e->b, en); return a || b;
  case IR_NOT: return !tu_eval(e->a, en);
  case IR_SELECT: a = tu_eval(e->a, en); return a ? tu_eval(e->b, en) : tu_eval(e->c, en);
  default: return en->bad = 1, 0;
  }
}

/* ir_eval.c — the tests' evaluator of integer IR expressions (ir_eval.h): the IR's own
 * evaluator (ir/eval.c), which shares no code with the simplifier it checks. */
#include "ir_eval.h"
#include "ir/eval.h"

int64_t tu_eval(const ir_expr *e, tu_evalenv *en) {
  ir_eval_env env = {.n = en->n, .vars = en->vars, .vals = en->vals,
                     .strict_trunc = en->strict_trunc};
  int64_t v = ir_eval_int(e, &env);
  en->bad |= env.bad;
  return v;
}

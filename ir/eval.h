/* eval.h — the one integer evaluator of IR expressions (ir/eval.c).
 *
 *   const ir_expr *vars[] = {n};  int64_t vals[] = {10};
 *   ir_eval_env env = {.n = 1, .vars = vars, .vals = vals};
 *   int64_t v = ir_eval_int(floordiv(n - 13, 4), &env);       // -> -1, env.bad == 0
 *
 * Integer and bool scalars only, with the IR's semantics (tec/ir.h): two's-complement int64
 * arithmetic that wraps, FLOORDIV/FLOORMOD rounding to minus infinity, DIV/MOD truncating,
 * an integer CAST wrapping to the target width, comparisons and logic giving 0 or 1.
 * Anything it cannot give a value sets env->bad (the value returned is then meaningless): a
 * variable not in vars, a division by 0 or INT64_MIN / -1, any other node kind (floats,
 * loads, calls, vectors), and, with strict_trunc, a DIV or MOD with a negative operand (the
 * contract the simplifier may assume for them). Used by the module runtime (a packed constant's shape from the sizes the
 * arguments bind) and by the tests (the simplifier's results against the expressions given).
 */
#ifndef TEC_IR_EVAL_H
#define TEC_IR_EVAL_H

#include <stdint.h>
#include "tec/ir.h"

typedef struct ir_eval_env {
  int n;                      /* bound variables: vars[i] (by pointer) has the value vals[i] */
  const ir_expr *const *vars;
  const int64_t *vals;
  int strict_trunc;           /* 1: DIV/MOD of a negative operand is undefined (bad) */
  int bad;                    /* set when the value is undefined; never cleared here */
} ir_eval_env;

/* The value of e under env; env->bad set when undefined. */
int64_t ir_eval_int(const ir_expr *e, ir_eval_env *env);

#endif

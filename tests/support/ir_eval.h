/* ir_eval.h — the evaluator of integer IR expressions for the tests that check the arithmetic
 * (test_simplify, test_interval) against it: ir/eval.c (plain C arithmetic on int64_t, floor
 * division and modulo written out), which shares no code with arith/. */
#ifndef TEC_TESTS_IR_EVAL_H
#define TEC_TESTS_IR_EVAL_H

#include <stdint.h>
#include "tec/ir.h"

typedef struct tu_evalenv {
  const ir_expr *vars[8];
  int64_t vals[8];
  int n;
  int bad;       /* set when the value is undefined: an unbound variable, a division by 0, a
                    kind the evaluator does not know, or (strict_trunc) a contract violation */
  int strict_trunc; /* truncating div/mod only for a >= 0, b > 0 (the contract the simplifier
                       may assume); 0: C's truncation for any sign */
} tu_evalenv;

int64_t tu_eval(const ir_expr *e, tu_evalenv *en);

#endif

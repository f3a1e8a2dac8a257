/* topi/problem_text.h — what problem_text.c and problem_keys.c share (not installed). */
#ifndef TEC_TOPI_PROBLEM_TEXT_H
#define TEC_TOPI_PROBLEM_TEXT_H

#include "tec/topi.h"
#include "topi/problem_kv.h"

/* -1 with an error naming a required key of t not given in p */
int topi_problem_keys_check(const topi_template *t, const topi_kv *p);

#endif

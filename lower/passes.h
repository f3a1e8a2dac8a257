/* passes.h — the lowering passes, in pipeline order (lower/pipeline.c runs them). Internal. */
#ifndef TEC_LOWER_PASSES_H
#define TEC_LOWER_PASSES_H

#include "tec/lower.h"

/* The range [min, min + extent) of every iteration variable of every stage. */
typedef struct lower_range {
  const sch_iter *iter;
  const ir_expr *min, *extent;
} lower_range;
typedef struct lower_bounds {
  int n, cap;
  lower_range *r;
} lower_bounds;

/* 1. bound inference: fills b; -1 with an error. */
int lower_infer_bounds(sch_schedule *s, lower_bounds *b);
/* Looks an iter up in b (NULL if absent). */
const lower_range *lower_bounds_get(const lower_bounds *b, const sch_iter *it);

/* 2. schedule to loop nests: one nest per stage, realize/produce around them. Tensors in
 *    args are the caller's buffers (not realized). */
const ir_stmt *lower_schedule_ops(sch_schedule *s, const lower_bounds *b, int nargs,
                                  te_tensor *const *args);

/* 3. storage flatten: realize -> allocate, provide/read -> store/load on 1-d buffers. */
const ir_stmt *lower_storage_flatten(const ir_stmt *body, lower_func *f);

#endif

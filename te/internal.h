/* internal.h — what te/tensor.c shares with te/multi.c (multi-output ops, user reducers). */
#ifndef TEC_TE_INTERNAL_H
#define TEC_TE_INTERNAL_H

#include "tec/te.h"

/* 0, or -1 with an error when name is NULL or empty. */
int te_check_name(tec_ctx *ctx, const char *who, const char *name);
/* A validated copy of shape (int64 extents) in the arena, or NULL with an error. */
const ir_expr *const *te_copy_shape(tec_ctx *ctx, const char *who, const char *name, int ndim,
                                    const ir_expr *const *shape);
/* ndim fresh axis variables over [0, shape[i]), named from names (or i, j, k, ...). */
const ir_expr *const *te_new_axes(tec_ctx *ctx, int ndim, const ir_expr *const *shape,
                                  const char *const *names);
/* After the body is known: a data axis that got a default name (names NULL or names[i] NULL)
 * equal to a reduce axis's name is renamed to the first of i, j, k, l, m, n, p, q, r, s (then
 * ax<d>) that no axis of the op uses, so every loop of the stage has its own name (traces and
 * sch_leaf_named name loops). 0, or -1 out of memory. */
int te_rename_default_axes(tec_ctx *ctx, int ndim, const ir_expr *const *axis,
                           const char *const *names, int nreduce, const ir_expr *const *raxis);
/* What te_check_body found: the tensors read (appended to, across calls) and the body's
 * reduce axes. */
typedef struct te_body_info {
  const te_tensor **inputs;
  int ninputs, cap;
  int nreduce;
  const ir_expr *const *raxis;
} te_body_info;
/* Checks one body of op `name` (a reduction only at the top; variables: its axes, its reduce
 * axes, size vars); 0, or -1 with an error naming `who`. */
int te_check_body(tec_ctx *ctx, const char *who, const char *name, int ndim,
                  const ir_expr *const *axis, const ir_expr *body, te_body_info *info);

#endif

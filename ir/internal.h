/* internal.h — helpers shared by the ir/ and te/ implementation files (not public). */
#ifndef TEC_IR_INTERNAL_H
#define TEC_IR_INTERNAL_H

#include "tec/te.h"

int tec_ctx_next_id(tec_ctx *ctx);
void tec_ctx_forget_on_free(tec_ctx *ctx, void (*fn)(void *), void *arg);

/* Internal invariant check: records an "internal error" with file and line in the ctx. */
#define TEC_INTERNAL(ctx, msg) \
  tec_ctx_set_error((ctx), "internal error at %s:%d: %s", __FILE__, __LINE__, (msg))

/* Growable arena arrays: *arr has *n items of `size` bytes and room for *cap. */
int tec_grow(tec_ctx *ctx, void **arr, int *cap, int need, size_t size);

#endif

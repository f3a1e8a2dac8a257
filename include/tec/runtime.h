/* runtime.h — the small C runtime that generated code and users call: error reporting,
 * aligned buffers and DLTensor helpers. It is built as its own static library (tec_runtime)
 * so ahead-of-time objects can link against it on any target.
 */
#ifndef TEC_RUNTIME_H
#define TEC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <dlpack/dlpack.h>
#include "tec/dtype.h"

/* Alignment of every buffer tec allocates, and what generated code assumes of its own. */
#define TEC_ALIGN 64

/* The message of the last failed call of generated code on this thread ("" if none). */
const char *tec_rt_last_error(void);
/* Records a message (printf format) for this thread; returns -1. */
int32_t tec_rt_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Called by generated entry checks: fmt has up to two %lld conversions. Returns -1. */
int32_t tec_rt_check_fail(const char *fmt, int64_t a, int64_t b);

/* Allocation hook: every runtime allocation goes through it. The contract: the returned
 * block is TEC_ALIGN-aligned and at least `bytes` long rounded up to TEC_ALIGN (vector code
 * may read, never write, up to the rounded end). NULL on failure. */
typedef void *(*tec_rt_alloc_fn)(size_t bytes, void *user);
typedef void (*tec_rt_free_fn)(void *p, void *user);
void tec_rt_set_allocator(tec_rt_alloc_fn alloc, tec_rt_free_fn free_fn, void *user);
void *tec_rt_alloc(size_t bytes);
void tec_rt_free(void *p);

/* DLTensor helpers. tec_dl_alloc fills t with a fresh CPU tensor (shape copied into storage
 * the tensor owns); free it with tec_dl_free. Returns 0 or -1 (message in tec_rt_last_error). */
int tec_dl_alloc(DLTensor *t, tec_dtype type, int ndim, const int64_t *shape);
void tec_dl_free(DLTensor *t);
/* A DLTensor view of user memory; shape must outlive the view. */
DLTensor tec_dl_view(void *data, tec_dtype type, int ndim, int64_t *shape);
int64_t tec_dl_numel(const DLTensor *t);

#endif

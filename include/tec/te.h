/* te.h — tensor expressions: the context, placeholders and compute ops.
 *
 *   tec_ctx *ctx = tec_ctx_new();
 *   const ir_expr *n = te_size_var(ctx, "n");
 *   te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, (const ir_expr *[]){n});
 *   ...
 *   tec_ctx_free(ctx);   // frees every node, tensor, schedule and lowered program
 *
 * Errors: a call that fails returns NULL (or -1) and records a message that tec_ctx_error()
 * returns; a NULL argument that came from an earlier failure propagates without a new message,
 * so a sequence of calls can be checked once at the end.
 */
#ifndef TEC_TE_H
#define TEC_TE_H

#include <stddef.h>
#include "tec/ir.h"

/* ---- context ---- */
tec_ctx *tec_ctx_new(void);
void tec_ctx_free(tec_ctx *ctx);
/* The first error recorded since the last tec_ctx_clear_error(), or NULL. */
const char *tec_ctx_error(const tec_ctx *ctx);
void tec_ctx_clear_error(tec_ctx *ctx);
/* Records a formatted error (keeps the first one); returns -1 for convenience. */
int tec_ctx_set_error(tec_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Arena allocation: zeroed, 16-byte aligned, freed with the ctx. NULL on exhaustion. */
void *tec_ctx_alloc(tec_ctx *ctx, size_t bytes);
const char *tec_ctx_strdup(tec_ctx *ctx, const char *s);
const char *tec_ctx_printf(tec_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Runs fn(arg) when the ctx is freed (latest registered first); for resources outside the
 * arena, such as JIT modules. 0 or -1. */
int tec_ctx_on_free(tec_ctx *ctx, void (*fn)(void *), void *arg);
/* Arena hook for tests: the arena fails after `budget` more allocations (-1: never). */
void tec_ctx_set_alloc_budget(tec_ctx *ctx, long budget);

/* ---- tensors ---- */
typedef enum te_op_kind {
  TE_PLACEHOLDER, /* an input */
  TE_COMPUTE      /* defined by an index expression (possibly a reduction) */
} te_op_kind;

struct te_tensor {
  te_op_kind op;
  tec_ctx *ctx;                  /* owner */
  const char *name;
  tec_dtype type;
  int ndim;
  const ir_expr *const *shape;   /* ndim extents (int64 expressions) */
  int is_const;                  /* placeholder marked constant (weights) */
  /* compute ops */
  const ir_expr *const *axis;    /* ndim data-parallel axis VARs, domain [0, shape[i]) */
  int nreduce;
  const ir_expr *const *reduce_axis; /* reduce axis VARs of a top-level REDUCE body */
  const ir_expr *body;           /* the value of element (axis...) */
  int ninputs;
  const te_tensor *const *inputs; /* tensors read by body, each once, in first-read order */
  const char *tag;               /* free-form (topi uses it), may be NULL */
  int id;
};

/* A symbolic size (int64), bound from actual tensor shapes at call time. */
const ir_expr *te_size_var(tec_ctx *ctx, const char *name);
/* Shape helper: an array of n int64 immediates in the arena. */
const ir_expr *const *te_shape(tec_ctx *ctx, int n, const int64_t *dims);
#define TE_SHAPE(ctx, ...)                                                        \
  te_shape((ctx), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),     \
           (const int64_t[]){__VA_ARGS__})

te_tensor *te_placeholder(tec_ctx *ctx, const char *name, tec_dtype type, int ndim,
                          const ir_expr *const *shape);
/* A placeholder whose value is fixed across calls (weights): stages derived from constants
 * alone move into a separate prepare step. */
te_tensor *te_const_placeholder(tec_ctx *ctx, const char *name, tec_dtype type, int ndim,
                                const ir_expr *const *shape);

/* A compute op, declared as a struct. body receives one index VAR per dimension. */
typedef const ir_expr *(*te_body_fn)(tec_ctx *ctx, const ir_expr *const *idx, void *user);
typedef struct te_compute_decl {
  const char *name;               /* tensor name (required, unique among ops) */
  int ndim;                       /* >= 1 */
  const ir_expr *const *shape;    /* ndim extents */
  te_body_fn body;                /* value of one element */
  void *user;                     /* passed to body */
  const char *tag;                /* optional */
  const char *const *axis_names;  /* optional: ndim names for printing (default i, j, k, l, ...) */
} te_compute_decl;
te_tensor *te_compute(tec_ctx *ctx, const te_compute_decl *decl);

/* A reduction axis ranging over [min, min + extent). */
const ir_expr *te_reduce_axis(tec_ctx *ctx, const char *name, const ir_expr *min,
                              const ir_expr *extent);
const ir_expr *te_reduce_axis_n(tec_ctx *ctx, const char *name, int64_t extent);
/* Reductions over one or more axes; cond may be NULL. Must be the top of a compute body. */
const ir_expr *te_sum(const ir_expr *src, int naxes, const ir_expr *const *axes,
                      const ir_expr *cond);
const ir_expr *te_max(const ir_expr *src, int naxes, const ir_expr *const *axes,
                      const ir_expr *cond);
const ir_expr *te_min(const ir_expr *src, int naxes, const ir_expr *const *axes,
                      const ir_expr *cond);
const ir_expr *te_prod(const ir_expr *src, int naxes, const ir_expr *const *axes,
                       const ir_expr *cond);

/* t[idx...]: a read of tensor t. */
const ir_expr *te_read(const te_tensor *t, int nidx, const ir_expr *const *idx);
#define TE_AT(t, ...)                                                             \
  te_read((t), (int)(sizeof((const ir_expr *[]){__VA_ARGS__}) / sizeof(const ir_expr *)), \
          (const ir_expr *const[]){__VA_ARGS__})

/* All tensors reachable from outputs, producers before consumers (post order). Returns the
 * count; *out is an arena array. */
int te_topo_order(tec_ctx *ctx, int nout, te_tensor *const *outs, te_tensor ***out);

#endif

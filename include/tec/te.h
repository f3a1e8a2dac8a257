/* te.h — tensor expressions: the context, placeholders and compute ops.
 *
 *   tec_ctx *ctx = tec_ctx_new();
 *   const ir_expr *n = te_size_var(ctx, "n");
 *   te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, (const ir_expr *[]){n});
 *   ...
 *   tec_ctx_free(ctx);   // frees every node, tensor, schedule and lowered program
 *
 * Errors belong to the call that made them:
 * - A call that fails returns NULL (or -1) and records a message and a kind, which
 *   tec_ctx_error() and tec_ctx_error_kind() return; a call that succeeds records nothing.
 * - Whether a call failed depends on its own work only: an error an earlier call left in the
 *   ctx (refused and ignored) never makes a later valid call fail.
 * - A NULL argument that came from an earlier failure propagates without a new message, so a
 *   sequence of calls can be checked once at the end: the ctx keeps the FIRST error recorded
 *   since tec_ctx_clear_error(), the root of the chain, and successes leave it alone.
 * - Except for the compile calls (tec_lower, tec_build, tec_emit), which are where a program
 *   is checked: one that fails on its own records its own first error in place of an older
 *   one, so `if (!tec_lower(...)) puts(tec_ctx_error(ctx));` names what is wrong with that
 *   call even after an ignored refusal; one that fails only because an argument came from an
 *   earlier failure (a NULL schedule or function) keeps the older message, as in a chain.
 *   Builders and primitives (ir_, te_, sch_) keep the first error: in a chain of them the
 *   first refusal is the root cause, and each returns its status at once for a caller who
 *   checks per call (clear the error after handling a refusal to keep going).
 */
#ifndef TEC_TE_H
#define TEC_TE_H

#include <stddef.h>
#include "tec/ir.h"

/* ---- context ---- */
tec_ctx *tec_ctx_new(void);
void tec_ctx_free(tec_ctx *ctx);
/* What kind of error the ctx holds; lets a caller tell its own mistakes from tec's limits. */
typedef enum tec_error_kind {
  TEC_ERR_NONE,        /* no error recorded */
  TEC_ERR_USER,        /* bad input or a schedule that cannot be honoured as written: the
                        * message says what would be legal */
  TEC_ERR_UNSUPPORTED, /* valid, but tec does not do it (nested parallel loops, an
                        * architecture without tables, JIT for another machine) */
  TEC_ERR_INTERNAL,    /* an invariant of tec broke: a bug in tec ("internal error ...") */
  TEC_ERR_OOM          /* an allocation failed (the arena, malloc, or a test budget) */
} tec_error_kind;
/* The recorded error (see the rule above): the first since the last tec_ctx_clear_error(),
 * or the own error of the last compile call that failed. NULL if none. */
const char *tec_ctx_error(const tec_ctx *ctx);
/* The kind of the error tec_ctx_error() returns (TEC_ERR_NONE without one). */
tec_error_kind tec_ctx_error_kind(const tec_ctx *ctx);
void tec_ctx_clear_error(tec_ctx *ctx);
/* Records a formatted error of kind TEC_ERR_USER (unless the ctx holds one already: the first
 * stays); returns -1 for convenience. */
int tec_ctx_set_error(tec_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same with a kind. */
int tec_ctx_set_error_kind(tec_ctx *ctx, tec_error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Strict mode: what tec_lower would otherwise report in the lowered function's notes
 * (lower_func.notes: a vectorize the vectorizer kept serial, a compute_at'd stage of constants
 * alone moved into the prepare function) fails the call instead, with the note as its error.
 * On for a ctx with tec_ctx_set_strict(ctx, 1), or for every ctx with the environment
 * variable TEC_STRICT=1. */
void tec_ctx_set_strict(tec_ctx *ctx, int on);
int tec_ctx_strict(const tec_ctx *ctx);
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
/* Bytes the ctx's arena holds now (its own blocks and the scopes of lowered functions and
 * built modules not freed yet: tec_lower_free, tec_module_free give theirs back). */
size_t tec_ctx_arena_bytes(const tec_ctx *ctx);

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
  /* multi-output ops (te_compute_multi): the op's nout outputs in order (same shape and axes,
   * one stage, one loop nest) and this one's place among them; nout is 1 for a plain op (0
   * for placeholders and tensors made before this field existed) */
  int nout;
  int value_index;
  te_tensor *const *outputs;
  int id;
  /* argument margins (te_tensor_set_margin): NULL, or 2*ndim counts, before[d] at [d] and
   * after[d] at [ndim + d]; buffer_shape holds the extents shape[d] + before[d] + after[d]
   * (read both through te_margin and te_buffer_shape). margin_fixed_by names the function
   * whose lowering fixed them (NULL: may still change). */
  const int64_t *margin;
  const ir_expr *const *buffer_shape;
  const char *margin_fixed_by;
  /* extern stages (te_extern): the declaration (a copy), else NULL. The tensor is a
   * TE_COMPUTE whose body is the placeholder extern_call(reads of the inputs) */
  const struct te_extern_decl *ext;
  /* recurrences (te_scan): on the scan's result, what it is made of (else NULL); on the
   * placeholder standing for its earlier steps (the state), the result (else NULL) */
  const struct te_scan_info *scan;
  const te_tensor *scan_of;
};

/* A symbolic size (int64), bound from actual tensor shapes at call time: from the first
 * argument dimension (argument order, then dimension order) whose buffer extent (the shape
 * plus a margin, te_tensor_set_margin) is n or a*n + b with
 * integer constants a >= 1 and b (8*n, n + 1, 2*n + 3), as n = (extent - b) / a, a call
 * whose extent is not such a value refused with a message naming the legal ones. A size
 * appearing only in shapes that do not determine it (n / 4, m*n) is refused by tec_lower;
 * such shapes are fine once another dimension binds n (they are then checked). */
const ir_expr *te_size_var(tec_ctx *ctx, const char *name);
/* Shape helper: an array of n int64 immediates in the arena. */
const ir_expr *const *te_shape(tec_ctx *ctx, int n, const int64_t *dims);
#define TE_SHAPE(ctx, ...)                                                        \
  te_shape((ctx), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),     \
           (const int64_t[]){__VA_ARGS__})

/* ndim 0 (shape may be NULL) is a scalar: one element, read with no indices
 * (te_read(alpha, 0, NULL)) and passed to the built function as a 0-dim DLTensor (shape
 * unused), like TVM's scalar tensors; the entry checks its ndim and dtype, and its data must be
 * 64-byte aligned like any argument. This is how a scalar parameter is declared (there is no
 * separate te_scalar_param: one way to say it). */
te_tensor *te_placeholder(tec_ctx *ctx, const char *name, tec_dtype type, int ndim,
                          const ir_expr *const *shape);
/* A placeholder whose value is fixed across calls (weights): stages derived from constants
 * alone move into a separate prepare step. */
te_tensor *te_const_placeholder(tec_ctx *ctx, const char *name, tec_dtype type, int ndim,
                                const ir_expr *const *shape);

/* ---- argument margins: a tensor as the window of a larger buffer ----
 * Declares that t, as an argument of a lowered function, is the window of a larger compact
 * buffer: before[d] elements precede it and after[d] follow it in dimension d (NULL: zeros).
 * The argument's DLTensor then has extent shape[d] + before[d] + after[d]; the function reads
 * or writes only the window, t[i...] being buffer element [i + before] (the margin is the
 * caller's: tec never reads or writes it). Like TVM's buffer with elem_offset and strides,
 * Halide's output buffer larger than the region computed. The use: a convolution writing the
 * interior of a zero-bordered buffer that the next 3x3 convolution reads as its padded input.
 * Symbolic shapes work (the entry binds n from extent n + before + after). Refused: negative
 * margins, a scalar (ndim 0), a te_const_placeholder (the prepare step packs constants into
 * compact buffers), other values than margins set before, and any change once tec_lower has
 * lowered a function taking t; tec_lower refuses a tensor with a margin that is not one of its
 * arguments (an intermediate has no caller's buffer). Setting the same margins again is a
 * no-op. Returns 0, or -1 with an error in ctx. */
int te_tensor_set_margin(tec_ctx *ctx, te_tensor *t, const int64_t *before, const int64_t *after);
/* The margin of dimension d on side 0 (before) or 1 (after); 0 without one. */
int64_t te_margin(const te_tensor *t, int d, int side);
/* 1 if t has a margin in some dimension. */
int te_has_margin(const te_tensor *t);
/* The extents of t's buffer as an argument: shape[d] + before[d] + after[d] (t->shape itself
 * without a margin). What allocates, checks or describes an argument's buffer reads this. */
const ir_expr *const *te_buffer_shape(const te_tensor *t);

/* A compute op, declared as a struct. body receives one index VAR per dimension. */
typedef const ir_expr *(*te_body_fn)(tec_ctx *ctx, const ir_expr *const *idx, void *user);
typedef struct te_compute_decl {
  const char *name;               /* tensor name (required, unique among ops) */
  int ndim;                       /* 0 (a scalar: no axes, no loops, e.g. a full reduction)
                                   * to 16 */
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

/* The reduction with its running value starting at init instead of the combiner's identity
 * (TVM's init=): out[i] = init[i] + sum(...) for te_sum, max(init[i], max(...)) for te_max,
 * and so on; a bias that starts the accumulator is a te_sum with init = bias[channel]. init is
 * an expression of the compute's own axes (no reduce axis: it is evaluated once per output
 * element, before the reduction) and reads other tensors like the body, of the reduction's
 * dtype. For te_sum, te_max, te_min, te_prod; not for a te_reducer's values (their identity
 * starts every value), and refused by rfactor and tensorize. Returns the new reduction (use it
 * as the body), or NULL with an error naming what was wrong. */
const ir_expr *te_reduce_init(const ir_expr *reduction, const ir_expr *init);

/* The same with the axes listed (no condition): TE_SUM(a * b, k) or TE_SUM(x, ry, rx). */
#define TE_SUM(src, ...)                                                                  \
  te_sum((src), (int)(sizeof((const ir_expr *[]){__VA_ARGS__}) / sizeof(const ir_expr *)), \
         (const ir_expr *const[]){__VA_ARGS__}, NULL)
#define TE_MAX(src, ...)                                                                  \
  te_max((src), (int)(sizeof((const ir_expr *[]){__VA_ARGS__}) / sizeof(const ir_expr *)), \
         (const ir_expr *const[]){__VA_ARGS__}, NULL)

/* ---- several outputs, user reducers ----
 * A compute op with several outputs (TVM's compute returning a tuple): one body callback gives
 * nout values over the same axes; each becomes its own tensor (own name, dtype, buffer and
 * argument) but the op is scheduled and lowered once: sch_stage_of any output gives the same
 * stage, named after the first output, and one loop nest writes every output. Later stages
 * read the outputs separately. The values are either all plain expressions or all reductions
 * over the same reduce axes and condition (te_sum/te_max... each combine on its own, a
 * te_reduce's values combine together). Other stages may be computed at its loops. Not
 * supported on such an op (refused with a message): compute_inline or compute_at of it,
 * cache_read of its outputs or for it as a reader, cache_write, rfactor. */
typedef int (*te_multi_body_fn)(tec_ctx *ctx, const ir_expr *const *idx, void *user,
                                const ir_expr **values);
typedef struct te_compute_multi_decl {
  const char *const *names;       /* nout tensor names (required, unique) */
  int ndim;                       /* 0 to 16 */
  const ir_expr *const *shape;    /* ndim extents, shared by the outputs */
  te_multi_body_fn body;          /* fills values[0..nout-1]; returns 0, or -1 (with an error) */
  void *user;                     /* passed to body */
  const char *tag;                /* optional */
  const char *const *axis_names;  /* optional, as in te_compute_decl */
} te_compute_multi_decl;
/* Writes the nout (2 to 16) output tensors to outs; 0, or -1 with an error. */
int te_compute_multi(tec_ctx *ctx, const te_compute_multi_decl *decl, int nout,
                     te_tensor **outs);

/* A user-defined commutative reducer over k-tuples (TVM's comm_reducer): combine(lhs, rhs)
 * gives the k values that replace the running lhs when the element rhs arrives, identity[i]
 * is where value i starts. The combine must be associative and commutative for the result not
 * to depend on the loop order a schedule chooses (tec cannot check it: argmax with "the
 * smaller index wins ties" is, a "last one seen" rule is not). lhs/rhs are variables of the
 * given dtypes; the combine is called once, at te_reducer_new. */
typedef int (*te_combine_fn)(tec_ctx *ctx, const ir_expr *const *lhs,
                             const ir_expr *const *rhs, void *user, const ir_expr **out);
typedef struct te_reducer {
  const char *name;               /* for printing: name.i(src, axis=[...]) */
  int k;                          /* 1 to 16 values */
  const tec_dtype *types;         /* k dtypes */
  const ir_expr *const *lhs, *const *rhs; /* k variables each (IR_VAR_LET) */
  const ir_expr *const *result;   /* k expressions over lhs and rhs */
  const ir_expr *const *identity; /* k constants */
} te_reducer;
const te_reducer *te_reducer_new(tec_ctx *ctx, const char *name, int k, const tec_dtype *types,
                                 const ir_expr *const *identity, te_combine_fn combine,
                                 void *user);
/* The k reductions of srcs (k values, of the reducer's dtypes) over axes where cond (or NULL),
 * written to out: the values of a te_compute_multi body (k == 1: a te_compute body too).
 * 0, or -1 with an error. */
int te_reduce(tec_ctx *ctx, const te_reducer *r, const ir_expr *const *srcs, int naxes,
              const ir_expr *const *axes, const ir_expr *cond, const ir_expr **out);

/* ---- extern stages: values a C function computes (TVM te.extern, Halide define_extern) ----
 * A stage whose region a C function fills, inside an otherwise scheduled program: the user's
 * own kernel or a library call (a BLAS sgemm). The function gets one tec_extern_buffer
 * (tec/runtime.h: a DLTensor view of the region plus the region's first index) per input, in
 * order, then one for the output region to fill, and returns 0, or nonzero for a failure
 * (the generated function then returns -1, tec_rt_last_error() naming the stage):
 *
 *   int32_t my_kernel(const struct tec_extern_buffer *bufs, int32_t nbuf);
 *
 * Bound inference goes through the stage: `region` says which region of input k an output
 * region needs (Halide's bounds query), as expressions over the output region's mins and
 * extents; NULL means each input whole. Schedules: compute_root (one call over the whole
 * tensor) or compute_at a consumer's loop (one call per iteration of that loop, on the
 * region the consumer's iteration reads, clamped to the tensor). The stage has no loops of its
 * own: split, fuse, reorder, vectorize, parallel, unroll, pragma and prefetch of its axes,
 * compute_at into them, compute_inline of it or of its inputs, cache_read for it and
 * cache_write / rfactor of it are refused with the reason. A call inside a parallel loop needs
 * thread_safe = 1 (the function runs on several threads at once, on disjoint output regions);
 * tec_lower refuses it otherwise. Inside a vectorized loop: refused. */
struct tec_extern_buffer; /* tec/runtime.h */
typedef int32_t (*te_extern_fn)(const struct tec_extern_buffer *bufs, int32_t nbuf);
/* Writes input k's region for the output region (out_min[d], out_extent[d]) into in_min and
 * in_extent (one expression per dimension of input k, int64): 0, or -1 with an error in ctx.
 * It is called with symbolic regions (bound inference, the call's operands), so build the
 * expressions with ir_add/ir_sub/ir_min..., not by evaluating them. The region must lie in
 * the input's shape: tec_lower refuses one that provably does not; otherwise the generated
 * code checks it before each call (the call returns -1 naming the input and dimension). */
typedef int (*te_extern_region_fn)(tec_ctx *ctx, int input, const ir_expr *const *out_min,
                                   const ir_expr *const *out_extent, const ir_expr **in_min,
                                   const ir_expr **in_extent, void *user);
typedef struct te_extern_decl {
  const char *name;                  /* output tensor name (required, unique among ops) */
  tec_dtype type;                    /* output element type */
  int ndim;                          /* 1 to 16 */
  const ir_expr *const *shape;       /* ndim extents */
  int ninputs;                       /* 0 to 15 */
  te_tensor *const *inputs;          /* the tensors the function reads */
  const char *symbol;                /* the C function's name: AOT objects reference it (the
                                      * header declares it: link it in), the JIT resolves it
                                      * in the process (an exported symbol) unless fn is given */
  te_extern_fn fn;                   /* JIT: the function (NULL: resolve symbol); AOT needs
                                      * symbol */
  te_extern_region_fn region;        /* NULL: every input whole */
  void *user;                        /* passed to region */
  int thread_safe;                   /* 1: may be called from a parallel loop */
  const char *const *axis_names;     /* optional, as in te_compute_decl */
} te_extern_decl;
/* The extern stage's output tensor, or NULL with an error: no function (neither symbol nor
 * fn), a symbol that is not a C identifier, a NULL input, an input of another ctx, a region
 * function that fails or gives a region outside an input for the whole output. */
te_tensor *te_extern(tec_ctx *ctx, const te_extern_decl *decl);
/* The region of input k that the output region (out_min, out_extent) needs, through the
 * decl's region function or the whole input: 0, or -1 with an error. */
int te_extern_input_region(tec_ctx *ctx, const te_tensor *t, int k,
                           const ir_expr *const *out_min, const ir_expr *const *out_extent,
                           const ir_expr **in_min, const ir_expr **in_extent);

/* ---- recurrences: a stage defined by its own earlier steps (TVM te.scan) ----
 * A tensor S of shape (T, d1, ...) whose steps t along axis 0 follow from earlier ones, as
 * TVM's te.scan declares it:
 *
 *   te_tensor *st = te_placeholder(ctx, "y_state", TEC_F32, 2, TE_SHAPE(ctx, T, W));
 *   te_tensor *up = te_compute(...: a * st[t - 1, x] + b * in[t, x] ...);      shape (T, W)
 *   te_tensor *y  = te_scan(ctx, &(te_scan_decl){"y", st, init, up, "t"});       init (1, W)
 *
 * Steps [0, L) are init's (shape (L, d1, ...)); steps [L, T) are the update's, whose stages
 * read the earlier steps through the state placeholder: the update and every stage it reads
 * that reads the state (the update's stages, e.g. a matmul of the previous hidden state)
 * make one step at a time. Rules, checked here with the reason: a read of the state is at
 * step t - k with 1 <= k <= L (t itself or a later step is refused: it is not computed yet);
 * a read of another update stage is at the same step t; those stages have T steps in their
 * axis 0. The state is no argument of the lowered function (S is: its buffer holds the
 * steps). Why te.scan and not Halide's update definitions: docs/recurrence.md.
 *
 * Schedules (docs/recurrence.md): the update's stages start computed at S's loop over t
 * (compute_inline or compute_at a deeper loop are fine); the loops over t run in order, so
 * they are never parallel or vectorized; split, parallel and vectorize of the other axes are
 * fine, and so is a data loop outside t when every read of the state is at the element's own
 * indices (the recurrence is then per element, like an IIR filter along rows); otherwise the
 * loops over t stay outside the data loops (a step reads the whole previous step). S cannot
 * be inlined or computed at another stage's loop. */
typedef struct te_scan_decl {
  const char *name;     /* the result's name (required, unique) */
  te_tensor *state;     /* a te_placeholder of the update's shape and dtype (not constant) */
  te_tensor *init;      /* steps [0, L): shape (L, d1, ...), L a constant >= 1 */
  te_tensor *update;    /* steps [L, T): shape (T, d1, ...), reads the state at t - k */
  const char *axis_name; /* the recurrent axis' name (default "t"); the others: the update's */
} te_scan_decl;
typedef struct te_scan_info {
  te_tensor *state, *init, *update;
  int64_t ninit;        /* L: the steps init gives */
  int nchain;           /* the update's stages that read the state, the update included */
  te_tensor *const *chain;
  int pointwise;        /* 1: every state read is at the element's own indices (d1, ...) */
} te_scan_info;
/* The recurrence's result, or NULL with an error: a NULL or non-placeholder state, shapes or
 * dtypes that differ (init's dimensions after the first, the update's and the state's), a
 * read of the state at step t or later or further back than init reaches, an update that
 * never reads the state. */
te_tensor *te_scan(tec_ctx *ctx, const te_scan_decl *decl);
/* 1 if the scan whose info is sc computes t as part of its update (one of sc->chain). */
int te_scan_in_chain(const te_scan_info *sc, const te_tensor *t);

/* t[idx...]: a read of tensor t. */
const ir_expr *te_read(const te_tensor *t, int nidx, const ir_expr *const *idx);
#define TE_AT(t, ...)                                                             \
  te_read((t), (int)(sizeof((const ir_expr *[]){__VA_ARGS__}) / sizeof(const ir_expr *)), \
          (const ir_expr *const[]){__VA_ARGS__})

/* All tensors reachable from outputs, producers before consumers (post order). Returns the
 * count; *out is an arena array. */
int te_topo_order(tec_ctx *ctx, int nout, te_tensor *const *outs, te_tensor ***out);

/* The structural hash of the program that computes outs (te/hash.c): every tensor reachable,
 * in topological order, by name, kind, dtype, constness, shape, axes' ranges and body. Editing
 * the compute changes it; declaring the same program again gives the same value in any
 * process. Records of tuned schedules are keyed by it. 0, or -1 with an error in ctx. */
int te_program_hash(tec_ctx *ctx, int nout, te_tensor *const *outs, uint64_t *out);
/* Its parts, for a hash that mixes in more (FNV-1a state *h): bytes, a string (NULL allowed),
 * n tensors in the order given with whether each is one of outs. */
void te_hash_bytes(uint64_t *h, const void *p, size_t n);
void te_hash_str(uint64_t *h, const char *s);
void te_hash_tensors(uint64_t *h, int n, te_tensor *const *ts, int nout, te_tensor *const *outs);

#endif

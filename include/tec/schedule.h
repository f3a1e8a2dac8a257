/* schedule.h — how to compute: stages, iteration variables and the primitives on them.
 *
 * A schedule has one stage per op reachable from its outputs. A stage starts with one
 * iteration variable (sch_iter) per axis, data-parallel axes first, then reduce axes, and
 * keeps an ordered list of *leaf* iter vars: the loops it will be lowered to, outermost
 * first. Primitives only validate and record (split and fuse relations, the leaf order,
 * loop kinds); lowering interprets the records.
 *
 *   sch_schedule *s = sch_create(ctx, 1, &C);
 *   sch_stage *sc = sch_stage_of(s, C);
 *   sch_iter *io, *ii;
 *   sch_split(sc, sch_axis(sc, 0), 32, &io, &ii);
 *
 * Every primitive returns 0, or -1 with a message in the ctx (tec_ctx_error) that names the
 * primitive, the stage and the axis and says what would be legal. A NULL stage is reported in
 * the ctx of another argument (an iter's schedule) when there is one; a NULL that came from an
 * earlier failure keeps that failure's message (te.h).
 *
 * Tail handling: a split whose factor does not divide the extent makes the last outer
 * iteration partial. The default strategy is a guard: the body runs under
 * `if (root index < extent)`, so results are always exact; loop partitioning later peels the
 * guard out of the hot loop. sch_split_tail chooses another of Halide's strategies
 * (shift_inwards, round_up, predicate: sch_tail below); schedule/relation.c applies them.
 */
#ifndef TEC_SCHEDULE_H
#define TEC_SCHEDULE_H

#include "tec/te.h"

typedef struct sch_schedule sch_schedule;
typedef struct sch_stage sch_stage;
typedef struct sch_iter sch_iter;

typedef enum sch_iter_kind {
  SCH_ITER_DATA,  /* data-parallel */
  SCH_ITER_REDUCE /* reduction */
} sch_iter_kind;

/* What a split does with the last chunk when its factor does not divide the extent (Halide's
 * tail strategies; sch_split_tail). */
typedef enum sch_tail {
  SCH_TAIL_GUARD_WITH_IF, /* the body runs under if (root index < extent) (the default) */
  SCH_TAIL_SHIFT_INWARDS, /* the last chunk starts at extent - factor, overlapping the one
                             before it: no guard; pure stages only, extent >= factor */
  SCH_TAIL_ROUND_UP,      /* the loop runs to ceil(extent / factor) * factor: the stage's
                             buffer is allocated rounded up, its loads past the extent are
                             predicated off; stages whose buffer tec allocates only */
  SCH_TAIL_PREDICATE      /* no if: every load and store of the body is predicated on
                             (root index < extent), so a vectorized inner loop stays vector
                             code with masked loads and stores */
} sch_tail;

/* The stage and iter structures are internal (schedule/internal.h): a program reads them
 * through these accessors, and changes them only through the primitives below. */
typedef enum sch_attach_kind {
  SCH_ATTACH_ROOT,   /* computed at the top level, over its whole extent */
  SCH_ATTACH_INLINE, /* substituted into its consumers */
  SCH_ATTACH_SCOPE   /* computed inside a loop of another stage (compute_at) */
} sch_attach_kind;

/* An iter var: its name ("i.outer"), its loop variable (an int64 VAR), data or reduce, the
 * loop kind it is marked with, its stage, and whether it is a current leaf (not split or
 * fused away). */
const char *sch_iter_name(const sch_iter *it);
const ir_expr *sch_iter_var(const sch_iter *it);
sch_iter_kind sch_iter_type(const sch_iter *it);
ir_for_kind sch_iter_loop_kind(const sch_iter *it);
sch_stage *sch_iter_stage(const sch_iter *it);
int sch_iter_is_leaf(const sch_iter *it);
/* A stage: the tensor it computes, its current loops (outermost first), where it is computed
 * (ROOT, INLINE, or SCOPE with the consumer stage and loop through the pointers, which may be
 * NULL), its cache scope ("global"/"local" for cache stages, else NULL), its schedule. */
te_tensor *sch_stage_tensor(const sch_stage *st);
int sch_stage_nleaf(const sch_stage *st);
sch_iter *sch_stage_leaf(const sch_stage *st, int i); /* NULL outside [0, nleaf) */
sch_attach_kind sch_stage_attach(const sch_stage *st, sch_stage **at_stage, sch_iter **at_iter);
/* The loop of the consumer where a compute_at'd stage's buffer lives (sch_store_at), or NULL:
 * at the compute loop, or at the top level when sch_stage_store_root says 1. */
sch_iter *sch_stage_store_iter(const sch_stage *st);
int sch_stage_store_root(const sch_stage *st);
const char *sch_stage_scope(const sch_stage *st);
sch_schedule *sch_stage_schedule(const sch_stage *st);
/* A schedule's stages, producers before consumers; its ctx; its outputs. */
int sch_schedule_nstage(const sch_schedule *s);
sch_stage *sch_schedule_stage(const sch_schedule *s, int i); /* NULL outside [0, nstage) */
tec_ctx *sch_schedule_ctx(const sch_schedule *s);
/* The outputs, as given to sch_create. */
int sch_schedule_noutput(const sch_schedule *s);
te_tensor *sch_schedule_output(const sch_schedule *s, int i); /* NULL outside [0, noutput) */

/* ---- schedules as data ----
 * Every primitive, once: X(KIND, name, operands). The list makes the record kinds
 * (SCH_PRIM_<KIND>), the names, the C-call and JSON printers, the JSON parser, the replay
 * dispatcher (schedule/replay.c) and difftest's calls. `operands` lists a record's fields in
 * the order of the C call sch_<name>(...), as "field:type" separated by spaces:
 *   stage     a computed tensor's stage, recorded by the tensor's name
 *   tensor    a tensor (placeholder or computed), by name
 *   iter@f    a current loop of the stage named by field f (a stage, or a computed tensor), by
 *             the loop's name ("i.outer")
 *   iters@f   several such loops (the call takes a count and an array)
 *   axis@f    a data axis of f's stage, by its dimension (the call takes sch_axis(stage, d))
 *   tensors   several tensors (a count and an array)
 *   int, str  an int64 / a string
 *   value     a pragma value: none (NULL), an integer or a float constant
 * A leading '>' marks what the call creates: loops (returned through pointers, last) or a
 * tensor (the call's result); records keep their names, and replay checks it gets the same. A
 * call whose first field is not a stage takes the schedule first: sch_cache_read(s, ...). */
#define SCH_FOR_EACH_PRIM(X)                                                                  \
  /* split iter by factor (the inner loop's extent) */                                        \
  X(SPLIT, split, "stage:stage iter:iter@stage factor:int >outer:iter >inner:iter")           \
  /* split iter into nparts outer iterations */                                               \
  X(SPLIT_NPARTS, split_nparts, "stage:stage iter:iter@stage nparts:int >outer:iter >inner:iter") \
  /* split by factor with a tail strategy (sch_tail: 0 guard_with_if .. 3 predicate) */       \
  X(SPLIT_TAIL, split_tail, "stage:stage iter:iter@stage factor:int tail:int "                \
                            ">outer:iter >inner:iter")                                        \
  /* split by a factor expression of size variables (symbolic) */                             \
  X(SPLIT_EXPR, split_expr, "stage:stage iter:iter@stage factor:value >outer:iter >inner:iter") \
  /* fuse two adjacent loops */                                                               \
  X(FUSE, fuse, "stage:stage outer:iter@stage inner:iter@stage >fused:iter")                  \
  /* put loops in a new order */                                                              \
  X(REORDER, reorder, "stage:stage order:iters@stage")                                        \
  /* split x and y, order xo, yo, xi, yi */                                                   \
  X(TILE, tile, "stage:stage x:iter@stage y:iter@stage x_factor:int y_factor:int "            \
                ">xo:iter >yo:iter >xi:iter >yi:iter")                                        \
  /* compute stage inside loop `at` of consumer */                                            \
  X(COMPUTE_AT, compute_at, "stage:stage consumer:stage at:iter@consumer")                    \
  /* substitute stage into its readers */                                                     \
  X(COMPUTE_INLINE, compute_inline, "stage:stage")                                            \
  /* compute stage at the top level */                                                        \
  X(COMPUTE_ROOT, compute_root, "stage:stage")                                                \
  /* a copy of tensor that the readers read instead */                                        \
  X(CACHE_READ, cache_read, "tensor:tensor scope:str readers:tensors >result:tensor")         \
  /* tensor computed into a cache that it then copies */                                      \
  X(CACHE_WRITE, cache_write, "tensor:tensor scope:str >result:tensor")                       \
  /* partial reductions over loop axis of tensor */                                           \
  X(RFACTOR, rfactor, "tensor:tensor axis:iter@tensor factor_axis:int >result:tensor")        \
  /* loop kinds */                                                                            \
  X(PARALLEL, parallel, "stage:stage iter:iter@stage")                                        \
  X(VECTORIZE, vectorize, "stage:stage iter:iter@stage")                                      \
  X(UNROLL, unroll, "stage:stage iter:iter@stage")                                            \
  /* a pragma on a loop */                                                                    \
  X(PRAGMA, pragma, "stage:stage iter:iter@stage key:str value:value")                        \
  /* pad the row stride of a dimension of stage's buffer */                                   \
  X(STORAGE_ALIGN, storage_align, "stage:stage axis:axis@stage factor:int offset:int")        \
  /* prefetch tensor at loop iter, offset iterations ahead */                                 \
  X(PREFETCH, prefetch, "stage:stage tensor:tensor iter:iter@stage offset:int")               \
  /* the prepare/run split on (1) or off (0) */                                               \
  X(SET_PRECOMPUTE, set_precompute, "enable:int")                                             \
  /* keep a compute_at'd stage's buffer at loop `at` of consumer (Halide's store_at) */        \
  X(STORE_AT, store_at, "stage:stage consumer:stage at:iter@consumer")                        \
  /* keep a compute_at'd stage's buffer at the top level (Halide's store_root) */               \
  X(STORE_ROOT, store_root, "stage:stage")                                                    \
  /* stage's loops fused with other's from the outermost down to `at` (Halide's compute_with) */ \
  X(COMPUTE_WITH, compute_with, "stage:stage other:stage at:iter@other")

typedef enum sch_prim_kind {
#define SCH_PRIM_ENUM_(kind, name, operands) SCH_PRIM_##kind, /* sch_<name> (list above) */
  SCH_FOR_EACH_PRIM(SCH_PRIM_ENUM_)
#undef SCH_PRIM_ENUM_
  SCH_PRIM_COUNT /* the number of primitives */
} sch_prim_kind;

/* "split", and the operand list of the primitive (above); NULL for an unknown kind. */
const char *sch_prim_name(sch_prim_kind k);
const char *sch_prim_operands(sch_prim_kind k);

typedef enum sch_value_kind {
  SCH_VALUE_NONE,  /* NULL */
  SCH_VALUE_INT,   /* an integer constant of type vtype */
  SCH_VALUE_FLOAT, /* a float constant of type vtype */
  SCH_VALUE_EXPR   /* any other expression: kept (expr), but a trace cannot print or replay it */
} sch_value_kind;

/* One field of a record, by the type of the primitive's operand list. */
typedef struct sch_operand {
  const char *name;     /* stage, tensor: the tensor's name; iter: the loop's name; str */
  int64_t i;            /* int; axis: the dimension; value: SCH_VALUE_INT */
  double f;             /* value: SCH_VALUE_FLOAT */
  sch_value_kind vkind; /* value */
  tec_dtype vtype;      /* value: the constant's type */
  const ir_expr *expr;  /* value: SCH_VALUE_EXPR */
  int n;                /* iters, tensors: how many names */
  const char **names;
} sch_operand;

typedef struct sch_record {
  sch_prim_kind kind;
  int nopd;
  sch_operand *opd;     /* one per field of sch_prim_operands(kind), in order */
} sch_record;

/* What a schedule did, in order: one record per primitive call that succeeded. */
/* The version a trace is written in (sch_trace_json's "tec_trace"). 2: sch_rfactor gives the
 * new stage its remaining reduce axes in TVM's order (untouched reduce axes first, then the
 * rest of the factored axis's loops); 1: in the stage's loop order (tec before 2). A trace
 * read as version 1 replays as it was written, and a schedule it was replayed onto keeps
 * version 1 (sch_set_trace_version). */
#define SCH_TRACE_VERSION 2

typedef struct sch_trace {
  int version;          /* SCH_TRACE_VERSION, or 1 (0 counts as the current version) */
  int n, cap;
  sch_record *rec;
  const char *broken;   /* set when a record could not be kept (out of memory): the trace no
                           longer matches the schedule, and printing or replaying it fails */
} sch_trace;


sch_schedule *sch_create(tec_ctx *ctx, int nout, te_tensor *const *outs);
/* The same with the outputs listed: SCH_CREATE(ctx, C) or SCH_CREATE(ctx, C, D). */
#define SCH_CREATE(ctx, ...)                                                              \
  sch_create((ctx), (int)(sizeof((te_tensor *[]){__VA_ARGS__}) / sizeof(te_tensor *)),      \
             (te_tensor *const[]){__VA_ARGS__})
/* The stage that computes t (s[t] in TVM), or NULL with an error. All outputs of a
 * multi-output op (te_compute_multi) share one stage, named after the first. */
sch_stage *sch_stage_of(sch_schedule *s, const te_tensor *t);
/* Root iter vars: i-th data-parallel axis; i-th reduce axis. NULL with an error if absent (a
 * rank-0 stage has no data axes). */
sch_iter *sch_axis(sch_stage *st, int i);
sch_iter *sch_reduce_axis(sch_stage *st, int i);
/* A current leaf by name ("i", "i.outer", "i.inner.j.fused" ...), or NULL. */
sch_iter *sch_leaf_named(sch_stage *st, const char *name);

/* Split iv into outer and inner; inner has `factor` iterations. A factor (or nparts) above
 * 65536 and above iv's extent, when that is a constant, is the extent (the same iterations,
 * and no loop or buffer sized by the factor); the trace keeps the value given, and a replay
 * clamps it the same way. Up to 65536 a factor is kept as given (the loop runs under its tail
 * guard; tuned schedules keep their programs). With a symbolic extent the factor stays, and
 * the tail guard bounds the loop (its extent is min(factor, extent)). Applies to split,
 * split_nparts, split_tail (round_up's buffer is then the extent), split_expr with a constant,
 * and tile. */
int sch_split(sch_stage *st, sch_iter *iv, int64_t factor, sch_iter **outer, sch_iter **inner);
/* sch_split with a tail strategy (sch_tail; an int64 so traces carry it as a number):
 *   GUARD_WITH_IF   as sch_split.
 *   SHIFT_INWARDS   no guard: the last chunk starts at extent - factor and recomputes points
 *                   the chunk before it computed. Refused on a reduction (its update is not
 *                   idempotent) and when the extent is known to be less than the factor;
 *                   tec_lower refuses it where an attached stage's range is smaller than the
 *                   factor, and keeps a guard where the extent is only known at run time.
 *   ROUND_UP        no guard on stores: the loop runs to ceil(extent / factor) * factor and
 *                   tec allocates the stage's buffer rounded up; loads past the extent are
 *                   predicated off (they read nothing). Only on a data axis of the tensor
 *                   itself (not a loop a split/fuse made), of a stage that is not an output;
 *                   tec_lower refuses it when the tensor is an argument (the caller's buffer).
 *   PREDICATE       no if: every load and store of the body is predicated on the guard, so a
 *                   vectorized inner loop becomes masked vector loads and stores.
 * Results are exact with every strategy; the lowered IR differs (tests/test_split_tail.c). */
int sch_split_tail(sch_stage *st, sch_iter *iv, int64_t factor, int64_t tail, sch_iter **outer,
                   sch_iter **inner);
/* Split iv by a factor that is an integer expression of constants and size variables
 * (split(i, n / 4)); a constant factor is sch_split. The factor is fixed when the function is
 * called; a value below 1 then counts as 1. Tail: guard_with_if. A trace holding a symbolic
 * factor cannot be printed or replayed (sch_trace_c and sch_trace_json refuse it): only
 * constant values are printable. */
int sch_split_expr(sch_stage *st, sch_iter *iv, const ir_expr *factor, sch_iter **outer,
                   sch_iter **inner);
/* Split iv into `nparts` outer iterations. */
int sch_split_nparts(sch_stage *st, sch_iter *iv, int64_t nparts, sch_iter **outer,
                     sch_iter **inner);
/* Fuse two adjacent leaves (outer immediately before inner) into one. Two data axes make a
 * data loop; a data axis with a reduce axis (either order) makes a reduce loop, lowered with
 * the reduction's init before it over the elements it covers; parallel, vectorize, rfactor
 * and cache_write refuse it like any reduce loop, and a reduce axis whose range depends on
 * the data axes (r < j + 1) is refused here, and so are two loops whose constant extents
 * multiply past 2^63 - 1. */
int sch_fuse(sch_stage *st, sch_iter *outer, sch_iter *inner, sch_iter **fused);
/* Put the given leaves in this order, in the positions they occupy now. */
int sch_reorder(sch_stage *st, int n, sch_iter *const *order);
/* The same with the leaves listed: SCH_REORDER(st, io, jo, ii, ji). */
#define SCH_REORDER(st, ...)                                                              \
  sch_reorder((st), (int)(sizeof((sch_iter *[]){__VA_ARGS__}) / sizeof(sch_iter *)),        \
              (sch_iter *const[]){__VA_ARGS__})
/* split x and y, order xo, yo, xi, yi. */
int sch_tile(sch_stage *st, sch_iter *x, sch_iter *y, int64_t x_factor, int64_t y_factor,
             sch_iter **xo, sch_iter **yo, sch_iter **xi, sch_iter **yi);

/* ---- where a stage is computed ---- */
/* Compute producer inside loop `at` of consumer stage `consumer` (just the region the
 * consumer's iterations inside `at` need, plus halo). Splitting `at` later moves the producer
 * to the inner loop (the same work per iteration), fusing it to the fused loop. A producer
 * with several readers may be attached where one of them runs, in any call order: tec_lower
 * computes the union of what every reader reads there, and refuses (naming it) a reader that
 * is not computed inside `at` (attach it there too, or inline it into the consumer). */
int sch_compute_at(sch_stage *producer, sch_stage *consumer, sch_iter *at);
/* Halide's store_at: producer's buffer lives at loop `at` of consumer, while it is still
 * computed at its compute_at loop, which must be `at` or a loop inside it (call compute_at
 * first; compute_at, compute_root or compute_inline afterwards drop the store_at). One buffer
 * then serves every iteration of the loops between `at` and the compute loop, and tec_lower
 * (lower/store_at.c) makes two optimizations of Halide's from it:
 *   sliding window: when a serial loop between them (outermost first; `at` excluded, the
 *     compute loop included) moves the region the producer must compute monotonically along
 *     one dimension, and no other, each iteration after its first computes only the part the
 *     previous one did not (new min = select(v > 0, previous end, min)): a stencil computed
 *     per row of its consumer computes rows + halo per buffer, not rows * (1 + halo);
 *   storage folding: along that dimension, when the window the readers read in one iteration
 *     has a constant bound, the buffer keeps only fold = the next power of two >= it, indexed
 *     modulo fold (floormod, in the printed program); tec_lower_options.no_storage_folding
 *     keeps every row.
 * Over a parallel or vectorized loop there is no sliding: each thread needs its own buffer, so
 * it goes inside the innermost such loop between `at` and the compute loop, and a note in
 * lower_func.notes says so (strict mode: an error). The same note when a loop moves the region
 * in a way that cannot slide (two dimensions, not monotone). Split of `at` keeps the buffer at
 * the outer loop (the same lifetime), fuse at the fused loop; tec_lower refuses a store loop
 * that is no longer a loop of the consumer or that a reorder moved inside the compute loop.
 * Refused here: a producer not computed with compute_at (root or inline: nothing to store
 * apart), an output, a consumer or loop other than the compute_at's, a loop inside the compute
 * loop; tec_lower refuses it for a producer passed as an argument (the caller's buffer). */
int sch_store_at(sch_stage *producer, sch_stage *consumer, sch_iter *at);
/* Halide's compute_with: stage's loops are fused with other's from the outermost down to
 * `at` (a loop of other), their bodies in one loop there, other's first; two stages reading
 * the same producer over the same domain then share its loads:
 *   for (y) { for (x) Ix[y, x] = f(gray..);  for (x) Iy[y, x] = g(gray..); }
 *   sch_compute_with(s_Ix, s_Iy, Iy_x):   for (y) for (x) { Iy[y, x] = g(..); Ix[y, x] = f(..); }
 * Legal when both stages are computed at the same place (both at the root, or both at the
 * same loop of one consumer: call compute_at first), stage has a loop at each level down to
 * at's, of the same kind (serial, parallel, vectorized, unrolled) and over data axes, and
 * neither depends on the other (directly, or through any stage between them); each keeps its
 * own buffer (store_at applies to each alone). tec_lower also needs each pair of fused loops
 * to run over the same range (it names the two loops and their ranges otherwise) and refuses
 * a pragma or prefetch on a fused loop, a warm-up (sliding) around one, and a stage computed
 * at a fused loop above `at`: only the loops above `at` must be plain. A stage computed at
 * `at` itself (the innermost fused loop) or inside it is allowed, but may be read only by the
 * stage whose loop it is at (tec_lower refuses a producer computed at other's `at` and read by
 * stage too, naming compute_with: compute it where both are). compute_at, compute_root or
 * compute_inline of either stage afterwards drop the fusion; a stage fuses with at most one
 * other, and not with one that is fused itself.
 * Not for multi-output, scan, extern or reduction stages. */
int sch_compute_with(sch_stage *stage, sch_stage *other, sch_iter *at);
/* The stage st's loops are fused with (sch_compute_with), and the loop of that stage down to
 * which they are; NULL when none. */
sch_stage *sch_stage_compute_with(const sch_stage *st, sch_iter **at);
/* Halide's store_root: as sch_store_at with the buffer at the top level, outside every loop of
 * the consumer (whose loops then all lie between it and the compute loop). tec_lower refuses
 * it when the consumer is itself computed at another stage's loop (store_at a loop of the
 * consumer instead). */
int sch_store_root(sch_stage *producer);
/* Substitute the producer's body into its consumers (no buffer, no loops). */
int sch_compute_inline(sch_stage *producer);
/* Compute over the whole extent at the top level (the default). */
int sch_compute_root(sch_stage *producer);

/* ---- caches ---- */
/* A new stage that copies t ("global" or "local" scope) and that the given readers read
 * instead of t. t may be a placeholder (weights): the copy is where packing happens. Returns
 * the cache tensor (its stage: sch_stage_of). */
te_tensor *sch_cache_read(sch_schedule *s, te_tensor *t, const char *scope, int nreaders,
                          te_tensor *const *readers);
/* Computes t into a new stage ("<t>.<scope>") and makes t a copy of it: the accumulator of a
 * reduction lives in the cache. Call it before annotating or attaching t's stage. If t is
 * element-wise and its loops were split/reordered, the cache is laid out in that loop order
 * (dims = the leaves, e.g. [c.outer, h, w, c.inner]) and t's loops start over unsplit: with
 * compute_inline of t, this is how a cache_read copy becomes a packed layout. */
te_tensor *sch_cache_write(sch_schedule *s, te_tensor *t, const char *scope);

/* Factors reduction t over its reduce loop `axis` (a leaf, typically the inner part of a
 * split): returns a new tensor "<t>.rf" holding the partial reductions, with `axis` as its data
 * dimension factor_axis (0..ndim); t then reduces the partials. t's stage is rebuilt (its
 * earlier splits are dropped), so schedule it after rfactor.
 * The reduce axes of "<t>.rf" besides `axis`, outermost first, as TVM orders them: the reduce
 * axes the factored loop does not come from (each as its loops, in the stage's loop order),
 * then the other loops of the axis it was split from, in loop order. Splitting k1 into
 * (k1.outer, k1.inner) and factoring k1.inner of a reduction over (k1, k2) leaves
 * (k2, k1.outer), as in TVM. A schedule of trace version 1 keeps the loop order instead:
 * (k1.outer, k2). */
te_tensor *sch_rfactor(sch_schedule *s, te_tensor *t, sch_iter *axis, int factor_axis);
/* Sets the trace version of s (1 or SCH_TRACE_VERSION): which order sch_rfactor uses from now
 * on and which version sch_trace_json writes. sch_trace_replay sets 1 when it replays a
 * version 1 trace; sch_trace_c writes this call first for such a trace. -1 with an error for
 * another version. */
int sch_set_trace_version(sch_schedule *s, int version);

/* ---- loop annotations ----
 * An annotation (loop kind, pragma, prefetch) belongs to the loop it was put on: splitting or
 * fusing that loop afterwards leaves the new loops plain, so annotate after the loop structure
 * is final. */
int sch_parallel(sch_stage *st, sch_iter *iv);
/* The loop's extent must be a constant, and the loop data-parallel (a reduce axis is refused:
 * rfactor it first). A vectorized loop the vectorizer cannot make vector code (the reasons are
 * in lower/vectorize.c) stays serial and is reported in the lowered function's notes
 * (lower_func.notes; an error in strict mode, tec_ctx_set_strict). */
int sch_vectorize(sch_stage *st, sch_iter *iv);
/* (vectorize and unroll refuse at the call a loop of an output whose extent is not a constant,
 * since an output stays at root; another stage's loop may get a constant extent once it is
 * computed at a loop, so tec_lower checks those.) */
int sch_unroll(sch_stage *st, sch_iter *iv);    /* the loop's extent must be a constant */
/* Keys: "debug_skip_region" (the loop and its body are dropped: output wrong by design, for
 * timing experiments), "auto_unroll_max_step" (value: unroll inner constant loops up to that
 * many steps), "parallel_launch_point" (the thread pool is entered once, at this loop: every
 * thread runs the loop, each parallel loop inside runs its static share of iterations and
 * ends with a barrier; stores outside parallel loops run on one thread, then a barrier;
 * allocations inside the loop outside parallel loops are per thread. Without a parallel loop
 * inside it is a plain loop; inside a parallel loop tec_lower refuses it), "parallel_dynamic"
 * (on a parallel loop: the threads take chunks of `value` iterations in turn instead of one
 * static range each, so a thread slowed by other load on its core does less (OpenMP's
 * schedule(dynamic, value)); value NULL or 0: about four chunks per thread. tec_lower refuses
 * it on a loop that is not parallel, tec_build inside a parallel_launch_point region, whose
 * loops are cut statically), "sched_pressure" (every function tec_build makes for the
 * lowered function holding the loop is scheduled by LLVM for register pressure where its
 * backend has a choice: ARMv7 gets the MachineScheduler, "+use-misched", instead of the
 * latency-first SelectionDAG list scheduler, blind to a loop's live-in values; nothing on
 * other targets; docs/arm.md), "unroll" (the loop is unrolled, as sch_unroll). A key
 * "user_<name>" is kept in the lowered IR as an annotation (attr pragma_user_<name>) and has
 * no effect. TVM's keys tec does not share (schedule/pragma_tvm.c): "unroll_explicit" (NULL
 * or 1) and "parallel_barrier_when_finish" (NULL) are accepted, since tec always unrolls in the
 * IR and ends every parallel loop with a barrier (nothing is recorded); unroll_explicit = 0,
 * "parallel_stride_pattern", "import_llvm", "import_c" and "loop_partition_hint" are refused
 * naming tec's equivalent. Any other key is refused, naming the known ones, and so is a value
 * of the wrong kind (the table below: a value on a key that takes none, a missing or negative
 * count).
 * An annotation (loop kind, pragma, prefetch, storage_align) on an inlined stage is refused,
 * and so is compute_inline of an annotated stage: an inlined stage has no loops or buffer. */
int sch_pragma(sch_stage *st, sch_iter *iv, const char *key, const ir_expr *value);
/* Tensorize (TVM's s[C].tensorize, Halide's VectorReduce): the loop nest from iv inward becomes
 * one instruction-level intrinsic, chosen per target when the function is built
 * (docs/tensorize.md). Recorded as the pragma "tensorize" = intrin; tec_lower checks that the
 * nest computes what the intrinsic computes and refuses it with the reason otherwise.
 *   SCH_INTRIN_DOT4: two loops, a lane loop of 4, 8 or 16 iterations and a reduction loop of
 *   4, around C[..] += int32(a) * int32(b), with C int32 (stride 1 in the lane loop) and a, b
 *   int8/uint8 reading 4 consecutive bytes per lane (stride 1 in the reduction, 4 or 0 in
 *   the lane loop: the [..][lanes][4] layout, or one group shared by every lane). x86:
 *   vpdpbusd (avx512vnni, avxvnni) for uint8 x int8, else vpmaddwd (exact); AArch64:
 *   sdot/udot (+dotprod), usdot (+i8mm); otherwise a widening multiply and pairwise adds.
 *   The reduction's initialization loop at iv (if any) is vectorized.
 *   SCH_INTRIN_MMLA: see the enum; C in 2x2 blocks, a and b packed as [..][2][8]. */
typedef enum sch_intrin {
  SCH_INTRIN_DOT4, /* 4-element 8-bit dot products into int32 lanes (IR_INTRIN_DOT4) */
  SCH_INTRIN_MMLA, /* 2x2 int32 block += 2x8 by 8x2 bytes (IR_INTRIN_MMLA): three loops, rows
                    * of 2 (C steps 2, a 8), columns of 2 (C 1, b 8), a reduction of 8; AArch64
                    * +i8mm: smmla/ummla/usmmla, else dot4's instructions on the same bytes */
  SCH_INTRIN_DOT4_LANE, /* dot4 by element: a group loop of 2 or 4 around a dot4 nest whose
                         * shared operand (4 bytes for every lane) moves by 4 per step of it:
                         * the 8 or 16 bytes read once, each step a dot4 on one group of them
                         * (ir_dot4_lane; AArch64 +dotprod: sdot v.4s, v.16b, v.4b[g]). C and
                         * the other operand any constant step in the group loop (columns, or
                         * 0: a reduction) */
  SCH_INTRIN_COUNT /* number of intrinsics (not one) */
} sch_intrin;
int sch_tensorize(sch_stage *st, sch_iter *iv, sch_intrin intrin);
/* The intrinsic's name ("dot4"), NULL out of range. */
const char *sch_intrin_name(sch_intrin intrin);
/* The pragma table (schedule/pragma.c): one row per key sch_pragma accepts, in order; the
 * last row, "user_<name>", stands for every user_ key. sch_pragma_desc_at(i) for i from 0,
 * NULL past the end: for docs, help texts and tests. */
typedef enum sch_pragma_value_kind {
  SCH_PRAGMA_VALUE_NONE,          /* value must be NULL */
  SCH_PRAGMA_VALUE_COUNT,         /* a scalar integer constant >= 0 */
  SCH_PRAGMA_VALUE_COUNT_OR_NONE, /* a count, or NULL */
  SCH_PRAGMA_VALUE_ANY            /* anything, or NULL */
} sch_pragma_value_kind;
typedef struct sch_pragma_desc {
  const char *key;
  sch_pragma_value_kind value;
  const char *pass;  /* the pass that acts on it (tec_lower_pass_name, or "codegen"); NULL: none */
  const char *doc;   /* one line */
} sch_pragma_desc;
const sch_pragma_desc *sch_pragma_desc_at(int i);
/* "no value", "a constant integer >= 0", ... */
const char *sch_pragma_value_kind_name(sch_pragma_value_kind k);
/* At the top of every iteration of loop iv, prefetch (llvm.prefetch: a hint, never a fault,
 * no effect on results) the cache lines of t that iteration iv + offset will read: the region
 * of t the loop body reads, over the loops inside iv, one prefetch per 64-byte line along t's
 * last dimension (TVM's prefetch, Halide's prefetch). t must be an input of st, offset >= 1.
 * tec_lower refuses it when iv is vectorized or inside a vectorized loop, when t is computed
 * inside iv (its next iterations do not exist yet), or when an index of t has no bound over
 * the loops inside iv (bound inference's interval arithmetic: sums, constant multiples,
 * division and modulo by constants, min, max, select). Prefetches past t's end are
 * harmless. */
int sch_prefetch(sch_stage *st, te_tensor *t, sch_iter *iv, int64_t offset);
/* Pad the row stride of dimension axis of st's buffer to factor*k + offset elements. tec_lower
 * refuses a buffer whose padded size (in bytes) passes 2^63 - 1, naming the storage_align. */
int sch_storage_align(sch_stage *st, sch_iter *axis, int64_t factor, int64_t offset);

/* Whether stages that depend on constant placeholders alone run once in a separate prepare
 * function (on, the default) or inside every call (off: to measure what the split saves). */
int sch_set_precompute(sch_schedule *s, int enable);

/* The tensor of this schedule called name (inputs, computed tensors and the caches the
 * primitives made), or NULL with an error. */
te_tensor *sch_tensor_named(sch_schedule *s, const char *name);

/* ---- the trace ----
 * Records name stages and tensors by their tensor names and loops by their names ("i.outer"),
 * not by position: a name is what the user wrote and reads in the lowered IR, it stays valid
 * when primitives insert stages (cache_read) or reorder loops, and a hand-edited JSON trace
 * (a tuning record) stays readable. Caches and rfactor results get deterministic names
 * ("B.global", "C.local1", "C.rf"), so a later record finds them by name in the replay too.
 * Names must be unique where they are looked up: a replay refuses an ambiguous one.
 *
 *   const sch_trace *t = sch_get_trace(s);
 *   puts(sch_trace_c(ctx, t));              // C calls to paste after sch_create
 *   const char *js = sch_trace_json(ctx, t);
 *   ... declare the same operator in ctx2, s2 = sch_create(ctx2, 1, &C2) ...
 *   sch_trace_replay(s2, sch_trace_parse_json(ctx2, js));  // s2 lowers like s */
const sch_trace *sch_get_trace(const sch_schedule *s);
int sch_trace_len(const sch_trace *t);
/* The trace as C calls a user could paste where `tec_ctx *ctx` and `sch_schedule *s` are in
 * scope (tensors looked up with sch_tensor_named, loops with sch_leaf_named). NULL with an
 * error if a record holds something a trace cannot print (a pragma value that is not a
 * constant) or the trace is broken. In the ctx's arena. */
const char *sch_trace_c(tec_ctx *ctx, const sch_trace *t);
/* The trace as JSON, one record per line:
 *   {"tec_trace": 2, "records": [
 *     {"prim": "split", "stage": "C", "iter": "i", "factor": 32, "outer": "i.outer", ...},
 *   ]}
 * Field names and order are the operand list's; a value is null, an integer (int64), or
 * {"type": "int32", "int": 3} / {"type": "float32", "float": 0.5}. NULL with an error as
 * sch_trace_c. */
const char *sch_trace_json(tec_ctx *ctx, const sch_trace *t);
/* Parses what sch_trace_json prints (fields in any order, whitespace free). NULL with an error
 * naming the line, the record and the field, and what was expected. */
sch_trace *sch_trace_parse_json(tec_ctx *ctx, const char *text);
/* Applies every record of t to fresh, a new schedule of the same declaration (the same tensor
 * names and shapes), in order; fresh's own trace grows as it goes. 0, or -1 with an error
 * naming the record (its index and JSON text) and why it could not be applied. */
int sch_trace_replay(sch_schedule *fresh, const sch_trace *t);
/* A new schedule of s's outputs with s's trace replayed (same ctx), or NULL with an error. */
sch_schedule *sch_clone(sch_schedule *s);

/* Printable description of a stage's leaves ("i.outer, j, i.inner"), in the arena. */
const char *sch_stage_str(const sch_stage *st);

#endif

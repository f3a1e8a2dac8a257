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
 * primitive, the stage and the axis and says what would be legal.
 *
 * Tail handling: a split whose factor does not divide the extent makes the last outer
 * iteration partial. The default (and for now the only) strategy is a guard: the body runs
 * under `if (root index < extent)`, so results are always exact; loop partitioning later peels
 * the guard out of the hot loop.
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

struct sch_iter {
  const ir_expr *var;      /* the loop variable (int64) */
  const char *name;
  sch_iter_kind kind;
  const ir_expr *dom_min;    /* root iters: declared domain; others: NULL until lowering */
  const ir_expr *dom_extent;
  ir_for_kind for_kind;    /* serial, parallel, vectorized, unrolled */
  int npragma;             /* pragmas on this loop (key, value) */
  const char **pragma_keys;
  const ir_expr **pragma_values;
  int nprefetch;           /* prefetches at this loop (tensor, iterations ahead) */
  const te_tensor **prefetch_tensors;
  const int64_t *prefetch_offsets;
  int dead;                /* split or fused away: no longer a leaf */
  sch_stage *stage;
};

typedef enum sch_rel_kind {
  SCH_REL_SPLIT, /* parent -> outer, inner */
  SCH_REL_FUSE   /* outer, inner -> fused */
} sch_rel_kind;

typedef struct sch_relation {
  sch_rel_kind kind;
  sch_iter *parent, *outer, *inner; /* split: parent -> (outer, inner) */
  sch_iter *fused;                  /* fuse: (outer, inner) -> fused */
  const ir_expr *factor;            /* split: inner extent, or NULL when nparts is given */
  const ir_expr *nparts;            /* split: outer extent, or NULL */
} sch_relation;

typedef enum sch_attach_kind {
  SCH_ATTACH_ROOT,   /* computed at the top level, over its whole extent */
  SCH_ATTACH_INLINE, /* substituted into its consumers */
  SCH_ATTACH_SCOPE   /* computed inside a loop of another stage (compute_at) */
} sch_attach_kind;

struct sch_stage {
  te_tensor *tensor;
  sch_schedule *sched;
  int nroot;               /* data axes then reduce axes */
  sch_iter **root;
  int nleaf;
  sch_iter **leaf;         /* loop order, outermost first */
  int nrel;
  sch_relation *rel;
  int cap_leaf, cap_rel;
  sch_attach_kind attach;
  sch_stage *attach_stage; /* SCOPE: the consumer stage */
  sch_iter *attach_iter;   /* SCOPE: the loop inside which this stage is computed */
  int is_output;
  /* The op as this schedule sees it: cache_read/cache_write rewrite bodies and inputs here,
   * never in the te_tensor (which other schedules may share). */
  const ir_expr *body;     /* NULL for placeholders */
  int ninputs;
  const te_tensor **inputs;
  const char *scope;       /* "global" or "local" for cache stages, else NULL */
  int nalign;              /* storage_align requests */
  struct sch_align { int axis; int64_t factor, offset; } *align;
};

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
  X(SET_PRECOMPUTE, set_precompute, "enable:int")

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
typedef struct sch_trace {
  int n, cap;
  sch_record *rec;
  const char *broken;   /* set when a record could not be kept (out of memory): the trace no
                           longer matches the schedule, and printing or replaying it fails */
} sch_trace;

struct sch_schedule {
  tec_ctx *ctx;
  sch_trace trace;         /* every primitive that succeeded on this schedule */
  int nout;
  te_tensor **outputs;
  int nstage, cap_stage;
  sch_stage **stages;      /* producers before consumers */
  int precompute;          /* split constant stages into a prepare step (default 1) */
};

sch_schedule *sch_create(tec_ctx *ctx, int nout, te_tensor *const *outs);
/* The same with the outputs listed: SCH_CREATE(ctx, C) or SCH_CREATE(ctx, C, D). */
#define SCH_CREATE(ctx, ...)                                                              \
  sch_create((ctx), (int)(sizeof((te_tensor *[]){__VA_ARGS__}) / sizeof(te_tensor *)),      \
             (te_tensor *const[]){__VA_ARGS__})
/* The stage that computes t (s[t] in TVM), or NULL with an error. */
sch_stage *sch_stage_of(sch_schedule *s, const te_tensor *t);
/* Root iter vars: i-th data-parallel axis; i-th reduce axis. NULL with an error if absent. */
sch_iter *sch_axis(sch_stage *st, int i);
sch_iter *sch_reduce_axis(sch_stage *st, int i);
/* A current leaf by name ("i", "i.outer", "i.inner.j.fused" ...), or NULL. */
sch_iter *sch_leaf_named(sch_stage *st, const char *name);

/* Split iv into outer and inner; inner has `factor` iterations. */
int sch_split(sch_stage *st, sch_iter *iv, int64_t factor, sch_iter **outer, sch_iter **inner);
/* Split iv into `nparts` outer iterations. */
int sch_split_nparts(sch_stage *st, sch_iter *iv, int64_t nparts, sch_iter **outer,
                     sch_iter **inner);
/* Fuse two adjacent leaves (outer immediately before inner) into one. Two data axes make a
 * data loop; a data axis with a reduce axis (either order) makes a reduce loop, lowered with
 * the reduction's init before it over the elements it covers; parallel, vectorize, rfactor
 * and cache_write refuse it like any reduce loop, and a reduce axis whose range depends on
 * the data axes (r < j + 1) is refused here. */
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
 * earlier splits are dropped), so schedule it after rfactor. */
te_tensor *sch_rfactor(sch_schedule *s, te_tensor *t, sch_iter *axis, int factor_axis);

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
 * loops are cut statically), "unroll" (the loop is unrolled, as sch_unroll). A key
 * "user_<name>" is kept in the lowered IR as an annotation (attr pragma_user_<name>) and has
 * no effect; any other key is refused, naming the known ones. value may be NULL.
 * An annotation (loop kind, pragma, prefetch, storage_align) on an inlined stage is refused,
 * and so is compute_inline of an annotated stage: an inlined stage has no loops or buffer. */
int sch_pragma(sch_stage *st, sch_iter *iv, const char *key, const ir_expr *value);
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
/* Pad the row stride of dimension axis of st's buffer to factor*k + offset elements. */
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
 *   {"tec_trace": 1, "records": [
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

/* internal.h — helpers shared by the schedule primitives (not public). */
#ifndef TEC_SCHEDULE_INTERNAL_H
#define TEC_SCHEDULE_INTERNAL_H

#include "tec/schedule.h"

/* ---- the structures behind sch_stage, sch_iter and sch_schedule (public: accessors) ---- */
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
  sch_tail tail;                    /* split: the tail strategy */
  sch_iter *parent, *outer, *inner; /* split: parent -> (outer, inner) */
  sch_iter *fused;                  /* fuse: (outer, inner) -> fused */
  const ir_expr *factor;            /* split: inner extent, or NULL when nparts is given */
  const ir_expr *nparts;            /* split: outer extent, or NULL */
} sch_relation;


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
  sch_iter *store_iter;    /* SCOPE: the loop of attach_stage where its buffer lives
                              (sch_store_at), or NULL: at attach_iter */
  int store_root;          /* SCOPE: the buffer at the top level (sch_store_root) */
  sch_stage *with_stage;   /* sch_compute_with: the stage whose loops this one shares, or NULL */
  sch_iter *with_iter;     /* the loop of with_stage down to which they are fused */
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

struct sch_schedule {
  tec_ctx *ctx;
  sch_trace trace;         /* every primitive that succeeded on this schedule */
  int nout;
  te_tensor **outputs;
  int nstage, cap_stage;
  sch_stage **stages;      /* producers before consumers */
  int precompute;          /* split constant stages into a prepare step (default 1) */
};


sch_iter *sch_iter_new(sch_stage *st, const char *name, sch_iter_kind kind);
int sch_leaf_index(const sch_stage *st, const sch_iter *it);
/* compute_with.c: the index of st in s->stages, or -1 */
int sch_stage_index(const sch_schedule *s, const sch_stage *st);
/* -1 with an error for primitive `who` unless `at` is a current loop of stage c (attach.c) */
int sch_consumer_loop(const char *who, sch_stage *c, sch_iter *at);
const char *sch_leaves_upto(tec_ctx *ctx, const sch_stage *st, int pos);
int sch_check_leaf(const char *who, sch_stage *st, sch_iter *it);
/* compute_with.c: p moved (compute_at, compute_root, compute_inline): its fusion with another
 * stage's loops, and any other stage's with it, dropped */
void sch_drop_with(sch_stage *p);
/* compute_with.c: 1 if stage a reads b's tensor, directly or through any stages between
 * (stages of s); 0 if not; -1 (an error in s's ctx) when out of memory */
int sch_stage_depends(const sch_schedule *s, const sch_stage *a, const sch_stage *b);
/* A primitive given a NULL stage (or consumer): -1, with "who: the <what> is NULL ..." in ctx
 * (the schedule of another argument; NULL: none to tell) unless ctx already holds an error (a
 * NULL from an earlier failure, whose message is that one). */
int sch_null_arg(const char *who, const char *what, tec_ctx *ctx);
/* The ctx of an iter's schedule, or NULL. */
tec_ctx *sch_iter_ctx(const sch_iter *it);
int sch_add_relation(sch_stage *st, sch_relation r);
/* extern.c: -1 with the reason primitive `who` cannot use axis `axis` of extern stage st (it
 * has no loops); the checks of the other primitives that an extern stage refuses. */
int sch_refuse_extern(const char *who, const sch_stage *st, const char *axis);
/* -1 with an error when t is read by an extern stage (compute_inline of it, cache_read for
 * that reader: the function needs t's buffer); who names the primitive. */
int sch_check_extern_reader(sch_schedule *s, const char *who, const te_tensor *t,
                            int nreaders, te_tensor *const *readers);
/* scan.c: recurrences (te_scan). 1 if it is made from scan stage st's recurrent axis; -1 with
 * the reason when a loop of it cannot be `kind` (parallel, vectorized), when st's loop order
 * puts t inside another axis' loop where a step reads the whole previous one, when primitive
 * `who` would inline, move, cache or rfactor a scan, its state or its update's stages. */
int sch_scan_has_axis(const sch_stage *st, const sch_iter *it);
int sch_scan_check_kind(const char *who, const sch_stage *st, const sch_iter *it,
                        ir_for_kind kind);
int sch_scan_check_order(const char *who, const sch_stage *st);
int sch_scan_refuse(const char *who, const sch_schedule *s, const te_tensor *t);
/* -1 when tile(x, y) of scan stage st would put its loops out of step order (both from t) or
 * t inside a data loop where a step reads the whole previous one. */
int sch_scan_check_tile(const sch_stage *st, const sch_iter *x, const sch_iter *y);
/* -1 when t is a scan's init and the scan among readers (nreaders < 0: every reader). */
int sch_scan_check_init_reader(const char *who, const sch_schedule *s, const te_tensor *t,
                                int nreaders, te_tensor *const *readers);
/* sch_create: the update's stages computed at their scan's t loop. */
void sch_scan_default_attach(sch_schedule *s);
/* tec_lower (legality.c): the whole schedule, with the attach kinds of this lowering. */
int sch_scan_check(const sch_schedule *s, const char *who, const sch_attach_kind *attach);
sch_stage *sch_stage_new(sch_schedule *s, te_tensor *t);
/* The one stage whose tensor is called name, or the one loop of st called name: NULL with an
 * error ("who: ..." when who is not NULL) when there is none or more than one (traces, and the
 * C they print, name tensors and loops; two of one name would be a guess). */
sch_stage *sch_find_stage(sch_schedule *s, const char *who, const char *name);
sch_iter *sch_find_leaf(sch_stage *st, const char *who, const char *name);
int sch_replace_leaf(sch_stage *st, int pos, int n, sch_iter *const *its);
/* Stages computed at loop `from` of st are computed at `to` instead (attach.c): split moves
 * them to the inner loop (one iteration of it is one of the old loop's), fuse to the fused. */
void sch_move_attachments(sch_stage *st, const sch_iter *from, sch_iter *to);
/* Buffers stored at loop `from` of st (sch_store_at) are stored at `to` instead: split moves
 * them to the outer loop (the same lifetime), fuse to the fused one. */
void sch_move_stores(sch_stage *st, const sch_iter *from, sch_iter *to);
/* The name cache_read/cache_write give a cache of base in scope: "<base>.<scope>", with 1, 2,
 * ... appended while a stage has that name (in the arena; difftest predicts names with it;
 * rfactor names its partials with scope "rf"). NULL when out of memory. */
const char *sch_cache_name(sch_schedule *s, const char *base, const char *scope);

/* fuse.c: the first relation of st fusing a data axis with a reduce axis, or NULL; its data
 * side in *data, its reduce side in *red (primitives that cannot follow such a fuse). */
const sch_relation *sch_mixed_fuse(const sch_stage *st, const sch_iter **data,
                                   const sch_iter **red);

/* relayout.c: extents of iters from the domains; index maps between roots and leaves. */
const ir_expr *sch_iter_extent(const sch_stage *st, const sch_iter *it);
int sch_root_to_leaf(const sch_stage *st, const ir_expr *const *root_vals,
                     const ir_expr **leaf_vals);
int sch_leaf_to_root(const sch_stage *st, const ir_expr *const *leaf_vals,
                     const ir_expr **root_vals, const ir_expr **guard);
/* red with its reduce axes made afresh when their domains use vars, with vals in their place
 * (a cache of a triangular sum gets axes over its own data axes); red when none do. */
const ir_expr *sch_reduce_rebind(tec_ctx *ctx, const ir_expr *red, int n,
                                 const ir_expr *const *vars, const ir_expr *const *vals);

/* ---- the primitive list as data (trace.c) ---- */
typedef enum sch_opd_type {
  SCH_T_STAGE,   /* sch_stage * */
  SCH_T_TENSOR,  /* te_tensor * */
  SCH_T_ITER,    /* sch_iter * (a loop of the owner's stage) */
  SCH_T_ITERS,   /* n, sch_iter *const * */
  SCH_T_AXIS,    /* sch_iter * (a data axis of the owner's stage; recorded as its dimension) */
  SCH_T_TENSORS, /* n, te_tensor *const * */
  SCH_T_INT,     /* int64_t */
  SCH_T_STR,     /* const char * */
  SCH_T_VALUE    /* const ir_expr * or NULL */
} sch_opd_type;

#define SCH_MAX_OPD 10
typedef struct sch_opd_spec {
  char field[24];
  sch_opd_type type;
  int out;   /* created by the call (loops: pointers at the end; a tensor: the result) */
  int owner; /* iter, iters, axis: the index of the field whose stage they belong to; else -1 */
} sch_opd_spec;
/* The fields of primitive k (SCH_FOR_EACH_PRIM), at most SCH_MAX_OPD; their count. */
int sch_prim_spec(sch_prim_kind k, sch_opd_spec *spec);
/* The kind called name, or -1. */
int sch_prim_by_name(const char *name);

/* One primitive's arguments as objects, one per field (outputs filled by the call). */
typedef struct sch_arg {
  sch_stage *stage;
  te_tensor *tensor;
  sch_iter *iter;            /* iter, axis, created loops */
  int n;                     /* iters, tensors */
  sch_iter *const *iters;
  te_tensor *const *tensors;
  int64_t i;
  const char *str;
  const ir_expr *value;
} sch_arg;
/* Calls sch_<name> of kind k with a (through the table SCH_FOR_EACH_PRIM makes in
 * replay.c): 0, or -1 with the primitive's error. */
int sch_prim_invoke(sch_schedule *s, sch_prim_kind k, sch_arg *a);
/* Appends the record of a call that succeeded (a: its arguments and what it created). 0, or
 * -1 when out of memory (the trace is then marked broken). */
int sch_trace_add(sch_schedule *s, sch_prim_kind k, const sch_arg *a);
/* The C text of a call of k whose arguments are already C text, one per field (lists: the
 * elements joined by ", ", their count in n[field]): declarations of the created loops, then
 * "sch_<name>(...);", or "te_tensor *<result> = sch_<name>(s, ...);". In the arena. */
const char *sch_prim_call_c(tec_ctx *ctx, sch_prim_kind k, const char *const *text,
                            const int *n);
/* A string as a C literal, quotes included (arena). */
const char *sch_c_string(tec_ctx *ctx, const char *s);
/* A record as one line of JSON (trace_json.c). strict: NULL with an error if a value is not a
 * constant; otherwise such a value is shown as a string. */
const char *sch_record_json(tec_ctx *ctx, const sch_record *r, int strict);
/* 0 if t can be printed (complete, every value a finite constant), else -1 with an error
 * for `who` naming the record. */
int sch_trace_check_printable(tec_ctx *ctx, const sch_trace *t, const char *who);
/* sch_reorder without a record: for primitives made of others (tile records itself). */
int sch_reorder_leaves(sch_stage *st, int n, sch_iter *const *order);

#endif

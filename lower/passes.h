/* passes.h — the lowering passes, in pipeline order (lower/pipeline.c runs them). Internal. */
#ifndef TEC_LOWER_PASSES_H
#define TEC_LOWER_PASSES_H

#include "tec/lower.h"
#include "ir/internal.h"
#include "schedule/relation.h"

/* The range [min, min + extent) of every iteration variable of every stage. */
typedef struct lower_range {
  const sch_iter *iter;
  const ir_expr *min, *extent;
} lower_range;
typedef struct lower_bounds {
  int n, cap;
  lower_range *r;
} lower_bounds;

/* What the passes before the loop program share. */
typedef struct lower_state {
  tec_ctx *ctx;
  const sch_schedule *s;      /* read only: lowering never writes the schedule */
  /* per stage index: how it is computed in this lowering — the stage's attach, but at root
   * for the constant stages the prepare/run split computes whole in <name>_prepare (always
   * set by tec_lower; read it through lower_attach_of) */
  const sch_attach_kind *attach;
  int nargs;
  te_tensor *const *args;
  const ir_expr **body;       /* per stage index: its body with inlined producers substituted */
  lower_bounds b;             /* per iter var: [min, min + extent) */
  const ir_expr ***region;    /* per attached stage: ndim (min, storage extent) pairs */
  const ir_expr ***clamp;     /* per attached stage: ndim domain ends to guard, or NULL */
  const unsigned char *skip;  /* per stage: 1 = not computed by this function (or NULL) */
  const char *fname;          /* the function being lowered (for messages) */
  struct lower_store *store;  /* per stage: where a store_at buffer lives (store_at.c), or
                                 NULL outside infer_bounds..schedule_ops */
  int no_fold;                /* tec_lower_options.no_storage_folding */
  unsigned char *no_warm;     /* per stage: its compute loop gets no warm-up (store_at.c) */
  /* per stage, from lower_with_table (compute_with.c) while schedule_ops runs: the stage it
   * is paired with by sch_compute_with (-1: none) */
  int *with;
} lower_state;

/* store_at.c: a stage stored at an outer loop of its consumer (sch_store_at). */
struct arith_env;
typedef struct lower_store {
  int pos;             /* the consumer's leaf whose body holds the buffer; -1: the compute loop,
                          or the top level when root */
  int root;            /* the buffer at the top level (sch_store_root) */
  int dim;             /* the dimension a sliding window moves along, or -1 */
  int64_t fold;        /* the buffer keeps `fold` rows of dim, indexed modulo fold; 0: all */
  const ir_expr *min, *extent; /* dim: what one iteration computes (the slid range) */
  /* warm-up (the slid loop is the compute loop; store_at.c): the loop starts `loop_w`
   * iterations early and every iteration computes only the new rows [end(v - 1), end(v)) */
  int warm;            /* 1: this stage slides with a warm-up */
  int64_t w;           /* the iterations it needs before the loop's first */
  int64_t loop_w;      /* its compute loop's warm-up: the most any stage there needs */
  int64_t step;        /* hi(v) - hi(v - 1), a constant > 0 */
  const ir_expr *hi;   /* the last row one iteration needs (affine in the loop) */
  const ir_expr *smin, *sext; /* the rows read over one run of the loop (smin unclamped) */
} lower_store;
/* The consumer leaf whose body holds producer pi's buffer: its store_at loop (-1: the top
 * level, store_root), moved inside the innermost parallel or vectorized loop up to the compute
 * loop pos (each thread its own buffer; a note); -2 when that is the compute loop (none). */
int lower_store_pos(lower_state *ls, int pi, int pos);
/* Producer pi stored at leaf spos of its consumer (-1: the top level) and computed at leaf pos: the per-dimension
 * compute box (lo, hi; NULL lo: unknown) and the readers' box over the loops inside spos
 * (slo, shi) and over one run of the compute loop (rlo, rhi: the loops outside it fixed),
 * cmin/wend what each compute loop writes ([cmin, wend) before the domain guard).
 * Decides the sliding window and the fold (ls->store[pi]) and writes the buffer's region
 * (min, extent pairs) into reg. env holds the consumer's loops up to pos. */
int lower_store_plan(lower_state *ls, int pi, int spos, int pos, const ir_expr *const *lo,
                     const ir_expr *const *hi, const ir_expr *const *slo,
                     const ir_expr *const *shi, const ir_expr *const *rlo,
                     const ir_expr *const *rhi, const ir_expr *const *cmin,
                     const ir_expr *const *wend, struct arith_env *env, const ir_expr **reg);
/* Before bound inference: no_warm for the stages whose compute loop cannot warm up (a stage
 * there not stored at an outer loop, a loop that is not serial, a stage computed inside one). */
int lower_store_warm_groups(lower_state *ls);
/* After a pass of bound inference: a compute loop where some stages warm up and others do
 * not gets no_warm for all of them (1: bound inference must run again); sets loop_w. */
int lower_store_warm_check(lower_state *ls);
/* The warm-up of leaf `it` of stage si: how many iterations it starts early (0: none). */
int64_t lower_store_warm_of(const lower_state *ls, int si, const sch_iter *it);
/* Appends, for every warm stage, its root range as its producers must see it: the new rows of
 * one iteration (for a producer computed at the same loop `group`, whole 0) or every row over
 * one run of its compute loop; returns how many entries it appended (the caller drops them), or -1. */
int lower_store_push_warm(lower_state *ls, int whole, const sch_iter *group);
/* After every region is known: the slid ranges of the stages that slide, for the nests. */
int lower_store_finish(lower_state *ls);
/* body inside the buffer of stage si stored at this loop: realize over ls->region[si], its
 * accesses modulo the fold. */
const ir_stmt *lower_store_realize(lower_state *ls, int si, const ir_stmt *body);

/* How st is computed in this lowering (ls->attach; legality.c). */
sch_attach_kind lower_attach_of(const lower_state *ls, const sch_stage *st);
/* compute_with.c: ls->with for this lowering, in one pass over the stages
 * (0, or -1 out of memory); the stage paired with stage si by sch_compute_with (either way),
 * or -1; whether the pair is computed at one place in this lowering (0, or -1 with an error;
 * checked where each stage of the pair is placed); the nest of the pair, e before l in stage order, from their own
 * nests (ne, nl), the pair checked already: loops fused down to the compute_with level,
 * inside `produce` of both; NULL with an error when the nests cannot be fused (ranges differ,
 * a stage between them reads the first, ...). */
int lower_with_table(lower_state *ls);
int lower_with_partner(const lower_state *ls, int si);
int lower_with_check(lower_state *ls, int si, int with);
const ir_stmt *lower_with_fuse(lower_state *ls, int e, int l, const ir_stmt *ne,
                               const ir_stmt *nl);

/* The prepare/run split (precompute.c): which stages depend on constants alone and run once
 * in <name>_prepare, and which of them the run function reads (the packed tensors). */
typedef struct lower_split_plan {
  unsigned char *in_prepare;    /* per stage */
  int npacked;
  te_tensor **packed;           /* prepare's outputs, run's extra inputs */
  unsigned char *const_arg_prep; /* per user arg: a constant read by prepare */
  unsigned char *const_arg_run;  /* per user arg: a constant read directly by run */
} lower_split_plan;
int lower_plan_precompute(lower_state *ls, lower_split_plan *plan);

/* 0. inline: st->body with every compute_inline'd producer substituted (fills state->body). */
int lower_inline(lower_state *ls);
/* Body b (of an op of the schedule) with the inlined producers of state->body substituted: the
 * other outputs of a multi-output op, whose stage carries the first output's body. */
const ir_expr *lower_inline_body(lower_state *ls, const ir_expr *b);

/* Values of a stage's iter vars in terms of its leaf loop variables, and the guards of its
 * non-dividing splits (iter_values.c). */
typedef sch_relvals lower_ivals;
int lower_iter_values(tec_ctx *ctx, const sch_stage *st, const lower_bounds *b, lower_ivals *out);
const ir_expr *lower_ivals_get(const lower_ivals *v, const sch_iter *it);
/* The values for a reduction's init, outside the reduce loops: data leaves as above, and each
 * data axis fused with a reduce axis a fresh loop var `<axis>.init` (*nfresh of them, with
 * their extents); reduce loops have no value. 0, or -1 with an error. */
int lower_init_values(tec_ctx *ctx, const sch_stage *st, const lower_bounds *b, lower_ivals *out,
                      int *nfresh, const ir_expr ***fresh_var, const ir_expr ***fresh_ext);

/* 1. bound inference: ranges of every iter var; the region an attached stage computes. */
/* (symbolic intervals over the loops inside an attach point: arith_interval, arith/arith.h) */
/* The READs of tensor t in e and in s (either may be NULL), appended to rd; returns rd->n. */
typedef struct lower_reads {
  const te_tensor *t;
  int n, cap;
  const ir_expr **r;
  tec_ctx *ctx;
} lower_reads;
int lower_collect_reads(lower_reads *rd, const ir_expr *e, const ir_stmt *s);
int lower_infer_bounds(lower_state *ls);

/* 1a/1b. schedule legality (legality.c): what the schedule as a whole must satisfy. Before
 * infer_bounds the attach structure, loop kinds around attached stages, pragma placement and
 * prefetch placement (needs no ranges); right after it, what needs ranges (vectorize and
 * unroll of constant extents, a loop's range using only loops outside it). -1 with the
 * error of the first violation. */
int lower_check_schedule(lower_state *ls);
int lower_check_bounds(lower_state *ls);
/* 1c. read_bounds: reads of a root stage provably outside their tensor's shape refused;
 * those the sizes decide become f->read_checks (asserts for the checked entry). */
int lower_read_bounds(lower_state *ls, lower_func *f);
/* Looks an iter up in b (NULL if absent). */
const lower_range *lower_bounds_get(const lower_bounds *b, const sch_iter *it);

/* 2. schedule to loop nests: one nest per stage, attached stages inside their loop, realize
 *    and produce around them. Tensors in args are the caller's buffers (not realized). */
const ir_stmt *lower_schedule_ops(lower_state *ls);

/* 2c. scan (scan.c), right after schedule_ops: each te_scan's init steps copied at the top of
 *     its produce, reads of its state made reads of the scan's own buffer. NULL with an error. */
const ir_stmt *lower_scan(lower_state *ls, const ir_stmt *body);

/* 2a. extern stages (extern_nest.c): the region of extern stage si (its axes' ranges, clamped
 *     to the tensor), the box of t its call reads under the loops rx relaxes (bound.c; NULL
 *     in lo[j] when unbounded), and its nest: input checks and the call. */
#include "arith/arith.h"
int lower_extern_region(lower_state *ls, int si, const ir_expr **mn, const ir_expr **ext);
int lower_extern_box(lower_state *ls, int ri, const te_tensor *t, const arith_relax *rx,
                     arith_env *env, const ir_expr **lo, const ir_expr **hi);
const ir_stmt *lower_extern_nest(lower_state *ls, int si);
/* 3a. extern_call (extern_call.c), right after storage_flatten: the stride probes of every
 *     extern_call become numbers. NULL with an error. */
const ir_stmt *lower_extern_call(const ir_stmt *body);

/* 2b. sch_prefetch: schedule_ops marks the body of each main-nest loop that has prefetches
 *     with ATTR "prefetch_scope" (value: the stage index); this pass replaces every marker
 *     with the prefetch statements of that loop in front of its body. NULL with an error
 *     when they cannot be made (prefetch.c). */
const ir_stmt *lower_prefetch(lower_state *ls, const ir_stmt *body);

/* 3. storage flatten: realize -> allocate, provide/read -> store/load on 1-d buffers. */
const ir_stmt *lower_storage_flatten(const ir_stmt *body, lower_func *f, const sch_schedule *s);

/* 5-8. loop-level passes after simplify (lower/<name>.c, order and reasons in pipeline.c). */
/* Peels non-dividing split guards out of loops: hot loop without conditions. */
const ir_stmt *lower_loop_partition(const ir_stmt *s);
/* Nests marked by sch_tensorize -> their intrinsic (dot4), checked; NULL with the reason. */
const ir_stmt *lower_tensorize(tec_ctx *ctx, const ir_stmt *s);
/* VECTORIZED loops of constant extent -> ramp/broadcast vector code (or serial). */
const ir_stmt *lower_vectorize(const ir_stmt *s);
/* Loops under pragma transpose_block copying a strided vector per step -> row loads and an
 * in-register transpose (zip shuffles); a loop that is not such a copy stays, with a note. */
const ir_stmt *lower_transpose_block(const ir_stmt *s);
/* Under pragma stream_store: the stage's whole-vector stores to an output the function never
 * reads -> `attr stream_store { store }` (codegen: non-temporal); the others stay, with a note. */
const ir_stmt *lower_stream_store(const lower_state *ls, const lower_func *f, const ir_stmt *s);
/* UNROLLED loops (and pragma auto_unroll_max_step / unroll) -> straight-line code. */
const ir_stmt *lower_unroll(const ir_stmt *s);
/* Hoists allocations out of loops; buffers with disjoint lifetimes share memory. */
const ir_stmt *lower_storage_rewrite(const ir_stmt *s);
/* The display names of f's loops in body (loop_names.c): the loops of stages other than the
 * function's outputs print as `stage.var`. Malloc'd: 0, or -1 out of memory (out empty);
 * free with lower_loop_names_free. */
/* tec_lower_print, calling on_loop (NULL: not) with each loop of the printed program and the
 * line (1-based) of the output it is printed on (pipeline.c) */
void lower_print_lines(FILE *out, const lower_func *f, void (*on_loop)(void *user, const ir_stmt *loop, int line),
                       void *user);
int lower_loop_names(const lower_func *f, const ir_stmt *body, ir_print_names *out);
void lower_loop_names_free(ir_print_names *nm);


/* 3b. loads inside a select's arm are predicated on that arm's condition. */
const ir_stmt *lower_guard_loads(const ir_stmt *s);

/* TEC_CHECK_TRACE=1 (trace_check.c): f, lowered from s with opt (may be NULL), must equal the
 * lowering of s's trace replayed (through JSON) onto a fresh schedule, with opt's stop_after
 * and verify (not its observer); -1 with an error naming the first differing line otherwise.
 * lower_trace_replaying: 1 while that replay lowers (TEC_DUMP_IR stays quiet for it). */
int lower_trace_check_wanted(void);
int lower_trace_check(const sch_schedule *s, const char *name, int nargs, te_tensor *const *args,
                      const lower_func *f, const tec_lower_options *opt);
int lower_trace_replaying(void);
/* ---- build-time passes: run per function by tec_build / tec_emit for their target ---- */
typedef struct lower_target {
  int vector_bits;  /* native SIMD width in bits (32: no SIMD) */
  int half_arith;   /* 1: float16 arithmetic in hardware (fullfp16, avx512fp16) */
  const char *name; /* the target's canonical text, for messages */
} lower_target;
/* half_arith.c: 0, or -1 with an error naming the first float16 operation of body when t has
 * no half-precision arithmetic (float16 storage stays legal). */
int lower_check_half_arith(tec_ctx *ctx, const lower_func *f, const ir_stmt *body,
                           const lower_target *t, const char *who);
/* f's program ready for code generation for t: the pipeline's build-time passes (pipeline.c)
 * over f->body; *entry receives the checked entry's program (entry_checks.c). NULL with an
 * error in f->ctx. `who` names the API call for messages. */
const ir_stmt *lower_for_target(const lower_func *f, const lower_target *t, const char *who,
                                const ir_stmt **entry);
/* The checked DLTensor entry of f as asserts over dl_arg reads, size variables bound by lets,
 * ending in `attr entry_call` (the call of the raw kernel). */
const ir_stmt *lower_entry_checks(const lower_func *f, const char *who);
/* The debug option tec_lower_options.check_bounds: an assert before every statement for each
 * load and store in it (bound_checkers.c). s itself when off. */
const ir_stmt *lower_bound_checkers(const lower_func *f, const ir_stmt *s);
/* Where each size variable of f is bound from (entry_checks.c): argument arg's dimension dim,
 * whose extent is a*v + b (a >= 1); site has f->nsize entries. -1 with an error for `who`
 * naming a size no shape determines (one used only as n / 4, or m*n). */
typedef struct lower_size_site {
  int arg, dim;
  int64_t a, b;
} lower_size_site;
int lower_size_sites(const lower_func *f, const char *who, lower_size_site *site);
/* Stores wider than vector_bits whose lane count is not a power of two become native-width
 * stores (slice_vectors.c). */
const ir_stmt *lower_slice_vectors(tec_ctx *ctx, const ir_stmt *body, int vector_bits);

/* parallel_launch_point regions as IR (launch_regions.c): launch_region, launch_sync,
 * launch_task0 and launch_per_task markers, and pragma parallel_dynamic as the marker
 * `attr parallel_dynamic = chunk` (codegen reads markers, never pragma keys); refusals name
 * `who`. NULL with an error. */
const ir_stmt *lower_launch_regions(const lower_func *f, const ir_stmt *body, const char *who);

/* ---- the structural IR verifier (verify.c), run between passes ---- */
typedef struct lower_verify_what {
  int flat;    /* after storage_flatten: no tensor accesses, every buffer declared */
  int sizes;   /* size variables must be f's (after the check that reports them) */
} lower_verify_what;
/* 0 if body is well formed for f; else -1 with an internal error naming the pass after which
 * the program broke and what is wrong. */
int lower_verify(const lower_func *f, const ir_stmt *body, const char *after,
                 const lower_verify_what *what);

#endif

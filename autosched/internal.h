/* internal.h — what the auto-scheduler's files share: the program as the rules see it (one
 * as_stage per tensor, producers first), the analysis that fills it, and one entry per rule.
 *
 * Flow (autosched.c): analyze (analyze.c, estimates.c, target.c) -> decide (each rule_*.c's
 * as_decide_*, in a fixed order, filling every stage's tec_autosched_choice) -> apply
 * (apply.c: the choices as primitives on a fresh schedule, consumers before producers) ->
 * check (tec_lower) -> on a refusal, the stage named gets a plainer choice and apply runs
 * again. Rules read structure only: reductions, reads and their index forms, extents. */
#ifndef TEC_AUTOSCHED_INTERNAL_H
#define TEC_AUTOSCHED_INTERNAL_H

#include "tec/autosched.h"
#include "tec/build.h"
#include "tec/runtime.h"

#define AS_MAX_DIM 16

/* One stage (or placeholder) of the program. */
typedef struct as_stage {
  te_tensor *t;
  int is_input; /* a placeholder */
  int is_output;
  int is_reduce;           /* body is a REDUCE with a built-in combiner (sum/prod/max/min) */
  int odd_domain;          /* a reduce extent over other axes (triangular): not understood */
  int understood;          /* 0: multi-output, user reducer, ...: left as declared */
  int64_t ext[AS_MAX_DIM]; /* data axis extents (estimates in place of sizes) */
  int const_ext;           /* every data and reduce extent is a constant (no estimate) */
  int nred;
  int64_t rext[AS_MAX_DIM]; /* reduce axis extents */
  int64_t red_total;        /* product of rext (1 without reduce axes) */
  int guarded_read;         /* a select chooses between a read and something else (padding) */
  int strided_read;         /* an input read that moves back by 2-8 elements per step of
                               the innermost data axis (in[n - 2x]) or across interleaved
                               channels: left to LLVM's interleaved loads (forward 2-8,
                               a stride-2 pool's in[2x + rx], is vectorized: codegen_mem.c) */
  int gather_read;          /* an input read by an index not affine in the innermost data
                               axis (computed coordinates, x / 2): vector loads lane by lane */
  double cost;              /* arithmetic per element (calls weigh more) */
  int const_only;           /* computed from constant placeholders alone (goes to prepare) */
  /* readers */
  int nconsumers;
  int consumers[32];       /* indices of stages reading this one (first 32) */
  int reads_total;         /* distinct reads over all consumers */
  int reused_by_reduction; /* a reduction reads it without one of its data axes in the index */
  int64_t bcast;           /* an injective reader's elements per element read: the product of
                              the reader's data axes no index of the read uses (unsharp's
                              output over 3 channels reads ratio[y, x]: 3) and of the divisors
                              of upsampled indices over their axis' coefficient (f[y / 2][x / 2]:
                              4; f[(3 y) / 2]: 1), the largest */
  /* for reductions */
  int reuse_axis;  /* a data axis along which some input is invariant (-1: none) */
  int unit_reduce; /* the innermost index of its main read is its last reduce axis */
  /* decisions */
  tec_autosched_choice ch;
  int npack; /* TILE: inputs repacked (pack_candidates in rule_tile.c): each one's
              * index, the dim blocked and the block */
  int pack_input[2], pack_dim[2];
  int64_t pack_factor[2];
  int anchor;       /* TILE without cache_write: the element-wise consumer it fuses into */
  int attach_to;    /* ATTACH: the root stage at whose row loop it is computed */
  int has_attached; /* some stage attaches at its row loop */
  int64_t halo;     /* rows beyond its own that attached producers are read at */
  int64_t own;      /* ATTACH: rows beyond one its readers read of it (its own window - 1) */
  int slide_only;   /* a host: some producer is attached only because its tile slides */
  int64_t halo_x;   /* the same along the innermost axis (-1: that index does not line up
                       with the host's, so no column tiles) */
  int host_row;     /* a host: the data axis producers attach along (-1: none yet) */
  unsigned host_mask; /* a host: its data axes some attached producer's reads use (the
                         others are moved inside the row tile: unsharp's channels) */
  int64_t strip;    /* LOOPS reduction that walks rows (rule_loops.c, row_walk): its
                       columns in strips of this many, the reduce loops outside each strip's
                       vector loops (0: none) */
  int64_t fold[AS_MAX_DIM]; /* LOOPS: axes that select between expressions, unrolled
                             * (rule_fold.c): 1 whole, m > 1 split by m; 0 none */
  int with_to;      /* ATTACH: 1 + the index of the sibling whose loops it shares
                       (sch_compute_with, rule_with.c); 0: none */
  int row_walk;     /* as_row_walk's answer under the inline choices made so far (-1: not
                       walked yet) */
  const char *rule, *why;
  /* apply time (names: loops survive a fresh schedule by name only) */
  const char *at_loop; /* the loop producers attach at */
  const char *rf_name; /* rfactor's partials tensor */
} as_stage;

/* The tuned mode's values for one stage (space.c: a config of the generated space), AS_UNSET
 * where the rules decide as in the instant mode. */
#define AS_UNSET INT64_MIN
enum { AS_AT_INLINE, AS_AT_ATTACH, AS_AT_ROOT }; /* compute_at level: the `at` knob */
typedef struct as_tuned {
  int64_t at;                     /* AS_AT_*: inlined, at a consumer's row loop, own root */
  int64_t tile_i, tile_j, block_i; /* TILE: the register tile, row tiles per outer block */
  int64_t block_j;                /* TILE: column tiles per group inside the row tile */
  int64_t tile_k;                 /* TILE: the register tile's second axis (1: none) */
  int64_t pack, fuse;             /* TILE: inputs packed (0 or all), 1 fused / 0 cache_write */
  int64_t unroll, vector, tail;   /* unroll bound, vector lanes, tail (tec_autosched_choice) */
  int64_t par;                    /* -1 the rules' depth, 0 serial, k >= 1 fuse k loops */
  int64_t rows, rfactor;          /* host rows per tile; rfactor 0/1 */
  int64_t cols;                   /* host columns per tile (0: whole rows) */
  int64_t stream;                 /* an output's stores non-temporal: 0/1 */
  int64_t slide;                  /* host: 1 = producers stored per tile, computed per row
                                     (rule_slide_store.c) */
  int64_t with;                   /* ATTACH: 1 = loops fused with its sibling (rule_with.c) */
} as_tuned;

typedef struct as_prog {
  tec_ctx *ctx;
  sch_schedule *s; /* the user's schedule */
  int nout;
  te_tensor **outs;
  int n;
  as_stage *st; /* all tensors, producers first (te_topo_order) */
  int lanes;    /* f32 lanes of the target's vectors */
  int regs;     /* vector registers */
  int threads;
  int64_t llc;  /* bytes of the last-level cache one core has (rule_stream.c); 0 unknown */
  const tec_autosched_options *opt;
  int nargs;
  te_tensor **args;      /* the placeholders then the outputs: what tec_lower checks */
  const as_tuned *tuned; /* per stage, a config's values (NULL: the instant mode) */
  as_stage *pristine;    /* the stages as analyzed, before any rule (as_decide starts there) */
  /* work counted (tests assert on it, not on time): the attach rule's tiles scored and the
   * stage bodies it walked for them (rule_attach.c: best_tile, tile_set_of) */
  int64_t work_tiles, work_walks;
} as_prog;

/* the tuned value of field f for stage s, or AS_UNSET */
#define AS_TUNED(p, s, f) ((p)->tuned ? (p)->tuned[(s) - (p)->st].f : AS_UNSET)
/* host h slides its producers (rule_slide_store.c): the tuned knob, else the attach rule's */
static inline int as_slides(const struct as_prog *p, const as_stage *h) {
  int64_t v = AS_TUNED(p, h, slide);
  return v != AS_UNSET ? v == 1 : h->ch.slide;
}

/* lanes of a vector register for t's element type (the f32 lanes scaled by its size) */
static inline int as_lanes(const as_prog *p, const te_tensor *t) {
  int bytes = tec_dtype_bytes(t->type), l = bytes > 0 ? p->lanes * 4 / bytes : p->lanes;
  return l >= 1 ? l : 1;
}

/* target.c: the one query of the target (lanes of f32, vector registers, as_stream_llc). 0
 * or -1. */
int as_target_query(tec_ctx *ctx, const char *target, int *lanes, int *regs, int64_t *llc);
/* estimates.c: e's integer value with the estimates for size variables; 0, or -1 when e is
 * not such an integer; the first size without an estimate in *missing. */
int as_eval(const as_prog *p, const ir_expr *e, int64_t *out, const char **missing);
/* Refuses (-1 with an error) when a size of the program has no estimate or an estimate names
 * no size; fills every stage's extents. */
int as_estimates(as_prog *p);
/* analyze.c */
int as_analyze(as_prog *p);
int as_index_of(const as_prog *p, const te_tensor *t);
/* The scan (te_scan) t is, or whose update t is part of; NULL otherwise. */
const te_tensor *as_scan_of(const as_prog *p, const te_tensor *t);
/* e = sum coef[v] * vars[v] + *c0 over the nv vars: 1, else 0 (other variables, division,
 * reads, selects...). */
int as_affine(const ir_expr *e, int nv, const ir_expr *const *vars, int64_t *coef, int64_t *c0);
/* The distinct reads of tensor t in e (READ nodes, equal indices counted once): count; the
 * first `cap` into out. */
int as_reads_of(const ir_expr *e, const te_tensor *t, const ir_expr **out, int cap);
/* The stage's body value with a top-level REDUCE's source (the part reads live in). */
const ir_expr *as_source(const te_tensor *t);
/* 1 if reduction s walks rows (analyze.c: its reads, through the producers inlined into it
 * so far, move along outer indices only, a strip of a row each step; rule_loops.c strips it);
 * walked once per decision (s->row_walk; a fallback that un-inlines a stage forgets them) */
int as_row_walk(const as_prog *p, as_stage *s);

/* autosched.c: the steps of tec_autoschedule, shared with the tuned mode (tuned.c).
 * prepare: target query, the program in topological order, estimates, analysis (in p->ctx);
 * decide: every stage's choice from the pristine analysis by the rules (p->tuned's values
 * where set); schedule: the choices applied to a fresh schedule in p->ctx, lowered, a refusal
 * given a plainer choice and tried again (the lowered check in *f when f is not NULL).
 * prepare queries the target unless p->lanes is set already. */
int as_prepare(as_prog *p, const char *target);
void as_decide(as_prog *p);
sch_schedule *as_schedule(as_prog *p, int *ntries, lower_func **f);
int as_check_options(tec_ctx *ctx, const tec_autosched_options *opt);
/* s unscheduled (who names the caller in the message) and the options legal: 0 or -1 */
int as_check_args(tec_ctx *ctx, const char *who, sch_schedule *s,
                  const tec_autosched_options *opt);

/* the rules, each deciding for every stage it applies to (rule_*.c) */
void as_decide_leave(as_prog *p);
void as_decide_inline(as_prog *p);
void as_decide_tile(as_prog *p);
void as_decide_rfactor(as_prog *p);
void as_decide_loops(as_prog *p);
void as_decide_attach(as_prog *p);
void as_decide_fold(as_prog *p);
void as_decide_stream(as_prog *p);
/* rule_with.c: sibling stages fused (sch_compute_with); the primitive for stage i on s */
void as_decide_with(as_prog *p);
int as_apply_with(as_prog *p, sch_schedule *s, int i);
/* 1 if stage i can share its loops with stage j (the with rule's test, for the space) */
int as_with_pair(const as_prog *p, int i, int j);
/* rule_stream.c: the cache an output must exceed to stream (bytes; 0: unknown); 1 if stage s
 * (decided) is written in whole aligned vectors that may stream; the pragma on schedule s */
int64_t as_stream_llc(const tec_target *t);
int as_stream_can(const as_prog *p, const as_stage *s);
int as_apply_stream(as_prog *p, sch_schedule *s, int i);
/* rule_fold.c: the folded axes of stage a split (ax[d] becomes the outer part, NULL when d is
 * unrolled whole; ext[d] its extent); their unrolled parts in inner[]: their count, or -1 */
int as_fold_split(as_prog *p, sch_stage *st, as_stage *a, sch_iter **ax, int64_t *ext,
                  sch_iter **inner);
/* rule_loops.c: a vector split's tail where no knob says (SCH_TAIL_*) */
int64_t as_default_tail(const as_stage *a, int root, int64_t V);
/* rule_loops.c: 1 if as_apply_loops takes a root host's column tile of C (0: whole rows)
 * beside vectors of V lanes (0: none) along its last axis of extent e: a tile of one vector,
 * or of 2+ whole vectors, or any tile > 1 without vectors; it refuses the rest (the tuned
 * space offers no such pair: space.c) */
int as_cols_fit(int64_t V, int64_t C, int64_t e);
/* rule_loops.c: the vector and unroll fields of a stage with its own loops */
void as_loops_choice(as_prog *p, as_stage *s);
/* Why the choices did not make a schedule that lowers: AS_FAIL_WITH when it was the pairing
 * of siblings (rule_with.c) that failed: sch_compute_with refused it, or the schedule lowers
 * once the pair of the stage named is taken apart (autosched.c asks); else AS_FAIL_OTHER. */
typedef enum { AS_FAIL_OTHER, AS_FAIL_WITH } as_fail;
/* a plainer choice for stage i (fallback level up); 0 if there was one. A pairing's failure
 * first takes i's pair apart, the rest kept. */
int as_fallback(as_prog *p, int i, const char *why, as_fail fail);

/* apply.c: the choices on schedule s. 0, or -1 with the stage that failed in *bad (-1: none
 * known), in *fail whether it was the pairing step, and the primitive's error in the ctx. */
int as_apply(as_prog *p, sch_schedule *s, int *bad, as_fail *fail);
/* per-kind appliers (rule files) */
int as_apply_tile(as_prog *p, sch_schedule *s, int i);
int as_apply_rfactor(as_prog *p, sch_schedule *s, int i);
int as_apply_loops(as_prog *p, sch_schedule *s, int i);
int as_apply_attach(as_prog *p, sch_schedule *s, int i);
/* rule_slide_store.c: attached stage i (stage st) to its host cs at tile loop `at` as the
 * host's `slide` knob says: 1 when it stored it at `at` and computed it at the tile's row
 * loop, 0 when it did nothing (the knob off, no row loop), -1 with an error. */
int as_apply_slide(as_prog *p, int i, sch_stage *st, sch_stage *cs, sch_iter *at);
/* shared by the appliers: split the innermost data loop for vectors (tail chosen), fuse and
 * parallelize the outer loops; see apply.c */
sch_stage *as_stage_named(sch_schedule *s, const char *name);
int as_parallel_outer(as_prog *p, sch_stage *st, int upto, int64_t *ext, int depth);

/* report.c */
int as_report(as_prog *p, sch_schedule *s, int ntries, double seconds, tec_autosched_report *rep);
const char *as_fmt(as_prog *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

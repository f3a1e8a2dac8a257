/* autosched.h — schedules without a template: the auto-scheduler's instant mode (issue #36).
 *
 *   sch_schedule *s = sch_create(ctx, 1, &out);          // any program, unscheduled
 *   tec_autosched_report rep;
 *   if (tec_autoschedule(s, "llvm", NULL, &rep)) puts(tec_ctx_error(ctx));
 *   puts(rep.text);                                       // what each rule did, per stage
 *   puts(rep.trace_c);                                    // the schedule as C calls
 *   lower_func *f = tec_lower(s, "f", nargs, args);       // as with a hand-written schedule
 *
 * Instant mode: rules read the program's structure (which stages reduce, which inputs an
 * output axis reuses, which reads are windows, which axis is unit-stride), never names; no
 * measurement; the same program and target give the same schedule. Every decision is a field
 * of a per-stage choice (tec_autosched_choice) with a default the rules compute; the report
 * returns the choices, so a tuned mode can enumerate the same fields later. What the rules
 * chose is applied through the ordinary primitives, so it is recorded in the schedule's trace
 * (sch_trace_c prints it as C calls to copy and edit). A choice whose primitives a stage
 * refuses, or whose schedule tec_lower refuses, is given up for a plainer one and the report
 * says so: the result always lowers. docs/autosched.md describes the rules.
 */
#ifndef TEC_AUTOSCHED_H
#define TEC_AUTOSCHED_H

#include "tec/schedule.h"
#include "tec/tune.h"

/* A symbolic size's estimate (Halide's set_estimates): the rules size tiles for it; the
 * generated code stays correct for every value. */
typedef struct tec_autosched_estimate {
  const char *name; /* the te_size_var's name */
  int64_t value;    /* >= 1 */
} tec_autosched_estimate;

typedef struct tec_autosched_options {
  int nestimates;
  const tec_autosched_estimate *estimates; /* one per symbolic size of the program */
  int threads; /* threads to plan parallel work for (0: the runtime's count) */
} tec_autosched_options;

/* What the rules decided for one stage; each field is a parameter with a rule-made default. */
typedef enum tec_autosched_kind {
  TEC_AS_LEAVE,  /* left as declared (a stage the rules do not understand) */
  TEC_AS_INLINE, /* compute_inline into its readers */
  TEC_AS_LOOPS,  /* its own loop nest: vectorized innermost axis, parallel outer loops */
  TEC_AS_TILE,   /* a reduction with reuse: multi-level tiled, a register tile */
  TEC_AS_ATTACH, /* computed at a loop of a consumer (compute_at) */
  TEC_AS_RFACTOR /* a reduction along its unit-stride axis: rfactor, partials vectorized */
} tec_autosched_kind;

typedef struct tec_autosched_choice {
  tec_autosched_kind kind;
  int64_t vector;  /* vector lanes of the innermost data loop (0: not vectorized) */
  int64_t tile_i;  /* TILE: rows of the register tile (axis tile_axis_i, unrolled) */
  int64_t tile_j;  /* TILE: columns of the register tile (the innermost axis, vectorized) */
  int tile_axis_i; /* TILE: the data axis of the rows (-1: none) */
  int64_t tile_k;  /* TILE: a second axis of the register tile (0 or 1: none), unrolled
                      inside the rows: tile_i x tile_k x tile_j accumulators */
  int tile_axis_k; /* TILE: its data axis, one along which an input the rows re-read is
                      invariant (with tile_k > 1) */
  int cache_write; /* TILE: 1 the accumulator is a cache_write "local" copy; 0 it is fused
                      into its element-wise consumer's tile */
  int pack;           /* TILE: inputs repacked for the tile (cache_read + the leaf-layout
                         cache_write): one loaded as vectors along the columns, rows apart,
                         into panels [col / tile_j][rows...][tile_j]; a constant one read
                         as broadcasts along the rows into [row / tile_i][...][tile_i]
                         (constants once, in prepare); 0 to 2 */
  int64_t rows;    /* LOOPS/TILE: rows per outer iteration where producers attach (1: the
                      row loop itself) */
  int64_t cols;    /* LOOPS: columns per tile where producers attach (0: whole rows; else
                      the innermost axis split by it and the producers computed per tile of
                      rows x cols) */
  int rfactor;        /* ATTACH of a reduction along its unit-stride axis: 1 its last reduce
                         loop is factored by `vector` lanes (rfactor), the partials computed
                         at the same loop, vectorized */
  int parallel;    /* 1: the outer data loops fused and parallel */
  int par_depth;   /* with parallel: 0 fuse outer loops until 8 iterations per thread; k >= 1
                      fuse exactly k (fewer when the stage has fewer) */
  int tail;        /* LOOPS: the vector split's tail when it does not divide: 0 the rules'
                      (shift_inwards at the root without reductions, else guard_with_if),
                      else SCH_TAIL_* + 1 */
  int64_t block_i; /* TILE: register tiles of rows per outer block, a second (cache) level
                      outside the column tiles (0 or 1: none) */
  int64_t block_j; /* TILE: register tiles of columns per group inside the row tile (the
                      rows' inputs reused from L1 across the group; 0 or 1: none) */
  int64_t unroll;  /* innermost reduce loop unrolled when its extent is at most this */
  int fallback;    /* 0: as the rules chose; 1, 2: given up for plainer (see the report) */
  int stream;      /* LOOPS of an output: 1 its whole-vector stores are non-temporal (pragma
                      stream_store) because it exceeds a core's share of the last-level cache */
  int slide;       /* LOOPS host with a halo: 1 its attached producers are stored per tile and
                      computed per row of it (sch_store_at: a sliding window, folded buffers) */
  int with;        /* ATTACH: 1 its loops are fused with a sibling's down to the vector loop's
                      outer part (sch_compute_with: both read one producer over one domain at
                      one loop; the sibling is named in the stage's rule) */
} tec_autosched_choice;

typedef struct tec_autosched_stage {
  const char *stage; /* the tensor's name */
  tec_autosched_choice choice;
  const char *rule; /* "inline", "tile 6x64 (fused into out)", ... */
  const char *why;  /* one sentence: what in the program made the rule fire */
} tec_autosched_stage;

typedef struct tec_autosched_report {
  int nstages;
  const tec_autosched_stage *stages; /* the program's compute stages, producers first */
  const char *text;                  /* one line per stage: "name: rule -- why" (arena) */
  const char *trace_c;               /* the schedule as C calls (sch_trace_c) */
  int ntries;                        /* schedules tried (1 unless a choice had to be given up) */
  double seconds;                    /* tec's own scheduling time (no LLVM build) */
  /* the tuned mode (NULL in the instant mode) */
  const char *config;  /* the config of the generated space applied ("C.tile_i=6 ...") */
  const char *problem; /* the records' key: "h=<structural hash>,out=<first output>" */
  const char *warning; /* tec_autoschedule_tuned: why no record applied (the instant schedule
                          was used), else NULL */
} tec_autosched_report;

/* Schedules s (fresh from sch_create: no primitive applied yet) for target (a tec_build target
 * string; NULL: the host). opt may be NULL (no estimates, the runtime's thread count); rep may
 * be NULL. 0, or -1 with an error in s's ctx: a NULL schedule, a schedule already scheduled, an
 * unknown target, a symbolic size without an estimate (named), an estimate for no size of the
 * program or below 1. On error s is unchanged. */
int tec_autoschedule(sch_schedule *s, const char *target, const tec_autosched_options *opt,
                     tec_autosched_report *rep);

/* ---- the tuned mode ----
 * The rules' choices become the knobs of a tune_space, per stage "<stage>.<knob>": at (inline,
 * attach, root), tile_i / tile_j / tile_k / block_i / block_j (the register tile, its second
 * axis, its outer block of rows and its group of columns),
 * pack, fuse (cache_write or the accumulator fused into its element-wise consumer), vector,
 * tail, unroll, par (parallel fusion depth), rows, cols, rfactor, stream (an output's stores
 * non-temporal); each knob's default is the instant mode's choice, so the default config is tec_autoschedule's schedule. The arguments are as
 * tec_autoschedule's (s unscheduled: it is only read, except by the two that schedule it). */

/* The generated space of s's program, in s's ctx. 0 or -1 with an error. */
int tec_autosched_space(sch_schedule *s, const char *target, const tec_autosched_options *opt,
                        tune_space *sp);
/* Schedules s with config `index` of that space (deterministic: the same index, the same
 * trace); rep->config names its values. -1 with an error for an index outside the space. */
int tec_autoschedule_config(sch_schedule *s, const char *target, const tec_autosched_options *opt,
                            int64_t index, tec_autosched_report *rep);
/* A tuning task for s's program (tune_run searches the space with the tuner's proposers, cost
 * model, confirmation, records, time-outs): template "auto", problem rep->problem's key, the
 * target's canonical text. Refuses symbolic sizes (candidates are measured at constant ones). */
int tune_task_auto(sch_schedule *s, const char *target, const tec_autosched_options *opt,
                   tune_task *out);
/* Schedules s with the best record of records for this program (its structural hash: a record
 * of an edited program never applies) and target; without one, the instant schedule, with
 * rep->warning saying why. -1 with an error (a file that cannot be read, bad arguments). */
int tec_autoschedule_tuned(sch_schedule *s, const char *target, const tec_autosched_options *opt,
                           const char *records, tec_autosched_report *rep);

/* ---- networks: the task scheduler (autosched/tasks.c) ----
 * Ansor's task scheduler over the programs of a network (its layers, in the order they run):
 * programs with the same structural hash are one task (tune_task_auto's workload), weighed by
 * how many layers share it; each task's instant schedule (its space's default) is measured
 * first, then rounds of `batch` trials go each to the task whose extra trials are expected to
 * cut the network's time most: the gradient of sum(count_i * best_i) along task i's trials,
 * alpha * its last 3 rounds' slope + (1 - alpha) * the optimistic -best_i / trials_i (Ansor's
 * rule without its similarity term), the most negative first, ties to the lower task. So a
 * task's trials follow its share of the network's time (count x measured time), re-estimated
 * every round. Each candidate is proposed by the tuner's proposers (cost model included) over
 * its task's own history, and measured by the caller's `measure` where the layer runs (the
 * network library measures it after its predecessor layer, on the activations that layer
 * wrote: net_tune_auto in tec/net.h). Records are tune_run's, keyed as tune_task_auto's. */
typedef struct tec_autosched_tasks_options {
  int trials;         /* the budget: measured trials over every task (>= the number of tasks:
                         each task's instant schedule is measured first) */
  int batch;          /* trials per round (0: 4) */
  const char *tuner;  /* "xgb" (NULL: xgb when built in, else random), "random", "grid",
                         "anneal" */
  unsigned seed;
  double alpha;       /* the backward slope's weight in the gradient (0: Ansor's 0.2) */
  const char *target; /* NULL: the host */
  const tec_autosched_options *opt;
  const char *records; /* JSON lines appended, one per trial (NULL: none) */
  int progress;        /* 1: one line per round on stderr */
  /* Program `prog`'s config `index` (of its task's space: tec_autoschedule_config) measured
   * where it runs: TUNE_OK with *seconds, or the failure (TUNE_WRONG, TUNE_BUILD_ERROR, ...)
   * with why in err; a failed trial is recorded as such and the search goes on. */
  tune_status (*measure)(void *user, int prog, int64_t index, double *seconds, char *err,
                         size_t errlen);
  void *user;
} tec_autosched_tasks_options;

typedef struct tec_autosched_task_stat {
  const char *workload;   /* "auto h=<hash>,out=<first output>" */
  int first;              /* the program measured: the task's first occurrence */
  int count;              /* programs (layers) of this task */
  int trials;             /* measured trials */
  int64_t space;          /* configs in its space */
  double initial_s;       /* the instant schedule's time (its first trial; 0: it failed) */
  double best_s;          /* the fastest correct trial (0: none) */
  int64_t best_index;     /* its config index (-1: none) */
  const char *best_config;
  const char *stopped;    /* why its trials stopped before the budget (its proposer failed),
                             or NULL */
} tec_autosched_task_stat;

typedef struct tec_autosched_tasks_result {
  int ntasks;
  tec_autosched_task_stat *tasks; /* ctx's arena */
  int *prog_task;                 /* [nprogs]: each program's task */
  int nrounds;
  int *round_task;                /* the task each round went to, in order (warm-up first) */
  double initial_s, best_s;       /* sum of count x initial_s / x best_s: the network's time as
                                     the measured layers add up */
  double seconds;                 /* the tuning's wall time */
} tec_autosched_tasks_result;

/* Tunes the programs progs[0..nprogs) (unscheduled, constant sizes; only read) as one network.
 * 0, or -1 with an error in ctx (bad options: a budget below the number of tasks, no measure
 * function, an unknown tuner; a program tune_task_auto refuses, named by its position; a
 * records file that cannot be written). */
int tec_autosched_tune_tasks(tec_ctx *ctx, int nprogs, sch_schedule *const *progs,
                             const tec_autosched_tasks_options *o, tec_autosched_tasks_result *r);

/* "leave", "inline", "loops", "tile", "attach", "rfactor" */
const char *tec_autosched_kind_name(tec_autosched_kind k);

#endif

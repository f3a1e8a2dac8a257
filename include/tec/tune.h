/* tune.h — tuning: search a template's knob space by measuring candidates on the host.
 *
 *   space     tune_space (tec/space.h), the one knob space: knobs, each with its legal
 *             values (an "entity" of one or more int64s: a split's factors, a permutation,
 *             per-axis annotations, one value). A topi template's space is one (its int knobs
 *             bound to its config struct's fields: topi_space_of); tune_define_split /
 *             reorder / annotate / knob build one for a schedule a user writes.
 *   task      what is tuned: a workload (template + problem) and how one config of the space
 *             becomes a lowered function (tune_task_topi for the topi templates;
 *             tune_task_auto, tec/autosched.h, for the auto-scheduler's generated space).
 *   measure   each candidate built for the host (in a forked child killed past the build
 *             time-out: tune/build_child.c), prepare run once, run timed (warm-up, repeats,
 *             median), a time-out per run, its output checked once against the reference
 *             (the default config's output): tune/measure.c. An argument with a margin
 *             (te_tensor_set_margin) is allocated with its buffer's extents and the output
 *             compared in its window only (tune_task.fill zeroes what must be zero; remote
 *             measurement refuses margins). Or built ahead of
 *             time for the target and measured on other hosts over SSH (tune_remote:
 *             tune/remote*.c).
 *   tuner     a loop over batches that a proposer (grid, random, anneal: simulated annealing
 *             on the measured speeds, xgb: a cost model + simulated annealing) picks from the
 *             history; candidates compiled in a thread while earlier
 *             ones are measured; one JSON record per trial appended to a file (tune/records.c);
 *             progress line, CSV and SVG plot (tune/report.c).
 *   apply     tune_apply_best: the best record of a workload for a target, or the default with
 *             a warning naming the workload.
 *
 *   tune_task task;
 *   tune_task_topi(ctx, topi_template_find("dense"), &problem, "m=64,n=64,k=64", NULL, &task);
 *   tune_options o = tune_options_default();
 *   o.trials = 64, o.tuner = "random", o.records = "dense.jsonl";
 *   tune_result r;
 *   tune_run(ctx, &task, &o, &r);      // r.trials[r.best].config: "mr=6 nr=64 ..."
 *   tune_result_free(&r);
 *   ...
 *   tune_apply_best(ctx, "dense.jsonl", "dense", "m=64,n=64,k=64", NULL, &sp, cfg, &warning, 1);
 *
 * Errors: -1 (or NULL) with the message in the ctx, naming what was wrong.
 */
#ifndef TEC_TUNE_H
#define TEC_TUNE_H

#include <stdint.h>
#include <stdio.h>
#include "tec/build.h"
#include "tec/runtime.h"
#include "tec/space.h"
#include "tec/topi.h"

/* ---------------- spaces: tec/space.h ---------------- */

/* A config's values onto a schedule (tune/apply.c). split: iv split into parts loops by a
 * split knob's factors (outermost first; out gets the parts loops, outermost first).
 * reorder: the n axes put in the permutation's order. annotate: each axis unrolled,
 * vectorized or made parallel as the annotate knob's value says. 0, or -1 with the schedule
 * primitive's error in the ctx (or one naming a bad argument: parts outside 1..8, n outside
 * 1..16, a permutation entry out of range). */
int tune_sch_split(sch_stage *st, sch_iter *iv, const int64_t *factors, int parts, sch_iter **out);
int tune_sch_reorder(sch_stage *st, int n, sch_iter *const *axes, const int64_t *perm);
int tune_sch_annotate(sch_stage *st, int n, sch_iter *const *axes, const int64_t *anns);

/* ---------------- tasks ---------------- */

typedef struct tune_task tune_task;
struct tune_task {
  const char *template_name;   /* "dense" or the user's name */
  const char *problem;         /* canonical problem string ("k=64,m=64,n=64") */
  const char *workload;        /* template + " " + problem */
  const char *target;          /* the target's canonical text (tec_target.str): what records name */
  const char *target_arg;      /* the target as given (NULL: host), for messages */
  /* The parsed target (tune_task_topi parses the text once): what schedules and builds take,
   * so a candidate parses no target text. NULL in a task made by hand: builds then take
   * target_arg. */
  const tec_target *target_value;
  const tune_space *space;
  double flops;                /* per call (0: unknown; GFLOP/s then reported as 1/seconds) */
  int64_t default_index;       /* the config index of the default (-1: index 0) */
  /* The candidate with config `index`, lowered in ctx (a fresh ctx per candidate, on the
   * compiling thread); *config_str gets its config text and *trace_json its schedule trace
   * (may be NULL). NULL with an error in ctx. */
  lower_func *(*lower)(const tune_task *task, tec_ctx *ctx, int64_t index, const char **config_str,
                       const char **trace_json);
  void *user;
  /* What the task's inputs must hold beyond the seeded random fill (NULL: nothing): called
   * once on the filled arguments, before the reference output is computed. A topi task whose
   * input has a margin zeroes its ring (topi_arg_zero_ring). Remote measurement refuses a task
   * with one (the remote driver fills the arguments itself). */
  void (*fill)(const tune_task *task, DLTensor *const *args, int nargs);
  /* How the candidate with config `index` is built (NULL: tec_build_for(ctx, 1, &f,
   * target_value), or tec_build with target_arg without a value):
   * for a task that links more than f, builds with its own options, or stands in for a build
   * that takes long. Called where tec_build would be: in the building child under
   * tune_options.fork (held to build_timeout), else on the compiling thread. The module is
   * the tuner's (it frees it); NULL with an error in ctx. The reference output (no tune_options.reference) is still the default config
   * built by tec_build for the host, and remote measurement refuses a task with one (it builds
   * an object for the host's driver). */
  tec_module *(*build)(const tune_task *task, tec_ctx *ctx, int64_t index, lower_func *f);
  /* The cost model's features of a lowered candidate (NULL: tune_features, the loop nest of
   * the hottest store), TUNE_NFEATURES floats (tune_model.h's contract), and the number of
   * that feature set (written into records beside the features; transfer takes only rows of
   * the task's set). An auto-scheduled program's task (tune_task_auto) describes every stage
   * (tune_features_stages). */
  int (*features)(tec_ctx *ctx, const lower_func *f, float *out, int cap);
  int features_version;
};

/* A topi template's task for problem (copied) and target (NULL: host); problem_str is the
 * problem as text (canonicalized into task->problem: pairs sorted, spaces dropped). */
int tune_task_topi(tec_ctx *ctx, const topi_template *t, const void *problem,
                   const char *problem_str, const char *target, tune_task *out);
/* "n=1, c=32,h=56" -> "c=32,h=56,n=1" (arena). */
const char *tune_problem_canon(tec_ctx *ctx, const char *text);

/* ---------------- measurement ---------------- */

typedef enum tune_status {
  TUNE_OK,
  TUNE_BUILD_ERROR,  /* lowering or building failed */
  TUNE_RUN_ERROR,    /* prepare or run returned an error, or the measuring child died */
  TUNE_WRONG,        /* the output differs from the reference */
  TUNE_TIMEOUT       /* a run took longer than the time-out */
} tune_status;
const char *tune_status_name(tune_status s); /* "ok", "build", "run", "wrong", "timeout" */

/* Most costs a trial or record holds: a trial's timed runs (tune_options.repeats, at most 16)
 * or a side-by-side measurement's rounds (tune_compare, tune_options.confirm_rounds). */
#define TUNE_MAX_COSTS 64

typedef struct tune_trial {
  int64_t index;
  const char *config;      /* malloc'd strings, owned by the result */
  const char *trace;       /* the schedule trace, JSON on one line */
  tune_status status;
  const char *error;       /* "" when ok */
  int ncosts;
  double costs[TUNE_MAX_COSTS]; /* seconds per call, each timed run's (or each round's when
                              confirmed; with min_repeat_ms the mean of the run's calls;
                              anchored, scaled by the anchor: anchor_base_s below) */
  double median, gflops;   /* 0 unless ok */
  double build_seconds;    /* the build's wall time (tec_build; lowering excluded); 0 if not built */
  float *features;         /* TUNE_NFEATURES floats of the lowered candidate (tune_model.h;
                              NULL when it did not lower or build): the cost model's input,
                              written into the record for transfer */
  int confirmed;           /* 1: measured side by side with other configs (tune_compare; the
                              confirmation stage of tune_run): costs are one per round, the
                              record says "stage":"confirm" */
  double anchor_s;         /* anchored (tune_options.anchor): the default config's median
                              seconds per call timed beside this trial's costs; 0 when not */
  double anchor_base_s;    /* anchored: the default config's seconds per call when the tuner
                              started (the lower quartile of 0.3 s of its timings: the quiet
                              machine's). Each cost is then the candidate's time in its timed
                              run times anchor_base_s / the anchor's time beside it: seconds
                              at the quiet machine's speed, a slow spell divided out */
} tune_trial;

/* ---------------- the tuner ---------------- */

/* Remote measurement (tune/remote.c): each candidate emitted as an object for the task's
 * target (tec_emit), linked here with a small generated C driver and the target's runtime
 * library by the target's C compiler, then sent over OpenSSH (`ssh`, BatchMode=yes: keys or an
 * agent, never a password) to a fresh temporary directory on a host, run there (prepare once,
 * warm-up, timed runs, the time-out per run), the times and the first run's output read back
 * and checked here against the reference; the directory is removed on the remote when the
 * run ends. Hosts measure in parallel, one candidate per host at a time; trials are recorded
 * in trial order. A host that cannot be reached is dropped (its candidate goes to another
 * host; the last host left records the failures). */
typedef struct tune_remote {
  int nhosts;
  const char *const *hosts;   /* "[user@]host[:port]" ("[::1]:22" for IPv6) */
  const char *run_prefix;     /* words run before the program on the remote, split on spaces
                                 ("qemu-aarch64 -L /usr/aarch64-linux-gnu"); NULL: none */
  int nssh_options;
  const char *const *ssh_options; /* each "Key=Value", passed as ssh -o Key=Value */
  const char *identity;       /* ssh -i FILE (NULL: ssh's default keys or agent) */
  const char *cc;             /* the target's C compiler, words split on spaces (NULL: "cc" for
                                 the host's architecture, aarch64-linux-gnu-gcc for AArch64,
                                 arm-linux-gnueabihf-gcc for ARMv7) */
  const char *runtime;        /* libtec_runtime.a built for the target (required) */
  const char *ssh;            /* the ssh program (NULL: "ssh" on PATH) */
} tune_remote;

typedef struct tune_options {
  int trials;               /* how many candidates (default 64; at most the space's size) */
  const char *tuner;        /* "grid", "random", "anneal" (on measurements) or "xgb" */
  unsigned seed;
  int batch;                /* proposals per round (default 8) */
  int warmup, repeats;      /* runs before timing (default 1), timed runs (default 5) */
  double min_repeat_ms;     /* each timed cost lasts at least this long: the candidate's first
                               run fixes a number of calls made back to back, the cost is their
                               mean (TVM's min_repeat_ms); a layer of 10 us timed one call at a
                               time ranks its candidates by the timer's and the machine's noise.
                               0 (default): one call per cost. At most 1000 * timeout */
  double timeout;           /* seconds per run (default 1): longer is a TUNE_TIMEOUT */
  int fork;                 /* 1: build and measure in a forked child (a hang is killed, a
                               crash is an error record); 0 in-process; -1 (default): 1 unless
                               TEC_TEST_EMULATED is set */
  double build_timeout;     /* seconds per build (default 60). With fork, each candidate is
                               built (tec_build: LLVM) in a child that is killed past it: a
                               TUNE_BUILD_ERROR record "build took longer than N s (killed)", and
                               a child that dies building (memory: the OOM killer) is one too;
                               the tuner goes on. Without fork (fork 0, or TEC_TEST_EMULATED)
                               builds run in the tuner's process to their end, not held to it
                               (the record's build_s says how long); remote builds neither.
                               Lowering is in the tuner's process either way. */
  int overlap;              /* 1: compile in a thread during measurement; -1 (default): when
                               the machine has >= 2 online CPUs */
  const char *records;      /* JSON lines file appended to (NULL: none) */
  const char *csv, *svg;    /* written at the end (NULL: none) */
  int progress;             /* 1: progress line on stderr (\r-updated when a terminal) */
  double rtol;              /* output check: |x - ref| <= rtol * (1 + |ref|) (default 1e-3) */
  /* The reference output (NULL: the default config's output). Called once with the inputs
   * filled; writes out (nout floats). 0 or -1. */
  int (*reference)(void *user, DLTensor *const *args, int nargs, float *out, int64_t nout);
  void *reference_user;
  /* Test hook, called in the measuring process after every call of candidate `index` (its
   * first is the one checked): may change the output (a wrong candidate) or sleep (a
   * time-out). Anchored, also after every timed call of the anchor, with index -1. out is
   * NULL when the output is not float32 (an int8 template's). */
  void (*hook)(void *user, int64_t index, float *out, int64_t nout);
  void *hook_user;
  /* Test clock (NULL: the monotonic clock): seconds, read with hook_user wherever a local
   * measurement reads the time (a cost's calls, the anchor's base). With the hook advancing
   * it per call, a test measures in simulated time: the anchoring arithmetic checked exactly,
   * whatever else the machine runs. */
  double (*clock)(void *user);
  /* Measure on other hosts over SSH (NULL: here). The hook is then called here, on the
   * output read back, from the hosts' threads (it can make a candidate wrong, not slow; it
   * must be thread-safe with more than one host); fork and overlap do not apply
   * (candidates are built on a thread of their own while the hosts measure). */
  const tune_remote *remote;
  /* Transfer (the cost-model tuner only; AutoTVM's load_history): a records file whose rows
   * of other workloads of the same template and target, with their features (written by every
   * tuner since feature set TUNE_FEATURES_VERSION), train the model before this workload's
   * first measurement: one group per workload, so the first batch after the default comes
   * from that model, not at random, and every later fit keeps them beside this workload's
   * rows (which weigh at least as much as all of them together). Only a space with a
   * config struct (a topi template's) takes it (a space of tune_define_* knobs alone refuses it). This workload's own records there
   * are not used (tune_result says how many rows were taken and why others were skipped).
   * May be the records file itself. NULL: none. */
  const char *transfer;
  /* The confirmation stage: after the trials, the `confirm` fastest distinct correct configs,
   * and the default config (trial 1) if it is not among them, are built again and measured
   * side by side (tune_compare: confirm_rounds rounds, each timing every one of them in turn),
   * and the fastest by its median over the rounds is the result's best_confirmed and what
   * apply-best picks (its record says "stage":"confirm"). The best of many single noisy
   * measurements is mostly the luckiest one: on a shared machine a slow spell of a few tenths
   * of a second takes 20-30 % off whatever is measured in it, and the fastest of 64 trials is
   * often a config measured outside such a spell beside a faster one (or the default)
   * measured inside. Side by side, a spell falls on every config of a round alike. 0: none;
   * -1 (default): 8 when measured here, 0 with remote (which refuses a value > 0: the hosts
   * measure one candidate at a time). At most 16 (the default then takes the 16th place). */
  int confirm;
  int confirm_rounds;       /* rounds of the confirmation (default 32; 1..TUNE_MAX_COSTS) */
  /* Anchored trials: the default config is built once when the tuner starts and timed beside
   * every candidate, in each of its timed runs (right before it, or right after, in turn),
   * and each cost is scaled by the anchor's speed in that run (tune_trial.anchor_s). A slow
   * spell of the machine (a few tenths of a second, 20-30 % on a shared machine) lasts a whole
   * trial, so unanchored the trials measured in one rank below those measured outside; the
   * anchor slows down with the candidate and the ratio stays. It costs one more build and
   * about doubles the measuring (not the building). 1: on; 0: off; -1 (default): on when
   * measured here with min_repeat_ms > 0 (timed runs of one call each are disturbed by the
   * anchor's call between them: its data takes the cache), off with remote (which refuses 1:
   * the hosts time the candidate alone). */
  int anchor;
} tune_options;
tune_options tune_options_default(void);
/* 1 when the cost-model tuner ("xgb") is built in (libxgboost-dev found when tec was configured), else 0. */
int tune_have_xgb(void);

typedef struct tune_result {
  int ntrials;
  tune_trial *trials;       /* in trial order */
  int best;                 /* index into trials of the fastest correct one, -1 if none */
  double elapsed;           /* seconds */
  /* transfer: rows and workloads taken; rows skipped as this workload's own, as another
   * template's or target's, without features of this feature set (older records), and rows
   * of workloads with fewer than 2 rows or no correct one (nothing to rank) */
  int transfer_rows, transfer_groups;
  int transfer_skipped_self, transfer_skipped_other, transfer_skipped_nofeat, transfer_skipped_small;
  int transfer_skipped_corrupt; /* lines that did not parse (also reported on stderr with progress) */
  /* the confirmation stage (tune_options.confirm): the configs measured side by side, fastest
   * trial first, and the index of the fastest correct one among them (-1: none, or no stage) */
  int nconfirmed;
  tune_trial *confirmed;
  int best_confirmed;
} tune_result;

/* Tunes task. 0 (even if every candidate failed: see the records), or -1 with an error (bad
 * options, a records file that cannot be opened, the reference failing). */
int tune_run(tec_ctx *ctx, const tune_task *task, const tune_options *o, tune_result *out);
void tune_result_free(tune_result *r);

/* Configs idx[0..n) of task (n 1..16) measured side by side, for a fair comparison of a few
 * (tune_run's confirmation stage; a study's re-measurement): each is lowered and built once
 * (tune_options.fork: all of it in one forked child, held to build_timeout per build and
 * the time-out per run), prepared, its first run checked against the reference output
 * (o->reference, else the default config's), warmed up (o->warmup), then `rounds` rounds
 * (1..TUNE_MAX_COSTS) time every config in turn, the order rotated each round; a timed cost is as many
 * calls back to back as last max(o->min_repeat_ms, 1) ms. out[i] (zeroed first; free with
 * tune_trial_free) gets config idx[i]'s status, error, one cost per round and their median,
 * GFLOP/s, confirmed = 1. 0, or -1 with an error (bad arguments, the reference failing);
 * a config that fails is its out[i]'s status, not an error. Remote measurement is refused. */
int tune_compare(tec_ctx *ctx, const tune_task *task, const tune_options *o, const int64_t *idx, int n,
                 int rounds, tune_trial *out);
/* The config indices of the k fastest correct trials of t[0..n) (by median, one per config),
 * fastest first, into idx, and their positions in t into at (may be NULL); the count. */
int tune_fastest(const tune_trial *t, int n, int k, int64_t *idx, int *at);
/* Frees what a trial holds (config, trace, error, features). */
void tune_trial_free(tune_trial *t);

/* ---------------- records ---------------- */

typedef struct tune_record {
  const char *workload, *target, *template_name, *config, *error, *status, *timestamp,
      *version;
  int64_t index;
  double gflops, median;
  int ncosts;
  double costs[TUNE_MAX_COSTS];
  int features_version, nfeatures; /* the record's feature set (0, 0: none) */
  int confirmed;                   /* "stage":"confirm": measured side by side (tune_compare) */
  double anchor_s, anchor_base_s;  /* an anchored trial's (tune_trial); 0: none */
  float *features;                 /* TUNE_NFEATURES finite floats (arena), or NULL: none, or
                                      not that many finite floats */
} tune_record;

/* One JSON line for trial t of task (arena). */
const char *tune_record_json(tec_ctx *ctx, const tune_task *task, const tune_trial *t);
/* Appends line + '\n' with one write() (O_APPEND). 0 or -1 with an error naming the file. */
int tune_record_append(tec_ctx *ctx, const char *path, const char *line, int do_fsync);
/* Reads every record of a file (arena). A line that does not parse is reported on `warn`
 * (may be NULL) as "FILE:LINE: skipped: why" and skipped. -1 if the file cannot be read. */
int tune_records_load(tec_ctx *ctx, const char *path, FILE *warn, tune_record **out, int *n);
/* The fastest ok record of template + problem for target (NULL: host) written into config (the
 * config struct of space sp, sp->config_size bytes: the record's config text parsed with
 * tune_config_parse): among the confirmation records
 * ("stage":"confirm", measured side by side) when there are any, else among the trials. Returns 1 if a record was applied; 0 if the
 * default was used, with *warning (arena; also printed on stderr when print is 1) naming the
 * workload, why (no record; records for other targets only; a record whose config this
 * space refuses) and the default config used; -1 on error (the file cannot be read). */
int tune_apply_best(tec_ctx *ctx, const char *records, const char *template_name,
                    const char *problem, const char *target, const tune_space *sp, void *config,
                    const char **warning, int print);
/* The same for a parsed target (NULL: the host, parsed here). */
int tune_apply_best_for(tec_ctx *ctx, const char *records, const char *template_name,
                        const char *problem, const tec_target *target, const tune_space *sp,
                        void *config, const char **warning, int print);

/* ---------------- what a user sees ---------------- */

/* CSV of the trials; SVG plot of best-so-far GFLOP/s against trials. 0 or -1 with an error. */
int tune_write_csv(tec_ctx *ctx, const char *path, const tune_result *r);
int tune_write_svg(tec_ctx *ctx, const char *path, const tune_task *task, const tune_result *r);

#endif

/* internal.h — what the tuner's files share (not installed): the proposer abstraction, the
 * history it reads, the seeded random numbers and the measurement entry points. */
#ifndef TEC_TUNE_INTERNAL_H
#define TEC_TUNE_INTERNAL_H

#include <time.h>
#include "tec/tune.h"
#include "tec/tune_model.h"

/* seconds on the monotonic clock (the runtime's one clock, runtime/timer.c) */
static inline double tune_now(void) { return tec_rt_now(); }

/* splitmix64: the tuner's only source of randomness (same seed, same trial order). */
static inline uint64_t tune_rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* uniform in [0, n) */
static inline int64_t tune_rng_below(uint64_t *s, int64_t n) {
  return n <= 1 ? 0 : (int64_t)(tune_rng_next(s) % (uint64_t)n);
}

/* The indices measured (or in flight) so far: an open-addressing set, plus a bitmap over the
 * whole space when it is small enough (TUNE_BITMAP_MAX configs) for tune_anneal. */
#define TUNE_BITMAP_MAX (1ll << 26)
typedef struct tune_visited {
  int64_t *slots;   /* -1: empty */
  int64_t cap, n;
  unsigned char *bitmap; /* NULL when the space is larger than TUNE_BITMAP_MAX */
} tune_visited;
int tune_visited_init(tune_visited *v, int64_t space_size);
int tune_visited_has(const tune_visited *v, int64_t index);
int tune_visited_add(tune_visited *v, int64_t index); /* 0, or -1 out of memory */
void tune_visited_free(tune_visited *v);

/* Rows of other workloads for the cost model (transfer.c): n rows of TUNE_NFEATURES floats and
 * their GFLOP/s (0: failed), in ngroups consecutive groups, one per workload. */
typedef struct tune_prior {
  int n, ngroups;
  float *x;
  double *y;
  int *group_rows;
} tune_prior;
/* tune_records_load, and how many lines did not parse (reported on warn, if any). */
int tune_records_load_counted(tec_ctx *ctx, const char *path, FILE *warn, tune_record **out, int *n, int *skipped);
/* The transfer rows for task from the records file path (tune_options.transfer); what was
 * skipped is counted into counts' transfer_* fields, a corrupt line reported on warn (may be
 * NULL). 0 (possibly with no rows), or -1 with an error (the file cannot be read, memory). */
int tune_prior_load(tec_ctx *ctx, const tune_task *task, const char *path, FILE *warn, tune_prior *out,
                    tune_result *counts);
void tune_prior_free(tune_prior *p);

/* What a proposer sees: the task, the trials measured so far (in order), the visited set and
 * the transfer rows. */
typedef struct tune_history {
  const tune_task *task;
  const tune_trial *trials;
  int ntrials;
  const tune_visited *visited;
  unsigned seed;
  const tune_prior *prior; /* transfer rows (NULL or empty: none) */
} tune_history;

/* A proposer picks the next batch: up to k distinct indices not visited. It returns how many
 * (0: the space is exhausted), or -1 with an error in ctx. Grid, random and the model tuner
 * (tuner_xgb.c) are three of them. */
typedef struct tune_proposer tune_proposer;
struct tune_proposer {
  const char *name;
  int learns;           /* 1: it can use transfer rows (tune_options.transfer) */
  int (*next)(tune_proposer *p, tec_ctx *ctx, const tune_history *h, int k, int64_t *out);
  void (*free)(tune_proposer *p);
  void *state;
  uint64_t rng;
};
tune_proposer *tune_proposer_grid(tec_ctx *ctx, unsigned seed);
/* The proposer called name ("grid", "random", "anneal", "xgb"); NULL for another name (no
 * error set) or out of memory. */
tune_proposer *tune_proposer_by_name(tec_ctx *ctx, const char *name, unsigned seed);
tune_proposer *tune_proposer_random(tec_ctx *ctx, unsigned seed);
/* 1 if x is visited, in out[0..n), or not in the space (its rule refuses it) (propose.c). */
int tune_taken(const tune_history *h, const int64_t *out, int n, int64_t x);
/* One uniform draw of an index in the space (tune_space_allows), neither visited nor in
 * out[0..n) (propose.c), -1 if none. */
int64_t tune_draw_free(const tune_history *h, uint64_t *rng, const int64_t *out, int n);
/* simulated annealing on measured speeds, no model (propose_anneal.c) */
tune_proposer *tune_proposer_anneal(tec_ctx *ctx, unsigned seed);
/* NULL with an error when tec was built without the cost model (XGBoost not found at configure time). */
tune_proposer *tune_proposer_xgb(tec_ctx *ctx, unsigned seed);
/* Up to `want` exploration picks appended to out[0..n): each one of the configs top[0..ntop)
 * (the model's best first) with one knob moved to the value tried least for what it is owed,
 * its share of the trials up to TUNE_EXPLORE_OWED_MAX (explore.c). Returns the new count
 * (fewer picks when every value has had its due or no top config can take one). */
#define TUNE_EXPLORE_OWED_MAX 6
int tune_explore_fill(const tune_history *h, const int64_t *top, int ntop, int64_t *out, int n, int want);
/* The features of a lowered candidate of task (its features function, else tune_features;
 * NULL without the cost model): malloc'd, *n floats. And the task's feature set's number. */
float *tune_xgb_features(const tune_task *task, tec_ctx *ctx, const lower_func *f, int *n);
int tune_task_features(const tune_task *task, tec_ctx *ctx, const lower_func *f, float *out, int cap);
static inline int tune_task_features_version(const tune_task *task) {
  return task->features ? task->features_version : TUNE_FEATURES_VERSION;
}

/* ---- measurement (measure.c) ---- */
typedef struct tune_bench tune_bench;
/* What a measurement gives back, sent whole through the pipe from a measuring child: a trial's
 * (measure.c: its timed runs) or one config's of a side-by-side measurement (confirm.c: one
 * cost per round, and its build's wall time). */
typedef struct tune_meas {
  int status, ncosts;
  double costs[TUNE_MAX_COSTS], build_s;
  double anchor_s, anchor_base_s; /* anchored: the anchor's median beside the costs, its base */
  char error[400];
} tune_meas;
/* A child that reports to its parent on a pipe: the pid, with *fd the read end in the parent
 * and the write end in the child (pid 0); -1 with "cannot make a pipe to the <who>: ..." or
 * "cannot fork the <who>: ..." in err. Flushes stdio first, so the child does not repeat
 * buffered output. */
int tune_fork_reporter(const char *who, int *fd, char *err, size_t errsize);
/* The arguments of f allocated and filled (seeded, then task->fill if any; task may be NULL),
 * and the reference output: o->reference, or f itself built and run (the default config).
 * NULL with an error. */
/* Calls per timed cost: enough for min_repeat_ms at call_s seconds a call (1 when 0; at most
 * TUNE_MAX_CALLS). measure.c and the remote driver grow a calibration run's calls with it
 * (at least doubling) until the run lasts min_repeat_ms. */
#define TUNE_MAX_CALLS 100000
int64_t tune_calls_per_cost(double min_repeat_ms, double call_s);
tune_bench *tune_bench_new(tec_ctx *ctx, const tune_task *task, lower_func *f, const tune_options *o);
void tune_bench_free(tune_bench *b);
/* Measures module m (built from f) into t (status, error, costs, median). */
void tune_bench_measure(tune_bench *b, tec_module *m, const lower_func *f, tune_trial *t);
int64_t tune_bench_nout(const tune_bench *b);
/* The options the bench was made with (warm-up, repeats, time-out, rtol, hook). */
const tune_options *tune_bench_options(const tune_bench *b);
/* For measurements side by side (confirm.c): prepare m and run it once, its output checked
 * against the reference, then the warm-up runs; TUNE_OK or the failure with err. And calls
 * runs back to back, *seconds per call: TUNE_OK, or a run that failed or took longer than the
 * time-out (a hang is not interrupted here: confirm.c runs them in a child it can kill). */
tune_status tune_bench_ready(tune_bench *b, tec_module *m, const lower_func *f, int64_t index, char *err,
                             size_t errsize);
tune_status tune_bench_time(tune_bench *b, tec_module *m, const lower_func *f, int64_t index, int64_t calls,
                            double *seconds, char *err, size_t errsize);
/* confirm.c: configs idx[0..n) measured side by side on bench b (tune_compare's body). */
int tune_compare_bench(tec_ctx *ctx, const tune_task *task, const tune_options *o, tune_bench *b,
                       const int64_t *idx, int n, int rounds, tune_trial *out);
/* The two sides of a forked measurement (the protocol on one pipe): in the child, measures m
 * and writes the progress bytes and the result to fd, then _exit()s; in the parent, reads them
 * from fd (closed here) with the time-outs, kills a child past them, reaps pid, fills t. */
void tune_bench_child_measure(tune_bench *b, tec_module *m, const lower_func *f, int64_t index, int fd)
    __attribute__((noreturn));
void tune_bench_wait(tune_bench *b, int pid, int fd, tune_trial *t);

/* ---- a candidate built in a forked child (build_child.c) ---- */
typedef struct tune_child {
  int pid;        /* 0: none */
  int up, down;   /* the child's reports / the parent's go-ahead */
} tune_child;
/* Builds candidate index's f in ctx: task->build, or tec_build_for task->target_value. NULL with
 * an error in ctx (one is set when the task's build gives none). */
tec_module *tune_build_candidate(const tune_task *task, tec_ctx *ctx, int64_t index, lower_func *f);
/* Forks a child that builds f (lowered in this process, inherited; tune_build_candidate) and
 * waits for its measurement. 0 with *c set when it built within timeout seconds; else -1 with
 * why in err (over the time-out: "build took longer than N s (killed)"; the build's error; the
 * child died, e.g. of memory) and the child reaped. *seconds: the build's wall time. */
int tune_child_build(tec_ctx *ctx, const tune_task *task, lower_func *f, double timeout,
                     tune_bench *b, int64_t index, tune_child *c, char *err, size_t errsize,
                     double *seconds);
/* The built child measures its candidate (tune_bench_wait's time-outs) into t; reaped. */
void tune_child_measure(tune_bench *b, tune_child *c, tune_trial *t);
/* A child not measured (the tuner stopped): killed and reaped. */
void tune_child_discard(tune_child *c);

/* Output out (nout floats, the first run's) against the reference, after the hook (called
 * with index): TUNE_OK, or TUNE_WRONG with the first differing element in err. Thread-safe
 * (the reference is only read). */
tune_status tune_bench_check(const tune_bench *b, int64_t index, float *out, char *err, size_t errsize);
/* t's status, error (copied) and costs; the median when ok. */
void tune_trial_set(tune_trial *t, tune_status s, const char *error, int ncosts, const double *costs);
/* How measure.c and the remote driver fill input k: element e of the seeded sequence. */
#define TUNE_FILL_SEED(k) (12345u + 977u * (unsigned)(k))

/* ---- remote measurement (remote.c, remote_ssh.c, remote_driver.c) ---- */
typedef struct tune_remote_run tune_remote_run;
/* Checks o->remote (hosts, options, the compiler and runtime library) and makes the local
 * work directory. NULL with an error naming what was wrong. */
tune_remote_run *tune_remote_open(tec_ctx *ctx, const tune_task *task, const tune_options *o);
/* Removes the work directory; reports once on stderr each host that failed every candidate. */
void tune_remote_close(tune_remote_run *r);
int tune_remote_nhosts(const tune_remote_run *r);
/* Candidate f emitted for the task's target and linked with the driver: the executable's path
 * (malloc'd), or NULL with the message in *error (malloc'd). Thread: the compiling one. */
char *tune_remote_build(tune_remote_run *r, tec_ctx *ctx, const lower_func *f, char **error);
/* Runs exe on host h and fills t (status, error, costs, median; the output checked with b).
 * Returns 1 when the host could not be reached (ssh failed before the program started), else
 * 0. Thread-safe for different hosts. */
int tune_remote_measure(tune_remote_run *r, int h, tune_bench *b, const char *exe, int64_t index, tune_trial *t);
/* Host h dropped (unreachable): reported once on stderr with why. */
void tune_remote_drop(tune_remote_run *r, int h, const char *why);
const char *tune_remote_host_name(const tune_remote_run *r, int h);

/* The driver's C source for f (remote_driver.c): the prototypes of f's raw functions, the
 * buffers' sizes, and the fixed main (fill, prepare, warm-up, timed runs, the protocol on
 * stdout). malloc'd, or NULL with *why. */
char *tune_remote_driver_source(const lower_func *f, const char **why);

/* ---- what a user sees (report.c) ---- */
void tune_progress(FILE *out, int tty, int done, int total, double best, double elapsed, int final);
/* the progress line's text (docs/tuning.md: a script parses it), snprintf's result */
int tune_progress_text(char *buf, size_t n, int done, int total, double best, double elapsed);
/* ticker.c: the progress line every 10 to 30 s (TEC_TUNE_PROGRESS=MIN,MAX) while a tuning run
 * logs to a non-terminal; start returns NULL when out of memory (no periodic lines). */
typedef struct tune_ticker tune_ticker;
tune_ticker *tune_ticker_start(double t0, int total);
void tune_ticker_update(tune_ticker *k, int done, double best);
void tune_ticker_stop(tune_ticker *k); /* NULL: nothing */

/* malloc'd copy ("" for NULL) */
char *tune_strdup(const char *s);

/* build_child.c: reads n bytes from fd before the deadline (tune_now() seconds; < 0: none):
 * 1 done, 0 end of file or an error, -1 time-out. Used by measure.c too. */
int tune_read_by(int fd, void *buf, size_t n, double deadline);
/* The measuring or building child's progress byte c to the parent on fd (fd < 0: none; a
 * parent gone is not an error), measure.c; a child reaped, EINTR retried, build_child.c. */
void tune_note(int fd, char c);
void tune_reap(int pid, int *status);

#endif

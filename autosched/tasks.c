/* tasks.c — the task scheduler (Ansor's) over the programs of a network: programs deduplicated
 * by structural hash into tasks (tune_task_auto's workload), each task's instant schedule
 * measured first, then a trial budget shared out round by round to the task whose trials are
 * expected to cut the network's time most (the gradient of sum(count x best time)), each round's
 * candidates proposed by the tuner's proposers over the task's own history and measured by the
 * caller where the program runs. One record per trial, as tune_run writes them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tec/autosched.h"
#include "tune/internal.h"

#define BACKWARD_ROUNDS 3 /* Ansor's backward window, in rounds */

typedef struct ts_task {
  tune_task task;
  int first, count;
  tune_proposer *prop;
  tune_visited visited;
  tune_trial *trials;
  int ntrials, cap;
  double *best_hist; /* best correct time after each trial (INFINITY: none yet) */
  int done;          /* the space is exhausted (or the proposer failed) */
  const char *why;   /* the proposer's error when it failed (ctx's arena) */
} ts_task;


static int check_options(tec_ctx *ctx, const tec_autosched_tasks_options *o, int nprogs,
                         const char **tuner) {
  const char *who = "tec_autosched_tune_tasks";
  if (!o) return tec_ctx_set_error(ctx, "%s: options are NULL", who);
  if (nprogs < 1) return tec_ctx_set_error(ctx, "%s: %d programs; give at least one", who, nprogs);
  if (!o->measure)
    return tec_ctx_set_error(ctx, "%s: options.measure is NULL; give the function that measures "
                                  "a program's candidate where it runs",
                             who);
  if (o->batch < 0 || o->trials < 0 || o->trials > 1000000 || o->alpha < 0 || o->alpha > 1)
    return tec_ctx_set_error(ctx, "%s: trials %d, batch %d, alpha %g; legal: trials 0 to 10^6 "
                                  "and batch >= 0 (batch 0: 4), alpha in [0, 1] (0: 0.2)",
                             who, o->trials, o->batch, o->alpha);
  *tuner = o->tuner ? o->tuner : tune_have_xgb() ? "xgb" : "random";
  const char *t = *tuner;
  if (strcmp(t, "grid") && strcmp(t, "random") && strcmp(t, "anneal") && strcmp(t, "xgb"))
    return tec_ctx_set_error(ctx, "%s: tuner '%s'; legal: xgb, random, grid, anneal", who, t);
  if (!strcmp(t, "xgb") && !tune_have_xgb())
    return tec_ctx_set_error(ctx, "%s: tuner xgb: tec was built without XGBoost; use random, grid "
                                  "or anneal",
                             who);
  return 0;
}

/* The tasks of progs: one per distinct workload. 0, or -1 with an error naming the program. */
static int make_tasks(tec_ctx *ctx, int nprogs, sch_schedule *const *progs,
                      const tec_autosched_tasks_options *o, ts_task *tk, int *ntasks, int *prog_task) {
  *ntasks = 0;
  for (int i = 0; i < nprogs; i++) {
    tune_task t;
    if (!progs[i])
      return tec_ctx_set_error(ctx, "tec_autosched_tune_tasks: program %d is NULL", i);
    if (tune_task_auto(progs[i], o->target, o->opt, &t))
      return tec_ctx_set_error(ctx, "tec_autosched_tune_tasks: program %d: %s", i,
                               tec_ctx_error(sch_schedule_ctx(progs[i])));
    int k = 0;
    while (k < *ntasks && strcmp(tk[k].task.workload, t.workload)) k++;
    if (k == *ntasks) tk[(*ntasks)++] = (ts_task){.task = t, .first = i};
    tk[k].count++;
    prog_task[i] = k;
  }
  return 0;
}

/* Measures config idx of task k (its first program) into a new trial; appends its record. */
static int measure_one(tec_ctx *ctx, ts_task *T, int64_t idx, const tec_autosched_tasks_options *o) {
  if (T->ntrials == T->cap) {
    int cap = T->cap ? 2 * T->cap : 16;
    tune_trial *nt = realloc(T->trials, sizeof *nt * (size_t)cap);
    double *nb = nt ? realloc(T->best_hist, sizeof *nb * (size_t)cap) : NULL;
    if (nt) T->trials = nt;
    if (nb) T->best_hist = nb;
    if (!nt || !nb) return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tec_autosched_tune_tasks: out of memory");
    T->cap = cap;
  }
  tune_trial *t = &T->trials[T->ntrials];
  memset(t, 0, sizeof *t);
  t->index = idx;
  tec_ctx *lc = tec_ctx_new(); /* the candidate lowered for its config text, trace and features */
  const char *cfg = NULL, *trace = NULL;
  lower_func *f = lc ? T->task.lower(&T->task, lc, idx, &cfg, &trace) : NULL;
  char err[512] = "";
  double secs = 0;
  tune_status st;
  if (!f) {
    st = TUNE_BUILD_ERROR;
    snprintf(err, sizeof err, "%s", lc ? tec_ctx_error(lc) : "out of memory");
  } else {
    int nf = 0;
    t->features = tune_xgb_features(&T->task, lc, f, &nf);
    st = o->measure(o->user, T->first, idx, &secs, err, sizeof err);
    if (st == TUNE_OK && !(secs > 0)) st = TUNE_RUN_ERROR, snprintf(err, sizeof err, "measured %g s", secs);
  }
  t->config = cfg ? strdup(cfg) : NULL;
  t->trace = trace ? strdup(trace) : NULL;
  tec_ctx_free(lc);
  tune_trial_set(t, st, err[0] ? err : tune_status_name(st), st == TUNE_OK, &secs);
  if (st == TUNE_OK) t->gflops = (T->task.flops > 0 ? T->task.flops : 1.0) / t->median * 1e-9;
  double prev = T->ntrials ? T->best_hist[T->ntrials - 1] : INFINITY;
  T->best_hist[T->ntrials++] = st == TUNE_OK && t->median < prev ? t->median : prev;
  if (tune_visited_add(&T->visited, idx))
    return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tec_autosched_tune_tasks: out of memory");
  if (o->records) {
    const char *line = tune_record_json(ctx, &T->task, t);
    if (!line || tune_record_append(ctx, o->records, line, 0)) return -1;
  }
  return 0;
}

/* Ansor's gradient of the network's time along task T's trials (negative: trials help). */
static double gradient(const ts_task *T, int batch, double alpha) {
  int n = T->ntrials, w = BACKWARD_ROUNDS * batch;
  double g = T->best_hist[n - 1];
  /* nothing correct yet: first in line for one more round, then last (no estimate of its
   * share: a task whose every candidate fails must not take the budget) */
  if (!isfinite(g)) return n <= batch ? -INFINITY : 0;
  double back = 0;
  if (n > w && isfinite(T->best_hist[n - 1 - w])) back = (g - T->best_hist[n - 1 - w]) / w;
  double fwd = -g / n;
  return T->count * (alpha * back + (1 - alpha) * fwd);
}

/* One round of up to k trials for task T: the proposer's picks, measured. 0 or -1. */
static int round_of(tec_ctx *ctx, ts_task *T, int k, const tec_autosched_tasks_options *o,
                    unsigned seed, int *measured) {
  int64_t idx[64];
  if (k > 64) k = 64;
  tune_history h = {&T->task, T->trials, T->ntrials, &T->visited, seed, NULL};
  tec_ctx *pc = tec_ctx_new();
  int got = pc ? T->prop->next(T->prop, pc, &h, k, idx) : -1;
  if (got < 0) { /* the proposer failed: this task stops (the reason in its stat), the others go on */
    const char *e = pc ? tec_ctx_error(pc) : NULL;
    T->why = tec_ctx_printf(ctx, "the proposer failed: %s", e ? e : "out of memory");
    got = 0;
  }
  tec_ctx_free(pc);
  if (got == 0) T->done = 1;
  *measured = 0;
  for (int i = 0; i < got; i++, ++*measured)
    if (measure_one(ctx, T, idx[i], o)) return -1;
  if (T->ntrials >= tune_space_range(T->task.space)) T->done = 1;
  return 0;
}

static void progress(const ts_task *tk, int ntasks, int r, int k, int used, int budget) {
  double est = 0;
  for (int i = 0; i < ntasks; i++)
    if (tk[i].ntrials && isfinite(tk[i].best_hist[tk[i].ntrials - 1]))
      est += tk[i].count * tk[i].best_hist[tk[i].ntrials - 1];
  const ts_task *T = &tk[k];
  fprintf(stderr, "tasks: round %d: task %d (%s, x%d) %d trials, best %.3f ms; network %.3f ms; "
          "%d/%d trials\n", r, k, T->task.workload, T->count, T->ntrials,
          1e3 * T->best_hist[T->ntrials - 1], 1e3 * est, used, budget);
}

static int fill_result(tec_ctx *ctx, ts_task *tk, int ntasks, tec_autosched_tasks_result *r) {
  r->ntasks = ntasks;
  r->tasks = tec_ctx_alloc(ctx, sizeof *r->tasks * (size_t)ntasks);
  if (!r->tasks) return -1;
  for (int i = 0; i < ntasks; i++) {
    ts_task *T = &tk[i];
    tec_autosched_task_stat *s = &r->tasks[i];
    *s = (tec_autosched_task_stat){.workload = T->task.workload, .first = T->first,
                                   .count = T->count, .trials = T->ntrials,
                                   .space = tune_space_range(T->task.space), .best_index = -1,
                                   .stopped = T->why};
    if (T->ntrials && T->trials[0].status == TUNE_OK) s->initial_s = T->trials[0].median;
    for (int j = 0; j < T->ntrials; j++)
      if (T->trials[j].status == TUNE_OK && (s->best_index < 0 || T->trials[j].median < s->best_s)) {
        s->best_s = T->trials[j].median, s->best_index = T->trials[j].index;
        s->best_config = T->trials[j].config ? tec_ctx_strdup(ctx, T->trials[j].config) : "";
      }
    r->initial_s += T->count * s->initial_s;
    r->best_s += T->count * s->best_s;
  }
  return 0;
}

int tec_autosched_tune_tasks(tec_ctx *ctx, int nprogs, sch_schedule *const *progs,
                             const tec_autosched_tasks_options *o, tec_autosched_tasks_result *r) {
  if (!ctx || !r) return -1;
  memset(r, 0, sizeof *r);
  const char *tuner = "random";
  if (check_options(ctx, o, nprogs, &tuner)) return -1;
  double t0 = tune_now();
  int batch = o->batch ? o->batch : 4, ntasks = 0, rc = -1, used = 0;
  double alpha = o->alpha > 0 ? o->alpha : 0.2;
  ts_task *tk = calloc((size_t)nprogs, sizeof *tk);
  r->prog_task = tec_ctx_alloc(ctx, sizeof *r->prog_task * (size_t)nprogs);
  int maxrounds = o->trials + nprogs + 1;
  r->round_task = tec_ctx_alloc(ctx, sizeof *r->round_task * (size_t)maxrounds);
  if (!tk || !r->prog_task || !r->round_task) {
    free(tk);
    return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tec_autosched_tune_tasks: out of memory");
  }
  if (make_tasks(ctx, nprogs, progs, o, tk, &ntasks, r->prog_task)) goto out;
  if (o->trials < ntasks) {
    tec_ctx_set_error(ctx, "tec_autosched_tune_tasks: a budget of %d trials for %d tasks; give at "
                           "least %d (each task's instant schedule is measured first)",
                      o->trials, ntasks, ntasks);
    goto out;
  }
  for (int k = 0; k < ntasks; k++) {
    ts_task *T = &tk[k];
    if (tune_visited_init(&T->visited, tune_space_range(T->task.space)) ||
        !(T->prop = tune_proposer_by_name(ctx, tuner, o->seed + 7919u * (unsigned)k)))
      goto out;
  }
  /* warm-up: every task's instant schedule (its space's default) */
  for (int k = 0; k < ntasks; k++) {
    int64_t d = tk[k].task.default_index >= 0 ? tk[k].task.default_index : 0;
    if (measure_one(ctx, &tk[k], d, o)) goto out;
    used++;
    r->round_task[r->nrounds++] = k;
    if (o->progress) progress(tk, ntasks, r->nrounds, k, used, o->trials);
  }
  while (used < o->trials) {
    int best = -1;
    double gb = 0;
    for (int k = 0; k < ntasks; k++) {
      if (tk[k].done) continue;
      double g = gradient(&tk[k], batch, alpha);
      if (best < 0 || g < gb) best = k, gb = g;
    }
    if (best < 0) break; /* every space exhausted */
    int got, k = o->trials - used < batch ? o->trials - used : batch;
    if (round_of(ctx, &tk[best], k, o, o->seed, &got)) goto out;
    if (!got) continue;
    used += got;
    r->round_task[r->nrounds++] = best;
    if (o->progress) progress(tk, ntasks, r->nrounds, best, used, o->trials);
  }
  rc = fill_result(ctx, tk, ntasks, r);
out:
  for (int k = 0; k < ntasks; k++) {
    for (int j = 0; j < tk[k].ntrials; j++) tune_trial_free(&tk[k].trials[j]);
    free(tk[k].trials), free(tk[k].best_hist);
    tune_visited_free(&tk[k].visited);
    if (tk[k].prop) tk[k].prop->free(tk[k].prop);
  }
  free(tk);
  r->seconds = tune_now() - t0;
  return rc;
}

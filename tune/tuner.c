/* tuner.c — the tuning loop (tune_run): a proposer picks each batch of config indices from
 * the history; the batch's candidates are lowered and built on a compiling thread (each in a
 * ctx of its own, freed once measured, so memory stays bounded over 10^4 trials) while the
 * main thread measures the earlier ones, one at a time; each trial is appended to the records
 * file as one JSON line as soon as it is measured (a killed tuner loses only the trial in
 * flight). The first trial is the default config, whose output is the reference. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tec/tune_model.h"
#include "tune/internal.h"

char *tune_strdup(const char *s) { return strdup(s ? s : ""); }

const char *tune_status_name(tune_status s) {
  static const char *const names[] = {"ok", "build", "run", "wrong", "timeout"};
  return (unsigned)s < 5 ? names[s] : "?";
}

tune_options tune_options_default(void) {
  return (tune_options){.trials = 64, .tuner = "random", .seed = 1, .batch = 8, .warmup = 1, .repeats = 5,
                        .timeout = 1.0, .fork = -1, .overlap = -1, .rtol = 1e-3, .build_timeout = 60.0,
                        .confirm = -1, .confirm_rounds = 32, .anchor = -1};
}

/* One candidate between proposal and measurement. */
typedef struct slot {
  int64_t index;
  tec_ctx *ctx;
  lower_func *f;
  tec_module *m;
  const char *config, *trace, *error; /* in ctx */
  float *features;
  int nfeatures;
  char *exe;          /* remote: the candidate's program (malloc'd path) */
  tune_child child;   /* fork: the child that built the candidate and will measure it */
  double build_s;     /* the build's wall time (lowering excluded) */
  tune_trial meas;    /* remote: what the host measured */
  int measured;       /* remote: meas is set */
} slot;

typedef struct pipeline {
  const tune_task *task;
  const tune_options *o;  /* fork: built in a child held to o->build_timeout */
  slot *slots;
  int n, compiled, measured;
  int features, ahead;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  /* remote: the slots built and waiting for a host (a host that cannot be reached gives its
   * candidate back), the hosts still measuring */
  tune_remote_run *remote;
  tune_bench *bench;
  int *queue, qhead, qtail, alive, ndone;
  char *dead;
} pipeline;

#define AHEAD 2 /* candidates compiled before their measurement, at most (+ hosts - 1 remote) */

tec_module *tune_build_candidate(const tune_task *task, tec_ctx *ctx, int64_t index, lower_func *f) {
  if (!task->build)
    return task->target_value ? tec_build_for(ctx, 1, &f, task->target_value)
                              : tec_build(ctx, 1, &f, task->target_arg);
  tec_module *m = task->build(task, ctx, index, f);
  const char *e = tec_ctx_error(ctx);
  if (!m && !(e && *e))
    tec_ctx_set_error(ctx, "tune: %s: the task's build function failed without a message", task->workload);
  return m;
}

static void compile_slot(const tune_task *task, slot *s, int features, tune_remote_run *remote,
                         const tune_options *o, tune_bench *bench) {
  s->ctx = tec_ctx_new();
  if (!s->ctx) {
    s->error = "out of memory (a ctx for the candidate)";
    return;
  }
  s->f = task->lower(task, s->ctx, s->index, &s->config, &s->trace);
  double t0 = tune_now();
  if (s->f && !remote && o && o->fork) { /* built in a child, killed past the build time-out */
    char err[512];
    if (tune_child_build(s->ctx, task, s->f, o->build_timeout, bench, s->index, &s->child, err,
                         sizeof err, &s->build_s) != 0) {
      s->error = tec_ctx_strdup(s->ctx, err);
      if (!s->error) s->error = "out of memory";
      return;
    }
    if (features) s->features = tune_xgb_features(task, s->ctx, s->f, &s->nfeatures);
    return;
  }
  if (s->f && remote) {
    char *err = NULL;
    if (!(s->exe = tune_remote_build(remote, s->ctx, s->f, &err)))
      s->error = tec_ctx_strdup(s->ctx, err ? err : "out of memory building the remote program");
    free(err);
    if (!s->exe) return;
  } else if (s->f) {
    s->m = tune_build_candidate(task, s->ctx, s->index, s->f);
  }
  s->build_s = tune_now() - t0;
  if (!s->f || (!s->m && !remote)) {
    const char *e = tec_ctx_error(s->ctx);
    s->error = e && *e ? e : "lowering or building failed without a message";
    return;
  }
  if (features) s->features = tune_xgb_features(task, s->ctx, s->f, &s->nfeatures);
}

static void *compile_thread(void *arg) {
  pipeline *p = arg;
  for (int i = 0; i < p->n; i++) {
    pthread_mutex_lock(&p->mu);
    while (i - p->measured >= p->ahead) pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    compile_slot(p->task, &p->slots[i], p->features, p->remote, p->o, p->bench);
    pthread_mutex_lock(&p->mu);
    p->compiled = i + 1;
    if (p->remote) { /* a program goes to the hosts' queue; a build failure is done */
      if (p->slots[i].exe) p->queue[p->qtail++] = i;
      else p->slots[i].measured = 1, p->ndone++;
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
  }
  return NULL;
}

typedef struct run_state {
  tec_ctx *ctx;
  const tune_task *task;
  const tune_options *o;
  tune_bench *bench;
  tune_result *res;
  double t0, best;
  int total, tty;
  tune_remote_run *remote;
  tune_ticker *ticker; /* progress lines in a log (ticker.c), or NULL */
} run_state;

/* Measures slot s into the next trial, records it, frees the candidate. */
static void finish_slot(run_state *st, slot *s) {
  tune_result *r = st->res;
  tune_trial *t = &r->trials[r->ntrials];
  memset(t, 0, sizeof *t);
  t->index = s->index;
  t->config = tune_strdup(s->config ? s->config : tune_space_config_str(s->ctx ? s->ctx : st->ctx, st->task->space, s->index));
  t->trace = tune_strdup(s->trace);
  t->build_seconds = s->build_s;
  if (s->child.pid) {
    tune_child_measure(st->bench, &s->child, t);
  } else if (s->measured && s->exe) {
    t->status = s->meas.status, t->error = s->meas.error, t->ncosts = s->meas.ncosts, t->median = s->meas.median;
    memcpy(t->costs, s->meas.costs, sizeof t->costs);
    s->meas.error = NULL;
    unlink(s->exe);
  } else if (s->m) {
    tune_bench_measure(st->bench, s->m, s->f, t);
  } else {
    t->status = TUNE_BUILD_ERROR;
    t->error = tune_strdup(s->error);
  }
  if (t->status == TUNE_OK && t->median > 0) {
    t->gflops = (st->task->flops > 0 ? st->task->flops : 1.0) / t->median * 1e-9;
    if (r->best < 0 || t->median < r->trials[r->best].median) r->best = r->ntrials;
    if (t->gflops > st->best) st->best = t->gflops;
  }
  if (s->features) {
    t->features = malloc(sizeof *t->features * (size_t)s->nfeatures);
    if (t->features) memcpy(t->features, s->features, sizeof *t->features * (size_t)s->nfeatures);
    free(s->features), s->features = NULL;
  }
  r->ntrials++;
  if (st->o->records) {
    tec_ctx *lc = s->ctx ? s->ctx : st->ctx;
    const char *line = tune_record_json(lc, st->task, t);
    if (!line || tune_record_append(lc, st->o->records, line, 0) != 0)
      fprintf(stderr, "tune: warning: trial %d not recorded: %s\n", r->ntrials, tec_ctx_error(lc));
  }
  tec_ctx_free(s->ctx);
  free(s->exe);
  s->ctx = NULL, s->f = NULL, s->m = NULL, s->exe = NULL;
  if (st->o->progress)
    tune_progress(stderr, st->tty, r->ntrials, st->total, st->best, tune_now() - st->t0, 0);
  tune_ticker_update(st->ticker, r->ntrials, st->best);
}

typedef struct host_worker {
  pipeline *p;
  int host;
} host_worker;

/* One host: takes the next built candidate, measures it, marks it done; a host that cannot be
 * reached gives the candidate back and stops while another host is alive (the last one left
 * records the failures). */
static void *host_thread(void *arg) {
  host_worker *w = arg;
  pipeline *p = w->p;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (p->qhead == p->qtail && p->ndone < p->n) pthread_cond_wait(&p->cv, &p->mu);
    if (p->qhead == p->qtail) break; /* everything measured */
    int i = p->queue[p->qhead++];
    pthread_mutex_unlock(&p->mu);
    slot *s = &p->slots[i];
    tune_trial t;
    memset(&t, 0, sizeof t);
    t.index = s->index;
    int unreachable = tune_remote_measure(p->remote, w->host, p->bench, s->exe, s->index, &t);
    pthread_mutex_lock(&p->mu);
    if (unreachable && p->alive > 1) {
      p->alive--, p->dead[w->host] = 1;
      p->queue[p->qtail++] = i;
      pthread_cond_broadcast(&p->cv);
      pthread_mutex_unlock(&p->mu);
      tune_remote_drop(p->remote, w->host, t.error);
      free((char *)t.error);
      return NULL;
    }
    s->meas = t, s->measured = 1, p->ndone++;
    pthread_cond_broadcast(&p->cv);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* A batch measured on the remote hosts: one thread builds, one per live host measures, this
 * one records in trial order. */
static int run_batch_remote(run_state *st, const int64_t *idx, int k, int features, char *dead) {
  int nh = tune_remote_nhosts(st->remote);
  slot *slots = calloc((size_t)k, sizeof *slots);
  pipeline p = {.task = st->task, .slots = slots, .n = k, .features = features, .ahead = AHEAD + nh - 1,
                .remote = st->remote, .bench = st->bench, .dead = dead};
  p.queue = malloc(sizeof *p.queue * (size_t)(k + nh));
  host_worker *w = malloc(sizeof *w * (size_t)nh);
  pthread_t *th = malloc(sizeof *th * (size_t)(nh + 1));
  if (!slots || !p.queue || !w || !th) {
    free(slots), free(p.queue), free(w), free(th);
    return tec_ctx_set_error_kind(st->ctx, TEC_ERR_OOM, "tune: out of memory");
  }
  for (int i = 0; i < k; i++) slots[i].index = idx[i];
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.cv, NULL);
  int nth = 0, builder = pthread_create(&th[nth], NULL, compile_thread, &p) == 0;
  nth += builder;
  for (int h = 0; h < nh; h++)
    if (!dead[h]) {
      w[h] = (host_worker){.p = &p, .host = h};
      if (pthread_create(&th[nth], NULL, host_thread, &w[h]) == 0) nth++, p.alive++;
    }
  int rc = 0;
  if (!builder || p.alive == 0) { /* no threads: nothing can be measured */
    pthread_mutex_lock(&p.mu);
    p.measured = k, p.compiled = k, p.ndone = k, p.qhead = p.qtail;
    pthread_cond_broadcast(&p.cv);
    pthread_mutex_unlock(&p.mu);
    rc = tec_ctx_set_error(st->ctx, "tune: cannot start the threads that build and measure remotely");
  }
  for (int i = 0; i < k && rc == 0; i++) {
    pthread_mutex_lock(&p.mu);
    while (!slots[i].measured) pthread_cond_wait(&p.cv, &p.mu);
    pthread_mutex_unlock(&p.mu);
    finish_slot(st, &slots[i]);
    pthread_mutex_lock(&p.mu);
    p.measured = i + 1;
    pthread_cond_broadcast(&p.cv);
    pthread_mutex_unlock(&p.mu);
  }
  for (int i = 0; i < nth; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < k; i++) { /* after a failure: what was not recorded */
    if (slots[i].exe) unlink(slots[i].exe);
    free(slots[i].exe), free((char *)slots[i].meas.error), free(slots[i].features);
    tec_ctx_free(slots[i].ctx);
  }
  pthread_mutex_destroy(&p.mu);
  pthread_cond_destroy(&p.cv);
  free(slots), free(p.queue), free(w), free(th);
  return rc;
}

static int run_batch(run_state *st, const int64_t *idx, int k, int overlap, int features) {
  if (k <= 0) return 0;
  slot *slots = calloc((size_t)k, sizeof *slots);
  if (!slots) return tec_ctx_set_error_kind(st->ctx, TEC_ERR_OOM, "tune: out of memory");
  for (int i = 0; i < k; i++) slots[i].index = idx[i];
  pthread_t th;
  pipeline p = {.task = st->task, .o = st->o, .bench = st->bench, .slots = slots, .n = k, .features = features,
                .ahead = AHEAD};
  if (overlap && k > 1) {
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    if (pthread_create(&th, NULL, compile_thread, &p) != 0) overlap = 0;
  } else {
    overlap = 0;
  }
  for (int i = 0; i < k; i++) {
    if (overlap) {
      pthread_mutex_lock(&p.mu);
      while (p.compiled <= i) pthread_cond_wait(&p.cv, &p.mu);
      pthread_mutex_unlock(&p.mu);
    } else {
      compile_slot(st->task, &slots[i], features, NULL, st->o, st->bench);
    }
    finish_slot(st, &slots[i]);
    if (overlap) {
      pthread_mutex_lock(&p.mu);
      p.measured = i + 1;
      pthread_cond_broadcast(&p.cv);
      pthread_mutex_unlock(&p.mu);
    }
  }
  if (overlap) {
    pthread_join(th, NULL);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
  }
  for (int i = 0; i < k; i++) tune_child_discard(&slots[i].child); /* none left: every slot measured */
  free(slots);
  return 0;
}

/* One line on what transfer took from the file and what it left, and why. */
static void transfer_note(FILE *f, const tune_task *task, const tune_options *o, const tune_result *r) {
  fprintf(f, "tune: transfer from %s: %d rows of %d other workload%s of %s on this target", o->transfer,
          r->transfer_rows, r->transfer_groups, r->transfer_groups == 1 ? "" : "s", task->template_name);
  if (r->transfer_skipped_self) fprintf(f, "; %d of this workload not used", r->transfer_skipped_self);
  if (r->transfer_skipped_other) fprintf(f, "; %d of other templates or targets skipped", r->transfer_skipped_other);
  if (r->transfer_skipped_nofeat)
    fprintf(f, "; %d without features of this feature set (version %d) skipped", r->transfer_skipped_nofeat,
            tune_task_features_version(task));
  if (r->transfer_skipped_small)
    fprintf(f, "; %d of workloads with fewer than 2 rows or none correct skipped", r->transfer_skipped_small);
  if (r->transfer_skipped_corrupt) fprintf(f, "; %d lines that do not parse skipped", r->transfer_skipped_corrupt);
  fprintf(f, "%s\n", r->transfer_groups ? "" : "; the first batch is random");
}

static int check_options(tec_ctx *ctx, const tune_options *o) {
  if (o->trials < 1) return tec_ctx_set_error(ctx, "tune: trials is %d; it must be >= 1", o->trials);
  if (o->batch < 1) return tec_ctx_set_error(ctx, "tune: batch is %d; it must be >= 1", o->batch);
  if (o->warmup < 0 || o->repeats < 1 || o->repeats > 16)
    return tec_ctx_set_error(ctx, "tune: warmup %d, repeats %d; warmup must be >= 0 and repeats 1..16", o->warmup, o->repeats);
  if (!(o->timeout > 0)) return tec_ctx_set_error(ctx, "tune: the time-out is %g s; it must be > 0", o->timeout);
  if (!(o->min_repeat_ms >= 0) || o->min_repeat_ms > 1000.0 * o->timeout)
    return tec_ctx_set_error(ctx, "tune: min_repeat_ms is %g; it must be 0 (one call per cost) to 1000 * the "
                                  "time-out (%g ms)", o->min_repeat_ms, 1000.0 * o->timeout);
  if (!(o->build_timeout > 0))
    return tec_ctx_set_error(ctx, "tune: the build time-out is %g s; it must be > 0 (default 60)", o->build_timeout);
  if (!(o->rtol > 0)) return tec_ctx_set_error(ctx, "tune: rtol is %g; it must be > 0", o->rtol);
  if (o->confirm < -1 || o->confirm > 16)
    return tec_ctx_set_error(ctx, "tune: confirm is %d; it must be 0 (no confirmation stage) to 16 configs, or -1 (8; none with remote)",
                             o->confirm);
  if (o->confirm > 0 && o->remote)
    return tec_ctx_set_error(ctx, "tune: confirm is %d with remote measurement; the confirmation stage measures its configs side by side "
                                  "here, and the hosts measure one candidate at a time: set confirm to 0 (or -1)", o->confirm);
  if (o->anchor < -1 || o->anchor > 1)
    return tec_ctx_set_error(ctx, "tune: anchor is %d; it must be 1 (the default config timed beside each "
                                  "candidate), 0 (not) or -1 (1 when measured here with min_repeat_ms > 0)", o->anchor);
  if (o->anchor > 0 && o->remote)
    return tec_ctx_set_error(ctx, "tune: anchor is 1 with remote measurement; the hosts time each candidate alone, "
                                  "with no anchor beside it: set anchor to 0 (or -1)");
  if (o->confirm != 0 && (o->confirm_rounds < 1 || o->confirm_rounds > TUNE_MAX_COSTS))
    return tec_ctx_set_error(ctx, "tune: confirm_rounds is %d; it must be 1 to %d", o->confirm_rounds, TUNE_MAX_COSTS);
  return 0;
}

/* The confirmation stage: the k fastest distinct correct trials, and the default config (trial
 * 1) when it ran correctly and is not among them, measured side by side (confirm.c) into
 * r->confirmed, each recorded; r->best_confirmed the fastest of them. With the default beside
 * them, the config tuning hands over never measured slower than the default side by side
 * (a default whose trial fell in a slow spell would otherwise drop out of the running). */
static int confirm_stage(run_state *st, int k) {
  tune_result *r = st->res;
  int64_t idx[16];
  int from[16], n = tune_fastest(r->trials, r->ntrials, k, idx, from);
  int with_default = r->ntrials > 0 && r->trials[0].status == TUNE_OK;
  for (int j = 0; j < n && with_default; j++) with_default = idx[j] != r->trials[0].index;
  if (with_default) {
    if (n == 16) n--; /* the slowest of 16 gives way */
    from[n] = 0, idx[n++] = r->trials[0].index;
  }
  if (n == 0) return 0;
  if (!(r->confirmed = calloc((size_t)n, sizeof *r->confirmed)))
    return tec_ctx_set_error_kind(st->ctx, TEC_ERR_OOM, "tune: out of memory");
  if (tune_compare_bench(st->ctx, st->task, st->o, st->bench, idx, n, st->o->confirm_rounds, r->confirmed) != 0) return -1;
  r->nconfirmed = n;
  for (int i = 0; i < n; i++) {
    tune_trial *c = &r->confirmed[i];
    const tune_trial *tr = &r->trials[from[i]];
    if (tr->features) { /* the config's features again: transfer reads this record as a row too */
      c->features = malloc(sizeof *c->features * TUNE_NFEATURES);
      if (c->features) memcpy(c->features, tr->features, sizeof *c->features * TUNE_NFEATURES);
    }
    if (c->status == TUNE_OK && (r->best_confirmed < 0 || c->median < r->confirmed[r->best_confirmed].median))
      r->best_confirmed = i;
    if (st->o->records) {
      const char *line = tune_record_json(st->ctx, st->task, c);
      if (!line || tune_record_append(st->ctx, st->o->records, line, 0) != 0) {
        fprintf(stderr, "tune: warning: confirmation of config %lld not recorded: %s\n", (long long)c->index,
                tec_ctx_error(st->ctx));
        tec_ctx_clear_error(st->ctx);
      }
    }
  }
  if (st->o->progress) {
    fprintf(stderr, "tune: confirmation: the %d fastest configs%s side by side, %d rounds: ", n - with_default,
            with_default ? " and the default" : "", st->o->confirm_rounds);
    if (r->best_confirmed < 0) {
      fprintf(stderr, "none ran correctly again (%s)\n", r->confirmed[0].error);
    } else {
      const tune_trial *c = &r->confirmed[r->best_confirmed];
      fprintf(stderr, "best %.2f GFLOP/s (config %s; %.2f in its trial)\n", c->gflops, c->config,
                    r->trials[from[r->best_confirmed]].gflops);
    }
  }
  return 0;
}

int tune_run(tec_ctx *ctx, const tune_task *task, const tune_options *opt, tune_result *out) {
  memset(out, 0, sizeof *out);
  out->best = out->best_confirmed = -1;
  tune_options o = *opt;
  if (check_options(ctx, &o) != 0) return -1;
  const char *tn = o.tuner ? o.tuner : "random";
  tune_proposer *prop = tune_proposer_by_name(ctx, tn, o.seed);
  if (!prop) {
    if (strcmp(tn, "grid") && strcmp(tn, "random") && strcmp(tn, "anneal") && strcmp(tn, "xgb"))
      tec_ctx_set_error(ctx, "tune: unknown tuner '%s'; the tuners are grid, random, anneal, xgb",
                        tn);
    return -1;
  }
  if (o.fork < 0) o.fork = getenv("TEC_TEST_EMULATED") ? 0 : 1;
  if (o.overlap < 0) o.overlap = sysconf(_SC_NPROCESSORS_ONLN) >= 2;
  if (o.confirm < 0) o.confirm = o.remote ? 0 : 8;
  if (o.anchor < 0) o.anchor = !o.remote && o.min_repeat_ms > 0;
  int64_t size = tune_space_size(task->space), range = tune_space_range(task->space);
  int total = size < o.trials ? (int)size : o.trials;
  int status = -1;
  run_state st = {.ctx = ctx, .task = task, .o = &o, .res = out, .total = total, .tty = isatty(2)};
  tec_ctx *refctx = tec_ctx_new();
  tune_visited vis = {0};
  tune_prior prior = {0};
  char *dead = NULL; /* remote: the hosts dropped */
  int64_t *idx = malloc(sizeof *idx * (size_t)o.batch);
  out->trials = calloc((size_t)total, sizeof *out->trials);
  if (!refctx || !idx || !out->trials || tune_visited_init(&vis, range) != 0) {
    tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
    goto done;
  }
  if (o.transfer) {
    if (!prop->learns) {
      tec_ctx_set_error(ctx, "tune: transfer (records of other workloads, %s) is for the cost-model tuner, xgb; "
                             "tuner %s does not learn from them", o.transfer, prop->name);
      goto done;
    }
    if (!task->space->config_size) {
      tec_ctx_set_error(ctx, "tune: transfer (%s) needs a topi template's space (knobs bound to a config struct); "
                             "%s's space is built with tune_define_* knobs alone", o.transfer, task->template_name);
      goto done;
    }
    if (tune_prior_load(ctx, task, o.transfer, o.progress ? stderr : NULL, &prior, out) != 0) goto done;
    if (o.progress) transfer_note(stderr, task, &o, out);
  }
  if (o.records && tune_record_append(ctx, o.records, NULL, 0) != 0) goto done; /* can we write it? */
  if (o.remote) {
    if (!(st.remote = tune_remote_open(ctx, task, &o))) goto done;
    if (!(dead = calloc((size_t)tune_remote_nhosts(st.remote), 1))) {
      tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
      goto done;
    }
  }
  int64_t def = task->default_index >= 0 ? task->default_index : 0;
  lower_func *rf = task->lower(task, refctx, def, NULL, NULL);
  st.t0 = tune_now();
  if (o.progress && !st.tty) st.ticker = tune_ticker_start(st.t0, total);
  if (!rf || !(st.bench = tune_bench_new(refctx, task, rf, &o))) {
    tec_ctx_set_error(ctx, "tune: %s: cannot compute the reference output: %s", task->workload, tec_ctx_error(refctx));
    goto done;
  }
  for (int i = 0; o.remote && i < rf->nuser; i++)
    if (te_has_margin(rf->user_args[i])) { /* the remote driver allocates compact buffers */
      tec_ctx_set_error(ctx, "tune: %s: argument %s has a margin (te_tensor_set_margin); remote "
                             "measurement takes compact arguments: measure here", task->workload,
                        rf->user_args[i]->name);
      goto done;
    }
  /* round 0: the default config; then the proposer's batches */
  idx[0] = def;
  int k = 1;
  while (out->ntrials < total) {
    if (out->ntrials > 0) {
      tune_history h = {.task = task, .trials = out->trials, .ntrials = out->ntrials, .visited = &vis,
                        .seed = o.seed, .prior = &prior};
      int want = total - out->ntrials < o.batch ? total - out->ntrials : o.batch;
      k = prop->next(prop, ctx, &h, want, idx);
      if (k < 0) goto done;
      if (k == 0) break;
    }
    for (int i = 0; i < k; i++)
      if (tune_visited_add(&vis, idx[i]) != 0) {
        tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
        goto done;
      }
    /* features for every tuner: the records carry them for transfer (tune_options.transfer) */
    if ((st.remote ? run_batch_remote(&st, idx, k, 1, dead) : run_batch(&st, idx, k, o.overlap, 1)) != 0)
      goto done;
  }
  tune_ticker_stop(st.ticker);
  st.ticker = NULL;
  if (o.progress) tune_progress(stderr, st.tty, out->ntrials, total, st.best, tune_now() - st.t0, 1);
  if (o.confirm > 0 && confirm_stage(&st, o.confirm) != 0) goto done;
  out->elapsed = tune_now() - st.t0;
  status = 0;
  if (o.csv && tune_write_csv(ctx, o.csv, out) != 0) status = -1;
  if (o.svg && tune_write_svg(ctx, o.svg, task, out) != 0) status = -1;
done:
  tune_ticker_stop(st.ticker);
  tune_remote_close(st.remote);
  free(dead);
  tune_bench_free(st.bench);
  if (prop->free) prop->free(prop);
  tune_visited_free(&vis);
  tune_prior_free(&prior);
  free(idx);
  tec_ctx_free(refctx);
  if (status != 0) tune_result_free(out);
  return status;
}

int tune_fastest(const tune_trial *t, int n, int k, int64_t *idx, int *at) {
  int got = 0;
  while (got < k) { /* the fastest trial of a config not taken yet */
    int pick = -1;
    for (int i = 0; i < n; i++) {
      int taken = 0;
      for (int j = 0; j < got; j++) taken |= idx[j] == t[i].index;
      if (t[i].status == TUNE_OK && !taken && (pick < 0 || t[i].median < t[pick].median)) pick = i;
    }
    if (pick < 0) break;
    if (at) at[got] = pick;
    idx[got++] = t[pick].index;
  }
  return got;
}

void tune_result_free(tune_result *r) {
  for (int i = 0; r->trials && i < r->ntrials; i++) tune_trial_free(&r->trials[i]);
  for (int i = 0; r->confirmed && i < r->nconfirmed; i++) tune_trial_free(&r->confirmed[i]);
  free(r->trials), free(r->confirmed);
  memset(r, 0, sizeof *r);
  r->best = r->best_confirmed = -1;
}

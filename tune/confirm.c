/* confirm.c — a few configs measured side by side (tune_compare; tune_run's confirmation
 * stage). Each config is lowered here, then built, prepared, checked once against the
 * reference and warmed up; then `rounds` rounds time every config in turn, the order rotated
 * each round, and a config's cost is its median over the rounds. On a shared machine the
 * noise comes in spells (a few tenths of a second in which every config runs 20-30 % slower),
 * so one config measured alone, as a trial is, is compared with another measured at another
 * time; in a round both are timed within milliseconds of each other, and a spell that lasts
 * less than half the rounds leaves the medians alone. Under tune_options.fork the building
 * and measuring happen in one forked child (a progress byte per build and per round, the
 * parent killing it past the build time-out or the run time-outs), as for a trial. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tune/internal.h"

#define MAXN 16

/* Builds, readies and times the n configs in this process; fd >= 0: a progress byte after
 * each build ('b'), each config readied ('y') and each round ('r'). */
static void compare_here(const tune_task *task, tune_bench *b, tec_ctx **ctxs, lower_func **f,
                         const int64_t *idx, int n, int rounds, double min_ms, tune_meas *res, int fd) {
  tec_module *m[MAXN] = {0};
  int64_t calls[MAXN] = {0};
  for (int i = 0; i < n; i++) {
    if (res[i].status != TUNE_OK) { /* it did not lower */
      tune_note(fd, 'b'), tune_note(fd, 'y');
      continue;
    }
    double t0 = tune_now();
    m[i] = tune_build_candidate(task, ctxs[i], idx[i], f[i]);
    res[i].build_s = tune_now() - t0;
    tune_note(fd, 'b');
    if (!m[i]) {
      const char *e = tec_ctx_error(ctxs[i]);
      res[i].status = TUNE_BUILD_ERROR;
      snprintf(res[i].error, sizeof res[i].error, "%s", e && *e ? e : "building failed without a message");
      tune_note(fd, 'y');
      continue;
    }
    double s = 0;
    res[i].status = tune_bench_ready(b, m[i], f[i], idx[i], res[i].error, sizeof res[i].error);
    if (res[i].status == TUNE_OK) /* the calls that last min_ms, from one warm call */
      res[i].status = tune_bench_time(b, m[i], f[i], idx[i], 1, &s, res[i].error, sizeof res[i].error);
    calls[i] = tune_calls_per_cost(min_ms, s);
    tune_note(fd, 'y');
  }
  for (int r = 0; r < rounds; r++) {
    for (int j = 0; j < n; j++) {
      int i = (j + r) % n;
      double s;
      if (res[i].status != TUNE_OK) continue;
      res[i].status = tune_bench_time(b, m[i], f[i], idx[i], calls[i], &s, res[i].error, sizeof res[i].error);
      if (res[i].status == TUNE_OK && res[i].ncosts < TUNE_MAX_COSTS) res[i].costs[res[i].ncosts++] = s;
    }
    tune_note(fd, 'r');
  }
  for (int i = 0; i < n; i++) tec_module_free(m[i]);
}

/* The parent's side of a forked compare_here: the progress bytes read with the time-outs (a
 * build: build_timeout; readying a config: the run time-outs; a round: the run time-outs of
 * its configs), then the results. A child killed or dead leaves the config it was building a
 * build error ("build took longer than N s (killed)", as for a trial) or the one it was
 * readying or timing a run error naming where it stopped, and every other config a run error
 * saying it was not measured. */
static void wait_compare(const tune_options *o, pid_t pid, int fd, int n, int rounds, double min_ms, tune_meas *res) {
  int builds = 0, ready = 0, done_rounds = 0, got = 0, killed = 0;
  double step_run = 10.0 * o->timeout + 5.0, round_s = n * (2.0 * o->timeout + 2e-3 * min_ms) + 5.0;
  double deadline = tune_now() + o->build_timeout + 0.5;
  for (;;) {
    char c;
    int rc = tune_read_by(fd, &c, 1, deadline);
    if (rc < 0) {
      kill(pid, SIGKILL), killed = 1;
      break;
    }
    if (rc == 0) break;
    if (c == 'R') {
      got = tune_read_by(fd, res, sizeof *res * (size_t)n, tune_now() + 5.0) == 1;
      break;
    }
    builds += c == 'b', ready += c == 'y', done_rounds += c == 'r';
    deadline = tune_now() + (c == 'b' ? step_run : ready < n ? o->build_timeout + 0.5 : round_s);
  }
  close(fd);
  int st = 0;
  tune_reap((int)pid, &st);
  if (got) return;
  /* where it stopped: building config `ready` (builds == ready), readying it (builds > ready),
   * or in a round */
  int at = ready < n ? ready : -1;
  char why[200];
  if (WIFSIGNALED(st) && !killed)
    snprintf(why, sizeof why, "died of signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
  else if (!killed)
    snprintf(why, sizeof why, "exited with status %d before reporting", WEXITSTATUS(st));
  else if (at >= 0 && builds == ready)
    snprintf(why, sizeof why, "was killed building config %d of %d", at + 1, n);
  else if (at >= 0)
    snprintf(why, sizeof why, "was killed readying config %d of %d (prepare and its first runs: the time-outs)", at + 1, n);
  else
    snprintf(why, sizeof why, "was killed in round %d of %d (a run past the time-outs)", done_rounds + 1, rounds);
  for (int i = 0; i < n; i++) {
    if (res[i].status != TUNE_OK) continue; /* it did not lower: that error stands */
    res[i].ncosts = 0;
    if (i == at && killed && builds == ready)
      res[i].status = TUNE_BUILD_ERROR,
      snprintf(res[i].error, sizeof res[i].error, "build took longer than %g s (killed)", o->build_timeout);
    else if (i == at || at < 0)
      res[i].status = TUNE_RUN_ERROR,
      snprintf(res[i].error, sizeof res[i].error, "the process measuring the configs side by side %s", why);
    else
      res[i].status = TUNE_RUN_ERROR,
      snprintf(res[i].error, sizeof res[i].error, "not measured: the process measuring the configs side by side %s", why);
  }
}

static void compare_forked(const tune_options *o, const tune_task *task, tune_bench *b, tec_ctx **ctxs, lower_func **f,
                           const int64_t *idx, int n, int rounds, double min_ms, tune_meas *res) {
  int fd;
  char why[300];
  int pid = tune_fork_reporter("measuring process", &fd, why, sizeof why);
  if (pid < 0) {
    for (int i = 0; i < n; i++)
      if (res[i].status == TUNE_OK) res[i].status = TUNE_RUN_ERROR, snprintf(res[i].error, sizeof res[i].error, "%s", why);
    return;
  }
  if (pid == 0) {
    compare_here(task, b, ctxs, f, idx, n, rounds, min_ms, res, fd);
    char c = 'R';
    if (write(fd, &c, 1) == 1 && write(fd, res, sizeof *res * (size_t)n) == (ssize_t)(sizeof *res * (size_t)n))
      _exit(0);
    _exit(3);
  }
  wait_compare(o, pid, fd, n, rounds, min_ms, res);
}

int tune_compare_bench(tec_ctx *ctx, const tune_task *task, const tune_options *o, tune_bench *b,
                       const int64_t *idx, int n, int rounds, tune_trial *out) {
  tec_ctx *ctxs[MAXN] = {0};
  lower_func *f[MAXN] = {0};
  tune_meas *res = calloc((size_t)n, sizeof *res);
  const char *cfg[MAXN] = {0}, *trace[MAXN] = {0};
  if (!res) return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
  int fork_ = o->fork < 0 ? !getenv("TEC_TEST_EMULATED") : o->fork;
  double min_ms = o->min_repeat_ms > 1.0 ? o->min_repeat_ms : 1.0;
  for (int i = 0; i < n; i++) {
    if (!(ctxs[i] = tec_ctx_new())) {
      res[i].status = TUNE_BUILD_ERROR;
      snprintf(res[i].error, sizeof res[i].error, "out of memory (a ctx for the config)");
      continue;
    }
    f[i] = task->lower(task, ctxs[i], idx[i], &cfg[i], &trace[i]);
    if (!f[i]) {
      const char *e = tec_ctx_error(ctxs[i]);
      res[i].status = TUNE_BUILD_ERROR;
      snprintf(res[i].error, sizeof res[i].error, "%s", e && *e ? e : "lowering failed without a message");
    }
  }
  if (fork_) compare_forked(o, task, b, ctxs, f, idx, n, rounds, min_ms, res);
  else compare_here(task, b, ctxs, f, idx, n, rounds, min_ms, res, -1);
  for (int i = 0; i < n; i++) {
    tune_trial *t = &out[i];
    memset(t, 0, sizeof *t);
    t->index = idx[i], t->confirmed = 1, t->build_seconds = res[i].build_s;
    t->config = tune_strdup(cfg[i] ? cfg[i] : tune_space_config_str(ctxs[i] ? ctxs[i] : ctx, task->space, idx[i]));
    t->trace = tune_strdup(trace[i]);
    tune_trial_set(t, (tune_status)res[i].status, res[i].error, res[i].ncosts, res[i].costs);
    if (t->status == TUNE_OK && t->median > 0) t->gflops = (task->flops > 0 ? task->flops : 1.0) / t->median * 1e-9;
    tec_ctx_free(ctxs[i]);
  }
  free(res);
  return 0;
}

int tune_compare(tec_ctx *ctx, const tune_task *task, const tune_options *o, const int64_t *idx, int n, int rounds,
                 tune_trial *out) {
  if (n < 1 || n > MAXN || !idx || !out)
    return tec_ctx_set_error(ctx, "tune_compare: %d configs; 1 to %d are measured side by side", n, MAXN);
  if (rounds < 1 || rounds > TUNE_MAX_COSTS)
    return tec_ctx_set_error(ctx, "tune_compare: %d rounds; 1 to %d are legal", rounds, TUNE_MAX_COSTS);
  if (o->remote)
    return tec_ctx_set_error(ctx, "tune_compare: measures here (the configs side by side in one process); "
                                  "remote hosts measure one candidate at a time");
  if (!(o->timeout > 0) || !(o->build_timeout > 0) || o->warmup < 0 || !(o->min_repeat_ms >= 0) || !(o->rtol > 0))
    return tec_ctx_set_error(ctx, "tune_compare: the options need timeout > 0, build_timeout > 0, warmup >= 0, "
                                  "min_repeat_ms >= 0 and rtol > 0 (tune_options_default() has them)");
  int64_t range = tune_space_range(task->space);
  for (int i = 0; i < n; i++)
    if (idx[i] < 0 || idx[i] >= range)
      return tec_ctx_set_error(ctx, "tune_compare: config index %lld is not in %s's space (0 to %lld)",
                               (long long)idx[i], task->workload, (long long)range - 1);
  tec_ctx *refctx = tec_ctx_new();
  if (!refctx) return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
  int64_t def = task->default_index >= 0 ? task->default_index : 0;
  lower_func *rf = task->lower(task, refctx, def, NULL, NULL);
  tune_options bo = *o;
  bo.anchor = 0; /* side by side: no anchor needed */
  tune_bench *b = rf ? tune_bench_new(refctx, task, rf, &bo) : NULL;
  int rc = b ? tune_compare_bench(ctx, task, o, b, idx, n, rounds, out)
             : tec_ctx_set_error(ctx, "tune_compare: %s: cannot compute the reference output: %s", task->workload,
                                 tec_ctx_error(refctx));
  tune_bench_free(b);
  tec_ctx_free(refctx);
  return rc;
}

void tune_trial_free(tune_trial *t) {
  free((char *)t->config), free((char *)t->trace), free((char *)t->error), free(t->features);
  t->config = t->trace = t->error = NULL, t->features = NULL;
}

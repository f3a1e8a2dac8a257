/* driver_tune.c — `tec tune`: a topi template's space (or with --auto the space the
 * auto-scheduler generates for its declaration: driver_auto.c; a generator's task comes from
 * driver_gen.c) searched on the host (tune/), or on
 * other hosts over ssh (--remote), every trial appended to the records file, the progress line
 * on stderr, the best config printed (the text --config takes), the CSV and SVG when asked.
 * Exit 2 for bad usage, 1 when tuning fails or no candidate ran correctly. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tec/tune.h"
#include "tools/driver_internal.h"

static int err(int status, const char *msg) {
  fputs("tec tune: ", stderr);
  for (const char *c = msg ? msg : "(no message)"; *c; c++)
    if (*c != '\n') fputc(*c, stderr);
    else if (c[1]) fputs("; ", stderr);
  fputc('\n', stderr);
  return status;
}

/* The runtime library beside this program: <bin>/../lib/libtec_runtime.a (or lib64, ...) installed, or the
 * build tree's <build>/libtec_runtime.a (the program in <build>/tools). */
static const char *own_runtime(char *buf, size_t size) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return NULL;
  *slash = 0;
  const char *rel[] = {"../lib/libtec_runtime.a", "../lib64/libtec_runtime.a", "../lib/x86_64-linux-gnu/libtec_runtime.a",
                       "../lib/aarch64-linux-gnu/libtec_runtime.a", "../libtec_runtime.a"};
  for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
    snprintf(buf, size, "%s/%s", exe, rel[i]);
    if (access(buf, R_OK) == 0) return buf;
  }
  return NULL;
}

/* The target in a few words for the first line (the records keep its whole text): a preset's
 * name, "the host (-mcpu=CPU)", or the triple and CPU. */
static const char *brief_target(tec_ctx *ctx, const tec_target *t) {
  const tec_target_preset *p;
  for (int i = 0; (p = tec_target_preset_at(i)); i++) {
    const tec_target *v = tec_target_parse(ctx, p->name);
    if (v && tec_target_equal(v, t)) return p->name;
  }
  const tec_target *host = tec_target_parse(ctx, NULL);
  const char *cpu = *t->cpu ? t->cpu : "generic";
  if (host && tec_target_equal(host, t)) return tec_ctx_printf(ctx, "the host (-mcpu=%s)", cpu);
  return tec_ctx_printf(ctx, "%s -mcpu=%s", t->triple, cpu);
}

/* --remote's list split on commas into hosts (at most 64). 0, or 2 after the message. */
static int remote_hosts(char *list, const char **hosts, int *n) {
  *n = 0;
  for (char *h = strtok(list, ","); h; h = strtok(NULL, ",")) {
    if (*n == 64) return err(2, "--remote: at most 64 hosts");
    hosts[(*n)++] = h;
  }
  if (*n == 0) return err(2, "--remote needs [USER@]HOST[:PORT][,...]");
  return 0;
}

int drv_tune(tec_ctx *ctx, const topi_template *t, const void *problem, const char *shape, const char *target,
             int repeat, const drv_tune_args *a) {
  tune_task task;
  sch_schedule *fresh = NULL;
  if (a->autosched) { /* the declaration, unscheduled: the task only reads it, the best record
                       * schedules it after the run (drv_auto_print_sched) */
    topi_decl d;
    if (t->declare(ctx, problem, &d) != 0 || !(fresh = sch_create(ctx, 1, &d.out)) ||
        tune_task_auto(fresh, target, NULL, &task) != 0)
      return err(2, tec_ctx_error(ctx));
  } else if (tune_task_topi(ctx, t, problem, shape, target, &task) != 0) {
    return err(2, tec_ctx_error(ctx));
  }
  return drv_tune_task(ctx, &task, t->name, shape, target, repeat, a, fresh);
}

int drv_tune_task(tec_ctx *ctx, tune_task *task_in, const char *op, const char *shape, const char *target,
                  int repeat, const drv_tune_args *a, sch_schedule *fresh) {
  const tune_task task = *task_in;
  tune_options o = tune_options_default();
  if (a->tuner) o.tuner = a->tuner;
  if (strcmp(o.tuner, "grid") && strcmp(o.tuner, "random") && strcmp(o.tuner, "anneal") &&
      strcmp(o.tuner, "xgb")) {
    char m[160];
    snprintf(m, sizeof m, "--tuner '%s'; the tuners are grid, random, anneal, xgb", o.tuner);
    return err(2, m);
  }
  if (!strcmp(o.tuner, "xgb") && !tune_have_xgb())
    return err(2, "--tuner xgb: this tec is built without XGBoost (install libxgboost-dev and reconfigure); "
                  "grid and random are here");
  if (a->transfer && strcmp(o.tuner, "xgb")) {
    char m[200];
    snprintf(m, sizeof m, "--transfer is for --tuner xgb (the cost model learns from other workloads' records); "
             "tuner %s does not learn", o.tuner);
    return err(2, m);
  }
  if (repeat > 16) return err(2, "--repeat for tune is 1 to 16 timed runs per candidate");
  if (a->trials) o.trials = a->trials;
  if (a->seed_set) o.seed = a->seed;
  if (a->timeout > 0) o.timeout = a->timeout;
  if (a->build_timeout > 0) o.build_timeout = a->build_timeout;
  if (a->min_repeat_ms >= 0) o.min_repeat_ms = a->min_repeat_ms;
  if (o.min_repeat_ms > 1000.0 * o.timeout) {
    char m[200];
    snprintf(m, sizeof m, "--min-repeat-ms %g is longer than the time-out (--timeout, %g ms): a timed run of the calls must fit in it",
             o.min_repeat_ms, 1000.0 * o.timeout);
    return err(2, m);
  }
  if (repeat) o.repeats = repeat;
  if (a->confirm_set) {
    if (a->remote && a->confirm > 0)
      return err(2, "--confirm with --remote: the confirmation measures its configs side by side on this machine; "
                    "the hosts measure one at a time (--confirm 0, or leave it out)");
    o.confirm = a->confirm;
  }
  o.records = a->records, o.csv = a->csv, o.svg = a->svg, o.progress = 1, o.transfer = a->transfer;
  if (!a->remote && (a->remote_prefix || a->remote_cc || a->remote_runtime || a->nssh))
    return err(2, "--remote-run-prefix, --remote-cc, --remote-runtime and --ssh-option go with --remote HOSTS");
  tune_remote ro = {0};
  const char *hosts[64];
  char list[4096], rt[PATH_MAX + 64];
  if (a->remote) {
    if (strlen(a->remote) >= sizeof list) return err(2, "--remote: the host list is too long");
    snprintf(list, sizeof list, "%s", a->remote);
    if (remote_hosts(list, hosts, &ro.nhosts) != 0) return 2;
    const tec_target *host = tec_target_parse(ctx, NULL);
    ro.hosts = hosts, ro.run_prefix = a->remote_prefix, ro.cc = a->remote_cc, ro.ssh_options = a->ssh, ro.nssh_options = a->nssh;
    ro.runtime = a->remote_runtime;
    if (!ro.runtime && (!target || tec_target_equal(host, task.target_value))) ro.runtime = own_runtime(rt, sizeof rt);
    if (!ro.runtime) {
      char m[700];
      snprintf(m, sizeof m, "--remote for target '%s' needs --remote-runtime FILE: libtec_runtime.a built for it "
               "(a runtime-only cross build: docs/tuning.md)", task.target);
      return err(2, m);
    }
    o.remote = &ro;
  } else if (target) { /* measured here: the target must be the host's */
    const tec_target *host = tec_target_parse(ctx, NULL);
    if (host && !tec_target_equal(host, task.target_value)) {
      char m[600];
      snprintf(m, sizeof m, "measures on this machine; --target '%s' is not the host (%s)", target, host->str);
      return err(2, m);
    }
  }
  printf("tune %s on %s, tuner %s, seed %u%s%s\n", task.workload, brief_target(ctx, task.target_value), o.tuner,
         o.seed, a->remote ? ", measured on " : "", a->remote ? a->remote : "");
  tune_space_print(stdout, task.space);
  fflush(stdout);
  tune_result r;
  if (tune_run(ctx, &task, &o, &r) != 0) { /* bad remote options are bad usage */
    tune_result_free(&r);
    const char *e = tec_ctx_error(ctx);
    return err(a->remote && e && (strstr(e, "tune: remote host") || strstr(e, "tune: ssh option") ||
                                  strstr(e, "tune: the run prefix") || strstr(e, "tune: the C compiler") ||
                                  strstr(e, "runtime library")) ? 2 : 1, e);
  }
  int nerr[5] = {0};
  for (int i = 0; i < r.ntrials; i++) nerr[r.trials[i].status]++;
  printf("%d trials in %.1f s: %d ok, %d build errors, %d run errors, %d wrong, %d time-outs; records in %s\n",
         r.ntrials, r.elapsed, nerr[TUNE_OK], nerr[TUNE_BUILD_ERROR], nerr[TUNE_RUN_ERROR], nerr[TUNE_WRONG],
         nerr[TUNE_TIMEOUT], a->records);
  int status = 0;
  if (r.best < 0) {
    status = err(1, "no candidate ran correctly (the records say why)");
  } else {
    const tune_trial *b = &r.trials[r.best], *d = &r.trials[0];
    if (r.best_confirmed >= 0) { /* measured side by side: the best to believe */
      const tune_trial *c = &r.confirmed[r.best_confirmed];
      printf("fastest trial: %s, %.2f GFLOP/s (trial %d)\n", b->config, b->gflops, r.best + 1);
      printf("best: %s\n  median %.4f ms, %.2f GFLOP/s (%d configs measured again side by side, %d rounds; "
             "the default's trial: %.4f ms)\n", c->config, 1e3 * c->median, c->gflops, r.nconfirmed, o.confirm_rounds,
             d->status == TUNE_OK ? 1e3 * d->median : 0.0);
      b = c;
    } else {
      printf("best: %s\n  median %.4f ms, %.2f GFLOP/s (trial %d; the default: %.4f ms)\n", b->config, 1e3 * b->median,
             b->gflops, r.best + 1, d->status == TUNE_OK ? 1e3 * d->median : 0.0);
    }
    char cfg[1024];
    snprintf(cfg, sizeof cfg, "%s", b->config);
    for (char *c = cfg; *c; c++)
      if (*c == ' ') *c = ',';
    const char *sh = shape && *shape ? shape : NULL;
    if (fresh) {
      printf("%s bench %s%s%s --auto --records %s\n", drv_prog(), op, sh ? " --shape " : "", sh ? sh : "", a->records);
      if (drv_auto_print_sched(ctx, fresh, target, a->records) != 0) status = err(1, tec_ctx_error(ctx));
    } else {
      printf("%s bench %s%s%s --config %s\n", drv_prog(), op, sh ? " --shape " : "", sh ? sh : "", cfg);
    }
  }
  if (a->csv) printf("trials: %s\n", a->csv);
  if (a->svg) printf("plot: %s\n", a->svg);
  tune_result_free(&r);
  return status;
}

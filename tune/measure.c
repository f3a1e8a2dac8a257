/* measure.c — measuring one candidate: the arguments allocated and filled once (seeded), the
 * reference output computed once (the user's reference, or the default config's output);
 * per candidate, prepare run once (tec_module_bind_constants, untimed), then warm-up and timed
 * runs of run alone, the output of the first run checked against the reference, every run
 * held to the time-out. In a forked child when asked (tune_options.fork): a run that hangs is
 * killed at the time-out, a crash is an error record, not the tuner's end. The child that
 * built a candidate (build_child.c) measures it through tune_bench_child_measure and
 * tune_bench_wait, the two sides of the same protocol. Arguments with a margin
 * (te_tensor_set_margin) are allocated whole; the output is compared in its window. Arguments
 * are float32 or (the int8 templates') int8, uint8 and int32; the remote driver takes float32.
 * Anchored (tune_options.anchor): the default config's module, built and prepared once here
 * (forked children inherit it), is timed beside the candidate in every repeat, and each cost
 * is the candidate's time scaled by the anchor's speed in that repeat (see measure_here). */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tune/internal.h"

struct tune_bench {
  tec_ctx *ctx;
  int nargs;
  DLTensor *t;
  DLTensor **args;
  void *out;       /* the output argument's data (the last argument) */
  tec_dtype otype; /* its type: float32, or an int8 template's int8 (out_at reads either) */
  int64_t nout;
  float *ref;      /* the reference output, as float (exact for the integer types taken) */
  int ndim;                         /* the output's buffer: extents, and the window compared */
  int64_t ext[8], lo[8], hi[8];     /* (lo <= index < hi in every dimension; no margin: all) */
  tune_options o;
  tec_module *anchor;               /* anchored: the default config, prepared; else NULL */
  const lower_func *anchor_f;
  int64_t anchor_calls;             /* its calls per cost (min_repeat_ms) */
  double anchor_base;               /* its seconds per call on the quiet machine (anchor_ready) */
};

int64_t tune_bench_nout(const tune_bench *b) { return b->nout; }

void tune_bench_free(tune_bench *b) {
  if (!b) return;
  tec_module_free(b->anchor);
  for (int i = 0; b->args && i < b->nargs; i++)
    if (b->args[i]) tec_dl_free(&b->t[i]);
  free(b->t), free(b->args), free(b->ref), free(b);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}


/* The calibration's next number of calls per cost, from `number` calls that took dt seconds:
 * grown (at least doubled, at most TUNE_MAX_CALLS) until they last min_repeat_ms; `number`
 * itself when they do (or cannot grow, or took over the time-out). A cold first call can be
 * 30x a warm one, so one call's time does not say how many. */
static int64_t next_calls(const tune_options *o, double dt, int64_t number) {
  if (dt >= 1e-3 * o->min_repeat_ms || number >= TUNE_MAX_CALLS || dt > o->timeout) return number;
  int64_t next = tune_calls_per_cost(o->min_repeat_ms, dt / (double)number);
  next = next > 2 * number ? next : 2 * number;
  return next > TUNE_MAX_CALLS ? TUNE_MAX_CALLS : next;
}

/* One call of a module's function on the bench's arguments, the hook after it: what
 * tec_rt_time (runtime/timer.c, the one timing loop) calls. */
typedef struct bench_call {
  tune_bench *b;
  tec_module *m;
  const char *name;
  int64_t index; /* for the hook (-1: the anchor) */
} bench_call;

static int is_f32(tec_dtype t) { return t.code == TEC_FLOAT && t.bits == 32 && t.lanes == 1; }

/* The tensor types the tuner fills and compares: float32, and the int8 templates' int8,
 * uint8 and int32 (weights, bias, activations). */
static int measurable(tec_dtype t) {
  return is_f32(t) || (t.lanes == 1 && ((t.code == TEC_INT && (t.bits == 8 || t.bits == 32)) ||
                                        (t.code == TEC_UINT && t.bits == 8)));
}

/* element e of an output of type t, as a double */
static double out_at(tec_dtype t, const void *out, int64_t e) {
  if (is_f32(t)) return ((const float *)out)[e];
  if (t.code == TEC_UINT) return ((const uint8_t *)out)[e];
  return t.bits == 8 ? ((const int8_t *)out)[e] : ((const int32_t *)out)[e];
}

static int32_t call_once(void *user) {
  bench_call *c = user;
  int32_t rc = tec_module_run(c->m, c->name, c->b->nargs, c->b->args);
  if (c->b->o.hook) /* the output as floats: float32 only (else NULL, tune.h) */
    c->b->o.hook(c->b->o.hook_user, c->index, is_f32(c->b->otype) ? c->b->out : NULL, c->b->nout);
  return rc;
}

/* n calls of m's function back to back, timed: 0 and the seconds per call in *s, or the first
 * failure's code. */
static int32_t time_calls(tune_bench *b, tec_module *m, const char *name, int64_t index, int64_t n, double *s) {
  bench_call c = {b, m, name, index};
  if (!b->o.clock) return tec_rt_time(call_once, &c, 0, 1, n, s);
  int32_t rc = 0; /* the test clock (tune_options.clock) */
  int64_t k = 0;
  double t0 = b->o.clock(b->o.hook_user);
  while (k < (n < 1 ? 1 : n) && rc == 0) rc = call_once(&c), k++;
  *s = (b->o.clock(b->o.hook_user) - t0) / (double)k;
  return rc;
}

/* The time as the measurement reads it: the test clock when one is given. */
static double bench_now(const tune_bench *b) {
  return b->o.clock ? b->o.clock(b->o.hook_user) : tune_now();
}

/* The anchor's calls for one cost: 0 and its seconds per call in *s, or the failing code. */
static int32_t time_anchor(tune_bench *b, double *s) {
  return time_calls(b, b->anchor, b->anchor_f->user_name, -1, b->anchor_calls, s);
}

/* The anchor readied (b owns m from here): prepared on the arguments, warmed up, its calls per
 * cost calibrated as a trial's are, and its base speed: costs timed for ANCHOR_BASE_S seconds
 * (ANCHOR_MIN to ANCHOR_MAX of them), their lower quartile. A slow spell lasts a few tenths of
 * a second, so some of that time is outside it, and the lower quartile is the quiet machine's
 * speed, not the spell's. 0, or -1 with the error in b's ctx. */
#define ANCHOR_BASE_S 0.3
#define ANCHOR_MIN 16
#define ANCHOR_MAX 256
static int anchor_ready(tune_bench *b, tec_module *m, const lower_func *f) {
  b->anchor = m, b->anchor_f = f, b->anchor_calls = 1;
  const char *name = f->user_name;
  if (tec_module_bind_constants(m, name, b->nargs, b->args) != 0 || tec_module_run(m, name, b->nargs, b->args) != 0)
    return tec_ctx_set_error(b->ctx, "tune: the default config (the anchor) failed to run: %s", tec_rt_last_error());
  double v[ANCHOR_MAX], start;
  for (int step = 0; b->o.min_repeat_ms > 0 && step < 24; step++) { /* calibration, as a trial's */
    if (time_anchor(b, &v[0]) != 0) break;
    int64_t next = next_calls(&b->o, v[0] * (double)b->anchor_calls, b->anchor_calls);
    if (next == b->anchor_calls) break;
    b->anchor_calls = next;
  }
  int n = 0;
  for (start = bench_now(b); n < ANCHOR_MAX && (n < ANCHOR_MIN || bench_now(b) - start < ANCHOR_BASE_S); n++)
    if (time_anchor(b, &v[n]) != 0)
      return tec_ctx_set_error(b->ctx, "tune: the default config (the anchor) failed to run: %s", tec_rt_last_error());
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  b->anchor_base = v[n / 4];
  return 0;
}

tune_bench *tune_bench_new(tec_ctx *ctx, const tune_task *task, lower_func *f, const tune_options *o) {
  tune_bench *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->ctx = ctx, b->o = *o, b->nargs = f->nuser;
  b->t = calloc((size_t)b->nargs, sizeof *b->t);
  b->args = calloc((size_t)b->nargs, sizeof *b->args);
  if (!b->t || !b->args) goto oom;
  for (int i = 0; i < b->nargs; i++) {
    const te_tensor *a = f->user_args[i];
    int64_t shape[8];
    if (a->ndim > 8 || !measurable(a->type)) {
      tec_ctx_set_error(ctx, "tune: argument %s is not a float32, int8, uint8 or int32 tensor of at most 8 dimensions; the tuner measures operators on those", a->name);
      goto fail;
    }
    for (int d = 0; d < a->ndim; d++) /* a margin (te_tensor_set_margin): the whole buffer */
      if (!ir_is_const_int(te_buffer_shape(a)[d], &shape[d])) {
        tec_ctx_set_error(ctx, "tune: argument %s has a symbolic shape; the tuner needs constant shapes", a->name);
        goto fail;
      }
    if (tec_dl_alloc(&b->t[i], a->type, a->ndim, shape) != 0) goto oom;
    b->args[i] = &b->t[i];
    int64_t n = tec_dl_numel(&b->t[i]);
    unsigned s = TUNE_FILL_SEED(i); /* the remote driver fills float32 the same way (remote_driver.c) */
    for (int64_t e = 0; e < n; e++) {
      s = s * 1103515245u + 12345u;
      void *d = b->t[i].data;
      if (is_f32(a->type)) ((float *)d)[e] = (float)((s >> 9) & 0xffff) / 32768.0f - 1.0f;
      else if (a->type.bits == 8) ((uint8_t *)d)[e] = (uint8_t)(s >> 13); /* any byte */
      else ((int32_t *)d)[e] = (int32_t)((s >> 9) % 2001u) - 1000;   /* a small int32 */
    }
  }
  if (task && task->fill) task->fill(task, b->args, b->nargs);
  b->out = b->t[b->nargs - 1].data;
  b->otype = f->user_args[b->nargs - 1]->type;
  b->nout = tec_dl_numel(&b->t[b->nargs - 1]);
  const te_tensor *o_t = f->user_args[b->nargs - 1]; /* the window compared, not the margin */
  b->ndim = o_t->ndim;
  for (int d = 0; d < b->ndim; d++)
    b->ext[d] = b->t[b->nargs - 1].shape[d], b->lo[d] = te_margin(o_t, d, 0),
    b->hi[d] = b->ext[d] - te_margin(o_t, d, 1);
  if (!(b->ref = malloc(sizeof *b->ref * (size_t)b->nout))) goto oom;
  /* the default config built (by tec_build, even for a task that builds its candidates
   * itself): the reference when there is no other, the anchor */
  tec_module *m = NULL;
  const tec_target *host = task && task->target_value && task->target_value->is_host
                               ? task->target_value : NULL; /* NULL: parsed by tec_build_for */
  if ((!o->reference || o->anchor > 0) && !(m = tec_build_for(ctx, 1, &f, host))) goto fail;
  if (o->reference) {
    if (o->reference(o->reference_user, b->args, b->nargs, b->ref, b->nout) != 0) {
      tec_module_free(m);
      tec_ctx_set_error(ctx, "tune: the reference function failed");
      goto fail;
    }
  } else {
    int32_t rc = tec_module_run(m, f->user_name, b->nargs, b->args);
    for (int64_t e = 0; rc == 0 && e < b->nout; e++) b->ref[e] = (float)out_at(b->otype, b->out, e);
    if (rc != 0) {
      tec_module_free(m);
      tec_ctx_set_error(ctx, "tune: the default config (the reference) failed to run: %s", tec_rt_last_error());
      goto fail;
    }
  }
  if (o->anchor <= 0) tec_module_free(m);
  else if (anchor_ready(b, m, f) != 0) goto fail; /* b owns m */
  return b;
oom:
  tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory allocating the arguments");
fail:
  tune_bench_free(b);
  return NULL;
}

void tune_note(int fd, char c) {
  if (fd >= 0 && write(fd, &c, 1) != 1) { /* the parent is gone: nothing to tell */
  }
}

/* 1 if buffer element e of the output lies in its window (outside the margin). */
static int in_window(const tune_bench *b, int64_t e) {
  for (int d = b->ndim - 1; d >= 0; d--) {
    int64_t i = e % b->ext[d];
    if (i < b->lo[d] || i >= b->hi[d]) return 0;
    e /= b->ext[d];
  }
  return 1;
}

static tune_status compare(const tune_bench *b, tec_dtype t, const void *out, char *err, size_t errsize) {
  for (int64_t e = 0; e < b->nout; e++) {
    if (!in_window(b, e)) continue; /* the margin is the caller's: never written */
    double x = out_at(t, out, e), y = b->ref[e];
    if (isnan(y) && isnan(x)) continue;
    if (!(fabs(x - y) <= b->o.rtol * (1.0 + fabs(y)))) {
      snprintf(err, errsize, "wrong output: element %lld is %.9g, the reference %.9g (tolerance %g * (1 + |reference|))",
               (long long)e, x, y, b->o.rtol);
      return TUNE_WRONG;
    }
  }
  return TUNE_OK;
}

tune_status tune_bench_check(const tune_bench *b, int64_t index, float *out, char *err, size_t errsize) {
  if (!is_f32(b->otype)) { /* the remote driver (remote_driver.c) fills and returns float32 */
    snprintf(err, errsize, "the remote measurement takes float32 operators (this output is not)");
    return TUNE_RUN_ERROR;
  }
  if (b->o.hook) b->o.hook(b->o.hook_user, index, out, b->nout);
  return compare(b, b->otype, out, err, errsize);
}

const tune_options *tune_bench_options(const tune_bench *b) { return &b->o; }

int64_t tune_calls_per_cost(double min_repeat_ms, double call_s) {
  if (!(min_repeat_ms > 0)) return 1;
  double n = ceil(min_repeat_ms * 1e-3 / (call_s > 1e-9 ? call_s : 1e-9));
  return n < 1 ? 1 : n > TUNE_MAX_CALLS ? TUNE_MAX_CALLS : (int64_t)n;
}

/* The output filled with NaN (a candidate that writes nothing is wrong) and m's prepare run on
 * the arguments: TUNE_OK, or TUNE_RUN_ERROR with why in err. */
static tune_status prepare(tune_bench *b, tec_module *m, const lower_func *f, char *err, size_t errsize) {
  if (is_f32(b->otype)) /* an integer output: a byte pattern (a candidate writing nothing is
                          wrong where the reference differs from it) */
    for (int64_t e = 0; e < b->nout; e++) ((float *)b->out)[e] = NAN;
  else memset(b->out, 0x55, (size_t)(b->nout * tec_dtype_bytes(b->otype)));
  if (tec_module_bind_constants(m, f->user_name, b->nargs, b->args) == 0) return TUNE_OK;
  snprintf(err, errsize, "prepare failed: %s", tec_rt_last_error());
  return TUNE_RUN_ERROR;
}

/* Runs the measurement here; fd >= 0: a progress byte per step to the parent. A trial's
 * first run is checked, and timed too when there is no warm-up (tune_bench_ready, for the
 * side-by-side measurement, checks an untimed run instead). */
static void measure_here(tune_bench *b, tec_module *m, const lower_func *f, int64_t index, tune_meas *r, int fd) {
  const char *name = f->user_name;
  double anchor[TUNE_MAX_COSTS]; /* anchored: the anchor's time beside each cost */
  memset(r, 0, sizeof *r);
  if ((r->status = prepare(b, m, f, r->error, sizeof r->error)) != TUNE_OK) return;
  tune_note(fd, 'p');
  int runs = b->o.warmup + b->o.repeats;
  int64_t number = 1; /* calls per timed cost (min_repeat_ms): calibrated after the warm-up */
  for (int i = 0; i < runs; i++) {
    int32_t rc = 0;
    /* calibration (untimed): the calls grow until they last min_repeat_ms (next_calls) */
    for (int step = 0; i == b->o.warmup && b->o.min_repeat_ms > 0 && step < 24 && rc == 0; step++) {
      double per_call = 0;
      rc = time_calls(b, m, name, index, number, &per_call);
      int64_t next = next_calls(&b->o, per_call * (double)number, number);
      tune_note(fd, 'r'); /* progress: the parent's deadline is per step */
      if (next == number) break;
      number = next;
    }
    int64_t calls = i >= b->o.warmup ? number : 1;
    /* anchored: the anchor timed right before the candidate in odd timed runs and right after
     * in even ones (after the check of a first run: the anchor writes the output too) */
    int k = i - b->o.warmup; /* the timed run's number; < 0: a warm-up run */
    int anchored = b->anchor && k >= 0 && rc == 0;
    double da = 0;
    if (anchored && k % 2 == 1 && (rc = time_anchor(b, &da)) != 0) goto anchor_failed;
    double dt = 0;
    if (rc == 0) rc = time_calls(b, m, name, index, calls, &dt);
    if (rc != 0) {
      r->status = TUNE_RUN_ERROR;
      snprintf(r->error, sizeof r->error, "run failed: %s", tec_rt_last_error());
      return;
    }
    if (dt > b->o.timeout) {
      r->status = TUNE_TIMEOUT;
      snprintf(r->error, sizeof r->error, "a run took %.3g s, over the time-out of %g s", dt, b->o.timeout);
      return;
    }
    tune_note(fd, 'r');
    if (i == 0 && compare(b, b->otype, b->out, r->error, sizeof r->error) != TUNE_OK) {
      r->status = TUNE_WRONG;
      return;
    }
    if (anchored && k % 2 == 0 && (rc = time_anchor(b, &da)) != 0) goto anchor_failed;
    if (k >= 0 && r->ncosts < TUNE_MAX_COSTS) {
      if (anchored) anchor[r->ncosts] = da;
      r->costs[r->ncosts++] = anchored && da > 0 ? dt * b->anchor_base / da : dt;
    }
  }
  r->status = TUNE_OK;
  if (b->anchor && r->ncosts > 0) {
    r->anchor_s = tec_rt_median(anchor, r->ncosts);
    r->anchor_base_s = b->anchor_base;
  }
  return;
anchor_failed:
  r->status = TUNE_RUN_ERROR;
  snprintf(r->error, sizeof r->error, "the anchor (the default config, timed beside the candidate) failed: %s",
           tec_rt_last_error());
}

tune_status tune_bench_ready(tune_bench *b, tec_module *m, const lower_func *f, int64_t index, char *err,
                             size_t errsize) {
  if (prepare(b, m, f, err, errsize) != TUNE_OK) return TUNE_RUN_ERROR;
  double s;
  tune_status st = tune_bench_time(b, m, f, index, 1, &s, err, errsize);
  if (st == TUNE_OK) st = compare(b, b->otype, b->out, err, errsize);
  for (int i = 0; i < b->o.warmup && st == TUNE_OK; i++) st = tune_bench_time(b, m, f, index, 1, &s, err, errsize);
  return st;
}

tune_status tune_bench_time(tune_bench *b, tec_module *m, const lower_func *f, int64_t index, int64_t calls,
                            double *seconds, char *err, size_t errsize) {
  *seconds = 0;
  int32_t rc = time_calls(b, m, f->user_name, index, calls, seconds);
  if (rc != 0) {
    snprintf(err, errsize, "run failed: %s", tec_rt_last_error());
    return TUNE_RUN_ERROR;
  }
  if (*seconds > b->o.timeout) {
    snprintf(err, errsize, "a run took %.3g s, over the time-out of %g s", *seconds, b->o.timeout);
    return TUNE_TIMEOUT;
  }
  return TUNE_OK;
}

void tune_bench_child_measure(tune_bench *b, tec_module *m, const lower_func *f, int64_t index, int fd) {
  tune_meas res;
  measure_here(b, m, f, index, &res, fd);
  char c = 'R';
  if (write(fd, &c, 1) == 1 && write(fd, &res, sizeof res) == (ssize_t)sizeof res) _exit(0);
  _exit(3);
}

/* The parent's side of a measuring child pid reporting on fd (closed here), reaped. */
static void wait_measure(tune_bench *b, pid_t pid, int fd, tune_meas *r) {
  memset(r, 0, sizeof *r);
  /* prepare may be slow (packing); a run is killed at twice the time-out (and a little) */
  double deadline = tune_now() + 10.0 * b->o.timeout + 5.0;
  int done = 0, killed = 0, prepared = 0;
  for (;;) {
    char c;
    int rc = tune_read_by(fd, &c, 1, deadline);
    if (rc < 0) {
      kill(pid, SIGKILL), killed = 1;
      break;
    }
    if (rc == 0) break;
    if (c == 'R') {
      done = tune_read_by(fd, r, sizeof *r, tune_now() + 5.0) == 1;
      break;
    }
    prepared = 1;
    deadline = tune_now() + 2.0 * b->o.timeout + 0.5; /* a run that returns is timed by the child itself */
  }
  close(fd);
  int st = 0;
  tune_reap((int)pid, &st);
  if (killed) {
    memset(r, 0, sizeof *r);
    r->status = TUNE_TIMEOUT;
    snprintf(r->error, sizeof r->error, "%s did not finish within the time-out of %g s (killed)",
             prepared ? "a run" : "prepare", b->o.timeout);
  } else if (!done) {
    memset(r, 0, sizeof *r);
    r->status = TUNE_RUN_ERROR;
    if (WIFSIGNALED(st))
      snprintf(r->error, sizeof r->error, "the measuring process died of signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
      snprintf(r->error, sizeof r->error, "the measuring process exited with status %d before reporting", WEXITSTATUS(st));
  }
}

void tune_bench_wait(tune_bench *b, int pid, int fd, tune_trial *t) {
  tune_meas r;
  wait_measure(b, (pid_t)pid, fd, &r);
  tune_trial_set(t, (tune_status)r.status, r.error, r.ncosts, r.costs);
  t->anchor_s = r.anchor_s, t->anchor_base_s = r.anchor_base_s;
}

static void measure_forked(tune_bench *b, tec_module *m, const lower_func *f, int64_t index, tune_meas *r) {
  int fd;
  memset(r, 0, sizeof *r);
  int pid = tune_fork_reporter("measuring process", &fd, r->error, sizeof r->error);
  if (pid < 0) {
    r->status = TUNE_RUN_ERROR;
    return;
  }
  if (pid == 0) tune_bench_child_measure(b, m, f, index, fd);
  wait_measure(b, pid, fd, r);
}

void tune_bench_measure(tune_bench *b, tec_module *m, const lower_func *f, tune_trial *t) {
  tune_meas r;
  if (b->o.fork) measure_forked(b, m, f, t->index, &r);
  else measure_here(b, m, f, t->index, &r, -1);
  tune_trial_set(t, (tune_status)r.status, r.error, r.ncosts, r.costs);
  t->anchor_s = r.anchor_s, t->anchor_base_s = r.anchor_base_s;
}

void tune_trial_set(tune_trial *t, tune_status s, const char *error, int ncosts, const double *costs) {
  if (ncosts > TUNE_MAX_COSTS) ncosts = TUNE_MAX_COSTS;
  if (ncosts < 0) ncosts = 0;
  t->status = s;
  t->ncosts = ncosts;
  memset(t->costs, 0, sizeof t->costs);
  if (ncosts) memcpy(t->costs, costs, sizeof *costs * (size_t)ncosts);
  t->error = tune_strdup(s == TUNE_OK ? "" : error);
  t->median = 0;
  if (s == TUNE_OK && ncosts > 0) {
    double v[TUNE_MAX_COSTS];
    memcpy(v, t->costs, sizeof v);
    t->median = tec_rt_median(v, ncosts);
  }
}

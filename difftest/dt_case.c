/* dt_case.c — one case: build the program in a fresh ctx, apply primitives (drawn or
 * replayed), then lower, build, run and compare.
 *
 * Buffers are laid out so that misbehaviour shows:
 *
 *   | 64-byte canary | data (n floats) | canary up to the 64-byte round-up + 256 bytes |
 *
 * inputs are checked unchanged afterwards, outputs start as NaN (an element never written
 * cannot match), and every canary byte must still be 0xA5 (nothing written out of bounds).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tec/tec.h"
#include "difftest/dt_internal.h"

#define DT_TOL 1e-4
#define DT_FRONT 64
#define DT_BACK 256
#define DT_CANARY 0xA5

double dt_run_limit_s = 0;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The calling thread's CPU seconds: the hang rule's clock for lower + build (which run on
 * the calling thread: tec starts no thread to lower or build), which other tenants of a shared
 * machine (or CI's other test) cannot stretch as they stretch the wall clock. It counts only
 * this thread's work: time blocked or asleep (a lock never released) and work on other
 * threads are not seen, so a build stuck that way is not a "hang" here; with isolate the
 * child's alarm (dt_run.c, DT_TIMEOUT_S of wall time for the whole case) stops it, without
 * isolate nothing does. */
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct dt_buf {
  unsigned char *block;
  float *data;
  int64_t n;
  size_t bytes; /* of the whole block */
} dt_buf;

static int buf_new(dt_buf *b, int64_t n) {
  size_t body = ((size_t)n * sizeof(float) + 63) / 64 * 64;
  b->n = n;
  b->bytes = DT_FRONT + body + DT_BACK;
  b->block = aligned_alloc(64, b->bytes);
  if (!b->block) return -1;
  memset(b->block, DT_CANARY, b->bytes);
  b->data = (float *)(b->block + DT_FRONT);
  return 0;
}

/* 1 if every canary byte is intact. */
static int buf_canaries_ok(const dt_buf *b, int64_t *where) {
  size_t lo = DT_FRONT, hi = DT_FRONT + (size_t)b->n * sizeof(float);
  for (size_t i = 0; i < b->bytes; i++) {
    if (i == lo) i = hi;
    if (i < b->bytes && b->block[i] != DT_CANARY) {
      *where = (int64_t)i - DT_FRONT;
      return 0;
    }
  }
  return 1;
}

static void fail(dt_result *res, const char *cls, const char *fmt, const char *a) {
  res->outcome = DT_FAIL;
  snprintf(res->fail_class, sizeof res->fail_class, "%s", cls);
  snprintf(res->msg, sizeof res->msg, fmt, a ? a : "");
}

/* Refusals that are never right here: the tester passes every placeholder and the output,
 * and an internal invariant failing (TEC_ERR_INTERNAL) is a bug whatever the schedule. */
static const char *const wrong_errors[] = {
    "internal error", "is read but is neither an argument nor computed",
    "is computed, but not by this schedule", "is passed twice", NULL};

/* 1 if a call's error is a heap allocation of 2^32 bytes or more that failed: a schedule may
 * legally ask for that (storage_align(i, 2^31, 0) pads every row to 2^31 floats), and the
 * call refusing it with a message is a refusal, not a failure. A negative or overflowing count
 * ("cannot allocate ...") stays a failure. */
static int huge_request(const char *e) {
  const char *at = e ? strstr(e, "out of memory allocating ") : NULL;
  if (!at) return 0;
  long long n = strtoll(at + strlen("out of memory allocating "), NULL, 10);
  return n >= (1LL << 32);
}

/* Lowers, builds and runs; compares with ref; copies the output to got if given. */
static void exec(dt_instance *in, const float *ref, float *got, dt_result *res) {
  tec_ctx *ctx = in->ctx;
  res->outcome = DT_OK;
  tec_ctx_clear_error(ctx);
  double t0 = cpu_s();
  lower_func *f = tec_lower(in->sched, "dt_case", in->nargs, in->args);
  tec_module *m = f ? tec_build(ctx, 1, &f, in->target) : NULL;
  res->build_s = cpu_s() - t0;
  if (res->build_s > DT_BUILD_LIMIT_S) {
    char w[64];
    snprintf(w, sizeof w, "%.1f s", res->build_s);
    fail(res, "hang", "lower + build took %s of CPU, more than 10 s", w);
    return;
  }
  if (!m) {
    const char *e = tec_ctx_error(ctx);
    if (!e || !*e) {
      fail(res, "no message", "tec_%s failed without an error message", f ? "build" : "lower");
      return;
    }
    res->outcome = DT_REFUSED_BUILD;
    snprintf(res->msg, sizeof res->msg, "%s", e);
    int wrong = tec_ctx_error_kind(ctx) == TEC_ERR_INTERNAL; /* a bug whatever the schedule */
    for (int k = 0; wrong_errors[k]; k++) wrong |= strstr(e, wrong_errors[k]) != NULL;
    if (wrong) {
      res->outcome = DT_FAIL;
      snprintf(res->fail_class, sizeof res->fail_class, "wrong error");
      snprintf(res->msg, sizeof res->msg, "refused with an error that cannot apply (the "
               "arguments are every input and the output): %s", e);
    }
    return;
  }
  if (tec_ctx_error(ctx)) {
    fail(res, "stray error", "lower/build succeeded but left an error: %s", tec_ctx_error(ctx));
    return;
  }
  dt_buf b[8] = {0};
  DLTensor t[8];
  DLTensor *tp[8];
  float *orig[8] = {0};
  int n = in->nargs, out = n - 1;
  for (int k = 0; k < n; k++) {
    int64_t cnt = dt_numel(in, k);
    if (buf_new(&b[k], cnt) || !(orig[k] = malloc(sizeof(float) * (size_t)(cnt ? cnt : 1)))) {
      fail(res, "harness", "out of memory%s", NULL);
      goto done;
    }
    if (k < out) {
      dt_fill_input(b[k].data, cnt, in->program, in->variant, k);
      memcpy(orig[k], b[k].data, sizeof(float) * (size_t)cnt);
    } else {
      for (int64_t i = 0; i < cnt; i++) b[k].data[i] = NAN;
    }
    t[k] = tec_dl_view(b[k].data, TEC_F32, in->ndim[k], in->shape[k]);
    tp[k] = &t[k];
  }
  /* twice: a second call must not depend on what the first left behind (prepared
   * constants, accumulators) */
  for (int call = 0; call < 2; call++) {
    for (int64_t i = 0; call && i < b[out].n; i++) b[out].data[i] = NAN;
    double t1 = now_s();
    int32_t rc = tec_module_run(m, "dt_case", n, tp);
    if (call) res->run_s = now_s() - t1; /* the second: prepare and first touches are done */
    if (rc != 0) {
      const char *e = tec_rt_last_error();
      if (huge_request(e)) { /* what the schedule asks is more memory than there is */
        res->outcome = DT_REFUSED_BUILD;
        snprintf(res->msg, sizeof res->msg, "refused at run time: %s", e);
        goto done;
      }
      fail(res, "runtime error", "the built function returned an error: %s", e);
      goto done;
    }
    if (call && dt_run_limit_s > 0 && res->run_s > dt_run_limit_s) {
      char w[96];
      snprintf(w, sizeof w, "%.3f s, more than %.3f s", res->run_s, dt_run_limit_s);
      fail(res, "hang", "a call took %s (10x the unscheduled program's + 1 s)", w);
      goto done;
    }
  }
  for (int k = 0; k < n; k++) {
    int64_t where;
    if (!buf_canaries_ok(&b[k], &where)) {
      char w[160];
      snprintf(w, sizeof w, "'%s' (byte %lld from its start)", in->args[k]->name, (long long)where);
      fail(res, "out-of-bounds write", "the function wrote outside buffer %s", w);
      goto done;
    }
    if (k < out && memcmp(orig[k], b[k].data, sizeof(float) * (size_t)b[k].n) != 0) {
      fail(res, "input written", "the function changed its input '%s'", in->args[k]->name);
      goto done;
    }
  }
  int64_t at;
  double err = dt_compare(b[out].data, ref, b[out].n, &at);
  if (got) memcpy(got, b[out].data, sizeof(float) * (size_t)b[out].n);
  if (!(err <= DT_TOL)) {
    res->outcome = DT_FAIL;
    snprintf(res->fail_class, sizeof res->fail_class, "mismatch");
    int unwritten = 0;
    for (int64_t i = 0; i < b[out].n; i++) unwritten += isnan(b[out].data[i]) && !isnan(ref[i]);
    snprintf(res->msg, sizeof res->msg,
             "wrong result: %s[%lld] = %g, expected %g (relative error %g > %g); %d of %lld "
             "elements never written", in->args[out]->name, (long long)at,
             (double)b[out].data[at], (double)ref[at], err, DT_TOL, unwritten,
             (long long)b[out].n);
  }
done:
  for (int k = 0; k < n; k++) free(b[k].block), free(orig[k]);
}

void dt_case_exec(dt_instance *in, const float *ref, dt_result *res) { exec(in, ref, NULL, res); }

/* Used by dt_run for the reference itself: runs the unscheduled instance against plain C
 * and hands back its output. */
void dt_case_reference(dt_instance *in, const float *plain, float *got, dt_result *res) {
  exec(in, plain, got, res);
}

int dt_instance_check(dt_instance *in, char *msg, size_t cap) {
  if (!in) return 2;
  int out = in->nargs - 1;
  const float *x[8];
  float *buf[8] = {0}, *ref = NULL;
  int rc = 2;
  for (int k = 0; k < out; k++) {
    int64_t cnt = dt_numel(in, k);
    if (!(buf[k] = malloc(sizeof(float) * (size_t)cnt))) goto done;
    dt_fill_input(buf[k], cnt, in->program, in->variant, k);
    x[k] = buf[k];
  }
  if (!(ref = malloc(sizeof(float) * (size_t)dt_numel(in, out)))) goto done;
  dt_programs[in->program].reference(in->variant, x, ref);
  dt_result res;
  memset(&res, 0, sizeof res);
  exec(in, ref, NULL, &res);
  rc = res.outcome == DT_FAIL ? 2 : res.outcome == DT_REFUSED_BUILD ? 1 : 0;
  if (msg && cap) snprintf(msg, cap, "%s%s%s", res.fail_class, *res.fail_class ? ": " : "", res.msg);
done:
  for (int k = 0; k < out; k++) free(buf[k]);
  free(ref);
  return rc;
}

void dt_case_run(dt_program prog, int variant, const char *target, dt_rng *r, int max_prims,
                 const dt_prim *prims, int nprims, const float *ref, dt_text *text,
                 dt_result *res) {
  tec_ctx *ctx = tec_ctx_new();
  dt_instance *in = ctx ? dt_instance_new(ctx, prog, variant) : NULL;
  if (!in) {
    fail(res, "harness", "cannot build the program: %s", ctx ? tec_ctx_error(ctx) : "no ctx");
    tec_ctx_free(ctx);
    return;
  }
  in->target = target;
  static dt_state st; /* large; one case at a time */
  dt_state_init(&st, in, text);
  int n = prims ? nprims : (int)dt_rng_int(r, 1, max_prims);
  if (n > DT_MAX_PRIMS) n = DT_MAX_PRIMS;
  res->nprims = 0;
  int broken = 0;
  for (int i = 0; i < n && !broken; i++) {
    dt_prim p;
    if (prims)
      p = prims[i];
    else
      dt_draw(&st, r, &p);
    res->prims[res->nprims++] = p;
    res->text_len = text->len;
    broken = dt_prim_apply(&st, &p) < 0;
  }
  res->calls = st.prims;
  res->refused = st.refused;
  dt_text_printf(text, "char msg[1024];\nint rc = dt_instance_check(p, msg, sizeof msg); /* 0: "
                       "matches the plain C loops */\ntec_ctx_free(ctx);\n");
  res->text_len = text->len;
  if (broken) {
    fail(res, "primitive protocol", "a primitive %s", st.bad);
  } else {
    exec(in, ref, NULL, res);
    if (res->outcome == DT_OK && st.refused) res->outcome = DT_REFUSED_PRIM;
  }
  tec_ctx_free(ctx);
}

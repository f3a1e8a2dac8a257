/* test_alloc_sweep.c — every heap allocation tec's own code makes during a lower + build + run
 * fails once, in turn: the call that needed it must fail with an out-of-memory error (or
 * succeed and compute the right numbers), never crash, and leak nothing.
 *
 * (A failure that a pass survives by falling back, the program still right, must still fail the
 * call with an out-of-memory error: te.h's rule, asserted here.)
 *
 * The test executable interposes malloc, calloc, realloc, aligned_alloc and posix_memalign
 * (and free, to track what is live). An allocation counts as tec's when its caller's address
 * lies in this executable's text — tec is linked statically into it; libLLVM, libc and Check
 * are elsewhere (libLLVM cannot survive a failed allocation: it aborts by design, so it is left
 * alone). While armed, the interposer numbers tec's allocations (a lower + build + run of a
 * small conv makes about 4600, from a few dozen call sites); the sweep fails, once each, the
 * first and the last allocation made at every call site. After each point the ctx and module are freed and every allocation tec made
 * during the point must have been freed again, and the process's heap in use (mallinfo2, all
 * callers: LLVM objects left behind on an error path show here) must not grow across the
 * sweep. The arena-level budget sweep (tec_ctx_set_alloc_budget) is test_errors.c's; this one
 * reaches the allocations outside the arena (pass state, codegen tables, module records, the
 * runtime's buffers).
 *
 * Not built with the sanitizers (ASan and TSan own malloc). */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include "testutil.h"
#include "convref.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
extern char __executable_start[], etext[];

/* ---- the interposer ---- */

#define LIVE_CAP 65536
static int armed;             /* counting tec's allocations */
static long count;            /* tec's allocations since armed */
static long fail_at = -1;     /* the number that fails */
static int failed;            /* it did */
static void *live[LIVE_CAP];  /* tec's allocations made while armed and not freed */
static long nlive, live_overflow;

static int from_tec(const void *ret) {
  return (const char *)ret >= __executable_start && (const char *)ret < etext;
}

#define SITES_CAP 65536
static const void *site_of[SITES_CAP]; /* the caller of each numbered allocation (clean pass) */

static int should_fail(const void *ret) {
  if (!armed || !from_tec(ret)) return 0;
  long k = count++;
  if (fail_at < 0 && k < SITES_CAP) site_of[k] = ret;
  if (k == fail_at) {
    failed = 1;
    return 1;
  }
  return 0;
}

/* live: an open-addressing set of pointers (LLVM frees millions of blocks: untrack is O(1)) */
#define TOMB ((void *)1)
static size_t slot_of(const void *p) { return ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 48; }

static void track(const void *ret, void *p) {
  if (!p || !armed || !from_tec(ret)) return;
  if (nlive >= LIVE_CAP / 2) {
    live_overflow++;
    return;
  }
  size_t i = slot_of(p) & (LIVE_CAP - 1);
  while (live[i] && live[i] != TOMB) i = (i + 1) & (LIVE_CAP - 1);
  live[i] = p;
  nlive++;
}

static void untrack(void *p) {
  if (!p || !nlive) return;
  for (size_t i = slot_of(p) & (LIVE_CAP - 1); live[i]; i = (i + 1) & (LIVE_CAP - 1))
    if (live[i] == p) {
      live[i] = TOMB;
      nlive--;
      return;
    }
}

static void clear_live(void) { memset(live, 0, sizeof live), nlive = 0; }

void *malloc(size_t n) {
  const void *ret = __builtin_return_address(0);
  if (should_fail(ret)) return NULL;
  void *p = __libc_malloc(n);
  track(ret, p);
  return p;
}

void *calloc(size_t a, size_t b) {
  const void *ret = __builtin_return_address(0);
  if (should_fail(ret)) return NULL;
  void *p = __libc_calloc(a, b);
  track(ret, p);
  return p;
}

void *realloc(void *q, size_t n) {
  const void *ret = __builtin_return_address(0);
  if (should_fail(ret)) return NULL; /* q stays valid, as realloc promises */
  void *p = __libc_realloc(q, n);
  if (p) {
    untrack(q);
    track(ret, p);
  }
  return p;
}

void *aligned_alloc(size_t align, size_t n) {
  const void *ret = __builtin_return_address(0);
  if (should_fail(ret)) return NULL;
  void *p = __libc_memalign(align, n);
  track(ret, p);
  return p;
}

int posix_memalign(void **out, size_t align, size_t n) {
  const void *ret = __builtin_return_address(0);
  if (should_fail(ret)) return 12; /* ENOMEM */
  void *p = __libc_memalign(align, n);
  if (!p) return 12;
  track(ret, p);
  *out = p;
  return 0;
}

void free(void *p) {
  untrack(p);
  __libc_free(p);
}

/* ---- one lower + build + run of a conv layer (prepare split, parallel, vectorized) ---- */

static const topi_conv2d problem = {
    .n = 1, .c_in = 16, .h = 10, .w = 10, .c_out = 32, .kh = 3, .kw = 3, .stride_h = 1,
    .stride_w = 1, .pad_h = 1, .pad_w = 1, .groups = 1,
    .in_layout = {.kind = TOPI_NCHWC, .block = 16}, .out_layout = {.kind = TOPI_NCHWC, .block = 16},
    .epi = {.bias = 1, .act = TOPI_ACT_RELU}};

typedef struct inputs {
  DLTensor t[4];
  float *want; /* the output in the output's layout */
  int64_t nout;
} inputs;

static void make_inputs(inputs *in) {
  int64_t xs[5], os[5], oh, ow;
  cr_shape(problem.in_layout, 1, problem.c_in, problem.h, problem.w, xs);
  ck_assert_int_eq(topi_conv2d_out_hw(NULL, &problem, &oh, &ow), 0);
  cr_shape(problem.out_layout, 1, problem.c_out, oh, ow, os);
  int64_t nx = problem.c_in * problem.h * problem.w;
  float *plain = malloc(sizeof(float) * (size_t)nx);
  for (int64_t i = 0; i < nx; i++) plain[i] = (float)((i * 37 % 101) - 50) / 50.0f;
  in->t[0] = tu_zeros(TEC_F32, 5, xs);
  cr_to_layout(problem.in_layout, 1, problem.c_in, problem.h, problem.w, plain, in->t[0].data);
  in->t[1] = tu_rand_f32(4, (int64_t[]){problem.c_out, problem.c_in, 3, 3}, 3);
  in->t[2] = tu_rand_f32(1, (int64_t[]){problem.c_out}, 4);
  in->t[3] = tu_zeros(TEC_F32, 5, os);
  in->nout = tec_dl_numel(&in->t[3]);
  int64_t no = problem.c_out * oh * ow;
  float *ref = malloc(sizeof(float) * (size_t)no);
  cr_conv2d(&problem, plain, in->t[1].data, in->t[2].data, NULL, ref);
  in->want = calloc((size_t)in->nout, sizeof(float));
  cr_to_layout(problem.out_layout, 1, problem.c_out, oh, ow, ref, in->want);
  free(plain);
  free(ref);
}

typedef enum outcome { OK_RIGHT, FAIL_LOWER, FAIL_BUILD, FAIL_RUN } outcome;

/* One point: armed from ctx creation to the end of the run. msg gets what failed and why. */
static outcome one_point(inputs *in, long fail, char *msg, size_t cap) {
  count = 0, fail_at = fail, failed = 0;
  clear_live();
  armed = 1;
  outcome o = OK_RIGHT;
  tec_ctx *ctx = tec_ctx_new();
  if (!ctx) {
    armed = 0;
    snprintf(msg, cap, "tec_ctx_new: out of memory (it returned NULL)");
    return FAIL_LOWER;
  }
  topi_op op;
  lower_func *f = NULL;
  tec_module *m = NULL;
  if (topi_instantiate(ctx, topi_template_find("conv2d_nchwc"), &problem, NULL, &op) != 0 ||
      !(f = tec_lower(op.sched, "conv", op.nargs, op.args))) {
    o = FAIL_LOWER;
    snprintf(msg, cap, "lower (kind %d): %s", (int)tec_ctx_error_kind(ctx), tec_ctx_error(ctx));
    if (tec_ctx_error_kind(ctx) != TEC_ERR_OOM) o = -1;
  } else if (!(m = tec_build(ctx, 1, &f, NULL))) {
    o = FAIL_BUILD;
    snprintf(msg, cap, "build (kind %d): %s", (int)tec_ctx_error_kind(ctx), tec_ctx_error(ctx));
    if (tec_ctx_error_kind(ctx) != TEC_ERR_OOM) o = -1;
  } else {
    memset(in->t[3].data, 0, sizeof(float) * (size_t)in->nout);
    DLTensor *args[4] = {&in->t[0], &in->t[1], &in->t[2], &in->t[3]};
    if (tec_module_run(m, "conv", 4, args) != 0) {
      o = FAIL_RUN;
      snprintf(msg, cap, "run: %s", tec_rt_last_error());
      if (!strstr(tec_rt_last_error(), "out of memory")) o = -1;
    } else {
      double e = tu_max_err(in->t[3].data, in->want, in->nout);
      if (e > 1e-4) {
        o = -1;
        snprintf(msg, cap, "succeeded with wrong numbers: error %g", e);
      }
    }
    tec_module_free(m);
  }
  tec_ctx_free(ctx);
  armed = 0;
  return o;
}

START_TEST(every_allocation_fails_once) {
  inputs in;
  make_inputs(&in);
  char msg[512];
  /* a clean pass: the allocation count, the reference check, and a warm-up (LLVM's statics) */
  outcome o = one_point(&in, -1, msg, sizeof msg);
  ck_assert_msg(o == OK_RIGHT, "clean run: %s", msg);
  long n = count;
  ck_assert_int_eq(nlive, 0);
  ck_assert_int_gt(n, 20); /* the sweep reaches outside the arena: pass state, codegen, run */
  one_point(&in, -1, msg, sizeof msg);
  ck_assert_int_eq(count, n); /* deterministic: the same allocations each time */
  ck_assert_int_le(n, SITES_CAP);
  /* the points: the first and the last allocation of every call site */
  long *points = calloc((size_t)n, sizeof *points), np = 0, nsites = 0;
  for (long k = 0; k < n; k++) {
    int first = 1, last = 1;
    for (long j = 0; j < k && first; j++) first = site_of[j] != site_of[k];
    for (long j = k + 1; j < n && last; j++) last = site_of[j] != site_of[k];
    nsites += first;
    if (first || last) points[np++] = k;
  }
  size_t heap0 = mallinfo2().uordblks;
  int per[4] = {0};
  long step = tu_emulated() ? 5 : 1;
  for (long pi = 0; pi < np; pi += step) {
    long k = points[pi];
    msg[0] = 0;
    o = one_point(&in, k, msg, sizeof msg);
    ck_assert_msg(failed, "point %ld of %ld was not reached (the run took another path)", k, n);
    ck_assert_msg((int)o >= 0, "allocation %ld of %ld failed: %s", k, n, msg);
    ck_assert_msg(nlive == 0 && live_overflow == 0,
                  "allocation %ld of %ld failed (%s): %ld of tec's allocations were not freed",
                  k, n, msg, nlive);
    per[o]++;
    /* a pass that falls back when an allocation fails must still fail the call (te.h): a
     * swallowed failure would be a silent change of the program (addr2line -e test_alloc_sweep
     * OFFSET names the site) */
    ck_assert_msg(o != OK_RIGHT, "allocation %ld of %ld failed and the calls succeeded: called "
                  "from offset %#lx of the executable", k, n,
                  (unsigned long)((const char *)site_of[k] - __executable_start));
    if (o != OK_RIGHT) tu_assert_contains(msg, "out of memory");
  }
  size_t heap1 = mallinfo2().uordblks;
  /* everything before the point is freed on the error path, LLVM's objects included: the heap
   * in use does not grow with the number of points (a leaked LLVM module is tens of KB) */
  ck_assert_msg(heap1 <= heap0 + 256 * 1024, "heap in use grew %zu -> %zu bytes over %ld points",
                heap0, heap1, n);
  fprintf(stderr, "alloc sweep: %ld allocations from %ld call sites, %ld points failed; "
                  "failed in lower %d, build %d, run %d; survived with the right numbers %d; "
                  "heap %zu -> %zu bytes\n", n, nsites, np, per[FAIL_LOWER], per[FAIL_BUILD],
          per[FAIL_RUN], per[OK_RIGHT], heap0, heap1);
  free(points);
  ck_assert_int_gt(per[FAIL_LOWER], 0);
  ck_assert_int_gt(per[FAIL_BUILD], 0);
  for (int i = 0; i < 4; i++) tec_dl_free(&in.t[i]);
  free(in.want);
}
END_TEST

Suite *alloc_sweep_suite(void) {
  Suite *s = suite_create("alloc_sweep");
  TCase *t = tcase_create("sweep");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, every_allocation_fails_once);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(alloc_sweep_suite()); }

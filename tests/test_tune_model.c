/* test_tune_model.c — the tuner's cost model (include/tec/tune_model.h): features of two
 * hand-written matmul schedules against numbers worked out by hand (vector lanes, the bytes a
 * register tile touches), their determinism and bad input; the XGBoost model on synthetic rows
 * whose ranking is a known function of the features (pairwise accuracy on held-out rows);
 * annealing over conv2d_nchwc's space for a ResNet layer towards a known maximum (fewer
 * scores than the space, deterministic, never a visited index); and transfer: a model fit on
 * measured rows of one dense workload ranking another's configs (tests/data/tune_dense_*.txt,
 * times measured once by scripts/tune_table.sh: the timing is not redone here). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "tec/tune_model.h"
#include "testutil.h"

/* the target of the tables (an AVX-512 host) and of the spaces below, on every build machine */
#define X86 "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"

#ifndef TEC_TEST_DATA_DIR
#define TEC_TEST_DATA_DIR "tests/data"
#endif

static int feature(const char *name) {
  for (int i = 0; i < TUNE_NFEATURES; i++)
    if (strcmp(tune_feature_name(i), name) == 0) return i;
  ck_abort_msg("no feature %s", name);
  return -1;
}

/* ---------------- features ---------------- */

static te_tensor *gA, *gB;
static const ir_expr *mm_body(tec_ctx *c, const ir_expr *const *idx, void *u) {
  const ir_expr *k = te_reduce_axis_n(c, "k", 64);
  return te_sum(ir_mul(TE_AT(gA, idx[0], k), TE_AT(gB, k, idx[1])), 1, &k, NULL);
}

/* C = A B, 64 x 64 x 64, tiled ti x tj: for io, jo, k, ii (unrolled), ji (vectorized when vec). */
static lower_func *matmul(tec_ctx *ctx, int64_t ti, int64_t tj, int vec) {
  gA = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 64, 64));
  gB = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, 64, 64));
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, 64, 64), .body = mm_body});
  ck_assert_msg(C != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *st = sch_stage_of(s, C);
  sch_iter *io, *jo, *ii, *ji, *k = sch_reduce_axis(st, 0);
  OK(ctx, sch_tile(st, sch_axis(st, 0), sch_axis(st, 1), ti, tj, &io, &jo, &ii, &ji));
  OK(ctx, sch_reorder(st, 5, (sch_iter *[]){io, jo, k, ii, ji}));
  OK(ctx, sch_unroll(st, ii));
  if (vec) OK(ctx, sch_vectorize(st, ji));
  lower_func *f = tec_lower(s, "mm", 3, (te_tensor *[]){gA, gB, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  return f;
}

static float lg(double x) { return (float)log2(1 + x); }

START_TEST(features_matmul) {
  tec_ctx *ctx = tec_ctx_new();
  float scalar[TUNE_NFEATURES], vec[TUNE_NFEATURES], big[TUNE_NFEATURES];
  ck_assert_int_eq(tune_features(ctx, matmul(ctx, 4, 16, 0), scalar, TUNE_NFEATURES), TUNE_NFEATURES);
  ck_assert_int_eq(tune_features(ctx, matmul(ctx, 4, 16, 1), vec, TUNE_NFEATURES), TUNE_NFEATURES);
  ck_assert_int_eq(tune_features(ctx, matmul(ctx, 8, 32, 1), big, TUNE_NFEATURES), TUNE_NFEATURES);
  /* the same work: 2 * 64^3 flops, all multiply-adds */
  for (int i = 0; i < 3; i++) {
    const float *x = i == 0 ? scalar : i == 1 ? vec : big;
    ck_assert_float_eq_tol(x[feature("flops")], lg(2.0 * 64 * 64 * 64), 1e-4);
    ck_assert_float_eq_tol(x[feature("fma")], lg(64.0 * 64 * 64), 1e-4);
    ck_assert_float_eq(x[feature("parallel_loops")], 0);
  }
  /* vectorized: 16 lanes, every flop in vector ops; serial: scalar (ji stays a loop) */
  ck_assert_float_eq(scalar[feature("max_lanes")], lg(1));
  ck_assert_float_eq(scalar[feature("vector_fraction")], 0);
  ck_assert_float_eq_tol(vec[feature("max_lanes")], lg(16), 1e-6);
  ck_assert_float_eq(vec[feature("vector_fraction")], 1);
  ck_assert_float_eq_tol(big[feature("max_lanes")], lg(32), 1e-6);
  /* the innermost loop of the vector schedules is k (ii unrolled, ji a vector); one iteration
   * touches the C tile (ti x tj floats), ti floats of A and tj floats of B */
  ck_assert_float_eq_tol(vec[feature("L0.extent")], lg(64), 1e-6);
  ck_assert_float_eq_tol(vec[feature("L0.buf0_bytes")], lg(4 * 16 * 4), 1e-5);
  ck_assert_float_eq_tol(vec[feature("L0.buf1_bytes")], lg(16 * 4), 1e-5);
  ck_assert_float_eq_tol(vec[feature("L0.buf2_bytes")], lg(4 * 4), 1e-5);
  ck_assert_float_eq_tol(vec[feature("L0.bytes")], lg(4 * 16 * 4 + 16 * 4 + 4 * 4), 1e-5);
  ck_assert_float_eq_tol(vec[feature("L0.buf1_reuse")], lg(4), 1e-5); /* B's row: ti rows */
  ck_assert_float_eq_tol(big[feature("L0.buf0_bytes")], lg(8 * 32 * 4), 1e-5);
  ck_assert_float_eq_tol(big[feature("L0.bytes")], lg(8 * 32 * 4 + 32 * 4 + 8 * 4), 1e-5);
  /* one iteration of jo (level 1) runs the whole k loop: the C tile, 64 x ti of A, 64 x tj of B */
  ck_assert_float_eq_tol(vec[feature("L1.bytes")], lg(4 * 16 * 4 + 64 * 4 * 4 + 64 * 16 * 4), 1e-5);
  ck_assert_float_eq_tol(vec[feature("L1.extent")], lg(64 / 16), 1e-6);
  ck_assert_float_eq_tol(vec[feature("L2.extent")], lg(64 / 4), 1e-6);
  ck_assert_float_eq(vec[feature("L3.extent")], 0); /* no fourth loop */
  /* the scalar schedule keeps ji as the innermost loop: 16 of it per k step */
  ck_assert_float_eq_tol(scalar[feature("L0.extent")], lg(16), 1e-6);
  ck_assert_float_eq_tol(scalar[feature("L1.extent")], lg(64), 1e-6);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(features_deterministic) {
  float a[TUNE_NFEATURES], b[TUNE_NFEATURES];
  tec_ctx *c1 = tec_ctx_new(), *c2 = tec_ctx_new();
  lower_func *f = matmul(c1, 4, 16, 1);
  ck_assert_int_eq(tune_features(c1, f, a, TUNE_NFEATURES), TUNE_NFEATURES);
  ck_assert_int_eq(tune_features(c1, f, b, TUNE_NFEATURES), TUNE_NFEATURES);
  ck_assert_mem_eq(a, b, sizeof a);
  ck_assert_int_eq(tune_features(c2, matmul(c2, 4, 16, 1), b, TUNE_NFEATURES), TUNE_NFEATURES);
  ck_assert_mem_eq(a, b, sizeof a);
  for (int i = 0; i < TUNE_NFEATURES; i++) ck_assert(isfinite(a[i]) && a[i] >= 0);
  tec_ctx_free(c1), tec_ctx_free(c2);
}
END_TEST

START_TEST(features_bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  float out[TUNE_NFEATURES + 1];
  out[TUNE_NFEATURES] = 42;
  ck_assert_int_eq(tune_features(ctx, NULL, out, TUNE_NFEATURES), -1);
  assert_err(ctx, "tune_features: a lowered function with a body is required");
  tec_ctx_clear_error(ctx);
  lower_func *f = matmul(ctx, 4, 16, 1);
  ck_assert_int_eq(tune_features(ctx, f, out, TUNE_NFEATURES - 1), -1);
  char want[128];
  snprintf(want, sizeof want, "tune_features: out must hold TUNE_NFEATURES = %d floats, got %d",
           TUNE_NFEATURES, TUNE_NFEATURES - 1);
  assert_err(ctx, want);
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_features(ctx, f, NULL, TUNE_NFEATURES), -1);
  snprintf(want, sizeof want, "tune_features: out must hold TUNE_NFEATURES = %d floats, got 0",
           TUNE_NFEATURES);
  assert_err(ctx, want);
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_features(NULL, f, out, TUNE_NFEATURES), -1);
  /* a cap larger than needed is fine; nothing past TUNE_NFEATURES is written */
  ck_assert_int_eq(tune_features(ctx, f, out, TUNE_NFEATURES + 1), TUNE_NFEATURES);
  ck_assert_float_eq(out[TUNE_NFEATURES], 42);
  ck_assert_ptr_null(tune_feature_name(-1));
  ck_assert_ptr_null(tune_feature_name(TUNE_NFEATURES));
  for (int i = 0; i < TUNE_NFEATURES; i++)
    for (int j = 0; j < i; j++) ck_assert_str_ne(tune_feature_name(i), tune_feature_name(j));
  tec_ctx_free(ctx);
}
END_TEST

/* ---------------- the model ---------------- */

static uint64_t rng_state;
static double urand(void) { /* xorshift64*, [0, 1) */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* Fraction of pairs (i, j) with y[i] != y[j] that score orders as y does. */
static double pairwise_accuracy(const double *y, const double *score, int n) {
  long good = 0, all = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) {
      if (y[i] == y[j]) continue;
      all++;
      good += (y[i] > y[j]) == (score[i] > score[j]) && score[i] != score[j];
    }
  return all ? (double)good / all : 0;
}

START_TEST(model_unavailable_or_bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  tune_model *m = tune_model_new(ctx, 1);
  if (!tune_model_available()) {
    ck_assert_ptr_null(m);
    assert_err(ctx, "tune_model_new: this tec was built without XGBoost (the cost model needs it: "
                    "install libxgboost-dev and reconfigure; cross builds never use it)");
    tec_ctx_free(ctx);
    return;
  }
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  float x[3 * TUNE_NFEATURES] = {0};
  double y[3] = {1, 2, 3}, s[3];
  ck_assert_int_eq(tune_model_predict(m, x, 3, s), -1);
  assert_err(ctx, "tune_model_predict: the model is not fitted yet (tune_model_fit first)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_model_fit(m, x, y, 1), -1);
  assert_err(ctx, "tune_model_fit: need at least 2 rows to rank, got 1");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_model_fit(m, NULL, y, 3), -1);
  assert_err(ctx, "tune_model_fit: x, gflops and group_rows are required");
  tec_ctx_clear_error(ctx);
  y[1] = -1;
  ck_assert_int_eq(tune_model_fit(m, x, y, 3), -1);
  assert_err(ctx, "tune_model_fit: gflops[1] = -1 (must be finite and >= 0)");
  tec_ctx_clear_error(ctx);
  y[1] = NAN;
  ck_assert_int_eq(tune_model_fit(m, x, y, 3), -1);
  assert_err(ctx, "tune_model_fit: gflops[1] = nan (must be finite and >= 0)");
  tec_ctx_clear_error(ctx);
  y[1] = 2;
  ck_assert_int_eq(tune_model_fit_groups(m, x, y, 3, (int[]){1, 1}, 2), -1);
  assert_err(ctx, "tune_model_fit: the groups hold 2 rows, not n = 3");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_model_fit_groups(m, x, y, 3, (int[]){3, 0}, 2), -1);
  assert_err(ctx, "tune_model_fit: group 1 has 0 rows (must be >= 1)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(tune_model_fit(m, x, y, 3), 0);
  ck_assert_int_eq(tune_model_predict(m, x, 3, NULL), -1);
  assert_err(ctx, "tune_model_predict: x, score and n >= 0 are required");
  tune_model_free(m);
  tune_model_free(NULL);
  ck_assert_ptr_null(tune_model_new(NULL, 1));
  tec_ctx_free(ctx);
}
END_TEST

/* Synthetic rows: 20 features uniform in [0, 4) (the rest 0), y a known function of five of
 * them with an interaction and a peak, so ranking it needs more than one linear split. */
#define SYN_TRAIN 300
#define SYN_TEST 200
static double syn_y(const float *x) {
  return 10 + 2 * x[0] + x[1] * x[2] - (x[3] - 2) * (x[3] - 2) + (x[4] > 1 ? 3 : 0);
}
static void syn_rows(float *x, double *y, int n) {
  memset(x, 0, sizeof *x * (size_t)n * TUNE_NFEATURES);
  for (int i = 0; i < n; i++) {
    float *r = x + (size_t)i * TUNE_NFEATURES;
    for (int j = 0; j < 20; j++) r[j * 5] = (float)(4 * urand());
    float key[5] = {r[0], r[5], r[10], r[15], r[20]};
    y[i] = syn_y(key);
  }
}

START_TEST(model_synthetic) {
  if (!tune_model_available()) return; /* model_unavailable_or_bad_input checks the refusal */
  tec_ctx *ctx = tec_ctx_new();
  float *x = malloc(sizeof *x * (SYN_TRAIN + SYN_TEST) * TUNE_NFEATURES);
  double y[SYN_TRAIN + SYN_TEST], s1[SYN_TEST], s2[SYN_TEST];
  ck_assert_ptr_nonnull(x);
  rng_state = 88172645463325252ull;
  syn_rows(x, y, SYN_TRAIN + SYN_TEST);
  const float *xt = x + (size_t)SYN_TRAIN * TUNE_NFEATURES;
  tune_model *m = tune_model_new(ctx, 7), *m2 = tune_model_new(ctx, 7);
  ck_assert_msg(m && m2, "%s", tec_ctx_error(ctx));
  OK(ctx, tune_model_fit(m, x, y, SYN_TRAIN));
  OK(ctx, tune_model_predict(m, xt, SYN_TEST, s1));
  double acc = pairwise_accuracy(y + SYN_TRAIN, s1, SYN_TEST);
  printf("synthetic: held-out pairwise accuracy %.3f\n", acc);
  /* measured 0.911 (60 rounds of depth 3); a constant or random score gets 0.5 */
  ck_assert_msg(acc > 0.85, "held-out pairwise accuracy %.3f", acc);
  /* the same rows and seed: the same scores */
  OK(ctx, tune_model_fit(m2, x, y, SYN_TRAIN));
  OK(ctx, tune_model_predict(m2, xt, SYN_TEST, s2));
  ck_assert_mem_eq(s1, s2, sizeof s1);
  /* refitting replaces the model: fit on 2 rows, the held-out accuracy falls to chance */
  OK(ctx, tune_model_fit(m2, x, y, 2));
  OK(ctx, tune_model_predict(m2, xt, SYN_TEST, s2));
  ck_assert_double_lt(pairwise_accuracy(y + SYN_TRAIN, s2, SYN_TEST), 0.7);
  tune_model_free(m), tune_model_free(m2);
  free(x);
  tec_ctx_free(ctx);
}
END_TEST

/* ---------------- annealing ---------------- */

typedef struct peak {
  const tune_space *sp;
  int64_t target;  /* the index of the maximum */
  long calls, scored;
  unsigned char *seen;
  int repeat;      /* an index scored twice */
} peak;

/* -(sum over knobs of (digit - target digit)^2): the maximum 0 at target alone */
static int peak_score(void *u, const int64_t *idx, int n, double *out) {
  peak *p = u;
  p->calls++;
  for (int i = 0; i < n; i++) {
    if (p->seen[idx[i]]) p->repeat = 1;
    p->seen[idx[i]] = 1, p->scored++;
    int64_t a = idx[i], b = p->target;
    double s = 0;
    for (int j = 0; j < p->sp->nknobs; j++) {
      int64_t nv = p->sp->knobs[j].nvalues, d = a % nv - b % nv;
      s -= (double)(d * d);
      a /= nv, b /= nv;
    }
    out[i] = s;
  }
  return 0;
}

static void resnet_space(tec_ctx *ctx, tune_space *sp) {
  topi_conv2d p = {.n = 1, .c_in = 128, .h = 28, .w = 28, .c_out = 128, .kh = 3, .kw = 3,
                   .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1,
                   .in_layout = {.kind = TOPI_NCHWC, .block = 16},
                   .out_layout = {.kind = TOPI_NCHWC, .block = 16}};
  OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &p, tec_target_parse(ctx, X86), sp));
}

START_TEST(anneal_peak) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  resnet_space(ctx, &sp);
  sp.rule = NULL, sp.pruned = 0; /* the bowl over the knobs' whole product (the rule: below) */
  int64_t size = tune_space_size(&sp);
  ck_assert_int_gt(size, 4 * TUNE_ANNEAL_EXHAUSTIVE);
  peak p = {.sp = &sp, .target = size * 2 / 3 + 1};
  p.seen = calloc((size_t)size, 1);
  int64_t best[8], best2[8];
  int n = tune_anneal(&sp, peak_score, &p, NULL, 11, 8, best);
  ck_assert_int_eq(n, 8);
  ck_assert_int_eq(best[0], p.target);
  ck_assert_int_eq(p.repeat, 0);
  ck_assert_msg(p.scored < size, "scored %ld of %lld", p.scored, (long long)size);
  for (int i = 1; i < n; i++) /* distinct, best first: the rest are neighbours (score -1 or less) */
    for (int j = 0; j < i; j++) ck_assert_int_ne(best[i], best[j]);
  long scored = p.scored;
  /* deterministic for a seed */
  memset(p.seen, 0, (size_t)size), p.scored = 0;
  ck_assert_int_eq(tune_anneal(&sp, peak_score, &p, NULL, 11, 8, best2), 8);
  ck_assert_mem_eq(best, best2, sizeof best);
  ck_assert_int_eq(p.scored, scored);
  /* another seed: the same maximum by another path */
  memset(p.seen, 0, (size_t)size), p.scored = 0;
  ck_assert_int_eq(tune_anneal(&sp, peak_score, &p, NULL, 12, 8, best2), 8);
  ck_assert_int_eq(best2[0], p.target);
  /* visited indices are never proposed: mark the maximum and the first answer's others */
  unsigned char *visited = calloc((size_t)(size + 7) / 8, 1);
  for (int i = 0; i < n; i++) visited[best[i] >> 3] |= (unsigned char)(1 << (best[i] & 7));
  memset(p.seen, 0, (size_t)size), p.scored = 0;
  int n2 = tune_anneal(&sp, peak_score, &p, visited, 11, 8, best2);
  ck_assert_int_eq(n2, 8);
  for (int i = 0; i < n2; i++) {
    ck_assert_msg(!((visited[best2[i] >> 3] >> (best2[i] & 7)) & 1), "visited %lld proposed",
                  (long long)best2[i]);
    for (int j = 0; j < i; j++) ck_assert_int_ne(best2[i], best2[j]);
  }
  printf("anneal: space %lld, scored %ld, %ld calls\n", (long long)size, scored, p.calls);
  free(visited), free(p.seen);
  tec_ctx_free(ctx);
}
END_TEST

/* With the template's rule (registers, unrolled body), anneal proposes only configs in the space,
 * never asks the score of a refused one, and still finds a peak placed inside the space. */
START_TEST(anneal_keeps_to_rule) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  resnet_space(ctx, &sp);
  ck_assert_ptr_nonnull(sp.rule);
  int64_t range = tune_space_range(&sp);
  ck_assert_int_gt(sp.pruned, 0);
  topi_conv2d_nchwc_config c;
  int64_t target = range * 2 / 3 + 1;
  while (tune_space_config(&sp, target, &c) != 0) target++; /* the peak: a config in the space */
  peak p = {.sp = &sp, .target = target};
  p.seen = calloc((size_t)range, 1);
  int64_t best[8];
  int n = tune_anneal(&sp, peak_score, &p, NULL, 11, 8, best);
  ck_assert_int_eq(n, 8);
  for (int i = 0; i < n; i++) ck_assert_int_eq(tune_space_config(&sp, best[i], &c), 0);
  for (int64_t i = 0; i < range; i++) /* nothing outside the space was scored */
    if (p.seen[i]) ck_assert_int_eq(tune_space_config(&sp, i, &c), 0);
  ck_assert_int_eq(best[0], target);
  free(p.seen);
  tec_ctx_free(ctx);
}
END_TEST

static int fail_score(void *u, const int64_t *idx, int n, double *out) {
  (void)u, (void)idx, (void)n, (void)out;
  return -1;
}

START_TEST(anneal_small_and_bad) {
  tec_ctx *ctx = tec_ctx_new();
  topi_dense d = {.m = 8, .n = 16, .k = 8, .const_b = 1};
  tune_space sp;
  OK(ctx, topi_space_of(ctx, "dense", &d, tec_target_parse(ctx, X86), &sp));
  int64_t size = tune_space_size(&sp);
  ck_assert_int_le(size, TUNE_ANNEAL_EXHAUSTIVE); /* scored whole */
  peak p = {.sp = &sp, .target = size - 1};
  p.seen = calloc((size_t)size, 1);
  int64_t out[1024];
  int n = tune_anneal(&sp, peak_score, &p, NULL, 3, 1024, out);
  ck_assert_int_eq(n, size); /* every config, once */
  ck_assert_int_eq(out[0], size - 1);
  ck_assert_int_eq(p.scored, size);
  /* all visited: nothing to propose */
  unsigned char all[(TUNE_ANNEAL_EXHAUSTIVE + 7) / 8];
  memset(all, 0xff, sizeof all);
  ck_assert_int_eq(tune_anneal(&sp, peak_score, &p, all, 3, 4, out), 0);
  /* bad arguments, a failing score */
  ck_assert_int_eq(tune_anneal(NULL, peak_score, &p, NULL, 3, 4, out), -1);
  ck_assert_int_eq(tune_anneal(&sp, NULL, &p, NULL, 3, 4, out), -1);
  ck_assert_int_eq(tune_anneal(&sp, peak_score, &p, NULL, 3, 0, out), -1);
  ck_assert_int_eq(tune_anneal(&sp, peak_score, &p, NULL, 3, 4, NULL), -1);
  ck_assert_int_eq(tune_anneal(&sp, fail_score, NULL, NULL, 3, 4, out), -1);
  ck_assert_int_eq(tune_anneal_with(&sp, peak_score, &p, NULL, 3, 4, out,
                                    &(tune_anneal_opts){.chains = -1}), -1);
  tune_space big;
  resnet_space(ctx, &big);
  ck_assert_int_eq(tune_anneal(&big, fail_score, NULL, NULL, 3, 4, out), -1);
  free(p.seen);
  tec_ctx_free(ctx);
}
END_TEST

/* ---------------- transfer ---------------- */

typedef struct table {
  int n;
  double gflops[128];
  float *x; /* n rows of features */
} table;

/* Reads "gflops index config" lines of a dense workload's table and the features of each
 * config lowered here. */
static void read_table(tec_ctx *ctx, const char *file, const topi_dense *p, table *t) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", TEC_TEST_DATA_DIR, file);
  char *text = tu_read_file(path, NULL);
  ck_assert_msg(text != NULL, "cannot read %s", path);
  topi_decl d;
  tune_space sp;
  OK(ctx, topi_declare(ctx, "dense", p, &d));
  OK(ctx, topi_space_of(ctx, "dense", p, tec_target_parse(ctx, X86), &sp));
  t->n = 0;
  t->x = malloc(sizeof *t->x * 128 * TUNE_NFEATURES);
  topi_dense_config cfg;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#') continue;
    ck_assert_int_lt(t->n, 128);
    double g;
    long long idx;
    int used = 0;
    ck_assert_int_eq(sscanf(line, "%lf %lld %n", &g, &idx, &used), 2);
    OK(ctx, tune_config_parse(ctx, &sp, line + used, &cfg));
    topi_op op;
    OK(ctx, topi_schedule(&d, &cfg, tec_target_parse(ctx, X86), &op));
    lower_func *f = tec_lower(op.sched, "dense", op.nargs, op.args);
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
    ck_assert_int_eq(tune_features(ctx, f, t->x + (size_t)t->n * TUNE_NFEATURES, TUNE_NFEATURES),
                     TUNE_NFEATURES);
    tec_lower_free(f);
    t->gflops[t->n++] = g;
  }
  free(text);
}

START_TEST(model_transfer) {
  if (!tune_model_available()) return;
  tec_ctx *ctx = tec_ctx_new();
  table src, dst;
  read_table(ctx, "tune_dense_256x256x256.txt", &(topi_dense){.m = 256, .n = 256, .k = 256, .const_b = 1}, &src);
  read_table(ctx, "tune_dense_96x384x192.txt", &(topi_dense){.m = 96, .n = 384, .k = 192, .const_b = 1}, &dst);
  ck_assert_int_ge(src.n, 48);
  ck_assert_int_ge(dst.n, 48);
  tune_model *m = tune_model_new(ctx, 1);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  double score[128];
  OK(ctx, tune_model_fit_groups(m, src.x, src.gflops, src.n, &src.n, 1));
  OK(ctx, tune_model_predict(m, dst.x, dst.n, score));
  double acc = pairwise_accuracy(dst.gflops, score, dst.n);
  /* the measured runtimes' order, predicted from the other workload's alone: better than the
   * 0.5 of chance (measured 0.769; the predicted best was the measured 10th of 64) */
  ck_assert_msg(acc > 0.65, "transfer pairwise accuracy %.3f", acc);
  /* the predicted best is in the measured top quarter */
  int top = 0;
  for (int i = 1; i < dst.n; i++) top = score[i] > score[top] ? i : top;
  int better = 0;
  for (int i = 0; i < dst.n; i++) better += dst.gflops[i] > dst.gflops[top];
  ck_assert_msg(better < dst.n / 4, "predicted best is measured #%d of %d", better + 1, dst.n);
  printf("transfer: pairwise accuracy %.3f, predicted best measured #%d of %d\n", acc, better + 1,
         dst.n);
  tune_model_free(m);
  free(src.x), free(dst.x);
  tec_ctx_free(ctx);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("tune_model");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, features_matmul);
  tcase_add_test(tc, features_deterministic);
  tcase_add_test(tc, features_bad_input);
  tcase_add_test(tc, model_unavailable_or_bad_input);
  tcase_add_test(tc, model_synthetic);
  tcase_add_test(tc, anneal_peak);
  tcase_add_test(tc, anneal_small_and_bad);
  tcase_add_test(tc, anneal_keeps_to_rule);
  tcase_add_test(tc, model_transfer);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }

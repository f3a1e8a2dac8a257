/* xgb_model.c — the tuner's cost model: gradient-boosted trees (XGBoost's C API, Debian's
 * libxgboost-dev) ranking configs by their features (tune/features.c), as AutoTVM's XGBTuner
 * does: objective rank:pairwise on gflops normalized by the largest of each group (one group
 * per workload, so rows of other workloads transfer), trees of depth 3, eta 0.3, a fixed
 * number of rounds, one thread and a fixed seed (the same rows give the same model).
 *
 * Each fit builds a new booster from scratch (the data sets are small: hundreds to a few
 * thousand rows). Built without XGBoost (TEC_HAVE_XGBOOST unset: a host without
 * libxgboost-dev, or a cross build), tune_model_new refuses with an error saying what to
 * install; nothing falls back silently.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tec/te.h"
#include "tec/tune_model.h"

#define TUNE_ROUNDS 60

#ifdef TEC_HAVE_XGBOOST
#include <xgboost/c_api.h>

struct tune_model {
  tec_ctx *ctx;
  unsigned seed;
  BoosterHandle booster; /* NULL before the first fit */
};

int tune_model_available(void) { return 1; }

static int xgb_fail(tune_model *m, const char *what) {
  const char *e = XGBGetLastError();
  return tec_ctx_set_error(m->ctx, "tune_model: XGBoost %s failed: %s", what, e && *e ? e : "(no message)"), -1;
}

tune_model *tune_model_new(tec_ctx *ctx, unsigned seed) {
  if (!ctx) return NULL;
  tune_model *m = calloc(1, sizeof *m);
  if (!m) return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune_model_new: out of memory"), NULL;
  m->ctx = ctx, m->seed = seed;
  return m;
}

void tune_model_free(tune_model *m) {
  if (!m) return;
  if (m->booster) XGBoosterFree(m->booster);
  free(m);
}

static int set_params(tune_model *m, BoosterHandle b) {
  char seed[32];
  snprintf(seed, sizeof seed, "%u", m->seed);
  const char *kv[][2] = {{"objective", "rank:pairwise"}, {"max_depth", "3"}, {"eta", "0.3"},
                         {"gamma", "0.0001"}, {"min_child_weight", "1"}, {"subsample", "1"},
                         {"lambda", "1"}, {"alpha", "0"}, {"nthread", "1"}, {"seed", seed},
                         {"verbosity", "0"}, {"tree_method", "exact"}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    if (XGBoosterSetParam(b, kv[i][0], kv[i][1])) return xgb_fail(m, "SetParam");
  return 0;
}

static DMatrixHandle matrix(tune_model *m, const float *x, int n) {
  DMatrixHandle d = NULL;
  if (XGDMatrixCreateFromMat(x, (bst_ulong)n, TUNE_NFEATURES, NAN, &d)) return xgb_fail(m, "DMatrixCreateFromMat"), NULL;
  return d;
}

int tune_model_fit_weighted(tune_model *m, const float *x, const double *gflops, int n,
                            const int *group_rows, const float *group_weight, int ngroups) {
  if (!m) return -1;
  if (!x || !gflops || !group_rows)
    return tec_ctx_set_error(m->ctx, "tune_model_fit: x, gflops and group_rows are required"), -1;
  if (n < 2) return tec_ctx_set_error(m->ctx, "tune_model_fit: need at least 2 rows to rank, got %d", n), -1;
  if (ngroups < 1) return tec_ctx_set_error(m->ctx, "tune_model_fit: need at least 1 group, got %d", ngroups), -1;
  long sum = 0;
  for (int g = 0; g < ngroups; g++) {
    if (group_rows[g] < 1)
      return tec_ctx_set_error(m->ctx, "tune_model_fit: group %d has %d rows (must be >= 1)", g, group_rows[g]), -1;
    sum += group_rows[g];
    if (group_weight && !(isfinite(group_weight[g]) && group_weight[g] > 0))
      return tec_ctx_set_error(m->ctx, "tune_model_fit: group %d has weight %g (must be finite and > 0)", g,
                               (double)group_weight[g]), -1;
  }
  if (sum != n)
    return tec_ctx_set_error(m->ctx, "tune_model_fit: the groups hold %ld rows, not n = %d", sum, n), -1;
  for (int i = 0; i < n; i++)
    if (!isfinite(gflops[i]) || gflops[i] < 0)
      return tec_ctx_set_error(m->ctx, "tune_model_fit: gflops[%d] = %g (must be finite and >= 0)", i, gflops[i]), -1;
  float *y = malloc(sizeof *y * (size_t)n);
  unsigned *groups = malloc(sizeof *groups * (size_t)ngroups);
  if (!y || !groups) {
    free(y), free(groups);
    return tec_ctx_set_error_kind(m->ctx, TEC_ERR_OOM, "tune_model_fit: out of memory"), -1;
  }
  for (int g = 0, r = 0; g < ngroups; r += group_rows[g++]) {
    double mx = 0;
    for (int i = r; i < r + group_rows[g]; i++) mx = gflops[i] > mx ? gflops[i] : mx;
    for (int i = r; i < r + group_rows[g]; i++) y[i] = mx > 0 ? (float)(gflops[i] / mx) : 0.0f;
    groups[g] = (unsigned)group_rows[g];
  }
  int rc = -1;
  DMatrixHandle d = matrix(m, x, n);
  BoosterHandle b = NULL;
  if (!d) goto done;
  if (XGDMatrixSetFloatInfo(d, "label", y, (bst_ulong)n)) { xgb_fail(m, "SetFloatInfo(label)"); goto done; }
  if (XGDMatrixSetUIntInfo(d, "group", groups, (bst_ulong)ngroups)) { xgb_fail(m, "SetUIntInfo(group)"); goto done; }
  if (group_weight && XGDMatrixSetFloatInfo(d, "weight", group_weight, (bst_ulong)ngroups)) {
    xgb_fail(m, "SetFloatInfo(weight)");
    goto done;
  }
  if (XGBoosterCreate(&d, 1, &b)) { xgb_fail(m, "BoosterCreate"); goto done; }
  if (set_params(m, b)) goto done;
  for (int it = 0; it < TUNE_ROUNDS; it++)
    if (XGBoosterUpdateOneIter(b, it, d)) { xgb_fail(m, "UpdateOneIter"); goto done; }
  if (m->booster) XGBoosterFree(m->booster);
  m->booster = b, b = NULL;
  rc = 0;
done:
  if (b) XGBoosterFree(b);
  if (d) XGDMatrixFree(d);
  free(y), free(groups);
  return rc;
}

int tune_model_predict(tune_model *m, const float *x, int n, double *score) {
  if (!m) return -1;
  if (!x || !score || n < 0)
    return tec_ctx_set_error(m->ctx, "tune_model_predict: x, score and n >= 0 are required"), -1;
  if (!m->booster) return tec_ctx_set_error(m->ctx, "tune_model_predict: the model is not fitted yet (tune_model_fit first)"), -1;
  if (n == 0) return 0;
  DMatrixHandle d = matrix(m, x, n);
  if (!d) return -1;
  bst_ulong len = 0;
  const float *res = NULL;
  int rc = 0;
  if (XGBoosterPredict(m->booster, d, 0, 0, 0, &len, &res)) rc = xgb_fail(m, "Predict");
  else if (len != (bst_ulong)n)
    rc = -1, tec_ctx_set_error_kind(m->ctx, TEC_ERR_INTERNAL,
                                    "internal error: tune_model_predict: XGBoost returned %llu scores for %d rows",
                                    (unsigned long long)len, n);
  else
    for (int i = 0; i < n; i++) score[i] = res[i];
  XGDMatrixFree(d);
  return rc;
}

#else /* no XGBoost in this build */

struct tune_model { int unused; };

int tune_model_available(void) { return 0; }

tune_model *tune_model_new(tec_ctx *ctx, unsigned seed) {
  (void)seed;
  if (ctx)
    tec_ctx_set_error(ctx, "tune_model_new: this tec was built without XGBoost (the cost model needs "
                           "it: install libxgboost-dev and reconfigure; cross builds never use it)");
  return NULL;
}
void tune_model_free(tune_model *m) { (void)m; }
int tune_model_fit_weighted(tune_model *m, const float *x, const double *gflops, int n,
                            const int *group_rows, const float *group_weight, int ngroups) {
  (void)m, (void)x, (void)gflops, (void)n, (void)group_rows, (void)group_weight, (void)ngroups;
  return -1;
}
int tune_model_predict(tune_model *m, const float *x, int n, double *score) {
  (void)m, (void)x, (void)n, (void)score;
  return -1;
}

#endif

int tune_model_fit_groups(tune_model *m, const float *x, const double *gflops, int n,
                          const int *group_rows, int ngroups) {
  return tune_model_fit_weighted(m, x, gflops, n, group_rows, NULL, ngroups);
}

int tune_model_fit(tune_model *m, const float *x, const double *gflops, int n) {
  int rows = n;
  return tune_model_fit_groups(m, x, gflops, n, &rows, 1);
}

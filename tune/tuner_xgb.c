/* tuner_xgb.c — the model-based proposer (AutoTVM's XGBTuner): until enough trials have
 * features it proposes at random; then each round it fits the cost model (tune_model_fit on
 * the features of the lowered candidates measured so far, failed ones at 0 GFLOP/s) and asks
 * simulated annealing over the space's config indices (tune_anneal) for the unvisited configs
 * of highest predicted GFLOP/s; a candidate is scored by lowering it in a scratch ctx (once:
 * its features are cached by config index) and predicting on its features.
 *
 * Each round EXPLORE_PER_ROUND of the k go to the knob values tried least, set into the
 * model's best configs (tune_explore_fill, explore.c, says why).
 *
 * Transfer (tune_options.transfer, rows loaded by transfer.c): the model is fitted on the
 * other workloads' rows, one group each, before this workload has any, so the first batch
 * after the default is the model's, not random; every later fit keeps those groups and adds
 * this workload's rows as one more, weighted to count at least as much as all of them (the
 * pairwise objective draws a pair per row, so 6 workloads of 64 rows would otherwise outvote
 * this one's 8 at the start and still its 64 at the end).
 *
 * Without XGBoost (libxgboost-dev not found at configure time) tune_model_new refuses and so
 * does this proposer, naming the package. Deterministic for a seed given the same
 * measurements (the model is trained on measured times, so a different machine or load may
 * change the order after the random start). */
#include <stdlib.h>
#include <string.h>
#include "tec/tune_model.h"
#include "tune/internal.h"

#define WARMUP_TRIALS 8
#define EXPLORE_PER_ROUND 2

/* features by config index, so annealing lowers each candidate once over the whole run */
typedef struct fcache {
  int64_t *keys; /* -1: empty */
  float *feats;  /* cap * TUNE_NFEATURES */
  int64_t cap, n;
} fcache;

typedef struct xgb_state {
  tune_model *model;
  tec_ctx *ctx;
  const tune_task *task;
  fcache cache;
  int failed; /* scoring failures (the candidate scores 0) */
} xgb_state;

static int64_t slot_of(const fcache *c, int64_t key) {
  uint64_t s = (uint64_t)key, h = tune_rng_next(&s) & (uint64_t)(c->cap - 1);
  while (c->keys[h] >= 0 && c->keys[h] != key) h = (h + 1) & (uint64_t)(c->cap - 1);
  return (int64_t)h;
}

/* the cached features of key, or NULL */
static const float *cache_get(const fcache *c, int64_t key) {
  if (!c->cap) return NULL;
  int64_t h = slot_of(c, key);
  return c->keys[h] == key ? c->feats + h * TUNE_NFEATURES : NULL;
}

static void cache_put(fcache *c, int64_t key, const float *x) {
  if (2 * (c->n + 1) > c->cap) {
    fcache g = {.cap = c->cap ? 2 * c->cap : 1024};
    g.keys = malloc(sizeof *g.keys * (size_t)g.cap);
    g.feats = malloc(sizeof *g.feats * (size_t)g.cap * TUNE_NFEATURES);
    if (!g.keys || !g.feats) {
      free(g.keys), free(g.feats);
      return; /* not cached: lowered again next time */
    }
    memset(g.keys, 0xff, sizeof *g.keys * (size_t)g.cap);
    for (int64_t i = 0; i < c->cap; i++)
      if (c->keys[i] >= 0) {
        int64_t h = slot_of(&g, c->keys[i]);
        g.keys[h] = c->keys[i];
        memcpy(g.feats + h * TUNE_NFEATURES, c->feats + i * TUNE_NFEATURES, sizeof *g.feats * TUNE_NFEATURES);
      }
    g.n = c->n;
    free(c->keys), free(c->feats);
    *c = g;
  }
  int64_t h = slot_of(c, key);
  if (c->keys[h] != key) c->n++;
  c->keys[h] = key;
  memcpy(c->feats + h * TUNE_NFEATURES, x, sizeof *x * TUNE_NFEATURES);
}

int tune_task_features(const tune_task *task, tec_ctx *ctx, const lower_func *f, float *out, int cap) {
  return task->features ? task->features(ctx, f, out, cap) : tune_features(ctx, f, out, cap);
}

float *tune_xgb_features(const tune_task *task, tec_ctx *ctx, const lower_func *f, int *n) {
  float *x = malloc(sizeof *x * TUNE_NFEATURES);
  *n = 0;
  if (!x) return NULL;
  int got = tune_task_features(task, ctx, f, x, TUNE_NFEATURES);
  if (got != TUNE_NFEATURES) {
    free(x);
    tec_ctx_clear_error(ctx);
    return NULL;
  }
  *n = got;
  return x;
}

/* the predicted GFLOP/s of n candidates: lowered one by one in a scratch ctx */
static int score(void *u, const int64_t *idx, int n, double *out) {
  xgb_state *s = u;
  float *x = calloc((size_t)n * TUNE_NFEATURES, sizeof *x);
  if (!x) return -1;
  for (int i = 0; i < n; i++) {
    float *xi = x + (size_t)i * TUNE_NFEATURES;
    const float *hit = cache_get(&s->cache, idx[i]);
    if (hit) {
      memcpy(xi, hit, sizeof *xi * TUNE_NFEATURES);
      continue;
    }
    tec_ctx *c = tec_ctx_new();
    lower_func *f = c ? s->task->lower(s->task, c, idx[i], NULL, NULL) : NULL;
    if (f && tune_task_features(s->task, c, f, xi, TUNE_NFEATURES) == TUNE_NFEATURES) cache_put(&s->cache, idx[i], xi);
    else memset(xi, 0, sizeof *xi * TUNE_NFEATURES), s->failed++;
    tec_ctx_free(c);
  }
  int rc = tune_model_predict(s->model, x, n, out);
  free(x);
  return rc;
}

/* out[n..k) filled with uniform draws of free indices (tune_draw_free: the random tuner's) */
static int random_fill(tune_proposer *p, const tune_history *h, int k, int64_t *out, int n) {
  for (int64_t x; n < k && (x = tune_draw_free(h, &p->rng, out, n)) >= 0;) out[n++] = x;
  return n;
}

/* Fits the model on the transfer rows (one group per workload, weight 1 each) and this
 * workload's rows with features (one more group when there are 2 or more, weighing at least as much as
 * all the transfer rows together). 0, or -1 with an error. */
static int fit(xgb_state *s, tec_ctx *ctx, const tune_history *h, int nf) {
  const tune_prior *pr = h->prior && h->prior->ngroups ? h->prior : NULL;
  int np = pr ? pr->n : 0, own = nf >= 2 ? nf : 0, ng = (pr ? pr->ngroups : 0) + (own > 0);
  float *x = malloc(sizeof *x * (size_t)(np + own + 1) * TUNE_NFEATURES);
  double *y = malloc(sizeof *y * (size_t)(np + own + 1));
  int *rows = malloc(sizeof *rows * (size_t)(ng + 1));
  float *w = malloc(sizeof *w * (size_t)(ng + 1));
  if (!x || !y || !rows || !w) {
    free(x), free(y), free(rows), free(w);
    return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
  }
  int g = 0, r = 0;
  if (pr) {
    memcpy(x, pr->x, sizeof *x * (size_t)np * TUNE_NFEATURES);
    memcpy(y, pr->y, sizeof *y * (size_t)np);
    for (; g < pr->ngroups; g++) rows[g] = pr->group_rows[g], w[g] = 1.0f;
    r = np;
  }
  for (int i = 0; own && i < h->ntrials; i++) {
    const tune_trial *t = &h->trials[i];
    if (!t->features) continue;
    memcpy(x + (size_t)r * TUNE_NFEATURES, t->features, sizeof *x * TUNE_NFEATURES);
    y[r++] = t->status == TUNE_OK ? t->gflops : 0.0;
  }
  if (own) rows[g] = own, w[g++] = np > own ? (float)np / (float)own : 1.0f;
  int rc = tune_model_fit_weighted(s->model, x, y, r, rows, w, g);
  free(x), free(y), free(rows), free(w);
  return rc;
}

static int xgb_next(tune_proposer *p, tec_ctx *ctx, const tune_history *h, int k, int64_t *out) {
  xgb_state *s = p->state;
  s->task = h->task;
  int nf = 0;
  for (int i = 0; i < h->ntrials; i++) nf += h->trials[i].features != NULL;
  int prior = h->prior && h->prior->ngroups > 0; /* transfer: the model from the first batch on */
  if ((nf < WARMUP_TRIALS && !prior) || !h->task->space->config_size) return random_fill(p, h, k, out, 0);
  int64_t *top = malloc(sizeof *top * (size_t)k);
  if (!top) return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
  int rc = fit(s, ctx, h, nf);
  int n = rc != 0 ? -1
                  : tune_anneal(h->task->space, score, s, h->visited->bitmap,
                                (unsigned)tune_rng_next(&p->rng), k, top);
  if (n < 0) {
    free(top);
    return -1;
  }
  /* anneal may return visited ones when the space has no bitmap: dropped */
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!tune_visited_has(h->visited, top[i])) top[m++] = top[i];
  /* the model's best k - EXPLORE_PER_ROUND (all k when k is that small), the explorations,
   * then the model's next best and random ones for what is left */
  int keep = k > EXPLORE_PER_ROUND ? k - EXPLORE_PER_ROUND : k, got = 0;
  for (int i = 0; i < m && got < keep; i++) out[got++] = top[i];
  got = tune_explore_fill(h, top, m, out, got, k - got);
  for (int i = 0; i < m && got < k; i++)
    if (!tune_taken(h, out, got, top[i])) out[got++] = top[i];
  free(top);
  return random_fill(p, h, k, out, got);
}

static void xgb_free(tune_proposer *p) {
  xgb_state *s = p->state;
  if (s) tune_model_free(s->model), free(s->cache.keys), free(s->cache.feats);
  free(s), free(p);
}

tune_proposer *tune_proposer_xgb(tec_ctx *ctx, unsigned seed) {
  tune_proposer *p = calloc(1, sizeof *p);
  xgb_state *s = calloc(1, sizeof *s);
  if (!p || !s) {
    free(p), free(s);
    tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
    return NULL;
  }
  s->ctx = ctx;
  if (!(s->model = tune_model_new(ctx, seed))) {
    free(p), free(s);
    return NULL;
  }
  p->name = "xgb", p->learns = 1, p->next = xgb_next, p->free = xgb_free, p->state = s;
  p->rng = 0x7ec0000000000000ull ^ seed ^ 0x5bd1e995u;
  return p;
}

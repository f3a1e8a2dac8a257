/* anneal.c — tune_anneal: simulated annealing over a template's knob space (mixed-radix config
 * indices, knob 0 fastest, as tune_space_config numbers them), maximizing a score the caller
 * computes for a batch of indices at once (the cost model's prediction), as AutoTVM's
 * SimulatedAnnealingOptimizer does:
 *
 *   chains start at random indices; every step each chain proposes a neighbour (one knob moved
 *   to another of its legal values), all proposals are scored in one call, and a chain moves
 *   when the score rises or with probability exp(delta / (scale * T)), T falling linearly from
 *   t0 to 0, scale the spread of the first batch's scores;
 *   every index scored for the first time is a candidate for the best k not yet visited (so
 *   the answer holds distinct indices: a score is cached and never asked twice);
 *   the run stops after `steps` steps, when the best k have not changed for `early_stop` steps,
 *   or when the whole space has been scored; then hill climbing from the best index scored
 *   (all its one-knob neighbours, the best taken while it improves, at most 16 rounds) makes
 *   the answer a local maximum. Small spaces are scored whole instead.
 *
 * Defaults (16 chains, 50 steps, early stop 10, t0 0.05), measured on the single maximum of a
 * quadratic bowl over conv2d_nchwc's 43008 configs (a ResNet layer): found from 20 seeds of 20,
 * scoring 694 configs on average (32 x 100 steps: 20 of 20, 1900; without the final hill
 * climbing 32 x 100 found it from 11 of 20; AutoTVM's 128 chains x 500 steps from temperature
 * 1, here 64 x 500 with t0 1, from 1 seed in 5 after scoring about 10 k). Scoring a config
 * costs a lowering (85 ms for that layer's typical config), so the number scored is what
 * matters.
 *
 * The generator is splitmix64 seeded from `seed`: one seed, one sequence of proposals. Memory
 * is malloc'd and freed before returning.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tec/tune_model.h"

typedef struct cache {
  int64_t *keys;   /* -1: empty */
  double *vals;
  size_t cap, n;
} cache;

typedef struct anneal {
  const tune_space *sp;
  int64_t size;
  int (*score)(void *u, const int64_t *idx, int n, double *out);
  void *u;
  const unsigned char *visited;
  uint64_t rng;
  cache c;
  int k, ntop;
  int64_t *top_idx;  /* the best ntop unvisited, best first */
  double *top_score;
  int top_changed;
  int64_t best_idx;  /* the best scored, visited or not (-1: none yet) */
  double best_score;
  int64_t *pend;     /* indices to score in this batch */
  double *pend_out;
  int npend, cappend;
} anneal;

static uint64_t next_u64(anneal *a) { /* splitmix64 */
  uint64_t z = (a->rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int64_t rand_below(anneal *a, int64_t n) { return (int64_t)(next_u64(a) % (uint64_t)n); }
static double rand_unit(anneal *a) { return (double)(next_u64(a) >> 11) / 9007199254740992.0; }

static size_t slot(const cache *c, int64_t key) {
  uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
  size_t i = (size_t)(h >> 17) & (c->cap - 1);
  while (c->keys[i] != -1 && c->keys[i] != key) i = (i + 1) & (c->cap - 1);
  return i;
}

static int cache_grow(cache *c) {
  size_t cap = c->cap ? 2 * c->cap : 1024;
  int64_t *keys = malloc(sizeof *keys * cap);
  double *vals = malloc(sizeof *vals * cap);
  if (!keys || !vals) return free(keys), free(vals), -1;
  memset(keys, 0xff, sizeof *keys * cap); /* -1 */
  cache old = *c;
  c->keys = keys, c->vals = vals, c->cap = cap;
  for (size_t i = 0; i < old.cap; i++)
    if (old.keys[i] != -1) {
      size_t s = slot(c, old.keys[i]);
      c->keys[s] = old.keys[i], c->vals[s] = old.vals[i];
    }
  free(old.keys), free(old.vals);
  return 0;
}

static int cache_get(const cache *c, int64_t key, double *v) {
  if (!c->cap) return 0;
  size_t s = slot(c, key);
  if (c->keys[s] != key) return 0;
  *v = c->vals[s];
  return 1;
}

static int cache_put(cache *c, int64_t key, double v) {
  if (2 * (c->n + 1) > c->cap && cache_grow(c)) return -1;
  size_t s = slot(c, key);
  if (c->keys[s] != key) c->keys[s] = key, c->n++;
  c->vals[s] = v;
  return 0;
}

static int is_visited(const anneal *a, int64_t i) {
  return a->visited && (a->visited[i >> 3] >> (i & 7)) & 1;
}

/* 1 if index i is in the space: the template's rule (tune_space.rule), if any, accepts it */
static int allowed(const anneal *a, int64_t i) { return tune_space_allows(a->sp, i); }

/* better: a higher score, then the smaller index */
static int better(double s1, int64_t i1, double s2, int64_t i2) {
  return s1 > s2 || (s1 == s2 && i1 < i2);
}

static void top_offer(anneal *a, int64_t idx, double s) {
  if (is_visited(a, idx) || isnan(s)) return;
  if (a->ntop == a->k && !better(s, idx, a->top_score[a->k - 1], a->top_idx[a->k - 1])) return;
  int i = a->ntop < a->k ? a->ntop++ : a->k - 1;
  while (i > 0 && better(s, idx, a->top_score[i - 1], a->top_idx[i - 1])) {
    a->top_idx[i] = a->top_idx[i - 1], a->top_score[i] = a->top_score[i - 1];
    i--;
  }
  a->top_idx[i] = idx, a->top_score[i] = s;
  a->top_changed = 1;
}

/* Scores idx[0..n) into out, asking the caller only for indices not scored before and in the
 * space (one the rule refuses scores NaN: never a candidate, never moved to). */
static int eval(anneal *a, const int64_t *idx, int n, double *out) {
  a->npend = 0;
  for (int i = 0; i < n; i++) {
    double v;
    if (cache_get(&a->c, idx[i], &v)) continue;
    if (!allowed(a, idx[i])) {
      if (cache_put(&a->c, idx[i], NAN)) return -1;
      continue;
    }
    int dup = 0;
    for (int j = 0; j < a->npend && !dup; j++) dup = a->pend[j] == idx[i];
    if (!dup) a->pend[a->npend++] = idx[i];
  }
  if (a->npend) {
    if (a->score(a->u, a->pend, a->npend, a->pend_out)) return -1;
    for (int j = 0; j < a->npend; j++) {
      if (cache_put(&a->c, a->pend[j], a->pend_out[j])) return -1;
      top_offer(a, a->pend[j], a->pend_out[j]);
      if (!isnan(a->pend_out[j]) &&
          (a->best_idx < 0 || better(a->pend_out[j], a->pend[j], a->best_score, a->best_idx)))
        a->best_idx = a->pend[j], a->best_score = a->pend_out[j];
    }
  }
  for (int i = 0; i < n; i++)
    if (!cache_get(&a->c, idx[i], &out[i])) return -1;
  return 0;
}

/* One knob of idx moved to another of its legal values: half the time to an adjacent one (a
 * knob's values ascend, so this is a small step: a tile one size up or down), else to any. */
static int64_t neighbour(anneal *a, int64_t idx) {
  const tune_space *sp = a->sp;
  int movable = 0;
  for (int j = 0; j < sp->nknobs; j++) movable += sp->knobs[j].nvalues > 1;
  int pick = (int)rand_below(a, movable);
  int64_t radix = 1;
  for (int j = 0; j < sp->nknobs; j++) {
    int64_t nv = sp->knobs[j].nvalues;
    if (nv > 1 && pick-- == 0) {
      int64_t d = (idx / radix) % nv, nd;
      if (next_u64(a) & 1) { /* the next smaller or larger legal value (values ascend) */
        nd = d == 0 ? 1 : d == nv - 1 ? nv - 2 : (next_u64(a) & 1) ? d + 1 : d - 1;
      } else { /* any other value */
        nd = rand_below(a, nv - 1);
        if (nd >= d) nd++;
      }
      return idx + (nd - d) * radix;
    }
    radix *= nv;
  }
  return idx;
}

/* Hill climbing from the best scored index: all its one-knob neighbours scored (in batches),
 * the best of them taken while it improves. Makes the answer a local maximum of the score. */
static int polish(anneal *a, int rounds) {
  const tune_space *sp = a->sp;
  int64_t n = 0;
  for (int j = 0; j < sp->nknobs; j++) n += sp->knobs[j].nvalues - 1;
  if (n < 1) return 0;
  int64_t *nb = malloc(sizeof *nb * (size_t)n);
  double *ns = malloc(sizeof *ns * (size_t)n);
  int rc = nb && ns ? 0 : -1;
  for (int r = 0; r < rounds && rc == 0 && a->best_idx >= 0; r++) {
    int64_t at = a->best_idx, radix = 1, m = 0;
    for (int j = 0; j < sp->nknobs; j++) {
      int64_t nv = sp->knobs[j].nvalues, d = (at / radix) % nv;
      for (int64_t v = 0; v < nv; v++)
        if (v != d) nb[m++] = at + (v - d) * radix;
      radix *= nv;
    }
    for (int64_t i = 0; i < m && rc == 0; i += a->cappend) {
      int cnt = (int)(m - i < a->cappend ? m - i : a->cappend);
      rc = eval(a, nb + i, cnt, ns + i);
    }
    if (a->best_idx == at) break; /* no neighbour is better */
  }
  free(nb), free(ns);
  return rc;
}

static int run(anneal *a, const tune_anneal_opts *o) {
  int batch = o->chains;
  a->cappend = batch > TUNE_ANNEAL_EXHAUSTIVE ? batch : TUNE_ANNEAL_EXHAUSTIVE;
  a->pend = malloc(sizeof *a->pend * (size_t)a->cappend);
  a->pend_out = malloc(sizeof *a->pend_out * (size_t)a->cappend);
  if (!a->pend || !a->pend_out) return -1;
  if (a->size <= TUNE_ANNEAL_EXHAUSTIVE) { /* small: score every unvisited config */
    int64_t all[TUNE_ANNEAL_EXHAUSTIVE];
    double out[TUNE_ANNEAL_EXHAUSTIVE];
    int n = 0;
    for (int64_t i = 0; i < a->size; i++)
      if (!is_visited(a, i) && allowed(a, i)) all[n++] = i;
    return eval(a, all, n, out);
  }
  if (batch < 1) return -1;
  size_t nb = (size_t)batch;
  int64_t *cur = malloc(sizeof(int64_t) * nb), *prop = malloc(sizeof(int64_t) * nb);
  double *cur_s = malloc(sizeof(double) * nb), *prop_s = malloc(sizeof(double) * nb);
  int rc = -1;
  if (!cur || !prop || !cur_s || !prop_s) goto done;
  for (int i = 0; i < batch; i++) /* chains start in the space (a few draws, then any) */
    for (int d = 0; d < 64 && (d == 0 || !allowed(a, cur[i])); d++) cur[i] = rand_below(a, a->size);
  if (eval(a, cur, batch, cur_s)) goto done;
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < batch; i++)
    if (isfinite(cur_s[i])) lo = fmin(lo, cur_s[i]), hi = fmax(hi, cur_s[i]);
  double scale = (hi > lo ? hi - lo : 1.0) * o->t0;
  int quiet = 0;
  for (int step = 0; step < o->steps && quiet < o->early_stop && (int64_t)a->c.n < a->size; step++) {
    double t = 1.0 - (double)step / o->steps;
    for (int i = 0; i < batch; i++) prop[i] = neighbour(a, cur[i]);
    a->top_changed = 0;
    if (eval(a, prop, batch, prop_s)) goto done;
    quiet = a->top_changed ? 0 : quiet + 1;
    for (int i = 0; i < batch; i++) {
      double d = prop_s[i] - cur_s[i];
      if (d >= 0 || (t > 0 && rand_unit(a) < exp(d / (scale * t)))) cur[i] = prop[i], cur_s[i] = prop_s[i];
    }
  }
  rc = polish(a, 16);
done:
  free(cur), free(prop), free(cur_s), free(prop_s);
  return rc;
}

int tune_anneal_with(const tune_space *sp,
                     int (*score)(void *u, const int64_t *idx, int n, double *out), void *u,
                     const unsigned char *visited, unsigned seed, int k, int64_t *out_idx,
                     const tune_anneal_opts *opts) {
  if (!sp || !score || k < 1 || !out_idx || sp->nknobs < 0 || (sp->nknobs && !sp->knobs)) return -1;
  int64_t size = tune_space_range(sp); /* indices: the knobs' product, refused ones included */
  if (size < 1 || size == INT64_MAX || tune_space_size(sp) < 1) return -1;
  tune_anneal_opts o = {16, 50, 10, 0.05};
  if (opts) {
    if (opts->chains < 0 || opts->steps < 0 || opts->early_stop < 0 || !(opts->t0 >= 0)) return -1;
    if (opts->t0 > 0) o.t0 = opts->t0;
    if (opts->chains) o.chains = opts->chains;
    if (opts->steps) o.steps = opts->steps;
    if (opts->early_stop) o.early_stop = opts->early_stop;
  }
  anneal a = {.sp = sp, .size = size, .best_idx = -1, .score = score, .u = u, .visited = visited, .k = k,
              .rng = 0x5eed0000ull ^ ((uint64_t)seed << 32 | seed)};
  a.top_idx = malloc(sizeof *a.top_idx * (size_t)k);
  a.top_score = malloc(sizeof *a.top_score * (size_t)k);
  int rc = a.top_idx && a.top_score ? run(&a, &o) : -1;
  if (rc == 0) {
    memcpy(out_idx, a.top_idx, sizeof *out_idx * (size_t)a.ntop);
    rc = a.ntop;
  }
  free(a.top_idx), free(a.top_score), free(a.pend), free(a.pend_out);
  free(a.c.keys), free(a.c.vals);
  return rc;
}

int tune_anneal(const tune_space *sp, int (*score)(void *u, const int64_t *idx, int n, double *out),
                void *u, const unsigned char *visited, unsigned seed, int k, int64_t *out_idx) {
  return tune_anneal_with(sp, score, u, visited, seed, k, out_idx, NULL);
}

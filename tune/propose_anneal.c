/* propose_anneal.c — "anneal": simulated annealing on measured speeds, no model.
 *
 * k chains (k: the batch size) walk the space. Chain 0 stands at the default (the tuner's
 * first trial), the others start at random unvisited configs in the first round; then every
 * round each chain proposes one neighbour of where it stands (one knob moved to another legal
 * value: half the time an adjacent one, else any; 32 random draws, then the first free one in
 * knob order), unvisited and distinct within the batch. When the neighbour's trial comes back
 * the chain moves to it if it is faster, or else with probability
 * exp(-(g_cur - g_new) / (g_best * T)) (g: GFLOP/s; a failed candidate is never moved to), T
 * falling geometrically from 0.3 by 0.8 per round to 0.01. A chain with no unvisited neighbour
 * restarts at a random unvisited config (tune_draw_free). The generator is the tuner's
 * (tune_rng_*, from the seed); as the moves follow the measured speeds, the trial order is the
 * seed's only for equal measurements.
 *
 * This is the "annealing" of AutoTVM-style comparisons with no cost model (the model tuner,
 * tuner_xgb.c, anneals over predictions instead of measurements). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tune/internal.h"

typedef struct chain {
  int64_t at;        /* where it stands (-1: not started) */
  double g;          /* its speed */
  int64_t pending;   /* its proposal in flight (-1: none) */
} chain;

typedef struct sa_state {
  int k;
  chain *c;
  int seen;          /* trials already read back */
  int rounds;
  double best;       /* best GFLOP/s so far */
} sa_state;

static double unit(uint64_t *s) { return (double)(tune_rng_next(s) >> 11) / 9007199254740992.0; }

static int64_t neighbour(const tune_space *sp, uint64_t *rng, int64_t idx) {
  int movable = 0;
  for (int j = 0; j < sp->nknobs; j++) movable += sp->knobs[j].nvalues > 1;
  if (!movable) return idx;
  int pick = (int)tune_rng_below(rng, movable);
  int64_t radix = 1;
  for (int j = 0; j < sp->nknobs; j++) {
    int64_t nv = sp->knobs[j].nvalues, d, nd;
    if (nv > 1 && pick-- == 0) {
      d = (idx / radix) % nv;
      if (tune_rng_next(rng) & 1) /* an adjacent value (values ascend) */
        nd = d == 0 ? 1 : d == nv - 1 ? nv - 2 : (tune_rng_next(rng) & 1) ? d + 1 : d - 1;
      else if ((nd = tune_rng_below(rng, nv - 1)) >= d) nd++;
      return idx + (nd - d) * radix;
    }
    radix *= nv;
  }
  return idx;
}

/* The first unvisited one-knob neighbour of idx, knob by knob, value by value (-1: none). */
static int64_t free_neighbour(const tune_history *h, const int64_t *out, int n, int64_t idx) {
  const tune_space *sp = h->task->space;
  int64_t radix = 1;
  for (int j = 0; j < sp->nknobs; j++) {
    int64_t nv = sp->knobs[j].nvalues, d = (idx / radix) % nv;
    for (int64_t v = 0; v < nv; v++)
      if (v != d && !tune_taken(h, out, n, idx + (v - d) * radix)) return idx + (v - d) * radix;
    radix *= nv;
  }
  return -1;
}

/* Reads back the trials measured since the last call: each chain's proposal decides its move. */
static void read_back(tune_proposer *p, const tune_history *h) {
  sa_state *st = p->state;
  double t = fmax(0.01, 0.3 * pow(0.8, st->rounds));
  for (; st->seen < h->ntrials; st->seen++) {
    const tune_trial *tr = &h->trials[st->seen];
    double g = tr->status == TUNE_OK ? tr->gflops : 0;
    if (g > st->best) st->best = g;
    for (int i = 0; i < st->k; i++) {
      chain *c = &st->c[i];
      if (c->pending != tr->index) continue;
      c->pending = -1;
      if (g <= 0) break;
      if (c->at < 0 || g >= c->g || unit(&p->rng) < exp(-(c->g - g) / (st->best * t)))
        c->at = tr->index, c->g = g;
      break;
    }
  }
}

static int anneal_next(tune_proposer *p, tec_ctx *ctx, const tune_history *h, int k, int64_t *out) {
  (void)ctx;
  sa_state *st = p->state;
  if (!st->c) {
    st->k = k < 1 ? 1 : k;
    if (!(st->c = malloc(sizeof *st->c * (size_t)st->k))) {
      tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
      return -1;
    }
    for (int i = 0; i < st->k; i++) st->c[i] = (chain){-1, 0, -1};
    /* the tuner measured the default first: chain 0 stands there */
    for (int i = 0; i < h->ntrials; i++)
      if (h->trials[i].status == TUNE_OK && st->c[0].at < 0)
        st->c[0].at = h->trials[i].index, st->c[0].g = h->trials[i].gflops;
  }
  read_back(p, h);
  int n = 0;
  for (int i = 0; i < st->k && n < k; i++) {
    chain *c = &st->c[i];
    int64_t x = -1;
    if (c->at >= 0) {
      for (int d = 0; d < 32 && (x < 0 || tune_taken(h, out, n, x)); d++)
        x = neighbour(h->task->space, &p->rng, c->at);
      if (tune_taken(h, out, n, x)) x = free_neighbour(h, out, n, c->at);
    }
    if (x < 0 || tune_taken(h, out, n, x)) x = tune_draw_free(h, &p->rng, out, n);
    if (x < 0) break; /* the space is exhausted */
    out[n++] = x;
    c->pending = x;
  }
  st->rounds++;
  return n;
}

static void anneal_free(tune_proposer *p) {
  sa_state *st = p->state;
  if (st) free(st->c);
  free(st);
  free(p);
}

tune_proposer *tune_proposer_anneal(tec_ctx *ctx, unsigned seed) {
  tune_proposer *p = calloc(1, sizeof *p);
  if (p && !(p->state = calloc(1, sizeof(sa_state)))) free(p), p = NULL;
  if (!p) {
    tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
    return NULL;
  }
  p->name = "anneal", p->next = anneal_next, p->free = anneal_free;
  p->rng = 0x5a00000000000000ull ^ seed;
  return p;
}

/* propose.c — the visited set and the two model-free proposers: grid (config indices in
 * order) and random (uniform without replacement from a seeded generator). Both depend on
 * nothing but the seed and the visited set, so the same seed gives the same trial order. */
#include <stdlib.h>
#include <string.h>
#include "tune/internal.h"
#include "tec/tune_model.h"

int tune_visited_init(tune_visited *v, int64_t space_size) {
  memset(v, 0, sizeof *v);
  v->cap = 1024;
  v->slots = malloc(sizeof *v->slots * (size_t)v->cap);
  if (!v->slots) return -1;
  memset(v->slots, 0xff, sizeof *v->slots * (size_t)v->cap);
  if (space_size <= TUNE_BITMAP_MAX && !(v->bitmap = calloc((size_t)(space_size + 7) / 8, 1))) return -1;
  return 0;
}

static uint64_t hash64(int64_t x) {
  uint64_t s = (uint64_t)x;
  return tune_rng_next(&s);
}

int tune_visited_has(const tune_visited *v, int64_t index) {
  if (v->bitmap) return (v->bitmap[index >> 3] >> (index & 7)) & 1;
  for (uint64_t h = hash64(index) & (uint64_t)(v->cap - 1);; h = (h + 1) & (uint64_t)(v->cap - 1)) {
    if (v->slots[h] == index) return 1;
    if (v->slots[h] < 0) return 0;
  }
}

static void put(int64_t *slots, int64_t cap, int64_t index) {
  uint64_t h = hash64(index) & (uint64_t)(cap - 1);
  while (slots[h] >= 0 && slots[h] != index) h = (h + 1) & (uint64_t)(cap - 1);
  slots[h] = index;
}

int tune_visited_add(tune_visited *v, int64_t index) {
  if (tune_visited_has(v, index)) return 0;
  if (v->bitmap) v->bitmap[index >> 3] |= (unsigned char)(1u << (index & 7));
  if (2 * (v->n + 1) > v->cap) {
    int64_t cap = 2 * v->cap;
    int64_t *s = malloc(sizeof *s * (size_t)cap);
    if (!s) return -1;
    memset(s, 0xff, sizeof *s * (size_t)cap);
    for (int64_t i = 0; i < v->cap; i++)
      if (v->slots[i] >= 0) put(s, cap, v->slots[i]);
    free(v->slots);
    v->slots = s, v->cap = cap;
  }
  put(v->slots, v->cap, index);
  v->n++;
  return 0;
}

void tune_visited_free(tune_visited *v) {
  free(v->slots), free(v->bitmap);
  memset(v, 0, sizeof *v);
}

static int in_batch(const int64_t *out, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (out[i] == x) return 1;
  return 0;
}

/* grid: the next unvisited indices of the space in order (the cursor is the state) */
static int grid_next(tune_proposer *p, tec_ctx *ctx, const tune_history *h, int k, int64_t *out) {
  int64_t *cursor = p->state, range = tune_space_range(h->task->space);
  int n = 0;
  for (; n < k && *cursor < range; ++*cursor)
    if (!tune_visited_has(h->visited, *cursor) && tune_space_allows(h->task->space, *cursor))
      out[n++] = *cursor;
  return n;
}

int tune_taken(const tune_history *h, const int64_t *out, int n, int64_t x) {
  return tune_visited_has(h->visited, x) || in_batch(out, n, x) || !tune_space_allows(h->task->space, x);
}

/* One uniform draw of the index range that is not taken (tune_draw_free's doc in internal.h):
 * a taken one is drawn again; after 64 misses in a row (a nearly full or heavily pruned
 * space) the next free index after the draw; -1 if none. */
int64_t tune_draw_free(const tune_history *h, uint64_t *rng, const int64_t *out, int n) {
  int64_t range = tune_space_range(h->task->space), x = tune_rng_below(rng, range);
  for (int miss = 0; tune_taken(h, out, n, x) && miss < 64; miss++) x = tune_rng_below(rng, range);
  for (int64_t step = 0; tune_taken(h, out, n, x) && step < range; step++) x = (x + 1) % range;
  return tune_taken(h, out, n, x) ? -1 : x;
}

/* random: uniform draws without replacement (tune_draw_free) */
static int random_next(tune_proposer *p, tec_ctx *ctx, const tune_history *h, int k, int64_t *out) {
  int64_t left = tune_space_size(h->task->space) - h->visited->n;
  int n = 0;
  while (n < k && n < left) {
    int64_t x = tune_draw_free(h, &p->rng, out, n);
    if (x < 0) break;
    out[n++] = x;
  }
  return n;
}

static void basic_free(tune_proposer *p) {
  free(p->state);
  free(p);
}

static tune_proposer *basic(tec_ctx *ctx, const char *name, unsigned seed,
                            int (*next)(tune_proposer *, tec_ctx *, const tune_history *, int, int64_t *)) {
  tune_proposer *p = calloc(1, sizeof *p);
  if (p && !(p->state = calloc(1, sizeof(int64_t)))) free(p), p = NULL;
  if (!p) {
    tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune: out of memory");
    return NULL;
  }
  p->name = name, p->next = next, p->free = basic_free, p->rng = 0x7ec0000000000000ull ^ seed;
  return p;
}

tune_proposer *tune_proposer_grid(tec_ctx *ctx, unsigned seed) { return basic(ctx, "grid", seed, grid_next); }

tune_proposer *tune_proposer_by_name(tec_ctx *ctx, const char *name, unsigned seed) {
  return !strcmp(name, "grid")     ? tune_proposer_grid(ctx, seed)
         : !strcmp(name, "random") ? tune_proposer_random(ctx, seed)
         : !strcmp(name, "anneal") ? tune_proposer_anneal(ctx, seed)
         : !strcmp(name, "xgb")    ? tune_proposer_xgb(ctx, seed)
                                   : NULL;
}
tune_proposer *tune_proposer_random(tec_ctx *ctx, unsigned seed) { return basic(ctx, "random", seed, random_next); }

/* the cost-model tuner is tuner_xgb.c; it needs XGBoost (tune_model_available) */
int tune_have_xgb(void) { return tune_model_available(); }

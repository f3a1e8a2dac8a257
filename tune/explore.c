/* explore.c — the cost-model tuner's exploration picks (tune_explore_fill). For a knob of V
 * values after n trials (the batch's picks so far counted), a value's deficit is n / V less
 * the trials that had it. The value of largest deficit is set into the model's best config
 * (then its second, ...) in place of that knob's value, and the first such config the space
 * allows and nobody has visited or picked is the pick; a value no best config can take is
 * passed over for the next deficit.
 *
 * Why: a ranking model trained on a few dozen trials extrapolates from whatever the random
 * start happened to contain. On MobileNet's conv1 the start had two configs with two output
 * channel blocks per register tile (one of them with a slow padding copy), and the model spent
 * its 56 trials among one-block tiles, all under 91 % of the best of 1000 random trials (two
 * blocks in 49 of that search's 50 fastest). AutoTVM mixes random configs into each batch for
 * the same reason (eps_greedy); a value the model has seen too little of, asked in the context
 * the model likes best, is a sharper question than a random config: one such trial with two
 * blocks was the fastest yet, and the model's next rounds went there. */
#include <stdlib.h>
#include "tune/internal.h"

#define MAX_KNOBS 64

static int in_out(const int64_t *out, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (out[i] == x) return 1;
  return 0;
}

/* Adds config x's knob values to the counts (cnt[k][v] at off[k] + v). */
static void count_config(const tune_space *sp, int64_t x, const int64_t *off, int64_t *cnt) {
  int64_t kv[MAX_KNOBS];
  if (tune_space_decode(sp, x, kv) != 0) return;
  for (int k = 0; k < sp->nknobs; k++) cnt[off[k] + kv[k]]++;
}

int tune_explore_fill(const tune_history *h, const int64_t *top, int ntop, int64_t *out, int n, int want) {
  const tune_space *sp = h->task->space;
  if (sp->nknobs > MAX_KNOBS) return n;
  int64_t off[MAX_KNOBS + 1];
  off[0] = 0;
  for (int k = 0; k < sp->nknobs; k++) off[k + 1] = off[k] + sp->knobs[k].nvalues;
  int64_t *cnt = calloc((size_t)off[sp->nknobs], sizeof *cnt);
  unsigned char *dead = calloc((size_t)off[sp->nknobs], 1); /* no top config takes this value */
  if (!cnt || !dead) {
    free(cnt), free(dead);
    return n; /* the model's picks fill the batch */
  }
  for (int i = 0; i < h->ntrials; i++) count_config(sp, h->trials[i].index, off, cnt);
  for (int i = 0; i < n; i++) count_config(sp, out[i], off, cnt);
  int64_t total = h->ntrials + n;
  for (int got = 0; got < want;) {
    int bk = -1;
    int64_t bv = 0;
    double best = 0; /* a value tried as often as its share or more is no deficit */
    for (int k = 0; k < sp->nknobs; k++) {
      int64_t V = sp->knobs[k].nvalues;
      for (int64_t v = 0; V > 1 && v < V; v++) {
        double d = (double)total / (double)V - (double)cnt[off[k] + v];
        if (!dead[off[k] + v] && d > best) best = d, bk = k, bv = v;
      }
    }
    if (bk < 0) break;
    int64_t pick = -1, kv[MAX_KNOBS];
    for (int j = 0; j < ntop && pick < 0; j++) {
      if (tune_space_decode(sp, top[j], kv) != 0 || kv[bk] == bv) continue;
      kv[bk] = bv;
      int64_t x = tune_space_encode(sp, kv);
      if (x >= 0 && tune_space_allows(sp, x) && !tune_visited_has(h->visited, x) && !in_out(out, n, x)) pick = x;
    }
    if (pick < 0) {
      dead[off[bk] + bv] = 1;
      continue;
    }
    out[n++] = pick, got++, total++;
    count_config(sp, pick, off, cnt);
  }
  free(cnt), free(dead);
  return n;
}

/* explore.c — the cost-model tuner's exploration picks (tune_explore_fill). A value of a knob
 * of V values is owed n / V of n trials (the batch's picks so far counted), at most
 * TUNE_EXPLORE_OWED_MAX: a few trials with a value are enough for the model to place it, and
 * in a long run a value the model has placed as slow would otherwise be owed more every
 * round. Knobs of few values come first (two output-channel blocks, half of conv1's space,
 * are owed 4.5 of 9 trials; one of 29 column counts 0.3). The value
 * owed most is set into the model's best config (then its second, ...) in place of that
 * knob's value, and the first such config that the space allows and nobody has visited or
 * picked is the pick. When none is, the best top config that can take the value is
 * repaired: another knob moved by the fewest value steps (a register tile of two output-
 * channel blocks does not fit 19 columns wide; 14 do). A value no top config can take is
 * passed over for the next. The model does not choose among the owed values: asked to, it
 * preferred its one-block tiles with a column count not yet tried, and conv1 stayed there.
 *
 * Why: a ranking model trained on a few dozen trials extrapolates from whatever the random
 * start happened to contain. On MobileNet's conv1 the start had two configs with two output
 * channel blocks per register tile (one of them with a slow padding copy), and the model spent
 * its 56 trials among one-block tiles, all under 91 % of the best of 1000 random trials (two
 * blocks in 49 of that search's 50 fastest). AutoTVM mixes random configs into each batch for
 * the same reason (eps_greedy); a value the model has seen too little of, asked in the context
 * the model likes best, is a sharper question than a random config. */
#include <stdlib.h>
#include "tune/internal.h"

#define MAX_KNOBS 64

/* Adds config x's knob values to the counts (cnt[k][v] at off[k] + v). */
static void count_config(const tune_space *sp, int64_t x, const int64_t *off, int64_t *cnt) {
  int64_t kv[MAX_KNOBS];
  if (tune_space_decode(sp, x, kv) != 0) return;
  for (int k = 0; k < sp->nknobs; k++) cnt[off[k] + kv[k]]++;
}

/* Config kv with one knob (not `keep`) moved by the fewest value steps so the space allows
 * it, unvisited and not in out[0..n); -1 if none. */
static int64_t repair(const tune_history *h, int64_t *kv, int keep, const int64_t *out, int n) {
  const tune_space *sp = h->task->space;
  int64_t far = 0;
  for (int k = 0; k < sp->nknobs; k++) far = sp->knobs[k].nvalues > far ? sp->knobs[k].nvalues : far;
  for (int64_t d = 1; d < far; d++)
    for (int k = 0; k < sp->nknobs; k++) {
      if (k == keep) continue;
      int64_t was = kv[k];
      for (int sign = -1; sign <= 1; sign += 2) {
        kv[k] = was + sign * d;
        if (kv[k] < 0 || kv[k] >= sp->knobs[k].nvalues) continue;
        int64_t x = tune_space_encode(sp, kv);
        if (x >= 0 && !tune_taken(h, out, n, x)) {
          kv[k] = was;
          return x;
        }
      }
      kv[k] = was;
    }
  return -1;
}

/* The config for value bv of knob bk: a top config with it put in (the best that works), else
 * one repaired (the best top config that can be); -1 if none. */
static int64_t place(const tune_history *h, const int64_t *top, int ntop, int bk, int64_t bv, const int64_t *out,
                     int n) {
  const tune_space *sp = h->task->space;
  int64_t kv[MAX_KNOBS];
  for (int pass = 0; pass < 2; pass++)
    for (int j = 0; j < ntop; j++) {
      if (tune_space_decode(sp, top[j], kv) != 0 || kv[bk] == bv) continue;
      kv[bk] = bv;
      int64_t x = pass == 1 ? repair(h, kv, bk, out, n) : tune_space_encode(sp, kv);
      if (x >= 0 && (pass == 1 || !tune_taken(h, out, n, x))) return x;
    }
  return -1;
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
    double best = 0; /* a value tried as often as it is owed is no deficit */
    for (int k = 0; k < sp->nknobs; k++) {
      int64_t V = sp->knobs[k].nvalues;
      double owed = (double)total / (double)V;
      if (owed > TUNE_EXPLORE_OWED_MAX) owed = TUNE_EXPLORE_OWED_MAX;
      for (int64_t v = 0; V > 1 && v < V; v++) {
        double d = owed - (double)cnt[off[k] + v];
        if (!dead[off[k] + v] && d > best) best = d, bk = k, bv = v;
      }
    }
    if (bk < 0) break;
    int64_t pick = place(h, top, ntop, bk, bv, out, n);
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

/* target_key.c — a target's canonical text, and the string-taking forms of the target API.
 *
 *   "rasp4b"  ->  "llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=cortex-a72 -mattr=+neon"
 *   "llvm -mtriple=x86_64-linux-gnu -mattr=+fma,+avx2,+fma -O0"
 *             ->  "llvm -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma -O0"
 *
 * The features are the value's (the last mention of each) sorted by name, so two spellings of
 * one machine have one text: tuning records name their target by it (tune/records.c), and a
 * record read back matches when its text parses to the same one (tec_target_matches), which
 * keeps records written in the feature order of earlier versions applying.
 */
#include <stdlib.h>
#include <string.h>
#include "target/internal.h"

typedef struct tgt_word {
  const char *s;
  size_t n;
} tgt_word;

static int tgt_word_cmp(const void *a, const void *b) {
  const tgt_word *x = a, *y = b; /* by name, the sign after */
  size_t n = x->n < y->n ? x->n : y->n;
  int c = n > 1 ? memcmp(x->s + 1, y->s + 1, n - 1) : 0;
  if (c) return c;
  if (x->n != y->n) return x->n < y->n ? -1 : 1;
  return x->s[0] - y->s[0];
}

const char *tgt_canonical(tec_ctx *ctx, const tec_target *t) {
  size_t count = 0, len = strlen(t->features);
  for (const char *f = t->features; *f; f++) count += *f == ',';
  count += len > 0;
  tgt_word *w = tec_ctx_alloc(ctx, sizeof *w * (count ? count : 1));
  char *sorted = tec_ctx_alloc(ctx, len + 1);
  if (!w || !sorted) return NULL;
  size_t k = 0;
  for (const char *f = t->features; *f && k < count;) {
    size_t n = strcspn(f, ",");
    if (n) w[k++] = (tgt_word){f, n};
    f += n + (f[n] == ',');
  }
  qsort(w, k, sizeof *w, tgt_word_cmp);
  size_t o = 0;
  for (size_t i = 0; i < k; i++) {
    if (o) sorted[o++] = ',';
    memcpy(sorted + o, w[i].s, w[i].n);
    o += w[i].n;
  }
  sorted[o] = '\0';
  return tec_ctx_printf(ctx, "llvm -mtriple=%s%s%s%s%s%s", t->triple, *t->cpu ? " -mcpu=" : "",
                        t->cpu, *sorted ? " -mattr=" : "", sorted,
                        t->opt_level == 3 ? "" : tec_ctx_printf(ctx, " -O%d", t->opt_level));
}

int tec_target_equal(const tec_target *a, const tec_target *b) {
  return a && b && strcmp(a->str, b->str) == 0;
}

int tec_target_matches(tec_ctx *ctx, tec_target_memo *memo, const char *text,
                       const tec_target *t) {
  if (!ctx || !memo || !text || !t) return 0;
  if (!memo->text || strcmp(memo->text, text) != 0) {
    /* a text that does not parse (a CPU this LLVM or tec does not know) matches nothing; its
     * error is not the caller's */
    int had_error = tec_ctx_error(ctx) != NULL; /* the first error stays: set_error keeps it */
    const tec_target *r = tgt_parse(ctx, text, 1); /* the host's CPU and features as LLVM named them */
    if (!r && !had_error) tec_ctx_clear_error(ctx);
    memo->text = tec_ctx_strdup(ctx, text);
    memo->key = r ? r->str : NULL;
  }
  return memo->key && strcmp(memo->key, t->str) == 0;
}

int tec_target_vector_bits(tec_ctx *ctx, const char *text) {
  const tec_target *t = tec_target_parse(ctx, text);
  return t ? t->vector_bits : -1;
}

int tec_target_lane_fma(tec_ctx *ctx, const char *text) {
  const tec_target *t = tec_target_parse(ctx, text);
  return t ? t->lane_fma : -1;
}

const char *tec_target_str(tec_ctx *ctx, const char *text) {
  const tec_target *t = tec_target_parse(ctx, text);
  return t ? t->str : NULL;
}

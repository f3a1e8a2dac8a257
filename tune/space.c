/* space.c — the knob space's index arithmetic (space.h): configs numbered in mixed radix over
 * the knobs (knob 0 fastest), the default index, a knob's entity in a config, and the config
 * struct a space may carry (its int knobs bound to int64_t fields): decoding an index into
 * it, encoding it back, the rule across knobs. Constructors: space_define.c; text:
 * space_text.c. */
#include <stdlib.h>
#include <string.h>
#include "tune/internal.h"

int tune_space_init(tec_ctx *ctx, tune_space *sp, const char *name, size_t config_size) {
  memset(sp, 0, sizeof *sp);
  sp->ctx = ctx;
  sp->name = name;
  sp->config_size = config_size;
  if (config_size && !(sp->default_config = tec_ctx_alloc(ctx, config_size))) return -1;
  return 0;
}

tune_space *tune_space_new(tec_ctx *ctx) {
  tune_space *sp = tec_ctx_alloc(ctx, sizeof *sp);
  return sp && tune_space_init(ctx, sp, NULL, 0) == 0 ? sp : NULL;
}

int tune_space_find(const tune_space *sp, const char *name) {
  for (int k = 0; name && k < sp->nknobs; k++)
    if (!strcmp(sp->knobs[k].name, name)) return k;
  return -1;
}

int64_t tune_space_range(const tune_space *sp) {
  int64_t n = 1;
  for (int k = 0; k < sp->nknobs; k++) {
    int64_t v = sp->knobs[k].nvalues;
    if (v > 0 && n > INT64_MAX / v) return INT64_MAX;
    n *= v;
  }
  return n;
}

int64_t tune_space_size(const tune_space *sp) {
  int64_t n = tune_space_range(sp);
  return n == INT64_MAX ? n : n - sp->pruned;
}

int tune_space_decode(const tune_space *sp, int64_t index, int64_t *knob_idx) {
  if (index < 0 || index >= tune_space_range(sp)) return -1;
  for (int k = 0; k < sp->nknobs; k++) {
    knob_idx[k] = index % sp->knobs[k].nvalues;
    index /= sp->knobs[k].nvalues;
  }
  return 0;
}

int64_t tune_space_encode(const tune_space *sp, const int64_t *knob_idx) {
  int64_t index = 0;
  for (int k = sp->nknobs - 1; k >= 0; k--) {
    if (knob_idx[k] < 0 || knob_idx[k] >= sp->knobs[k].nvalues) return -1;
    index = index * sp->knobs[k].nvalues + knob_idx[k];
  }
  return index;
}

int64_t tune_space_default_index(const tune_space *sp) {
  int64_t index = 0;
  for (int k = sp->nknobs - 1; k >= 0; k--) index = index * sp->knobs[k].nvalues + sp->knobs[k].def;
  return index;
}

const int64_t *tune_space_get(const tune_space *sp, int64_t index, int knob) {
  if (knob < 0 || knob >= sp->nknobs || index < 0 || index >= tune_space_range(sp)) return NULL;
  for (int k = 0; k < knob; k++) index /= sp->knobs[k].nvalues;
  const tune_knob *kn = &sp->knobs[knob];
  return kn->values + (index % kn->nvalues) * kn->width;
}

/* ---- the config struct ---- */

int64_t tune_config_get(const tune_space *sp, const void *config, int knob) {
  int64_t v;
  memcpy(&v, (const char *)config + sp->knobs[knob].offset, sizeof v);
  return v;
}

void tune_config_set(const tune_space *sp, void *config, int knob, int64_t value) {
  memcpy((char *)config + sp->knobs[knob].offset, &value, sizeof value);
}

static int bound(const tune_knob *k) { return k->offset != TUNE_KNOB_UNBOUND; }

int tune_space_allows_config(const tune_space *sp, const void *config) {
  return !sp->rule || sp->rule(sp->rule_data, config);
}

int tune_space_config(const tune_space *sp, int64_t index, void *config) {
  if (index < 0 || index >= tune_space_range(sp)) return -1;
  if (sp->config_size) memcpy(config, sp->default_config, sp->config_size);
  for (int k = 0; k < sp->nknobs; k++) {
    const tune_knob *kn = &sp->knobs[k];
    if (bound(kn)) tune_config_set(sp, config, k, kn->values[index % kn->nvalues]);
    index /= kn->nvalues;
  }
  return tune_space_allows_config(sp, config) ? 0 : 1;
}

int64_t tune_space_index(const tune_space *sp, const void *config) {
  int64_t index = 0;
  for (int k = sp->nknobs - 1; k >= 0; k--) {
    const tune_knob *kn = &sp->knobs[k];
    int64_t v = kn->def;
    if (bound(kn)) {
      int64_t x = tune_config_get(sp, config, k);
      for (v = 0; v < kn->nvalues && kn->values[v] != x; v++) {}
      if (v == kn->nvalues) return -1;
    }
    index = index * kn->nvalues + v;
  }
  return index;
}

int tune_space_allows(const tune_space *sp, int64_t index) {
  if (index < 0 || index >= tune_space_range(sp)) return 0;
  if (!sp->rule) return 1;
  int64_t buf[64]; /* a config is int64 fields: on the stack unless it is large */
  void *cfg = sp->config_size <= sizeof buf ? buf : malloc(sp->config_size);
  int ok = cfg && tune_space_config(sp, index, cfg) == 0;
  if (cfg != buf) free(cfg);
  return ok;
}

/* space.c — a tune space: knobs whose values are entities of one or more int64s (split
 * factors, permutations, annotations, single values), configs numbered in mixed radix (knob 0
 * fastest, as topi_space_config), printing, and the wrap of a topi template's space. The
 * define_* constructors are in space_define.c. */
#include <stdlib.h>
#include <string.h>
#include "tune/internal.h"

static void space_release(void *arg) {
  tune_space *sp = arg;
  for (int k = 0; k < sp->nknobs; k++) free(sp->knobs[k].values), free(sp->knobs[k].labels);
  free(sp->knobs);
  sp->knobs = NULL, sp->nknobs = sp->cap = 0;
}

tune_space *tune_space_new(tec_ctx *ctx) {
  tune_space *sp = tec_ctx_alloc(ctx, sizeof *sp);
  if (!sp) return NULL;
  sp->ctx = ctx;
  if (tec_ctx_on_free(ctx, space_release, sp) != 0) return NULL;
  return sp;
}

void tune_space_free(tune_space *sp) {
  if (sp) space_release(sp);
}

tune_space *tune_space_from_topi(tec_ctx *ctx, const topi_space *tsp) {
  tune_space *sp = tune_space_new(ctx);
  if (!sp) return NULL;
  sp->topi = tsp;
  for (int k = 0; k < tsp->nknobs; k++) {
    const topi_knob *tk = &tsp->knobs[k];
    if (tune_define_knob(sp, tk->name, tk->nvalues, tk->values, NULL) < 0) return NULL;
    sp->knobs[k].topi_offset = tk->offset;
  }
  return sp;
}

int tune_space_find(const tune_space *sp, const char *name) {
  for (int k = 0; k < sp->nknobs; k++)
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
  return n == INT64_MAX || !sp->topi ? n : n - sp->topi->pruned;
}

int tune_space_allows(const tune_space *sp, int64_t index) {
  if (index < 0 || index >= tune_space_range(sp)) return 0;
  return !sp->topi || topi_space_allows_index(sp->topi, index);
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

const int64_t *tune_space_get(const tune_space *sp, int64_t index, int knob) {
  if (knob < 0 || knob >= sp->nknobs || index < 0 || index >= tune_space_range(sp)) return NULL;
  for (int k = 0; k < knob; k++) index /= sp->knobs[k].nvalues;
  const tune_knob *kn = &sp->knobs[knob];
  return kn->values + (index % kn->nvalues) * kn->width;
}

static const char *ann_name(int64_t a) {
  switch (a) {
  case TUNE_ANN_UNROLL: return "unroll";
  case TUNE_ANN_VECTORIZE: return "vec";
  case TUNE_ANN_PARALLEL: return "par";
  default: return "none";
  }
}

/* one value of knob kn into buf */
static void value_str(const tune_knob *kn, int64_t v, char *buf, size_t cap) {
  const int64_t *e = kn->values + v * kn->width;
  size_t len = 0;
  if (kn->labels) {
    snprintf(buf, cap, "%s", kn->labels[v]);
    return;
  }
  if (kn->kind == TUNE_KNOB_INT) {
    snprintf(buf, cap, "%lld", (long long)e[0]);
    return;
  }
  len += (size_t)snprintf(buf + len, cap - len, "[");
  for (int i = 0; i < kn->width && len < cap; i++) {
    if (kn->kind == TUNE_KNOB_ANNOTATE)
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? "," : "", ann_name(e[i]));
    else
      len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "," : "", (long long)e[i]);
  }
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

const char *tune_space_config_str(tec_ctx *ctx, const tune_space *sp, int64_t index) {
  if (index < 0 || index >= tune_space_range(sp)) return NULL;
  size_t cap = 64 + (size_t)sp->nknobs * 160, len = 0;
  char *buf = tec_ctx_alloc(ctx, cap);
  if (!buf) return NULL;
  for (int k = 0; k < sp->nknobs; k++) {
    const tune_knob *kn = &sp->knobs[k];
    char v[128];
    value_str(kn, index % kn->nvalues, v, sizeof v);
    index /= kn->nvalues;
    len += (size_t)snprintf(buf + len, cap - len, "%s%s=%s", k ? " " : "", kn->name, v);
    if (len >= cap) break;
  }
  return buf;
}

void tune_space_print(FILE *out, const tune_space *sp) {
  static const char *const kind[] = {"int", "split", "reorder", "annotate"};
  int64_t n = tune_space_size(sp), pruned = tune_space_range(sp) - n;
  fprintf(out, "space: %d knob%s, %lld config%s", sp->nknobs, sp->nknobs == 1 ? "" : "s", (long long)n,
          n == 1 ? "" : "s");
  if (sp->topi && sp->topi->rule)
    fprintf(out, " (%lld of the knobs' %lld combinations pruned by the rule: %s)", (long long)pruned,
            (long long)tune_space_range(sp), sp->topi->rule_doc ? sp->topi->rule_doc : "?");
  fprintf(out, "\n");
  for (int k = 0; k < sp->nknobs; k++) {
    const tune_knob *kn = &sp->knobs[k];
    fprintf(out, "  %-12s %-8s %4lld value%s:", kn->name, kn->labels ? "category" : kind[kn->kind],
            (long long)kn->nvalues, kn->nvalues == 1 ? " " : "s");
    for (int64_t v = 0; v < kn->nvalues && v < 8; v++) {
      char b[128];
      value_str(kn, v, b, sizeof b);
      fprintf(out, " %s", b);
    }
    fprintf(out, "%s\n", kn->nvalues > 8 ? " ..." : "");
  }
}

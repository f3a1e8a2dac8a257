/* space_text.c — a space's configs as text and back: "knob=value" pairs (an int as a number, a
 * categorical knob's label, a split's factors [4,16], a permutation [1,0,2], annotations
 * [none,unroll]), printed from an index or a config struct and parsed into either; the legality
 * check of a config struct; the space's printout. */
#include <stdlib.h>
#include <string.h>
#include "tune/internal.h"

static const char *who(const tune_space *sp) { return sp->name ? sp->name : "tune space"; }

static const char *ann_name(int64_t a) {
  switch (a) {
  case TUNE_ANN_UNROLL: return "unroll";
  case TUNE_ANN_VECTORIZE: return "vec";
  case TUNE_ANN_PARALLEL: return "par";
  default: return "none";
  }
}

/* value number v of knob kn into buf */
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

/* "1, 2, 4" (arena): the knob's values, as many as fit 480 bytes */
static const char *values_str(tec_ctx *ctx, const tune_knob *kn) {
  char buf[512], v[128];
  size_t n = 0;
  buf[0] = 0;
  for (int64_t i = 0; i < kn->nvalues && n < sizeof buf - 32; i++) {
    value_str(kn, i, v, sizeof v);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", v);
  }
  return tec_ctx_strdup(ctx, buf);
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

const char *tune_config_str(tec_ctx *ctx, const tune_space *sp, const void *config) {
  char buf[512];
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; i < sp->nknobs && n < sizeof buf - 64; i++)
    if (sp->knobs[i].offset != TUNE_KNOB_UNBOUND)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s=%lld", n ? " " : "", sp->knobs[i].name,
                            (long long)tune_config_get(sp, config, i));
  return tec_ctx_strdup(ctx, buf);
}

static int illegal(tec_ctx *ctx, const tune_space *sp, int k, long long v) {
  return tec_ctx_set_error(ctx, "%s: knob '%s' = %lld is not legal for this problem and target (legal: %s)", who(sp),
                           sp->knobs[k].name, v, values_str(ctx, &sp->knobs[k]));
}

int tune_space_check(tec_ctx *ctx, const tune_space *sp, const void *config) {
  if (!config) return tec_ctx_set_error(ctx, "%s: the config is NULL", who(sp));
  for (int k = 0; k < sp->nknobs; k++) {
    const tune_knob *kn = &sp->knobs[k];
    if (kn->offset == TUNE_KNOB_UNBOUND) continue;
    int64_t v = tune_config_get(sp, config, k);
    int ok = 0;
    for (int64_t j = 0; j < kn->nvalues && !ok; j++) ok = kn->values[j] == v;
    if (!ok) return illegal(ctx, sp, k, (long long)v);
  }
  return 0;
}

/* The value number of knob k written as text (len bytes), or -1 with an error. */
static int64_t parse_value(tec_ctx *ctx, const tune_space *sp, int k, const char *text, size_t len) {
  const tune_knob *kn = &sp->knobs[k];
  if (kn->kind == TUNE_KNOB_INT && !kn->labels) {
    char num[32];
    char *end = NULL;
    long long v = 0;
    if (len > 0 && len < sizeof num) {
      memcpy(num, text, len), num[len] = 0;
      v = strtoll(num, &end, 10);
    }
    if (!end || *end || end == num)
      return tec_ctx_set_error(ctx, "%s: config: knob '%s' needs an integer value, got '%.*s' (legal: %s)", who(sp),
                               kn->name, (int)len, text, values_str(ctx, kn));
    for (int64_t i = 0; i < kn->nvalues; i++)
      if (kn->values[i] == v) return i;
    return illegal(ctx, sp, k, v);
  }
  char v[128];
  for (int64_t i = 0; i < kn->nvalues; i++) {
    value_str(kn, i, v, sizeof v);
    if (strlen(v) == len && !strncmp(v, text, len)) return i;
  }
  return tec_ctx_set_error(ctx, "%s: config: knob '%s' = '%.*s' is not one of its values (legal: %s)", who(sp),
                           kn->name, (int)len, text, values_str(ctx, kn));
}

int tune_space_parse(tec_ctx *ctx, const tune_space *sp, const char *text, int64_t *index) {
  if (!sp || !index) return tec_ctx_set_error(ctx, "tune_space_parse: a space and an index are required");
  int64_t *kidx = tec_ctx_alloc(ctx, sizeof *kidx * (size_t)(sp->nknobs + 1));
  if (!kidx) return -1;
  for (int k = 0; k < sp->nknobs; k++) kidx[k] = sp->knobs[k].def;
  const char *s = text ? text : "";
  while (*s) {
    if (*s == ' ' || *s == ',' || *s == '\t') {
      s++;
      continue;
    }
    size_t nl = strcspn(s, "= ,\t");
    if (s[nl] != '=') return tec_ctx_set_error(ctx, "%s: config '%.*s' is not knob=value", who(sp), (int)nl, s);
    /* the value: up to a separator, a bracketed list whole */
    const char *v = s + nl + 1;
    size_t vl = *v == '[' ? strcspn(v, "]") + (v[strcspn(v, "]")] == ']') : strcspn(v, " ,\t");
    int k = -1;
    for (int i = 0; i < sp->nknobs && k < 0; i++)
      if (strlen(sp->knobs[i].name) == nl && !strncmp(sp->knobs[i].name, s, nl)) k = i;
    if (k < 0) {
      char names[512] = "";
      size_t n = 0;
      for (int i = 0; i < sp->nknobs && n < sizeof names - 64; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", sp->knobs[i].name);
      return tec_ctx_set_error(ctx, "%s: config: no knob '%.*s' (knobs: %s)", who(sp), (int)nl, s, names);
    }
    int64_t x = parse_value(ctx, sp, k, v, vl);
    if (x < 0) return -1;
    kidx[k] = x;
    s = v + vl;
  }
  *index = tune_space_encode(sp, kidx);
  return 0;
}

int tune_config_parse(tec_ctx *ctx, const tune_space *sp, const char *text, void *config) {
  if (!sp || !config || !sp->config_size)
    return tec_ctx_set_error(ctx, "tune_config_parse: a space with a config struct and a config are required");
  int64_t index;
  if (tune_space_parse(ctx, sp, text, &index) != 0) return -1;
  tune_space_config(sp, index, config); /* 1 (the rule refuses it) is not an error here */
  return 0;
}

void tune_space_print(FILE *out, const tune_space *sp) {
  static const char *const kind[] = {"int", "split", "reorder", "annotate"};
  int64_t n = tune_space_size(sp), pruned = tune_space_range(sp) - n;
  fprintf(out, "space: %d knob%s, %lld config%s", sp->nknobs, sp->nknobs == 1 ? "" : "s", (long long)n,
          n == 1 ? "" : "s");
  if (sp->rule)
    fprintf(out, " (%lld of the knobs' %lld combinations pruned by the rule: %s)", (long long)pruned,
            (long long)tune_space_range(sp), sp->rule_doc ? sp->rule_doc : "?");
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

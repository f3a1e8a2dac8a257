/* space_define.c — the knob constructors of a space (AutoTVM's define_split, define_reorder,
 * define_annotate, define_knob, and define_field: an int knob bound to a config struct's
 * field, what templates declare) and the rule across knobs (multi_filter): each constructor
 * enumerates the knob's legal values once, in a fixed order, so a config index always means
 * the same schedule. */
#include <stdlib.h>
#include <string.h>
#include "tune/internal.h"

#define MAX_PARTS 8

/* Growable list of entities of `width` int64s. */
typedef struct ents {
  int64_t *v;
  int64_t n, cap;
  int width;
} ents;

static int ents_push(ents *e, const int64_t *x) {
  if (e->n == e->cap) {
    int64_t cap = e->cap ? 2 * e->cap : 16;
    int64_t *v = realloc(e->v, sizeof *v * (size_t)(cap * e->width));
    if (!v) return -1;
    e->v = v, e->cap = cap;
  }
  memcpy(e->v + e->n * e->width, x, sizeof *x * (size_t)e->width);
  e->n++;
  return 0;
}

/* "tune space" or the space's name, for messages */
static const char *who(const tune_space *sp) { return sp->name ? sp->name : "tune space"; }

/* Adds a knob of entities e (copied into the arena; e->v freed whether it succeeds or not),
 * labels (already in the arena) and default value number def. Its index, or -1. */
static int add_knob(tune_space *sp, const char *name, const char *doc, tune_knob_kind kind, ents *e,
                    const char **labels, int64_t def, size_t offset) {
  tec_ctx *ctx = sp->ctx;
  const char *err = NULL;
  if (!name || !*name) err = "a knob needs a name";
  else if (tune_space_find(sp, name) >= 0) err = "a knob of that name exists already";
  else if (e->n == 0) err = "it has no legal value";
  else if (tune_space_range(sp) > (1ll << 62) / e->n) err = "the space would pass 2^62 configs";
  if (!err && sp->nknobs == sp->cap) { /* grown in the arena: the old array stays until the ctx goes */
    int cap = sp->cap ? 2 * sp->cap : 8;
    tune_knob *k = tec_ctx_alloc(ctx, sizeof *k * (size_t)cap);
    if (!k) err = "out of memory";
    else {
      if (sp->nknobs) memcpy(k, sp->knobs, sizeof *k * (size_t)sp->nknobs);
      sp->knobs = k, sp->cap = cap;
    }
  }
  const char *nm = err ? NULL : tec_ctx_strdup(ctx, name);
  const char *dc = err || !doc ? NULL : tec_ctx_strdup(ctx, doc);
  int64_t *v = err ? NULL : tec_ctx_alloc(ctx, sizeof *v * (size_t)(e->n * e->width));
  if (!err && (!nm || (doc && !dc) || !v)) err = "out of memory";
  if (v) memcpy(v, e->v, sizeof *v * (size_t)(e->n * e->width));
  free(e->v);
  if (err) {
    if (sp->name) return tec_ctx_set_error(ctx, "%s: knob '%s': %s", who(sp), name ? name : "(null)", err);
    return tec_ctx_set_error(ctx, "tune space: knob '%s': %s", name ? name : "(null)", err);
  }
  sp->knobs[sp->nknobs] = (tune_knob){.name = nm, .doc = dc, .kind = kind, .width = e->width, .nvalues = e->n,
                                      .values = v, .labels = labels, .def = def, .offset = offset};
  return sp->nknobs++;
}

static int is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* All tuples of parts-1 inner factors (each from `allowed`), recursively; outer = ceil. */
static int split_rec(ents *e, int64_t extent, int parts, int policy, int64_t *t, int pos, int64_t prod) {
  if (pos == parts) {
    t[0] = (extent + prod - 1) / prod;
    return ents_push(e, t);
  }
  for (int64_t f = 1; f <= extent / prod; f++) {
    if (policy == TUNE_SPLIT_FACTORS && (extent / prod) % f) continue;
    if (policy == TUNE_SPLIT_POWER2 && !is_pow2(f)) continue;
    t[pos] = f;
    if (split_rec(e, extent, parts, policy, t, pos + 1, prod * f)) return -1;
  }
  return 0;
}

int tune_define_split(tune_space *sp, const char *name, int64_t extent, int parts,
                      tune_split_policy policy, int ncands, const int64_t *cands) {
  tec_ctx *ctx = sp->ctx;
  if (extent < 1 || parts < 1 || parts > MAX_PARTS)
    return tec_ctx_set_error(ctx, "tune space: split '%s': extent %lld and %d parts; the extent must be >= 1 and the parts 1..%d",
                             name ? name : "(null)", (long long)extent, parts, MAX_PARTS);
  ents e = {.width = parts};
  int64_t t[MAX_PARTS];
  if (policy == TUNE_SPLIT_LIST) {
    if (ncands < 1 || !cands)
      return tec_ctx_set_error(ctx, "tune space: split '%s': the candidate policy needs a non-empty list of %d-factor tuples",
                               name ? name : "(null)", parts - 1);
    for (int c = 0; c < ncands; c++) {
      int64_t prod = 1;
      for (int i = 1; i < parts; i++) {
        int64_t f = cands[c * (parts - 1) + i - 1];
        if (f < 1 || prod > extent / f) {
          free(e.v);
          return tec_ctx_set_error(ctx, "tune space: split '%s': candidate %d has a factor %lld that is < 1 or makes the product exceed the extent %lld",
                                   name ? name : "(null)", c, (long long)f, (long long)extent);
        }
        prod *= f, t[i] = f;
      }
      t[0] = (extent + prod - 1) / prod;
      if (ents_push(&e, t)) goto oom;
    }
  } else if (policy == TUNE_SPLIT_FACTORS || policy == TUNE_SPLIT_POWER2) {
    if (parts == 1) {
      t[0] = extent;
      if (ents_push(&e, t)) goto oom;
    } else if (split_rec(&e, extent, parts, policy, t, 1, 1)) {
      goto oom;
    }
  } else {
    return tec_ctx_set_error(ctx, "tune space: split '%s': unknown policy %d (factors, power2 or list)", name ? name : "(null)",
                             (int)policy);
  }
  return add_knob(sp, name, NULL, TUNE_KNOB_SPLIT, &e, NULL, 0, TUNE_KNOB_UNBOUND);
oom:
  free(e.v);
  return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune space: split '%s': out of memory", name ? name : "(null)");
}

/* next permutation in lexicographic order; 0 at the last */
static int next_perm(int64_t *p, int n) {
  int i = n - 2;
  while (i >= 0 && p[i] >= p[i + 1]) i--;
  if (i < 0) return 0;
  int j = n - 1;
  while (p[j] <= p[i]) j--;
  int64_t x = p[i];
  p[i] = p[j], p[j] = x;
  for (int a = i + 1, b = n - 1; a < b; a++, b--) x = p[a], p[a] = p[b], p[b] = x;
  return 1;
}

int tune_define_reorder(tune_space *sp, const char *name, int naxes, int ncands, const int *cands) {
  tec_ctx *ctx = sp->ctx;
  if (naxes < 1 || naxes > MAX_PARTS)
    return tec_ctx_set_error(ctx, "tune space: reorder '%s': %d axes; 1..%d are legal", name ? name : "(null)", naxes,
                             MAX_PARTS);
  ents e = {.width = naxes};
  int64_t p[MAX_PARTS];
  if (ncands == 0) {
    for (int i = 0; i < naxes; i++) p[i] = i;
    do {
      if (ents_push(&e, p)) goto oom;
    } while (next_perm(p, naxes));
  } else {
    for (int c = 0; c < ncands; c++) {
      int seen = 0;
      for (int i = 0; i < naxes; i++) {
        int a = cands ? cands[c * naxes + i] : -1;
        if (a < 0 || a >= naxes || (seen >> a) & 1) {
          free(e.v);
          return tec_ctx_set_error(ctx, "tune space: reorder '%s': candidate %d is not a permutation of 0..%d",
                                   name ? name : "(null)", c, naxes - 1);
        }
        seen |= 1 << a, p[i] = a;
      }
      if (ents_push(&e, p)) goto oom;
    }
  }
  return add_knob(sp, name, NULL, TUNE_KNOB_REORDER, &e, NULL, 0, TUNE_KNOB_UNBOUND);
oom:
  free(e.v);
  return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune space: reorder '%s': out of memory", name ? name : "(null)");
}

static int ann_rec(ents *e, int naxes, const unsigned *allowed, int64_t *t, int pos, int nvec, int npar) {
  if (pos == naxes) return ents_push(e, t);
  static const unsigned order[] = {TUNE_ANN_NONE, TUNE_ANN_UNROLL, TUNE_ANN_VECTORIZE, TUNE_ANN_PARALLEL};
  for (int i = 0; i < 4; i++) {
    unsigned a = order[i];
    if (!(allowed[pos] & a)) continue;
    if (a == TUNE_ANN_VECTORIZE && nvec) continue;
    if (a == TUNE_ANN_PARALLEL && npar) continue;
    t[pos] = a;
    if (ann_rec(e, naxes, allowed, t, pos + 1, nvec + (a == TUNE_ANN_VECTORIZE), npar + (a == TUNE_ANN_PARALLEL)))
      return -1;
  }
  return 0;
}

int tune_define_annotate(tune_space *sp, const char *name, int naxes, const unsigned *allowed) {
  tec_ctx *ctx = sp->ctx;
  if (naxes < 1 || naxes > MAX_PARTS || !allowed)
    return tec_ctx_set_error(ctx, "tune space: annotate '%s': %d axes; 1..%d are legal, each with a mask of choices",
                             name ? name : "(null)", naxes, MAX_PARTS);
  for (int i = 0; i < naxes; i++)
    if (!allowed[i] || allowed[i] & ~15u)
      return tec_ctx_set_error(ctx, "tune space: annotate '%s': axis %d allows 0x%x; a non-empty mask of TUNE_ANN_NONE, "
                               "_UNROLL, _VECTORIZE, _PARALLEL is legal", name ? name : "(null)", i, allowed[i]);
  ents e = {.width = naxes};
  int64_t t[MAX_PARTS];
  if (ann_rec(&e, naxes, allowed, t, 0, 0, 0)) {
    free(e.v);
    return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune space: annotate '%s': out of memory", name ? name : "(null)");
  }
  return add_knob(sp, name, NULL, TUNE_KNOB_ANNOTATE, &e, NULL, 0, TUNE_KNOB_UNBOUND);
}

int tune_define_knob(tune_space *sp, const char *name, int nvals, const int64_t *vals, const char *const *labels) {
  tec_ctx *ctx = sp->ctx;
  if (nvals < 1 || (!vals && !labels))
    return tec_ctx_set_error(ctx, "tune space: knob '%s': needs at least one value or label", name ? name : "(null)");
  ents e = {.width = 1};
  const char **lab = NULL;
  if (labels && !(lab = tec_ctx_alloc(ctx, sizeof *lab * (size_t)nvals))) goto oom;
  for (int i = 0; i < nvals; i++) {
    int64_t v = vals ? vals[i] : i;
    if (ents_push(&e, &v)) goto oom;
    if (lab && !(lab[i] = tec_ctx_strdup(ctx, labels[i] ? labels[i] : ""))) goto oom;
  }
  return add_knob(sp, name, NULL, TUNE_KNOB_INT, &e, lab, 0, TUNE_KNOB_UNBOUND);
oom:
  free(e.v);
  return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune space: knob '%s': out of memory", name ? name : "(null)");
}

int tune_define_field(tune_space *sp, const char *name, const char *doc, size_t offset, int nvalues,
                      const int64_t *values, int64_t def) {
  tec_ctx *ctx = sp->ctx;
  const char *nm = name ? name : "(null)";
  if (nvalues < 1 || !values) return tec_ctx_set_error(ctx, "%s: knob '%s' has no legal value", who(sp), nm);
  if (!sp->config_size || offset > sp->config_size - sizeof(int64_t))
    return tec_ctx_set_error(ctx, "%s: knob '%s': offset %zu is not an int64_t field of the %zu-byte config struct "
                                  "(tune_space_init sets its size)",
                             who(sp), nm, offset, sp->config_size);
  int64_t d = -1;
  for (int i = 0; i < nvalues; i++) {
    if (i && values[i] <= values[i - 1])
      return tec_ctx_set_error(ctx, "%s: knob '%s': the values must ascend (%lld after %lld)", who(sp), nm,
                               (long long)values[i], (long long)values[i - 1]);
    if (values[i] == def) d = i;
  }
  if (d < 0) return tec_ctx_set_error(ctx, "%s: knob '%s': the default %lld is not one of its values", who(sp), nm, (long long)def);
  ents e = {.width = 1};
  for (int i = 0; i < nvalues; i++)
    if (ents_push(&e, &values[i])) {
      free(e.v);
      return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "%s: knob '%s': out of memory", who(sp), nm);
    }
  int k = add_knob(sp, name, doc, TUNE_KNOB_INT, &e, NULL, d, offset);
  if (k >= 0) memcpy((char *)sp->default_config + offset, &def, sizeof def);
  return k;
}

int tune_space_set_rule(tune_space *sp, unsigned knob_mask, int (*rule)(const void *rule_data, const void *config),
                        const void *rule_data, const char *doc) {
  tec_ctx *ctx = sp->ctx;
  if (!rule || !sp->config_size)
    return tec_ctx_set_error(ctx, "%s: a rule needs a function and a space with a config struct (tune_space_init "
                                  "with its size)", who(sp));
  if (!rule(rule_data, sp->default_config))
    return tec_ctx_set_error(ctx, "%s: the default config %s is outside its own space (%s)", who(sp),
                             tune_config_str(ctx, sp, sp->default_config), doc ? doc : "");
  void *cfg = tec_ctx_alloc(ctx, sp->config_size);
  if (!cfg) return -1;
  /* the rule's knobs enumerated (the others at their default: the rule does not read them) */
  int64_t combos = 1, others = 1, refused = 0;
  for (int k = 0; k < sp->nknobs; k++) {
    int64_t *n = k < 32 && knob_mask >> k & 1 ? &combos : &others;
    if (__builtin_mul_overflow(*n, sp->knobs[k].nvalues, n))
      return tec_ctx_set_error(ctx, "%s: the space is too large for a rule", who(sp));
  }
  for (int64_t c = 0; c < combos; c++) {
    memcpy(cfg, sp->default_config, sp->config_size);
    int64_t r = c;
    for (int k = 0; k < sp->nknobs; k++)
      if (k < 32 && knob_mask >> k & 1) {
        if (sp->knobs[k].offset != TUNE_KNOB_UNBOUND)
          tune_config_set(sp, cfg, k, sp->knobs[k].values[r % sp->knobs[k].nvalues]);
        r /= sp->knobs[k].nvalues;
      }
    refused += !rule(rule_data, cfg);
  }
  sp->rule = rule, sp->rule_data = rule_data, sp->rule_doc = doc;
  sp->pruned = refused * others;
  return 0;
}

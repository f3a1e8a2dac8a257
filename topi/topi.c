/* topi.c — the template registry and what every template shares around its three functions:
 * knob spaces (building, checking, enumerating, printing a config), instantiation with the
 * target's default config, and the start of a schedule. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topi/internal.h"

/* One line per template file. */
static const topi_template *const registry[] = {
    &topi_tmpl_conv2d_nchwc,
    &topi_tmpl_depthwise_nchwc,
    &topi_tmpl_dw_spatial_pack,
    &topi_tmpl_layout,
    &topi_tmpl_dense,
    &topi_tmpl_pool,
    &topi_tmpl_global_pool,
    &topi_tmpl_softmax,
    &topi_tmpl_eltwise,
    &topi_tmpl_conv2d_winograd,
    &topi_tmpl_conv2d_im2col,
    &topi_tmpl_conv2d_spatial_pack,
    &topi_tmpl_dw_pw_fused,
};
#define NREG ((int)(sizeof registry / sizeof registry[0]))

const topi_template *topi_template_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < NREG; i++)
    if (!strcmp(registry[i]->name, name)) return registry[i];
  return NULL;
}
int topi_template_count(void) { return NREG; }
const topi_template *topi_template_at(int i) { return i >= 0 && i < NREG ? registry[i] : NULL; }

int topi_instantiate(tec_ctx *ctx, const topi_template *t, const void *problem,
                     const tec_target *target, topi_op *out) {
  if (!ctx) return -1;
  if (!t || !problem || !out)
    return tec_ctx_set_error(ctx, "topi_instantiate: template, problem and op are required");
  const char *why = NULL;
  if (!t->applies(ctx, problem, &why))
    return tec_ctx_set_error(ctx, "topi_instantiate: template '%s' does not apply: %s", t->name,
                             why ? why : "(no reason given)");
  topi_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  topi_space sp;
  if (!d || t->declare(ctx, problem, d) || t->space(ctx, problem, target, &sp)) return -1;
  return t->schedule(d, sp.default_config, target, out);
}

int topi_refuse(tec_ctx *ctx, const topi_template *t, const void *problem) {
  const char *why = NULL;
  if (t->applies(ctx, problem, &why)) return 0;
  return tec_ctx_set_error(ctx, "%s: %s", t->name, why ? why : "(no reason given)");
}

/* ---- spaces ---- */

int topi_space_begin(tec_ctx *ctx, topi_space *sp, const topi_template *t, int cap) {
  memset(sp, 0, sizeof *sp);
  sp->tmpl = t;
  sp->config_size = t->config_size;
  topi_knob *k = tec_ctx_alloc(ctx, sizeof *k * (size_t)cap);
  void *def = tec_ctx_alloc(ctx, t->config_size);
  if (!k || !def) return -1;
  sp->knobs = k;
  sp->default_config = def;
  return 0;
}

int topi_space_add(tec_ctx *ctx, topi_space *sp, const char *name, const char *doc,
                   size_t offset, int nvalues, const int64_t *values, int64_t def) {
  if (nvalues < 1) return tec_ctx_set_error(ctx, "topi space: knob '%s' has no legal value", name);
  int64_t *v = tec_ctx_alloc(ctx, sizeof *v * (size_t)nvalues);
  if (!v) return -1;
  memcpy(v, values, sizeof *v * (size_t)nvalues);
  topi_knob *k = (topi_knob *)&sp->knobs[sp->nknobs++];
  *k = (topi_knob){name, doc, offset, nvalues, v};
  memcpy((char *)sp->default_config + offset, &def, sizeof def);
  return 0;
}

int topi_divisors(int64_t n, int64_t cap, int64_t *out, int max) {
  int c = 0;
  for (int64_t d = 1; d <= n && d <= cap && c < max; d++)
    if (n % d == 0) out[c++] = d;
  return c;
}

int64_t topi_config_get(const topi_space *sp, const void *config, int knob) {
  int64_t v;
  memcpy(&v, (const char *)config + sp->knobs[knob].offset, sizeof v);
  return v;
}

void topi_config_set(const topi_space *sp, void *config, int knob, int64_t value) {
  memcpy((char *)config + sp->knobs[knob].offset, &value, sizeof value);
}

static const char *values_str(tec_ctx *ctx, const topi_knob *k) {
  char buf[512];
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; i < k->nvalues && n < sizeof buf - 32; i++)
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", i ? ", " : "",
                          (long long)k->values[i]);
  return tec_ctx_strdup(ctx, buf);
}

int topi_space_check(tec_ctx *ctx, const topi_space *sp, const void *config) {
  if (!config)
    return tec_ctx_set_error(ctx, "%s: the config is NULL", sp->tmpl ? sp->tmpl->name : "topi");
  for (int i = 0; i < sp->nknobs; i++) {
    int64_t v = topi_config_get(sp, config, i);
    int ok = 0;
    for (int j = 0; j < sp->knobs[i].nvalues && !ok; j++) ok = sp->knobs[i].values[j] == v;
    if (!ok)
      return tec_ctx_set_error(ctx, "%s: knob '%s' = %lld is not legal for this problem and "
                                    "target (legal: %s)",
                               sp->tmpl->name, sp->knobs[i].name, (long long)v,
                               values_str(ctx, &sp->knobs[i]));
  }
  return 0;
}

int64_t topi_space_range(const topi_space *sp) {
  int64_t n = 1;
  for (int i = 0; i < sp->nknobs; i++)
    if (__builtin_mul_overflow(n, (int64_t)sp->knobs[i].nvalues, &n)) return INT64_MAX;
  return n;
}

int64_t topi_space_size(const topi_space *sp) {
  int64_t n = topi_space_range(sp);
  return n == INT64_MAX ? n : n - sp->pruned;
}

int topi_space_allows(const topi_space *sp, const void *config) {
  return !sp->rule || sp->rule(sp->rule_data, config);
}

int topi_space_config(const topi_space *sp, int64_t index, void *config) {
  if (index < 0 || index >= topi_space_range(sp)) return -1;
  memcpy(config, sp->default_config, sp->config_size);
  for (int i = 0; i < sp->nknobs; i++) {
    topi_config_set(sp, config, i, sp->knobs[i].values[index % sp->knobs[i].nvalues]);
    index /= sp->knobs[i].nvalues;
  }
  return topi_space_allows(sp, config) ? 0 : 1;
}

int topi_space_allows_index(const topi_space *sp, int64_t index) {
  if (index < 0 || index >= topi_space_range(sp)) return 0;
  if (!sp->rule) return 1;
  int64_t buf[64]; /* a config is int64 fields: on the stack unless it is large */
  void *cfg = sp->config_size <= sizeof buf ? buf : malloc(sp->config_size);
  int ok = cfg && topi_space_config(sp, index, cfg) == 0;
  if (cfg != buf) free(cfg);
  return ok;
}

int topi_space_set_rule(tec_ctx *ctx, topi_space *sp, unsigned knob_mask,
                        int (*rule)(const void *rule_data, const void *config),
                        const void *rule_data, const char *doc) {
  const char *who = sp->tmpl ? sp->tmpl->name : "topi";
  if (!rule(rule_data, sp->default_config))
    return tec_ctx_set_error(ctx, "%s: the default config %s is outside its own space (%s)", who,
                             topi_config_str(ctx, sp, sp->default_config), doc ? doc : "");
  void *cfg = tec_ctx_alloc(ctx, sp->config_size);
  if (!cfg) return -1;
  /* the rule's knobs enumerated (the others at their default: the rule does not read them) */
  int64_t combos = 1, others = 1, refused = 0;
  for (int k = 0; k < sp->nknobs; k++) {
    int64_t *n = knob_mask >> k & 1 ? &combos : &others;
    if (__builtin_mul_overflow(*n, (int64_t)sp->knobs[k].nvalues, n))
      return tec_ctx_set_error(ctx, "%s: the space is too large for a rule", who);
  }
  for (int64_t c = 0; c < combos; c++) {
    memcpy(cfg, sp->default_config, sp->config_size);
    int64_t r = c;
    for (int k = 0; k < sp->nknobs; k++)
      if (knob_mask >> k & 1) {
        topi_config_set(sp, cfg, k, sp->knobs[k].values[r % sp->knobs[k].nvalues]);
        r /= sp->knobs[k].nvalues;
      }
    refused += !rule(rule_data, cfg);
  }
  sp->rule = rule, sp->rule_data = rule_data, sp->rule_doc = doc;
  sp->pruned = refused * others;
  return 0;
}

const char *topi_config_str(tec_ctx *ctx, const topi_space *sp, const void *config) {
  char buf[512];
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; i < sp->nknobs && n < sizeof buf - 64; i++)
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s=%lld", i ? " " : "", sp->knobs[i].name,
                          (long long)topi_config_get(sp, config, i));
  return tec_ctx_strdup(ctx, buf);
}

int topi_config_parse(tec_ctx *ctx, const topi_space *sp, const char *text, void *config) {
  if (!sp || !sp->tmpl || !config)
    return tec_ctx_set_error(ctx, "topi_config_parse: space and config are required");
  const char *who = sp->tmpl->name;
  memcpy(config, sp->default_config, sp->config_size);
  const char *s = text ? text : "";
  while (*s) {
    if (*s == ' ' || *s == ',' || *s == '\t') { s++; continue; }
    size_t len = strcspn(s, " ,\t"), nl = strcspn(s, "=");
    if (nl >= len)
      return tec_ctx_set_error(ctx, "%s: config '%.*s' is not knob=value", who, (int)len, s);
    int k = -1;
    for (int i = 0; i < sp->nknobs && k < 0; i++)
      if (strlen(sp->knobs[i].name) == nl && !strncmp(sp->knobs[i].name, s, nl)) k = i;
    if (k < 0) {
      char names[512] = "";
      size_t n = 0;
      for (int i = 0; i < sp->nknobs && n < sizeof names - 64; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "",
                              sp->knobs[i].name);
      return tec_ctx_set_error(ctx, "%s: config: no knob '%.*s' (knobs: %s)", who, (int)nl, s,
                               names);
    }
    char num[32];
    size_t vl = len - nl - 1;
    char *end = NULL;
    long long v = 0;
    if (vl > 0 && vl < sizeof num) {
      memcpy(num, s + nl + 1, vl), num[vl] = 0;
      v = strtoll(num, &end, 10);
    }
    if (!end || *end || end == num)
      return tec_ctx_set_error(ctx, "%s: config: knob '%s' needs an integer value, got '%.*s' "
                                    "(legal: %s)",
                               who, sp->knobs[k].name, (int)vl, s + nl + 1,
                               values_str(ctx, &sp->knobs[k]));
    topi_config_set(sp, config, k, (int64_t)v);
    s += len;
  }
  return topi_space_check(ctx, sp, config);
}

/* ---- schedules ---- */

int topi_op_begin(const topi_decl *d, topi_op *op) {
  memset(op, 0, sizeof *op);
  op->decl = d;
  op->sched = sch_create(d->ctx, 1, (te_tensor *const *)&d->out);
  if (!op->sched) return -1;
  op->nargs = d->nargs;
  op->args = d->args;
  op->out = d->out;
  return 0;
}

const tec_target *topi_target_of(tec_ctx *ctx, const tec_target *target) {
  return target ? target : tec_target_parse(ctx, NULL);
}

int topi_target_lanes(tec_ctx *ctx, const tec_target *target) {
  const tec_target *t = topi_target_of(ctx, target);
  return t ? t->vector_lanes : -1;
}

int topi_target_regs(tec_ctx *ctx, const tec_target *target, int lanes) {
  const tec_target *t = topi_target_of(ctx, target);
  return t ? t->vector_regs : 16;
}

int topi_target_lane_fma(tec_ctx *ctx, const tec_target *target) {
  const tec_target *t = topi_target_of(ctx, target);
  return t ? t->lane_fma : -1;
}

int topi_config_check(const topi_template *t, const topi_decl *d, const void *cfg,
                      const tec_target *target) {
  if (d->tmpl != t) /* its priv and problem are another template's structs */
    return tec_ctx_set_error(d->ctx, "%s: the declaration is of template '%s'", t->name,
                             d->tmpl ? d->tmpl->name : "?");
  topi_space sp;
  if (d->tmpl->space(d->ctx, d->problem, target, &sp)) return -1;
  return topi_space_check(d->ctx, &sp, cfg);
}

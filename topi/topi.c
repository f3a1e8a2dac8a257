/* topi.c — the template registry and what every template shares around its three functions:
 * the checked calls by name (topi_declare, topi_space_of, topi_schedule: the problem's and
 * config's C types against the template's), instantiation with the target's default config,
 * and the start of a schedule. The knob space is tune_space (tec/space.h, tune/space*.c). */
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
    &topi_tmpl_batch_matmul,
    /* int8 (docs/quantized.md): their problems carry the quantization params (problem_text.c) */
    &topi_tmpl_qnn_conv2d,
    &topi_tmpl_qnn_depthwise,
    &topi_tmpl_qnn_dense,
    &topi_tmpl_qnn_pool,
    &topi_tmpl_qnn_add,
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
  tune_space sp;
  /* the host (NULL) parsed once here, not in every helper the template calls */
  if (!(target = topi_target_of(ctx, target))) return -1;
  if (!d || t->declare(ctx, problem, d) || t->space(ctx, problem, target, &sp)) return -1;
  return t->schedule(d, sp.default_config, target, out);
}

/* ---- the checked calls by name ---- */

static const char *const problem_types[] = {
    [TOPI_PROBLEM_CONV2D] = "topi_conv2d",   [TOPI_PROBLEM_LAYOUT] = "topi_layout_problem",
    [TOPI_PROBLEM_DENSE] = "topi_dense",     [TOPI_PROBLEM_POOL] = "topi_pool",
    [TOPI_PROBLEM_SOFTMAX] = "topi_softmax", [TOPI_PROBLEM_ELTWISE] = "topi_eltwise",
    [TOPI_PROBLEM_DW_PW] = "topi_dw_pw",
    [TOPI_PROBLEM_BATCH_MATMUL] = "topi_batch_matmul",
    [TOPI_PROBLEM_QCONV2D] = "topi_qconv2d", [TOPI_PROBLEM_QDENSE] = "topi_qdense",
    [TOPI_PROBLEM_QPOOL] = "topi_qpool",     [TOPI_PROBLEM_QADD] = "topi_qadd",
};

/* Template `name` for `who`, its problem of type problem_type (NULL: unchecked); NULL with an
 * error naming the registered templates, or the problem type the template takes. */
static const topi_template *lookup(tec_ctx *ctx, const char *who, const char *name,
                                   const char *problem_type) {
  const topi_template *t = topi_template_find(name);
  if (!t) {
    char names[512] = "";
    size_t n = 0;
    for (int i = 0; i < NREG && n < sizeof names - 64; i++)
      n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", registry[i]->name);
    tec_ctx_set_error(ctx, "%s: no template '%s' (templates: %s)", who, name ? name : "(null)", names);
    return NULL;
  }
  const char *want = problem_types[t->problem_kind];
  if (problem_type && strcmp(problem_type, want)) {
    tec_ctx_set_error(ctx, "%s: template '%s' takes a %s problem, not a %s", who, t->name, want,
                      problem_type);
    return NULL;
  }
  return t; /* a NULL problem is the template's to refuse */
}

int topi_declare_as(tec_ctx *ctx, const char *name, const char *problem_type, const void *problem,
                    topi_decl *out) {
  if (!ctx) return -1;
  const topi_template *t = lookup(ctx, "topi_declare", name, problem_type);
  if (!t) return -1;
  return t->declare(ctx, problem, out);
}

int topi_space_as(tec_ctx *ctx, const char *name, const char *problem_type, const void *problem,
                  const tec_target *target, tune_space *out) {
  if (!ctx) return -1;
  const topi_template *t = lookup(ctx, "topi_space_of", name, problem_type);
  if (!t) return -1;
  if (!out) return tec_ctx_set_error(ctx, "topi_space_of: %s: the space (out) is NULL", t->name);
  if (!problem) return tec_ctx_set_error(ctx, "topi_space_of: %s: the problem is NULL", t->name);
  if (!(target = topi_target_of(ctx, target))) return -1; /* the host parsed once */
  return t->space(ctx, problem, target, out);
}

int topi_schedule_as(const topi_decl *d, const char *config_type, const void *config,
                     const tec_target *target, topi_op *out) {
  if (!d || !d->ctx) return -1;
  const topi_template *t = d->tmpl;
  if (!t) return tec_ctx_set_error(d->ctx, "topi_schedule: the declaration has no template");
  if (config_type && t->config_type && strcmp(config_type, t->config_type))
    return tec_ctx_set_error(d->ctx, "topi_schedule: template '%s' reads a %s, not a %s", t->name,
                             t->config_type, config_type);
  if (!(target = topi_target_of(d->ctx, target))) return -1; /* the host parsed once */
  return t->schedule(d, config, target, out);
}

int topi_refuse(tec_ctx *ctx, const topi_template *t, const void *problem) {
  const char *why = NULL;
  if (t->applies(ctx, problem, &why)) return 0;
  return tec_ctx_set_error(ctx, "%s: %s", t->name, why ? why : "(no reason given)");
}

/* ---- spaces (tune_space: tec/space.h) ---- */

int topi_divisors(int64_t n, int64_t cap, int64_t *out, int max) {
  int c = 0;
  for (int64_t d = 1; d <= n && d <= cap && c < max; d++)
    if (n % d == 0) out[c++] = d;
  return c;
}

int64_t topi_divisor_upto(int64_t n, int64_t cap) {
  for (int64_t d = cap < n ? cap : n; d > 1; d--)
    if (n % d == 0) return d;
  return 1;
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

int topi_op_begin_out(const topi_decl *d, te_tensor *out, topi_op *op) {
  te_tensor **args = out ? tec_ctx_alloc(d->ctx, (size_t)d->nargs * sizeof *args) : NULL;
  if (!args) return -1;
  memset(op, 0, sizeof *op);
  op->decl = d;
  if (!(op->sched = sch_create(d->ctx, 1, &out))) return -1;
  for (int k = 0; k < d->nargs; k++) args[k] = d->args[k];
  args[d->nargs - 1] = out;
  op->nargs = d->nargs, op->args = args, op->out = out;
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

int topi_target_mem_operand(tec_ctx *ctx, const tec_target *target) {
  const tec_target *t = topi_target_of(ctx, target);
  return t && t->arch != TEC_ARCH_AARCH64 && t->arch != TEC_ARCH_ARMV7;
}

int topi_target_tight_regs(tec_ctx *ctx, const tec_target *target) {
  return topi_target_regs(ctx, target, 0) <= 16 && !topi_target_mem_operand(ctx, target);
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
  tune_space sp;
  if (d->tmpl->space(d->ctx, d->problem, target, &sp)) return -1;
  return tune_space_check(d->ctx, &sp, cfg);
}

/* task_topi.c — a tuning task for a topi template: its space (the template's own), the
 * default config's index, the FLOP count, and how a config index becomes a lowered candidate
 * (tune_space_config -> declare -> schedule -> tec_lower, in the candidate's own ctx) with its
 * schedule trace as JSON. Also the canonical problem string of workloads. */
#include <stdlib.h>
#include <string.h>
#include "tune/internal.h"

typedef struct topi_task {
  const topi_template *t;
  void *problem;
  tune_space sp;
} topi_task;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

const char *tune_problem_canon(tec_ctx *ctx, const char *text) {
  if (!text) return "";
  size_t n = strlen(text);
  char *buf = tec_ctx_alloc(ctx, n + 1), *out = tec_ctx_alloc(ctx, n + 2);
  char **parts = tec_ctx_alloc(ctx, sizeof *parts * (n / 2 + 2));
  if (!buf || !out || !parts) return NULL;
  size_t len = 0;
  for (const char *c = text; *c; c++)
    if (*c != ' ' && *c != '\t') buf[len++] = *c;
  buf[len] = 0;
  int np = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) parts[np++] = tok;
  qsort(parts, (size_t)np, sizeof *parts, cmp_str);
  out[0] = 0;
  for (int i = 0; i < np; i++) strcat(i ? strcat(out, ",") : out, parts[i]);
  return out;
}

/* Removes the newlines of a JSON text (one record line) in place. */
static const char *one_line(char *s) {
  char *w = s;
  for (char *r = s; *r; r++)
    if (*r != '\n') *w++ = *r;
  *w = 0;
  return s;
}

static lower_func *topi_task_lower(const tune_task *task, tec_ctx *ctx, int64_t index, const char **config_str,
                                   const char **trace_json) {
  const topi_task *tt = task->user;
  void *cfg = tec_ctx_alloc(ctx, tt->sp.config_size);
  if (!cfg) return NULL;
  int in = tune_space_config(&tt->sp, index, cfg);
  if (in < 0) {
    tec_ctx_set_error(ctx, "tune: config index %lld is outside the index range of %s (0..%lld)", (long long)index,
                      tt->t->name, (long long)tune_space_range(&tt->sp) - 1);
    return NULL;
  }
  if (in > 0) {
    tec_ctx_set_error(ctx, "tune: config index %lld of %s (%s) is not in the space: its rule refuses it (%s)",
                      (long long)index, tt->t->name, tune_config_str(ctx, &tt->sp, cfg), tt->sp.rule_doc);
    return NULL;
  }
  if (config_str) *config_str = tune_config_str(ctx, &tt->sp, cfg);
  topi_decl d;
  topi_op op;
  if (tt->t->declare(ctx, tt->problem, &d) != 0 || tt->t->schedule(&d, cfg, task->target_value, &op) != 0) return NULL;
  if (trace_json) {
    const char *js = sch_trace_json(ctx, sch_get_trace(op.sched));
    *trace_json = js ? one_line((char *)tec_ctx_strdup(ctx, js)) : NULL;
    if (!js) tec_ctx_clear_error(ctx); /* a trace that cannot print is not a failed candidate */
  }
  return tec_lower(op.sched, "tune_candidate", op.nargs, op.args);
}

/* task->fill: the rings of inputs with a margin zeroed (topi_arg_zero_ring). */
static void topi_task_fill(const tune_task *task, DLTensor *const *args, int nargs) {
  const topi_task *tt = task->user;
  for (int i = 0; i < nargs; i++) {
    int64_t before[8], after[8];
    if (topi_arg_zero_ring(tt->t, tt->problem, i, before, after) == args[i]->ndim)
      topi_zero_ring(args[i]->data, args[i]->ndim, args[i]->shape, before, after);
  }
}

static size_t problem_size(topi_problem_kind k) {
  switch (k) {
  case TOPI_PROBLEM_CONV2D: return sizeof(topi_conv2d);
  case TOPI_PROBLEM_LAYOUT: return sizeof(topi_layout_problem);
  case TOPI_PROBLEM_DENSE: return sizeof(topi_dense);
  case TOPI_PROBLEM_POOL: return sizeof(topi_pool);
  case TOPI_PROBLEM_SOFTMAX: return sizeof(topi_softmax);
  case TOPI_PROBLEM_ELTWISE: return sizeof(topi_eltwise);
  case TOPI_PROBLEM_DW_PW: return sizeof(topi_dw_pw);
  case TOPI_PROBLEM_BATCH_MATMUL: return sizeof(topi_batch_matmul);
  case TOPI_PROBLEM_QCONV2D: return sizeof(topi_qconv2d);
  case TOPI_PROBLEM_QDENSE: return sizeof(topi_qdense);
  case TOPI_PROBLEM_QPOOL: return sizeof(topi_qpool);
  case TOPI_PROBLEM_QADD: return sizeof(topi_qadd);
  }
  return 0;
}

int tune_task_topi(tec_ctx *ctx, const topi_template *t, const void *problem, const char *problem_str,
                   const char *target, tune_task *out) {
  memset(out, 0, sizeof *out);
  if (!t || !problem) return tec_ctx_set_error(ctx, "tune: a task needs a template and a problem");
  topi_task *tt = tec_ctx_alloc(ctx, sizeof *tt);
  size_t psize = problem_size(t->problem_kind);
  if (!tt || !(tt->problem = tec_ctx_alloc(ctx, psize))) return -1;
  memcpy(tt->problem, problem, psize);
  tt->t = t;
  const char *why = NULL;
  if (t->applies && !t->applies(ctx, problem, &why))
    return tec_ctx_set_error(ctx, "tune: %s cannot compute this problem: %s", t->name, why ? why : "(no reason given)");
  const tec_target *tg = tec_target_parse(ctx, target); /* the task's one parse */
  if (!tg) return -1;
  if (t->space(ctx, tt->problem, tg, &tt->sp) != 0) return -1;
  out->template_name = t->name;
  out->problem = tune_problem_canon(ctx, problem_str);
  out->workload = tec_ctx_printf(ctx, "%s %s", t->name, out->problem ? out->problem : "");
  out->target = tg->str;
  out->target_arg = target ? tec_ctx_strdup(ctx, target) : NULL;
  out->target_value = tg;
  out->space = &tt->sp;
  out->default_index = tune_space_default_index(&tt->sp);
  if (t->problem_kind == TOPI_PROBLEM_CONV2D) out->flops = topi_conv2d_flops(problem);
  if (t->problem_kind == TOPI_PROBLEM_DW_PW) {
    const topi_dw_pw *b = problem;
    out->flops = topi_conv2d_flops(&b->dw) + topi_conv2d_flops(&b->pw);
  }
  if (t->problem_kind == TOPI_PROBLEM_DENSE) {
    const topi_dense *p = problem;
    out->flops = 2.0 * (double)p->m * (double)p->n * (double)p->k;
  }
  if (t->problem_kind == TOPI_PROBLEM_BATCH_MATMUL) {
    const topi_batch_matmul *p = problem;
    out->flops = 2.0 * (double)p->batch * (double)p->m * (double)p->n * (double)p->k;
  }
  out->lower = topi_task_lower;
  out->user = tt;
  int64_t before[8], after[8];
  if (topi_arg_zero_ring(t, tt->problem, 0, before, after) > 0) out->fill = topi_task_fill;
  return out->problem && out->workload ? 0 : -1;
}

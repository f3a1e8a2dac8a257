/* tuned.c — the tuned mode's entry points: the generated space (tec_autosched_space), one of
 * its configs applied (tec_autoschedule_config), a tuning task for tune_run (tune_task_auto:
 * the tuner's own search, cost model, confirmation, records and time-outs, as for a template),
 * and the best record applied (tec_autoschedule_tuned).
 *
 * Records name the workload "auto h=<structural hash>,out=<first output>" (hash.c), so a record
 * applies to the program it was tuned on only. A candidate is decided and scheduled in the
 * tuner's own ctx for it, reading the program (the user's tensors, analyzed once when the task
 * is made) only to copy it: each candidate schedules its own copy (clone.c), so candidates lower
 * on the tuner's threads side by side. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "autosched/tuned.h"
#include "tec/tune_model.h"

typedef struct auto_task {
  as_prog p;
  tune_space sp;
  as_space S;
  const char *name; /* the program's first output, for messages */
} auto_task;

/* the program of s analyzed and its space generated (in s's ctx) */
static int setup(sch_schedule *s, const char *who, const char *target,
                 const tec_autosched_options *opt, auto_task *at) {
  tec_ctx *ctx = sch_schedule_ctx(s);
  if (as_check_args(ctx, who, s, opt)) return -1;
  memset(at, 0, sizeof *at);
  as_prog *p = &at->p;
  *p = (as_prog){.ctx = ctx, .s = s, .opt = opt};
  p->threads = opt && opt->threads ? opt->threads : tec_rt_get_num_threads();
  p->nout = sch_schedule_noutput(s);
  p->outs = tec_ctx_alloc(ctx, sizeof *p->outs * (size_t)(p->nout ? p->nout : 1));
  if (!p->outs) return -1;
  for (int o = 0; o < p->nout; o++) p->outs[o] = sch_schedule_output(s, o);
  at->name = p->nout ? p->outs[0]->name : "?";
  if (as_prepare(p, target) || as_space_build(p, &at->sp, &at->S)) return -1;
  at->sp.name = "autosched";
  return 0;
}

/* config index decided and scheduled in ctx (p copied: the analysis is only read) */
static sch_schedule *schedule_config(const auto_task *at, tec_ctx *ctx, int64_t index,
                                     as_prog *q, int *ntries, lower_func **f) {
  *q = at->p;
  q->ctx = ctx;
  q->st = tec_ctx_alloc(ctx, sizeof *q->st * (size_t)(q->n ? q->n : 1));
  as_tuned *tv;
  if (!q->st || as_space_values(&at->S, ctx, index, &tv)) return NULL;
  q->tuned = tv;
  as_decide(q);
  return as_schedule(q, ntries, f);
}

int tec_autosched_space(sch_schedule *s, const char *target, const tec_autosched_options *opt,
                        tune_space *sp) {
  if (!s || !sp) return -1;
  auto_task *at = tec_ctx_alloc(sch_schedule_ctx(s), sizeof *at);
  if (!at || setup(s, "tec_autosched_space", target, opt, at)) return -1;
  *sp = at->sp;
  return 0;
}

static const char *problem_of(const auto_task *at) {
  return tec_ctx_printf(at->p.ctx, "h=%016" PRIx64 ",out=%s", as_program_hash(&at->p), at->name);
}

static int apply_index(auto_task *at, int64_t index, const char *warning,
                       tec_autosched_report *rep) {
  as_prog q;
  int tries = 0;
  tec_ctx *ctx = at->p.ctx;
  sch_schedule *fresh = schedule_config(at, ctx, index, &q, &tries, NULL);
  if (!fresh || sch_trace_replay(at->p.s, sch_get_trace(fresh))) return -1;
  if (!rep) return 0;
  if (as_report(&q, at->p.s, tries, 0, rep)) return -1;
  rep->config = tune_space_config_str(ctx, &at->sp, index);
  rep->problem = problem_of(at);
  rep->warning = warning;
  return rep->config && rep->problem ? 0 : -1;
}

int tec_autoschedule_config(sch_schedule *s, const char *target, const tec_autosched_options *opt,
                            int64_t index, tec_autosched_report *rep) {
  if (rep) *rep = (tec_autosched_report){0};
  if (!s) return -1;
  auto_task *at = tec_ctx_alloc(sch_schedule_ctx(s), sizeof *at);
  if (!at || setup(s, "tec_autoschedule_config", target, opt, at)) return -1;
  if (index < 0 || index >= tune_space_range(&at->sp))
    return tec_ctx_set_error(at->p.ctx,
                             "tec_autoschedule_config: config index %lld is outside the "
                             "generated space of %s (0..%lld)",
                             (long long)index, at->name,
                             (long long)tune_space_range(&at->sp) - 1);
  return apply_index(at, index, NULL, rep);
}

int tec_autoschedule_tuned(sch_schedule *s, const char *target, const tec_autosched_options *opt,
                           const char *records, tec_autosched_report *rep) {
  if (rep) *rep = (tec_autosched_report){0};
  if (!s) return -1;
  tec_ctx *ctx = sch_schedule_ctx(s);
  if (!records)
    return tec_ctx_set_error(ctx, "tec_autoschedule_tuned: records is NULL; give the records "
                                  "file tune_run wrote for the program");
  auto_task *at = tec_ctx_alloc(ctx, sizeof *at);
  if (!at || setup(s, "tec_autoschedule_tuned", target, opt, at)) return -1;
  const tec_target *tg = tec_target_parse(ctx, target);
  int64_t *cfg = tec_ctx_alloc(ctx, at->sp.config_size);
  if (!tg || !cfg) return -1;
  const char *warning = NULL;
  int got = tune_apply_best_for(ctx, records, "auto", problem_of(at), tg, &at->sp, cfg, &warning, 0);
  if (got < 0) return -1;
  int64_t index = got ? tune_space_index(&at->sp, cfg) : tune_space_default_index(&at->sp);
  if (index < 0) index = tune_space_default_index(&at->sp);
  return apply_index(at, index, warning, rep);
}

/* ---- the tuning task ---- */

static const char *one_line(char *s) {
  char *w = s;
  for (char *r = s; *r; r++)
    if (*r != '\n') *w++ = *r;
  *w = 0;
  return s;
}

/* A candidate: the program copied into the candidate's ctx (clone.c), analyzed there, decided
 * with the config's values (by stage index: the copy's topological order is the original's)
 * and scheduled; nothing of the user's ctx is written. */
static lower_func *auto_lower(const tune_task *task, tec_ctx *ctx, int64_t index,
                              const char **config_str, const char **trace_json) {
  const auto_task *at = task->user;
  const as_prog *p = &at->p;
  as_prog q = {.ctx = ctx, .opt = p->opt, .threads = p->threads, .nout = p->nout,
               .lanes = p->lanes, .regs = p->regs, .llc = p->llc};
  q.outs = tec_ctx_alloc(ctx, sizeof *q.outs * (size_t)(p->nout ? p->nout : 1));
  as_tuned *tv;
  if (!q.outs || as_clone_program(ctx, p->nout, p->outs, q.outs) || as_prepare(&q, NULL) ||
      as_space_values(&at->S, ctx, index, &tv))
    return NULL;
  if (q.n != p->n) {
    tec_ctx_set_error_kind(ctx, TEC_ERR_INTERNAL,
                           "internal error: autosched: the copy of %s has %d tensors, not %d",
                           at->name, q.n, p->n);
    return NULL;
  }
  q.tuned = tv;
  as_decide(&q);
  lower_func *f = NULL;
  sch_schedule *s = as_schedule(&q, NULL, &f);
  if (!s || !f) return NULL;
  if (config_str) *config_str = tune_space_config_str(ctx, &at->sp, index);
  if (trace_json) {
    const char *js = sch_trace_json(ctx, sch_get_trace(s));
    *trace_json = js ? one_line((char *)tec_ctx_strdup(ctx, js)) : NULL;
    if (!js) tec_ctx_clear_error(ctx); /* a trace that cannot print is not a failed candidate */
  }
  return f;
}

/* arithmetic per call: each stage's elements x (its reduction's length) x (its ops + 1 for a
 * reduction's combine); an estimate for GFLOP/s in progress lines and records */
static double flops_of(const as_prog *p) {
  double total = 0;
  for (int i = 0; i < p->n; i++) {
    const as_stage *s = &p->st[i];
    if (s->is_input) continue;
    double e = 1;
    for (int d = 0; d < s->t->ndim; d++) e *= (double)s->ext[d];
    double ops = s->cost + (s->nred ? 1 : 0);
    total += e * (double)(s->red_total > 0 ? s->red_total : 1) * (ops > 0 ? ops : 1);
  }
  return total;
}

int tune_task_auto(sch_schedule *s, const char *target, const tec_autosched_options *opt,
                   tune_task *out) {
  if (out) memset(out, 0, sizeof *out);
  if (!s || !out) return -1;
  tec_ctx *ctx = sch_schedule_ctx(s);
  auto_task *at = tec_ctx_alloc(ctx, sizeof *at);
  if (!at || setup(s, "tune_task_auto", target, opt, at)) return -1;
  for (int i = 0; i < at->p.n; i++)
    if (!at->p.st[i].const_ext) {
      const char *names = "";
      for (int k = 0; opt && k < opt->nestimates; k++)
        names = tec_ctx_printf(ctx, "%s%s%s", names, k ? ", " : "", opt->estimates[k].name);
      return tec_ctx_set_error(ctx,
                               "tune_task_auto: %s has symbolic sizes (%s): the tuner measures "
                               "candidates at constant sizes; declare the program with the "
                               "sizes to tune for (the records then apply to those sizes)",
                               at->name, names);
    }
  const tec_target *tg = tec_target_parse(ctx, target);
  if (!tg) return -1;
  out->template_name = "auto";
  out->problem = problem_of(at);
  out->workload = tec_ctx_printf(ctx, "auto %s", out->problem ? out->problem : "");
  out->target = tg->str;
  out->target_arg = target ? tec_ctx_strdup(ctx, target) : NULL;
  out->target_value = tg;
  out->space = &at->sp;
  out->flops = flops_of(&at->p);
  out->default_index = tune_space_default_index(&at->sp);
  out->lower = auto_lower;
  out->features = tune_features_stages; /* every stage, not the hottest nest alone */
  out->features_version = TUNE_FEATURES_STAGES_VERSION;
  out->user = at;
  return out->problem && out->workload ? 0 : -1;
}

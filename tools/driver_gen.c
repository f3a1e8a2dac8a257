/* driver_gen.c — a generator's knobs and its tuning. tec_gen_knob (AutoTVM's cfg.define_knob)
 * declares a knob as the generator runs and returns its value: the default, --config's, or a
 * tuning candidate's. Run once declaring, the knobs form a tune_space; `OP tune` searches it
 * with the tuner (cost model, confirmation, records, progress), each candidate lowered by
 * running the generator with the candidate's values. Records are keyed by the generator's
 * name, its --shape and the structural hash of its te program (te_program_hash): editing the
 * compute never applies an old record. With --auto the generator's program (its outputs,
 * unscheduled) goes to the auto-scheduler instead, instant or tuned. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "tec/autosched.h"
#include "tools/driver_internal.h"

static int64_t knob_misuse(tec_gen_params *q, const char *msg, int64_t ret) {
  if (!q->knob_bad) q->knob_bad = tec_ctx_strdup(q->kv.ctx, msg);
  return ret;
}

int64_t tec_gen_knob(const tec_gen_params *p, const char *name, int nvals, const int64_t *vals, int64_t dflt) {
  tec_gen_params *q = (tec_gen_params *)p;
  char m[400];
  if (!name || !*name || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != strlen(name)) {
    snprintf(m, sizeof m, "tec_gen_knob: knob name '%s' is not legal (letters, digits, '_' and '.')", name ? name : "(null)");
    return knob_misuse(q, m, dflt);
  }
  if (nvals < 1 || nvals > 4096 || !vals) {
    snprintf(m, sizeof m, "tec_gen_knob: knob '%s' has %d values; give 1 to 4096", name, vals ? nvals : 0);
    return knob_misuse(q, m, dflt);
  }
  int def = -1;
  for (int i = 0; i < nvals; i++) {
    if (vals[i] == dflt && def < 0) def = i;
    for (int j = 0; j < i; j++)
      if (vals[j] == vals[i]) {
        snprintf(m, sizeof m, "tec_gen_knob: knob '%s' lists the value %" PRId64 " twice", name, vals[i]);
        return knob_misuse(q, m, dflt);
      }
  }
  if (def < 0) {
    snprintf(m, sizeof m, "tec_gen_knob: knob '%s': the default %" PRId64 " is not one of its %d values", name, dflt, nvals);
    return knob_misuse(q, m, dflt);
  }
  int k = q->nknob++;
  if (q->space && !q->knob_idx) { /* declaring */
    if (tune_define_knob(q->space, name, nvals, vals, NULL) < 0)
      return knob_misuse(q, tec_ctx_error(q->kv.ctx), dflt);
    q->space->knobs[k].def = def;
    return dflt;
  }
  if (!q->knob_idx) return dflt;
  const tune_knob *kn = k < q->space->nknobs ? &q->space->knobs[k] : NULL;
  if (!kn || strcmp(kn->name, name) || kn->nvalues != nvals || memcmp(kn->values, vals, sizeof *vals * (size_t)nvals)) {
    snprintf(m, sizeof m, "tec_gen_knob: knob %d is '%s' with %d values now, but '%s' with %" PRId64
             " when the space was declared: a generator must declare the same knobs, in the same order, "
             "whatever their values", k + 1, name, nvals, kn ? kn->name : "(none)", kn ? kn->nvalues : 0);
    return knob_misuse(q, m, dflt);
  }
  return vals[q->knob_idx[k]];
}

void tec_gen_flops(const tec_gen_params *p, double flops) {
  ((tec_gen_params *)p)->flops = flops > 0 ? flops : 0;
}

/* One run of g in ctx: space (declaring) or knob_idx (a config) or neither (defaults); the
 * flops the generator gave into *flops (may be NULL). */
static lower_func *gen_run_flops(tec_ctx *ctx, const tec_generator *g, const char *name, const char *shape,
                                 const char *target, tune_space *space, const int64_t *knob_idx, double *flops) {
  tec_gen_params p;
  if (drv_params_parse(ctx, shape, &p) != 0) return NULL;
  p.target = target, p.space = space, p.knob_idx = knob_idx;
  lower_func *f = g->fn(ctx, name, &p);
  if (p.knob_bad) { /* before what the generator said after it */
    tec_ctx_clear_error(ctx);
    return tec_ctx_set_error(ctx, "%s", p.knob_bad), NULL;
  }
  if (!f) {
    if (!tec_ctx_error(ctx) || !*tec_ctx_error(ctx)) tec_ctx_set_error(ctx, "generator %s returned no function", g->name);
    return NULL;
  }
  if (knob_idx && p.nknob != space->nknobs) {
    tec_ctx_set_error(ctx, "generator %s declared %d knobs, %d when its space was made: a generator must "
                      "declare the same knobs on every run", g->name, p.nknob, space->nknobs);
    return NULL;
  }
  if (flops) *flops = p.flops;
  return drv_params_finish(&p, NULL) == 0 ? f : NULL;
}

static lower_func *gen_run(tec_ctx *ctx, const tec_generator *g, const char *name, const char *shape,
                           const char *target, tune_space *space, const int64_t *knob_idx) {
  return gen_run_flops(ctx, g, name, shape, target, space, knob_idx, NULL);
}

/* The computed arguments of f: its program's outputs (at most cap). */
static int outputs_of(const lower_func *f, te_tensor **outs, int cap) {
  int n = 0;
  for (int i = 0; i < f->nuser && n < cap; i++)
    if (f->user_args[i]->op == TE_COMPUTE) outs[n++] = f->user_args[i];
  return n;
}

/* The generator's program, unscheduled, for the auto-scheduler: *f its own lowering (for the
 * argument list), the schedule fresh. */
static sch_schedule *gen_fresh(tec_ctx *ctx, const tec_generator *g, const char *shape, const char *target,
                               lower_func **f, double *flops) {
  te_tensor *outs[16];
  *f = gen_run_flops(ctx, g, g->name, shape, target, NULL, NULL, flops);
  if (!*f) return NULL;
  int n = outputs_of(*f, outs, 16);
  if (n == 0) return tec_ctx_set_error(ctx, "generator %s: its function has no computed argument", g->name), NULL;
  return sch_create(ctx, n, outs);
}

/* The records' problem for g's program f0 (declared with --shape shape): the canonical shape,
 * then "te=<the te program's structural hash>". NULL with an error. */
static const char *gen_problem(tec_ctx *ctx, const tec_generator *g, const char *shape, const lower_func *f0) {
  te_tensor *outs[16];
  int n = outputs_of(f0, outs, 16);
  uint64_t h;
  if (n == 0) return tec_ctx_set_error(ctx, "generator %s: its function has no computed argument", g->name), NULL;
  const char *canon = tune_problem_canon(ctx, shape ? shape : "");
  if (!canon || te_program_hash(ctx, n, outs, &h) != 0) return NULL;
  return tec_ctx_printf(ctx, "%s%ste=%016" PRIx64, canon, *canon ? "," : "", h);
}

/* The config of the fastest ok record of workload for target in records (confirmation records
 * first) into *index; without one the default, and why on stderr. 0, or -1 with an error. */
static int gen_best_record(tec_ctx *ctx, const char *records, const char *op, const char *workload,
                           const tec_target *tv, const tune_space *sp, int64_t *index) {
  tune_record *r;
  int n, best = -1, others = 0;
  tec_target_memo memo = {0}; /* each record target's text parsed once */
  if (tune_records_load(ctx, records, stderr, &r, &n) != 0) return -1;
  for (int i = 0; i < n; i++) {
    if (strcmp(r[i].template_name, op) || !r[i].status || strcmp(r[i].status, "ok")) continue;
    if (strcmp(r[i].workload, workload) || !tec_target_matches(ctx, &memo, r[i].target, tv)) {
      others++;
      continue;
    }
    if (best < 0 || r[i].confirmed > r[best].confirmed ||
        (r[i].confirmed == r[best].confirmed && r[i].median < r[best].median))
      best = i;
  }
  *index = tune_space_default_index(sp);
  if (best >= 0 && tune_space_parse(ctx, sp, r[best].config, index) == 0) return 0;
  if (best >= 0) tec_ctx_clear_error(ctx);
  fprintf(stderr, "%s: %s for %s on %s in %s (%d records of %s for other programs, shapes or targets); "
          "the knobs' defaults are used\n", op, best >= 0 ? "the best record's config does not fit the knobs now" : "no record",
          workload, *tv->cpu ? tec_ctx_printf(ctx, "%s -mcpu=%s", tv->triple, tv->cpu) : tv->triple, records, others, op);
  return 0;
}

lower_func *drv_gen_lower(tec_ctx *ctx, const tec_generator *g, const char *name, const char *shape,
                          const char *target, const char *config, int autosched, const char *records,
                          const char **cfg_str, const char **trace_c, double *flops) {
  if (autosched) {
    lower_func *own;
    sch_schedule *s = gen_fresh(ctx, g, shape, target, &own, flops);
    tec_autosched_report rep;
    if (!s || (records ? tec_autoschedule_tuned(s, target, NULL, records, &rep) : tec_autoschedule(s, target, NULL, &rep)))
      return NULL;
    if (rep.warning) fprintf(stderr, "%s\n", rep.warning);
    *cfg_str = tec_ctx_printf(ctx, "auto %s", rep.config ? rep.config : "(instant)");
    *trace_c = rep.trace_c;
    return tec_lower(s, name, own->nuser, own->user_args);
  }
  if (!config && !records) return gen_run_flops(ctx, g, name, shape, target, NULL, NULL, flops);
  if (config && records)
    return tec_ctx_set_error(ctx, "--config and --records both choose the knobs' values: give one"), NULL;
  tune_space *sp = tune_space_new(ctx);
  int64_t index, idx[64];
  if (sp) sp->name = g->name;
  lower_func *f0 = sp ? gen_run_flops(ctx, g, name, shape, target, sp, NULL, flops) : NULL;
  if (!f0) return NULL;
  if (sp->nknobs == 0)
    return tec_ctx_set_error(ctx, "--%s: generator %s declares no knobs (tec_gen_knob)", config ? "config" : "records",
                             g->name), NULL;
  if (sp->nknobs > 64) return tec_ctx_set_error(ctx, "generator %s: more than 64 knobs", g->name), NULL;
  if (config) {
    if (tune_space_parse(ctx, sp, config, &index) != 0) return NULL;
  } else {
    const tec_target *tv = tec_target_parse(ctx, target);
    const char *prob = tv ? gen_problem(ctx, g, shape, f0) : NULL;
    if (!prob || gen_best_record(ctx, records, g->name, tec_ctx_printf(ctx, "%s %s", g->name, prob), tv, sp, &index) != 0)
      return NULL;
  }
  if (tune_space_decode(sp, index, idx) != 0) return NULL;
  *cfg_str = tune_space_config_str(ctx, sp, index);
  return gen_run(ctx, g, name, shape, target, sp, idx);
}

typedef struct gen_task {
  const tec_generator *g;
  const char *shape, *target;
} gen_task;

static lower_func *gen_task_lower(const tune_task *task, tec_ctx *ctx, int64_t index, const char **config_str,
                                  const char **trace_json) {
  const gen_task *gt = task->user;
  int64_t idx[64];
  if (tune_space_decode(task->space, index, idx) != 0)
    return tec_ctx_set_error(ctx, "%s: config %" PRId64 " is outside its space", gt->g->name, index), NULL;
  if (config_str) *config_str = tune_space_config_str(ctx, task->space, index);
  if (trace_json) *trace_json = NULL;
  return gen_run(ctx, gt->g, gt->g->name, gt->shape, gt->target, (tune_space *)task->space, idx);
}

int drv_gen_tune(tec_ctx *ctx, const tec_generator *g, const char *shape, const char *target, int repeat,
                 const drv_tune_args *a) {
  tune_task task;
  if (a->autosched) {
    lower_func *own;
    double flops = 0;
    sch_schedule *s = gen_fresh(ctx, g, shape, target, &own, &flops);
    if (!s || tune_task_auto(s, target, NULL, &task) != 0) { /* the task only reads s */
      fprintf(stderr, "tec tune: %s\n", tec_ctx_error(ctx));
      return 2;
    }
    task.flops = flops;
    return drv_tune_task(ctx, &task, g->name, shape, target, repeat, a, s);
  }
  tune_space *sp = tune_space_new(ctx);
  if (sp) sp->name = g->name;
  double flops = 0;
  lower_func *f0 = sp ? gen_run_flops(ctx, g, g->name, shape, target, sp, NULL, &flops) : NULL;
  const tec_target *tv = f0 ? tec_target_parse(ctx, target) : NULL;
  if (tv && sp->nknobs == 0)
    tec_ctx_set_error(ctx, "generator %s declares no knobs to tune (tec_gen_knob in the generator, as AutoTVM's "
                      "cfg.define_knob); --auto tunes the auto-scheduler's space for its program instead", g->name);
  else if (tv && sp->nknobs > 64)
    tec_ctx_set_error(ctx, "generator %s declares %d knobs; at most 64", g->name, sp->nknobs);
  const char *prob = tv && sp->nknobs > 0 && sp->nknobs <= 64 ? gen_problem(ctx, g, shape, f0) : NULL;
  gen_task *gt = prob ? tec_ctx_alloc(ctx, sizeof *gt) : NULL;
  if (!gt) {
    fprintf(stderr, "tec tune: %s\n", tec_ctx_error(ctx));
    return 2;
  }
  *gt = (gen_task){g, shape, target};
  memset(&task, 0, sizeof task);
  task.template_name = g->name;
  task.problem = prob;
  task.workload = tec_ctx_printf(ctx, "%s %s", g->name, task.problem);
  task.target = tv->str, task.target_arg = target, task.target_value = tv;
  task.space = sp;
  task.flops = flops;
  task.default_index = tune_space_default_index(sp);
  task.lower = gen_task_lower;
  task.user = gt;
  return drv_tune_task(ctx, &task, g->name, shape, target, repeat, a, NULL);
}

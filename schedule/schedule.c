/* schedule.c — creating a schedule (one stage per op reachable from the outputs), looking up
 * stages and iteration variables, and the helpers every primitive uses to validate its
 * arguments and record what it did. */
#include <string.h>
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"

sch_iter *sch_iter_new(sch_stage *st, const char *name, sch_iter_kind kind) {
  tec_ctx *ctx = st->sched->ctx;
  sch_iter *it = tec_ctx_alloc(ctx, sizeof *it);
  if (!it) return NULL;
  it->name = tec_ctx_strdup(ctx, name);
  it->var = ir_var(ctx, name, TEC_INDEX, kind == SCH_ITER_REDUCE ? IR_VAR_REDUCE : IR_VAR_INDEX);
  it->kind = kind;
  it->stage = st;
  return it->var ? it : NULL;
}

static sch_stage *stage_new(sch_schedule *s, te_tensor *t) {
  tec_ctx *ctx = s->ctx;
  sch_stage *st = tec_ctx_alloc(ctx, sizeof *st);
  if (!st) return NULL;
  st->tensor = t;
  st->sched = s;
  st->attach = SCH_ATTACH_ROOT;
  if (t->op != TE_COMPUTE) return st;
  st->body = t->body;
  st->ninputs = t->ninputs;
  st->inputs = (const te_tensor **)t->inputs;
  st->nroot = t->ndim + t->nreduce;
  st->root = tec_ctx_alloc(ctx, sizeof *st->root * (size_t)st->nroot);
  if (!st->root || tec_grow(ctx, (void **)&st->leaf, &st->cap_leaf, st->nroot, sizeof *st->leaf))
    return NULL;
  for (int i = 0; i < st->nroot; i++) {
    int red = i >= t->ndim;
    const ir_expr *v = red ? t->reduce_axis[i - t->ndim] : t->axis[i];
    sch_iter *it = tec_ctx_alloc(ctx, sizeof *it);
    if (!it) return NULL;
    it->var = v; /* root iters are the op's own axis variables */
    it->name = v->name;
    it->kind = red ? SCH_ITER_REDUCE : SCH_ITER_DATA;
    it->dom_min = v->dom_min;
    it->dom_extent = v->dom_extent;
    if (t->scan && i == 0) { /* the update's steps [L, T): init's are copied first */
      it->dom_min = ir_int(ctx, t->scan->ninit);
      it->dom_extent = ir_sub(v->dom_extent, it->dom_min);
    }
    it->stage = st;
    st->root[i] = it;
    st->leaf[st->nleaf++] = it;
  }
  return st;
}

sch_schedule *sch_create(tec_ctx *ctx, int nout, te_tensor *const *outs) {
  if (!ctx) return NULL;
  if (nout < 1 || !outs) {
    tec_ctx_set_error(ctx, "sch_create: needs at least one output tensor");
    return NULL;
  }
  for (int i = 0; i < nout; i++) {
    if (!outs[i]) {
      tec_ctx_set_error(ctx, "sch_create: output %d is NULL", i);
      return NULL;
    }
    if (outs[i]->op != TE_COMPUTE) {
      tec_ctx_set_error(ctx, "sch_create: output %d ('%s') is a placeholder; outputs must be "
                             "compute ops", i, outs[i]->name);
      return NULL;
    }
  }
  sch_schedule *s = tec_ctx_alloc(ctx, sizeof *s);
  if (!s) return NULL;
  s->ctx = ctx;
  s->precompute = 1;
  s->trace.version = SCH_TRACE_VERSION;
  s->nout = nout;
  s->outputs = tec_ctx_alloc(ctx, sizeof *s->outputs * (size_t)nout);
  if (!s->outputs) return NULL;
  memcpy(s->outputs, outs, sizeof *s->outputs * (size_t)nout);
  te_tensor **order;
  int n = te_topo_order(ctx, nout, outs, &order);
  if (n < 0) return NULL;
  /* stages, loops, traces, buffers and the lowered IR are named by tensor names */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(order[i]->name, order[j]->name) == 0) {
        tec_ctx_set_error(ctx, "sch_create: two different tensors are called '%s' (%s and %s); "
                               "tensor names must be unique in a schedule (stages, traces, "
                               "buffers and the lowered IR name them): rename one",
                          order[i]->name, order[j]->op == TE_PLACEHOLDER ? "a placeholder" : "a compute op",
                          order[i]->op == TE_PLACEHOLDER ? "a placeholder" : "a compute op");
        return NULL;
      }
  if (tec_grow(ctx, (void **)&s->stages, &s->cap_stage, n, sizeof *s->stages)) return NULL;
  for (int i = 0; i < n; i++) {
    /* a multi-output op has one stage, its first output's: the others are written there */
    if (order[i]->nout > 1 && order[i]->value_index > 0) continue;
    sch_stage *st = stage_new(s, order[i]);
    if (!st) return NULL;
    for (int j = 0; j < nout; j++)
      st->is_output |= outs[j] == order[i] ||
                       (outs[j]->nout > 1 && outs[j]->outputs[0] == order[i]);
    s->stages[s->nstage++] = st;
  }
  sch_scan_default_attach(s);
  return s;
}

sch_stage *sch_stage_new(sch_schedule *s, te_tensor *t) { return stage_new(s, t); }

sch_stage *sch_stage_of(sch_schedule *s, const te_tensor *t) {
  if (!s || !t) return NULL;
  if (t->nout > 1) t = t->outputs[0]; /* one stage for all outputs of an op */
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i]->tensor == t) {
      if (t->op != TE_COMPUTE) {
        tec_ctx_set_error(s->ctx, "sch_stage_of: '%s' is a placeholder (an input); it has no "
                                  "loops to schedule", t->name);
        return NULL;
      }
      return s->stages[i];
    }
  tec_ctx_set_error(s->ctx, "sch_stage_of: tensor '%s' is not computed by this schedule (it "
                            "is not reachable from its outputs)", t->name);
  return NULL;
}

sch_iter *sch_axis(sch_stage *st, int i) {
  if (!st) return NULL;
  if (st->tensor->ndim == 0) {
    tec_ctx_set_error(st->sched->ctx, "sch_axis: stage '%s' is a scalar (rank 0): it has no "
                                      "data axes", st->tensor->name);
    return NULL;
  }
  if (i < 0 || i >= st->tensor->ndim) {
    tec_ctx_set_error(st->sched->ctx, "sch_axis: stage '%s' has %d axes (0 to %d), asked for %d",
                      st->tensor->name, st->tensor->ndim, st->tensor->ndim - 1, i);
    return NULL;
  }
  return st->root[i];
}

sch_iter *sch_reduce_axis(sch_stage *st, int i) {
  if (!st) return NULL;
  int nred = st->nroot - st->tensor->ndim;
  if (i < 0 || i >= nred) {
    tec_ctx_set_error(st->sched->ctx,
                      "sch_reduce_axis: stage '%s' has %d reduce axes, asked for %d",
                      st->tensor->name, nred, i);
    return NULL;
  }
  return st->root[st->tensor->ndim + i];
}

/* "who: " or nothing */
static const char *who_prefix(tec_ctx *ctx, const char *who) {
  return who ? tec_ctx_printf(ctx, "%s: ", who) : "";
}

sch_stage *sch_find_stage(sch_schedule *s, const char *who, const char *name) {
  sch_stage *found = NULL;
  int count = 0;
  for (int i = 0; name && i < s->nstage; i++)
    if (strcmp(s->stages[i]->tensor->name, name) == 0) found = s->stages[i], count++;
  if (count == 1) return found;
  if (count > 1) {
    tec_ctx_set_error(s->ctx, "%sthe schedule has %d tensors called '%s'; a trace names "
                              "tensors by name, so they must differ",
                      who_prefix(s->ctx, who), count, name);
    return NULL;
  }
  const char *all = "";
  for (int i = 0; i < s->nstage; i++)
    all = tec_ctx_printf(s->ctx, "%s%s'%s'", all, i ? ", " : "", s->stages[i]->tensor->name);
  tec_ctx_set_error(s->ctx, "%sthe schedule has no tensor '%s' (it has %s)",
                    who_prefix(s->ctx, who), name ? name : "(null)", all);
  return NULL;
}

sch_iter *sch_find_leaf(sch_stage *st, const char *who, const char *name) {
  tec_ctx *ctx = st->sched->ctx;
  sch_iter *found = NULL;
  int count = 0;
  for (int i = 0; name && i < st->nleaf; i++)
    if (strcmp(st->leaf[i]->name, name) == 0) found = st->leaf[i], count++;
  if (count == 1) return found;
  if (count > 1)
    tec_ctx_set_error(ctx, "%sstage '%s' has %d loops called '%s'; a trace names loops by "
                           "name, so they must differ",
                      who_prefix(ctx, who), st->tensor->name, count, name);
  else
    tec_ctx_set_error(ctx, "%sstage '%s' has no loop '%s' (loops: %s)", who_prefix(ctx, who),
                      st->tensor->name, name ? name : "(null)", sch_stage_str(st));
  return NULL;
}

sch_iter *sch_leaf_named(sch_stage *st, const char *name) {
  if (!st || !name) return NULL;
  return sch_find_leaf(st, "sch_leaf_named", name);
}

const char *sch_stage_str(const sch_stage *st) {
  tec_ctx *ctx = st->sched->ctx;
  const char *s = "";
  for (int i = 0; i < st->nleaf; i++)
    s = tec_ctx_printf(ctx, "%s%s%s", s, i ? ", " : "", st->leaf[i]->name);
  return s;
}

int sch_leaf_index(const sch_stage *st, const sch_iter *it) {
  for (int i = 0; i < st->nleaf; i++)
    if (st->leaf[i] == it) return i;
  return -1;
}

/* "'a', 'b', 'c'": the names of st's leaves 0..pos, for a message listing the legal loops. */
const char *sch_leaves_upto(tec_ctx *ctx, const sch_stage *st, int pos) {
  const char *legal = "";
  for (int i = 0; i <= pos && i < st->nleaf && legal; i++)
    legal = tec_ctx_printf(ctx, "%s%s'%s'", legal, i ? ", " : "", st->leaf[i]->name);
  return legal ? legal : "?";
}

/* Describes why `it` is not a usable leaf of st, as an error for primitive `who`. */
int sch_null_arg(const char *who, const char *what, tec_ctx *ctx) {
  if (ctx && !tec_ctx_error(ctx))
    tec_ctx_set_error(ctx, "%s: the %s is NULL (give the result of sch_stage_of)", who, what);
  return -1;
}

tec_ctx *sch_iter_ctx(const sch_iter *it) {
  return it && it->stage && it->stage->sched ? it->stage->sched->ctx : NULL;
}

int sch_check_leaf(const char *who, sch_stage *st, sch_iter *it) {
  if (!st) return -1;
  tec_ctx *ctx = st->sched->ctx;
  if (!it) {
    if (!tec_ctx_error(ctx))
      tec_ctx_set_error(ctx, "%s: the axis given for stage '%s' is NULL", who, st->tensor->name);
    return -1;
  }
  if (it->stage != st)
    return tec_ctx_set_error(ctx, "%s: axis '%s' does not belong to stage '%s' (it is an axis "
                                  "of stage '%s'%s); use an axis of '%s': %s",
                             who, it->name, st->tensor->name, it->stage->tensor->name,
                             it->stage->sched != st->sched ? " of another schedule" : "",
                             st->tensor->name, sch_stage_str(st));
  if (st->tensor->ext) return sch_refuse_extern(who, st, it->name);
  if (sch_leaf_index(st, it) < 0)
    return tec_ctx_set_error(ctx, "%s: axis '%s' of stage '%s' was already split or fused "
                                  "away; the current loops are: %s",
                             who, it->name, st->tensor->name, sch_stage_str(st));
  return 0;
}

int sch_add_relation(sch_stage *st, sch_relation r) {
  /* scan.c follows the recurrent axis's loops in fixed arrays (64 loops, 128 leaves): a scan
   * stage takes at most 30 splits and fuses, refused beyond, never checked partially */
  if (st->tensor->scan && st->nrel >= 30)
    return tec_ctx_set_error(st->sched->ctx, "%s: stage '%s' is a scan (te_scan) with 30 splits "
                                             "and fuses already; a scan takes at most 30, so the "
                                             "order of its recurrent axis's loops can be checked",
                             r.kind == SCH_REL_SPLIT ? "split" : "fuse", st->tensor->name);
  if (tec_grow(st->sched->ctx, (void **)&st->rel, &st->cap_rel, st->nrel + 1, sizeof *st->rel))
    return -1;
  st->rel[st->nrel++] = r;
  return 0;
}

/* Replaces leaf position pos by n iters (n = 0 removes it). */
int sch_replace_leaf(sch_stage *st, int pos, int n, sch_iter *const *its) {
  int nn = st->nleaf - 1 + n;
  if (tec_grow(st->sched->ctx, (void **)&st->leaf, &st->cap_leaf, nn > 0 ? nn : 1,
               sizeof *st->leaf))
    return -1;
  memmove(st->leaf + pos + n, st->leaf + pos + 1,
          sizeof *st->leaf * (size_t)(st->nleaf - pos - 1));
  for (int i = 0; i < n; i++) st->leaf[pos + i] = its[i];
  st->nleaf = nn;
  return 0;
}

int sch_set_precompute(sch_schedule *s, int enable) {
  if (!s) return -1;
  s->precompute = enable != 0;
  return sch_trace_add(s, SCH_PRIM_SET_PRECOMPUTE, (sch_arg[]){{.i = enable}});
}

int sch_set_trace_version(sch_schedule *s, int version) {
  if (!s) return -1;
  if (version != 1 && version != SCH_TRACE_VERSION)
    return tec_ctx_set_error(s->ctx, "sch_set_trace_version: version %d; the versions are 1 "
                                     "(rfactor keeps the loop order) and %d (TVM's order)",
                             version, SCH_TRACE_VERSION);
  for (int i = 0; i < s->trace.n; i++)
    if (s->trace.rec[i].kind == SCH_PRIM_RFACTOR && version != s->trace.version)
      return tec_ctx_set_error(s->ctx, "sch_set_trace_version: the schedule has already "
                                       "factored a reduction (record %d) in version %d's order; "
                                       "set the version before the first rfactor", i,
                               s->trace.version == 1 ? 1 : SCH_TRACE_VERSION);
  s->trace.version = version;
  return 0;
}

/* attach.c — where a stage is computed: compute_at, compute_inline, compute_root.
 *
 *   compute_at(P, C, C.j.outer):  for (i ...) for (j.outer ...) { P (just this tile) ; C tile }
 *   compute_inline(P):            C = f(P[i]) with P[i] = g(A[i])  ->  C = f(g(A[i]))
 *   store_at(P, C, C.i) after compute_at(P, C, C.j.outer):
 *                                 for (i ...) { P's buffer ; for (j.outer ...) { P ; C tile } }
 * Splitting the loop a stage is computed at moves it to the inner loop (the same work per
 * iteration); fusing it, to the fused loop.
 * The checks live here; bound inference (lower/bound.c) finds the region each attach needs. */
#include <string.h>
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"

/* 1 if stage c reads t, directly or through stages that are inlined into it */
static int reads_through_inline(const sch_stage *c, const te_tensor *t, int depth) {
  if (depth > 100) return 0;
  for (int k = 0; k < c->ninputs; k++) {
    if (c->inputs[k] == t) return 1;
    for (int i = 0; i < c->sched->nstage; i++) {
      const sch_stage *x = c->sched->stages[i];
      if (x->tensor == c->inputs[k] && x->attach == SCH_ATTACH_INLINE &&
          reads_through_inline(x, t, depth + 1))
        return 1;
    }
  }
  return 0;
}

/* The stages that compute something from t (inlined readers count through their readers). */
static int effective_readers(sch_schedule *s, const te_tensor *t, sch_stage **out, int max) {
  int n = 0;
  for (int i = 0; i < s->nstage; i++) {
    sch_stage *st = s->stages[i];
    if (st->attach == SCH_ATTACH_INLINE || !reads_through_inline(st, t, 0)) continue;
    if (n < max) out[n] = st;
    n++;
  }
  return n;
}

static int check_producer(const char *who, sch_stage *p) {
  if (!p) return -1;
  tec_ctx *ctx = p->sched->ctx;
  if (p->tensor->op != TE_COMPUTE)
    return tec_ctx_set_error(ctx, "%s: '%s' is a placeholder; only computed stages can move",
                             who, p->tensor->name);
  if (p->tensor->scan) return sch_scan_refuse(who, p->sched, p->tensor);
  if (p->is_output)
    return tec_ctx_set_error(ctx, "%s: '%s' is an output of the schedule; outputs are computed "
                                  "at root (schedule a cache_write stage instead)",
                             who, p->tensor->name);
  if (p->tensor->nout > 1)
    return tec_ctx_set_error(ctx, "%s: '%s' is the stage of a multi-output op (%d outputs); "
                                  "such an op is computed at root (compute_at and compute_inline "
                                  "of it are not supported)",
                             who, p->tensor->name, p->tensor->nout);
  return 0;
}

/* 1 if stage a is (transitively) attached inside stage b */
static int attached_within(const sch_stage *a, const sch_stage *b) {
  for (int depth = 0; a && depth < 1000; depth++) {
    if (a == b) return 1;
    a = a->attach == SCH_ATTACH_SCOPE ? a->attach_stage : NULL;
  }
  return 0;
}

/* -1 with an error for primitive `who` unless `at` is a current loop of consumer c */
int sch_consumer_loop(const char *who, sch_stage *c, sch_iter *at) {
  tec_ctx *ctx = c->sched->ctx;
  if (!at) {
    if (!tec_ctx_error(ctx))
      tec_ctx_set_error(ctx, "%s: the loop of stage '%s' is NULL", who, c->tensor->name);
    return -1;
  }
  if (at->stage != c)
    return tec_ctx_set_error(ctx, "%s: loop '%s' is not a loop of stage '%s' (it belongs to "
                                  "'%s'); pick one of: %s",
                             who, at->name, c->tensor->name, at->stage->tensor->name,
                             sch_stage_str(c));
  return sch_check_leaf(who, c, at);
}

int sch_compute_at(sch_stage *p, sch_stage *c, sch_iter *at) {
  if (!p || !c) {
    tec_ctx *ctx = p ? p->sched->ctx : c ? c->sched->ctx : sch_iter_ctx(at);
    return sch_null_arg("compute_at", p ? "consumer stage" : "stage", ctx);
  }
  tec_ctx *ctx = p->sched->ctx;
  if (check_producer("compute_at", p)) return -1;
  if (p == c)
    return tec_ctx_set_error(ctx, "compute_at: stage '%s' cannot be computed inside itself",
                             p->tensor->name);
  if (c->sched != p->sched)
    return tec_ctx_set_error(ctx, "compute_at: stages '%s' and '%s' belong to different "
                                  "schedules", p->tensor->name, c->tensor->name);
  int reads = reads_through_inline(c, p->tensor, 0);
  sch_stage *rd[16];
  int nr = effective_readers(p->sched, p->tensor, rd, 16);
  /* or a reader is computed inside c. Every reader must end up inside the loop; they may be
   * attached in any order, so tec_lower checks that (lower/bound.c) */
  for (int i = 0; i < nr && i < 16 && !reads; i++) reads = attached_within(rd[i], c);
  if (!reads) {
    const char *names = "";
    for (int i = 0; i < nr && i < 16; i++)
      names = tec_ctx_printf(ctx, "%s%s'%s'", names, i ? ", " : "", rd[i]->tensor->name);
    return tec_ctx_set_error(ctx, "compute_at: stage '%s' does not read '%s'; compute '%s' at a "
                                  "loop of a stage that reads it (%s)",
                             c->tensor->name, p->tensor->name, p->tensor->name,
                             nr ? names : "none");
  }
  if (c->attach == SCH_ATTACH_INLINE)
    return tec_ctx_set_error(ctx, "compute_at: stage '%s' is inlined and has no loops; attach "
                                  "'%s' to a stage that keeps its loops",
                             c->tensor->name, p->tensor->name);
  if (sch_consumer_loop("compute_at", c, at)) return -1;
  if (attached_within(c, p))
    return tec_ctx_set_error(ctx, "compute_at: stage '%s' is already computed inside '%s'; "
                                  "attaching '%s' to it would make a cycle",
                             c->tensor->name, p->tensor->name, p->tensor->name);
  p->attach = SCH_ATTACH_SCOPE;
  p->attach_stage = c;
  p->attach_iter = at;
  p->store_iter = NULL;
  p->store_root = 0;
  sch_drop_with(p);
  return sch_trace_add(p->sched, SCH_PRIM_COMPUTE_AT,
                       (sch_arg[]){{.stage = p}, {.stage = c}, {.iter = at}});
}

int sch_compute_inline(sch_stage *p) {
  if (!p) return -1;
  tec_ctx *ctx = p->sched->ctx;
  if (check_producer("compute_inline", p)) return -1;
  if (p->tensor->ext) return sch_refuse_extern("compute_inline", p, NULL);
  if (sch_check_extern_reader(p->sched, "compute_inline", p->tensor, -1, NULL)) return -1;
  if (p->body && p->body->kind == IR_REDUCE)
    return tec_ctx_set_error(ctx, "compute_inline: '%s' is a reduction; only element-wise stages "
                                  "can be inlined (compute it at root or with compute_at)",
                             p->tensor->name);
  for (int i = 0; i < p->sched->nstage; i++) {
    sch_stage *o = p->sched->stages[i];
    if (o->attach == SCH_ATTACH_SCOPE && o->attach_stage == p)
      return tec_ctx_set_error(ctx, "compute_inline: stage '%s' is computed at a loop of '%s'; "
                                    "inlining '%s' would remove that loop (move '%s' first)",
                               o->tensor->name, p->tensor->name, p->tensor->name,
                               o->tensor->name);
  }
  /* an inlined stage has no loops or buffer: refuse rather than drop their annotations */
  for (int i = 0; i < p->nleaf; i++) {
    const sch_iter *it = p->leaf[i];
    const char *what = it->for_kind != IR_FOR_SERIAL ? ir_for_kind_name(it->for_kind)
                       : it->npragma                ? "marked with a pragma"
                       : it->nprefetch              ? "marked with a prefetch"
                                                    : NULL;
    if (what)
      return tec_ctx_set_error(ctx, "compute_inline: loop '%s' of stage '%s' is %s; an inlined "
                                    "stage has no loops, so that would be lost (annotate the "
                                    "loops of its readers instead)",
                               it->name, p->tensor->name, what);
  }
  if (p->nalign)
    return tec_ctx_set_error(ctx, "compute_inline: stage '%s' has a storage_align; an inlined "
                                  "stage has no buffer, so that would be lost",
                             p->tensor->name);
  p->attach = SCH_ATTACH_INLINE;
  p->attach_stage = NULL;
  p->attach_iter = NULL;
  p->store_iter = NULL;
  p->store_root = 0;
  sch_drop_with(p);
  return sch_trace_add(p->sched, SCH_PRIM_COMPUTE_INLINE, (sch_arg[]){{.stage = p}});
}

int sch_compute_root(sch_stage *p) {
  if (!p) return -1;
  if (p->tensor->op != TE_COMPUTE)
    return tec_ctx_set_error(p->sched->ctx, "compute_root: '%s' is a placeholder",
                             p->tensor->name);
  p->attach = SCH_ATTACH_ROOT;
  p->attach_stage = NULL;
  p->attach_iter = NULL;
  p->store_iter = NULL;
  p->store_root = 0;
  sch_drop_with(p);
  return sch_trace_add(p->sched, SCH_PRIM_COMPUTE_ROOT, (sch_arg[]){{.stage = p}});
}

void sch_move_attachments(sch_stage *st, const sch_iter *from, sch_iter *to) {
  for (int i = 0; i < st->sched->nstage; i++) {
    sch_stage *p = st->sched->stages[i];
    if (p->attach == SCH_ATTACH_SCOPE && p->attach_stage == st && p->attach_iter == from)
      p->attach_iter = to;
  }
}

/* -1 with an error for store_at/store_root unless p is computed with compute_at */
static int check_attached(const char *who, sch_stage *p) {
  if (check_producer(who, p)) return -1;
  if (p->attach == SCH_ATTACH_SCOPE) return 0;
  return tec_ctx_set_error(p->sched->ctx,
                           "%s: stage '%s' is computed %s; %s keeps the buffer of a stage "
                           "computed with compute_at at that loop or outside it: call "
                           "compute_at('%s', ...) first",
                           who, p->tensor->name,
                           p->attach == SCH_ATTACH_INLINE ? "inline (it has no buffer)"
                                                          : "at root (its buffer is already "
                                                            "the outermost)",
                           who, p->tensor->name);
}

int sch_store_root(sch_stage *p) {
  if (!p) return -1;
  if (check_attached("store_root", p)) return -1;
  p->store_iter = NULL;
  p->store_root = 1;
  return sch_trace_add(p->sched, SCH_PRIM_STORE_ROOT, (sch_arg[]){{.stage = p}});
}

int sch_store_at(sch_stage *p, sch_stage *c, sch_iter *at) {
  if (!p || !c) {
    tec_ctx *ctx = p ? p->sched->ctx : c ? c->sched->ctx : sch_iter_ctx(at);
    return sch_null_arg("store_at", p ? "consumer stage" : "stage", ctx);
  }
  tec_ctx *ctx = p->sched->ctx;
  if (check_attached("store_at", p)) return -1;
  if (c != p->attach_stage)
    return tec_ctx_set_error(ctx, "store_at: stage '%s' is computed at a loop of '%s', not of "
                                  "'%s'; store it at a loop of '%s' at or outside '%s': %s",
                             p->tensor->name, p->attach_stage->tensor->name, c->tensor->name,
                             p->attach_stage->tensor->name, p->attach_iter->name,
                             sch_stage_str(p->attach_stage));
  if (sch_consumer_loop("store_at", c, at)) return -1;
  int spos = sch_leaf_index(c, at), cpos = sch_leaf_index(c, p->attach_iter);
  if (spos > cpos)
    return tec_ctx_set_error(ctx, "store_at: loop '%s' of '%s' is inside loop '%s', where '%s' "
                                  "is computed; its buffer must live at the compute loop or a "
                                  "loop outside it: one of %s",
                             at->name, c->tensor->name, p->attach_iter->name, p->tensor->name,
                             sch_leaves_upto(ctx, c, cpos));
  p->store_iter = at == p->attach_iter ? NULL : at;
  p->store_root = 0;
  return sch_trace_add(p->sched, SCH_PRIM_STORE_AT,
                       (sch_arg[]){{.stage = p}, {.stage = c}, {.iter = at}});
}

void sch_move_stores(sch_stage *st, const sch_iter *from, sch_iter *to) {
  for (int i = 0; i < st->sched->nstage; i++) {
    sch_stage *p = st->sched->stages[i];
    if (p->attach == SCH_ATTACH_SCOPE && p->attach_stage == st && p->store_iter == from)
      p->store_iter = to;
  }
}

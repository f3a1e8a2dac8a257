/* replay.c — applying records: the dispatcher the primitive list makes (one adapter per
 * primitive, from its arguments as objects to its C call), and sch_trace_replay, which turns a
 * record's names back into the objects of a fresh schedule and calls it.
 *
 *   {split, stage "C", iter "i", factor 32, outer "i.outer", inner "i.inner"}
 *     -> sch_split(<stage of tensor "C">, <leaf "i" of it>, 32, &o, &in),
 *        then o and in must be called "i.outer" and "i.inner" as recorded. */
#include <limits.h>
#include <string.h>
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"

/* ---- one adapter per primitive; a[k] is field k of its operand list ---- */
typedef int (*invoke_fn)(sch_schedule *s, sch_arg *a);

static int as_int(sch_schedule *s, const char *prim, const char *field, int64_t v, int *out) {
  if (v < INT_MIN || v > INT_MAX)
    return tec_ctx_set_error(s->ctx, "%s: %s %lld does not fit an int", prim, field,
                             (long long)v);
  *out = (int)v;
  return 0;
}

static int inv_split(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_split(a[0].stage, a[1].iter, a[2].i, &a[3].iter, &a[4].iter);
}
static int inv_split_nparts(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_split_nparts(a[0].stage, a[1].iter, a[2].i, &a[3].iter, &a[4].iter);
}
static int inv_split_tail(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_split_tail(a[0].stage, a[1].iter, a[2].i, a[3].i, &a[4].iter, &a[5].iter);
}
static int inv_split_expr(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_split_expr(a[0].stage, a[1].iter, a[2].value, &a[3].iter, &a[4].iter);
}
static int inv_fuse(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_fuse(a[0].stage, a[1].iter, a[2].iter, &a[3].iter);
}
static int inv_reorder(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_reorder(a[0].stage, a[1].n, a[1].iters);
}
static int inv_tile(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_tile(a[0].stage, a[1].iter, a[2].iter, a[3].i, a[4].i, &a[5].iter, &a[6].iter,
                  &a[7].iter, &a[8].iter);
}
static int inv_compute_at(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_compute_at(a[0].stage, a[1].stage, a[2].iter);
}
static int inv_store_at(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_store_at(a[0].stage, a[1].stage, a[2].iter);
}
static int inv_store_root(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_store_root(a[0].stage);
}
static int inv_compute_with(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_compute_with(a[0].stage, a[1].stage, a[2].iter);
}
static int inv_compute_inline(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_compute_inline(a[0].stage);
}
static int inv_compute_root(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_compute_root(a[0].stage);
}
static int inv_cache_read(sch_schedule *s, sch_arg *a) {
  a[3].tensor = sch_cache_read(s, a[0].tensor, a[1].str, a[2].n, a[2].tensors);
  return a[3].tensor ? 0 : -1;
}
static int inv_cache_write(sch_schedule *s, sch_arg *a) {
  a[2].tensor = sch_cache_write(s, a[0].tensor, a[1].str);
  return a[2].tensor ? 0 : -1;
}
static int inv_rfactor(sch_schedule *s, sch_arg *a) {
  int fa = 0;
  if (as_int(s, "rfactor", "factor_axis", a[2].i, &fa)) return -1;
  a[3].tensor = sch_rfactor(s, a[0].tensor, a[1].iter, fa);
  return a[3].tensor ? 0 : -1;
}
static int inv_parallel(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_parallel(a[0].stage, a[1].iter);
}
static int inv_vectorize(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_vectorize(a[0].stage, a[1].iter);
}
static int inv_unroll(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_unroll(a[0].stage, a[1].iter);
}
static int inv_pragma(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_pragma(a[0].stage, a[1].iter, a[2].str, a[3].value);
}
static int inv_storage_align(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_storage_align(a[0].stage, a[1].iter, a[2].i, a[3].i);
}
static int inv_prefetch(sch_schedule *s, sch_arg *a) {
  (void)s;
  return sch_prefetch(a[0].stage, a[1].tensor, a[2].iter, a[3].i);
}
static int inv_set_precompute(sch_schedule *s, sch_arg *a) {
  int on = 0;
  if (as_int(s, "set_precompute", "enable", a[0].i, &on)) return -1;
  return sch_set_precompute(s, on);
}

static const invoke_fn invokers[SCH_PRIM_COUNT] = {
#define SCH_INVOKE_(kind, name, operands) [SCH_PRIM_##kind] = inv_##name,
    SCH_FOR_EACH_PRIM(SCH_INVOKE_)
#undef SCH_INVOKE_
};

int sch_prim_invoke(sch_schedule *s, sch_prim_kind k, sch_arg *a) {
  if (!s) return -1;
  if ((int)k < 0 || k >= SCH_PRIM_COUNT)
    return tec_ctx_set_error(s->ctx, "no primitive of kind %d", (int)k);
  return invokers[k](s, a);
}

/* ---- resolving a record's names in a schedule ---- */

/* The stage of the tensor called name (computed only if `computed`), or NULL with an error. */
static sch_stage *stage_named(sch_schedule *s, const char *name, int computed) {
  sch_stage *found = sch_find_stage(s, NULL, name);
  if (found && computed && found->tensor->op != TE_COMPUTE) {
    tec_ctx_set_error(s->ctx, "'%s' is a placeholder here, not a computed stage", name);
    return NULL;
  }
  return found;
}

static const ir_expr *value_of(tec_ctx *ctx, const sch_operand *o) {
  switch (o->vkind) {
  case SCH_VALUE_INT: return ir_int_t(ctx, o->vtype, o->i);
  case SCH_VALUE_FLOAT: return ir_float_t(ctx, o->vtype, o->f);
  default: return NULL;
  }
}

/* Fills a from record r's names (inputs only). 0, or -1 with an error (no prefix). */
static int resolve(sch_schedule *s, const sch_record *r, const sch_opd_spec *sp, int ns,
                   sch_arg *a) {
  tec_ctx *ctx = s->ctx;
  if (r->nopd != ns)
    return tec_ctx_set_error(ctx, "it has %d fields, %s takes %d", r->nopd,
                             sch_prim_name(r->kind), ns);
  for (int k = 0; k < ns; k++) {
    const sch_operand *o = &r->opd[k];
    sch_stage *owner = NULL;
    if (sp[k].out) continue;
    if (sp[k].owner >= 0) {
      owner = a[sp[k].owner].stage;
      if (!owner && !(owner = stage_named(s, r->opd[sp[k].owner].name, 1))) return -1;
    }
    switch (sp[k].type) {
    case SCH_T_STAGE:
      if (!(a[k].stage = stage_named(s, o->name, 1))) return -1;
      break;
    case SCH_T_TENSOR: {
      sch_stage *st = stage_named(s, o->name, 0);
      if (!st) return -1;
      a[k].tensor = st->tensor;
      break;
    }
    case SCH_T_ITER:
      if (!(a[k].iter = sch_find_leaf(owner, NULL, o->name))) return -1;
      break;
    case SCH_T_AXIS:
      if (!(a[k].iter = o->i >= 0 && o->i <= INT_MAX ? sch_axis(owner, (int)o->i) : NULL)) {
        if (!tec_ctx_error(ctx) || o->i < 0 || o->i > INT_MAX)
          tec_ctx_set_error(ctx, "stage '%s' has no data axis %lld", owner->tensor->name,
                            (long long)o->i);
        return -1;
      }
      break;
    case SCH_T_ITERS:
    case SCH_T_TENSORS: {
      void **list = tec_ctx_alloc(ctx, sizeof(void *) * (size_t)(o->n ? o->n : 1));
      if (!list) return -1;
      for (int j = 0; j < o->n; j++) {
        if (sp[k].type == SCH_T_ITERS) {
          if (!(list[j] = sch_find_leaf(owner, NULL, o->names[j]))) return -1;
        } else {
          sch_stage *st = stage_named(s, o->names[j], 0);
          if (!st) return -1;
          list[j] = st->tensor;
        }
      }
      a[k].n = o->n;
      if (sp[k].type == SCH_T_ITERS) a[k].iters = (sch_iter *const *)list;
      else a[k].tensors = (te_tensor *const *)list;
      break;
    }
    case SCH_T_INT: a[k].i = o->i; break;
    case SCH_T_STR: a[k].str = o->name; break;
    case SCH_T_VALUE:
      a[k].value = value_of(ctx, o);
      if (o->vkind != SCH_VALUE_NONE && !a[k].value) return -1;
      break;
    }
  }
  return 0;
}

/* What the call made must carry the recorded names (else later records would miss them). */
static int check_created(sch_schedule *s, const sch_record *r, const sch_opd_spec *sp, int ns,
                         const sch_arg *a) {
  for (int k = 0; k < ns; k++) {
    if (!sp[k].out) continue;
    const char *got = sp[k].type == SCH_T_TENSOR ? (a[k].tensor ? a[k].tensor->name : NULL)
                                                 : (a[k].iter ? a[k].iter->name : NULL);
    if (!got || strcmp(got, r->opd[k].name) != 0)
      return tec_ctx_set_error(s->ctx, "it made %s '%s' where the trace has '%s' (the "
                                       "declaration differs from the traced one)",
                               sp[k].type == SCH_T_TENSOR ? "tensor" : "loop",
                               got ? got : "(nothing)", r->opd[k].name);
  }
  return 0;
}

int sch_trace_replay(sch_schedule *fresh, const sch_trace *t) {
  if (!fresh) return -1;
  tec_ctx *ctx = fresh->ctx;
  if (!t) return tec_ctx_set_error(ctx, "sch_trace_replay: the trace is NULL");
  if (t == &fresh->trace)
    return tec_ctx_set_error(ctx, "sch_trace_replay: the trace is the schedule's own; replay "
                                  "it onto a fresh schedule (sch_create) of the declaration");
  if (sch_trace_check_printable(ctx, t, "sch_trace_replay")) return -1;
  /* a version 1 trace factors reductions in its own order, and so does fresh from now on */
  if (t->version == 1 && sch_set_trace_version(fresh, 1)) return -1;
  tec_err_scope sc;
  tec_err_begin(ctx, &sc);
  int rc = 0;
  for (int i = 0; i < t->n && !rc; i++) {
    const sch_record *r = &t->rec[i];
    sch_opd_spec sp[SCH_MAX_OPD];
    int ns = sch_prim_spec(r->kind, sp);
    sch_arg a[SCH_MAX_OPD];
    memset(a, 0, sizeof a);
    unsigned long mark = tec_ctx_error_count(ctx);
    if (!ns) {
      TEC_INTERNAL(ctx, "a record of no known primitive");
      rc = -1;
    } else if (resolve(fresh, r, sp, ns, a) || sch_prim_invoke(fresh, r->kind, a) ||
               check_created(fresh, r, sp, ns, a)) {
      rc = -1;
    }
    if (rc) {
      /* the reason, prefixed with the record (its kind stays: unsupported stays unsupported);
       * only an error this record's step reported: an older ignored one is not its reason */
      int own = tec_ctx_error_count(ctx) != mark;
      const char *why = own ? tec_ctx_error(ctx) : NULL;
      tec_error_kind kind = own ? tec_ctx_error_kind(ctx) : TEC_ERR_NONE;
      why = tec_ctx_strdup(ctx, why ? why : "it failed without saying why");
      const char *text = sch_record_json(ctx, r, 0);
      tec_ctx_error_rollback(ctx, mark);
      tec_ctx_set_error_kind(ctx, kind == TEC_ERR_NONE ? TEC_ERR_USER : kind,
                             "sch_trace_replay: record %d %s could not be applied: %s", i,
                             text ? text : sch_prim_name(r->kind), why ? why : "");
    }
  }
  return tec_err_end(ctx, &sc, rc == 0, "sch_trace_replay") ? 0 : -1;
}

sch_schedule *sch_clone(sch_schedule *s) {
  if (!s) return NULL;
  sch_schedule *c = sch_create(s->ctx, s->nout, s->outputs);
  if (!c || sch_trace_replay(c, &s->trace)) return NULL;
  return c;
}

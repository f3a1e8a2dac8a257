/* annotate.c — loop annotations: parallel, vectorize, unroll, pragma, prefetch and
 * storage_align.
 * They only mark leaves; lowering checks what needs bounds (a vectorized or unrolled loop
 * needs a constant extent) and the passes in lower/ act on the marks. */
#include <string.h>
#include "tec/schedule.h"
#include "ir/internal.h"
#include "schedule/internal.h"
#include "schedule/pragma.h"

/* An inlined stage has no loops and no buffer: an annotation on it would be dropped. */
static int check_not_inlined(const char *who, sch_stage *st) {
  if (st->attach != SCH_ATTACH_INLINE) return 0;
  return tec_ctx_set_error(st->sched->ctx, "%s: stage '%s' is inlined (compute_inline), so it "
                                           "has no loops or buffer to annotate; annotate the "
                                           "loops of its readers, or compute_root '%s' first",
                           who, st->tensor->name, st->tensor->name);
}

static int set_kind(const char *who, sch_stage *st, sch_iter *iv, ir_for_kind kind) {
  static const sch_prim_kind prim[] = {[IR_FOR_PARALLEL] = SCH_PRIM_PARALLEL,
                                       [IR_FOR_VECTORIZED] = SCH_PRIM_VECTORIZE,
                                       [IR_FOR_UNROLLED] = SCH_PRIM_UNROLL};
  if (!st) return sch_null_arg(who, "stage", sch_iter_ctx(iv));
  tec_ctx *ctx = st->sched->ctx;
  if (sch_check_leaf(who, st, iv) || check_not_inlined(who, st) ||
      sch_scan_check_kind(who, st, iv, kind))
    return -1;
  if (iv->for_kind != IR_FOR_SERIAL && iv->for_kind != kind)
    return tec_ctx_set_error(ctx, "%s: loop '%s' of stage '%s' is already %s; a loop has one "
                                  "kind", who, iv->name, st->tensor->name,
                             ir_for_kind_name(iv->for_kind));
  if (kind == IR_FOR_VECTORIZED && iv->kind == SCH_ITER_REDUCE)
    return tec_ctx_set_error(ctx, "vectorize: '%s' is a reduce axis of stage '%s'; every lane "
                                  "would add into the same element, so only data-parallel loops "
                                  "are vectorized (vectorize a data axis, or rfactor '%s' to make "
                                  "it one)", iv->name, st->tensor->name, iv->name);
  /* an output is computed at root over its domain: a loop of it whose extent is known only at
   * run time stays so, and tec_lower would refuse it (another stage's may become a constant
   * once it is computed at a loop: that is checked by tec_lower, lower/legality.c) */
  const ir_expr *ext = st->is_output && kind != IR_FOR_PARALLEL ? sch_iter_extent(st, iv) : NULL;
  if (ext && !ir_is_const_int(ext, NULL))
    return tec_ctx_set_error(ctx, "%s: loop '%s' of stage '%s' has extent %s, which is not a "
                                  "constant; split it by a constant factor and %s the inner "
                                  "loop", who, iv->name, st->tensor->name, ir_expr_str(ext), who);
  if (kind == IR_FOR_PARALLEL) {
    if (iv->kind == SCH_ITER_REDUCE)
      return tec_ctx_set_error(ctx, "parallel: '%s' is a reduce axis of stage '%s'; parallel "
                                    "loops must be data-parallel (rfactor first)",
                               iv->name, st->tensor->name);
    for (int i = 0; i < st->nleaf; i++)
      if (st->leaf[i] != iv && st->leaf[i]->for_kind == IR_FOR_PARALLEL)
        return tec_ctx_set_error_kind(ctx, TEC_ERR_UNSUPPORTED,
                                      "parallel: stage '%s' already has parallel loop '%s'; "
                                      "nested parallel loops are not supported (fuse the loops "
                                      "and parallelize the fused one)",
                                      st->tensor->name, st->leaf[i]->name);
  }
  iv->for_kind = kind;
  return sch_trace_add(st->sched, prim[kind], (sch_arg[]){{.stage = st}, {.iter = iv}});
}

int sch_parallel(sch_stage *st, sch_iter *iv) {
  return set_kind("parallel", st, iv, IR_FOR_PARALLEL);
}
int sch_vectorize(sch_stage *st, sch_iter *iv) {
  return set_kind("vectorize", st, iv, IR_FOR_VECTORIZED);
}
int sch_unroll(sch_stage *st, sch_iter *iv) { return set_kind("unroll", st, iv, IR_FOR_UNROLLED); }

/* The key and its value are checked against the pragma table (pragma.c). */
int sch_pragma(sch_stage *st, sch_iter *iv, const char *key, const ir_expr *value) {
  if (!st) return sch_null_arg("pragma", "stage", sch_iter_ctx(iv));
  tec_ctx *ctx = st->sched->ctx;
  if (sch_check_leaf("pragma", st, iv) || check_not_inlined("pragma", st)) return -1;
  int known = sch_pragma_check(ctx, iv->name, st->tensor->name, key, value);
  if (known < 0) return -1;
  if (known > 0) /* TVM's key for what tec always does: nothing to record but the call */
    return sch_trace_add(st->sched, SCH_PRIM_PRAGMA, (sch_arg[]){{.stage = st}, {.iter = iv},
                                                                {.str = key}, {.value = value}});
  int n = iv->npragma + 1;
  const char **keys = tec_ctx_alloc(ctx, sizeof *keys * (size_t)n);
  const ir_expr **vals = tec_ctx_alloc(ctx, sizeof *vals * (size_t)n);
  if (!keys || !vals) return -1;
  for (int i = 0; i < iv->npragma; i++) keys[i] = iv->pragma_keys[i], vals[i] = iv->pragma_values[i];
  keys[n - 1] = tec_ctx_strdup(ctx, key);
  vals[n - 1] = value;
  iv->pragma_keys = keys;
  iv->pragma_values = vals;
  iv->npragma = n;
  return sch_trace_add(st->sched, SCH_PRIM_PRAGMA, (sch_arg[]){{.stage = st}, {.iter = iv},
                                                              {.str = key}, {.value = value}});
}

int sch_prefetch(sch_stage *st, te_tensor *t, sch_iter *iv, int64_t offset) {
  if (!st) return sch_null_arg("prefetch", "stage", sch_iter_ctx(iv));
  tec_ctx *ctx = st->sched->ctx;
  if (sch_check_leaf("prefetch", st, iv) || check_not_inlined("prefetch", st)) return -1;
  if (!t)
    return tec_ctx_set_error(ctx, "prefetch: the tensor to prefetch at loop '%s' of stage '%s' "
                                  "is NULL", iv->name, st->tensor->name);
  if (t->scan_of) return sch_scan_refuse("prefetch", st->sched, t);
  int reads = 0;
  for (int i = 0; i < st->ninputs; i++) reads |= st->inputs[i] == t;
  if (!reads) {
    const char *list = "";
    for (int i = 0; i < st->ninputs; i++)
      list = tec_ctx_printf(ctx, "%s%s'%s'", list, i ? ", " : "", st->inputs[i]->name);
    return tec_ctx_set_error(ctx, "prefetch: stage '%s' does not read '%s'; it reads %s",
                             st->tensor->name, t->name, st->ninputs ? list : "no tensor");
  }
  if (offset < 1)
    return tec_ctx_set_error(ctx, "prefetch: offset %lld for '%s' at loop '%s' of stage '%s'; "
                                  "it is how many iterations ahead to fetch and must be >= 1",
                             (long long)offset, t->name, iv->name, st->tensor->name);
  int n = iv->nprefetch + 1;
  const te_tensor **ts = tec_ctx_alloc(ctx, sizeof *ts * (size_t)n);
  int64_t *offs = tec_ctx_alloc(ctx, sizeof *offs * (size_t)n);
  if (!ts || !offs) return -1;
  for (int i = 0; i < iv->nprefetch; i++)
    ts[i] = iv->prefetch_tensors[i], offs[i] = iv->prefetch_offsets[i];
  ts[n - 1] = t;
  offs[n - 1] = offset;
  iv->prefetch_tensors = ts;
  iv->prefetch_offsets = offs;
  iv->nprefetch = n;
  return sch_trace_add(st->sched, SCH_PRIM_PREFETCH, (sch_arg[]){{.stage = st}, {.tensor = t},
                                                                {.iter = iv}, {.i = offset}});
}

int sch_storage_align(sch_stage *st, sch_iter *axis, int64_t factor, int64_t offset) {
  if (!st) return sch_null_arg("storage_align", "stage", sch_iter_ctx(axis));
  tec_ctx *ctx = st->sched->ctx;
  if (!axis) {
    if (!tec_ctx_error(ctx))
      tec_ctx_set_error(ctx, "storage_align: the axis for stage '%s' is NULL", st->tensor->name);
    return -1;
  }
  int dim = -1;
  for (int i = 0; i < st->tensor->ndim; i++)
    if (st->root[i] == axis) dim = i;
  if (check_not_inlined("storage_align", st)) return -1;
  if (axis->stage != st || dim < 0)
    return tec_ctx_set_error(ctx, "storage_align: '%s' is not a data axis of stage '%s' (use "
                                  "sch_axis(stage, i))", axis->name, st->tensor->name);
  if (dim == st->tensor->ndim - 1)
    return tec_ctx_set_error(ctx, "storage_align: '%s' is the innermost dimension of '%s'; align "
                                  "an outer dimension (its stride is what gets padded)",
                             axis->name, st->tensor->name);
  if (factor < 1 || offset < 0 || offset >= factor)
    return tec_ctx_set_error(ctx, "storage_align: stage '%s' axis '%s': factor %lld and offset "
                                  "%lld; need factor >= 1 and 0 <= offset < factor",
                             st->tensor->name, axis->name, (long long)factor, (long long)offset);
  struct sch_align *a = tec_ctx_alloc(ctx, sizeof *a * (size_t)(st->nalign + 1));
  if (!a) return -1;
  for (int i = 0; i < st->nalign; i++) a[i] = st->align[i];
  a[st->nalign] = (struct sch_align){dim, factor, offset};
  st->align = a;
  st->nalign++;
  return sch_trace_add(st->sched, SCH_PRIM_STORAGE_ALIGN,
                       (sch_arg[]){{.stage = st}, {.iter = axis}, {.i = factor}, {.i = offset}});
}

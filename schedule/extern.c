/* extern.c — what the schedule primitives refuse around an extern stage (te_extern).
 *
 * An extern stage is one call of a C function over a region: it has axes (the region's
 * dimensions, which bound inference sizes) but no loops. So every primitive that would
 * change or annotate one of its loops (split, fuse, reorder, tile, vectorize, parallel,
 * unroll, pragma, prefetch, compute_at into it) is refused through sch_check_leaf, and the
 * primitives that would rewrite its body (compute_inline, cache_write, rfactor) or replace
 * the buffer it reads (compute_inline of an input, cache_read for it as a reader) here. What
 * stays: compute_root, compute_at a consumer's loop, storage_align, cache_read of its output
 * for an ordinary reader. */
#include "schedule/internal.h"
#include "ir/internal.h"

int sch_refuse_extern(const char *who, const sch_stage *st, const char *axis) {
  const te_extern_decl *d = st->tensor->ext;
  if (!axis) /* compute_inline */
    return tec_ctx_set_error(st->sched->ctx,
                             "%s: stage '%s' is an extern stage: a C function computes it in one "
                             "call per region, so it has no expression to substitute into its "
                             "readers; compute it at root or at a loop of its consumer",
                             who, st->tensor->name);
  return tec_ctx_set_error(st->sched->ctx,
                           "%s: stage '%s' is an extern stage (the C function %s%s%s computes "
                           "it in one call per region): it has no loops, and axis '%s' is a "
                           "dimension of the region passed to the function, so it cannot be "
                           "split, fused, reordered, vectorized, parallelized, unrolled or "
                           "annotated, nor can a stage be computed at it; schedule the loops of "
                           "its consumer and compute '%s' at one of them (compute_at) or at root",
                           who, st->tensor->name, d->symbol ? "'" : "",
                           d->symbol ? d->symbol : "given by pointer", d->symbol ? "'" : "",
                           axis ? axis : "?", st->tensor->name);
}

int sch_check_extern_reader(sch_schedule *s, const char *who, const te_tensor *t, int nreaders,
                            te_tensor *const *readers) {
  for (int i = 0; i < s->nstage; i++) {
    const sch_stage *r = s->stages[i];
    if (!r->tensor->ext) continue;
    int listed = nreaders < 0;
    for (int k = 0; k < nreaders; k++) listed |= readers[k] == r->tensor;
    int reads = 0;
    for (int k = 0; k < r->ninputs; k++) reads |= r->inputs[k] == t;
    if (listed && reads)
      return tec_ctx_set_error(s->ctx, "%s: '%s' is read by the extern stage '%s', whose C "
                                       "function reads the buffer of '%s' itself; it must stay "
                                       "a tensor of its own (compute it at root or at a loop)%s",
                               who, t->name, r->tensor->name, t->name,
                               nreaders >= 0 ? "; leave the extern stage out of the readers"
                                             : "");
  }
  return 0;
}

/* extern_nest.c — an extern stage (te_extern) as a call over its region, for schedule_ops.c,
 * and what it reads, for bound.c.
 *
 * The stage has no loops: its region is the range bound inference gave its axes (the whole
 * tensor at root; at a consumer's loop, what one iteration reads, clamped to the tensor).
 * Each input's region comes from the declaration's region function over that region. The
 * nest checks each input region against the input's shape, then calls; an empty output
 * region calls nothing:
 *
 *   E at i.outer of C, E[i] needs A[i - 1 .. i + 1]:
 *   if (8 > 0) {
 *     assert(i.outer*8 - 1 >= 0 && ..., "extern stage 'E': ... input 'A' ...")
 *     evaluate(extern_call(A[i.outer*8 - 1], A[i.outer*8], 10, i.outer*8 - 1,
 *                          E[i.outer*8], E[i.outer*8 + 1], 8, i.outer*8))
 *   }
 * Operands before flattening, per buffer (the inputs in declaration order, then the
 * output): a read at the region's first element (its address is passed), per dimension a
 * read one step further along it (its address minus the first one is the stride:
 * extern_call.c turns them into numbers once storage_flatten made them loads), the extents,
 * the mins. */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"
#include "schedule/internal.h"

int lower_extern_region(lower_state *ls, int si, const ir_expr **mn, const ir_expr **ext) {
  const sch_stage *st = ls->s->stages[si];
  const te_tensor *t = st->tensor;
  for (int d = 0; d < t->ndim; d++) {
    const lower_range *r = lower_bounds_get(&ls->b, st->root[d]);
    if (!r) return TEC_INTERNAL(ls->ctx, "extern axis without a range");
    mn[d] = r->min;
    ext[d] = r->extent;
    /* a constant storage extent may run past the tensor's end (bound.c): clamp it */
    if (ls->attach[si] == SCH_ATTACH_SCOPE && ls->clamp[si] && ls->clamp[si][d])
      ext[d] = arith_simplify(ir_min(ext[d], ir_sub(ls->clamp[si][d], mn[d])), NULL);
  }
  return 0;
}

int lower_extern_box(lower_state *ls, int ri, const te_tensor *t, const arith_relax *rx,
                     arith_env *env, const ir_expr **lo, const ir_expr **hi) {
  tec_ctx *ctx = ls->ctx;
  const te_tensor *e = ls->s->stages[ri]->tensor;
  const te_extern_decl *d = e->ext;
  const ir_expr **mn = tec_ctx_alloc(ctx, sizeof *mn * (size_t)(2 * e->ndim + 2 * t->ndim + 2));
  if (!mn) return -1;
  const ir_expr **ext = mn + e->ndim, **imn = ext + e->ndim, **iex = imn + t->ndim;
  if (lower_extern_region(ls, ri, mn, ext)) return -1;
  for (int j = 0; j < t->ndim; j++) lo[j] = hi[j] = NULL;
  for (int k = 0; k < d->ninputs; k++) {
    if (d->inputs[k] != t) continue;
    if (te_extern_input_region(ctx, e, k, mn, ext, imn, iex)) return -1;
    for (int j = 0; j < t->ndim; j++) {
      const ir_expr *l0, *h0, *l1, *h1;
      const ir_expr *last = ir_sub(ir_add(imn[j], iex[j]), ir_int(ctx, 1));
      if (!arith_interval(arith_simplify(imn[j], env), rx, env, &l0, &h0) ||
          !arith_interval(arith_simplify(last, env), rx, env, &l1, &h1)) {
        for (int q = 0; q < t->ndim; q++) lo[q] = hi[q] = NULL; /* unbounded: all of it */
        return 0;
      }
      lo[j] = lo[j] ? ir_min(lo[j], l0) : l0;
      hi[j] = hi[j] ? ir_max(hi[j], h1) : h1;
    }
  }
  return 0;
}

/* The reads of one buffer's region: its first element, then one step along each dimension. */
static int region_operands(tec_ctx *ctx, const te_tensor *t, const ir_expr *const *mn,
                           const ir_expr *const *ext, const ir_expr **out, int *n) {
  const ir_expr **idx = tec_ctx_alloc(ctx, sizeof *idx * (size_t)(t->ndim + 1));
  if (!idx) return -1;
  for (int d = 0; d < t->ndim; d++) idx[d] = mn[d];
  if (!(out[(*n)++] = ir_read(ctx, t, t->ndim, idx))) return -1;
  for (int d = 0; d < t->ndim; d++) {
    const ir_expr **step = tec_ctx_alloc(ctx, sizeof *step * (size_t)(t->ndim + 1));
    if (!step) return -1;
    for (int q = 0; q < t->ndim; q++) step[q] = q == d ? ir_add(mn[q], ir_int(ctx, 1)) : mn[q];
    if (!(out[(*n)++] = ir_read(ctx, t, t->ndim, step))) return -1;
  }
  for (int d = 0; d < t->ndim; d++) out[(*n)++] = ext[d];
  for (int d = 0; d < t->ndim; d++) out[(*n)++] = mn[d];
  return 0;
}

const ir_stmt *lower_extern_nest(lower_state *ls, int si) {
  tec_ctx *ctx = ls->ctx;
  te_tensor *t = ls->s->stages[si]->tensor;
  const te_extern_decl *d = t->ext;
  int nops = 0;
  for (int k = 0; k < d->ninputs; k++) nops += 1 + 3 * d->inputs[k]->ndim;
  nops += 1 + 3 * t->ndim;
  const ir_expr **ops = tec_ctx_alloc(ctx, sizeof *ops * (size_t)nops);
  const ir_expr **mn = tec_ctx_alloc(ctx, sizeof *mn * (size_t)(2 * t->ndim));
  if (!ops || !mn) return NULL;
  const ir_expr **ext = mn + t->ndim;
  if (lower_extern_region(ls, si, mn, ext)) return NULL;
  const ir_stmt *checks = NULL;
  int n = 0;
  for (int k = 0; k < d->ninputs; k++) {
    const te_tensor *in = d->inputs[k];
    const ir_expr **imn = tec_ctx_alloc(ctx, sizeof *imn * (size_t)(2 * in->ndim + 1));
    if (!imn) return NULL;
    const ir_expr **iex = imn + in->ndim;
    if (te_extern_input_region(ctx, t, k, mn, ext, imn, iex)) return NULL;
    for (int j = 0; j < in->ndim; j++) {
      imn[j] = arith_simplify(imn[j], NULL);
      iex[j] = arith_simplify(iex[j], NULL);
      const ir_expr *ok = ir_and(ir_and(ir_ge(imn[j], ir_int(ctx, 0)), ir_ge(iex[j], ir_int(ctx, 0))),
                                 ir_le(ir_add(imn[j], iex[j]), in->shape[j]));
      ok = arith_simplify(ok, NULL);
      int64_t v;
      if (ir_is_const_int(ok, &v) && v) continue;
      const char *msg = tec_ctx_printf(
          ctx, "extern stage '%s': its region function asks input %d ('%s') for %%lld "
               "elements from %%lld in dimension %d, outside its shape [0, %s)",
          tec_ctx_fmt_escape(ctx, t->name), k, tec_ctx_fmt_escape(ctx, in->name), j,
          tec_ctx_fmt_escape(ctx, ir_expr_str(in->shape[j])));
      if (ir_is_const_int(ok, &v)) { /* provably out: refused now */
        tec_ctx_set_error(ctx, "tec_lower '%s': extern stage '%s': for the output region "
                               "starting at %s (extent %s) in dimension 0, its region "
                               "function asks input %d ('%s') for [%s, %s + %s) in dimension "
                               "%d, outside its shape [0, %s); a region must lie in the input",
                          ls->fname ? ls->fname : "?", t->name, ir_expr_str(mn[0]),
                          ir_expr_str(ext[0]), k, in->name, ir_expr_str(imn[j]),
                          ir_expr_str(imn[j]), ir_expr_str(iex[j]), j,
                          ir_expr_str(in->shape[j]));
        return NULL;
      }
      checks = ir_seq2(checks, ir_assert(ok, msg, iex[j], imn[j]));
      if (!checks || !msg) return NULL;
    }
    if (region_operands(ctx, in, imn, iex, ops, &n)) return NULL;
  }
  if (region_operands(ctx, t, mn, ext, ops, &n)) return NULL;
  const ir_expr *call = ir_extern_call(ctx, t, TEC_I32, n, ops);
  const ir_stmt *body = ir_seq2(checks, ir_evaluate(call));
  const ir_expr *nonempty = NULL;
  for (int j = 0; j < t->ndim; j++) {
    const ir_expr *c = arith_simplify(ir_gt(ext[j], ir_int(ctx, 0)), NULL);
    int64_t v;
    if (ir_is_const_int(c, &v) && v) continue;
    nonempty = nonempty ? ir_and(nonempty, c) : c;
  }
  return nonempty ? ir_if(nonempty, body, NULL) : body;
}

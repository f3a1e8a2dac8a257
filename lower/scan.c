/* scan.c — recurrences (te_scan) as plain loops, right after schedule_ops: each scan's init
 * steps are copied at the top of its produce, and every read of its state (the placeholder
 * standing for the earlier steps) becomes a read of the scan itself, which by then holds them.
 *
 *   produce y {                                produce y {
 *     for (t, 0, 2047)                           for (t.init, 0, 1) for (x.init, 0, 2048)
 *       for (x, 0, 2048)                   ->        y[t.init, x.init] = y_init[t.init, x.init]
 *         y[t + 1, x] = a*y_state[t, x] + ...    for (t, 0, 2047) for (x, 0, 2048)
 *   }                                                y[t + 1, x] = a*y[t, x] + ...
 *
 * The scan's t loop covers the update's steps [L, T) (schedule/scan.c set its domain), its
 * update's stages are computed inside it (schedule/scan.c checked), so when a step reads
 * y[t - k] that step is stored already. What remains is ordinary loads and stores: code
 * generation does not know recurrences. */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "schedule/internal.h"

typedef struct scan_pass {
  lower_state *ls;
  int error;
} scan_pass;

static const ir_expr *state_read(ir_mutator *m, const ir_expr *e) {
  e = ir_mutate_expr_default(m, e);
  if (!e || e->kind != IR_READ || !e->tensor || !e->tensor->scan_of) return e;
  return ir_read(m->ctx, e->tensor->scan_of, e->nargs, e->args);
}

/* for (t.init, 0, L) for (x.init, 0, W) ... S[t.init, x.init, ...] = init[...] */
static const ir_stmt *init_nest(scan_pass *sp, const te_tensor *s) {
  tec_ctx *ctx = sp->ls->ctx;
  const te_scan_info *sc = s->scan;
  int n = s->ndim;
  const ir_expr **idx = tec_ctx_alloc(ctx, sizeof *idx * (size_t)n);
  if (!idx) return NULL;
  for (int d = 0; d < n; d++)
    if (!(idx[d] = ir_var(ctx, tec_ctx_printf(ctx, "%s.init", s->axis[d]->name), TEC_INDEX,
                          IR_VAR_INDEX)))
      return NULL;
  const ir_expr *v = lower_inline_body(sp->ls, ir_read(ctx, sc->init, n, idx));
  const ir_stmt *body = v ? ir_provide(s, n, idx, v) : NULL;
  /* init's steps, or fewer when a call's T (a size) is smaller */
  int64_t T;
  const ir_expr *steps = ir_is_const_int(s->shape[0], &T) && T >= sc->ninit
                             ? ir_int(ctx, sc->ninit)
                             : ir_min(ir_int(ctx, sc->ninit), s->shape[0]);
  for (int d = n - 1; d >= 0 && body; d--)
    body = ir_for(idx[d], ir_int(ctx, 0), d ? s->shape[d] : steps, IR_FOR_SERIAL, body);
  return body;
}

static const ir_stmt *scan_produce(ir_mutator *m, const ir_stmt *s) {
  scan_pass *sp = m->user;
  s = ir_mutate_stmt_default(m, s);
  if (!s || s->kind != IR_S_PRODUCE || !s->tensor || !s->tensor->scan) return s;
  const ir_stmt *init = init_nest(sp, s->tensor);
  if (!init) {
    sp->error = 1;
    return NULL;
  }
  return ir_produce(s->tensor, ir_seq2(init, s->body));
}

const ir_stmt *lower_scan(lower_state *ls, const ir_stmt *body) {
  if (!body) return NULL;
  int any = 0;
  for (int i = 0; i < ls->s->nstage; i++) any |= ls->s->stages[i]->tensor->scan != NULL;
  if (!any) return body;
  scan_pass sp = {ls, 0};
  ir_mutator m;
  ir_mutator_init(&m, ls->ctx, &sp);
  m.expr[IR_READ] = state_read;
  m.stmt[IR_S_PRODUCE] = scan_produce;
  const ir_stmt *out = ir_mutate_stmt(&m, body);
  return sp.error ? NULL : out;
}

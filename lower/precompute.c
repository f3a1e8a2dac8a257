/* precompute.c — plans the prepare/run split: which stages depend on constant placeholders
 * alone (weights, biases, tables) and can run once, before any call.
 *
 *   W (const) -> W.packed = cache_read(W) reorganised -> conv reads W.packed
 *     prepare: W.packed[...] = W[...]            (run once per set of weights)
 *     run:     conv reads W.packed, an argument  (every call)
 * A stage is constant when every tensor its (inlined) body reads is a constant placeholder or
 * a constant stage. Constant stages that are computed (not inlined), not outputs and not
 * arguments go to prepare; those a run stage reads are the packed tensors. */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "schedule/internal.h"

typedef struct reads {
  tec_ctx *ctx;
  int n, cap;
  const te_tensor **t;
} reads;

static void collect(ir_visitor *v, const ir_expr *e) {
  reads *r = v->user;
  if (e->kind == IR_READ) {
    int seen = 0;
    for (int i = 0; i < r->n; i++) seen |= r->t[i] == e->tensor;
    if (!seen && !tec_grow(r->ctx, (void **)&r->t, &r->cap, r->n + 1, sizeof *r->t))
      r->t[r->n++] = e->tensor;
  }
  ir_visit_expr_default(v, e);
}

static reads reads_of(tec_ctx *ctx, const ir_expr *body) {
  reads r = {ctx, 0, 0, NULL};
  ir_visitor v;
  ir_visitor_init(&v, &r);
  v.expr[IR_READ] = collect;
  ir_visit_expr(&v, body);
  return r;
}

static int index_of(const sch_schedule *s, const te_tensor *t) {
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i]->tensor == t) return i;
  return -1;
}

int lower_plan_precompute(lower_state *ls, lower_split_plan *plan) {
  const sch_schedule *s = ls->s;
  tec_ctx *ctx = ls->ctx;
  int n = s->nstage;
  *plan = (lower_split_plan){0};
  if (!s->precompute) return 0;
  unsigned char *cst = tec_ctx_alloc(ctx, (size_t)n);
  plan->in_prepare = tec_ctx_alloc(ctx, (size_t)n);
  plan->const_arg_prep = tec_ctx_alloc(ctx, (size_t)(ls->nargs ? ls->nargs : 1));
  plan->const_arg_run = tec_ctx_alloc(ctx, (size_t)(ls->nargs ? ls->nargs : 1));
  reads *rd = tec_ctx_alloc(ctx, sizeof *rd * (size_t)n);
  if (!cst || !plan->in_prepare || !plan->const_arg_prep || !plan->const_arg_run || !rd) return -1;
  for (int i = 0; i < n; i++) { /* stage order: producers first */
    te_tensor *t = s->stages[i]->tensor;
    if (t->op == TE_PLACEHOLDER) {
      cst[i] = (unsigned char)t->is_const;
      continue;
    }
    rd[i] = reads_of(ctx, ls->body[i]);
    cst[i] = t->nout < 2; /* a multi-output op: its other bodies are not read here; never */
    for (int k = 0; k < rd[i].n; k++) {
      int j = index_of(s, rd[i].t[k]);
      if (j < 0 || !cst[j]) cst[i] = 0;
    }
  }
  for (int i = 0; i < n; i++) {
    sch_stage *st = s->stages[i];
    int is_arg = 0;
    for (int a = 0; a < ls->nargs; a++) is_arg |= ls->args[a] == st->tensor;
    plan->in_prepare[i] = cst[i] && st->tensor->op == TE_COMPUTE &&
                          ls->attach[i] != SCH_ATTACH_INLINE && !st->is_output && !is_arg;
  }
  /* who reads what: prepare stages read by run stages are packed; constant arguments are
   * passed to whichever half reads them */
  for (int i = 0; i < n; i++) {
    sch_stage *st = s->stages[i];
    if (st->tensor->op != TE_COMPUTE || ls->attach[i] == SCH_ATTACH_INLINE) continue;
    for (int k = 0; k < rd[i].n; k++) {
      int j = index_of(s, rd[i].t[k]);
      if (j < 0) continue;
      for (int a = 0; a < ls->nargs; a++)
        if (ls->args[a] == rd[i].t[k] && ls->args[a]->is_const) {
          if (plan->in_prepare[i]) plan->const_arg_prep[a] = 1;
          else plan->const_arg_run[a] = 1;
        }
      if (plan->in_prepare[i] || !plan->in_prepare[j]) continue;
      int seen = 0;
      for (int p = 0; p < plan->npacked; p++) seen |= plan->packed[p] == rd[i].t[k];
      if (seen) continue;
      te_tensor **np = tec_ctx_alloc(ctx, sizeof *np * (size_t)(plan->npacked + 1));
      if (!np) return -1;
      for (int p = 0; p < plan->npacked; p++) np[p] = plan->packed[p];
      np[plan->npacked++] = s->stages[j]->tensor;
      plan->packed = np;
    }
  }
  if (plan->npacked == 0) *plan = (lower_split_plan){0}; /* nothing the run would read */
  return 0;
}

/* inline.c — compute_inline: substitute producers' bodies into their readers.
 *
 *   B[i] = A[i] * 2  (inlined);  C[i] = B[i] + 1   ->   C[i] = A[i] * 2 + 1
 * Works in stage order, so a chain of inlined stages collapses fully. Only the lowering's
 * copy of each body changes. */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"

typedef struct inl {
  lower_state *ls;
} inl;

static int stage_index(const sch_schedule *s, const te_tensor *t) {
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i]->tensor == t) return i;
  return -1;
}

static const ir_expr *inline_read(ir_mutator *m, const ir_expr *e) {
  lower_state *ls = m->user;
  e = ir_mutate_expr_default(m, e);
  if (!e || e->kind != IR_READ) return e;
  int k = stage_index(ls->s, e->tensor);
  if (k < 0 || ls->s->stages[k]->attach != SCH_ATTACH_INLINE) return e;
  const te_tensor *p = e->tensor;
  return ir_substitute(ls->body[k], p->ndim, p->axis, e->args);
}

int lower_inline(lower_state *ls) {
  sch_schedule *s = ls->s;
  ls->body = tec_ctx_alloc(ls->ctx, sizeof *ls->body * (size_t)s->nstage);
  if (!ls->body) return -1;
  ir_mutator m;
  ir_mutator_init(&m, ls->ctx, ls);
  m.expr[IR_READ] = inline_read;
  for (int i = 0; i < s->nstage; i++) {
    sch_stage *st = s->stages[i];
    if (!st->body) continue;
    ls->body[i] = ir_mutate_expr(&m, st->body);
    if (!ls->body[i]) return -1;
    if (st->attach == SCH_ATTACH_INLINE) {
      for (int a = 0; a < ls->nargs; a++)
        if (ls->args[a] == st->tensor)
          return tec_ctx_set_error(ls->ctx, "compute_inline: '%s' is inlined but also passed "
                                            "as an argument; an inlined tensor has no buffer",
                                   st->tensor->name);
    }
  }
  return 0;
}

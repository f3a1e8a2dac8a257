/* inline.c — compute_inline: substitute producers' bodies into their readers.
 *
 *   B[i] = A[i] * 2  (inlined);  C[i] = B[i] + 1   ->   C[i] = A[i] * 2 + 1
 * Works in stage order, so a chain of inlined stages collapses fully. Only the lowering's
 * copy of each body changes.
 *
 * A producer read more than once at the same element is computed once: the reads become a
 * LET variable bound to its body at the top of the reader's expression,
 *   C[i] = B[i] * B[i] + B[i]   ->   C[i] = let B = A[i] * 2 in B * B + B
 * so a chain of N stages that each read their producer several times lowers to O(N) nodes
 * instead of a tree of k^N copies (Halide's CSE of inlined Funcs). A read inside a select's
 * arm is not hoisted out of it (the arm's condition may be what keeps its loads in bounds),
 * nor one inside another read's indices (bound inference reads indices, not LET values): those
 * are substituted as copies. */
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "schedule/internal.h"

/* One distinct read P[args] of an inlined producer in the expression being rewritten. */
typedef struct inl_read {
  const te_tensor *t;
  const ir_expr *const *args;
  const ir_expr *value; /* P's body at args */
  const ir_expr *var;   /* the LET variable that stands for it */
  int uses;
  int pinned;           /* read inside a select arm or an index: substituted, never hoisted */
} inl_read;

typedef struct inl {
  lower_state *ls;
  int n, cap;
  inl_read *r;
  int pin_depth; /* > 0 inside a select arm or a read's indices */
} inl;

static int stage_index(const sch_schedule *s, const te_tensor *t) {
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i]->tensor == t) return i;
  return -1;
}

static int same_args(int n, const ir_expr *const *a, const ir_expr *const *b) {
  for (int i = 0; i < n; i++)
    if (a[i] != b[i] && !ir_expr_equal(a[i], b[i])) return 0;
  return 1;
}

static const ir_expr *inline_read(ir_mutator *m, const ir_expr *e) {
  inl *in = m->user;
  lower_state *ls = in->ls;
  in->pin_depth++; /* the indices */
  e = ir_mutate_expr_default(m, e);
  in->pin_depth--;
  if (!e || e->kind != IR_READ) return e;
  int k = stage_index(ls->s, e->tensor);
  if (k < 0 || ls->attach[k] != SCH_ATTACH_INLINE) return e;
  const te_tensor *p = e->tensor;
  for (int i = 0; i < in->n; i++)
    if (in->r[i].t == p && same_args(p->ndim, in->r[i].args, e->args)) {
      in->r[i].uses++;
      in->r[i].pinned |= in->pin_depth > 0;
      return in->r[i].var;
    }
  const ir_expr *value = ir_substitute(ls->body[k], p->ndim, p->axis, e->args);
  const ir_expr *var = value ? ir_var(ls->ctx, p->name, value->type, IR_VAR_LET) : NULL;
  if (!var || tec_grow(ls->ctx, (void **)&in->r, &in->cap, in->n + 1, sizeof *in->r))
    return NULL;
  in->r[in->n++] = (inl_read){p, e->args, value, var, 1, in->pin_depth > 0};
  return var;
}

/* a select's arms are evaluated only under its condition */
static const ir_expr *inline_select(ir_mutator *m, const ir_expr *e) {
  inl *in = m->user;
  const ir_expr *c = ir_mutate_expr(m, e->a);
  in->pin_depth++;
  const ir_expr *t = ir_mutate_expr(m, e->b), *f = ir_mutate_expr(m, e->c);
  in->pin_depth--;
  if (!c || !t || !f) return NULL;
  return ir_expr_with(e, c, t, f, e->args);
}

/* e with the inlined reads in it: values read once or pinned substituted, the others bound by
 * LETs around e (in order of first read: a value may use an earlier variable, never a later
 * one). NULL when out of memory. */
static const ir_expr *inline_expr(lower_state *ls, const ir_expr *e) {
  if (!e) return NULL;
  inl in = {ls, 0, 0, NULL, 0};
  ir_mutator m;
  ir_mutator_init(&m, ls->ctx, &in);
  m.expr[IR_READ] = inline_read;
  m.expr[IR_SELECT] = inline_select;
  const ir_expr *r = ir_mutate_expr(&m, e);
  if (!r) return NULL;
  /* copies first, newest first: a copied value may hold the variable of an earlier read */
  for (int i = in.n - 1; i >= 0; i--) {
    if (in.r[i].uses > 1 && !in.r[i].pinned) continue;
    r = ir_substitute(r, 1, &in.r[i].var, &in.r[i].value);
    for (int j = i + 1; j < in.n && r; j++)
      in.r[j].value = ir_substitute(in.r[j].value, 1, &in.r[i].var, &in.r[i].value);
    if (!r) return NULL;
  }
  for (int i = in.n - 1; i >= 0 && r; i--)
    if (in.r[i].uses > 1 && !in.r[i].pinned) r = ir_let(in.r[i].var, in.r[i].value, r);
  return r;
}

/* passes.h. A body with its inlined reads: a reduction keeps its place at the top, its source
 * and condition rewritten each on its own. */
const ir_expr *lower_inline_body(lower_state *ls, const ir_expr *b) {
  if (b->kind != IR_REDUCE) return inline_expr(ls, b);
  const ir_expr *src = inline_expr(ls, b->a);
  const ir_expr *cond = b->b ? inline_expr(ls, b->b) : NULL;
  if (!src || (b->b && !cond)) return NULL;
  if (src == b->a && cond == b->b) return b;
  return ir_reduce_like(b, src, b->nargs, b->args, cond);
}

int lower_inline(lower_state *ls) {
  const sch_schedule *s = ls->s;
  ls->body = tec_ctx_alloc(ls->ctx, sizeof *ls->body * (size_t)s->nstage);
  if (!ls->body) return -1;
  for (int i = 0; i < s->nstage; i++) {
    sch_stage *st = s->stages[i];
    if (!st->body) continue;
    ls->body[i] = lower_inline_body(ls, st->body);
    if (!ls->body[i]) return -1;
    /* (an inlined stage passed as an argument is refused by legality.c) */
  }
  return 0;
}

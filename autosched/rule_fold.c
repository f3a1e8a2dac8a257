/* rule_fold.c — unroll the axes whose value selects between expressions, so each select folds
 * to one arm: a data axis d compared with a constant in a select's condition, as d itself
 * (select(d == 2, x, y)) or as its remainder by a constant m (select(d % m == 2, x, y)), with
 * few values (at most AS_FOLD_MAX). Such selects are how a program spells a small constant
 * matrix indexed by its axes (Winograd's transforms; TVM's const_matrix, which Ansor's
 * RuleSimplifyComputeWithConstTensor unrolls likewise): unrolled, the matrix entries are
 * constants and the zero ones vanish; not unrolled, every arm is computed and one kept.
 *
 *   fold[d] = 1   d unrolled whole                       [..., x.outer, d (unrolled), x.inner]
 *   fold[d] = m   d split by m, its inner part unrolled  [..., d.outer, ..., x.outer, d.inner, x.inner]
 *
 * The unrolled loops go just outside the vector loop (rule_loops.c places them). Stages with
 * their own loops at the root (LOOPS) only; the last axis is the vector's, never folded. */
#include <string.h>
#include "autosched/internal.h"

#define AS_FOLD_MAX 8

/* the axis (and period) compared with a constant in condition c: fold[d] set; 1 if c is
 * such a compare of a folded axis (the select folds away once it is unrolled) */
static int note_condition(as_stage *s, const ir_expr *c) {
  if (!c || c->kind != IR_EQ) return 0;
  const ir_expr *x = c->a->kind == IR_INT_IMM ? c->b : c->a, *k = x == c->a ? c->b : c->a;
  if (k->kind != IR_INT_IMM) return 0;
  int64_t m = 1;
  if (x->kind == IR_FLOORMOD && x->b->kind == IR_INT_IMM) m = x->b->v.i, x = x->a;
  if (x->kind != IR_VAR || m < 1 || m > AS_FOLD_MAX) return 0;
  const te_tensor *t = s->t;
  for (int d = 0; d + 1 < t->ndim; d++) {
    if (t->axis[d] != x) continue;
    if (!s->fold[d] && m == 1 && s->ext[d] <= AS_FOLD_MAX) s->fold[d] = 1;
    else if (!s->fold[d] && m > 1 && s->ext[d] > m && s->ext[d] % m == 0) s->fold[d] = m;
    return s->fold[d] == m;
  }
  return 0;
}

/* walks e noting the selects' conditions; the selects that do not fold, counted in *other */
static void walk(as_stage *s, const ir_expr *e, int depth, int *other) {
  if (!e || depth > 64) {
    if (e) (*other)++; /* not looked at: assume the worst */
    return;
  }
  if (e->kind == IR_SELECT && !note_condition(s, e->a)) (*other)++;
  walk(s, e->a, depth + 1, other);
  walk(s, e->b, depth + 1, other);
  walk(s, e->c, depth + 1, other);
  if (e->kind == IR_READ || e->kind == IR_CALL)
    for (int k = 0; k < e->nargs; k++) walk(s, e->args[k], depth + 1, other);
}

void as_decide_fold(as_prog *p) {
  for (int i = 0; i < p->n; i++) {
    as_stage *s = &p->st[i];
    memset(s->fold, 0, sizeof s->fold);
    if (s->is_input || !s->understood || s->ch.kind != TEC_AS_LOOPS || !s->const_ext) continue;
    int other = 0, n = 0;
    walk(s, s->t->body, 0, &other);
    for (int d = 0; d + 1 < s->t->ndim; d++) n += s->fold[d] != 0;
    if (!n) continue;
    s->rule = as_fmt(p, "%s; %d selecting ax%s unrolled", s->rule ? s->rule : "loops", n,
                     n == 1 ? "is" : "es");
    /* every select folds: its reads are plain loads, not the padding idiom (rule_loops.c), and
     * the vector choice is made again */
    if (!other && s->guarded_read) {
      s->guarded_read = 0;
      as_loops_choice(p, s);
    }
  }
}

int as_fold_split(as_prog *p, sch_stage *st, as_stage *a, sch_iter **ax, int64_t *ext,
                  sch_iter **inner) {
  (void)p;
  int n = 0;
  for (int d = 0; d + 1 < a->t->ndim; d++) {
    ext[d] = a->ext[d];
    if (a->ch.kind != TEC_AS_LOOPS || !a->fold[d]) continue;
    if (a->fold[d] > 1) {
      if (sch_split(st, ax[d], a->fold[d], &ax[d], &inner[n])) return -1;
      ext[d] = a->ext[d] / a->fold[d];
      n++;
    } else {
      inner[n++] = ax[d];
      ax[d] = NULL; /* moved inside */
    }
  }
  return n;
}

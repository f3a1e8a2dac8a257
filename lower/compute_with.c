/* compute_with.c — the fused nest of two stages scheduled with sch_compute_with.
 *
 * schedule_ops.c builds each stage's nest as usual; for a pair (stage A computed with B down
 * to B's loop at depth d) the earlier of the two in stage order is not placed at its own turn
 * (its buffer is), and at the later one's turn the two nests become one:
 *   produce B { for (B.0) .. for (B.d) { B's body; produce A { A's body with A.0 .. A.d
 *   replaced by B.0 .. B.d } } }       (the levels below d stay each stage's own loops)
 * checked here, where the ranges are known: each pair of fused loops over the same range
 * (after A's outer loops are renamed), the same kind, plain loops down to d (no pragma, no
 * warm-up, no stage computed at a fused loop above d: one computed at d sits inside the
 * innermost fused loop, before B's body), both stages computed at the same place in
 * this lowering, and no stage placed between the two at that place reading the earlier one. */
#include "lower/passes.h"
#include "arith/arith.h"
#include "schedule/internal.h"

int lower_with_table(lower_state *ls) {
  const sch_schedule *s = ls->s;
  int n = s->nstage;
  ls->with = tec_ctx_alloc(ls->ctx, sizeof *ls->with * (size_t)(n + 1));
  if (!ls->with) return -1;
  for (int i = 0; i < n; i++) ls->with[i] = -1;
  /* a stage's own with_stage first; a stage without one gets the first stage fused with it */
  for (int i = 0; i < n; i++) {
    const sch_stage *w = s->stages[i]->with_stage;
    if (!w) continue;
    int j = sch_stage_index(s, w);
    ls->with[i] = j;
    if (j >= 0 && !w->with_stage && ls->with[j] < 0) ls->with[j] = i;
  }
  return 0;
}

int lower_with_partner(const lower_state *ls, int si) { return ls->with ? ls->with[si] : -1; }

static int same_place(const lower_state *ls, int a, int b) {
  const sch_stage *x = ls->s->stages[a], *y = ls->s->stages[b];
  if (ls->attach[a] != ls->attach[b]) return 0;
  return ls->attach[a] != SCH_ATTACH_SCOPE || x->attach_iter == y->attach_iter;
}

/* 1 if a and b are the same expression, or their difference simplifies to 0 (no facts
 * needed: the loop bounds hold only the outer loops' variables and sizes) */
static int same_value(const ir_expr *a, const ir_expr *b) {
  return ir_expr_equal(a, b) || ir_expr_equal(arith_simplify(ir_sub(a, b), NULL), ir_int(a->ctx, 0));
}

static const char *range_str(tec_ctx *ctx, const ir_stmt *f) {
  return tec_ctx_printf(ctx, "[%s, %s + %s)", ir_expr_str(f->a), ir_expr_str(f->a),
                        ir_expr_str(f->b));
}

int lower_with_check(lower_state *ls, int si, int with) {
  const sch_schedule *s = ls->s;
  int ia = s->stages[si]->with_stage == s->stages[with] ? si : with, ib = ia == si ? with : si;
  const sch_stage *A = s->stages[ia], *B = s->stages[ib];
  if (same_place(ls, ia, ib) && ls->attach[ia] != SCH_ATTACH_INLINE &&
      !(ls->skip && (ls->skip[ia] || ls->skip[ib])))
    return 0;
  return tec_ctx_set_error(ls->ctx, "tec_lower: compute_with('%s', '%s'): the two stages are "
                                    "not computed at the same place (one is computed once in "
                                    "prepare, or was moved); fused loops need both at the same "
                                    "loop or both at the root",
                           A->tensor->name, B->tensor->name);
}

const ir_stmt *lower_with_fuse(lower_state *ls, int e, int l, const ir_stmt *ne,
                               const ir_stmt *nl) {
  tec_ctx *ctx = ls->ctx;
  const sch_schedule *s = ls->s;
  int ia = s->stages[e]->with_stage == s->stages[l] ? e : l, ib = ia == e ? l : e;
  const sch_stage *A = s->stages[ia], *B = s->stages[ib];
  const char *an = A->tensor->name, *bn = B->tensor->name;
  const ir_stmt *na = ia == e ? ne : nl, *nb = ia == e ? nl : ne;
  int d = sch_leaf_index(B, A->with_iter);
  if (d < 0) {
    tec_ctx_set_error(ctx, "tec_lower: compute_with('%s', '%s', '%s'): '%s' is no longer a loop "
                           "of '%s' (split or fused after compute_with); call compute_with "
                           "after the loops are final: one of %s",
                      an, bn, A->with_iter->name, A->with_iter->name, bn, sch_stage_str(B));
    return NULL;
  }
  for (int z = e + 1; z < l; z++) {
    if (!same_place(ls, z, e) || (ls->skip && ls->skip[z])) continue;
    int dep = sch_stage_depends(s, s->stages[z], s->stages[e]);
    if (dep < 0) return NULL;
    if (dep) {
      tec_ctx_set_error(ctx, "tec_lower: compute_with('%s', '%s'): '%s', computed at the same "
                             "place between them, reads '%s'; the fused nest runs where '%s' "
                             "would, after it: compute '%s' inside a consumer (compute_at), "
                             "or drop the compute_with",
                        an, bn, s->stages[z]->tensor->name, s->stages[e]->tensor->name,
                        s->stages[l]->tensor->name, s->stages[z]->tensor->name);
      return NULL;
    }
  }
  const ir_expr **from = tec_ctx_alloc(ctx, sizeof *from * (size_t)(d + 1));
  const ir_expr **to = tec_ctx_alloc(ctx, sizeof *to * (size_t)(d + 1));
  const ir_stmt **lb = tec_ctx_alloc(ctx, sizeof *lb * (size_t)(d + 1));
  if (!from || !to || !lb) return NULL;
  for (int k = 0; k <= d; k++) {
    if (!na || !nb || na->kind != IR_S_FOR || nb->kind != IR_S_FOR) {
      tec_ctx_set_error(ctx, "tec_lower: compute_with('%s', '%s', '%s'): at loop %d the nests "
                             "are not plain loops (a pragma or prefetch on it, a warm-up, or a "
                             "stage computed inside it); fuse down to a loop outside those",
                        an, bn, A->with_iter->name, k);
      return NULL;
    }
    const ir_expr *mn = ir_substitute(na->a, k, from, to), *ex = ir_substitute(na->b, k, from, to);
    if (!mn || !ex) return NULL;
    if (!same_value(mn, nb->a) || !same_value(ex, nb->b) || na->for_kind != nb->for_kind) {
      tec_ctx_set_error(ctx, "tec_lower: compute_with('%s', '%s', '%s'): loop '%s' of '%s' runs "
                             "over %s (%s) and loop '%s' of '%s' over %s (%s); fused loops need "
                             "the same range and kind (fuse at an outer loop, give both "
                             "stages the same splits, and store/slide both the same way: "
                             "store_at, sliding or a warm-up on one stage only changes its "
                             "ranges)",
                        an, bn, A->with_iter->name, ir_expr_str(na->var), an, range_str(ctx, na),
                        ir_for_kind_name(na->for_kind), ir_expr_str(nb->var), bn,
                        range_str(ctx, nb), ir_for_kind_name(nb->for_kind));
      return NULL;
    }
    from[k] = na->var, to[k] = nb->var, lb[k] = nb;
    if (k < d) na = na->body, nb = nb->body;
  }
  /* the fused loops are B's (named by it: loop_names.c reads the produce around a loop);
   * A's body, with its own loops below d, in a produce of its own inside */
  const ir_stmt *abody = ir_substitute_stmt(na->body, d + 1, from, to);
  const ir_stmt *body = abody ? ir_seq2(nb->body, ir_produce(A->tensor, abody)) : NULL;
  for (int k = d; k >= 0 && body; k--) body = ir_for(lb[k]->var, lb[k]->a, lb[k]->b, lb[k]->for_kind, body);
  return body ? ir_produce(B->tensor, body) : NULL;
}

/* store_at.c — a stage's buffer at an outer loop of its consumer (sch_store_at), with
 * Halide's sliding window and storage folding.
 *
 *   blur_x stored at blur_y.x.outer, computed at blur_y.y (rows y .. y+2 per iteration):
 *   for (x.outer ...) { realize blur_x[0, 4) x [x.outer*64, 64) {        // folded: 4 rows
 *     for (y ...) {
 *       produce blur_x: rows [select(y > 0, max(end(y - 1), y), y), end(y)), end(y) = y + 3
 *       ... blur_y reads blur_x[floormod(row, 4), col] ... } } }
 *
 * bound.c finds two boxes of what the readers read: per iteration of the compute loop (what
 * a produce must hold) and over the loops inside the store loop (the buffer). Here:
 *   where:   the buffer goes in the store loop's body (store_root: around the whole program),
 *            or inside the innermost parallel or
 *            vectorized loop between it and the compute loop (a thread's iterations cannot
 *            share one buffer; a note says so);
 *   sliding: the outermost loop v between them (the store loop excluded, the compute loop
 *            included) that moves the compute box monotonically along one dimension d only,
 *            with no loop inside v (up to the compute loop) moving it along d, and whose
 *            consecutive iterations overlap (a column-tile loop over a stage without a column
 *            halo has nothing to reuse: the next loop in is tried); then each
 *            produce computes [v > 0 ? max(end(v - 1), min(v)) : min(v), end(v)),
 *            the part the previous iteration did not (end: the box's end clamped to the
 *            tensor, so a clamped last iteration computes nothing). A loop that moves the box
 *            otherwise gets a note and no sliding;
 *   folding: along d, when the box's extent has a constant bound W, the buffer keeps
 *            F = the next power of two >= W rows, read and written at floormod(index, F):
 *            the rows an iteration reads are its last W, all distinct modulo F.
 * The other dimensions of the buffer cover the readers' box over the inner loops and every
 * element a produce writes (a constant loop extent may write past the box: bound.c). */
#include <string.h>
#include "tec/lower.h"
#include "ir/internal.h"
#include "lower/passes.h"
#include "arith/arith.h"
#include "schedule/internal.h"

/* where the buffer was asked for: "loop 'x' of 'C'", or "the top level" */
static const char *store_where(tec_ctx *ctx, const sch_stage *p) {
  return p->store_root ? "the top level"
                       : tec_ctx_printf(ctx, "loop '%s' of '%s'", p->store_iter->name,
                                        p->attach_stage->tensor->name);
}

int lower_store_pos(lower_state *ls, int pi, int pos) {
  const sch_stage *p = ls->s->stages[pi], *c = p->attach_stage;
  if (!p->store_iter && !p->store_root) return -2;
  int spos = p->store_root ? -1 : sch_leaf_index(c, p->store_iter);
  if (!p->store_root && spos < 0) spos = -2;
  if (spos < -1 || spos >= pos) return -2; /* (legality.c refused a store loop inside) */
  for (int r = 0; r < p->nrel; r++)
    if (p->rel[r].kind == SCH_REL_SPLIT && p->rel[r].tail == SCH_TAIL_ROUND_UP) {
      tec_ctx_note(ls->ctx, "store_at: '%s' is stored at %s, but its loop '%s' is split with "
                            "tail strategy round_up, whose buffer is rounded up per produce: it "
                            "is stored at its compute loop '%s' instead",
                   p->tensor->name, store_where(ls->ctx, p), p->rel[r].parent->name,
                   p->attach_iter->name);
      return -2;
    }
  for (int k = pos; k > spos; k--) {
    ir_for_kind kind = c->leaf[k]->for_kind;
    if (kind != IR_FOR_PARALLEL && kind != IR_FOR_VECTORIZED) continue;
    tec_ctx_note(ls->ctx, "store_at: '%s' is stored at %s, but loop '%s' of '%s' inside it is "
                          "%s, whose iterations cannot share one buffer (nor slide a window): "
                          "it is stored inside '%s' instead (store it there or inside to "
                          "silence this)",
                 p->tensor->name, store_where(ls->ctx, p), c->leaf[k]->name, c->tensor->name,
                 ir_for_kind_name(kind), c->leaf[k]->name);
    return k < pos ? k : -2;
  }
  return spos;
}

static int uses_loops(const sch_stage *c, int from, int to, const ir_expr *e) {
  for (int j = from; j <= to; j++)
    if (ir_uses_var(e, c->leaf[j]->var)) return 1;
  return 0;
}

/* e(v + 1) - e(v) >= 0 for every v (a constant bound from the env) */
static int rises(const ir_expr *e, const ir_expr *v, arith_env *env) {
  const ir_expr *v1 = ir_add(v, ir_int(v->ctx, 1));
  const ir_expr *d = arith_simplify(ir_sub(ir_substitute(e, 1, &v, &v1), e), env);
  arith_range r = d ? arith_bound(d, env) : arith_range_unknown();
  return r.has_lo && r.lo >= 0;
}

/* why producer p's own loops cannot compute a slid range along dimension d (whose extent
 * then varies per iteration), or NULL: a loop over d that is not serial needs a constant
 * extent; a fuse of a loop from d, or a split of one with tail shift_inwards, would compute
 * rows outside the range (a fuse has no guard; shift_inwards starts its last chunk before the
 * range); a reduce axis whose domain uses the data axes was restated in their unslid values;
 * a stage computed inside p's loops would compute the unslid rows' inputs */
static const char *producer_cannot_slide(const lower_state *ls, const sch_stage *p, int d) {
  tec_ctx *ctx = ls->ctx;
  /* a stage computed inside p's loops gets its region from p's unslid rows (bound.c computes
   * regions consumers first, the slid ranges after all of them) */
  for (int j = 0; j < ls->s->nstage; j++)
    if (ls->s->stages[j]->attach_stage == p && ls->attach[j] == SCH_ATTACH_SCOPE)
      return tec_ctx_printf(ctx, "stage '%s' is computed inside its loops",
                            ls->s->stages[j]->tensor->name);
  for (int i = 0; i < p->nleaf; i++)
    if (p->leaf[i] == p->root[d] && p->leaf[i]->for_kind != IR_FOR_SERIAL)
      return tec_ctx_printf(ctx, "its loop '%s' over that dimension is %s and needs a constant "
                                 "extent", p->leaf[i]->name,
                            ir_for_kind_name(p->leaf[i]->for_kind));
  const sch_iter *from[64];
  int n = 0;
  from[n++] = p->root[d];
  for (int r = 0; r < p->nrel; r++) {
    const sch_relation *rel = &p->rel[r];
    int in = 0;
    for (int k = 0; k < n; k++)
      in |= from[k] == rel->parent || from[k] == rel->outer || from[k] == rel->inner;
    if (!in) continue;
    if (rel->kind == SCH_REL_FUSE)
      return tec_ctx_printf(ctx, "its loop '%s' fuses that dimension with another",
                            rel->fused->name);
    if (rel->tail == SCH_TAIL_SHIFT_INWARDS)
      return tec_ctx_printf(ctx, "its loop '%s' over that dimension is split with tail strategy "
                                 "shift_inwards", rel->parent->name);
    if (n + 2 > 64) return "its loops over that dimension are split too many times";
    from[n++] = rel->outer, from[n++] = rel->inner;
  }
  const te_tensor *t = p->tensor;
  for (int i = t->ndim; i < p->nroot; i++)
    for (int e = 0; e < t->ndim; e++)
      if (ir_uses_var(p->root[i]->dom_min, p->root[e]->var) ||
          ir_uses_var(p->root[i]->dom_extent, p->root[e]->var))
        return tec_ctx_printf(ctx, "its reduce axis '%s' ranges over a domain that uses its data "
                                   "axes", p->root[i]->name);
  return NULL;
}

/* what iteration v - 1 computed overlaps what v needs: hi(v - 1) + 1 - lo(v) > 0 */
static int overlaps(const ir_expr *lo, const ir_expr *hi, const ir_expr *v, arith_env *env) {
  const ir_expr *vm1 = ir_sub(v, ir_int(v->ctx, 1));
  const ir_expr *d = arith_simplify(
      ir_sub(ir_add(ir_substitute(hi, 1, &v, &vm1), ir_int(v->ctx, 1)), lo), env);
  arith_range r = d ? arith_bound(d, env) : arith_range_unknown();
  return r.has_lo && r.lo > 0;
}

/* The slid loop and dimension for producer pi (*loop), or -1: no loop moves the box (silent),
 * or none that moves it can slide (a note with the innermost one's reason). Outermost first:
 * a loop that cannot slide because a loop inside it moves the same dimension leaves it to
 * that one (which then restarts its window at every iteration of the outer). */
static int slide_dim(lower_state *ls, int pi, int spos, int pos, const ir_expr *const *lo,
                     const ir_expr *const *hi, arith_env *env, int *loop) {
  const sch_stage *p = ls->s->stages[pi], *c = p->attach_stage;
  const te_tensor *t = p->tensor;
  const char *why = NULL;
  int why_k = -1;
  for (int k = spos + 1; k <= pos; k++) {
    const ir_expr *v = c->leaf[k]->var;
    int d = -1, n = 0;
    for (int e = 0; e < t->ndim; e++)
      if (lo[e] && (ir_uses_var(lo[e], v) || ir_uses_var(hi[e], v))) d = e, n++;
    if (!n) continue;
    const char *w = NULL;
    if (n > 1)
      w = tec_ctx_printf(ls->ctx, "it moves the region along %d dimensions", n);
    else if (k < pos && (uses_loops(c, k + 1, pos, lo[d]) || uses_loops(c, k + 1, pos, hi[d])))
      w = tec_ctx_printf(ls->ctx, "a loop inside it moves the region along the same "
                                  "dimension %d", d);
    else if (!rises(lo[d], v, env) || !rises(hi[d], v, env))
      w = tec_ctx_printf(ls->ctx, "the region does not move monotonically up along "
                                  "dimension %d", d);
    if (!w) w = producer_cannot_slide(ls, p, d);
    if (!w && !overlaps(lo[d], hi[d], v, env)) continue; /* nothing to reuse: no sliding */
    if (!w) {
      *loop = k;
      return d;
    }
    why = w, why_k = k;
  }
  if (why)
    tec_ctx_note(ls->ctx, "store_at: '%s' is stored %s%s%s but computed in full at every "
                          "iteration of loop '%s' of '%s' (no sliding window): %s",
                 t->name, spos < 0 ? "at the top level" : "at loop '",
                 spos < 0 ? "" : c->leaf[spos]->name, spos < 0 ? "" : "'",
                 c->leaf[why_k]->name, c->tensor->name, why);
  return -1;
}

/* The rows iteration v of a slid loop computes along the slid dimension: those of its box
 * [.., end(v)) that iteration v - 1 did not, [max(end(v - 1), from), end(v)), end(v) =
 * min(hi + 1, shape) (a box clamped to the tensor: a clamped last iteration computes nothing).
 * Warm-up (lower_store_push_warm): every iteration so, from the first row read; without:
 * from = the box's min, and the first iteration computes its whole box
 * ([v > 0 ? max(end(v - 1), from) : from, end(v))). */
static int new_rows(tec_ctx *ctx, const ir_expr *v, const ir_expr *hi, const ir_expr *shape,
                    const ir_expr *from, int warm, arith_env *env, const ir_expr **min,
                    const ir_expr **extent) {
  const ir_expr *zero = ir_int(ctx, 0), *vm1 = ir_sub(v, ir_int(ctx, 1));
  const ir_expr *end = arith_simplify(ir_min(ir_add(hi, ir_int(ctx, 1)), shape), env);
  const ir_expr *m = ir_max(ir_substitute(end, 1, &v, &vm1), from);
  if (!warm) m = ir_select(ir_gt(v, zero), m, from);
  *min = arith_simplify(m, env);
  *extent = arith_simplify(ir_max(ir_sub(end, m), zero), env);
  return *min && *extent ? 0 : -1;
}

/* ---- warm-up (Halide's loop warm-up for sliding windows) ----
 * When the slid loop v is the compute loop, v starts W iterations early and the consumer's
 * own work is guarded by v >= 0 (schedule_ops.c), so that every iteration, the first ones
 * included, computes only the rows the previous did not:
 *   for (v, -W, N + W) { produce p: rows [max(end(v - 1), L), end(v));  if (v >= 0) ... }
 * end(v) = min(hi(v) + 1, shape), L = the first row read over the store loop. A stage's
 * readers that warm up then read only what their new rows need (bound.c), so along a chain
 * every stage's window, and its fold, is its own halo plus the step, not the sum of the
 * halos after it. It applies when hi is affine in v (a constant step) and the warm-up W is a
 * constant, and to a compute loop only where every stage computed there warms up (a stage
 * that cannot runs its full box at the first iteration, as before, and so would its
 * producers): lower_store_warm_check turns the loop off otherwise and bound inference runs
 * again. */

/* is stage j computed at leaf `it` (a member of its warm-up group)? */
static int at_loop(const lower_state *ls, int j, const sch_iter *it) {
  return ls->attach[j] == SCH_ATTACH_SCOPE && ls->s->stages[j]->attach_iter == it;
}

int lower_store_warm_groups(lower_state *ls) {
  const sch_schedule *s = ls->s;
  int any = 0; /* (every lowering comes here: most store nothing elsewhere) */
  for (int pi = 0; pi < s->nstage && !any; pi++)
    any = s->stages[pi]->store_iter || s->stages[pi]->store_root;
  if (!any) {
    memset(ls->no_warm, 1, (size_t)s->nstage);
    return 0;
  }
  for (int pi = 0; pi < s->nstage; pi++) {
    const sch_iter *it = s->stages[pi]->attach_iter;
    int ok = at_loop(ls, pi, it) && it->for_kind == IR_FOR_SERIAL;
    for (int j = 0; j < s->nstage && ok; j++) {
      const sch_stage *sj = s->stages[j];
      if (at_loop(ls, j, it) && !sj->store_iter && !sj->store_root) ok = 0;
      /* a stage computed inside one of them (its regions assume the loop from 0) */
      const sch_stage *a = ls->attach[j] == SCH_ATTACH_SCOPE ? sj->attach_stage : NULL;
      if (a && a->attach_iter == it && lower_attach_of(ls, a) == SCH_ATTACH_SCOPE) ok = 0;
    }
    ls->no_warm[pi] = !ok;
  }
  return 0;
}

int lower_store_warm_check(lower_state *ls) {
  const sch_schedule *s = ls->s;
  int again = 0;
  for (int pi = 0; pi < s->nstage; pi++) {
    if (ls->no_warm[pi] || !at_loop(ls, pi, s->stages[pi]->attach_iter)) continue;
    const sch_iter *it = s->stages[pi]->attach_iter;
    int warm = 0, cold = 0;
    int64_t w = 0;
    for (int j = 0; j < s->nstage; j++)
      if (at_loop(ls, j, it)) {
        if (ls->store[j].warm) warm = 1, w = ls->store[j].w > w ? ls->store[j].w : w;
        else cold = 1;
      }
    for (int j = 0; j < s->nstage; j++)
      if (at_loop(ls, j, it)) {
        if (warm && cold) ls->no_warm[j] = 1;
        ls->store[j].loop_w = w;
      }
    again |= warm && cold;
  }
  return again;
}

int64_t lower_store_warm_of(const lower_state *ls, int si, const sch_iter *it) {
  if (!ls->store) return 0;
  for (int k = 0; k < si; k++)
    if (at_loop(ls, k, it) && ls->s->stages[k]->attach_stage == ls->s->stages[si] &&
        ls->store[k].warm)
      return ls->store[k].loop_w;
  return 0;
}

int lower_store_push_warm(lower_state *ls, int whole, const sch_iter *group) {
  tec_ctx *ctx = ls->ctx;
  int n = 0;
  for (int si = 0; si < ls->s->nstage; si++) {
    const lower_store *st = &ls->store[si];
    if (!st->warm) continue;
    const sch_stage *p = ls->s->stages[si];
    const ir_expr *min, *ext;
    if (whole || p->attach_iter != group) { /* every row it computes in its store loop */
      min = st->smin, ext = st->sext;
    } else { /* the new rows of one iteration of the loop the producer is computed at too */
      const ir_expr *v = p->attach_iter->var, *vm1 = ir_sub(v, ir_int(ctx, 1));
      min = arith_simplify(ir_add(ir_substitute(st->hi, 1, &v, &vm1), ir_int(ctx, 1)), NULL);
      ext = ir_int(ctx, st->step);
    }
    if (!min || !ext ||
        tec_grow(ctx, (void **)&ls->b.r, &ls->b.cap, ls->b.n + 1, sizeof *ls->b.r))
      return -1;
    ls->b.r[ls->b.n++] = (lower_range){p->root[st->dim], min, ext};
    n++;
  }
  return n;
}

/* a constant c with e == c (env may be NULL) */
static int const_of(const ir_expr *e, const arith_env *env, int64_t *c) {
  arith_range r = e ? arith_bound(e, env) : arith_range_unknown();
  if (!r.has_lo || !r.has_hi || r.lo != r.hi) return 0;
  *c = r.lo;
  return 1;
}

/* Warm-up for producer pi sliding along dimension d at loop k (its compute loop pos): 1 and
 * the plan in ls->store[pi], 0 (the slid range without warm-up), or -1 (out of memory). */
static int warm_plan(lower_state *ls, int pi, int k, int pos, int d, const ir_expr *hi,
                     const ir_expr *rlo, const ir_expr *rhi, arith_env *env) {
  tec_ctx *ctx = ls->ctx;
  const sch_stage *p = ls->s->stages[pi], *c = p->attach_stage;
  lower_store *st = &ls->store[pi];
  /* the producer's loop over d is its root axis itself: a warm reader's range is then its
   * loop's (bound.c reads the new rows off it) */
  if (ls->no_warm[pi] || k != pos || !rlo || !rhi || sch_leaf_index(p, p->root[d]) < 0)
    return 0;
  const ir_expr *v = c->leaf[k]->var, *one = ir_int(ctx, 1);
  const ir_expr *vm1 = ir_sub(v, one), *m1 = ir_int(ctx, -1);
  int64_t a, d0;
  /* affine in v, without the loop's range (the warm-up runs v below 0) */
  if (!const_of(arith_simplify(ir_sub(hi, ir_substitute(hi, 1, &v, &vm1)), NULL), NULL, &a) ||
      a <= 0)
    return 0;
  const ir_expr *rest = arith_simplify(ir_sub(hi, ir_mul(ir_int(ctx, a), v)), NULL);
  if (!rest || ir_uses_var(rest, v)) return 0;
  /* W: the first iteration whose previous ends at or before the first row read, smin:
   * hi(-W - 1) + 1 <= smin, i.e. d0 + a W >= 0 with d0 = smin - hi(-1) - 1 (its least value
   * over the outer loops) */
  arith_range r = arith_bound(
      arith_simplify(ir_sub(ir_sub(rlo, ir_substitute(hi, 1, &v, &m1)), one), env), env);
  if (!r.has_lo) return 0;
  d0 = r.lo;
  int64_t w = d0 >= 0 ? 0 : (-d0 + a - 1) / a;
  if (w > ((int64_t)1 << 20)) return 0;
  const ir_expr *sext = arith_simplify(ir_add(ir_sub(rhi, rlo), one), env);
  if (!sext) return -1; /* (out of memory: set nothing) */
  st->warm = 1;
  st->w = w;
  st->step = a;
  st->hi = hi;
  st->smin = rlo;
  st->sext = sext;
  return 1;
}

int lower_store_plan(lower_state *ls, int pi, int spos, int pos, const ir_expr *const *lo,
                     const ir_expr *const *hi, const ir_expr *const *slo,
                     const ir_expr *const *shi, const ir_expr *const *rlo,
                     const ir_expr *const *rhi, const ir_expr *const *cmin,
                     const ir_expr *const *wend, arith_env *env, const ir_expr **reg) {
  tec_ctx *ctx = ls->ctx;
  const sch_stage *p = ls->s->stages[pi], *c = p->attach_stage;
  const te_tensor *t = p->tensor;
  lower_store *st = &ls->store[pi];
  *st = (lower_store){.pos = spos, .root = spos < 0, .dim = -1};
  int k = -1;
  int d = slide_dim(ls, pi, spos, pos, lo, hi, env, &k);
  const ir_expr *zero = ir_int(ctx, 0);
  for (int e = 0; e < t->ndim; e++) {
    const ir_expr *shape = t->shape[e];
    /* a dimension no inner loop moves: the buffer is what one produce writes */
    if (lo[e] && slo[e] && !uses_loops(c, spos + 1, pos, cmin[e]) &&
        !uses_loops(c, spos + 1, pos, wend[e]))
      continue; /* (reg[2e], reg[2e+1] already hold it: bound.c) */
    const ir_expr *min = zero, *ext = shape;
    if (lo[e] && slo[e]) {
      min = arith_simplify(ir_max(slo[e], zero), env);
      const ir_expr *end = ir_min(ir_add(shi[e], ir_int(ctx, 1)), shape);
      arith_range er = arith_bound(arith_simplify(ir_sub(end, min), env), env);
      arith_range fr = arith_bound(arith_simplify(ir_add(ir_sub(shi[e], slo[e]), ir_int(ctx, 1)),
                                                  env), env);
      if (fr.has_hi && (!er.has_hi || fr.hi < er.hi)) er = fr;
      /* every element a produce writes: [cmin, min(wend, shape)) */
      arith_range wr = e == d ? arith_range_of(0, 0)
                              : arith_bound(arith_simplify(ir_sub(ir_min(wend[e], shape), min),
                                                           env), env);
      if (er.has_hi && wr.has_hi)
        ext = ir_int(ctx, er.hi > wr.hi ? (er.hi > 0 ? er.hi : 1) : (wr.hi > 0 ? wr.hi : 1));
      else
        min = zero; /* no bound: the whole dimension */
    }
    reg[2 * e] = min;
    reg[2 * e + 1] = ext;
  }
  if (d < 0) return 0;
  st->dim = d;
  ls->clamp[pi][d] = NULL; /* the slid end is clamped to the tensor already */
  int warm = warm_plan(ls, pi, k, pos, d, hi[d], rlo ? rlo[d] : NULL, rhi ? rhi[d] : NULL, env);
  if (warm < 0) return -1;
  /* the slid range: what iteration v adds to what v - 1 computed */
  if (!warm && new_rows(ctx, c->leaf[k]->var, hi[d], t->shape[d], cmin[d], 0, env, &st->min,
                        &st->extent))
    return -1;
  arith_range wr = arith_bound(arith_simplify(ir_add(ir_sub(hi[d], lo[d]), ir_int(ctx, 1)), env),
                               env);
  int64_t sext;
  if (wr.has_hi && !ls->no_fold) {
    int64_t f = arith_pow2_at_least(wr.hi);
    if (!ir_is_const_int(reg[2 * d + 1], &sext) || f < sext) {
      st->fold = f;
      reg[2 * d] = zero;
      reg[2 * d + 1] = ir_int(ctx, f);
    }
  }
  return 0;
}

int lower_store_finish(lower_state *ls) {
  for (int si = 0; si < ls->s->nstage; si++) {
    lower_store *st = &ls->store[si];
    if ((st->pos < 0 && !st->root) || st->dim < 0) continue;
    const sch_stage *p = ls->s->stages[si];
    const sch_iter *it = p->root[st->dim];
    /* warm: from the first row read, simplified without v's range (v runs below 0) */
    if (st->warm && new_rows(ls->ctx, p->attach_iter->var, st->hi, p->tensor->shape[st->dim],
                             ir_max(st->smin, ir_int(ls->ctx, 0)), 1, NULL, &st->min,
                             &st->extent))
      return -1;
    /* appended after the full range: lower_bounds_get returns the last entry, the slid one */
    if (tec_grow(ls->ctx, (void **)&ls->b.r, &ls->b.cap, ls->b.n + 1, sizeof *ls->b.r)) return -1;
    ls->b.r[ls->b.n++] = (lower_range){it, st->min, st->extent};
  }
  return 0;
}

/* accesses of the folded tensor: floormod(index, fold) along the folded dimension */
typedef struct fold_ctx {
  const te_tensor *t;
  int dim;
  int64_t fold;
} fold_ctx;

static const ir_expr **folded_args(ir_mutator *m, int n, const ir_expr *const *args) {
  fold_ctx *f = m->user;
  const ir_expr **a = tec_ctx_alloc(m->ctx, sizeof *a * (size_t)n);
  if (!a) return NULL;
  for (int i = 0; i < n; i++) {
    a[i] = ir_mutate_expr(m, args[i]);
    if (a[i] && i == f->dim) a[i] = ir_floormod(a[i], ir_int_t(m->ctx, a[i]->type, f->fold));
    if (!a[i]) return NULL;
  }
  return a;
}

static const ir_expr *fold_read(ir_mutator *m, const ir_expr *e) {
  fold_ctx *f = m->user;
  if (e->tensor != f->t) return ir_mutate_expr_default(m, e);
  const ir_expr **a = folded_args(m, e->nargs, e->args);
  return a ? ir_read(m->ctx, e->tensor, e->nargs, a) : NULL;
}

static const ir_stmt *fold_provide(ir_mutator *m, const ir_stmt *s) {
  fold_ctx *f = m->user;
  if (s->tensor != f->t) return ir_mutate_stmt_default(m, s);
  const ir_expr **a = folded_args(m, s->n, s->args);
  const ir_expr *val = ir_mutate_expr(m, s->a);
  return a && val ? ir_provide(s->tensor, s->n, a, val) : NULL;
}

const ir_stmt *lower_store_realize(lower_state *ls, int si, const ir_stmt *body) {
  const lower_store *st = &ls->store[si];
  te_tensor *t = ls->s->stages[si]->tensor;
  if (!body) return NULL;
  if (st->fold) {
    fold_ctx f = {t, st->dim, st->fold};
    ir_mutator m;
    ir_mutator_init(&m, ls->ctx, &f);
    m.expr[IR_READ] = fold_read;
    m.stmt[IR_S_PROVIDE] = fold_provide;
    body = ir_mutate_stmt(&m, body);
    if (!body) return NULL;
  }
  return ir_realize(t, t->ndim, ls->region[si], body);
}

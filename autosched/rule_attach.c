/* rule_attach.c — producers computed inside a consumer's row loop (compute_at): a stage that
 * is kept (not inlined: a stencil's input such as blur_x before blur_y, softmax's row max, exp
 * and sum) is computed per row tile of the root stage that reads it, when every read lines up
 * with that stage's rows:
 *
 *   blur_y[y, x] = blur_x[y, x] + blur_x[y + 1, x] + blur_x[y + 2, x]
 *     blur_y: for y.outer (parallel): { blur_x rows y.outer*16 .. +17; for y.inner, x ... }
 *
 * "Lines up": the producer's row index (its first axis of extent > 1) is the reader's row
 * variable plus a constant, and no other index uses it; a reader that is itself attached to
 * the same root, or inlined into readers that line up, counts as the root. The constants make
 * a halo: then the root's rows are tiled by 16 so the recomputed halo stays small; without a
 * halo the producer is computed per row. Readers elsewhere, non-affine rows, outputs and
 * constant-only stages keep the producer at the root. */
#include <stdlib.h>
#include "autosched/internal.h"

/* the row axis: the first data axis of extent > 1 (a root that hosts producers needs an axis
 * inside it, so not its last) */
static int row_axis(const as_stage *s, int host) {
  int nd = s->t->ndim;
  for (int d = 0; d < nd - (host ? 1 : 0); d++)
    if (s->ext[d] > 1) return d;
  return -1;
}

static int reader_vars(const te_tensor *c, const ir_expr **vars) {
  int nv = 0;
  for (int d = 0; d < c->ndim && nv < AS_MAX_DIM; d++) vars[nv++] = c->axis[d];
  for (int r = 0; r < c->nreduce && nv < 2 * AS_MAX_DIM; r++) vars[nv++] = c->reduce_axis[r];
  return nv;
}

/* the root stage whose rows reader q's rows are (q itself if it can host), through inlined
 * readers; the halo of P's reads in *halo. -1: P does not line up. */
static int root_of(as_prog *p, int P, int q, int64_t *halo, int depth) {
  as_stage *sp = &p->st[P], *sq = &p->st[q];
  int pr = row_axis(sp, 0);
  if (depth > 8 || pr < 0 || !sq->understood) return -1;
  int host = sq->ch.kind == 0 || sq->ch.kind == TEC_AS_LOOPS;
  int qr = row_axis(sq, host && sq->ch.kind != TEC_AS_INLINE);
  if (sq->ch.kind == TEC_AS_INLINE) qr = row_axis(sq, 0);
  if (qr < 0) return -1;
  const ir_expr *reads[16], *vars[2 * AS_MAX_DIM];
  int nr = as_reads_of(sq->t->body, sp->t, reads, 16), nv = reader_vars(sq->t, vars);
  if (nr < 1 || nr > 16) return -1;
  int64_t h = 0;
  for (int r = 0; r < nr; r++) {
    for (int d = 0; d < reads[r]->nargs; d++) {
      int64_t coef[2 * AS_MAX_DIM], c0;
      int aff = as_affine(reads[r]->args[d], nv, vars, coef, &c0);
      if (d == pr) {
        if (!aff || coef[qr] != 1) return -1;
        for (int v = 0; v < nv; v++)
          if (v != qr && coef[v]) return -1;
        if (llabs(c0) > h) h = llabs(c0);
      } else if (ir_uses_var(reads[r]->args[d], vars[qr])) {
        return -1;
      }
    }
  }
  if (sq->ch.kind == TEC_AS_ATTACH) {
    *halo = h + sq->halo;
    return sq->attach_to;
  }
  if (sq->ch.kind == TEC_AS_INLINE) {
    int root = -1;
    int64_t worst = 0;
    for (int c = 0; c < sq->nconsumers; c++) {
      int64_t hc = 0;
      int rc = c < 32 ? root_of(p, q, sq->consumers[c], &hc, depth + 1) : -1;
      if (rc < 0 || (root >= 0 && rc != root)) return -1;
      root = rc;
      if (hc > worst) worst = hc;
    }
    *halo = h + worst;
    return root;
  }
  if (!host || sq->is_reduce || (sq->t->body && sq->t->body->kind == IR_REDUCE)) return -1;
  *halo = h;
  return q;
}

void as_decide_attach(as_prog *p) {
  for (int i = p->n - 1; i >= 0; i--) {
    as_stage *s = &p->st[i];
    if (s->is_input || !s->understood || s->ch.kind || s->is_output || s->const_only) continue;
    if (s->nconsumers < 1 || s->nconsumers > 32 || AS_TUNED(p, s, at) == AS_AT_ROOT) continue;
    int root = -1;
    int64_t halo = 0;
    for (int c = 0; c < s->nconsumers; c++) {
      int64_t h = 0;
      int r = root_of(p, i, s->consumers[c], &h, 0);
      if (r < 0 || (root >= 0 && r != root)) {
        root = -1;
        break;
      }
      root = r;
      if (h > halo) halo = h;
    }
    if (root < 0) continue;
    as_stage *c = &p->st[root];
    s->ch.kind = TEC_AS_ATTACH;
    s->attach_to = root;
    s->halo = halo;
    c->has_attached = 1;
    if (halo > c->halo) c->halo = halo;
    /* a row reduction along its unit-stride axis: partial sums in one vector */
    int L = as_lanes(p, s->t);
    if (s->is_reduce && !s->t->body->c && s->unit_reduce && L >= 2 && s->nred >= 1 &&
        s->rext[s->nred - 1] >= 2 * L && AS_TUNED(p, s, rfactor) != 0) {
      s->ch.rfactor = 1;
      s->ch.vector = L;
    }
    s->rule = s->ch.rfactor
                  ? as_fmt(p, "compute_at %s's row loop, rfactor by %d lanes", c->t->name, L)
                  : as_fmt(p, "compute_at %s's row loop", c->t->name);
    s->why = halo ? as_fmt(p,
                           "its reads line up with %s's rows (a window of +-%lld rows): "
                           "computed per tile of rows, in cache",
                           c->t->name, (long long)halo)
                  : as_fmt(p, "its reads line up with %s's rows: computed per row, in cache",
                           c->t->name);
  }
  /* hosts: a halo tiles their rows */
  for (int i = 0; i < p->n; i++) {
    as_stage *c = &p->st[i];
    if (!c->has_attached) continue;
    int r = row_axis(c, 1);
    int64_t v = AS_TUNED(p, c, rows), want = v != AS_UNSET && v >= 1 ? v : 16;
    c->ch.rows = c->halo > 0 ? (c->ext[r] < want ? c->ext[r] : want) : 1;
  }
}

int as_apply_attach(as_prog *p, sch_schedule *s, int i) {
  as_stage *a = &p->st[i], *c = &p->st[a->attach_to];
  sch_stage *st = as_stage_named(s, a->t->name), *cs = as_stage_named(s, c->t->name);
  if (!st || !cs || !c->at_loop) {
    if (st && cs && !c->at_loop)
      tec_ctx_set_error(p->ctx, "tec_autoschedule: %s has no row loop to attach %s at", c->t->name,
                        a->t->name);
    return -1;
  }
  sch_iter *at = sch_leaf_named(cs, c->at_loop);
  if (!at || sch_compute_at(st, cs, at)) return -1;
  if (a->ch.rfactor) { /* the partials at the same loop; the stage adds the lanes */
    sch_stage *rs = a->rf_name ? as_stage_named(s, a->rf_name) : NULL;
    if (!rs || sch_compute_at(rs, cs, sch_leaf_named(cs, c->at_loop))) return -1;
    return 0;
  }
  return as_apply_loops(p, s, i);
}

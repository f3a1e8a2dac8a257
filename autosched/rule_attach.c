/* rule_attach.c — producers computed inside a consumer's tile (compute_at): a stage that is
 * kept (not inlined: a stencil's input such as blur_x before blur_y, softmax's row max, exp
 * and sum) is computed per tile of the root stage that reads it, when every read lines up
 * with that stage's rows:
 *
 *   blur_y[y, x] = blur_x[y, x] + blur_x[y + 1, x] + blur_x[y + 2, x]
 *     blur_y: for y.outer, x.outer: { blur_x rows y.outer*R .. +R+2, cols x.outer*C .. +C;
 *                                     for y.inner, x.inner ... }
 *
 * "Lines up": the producer's row index (its first axis of extent > 1) is one of the reader's
 * data axes plus a constant (for the root: any but its innermost, the same one for all its
 * producers) and no other index uses that axis; a reader that is itself attached to the same
 * root, or inlined into readers that line up, counts as the root. The constants make a halo
 * (rows, and columns when the innermost indices line up too). The root's axes that no
 * attached producer's read uses (unsharp's output channels) move inside the row tile, so the
 * producers are computed once per tile, not once per channel.
 *
 * The tile (rows R x columns C, or whole rows) is chosen by a cost: each producer recomputes
 * its halo, (R + halo)(C + halo_x) / (R C) of its work, and its tile must stay in cache (the
 * producers' tiles together within L2_BYTES; within L1_BYTES they cost less to store and
 * load). A producer whose recomputed work at the best tile would cost more than a buffer at
 * the root (a store and a load from memory, ROOT_MEM_OPS per element) is not attached: it
 * goes to the root and hosts its own producers (a long stencil chain becomes groups). Without
 * a halo the producer is computed per row. Readers elsewhere, non-affine rows, outputs and
 * constant-only stages keep the producer at the root. */
#include <stdint.h>
#include <stdlib.h>
#include "autosched/internal.h"
#include "arith/arith.h"

enum { L1_BYTES = 32 << 10, L2_BYTES = 512 << 10 }; /* the tiles: in L1 beside their inputs; in L2 */
#define ROOT_MEM_OPS 12.0 /* a buffer at the root: a store and loads from memory, in ops */
#define CHEAP_OPS 32.0    /* a tile doing less per element is bound by its loads */
#define MAX_ROWS 64       /* rows (pages) such a tile may touch at once */
#define REG_ROWS 8        /* a register tile's rows (unrolled: rule_loops.c) */
#define REG_SPAN 12       /* its producers' rows, halo included (unrolled: rule_loops.c) */

/* the row axis of a producer or of a reader between it and the root: the first data axis of
 * extent > 1 */
static int row_axis(const as_stage *s) {
  for (int d = 0; d < s->t->ndim; d++)
    if (s->ext[d] > 1) return d;
  return -1;
}

static int reader_vars(const te_tensor *c, const ir_expr **vars) {
  int nv = 0;
  for (int d = 0; d < c->ndim && nv < AS_MAX_DIM; d++) vars[nv++] = c->axis[d];
  for (int r = 0; r < c->nreduce && nv < 2 * AS_MAX_DIM; r++) vars[nv++] = c->reduce_axis[r];
  return nv;
}

/* e = vars[v] + *c0: v, else -1 */
static int var_plus_const(const ir_expr *e, int nv, const ir_expr *const *vars, int64_t *c0) {
  int64_t coef[2 * AS_MAX_DIM];
  if (!as_affine(e, nv, vars, coef, c0)) return -1;
  int v = -1;
  for (int k = 0; k < nv; k++)
    if (coef[k]) {
      if (coef[k] != 1 || v >= 0) return -1;
      v = k;
    }
  return v;
}

/* how P's reads reach the root: halos (rows, columns; -1 columns do not line up), the root's
 * axes they use, the root's row axis */
typedef struct link {
  int64_t hy, hx;
  unsigned mask;
  int qr;
  int64_t own; /* rows beyond one the reader itself reads (through inlined readers) */
} link;

/* the root stage whose rows reader q's rows are (q itself if it can host), through inlined
 * readers and readers attached to it; -1: P does not line up */
static int root_of(as_prog *p, int P, int q, link *L, int depth) {
  as_stage *sp = &p->st[P], *sq = &p->st[q];
  int pr = row_axis(sp), pl = sp->t->ndim - 1, ql = sq->t->ndim - 1;
  if (depth > 8 || pr < 0 || !sq->understood || ql < 0) return -1;
  int kind = sq->ch.kind, host = kind == 0 || kind == TEC_AS_LOOPS;
  if (host && (sq->is_reduce || (sq->t->body && sq->t->body->kind == IR_REDUCE))) return -1;
  if (!host && kind != TEC_AS_ATTACH && kind != TEC_AS_INLINE) return -1;
  int qr = host ? sq->host_row : row_axis(sq);
  if (!host && qr < 0) return -1;
  const ir_expr *reads[64], *vars[2 * AS_MAX_DIM];
  int nr = as_reads_of(sq->t->body, sp->t, reads, 64), nv = reader_vars(sq->t, vars);
  if (nr < 1 || nr > 64) return -1;
  int64_t rlo = INT64_MAX, rhi = INT64_MIN, clo = INT64_MAX, chi = INT64_MIN;
  int cols = pl != pr;
  unsigned mask = 0;
  for (int r = 0; r < nr; r++) {
    const ir_expr *rd = reads[r];
    int64_t c0, cc;
    if (rd->nargs != sp->t->ndim) return -1;
    int v = var_plus_const(rd->args[pr], nv, vars, &c0);
    if (v < 0 || v > ql) return -1;
    if (qr < 0) { /* the root's row axis: any with an axis inside it */
      if (v >= ql || sq->ext[v] < 2) return -1;
      qr = v;
    }
    if (v != qr) return -1;
    if (c0 < rlo) rlo = c0;
    if (c0 > rhi) rhi = c0;
    for (int d = 0; d < rd->nargs; d++) {
      if (d != pr && ir_uses_var(rd->args[d], vars[qr])) return -1;
      for (int a = 0; a <= ql && a < 32; a++)
        if (ir_uses_var(rd->args[d], vars[a])) mask |= 1u << a;
    }
    if (cols && var_plus_const(rd->args[pl], nv, vars, &cc) == ql && qr != ql) {
      if (cc < clo) clo = cc;
      if (cc > chi) chi = cc;
    } else {
      cols = 0;
    }
  }
  int64_t h = rhi - rlo, hx = cols ? chi - clo : -1;
  if (kind == TEC_AS_ATTACH) {
    *L = (link){h + sq->halo, hx < 0 || sq->halo_x < 0 ? -1 : hx + sq->halo_x, 0,
                p->st[sq->attach_to].host_row, h};
    return sq->attach_to;
  }
  if (kind == TEC_AS_INLINE) {
    int root = -1;
    link worst = {0, 0, 0, -1, 0};
    for (int c = 0; c < sq->nconsumers; c++) {
      link lc;
      int rc = c < 32 ? root_of(p, q, sq->consumers[c], &lc, depth + 1) : -1;
      if (rc < 0 || (root >= 0 && rc != root)) return -1;
      if (lc.qr >= 0 && worst.qr >= 0 && lc.qr != worst.qr) return -1;
      root = rc;
      if (lc.qr >= 0) worst.qr = lc.qr;
      if (lc.hy > worst.hy) worst.hy = lc.hy;
      worst.hx = lc.hx < 0 || worst.hx < 0 ? -1 : lc.hx > worst.hx ? lc.hx : worst.hx;
      worst.mask |= lc.mask;
      if (lc.own > worst.own) worst.own = lc.own;
    }
    *L = (link){h + worst.hy, hx < 0 || worst.hx < 0 ? -1 : hx + worst.hx, worst.mask, worst.qr,
                h + worst.own};
    return root;
  }
  *L = (link){h, hx, mask, qr, h};
  return q;
}

/* planes of memory (prefetch streams) that stage k's reads of tensors computed outside host
 * H's tile touch: the distinct outer indices (all but the last two) of its reads of each such
 * input (input[c][y][x] for 3 values of c: 3 planes). Per tile of R rows it touches R + halo
 * rows of each plane. */
static int64_t outside_planes(const as_prog *p, int H, int k) {
  const te_tensor *t = p->st[k].t;
  int64_t planes = 0;
  for (int j = 0; j < t->ninputs; j++) {
    int e = as_index_of(p, t->inputs[j]);
    if (e < 0) continue;
    const as_stage *in = &p->st[e];
    if (!in->is_input && (in->ch.kind == TEC_AS_INLINE ||
                          (in->ch.kind == TEC_AS_ATTACH && in->attach_to == H)))
      continue;
    const ir_expr *reads[16];
    int nr = as_reads_of(t->body, in->t, reads, 16);
    for (int r = 0; r < nr && r < 16; r++) { /* distinct outer indices: planes */
      int dup = 0;
      for (int q = 0; q < r && !dup; q++) {
        int same = 1;
        for (int d = 0; d + 2 < reads[r]->nargs && same; d++)
          same = ir_expr_equal(reads[r]->args[d], reads[q]->args[d]);
        dup = same;
      }
      planes += !dup;
    }
  }
  return planes;
}

/* the rows a sliding producer keeps: its window (own + 1) folded as lower/store_at.c folds it */
static int64_t fold_rows(int64_t own) { return arith_pow2_at_least(own + 1); }

/* what best_tile needs of one producer in host H's tile, the same for every tile it tries */
typedef struct tile_member {
  int64_t ky, kx, ext_l; /* halos; the extent of its last axis */
  int64_t fold;          /* sliding: the rows its buffer keeps (its window, a power of two) */
  double other, cost;    /* its elements per (row, column) (the other axes); its ops + 1 */
  int bytes;             /* per element */
  int64_t planes;        /* outside_planes */
  int vector;            /* vectorized by rule_loops.c (no guarded or strided read) */
} tile_member;

/* host H's tile with its producers (those attached to H, and P with halos hy, hx and its
 * own window own, when P >= 0): the producers' facts, gathered once (outside_planes walks
 * each body) for every search of that tile (plain and sliding, gated or not: best_tile) */
typedef struct tile_set {
  int H;
  int64_t host_planes; /* the planes the host's own reads touch per row of its tile */
  double work;         /* the host's and its producers' ops per element */
  int nm;              /* producers */
  tile_member *m, stack[64];
} tile_set;

/* 0, or -1: no tile (H has no row axis, or out of memory); tile_set_free(ts) after a 0 */
static int tile_set_of(as_prog *p, int H, int P, int64_t hy, int64_t hx, int64_t own,
                       tile_set *ts) {
  const as_stage *h = &p->st[H];
  int r = h->host_row, nm = 0;
  if (r < 0 || h->t->ndim < 2) return -1;
  /* the producers in the tile, in program order (best_tile's sums keep that order) */
  for (int k = 0; k < p->n; k++) {
    const as_stage *s = &p->st[k];
    nm += k == P || (s->ch.kind == TEC_AS_ATTACH && s->attach_to == H);
  }
  ts->H = H, ts->m = ts->stack, ts->nm = 0;
  if (nm > 64 && !(ts->m = malloc(sizeof *ts->m * (size_t)nm))) return -1;
  /* the host's own reads: planes times the host's axes outside the tile's rows */
  ts->host_planes = outside_planes(p, H, H);
  for (int d = 0; d < r; d++)
    if (h->ext[d] > 1 && !(d < 32 && (h->host_mask >> d & 1))) ts->host_planes *= h->ext[d];
  ts->work = h->cost + 1;
  for (int k = 0; k < p->n; k++) {
    const as_stage *s = &p->st[k];
    if (!(k == P || (s->ch.kind == TEC_AS_ATTACH && s->attach_to == H))) continue;
    tile_member *t = &ts->m[ts->nm++];
    int pr = row_axis(s), pl = s->t->ndim - 1;
    t->ky = k == P ? hy : s->halo, t->kx = k == P ? hx : s->halo_x;
    t->fold = fold_rows(k == P ? own : s->own);
    t->ext_l = s->ext[pl];
    t->other = 1;
    for (int d = 0; d < s->t->ndim; d++)
      if (d != pr && d != pl) t->other *= (double)s->ext[d];
    t->cost = s->cost + 1;
    t->bytes = tec_dtype_bytes(s->t->type);
    t->planes = outside_planes(p, H, k);
    t->vector = !s->guarded_read && !s->strided_read;
    ts->work += s->cost + 1;
  }
  p->work_walks += 1 + ts->nm;
  return 0;
}

static void tile_set_free(tile_set *ts) {
  if (ts->m != ts->stack) free(ts->m);
}

/* the tile of ts's host H's row axis r: R rows x C columns (C 0: whole rows) with ts's
 * producers: the one of least cost whose producers' tiles fit L2_BYTES and (gate) each of
 * which recomputes less than a root buffer costs. Its cost, or -1 when no tile qualifies.
 * Each tile is arithmetic on ts's facts.
 * slide: the producers stored per tile and computed per row (rule_slide_store.c, with the
 * loop warm-up of lower/store_at.c): each computes its rows of the tile once, its halo rows
 * once per tile, and keeps only its window of rows (folded to a power of two), so the tiles
 * may be tall: a producer's buffer is fold x columns, not (rows + halo) x columns; no
 * register tile. */
static double best_tile(as_prog *p, const tile_set *ts, int gate, int slide, int64_t *R,
                        int64_t *C) {
  static const int64_t rows[] = {4, 8, 16, 32, 64, 128, 256, 512, 1024};
  size_t nrows = slide ? 9 : 6;
  const as_stage *h = &p->st[ts->H];
  int r = h->host_row, nd = h->t->ndim, L = as_lanes(p, h->t), nm = ts->nm;
  int64_t ER = h->ext[r], W = h->ext[nd - 1], colv[] = {0, L, 64, 128, 256, 512};
  int64_t host_planes = ts->host_planes;
  const tile_member *m = ts->m;
  double work = ts->work;
  double best = -1;
  for (size_t ci = 0; ci < sizeof colv / sizeof *colv; ci++) {
    int64_t c = colv[ci];
    if (c && c >= W) continue;
    if (ci == 1 && L >= colv[2]) continue; /* lanes of 64 or more: no register tile */
    if (slide && ci == 1) continue; /* (no register tile) */
    for (size_t ri = 0; ri < nrows; ri++) {
      int64_t rr = rows[ri] < ER ? rows[ri] : ER;
      if (ri && rows[ri - 1] >= ER) break;
      p->work_tiles++;
      /* a register tile: one vector of columns and at most REG_ROWS rows, every producer's
       * rows unrolled beside it (REG_SPAN rows at most, no column halo: one vector each; all
       * of them vectorized) and all of them in the vector registers: the producers' values
       * are never stored */
      int reg = !slide && c == L && rr <= REG_ROWS && p->regs > 0 && !h->guarded_read &&
                !h->strided_read;
      int64_t vregs = rr;
      for (int k = 0; k < nm && reg; k++) {
        reg = m[k].kx == 0 && rr + m[k].ky <= REG_SPAN && m[k].ext_l == W && m[k].vector;
        vregs += rr + m[k].ky;
      }
      reg &= vregs <= p->regs;
      if (c == L && !reg) continue; /* a tile of one vector otherwise: the loop per row */
      /* short rows: the vector loop restarts per row of the tile (unrolled: not) */
      double bytes = 0, cost = c && !reg ? 1.0 * L / (double)c : 0;
      int ok = 1;
      for (int k = 0; k < nm && ok; k++) {
        const tile_member *t = &m[k];
        if (c && t->kx < 0) ok = 0;
        double ty = (double)(rr + t->ky), tx = c ? (double)(c + t->kx) : (double)t->ext_l;
        double ratio = ty * (c ? tx : W) / ((double)rr * (double)(c ? c : W));
        bytes += (slide ? (double)t->fold : ty) * tx * t->other * t->bytes;
        if (gate && (t->cost) * (ratio - 1) > ROOT_MEM_OPS) ok = 0;
        cost += t->cost * ratio;
      }
      /* a tile of cheap stages is bound by its loads: more rows at once than the TLB and
       * the prefetchers follow (MAX_ROWS) cost more than its halo saves */
      int64_t touched = slide ? host_planes + 1 : rr * host_planes + rr; /* (sliding: a row) */
      for (int k = 0; k < nm; k++) touched += (slide ? m[k].fold : rr + m[k].ky) * m[k].planes;
      if (work <= CHEAP_OPS && touched > MAX_ROWS) continue;
      if (!ok || bytes > L2_BYTES) continue;
      /* storing and loading the tiles: least when they leave most of L1 to their inputs
       * (none in registers) */
      if (!reg) cost += nm * (bytes <= L1_BYTES ? 0.5 + 1.5 * bytes / L1_BYTES : 2.0);
      if (best < 0 || cost < best) best = cost, *R = rr, *C = c;
    }
  }
  return best;
}

void as_decide_attach(as_prog *p) {
  for (int i = p->n - 1; i >= 0; i--) {
    as_stage *s = &p->st[i];
    if (s->is_input || !s->understood || s->ch.kind || s->is_output || s->const_only) continue;
    if (s->nconsumers < 1 || s->nconsumers > 32 || AS_TUNED(p, s, at) == AS_AT_ROOT) continue;
    int root = -1;
    link all = {0, 0, 0, -1, 0};
    for (int c = 0; c < s->nconsumers; c++) {
      link l;
      int r = root_of(p, i, s->consumers[c], &l, 0);
      if (r < 0 || (root >= 0 && r != root) || (l.qr >= 0 && all.qr >= 0 && l.qr != all.qr)) {
        root = -1;
        break;
      }
      root = r;
      if (l.qr >= 0) all.qr = l.qr;
      if (l.hy > all.hy) all.hy = l.hy;
      all.hx = l.hx < 0 || all.hx < 0 ? -1 : l.hx > all.hx ? l.hx : all.hx;
      all.mask |= l.mask;
      if (l.own > all.own) all.own = l.own;
    }
    if (root < 0 || all.qr < 0) continue;
    as_stage *c = &p->st[root];
    int host_row = c->host_row;
    c->host_row = all.qr; /* best_tile reads it */
    int64_t R, C;
    /* a halo: attached only where some tile recomputes less than a root buffer costs (the
     * tuned mode's `at=attach` attaches regardless); where only a sliding tile does (a long
     * chain: tall tiles recompute little), the host must slide */
    int need_slide = 0, forced = AS_TUNED(p, s, at) == AS_AT_ATTACH, fits = 1;
    /* (forced too: its host slides where the instant mode's would, so the space's default
     * config is the instant schedule) */
    tile_set ts;
    if (all.hy > 0) {
      int got = tile_set_of(p, root, i, all.hy, all.hx, all.own, &ts) == 0;
      fits = got && best_tile(p, &ts, 1, 0, &R, &C) >= 0;
      if (got && !fits && AS_TUNED(p, c, slide) != 0)
        fits = need_slide = best_tile(p, &ts, 1, 1, &R, &C) >= 0;
      if (got) tile_set_free(&ts);
    }
    if (!fits && !forced) {
      c->host_row = host_row;
      s->why = as_fmt(p,
                      "kept at the root: computed in %s's tiles, its halo (%lld rows) would "
                      "cost more recomputation than a buffer",
                      c->t->name, (long long)all.hy);
      continue;
    }
    s->ch.kind = TEC_AS_ATTACH;
    s->attach_to = root;
    s->own = all.own;
    c->slide_only |= need_slide;
    s->halo = all.hy;
    s->halo_x = all.hx;
    c->has_attached = 1;
    c->host_mask |= all.mask;
    if (all.hy > c->halo) c->halo = all.hy;
    c->halo_x = all.hx < 0 || c->halo_x < 0 ? -1 : all.hx > c->halo_x ? all.hx : c->halo_x;
    /* a row reduction along its unit-stride axis: partial sums in one vector */
    int L = as_lanes(p, s->t);
    if (s->is_reduce && !s->t->body->c && s->unit_reduce && L >= 2 && s->nred >= 1 &&
        s->rext[s->nred - 1] >= 2 * L && AS_TUNED(p, s, rfactor) != 0) {
      s->ch.rfactor = 1;
      s->ch.vector = L;
    }
    s->rule = s->ch.rfactor
                  ? as_fmt(p, "compute_at %s's row loop, rfactor by %d lanes", c->t->name, L)
                  : as_fmt(p, "compute_at %s's tile", c->t->name);
    s->why = all.hy ? as_fmt(p,
                             "its reads line up with %s's rows (a window of %lld rows, %lld "
                             "columns): computed per tile, in cache",
                             c->t->name, (long long)all.hy, (long long)all.hx)
                    : as_fmt(p, "its reads line up with %s's rows: computed per row, in cache",
                             c->t->name);
  }
  /* hosts: a halo tiles their rows (and columns) */
  for (int i = 0; i < p->n; i++) {
    as_stage *c = &p->st[i];
    if (!c->has_attached) continue;
    int64_t R = 1, C = 0, v;
    /* sliding where some producer is attached only because the tile slides (a long chain
     * of stencils); not otherwise: on unsharp and Harris, whose producers fit plain tiles,
     * sliding measured 1.6-1.7x slower (a row per iteration of each of a few cheap stages) */
    int want_slide = c->slide_only && c->host_row < c->t->ndim - 1 && AS_TUNED(p, c, slide) != 0;
    int64_t SR = 0, SC = 0;
    tile_set ts;
    int got = (want_slide || c->halo > 0) && tile_set_of(p, i, -1, 0, 0, 0, &ts) == 0;
    if (got && want_slide && best_tile(p, &ts, 1, 1, &SR, &SC) >= 0)
      c->ch.slide = 1, R = SR, C = SC; /* (the plain tiles are not searched) */
    else if (c->halo > 0 && (!got || (best_tile(p, &ts, 1, 0, &R, &C) < 0 &&
                                      best_tile(p, &ts, 0, 0, &R, &C) < 0)))
      R = 16 < c->ext[c->host_row] ? 16 : c->ext[c->host_row], C = 0;
    if (got) tile_set_free(&ts);
    for (int k = 0; k < p->n && c->ch.slide; k++) {
      as_stage *a = &p->st[k];
      if (a->ch.kind != TEC_AS_ATTACH || a->attach_to != i || a->ch.rfactor) continue;
      a->rule = as_fmt(p, "store_at %s's tile, compute_at its row loop (sliding)", c->t->name);
      a->why = as_fmt(p, "its reads line up with %s's rows (a window of %lld rows): one new row "
                         "per row of the tile, %lld rows kept (folded)",
                      c->t->name, (long long)a->halo, (long long)fold_rows(a->own));
    }
    if ((v = AS_TUNED(p, c, rows)) != AS_UNSET && v >= 1 && c->halo > 0)
      R = v < c->ext[c->host_row] ? v : c->ext[c->host_row];
    if ((v = AS_TUNED(p, c, cols)) != AS_UNSET && c->halo > 0) C = v;
    c->ch.rows = R;
    c->ch.cols = C;
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
  int slid = at && !a->ch.rfactor ? as_apply_slide(p, i, st, cs, at) : 0;
  if (slid < 0) return -1;
  if (slid) return as_apply_loops(p, s, i);
  if (!at || sch_compute_at(st, cs, at)) return -1;
  if (a->ch.rfactor) { /* the partials at the same loop; the stage adds the lanes */
    sch_stage *rs = a->rf_name ? as_stage_named(s, a->rf_name) : NULL;
    if (!rs || sch_compute_at(rs, cs, sch_leaf_named(cs, c->at_loop))) return -1;
    return 0;
  }
  return as_apply_loops(p, s, i);
}

/* rule_tile.c — multi-level tiling of a reduction with data reuse (matmul, convolution,
 * attention's products): some input is invariant along an output axis i, so a register tile of
 * tile_i rows (along i, unrolled) x tile_j columns (the innermost axis, vectorized) reuses each
 * loaded value tile_i or tile_j times. Space and reduction loops interleave as in Ansor's
 * SSRSRS: outer space tiles, then every reduction loop, then the register tile.
 *
 *   out:  [other axes..., (i.block,) j.outer, i.outer, (j.group)]  (the outer ones
 *                                               fused, parallel)                 S S
 *           acc tile at i.outer:  [reduce axes...]                               R
 *                                 [i.inner (unrolled), (k.inner (unrolled),)
 *                                  j.inner (vectorized)]                         S
 *           out[tile] = epilogue(acc)
 *
 * When the columns are one vector (a channel block of NCHW16c), a second output axis k along
 * which the input the rows re-read is invariant (a 1x1 convolution's data along the output
 * channel blocks) joins the tile: tile_k values of k (its outer part stays among the other
 * axes), tile_i x tile_k vector accumulators, each broadcast used tile_k times.
 *
 * The accumulator is the reduction itself computed at the tile loop of its element-wise
 * consumer (bias, activation, residual: fused into the tile, the consumer read through inlined
 * stages at the same index), or a cache_write "local" copy when there is no such consumer. The
 * tile fits the registers: tile_i * tile_k * ceil(tile_j / lanes) accumulators + one row of
 * vectors + a broadcast. An input loaded as vectors along the tile's columns with rows far apart (GEMM's
 * B[k, j]) is repacked into panels of tile_j columns (pack), so the tile reads it contiguously:
 * every call, or once in prepare when it is a te_const_placeholder (weights). */
#include "autosched/internal.h"

/* 1 if every read of t in e indexes t by exactly vars (t[axis0, axis1, ...]) */
static int reads_at_identity(const ir_expr *e, const te_tensor *t, const ir_expr *const *vars) {
  const ir_expr *reads[8];
  int nr = as_reads_of(e, t, reads, 8);
  if (nr != 1) return 0;
  for (int d = 0; d < t->ndim; d++)
    if (reads[0]->args[d] != vars[d]) return 0;
  return 1;
}

/* 1 if some input of reduction s, read once, is invariant along its reuse axis and loaded as
 * vectors along its last axis j (the last index is j itself): a short window (a depthwise
 * convolution's 9 taps over NCHW[x]c, weights [..][ky][kx][v]) then needs two vector loads per
 * FMA in its own loops, and a register tile of rows loads that input once per tap for tile_i
 * FMAs. A window whose weights are scalars along j (NCHW depthwise: w[c][ky][kx], a broadcast)
 * already loads one vector per FMA: no tile. */
static int vector_weights(as_prog *p, const as_stage *s) {
  const te_tensor *t = s->t;
  const ir_expr *src = as_source(t), *jv = t->axis[t->ndim - 1], *iv = t->axis[s->reuse_axis];
  for (int k = 0; k < t->ninputs; k++) {
    const ir_expr *reads[2];
    if (as_index_of(p, t->inputs[k]) < 0 || as_reads_of(src, t->inputs[k], reads, 2) != 1) continue;
    const ir_expr *r = reads[0];
    int ok = r->nargs >= 1 && r->args[r->nargs - 1] == jv;
    for (int d = 0; ok && d < r->nargs; d++)
      ok = !ir_uses_var(r->args[d], iv) && (d == r->nargs - 1 || !ir_uses_var(r->args[d], jv));
    if (ok) return 1;
  }
  return 0;
}

/* the second axis of the register tile: a data axis k (not the rows' axis i, not the last)
 * along which some input read by the reduction is invariant while it varies along i (the
 * rows re-read it: a 1x1 convolution's data over NCHW16c, data[n, I, y, x, u], is invariant
 * along the output channel blocks O and read per column x). A tile of tile_k values of k
 * then loads each of that input's values once for tile_k rows of accumulators, as the input
 * invariant along i is loaded once for tile_i. The innermost such axis; -1 if none. */
static int second_axis(as_prog *p, const as_stage *s) {
  const te_tensor *t = s->t;
  const ir_expr *src = as_source(t), *iv = t->axis[s->reuse_axis];
  int best = -1;
  for (int d = 0; d + 1 < t->ndim; d++) {
    if (d == s->reuse_axis || s->ext[d] < 2) continue;
    for (int k = 0; k < t->ninputs; k++) {
      const ir_expr *reads[8];
      int nr = as_reads_of(src, t->inputs[k], reads, 8), inv = nr > 0 && nr <= 8, rows = 0;
      if (as_index_of(p, t->inputs[k]) < 0) continue;
      for (int r = 0; r < nr && r < 8; r++)
        for (int a = 0; a < reads[r]->nargs; a++) {
          inv &= !ir_uses_var(reads[r]->args[a], t->axis[d]);
          rows |= ir_uses_var(reads[r]->args[a], iv);
        }
      if (inv && rows) best = d;
    }
  }
  return best;
}

/* the window's other axis: a data axis d (not the rows' axis, not the last) whose index into
 * some input also moves with a reduce axis (a depthwise convolution's output rows y, read at
 * y + ky). A tile of tile_k values of d shares the rows of the window between them as the
 * tile's rows share its columns. The innermost such axis; -1 if none. */
static int window_axis(as_prog *p, const as_stage *s) {
  const te_tensor *t = s->t;
  const ir_expr *src = as_source(t), *red = t->body;
  int best = -1;
  for (int d = 0; d + 1 < t->ndim; d++) {
    if (d == s->reuse_axis || s->ext[d] < 2) continue;
    for (int k = 0; k < t->ninputs; k++) {
      const ir_expr *reads[2];
      if (as_index_of(p, t->inputs[k]) < 0 || as_reads_of(src, t->inputs[k], reads, 2) != 1) continue;
      for (int a = 0; a < reads[0]->nargs; a++) {
        int slides = 0;
        for (int r = 0; r < red->nargs; r++) slides |= ir_uses_var(reads[0]->args[a], red->args[r]);
        if (slides && ir_uses_var(reads[0]->args[a], t->axis[d])) best = d;
      }
    }
  }
  return best;
}

/* the element-wise consumer to fuse the tile into: through inlined stages, each reading the one
 * before at the same index, to a stage that is not inlined; -1 if none */
static int find_anchor(as_prog *p, int i) {
  int cur = i;
  if (p->st[i].is_output) return -1; /* an output is written whole: its own cache_write copy */
  for (int depth = 0; depth < 16; depth++) {
    as_stage *s = &p->st[cur];
    if (s->nconsumers != 1) return -1;
    as_stage *c = &p->st[s->consumers[0]];
    const te_tensor *ct = c->t;
    if (!c->understood || c->is_reduce || (ct->body && ct->body->kind == IR_REDUCE) ||
        ct->ndim != s->t->ndim)
      return -1;
    for (int d = 0; d < ct->ndim; d++)
      if (c->ext[d] != s->ext[d]) return -1;
    if (!reads_at_identity(ct->body, s->t, ct->axis)) return -1;
    if (c->ch.kind != TEC_AS_INLINE) return c->ch.kind ? -1 : s->consumers[0];
    cur = s->consumers[0];
  }
  return -1;
}

/* the inputs worth a packed layout (at most 2), each read once by the reduction:
 *   columns  a placeholder reused along the tile's rows whose last index is the column axis
 *            itself, rows longer than a tile: the tile loads tile_j columns of rows far apart
 *            (GEMM's B[k, j]) -> panels [cols / tile_j][rows...][tile_j];
 *   rows     a constant placeholder read as a broadcast (no index uses the column axis) whose
 *            index d is the row axis itself, d not its last: the tile's tile_i broadcasts
 *            are rows far apart (conv's weights W[f, c, ry, rx]) -> [f / tile_i][...][tile_i],
 *            once, in prepare (per call it would not pay) */
static void pack_candidates(as_prog *p, as_stage *s) {
  const te_tensor *t = s->t;
  const ir_expr *src = as_source(t), *jv = t->axis[t->ndim - 1], *iv = t->axis[s->reuse_axis];
  s->npack = 0;
  for (int k = 0; k < t->ninputs && s->npack < 2; k++) {
    int xi = as_index_of(p, t->inputs[k]);
    const ir_expr *reads[2];
    if (xi < 0 || !p->st[xi].is_input || as_reads_of(src, t->inputs[k], reads, 2) != 1) continue;
    const ir_expr *r = reads[0];
    int last = r->nargs - 1, col = last >= 1 && r->args[last] == jv, row = -1;
    for (int d = 0; col && d < r->nargs; d++)
      col = !ir_uses_var(r->args[d], iv) && (d == last || !ir_uses_var(r->args[d], jv));
    if (col && p->st[xi].ext[last] > s->ch.tile_j) {
      s->pack_input[s->npack] = xi;
      s->pack_dim[s->npack] = last;
      s->pack_factor[s->npack++] = s->ch.tile_j;
      continue;
    }
    if (!t->inputs[k]->is_const || s->ch.tile_i < 2) continue;
    for (int d = 0; d < r->nargs; d++) {
      if (ir_uses_var(r->args[d], jv)) row = -2;
      if (row == -1 && r->args[d] == iv)
        row = d;
      else if (ir_uses_var(r->args[d], iv))
        row = -2;
    }
    if (row < 0 || row == last) continue;
    s->pack_input[s->npack] = xi;
    s->pack_dim[s->npack] = row;
    s->pack_factor[s->npack++] = s->ch.tile_i;
  }
  s->ch.pack = s->npack;
}

/* "; B packed into panels of 64 columns" (the report) */
static const char *pack_text(as_prog *p, const as_stage *s) {
  const char *txt = "";
  for (int k = 0; k < s->npack; k++)
    txt = as_fmt(p, "%s; %s packed into blocks of %lld along its dim %d%s", txt,
                 p->st[s->pack_input[k]].t->name, (long long)s->pack_factor[k], s->pack_dim[k],
                 p->st[s->pack_input[k]].t->is_const ? " (once, in prepare)" : "");
  return txt;
}

void as_decide_tile(as_prog *p) {
  for (int i = 0; i < p->n; i++) {
    as_stage *s = &p->st[i];
    const te_tensor *t = s->t;
    if (s->is_input || s->ch.kind || !s->is_reduce || s->const_only) continue;
    if (s->reuse_axis < 0 || t->ndim < 2 || s->ext[t->ndim - 1] < 2) continue;
    if (s->red_total < 16 && !(s->red_total >= 9 && vector_weights(p, s))) continue;
    int64_t ej = s->ext[t->ndim - 1], ei = s->ext[s->reuse_axis], lanes = as_lanes(p, t);
    int64_t nr = ej <= 4 * lanes ? ej : 4 * lanes, nvec = (nr + lanes - 1) / lanes;
    /* a window with vector weights (a depthwise convolution): each column vector has taps of
     * its own, which stay in registers across the tiles (loop-invariant), so the register file
     * holds nvec * (taps + 1 input) + the rows' accumulators: as many column vectors as leave
     * room for 4 rows (one at least) */
    int win = s->red_total < 16 && ej >= lanes && vector_weights(p, s);
    while (win && nvec > 1 && (p->regs - nvec * (s->red_total + 1)) / nvec < 4) nvec--, nr = nvec * lanes;
    /* columns of one vector (a channel block): a second axis doubles the vectors per row,
     * tile_k = 2 (the conv2d_nchwc template's oc_tiles: 14 x 2 x 16 where 12 x 16 was) */
    int ak = win ? window_axis(p, s) : nvec == 1 ? second_axis(p, s) : -1;
    int64_t v, nk = ak >= 0 && s->ext[ak] % 2 == 0 ? 2 : 1; /* no tail by default */
    if ((v = AS_TUNED(p, s, tile_k)) != AS_UNSET) nk = v;
    if (ak < 0 || nk < 2) nk = 1;
    if (ak >= 0 && nk > s->ext[ak]) nk = s->ext[ak];
    /* the registers: tile_i * tile_k * nvec accumulators, tile_k * nvec column vectors and a
     * broadcast; 12 rows at most (14 with a second axis: the template's 14 x 2) */
    int64_t row = nk * nvec, budget = (p->regs - row - (nk > 1 ? 1 : 2)) / row;
    int64_t cap = nk > 1 || win ? 14 : 12;
    if (win) budget = (p->regs - nvec * (s->red_total + 1)) / row;
    int64_t mr = budget < cap ? budget : cap;
    if (mr < 1) mr = 1;
    if (mr > ei) mr = ei;
    if (win) /* the template's rule: the widest tile from half the cap that divides the rows */
      for (int64_t m = mr; m >= 2 && 2 * m >= mr; m--)
        if (ei % m == 0) {
          mr = m;
          break;
        }
    if (ei % mr && mr > 2 && ei % (mr - 1) == 0) mr--; /* a tail only if no neighbour divides */
    /* the tuned mode's values (space.c), clamped to the extents */
    if ((v = AS_TUNED(p, s, tile_i)) != AS_UNSET) mr = v < ei ? v : ei;
    if ((v = AS_TUNED(p, s, tile_j)) != AS_UNSET) nr = v < ej ? v : ej;
    s->ch.kind = TEC_AS_TILE;
    s->ch.tile_axis_i = s->reuse_axis;
    s->ch.tile_i = mr;
    s->ch.tile_j = nr;
    s->ch.tile_k = nk;
    s->ch.tile_axis_k = ak;
    s->ch.vector = nr > 1 ? nr : 0;
    s->ch.unroll = (v = AS_TUNED(p, s, unroll)) != AS_UNSET ? v : win ? s->red_total : 4;
    s->ch.parallel = (v = AS_TUNED(p, s, par)) != 0;
    s->ch.par_depth = v > 0 ? (int)v : 0;
    s->ch.block_i = (v = AS_TUNED(p, s, block_i)) != AS_UNSET ? v : 1;
    s->ch.block_j = (v = AS_TUNED(p, s, block_j)) != AS_UNSET ? v : 1;
    pack_candidates(p, s);
    if (AS_TUNED(p, s, pack) == 0) s->npack = s->ch.pack = 0;
    s->anchor = AS_TUNED(p, s, fuse) == 0 ? -1 : find_anchor(p, i);
    s->ch.cache_write = s->anchor < 0;
    const char *tk = nk > 1 ? as_fmt(p, "x%lld", (long long)nk) : "";
    s->rule = s->ch.cache_write
                  ? as_fmt(p, "tile %lld%sx%lld (cache_write local)", (long long)mr, tk,
                           (long long)nr)
                  : as_fmt(p, "tile %lld%sx%lld (fused into %s)", (long long)mr, tk,
                           (long long)nr, p->st[s->anchor].t->name);
    s->why = as_fmt(p,
                    "a reduction over %lld elements whose inputs are reused along axis %d "
                    "(%s)%s: a register tile of %lld%s x %lld accumulators%s",
                    (long long)s->red_total, s->reuse_axis, t->axis[s->reuse_axis]->name,
                    nk > 1 ? as_fmt(p, " and axis %d (%s)", ak, t->axis[ak]->name) : "",
                    (long long)mr, nk > 1 ? as_fmt(p, " x %lld", (long long)nk) : "",
                    (long long)nr, pack_text(p, s));
    if (s->anchor >= 0) {
      as_stage *a = &p->st[s->anchor];
      a->ch = s->ch;
      a->ch.kind = TEC_AS_TILE;
      a->anchor = i; /* the anchor points back at its reduction */
      a->rule = as_fmt(p, "tile anchor of %s", t->name);
      a->why =
          "element-wise consumer of a tiled reduction: its tile loops hold the "
          "accumulator, the epilogue runs as the tile is written";
    }
  }
}

/* the packing idiom: a cache_read copy of input k for the accumulator, its packed dim split by
 * the factor and moved outermost, cache_write'd into that leaf layout [dim / f][...][f], the
 * copy inlined; column panels vectorized, their loop parallel (row blocks are constants: they
 * run once, in prepare) */
static int pack_input(as_prog *p, sch_schedule *s, const as_stage *r, int k, te_tensor *reader) {
  const as_stage *x = &p->st[r->pack_input[k]];
  te_tensor *xt = sch_tensor_named(s, x->t->name);
  te_tensor *xg = xt ? sch_cache_read(s, xt, "global", 1, &reader) : NULL;
  sch_stage *sg = xg ? sch_stage_of(s, xg) : NULL;
  if (!sg) return -1;
  int nd = x->t->ndim, dj = r->pack_dim[k];
  int64_t f = r->pack_factor[k];
  sch_iter *order[AS_MAX_DIM + 1], *po, *pi;
  if (sch_split(sg, sch_axis(sg, dj), f, &po, &pi)) return -1;
  int n = 0;
  order[n++] = po;
  for (int d = 0; d < nd; d++)
    if (d != dj && !(order[n++] = sch_axis(sg, d))) return -1;
  order[n++] = pi;
  if (sch_reorder(sg, n, order)) return -1;
  te_tensor *xw = sch_cache_write(s, xg, "global");
  sch_stage *sw = xw ? sch_stage_of(s, xw) : NULL;
  if (!sw || sch_compute_inline(sg)) return -1;
  if (dj != nd - 1) return 0;
  if (sch_vectorize(sw, sch_stage_leaf(sw, sch_stage_nleaf(sw) - 1))) return -1;
  int64_t panels = (x->ext[dj] + f - 1) / f;
  return as_parallel_outer(p, sw, 1, &panels, 0);
}

/* the tiled group of reduction i: the stage whose loops are tiled (anchor or the cache_write
 * copy) and the accumulator computed at its tile loop */
int as_apply_tile(as_prog *p, sch_schedule *s, int i) {
  as_stage *r = &p->st[i];
  if (!r->is_reduce) return 0; /* an anchor: applied with its reduction */
  const tec_autosched_choice *ch = &r->ch;
  te_tensor *rt = sch_tensor_named(s, r->t->name);
  if (!rt) return -1;
  sch_stage *acc, *out;
  if (ch->cache_write) {
    te_tensor *local = sch_cache_write(s, rt, "local");
    if (!local) return -1;
    acc = sch_stage_of(s, local);
    out = sch_stage_of(s, rt);
  } else {
    acc = sch_stage_of(s, rt);
    out = as_stage_named(s, p->st[r->anchor].t->name);
  }
  if (!acc || !out) return -1;
  for (int k = 0; k < r->npack; k++)
    if (pack_input(p, s, r, k, sch_stage_tensor(acc))) return -1;
  int nd = r->t->ndim, ai = ch->tile_axis_i, ak = ch->tile_k > 1 ? ch->tile_axis_k : -1;
  sch_iter *ax[AS_MAX_DIM], *io, *ii, *jo, *ji, *ki = NULL;
  for (int d = 0; d < nd; d++)
    if (!(ax[d] = sch_axis(out, d))) return -1;
  if (sch_split(out, ax[nd - 1], ch->tile_j, &jo, &ji) ||
      sch_split(out, ax[ai], ch->tile_i, &io, &ii))
    return -1;
  /* the second axis: its outer part stays in its place, its inner part inside the row tile */
  if (ak >= 0 && sch_split(out, ax[ak], ch->tile_k, &ax[ak], &ki)) return -1;
  /* the second level: blocks of block_i row tiles outside the column tiles */
  int64_t rtiles = (r->ext[ai] + ch->tile_i - 1) / ch->tile_i, bi = ch->block_i;
  sch_iter *bo = NULL;
  if (bi > 1 && bi < rtiles && sch_split(out, io, bi, &bo, &io)) return -1;
  /* and a group of block_j column tiles inside the row tile */
  int64_t ctiles = (r->ext[nd - 1] + ch->tile_j - 1) / ch->tile_j, bj = ch->block_j;
  sch_iter *jg = NULL;
  if (bj > 1 && bj < ctiles && sch_split(out, jo, bj, &jo, &jg)) return -1;
  sch_iter *order[AS_MAX_DIM + 6];
  int n = 0;
  for (int d = 0; d < nd - 1; d++)
    if (d != ai) order[n++] = ax[d];
  if (bo) order[n++] = bo;
  order[n++] = jo;
  order[n++] = io;
  if (jg) order[n++] = jg;
  if (ki) order[n++] = ki;
  order[n++] = ii;
  order[n++] = ji;
  if (sch_reorder(out, n, order)) return -1;
  if (ch->vector && sch_vectorize(out, ji)) return -1;
  int64_t ext[AS_MAX_DIM + 6];
  n = 0;
  for (int d = 0; d < nd - 1; d++)
    if (d != ai) ext[n++] = d == ak ? (r->ext[d] + ch->tile_k - 1) / ch->tile_k : r->ext[d];
  if (bo) ext[n++] = (rtiles + bi - 1) / bi;
  ext[n++] = jg ? (ctiles + bj - 1) / bj : ctiles;
  ext[n++] = bo ? bi : rtiles;
  if (ch->parallel && as_parallel_outer(p, out, n - 1, ext, ch->par_depth)) return -1;
  /* the accumulator at the row-tile loop (the column group's, when there is one): reduce loops
   * outside its register tile */
  if (sch_compute_at(acc, out, jg ? jg : io)) return -1;
  sch_iter *la[AS_MAX_DIM * 2];
  n = 0;
  for (int d = 0; d < nd; d++)
    if (d != ai && d != ak && d != nd - 1 && !(la[n++] = sch_axis(acc, d))) return -1;
  for (int k = 0; k < r->nred; k++)
    if (!(la[n++] = sch_reduce_axis(acc, k))) return -1;
  sch_iter *li = sch_axis(acc, ai), *lj = sch_axis(acc, nd - 1), *lk = NULL;
  if (!li || !lj || (ak >= 0 && !(lk = sch_axis(acc, ak)))) return -1;
  la[n++] = li;
  if (lk) la[n++] = lk; /* a row's broadcast, then its tile_k column vectors */
  la[n++] = lj;
  if (sch_reorder(acc, n, la)) return -1;
  /* a whole window within the unroll bound: every tap unrolled (its weights then stay in
   * registers across the tiles); else the innermost reduce loop when it is */
  for (int k = r->nred - 1; k >= 0; k--)
    if ((k == r->nred - 1 ? r->rext[k] <= ch->unroll : r->red_total <= ch->unroll) &&
        r->rext[k] > 1 && r->const_ext && sch_unroll(acc, sch_reduce_axis(acc, k)))
      return -1;
  if (ch->tile_i > 1 && sch_unroll(acc, li)) return -1;
  if (lk && sch_unroll(acc, lk)) return -1;
  if (ch->vector && sch_vectorize(acc, lj)) return -1;
  return 0;
}

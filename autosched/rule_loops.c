/* rule_loops.c — a stage's own loop nest (a root stage, or one computed at a consumer's row
 * loop): the innermost data axis vectorized with the target's f32 lanes (split by the lanes:
 * at the root a non-dividing extent takes the shift_inwards tail, a full vector that overlaps
 * the one before, elsewhere the guard that loop partitioning peels; an axis narrower than the
 * lanes is vectorized whole), a reduction's loops placed between the vector loop's outer and
 * inner parts (so the accumulators are vectors), a small innermost reduce loop unrolled, the
 * rows (and columns) tiled where producers attach with a halo, and at the root the outer data
 * loops fused and parallel.
 *
 *   [axes..., row.outer, (col.outer), row.inner, axes no producer reads, ..., x.outer,
 *    reduce..., x.inner (vector)]      producers attach at the innermost of the tile loops
 *
 * A reduction along its unit-stride axis (a row sum) is not vectorized across rows (gathers):
 * rule_rfactor.c vectorizes it, or it stays a serial reduction with parallel rows. A stage
 * with a guarded read (the padding idiom, select(in bounds, x[...], 0)) is not vectorized:
 * its masked loads are slower than the scalar loop, which LLVM vectorizes on its own; nor is
 * one with a read that moves back by 2-8 elements along the vector axis (analyze.c's
 * strided_read: in[n - 2x]): tec's vectors would load it lane by lane, where the scalar loop,
 * unrolled, leaves LLVM's loop vectorizer its interleaved loads (wide loads and shuffles); so
 * is a stage into which a producer with such a read is inlined along the vector axis. A read
 * by an index not affine in the vector axis (computed coordinates, x / 2) has no such loads
 * either way: vectorized, two vectors per iteration (gather_read; one where its columns are a
 * tile that holds no pair: a register tile of one vector). A read moving forward by
 * 2-8 (a stride-2 pool's in[2x + rx]) is vectorized: codegen loads it whole and shuffles. A
 * transposed read (in[x][y]: a stride of a row) is lane by lane either way: vectorized, the
 * stores whole.
 *
 * A root reduction that walks rows (as_row_walk, analyze.c: every read its reduce loops move,
 * through the producers inlined into it too, they move along an outer index only, its
 * innermost index the vector axis; a column sum out[x] = sum_r in[r][x]) would read one
 * vector per row, rows a whole row apart (a page or more), for every vector of the output:
 * its columns go in strips of STRIP_BYTES of accumulators (whole rows up to that), the reduce
 * loops outside the strip's vectors, so each step reads a strip of a row contiguously and the
 * accumulators stay in cache (Mullapudi2016's reorder of the update):
 *   [axes..., x.strip, reduce..., r.outer, x.outer, r.inner (4, unrolled), x.inner (vector)]
 * (r the last reduce loop: 4 rows per pass where 4 divides its constant extent, else 2 where 2
 * does, else 1 (no split), so an accumulator is loaded and stored once per pass). Not a
 * reduction attached at a consumer's tile: its columns are the tile's and its rows a few; its
 * reduce loops stay inside the vector loop's outer part. */
#include "autosched/internal.h"

/* accumulators per strip: within L2 beside the rows streamed through it; whole rows below that
 * (4096 x 4096 column mean, 1 thread, Zen 4: strips of 1024 columns 6.1 ms, 2048 7.0, whole
 * rows of 4096 3.0-3.7; one vector per row, no strips: 21 ms), the rows read as one stream;
 * a row walk's rows per pass (as_apply_loops) */
enum { STRIP_BYTES = 128 << 10, ROW_WALK_UNROLL = 4 };

void as_decide_loops(as_prog *p) {
  for (int i = 0; i < p->n; i++) {
    as_stage *s = &p->st[i];
    if (s->is_input || !s->understood) continue;
    if (s->ch.kind && s->ch.kind != TEC_AS_ATTACH) continue;
    const te_tensor *t = s->t;
    int reduce_body = t->body && t->body->kind == IR_REDUCE;
    if (!s->ch.kind) {
      s->ch.kind = TEC_AS_LOOPS;
      s->ch.parallel = 1;
      s->rule = "loops";
      s->why = reduce_body    ? (s->reuse_axis < 0 ? "a reduction without reuse across its "
                                                     "output axes: vectorized over its innermost "
                                                     "output axis, rows parallel"
                                                   : "a reduction too small to tile")
               : s->is_output ? "an output"
               : s->why       ? s->why
                              : "kept";
    }
    if (s->ch.kind == TEC_AS_LOOPS && s->has_attached) {
      const char *how = s->ch.slide ? "producers attached, sliding" : "producers attached";
      s->rule = s->ch.cols > 0 ? as_fmt(p, "loops, tiles of %lld x %lld (%s)",
                                       (long long)s->ch.rows, (long long)s->ch.cols, how)
                               : as_fmt(p, "loops, rows by %lld (%s)", (long long)s->ch.rows, how);
    }
    if (!s->ch.rfactor) as_loops_choice(p, s);
  }
}

/* 1 if a producer inlined into s, read along s's vector axis (its last index moves with it),
 * has a strided read itself, or through producers inlined into it: inlined, that read is in
 * s's vector loop (gray = in[y][x][c] * w inlined into out = gray * 2 + 1) */
static int strided_inlined(const as_prog *p, const as_stage *s, int depth) {
  const te_tensor *t = s->t;
  if (depth > 8 || t->ndim < 1) return 0;
  const ir_expr *x = t->axis[t->ndim - 1];
  for (int k = 0; k < t->ninputs; k++) {
    int j = as_index_of(p, t->inputs[k]);
    if (j < 0 || p->st[j].ch.kind != TEC_AS_INLINE) continue;
    const as_stage *q = &p->st[j];
    if (!q->strided_read && !strided_inlined(p, q, depth + 1)) continue;
    const ir_expr *reads[16];
    int nr = as_reads_of(as_source(t), q->t, reads, 16);
    for (int r = 0; r < nr && r < 16; r++)
      if (reads[r]->nargs && ir_uses_var(reads[r]->args[reads[r]->nargs - 1], x)) return 1;
  }
  return 0;
}

/* 1 if the columns stage s is computed over hold vectors of V lanes whole: its row is that
 * wide and is computed whole (a root stage without a column tile, an attached one whose host
 * has none) or by tiles of a multiple of V (a host's own tile, an attached stage's host's); a
 * register tile of one vector of lanes holds no vector of twice as many */
static int pairs_fit(const as_prog *p, const as_stage *s, int64_t V) {
  int nd = s->t->ndim;
  if (nd < 1 || s->ext[nd - 1] < V) return 0;
  int64_t c = s->ch.kind == TEC_AS_LOOPS && s->has_attached ? s->ch.cols
              : s->ch.kind == TEC_AS_ATTACH && s->attach_to >= 0 ? p->st[s->attach_to].ch.cols
                                                                : 0;
  return c <= 0 || c % V == 0;
}

void as_loops_choice(as_prog *p, as_stage *s) {
  const te_tensor *t = s->t;
  int nd = t->ndim, reduce_body = t->body && t->body->kind == IR_REDUCE;
  s->ch.unroll = 4;
  s->ch.vector = 0;
  /* a guarded read (padding) vectorizes into masked loads, which are slower than the scalar
   * loop LLVM vectorizes itself (a 3x3 depthwise layer's padding: 2.5x) */
  /* a read moving back by 2-8 elements along the vector axis, or across interleaved channels
   * (strided_read, analyze.c), loads lane by lane where LLVM's loop vectorizer loads it whole
   * and shuffles: scalar and unrolled (a stride-3 subsample: 7x faster); a stride it cannot
   * tell (an index not affine in the vector axis) is vectorized (gather_read, below) */
  if (nd >= 1 && !(reduce_body && s->unit_reduce) && !s->guarded_read && !s->strided_read &&
      !strided_inlined(p, s, 0)) {
    int64_t e = s->ext[nd - 1];
    int L = as_lanes(p, t);
    if (e >= L)
      s->ch.vector = L;
    else if (e >= 4 && t->shape[nd - 1]->kind == IR_INT_IMM)
      s->ch.vector = e;
  }
  /* loads lane by lane (an index not affine in the vector axis): two vectors per iteration,
   * so one vector's chain of scalar loads and inserts overlaps the other's (bilinear resize
   * 3840x2160 -> 2560x1440, Zen 4: 6.8-7.9 ms against 7.5-8.9 with one vector, in pairs of
   * runs; the tuner chose the same) */
  if (s->gather_read && s->ch.vector == as_lanes(p, t) && pairs_fit(p, s, 2 * s->ch.vector))
    s->ch.vector *= 2;
  /* the tuned mode's values (space.c) */
  int64_t v;
  s->strip = 0;
  if ((v = AS_TUNED(p, s, unroll)) != AS_UNSET) s->ch.unroll = v;
  if ((v = AS_TUNED(p, s, vector)) != AS_UNSET && nd >= 1) s->ch.vector = v;
  if ((v = AS_TUNED(p, s, tail)) != AS_UNSET) s->ch.tail = (int)v;
  if ((v = AS_TUNED(p, s, par)) != AS_UNSET) {
    s->ch.parallel = v != 0;
    s->ch.par_depth = v > 0 ? (int)v : 0;
  }
  /* a reduction walking rows: strips of columns, the reduce loops outside them (at the
   * root only: an attached stage's columns are its host's tile, and its rows a few) */
  if (s->ch.kind == TEC_AS_LOOPS && s->ch.vector > 0 && !s->has_attached && as_row_walk(p, s)) {
    int bytes = tec_dtype_bytes(t->type);
    int64_t V = s->ch.vector, C = STRIP_BYTES / (bytes > 0 ? bytes : 4) / V * V, e = s->ext[nd - 1];
    s->strip = C < V ? V : C;
    if (s->strip > e) s->strip = (e + V - 1) / V * V;
    if (!s->ch.fallback)
      s->why = as_fmt(p, "a reduction walking rows (its reduce loops move outer indices only): "
                         "vectorized over its innermost axis in strips of %lld, the reduce loops "
                         "outside each strip (a row's strip read contiguously, accumulators in cache)",
                      (long long)s->strip);
  }
}

/* A vector split's tail when no knob says: shift inwards at the root of an element-wise stage
 * whose vector leaves one (a last vector overlapping the one before), else guard (a reduction,
 * an attached stage, or no tail at all: a shifted split bounds a sliding host's producers by
 * whole rows). The tuned space's default (space.c). */
int64_t as_default_tail(const as_stage *a, int root, int64_t V) {
  int nd = a->t->ndim, reduce_body = a->t->body && a->t->body->kind == IR_REDUCE;
  return root && !reduce_body && a->const_ext && nd >= 1 && V > 0 && a->ext[nd - 1] % V
             ? SCH_TAIL_SHIFT_INWARDS
             : SCH_TAIL_GUARD_WITH_IF;
}

int as_cols_fit(int64_t V, int64_t C, int64_t e) {
  if (C <= 0 || C >= e) return 1; /* whole rows, or a tile of the whole row: no split */
  if (V <= 0) return C > 1;
  return V < e && (C == V || (C % V == 0 && C / V > 1));
}

int as_apply_loops(as_prog *p, sch_schedule *s, int i) {
  as_stage *a = &p->st[i];
  const tec_autosched_choice *ch = &a->ch;
  int root = ch->kind == TEC_AS_LOOPS, nd = a->t->ndim;
  sch_stage *st = as_stage_named(s, a->t->name);
  if (!st) return -1;
  if (nd < 1) return 0;
  int reduce_body = a->t->body && a->t->body->kind == IR_REDUCE;
  sch_iter *ax[AS_MAX_DIM], *xo = NULL, *xi = NULL, *yo = NULL, *yi = NULL, *xt = NULL;
  for (int d = 0; d < nd; d++)
    if (!(ax[d] = sch_axis(st, d))) return -1;
  /* axes selecting between expressions (rule_fold.c): their unrolled parts inside */
  sch_iter *fo[AS_MAX_DIM];
  int64_t dext[AS_MAX_DIM];
  int nf = as_fold_split(p, st, a, ax, dext, fo);
  if (nf < 0) return -1;
  /* the row axis where producers attach (root hosts only) */
  int r = root && a->has_attached && a->host_row >= 0 && a->host_row < nd - 1 && ax[a->host_row]
              ? a->host_row
              : -1;
  int64_t V = ch->vector, e = a->ext[nd - 1];
  if (V > 0 && V < e) {
    int64_t tail = ch->tail ? ch->tail - 1 : as_default_tail(a, root, V);
    /* a producer its host slides: one row per iteration, so a guarded tail would run scalar
     * at every row of every stage (1.25x slower on the 32-stage chain); its columns (the
     * host's tile plus the halo, or whole rows) hold a vector */
    const as_stage *h = !root && a->attach_to >= 0 ? &p->st[a->attach_to] : NULL;
    if (!ch->tail && h && !reduce_body && as_slides(p, h) && (h->ch.cols == 0 || h->ch.cols >= V))
      tail = SCH_TAIL_SHIFT_INWARDS;
    if (sch_split_tail(st, ax[nd - 1], V, tail, &xo, &xi)) return -1;
  } else if (V > 0) {
    xi = ax[nd - 1];
  }
  /* a column tile: the vector loop's outer part (or the unvectorized axis) split by it */
  int64_t C = r >= 0 ? ch->cols : 0, ncol = 0;
  if (!as_cols_fit(V, C, e)) {
    /* (the tuned mode's vector of two vectors' lanes beside a tile of one, say; the space
     * offers none: space.c): refused, so the stage falls back and the report says why, not
     * a tile silently left out */
    tec_ctx_set_error_kind(p->ctx, TEC_ERR_UNSUPPORTED,
                           "tec_autoschedule: stage '%s': a column tile of %lld is not a whole "
                           "number of its %lld-lane vectors (legal: a multiple of the vector, "
                           "or no vector)",
                           a->t->name, (long long)C, (long long)V);
    return -1;
  }
  if (C > 0 && xo && C == V) { /* a tile of one vector: the vector loop's outer part */
    xt = xo, xo = NULL;
  } else if (C > 0 && xo && C % V == 0 && C / V > 1 && C < e) {
    if (sch_split(st, xo, C / V, &xt, &xo)) return -1;
    ncol = C / V;
  } else if (C > 1 && !xo && !xi && C < e) {
    if (sch_split(st, ax[nd - 1], C, &xt, &ax[nd - 1])) return -1;
    ncol = C;
  }
  if (r >= 0 && ch->rows > 1) {
    if (sch_split(st, ax[r], ch->rows, &yo, &yi)) return -1;
  }
  /* the order: data loops (rows split, the column tile after the row tile, the axes no
   * producer reads moved inside it), x.outer, reduce loops, x.inner */
  sch_iter *order[AS_MAX_DIM * 3 + 6];
  int64_t ext[AS_MAX_DIM * 3 + 6];
  int n = 0, at_pos = -1;
  for (int d = 0; d < nd - 1; d++) {
    if (!ax[d]) continue; /* folded whole: inside, with the other unrolled parts */
    int inward = d < r && dext[d] > 1 && !(d < 32 && (a->host_mask >> d & 1));
    if (inward) continue;
    if (d != r) {
      ext[n] = dext[d];
      order[n++] = ax[d];
      continue;
    }
    at_pos = n;
    ext[n] = yo ? (dext[d] + ch->rows - 1) / ch->rows : dext[d];
    order[n++] = yo ? yo : ax[d];
    if (xt) {
      at_pos = n;
      ext[n] = (e + C - 1) / C;
      order[n++] = xt;
    }
    if (yo) ext[n] = ch->rows, order[n++] = yi;
    for (int k = 0; k < r; k++)
      if (ax[k] && dext[k] > 1 && !(k < 32 && (a->host_mask >> k & 1)))
        ext[n] = dext[k], order[n++] = ax[k];
  }
  /* a reduction walking rows: the vector loop's outer part split into strips, the strip
   * loop among the data loops, the reduce loops inside it */
  int strip = a->strip > 0 && V > 0 && xo && !xt; /* a multiple of V (as_loops_choice) */
  if (strip && a->strip < e) {
    sch_iter *xs;
    if (sch_split(st, xo, a->strip / V, &xs, &xo)) return -1;
    ext[n] = (e + a->strip - 1) / a->strip;
    order[n++] = xs;
    ncol = a->strip / V;
  }
  int ndata_outer = n;
  /* a row walk's last reduce loop: ROW_WALK_UNROLL rows per pass over the strip (where that
   * divides it), unrolled inside the column loop, so each accumulator vector is loaded and
   * stored once per that many rows (column mean 4096 x 4096, Zen 4, same-run ratios to
   * Mullapudi2016: 1.24-1.47 against 0.98-1.03 one row per pass, 4 pairs of runs); where it
   * does not divide, 2 rows where 2 does (half the accumulator traffic of 1, no tail: not
   * measured apart), else 1; none for an extent that is not constant (an estimate) */
  sch_iter *rin = NULL;
  int64_t rl = a->nred ? a->rext[a->nred - 1] : 0;
  int RU = !a->const_ext ? 1 : rl % ROW_WALK_UNROLL == 0 ? ROW_WALK_UNROLL : rl % 2 == 0 ? 2 : 1;
  for (int k = 0; strip && k < a->nred; k++) {
    sch_iter *rk = sch_reduce_axis(st, k);
    if (!rk) return -1;
    if (k == a->nred - 1 && RU > 1 && rl > RU) {
      sch_iter *ro;
      if (sch_split(st, rk, RU, &ro, &rin)) return -1;
      rk = ro;
    }
    order[n++] = rk;
  }
  if (xo) {
    ext[n] = ncol ? ncol : (e + V - 1) / V;
    order[n++] = xo;
    if (rin) order[n++] = rin;
  } else if (!xi) {
    ext[n] = ncol ? ncol : e;
    order[n++] = ax[nd - 1];
  }
  for (int k = 0; k < nf; k++) order[n++] = fo[k];
  for (int k = 0; !strip && k < a->nred; k++)
    if (!(order[n++] = sch_reduce_axis(st, k))) return -1;
  if (xi) order[n++] = xi;
  if (n > 1 && sch_reorder(st, n, order)) return -1;
  for (int k = 0; k < nf; k++)
    if (sch_unroll(st, fo[k])) return -1;
  if (xi && sch_vectorize(st, xi)) return -1;
  if (rin && sch_unroll(st, rin)) return -1;
  /* a tile of one vector and a few rows: its rows unrolled, and the producers' (the buffers
   * between them then live in registers) */
  if (xt && !xo && yi && ch->rows <= 8 && sch_unroll(st, yi)) return -1;
  if (!root && a->attach_to >= 0) {
    const as_stage *h = &p->st[a->attach_to];
    int pr = -1;
    for (int d = 0; d < nd - 1 && pr < 0; d++)
      if (a->ext[d] > 1 && ax[d]) pr = d;
    /* (not when the host slides its producers: a slid row loop has a varying extent) */
    if (h->ch.cols > 0 && h->ch.cols == h->ch.vector && h->ch.rows + a->halo <= 12 && pr >= 0 &&
        !as_slides(p, h) && sch_unroll(st, ax[pr]))
      return -1;
  }
  /* a small innermost reduce loop unrolled whole (not a row walk's: split above, its inner
   * part unrolled already) */
  if (a->nred && a->const_ext && !rin && a->rext[a->nred - 1] > 1 &&
      a->rext[a->nred - 1] <= ch->unroll && sch_unroll(st, sch_reduce_axis(st, a->nred - 1)))
    return -1;
  sch_iter *at = at_pos >= 0 ? order[at_pos] : NULL;
  if (root && ch->parallel) {
    int upto = at_pos >= 0 ? at_pos + 1 : ndata_outer;
    if (as_parallel_outer(p, st, upto, ext, ch->par_depth)) return -1;
  }
  if (at) a->at_loop = sch_iter_name(sch_iter_is_leaf(at) ? at : sch_stage_leaf(st, 0));
  return 0;
}

/* features.c — tune_features: a fixed-length vector describing a lowered loop program, the
 * input of the tuner's cost model (tune/xgb_model.c). In the spirit of AutoTVM's itervar
 * features, simplified:
 *
 *   one walk of f->body records every loop (extent, kind, parent) and every memory access
 *   (buffer, element size, lanes, its index as a linear form c0 + sum ci * var_i when it is one)
 *   and counts flops, FMAs, lanes, integer ops and guards per store, weighted by how often the
 *   store runs (the product of its loops' constant extents);
 *   the hottest store (dynamic runs x (1 + flops per run)) picks the loop nest described level
 *   by level, innermost first: extent, kind, stores per iteration, and per buffer the elements
 *   one iteration of the level touches — accesses alike but for a constant offset (an
 *   unrolled tile's rows; the load and the store of c[i] = c[i] + ...) grouped, each group's
 *   footprint counted once per distinct offset, the sum capped by the span of all the
 *   buffer's accesses and by its size — and their reuse (accesses / elements);
 *   totals over the whole program follow.
 *
 * Every magnitude is log2(1 + x) so one tree split means "about twice as much". The names are
 * in tune_feature_name; docs/cost_model.md explains them. Scratch memory is malloc'd and freed
 * before returning (nothing in the ctx's arena).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tec/te.h"
#include "tec/tune_model.h"

#define MAX_TERMS 12

typedef struct loop_rec {
  const ir_expr *var;
  int64_t ext;      /* constant extent, 1 if not constant */
  ir_for_kind kind;
  int parent;       /* enclosing loop, -1 at the top */
  int depth;        /* 1 for a top-level loop */
  double trips;     /* runs of its body: the product of the extents from the top */
  int64_t stores;   /* static stores anywhere in its body */
  double flops;     /* dynamic flops of the stores directly in its body */
} loop_rec;

typedef struct access_rec {
  int buf, loop;    /* buffer index; innermost enclosing loop (-1: none) */
  int lanes, elem;  /* lanes of the access, bytes of one element */
  int linear;       /* 1: index = konst + sum coef[t] * vars[t] (+ ramp) */
  int nterms;
  const ir_expr *vars[MAX_TERMS];
  int64_t coef[MAX_TERMS];
  int64_t konst, stride; /* stride: the ramp's (0 for a scalar) */
  int is_store;
} access_rec;

typedef struct buf_rec {
  const ir_expr *var;
  int64_t elems;    /* allocation size in elements, -1 unknown */
} buf_rec;

typedef struct fstate {
  loop_rec *loops; int nloops, caploops;
  access_rec *acc; int nacc, capacc;
  buf_rec *bufs; int nbufs, capbufs;
  int oom;
  /* totals, dynamic (weighted by trips) */
  double flops, fma, vflops, lanes_w, int_ops, guards;
  double load_elems, store_elems, load_bytes, store_bytes, load_insns;
  int max_lanes, nallocs, nparallel, max_depth;
  double alloc_bytes, alloc_max, par_extent;
  int64_t static_stores;
  /* the hottest store */
  double hot_w;
  int hot_loop;
  /* per store being walked */
  double cur_flops, cur_fma, cur_vflops, cur_lanes_w, cur_int, cur_guards;
  int cur_max_lanes;
} fstate;

static void *grow(fstate *s, void *p, int *cap, size_t elem) {
  int c = *cap ? 2 * *cap : 64;
  void *q = realloc(p, elem * (size_t)c);
  if (!q) {
    s->oom = 1;
    return NULL;
  }
  *cap = c;
  return q;
}

static int buf_index(fstate *s, const ir_expr *var) {
  for (int i = 0; i < s->nbufs; i++)
    if (s->bufs[i].var == var) return i;
  if (s->nbufs == s->capbufs) {
    buf_rec *b = grow(s, s->bufs, &s->capbufs, sizeof *b);
    if (!b) return -1;
    s->bufs = b;
  }
  s->bufs[s->nbufs] = (buf_rec){var, -1};
  return s->nbufs++;
}

/* ---- index expressions as linear forms ---- */

typedef struct lin {
  int ok, n;
  const ir_expr *vars[MAX_TERMS];
  int64_t coef[MAX_TERMS];
  int64_t k;
} lin;

static void lin_add_term(lin *l, const ir_expr *v, int64_t c) {
  for (int i = 0; i < l->n; i++)
    if (l->vars[i] == v) {
      if (__builtin_add_overflow(l->coef[i], c, &l->coef[i])) l->ok = 0;
      return;
    }
  if (l->n == MAX_TERMS) {
    l->ok = 0;
    return;
  }
  l->vars[l->n] = v, l->coef[l->n++] = c;
}

/* Variables of a non-linear index: kept as terms with coefficient 0 (only "uses" matters). */
static void lin_vars(lin *l, const ir_expr *e) {
  if (!e) return;
  if (e->kind == IR_VAR) {
    lin_add_term(l, e, 0);
    return;
  }
  if (e->kind == IR_LOAD) return; /* an indirect index: its own access */
  lin_vars(l, e->a), lin_vars(l, e->b), lin_vars(l, e->c);
  for (int i = 0; i < e->nargs; i++) lin_vars(l, e->args[i]);
}

/* l += scale * e; not linear (or overflowing int64): l->ok = 0 */
static void lin_of(lin *l, const ir_expr *e, int64_t scale) {
  int64_t c, p;
  if (!l->ok) return;
  switch (e->kind) {
  case IR_INT_IMM:
    if (__builtin_mul_overflow(scale, e->v.i, &p) || __builtin_add_overflow(l->k, p, &l->k)) l->ok = 0;
    return;
  case IR_VAR: lin_add_term(l, e, scale); return;
  case IR_ADD: lin_of(l, e->a, scale); lin_of(l, e->b, scale); return;
  case IR_SUB:
    lin_of(l, e->a, scale);
    if (scale == INT64_MIN) l->ok = 0;
    else lin_of(l, e->b, -scale);
    return;
  case IR_MUL:
    if (ir_is_const_int(e->b, &c) || ir_is_const_int(e->a, &c)) {
      if (__builtin_mul_overflow(scale, c, &p)) l->ok = 0;
      else lin_of(l, ir_is_const_int(e->b, &c) ? e->a : e->b, p);
      return;
    }
    break;
  case IR_CAST:
    if (tec_dtype_is_int(e->type)) {
      lin_of(l, e->a, scale);
      return;
    }
    break;
  default: break;
  }
  l->ok = 0;
}

static void record_access(fstate *s, const ir_expr *bufvar, const ir_expr *index, tec_dtype t,
                          int loop, int is_store) {
  int b = buf_index(s, bufvar);
  if (b < 0 || !index) return;
  if (s->nacc == s->capacc) {
    access_rec *a = grow(s, s->acc, &s->capacc, sizeof *a);
    if (!a) return;
    s->acc = a;
  }
  access_rec *a = &s->acc[s->nacc++];
  memset(a, 0, sizeof *a);
  a->buf = b, a->loop = loop, a->lanes = t.lanes, a->elem = tec_dtype_bytes(t);
  a->is_store = is_store;
  const ir_expr *base = index;
  int64_t stride = 0;
  int ramp_ok = 1;
  if (index->kind == IR_RAMP) {
    base = index->a;
    if (!ir_is_const_int(index->b, &stride)) ramp_ok = 0;
  } else if (t.lanes > 1) {
    ramp_ok = 0; /* a gather */
  }
  lin l = {.ok = 1};
  lin_of(&l, base, 1);
  if (!l.ok || !ramp_ok) {
    l = (lin){.ok = 1};
    lin_vars(&l, index);
    l.ok = 0;
  }
  a->linear = l.ok;
  a->nterms = l.n;
  memcpy(a->vars, l.vars, sizeof l.vars);
  memcpy(a->coef, l.coef, sizeof l.coef);
  a->konst = l.k, a->stride = stride;
}

/* ---- the walk ---- */

static double loop_trips(const fstate *s, int loop) { return loop < 0 ? 1.0 : s->loops[loop].trips; }

/* Counts the operations of e (one run) into the cur_* counters, records its loads. */
static void walk_expr(fstate *s, const ir_expr *e, int loop) {
  if (!e || s->oom) return;
  int lanes = e->type.lanes;
  int is_f = tec_dtype_is_float(e->type);
  switch (e->kind) {
  case IR_LOAD:
    record_access(s, e->a, e->b, e->type, loop, 0);
    walk_expr(s, e->b, loop), walk_expr(s, e->c, loop);
    return;
  case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MOD: case IR_FLOORDIV:
  case IR_FLOORMOD: case IR_MIN: case IR_MAX:
    if (is_f) {
      s->cur_flops += lanes;
      if (lanes > 1) s->cur_vflops += lanes;
      s->cur_lanes_w += (double)lanes * lanes;
      if (lanes > s->cur_max_lanes) s->cur_max_lanes = lanes;
      if ((e->kind == IR_ADD || e->kind == IR_SUB) &&
          ((e->a && e->a->kind == IR_MUL) || (e->b && e->b->kind == IR_MUL)))
        s->cur_fma += lanes;
    } else {
      s->cur_int += lanes;
    }
    break;
  case IR_CALL:
    if (is_f) {
      int w = e->v.i == IR_INTRIN_FMA ? 2 : 1;
      s->cur_flops += (double)w * lanes;
      if (lanes > 1) s->cur_vflops += (double)w * lanes;
      s->cur_lanes_w += (double)w * lanes * lanes;
      if (lanes > s->cur_max_lanes) s->cur_max_lanes = lanes;
      if (e->v.i == IR_INTRIN_FMA) s->cur_fma += lanes;
    }
    break;
  case IR_SELECT: s->cur_guards += 1; break;
  default: break;
  }
  walk_expr(s, e->a, loop), walk_expr(s, e->b, loop), walk_expr(s, e->c, loop);
  for (int i = 0; i < e->nargs; i++) walk_expr(s, e->args[i], loop);
}

static void walk_stmt(fstate *s, const ir_stmt *st, int loop) {
  if (!st || s->oom) return;
  switch (st->kind) {
  case IR_S_FOR: {
    if (s->nloops == s->caploops) {
      loop_rec *l = grow(s, s->loops, &s->caploops, sizeof *l);
      if (!l) return;
      s->loops = l;
    }
    int64_t ext;
    if (!ir_is_const_int(st->b, &ext) || ext < 1) ext = 1;
    int me = s->nloops++;
    loop_rec *l = &s->loops[me];
    *l = (loop_rec){st->var, ext, st->for_kind, loop, loop < 0 ? 1 : s->loops[loop].depth + 1,
                    loop_trips(s, loop) * (double)ext, 0, 0};
    if (l->depth > s->max_depth) s->max_depth = l->depth;
    if (st->for_kind == IR_FOR_PARALLEL) {
      s->nparallel++;
      int outer_par = 0;
      for (int p = loop; p >= 0; p = s->loops[p].parent)
        if (s->loops[p].kind == IR_FOR_PARALLEL) outer_par = 1;
      if (!outer_par && (double)ext > s->par_extent) s->par_extent = (double)ext;
    }
    walk_expr(s, st->a, loop), walk_expr(s, st->b, loop);
    walk_stmt(s, st->body, me);
    return;
  }
  case IR_S_STORE: {
    double w = loop_trips(s, loop);
    s->cur_flops = s->cur_fma = s->cur_vflops = s->cur_lanes_w = s->cur_int = s->cur_guards = 0;
    s->cur_max_lanes = 1;
    record_access(s, st->var, st->a, st->b ? st->b->type : TEC_F32, loop, 1);
    walk_expr(s, st->a, loop), walk_expr(s, st->b, loop), walk_expr(s, st->c, loop);
    s->flops += w * s->cur_flops, s->fma += w * s->cur_fma, s->vflops += w * s->cur_vflops;
    s->lanes_w += w * s->cur_lanes_w, s->int_ops += w * s->cur_int;
    s->guards += w * s->cur_guards;
    if (s->cur_max_lanes > s->max_lanes) s->max_lanes = s->cur_max_lanes;
    s->static_stores++;
    for (int p = loop; p >= 0; p = s->loops[p].parent) s->loops[p].stores++;
    if (loop >= 0) s->loops[loop].flops += w * s->cur_flops;
    double heat = w * (1.0 + s->cur_flops);
    if (heat > s->hot_w) s->hot_w = heat, s->hot_loop = loop;
    return;
  }
  case IR_S_ALLOCATE: {
    int b = buf_index(s, st->var);
    int64_t n;
    if (b >= 0 && ir_is_const_int(st->a, &n)) {
      s->bufs[b].elems = n;
      double bytes = (double)n * tec_dtype_bytes(st->type);
      s->alloc_bytes += bytes;
      if (bytes > s->alloc_max) s->alloc_max = bytes;
    }
    s->nallocs++;
    walk_stmt(s, st->body, loop);
    return;
  }
  case IR_S_IF:
    s->guards += loop_trips(s, loop);
    walk_expr(s, st->a, loop);
    walk_stmt(s, st->body, loop), walk_stmt(s, st->else_body, loop);
    return;
  case IR_S_SEQ:
    for (int i = 0; i < st->n; i++) walk_stmt(s, st->seq[i], loop);
    return;
  case IR_S_EVALUATE:
    walk_expr(s, st->a, loop);
    return;
  default:
    walk_stmt(s, st->body, loop);
    walk_stmt(s, st->else_body, loop);
    return;
  }
}

/* ---- per level: bytes touched in one iteration, reuse ---- */

typedef struct level_buf {
  double lo, hi;      /* element offsets spanned (linear accesses; double: no overflow) */
  double elems;       /* elements of its groups (below) */
  double dyn;         /* elements accessed, dynamically */
  int elem, any_lin;
  int64_t elems_cap;  /* allocation size or -1 */
} level_buf;

/* Accesses of one buffer alike but for their constant offset (an unrolled tile's rows, or
 * the load and the store of an update) form a group: it touches its members' common footprint
 * once per distinct offset. */
typedef struct access_group {
  int first;          /* the access whose shape the group has */
  double footprint;   /* elements one member touches in one iteration of the level */
} access_group;
typedef struct member {
  int group;
  int64_t konst;
} member;

static int cmp_member(const void *x, const void *y) {
  const member *a = x, *b = y;
  if (a->group != b->group) return a->group < b->group ? -1 : 1;
  return a->konst < b->konst ? -1 : a->konst > b->konst;
}

static int same_shape(const access_rec *a, const access_rec *b) {
  if (a->buf != b->buf || a->lanes != b->lanes || a->stride != b->stride || !a->linear ||
      !b->linear || a->nterms != b->nterms)
    return 0;
  for (int t = 0; t < a->nterms; t++)
    if (a->vars[t] != b->vars[t] || a->coef[t] != b->coef[t]) return 0;
  return 1;
}

static uint64_t shape_hash(const access_rec *a) {
  uint64_t h = (uint64_t)a->buf * 0x9e3779b97f4a7c15ull ^ (uint64_t)a->lanes << 20 ^ (uint64_t)a->stride;
  for (int t = 0; t < a->nterms; t++)
    h = (h ^ (uint64_t)(uintptr_t)a->vars[t]) * 0xff51afd7ed558ccdull ^ (uint64_t)a->coef[t];
  return h ^ (h >> 29);
}

/* Position of var among the loops strictly inside level L on the access's chain: its
 * extent, or 0 when var is fixed during one iteration of L. */
static int64_t inner_extent(const fstate *s, const access_rec *a, int L, const ir_expr *var) {
  for (int p = a->loop; p >= 0 && p != L; p = s->loops[p].parent)
    if (s->loops[p].var == var) return s->loops[p].ext;
  return 0;
}

static int inside(const fstate *s, int loop, int L) {
  for (int p = loop; p >= 0; p = s->loops[p].parent)
    if (p == L) return 1;
  return 0;
}

/* Fills lb (one per buffer) for one iteration of loop L. */
static int level_buffers(fstate *s, int L, level_buf *lb) {
  access_group *g = NULL;
  member *mem = malloc(sizeof *mem * (size_t)(s->nacc + 1));
  size_t hcap = 64;
  while (hcap < 2 * (size_t)s->nacc) hcap *= 2;
  int *table = malloc(sizeof *table * hcap); /* linear shapes -> group, -1 empty */
  int ng = 0, capg = 0, nm = 0;
  if (!mem || !table) return free(mem), free(table), -1;
  memset(table, 0xff, sizeof *table * hcap);
  for (int b = 0; b < s->nbufs; b++)
    lb[b].lo = INFINITY, lb[b].hi = -INFINITY, lb[b].elems_cap = s->bufs[b].elems;
  for (int i = 0; i < s->nacc; i++) {
    const access_rec *a = &s->acc[i];
    if (!inside(s, a->loop, L)) continue;
    level_buf *b = &lb[a->buf];
    double per_iter = 1; /* runs of this access in one iteration of L */
    for (int p = a->loop; p >= 0 && p != L; p = s->loops[p].parent) per_iter *= (double)s->loops[p].ext;
    b->dyn += per_iter * a->lanes;
    b->elem = a->elem;
    double distinct = a->lanes; /* elements the access touches: the inner loops it uses */
    double lo = (double)a->konst, hi = lo;
    for (int t = 0; t < a->nterms; t++) {
      int64_t e = inner_extent(s, a, L, a->vars[t]);
      if (e <= 0) continue;
      distinct *= (double)e;
      double d = (double)a->coef[t] * (double)(e - 1);
      if (d > 0) hi += d; else lo += d;
    }
    double r = (double)a->stride * (a->lanes - 1);
    if (r > 0) hi += r; else lo += r;
    if (a->linear) {
      b->any_lin = 1;
      if (lo < b->lo) b->lo = lo;
      if (hi > b->hi) b->hi = hi;
    }
    int j = ng;
    size_t h = 0;
    if (a->linear) { /* its shape's group, if one was seen */
      h = shape_hash(a) & (hcap - 1);
      while (table[h] >= 0 && !same_shape(&s->acc[g[table[h]].first], a)) h = (h + 1) & (hcap - 1);
      if (table[h] >= 0) j = table[h];
    }
    if (j == ng) {
      if (ng == capg) {
        access_group *g2 = realloc(g, sizeof *g * (size_t)(capg = capg ? 2 * capg : 16));
        if (!g2) return free(g), free(mem), free(table), -1;
        g = g2;
      }
      g[ng++] = (access_group){.first = i, .footprint = distinct};
      if (a->linear) table[h] = j;
    }
    mem[nm++] = (member){j, a->linear ? a->konst : i}; /* a non-linear access: its own */
  }
  qsort(mem, (size_t)nm, sizeof *mem, cmp_member);
  for (int i = 0; i < nm; i++)
    if (i == 0 || cmp_member(&mem[i - 1], &mem[i]) != 0)
      lb[s->acc[g[mem[i].group].first].buf].elems += g[mem[i].group].footprint;
  free(g), free(mem), free(table);
  return 0;
}

static int cmp_bytes_desc(const void *x, const void *y) {
  const double *a = x, *b = y; /* {bytes, reuse, order} */
  if (a[0] != b[0]) return a[0] < b[0] ? 1 : -1;
  return a[2] < b[2] ? -1 : a[2] > b[2];
}

static float lg(double x) { return (float)log2(1.0 + (x > 0 ? x : 0)); }

static int level_features(fstate *s, int L, float *out) {
  const loop_rec *l = &s->loops[L];
  level_buf *lb = calloc((size_t)s->nbufs + 1, sizeof *lb);
  double (*rank)[3] = calloc((size_t)s->nbufs + 1, sizeof *rank);
  if (!lb || !rank) {
    free(lb), free(rank);
    return -1;
  }
  if (level_buffers(s, L, lb)) {
    free(lb), free(rank);
    return -1;
  }
  double total = 0;
  int nb = 0;
  for (int b = 0; b < s->nbufs; b++) {
    if (lb[b].dyn <= 0) continue;
    double elems = lb[b].elems;
    if (lb[b].any_lin && lb[b].hi - lb[b].lo + 1 < elems) elems = lb[b].hi - lb[b].lo + 1;
    if (lb[b].elems_cap > 0 && (double)lb[b].elems_cap < elems) elems = (double)lb[b].elems_cap;
    if (elems < 1) elems = 1;
    double bytes = elems * lb[b].elem;
    total += bytes;
    rank[nb][0] = bytes, rank[nb][1] = lb[b].dyn / elems, rank[nb][2] = b;
    nb++;
  }
  qsort(rank, (size_t)nb, sizeof *rank, cmp_bytes_desc);
  int k = 0;
  out[k++] = lg(l->trips / (double)l->ext); /* iterations of the loops outside */
  out[k++] = lg((double)l->ext);
  out[k++] = l->kind == IR_FOR_PARALLEL;
  out[k++] = l->kind == IR_FOR_VECTORIZED;
  out[k++] = l->kind == IR_FOR_UNROLLED;
  out[k++] = lg((double)l->stores);
  out[k++] = lg(total);
  for (int i = 0; i < TUNE_LEVEL_BUFS; i++) out[k++] = i < nb ? lg(rank[i][0]) : 0;
  for (int i = 0; i < TUNE_LEVEL_BUFS; i++) out[k++] = i < nb ? lg(rank[i][1]) : 0;
  free(lb), free(rank);
  return 0;
}

/* ---- names ---- */

static const char *const level_names[TUNE_PER_LEVEL] = {
  "outer_trips", "extent", "parallel", "vectorized", "unrolled", "stores", "bytes",
  "buf0_bytes", "buf1_bytes", "buf2_bytes", "buf0_reuse", "buf1_reuse", "buf2_reuse"};
static const char *const total_names[TUNE_NTOTALS] = {
  "flops", "fma", "vector_fraction", "max_lanes", "mean_lanes", "load_elems", "store_elems",
  "load_bytes", "store_bytes", "load_insns", "allocs", "alloc_bytes", "alloc_max_bytes",
  "parallel_extent", "parallel_loops", "loops", "max_depth", "static_stores", "int_ops",
  "guards", "intensity", "hot_loop_flops_fraction", "hot_body_lanes", "buffers"};

const char *tune_feature_name(int i) {
  static char names[TUNE_LEVELS * TUNE_PER_LEVEL][32];
  if (i < 0 || i >= TUNE_NFEATURES) return NULL;
  if (i >= TUNE_LEVELS * TUNE_PER_LEVEL) return total_names[i - TUNE_LEVELS * TUNE_PER_LEVEL];
  char *n = names[i];
  if (!n[0]) /* benign race: every writer writes the same text */
    snprintf(n, sizeof names[i], "L%d.%s", i / TUNE_PER_LEVEL, level_names[i % TUNE_PER_LEVEL]);
  return n;
}

/* ---- entry ---- */

int tune_features(tec_ctx *ctx, const lower_func *f, float *out, int cap) {
  if (!ctx) return -1;
  if (!f || !f->body)
    return tec_ctx_set_error(ctx, "tune_features: a lowered function with a body is required"), -1;
  if (!out || cap < TUNE_NFEATURES)
    return tec_ctx_set_error(ctx, "tune_features: out must hold TUNE_NFEATURES = %d floats, got %d",
                             TUNE_NFEATURES, out ? cap : 0), -1;
  fstate s = {.hot_loop = -1, .max_lanes = 1};
  for (int i = 0; f->args && f->arg_bufs && i < f->nargs && !s.oom; i++) {
    int b = buf_index(&s, f->arg_bufs[i]);
    if (b < 0) break;
    const te_tensor *t = f->args[i];
    int64_t n = 1, d;
    for (int j = 0; j < t->ndim && n > 0; j++)
      if (!ir_is_const_int(te_buffer_shape(t)[j], &d) || __builtin_mul_overflow(n, d, &n)) n = -1;
    s.bufs[b].elems = n;
  }
  walk_stmt(&s, f->body, -1);
  /* dynamic access totals */
  double hot_body_lanes = 0;
  for (int i = 0; i < s.nacc && !s.oom; i++) {
    const access_rec *a = &s.acc[i];
    double w = loop_trips(&s, a->loop);
    if (a->is_store) {
      s.store_elems += w * a->lanes, s.store_bytes += w * a->lanes * a->elem;
      if (a->loop == s.hot_loop) hot_body_lanes += a->lanes;
    } else {
      s.load_elems += w * a->lanes, s.load_bytes += w * a->lanes * a->elem, s.load_insns += w;
    }
  }
  memset(out, 0, sizeof *out * TUNE_NFEATURES);
  int L = s.hot_loop;
  for (int lv = 0; lv < TUNE_LEVELS && L >= 0 && !s.oom; lv++, L = s.loops[L].parent)
    if (level_features(&s, L, out + lv * TUNE_PER_LEVEL)) s.oom = 1;
  if (s.oom) {
    free(s.loops), free(s.acc), free(s.bufs);
    return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune_features: out of memory"), -1;
  }
  float *t = out + TUNE_LEVELS * TUNE_PER_LEVEL;
  int k = 0;
  double moved = s.load_bytes + s.store_bytes;
  t[k++] = lg(s.flops);
  t[k++] = lg(s.fma);
  t[k++] = s.flops > 0 ? (float)(s.vflops / s.flops) : 0;
  t[k++] = lg(s.max_lanes);
  t[k++] = s.flops > 0 ? lg(s.lanes_w / s.flops) : 0;
  t[k++] = lg(s.load_elems);
  t[k++] = lg(s.store_elems);
  t[k++] = lg(s.load_bytes);
  t[k++] = lg(s.store_bytes);
  t[k++] = lg(s.load_insns);
  t[k++] = lg(s.nallocs);
  t[k++] = lg(s.alloc_bytes);
  t[k++] = lg(s.alloc_max);
  t[k++] = lg(s.par_extent);
  t[k++] = lg(s.nparallel);
  t[k++] = lg(s.nloops);
  t[k++] = (float)s.max_depth;
  t[k++] = lg((double)s.static_stores);
  t[k++] = lg(s.int_ops);
  t[k++] = lg(s.guards);
  t[k++] = moved > 0 ? lg(s.flops / moved) : 0;
  t[k++] = s.flops > 0 && s.hot_loop >= 0 ? (float)(s.loops[s.hot_loop].flops / s.flops) : 0;
  t[k++] = lg(hot_body_lanes);
  t[k++] = lg(s.nbufs);
  free(s.loops), free(s.acc), free(s.bufs);
  return TUNE_NFEATURES;
}

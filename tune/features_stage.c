/* features_stage.c — tune_features_stages: the cost model's input for auto-scheduled programs
 * (Ansor's per-stage features, simplified), over the whole lowered run function rather than
 * the hottest store's nest (tune_features), so choices that move work between stages
 * (compute_at levels, inlining, a producer per row tile or at the root) show:
 *
 *   one walk of f->body gathers, per buffer stored (a stage: an output, or a buffer the
 *   program allocates), over its stores weighted by how often each runs: elements written,
 *   flops, loads and the share of them that are contiguous vectors, its deepest loop nest, the
 *   lanes of its stores, unrolled and vectorized loops around them, whether a parallel loop
 *   encloses them, its innermost loop's extent, its allocation's size and how many loops
 *   enclose that allocation (its compute_at level: 0 at the root), and its guards;
 *   the TUNE_STAGE_SLOTS stages doing the most work (flops + elements written) fill the slots,
 *   most first (empty slots are 0); the totals of tune_features (the whole program's flops,
 *   FMAs, loads, allocations, parallel extent, code size) follow.
 *
 * Magnitudes are log2(1 + x), as in tune_features. Scratch memory is malloc'd and freed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tec/te.h"
#include "tec/tune_model.h"

#define MAX_NEST 32

typedef struct stage_rec {
  const ir_expr *buf;
  double writes, flops, loads, contig, guards;
  int depth, lanes, unrolled, vectorized, parallel, alloc_depth;
  double inner_ext, alloc_bytes;
} stage_rec;

typedef struct walk {
  stage_rec *st;
  int n, cap, oom;
  /* the loops around the current statement */
  int depth, nunroll, nvec, npar;
  double trips, inner_ext, guards;
} walk;

static stage_rec *stage_of(walk *w, const ir_expr *buf) {
  for (int i = 0; i < w->n; i++)
    if (w->st[i].buf == buf) return &w->st[i];
  if (w->n == w->cap) {
    int c = w->cap ? 2 * w->cap : 16;
    stage_rec *g = realloc(w->st, sizeof *g * (size_t)c);
    if (!g) {
      w->oom = 1;
      return NULL;
    }
    w->st = g, w->cap = c;
  }
  w->st[w->n] = (stage_rec){.buf = buf, .alloc_depth = -1};
  return &w->st[w->n++];
}

/* flops, loads and contiguous loads of a stored value (lanes counted) */
static void count_expr(const ir_expr *e, double *flops, double *loads, double *contig) {
  if (!e) return;
  double lanes = e->type.lanes > 0 ? e->type.lanes : 1;
  switch (e->kind) {
    case IR_ADD:
    case IR_SUB:
    case IR_MUL:
    case IR_DIV:
    case IR_MIN:
    case IR_MAX:
      if (e->type.code == TEC_FLOAT) *flops += lanes;
      break;
    case IR_CALL: *flops += 4 * lanes; break;
    case IR_LOAD: {
      int64_t stride;
      *loads += lanes;
      if (lanes == 1 || (e->b && e->b->kind == IR_RAMP && ir_is_const_int(e->b->b, &stride) &&
                         stride == 1))
        *contig += lanes;
      break;
    }
    default: break;
  }
  count_expr(e->a, flops, loads, contig);
  count_expr(e->b, flops, loads, contig);
  count_expr(e->c, flops, loads, contig);
  for (int i = 0; i < e->nargs; i++) count_expr(e->args[i], flops, loads, contig);
}

static void walk_stmt(walk *w, const ir_stmt *s) {
  if (!s || w->oom) return;
  switch (s->kind) {
    case IR_S_FOR: {
      int64_t ext;
      if (!ir_is_const_int(s->b, &ext) || ext < 1) ext = 1;
      walk saved = *w;
      w->depth++;
      w->trips *= (double)ext;
      w->inner_ext = (double)ext;
      w->nunroll += s->for_kind == IR_FOR_UNROLLED;
      w->nvec += s->for_kind == IR_FOR_VECTORIZED;
      w->npar += s->for_kind == IR_FOR_PARALLEL;
      walk_stmt(w, s->body);
      saved.st = w->st, saved.n = w->n, saved.cap = w->cap, saved.oom = w->oom;
      *w = saved;
      return;
    }
    case IR_S_STORE: {
      stage_rec *r = stage_of(w, s->var);
      if (!r) return;
      double lanes = s->b && s->b->type.lanes > 0 ? s->b->type.lanes : 1, fl = 0, ld = 0, ct = 0;
      count_expr(s->b, &fl, &ld, &ct);
      r->writes += w->trips * lanes;
      r->flops += w->trips * fl;
      r->loads += w->trips * ld;
      r->contig += w->trips * ct;
      r->guards += w->guards * w->trips;
      if (w->depth > r->depth) r->depth = w->depth;
      if ((int)lanes > r->lanes) r->lanes = (int)lanes;
      if (w->nunroll > r->unrolled) r->unrolled = w->nunroll;
      if (w->nvec > r->vectorized) r->vectorized = w->nvec;
      r->parallel |= w->npar > 0;
      if (w->inner_ext > r->inner_ext) r->inner_ext = w->inner_ext;
      return;
    }
    case IR_S_ALLOCATE: {
      stage_rec *r = stage_of(w, s->var);
      int64_t n;
      if (r && ir_is_const_int(s->a, &n)) r->alloc_bytes = (double)n * tec_dtype_bytes(s->type);
      if (r) r->alloc_depth = w->depth;
      walk_stmt(w, s->body);
      return;
    }
    case IR_S_IF:
      w->guards += 1;
      walk_stmt(w, s->body);
      walk_stmt(w, s->else_body);
      w->guards -= 1;
      return;
    case IR_S_SEQ:
      for (int i = 0; i < s->n; i++) walk_stmt(w, s->seq[i]);
      return;
    default:
      walk_stmt(w, s->body);
      walk_stmt(w, s->else_body);
      return;
  }
}

static float lg(double x) { return (float)log2(1.0 + (x > 0 ? x : 0)); }

static int by_work(const void *a, const void *b) {
  const stage_rec *x = a, *y = b;
  double wx = x->flops + x->writes, wy = y->flops + y->writes;
  return wx > wy ? -1 : wx < wy;
}

int tune_features_stages(tec_ctx *ctx, const lower_func *f, float *out, int cap) {
  if (!ctx || !f || !out || cap < TUNE_NFEATURES)
    return tec_ctx_set_error(ctx, "tune_features_stages: needs a ctx, a lowered function and "
                                  "room for %d floats",
                             TUNE_NFEATURES);
  /* the totals: tune_features' last TUNE_NTOTALS values */
  if (tune_features(ctx, f, out, cap) != TUNE_NFEATURES) return -1;
  memmove(out + TUNE_STAGE_SLOTS * TUNE_PER_STAGE, out + TUNE_NFEATURES - TUNE_NTOTALS,
          sizeof *out * TUNE_NTOTALS);
  memset(out, 0, sizeof *out * TUNE_STAGE_SLOTS * TUNE_PER_STAGE);
  walk w = {.trips = 1};
  walk_stmt(&w, f->body);
  if (w.oom) {
    free(w.st);
    return tec_ctx_set_error_kind(ctx, TEC_ERR_OOM, "tune_features_stages: out of memory");
  }
  qsort(w.st, (size_t)w.n, sizeof *w.st, by_work);
  for (int i = 0; i < w.n && i < TUNE_STAGE_SLOTS; i++) {
    const stage_rec *r = &w.st[i];
    float *o = out + i * TUNE_PER_STAGE;
    o[0] = lg(r->writes);
    o[1] = lg(r->flops);
    o[2] = lg(r->loads);
    o[3] = r->loads > 0 ? (float)(r->contig / r->loads) : 1.0f;
    o[4] = (float)r->depth;
    o[5] = (float)r->lanes;
    o[6] = (float)r->unrolled;
    o[7] = (float)r->vectorized;
    o[8] = (float)r->parallel;
    o[9] = lg(r->inner_ext);
    o[10] = lg(r->alloc_bytes);
    o[11] = (float)r->alloc_depth; /* -1: not allocated here (an argument) */
    o[12] = lg(r->guards);
  }
  free(w.st);
  return TUNE_NFEATURES;
}

const char *tune_feature_stage_name(tec_ctx *ctx, int i) {
  static const char *const per[TUNE_PER_STAGE] = {
      "writes", "flops", "loads", "contiguous", "depth", "lanes", "unrolled",
      "vectorized", "parallel", "inner_extent", "alloc_bytes", "alloc_depth", "guards"};
  if (i < 0 || i >= TUNE_NFEATURES) return NULL;
  if (i >= TUNE_STAGE_SLOTS * TUNE_PER_STAGE)
    return tune_feature_name(i - TUNE_STAGE_SLOTS * TUNE_PER_STAGE + TUNE_NFEATURES - TUNE_NTOTALS);
  return tec_ctx_printf(ctx, "S%d.%s", i / TUNE_PER_STAGE, per[i % TUNE_PER_STAGE]);
}

/* dt_draw.c — drawing one random primitive for the schedule as it stands. About two thirds of
 * the draws are meant to be legal (a live leaf of the stage, a dividing or nearby factor, an
 * adjacent pair, a reader as the consumer); the rest are deliberately risky: split-away and
 * foreign axes, NULL, factors 0..extent+3, every integer argument now and then an extreme
 * (pick_extreme), non-adjacent fuse, compute_at to any loop of any stage, store_at (mostly a
 * loop around the compute loop, now and then any), inline of reductions and outputs, caches
 * of the wrong tensor or scope, nested parallel, vectorize of symbolic extents, odd pragma
 * keys and values.
 * Never drawn: the pragma "debug_skip_region" (it drops work by design). */
#include <string.h>
#include "tec/tec.h"
#include "difftest/dt_internal.h"
#include "schedule/internal.h"

static int compute_stages(dt_state *st, sch_stage **out, int max) {
  int n = 0;
  sch_schedule *s = st->in->sched;
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i]->tensor->op == TE_COMPUTE && n < max) out[n++] = s->stages[i];
  return n;
}

static sch_stage *any_stage(dt_state *st, dt_rng *r) {
  sch_stage *all[64];
  int n = compute_stages(st, all, 64);
  return n ? all[dt_rng_int(r, 0, n - 1)] : NULL;
}

/* A registered iter (of stage s if s, else of any stage), or NULL if none. */
static sch_iter *known_iter(dt_state *st, dt_rng *r, const sch_stage *s) {
  int idx[DT_MAX_ITERS], n = 0;
  for (int i = 0; i < st->niter; i++)
    if (st->iters[i].it && (!s || st->iters[i].it->stage == s)) idx[n++] = i;
  return n ? st->iters[idx[dt_rng_int(r, 0, n - 1)]].it : NULL;
}

/* Mostly a live loop of s; sometimes a split-away one, another stage's, or NULL. */
static sch_iter *pick_iter(dt_state *st, dt_rng *r, const sch_stage *s) {
  int roll = (int)dt_rng_int(r, 0, 99);
  if (roll < 72 && s && s->nleaf) return s->leaf[dt_rng_int(r, 0, s->nleaf - 1)];
  if (roll < 84) return known_iter(st, r, s);
  if (roll < 96) return known_iter(st, r, NULL);
  return NULL;
}

static void put_iter(dt_state *st, dt_prim *p, int k, const sch_iter *it) {
  snprintf(p->iters[k], DT_ID, "%s", dt_state_iter_id(st, it));
  if (p->niter < k + 1) p->niter = k + 1;
}

static void put_stage(char *out, const sch_stage *s) {
  if (s) dt_stage_id(out, s);
  else snprintf(out, DT_ID, "s_none");
}

/* A factor for a loop of extent ext (-1: unknown): divisors, in range, and 0..ext+3. */
static int64_t pick_factor(dt_rng *r, int64_t ext) {
  if (ext <= 0) ext = dt_rng_int(r, 1, 16);
  int roll = (int)dt_rng_int(r, 0, 99);
  if (roll < 35) {
    int64_t d[64], n = 0; /* the divisors up to 4096 (a split's extent may be 2^31 or more) */
    for (int64_t k = 1; k <= ext && k <= 4096 && n < 63; k++)
      if (ext % k == 0) d[n++] = k;
    if (ext > 4096) d[n++] = ext;
    return d[dt_rng_int(r, 0, n - 1)];
  }
  if (roll < 75) return dt_rng_int(r, 1, ext);
  return dt_rng_int(r, 0, ext + 3);
}

/* An integer at a limit: 0, 1, the extent and its neighbours, around 2^31, 2^62, INT64_MAX,
 * negatives (INT64_MIN is left out: the C printed for a reproducer cannot spell it). */
static int64_t pick_extreme(dt_rng *r, int64_t ext) {
  static const int64_t v[] = {0, 1, ((int64_t)1 << 31) - 1, (int64_t)1 << 31,
                              ((int64_t)1 << 31) + 1, (int64_t)1 << 62, ((int64_t)1 << 62) - 1,
                              INT64_MAX, INT64_MAX - 1, -1, -((int64_t)1 << 31), -INT64_MAX};
  int n = (int)(sizeof v / sizeof *v);
  int k = (int)dt_rng_int(r, 0, n + 2);
  if (k < n) return v[k];
  if (ext < 1) ext = 1;
  if (ext == INT64_MAX) ext--;
  return ext + (k - n - 1); /* ext - 1, ext, ext + 1 */
}

/* Every integer argument a primitive takes (factors, nparts, tail, factor_axis, storage_align's
 * factor and offset, prefetch's offset, a pragma's value, set_precompute's flag) is now and
 * then an extreme instead (issue #38): clamped, or refused with a message. */
static void draw_extremes(dt_rng *r, dt_prim *p, int64_t ext) {
  int nint;
  switch (p->kind) {
  case SCH_PRIM_SPLIT: case SCH_PRIM_SPLIT_NPARTS: case SCH_PRIM_RFACTOR:
  case SCH_PRIM_PREFETCH: case SCH_PRIM_SET_PRECOMPUTE: nint = 1; break;
  case SCH_PRIM_SPLIT_TAIL: case SCH_PRIM_TILE: case SCH_PRIM_STORAGE_ALIGN: nint = 2; break;
  case SCH_PRIM_PRAGMA: nint = p->has_value; break;
  default: nint = 0;
  }
  if (nint >= 1 && dt_rng_chance(r, 15)) p->a = pick_extreme(r, ext);
  if (nint >= 2 && dt_rng_chance(r, 15)) p->b = pick_extreme(r, ext);
}

static int reads(const sch_stage *consumer, const te_tensor *t) {
  for (int k = 0; k < consumer->ninputs; k++)
    if (consumer->inputs[k] == t) return 1;
  return 0;
}

static const char *pick_scope(dt_rng *r) {
  int roll = (int)dt_rng_int(r, 0, 99);
  return roll < 45 ? "global" : roll < 92 ? "local" : "shared";
}

static void draw_loop_kind(dt_state *st, dt_rng *r, dt_prim *p, sch_stage *s) {
  /* vectorize/unroll like the innermost loop best */
  sch_iter *it = (p->kind != SCH_PRIM_PARALLEL && s->nleaf && dt_rng_chance(r, 50))
                     ? s->leaf[s->nleaf - 1] : pick_iter(st, r, s);
  if (p->kind == SCH_PRIM_PARALLEL && s->nleaf && dt_rng_chance(r, 40)) it = s->leaf[0];
  put_iter(st, p, 0, it);
}

static int has_inner_stage(dt_state *st) {
  sch_stage *all[64];
  int n = compute_stages(st, all, 64);
  for (int i = 0; i < n; i++)
    if (!all[i]->is_output) return 1;
  return 0;
}

void dt_draw(dt_state *st, dt_rng *r, dt_prim *p) {
  static const int weight[SCH_PRIM_COUNT] = {
      [SCH_PRIM_SPLIT] = 16,         [SCH_PRIM_SPLIT_NPARTS] = 6, [SCH_PRIM_FUSE] = 9,
      [SCH_PRIM_SPLIT_TAIL] = 8,
      [SCH_PRIM_REORDER] = 9,        [SCH_PRIM_TILE] = 6,         [SCH_PRIM_COMPUTE_AT] = 14,
      [SCH_PRIM_COMPUTE_INLINE] = 9, [SCH_PRIM_COMPUTE_ROOT] = 3, [SCH_PRIM_CACHE_READ] = 5,
      [SCH_PRIM_CACHE_WRITE] = 6,    [SCH_PRIM_PARALLEL] = 6,     [SCH_PRIM_VECTORIZE] = 7,
      [SCH_PRIM_UNROLL] = 5,         [SCH_PRIM_PRAGMA] = 4,       [SCH_PRIM_STORAGE_ALIGN] = 4,
      [SCH_PRIM_PREFETCH] = 4,       [SCH_PRIM_RFACTOR] = 5,      [SCH_PRIM_SET_PRECOMPUTE] = 1,
      [SCH_PRIM_STORE_AT] = 5,       [SCH_PRIM_STORE_ROOT] = 2};
  /* split_expr is never drawn: its factors are size expressions, the cases' sizes constants */
  memset(p, 0, sizeof *p);
  int total = 0;
  for (int k = 0; k < SCH_PRIM_COUNT; k++) total += weight[k];
  int roll = (int)dt_rng_int(r, 0, total - 1), kind = 0;
  while (roll >= weight[kind]) roll -= weight[kind++];
  /* a cache_write of the output is only legal first: give it its chance */
  if (st->prims == 0 && dt_rng_chance(r, 25)) kind = SCH_PRIM_CACHE_WRITE;
  /* compute_at/inline need a stage that is not the output: mostly draw something else
   * when there is none (matmul and reduce have one until a cache adds another) */
  if ((kind == SCH_PRIM_COMPUTE_AT || kind == SCH_PRIM_COMPUTE_INLINE) && !has_inner_stage(st) &&
      dt_rng_chance(r, 85))
    kind = dt_rng_chance(r, 50) ? SCH_PRIM_CACHE_WRITE : SCH_PRIM_CACHE_READ;
  p->kind = (sch_prim_kind)kind;

  sch_stage *s = any_stage(st, r);
  if (!s) return;
  put_stage(p->stage, s);
  int64_t ext = -1; /* the extent of the loop an integer argument is about, if any */
  switch (p->kind) {
  case SCH_PRIM_SPLIT:
  case SCH_PRIM_SPLIT_NPARTS: {
    sch_iter *it = pick_iter(st, r, s);
    put_iter(st, p, 0, it);
    p->a = pick_factor(r, ext = dt_iter_extent(it));
    break;
  }
  case SCH_PRIM_SPLIT_TAIL: { /* every strategy; now and then one out of range (refused) */
    sch_iter *it = pick_iter(st, r, s);
    put_iter(st, p, 0, it);
    p->a = pick_factor(r, ext = dt_iter_extent(it));
    p->b = dt_rng_chance(r, 3) ? 4 : dt_rng_int(r, 0, 3);
    break;
  }
  case SCH_PRIM_FUSE:
  case SCH_PRIM_TILE: {
    sch_iter *x, *y;
    if (s->nleaf >= 2 && dt_rng_chance(r, 65)) {
      int k = (int)dt_rng_int(r, 0, s->nleaf - 2);
      int k2 = p->kind == SCH_PRIM_FUSE ? k + 1 : (int)dt_rng_int(r, k + 1, s->nleaf - 1);
      x = s->leaf[k], y = s->leaf[k2];
    } else {
      x = pick_iter(st, r, s), y = pick_iter(st, r, s);
    }
    put_iter(st, p, 0, x);
    put_iter(st, p, 1, y);
    p->a = pick_factor(r, ext = dt_iter_extent(x));
    p->b = pick_factor(r, dt_iter_extent(y));
    break;
  }
  case SCH_PRIM_REORDER: {
    if (s->nleaf >= 1 && dt_rng_chance(r, 75)) {
      sch_iter *perm[64];
      int n = s->nleaf < 64 ? s->nleaf : 64;
      for (int i = 0; i < n; i++) perm[i] = s->leaf[i];
      for (int i = n - 1; i > 0; i--) {
        int j = (int)dt_rng_int(r, 0, i);
        sch_iter *t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
      int m = (int)dt_rng_int(r, 1, n < 6 ? n : 6);
      for (int i = 0; i < m; i++) put_iter(st, p, i, perm[i]);
    } else {
      int m = (int)dt_rng_int(r, 1, 4);
      for (int i = 0; i < m; i++) put_iter(st, p, i, pick_iter(st, r, s));
    }
    break;
  }
  case SCH_PRIM_COMPUTE_AT: {
    sch_stage *all[64], *prod = s, *cons = NULL;
    int n = compute_stages(st, all, 64);
    if (dt_rng_chance(r, 75)) { /* a non-output producer */
      sch_stage *cand[64];
      int m = 0;
      for (int i = 0; i < n; i++)
        if (!all[i]->is_output) cand[m++] = all[i];
      if (m) prod = cand[dt_rng_int(r, 0, m - 1)];
    }
    if (dt_rng_chance(r, 75)) {
      sch_stage *cand[64];
      int m = 0;
      for (int i = 0; i < n; i++)
        if (reads(all[i], prod->tensor)) cand[m++] = all[i];
      if (m) cons = cand[dt_rng_int(r, 0, m - 1)];
    }
    if (!cons) cons = n ? all[dt_rng_int(r, 0, n - 1)] : s;
    put_stage(p->stage, prod);
    put_stage(p->stage2, cons);
    put_iter(st, p, 0, pick_iter(st, r, cons));
    break;
  }
  case SCH_PRIM_STORE_AT: { /* mostly a compute_at'd stage at a loop around its compute loop */
    sch_stage *all[64], *cand[64], *prod = s, *cons;
    int n = compute_stages(st, all, 64), m = 0;
    for (int i = 0; i < n; i++)
      if (all[i]->attach == SCH_ATTACH_SCOPE) cand[m++] = all[i];
    if (m && dt_rng_chance(r, 85)) prod = cand[dt_rng_int(r, 0, m - 1)];
    cons = prod->attach == SCH_ATTACH_SCOPE && dt_rng_chance(r, 90) ? prod->attach_stage
           : n                                                      ? all[dt_rng_int(r, 0, n - 1)]
                                                                    : s;
    sch_iter *at = pick_iter(st, r, cons);
    if (cons == prod->attach_stage && dt_rng_chance(r, 80)) {
      int pos = sch_leaf_index(cons, prod->attach_iter);
      if (pos >= 0) at = cons->leaf[dt_rng_int(r, 0, pos)];
    }
    put_stage(p->stage, prod);
    put_stage(p->stage2, cons);
    put_iter(st, p, 0, at);
    break;
  }
  case SCH_PRIM_STORE_ROOT:
  case SCH_PRIM_COMPUTE_INLINE:
  case SCH_PRIM_COMPUTE_ROOT:
    if (dt_rng_chance(r, 70)) {
      sch_stage *all[64], *cand[64];
      int n = compute_stages(st, all, 64), m = 0;
      for (int i = 0; i < n; i++)
        if (!all[i]->is_output) cand[m++] = all[i];
      if (m) put_stage(p->stage, cand[dt_rng_int(r, 0, m - 1)]);
    }
    break;
  case SCH_PRIM_CACHE_READ: {
    sch_schedule *sc = st->in->sched;
    const te_tensor *t = sc->stages[dt_rng_int(r, 0, sc->nstage - 1)]->tensor;
    dt_ident(p->tensor, DT_ID, t->name);
    snprintf(p->str, DT_ID, "%s", pick_scope(r));
    sch_stage *all[64], *rd[64];
    int n = compute_stages(st, all, 64), m = 0;
    for (int i = 0; i < n; i++)
      if (reads(all[i], t)) rd[m++] = all[i];
    if (m && dt_rng_chance(r, 80)) {
      int k = (int)dt_rng_int(r, 1, m < 4 ? m : 4);
      int first = (int)dt_rng_int(r, 0, m - k);
      for (int i = 0; i < k; i++) dt_ident(p->readers[i], DT_ID, rd[first + i]->tensor->name);
      p->nreaders = k;
    } else {
      dt_ident(p->readers[0], DT_ID, all[dt_rng_int(r, 0, n - 1)]->tensor->name);
      p->nreaders = 1;
    }
    break;
  }
  case SCH_PRIM_CACHE_WRITE: {
    sch_schedule *sc = st->in->sched;
    const te_tensor *t = sc->outputs[0];
    if (dt_rng_chance(r, 8)) t = sc->stages[dt_rng_int(r, 0, sc->nstage - 1)]->tensor;
    else if (dt_rng_chance(r, 35)) t = any_stage(st, r)->tensor;
    dt_ident(p->tensor, DT_ID, t->name);
    snprintf(p->str, DT_ID, "%s", pick_scope(r));
    break;
  }
  case SCH_PRIM_PARALLEL:
  case SCH_PRIM_VECTORIZE:
  case SCH_PRIM_UNROLL:
    draw_loop_kind(st, r, p, s);
    break;
  case SCH_PRIM_PRAGMA: {
    int k = (int)dt_rng_int(r, 0, 99), dyn = k >= 50 && k < 64; /* dyn: parallel_dynamic */
    sch_iter *it = pick_iter(st, r, s);
    if (dyn && dt_rng_chance(r, 75)) /* parallel_dynamic: mostly on a parallel loop */
      for (int i = 0; i < s->nleaf; i++)
        if (s->leaf[i]->for_kind == IR_FOR_PARALLEL) it = s->leaf[i];
    put_iter(st, p, 0, it);
    const char *key = k < 34 ? "auto_unroll_max_step" : k < 50 ? "parallel_launch_point"
                    : k < 64 ? "parallel_dynamic" : k < 80 ? "user_note" : k < 88 ? "Bad-Key"
                    : k < 94 ? "" : "auto_unroll_max_step";
    snprintf(p->str, DT_ID, "%s", key);
    /* parallel_dynamic: a chunk size (now and then a negative one), or NULL for automatic */
    p->has_value = k < 34 || (k >= 64 && k < 80 && dt_rng_chance(r, 50)) || k >= 97 ||
                   (dyn && dt_rng_chance(r, 60));
    p->a = k >= 97 || (dyn && dt_rng_chance(r, 8)) ? -dt_rng_int(r, 1, 4) : dt_rng_int(r, 0, 16);
    break;
  }
  case SCH_PRIM_PREFETCH: { /* mostly a tensor the stage reads, 1-4 iterations ahead */
    put_iter(st, p, 0, pick_iter(st, r, s));
    const te_tensor *t = s->ninputs && dt_rng_chance(r, 85)
                             ? s->inputs[dt_rng_int(r, 0, s->ninputs - 1)]
                             : st->in->sched->stages[dt_rng_int(r, 0, st->in->sched->nstage - 1)]->tensor;
    dt_ident(p->tensor, DT_ID, t->name);
    p->a = dt_rng_chance(r, 92) ? dt_rng_int(r, 1, 4) : dt_rng_int(r, -1, 0);
    break;
  }
  case SCH_PRIM_RFACTOR: { /* mostly a reduction's reduce loop (split or not), axis 0..ndim */
    sch_stage *all[64], *red[64];
    int n = compute_stages(st, all, 64), m = 0;
    for (int i = 0; i < n; i++)
      if (all[i]->tensor->nreduce) red[m++] = all[i];
    sch_stage *t = m && dt_rng_chance(r, 85) ? red[dt_rng_int(r, 0, m - 1)] : s;
    dt_ident(p->tensor, DT_ID, t->tensor->name);
    sch_iter *it = pick_iter(st, r, t);
    if (dt_rng_chance(r, 75))
      for (int i = 0, k = (int)dt_rng_int(r, 0, 3); i < t->nleaf; i++)
        if (t->leaf[i]->kind == SCH_ITER_REDUCE && k-- >= 0) it = t->leaf[i];
    put_iter(st, p, 0, it);
    p->a = dt_rng_chance(r, 6) ? dt_rng_int(r, -1, 4) : dt_rng_int(r, 0, t->tensor->ndim);
    break;
  }
  case SCH_PRIM_SET_PRECOMPUTE: /* 0 or 1; now and then a value out of range (refused) */
    p->a = dt_rng_chance(r, 10) ? dt_rng_int(r, -1, 3) : dt_rng_int(r, 0, 1);
    break;
  case SCH_PRIM_STORAGE_ALIGN: {
    sch_iter *it = s->tensor->ndim && dt_rng_chance(r, 70)
                       ? s->root[dt_rng_int(r, 0, s->tensor->ndim - 1)] : pick_iter(st, r, s);
    put_iter(st, p, 0, it);
    p->a = dt_rng_int(r, 0, 20);
    p->b = dt_rng_int(r, -1, p->a);
    break;
  }
  default:
    break;
  }
  draw_extremes(r, p, ext);
}

/* space.c — the tuned mode's space: the rules' choices for each stage become knobs of a
 * tune_space (tec/space.h, the type the templates declare theirs in), each defaulting to what
 * the instant mode chose, so the default config is the instant schedule. A config is applied by
 * deciding again with its values in place of the rules' (as_tuned, read by the rule files)
 * and scheduling as the instant mode does (a refused choice falls back the same way): the same
 * config gives the same schedule.
 *
 *   stage kind (instant)   knobs ("<stage>.<knob>")
 *   kept or inlined        at: inline (up to 16 reads per element) | attach (when the attach
 *                          rule can place it) | root
 *   tile (a reduction)     tile_i, tile_j (the register tile), tile_k (its second axis, where
 *                          the rule found one: 1, 2, 4), block_i (row tiles per outer
 *                          block: the second level), block_j (column tiles per group inside
 *                          the row tile), pack (no | yes), fuse (cache_write |
 *                          fused: the accumulator in the element-wise consumer's tile),
 *                          unroll, par
 *   loops / attach         vector (0: none), tail (guard | shift), unroll, par, rows and cols
 *                          (a host of producers with a halo: rows per tile, columns per tile
 *                          or 0 for whole rows), slide (no | yes: the producers stored per
 *                          tile and computed per row, rule_slide_store.c)
 *                          stream (no | yes: an output written in whole vectors stores around
 *                          the caches; rule_stream.c)
 *                          with (no | yes: its loops shared with a sibling's, sch_compute_with;
 *                          rule_with.c), where the instant mode pairs it
 *   rfactor                rfactor (no | yes)
 *
 * A root host's (vector, cols) pairs the apply step refuses (as_cols_fit: two vectors' lanes
 * beside a tile of one) are left out by the space's one rule (cols_rule_set), so the tuner
 * never proposes them (an index asked for anyway falls back, named).
 *
 * Stages computed from constants alone get no knobs: they run once, in prepare, untimed.
 * par: auto (the rules' depth: outer loops fused until 8 iterations per thread), serial, or
 * exactly 1 or 2 outer loops fused. Knob values are the choice's own numbers (tile sizes,
 * lanes); categorical ones carry labels. The config struct is one int64_t per knob. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "autosched/tuned.h"

static const char *const AT_LABELS[] = {"inline", "attach", "root"};
static const char *const NOYES[] = {"no", "yes"};
static const char *const FUSE_LABELS[] = {"cache_write", "fused"};
static const char *const TAIL_LABELS[] = {"guard", "shift"}; /* SCH_TAIL_* + 1: 1, 2 */
static const char *const PAR_LABELS[] = {"auto", "serial", "1", "2"};

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* 1 if stages a and b are of one class: the same rule, dimensions, arithmetic per element,
 * reads and halo (a stencil chain's stages); their knobs can be one */
static int same_class(const as_prog *p, int a, int b) {
  const as_stage *x = &p->st[a], *y = &p->st[b];
  return x->ch.kind == y->ch.kind && x->t->ndim == y->t->ndim && x->nred == y->nred &&
         x->cost == y->cost && x->reads_total == y->reads_total && x->is_output == y->is_output &&
         x->halo == y->halo && x->has_attached == y->has_attached;
}

/* one knob: values (n of them, def among or added, sorted and unique), labels by value
 * (labels[v - lab0] for value v) or NULL; its field of as_tuned recorded in the map. In a
 * shared space (S->share), a knob equal to one of an earlier stage of the same class (same
 * field, values and default) is that knob; one that would take the space past 2^62 is left
 * out (the stage keeps the rules' choice). */
static int add_knob(as_space *S, int stage, const char *knob, size_t field, int64_t *vals, int n,
                    int64_t def, const char *const *labels, int64_t lab0) {
  int64_t v[16];
  int m = 0;
  for (int i = 0; i < n && m < 15; i++) v[m++] = vals[i];
  v[m++] = def;
  qsort(v, (size_t)m, sizeof *v, cmp_i64);
  int u = 0;
  for (int i = 0; i < m; i++)
    if (!u || v[i] != v[u - 1]) v[u++] = v[i];
  if (u < 2) return 0; /* one value: nothing to tune */
  if (S->nmap == S->cap) return tec_ctx_set_error(S->sp->ctx, "autosched space: too many knobs");
  for (int e = 0; S->share && e < S->nmap; e++) {
    const tune_knob *kb = &S->sp->knobs[S->map[e].knob];
    int same = S->map[e].field == field && same_class(S->p, S->map[e].stage, stage) &&
               kb->nvalues == u && kb->values[kb->def] == def;
    for (int i = 0; same && i < u; i++) same = kb->values[i] == v[i];
    if (same) {
      S->map[S->nmap++] = (struct as_knob_map){stage, field, S->map[e].knob};
      return 0;
    }
  }
  if (S->share && tune_space_range(S->sp) > ((int64_t)1 << 62) / u) {
    S->dropped++;
    return 0;
  }
  const char *name = tec_ctx_printf(S->sp->ctx, "%s.%s", S->p->st[stage].t->name, knob);
  int k = name ? tune_define_field(S->sp, name, NULL, sizeof(int64_t) * (size_t)S->nknobs, u, v,
                                   def)
               : -1;
  if (k < 0) return -1;
  if (labels) {
    const char **lab = tec_ctx_alloc(S->sp->ctx, sizeof *lab * (size_t)u);
    if (!lab) return -1;
    for (int i = 0; i < u; i++) lab[i] = labels[v[i] - lab0];
    S->sp->knobs[k].labels = lab;
  }
  S->map[S->nmap++] = (struct as_knob_map){stage, field, S->nknobs++};
  return 0;
}

#define F(f) offsetof(as_tuned, f)

/* 1 if the attach rule places stage i at a consumer's rows when it is not inlined */
static int attachable(as_prog *p, int i, as_tuned *scratch) {
  for (int k = 0; k < p->n; k++) as_tuned_unset(&scratch[k]);
  scratch[i].at = AS_AT_ATTACH;
  const as_tuned *keep = p->tuned;
  p->tuned = scratch;
  as_decide(p);
  int yes = p->st[i].ch.kind == TEC_AS_ATTACH;
  p->tuned = keep;
  return yes;
}

/* the par knob of a stage whose outer data loops number nouter */
static int par_knob(as_space *S, int i, int nouter) {
  const tec_autosched_choice *ch = &S->p->st[i].ch;
  int64_t vals[4] = {-1, 0, 1, 2}, def = !ch->parallel ? 0 : ch->par_depth ? ch->par_depth : -1;
  int n = nouter >= 2 ? 4 : nouter >= 1 ? 2 : 0;
  return n ? add_knob(S, i, "par", F(par), vals, n, def, PAR_LABELS, -1) : 0;
}

static int unroll_knob(as_space *S, int i) {
  const as_stage *s = &S->p->st[i];
  if (s->nred < 1 || !s->const_ext) return 0;
  int64_t r = s->rext[s->nred - 1], vals[3] = {1, 4, 64};
  if (r < 2 || r > 64) return 0;
  return add_knob(S, i, "unroll", F(unroll), vals, 3, s->ch.unroll, NULL, 0);
}

static int tile_knobs(as_space *S, int i) {
  as_prog *p = S->p;
  const as_stage *s = &p->st[i];
  const tec_autosched_choice *ch = &s->ch;
  int nd = s->t->ndim;
  int64_t L = as_lanes(p, s->t), ei = s->ext[ch->tile_axis_i], ej = s->ext[nd - 1];
  int64_t ti[8] = {1, 2, 4, 6, 8, 12}, tj[4] = {L, 2 * L, 4 * L}, bl[5] = {1, 2, 4, 8, 16};
  int nti = 0, ntj = 0;
  for (int k = 0; k < 6; k++)
    if (ti[k] <= ei) ti[nti++] = ti[k];
  for (int k = 0; k < 3; k++)
    if (tj[k] <= ej) tj[ntj++] = tj[k];
  if (!ntj) tj[ntj++] = ej;
  int64_t rtiles = (ei + ch->tile_i - 1) / ch->tile_i, nbl = 0;
  while (nbl < 5 && bl[nbl] < rtiles) nbl++;
  int64_t ctiles = (ej + ch->tile_j - 1) / ch->tile_j, bg[4] = {1, 2, 4, 8}, nbg = 0;
  while (nbg < 4 && bg[nbg] < ctiles) nbg++;
  /* the second axis (rule_tile.c): none, 2 or 4 values of it, within its extent */
  int64_t tk[3] = {1, 2, 4}, ntk = 0;
  while (ntk < 3 && ch->tile_axis_k >= 0 && tk[ntk] <= s->ext[ch->tile_axis_k]) ntk++;
  int64_t two[2] = {0, 1};
  if (add_knob(S, i, "tile_i", F(tile_i), ti, nti, ch->tile_i, NULL, 0) ||
      add_knob(S, i, "tile_j", F(tile_j), tj, ntj, ch->tile_j, NULL, 0) ||
      add_knob(S, i, "block_i", F(block_i), bl, (int)nbl, ch->block_i > 1 ? ch->block_i : 1, NULL,
               0) ||
      add_knob(S, i, "block_j", F(block_j), bg, (int)nbg, ch->block_j > 1 ? ch->block_j : 1, NULL,
               0) ||
      (ch->tile_axis_k >= 0 && add_knob(S, i, "tile_k", F(tile_k), tk, ntk, ch->tile_k, NULL, 0)) ||
      (s->npack && add_knob(S, i, "pack", F(pack), two, 2, 1, NOYES, 0)) ||
      (s->anchor >= 0 && add_knob(S, i, "fuse", F(fuse), two, 2, 1, FUSE_LABELS, 0)) ||
      unroll_knob(S, i))
    return -1;
  return par_knob(S, i, nd - 1); /* the other axes and the column tiles */
}

static int loops_knobs(as_space *S, int i) {
  as_prog *p = S->p;
  const as_stage *s = &p->st[i];
  const tec_autosched_choice *ch = &s->ch;
  int nd = s->t->ndim, root = ch->kind == TEC_AS_LOOPS;
  if (nd < 1) return 0;
  int reduce_body = s->t->body && s->t->body->kind == IR_REDUCE;
  int64_t L = as_lanes(p, s->t), e = s->ext[nd - 1], vec[3] = {0, L, 2 * L};
  int nv = 1;
  for (int k = 1; k < 3; k++)
    if (vec[k] <= e) vec[nv++] = vec[k];
  if (nv == 1 && e >= 2 && s->t->shape[nd - 1]->kind == IR_INT_IMM) vec[nv++] = e;
  if (!ch->rfactor && add_knob(S, i, "vector", F(vector), vec, nv, ch->vector, NULL, 0)) return -1;
  int odd = 0; /* some vector width leaves a tail */
  for (int k = 1; k < nv; k++) odd |= e % vec[k] != 0 && vec[k] < e;
  int64_t tails[2] = {SCH_TAIL_GUARD_WITH_IF + 1, SCH_TAIL_SHIFT_INWARDS + 1};
  /* the default is the instant mode's (its vector's tail, or guard: 7x faster on the stencil
   * chain's sliding host than a shifted split) */
  int64_t tdef = ch->tail ? ch->tail : as_default_tail(s, root, ch->vector) + 1;
  if (root && !reduce_body && s->const_ext && odd && !ch->rfactor &&
      add_knob(S, i, "tail", F(tail), tails, 2, tdef, TAIL_LABELS, 1))
    return -1;
  if (!ch->rfactor && unroll_knob(S, i)) return -1;
  if (s->has_attached && s->halo > 0 && s->host_row >= 0 && s->host_row < nd - 1) {
    int64_t rows[7] = {1, 4, 8, 16, 32, 64, 128}, R = s->ext[s->host_row];
    int nr = 0;
    for (int k = 0; k < 7; k++)
      if (rows[k] <= R) rows[nr++] = rows[k];
    if (nr && add_knob(S, i, "rows", F(rows), rows, nr, ch->rows, NULL, 0)) return -1;
    /* columns per tile (0: whole rows), where every attached producer's columns line up */
    int64_t cols[7] = {0, L, 2 * L, 64, 128, 256, 512};
    int nc = 0;
    for (int k = 0; s->halo_x >= 0 && k < 7; k++)
      if (cols[k] < e && (k == 0 || cols[k] > cols[nc - 1])) cols[nc++] = cols[k];
    /* a tile the vector loop cannot take (as_cols_fit) is not offered: beside a knob of
     * vector widths, the pairs are left out by the space's rule (cols_rule); past the 32
     * knobs a rule can read, no such tile for any width offered (the default stays) */
    if (S->nknobs >= 32) {
      int m = 0;
      for (int k = 0; k < nc; k++) {
        int fit = cols[k] == ch->cols || as_cols_fit(ch->vector, cols[k], e);
        for (int v = 0; v < nv && !ch->rfactor; v++) fit &= cols[k] == ch->cols || as_cols_fit(vec[v], cols[k], e);
        if (fit) cols[m++] = cols[k];
      }
      nc = m;
    }
    if (nc > 1 && add_knob(S, i, "cols", F(cols), cols, nc, ch->cols, NULL, 0)) return -1;
    /* the producers stored per tile and computed per row (a sliding window) */
    int64_t slide[2] = {0, 1};
    if (add_knob(S, i, "slide", F(slide), slide, 2, ch->slide, NOYES, 0)) return -1;
  }
  int64_t two[2] = {0, 1};
  if (as_stream_can(p, s) && add_knob(S, i, "stream", F(stream), two, 2, ch->stream, NOYES, 0))
    return -1;
  return root && ch->parallel ? par_knob(S, i, nd) : 0;
}

static const char *stage_knobs(as_prog *p, tune_space *sp, as_space *S,
                               const unsigned char *can_attach, int share);

/* ---- the space's rule: no (vector, cols) pair of a root host that as_apply_loops refuses
 * (as_cols_fit: two vectors' lanes beside a tile of one, ...); the instant choice's own pair
 * stays ---- */
typedef struct cols_pair {
  int vk, ck;         /* the vector knob (-1: none, the width fixed at v) and the cols knob */
  int64_t v, e, vdef, cdef;
} cols_pair;
typedef struct cols_rule {
  int n;
  cols_pair *pr;
} cols_rule;

/* whether q's host refuses V lanes beside a column tile of C (its default pair never) */
static int pair_refused(const cols_pair *q, int64_t V, int64_t C) {
  return !(V == q->vdef && C == q->cdef) && !as_cols_fit(V, C, q->e);
}

static int cols_ok(const void *data, const void *config) {
  const cols_rule *r = data;
  const int64_t *cfg = config; /* one int64_t per knob (add_knob) */
  for (int k = 0; k < r->n; k++) {
    const cols_pair *q = &r->pr[k];
    if (pair_refused(q, q->vk >= 0 ? cfg[q->vk] : q->v, cfg[q->ck])) return 0;
  }
  return 1;
}

/* the knob of stage i's field f, or -1 */
static int knob_of(const as_space *S, int i, size_t f) {
  for (int m = 0; m < S->nmap; m++)
    if (S->map[m].stage == i && S->map[m].field == f) return S->map[m].knob;
  return -1;
}

static int cols_rule_set(as_space *S) {
  as_prog *p = S->p;
  tune_space *sp = S->sp;
  cols_rule *r = tec_ctx_alloc(p->ctx, sizeof *r);
  cols_pair *pr = tec_ctx_alloc(p->ctx, sizeof *pr * (size_t)(S->nmap + 1));
  if (!r || !pr) return -1;
  unsigned mask = 0;
  int n = 0;
  for (int m = 0; m < S->nmap; m++) {
    const as_stage *s = &p->st[S->map[m].stage];
    if (S->map[m].field != F(cols) || s->ch.kind != TEC_AS_LOOPS) continue;
    int ck = S->map[m].knob, vk = knob_of(S, S->map[m].stage, F(vector));
    if (ck >= 32 || vk >= 32) continue; /* pruned in its values instead (loops_knobs) */
    cols_pair q = {vk, ck, s->ch.vector, s->t->ndim ? s->ext[s->t->ndim - 1] : 1, s->ch.vector, 0};
    const tune_knob *kc = &sp->knobs[ck], *kv = vk >= 0 ? &sp->knobs[vk] : NULL;
    q.cdef = kc->values[kc->def];
    if (kv) q.vdef = kv->values[kv->def];
    int refused = 0;
    for (int a = 0; a < (kv ? kv->nvalues : 1); a++)
      for (int b = 0; b < kc->nvalues; b++) {
        refused |= pair_refused(&q, kv ? kv->values[a] : q.v, kc->values[b]);
      }
    if (!refused) continue;
    pr[n++] = q;
    mask |= 1u << ck;
    if (vk >= 0) mask |= 1u << vk;
  }
  if (!n) return 0;
  *r = (cols_rule){n, pr};
  return tune_space_set_rule(sp, mask, cols_ok, r,
                             "a host's column tile a whole number of its vectors (or one "
                             "vector, or no vectors)");
}

int as_space_build(as_prog *p, tune_space *sp, as_space *S) {
  /* the instant choices, and per stage which levels are open to it */
  as_tuned *scratch = tec_ctx_alloc(p->ctx, sizeof *scratch * (size_t)(p->n ? p->n : 1));
  unsigned char *can_attach = tec_ctx_alloc(p->ctx, (size_t)(p->n ? p->n : 1));
  if (!scratch || !can_attach) return -1;
  as_decide(p);
  for (int i = 0; i < p->n; i++) {
    const as_stage *s = &p->st[i];
    can_attach[i] = s->ch.kind == TEC_AS_ATTACH;
    int injective = !(s->t->body && s->t->body->kind == IR_REDUCE);
    if (!s->is_input && s->understood && !s->is_output && !s->const_only && injective &&
        s->ch.kind != TEC_AS_ATTACH && s->ch.kind != TEC_AS_LEAVE)
      can_attach[i] = (unsigned char)attachable(p, i, scratch);
  }
  as_decide(p); /* back to the instant choices */
  /* per stage its own knobs; past 2^62 configs (a 32-stage stencil chain), one knob per
   * class of stages and the rest left out */
  for (int share = 0; share < 2; share++) {
    const char *err = stage_knobs(p, sp, S, can_attach, share);
    if (!err) return cols_rule_set(S);
    if (share || !strstr(err, "2^62")) return tec_ctx_set_error(p->ctx, "%s", err);
    tec_ctx_clear_error(p->ctx);
  }
  return -1;
}

/* the knobs of every stage into a fresh space: NULL, or the error's text */
static const char *stage_knobs(as_prog *p, tune_space *sp, as_space *S,
                               const unsigned char *can_attach, int share) {
  int cap = 8 * (p->n ? p->n : 1);
  *S = (as_space){.p = p, .sp = sp, .cap = cap, .share = share,
                  .map = tec_ctx_alloc(p->ctx, sizeof *S->map * (size_t)cap)};
  if (!S->map || tune_space_init(p->ctx, sp, "autosched", sizeof(int64_t) * (size_t)cap))
    return tec_ctx_error(p->ctx) ? tec_ctx_error(p->ctx) : "autosched space: out of memory";
  for (int i = 0; i < p->n; i++) {
    const as_stage *s = &p->st[i];
    /* a stage of constants alone runs once, in prepare: nothing of it is timed */
    if (s->is_input || !s->understood || s->ch.kind == TEC_AS_LEAVE || s->const_only) continue;
    int injective = !(s->t->body && s->t->body->kind == IR_REDUCE);
    if (!s->is_output && !s->const_only && (injective || s->ch.kind == TEC_AS_ATTACH) &&
        !(s->ch.kind == TEC_AS_TILE && !s->is_reduce)) {
      int64_t lv[3], n = 0, def = s->ch.kind == TEC_AS_INLINE   ? AS_AT_INLINE
                                  : s->ch.kind == TEC_AS_ATTACH ? AS_AT_ATTACH
                                                                : AS_AT_ROOT;
      /* inlined into a reader of many taps, its code grows that many times (a chain of
       * 5x5 stencils inlined: 25^k): offered up to 16 reads per element. A stage whose
       * selects fold once its axes are unrolled (rule_fold.c) is not offered either: its
       * readers would copy its select tree, unfolded, into every element (Winograd's
       * transforms inlined into the batched GEMM's unrolled tile: the suspected cause of a
       * ResNet-18 tuning run killed at 22 GB). The instant choice stays offered. */
      int folds = 0;
      for (int d = 0; d < AS_MAX_DIM; d++) folds |= s->fold[d] != 0;
      if (injective && ((s->reads_total <= 16 && !folds) || s->ch.kind == TEC_AS_INLINE))
        lv[n++] = AS_AT_INLINE;
      if (can_attach[i]) lv[n++] = AS_AT_ATTACH;
      lv[n++] = AS_AT_ROOT;
      if (add_knob(S, i, "at", F(at), lv, (int)n, def, AT_LABELS, 0)) return tec_ctx_error(p->ctx);
    }
    int rc = 0;
    switch (s->ch.kind) {
      case TEC_AS_TILE: rc = s->is_reduce ? tile_knobs(S, i) : 0; break;
      case TEC_AS_LOOPS:
      case TEC_AS_ATTACH: rc = loops_knobs(S, i); break;
      default: break;
    }
    if (!rc && (s->ch.kind == TEC_AS_RFACTOR || s->ch.rfactor)) {
      int64_t two[2] = {0, 1};
      rc = add_knob(S, i, "rfactor", F(rfactor), two, 2, 1, NOYES, 0);
    }
    if (!rc && s->with_to) { /* its loops shared with a sibling's (rule_with.c) */
      int64_t two[2] = {0, 1};
      rc = add_knob(S, i, "with", F(with), two, 2, 1, NOYES, 0);
    }
    if (rc) return tec_ctx_error(p->ctx) ? tec_ctx_error(p->ctx) : "autosched space: failed";
  }
  return NULL;
}

void as_tuned_unset(as_tuned *t) {
  int64_t *f = (int64_t *)t;
  for (size_t k = 0; k < sizeof *t / sizeof(int64_t); k++) f[k] = AS_UNSET;
}

int as_space_values(const as_space *S, tec_ctx *ctx, int64_t index, as_tuned **out) {
  const as_prog *p = S->p;
  as_tuned *tv = tec_ctx_alloc(ctx, sizeof *tv * (size_t)(p->n ? p->n : 1));
  int64_t *cfg = tec_ctx_alloc(ctx, S->sp->config_size);
  if (!tv || !cfg) return -1;
  /* a config the space's rule leaves out (cols_rule) is still applied when asked for by
   * index: the tuner never proposes it, and the apply step refuses it by name (a fallback) */
  int in = tune_space_config(S->sp, index, cfg);
  if (in < 0)
    return tec_ctx_set_error(ctx,
                             "autosched: config index %lld is outside the space (0..%lld)",
                             (long long)index, (long long)tune_space_range(S->sp) - 1);
  for (int i = 0; i < p->n; i++) as_tuned_unset(&tv[i]);
  for (int e = 0; e < S->nmap; e++)
    *(int64_t *)((char *)&tv[S->map[e].stage] + S->map[e].field) = cfg[S->map[e].knob];
  *out = tv;
  return 0;
}

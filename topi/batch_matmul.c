/* batch_matmul.c — batched matmul, fp32 (TVM's topi batch_matmul with transpose_a /
 * transpose_b): out[b, i, j] = sum_k a[b, i, k] * b[b, k, j], either operand given transposed
 * (a as [batch][k][m], b as [batch][n][k]: attention's Q·Kᵀ). Scheduled as dense's GEMM
 * (topi/dense.c), one per batch entry:
 *
 *   bp[bb, jo, kk, ji] = b(bb, kk, jo*nr + ji)   (zero past n)   b packed into nr-column panels
 *   acc[bb, i, j]      = sum_kk a(bb, i, kk) * bp[bb, j / nr, kk, j % nr]
 *   out[bb, i, j]      = acc[bb, i, j]
 *
 *   for (bb, jo) fused, parallel: [bp for these jb panels]; for io: for js in jb:
 *     acc.tile[mr][nr] over k (unrolled by ku, the mr rows broadcast from a, the nr columns one
 *     vector each); out[tile] = acc.tile
 *
 * The knobs and their legal values and defaults are dense's for the same GEMM (m, n, k, b
 * transposed), so the register tile is the target's micro-kernel (AVX-512: 6 x 64). a
 * transposed is read in place (the tile broadcasts a[bb, kk, i] for its mr rows: mr floats
 * contiguous per k); b transposed is packed by a transposing copy (bmm_pack_transposed). Tails
 * are peeled by loop partitioning; any sizes >= 1 work.
 */
#include <string.h>
#include <stddef.h>
#include "topi/internal.h"

/* the space is dense's: the config structs must agree field for field */
_Static_assert(sizeof(topi_batch_matmul_config) == sizeof(topi_dense_config) &&
                   offsetof(topi_batch_matmul_config, mr) == offsetof(topi_dense_config, mr) &&
                   offsetof(topi_batch_matmul_config, nr) == offsetof(topi_dense_config, nr) &&
                   offsetof(topi_batch_matmul_config, ku) == offsetof(topi_dense_config, ku) &&
                   offsetof(topi_batch_matmul_config, jb) == offsetof(topi_dense_config, jb) &&
                   offsetof(topi_batch_matmul_config, parallel) == offsetof(topi_dense_config, parallel) &&
                   offsetof(topi_batch_matmul_config, pack) == offsetof(topi_dense_config, pack),
               "topi_batch_matmul_config must be laid out as topi_dense_config");

typedef struct bmm_decl {
  topi_batch_matmul p;
  te_tensor *a, *b;
} bmm_decl;

typedef struct bmm_graph {
  const bmm_decl *d;
  int64_t nr;
  const ir_expr *k;
  te_tensor *bp, *acc, *out;
} bmm_graph;

static const ir_expr *a_at(const bmm_decl *d, const ir_expr *bb, const ir_expr *i, const ir_expr *kk) {
  return d->p.transpose_a ? TE_AT(d->a, bb, kk, i) : TE_AT(d->a, bb, i, kk);
}
static const ir_expr *b_at(const bmm_decl *d, const ir_expr *bb, const ir_expr *j, const ir_expr *kk) {
  return d->p.transpose_b ? TE_AT(d->b, bb, j, kk) : TE_AT(d->b, bb, kk, j);
}

static const ir_expr *bp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  bmm_graph *g = u;
  const ir_expr *j = ir_add(ir_mul(i[1], ir_int(ctx, g->nr)), i[3]);
  const ir_expr *v = b_at(g->d, i[0], j, i[2]);
  if (g->d->p.n % g->nr == 0) return v;
  return ir_select(ir_lt(j, ir_int(ctx, g->d->p.n)), v, ir_float(ctx, 0.0));
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  bmm_graph *g = u;
  const ir_expr *bv;
  if (g->bp) {
    const ir_expr *nr = ir_int(ctx, g->nr);
    bv = TE_AT(g->bp, i[0], ir_floordiv(i[2], nr), g->k, ir_floormod(i[2], nr));
  } else {
    bv = b_at(g->d, i[0], i[2], g->k);
  }
  return te_sum(ir_mul(a_at(g->d, i[0], i[1], g->k), bv), 1, &g->k, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  bmm_graph *g = u;
  return TE_AT(g->acc, i[0], i[1], i[2]);
}

static bmm_graph *build_graph(tec_ctx *ctx, const bmm_decl *d, int64_t nr) {
  bmm_graph *g = tec_ctx_alloc(ctx, sizeof *g);
  if (!g) return NULL;
  const topi_batch_matmul *p = &d->p;
  *g = (bmm_graph){.d = d, .nr = nr, .k = te_reduce_axis_n(ctx, "k", p->k)};
  static const char *const pn[] = {"b", "jo", "k", "ji"}, *const on[] = {"b", "i", "j"};
  if (nr > 0 &&
      !(g->bp = te_compute(ctx, &(te_compute_decl){.name = "b_p", .ndim = 4,
                                                  .shape = TE_SHAPE(ctx, p->batch,
                                                                    topi_ceil_div(p->n, nr), p->k, nr),
                                                  .body = bp_body, .user = g, .tag = "pack_b",
                                                  .axis_names = pn})))
    return NULL;
  const ir_expr *const *os = TE_SHAPE(ctx, p->batch, p->m, p->n);
  g->acc = te_compute(ctx, &(te_compute_decl){.name = "acc", .ndim = 3, .shape = os,
                                              .body = acc_body, .user = g, .tag = "batch_matmul",
                                              .axis_names = on});
  if (!g->acc) return NULL;
  g->out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 3, .shape = os,
                                              .body = out_body, .user = g, .tag = "copy",
                                              .axis_names = on});
  return g->out ? g : NULL;
}

static int bmm_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_batch_matmul *p = problem;
  const char *w = NULL;
  if (!p)
    w = "the problem is NULL";
  else if (p->batch < 1 || p->m < 1 || p->n < 1 || p->k < 1)
    w = tec_ctx_printf(ctx, "sizes must be >= 1 (got batch=%lld m=%lld n=%lld k=%lld)",
                       (long long)p->batch, (long long)p->m, (long long)p->n, (long long)p->k);
  else if ((p->transpose_a != 0 && p->transpose_a != 1) || (p->transpose_b != 0 && p->transpose_b != 1))
    w = tec_ctx_printf(ctx, "transpose_a = %d and transpose_b = %d must be 0 or 1", p->transpose_a,
                       p->transpose_b);
  if (why) *why = w;
  return w == NULL;
}

static int bmm_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_batch_matmul *p = p_arg;
  if (!ctx) return -1;
  if (!out) return tec_ctx_set_error(ctx, "batch_matmul: problem and decl are required");
  const char *why;
  if (!bmm_applies(ctx, p, &why)) return tec_ctx_set_error(ctx, "batch_matmul: %s", why);
  bmm_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  te_tensor **args = tec_ctx_alloc(ctx, 3 * sizeof *args);
  if (!d || !args) return -1;
  *d = (bmm_decl){.p = *p};
  d->a = te_placeholder(ctx, "a", TEC_F32, 3,
                        p->transpose_a ? TE_SHAPE(ctx, p->batch, p->k, p->m) : TE_SHAPE(ctx, p->batch, p->m, p->k));
  d->b = te_placeholder(ctx, "b", TEC_F32, 3,
                        p->transpose_b ? TE_SHAPE(ctx, p->batch, p->n, p->k) : TE_SHAPE(ctx, p->batch, p->k, p->n));
  if (!d->a || !d->b) return -1;
  bmm_graph *g = build_graph(ctx, d, 0); /* the plain definition */
  if (!g) return -1;
  args[0] = d->a, args[1] = d->b, args[2] = g->out;
  *out = (topi_decl){&topi_tmpl_batch_matmul, ctx, &d->p, 3, args, g->out, d};
  return 0;
}

enum { PACK_ROOT, PACK_PANEL, PACK_NONE }; /* dense's values of `pack` */

/* b transposed (Q·Kᵀ's K as [batch][n][k]): the panel bp[.., jo, kk, ji] = b[.., jo*nr + ji, kk]
 * is a transpose. When the shape allows, lanes x lanes blocks transposed in registers
 * (topi_gemm_pack_transposed_block: pragma transpose_block). Otherwise k split by the vector
 * width, (k.outer, ji, k.inner unrolled): each ji step reads one short run of b's row and the
 * ji loop, innermost but for the unrolled run, is one LLVM's loop vectorizer turns into
 * gathers writing whole panel vectors (AVX-512). Dense's order (ji, k: k innermost, reads
 * contiguous, writes at stride nr) stays scalar: on Q·Kᵀ (12 x 128 x 128 x 64) the whole call
 * is ~10 % slower with it (bench/run bmm, bench/README.md). */
static int bmm_pack_transposed(sch_stage *sp, const topi_batch_matmul *p, int64_t nr, int lanes) {
  int rc = topi_gemm_pack_transposed_block(sp, p->k, p->n, nr, lanes);
  if (rc <= 0) return rc;
  sch_iter *pk = sch_leaf_named(sp, "k"), *pj = sch_leaf_named(sp, "ji"), *ko = NULL, *ki = pk;
  if (lanes <= 1) return sch_reorder(sp, 2, (sch_iter *[]){pj, pk}); /* no vectors: dense's */
  if (p->k > lanes && sch_split(sp, pk, lanes, &ko, &ki)) return -1;
  if (ko ? sch_reorder(sp, 3, (sch_iter *[]){ko, pj, ki}) : sch_reorder(sp, 2, (sch_iter *[]){pj, ki}))
    return -1;
  return sch_unroll(sp, ki);
}

static int bmm_schedule(const topi_decl *dc, const void *cfg_arg, const tec_target *target,
                        topi_op *op) {
  const topi_batch_matmul_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  tec_ctx *ctx = dc->ctx;
  int lanes = topi_target_lanes(ctx, target);
  if (lanes < 0 || topi_config_check(&topi_tmpl_batch_matmul, dc, cfg, target)) return -1;
  const bmm_decl *d = dc->priv;
  bmm_graph *g = build_graph(ctx, d, cfg->pack == PACK_NONE ? 0 : cfg->nr);
  te_tensor **args = tec_ctx_alloc(ctx, 3 * sizeof *args);
  if (!g || !args) return -1;
  args[0] = d->a, args[1] = d->b, args[2] = g->out;
  sch_schedule *s = sch_create(ctx, 1, &g->out);
  if (!s) return -1;
  *op = (topi_op){dc, s, 3, args, g->out};
  sch_stage *so = sch_stage_of(s, g->out), *sa = sch_stage_of(s, g->acc);
  if (!so || !sa) return -1;
  topi_dense_config dcfg = {cfg->mr, cfg->nr, cfg->ku, cfg->jb, cfg->parallel, cfg->pack};
  sch_iter *jo;
  if (topi_gemm_tile_schedule(ctx, &dcfg, so, 1, (sch_iter *[]){sch_axis(so, 0)}, sch_axis(so, 1),
                              sch_axis(so, 2), sa, &jo, NULL))
    return -1;
  if (!g->bp) return 0;
  sch_stage *sp = sch_stage_of(s, g->bp);
  if (!sp) return -1;
  if (cfg->pack == PACK_PANEL && sch_compute_at(sp, so, jo)) return -1;
  if (cfg->pack == PACK_ROOT && cfg->parallel && sch_parallel(sp, sch_leaf_named(sp, "b")))
    return -1;
  if (d->p.transpose_b) return bmm_pack_transposed(sp, &d->p, cfg->nr, lanes);
  return topi_gemm_pack_schedule(sp, 0, cfg->nr, lanes);
}

/* dense's space for one batch entry's GEMM (its knobs, values, defaults and register rule) */
static int bmm_space(tec_ctx *ctx, const void *p_arg, const tec_target *target, tune_space *sp) {
  const topi_batch_matmul *p = p_arg;
  if (!ctx) return -1;
  const char *why;
  if (!bmm_applies(ctx, p, &why)) return tec_ctx_set_error(ctx, "batch_matmul: %s", why);
  topi_dense gp = {.m = p->m, .n = p->n, .k = p->k, .b_transposed = p->transpose_b};
  if (topi_tmpl_dense.space(ctx, &gp, target, sp)) return -1;
  sp->name = topi_tmpl_batch_matmul.name; /* same layout: topi_batch_matmul_config == dense's */
  /* b's rows already one panel wide (n <= nr, not transposed, P·V's n 64): packing them is a
   * copy into the same layout, so the default reads them in place (pack none) */
  topi_batch_matmul_config *def = sp->default_config;
  if (p->transpose_b || p->n > def->nr) return 0;
  for (int k = 0; k < sp->nknobs; k++) {
    tune_knob *kn = &sp->knobs[k];
    if (strcmp(kn->name, "pack")) continue;
    for (int v = 0; v < kn->nvalues; v++)
      if (kn->values[v] == PACK_NONE) kn->def = v, def->pack = PACK_NONE;
  }
  return 0;
}

const topi_template topi_tmpl_batch_matmul = {
    "batch_matmul", "batched matmul, a and/or b transposed: dense's GEMM per batch entry",
    TOPI_PROBLEM_BATCH_MATMUL, sizeof(topi_batch_matmul_config), bmm_applies, bmm_declare,
    bmm_schedule, bmm_space, "topi_batch_matmul_config"};

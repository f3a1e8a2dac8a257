/* dense.c — dense / matmul, fp32: out[i, j] = epilogue(sum_k a[i, k] * b[k, j]) (b_transposed:
 * b[j, k], the fully connected layer), scheduled as bench/gemm.c's GEMM:
 *
 *   bp[jo, kk, ji] = b[kk, jo*nr + ji]   (zero past n)   B packed into nr-column panels
 *   acc[i, j]      = sum_kk a[i, kk] * bp[j / nr, kk, j % nr]
 *   out[i, j]      = acc[i, j] (+ bias[j]) (+ residual[i, j]) (relu / relu6)
 *
 *   for jo in ceil(n / (nr*jb))        parallel (static ranges, or dynamic chunks)
 *     bp for these jb panels           (pack = panel; root: all of bp before the loop, or in
 *                                       prepare when b is constant; none: acc reads b itself)
 *     for io in ceil(m / mr)
 *       for js in jb                    (a's mr rows stay in L1 for the next panel)
 *         acc.tile[mr][nr] = 0          (compute_at js: the accumulators, in registers)
 *         for ko in k / ku, ki in ku (unrolled): for ii in mr (unrolled):
 *           acc.tile[ii, 0:nr] += a[io*mr + ii, k] * bp[jo*jb + js, k, 0:nr]   (vector)
 *         out[io*mr + ii, (jo*jb + js)*nr + 0:nr] = epilogue(acc.tile[ii, 0:nr])
 *
 * The panel width nr is a knob, and the packed layout depends on it: declare gives the
 * arguments and the plain definition (acc reads b itself), and every schedule builds its own
 * bp, acc and out over the declared placeholders for its nr. So op.out is not d->out, but it has
 * the same shape and the call's arguments are the same (op.args: the declared inputs, op.out).
 * Tails (m % mr, n % nr, k % ku) are peeled by loop partitioning; any m, n, k >= 1 works.
 */
#include <string.h>
#include "topi/internal.h"

typedef struct dense_decl {
  topi_dense p;
  te_tensor *a, *b, *bias, *residual;
} dense_decl;

/* One graph over the declared placeholders: panels of width nr (0: no packing). */
typedef struct dense_graph {
  const dense_decl *d;
  int64_t nr;
  const ir_expr *k;
  te_tensor *bp, *acc, *out;
} dense_graph;

/* b's element (row j of out's columns, column kk of the reduction) in its own layout */
static const ir_expr *b_at(const dense_decl *d, const ir_expr *j, const ir_expr *kk) {
  return d->p.b_transposed ? TE_AT(d->b, j, kk) : TE_AT(d->b, kk, j);
}

static const ir_expr *bp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dense_graph *g = u;
  const ir_expr *j = ir_add(ir_mul(i[0], ir_int(ctx, g->nr)), i[2]);
  const ir_expr *v = b_at(g->d, j, i[1]);
  if (g->d->p.n % g->nr == 0) return v;
  /* the select's untaken arm is never loaded: no read past b's last column */
  return ir_select(ir_lt(j, ir_int(ctx, g->d->p.n)), v, ir_float(ctx, 0.0));
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dense_graph *g = u;
  const ir_expr *bv;
  if (g->bp) {
    const ir_expr *nr = ir_int(ctx, g->nr);
    bv = TE_AT(g->bp, ir_floordiv(i[1], nr), g->k, ir_floormod(i[1], nr));
  } else {
    bv = b_at(g->d, i[1], g->k);
  }
  topi_fp fp = g->d->p.fp;
  return te_sum(ir_mul(topi_fp_widen(fp, TE_AT(g->d->a, i[0], g->k)), topi_fp_widen(fp, bv)), 1,
                &g->k, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dense_graph *g = u;
  const dense_decl *d = g->d;
  return topi_fp_epilogue(ctx, d->p.fp, &d->p.epi, TE_AT(g->acc, i[0], i[1]),
                          d->bias ? TE_AT(d->bias, i[1]) : NULL,
                          d->residual ? TE_AT(d->residual, i[0], i[1]) : NULL);
}

static dense_graph *dense_build_graph(tec_ctx *ctx, const dense_decl *d, int64_t nr) {
  dense_graph *g = tec_ctx_alloc(ctx, sizeof *g);
  if (!g) return NULL;
  const topi_dense *p = &d->p;
  *g = (dense_graph){.d = d, .nr = nr, .k = te_reduce_axis_n(ctx, "k", p->k)};
  static const char *const pn[] = {"jo", "k", "ji"}, *const on[] = {"i", "j"};
  if (nr > 0 &&
      !(g->bp = te_compute(ctx, &(te_compute_decl){.name = "b_p", .ndim = 3,
                                                  .shape = TE_SHAPE(ctx, topi_ceil_div(p->n, nr),
                                                                    p->k, nr),
                                                  .body = bp_body, .user = g, .tag = "pack_b",
                                                  .axis_names = pn})))
    return NULL;
  const ir_expr *const *os = TE_SHAPE(ctx, p->m, p->n);
  g->acc = te_compute(ctx, &(te_compute_decl){.name = "acc", .ndim = 2, .shape = os,
                                              .body = acc_body, .user = g, .tag = "dense",
                                              .axis_names = on});
  if (!g->acc) return NULL;
  g->out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 2, .shape = os,
                                              .body = out_body, .user = g, .tag = "epilogue",
                                              .axis_names = on});
  return g->out ? g : NULL;
}

static int dense_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_dense *p = problem;
  const char *w = NULL;
  if (!p)
    w = "the problem is NULL";
  else if (p->m < 1 || p->n < 1 || p->k < 1)
    w = tec_ctx_printf(ctx, "sizes must be >= 1 (got m=%lld n=%lld k=%lld)", (long long)p->m,
                       (long long)p->n, (long long)p->k);
  else if ((p->b_transposed != 0 && p->b_transposed != 1) || (p->const_b != 0 && p->const_b != 1))
    w = tec_ctx_printf(ctx, "b_transposed = %d and const_b = %d must be 0 or 1", p->b_transposed,
                       p->const_b);
  else if ((p->epi.bias != 0 && p->epi.bias != 1) ||
           (p->epi.residual != 0 && p->epi.residual != 1))
    w = tec_ctx_printf(ctx, "epi.bias = %d and epi.residual = %d must be 0 or 1", p->epi.bias,
                       p->epi.residual);
  else if (p->epi.act < TOPI_ACT_NONE || p->epi.act > TOPI_ACT_RELU6)
    w = tec_ctx_printf(ctx, "activation %d is not one of TOPI_ACT_NONE, _RELU, _RELU6",
                       (int)p->epi.act);
  else
    w = topi_fp_why(ctx, "dense", p->fp);
  if (why) *why = w;
  return w == NULL;
}

static int dense_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_dense *p = p_arg;
  if (!ctx) return -1;
  if (!out) return tec_ctx_set_error(ctx, "dense: problem and decl are required");
  const char *why;
  if (!dense_applies(ctx, p, &why)) return tec_ctx_set_error(ctx, "dense: %s", why);
  dense_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  te_tensor **args = tec_ctx_alloc(ctx, 5 * sizeof *args);
  if (!d || !args) return -1;
  *d = (dense_decl){.p = *p};
  tec_dtype t = topi_fp_storage(p->fp); /* float32, or float16 (topi_fp) */
  d->a = te_placeholder(ctx, "a", t, 2, TE_SHAPE(ctx, p->m, p->k));
  const ir_expr *const *bs = p->b_transposed ? TE_SHAPE(ctx, p->n, p->k) : TE_SHAPE(ctx, p->k, p->n);
  d->b = p->const_b ? te_const_placeholder(ctx, "b", t, 2, bs) : te_placeholder(ctx, "b", t, 2, bs);
  if (p->epi.bias) d->bias = te_const_placeholder(ctx, "bias", t, 1, TE_SHAPE(ctx, p->n));
  if (p->epi.residual)
    d->residual = te_placeholder(ctx, "residual", t, 2, TE_SHAPE(ctx, p->m, p->n));
  if (!d->a || !d->b || (p->epi.bias && !d->bias) || (p->epi.residual && !d->residual)) return -1;
  dense_graph *g = dense_build_graph(ctx, d, 0); /* the plain definition */
  if (!g) return -1;
  int n = 0;
  args[n++] = d->a;
  args[n++] = d->b;
  if (d->bias) args[n++] = d->bias;
  if (d->residual) args[n++] = d->residual;
  args[n++] = g->out;
  *out = (topi_decl){&topi_tmpl_dense, ctx, &d->p, n, args, g->out, d};
  return 0;
}

/* Knob values of `pack` */
enum { PACK_ROOT, PACK_PANEL, PACK_NONE };

/* The B panel's copy: rows of b read contiguously. Not transposed: along a panel row, one
 * vector (lanes floats) per copy; transposed (b[j, k]): k innermost, so each of b's rows is read
 * in order and the panel written with stride nr (a scalar copy: the shapes
 * topi_gemm_pack_transposed_block does not take). */
int topi_gemm_pack_schedule(sch_stage *sp, int b_transposed, int64_t nr, int lanes) {
  sch_iter *pk = sch_leaf_named(sp, "k"), *pj = sch_leaf_named(sp, "ji"), *po;
  if (b_transposed) return sch_reorder(sp, 2, (sch_iter *[]){pj, pk});
  if (nr % lanes == 0 && nr > lanes && sch_split(sp, pj, lanes, &po, &pj)) return -1;
  return sch_vectorize(sp, pj);
}

/* b transposed, as lanes x lanes blocks transposed in registers: k and ji split by the lanes,
 * (k.outer, ji.outer, k.inner, ji.inner): ji.inner vectorized (one vector of the panel per
 * k.inner step, read at stride k) and k.inner under pragma transpose_block (the lanes rows of
 * b loaded whole and transposed by zip shuffles: lower/transpose_block.c). Needs lanes a
 * power of two dividing k and nr, and no zero fill (n a multiple of nr): 1 (nothing done)
 * otherwise, for the caller's own order. */
int topi_gemm_pack_transposed_block(sch_stage *sp, int64_t k, int64_t n, int64_t nr, int lanes) {
  if (lanes < 2 || (lanes & (lanes - 1)) || lanes > 64 || k % lanes || nr % lanes || n % nr)
    return 1;
  sch_iter *pk = sch_leaf_named(sp, "k"), *pj = sch_leaf_named(sp, "ji"), *ko = NULL, *ki = pk,
           *jo = NULL, *jv = pj;
  if (k > lanes && sch_split(sp, pk, lanes, &ko, &ki)) return -1;
  if (nr > lanes && sch_split(sp, pj, lanes, &jo, &jv)) return -1;
  sch_iter *order[4];
  int no = 0;
  if (ko) order[no++] = ko;
  if (jo) order[no++] = jo;
  order[no++] = ki, order[no++] = jv;
  if (sch_reorder(sp, no, order) || sch_vectorize(sp, jv) ||
      sch_pragma(sp, ki, "transpose_block", NULL))
    return -1;
  return 0;
}

/* The register tiling of a (batched) GEMM: see internal.h. */
int topi_gemm_tile_schedule(tec_ctx *ctx, const topi_dense_config *cfg, sch_stage *so,
                            int nbatch, sch_iter *const *batch, sch_iter *i, sch_iter *j,
                            sch_stage *sa, sch_iter **panel_loop, sch_iter **row_loop) {
  /* out: [batch,] jo, io, [js,] ii, ji; the accumulator tile at the innermost tile loop */
  sch_iter *io, *jo, *ii, *ji, *js, *at;
  if (sch_tile(so, i, j, cfg->mr, cfg->nr, &io, &jo, &ii, &ji)) return -1;
  if (cfg->jb > 1) {
    if (sch_split(so, jo, cfg->jb, &jo, &js) ||
        sch_reorder(so, 5, (sch_iter *[]){jo, io, js, ii, ji}))
      return -1;
    at = js;
  } else {
    if (sch_reorder(so, 4, (sch_iter *[]){jo, io, ii, ji})) return -1;
    at = io;
  }
  if (sch_vectorize(so, ji)) return -1;
  if (row_loop) *row_loop = io;
  /* the batch loops (outermost) fused with the panel loop: the parallel loop */
  sch_iter *par = jo;
  if (nbatch > 0) {
    par = batch[0];
    for (int b = 1; b < nbatch; b++)
      if (sch_fuse(so, par, batch[b], &par)) return -1;
    if (sch_fuse(so, par, jo, &par)) return -1;
  }
  if (panel_loop) *panel_loop = par; /* jo, or (batch, jo) fused: one batch entry's panels */
  if (cfg->parallel && sch_parallel(so, par)) return -1;
  if (cfg->parallel == 2 && sch_pragma(so, par, "parallel_dynamic", ir_int(ctx, 0))) return -1;

  /* acc: k outermost (split by ku, the inner part unrolled), mr rows unrolled, nr columns one
   * vector (cut into native registers by codegen) */
  if (sch_compute_at(sa, so, at)) return -1;
  int na = sch_stage_tensor(sa)->ndim;
  sch_iter *li = sch_axis(sa, na - 2), *lj = sch_axis(sa, na - 1);
  sch_iter *lk = sch_reduce_axis(sa, 0), *lki;
  if (cfg->ku > 1) {
    if (sch_split(sa, lk, cfg->ku, &lk, &lki) ||
        sch_reorder(sa, 4, (sch_iter *[]){lk, lki, li, lj}) || sch_unroll(sa, lki))
      return -1;
  } else if (sch_reorder(sa, 3, (sch_iter *[]){lk, li, lj})) {
    return -1;
  }
  if (sch_unroll(sa, li) || sch_vectorize(sa, lj)) return -1;
  return 0;
}

static int dense_schedule(const topi_decl *dc, const void *cfg_arg, const tec_target *target,
                          topi_op *op) {
  const topi_dense_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  tec_ctx *ctx = dc->ctx;
  const dense_decl *d = dc->priv;
  int lanes = topi_fp_lanes(ctx, target, d ? d->p.fp : TOPI_FP32);
  if (lanes < 0 || topi_config_check(&topi_tmpl_dense, dc, cfg, target) ||
      topi_fp_target_check(ctx, "dense", d->p.fp, target))
    return -1;
  dense_graph *g = dense_build_graph(ctx, d, cfg->pack == PACK_NONE ? 0 : cfg->nr);
  te_tensor **args = tec_ctx_alloc(ctx, sizeof *args * (size_t)dc->nargs);
  if (!g || !args) return -1;
  memcpy(args, dc->args, sizeof *args * (size_t)dc->nargs);
  args[dc->nargs - 1] = g->out;
  sch_schedule *s = sch_create(ctx, 1, &g->out);
  if (!s) return -1;
  *op = (topi_op){dc, s, dc->nargs, args, g->out};

  sch_stage *so = sch_stage_of(s, g->out), *sa = sch_stage_of(s, g->acc);
  sch_iter *jo;
  if (!so || !sa ||
      topi_gemm_tile_schedule(ctx, cfg, so, 0, NULL, sch_axis(so, 0), sch_axis(so, 1), sa, &jo,
                              NULL))
    return -1;

  if (!g->bp) return 0;
  sch_stage *sp = sch_stage_of(s, g->bp);
  if (!sp) return -1;
  if (cfg->pack == PACK_PANEL && sch_compute_at(sp, so, jo)) return -1;
  if (cfg->pack == PACK_ROOT && cfg->parallel && sch_parallel(sp, sch_leaf_named(sp, "jo")))
    return -1;
  if (d->p.b_transposed) {
    int rc = topi_gemm_pack_transposed_block(sp, d->p.k, d->p.n, cfg->nr, lanes);
    if (rc <= 0) return rc;
  }
  return topi_gemm_pack_schedule(sp, d->p.b_transposed, cfg->nr, lanes);
}

/* ---- the space ---- */

/* jb's default: as many panels per pass over a as fit the budget (k*nr floats each), leaving
 * at least 4 steps of the parallel loop (the threads need work to share) and dividing the
 * panels (no partial group). */
static int64_t dense_default_jb(const topi_dense *p, int64_t nr, int64_t budget, int64_t max) {
  int64_t panels = topi_ceil_div(p->n, nr), jb = budget / (p->k * nr * 4);
  if (jb > max) jb = max;
  while (jb > 1 && (panels % jb || panels / jb < 4)) jb--;
  return jb < 1 ? 1 : jb;
}

/* The space's rule (AutoTVM's multi_filter, as conv2d_nchwc's): a register tile whose
 * accumulators (mr x nr / lanes vectors), one row of b's vectors and a's broadcast exceed the
 * target's vector registers spills in the innermost loop (AVX-512's 12 x 4 vectors: 48
 * accumulators in 32 zmm) and is not in the space; a one-vector-wide single-row tile always
 * is. Scalar targets (no vectors) have no rule. */
typedef struct dense_rule {
  int64_t lanes, regs;
} dense_rule;

static int dense_rule_ok(const void *data, const void *config) {
  const dense_rule *r = data;
  const topi_dense_config *c = config;
  int64_t vecs = topi_ceil_div(c->nr, r->lanes);
  return c->mr * vecs + vecs + 1 <= r->regs || (c->mr == 1 && vecs == 1);
}

static int dense_space(tec_ctx *ctx, const void *p_arg, const tec_target *target, tune_space *sp) {
  const topi_dense *p = p_arg;
  if (!ctx) return -1;
  const char *why;
  if (!dense_applies(ctx, p, &why)) return tec_ctx_set_error(ctx, "dense: %s", why);
  const tec_target *tg = topi_target_of(ctx, target);
  if (!tg) return -1;
  int lanes = topi_fp_lanes(ctx, tg, p->fp); /* of the accumulators */
  const tec_target_gemm *t = &tg->gemm; /* the default tile: target/target_table.c */
  int64_t mr[16], nr[4], ku[4], jb[4], par[3] = {0, 1, 2}, pack[3];
  int nmr = 0, nnr = 0, nku = 0, njb = 0, npack = 0;
  for (int64_t v = 1; v <= t->mr_max && (v <= p->m || v == 1); v++) mr[nmr++] = v;
  /* nr: 1 to 4 vectors, none of them all past n */
  for (int64_t v = 1; v <= 4 && (v == 1 || (v - 1) * lanes < p->n); v++) nr[nnr++] = v * lanes;
  for (int64_t v = 1; v <= 8 && v <= p->k; v *= 2) ku[nku++] = v;
  for (int64_t v = 1; v <= 4 && (v == 1 || v <= topi_ceil_div(p->n, lanes)); v++) jb[njb++] = v;
  pack[npack++] = PACK_ROOT;
  if (!p->const_b) pack[npack++] = PACK_PANEL;
  if (!p->b_transposed) pack[npack++] = PACK_NONE;
  int64_t def_mr = t->mr < mr[nmr - 1] ? t->mr : mr[nmr - 1];
  int64_t def_nr = t->nr_vecs * lanes < nr[nnr - 1] ? t->nr_vecs * lanes : nr[nnr - 1];
  int64_t def_ku = 1;
  for (int i = 0; i < nku; i++)
    if (ku[i] <= t->ku) def_ku = ku[i];
  /* 16 registers and no memory operand (ARMv7 NEON): LLVM loads an unrolled k step's a and b
   * vectors ahead, and a tile whose accumulators take half the registers spills (rasp4b32, 64 x
   * 256 x 256, 4 x 8: k unrolled 8, 117 stack accesses per 64 vfma; 2, 4 per 16; not
   * unrolled, none, 2.4 instructions per vfma); a smaller one keeps the table's unrolling (the
   * fc's 1 x 8, 8 steps: none, 2.8 per vfma against 4.5 not unrolled). test_arm_tiles. */
  if (topi_target_tight_regs(ctx, tg) &&
      2 * def_mr * (def_nr / lanes) >= tg->vector_regs)
    def_ku = 1;
  int64_t def_jb = dense_default_jb(p, def_nr, t->l2_budget, jb[njb - 1]);
  if (tune_space_init(ctx, sp, topi_tmpl_dense.name, topi_tmpl_dense.config_size) ||
      tune_define_field(sp, "mr", "rows of the register tile (unrolled)",
                        offsetof(topi_dense_config, mr), nmr, mr, def_mr) < 0 ||
      tune_define_field(sp, "nr", "columns of the register tile and width of b's panels",
                        offsetof(topi_dense_config, nr), nnr, nr, def_nr) < 0 ||
      tune_define_field(sp, "ku", "the tile's k loop unrolled by ku",
                        offsetof(topi_dense_config, ku), nku, ku, def_ku) < 0 ||
      tune_define_field(sp, "jb", "panels per pass over a's rows",
                        offsetof(topi_dense_config, jb), njb, jb, def_jb) < 0 ||
      tune_define_field(sp, "parallel", "0 serial, 1 static ranges, 2 dynamic chunks",
                        offsetof(topi_dense_config, parallel), 3, par, 1) < 0 ||
      tune_define_field(sp, "pack", "b's panels: 0 root (or prepare), 1 per panel group, 2 none",
                        offsetof(topi_dense_config, pack), npack, pack,
                        p->const_b ? PACK_ROOT : PACK_PANEL) < 0)
    return -1;
  if (lanes < 4) return 0;
  dense_rule *r = tec_ctx_alloc(ctx, sizeof *r);
  if (!r) return -1;
  *r = (dense_rule){lanes, tg->vector_regs};
  const char *doc = tec_ctx_printf(ctx, "registers: mr*(nr/%d) + nr/%d + 1 <= %lld", lanes, lanes,
                                   (long long)r->regs);
  return doc ? tune_space_set_rule(sp, 0x3u, dense_rule_ok, r, doc) : -1;
}

/* internal.h. dense's rule on another space's GEMM knobs (conv2d_im2col, conv2d_winograd). */
typedef struct dense_rule_on {
  tune_space dense;
  size_t mr_off, nr_off;
} dense_rule_on;

static int dense_rule_on_ok(const void *data, const void *config) {
  const dense_rule_on *r = data;
  topi_dense_config dc;
  memcpy(&dc, r->dense.default_config, sizeof dc);
  memcpy(&dc.mr, (const char *)config + r->mr_off, sizeof dc.mr);
  memcpy(&dc.nr, (const char *)config + r->nr_off, sizeof dc.nr);
  return tune_space_allows_config(&r->dense, &dc);
}

int topi_dense_rule_on(tec_ctx *ctx, tune_space *sp, unsigned knob_mask, const tune_space *dense,
                       size_t mr_off, size_t nr_off) {
  if (!dense->rule) return 0; /* scalar targets: no rule */
  dense_rule_on *r = tec_ctx_alloc(ctx, sizeof *r);
  if (!r) return -1;
  *r = (dense_rule_on){*dense, mr_off, nr_off};
  return tune_space_set_rule(sp, knob_mask, dense_rule_on_ok, r, dense->rule_doc);
}

const topi_template topi_tmpl_dense = {
    "dense", "dense / matmul: b packed into panels, an mr x nr register tile, epilogue fused",
    TOPI_PROBLEM_DENSE, sizeof(topi_dense_config), dense_applies, dense_declare, dense_schedule,
    dense_space, "topi_dense_config"};

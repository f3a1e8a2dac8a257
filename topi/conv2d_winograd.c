/* conv2d_winograd.c — conv2d 3x3, stride 1, undilated, NCHW[x]c (or NCHW) -> NCHW[y]c by
 * Winograd's minimal filtering F(m x m, 3 x 3), m = 2 or 4 (alpha = m + 2), as a three-function
 * template.
 *
 * The transform matrices come from topi_winograd_matrices (Toom-Cook on chosen interpolation
 * points, computed in double, not tables). With P = n * ceil(oh/m) * ceil(ow/m) output tiles,
 * C channels rounded up to the input block (Cp) and K to the output block (Kb):
 *
 *   wino_G[e, i]          = G[e][i]                                   (constant: prepare)
 *   kernel_w[e,f,ko,c,ki] = sum_{i,j} G[e,i] G[f,j] kernel[ko*nr+ki, c, i, j]  (prepare; zero
 *                           past C and K; in the GEMM's nr-wide panels, dense.c's b_p layout)
 *   wino_rows[a, f, p, c] = sum_b BT[f][b] d[c, tile p, a, b]  (d zero-padded; only the
 *                           nonzero coefficients, a select over f that folds to one sum once
 *                           f is unrolled); computed per tile and channel block inside
 *                           wino_in's loops (alpha x alpha x block floats)
 *   wino_in[e, f, p, c]   = sum_a BT[e][a] wino_rows[a, f, p, c]  (two stages, not one: the
 *                           one-stage form copies the alpha^2-term select tree into each of
 *                           the alpha^2 unrolled elements — 1.4 GB to lower F(4x4) — and
 *                           recomputes every row sum alpha times)
 *   wino_acc, wino_m      = the batched GEMM: for each (e, f): wino_in[e,f] (P x Cp) times
 *                           kernel_w[e,f] (Cp x Kb), dense.c's register tile
 *                           (topi_gemm_tile_schedule) with the (e, f) batch in its parallel loop
 *   out[n, K, y, x, v]    = epilogue(sum_{e,f} AT[y%m][e] AT[x%m][f] wino_m[e, f, p, K*yb+v])
 *                           (the output loops split by m and unrolled: the select over y%m and
 *                           x%m folds; the channel lanes vectorized)
 *
 * Every stage but the GEMM's accumulator and wino_rows is computed at root (whole tensors,
 * parallel). The arithmetic is not the direct convolution's: the error grows with m (see docs and
 * tests/test_conv_classic.c: the bound measured on ResNet-18's 3x3 layers).
 */
#include <math.h>
#include <string.h>
#include "topi/internal.h"

#define WHO "conv2d_winograd"
#define WMAX 6 /* alpha for m = 4 */

/* ---- the matrices ---- */

/* Interpolation points (the last one is infinity): m = 2 Lavin's 0, 1, -1; m = 4 the set
 * 0, 1, -1, 1/2, -2, which loses fewer digits in fp32 than Lavin's 0, +-1, +-2 (measured on
 * random data: tests/test_conv_classic.c). */
static const double points2[] = {0, 1, -1};
static const double points4[] = {0, 1, -1, 0.5, -2};

int topi_winograd_matrices(int m, int r, double *at, double *g, double *bt) {
  const double *pt = m == 2 ? points2 : m == 4 ? points4 : NULL;
  int n = m + r - 1; /* alpha */
  if (!pt || r != 3) return -1;
  int nf = n - 1; /* finite points */
  /* AT [m][n]: evaluate at the points (rows: powers), the point at infinity picks the top */
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < nf; j++) at[i * n + j] = pow(pt[j], i);
    at[i * n + nf] = i == m - 1;
  }
  /* G [n][r]: the filter evaluated at the points, divided by the Lagrange denominators */
  for (int j = 0; j < nf; j++) {
    double f = 1;
    for (int l = 0; l < nf; l++)
      if (l != j) f *= pt[j] - pt[l];
    for (int k = 0; k < r; k++) g[j * r + k] = pow(pt[j], k) / f;
  }
  for (int k = 0; k < r; k++) g[nf * r + k] = k == r - 1;
  /* BT [n][n]: row j the coefficients (x^0 first) of prod_{l != j} (x - a_l) over the finite
   * points; the last row those of prod_l (x - a_l) */
  for (int j = 0; j <= nf; j++) {
    double c[WMAX + 1] = {1};
    int deg = 0;
    for (int l = 0; l < nf; l++) {
      if (l == j) continue;
      for (int k = deg + 1; k >= 1; k--) c[k] = c[k - 1] - pt[l] * c[k];
      c[0] = -pt[l] * c[0];
      deg++;
    }
    for (int k = 0; k < n; k++) bt[j * n + k] = k <= deg ? c[k] : 0;
  }
  return 0;
}

/* ---- declaration: one graph per (m, nr) ---- */

typedef struct wg_decl {
  topi_conv2d p;
  topi_conv_args a;
  int64_t xb, yb, cp, kb; /* input / output blocks; channels rounded up to them */
} wg_decl;

typedef struct wg_graph {
  const wg_decl *d;
  int64_t m, alpha, nr, th, tw, np;
  double at[4 * WMAX], g[WMAX * 3], bt[WMAX * WMAX];
  const ir_expr *ri, *rj, *rc;
  te_tensor *gm, *u, *t, *v, *acc, *mm, *bp, *out;
} wg_graph;

/* idx == 0 ? e[0] : idx == 1 ? e[1] : ... e[n-1] */
const ir_expr *topi_wino_pick(tec_ctx *ctx, const ir_expr *idx, int n, const ir_expr *const *e) {
  const ir_expr *r = e[n - 1];
  for (int i = n - 2; i >= 0; i--) r = ir_select(ir_eq(idx, ir_int(ctx, i)), e[i], r);
  return r;
}

/* sum_k coef[k] * term[k] over the nonzero coefficients (+-1 without a multiply) */
const ir_expr *topi_wino_lincomb(tec_ctx *ctx, int n, const double *coef,
                                 const ir_expr *const *term) {
  const ir_expr *acc = NULL;
  for (int k = 0; k < n; k++) {
    float c = (float)coef[k];
    if (c == 0) continue;
    const ir_expr *t = term[k];
    if (!acc) acc = c == 1 ? t : ir_mul(ir_float(ctx, c), t);
    else if (c == 1) acc = ir_add(acc, t);
    else if (c == -1) acc = ir_sub(acc, t);
    else acc = ir_add(acc, ir_mul(ir_float(ctx, c), t));
  }
  return acc ? acc : ir_float(ctx, 0.0);
}

const ir_expr *topi_wino_output(tec_ctx *ctx, int n, int m, const double *at,
                                const ir_expr *const *mv, const ir_expr *y, const ir_expr *x) {
  /* cols[e] = sum_f AT[x%m][f] M[e][f], a select over x%m; then sum_e AT[y%m][e] cols[e] */
  const ir_expr *cols[WMAX], *by_y[4], *mi = ir_int(ctx, m);
  for (int e = 0; e < n; e++) {
    const ir_expr *by_x[4];
    for (int c = 0; c < m; c++) by_x[c] = topi_wino_lincomb(ctx, n, &at[c * n], &mv[e * n]);
    cols[e] = topi_wino_pick(ctx, ir_floormod(x, mi), m, by_x);
  }
  for (int r = 0; r < m; r++) by_y[r] = topi_wino_lincomb(ctx, n, &at[r * n], cols);
  return topi_wino_pick(ctx, ir_floormod(y, mi), m, by_y);
}

static const ir_expr *gm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  wg_graph *g = u;
  const ir_expr *rows[WMAX];
  for (int e = 0; e < g->alpha; e++) {
    const ir_expr *col[3];
    for (int k = 0; k < 3; k++) col[k] = ir_float(ctx, g->g[e * 3 + k]);
    rows[e] = topi_wino_pick(ctx, i[1], 3, col);
  }
  return topi_wino_pick(ctx, i[0], (int)g->alpha, rows);
}

static const ir_expr *u_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  wg_graph *g = u;
  const wg_decl *d = g->d;
  const ir_expr *k = ir_add(ir_mul(i[2], ir_int(ctx, g->nr)), i[4]), *c = i[3];
  const ir_expr *v = ir_mul(ir_mul(TE_AT(g->gm, i[0], g->ri), TE_AT(g->gm, i[1], g->rj)),
                            TE_AT(d->a.kernel, k, c, g->ri, g->rj));
  const ir_expr *cond = NULL;
  if (d->p.c_out % g->nr || d->kb % g->nr) cond = ir_lt(k, ir_int(ctx, d->p.c_out));
  if (d->cp > d->p.c_in) {
    const ir_expr *cc = ir_lt(c, ir_int(ctx, d->p.c_in));
    cond = cond ? ir_and(cond, cc) : cc;
  }
  if (cond) v = ir_select(cond, v, ir_float(ctx, 0.0));
  return te_sum(v, 2, (const ir_expr *[]){g->ri, g->rj}, NULL);
}

/* Element (c, y, x) of image n, zero outside the input (padding and the last tiles'
 * overhang); the compares that can fail only, marked likely. */
static const ir_expr *d_read(const wg_graph *g, const ir_expr *n, const ir_expr *c,
                             const ir_expr *y, const ir_expr *x) {
  const wg_decl *d = g->d;
  tec_ctx *ctx = d->a.data->ctx;
  const ir_expr *cond = NULL, *zero = ir_int(ctx, 0);
  int64_t span_h = g->th * g->m + 2, span_w = g->tw * g->m + 2; /* rows read from -pad */
#define WG_AND(e) cond = cond ? ir_and(cond, (e)) : (e)
  if (d->p.pad_h > 0) WG_AND(ir_ge(y, zero));
  if (span_h - d->p.pad_h > d->p.h) WG_AND(ir_lt(y, ir_int(ctx, d->p.h)));
  if (d->p.pad_w > 0) WG_AND(ir_ge(x, zero));
  if (span_w - d->p.pad_w > d->p.w) WG_AND(ir_lt(x, ir_int(ctx, d->p.w)));
#undef WG_AND
  const ir_expr *v = topi_layout_read(d->a.data, d->p.in_layout, n, c, y, x);
  return cond ? ir_select(ir_likely(cond), v, ir_float(ctx, 0.0)) : v;
}

/* The tile's position: image, first input row and column (from -pad) of output tile p */
static void tile_origin(const wg_graph *g, const ir_expr *p, const ir_expr **img,
                        const ir_expr **y0, const ir_expr **x0) {
  tec_ctx *ctx = g->d->a.data->ctx;
  const ir_expr *tw = ir_int(ctx, g->tw), *th = ir_int(ctx, g->th), *m = ir_int(ctx, g->m);
  *img = ir_floordiv(p, ir_int(ctx, g->th * g->tw));
  *y0 = ir_sub(ir_mul(ir_floormod(ir_floordiv(p, tw), th), m), ir_int(ctx, g->d->p.pad_h));
  *x0 = ir_sub(ir_mul(ir_floormod(p, tw), m), ir_int(ctx, g->d->p.pad_w));
}

/* first half of the input transform, along the rows: wino_rows[a, f, p, c] =
 * sum_b BT[f][b] d[c, tile p, a, b] (a select over f that folds once f is unrolled) */
static const ir_expr *t_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  wg_graph *g = u;
  int n = (int)g->alpha;
  const ir_expr *img, *y0, *x0, *dv[WMAX], *by_f[WMAX] = {0};
  tile_origin(g, i[2], &img, &y0, &x0);
  const ir_expr *y = ir_add(y0, i[0]);
  for (int b = 0; b < n; b++) dv[b] = d_read(g, img, i[3], y, ir_add(x0, ir_int(ctx, b)));
  for (int f = 0; f < n; f++) by_f[f] = topi_wino_lincomb(ctx, n, &g->bt[f * n], dv);
  return topi_wino_pick(ctx, i[1], n, by_f);
}

/* second half, along the columns: wino_in[e, f, p, c] = sum_a BT[e][a] wino_rows[a, f, p, c] */
static const ir_expr *v_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  wg_graph *g = u;
  int n = (int)g->alpha;
  const ir_expr *rows[WMAX], *by_e[WMAX] = {0};
  for (int a = 0; a < n; a++) rows[a] = TE_AT(g->t, ir_int(ctx, a), i[1], i[2], i[3]);
  for (int e = 0; e < n; e++) by_e[e] = topi_wino_lincomb(ctx, n, &g->bt[e * n], rows);
  return topi_wino_pick(ctx, i[0], n, by_e);
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  wg_graph *g = u;
  const ir_expr *nr = ir_int(ctx, g->nr);
  const ir_expr *b = TE_AT(g->u, i[0], i[1], ir_floordiv(i[3], nr), g->rc, ir_floormod(i[3], nr));
  return te_sum(ir_mul(TE_AT(g->v, i[0], i[1], i[2], g->rc), b), 1, &g->rc, NULL);
}

static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  wg_graph *g = u;
  return TE_AT(g->acc, i[0], i[1], i[2], i[3]);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  wg_graph *g = u;
  const wg_decl *d = g->d;
  int n = (int)g->alpha, m = (int)g->m;
  const ir_expr *mi = ir_int(ctx, g->m);
  const ir_expr *p = ir_add(ir_mul(ir_add(ir_mul(i[0], ir_int(ctx, g->th)), ir_floordiv(i[2], mi)),
                                   ir_int(ctx, g->tw)),
                            ir_floordiv(i[3], mi));
  const ir_expr *k = ir_add(ir_mul(i[1], ir_int(ctx, d->yb)), i[4]), *mv[WMAX * WMAX];
  for (int e = 0; e < n; e++)
    for (int f = 0; f < n; f++) mv[e * n + f] = TE_AT(g->mm, ir_int(ctx, e), ir_int(ctx, f), p, k);
  const ir_expr *v = topi_wino_output(ctx, n, m, g->at, mv, i[2], i[3]);
  return topi_epilogue_expr(ctx, &d->p.epi, v, g->bp ? TE_AT(g->bp, i[1], i[4]) : NULL,
                            d->a.residual ? TE_AT(d->a.residual, i[0], i[1], i[2], i[3], i[4])
                                          : NULL);
}

static wg_graph *wg_build_graph(tec_ctx *ctx, const wg_decl *d, int64_t m, int64_t nr) {
  wg_graph *g = tec_ctx_alloc(ctx, sizeof *g);
  if (!g) return NULL;
  memset(g, 0, sizeof *g);
  g->d = d, g->m = m, g->alpha = m + 2, g->nr = nr;
  if (topi_winograd_matrices((int)m, 3, g->at, g->g, g->bt)) {
    tec_ctx_set_error(ctx, WHO ": tile size m = %lld is not supported (2 or 4)", (long long)m);
    return NULL;
  }
  g->th = topi_ceil_div(d->a.oh, m), g->tw = topi_ceil_div(d->a.ow, m);
  g->np = d->p.n * g->th * g->tw;
  g->ri = te_reduce_axis_n(ctx, "ki", 3);
  g->rj = te_reduce_axis_n(ctx, "kj", 3);
  g->rc = te_reduce_axis_n(ctx, "c", d->cp);
  int64_t al = g->alpha;
  static const char *const gn[] = {"e", "i"}, *const un[] = {"e", "f", "ko", "c", "ki"};
  static const char *const vn[] = {"e", "f", "p", "c"}, *const mn[] = {"e", "f", "p", "k"};
  static const char *const tn[] = {"a", "f", "p", "c"};
  static const char *const on[] = {"n", "oc", "oy", "ox", "ocv"};
  g->gm = te_compute(ctx, &(te_compute_decl){.name = "wino_G", .ndim = 2,
                                             .shape = TE_SHAPE(ctx, al, 3), .body = gm_body,
                                             .user = g, .tag = "winograd_matrix",
                                             .axis_names = gn});
  g->u = te_compute(ctx, &(te_compute_decl){.name = "kernel_w", .ndim = 5,
                                            .shape = TE_SHAPE(ctx, al, al,
                                                              topi_ceil_div(d->kb, nr), d->cp, nr),
                                            .body = u_body, .user = g,
                                            .tag = "winograd_kernel_transform", .axis_names = un});
  g->t = te_compute(ctx, &(te_compute_decl){.name = "wino_rows", .ndim = 4,
                                            .shape = TE_SHAPE(ctx, al, al, g->np, d->cp),
                                            .body = t_body, .user = g,
                                            .tag = "winograd_input_transform_rows",
                                            .axis_names = tn});
  if (!g->t) return NULL;
  g->v = te_compute(ctx, &(te_compute_decl){.name = "wino_in", .ndim = 4,
                                            .shape = TE_SHAPE(ctx, al, al, g->np, d->cp),
                                            .body = v_body, .user = g,
                                            .tag = "winograd_input_transform", .axis_names = vn});
  if (!g->gm || !g->u || !g->v) return NULL;
  const ir_expr *const *ms = TE_SHAPE(ctx, al, al, g->np, d->kb);
  g->acc = te_compute(ctx, &(te_compute_decl){.name = "wino_acc", .ndim = 4, .shape = ms,
                                              .body = acc_body, .user = g,
                                              .tag = "winograd_batched_gemm", .axis_names = mn});
  g->mm = te_compute(ctx, &(te_compute_decl){.name = "wino_m", .ndim = 4, .shape = ms,
                                             .body = mm_body, .user = g, .tag = "winograd_gemm_out",
                                             .axis_names = mn});
  if (!g->acc || !g->mm) return NULL;
  if (d->a.bias && !(g->bp = topi_pack_bias(ctx, d->a.bias, d->p.c_out, d->yb))) return NULL;
  g->out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 5,
                                              .shape = TE_SHAPE(ctx, d->p.n, d->kb / d->yb,
                                                                d->a.oh, d->a.ow, d->yb),
                                              .body = out_body, .user = g,
                                              .tag = "winograd_output_transform",
                                              .axis_names = on});
  return g->out ? g : NULL;
}

static int wg_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_conv2d *p = problem;
  const char *w = NULL;
  if (topi_conv2d_check(ctx, WHO, p)) w = tec_ctx_error(ctx);
  else if ((w = topi_conv2d_margin_refused(ctx, WHO, p))) {
  } else if (p->kh != 3 || p->kw != 3 || p->stride_h != 1 || p->stride_w != 1)
    w = tec_ctx_printf(ctx, "a %lldx%lld kernel with stride %lldx%lld is not supported (3x3, "
                            "stride 1 only)", (long long)p->kh, (long long)p->kw,
                       (long long)p->stride_h, (long long)p->stride_w);
  else if (topi_conv2d_dilation_h(p) != 1 || topi_conv2d_dilation_w(p) != 1)
    w = tec_ctx_printf(ctx, "dilation %lldx%lld is not supported (the F(m x m, 3 x 3) transforms "
                            "take 3 adjacent taps: dilation 1 only; conv2d_nchwc or "
                            "conv2d_spatial_pack compute dilated convolutions)",
                       (long long)topi_conv2d_dilation_h(p), (long long)topi_conv2d_dilation_w(p));
  else if (p->groups > 1)
    w = tec_ctx_printf(ctx, "groups = %lld is not supported (only groups = 1)",
                       (long long)p->groups);
  else
    w = topi_conv2d_blocked_out_why(ctx, p);
  if (why) *why = w;
  return w == NULL;
}

static int wg_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_conv2d *p = p_arg;
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, WHO ": problem and decl are required");
  if (topi_refuse(ctx, &topi_tmpl_conv2d_winograd, p)) return -1;
  wg_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  if (!d) return -1;
  memset(d, 0, sizeof *d);
  d->p = *p;
  if (topi_conv_declare_args(ctx, WHO, p, &d->a)) return -1;
  d->xb = p->in_layout.kind == TOPI_NCHWC ? p->in_layout.block : 1;
  d->yb = p->out_layout.block;
  d->cp = topi_ceil_div(p->c_in, d->xb) * d->xb;
  d->kb = topi_ceil_div(p->c_out, d->yb) * d->yb;
  wg_graph *g = wg_build_graph(ctx, d, 4, d->yb); /* the declared definition: F(4x4, 3x3) */
  if (!g) return -1;
  return topi_conv_finish_decl(ctx, &topi_tmpl_conv2d_winograd, p, &d->a, g->out, d, out);
}

static int wg_schedule(const topi_decl *dc, const void *cfg_arg,
                       const tec_target *target, topi_op *op) {
  const topi_conv2d_winograd_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  tec_ctx *ctx = dc->ctx;
  if (topi_config_check(&topi_tmpl_conv2d_winograd, dc, cfg, target)) return -1;
  int lanes = topi_target_lanes(ctx, target);
  if (lanes < 0) return -1;
  const wg_decl *d = dc->priv;
  wg_graph *g = wg_build_graph(ctx, d, cfg->m, cfg->nr);
  te_tensor **args = tec_ctx_alloc(ctx, sizeof *args * (size_t)dc->nargs);
  if (!g || !args) return -1;
  memcpy(args, dc->args, sizeof *args * (size_t)dc->nargs);
  args[dc->nargs - 1] = g->out;
  sch_schedule *s = sch_create(ctx, 1, &g->out);
  if (!s) return -1;
  *op = (topi_op){dc, s, dc->nargs, args, g->out};
  sch_stage *sv = sch_stage_of(s, g->v), *sm = sch_stage_of(s, g->mm);
  sch_stage *sa = sch_stage_of(s, g->acc), *so = sch_stage_of(s, g->out);
  if (!sv || !sm || !sa || !so) return -1;

  /* input transform: tiles (parallel), channel blocks, then e, f unrolled over the lanes */
  sch_iter *e = sch_axis(sv, 0), *f = sch_axis(sv, 1), *p = sch_axis(sv, 2), *c = sch_axis(sv, 3);
  sch_iter *co = NULL, *ci = c, *py, *px;
  int64_t cv = d->xb > 1 ? d->xb : 1;
  /* tiles as (image and tile row, tile column): the padding compares are then on plain loop
   * variables, which loop partitioning peels off the interior */
  if (sch_split(sv, p, g->tw, &py, &px)) return -1;
  if (cv > 1 && cv < d->cp && sch_split(sv, c, cv, &co, &ci)) return -1;
  if (co ? sch_reorder(sv, 6, (sch_iter *[]){py, px, co, e, f, ci})
         : sch_reorder(sv, 5, (sch_iter *[]){py, px, e, f, ci}))
    return -1;
  if ((cfg->parallel && sch_parallel(sv, py)) || sch_unroll(sv, e) || sch_unroll(sv, f) ||
      (cv > 1 && sch_vectorize(sv, ci)))
    return -1;
  /* its first half per tile and channel block, inside that loop (alpha x alpha x cv floats,
   * in L1), a and f unrolled, the lanes vectorized */
  sch_stage *st = sch_stage_of(s, g->t);
  if (!st) return -1;
  sch_iter *ta = sch_axis(st, 0), *tf = sch_axis(st, 1), *tc = sch_axis(st, 3);
  if (sch_reorder(st, 4, (sch_iter *[]){sch_axis(st, 2), ta, tf, tc}) ||
      sch_compute_at(st, sv, co ? co : px) || sch_unroll(st, ta) || sch_unroll(st, tf) ||
      (cv > 1 && sch_vectorize(st, tc)))
    return -1;

  /* the batched GEMM: dense.c's tile, the (e, f) batch fused into the parallel panel loop */
  topi_dense_config dcfg = {cfg->mr, cfg->nr, cfg->ku, cfg->jb, cfg->parallel, 0};
  sch_iter *jo;
  if (topi_gemm_tile_schedule(ctx, &dcfg, sm, 2, (sch_iter *[]){sch_axis(sm, 0), sch_axis(sm, 1)},
                              sch_axis(sm, 2), sch_axis(sm, 3), sa, &jo, NULL))
    return -1;

  /* output transform: (n, channel blocks, tile rows) parallel, tile columns, the m x m tile
   * unrolled, the block's lanes vectorized */
  sch_iter *yo, *yi, *xo, *xi, *par;
  if (sch_split(so, sch_axis(so, 2), g->m, &yo, &yi) ||
      sch_split(so, sch_axis(so, 3), g->m, &xo, &xi) ||
      sch_reorder(so, 7, (sch_iter *[]){sch_axis(so, 0), sch_axis(so, 1), yo, xo, yi, xi,
                                        sch_axis(so, 4)}) ||
      sch_fuse(so, sch_axis(so, 0), sch_axis(so, 1), &par) || sch_fuse(so, par, yo, &par) ||
      (cfg->parallel && sch_parallel(so, par)) || sch_unroll(so, yi) || sch_unroll(so, xi) ||
      sch_vectorize(so, sch_axis(so, 4)))
    return -1;
  return 0;
}

/* ---- the space ---- */

static int wg_space(tec_ctx *ctx, const void *p_arg, const tec_target *target,
                    tune_space *sp) {
  const topi_conv2d *p = p_arg;
  int lanes = topi_target_lanes(ctx, target);
  if (lanes < 0 || topi_refuse(ctx, &topi_tmpl_conv2d_winograd, p)) return -1;
  int64_t oh, ow;
  if (topi_conv2d_out_hw(ctx, p, &oh, &ow)) return -1;
  int64_t xb = p->in_layout.kind == TOPI_NCHWC ? p->in_layout.block : 1, yb = p->out_layout.block;
  int64_t cp = topi_ceil_div(p->c_in, xb) * xb, kb = topi_ceil_div(p->c_out, yb) * yb;
  int64_t def_m = 4;
  int64_t np4 = p->n * topi_ceil_div(oh, 4) * topi_ceil_div(ow, 4);
  int64_t npd = p->n * topi_ceil_div(oh, def_m) * topi_ceil_div(ow, def_m);
  /* the GEMM knobs: dense's defaults for one (e, f) of the default m */
  topi_dense gp = {.m = npd, .n = kb, .k = cp, .const_b = 1};
  tune_space ds;
  if (topi_tmpl_dense.space(ctx, &gp, target, &ds)) return -1;
  const topi_dense_config *dd = ds.default_config;
  int64_t ms[] = {2, 4}, mr[12], nr[4], ku[4], jb[4], b01[] = {0, 1};
  int nmr = 0, nnr = 0, nku = 0, njb = 0;
  for (int64_t v = 1; v <= 12 && (v <= np4 || v == 1); v++) mr[nmr++] = v;
  for (int64_t v = 1; v <= 4 && (v == 1 || (v - 1) * lanes < kb); v++) nr[nnr++] = v * lanes;
  for (int64_t v = 1; v <= 8 && v <= cp; v *= 2) ku[nku++] = v;
  for (int64_t v = 1; v <= 4 && (v == 1 || v <= topi_ceil_div(kb, lanes)); v++) jb[njb++] = v;
  int64_t def_mr = dd->mr < mr[nmr - 1] ? dd->mr : mr[nmr - 1];
  int64_t def_nr = dd->nr < nr[nnr - 1] ? dd->nr : nr[nnr - 1];
  int64_t def_jb = dd->jb < jb[njb - 1] ? dd->jb : jb[njb - 1];
  if (tune_space_init(ctx, sp, topi_tmpl_conv2d_winograd.name,
                      topi_tmpl_conv2d_winograd.config_size) ||
      tune_define_field(sp, "m", "output tile m x m: F(2x2,3x3) or F(4x4,3x3)",
                        offsetof(topi_conv2d_winograd_config, m), 2, ms, def_m) < 0 ||
      tune_define_field(sp, "mr", "GEMM register tile rows (output tiles)",
                        offsetof(topi_conv2d_winograd_config, mr), nmr, mr, def_mr) < 0 ||
      tune_define_field(sp, "nr", "GEMM register tile columns (output channels)",
                        offsetof(topi_conv2d_winograd_config, nr), nnr, nr, def_nr) < 0 ||
      tune_define_field(sp, "ku", "the GEMM's channel loop unrolled by ku",
                        offsetof(topi_conv2d_winograd_config, ku), nku, ku, dd->ku) < 0 ||
      tune_define_field(sp, "jb", "GEMM panels per pass over the transformed input",
                        offsetof(topi_conv2d_winograd_config, jb), njb, jb, def_jb) < 0 ||
      tune_define_field(sp, "parallel", "parallel transforms and GEMM",
                        offsetof(topi_conv2d_winograd_config, parallel), 2, b01, 1) < 0)
    return -1;
  /* dense's register rule on mr, nr: a 12 x 4-vector tile (48 accumulators in 32 zmm) spilled
   * and took 3.6 CPU s and 204 MB to build on a 96x56x56 layer (issue #38) */
  return topi_dense_rule_on(ctx, sp, 0x6u, &ds, offsetof(topi_conv2d_winograd_config, mr),
                            offsetof(topi_conv2d_winograd_config, nr));
}

const topi_template topi_tmpl_conv2d_winograd = {
    WHO, "conv2d 3x3 stride 1 (no dilation) NCHW[x]c/NCHW -> NCHW[y]c, Winograd F(2x2,3x3) / "
    "F(4x4,3x3)",
    TOPI_PROBLEM_CONV2D, sizeof(topi_conv2d_winograd_config), wg_applies, wg_declare,
    wg_schedule, wg_space, "topi_conv2d_winograd_config"};

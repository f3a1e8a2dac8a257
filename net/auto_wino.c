/* auto_wino.c — a 3x3 stride-1 convolution of an auto-scheduled network declared as Winograd's
 * F(m x m, 3 x 3) (m = 4, or 2 where 4 does not divide the output; alpha = m + 2): plain te
 * compute, as TVM's conv2d_winograd compute under its auto-scheduler, whose stages the
 * auto-scheduler tiles, unrolls and vectorizes like any program. Same arguments as the direct
 * declaration (auto_decl.c: NCHW<x>c data with its margin, OIHW kernel and bias constant, the
 * output and residual windows of their buffers). With P = n * (oh/m) * (ow/m) tiles p:
 *
 *   kernel_w[e][f][O][I][u][v] = sum_{i,j} G[e][i] G[f][j] kernel[O*B+v][I*X+u][i][j]  (constant:
 *                                prepare; zero past the channels)
 *   wino_rows[a][f][p][I][u]   = sum_b BT[f][b] data(tile p: row a, column b; channel I*X+u)
 *   wino_in[e][f][p][I][u]     = sum_a BT[e][a] wino_rows[a][f][p][I][u]
 *   wino_acc[e][f][O][p][v]    = sum_{I,u} wino_in[e][f][p][I][u] kernel_w[e][f][O][I][u][v]
 *   out[n][O][y][x][v]         = act(sum_{e,f} AT[y%m][e] AT[x%m][f] wino_acc[e][f][O][p][v]
 *                                    + bias (+ residual))
 *
 * The matrices (topi_winograd_matrices) enter as selects over the transforms' axes (e, f, y%m,
 * x%m): constants once those axes are unrolled, which the auto-scheduler does for any axis
 * that selects between expressions (rule_fold.c). The rule for the algorithm
 * (net_auto_winograd_m): 3x3, stride 1, undilated, groups 1, an NCHW<x>c input whose margin
 * covers the padding (no compares in the input transform) and m dividing the output's rows and
 * columns (no partial tiles), at least 16 input and output channels (a GEMM worth batching);
 * else the direct declaration. The arithmetic is not the direct convolution's: its rounding
 * error grows with m (docs/autosched.md). */
#include "net/internal.h"
#include "topi/internal.h"

#define WMAX 6

typedef struct ad_wino {
  topi_conv2d p;
  topi_conv_args a;
  int64_t m, al, xb, yb, nib, nob, th, tw, np;
  double at[4 * WMAX], g[WMAX * 3], bt[WMAX * WMAX];
  te_tensor *u, *rows, *v, *acc, *bp;
  const ir_expr *ri, *rj, *ric, *ru;
} ad_wino;

int64_t net_auto_winograd_m(const topi_conv2d *p) {
  int64_t oh, ow;
  if (p->kh != 3 || p->kw != 3 || p->stride_h != 1 || p->stride_w != 1 || p->groups != 1 ||
      topi_conv2d_dilation_h(p) != 1 || topi_conv2d_dilation_w(p) != 1 ||
      p->in_layout.kind != TOPI_NCHWC || p->out_layout.kind != TOPI_NCHWC || p->c_in < 16 ||
      p->c_out < 16)
    return 0;
  oh = p->h + 2 * p->pad_h - 2, ow = p->w + 2 * p->pad_w - 2;
  /* the tiles read rows -pad .. oh + 1 - pad: inside the margin when oh = h (pad 1) */
  if (oh != p->h || ow != p->w) return 0;
  return oh % 4 == 0 && ow % 4 == 0 ? 4 : oh % 2 == 0 && ow % 2 == 0 ? 2 : 0;
}

/* G[e][i] as a select over e and i */
static const ir_expr *g_at(tec_ctx *ctx, const ad_wino *d, const ir_expr *e, const ir_expr *i) {
  const ir_expr *rows[WMAX];
  for (int r = 0; r < d->al; r++) {
    const ir_expr *col[3];
    for (int k = 0; k < 3; k++) col[k] = ir_float(ctx, d->g[r * 3 + k]);
    rows[r] = topi_wino_pick(ctx, i, 3, col);
  }
  return topi_wino_pick(ctx, e, (int)d->al, rows);
}

static const ir_expr *u_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  const ad_wino *d = user; /* [e][f][O][I][u][v] */
  const ir_expr *k = topi_kernel_at(
      ctx, d->a.kernel, ir_add(ir_mul(i[2], ir_int(ctx, d->yb)), i[5]), d->p.c_out,
      d->p.c_out % d->yb != 0, ir_add(ir_mul(i[3], ir_int(ctx, d->xb)), i[4]), d->p.c_in,
      d->p.c_in % d->xb != 0, d->ri, d->rj);
  const ir_expr *v = ir_mul(ir_mul(g_at(ctx, d, i[0], d->ri), g_at(ctx, d, i[1], d->rj)), k);
  return te_sum(v, 2, (const ir_expr *[]){d->ri, d->rj}, NULL);
}

static const ir_expr *rows_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  const ad_wino *d = user; /* [a][f][p][I][u] */
  int n = (int)d->al;
  const ir_expr *tw = ir_int(ctx, d->tw), *th = ir_int(ctx, d->th), *m = ir_int(ctx, d->m);
  const ir_expr *img = ir_floordiv(i[2], ir_int(ctx, d->th * d->tw));
  const ir_expr *y = ir_add(ir_sub(ir_mul(ir_floormod(ir_floordiv(i[2], tw), th), m),
                                   ir_int(ctx, d->p.pad_h)),
                            i[0]);
  const ir_expr *x0 = ir_sub(ir_mul(ir_floormod(i[2], tw), m), ir_int(ctx, d->p.pad_w));
  const ir_expr *c = ir_add(ir_mul(i[3], ir_int(ctx, d->xb)), i[4]), *dv[WMAX], *by_f[WMAX];
  for (int b = 0; b < n; b++)
    dv[b] = topi_pad_read(d->a.data, d->p.in_layout, d->p.h, d->p.w, img, c, y,
                          ir_add(x0, ir_int(ctx, b)), d->p.pad_h, d->p.pad_w);
  for (int f = 0; f < n; f++) by_f[f] = topi_wino_lincomb(ctx, n, &d->bt[f * n], dv);
  return topi_wino_pick(ctx, i[1], n, by_f);
}

static const ir_expr *v_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  const ad_wino *d = user; /* [e][f][p][I][u] */
  int n = (int)d->al;
  const ir_expr *r[WMAX], *by_e[WMAX];
  for (int a = 0; a < n; a++) r[a] = TE_AT(d->rows, ir_int(ctx, a), i[1], i[2], i[3], i[4]);
  for (int e = 0; e < n; e++) by_e[e] = topi_wino_lincomb(ctx, n, &d->bt[e * n], r);
  return topi_wino_pick(ctx, i[0], n, by_e);
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  (void)ctx;
  const ad_wino *d = user; /* [e][f][O][p][v] */
  const ir_expr *w = TE_AT(d->u, i[0], i[1], i[2], d->ric, d->ru, i[4]);
  return te_sum(ir_mul(TE_AT(d->v, i[0], i[1], i[3], d->ric, d->ru), w), 2,
                (const ir_expr *[]){d->ric, d->ru}, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  const ad_wino *d = user; /* [n][O][y][x][v] */
  int n = (int)d->al, m = (int)d->m;
  const ir_expr *mi = ir_int(ctx, d->m);
  const ir_expr *p = ir_add(ir_mul(ir_add(ir_mul(i[0], ir_int(ctx, d->th)), ir_floordiv(i[2], mi)),
                                   ir_int(ctx, d->tw)),
                            ir_floordiv(i[3], mi));
  const ir_expr *mv[WMAX * WMAX];
  for (int e = 0; e < n; e++)
    for (int f = 0; f < n; f++)
      mv[e * n + f] = TE_AT(d->acc, ir_int(ctx, e), ir_int(ctx, f), i[1], p, i[4]);
  const ir_expr *v = topi_wino_output(ctx, n, m, d->at, mv, i[2], i[3]);
  return topi_epilogue_expr(ctx, &d->p.epi, v, d->bp ? TE_AT(d->bp, i[1], i[4]) : NULL,
                            d->a.residual ? TE_AT(d->a.residual, i[0], i[1], i[2], i[3], i[4])
                                          : NULL);
}

int net_auto_declare_winograd(tec_ctx *ctx, const topi_template *t, const topi_conv2d *p,
                              topi_decl *out) {
  int64_t m = net_auto_winograd_m(p);
  if (!m)
    return tec_ctx_set_error(ctx, "net autosched winograd: a 3x3 stride-1 undilated convolution "
                                  "of groups 1, NCHW<x>c in and out, >= 16 channels each, the "
                                  "input's margin covering the padding and an output of even "
                                  "rows and columns (this layer is not: declare it direct)");
  ad_wino *d = tec_ctx_alloc(ctx, sizeof *d);
  if (!d) return -1;
  *d = (ad_wino){.p = *p, .m = m, .al = m + 2};
  if (topi_conv_declare_args(ctx, "net autosched winograd", p, &d->a) ||
      topi_winograd_matrices((int)m, 3, d->at, d->g, d->bt))
    return -1;
  d->xb = p->in_layout.block, d->yb = p->out_layout.block;
  d->nib = topi_ceil_div(p->c_in, d->xb), d->nob = topi_ceil_div(p->c_out, d->yb);
  d->th = d->a.oh / m, d->tw = d->a.ow / m, d->np = p->n * d->th * d->tw;
  d->ri = te_reduce_axis_n(ctx, "ki", 3), d->rj = te_reduce_axis_n(ctx, "kj", 3);
  d->ric = te_reduce_axis_n(ctx, "ic", d->nib), d->ru = te_reduce_axis_n(ctx, "icv", d->xb);
  int64_t al = d->al;
  static const char *const un[] = {"e", "f", "O", "I", "u", "v"}, *const rn[] = {"a", "f", "p", "I", "u"};
  static const char *const vn[] = {"e", "f", "p", "I", "u"}, *const an[] = {"e", "f", "O", "p", "v"};
  static const char *const on[] = {"n", "oc", "oy", "ox", "ocv"};
  d->u = te_compute(ctx, &(te_compute_decl){.name = "kernel_w", .ndim = 6,
                                            .shape = TE_SHAPE(ctx, al, al, d->nob, d->nib, d->xb, d->yb),
                                            .body = u_body, .user = d, .axis_names = un});
  d->rows = te_compute(ctx, &(te_compute_decl){.name = "wino_rows", .ndim = 5,
                                               .shape = TE_SHAPE(ctx, al, al, d->np, d->nib, d->xb),
                                               .body = rows_body, .user = d, .axis_names = rn});
  if (!d->u || !d->rows) return -1;
  d->v = te_compute(ctx, &(te_compute_decl){.name = "wino_in", .ndim = 5,
                                            .shape = TE_SHAPE(ctx, al, al, d->np, d->nib, d->xb),
                                            .body = v_body, .user = d, .axis_names = vn});
  if (!d->v) return -1;
  d->acc = te_compute(ctx, &(te_compute_decl){.name = "wino_acc", .ndim = 5,
                                              .shape = TE_SHAPE(ctx, al, al, d->nob, d->np, d->yb),
                                              .body = acc_body, .user = d, .axis_names = an});
  if (!d->acc) return -1;
  if (d->a.bias && !(d->bp = topi_pack_bias(ctx, d->a.bias, p->c_out, d->yb))) return -1;
  te_tensor *o = te_compute(ctx, &(te_compute_decl){
                                     .name = "out", .ndim = 5,
                                     .shape = TE_SHAPE(ctx, p->n, d->nob, d->a.oh, d->a.ow, d->yb),
                                     .body = out_body, .user = d, .axis_names = on});
  if (!o || topi_set_margin(ctx, "net autosched winograd", o, p->out_layout)) return -1;
  return topi_conv_finish_decl(ctx, t, p, &d->a, o, d, out);
}

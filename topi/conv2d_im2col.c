/* conv2d_im2col.c — conv2d NHWC (or NCHW / NCHW[x]c input) -> NHWC as im2col + GEMM, any
 * kernel, stride, padding, dilation and groups, as a three-function template.
 *
 * With R = kh * kw * cig (cig = c_in / groups, kog = c_out / groups) and the output positions
 * pos = y * ow + x as the GEMM's rows:
 *
 *   col[n, g, pos, r]        = data[n, g*cig + c, y*s + ky*d - pad, x*s + kx*d - pad]  (zero
 *                              outside), r = (ky*kw + kx)*cig + c
 *   kernel_p[g, ko, r, ki]   = kernel[g*kog + ko*nr + ki, c, ky, kx]  (zero past kog; the
 *                              GEMM's nr-wide panels, dense.c's b_p; prepare)
 *   acc[n, g, pos, k]        = sum_r col[n, g, pos, r] * kernel_p[g, k / nr, r, k % nr]
 *   out[n, y, x, g*kog + k]  = epilogue(acc[n, g, y*ow + x, k])
 *
 * out is scheduled as dense's GEMM (topi_gemm_tile_schedule) over (n, g) batches: (n, g, panel
 * groups) parallel, then row blocks of mr positions, the accumulator tile at the innermost tile
 * loop. col is computed at the row-block loop: mr rows of the im2col matrix at a time (in L1,
 * reused by the jb panels of the pass), never the whole matrix. Its channel loop is innermost
 * (contiguous reads of an NHWC input).
 */
#include <string.h>
#include "topi/internal.h"

#define WHO "conv2d_im2col"

typedef struct ic_decl {
  topi_conv2d p;
  topi_conv_args a;
  int64_t g, cig, kog, r;
} ic_decl;

typedef struct ic_graph {
  const ic_decl *d;
  int64_t nr;
  const ir_expr *rr;
  te_tensor *col, *kp, *acc, *out;
} ic_graph;

/* r -> (ky, kx, c) */
static void split_r(tec_ctx *ctx, const ic_decl *d, const ir_expr *r, const ir_expr **ky,
                    const ir_expr **kx, const ir_expr **c) {
  const ir_expr *cig = ir_int(ctx, d->cig), *kw = ir_int(ctx, d->p.kw);
  *c = ir_floormod(r, cig);
  const ir_expr *k = ir_floordiv(r, cig);
  *ky = ir_floordiv(k, kw);
  *kx = ir_floormod(k, kw);
}

static const ir_expr *col_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  ic_graph *gr = u;
  const ic_decl *d = gr->d;
  const ir_expr *ky, *kx, *c, *ow = ir_int(ctx, d->a.ow), *zero = ir_int(ctx, 0);
  split_r(ctx, d, i[3], &ky, &kx, &c);
  ky = topi_dilate(ctx, ky, d->p.dilation_h), kx = topi_dilate(ctx, kx, d->p.dilation_w);
  const ir_expr *y = ir_add(ir_sub(ir_mul(ir_floordiv(i[2], ow), ir_int(ctx, d->p.stride_h)),
                                   ir_int(ctx, d->p.pad_h)), ky);
  const ir_expr *x = ir_add(ir_sub(ir_mul(ir_floormod(i[2], ow), ir_int(ctx, d->p.stride_w)),
                                   ir_int(ctx, d->p.pad_w)), kx);
  const ir_expr *ch = ir_add(ir_mul(i[1], ir_int(ctx, d->cig)), c);
  /* every bound checked: the row block at the last positions may run past oh * ow */
  const ir_expr *in = ir_and(ir_and(ir_ge(y, zero), ir_lt(y, ir_int(ctx, d->p.h))),
                             ir_and(ir_ge(x, zero), ir_lt(x, ir_int(ctx, d->p.w))));
  return ir_select(ir_likely(in), topi_layout_read(d->a.data, d->p.in_layout, i[0], ch, y, x),
                   ir_float(ctx, 0.0));
}

static const ir_expr *kp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  ic_graph *gr = u;
  const ic_decl *d = gr->d;
  const ir_expr *ky, *kx, *c;
  split_r(ctx, d, i[2], &ky, &kx, &c);
  const ir_expr *k = ir_add(ir_mul(i[1], ir_int(ctx, gr->nr)), i[3]);
  const ir_expr *v =
      TE_AT(d->a.kernel, ir_add(ir_mul(i[0], ir_int(ctx, d->kog)), k), c, ky, kx);
  if (d->kog % gr->nr == 0) return v;
  return ir_select(ir_lt(k, ir_int(ctx, d->kog)), v, ir_float(ctx, 0.0));
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  ic_graph *gr = u;
  const ir_expr *nr = ir_int(ctx, gr->nr);
  const ir_expr *b = TE_AT(gr->kp, i[1], ir_floordiv(i[3], nr), gr->rr, ir_floormod(i[3], nr));
  return te_sum(ir_mul(TE_AT(gr->col, i[0], i[1], i[2], gr->rr), b), 1, &gr->rr, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  ic_graph *gr = u;
  const ic_decl *d = gr->d;
  const ir_expr *kog = ir_int(ctx, d->kog);
  const ir_expr *acc = TE_AT(gr->acc, i[0], ir_floordiv(i[3], kog),
                             ir_add(ir_mul(i[1], ir_int(ctx, d->a.ow)), i[2]),
                             ir_floormod(i[3], kog));
  return topi_epilogue_expr(ctx, &d->p.epi, acc, d->a.bias ? TE_AT(d->a.bias, i[3]) : NULL,
                            d->a.residual ? TE_AT(d->a.residual, i[0], i[1], i[2], i[3]) : NULL);
}

static ic_graph *ic_build_graph(tec_ctx *ctx, const ic_decl *d, int64_t nr) {
  ic_graph *gr = tec_ctx_alloc(ctx, sizeof *gr);
  if (!gr) return NULL;
  *gr = (ic_graph){.d = d, .nr = nr, .rr = te_reduce_axis_n(ctx, "r", d->r)};
  const topi_conv2d *p = &d->p;
  int64_t npos = d->a.oh * d->a.ow;
  static const char *const cn[] = {"n", "g", "pos", "r"}, *const kn[] = {"g", "ko", "r", "ki"};
  static const char *const an[] = {"n", "g", "pos", "k"}, *const on[] = {"n", "y", "x", "k"};
  gr->col = te_compute(ctx, &(te_compute_decl){.name = "im2col", .ndim = 4,
                                               .shape = TE_SHAPE(ctx, p->n, d->g, npos, d->r),
                                               .body = col_body, .user = gr, .tag = "im2col",
                                               .axis_names = cn});
  gr->kp = te_compute(ctx, &(te_compute_decl){.name = "kernel_p", .ndim = 4,
                                              .shape = TE_SHAPE(ctx, d->g,
                                                                topi_ceil_div(d->kog, nr), d->r,
                                                                nr),
                                              .body = kp_body, .user = gr, .tag = "pack_kernel",
                                              .axis_names = kn});
  if (!gr->col || !gr->kp) return NULL;
  gr->acc = te_compute(ctx, &(te_compute_decl){.name = "acc", .ndim = 4,
                                               .shape = TE_SHAPE(ctx, p->n, d->g, npos, d->kog),
                                               .body = acc_body, .user = gr, .tag = "conv2d_gemm",
                                               .axis_names = an});
  if (!gr->acc) return NULL;
  gr->out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 4,
                                               .shape = TE_SHAPE(ctx, p->n, d->a.oh, d->a.ow,
                                                                 p->c_out),
                                               .body = out_body, .user = gr, .tag = "epilogue",
                                               .axis_names = on});
  return gr->out ? gr : NULL;
}

static int ic_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_conv2d *p = problem;
  const char *w = NULL;
  if (topi_conv2d_check(ctx, WHO, p)) w = tec_ctx_error(ctx);
  else if ((w = topi_conv2d_margin_refused(ctx, WHO, p))) {
  } else if (p->out_layout.kind != TOPI_NHWC)
    w = tec_ctx_printf(ctx, "output layout %s is not supported (NHWC: the GEMM's rows are the "
                            "output positions, its columns the channels)",
                       topi_layout_str(ctx, p->out_layout));
  if (why) *why = w;
  return w == NULL;
}

static int ic_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_conv2d *p = p_arg;
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, WHO ": problem and decl are required");
  if (topi_refuse(ctx, &topi_tmpl_conv2d_im2col, p)) return -1;
  ic_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  if (!d) return -1;
  memset(d, 0, sizeof *d);
  d->p = *p;
  if (topi_conv_declare_args(ctx, WHO, p, &d->a)) return -1;
  d->g = p->groups ? p->groups : 1;
  d->cig = p->c_in / d->g, d->kog = p->c_out / d->g;
  d->r = p->kh * p->kw * d->cig;
  ic_graph *gr = ic_build_graph(ctx, d, 1); /* the declared definition: no panels */
  if (!gr) return -1;
  return topi_conv_finish_decl(ctx, &topi_tmpl_conv2d_im2col, p, &d->a, gr->out, d, out);
}

static int ic_schedule(const topi_decl *dc, const void *cfg_arg,
                       const tec_target *target, topi_op *op) {
  const topi_conv2d_im2col_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  tec_ctx *ctx = dc->ctx;
  if (topi_config_check(&topi_tmpl_conv2d_im2col, dc, cfg, target)) return -1;
  int lanes = topi_target_lanes(ctx, target);
  if (lanes < 0) return -1;
  const ic_decl *d = dc->priv;
  ic_graph *gr = ic_build_graph(ctx, d, cfg->nr);
  te_tensor **args = tec_ctx_alloc(ctx, sizeof *args * (size_t)dc->nargs);
  if (!gr || !args) return -1;
  memcpy(args, dc->args, sizeof *args * (size_t)dc->nargs);
  args[dc->nargs - 1] = gr->out;
  sch_schedule *s = sch_create(ctx, 1, &gr->out);
  if (!s) return -1;
  *op = (topi_op){dc, s, dc->nargs, args, gr->out};
  sch_stage *so = sch_stage_of(s, gr->out), *sa = sch_stage_of(s, gr->acc);
  sch_stage *sc = sch_stage_of(s, gr->col);
  if (!so || !sa || !sc) return -1;
  /* out: n, g, pos (y and x fused), k within the group */
  sch_iter *g, *k, *pos, *io;
  if (sch_split(so, sch_axis(so, 3), d->kog, &g, &k) ||
      sch_fuse(so, sch_axis(so, 1), sch_axis(so, 2), &pos) ||
      sch_reorder(so, 4, (sch_iter *[]){sch_axis(so, 0), g, pos, k}))
    return -1;
  topi_dense_config dcfg = {cfg->mr, cfg->nr, cfg->ku, cfg->jb, cfg->parallel, 0};
  if (topi_gemm_tile_schedule(ctx, &dcfg, so, 2, (sch_iter *[]){sch_axis(so, 0), g}, pos, k, sa,
                              NULL, &io))
    return -1;
  /* im2col: mr rows of it per row block; the channels of one (ky, kx) innermost */
  if (sch_compute_at(sc, so, io)) return -1;
  sch_iter *rk, *c, *ky, *kx;
  if (sch_split(sc, sch_axis(sc, 3), d->cig, &rk, &c) ||
      sch_split(sc, rk, d->p.kw, &ky, &kx))
    return -1;
  if (d->cig % lanes == 0 && d->p.in_layout.kind == TOPI_NHWC) {
    sch_iter *co, *ci;
    if (sch_split(sc, c, lanes, &co, &ci) || sch_vectorize(sc, ci)) return -1;
  }
  return 0;
}

static int ic_space(tec_ctx *ctx, const void *p_arg, const tec_target *target,
                    tune_space *sp) {
  const topi_conv2d *p = p_arg;
  int lanes = topi_target_lanes(ctx, target);
  if (lanes < 0 || topi_refuse(ctx, &topi_tmpl_conv2d_im2col, p)) return -1;
  int64_t oh, ow;
  if (topi_conv2d_out_hw(ctx, p, &oh, &ow)) return -1;
  int64_t g = p->groups ? p->groups : 1, kog = p->c_out / g, r = p->kh * p->kw * (p->c_in / g);
  topi_dense gp = {.m = oh * ow, .n = kog, .k = r, .const_b = 1};
  tune_space ds;
  if (topi_tmpl_dense.space(ctx, &gp, target, &ds)) return -1;
  /* dense's knobs for this GEMM, its values and defaults; pack fixed to root (prepare) */
  if (tune_space_init(ctx, sp, topi_tmpl_conv2d_im2col.name,
                      topi_tmpl_conv2d_im2col.config_size)) return -1;
  static const size_t offs[] = {offsetof(topi_conv2d_im2col_config, mr),
                                offsetof(topi_conv2d_im2col_config, nr),
                                offsetof(topi_conv2d_im2col_config, ku),
                                offsetof(topi_conv2d_im2col_config, jb),
                                offsetof(topi_conv2d_im2col_config, parallel)};
  static const int64_t b01[] = {0, 1};
  for (int k = 0; k < 5; k++) {
    const tune_knob *kn = &ds.knobs[k];
    int par = !strcmp(kn->name, "parallel");
    int64_t def = tune_config_get(&ds, ds.default_config, k);
    if (tune_define_field(sp, kn->name, par ? "parallel over (n, groups, panel groups)" : kn->doc,
                          offs[k], par ? 2 : kn->nvalues, par ? b01 : kn->values, par ? 1 : def) < 0)
      return -1;
  }
  /* dense's register rule on mr, nr: a 12 x 4-vector tile (48 accumulators in 32 zmm) spilled
   * and took 8.8 CPU s to build on a 96x56x56 layer (issue #38) */
  return topi_dense_rule_on(ctx, sp, 0x3u, &ds, offsetof(topi_conv2d_im2col_config, mr),
                            offsetof(topi_conv2d_im2col_config, nr));
}

const topi_template topi_tmpl_conv2d_im2col = {
    WHO, "conv2d -> NHWC as im2col + GEMM (im2col per row block), any kernel/stride/groups",
    TOPI_PROBLEM_CONV2D, sizeof(topi_conv2d_im2col_config), ic_applies, ic_declare,
    ic_schedule, ic_space, "topi_conv2d_im2col_config"};

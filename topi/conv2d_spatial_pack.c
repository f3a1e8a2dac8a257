/* conv2d_spatial_pack.c — conv2d NCHW -> NCHW with spatial packing, TVM's arm_cpu schedule
 * (conv2d_nchw_spatial_pack), as a three-function template. Any kernel, stride, padding and
 * dilation; groups 1.
 *
 * A register tile is VH output rows x VW output columns x VC output channels. With
 * H = ceil(oh/VH), W = ceil(ow/VW), the window of a tile KH' = (VH-1)*s + (kh-1)*d + 1 rows by
 * KW' = (VW-1)*s + (kw-1)*d + 1 columns (d: the dilation):
 *
 *   data_vec[n, H, W, c, vh, vw]     = data[n, c, H*VH*s + vh - pad, W*VW*s + vw - pad]
 *                                      (zero outside; vh < KH', vw < KW')
 *   kernel_vec[K, c, i, j, vc]       = kernel[K*VC + vc, c, i, j]   (zero past c_out; prepare)
 *   conv[n, K, H, W, vh, vw, vc]     = sum_{c,i,j} data_vec[n, H, W, c, vh*s + i*d, vw*s + j*d]
 *                                                  * kernel_vec[K, c, i, j, vc]
 *   out[n, k, y, x]                  = epilogue(conv[n, k/VC, y/VH, x/VW, y%VH, x%VW, k%VC])
 *
 * Schedule: out's loops n, row tiles (fused, parallel), channel tiles, column tiles, then the
 * tile (VH unrolled, VW vectorized: contiguous stores of NCHW rows); data_vec computed at
 * root as in TVM ((n, row tiles) parallel), conv per tile (the VH x VW x VC
 * accumulators: VC vectorized, VH and VW unrolled, the reduction c outermost, the kernel window
 * unrolled inside it).
 */
#include <string.h>
#include "topi/internal.h"

#define WHO "conv2d_spatial_pack"

typedef struct sp_decl {
  topi_conv2d p;
  topi_conv_args a;
} sp_decl;

typedef struct sp_graph {
  const sp_decl *d;
  int64_t vh, vw, vc, nh, nw, nk, kh2, kw2;
  const ir_expr *rc, *ri, *rj;
  te_tensor *dv, *kv, *conv, *out;
} sp_graph;

static const ir_expr *dv_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  sp_graph *g = u;
  const sp_decl *d = g->d;
  const ir_expr *zero = ir_int(ctx, 0);
  const ir_expr *y = ir_add(ir_mul(i[1], ir_int(ctx, g->vh * d->p.stride_h)),
                            ir_sub(i[4], ir_int(ctx, d->p.pad_h)));
  const ir_expr *x = ir_add(ir_mul(i[2], ir_int(ctx, g->vw * d->p.stride_w)),
                            ir_sub(i[5], ir_int(ctx, d->p.pad_w)));
  /* every bound checked: the last tiles' windows may run past the input */
  const ir_expr *in = ir_and(ir_and(ir_ge(y, zero), ir_lt(y, ir_int(ctx, d->p.h))),
                             ir_and(ir_ge(x, zero), ir_lt(x, ir_int(ctx, d->p.w))));
  return ir_select(ir_likely(in), topi_layout_read(d->a.data, d->p.in_layout, i[0], i[3], y, x),
                   ir_float(ctx, 0.0));
}

static const ir_expr *kv_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  sp_graph *g = u;
  const sp_decl *d = g->d;
  const ir_expr *k = ir_add(ir_mul(i[0], ir_int(ctx, g->vc)), i[4]);
  const ir_expr *v = TE_AT(d->a.kernel, k, i[1], i[2], i[3]);
  if (d->p.c_out % g->vc == 0) return v;
  return ir_select(ir_lt(k, ir_int(ctx, d->p.c_out)), v, ir_float(ctx, 0.0));
}

static const ir_expr *conv_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  sp_graph *g = u;
  const sp_decl *d = g->d;
  const ir_expr *x = TE_AT(g->dv, i[0], i[2], i[3], g->rc,
                           ir_add(ir_mul(i[4], ir_int(ctx, d->p.stride_h)),
                                  topi_dilate(ctx, g->ri, d->p.dilation_h)),
                           ir_add(ir_mul(i[5], ir_int(ctx, d->p.stride_w)),
                                  topi_dilate(ctx, g->rj, d->p.dilation_w)));
  const ir_expr *w = TE_AT(g->kv, i[1], g->rc, g->ri, g->rj, i[6]);
  return te_sum(ir_mul(x, w), 3, (const ir_expr *[]){g->rc, g->ri, g->rj}, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  sp_graph *g = u;
  const sp_decl *d = g->d;
  const ir_expr *vc = ir_int(ctx, g->vc), *vh = ir_int(ctx, g->vh), *vw = ir_int(ctx, g->vw);
  const ir_expr *acc = TE_AT(g->conv, i[0], ir_floordiv(i[1], vc), ir_floordiv(i[2], vh),
                             ir_floordiv(i[3], vw), ir_floormod(i[2], vh), ir_floormod(i[3], vw),
                             ir_floormod(i[1], vc));
  return topi_epilogue_expr(ctx, &d->p.epi, acc, d->a.bias ? TE_AT(d->a.bias, i[1]) : NULL,
                            d->a.residual ? TE_AT(d->a.residual, i[0], i[1], i[2], i[3]) : NULL);
}

static sp_graph *sp_build_graph(tec_ctx *ctx, const sp_decl *d, int64_t vh, int64_t vw,
                                int64_t vc) {
  sp_graph *g = tec_ctx_alloc(ctx, sizeof *g);
  if (!g) return NULL;
  const topi_conv2d *p = &d->p;
  *g = (sp_graph){.d = d, .vh = vh, .vw = vw, .vc = vc};
  g->nh = topi_ceil_div(d->a.oh, vh), g->nw = topi_ceil_div(d->a.ow, vw);
  g->nk = topi_ceil_div(p->c_out, vc);
  g->kh2 = (vh - 1) * p->stride_h + (p->kh - 1) * topi_conv2d_dilation_h(p) + 1;
  g->kw2 = (vw - 1) * p->stride_w + (p->kw - 1) * topi_conv2d_dilation_w(p) + 1;
  g->rc = te_reduce_axis_n(ctx, "ic", p->c_in);
  g->ri = te_reduce_axis_n(ctx, "ki", p->kh);
  g->rj = te_reduce_axis_n(ctx, "kj", p->kw);
  static const char *const dn[] = {"n", "H", "W", "c", "vh", "vw"};
  static const char *const kn[] = {"K", "c", "i", "j", "vc"};
  static const char *const cn[] = {"n", "K", "H", "W", "vh", "vw", "vc"};
  static const char *const on[] = {"n", "k", "y", "x"};
  g->dv = te_compute(ctx, &(te_compute_decl){.name = "data_vec", .ndim = 6,
                                             .shape = TE_SHAPE(ctx, p->n, g->nh, g->nw, p->c_in,
                                                               g->kh2, g->kw2),
                                             .body = dv_body, .user = g, .tag = "pack_data",
                                             .axis_names = dn});
  g->kv = te_compute(ctx, &(te_compute_decl){.name = "kernel_vec", .ndim = 5,
                                             .shape = TE_SHAPE(ctx, g->nk, p->c_in, p->kh, p->kw,
                                                               vc),
                                             .body = kv_body, .user = g, .tag = "pack_kernel",
                                             .axis_names = kn});
  if (!g->dv || !g->kv) return NULL;
  g->conv = te_compute(ctx, &(te_compute_decl){.name = "conv", .ndim = 7,
                                               .shape = TE_SHAPE(ctx, p->n, g->nk, g->nh, g->nw,
                                                                 vh, vw, vc),
                                               .body = conv_body, .user = g,
                                               .tag = "conv2d_spatial_pack", .axis_names = cn});
  if (!g->conv) return NULL;
  g->out = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 4,
                                              .shape = TE_SHAPE(ctx, p->n, p->c_out, d->a.oh,
                                                                d->a.ow),
                                              .body = out_body, .user = g, .tag = "epilogue",
                                              .axis_names = on});
  return g->out ? g : NULL;
}

static int sp_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_conv2d *p = problem;
  const char *w = NULL;
  if (topi_conv2d_check(ctx, WHO, p)) w = tec_ctx_error(ctx);
  else if ((w = topi_conv2d_margin_refused(ctx, WHO, p))) {
  } else if (p->groups > 1)
    w = tec_ctx_printf(ctx, "groups = %lld is not supported (only groups = 1; grouped: "
                            "conv2d_im2col)", (long long)p->groups);
  else if (p->in_layout.kind != TOPI_NCHW || p->out_layout.kind != TOPI_NCHW)
    w = tec_ctx_printf(ctx, "layouts %s -> %s are not supported (NCHW -> NCHW)",
                       topi_layout_str(ctx, p->in_layout), topi_layout_str(ctx, p->out_layout));
  if (why) *why = w;
  return w == NULL;
}

static int sp_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_conv2d *p = p_arg;
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, WHO ": problem and decl are required");
  if (topi_refuse(ctx, &topi_tmpl_conv2d_spatial_pack, p)) return -1;
  sp_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  if (!d) return -1;
  memset(d, 0, sizeof *d);
  d->p = *p;
  if (topi_conv_declare_args(ctx, WHO, p, &d->a)) return -1;
  sp_graph *g = sp_build_graph(ctx, d, 1, 1, 1); /* the declared definition: no tiles */
  if (!g) return -1;
  return topi_conv_finish_decl(ctx, &topi_tmpl_conv2d_spatial_pack, p, &d->a, g->out, d, out);
}

static int sp_schedule(const topi_decl *dc,
                       const void *cfg_arg,
                       const tec_target *target, topi_op *op) {
  const topi_conv2d_spatial_pack_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  tec_ctx *ctx = dc->ctx;
  if (topi_config_check(&topi_tmpl_conv2d_spatial_pack, dc, cfg, target)) return -1;
  const sp_decl *d = dc->priv;
  sp_graph *g = sp_build_graph(ctx, d, cfg->vh, cfg->vw, cfg->vc);
  te_tensor **args = tec_ctx_alloc(ctx, sizeof *args * (size_t)dc->nargs);
  if (!g || !args) return -1;
  memcpy(args, dc->args, sizeof *args * (size_t)dc->nargs);
  args[dc->nargs - 1] = g->out;
  sch_schedule *s = sch_create(ctx, 1, &g->out);
  if (!s) return -1;
  *op = (topi_op){dc, s, dc->nargs, args, g->out};
  sch_stage *so = sch_stage_of(s, g->out), *sc = sch_stage_of(s, g->conv);
  sch_stage *sd = sch_stage_of(s, g->dv);
  if (!so || !sc || !sd) return -1;
  /* out: (n, row tiles) parallel, channel tiles, column tiles; the tile VC x VH x VW */
  sch_iter *ko, *ki, *yo, *yi, *xo, *xi, *par;
  if (sch_split(so, sch_axis(so, 1), cfg->vc, &ko, &ki) ||
      sch_split(so, sch_axis(so, 2), cfg->vh, &yo, &yi) ||
      sch_split(so, sch_axis(so, 3), cfg->vw, &xo, &xi) ||
      sch_reorder(so, 7, (sch_iter *[]){sch_axis(so, 0), yo, ko, xo, ki, yi, xi}) ||
      sch_fuse(so, sch_axis(so, 0), yo, &par) || (cfg->parallel && sch_parallel(so, par)) ||
      sch_unroll(so, yi) || sch_vectorize(so, xi))
    return -1;
  if (sch_compute_at(sc, so, xo)) return -1;
  /* conv: c outermost, the window unrolled, then the tile: VH, VW unrolled, VC vectorized */
  sch_iter *rc = sch_reduce_axis(sc, 0), *ri = sch_reduce_axis(sc, 1), *rj = sch_reduce_axis(sc, 2);
  if (sch_reorder(sc, 6, (sch_iter *[]){rc, ri, rj, sch_axis(sc, 4), sch_axis(sc, 5),
                                        sch_axis(sc, 6)}) ||
      sch_unroll(sc, ri) || sch_unroll(sc, rj) || sch_unroll(sc, sch_axis(sc, 4)) ||
      sch_unroll(sc, sch_axis(sc, 5)) || sch_vectorize(sc, sch_axis(sc, 6)))
    return -1;
  /* data_vec: at root as in TVM (compute_at needs a direct reader, and conv sits inside the
   * channel tiles, which would repack the band per channel tile), (n, row tiles) parallel */
  sch_iter *f;
  if (sch_fuse(sd, sch_axis(sd, 0), sch_axis(sd, 1), &f) || (cfg->parallel && sch_parallel(sd, f)))
    return -1;
  return 0;
}


/* The space's rule (tune_space.rule): the tile's accumulators (vh x vw x vc/lanes vectors),
 * vc/lanes kernel vectors and a broadcast within the target's vector registers, and the
 * unrolled body (the window's taps times the tile, its zeroing, twice for a peeled border
 * copy) within TOPI_UNROLL_MAX (a 7x7 window at 4 x 16: 6400). */
typedef struct sp_rule {
  int64_t lanes, regs, taps;
} sp_rule;

static int64_t sp_body(const sp_rule *r, int64_t vh, int64_t vw) {
  return 2 * (vh * vw * (r->taps + 1) + vh);
}

static int sp_rule_ok(const void *data, const void *config) {
  const sp_rule *r = data;
  const topi_conv2d_spatial_pack_config *c = config;
  int64_t nv = c->vc / r->lanes;
  if (c->vh * c->vw == 1) return 1; /* 1 x 1 always in */
  return c->vh * c->vw * nv + nv + 1 <= r->regs && topi_unroll_ok(sp_body(r, c->vh, c->vw));
}

static int sp_space(tec_ctx *ctx, const void *p_arg, const tec_target *target,
                    tune_space *sp) {
  const topi_conv2d *p = p_arg;
  int lanes = topi_target_lanes(ctx, target);
  if (lanes < 0 || topi_refuse(ctx, &topi_tmpl_conv2d_spatial_pack, p)) return -1;
  int64_t oh, ow;
  if (topi_conv2d_out_hw(ctx, p, &oh, &ow)) return -1;
  int64_t vcs[4], vhs[4], vws[16], b01[] = {0, 1};
  int nvc = 0, nvh = 0, nvw = 0;
  for (int64_t v = 1; v <= 4 && (v == 1 || (v - 1) * lanes < p->c_out); v *= 2) vcs[nvc++] = v * lanes;
  for (int64_t v = 1; v <= 4 && v <= oh; v++) vhs[nvh++] = v;
  for (int64_t v = 1; v <= 16 && v <= ow; v++) vws[nvw++] = v;
  /* default: the most accumulators (VH x VW x VC/lanes) that leave room for the VC/lanes
   * kernel vectors and a broadcast, VC two vectors when c_out has them (TVM: VC 8 on NEON) */
  int regs = topi_target_regs(ctx, target, lanes);
  int64_t dvc = nvc > 1 ? vcs[1] : vcs[0], nv = dvc / lanes, dvh = vhs[nvh > 1 ? 1 : 0];
  /* 16 registers, no memory operand (ARMv7 NEON): LLVM keeps a window's broadcasts and kernel
   * vectors live beside the accumulators, so those take at most a quarter of the registers
   * (one row) under a kh x kw window and half under 1x1 (rasp4b32, 128x28x28 3x3: 2 x 3 x 8,
   * 395 vector spills per 216 vfma, 5.3 instructions per vfma; 1 x 2 x 8, none, 2.4; 256 -> 256
   * 1x1: 2 x 3 x 8, 4 per 24; 2 x 2 x 8, none; tests/test_arm_tiles.c) */
  int small = topi_target_tight_regs(ctx, target), window = p->kh * p->kw > 1;
  if (small && window) dvh = vhs[0];
  int64_t dvw = 1;
  sp_rule rule = {lanes, regs, p->kh * p->kw};
  if (!topi_unroll_ok(sp_body(&rule, dvh, 1))) dvh = vhs[0];
  for (int i = 0; i < nvw; i++)
    if (dvh * vws[i] * nv + nv + 1 <= regs &&
        (!small || dvh * vws[i] * nv <= regs / (window ? 4 : 2)) &&
        topi_unroll_ok(sp_body(&rule, dvh, vws[i])))
      dvw = vws[i];
  if (tune_space_init(ctx, sp, topi_tmpl_conv2d_spatial_pack.name,
                      topi_tmpl_conv2d_spatial_pack.config_size) ||
      tune_define_field(sp, "vc", "output channels per register tile (vectorized)",
                        offsetof(topi_conv2d_spatial_pack_config, vc), nvc, vcs, dvc) < 0 ||
      tune_define_field(sp, "vh", "output rows per register tile",
                        offsetof(topi_conv2d_spatial_pack_config, vh), nvh, vhs, dvh) < 0 ||
      tune_define_field(sp, "vw", "output columns per register tile",
                        offsetof(topi_conv2d_spatial_pack_config, vw), nvw, vws, dvw) < 0 ||
      tune_define_field(sp, "parallel", "parallel over (n, row tiles)",
                        offsetof(topi_conv2d_spatial_pack_config, parallel), 2, b01, 1) < 0)
    return -1;
  sp_rule *r = tec_ctx_alloc(ctx, sizeof *r);
  if (!r) return -1;
  *r = rule;
  const char *doc = tec_ctx_printf(ctx, "registers: vh*vw*vc/%d + vc/%d + 1 <= %d; unrolled body: "
                                   "2*(vh*vw*%lld + vh) <= %d statements", lanes, lanes, regs,
                                   (long long)r->taps + 1, TOPI_UNROLL_MAX);
  return doc ? tune_space_set_rule(sp, 0x7u, sp_rule_ok, r, doc) : -1;
}

const topi_template topi_tmpl_conv2d_spatial_pack = {
    WHO, "conv2d NCHW -> NCHW, spatial pack (TVM arm_cpu): VH x VW x VC register tile",
    TOPI_PROBLEM_CONV2D, sizeof(topi_conv2d_spatial_pack_config), sp_applies, sp_declare,
    sp_schedule, sp_space, "topi_conv2d_spatial_pack_config"};

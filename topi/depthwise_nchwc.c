/* depthwise_nchwc.c — depthwise convolution in the channel-blocked layout NCHW[x]c -> NCHW[x]c.
 *
 *   kp[C, i, j, v]       = C*x + v < c ? kernel[C*x + v, 0, i, j] : 0           (prepare)
 *   dw[n, C, oy, ox, v]  = bias_p[C, v] + sum_{i,j} pad(data)[n, C, oy*s + i*d - p, ox*s + j*d - p, v]
 *                                    * kp[C, i, j, v]          (d: the dilation; the bias is the
 *                                                               sum's init, te_reduce_init)
 *   out[n, C, oy, ox, v] = epilogue(dw[...], residual[n, C, oy, ox, v])
 *
 * The padding is inlined as a select under likely() conditions: loop partitioning gives the
 * interior rows and column tiles a body without compares, the border keeps them; an input
 * margin >= the padding is read in place (no compare, nothing to partition) and an output
 * margin is left alone (out is the window of the caller's buffer). The output is
 * cut into register tiles of oh_tile x ow_tile pixels of one channel block; dw is computed per
 * tile (compute_at), its taps and pixels unrolled and the block's lanes vectorized, so the
 * accumulators stay in vector registers and the epilogue is applied as the tile is written:
 *
 *   for n, C (parallel, fused with the row tiles)
 *     for yo, xo
 *       dw.tile[oh_tile][ow_tile][x] = bias_p[C][:]          (0 without a bias)
 *       for i, j (unrolled): for yi, xi (unrolled): dw.tile[yi][xi][:] += in[..][:] * kp[C, i, j, :]
 *       out[n, C, yo*th + yi, xo*tw + xi, :] = epilogue(dw.tile[yi][xi][:])
 */
#include <string.h>
#include "topi/internal.h"

typedef struct dwc_decl {
  topi_conv2d p;
  topi_conv_args a;
  int64_t block;
  te_tensor *kp, *bias_p, *dw;
  const ir_expr *ri, *rj;
} dwc_decl;

static const ir_expr *kp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dwc_decl *d = u; /* kp[C, ky, kx, v] = kernel[C*block + v, 0, ky, kx], zero past the channels */
  return topi_kernel_at(ctx, d->a.kernel, ir_add(ir_mul(i[0], ir_int(ctx, d->block)), i[3]),
                        d->p.c_in, d->p.c_in % d->block != 0, NULL, 0, 0, i[1], i[2]);
}

static const ir_expr *dw_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dwc_decl *d = u;
  const topi_conv2d *p = &d->p;
  const ir_expr *y = ir_add(ir_mul(i[2], ir_int(ctx, p->stride_h)),
                            ir_sub(topi_dilate(ctx, d->ri, p->dilation_h), ir_int(ctx, p->pad_h)));
  const ir_expr *x = ir_add(ir_mul(i[3], ir_int(ctx, p->stride_w)),
                            ir_sub(topi_dilate(ctx, d->rj, p->dilation_w), ir_int(ctx, p->pad_w)));
  const ir_expr *c = ir_add(ir_mul(i[1], ir_int(ctx, d->block)), i[4]);
  const ir_expr *in = topi_pad_read(d->a.data, p->in_layout, p->h, p->w, i[0], c, y, x, p->pad_h,
                                    p->pad_w);
  const ir_expr *w = TE_AT(d->kp, i[1], d->ri, d->rj, i[4]);
  const ir_expr *sum = te_sum(ir_mul(topi_fp_widen(p->fp, in), topi_fp_widen(p->fp, w)), 2,
                              (const ir_expr *[]){d->ri, d->rj}, NULL);
  /* the accumulators start from the bias (te_reduce_init), not from zero with the bias added
   * after the taps: one vector instruction less per output vector (AArch64 mbv1_dw_mid:
   * docs/arm.md) */
  return d->bias_p ? te_reduce_init(sum, topi_fp_widen(p->fp, TE_AT(d->bias_p, i[1], i[4]))) : sum;
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dwc_decl *d = u;
  return topi_fp_epilogue(ctx, d->p.fp, &d->p.epi, TE_AT(d->dw, i[0], i[1], i[2], i[3], i[4]),
                          NULL, /* the bias started dw (dw_body) */
                          d->a.residual ? TE_AT(d->a.residual, i[0], i[1], i[2], i[3], i[4])
                                        : NULL);
}

static int dwc_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_conv2d *p = problem;
  const char *w = NULL;
  if (topi_conv2d_check(ctx, "depthwise_nchwc", p)) w = tec_ctx_error(ctx);
  else if (p->groups != p->c_in || p->c_out != p->c_in)
    w = "not depthwise (needs groups == c_in == c_out)";
  else if (p->in_layout.kind != TOPI_NCHWC || p->out_layout.kind != TOPI_NCHWC ||
           p->in_layout.block != p->out_layout.block)
    w = tec_ctx_printf(ctx, "reads and writes NCHW[x]c with the same block (got %s -> %s)",
                       topi_layout_str(ctx, p->in_layout), topi_layout_str(ctx, p->out_layout));
  if (why) *why = w;
  return w == NULL;
}

static int dwc_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  return topi_depthwise_nchwc_declare_on(ctx, p_arg, NULL, out);
}

int topi_depthwise_nchwc_declare_on(tec_ctx *ctx, const topi_conv2d *p, te_tensor *data,
                                    topi_decl *out) {
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, "depthwise_nchwc: problem and decl are required");
  const char *why;
  if (!dwc_applies(ctx, p, &why)) return tec_ctx_set_error(ctx, "depthwise_nchwc: %s", why);
  dwc_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  if (!d || topi_conv_declare_args(ctx, "depthwise_nchwc", p, &d->a)) return -1;
  if (data) d->a.data = data; /* a producer's output (pw_dw_fused), in_layout's shape */
  d->p = *p;
  d->block = p->in_layout.block;
  int64_t cb = topi_ceil_div(p->c_in, d->block);
  d->ri = te_reduce_axis_n(ctx, "ky", p->kh);
  d->rj = te_reduce_axis_n(ctx, "kx", p->kw);
  static const char *const kn[] = {"C", "ky", "kx", "v"}, *const on[] = {"n", "C", "oy", "ox", "v"};
  d->kp = te_compute(ctx, &(te_compute_decl){.name = "kernel_p", .ndim = 4,
                                             .shape = TE_SHAPE(ctx, cb, p->kh, p->kw, d->block),
                                             .body = kp_body, .user = d, .tag = "pack_kernel",
                                             .axis_names = kn});
  if (d->a.bias && !(d->bias_p = topi_pack_bias(ctx, d->a.bias, p->c_in, d->block))) return -1;
  const ir_expr *const *os = TE_SHAPE(ctx, p->n, cb, d->a.oh, d->a.ow, d->block);
  d->dw = te_compute(ctx, &(te_compute_decl){.name = "dw", .ndim = 5, .shape = os, .body = dw_body,
                                             .user = d, .tag = "depthwise_conv2d_nchwc",
                                             .axis_names = on});
  te_tensor *o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 5, .shape = os,
                                                    .body = out_body, .user = d, .tag = "epilogue",
                                                    .axis_names = on});
  if (!o || topi_set_margin(ctx, "depthwise_nchwc", o, p->out_layout)) return -1;
  return topi_conv_finish_decl(ctx, &topi_tmpl_depthwise_nchwc, p, &d->a, o, d, out);
}

static int dwc_schedule(const topi_decl *dc, const void *cfg_arg,
                        const tec_target *target, topi_op *op) {
  const topi_depthwise_nchwc_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_depthwise_nchwc, dc, cfg, target) ||
      topi_fp_target_check(dc->ctx, "depthwise_nchwc", ((const dwc_decl *)dc->priv)->p.fp, target) ||
      topi_op_begin(dc, op) || topi_depthwise_nchwc_schedule_in(dc, cfg, op->sched, 0, NULL))
    return -1;
  /* ARMv7 (16 q registers, tight_regs): the 1x1 tile holds 9 taps, the bias, ReLU's zero and
   * the accumulator across the column loop, 4 registers for input loads; LLVM's default ARM
   * scheduler (latency first, blind to those live-ins) put 5 loads in flight and LLVM 19
   * reloaded a tap from the stack per column. sched_pressure: LLVM's MachineScheduler, which
   * counts them (codegen_llvm/optimize.c; docs/arm.md: no spill, fewer instructions). */
  if (topi_target_tight_regs(dc->ctx, target)) {
    sch_stage *so = sch_stage_of(op->sched, dc->out);
    sch_iter *xo = so ? sch_leaf_named(so, "ox.outer") : NULL;
    if (!xo || sch_pragma(so, xo, "sched_pressure", NULL)) return -1;
  }
  return 0;
}

int topi_depthwise_nchwc_schedule_in(const topi_decl *dc, const topi_depthwise_nchwc_config *cfg,
                                     sch_schedule *s, int rows_outer, sch_iter **row_loop) {
  const dwc_decl *d = dc->priv;
  sch_stage *so = sch_stage_of(s, dc->out), *sd = sch_stage_of(s, d->dw);
  /* out: n, C, yo, xo | yi, xi, v  (rows_outer: n, yo, C, xo | yi, xi, v) */
  sch_iter *yo, *yi, *xo, *xi, *f;
  sch_iter *c = so ? sch_axis(so, 1) : NULL;
  if (!so || !sd || sch_split(so, sch_axis(so, 2), cfg->oh_tile, &yo, &yi) ||
      sch_split(so, sch_axis(so, 3), cfg->ow_tile, &xo, &xi) ||
      sch_reorder(so, 7, (sch_iter *[]){sch_axis(so, 0), rows_outer ? yo : c, rows_outer ? c : yo,
                                        xo, yi, xi, sch_axis(so, 4)}) ||
      sch_unroll(so, yi) || sch_unroll(so, xi) || sch_vectorize(so, sch_axis(so, 4)))
    return -1;
  if (rows_outer) { /* (n, row tiles) fused: where a producer of those rows is computed */
    if (sch_fuse(so, sch_axis(so, 0), yo, &f) || (cfg->parallel && sch_parallel(so, f)))
      return -1;
    if (row_loop) *row_loop = f;
  } else if (cfg->parallel &&
             (sch_fuse(so, sch_axis(so, 0), sch_axis(so, 1), &f) || sch_parallel(so, f)))
    return -1;
  /* dw: one register tile per (yo, xo), taps outside the unrolled pixels */
  if (sch_compute_at(sd, so, xo)) return -1;
  sch_iter *ky = sch_reduce_axis(sd, 0), *kx = sch_reduce_axis(sd, 1);
  if (sch_reorder(sd, 7, (sch_iter *[]){sch_axis(sd, 0), sch_axis(sd, 1), ky, kx, sch_axis(sd, 2),
                                        sch_axis(sd, 3), sch_axis(sd, 4)}) ||
      sch_unroll(sd, ky) || sch_unroll(sd, kx) || sch_unroll(sd, sch_axis(sd, 2)) ||
      sch_unroll(sd, sch_axis(sd, 3)) || sch_vectorize(sd, sch_axis(sd, 4)))
    return -1;
  return 0;
}

/* The space's rule (tune_space.rule): the tile's accumulators (oh_tile x ow_tile x vpb
 * vectors), a kernel tap and an input vector (vpb each) within the target's vector registers
 * (a tile past them spills), and its unrolled body within TOPI_UNROLL_MAX: the tile's taps,
 * its zeroing and its epilogue, twice where the column tiles' padding is partitioned (the
 * first and last tile of a row peeled beside the interior loop). 7x7 at oh_tile 2, ow_tile 14
 * was 2856 statements and 9.3 CPU s to build. */
typedef struct dwc_rule {
  int64_t vpb, regs, taps;
} dwc_rule;

static int64_t dwc_body(const dwc_rule *r, const topi_depthwise_nchwc_config *c) {
  return 2 * c->oh_tile * c->ow_tile * (r->taps + 2);
}

static int dwc_rule_ok(const void *data, const void *config) {
  const dwc_rule *r = data;
  const topi_depthwise_nchwc_config *c = config;
  if (c->oh_tile * c->ow_tile == 1) return 1; /* the smallest tile is always in (wide blocks) */
  return c->oh_tile * c->ow_tile * r->vpb + 2 * r->vpb <= r->regs && topi_unroll_ok(dwc_body(r, c));
}

static int dwc_space(tec_ctx *ctx, const void *p_arg, const tec_target *target,
                     tune_space *sp) {
  const topi_conv2d *p = p_arg;
  int lanes = topi_fp_lanes(ctx, target, p ? p->fp : TOPI_FP32); /* of the accumulators */
  int64_t oh, ow;
  if (lanes < 0 || topi_refuse(ctx, &topi_tmpl_depthwise_nchwc, p) ||
      topi_conv2d_out_hw(ctx, p, &oh, &ow))
    return -1;
  static const int64_t b01[] = {0, 1};
  int64_t th[4], tw[32];
  int nth = 0, ntw = 0;
  for (int64_t t = 1; t <= 4 && t <= oh; t++) th[nth++] = t;
  for (int64_t t = 1; t <= 28 && t <= ow; t++) tw[ntw++] = t;
  /* The accumulators of a tile, th * tw vectors, plus the kernel taps and an input row must fit
   * the register file: 32 vector registers on AVX-512 and AArch64 NEON. Prefer a tile width
   * that divides the output width (no tail), up to 14 (AVX-512) or 8 (NEON, 4 lanes), and no
   * wider than the registers hold (the space's rule: AVX2 or NEON with 16-channel blocks, 2 or
   * 4 vectors a pixel, 6 pixels). */
  int64_t vpb = topi_ceil_div(p->in_layout.block, lanes), regs = topi_target_regs(ctx, target, lanes);
  int64_t cap = lanes >= 16 ? 14 : 8, def_w = 1;
  if (cap > (regs - 2 * vpb) / vpb) cap = (regs - 2 * vpb) / vpb > 1 ? (regs - 2 * vpb) / vpb : 1;
  /* With 16 registers and no memory operand (ARMv7 NEON) the taps are the problem: LLVM keeps
   * the channel block's kh*kw taps in registers across the column tiles (they do not change
   * along a row), beside the bias, a zero (ReLU), the accumulators and the input row the
   * tile reads, (ow_tile - 1) * stride + kw vectors; past 16 it spills inside the hot loop
   * (rasp4b32, 256x28x28 3x3: ow_tile 7, 82 stack accesses per 63 vfma; 2, 3 per 18; 1,
   * none, and 3.1-3.4 instructions per vfma against 5.3). AArch64 (32 registers) keeps its
   * measured tiles. */
  if (topi_target_tight_regs(ctx, target)) {
    int64_t w = 1;
    while (w < cap && (p->kh * p->kw + 2 + (w + 1) + w * p->stride_w + p->kw) * vpb <= regs) w++;
    cap = w;
  }
  dwc_rule rule = {vpb, regs, p->kh * p->kw};
  while (cap > 1 && !topi_unroll_ok(dwc_body(&rule, &(topi_depthwise_nchwc_config){cap, 1, 0})))
    cap--; /* large kernels: the default's body within the cap too */
  for (int64_t t = 1; t <= cap && t <= ow; t++)
    if (ow % t == 0 || ow <= cap) def_w = t;
  if (ow > cap && def_w < cap / 2) def_w = cap; /* a prime width: a tail beats tiny tiles */
  if (tune_space_init(ctx, sp, topi_tmpl_depthwise_nchwc.name,
                      topi_tmpl_depthwise_nchwc.config_size) ||
      tune_define_field(sp, "ow_tile", "output columns per register tile",
                        offsetof(topi_depthwise_nchwc_config, ow_tile), ntw, tw, def_w) < 0 ||
      tune_define_field(sp, "oh_tile", "output rows per register tile",
                        offsetof(topi_depthwise_nchwc_config, oh_tile), nth, th, 1) < 0 ||
      tune_define_field(sp, "parallel", "parallel over (n, channel block)",
                        offsetof(topi_depthwise_nchwc_config, parallel), 2, b01, 1) < 0)
    return -1;
  dwc_rule *r = tec_ctx_alloc(ctx, sizeof *r);
  if (!r) return -1;
  *r = rule;
  const char *doc = tec_ctx_printf(ctx, "registers: oh_tile*ow_tile*%lld + %lld <= %lld; unrolled "
                                   "body: 2*oh_tile*ow_tile*%lld <= %d statements",
                                   (long long)r->vpb, 2 * (long long)r->vpb, (long long)r->regs,
                                   (long long)r->taps + 2, TOPI_UNROLL_MAX);
  return doc ? tune_space_set_rule(sp, 0x3u, dwc_rule_ok, r, doc) : -1;
}

const topi_template topi_tmpl_depthwise_nchwc = {
    "depthwise_nchwc", "depthwise conv2d NCHW[x]c, register tiles, padding partitioned",
    TOPI_PROBLEM_CONV2D, sizeof(topi_depthwise_nchwc_config), dwc_applies, dwc_declare,
    dwc_schedule, dwc_space, "topi_depthwise_nchwc_config"};

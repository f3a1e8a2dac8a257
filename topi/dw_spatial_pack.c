/* dw_spatial_pack.c — depthwise convolution NCHW -> NCHW with spatial packing: TVM's arm_cpu
 * schedule (2018), the seed tec grew from, as a three-function template.
 *
 *   pad[n, c, y, x]     = in bounds ? data[n, c, y - p, x - p] : 0            (inlined)
 *   A1[n, C, y, x, v]   = pad[n, C*VC + v, y, x]                 packed data  (every call)
 *   B1[C, m, i, j, v]   = kernel[C*VC + v, m, i, j]              packed kernel (prepare)
 *   C0[n, C, oy, ox, v] = sum_{i,j} A1[..., oy*s + i*d, ox*s + j*d, v] * B1[C, 0, i, j, v]
 *   out[n, c, oy, ox]   = epilogue(C0[n, c/VC, oy, ox, c%VC], bias[c], residual[...])
 * C0 is computed per tile of output rows inside the output's loops, its VC lanes vectorized,
 * the tile's columns unrolled so the accumulators stay in registers. */
#include <string.h>
#include "topi/internal.h"

typedef struct dsp_decl {
  topi_conv2d p;
  topi_conv_args a;
  te_tensor *pad, *dw;
  const ir_expr *ri, *rj;
} dsp_decl;

static const ir_expr *pad_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dsp_decl *d = u;
  const ir_expr *y = ir_sub(i[2], ir_int(ctx, d->p.pad_h)), *x = ir_sub(i[3], ir_int(ctx, d->p.pad_w));
  return topi_pad_read(d->a.data, d->p.in_layout, d->p.h, d->p.w, i[0], i[1], y, x, d->p.pad_h,
                       d->p.pad_w);
}

static const ir_expr *dw_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dsp_decl *d = u;
  const ir_expr *y = ir_add(ir_mul(i[2], ir_int(ctx, d->p.stride_h)),
                            topi_dilate(ctx, d->ri, d->p.dilation_h));
  const ir_expr *xx = ir_add(ir_mul(i[3], ir_int(ctx, d->p.stride_w)),
                             topi_dilate(ctx, d->rj, d->p.dilation_w));
  const ir_expr *x = TE_AT(d->pad, i[0], i[1], y, xx);
  const ir_expr *w = TE_AT(d->a.kernel, i[1], ir_int(ctx, 0), d->ri, d->rj);
  return te_sum(ir_mul(x, w), 2, (const ir_expr *[]){d->ri, d->rj}, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dsp_decl *d = u;
  return topi_epilogue_expr(ctx, &d->p.epi, TE_AT(d->dw, i[0], i[1], i[2], i[3]),
                            d->a.bias ? TE_AT(d->a.bias, i[1]) : NULL,
                            d->a.residual ? TE_AT(d->a.residual, i[0], i[1], i[2], i[3]) : NULL);
}

static int dsp_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_conv2d *p = problem;
  const char *w = NULL;
  if (topi_conv2d_check(ctx, "dw_spatial_pack", p)) w = tec_ctx_error(ctx);
  else if ((w = topi_conv2d_margin_refused(ctx, "dw_spatial_pack", p))) {
  } else if (p->groups != p->c_in || p->c_out != p->c_in)
    w = "not depthwise (needs groups == c_in == c_out)";
  else if (p->in_layout.kind != TOPI_NCHW || p->out_layout.kind != TOPI_NCHW)
    w = "reads and writes NCHW only";
  if (why) *why = w;
  return w == NULL;
}

static int dsp_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_conv2d *p = p_arg;
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, "dw_spatial_pack: problem and decl are required");
  const char *why;
  if (!dsp_applies(ctx, p, &why)) return tec_ctx_set_error(ctx, "dw_spatial_pack: %s", why);
  dsp_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  if (!d) return -1;
  d->p = *p;
  if (topi_conv_declare_args(ctx, "dw_spatial_pack", p, &d->a)) return -1;
  d->ri = te_reduce_axis_n(ctx, "ki", p->kh);
  d->rj = te_reduce_axis_n(ctx, "kj", p->kw);
  static const char *const nchw[] = {"n", "c", "y", "x"};
  d->pad = te_compute(ctx, &(te_compute_decl){.name = "pad", .ndim = 4,
                                              .shape = TE_SHAPE(ctx, p->n, p->c_in, p->h + 2 * p->pad_h,
                                                                p->w + 2 * p->pad_w),
                                              .body = pad_body, .user = d, .tag = "pad",
                                              .axis_names = nchw});
  const ir_expr *const *os = TE_SHAPE(ctx, p->n, p->c_out, d->a.oh, d->a.ow);
  d->dw = te_compute(ctx, &(te_compute_decl){.name = "dw", .ndim = 4, .shape = os, .body = dw_body,
                                             .user = d, .tag = "depthwise_conv2d_nchw",
                                             .axis_names = nchw});
  te_tensor *o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 4, .shape = os,
                                                    .body = out_body, .user = d, .tag = "epilogue",
                                                    .axis_names = nchw});
  return topi_conv_finish_decl(ctx, &topi_tmpl_dw_spatial_pack, p, &d->a, o, d, out);
}

/* split + reorder so `c` is packed innermost, then cache_write the copy into that layout and
 * inline the copy: the reader now reads the packed tensor. */
static te_tensor *pack(sch_schedule *s, te_tensor *copy, int caxis, int64_t vc) {
  sch_stage *st = sch_stage_of(s, copy);
  sch_iter *co, *ci;
  if (!st || sch_split(st, sch_axis(st, caxis), vc, &co, &ci)) return NULL;
  sch_iter *order[5];
  int n = 0;
  for (int i = 0; i < copy->ndim; i++) order[n++] = i == caxis ? co : sch_axis(st, i);
  order[n++] = ci;
  if (sch_reorder(st, n, order)) return NULL;
  te_tensor *packed = sch_cache_write(s, copy, "global");
  if (!packed || sch_compute_inline(sch_stage_of(s, copy))) return NULL;
  return packed;
}

static int dsp_schedule(const topi_decl *dc, const void *cfg_arg,
                        const tec_target *target, topi_op *op) {
  const topi_dw_spatial_pack_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_dw_spatial_pack, dc, cfg, target) || topi_op_begin(dc, op)) return -1;
  const dsp_decl *d = dc->priv;
  sch_schedule *s = op->sched;
  te_tensor *dw = d->dw, *out = dc->out;
  int64_t vc = cfg->vc;
  /* data: pad inlined into its packed copy A1 [n, C, y, x, VC] */
  if (sch_compute_inline(sch_stage_of(s, d->pad))) return -1;
  te_tensor *a0 = sch_cache_read(s, d->pad, "global", 1, &dw);
  if (!a0 || !pack(s, a0, 1, vc)) return -1;
  /* kernel: B1 [C, 1, kh, kw, VC], constant-derived: prepare */
  te_tensor *b0 = sch_cache_read(s, d->a.kernel, "global", 1, &dw);
  if (!b0 || !pack(s, b0, 0, vc)) return -1;
  /* the accumulator C0 [n, C, oy, ox, VC]; dw becomes its unpacking, inlined into out */
  te_tensor *c0 = pack(s, dw, 1, vc);
  if (!c0) return -1;
  /* out: parallel over channel blocks, C0 computed per tile of rows */
  sch_stage *so = sch_stage_of(s, out), *sc = sch_stage_of(s, c0);
  sch_iter *co, *cv, *yo, *yi, *xo, *xi;
  if (sch_split(so, sch_axis(so, 1), vc, &co, &cv) ||
      sch_split(so, sch_axis(so, 2), cfg->tile_h, &yo, &yi) ||
      sch_reorder(so, 6, (sch_iter *[]){sch_axis(so, 0), co, yo, yi, cv, sch_axis(so, 3)}) ||
      (cfg->parallel && sch_parallel(so, co)) || sch_compute_at(sc, so, yo))
    return -1;
  /* C0: rows of the tile, columns in register tiles, VC lanes vectorized */
  sch_iter *ky = sch_reduce_axis(sc, 0), *kx = sch_reduce_axis(sc, 1);
  if (sch_split(sc, sch_axis(sc, 3), cfg->tile_w, &xo, &xi) ||
      sch_reorder(sc, 8, (sch_iter *[]){sch_axis(sc, 0), sch_axis(sc, 1), sch_axis(sc, 2), xo, ky,
                                        kx, xi, sch_axis(sc, 4)}) ||
      sch_unroll(sc, ky) || sch_unroll(sc, kx) || sch_unroll(sc, xi) ||
      sch_vectorize(sc, sch_axis(sc, 4)))
    return -1;
  return 0;
}

/* The space's rule: the unrolled body (the window's taps times tile_w columns and their
 * zeroing, twice for a peeled tail tile) within TOPI_UNROLL_MAX; one column always in. */
static int dsp_rule_ok(const void *data, const void *config) {
  const topi_dw_spatial_pack_config *c = config;
  return c->tile_w == 1 || topi_unroll_ok(2 * c->tile_w * (*(const int64_t *)data + 1));
}

static int dsp_space(tec_ctx *ctx, const void *p_arg, const tec_target *target,
                     tune_space *sp) {
  const topi_conv2d *p = p_arg;
  int lanes = topi_target_lanes(ctx, target);
  int64_t oh, ow;
  if (lanes < 0 || topi_refuse(ctx, &topi_tmpl_dw_spatial_pack, p) ||
      topi_conv2d_out_hw(ctx, p, &oh, &ow))
    return -1;
  static const int64_t vcs[] = {1, 2, 4, 8, 16, 32}, b01[] = {0, 1};
  int64_t th[8], tw[16];
  int nth = 0, ntw = 0;
  for (int64_t t = 1; t <= 8 && t <= oh; t++) th[nth++] = t;
  for (int64_t t = 1; t <= 16 && t <= ow; t++) tw[ntw++] = t;
  int64_t vdef = lanes >= 4 ? lanes : 4, *taps = tec_ctx_alloc(ctx, sizeof *taps), dw = 4;
  if (!taps) return -1;
  *taps = p->kh * p->kw;
  while (dw > 1 && !topi_unroll_ok(2 * dw * (*taps + 1))) dw--;
  /* 16 registers (ARMv7 NEON): the kh*kw taps stay in registers across the column tiles
   * (LLVM hoists them), beside the tile's accumulators and the input loads in flight. LLVM 14
   * holds 4 columns; LLVM 19 spills past one (rasp4b32 256x28x28, per iteration: tile_w 4, 32
   * q/d loads + 4 stores; 2, 3 loads; 1, none), while one column costs LLVM 14 19 % more
   * instructions (6.39 -> 7.59 per MACs/4; LLVM 19 at 1: 4.18). So the tile is sized for the
   * allocator tec is built with: 1 column past LLVM 14 (15-18 unmeasured: the safe side).
   * tests/test_arm_tiles.c holds it on both; docs/arm.md */
  if (topi_target_tight_regs(ctx, target) && TEC_LLVM_VERSION_MAJOR > 14) dw = 1;
  if (tune_space_init(ctx, sp, topi_tmpl_dw_spatial_pack.name,
                      topi_tmpl_dw_spatial_pack.config_size) ||
      tune_define_field(sp, "vc", "channels per packed block (vector lanes)",
                        offsetof(topi_dw_spatial_pack_config, vc), 6, vcs, vdef > 32 ? 32 : vdef) < 0 ||
      tune_define_field(sp, "tile_h", "output rows per tile of the packed accumulator",
                        offsetof(topi_dw_spatial_pack_config, tile_h), nth, th, th[nth > 1 ? 1 : 0]) < 0 ||
      tune_define_field(sp, "tile_w", "output columns per register tile",
                        offsetof(topi_dw_spatial_pack_config, tile_w), ntw, tw,
                        tw[(ntw > dw ? dw : ntw) - 1]) < 0 ||
      tune_define_field(sp, "parallel", "parallel over channel blocks",
                        offsetof(topi_dw_spatial_pack_config, parallel), 2, b01, 1) < 0)
    return -1;
  const char *doc = tec_ctx_printf(ctx, "unrolled body: 2*tile_w*%lld <= %d statements",
                                   (long long)*taps + 1, TOPI_UNROLL_MAX);
  return doc ? tune_space_set_rule(sp, 0x4u, dsp_rule_ok, taps, doc) : -1;
}

const topi_template topi_tmpl_dw_spatial_pack = {
    "dw_spatial_pack", "depthwise conv2d NCHW, spatial packing (TVM arm_cpu 2018)",
    TOPI_PROBLEM_CONV2D, sizeof(topi_dw_spatial_pack_config), dsp_applies, dsp_declare,
    dsp_schedule, dsp_space, "topi_dw_spatial_pack_config"};

/* conv2d_nchwc.c — conv2d NCHW[x]c (or NCHW) -> NCHW[y]c, direct, as a three-function template.
 *
 *   kp[O, I, i, j, u, v]   = kernel[O*y + v, I*x + u, i, j]   (0 past c_out / c_in)  prepare
 *   bias_p[O, v]           = bias[O*y + v]                    (0 past c_out)         prepare
 *   conv[n, O, oy, ox, v]  = bias_p[O, v] + sum_{I, i, j, u} pad(data)[n, I*x + u, oy*s + i*d - p, ox*s + j*d - p]
 *                                             * kp[O, I, i, j, u, v]   (the bias: the sum's init)
 *   out[n, O, oy, ox, v]   = epilogue(conv[...] + residual[n, O, oy, ox, v])
 *
 * The padding: pad[n, I, y, x, u] (topi_pad_read) either inlined into conv's reads (pad_copy
 * 0: the compares stay in the hot loop until loop partitioning peels them off the interior
 * rows/columns) or computed once per call, root and parallel (pad_copy 1). An input with a
 * margin >= the padding (NCHW16c+m1, pad 1) has no pad stage: conv reads the buffer's zero ring
 * in place, with no compare and no copy (pad_copy is then only 0). An output margin: out is
 * the window of the caller's buffer, its ring never written. A 1x1 stride-1
 * unpadded convolution is a GEMM over the packed layout: conv is declared over the flattened
 * output positions m = oy*OW + ox ([n][O][OH*OW][y]), so a register tile may cross output rows.
 * NCHW input (a network's first layer, c_in = 3) is read in place with x = the largest divisor
 * of c_in up to 16.
 *
 * The schedule (ow_tile = T output positions, oc_tiles = B output-channel blocks, oh_tile = R):
 *
 *   for (n, O/B, oy/R) fused, parallel               (gemm: (n, O/B, m/T), R = 1)
 *                       (parallel 2, rows first: (n, oy/R, O/B); gemm: (n, oy/R, O/B), then
 *                        the R rows' positions / T)
 *     for oy%R / H                                   (what partitioning splits at padded rows)
 *       for ox/T                                     conv computed here: H x T x B x y floats
 *         conv.tile = bias_p[O..O+B) (0 without a bias) (H*T*B*y/lanes accumulator registers)
 *         for I/ic_split, i, j, I%ic_split (unrolled if ic_unroll), u unrolled
 *           for h < H, t < T unrolled, b < B unrolled, v < y vectorized (one broadcast live)
 *             conv.tile[h, t, b, v] += pad[n, I, (oy+h)*s + i*d, (ox+t)*s + j*d, u]
 *                                      * kp[O+b, I, i, j, u, v]
 *         for h, b, t unrolled, v vectorized: out = epilogue(conv.tile[..]) (no extra pass)
 *
 * H = oh_reg rows per register tile (direct form only; 1 by default, and without its loop):
 * ResNet's 7x7 layers hold 7 x 2 blocks in one row, 2 x 7 x 2 in two; the rows past the last
 * whole H are a shorter tile that loop partitioning peels.
 *
 * parallel 2 orders the tasks rows first: with the runtime's contiguous static ranges each
 * thread then reads its own rows of the input, where with channel tiles first (parallel 1)
 * every thread reads all of it, for its share of the output channels. Where the input is
 * larger than the kernel, that input traffic is what the layer waits on at 2 threads.
 *
 * On AArch64 (multiply-add by lane) the x = 4 broadcasts pad[.., u] of a position become one
 * q load and fmla by element (codegen_mem.c), so the default tile keeps T input vectors live
 * and two input-channel blocks per unrolled step (ic_split 2, ic_unroll 1).
 */
#include <string.h>
#include "topi/internal.h"

#define WHO "conv2d_nchwc"

typedef struct cn_decl {
  topi_conv2d p;
  topi_conv_args a;
  int64_t xb, yb;      /* input channels per block (read), output channels per block */
  int64_t nib, nob;    /* input / output channel blocks */
  int gemm;            /* 1x1, stride 1, no padding: conv over flattened positions */
  te_tensor *pad;      /* the zero-padded input [n][I][h + 2p][w + 2p][x] (NULL: no padding) */
  te_tensor *kp, *bp, *conv;
  const ir_expr *ric, *rky, *rkx, *ru;
} cn_decl;

/* kp[O, I, i, j, u, v] = kernel[O*y + v, I*x + u, i, j], zero past the channel counts. */
static const ir_expr *kp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  cn_decl *d = u;
  return topi_kernel_at(ctx, d->a.kernel, ir_add(ir_mul(i[0], ir_int(ctx, d->yb)), i[5]),
                        d->p.c_out, d->p.c_out % d->yb != 0,
                        ir_add(ir_mul(i[1], ir_int(ctx, d->xb)), i[4]), d->p.c_in,
                        d->p.c_in % d->xb != 0, i[2], i[3]);
}

/* pad[n, I, y, x, u] = data[n, I*x + u, y - p, x - p], zero outside (inlined or a copy) */
static const ir_expr *pad_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  cn_decl *d = u;
  const ir_expr *c = ir_add(ir_mul(i[1], ir_int(ctx, d->xb)), i[4]);
  return topi_pad_read(d->a.data, d->p.in_layout, d->p.h, d->p.w, i[0], c,
                       ir_sub(i[2], ir_int(ctx, d->p.pad_h)), ir_sub(i[3], ir_int(ctx, d->p.pad_w)),
                       d->p.pad_h, d->p.pad_w);
}

static const ir_expr *conv_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  cn_decl *d = u;
  const ir_expr *y, *x, *v;
  if (d->gemm) {
    const ir_expr *w = ir_int(ctx, d->a.ow);
    y = ir_floordiv(i[2], w), x = ir_floormod(i[2], w), v = i[3];
  } else {
    y = ir_add(ir_mul(i[2], ir_int(ctx, d->p.stride_h)), topi_dilate(ctx, d->rky, d->p.dilation_h));
    x = ir_add(ir_mul(i[3], ir_int(ctx, d->p.stride_w)), topi_dilate(ctx, d->rkx, d->p.dilation_w));
    v = i[4];
  }
  const ir_expr *c = ir_add(ir_mul(d->ric, ir_int(ctx, d->xb)), d->ru), *a;
  if (d->pad) a = TE_AT(d->pad, i[0], d->ric, y, x, d->ru);
  else { /* no padding, or all of it in the input's margin: read in place, no compare */
    if (d->p.pad_h) y = ir_sub(y, ir_int(ctx, d->p.pad_h));
    if (d->p.pad_w) x = ir_sub(x, ir_int(ctx, d->p.pad_w));
    a = topi_pad_read(d->a.data, d->p.in_layout, d->p.h, d->p.w, i[0], c, y, x, d->p.pad_h,
                      d->p.pad_w);
  }
  const ir_expr *w = TE_AT(d->kp, i[1], d->ric, d->rky, d->rkx, d->ru, v);
  const ir_expr *sum = te_sum(ir_mul(topi_fp_widen(d->p.fp, a), topi_fp_widen(d->p.fp, w)), 4,
                              (const ir_expr *[]){d->ric, d->rky, d->rkx, d->ru}, NULL);
  /* the accumulators start from the bias (te_reduce_init): no add per output vector after */
  return d->bp ? te_reduce_init(sum, topi_fp_widen(d->p.fp, TE_AT(d->bp, i[1], v))) : sum;
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  cn_decl *d = u;
  const ir_expr *acc =
      d->gemm ? TE_AT(d->conv, i[0], i[1], ir_add(ir_mul(i[2], ir_int(ctx, d->a.ow)), i[3]), i[4])
              : TE_AT(d->conv, i[0], i[1], i[2], i[3], i[4]);
  return topi_fp_epilogue(ctx, d->p.fp, &d->p.epi, acc, NULL, /* the bias started conv */
                          d->a.residual ? TE_AT(d->a.residual, i[0], i[1], i[2], i[3], i[4])
                                        : NULL);
}

/* 1 if some padding lies past the input's margin (the rest is read from the ring in place):
 * the padded input stage (inlined compares or the copy, pad_copy) exists. */
static int cn_padded(const topi_conv2d *p) {
  return p->pad_h > p->in_layout.margin || p->pad_w > p->in_layout.margin;
}

static int cn_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_conv2d *p = problem;
  const char *w = NULL;
  if (topi_conv2d_check(ctx, WHO, p)) w = tec_ctx_error(ctx);
  else if (p->groups > 1)
    w = tec_ctx_printf(ctx, "groups = %lld is not supported (only groups = 1; depthwise "
                            "convolutions: depthwise_nchwc or dw_spatial_pack)",
                       (long long)p->groups);
  else
    w = topi_conv2d_blocked_out_why(ctx, p);
  if (why) *why = w;
  return w == NULL;
}

static int cn_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_conv2d *p = p_arg;
  return topi_conv2d_nchwc_declare_on(ctx, p, NULL, out);
}

static int declare(tec_ctx *ctx, const topi_conv2d *p, te_tensor *data, int direct,
                   topi_decl *out);

int topi_conv2d_nchwc_declare_on(tec_ctx *ctx, const topi_conv2d *p, te_tensor *data,
                                 topi_decl *out) {
  return declare(ctx, p, data, 0, out);
}

int topi_conv2d_nchwc_declare_rows(tec_ctx *ctx, const topi_conv2d *p, te_tensor *data,
                                   topi_decl *out) {
  return declare(ctx, p, data, 1, out);
}

/* direct: conv over [n][O][oy][ox][y] even for a 1x1 (no GEMM form) */
static int declare(tec_ctx *ctx, const topi_conv2d *p, te_tensor *data, int direct,
                   topi_decl *out) {
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, WHO ": problem and decl are required");
  if (topi_refuse(ctx, &topi_tmpl_conv2d_nchwc, p)) return -1;
  cn_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  if (!d) return -1;
  d->p = *p;
  if (topi_conv_declare_args(ctx, WHO, p, &d->a)) return -1;
  if (data) d->a.data = data; /* a producer's output (dw_pw_fused), in_layout's shape */
  d->xb = p->in_layout.kind == TOPI_NCHWC ? p->in_layout.block : topi_divisor_upto(p->c_in, 16);
  d->yb = p->out_layout.block;
  d->nib = topi_ceil_div(p->c_in, d->xb);
  d->nob = topi_ceil_div(p->c_out, d->yb);
  d->gemm = !direct && topi_conv2d_is_pointwise(p);
  d->ric = te_reduce_axis_n(ctx, "ic", d->nib);
  d->rky = te_reduce_axis_n(ctx, "ky", p->kh);
  d->rkx = te_reduce_axis_n(ctx, "kx", p->kw);
  d->ru = te_reduce_axis_n(ctx, "icv", d->xb);
  if (cn_padded(p)) {
    static const char *const pn[] = {"n", "I", "y", "x", "u"};
    d->pad = te_compute(ctx, &(te_compute_decl){
                                 .name = "pad", .ndim = 5,
                                 .shape = TE_SHAPE(ctx, p->n, d->nib, p->h + 2 * p->pad_h,
                                                   p->w + 2 * p->pad_w, d->xb),
                                 .body = pad_body, .user = d, .tag = "pad", .axis_names = pn});
    if (!d->pad) return -1;
  }
  static const char *const kpn[] = {"O", "I", "i", "j", "u", "v"};
  d->kp = te_compute(ctx, &(te_compute_decl){
                              .name = "kernel_p", .ndim = 6,
                              .shape = TE_SHAPE(ctx, d->nob, d->nib, p->kh, p->kw, d->xb, d->yb),
                              .body = kp_body, .user = d, .tag = "pack_kernel",
                              .axis_names = kpn});
  if (d->a.bias && !(d->bp = topi_pack_bias(ctx, d->a.bias, p->c_out, d->yb))) return -1;
  static const char *const n5[] = {"n", "oc", "oy", "ox", "ocv"}, *const n4[] = {"n", "oc", "m", "ocv"};
  d->conv = te_compute(
      ctx, &(te_compute_decl){
               .name = "conv", .ndim = d->gemm ? 4 : 5,
               .shape = d->gemm ? TE_SHAPE(ctx, p->n, d->nob, d->a.oh * d->a.ow, d->yb)
                                : TE_SHAPE(ctx, p->n, d->nob, d->a.oh, d->a.ow, d->yb),
               .body = conv_body, .user = d, .tag = "conv2d_nchwc",
               .axis_names = d->gemm ? n4 : n5});
  te_tensor *o = te_compute(ctx, &(te_compute_decl){
                                     .name = "out", .ndim = 5,
                                     .shape = TE_SHAPE(ctx, p->n, d->nob, d->a.oh, d->a.ow, d->yb),
                                     .body = out_body, .user = d, .tag = "epilogue",
                                     .axis_names = n5});
  if (!d->kp || !d->conv || !o || topi_set_margin(ctx, WHO, o, p->out_layout)) return -1;
  return topi_conv_finish_decl(ctx, &topi_tmpl_conv2d_nchwc, p, &d->a, o, d, out);
}

/* out's loops: (n, O/B, row tiles) fused [parallel], rows of a task, column tiles; the tile
 * [oh_reg rows x] O%B x T x y inside (unrolled, lanes vectorized). Returns the tile loop conv
 * is computed at.
 * rows > 0 (GEMM form): (n, tiles of `rows` output rows) fused [parallel] outermost, returned in
 * *row_loop, then O/B, then the tile's positions (rows x ow flattened) / T. */
static sch_iter *schedule_out(const cn_decl *d, const topi_conv2d_nchwc_config *cfg,
                              sch_stage *so, int64_t rows, sch_iter **row_loop) {
  sch_iter *n = sch_axis(so, 0), *v = sch_axis(so, 4), *oo, *oi, *xo, *xi, *par;
  int by_rows = cfg->parallel == 2; /* tasks rows first, the channel tiles inside */
  if (sch_split(so, sch_axis(so, 1), cfg->oc_tiles, &oo, &oi)) return NULL;
  if (rows > 0) {
    sch_iter *yo, *yi, *m;
    if (sch_split(so, sch_axis(so, 2), rows, &yo, &yi) || sch_fuse(so, yi, sch_axis(so, 3), &m) ||
        sch_split(so, m, cfg->ow_tile, &xo, &xi) ||
        sch_reorder(so, 7, (sch_iter *[]){n, yo, oo, xo, oi, xi, v}) || sch_fuse(so, n, yo, &par) ||
        (by_rows && sch_fuse(so, par, oo, &par)))
      return NULL;
    *row_loop = par;
  } else if (d->gemm) {
    sch_iter *m;
    if (sch_fuse(so, sch_axis(so, 2), sch_axis(so, 3), &m) ||
        sch_split(so, m, cfg->ow_tile, &xo, &xi) ||
        sch_reorder(so, 6, (sch_iter *[]){n, oo, xo, oi, xi, v}) || sch_fuse(so, n, oo, &par) ||
        sch_fuse(so, par, xo, &par))
      return NULL;
    xo = par;
  } else {
    sch_iter *yo, *yi, *yr = NULL;
    if (sch_split(so, sch_axis(so, 2), cfg->oh_tile, &yo, &yi) ||
        (cfg->oh_reg > 1 && sch_split(so, yi, cfg->oh_reg, &yi, &yr)) ||
        sch_split(so, sch_axis(so, 3), cfg->ow_tile, &xo, &xi))
      return NULL;
    /* the tile's rows (oh_reg > 1) between the column tiles and the blocks */
    sch_iter *ord[9], **q = ord;
    if (by_rows) *q++ = n, *q++ = yo, *q++ = oo;
    else *q++ = n, *q++ = oo, *q++ = yo;
    *q++ = yi, *q++ = xo;
    if (yr) *q++ = yr;
    *q++ = oi, *q++ = xi, *q++ = v;
    if (sch_reorder(so, (int)(q - ord), ord) ||
        sch_fuse(so, n, by_rows ? yo : oo, &par) || sch_fuse(so, par, by_rows ? oo : yo, &par) ||
        (yr && sch_unroll(so, yr)))
      return NULL;
  }
  if ((cfg->parallel && sch_parallel(so, par)) || sch_unroll(so, oi) || sch_unroll(so, xi) ||
      sch_vectorize(so, v))
    return NULL;
  return xo;
}

static int schedule_in(const topi_decl *dc, const topi_conv2d_nchwc_config *cfg,
                       sch_schedule *s, int64_t rows, sch_iter **row_loop, int far_pairs);
/* the GEMM form's unrolled input-channel blocks, nib/ic_split apart (schedule_in): past LLVM
 * 14, whose LSR reaches the far block by register offsets (no pairs, and a register per
 * position set up per tile: MobileNet v1's body 180.3 -> 180.6 M instructions) */
#define FAR_PAIRS(d, cfg) \
  (TEC_LLVM_VERSION_MAJOR > 14 && (d)->gemm && (cfg)->ic_unroll && (cfg)->ic_split > 1)

/* Targets with multiply-add by lane (AArch64): the packed kernel with the tile's oc_tiles
 * blocks side by side, kp[O/B, I, i, j, u, O%B, v] (cache_write of kp split and reordered, kp
 * inlined; prepare packs it, the run reads it), so the B weight vectors of one input lane are
 * adjacent and load in pairs (ldp q reaches +-1008 bytes; block O+1 of [O][I][i][j][u][v] is a
 * whole block's kernel away, 4 KB on mbv1_pw_mid, so its vectors were single ldr). mbv1_pw_mid
 * on rasp4b, LLVM 19: 15,883,231 -> 15,481,379 instructions (1.237 -> 1.205 per MACs/4;
 * docs/arm.md). x86 reads weights as memory operands: unchanged there. */
static int kp_interleave(const topi_decl *dc, const topi_conv2d_nchwc_config *cfg,
                         sch_schedule *s) {
  const cn_decl *d = dc->priv;
  int far = FAR_PAIRS(d, cfg), ob_in = cfg->oc_tiles > 1 && d->nob % cfg->oc_tiles == 0;
  if (!far && !ob_in) return 0;
  sch_stage *sk = sch_stage_of(s, d->kp);
  sch_iter *oo = sk ? sch_axis(sk, 0) : NULL, *ob = NULL, *ia = NULL, *ib = sk ? sch_axis(sk, 1) : NULL;
  if (!sk || (ob_in && sch_split(sk, sch_axis(sk, 0), cfg->oc_tiles, &oo, &ob)) ||
      (far && sch_split(sk, sch_axis(sk, 1), d->nib / cfg->ic_split, &ia, &ib)))
    return -1;
  /* [O/B][I % (nib/ic_split)][i][j][I / (nib/ic_split)][u][O%B][v]: one step's weights
   * contiguous (far_pairs: the step's blocks I and I + nib/ic_split side by side too) */
  sch_iter *ord[8], **q = ord;
  *q++ = oo, *q++ = ib, *q++ = sch_axis(sk, 2), *q++ = sch_axis(sk, 3);
  if (ia) *q++ = ia;
  *q++ = sch_axis(sk, 4);
  if (ob) *q++ = ob;
  *q++ = sch_axis(sk, 5);
  if (sch_reorder(sk, (int)(q - ord), ord)) return -1;
  te_tensor *kc = sch_cache_write(s, d->kp, "global");
  return kc ? sch_compute_inline(sk) : -1;
}


static int cn_schedule(const topi_decl *dc, const void *cfg_arg,
                       const tec_target *target, topi_op *op) {
  const topi_conv2d_nchwc_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_conv2d_nchwc, dc, cfg, target) ||
      topi_fp_target_check(dc->ctx, WHO, ((const cn_decl *)dc->priv)->p.fp, target) ||
      topi_op_begin(dc, op))
    return -1;
  int lane = topi_target_lane_fma(dc->ctx, target);
  if (lane < 0 || schedule_in(dc, cfg, op->sched, 0, NULL, lane)) return -1;
  return lane ? kp_interleave(dc, cfg, op->sched) : 0;
}

int topi_conv2d_nchwc_schedule_in(const topi_decl *dc, const topi_conv2d_nchwc_config *cfg,
                                  sch_schedule *s, int64_t rows, sch_iter **row_loop) {
  return schedule_in(dc, cfg, s, rows, row_loop, 0);
}

/* The pointwise of a pw -> stride-2 dw chain (issue 39, bench/pw_dw.c): conv (declared by
 * topi_conv2d_nchwc_declare_rows: [n][O][oy][ox][y]) computed at loop `at` of `consumer`, its
 * buffer stored at the top level: lower/store_at.c slides it along oy, the dimension the
 * consumer's rows move (each iteration computes the rows the previous one did not, into a
 * buffer folded to a power of two of rows), and out inlined into the consumer (the epilogue
 * applied where the consumer reads). conv's loops: (n, O/B), oy, ox/T, the reduction as
 * schedule_in's, then the register tile T x B x y (unrolled, vectorized), accumulated in
 * place: the tile's addresses share one folded row, so LLVM keeps them in registers across
 * the reduction. (A cache_write tile computed inside conv would be the usual register tile,
 * but a stage computed inside a slid one is bounded by the unslid range: lower/bound.c,
 * lower_store_finish; it read the wrong rows.) */
int topi_conv2d_nchwc_schedule_slid(const topi_decl *dc, const topi_conv2d_nchwc_config *cfg,
                                    sch_schedule *s, sch_stage *consumer, sch_iter *at) {
  const cn_decl *d = dc->priv;
  if (d->gemm || d->pad || d->p.kh != 1 || d->p.kw != 1 || d->p.stride_h != 1 ||
      d->p.stride_w != 1)
    return tec_ctx_set_error(dc->ctx, WHO ": a slid schedule needs a 1x1, stride 1, unpadded "
                                          "conv declared by topi_conv2d_nchwc_declare_rows");
  sch_stage *so = sch_stage_of(s, dc->out), *sc = sch_stage_of(s, d->conv);
  if (!so || !sc || sch_compute_inline(so)) return -1;
  sch_iter *oo, *oi, *xo, *xi, *ico, *ici, *u = sch_reduce_axis(sc, 3), *f;
  if (sch_split(sc, sch_axis(sc, 1), cfg->oc_tiles, &oo, &oi) ||
      sch_split(sc, sch_axis(sc, 3), cfg->ow_tile, &xo, &xi) ||
      sch_split(sc, sch_reduce_axis(sc, 0), cfg->ic_split, &ico, &ici) ||
      sch_reorder(sc, 12, (sch_iter *[]){sch_axis(sc, 0), oo, sch_axis(sc, 2), xo, ico,
                                         sch_reduce_axis(sc, 1), sch_reduce_axis(sc, 2), ici, u,
                                         xi, oi, sch_axis(sc, 4)}) ||
      sch_fuse(sc, sch_axis(sc, 0), oo, &f) || (cfg->ic_unroll && sch_unroll(sc, ici)) ||
      sch_unroll(sc, oi) || sch_unroll(sc, xi) || sch_vectorize(sc, sch_axis(sc, 4)) ||
      (d->xb <= 16 && sch_unroll(sc, u)) || sch_compute_at(sc, consumer, at) ||
      sch_store_root(sc))
    return -1;
  return 0;
}

/* far_pairs (AArch64, GEMM form): the ic_split blocks unrolled in one step are nib/ic_split
 * blocks apart (I = u * nib/ic_split + loop), not adjacent: each step's blocks then lie past
 * a load's offset range from each other, so LLVM gives each its own base register and loads
 * its positions in pairs (ldp q); adjacent blocks (12544 bytes apart on mbv1_pw_mid) share one
 * base, the second's positions out of ldp's +-1008 reach: 8 single ldr per step. */
static int schedule_in(const topi_decl *dc, const topi_conv2d_nchwc_config *cfg,
                       sch_schedule *s, int64_t rows, sch_iter **row_loop, int far_pairs) {
  const cn_decl *d = dc->priv;
  if (rows > 0 && !d->gemm)
    return tec_ctx_set_error(dc->ctx, WHO ": row tiles (rows = %lld) need the GEMM form (1x1, "
                                          "stride 1, no padding)", (long long)rows);
  sch_stage *so = sch_stage_of(s, dc->out), *sc = sch_stage_of(s, d->conv);
  if (!so || !sc) return -1;
  sch_iter *own_rows = NULL;
  if (rows == 0 && d->gemm && cfg->parallel == 2) /* rows first: oh_tile rows per task */
    rows = cfg->oh_tile, row_loop = &own_rows;
  sch_iter *at = schedule_out(d, cfg, so, rows, row_loop);
  if (!at || sch_compute_at(sc, so, at)) return -1;
  /* conv: n and rows (extent 1 here), the reduction, then the tile O%B x T x y */
  sch_iter *ico, *ici, *ky = sch_reduce_axis(sc, 1), *kx = sch_reduce_axis(sc, 2);
  sch_iter *u = sch_reduce_axis(sc, 3);
  if (far_pairs && FAR_PAIRS(d, cfg)) {
    if (sch_split(sc, sch_reduce_axis(sc, 0), d->nib / cfg->ic_split, &ici, &ico)) return -1;
  } else if (sch_split(sc, sch_reduce_axis(sc, 0), cfg->ic_split, &ico, &ici))
    return -1;
  int nd = d->conv->ndim, k = 0;
  sch_iter *order[10];
  int tile_rows = !d->gemm && cfg->oh_reg > 1; /* the tile's rows unrolled inside u */
  order[k++] = sch_axis(sc, 0);
  if (!d->gemm && !tile_rows) order[k++] = sch_axis(sc, 2);
  order[k++] = ico, order[k++] = ky, order[k++] = kx, order[k++] = ici, order[k++] = u;
  if (tile_rows) order[k++] = sch_axis(sc, 2);
  /* positions outside blocks: one broadcast of the input live at a time, B weight vectors */
  order[k++] = sch_axis(sc, nd - 2), order[k++] = sch_axis(sc, 1), order[k++] = sch_axis(sc, nd - 1);
  if (sch_reorder(sc, k, order) || (cfg->ic_unroll && sch_unroll(sc, ici)) ||
      (tile_rows && sch_unroll(sc, sch_axis(sc, 2))) || sch_unroll(sc, sch_axis(sc, 1)) ||
      sch_unroll(sc, sch_axis(sc, nd - 2)) || sch_vectorize(sc, sch_axis(sc, nd - 1)) ||
      (d->xb <= 16 && sch_unroll(sc, u)))
    return -1;
  if (!d->pad) return 0;
  /* the padded input: inlined into the reads, or copied once (root, rows in parallel) */
  sch_stage *sp = sch_stage_of(s, d->pad);
  if (!sp) return -1;
  if (!cfg->pad_copy) return sch_compute_inline(sp);
  sch_iter *f;
  if (sch_fuse(sp, sch_axis(sp, 0), sch_axis(sp, 1), &f) || sch_fuse(sp, f, sch_axis(sp, 2), &f) ||
      (cfg->parallel && sch_parallel(sp, f)) || sch_vectorize(sp, sch_axis(sp, 4)))
    return -1;
  return 0;
}


/* The default register tile: the most multiply-adds per load that fits the registers. Per
 * input-channel block of x lanes a T x B tile does x*T*B*vpb multiply-adds and loads x*B*vpb
 * weight vectors and the inputs: x broadcasts per position, or (lane: multiply-add by lane,
 * x a multiple of the lanes) one vector per position and lane group, whose lanes the
 * multiply-adds read. Registers: the accumulators, one weight vector per block, and one
 * broadcast (lane: the T input vectors of a group stay live). oc_tiles divides the blocks and
 * in the GEMM form ow_tile divides the positions: their tails would keep a guard inside the
 * tile (the tile loops are inside the fused parallel loop, which loop partitioning cannot
 * split); a partial column tile is peeled: with lanes it costs the loads of its own columns,
 * without (the x86 defaults, as measured) it counts as waste. */
#define TILE_WBYTES (1 << 20)   /* the kernel bytes of one oc tile that stay in L2 */
#define TILE_L1BYTES (32 << 10) /* ... and that stay in L1 */

/* The tile's multiply-adds per load (x86 model below) for r rows of t columns, c blocks. */
static double tile_rate(int64_t t, int64_t r, int64_t c, int64_t vpb, double wcost) {
  return (double)(t * r * c * vpb) / ((double)(t * r) + wcost * (double)(c * vpb));
}

/* max_r: the most rows per tile the space offers (the default takes one row on lane targets) */
static void default_tile(int64_t ext, int64_t oh, int64_t max_r, int64_t nob, int64_t vpb,
                         int64_t xb, int64_t lanes, int lane, int regs, int tight, int gemm,
                         int64_t block_wbytes, int64_t lane_pos, int64_t *bt, int64_t *br,
                         int64_t *bc) {
  double best = -1;
  *bt = *bc = *br = 1;
  int64_t pos_loads = lane ? xb / lanes : xb; /* input loads per position */
  /* 16 registers, no memory operand, no multiply-add by lane (ARMv7 NEON): every input lane
   * is a broadcast load (vld1.32 {d[]}) with an address register of its own (no offset
   * form), so LLVM keeps the tile's x broadcasts per position live and runs out of general
   * registers, and LLVM loads a step's broadcasts ahead: the tile's accumulators, a weight
   * vector per block and x broadcasts per position within the registers (GEMM form; rasp4b32
   * 256x28x28 1x1, per hot-loop iteration: 2 x 4, 23 vector spills per 32 vfma, 4.6
   * instructions per vfma; 2 x 2, no vector spill, one general register reloaded, 4.1); a
   * direct window keeps several input rows' broadcasts live: one block and at most regs / 4
   * positions (128x28x28 3x3: 2 x 2 x 3 rows, 26 vector spills per 36 vfma; 2 x 1 x 2 rows,
   * none, 3.2 instructions per vfma). tests/test_arm_tiles.c reads the assembly. */
  int small = !lane && tight;
  if (lane) max_r = 1;
  for (int64_t r = 1; r <= max_r; r++) /* rows outermost: a tie keeps one row */
    for (int64_t t = 1; t <= 32 && t <= ext; t++)
      for (int64_t c = 1; c <= 8 && c <= nob; c++) {
        int64_t acc = t * r * c * vpb, wl = xb * c * vpb, tail = ext % t;
        if (acc + c * vpb + (lane ? t * r + 1 : 1) > regs || nob % c || (gemm && tail)) continue;
        if (lane_pos && t * r > lane_pos) continue;
        if (small && (gemm ? acc + c * vpb + t * r * xb > regs : c > 1 || t * r * 4 > regs))
          continue;
        /* the kernel slice of an oc tile is read again for every row and column tile: more
         * than TILE_WBYTES of it streams from L3 each time (ResNet's 512x7x7: 4 blocks = 1.2
         * MB, 0.85x oneDNN; 2 blocks: 1.29 ms against 1.67, measured) */
        if (c > 1 && c * block_wbytes > TILE_WBYTES) continue;
        double loads = (double)(ext / t) * (double)(t * pos_loads + wl) +
                       (tail ? (double)(tail * pos_loads + wl) : 0.0);
        double score = (double)(ext * xb * c * vpb) / loads;
        if (!lane) { /* the model the x86 defaults were measured with: a partial tile as waste,
                      * counted twice (its own columns' lost work and a narrower tile's fewer
                      * multiply-adds per load): ResNet's 256x14x14 -> 512 stride 2 (7 columns),
                      * 4 + 3 columns x 4 blocks against 7 x 2, 0.87x / 0.98x oneDNN (1 thread),
                      * 0.88x / 0.97x (2 threads), Xeon family 6 model 167, round-robin */
          double util = (double)ext / (double)(topi_ceil_div(ext, t) * t);
          /* a direct layer whose tile's kernel slice outgrows L1 streams the weights from L2
           * for every column tile: a weight vector counts as 3 loads, a broadcast (from L1) as
           * one (ResNet-18's 3x3 layers, 1 thread, with the scheduler option of
           * codegen_llvm/target.c: 14 x 2 against 5 x 4 / 6 x 4, 128x28x28 -> 256 stride 2
           * 162-170 -> 178-181 GFLOP/s, 64x56x56 -> 128 stride 2 171-173 -> 179-181,
           * 256x14x14 -> 256 166 -> 176-178; 28 x 1, all broadcasts, 145-151; Xeon family 6
           * model 167) */
          double wcost = !gemm && c * block_wbytes > TILE_L1BYTES ? 3.0 : 1.0;
          /* rows: the oh % r rows left over run as a shorter tile (loop partitioning peels
           * them), so the rate is the harmonic mix of the full tiles' and the tail's. Two rows
           * of 7 on ResNet's 7x7 layers (28 accumulators where one row holds 14), bench/run
           * conv, 1 / 2 threads: 512x7x7 1.00 -> 1.14 / 1.07x oneDNN, 256x14x14 -> 512
           * stride 2 1.01 -> 1.08 / 1.06x (Xeon family 6 model 167, quiet) */
          double rate = tile_rate(t, r, c, vpb, wcost);
          if (oh % r)
            rate = (double)oh / ((double)(oh - oh % r) / rate +
                                 (double)(oh % r) / tile_rate(t, oh % r, c, vpb, wcost));
          score = util * util * rate;
        }
        if (score > best + 1e-9) best = score, *bt = t, *br = r, *bc = c;
      }
}

/* The space's rule (tune_space.rule, AutoTVM's multi_filter): a register tile whose
 * accumulators (ow_tile x oc_tiles x vpb vectors), the weight vectors of one input lane
 * (oc_tiles x vpb) and the input broadcast (1; lane: the tile's T input vectors and one more)
 * exceed the target's vector registers is not in the space, nor an unrolled body of more than
 * CN_BODY_MAX vector multiply-adds (the tile times the unrolled input lanes, x when x <= 16,
 * times ic_split when ic_unroll); a 1 x 1 tile is always in (blocks wider than the registers
 * leave nothing smaller), not unrolled past the cap. Such tiles spill, and LLVM's time and memory grow faster than
 * the body (pw12 of MobileNet on AVX-512, tec compile, Xeon family 6 model 167, loaded: 336
 * multiply-adds 0.5-1.0 s, 672 1.4 s, 896 3.1 s, 1344 5.3 s, 2688 13 s, 10752 129 s and 450
 * MB; last session's ow_tile=25 oc_tiles=5 ic_split=16 ic_unroll=1, 32000, 241 s and 1 GB).
 * 768 keeps the AArch64 defaults (ic_split 2 unrolled, up to 24 vectors x 16 lanes). */
#define CN_BODY_MAX 768

typedef struct cn_rule {
  int64_t vpb, xu, regs, lane; /* vectors per block, unrolled input lanes, registers, lane */
  int64_t gemm, ow;            /* the GEMM form, the output width */
} cn_rule;

static int cn_rule_ok(const void *data, const void *config) {
  const cn_rule *r = data;
  const topi_conv2d_nchwc_config *c = config;
  int64_t tile = c->ow_tile * c->oh_reg * c->oc_tiles * r->vpb;
  int64_t live = tile + c->oc_tiles * r->vpb + (r->lane ? c->ow_tile * c->oh_reg + 1 : 1);
  int64_t body = tile * r->xu * (c->ic_unroll ? c->ic_split : 1);
  int one = c->ow_tile == 1 && c->oc_tiles == 1 && c->oh_reg == 1; /* always in (wide blocks) */
  if (c->oh_reg > c->oh_tile) return 0; /* a task's rows hold the tile's */
  /* GEMM form: oh_tile rows per task only with the rows-first tasks, whose position tiles
   * divide the task's oh_tile * ow positions (a tail would keep a guard inside the tile) */
  if (r->gemm && (c->parallel == 2 ? (c->oh_tile * r->ow) % c->ow_tile != 0 : c->oh_tile != 1))
    return 0;
  return (live <= r->regs || one) && (body <= CN_BODY_MAX || (one && !c->ic_unroll));
}

static int cn_space(tec_ctx *ctx, const void *p_arg, const tec_target *target,
                    tune_space *sp) {
  const topi_conv2d *p = p_arg;
  int lanes = topi_fp_lanes(ctx, target, p ? p->fp : TOPI_FP32); /* of the accumulators */
  if (lanes < 0 || topi_refuse(ctx, &topi_tmpl_conv2d_nchwc, p)) return -1;
  int64_t oh, ow;
  if (topi_conv2d_out_hw(ctx, p, &oh, &ow)) return -1;
  int gemm = topi_conv2d_is_pointwise(p);
  int64_t xb = p->in_layout.kind == TOPI_NCHWC ? p->in_layout.block : topi_divisor_upto(p->c_in, 16);
  int64_t yb = p->out_layout.block, nib = topi_ceil_div(p->c_in, xb);
  int64_t nob = topi_ceil_div(p->c_out, yb), ext = gemm ? oh * ow : ow;
  int64_t tw[32], tc[8], ics[64], rows[64], b01[] = {0, 1}, par_vals[] = {0, 1, 2}, bt, bc;
  int ntw = 0, ntc = 0;
  for (int64_t t = 1; t <= 32 && t <= ext; t++) tw[ntw++] = t;
  for (int64_t t = 1; t <= 8 && t <= nob; t++) tc[ntc++] = t;
  int nics = topi_divisors(nib, nib, ics, 64);
  int nrows = topi_divisors(oh, gemm ? 8 : oh, rows, 64);
  int lane_fma = topi_target_lane_fma(ctx, target);
  if (lane_fma < 0) return -1;
  int lane = lane_fma && xb % lanes == 0; /* the input's lanes load as whole vectors */
  int64_t block_wbytes = yb * nib * xb * p->kh * p->kw * tec_dtype_bytes(topi_fp_storage(p->fp));
  /* rows per register tile: up to 4 where a row is narrower than the 32 positions a tile
   * holds at most; 1 in the GEMM form */
  int64_t regrows[4], nreg = !gemm && ow < 32 ? (oh < 4 ? oh : 4) : 1, br;
  for (int64_t r = 0; r < nreg; r++) regrows[r] = r + 1;
  /* float16 multiply-add by lane (fmla v.8h, v.8h, v.h[i]) reads its lane from v0-v15 only:
   * LLVM puts accumulators there too, so a tile's input vectors are kept to 8 (resnet_c3,
   * 128x28x28 3x3 NCHW8c, AArch64 +fullfp16: the 14 x 1 tile the model prefers spills, 195
   * stack accesses and 277 moves; 7 x 2 none in the hot loop) */
  int64_t lane_pos = lane && p->fp != TOPI_FP32 ? 8 : 0; /* fmlal by element: the same */
  default_tile(ext, oh, nreg, nob, topi_ceil_div(yb, lanes), xb, lanes, lane,
               topi_target_regs(ctx, target, lanes), topi_target_tight_regs(ctx, target), gemm,
               block_wbytes, lane_pos, &bt, &br, &bc);
  /* rows per task: the most that still leaves 8 tasks or more */
  int64_t tiles = p->n * topi_ceil_div(nob, bc), rdef = 1;
  for (int i = 0; i < nrows && !gemm; i++)
    if (tiles * (oh / rows[i]) >= 8) rdef = rows[i];
  if (br > rdef) br = 1; /* a task's rows hold the tile's */
  /* tasks rows first where the layer's input is larger than its kernel (input pixels >=
   * c_out * kh * kw): each thread reads half the input instead of all of it (MobileNet v1 in
   * the network at 2 threads, bench/run net: pw2-pw5 0.185 -> 0.164, 0.459 -> 0.307, 0.190
   * -> 0.162, 0.407 -> 0.345 ms; Xeon family 6 model 167). The GEMM form then takes the
   * fewest rows per task whose positions the default tile divides (more tasks; contiguous
   * ranges keep each thread's rows together). */
  int64_t par_def = p->h * p->w >= p->c_out * p->kh * p->kw ? 2 : 1;
  if (gemm && par_def == 2) {
    int64_t r = 0;
    for (int i = 0; i < nrows && !r; i++) /* ascending: the fewest rows */
      if ((rows[i] * ow) % bt == 0) r = rows[i];
    if (r) rdef = r;
    else par_def = 1;
  }
  /* the padded copy pays off where the inlined compares sit in the hot loop (blocked input);
   * an NCHW input's copy is a slow layout change for a kernel with few input channels; with
   * stride 2 the copy moves 4x the input per output and the inlined padding wins (ResNet's
   * three 3x3 stride-2 layers, 2 threads: 0.83 -> 1.03, 0.85 -> 0.96, 0.87 -> 0.92 x oneDNN;
   * 1 thread within 5 %, Xeon family 6 model 167), while a 7x7 stride-1 layer (512x7x7, every
   * tile on a border) is 1.4x slower without the copy */
  int padded = cn_padded(p); /* padding within the input's margin costs nothing: no copy */
  int64_t copy_def = padded && p->in_layout.kind == TOPI_NCHWC && p->stride_h == 1 &&
                     p->stride_w == 1;
  /* multiply-add by lane: two input-channel blocks per unrolled step halve the loop's
   * overhead (the tile's loads already fit in one step's registers) */
  int64_t ics_def = lane && nib % 2 == 0 ? 2 : 1, unr_def = ics_def > 1;
  /* 16 registers and a direct window without multiply-add by lane (ARMv7 NEON): the window
   * outermost (ic_split = every input-channel block), so the innermost loop runs over the
   * input-channel blocks, not over the window's 3 columns, which LLVM 19 (not 14) unrolls
   * whole and then spills: rasp4b32 128x28x28 3x3 at 4 positions, 21 q/d loads and 19 stores
   * per iteration (armv7-neon 31 and 28); window outermost, none on LLVM 14 and 19, and the
   * same count (tests/test_arm_tiles.c, docs/arm.md) */
  if (!lane && topi_target_tight_regs(ctx, target) && !gemm && p->kh * p->kw > 1)
    ics_def = nib, unr_def = 0;
  if (tune_space_init(ctx, sp, topi_tmpl_conv2d_nchwc.name, topi_tmpl_conv2d_nchwc.config_size) ||
      tune_define_field(sp, "ow_tile",
                        gemm ? "output positions (oh*ow flattened) per register tile"
                        : "output columns per register tile",
                        offsetof(topi_conv2d_nchwc_config, ow_tile), ntw, tw, bt) < 0 ||
      tune_define_field(sp, "oc_tiles", "output-channel blocks per register tile",
                        offsetof(topi_conv2d_nchwc_config, oc_tiles), ntc, tc, bc) < 0 ||
      tune_define_field(sp, "ic_split",
                        "input-channel blocks per pass over the kernel window (all: window "
                        "outermost; 1: input-channel blocks outermost)",
                        offsetof(topi_conv2d_nchwc_config, ic_split), nics, ics, ics_def) < 0 ||
      tune_define_field(sp, "ic_unroll",
                        "1: the ic_split input-channel blocks of a pass unrolled (straight-line "
                        "code, no loop overhead); 0: a loop",
                        offsetof(topi_conv2d_nchwc_config, ic_unroll), 2, b01, unr_def) < 0 ||
      tune_define_field(sp, "oh_tile",
                        "output rows per parallel task (GEMM form: 1 unless parallel is 2)",
                        offsetof(topi_conv2d_nchwc_config, oh_tile), nrows, rows, rdef) < 0 ||
      tune_define_field(sp, "pad_copy",
                        "1: the padded input copied once per call; 0: padding inlined (only 0 "
                        "without padding past the input's margin)",
                        offsetof(topi_conv2d_nchwc_config, pad_copy), padded ? 2 : 1, b01, copy_def) < 0 ||
      tune_define_field(sp, "parallel",
                        "1: parallel over (n, output-channel tiles, row tiles); 2: over (n, row "
                        "tiles, output-channel tiles): each thread reads only its rows of the input",
                        offsetof(topi_conv2d_nchwc_config, parallel), 3, par_vals, par_def) < 0 ||
      tune_define_field(sp, "oh_reg",
                        "output rows per register tile (at most oh_tile; 1 in the GEMM form)",
                        offsetof(topi_conv2d_nchwc_config, oh_reg), (int)nreg, regrows, br) < 0)
    return -1;
  cn_rule *r = tec_ctx_alloc(ctx, sizeof *r);
  if (!r) return -1;
  *r = (cn_rule){topi_ceil_div(yb, lanes), xb <= 16 ? xb : 1, topi_target_regs(ctx, target, lanes),
                 lane, gemm, ow};
  const char *doc = tec_ctx_printf(
      ctx, "registers: ow_tile*oh_reg*oc_tiles*%lld + oc_tiles*%lld + %s <= %lld; unrolled "
           "body: ow_tile*oh_reg*oc_tiles*%lld*%lld%s <= %d multiply-adds; oh_reg <= oh_tile",
      (long long)r->vpb, (long long)r->vpb, lane ? "ow_tile*oh_reg + 1" : "1", (long long)r->regs,
      (long long)r->vpb, (long long)r->xu, " (*ic_split if ic_unroll)", CN_BODY_MAX);
  if (doc && gemm)
    doc = tec_ctx_printf(ctx, "%s; GEMM form: oh_tile 1 unless parallel is 2, then oh_tile*%lld "
                              "a multiple of ow_tile", doc, (long long)ow);
  if (!doc) return -1;
  /* knobs read: ow_tile, oc_tiles, ic_split, ic_unroll, oh_tile (0x1f), oh_reg (0x80) and
   * parallel (GEMM: 0x40) */
  return tune_space_set_rule(sp, gemm ? 0xdfu : 0x9fu, cn_rule_ok, r, doc);
}

const topi_template topi_tmpl_conv2d_nchwc = {
    WHO, "conv2d NCHW[x]c/NCHW -> NCHW[y]c, direct, register-tiled, 1x1 as GEMM",
    TOPI_PROBLEM_CONV2D, sizeof(topi_conv2d_nchwc_config), cn_applies, cn_declare,
    cn_schedule, cn_space, "topi_conv2d_nchwc_config"};

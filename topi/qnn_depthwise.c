/* qnn_depthwise.c — int8 depthwise conv2d NCHW[x]c -> NCHW[x]c with the requantization fused
 * (docs/quantized.md). The reduction is the kh x kw taps of one channel, not channels: the
 * kernel is packed to int16 per block of lanes in prepare (an s16 x s16 -> s32 multiply-add,
 * vpmaddwd / smlal, is the fast path), its sums folded into the bias there too:
 *
 *   kp[C, ky, kx, v] = kernel[C*x + v, 0, ky, kx] (0 past c)                        int16
 *   acc[n, C, oy, ox, v] = sum_{ky, kx} pad_zp(data)[n, C, oy*s + ky - p, ox*s + kx - p, v]
 *                                       * kp[C, ky, kx, v]                           int32
 *   out = requant(acc + bias_q[C, v], mult[C, v])                                    int8
 *
 * A register tile of oh_tile x ow_tile pixels of one block (taps outside, pixels unrolled,
 * lanes vectorized), as depthwise_nchwc's fp32 tile. That is dot = 0; dot = 1 (the default
 * on VNNI and AArch64 +dotprod targets) puts a row's taps on the dot-product instruction: topi/qnn_depthwise_dot.c. */
#include "topi/qnn_internal.h"

typedef struct qd_decl {
  qnn_conv_args a;
  te_tensor *kp, *acc;
  const ir_expr *ry, *rx;
} qd_decl;

static const ir_expr *kp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qd_decl *d = u;
  int64_t c = d->a.p.conv.c_in;
  const ir_expr *ch = ir_add(ir_mul(i[0], ir_int(ctx, d->a.bx)), i[3]);
  const ir_expr *v = ir_cast(TEC_I16, TE_AT(d->a.kernel, ir_min(ch, ir_int(ctx, c - 1)),
                                            ir_int(ctx, 0), i[1], i[2]));
  return c % d->a.bx ? ir_select(ir_lt(ch, ir_int(ctx, c)), v, ir_int_t(ctx, TEC_I16, 0)) : v;
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qd_decl *d = u;
  const topi_conv2d *p = &d->a.p.conv;
  const ir_expr *y = ir_add(ir_mul(i[2], ir_int(ctx, p->stride_h)), ir_sub(d->ry, ir_int(ctx, p->pad_h)));
  const ir_expr *x = ir_add(ir_mul(i[3], ir_int(ctx, p->stride_w)), ir_sub(d->rx, ir_int(ctx, p->pad_w)));
  const ir_expr *v = qnn_pad(ctx, TEC_I16, TE_AT(d->a.data, i[0], i[1], y, x, i[4]), y, x, p->h,
                             p->w, p->pad_h, p->pad_w, d->a.p.in.zero_point);
  const ir_expr *w = TE_AT(d->kp, i[1], d->ry, d->rx, i[4]);
  return te_sum(qnn_mul16(v, w), 2, (const ir_expr *[]){d->ry, d->rx}, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qd_decl *d = u;
  const ir_expr *acc = ir_add(TE_AT(d->acc, i[0], i[1], i[2], i[3], i[4]), TE_AT(d->a.bias_q, i[1], i[4]));
  return qnn_requant(ctx, acc, TE_AT(d->a.mult, i[1], i[4]), d->a.p.out, d->a.p.conv.epi.act);
}

static int qd_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_qconv2d *p = problem;
  const char *w = qnn_conv_why(ctx, "qnn_depthwise", p);
  if (!w && (p->conv.groups != p->conv.c_in || p->conv.c_out != p->conv.c_in))
    w = "qnn_depthwise: not depthwise (needs groups == c_in == c_out)";
  if (!w && p->conv.in_layout.block != p->conv.out_layout.block)
    w = "qnn_depthwise: the input and output blocks must be equal";
  if (why) *why = w;
  return w == NULL;
}

static int qd_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  qd_decl *d = ctx ? tec_ctx_alloc(ctx, sizeof *d) : NULL;
  if (!d || qnn_conv_declare(ctx, &topi_tmpl_qnn_depthwise, p_arg, &d->a)) return -1;
  const topi_conv2d *c = &d->a.p.conv;
  int64_t cb = topi_ceil_div(c->c_in, d->a.bx);
  d->ry = te_reduce_axis_n(ctx, "ky", c->kh);
  d->rx = te_reduce_axis_n(ctx, "kx", c->kw);
  static const char *const kn[] = {"C", "ky", "kx", "v"}, *const on[] = {"n", "C", "oy", "ox", "v"};
  d->kp = te_compute(ctx, &(te_compute_decl){.name = "kernel_p", .ndim = 4,
                                             .shape = TE_SHAPE(ctx, cb, c->kh, c->kw, d->a.bx),
                                             .body = kp_body, .user = d, .tag = "pack_kernel",
                                             .axis_names = kn});
  const ir_expr *const *os = TE_SHAPE(ctx, c->n, cb, d->a.oh, d->a.ow, d->a.bx);
  d->acc = te_compute(ctx, &(te_compute_decl){.name = "acc", .ndim = 5, .shape = os,
                                              .body = acc_body, .user = d, .tag = "qnn_depthwise",
                                              .axis_names = on});
  te_tensor *o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 5, .shape = os,
                                                    .body = out_body, .user = d, .tag = "requant",
                                                    .axis_names = on});
  if (!d->ry || !d->rx || !d->kp || !d->acc) return -1;
  return qnn_conv_finish(ctx, &topi_tmpl_qnn_depthwise, &d->a, o, out);
}

static int qd_schedule(const topi_decl *dc, const void *cfg_arg, const tec_target *target,
                       topi_op *op) {
  const topi_qdepthwise_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_qnn_depthwise, dc, cfg, target)) return -1;
  if (cfg->dot) return qnn_depthwise_dot_schedule(dc, cfg, target, op); /* qnn_depthwise_dot.c */
  if (topi_op_begin(dc, op)) return -1;
  const qd_decl *d = dc->priv;
  sch_stage *so = sch_stage_of(op->sched, dc->out), *sa = sch_stage_of(op->sched, d->acc);
  sch_iter *yo, *yi, *xo, *xi, *f;
  if (!so || !sa || sch_split(so, sch_axis(so, 2), cfg->oh_tile, &yo, &yi) ||
      sch_split(so, sch_axis(so, 3), cfg->ow_tile, &xo, &xi) ||
      sch_reorder(so, 7, (sch_iter *[]){sch_axis(so, 0), sch_axis(so, 1), yo, xo, yi, xi,
                                        sch_axis(so, 4)}) ||
      sch_unroll(so, yi) || sch_unroll(so, xi) || sch_vectorize(so, sch_axis(so, 4)))
    return -1;
  if (cfg->parallel && (sch_fuse(so, sch_axis(so, 0), sch_axis(so, 1), &f) || sch_parallel(so, f)))
    return -1;
  if (sch_compute_at(sa, so, xo)) return -1;
  sch_iter *ky = sch_reduce_axis(sa, 0), *kx = sch_reduce_axis(sa, 1);
  if (sch_reorder(sa, 7, (sch_iter *[]){sch_axis(sa, 0), sch_axis(sa, 1), ky, kx, sch_axis(sa, 2),
                                        sch_axis(sa, 3), sch_axis(sa, 4)}) ||
      sch_unroll(sa, ky) || sch_unroll(sa, kx) || sch_unroll(sa, sch_axis(sa, 2)) ||
      sch_unroll(sa, sch_axis(sa, 3)) || sch_vectorize(sa, sch_axis(sa, 4)))
    return -1;
  return 0;
}

/* The space's rule: the tile's unrolled body (its taps, zeroing and requantized result, twice
 * for the peeled border tiles of a row) within TOPI_UNROLL_MAX; a 1 x 1 tile always in. */
static int64_t qd_body(int64_t taps, int64_t oh_tile, int64_t ow_tile) {
  return 2 * oh_tile * ow_tile * (taps + 2);
}

static int qd_rule_ok(const void *data, const void *config) {
  const topi_qdepthwise_config *c = config;
  return c->oh_tile * c->ow_tile == 1 ||
         topi_unroll_ok(qd_body(*(const int64_t *)data, c->oh_tile, c->ow_tile));
}

static int qd_space(tec_ctx *ctx, const void *p_arg, const tec_target *target, tune_space *sp) {
  const topi_qconv2d *p = p_arg;
  int lanes = topi_target_lanes(ctx, target);
  int64_t oh, ow;
  if (lanes < 0 || qnn_refuse(ctx, &topi_tmpl_qnn_depthwise, p) ||
      topi_conv2d_out_hw(ctx, &p->conv, &oh, &ow))
    return -1;
  int64_t th[4], tw[16], def = 1, cap = lanes >= 16 ? 14 : 8;
  int64_t *taps = tec_ctx_alloc(ctx, sizeof *taps);
  if (!taps) return -1;
  *taps = p->conv.kh * p->conv.kw;
  while (cap > 1 && !topi_unroll_ok(qd_body(*taps, 1, cap))) cap--;
  /* the dot path where the block is dot4's lanes; the default with VNNI (bench/qconv.c:
   * MobileNet v1 and v2's depthwise layers, stride 1 and 2). At stride 2 its default tile is
   * 2 rows x half the columns, the input copied per row tile on the large planes (in_row: 5
   * input rows in L1 for 2 output rows; 1.2-1.3x oneDNN on the 112 x 112 layers against
   * 0.98-1.02x per channel block; below) */
  int dot_ok = qnn_depthwise_dot_ok(p->conv.in_layout.block, lanes);
  const tec_target *tg = topi_target_of(ctx, target);
  /* and on AArch64 +dotprod (sdot, a tbl per 4 pixels): mbv1_dw_mid 256x28x28 NCHW4c
   * 1,706,803 -> 1,076,132 executed instructions under qemu, XNNPACK 1,353,005 (arm_insn.sh) */
  int dot_def = dot_ok && (qnn_dot_shift(tg) || (tg && tg->arch == TEC_ARCH_AARCH64 &&
                                                 tec_target_has(tg, TEC_FEATURE_DOTPROD)));
  int rows2 = dot_def && p->conv.stride_h > 1 && oh >= 2;
  if (rows2) cap /= 2;
  /* in_row keeps a row tile's input rows in L1. On x86 it is the default only where a block's
   * padded input does not fit in L1 already (the 112 x 112 and 56 x 56 layers): on the 28 x 28
   * and 14 x 14 planes the block's copy is 15 KB or less, and with the copy inside the row loop
   * LLVM 14 (-mcpu=znver3, Zen 4) spilled the 2 x 7 tile: 31 (28 x 28) and 204 (14 x 14) stack
   * moves in the loops of its 42 vpdpbusd, none per block; 1.15-1.3x faster on the 14 x 14
   * layers (tec bench, 1 thread). AArch64 keeps in_row at stride 2 (measured under qemu). */
  int64_t l1 = tg && tg->l1d_bytes > 0 ? tg->l1d_bytes : 32768;
  int64_t blk_in = (p->conv.h + 2 * p->conv.pad_h) * (p->conv.w + 2 * p->conv.pad_w) *
                   p->conv.in_layout.block;
  int in_row = rows2 && (!tg || tg->arch != TEC_ARCH_X86_64 || blk_in > l1);
  int nth = 0, ntw = 0;
  for (int64_t t = 1; t <= 4 && t <= oh; t++) th[nth++] = t;
  for (int64_t t = 1; t <= 16 && t <= ow; t++) tw[ntw++] = t;
  for (int64_t t = 1; t <= cap && t <= ow; t++)
    if (ow % t == 0 || ow <= cap) def = t;
  if (ow > cap && def < cap / 2) def = cap;
  static const int64_t b01[] = {0, 1};
  if (tune_space_init(ctx, sp, topi_tmpl_qnn_depthwise.name, topi_tmpl_qnn_depthwise.config_size) ||
      tune_define_field(sp, "ow_tile", "output columns per register tile",
                        offsetof(topi_qdepthwise_config, ow_tile), ntw, tw, def) < 0 ||
      tune_define_field(sp, "oh_tile", "output rows per register tile",
                        offsetof(topi_qdepthwise_config, oh_tile), nth, th, rows2 ? 2 : 1) < 0 ||
      tune_define_field(sp, "parallel", "parallel over (n, channel block)",
                        offsetof(topi_qdepthwise_config, parallel), 2, b01, 1) < 0 ||
      tune_define_field(sp, "dot", "1: each row's taps (padded to 4) as the dot-product "
                        "instruction's group, the block's channels as its lanes; 0: s16 "
                        "multiply-adds per tap", offsetof(topi_qdepthwise_config, dot),
                        dot_ok ? 2 : 1, b01, dot_def) < 0 ||
      tune_define_field(sp, "in_row", "dot path: the padded input copied per row tile (in L1; "
                        "a stride-2 row tile reads (oh_tile - 1) * 2 + kh rows) or per channel "
                        "block (0); dot = 0 ignores it", offsetof(topi_qdepthwise_config, in_row),
                        2, b01, in_row) < 0)
    return -1;
  const char *doc = tec_ctx_printf(ctx, "unrolled body: 2*oh_tile*ow_tile*%lld <= %d statements",
                                   (long long)*taps + 2, TOPI_UNROLL_MAX);
  return doc ? tune_space_set_rule(sp, 0x3u, qd_rule_ok, taps, doc) : -1;
}

const topi_template topi_tmpl_qnn_depthwise = {
    "qnn_depthwise", "int8 depthwise conv2d NCHW[x]c, s16 taps, requantization fused",
    TOPI_PROBLEM_QCONV2D, sizeof(topi_qdepthwise_config), qd_applies, qd_declare, qd_schedule,
    qd_space, "topi_qdepthwise_config"};

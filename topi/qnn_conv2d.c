/* qnn_conv2d.c — int8 conv2d NCHW[x]c -> NCHW[y]c with the requantization fused
 * (docs/quantized.md). Everything derived from the weights runs once, in prepare:
 *
 *   wp[O, I, ky, kx, i4, o, ii] = kernel[O*y + o, I*x + i4*4 + ii, ky, kx] (0 past c)   int8
 *   bias_q[O, o] = bias[c] - zp * sum(kernel[c])   mult[O, o] = w_scale[c] * (s_in / s_out)
 *
 * wlayout 0 (the default): the reduction on the target's dot-product instruction
 * (sch_tensorize dot4, docs/tensorize.md: vpdpbusd on VNNI, vpmaddwd without, sdot on
 * AArch64 +dotprod, smull otherwise). The input is read from a padded copy when there is
 * padding or a shift: made once per call (root, rows parallel), or per output row inside the
 * row loop (in_row, the default for 1x1: the rows stay in L1 for every output block):
 *
 *   dp[n, I, yy, xx, c] = data[.., yy - pad_h, xx - pad_w, c], zp_in in the padding     (+128
 *                         as uint8 on VNNI targets: vpdpbusd multiplies u8 by s8; then zp is
 *                         zp_in + 128 in bias_q, which subtracts the shift's term exactly)
 *   acc[n, O, oy, ox, o] = sum_{I, ky, kx, i4, ii} dp[n, I, oy*s + ky, ox*s + kx, i4*4 + ii]
 *                          * wp[O, I, ky, kx, i4, o, ii]                               int32
 *   out[n, O, oy, ox, o] = requant(acc + bias_q[O, o], mult[O, o])                     int8
 *                          (on x86 and in the plane acc starts from bias_q: te_reduce_init)
 *
 *   for n, O.outer, oy (parallel, fused)      (in_row: n, oy (parallel) [dp's rows], O.outer)
 *     for xo: acc[oc_tile][ow_tile][y] = 0
 *             for I, ky, kx, i4: for xi, O.inner, o.outer (unrolled):
 *               acc[..][o.outer*L : +L] = dot4(acc[..], dp[.., 4 bytes] (broadcast), wp[.., L x 4])
 *             out[.., O.outer*oc_tile + O.inner, .., xo*ow_tile + xi, :] = requant(acc[..][:])
 *
 * One broadcast of 4 input bytes feeds oc_tile * y / L instructions. acc's columns (and dp's)
 * are padded to a multiple of ow_tile, its output blocks (and kernel_p's) to one of oc_tile,
 * so the tile never needs a guard inside the tensorized nest. L = the largest of 16, 8, 4
 * dividing y within the target's int32 lanes. AArch64 +dotprod, stride 1, NCHW4c input
 * (qc_groups): the columns in runs of 4 (or 2) read once and fed by element (`sdot v.4s,
 * w.16b, x.4b[g]`, SCH_INTRIN_DOT4_LANE) instead of a broadcast per column, the tile's output
 * blocks side by side in kernel_p (8 dims, side = oc_tile). Knob plane (1x1, stride 1, no
 * padding, input read in place): acc is [n][O][1][h*w][y], the plane one row of pixels whose
 * tiles of ow_tile never waste a row's end, started from the bias (te_reduce_init), each
 * tile's ow_tile * y output bytes requantized as one vector.
 * x86 AVX-512, NCHW16c output whose clamp spans int8, ow_tile a multiple of 4 (qc_packs4; the
 * default for such 1x1 layers: 8 x 2 or 4 x 4): the output stage requantizes 4 pixels' 16
 * channels (64 consecutive bytes) as one vector, its multipliers from mult4[O][64] (prepare),
 * narrowed by packs in codegen_requant.c: one 64-byte store per 4 output vectors.
 * wlayout 1: the kernel [..][4][y] (output channels innermost) and plain int16 multiplies
 * LLVM vectorizes, reading data with the padding inlined (0.24-0.33x tec's fp32 on pointwise
 * layers, against 3.7-4.4x for the dot path: kept as a second, independent nest).
 */
#include <string.h>
#include "topi/qnn_internal.h"

typedef struct qc_decl {
  qnn_conv_args a; /* first: the decl's priv is read as one by qnn_conv_finish's callers */
  const ir_expr *r[5]; /* I, ky, kx, i4, ii */
} qc_decl;

/* the packed kernel's layout and the tile are knobs: each schedule builds its own stages */
typedef struct qc_sched {
  const qc_decl *d;
  int64_t wlayout;
  int shift;            /* dot path on a VNNI target: dp holds q + 128 as uint8 */
  int bias_init;        /* dot path, flat or x86: acc starts from bias_q (te_reduce_init); the
                         * requantization adds it otherwise (AArch64's row tiles: kept as
                         * measured under qemu, docs/arm.md) */
  int64_t owp;          /* dot path: acc's columns, ow rounded up to a multiple of ow_tile */
  int64_t dpw;          /* dot path: data_p's columns */
  int64_t obp;          /* output blocks of acc and kernel_p: a multiple of oc_tile */
  int flat;             /* dot path, 1x1 stride 1 unpadded, no copy (knob plane): acc is one row
                         * of h*w pixels, [n][O][1][h*w][y], read as the plane's run of bytes */
  int64_t side;         /* dot path by element: a tile's oc_tile output blocks side by side in
                         * kernel_p (8 dims, one run of oc_tile * y * 4 bytes per step of the
                         * reduction: ldp pairs); 1: 7 dims, a block's own */
  te_tensor *wp, *acc, *dp, *bias_q;
  te_tensor *mult4;     /* qc_packs4: mult[O][c % 16] for c < 64, 4 pixels' multipliers as one
                         * dense 64-lane load (prepare) */
} qc_sched;

static const ir_expr *mult4_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const qc_sched *s = u;
  return TE_AT(s->d->a.mult, i[0], ir_floormod(i[1], ir_int(ctx, 16)));
}

static const ir_expr *wp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qc_sched *s = u;
  const qc_decl *d = s->d;
  const topi_conv2d *p = &d->a.p.conv;
  const ir_expr *lo = i[s->wlayout ? 6 : 5], *li = i[s->wlayout ? 5 : 6], *ob = i[0];
  if (s->side > 1) /* [O / side][I][ky][kx][i4][O % side][o][ii] */
    ob = ir_add(ir_mul(i[0], ir_int(ctx, s->side)), i[5]), lo = i[6], li = i[7];
  const ir_expr *o = ir_add(ir_mul(ob, ir_int(ctx, d->a.by)), lo);
  const ir_expr *c = ir_add(ir_add(ir_mul(i[1], ir_int(ctx, d->a.bx)), ir_mul(i[4], ir_int(ctx, 4))),
                            li);
  const ir_expr *ok = ir_and(ir_lt(o, ir_int(ctx, p->c_out)), ir_lt(c, ir_int(ctx, p->c_in)));
  const ir_expr *v = TE_AT(d->a.kernel, ir_min(o, ir_int(ctx, p->c_out - 1)),
                           ir_min(c, ir_int(ctx, p->c_in - 1)), i[2], i[3]);
  return ir_select(ok, v, ir_int_t(ctx, TEC_I8, 0));
}

/* the padded (and, on VNNI, shifted) input of the dot path; columns past the input's read
 * as the zero point too (acc's padded tile reads them; its results are never stored) */
static const ir_expr *dp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qc_sched *s = u;
  const qc_decl *d = s->d;
  const topi_conv2d *p = &d->a.p.conv;
  int64_t rows = (d->a.oh - 1) * p->stride_h + p->kh;
  return qnn_dot_input(ctx, i, d->a.data, p, rows, s->dpw, s->shift, d->a.p.in.zero_point);
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qc_sched *s = u;
  const qc_decl *d = s->d;
  const topi_conv2d *p = &d->a.p.conv;
  const ir_expr *const *r = d->r;
  const ir_expr *lane = ir_add(ir_mul(r[3], ir_int(ctx, 4)), r[4]);
  if (!s->wlayout) { /* the dot path: int32(dp) * int32(wp), what dot4 matches */
    const ir_expr *y = ir_add(ir_mul(i[2], ir_int(ctx, p->stride_h)), r[1]);
    const ir_expr *x = ir_add(ir_mul(i[3], ir_int(ctx, p->stride_w)), r[2]);
    if (s->flat) /* pixel i[3] of the plane (i[2] is 0): its flat index is i[3]'s own */
      y = ir_add(ir_floordiv(i[3], ir_int(ctx, p->w)), r[1]),
      x = ir_add(ir_floormod(i[3], ir_int(ctx, p->w)), r[2]);
    const ir_expr *v = s->dp ? TE_AT(s->dp, i[0], r[0], y, x, lane) : TE_AT(d->a.data, i[0], r[0], y, x, lane);
    const ir_expr *sd = ir_int(ctx, s->side);
    const ir_expr *w = s->side > 1 ? TE_AT(s->wp, ir_floordiv(i[1], sd), r[0], r[1], r[2], r[3],
                                           ir_floormod(i[1], sd), i[4], r[4])
                                   : TE_AT(s->wp, i[1], r[0], r[1], r[2], r[3], i[4], r[4]);
    const ir_expr *sum = te_sum(ir_mul(ir_cast(TEC_I32, v), ir_cast(TEC_I32, w)), 5, r, NULL);
    /* flat, and x86: the accumulators start from the bias (te_reduce_init), not from 0
     * with an add per output vector after (int32 sums: the same numbers in any order) */
    if (!s->bias_init) return sum;
    /* acc's blocks past the output's (oc_tile rounds them up) are never stored: they read the
     * last real block's bias, not past bias_q's end */
    int64_t nb = topi_ceil_div(p->c_out, d->a.by);
    const ir_expr *blk = s->obp > nb ? ir_min(i[1], ir_int(ctx, nb - 1)) : i[1];
    return te_reduce_init(sum, TE_AT(s->bias_q, blk, i[4]));
  }
  const ir_expr *y = ir_add(ir_mul(i[2], ir_int(ctx, p->stride_h)), ir_sub(r[1], ir_int(ctx, p->pad_h)));
  const ir_expr *x = ir_add(ir_mul(i[3], ir_int(ctx, p->stride_w)), ir_sub(r[2], ir_int(ctx, p->pad_w)));
  const ir_expr *v = qnn_pad(ctx, TEC_I16, TE_AT(d->a.data, i[0], r[0], y, x, lane), y, x, p->h,
                             p->w, p->pad_h, p->pad_w, d->a.p.in.zero_point);
  const ir_expr *w = TE_AT(s->wp, i[1], r[0], r[1], r[2], r[3], r[4], i[4]);
  return te_sum(qnn_mul16(v, ir_cast(TEC_I16, w)), 5, r, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qc_sched *s = u;
  const qc_decl *d = s->d;
  const ir_expr *px = s->flat ? ir_add(ir_mul(i[2], ir_int(ctx, d->a.ow)), i[3]) : i[3];
  const ir_expr *acc = TE_AT(s->acc, i[0], i[1], s->flat ? ir_int(ctx, 0) : i[2], px, i[4]);
  if (!s->bias_init) acc = ir_add(acc, TE_AT(s->bias_q, i[1], i[4]));
  const ir_expr *m = s->mult4 ? TE_AT(s->mult4, i[1], ir_add(ir_mul(ir_floormod(i[3], ir_int(ctx, 4)),
                                                                   ir_int(ctx, 16)), i[4]))
                              : TE_AT(d->a.mult, i[1], i[4]);
  return qnn_requant(ctx, acc, m, d->a.p.out, d->a.p.conv.epi.act);
}

static int qc_applies(tec_ctx *ctx, const void *problem, const char **why) {
  const topi_qconv2d *p = problem;
  const char *w = qnn_conv_why(ctx, "qnn_conv2d", p);
  if (!w && p->conv.groups > 1) w = "qnn_conv2d: groups must be 1 (depthwise: qnn_depthwise)";
  if (why) *why = w;
  return w == NULL;
}

static int qc_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  qc_decl *d = ctx ? tec_ctx_alloc(ctx, sizeof *d) : NULL;
  if (!d || qnn_conv_declare(ctx, &topi_tmpl_qnn_conv2d, p_arg, &d->a)) return -1;
  const topi_conv2d *c = &d->a.p.conv;
  static const char *const rn[] = {"I", "ky", "kx", "i4", "ii"};
  const int64_t re[] = {topi_ceil_div(c->c_in, d->a.bx), c->kh, c->kw, d->a.bx / 4, 4};
  for (int k = 0; k < 5; k++)
    if (!(d->r[k] = te_reduce_axis_n(ctx, rn[k], re[k]))) return -1;
  /* out is declared for the argument list; each schedule builds its own (its kernel layout) */
  te_tensor *o = te_placeholder(ctx, "out", TEC_I8, 5,
                                TE_SHAPE(ctx, c->n, topi_ceil_div(c->c_out, d->a.by), d->a.oh,
                                         d->a.ow, d->a.by));
  return qnn_conv_finish(ctx, &topi_tmpl_qnn_conv2d, &d->a, o, out);
}

/* The dot paths' input element (qnn_internal.h): padded by selects, shifted when shift. */
const ir_expr *qnn_dot_input(tec_ctx *ctx, const ir_expr *const *i, te_tensor *data,
                             const topi_conv2d *p, int64_t rows, int64_t cols, int shift,
                             int32_t zp) {
  const ir_expr *y = ir_sub(i[2], ir_int(ctx, p->pad_h)), *x = ir_sub(i[3], ir_int(ctx, p->pad_w));
  const ir_expr *zero = ir_int(ctx, 0), *cond = NULL;
  int rows_out = p->pad_h > 0 || rows - p->pad_h > p->h;
  if (rows_out) cond = ir_and(ir_ge(y, zero), ir_lt(y, ir_int(ctx, p->h)));
  if (p->pad_w > 0 || cols - p->pad_w > p->w) {
    const ir_expr *cx = ir_and(ir_ge(x, zero), ir_lt(x, ir_int(ctx, p->w)));
    cond = cond ? ir_and(cond, cx) : cx;
  }
  const ir_expr *yc = rows_out ? ir_max(ir_min(y, ir_int(ctx, p->h - 1)), zero) : y;
  const ir_expr *xc = cond ? ir_max(ir_min(x, ir_int(ctx, p->w - 1)), zero) : x;
  /* the shift in bytes: uint8(q) + 128 wraps to q + 128 (one byte add or xor per lane) */
  const ir_expr *v = TE_AT(data, i[0], i[1], yc, xc, i[4]);
  if (shift) v = ir_add(ir_cast(TEC_U8, v), ir_int_t(ctx, TEC_U8, 128));
  return cond ? ir_select(ir_likely(cond), v,
                          shift ? ir_int_t(ctx, TEC_U8, zp + 128) : ir_int_t(ctx, TEC_I8, zp))
              : v;
}

/* Whether the dot path reads the input as uint8 (q + 128): x86 with vpdpbusd (u8 x s8).
 * Elsewhere int8 x int8 is the instruction's own form (sdot) or the exact fallback's. */
int qnn_dot_shift(const tec_target *t) {
  return t && t->arch == TEC_ARCH_X86_64 &&
         (tec_target_has(t, TEC_FEATURE_AVX512VNNI) || tec_target_has(t, TEC_FEATURE_AVXVNNI));
}

/* dot4's lanes for a block of `block` int32 outputs: the largest of 16, 8, 4 dividing it
 * within the target's int32 lanes (4 at least: dot4's smallest form). */
int64_t qnn_dot_lanes(int64_t block, int lanes) {
  for (int64_t l = 16; l > 4; l /= 2)
    if (l <= lanes && block % l == 0) return l;
  return 4;
}

/* AArch64 +dotprod, stride 1, NCHW4c input: the tile's columns in runs of 4 (or 2) whose 16
 * (8) input bytes are one read feeding sdot by element (SCH_INTRIN_DOT4_LANE), not a
 * broadcast and its address per column: the run's length; 1 elsewhere (the plain dot4). */
static int64_t qc_run(int64_t ow_tile) { return ow_tile % 4 == 0 ? 4 : ow_tile % 2 == 0 ? 2 : 1; }
static int64_t qc_groups(const tec_target *t, const topi_conv2d *c, int64_t bx, int64_t ow_tile) {
  if (!t || t->arch != TEC_ARCH_AARCH64 || !tec_target_has(t, TEC_FEATURE_DOTPROD) || bx != 4 ||
      c->stride_w != 1)
    return 1;
  return qc_run(ow_tile);
}

/* Whether the plane can be one row of h*w pixels (knob plane): a 1x1 stride-1 convolution
 * without padding reading its input in place (NCHW[x]c without margins: qnn_conv_why), so
 * ow_tile consecutive pixels are consecutive bytes of each input block even across rows. */
static int qc_plane_ok(const tec_target *t, const topi_conv2d *c) {
  return topi_conv2d_is_pointwise(c) && !qnn_dot_shift(t);
}

/* Whether the output stage requantizes 4 pixels' 16 channels as one vector of 64 lanes (x86
 * AVX-512, NCHW16c output, ow_tile a multiple of 4, the clamp over the whole int8 range: what
 * codegen_requant.c narrows with vpackssdw / vpackuswb and one 64-byte store instead of 4 x
 * (vpmovusdb, vpxor, 16-byte store); docs/quantized.md). */
static int qc_packs_fit(const tec_target *t, const topi_qconv2d *p) {
  int32_t lo, hi;
  if (!t || t->arch != TEC_ARCH_X86_64 || !tec_target_has(t, TEC_FEATURE_AVX512BW) ||
      p->conv.out_layout.kind != TOPI_NCHWC || p->conv.out_layout.block != 16)
    return 0;
  topi_qnn_bounds(p->out, p->conv.epi.act, &lo, &hi);
  return lo == -128 && hi == 127;
}
static int qc_packs4(const tec_target *t, const qc_decl *d, const topi_qconv2d_config *cfg) {
  return !cfg->wlayout && !cfg->plane && cfg->ow_tile % 4 == 0 && d->a.by == 16 &&
         qc_packs_fit(t, &d->a.p);
}

/* The stages of one schedule (wlayout: the kernel's innermost two dimensions; the dot path's
 * acc and padded input sized for ow_tile); out returned. */
static te_tensor *qc_stages(const topi_decl *dc, const topi_qconv2d_config *cfg,
                            const tec_target *target, qc_sched **so) {
  tec_ctx *ctx = dc->ctx;
  const qc_decl *d = dc->priv;
  const topi_conv2d *c = &d->a.p.conv;
  qc_sched *s = tec_ctx_alloc(ctx, sizeof *s);
  if (!s) return NULL;
  int64_t wlayout = cfg->wlayout;
  s->d = d, s->wlayout = wlayout, s->shift = !wlayout && qnn_dot_shift(target);
  s->flat = !wlayout && cfg->plane;
  s->bias_init = !wlayout && (s->flat || (target && target->arch == TEC_ARCH_X86_64));
  s->owp = wlayout ? d->a.ow : topi_ceil_div(d->a.ow, cfg->ow_tile) * cfg->ow_tile;
  if (s->flat) s->owp = d->a.oh * d->a.ow; /* ow_tile divides it (the space's rule) */
  int64_t ib = topi_ceil_div(c->c_in, d->a.bx), ob = topi_ceil_div(c->c_out, d->a.by);
  s->obp = ob = topi_ceil_div(ob, cfg->oc_tile) * cfg->oc_tile;
  static const char *const wn[3][8] = {{"O", "I", "ky", "kx", "i4", "o", "ii"},
                                       {"O", "I", "ky", "kx", "i4", "ii", "o"},
                                       {"Oo", "I", "ky", "kx", "i4", "Oi", "o", "ii"}},
                           *const on[] = {"n", "O", "oy", "ox", "o"},
                           *const dn[] = {"n", "I", "yy", "xx", "c"};
  const ir_expr *const *ws = wlayout ? TE_SHAPE(ctx, ob, ib, c->kh, c->kw, d->a.bx / 4, 4, d->a.by)
                                     : TE_SHAPE(ctx, ob, ib, c->kh, c->kw, d->a.bx / 4, d->a.by, 4);
  s->side = !wlayout && cfg->oc_tile > 1 &&
                    qc_groups(target, c, d->a.bx, cfg->ow_tile) > 1 ? cfg->oc_tile : 1;
  if (s->side > 1)
    ws = TE_SHAPE(ctx, ob / s->side, ib, c->kh, c->kw, d->a.bx / 4, s->side, d->a.by, 4);
  s->wp = te_compute(ctx, &(te_compute_decl){.name = "kernel_p", .ndim = s->side > 1 ? 8 : 7,
                                             .shape = ws, .body = wp_body, .user = s,
                                             .tag = "pack_kernel",
                                             .axis_names = wn[s->side > 1 ? 2 : wlayout]});
  s->bias_q = d->a.bias_q;
  if (!wlayout) {
    int64_t hr = (d->a.oh - 1) * c->stride_h + c->kh, wr = (s->owp - 1) * c->stride_w + c->kw;
    if (!s->flat && (s->shift || c->pad_h || c->pad_w || wr > c->w)) {
      s->dpw = wr;
      s->dp = te_compute(ctx, &(te_compute_decl){.name = "data_p", .ndim = 5,
                                                 .shape = TE_SHAPE(ctx, c->n, ib, hr, wr, d->a.bx),
                                                 .body = dp_body, .user = s, .tag = "pad_shift",
                                                 .axis_names = dn});
      if (!s->dp) return NULL;
    }
    if (s->shift)
      s->bias_q = qnn_bias(ctx, d->a.bias, qnn_wsum(ctx, d->a.kernel), c->c_out, d->a.by,
                           d->a.p.in.zero_point + 128);
  }
  if (qc_packs4(target, d, cfg)) {
    s->mult4 = te_compute(ctx, &(te_compute_decl){.name = "mult4", .ndim = 2,
                                                  .shape = TE_SHAPE(ctx, topi_ceil_div(c->c_out, 16), 64),
                                                  .body = mult4_body, .user = s, .tag = "qnn_prepare"});
    if (!s->mult4) return NULL;
  }
  const ir_expr *const *as = TE_SHAPE(ctx, c->n, ob, s->flat ? 1 : d->a.oh, s->owp, d->a.by);
  s->acc = te_compute(ctx, &(te_compute_decl){.name = "acc", .ndim = 5, .shape = as,
                                              .body = acc_body, .user = s, .tag = "qnn_conv2d",
                                              .axis_names = on});
  *so = s;
  const ir_expr *const *os = TE_SHAPE(ctx, c->n, topi_ceil_div(c->c_out, d->a.by), d->a.oh,
                                     d->a.ow, d->a.by);
  return s->wp && s->acc && s->bias_q
             ? te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 5, .shape = os,
                                                  .body = out_body, .user = s, .tag = "requant",
                                                  .axis_names = on})
             : NULL;
}

/* acc at out's column tile: the reduction outside the tile's columns and lanes; the dot path
 * tensorizes the lanes (split by L) with the 4 input channels, the other path vectorizes. */
static int qc_schedule_acc(sch_stage *sa, int64_t wlayout, int64_t L, int64_t unroll_i,
                           int64_t group, int unroll_i4) {
  sch_iter *r[5], *oo, *ol, *ri = NULL, *xg, *xl;
  for (int k = 0; k < 5; k++) r[k] = sch_reduce_axis(sa, k);
  sch_iter *n = sch_axis(sa, 0), *O = sch_axis(sa, 1), *oy = sch_axis(sa, 2), *ox = sch_axis(sa, 3);
  if (wlayout)
    return sch_reorder(sa, 10, (sch_iter *[]){n, O, oy, r[0], r[1], r[2], r[3], ox, r[4],
                                              sch_axis(sa, 4)}) ||
                   sch_unroll(sa, ox) || sch_unroll(sa, r[4]) || sch_vectorize(sa, sch_axis(sa, 4))
               ? -1 : 0;
  /* O: the tile's oc_tile output blocks, inside the column: one broadcast serves them all */
  if (unroll_i > 1 && sch_split(sa, r[0], unroll_i, &r[0], &ri)) return -1;
  if (group > 1) { /* columns by `group`: one read of their input, sdot by element */
    if (sch_split(sa, sch_axis(sa, 4), L, &oo, &ol) || sch_split(sa, ox, group, &xg, &xl))
      return -1;
    sch_iter *ord[13] = {n, oy, r[0], ri, r[1], r[2], r[3], xg, O, oo, xl, ol, r[4]};
    if (!ri) memmove(ord + 3, ord + 4, 9 * sizeof *ord);
    return sch_reorder(sa, ri ? 13 : 12, ord) || (ri && sch_unroll(sa, ri)) ||
                   sch_unroll(sa, xg) || sch_unroll(sa, O) || sch_unroll(sa, oo) ||
                   sch_tensorize(sa, xl, SCH_INTRIN_DOT4_LANE)
               ? -1 : 0;
  }
  if (sch_split(sa, sch_axis(sa, 4), L, &oo, &ol) ||
      (ri ? sch_reorder(sa, 12, (sch_iter *[]){n, oy, r[0], ri, r[1], r[2], r[3], ox, O, oo, ol, r[4]}) ||
                sch_unroll(sa, ri)
          : sch_reorder(sa, 11, (sch_iter *[]){n, oy, r[0], r[1], r[2], r[3], ox, O, oo, ol, r[4]})) ||
      sch_unroll(sa, ox) || sch_unroll(sa, O) || sch_unroll(sa, oo) ||
      (unroll_i4 && sch_unroll(sa, r[3])) || sch_tensorize(sa, ol, SCH_INTRIN_DOT4))
    return -1;
  return 0;
}

static int qc_schedule(const topi_decl *dc, const void *cfg_arg, const tec_target *target,
                       topi_op *op) {
  const topi_qconv2d_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_qnn_conv2d, dc, cfg, target)) return -1;
  int lanes = topi_target_lanes(dc->ctx, target);
  if (lanes < 0) return -1;
  const qc_decl *d = dc->priv;
  qc_sched *s = NULL;
  const tec_target *tg = topi_target_of(dc->ctx, target);
  te_tensor *o = qc_stages(dc, cfg, tg, &s);
  if (topi_op_begin_out(dc, o, op)) return -1;
  sch_stage *so = sch_stage_of(op->sched, o), *sa = sch_stage_of(op->sched, s->acc);
  sch_iter *xo, *xi, *f, *Oo, *Oi, *n = so ? sch_axis(so, 0) : NULL, *oy = so ? sch_axis(so, 2) : NULL;
  /* in_row: the rows first, the output blocks inside them, so that the input rows the copy
   * makes for one output row serve every block while in L1 */
  int in_row = cfg->in_row && s->dp;
  if (!so || !sa || sch_split(so, sch_axis(so, 1), cfg->oc_tile, &Oo, &Oi)) return -1;
  if (s->flat) { /* the plane as one row: (oy, ox) fused, in runs of about a row's pixels
                  * (a multiple of ow_tile dividing h*w, what oy was: the parallel unit),
                  * each in tiles of ow_tile pixels */
    int64_t hw = d->a.oh * d->a.ow, run = hw;
    for (int64_t r = cfg->ow_tile; r < hw; r += cfg->ow_tile)
      if (r >= d->a.ow && hw % r == 0) {
        run = r;
        break;
      }
    if (sch_fuse(so, oy, sch_axis(so, 3), &f) || sch_split(so, f, run, &oy, &f) ||
        sch_split(so, f, cfg->ow_tile, &xo, &xi))
      return -1;
  } else if (sch_split(so, sch_axis(so, 3), cfg->ow_tile, &xo, &xi))
    return -1;
  sch_iter *order[7] = {n, in_row ? oy : Oo, in_row ? Oo : oy, xo, Oi, xi, sch_axis(so, 4)};
  if (sch_reorder(so, 7, order)) return -1;
  if (s->flat) { /* the tile's ow_tile * y output bytes are consecutive: one vector */
    /* in vectors of 16 bytes past 16 (12 x 2's 48 bytes a block: LLVM kept all 12 int32
     * vectors of a 48-lane value live and spilled accumulators; 396,454 -> 387,050 insns on
     * 384 -> 64 at 14x14 under qemu) */
    int64_t vl = cfg->ow_tile * d->a.by;
    sch_iter *fo = NULL;
    if (sch_fuse(so, xi, sch_axis(so, 4), &f) ||
        (vl > 16 && vl % 16 == 0 && (sch_split(so, f, 16, &fo, &f) || sch_unroll(so, fo))) ||
        sch_vectorize(so, f) || sch_unroll(so, Oi))
      return -1;
  } else if (s->mult4) { /* qc_packs4, decided by qc_stages */
    /* x86 AVX-512, y = 16, columns by 4: 4 pixels' 16 channels (64 consecutive bytes) as one
     * vector, narrowed by packs (codegen_requant.c) */
    sch_iter *xq, *xr;
    if (sch_split(so, xi, 4, &xq, &xr) || sch_fuse(so, xr, sch_axis(so, 4), &f) ||
        sch_unroll(so, xq) || sch_unroll(so, Oi) || sch_vectorize(so, f))
      return -1;
  } else if (sch_unroll(so, xi) || sch_vectorize(so, sch_axis(so, 4)))
    return -1;
  sch_iter *rows = oy; /* the loop data_p is computed at (in_row) */
  if (cfg->parallel && (in_row ? sch_fuse(so, n, oy, &rows) || sch_parallel(so, rows)
                               : sch_fuse(so, n, Oo, &f) || sch_fuse(so, f, oy, &f) ||
                                     sch_parallel(so, f)))
    return -1;
  /* AArch64, 1x1 in blocks of 4: one 4-channel group per step of the reduction (16 sdot for
   * the 4 x 4 tile) is unrolled by 2 to halve the loop's own instructions (by 4 by element:
   * 64 sdot, 4 ldr q of input, 8 ldp of side-by-side weights, 4 of the loop) */
  const topi_conv2d *c = &d->a.p.conv;
  int64_t ib = topi_ceil_div(c->c_in, d->a.bx);
  int64_t ui = tg && tg->arch == TEC_ARCH_AARCH64 && c->kh * c->kw == 1 && d->a.bx == 4 && ib % 2 == 0 ? 2 : 1;
  if (ui == 2 && ib % 4 == 0 && qc_groups(tg, c, d->a.bx, cfg->ow_tile) > 1)
    ui = 4; /* by element: 4 input blocks per step, their weights 2 ldp per output pair */
  /* AArch64, stride 1, NCHW4c: the tile's columns in groups of 4 (or 2), whose 16 (8) input
   * bytes are one read feeding `sdot` by element (SCH_INTRIN_DOT4_LANE), not a broadcast and
   * its address per column */
  int64_t L = qnn_dot_lanes(d->a.by, lanes);
  int64_t grp = !cfg->wlayout && L == 4 ? qc_groups(tg, c, d->a.bx, cfg->ow_tile) : 1;
  /* x86: the 4-channel groups of an input block (i4) unrolled here, so that LLVM keeps kx a
   * loop. Left to LLVM 14 with -mcpu=znver3 (this Zen 4), a 3x3's kx and i4 were both
   * unrolled (336 vpdpbusd), each column's broadcast reused across kx, and the 14 x 2 tile
   * spilled: 477 stack moves per 336 vpdpbusd; unrolled here: 112 vpdpbusd per kx, no spill
   * in the loop, ResNet-18's 3x3 layers 1.3-2.1x faster (docs/quantized.md). 1x1: the same
   * loop as before. */
  int x86 = tg && tg->arch == TEC_ARCH_X86_64;
  if (sch_compute_at(sa, so, xo) || qc_schedule_acc(sa, cfg->wlayout, L, ui, grp, x86))
    return -1;
  if (!s->dp) return 0;
  /* the padded input: the rows one output row reads, in its loop (in_row), or once per call,
   * root, rows in parallel; the block's bytes vectorized */
  sch_stage *sp = sch_stage_of(op->sched, s->dp);
  if (!sp || (in_row && sch_compute_at(sp, so, rows)) ||
      (!in_row && (sch_fuse(sp, sch_axis(sp, 0), sch_axis(sp, 1), &f) ||
                   sch_fuse(sp, f, sch_axis(sp, 2), &f) || (cfg->parallel && sch_parallel(sp, f)))) ||
      sch_vectorize(sp, sch_axis(sp, 4)))
    return -1;
  return 0;
}

/* The tile's accumulators, oc_tile x ow_tile x (y / lanes) vectors, with oc_tile x (y / lanes)
 * weight vectors and a broadcast, within the registers. */
typedef struct qc_rule {
  int64_t vpb, regs, ow, hw; /* hw: the plane's pixels where it may be one row (plane), else 0 */
  int by_lane;               /* the by-element path (qc_groups > 1): a plane's tiles in runs */
} qc_rule;

static int qc_rule_ok(const void *data, const void *config) {
  const qc_rule *r = data;
  const topi_qconv2d_config *c = config;
  /* a plane's last tile (h*w % ow_tile pixels) in whole groups of the by-element path (4 or 2
   * pixels: qc_groups); a row's tile within the row */
  int64_t g = r->by_lane ? qc_run(c->ow_tile) : 1;
  if (c->plane ? c->wlayout || c->ow_tile > r->hw || r->hw % c->ow_tile % g : c->ow_tile > r->ow)
    return 0;
  return (c->ow_tile + 1) * c->oc_tile * r->vpb + 1 <= r->regs || (c->ow_tile == 1 && c->oc_tile == 1);
}

/* The default tile on AArch64 with one accumulator vector per output block (y = 4: the NEON
 * networks' NCHW4c). sdot accumulates in place and ld1r, the broadcast, takes no immediate
 * offset (one address computation each), so the x86 rule's 14 x 2 tile (28 accumulators)
 * makes LLVM spill and shuffle registers: executed instructions per call under qemu (Neoverse
 * N1 +dotprod, scripts/arm_insn.sh TEC_ARM_FP=i8; 256x28x28 -> 256 1x1 / 128x28x28 -> 128 3x3):
 * 14 x 2 13.2M / 17.8M, 7 x 2 8.5M / 11.9M, 4 x 4 7.1M / 11.4M, 5 x 4 6.9M / 11.4M, 6 x 4
 * 6.7M / 12.3M, 7 x 4 (28) 11.4M on the 1x1. So: as many output blocks per broadcast as
 * divide them, up to 4, at most 24 accumulators, and the columns: the largest count dividing
 * ow if it is at least half the cap, else the count with the fewest instructions by the model
 * ceil(ow / t) * (t * oc (sdot) + 2t (ld1r and its address) + oc (weights) + 4 (the loop)).
 * By element (qc_groups, +dotprod, stride 1) the input is t / 4 (t / 2) loads for t a multiple
 * of 4 (2): 28 columns 4 x 4 (5.32M on the 1x1 against 6.71M with ld1r), 14 columns 4 x 4. */
static void qc_default_a64(int64_t ob, int64_t ow, int by_lane, int64_t taps, int64_t *oc,
                           int64_t *tile) {
  if ((!by_lane || (taps <= 8 && ob > 4)) && taps <= 9 && ob % 2 == 0 && ow >= 8) {
    /* a reduction of at most 9 groups (the stem: 3 channels, 3x3) is unrolled whole inside
     * the tile and its weights stay in registers across the columns: 2 blocks (18 weight
     * vectors), 8 columns. mbv1_conv0 3x224x224 -> 32 s2 under qemu: 4 x 4 3.29M, 7 x 4
     * 3.55M, 4 x 2 3.17M, 7 x 2 3.09M, 8 x 2 3.00M, 14 x 2 3.90M, 16 x 1 3.67M (XNNPACK
     * 3.29M). By element, 1x1 with 16-32 input channels (MobileNet v2's b2-b7 expand) and more
     * than one 4-block tile of outputs: 32 -> 192 28x28 0.98M -> 0.91M, 24 -> 144 56x56 2.18M
     * -> 2.10M; 32 -> 16 112x112 (one tile of outputs) 1.15M -> 1.24M, so not there */
    *oc = 2, *tile = 8;
    return;
  }
  for (*oc = ob < 4 ? ob : 4; *oc > 1 && ob % *oc; (*oc)--) {}
  int64_t cap = 24 / *oc, best = 1, cost = -1;
  if (cap > 16) cap = 16; /* the knob's largest value */
  if (cap > ow) cap = ow;
  for (int64_t t = cap; t >= 1; t--)
    if (ow % t == 0) {
      best = t;
      break;
    }
  if (2 * best >= cap) {
    *tile = best;
    return;
  }
  for (int64_t t = 1; t <= cap; t++) {
    int64_t in = !by_lane ? 2 * t : t % 4 == 0 ? t / 4 : t % 2 == 0 ? t / 2 : 2 * t;
    int64_t c = (ow + t - 1) / t * (t * *oc + in + *oc + 4);
    if (cost < 0 || c < cost) cost = c, best = t;
  }
  *tile = best;
}

/* The default tile of the plane as one row (knob plane: AArch64 +dotprod by element, h*w a
 * multiple of 4; the accumulators start from the bias, the tile's outputs requantize as
 * vectors of 16 bytes). Under qemu (docs/arm.md, MobileNet v2's pointwise layers, 1 thread):
 * a reduction of at most 8 input blocks (16-32 channels) is dominated by the requantization,
 * which is the same for every tile, and by the weights, which stay in registers across the
 * tiles at 2 blocks: 4 pixels x 2 blocks (32 -> 192 at 28x28 678,148 insns, against 728,894 at
 * 4 x 4 and 760,468 at 8 x 2); a long one (48 input blocks or more: 192-576 channels) by the
 * loads per sdot: 12 pixels x 2 blocks (3 ldr q of input + 1 ldp of weights per 24 sdot;
 * 384 -> 64 at 14x14 396,454 against 441,271 at 4 x 4; 196 pixels = 16 x 12 + a tile of 4,
 * which runs by element too); between, qc_default_a64's choice over the h*w pixels (4 x 4
 * on 64 -> 384 at 14x14: 539,548, against 568,621 at 12 x 2). */
static void qc_default_plane(int64_t ob, int64_t hw, int64_t taps, int64_t *oc, int64_t *tile) {
  if (ob % 2 == 0 && taps <= 8) {
    *oc = 2, *tile = 4;
  } else if (ob % 2 == 0 && taps >= 48 && hw >= 12) {
    *oc = 2, *tile = 12;
  } else
    qc_default_a64(ob, hw, 1, taps, oc, tile); /* by element: h*w % 4 == 0, tiles of 4 fit */
}

static int qc_space(tec_ctx *ctx, const void *p_arg, const tec_target *target, tune_space *sp) {
  const topi_qconv2d *p = p_arg;
  int lanes = topi_target_lanes(ctx, target); /* 32-bit lanes: the int32 accumulators' */
  if (lanes < 0 || qnn_refuse(ctx, &topi_tmpl_qnn_conv2d, p)) return -1;
  int64_t oh, ow;
  if (topi_conv2d_out_hw(ctx, &p->conv, &oh, &ow)) return -1;
  int64_t vpb = topi_ceil_div(p->conv.out_layout.block, lanes), regs = topi_target_regs(ctx, target, lanes);
  int64_t ob = topi_ceil_div(p->conv.c_out, p->conv.out_layout.block);
  int64_t tw[16], toc[4], def = 1, def_oc = 1, def_plane = 0;
  int ntw = 0, noc = 0;
  const tec_target *tg = topi_target_of(ctx, target);
  int64_t hw = qc_plane_ok(tg, &p->conv) ? oh * ow : 0; /* the plane may be one row */
  for (int64_t t = 1; t <= 16 && t <= (ow > hw ? ow : hw); t++) tw[ntw++] = t;
  for (int64_t t = 1; t <= 4 && t <= ob; t++) toc[noc++] = t;
  /* the default tile: two output blocks per broadcast where that leaves room for 7 columns or
   * more (AVX-512: 14 x 2 accumulators; measured on MobileNet and ResNet layers), else one;
   * the columns: the largest count within the registers dividing ow, else the most */
  int64_t cap = 1;
  for (def_oc = ob >= 2 ? 2 : 1; def_oc >= 1; def_oc--) {
    cap = (regs - 1) / (def_oc * vpb) - 1;
    if (cap > 14) cap = 14;
    if (cap >= 7 || def_oc == 1) break;
  }
  if (cap < 1) cap = 1;
  /* x86 AVX-512, 1x1, a reduction of at most 8 groups of 4 channels (c_in <= 32: MobileNet
   * v2's b2-b5 expand): LLVM 14 (-mcpu=znver3, Zen 4) hoists the 14 x 2 tile's broadcasts
   * ahead of their vpdpbusd and spills them (92-102 stack moves per 112 vpdpbusd in the
   * reduction loop at 24-32 channels; none at 48 or more), so at most 7 columns: no spill,
   * tec bench 1 thread (ms, 14 x 2 -> 7 x 2, ReLU6 clamp narrower than int8): 24 -> 144 at
   * 56x56 0.146 -> 0.091, 32 -> 192 at 28x28 0.046 -> 0.031, 16 -> 96 at 112x112 0.172 ->
   * 0.153; one output block (32 -> 16 at 112x112, no activation: MobileNet v2's b1_project)
   * 14 x 1 (42 stack moves per 56 vpdpbusd) 0.054 -> 7 x 1 0.044. Clamps spanning int8 with 2
   * blocks or more take the packs default below (8 x 2 or 4 x 4, unspilled). */
  if (tg && tg->arch == TEC_ARCH_X86_64 && vpb == 1 && regs >= 32 &&
      topi_conv2d_is_pointwise(&p->conv) &&
      topi_ceil_div(p->conv.c_in, p->conv.in_layout.block) * p->conv.in_layout.block <= 32 && cap > 7)
    cap = 7;
  for (int64_t t = 1; t <= cap && t <= ow; t++)
    if (ow % t == 0 || ow <= cap) def = t;
  if (ow > cap && def < cap / 2) def = cap;
  int by_lane = qc_groups(tg, &p->conv, p->conv.in_layout.block, 4) > 1;
  if (tg && tg->arch == TEC_ARCH_AARCH64 && vpb == 1) {
    int64_t taps = topi_ceil_div(p->conv.c_in, p->conv.in_layout.block) * p->conv.kh * p->conv.kw;
    if (by_lane && hw && hw % 4 == 0) /* the plane as one row: no column wasted at a row's end */
      qc_default_plane(ob, hw, taps, &def_oc, &def), def_plane = 1;
    else
      qc_default_a64(ob, ow, by_lane, taps, &def_oc, &def);
  }
  /* x86, 1x1, NCHW16c, the clamp over all of int8: columns in fours, narrowed by packs
   * (qc_packs4): 8 x 2 where 8 divides ow, else 4 x 4. Zen 4, 1 thread, tec bench (ms):
   * 64 -> 128 at 56x56 14 x 2 0.136, 8 x 2 0.127; 128 -> 128 at 56x56 0.248, 0.238-0.240;
   * 256 -> 256 at 28x28 14 x 2 0.234-0.242, 4 x 4 0.229-0.231. A 3x3 (128 at 28x28, 0.50
   * ms at 14 x 2, 4 x 4 and 8 x 2) keeps its tile. */
  if (vpb == 1 && topi_conv2d_is_pointwise(&p->conv) && qc_packs_fit(tg, p)) {
    if (ow % 8 == 0 && ob >= 2)
      def = 8, def_oc = 2;
    else if (ow % 4 == 0 && ob >= 4)
      def = 4, def_oc = 4;
  }
  static const int64_t b01[] = {0, 1};
  if (tune_space_init(ctx, sp, topi_tmpl_qnn_conv2d.name, topi_tmpl_qnn_conv2d.config_size) ||
      tune_define_field(sp, "ow_tile", "output columns per register tile",
                        offsetof(topi_qconv2d_config, ow_tile), ntw, tw, def) < 0 ||
      tune_define_field(sp, "oc_tile", "output-channel blocks per register tile (one input "
                        "broadcast serves them all)",
                        offsetof(topi_qconv2d_config, oc_tile), noc, toc, def_oc) < 0 ||
      tune_define_field(sp, "in_row", "the padded/shifted input copied per output row, inside "
                        "the row loop (the blocks inside the rows), or once per call (0)",
                        offsetof(topi_qconv2d_config, in_row), 2, b01,
                        p->conv.kh == 1 && p->conv.kw == 1) < 0 ||
      tune_define_field(sp, "parallel", "parallel over (n, output block, rows)",
                        offsetof(topi_qconv2d_config, parallel), 2, b01, 1) < 0 ||
      tune_define_field(sp, "wlayout", "packed kernel: 0 [..][y][4] (4 input channels "
                        "innermost: the dot-product instruction), 1 [..][4][y] (output channels "
                        "innermost: plain widening multiplies)",
                        offsetof(topi_qconv2d_config, wlayout), 2, b01, 0) < 0 ||
      tune_define_field(sp, "plane", "1x1, stride 1, unpadded, input read in place: the plane "
                        "tiled as one row of h*w pixels (ow_tile pixels per tile, dividing "
                        "h*w), 0: row by row",
                        offsetof(topi_qconv2d_config, plane), hw ? 2 : 1, b01, def_plane) < 0)
    return -1;
  qc_rule *r = tec_ctx_alloc(ctx, sizeof *r);
  if (!r) return -1;
  *r = (qc_rule){vpb, regs, ow, hw, by_lane};
  const char *doc = tec_ctx_printf(ctx, "registers: (ow_tile + 1) * oc_tile * %lld + 1 <= %lld; "
                                   "ow_tile <= %lld, or with plane (wlayout 0) <= %lld and "
                                   "%lld %% ow_tile a multiple of 4 (ow_tile 4k) or 2 (4k+2) on AArch64's sdot by element",
                                   (long long)vpb, (long long)regs, (long long)ow, (long long)hw,
                                   (long long)hw);
  return doc ? tune_space_set_rule(sp, 0x33u, qc_rule_ok, r, doc) : -1;
}

const topi_template topi_tmpl_qnn_conv2d = {
    "qnn_conv2d", "int8 conv2d NCHW[x]c on the dot-product instruction, requantization fused",
    TOPI_PROBLEM_QCONV2D, sizeof(topi_qconv2d_config), qc_applies, qc_declare, qc_schedule,
    qc_space, "topi_qconv2d_config"};

/* qnn_conv2d.c — int8 conv2d NCHW[x]c -> NCHW[y]c with the requantization fused
 * (docs/quantized.md). Everything derived from the weights runs once, in prepare:
 *
 *   wp[O, I, ky, kx, i4, o, ii] = kernel[O*y + o, I*x + i4*4 + ii, ky, kx] (0 past c)   int8
 *   bias_q[O, o] = bias[c] - zp_in * sum(kernel[c])   mult[O, o] = w_scale[c] * (s_in / s_out)
 *   acc[n, O, oy, ox, o] = sum_{I, ky, kx, i4, ii} pad_zp(data)[n, I, oy*s + ky - p,
 *                          ox*s + kx - p, i4*4 + ii] * wp[O, I, ky, kx, i4, o, ii]      int32
 *   out[n, O, oy, ox, o] = requant(acc + bias_q[O, o], mult[O, o])                   int8
 *
 * The padding reads the input's zero point, so the reduction is a plain int8 x int8 -> int32
 * dot product whose innermost 4 input channels are consecutive in both operands (the shape a
 * dot-product instruction takes; LLVM vectorizes the widening multiplies meanwhile). A register
 * tile of ow_tile columns of one output block, its y lanes vectorized:
 *
 *   for n, O, oy (parallel, fused)
 *     for xo: acc[ow_tile][y] = 0
 *             for I, ky, kx, i4: for xi (unrolled): for ii (unrolled): acc[xi][:] += x * wp[:]
 *             out[.., xo*ow_tile + xi, :] = requant(acc[xi][:])
 */
#include <string.h>
#include "topi/qnn_internal.h"

#ifndef QC_WLAYOUT_DEFAULT
#define QC_WLAYOUT_DEFAULT 1
#endif

typedef struct qc_decl {
  qnn_conv_args a; /* first: the decl's priv is read as one by qnn_conv_finish's callers */
  const ir_expr *r[5]; /* I, ky, kx, i4, ii */
} qc_decl;

/* the packed kernel's layout is a knob: each schedule builds its own kernel_p, acc and out */
typedef struct qc_sched {
  const qc_decl *d;
  int64_t wlayout;
  te_tensor *wp, *acc;
} qc_sched;

static const ir_expr *wp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qc_sched *s = u;
  const qc_decl *d = s->d;
  const topi_conv2d *p = &d->a.p.conv;
  const ir_expr *lo = i[s->wlayout ? 6 : 5], *li = i[s->wlayout ? 5 : 6];
  const ir_expr *o = ir_add(ir_mul(i[0], ir_int(ctx, d->a.by)), lo);
  const ir_expr *c = ir_add(ir_add(ir_mul(i[1], ir_int(ctx, d->a.bx)), ir_mul(i[4], ir_int(ctx, 4))),
                            li);
  const ir_expr *ok = ir_and(ir_lt(o, ir_int(ctx, p->c_out)), ir_lt(c, ir_int(ctx, p->c_in)));
  const ir_expr *v = TE_AT(d->a.kernel, ir_min(o, ir_int(ctx, p->c_out - 1)),
                           ir_min(c, ir_int(ctx, p->c_in - 1)), i[2], i[3]);
  return ir_select(ok, v, ir_int_t(ctx, TEC_I8, 0));
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qc_sched *s = u;
  const qc_decl *d = s->d;
  const topi_conv2d *p = &d->a.p.conv;
  const ir_expr *const *r = d->r;
  const ir_expr *y = ir_add(ir_mul(i[2], ir_int(ctx, p->stride_h)), ir_sub(r[1], ir_int(ctx, p->pad_h)));
  const ir_expr *x = ir_add(ir_mul(i[3], ir_int(ctx, p->stride_w)), ir_sub(r[2], ir_int(ctx, p->pad_w)));
  const ir_expr *lane = ir_add(ir_mul(r[3], ir_int(ctx, 4)), r[4]);
  const ir_expr *v = qnn_pad(ctx, TEC_I16, TE_AT(d->a.data, i[0], r[0], y, x, lane), y, x, p->h,
                             p->w, p->pad_h, p->pad_w, d->a.p.in.zero_point);
  const ir_expr *w = s->wlayout ? TE_AT(s->wp, i[1], r[0], r[1], r[2], r[3], r[4], i[4])
                                : TE_AT(s->wp, i[1], r[0], r[1], r[2], r[3], i[4], r[4]);
  return te_sum(qnn_mul16(v, ir_cast(TEC_I16, w)), 5, r, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qc_sched *s = u;
  const qc_decl *d = s->d;
  const ir_expr *acc = ir_add(TE_AT(s->acc, i[0], i[1], i[2], i[3], i[4]), TE_AT(d->a.bias_q, i[1], i[4]));
  return qnn_requant(ctx, acc, TE_AT(d->a.mult, i[1], i[4]), d->a.p.out, d->a.p.conv.epi.act);
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

/* kernel_p, acc and out of one schedule (wlayout: the kernel's innermost two dimensions) */
static te_tensor *qc_stages(const topi_decl *dc, int64_t wlayout, qc_sched **so) {
  tec_ctx *ctx = dc->ctx;
  const qc_decl *d = dc->priv;
  const topi_conv2d *c = &d->a.p.conv;
  qc_sched *s = tec_ctx_alloc(ctx, sizeof *s);
  if (!s) return NULL;
  s->d = d, s->wlayout = wlayout;
  int64_t ib = topi_ceil_div(c->c_in, d->a.bx), ob = topi_ceil_div(c->c_out, d->a.by);
  static const char *const wn[2][7] = {{"O", "I", "ky", "kx", "i4", "o", "ii"},
                                       {"O", "I", "ky", "kx", "i4", "ii", "o"}},
                           *const on[] = {"n", "O", "oy", "ox", "o"};
  const ir_expr *const *ws = wlayout ? TE_SHAPE(ctx, ob, ib, c->kh, c->kw, d->a.bx / 4, 4, d->a.by)
                                     : TE_SHAPE(ctx, ob, ib, c->kh, c->kw, d->a.bx / 4, d->a.by, 4);
  s->wp = te_compute(ctx, &(te_compute_decl){.name = "kernel_p", .ndim = 7, .shape = ws,
                                             .body = wp_body, .user = s, .tag = "pack_kernel",
                                             .axis_names = wn[wlayout]});
  const ir_expr *const *os = TE_SHAPE(ctx, c->n, ob, d->a.oh, d->a.ow, d->a.by);
  s->acc = te_compute(ctx, &(te_compute_decl){.name = "acc", .ndim = 5, .shape = os,
                                              .body = acc_body, .user = s, .tag = "qnn_conv2d",
                                              .axis_names = on});
  *so = s;
  return s->wp && s->acc ? te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 5,
                                                              .shape = os, .body = out_body,
                                                              .user = s, .tag = "requant",
                                                              .axis_names = on})
                         : NULL;
}

static int qc_schedule(const topi_decl *dc, const void *cfg_arg, const tec_target *target,
                       topi_op *op) {
  const topi_qconv2d_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_qnn_conv2d, dc, cfg, target)) return -1;
  qc_sched *s = NULL;
  te_tensor *o = qc_stages(dc, cfg->wlayout, &s);
  te_tensor **args = tec_ctx_alloc(dc->ctx, (size_t)dc->nargs * sizeof *args);
  if (!o || !args) return -1;
  memset(op, 0, sizeof *op);
  op->decl = dc;
  if (!(op->sched = sch_create(dc->ctx, 1, &o))) return -1;
  for (int k = 0; k < dc->nargs; k++) args[k] = dc->args[k];
  args[dc->nargs - 1] = o;
  op->nargs = dc->nargs, op->args = args, op->out = o;
  sch_stage *so = sch_stage_of(op->sched, o), *sa = sch_stage_of(op->sched, s->acc);
  sch_iter *xo, *xi, *f;
  if (!so || !sa || sch_split(so, sch_axis(so, 3), cfg->ow_tile, &xo, &xi) ||
      sch_unroll(so, xi) || sch_vectorize(so, sch_axis(so, 4)))
    return -1;
  if (cfg->parallel && (sch_fuse(so, sch_axis(so, 0), sch_axis(so, 1), &f) ||
                        sch_fuse(so, f, sch_axis(so, 2), &f) || sch_parallel(so, f)))
    return -1;
  if (sch_compute_at(sa, so, xo)) return -1;
  sch_iter *r[5];
  for (int k = 0; k < 5; k++) r[k] = sch_reduce_axis(sa, k);
  if (sch_reorder(sa, 10, (sch_iter *[]){sch_axis(sa, 0), sch_axis(sa, 1), sch_axis(sa, 2), r[0],
                                         r[1], r[2], r[3], sch_axis(sa, 3), r[4], sch_axis(sa, 4)}) ||
      sch_unroll(sa, sch_axis(sa, 3)) || sch_unroll(sa, r[4]) || sch_vectorize(sa, sch_axis(sa, 4)))
    return -1;
  return 0;
}

/* The tile's accumulators, ow_tile x (y / lanes) vectors, within the registers. */
typedef struct qc_rule {
  int64_t vpb, regs;
} qc_rule;

static int qc_rule_ok(const void *data, const void *config) {
  const qc_rule *r = data;
  const topi_qconv2d_config *c = config;
  return c->ow_tile * r->vpb + 2 * r->vpb <= r->regs || c->ow_tile == 1;
}

static int qc_space(tec_ctx *ctx, const void *p_arg, const tec_target *target, tune_space *sp) {
  const topi_qconv2d *p = p_arg;
  int lanes = topi_target_lanes(ctx, target); /* 32-bit lanes: the int32 accumulators' */
  if (lanes < 0 || qnn_refuse(ctx, &topi_tmpl_qnn_conv2d, p)) return -1;
  int64_t oh, ow;
  if (topi_conv2d_out_hw(ctx, &p->conv, &oh, &ow)) return -1;
  int64_t vpb = topi_ceil_div(p->conv.out_layout.block, lanes), regs = topi_target_regs(ctx, target, lanes);
  int64_t tw[16], cap = (regs - 2 * vpb) / vpb, def = 1;
  int ntw = 0;
  for (int64_t t = 1; t <= 16 && t <= ow; t++) tw[ntw++] = t;
  if (cap > 14) cap = 14;
  for (int64_t t = 1; t <= cap && t <= ow; t++)
    if (ow % t == 0 || ow <= cap) def = t;
  if (ow > cap && def < cap / 2) def = cap;
  static const int64_t b01[] = {0, 1};
  if (tune_space_init(ctx, sp, topi_tmpl_qnn_conv2d.name, topi_tmpl_qnn_conv2d.config_size) ||
      tune_define_field(sp, "ow_tile", "output columns per register tile",
                        offsetof(topi_qconv2d_config, ow_tile), ntw, tw, def) < 0 ||
      tune_define_field(sp, "parallel", "parallel over (n, output block, rows)",
                        offsetof(topi_qconv2d_config, parallel), 2, b01, 1) < 0 ||
      tune_define_field(sp, "wlayout", "packed kernel: 0 [..][y][4] (4 input channels "
                        "innermost), 1 [..][4][y] (output channels innermost)",
                        offsetof(topi_qconv2d_config, wlayout), 2, b01, QC_WLAYOUT_DEFAULT) < 0)
    return -1;
  qc_rule *r = tec_ctx_alloc(ctx, sizeof *r);
  if (!r) return -1;
  *r = (qc_rule){vpb, regs};
  const char *doc = tec_ctx_printf(ctx, "registers: ow_tile*%lld + %lld <= %lld", (long long)vpb,
                                   2 * (long long)vpb, (long long)regs);
  return doc ? tune_space_set_rule(sp, 0x1u, qc_rule_ok, r, doc) : -1;
}

const topi_template topi_tmpl_qnn_conv2d = {
    "qnn_conv2d", "int8 conv2d NCHW[x]c, kernel packed 4i-innermost, requantization fused",
    TOPI_PROBLEM_QCONV2D, sizeof(topi_qconv2d_config), qc_applies, qc_declare, qc_schedule,
    qc_space, "topi_qconv2d_config"};

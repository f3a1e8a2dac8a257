/* qnn_dense.c — int8 dense (fully connected) with the requantization fused
 * (docs/quantized.md). The weight [n][k] is packed once, in prepare, into panels of nr output
 * columns with 4 consecutive k innermost (a dot-product instruction's operand), its row sums
 * folded into the bias there too:
 *
 *   wp[J, k4, j, kk] = w[J*nr + j, k4*4 + kk] (0 past n and k)                        int8
 *   acc[i, j] = sum_{k4, kk} a[i, k4*4 + kk] * wp[j / nr, k4, j % nr, kk]             int32
 *   out[i, j] = requant(acc[i, j] + bias_q[j], mult[j])                              int8
 *
 * An mr x nr register tile over the whole k loop. wlayout 0 (the default): the nr columns
 * split by L (the target's int32 lanes) and reduced by dot4 with the 4 kk (sch_tensorize,
 * docs/tensorize.md: vpdpbusd, vpmaddwd, sdot, smull by target), a's group of 4 broadcast; a
 * is read from a copy when k % 4 != 0 (padded to whole groups) or the target multiplies u8 by
 * s8 (vpdpbusd: the copy holds a + 128 as uint8 and bias_q folds zp_in + 128):
 *
 *   for jo (parallel): for io: acc[mr][nr] = 0
 *                              for k4: for ii, jv (unrolled): acc[ii][jv*L : +L] =
 *                                        dot4(acc[..], a_p[i, k4*4 : +4], wp[jo, k4, jv*L : +L, 0:4])
 *                              out[tile] = requant(acc)
 *
 * acc is [ceil(m/mr)*mr][ceil(n/nr)*nr] so the tile needs no guard. wlayout 1: w as
 * [..][4][nr] and plain int16 multiplies, nr vectorized, kk and the rows unrolled.
 */
#include <string.h>
#include "topi/qnn_internal.h"

typedef struct qf_decl {
  topi_qdense p;
  int64_t nr;
  te_tensor *a, *w, *bias, *w_scale;
  te_tensor *bias_q, *mult;
  const ir_expr *rk4, *rkk;
} qf_decl;

/* the packed weight and acc depend on nr (a knob): built per schedule, as dense's panels */
typedef struct qf_sched {
  const qf_decl *d;
  int64_t nr, wlayout;
  int shift;             /* dot path on VNNI: a_p holds a + 128 as uint8 */
  te_tensor *wp, *acc, *ap, *bias_q;
} qf_sched;

static const ir_expr *wp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qf_sched *s = u;
  const topi_qdense *p = &s->d->p;
  const ir_expr *j = ir_add(ir_mul(i[0], ir_int(ctx, s->nr)), i[s->wlayout ? 3 : 2]);
  const ir_expr *k = ir_add(ir_mul(i[1], ir_int(ctx, 4)), i[s->wlayout ? 2 : 3]);
  const ir_expr *ok = ir_and(ir_lt(j, ir_int(ctx, p->n)), ir_lt(k, ir_int(ctx, p->k)));
  const ir_expr *v = TE_AT(s->d->w, ir_min(j, ir_int(ctx, p->n - 1)), ir_min(k, ir_int(ctx, p->k - 1)));
  return ir_select(ok, v, ir_int_t(ctx, TEC_I8, 0));
}

/* the dot path's activations: k padded to whole groups of 4 (0 there: the weights are 0) and,
 * on VNNI, shifted to uint8 */
static const ir_expr *ap_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qf_sched *s = u;
  const qf_decl *d = s->d;
  const ir_expr *v = TE_AT(d->a, i[0], ir_min(i[1], ir_int(ctx, d->p.k - 1)));
  if (s->shift) v = ir_add(ir_cast(TEC_U8, v), ir_int_t(ctx, TEC_U8, 128)); /* wraps: q + 128 */
  if (d->p.k % 4)
    v = ir_select(ir_likely(ir_lt(i[1], ir_int(ctx, d->p.k))), v, ir_int_t(ctx, v->type, 0));
  return v;
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qf_sched *s = u;
  const qf_decl *d = s->d;
  const ir_expr *k = ir_add(ir_mul(d->rk4, ir_int(ctx, 4)), d->rkk);
  if (!s->wlayout) { /* the dot path: int32(a) * int32(wp), what dot4 matches */
    const ir_expr *a = s->ap ? TE_AT(s->ap, i[0], k) : TE_AT(d->a, i[0], k);
    const ir_expr *nr = ir_int(ctx, s->nr);
    const ir_expr *w = TE_AT(s->wp, ir_floordiv(i[1], nr), d->rk4, ir_floormod(i[1], nr), d->rkk);
    return te_sum(ir_mul(ir_cast(TEC_I32, a), ir_cast(TEC_I32, w)), 2,
                  (const ir_expr *[]){d->rk4, d->rkk}, NULL);
  }
  const ir_expr *a = ir_cast(TEC_I16, TE_AT(d->a, i[0], k));
  if (d->p.k % 4) /* past k: the packed weight is 0 there; read nothing out of bounds */
    a = ir_select(ir_likely(ir_lt(k, ir_int(ctx, d->p.k))), a, ir_int_t(ctx, TEC_I16, 0));
  const ir_expr *nr = ir_int(ctx, s->nr), *J = ir_floordiv(i[1], nr), *j = ir_floormod(i[1], nr);
  const ir_expr *w = s->wlayout ? TE_AT(s->wp, J, d->rk4, d->rkk, j) : TE_AT(s->wp, J, d->rk4, j, d->rkk);
  return te_sum(qnn_mul16(a, ir_cast(TEC_I16, w)), 2, (const ir_expr *[]){d->rk4, d->rkk}, NULL);
}

static const ir_expr *out_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  qf_sched *s = u;
  const ir_expr *acc = ir_add(TE_AT(s->acc, i[0], i[1]), TE_AT(s->bias_q, i[1]));
  return qnn_requant(ctx, acc, TE_AT(s->d->mult, i[1]), s->d->p.out, s->d->p.act);
}

static const char *qf_why(tec_ctx *ctx, const topi_qdense *p) {
  if (!p) return "qnn_dense: the problem is NULL";
  if (p->m < 1 || p->n < 1 || p->k < 1)
    return tec_ctx_printf(ctx, "qnn_dense: sizes must be >= 1 (got m=%lld n=%lld k=%lld)",
                          (long long)p->m, (long long)p->n, (long long)p->k);
  if (p->act < TOPI_ACT_NONE || p->act > TOPI_ACT_RELU6)
    return tec_ctx_printf(ctx, "qnn_dense: activation %d is not one of TOPI_ACT_NONE, _RELU, "
                               "_RELU6", (int)p->act);
  if (topi_qparams_check(ctx, "qnn_dense", "in", p->in) ||
      topi_qparams_check(ctx, "qnn_dense", "out", p->out))
    return tec_ctx_error(ctx);
  return NULL;
}

static int qf_applies(tec_ctx *ctx, const void *p, const char **why) {
  const char *w = qf_why(ctx, p);
  if (why) *why = w;
  return w == NULL;
}

static int qf_declare(tec_ctx *ctx, const void *p_arg, topi_decl *out) {
  const topi_qdense *p = p_arg;
  if (!ctx) return -1;
  if (!out) return tec_ctx_set_error(ctx, "qnn_dense: problem and decl are required");
  const char *why = qf_why(ctx, p);
  if (why) return tec_ctx_set_error(ctx, "%s", why);
  qf_decl *d = tec_ctx_alloc(ctx, sizeof *d);
  te_tensor **args = tec_ctx_alloc(ctx, 5 * sizeof *args);
  topi_qdense *copy = tec_ctx_alloc(ctx, sizeof *copy);
  if (!d || !args || !copy) return -1;
  d->p = *copy = *p;
  d->a = te_placeholder(ctx, "a", TEC_I8, 2, TE_SHAPE(ctx, p->m, p->k));
  d->w = te_const_placeholder(ctx, "w", TEC_I8, 2, TE_SHAPE(ctx, p->n, p->k));
  if (p->bias) d->bias = te_const_placeholder(ctx, "bias", TEC_I32, 1, TE_SHAPE(ctx, p->n));
  d->w_scale = te_const_placeholder(ctx, "w_scale", TEC_F32, 1, TE_SHAPE(ctx, p->n));
  d->rk4 = te_reduce_axis_n(ctx, "k4", topi_ceil_div(p->k, 4));
  d->rkk = te_reduce_axis_n(ctx, "kk", 4);
  d->mult = qnn_mult(ctx, d->w_scale, p->n, 1, p->in, p->out);
  d->bias_q = qnn_bias(ctx, d->bias, qnn_wsum(ctx, d->w), p->n, 1, p->in.zero_point);
  /* out is declared for the argument list; each schedule builds its own (its nr) */
  te_tensor *o = te_placeholder(ctx, "out", TEC_I8, 2, TE_SHAPE(ctx, p->m, p->n));
  if (!d->a || !d->w || (p->bias && !d->bias) || !d->w_scale || !d->mult || !d->bias_q || !o)
    return -1;
  int na = 0;
  args[na++] = d->a, args[na++] = d->w;
  if (d->bias) args[na++] = d->bias;
  args[na++] = d->w_scale, args[na++] = o;
  *out = (topi_decl){&topi_tmpl_qnn_dense, ctx, copy, na, args, o, d};
  return 0;
}

/* AArch64 +dotprod (4 lanes): k's groups of 4 in runs of 4 (or 2), whose 16 (8) bytes of a
 * row are one read feeding sdot by element (SCH_INTRIN_DOT4_LANE), not a broadcast per group:
 * the run's length, 1 elsewhere (the plain dot4). */
static int64_t qf_groups(const tec_target *t, int64_t nk) {
  if (!t || t->arch != TEC_ARCH_AARCH64 || !tec_target_has(t, TEC_FEATURE_DOTPROD)) return 1;
  return nk % 4 == 0 ? 4 : nk % 2 == 0 ? 2 : 1;
}

static int qf_schedule(const topi_decl *dc, const void *cfg_arg, const tec_target *target,
                       topi_op *op) {
  const topi_qdense_config *cfg = cfg_arg;
  if (!dc || !cfg || !op) return -1;
  if (topi_config_check(&topi_tmpl_qnn_dense, dc, cfg, target)) return -1;
  tec_ctx *ctx = dc->ctx;
  const qf_decl *d = dc->priv;
  const topi_qdense *p = &d->p;
  qf_sched *s = tec_ctx_alloc(ctx, sizeof *s);
  if (!s) return -1;
  int lanes = topi_target_lanes(ctx, target);
  if (lanes < 0) return -1;
  s->d = d, s->nr = cfg->nr, s->wlayout = cfg->wlayout;
  s->shift = !s->wlayout && qnn_dot_shift(topi_target_of(ctx, target));
  int64_t L = qnn_dot_lanes(cfg->nr, lanes);
  static const char *const wn[2][4] = {{"J", "k4", "j", "kk"}, {"J", "k4", "kk", "j"}},
                           *const an[] = {"i", "j"};
  int64_t nj = topi_ceil_div(p->n, s->nr), nk = topi_ceil_div(p->k, 4);
  s->wp = te_compute(ctx, &(te_compute_decl){
      .name = "w_p", .ndim = 4,
      .shape = s->wlayout ? TE_SHAPE(ctx, nj, nk, 4, s->nr) : TE_SHAPE(ctx, nj, nk, s->nr, 4),
      .body = wp_body, .user = s, .tag = "pack_kernel", .axis_names = wn[s->wlayout]});
  s->bias_q = d->bias_q;
  if (!s->wlayout && (s->shift || p->k % 4)) {
    s->ap = te_compute(ctx, &(te_compute_decl){.name = "a_p", .ndim = 2,
                                               .shape = TE_SHAPE(ctx, p->m, nk * 4), .body = ap_body,
                                               .user = s, .tag = "pad_shift", .axis_names = an});
    if (s->shift)
      s->bias_q = qnn_bias(ctx, d->bias, qnn_wsum(ctx, d->w), p->n, 1, p->in.zero_point + 128);
  }
  /* the dot path's acc covers whole tiles (no guard in the tensorized nest) */
  int64_t am = s->wlayout ? p->m : topi_ceil_div(p->m, cfg->mr) * cfg->mr;
  s->acc = te_compute(ctx, &(te_compute_decl){.name = "acc", .ndim = 2,
                                              .shape = TE_SHAPE(ctx, am, s->wlayout ? p->n : nj * s->nr),
                                              .body = acc_body, .user = s, .tag = "qnn_dense",
                                              .axis_names = an});
  te_tensor *o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, p->m, p->n),
                                                    .body = out_body, .user = s, .tag = "requant",
                                                    .axis_names = an});
  if (!s->wp || !s->acc || !o || !s->bias_q || (!s->wlayout && (s->shift || p->k % 4) && !s->ap))
    return -1;
  if (topi_op_begin_out(dc, o, op)) return -1;
  sch_stage *so = sch_stage_of(op->sched, o), *sa = sch_stage_of(op->sched, s->acc);
  sch_iter *io, *ii, *jo, *ji;
  if (!so || !sa || sch_split(so, sch_axis(so, 0), cfg->mr, &io, &ii) ||
      sch_split(so, sch_axis(so, 1), cfg->nr, &jo, &ji) ||
      sch_reorder(so, 4, (sch_iter *[]){jo, io, ii, ji}) || sch_unroll(so, ii) ||
      sch_vectorize(so, ji) || (cfg->parallel && sch_parallel(so, jo)) ||
      sch_compute_at(sa, so, io))
    return -1;
  sch_iter *k4 = sch_reduce_axis(sa, 0), *kk = sch_reduce_axis(sa, 1), *jv, *jl;
  if (s->ap) { /* once per call, rows in parallel */
    sch_stage *sp = sch_stage_of(op->sched, s->ap);
    if (!sp || (cfg->parallel && sch_parallel(sp, sch_axis(sp, 0))) ||
        sch_split(sp, sch_axis(sp, 1), 16, &jv, &jl) || sch_vectorize(sp, jl))
      return -1;
  }
  int64_t grp = s->wlayout || L != 4 ? 1 : qf_groups(topi_target_of(ctx, target), nk);
  if (grp > 1) {
    sch_iter *kg, *kl;
    return sch_split(sa, sch_axis(sa, 1), L, &jv, &jl) || sch_split(sa, k4, grp, &kg, &kl) ||
                   sch_reorder(sa, 6, (sch_iter *[]){kg, sch_axis(sa, 0), jv, kl, jl, kk}) ||
                   sch_unroll(sa, sch_axis(sa, 0)) || sch_unroll(sa, jv) ||
                   sch_tensorize(sa, kl, SCH_INTRIN_DOT4_LANE)
               ? -1 : 0;
  }
  if (!s->wlayout)
    return sch_split(sa, sch_axis(sa, 1), L, &jv, &jl) ||
                   sch_reorder(sa, 5, (sch_iter *[]){k4, sch_axis(sa, 0), jv, jl, kk}) ||
                   sch_unroll(sa, sch_axis(sa, 0)) || sch_unroll(sa, jv) ||
                   sch_tensorize(sa, jl, SCH_INTRIN_DOT4)
               ? -1 : 0;
  if (sch_reorder(sa, 4, (sch_iter *[]){k4, sch_axis(sa, 0), kk, sch_axis(sa, 1)}) ||
      sch_unroll(sa, sch_axis(sa, 0)) || sch_unroll(sa, kk) || sch_vectorize(sa, sch_axis(sa, 1)))
    return -1;
  return 0;
}

static int qf_space(tec_ctx *ctx, const void *p_arg, const tec_target *target, tune_space *sp) {
  const topi_qdense *p = p_arg;
  int lanes = topi_target_lanes(ctx, target);
  if (lanes < 0 || qnn_refuse(ctx, &topi_tmpl_qnn_dense, p)) return -1;
  int64_t mr[8], nr[4];
  int nm = 0, nn = 0;
  for (int64_t t = 1; t <= 8 && t <= p->m; t++) mr[nm++] = t;
  for (int64_t v = 1; v <= 4 && (v - 1) * lanes < p->n; v++) nr[nn++] = v * lanes;
  /* the default tile (the dot path): the widest panel dividing n (a panel past n makes the
   * tile's last column guarded, which LLVM compiles far slower: measured 40x on 256x1024x1024
   * with nr 48), then as many rows as the registers hold beside its nr / lanes weight vectors
   * and a broadcast, at most 8 (6 x 64 on AVX-512: 1.09x oneDNN's VNNI GEMM, 4x32 0.70x) */
  int64_t def_n = nr[nn - 1];
  for (int v = nn - 1; v >= 0; v--)
    if (p->n % nr[v] == 0) {
      def_n = nr[v];
      break;
    }
  int64_t nv = def_n / lanes, regs = topi_target_regs(ctx, target, lanes);
  int64_t def_m = (regs - nv - 1) / (nv > 0 ? nv : 1);
  /* by element (qf_groups): a row's G groups in one register and G weight vectors per panel
   * vector, so mr * (nv + 1) + G * nv <= 32; 8 x 8 (16 accumulators, 8 weights, 8 rows:
   * executed per sdot under qemu 1.25 instructions in the loop, against 4 x 16's 1.38 and
   * 6 x 16's spill) where 8 divides n */
  int64_t grp = lanes == 4 ? qf_groups(topi_target_of(ctx, target), topi_ceil_div(p->k, 4)) : 1;
  if (grp > 1 && p->n % 8 == 0) {
    def_n = 8, nv = 2;
    def_m = (regs - grp * nv) / (nv + 1);
  }
  if (def_m > 8) def_m = 8;
  if (def_m > p->m) def_m = p->m;
  if (def_m < 1) def_m = 1;
  static const int64_t b01[] = {0, 1};
  if (tune_space_init(ctx, sp, topi_tmpl_qnn_dense.name, topi_tmpl_qnn_dense.config_size) ||
      tune_define_field(sp, "mr", "rows per register tile", offsetof(topi_qdense_config, mr),
                        nm, mr, def_m) < 0 ||
      tune_define_field(sp, "nr", "columns per register tile (the packed panel width)",
                        offsetof(topi_qdense_config, nr), nn, nr, def_n) < 0 ||
      tune_define_field(sp, "parallel", "the panel loop parallel",
                        offsetof(topi_qdense_config, parallel), 2, b01, 1) < 0 ||
      tune_define_field(sp, "wlayout", "packed w: 0 [..][nr][4] (4 k innermost: the dot-product "
                        "instruction), 1 [..][4][nr] (plain widening multiplies)",
                        offsetof(topi_qdense_config, wlayout), 2, b01, 0) < 0)
    return -1;
  return 0;
}

const topi_template topi_tmpl_qnn_dense = {
    "qnn_dense", "int8 dense on the dot-product instruction, requantization fused",
    TOPI_PROBLEM_QDENSE, sizeof(topi_qdense_config), qf_applies, qf_declare, qf_schedule,
    qf_space, "topi_qdense_config"};

/* dense_int8.c — topi_dense_int8: out[i, j] = sum_k int32(a[i, k]) * int32(w[j, k]), uint8
 * activations by int8 weights into int32, on the target's dot-product instruction through
 * sch_tensorize(dot4) (docs/tensorize.md):
 *
 *   wp[jo, ko, jl, q] = w[jo*L + jl, ko*4 + q]          prepare (w constant): VNNI layout
 *   out[i, j]         = sum_k int32(a[i, k]) * int32(wp[j/L, k/4, j%L, k%4])
 *
 *   for jt in n / (nv*L)                     a panel of nv*L columns
 *     for it in m / mr
 *       out.tile[mr][nv*L] = 0               (the init, vectorized by tensorize)
 *       for ko in k / 4
 *         for ii in mr, jv in nv (unrolled)
 *           out[i, jv*L : +L] = dot4(out[..], a[i, ko*4 : +4] (one group, broadcast),
 *                                    wp[jt*nv + jv, ko, 0:L, 0:4])
 *
 * The tile's accumulators stay in registers over the ko loop (LLVM promotes the output's
 * loads and stores: the buffer is noalias). L = the target's int32 lanes (16 on AVX-512, 8
 * on AVX2, 4 on NEON). No k blocking or parallel loop yet.
 *
 * int8 activations (a_signed): vpdpbusd multiplies uint8 by int8, so
 *   au[i, k]  = uint8(a[i, k] + 128)                     a pass over a (m*k bytes)
 *   comp[j]   = 128 * sum_k w[j, k]                      prepare: depends on w only
 *   out[i, j] = acc[i, j] - comp[j]                      acc: the GEMM above over au
 * exact, since sum (a + 128) * w = sum a*w + 128 * sum w.
 */
#include "topi/internal.h"

typedef struct di8 {
  te_tensor *a, *w, *wp, *au, *acc, *comp;
  const ir_expr *k;
  int64_t lanes, kdim;
} di8;

static const ir_expr *wp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  di8 *g = u;
  const ir_expr *j = ir_add(ir_mul(i[0], ir_int(ctx, g->lanes)), i[2]);
  return TE_AT(g->w, j, ir_add(ir_mul(i[1], ir_int(ctx, 4)), i[3]));
}

static const ir_expr *au_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  di8 *g = u;
  return ir_cast(TEC_U8, ir_add(ir_cast(TEC_I32, TE_AT(g->a, i[0], i[1])), ir_int_t(ctx, TEC_I32, 128)));
}

static const ir_expr *comp_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  di8 *g = u;
  const ir_expr *kc = te_reduce_axis_n(ctx, "kc", g->kdim);
  return te_sum(ir_mul(ir_cast(TEC_I32, TE_AT(g->w, i[0], kc)), ir_int_t(ctx, TEC_I32, 128)), 1,
                &kc, NULL);
}

static const ir_expr *sub_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  di8 *g = u;
  (void)ctx;
  return ir_sub(TE_AT(g->acc, i[0], i[1]), TE_AT(g->comp, i[1]));
}

static const ir_expr *acc_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  di8 *g = u;
  const ir_expr *L = ir_int(ctx, g->lanes), *four = ir_int(ctx, 4);
  const ir_expr *a = TE_AT(g->au ? g->au : g->a, i[0], g->k);
  const ir_expr *w = TE_AT(g->wp, ir_floordiv(i[1], L), ir_floordiv(g->k, four),
                           ir_floormod(i[1], L), ir_floormod(g->k, four));
  return te_sum(ir_mul(ir_cast(TEC_I32, a), ir_cast(TEC_I32, w)), 1, &g->k, NULL);
}

/* t's innermost axis split by L, the inner part vectorized (an elementwise pass). */
static int vectorize_inner(sch_schedule *s, te_tensor *t, int64_t L) {
  sch_stage *st = sch_stage_of(s, t);
  sch_iter *o, *i;
  return !st || sch_split(st, sch_axis(st, 1), L, &o, &i) || sch_vectorize(st, i) ? -1 : 0;
}


int topi_dense_int8(tec_ctx *ctx, const topi_dense_int8_problem *p,
                    const topi_dense_int8_config *cfg,
                    const tec_target *target, topi_op *out) {
  if (!ctx) return -1;
  if (!p || !out) return tec_ctx_set_error(ctx, "topi_dense_int8: problem and op are required");
  if (!(target = topi_target_of(ctx, target))) return -1;
  int64_t L = target->vector_bits >= 128 ? target->vector_bits / 32 : 4;
  if (L > 16) L = 16;
  if (p->m < 1 || p->n < 1 || p->k < 1 || p->k % 4 || p->n % L)
    return tec_ctx_set_error(ctx, "topi_dense_int8: m %lld, n %lld, k %lld: each must be >= 1, k "
                                  "a multiple of 4 (dot4's groups) and n of %lld (the target's "
                                  "int32 lanes)", (long long)p->m, (long long)p->n,
                             (long long)p->k, (long long)L);
  topi_dense_int8_config c = cfg ? *cfg : (topi_dense_int8_config){0, 0};
  if (!c.nv) c.nv = p->n % (4 * L) == 0 ? 4 : p->n % (2 * L) == 0 ? 2 : 1;
  /* accumulators + the nv weight vectors + a broadcast + one spare */
  int64_t budget = (target->vector_regs > 0 ? target->vector_regs : 16) - c.nv - 2;
  if (!c.mr) c.mr = topi_divisor_upto(p->m, budget / c.nv < 8 ? budget / c.nv : 8);
  if (c.mr < 1 || c.nv < 1 || p->m % c.mr || p->n % (c.nv * L))
    return tec_ctx_set_error(ctx, "topi_dense_int8: mr %lld must divide m %lld and nv %lld * %lld "
                                  "lanes divide n %lld", (long long)c.mr, (long long)p->m,
                             (long long)c.nv, (long long)L, (long long)p->n);
  di8 *g = tec_ctx_alloc(ctx, sizeof *g);
  if (!g) return -1;
  g->lanes = L, g->kdim = p->k;
  g->a = te_placeholder(ctx, "a", p->a_signed ? TEC_I8 : TEC_U8, 2, TE_SHAPE(ctx, p->m, p->k));
  g->w = te_const_placeholder(ctx, "w", TEC_I8, 2, TE_SHAPE(ctx, p->n, p->k));
  g->wp = te_compute(ctx, &(te_compute_decl){.name = "wp", .ndim = 4,
                                             .shape = TE_SHAPE(ctx, p->n / L, p->k / 4, L, 4),
                                             .body = wp_body, .user = g});
  g->k = te_reduce_axis_n(ctx, "k", p->k);
  if (p->a_signed)
    g->au = te_compute(ctx, &(te_compute_decl){.name = "au", .ndim = 2, .shape = g->a->shape,
                                               .body = au_body, .user = g});
  te_tensor *o = g->acc = te_compute(ctx, &(te_compute_decl){.name = p->a_signed ? "acc" : "out",
                                                             .ndim = 2,
                                                             .shape = TE_SHAPE(ctx, p->m, p->n),
                                                             .body = acc_body, .user = g});
  if (p->a_signed) {
    g->comp = te_compute(ctx, &(te_compute_decl){.name = "comp", .ndim = 1,
                                                 .shape = TE_SHAPE(ctx, p->n), .body = comp_body,
                                                 .user = g});
    o = te_compute(ctx, &(te_compute_decl){.name = "out", .ndim = 2, .shape = g->acc->shape,
                                           .body = sub_body, .user = g});
  }
  if (!o) return -1;
  sch_schedule *s = sch_create(ctx, 1, &o);
  sch_stage *st = sch_stage_of(s, g->acc);
  if (!st || (p->a_signed && (vectorize_inner(s, g->au, L) || vectorize_inner(s, o, L))))
    return -1;
  sch_iter *it, *ii, *jt, *jr, *jv, *jl, *ko, *ki;
  if (sch_split(st, sch_axis(st, 0), c.mr, &it, &ii) ||
      sch_split(st, sch_axis(st, 1), c.nv * L, &jt, &jr) || sch_split(st, jr, L, &jv, &jl) ||
      sch_split(st, sch_reduce_axis(st, 0), 4, &ko, &ki) ||
      sch_reorder(st, 7, (sch_iter *[]){jt, it, ko, ii, jv, jl, ki}) ||
      (c.mr > 1 && sch_unroll(st, ii)) || (c.nv > 1 && sch_unroll(st, jv)) ||
      sch_tensorize(st, jl, SCH_INTRIN_DOT4))
    return -1;
  te_tensor **args = tec_ctx_alloc(ctx, sizeof *args * 3);
  if (!args) return -1;
  args[0] = g->a, args[1] = g->w, args[2] = o;
  *out = (topi_op){NULL, s, 3, args, o};
  return 0;
}

/* asprog.c — the tuned-mode suites' programs (asprog.h): a matmul with bias and a floor
 * (relu when k is 0) and a two-stage 3-tap stencil, their plain-C outputs, and running a
 * schedule of one on given arguments. */
#include "asprog.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

typedef struct body_ctx {
  te_tensor *a, *b;
  const ir_expr *r;
  double k;
} body_ctx;

static const ir_expr *mm(tec_ctx *ctx, const ir_expr *const *i, void *u_) {
  body_ctx *u = u_;
  return TE_SUM(ir_mul(TE_AT(u->a, i[0], u->r), TE_AT(u->b, u->r, i[1])), u->r);
}
static const ir_expr *add_bias(tec_ctx *ctx, const ir_expr *const *i, void *u_) {
  body_ctx *u = u_;
  (void)ctx;
  return ir_add(TE_AT(u->a, i[0], i[1]), TE_AT(u->b, i[1]));
}
static const ir_expr *floor_k(tec_ctx *ctx, const ir_expr *const *i, void *u_) {
  body_ctx *u = u_;
  return ir_max(TE_AT(u->a, i[0], i[1]), ir_float(ctx, u->k));
}
static const ir_expr *taps_x(tec_ctx *ctx, const ir_expr *const *i, void *u_) {
  body_ctx *u = u_;
  const ir_expr *s = TE_AT(u->a, i[0], i[1]);
  for (int t = 1; t < 3; t++) s = ir_add(s, TE_AT(u->a, i[0], ir_add(i[1], ir_int(ctx, t))));
  return s;
}
static const ir_expr *taps_y(tec_ctx *ctx, const ir_expr *const *i, void *u_) {
  body_ctx *u = u_;
  const ir_expr *s = TE_AT(u->a, i[0], i[1]);
  for (int t = 1; t < 3; t++) s = ir_add(s, TE_AT(u->a, ir_add(i[0], ir_int(ctx, t)), i[1]));
  return ir_mul(s, ir_float(ctx, u->k));
}

static const ir_expr *row_sum(tec_ctx *ctx, const ir_expr *const *i, void *u_) {
  body_ctx *u = u_;
  return TE_SUM(ir_mul(TE_AT(u->a, i[0], u->r), ir_float(ctx, u->k)), u->r);
}

static te_tensor *stage(tec_ctx *ctx, const char *name, int64_t d0, int64_t d1, te_body_fn fn,
                        body_ctx u) {
  body_ctx *c = tec_ctx_alloc(ctx, sizeof *c);
  *c = u;
  te_tensor *t = te_compute(ctx, &(te_compute_decl){.name = name, .ndim = 2,
                                                    .shape = TE_SHAPE(ctx, d0, d1),
                                                    .body = fn, .user = c});
  ck_assert_msg(t != NULL, "%s", tec_ctx_error(ctx));
  return t;
}

void asprog_matmul(asprog *g, tec_ctx *ctx, int64_t m, int64_t n, int64_t kk, double k) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, m, kk));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, kk, n));
  te_tensor *bias = te_placeholder(ctx, "bias", TEC_F32, 1, TE_SHAPE(ctx, n));
  te_tensor *C = stage(ctx, "C", m, n, mm, (body_ctx){A, B, te_reduce_axis_n(ctx, "k", kk), 0});
  te_tensor *D = stage(ctx, "D", m, n, add_bias, (body_ctx){C, bias, NULL, 0});
  te_tensor *E = stage(ctx, "E", m, n, floor_k, (body_ctx){D, NULL, NULL, k});
  *g = (asprog){.ctx = ctx, .nargs = 4, .args = {A, B, bias, E},
                .shape = {{m, kk}, {kk, n}, {n, 0}, {m, n}}, .k = k};
}

void asprog_stencil(asprog *g, tec_ctx *ctx, int64_t h, int64_t w, double k) {
  te_tensor *in = te_placeholder(ctx, "in", TEC_F32, 2, TE_SHAPE(ctx, h + 2, w + 2));
  te_tensor *bx = stage(ctx, "bx", h + 2, w, taps_x, (body_ctx){in, NULL, NULL, 0});
  te_tensor *by = stage(ctx, "by", h, w, taps_y, (body_ctx){bx, NULL, NULL, k});
  *g = (asprog){.ctx = ctx, .nargs = 2, .args = {in, by}, .shape = {{h + 2, w + 2}, {h, w}},
                .k = k, .kind = 1};
}

void asprog_rowsum(asprog *g, tec_ctx *ctx, int64_t m, int64_t n, double k) {
  te_tensor *x = te_placeholder(ctx, "x", TEC_F32, 2, TE_SHAPE(ctx, m, n));
  body_ctx *u = tec_ctx_alloc(ctx, sizeof *u);
  *u = (body_ctx){x, NULL, te_reduce_axis_n(ctx, "j", n), k};
  te_tensor *s = te_compute(ctx, &(te_compute_decl){.name = "s", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, m),
                                                    .body = row_sum, .user = u});
  ck_assert_msg(s != NULL, "%s", tec_ctx_error(ctx));
  *g = (asprog){.ctx = ctx, .nargs = 2, .args = {x, s}, .shape = {{m, n}, {m, 0}}, .k = k,
                .kind = 2};
}

void asprog_args(const asprog *g, DLTensor *dl, unsigned seed) {
  for (int i = 0; i < g->nargs; i++) {
    int nd = g->args[i]->ndim;
    dl[i] = i < g->nargs - 1 ? tu_rand_f32(nd, g->shape[i], seed + 7u * (unsigned)i)
                             : tu_zeros(TEC_F32, nd, g->shape[i]);
  }
}

void asprog_free_args(const asprog *g, DLTensor *dl) {
  for (int i = 0; i < g->nargs; i++) tec_dl_free(&dl[i]);
}

float *asprog_plain(const asprog *g, const DLTensor *dl) {
  int64_t m = g->shape[g->nargs - 1][0], n = g->shape[g->nargs - 1][1];
  float *out = malloc(sizeof *out * (size_t)(m * (n ? n : 1)));
  ck_assert_ptr_nonnull(out);
  if (g->kind == 2) {
    int64_t cols = g->shape[0][1];
    for (int64_t i = 0; i < m; i++) {
      double s = 0;
      for (int64_t j = 0; j < cols; j++) s += tu_f32(&dl[0])[i * cols + j];
      out[i] = (float)(s * g->k);
    }
    return out;
  }
  if (g->kind == 0) { /* matmul */
    int64_t kk = g->shape[0][1];
    tu_ref_matmul(tu_f32(&dl[0]), tu_f32(&dl[1]), out, m, n, kk);
    for (int64_t i = 0; i < m * n; i++) {
      float x = out[i] + tu_f32(&dl[2])[i % n];
      out[i] = x > (float)g->k ? x : (float)g->k;
    }
    return out;
  }
  const float *in = tu_f32(&dl[0]);
  int64_t W = n + 2;
  for (int64_t y = 0; y < m; y++)
    for (int64_t x = 0; x < n; x++) {
      double s = 0;
      for (int dy = 0; dy < 3; dy++)
        for (int dx = 0; dx < 3; dx++) s += in[(y + dy) * W + x + dx];
      out[y * n + x] = (float)(s * g->k);
    }
  return out;
}

int asprog_run(const asprog *g, sch_schedule *s, const char *target, DLTensor *dl, char *msg,
               size_t cap) {
  lower_func *f = tec_lower(s, "asprog_f", g->nargs, g->args);
  tec_module *m = f ? tec_build(g->ctx, 1, &f, target) : NULL;
  if (!m) {
    snprintf(msg, cap, "%s", tec_ctx_error(g->ctx));
    return -1;
  }
  DLTensor *p[4];
  for (int i = 0; i < g->nargs; i++) p[i] = &dl[i];
  int rc = tec_module_run(m, "asprog_f", g->nargs, p);
  if (rc) snprintf(msg, cap, "%s", tec_rt_last_error());
  tec_module_free(m);
  return rc ? -1 : 0;
}

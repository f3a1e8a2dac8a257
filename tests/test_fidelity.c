/* test_fidelity.c — schedules a TVM or Halide user writes (issue 13): valid ones compile and
 * compute the right numbers, what tec cannot honour is refused with a message or reported in
 * the lowered function's notes, deep inline chains lower in linear time, and the smaller
 * expressiveness gaps (duplicate names, unused placeholders, shape expressions). Numbers are
 * checked against naive C loops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil.h"

/* ---------- item 2: cache_write of a reduction whose extent depends on an output index ---------- */
/* C[i, j] = sum(A[i, r] for r in [0, j + 1)): a prefix sum along each row (TVM's triangular
 * reduction). */
typedef struct tri { te_tensor *A; } tri;
static const ir_expr *tri_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  tri *t = u;
  const ir_expr *r = te_reduce_axis(ctx, "r", ir_int(ctx, 0), ir_add(i[1], ir_int(ctx, 1)));
  return te_sum(TE_AT(t->A, i[0], r), 1, &r, NULL);
}

static void run_tri(int how) {
  enum { M = 5, N = 13 };
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, N));
  tri t = {A};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){"C", 2, TE_SHAPE(ctx, M, N), tri_body, &t, NULL, NULL});
  ck_assert_msg(C != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *o, *in;
  if (how == 3) { /* no cache: the data axis the extent uses is split */
    OK(ctx, sch_split(sc, sch_axis(sc, 1), 4, &o, &in));
  } else {
    te_tensor *CL = sch_cache_write(s, C, "local");
    ck_assert_msg(CL != NULL, "%s", tec_ctx_error(ctx));
    sch_stage *sl = sch_stage_of(s, CL);
    if (how >= 1) OK(ctx, sch_compute_at(sl, sc, sch_axis(sc, 0)));
    if (how == 2) {
      OK(ctx, sch_split(sc, sch_axis(sc, 1), 4, &o, &in));
      OK(ctx, sch_compute_at(sl, sc, o));
    }
    if (how == 4) { /* the reduction split too: r.outer's extent is ceil((j + 1) / 3) */
      OK(ctx, sch_split(sl, sch_reduce_axis(sl, 0), 3, &o, &in));
      OK(ctx, sch_split(sc, sch_axis(sc, 1), 5, &o, &in));
      OK(ctx, sch_compute_at(sl, sc, o));
    }
  }
  tec_packed_fn fn = tu_build(ctx, s, "tri", 2, (te_tensor *[]){A, C});
  DLTensor a = tu_rand_f32(2, (int64_t[]){M, N}, 3), c = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
  ck_assert_msg(fn((DLTensor *[]){&a, &c}, 2) == 0, "%s", tec_rt_last_error());
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double ref = 0;
      for (int r = 0; r <= j; r++) ref += tu_f32(&a)[i * N + r];
      ck_assert_msg(fabs(tu_f32(&c)[i * N + j] - ref) < 1e-4, "how %d [%d,%d]: %g vs %g", how, i,
                    j, tu_f32(&c)[i * N + j], ref);
    }
  tec_dl_free(&a), tec_dl_free(&c);
  tec_ctx_free(ctx);
}

START_TEST(cache_write_triangular) {
  for (int how = 0; how < 5; how++) run_tri(how);
}
END_TEST

/* the loop a reduce axis's range depends on must stay outside it */
START_TEST(triangular_reorder_refused) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 5, 13));
  tri t = {A};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){"C", 2, TE_SHAPE(ctx, 5, 13), tri_body, &t, NULL, NULL});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  OK(ctx, sch_reorder(sc, 2, (sch_iter *[]){sch_reduce_axis(sc, 0), sch_axis(sc, 1)}));
  ck_assert_ptr_null(tec_lower(s, "tri", 2, (te_tensor *[]){A, C}));
  assert_err(ctx, "tec_lower 'tri': loop 'r' of stage 'C' runs from 0 for (j + 1) iterations, "
                  "which depends on loop 'j' inside it; reorder so that 'j' is outside 'r'");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- item 2: compute_at of a stage that reads through a gathered index ---------- */
/* B[i, j] = C[X[i, j], Y[i, j]] * 2;  D[i, j] = B[i, j] + 1, B computed at a loop of D. */
typedef struct gat { te_tensor *C, *X, *Y, *B, *CC; } gat;
static const ir_expr *gat_b(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  gat *g = u;
  te_tensor *src = g->CC ? g->CC : g->C;
  return ir_mul(TE_AT(src, TE_AT(g->X, i[0], i[1]), TE_AT(g->Y, i[0], i[1])), ir_float(ctx, 2));
}
static const ir_expr *gat_cc(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  gat *g = u;
  return ir_sub(TE_AT(g->C, i[0], i[1]), ir_float(ctx, 3));
}
static const ir_expr *gat_d(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  gat *g = u;
  return ir_add(TE_AT(g->B, i[0], i[1]), ir_float(ctx, 1));
}

static void run_gather(int how) {
  enum { M = 6, N = 7, P = 5, Q = 9 };
  tec_ctx *ctx = tec_ctx_new();
  gat g = {0};
  g.C = te_placeholder(ctx, "C", TEC_F32, 2, TE_SHAPE(ctx, P, Q));
  /* how >= 3: the gathered tensor is itself computed (CC = C - 3) and attached */
  if (how >= 3)
    g.CC = te_compute(ctx, &(te_compute_decl){"CC", 2, TE_SHAPE(ctx, P, Q), gat_cc, &g, NULL, NULL});
  g.X = te_placeholder(ctx, "X", TEC_I32, 2, TE_SHAPE(ctx, M, N));
  g.Y = te_placeholder(ctx, "Y", TEC_I32, 2, TE_SHAPE(ctx, M, N));
  g.B = te_compute(ctx, &(te_compute_decl){"B", 2, TE_SHAPE(ctx, M, N), gat_b, &g, NULL, NULL});
  te_tensor *D = te_compute(ctx, &(te_compute_decl){"D", 2, TE_SHAPE(ctx, M, N), gat_d, &g, NULL, NULL});
  ck_assert_msg(D != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = sch_create(ctx, 1, &D);
  sch_stage *sd = sch_stage_of(s, D), *sb = sch_stage_of(s, g.B);
  if (how == 0) OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 0)));
  if (how == 1) OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 1)));
  if (how == 2) {
    /* the gathered index tensors themselves cached at the loop */
    te_tensor *XL = sch_cache_read(s, g.X, "local", 1, (te_tensor *[]){g.B});
    ck_assert_msg(XL != NULL, "%s", tec_ctx_error(ctx));
    OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 0)));
    OK(ctx, sch_compute_at(sch_stage_of(s, XL), sd, sch_axis(sd, 0)));
  }
  if (how == 3) OK(ctx, sch_compute_at(sch_stage_of(s, g.CC), sb, sch_axis(sb, 1)));
  if (how == 4) {
    OK(ctx, sch_compute_at(sb, sd, sch_axis(sd, 0)));
    OK(ctx, sch_compute_at(sch_stage_of(s, g.CC), sb, sch_axis(sb, 0)));
  }
  if (how == 5) {
    OK(ctx, sch_compute_inline(sb));
    OK(ctx, sch_compute_at(sch_stage_of(s, g.CC), sd, sch_axis(sd, 0)));
  }
  tec_packed_fn fn = tu_build(ctx, s, "gat", 4, (te_tensor *[]){g.C, g.X, g.Y, D});
  DLTensor c = tu_rand_f32(2, (int64_t[]){P, Q}, 4), d = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
  DLTensor x = tu_zeros(TEC_I32, 2, (int64_t[]){M, N}), y = tu_zeros(TEC_I32, 2, (int64_t[]){M, N});
  int32_t *xs = x.data, *ys = y.data;
  for (int k = 0; k < M * N; k++) xs[k] = (k * 7 + 3) % P, ys[k] = (k * 5 + 1) % Q;
  ck_assert_msg(fn((DLTensor *[]){&c, &x, &y, &d}, 4) == 0, "%s", tec_rt_last_error());
  for (int k = 0; k < M * N; k++) {
    float ref = (tu_f32(&c)[xs[k] * Q + ys[k]] - (how >= 3 ? 3 : 0)) * 2 + 1;
    ck_assert_msg(fabsf(tu_f32(&d)[k] - ref) < 1e-6f, "how %d k %d: %g vs %g", how, k,
                  tu_f32(&d)[k], ref);
  }
  tec_dl_free(&c), tec_dl_free(&d), tec_dl_free(&x), tec_dl_free(&y);
  tec_ctx_free(ctx);
}

START_TEST(compute_at_gather) {
  for (int how = 0; how < 6; how++) run_gather(how);
}
END_TEST

int main(void) {
  Suite *s = suite_create("fidelity");
  TCase *valid = tcase_create("valid_schedules");
  tcase_add_test(valid, cache_write_triangular);
  tcase_add_test(valid, triangular_reorder_refused);
  tcase_add_test(valid, compute_at_gather);
  suite_add_tcase(s, valid);
  return tu_run(s);
}

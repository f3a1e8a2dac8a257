/* test_margin.c — arguments with a margin (te_tensor_set_margin): a tensor that is the window of
 * a larger caller's buffer. Numbers from the JIT against naive C over the window, the margin
 * checked untouched (a sentinel) or unread (garbage that would show in the result); a split +
 * vectorize + parallel schedule; the AOT header's text; symbolic shapes (the size bound from an
 * extent that includes the margin); and every refusal with its message. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "tune/internal.h"

#define SENTINEL (-7.0f)

/* ---- bodies ---- */

typedef struct one_in {
  te_tensor *a;
} one_in;

/* B[i, j] = A[i, j]*2 + 1 */
static const ir_expr *affine_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  one_in *u = user;
  return ir_add(ir_mul(TE_AT(u->a, i[0], i[1]), ir_float(ctx, 2)), ir_float(ctx, 1));
}

/* B[i, j] = sum over the 3x3 window of A at (i, j) (a valid box filter: A is 2 larger) */
typedef struct box {
  te_tensor *a;
  const ir_expr *ry, *rx;
} box;
static const ir_expr *box_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  (void)ctx;
  box *u = user;
  return TE_SUM(TE_AT(u->a, ir_add(i[0], u->ry), ir_add(i[1], u->rx)), u->ry, u->rx);
}

/* C[i, j] = A[i, j]*B[i, j] + 1 */
typedef struct two_in {
  te_tensor *a, *b;
} two_in;
static const ir_expr *fma_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  two_in *u = user;
  return ir_add(ir_mul(TE_AT(u->a, i[0], i[1]), TE_AT(u->b, i[0], i[1])), ir_float(ctx, 1));
}

static te_tensor *compute2(tec_ctx *ctx, const char *name, const ir_expr *const *shape,
                           te_body_fn body, void *user) {
  return te_compute(ctx, &(te_compute_decl){.name = name, .ndim = 2, .shape = shape,
                                            .body = body, .user = user});
}

/* A float32 buffer of extents r x c filled with v. */
static DLTensor filled(int64_t r, int64_t c, float v) {
  DLTensor t;
  ck_assert_int_eq(tec_dl_alloc(&t, TEC_F32, 2, (int64_t[]){r, c}), 0);
  for (int64_t k = 0; k < r * c; k++) ((float *)t.data)[k] = v;
  return t;
}

/* 1 when element (i, j) of an r x c buffer lies inside the window [b0, r - a0) x [b1, c - a1). */
static int in_window(int64_t i, int64_t j, int64_t r, int64_t c, const int64_t *before,
                     const int64_t *after) {
  return i >= before[0] && i < r - after[0] && j >= before[1] && j < c - after[1];
}

/* (a) an output with margins {1, 2} before / {3, 0} after: the window computed, every margin
 * element still the sentinel. */
START_TEST(margin_output_window_and_sentinel) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 5));
  one_in u = {A};
  te_tensor *B = compute2(ctx, "B", TE_SHAPE(ctx, 4, 5), affine_body, &u);
  const int64_t before[2] = {1, 2}, after[2] = {3, 0};
  OK(ctx, te_tensor_set_margin(ctx, B, before, after));
  ck_assert_int_eq(te_margin(B, 0, 0), 1);
  ck_assert_int_eq(te_margin(B, 0, 1), 3);
  ck_assert_int_eq(te_margin(B, 1, 0), 2);
  int64_t e0 = -1, e1 = -1;
  ck_assert(ir_is_const_int(te_buffer_shape(B)[0], &e0) && e0 == 8);
  ck_assert(ir_is_const_int(te_buffer_shape(B)[1], &e1) && e1 == 7);
  ck_assert_ptr_eq(te_buffer_shape(A), A->shape);
  OK(ctx, te_tensor_set_margin(ctx, B, before, after)); /* the same values again: fine */

  sch_schedule *s = sch_create(ctx, 1, &B);
  lower_func *f = TEC_LOWER(s, "win", A, B);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tu_assert_contains(tec_lower_str(f), "B: float32[4, 5] margin[1+3, 2+0]");
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  tec_packed_fn fn = tec_module_get(m, "win");

  DLTensor a = tu_rand_f32(2, (int64_t[]){4, 5}, 11);
  DLTensor b = filled(8, 7, SENTINEL);
  ck_assert_msg(fn((DLTensor *[]){&a, &b}, 2) == 0, "%s", tec_rt_last_error());
  const float *av = tu_f32(&a), *bv = tu_f32(&b);
  for (int64_t i = 0; i < 8; i++)
    for (int64_t j = 0; j < 7; j++) {
      float got = bv[i * 7 + j];
      if (in_window(i, j, 8, 7, before, after)) {
        float want = av[(i - 1) * 5 + (j - 2)] * 2.0f + 1.0f;
        ck_assert_msg(fabsf(got - want) <= 1e-6f, "B[%lld, %lld]: %g, expected %g",
                      (long long)(i - 1), (long long)(j - 2), got, want);
      } else {
        ck_assert_msg(got == SENTINEL, "margin element [%lld, %lld] is %g, expected the "
                      "sentinel %g", (long long)i, (long long)j, got, SENTINEL);
      }
    }
  tec_dl_free(&a), tec_dl_free(&b);
  tec_ctx_free(ctx);
}
END_TEST

/* (b) an input with margins: a 3x3 box sum over the window only; the margin holds NaN and
 * huge values that would show in any result that read them. */
START_TEST(margin_input_garbage_does_not_leak) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 6, 5));
  const int64_t before[2] = {2, 1}, after[2] = {1, 3}; /* buffer 9 x 9 */
  OK(ctx, te_tensor_set_margin(ctx, A, before, after));
  box u = {A, te_reduce_axis_n(ctx, "ry", 3), te_reduce_axis_n(ctx, "rx", 3)};
  te_tensor *B = compute2(ctx, "B", TE_SHAPE(ctx, 4, 3), box_body, &u);
  sch_schedule *s = sch_create(ctx, 1, &B);
  tec_packed_fn fn = tu_build(ctx, s, "boxm", 2, (te_tensor *[]){A, B});

  DLTensor a = filled(9, 9, 0);
  float *av = tu_f32(&a);
  float win[6][5];
  unsigned seed = 5;
  for (int64_t i = 0; i < 9; i++)
    for (int64_t j = 0; j < 9; j++) {
      seed = seed * 1103515245u + 12345u;
      float v = (float)((seed >> 9) & 0xff) / 64.0f - 2.0f;
      if (in_window(i, j, 9, 9, before, after))
        win[i - 2][j - 1] = v, av[i * 9 + j] = v;
      else
        av[i * 9 + j] = (i + j) % 2 ? NAN : 1e30f;
    }
  DLTensor b = filled(4, 3, 0);
  ck_assert_msg(fn((DLTensor *[]){&a, &b}, 2) == 0, "%s", tec_rt_last_error());
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) {
      double want = 0;
      for (int y = 0; y < 3; y++)
        for (int x = 0; x < 3; x++) want += win[i + y][j + x];
      float got = tu_f32(&b)[i * 3 + j];
      ck_assert_msg(fabs(got - want) <= 1e-4, "B[%d, %d]: %g, expected %g", i, j, got, want);
    }
  tec_dl_free(&a), tec_dl_free(&b);
  tec_ctx_free(ctx);
}
END_TEST

/* (c) split + vectorize + parallel of an output with margins (A with margins too), non-dividing
 * split included, against a naive C loop; the margins of C keep the sentinel. */
START_TEST(margin_scheduled_vector_parallel) {
  enum { R = 37, C = 45 };
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, R, C));
  te_tensor *B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, R, C));
  two_in u = {A, B};
  te_tensor *O = compute2(ctx, "O", TE_SHAPE(ctx, R, C), fma_body, &u);
  const int64_t ob[2] = {2, 3}, oa[2] = {1, 4}, ab[2] = {0, 5}, aa[2] = {3, 0};
  OK(ctx, te_tensor_set_margin(ctx, O, ob, oa));
  OK(ctx, te_tensor_set_margin(ctx, A, ab, aa));
  sch_schedule *s = sch_create(ctx, 1, &O);
  sch_stage *so = sch_stage_of(s, O);
  sch_iter *jo, *ji;
  OK(ctx, sch_split(so, sch_axis(so, 1), 8, &jo, &ji));
  OK(ctx, sch_vectorize(so, ji));
  OK(ctx, sch_parallel(so, sch_axis(so, 0)));
  tec_packed_fn fn = tu_build(ctx, s, "fmam", 3, (te_tensor *[]){A, B, O});

  const int64_t ar = R + ab[0] + aa[0], ac = C + ab[1] + aa[1];
  const int64_t orr = R + ob[0] + oa[0], oc = C + ob[1] + oa[1];
  DLTensor a = tu_rand_f32(2, (int64_t[]){ar, ac}, 3);
  DLTensor b = tu_rand_f32(2, (int64_t[]){R, C}, 4);
  DLTensor o = filled(orr, oc, SENTINEL);
  for (int64_t i = 0; i < ar; i++) /* A's margin: garbage */
    for (int64_t j = 0; j < ac; j++)
      if (!in_window(i, j, ar, ac, ab, aa)) tu_f32(&a)[i * ac + j] = NAN;
  for (int threads = 1; threads <= 2; threads++) {
    tec_rt_set_num_threads(threads);
    ck_assert_msg(fn((DLTensor *[]){&a, &b, &o}, 3) == 0, "%s", tec_rt_last_error());
    for (int64_t i = 0; i < orr; i++)
      for (int64_t j = 0; j < oc; j++) {
        float got = tu_f32(&o)[i * oc + j];
        if (!in_window(i, j, orr, oc, ob, oa)) {
          ck_assert_msg(got == SENTINEL, "O's margin [%lld, %lld] is %g", (long long)i,
                        (long long)j, got);
          continue;
        }
        int64_t y = i - ob[0], x = j - ob[1];
        float want = tu_f32(&a)[(y + ab[0]) * ac + (x + ab[1])] * tu_f32(&b)[y * C + x] + 1.0f;
        ck_assert_msg(fabsf(got - want) <= 1e-5f, "O[%lld, %lld]: %g, expected %g",
                      (long long)y, (long long)x, got, want);
      }
  }
  tec_rt_set_num_threads(0);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&o);
  tec_ctx_free(ctx);
}
END_TEST

/* Two outputs of one op: P = A + 1 compact, Q = A * 3 in a buffer with margins. */
static int pq_body(tec_ctx *ctx, const ir_expr *const *i, void *user, const ir_expr **v) {
  one_in *u = user;
  v[0] = ir_add(TE_AT(u->a, i[0], i[1]), ir_float(ctx, 1));
  v[1] = ir_mul(TE_AT(u->a, i[0], i[1]), ir_float(ctx, 3));
  return 0;
}

/* a margin on one output of a multi-output op: each output its own buffer */
START_TEST(margin_multi_output) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 3, 4));
  one_in u = {A};
  te_tensor *out[2];
  OK(ctx, te_compute_multi(ctx, &(te_compute_multi_decl){.names = (const char *[]){"P", "Q"},
                                    .ndim = 2, .shape = TE_SHAPE(ctx, 3, 4), .body = pq_body,
                                    .user = &u}, 2, out));
  const int64_t before[2] = {2, 0}, after[2] = {0, 1};
  OK(ctx, te_tensor_set_margin(ctx, out[1], before, after));
  tec_packed_fn fn = tu_build(ctx, sch_create(ctx, 2, out), "pq", 3,
                              (te_tensor *[]){A, out[0], out[1]});
  DLTensor a = tu_rand_f32(2, (int64_t[]){3, 4}, 9);
  DLTensor p = filled(3, 4, SENTINEL), q = filled(5, 5, SENTINEL);
  ck_assert_msg(fn((DLTensor *[]){&a, &p, &q}, 3) == 0, "%s", tec_rt_last_error());
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      ck_assert(tu_f32(&p)[i * 4 + j] == tu_f32(&a)[i * 4 + j] + 1.0f);
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++) {
      float want = in_window(i, j, 5, 5, before, after) ? tu_f32(&a)[(i - 2) * 4 + j] * 3.0f
                                                        : SENTINEL;
      ck_assert_msg(tu_f32(&q)[i * 5 + j] == want, "Q buffer [%d, %d]: %g, expected %g", i, j,
                    tu_f32(&q)[i * 5 + j], want);
    }
  tec_dl_free(&a), tec_dl_free(&p), tec_dl_free(&q);
  tec_ctx_free(ctx);
}
END_TEST

/* (d) the AOT header describes the buffer: its extents and the margins. */
START_TEST(margin_aot_header) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 5));
  one_in u = {A};
  te_tensor *B = compute2(ctx, "B", TE_SHAPE(ctx, 4, 5), affine_body, &u);
  OK(ctx, te_tensor_set_margin(ctx, B, (int64_t[]){1, 2}, (int64_t[]){3, 0}));
  lower_func *f = TEC_LOWER(sch_create(ctx, 1, &B), "winh", A, B);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  char *h = tu_emit_text(ctx, f, NULL, TEC_EMIT_HEADER);
  tu_assert_contains(h, "/* winh(A: float32[4, 5], B: float32[4, 5] in a buffer [8, 7] "
                        "(margin before {1, 2}, after {3, 0})) */");
  tu_assert_contains(h, "is the window of a");
  free(h);
  tec_ctx_free(ctx);
}
END_TEST

/* (e) refusals at te_tensor_set_margin, each with its message. */
START_TEST(margin_refusals) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 5));
  ck_assert_int_eq(te_tensor_set_margin(ctx, A, (int64_t[]){0, -1}, NULL), -1);
  assert_err(ctx, "te_tensor_set_margin 'A': before[1] is -1; a margin counts elements of the "
                  "buffer outside the tensor and must be >= 0");
  ck_assert_ptr_null(A->margin);
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(te_tensor_set_margin(ctx, A, NULL, (int64_t[]){-2, 0}), -1);
  tu_assert_contains(tec_ctx_error(ctx), "after[0] is -2");
  tec_ctx_clear_error(ctx);

  te_tensor *W = te_const_placeholder(ctx, "W", TEC_F32, 2, TE_SHAPE(ctx, 4, 5));
  ck_assert_int_eq(te_tensor_set_margin(ctx, W, (int64_t[]){1, 1}, NULL), -1);
  tu_assert_contains(tec_ctx_error(ctx), "te_tensor_set_margin 'W': a te_const_placeholder "
                                         "cannot have a margin");
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_UNSUPPORTED);
  tec_ctx_clear_error(ctx);

  te_tensor *S = te_placeholder(ctx, "alpha", TEC_F32, 0, NULL);
  ck_assert_int_eq(te_tensor_set_margin(ctx, S, NULL, NULL), -1);
  tu_assert_contains(tec_ctx_error(ctx), "a scalar (ndim 0) has no dimensions");
  tec_ctx_clear_error(ctx);

  OK(ctx, te_tensor_set_margin(ctx, A, (int64_t[]){1, 1}, (int64_t[]){1, 1}));
  ck_assert_int_eq(te_tensor_set_margin(ctx, A, (int64_t[]){1, 2}, (int64_t[]){1, 1}), -1);
  assert_err(ctx, "te_tensor_set_margin 'A': its margins are already before {1, 1}, after "
                  "{1, 1}; they may be set again only to the same values, not to before {1, 2}, "
                  "after {1, 1}");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(te_tensor_set_margin(NULL, A, NULL, NULL), -1);

  /* fixed once lowered: the function's indices and its entry checks read them */
  one_in u = {A};
  te_tensor *B = compute2(ctx, "B", TE_SHAPE(ctx, 4, 5), affine_body, &u);
  ck_assert_ptr_nonnull(TEC_LOWER(sch_create(ctx, 1, &B), "fixed", A, B));
  ck_assert_int_eq(te_tensor_set_margin(ctx, B, (int64_t[]){0, 1}, NULL), -1);
  tu_assert_contains(tec_ctx_error(ctx), "te_tensor_set_margin 'B': function 'fixed' was lowered "
                                         "with 'B' as an argument");
  tu_assert_contains(tec_ctx_error(ctx), "set margins before tec_lower");
  tec_ctx_clear_error(ctx);
  OK(ctx, te_tensor_set_margin(ctx, B, NULL, NULL)); /* zeros: what it was lowered with */
  tec_ctx_free(ctx);
}
END_TEST

/* (e) a margin on an intermediate: refused at tec_lower, naming the tensor. */
START_TEST(margin_intermediate_refused) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 5));
  one_in u = {A};
  te_tensor *T = compute2(ctx, "T", TE_SHAPE(ctx, 4, 5), affine_body, &u);
  one_in v = {T};
  te_tensor *B = compute2(ctx, "B", TE_SHAPE(ctx, 4, 5), affine_body, &v);
  OK(ctx, te_tensor_set_margin(ctx, T, (int64_t[]){1, 1}, (int64_t[]){1, 1}));
  ck_assert_ptr_null(TEC_LOWER(sch_create(ctx, 1, &B), "mid", A, B));
  assert_err(ctx, "tec_lower 'mid': tensor 'T' has a margin (te_tensor_set_margin) but is not an "
                  "argument; margins apply to arguments only (the caller's buffer), an "
                  "intermediate has none: pass 'T' as an argument or drop its margin");
  /* inlined or not, the same */
  sch_schedule *s = sch_create(ctx, 1, &B);
  OK(ctx, sch_compute_inline(sch_stage_of(s, T)));
  ck_assert_ptr_null(TEC_LOWER(s, "mid2", A, B));
  tu_assert_contains(tec_ctx_error(ctx), "tensor 'T' has a margin");
  tec_ctx_free(ctx);
}
END_TEST

/* the tuner's measurement allocates an argument with a margin whole (its buffer extents) and
 * compares only the window (tests/test_topi_margin.c tunes a convolution with margins against
 * an independent reference) */
START_TEST(margin_tuner_allocates_buffer) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 5));
  one_in u = {A};
  te_tensor *B = compute2(ctx, "B", TE_SHAPE(ctx, 4, 5), affine_body, &u);
  OK(ctx, te_tensor_set_margin(ctx, B, (int64_t[]){1, 0}, (int64_t[]){0, 2}));
  lower_func *f = TEC_LOWER(sch_create(ctx, 1, &B), "tm", A, B);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tune_options o = tune_options_default();
  tune_bench *b = tune_bench_new(ctx, NULL, f, &o);
  ck_assert_msg(b != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(tune_bench_nout(b), (4 + 1) * (5 + 2)); /* the buffer, not the window */
  tune_bench_free(b);
  tec_ctx_free(ctx);
}
END_TEST

/* (e) a call with the window's extents instead of the buffer's: -1, the message names the
 * argument and the extent with its margin. */
START_TEST(margin_call_with_window_extents) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 28, 28));
  one_in u = {A};
  te_tensor *B = compute2(ctx, "B", TE_SHAPE(ctx, 28, 28), affine_body, &u);
  OK(ctx, te_tensor_set_margin(ctx, B, (int64_t[]){1, 1}, (int64_t[]){1, 1}));
  tec_packed_fn fn = tu_build(ctx, sch_create(ctx, 1, &B), "ring", 2, (te_tensor *[]){A, B});
  DLTensor a = filled(28, 28, 1), b = filled(28, 28, SENTINEL);
  ck_assert_int_eq(fn((DLTensor *[]){&a, &b}, 2), -1);
  ck_assert_str_eq(tec_rt_last_error(),
                   "ring: argument 1 ('B') shape[0] is 28, expected 30 (28 + margin 1 + 1)");
  for (int k = 0; k < 28 * 28; k++) ck_assert(tu_f32(&b)[k] == SENTINEL); /* nothing written */
  tec_dl_free(&b);
  b = filled(30, 29, SENTINEL);
  ck_assert_int_eq(fn((DLTensor *[]){&a, &b}, 2), -1);
  ck_assert_str_eq(tec_rt_last_error(),
                   "ring: argument 1 ('B') shape[1] is 29, expected 30 (28 + margin 1 + 1)");
  tec_dl_free(&b);
  b = filled(30, 30, SENTINEL); /* the buffer: fine, the ring kept */
  ck_assert_msg(fn((DLTensor *[]){&a, &b}, 2) == 0, "%s", tec_rt_last_error());
  for (int i = 0; i < 30; i++)
    for (int j = 0; j < 30; j++) {
      int ring = i == 0 || j == 0 || i == 29 || j == 29;
      ck_assert(tu_f32(&b)[i * 30 + j] == (ring ? SENTINEL : 3.0f));
    }
  tec_dl_free(&a), tec_dl_free(&b);
  tec_ctx_free(ctx);
}
END_TEST

/* (f) symbolic shapes: n bound from an extent that includes a margin (n = extent - 3), and an
 * output with a margin checked against n + its margin. */
START_TEST(margin_symbolic) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *[]){n, ir_int(ctx, 5)});
  OK(ctx, te_tensor_set_margin(ctx, A, (int64_t[]){1, 0}, (int64_t[]){2, 1}));
  one_in u = {A};
  te_tensor *B = compute2(ctx, "B", (const ir_expr *[]){n, ir_int(ctx, 5)}, affine_body, &u);
  OK(ctx, te_tensor_set_margin(ctx, B, (int64_t[]){0, 2}, (int64_t[]){1, 0}));
  sch_schedule *s = sch_create(ctx, 1, &B);
  sch_stage *sb = sch_stage_of(s, B);
  sch_iter *io, *ii;
  OK(ctx, sch_split(sb, sch_axis(sb, 0), 4, &io, &ii));
  tec_packed_fn fn = tu_build(ctx, s, "symm", 2, (te_tensor *[]){A, B});

  for (int64_t rows = 0; rows <= 9; rows += 3) {
    DLTensor a = filled(rows + 3, 6, NAN), b = filled(rows + 1, 7, SENTINEL);
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < 5; j++) tu_f32(&a)[(i + 1) * 6 + j] = (float)(i * 10 + j);
    ck_assert_msg(fn((DLTensor *[]){&a, &b}, 2) == 0, "%s", tec_rt_last_error());
    for (int64_t i = 0; i < rows + 1; i++)
      for (int64_t j = 0; j < 7; j++) {
        float got = tu_f32(&b)[i * 7 + j];
        float want = i < rows && j >= 2 ? (float)(i * 10 + j - 2) * 2.0f + 1.0f : SENTINEL;
        ck_assert_msg(got == want, "rows %lld: B buffer [%lld, %lld] is %g, expected %g",
                      (long long)rows, (long long)i, (long long)j, got, want);
      }
    tec_dl_free(&a), tec_dl_free(&b);
  }
  /* A shorter than its margin: no size n >= 0 */
  DLTensor a = filled(2, 6, 0), b = filled(1, 7, 0);
  ck_assert_int_eq(fn((DLTensor *[]){&a, &b}, 2), -1);
  tu_assert_contains(tec_rt_last_error(), "symm: argument 0 ('A') shape[0] is 2, expected (n + 3), "
                                          "n + margin 1 + 2, for a size n >= 0: 3 or more");
  tec_dl_free(&a), tec_dl_free(&b);
  /* B not n + 1 rows */
  a = filled(7, 6, 0), b = filled(4, 7, 0);
  ck_assert_int_eq(fn((DLTensor *[]){&a, &b}, 2), -1);
  ck_assert_str_eq(tec_rt_last_error(),
                   "symm: argument 1 ('B') shape[0] is 4, expected 5 (n + margin 0 + 1)");
  tec_dl_free(&a), tec_dl_free(&b);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("margin");
  TCase *run = tcase_create("run");
  tcase_add_test(run, margin_output_window_and_sentinel);
  tcase_add_test(run, margin_input_garbage_does_not_leak);
  tcase_add_test(run, margin_scheduled_vector_parallel);
  tcase_add_test(run, margin_multi_output);
  tcase_add_test(run, margin_aot_header);
  tcase_add_test(run, margin_symbolic);
  suite_add_tcase(s, run);
  TCase *bad = tcase_create("refused");
  tcase_add_test(bad, margin_refusals);
  tcase_add_test(bad, margin_intermediate_refused);
  tcase_add_test(bad, margin_call_with_window_extents);
  tcase_add_test(bad, margin_tuner_allocates_buffer);
  suite_add_tcase(s, bad);
  return tu_run(s);
}

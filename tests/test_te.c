/* test_te.c — tensor expressions: building and printing every kind of expression, the exact
 * messages of type errors, NULL propagation, mutator identity, substitution, and a failing
 * arena allocator. The printed text (ir_expr_str) is the oracle throughout. */
#include <stdio.h>
#include <string.h>
#include "testutil.h"

/* The printed form of e is exactly `want`. */
#define assert_expr(e, want)                                                                 \
  do {                                                                                       \
    const ir_expr *x_ = (e);                                                                 \
    ck_assert_msg(x_ != NULL, "expression is NULL, expected %s", (want));                    \
    ck_assert_str_eq(ir_expr_str(x_), (want));                                               \
  } while (0)

static tec_ctx *ctx;
static const ir_expr *x, *y, *f, *g; /* int64 x, y; float32 f, g */

static void setup(void) {
  ctx = tec_ctx_new();
  x = ir_var(ctx, "x", TEC_INDEX, IR_VAR_INDEX);
  y = ir_var(ctx, "y", TEC_INDEX, IR_VAR_INDEX);
  f = ir_var(ctx, "f", TEC_F32, IR_VAR_LET);
  g = ir_var(ctx, "g", TEC_F32, IR_VAR_LET);
}
static void teardown(void) {
  tec_ctx_free(ctx);
  ctx = NULL;
}

/* ======== building and printing ======== */

START_TEST(immediates) {
  assert_expr(ir_int(ctx, 5), "5");
  assert_expr(ir_int(ctx, -3), "-3");
  assert_expr(ir_int_t(ctx, TEC_I32, 3), "3i32");
  assert_expr(ir_int_t(ctx, TEC_I8, -7), "-7i8");
  assert_expr(ir_int_t(ctx, TEC_U8, 200), "200u8");
  assert_expr(ir_float(ctx, 1.5), "1.5f");
  assert_expr(ir_float(ctx, 0.1), "0.100000001f"); /* float32 rounding is visible */
  assert_expr(ir_float_t(ctx, TEC_F64, 2.5), "2.5f64");
  assert_expr(ir_float_t(ctx, TEC_F64, 0.1), "0.10000000000000001f64");
  assert_expr(ir_bool(ctx, 1), "true");
  assert_expr(ir_bool(ctx, 0), "false");
  assert_expr(ir_bool(ctx, 42), "true");
  /* an int constant of float type is a float immediate, and vice versa */
  const ir_expr *e = ir_int_t(ctx, TEC_F32, 2);
  ck_assert_int_eq(e->kind, IR_FLOAT_IMM);
  assert_expr(e, "2f");
  e = ir_float_t(ctx, TEC_I32, 3.0);
  ck_assert_int_eq(e->kind, IR_INT_IMM);
  assert_expr(e, "3i32");
  ck_assert_int_eq(ir_int(ctx, 1)->type.bits, 64);
  ck_assert_int_eq(ir_float(ctx, 1)->type.bits, 32);
  int64_t v;
  ck_assert(ir_is_const_int(ir_int(ctx, 9), &v) && v == 9);
  ck_assert(ir_is_zero(ir_float(ctx, 0)) && ir_is_one(ir_int(ctx, 1)) && !ir_is_one(x));
  ck_assert_ptr_null(tec_ctx_error(ctx));
}
END_TEST

START_TEST(vars) {
  assert_expr(x, "x");
  ck_assert_int_eq(x->kind, IR_VAR);
  ck_assert(x != ir_var(ctx, "x", TEC_INDEX, IR_VAR_INDEX)); /* compared by pointer */
  const ir_expr *n = te_size_var(ctx, "n");
  assert_expr(n, "n");
  ck_assert_int_eq(n->v.i, IR_VAR_SIZE);
  ck_assert(tec_dtype_eq(n->type, TEC_INDEX));
  ck_assert_ptr_null(ir_var(ctx, "", TEC_INDEX, IR_VAR_INDEX));
  assert_err(ctx, "ir_var: a variable needs a non-empty name");
}
END_TEST

START_TEST(arithmetic) {
  assert_expr(ir_add(x, y), "(x + y)");
  assert_expr(ir_sub(x, y), "(x - y)");
  assert_expr(ir_mul(x, y), "(x*y)");
  assert_expr(ir_div(x, y), "floordiv(x, y)"); /* ints: floor division */
  assert_expr(ir_mod(x, y), "floormod(x, y)");
  assert_expr(ir_floordiv(x, y), "floordiv(x, y)");
  assert_expr(ir_floormod(x, y), "floormod(x, y)");
  assert_expr(ir_truncdiv(x, y), "(x / y)");
  assert_expr(ir_truncmod(x, y), "(x % y)");
  assert_expr(ir_min(x, y), "min(x, y)");
  assert_expr(ir_max(x, y), "max(x, y)");
  assert_expr(ir_div(f, g), "(f / g)"); /* floats: true division */
  ck_assert_int_eq(ir_div(f, g)->kind, IR_DIV);
  ck_assert_int_eq(ir_div(x, y)->kind, IR_FLOORDIV);
  /* immediates take the other side's type */
  assert_expr(ir_add(f, ir_int(ctx, 1)), "(f + 1f)");
  assert_expr(ir_mul(ir_float(ctx, 0.5), f), "(0.5f*f)");
  assert_expr(ir_mul(x, ir_int_t(ctx, TEC_I32, 2)), "(x*2)");
  const ir_expr *i32 = ir_var(ctx, "w", TEC_I32, IR_VAR_LET);
  assert_expr(ir_add(i32, ir_int(ctx, 4)), "(w + 4i32)");
  const ir_expr *d = ir_var(ctx, "d", TEC_F64, IR_VAR_LET);
  assert_expr(ir_sub(d, ir_float(ctx, 1.5)), "(d - 1.5f64)");
  /* nesting */
  assert_expr(ir_add(ir_mul(x, ir_int(ctx, 8)), ir_floormod(y, ir_int(ctx, 8))),
              "((x*8) + floormod(y, 8))");
  ck_assert(tec_dtype_eq(ir_add(f, g)->type, TEC_F32));
  ck_assert_ptr_null(tec_ctx_error(ctx));
}
END_TEST

START_TEST(comparisons_and_logic) {
  assert_expr(ir_eq(x, y), "(x == y)");
  assert_expr(ir_ne(x, y), "(x != y)");
  assert_expr(ir_lt(x, y), "(x < y)");
  assert_expr(ir_le(x, y), "(x <= y)");
  assert_expr(ir_gt(x, y), "(x > y)");
  assert_expr(ir_ge(x, y), "(x >= y)");
  assert_expr(ir_lt(f, ir_float(ctx, 0)), "(f < 0f)");
  ck_assert(tec_dtype_eq(ir_lt(f, g)->type, TEC_BOOLT));
  const ir_expr *a = ir_lt(x, y), *b = ir_ge(x, ir_int(ctx, 0));
  assert_expr(ir_and(a, b), "((x < y) && (x >= 0))");
  assert_expr(ir_or(a, b), "((x < y) || (x >= 0))");
  assert_expr(ir_not(a), "!(x < y)");
  assert_expr(ir_and(a, ir_bool(ctx, 1)), "((x < y) && true)");
  assert_expr(ir_not(ir_or(a, ir_not(b))), "!((x < y) || !(x >= 0))");
  ck_assert(tec_dtype_eq(ir_and(a, b)->type, TEC_BOOLT));
  ck_assert_ptr_null(tec_ctx_error(ctx));
}
END_TEST

START_TEST(select_and_cast) {
  assert_expr(ir_select(ir_lt(x, y), x, y), "select((x < y), x, y)");
  assert_expr(ir_select(ir_gt(f, g), f, ir_float(ctx, 0)), "select((f > g), f, 0f)");
  assert_expr(ir_select(ir_gt(f, g), ir_int(ctx, 1), g), "select((f > g), 1f, g)");
  assert_expr(ir_cast(TEC_F32, x), "float32(x)");
  assert_expr(ir_cast(TEC_I32, f), "int32(f)");
  assert_expr(ir_cast(TEC_F64, ir_cast(TEC_I32, f)), "float64(int32(f))");
  assert_expr(ir_cast(TEC_F32, ir_lt(x, y)), "float32((x < y))");
  assert_expr(ir_cast(TEC_U8, x), "uint8(x)");
  /* a cast to the same type is the operand itself */
  ck_assert_ptr_eq(ir_cast(TEC_INDEX, x), x);
  ck_assert_ptr_null(tec_ctx_error(ctx));
  ck_assert_ptr_null(ir_cast(TEC_HANDLET, x));
  assert_err(ctx, "ir_cast: cannot convert int64 to handle");
}
END_TEST

START_TEST(intrinsics) {
  assert_expr(ir_exp(f), "exp(f)");
  assert_expr(ir_log(f), "log(f)");
  assert_expr(ir_sqrt(ir_add(f, g)), "sqrt((f + g))");
  assert_expr(ir_tanh(f), "tanh(f)");
  assert_expr(ir_fabs(ir_sub(f, g)), "fabs((f - g))");
  assert_expr(ir_fabs(x), "fabs(x)"); /* fabs also takes integers */
  assert_expr(ir_exp(ir_cast(TEC_F32, x)), "exp(float32(x))");
  assert_expr(ir_call(ctx, IR_INTRIN_POW, 2, (const ir_expr *const[]){f, ir_int(ctx, 2)}),
              "pow(f, 2f)");
  assert_expr(ir_call(ctx, IR_INTRIN_FMA, 3, (const ir_expr *const[]){f, g, f}), "fma(f, g, f)");
  const ir_expr *e = ir_tanh(f);
  ck_assert_int_eq(e->kind, IR_CALL);
  ck_assert_int_eq(e->v.i, IR_INTRIN_TANH);
  ck_assert(tec_dtype_eq(e->type, TEC_F32));
  ck_assert_str_eq(ir_intrinsic_name(IR_INTRIN_SQRT), "sqrt");
  ck_assert_ptr_null(tec_ctx_error(ctx));

  ck_assert_ptr_null(ir_exp(x));
  assert_err(ctx, "ir_call: exp needs float arguments, got int64; cast first");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_call(ctx, IR_INTRIN_EXP, 2, (const ir_expr *const[]){f, g}));
  assert_err(ctx, "ir_call: exp takes 1 argument(s), got 2");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_call(ctx, IR_INTRIN_COUNT, 1, (const ir_expr *const[]){f}));
  char want[64];
  snprintf(want, sizeof want, "ir_call: unknown intrinsic %d", (int)IR_INTRIN_COUNT);
  assert_err(ctx, want);
}
END_TEST

START_TEST(reads) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  ck_assert_ptr_nonnull(A);
  assert_expr(TE_AT(A, x, y), "A[x, y]");
  assert_expr(TE_AT(A, ir_add(x, ir_int(ctx, 1)), ir_int(ctx, 0)), "A[(x + 1), 0]");
  /* narrower integer indices are widened to int64 */
  const ir_expr *w = ir_var(ctx, "w", TEC_I32, IR_VAR_LET);
  assert_expr(TE_AT(A, w, y), "A[int64(w), y]");
  const ir_expr *r = TE_AT(A, x, y);
  ck_assert_int_eq(r->kind, IR_READ);
  ck_assert_ptr_eq(r->tensor, A);
  ck_assert(tec_dtype_eq(r->type, TEC_F32));
  assert_expr(ir_mul(TE_AT(A, x, y), ir_float(ctx, 2)), "(A[x, y]*2f)");
  te_tensor *B = te_placeholder(ctx, "B", TEC_I32, 1, TE_SHAPE(ctx, 4));
  assert_expr(ir_add(TE_AT(B, x), ir_int(ctx, 1)), "(B[x] + 1i32)");
  ck_assert_ptr_null(tec_ctx_error(ctx));
}
END_TEST

/* ---- reductions, built inside compute ops ---- */
typedef struct red_user {
  te_tensor *A, *A3;
  int which;
} red_user;

static const ir_expr *red_body(tec_ctx *c, const ir_expr *const *idx, void *user) {
  red_user *u = user;
  const ir_expr *k = te_reduce_axis_n(c, "k", 8);
  const ir_expr *l = te_reduce_axis_n(c, "l", 3);
  switch (u->which) {
  case 0: return te_sum(TE_AT(u->A, idx[0], k), 1, &k, NULL);
  case 1: return te_max(TE_AT(u->A, idx[0], k), 1, &k, NULL);
  case 2: return te_min(TE_AT(u->A, idx[0], k), 1, &k, NULL);
  case 3: return te_prod(TE_AT(u->A, idx[0], k), 1, &k, NULL);
  case 4:
    return te_sum(TE_AT(u->A3, idx[0], k, l), 2, (const ir_expr *const[]){k, l}, NULL);
  case 5: return te_sum(TE_AT(u->A, idx[0], k), 1, &k, ir_lt(k, idx[0]));
  case 6: { /* reduce axis with a nonzero min */
    const ir_expr *m = te_reduce_axis(c, "m", ir_int(c, 2), ir_int(c, 5));
    return te_sum(TE_AT(u->A, idx[0], m), 1, &m, NULL);
  }
  }
  return NULL;
}

START_TEST(reductions) {
  red_user u = {0};
  u.A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  u.A3 = te_placeholder(ctx, "A3", TEC_F32, 3, TE_SHAPE(ctx, 4, 8, 3));
  static const char *const want[] = {
      "sum(A[i, k], axis=[k])",
      "max(A[i, k], axis=[k])",
      "min(A[i, k], axis=[k])",
      "prod(A[i, k], axis=[k])",
      "sum(A3[i, k, l], axis=[k, l])",
      "sum(A[i, k], axis=[k], where=(k < i))",
      "sum(A[i, m], axis=[m])",
  };
  static const int nred[] = {1, 1, 1, 1, 2, 1, 1};
  for (int w = 0; w < 7; w++) {
    u.which = w;
    te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1,
                                                      .shape = TE_SHAPE(ctx, 4), .body = red_body,
                                                      .user = &u});
    ck_assert_msg(C != NULL, "case %d: %s", w, tec_ctx_error(ctx));
    assert_expr(C->body, want[w]);
    ck_assert_int_eq(C->nreduce, nred[w]);
    ck_assert_int_eq(C->ninputs, 1);
    ck_assert_ptr_eq(C->inputs[0], w == 4 ? u.A3 : u.A);
    ck_assert_int_eq(C->reduce_axis[0]->v.i, IR_VAR_REDUCE);
  }
  /* the reduce axis carries its domain */
  u.which = 6;
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1,
                                                    .shape = TE_SHAPE(ctx, 4), .body = red_body,
                                                    .user = &u});
  assert_expr(C->reduce_axis[0]->dom_min, "2");
  assert_expr(C->reduce_axis[0]->dom_extent, "5");
  /* identities of the combiners */
  assert_expr(ir_combiner_identity(ctx, IR_COMB_SUM, TEC_F32), "0f");
  assert_expr(ir_combiner_identity(ctx, IR_COMB_PROD, TEC_I32), "1i32");
  assert_expr(ir_combiner_identity(ctx, IR_COMB_MAX, TEC_F32), "-inff");
  assert_expr(ir_combiner_identity(ctx, IR_COMB_MIN, TEC_F32), "inff");
  assert_expr(ir_combiner_identity(ctx, IR_COMB_MAX, TEC_I8), "-128i8");
  assert_expr(ir_combiner_identity(ctx, IR_COMB_MIN, TEC_I32), "2147483647i32");
  assert_expr(ir_combiner_identity(ctx, IR_COMB_MAX, TEC_U8), "0u8");
  assert_expr(ir_combiner_identity(ctx, IR_COMB_MIN, TEC_U8), "255u8");
  assert_expr(ir_combiner_identity(ctx, IR_COMB_MAX, TEC_I64), "-9223372036854775808");
  ck_assert_ptr_null(tec_ctx_error(ctx));
}
END_TEST

/* ---- compute ops ---- */
static const ir_expr *add_one(tec_ctx *c, const ir_expr *const *idx, void *user) {
  te_tensor *A = user;
  return ir_add(TE_AT(A, idx[0], idx[1]), ir_float(c, 1));
}

START_TEST(compute_ops) {
  const ir_expr *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *const[]){n, ir_int(ctx, 8)});
  ck_assert_ptr_nonnull(A);
  ck_assert_int_eq(A->op, TE_PLACEHOLDER);
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = A->shape,
                                                    .body = add_one, .user = A, .tag = "ew"});
  ck_assert_msg(B != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(B->op, TE_COMPUTE);
  assert_expr(B->body, "(A[i, j] + 1f)");
  ck_assert_str_eq(B->tag, "ew");
  ck_assert_int_eq(B->nreduce, 0);
  ck_assert_ptr_eq(B->shape[0], n);
  assert_expr(B->axis[1]->dom_extent, "8");
  /* axis names */
  te_tensor *B2 = te_compute(ctx, &(te_compute_decl){
      .name = "B2", .ndim = 2, .shape = A->shape, .body = add_one, .user = A,
      .axis_names = (const char *const[]){"row", "col"}});
  assert_expr(B2->body, "(A[row, col] + 1f)");
  /* a shape of int32 extents is widened */
  te_tensor *P = te_placeholder(ctx, "P", TEC_F32, 1,
                                (const ir_expr *const[]){ir_int_t(ctx, TEC_I32, 5)});
  assert_expr(P->shape[0], "int64(5i32)");
  /* topological order: producers first */
  te_tensor **order;
  int cnt = te_topo_order(ctx, 1, &B, &order);
  ck_assert_int_eq(cnt, 2);
  ck_assert_ptr_eq(order[0], A);
  ck_assert_ptr_eq(order[1], B);
  ck_assert_ptr_null(tec_ctx_error(ctx));
}
END_TEST

static const ir_expr *add_one_1d(tec_ctx *c, const ir_expr *const *idx, void *user) {
  return ir_add(TE_AT((te_tensor *)user, idx[0]), ir_float(c, 1));
}

/* ======== type errors ======== */

START_TEST(err_float_plus_bool) {
  ck_assert_ptr_null(ir_add(f, ir_lt(x, y)));
  assert_err(ctx, "ir_add: operand types differ (float32 and bool); convert one side with ir_cast");
  tec_ctx_clear_error(ctx);
  /* a bool constant is not a number either: it must not silently become 1f */
  ck_assert_ptr_null(ir_add(f, ir_bool(ctx, 1)));
  assert_err(ctx, "ir_add: operand types differ (float32 and bool); convert one side with ir_cast");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_add(ir_lt(x, y), ir_lt(y, x)));
  assert_err(ctx, "ir_add: operands are bool; use ir_and/ir_or or cast to a number");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_add(x, ir_float(ctx, 1.5)));
  assert_err(ctx, "ir_add: operand types differ (int64 and float32); convert one side with ir_cast");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_mul(x, f));
  assert_err(ctx, "ir_mul: operand types differ (int64 and float32); convert one side with ir_cast");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_floormod(f, g));
  assert_err(ctx, "ir_floormod: operands are float32; it needs integers");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_mod(f, ir_float(ctx, 2)));
  assert_err(ctx, "ir_mod: operands are float32; it needs integers");
}
END_TEST

START_TEST(err_and_on_floats) {
  ck_assert_ptr_null(ir_and(f, g));
  assert_err(ctx, "ir_and: operands are float32; it needs bool (a comparison)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_or(x, y));
  assert_err(ctx, "ir_or: operands are int64; it needs bool (a comparison)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_and(ir_lt(x, y), ir_int(ctx, 1)));
  ck_assert_ptr_nonnull(tec_ctx_error(ctx));
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_not(f));
  assert_err(ctx, "ir_not: operand is float32; it needs bool");
}
END_TEST

START_TEST(err_select_cond) {
  ck_assert_ptr_null(ir_select(x, f, g));
  assert_err(ctx, "ir_select: condition is int64; it needs bool (a comparison)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_select(f, f, g));
  assert_err(ctx, "ir_select: condition is float32; it needs bool (a comparison)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_select(ir_lt(x, y), x, f));
  assert_err(ctx,
             "ir_select: operand types differ (int64 and float32); convert one side with ir_cast");
}
END_TEST

START_TEST(err_read_index_count) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  ck_assert_ptr_null(TE_AT(A, x));
  assert_err(ctx, "read of 'A': 1 indices given, the tensor has 2 dimensions");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(TE_AT(A, x, y, x));
  assert_err(ctx, "read of 'A': 3 indices given, the tensor has 2 dimensions");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(TE_AT(A, x, f));
  assert_err(ctx, "read of 'A': index 1 is float32; indices must be scalar integers");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(TE_AT(A, ir_lt(x, y), y));
  assert_err(ctx, "read of 'A': index 0 is bool; indices must be scalar integers");
}
END_TEST

START_TEST(err_reduce_axis_twice) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  const ir_expr *k = te_reduce_axis_n(ctx, "k", 8);
  ck_assert_ptr_null(te_sum(TE_AT(A, x, k), 2, (const ir_expr *const[]){k, k}, NULL));
  assert_err(ctx, "reduce: axis 'k' is listed twice");
  tec_ctx_clear_error(ctx);
  /* other reduction misuse */
  ck_assert_ptr_null(te_sum(TE_AT(A, x, y), 1, &y, NULL));
  assert_err(ctx, "reduce: axis 0 is not a reduce axis; make it with te_reduce_axis");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_sum(TE_AT(A, x, k), 0, NULL, NULL));
  assert_err(ctx, "reduce: needs at least one reduce axis (te_reduce_axis)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_max(TE_AT(A, x, k), 1, &k, x));
  assert_err(ctx, "reduce: the condition must be bool (a comparison)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_sum(ir_lt(x, k), 1, &k, NULL));
  assert_err(ctx, "reduce: can only reduce numbers");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_reduce_axis_n(ctx, "z", 0));
  assert_err(ctx, "te_reduce_axis 'z': extent is 0; it must be >= 1");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_reduce_axis(ctx, "z", ir_float(ctx, 0), ir_int(ctx, 4)));
  assert_err(ctx, "te_reduce_axis 'z': min and extent must be integers");
}
END_TEST

typedef struct bad_user {
  te_tensor *A;
  const ir_expr *foreign;
  int which;
} bad_user;

static const ir_expr *bad_body(tec_ctx *c, const ir_expr *const *idx, void *user) {
  bad_user *u = user;
  const ir_expr *k = te_reduce_axis_n(c, "k", 8);
  switch (u->which) {
  case 0: /* reduction under an add */
    return ir_add(te_sum(TE_AT(u->A, idx[0], k), 1, &k, NULL), ir_float(c, 1));
  case 1: /* a variable of nobody's */
    return TE_AT(u->A, idx[0], u->foreign);
  case 2: /* a reduce axis outside any reduction */
    return TE_AT(u->A, idx[0], k);
  case 3: /* a reduction nested in a reduction's source */
    return te_sum(ir_mul(TE_AT(u->A, idx[0], k), te_sum(TE_AT(u->A, idx[0], k), 1, &k, NULL)), 1,
                  &k, NULL);
  case 4: /* the body fails to build */
    return NULL;
  case 5: /* a foreign variable inside the reduction's condition */
    return te_sum(TE_AT(u->A, idx[0], k), 1, &k, ir_lt(k, u->foreign));
  }
  return NULL;
}

static te_tensor *bad_compute(bad_user *u, int which) {
  u->which = which;
  return te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1, .shape = TE_SHAPE(ctx, 4),
                                            .body = bad_body, .user = u});
}

START_TEST(err_reduce_not_top) {
  bad_user u = {te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8)), NULL, 0};
  ck_assert_ptr_null(bad_compute(&u, 0));
  assert_err(ctx, "te_compute 'C': a reduction must be the whole body (the top of the "
                  "expression), not part of it; compute it as its own tensor");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(bad_compute(&u, 3));
  assert_err(ctx, "te_compute 'C': a reduction must be the whole body (the top of the "
                  "expression), not part of it; compute it as its own tensor");
}
END_TEST

START_TEST(err_foreign_var) {
  bad_user u = {te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8)), x, 0};
  ck_assert_ptr_null(bad_compute(&u, 1));
  assert_err(ctx, "te_compute 'C': the body uses variable 'x', which is neither an axis of 'C', "
                  "one of its reduce axes nor a size variable");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(bad_compute(&u, 2));
  assert_err(ctx, "te_compute 'C': the body uses variable 'k', which is neither an axis of 'C', "
                  "one of its reduce axes nor a size variable");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(bad_compute(&u, 5));
  assert_err(ctx, "te_compute 'C': the body uses variable 'x', which is neither an axis of 'C', "
                  "one of its reduce axes nor a size variable");
  tec_ctx_clear_error(ctx);
  /* the axis of another compute op is foreign too */
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = u.A->shape,
                                                    .body = add_one, .user = u.A});
  ck_assert_ptr_nonnull(B);
  u.foreign = B->axis[1];
  ck_assert_ptr_null(bad_compute(&u, 1));
  assert_err(ctx, "te_compute 'C': the body uses variable 'j', which is neither an axis of 'C', "
                  "one of its reduce axes nor a size variable");
  tec_ctx_clear_error(ctx);
  /* a size variable is fine */
  u.foreign = te_size_var(ctx, "n");
  ck_assert_ptr_nonnull(bad_compute(&u, 1));
  ck_assert_ptr_null(tec_ctx_error(ctx));
  /* a body callback returning NULL without an error gets one */
  ck_assert_ptr_null(bad_compute(&u, 4));
  assert_err(ctx, "te_compute 'C': the body callback returned NULL");
}
END_TEST

START_TEST(err_shapes_and_names) {
  ck_assert_ptr_null(te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, -1)));
  assert_err(ctx, "te_placeholder 'A': extent 0 is -1; extents must be >= 0");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 3, -5)));
  assert_err(ctx, "te_placeholder 'A': extent 1 is -5; extents must be >= 0");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_placeholder(ctx, NULL, TEC_F32, 1, TE_SHAPE(ctx, 4)));
  assert_err(ctx, "te_placeholder: a tensor needs a non-empty name");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_placeholder(ctx, "", TEC_F32, 1, TE_SHAPE(ctx, 4)));
  assert_err(ctx, "te_placeholder: a tensor needs a non-empty name");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_placeholder(ctx, "A", TEC_F32, -1, NULL));
  assert_err(ctx, "te_placeholder 'A': ndim is -1; a tensor has 0 (a scalar) to 16 dimensions");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_placeholder(ctx, "A", TEC_F32, 17, TE_SHAPE(ctx, 1)));
  assert_err(ctx, "te_placeholder 'A': ndim is 17; a tensor has 0 (a scalar) to 16 dimensions");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_placeholder(ctx, "A", TEC_F32, 1, NULL));
  assert_err(ctx, "te_placeholder 'A': shape is NULL; pass 1 extents");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_placeholder(ctx, "A", TEC_F32, 1, (const ir_expr *const[]){f}));
  assert_err(ctx, "te_placeholder 'A': extent 0 is not a scalar integer");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_placeholder(ctx, "A", TEC_HANDLET, 1, TE_SHAPE(ctx, 4)));
  assert_err(ctx, "te_placeholder 'A': element type must be a scalar number or bool");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_const_placeholder(ctx, "W", TEC_F32, 1, TE_SHAPE(ctx, -2)));
  assert_err(ctx, "te_const_placeholder 'W': extent 0 is -2; extents must be >= 0");
  tec_ctx_clear_error(ctx);
  /* extent 0 is a legal (empty) tensor */
  ck_assert_ptr_nonnull(te_placeholder(ctx, "E", TEC_F32, 1, TE_SHAPE(ctx, 0)));

  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  ck_assert_ptr_null(te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = -1, .body = add_one,
                                                        .user = A}));
  assert_err(ctx, "te_compute 'C': ndim is -1; a tensor has 0 (a scalar) to 16 dimensions");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_compute(ctx, &(te_compute_decl){.name = NULL, .ndim = 2,
                                                        .shape = A->shape, .body = add_one,
                                                        .user = A}));
  assert_err(ctx, "te_compute: a tensor needs a non-empty name");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                        .shape = TE_SHAPE(ctx, 4, -8),
                                                        .body = add_one, .user = A}));
  assert_err(ctx, "te_compute 'C': extent 1 is -8; extents must be >= 0");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                                        .shape = A->shape}));
  assert_err(ctx, "te_compute 'C': body callback is NULL");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_compute(ctx, NULL));
  assert_err(ctx, "te_compute: the declaration is NULL");
}
END_TEST

START_TEST(err_graph_too_deep) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, 4));
  te_tensor *t = A;
  for (int i = 0; i < 10001 && t; i++)
    t = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = A->shape,
                                           .body = add_one_1d, .user = t});
  ck_assert_msg(t != NULL, "%s", tec_ctx_error(ctx));
  te_tensor **order;
  ck_assert_int_eq(te_topo_order(ctx, 1, &t, &order), -1);
  assert_err(ctx, "te_topo_order: the graph is more than 10000 ops deep (at 'A'); split it into "
                  "several schedules");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_create(ctx, 1, &t));
  ck_assert_ptr_nonnull(tec_ctx_error(ctx));
}
END_TEST

/* ======== NULL propagation ======== */

START_TEST(null_propagation) {
  ck_assert_ptr_null(tec_ctx_error(ctx));
  ck_assert_ptr_null(ir_add(NULL, x));
  ck_assert_ptr_null(ir_sub(x, NULL));
  ck_assert_ptr_null(ir_and(NULL, NULL));
  ck_assert_ptr_null(ir_not(NULL));
  ck_assert_ptr_null(ir_select(ir_lt(x, y), NULL, x));
  ck_assert_ptr_null(ir_select(NULL, x, y));
  ck_assert_ptr_null(ir_cast(TEC_F32, NULL));
  ck_assert_ptr_null(ir_exp(NULL));
  ck_assert_ptr_null(ir_call(ctx, IR_INTRIN_POW, 2, (const ir_expr *const[]){f, NULL}));
  ck_assert_ptr_null(te_read(NULL, 1, &x));
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  ck_assert_ptr_null(TE_AT(A, x, NULL));
  ck_assert_ptr_null(te_sum(NULL, 1, &x, NULL));
  const ir_expr *k = te_reduce_axis_n(ctx, "k", 8);
  ck_assert_ptr_null(te_sum(TE_AT(A, x, k), 2, (const ir_expr *const[]){k, NULL}, NULL));
  ck_assert_ptr_null(te_reduce_axis(ctx, "k", NULL, ir_int(ctx, 3)));
  ck_assert_ptr_null(ir_substitute(NULL, 1, &x, &y));
  ck_assert_ptr_null(ir_for(x, ir_int(ctx, 0), NULL, IR_FOR_SERIAL, ir_evaluate(x)));
  ck_assert_ptr_null(ir_evaluate(NULL));
  ck_assert_ptr_null(tec_ctx_error(ctx)); /* no new error anywhere */
  ck_assert_str_eq(ir_expr_str(NULL), "<null>");

  /* a chain of calls keeps the first error only */
  const ir_expr *e1 = ir_add(f, x);      /* first error */
  const ir_expr *e2 = ir_and(f, g);      /* second error: not recorded */
  const ir_expr *e = ir_mul(ir_add(e1, e2), ir_exp(y));
  ck_assert_ptr_null(e);
  assert_err(ctx, "ir_add: operand types differ (float32 and int64); convert one side with ir_cast");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_ctx_error(ctx));
  /* after clearing, constructors work again */
  assert_expr(ir_add(f, g), "(f + g)");
}
END_TEST

/* ======== mutators and substitution ======== */

static const ir_expr *double_y(ir_mutator *m, const ir_expr *e) {
  const ir_expr *yy = m->user;
  return e == yy ? ir_mul(e, ir_int(m->ctx, 2)) : e;
}

START_TEST(mutator_identity) {
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  const ir_expr *left = ir_mul(TE_AT(A, x, ir_floormod(x, ir_int(ctx, 8))), ir_exp(f));
  const ir_expr *right = ir_select(ir_lt(x, y), ir_cast(TEC_F32, y), g);
  const ir_expr *e = ir_add(left, right);
  ir_mutator m;
  ir_mutator_init(&m, ctx, NULL);
  ck_assert_ptr_eq(ir_mutate_expr(&m, e), e);
  ck_assert_ptr_null(ir_mutate_expr(&m, NULL));

  const ir_stmt *s = ir_for(x, ir_int(ctx, 0), ir_int(ctx, 4), IR_FOR_SERIAL,
                            ir_seq2(ir_if(ir_lt(x, y), ir_evaluate(e), ir_evaluate(f)),
                                    ir_provide(A, 2, (const ir_expr *const[]){x, y}, e)));
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_eq(ir_mutate_stmt(&m, s), s);

  /* a change rebuilds only the path to it: the untouched sibling keeps its pointer */
  m.user = (void *)y;
  m.expr[IR_VAR] = double_y;
  const ir_expr *e2 = ir_mutate_expr(&m, e);
  ck_assert_ptr_ne(e2, e);
  ck_assert_ptr_eq(e2->a, left);
  ck_assert_ptr_ne(e2->b, right);
  ck_assert_ptr_eq(e2->b->c, g);
  assert_expr(e2, "((A[x, floormod(x, 8)]*exp(f)) + select((x < (y*2)), float32((y*2)), g))");
  /* e itself is untouched (immutable IR) */
  assert_expr(e, "((A[x, floormod(x, 8)]*exp(f)) + select((x < y), float32(y), g))");

  const ir_stmt *s2 = ir_mutate_stmt(&m, s);
  ck_assert_ptr_ne(s2, s);
  ck_assert_str_eq(ir_stmt_str(s2),
                   "for (x, 0, 4) {\n"
                   "  if ((x < (y*2))) {\n"
                   "    ((A[x, floormod(x, 8)]*exp(f)) + select((x < (y*2)), float32((y*2)), g))\n"
                   "  } else {\n"
                   "    f\n"
                   "  }\n"
                   "  A[x, (y*2)] = ((A[x, floormod(x, 8)]*exp(f)) + select((x < (y*2)), "
                   "float32((y*2)), g))\n"
                   "}\n");
}
END_TEST

START_TEST(substitute) {
  const ir_expr *e = ir_add(ir_mul(x, ir_int(ctx, 2)), y);
  const ir_expr *r = ir_substitute(e, 1, &x, (const ir_expr *const[]){ir_add(y, ir_int(ctx, 1))});
  assert_expr(r, "(((y + 1)*2) + y)");
  assert_expr(e, "((x*2) + y)");
  /* simultaneous: x -> y, y -> x */
  r = ir_substitute(e, 2, (const ir_expr *const[]){x, y}, (const ir_expr *const[]){y, x});
  assert_expr(r, "((y*2) + x)");
  /* a variable that does not occur: the same pointer */
  const ir_expr *z = ir_var(ctx, "z", TEC_INDEX, IR_VAR_INDEX);
  ck_assert_ptr_eq(ir_substitute(e, 1, &z, &x), e);
  ck_assert_ptr_eq(ir_substitute(e, 0, NULL, NULL), e);
  ck_assert(ir_uses_var(e, x) && ir_uses_var(e, y) && !ir_uses_var(e, z));
  /* in reads and statements */
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 4, 8));
  assert_expr(ir_substitute(TE_AT(A, x, y), 1, &y, (const ir_expr *const[]){ir_int(ctx, 3)}),
              "A[x, 3]");
  const ir_stmt *s = ir_for(x, ir_int(ctx, 0), ir_int(ctx, 4), IR_FOR_SERIAL,
                            ir_provide(A, 2, (const ir_expr *const[]){x, y}, f));
  const ir_stmt *s2 = ir_substitute_stmt(s, 1, &y, (const ir_expr *const[]){ir_int(ctx, 7)});
  ck_assert_str_eq(ir_stmt_str(s2), "for (x, 0, 4) {\n  A[x, 7] = f\n}\n");
  ck_assert(ir_stmt_uses_var(s, y) && !ir_stmt_uses_var(s2, y));
  /* structural equality */
  ck_assert(ir_expr_equal(ir_add(x, ir_int(ctx, 1)), ir_add(x, ir_int(ctx, 1))));
  ck_assert(!ir_expr_equal(ir_add(x, ir_int(ctx, 1)), ir_add(y, ir_int(ctx, 1))));
  ck_assert(!ir_expr_equal(ir_int(ctx, 1), ir_int_t(ctx, TEC_I32, 1)));
}
END_TEST

/* ======== a failing arena ======== */

static const ir_expr *mm_body(tec_ctx *c, const ir_expr *const *idx, void *user) {
  te_tensor **AB = user;
  const ir_expr *k = te_reduce_axis_n(c, "k", 16);
  return te_sum(ir_mul(TE_AT(AB[0], idx[0], k), TE_AT(AB[1], k, idx[1])), 1, &k, NULL);
}

START_TEST(alloc_budget) {
  tec_ctx_set_alloc_budget(ctx, 0);
  ck_assert_ptr_null(ir_int(ctx, 1));
  assert_err(ctx, "out of memory: the context's allocation budget is exhausted");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, 4)));
  ck_assert_ptr_nonnull(tec_ctx_error(ctx));
  tec_ctx_set_alloc_budget(ctx, -1);
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_nonnull(ir_int(ctx, 1));

  /* a whole program (compute, schedule, lower, print) under every budget up to success:
   * each attempt either succeeds or fails with a message, and never crashes */
  int succeeded = 0;
  for (long budget = 0; budget < 5000 && !succeeded; budget++) {
    tec_ctx *c = tec_ctx_new();
    tec_ctx_set_alloc_budget(c, budget);
    te_tensor *AB[2] = {te_placeholder(c, "A", TEC_F32, 2, TE_SHAPE(c, 32, 16)),
                        te_placeholder(c, "B", TEC_F32, 2, TE_SHAPE(c, 16, 24))};
    te_tensor *C = te_compute(c, &(te_compute_decl){.name = "C", .ndim = 2,
                                                    .shape = TE_SHAPE(c, 32, 24),
                                                    .body = mm_body, .user = AB});
    sch_schedule *s = C ? sch_create(c, 1, &C) : NULL;
    sch_stage *st = s ? sch_stage_of(s, C) : NULL;
    sch_iter *xo, *yo, *xi, *yi, *ko, *ki;
    int rc = st ? sch_tile(st, sch_axis(st, 0), sch_axis(st, 1), 8, 5, &xo, &yo, &xi, &yi) : -1;
    if (rc == 0) rc = sch_split(st, sch_reduce_axis(st, 0), 4, &ko, &ki);
    if (rc == 0) rc = sch_reorder(st, 3, (sch_iter *const[]){ko, xi, ki});
    lower_func *fn = rc == 0 ? tec_lower(s, "mm", 3, (te_tensor *const[]){AB[0], AB[1], C})
                             : NULL;
    const char *text = fn ? tec_lower_str(fn) : NULL;
    if (text && *text)
      succeeded = 1;
    else
      ck_assert_msg(tec_ctx_error(c) != NULL, "budget %ld: failed without an error", budget);
    tec_ctx_free(c);
  }
  ck_assert_msg(succeeded, "the program never lowered");
}
END_TEST

/* A reduce axis named like a default data axis (attention's O[h][i][d] = sum over j of
 * P[h][i][j] * V[h][j][d]: data axes i, j, k by default): the clashing data axis takes the
 * first free name (l), so every loop of the stage has its own name and a trace replays; a
 * name the user gave stays. Results against a plain-C sum. */
typedef struct att { te_tensor *p, *v; const ir_expr *j; } att;
static const ir_expr *att_body(tec_ctx *ctx, const ir_expr *const *x, void *u) {
  (void)ctx;
  att *a = u;
  return TE_SUM(ir_mul(TE_AT(a->p, x[0], x[1], a->j), TE_AT(a->v, x[0], a->j, x[2])), a->j);
}
START_TEST(reduce_axis_name_clash) {
  tec_ctx *ctx = tec_ctx_new();
  att a = {te_placeholder(ctx, "P", TEC_F32, 3, TE_SHAPE(ctx, 2, 5, 6)),
           te_placeholder(ctx, "V", TEC_F32, 3, TE_SHAPE(ctx, 2, 6, 16)),
           te_reduce_axis_n(ctx, "j", 6)};
  te_tensor *O = te_compute(ctx, &(te_compute_decl){.name = "O", .ndim = 3,
      .shape = TE_SHAPE(ctx, 2, 5, 16), .body = att_body, .user = &a});
  ck_assert_ptr_nonnull(O);
  ck_assert_str_eq(O->axis[0]->name, "i");
  ck_assert_str_eq(O->axis[1]->name, "l");
  ck_assert_str_eq(O->axis[2]->name, "k");
  sch_schedule *s = SCH_CREATE(ctx, O);
  sch_stage *st = sch_stage_of(s, O);
  ck_assert_ptr_eq(sch_leaf_named(st, "j"), sch_reduce_axis(st, 0));
  sch_iter *jo, *ji, *ko, *ki;
  OK(ctx, sch_split(st, sch_leaf_named(st, "j"), 2, &jo, &ji));
  OK(ctx, sch_split(st, sch_leaf_named(st, "k"), 8, &ko, &ki));
  OK(ctx, SCH_REORDER(st, sch_leaf_named(st, "i"), sch_leaf_named(st, "l"), jo, ko, ji, ki));
  OK(ctx, sch_vectorize(st, ki));
  sch_schedule *c = sch_clone(s); /* replays the trace, which names loops */
  ck_assert_msg(c != NULL, "%s", tec_ctx_error(ctx));
  tec_packed_fn fn = tu_build(ctx, c, "att", 3, (te_tensor *[]){a.p, a.v, O});
  int64_t sp[3] = {2, 5, 6}, sv[3] = {2, 6, 16}, so[3] = {2, 5, 16};
  DLTensor p = tu_rand_f32(3, sp, 3), v = tu_rand_f32(3, sv, 4), o = tu_zeros(TEC_F32, 3, so);
  ck_assert_msg(fn((DLTensor *[]){&p, &v, &o}, 3) == 0, "%s", tec_rt_last_error());
  float ref[2 * 5 * 16];
  for (int h = 0; h < 2; h++)
    for (int i = 0; i < 5; i++)
      for (int d = 0; d < 16; d++) {
        double acc = 0;
        for (int j = 0; j < 6; j++)
          acc += (double)tu_f32(&p)[(h * 5 + i) * 6 + j] * tu_f32(&v)[(h * 6 + j) * 16 + d];
        ref[(h * 5 + i) * 16 + d] = (float)acc;
      }
  ck_assert_double_lt(tu_max_err(tu_f32(&o), ref, 2 * 5 * 16), 1e-5);
  tec_dl_free(&p), tec_dl_free(&v), tec_dl_free(&o);
  /* a name the user gave is theirs, clash or not (and a trace then names two loops 'j') */
  te_tensor *O2 = te_compute(ctx, &(te_compute_decl){.name = "O2", .ndim = 3,
      .shape = TE_SHAPE(ctx, 2, 5, 16), .body = att_body, .user = &a,
      .axis_names = (const char *[]){"h", "j", "d"}});
  ck_assert_ptr_nonnull(O2);
  ck_assert_str_eq(O2->axis[1]->name, "j");
  tec_ctx_free(ctx);
}
END_TEST

/* te_reduce_init (TVM's init=): C[i, j] = b2[j] + sum_k A[i, k] * B[k, j] with b2 = 2 * bias
 * inlined into the init, and M[i] = max(A[i, 0] + 0.5, max_k A[i, k]) (a max that starts past
 * the identity), lowered with a non-dividing split (guarded init) and a vectorized axis; the
 * numbers against plain C, the printed body, and bad input. */
typedef struct ri { te_tensor *A, *B, *b2; const ir_expr *k; int which; } ri;
static const ir_expr *ri_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  ri *r = u;
  if (r->which == 1) /* the max */
    return te_reduce_init(TE_MAX(TE_AT(r->A, i[0], r->k), r->k),
                          ir_add(TE_AT(r->A, i[0], ir_int(ctx, 0)), ir_float(ctx, 0.5)));
  const ir_expr *sum = TE_SUM(ir_mul(TE_AT(r->A, i[0], r->k), TE_AT(r->B, r->k, i[1])), r->k);
  switch (r->which) {
  case 2: return te_reduce_init(ir_float(ctx, 1), ir_float(ctx, 1));             /* not a reduction */
  case 3: return te_reduce_init(sum, NULL);                                        /* no init */
  case 4: return te_reduce_init(sum, ir_cast(TEC_F64, TE_AT(r->b2, i[1])));        /* wrong type */
  case 5: return te_reduce_init(sum, TE_AT(r->A, i[0], r->k));                     /* reduce axis */
  case 6: return te_reduce_init(te_reduce_init(sum, TE_AT(r->b2, i[1])), TE_AT(r->b2, i[1]));
  default: return te_reduce_init(sum, TE_AT(r->b2, i[1]));
  }
}
static const ir_expr *ri_b2(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(ir_float(ctx, 2), TE_AT((te_tensor *)u, i[0]));
}
START_TEST(reduce_init) {
  tec_ctx *ctx = tec_ctx_new();
  enum { I = 5, K = 7, J = 8 };
  te_tensor *bias = te_placeholder(ctx, "bias", TEC_F32, 1, TE_SHAPE(ctx, J));
  ri r = {te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, I, K)),
          te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, K, J)),
          te_compute(ctx, &(te_compute_decl){.name = "b2", .ndim = 1, .shape = TE_SHAPE(ctx, J),
                                             .body = ri_b2, .user = bias}),
          te_reduce_axis_n(ctx, "k", K), 0};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
      .shape = TE_SHAPE(ctx, I, J), .body = ri_body, .user = &r,
      .axis_names = (const char *[]){"i", "j"}});
  ck_assert_msg(C != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_str_eq(ir_expr_str(C->body), "sum((A[i, k]*B[k, j]), axis=[k], init=b2[j])");
  ck_assert_int_eq(C->ninputs, 3); /* A, B and the init's b2 */
  r.which = 1;
  te_tensor *M = te_compute(ctx, &(te_compute_decl){.name = "M", .ndim = 1,
      .shape = TE_SHAPE(ctx, I), .body = ri_body, .user = &r});
  ck_assert_msg(M != NULL, "%s", tec_ctx_error(ctx));
  sch_schedule *s = SCH_CREATE(ctx, C, M);
  sch_stage *st = sch_stage_of(s, C);
  sch_iter *io, *ii;
  OK(ctx, sch_compute_inline(sch_stage_of(s, r.b2)));
  OK(ctx, sch_split(st, sch_axis(st, 0), 2, &io, &ii)); /* 5 rows by 2: a guarded tail */
  OK(ctx, sch_vectorize(st, sch_axis(st, 1)));
  ck_assert_ptr_null(sch_rfactor(s, C, sch_reduce_axis(st, 0), 0));
  assert_err(ctx, "rfactor: 'C' has an init (te_reduce_init); the partial results start from "
                  "the identity, so rfactor would add the init once per partial: add it in a "
                  "consumer instead");
  tec_ctx_clear_error(ctx);
  tec_packed_fn fn = tu_build(ctx, s, "ri", 5, (te_tensor *[]){r.A, r.B, bias, C, M});
  int64_t sa[2] = {I, K}, sb[2] = {K, J}, sc[2] = {I, J}, sbias[1] = {J}, sm[1] = {I};
  DLTensor a = tu_rand_f32(2, sa, 5), b = tu_rand_f32(2, sb, 6), bb = tu_rand_f32(1, sbias, 7);
  DLTensor c = tu_zeros(TEC_F32, 2, sc), m = tu_zeros(TEC_F32, 1, sm);
  ck_assert_msg(fn((DLTensor *[]){&a, &b, &bb, &c, &m}, 5) == 0, "%s", tec_rt_last_error());
  float ref[I * J], refm[I];
  for (int i = 0; i < I; i++) {
    double mx = (double)tu_f32(&a)[i * K] + 0.5;
    for (int k = 0; k < K; k++)
      if (tu_f32(&a)[i * K + k] > mx) mx = tu_f32(&a)[i * K + k];
    refm[i] = (float)mx;
    for (int j = 0; j < J; j++) {
      double acc = 2.0 * tu_f32(&bb)[j];
      for (int k = 0; k < K; k++) acc += (double)tu_f32(&a)[i * K + k] * tu_f32(&b)[k * J + j];
      ref[i * J + j] = (float)acc;
    }
  }
  ck_assert_double_lt(tu_max_err(tu_f32(&c), ref, I * J), 1e-5);
  ck_assert_double_eq(tu_max_err(tu_f32(&m), refm, I), 0);
  /* cache_write of a split stage (the cache laid out in the split's order) carries the init;
   * a split that does not divide would evaluate it in the padding: refused */
  sch_schedule *s2 = SCH_CREATE(ctx, C);
  sch_stage *st2 = sch_stage_of(s2, C);
  sch_iter *jo, *ji;
  OK(ctx, sch_split(st2, sch_axis(st2, 1), 4, &jo, &ji));
  OK(ctx, SCH_REORDER(st2, jo, sch_leaf_named(st2, "i"), ji));
  ck_assert_msg(sch_cache_write(s2, C, "global") != NULL, "%s", tec_ctx_error(ctx));
  tec_packed_fn fn2 = tu_build(ctx, s2, "ri2", 4, (te_tensor *[]){r.A, r.B, bias, C});
  memset(c.data, 0, sizeof(float) * I * J);
  ck_assert_msg(fn2((DLTensor *[]){&a, &b, &bb, &c}, 4) == 0, "%s", tec_rt_last_error());
  ck_assert_double_lt(tu_max_err(tu_f32(&c), ref, I * J), 1e-5);
  sch_schedule *s3 = SCH_CREATE(ctx, C);
  sch_stage *st3 = sch_stage_of(s3, C);
  OK(ctx, sch_split(st3, sch_axis(st3, 0), 2, &io, &ii));
  OK(ctx, SCH_REORDER(st3, sch_leaf_named(st3, "j"), io, ii));
  ck_assert_ptr_null(sch_cache_write(s3, C, "global"));
  assert_err(ctx, "cache_write: 'C' is a reduction with an init (te_reduce_init) over a split "
                  "that does not divide its axis; split by a divisor or cache before splitting");
  tec_ctx_clear_error(ctx);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&bb), tec_dl_free(&c), tec_dl_free(&m);
  /* bad input: each refused with what was wrong */
  static const char *const why[] = {
      "te_reduce_init: the first argument (a float expression) is not a reduction (te_sum, "
      "te_max, te_min or te_prod)",
      "te_reduce_init: init is NULL (give the value the reduction starts from, e.g. bias[c])",
      "te_reduce_init: init is float64 and the reduction float32; they must be the same type "
      "(cast init)",
      "te_reduce_init: init uses reduce axis 'k'; it is evaluated once per output element, "
      "before the reduction: use the output's axes only",
      "te_reduce_init: the reduction already has an init",
  };
  for (int w = 2; w <= 6; w++) {
    tec_ctx_clear_error(ctx);
    r.which = w;
    ck_assert_ptr_null(te_compute(ctx, &(te_compute_decl){.name = "D", .ndim = 2,
        .shape = TE_SHAPE(ctx, I, J), .body = ri_body, .user = &r}));
    assert_err(ctx, why[w - 2]);
  }
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(te_reduce_init(NULL, ir_float(ctx, 1))); /* NULL in, NULL out */
  tec_ctx_free(ctx);
}
END_TEST

Suite *te_suite(void) {
  Suite *s = suite_create("te");
  TCase *b = tcase_create("build_print");
  tcase_add_checked_fixture(b, setup, teardown);
  tcase_add_test(b, immediates);
  tcase_add_test(b, vars);
  tcase_add_test(b, arithmetic);
  tcase_add_test(b, comparisons_and_logic);
  tcase_add_test(b, select_and_cast);
  tcase_add_test(b, intrinsics);
  tcase_add_test(b, reads);
  tcase_add_test(b, reductions);
  tcase_add_test(b, compute_ops);
  suite_add_tcase(s, b);

  TCase *e = tcase_create("errors");
  tcase_add_checked_fixture(e, setup, teardown);
  tcase_add_test(e, err_float_plus_bool);
  tcase_add_test(e, err_and_on_floats);
  tcase_add_test(e, err_select_cond);
  tcase_add_test(e, err_read_index_count);
  tcase_add_test(e, err_reduce_axis_twice);
  tcase_add_test(e, err_reduce_not_top);
  tcase_add_test(e, err_foreign_var);
  tcase_add_test(e, err_shapes_and_names);
  tcase_add_test(e, err_graph_too_deep);
  tcase_add_test(e, null_propagation);
  suite_add_tcase(s, e);

  TCase *m = tcase_create("mutate");
  tcase_add_checked_fixture(m, setup, teardown);
  tcase_add_test(m, mutator_identity);
  tcase_add_test(m, substitute);
  tcase_add_test(m, alloc_budget);
  tcase_add_test(m, reduce_axis_name_clash);
  tcase_add_test(m, reduce_init);
  suite_add_tcase(s, m);
  return s;
}

int main(void) { return tu_run(te_suite()); }

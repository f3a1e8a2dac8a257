/* test_simplify.c — the arithmetic simplifier: printed IR before/after, a random semantic
 * check against an independent evaluator, and the statement pass. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "arith/arith.h"
#include "ir_eval.h"
#include "ir/eval.h"

static tec_ctx *ctx;
static const ir_expr *I, *J, *K, *N, *U, *IO, *II;

static void setup(void) {
  ctx = tec_ctx_new();
  I = ir_var(ctx, "i", TEC_INDEX, IR_VAR_INDEX);
  J = ir_var(ctx, "j", TEC_INDEX, IR_VAR_INDEX);
  K = ir_var(ctx, "k", TEC_INDEX, IR_VAR_INDEX);
  N = ir_var(ctx, "n", TEC_INDEX, IR_VAR_SIZE);
  U = ir_var(ctx, "u", TEC_INDEX, IR_VAR_INDEX);
  IO = ir_var(ctx, "i.outer", TEC_INDEX, IR_VAR_INDEX);
  II = ir_var(ctx, "i.inner", TEC_INDEX, IR_VAR_INDEX);
}
static void teardown(void) { tec_ctx_free(ctx); }

static const ir_expr *C(int64_t v) { return ir_int(ctx, v); }

/* The env of most tests: i in [0, 12], j in [0, 7], k in [-6, 9], i.outer in [0, 12],
 * i.inner in [0, 7]; n (a size) and u are unbound. */
static arith_env *std_env(void) {
  arith_env *env = arith_env_new(ctx);
  arith_env_push(env, I, arith_range_of(0, 12));
  arith_env_push(env, J, arith_range_of(0, 7));
  arith_env_push(env, K, arith_range_of(-6, 9));
  arith_env_push(env, IO, arith_range_of(0, 12));
  arith_env_push(env, II, arith_range_of(0, 7));
  return env;
}

#define SIMP_IS(e, env, want)                                                           \
  do {                                                                                  \
    const ir_expr *in_ = (e);                                                           \
    ck_assert_ptr_nonnull(in_);                                                         \
    const ir_expr *out_ = arith_simplify(in_, (env));                                   \
    ck_assert_msg(out_ && strcmp(ir_expr_str(out_), (want)) == 0,                       \
                  "simplify %s\n  got  %s\n  want %s", ir_expr_str(in_),                \
                  out_ ? ir_expr_str(out_) : "(null)", (want));                         \
  } while (0)

/* ---- printed before/after ---- */

START_TEST(test_fold_constants) {
  SIMP_IS(ir_add(C(3), C(4)), NULL, "7");
  SIMP_IS(ir_mul(ir_sub(C(3), C(10)), C(5)), NULL, "-35");
  SIMP_IS(ir_floordiv(C(-7), C(2)), NULL, "-4");
  SIMP_IS(ir_floormod(C(-7), C(2)), NULL, "1");
  SIMP_IS(ir_floormod(C(7), C(-2)), NULL, "-1");
  SIMP_IS(ir_truncdiv(C(7), C(2)), NULL, "3");
  SIMP_IS(ir_min(C(3), C(-2)), NULL, "-2");
  SIMP_IS(ir_max(C(3), C(-2)), NULL, "3");
  SIMP_IS(ir_lt(C(3), C(4)), NULL, "true");
  SIMP_IS(ir_and(ir_lt(C(3), C(4)), ir_eq(C(1), C(2))), NULL, "false");
  SIMP_IS(ir_not(ir_ge(C(3), C(4))), NULL, "true");
  SIMP_IS(ir_select(ir_gt(C(2), C(1)), I, J), NULL, "i");
  SIMP_IS(ir_add(ir_float(ctx, 1.5f), ir_float(ctx, 2.0f)), NULL, "3.5f");
  SIMP_IS(ir_mul(ir_float(ctx, 0.1f), ir_float(ctx, 3.0f)), NULL, "0.300000012f");
  SIMP_IS(ir_cast(TEC_F32, C(2)), NULL, "2f");
  SIMP_IS(ir_cast(TEC_I32, C(-1)), NULL, "-1i32");
  SIMP_IS(ir_cast(TEC_I8, C(300)), NULL, "44i8");
  SIMP_IS(ir_cast(TEC_I64, ir_float(ctx, -2.75f)), NULL, "-2");
  SIMP_IS(ir_add(ir_int_t(ctx, TEC_I32, 2147483647), ir_int_t(ctx, TEC_I32, 1)), NULL,
          "-2147483648i32");
  /* INT64_MIN / -1 overflows: left alone */
  SIMP_IS(ir_floordiv(C(INT64_MIN), C(-1)), NULL, "floordiv(-9223372036854775808, -1)");
  /* division by zero is undefined: left alone */
  SIMP_IS(ir_floordiv(C(5), C(0)), NULL, "floordiv(5, 0)");
}
END_TEST

START_TEST(test_no_float_reassociation) {
  const ir_expr *x = ir_var(ctx, "x", TEC_F32, IR_VAR_LET);
  /* (x + 1) + 2 must stay: float addition is not associative */
  SIMP_IS(ir_add(ir_add(x, ir_float(ctx, 1)), ir_float(ctx, 2)), NULL, "((x + 1f) + 2f)");
  SIMP_IS(ir_sub(x, x), NULL, "(x - x)");
  SIMP_IS(ir_mul(x, ir_float(ctx, 1)), NULL, "x");
  SIMP_IS(ir_min(x, x), NULL, "x");
  /* !(x < y) is not x >= y for NaN */
  SIMP_IS(ir_not(ir_lt(x, ir_float(ctx, 0))), NULL, "!(x < 0f)");
}
END_TEST

START_TEST(test_linear_forms) {
  SIMP_IS(ir_sub(ir_add(ir_mul(I, C(4)), J), ir_mul(I, C(4))), NULL, "j");
  SIMP_IS(ir_add(ir_mul(IO, C(32)), II), NULL, "((i.outer*32) + i.inner)");
  SIMP_IS(ir_add(ir_mul(U, C(2)), ir_mul(U, C(3))), NULL, "(u*5)");
  SIMP_IS(ir_add(ir_add(U, C(3)), C(4)), NULL, "(u + 7)");
  SIMP_IS(ir_sub(ir_mul(C(3), ir_add(U, C(2))), U), NULL, "((u*2) + 6)");
  SIMP_IS(ir_sub(ir_add(U, C(3)), C(4)), NULL, "(u - 1)");
  SIMP_IS(ir_sub(C(5), U), NULL, "(5 - u)");
  SIMP_IS(ir_sub(J, ir_mul(U, C(2))), NULL, "(j - (u*2))");
  SIMP_IS(ir_sub(ir_mul(U, C(0)), J), NULL, "(j*-1)");
  SIMP_IS(ir_sub(U, U), NULL, "0");
  SIMP_IS(ir_mul(ir_add(U, C(1)), ir_add(J, C(1))), NULL, "((u + 1)*(j + 1))");
  /* floordiv(x, 8)*8 + floormod(x, 8) == x */
  SIMP_IS(ir_add(ir_mul(ir_floordiv(U, C(8)), C(8)), ir_floormod(U, C(8))), NULL, "u");
}
END_TEST

START_TEST(test_division) {
  arith_env *env = std_env();
  const ir_expr *fused = ir_add(ir_mul(IO, C(8)), II);
  SIMP_IS(ir_floordiv(fused, C(8)), env, "i.outer");
  SIMP_IS(ir_floormod(fused, C(8)), env, "i.inner");
  SIMP_IS(ir_floordiv(ir_add(ir_mul(U, C(16)), J), C(8)), env, "(u*2)");
  SIMP_IS(ir_floordiv(ir_add(ir_mul(U, C(16)), K), C(8)), env, "((u*2) + floordiv(k, 8))");
  SIMP_IS(ir_floormod(ir_add(ir_mul(U, C(16)), K), C(8)), env, "floormod(k, 8)");
  SIMP_IS(ir_floordiv(ir_add(ir_mul(U, C(16)), ir_mul(J, C(3))), C(8)), env,
          "((u*2) + ((j*3) / 8))");
  SIMP_IS(ir_floormod(ir_floormod(ir_sub(C(9), N), C(16)), C(8)), env, "floormod((9 - n), 8)");
  SIMP_IS(ir_floordiv(ir_floordiv(U, C(4)), C(2)), env, "floordiv(u, 8)");
  SIMP_IS(ir_floormod(ir_floormod(U, C(16)), C(8)), env, "floormod(u, 8)");
  SIMP_IS(ir_floormod(ir_floormod(U, C(8)), C(8)), env, "floormod(u, 8)");
  SIMP_IS(ir_floordiv(U, C(1)), env, "u");
  SIMP_IS(ir_floormod(U, C(1)), env, "0");
  SIMP_IS(ir_floordiv(J, C(8)), env, "0");
  SIMP_IS(ir_floormod(J, C(8)), env, "j");
  SIMP_IS(ir_floordiv(ir_add(J, C(8)), C(8)), env, "1");
  SIMP_IS(ir_floormod(ir_add(J, C(8)), C(8)), env, "j");
  /* provably non-negative numerators become plain (truncating) division */
  SIMP_IS(ir_floordiv(I, C(5)), env, "(i / 5)");
  SIMP_IS(ir_floormod(ir_add(N, C(7)), C(8)), env, "((n + 7) % 8)");
  SIMP_IS(ir_floordiv(K, C(5)), env, "floordiv(k, 5)");
  SIMP_IS(ir_floordiv(U, C(5)), env, "floordiv(u, 5)");
  SIMP_IS(ir_floordiv(ir_add(K, C(6)), C(16)), env, "0");
  /* a fused loop over 16 columns */
  const ir_expr *f = ir_var(ctx, "fused", TEC_INDEX, IR_VAR_INDEX);
  arith_env_push(env, f, arith_range_of(0, 16 * 20 - 1));
  SIMP_IS(ir_floormod(f, C(16)), env, "(fused % 16)");
  SIMP_IS(ir_floordiv(f, C(16)), env, "(fused / 16)");
  /* already plain division stays (idempotent) */
  SIMP_IS(ir_truncdiv(f, C(16)), env, "(fused / 16)");
  SIMP_IS(ir_truncdiv(ir_add(ir_mul(IO, C(8)), II), C(8)), env, "i.outer");
}
END_TEST

START_TEST(test_compare_minmax) {
  arith_env *env = std_env();
  const ir_expr *idx = ir_add(ir_mul(IO, C(8)), II); /* in [0, 103] */
  SIMP_IS(ir_lt(idx, C(100)), env, "(((i.outer*8) + i.inner) < 100)");
  SIMP_IS(ir_lt(idx, C(104)), env, "true");
  SIMP_IS(ir_ge(idx, C(0)), env, "true");
  SIMP_IS(ir_gt(idx, C(103)), env, "false");
  SIMP_IS(ir_lt(II, C(8)), env, "true");
  SIMP_IS(ir_eq(ir_add(J, C(1)), C(0)), env, "false");
  SIMP_IS(ir_ne(U, U), env, "false");
  SIMP_IS(ir_le(U, ir_add(U, C(1))), env, "true");
  SIMP_IS(ir_min(U, U), env, "u");
  SIMP_IS(ir_min(U, ir_add(U, C(1))), env, "u");
  SIMP_IS(ir_max(U, ir_add(U, C(1))), env, "(u + 1)");
  SIMP_IS(ir_min(J, C(8)), env, "j");
  SIMP_IS(ir_max(J, C(0)), env, "j");
  SIMP_IS(ir_min(K, C(0)), env, "min(k, 0)");
  SIMP_IS(ir_min(ir_min(U, C(4)), C(2)), env, "min(u, 2)");
  /* x / c and y / c keep x and y's order for c > 0 (floor and truncating division) */
  SIMP_IS(ir_min(ir_floordiv(U, C(4)), ir_floordiv(ir_add(U, C(3)), C(4))), env,
          "floordiv(u, 4)");
  SIMP_IS(ir_max(ir_floordiv(U, C(4)), ir_floordiv(ir_add(U, C(3)), C(4))), env,
          "floordiv((u + 3), 4)");
  SIMP_IS(ir_min(ir_floordiv(ir_add(U, C(3)), C(4)), ir_floordiv(U, C(4))), env,
          "floordiv(u, 4)");
  SIMP_IS(ir_min(ir_floordiv(U, C(4)), ir_floordiv(ir_add(U, C(3)), C(8))), env,
          "min(floordiv(u, 4), floordiv((u + 3), 8))"); /* other divisors: unknown */
  SIMP_IS(ir_min(ir_floordiv(U, C(4)), ir_floordiv(K, C(4))), env,
          "min(floordiv(u, 4), floordiv(k, 4))");
  SIMP_IS(ir_le(ir_floordiv(U, C(4)), ir_floordiv(ir_add(U, C(3)), C(4))), env, "true");
  SIMP_IS(ir_and(ir_lt(U, C(3)), ir_bool(ctx, 1)), env, "(u < 3)");
  SIMP_IS(ir_or(ir_lt(U, C(3)), ir_lt(J, C(8))), env, "true");
  SIMP_IS(ir_not(ir_lt(U, C(3))), env, "(u >= 3)");
  SIMP_IS(ir_select(ir_lt(U, C(3)), J, J), env, "j");
  SIMP_IS(ir_select(ir_lt(J, C(9)), U, J), env, "u");
  /* symbolic loop bounds: inside for i in [0, n), i < n */
  const ir_expr *x = ir_var(ctx, "x", TEC_INDEX, IR_VAR_INDEX);
  arith_env_push_loop(env, x, C(0), N);
  SIMP_IS(ir_lt(x, N), env, "true");
  SIMP_IS(ir_ge(x, N), env, "false");
  SIMP_IS(ir_lt(ir_add(x, C(1)), N), env, "((x + 1) < n)");
  SIMP_IS(ir_le(ir_add(x, C(1)), N), env, "true");
  SIMP_IS(ir_ge(x, C(0)), env, "true");
}
END_TEST

START_TEST(test_bound_and_prove) {
  arith_env *env = std_env();
  arith_range r = arith_bound(ir_add(ir_mul(IO, C(8)), II), env);
  ck_assert(r.has_lo && r.has_hi && r.lo == 0 && r.hi == 103);
  r = arith_bound(ir_sub(ir_add(ir_mul(I, C(4)), J), ir_mul(I, C(4))), env);
  ck_assert(r.has_lo && r.has_hi && r.lo == 0 && r.hi == 7);
  r = arith_bound(ir_floormod(U, C(8)), env);
  ck_assert(r.has_lo && r.has_hi && r.lo == 0 && r.hi == 7);
  r = arith_bound(ir_floordiv(K, C(4)), env);
  ck_assert(r.has_lo && r.has_hi && r.lo == -2 && r.hi == 2);
  r = arith_bound(ir_mul(K, J), env);
  ck_assert(r.has_lo && r.has_hi && r.lo == -42 && r.hi == 63);
  r = arith_bound(ir_min(U, J), env);
  ck_assert(!r.has_lo && r.has_hi && r.hi == 7);
  r = arith_bound(ir_select(ir_lt(U, C(0)), J, K), env);
  ck_assert(r.has_lo && r.has_hi && r.lo == -6 && r.hi == 9);
  r = arith_bound(U, env);
  ck_assert(!r.has_lo && !r.has_hi);
  r = arith_bound(N, env);
  ck_assert(r.has_lo && r.lo == 0 && !r.has_hi);
  r = arith_bound(ir_cast(TEC_I8, U), env);
  ck_assert(r.has_lo && r.has_hi && r.lo == -128 && r.hi == 127);
  ck_assert_int_eq(arith_prove(ir_lt(ir_add(ir_mul(IO, C(8)), II), C(104)), env), 1);
  ck_assert_int_eq(arith_prove(ir_lt(ir_add(ir_mul(IO, C(8)), II), C(100)), env), 0);
  ck_assert_int_eq(arith_prove(ir_lt(U, C(0)), env), 0);
  ck_assert_int_eq(arith_prove(NULL, env), 0);
  /* push/pop */
  int d = arith_env_depth(env);
  arith_env_push(env, U, arith_range_of(3, 3));
  SIMP_IS(ir_add(U, C(1)), env, "4");
  arith_env_pop(env, 1);
  ck_assert_int_eq(arith_env_depth(env), d);
  SIMP_IS(ir_add(U, C(1)), env, "(u + 1)");
}
END_TEST

START_TEST(test_same_pointer_and_odd_input) {
  arith_env *env = std_env();
  const ir_expr *e = ir_add(ir_mul(IO, C(32)), II);
  ck_assert_ptr_eq(arith_simplify(e, env), e);
  const ir_expr *x = ir_var(ctx, "x", TEC_F32, IR_VAR_LET);
  const ir_expr *fe = ir_add(ir_mul(x, ir_float(ctx, 2)), ir_float(ctx, 1));
  ck_assert_ptr_eq(arith_simplify(fe, env), fe);
  ck_assert_ptr_null(arith_simplify(NULL, env));
  ck_assert_ptr_eq(arith_simplify(U, NULL), U);
  /* vectors */
  const ir_expr *rmp = ir_ramp(ir_mul(IO, C(8)), C(1), 8);
  SIMP_IS(ir_floordiv(rmp, ir_broadcast(C(8), 8)), env, "x8(i.outer)");
  SIMP_IS(ir_floormod(rmp, ir_broadcast(C(8), 8)), env, "ramp(0, 1, 8)");
  SIMP_IS(ir_add(rmp, ir_broadcast(C(3), 8)), env, "ramp(((i.outer*8) + 3), 1, 8)");
  SIMP_IS(ir_add(ir_broadcast(C(3), 4), ir_broadcast(C(4), 4)), env, "x4(7)");
  SIMP_IS(ir_lt(ir_broadcast(J, 4), ir_broadcast(C(8), 4)), env, "x4(true)");
  /* LET */
  const ir_expr *t = ir_var(ctx, "t", TEC_INDEX, IR_VAR_LET);
  SIMP_IS(ir_let(t, ir_add(U, C(0)), ir_add(t, C(1))), env, "(u + 1)");
  SIMP_IS(ir_let(t, ir_mul(J, C(2)), ir_lt(t, C(15))), env, "true");
  SIMP_IS(ir_let(t, ir_mul(U, J), ir_add(t, t)), env, "(let t = (u*j) in (t*2))");
}
END_TEST

/* ---- random expressions, checked against the independent evaluator (support/ir_eval.c) ---- */

static unsigned rng_state;
static int rnd(int n) {
  rng_state = rng_state * 1103515245u + 12345u;
  return (int)((rng_state >> 8) % (unsigned)n);
}

static const ir_expr *gen_int(int depth);

static const ir_expr *gen_bool(int depth) {
  const ir_expr *a = gen_int(depth - 1), *b = gen_int(depth - 1);
  switch (rnd(depth > 1 ? 9 : 6)) {
  case 0: return ir_lt(a, b);
  case 1: return ir_le(a, b);
  case 2: return ir_gt(a, b);
  case 3: return ir_ge(a, b);
  case 4: return ir_eq(a, b);
  case 5: return ir_ne(a, b);
  case 6: return ir_and(gen_bool(depth - 1), gen_bool(depth - 1));
  case 7: return ir_or(gen_bool(depth - 1), gen_bool(depth - 1));
  default: return ir_not(gen_bool(depth - 1));
  }
}

static const int64_t divisors[] = {1, 2, 3, 4, 5, 7, 8, 16, -3, 32};

static const ir_expr *gen_int(int depth) {
  const ir_expr *vars[] = {I, J, K, N, U, IO, II};
  if (depth <= 0 || rnd(5) == 0)
    return rnd(3) ? vars[rnd(7)] : C(rnd(21) - 10);
  switch (rnd(12)) {
  case 0: case 1: return ir_add(gen_int(depth - 1), gen_int(depth - 1));
  case 2: return ir_sub(gen_int(depth - 1), gen_int(depth - 1));
  case 3: return ir_mul(gen_int(depth - 1), C(rnd(9) - 3));
  case 4: return ir_mul(gen_int(depth - 2), gen_int(depth - 2));
  case 5: return ir_floordiv(gen_int(depth - 1), C(divisors[rnd(10)]));
  case 6: return ir_floormod(gen_int(depth - 1), C(divisors[rnd(10)]));
  case 7: return ir_min(gen_int(depth - 1), gen_int(depth - 1));
  case 8: return ir_max(gen_int(depth - 1), gen_int(depth - 1));
  case 9: return ir_select(gen_bool(depth - 1), gen_int(depth - 1), gen_int(depth - 1));
  case 10: /* the shape lowering makes: outer*f + inner, then divided by f */
    return ir_floordiv(ir_add(ir_mul(IO, C(8)), ir_add(II, gen_int(depth - 2))), C(8));
  default:
    return ir_floormod(ir_add(ir_mul(gen_int(depth - 1), C(16)), gen_int(depth - 1)), C(8));
  }
}

/* Samples a value of every variable inside its env range (unbound ones from a wide range). */
static void sample(tu_evalenv *en, int bounded) {
  const ir_expr *vars[] = {I, J, K, N, U, IO, II};
  int64_t lo[] = {0, 0, -6, 0, -60, 0, 0}, hi[] = {12, 7, 9, 40, 60, 12, 7};
  en->n = 7;
  en->bad = 0;
  en->strict_trunc = 1; /* the simplifier may assume a >= 0, b > 0 for truncating div/mod */
  for (int i = 0; i < 7; i++) {
    en->vars[i] = vars[i];
    int64_t l = bounded || vars[i] == N ? lo[i] : -60, h = bounded || vars[i] == N ? hi[i] : 60;
    en->vals[i] = l + rnd((int)(h - l + 1));
  }
}

static void random_check(int bounded, unsigned seed) {
  arith_env *env = bounded ? std_env() : NULL;
  rng_state = seed;
  int changed = 0, depth = arith_env_depth(env);
  for (int t = 0; t < 300; t++) {
    /* In a bounded env, half the time also assume a condition on u or n (as in an IF). */
    const ir_expr *assumed = NULL;
    arith_env_pop(env, arith_env_depth(env) - depth);
    if (bounded && rnd(2)) {
      const ir_expr *v = rnd(2) ? U : N, *c = C(rnd(30) - 10);
      switch (rnd(5)) {
      case 0: assumed = ir_lt(v, c); break;
      case 1: assumed = ir_ge(v, c); break;
      case 2: assumed = ir_gt(c, v); break;
      case 3: assumed = ir_and(ir_le(c, v), ir_lt(v, ir_add(c, C(3)))); break;
      default: assumed = ir_lt(v, ir_add(J, C(2))); break;
      }
      arith_env_assume(env, arith_simplify(assumed, env));
    }
    const ir_expr *e = rnd(4) ? gen_int(4) : gen_bool(4);
    ck_assert_ptr_nonnull(e);
    const ir_expr *s = arith_simplify(e, env);
    ck_assert_ptr_nonnull(s);
    changed += s != e;
    /* simplifying again changes nothing */
    const ir_expr *s2 = arith_simplify(s, env);
    ck_assert_msg(s2 == s, "not idempotent:\n  %s\n  %s\n  %s", ir_expr_str(e), ir_expr_str(s),
                  ir_expr_str(s2));
    for (int k = 0; k < 50; k++) {
      tu_evalenv en;
      int tries = 0;
      do sample(&en, bounded);
      while (assumed && !tu_eval(assumed, &en) && ++tries < 1000);
      if (assumed && !tu_eval(assumed, &en)) continue; /* (nearly) unsatisfiable */
      int64_t want = tu_eval(e, &en);
      ck_assert(!en.bad);
      int64_t got = tu_eval(s, &en);
      ck_assert_msg(!en.bad && got == want,
                    "mismatch (%s):\n  %s\n  %s\n  i=%lld j=%lld k=%lld n=%lld u=%lld io=%lld "
                    "ii=%lld: want %lld got %lld",
                    en.bad ? "contract" : "value", ir_expr_str(e), ir_expr_str(s),
                    (long long)en.vals[0], (long long)en.vals[1], (long long)en.vals[2],
                    (long long)en.vals[3], (long long)en.vals[4], (long long)en.vals[5],
                    (long long)en.vals[6], (long long)want, (long long)got);
    }
  }
  ck_assert_int_gt(changed, 100);
}

/* The evaluator the random checks trust (ir/eval.c), against values worked out by hand. */
START_TEST(test_evaluator) {
  const ir_expr *vars[] = {I, N};
  int64_t vals[] = {-7, 10};
  ir_eval_env env = {.n = 2, .vars = vars, .vals = vals};
#define EV(e, want) ck_assert_int_eq(ir_eval_int((e), &env), (want))
  EV(ir_floordiv(I, C(2)), -4);             /* floor(-3.5) */
  EV(ir_floormod(I, C(2)), 1);              /* -7 - 2 * -4 */
  EV(ir_floordiv(I, C(-2)), 3);
  EV(ir_floormod(I, C(-2)), -1);
  EV(ir_truncdiv(I, C(2)), -3);             /* C's truncation when not strict */
  EV(ir_truncmod(I, C(2)), -1);
  EV(ir_sub(ir_mul(N, N), ir_min(I, N)), 107);
  EV(ir_select(ir_lt(I, C(0)), ir_max(I, C(3)), C(9)), 3);
  EV(ir_and(ir_ge(N, C(10)), ir_not(ir_eq(I, C(7)))), 1);
  EV(ir_cast(TEC_I8, ir_add(N, C(250))), 4); /* 260 wraps to 4 in int8 */
  EV(ir_cast(TEC_I8, C(200)), -56);
  ck_assert_int_eq(env.bad, 0);
  ir_eval_int(ir_add(I, ir_floordiv(N, ir_sub(N, N))), &env); /* division by 0 */
  ck_assert_int_eq(env.bad, 1);
  env.bad = 0;
  ir_eval_int(ir_add(U, C(1)), &env); /* u is not bound */
  ck_assert_int_eq(env.bad, 1);
  env.bad = 0;
  ir_eval_int(ir_cast(TEC_I32, ir_float(ctx, 1.5)), &env); /* floats: no integer value here */
  ck_assert_int_eq(env.bad, 1);
  env.bad = 0, env.strict_trunc = 1;
  ir_eval_int(ir_truncdiv(I, C(2)), &env); /* the simplifier's contract: operands >= 0 */
  ck_assert_int_eq(env.bad, 1);
  env.bad = 0;
  EV(ir_truncmod(N, C(4)), 2);
  ck_assert_int_eq(env.bad, 0);
#undef EV
}
END_TEST

START_TEST(test_random_bounded) { random_check(1, 12345u + (unsigned)_i); }
END_TEST

START_TEST(test_random_unbounded) { random_check(0, 777u + (unsigned)_i); }
END_TEST

/* ---- the statement pass ---- */

START_TEST(test_pass_for_extent_one) {
  const ir_expr *buf = ir_var(ctx, "B", TEC_HANDLET, IR_VAR_BUFFER);
  const ir_expr *x = ir_var(ctx, "x", TEC_INDEX, IR_VAR_INDEX);
  /* for (x, 3, 1) { B[x*2] = 1f }  ->  B[6] = 1f */
  const ir_stmt *s = ir_for(x, C(3), C(1), IR_FOR_SERIAL,
                            ir_store(buf, ir_mul(x, C(2)), ir_float(ctx, 1), NULL));
  const ir_stmt *r = lower_simplify(s);
  ck_assert_str_eq(ir_stmt_str(r), "B[6] = 1f\n");
  /* extent 0 and negative: removed, and the enclosing loop too */
  s = ir_for(I, C(0), C(4), IR_FOR_SERIAL,
             ir_for(x, C(0), ir_sub(C(2), C(2)), IR_FOR_SERIAL,
                    ir_store(buf, x, ir_float(ctx, 1), NULL)));
  ck_assert_ptr_null(lower_simplify(s));
  const ir_stmt *keep = ir_store(buf, I, ir_float(ctx, 2), NULL);
  s = ir_seq2(ir_for(x, C(0), C(-3), IR_FOR_SERIAL, ir_store(buf, x, ir_float(ctx, 1), NULL)),
              keep);
  ck_assert_ptr_eq(lower_simplify(s), keep);
}
END_TEST

START_TEST(test_pass_guards) {
  const ir_expr *buf = ir_var(ctx, "B", TEC_HANDLET, IR_VAR_BUFFER);
  const ir_expr *idx = ir_add(ir_mul(IO, C(8)), II);
  const ir_stmt *st = ir_store(buf, idx, ir_float(ctx, 1), NULL);
  /* a tail guard that may fail stays; one that holds goes */
  const ir_stmt *s =
      ir_for(IO, C(0), C(13), IR_FOR_SERIAL,
             ir_for(II, C(0), C(8), IR_FOR_SERIAL,
                    ir_if(ir_lt(idx, C(100)), ir_if(ir_lt(II, C(8)), st, NULL), NULL)));
  const ir_stmt *r = lower_simplify(s);
  ck_assert_str_eq(ir_stmt_str(r), "for (i.outer, 0, 13) {\n"
                                   "  for (i.inner, 0, 8) {\n"
                                   "    if ((((i.outer*8) + i.inner) < 100)) {\n"
                                   "      B[((i.outer*8) + i.inner)] = 1f\n"
                                   "    }\n"
                                   "  }\n"
                                   "}\n");
  /* nothing to do: the same pointer */
  ck_assert_ptr_eq(lower_simplify(r), r);
  /* provably false with an else: the else branch */
  const ir_stmt *other = ir_store(buf, C(0), ir_float(ctx, 3), NULL);
  s = ir_for(II, C(0), C(8), IR_FOR_SERIAL, ir_if(ir_ge(II, C(8)), st, other));
  r = lower_simplify(s);
  ck_assert_str_eq(ir_stmt_str(r), "for (i.inner, 0, 8) {\n  B[0] = 3f\n}\n");
  /* symbolic extent: i < n inside for (i, 0, n) */
  s = ir_for(I, C(0), N, IR_FOR_SERIAL,
             ir_if(ir_lt(I, N), ir_store(buf, I, ir_float(ctx, 1), NULL), NULL));
  r = lower_simplify(s);
  ck_assert_str_eq(ir_stmt_str(r), "for (i, 0, n) {\n  B[i] = 1f\n}\n");
  /* inside a branch its condition holds: the inner guards go */
  s = ir_for(I, C(0), N, IR_FOR_SERIAL,
             ir_if(ir_lt(I, C(10)),
                   ir_if(ir_lt(I, C(20)), ir_store(buf, I, ir_float(ctx, 1), NULL), NULL),
                   ir_if(ir_ge(I, C(10)), ir_store(buf, I, ir_float(ctx, 2), NULL), NULL)));
  ck_assert_str_eq(ir_stmt_str(lower_simplify(s)), "for (i, 0, n) {\n"
                                                   "  if ((i < 10)) {\n"
                                                   "    B[i] = 1f\n"
                                                   "  } else {\n"
                                                   "    B[i] = 2f\n"
                                                   "  }\n"
                                                   "}\n");
  /* symbolic: j < n - 4 implies j + 4 < n; the knowledge ends with the branch */
  const ir_stmt *after = ir_if(ir_lt(ir_add(J, C(4)), N), st, NULL);
  s = ir_seq2(ir_if(ir_lt(J, ir_sub(N, C(4))), ir_if(ir_lt(ir_add(J, C(4)), N), st, NULL), NULL),
              after);
  ck_assert_str_eq(ir_stmt_str(lower_simplify(s)),
                   "if ((j < (n - 4))) {\n"
                   "  B[((i.outer*8) + i.inner)] = 1f\n"
                   "}\n"
                   "if (((j + 4) < n)) {\n"
                   "  B[((i.outer*8) + i.inner)] = 1f\n"
                   "}\n");
  /* the loop range does not leak out of the loop */
  s = ir_seq2(ir_for(J, C(0), C(4), IR_FOR_SERIAL, ir_store(buf, J, ir_float(ctx, 1), NULL)),
              ir_if(ir_lt(J, C(4)), ir_store(buf, J, ir_float(ctx, 2), NULL), NULL));
  ck_assert_ptr_eq(lower_simplify(s), s);
  /* a store with a predicate: true is dropped, false removes the store */
  s = ir_for(II, C(0), C(8), IR_FOR_SERIAL,
             ir_store(buf, II, ir_float(ctx, 1), ir_lt(II, C(8))));
  ck_assert_str_eq(ir_stmt_str(lower_simplify(s)), "for (i.inner, 0, 8) {\n  B[i.inner] = 1f\n}\n");
  s = ir_for(II, C(0), C(8), IR_FOR_SERIAL,
             ir_store(buf, II, ir_float(ctx, 1), ir_gt(II, C(8))));
  ck_assert_ptr_null(lower_simplify(s));
}
END_TEST

START_TEST(test_pass_let_and_allocate) {
  const ir_expr *buf = ir_var(ctx, "B", TEC_HANDLET, IR_VAR_BUFFER);
  const ir_expr *tmp = ir_var(ctx, "T", TEC_HANDLET, IR_VAR_BUFFER);
  const ir_expr *t = ir_var(ctx, "t", TEC_INDEX, IR_VAR_LET);
  /* let t = j*2 in (if t < 16 then B[t] = ...) inside for j in [0, 8) */
  const ir_stmt *s = ir_for(
      J, C(0), C(8), IR_FOR_SERIAL,
      ir_allocate(tmp, TEC_F32, ir_add(C(4), C(4)),
                  ir_let_stmt(t, ir_mul(J, C(2)),
                              ir_if(ir_lt(t, C(16)), ir_store(buf, t, ir_float(ctx, 1), NULL),
                                    NULL))));
  const ir_stmt *r = lower_simplify(s);
  tu_assert_contains(ir_stmt_str(r), "B[t] = 1f");
  ck_assert_ptr_null(strstr(ir_stmt_str(r), "if"));
  ck_assert_ptr_null(strstr(ir_stmt_str(r), "(4 + 4)"));
  /* an allocation whose body vanishes vanishes too */
  s = ir_allocate(tmp, TEC_F32, C(8),
                  ir_for(I, C(0), C(0), IR_FOR_SERIAL, ir_store(tmp, I, ir_float(ctx, 1), NULL)));
  ck_assert_ptr_null(lower_simplify(s));
  ck_assert_ptr_null(lower_simplify(NULL));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("simplify");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_evaluator);
  tcase_add_test(tc, test_fold_constants);
  tcase_add_test(tc, test_no_float_reassociation);
  tcase_add_test(tc, test_linear_forms);
  tcase_add_test(tc, test_division);
  tcase_add_test(tc, test_compare_minmax);
  tcase_add_test(tc, test_bound_and_prove);
  tcase_add_test(tc, test_same_pointer_and_odd_input);
  tcase_add_loop_test(tc, test_random_bounded, 0, 4);
  tcase_add_loop_test(tc, test_random_unbounded, 0, 2);
  tcase_add_test(tc, test_pass_for_extent_one);
  tcase_add_test(tc, test_pass_guards);
  tcase_add_test(tc, test_pass_let_and_allocate);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }

/* test_interval.c — the one interval analysis (arith/arith_interval.c): constant ranges
 * (arith_bound), symbolic intervals over relaxed variables (arith_interval) and the divisor
 * rule (arith_divisor_positive), with hand-computed bounds and a random soundness check
 * against an independent evaluator. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "arith/arith.h"
#include "ir_eval.h"

static tec_ctx *ctx;
static const ir_expr *I, *J, *K, *U, *N, *M;

static void setup(void) {
  ctx = tec_ctx_new();
  I = ir_var(ctx, "i", TEC_INDEX, IR_VAR_INDEX);
  J = ir_var(ctx, "j", TEC_INDEX, IR_VAR_INDEX);
  K = ir_var(ctx, "k", TEC_INDEX, IR_VAR_INDEX);
  U = ir_var(ctx, "u", TEC_INDEX, IR_VAR_INDEX);
  N = ir_var(ctx, "n", TEC_INDEX, IR_VAR_SIZE);
  M = ir_var(ctx, "m", TEC_INDEX, IR_VAR_SIZE);
}
static void teardown(void) { tec_ctx_free(ctx); }

static const ir_expr *C(int64_t v) { return ir_int(ctx, v); }

/* i in [0, 12], j in [0, 7]; k, u, n, m unbound. */
static arith_env *std_env(void) {
  arith_env *env = arith_env_new(ctx);
  arith_env_push(env, I, arith_range_of(0, 12));
  arith_env_push(env, J, arith_range_of(0, 7));
  return env;
}

/* One or two relaxed variables (lo/hi may be NULL: unbounded). */
static arith_relax relax(int n, const ir_expr *v0, const ir_expr *lo0, const ir_expr *hi0,
                         const ir_expr *v1, const ir_expr *lo1, const ir_expr *hi1) {
  const ir_expr **a = tec_ctx_alloc(ctx, sizeof *a * 6);
  ck_assert_ptr_nonnull(a);
  a[0] = v0, a[1] = v1, a[2] = lo0, a[3] = lo1, a[4] = hi0, a[5] = hi1;
  return (arith_relax){n, a, a + 2, a + 4};
}

static const char *str(const ir_expr *e, const arith_env *env) {
  return e ? ir_expr_str(arith_simplify(e, env)) : "(unbounded)";
}

/* arith_interval(e) returns ok, and its sides print (simplified under env) as want_lo and
 * want_hi ("(unbounded)" for an unknown side). */
#define IVL_IS(e, rx, env, ok, want_lo, want_hi)                                             \
  do {                                                                                       \
    const ir_expr *e_ = (e), *lo_, *hi_;                                                     \
    ck_assert_ptr_nonnull(e_);                                                               \
    int ok_ = arith_interval(e_, (rx), (env), &lo_, &hi_);                                   \
    const char *l_ = str(lo_, env), *h_ = str(hi_, env);                                     \
    ck_assert_msg(ok_ == (ok) && strcmp(l_, (want_lo)) == 0 && strcmp(h_, (want_hi)) == 0,   \
                  "interval of %s\n  got  %d [%s, %s]\n  want %d [%s, %s]", ir_expr_str(e_), \
                  ok_, l_, h_, (ok), (want_lo), (want_hi));                                  \
  } while (0)

#define RANGE_IS(r, wlo, whi)                                                                  \
  do {                                                                                       \
    arith_range r_ = (r);                                                                    \
    ck_assert_msg(r_.has_lo && r_.has_hi && r_.lo == (wlo) && r_.hi == (whi),                  \
                  "range [%lld%s, %lld%s], want [%lld, %lld]", (long long)r_.lo,             \
                  r_.has_lo ? "" : "?", (long long)r_.hi, r_.has_hi ? "" : "?",              \
                  (long long)(wlo), (long long)(whi));                                         \
  } while (0)

START_TEST(test_constant_ranges) {
  arith_env *env = std_env();
  RANGE_IS(arith_bound(ir_add(ir_mul(I, C(8)), J), env), 0, 103);
  RANGE_IS(arith_bound(ir_floormod(ir_add(J, C(16)), C(32)), env), 16, 23); /* one period */
  RANGE_IS(arith_bound(ir_floormod(ir_add(J, C(6)), C(8)), env), 0, 7);     /* two */
  RANGE_IS(arith_bound(ir_floordiv(ir_sub(J, C(9)), C(4)), env), -3, -1);
  RANGE_IS(arith_bound(ir_sub(ir_add(ir_mul(U, C(4)), J), ir_mul(U, C(4))), env), 0, 7);
  RANGE_IS(arith_bound(ir_min(I, ir_add(J, C(2))), env), 0, 9);
  RANGE_IS(arith_bound(ir_select(ir_lt(I, J), I, ir_add(J, C(20))), env), 0, 27);
  RANGE_IS(arith_bound(ir_mul(I, J), env), 0, 84);
  /* a size is >= 0 but may be 0: no constant bound on a division by it */
  arith_range r = arith_bound(ir_floordiv(J, N), env);
  ck_assert(!r.has_lo && !r.has_hi);
  r = arith_bound(ir_add(U, C(1)), env);
  ck_assert(!r.has_lo && !r.has_hi);
  /* the same constants through the symbolic analysis: i and j relaxed over constant ranges */
  arith_relax both = relax(2, I, C(0), C(12), J, C(0), C(7));
  IVL_IS(ir_add(ir_mul(I, C(8)), J), &both, env, 1, "0", "103");
  IVL_IS(ir_mul(I, J), &both, env, 1, "0", "84");
  IVL_IS(ir_floormod(ir_add(J, C(16)), C(32)), &both, env, 1, "16", "23");
}
END_TEST

START_TEST(test_divisor_rule) {
  arith_env *env = std_env();
  ck_assert_int_eq(arith_divisor_positive(C(3), NULL), 1);
  ck_assert_int_eq(arith_divisor_positive(C(0), NULL), 0);
  ck_assert_int_eq(arith_divisor_positive(C(-2), NULL), 0);
  ck_assert_int_eq(arith_divisor_positive(N, NULL), 1);                   /* the size rule */
  ck_assert_int_eq(arith_divisor_positive(ir_mul(N, M), NULL), 1);
  ck_assert_int_eq(arith_divisor_positive(ir_add(N, M), NULL), 1);
  ck_assert_int_eq(arith_divisor_positive(ir_max(N, U), NULL), 1);
  ck_assert_int_eq(arith_divisor_positive(ir_sub(N, C(1)), NULL), 0);     /* may be 0 */
  ck_assert_int_eq(arith_divisor_positive(ir_sub(ir_mul(N, C(2)), C(1)), NULL), 0); /* -1 */
  ck_assert_int_eq(arith_divisor_positive(U, NULL), 0);
  ck_assert_int_eq(arith_divisor_positive(J, env), 0);                    /* j may be 0 */
  ck_assert_int_eq(arith_divisor_positive(ir_add(J, C(1)), env), 1);      /* proved > 0 */
  ck_assert_int_eq(arith_divisor_positive(ir_add(J, C(1)), NULL), 0);     /* not without */
}
END_TEST

START_TEST(test_symbolic) {
  /* j relaxed over [0, 7], i fixed: i*8 + j - 1 in [i*8 - 1, i*8 + 6] */
  arith_relax rj = relax(1, J, C(0), C(7), NULL, NULL, NULL);
  IVL_IS(ir_sub(ir_add(ir_mul(I, C(8)), J), C(1)), &rj, NULL, 1, "((i*8) - 1)", "((i*8) + 6)");
  /* cancellation in the linear form: (i*4 + j) - i*4 with i relaxed bounds like j itself */
  arith_relax ri = relax(1, I, C(0), ir_sub(N, C(1)), NULL, NULL, NULL);
  IVL_IS(ir_sub(ir_add(ir_mul(I, C(4)), J), ir_mul(I, C(4))), &ri, NULL, 1, "j", "j");
  /* a relaxed variable with a symbolic extent: i in [m, m + n - 1] */
  arith_relax rs = relax(1, I, M, ir_sub(ir_add(M, N), C(1)), NULL, NULL, NULL);
  IVL_IS(ir_add(ir_mul(I, C(2)), C(1)), &rs, NULL, 1, "((m*2) + 1)",
         "(((m*2) + (n*2)) - 1)");
  IVL_IS(ir_sub(U, I), &rs, NULL, 1, "(((u - m) - n) + 1)", "(u - m)");
  /* a product by a size (>= 0): i*n for i in [0, 7] is in [0, n*7] */
  IVL_IS(ir_mul(J, N), &rj, NULL, 1, "0", "(n*7)");
  /* min, max, select of symbolic sides */
  IVL_IS(ir_min(J, U), &rj, NULL, 1, "min(0, u)", "min(7, u)");
  IVL_IS(ir_select(ir_lt(U, C(0)), ir_add(J, U), ir_sub(C(0), J)), &rj, NULL, 1, "min(u, -7)",
         "max((u + 7), 0)");
}
END_TEST

START_TEST(test_division_by_size) {
  /* j relaxed over [0, n - 1], i fixed: floordiv(i*n + j, n) is the row i; the columns
   * [i*n % n, (i*n + n - 1) % n] in one period, i.e. [0, n - 1] */
  arith_relax rj = relax(1, J, C(0), ir_sub(N, C(1)), NULL, NULL, NULL);
  const ir_expr *x = ir_add(ir_mul(I, N), J);
  const ir_expr *lo, *hi;
  ck_assert_int_eq(arith_interval(ir_floordiv(x, N), &rj, NULL, &lo, &hi), 1);
  ck_assert_str_eq(ir_expr_str(lo), "floordiv((i*n), n)");
  ck_assert_str_eq(ir_expr_str(hi), "floordiv(((i*n) + (n - 1)), n)");
  ck_assert_int_eq(arith_interval(ir_floormod(x, N), &rj, NULL, &lo, &hi), 1);
  ck_assert_str_eq(ir_expr_str(lo), "select((floordiv((i*n), n) == floordiv(((i*n) + "
                                    "(n - 1)), n)), floormod((i*n), n), 0)");
  ck_assert_str_eq(ir_expr_str(hi), "select((floordiv((i*n), n) == floordiv(((i*n) + "
                                    "(n - 1)), n)), floormod(((i*n) + (n - 1)), n), (n - 1))");
  /* j in [0, 7] over a size: floordiv is monotone, [0 / n, 7 / n] */
  arith_relax r7 = relax(1, J, C(0), C(7), NULL, NULL, NULL);
  ck_assert_int_eq(arith_interval(ir_floordiv(J, N), &r7, NULL, &lo, &hi), 1);
  ck_assert_str_eq(ir_expr_str(lo), "floordiv(0, n)");
  ck_assert_str_eq(ir_expr_str(hi), "floordiv(7, n)");
  /* n - 1 may be 0: no rule, and no constant bound either */
  ck_assert_int_eq(arith_interval(ir_floordiv(J, ir_sub(N, C(1))), &r7, NULL, &lo, &hi), 0);
  /* a divisor that varies with the relaxed variable: the constant rule (k + 1 in [1, 4]) */
  arith_relax rk = relax(1, K, C(0), C(3), NULL, NULL, NULL);
  IVL_IS(ir_floordiv(C(12), ir_add(K, C(1))), &rk, NULL, 1, "0", "12");
  /* a chunk of 8 of a fused loop with rows of 16: one row, eight columns (arith_chunk.c) */
  const ir_expr *f = ir_add(ir_mul(U, C(8)), K);
  arith_relax r8 = relax(1, K, C(0), C(7), NULL, NULL, NULL);
  IVL_IS(ir_floordiv(f, C(16)), &r8, NULL, 1, "floordiv((u*8), 16)", "floordiv((u*8), 16)");
  IVL_IS(ir_floormod(f, C(16)), &r8, NULL, 1, "floormod((u*8), 16)",
         "(floormod((u*8), 16) + 7)");
  /* truncating remainder: x >= 0 is floor's, else (-8, 8) */
  IVL_IS(ir_truncmod(ir_add(U, K), C(8)), &r8, NULL, 1, "-7", "7");
  arith_env *env = std_env();
  IVL_IS(ir_truncmod(ir_add(ir_mul(I, C(8)), K), C(8)), &r8, env, 1, "0", "7");
}
END_TEST

START_TEST(test_unbounded) {
  /* k relaxed over [0, +inf): a sum has no upper bound, a min has one */
  arith_relax rk = relax(1, K, C(0), NULL, NULL, NULL, NULL);
  IVL_IS(ir_add(K, C(3)), &rk, NULL, 0, "3", "(unbounded)");
  IVL_IS(ir_min(K, U), &rk, NULL, 1, "min(0, u)", "u");
  IVL_IS(ir_max(K, C(5)), &rk, NULL, 0, "5", "(unbounded)");
  IVL_IS(ir_sub(C(0), K), &rk, NULL, 0, "(unbounded)", "0");
  IVL_IS(ir_floormod(K, C(6)), &rk, NULL, 1, "0", "5");
  /* a product of two relaxed variables has no symbolic rule: the constants, if any */
  arith_relax two = relax(2, J, C(0), ir_sub(N, C(1)), K, C(0), C(3));
  IVL_IS(ir_mul(J, K), &two, NULL, 0, "0", "(unbounded)");
  /* a side that still uses a relaxed variable is no bound */
  arith_relax chain = relax(2, J, C(0), K, K, C(0), C(3));
  IVL_IS(ir_add(J, C(1)), &chain, NULL, 0, "1", "(k + 1)");
  /* not an index type */
  const ir_expr *lo, *hi;
  ck_assert_int_eq(arith_interval(ir_float(ctx, 1.0f), &rk, NULL, &lo, &hi), 0);
  ck_assert_ptr_null(lo);
}
END_TEST

/* ---- random soundness: the bounds hold at every point ---- */

static unsigned rng;
static int rnd(int n) {
  rng = rng * 1103515245u + 12345u;
  return (int)((rng >> 16) % (unsigned)n);
}

/* i, u fixed; j relaxed over [i, i + n - 1], k over [0, 5]; n a size. */
static const ir_expr *gen(int depth) {
  if (depth <= 0 || rnd(4) == 0) {
    const ir_expr *leaf[] = {I, U, N, J, K, J, K, C(rnd(9) - 2)};
    return leaf[rnd(8)];
  }
  const ir_expr *a = gen(depth - 1), *b = gen(depth - 1);
  switch (rnd(11)) {
  case 0: case 1: return ir_add(a, b);
  case 2: return ir_sub(a, b);
  case 3: return ir_mul(a, C(rnd(7) - 3));
  case 4: return ir_mul(a, b);
  case 5: return ir_floordiv(a, rnd(2) ? N : C(rnd(7) + 1));
  case 6: return ir_floormod(a, rnd(2) ? N : C(rnd(7) + 1));
  case 7: return ir_min(a, b);
  case 8: return ir_max(a, b);
  case 9: return ir_truncdiv(a, C(rnd(5) + 1));
  default: return ir_select(ir_lt(a, b), a, gen(depth - 1));
  }
}

START_TEST(test_random_sound) {
  rng = 20261202u + (unsigned)_i;
  arith_env *env = arith_env_new(ctx);
  arith_env_push(env, I, arith_range_of(0, 12));
  arith_relax rx = relax(2, J, I, ir_sub(ir_add(I, N), C(1)), K, C(0), C(5));
  int bounded = 0, sides = 0;
  for (int t = 0; t < 400; t++) {
    const ir_expr *e = gen(4), *lo, *hi;
    ck_assert_ptr_nonnull(e);
    bounded += arith_interval(e, &rx, env, &lo, &hi);
    if (!lo && !hi) continue;
    sides++;
    for (int s = 0; s < 12; s++) {
      tu_evalenv en = {.vars = {I, U, N, J, K},
                       .vals = {rnd(13), rnd(41) - 20, rnd(6) + 1},
                       .n = 5};
      for (int64_t j = en.vals[0]; j < en.vals[0] + en.vals[2]; j++)
        for (int64_t k = 0; k <= 5; k++) {
          en.vals[3] = j, en.vals[4] = k, en.bad = 0;
          int64_t v = tu_eval(e, &en);
          int64_t l = lo ? tu_eval(lo, &en) : v, h = hi ? tu_eval(hi, &en) : v;
          if (en.bad) continue;
          ck_assert_msg(l <= v && v <= h, "%s = %lld at i=%lld u=%lld n=%lld j=%lld k=%lld, "
                        "outside [%s, %s] = [%lld, %lld]", ir_expr_str(e), (long long)v,
                        (long long)en.vals[0], (long long)en.vals[1], (long long)en.vals[2],
                        (long long)j, (long long)k, lo ? ir_expr_str(lo) : "-",
                        hi ? ir_expr_str(hi) : "-", (long long)l, (long long)h);
        }
    }
  }
  /* the check means something: most expressions get a bound */
  ck_assert_msg(bounded > 100 && sides > bounded, "bounded %d, with a side %d", bounded, sides);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("interval");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_constant_ranges);
  tcase_add_test(tc, test_divisor_rule);
  tcase_add_test(tc, test_symbolic);
  tcase_add_test(tc, test_division_by_size);
  tcase_add_test(tc, test_unbounded);
  tcase_add_loop_test(tc, test_random_sound, 0, 3);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }

/* test_vmath.c — exp, tanh and log of float32 vectors, inline in generated code
 * (codegen_llvm/codegen_vmath.c), against libm's expf, tanhf and logf: a sweep of inputs spaced
 * evenly over the float bit patterns of the interesting range (every one with
 * TEC_VMATH_FULL=1: the figures docs/architecture.md states), the special values (inf, -inf,
 * NaN, -0, overflow, results and inputs that are denormal), 4, 8 and 16 lanes (NEON, AVX2,
 * AVX-512's vectors), a tail that is not a whole vector, every float16 input of a float16 exp
 * (through float32); scalar exp stays libm's, bit for bit;
 * the assembly of a vectorized exp, tanh or log calls no libm function. Under qemu a small
 * slice: exp's sweep at 4 lanes, the specials, the tail. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"

typedef enum { F_EXP, F_TANH, F_LOG } fn_kind;
static const char *const fn_names[] = {"exp", "tanh", "log"};

typedef struct one { te_tensor *a; fn_kind k; } one;

static const ir_expr *fn_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  one *o = u;
  (void)ctx;
  const ir_expr *x = TE_AT(o->a, i[0]);
  return o->k == F_EXP ? ir_exp(x) : o->k == F_LOG ? ir_log(x) : ir_tanh(x);
}

/* y[i] = f(x[i]) over n (size 0: a size variable) with i split by `lanes` and vectorized
 * (1: scalar); a tail that is not a whole vector is scalar (libm's) */
static lower_func *lower_fn(tec_ctx *ctx, fn_kind k, int lanes, int64_t size) {
  const ir_expr *n = size ? ir_int(ctx, size) : te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "x", TEC_F32, 1, &n);
  one *o = tec_ctx_alloc(ctx, sizeof *o);
  *o = (one){A, k};
  te_tensor *Y = te_compute(ctx, &(te_compute_decl){.name = "y", .ndim = 1, .shape = &n,
                                                     .body = fn_body, .user = o});
  sch_schedule *s = sch_create(ctx, 1, &Y);
  sch_stage *st = sch_stage_of(s, Y);
  sch_iter *out, *in;
  if (lanes > 1) {
    OK(ctx, sch_split(st, sch_axis(st, 0), lanes, &out, &in));
    OK(ctx, sch_vectorize(st, in));
  }
  lower_func *f = tec_lower(s, "f", 2, (te_tensor *[]){A, Y});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  return f;
}

static tec_packed_fn build_fn(tec_ctx *ctx, fn_kind k, int lanes, const char *target) {
  lower_func *f = lower_fn(ctx, k, lanes, 0);
  tec_module *m = tec_build(ctx, 1, &f, target);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  tec_packed_fn fn = tec_module_get(m, "f");
  ck_assert_msg(fn != NULL, "%s", tec_ctx_error(ctx));
  return fn;
}

/* distance in units in the last place: floats as ordered integers (NaN = NaN: 0) */
static int64_t ulps(float a, float b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? 0 : INT64_MAX;
  int32_t ia, ib;
  memcpy(&ia, &a, 4), memcpy(&ib, &b, 4);
  int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia, ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
  return oa > ob ? oa - ob : ob - oa;
}

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float ref(fn_kind k, float x) {
  return k == F_EXP ? expf(x) : k == F_LOG ? logf(x) : tanhf(x);
}

/* runs fn on x[0..n) and returns the largest ulp distance from libm (*worst: its input) */
static int64_t run_cmp(tec_packed_fn fn, fn_kind k, const float *x, int64_t n, float *worst) {
  DLTensor a = tu_zeros(TEC_F32, 1, &n), y = tu_zeros(TEC_F32, 1, &n);
  memcpy(tu_f32(&a), x, (size_t)n * sizeof(float));
  ck_assert_msg(fn((DLTensor *[]){&a, &y}, 2) == 0, "%s", tec_rt_last_error());
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t d = ulps(tu_f32(&y)[i], ref(k, x[i]));
    if (d > m) m = d, *worst = x[i];
  }
  tec_dl_free(&a), tec_dl_free(&y);
  return m;
}

/* the bit patterns of [0, hi] and of [-lo, -0] (lo, hi > 0) every `step`-th, in chunks of at
 * most 2^22; the largest ulp distance */
static int64_t sweep(tec_packed_fn fn, fn_kind k, float lo, float hi, uint32_t step) {
  const int64_t cap = (int64_t)1 << 22;
  float *x = malloc((size_t)cap * sizeof *x), worst = 0;
  ck_assert_ptr_nonnull(x);
  int64_t m = 0;
  for (int side = 0; side < 2; side++) {
    float end = side ? lo : hi;
    uint32_t last, sign = side ? 0x80000000u : 0;
    memcpy(&last, &end, 4);
    for (uint64_t u = 0; u <= last;) {
      int64_t n = 0;
      for (; n < cap && u <= last; u += step) x[n++] = from_bits((uint32_t)u | sign);
      int64_t d = run_cmp(fn, k, x, n, &worst);
      if (d > m) m = d;
    }
  }
  if (getenv("TEC_VMATH_FULL"))
    fprintf(stderr, "test_vmath: %s over [-%g, %g] every %u-th float: max %lld ulp (at %.9g)\n",
           fn_names[k], lo, hi, step, (long long)m, worst);
  free(x);
  return m;
}

/* the step through bit patterns: every float with TEC_VMATH_FULL=1, about 2^17 per sign on
 * the host, 2^12 under qemu */
static uint32_t step_of(void) {
  if (getenv("TEC_VMATH_FULL")) return 1;
  return tu_emulated() ? 262147u : 8191u;
}

/* within these of libm (measured over every float: docs/architecture.md "Vector math") */
#define EXP_ULPS 1
#define TANH_ULPS 2
#define LOG_ULPS 1

START_TEST(exp_sweep) {
  static const int lanes[] = {16, 8, 4};
  for (int l = 0; l < 3; l++) {
    if (tu_emulated() && lanes[l] != 4) continue; /* NEON's width */
    if (getenv("TEC_VMATH_FULL") && l > 0) continue; /* the same arithmetic in every lane */
    tec_ctx *ctx = tec_ctx_new();
    tec_packed_fn fn = build_fn(ctx, F_EXP, lanes[l], NULL);
    int64_t d = sweep(fn, F_EXP, 104.0f, 89.0f, step_of());
    ck_assert_msg(d <= EXP_ULPS, "exp, %d lanes: %lld ulp from expf", lanes[l], (long long)d);
    tec_ctx_free(ctx);
  }
}
END_TEST

START_TEST(tanh_sweep) {
  if (tu_emulated()) return; /* the same IR as on the host: the specials run there */
  tec_ctx *ctx = tec_ctx_new();
  tec_packed_fn fn = build_fn(ctx, F_TANH, 16, NULL);
  int64_t d = sweep(fn, F_TANH, 10.0f, 10.0f, step_of());
  ck_assert_msg(d <= TANH_ULPS, "tanh: %lld ulp from tanhf", (long long)d);
  tec_ctx_free(ctx);
}
END_TEST

/* log over every positive float (denormals to FLT_MAX) and the negatives down to -1 */
START_TEST(log_sweep) {
  if (tu_emulated()) return;
  tec_ctx *ctx = tec_ctx_new();
  tec_packed_fn fn = build_fn(ctx, F_LOG, 16, NULL);
  int64_t d = sweep(fn, F_LOG, 1.0f, FLT_MAX, step_of());
  ck_assert_msg(d <= LOG_ULPS, "log: %lld ulp from logf", (long long)d);
  tec_ctx_free(ctx);
}
END_TEST

/* AVX2's 8 lanes on an AVX2 target, and SSE2's 4 without FMA (unfused multiply-adds) on the
 * x86-64 baseline, held to the same bounds (x86 hosts: the JIT runs them here) */
START_TEST(exp_avx2) {
#if defined(__x86_64__)
  static const char *const cpus[] = {"llvm -mcpu=haswell", "llvm -mcpu=x86-64"};
  for (int c = 0; c < 2; c++) {
    if (getenv("TEC_VMATH_FULL") && c == 0) continue;
    tec_ctx *ctx = tec_ctx_new();
    uint32_t step = getenv("TEC_VMATH_FULL") ? 1 : step_of() * 4 + 1;
    for (int k = 0; k < 3; k++) {
      tec_packed_fn fn = build_fn(ctx, (fn_kind)k, c ? 4 : 8, cpus[c]);
      int64_t d = k == F_EXP   ? sweep(fn, F_EXP, 104.0f, 89.0f, step)
                  : k == F_LOG ? sweep(fn, F_LOG, 1.0f, FLT_MAX, step)
                               : sweep(fn, F_TANH, 10.0f, 10.0f, step);
      int64_t want = k == F_EXP ? EXP_ULPS : k == F_LOG ? LOG_ULPS : TANH_ULPS;
      ck_assert_msg(d <= want, "%s on %s: %lld ulp from libm", fn_names[k],
                    cpus[c], (long long)d);
    }
    tec_ctx_free(ctx);
  }
#endif
}
END_TEST

static const float specials[] = {
    0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 88.72283f, 88.72284f, 88.7229f, 89.0f, 100.0f, 1e30f,
    FLT_MAX, -87.33654f, -87.4f, -100.0f, -103.27893f, -103.97208f, -103.9721f, -104.0f,
    -150.0f, -1e30f, -FLT_MAX, 1e-40f, -1e-40f, FLT_MIN, 1e-7f, -1e-7f, 0.625f, -0.625f,
    0.62499994f, 9.0f, -9.0f, 20.0f, 0.3f, -2.5f, 15.942385f};

/* f of the specials, then inf, -inf and NaN (x[25]: the smallest denormal for log), at the
 * target's vector width, each within `bound` ulp of libm; the inputs and results (n of them)
 * into x and r (malloc'd) */
#define NSPEC ((int64_t)(sizeof specials / sizeof *specials) + 3)
static void run_specials(fn_kind k, int64_t bound, float **xs, float **rs) {
  tec_ctx *ctx = tec_ctx_new();
  tec_packed_fn fn = build_fn(ctx, k, tu_emulated() ? 4 : 16, NULL);
  int64_t n = NSPEC;
  DLTensor a = tu_zeros(TEC_F32, 1, &n), y = tu_zeros(TEC_F32, 1, &n);
  float *x = tu_f32(&a), *r = tu_f32(&y);
  memcpy(x, specials, sizeof specials);
  x[n - 3] = INFINITY, x[n - 2] = -INFINITY, x[n - 1] = NAN;
  if (k == F_LOG) x[25] = from_bits(1);
  ck_assert_msg(fn((DLTensor *[]){&a, &y}, 2) == 0, "%s", tec_rt_last_error());
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(ulps(r[i], ref(k, x[i])) <= bound, "%s(%.9g) = %.9g, libm: %.9g", fn_names[k],
                  x[i], r[i], ref(k, x[i]));
  *xs = malloc((size_t)n * sizeof(float)), *rs = malloc((size_t)n * sizeof(float));
  ck_assert(*xs && *rs);
  memcpy(*xs, x, (size_t)n * sizeof *x), memcpy(*rs, r, (size_t)n * sizeof *r);
  tec_dl_free(&a), tec_dl_free(&y);
  tec_ctx_free(ctx);
}

START_TEST(exp_specials) {
  float *x, *r;
  int64_t n = NSPEC;
  run_specials(F_EXP, EXP_ULPS, &x, &r);
  ck_assert(isinf(r[n - 3]) && r[n - 3] > 0); /* exp(inf) = inf */
  ck_assert(r[n - 2] == 0 && !signbit(r[n - 2])); /* exp(-inf) = +0 */
  ck_assert(isnan(r[n - 1]));
  ck_assert(isinf(r[7]) && isinf(r[11]) && r[5] < FLT_MAX); /* overflow past 88.7228 */
  ck_assert(r[13] > 0 && r[13] < FLT_MIN);                  /* exp(-87.4): denormal */
  ck_assert(r[15] == from_bits(1) || r[15] == 0);           /* near 2^-149 */
  ck_assert(r[18] == 0 && r[20] == 0 && r[21] == 0);        /* underflow to +0 */
  ck_assert(r[22] == 1.0f && r[23] == 1.0f);                /* denormal inputs */
  free(x), free(r);
}
END_TEST

START_TEST(log_specials) {
  float *x, *r;
  int64_t n = NSPEC;
  run_specials(F_LOG, LOG_ULPS, &x, &r);
  ck_assert(isinf(r[0]) && r[0] < 0 && isinf(r[1]) && r[1] < 0); /* log(+-0) = -inf */
  ck_assert(r[2] == 0);                                          /* log(1) = 0 exactly */
  ck_assert(isnan(r[3]) && isnan(r[23]) && isnan(r[n - 2]));     /* negatives: NaN */
  ck_assert(isinf(r[n - 3]) && r[n - 3] > 0 && isnan(r[n - 1]));
  ck_assert_float_eq_tol(r[25], -103.27893f, 1e-4f); /* log(2^-149) */
  free(x), free(r);
}
END_TEST

START_TEST(tanh_specials) {
  float *x, *r;
  int64_t n = NSPEC;
  run_specials(F_TANH, TANH_ULPS, &x, &r);
  ck_assert(r[n - 3] == 1.0f && r[n - 2] == -1.0f && isnan(r[n - 1]));
  ck_assert(r[1] == 0 && signbit(r[1]));  /* tanh(-0) = -0 */
  ck_assert(r[22] == x[22] && r[23] == x[23]); /* denormals: tanh(x) = x */
  free(x), free(r);
}
END_TEST

/* float16 vectors go through float32: every float16 input, within 1 float16 ulp of expf
 * rounded to float16, on a host with half arithmetic (this Xeon's avx512fp16; elsewhere the
 * program is refused before codegen, lower/half_arith.c) */
#if defined(__x86_64__) && defined(__FLT16_MAX__)
static const ir_expr *exp16_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  return ir_exp(TE_AT((te_tensor *)u, i[0]));
}
#endif
START_TEST(exp_f16) {
#if defined(__x86_64__) && defined(__FLT16_MAX__)
  tec_ctx *ctx = tec_ctx_new();
  if (!tec_target_has(tec_target_parse(ctx, NULL), TEC_FEATURE_AVX512FP16)) {
    tec_ctx_free(ctx);
    return;
  }
  int64_t n = 65536;
  te_tensor *A = te_placeholder(ctx, "x", TEC_F16, 1, TE_SHAPE(ctx, n));
  te_tensor *Y = te_compute(ctx, &(te_compute_decl){.name = "y", .ndim = 1,
                                                     .shape = TE_SHAPE(ctx, n),
                                                     .body = exp16_body, .user = A});
  sch_schedule *s = sch_create(ctx, 1, &Y);
  sch_stage *st = sch_stage_of(s, Y);
  sch_iter *out, *in;
  OK(ctx, sch_split(st, sch_axis(st, 0), 16, &out, &in));
  OK(ctx, sch_vectorize(st, in));
  tec_packed_fn fn = tu_build(ctx, s, "f16", 2, (te_tensor *[]){A, Y});
  DLTensor a = tu_zeros(TEC_F16, 1, &n), y = tu_zeros(TEC_F16, 1, &n);
  _Float16 *x = a.data, *r = y.data;
  for (int64_t i = 0; i < n; i++) memcpy(&x[i], &(uint16_t){(uint16_t)i}, 2);
  ck_assert_msg(fn((DLTensor *[]){&a, &y}, 2) == 0, "%s", tec_rt_last_error());
  for (int64_t i = 0; i < n; i++) {
    _Float16 want = (_Float16)expf((float)x[i]);
    int16_t gb, wb;
    memcpy(&gb, &r[i], 2), memcpy(&wb, &want, 2);
    int og = gb < 0 ? INT16_MIN - gb : gb, ow = wb < 0 ? INT16_MIN - wb : wb;
    int bad = isnan((float)want) ? !isnan((float)r[i]) : abs(og - ow) > 1;
    ck_assert_msg(!bad, "float16 exp(%g) = %g, expf rounded: %g", (double)x[i], (double)r[i],
                  (double)want);
  }
  tec_dl_free(&a), tec_dl_free(&y);
  tec_ctx_free(ctx);
#endif
}
END_TEST

/* a scalar exp is libm's expf (bit for bit); a vectorized one within EXP_ULPS, and with a
 * tail (n not a multiple of the lanes) every element is computed */
START_TEST(scalar_and_tail) {
  tec_ctx *ctx = tec_ctx_new();
  tec_packed_fn sc = build_fn(ctx, F_EXP, 1, NULL), ve = build_fn(ctx, F_EXP, 16, NULL);
  int64_t n = 37;
  DLTensor a = tu_rand_f32(1, &n, 5), y = tu_zeros(TEC_F32, 1, &n), z = tu_zeros(TEC_F32, 1, &n);
  for (int64_t i = 0; i < n; i++) tu_f32(&a)[i] *= 80.0f;
  ck_assert_msg(sc((DLTensor *[]){&a, &y}, 2) == 0, "%s", tec_rt_last_error());
  ck_assert_msg(ve((DLTensor *[]){&a, &z}, 2) == 0, "%s", tec_rt_last_error());
  for (int64_t i = 0; i < n; i++) {
    float x = tu_f32(&a)[i];
    ck_assert_msg(memcmp(&tu_f32(&y)[i], &(float){expf(x)}, 4) == 0, "scalar exp(%g)", x);
    ck_assert_msg(ulps(tu_f32(&z)[i], expf(x)) <= EXP_ULPS, "vector exp(%g), element %lld", x,
                  (long long)i);
  }
  tec_dl_free(&a), tec_dl_free(&y), tec_dl_free(&z);
  tec_ctx_free(ctx);
}
END_TEST

/* the assembly: no libm call in a vectorized exp, tanh or log (x86 AVX-512 and AVX2, AArch64
 * and ARMv7 NEON); the scalar loop calls expf */
START_TEST(asm_no_calls) {
  if (tu_emulated()) return; /* the same LLVM emits the same text: read on the host */
  static const char *const targets[] = {
      "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v4",
      "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell",
      "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon",
      "llvm -mtriple=armv7a-linux-gnueabihf -mcpu=cortex-a9 -mattr=+neon,+vfp4"};
  for (int t = 0; t < 4; t++)
    for (int k = 0; k < 3; k++) {
      tec_ctx *ctx = tec_ctx_new();
      char *s = tu_emit_text(ctx, lower_fn(ctx, (fn_kind)k, t >= 2 ? 4 : 16, 256), targets[t],
                             TEC_EMIT_ASM);
      assert_not_contains(s, "expf");
      assert_not_contains(s, "tanhf");
      assert_not_contains(s, "logf");
      free(s);
      s = tu_emit_text(ctx, lower_fn(ctx, F_EXP, 1, 256), targets[t], TEC_EMIT_ASM);
      tu_assert_contains(s, "expf");
      free(s);
      tec_ctx_free(ctx);
    }
}
END_TEST

int main(void) {
  Suite *s = suite_create("vmath");
  TCase *tc = tcase_create("vmath");
  tcase_set_timeout(tc, getenv("TEC_VMATH_FULL") ? 3600 : 120);
  tcase_add_test(tc, exp_sweep);
  tcase_add_test(tc, tanh_sweep);
  tcase_add_test(tc, log_sweep);
  tcase_add_test(tc, exp_avx2);
  tcase_add_test(tc, exp_specials);
  tcase_add_test(tc, tanh_specials);
  tcase_add_test(tc, log_specials);
  tcase_add_test(tc, scalar_and_tail);
  tcase_add_test(tc, exp_f16);
  tcase_add_test(tc, asm_no_calls);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

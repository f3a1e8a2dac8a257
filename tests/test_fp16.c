/* test_fp16.c — float16 compute in conv2d_nchwc, depthwise_nchwc and dense (topi_fp,
 * docs/fp16.md):
 *   - the instructions, read from the assembly emitted for AArch64 on the host (as Halide's
 *     simd_op_check): TOPI_FP16 fmla v.8h with +fullfp16, TOPI_FP16_ACC32 fmlal + fmlal2 with
 *     +fp16fml and fcvtl + fmla v.4s without it; x86 avx512fp16 vfmadd*ph;
 *   - the numbers against a double reference of the same float16 inputs, within the bounds
 *     docs/fp16.md states, on the host (float16 accumulation only where the host has half
 *     arithmetic; this Xeon has avx512fp16); under qemu-aarch64 the K = 1024 dense only, for
 *     an explicit +fullfp16,+fp16fml target (fmla v.8h by element, fmlal, executed);
 *   - the K = 1024 dot product of docs/fp16.md, both accumulations, its measured error bounded;
 *   - refusals: float16 accumulation on a target without half arithmetic (rasp4b, x86-64-v4),
 *     a hand-written float16 program built for one, a float32-only template given float16,
 *     and an fp value out of range.
 * Inputs are float16 values (rounded here by an independent converter), so the reference
 * sees exactly what the kernel reads. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tec/tec.h"
#include "support/asmloops.h"
#include "support/convref.h"
#include "support/testutil.h"

#define A64 "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon"
#define A64FP A64 ",+fullfp16,+fp16fml"
#define X86 "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v4"

/* ---- float16 <-> float (IEEE binary16, round to nearest even), independent of tec ---- */
static uint16_t to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
  if (e == 0xff) return (uint16_t)(sign | 0x7c00u | (m ? 0x200u : 0));
  int32_t he = (int32_t)e - 127 + 15;
  if (he >= 31) return (uint16_t)(sign | 0x7c00u);
  if (he <= 0) { /* subnormal */
    if (he < -10) return (uint16_t)sign;
    m |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - he), hm = m >> shift, rem = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (hm & 1))) hm++;
    return (uint16_t)(sign | hm);
  }
  uint32_t hm = m >> 13, rem = m & 0x1fffu;
  uint32_t r = sign | ((uint32_t)he << 10) | hm;
  if (rem > 0x1000u || (rem == 0x1000u && (hm & 1))) r++; /* may carry into the exponent */
  return (uint16_t)r;
}
static float from_half(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  float v;
  if (e == 0) v = ldexpf((float)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexpf((float)(m | 0x400u), (int)e - 25);
  return sign ? -v : v;
}

START_TEST(half_converter) { /* the converter the references rely on */
  ck_assert_uint_eq(to_half(1.0f), 0x3c00);
  ck_assert_uint_eq(to_half(-2.0f), 0xc000);
  ck_assert_uint_eq(to_half(65504.0f), 0x7bff);
  ck_assert_uint_eq(to_half(1.0f + 1.0f / 2048), 0x3c00);     /* a tie: to even */
  ck_assert_uint_eq(to_half(1.0f + 3.0f / 2048), 0x3c02);     /* a tie: to even (up) */
  ck_assert_uint_eq(to_half(ldexpf(1.0f, -24)), 0x0001);      /* the smallest subnormal */
  ck_assert_float_eq(from_half(0x3555), 0.333251953125f);
  uint32_t bad = 0x10000; /* the first finite half that does not come back, if any */
  for (uint32_t h = 0; h < 0x7c00 && bad == 0x10000; h++)
    if (to_half(from_half((uint16_t)h)) != h) bad = h;
  ck_assert_uint_eq(bad, 0x10000);
}
END_TEST

/* n floats in [lo, lo + 1) from seed, rounded to float16 values */
static float *rand_half_values(int64_t n, unsigned seed, float lo) {
  float *v = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = from_half(to_half(lo + (float)((seed >> 8) & 0xffff) / 65536.0f));
  }
  return v;
}

/* a float16 tensor of shape holding the float16 values v (already float16 values) */
static DLTensor half_tensor(int ndim, const int64_t *shape, const float *v) {
  DLTensor t = tu_zeros(TEC_F16, ndim, shape);
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  uint16_t *h = t.data;
  for (int64_t i = 0; i < n; i++) h[i] = to_half(v[i]);
  return t;
}

/* ---- building a template for a target ---- */
static lower_func *lower_tmpl(tec_ctx *ctx, const char *name, const void *p, const char *target) {
  const topi_template *t = topi_template_find(name);
  const tec_target *tg = target ? tec_target_parse(ctx, target) : NULL;
  ck_assert_msg(!target || tg, "%s", tec_ctx_error(ctx));
  topi_decl d;
  tune_space sp;
  topi_op op;
  if (t->declare(ctx, p, &d) || t->space(ctx, p, tg, &sp)) return NULL;
  if (topi_schedule_as(&d, NULL, sp.default_config, tg, &op)) return NULL;
  return tec_lower(op.sched, "op", op.nargs, op.args);
}

static char *asm_of(tec_ctx *ctx, const char *name, const void *p, const char *target) {
  lower_func *f = lower_tmpl(ctx, name, p, target);
  ck_assert_msg(f != NULL, "%s: %s", name, tec_ctx_error(ctx));
  return tu_emit_text(ctx, f, target, TEC_EMIT_ASM);
}

static topi_conv2d conv_p(int64_t c, int64_t hw, int64_t oc, int64_t k, int64_t block, topi_fp fp) {
  topi_layout l = {TOPI_NCHWC, block, 0};
  return (topi_conv2d){.n = 1, .c_in = c, .h = hw, .w = hw, .c_out = oc, .kh = k, .kw = k,
                       .stride_h = 1, .stride_w = 1, .pad_h = k / 2, .pad_w = k / 2,
                       .groups = 1, .in_layout = l, .out_layout = l,
                       .epi = {1, 0, TOPI_ACT_RELU}, .fp = fp};
}
static topi_conv2d dw_p(int64_t c, int64_t hw, int64_t block, topi_fp fp) {
  topi_conv2d p = conv_p(c, hw, c, 3, block, fp);
  p.groups = c;
  return p;
}
static topi_dense dense_p(int64_t m, int64_t n, int64_t k, topi_fp fp) {
  return (topi_dense){.m = m, .n = n, .k = k, .b_transposed = 1, .const_b = 1,
                      .epi = {1, 0, TOPI_ACT_NONE}, .fp = fp};
}

/* Asserts that the assembly of template `name` on p for target has each of want (NULL-ended)
 * and not `not` (NULL: no such check). */
static void expect_asm(const char *name, const void *p, const char *target,
                       const char *const *want, const char *not) {
  tec_ctx *ctx = tec_ctx_new();
  char *s = asm_of(ctx, name, p, target);
  for (; *want; want++) tu_assert_contains(s, *want);
  if (not) assert_not_contains(s, not);
  /* a float16 lane operand (fmla/fmlal by element) is one of v0-v15: its register number has
   * 4 bits (LLVM 14 emits fmlal by element with v16-v31 and encodes another register,
   * codegen_half.c) */
  ck_assert_int_eq(tu_count_re(s, "(fmla|fmlal|fmlal2)\tv[0-9]+\\.[48][hs], v[0-9]+\\.[48]h, "
                                  "v(1[6-9]|2[0-9]|3[01])\\.h\\["), 0);
  free(s);
  tec_ctx_free(ctx);
}

static const char *const fmla8h[] = {"fmla\tv", ".8h", NULL};
static const char *const fmlal[] = {"fmlal\tv", "fmlal2\tv", NULL};
static const char *const widen[] = {"fcvtl", "fmla\tv", NULL};

START_TEST(asm_aarch64) {
  if (tu_emulated()) return; /* the same LLVM emits the same text: read on the host */
  topi_conv2d c16 = conv_p(16, 6, 16, 3, 8, TOPI_FP16), c32 = conv_p(16, 6, 16, 3, 8, TOPI_FP16_ACC32);
  topi_conv2d pw16 = conv_p(16, 6, 16, 1, 8, TOPI_FP16), pw32 = conv_p(16, 6, 16, 1, 8, TOPI_FP16_ACC32);
  topi_conv2d d16 = dw_p(16, 6, 8, TOPI_FP16), d32 = dw_p(16, 6, 8, TOPI_FP16_ACC32);
  topi_dense g16 = dense_p(8, 32, 64, TOPI_FP16), g32 = dense_p(8, 32, 64, TOPI_FP16_ACC32);
  expect_asm("conv2d_nchwc", &c16, A64FP, fmla8h, "fcvtl");
  expect_asm("conv2d_nchwc", &pw16, A64FP, fmla8h, "fcvtl");
  expect_asm("depthwise_nchwc", &d16, A64FP, fmla8h, "fcvtl");
  expect_asm("dense", &g16, A64FP, fmla8h, "fcvtl");
  expect_asm("conv2d_nchwc", &c32, A64FP, fmlal, NULL);
  expect_asm("conv2d_nchwc", &pw32, A64FP, fmlal, NULL);
  expect_asm("depthwise_nchwc", &d32, A64FP, fmlal, NULL);
  expect_asm("dense", &g32, A64FP, fmlal, NULL);
  /* float32 accumulation without fp16fml: widened, then float32 multiply-adds */
  expect_asm("conv2d_nchwc", &c32, A64 ",+fullfp16", widen, "fmlal");
  expect_asm("dense", &g32, A64, widen, "fmlal");
}
END_TEST

START_TEST(asm_x86) {
  if (tu_emulated()) return;
  topi_conv2d c16 = conv_p(32, 6, 32, 3, 16, TOPI_FP16);
  topi_dense g16 = dense_p(8, 64, 64, TOPI_FP16), g32 = dense_p(8, 64, 64, TOPI_FP16_ACC32);
  static const char *const ph[] = {"ph\t", NULL}, *const ps[] = {"vcvtph2ps", NULL};
  expect_asm("conv2d_nchwc", &c16, X86 " -mattr=+avx512fp16,+avx512bw,+avx512vl", ph, NULL);
  expect_asm("dense", &g16, X86 " -mattr=+avx512fp16,+avx512bw,+avx512vl", ph, NULL);
  expect_asm("dense", &g32, X86, ps, NULL);
}
END_TEST

/* ---- numbers ---- */

/* Where the numbers run: the host, or under qemu an explicit AArch64 target with the
 * features (qemu's default CPU has them; the host value's features are LLVM's "generic"). */
static const char *run_target(void) { return tu_emulated() ? A64FP : NULL; }
static int can_acc16(tec_ctx *ctx) {
  const tec_target *t = tec_target_parse(ctx, run_target());
  return tec_target_has(t, TEC_FEATURE_FULLFP16) || tec_target_has(t, TEC_FEATURE_AVX512FP16);
}

/* The bound docs/fp16.md states for an output whose exact value is ref and whose products'
 * magnitudes sum to mag over k terms: float32 accumulation, the output's one rounding to
 * float16 (u16 |ref|) plus float32's sum (k u32 mag); float16 accumulation, the worst case of
 * a k-term float16 sum, gamma_k = k u16 / (1 - k u16), times mag, plus the output rounding. */
static double bound(topi_fp fp, double ref, double mag, int64_t k) {
  const double u16 = ldexp(1, -11), u32 = ldexp(1, -24);
  if (fp == TOPI_FP16_ACC32) return u16 * fabs(ref) + (double)k * u32 * mag + 1e-7;
  double g = (double)(k + 2) * u16 / (1 - (double)(k + 2) * u16); /* + bias, + rounding */
  return g * (mag + fabs(ref)) + u16 * fabs(ref) + 1e-7;
}

/* Runs dense p for the run target (built once; more than one set needs p->const_b 0: a
 * constant b is packed by the first call only) on float16 values from each of nsets seeds
 * (values in [lo[i], lo[i] + 1)) and checks every output against the double reference;
 * worst[i] gets the largest |got - ref| / sum_k |a b| of set i (the docs table's figure). */
static void check_dense(const topi_dense *p, int nsets, const float *lo, const unsigned *seed,
                        double *worst) {
  tec_ctx *ctx = tec_ctx_new();
  lower_func *f = lower_tmpl(ctx, "dense", p, run_target());
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, run_target());
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  for (int set = 0; set < nsets; set++) {
    float *a = rand_half_values(p->m * p->k, seed[set], lo[set]);
    float *b = rand_half_values(p->n * p->k, seed[set] + 1, lo[set]);
    float *bias = rand_half_values(p->n, seed[set] + 2, -0.5f);
    int64_t sa[2] = {p->m, p->k}, sb[2] = {p->n, p->k}, sc[2] = {p->m, p->n};
    DLTensor ta = half_tensor(2, sa, a), tb = half_tensor(2, sb, b);
    DLTensor tbi = half_tensor(1, &p->n, bias), to = tu_zeros(TEC_F16, 2, sc);
    ck_assert_int_eq(tec_module_run(m, "op", 4, (DLTensor *[]){&ta, &tb, &tbi, &to}), 0);
    const uint16_t *o = to.data;
    worst[set] = 0;
    for (int64_t i = 0; i < p->m; i++)
      for (int64_t j = 0; j < p->n; j++) {
        double ref = bias[j], mag = fabs(bias[j]);
        for (int64_t k = 0; k < p->k; k++) {
          double pr = (double)a[i * p->k + k] * (double)b[j * p->k + k];
          ref += pr, mag += fabs(pr);
        }
        double got = from_half(o[i * p->n + j]), e = fabs(got - ref);
        ck_assert_msg(e <= bound(p->fp, ref, mag, p->k), "dense fp=%d [%lld,%lld]: %.6g, "
                      "expected %.6g (error %.3g, bound %.3g)", (int)p->fp, (long long)i,
                      (long long)j, got, ref, e, bound(p->fp, ref, mag, p->k));
        if (e / mag > worst[set]) worst[set] = e / mag;
      }
    free(a), free(b), free(bias);
    tec_dl_free(&ta), tec_dl_free(&tb), tec_dl_free(&tbi), tec_dl_free(&to);
  }
  tec_ctx_free(ctx);
}

/* conv2d_nchwc / depthwise_nchwc on float16 values against cr_conv2d (double accumulation). */
static void check_conv(const char *name, const topi_conv2d *p) {
  tec_ctx *ctx = tec_ctx_new();
  lower_func *f = lower_tmpl(ctx, name, p, run_target());
  ck_assert_msg(f != NULL, "%s: %s", name, tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, run_target());
  ck_assert_msg(m != NULL, "%s: %s", name, tec_ctx_error(ctx));
  int64_t g = p->groups ? p->groups : 1, oh, ow;
  cr_out_hw(p, &oh, &ow);
  int64_t nx = p->n * p->c_in * p->h * p->w, nw = p->c_out * (p->c_in / g) * p->kh * p->kw;
  int64_t no = p->n * p->c_out * oh * ow;
  float *x = rand_half_values(nx, 21, -0.5f), *w = rand_half_values(nw, 22, -0.5f);
  float *bias = rand_half_values(p->c_out, 23, -0.5f);
  float *ref = malloc(sizeof(float) * (size_t)no), *got = malloc(sizeof(float) * (size_t)no);
  cr_conv2d(p, x, w, bias, NULL, ref);
  /* float layouts through convref, then float16 */
  int64_t nxl = cr_numel(p->in_layout, p->n, p->c_in, p->h, p->w);
  int64_t nol = cr_numel(p->out_layout, p->n, p->c_out, oh, ow);
  float *xl = calloc((size_t)nxl, sizeof(float)), *ol = calloc((size_t)nol, sizeof(float));
  cr_to_layout(p->in_layout, p->n, p->c_in, p->h, p->w, x, xl);
  int64_t sx[5], so[5], sw[4] = {p->c_out, p->c_in / g, p->kh, p->kw};
  int ndx = cr_shape(p->in_layout, p->n, p->c_in, p->h, p->w, sx);
  int ndo = cr_shape(p->out_layout, p->n, p->c_out, oh, ow, so);
  DLTensor tx = half_tensor(ndx, sx, xl), tw = half_tensor(4, sw, w);
  DLTensor tb = half_tensor(1, &p->c_out, bias), to = tu_zeros(TEC_F16, ndo, so);
  ck_assert_msg(tec_module_run(m, "op", 4, (DLTensor *[]){&tx, &tw, &tb, &to}) == 0, "%s: %s",
                name, tec_rt_last_error());
  const uint16_t *oh16 = to.data;
  for (int64_t i = 0; i < nol; i++) ol[i] = from_half(oh16[i]);
  cr_from_layout(p->out_layout, p->n, p->c_out, oh, ow, ol, got);
  int64_t taps = (p->c_in / g) * p->kh * p->kw;
  for (int64_t i = 0; i < no; i++) {
    /* products are < 0.25 in magnitude: mag <= taps / 4 + |bias| */
    double mag = (double)taps / 4 + 0.5, r = ref[i];
    if (p->epi.act == TOPI_ACT_RELU && r <= 0) r = 0;
    double e = fabs((double)got[i] - (double)ref[i]);
    ck_assert_msg(e <= bound(p->fp, r, mag, taps), "%s fp=%d out[%lld]: %g, expected %g (bound %g)",
                  name, (int)p->fp, (long long)i, (double)got[i], (double)ref[i],
                  bound(p->fp, r, mag, taps));
  }
  free(x), free(w), free(bias), free(ref), free(got), free(xl), free(ol);
  tec_dl_free(&tx), tec_dl_free(&tw), tec_dl_free(&tb), tec_dl_free(&to);
  tec_ctx_free(ctx);
}

START_TEST(numbers) {
  /* under qemu (a JIT build costs 20-50x there, minutes per template) dot_1024's dense only:
   * its a broadcasts exercise the same by-lane fmla v.8h and fmlal paths */
  if (tu_emulated()) return;
  tec_ctx *ctx = tec_ctx_new();
  int acc16 = can_acc16(ctx);
  tec_ctx_free(ctx);
  for (int f = 0; f < 2; f++) {
    topi_fp fp = f ? TOPI_FP16_ACC32 : TOPI_FP16;
    if (fp == TOPI_FP16 && !acc16) continue; /* refused: the refusals below */
    topi_conv2d c = conv_p(16, 5, 24, 3, 8, fp), pw = conv_p(16, 5, 16, 1, 8, fp);
    topi_conv2d d = dw_p(16, 5, 8, fp);
    check_conv("conv2d_nchwc", &c); /* multiply-add by lane (fmla/fmlal) and the padding */
    check_conv("conv2d_nchwc", &pw);
    check_conv("depthwise_nchwc", &d);
    topi_dense g = dense_p(5, 24, 40, fp);
    double worst;
    check_dense(&g, 1, (const float[]){-0.5f}, (const unsigned[]){31}, &worst);
  }
}
END_TEST

/* docs/fp16.md's K = 1024 dot products: values in [0, 1) (every product adds: the sum grows to
 * about 256, float16's spacing there is 0.25) and in [-0.5, 0.5). The measured errors,
 * relative to sum |a b|, are the table's (x86 avx512fp16 and AArch64 agree: each lane adds its
 * products in k order, fused); the assertions hold them to about 1.5x what was measured. */
START_TEST(dot_1024) {
  tec_ctx *ctx = tec_ctx_new();
  int acc16 = can_acc16(ctx);
  tec_ctx_free(ctx);
  static const float lo[2] = {0.0f, -0.5f};
  static const unsigned seed[2] = {41, 43};
  double e32[2], e16[2];
  topi_dense g32 = dense_p(4, 16, 1024, TOPI_FP16_ACC32), g16 = dense_p(4, 16, 1024, TOPI_FP16);
  g32.const_b = g16.const_b = 0; /* b changes between the sets: not packed once in prepare */
  check_dense(&g32, 2, lo, seed, e32);
  ck_assert_double_le(e32[0], ldexp(1, -11)); /* the output's one rounding */
  ck_assert_double_le(e32[1], 1e-4);
  if (!acc16) return;
  check_dense(&g16, 2, lo, seed, e16);
  if (getenv("TEC_FP16_REPORT"))
    printf("K=1024 max |err|/sum|ab|: acc32 %.3g (positive) %.3g (signed); acc16 %.3g %.3g\n",
           e32[0], e32[1], e16[0], e16[1]), fflush(stdout);
  ck_assert_double_le(e16[0], 2e-2);
  ck_assert_double_le(e16[1], 2e-3);
  /* float16 accumulation loses more than the one output rounding on the positive sum */
  ck_assert_double_gt(e16[0], e32[0]);
}
END_TEST

/* ---- refusals ---- */

START_TEST(refusals) {
  if (tu_emulated()) return; /* explicit targets: the same on every host, read on this one */
  tec_ctx *ctx = tec_ctx_new();
  topi_conv2d c16 = conv_p(16, 6, 16, 3, 8, TOPI_FP16);
  topi_dense g16 = dense_p(8, 32, 64, TOPI_FP16);
  /* float16 accumulation without half arithmetic: rasp4b (no +fullfp16), AVX-512 without
   * avx512fp16; the message names the feature and the legal alternative */
  ck_assert_ptr_null(lower_tmpl(ctx, "conv2d_nchwc", &c16, "rasp4b"));
  tu_assert_contains(tec_ctx_error(ctx), "conv2d_nchwc: float16 accumulation (TOPI_FP16) needs "
                                         "half-precision arithmetic, which target");
  tu_assert_contains(tec_ctx_error(ctx), "-mattr=+fullfp16");
  tu_assert_contains(tec_ctx_error(ctx), "Legal here: TOPI_FP16_ACC32");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(lower_tmpl(ctx, "dense", &g16, X86));
  tu_assert_contains(tec_ctx_error(ctx), "dense: float16 accumulation (TOPI_FP16)");
  topi_conv2d d16 = dw_p(16, 6, 8, TOPI_FP16);
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(lower_tmpl(ctx, "depthwise_nchwc", &d16, A64 ",+fp16fml"));
  tu_assert_contains(tec_ctx_error(ctx), "+avx512fp16");
  /* a program scheduled for a target with half arithmetic, emitted for one without: the
   * build-time check (lower/half_arith.c) */
  lower_func *f = lower_tmpl(ctx, "conv2d_nchwc", &c16, A64FP);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(tec_emit(ctx, 1, &f, "rasp4b", TEC_EMIT_ASM, "/dev/null"), 0);
  tu_assert_contains(tec_ctx_error(ctx), "computes in float16 (a ");
  tu_assert_contains(tec_ctx_error(ctx), "of float16");
  tu_assert_contains(tec_ctx_error(ctx), "has no half-precision arithmetic (AArch64/ARMv7: "
                                         "-mattr=+fullfp16; x86: +avx512fp16)");
  /* ... which float32 accumulation does not need */
  topi_conv2d c32 = conv_p(16, 6, 16, 3, 8, TOPI_FP16_ACC32);
  f = lower_tmpl(ctx, "conv2d_nchwc", &c32, "rasp4b");
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  if (!tu_emulated()) free(tu_emit_text(ctx, f, "rasp4b", TEC_EMIT_ASM)); /* compiles */
  /* a float32-only template, and an fp out of range */
  topi_decl d;
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(topi_declare(ctx, "conv2d_spatial_pack", &c16, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "conv2d_spatial_pack: computes float32 only (fp = "
                                         "TOPI_FP32); float16 problems");
  topi_dense bad = dense_p(8, 32, 64, (topi_fp)7);
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(topi_declare(ctx, "dense", &bad, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "dense: fp = 7 is not one of TOPI_FP32");
  tec_ctx_free(ctx);
}
END_TEST

static Suite *fp16_suite(void) {
  Suite *s = suite_create("fp16");
  TCase *tc = tcase_create("asm"), *num = tcase_create("numbers"), *bad = tcase_create("refusals");
  tcase_set_timeout(tc, 300);
  tcase_set_timeout(bad, 300);
  tcase_add_test(tc, half_converter);
  tcase_add_test(tc, asm_aarch64);
  tcase_add_test(tc, asm_x86);
  tcase_set_timeout(num, 300);
  tcase_add_test(num, numbers);
  tcase_add_test(num, dot_1024);
  tcase_add_test(bad, refusals);
  suite_add_tcase(s, tc);
  suite_add_tcase(s, num);
  suite_add_tcase(s, bad);
  return s;
}

int main(void) { return tu_run(fp16_suite()); }

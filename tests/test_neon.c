/* test_neon.c — ARM targets and the NEON code tec emits for them (in the spirit of Halide's
 * simd_op_check): programs built through the schedule API, vectorized to the target's lanes,
 * emitted as AArch64 and ARMv7 assembly, and the hot loop searched for the expected
 * instructions and for scalar fallbacks. Also: target strings, presets and their errors,
 * and the two NEON kernels (examples/aot_arm/arm_kernels.c) run through the JIT on the host
 * against naive C (under qemu-aarch64 that JIT is itself NEON).
 *
 * The hot loop is found without LLVM's verbose comments: the innermost range between a label
 * and a backward branch to it, in the `<name>_raw` function, the largest such if several. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "arm_kernels.h"
#include "asmloops.h"
#include "testutil.h"

#define A64 "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon"
#define ARMV7 "llvm -mtriple=armv7a-linux-gnueabihf -mattr=+neon,+vfp4"

/* ---------- assembly helpers ---------- */

/* The hot loop of function `fn`: its innermost loop with the most lines (asmloops.h), as text
 * (malloc'd). */
static char *hot_loop(const char *as, const char *fn) {
  tu_asm_loop l[64];
  int n = tu_asm_inner_loops(as, fn, 0, l, 64), best = -1;
  ck_assert_msg(n > 0, "no loop in %s", fn);
  for (int i = 0; i < n; i++)
    if (best < 0 || l[i].lines > l[best].lines) best = i;
  char *r = l[best].text;
  l[best].text = NULL;
  tu_asm_loops_free(l, n);
  return r;
}

/* The hot loop of `fn` in f emitted as assembly for target (malloc'd). */
static char *emitted_hot_loop(tec_ctx *ctx, lower_func *f, const char *target, const char *fn) {
  char *as = tu_emit_text(ctx, f, target, TEC_EMIT_ASM);
  char *loop = hot_loop(as, fn);
  free(as);
  return loop;
}

/* Lines of text matching the extended regex re. */
static int count_re(const char *text, const char *re) {
  int n = tu_count_re(text, re);
  ck_assert_msg(n >= 0, "bad regex %s", re);
  return n;
}

/* Scalar (or half-width) floating-point arithmetic: what a missed vectorization leaves. */
#define A64_SCALAR_FP "^\t(fadd|fsub|fmul|fmadd|fmsub|fnmadd|fnmsub|fmla|fmax|fmaxnm|fmin|fminnm)\t[sd][0-9]"
#define A32_SCALAR_FP "^\tv(add|sub|mul|mla|fma|max|min)\\.f32\t[sd][0-9]"

static void assert_no_scalar_fp(const char *loop, const char *re, const char *what) {
  ck_assert_msg(count_re(loop, re) == 0, "%s: scalar FP in the hot loop:\n%s", what, loop);
}

/* ---------- targets ---------- */

START_TEST(test_target_strings) {
  tec_ctx *ctx = tec_ctx_new();
  struct {
    const char *target;
    int bits;
    const char *spelled; /* in tec_target_str */
  } ok[] = {
      {A64, 128, "-mtriple=aarch64-unknown-linux-gnu -mcpu=cortex-a72 -mattr=+neon"},
      {ARMV7, 128, "-mtriple=armv7a-unknown-linux-gnueabihf -mattr=+neon,+vfp4"},
      {"rasp4b", 128, "-mtriple=aarch64-unknown-linux-gnu -mcpu=cortex-a72"},
      {"rk3399", 128, "-mcpu=cortex-a72"},
      {"rk3399 -mcpu=cortex-a53", 128, "-mcpu=cortex-a53"}, /* an option replaces the preset's */
      {"neoverse-n1", 128, "-mcpu=neoverse-n1"},
      {"armv7-neon", 128, "-mtriple=armv7a-unknown-linux-gnueabihf -mcpu=cortex-a7"},
      {"rasp3b", 128, "-mcpu=cortex-a53"},
      {"llvm -mtriple=armv7a-linux-gnueabihf", 32, "armv7a"},          /* VFP only */
      {"llvm -mtriple=armv7a-linux-gnueabihf -mcpu=cortex-a9", 128, "+fp16,+neon,+vfp3"}, /* implied, sorted */
      {"llvm -mtriple=arm64-linux-gnu", 128, "arm64"},
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=haswell", 256, "x86_64"},
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512", 512, "skylake-avx512"},
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512 -mattr=-avx512f", 256, "-avx512f"},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    int bits = tec_target_vector_bits(ctx, ok[i].target);
    ck_assert_msg(bits == ok[i].bits, "%s: %d bits (%s)", ok[i].target, bits, tec_ctx_error(ctx));
    const char *s = tec_target_str(ctx, ok[i].target);
    tu_assert_contains(s, ok[i].spelled);
  }
  /* a feature named by the arch, the CPU and the user appears once, the last sign winning */
  ck_assert_str_eq(tec_target_str(ctx, "rasp4b"),
                   "llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=cortex-a72 -mattr=+neon");
  tu_assert_contains(tec_target_str(ctx, "armv7-neon -mattr=-neon,+vfp4"), "-mattr=-neon,+vfp4");
  ck_assert_int_eq(tec_target_vector_bits(ctx, "armv7-neon -mattr=-neon,+vfp4"), 32);
  int host = tec_target_vector_bits(ctx, NULL);
  ck_assert_int_ge(host, 128);
  ck_assert_int_eq(host, tec_target_vector_bits(ctx, "llvm"));
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_target_errors) {
  struct {
    const char *target, *msg;
  } bad[] = {
      {"rasp9", "unknown target kind 'rasp9'"},
      {"rasp9", "preset: rasp4b, rasp4b32, rasp3b, rk3399, armv7-neon, neoverse-n1"},
      {"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a99",
       "unknown CPU 'cortex-a99' for aarch64 (known: generic, cortex-a35, cortex-a53"},
      {"llvm -mtriple=armv7a-linux-gnueabihf -mcpu=cortex-a72x", "for armv7a (known: generic, cortex-a5,"},
      {"llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+avx2",
       "unknown feature '+avx2' for aarch64 (known: neon, fp-armv8"},
      {"llvm -mtriple=armv7a-linux-gnueabihf -mattr=+neon,+vfp5", "unknown feature '+vfp5' for armv7a"},
      {"llvm -mtriple=x86_64-linux-gnu -mattr=+neon", "unknown feature '+neon' for x86_64"},
      {"llvm -mtriple=riscv64-linux-gnu", "known: aarch64 (arm64), armv7a (armv7, armv7l, armv7-a), x86_64 (amd64)"},
      {"llvm -mtriple=bogus-none-none", "unknown triple 'bogus-none-none'"},
      {"rasp4b -mattr=neon", "feature 'neon' must start with '+' or '-'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tec_ctx *ctx = tec_ctx_new();
    ck_assert_int_eq(tec_target_vector_bits(ctx, bad[i].target), -1);
    tu_assert_contains(tec_ctx_error(ctx), bad[i].msg);
    tec_ctx_clear_error(ctx);
    ck_assert_ptr_null(tec_target_str(ctx, bad[i].target));
    tu_assert_contains(tec_ctx_error(ctx), bad[i].msg);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* ---------- element-wise ops, vectorized by the target's lanes ---------- */

typedef enum { OP_ADD, OP_FMA, OP_RELU } ew_op;

typedef struct ew {
  ew_op op;
  te_tensor *a, *b, *c;
} ew;

static const ir_expr *ew_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  ew *e = u;
  const ir_expr *a = TE_AT(e->a, i[0]);
  switch (e->op) {
  case OP_ADD: return ir_add(a, TE_AT(e->b, i[0]));
  case OP_FMA: return ir_add(ir_mul(a, TE_AT(e->b, i[0])), TE_AT(e->c, i[0]));
  default: return ir_max(a, ir_float(ctx, 0));
  }
}

/* D[i] = op(A, B, C)[i] over 1024, split by the target's f32 lanes, vectorized. */
static lower_func *ew_func(tec_ctx *ctx, ew_op op, const char *target) {
  int bits = tec_target_vector_bits(ctx, target);
  ck_assert_msg(bits > 0, "%s", tec_ctx_error(ctx));
  const ir_expr *n = ir_int(ctx, 1024);
  ew e = {op, te_placeholder(ctx, "A", TEC_F32, 1, &n), te_placeholder(ctx, "B", TEC_F32, 1, &n),
          te_placeholder(ctx, "C", TEC_F32, 1, &n)};
  te_tensor *D = te_compute(ctx, &(te_compute_decl){.name = "D", .ndim = 1, .shape = &n,
                                                     .body = ew_body, .user = &e});
  sch_schedule *s = sch_create(ctx, 1, &D);
  sch_stage *sd = sch_stage_of(s, D);
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split(sd, sch_axis(sd, 0), bits / 32, &o, &in), 0);
  ck_assert_int_eq(sch_vectorize(sd, in), 0);
  if (op == OP_FMA) return tec_lower(s, "ew", 4, (te_tensor *[]){e.a, e.b, e.c, D});
  if (op == OP_ADD) return tec_lower(s, "ew", 3, (te_tensor *[]){e.a, e.b, D});
  return tec_lower(s, "ew", 2, (te_tensor *[]){e.a, D});
}

START_TEST(test_elementwise) {
  struct {
    ew_op op;
    const char *target, *expect, *scalar;
  } cases[] = {
      {OP_ADD, A64, "^\tfadd\tv[0-9]+\\.4s", A64_SCALAR_FP},
      {OP_FMA, A64, "^\tfmla\tv[0-9]+\\.4s", A64_SCALAR_FP},
      {OP_ADD, ARMV7, "^\tvadd\\.f32\tq", A32_SCALAR_FP},
      {OP_FMA, ARMV7, "^\tv(fma|mla)\\.f32\tq", A32_SCALAR_FP},
      {OP_FMA, "armv7-neon", "^\tvfma\\.f32\tq", A32_SCALAR_FP}, /* fused, even on Cortex-A7 */
      /* max(x, 0) is x > 0 ? x : 0, which is 0 for NaN: NEON's vmax.f32 returns NaN, so
       * ARMv7 compares and masks (vcgt + vand, both q); ARMv8 in AArch32 has vmaxnm */
      {OP_RELU, ARMV7, "^\tvcgt\\.f32\tq", A32_SCALAR_FP},
      {OP_RELU, "rasp3b", "^\tvmaxnm\\.f32\tq", A32_SCALAR_FP},
      {OP_RELU, A64, "^\tfmaxnm\tv[0-9]+\\.4s", A64_SCALAR_FP},
      {OP_FMA, "rasp4b", "^\tfmla\tv[0-9]+\\.4s", A64_SCALAR_FP},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    tec_ctx *ctx = tec_ctx_new();
    char *loop = emitted_hot_loop(ctx, ew_func(ctx, cases[c].op, cases[c].target),
                                  cases[c].target, "ew_raw");
    ck_assert_msg(count_re(loop, cases[c].expect) >= 1, "case %zu (%s): no /%s/ in the loop:\n%s",
                  c, cases[c].target, cases[c].expect, loop);
    assert_no_scalar_fp(loop, cases[c].scalar, cases[c].target);
    free(loop);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* ---------- broadcasts of loaded elements ---------- */

typedef struct bl {
  te_tensor *a, *b;
} bl;
static const ir_expr *bl_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  bl *x = u;
  return ir_mul(TE_AT(x->a, i[0]), TE_AT(x->b, i[1]));
}

/* D[i, v] = A[i] * B[v] for A of na floats, i unrolled, v (4) vectorized: each A[i] is a
 * broadcast of a loaded element. */
static lower_func *bl_func(tec_ctx *ctx, int64_t na) {
  bl x = {te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, na)),
          te_placeholder(ctx, "B", TEC_F32, 1, TE_SHAPE(ctx, 4))};
  te_tensor *D = te_compute(ctx, &(te_compute_decl){.name = "D", .ndim = 2,
                                                     .shape = TE_SHAPE(ctx, na, 4),
                                                     .body = bl_body, .user = &x});
  sch_schedule *s = sch_create(ctx, 1, &D);
  sch_stage *sd = sch_stage_of(s, D);
  ck_assert_int_eq(sch_unroll(sd, sch_axis(sd, 0)), 0);
  ck_assert_int_eq(sch_vectorize(sd, sch_axis(sd, 1)), 0);
  return tec_lower(s, "bl", 3, (te_tensor *[]){x.a, x.b, D});
}

/* On AArch64 a broadcast of A[4g + l] is lane l of one q load of A[4g .. 4g+3] (fmul by
 * element), when that group is surely inside A: its element count a multiple of 4. Other
 * targets broadcast the element itself. */
START_TEST(test_broadcast_by_lane) {
  tec_ctx *ctx = tec_ctx_new();
  char *as = tu_emit_text(ctx, bl_func(ctx, 8), A64, TEC_EMIT_ASM);
  for (int l = 1; l < 4; l++) {
    const char *re = tec_ctx_printf(ctx, "^\tfmul\tv[0-9]+\\.4s, v[0-9]+\\.4s, "
                                         "v[0-9]+\\.s\\[%d\\]", l);
    ck_assert_msg(count_re(as, re) == 2, "lane %d: not 2 x /%s/:\n%s", l, re, as);
  }
  ck_assert_msg(count_re(as, "^\tldr\tq") + count_re(as, "^\tldp\tq") >= 1, "%s", as);
  ck_assert_msg(count_re(as, "^\t(ld1r|ldr\ts|ldp\ts)") == 0, "scalar loads of A:\n%s", as);
  free(as);
  /* 6 elements: the group of A[4], A[5] would read past A's end */
  as = tu_emit_text(ctx, bl_func(ctx, 6), A64, TEC_EMIT_ASM);
  ck_assert_msg(count_re(as, "\\.s\\[[1-3]\\]") == 0, "a lane past A's end:\n%s", as);
  free(as);
  /* ARMv7 NEON: no fused multiply-add by lane, the broadcast stays */
  as = tu_emit_text(ctx, bl_func(ctx, 8), ARMV7, TEC_EMIT_ASM);
  ck_assert_msg(count_re(as, "^\tvld1\\.32\t\\{d[0-9]+\\[\\], d[0-9]+\\[\\]\\}") == 8,
                "not 8 broadcast loads:\n%s", as);
  free(as);
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- the GEMM micro-kernel ---------- */

START_TEST(test_gemm_microkernel_a64) {
  tec_ctx *ctx = tec_ctx_new();
  /* 4 x 16 accumulators = 16 q registers, B row: 4 q loads, A: 4 broadcasts per k */
  char *loop = emitted_hot_loop(ctx, ak_gemm(ctx, "gemm", 64, 96, 128, 4, 16), A64, "gemm_raw");
  int fmla = count_re(loop, "^\tfmla\tv[0-9]+\\.4s, v[0-9]+\\.4s, v[0-9]+\\.(4s|s\\[[0-3]\\])");
  ck_assert_msg(fmla == 16, "%d fmla .4s in the k loop (expected 16):\n%s", fmla, loop);
  /* A[i, k] reaches the lanes by element (fmla v.s[0]) or by a broadcast load/dup */
  ck_assert_msg(count_re(loop, "\\.s\\[[0-3]\\]|^\tld1r\t|^\tdup\t") >= 1,
                "no by-element or broadcast operand:\n%s", loop);
  /* accumulators stay in registers: no stores, and few loads, inside the k loop */
  ck_assert_msg(count_re(loop, "^\t(str|stp|st1)\t") == 0, "stores in the k loop:\n%s", loop);
  ck_assert_msg(count_re(loop, "^\t(ldr|ldp|ld1|ld1r)\t") <= 8, "too many loads:\n%s", loop);
  assert_no_scalar_fp(loop, A64_SCALAR_FP, "gemm a64");
  free(loop);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_gemm_microkernel_armv7) {
  tec_ctx *ctx = tec_ctx_new();
  /* ARMv7 has 16 q registers: a 4 x 8 tile (8 accumulators) */
  char *loop = emitted_hot_loop(ctx, ak_gemm(ctx, "gemm", 64, 96, 128, 4, 8), ARMV7, "gemm_raw");
  int fma = count_re(loop, "^\tv(fma|mla)\\.f32\tq[0-9]+, q[0-9]+, (q[0-9]+|d[0-9]+\\[[01]\\])");
  ck_assert_msg(fma == 8, "%d vfma/vmla .f32 q in the k loop (expected 8):\n%s", fma, loop);
  ck_assert_msg(count_re(loop, "^\tvst") == 0, "stores (spills) in the k loop:\n%s", loop);
  assert_no_scalar_fp(loop, A32_SCALAR_FP, "gemm armv7");
  free(loop);
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- depthwise 3x3 ---------- */

START_TEST(test_depthwise_a64) {
  tec_ctx *ctx = tec_ctx_new();
  /* 4 output columns x 8 channels (2 q registers) x 9 taps = 72 fmla per iteration */
  char *loop = emitted_hot_loop(ctx, ak_dwconv3x3(ctx, "dw", 64, 14, 16, 4, 8), A64, "dw_raw");
  int fmla = count_re(loop, "^\tfmla\tv[0-9]+\\.4s, v[0-9]+\\.4s, v[0-9]+\\.4s");
  ck_assert_msg(fmla == 72, "%d fmla .4s in the channel loop (expected 72):\n%s", fmla, loop);
  assert_no_scalar_fp(loop, A64_SCALAR_FP, "depthwise a64");
  /* the 4 x 8 outputs go out once per iteration, as q stores */
  ck_assert_int_le(count_re(loop, "^\t(str|stp)\tq"), 8);
  free(loop);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(test_depthwise_armv7) {
  tec_ctx *ctx = tec_ctx_new();
  char *loop =
      emitted_hot_loop(ctx, ak_dwconv3x3(ctx, "dw", 64, 14, 16, 4, 4), "armv7-neon", "dw_raw");
  int fma = count_re(loop, "^\tvfma\\.f32\tq[0-9]+, q[0-9]+, q[0-9]+");
  ck_assert_msg(fma == 36, "%d vfma.f32 q in the channel loop (expected 36):\n%s", fma, loop);
  assert_no_scalar_fp(loop, A32_SCALAR_FP, "depthwise armv7");
  free(loop);
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- the same kernels, numbers through the host JIT ---------- */

START_TEST(test_kernels_numeric) {
  tec_ctx *ctx = tec_ctx_new();
  const int64_t M = 8, N = 32, K = 20;
  lower_func *g = ak_gemm(ctx, "gemm", M, N, K, 4, 16);
  const int64_t C = 16, H = 6, W = 8;
  lower_func *d = ak_dwconv3x3(ctx, "dw", C, H, W, 4, 8);
  ck_assert_msg(g && d, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 2, (lower_func *[]){g, d}, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));

  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  DLTensor a = tu_rand_f32(2, sa, 1), b = tu_rand_f32(2, sb, 2), c = tu_zeros(TEC_F32, 2, sc);
  ck_assert_msg(tec_call(tec_module_get(m, "gemm"), 3, (DLTensor *[]){&a, &b, &c}) == 0, "%s",
                tec_rt_last_error());
  float ref[8 * 32];
  tu_ref_matmul(tu_f32(&a), tu_f32(&b), ref, M, N, K);
  ck_assert_double_lt(tu_max_err(tu_f32(&c), ref, M * N), 1e-5);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);

  int64_t si[3] = {H + 2, W + 2, C}, sw[3] = {3, 3, C}, so[3] = {H, W, C};
  DLTensor in = tu_rand_f32(3, si, 3), wt = tu_rand_f32(3, sw, 4), out = tu_zeros(TEC_F32, 3, so);
  ck_assert_msg(tec_call(tec_module_get(m, "dw"), 3, (DLTensor *[]){&in, &wt, &out}) == 0, "%s",
                tec_rt_last_error());
  float dref[6 * 8 * 16];
  for (int64_t h = 0; h < H; h++)
    for (int64_t w = 0; w < W; w++)
      for (int64_t ch = 0; ch < C; ch++) {
        double s = 0;
        for (int y = 0; y < 3; y++)
          for (int x = 0; x < 3; x++)
            s += (double)tu_f32(&in)[((h + y) * (W + 2) + w + x) * C + ch] *
                 tu_f32(&wt)[(y * 3 + x) * C + ch];
        dref[(h * W + w) * C + ch] = (float)s;
      }
  ck_assert_double_lt(tu_max_err(tu_f32(&out), dref, H * W * C), 1e-5);
  tec_dl_free(&in), tec_dl_free(&wt), tec_dl_free(&out);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("neon");
  TCase *t = tcase_create("targets");
  tcase_add_test(t, test_target_strings);
  tcase_add_test(t, test_target_errors);
  suite_add_tcase(s, t);
  TCase *asmc = tcase_create("asm");
  tcase_add_test(asmc, test_elementwise);
  tcase_add_test(asmc, test_broadcast_by_lane);
  tcase_add_test(asmc, test_gemm_microkernel_a64);
  tcase_add_test(asmc, test_gemm_microkernel_armv7);
  tcase_add_test(asmc, test_depthwise_a64);
  tcase_add_test(asmc, test_depthwise_armv7);
  suite_add_tcase(s, asmc);
  TCase *num = tcase_create("numeric");
  tcase_add_test(num, test_kernels_numeric);
  suite_add_tcase(s, num);
  return tu_run(s);
}

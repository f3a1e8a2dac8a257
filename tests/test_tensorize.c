/* test_tensorize.c — sch_tensorize(dot4): an int8 GEMM nest C[i, j] = sum_k int32(A[i, k]) *
 * int32(B[k/4, j, k%4]) (B in the [K/4][N][4] layout) in three loop orders and with wrong
 * dtypes, extents and layouts: each matches (results bit-exact against a plain-C int32
 * reference, host JIT) or is refused with its reason; the instruction each target gets is
 * read from the emitted assembly (as Halide's simd_op_check): vpdpbusd zmm (avx512vnni),
 * {vex} vpdpbusd ymm (avxvnni), vpmaddwd without VNNI, sdot/udot (+dotprod), usdot (+i8mm),
 * and the widening fallback on AArch64 without dotprod and ARMv7. sch_tensorize(mmla): a GEMM
 * in 2x2 blocks, every signedness pair exact, smmla/ummla/usmmla (+i8mm) and the dot4 path
 * without i8mm in the assembly. Under qemu-aarch64 the dot products run with +dotprod and
 * +i8mm. */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include "support/asmloops.h"
#include "support/testutil.h"

typedef enum { ORD_JK, ORD_KJ, ORD_KO_INSIDE } order;

typedef struct gemm {
  int64_t M, N, K, lanes, rsplit;
  tec_dtype ta, tb, tc;
  int plain_b;       /* B as [K][N] (not packed): the stride in k is N */
  order ord;
  int group;         /* > 0: k.outer split by it, dot4_lane at k.outer.inner (ORD_JK only);
                      * < 0: j.outer split by -group, dot4_lane there */
} gemm;

typedef struct built {
  te_tensor *A, *B, *C;
  const ir_expr *k;
  int plain_b;
} built;

static const ir_expr *body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  built *g = u;
  const ir_expr *k = g->k, *four = ir_int(ctx, 4);
  const ir_expr *a = ir_read(ctx, g->A, 2, (const ir_expr *[]){i[0], k});
  const ir_expr *b = g->plain_b
                         ? ir_read(ctx, g->B, 2, (const ir_expr *[]){k, i[1]})
                         : ir_read(ctx, g->B, 3, (const ir_expr *[]){ir_floordiv(k, four), i[1],
                                                                     ir_floormod(k, four)});
  tec_dtype acc = g->A->type.code == TEC_FLOAT ? TEC_F32 : TEC_I32;
  return te_sum(ir_mul(ir_cast(acc, a), ir_cast(acc, b)), 1, &k, NULL);
}

/* The schedule of p with dot4 asked at the order's loop; NULL when sch_tensorize refuses. */
static sch_schedule *schedule(tec_ctx *ctx, const gemm *p, built *g) {
  g->plain_b = p->plain_b;
  g->A = te_placeholder(ctx, "A", p->ta, 2, te_shape(ctx, 2, (int64_t[]){p->M, p->K}));
  g->B = p->plain_b ? te_placeholder(ctx, "B", p->tb, 2, te_shape(ctx, 2, (int64_t[]){p->K, p->N}))
                    : te_placeholder(ctx, "B", p->tb, 3,
                                     te_shape(ctx, 3, (int64_t[]){p->K / 4, p->N, 4}));
  g->k = te_reduce_axis_n(ctx, "k", p->K);
  g->C = NULL;
  g->C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                            .shape = te_shape(ctx, 2, (int64_t[]){p->M, p->N}),
                                            .body = body, .user = g});
  ck_assert_ptr_nonnull(g->C);
  sch_schedule *s = sch_create(ctx, 1, &g->C);
  sch_stage *st = sch_stage_of(s, g->C);
  sch_iter *i = sch_axis(st, 0), *jo, *ji, *ko, *ki;
  OK(ctx, sch_split(st, sch_axis(st, 1), p->lanes, &jo, &ji));
  OK(ctx, sch_split(st, sch_reduce_axis(st, 0), p->rsplit, &ko, &ki));
  sch_iter *at = ji, *kg, *kl;
  if (p->group > 0) { /* the group loop around the dot4 nest: sdot by element */
    OK(ctx, sch_split(st, ko, p->group, &kg, &kl));
    OK(ctx, sch_reorder(st, 6, (sch_iter *[]){i, jo, kg, kl, ji, ki}));
    return sch_tensorize(st, kl, SCH_INTRIN_DOT4_LANE) ? NULL : s;
  }
  if (p->group < 0) {
    OK(ctx, sch_split(st, jo, -p->group, &kg, &kl));
    OK(ctx, sch_reorder(st, 6, (sch_iter *[]){i, kg, ko, kl, ji, ki}));
    return sch_tensorize(st, kl, SCH_INTRIN_DOT4_LANE) ? NULL : s;
  }
  if (p->ord == ORD_JK) OK(ctx, sch_reorder(st, 5, (sch_iter *[]){i, jo, ko, ji, ki}));
  if (p->ord == ORD_KJ) {
    OK(ctx, sch_reorder(st, 5, (sch_iter *[]){i, jo, ko, ki, ji}));
    at = ki;
  }
  if (p->ord == ORD_KO_INSIDE) OK(ctx, sch_reorder(st, 5, (sch_iter *[]){i, jo, ji, ko, ki}));
  return sch_tensorize(st, at, SCH_INTRIN_DOT4) ? NULL : s;
}

static lower_func *lower(tec_ctx *ctx, const gemm *p, built *g) {
  sch_schedule *s = schedule(ctx, p, g);
  ck_assert_msg(s != NULL, "%s", tec_ctx_error(ctx));
  return tec_lower(s, "gemm", 3, (te_tensor *[]){g->A, g->B, g->C});
}

static int64_t val(const DLTensor *t, int64_t i) {
  if (t->dtype.code == kDLUInt) return ((uint8_t *)t->data)[i];
  return ((int8_t *)t->data)[i];
}

/* Runs p on the host JIT (target NULL) with random bytes over the whole 8-bit range and
 * compares every element with a plain-C int32 reference. */
static void run_exact(const gemm *p, const char *target) {
  tec_ctx *ctx = tec_ctx_new();
  built g;
  lower_func *f = lower(ctx, p, &g);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, target);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  int64_t sa[2] = {p->M, p->K}, sb[3] = {p->K / 4, p->N, 4}, sc[2] = {p->M, p->N};
  int64_t sbp[2] = {p->K, p->N};
  DLTensor a = tu_zeros(p->ta, 2, sa), c = tu_zeros(TEC_I32, 2, sc);
  DLTensor b = p->plain_b ? tu_zeros(p->tb, 2, sbp) : tu_zeros(p->tb, 3, sb);
  srand(37);
  for (int64_t x = 0; x < p->M * p->K; x++) ((uint8_t *)a.data)[x] = (uint8_t)rand();
  for (int64_t x = 0; x < p->K * p->N; x++) ((uint8_t *)b.data)[x] = (uint8_t)rand();
  /* the extremes, where a saturating or sign-confused path would differ */
  ((uint8_t *)a.data)[0] = 0xff, ((uint8_t *)a.data)[1] = 0x80;
  ((uint8_t *)b.data)[0] = 0x80, ((uint8_t *)b.data)[1] = 0x80;
  ck_assert_int_eq(tec_module_run(m, "gemm", 3, (DLTensor *[]){&a, &b, &c}), 0);
  int32_t *out = c.data;
  for (int64_t i = 0; i < p->M; i++)
    for (int64_t j = 0; j < p->N; j++) {
      int32_t want = 0;
      for (int64_t k = 0; k < p->K; k++)
        want += (int32_t)(val(&a, i * p->K + k) *
                          val(&b, p->plain_b ? k * p->N + j : (k / 4) * p->N * 4 + j * 4 + k % 4));
      ck_assert_msg(out[i * p->N + j] == want, "C[%lld, %lld] = %d, want %d",
                    (long long)i, (long long)j, out[i * p->N + j], want);
    }
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  tec_ctx_free(ctx);
}

/* 8x48 output, K = 32: uint8 x int8, 16 lanes, the reduction split by 4, loops i, j.outer,
 * k.outer, j.inner, k.inner with dot4 at j.inner */
#define base (gemm){8, 48, 32, 16, 4, TEC_U8, TEC_I8, TEC_I32, 0, ORD_JK, 0}

/* ---- three loop orders ---- */

START_TEST(order_jk_matches) {
  gemm p = base;
  run_exact(&p, NULL);
}
END_TEST

START_TEST(order_kj_matches) {
  gemm p = base;
  p.ord = ORD_KJ;
  run_exact(&p, NULL);
}
END_TEST

START_TEST(order_ko_inside_refused) {
  gemm p = base;
  p.ord = ORD_KO_INSIDE;
  tec_ctx *ctx = tec_ctx_new();
  built g;
  ck_assert_ptr_null(lower(ctx, &p, &g));
  tu_assert_contains(tec_ctx_error(ctx), "tensorize: the nest at loop 'j.inner' does not match "
                                         "dot4: it needs two loops (a lane loop of 4, 8 or 16 "
                                         "and a reduction loop of 4) around one update; inside "
                                         "'j.inner' are 2 statements (the reduction's "
                                         "initialization is inside it");
  tec_ctx_free(ctx);
}
END_TEST

/* every signedness pair and lane count, on the host */
START_TEST(pairs_and_lanes_exact) {
  static const int64_t lanes[3] = {4, 8, 16};
  tec_dtype t[2] = {TEC_U8, TEC_I8};
  for (int l = 0; l < 3; l++)
    for (int x = 0; x < 2; x++)
      for (int y = 0; y < 2; y++) {
        if (tu_emulated() && (l != 1 || x == y)) continue; /* x == y: aarch64_dotprod_runs */
        gemm p = base;
        p.lanes = lanes[l], p.ta = t[x], p.tb = t[y];
        run_exact(&p, NULL);
      }
}
END_TEST

/* dot4_lane: k's groups of 4 in runs of 4 and 2 (16 or 8 bytes of a row read once, each
 * group by element), every signedness pair and lane count on the host; the column form
 * (C moving in the group loop) is qnn_conv2d's, run by test_qnn on AArch64 */
START_TEST(dot4_lane_exact) {
  static const int64_t lanes[3] = {4, 8, 16};
  tec_dtype t[2] = {TEC_U8, TEC_I8};
  for (int grp = 2; grp <= 4; grp += 2)
    for (int l = 0; l < 3; l++)
      for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++) {
          if (tu_emulated() && (l != 0 || x != y)) continue; /* sdot / udot by element */
          gemm p = base;
          p.group = grp, p.lanes = lanes[l], p.ta = t[x], p.tb = t[y];
          run_exact(&p, NULL);
        }
}
END_TEST

/* a let variable of `lanes` lanes of t (ir_dot4's argument checks) */
static const ir_expr *lanes_var(tec_ctx *ctx, const char *name, tec_dtype t, int lanes) {
  return ir_var(ctx, name, tec_dtype_with_lanes(t, lanes), IR_VAR_LET);
}

/* ---- refusals, each with its reason ---- */

static void refused(const gemm *p, const char *why) {
  tec_ctx *ctx = tec_ctx_new();
  built g;
  ck_assert_ptr_null(lower(ctx, p, &g));
  tu_assert_contains(tec_ctx_error(ctx), why);
  tec_ctx_free(ctx);
}

START_TEST(wrong_dtype_refused) {
  gemm p = base;
  p.ta = TEC_I16;
  refused(&p, "operand 'A' is int16; dot4 multiplies 8-bit integers (int8 or uint8)");
  /* a float stage: refused by the primitive itself */
  tec_ctx *ctx = tec_ctx_new();
  built g;
  p.ta = TEC_F32, p.tb = TEC_F32;
  ck_assert_ptr_null(schedule(ctx, &p, &g));
  tu_assert_contains(tec_ctx_error(ctx), "tensorize: stage 'C' is float32; dot4 accumulates "
                                         "into int32");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(wrong_extent_refused) {
  gemm p = base;
  p.lanes = 12;
  refused(&p, "lane loop 'j.inner' has extent 12; dot4 fills 4, 8 or 16 int32 lanes");
  p = base;
  p.rsplit = 8;
  refused(&p, "reduction loop 'k.inner' has extent 8; dot4 sums 4 products per lane");
}
END_TEST

START_TEST(dot4_lane_refused) {
  gemm p = base;
  p.group = 8; /* 32 bytes: more than a register */
  refused(&p, "does not match dot4_lane: group loop 'k.outer.inner' has extent 8; dot4_lane "
              "reads 2 or 4 groups of 4 bytes (8 or 16: one register)");
  p = base, p.group = 2, p.rsplit = 8; /* the dot4 nest inside is refused as dot4 would be */
  refused(&p, "reduction loop 'k.inner' has extent 8; dot4 sums 4 products per lane");
  p = base, p.group = 2, p.plain_b = 1;
  refused(&p, "operand 'B' does not read consecutive bytes in reduction loop 'k.inner'");
  /* the group loop over C's column blocks: A (shared) stays, B moves by 64 */
  p = base, p.group = -3;
  refused(&p, "group loop 'j.outer.inner' has extent 3");
  p.group = -2, p.N = 64;
  refused(&p, "does not match dot4_lane: no operand of the dot4 nest is one group of 4 bytes "
              "shared by every lane moving by 4 elements per step of group loop "
              "'j.outer.inner'");
  /* ir_dot4_lane's own checks */
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *acc = lanes_var(ctx, "acc", TEC_I32, 4);
  const ir_expr *a16 = lanes_var(ctx, "a", TEC_I8, 16);
  const ir_expr *a12 = lanes_var(ctx, "a", TEC_I8, 12);
  const ir_expr *a8 = lanes_var(ctx, "a", TEC_I8, 8);
  ck_assert_ptr_nonnull(ir_dot4_lane(acc, a16, a16, 3));
  ck_assert_ptr_null(ir_dot4_lane(acc, a8, a16, 2));
  tu_assert_contains(tec_ctx_error(ctx), "ir_dot4_lane: operand a is int8x8, the group 2");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_dot4_lane(acc, a12, a16, 0));
  tu_assert_contains(tec_ctx_error(ctx), "it needs 8 or 16 int8/uint8 lanes (2 or 4 groups");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_dot4_lane(acc, a16, a16, 4));
  tu_assert_contains(tec_ctx_error(ctx), "ir_dot4_lane: group 4; legal: 0..3");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_dot4_lane(acc, a16, a12, 1));
  tu_assert_contains(tec_ctx_error(ctx), "operand b has 12 lanes");
  ck_assert_str_eq(sch_intrin_name(SCH_INTRIN_DOT4_LANE), "dot4_lane");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(wrong_layout_refused) {
  gemm p = base;
  p.plain_b = 1; /* B[k, j]: 48 elements apart in k, 1 in j */
  refused(&p, "operand 'B' does not read consecutive bytes in reduction loop 'k.inner'");
}
END_TEST

START_TEST(bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  built g;
  gemm p = base;
  sch_schedule *s = schedule(ctx, &p, &g);
  ck_assert_ptr_nonnull(s);
  sch_stage *st = sch_stage_of(s, g.C);
  ck_assert_int_eq(sch_tensorize(st, sch_stage_leaf(st, 0), (sch_intrin)7), -1);
  tu_assert_contains(tec_ctx_error(ctx), "tensorize: stage 'C': unknown intrinsic 7");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_tensorize(NULL, sch_stage_leaf(st, 0), SCH_INTRIN_DOT4), -1);
  ck_assert_ptr_nonnull(tec_ctx_error(ctx));
  tec_ctx_clear_error(ctx);
  /* the pragma written by hand with an unknown intrinsic: refused by tec_lower */
  ck_assert_int_eq(sch_pragma(st, sch_stage_leaf(st, 0), "tensorize", ir_int(ctx, 9)), 0);
  ck_assert_ptr_null(tec_lower(s, "gemm", 3, (te_tensor *[]){g.A, g.B, g.C}));
  tu_assert_contains(tec_ctx_error(ctx), "tensorize: unknown intrinsic 9");
  ck_assert_str_eq(sch_intrin_name(SCH_INTRIN_DOT4), "dot4");
  ck_assert_ptr_null(sch_intrin_name(SCH_INTRIN_COUNT));
  /* ir_dot4's own checks */
  tec_ctx_clear_error(ctx);
  const ir_expr *acc = lanes_var(ctx, "acc", TEC_I32, 4);
  const ir_expr *x = lanes_var(ctx, "x", TEC_I8, 12);
  ck_assert_ptr_null(ir_dot4(acc, x, x));
  tu_assert_contains(tec_ctx_error(ctx), "operand a has 12 lanes; with 4 accumulator lanes it "
                                         "needs 16");
  tec_ctx_free(ctx);
}
END_TEST

/* ---- the instruction per target, in the emitted assembly ---- */

#define X86 "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v4"
/* avx512vbmi (vpermb) comes with the CPU: tec has no feature bit for it */
#define SPR "llvm -mtriple=x86_64-linux-gnu -mcpu=sapphirerapids -mattr=+avx512bw,+avx512vl,+avx512vnni"
#define A64 "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon"

static char *emit(tec_ctx *ctx, const gemm *p, const char *target) {
  built g;
  lower_func *f = lower(ctx, p, &g);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  return tu_emit_text(ctx, f, target, TEC_EMIT_ASM);
}

/* Asserts that the emitted text s has want and not `not` (NULL: no such check); frees s. */
static void check_text(char *s, const char *want, const char *not) {
  tu_assert_contains(s, want);
  if (not) assert_not_contains(s, not);
  free(s);
}

static void expect_asm(const gemm *p, const char *target, const char *want, const char *not) {
  tec_ctx *ctx = tec_ctx_new();
  check_text(emit(ctx, p, target), want, not);
  tec_ctx_free(ctx);
}

START_TEST(asm_x86) {
  if (tu_emulated()) return; /* the same LLVM emits the same text: read on the host */
  gemm p = base;
  expect_asm(&p, X86 " -mattr=+avx512bw,+avx512vl,+avx512vnni", "vpdpbusd\t%zmm", NULL);
  p.lanes = 8;
  expect_asm(&p, X86 " -mattr=+avx512bw,+avx512vl,+avx512vnni", "vpdpbusd\t%ymm", NULL);
  expect_asm(&p, "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v3 -mattr=+avxvnni",
             "{vex}\tvpdpbusd\t%ymm", NULL);
  /* no VNNI: the exact widening path, never vpmaddubsw */
  p.lanes = 16;
  expect_asm(&p, X86 " -mattr=+avx512bw", "vpmaddwd\t%zmm", "vpdpbusd");
  expect_asm(&p, "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v3", "vpmaddwd\t%ymm", "vpmaddubsw");
  /* int8 x int8 on a VNNI target: vpdpbusd takes uint8 x int8 only */
  p.ta = TEC_I8;
  expect_asm(&p, X86 " -mattr=+avx512bw,+avx512vl,+avx512vnni", "vpmaddwd", "vpdpbusd");
}
END_TEST

/* B as [K][N] with N the lane count: lane j's 4 bytes N apart, the 4N bytes of a step
 * contiguous (depthwise's pixels of a channel block): the transposed operand (ir_dot4_t),
 * read once and permuted; exact on the host, without VNNI (the widening path) and AVX2, and
 * vpermb + vpdpbusd in the assembly of a VNNI + VBMI CPU (sapphirerapids). N = 2 lanes apart: refused. */
START_TEST(transposed_operand_exact) {
  static const int64_t lanes[3] = {4, 8, 16};
  for (int l = 0; l < 3; l++) {
    if (tu_emulated() && l != 1) continue;
    gemm p = base;
    p.plain_b = 1, p.N = p.lanes = lanes[l];
    run_exact(&p, NULL);
    if (!tu_emulated() && l == 2) {
      run_exact(&p, X86 " -mattr=+avx512bw");
      run_exact(&p, "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v3");
    }
  }
  if (tu_emulated()) return;
  gemm p = base;
  p.plain_b = 1, p.N = 16;
  expect_asm(&p, SPR, "vpermb", NULL);
  expect_asm(&p, SPR, "vpdpbusd\t%zmm", NULL);
  p.N = 32; /* B's lanes 32 apart in k, not 16: neither layout */
  refused(&p, "operand 'B' does not read consecutive bytes in reduction loop 'k.inner'");
  tec_ctx *ctx = tec_ctx_new(); /* ir_dot4_t's own checks */
  const ir_expr *acc = lanes_var(ctx, "acc", TEC_I32, 4);
  const ir_expr *x = lanes_var(ctx, "x", TEC_U8, 16);
  const ir_expr *w = lanes_var(ctx, "w", TEC_I8, 4);
  ck_assert_ptr_nonnull(ir_dot4_t(acc, x, x, 3));
  ck_assert_ptr_null(ir_dot4_t(acc, x, x, 5));
  tu_assert_contains(tec_ctx_error(ctx), "ir_dot4: layout 5; legal: 0..3");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_dot4_t(acc, x, w, 2));
  tu_assert_contains(tec_ctx_error(ctx), "ir_dot4: operand b is [4][lanes] (layout 2) but has 4 "
                                         "lanes; it needs 16");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(asm_aarch64) {
  if (tu_emulated()) return; /* the same LLVM emits the same text: read on the host */
  gemm p = base;
  p.lanes = 4;
  p.ta = TEC_I8;
  expect_asm(&p, A64 ",+dotprod", "sdot\tv", NULL);
  p.ta = TEC_U8, p.tb = TEC_U8;
  expect_asm(&p, A64 ",+dotprod", "udot\tv", NULL);
  p.tb = TEC_I8;
  expect_asm(&p, A64 ",+dotprod,+i8mm", "usdot\tv", NULL);
  p.lanes = 16; /* four sdot per 16 lanes */
  p.ta = TEC_I8;
  expect_asm(&p, A64 ",+dotprod", "sdot\tv", NULL);
  /* by element: one 16-byte read of A's row, four sdot on its groups (no ld1r). One row and
   * one column block, K = 256: nothing outside the group loop for LLVM to hoist A's reads out
   * of (a read hoisted away from its sdot, as an 8-row tile's is across the column blocks,
   * keeps its splats apart: dup + sdot, on LLVM 14 and 19) */
  p.lanes = 4, p.group = 4, p.K = 256, p.M = 1, p.N = 4;
  tec_ctx *ctx = tec_ctx_new();
  char *s = emit(ctx, &p, A64 ",+dotprod");
  for (int g = 0; g < 4; g++) {
    char want[64];
    snprintf(want, sizeof want, "^\tsdot\tv[0-9]+\\.4s, v[0-9]+\\.16b, v[0-9]+\\.4b\\[%d\\]$", g);
    ck_assert_msg(tu_count_re(s, want) >= 1, "no sdot by element [%d] (%d)", g,
                  tu_count_re(s, want));
  }
  ck_assert_int_eq(tu_count_re(s, "^\tld1r\t"), 0);
  free(s);
  tec_ctx_free(ctx);
  p.lanes = 16, p.group = 0, p.K = 32, p.M = 8, p.N = 48;
  /* without dotprod: widening multiply, pairwise widening add, pairwise add */
  const char *const a64[] = {"smull\tv", "saddlp\tv", "addp\tv"};
  for (int i = 0; i < 3; i++) expect_asm(&p, A64, a64[i], "sdot");
  const char *const v7[] = {"vmull.s8", "vpaddl.s16", "vpadd.i32"};
  for (int i = 0; i < 3; i++)
    expect_asm(&p, "llvm -mtriple=armv7a-linux-gnueabihf -mattr=+neon,+vfp4", v7[i], NULL);
}
END_TEST

/* 1 when the JIT's host is an AArch64 (the cross build under qemu) */
static int host_is_aarch64(void) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *host = tec_target_parse(ctx, NULL);
  int a64 = host && host->arch == TEC_ARCH_AARCH64;
  tec_ctx_free(ctx);
  return a64;
}

/* AArch64 with dotprod, executed: on the host JIT when it is an AArch64 (qemu) */
START_TEST(aarch64_dotprod_runs) {
  if (!host_is_aarch64()) return; /* the x86 host ran its own instructions above */
  gemm p = base;
  p.lanes = 8, p.ta = TEC_I8;
  run_exact(&p, "llvm -mattr=+neon,+dotprod");
  p.ta = TEC_U8, p.tb = TEC_U8;
  run_exact(&p, "llvm -mattr=+neon,+dotprod");
}
END_TEST

/* ---- mmla: C in 2x2 blocks, a and b as [..][2][8] ---- */

typedef struct mm {
  te_tensor *A, *B;
  const ir_expr *k;
} mm;

/* Cb[io, jo, ii, ji] = sum_k int32(Ap[io, k/8, ii, k%8]) * int32(Bp[jo, k/8, ji, k%8]) */
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *g = u;
  const ir_expr *e8 = ir_int(ctx, 8), *kq = ir_floordiv(g->k, e8), *kr = ir_floormod(g->k, e8);
  return te_sum(ir_mul(ir_cast(TEC_I32, TE_AT(g->A, i[0], kq, i[2], kr)),
                       ir_cast(TEC_I32, TE_AT(g->B, i[1], kq, i[3], kr))), 1, &g->k, NULL);
}

enum { MB = 3, NB = 4, KK = 32 }; /* 6 x 8 output in 2x2 blocks, k = 32 */

static lower_func *mm_lower(tec_ctx *ctx, tec_dtype ta, tec_dtype tb, int64_t ksplit, mm *g,
                            te_tensor **C) {
  g->A = te_placeholder(ctx, "A", ta, 4, TE_SHAPE(ctx, MB, KK / 8, 2, 8));
  g->B = te_placeholder(ctx, "B", tb, 4, TE_SHAPE(ctx, NB, KK / 8, 2, 8));
  g->k = te_reduce_axis_n(ctx, "r", KK);
  *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 4,
                                          .shape = TE_SHAPE(ctx, MB, NB, 2, 2), .body = mm_body,
                                          .user = g});
  sch_schedule *s = sch_create(ctx, 1, C);
  sch_stage *st = sch_stage_of(s, *C);
  sch_iter *ko, *ki;
  OK(ctx, sch_split(st, sch_reduce_axis(st, 0), ksplit, &ko, &ki));
  OK(ctx, sch_reorder(st, 6, (sch_iter *[]){sch_axis(st, 0), sch_axis(st, 1), ko,
                                            sch_axis(st, 2), sch_axis(st, 3), ki}));
  OK(ctx, sch_tensorize(st, sch_axis(st, 2), SCH_INTRIN_MMLA));
  return tec_lower(s, "mm", 3, (te_tensor *[]){g->A, g->B, *C});
}

static void mm_exact(tec_dtype ta, tec_dtype tb, const char *target) {
  tec_ctx *ctx = tec_ctx_new();
  mm g;
  te_tensor *C;
  lower_func *f = mm_lower(ctx, ta, tb, 8, &g, &C);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, target);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  int64_t sa[4] = {MB, KK / 8, 2, 8}, sb[4] = {NB, KK / 8, 2, 8}, sc[4] = {MB, NB, 2, 2};
  DLTensor a = tu_zeros(ta, 4, sa), b = tu_zeros(tb, 4, sb), c = tu_zeros(TEC_I32, 4, sc);
  srand(38);
  for (int x = 0; x < MB * KK * 2; x++) ((uint8_t *)a.data)[x] = (uint8_t)rand();
  for (int x = 0; x < NB * KK * 2; x++) ((uint8_t *)b.data)[x] = (uint8_t)rand();
  ((uint8_t *)a.data)[0] = 0x80, ((uint8_t *)b.data)[0] = 0xff;
  ck_assert_int_eq(tec_module_run(m, "mm", 3, (DLTensor *[]){&a, &b, &c}), 0);
  for (int i = 0; i < 2 * MB; i++)
    for (int j = 0; j < 2 * NB; j++) {
      int32_t want = 0;
      for (int k = 0; k < KK; k++)
        want += (int32_t)(val(&a, ((i / 2 * (KK / 8) + k / 8) * 2 + i % 2) * 8 + k % 8) *
                          val(&b, ((j / 2 * (KK / 8) + k / 8) * 2 + j % 2) * 8 + k % 8));
      int32_t got = ((int32_t *)c.data)[((i / 2) * NB + j / 2) * 4 + (i % 2) * 2 + j % 2];
      ck_assert_msg(got == want, "C[%d, %d] = %d, want %d", i, j, got, want);
    }
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  tec_ctx_free(ctx);
}

START_TEST(mmla_exact) {
  tec_dtype t[2] = {TEC_U8, TEC_I8};
  for (int x = 0; x < 2; x++)
    for (int y = 0; y < 2; y++) mm_exact(t[x], t[y], NULL);
}
END_TEST

START_TEST(mmla_refused) {
  tec_ctx *ctx = tec_ctx_new();
  mm g;
  te_tensor *C;
  ck_assert_ptr_null(mm_lower(ctx, TEC_U8, TEC_I8, 4, &g, &C));
  tu_assert_contains(tec_ctx_error(ctx), "tensorize: the nest at loop 'k' does not match mmla: "
                                         "reduction loop 'r.inner' has extent 4; mmla sums 8 "
                                         "products per element (split the reduction by 8)");
  tec_ctx_free(ctx);
}
END_TEST

static void mm_asm(tec_dtype ta, tec_dtype tb, const char *target, const char *want,
                   const char *not) {
  tec_ctx *ctx = tec_ctx_new();
  mm g;
  te_tensor *C;
  check_text(tu_emit_text(ctx, mm_lower(ctx, ta, tb, 8, &g, &C), target, TEC_EMIT_ASM), want,
             not);
  tec_ctx_free(ctx);
}

START_TEST(mmla_asm) {
  if (tu_emulated()) return; /* the same LLVM emits the same text: read on the host */
  mm_asm(TEC_I8, TEC_I8, A64 ",+i8mm", "smmla\tv", NULL);
  mm_asm(TEC_U8, TEC_U8, A64 ",+i8mm", "ummla\tv", NULL);
  mm_asm(TEC_U8, TEC_I8, A64 ",+i8mm", "usmmla\tv", NULL);
  mm_asm(TEC_I8, TEC_U8, A64 ",+i8mm", "usmmla\tv", NULL);
  /* without i8mm: the same bytes through dot4's instructions */
  mm_asm(TEC_I8, TEC_I8, A64 ",+dotprod", "sdot\tv", "smmla");
  mm_asm(TEC_U8, TEC_I8, X86 " -mattr=+avx512bw,+avx512vl,+avx512vnni", "vpdpbusd\t%ymm", NULL);
}
END_TEST

/* AArch64 with i8mm, executed (qemu) */
START_TEST(aarch64_i8mm_runs) {
  if (!host_is_aarch64()) return;
  mm_exact(TEC_I8, TEC_I8, "llvm -mattr=+neon,+i8mm");
  mm_exact(TEC_U8, TEC_I8, "llvm -mattr=+neon,+i8mm");
  mm_exact(TEC_I8, TEC_U8, "llvm -mattr=+neon,+i8mm");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("tensorize");
  TCase *tc = tcase_create("dot4");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, order_jk_matches);
  tcase_add_test(tc, order_kj_matches);
  tcase_add_test(tc, order_ko_inside_refused);
  tcase_add_test(tc, pairs_and_lanes_exact);
  tcase_add_test(tc, wrong_dtype_refused);
  tcase_add_test(tc, wrong_extent_refused);
  tcase_add_test(tc, wrong_layout_refused);
  tcase_add_test(tc, dot4_lane_exact);
  tcase_add_test(tc, dot4_lane_refused);
  tcase_add_test(tc, transposed_operand_exact);
  tcase_add_test(tc, bad_input);
  tcase_add_test(tc, asm_x86);
  tcase_add_test(tc, asm_aarch64);
  tcase_add_test(tc, aarch64_dotprod_runs);
  tcase_add_test(tc, mmla_exact);
  tcase_add_test(tc, mmla_refused);
  tcase_add_test(tc, mmla_asm);
  tcase_add_test(tc, aarch64_i8mm_runs);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }

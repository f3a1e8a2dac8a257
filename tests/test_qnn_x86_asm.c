/* test_qnn_x86_asm.c — the int8 templates' hot loops in the assembly LLVM emits for Zen 4
 * (-mcpu=znver3 with AVX-512 VNNI: what LLVM 14 names this project's machine; docs/quantized.md
 * "Speed"). LLVM's unrolling for znver3 made qnn_conv2d's 3x3 tile spill (477 stack moves per
 * 336 vpdpbusd, fixed in its schedule); these read the loops holding the vpdpbusd of
 * qnn_depthwise's dot path (stride 1 and 2, the bias start: no vpaddd, no zeroing; the
 * stride-2 default on small planes) and of qnn_dense's GEMM tile, and want the dot-product
 * instructions of one tile and no vector register moved to or from the stack there; and
 * qnn_conv2d's default tile for 1x1 layers with at most 32 input channels (it spilled at 14 x 2).
 * Bit-exactness of the same paths: test_qnn. */
#include <stdlib.h>
#include <string.h>
#include "asmloops.h"
#include "testutil.h"
#include "topi/qnn_internal.h"

/* Zen 4's AVX-512 (LLVM 14's znver3 has none of it): vpermb is avx512vbmi */
static const char *const zen4 =
    "llvm -mtriple=x86_64-linux-gnu -mcpu=znver3 -mattr=+avx512f,+avx512cd,+avx512bw,+avx512vl,"
    "+avx512dq,+avx512vnni,+avx512vbmi,+avx512vbmi2,+avx512ifma,+avx512bitalg,+avx512vpopcntdq,"
    "+avx512bf16";

/* a vector register stored to or loaded from the stack: a spilled tile */
static const char *const spill_re = "^\tvmov[a-z0-9]*\t[^\n]*\\(%rsp\\)";

/* fn's code for zen4 at the default config with knobs set (NULL: none); the config in *used
 * (when used is not NULL) */
static char *emit(tec_ctx *ctx, const char *tmpl, const void *problem, const char *knobs,
                  const void **used) {
  const topi_template *t = topi_template_find(tmpl);
  const tec_target *tg = tec_target_parse(ctx, zen4);
  ck_assert_msg(t && tg, "%s", tec_ctx_error(ctx));
  topi_decl d;
  tune_space sp;
  topi_op op;
  OK(ctx, t->declare(ctx, problem, &d));
  OK(ctx, t->space(ctx, problem, tg, &sp));
  void *cfg = sp.default_config;
  if (knobs) {
    cfg = tec_ctx_alloc(ctx, sp.config_size);
    ck_assert_ptr_nonnull(cfg);
    OK(ctx, tune_config_parse(ctx, &sp, knobs, cfg));
  }
  if (used) *used = cfg;
  OK(ctx, t->schedule(&d, cfg, tg, &op));
  lower_func *f = tec_lower(op.sched, "q", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  char *s = tu_emit_text(ctx, f, zen4, TEC_EMIT_ASM);
  ck_assert_ptr_nonnull(s);
  return s;
}

/* The innermost loops of as (functions q...) holding vpdpbusd, into loops (freed with
 * tu_asm_loops_free), their vpdpbusd counts into dots; returns how many. */
static int dot_loops(const char *as, tu_asm_loop loops[32], int dots[32]) {
  int n = tu_asm_inner_loops(as, "q", 1, loops, 32), k = 0;
  for (int i = 0; i < n; i++) {
    int d = tu_count_re(loops[i].text, "^\tvpdpbusd\t%zmm");
    if (!d) {
      free(loops[i].text);
      continue;
    }
    dots[k] = d, loops[k++] = loops[i];
  }
  return k;
}

/* The innermost loops of as holding vpdpbusd: each has want of them, nothing spilled, and
 * `extra` lines matching extra_re (-1: not checked); returns how many such loops. */
static int check_dot_loops(const char *as, int want, const char *extra_re, int extra) {
  tu_asm_loop loops[32];
  int dots[32], n = dot_loops(as, loops, dots);
  for (int i = 0; i < n; i++) {
    ck_assert_msg(dots[i] == want, "%s: %d vpdpbusd in a loop, want %d", loops[i].fn, dots[i],
                  want);
    ck_assert_msg(tu_count_re(loops[i].text, spill_re) == 0, "%s: the tile spilled (%d moves)",
                  loops[i].fn, tu_count_re(loops[i].text, spill_re));
    if (extra >= 0)
      ck_assert_msg(tu_count_re(loops[i].text, extra_re) == extra, "%s: %d lines match %s, want %d",
                    loops[i].fn, tu_count_re(loops[i].text, extra_re), extra_re, extra);
  }
  tu_asm_loops_free(loops, n);
  return n;
}

/* MobileNet's 3x3 depthwise with bias and ReLU6 on 16-channel blocks */
static topi_qconv2d dw_layer(int64_t c, int64_t hw, int64_t stride) {
  return (topi_qconv2d){.conv = {.n = 1, .c_in = c, .h = hw, .w = hw, .c_out = c, .kh = 3, .kw = 3,
                                 .stride_h = stride, .stride_w = stride, .pad_h = 1, .pad_w = 1,
                                 .groups = c, .in_layout = {TOPI_NCHWC, 16, 0},
                                 .out_layout = {TOPI_NCHWC, 16, 0},
                                 .epi = {.bias = 1, .act = TOPI_ACT_RELU6}},
                        .in = {0.05f, 3}, .out = {0.1f, -128}};
}

/* qnn_depthwise, dot = 1: a 1 x 14 tile (stride 1) and a 2 x 7 tile (stride 2, the input
 * copied per row tile) are 3 vpdpbusd per output vector, the accumulators started from the
 * bias (no vpaddd; before: 14 per tile) */
START_TEST(depthwise_dot_tile) {
  static const struct {
    int64_t hw, stride;
    const char *knobs;
  } cases[] = {{28, 1, "dot=1 ow_tile=14 oh_tile=1 in_row=0"},
               {56, 2, "dot=1 ow_tile=7 oh_tile=2 in_row=1"}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    tec_ctx *ctx = tec_ctx_new();
    topi_qconv2d q = dw_layer(32, cases[c].hw, cases[c].stride);
    char *as = emit(ctx, "qnn_depthwise", &q, cases[c].knobs, NULL);
    ck_assert_msg(check_dot_loops(as, 42, "^\tvpaddd\t", 0) >= 1, "%s: no vpdpbusd loop",
                  cases[c].knobs);
    free(as);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* The stride-2 default on the small planes (MobileNet's 28 x 28 and 14 x 14: a block's padded
 * input within L1) copies the input per block, not per row tile: with the copy in the row
 * loop the 2 x 7 tile spilled (31 and 204 stack moves); the 56 x 56 plane keeps in_row */
START_TEST(depthwise_stride2_default) {
  static const struct {
    int64_t c, hw, in_row;
  } cases[] = {{256, 28, 0}, {512, 14, 0}, {128, 56, 1}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    tec_ctx *ctx = tec_ctx_new();
    topi_qconv2d q = dw_layer(cases[c].c, cases[c].hw, 2);
    tune_space sp;
    OK(ctx, topi_space_of(ctx, "qnn_depthwise", &q, tec_target_parse(ctx, zen4), &sp));
    const topi_qdepthwise_config *d = sp.default_config;
    ck_assert_int_eq(d->dot, 1);
    ck_assert_int_eq(d->oh_tile, 2);
    ck_assert_msg(d->in_row == cases[c].in_row, "%lld x %lld: in_row %lld, want %lld",
                  (long long)cases[c].hw, (long long)cases[c].hw, (long long)d->in_row,
                  (long long)cases[c].in_row);
    char *as = emit(ctx, "qnn_depthwise", &q, NULL, NULL);
    ck_assert_int_ge(check_dot_loops(as, (int)(3 * d->oh_tile * d->ow_tile), NULL, -1), 1);
    free(as);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* qnn_dense at the default tile of 256 x 1024 x 1024 on this target (6 rows x 64 columns: 24
 * accumulators, 4 weight vectors, a broadcast): whole steps of 24 vpdpbusd in the k loop, none
 * spilled */
START_TEST(dense_gemm_tile) {
  tec_ctx *ctx = tec_ctx_new();
  topi_qdense p = {.m = 256, .n = 1024, .k = 1024, .bias = 1, .act = TOPI_ACT_RELU,
                   .in = {0.05f, 0}, .out = {0.1f, 0}};
  char *as = emit(ctx, "qnn_dense", &p, "mr=6 nr=64", NULL);
  tu_asm_loop loops[32];
  int dots[32], n = dot_loops(as, loops, dots), full = 0;
  for (int i = 0; i < n; i++) {
    /* 256 = 42 x 6 + 4: the 6-row tiles' loop and the last 4 rows' (LLVM unrolls k in both) */
    full += dots[i] % 24 == 0;
    ck_assert_msg(dots[i] % 4 == 0, "%d vpdpbusd in a k loop, not whole rows of 4 vectors",
                  dots[i]);
    ck_assert_msg(tu_count_re(loops[i].text, spill_re) == 0, "the tile spilled (%d stack moves)",
                  tu_count_re(loops[i].text, spill_re));
  }
  tu_asm_loops_free(loops, n);
  ck_assert_msg(full >= 1, "no k loop of whole 6 x 4 steps");
  free(as);
  tec_ctx_free(ctx);
}
END_TEST

/* qnn_conv2d's default tile for 1x1 layers with a short reduction (c_in <= 32: MobileNet v2's
 * expand layers). At the old 14 x 2 default LLVM hoisted the tile's broadcasts ahead of their
 * vpdpbusd and spilled them (92-102 stack moves per 112 vpdpbusd, stores and reloads); the
 * default now stays within 7 columns (or takes the packs tile where the clamp spans int8). The
 * loops holding the vpdpbusd must store no vector register to the stack; loads from it are
 * allowed only as reloads of loop-invariant values (at most one per weight vector of the tile:
 * oc_tile x the reduction's groups). */
/* a vector register stored to the stack (a spill), and one loaded from it */
static const char *const store_re = "^\tvmov[a-z0-9]*\t%[xyz]mm[0-9]+, [^\n]*\\(%rsp\\)";
static const char *const load_re = "^\tvmov[a-z0-9]*\t[^\n%]*\\(%rsp\\), %[xyz]mm";

/* 1x1 c_in -> c_out at hw x hw, NCHW16c, bias, ReLU6 with output scale out_scale (0.0235:
 * the calibrated ReLU6, its clamp spanning int8; 0.05: a clamp narrower than int8) */
static topi_qconv2d pw(int64_t c_in, int64_t c_out, int64_t hw, float out_scale) {
  return (topi_qconv2d){.conv = {.n = 1, .c_in = c_in, .h = hw, .w = hw, .c_out = c_out, .kh = 1,
                                 .kw = 1, .stride_h = 1, .stride_w = 1,
                                 .in_layout = {TOPI_NCHWC, 16, 0}, .out_layout = {TOPI_NCHWC, 16, 0},
                                 .epi = {.bias = 1, .act = TOPI_ACT_RELU6}},
                        .in = {0.05f, -128}, .out = {out_scale, -128}};
}

/* The default config's loops holding vpdpbusd for p: no vector store to the stack, at most
 * `reloads` loads from it in each; returns the default's ow_tile * oc_tile via *tile */
static int check_default(tec_ctx *ctx, const topi_qconv2d *p, int64_t *tile) {
  const topi_qconv2d_config *cfg = NULL;
  char *as = emit(ctx, "qnn_conv2d", p, NULL, (const void **)&cfg);
  *tile = cfg->ow_tile * cfg->oc_tile;
  int groups = (int)((p->conv.c_in + 15) / 16 * 4), reloads = (int)cfg->oc_tile * groups;
  tu_asm_loop loops[32];
  int dots[32], n = dot_loops(as, loops, dots);
  for (int i = 0; i < n; i++) {
    int st = tu_count_re(loops[i].text, store_re), ld = tu_count_re(loops[i].text, load_re);
    ck_assert_msg(st == 0 && ld <= reloads,
                  "c_in %lld, %lld x %lld tile: %d vector stores to the stack and %d loads "
                  "(at most %d) beside %d vpdpbusd", (long long)p->conv.c_in,
                  (long long)cfg->ow_tile, (long long)cfg->oc_tile, st, ld, reloads, dots[i]);
  }
  tu_asm_loops_free(loops, n);
  free(as);
  return n;
}

/* MobileNet v2's b3-b5 expand shapes (24 -> 144 at 56x56, 32 -> 192 at 28x28) and b2's (16 ->
 * 96 at 112x112), with a clamp narrower than int8 (the 14 x 2 default spilled: fails before)
 * and with the calibrated ReLU6 (packs: 8 x 2 or 4 x 4); b1_project's one output block */
START_TEST(expand_default_unspilled) {
  static const struct { int64_t c_in, c_out, hw; } shapes[] = {{24, 144, 56}, {32, 192, 28},
                                                               {16, 96, 112}};
  static const float scales[] = {0.05f, 0.0235f};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (size_t k = 0; k < 2; k++) {
      tec_ctx *ctx = tec_ctx_new();
      topi_qconv2d p = pw(shapes[s].c_in, shapes[s].c_out, shapes[s].hw, scales[k]);
      int64_t tile = 0;
      ck_assert_int_ge(check_default(ctx, &p, &tile), 1);
      ck_assert_int_le(tile, 16); /* at most 16 accumulators: 7 x 2, 8 x 2 or 4 x 4 */
      tec_ctx_free(ctx);
    }
  /* one output block, no activation (b1_project, 32 -> 16 at 112x112): 14 x 1 spilled too */
  tec_ctx *ctx = tec_ctx_new();
  topi_qconv2d p = pw(32, 16, 112, 0.0235f);
  p.conv.epi.act = TOPI_ACT_NONE, p.out.zero_point = 3;
  int64_t tile = 0;
  ck_assert_int_ge(check_default(ctx, &p, &tile), 1);
  ck_assert_int_le(tile, 8);
  tec_ctx_free(ctx);
}
END_TEST

/* a longer reduction (64 channels) keeps the 14 x 2 tile where the clamp does not span int8
 * (it does not spill there): the cap is for short reductions only */
START_TEST(long_reduction_keeps_tile) {
  tec_ctx *ctx = tec_ctx_new();
  topi_qconv2d p = pw(64, 192, 56, 0.05f);
  int64_t tile = 0;
  ck_assert_int_ge(check_default(ctx, &p, &tile), 1);
  ck_assert_int_eq(tile, 28);
  /* bad input: a 1x1 whose input layout is not NCHW[x]c is refused with a reason */
  topi_qconv2d bad = pw(24, 144, 56, 0.05f);
  bad.conv.in_layout = (topi_layout){TOPI_NCHW, 0, 0};
  tune_space sp;
  ck_assert_int_ne(topi_space_of(ctx, "qnn_conv2d", &bad, tec_target_parse(ctx, zen4), &sp), 0);
  ck_assert_ptr_nonnull(strstr(tec_ctx_error(ctx), "NCHW"));
  tec_ctx_free(ctx);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("qnn_x86_asm");
  TCase *tc = tcase_create("qnn_x86_asm");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, depthwise_dot_tile);
  tcase_add_test(tc, depthwise_stride2_default);
  tcase_add_test(tc, dense_gemm_tile);
  tcase_add_test(tc, expand_default_unspilled);
  tcase_add_test(tc, long_reduction_keeps_tile);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }

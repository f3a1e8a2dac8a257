/* test_qnn_x86_tile.c — qnn_conv2d's default tile for 1x1 layers with a short reduction
 * (c_in <= 32: MobileNet v2's expand layers) in the assembly LLVM emits for Zen 4 (-mcpu=znver3
 * with AVX-512 VNNI, what LLVM 14 names this project's machine). At the old 14 x 2 default
 * LLVM hoisted the tile's broadcasts ahead of their vpdpbusd and spilled them (92-102 stack
 * moves per 112 vpdpbusd, stores and reloads); the default now stays within 7 columns (or takes
 * the packs tile where the clamp spans int8). The loops holding the vpdpbusd must store no
 * vector register to the stack; loads from it are allowed only as reloads of loop-invariant
 * values (at most one per weight vector of the tile: oc_tile x the reduction's groups).
 * Nothing is run (portable); bit-exactness of the same paths: test_qnn. */
#include <stdlib.h>
#include <string.h>
#include "asmloops.h"
#include "testutil.h"
#include "topi/qnn_internal.h"

static const char *const zen4 =
    "llvm -mtriple=x86_64-linux-gnu -mcpu=znver3 -mattr=+avx512f,+avx512cd,+avx512bw,+avx512vl,"
    "+avx512dq,+avx512vnni,+avx512vbmi,+avx512vbmi2,+avx512ifma,+avx512bitalg,+avx512vpopcntdq,"
    "+avx512bf16";

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
  const topi_template *t = topi_template_find("qnn_conv2d");
  const tec_target *tg = tec_target_parse(ctx, zen4);
  ck_assert_msg(t && tg, "%s", tec_ctx_error(ctx));
  topi_decl d;
  tune_space sp;
  topi_op op;
  OK(ctx, t->declare(ctx, p, &d));
  OK(ctx, t->space(ctx, p, tg, &sp));
  const topi_qconv2d_config *cfg = sp.default_config;
  *tile = cfg->ow_tile * cfg->oc_tile;
  OK(ctx, t->schedule(&d, cfg, tg, &op));
  lower_func *f = tec_lower(op.sched, "q", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  char *as = tu_emit_text(ctx, f, zen4, TEC_EMIT_ASM);
  ck_assert_ptr_nonnull(as);
  int groups = (int)((p->conv.c_in + 15) / 16 * 4), reloads = (int)cfg->oc_tile * groups;
  tu_asm_loop loops[32];
  int n = tu_asm_inner_loops(as, "q", 1, loops, 32), found = 0;
  for (int i = 0; i < n; i++) {
    int dots = tu_count_re(loops[i].text, "^\tvpdpbusd\t%zmm");
    if (!dots) continue;
    found++;
    int st = tu_count_re(loops[i].text, store_re), ld = tu_count_re(loops[i].text, load_re);
    ck_assert_msg(st == 0 && ld <= reloads,
                  "c_in %lld, %lld x %lld tile: %d vector stores to the stack and %d loads "
                  "(at most %d) beside %d vpdpbusd", (long long)p->conv.c_in,
                  (long long)cfg->ow_tile, (long long)cfg->oc_tile, st, ld, reloads, dots);
  }
  tu_asm_loops_free(loops, n);
  free(as);
  return found;
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
  Suite *s = suite_create("qnn_x86_tile");
  TCase *tc = tcase_create("qnn_x86_tile");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, expand_default_unspilled);
  tcase_add_test(tc, long_reduction_keeps_tile);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }

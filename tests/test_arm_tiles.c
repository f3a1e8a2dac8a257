/* test_arm_tiles.c — the templates' default register tiles on ARMv7 (16 q registers) keep
 * their hot loops off the stack: each template's default for an ARMv7 target is emitted as
 * assembly, and every innermost loop holding a vfma.f32 (label .. backward branch) is searched
 * for loads and stores through sp (directly or through a register set from sp, ARMv7's way to
 * reach a spilled q register). Vector spills are refused outright; one reload of a general
 * register per loop iteration is allowed (an address: ARMv7's broadcast load has no offset
 * form and its 13 general registers hold the tile's addresses; see topi/conv2d_nchwc.c), on
 * LLVM 14 and 19 alike. A control shows the check fails on AArch64's tile emitted for ARMv7,
 * another that depthwise_nchwc holds on LLVM 19 by its pragma sched_pressure; AArch64's
 * defaults are pinned as measured (docs/arm.md), and its pointwise hot loop loads in pairs. */
#include <stdlib.h>
#include "asmloops.h"
#include "testutil.h"
#include "topi/internal.h"

/* a problem: a conv2d layer (bias + ReLU fused) in a layout, or a dense */
typedef enum lay { B4, NCHW, NHWC } lay; /* NCHW4c in and out, NCHW, NHWC */
typedef struct tcase {
  const char *tmpl;
  int c, h, w, k, kh, s, p, g; /* conv2d */
  lay layout;
  int m, n, kk;                /* dense */
} tcase;

static const tcase cases[] = {
    {"depthwise_nchwc", 256, 28, 28, 256, 3, 1, 1, 256, B4, 0, 0, 0}, /* mbv1_dw_mid */
    {"depthwise_nchwc", 32, 112, 112, 32, 3, 1, 1, 32, B4, 0, 0, 0},  /* mbv1_dw1 */
    {"conv2d_nchwc", 256, 28, 28, 256, 1, 1, 0, 1, B4, 0, 0, 0},      /* mbv1_pw_mid */
    {"conv2d_nchwc", 512, 7, 7, 1024, 1, 1, 0, 1, B4, 0, 0, 0},       /* mbv1 pw13 */
    {"conv2d_nchwc", 128, 28, 28, 128, 3, 1, 1, 1, B4, 0, 0, 0},      /* resnet_c3 */
    {"conv2d_nchwc", 64, 56, 56, 64, 3, 1, 1, 1, B4, 0, 0, 0},        /* resnet_c2 */
    {"dense", 0, 0, 0, 0, 0, 0, 0, 0, B4, 64, 256, 256},
    {"dense", 0, 0, 0, 0, 0, 0, 0, 0, B4, 1, 1000, 1024},               /* mbv1 fc */
    {"conv2d_spatial_pack", 256, 28, 28, 256, 1, 1, 0, 1, NCHW, 0, 0, 0},
    {"conv2d_spatial_pack", 128, 28, 28, 128, 3, 1, 1, 1, NCHW, 0, 0, 0},
    {"dw_spatial_pack", 256, 28, 28, 256, 3, 1, 1, 256, NCHW, 0, 0, 0},
    {"conv2d_im2col", 256, 28, 28, 256, 1, 1, 0, 1, NHWC, 0, 0, 0},
    {"conv2d_im2col", 128, 28, 28, 128, 3, 1, 1, 1, NHWC, 0, 0, 0},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))
#define NV7 6 /* cases also emitted for armv7-neon */

static topi_conv2d conv_of(const tcase *c) {
  topi_layout l = c->layout == B4     ? (topi_layout){.kind = TOPI_NCHWC, .block = 4}
                   : c->layout == NCHW ? (topi_layout){.kind = TOPI_NCHW}
                                       : (topi_layout){.kind = TOPI_NHWC};
  return (topi_conv2d){.n = 1, .c_in = c->c, .h = c->h, .w = c->w, .c_out = c->k, .kh = c->kh,
                       .kw = c->kh, .stride_h = c->s, .stride_w = c->s, .pad_h = c->p,
                       .pad_w = c->p, .groups = c->g, .in_layout = l, .out_layout = l,
                       .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
}

/* case c by its template at the target's default (cfg NULL) or at cfg, as assembly; the
 * default config's text into *def */
static char *emit_case(tec_ctx *ctx, const tcase *c, const char *target, const char *cfg,
                       const char **def) {
  const tec_target *tg = tec_target_parse(ctx, target);
  ck_assert_msg(tg != NULL, "%s", tec_ctx_error(ctx));
  const topi_template *t = topi_template_find(c->tmpl);
  ck_assert_ptr_nonnull(t);
  topi_conv2d cp = conv_of(c);
  topi_dense dp = {.m = c->m, .n = c->n, .k = c->kk, .const_b = 1};
  const void *prob = c->m ? (const void *)&dp : (const void *)&cp;
  topi_decl d;
  tune_space sp;
  topi_op op;
  ck_assert_msg(t->declare(ctx, prob, &d) == 0 && t->space(ctx, prob, tg, &sp) == 0, "%s",
                tec_ctx_error(ctx));
  void *conf = malloc(t->config_size);
  memcpy(conf, sp.default_config, t->config_size);
  if (cfg) ck_assert_msg(tune_config_parse(ctx, &sp, cfg, conf) == 0, "%s", tec_ctx_error(ctx));
  *def = tune_config_str(ctx, &sp, sp.default_config);
  ck_assert_msg(t->schedule(&d, conf, tg, &op) == 0, "%s", tec_ctx_error(ctx));
  free(conf);
  return tu_emit_text(ctx, tec_lower(op.sched, "k", op.nargs, op.args), target, TEC_EMIT_ASM);
}

/* The vfma loops of k* in as: how many, and their stack accesses summed (the worst loop's
 * general-register loads in *gpr_max) */
static int vfma_loops(const char *as, tu_stack_access *sum, int *gpr_max) {
  tu_asm_loop l[256];
  int n = tu_asm_inner_loops(as, "k", 1, l, 256), hot = 0;
  *sum = (tu_stack_access){0, 0, 0, 0};
  *gpr_max = 0;
  for (int i = 0; i < n; i++) {
    if (tu_count_re(l[i].text, "^\tvfma\\.f32\tq") == 0) continue;
    tu_stack_access a = tu_asm_stack_access(l[i].text);
    hot++;
    sum->vec_loads += a.vec_loads, sum->vec_stores += a.vec_stores;
    sum->gpr_loads += a.gpr_loads, sum->gpr_stores += a.gpr_stores;
    if (a.gpr_loads > *gpr_max) *gpr_max = a.gpr_loads;
  }
  tu_asm_loops_free(l, n);
  return hot;
}

START_TEST(test_armv7_defaults_stay_off_the_stack) {
  /* every case on rasp4b32 (Cortex-A72), the first NV7 (the direct templates) again on
   * armv7-neon (Cortex-A7: another scheduling model) */
  const tcase *c = &cases[_i < NCASES ? _i : _i - NCASES];
  const char *target = _i < NCASES ? "rasp4b32" : "armv7-neon", *def;
  /* under emulation (the cross-built suite under qemu-aarch64: the same LLVM emits the same
   * ARMv7 code, 10-30x slower) a slice: rasp4b32, depthwise and pointwise */
  if (tu_emulated() && _i != 0 && _i != 2) return;
  tec_ctx *ctx = tec_ctx_new();
  char *as = emit_case(ctx, c, target, NULL, &def);
  tu_stack_access a;
  int gmax, hot = vfma_loops(as, &a, &gmax);
  ck_assert_msg(hot >= 1, "%s %s (%s): no vfma loop", c->tmpl, target, def);
  /* the hot loops' counters (constant bounds) count in 32 bits (codegen_stmt.c): no adc /
   * sbcs pair */
  tu_asm_loop l[256];
  int n = tu_asm_inner_loops(as, "k", 1, l, 256);
  for (int i = 0; i < n; i++)
    ck_assert_msg(tu_count_re(l[i].text, "^\tvfma\\.f32\tq") == 0 ||
                      tu_count_re(l[i].text, "^\t(adc|sbcs)\t") == 0,
                  "%s: a 64-bit counter:\n%s", l[i].fn, l[i].text);
  tu_asm_loops_free(l, n);
  /* every case strict on LLVM 14 and 19 (depthwise_nchwc's 1x1 tile needs its pragma
   * sched_pressure on LLVM 19: without it one tap is reloaded from the stack per column on
   * rasp4b32; test_armv7_depthwise_needs_pressure_scheduling below) */
  int clean = a.vec_loads + a.vec_stores + a.gpr_stores == 0 && gmax <= 1;
  ck_assert_msg(clean,
                "%s on %s, default %s: stack accesses in %d hot loops: %d q/d loads, %d q/d "
                "stores, %d general loads (at most 1 a loop allowed), %d general stores",
                c->tmpl, target, def, hot, a.vec_loads, a.vec_stores, a.gpr_loads, a.gpr_stores);
  free(as);
  tec_ctx_free(ctx);
}
END_TEST

/* The control: AArch64's tiles emitted for ARMv7 spill (so the check above can fail). */
START_TEST(test_aarch64_tiles_spill_on_armv7) {
  tec_ctx *ctx = tec_ctx_new();
  const char *def;
  char *as = emit_case(ctx, &cases[0], "rasp4b32", "ow_tile=7 oh_tile=1 parallel=1", &def);
  tu_stack_access a;
  int gmax;
  ck_assert_int_ge(vfma_loops(as, &a, &gmax), 1);
  ck_assert_msg(a.vec_loads + a.vec_stores >= 20, "ow_tile 7 on ARMv7: %d q/d stack accesses",
                a.vec_loads + a.vec_stores);
  free(as);
  as = emit_case(ctx, &cases[2], "rasp4b32",
                 "ow_tile=2 oc_tiles=4 ic_split=1 ic_unroll=0 oh_tile=1 pad_copy=0 parallel=2 "
                 "oh_reg=1", &def);
  ck_assert_int_ge(vfma_loops(as, &a, &gmax), 1);
  ck_assert_int_ge(a.vec_loads + a.vec_stores, 10);
  free(as);
  tec_ctx_free(ctx);
}
END_TEST

/* AArch64 keeps its measured defaults (docs/arm.md's counts were taken with them). */
START_TEST(test_aarch64_defaults_unchanged) {
  static const char *const want[] = {
      "ow_tile=7 oh_tile=1 parallel=1",
      "ow_tile=8 oh_tile=1 parallel=1",
      "ow_tile=8 oc_tiles=2 ic_split=2 ic_unroll=1 oh_tile=2 pad_copy=0 parallel=2 oh_reg=1",
  };
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *tg = tec_target_parse(ctx, "rasp4b");
  for (int i = 0; i < 3; i++) {
    topi_conv2d p = conv_of(&cases[i]);
    tune_space sp;
    ck_assert_int_eq(topi_template_find(cases[i].tmpl)->space(ctx, &p, tg, &sp), 0);
    ck_assert_str_eq(tune_config_str(ctx, &sp, sp.default_config), want[i]);
  }
  tec_ctx_free(ctx);
}
END_TEST

/* AArch64's pointwise default loads in pairs: the GEMM form's hot loop (mbv1_pw_mid, 8 x 2
 * blocks, two input blocks per step) has 128 fmla; the oc tile's weight blocks are packed side
 * by side (16 weight vectors in 8 ldp); past LLVM 14 the step's two input blocks are
 * nib/ic_split apart, each with its own base register: all 16 inputs in 8 ldp, no single ldr
 * q. LLVM 14 keeps them adjacent (its LSR reached a far block by register offsets): the second
 * block's 8 positions single ldr, out of ldp's reach (topi/conv2d_nchwc.c; before: 8 ldp + 16
 * ldr on both). The numbers: scripts/arm_insn.sh's check column and
 * net_insn.sh's logits under qemu (docs/arm.md). */
START_TEST(test_aarch64_pointwise_loads_paired) {
  if (tu_emulated()) return; /* the same LLVM emits the same code on the host */
  tec_ctx *ctx = tec_ctx_new();
  const char *def;
  char *as = emit_case(ctx, &cases[2], "rasp4b", NULL, &def);
  tu_asm_loop l[64];
  int n = tu_asm_inner_loops(as, "k", 1, l, 64), hot = 0;
#if TEC_TEST_LLVM_MAJOR == 14
  const int want_ldr = 8, want_ldp = 12;
#else
  const int want_ldr = 0, want_ldp = 16;
#endif
  for (int i = 0; i < n; i++) {
    int fmla = tu_count_re(l[i].text, "^\tfmla\tv");
    if (fmla < 128) continue;
    hot++;
    int ldr = tu_count_re(l[i].text, "^\tldr\tq"), ldp = tu_count_re(l[i].text, "^\tldp\tq");
    ck_assert_msg(ldr == want_ldr && ldp == want_ldp,
                  "%s (%s): %d single q loads, %d pairs per %d fmla (want %d, %d)", cases[2].tmpl,
                  def, ldr, ldp, fmla, want_ldr, want_ldp);
  }
  ck_assert_int_eq(hot, 1);
  tu_asm_loops_free(l, n);
  free(as);
  tec_ctx_free(ctx);
}
END_TEST

/* 1 if the attribute group of function fn in LLVM IR text ir holds what; -1 if fn is not
 * defined there */
static int fn_attrs_have(const char *ir, const char *fn, const char *what) {
  char def[160], grp[32];
  snprintf(def, sizeof def, "@%s(", fn);
  const char *d = strstr(ir, def), *eol = d ? strchr(d, '\n') : NULL;
  if (!d || !eol) return -1;
  const char *hash = eol;
  while (hash > d && *hash != '#') hash--;
  snprintf(grp, sizeof grp, "attributes #%d = {", atoi(hash + 1));
  const char *g = strstr(ir, grp), *gend = g ? strchr(g, '\n') : NULL;
  ck_assert_msg(g && gend, "no %s for %s", grp, fn);
  const char *w = strstr(g, what);
  return w && w < gend;
}

/* depthwise_nchwc's 1x1 tile stays off the stack on LLVM 19 by its pragma sched_pressure:
 * the same schedule without it (schedule_in, as dw_pw_fused calls it) reloads a kernel tap
 * from the stack per column on rasp4b32 under LLVM 19 (LLVM 14 holds it either way: printed,
 * not required).
 * The pragma gives "+use-misched" to the run's functions alone, not to the prepare function
 * of the same module, and to nothing on AArch64, whose LLVM always schedules that way. */
START_TEST(test_armv7_depthwise_needs_pressure_scheduling) {
  if (tu_emulated()) return; /* the same LLVM emits the same code on the host */
  tec_ctx *ctx = tec_ctx_new();
  char *ir;
  const tec_target *tg = tec_target_parse(ctx, "rasp4b32");
  const topi_template *t = topi_template_find("depthwise_nchwc");
  topi_conv2d cp = conv_of(&cases[0]);
  topi_decl d;
  tune_space sp;
  topi_op op;
  ck_assert_int_eq(t->declare(ctx, &cp, &d), 0);
  ck_assert_int_eq(t->space(ctx, &cp, tg, &sp), 0);
  /* the template's default with and without the pragma */
  for (int pragma = 0; pragma < 2; pragma++) {
    if (pragma) ck_assert_int_eq(t->schedule(&d, sp.default_config, tg, &op), 0);
    else
      ck_assert(topi_op_begin(&d, &op) == 0 &&
                topi_depthwise_nchwc_schedule_in(&d, sp.default_config, op.sched, 0, NULL) == 0);
    lower_func *f = tec_lower(op.sched, "k", op.nargs, op.args);
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
    char *as = tu_emit_text(ctx, f, "rasp4b32", TEC_EMIT_ASM);
    ir = tu_emit_text(ctx, f, "rasp4b32", TEC_EMIT_LLVM_IR);
    tu_stack_access a;
    int gmax;
    ck_assert_int_ge(vfma_loops(as, &a, &gmax), 1);
    ck_assert_int_eq(fn_attrs_have(ir, "k_run_par0", "+use-misched"), pragma);
    ck_assert_int_eq(fn_attrs_have(ir, "k_run_raw", "+use-misched"), pragma);
    ck_assert_int_eq(fn_attrs_have(ir, "k_prepare_raw", "+use-misched"), 0);
    if (pragma) ck_assert_int_eq(a.vec_loads + a.vec_stores, 0);
#if TEC_TEST_LLVM_MAJOR == 19
    else ck_assert_msg(a.vec_loads >= 1, "without the pragma: %d q/d loads", a.vec_loads);
#endif
    fprintf(stderr, "test_arm_tiles: depthwise_nchwc 1x1 on rasp4b32, LLVM %d, %s pragma "
            "sched_pressure: %d q/d stack loads in its vfma loops\n", TEC_TEST_LLVM_MAJOR,
            pragma ? "with" : "without", a.vec_loads);
    free(as);
    free(ir);
  }
  /* AArch64: the marker, no feature (its LLVM has no other scheduler) */
  const tec_target *a64 = tec_target_parse(ctx, "rasp4b");
  ck_assert_int_eq(t->space(ctx, &cp, a64, &sp), 0);
  ck_assert_int_eq(topi_op_begin(&d, &op), 0);
  ck_assert_int_eq(topi_depthwise_nchwc_schedule_in(&d, sp.default_config, op.sched, 0, NULL), 0);
  sch_stage *so = sch_stage_of(op.sched, d.out);
  ck_assert_int_eq(sch_pragma(so, sch_leaf_named(so, "ox.outer"), "sched_pressure", NULL), 0);
  ir = tu_emit_text(ctx, tec_lower(op.sched, "k", op.nargs, op.args), "rasp4b", TEC_EMIT_LLVM_IR);
  ck_assert_int_eq(fn_attrs_have(ir, "k_run_raw", "tec-sched-pressure"), 1);
  ck_assert_ptr_null(strstr(ir, "use-misched"));
  free(ir);
  tec_ctx_free(ctx);
}
END_TEST

/* int8 on AArch64 +dotprod by element (SCH_INTRIN_DOT4_LANE): the defaults of qnn_conv2d
 * (pointwise 256x28x28 NCHW4c: the plane as one row, 12 pixels x 2 blocks, 4 input blocks per
 * step: 96 sdot; 784 = 65 x 12 + a last tile of 4 pixels, a smaller loop, by element too) and qnn_dense (256x1024x1024: 8 x 8, 4 groups of k per read: 64 sdot) have
 * one hot loop, every sdot `sdot v.4s, v.16b, v.4b[g]`, no ld1r; LLVM 14's loads pinned as
 * measured (pointwise: 12 input and 4 x 32 bytes of side-by-side weights as 10 ldr q + 5 ldp
 * q; dense: 8 ldr q of rows, 4 ldp q of the panel; scripts/arm_insn.sh TEC_ARM_FP=i8 counts
 * them under qemu, docs/arm.md). The requantization converts with fcvtns (no frintn); the
 * pointwise tile's 48 output bytes of a block are 3 16-byte stores (plane: one vector each;
 * LLVM pairs some as stp q). */
static void int8_hot_loop(const char *tmpl, const void *prob, int want_sdot, int want_ldr,
                          int want_ldp) {
  static const char *a64 = "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -mattr=+neon,+dotprod";
  tec_ctx *ctx = tec_ctx_new();
  topi_op op;
  OK(ctx, topi_instantiate(ctx, topi_template_find(tmpl), prob, tec_target_parse(ctx, a64), &op));
  char *as = tu_emit_text(ctx, tec_lower(op.sched, "q", op.nargs, op.args), a64, TEC_EMIT_ASM);
  tu_asm_loop l[64];
  int n = tu_asm_inner_loops(as, "q", 1, l, 64), hot = 0;
  for (int i = 0; i < n; i++) {
    int sdot = tu_count_re(l[i].text, "^\tsdot\t");
    if (!sdot) continue;
    int lane = tu_count_re(l[i].text, "^\tsdot\tv[0-9]+\\.4s, v[0-9]+\\.16b, v[0-9]+\\.4b\\[[0-3]\\]$");
    ck_assert_msg(lane == sdot && tu_count_re(l[i].text, "^\tld1r\t") == 0,
                  "%s: a loop of %d sdot, %d by element, or with ld1r", tmpl, sdot, lane);
    if (sdot < want_sdot) continue; /* a tail tile's (the plane's last 4 pixels) */
    hot++;
    int ldr = tu_count_re(l[i].text, "^\tldr\tq"), ldp = tu_count_re(l[i].text, "^\tldp\tq");
    ck_assert_msg(sdot == want_sdot, "%s: %d sdot in the hot loop (want %d; all by element, "
                  "no ld1r: checked above)", tmpl, sdot, want_sdot);
#if TEC_TEST_LLVM_MAJOR == 14
    ck_assert_msg(ldr == want_ldr && ldp == want_ldp, "%s: %d ldr q, %d ldp q (want %d, %d)",
                  tmpl, ldr, ldp, want_ldr, want_ldp);
#else
    (void)ldr, (void)ldp, (void)want_ldr, (void)want_ldp;
#endif
  }
  ck_assert_int_eq(hot, 1);
  tu_assert_contains(as, "\tfcvtns\tv");
  if (!strcmp(tmpl, "qnn_conv2d")) { /* 16 output bytes per store (2 x 3 in the main tile),
                                      * through a general register (sp's are spills) */
    int q16 = tu_count_re(as, "^\tstr\tq[0-9]+, \\[x") + 2 * tu_count_re(as, "^\tstp\tq[0-9]+, q[0-9]+, \\[x");
    ck_assert_msg(q16 >= 6, "qnn_conv2d: %d 16-byte output stores (str q, stp q)", q16);
  }
  ck_assert_int_eq(tu_count_re(as, "^\tfrintn\t"), 0);
  tu_asm_loops_free(l, n);
  free(as);
  tec_ctx_free(ctx);
}

START_TEST(test_aarch64_int8_by_element) {
  if (tu_emulated()) return; /* the same LLVM emits the same code on the host */
  topi_layout b4 = {TOPI_NCHWC, 4, 0};
  topi_qconv2d pw = {.conv = {.n = 1, .c_in = 256, .h = 28, .w = 28, .c_out = 256, .kh = 1,
                              .kw = 1, .stride_h = 1, .stride_w = 1, .in_layout = b4,
                              .out_layout = b4, .epi = {1, 0, TOPI_ACT_RELU6}},
                     .in = {0.05f, -3}, .out = {0.04f, -128}};
  int8_hot_loop("qnn_conv2d", &pw, 96, 10, 5);
  topi_qdense fc = {.m = 256, .n = 1024, .k = 1024, .bias = 1, .act = TOPI_ACT_RELU,
                    .in = {0.5f, 7}, .out = {0.25f, 0}};
  int8_hot_loop("qnn_dense", &fc, 64, 8, 4);
}
END_TEST

/* The scanner against a hand-counted ARMv7 and AArch64 snippet, and bad input. */
START_TEST(test_stack_scanner) {
  const char *a32 = ".LBB0_1:\n"
                    "\tldr\tr2, [sp, #68]\n"             /* general load */
                    "\tadd\tr4, sp, #512\n"              /* r4 = a stack address */
                    "\tvld1.64\t{d16, d17}, [r4:128]\n"  /* vector load via r4 */
                    "\tvst1.64\t{d18, d19}, [r4:128]\n"  /* vector store via r4 */
                    "\tadd\tr4, r5, #16\n"               /* r4 no longer on the stack */
                    "\tvld1.32\t{d0, d1}, [r4:128]!\n"   /* not the stack */
                    "\tvldr\td2, [sp, #8]\n"             /* vector load */
                    "\tvfma.f32\tq0, q1, q2\n"
                    "\tstr\tr1, [sp]\n"                  /* general store */
                    "\tbne\t.LBB0_1\n";
  tu_stack_access a = tu_asm_stack_access(a32);
  ck_assert_int_eq(a.vec_loads, 2);
  ck_assert_int_eq(a.vec_stores, 1);
  ck_assert_int_eq(a.gpr_loads, 1);
  ck_assert_int_eq(a.gpr_stores, 1);
  a = tu_asm_stack_access("\tldr\tq0, [sp, #16]\n\tstp\tq1, q2, [sp, #32]\n\tldr\tx0, [x1]\n");
  ck_assert_int_eq(a.vec_loads, 1);
  ck_assert_int_eq(a.vec_stores, 1);
  ck_assert_int_eq(a.gpr_loads, 0);
  const char *as = "k_par0:\n.LBB0_1:\n\tvfma.f32\tq0, q1, q2\n.LBB0_2:\n\tadd\tr0, r0, #1\n"
                   "\tbne\t.LBB0_2\n\tbne\t.LBB0_1\n.Lfunc_end0:\n";
  tu_asm_loop l[4];
  int n = tu_asm_inner_loops(as, "k", 1, l, 4);
  ck_assert_int_eq(n, 1); /* the outer loop holds the inner one */
  ck_assert_int_eq(l[0].lines, 3);
  tu_asm_loops_free(l, n);
  ck_assert_int_eq(tu_asm_inner_loops(as, "k", 0, l, 4), 0); /* no function named "k" */
  ck_assert_int_eq(tu_asm_inner_loops("", "k", 1, l, 4), 0);
  ck_assert_int_eq(tu_count_re(as, "("), -1); /* a bad regex */
  a = tu_asm_stack_access("");
  ck_assert_int_eq(a.vec_loads + a.vec_stores + a.gpr_loads + a.gpr_stores, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("arm_tiles");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_stack_scanner);
  tcase_add_test(tc, test_aarch64_defaults_unchanged);
  tcase_add_test(tc, test_aarch64_pointwise_loads_paired);
  tcase_add_test(tc, test_aarch64_int8_by_element);
  tcase_add_loop_test(tc, test_armv7_defaults_stay_off_the_stack, 0, NCASES + NV7);
  tcase_add_test(tc, test_aarch64_tiles_spill_on_armv7);
  tcase_add_test(tc, test_armv7_depthwise_needs_pressure_scheduling);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? 1 : 0;
}

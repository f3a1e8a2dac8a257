/* test_conv2d_nchwc.c — the conv2d NCHW[x]c -> NCHW[y]c template (topi/conv2d_nchwc.c).
 *
 * Every case is declared, scheduled (the target's default config, or one from the space),
 * lowered, JIT-built and run through tec_module_run, then compared with a naive
 * double-precision C reference of conv2d + bias + residual + activation on plain NCHW arrays.
 * Inputs in NCHW[x]c have zero channels past c (as the layout promises) and the template must
 * write zeros there. Covered: a shape sweep (odd and prime sizes, 1x1 outputs, one channel,
 * strides 1/2, padding 0-3, kernels 1/3/7, channel counts the blocks do not divide, n = 2, NCHW
 * input), every non-depthwise MobileNet v1 layer and every ResNet-18 convolution, configs
 * drawn from the space, the kernel packing in prepare, the epilogue fused into the output
 * stage, bad problems and configs (exact messages) and a NEON lowering (fmla on v registers).
 */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "convref.h"
#include "testutil.h"
#include "tec/topi.h"

/* Under qemu and in the ASan build (10-50x and several times slower) the network layers and
 * the configs from the space are a sample; the host build checks them all, and so does the ASan
 * build with TEC_TEST_LONG=1 (a long run, docs/testing.md). */
#define SLICED (tu_emulated() || (tu_sanitized() && !getenv("TEC_TEST_LONG")))

#define NCHWC(b) ((topi_layout){.kind = TOPI_NCHWC, .block = (b)})
#define NCHW_L ((topi_layout){.kind = TOPI_NCHW, .block = 0})

/* A problem: c_in x h x w -> c_out, square kernel k, stride s, pad p. */
static topi_conv2d conv(int64_t n, int64_t ci, int64_t h, int64_t w, int64_t co, int64_t k,
                        int64_t s, int64_t p, topi_layout in, topi_layout out, int bias,
                        int res, topi_act act) {
  return (topi_conv2d){.n = n, .c_in = ci, .h = h, .w = w, .c_out = co, .kh = k, .kw = k,
                       .stride_h = s, .stride_w = s, .pad_h = p, .pad_w = p, .groups = 1,
                       .in_layout = in, .out_layout = out, .epi = {bias, res, act}};
}

/* Declares, schedules (cfg, or the host default when NULL), builds and runs p through the
 * shared driver (tests/support/convref.c: naive double reference, padded output channels 0,
 * packing in prepare). */
static void check_conv(const topi_conv2d *p, const topi_conv2d_nchwc_config *cfg) {
  double err = cr_check_template("conv2d_nchwc", p, cfg);
  ck_assert_msg(err < 1e-4, "%lldx%lldx%lldx%lld -> %lld k%lld s%lld p%lld: relative error %g",
                (long long)p->n, (long long)p->c_in, (long long)p->h, (long long)p->w,
                (long long)p->c_out, (long long)p->kh, (long long)p->stride_h,
                (long long)p->pad_h, err);
}

/* The default config with pad_copy forced to v (when the space allows it). */
static void check_both_pads(const topi_conv2d *p) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  OK(ctx, topi_space_of(ctx, "conv2d_nchwc", p, NULL, &sp));
  topi_conv2d_nchwc_config c = *(const topi_conv2d_nchwc_config *)sp.default_config;
  check_conv(p, &c);
  if (p->pad_h || p->pad_w) {
    c.pad_copy = !c.pad_copy;
    check_conv(p, &c);
  }
  tec_ctx_free(ctx);
}

START_TEST(shape_sweep) {
  topi_act r = TOPI_ACT_RELU, r6 = TOPI_ACT_RELU6, none = TOPI_ACT_NONE;
  const topi_conv2d ps[] = {
      conv(1, 16, 8, 8, 16, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 0, r),
      conv(1, 13, 11, 7, 29, 3, 1, 1, NCHWC(8), NCHWC(16), 1, 1, r6),  /* odd, primes */
      conv(2, 20, 9, 9, 40, 3, 2, 2, NCHWC(16), NCHWC(16), 1, 1, none), /* n = 2, stride 2 */
      conv(1, 1, 5, 6, 1, 3, 1, 0, NCHWC(4), NCHWC(4), 0, 0, none),    /* one channel */
      conv(1, 17, 3, 3, 33, 3, 1, 0, NCHWC(16), NCHWC(16), 1, 0, r),   /* 1x1 output */
      conv(1, 24, 1, 1, 10, 1, 1, 0, NCHWC(8), NCHWC(4), 1, 1, r),     /* 1x1 spatial */
      conv(1, 40, 7, 5, 24, 1, 1, 0, NCHWC(16), NCHWC(8), 0, 1, r6),   /* GEMM form */
      conv(2, 32, 6, 6, 48, 1, 2, 0, NCHWC(16), NCHWC(16), 1, 0, r),   /* 1x1 stride 2 */
      conv(1, 8, 13, 13, 16, 7, 2, 3, NCHWC(8), NCHWC(16), 1, 0, r),   /* 7x7 */
      conv(1, 3, 17, 19, 20, 3, 2, 1, NCHW_L, NCHWC(16), 1, 0, r6),    /* NCHW input */
      conv(1, 3, 11, 11, 8, 7, 2, 3, NCHW_L, NCHWC(8), 0, 0, none),
      conv(1, 16, 10, 10, 16, 1, 1, 1, NCHWC(16), NCHWC(16), 1, 1, r), /* 1x1 padded */
      conv(1, 12, 4, 4, 12, 3, 1, 2, NCHWC(4), NCHWC(4), 0, 0, r),     /* output > input */
  };
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) check_both_pads(&ps[i]);
}
END_TEST

/* MobileNet v1's convolutions that are not depthwise (bias + ReLU fused), 224x224 input. */
START_TEST(mobilenet_v1) {
  static const int64_t pw[][3] = {{32, 112, 64}, {64, 56, 128}, {128, 56, 128}, {128, 28, 256},
                                  {256, 28, 256}, {256, 14, 512}, {512, 14, 512},
                                  {512, 7, 1024}, {1024, 7, 1024}};
  topi_conv2d c0 = conv(1, 3, 224, 224, 32, 3, 2, 1, NCHW_L, NCHWC(16), 1, 0, TOPI_ACT_RELU);
  check_conv(&c0, NULL);
  /* under qemu and ASan, every third layer */
  for (size_t i = 0; i < sizeof pw / sizeof pw[0]; i += SLICED ? 3 : 1) {
    topi_conv2d p = conv(1, pw[i][0], pw[i][1], pw[i][1], pw[i][2], 1, 1, 0, NCHWC(16),
                         NCHWC(16), 1, 0, TOPI_ACT_RELU);
    check_conv(&p, NULL);
  }
}
END_TEST

/* ResNet-18's convolutions (the residual add fused into the second conv of a block). */
START_TEST(resnet18) {
  static const int64_t l[][6] = {
      /* c_in, h, c_out, k, stride, pad */
      {64, 56, 64, 3, 1, 1},   {64, 56, 128, 3, 2, 1}, {128, 28, 128, 3, 1, 1},
      {64, 56, 128, 1, 2, 0},  {128, 28, 256, 3, 2, 1}, {256, 14, 256, 3, 1, 1},
      {128, 28, 256, 1, 2, 0}, {256, 14, 512, 3, 2, 1}, {512, 7, 512, 3, 1, 1},
      {256, 14, 512, 1, 2, 0}};
  topi_conv2d c1 = conv(1, 3, 224, 224, 64, 7, 2, 3, NCHW_L, NCHWC(16), 1, 0, TOPI_ACT_RELU);
  if (!SLICED) check_conv(&c1, NULL); /* a 224x224 7x7 reference: shape_sweep has 7x7 NCHW s2 */
  /* under qemu and ASan, every third layer */
  for (size_t i = 0; i < sizeof l / sizeof l[0]; i += SLICED ? 3 : 1) {
    int res = l[i][4] == 1 && l[i][0] == l[i][2]; /* a block's second conv adds the input */
    topi_conv2d p = conv(1, l[i][0], l[i][1], l[i][1], l[i][2], l[i][3], l[i][4], l[i][5],
                         NCHWC(16), NCHWC(16), 1, res, TOPI_ACT_RELU);
    check_conv(&p, NULL);
  }
}
END_TEST

/* Configs across the space of a padded 3x3 and of a GEMM-form 1x1. */
START_TEST(configs_from_space) {
  const topi_conv2d ps[] = {
      conv(1, 32, 10, 10, 48, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 1, TOPI_ACT_RELU),
      conv(1, 48, 6, 7, 40, 1, 1, 0, NCHWC(16), NCHWC(8), 1, 0, TOPI_ACT_RELU6)};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    tec_ctx *ctx = tec_ctx_new();
    tune_space sp;
    OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &ps[i], NULL, &sp));
    int64_t n = tune_space_range(&sp);
    ck_assert_int_gt(tune_space_size(&sp), 50);
    topi_conv2d_nchwc_config c;
    for (int64_t k = 0; k < (SLICED ? 2 : 6); k++) {
      int64_t idx = (k * 7919 + 13) % n;
      while (tune_space_config(&sp, idx, &c) == 1) idx = (idx + 1) % n; /* the next in the space */
      OK(ctx, tune_space_check(ctx, &sp, &c));
      check_conv(&ps[i], &c);
    }
    tec_ctx_free(ctx);
  }
}
END_TEST

/* The packed kernel is computed in prepare only, the accumulator is a register tile inside the
 * output's loops (no full-size conv buffer), and the registry reaches the same template. */
START_TEST(prepare_and_fusion) {
  tec_ctx *ctx = tec_ctx_new();
  topi_conv2d p = conv(1, 32, 14, 14, 64, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 1, TOPI_ACT_RELU);
  const topi_template *t = topi_template_find("conv2d_nchwc");
  ck_assert_ptr_nonnull(t);
  ck_assert_str_eq(t->name, "conv2d_nchwc");
  topi_op op;
  OK(ctx, topi_instantiate(ctx, t, &p, NULL, &op));
  lower_func *f = tec_lower(op.sched, "conv", op.nargs, op.args);
  ck_assert_msg(f && f->prepare, "%s", tec_ctx_error(ctx));
  const char *prep = tec_lower_str(f->prepare), *run = strstr(tec_lower_str(f), "func conv_run(");
  ck_assert_ptr_nonnull(run);
  tu_assert_contains(prep, "produce kernel_p");
  tu_assert_contains(prep, "produce bias_p");
  assert_not_contains(run, "produce kernel_p");
  assert_not_contains(run, "kernel[");
  /* the default tile for 16-lane targets: conv lives in T x B x 16 floats */
  tune_space sp;
  OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &p, NULL, &sp));
  const topi_conv2d_nchwc_config *c = sp.default_config;
  if (tec_target_vector_bits(ctx, NULL) == 512)
    tu_assert_contains(run, tec_ctx_printf(ctx, "allocate conv[float32 * %lld]",
                                           (long long)(c->ow_tile * c->oh_reg * c->oc_tiles * 16)));
  tec_ctx_free(ctx);
}
END_TEST

/* Register tiles of several output rows (oh_reg 2-4) against the reference: 7x7 outputs
 * (stride 1 with a residual, stride 2; the rows a tile does not divide are peeled) and a 6x8
 * output with dilation 2 and n = 2 under every rows-per-task value that holds the tile's rows
 * (3 rows in tasks of 6: no tail; 4 in 6: a tail in each task); the tile's columns cut until
 * the target's registers hold it. */
START_TEST(tile_rows) {
  const topi_conv2d ps[] = {
      conv(1, 32, 7, 7, 32, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 1, TOPI_ACT_RELU),
      conv(1, 16, 14, 13, 32, 3, 2, 1, NCHWC(16), NCHWC(16), 1, 0, TOPI_ACT_NONE),
      conv(2, 8, 8, 10, 16, 3, 1, 1, NCHWC(8), NCHWC(8), 0, 0, TOPI_ACT_RELU6),
  };
  int tried = 0;
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    topi_conv2d p = ps[i];
    if (i == 2) p.dilation_h = p.dilation_w = 2;
    tec_ctx *ctx = tec_ctx_new();
    tune_space sp;
    OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &p, NULL, &sp));
    const tune_knob *k = &sp.knobs[7];
    ck_assert_str_eq(k->name, "oh_reg");
    ck_assert_int_eq(k->nvalues, 4); /* 1-4: rows narrower than 32 positions */
    const tune_knob *rk = &sp.knobs[4]; /* oh_tile: rows per task */
    for (int h = 1; h < k->nvalues; h++)
      for (int r = 0; r < rk->nvalues; r++) {
        topi_conv2d_nchwc_config c = *(const topi_conv2d_nchwc_config *)sp.default_config;
        c.oh_reg = k->values[h], c.oh_tile = rk->values[r];
        if (c.oh_tile < c.oh_reg) continue;
        OK(ctx, tune_space_check(ctx, &sp, &c));
        while (!tune_space_allows_config(&sp, &c) && c.ow_tile > 1) c.ow_tile--;
        if (!tune_space_allows_config(&sp, &c)) c.oc_tiles = 1;
        ck_assert_msg(tune_space_allows_config(&sp, &c), "%s", tune_config_str(ctx, &sp, &c));
        check_conv(&p, &c);
        tried++;
      }
    tec_ctx_free(ctx);
  }
  ck_assert_int_eq(tried, 12); /* 7 rows: tasks of 7 (3 x); 6: of 2, 3, 6 / 3, 6 / 6 */
}
END_TEST

/* The AVX-512 defaults where measurement moved them (topi/conv2d_nchwc.c, default_tile and
 * copy_def): stride 2 reads the padding inline (the copy would move 4x the input per output),
 * stride 1 copies it; a 7-column output takes a whole-row tile (7 x 2) rather than 4 + 3
 * columns x 4 blocks, and two such rows (28 accumulators). */
START_TEST(avx512_defaults) {
  tec_ctx *ctx = tec_ctx_new();
  const char *avx512 = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512";
  static const struct {
    int64_t c, hw, oc, k, stride, pad;
    int64_t ow_tile, oc_tiles, pad_copy, oh_reg; /* -1: not checked */
  } cases[] = {
      {256, 14, 512, 3, 2, 1, 7, 2, 0, 2},  /* ResNet-18 layer4.0: two rows of 7 */
      {128, 28, 256, 3, 2, 1, 14, 2, 0, 1}, /* layer3.0: the kernel slice streams from L2 */
      {64, 56, 128, 3, 2, 1, 14, 2, 0, 1},  /* layer2.0 */
      {512, 7, 512, 3, 1, 1, 7, 2, 1, 2},    /* layer4 */
      {256, 14, 256, 3, 1, 1, 14, 2, 1, 1},  /* layer3 */
      {128, 28, 128, 3, 1, 1, 14, 2, 1, 1},  /* layer2 */
      {256, 14, 512, 1, 2, 0, 7, 2, 0, 2},   /* layer4 downsample: no padding, only inline */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    topi_conv2d p = conv(1, cases[i].c, cases[i].hw, cases[i].hw, cases[i].oc, cases[i].k,
                         cases[i].stride, cases[i].pad, NCHWC(16), NCHWC(16), 1, 0,
                         TOPI_ACT_RELU);
    tune_space sp;
    OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &p, tec_target_parse(ctx, avx512), &sp));
    const topi_conv2d_nchwc_config *c = sp.default_config;
    if (cases[i].ow_tile >= 0) {
      ck_assert_msg(c->ow_tile == cases[i].ow_tile && c->oc_tiles == cases[i].oc_tiles,
                    "case %zu: tile %lld x %lld, expected %lld x %lld", i, (long long)c->ow_tile,
                    (long long)c->oc_tiles, (long long)cases[i].ow_tile,
                    (long long)cases[i].oc_tiles);
    }
    ck_assert_msg(c->pad_copy == cases[i].pad_copy, "case %zu: pad_copy %lld, expected %lld", i,
                  (long long)c->pad_copy, (long long)cases[i].pad_copy);
    ck_assert_msg(c->oh_reg == cases[i].oh_reg, "case %zu: oh_reg %lld, expected %lld", i,
                  (long long)c->oh_reg, (long long)cases[i].oh_reg);
  }
  tec_ctx_free(ctx);
}
END_TEST

/* The 14 x 2 AVX-512 tile holds 31 zmm registers (28 accumulators, 2 weights, 1 broadcast):
 * with LLVM's machine scheduler as tec sets it up (codegen_llvm/target.c) its hot loops (the
 * blocks of one kx step: 16 input lanes x 28 accumulators = 448 vfmadd) hold 4 zmm stack
 * accesses in all (LLVM 14, and llc 19 on the same IR); with the scheduler's default cyclic
 * critical path heuristic 179 (LLVM 14) and 86 (llc 19 on LLVM 14's IR; tec built on LLVM 19
 * optimizes it otherwise and stays under the bound either way): accumulators spilled. Counted: zmm
 * lines that address the stack, in every block with >= 448 vfmadd. */
static int has(const char *l, size_t n, const char *w) {
  size_t k = strlen(w);
  for (size_t i = 0; i + k <= n; i++)
    if (memcmp(l + i, w, k) == 0) return 1;
  return 0;
}

static void hot_blocks(const char *s, int *blocks, int *zmm_stack) {
  int f = 0, z = 0;
  *blocks = *zmm_stack = 0;
  for (const char *l = s; l;) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    int label = n > 0 && l[n - 1] == ':' && l[0] != '\t';
    if (label || !e) { /* a block ends */
      if (f >= 448) (*blocks)++, *zmm_stack += z;
      f = z = 0;
    }
    if (has(l, n, "vfmadd")) f++;
    if (has(l, n, "(%rsp)") && has(l, n, "zmm")) z++;
    l = e ? e + 1 : NULL;
  }
}

START_TEST(avx512_tile_no_spill) {
  tec_ctx *ctx = tec_ctx_new();
  const char *avx512 = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512";
  topi_conv2d p = conv(1, 128, 28, 28, 256, 3, 2, 1, NCHWC(16), NCHWC(16), 1, 0, TOPI_ACT_RELU);
  topi_decl d;
  tune_space sp;
  topi_op op;
  OK(ctx, topi_declare(ctx, "conv2d_nchwc", &p, &d));
  OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &p, tec_target_parse(ctx, avx512), &sp));
  topi_conv2d_nchwc_config c = *(const topi_conv2d_nchwc_config *)sp.default_config;
  ck_assert_int_eq(c.ow_tile * c.oc_tiles, 28);
  OK(ctx, topi_schedule(&d, &c, tec_target_parse(ctx, avx512), &op));
  lower_func *f = tec_lower(op.sched, "conv", op.nargs, op.args);
  char *s = tu_emit_text(ctx, f, avx512, TEC_EMIT_ASM);
  int blocks, zmm_stack;
  hot_blocks(s, &blocks, &zmm_stack);
  ck_assert_msg(blocks >= 1, "no block with 448 vfmadd (one kx step of the 14 x 2 tile)");
  ck_assert_msg(zmm_stack <= 8, "%d zmm stack accesses (spills) in the %d hot blocks", zmm_stack,
                blocks);
  free(s);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  tune_space sp;
  topi_op op;
  topi_conv2d p = conv(1, 0, 8, 8, 16, 3, 1, 1, NCHWC(16), NCHWC(16), 0, 0, TOPI_ACT_NONE);
  ck_assert_int_eq(topi_declare(ctx, "conv2d_nchwc", &p, &d), -1);
  assert_err(ctx, "conv2d_nchwc: sizes, kernel and strides must be >= 1 and padding >= 0 (got "
                  "n=1 c_in=0 h=8 w=8 c_out=16 kernel=3x3 stride=1x1 pad=1x1)");
  tec_ctx_clear_error(ctx);
  p = conv(1, 16, 8, 8, 16, 3, 1, 1, NCHWC(16), NCHWC(16), 0, 0, TOPI_ACT_NONE);
  p.groups = 2;
  ck_assert_int_eq(topi_declare(ctx, "conv2d_nchwc", &p, &d), -1);
  assert_err(ctx, "conv2d_nchwc: groups = 2 is not supported (only groups = 1; depthwise "
                  "convolutions: depthwise_nchwc or dw_spatial_pack)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_space_of(ctx, "conv2d_nchwc", &p, NULL, &sp), -1);
  assert_err(ctx, "conv2d_nchwc: groups = 2 is not supported (only groups = 1; depthwise "
                  "convolutions: depthwise_nchwc or dw_spatial_pack)");
  tec_ctx_clear_error(ctx);
  p.groups = 1;
  p.in_layout = (topi_layout){.kind = TOPI_NHWC, .block = 0};
  ck_assert_int_eq(topi_declare(ctx, "conv2d_nchwc", &p, &d), -1);
  assert_err(ctx, "conv2d_nchwc: input layout NHWC is not supported (NCHW<x>c or NCHW)");
  tec_ctx_clear_error(ctx);
  p.in_layout = NCHWC(16), p.out_layout = NCHW_L;
  ck_assert_int_eq(topi_declare(ctx, "conv2d_nchwc", &p, &d), -1);
  assert_err(ctx, "conv2d_nchwc: output layout NCHW is not supported (NCHW<y>c)");
  tec_ctx_clear_error(ctx);
  p.out_layout = NCHWC(16), p.kh = p.kw = 11;
  ck_assert_int_eq(topi_declare(ctx, "conv2d_nchwc", &p, &d), -1);
  assert_err(ctx, "conv2d_nchwc: the 11x11 kernel is larger than the padded 10x10 input");
  tec_ctx_clear_error(ctx);
  /* a knob outside its legal set */
  p = conv(1, 16, 8, 8, 32, 3, 1, 1, NCHWC(16), NCHWC(16), 0, 0, TOPI_ACT_NONE);
  OK(ctx, topi_declare(ctx, "conv2d_nchwc", &p, &d));
  OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &p, NULL, &sp));
  topi_conv2d_nchwc_config c = *(const topi_conv2d_nchwc_config *)sp.default_config;
  c.oc_tiles = 3;
  ck_assert_int_eq(topi_schedule(&d, &c, NULL, &op), -1);
  assert_err(ctx, "conv2d_nchwc: knob 'oc_tiles' = 3 is not legal for this problem and target "
                  "(legal: 1, 2)");
  tec_ctx_clear_error(ctx);
  c = *(const topi_conv2d_nchwc_config *)sp.default_config;
  c.oh_tile = 3;
  ck_assert_int_eq(topi_schedule(&d, &c, NULL, &op), -1);
  assert_err(ctx, "conv2d_nchwc: knob 'oh_tile' = 3 is not legal for this problem and target "
                  "(legal: 1, 2, 4, 8)");
  tec_ctx_clear_error(ctx);
  /* no padding: only the inlined form */
  topi_conv2d q = conv(1, 16, 8, 8, 32, 1, 1, 0, NCHWC(16), NCHWC(16), 0, 0, TOPI_ACT_NONE);
  topi_decl dq;
  OK(ctx, topi_declare(ctx, "conv2d_nchwc", &q, &dq));
  OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &q, NULL, &sp));
  c = *(const topi_conv2d_nchwc_config *)sp.default_config;
  c.pad_copy = 1;
  ck_assert_int_eq(topi_schedule(&dq, &c, NULL, &op), -1);
  assert_err(ctx, "conv2d_nchwc: knob 'pad_copy' = 1 is not legal for this problem and target "
                  "(legal: 0)");
  tec_ctx_clear_error(ctx);
  /* a declaration of another template */
  const topi_template *dsp = topi_template_find("dw_spatial_pack");
  topi_conv2d dw = conv(1, 8, 8, 8, 8, 3, 1, 1, NCHW_L, NCHW_L, 0, 0, TOPI_ACT_NONE);
  dw.groups = 8;
  topi_decl dd;
  OK(ctx, dsp->declare(ctx, &dw, &dd));
  ck_assert_int_eq(topi_schedule(&dd, &c, NULL, &op), -1); /* the checked call: the config's type */
  assert_err(ctx, "topi_schedule: template 'dw_spatial_pack' reads a topi_dw_spatial_pack_config, "
                  "not a topi_conv2d_nchwc_config");
  tec_ctx_clear_error(ctx);
  /* the template's own guard, called through the registry with another's declaration */
  ck_assert_int_eq(topi_template_find("conv2d_nchwc")->schedule(&dd, &c, NULL, &op), -1);
  assert_err(ctx, "conv2d_nchwc: the declaration is of template 'dw_spatial_pack'");
  tec_ctx_clear_error(ctx);
  /* applies() says why */
  const char *why = NULL;
  dw.in_layout = dw.out_layout = NCHWC(8);
  ck_assert_int_eq(topi_template_find("conv2d_nchwc")->applies(ctx, &dw, &why), 0);
  ck_assert_str_eq(why, "groups = 8 is not supported (only groups = 1; depthwise convolutions: "
                        "depthwise_nchwc or dw_spatial_pack)");
  tec_ctx_free(ctx);
}
END_TEST

/* Lines of text matching the extended regex re. */
static int count_re(const char *text, const char *re) {
  regex_t rx;
  ck_assert_int_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB | REG_NEWLINE), 0);
  int n = 0;
  for (const char *p = text; *p;) {
    size_t len = strcspn(p, "\n");
    char *line = malloc(len + 1);
    ck_assert_ptr_nonnull(line);
    memcpy(line, p, len);
    line[len] = '\0';
    n += regexec(&rx, line, 0, NULL, 0) == 0;
    free(line);
    p += len + (p[len] == '\n');
  }
  regfree(&rx);
  return n;
}

/* On NEON (rasp4b, 4 lanes, NCHW4c) the default tile lowers to fmla on q registers. */
START_TEST(neon_lowering) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_conv2d ps[] = {
      conv(1, 32, 14, 14, 32, 3, 1, 1, NCHWC(4), NCHWC(4), 1, 0, TOPI_ACT_RELU),
      conv(1, 32, 14, 14, 64, 1, 1, 0, NCHWC(4), NCHWC(4), 1, 0, TOPI_ACT_RELU)};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    topi_decl d;
    tune_space sp;
    topi_op op;
    OK(ctx, topi_declare(ctx, "conv2d_nchwc", &ps[i], &d));
    OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &ps[i], tec_target_parse(ctx, "rasp4b"), &sp));
    const topi_conv2d_nchwc_config *c = sp.default_config;
    /* 32 q registers: accumulators + one weight vector per block + one input vector */
    ck_assert_int_le(c->ow_tile * c->oc_tiles + c->oc_tiles + 1, 32);
    ck_assert_int_ge(c->ow_tile * c->oc_tiles, 12);
    OK(ctx, topi_schedule(&d, c, tec_target_parse(ctx, "rasp4b"), &op));
    lower_func *f = tec_lower(op.sched, "conv", op.nargs, op.args);
    char *s = tu_emit_text(ctx, f, "rasp4b", TEC_EMIT_ASM);
    tu_assert_contains(s, "fmla\tv");
    tu_assert_contains(s, ".4s");
    /* the 4 input-channel lanes of a position: one q load, each lane read by fmla by element
     * (no broadcast loads) */
    for (int l = 0; l < 4; l++)
      ck_assert_msg(count_re(s, tec_ctx_printf(ctx, "fmla\tv[0-9]+\\.4s, v[0-9]+\\.4s, "
                                                    "v[0-9]+\\.s\\[%d\\]", l)) >= 8,
                    "problem %zu: few fmla by lane %d", i, l);
    ck_assert_msg(count_re(s, "\tld1r\t") == 0, "problem %zu: broadcast loads", i);
    /* two input-channel blocks per unrolled step (32 input channels: 8 blocks) */
    ck_assert_int_eq(c->ic_split, 2);
    ck_assert_int_eq(c->ic_unroll, 1);
    free(s);
  }
  tec_ctx_free(ctx);
}
END_TEST

/* The space's rule (issue #16: a tile past the registers spilled and took LLVM minutes): for
 * AVX-512 (32 zmm, broadcast input) and AArch64 NEON (32 q, the tile's inputs loaded as vectors
 * for fmla by element) and ARMv7 NEON (16 q), every config of the knobs' product is refused
 * exactly when its registers (accumulators + weight vectors + input registers) exceed the
 * file or its unrolled body exceeds 768 vector multiply-adds, counted here independently over
 * the knobs' values; the default is in the space; the tuner's wrap agrees. */
typedef struct rule_case {
  const char *target;
  int64_t lanes, regs;
  int lane; /* AArch64: fmla by element (input loaded as whole vectors) */
} rule_case;

START_TEST(space_register_budget) {
  static const rule_case ts[] = {
      {"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512", 16, 32, 0},
      {"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon", 4, 32, 1},
      {"rasp4b32", 4, 16, 0},
  };
  const topi_conv2d ps[] = {
      /* MobileNet pw12 (GEMM form) and pw13, a padded 3x3 (ResNet), an AArch64 NCHW4c layer */
      conv(1, 512, 7, 7, 1024, 1, 1, 0, NCHWC(16), NCHWC(16), 1, 0, TOPI_ACT_RELU6),
      conv(1, 1024, 7, 7, 1024, 1, 1, 0, NCHWC(16), NCHWC(16), 1, 0, TOPI_ACT_RELU6),
      conv(1, 128, 28, 28, 128, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 0, TOPI_ACT_RELU),
      conv(1, 64, 56, 56, 128, 1, 1, 0, NCHWC(4), NCHWC(4), 1, 0, TOPI_ACT_RELU6),
      conv(1, 512, 7, 7, 512, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 0, TOPI_ACT_RELU), /* rows */
  };
  for (size_t ti = 0; ti < sizeof ts / sizeof ts[0]; ti++)
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
      tec_ctx *ctx = tec_ctx_new();
      const topi_conv2d *p = &ps[pi];
      const rule_case *t = &ts[ti];
      tune_space sp;
      OK(ctx, topi_space_of(ctx, "conv2d_nchwc", p, tec_target_parse(ctx, t->target), &sp));
      ck_assert_ptr_nonnull(sp.rule);
      ck_assert_ptr_nonnull(strstr(sp.rule_doc, "registers"));
      int64_t xb = p->in_layout.block, vpb = (p->out_layout.block + t->lanes - 1) / t->lanes;
      int64_t xu = xb <= 16 ? xb : 1;
      int lane = t->lane && xb % t->lanes == 0;
      /* the count over the knobs' values (nested loops, not the index decoding) */
      const tune_knob *k = sp.knobs;
      ck_assert_str_eq(k[0].name, "ow_tile");
      ck_assert_str_eq(k[1].name, "oc_tiles");
      ck_assert_str_eq(k[2].name, "ic_split");
      ck_assert_str_eq(k[3].name, "ic_unroll");
      ck_assert_str_eq(k[4].name, "oh_tile");
      ck_assert_str_eq(k[6].name, "parallel");
      ck_assert_str_eq(k[7].name, "oh_reg");
      int gemm = p->kh == 1 && p->stride_h == 1 && p->pad_h == 0;
      int64_t in = 0, range = 1, ow = p->w; /* stride 1 in the GEMM form */
      for (int j = 0; j < sp.nknobs; j++) range *= k[j].nvalues;
      for (int a = 0; a < k[0].nvalues; a++)
        for (int b = 0; b < k[1].nvalues; b++)
          for (int c = 0; c < k[2].nvalues; c++)
            for (int u = 0; u < k[3].nvalues; u++)
              for (int r = 0; r < k[4].nvalues; r++)
                for (int q = 0; q < k[6].nvalues; q++)
                  for (int h = 0; h < k[7].nvalues; h++) {
                    int64_t T = k[0].values[a], B = k[1].values[b], S = k[2].values[c];
                    int64_t U = k[3].values[u], R = k[4].values[r], P = k[6].values[q];
                    int64_t H = k[7].values[h];
                    int64_t regs = T * H * B * vpb + B * vpb + (lane ? T * H + 1 : 1);
                    int64_t body = T * H * B * vpb * xu * (U ? S : 1);
                    int one = T == 1 && B == 1 && H == 1; /* always in (not unrolled past 768) */
                    /* GEMM form: rows per task only with rows-first tasks, whose positions
                     * (R * ow) the position tile divides; a tile's rows within a task's */
                    int rows_ok = (!gemm || (P == 2 ? (R * ow) % T == 0 : R == 1)) && H <= R;
                    in += ((regs <= t->regs || one) && (body <= 768 || (one && !U)) && rows_ok) *
                          k[5].nvalues;
                  }
      ck_assert_int_eq(tune_space_range(&sp), range);
      ck_assert_int_eq(tune_space_size(&sp), in);
      ck_assert_int_eq(sp.pruned, range - in);
      ck_assert_int_gt(sp.pruned, 0);
      ck_assert_int_gt(in, 0);
      /* every index: refused exactly when over the budget (or, in the GEMM form, rows per task
       * without rows-first tasks or not cut into whole position tiles) */
      topi_conv2d_nchwc_config c;
      int64_t n = 0;
      for (int64_t i = 0; i < range; i++) {
        int rc = tune_space_config(&sp, i, &c);
        int64_t pos = c.ow_tile * c.oh_reg;
        int64_t regs = pos * c.oc_tiles * vpb + c.oc_tiles * vpb + (lane ? pos + 1 : 1);
        int64_t body = pos * c.oc_tiles * vpb * xu * (c.ic_unroll ? c.ic_split : 1);
        int one = c.ow_tile == 1 && c.oc_tiles == 1 && c.oh_reg == 1;
        int rows_ok = (!gemm || (c.parallel == 2 ? (c.oh_tile * ow) % c.ow_tile == 0
                                                 : c.oh_tile == 1)) &&
                      c.oh_reg <= c.oh_tile;
        int over = (regs > t->regs && !one) || (body > 768 && !(one && !c.ic_unroll)) || !rows_ok;
        ck_assert_msg(rc == (over ? 1 : 0), "%s %s: rc %d, %lld registers, body %lld", t->target,
                      tune_config_str(ctx, &sp, &c), rc, (long long)regs, (long long)body);
        n += rc == 0;
      }
      ck_assert_int_eq(n, in);
      ck_assert_int_eq(tune_space_config(&sp, range, &c), -1);
      /* the default is in the space */
      ck_assert_int_eq(tune_space_allows_config(&sp, sp.default_config), 1);
      /* the last session's blow-up (pw12, AVX-512) is out */
      if (ti == 0 && pi == 0) {
        c = *(const topi_conv2d_nchwc_config *)sp.default_config;
        c.ow_tile = 25, c.oc_tiles = 5, c.ic_split = 16, c.ic_unroll = 1;
        ck_assert_int_eq(tune_space_allows_config(&sp, &c), 0);
        OK(ctx, tune_space_check(ctx, &sp, &c)); /* legal knob values: a hand-written config */
      }
      tec_ctx_free(ctx);
    }
}
END_TEST

int main(void) {
  Suite *s = suite_create("conv2d_nchwc");
  TCase *tc = tcase_create("conv2d_nchwc");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, shape_sweep);
  tcase_add_test(tc, mobilenet_v1);
  tcase_add_test(tc, resnet18);
  tcase_add_test(tc, configs_from_space);
  tcase_add_test(tc, prepare_and_fusion);
  tcase_add_test(tc, tile_rows);
  tcase_add_test(tc, avx512_defaults);
  tcase_add_test(tc, avx512_tile_no_spill);
  tcase_add_test(tc, bad_input);
  tcase_add_test(tc, neon_lowering);
  tcase_add_test(tc, space_register_budget);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

/* test_conv_classic.c — the classic convolution schedules as templates: Winograd F(2x2,3x3) and
 * F(4x4,3x3) (topi/conv2d_winograd.c).
 *
 * Every case runs through the shared driver (tests/support/convref.c): declared, scheduled,
 * lowered, JIT-built, run twice (prepare, then run) on seeded data and compared with a naive
 * double-precision conv2d + bias + residual + activation on plain NCHW arrays; the padded
 * output channels must be zero and the kernel transform/packing must be in prepare. Covered:
 * the transform matrices against the 1-d correlation they promise (in double), a shape sweep
 * (odd and prime sizes, padding 0/1/2, channel counts the blocks do not divide, n = 2, NCHW
 * input, outputs smaller than one tile), ResNet-18's 3x3 stride-1 layers with the error of each
 * tile size measured, configs from the space, and bad problems and configs (exact messages).
 * Dilation (2x2 and 2x1, with padding and stride) on every template that computes it, and its
 * bad input: a negative dilation, a dilated kernel larger than the padded input, Winograd's
 * refusal and the pick that passes it by.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "convref.h"
#include "testutil.h"
#include "tec/topi.h"
#include "topi/internal.h"

/* under the sanitizers the naive reference of the large layers is slow: fewer of them */
#if defined(__SANITIZE_ADDRESS__)
#define TC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TC_SANITIZED 1
#endif
#endif
#ifndef TC_SANITIZED
#define TC_SANITIZED 0
#endif

#define NCHWC(b) ((topi_layout){.kind = TOPI_NCHWC, .block = (b)})
#define NCHW_L ((topi_layout){.kind = TOPI_NCHW, .block = 0})

static topi_conv2d conv(int64_t n, int64_t ci, int64_t h, int64_t w, int64_t co, int64_t k,
                        int64_t s, int64_t p, topi_layout in, topi_layout out, int bias,
                        int res, topi_act act) {
  return (topi_conv2d){.n = n, .c_in = ci, .h = h, .w = w, .c_out = co, .kh = k, .kw = k,
                       .stride_h = s, .stride_w = s, .pad_h = p, .pad_w = p, .groups = 1,
                       .in_layout = in, .out_layout = out, .epi = {bias, res, act}};
}

static const char *describe(const topi_conv2d *p) {
  static char buf[160];
  snprintf(buf, sizeof buf, "n%lld %lldx%lldx%lld -> %lld k%lld s%lld p%lld g%lld",
           (long long)p->n, (long long)p->c_in, (long long)p->h, (long long)p->w,
           (long long)p->c_out, (long long)p->kh, (long long)p->stride_h, (long long)p->pad_h,
           (long long)(p->groups ? p->groups : 1));
  return buf;
}

/* ---------- Winograd ---------- */

/* A winograd config: the space's default with m forced. */
static topi_conv2d_winograd_config wino_cfg(const topi_conv2d *p, int64_t m) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  OK(ctx, topi_space_of(ctx, "conv2d_winograd", p, NULL, &sp));
  topi_conv2d_winograd_config c = *(const topi_conv2d_winograd_config *)sp.default_config;
  c.m = m;
  tec_ctx_free(ctx);
  return c;
}

static double check_wino(const topi_conv2d *p, int64_t m, double tol) {
  topi_conv2d_winograd_config c = wino_cfg(p, m);
  double err = cr_check_template("conv2d_winograd", p, &c);
  ck_assert_msg(err < tol, "winograd F(%lld): %s: relative error %g (tolerance %g)",
                (long long)m, describe(p), err, tol);
  return err;
}

/* The matrices do what they promise: AT ((G w) . (BT d)) is the correlation, in double, for
 * random w and d; and the known F(2,3) matrices (Lavin & Gray) come out up to row signs. */
START_TEST(winograd_matrices) {
  double at[4 * 6], g[6 * 3], bt[6 * 6];
  unsigned seed = 7;
  for (int m = 2; m <= 4; m += 2) {
    int n = m + 2;
    ck_assert_int_eq(topi_winograd_matrices(m, 3, at, g, bt), 0);
    for (int trial = 0; trial < 20; trial++) {
      double w[3], d[6], gw[6], bd[6];
      for (int k = 0; k < 3; k++) w[k] = (double)(rand_r(&seed) % 2001 - 1000) / 1000;
      for (int k = 0; k < n; k++) d[k] = (double)(rand_r(&seed) % 2001 - 1000) / 1000;
      for (int e = 0; e < n; e++) {
        gw[e] = bd[e] = 0;
        for (int k = 0; k < 3; k++) gw[e] += g[e * 3 + k] * w[k];
        for (int k = 0; k < n; k++) bd[e] += bt[e * n + k] * d[k];
      }
      for (int i = 0; i < m; i++) {
        double y = 0, ref = 0;
        for (int e = 0; e < n; e++) y += at[i * n + e] * gw[e] * bd[e];
        for (int k = 0; k < 3; k++) ref += w[k] * d[i + k];
        ck_assert_msg(fabs(y - ref) < 1e-12, "F(%d,3): y[%d] = %.17g, correlation %.17g", m, i,
                      y, ref);
      }
    }
  }
  ck_assert_int_eq(topi_winograd_matrices(2, 3, at, g, bt), 0);
  static const double bt2[16] = {-1, 0, 1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, -1, 0, 1};
  static const double g2[12] = {-1, 0, 0, .5, .5, .5, .5, -.5, .5, 0, 0, 1};
  static const double at2[8] = {1, 1, 1, 0, 0, 1, -1, 1};
  for (int i = 0; i < 16; i++) ck_assert_double_eq(bt[i], bt2[i]);
  for (int i = 0; i < 12; i++) ck_assert_double_eq(g[i], g2[i]);
  for (int i = 0; i < 8; i++) ck_assert_double_eq(at[i], at2[i]);
  ck_assert_int_eq(topi_winograd_matrices(3, 3, at, g, bt), -1);
  ck_assert_int_eq(topi_winograd_matrices(4, 5, at, g, bt), -1);
}
END_TEST

START_TEST(winograd_sweep) {
  topi_act r = TOPI_ACT_RELU, r6 = TOPI_ACT_RELU6, none = TOPI_ACT_NONE;
  const topi_conv2d ps[] = {
      conv(1, 16, 8, 8, 16, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 0, r),
      conv(1, 13, 11, 7, 29, 3, 1, 1, NCHWC(8), NCHWC(16), 1, 1, r6), /* odd, primes */
      conv(2, 20, 9, 13, 40, 3, 1, 2, NCHWC(16), NCHWC(16), 1, 1, none), /* n = 2, pad 2 */
      conv(1, 1, 5, 6, 1, 3, 1, 0, NCHWC(4), NCHWC(4), 0, 0, none),   /* one channel, pad 0 */
      conv(1, 17, 3, 3, 33, 3, 1, 0, NCHWC(16), NCHWC(16), 1, 0, r),  /* 1x1 output */
      conv(1, 3, 17, 19, 20, 3, 1, 1, NCHW_L, NCHWC(16), 1, 0, r6),   /* NCHW input */
      conv(1, 12, 4, 4, 12, 3, 1, 2, NCHWC(4), NCHWC(4), 0, 0, r),    /* output > input */
      conv(2, 7, 10, 5, 5, 3, 1, 0, NCHWC(8), NCHWC(8), 1, 1, r),     /* pad 0, tiles overhang */
  };
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    check_wino(&ps[i], 2, 1e-5);
    check_wino(&ps[i], 4, 1e-4);
  }
}
END_TEST

/* ResNet-18's 3x3 stride-1 layers (bias, ReLU, the residual fused): the error of F(2x2) and
 * F(4x4) against the double reference, beside the direct template's, printed (the bound the
 * docs quote) and bounded. Under qemu, the smallest layer only; under the sanitizers, the two
 * smallest. */
START_TEST(winograd_resnet18_error) {
  static const int64_t l[][2] = {{64, 56}, {128, 28}, {256, 14}, {512, 7}};
  for (int i = tu_emulated() ? 3 : TC_SANITIZED ? 2 : 0; i < 4; i++) {
    topi_conv2d p = conv(1, l[i][0], l[i][1], l[i][1], l[i][0], 3, 1, 1, NCHWC(16), NCHWC(16), 1,
                         1, TOPI_ACT_RELU);
    double e2 = check_wino(&p, 2, 1e-4), e4 = check_wino(&p, 4, 3e-4);
    double ed = cr_check_template("conv2d_nchwc", &p, NULL);
    printf("winograd error, ResNet-18 %lldx%lldx%lld 3x3: direct %.2e  F(2x2,3x3) %.2e  "
           "F(4x4,3x3) %.2e\n",
           (long long)l[i][0], (long long)l[i][1], (long long)l[i][1], ed, e2, e4);
  }
}
END_TEST

/* ---------- im2col + GEMM ---------- */

static void check_im2col(const topi_conv2d *p, const topi_conv2d_im2col_config *cfg) {
  double err = cr_check_template("conv2d_im2col", p, cfg);
  ck_assert_msg(err < 1e-4, "im2col: %s: relative error %g", describe(p), err);
}

#define NHWC_L ((topi_layout){.kind = TOPI_NHWC, .block = 0})

START_TEST(im2col_sweep) {
  topi_act r = TOPI_ACT_RELU, r6 = TOPI_ACT_RELU6, none = TOPI_ACT_NONE;
  topi_conv2d ps[] = {
      conv(1, 16, 8, 8, 16, 3, 1, 1, NHWC_L, NHWC_L, 1, 0, r),
      conv(1, 13, 11, 7, 29, 3, 1, 1, NHWC_L, NHWC_L, 1, 1, r6),   /* odd, primes */
      conv(2, 20, 9, 9, 40, 3, 2, 2, NHWC_L, NHWC_L, 1, 1, none),  /* n = 2, stride 2, pad 2 */
      conv(1, 1, 5, 6, 1, 3, 1, 0, NHWC_L, NHWC_L, 0, 0, none),    /* one channel */
      conv(1, 17, 3, 3, 33, 3, 1, 0, NHWC_L, NHWC_L, 1, 0, r),     /* 1x1 output */
      conv(1, 24, 7, 5, 10, 1, 1, 0, NHWC_L, NHWC_L, 1, 1, r),     /* 1x1 kernel */
      conv(2, 32, 6, 6, 48, 1, 2, 0, NHWC_L, NHWC_L, 1, 0, r),     /* 1x1 stride 2 */
      conv(1, 8, 13, 13, 16, 7, 2, 3, NHWC_L, NHWC_L, 1, 0, r),    /* 7x7 */
      conv(1, 3, 17, 19, 20, 3, 2, 1, NCHW_L, NHWC_L, 1, 0, r6),   /* NCHW input */
      conv(1, 20, 9, 7, 24, 3, 1, 1, NCHWC(8), NHWC_L, 1, 0, r),   /* NCHW8c input */
      conv(1, 12, 4, 4, 12, 3, 1, 2, NHWC_L, NHWC_L, 0, 0, r),     /* output > input */
      conv(2, 12, 9, 11, 18, 3, 1, 1, NHWC_L, NHWC_L, 1, 1, r),    /* groups 3 */
      conv(1, 32, 10, 10, 32, 3, 2, 1, NHWC_L, NHWC_L, 1, 0, r6),  /* depthwise */
  };
  ps[11].groups = 3, ps[12].groups = 32;
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) check_im2col(&ps[i], NULL);
}
END_TEST

/* ---------- spatial pack ---------- */

static void check_spatial(const topi_conv2d *p, const topi_conv2d_spatial_pack_config *cfg) {
  double err = cr_check_template("conv2d_spatial_pack", p, cfg);
  ck_assert_msg(err < 1e-4, "spatial_pack: %s: relative error %g", describe(p), err);
}

START_TEST(spatial_pack_sweep) {
  topi_act r = TOPI_ACT_RELU, r6 = TOPI_ACT_RELU6, none = TOPI_ACT_NONE;
  const topi_conv2d ps[] = {
      conv(1, 16, 8, 8, 16, 3, 1, 1, NCHW_L, NCHW_L, 1, 0, r),
      conv(1, 13, 11, 7, 29, 3, 1, 1, NCHW_L, NCHW_L, 1, 1, r6),   /* odd, primes */
      conv(2, 20, 9, 9, 40, 3, 2, 2, NCHW_L, NCHW_L, 1, 1, none),  /* n = 2, stride 2, pad 2 */
      conv(1, 1, 5, 6, 1, 3, 1, 0, NCHW_L, NCHW_L, 0, 0, none),    /* one channel */
      conv(1, 17, 3, 3, 33, 3, 1, 0, NCHW_L, NCHW_L, 1, 0, r),     /* 1x1 output */
      conv(1, 24, 7, 5, 10, 1, 1, 0, NCHW_L, NCHW_L, 1, 1, r),     /* 1x1 kernel */
      conv(1, 8, 13, 13, 16, 7, 2, 3, NCHW_L, NCHW_L, 1, 0, r),    /* 7x7 */
      conv(1, 12, 4, 4, 12, 3, 1, 2, NCHW_L, NCHW_L, 0, 0, r),     /* output > input */
  };
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) check_spatial(&ps[i], NULL);
}
END_TEST

/* ---------- what runs where ---------- */

static const char *lowered(tec_ctx *ctx, const char *name, const topi_conv2d *p, lower_func **fp) {
  topi_op op;
  OK(ctx, topi_instantiate(ctx, topi_template_find(name), p, NULL, &op));
  lower_func *f = tec_lower(op.sched, "conv", op.nargs, op.args);
  ck_assert_msg(f && f->prepare, "%s: %s", name, tec_ctx_error(ctx));
  *fp = f;
  return strstr(tec_lower_str(f), "func conv_run(");
}

/* The kernel transform / packing in prepare only; im2col never a whole-matrix buffer (mr rows
 * of it per row block); winograd's transforms stages of their own. */
START_TEST(prepare_and_placement) {
  tec_ctx *ctx = tec_ctx_new();
  lower_func *f;
  topi_conv2d p = conv(1, 32, 14, 14, 48, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 1, TOPI_ACT_RELU);
  const char *run = lowered(ctx, "conv2d_winograd", &p, &f), *prep = tec_lower_str(f->prepare);
  ck_assert_ptr_nonnull(run);
  tu_assert_contains(prep, "produce kernel_w");
  tu_assert_contains(prep, "produce wino_G");
  assert_not_contains(run, "produce kernel_w");
  assert_not_contains(run, "kernel[");
  tu_assert_contains(run, "produce wino_in");
  tu_assert_contains(run, "produce wino_m");
  /* the input transform's row half is computed per tile inside wino_in, not as a whole tensor */
  const char *in = strstr(run, "produce wino_in"), *rows = strstr(run, "produce wino_rows");
  ck_assert_msg(in && rows && rows > in && rows < strstr(run, "produce wino_m"),
                "wino_rows is not computed inside wino_in");

  p = conv(1, 32, 14, 14, 48, 3, 1, 1, NHWC_L, NHWC_L, 1, 1, TOPI_ACT_RELU);
  run = lowered(ctx, "conv2d_im2col", &p, &f), prep = tec_lower_str(f->prepare);
  ck_assert_ptr_nonnull(run);
  tu_assert_contains(prep, "produce kernel_p");
  assert_not_contains(run, "kernel[");
  tune_space sp;
  OK(ctx, topi_space_of(ctx, "conv2d_im2col", &p, NULL, &sp));
  const topi_conv2d_im2col_config *c = sp.default_config;
  tu_assert_contains(run, tec_ctx_printf(ctx, "allocate im2col[float32 * %lld]",
                                         (long long)(c->mr * 9 * 32)));

  p = conv(1, 32, 14, 14, 48, 3, 1, 1, NCHW_L, NCHW_L, 1, 1, TOPI_ACT_RELU);
  run = lowered(ctx, "conv2d_spatial_pack", &p, &f), prep = tec_lower_str(f->prepare);
  ck_assert_ptr_nonnull(run);
  tu_assert_contains(prep, "produce kernel_vec");
  assert_not_contains(run, "kernel[");
  tu_assert_contains(run, "produce data_vec");
  tec_ctx_free(ctx);
}
END_TEST

/* Configs drawn across each template's space. */
START_TEST(configs_from_space) {
  const struct {
    const char *name;
    topi_conv2d p;
  } cs[] = {
      {"conv2d_winograd", conv(1, 20, 9, 10, 24, 3, 1, 1, NCHWC(8), NCHWC(8), 1, 1, TOPI_ACT_RELU)},
      {"conv2d_im2col", conv(1, 20, 9, 10, 24, 3, 2, 1, NHWC_L, NHWC_L, 1, 1, TOPI_ACT_RELU6)},
      {"conv2d_spatial_pack", conv(1, 20, 9, 10, 24, 3, 1, 1, NCHW_L, NCHW_L, 1, 1, TOPI_ACT_RELU)},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    tec_ctx *ctx = tec_ctx_new();
    const topi_template *t = topi_template_find(cs[i].name);
    ck_assert_ptr_nonnull(t);
    tune_space sp;
    OK(ctx, t->space(ctx, &cs[i].p, NULL, &sp));
    int64_t n = tune_space_range(&sp);
    ck_assert_int_gt(tune_space_size(&sp), 20);
    void *c = malloc(sp.config_size);
    for (int64_t k = 0; k < (tu_emulated() ? 2 : 4); k++) {
      int64_t idx = (k * 7919 + 13) % n;
      while (tune_space_config(&sp, idx, c) == 1) idx = (idx + 1) % n; /* the next in the space */
      double err = cr_check_template(cs[i].name, &cs[i].p, c);
      ck_assert_msg(err < 1e-4, "%s [%s]: relative error %g", cs[i].name,
                    tune_config_str(ctx, &sp, c), err);
    }
    free(c);
    tec_ctx_free(ctx);
  }
}
END_TEST

static void refused(const char *name, const topi_conv2d *p, const char *msg) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find(name);
  topi_decl d;
  tune_space sp;
  const char *why = NULL;
  ck_assert_int_eq(t->applies(ctx, p, &why), 0);
  ck_assert_int_eq(t->declare(ctx, p, &d), -1);
  assert_err(ctx, msg);
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(t->space(ctx, p, NULL, &sp), -1);
  assert_err(ctx, msg);
  tec_ctx_free(ctx);
}

START_TEST(bad_input) {
  topi_act none = TOPI_ACT_NONE;
  topi_conv2d p = conv(1, 16, 8, 8, 16, 3, 2, 1, NCHWC(16), NCHWC(16), 0, 0, none);
  refused("conv2d_winograd", &p, "conv2d_winograd: a 3x3 kernel with stride 2x2 is not supported "
                                 "(3x3, stride 1 only)");
  p = conv(1, 16, 8, 8, 16, 5, 1, 2, NCHWC(16), NCHWC(16), 0, 0, none);
  refused("conv2d_winograd", &p, "conv2d_winograd: a 5x5 kernel with stride 1x1 is not supported "
                                 "(3x3, stride 1 only)");
  p = conv(1, 16, 8, 8, 16, 3, 1, 1, NCHWC(16), NCHWC(16), 0, 0, none);
  p.groups = 2;
  refused("conv2d_winograd", &p, "conv2d_winograd: groups = 2 is not supported (only groups = 1)");
  refused("conv2d_spatial_pack", &p, "conv2d_spatial_pack: groups = 2 is not supported (only "
                                     "groups = 1; grouped: conv2d_im2col)");
  p.groups = 3;
  refused("conv2d_im2col", &p, "conv2d_im2col: groups = 3 must be >= 1 and divide c_in = 16 and "
                               "c_out = 16");
  p.groups = 1;
  refused("conv2d_im2col", &p, "conv2d_im2col: output layout NCHW16c is not supported (NHWC: the "
                               "GEMM's rows are the output positions, its columns the channels)");
  refused("conv2d_spatial_pack", &p, "conv2d_spatial_pack: layouts NCHW16c -> NCHW16c are not "
                                     "supported (NCHW -> NCHW)");
  p.out_layout = NCHW_L;
  refused("conv2d_winograd", &p, "conv2d_winograd: output layout NCHW is not supported (NCHW<y>c)");
  p.out_layout = NCHWC(16), p.in_layout = NHWC_L;
  refused("conv2d_winograd", &p, "conv2d_winograd: input layout NHWC is not supported (NCHW<x>c "
                                 "or NCHW)");
  p = conv(1, 0, 8, 8, 16, 3, 1, 1, NHWC_L, NHWC_L, 0, 0, none);
  refused("conv2d_im2col", &p, "conv2d_im2col: sizes, kernel and strides must be >= 1 and padding "
                               ">= 0 (got n=1 c_in=0 h=8 w=8 c_out=16 kernel=3x3 stride=1x1 "
                               "pad=1x1)");
  p = conv(1, 4, 2, 2, 4, 3, 1, 0, NCHW_L, NCHW_L, 0, 0, none);
  refused("conv2d_spatial_pack", &p, "conv2d_spatial_pack: the 3x3 kernel is larger than the "
                                     "padded 2x2 input");

  /* configs out of the space, a declaration of another template, NULLs */
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d, d2;
  topi_op op;
  p = conv(1, 16, 8, 8, 16, 3, 1, 1, NCHWC(16), NCHWC(16), 0, 0, none);
  OK(ctx, topi_declare(ctx, "conv2d_winograd", &p, &d));
  topi_conv2d_winograd_config wc = wino_cfg(&p, 3);
  ck_assert_int_eq(topi_schedule(&d, &wc, NULL, &op), -1);
  assert_err(ctx, "conv2d_winograd: knob 'm' = 3 is not legal for this problem and target "
                  "(legal: 2, 4)");
  tec_ctx_clear_error(ctx);
  topi_conv2d q = conv(1, 16, 8, 8, 16, 3, 1, 1, NCHW_L, NCHW_L, 0, 0, none);
  OK(ctx, topi_declare(ctx, "conv2d_spatial_pack", &q, &d2));
  topi_conv2d_spatial_pack_config sc = {.vc = 16, .vh = 1, .vw = 1, .parallel = 1};
  ck_assert_int_eq(topi_schedule(&d, &sc, NULL, &op), -1); /* the checked call: the config's type */
  assert_err(ctx, "topi_schedule: template 'conv2d_winograd' reads a topi_conv2d_winograd_config, "
                  "not a topi_conv2d_spatial_pack_config");
  tec_ctx_clear_error(ctx); /* the template's own guard, reached through the registry */
  ck_assert_int_eq(topi_template_find("conv2d_spatial_pack")->schedule(&d, &sc, NULL, &op), -1);
  assert_err(ctx, "conv2d_spatial_pack: the declaration is of template 'conv2d_winograd'");
  tec_ctx_clear_error(ctx);
  sc.vh = 9;
  ck_assert_int_eq(topi_schedule(&d2, &sc, NULL, &op), -1);
  tu_assert_contains(tec_ctx_error(ctx), "conv2d_spatial_pack: knob 'vh' = 9 is not legal");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "conv2d_im2col", NULL, &d), -1);
  assert_err(ctx, "conv2d_im2col: problem and decl are required");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- dilation ---------- */

/* p with dilation dh x dw */
static topi_conv2d dilated(topi_conv2d p, int64_t dh, int64_t dw) {
  p.dilation_h = dh, p.dilation_w = dw;
  return p;
}

static void check_dilated(const char *name, const topi_conv2d *p, const void *cfg) {
  double err = cr_check_template(name, p, cfg);
  ck_assert_msg(err < 1e-4, "%s: %s dilation %lldx%lld: relative error %g", name, describe(p),
                (long long)p->dilation_h, (long long)p->dilation_w, err);
}

/* conv2d_nchwc with the padding copied once and inlined into the reads (pad_copy 1 / 0) */
static void check_dilated_nchwc(const topi_conv2d *p) {
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  OK(ctx, topi_space_of(ctx, "conv2d_nchwc", p, NULL, &sp));
  topi_conv2d_nchwc_config c = *(const topi_conv2d_nchwc_config *)sp.default_config;
  tec_ctx_free(ctx);
  check_dilated("conv2d_nchwc", p, &c);
  if (p->pad_h || p->pad_w) c.pad_copy = !c.pad_copy, check_dilated("conv2d_nchwc", p, &c);
}

/* Every template but Winograd on dilation 2x2 and 2x1 (2 along h, none along w), with padding,
 * stride 2 and sizes the tiles do not divide; the output sizes checked by hand first. */
START_TEST(dilation) {
  topi_act r = TOPI_ACT_RELU, r6 = TOPI_ACT_RELU6, none = TOPI_ACT_NONE;
  int64_t oh, ow;
  /* 9x11, 3x3 dilated 2 (extent 5x5), pad 1, stride 2: (9 + 2 - 5) / 2 + 1 = 4, (11 + 2 - 5) / 2
   * + 1 = 5; dilation 2x1: extent 5x3 -> 4 x 6 */
  topi_conv2d q = dilated(conv(1, 8, 9, 11, 8, 3, 2, 1, NCHW_L, NCHW_L, 0, 0, none), 2, 2);
  ck_assert_int_eq(topi_conv2d_out_hw(NULL, &q, &oh, &ow), 0);
  ck_assert_int_eq(oh, 4);
  ck_assert_int_eq(ow, 5);
  ck_assert_double_eq(topi_conv2d_flops(&q), 2.0 * 8 * 4 * 5 * 8 * 9);
  q.dilation_w = 1;
  ck_assert_int_eq(topi_conv2d_out_hw(NULL, &q, &oh, &ow), 0);
  ck_assert_int_eq(oh, 4);
  ck_assert_int_eq(ow, 6);
  q.dilation_w = 0; /* 0 reads as 1 */
  ck_assert_int_eq(topi_conv2d_out_hw(NULL, &q, &oh, &ow), 0);
  ck_assert_int_eq(ow, 6);

  const int64_t dil[][2] = {{2, 2}, {2, 1}};
  for (int k = 0; k < 2; k++) {
    int64_t dh = dil[k][0], dw = dil[k][1];
    /* direct, blocked: stride 1 pad 2 (the output keeps the input's size), stride 2 pad 1,
     * NCHW input, 5x5 kernel unpadded */
    topi_conv2d pn[] = {
        dilated(conv(1, 16, 11, 13, 24, 3, 1, 2, NCHWC(8), NCHWC(8), 1, 1, r), dh, dw),
        dilated(conv(2, 12, 14, 10, 20, 3, 2, 1, NCHWC(4), NCHWC(16), 1, 0, r6), dh, dw),
        dilated(conv(1, 3, 15, 17, 16, 3, 2, 3, NCHW_L, NCHWC(8), 1, 0, r), dh, dw),
        dilated(conv(1, 8, 13, 12, 8, 5, 1, 0, NCHWC(8), NCHWC(8), 0, 0, none), dh, dw),
    };
    for (size_t i = 0; i < sizeof pn / sizeof pn[0]; i++) check_dilated_nchwc(&pn[i]);
    /* depthwise, blocked and NCHW */
    topi_conv2d pd[] = {
        dilated(conv(1, 24, 12, 11, 24, 3, 1, 2, NCHWC(8), NCHWC(8), 1, 1, r), dh, dw),
        dilated(conv(2, 16, 13, 13, 16, 3, 2, 1, NCHWC(16), NCHWC(16), 1, 0, r6), dh, dw),
    };
    for (size_t i = 0; i < sizeof pd / sizeof pd[0]; i++) {
      pd[i].groups = pd[i].c_in;
      check_dilated("depthwise_nchwc", &pd[i], NULL);
      topi_conv2d pl = pd[i];
      pl.in_layout = pl.out_layout = NCHW_L;
      check_dilated("dw_spatial_pack", &pl, NULL);
    }
    /* im2col (grouped too) and spatial pack */
    topi_conv2d pi[] = {
        dilated(conv(1, 12, 11, 13, 20, 3, 1, 2, NHWC_L, NHWC_L, 1, 1, r), dh, dw),
        dilated(conv(2, 12, 14, 10, 18, 3, 2, 1, NCHW_L, NHWC_L, 1, 0, r6), dh, dw),
        dilated(conv(1, 12, 9, 11, 18, 3, 1, 1, NHWC_L, NHWC_L, 0, 0, none), dh, dw),
    };
    pi[2].groups = 3;
    for (size_t i = 0; i < sizeof pi / sizeof pi[0]; i++)
      check_dilated("conv2d_im2col", &pi[i], NULL);
    topi_conv2d ps[] = {
        dilated(conv(1, 12, 11, 13, 20, 3, 1, 2, NCHW_L, NCHW_L, 1, 1, r), dh, dw),
        dilated(conv(2, 7, 14, 10, 18, 3, 2, 1, NCHW_L, NCHW_L, 1, 0, r6), dh, dw),
        dilated(conv(1, 4, 13, 12, 9, 5, 1, 0, NCHW_L, NCHW_L, 0, 0, none), dh, dw),
    };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
      check_dilated("conv2d_spatial_pack", &ps[i], NULL);
  }
}
END_TEST

START_TEST(dilation_bad_input) {
  topi_act none = TOPI_ACT_NONE;
  topi_conv2d p = dilated(conv(1, 16, 8, 8, 16, 3, 1, 1, NCHWC(16), NCHWC(16), 0, 0, none), 2, 2);
  refused("conv2d_winograd", &p, "conv2d_winograd: dilation 2x2 is not supported (the F(m x m, "
                                 "3 x 3) transforms take 3 adjacent taps: dilation 1 only; "
                                 "conv2d_nchwc or conv2d_spatial_pack compute dilated "
                                 "convolutions)");
  p.dilation_h = 1;
  refused("conv2d_winograd", &p, "conv2d_winograd: dilation 1x2 is not supported (the F(m x m, "
                                 "3 x 3) transforms take 3 adjacent taps: dilation 1 only; "
                                 "conv2d_nchwc or conv2d_spatial_pack compute dilated "
                                 "convolutions)");
  p.dilation_h = -1, p.dilation_w = 1;
  refused("conv2d_nchwc", &p, "conv2d_nchwc: dilation must be >= 1 (0 is read as 1; got -1x1)");
  p.in_layout = p.out_layout = NHWC_L;
  refused("conv2d_im2col", &p, "conv2d_im2col: dilation must be >= 1 (0 is read as 1; got -1x1)");
  /* 3x3 dilated 4 spans 9x9: larger than the padded 8x8 input (undilated it fits) */
  p = dilated(conv(1, 4, 6, 10, 4, 3, 1, 1, NCHW_L, NCHW_L, 0, 0, none), 4, 1);
  refused("conv2d_spatial_pack", &p, "conv2d_spatial_pack: the 3x3 kernel with dilation 4x1 spans "
                                     "9x3, larger than the padded 8x12 input");
  p.groups = 4;
  refused("dw_spatial_pack", &p, "dw_spatial_pack: the 3x3 kernel with dilation 4x1 spans 9x3, "
                                 "larger than the padded 8x12 input");
  int64_t oh, ow;
  tec_ctx *ctx = tec_ctx_new();
  ck_assert_int_eq(topi_conv2d_out_hw(ctx, &p, &oh, &ow), -1);
  assert_err(ctx, "conv2d: the 3x3 kernel spans 9x3 with dilation, larger than the padded 8x12 "
                  "input, or a stride is < 1");
  /* the pick: Winograd's rule does not hold for a dilated 3x3 stride-1 layer: direct */
  const topi_template *t;
  const char *why;
  p = dilated(conv(1, 64, 56, 56, 64, 3, 1, 2, NCHWC(16), NCHWC(16), 1, 0, none), 2, 2);
  tec_ctx_clear_error(ctx);
  OK(ctx, topi_conv2d_pick(ctx, &p, NULL, &t, &why));
  ck_assert_str_eq(why, "conv2d_nchwc: rule 4 (groups 1, blocked output: direct)");
  ck_assert_int_eq(topi_conv2d_pick(ctx, &p, "conv2d_winograd", &t, &why), -1);
  assert_err(ctx, "topi_conv2d_pick: forced template 'conv2d_winograd' does not apply: dilation "
                  "2x2 is not supported (the F(m x m, 3 x 3) transforms take 3 adjacent taps: "
                  "dilation 1 only; conv2d_nchwc or conv2d_spatial_pack compute dilated "
                  "convolutions)");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- the rule table ---------- */

START_TEST(pick) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t;
  const char *why;
  topi_act r = TOPI_ACT_RELU;
  const struct {
    topi_conv2d p;
    int groups;
    const char *want;
  } cs[] = {
      {conv(1, 64, 56, 56, 64, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 0, r), 1, "conv2d_winograd: rule 3"},
      {conv(1, 512, 7, 7, 512, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 0, r), 1, "conv2d_nchwc: rule 4"},
      {conv(1, 64, 56, 56, 128, 3, 2, 1, NCHWC(16), NCHWC(16), 1, 0, r), 1, "conv2d_nchwc: rule 4"},
      {conv(1, 32, 56, 56, 32, 3, 1, 1, NCHWC(16), NCHWC(16), 1, 0, r), 32, "depthwise_nchwc: rule 1"},
      {conv(1, 32, 56, 56, 32, 3, 1, 1, NCHW_L, NCHW_L, 1, 0, r), 32, "dw_spatial_pack: rule 2"},
      {conv(1, 32, 20, 20, 64, 3, 1, 1, NHWC_L, NHWC_L, 1, 0, r), 1, "conv2d_im2col: rule 5"},
      {conv(1, 32, 20, 20, 64, 3, 1, 1, NCHW_L, NCHW_L, 1, 0, r), 1, "conv2d_spatial_pack: rule 6"},
      {conv(1, 32, 20, 20, 64, 3, 1, 1, NCHW_L, NHWC_L, 1, 0, r), 4, "conv2d_im2col: rule 5"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    topi_conv2d p = cs[i].p;
    p.groups = cs[i].groups;
    OK(ctx, topi_conv2d_pick(ctx, &p, NULL, &t, &why));
    ck_assert_msg(!strncmp(why, cs[i].want, strlen(cs[i].want)), "case %zu: %s", i, why);
    ck_assert_int_eq(t->applies(ctx, &p, NULL), 1);
  }
  topi_conv2d p = cs[0].p;
  OK(ctx, topi_conv2d_pick(ctx, &p, "conv2d_nchwc", &t, &why));
  ck_assert_str_eq(why, "conv2d_nchwc: forced");
  ck_assert_int_eq(topi_conv2d_pick(ctx, &p, "conv2d_spatial_pack", &t, &why), -1);
  assert_err(ctx, "topi_conv2d_pick: forced template 'conv2d_spatial_pack' does not apply: "
                  "layouts NCHW16c -> NCHW16c are not supported (NCHW -> NCHW)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_conv2d_pick(ctx, &p, "dense", &t, &why), -1);
  assert_err(ctx, "topi_conv2d_pick: 'dense' is not a conv2d template");
  tec_ctx_clear_error(ctx);
  p.groups = 4, p.out_layout = NCHW_L;
  ck_assert_int_eq(topi_conv2d_pick(ctx, &p, NULL, &t, &why), -1);
  assert_err(ctx, "topi_conv2d_pick: no rule picks a template for NCHW16c -> NCHW, groups 4 "
                  "(NCHW[x]c or NCHW -> NCHW[y]c, NHWC output, or NCHW -> NCHW are covered)");
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("conv_classic");
  TCase *tc = tcase_create("conv_classic");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, winograd_matrices);
  tcase_add_test(tc, winograd_sweep);
  tcase_add_test(tc, winograd_resnet18_error);
  tcase_add_test(tc, im2col_sweep);
  tcase_add_test(tc, spatial_pack_sweep);
  tcase_add_test(tc, prepare_and_placement);
  tcase_add_test(tc, configs_from_space);
  tcase_add_test(tc, bad_input);
  tcase_add_test(tc, pick);
  suite_add_tcase(s, tc);
  TCase *td = tcase_create("dilation");
  tcase_set_timeout(td, 900);
  tcase_add_test(td, dilation);
  tcase_add_test(td, dilation_bad_input);
  suite_add_tcase(s, td);
  return tu_run(s);
}

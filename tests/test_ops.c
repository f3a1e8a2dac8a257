/* test_ops.c — the remaining operators of a network as topi templates (topi/pool.c,
 * topi/softmax.c, topi/eltwise.c) against naive C references (support/opsref.c): max and
 * average pooling (padding excluded and included, stride 2, odd sizes, channels not divisible
 * by the block, batch 2, layout changes), global pooling (NCHW[x]c -> NCHW: the dense layer's
 * input), softmax (inputs that overflow exp without the max subtraction), the residual add
 * with relu / relu6, every config of each space; the 7x7 stride-2 stem convolution from NCHW
 * with 3 input channels (conv2d_nchwc); the fully connected layer (dense, b transposed and
 * constant) on the global pool's output; bad problems and configs with their messages. */
#include <math.h>
#include <stdlib.h>
#include "convref.h"
#include "opsref.h"
#include "testutil.h"

static const topi_layout nchw = {.kind = TOPI_NCHW}, nhwc = {.kind = TOPI_NHWC};
static topi_layout blk(int64_t b) { return (topi_layout){.kind = TOPI_NCHWC, .block = b}; }

static topi_pool pool(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t s,
                      int64_t pad, topi_pool_mode mode, topi_layout in, topi_layout out) {
  return (topi_pool){.n = n, .c = c, .h = h, .w = w, .kh = k, .kw = k, .stride_h = s,
                     .stride_w = s, .pad_h = pad, .pad_w = pad, .mode = mode, .in_layout = in,
                     .out_layout = out};
}

/* Runs every config of template name's space on p; returns the number run. */
static int all_configs(const char *name, const void *p) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find(name);
  ck_assert_ptr_nonnull(t);
  tune_space sp;
  ck_assert_msg(t->space(ctx, p, NULL, &sp) == 0, "%s", tec_ctx_error(ctx));
  int64_t n = tune_space_size(&sp);
  void *cfg = malloc(sp.config_size);
  for (int64_t i = 0; i < n; i++) {
    ck_assert_int_eq(tune_space_config(&sp, i, cfg), 0);
    double err;
    if (t->problem_kind == TOPI_PROBLEM_POOL) err = or_check_pool(name, p, cfg);
    else if (t->problem_kind == TOPI_PROBLEM_SOFTMAX) err = or_check_softmax(p, cfg, 50.0f);
    else err = or_check_eltwise(p, cfg);
    ck_assert_msg(err < 1e-5, "%s config %s: max error %g", name, tune_config_str(ctx, &sp, cfg),
                  err);
  }
  free(cfg);
  tec_ctx_free(ctx);
  return (int)n;
}

START_TEST(max_pool) {
  /* ResNet's 3x3 stride-2 pad-1 pool: odd size, 20 channels in blocks of 16, batch 2 */
  topi_pool p = pool(2, 20, 13, 13, 3, 2, 1, TOPI_POOL_MAX, blk(16), blk(16));
  ck_assert_int_eq(all_configs("pool2d", &p), 8);
  /* all inputs negative: the padding (excluded) must not win */
  p = pool(1, 5, 6, 7, 3, 2, 1, TOPI_POOL_MAX, blk(4), blk(4));
  ck_assert_double_lt(or_check_pool("pool2d", &p, NULL), 1e-6);
  /* 2x2 stride 2, no padding, odd size (the last row / column dropped), layouts */
  const topi_layout ls[][2] = {{nchw, nchw}, {nhwc, nhwc}, {nchw, blk(8)}, {blk(8), nchw},
                               {blk(8), blk(8)}};
  for (int i = 0; i < 5; i++) {
    p = pool(2, 11, 9, 10, 2, 2, 0, TOPI_POOL_MAX, ls[i][0], ls[i][1]);
    ck_assert_double_lt(or_check_pool("pool2d", &p, NULL), 1e-6);
  }
  /* a non-square window with different strides and paddings */
  p = pool(1, 3, 10, 12, 3, 1, 1, TOPI_POOL_MAX, blk(4), blk(4));
  p.kw = 5, p.pad_w = 2, p.stride_w = 3;
  ck_assert_double_lt(or_check_pool("pool2d", &p, NULL), 1e-6);
}
END_TEST

START_TEST(avg_pool) {
  /* padding excluded (the default) and included: the border windows differ */
  topi_pool p = pool(2, 20, 11, 11, 3, 2, 1, TOPI_POOL_AVG, blk(16), blk(16));
  ck_assert_int_eq(all_configs("pool2d", &p), 8);
  double ex = or_check_pool("pool2d", &p, NULL);
  p.count_include_pad = 1;
  ck_assert_int_eq(all_configs("pool2d", &p), 8);
  ck_assert_double_lt(ex, 1e-5);
  /* the references differ at the border: include-pad is not exclude-pad by accident */
  float x[4 * 4], a[4 * 4], b[4 * 4];
  for (int i = 0; i < 16; i++) x[i] = 1.0f;
  topi_pool q = pool(1, 1, 4, 4, 3, 1, 1, TOPI_POOL_AVG, nchw, nchw);
  or_pool2d(&q, 0, x, a);
  q.count_include_pad = 1;
  or_pool2d(&q, 0, x, b);
  ck_assert_float_eq(a[0], 1.0f);
  ck_assert_float_eq_tol(b[0], 4.0f / 9.0f, 1e-6);
  /* NCHW, stride 1, and a window wider than the padding on one axis only */
  p = pool(1, 3, 7, 9, 3, 1, 1, TOPI_POOL_AVG, nchw, nchw);
  p.kw = 2, p.pad_w = 0, p.stride_w = 2;
  ck_assert_double_lt(or_check_pool("pool2d", &p, NULL), 1e-5);
}
END_TEST

START_TEST(global_pool) {
  /* NCHW16c -> NCHW [n][c][1][1]: the dense layer's input, no transform pass */
  topi_pool p = {.n = 2, .c = 20, .h = 7, .w = 7, .mode = TOPI_POOL_AVG, .in_layout = blk(16),
                 .out_layout = nchw};
  ck_assert_int_eq(all_configs("global_pool", &p), 4);
  p.out_layout = blk(16);
  ck_assert_int_eq(all_configs("global_pool", &p), 4);
  p.mode = TOPI_POOL_MAX, p.h = 5, p.w = 3, p.c = 37, p.in_layout = nhwc, p.out_layout = blk(8);
  ck_assert_double_lt(or_check_pool("global_pool", &p, NULL), 1e-6);
}
END_TEST

START_TEST(softmax) {
  /* values up to +-50: exp(50) fits float but the sum of 1000 of them loses nothing only with
   * the max subtracted; +-200 overflows exp without it */
  topi_softmax p = {.m = 3, .n = 1000};
  ck_assert_int_eq(all_configs("softmax", &p), 4);
  p = (topi_softmax){.m = 1, .n = 7};
  ck_assert_int_eq(all_configs("softmax", &p), 4);
  p = (topi_softmax){.m = 2, .n = 37};
  double err = or_check_softmax(&p, NULL, 200.0f);
  ck_assert_msg(err < 1e-5, "softmax of +-200: %g", err);
}
END_TEST

START_TEST(residual_add) {
  topi_eltwise p = {.n = 2, .c = 20, .h = 5, .w = 7, .layout = blk(16), .act = TOPI_ACT_RELU};
  ck_assert_int_eq(all_configs("eltwise_add", &p), 4);
  p.layout = nchw, p.act = TOPI_ACT_RELU6;
  ck_assert_int_eq(all_configs("eltwise_add", &p), 4);
  p.layout = nhwc, p.act = TOPI_ACT_NONE, p.c = 37;
  ck_assert_double_lt(or_check_eltwise(&p, NULL), 1e-6);
}
END_TEST

/* The network's first layer: 7x7 stride 2 pad 3 from NCHW with 3 channels (conv2d_nchwc reads
 * NCHW in place, the input-channel block x = 3), odd sizes, batch 2, bias and relu, and the
 * output channels not divisible by the block. */
START_TEST(stem_conv) {
  topi_conv2d p = {.n = 2, .c_in = 3, .h = 29, .w = 31, .c_out = 24, .kh = 7, .kw = 7,
                   .stride_h = 2, .stride_w = 2, .pad_h = 3, .pad_w = 3, .groups = 1,
                   .in_layout = nchw, .out_layout = blk(16),
                   .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find("conv2d_nchwc");
  ck_assert_int_eq(t->applies(ctx, &p, NULL), 1);
  tec_ctx_free(ctx);
  double err = cr_check_template("conv2d_nchwc", &p, NULL);
  ck_assert_msg(err < 1e-4, "stem: %g", err);
  p.out_layout = blk(8), p.h = p.w = 32, p.n = 1, p.c_out = 64;
  err = cr_check_template("conv2d_nchwc", &p, NULL);
  ck_assert_msg(err < 1e-4, "stem 32x32: %g", err);
}
END_TEST

/* The classifier head: global average pool NCHW16c -> NCHW [n][c][1][1], then the fully
 * connected layer as dense (b transposed: [classes][c], constant, packed in prepare) reading
 * the same buffer as [n][c], with bias. */
START_TEST(fully_connected) {
  const int64_t n = 2, c = 40, hw = 5, classes = 23;
  tec_ctx *ctx = tec_ctx_new();
  topi_pool gp = {.n = n, .c = c, .h = hw, .w = hw, .mode = TOPI_POOL_AVG,
                  .in_layout = blk(16), .out_layout = nchw};
  topi_dense fc = {.m = n, .n = classes, .k = c, .b_transposed = 1, .const_b = 1,
                   .epi = {.bias = 1}};
  topi_op o1, o2;
  OK(ctx, topi_instantiate(ctx, topi_template_find("global_pool"), &gp, NULL, &o1));
  OK(ctx, topi_instantiate(ctx, topi_template_find("dense"), &fc, NULL, &o2));
  lower_func *f[2] = {tec_lower(o1.sched, "gap", o1.nargs, o1.args),
                      tec_lower(o2.sched, "fc", o2.nargs, o2.args)};
  ck_assert_msg(f[0] && f[1], "%s", tec_ctx_error(ctx));
  ck_assert_ptr_nonnull(f[1]->prepare);
  tec_module *m = tec_build(ctx, 2, f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  int64_t sx[4] = {n, c, hw, hw}, sw[2] = {classes, c}, sb = classes, sp[4] = {n, c, 1, 1};
  int64_t sa[2] = {n, c}, so[2] = {n, classes}, sxl[5];
  int nd = cr_shape(blk(16), n, c, hw, hw, sxl);
  DLTensor x = tu_rand_f32(4, sx, 31), w = tu_rand_f32(2, sw, 32), b = tu_rand_f32(1, &sb, 33);
  DLTensor xl = tu_zeros(TEC_F32, nd, sxl), pooled = tu_zeros(TEC_F32, 4, sp);
  DLTensor out = tu_zeros(TEC_F32, 2, so);
  cr_to_layout(blk(16), n, c, hw, hw, x.data, xl.data);
  DLTensor a = pooled; /* the same buffer viewed as [n][c] */
  a.ndim = 2, a.shape = sa;
  DLTensor *g_args[2] = {&xl, &pooled}, *f_args[4] = {&a, &w, &b, &out};
  ck_assert_msg(tec_module_run(m, "gap", 2, g_args) == 0, "%s", tec_rt_last_error());
  ck_assert_msg(tec_module_run(m, "fc", 4, f_args) == 0, "%s", tec_rt_last_error());
  float *ref_p = malloc(sizeof(float) * (size_t)(n * c)), *ref = malloc(sizeof(float) * (size_t)(n * classes));
  or_pool2d(&gp, 1, x.data, ref_p);
  or_fc(n, classes, c, ref_p, w.data, b.data, TOPI_ACT_NONE, ref);
  double err = tu_max_err(out.data, ref, n * classes);
  ck_assert_msg(err < 1e-5, "fc: %g", err);
  free(ref_p), free(ref);
  tec_dl_free(&x), tec_dl_free(&w), tec_dl_free(&b), tec_dl_free(&xl), tec_dl_free(&pooled);
  tec_dl_free(&out);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(registry) {
  const char *names[] = {"pool2d", "global_pool", "softmax", "eltwise_add"};
  const topi_problem_kind kinds[] = {TOPI_PROBLEM_POOL, TOPI_PROBLEM_POOL, TOPI_PROBLEM_SOFTMAX,
                                     TOPI_PROBLEM_ELTWISE};
  for (int i = 0; i < 4; i++) {
    const topi_template *t = topi_template_find(names[i]);
    ck_assert_msg(t != NULL, "%s not registered", names[i]);
    ck_assert_int_eq(t->problem_kind, kinds[i]);
  }
  /* topi_instantiate through the registry, and a config out of the space refused */
  tec_ctx *ctx = tec_ctx_new();
  topi_pool gp = {.n = 1, .c = 8, .h = 3, .w = 3, .mode = TOPI_POOL_AVG, .in_layout = blk(8),
                  .out_layout = nchw};
  topi_decl d;
  topi_op op;
  OK(ctx, topi_declare(ctx, "global_pool", &gp, &d));
  topi_pool_config bad = {.vectorize = 1, .unroll = 1, .parallel = 1};
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_schedule(&d, &bad, NULL, &op), -1);
  assert_err(ctx, "global_pool: knob 'unroll' = 1 is not legal for this problem and target "
                  "(legal: 0)");
  /* a pool declaration handed to the softmax template */
  topi_softmax_config sc = {.vectorize = 1, .parallel = 1};
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_schedule(&d, &sc, NULL, &op), -1); /* the checked call: the config's type */
  assert_err(ctx, "topi_schedule: template 'global_pool' reads a topi_pool_config, not a topi_softmax_config");
  tec_ctx_clear_error(ctx); /* the template's own guard, reached through the registry */
  ck_assert_int_eq(topi_template_find("softmax")->schedule(&d, &sc, NULL, &op), -1);
  assert_err(ctx, "softmax: the declaration is of template 'global_pool'");
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  topi_pool p = pool(1, 8, 8, 8, 3, 2, 3, TOPI_POOL_MAX, blk(8), blk(8));
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "pool2d", &p, &d), -1);
  assert_err(ctx, "pool2d: height: padding 3 before, 3 after must be >= 0 and smaller than the "
                  "window's extent 3 (3 taps, dilation 1): a window wholly in the padding has no "
                  "value");
  p = pool(1, 8, 4, 4, 7, 1, 1, TOPI_POOL_MAX, blk(8), blk(8));
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "pool2d", &p, &d), -1);
  tu_assert_contains(tec_ctx_error(ctx), "pool2d: height: the window's extent 7 (7 taps, dilation 1) is larger than "
                                         "the padded input 6 (1 + 4 + 1)");
  p = pool(1, 8, 8, 8, 3, 0, 1, TOPI_POOL_MAX, blk(8), blk(8));
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "pool2d", &p, &d), -1);
  assert_err(ctx, "pool2d: height: window 3, stride 0, dilation 0, ceil_mode 0 (legal: window and "
                  "stride >= 1, dilation >= 0 (0, 1: none), ceil_mode 0 or 1)");
  p = pool(1, 8, 8, 8, 3, 2, 1, TOPI_POOL_MAX, blk(8), blk(8));
  p.count_include_pad = 1;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "pool2d", &p, &d), -1);
  assert_err(ctx, "pool2d: count_include_pad = 1 applies to average pooling only");
  p.count_include_pad = 0, p.mode = (topi_pool_mode)7;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "pool2d", &p, &d), -1);
  assert_err(ctx, "pool2d: mode 7 is not TOPI_POOL_MAX or TOPI_POOL_AVG");
  p.mode = TOPI_POOL_AVG, p.n = 0;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "pool2d", &p, &d), -1);
  assert_err(ctx, "pool2d: sizes must be >= 1 (got n=0 c=8 h=8 w=8)");
  p.n = 1, p.in_layout = (topi_layout){.kind = TOPI_NCHWC, .block = 0};
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "pool2d", &p, &d), -1);
  tu_assert_contains(tec_ctx_error(ctx), "pool2d: input layout {kind 2, block 0} is not legal");
  p.in_layout = blk(8);
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "global_pool", &p, &d), -1);
  assert_err(ctx, "global_pool: the window is the whole input: kh, kw, strides, paddings, "
                  "dilations and ceil_mode must be 0 (got kernel 3x3 stride 2x2 pad 1,1,0,0 "
                  "dilation 0x0 ceil_mode 0); pool2d takes them");
  tune_space sp;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_space_of(ctx, "global_pool", &p, NULL, &sp), -1);
  const char *why = NULL;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_template_find("global_pool")->applies(ctx, &p, &why), 0);
  tu_assert_contains(why, "the window is the whole input");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "pool2d", NULL, &d), -1);
  assert_err(ctx, "pool2d: problem and decl are required");

  topi_softmax s = {.m = 0, .n = 10};
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "softmax", &s, &d), -1);
  assert_err(ctx, "softmax: sizes must be >= 1 (got m=0 rows, n=10 classes)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_space_of(ctx, "softmax", &s, NULL, &sp), -1);

  topi_eltwise e = {.n = 1, .c = 4, .h = 2, .w = 2, .layout = nchw, .act = (topi_act)9};
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "eltwise_add", &e, &d), -1);
  assert_err(ctx, "eltwise_add: activation 9 is not one of TOPI_ACT_NONE, _RELU, _RELU6");
  e.act = TOPI_ACT_RELU, e.w = -1;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "eltwise_add", &e, &d), -1);
  assert_err(ctx, "eltwise_add: sizes must be >= 1 (got n=1 c=4 h=2 w=-1)");
  /* an unknown target is refused by the space */
  e.w = 2;
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_target_parse(ctx, "nonsense-target")); /* no value, no space */
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops");
  TCase *tc = tcase_create("ops");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, max_pool);
  tcase_add_test(tc, avg_pool);
  tcase_add_test(tc, global_pool);
  tcase_add_test(tc, softmax);
  tcase_add_test(tc, residual_add);
  tcase_add_test(tc, stem_conv);
  tcase_add_test(tc, fully_connected);
  tcase_add_test(tc, registry);
  tcase_add_test(tc, bad_input);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

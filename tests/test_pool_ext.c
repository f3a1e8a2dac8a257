/* test_pool_ext.c — what a port from TVM / ONNX meets in pooling (topi/pool.c): ceil_mode,
 * asymmetric paddings (top, left, bottom, right), ONNX auto_pad SAME_UPPER / SAME_LOWER with
 * even kernels, dilation; max and average (count_include_pad as ONNX defines it: the taps
 * inside the padded input, not a ceil_mode window's overhang past it). Each case against a
 * plain C reference written here from the ONNX operator text (not support/opsref.c), over
 * odd sizes, every config of the space on one case, and layouts NCHW, NHWC, NCHW8c; then
 * the refusals and their messages (a padding as large as the window's extent, negative
 * dilation, a window with no input tap, ceil_mode 2, a global pool with a window). */
#include <math.h>
#include <stdlib.h>
#include "convref.h"
#include "testutil.h"

/* ---- the reference: ONNX MaxPool / AveragePool, NCHW ---- */

/* Output size along one dimension: floor or ceil((size + pb + pe - extent) / s) + 1, the
 * ceil_mode window starting past size + pb dropped. */
static int64_t ref_out(int64_t size, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                       int ceil_mode) {
  int64_t ext = (k - 1) * d + 1, span = size + pb + pe - ext;
  int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (o - 1) * s >= size + pb) o--;
  return o;
}

typedef struct geo {
  int64_t k[2], s[2], d[2], pb[2], pe[2], size[2], out[2];
} geo;

static geo geo_of(const topi_pool *p) {
  geo g = {{p->kh, p->kw}, {p->stride_h, p->stride_w},
           {p->dilation_h > 1 ? p->dilation_h : 1, p->dilation_w > 1 ? p->dilation_w : 1},
           {p->pad_h, p->pad_w},
           {p->pad_end_given ? p->pad_bottom : p->pad_h, p->pad_end_given ? p->pad_right : p->pad_w},
           {p->h, p->w}, {0, 0}};
  for (int a = 0; a < 2; a++)
    g.out[a] = ref_out(g.size[a], g.k[a], g.s[a], g.d[a], g.pb[a], g.pe[a], p->ceil_mode);
  return g;
}

static void ref_pool(const topi_pool *p, const float *x, float *out) {
  geo g = geo_of(p);
  for (int64_t nc = 0; nc < p->n * p->c; nc++)
    for (int64_t oy = 0; oy < g.out[0]; oy++)
      for (int64_t ox = 0; ox < g.out[1]; ox++) {
        double mx = -INFINITY, sum = 0;
        int64_t in = 0, padded = 0;
        for (int64_t i = 0; i < g.k[0]; i++)
          for (int64_t j = 0; j < g.k[1]; j++) {
            int64_t y = oy * g.s[0] - g.pb[0] + i * g.d[0], xx = ox * g.s[1] - g.pb[1] + j * g.d[1];
            int in_pad = y >= -g.pb[0] && y < p->h + g.pe[0] && xx >= -g.pb[1] && xx < p->w + g.pe[1];
            padded += in_pad;
            if (y < 0 || y >= p->h || xx < 0 || xx >= p->w) continue;
            double v = x[(nc * p->h + y) * p->w + xx];
            mx = v > mx ? v : mx, sum += v, in++;
          }
        double r = p->mode == TOPI_POOL_MAX ? mx : sum / (double)(p->count_include_pad ? padded : in);
        out[(nc * g.out[0] + oy) * g.out[1] + ox] = (float)r;
      }
}

/* ---- running the template ---- */

static double run(const topi_pool *p, const void *cfg) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find("pool2d");
  topi_decl d;
  tune_space sp;
  topi_op op;
  ck_assert_msg(t->declare(ctx, p, &d) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_msg(t->space(ctx, p, NULL, &sp) == 0, "%s", tec_ctx_error(ctx));
  ck_assert_msg(t->schedule(&d, cfg ? cfg : sp.default_config, NULL, &op) == 0, "%s", tec_ctx_error(ctx));
  lower_func *f = tec_lower(op.sched, "op", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  geo g = geo_of(p);
  int64_t oh, ow;
  ck_assert_int_eq(topi_pool_out_hw(ctx, p, &oh, &ow), 0);
  ck_assert_int_eq(oh, g.out[0]);
  ck_assert_int_eq(ow, g.out[1]);
  int64_t sx[4] = {p->n, p->c, p->h, p->w}, no = p->n * p->c * oh * ow, si[5], so[5];
  DLTensor x = tu_rand_f32(4, sx, 7);
  float *xs = x.data;
  for (int64_t i = 0; i < tec_dl_numel(&x); i++) xs[i] -= 2.0f; /* all negative: max sees pads */
  DLTensor xl = tu_zeros(TEC_F32, cr_shape(p->in_layout, p->n, p->c, p->h, p->w, si), si);
  DLTensor ol = tu_zeros(TEC_F32, cr_shape(p->out_layout, p->n, p->c, oh, ow, so), so);
  cr_to_layout(p->in_layout, p->n, p->c, p->h, p->w, xs, xl.data);
  float *ref = malloc(sizeof(float) * (size_t)no), *got = malloc(sizeof(float) * (size_t)no);
  ref_pool(p, xs, ref);
  DLTensor *args[2] = {&xl, &ol};
  ck_assert_msg(tec_module_run(m, "op", 2, args) == 0, "%s", tec_rt_last_error());
  cr_from_layout(p->out_layout, p->n, p->c, oh, ow, ol.data, got);
  double err = tu_max_err(got, ref, no);
  free(ref), free(got);
  tec_dl_free(&x), tec_dl_free(&xl), tec_dl_free(&ol);
  tec_ctx_free(ctx);
  return err;
}

static const topi_layout nchw = {.kind = TOPI_NCHW}, nhwc = {.kind = TOPI_NHWC},
                         b8 = {.kind = TOPI_NCHWC, .block = 8};

static topi_pool base(int64_t h, int64_t w, int64_t k, int64_t s, topi_pool_mode mode) {
  return (topi_pool){.n = 1, .c = 3, .h = h, .w = w, .kh = k, .kw = k, .stride_h = s,
                     .stride_w = s, .mode = mode, .in_layout = nchw, .out_layout = nchw};
}

#define CHECK(p) ck_assert_msg(run(&(p), NULL) < 1e-5, "line %d: max error %g", __LINE__, run(&(p), NULL))

START_TEST(ceil_mode) {
  for (int m = 0; m < 2; m++) {
    for (int inc = 0; inc <= m; inc++) {
      /* 3x3 stride 2 on 10x11: the last window runs one past the input */
      topi_pool p = base(10, 11, 3, 2, (topi_pool_mode)m);
      p.ceil_mode = 1, p.count_include_pad = inc;
      CHECK(p);
      /* with padding 1: the overhang runs past the end padding too (include: not counted) */
      p.pad_h = p.pad_w = 1;
      CHECK(p);
      /* the window that would start past the input and its top padding is dropped:
       * h 5, k 2, s 2, pad 1: (5 + 2 - 2) / 2 rounds up to 3, + 1 = 4, but window 3 starts at 5 */
      p = base(5, 5, 2, 2, (topi_pool_mode)m);
      p.ceil_mode = 1, p.pad_h = p.pad_w = 1, p.count_include_pad = inc;
      int64_t oh, ow;
      ck_assert_int_eq(topi_pool_out_hw(NULL, &p, &oh, &ow), 0);
      ck_assert_int_eq(oh, 3);
      CHECK(p);
    }
  }
}
END_TEST

START_TEST(asymmetric_pads) {
  for (int m = 0; m < 2; m++)
    for (int inc = 0; inc <= m; inc++) {
      topi_pool p = base(9, 13, 4, 3, (topi_pool_mode)m);
      p.kw = 3, p.stride_w = 2, p.count_include_pad = inc;
      p.pad_end_given = 1, p.pad_h = 0, p.pad_bottom = 3, p.pad_w = 2, p.pad_right = 1;
      CHECK(p);
      p.ceil_mode = 1;
      CHECK(p);
    }
}
END_TEST

START_TEST(onnx_same) {
  tec_ctx *ctx = tec_ctx_new();
  /* ONNX: even kernel 2 and 4, stride 1 and 2: output ceil(size / stride), the odd padding
   * at the end (SAME_UPPER) or the start (SAME_LOWER) */
  const int64_t ks[] = {2, 4}, ss[] = {1, 2};
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++)
      for (int mode = TOPI_AUTO_PAD_SAME_UPPER; mode <= TOPI_AUTO_PAD_SAME_LOWER; mode++)
        for (int m = 0; m < 2; m++)
          for (int inc = 0; inc <= m; inc++) {
            topi_pool p = base(7, 6, ks[a], ss[b], (topi_pool_mode)m);
            p.count_include_pad = inc;
            ck_assert_int_eq(topi_pool_auto_pad(ctx, &p, (topi_auto_pad)mode), 0);
            int64_t total_h = p.pad_h + p.pad_bottom, lo = total_h / 2;
            ck_assert_int_eq(mode == TOPI_AUTO_PAD_SAME_UPPER ? p.pad_h : p.pad_bottom, lo);
            int64_t oh, ow;
            ck_assert_int_eq(topi_pool_out_hw(ctx, &p, &oh, &ow), 0);
            ck_assert_int_eq(oh, (7 + ss[b] - 1) / ss[b]);
            ck_assert_int_eq(ow, (6 + ss[b] - 1) / ss[b]);
            CHECK(p);
          }
  /* the numbers: h 7, k 4, s 1: total 3 -> upper (1, 2), lower (2, 1) */
  topi_pool p = base(7, 7, 4, 1, TOPI_POOL_AVG);
  ck_assert_int_eq(topi_pool_auto_pad(ctx, &p, TOPI_AUTO_PAD_SAME_UPPER), 0);
  ck_assert_int_eq(p.pad_h, 1); ck_assert_int_eq(p.pad_bottom, 2);
  ck_assert_int_eq(topi_pool_auto_pad(ctx, &p, TOPI_AUTO_PAD_SAME_LOWER), 0);
  ck_assert_int_eq(p.pad_h, 2); ck_assert_int_eq(p.pad_bottom, 1);
  ck_assert_int_eq(topi_pool_auto_pad(ctx, &p, TOPI_AUTO_PAD_VALID), 0);
  ck_assert_int_eq(p.pad_h + p.pad_bottom + p.pad_w + p.pad_right, 0);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(dilation) {
  for (int m = 0; m < 2; m++)
    for (int inc = 0; inc <= m; inc++) {
      topi_pool p = base(11, 12, 3, 1, (topi_pool_mode)m);
      p.dilation_h = 2, p.dilation_w = 3, p.count_include_pad = inc;
      CHECK(p);
      p.pad_h = 2, p.pad_w = 3, p.stride_h = 2;
      CHECK(p);
      p.ceil_mode = 1, p.pad_end_given = 1, p.pad_bottom = 1, p.pad_right = 0;
      CHECK(p);
    }
}
END_TEST

START_TEST(layouts_and_configs) {
  topi_pool p = base(9, 10, 3, 2, TOPI_POOL_AVG);
  p.c = 11, p.n = 2, p.ceil_mode = 1, p.dilation_w = 2, p.pad_end_given = 1;
  p.pad_h = 1, p.pad_bottom = 0, p.pad_w = 0, p.pad_right = 2;
  const topi_layout ls[][2] = {{nhwc, nhwc}, {nchw, b8}, {b8, b8}, {b8, nchw}};
  for (int i = 0; i < 4; i++) {
    p.in_layout = ls[i][0], p.out_layout = ls[i][1];
    CHECK(p);
  }
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  p.mode = TOPI_POOL_MAX;
  ck_assert_int_eq(topi_space_of(ctx, "pool2d", &p, NULL, &sp), 0);
  topi_pool_config cfg;
  for (int64_t i = 0; i < tune_space_size(&sp); i++) {
    ck_assert_int_eq(tune_space_config(&sp, i, &cfg), 0);
    ck_assert_double_lt(run(&p, &cfg), 1e-5);
  }
  tec_ctx_free(ctx);
}
END_TEST

static void refused(topi_pool p, const char *tmpl, const char *msg) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  ck_assert_int_eq(topi_declare(ctx, tmpl, &p, &d), -1);
  tu_assert_contains(tec_ctx_error(ctx), msg);
  tec_ctx_free(ctx);
}

START_TEST(bad_input) {
  topi_pool p = base(8, 8, 3, 1, TOPI_POOL_MAX);
  p.pad_end_given = 1, p.pad_bottom = 3;
  refused(p, "pool2d", "pool2d: height: padding 0 before, 3 after must be >= 0 and smaller than "
                       "the window's extent 3 (3 taps, dilation 1)");
  p.pad_bottom = 0, p.pad_right = -1;
  refused(p, "pool2d", "or a padding is < 0");
  p = base(8, 8, 2, 1, TOPI_POOL_AVG);
  p.dilation_h = 3, p.pad_h = 4; /* extent 4: padding 4 not < 4 */
  refused(p, "pool2d", "padding 4 before, 4 after must be >= 0 and smaller than the window's extent 4");
  p.dilation_h = -1, p.pad_h = 0;
  refused(p, "pool2d", "dilation -1");
  p.dilation_h = 0, p.ceil_mode = 2;
  refused(p, "pool2d", "ceil_mode 2 (legal:");
  /* h 1, k 2 dilation 3, pad 2 (< extent 4): taps -2 and 1, neither inside 0..0 */
  p = base(1, 4, 2, 1, TOPI_POOL_MAX);
  p.dilation_h = 3, p.pad_h = 2;
  refused(p, "pool2d", "pool2d: height: output 0's window (taps -2 + i*3, i < 2) holds no input "
                       "element (input 0..0)");
  p = base(8, 8, 0, 0, TOPI_POOL_AVG);
  p.ceil_mode = 1;
  refused(p, "global_pool", "ceil_mode 1); pool2d takes them");
  p.ceil_mode = 0, p.dilation_w = 2;
  refused(p, "global_pool", "dilation 0x2");
  p = base(8, 8, 3, 1, TOPI_POOL_AVG);
  p.pad_end_given = 2;
  refused(p, "pool2d", "pad_end_given = 2 (legal: 0, 1)");
  tec_ctx *ctx = tec_ctx_new();
  p = base(8, 8, 3, 0, TOPI_POOL_AVG);
  ck_assert_int_eq(topi_pool_auto_pad(ctx, &p, TOPI_AUTO_PAD_SAME_UPPER), -1);
  tu_assert_contains(tec_ctx_error(ctx), "height: size 8, window 3, stride 0");
  p.stride_h = p.stride_w = 1;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_pool_auto_pad(ctx, &p, (topi_auto_pad)9), -1);
  tu_assert_contains(tec_ctx_error(ctx), "mode 9 (legal:");
  ck_assert_int_eq(topi_pool_auto_pad(ctx, NULL, TOPI_AUTO_PAD_VALID), -1);
  ck_assert_int_eq(p.pad_end_given, 0); /* unchanged by the refusals */
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("pool_ext");
  TCase *tc = tcase_create("pool_ext");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, ceil_mode);
  tcase_add_test(tc, asymmetric_pads);
  tcase_add_test(tc, onnx_same);
  tcase_add_test(tc, dilation);
  tcase_add_test(tc, layouts_and_configs);
  tcase_add_test(tc, bad_input);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

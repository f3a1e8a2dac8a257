/* test_problem_text.c — a problem's text (topi_problem_str / topi_problem_parse,
 * topi/problem_text.c) round-trips: for every registered template, its example text and a
 * problem of every kind with values away from the defaults (margins in layouts, groups,
 * dilation, asymmetric and ONNX paddings, ceil_mode, epilogues, transposes) print -> parse ->
 * print to the identical text and parse back to the same problem; every problem kind is met
 * (the int8 kinds have no text yet: refused by name).
 * Bad texts are refused with the key named. */
#include <string.h>
#include "tec/topi.h"
#include "testutil.h"

/* text parsed for template t, printed, parsed again, printed again: both texts equal and both
 * problems equal byte for byte (the parser zeroes the union first). Returns the text. */
static const char *round_trip(tec_ctx *ctx, const topi_template *t, const char *text) {
  topi_problem p1, p2;
  ck_assert_msg(topi_problem_parse(ctx, t, text, &p1) == 0, "%s '%s': %s", t->name, text, tec_ctx_error(ctx));
  const char *s1 = topi_problem_str(ctx, t->problem_kind, &p1);
  ck_assert_ptr_nonnull(s1);
  ck_assert_msg(topi_problem_parse(ctx, t, s1, &p2) == 0, "%s '%s': %s", t->name, s1, tec_ctx_error(ctx));
  const char *s2 = topi_problem_str(ctx, t->problem_kind, &p2);
  ck_assert_ptr_nonnull(s2);
  ck_assert_str_eq(s1, s2);
  ck_assert_msg(memcmp(&p1, &p2, sizeof p1) == 0, "%s: '%s' parsed back to another problem", t->name, s1);
  return s1;
}

START_TEST(every_template_example) {
  tec_ctx *ctx = tec_ctx_new();
  int seen[12] = {0};
  for (int i = 0; i < topi_template_count(); i++) {
    const topi_template *t = topi_template_at(i);
    const char *ex = topi_problem_example(ctx, t);
    ck_assert_ptr_nonnull(ex);
    round_trip(ctx, t, ex);
    ck_assert_int_lt((int)t->problem_kind, 12);
    seen[t->problem_kind] = 1;
  }
  for (int k = 0; k < 12; k++) ck_assert_msg(seen[k], "no template of problem kind %d", k);
  tec_ctx_free(ctx);
}
END_TEST

/* a problem of each kind with values away from the defaults: the printed text is exact */
START_TEST(every_kind_away_from_defaults) {
  tec_ctx *ctx = tec_ctx_new();
  static const struct { const char *tmpl, *in, *out; } cases[] = {
      {"conv2d_nchwc", "c=24,h=15,w=17,oc=40,kh=3,kw=5,stride_h=2,stride_w=1,pad_h=1,pad_w=2,in=NCHW8c+m1,out=NCHW16c+m2,bias=1,residual=1,act=relu6,dilation_h=2",
       "n=1,c=24,h=15,w=17,oc=40,kh=3,kw=5,stride_h=2,stride_w=1,pad_h=1,pad_w=2,dilation_h=2,dilation_w=1,groups=1,in=NCHW8c+m1,out=NCHW16c+m2,bias=1,residual=1,act=relu6"},
      {"depthwise_nchwc", "n=2,c=32,h=14,w=14",
       "n=2,c=32,h=14,w=14,oc=32,kh=3,kw=3,stride_h=1,stride_w=1,pad_h=1,pad_w=1,dilation_h=1,dilation_w=1,groups=32,in=NCHW16c,out=NCHW16c,bias=0,residual=0,act=none"},
      {"layout_transform", "c=20,h=7,w=9,from=NCHW,to=NCHW4c+m1",
       "n=1,c=20,h=7,w=9,from=NCHW,to=NCHW4c+m1"},
      {"dense", "m=3,n=1000,k=1024,bt=1,const_b=0,bias=1,act=relu",
       "m=3,n=1000,k=1024,bt=1,const_b=0,bias=1,residual=0,act=relu"},
      {"pool2d", "c=16,h=15,w=15,k=3,stride=2,pad_bottom=1,pad_right=2,dilation=2,ceil_mode=1,mode=avg,count_include_pad=1,in=NCHW16c,out=NCHW16c",
       "n=1,c=16,h=15,w=15,kh=3,kw=3,stride_h=2,stride_w=2,pad_h=0,pad_w=0,mode=avg,count_include_pad=1,in=NCHW16c,out=NCHW16c,pad_bottom=1,pad_right=2,dilation_h=2,dilation_w=2,ceil_mode=1"},
      /* ONNX SAME_UPPER on 9: symmetric, printed as the plain paddings it is */
      {"pool2d", "c=8,h=9,w=9,k=3,stride=2,auto_pad=same_upper",
       "n=1,c=8,h=9,w=9,kh=3,kw=3,stride_h=2,stride_w=2,pad_h=1,pad_w=1,mode=max,count_include_pad=0,in=NCHW,out=NCHW"},
      /* ... and on 8: one more row and column at the end */
      {"pool2d", "c=8,h=8,w=8,k=3,stride=2,auto_pad=same_upper",
       "n=1,c=8,h=8,w=8,kh=3,kw=3,stride_h=2,stride_w=2,pad_h=0,pad_w=0,mode=max,count_include_pad=0,in=NCHW,out=NCHW,pad_bottom=1,pad_right=1"},
      {"global_pool", "n=2,c=64,h=7,w=7,mode=avg,in=NCHW16c",
       "n=2,c=64,h=7,w=7,kh=0,kw=0,stride_h=0,stride_w=0,pad_h=0,pad_w=0,mode=avg,count_include_pad=0,in=NCHW16c,out=NCHW"},
      {"softmax", "m=4,n=10", "m=4,n=10"},
      {"eltwise_add", "n=2,c=16,h=5,w=6,layout=NCHW8c,act=relu",
       "n=2,c=16,h=5,w=6,layout=NCHW8c,act=relu"},
      {"dw_pw_fused", "c=32,h=14,w=14,oc=64,stride=2,layout=NCHW16c,out=NCHW8c,bias=1,act=relu6",
       "n=1,c=32,h=14,w=14,oc=64,k=3,stride=2,layout=NCHW16c,out=NCHW8c,bias=1,act=relu6"},
      {"batch_matmul", "batch=12,m=128,n=128,k=64,tb=1", "batch=12,m=128,n=128,k=64,ta=0,tb=1"},
      /* int8: the scales read back to the same fp32 (9 digits) */
      {"qnn_conv2d", "c=20,h=9,w=11,oc=36,k=3,stride=2,pad=1,in=NCHW8c,bias=1,act=relu6,in_scale=0.0470588244,in_zp=-3,out_scale=0.1,out_zp=-128",
       "n=1,c=20,h=9,w=11,oc=36,kh=3,kw=3,stride_h=2,stride_w=2,pad_h=1,pad_w=1,groups=1,in=NCHW8c,out=NCHW16c,bias=1,act=relu6,in_scale=0.0470588244,in_zp=-3,out_scale=0.100000001,out_zp=-128"},
      {"qnn_depthwise", "c=32,h=14,w=14,stride=2",
       "n=1,c=32,h=14,w=14,oc=32,kh=3,kw=3,stride_h=2,stride_w=2,pad_h=1,pad_w=1,groups=32,in=NCHW16c,out=NCHW16c,bias=0,act=none,in_scale=1,in_zp=0,out_scale=1,out_zp=0"},
      {"qnn_dense", "m=5,n=37,k=50,bias=1,in_scale=0.5,in_zp=7,out_scale=0.25,out_zp=-1",
       "m=5,n=37,k=50,bias=1,act=none,in_scale=0.5,in_zp=7,out_scale=0.25,out_zp=-1"},
      {"qnn_pool", "c=16,h=15,w=15,k=3,pad=1,mode=avg,layout=NCHW16c,out_scale=0.5",
       "n=1,c=16,h=15,w=15,kh=3,kw=3,stride_h=2,stride_w=2,pad_h=1,pad_w=1,mode=avg,count_include_pad=0,layout=NCHW16c,in_scale=1,in_zp=0,out_scale=0.5,out_zp=0"},
      {"qnn_add", "c=16,h=5,w=6,layout=NHWC,act=relu,a_scale=0.125,a_zp=3,b_zp=-4",
       "n=1,c=16,h=5,w=6,layout=NHWC,act=relu,a_scale=0.125,a_zp=3,b_scale=1,b_zp=-4,out_scale=1,out_zp=0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const topi_template *t = topi_template_find(cases[i].tmpl);
    ck_assert_msg(t != NULL, "no template %s", cases[i].tmpl);
    ck_assert_str_eq(round_trip(ctx, t, cases[i].in), cases[i].out);
  }
  tec_ctx_free(ctx);
}
END_TEST

/* the printed text does not depend on which template of the kind parses it: conv2d_nchwc's
 * defaults (out=NCHW16c) and conv2d_spatial_pack's (out=NCHW) give the same problem for it */
START_TEST(text_independent_of_template) {
  tec_ctx *ctx = tec_ctx_new();
  topi_problem a, b;
  OK(ctx, topi_problem_parse(ctx, topi_template_find("conv2d_nchwc"), "c=16,h=14,w=14,oc=32", &a));
  const char *s = topi_problem_str(ctx, TOPI_PROBLEM_CONV2D, &a);
  tu_assert_contains(s, "out=NCHW16c");
  OK(ctx, topi_problem_parse(ctx, topi_template_find("conv2d_spatial_pack"), s, &b));
  ck_assert_str_eq(topi_problem_str(ctx, TOPI_PROBLEM_CONV2D, &b), s);
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(bad_texts_refused) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find("conv2d_nchwc");
  topi_problem p;
  ck_assert_int_eq(topi_problem_parse(ctx, t, "c=16,h=14,w=14,oc=32,colour=3", &p), -1);
  tu_assert_contains(tec_ctx_error(ctx), "--shape: unknown key 'colour'; the keys are n c h w oc");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_problem_parse(ctx, t, "c=16,h=x,w=14,oc=32", &p), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "--shape: h=x is not an integer");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_problem_parse(ctx, t, "c=16,h=14,w=14", &p), -1);
  tu_assert_contains(tec_ctx_error(ctx), "--shape: oc is missing (conv2d_nchwc: output channels");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_problem_parse(ctx, t, "c=16,c=8", &p), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "--shape: 'c' given twice");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_problem_parse(ctx, t, "c=16,h=14,w=14,oc=32,in=NCHWx", &p), -1);
  tu_assert_contains(tec_ctx_error(ctx), "--shape: in=NCHWx: ");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_problem_parse(ctx, t, "c16", &p), -1);
  tu_assert_contains(tec_ctx_error(ctx), "'c16' is not key=value");
  tec_ctx_clear_error(ctx);
  /* int8 params: a scale that is not a finite number > 0, a zero point out of int8 */
  const topi_template *q = topi_template_find("qnn_conv2d");
  ck_assert_int_eq(topi_problem_parse(ctx, q, "c=16,h=8,w=8,oc=16,in_scale=0", &p), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "--shape: in_scale=0; a scale is a finite number > 0 (e.g. 0.05)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_problem_parse(ctx, q, "c=16,h=8,w=8,oc=16,out_scale=x", &p), -1);
  tu_assert_contains(tec_ctx_error(ctx), "out_scale=x; a scale is a finite number > 0");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_problem_parse(ctx, q, "c=16,h=8,w=8,oc=16,out_zp=128", &p), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "--shape: out_zp=128; an int8 zero point is in -128..127");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_problem_parse(ctx, NULL, "c=1", &p), -1);
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(topi_problem_str(ctx, (topi_problem_kind)99, &p));
  tu_assert_contains(tec_ctx_error(ctx), "unknown problem kind 99");
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("problem_text");
  TCase *tc = tcase_create("problem_text");
  tcase_add_test(tc, every_template_example);
  tcase_add_test(tc, every_kind_away_from_defaults);
  tcase_add_test(tc, text_independent_of_template);
  tcase_add_test(tc, bad_texts_refused);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

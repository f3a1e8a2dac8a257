/* test_topi_margin.c — activations with a zero margin (topi_layout.margin, topi.h): the layout
 * strings ("NCHW16c+m1"), conv2d_nchwc and depthwise_nchwc reading an input whose ring holds
 * the padding (no compare, no copy: checked on the lowered text), writing an output into the
 * interior of a larger buffer (the ring pre-filled with NaN must stay NaN) and reading a
 * residual with the output's margin, all against the naive reference of tests/support/convref.c;
 * and the refusals: negative margins, bad strings, templates that take margin 0 only. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "convref.h"
#include "testutil.h"
#include "tec/topi.h"
#include "tec/tune.h"

static topi_layout blk(int64_t b, int64_t m) {
  return (topi_layout){.kind = TOPI_NCHWC, .block = b, .margin = m};
}

/* c x h x w -> co, square kernel k, stride s, pad p; groups g (depthwise: g = c = co). */
static topi_conv2d conv(int64_t c, int64_t h, int64_t w, int64_t co, int64_t k, int64_t s,
                        int64_t p, int64_t g, topi_layout in, topi_layout out, int res) {
  return (topi_conv2d){.n = 1, .c_in = c, .h = h, .w = w, .c_out = co, .kh = k, .kw = k,
                       .stride_h = s, .stride_w = s, .pad_h = p, .pad_w = p, .groups = g,
                       .in_layout = in, .out_layout = out, .epi = {1, res, TOPI_ACT_RELU}};
}

static void check(const char *tmpl, const topi_conv2d *p, const void *cfg) {
  tec_ctx *ctx = tec_ctx_new();
  double err = cr_check_template(tmpl, p, cfg); /* also: the output's ring left NaN */
  ck_assert_msg(err < 1e-4, "%s %s -> %s k%lld s%lld p%lld: relative error %g", tmpl,
                topi_layout_str(ctx, p->in_layout), topi_layout_str(ctx, p->out_layout),
                (long long)p->kh, (long long)p->stride_h, (long long)p->pad_h, err);
  tec_ctx_free(ctx);
}

START_TEST(layout_strings) {
  tec_ctx *ctx = tec_ctx_new();
  topi_layout l;
  OK(ctx, topi_layout_parse(ctx, "NCHW16c+m1", &l));
  ck_assert(l.kind == TOPI_NCHWC && l.block == 16 && l.margin == 1);
  ck_assert_str_eq(topi_layout_str(ctx, l), "NCHW16c+m1");
  OK(ctx, topi_layout_parse(ctx, "NHWC+m12", &l));
  ck_assert(l.kind == TOPI_NHWC && l.margin == 12);
  ck_assert_str_eq(topi_layout_str(ctx, l), "NHWC+m12");
  OK(ctx, topi_layout_parse(ctx, "NCHW+m0", &l)); /* margin 0: the plain string */
  ck_assert_str_eq(topi_layout_str(ctx, l), "NCHW");
  static const char *const plain[] = {"NCHW", "NHWC", "NCHW16c", "NCHW4c"};
  for (int i = 0; i < 4; i++) { /* unchanged without a margin (workload keys depend on it) */
    OK(ctx, topi_layout_parse(ctx, plain[i], &l));
    ck_assert_int_eq(l.margin, 0);
    ck_assert_str_eq(topi_layout_str(ctx, l), plain[i]);
  }
  static const char *const bad[] = {"NCHW16c+m-1", "NCHW16c+mx", "NCHW16c+m", "NCHW16c+1",
                                    "NCHW16c+m1x", "NCHW16c+m1025", "NCHW16c+", "NCHWc+m1",
                                    "+m1"};
  for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
    ck_assert_msg(topi_layout_parse(ctx, bad[i], &l) != 0, "'%s' parsed", bad[i]);
    tu_assert_contains(tec_ctx_error(ctx), "unknown layout");
    tu_assert_contains(tec_ctx_error(ctx), "+m<k>");
    tec_ctx_clear_error(ctx);
  }
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(conv_input_margin) {
  const topi_conv2d ps[] = {
      conv(16, 8, 8, 32, 3, 1, 1, 1, blk(16, 1), blk(16, 0), 0),  /* 3x3 pad 1 */
      conv(20, 9, 7, 16, 3, 2, 1, 1, blk(16, 1), blk(16, 0), 0),  /* stride 2, odd */
      conv(16, 6, 6, 16, 3, 1, 1, 1, blk(16, 2), blk(16, 0), 1),  /* margin 2, pad 1 */
      conv(16, 6, 5, 16, 5, 1, 2, 1, blk(8, 1), blk(16, 0), 0),   /* pad 2 > margin 1 */
      conv(32, 7, 5, 24, 1, 1, 0, 1, blk(16, 1), blk(8, 0), 1),   /* 1x1 GEMM form */
      conv(3, 11, 9, 16, 3, 2, 1, 1, (topi_layout){TOPI_NCHW, 0, 1}, blk(16, 0), 0)};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) check("conv2d_nchwc", &ps[i], NULL);
}
END_TEST

/* pad_copy: nothing to copy where the margin holds the padding (only 0 in the space); past
 * it both values offered and computed alike. */
START_TEST(conv_pad_copy) {
  tec_ctx *ctx = tec_ctx_new();
  topi_conv2d in = conv(16, 8, 8, 16, 3, 1, 1, 1, blk(16, 1), blk(16, 0), 0);
  topi_conv2d past = conv(16, 8, 8, 16, 5, 1, 2, 1, blk(16, 1), blk(16, 0), 0);
  tune_space sp;
  OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &in, NULL, &sp));
  for (int k = 0; k < sp.nknobs; k++)
    if (!strcmp(sp.knobs[k].name, "pad_copy"))
      ck_assert(sp.knobs[k].nvalues == 1 && sp.knobs[k].values[0] == 0);
  topi_conv2d_nchwc_config c = *(const topi_conv2d_nchwc_config *)sp.default_config;
  c.pad_copy = 1;
  topi_decl d;
  topi_op op;
  OK(ctx, topi_declare(ctx, "conv2d_nchwc", &in, &d));
  ck_assert_int_ne(topi_schedule(&d, &c, NULL, &op), 0);
  tu_assert_contains(tec_ctx_error(ctx), "knob 'pad_copy' = 1 is not legal");
  OK(ctx, topi_space_of(ctx, "conv2d_nchwc", &past, NULL, &sp));
  c = *(const topi_conv2d_nchwc_config *)sp.default_config;
  for (int v = 0; v < 2; v++) {
    c.pad_copy = v;
    check("conv2d_nchwc", &past, &c);
  }
  tec_ctx_free(ctx);
}
END_TEST

/* The run function of template tmpl on p with its default config (arena text). */
static const char *run_text(tec_ctx *ctx, const char *tmpl, const topi_conv2d *p) {
  topi_op op;
  OK(ctx, topi_instantiate(ctx, topi_template_find(tmpl), p, NULL, &op));
  lower_func *f = tec_lower(op.sched, "conv", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  const char *run = strstr(tec_lower_str(f), "func conv_run(");
  ck_assert_ptr_nonnull(run);
  return run;
}

/* Padding code in a run function: a select, a likely() condition, an if, a pad stage, or a
 * loop that partitioning started past 0 (the border rows peeled off). */
static int padding_code(const char *run) {
  regex_t re;
  ck_assert_int_eq(regcomp(&re, "for \\([a-z.]+, [1-9]", REG_EXTENDED | REG_NOSUB), 0);
  int peeled = regexec(&re, run, 0, NULL, 0) == 0;
  regfree(&re);
  return peeled || strstr(run, "select(") || strstr(run, "likely(") || strstr(run, "if (") ||
         strstr(run, "produce pad");
}

/* With the padding in the margin: no padding code (the same layer without a margin has it),
 * still vector code. */
START_TEST(no_compares) {
  tec_ctx *ctx = tec_ctx_new();
  for (int dw = 0; dw < 2; dw++)
    for (int s = 1; s <= 2; s++) {
      const char *t = dw ? "depthwise_nchwc" : "conv2d_nchwc";
      int64_t co = dw ? 32 : 16, g = dw ? 32 : 1;
      topi_conv2d m1 = conv(32, 14, 14, co, 3, s, 1, g, blk(16, 1), blk(16, 0), 0);
      topi_conv2d m0 = conv(32, 14, 14, co, 3, s, 1, g, blk(16, 0), blk(16, 0), 0);
      const char *with = run_text(ctx, t, &m1), *without = run_text(ctx, t, &m0);
      ck_assert_msg(!padding_code(with), "%s stride %d: padding code with a margin", t, s);
      ck_assert_msg(padding_code(without), "%s stride %d: no padding code without one", t, s);
      tu_assert_contains(with, "ramp(");
    }
  tec_ctx_free(ctx);
}
END_TEST

START_TEST(depthwise_input_margin) {
  const topi_conv2d ps[] = {
      conv(32, 8, 8, 32, 3, 1, 1, 32, blk(16, 1), blk(16, 0), 0),
      conv(40, 9, 11, 40, 3, 2, 1, 40, blk(16, 1), blk(16, 0), 0), /* stride 2, c % 16 */
      conv(16, 7, 7, 16, 3, 1, 1, 16, blk(16, 2), blk(16, 0), 1),  /* margin 2, residual */
      conv(16, 7, 6, 16, 5, 1, 2, 16, blk(8, 1), blk(8, 0), 0)};   /* pad 2 > margin 1 */
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) check("depthwise_nchwc", &ps[i], NULL);
}
END_TEST

/* Output margins (and a residual in the output's layout, margin included): the window
 * computed, the ring (NaN) untouched. */
START_TEST(output_margin) {
  const topi_conv2d cs[] = {
      conv(16, 8, 8, 32, 3, 1, 1, 1, blk(16, 0), blk(16, 1), 0),
      conv(16, 8, 8, 32, 3, 1, 1, 1, blk(16, 1), blk(16, 1), 1),  /* both, residual */
      conv(20, 9, 7, 16, 3, 2, 1, 1, blk(16, 1), blk(8, 2), 1),   /* stride 2, margin 2 */
      conv(32, 7, 5, 24, 1, 1, 0, 1, blk(16, 1), blk(8, 1), 1),   /* 1x1 GEMM form */
      conv(3, 11, 9, 16, 3, 2, 1, 1, (topi_layout){TOPI_NCHW, 0, 0}, blk(16, 1), 0)};
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) check("conv2d_nchwc", &cs[i], NULL);
  const topi_conv2d ds[] = {
      conv(32, 8, 8, 32, 3, 1, 1, 32, blk(16, 0), blk(16, 1), 0),
      conv(32, 8, 8, 32, 3, 1, 1, 32, blk(16, 1), blk(16, 1), 1),
      conv(40, 9, 11, 40, 3, 2, 1, 40, blk(16, 2), blk(16, 1), 1)};
  for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) check("depthwise_nchwc", &ds[i], NULL);
}
END_TEST

/* The tuner on a layer with margins: the input's ring zeroed before the reference (an
 * independent one here, which checks the ring), the output compared in its window. */
static topi_conv2d tune_prob;

static int conv_ref(void *user, DLTensor *const *args, int nargs, float *out, int64_t nout) {
  const topi_conv2d *p = &tune_prob;
  int64_t oh, ow;
  cr_out_hw(p, &oh, &ow);
  ck_assert_int_eq(nargs, 4); /* data, kernel, bias, out */
  ck_assert_int_eq(nout, cr_numel(p->out_layout, p->n, p->c_out, oh, ow));
  /* the ring is zero: the whole buffer holds what the window holds, zeros around it */
  float *x = malloc(sizeof(float) * (size_t)(p->n * p->c_in * p->h * p->w));
  float *back = malloc(sizeof(float) * (size_t)cr_numel(p->in_layout, p->n, p->c_in, p->h, p->w));
  float *y = malloc(sizeof(float) * (size_t)(p->n * p->c_out * oh * ow));
  cr_from_layout(p->in_layout, p->n, p->c_in, p->h, p->w, args[0]->data, x);
  cr_to_layout(p->in_layout, p->n, p->c_in, p->h, p->w, x, back);
  for (int64_t i = 0; i < cr_numel(p->in_layout, p->n, p->c_in, p->h, p->w); i++)
    ck_assert_msg(back[i] == ((float *)args[0]->data)[i], "input element %lld: ring not zero",
                  (long long)i);
  cr_conv2d(p, x, args[1]->data, args[2]->data, NULL, y);
  cr_to_layout(p->out_layout, p->n, p->c_out, oh, ow, y, out);
  free(x), free(back), free(y);
  ++*(int *)user;
  return 0;
}

START_TEST(tune_with_margins) {
  tec_ctx *ctx = tec_ctx_new();
  tune_prob = conv(16, 8, 8, 16, 3, 1, 1, 1, blk(16, 1), blk(16, 2), 0);
  tune_task task;
  OK(ctx, tune_task_topi(ctx, topi_template_find("conv2d_nchwc"), &tune_prob,
                         "c=16,h=8,w=8,oc=16,k=3,pad=1,in=NCHW16c+m1,out=NCHW16c+m2", NULL, &task));
  ck_assert_ptr_nonnull(task.fill);
  tune_options o = tune_options_default();
  int calls = 0;
  o.trials = 3, o.batch = 3, o.repeats = 1, o.warmup = 0, o.fork = 0, o.tuner = "grid";
  o.reference = conv_ref, o.reference_user = &calls;
  tune_result r;
  OK(ctx, tune_run(ctx, &task, &o, &r));
  ck_assert_int_eq(calls, 1);
  for (int i = 0; i < r.ntrials; i++)
    ck_assert_msg(r.trials[i].status == TUNE_OK, "trial %d: %s", i, r.trials[i].error);
  tune_result_free(&r);
  /* remote measurement refuses it (its driver fills compact buffers) */
  tune_remote ro = {.nhosts = 1, .hosts = (const char *const[]){"localhost"}, .runtime = "x"};
  o.remote = &ro;
  ck_assert_int_ne(tune_run(ctx, &task, &o, &r), 0);
  tu_assert_contains(tec_ctx_error(ctx), "remote measurement does not fill inputs with a margin");
  tec_ctx_free(ctx);
}
END_TEST

/* Bad margins: negative in a problem; a template that takes margin 0 only says so. */
START_TEST(refusals) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  topi_conv2d p = conv(16, 8, 8, 16, 3, 1, 1, 1, blk(16, -1), blk(16, 0), 0);
  ck_assert_int_ne(topi_declare(ctx, "conv2d_nchwc", &p, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "margin -1 is not legal");
  tec_ctx_clear_error(ctx);
  p.in_layout = blk(16, 1);
  static const char *const convs[] = {"conv2d_winograd", "conv2d_im2col", "conv2d_spatial_pack"};
  for (int i = 0; i < 3; i++) {
    const topi_template *t = topi_template_find(convs[i]);
    const char *why = NULL;
    ck_assert(!t->applies(ctx, &p, &why));
    ck_assert_msg(why && strstr(why, "has a margin") &&
                      strstr(why, tec_ctx_printf(ctx, "%s takes margin 0 only", convs[i])),
                  "%s: %s", convs[i], why ? why : "(none)");
    ck_assert_int_ne(t->declare(ctx, &p, &d), 0);
    tu_assert_contains(tec_ctx_error(ctx), "takes margin 0 only");
    tec_ctx_clear_error(ctx);
  }
  /* depthwise: dw_spatial_pack (NCHW) refuses; the fused block's intermediate takes none */
  topi_conv2d dsp = conv(16, 8, 8, 16, 3, 1, 1, 16, (topi_layout){TOPI_NCHW, 0, 1},
                         (topi_layout){TOPI_NCHW, 0, 0}, 0);
  ck_assert_int_ne(topi_template_find("dw_spatial_pack")->declare(ctx, &dsp, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "dw_spatial_pack takes margin 0 only");
  tec_ctx_clear_error(ctx);
  topi_dw_pw b = {conv(16, 8, 8, 16, 3, 1, 1, 16, blk(16, 0), blk(16, 1), 0),
                  conv(16, 8, 8, 32, 1, 1, 0, 1, blk(16, 1), blk(16, 0), 0)};
  b.dw.epi.residual = b.pw.epi.residual = 0;
  ck_assert_int_ne(topi_declare(ctx, "dw_pw_fused", &b, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "takes margin 0 only");
  tec_ctx_clear_error(ctx);
  /* the picker falls back from winograd to conv2d_nchwc */
  const topi_template *t;
  OK(ctx, topi_conv2d_pick(ctx, &(topi_conv2d){.n = 1, .c_in = 64, .h = 28, .w = 28, .c_out = 64,
                                               .kh = 3, .kw = 3, .stride_h = 1, .stride_w = 1,
                                               .pad_h = 1, .pad_w = 1, .groups = 1,
                                               .in_layout = blk(16, 1), .out_layout = blk(16, 0)},
                           NULL, &t, NULL));
  ck_assert_str_eq(t->name, "conv2d_nchwc");
  /* pools, layout transforms, the residual add */
  topi_pool pool = {.n = 1, .c = 16, .h = 8, .w = 8, .kh = 3, .kw = 3, .stride_h = 1,
                    .stride_w = 1, .pad_h = 1, .pad_w = 1, .in_layout = blk(16, 1),
                    .out_layout = blk(16, 0)};
  ck_assert_int_ne(topi_declare(ctx, "pool2d", &pool, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "pool2d takes margin 0 only");
  tec_ctx_clear_error(ctx);
  topi_pool gp = {.n = 1, .c = 16, .h = 8, .w = 8, .in_layout = blk(16, 0),
                  .out_layout = (topi_layout){TOPI_NCHW, 0, 1}};
  ck_assert_int_ne(topi_declare(ctx, "global_pool", &gp, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "global_pool takes margin 0 only");
  tec_ctx_clear_error(ctx);
  topi_layout_problem lp = {1, 16, 8, 8, (topi_layout){TOPI_NCHW, 0, 0}, blk(16, 1)};
  ck_assert_int_ne(topi_declare(ctx, "layout_transform", &lp, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "layout_transform takes margin 0 only");
  tec_ctx_clear_error(ctx);
  topi_eltwise e = {1, 16, 8, 8, blk(16, 2), TOPI_ACT_NONE};
  ck_assert_int_ne(topi_declare(ctx, "eltwise_add", &e, &d), 0);
  tu_assert_contains(tec_ctx_error(ctx), "eltwise_add takes margin 0 only");
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("topi_margin");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, layout_strings);
  tcase_add_test(tc, conv_input_margin);
  tcase_add_test(tc, conv_pad_copy);
  tcase_add_test(tc, no_compares);
  tcase_add_test(tc, depthwise_input_margin);
  tcase_add_test(tc, output_margin);
  tcase_add_test(tc, tune_with_margins);
  tcase_add_test(tc, refusals);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

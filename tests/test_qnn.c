/* test_qnn.c — the int8 templates (qnn_conv2d, qnn_depthwise, qnn_dense, qnn_pool, qnn_add)
 * bit-exact against the independent reference of the scheme (support/qnnref.c) on odd sizes,
 * padding, strides 1 and 2, per-channel scales from the calibration functions, saturation at
 * both ends and several configs of each space; and bad input refused with its reason (dtype,
 * scale count, zero / negative scale, zero point out of range, layout). Under qemu (the
 * aarch64 build: a target suite) the conv, depthwise and dense cases run, at their defaults. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "qnnref.h"
#include "topi/qnn_internal.h"

static uint32_t rng_state;
static float frand(float lo, float hi) { /* deterministic: an LCG */
  rng_state = rng_state * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(rng_state >> 8) / 16777216.0f;
}

static DLTensor i8_tensor(int ndim, const int64_t *shape) { return tu_zeros(TEC_I8, ndim, shape); }

/* What dot_paths_bit_exact sets for the runs below it: the target (NULL: the host) and knobs
 * of qnn_conv2d's and qnn_dense's configs (tune_config_parse text; NULL: the config's). */
static const char *run_target, *run_conv_knobs, *run_dense_knobs;
static const char *run_dw_knobs; /* qnn_depthwise's (depthwise_dot_paths) */

/* Builds template tmpl on problem with the config of index pick (-1: the default; an index the
 * rule refuses or past the range: skipped, returns 0) and runs it once on args; 1 when run. */
static int build_run(const char *tmpl, const void *problem, int64_t pick, DLTensor **args, int nargs) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find(tmpl);
  ck_assert_ptr_nonnull(t);
  topi_decl d;
  tune_space sp;
  topi_op op;
  const tec_target *tg = tec_target_parse(ctx, run_target);
  ck_assert_msg(tg != NULL, "%s", tec_ctx_error(ctx));
  OK(ctx, t->declare(ctx, problem, &d));
  OK(ctx, t->space(ctx, problem, tg, &sp));
  void *cfg = sp.default_config;
  if (pick >= 0) {
    cfg = tec_ctx_alloc(ctx, sp.config_size);
    if (pick >= tune_space_range(&sp) || tune_space_config(&sp, pick, cfg) != 0) {
      tec_ctx_free(ctx);
      return 0;
    }
  }
  const char *knobs = !strcmp(tmpl, "qnn_conv2d") ? run_conv_knobs
                      : !strcmp(tmpl, "qnn_dense") ? run_dense_knobs
                      : !strcmp(tmpl, "qnn_depthwise") ? run_dw_knobs : NULL;
  if (knobs) {
    void *c = tec_ctx_alloc(ctx, sp.config_size);
    ck_assert_ptr_nonnull(c);
    OK(ctx, tune_config_parse(ctx, &sp, knobs, c)); /* the default config, the knobs set */
    cfg = c;
  }
  ck_assert_int_eq(op.nargs = d.nargs, nargs);
  OK(ctx, t->schedule(&d, cfg, tg, &op));
  lower_func *f = tec_lower(op.sched, tmpl, op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s: %s", tmpl, tec_ctx_error(ctx));
  ck_assert_msg(f->prepare != NULL || !strcmp(tmpl, "qnn_pool") || !strcmp(tmpl, "qnn_add"),
                "%s: the weights are packed in prepare", tmpl);
  tec_module *m = tec_build_for(ctx, 1, &f, tg);
  ck_assert_msg(m != NULL, "%s: %s", tmpl, tec_ctx_error(ctx));
  for (int call = 0; call < 2; call++) /* the second call reads what prepare packed */
    ck_assert_msg(tec_module_run(m, tmpl, nargs, args) == 0, "%s: %s", tmpl, tec_rt_last_error());
  tec_module_free(m);
  tec_ctx_free(ctx);
  return 1;
}

static int64_t mismatches(const int8_t *a, const int8_t *b, int64_t n, int64_t *first) {
  int64_t bad = 0;
  *first = -1;
  for (int64_t i = 0; i < n; i++)
    if (a[i] != b[i] && !bad++) *first = i;
  return bad;
}

/* counts of outputs at lo and hi */
static void ends(const int8_t *q, int64_t n, int lo, int hi, int64_t *nlo, int64_t *nhi) {
  *nlo = *nhi = 0;
  for (int64_t i = 0; i < n; i++) *nlo += q[i] == lo, *nhi += q[i] == hi;
}

/* ---------- conv2d and depthwise ---------- */

typedef struct conv_case {
  int64_t c_in, c_out, h, w, k, stride, pad, bx, by;
  int dw, bias;
  topi_act act;
} conv_case;

/* Calibrated data, weights (per-channel scales), bias and output params; out_div > 1 narrows
 * the output scale (saturation). Runs the default config and `picks` more of the space; the
 * expected output in *want (malloc'd) for the caller's extra checks. */
static void conv_run(const conv_case *cc, float out_div, int picks, int8_t **want_out,
                     topi_qconv2d *pq) {
  rng_state = (uint32_t)(cc->c_in * 131 + cc->c_out * 7 + cc->h + cc->k * 1000 + cc->stride);
  topi_qconv2d q = {0};
  topi_conv2d *p = &q.conv;
  *p = (topi_conv2d){.n = 1, .c_in = cc->c_in, .h = cc->h, .w = cc->w, .c_out = cc->c_out,
                     .kh = cc->k, .kw = cc->k, .stride_h = cc->stride, .stride_w = cc->stride,
                     .pad_h = cc->pad, .pad_w = cc->pad, .groups = cc->dw ? cc->c_in : 1,
                     .in_layout = {TOPI_NCHWC, cc->bx, 0}, .out_layout = {TOPI_NCHWC, cc->by, 0},
                     .epi = {cc->bias, 0, cc->act}};
  int64_t oh = (cc->h + 2 * cc->pad - cc->k) / cc->stride + 1, ow = (cc->w + 2 * cc->pad - cc->k) / cc->stride + 1;
  int64_t nin = qref_numel(p->in_layout, 1, cc->c_in, cc->h, cc->w);
  int64_t nout = qref_numel(p->out_layout, 1, cc->c_out, oh, ow);
  int64_t per = (cc->dw ? 1 : cc->c_in) * cc->k * cc->k, nw = cc->c_out * per;
  /* activations: calibrated from generated values in [-1, 3) */
  float *xf = malloc(sizeof(float) * (size_t)(cc->c_in * cc->h * cc->w));
  for (int64_t i = 0; i < cc->c_in * cc->h * cc->w; i++) xf[i] = frand(-1.0f, 3.0f);
  tec_ctx *ctx = tec_ctx_new();
  OK(ctx, topi_qnn_calibrate(ctx, xf, cc->c_in * cc->h * cc->w, &q.in));
  int8_t *xq = malloc((size_t)(cc->c_in * cc->h * cc->w));
  OK(ctx, topi_qnn_quantize(ctx, xf, cc->c_in * cc->h * cc->w, q.in, xq));
  int64_t sd[5] = {1, nin / (cc->h * cc->w * cc->bx), cc->h, cc->w, cc->bx};
  DLTensor data = i8_tensor(5, sd);
  int8_t *dp = data.data;
  for (int64_t i = 0; i < nin; i++) dp[i] = (int8_t)(frand(-128, 127)); /* lanes past c: junk */
  for (int64_t c = 0; c < cc->c_in; c++)
    for (int64_t y = 0; y < cc->h; y++)
      for (int64_t x = 0; x < cc->w; x++)
        dp[qref_index(p->in_layout, cc->c_in, cc->h, cc->w, 0, c, y, x)] = xq[(c * cc->h + y) * cc->w + x];
  /* weights: each channel its own magnitude, so its own scale */
  float *wf = malloc(sizeof(float) * (size_t)nw), *bf = malloc(sizeof(float) * (size_t)cc->c_out);
  for (int64_t o = 0; o < cc->c_out; o++) {
    for (int64_t i = 0; i < per; i++) wf[o * per + i] = frand(-0.5f, 0.5f) * (float)(1 + o % 5);
    bf[o] = frand(-1.0f, 1.0f);
  }
  int64_t sw[4] = {cc->c_out, cc->dw ? 1 : cc->c_in, cc->k, cc->k}, sb = cc->c_out;
  DLTensor kernel = i8_tensor(4, sw), bias = tu_zeros(TEC_I32, 1, &sb), wsc = tu_zeros(TEC_F32, 1, &sb);
  OK(ctx, topi_qnn_quantize_weights(ctx, wf, cc->c_out, per, kernel.data, wsc.data));
  OK(ctx, topi_qnn_quantize_bias(ctx, bf, cc->c_out, q.in.scale, wsc.data, bias.data));
  OK(ctx, topi_qnn_check_scales(ctx, "test", wsc.data, cc->c_out, cc->c_out));
  /* the output's params: calibrated on the real values of the accumulators */
  float *real = malloc(sizeof(float) * (size_t)(cc->c_out * oh * ow));
  int8_t *want = malloc((size_t)nout);
  q.out = (topi_qparams){1.0f, 0};
  qref_conv2d(&q, dp, kernel.data, cc->bias ? bias.data : NULL, wsc.data, want, real);
  OK(ctx, topi_qnn_calibrate(ctx, real, cc->c_out * oh * ow, &q.out));
  q.out.scale /= out_div;
  qref_conv2d(&q, dp, kernel.data, cc->bias ? bias.data : NULL, wsc.data, want, NULL);
  int64_t so[5] = {1, nout / (oh * ow * cc->by), oh, ow, cc->by};
  DLTensor out = i8_tensor(5, so);
  DLTensor *args[5];
  int na = 0;
  args[na++] = &data, args[na++] = &kernel;
  if (cc->bias) args[na++] = &bias;
  args[na++] = &wsc, args[na++] = &out;
  const char *tmpl = cc->dw ? "qnn_depthwise" : "qnn_conv2d";
  int ran = 0;
  for (int64_t pick = -1; ran < picks + 1 && pick < 64; pick += pick < 0 ? 1 : 3) {
    memset(out.data, 0x55, (size_t)nout); /* every element written */
    if (!build_run(tmpl, &q, pick, args, na)) continue;
    ran++;
    int64_t first, bad = mismatches(out.data, want, nout, &first);
    ck_assert_msg(bad == 0, "%s c=%lld->%lld %lldx%lld k%lld s%lld p%lld pick %lld: %lld of %lld "
                  "differ, first at %lld: %d, want %d", tmpl, (long long)cc->c_in,
                  (long long)cc->c_out, (long long)cc->h, (long long)cc->w, (long long)cc->k,
                  (long long)cc->stride, (long long)cc->pad, (long long)pick, (long long)bad,
                  (long long)nout, (long long)first, ((int8_t *)out.data)[first], want[first]);
  }
  ck_assert_int_ge(ran, 1);
  if (pq) *pq = q;
  if (want_out) *want_out = want;
  else free(want);
  free(xf), free(xq), free(wf), free(bf), free(real);
  tec_dl_free(&data), tec_dl_free(&kernel), tec_dl_free(&bias), tec_dl_free(&wsc), tec_dl_free(&out);
  tec_ctx_free(ctx);
}

static const conv_case conv_cases[] = {
    /* c_in c_out h  w  k s p bx by dw bias act */
    {20, 36, 7, 9, 1, 1, 0, 8, 16, 0, 1, TOPI_ACT_RELU6},  /* pointwise, odd sizes, tails */
    {16, 16, 8, 8, 1, 2, 0, 16, 16, 0, 0, TOPI_ACT_NONE},  /* pointwise stride 2 */
    {12, 20, 9, 11, 3, 1, 1, 4, 8, 0, 1, TOPI_ACT_RELU},   /* 3x3 padded */
    {32, 24, 13, 13, 3, 2, 1, 16, 16, 0, 1, TOPI_ACT_RELU6}, /* 3x3 stride 2 padded */
    {3, 16, 15, 15, 3, 2, 0, 4, 16, 0, 1, TOPI_ACT_NONE},  /* the first layer: 3 channels */
};
static const conv_case dw_cases[] = {
    {20, 20, 10, 9, 3, 1, 1, 8, 8, 1, 1, TOPI_ACT_RELU6},
    {32, 32, 13, 14, 3, 2, 1, 16, 16, 1, 1, TOPI_ACT_NONE},
    {16, 16, 7, 7, 3, 2, 0, 16, 16, 1, 0, TOPI_ACT_RELU},
    {12, 12, 6, 5, 3, 1, 1, 4, 4, 1, 1, TOPI_ACT_NONE},
};

/* under qemu (10-30x slower): the pointwise and the padded stride-2 3x3, the stride-2
 * depthwise, the dense with tails */
static const int conv_emulated[] = {0, 3}, dw_emulated[] = {1}, dense_emulated[] = {0};

START_TEST(conv2d_bit_exact) {
  if (tu_emulated()) conv_run(&conv_cases[conv_emulated[_i]], 1.0f, 0, NULL, NULL);
  else conv_run(&conv_cases[_i], 1.0f, _i > 1 ? 0 : 1, NULL, NULL);
}
END_TEST

START_TEST(depthwise_bit_exact) {
  if (tu_emulated()) conv_run(&dw_cases[dw_emulated[_i]], 1.0f, 0, NULL, NULL);
  else conv_run(&dw_cases[_i], 1.0f, _i > 1 ? 0 : 1, NULL, NULL);
}
END_TEST

/* A narrower output scale: outputs pile up at -128 and 127, the same in both. */
START_TEST(conv_saturates_both_ends) {
  for (int dw = 0; dw < 2; dw++) {
    const conv_case *cc = dw ? &dw_cases[1] : &conv_cases[1]; /* act none */
    int8_t *want;
    topi_qconv2d q;
    conv_run(cc, 16.0f, 0, &want, &q);
    int64_t oh = (cc->h + 2 * cc->pad - cc->k) / cc->stride + 1, ow = (cc->w + 2 * cc->pad - cc->k) / cc->stride + 1;
    int64_t nlo, nhi;
    ends(want, qref_numel(q.conv.out_layout, 1, cc->c_out, oh, ow), -128, 127, &nlo, &nhi);
    ck_assert_msg(nlo > 0 && nhi > 0, "saturated: %lld at -128, %lld at 127", (long long)nlo,
                  (long long)nhi);
    free(want);
  }
}
END_TEST

/* ---------- dense ---------- */

typedef struct dense_case {
  int64_t m, n, k;
  int bias;
  topi_act act;
  float out_div;
  int ends;  /* 1: the expected output holds both -128 and 127 (checked) */
} dense_case;

static void dense_run(const dense_case *dc, int picks) {
  rng_state = (uint32_t)(dc->m * 7 + dc->n * 131 + dc->k);
  tec_ctx *ctx = tec_ctx_new();
  topi_qdense q = {.m = dc->m, .n = dc->n, .k = dc->k, .bias = dc->bias, .act = dc->act};
  float *af = malloc(sizeof(float) * (size_t)(dc->m * dc->k)), *wf = malloc(sizeof(float) * (size_t)(dc->n * dc->k));
  float *bf = malloc(sizeof(float) * (size_t)dc->n), *real = malloc(sizeof(float) * (size_t)(dc->m * dc->n));
  for (int64_t i = 0; i < dc->m * dc->k; i++) af[i] = frand(-2.0f, 1.0f);
  for (int64_t i = 0; i < dc->n * dc->k; i++) wf[i] = frand(-0.3f, 0.3f) * (float)(1 + (i / dc->k) % 3);
  for (int64_t i = 0; i < dc->n; i++) bf[i] = frand(-1.0f, 1.0f);
  int64_t sa[2] = {dc->m, dc->k}, sw[2] = {dc->n, dc->k}, so[2] = {dc->m, dc->n}, sn = dc->n;
  DLTensor a = i8_tensor(2, sa), w = i8_tensor(2, sw), out = i8_tensor(2, so);
  DLTensor bias = tu_zeros(TEC_I32, 1, &sn), wsc = tu_zeros(TEC_F32, 1, &sn);
  OK(ctx, topi_qnn_calibrate(ctx, af, dc->m * dc->k, &q.in));
  OK(ctx, topi_qnn_quantize(ctx, af, dc->m * dc->k, q.in, a.data));
  OK(ctx, topi_qnn_quantize_weights(ctx, wf, dc->n, dc->k, w.data, wsc.data));
  OK(ctx, topi_qnn_quantize_bias(ctx, bf, dc->n, q.in.scale, wsc.data, bias.data));
  int8_t *want = malloc((size_t)(dc->m * dc->n));
  q.out = (topi_qparams){1.0f, 0};
  qref_dense(&q, a.data, w.data, dc->bias ? bias.data : NULL, wsc.data, want, real);
  OK(ctx, topi_qnn_calibrate(ctx, real, dc->m * dc->n, &q.out));
  q.out.scale /= dc->out_div;
  qref_dense(&q, a.data, w.data, dc->bias ? bias.data : NULL, wsc.data, want, NULL);
  if (dc->ends) {
    int64_t nlo, nhi;
    ends(want, dc->m * dc->n, -128, 127, &nlo, &nhi);
    ck_assert_msg(nlo > 0 && nhi > 0, "saturated: %lld, %lld", (long long)nlo, (long long)nhi);
  }
  DLTensor *args[5];
  int na = 0;
  args[na++] = &a, args[na++] = &w;
  if (dc->bias) args[na++] = &bias;
  args[na++] = &wsc, args[na++] = &out;
  int ran = 0;
  for (int64_t pick = -1; ran < picks + 1 && pick < 200; pick += pick < 0 ? 1 : 7) {
    memset(out.data, 0x55, (size_t)(dc->m * dc->n));
    if (!build_run("qnn_dense", &q, pick, args, na)) continue;
    ran++;
    int64_t first, bad = mismatches(out.data, want, dc->m * dc->n, &first);
    ck_assert_msg(bad == 0, "qnn_dense %lldx%lldx%lld pick %lld: %lld differ, first at %lld: %d, "
                  "want %d", (long long)dc->m, (long long)dc->n, (long long)dc->k, (long long)pick,
                  (long long)bad, (long long)first, ((int8_t *)out.data)[first], want[first]);
  }
  free(af), free(wf), free(bf), free(real), free(want);
  tec_dl_free(&a), tec_dl_free(&w), tec_dl_free(&out), tec_dl_free(&bias), tec_dl_free(&wsc);
  tec_ctx_free(ctx);
}

static const dense_case dense_cases[] = {
    {5, 37, 50, 1, TOPI_ACT_NONE, 1.0f, 0},   /* k % 4 != 0, n past the panels */
    {1, 10, 64, 0, TOPI_ACT_RELU, 1.0f, 0},   /* one row */
    {16, 64, 128, 1, TOPI_ACT_RELU6, 1.0f, 0},
    {7, 33, 20, 1, TOPI_ACT_NONE, 16.0f, 1},  /* saturation at both ends */
};

START_TEST(dense_bit_exact) {
  if (tu_emulated()) dense_run(&dense_cases[dense_emulated[_i]], 0);
  else dense_run(&dense_cases[_i], _i > 1 ? 0 : 1);
}
END_TEST

/* TEC_TEST_LONG=1 (a long run, docs/quantized.md): random conv, depthwise and dense problems,
 * each bit-exact at its default and two more configs. Seeded, so a failure repeats. */
START_TEST(random_sweep) {
  int n = atoi(getenv("TEC_TEST_LONG") ? getenv("TEC_TEST_LONG") : "0");
  if (n < 1) return;
  uint32_t seed = 12345;
  for (int t = 0; t < 30 * n; t++) {
    seed = seed * 1664525u + 1013904223u;
    uint32_t r = seed >> 4;
    static const int64_t blocks[] = {4, 8, 16};
    int kind = (int)(r % 3), k = r / 3 % 2 ? 3 : 1, s = 1 + (int)(r / 6 % 2);
    int64_t c_in = 1 + (int64_t)(r / 12 % 40), c_out = 1 + (int64_t)(r / 480 % 40);
    int64_t h = k + (int64_t)(r / 19200 % 12), w = k + (int64_t)(r / 230400 % 12);
    int pad = k == 3 ? (int)(r / 2764800 % 2) : 0;
    topi_act act = (topi_act)(t % 3);
    if (kind == 2) {
      dense_case dc = {1 + (int64_t)(r % 9), c_out, c_in * 3, (int)(r / 7 % 2), act,
                       t % 4 ? 1.0f : 8.0f, 0};
      dense_run(&dc, 2);
      continue;
    }
    conv_case cc = {c_in, kind ? c_in : c_out, h, w, k, s, pad, blocks[r % 3],
                    kind ? blocks[r % 3] : blocks[r / 5 % 3], kind, (int)(t % 2), act};
    conv_run(&cc, t % 4 ? 1.0f : 8.0f, 2, NULL, NULL);
  }
}
END_TEST

/* ---------- pooling and add ---------- */

static void fill_i8(DLTensor *t, int64_t n) {
  for (int64_t i = 0; i < n; i++) ((int8_t *)t->data)[i] = (int8_t)frand(-128.0f, 128.0f);
}

/* the lanes past c of a blocked buffer hold the zero point (a real 0) */
static void zp_lanes(DLTensor *t, topi_layout l, int64_t c, int64_t h, int64_t w, int32_t zp) {
  if (l.kind != TOPI_NCHWC) return;
  int64_t cc = qref_numel(l, 1, c, 1, 1);
  for (int64_t ci = c; ci < cc; ci++)
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++) ((int8_t *)t->data)[qref_index(l, cc, h, w, 0, ci, y, x)] = (int8_t)zp;
}

static void layout_shape(topi_layout l, int64_t c, int64_t h, int64_t w, int64_t *s, int *nd) {
  if (l.kind == TOPI_NCHWC) *nd = 5, s[0] = 1, s[1] = (c + l.block - 1) / l.block, s[2] = h, s[3] = w, s[4] = l.block;
  else if (l.kind == TOPI_NHWC) *nd = 4, s[0] = 1, s[1] = h, s[2] = w, s[3] = c;
  else *nd = 4, s[0] = 1, s[1] = c, s[2] = h, s[3] = w;
}

/* Runs tmpl at its default config and with every knob 0 (not vectorized, not parallel), the
 * output (the last argument, n elements) compared with want; `which` names the case. */
static void run_both(const char *tmpl, const void *problem, DLTensor **args, int nargs,
                     const int8_t *want, int64_t n, int which) {
  DLTensor *out = args[nargs - 1];
  for (int64_t pick = -1; pick < 1; pick++) {
    memset(out->data, 0x55, (size_t)n); /* every element written */
    ck_assert(build_run(tmpl, problem, pick, args, nargs));
    int64_t first, bad = mismatches(out->data, want, n, &first);
    ck_assert_msg(bad == 0, "%s case %d pick %lld: %lld differ, first at %lld: %d want %d", tmpl,
                  which, (long long)pick, (long long)bad, (long long)first,
                  ((int8_t *)out->data)[first], want[first]);
  }
}

START_TEST(pool_bit_exact) {
  static const struct {
    topi_pool_mode mode;
    topi_layout l;
    int64_t c, h, w, k, s, pad;
    int incl;
    topi_qparams in, out;
  } cs[] = {
      {TOPI_POOL_MAX, {TOPI_NCHWC, 16, 0}, 20, 9, 9, 3, 2, 1, 0, {0.05f, -3}, {0.05f, -3}},
      {TOPI_POOL_MAX, {TOPI_NHWC, 0, 0}, 7, 8, 6, 2, 2, 0, 0, {0.05f, 10}, {0.02f, -20}},
      {TOPI_POOL_AVG, {TOPI_NCHW, 0, 0}, 5, 7, 9, 2, 2, 0, 0, {0.1f, 4}, {0.1f, 4}},
      {TOPI_POOL_AVG, {TOPI_NHWC, 0, 0}, 6, 7, 7, 3, 1, 1, 0, {0.1f, -7}, {0.03f, 2}},
      {TOPI_POOL_AVG, {TOPI_NCHWC, 8, 0}, 12, 6, 5, 3, 2, 1, 1, {0.2f, 1}, {0.05f, 0}},
  };
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
    rng_state = 77u + (uint32_t)i;
    topi_qpool q = {.pool = {.n = 1, .c = cs[i].c, .h = cs[i].h, .w = cs[i].w, .kh = cs[i].k,
                             .kw = cs[i].k, .stride_h = cs[i].s, .stride_w = cs[i].s,
                             .pad_h = cs[i].pad, .pad_w = cs[i].pad, .mode = cs[i].mode,
                             .count_include_pad = cs[i].incl, .in_layout = cs[i].l,
                             .out_layout = cs[i].l},
                    .in = cs[i].in, .out = cs[i].out};
    int64_t oh = (cs[i].h + 2 * cs[i].pad - cs[i].k) / cs[i].s + 1, ow = (cs[i].w + 2 * cs[i].pad - cs[i].k) / cs[i].s + 1;
    int64_t si[5], so[5], nin = qref_numel(cs[i].l, 1, cs[i].c, cs[i].h, cs[i].w), nout = qref_numel(cs[i].l, 1, cs[i].c, oh, ow);
    int nd;
    layout_shape(cs[i].l, cs[i].c, cs[i].h, cs[i].w, si, &nd);
    layout_shape(cs[i].l, cs[i].c, oh, ow, so, &nd);
    DLTensor in = i8_tensor(nd, si), out = i8_tensor(nd, so);
    fill_i8(&in, nin);
    zp_lanes(&in, cs[i].l, cs[i].c, cs[i].h, cs[i].w, q.in.zero_point);
    int8_t *want = malloc((size_t)nout);
    qref_pool(&q, in.data, want);
    int64_t nlo, nhi;
    ends(want, nout, -128, 127, &nlo, &nhi);
    if (i == 1) ck_assert_msg(nlo > 0 && nhi > 0, "case 1 saturates both ends (%lld, %lld)",
                              (long long)nlo, (long long)nhi);
    run_both("qnn_pool", &q, (DLTensor *[]){&in, &out}, 2, want, nout, (int)i);
    free(want);
    tec_dl_free(&in), tec_dl_free(&out);
  }
}
END_TEST

START_TEST(add_bit_exact) {
  static const struct {
    topi_layout l;
    int64_t c, h, w;
    topi_act act;
    topi_qparams a, b, out;
  } cs[] = {
      {{TOPI_NCHWC, 16, 0}, 20, 5, 7, TOPI_ACT_RELU, {0.05f, -3}, {0.11f, 7}, {0.1f, -10}},
      {{TOPI_NHWC, 0, 0}, 9, 4, 3, TOPI_ACT_NONE, {0.02f, 0}, {0.3f, -128}, {0.05f, 5}},
      {{TOPI_NCHW, 0, 0}, 3, 5, 5, TOPI_ACT_RELU6, {0.04f, 12}, {0.04f, -12}, {0.03f, -100}},
      {{TOPI_NCHWC, 8, 0}, 8, 3, 3, TOPI_ACT_NONE, {0.5f, 127}, {0.5f, -128}, {0.25f, 0}},
  };
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
    rng_state = 99u + (uint32_t)i;
    topi_qadd q = {.n = 1, .c = cs[i].c, .h = cs[i].h, .w = cs[i].w, .layout = cs[i].l,
                   .act = cs[i].act, .a = cs[i].a, .b = cs[i].b, .out = cs[i].out};
    int64_t s[5], n = qref_numel(cs[i].l, 1, cs[i].c, cs[i].h, cs[i].w);
    int nd;
    layout_shape(cs[i].l, cs[i].c, cs[i].h, cs[i].w, s, &nd);
    DLTensor a = i8_tensor(nd, s), b = i8_tensor(nd, s), out = i8_tensor(nd, s);
    fill_i8(&a, n), fill_i8(&b, n);
    zp_lanes(&a, cs[i].l, cs[i].c, cs[i].h, cs[i].w, q.a.zero_point);
    zp_lanes(&b, cs[i].l, cs[i].c, cs[i].h, cs[i].w, q.b.zero_point);
    int8_t *want = malloc((size_t)n);
    qref_add(&q, a.data, b.data, want);
    if (i == 3) {
      int64_t nlo, nhi;
      ends(want, n, -128, 127, &nlo, &nhi);
      ck_assert_msg(nlo > 0 && nhi > 0, "case 3 saturates both ends (%lld, %lld)", (long long)nlo,
                    (long long)nhi);
    }
    run_both("qnn_add", &q, (DLTensor *[]){&a, &b, &out}, 3, want, n, (int)i);
    free(want);
    tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&out);
  }
}
END_TEST

/* ---------- the scheme's pieces ---------- */

START_TEST(rounding_and_bounds) {
  /* ties go to even, both signs: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2 */
  topi_qparams o = {1.0f, 0};
  ck_assert_int_eq(qref_requant(5, 0.5f, o, TOPI_ACT_NONE), 2);
  ck_assert_int_eq(qref_requant(7, 0.5f, o, TOPI_ACT_NONE), 4);
  ck_assert_int_eq(qref_requant(-5, 0.5f, o, TOPI_ACT_NONE), -2);
  int32_t lo, hi;
  topi_qnn_bounds((topi_qparams){0.05f, -100}, TOPI_ACT_RELU6, &lo, &hi);
  ck_assert_int_eq(lo, -100); ck_assert_int_eq(hi, 20); /* 6 / 0.05 = 120 */
  topi_qnn_bounds((topi_qparams){0.01f, -100}, TOPI_ACT_RELU6, &lo, &hi);
  ck_assert_int_eq(hi, 127); /* 600 steps do not fit: the int8 bound */
  topi_qnn_bounds((topi_qparams){0.01f, 5}, TOPI_ACT_RELU, &lo, &hi);
  ck_assert_int_eq(lo, 5); ck_assert_int_eq(hi, 127);
  /* and against the reference's bounds (qnnref.c, from docs/quantized.md) over zero points
   * -128..127, each activation, and scales from 1e-30 to 1e3 (4 and 12: 6 / scale is a tie,
   * 1.5 and 0.5; 6 / 255 and 6 / 254.5: hi at or next to 127 with zp -128) */
  static const float scs[] = {1e-30f, 1e-3f, 0.01f, 6.0f / 255.0f, 6.0f / 254.5f, 0.02f,
                              0.05f, 6.0f / 12.5f, 6.0f / 13.5f, 0.5f, 1.0f, 4.0f, 12.0f, 1e3f};
  for (int zp = -128; zp <= 127; zp++)
    for (size_t k = 0; k < sizeof scs / sizeof *scs; k++)
      for (int a = TOPI_ACT_NONE; a <= TOPI_ACT_RELU6; a++) {
        int32_t rlo, rhi;
        topi_qparams op = {scs[k], zp};
        topi_qnn_bounds(op, (topi_act)a, &lo, &hi);
        qref_bounds(op, (topi_act)a, &rlo, &rhi);
        ck_assert_msg(lo == rlo && hi == rhi, "scale %a zp %d act %d: [%d, %d], reference [%d, %d]",
                      (double)scs[k], zp, a, lo, hi, rlo, rhi);
      }
  /* the calibration: [min(x, 0), max(x, 0)] over 255 steps, zero exact */
  tec_ctx *ctx = tec_ctx_new();
  topi_qparams q;
  OK(ctx, topi_qnn_calibrate(ctx, (const float[]){-1.0f, 0.5f, 4.1f}, 3, &q));
  ck_assert_float_eq(q.scale, 5.1f / 255.0f);
  ck_assert_int_eq(q.zero_point, -78); /* -128 + 1 / 0.02 = -78 */
  OK(ctx, topi_qnn_calibrate(ctx, (const float[]){2.0f, 3.0f}, 2, &q));
  ck_assert_int_eq(q.zero_point, -128);
  int8_t w[4];
  float sc[2];
  OK(ctx, topi_qnn_quantize_weights(ctx, (const float[]){0.5f, -1.27f, 0, 0}, 2, 2, w, sc));
  ck_assert_float_eq(sc[0], 1.27f / 127.0f);
  ck_assert_int_eq(w[0], 50); ck_assert_int_eq(w[1], -127);
  ck_assert_float_eq(sc[1], 1.0f); ck_assert_int_eq(w[2], 0);
  tec_ctx_free(ctx);
}
END_TEST

/* The requantization's rounding and narrowing as codegen emits them for the host (on
 * AVX-512: vcvtps2dq {rn-sae}, and the clamps over the whole int8 range as max + convert +
 * vpmovusdb + xor, codegen_requant.c), on floats the templates' small accumulators never
 * reach: every 997th float bit pattern (NaN left out), +-inf, +-2^31 and its neighbours,
 * every half and its neighbouring floats in [-1100, 1100], and 2^20 random values in
 * [-400, 400]; against the scheme in double (nearbyint: ties to even, then the clamp).
 * qnn_requant_f's output stage (several zero points and activations, 16 and 32 lanes: the
 * clamp over the whole range with A = 0, A = -123, A = -255, and narrower clamps) and
 * int32(round_even(x)) on the values within int32. */
typedef struct rq_u {
  te_tensor *x;
  topi_qparams out;
  topi_act act;
  int i32;
} rq_u;

static const ir_expr *rq_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const rq_u *r = u;
  const ir_expr *x = TE_AT(r->x, i[0]);
  return r->i32 ? ir_cast(TEC_I32, ir_round_even(x)) : qnn_requant_f(ctx, x, r->out, r->act);
}

static tec_packed_fn rq_build(tec_ctx *ctx, rq_u *r, int64_t size, int lanes, char **asm_text) {
  const ir_expr *n = ir_int(ctx, size); /* a multiple of lanes: no scalar tail */
  r->x = te_placeholder(ctx, "x", TEC_F32, 1, &n);
  te_tensor *y = te_compute(ctx, &(te_compute_decl){.name = "y", .ndim = 1, .shape = &n,
                                                     .body = rq_body, .user = r});
  sch_schedule *s = sch_create(ctx, 1, &y);
  sch_stage *st = sch_stage_of(s, y);
  sch_iter *o, *in;
  OK(ctx, sch_split(st, sch_axis(st, 0), lanes, &o, &in));
  OK(ctx, sch_vectorize(st, in));
  return tu_build_text(ctx, s, "rq", 2, (te_tensor *[]){r->x, y}, TEC_EMIT_ASM, asm_text);
}

static float rq_bits(uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

START_TEST(requant_rounding_exact) {
  int64_t n = 0, cap = ((int64_t)1 << 32) / 997 + 2 * 2201 * 3 + (1 << 20) + 64;
  cap = (cap + 31) / 32 * 32;
  float *x = malloc((size_t)cap * sizeof *x);
  ck_assert_ptr_nonnull(x);
  for (uint64_t u = 0; u < ((uint64_t)1 << 32); u += 997)
    if (!isnan(rq_bits((uint32_t)u))) x[n++] = rq_bits((uint32_t)u);
  for (int k = -2200; k <= 2200; k++) { /* k / 2 and its neighbours */
    float h = (float)k * 0.5f;
    x[n++] = h, x[n++] = nextafterf(h, -INFINITY), x[n++] = nextafterf(h, INFINITY);
  }
  rng_state = 37;
  for (int k = 0; k < (1 << 20); k++) x[n++] = frand(-400.0f, 400.0f);
  const float sp[] = {INFINITY, -INFINITY, 2147483648.0f, -2147483648.0f, 2147483520.0f,
                      -2147483520.0f, 4294967296.0f, -4294967296.0f, FLT_MAX, -FLT_MAX,
                      0.0f, -0.0f, 1e-40f, -1e-40f, 255.5f, 254.5f, 0.5f, -0.5f, 127.5f, -128.5f};
  for (size_t k = 0; k < sizeof sp / sizeof *sp; k++) x[n++] = sp[k];
  while (n % 32) x[n++] = 1.5f;
  ck_assert_int_le(n, cap);
  DLTensor a = tu_zeros(TEC_F32, 1, &n), y8 = tu_zeros(TEC_I8, 1, &n), y32 = tu_zeros(TEC_I32, 1, &n);
  memcpy(tu_f32(&a), x, (size_t)n * sizeof *x);
  static const struct {
    float scale;
    int32_t zp;
    topi_act act;
  } cs[] = {{0.05f, -128, TOPI_ACT_RELU}, {0.2f, -5, TOPI_ACT_NONE},
            {6.0f / 255.0f, -128, TOPI_ACT_RELU6}, {0.2f, 127, TOPI_ACT_NONE},
            {0.2f, -5, TOPI_ACT_RELU6}, {0.01f, 10, TOPI_ACT_RELU}, {0.3f, 0, TOPI_ACT_NONE}};
  for (size_t c = 0; c < sizeof cs / sizeof *cs; c++)
    for (int lanes = 16; lanes <= 32; lanes += 16) {
      tec_ctx *ctx = tec_ctx_new();
      rq_u r = {.out = {cs[c].scale, cs[c].zp}, .act = cs[c].act};
      char *as = NULL;
      tec_packed_fn fn = rq_build(ctx, &r, n, lanes, &as);
      int32_t lo, hi;
      qref_bounds(r.out, r.act, &lo, &hi);
      const tec_target *host = tec_target_parse(ctx, NULL);
      if (host->arch == TEC_ARCH_X86_64 && tec_target_has(host, TEC_FEATURE_AVX512F)) {
        /* an AVX-512 host (the codegen's own test, not the assembly's registers): one
         * instruction rounds and converts */
        tu_assert_contains(as, "vcvtps2dq\t{rn-sae}");
        assert_not_contains(as, "vrndscaleps");
        ck_assert_msg(!(lo == -128 && hi == 127) || strstr(as, "vpmovusdb"),
                      "zp %d act %d: no vpmovusdb", cs[c].zp, (int)cs[c].act);
      }
      free(as);
      ck_assert_msg(fn((DLTensor *[]){&a, &y8}, 2) == 0, "%s", tec_rt_last_error());
      int64_t bad = 0, first = -1;
      for (int64_t i = 0; i < n; i++)
        if (((int8_t *)y8.data)[i] != qref_requant_f(x[i], r.out, r.act) && !bad++) first = i;
      ck_assert_msg(!bad, "zp %d act %d lanes %d: %lld of %lld differ, first x = %a: got %d, want %d",
                    cs[c].zp, (int)cs[c].act, lanes, (long long)bad, (long long)n,
                    first < 0 ? 0.0 : (double)x[first], first < 0 ? 0 : ((int8_t *)y8.data)[first],
                    first < 0 ? 0 : qref_requant_f(x[first], r.out, r.act));
      tec_ctx_free(ctx);
    }
  /* int32(round_even(x)) where it is defined: |x| < 2^31 (the rest set to 0.5) */
  for (int64_t i = 0; i < n; i++)
    if (!(fabsf(x[i]) < 2147483648.0f)) tu_f32(&a)[i] = 0.5f;
  for (int lanes = 16; lanes <= 32; lanes += 16) {
    tec_ctx *ctx = tec_ctx_new();
    rq_u r = {.i32 = 1};
    tec_packed_fn fn = rq_build(ctx, &r, n, lanes, NULL);
    ck_assert_msg(fn((DLTensor *[]){&a, &y32}, 2) == 0, "%s", tec_rt_last_error());
    for (int64_t i = 0; i < n; i++) {
      float v = tu_f32(&a)[i];
      ck_assert_msg(((int32_t *)y32.data)[i] == (int32_t)nearbyint((double)v),
                    "int32(round_even(%a)) = %d", (double)v, ((int32_t *)y32.data)[i]);
    }
    tec_ctx_free(ctx);
  }
  tec_dl_free(&a), tec_dl_free(&y8), tec_dl_free(&y32);
  free(x);
}
END_TEST

/* Multipliers of exactly 0.5: every odd accumulator is a tie, which goes to the even
 * neighbour (5 -> 2, -5 -> -2, 3 -> 2, -3 -> -2): qnn_dense, whose requantization every
 * template shares (qnn_requant). */
START_TEST(ties_to_even) {
  enum { M = 4, K = 4, N = 8 };
  topi_qdense q = {.m = M, .n = N, .k = K, .in = {1.0f, 0}, .out = {1.0f, 0}};
  int64_t sa[2] = {M, K}, sw[2] = {N, K}, so[2] = {M, N}, sn = N;
  DLTensor a = i8_tensor(2, sa), w = i8_tensor(2, sw), out = i8_tensor(2, so);
  DLTensor wsc = tu_zeros(TEC_F32, 1, &sn);
  int8_t *ap = a.data, *wp = w.data;
  for (int i = 0; i < M * K; i++) ap[i] = (int8_t)(i % K == 0 ? 2 * i - 15 : 0); /* odd */
  for (int j = 0; j < N; j++) {
    ((float *)wsc.data)[j] = 0.5f;
    for (int k = 0; k < K; k++) wp[j * K + k] = (int8_t)(k == 0 ? (j % 2 ? -1 : 1) : 7);
  }
  int8_t want[M * N];
  qref_dense(&q, a.data, w.data, NULL, wsc.data, want, NULL);
  ck_assert(build_run("qnn_dense", &q, -1, (DLTensor *[]){&a, &w, &wsc, &out}, 4));
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int acc = ap[i * K] * wp[j * K];
      int even = (int)nearbyint(acc * 0.5); /* the host's default mode: ties to even */
      ck_assert_int_eq(want[i * N + j], even);
      ck_assert_msg(((int8_t *)out.data)[i * N + j] == even, "acc %d: got %d, want %d", acc,
                    ((int8_t *)out.data)[i * N + j], even);
      ck_assert_int_eq(even % 2, 0);
    }
  tec_dl_free(&a), tec_dl_free(&w), tec_dl_free(&out), tec_dl_free(&wsc);
}
END_TEST

/* The requantization's rounding is an instruction on each target, not a libm call: the
 * vectorized output stage of qnn_conv2d rounds and converts in one vcvtps2dq {rn-sae} on
 * AVX-512 (ties to even, whatever MXCSR says; no vrndscaleps left) and in one fcvtns on AArch64
 * (ties to even; no frintn left); the intrinsic refuses an integer operand. */
START_TEST(round_even_instructions) {
  static const struct {
    const char *target, *insn;
  } ts[] = {{"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512", "vcvtps2dq\t{rn-sae}"},
            {"rasp4b", "fcvtns\tv"}};
  for (int i = 0; i < 2; i++) {
    tec_ctx *ctx = tec_ctx_new();
    topi_qconv2d q = {.conv = {.n = 1, .c_in = 16, .h = 4, .w = 4, .c_out = 16, .kh = 1, .kw = 1,
                               .stride_h = 1, .stride_w = 1, .in_layout = {TOPI_NCHWC, 16, 0},
                               .out_layout = {TOPI_NCHWC, 16, 0}},
                      .in = {0.1f, 3}, .out = {0.2f, -5}};
    topi_op op;
    OK(ctx, topi_instantiate(ctx, topi_template_find("qnn_conv2d"), &q,
                             tec_target_parse(ctx, ts[i].target), &op));
    char *s = tu_emit_text(ctx, tec_lower(op.sched, "qc", op.nargs, op.args), ts[i].target,
                           TEC_EMIT_ASM);
    tu_assert_contains(s, ts[i].insn);
    assert_not_contains(s, "roundeven");
    assert_not_contains(s, i ? "frintn" : "vrndscaleps");
    free(s);
    ck_assert_str_eq(ir_intrinsic_name(IR_INTRIN_ROUND_EVEN), "round_even");
    ck_assert_ptr_null(ir_round_even(ir_int(ctx, 3)));
    tu_assert_contains(tec_ctx_error(ctx), "round_even needs float arguments");
    tec_ctx_free(ctx);
  }
}
END_TEST

/* The dot-product path (wlayout 0, sch_tensorize dot4) on each x86 form, run on this host, and
 * the plain nest (wlayout 1): pointwise with tails, 3x3 stride 2 padded and dense with k % 4,
 * bit-exact on each; the instruction of each target seen in its assembly (AArch64's too). */
static const struct {
  const char *target, *insn; /* NULL target: the host (vpdpbusd when it has avx512vnni) */
  const char *conv_knobs, *dense_knobs;
} dot_targets[] = {
    {NULL, "vpdpbusd", NULL, NULL},
    {"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512", "vpmaddwd", NULL, NULL}, /* no VNNI */
    {"llvm -mtriple=x86_64-linux-gnu -mcpu=haswell", "vpmaddwd", NULL, NULL},  /* AVX2: 8 lanes */
    {NULL, NULL, "wlayout=1", "wlayout=1"},                                  /* the plain nests */
    /* the other tilings: the input copy per row (3x3 too), tails of blocks, columns, rows */
    {NULL, NULL, "in_row=1 oc_tile=2 ow_tile=5", "mr=3 nr=48"},
    {NULL, NULL, "in_row=0 oc_tile=1 ow_tile=4", "mr=2 nr=16"},
    {"llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+dotprod", "sdot\tv", NULL, NULL}, /* emitted */
};

START_TEST(dot_paths_bit_exact) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *host = tec_target_parse(ctx, NULL), *t = tec_target_parse(ctx, dot_targets[_i].target);
  ck_assert_ptr_nonnull(t);
  const char *insn = dot_targets[_i].insn;
  if (!dot_targets[_i].target && insn && !tec_target_has(host, TEC_FEATURE_AVX512VNNI)) insn = "dot4";
  if (insn && strcmp(insn, "dot4")) { /* the instruction, in a 3x3 layer's assembly */
    topi_qconv2d q = {.conv = {.n = 1, .c_in = 16, .h = 6, .w = 6, .c_out = 32, .kh = 3, .kw = 3,
                               .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1,
                               .in_layout = {TOPI_NCHWC, 16, 0}, .out_layout = {TOPI_NCHWC, 16, 0}},
                      .in = {0.1f, 3}, .out = {0.2f, -5}};
    topi_op op;
    OK(ctx, topi_instantiate(ctx, topi_template_find("qnn_conv2d"), &q, t, &op));
    char *s = tu_emit_text(ctx, tec_lower(op.sched, "qc", op.nargs, op.args),
                           dot_targets[_i].target, TEC_EMIT_ASM);
    tu_assert_contains(s, insn);
    if (strcmp(insn, "vpdpbusd")) assert_not_contains(s, "vpdpbusd");
    free(s);
  }
  /* run where this host can: x86 targets on an x86 host, not under emulation */
  if (host->arch == TEC_ARCH_X86_64 && t->arch == TEC_ARCH_X86_64 && !tu_emulated()) {
    run_target = dot_targets[_i].target;
    run_conv_knobs = dot_targets[_i].conv_knobs, run_dense_knobs = dot_targets[_i].dense_knobs;
    conv_run(&conv_cases[0], 1.0f, 0, NULL, NULL);
    conv_run(&conv_cases[3], 1.0f, 0, NULL, NULL);
    dense_run(&dense_cases[0], 0);
    run_target = run_conv_knobs = run_dense_knobs = NULL;
  }
  tec_ctx_free(ctx);
}
END_TEST

/* oc_tile rounds acc's output blocks up (3 blocks in tiles of 2: a 4th never stored); on x86
 * acc starts from bias_q, which has the 3 real blocks only: every access checked at run time
 * (TEC_CHECK_BOUNDS, lower/bound_checkers.c), 1x1 and 3x3, bit-exact. Before the fix the 4th
 * block read bias_q[48..63] of 48 and the run returned the checker's error. */
static const conv_case tail_block_cases[] = {
    {20, 36, 7, 9, 1, 1, 0, 8, 16, 0, 1, TOPI_ACT_RELU6},
    {16, 48, 6, 6, 3, 1, 1, 16, 16, 0, 1, TOPI_ACT_NONE},
};
START_TEST(bias_tail_blocks_in_bounds) {
  ck_assert_int_eq(setenv("TEC_CHECK_BOUNDS", "1", 1), 0);
  run_conv_knobs = "oc_tile=2";
  conv_run(&tail_block_cases[_i], 1.0f, 0, NULL, NULL);
  run_conv_knobs = NULL;
  unsetenv("TEC_CHECK_BOUNDS");
}
END_TEST

/* qnn_conv2d's knob plane (a 1x1 stride-1 unpadded conv: the plane one row of h*w pixels, the
 * accumulators started from the bias, each tile's outputs requantized as one vector), run on
 * this host where it is offered: without VNNI (no uint8 shift, skylake-avx512); 7x9 = 63
 * pixels in tiles of 9 (none left), 4 with 2 blocks (a last tile of 3), 16 (of 15), NCHW8c ->
 * NCHW16c with tails of channels, bias and ReLU6, and without bias; bit-exact against qnnref.
 * Where the input is copied (VNNI's shift; a 3x3) plane is not offered: refused by name. */
static const conv_case plane_cases[] = {
    {20, 36, 7, 9, 1, 1, 0, 8, 16, 0, 1, TOPI_ACT_RELU6},
    {12, 8, 5, 3, 1, 1, 0, 4, 4, 0, 0, TOPI_ACT_NONE},
};
static const char *const plane_knobs[] = {"plane=1 ow_tile=9", "plane=1 ow_tile=4 oc_tile=2",
                                          "plane=1 ow_tile=15 oc_tile=1"};

START_TEST(plane_bit_exact) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *host = tec_target_parse(ctx, NULL);
  if (host->arch == TEC_ARCH_X86_64 && !tu_emulated()) {
    run_target = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512";
    for (size_t k = 0; k < sizeof plane_knobs / sizeof *plane_knobs; k++) {
      run_conv_knobs = plane_knobs[k];
      conv_run(&plane_cases[0], 1.0f, 0, NULL, NULL);
    }
    run_conv_knobs = "plane=1 ow_tile=3";
    conv_run(&plane_cases[1], 1.0f, 0, NULL, NULL);
    run_target = run_conv_knobs = NULL;
  }
  /* not offered: the shifted copy on VNNI, a 3x3 */
  topi_qconv2d q = {.conv = {.n = 1, .c_in = 16, .h = 6, .w = 6, .c_out = 32, .kh = 1, .kw = 1,
                             .stride_h = 1, .stride_w = 1, .in_layout = {TOPI_NCHWC, 16, 0},
                             .out_layout = {TOPI_NCHWC, 16, 0}},
                    .in = {0.1f, 3}, .out = {0.2f, -5}};
  tune_space sp;
  for (int c = 0; c < 2; c++) {
    if (c) q.conv.kh = q.conv.kw = 3, q.conv.pad_h = q.conv.pad_w = 1;
    OK(ctx, topi_space_of(ctx, "qnn_conv2d", &q, tec_target_parse(ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512 -mattr=+avx512bw,+avx512vl,+avx512vnni"), &sp));
    void *cfg = tec_ctx_alloc(ctx, sp.config_size);
    ck_assert_int_eq(tune_config_parse(ctx, &sp, "plane=1", cfg), -1);
    tu_assert_contains(tec_ctx_error(ctx), "plane");
    tec_ctx_clear_error(ctx);
  }
  tec_ctx_free(ctx);
}
END_TEST

/* qnn_depthwise's two paths, each asked for: dot = 1 (a row's taps as dot4's group of 4, the
 * block's channels as lanes: vpdpbusd with one vpermb per 4 pixels on VNNI, the widening path
 * without) and dot = 0 (s16 multiply-adds), stride 1 and 2, a 5x5 window (two groups of 4
 * taps a row), tiles that do not divide the output, the input copied per block and per row
 * tile; bit-exact against qnnref on the host, the instructions in the assembly; dot = 1
 * refused where the block is not dot4's lanes. */
static const conv_case dw_dot_cases[] = {
    {32, 32, 13, 14, 3, 2, 1, 16, 16, 1, 1, TOPI_ACT_NONE},
    {16, 16, 11, 9, 5, 1, 2, 16, 16, 1, 1, TOPI_ACT_RELU6},
    {20, 20, 10, 9, 3, 1, 1, 8, 8, 1, 0, TOPI_ACT_RELU},
    /* no padding, stride 2, 5 output rows in tiles of 3: data_p's rows past the input's read
     * the zero point, not past the buffer (ASan) */
    {16, 16, 11, 12, 3, 2, 0, 16, 16, 1, 1, TOPI_ACT_NONE},
};
static const char *const dw_knobs[] = {"dot=1 in_row=0", "dot=1 ow_tile=4 oh_tile=3 in_row=1",
                                       "dot=0 ow_tile=5"};

START_TEST(depthwise_dot_paths) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *host = tec_target_parse(ctx, NULL);
  if (host->arch == TEC_ARCH_X86_64 && !tu_emulated()) {
    for (size_t c = 0; c < sizeof dw_dot_cases / sizeof *dw_dot_cases; c++)
      for (size_t k = 0; k < sizeof dw_knobs / sizeof *dw_knobs; k++) {
        run_dw_knobs = dw_knobs[k];
        conv_run(&dw_dot_cases[c], 1.0f, 0, NULL, NULL);
      }
    /* the widening fallback (no VNNI: int8 data unshifted) */
    run_target = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512", run_dw_knobs = "dot=1";
    conv_run(&dw_dot_cases[0], 1.0f, 0, NULL, NULL);
    run_target = run_dw_knobs = NULL;
  }
  topi_qconv2d q = {.conv = {.n = 1, .c_in = 32, .h = 8, .w = 8, .c_out = 32, .kh = 3, .kw = 3,
                             .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1, .groups = 32,
                             .in_layout = {TOPI_NCHWC, 16, 0}, .out_layout = {TOPI_NCHWC, 16, 0}},
                    .in = {0.1f, 3}, .out = {0.2f, -5}};
  static const char *const spr = "llvm -mtriple=x86_64-linux-gnu -mcpu=sapphirerapids "
                                 "-mattr=+avx512bw,+avx512vl,+avx512vnni";
  const tec_target *t = tec_target_parse(ctx, spr);
  topi_op op;
  tune_space sp;
  OK(ctx, topi_space_of(ctx, "qnn_depthwise", &q, t, &sp));
  ck_assert_int_eq(((const topi_qdepthwise_config *)sp.default_config)->dot, 1);
  OK(ctx, topi_instantiate(ctx, topi_template_find("qnn_depthwise"), &q, t, &op));
  char *s = tu_emit_text(ctx, tec_lower(op.sched, "qd", op.nargs, op.args), spr, TEC_EMIT_ASM);
  tu_assert_contains(s, "vpdpbusd\t%zmm");
  tu_assert_contains(s, "vpermb");
  free(s);
  /* a block of 32 channels is two dot4s' lanes: dot = 1 is not in the space, and refused */
  q.conv.in_layout.block = q.conv.out_layout.block = 32;
  OK(ctx, topi_space_of(ctx, "qnn_depthwise", &q, t, &sp));
  topi_qdepthwise_config cfg = *(const topi_qdepthwise_config *)sp.default_config;
  ck_assert_int_eq(cfg.dot, 0);
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(tune_config_parse(ctx, &sp, "dot=1", &cfg), 0);
  tu_assert_contains(tec_ctx_error(ctx), "dot");
  topi_decl d;
  OK(ctx, topi_declare(ctx, "qnn_depthwise", &q, &d));
  cfg.dot = 1;
  tec_ctx_clear_error(ctx);
  ck_assert_int_ne(topi_template_find("qnn_depthwise")->schedule(&d, &cfg, t, &op), 0);
  tu_assert_contains(tec_ctx_error(ctx), "dot");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------- bad input ---------- */

static topi_qconv2d good_conv(void) {
  return (topi_qconv2d){.conv = {.n = 1, .c_in = 16, .h = 6, .w = 6, .c_out = 16, .kh = 1, .kw = 1,
                                 .stride_h = 1, .stride_w = 1, .in_layout = {TOPI_NCHWC, 16, 0},
                                 .out_layout = {TOPI_NCHWC, 16, 0}},
                        .in = {0.1f, 3}, .out = {0.2f, -5}};
}

START_TEST(bad_problems_refused) {
  tec_ctx *ctx = tec_ctx_new();
  topi_decl d;
  topi_qconv2d q = good_conv();
  OK(ctx, topi_declare(ctx, "qnn_conv2d", &q, &d));
  q.in.scale = 0;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_conv2d", &q, &d), -1);
  assert_err(ctx, "qnn_conv2d: in.scale must be > 0 and finite (got 0)");
  q = good_conv(), q.out.scale = -0.5f;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_depthwise", &q, &d), -1);
  assert_err(ctx, "qnn_depthwise: out.scale must be > 0 and finite (got -0.5)");
  q = good_conv(), q.out.zero_point = 200;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_conv2d", &q, &d), -1);
  assert_err(ctx, "qnn_conv2d: out.zero_point must be in [-128, 127] for int8 (got 200)");
  q = good_conv(), q.conv.in_layout.block = 6;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_conv2d", &q, &d), -1);
  assert_err(ctx, "qnn_conv2d: reads and writes NCHW[x]c with x a multiple of 4 (got NCHW6c -> "
                  "NCHW16c)");
  tune_space sp;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_space_of(ctx, "qnn_conv2d", &q, NULL, &sp), -1);
  assert_err(ctx, "qnn_conv2d: reads and writes NCHW[x]c with x a multiple of 4 (got NCHW6c -> "
                  "NCHW16c)");
  q = good_conv(), q.conv.dilation_h = 2;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_conv2d", &q, &d), -1);
  assert_err(ctx, "qnn_conv2d: no dilation (got 2x0)");
  q = good_conv();
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_depthwise", &q, &d), -1);
  assert_err(ctx, "qnn_depthwise: not depthwise (needs groups == c_in == c_out)");
  topi_qdense qd = {.m = 2, .n = 3, .k = 4, .in = {0.1f, -129}, .out = {1, 0}};
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_dense", &qd, &d), -1);
  assert_err(ctx, "qnn_dense: in.zero_point must be in [-128, 127] for int8 (got -129)");
  qd.in.zero_point = 0, qd.out.scale = NAN;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_dense", &qd, &d), -1);
  assert_err(ctx, "qnn_dense: out.scale must be > 0 and finite (got nan)");
  topi_qadd qa = {.n = 1, .c = 4, .h = 2, .w = 2, .layout = {TOPI_NCHW, 0, 0}, .a = {1, 0},
                  .b = {0, 0}, .out = {1, 0}};
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_add", &qa, &d), -1);
  assert_err(ctx, "qnn_add: b.scale must be > 0 and finite (got 0)");
  topi_qpool qp = {.pool = {.n = 1, .c = 4, .h = 4, .w = 4, .kh = 2, .kw = 2, .stride_h = 2,
                            .stride_w = 2, .ceil_mode = 1}, .in = {1, 0}, .out = {1, 0}};
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_pool", &qp, &d), -1);
  assert_err(ctx, "qnn_pool: no dilation, ceil_mode or pad_end_given (symmetric padding only)");
  /* a problem of the fp32 type */
  topi_conv2d fp = good_conv().conv;
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_declare(ctx, "qnn_conv2d", &fp, &d), -1);
  assert_err(ctx, "topi_declare: template 'qnn_conv2d' takes a topi_qconv2d problem, not a topi_conv2d");
  /* weight scales: count, zero, negative */
  const float sc[3] = {0.1f, 0.0f, -1.0f};
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_qnn_check_scales(ctx, "qnn_conv2d", sc, 1, 16), -1);
  assert_err(ctx, "qnn_conv2d: 1 weight scales for 16 output channels; give one per output "
                  "channel (a per-tensor scale as 16 copies)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_qnn_check_scales(ctx, "qnn_conv2d", sc, 2, 2), -1);
  assert_err(ctx, "qnn_conv2d: weight scale 1 must be > 0 and finite (got 0)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_qnn_quantize_bias(ctx, (const float[]){1, 1, 1}, 3, 0.5f, sc, (int32_t[3]){0}), -1);
  assert_err(ctx, "topi_qnn_quantize_bias: weight scale 1 must be > 0 and finite (got 0)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(topi_qnn_calibrate(ctx, (const float[]){1, NAN}, 2, &qa.a), -1);
  assert_err(ctx, "topi_qnn_calibrate: value 1 is not finite");
  tec_ctx_free(ctx);
}
END_TEST

/* At run time the entry refuses a wrong dtype or a scale tensor of the wrong count. */
START_TEST(bad_arguments_refused) {
  tec_ctx *ctx = tec_ctx_new();
  topi_qconv2d q = good_conv();
  topi_op op;
  OK(ctx, topi_instantiate(ctx, topi_template_find("qnn_conv2d"), &q, NULL, &op));
  lower_func *f = tec_lower(op.sched, "qc", op.nargs, op.args);
  ck_assert_ptr_nonnull(f);
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_ptr_nonnull(m);
  int64_t sd[5] = {1, 1, 6, 6, 16}, sw[4] = {16, 16, 1, 1}, s16 = 16, s15 = 15;
  DLTensor data = i8_tensor(5, sd), kernel = i8_tensor(4, sw), wsc = tu_zeros(TEC_F32, 1, &s16);
  DLTensor out = i8_tensor(5, sd), fdata = tu_zeros(TEC_F32, 5, sd), short_sc = tu_zeros(TEC_F32, 1, &s15);
  for (int i = 0; i < 16; i++) ((float *)wsc.data)[i] = 0.01f, ((float *)short_sc.data)[i % 15] = 0.01f;
  ck_assert_int_eq(tec_module_run(m, "qc", 4, (DLTensor *[]){&data, &kernel, &wsc, &out}), 0);
  ck_assert_int_ne(tec_module_run(m, "qc", 4, (DLTensor *[]){&fdata, &kernel, &wsc, &out}), 0);
  tu_assert_contains(tec_rt_last_error(), "has dtype float32, expected int8");
  tec_module_free(m);
  /* the constants are read by the first call (prepare): a fresh module */
  m = tec_build(ctx, 1, &f, NULL);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_ne(tec_module_run(m, "qc", 4, (DLTensor *[]){&data, &kernel, &short_sc, &out}), 0);
  tu_assert_contains(tec_rt_last_error(), "shape[0] is 15, expected 16");
  tec_module_free(m);
  tec_dl_free(&data), tec_dl_free(&kernel), tec_dl_free(&wsc), tec_dl_free(&out);
  tec_dl_free(&fdata), tec_dl_free(&short_sc);
  tec_ctx_free(ctx);
}
END_TEST

/* sdot by element (SCH_INTRIN_DOT4_LANE) on AArch64 +dotprod, run under qemu: a pointwise
 * NCHW4c whose default is the plane as one row (knob plane: 40 pixels in tiles of 4 x 2 blocks,
 * the blocks' weights side by side, the reduction unrolled by 4, the accumulators started from
 * the bias, 16 output bytes per store), a padded 3x3 in tiles of 6
 * columns (runs of 2: 8-byte reads) with output blocks past c, dense in runs of 4 groups (8 x 8
 * tile, rows past m) and of 2 (k = 136: a group loop LLVM keeps as a loop; k = 72 it unrolls
 * and hoists the one row tile's reads out of the panel loop, where LLVM 14 leaves dup + sdot);
 * bit-exact against qnnref at the defaults. The x86 host
 * does not take this path (test_arm_tiles reads its AArch64 assembly), so the case is built and
 * registered on an AArch64 host only. */
#if defined(__aarch64__)
static const conv_case lane_convs[] = {
    {32, 32, 5, 8, 1, 1, 0, 4, 4, 0, 1, TOPI_ACT_RELU6},
    {12, 20, 7, 12, 3, 1, 1, 4, 4, 0, 1, TOPI_ACT_RELU},
};
static const dense_case lane_dense[] = {
    {9, 24, 64, 1, TOPI_ACT_RELU6, 1.0f, 0},
    {3, 16, 136, 0, TOPI_ACT_NONE, 1.0f, 0},
};

START_TEST(aarch64_by_element_bit_exact) {
  run_target = "llvm -mattr=+neon,+dotprod";
  for (int i = 0; i < 2; i++) conv_run(&lane_convs[i], 1.0f, 0, NULL, NULL);
  for (int i = 0; i < 2; i++) dense_run(&lane_dense[i], 0);
  run_target = NULL;
}
END_TEST
#endif

/* The 64-lane narrowing by packs (codegen_requant.c: 4 output vectors of 16 int32 -> one
 * 64-byte vector with vpackssdw x 2, vpackuswb or vpacksswb, vpermd; no vpmovusdb), exact on
 * the corner cases of requant_rounding_exact (every 9973rd float bit pattern, every half and
 * its neighbours in [-1100, 1100], +-inf, +-2^31 and neighbours, FLT_MAX, denormals, 2^16
 * random values in [-400, 400]) and on NaN, which the IR clamps to the low bound (max(NaN, A)
 * is A); zero points giving A = 0, -123, -255 and -128 (the signed packs), and narrower clamps
 * (the generic path at 64 lanes). */
START_TEST(requant_packs64_exact) {
  int64_t n = 0, cap = ((int64_t)1 << 32) / 9973 + 2 * 2201 * 3 + (1 << 16) + 128;
  float *x = malloc((size_t)cap * sizeof *x);
  ck_assert_ptr_nonnull(x);
  for (uint64_t u = 0; u < ((uint64_t)1 << 32); u += 9973) x[n++] = rq_bits((uint32_t)u);
  for (int k = -2200; k <= 2200; k++) {
    float h = (float)k * 0.5f;
    x[n++] = h, x[n++] = nextafterf(h, -INFINITY), x[n++] = nextafterf(h, INFINITY);
  }
  rng_state = 41;
  for (int k = 0; k < (1 << 16); k++) x[n++] = frand(-400.0f, 400.0f);
  const float sp[] = {INFINITY, -INFINITY, NAN, -NAN, 2147483648.0f, -2147483648.0f,
                      2147483520.0f, -2147483520.0f, -2147483904.0f, 4294967296.0f,
                      -4294967296.0f, FLT_MAX, -FLT_MAX, 0.0f, -0.0f, 1e-40f, -1e-40f, 255.5f,
                      254.5f, 0.5f, -0.5f, 127.5f, -128.5f, 32767.5f, 32768.0f, -32768.5f};
  for (size_t k = 0; k < sizeof sp / sizeof *sp; k++) x[n++] = sp[k];
  while (n % 64) x[n++] = 1.5f;
  ck_assert_int_le(n, cap);
  DLTensor a = tu_zeros(TEC_F32, 1, &n), y8 = tu_zeros(TEC_I8, 1, &n);
  memcpy(tu_f32(&a), x, (size_t)n * sizeof *x);
  static const struct {
    float scale;
    int32_t zp;
    topi_act act;
  } cs[] = {{0.05f, -128, TOPI_ACT_RELU}, {0.2f, -5, TOPI_ACT_NONE}, {0.2f, 127, TOPI_ACT_NONE},
            {0.3f, 0, TOPI_ACT_NONE}, {0.2f, -5, TOPI_ACT_RELU6}, {0.01f, 10, TOPI_ACT_RELU}};
  for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
    tec_ctx *ctx = tec_ctx_new();
    rq_u r = {.out = {cs[c].scale, cs[c].zp}, .act = cs[c].act};
    char *as = NULL;
    tec_packed_fn fn = rq_build(ctx, &r, n, 64, &as);
    int32_t lo, hi;
    qref_bounds(r.out, r.act, &lo, &hi);
    const tec_target *host = tec_target_parse(ctx, NULL);
    if (host->arch == TEC_ARCH_X86_64 && tec_target_has(host, TEC_FEATURE_AVX512BW)) {
      if (lo == -128 && hi == 127) { /* the clamp over all of int8: the packs */
        tu_assert_contains(as, "vpackssdw");
        tu_assert_contains(as, cs[c].zp == 0 ? "vpacksswb" : "vpackuswb");
        tu_assert_contains(as, "vcvtps2dq\t{rn-sae}");
        assert_not_contains(as, "vpmovusdb");
        assert_not_contains(as, "vpmovdb");
      } else {
        assert_not_contains(as, "vpackssdw");
      }
    }
    free(as);
    ck_assert_msg(fn((DLTensor *[]){&a, &y8}, 2) == 0, "%s", tec_rt_last_error());
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
      double want = isnan(x[i]) ? lo : qref_requant_f(x[i], r.out, r.act);
      if (((int8_t *)y8.data)[i] != want && !bad++) first = i;
    }
    ck_assert_msg(!bad, "zp %d act %d: %lld of %lld differ, first x = %a: got %d, want %g",
                  cs[c].zp, (int)cs[c].act, (long long)bad, (long long)n,
                  first < 0 ? 0.0 : (double)x[first], first < 0 ? 0 : ((int8_t *)y8.data)[first],
                  first < 0 ? 0.0 : (isnan(x[first]) ? lo : qref_requant_f(x[first], r.out, r.act)));
    tec_ctx_free(ctx);
  }
  tec_dl_free(&a), tec_dl_free(&y8);
  free(x);
}
END_TEST

/* qnn_conv2d on x86 AVX-512 with ow_tile a multiple of 4 and an NCHW16c output: 4 pixels'
 * requantization as one 64-lane vector (the packs above) in the conv's own assembly, and
 * bit-exact against qnnref: 1x1 with ReLU (zero point -128), ow 10 in tiles of 4 (a last tile
 * of 2 columns) and 8 (of 2), 2 output blocks per tile and 1; a 3x3 padded; every access
 * checked at run time (TEC_CHECK_BOUNDS); a ReLU6 whose clamp is narrower keeps the 16-lane
 * path. */
static const conv_case packs_cases[] = {
    {32, 32, 6, 10, 1, 1, 0, 16, 16, 0, 1, TOPI_ACT_RELU},
    {16, 48, 5, 8, 3, 1, 1, 16, 16, 0, 0, TOPI_ACT_NONE},
};
static const char *const packs_knobs[] = {"ow_tile=4 oc_tile=2", "ow_tile=8 oc_tile=1"};

START_TEST(conv_packs64) {
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *host = tec_target_parse(ctx, NULL);
  if (host->arch == TEC_ARCH_X86_64 && tec_target_has(host, TEC_FEATURE_AVX512BW) && !tu_emulated()) {
    for (int r = 0; r < 2; r++) {
      topi_qconv2d q = {.conv = {.n = 1, .c_in = 32, .h = 6, .w = 8, .c_out = 32, .kh = 1, .kw = 1,
                                 .stride_h = 1, .stride_w = 1, .in_layout = {TOPI_NCHWC, 16, 0},
                                 .out_layout = {TOPI_NCHWC, 16, 0},
                                 .epi = {0, 0, r ? TOPI_ACT_RELU6 : TOPI_ACT_RELU}},
                        .in = {0.1f, 3}, .out = {0.05f, -128}}; /* ReLU6: 120 steps */
      tune_space sp;
      topi_op op;
      OK(ctx, topi_space_of(ctx, "qnn_conv2d", &q, host, &sp));
      void *cfg = tec_ctx_alloc(ctx, sp.config_size);
      OK(ctx, tune_config_parse(ctx, &sp, "ow_tile=4 oc_tile=2", cfg));
      topi_decl d;
      const topi_template *t = topi_template_find("qnn_conv2d");
      OK(ctx, t->declare(ctx, &q, &d));
      op.nargs = d.nargs;
      OK(ctx, t->schedule(&d, cfg, host, &op));
      char *s = tu_emit_text(ctx, tec_lower(op.sched, "qc", op.nargs, op.args), NULL, TEC_EMIT_ASM);
      if (!r) {
        tu_assert_contains(s, "vpackssdw");
        tu_assert_contains(s, "vpackuswb");
        assert_not_contains(s, "vpmovusdb");
      } else {
        assert_not_contains(s, "vpackssdw");
      }
      free(s);
    }
    ck_assert_int_eq(setenv("TEC_CHECK_BOUNDS", "1", 1), 0); /* mult4's and out's reads */
    for (size_t k = 0; k < sizeof packs_knobs / sizeof *packs_knobs; k++) {
      run_conv_knobs = packs_knobs[k];
      conv_run(&packs_cases[0], 1.0f, 0, NULL, NULL);
      conv_run(&packs_cases[1], 1.0f, 0, NULL, NULL);
    }
    run_conv_knobs = NULL;
    unsetenv("TEC_CHECK_BOUNDS");
  }
  tec_ctx_free(ctx);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("qnn");
  TCase *tc = tcase_create("qnn");
  tcase_set_timeout(tc, getenv("TEC_TEST_LONG") ? 3600 : 120);
#define QN(a) (int)(sizeof a / sizeof *a)
  int em = tu_emulated();
  tcase_add_loop_test(tc, conv2d_bit_exact, 0, em ? QN(conv_emulated) : QN(conv_cases));
  tcase_add_loop_test(tc, depthwise_bit_exact, 0, em ? QN(dw_emulated) : QN(dw_cases));
  tcase_add_loop_test(tc, dense_bit_exact, 0, em ? QN(dense_emulated) : QN(dense_cases));
#if defined(__aarch64__)
  tcase_add_test(tc, aarch64_by_element_bit_exact);
#endif
  if (!em) {
    tcase_add_test(tc, conv_saturates_both_ends);
    tcase_add_test(tc, pool_bit_exact);
    tcase_add_test(tc, add_bit_exact);
    tcase_add_test(tc, rounding_and_bounds);
    tcase_add_test(tc, ties_to_even);
    tcase_add_test(tc, round_even_instructions);
    tcase_add_test(tc, requant_rounding_exact);
    tcase_add_test(tc, random_sweep);
    tcase_add_loop_test(tc, dot_paths_bit_exact, 0, QN(dot_targets));
    tcase_add_loop_test(tc, bias_tail_blocks_in_bounds, 0, QN(tail_block_cases));
    tcase_add_test(tc, depthwise_dot_paths);
    tcase_add_test(tc, plane_bit_exact);
    tcase_add_test(tc, bad_problems_refused);
    tcase_add_test(tc, bad_arguments_refused);
    tcase_add_test(tc, requant_packs64_exact);
    tcase_add_test(tc, conv_packs64);
  }
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }

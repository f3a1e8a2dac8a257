/* opsref.c — see opsref.h. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "convref.h"
#include "opsref.h"
#include "testutil.h"

void or_pool2d(const topi_pool *p, int global, const float *x, float *out) {
  int64_t kh = global ? p->h : p->kh, kw = global ? p->w : p->kw;
  int64_t sh = global ? 1 : p->stride_h, sw = global ? 1 : p->stride_w;
  int64_t ph = global ? 0 : p->pad_h, pw = global ? 0 : p->pad_w;
  int64_t oh = (p->h + 2 * ph - kh) / sh + 1, ow = (p->w + 2 * pw - kw) / sw + 1;
  for (int64_t n = 0; n < p->n; n++)
    for (int64_t c = 0; c < p->c; c++)
      for (int64_t y = 0; y < oh; y++)
        for (int64_t xx = 0; xx < ow; xx++) {
          double acc = p->mode == TOPI_POOL_MAX ? -INFINITY : 0;
          int64_t cnt = 0;
          for (int64_t i = 0; i < kh; i++)
            for (int64_t j = 0; j < kw; j++) {
              int64_t iy = y * sh + i - ph, ix = xx * sw + j - pw;
              if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
              double v = x[((n * p->c + c) * p->h + iy) * p->w + ix];
              acc = p->mode == TOPI_POOL_MAX ? (v > acc ? v : acc) : acc + v;
              cnt++;
            }
          if (p->mode == TOPI_POOL_AVG) acc /= (double)(p->count_include_pad ? kh * kw : cnt);
          out[((n * p->c + c) * oh + y) * ow + xx] = (float)acc;
        }
}

void or_softmax(int64_t m, int64_t n, const float *x, float *out) {
  for (int64_t i = 0; i < m; i++) {
    double mx = -INFINITY, s = 0;
    for (int64_t j = 0; j < n; j++) mx = x[i * n + j] > mx ? x[i * n + j] : mx;
    for (int64_t j = 0; j < n; j++) s += exp((double)x[i * n + j] - mx);
    for (int64_t j = 0; j < n; j++) out[i * n + j] = (float)(exp((double)x[i * n + j] - mx) / s);
  }
}

static double act(topi_act a, double v) {
  if (a != TOPI_ACT_NONE && v < 0) v = 0;
  if (a == TOPI_ACT_RELU6 && v > 6) v = 6;
  return v;
}

void or_add(int64_t n, topi_act a, const float *x, const float *y, float *out) {
  for (int64_t i = 0; i < n; i++) out[i] = (float)act(a, (double)x[i] + (double)y[i]);
}

void or_fc(int64_t m, int64_t n, int64_t k, const float *a, const float *w, const float *bias,
           topi_act ac, float *out) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = bias ? bias[j] : 0;
      for (int64_t kk = 0; kk < k; kk++) s += (double)a[i * k + kk] * (double)w[j * k + kk];
      out[i * n + j] = (float)act(ac, s);
    }
}

/* Declares, schedules (config NULL: the default), lowers and builds template `name` on
 * problem; the module's function is "op". */
static tec_module *build(tec_ctx *ctx, const char *name, const void *problem, const void *config,
                         int *nargs) {
  const topi_template *t = topi_template_find(name);
  ck_assert_msg(t != NULL, "no template %s", name);
  topi_decl d;
  tune_space sp;
  topi_op op;
  ck_assert_msg(t->declare(ctx, problem, &d) == 0, "%s: %s", name, tec_ctx_error(ctx));
  ck_assert_msg(t->space(ctx, problem, NULL, &sp) == 0, "%s: %s", name, tec_ctx_error(ctx));
  ck_assert_msg(t->schedule(&d, config ? config : sp.default_config, NULL, &op) == 0, "%s: %s",
                name, tec_ctx_error(ctx));
  lower_func *f = tec_lower(op.sched, "op", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s: %s", name, tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s: %s", name, tec_ctx_error(ctx));
  *nargs = op.nargs;
  return m;
}

/* A tensor of layout l holding src (NULL: NaN, to see what is never written). */
static DLTensor make(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w, const float *src) {
  int64_t shape[5];
  int nd = cr_shape(l, n, c, h, w, shape);
  DLTensor t = tu_zeros(TEC_F32, nd, shape);
  if (src) cr_to_layout(l, n, c, h, w, src, t.data);
  else
    for (int64_t i = 0; i < tec_dl_numel(&t); i++) ((float *)t.data)[i] = __builtin_nanf("");
  return t;
}

/* The lanes past c of an NCHW[x]c tensor are zero. */
static void assert_zero_lanes(const char *name, topi_layout l, int64_t n, int64_t c, int64_t hw,
                              const float *o) {
  if (l.kind != TOPI_NCHWC || c % l.block == 0) return;
  int64_t B = l.block, cb = (c + B - 1) / B;
  for (int64_t a = 0; a < n; a++)
    for (int64_t i = 0; i < hw; i++)
      for (int64_t v = c % B; v < B; v++) {
        float e = o[((a * cb + cb - 1) * hw + i) * B + v];
        ck_assert_msg(e == 0.0f, "%s: padded channel lane %lld is %g, not 0", name, (long long)v,
                      (double)e);
      }
}

double or_check_pool(const char *name, const topi_pool *p, const void *config) {
  tec_ctx *ctx = tec_ctx_new();
  int global = !strcmp(name, "global_pool"), na;
  tec_module *m = build(ctx, name, p, config, &na);
  ck_assert_int_eq(na, 2);
  int64_t oh = 1, ow = 1;
  if (!global) ck_assert_int_eq(topi_pool_out_hw(ctx, p, &oh, &ow), 0);
  int64_t sx[4] = {p->n, p->c, p->h, p->w}, no = p->n * p->c * oh * ow;
  DLTensor x = tu_rand_f32(4, sx, 21);
  float *ref = malloc(sizeof(float) * (size_t)no), *got = malloc(sizeof(float) * (size_t)no);
  or_pool2d(p, global, x.data, ref);
  DLTensor xl = make(p->in_layout, p->n, p->c, p->h, p->w, x.data);
  DLTensor ol = make(p->out_layout, p->n, p->c, oh, ow, NULL);
  DLTensor *args[2] = {&xl, &ol};
  ck_assert_msg(tec_module_run(m, "op", 2, args) == 0, "%s: %s", name, tec_rt_last_error());
  cr_from_layout(p->out_layout, p->n, p->c, oh, ow, ol.data, got);
  double err = tu_max_err(got, ref, no);
  assert_zero_lanes(name, p->out_layout, p->n, p->c, oh * ow, ol.data);
  free(ref), free(got);
  tec_dl_free(&x), tec_dl_free(&xl), tec_dl_free(&ol);
  tec_ctx_free(ctx);
  return err;
}

double or_check_softmax(const topi_softmax *p, const void *config, float scale) {
  tec_ctx *ctx = tec_ctx_new();
  int na;
  tec_module *m = build(ctx, "softmax", p, config, &na);
  ck_assert_int_eq(na, 2);
  int64_t s[2] = {p->m, p->n};
  DLTensor x = tu_rand_f32(2, s, 22), o = tu_zeros(TEC_F32, 2, s);
  float *xs = x.data, *ref = malloc(sizeof(float) * (size_t)(p->m * p->n));
  for (int64_t i = 0; i < p->m * p->n; i++) xs[i] *= scale;
  or_softmax(p->m, p->n, xs, ref);
  DLTensor *args[2] = {&x, &o};
  ck_assert_msg(tec_module_run(m, "op", 2, args) == 0, "softmax: %s", tec_rt_last_error());
  double err = tu_max_err(o.data, ref, p->m * p->n);
  free(ref);
  tec_dl_free(&x), tec_dl_free(&o);
  tec_ctx_free(ctx);
  return err;
}

double or_check_eltwise(const topi_eltwise *p, const void *config) {
  tec_ctx *ctx = tec_ctx_new();
  int na;
  tec_module *m = build(ctx, "eltwise_add", p, config, &na);
  ck_assert_int_eq(na, 3);
  int64_t s[4] = {p->n, p->c, p->h, p->w}, n = p->n * p->c * p->h * p->w;
  DLTensor a = tu_rand_f32(4, s, 23), b = tu_rand_f32(4, s, 24);
  float *ref = malloc(sizeof(float) * (size_t)n), *got = malloc(sizeof(float) * (size_t)n);
  /* scaled so relu6 clips above as well */
  for (int64_t i = 0; i < n; i++) ((float *)a.data)[i] *= 5, ((float *)b.data)[i] *= 5;
  or_add(n, p->act, a.data, b.data, ref);
  DLTensor al = make(p->layout, p->n, p->c, p->h, p->w, a.data);
  DLTensor bl = make(p->layout, p->n, p->c, p->h, p->w, b.data);
  DLTensor ol = make(p->layout, p->n, p->c, p->h, p->w, NULL);
  DLTensor *args[3] = {&al, &bl, &ol};
  ck_assert_msg(tec_module_run(m, "op", 3, args) == 0, "eltwise_add: %s", tec_rt_last_error());
  cr_from_layout(p->layout, p->n, p->c, p->h, p->w, ol.data, got);
  double err = tu_max_err(got, ref, n);
  assert_zero_lanes("eltwise_add", p->layout, p->n, p->c, p->h * p->w, ol.data);
  free(ref), free(got);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&al), tec_dl_free(&bl), tec_dl_free(&ol);
  tec_ctx_free(ctx);
  return err;
}

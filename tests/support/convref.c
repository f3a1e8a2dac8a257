/* convref.c — see convref.h. */
#include <stdlib.h>
#include <string.h>
#include "convref.h"
#include "testutil.h"

/* The dilation as the reference reads it (0 or 1: none), written here, not taken from topi. */
static int64_t dil(int64_t d) { return d > 1 ? d : 1; }

void cr_out_hw(const topi_conv2d *p, int64_t *oh, int64_t *ow) {
  *oh = (p->h + 2 * p->pad_h - (p->kh - 1) * dil(p->dilation_h) - 1) / p->stride_h + 1;
  *ow = (p->w + 2 * p->pad_w - (p->kw - 1) * dil(p->dilation_w) - 1) / p->stride_w + 1;
}

void cr_conv2d(const topi_conv2d *p, const float *x, const float *w, const float *bias,
               const float *res, float *out) {
  int64_t g = p->groups ? p->groups : 1, cig = p->c_in / g, cog = p->c_out / g, oh, ow;
  int64_t dh = dil(p->dilation_h), dw = dil(p->dilation_w);
  cr_out_hw(p, &oh, &ow);
  for (int64_t n = 0; n < p->n; n++)
    for (int64_t co = 0; co < p->c_out; co++)
      for (int64_t y = 0; y < oh; y++)
        for (int64_t xx = 0; xx < ow; xx++) {
          double acc = 0;
          int64_t grp = co / cog;
          for (int64_t ci = 0; ci < cig; ci++)
            for (int64_t i = 0; i < p->kh; i++)
              for (int64_t j = 0; j < p->kw; j++) {
                int64_t yy = y * p->stride_h + i * dh - p->pad_h;
                int64_t xj = xx * p->stride_w + j * dw - p->pad_w;
                if (yy < 0 || yy >= p->h || xj < 0 || xj >= p->w) continue;
                int64_t c = grp * cig + ci;
                acc += (double)x[((n * p->c_in + c) * p->h + yy) * p->w + xj] *
                       (double)w[((co * cig + ci) * p->kh + i) * p->kw + j];
              }
          int64_t o = ((n * p->c_out + co) * oh + y) * ow + xx;
          if (bias) acc += bias[co];
          if (res) acc += res[o];
          if (p->epi.act != TOPI_ACT_NONE && acc < 0) acc = 0;
          if (p->epi.act == TOPI_ACT_RELU6 && acc > 6) acc = 6;
          out[o] = (float)acc;
        }
}

int64_t cr_numel(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w) {
  if (l.kind == TOPI_NCHWC) c = (c + l.block - 1) / l.block * l.block;
  return n * c * (h + 2 * l.margin) * (w + 2 * l.margin);
}

/* The buffer offset of logical element (n, c, y, x): the margin's ring around h and w. */
static int64_t at(topi_layout l, int64_t N, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c,
                  int64_t y, int64_t x) {
  (void)N;
  H += 2 * l.margin, W += 2 * l.margin, y += l.margin, x += l.margin;
  switch (l.kind) {
  case TOPI_NHWC: return ((n * H + y) * W + x) * C + c;
  case TOPI_NCHWC: {
    int64_t cb = (C + l.block - 1) / l.block;
    return (((n * cb + c / l.block) * H + y) * W + x) * l.block + c % l.block;
  }
  default: return ((n * C + c) * H + y) * W + x;
  }
}

void cr_to_layout(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w, const float *src,
                  float *dst) {
  memset(dst, 0, sizeof(float) * (size_t)cr_numel(l, n, c, h, w));
  for (int64_t a = 0; a < n; a++)
    for (int64_t b = 0; b < c; b++)
      for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++)
          dst[at(l, n, c, h, w, a, b, y, x)] = src[((a * c + b) * h + y) * w + x];
}

void cr_from_layout(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w, const float *src,
                    float *dst) {
  for (int64_t a = 0; a < n; a++)
    for (int64_t b = 0; b < c; b++)
      for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++)
          dst[((a * c + b) * h + y) * w + x] = src[at(l, n, c, h, w, a, b, y, x)];
}

int cr_shape(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w, int64_t *s) {
  h += 2 * l.margin, w += 2 * l.margin;
  switch (l.kind) {
  case TOPI_NHWC: s[0] = n, s[1] = h, s[2] = w, s[3] = c; return 4;
  case TOPI_NCHWC:
    s[0] = n, s[1] = (c + l.block - 1) / l.block, s[2] = h, s[3] = w, s[4] = l.block;
    return 5;
  default: s[0] = n, s[1] = c, s[2] = h, s[3] = w; return 4;
  }
}

DLTensor cr_make(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w, const float *src) {
  int64_t shape[5];
  int nd = cr_shape(l, n, c, h, w, shape);
  DLTensor t = tu_zeros(TEC_F32, nd, shape);
  if (src) cr_to_layout(l, n, c, h, w, src, t.data);
  else
    for (int64_t i = 0; i < tec_dl_numel(&t); i++) ((float *)t.data)[i] = __builtin_nanf("");
  return t;
}

int64_t cr_ring_written(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w,
                        const float *buf) {
  int64_t m = l.margin, H = h + 2 * m, W = w + 2 * m, cp = c, bad = 0;
  if (l.kind == TOPI_NCHWC) cp = (c + l.block - 1) / l.block * l.block;
  topi_layout whole = l;
  whole.margin = 0; /* offsets in the whole buffer */
  for (int64_t a = 0; a < n; a++)
    for (int64_t b = 0; b < cp; b++)
      for (int64_t y = 0; y < H; y++)
        for (int64_t x = 0; x < W; x++)
          if ((y < m || y >= h + m || x < m || x >= w + m) &&
              !__builtin_isnan(buf[at(whole, n, cp, H, W, a, b, y, x)]))
            bad++;
  return bad;
}

double cr_check_template(const char *name, const topi_conv2d *p, const void *config) {
  tec_ctx *ctx = tec_ctx_new();
  const topi_template *t = topi_template_find(name);
  ck_assert_msg(t != NULL, "no template %s", name);
  topi_decl d;
  tune_space sp;
  topi_op op;
  ck_assert_msg(t->declare(ctx, p, &d) == 0, "%s: %s", name, tec_ctx_error(ctx));
  ck_assert_msg(t->space(ctx, p, NULL, &sp) == 0, "%s: %s", name, tec_ctx_error(ctx));
  ck_assert_msg(t->schedule(&d, config ? config : sp.default_config, NULL, &op) == 0, "%s: %s",
                name, tec_ctx_error(ctx));
  lower_func *f = tec_lower(op.sched, "conv", op.nargs, op.args);
  ck_assert_msg(f != NULL, "%s: %s", name, tec_ctx_error(ctx));
  ck_assert_msg(f->prepare != NULL, "%s: the kernel packing is not in prepare", name);
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s: %s", name, tec_ctx_error(ctx));

  int64_t g = p->groups ? p->groups : 1, oh, ow;
  cr_out_hw(p, &oh, &ow);
  int64_t sx[4] = {p->n, p->c_in, p->h, p->w}, sw[4] = {p->c_out, p->c_in / g, p->kh, p->kw};
  int64_t so[4] = {p->n, p->c_out, oh, ow}, sb = p->c_out;
  DLTensor x = tu_rand_f32(4, sx, 11), w = tu_rand_f32(4, sw, 12), b = tu_rand_f32(1, &sb, 13);
  DLTensor r = tu_rand_f32(4, so, 14);
  int64_t no = p->n * p->c_out * oh * ow;
  float *ref = malloc(sizeof(float) * (size_t)no), *got = malloc(sizeof(float) * (size_t)no);
  cr_conv2d(p, x.data, w.data, p->epi.bias ? b.data : NULL, p->epi.residual ? r.data : NULL, ref);

  DLTensor xl = cr_make(p->in_layout, p->n, p->c_in, p->h, p->w, x.data);
  DLTensor rl = cr_make(p->out_layout, p->n, p->c_out, oh, ow, r.data);
  DLTensor ol = cr_make(p->out_layout, p->n, p->c_out, oh, ow, NULL);
  DLTensor *args[5];
  int na = 0;
  args[na++] = &xl;
  args[na++] = &w;
  if (p->epi.bias) args[na++] = &b;
  if (p->epi.residual) args[na++] = &rl;
  args[na++] = &ol;
  ck_assert_int_eq(na, op.nargs);
  for (int call = 0; call < 2; call++)
    ck_assert_msg(tec_module_run(m, "conv", na, args) == 0, "%s: %s", name, tec_rt_last_error());
  ck_assert_int_eq(tec_module_prepare_count(m, "conv"), 1);
  cr_from_layout(p->out_layout, p->n, p->c_out, oh, ow, ol.data, got);
  double err = tu_max_err(got, ref, no);
  int64_t ring = cr_ring_written(p->out_layout, p->n, p->c_out, oh, ow, ol.data);
  ck_assert_msg(ring == 0, "%s: %lld elements of the output's margin written (left NaN)", name,
                (long long)ring);
  if (p->out_layout.kind == TOPI_NCHWC && p->c_out % p->out_layout.block) {
    /* the lanes past c_out: zero (residual lanes there are zero too) */
    float *o = ol.data;
    int64_t B = p->out_layout.block, cb = (p->c_out + B - 1) / B;
    for (int64_t n = 0; n < p->n; n++)
      for (int64_t i = 0; i < oh * ow; i++)
        for (int64_t v = p->c_out % B; v < B; v++) {
          float e = o[at(p->out_layout, p->n, cb * B, oh, ow, n, (cb - 1) * B + v, i / ow, i % ow)];
          ck_assert_msg(e == 0.0f, "%s: padded output channel lane %lld is %g, not 0", name,
                        (long long)v, (double)e);
        }
  }
  free(ref), free(got);
  tec_dl_free(&x), tec_dl_free(&w), tec_dl_free(&b), tec_dl_free(&r);
  tec_dl_free(&xl), tec_dl_free(&rl), tec_dl_free(&ol);
  tec_ctx_free(ctx);
  return err;
}

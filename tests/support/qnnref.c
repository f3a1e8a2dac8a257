/* qnnref.c — the independent reference of the int8 scheme (qnnref.h). */
#include "qnnref.h"
#include <math.h>

static float ratio(float a, float b) { return a / b; } /* one fp32 rounding, as documented */

void qref_bounds(topi_qparams out, topi_act act, int32_t *lo, int32_t *hi) {
  double l = -128, h = 127;
  if (act == TOPI_ACT_RELU || act == TOPI_ACT_RELU6) l = out.zero_point;
  if (act == TOPI_ACT_RELU6) {
    double six = out.zero_point + nearbyint((double)(6.0f / out.scale)); /* ties to even */
    if (six < h) h = six;
  }
  *lo = (int32_t)l, *hi = (int32_t)h;
}

int8_t qref_requant_f(float f, topi_qparams out, topi_act act) {
  int32_t lo, hi;
  qref_bounds(out, act, &lo, &hi);
  double q = nearbyint((double)f) + out.zero_point; /* ties to even: the default mode */
  return (int8_t)(q < lo ? lo : q > hi ? hi : q);
}

int8_t qref_requant(int32_t acc, float m, topi_qparams out, topi_act act) {
  return qref_requant_f((float)acc * m, out, act);
}

int64_t qref_index(topi_layout l, int64_t c, int64_t h, int64_t w, int64_t n, int64_t ci,
                   int64_t y, int64_t x) {
  switch (l.kind) {
  case TOPI_NHWC: return ((n * h + y) * w + x) * c + ci;
  case TOPI_NCHWC: {
    int64_t cb = (c + l.block - 1) / l.block;
    return (((n * cb + ci / l.block) * h + y) * w + x) * l.block + ci % l.block;
  }
  default: return ((n * c + ci) * h + y) * w + x;
  }
}

int64_t qref_numel(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t cc = l.kind == TOPI_NCHWC ? (c + l.block - 1) / l.block * l.block : c;
  return n * cc * h * w;
}

void qref_conv2d(const topi_qconv2d *q, const int8_t *data, const int8_t *w, const int32_t *bias,
                 const float *w_scale, int8_t *out, float *acc_real) {
  const topi_conv2d *p = &q->conv;
  int64_t oh = (p->h + 2 * p->pad_h - p->kh) / p->stride_h + 1;
  int64_t ow = (p->w + 2 * p->pad_w - p->kw) / p->stride_w + 1;
  int dw = p->groups > 1, cpg = dw ? 1 : (int)p->c_in;
  float r = ratio(q->in.scale, q->out.scale);
  int64_t cpad = qref_numel(p->out_layout, 1, p->c_out, 1, 1);
  for (int64_t n = 0; n < p->n; n++)
    for (int64_t o = 0; o < cpad; o++)
      for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox = 0; ox < ow; ox++) {
          int64_t at = qref_index(p->out_layout, p->c_out, oh, ow, n, o, oy, ox);
          if (o >= p->c_out) {
            out[at] = (int8_t)q->out.zero_point;
            continue;
          }
          int64_t acc = bias ? bias[o] : 0;
          for (int ci = 0; ci < cpg; ci++)
            for (int64_t ky = 0; ky < p->kh; ky++)
              for (int64_t kx = 0; kx < p->kw; kx++) {
                int64_t y = oy * p->stride_h + ky - p->pad_h, x = ox * p->stride_w + kx - p->pad_w;
                if (y < 0 || y >= p->h || x < 0 || x >= p->w) continue; /* reads zp: adds 0 */
                int64_t c = dw ? o : ci;
                int v = data[qref_index(p->in_layout, p->c_in, p->h, p->w, n, c, y, x)];
                acc += (int64_t)(v - q->in.zero_point) * w[((o * cpg + ci) * p->kh + ky) * p->kw + kx];
              }
          out[at] = qref_requant((int32_t)acc, w_scale[o] * r, q->out, p->epi.act);
          if (acc_real)
            acc_real[((n * p->c_out + o) * oh + oy) * ow + ox] =
                (float)((double)acc * q->in.scale * w_scale[o]);
        }
}

void qref_dense(const topi_qdense *p, const int8_t *a, const int8_t *w, const int32_t *bias,
                const float *w_scale, int8_t *out, float *acc_real) {
  float r = ratio(p->in.scale, p->out.scale);
  for (int64_t i = 0; i < p->m; i++)
    for (int64_t j = 0; j < p->n; j++) {
      int64_t acc = bias ? bias[j] : 0;
      for (int64_t k = 0; k < p->k; k++)
        acc += (int64_t)(a[i * p->k + k] - p->in.zero_point) * w[j * p->k + k];
      out[i * p->n + j] = qref_requant((int32_t)acc, w_scale[j] * r, p->out, p->act);
      if (acc_real) acc_real[i * p->n + j] = (float)((double)acc * p->in.scale * w_scale[j]);
    }
}

void qref_pool(const topi_qpool *q, const int8_t *in, int8_t *out) {
  const topi_pool *p = &q->pool;
  int64_t oh = (p->h + 2 * p->pad_h - p->kh) / p->stride_h + 1;
  int64_t ow = (p->w + 2 * p->pad_w - p->kw) / p->stride_w + 1;
  int64_t cc = qref_numel(p->in_layout, 1, p->c, 1, 1);
  topi_layout l = p->in_layout; /* indexed with cc channels: the lanes past c are channels */
  float m = ratio(q->in.scale, q->out.scale);
  for (int64_t n = 0; n < p->n; n++)
    for (int64_t c = 0; c < cc; c++)
      for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox = 0; ox < ow; ox++) {
          int best = -129;
          int64_t sum = 0, cnt = 0;
          for (int64_t ky = 0; ky < p->kh; ky++)
            for (int64_t kx = 0; kx < p->kw; kx++) {
              int64_t y = oy * p->stride_h + ky - p->pad_h, x = ox * p->stride_w + kx - p->pad_w;
              if (y < 0 || y >= p->h || x < 0 || x >= p->w) continue;
              int v = in[qref_index(l, cc, p->h, p->w, n, c, y, x)];
              best = v > best ? v : best;
              sum += v - q->in.zero_point, cnt++;
            }
          if (p->count_include_pad) cnt = p->kh * p->kw;
          int8_t r;
          if (p->mode == TOPI_POOL_MAX) r = qref_requant(best - q->in.zero_point, m, q->out, TOPI_ACT_NONE);
          else r = qref_requant_f(((float)sum * m) / (float)cnt, q->out, TOPI_ACT_NONE);
          out[qref_index(l, cc, oh, ow, n, c, oy, ox)] = r;
        }
}

void qref_add(const topi_qadd *p, const int8_t *a, const int8_t *b, int8_t *out) {
  int64_t total = qref_numel(p->layout, p->n, p->c, p->h, p->w);
  double ra = ratio(p->a.scale, p->out.scale), rb = ratio(p->b.scale, p->out.scale);
  int32_t lo, hi;
  qref_bounds(p->out, p->act, &lo, &hi);
  for (int64_t i = 0; i < total; i++) {
    double v = (double)(a[i] - p->a.zero_point) * ra + (double)(b[i] - p->b.zero_point) * rb;
    double q = nearbyint(v) + p->out.zero_point;
    out[i] = (int8_t)(q < lo ? lo : q > hi ? hi : q);
  }
}

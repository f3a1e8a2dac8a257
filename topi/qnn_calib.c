/* qnn_calib.c — deterministic calibration for the int8 scheme (docs/quantized.md): the
 * asymmetric params of an activation from its min/max, quantizing values with them, symmetric
 * per-output-channel weight scales from max |w|, and the int32 bias. No state, no randomness:
 * the same data give the same params everywhere. */
#include <math.h>
#include "topi/qnn_internal.h"

int topi_qnn_calibrate(tec_ctx *ctx, const float *x, int64_t n, topi_qparams *out) {
  if (!ctx) return -1;
  if (!x || !out || n < 1)
    return tec_ctx_set_error(ctx, "topi_qnn_calibrate: needs values (n >= 1, got %lld) and out",
                             (long long)n);
  float lo = 0.0f, hi = 0.0f; /* the range holds 0: zero is exact (padding, ReLU) */
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(x[i]))
      return tec_ctx_set_error(ctx, "topi_qnn_calibrate: value %lld is not finite", (long long)i);
    lo = x[i] < lo ? x[i] : lo, hi = x[i] > hi ? x[i] : hi;
  }
  float scale = (hi - lo) / 255.0f;
  if (!(scale > 0.0f)) scale = 1.0f;
  float zp = nearbyintf(-128.0f - lo / scale);
  out->scale = scale;
  out->zero_point = zp < -128.0f ? -128 : zp > 127.0f ? 127 : (int32_t)zp;
  return 0;
}

int topi_qnn_quantize(tec_ctx *ctx, const float *x, int64_t n, topi_qparams p, int8_t *q) {
  if (!ctx) return -1;
  if (!x || !q || n < 1)
    return tec_ctx_set_error(ctx, "topi_qnn_quantize: needs values (n >= 1, got %lld) and q",
                             (long long)n);
  if (topi_qparams_check(ctx, "topi_qnn_quantize", "p", p)) return -1;
  for (int64_t i = 0; i < n; i++) {
    float v = nearbyintf(x[i] / p.scale) + (float)p.zero_point;
    q[i] = (int8_t)(v < -128.0f ? -128 : v > 127.0f ? 127 : (int)v);
  }
  return 0;
}

int topi_qnn_quantize_weights(tec_ctx *ctx, const float *w, int64_t c_out, int64_t per,
                              int8_t *q, float *scale) {
  if (!ctx) return -1;
  if (!w || !q || !scale || c_out < 1 || per < 1)
    return tec_ctx_set_error(ctx, "topi_qnn_quantize_weights: needs w, q, scale and sizes >= 1 "
                                  "(got c_out=%lld per=%lld)", (long long)c_out, (long long)per);
  for (int64_t c = 0; c < c_out; c++) {
    float m = 0.0f;
    for (int64_t i = 0; i < per; i++) m = fabsf(w[c * per + i]) > m ? fabsf(w[c * per + i]) : m;
    if (!isfinite(m))
      return tec_ctx_set_error(ctx, "topi_qnn_quantize_weights: channel %lld has a value that "
                                    "is not finite", (long long)c);
    scale[c] = m > 0.0f ? m / 127.0f : 1.0f;
    for (int64_t i = 0; i < per; i++) {
      float v = nearbyintf(w[c * per + i] / scale[c]);
      q[c * per + i] = (int8_t)(v < -127.0f ? -127 : v > 127.0f ? 127 : (int)v);
    }
  }
  return 0;
}

int topi_qnn_quantize_bias(tec_ctx *ctx, const float *b, int64_t c_out, float in_scale,
                           const float *w_scale, int32_t *q) {
  if (!ctx) return -1;
  if (!b || !q || c_out < 1)
    return tec_ctx_set_error(ctx, "topi_qnn_quantize_bias: needs b, q and c_out >= 1 (got %lld)",
                             (long long)c_out);
  if (topi_qparams_check(ctx, "topi_qnn_quantize_bias", "in", (topi_qparams){in_scale, 0}) ||
      topi_qnn_check_scales(ctx, "topi_qnn_quantize_bias", w_scale, c_out, c_out))
    return -1;
  for (int64_t c = 0; c < c_out; c++) {
    double v = nearbyint((double)b[c] / ((double)in_scale * (double)w_scale[c]));
    q[c] = v < -2147483648.0 ? INT32_MIN : v > 2147483647.0 ? INT32_MAX : (int32_t)v;
  }
  return 0;
}

/* qnnref.h — an independent reference of tec's int8 scheme (docs/quantized.md), in plain C
 * loops over the logical indices: the direct form sum (q - zp_in) * w (no folded bias, no
 * packing), round-then-clamp in double (the templates clamp the float, then round). Shares no
 * code with topi/qnn_*.c; the tests compare the templates against it bit for bit. */
#ifndef TEC_QNNREF_H
#define TEC_QNNREF_H

#include <stdint.h>
#include "tec/topi.h"

/* The clamp [lo, hi] of an output with params out and fused activation act, as
 * docs/quantized.md writes it: [-128, 127]; ReLU: lo = zp; ReLU6 also hi = zp +
 * round_even(6.0f / scale) where that is below 127 (in double: no overflow on tiny scales). */
void qref_bounds(topi_qparams out, topi_act act, int32_t *lo, int32_t *hi);
/* clamp(nearest-even(f) + zp) in qref_bounds: the output stage of an fp32 value f (+-inf
 * clamp to the bounds; f must not be NaN) */
int8_t qref_requant_f(float f, topi_qparams out, topi_act act);
/* qref_requant_f((float)acc * m, out, act) */
int8_t qref_requant(int32_t acc, float m, topi_qparams out, topi_act act);
/* Element (n, c, y, x) of an activation of c channels, h x w, in layout l (no margin). */
int64_t qref_index(topi_layout l, int64_t c, int64_t h, int64_t w, int64_t n, int64_t ci,
                   int64_t y, int64_t x);
/* The number of elements of that activation's buffer (blocked: the channels rounded up). */
int64_t qref_numel(topi_layout l, int64_t n, int64_t c, int64_t h, int64_t w);
/* conv2d and depthwise (groups == c_in): data in conv.in_layout, w OIHW ([c][1][kh][kw] for
 * depthwise), bias NULL or int32 [c_out], out in conv.out_layout (lanes past c_out: zp_out).
 * acc_real (NULL or [n][c_out][oh][ow]) gets each output's real value s_in*w_scale*acc. */
void qref_conv2d(const topi_qconv2d *p, const int8_t *data, const int8_t *w, const int32_t *bias,
                 const float *w_scale, int8_t *out, float *acc_real);
void qref_dense(const topi_qdense *p, const int8_t *a, const int8_t *w, const int32_t *bias,
                const float *w_scale, int8_t *out, float *acc_real);
/* pooling and add over every element of the buffers (the lanes past c too) */
void qref_pool(const topi_qpool *p, const int8_t *in, int8_t *out);
void qref_add(const topi_qadd *p, const int8_t *a, const int8_t *b, int8_t *out);

#endif

/* qconv_xnn.h — XNNPACK's qc8 convolution for bench/qconv.c (qconv_xnn.c). */
#ifndef TEC_BENCH_QCONV_XNN_H
#define TEC_BENCH_QCONV_XNN_H

#include <stdint.h>

typedef struct qxnn_layer {
  int64_t c_in, h, w, c_out, k, stride, pad, groups, oh, ow; /* GEMM: h = m, c_in = k, c_out = n */
  int gemm;
} qxnn_layer;

typedef struct qxnn {
  struct xnn_operator *op;
  int8_t *in, *out; /* NHWC */
  int64_t h, w, c_out, oh, ow;
} qxnn;

/* The operator for L over x (int8 NCHW, or [m][k]) and w (int8 OIHW, [c][1][k][k] or [n][k]),
 * its input copied to NHWC; 0, or -1 with a message. */
int qxnn_make(const qxnn_layer *L, const int8_t *x, const int8_t *w, const int32_t *bias,
              const float *w_scale, float in_scale, int in_zp, float out_scale, int out_zp,
              int lo, int hi, qxnn *o);
int qxnn_run(qxnn *o);
/* Output channel c of output pixel i (row-major oy*ow + ox; GEMM: row i). */
int qxnn_at(const qxnn *o, int64_t c, int64_t i);
void qxnn_free(qxnn *o);

#endif

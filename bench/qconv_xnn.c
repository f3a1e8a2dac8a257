/* qconv_xnn.c — XNNPACK's int8 for bench/qconv.c: the same layer as one qc8 convolution (NHWC,
 * int8 weights with per-output-channel scales, int32 bias, fp32 requantization with the output
 * zero point and clamp), fed the numbers tec and oneDNN get (int8 activations with their zero
 * point: XNNPACK's s8 is tec's own form, oneDNN's u8 with zp + 128 the same values shifted).
 * The GEMM row is a 1x1 qc8 convolution over an m x 1 image: XNNPACK's qs8 fully-connected
 * operator takes one weight scale, and its 1x1 convolutions run on the same GEMM
 * microkernels. Debian's snapshot (2022-02) has no VNNI kernels on x86
 * (/work/shared/workloads.md): its avx512skx kernels widen to 16 bits (vpmaddwd). */
#include "qconv_xnn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

static int inited;

int qxnn_make(const qxnn_layer *L, const int8_t *x, const int8_t *w, const int32_t *bias,
              const float *w_scale, float in_scale, int in_zp, float out_scale, int out_zp,
              int lo, int hi, qxnn *o) {
  memset(o, 0, sizeof *o);
  if (!inited) {
    enum xnn_status st = xnn_initialize(NULL);
    if (st != xnn_status_success) return fprintf(stderr, "qconv: xnn_initialize: status %d\n", (int)st), -1;
    inited = 1;
  }
  int dw = L->groups > 1;
  int64_t h = L->h, wd = L->gemm ? 1 : L->w, k = L->gemm ? 1 : L->k;
  int64_t cg = dw ? 1 : L->c_in, per = cg * k * k;
  o->h = h, o->w = wd, o->c_out = L->c_out, o->oh = L->oh, o->ow = L->gemm ? 1 : L->ow;
  size_t nx = (size_t)(L->c_in * h * wd), ny = (size_t)(L->c_out * o->oh * o->ow);
  o->in = malloc(nx + XNN_EXTRA_BYTES), o->out = malloc(ny);
  int8_t *wx = malloc((size_t)(L->c_out * per));
  if (!o->in || !o->out || !wx) return free(wx), -1;
  /* NHWC from NCHW ([m][k] is already NHWC with w = 1) */
  if (L->gemm) memcpy(o->in, x, nx);
  else
    for (int64_t c = 0; c < L->c_in; c++)
      for (int64_t i = 0; i < h * wd; i++) o->in[i * L->c_in + c] = x[c * h * wd + i];
  /* weights [groups][kg][k][k][cg] from OIHW (GEMM: [n][k] as is) */
  for (int64_t oc = 0; oc < L->c_out; oc++)
    for (int64_t i = 0; i < cg; i++)
      for (int64_t t = 0; t < k * k; t++) wx[(oc * k * k + t) * cg + i] = w[(oc * cg + i) * k * k + t];
  enum xnn_status st = xnn_create_convolution2d_nhwc_qc8(
      (uint32_t)L->pad, (uint32_t)L->pad, (uint32_t)L->pad, (uint32_t)L->pad, (uint32_t)k,
      (uint32_t)k, (uint32_t)L->stride, (uint32_t)L->stride, 1, 1, (uint32_t)L->groups,
      (size_t)cg, dw ? 1 : (size_t)L->c_out, (size_t)L->c_in, (size_t)L->c_out, (int8_t)in_zp,
      in_scale, w_scale, wx, bias, (int8_t)out_zp, out_scale, (int8_t)lo, (int8_t)hi, 0, &o->op);
  free(wx);
  if (st != xnn_status_success)
    return fprintf(stderr, "qconv: xnn_create_convolution2d_nhwc_qc8: status %d\n", (int)st), -1;
  st = xnn_setup_convolution2d_nhwc_qc8(o->op, 1, (size_t)h, (size_t)wd, o->in, o->out, NULL);
  if (st != xnn_status_success)
    return fprintf(stderr, "qconv: xnn_setup_convolution2d_nhwc_qc8: status %d\n", (int)st), -1;
  return 0;
}

int qxnn_run(qxnn *o) {
  enum xnn_status st = xnn_run_operator(o->op, NULL);
  return st == xnn_status_success ? 0 : (fprintf(stderr, "qconv: xnn_run_operator: status %d\n", (int)st), -1);
}

int qxnn_at(const qxnn *o, int64_t c, int64_t i) { return o->out[i * o->c_out + c]; }

void qxnn_free(qxnn *o) {
  if (o->op) xnn_delete_operator(o->op);
  free(o->in), free(o->out);
  memset(o, 0, sizeof *o);
}

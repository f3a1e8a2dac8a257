/* qnet.h — the int8 twin of an fp32 network (include/tec/net.h): the same layers and weights on
 * the quantized templates (qnn_conv2d, qnn_depthwise, qnn_add, qnn_pool, qnn_dense; the scheme
 * of docs/quantized.md), with every parameter from the deterministic calibration
 * (topi_qnn_calibrate / _quantize_weights / _quantize_bias) on one run of the fp32 network:
 *
 *   net *n = model_create(...);  net_compile(n);  net_prepare(n);
 *   qnet *q = qnet_new(n, calib_image, err, sizeof err);   calibrated, quantized, no code yet
 *   qnet_compile(q);  qnet_prepare(q);                     one module; the int8 weights packed
 *   qnet_run(q, image, secs);  qnet_logits(q)              the image quantized into value 0,
 *                                                          the logits dequantized
 *
 * Layers, from the fp32 network's:
 *   convolution  qnn_conv2d / qnn_depthwise, bias, per-channel weight scales and the
 *                requantization fused, ReLU / ReLU6 as the output clamp; with a residual the
 *                convolution writes an int8 value of its own (params calibrated on the fp32
 *                output minus the residual) and a qnn_add layer ("NAME_add", the activation
 *                on its clamp) adds the residual: the int8 templates have no residual
 *                epilogue (topi_qconv2d)
 *   max pool     qnn_pool (max);   global pool: qnn_pool (average over the whole plane, the
 *                packed layout kept: [n][c/x][1][1][x] is the dense input [n][c])
 *   dense        qnn_dense (int8 logits, dequantized by qnet_run)
 *   softmax      not quantized: the int8 network ends at the logits
 * Activations: NCHW[x]c int8 (x: the fp32 network's block, a multiple of 4; the image NCHW4c),
 * no margins; the lanes past c hold the zero point. Value v of the fp32 network is value v here (its params:
 * the calibration of the fp32 values), the residual convolutions' outputs follow.
 *
 * Refused by name (NULL, err): a network not compiled, a block that is not a multiple of 4, a
 * global pool whose channels are not a multiple of the block (the dense layer reads its output
 * as [n][c]), a calibration value that is not finite. */
#ifndef TEC_QNET_H
#define TEC_QNET_H

#include "tec/net.h"

#define QNET_MAX_LAYERS (2 * NET_MAX_LAYERS) /* layers and values */

typedef struct qnet_value {
  int64_t n, c, h, w;
  topi_layout layout; /* NCHW[x]c, margin 0 ([n][k] for the logits: NCHW, h = w = 1) */
  topi_qparams q;     /* scale, zero point */
  int8_t *data;       /* after qnet_compile */
} qnet_value;

typedef struct qnet_layer {
  char name[40];      /* the fp32 layer's ("b3_project"), "NAME_add" for a residual add */
  const char *tmpl;   /* "qnn_conv2d", "qnn_depthwise", "qnn_add", "qnn_pool", "qnn_dense" */
  int src;            /* the fp32 layer it comes from */
  topi_qconv2d conv;
  topi_qpool pool;
  topi_qadd add;
  topi_qdense fc;
  int in, in2, out;   /* values; in2: qnn_add's second input (the residual), else -1 */
  int8_t *w;          /* conv / dense: the int8 weights (OIHW or [classes][c]) */
  int32_t *b;         /* the int32 bias */
  float *w_scale;     /* per output channel */
  /* the call (qnet_compile) */
  int nargs;
  DLTensor t[5];
  DLTensor *args[5];
  int64_t shape[5][5];
} qnet_layer;

typedef struct qnet {
  const net *fp;      /* the fp32 network (not owned; must outlive the qnet) */
  int nlayers, nvalues;
  qnet_layer *layers;
  qnet_value *values;
  int logits;         /* the value holding the int8 logits */
  float *out;         /* [batch][classes]: the dequantized logits */
  int8_t *image;      /* the quantized image, plain NCHW (qnet_quantize_image's scratch) */
  tec_ctx *ctx;
  tec_module *mod;
  char err[512];
} qnet;

/* The int8 network of fp32 network n (compiled and prepared), calibrated on one run of n on
 * calib (an image of n's input shape, NCHW). NULL with a message in err. n's values are
 * overwritten by that run. */
qnet *qnet_new(net *n, const float *calib, char *err, size_t errlen);
/* Every layer on its template's default config for the host, one module, the activations
 * allocated (filled with their zero points). 0, or -1 with qnet_error(). */
int qnet_compile(qnet *q);
/* Packs every constant (the templates' prepare steps). 0, or -1 with qnet_error(). */
int qnet_prepare(qnet *q);
/* Quantizes image (NCHW float, the fp32 network's input shape) into value 0 with its params
 * and runs the layers; layer i's seconds in secs[i] unless NULL (secs has q->nlayers entries,
 * up to QNET_MAX_LAYERS: not the fp32 network's count, as every residual is a layer of its
 * own here and there is no softmax); the logits dequantized into qnet_logits. 0, or -1 with
 * qnet_error(). */
int qnet_run(qnet *q, const float *image, double *secs);
const float *qnet_logits(const qnet *q);
/* Quantizes an NCHW float image into value 0's layout and params (topi_qnn_quantize, then the
 * channels blocked; the lanes past c the zero point): what qnet_run does first. 0 or -1. */
int qnet_quantize_image(qnet *q, const float *image, int8_t *out);
const char *qnet_error(const qnet *q);
void qnet_free(qnet *q);
/* The bytes of value v's buffer: n * c (c rounded up to the block) * h * w. */
int64_t qnet_value_bytes(const qnet_value *v);

/* ---- ahead of time (net/qnet_emit.c) ---- */

/* Every layer on its template's default config for target (a tec target string, NULL: the
 * host), lowered into funcs (q->nlayers entries, q's ctx). 0, or -1 with qnet_error(). */
int qnet_lower(qnet *q, const char *target, lower_func **funcs);
/* Lowers q for target (qnet_lower) and writes into dir what a plain C program links with
 * libtec_runtime.a only (the int8 twin of net_emit, include/tec/net.h):
 *   qnet_layers.o, .h   every layer (tec_emit: object and header)
 *   qnet_model.c, .h    qnet_model_prepare(params)              once: the weights packed
 *                       qnet_model_run(image, logits, qlogits)  per image: the image quantized
 *                         (value 0's params, as qnet_quantize_image), the layers, the int8
 *                         logits and/or their dequantized floats (either may be NULL)
 *                       (static 64-byte aligned buffers; qnet_model_hook, if set, is called
 *                       with -1 after the image is quantized, then after each layer)
 *   qparams.bin         the int8 weights, then the int32 biases, then the f32 per-channel
 *                       scales, each array from a 64-byte boundary, layer order: what
 *                       qnet_model_prepare reads (QNET_MODEL_PARAM_BYTES)
 * The generated comments say "generated by GENERATOR: TITLE, for TARGET". *nbytes: the bytes of
 * qparams.bin (may be NULL). 0, or -1 with qnet_error(). */
int qnet_emit(qnet *q, const char *target, const char *dir, const char *generator,
              const char *title, int64_t *nbytes);

#endif

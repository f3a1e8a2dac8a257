/* qnet_build.c — an fp32 network's int8 twin (include/tec/qnet.h): one run of the fp32 network
 * on the calibration image, every value's params from its fp32 values (topi_qnn_calibrate; a
 * residual convolution's own output from the fp32 output minus the residual), every layer's
 * weights per output channel and its bias quantized, and the layer list on the int8 templates
 * (a residual add becomes a qnn_add layer after its convolution; the softmax is left out). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tec/qnet.h"

static int fail(qnet *q, const char *fmt, const char *name, const char *why) {
  snprintf(q->err, sizeof q->err, fmt, name, why);
  return -1;
}

/* a new value of the given logical shape, layout and params */
static int value(qnet *q, int64_t n, int64_t c, int64_t h, int64_t w, topi_layout l, topi_qparams p) {
  q->values[q->nvalues] = (qnet_value){n, c, h, w, l, p, NULL};
  return q->nvalues++;
}

static qnet_layer *layer(qnet *q, const char *tmpl, int src, const char *name, int in) {
  qnet_layer *L = &q->layers[q->nlayers++];
  memset(L, 0, sizeof *L);
  snprintf(L->name, sizeof L->name, "%s", name);
  L->tmpl = tmpl, L->src = src, L->in = in, L->in2 = -1;
  return L;
}

/* the params of count floats x (the fp32 network's buffer: rings and lanes past c are zeros,
 * inside the range anyway) */
static int calibrate(qnet *q, const char *name, const float *x, int64_t count, topi_qparams *p) {
  if (topi_qnn_calibrate(q->ctx, x, count, p)) return fail(q, "qnet_new: value of %s: %s", name, tec_ctx_error(q->ctx));
  return 0;
}

/* conv layer i of n: weights, bias, the problem; its output (a residual's pre-add value) */
static int add_conv(qnet *q, const net *n, int i, topi_layout packed) {
  const net_layer *F = &n->layers[i];
  const topi_conv2d *p = &F->conv;
  int64_t per = p->c_in / p->groups * p->kh * p->kw;
  int out = F->out;
  if (F->res >= 0) { /* the convolution alone, calibrated on out - res */
    int64_t cnt = net_value_floats(n, F->out);
    if (net_value_floats(n, F->res) != cnt)
      return fail(q, "qnet_new: layer %s: %s", F->name, "the residual's buffer differs from the output's");
    float *d = malloc(sizeof(float) * (size_t)cnt);
    if (!d) return fail(q, "qnet_new: layer %s: %s", F->name, "out of memory");
    const float *o = n->values[F->out].data, *r = n->values[F->res].data;
    for (int64_t k = 0; k < cnt; k++) d[k] = o[k] - r[k];
    topi_qparams pre;
    int rc = calibrate(q, F->name, d, cnt, &pre);
    free(d);
    if (rc) return -1;
    const net_value *v = &n->values[F->out];
    out = value(q, v->n, v->c, v->h, v->w, packed, pre);
  }
  qnet_layer *L = layer(q, p->groups > 1 ? "qnn_depthwise" : "qnn_conv2d", i, F->name, F->in);
  L->out = out;
  L->conv = (topi_qconv2d){.conv = *p, .in = q->values[F->in].q, .out = q->values[out].q};
  L->conv.conv.in_layout = q->values[F->in].layout, L->conv.conv.out_layout = packed;
  L->conv.conv.epi.residual = 0;
  if (F->res >= 0) L->conv.conv.epi.act = TOPI_ACT_NONE; /* on the add's clamp */
  L->w = malloc((size_t)(p->c_out * per));
  L->b = malloc(sizeof(int32_t) * (size_t)p->c_out);
  L->w_scale = malloc(sizeof(float) * (size_t)p->c_out);
  if (!L->w || !L->b || !L->w_scale) return fail(q, "qnet_new: layer %s: %s", F->name, "out of memory");
  if (topi_qnn_quantize_weights(q->ctx, F->w, p->c_out, per, L->w, L->w_scale) ||
      topi_qnn_quantize_bias(q->ctx, F->b, p->c_out, L->conv.in.scale, L->w_scale, L->b))
    return fail(q, "qnet_new: layer %s: %s", F->name, tec_ctx_error(q->ctx));
  if (F->res < 0) return 0;
  char name[sizeof L->name];
  snprintf(name, sizeof name, "%s_add", F->name);
  qnet_layer *A = layer(q, "qnn_add", i, name, out);
  const qnet_value *v = &q->values[F->out];
  A->in2 = F->res, A->out = F->out;
  A->add = (topi_qadd){.n = v->n, .c = v->c, .h = v->h, .w = v->w, .layout = packed,
                       .act = F->conv.epi.act, .a = q->values[out].q, .b = q->values[F->res].q,
                       .out = v->q};
  return 0;
}

static int add_layer(qnet *q, const net *n, int i, topi_layout packed) {
  const net_layer *F = &n->layers[i];
  switch (F->op) {
  case NET_CONV: return add_conv(q, n, i, packed);
  case NET_POOL:
  case NET_GPOOL: {
    const net_value *x = &n->values[F->in];
    if (F->op == NET_GPOOL && x->c % packed.block)
      return fail(q, "qnet_new: layer %s: %s", F->name,
                  "its channels are not a multiple of the block (the dense layer reads the "
                  "packed output as [n][c])");
    qnet_layer *L = layer(q, "qnn_pool", i, F->name, F->in);
    L->out = F->out;
    L->pool = (topi_qpool){.pool = F->pool, .in = q->values[F->in].q, .out = q->values[F->out].q};
    if (F->op == NET_GPOOL) /* a window over the whole plane */
      L->pool.pool = (topi_pool){.n = x->n, .c = x->c, .h = x->h, .w = x->w, .kh = x->h,
                                 .kw = x->w, .stride_h = 1, .stride_w = 1, .mode = TOPI_POOL_AVG};
    L->pool.pool.in_layout = L->pool.pool.out_layout = packed;
    return 0;
  }
  case NET_FC: {
    const topi_dense *d = &F->fc;
    qnet_layer *L = layer(q, "qnn_dense", i, F->name, F->in);
    L->out = q->logits = F->out;
    q->values[F->out].layout = (topi_layout){.kind = TOPI_NCHW};
    L->fc = (topi_qdense){.m = d->m, .n = d->n, .k = d->k, .bias = 1, .act = d->epi.act,
                          .in = q->values[F->in].q, .out = q->values[F->out].q};
    L->w = malloc((size_t)(d->n * d->k));
    L->b = malloc(sizeof(int32_t) * (size_t)d->n);
    L->w_scale = malloc(sizeof(float) * (size_t)d->n);
    if (!L->w || !L->b || !L->w_scale) return fail(q, "qnet_new: layer %s: %s", F->name, "out of memory");
    if (topi_qnn_quantize_weights(q->ctx, F->w, d->n, d->k, L->w, L->w_scale) ||
        topi_qnn_quantize_bias(q->ctx, F->b, d->n, L->fc.in.scale, L->w_scale, L->b))
      return fail(q, "qnet_new: layer %s: %s", F->name, tec_ctx_error(q->ctx));
    return 0;
  }
  default: return 0; /* softmax: the int8 network ends at the logits */
  }
}

static qnet *refuse(qnet *q, char *err, size_t errlen) {
  snprintf(err, errlen, "%s", q && q->err[0] ? q->err : "qnet_new: out of memory");
  qnet_free(q);
  return NULL;
}

qnet *qnet_new(net *n, const float *calib, char *err, size_t errlen) {
  qnet *q = calloc(1, sizeof *q);
  if (!q || !(q->ctx = tec_ctx_new())) return refuse(q, err, errlen);
  q->fp = n;
  q->logits = -1;
  q->layers = calloc(QNET_MAX_LAYERS, sizeof *q->layers);
  q->values = calloc(QNET_MAX_LAYERS, sizeof *q->values);
  if (!q->layers || !q->values) return refuse(q, err, errlen);
  if (!n || !calib) {
    snprintf(q->err, sizeof q->err, "qnet_new: needs a network and a calibration image");
    return refuse(q, err, errlen);
  }
  if (n->opt.block % 4) {
    snprintf(q->err, sizeof q->err, "qnet_new: the network's block is %lld; the int8 templates "
             "take a multiple of 4", (long long)n->opt.block);
    return refuse(q, err, errlen);
  }
  if (net_run(n, calib, NULL)) { /* the fp32 values the params come from */
    snprintf(q->err, sizeof q->err, "qnet_new: the fp32 network: %s", net_error(n));
    return refuse(q, err, errlen);
  }
  topi_layout packed = {.kind = TOPI_NCHWC, .block = n->opt.block};
  for (int v = 0; v < n->nvalues; v++) { /* value v: its fp32 value's params */
    const net_value *x = &n->values[v];
    topi_qparams p;
    char what[48];
    snprintf(what, sizeof what, "%d", v);
    if (calibrate(q, what, x->data, net_value_floats(n, v), &p)) return refuse(q, err, errlen);
    /* the image in blocks of 4 (the least the int8 templates take): the stem's reduction
     * runs over 4 lanes for its 3 channels, not over the block's 16; the logits: [n][classes]
     * (add_layer) */
    topi_layout l = packed;
    if (v == 0) l.block = 4;
    value(q, x->n, x->c, x->h, x->w, l, p);
  }
  for (int i = 0; i < n->nlayers; i++)
    if (add_layer(q, n, i, packed)) return refuse(q, err, errlen);
  if (q->logits < 0) {
    snprintf(q->err, sizeof q->err, "qnet_new: the network has no dense layer (its logits)");
    return refuse(q, err, errlen);
  }
  return q;
}

const char *qnet_error(const qnet *q) { return q->err; }

void qnet_free(qnet *q) {
  if (!q) return;
  for (int i = 0; q->layers && i < q->nlayers; i++)
    free(q->layers[i].w), free(q->layers[i].b), free(q->layers[i].w_scale);
  for (int v = 0; q->values && v < q->nvalues; v++) free(q->values[v].data);
  free(q->layers), free(q->values), free(q->out), free(q->image);
  tec_ctx_free(q->ctx);
  free(q);
}

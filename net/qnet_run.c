/* qnet_run.c — an int8 network (include/tec/qnet.h) at work: every layer's template instantiated
 * on its default config for the host and lowered into one module, the activations allocated
 * and filled with their zero points (the lanes past c keep them), each layer's call made once
 * (int8 / int32 / f32 DLTensors), the weights packed once (prepare), and a run: the image
 * quantized into the blocked input, the layers in order, the logits dequantized. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tec/qnet.h"

static int qfail(qnet *q, const char *who, const char *name, const char *why) {
  snprintf(q->err, sizeof q->err, "%s: layer %s: %s", who, name, why);
  return -1;
}

static const void *problem(const qnet_layer *L) {
  if (!strcmp(L->tmpl, "qnn_add")) return &L->add;
  if (!strcmp(L->tmpl, "qnn_pool")) return &L->pool;
  if (!strcmp(L->tmpl, "qnn_dense")) return &L->fc;
  return &L->conv;
}

int64_t qnet_value_bytes(const qnet_value *v) {
  int64_t c = v->c;
  if (v->layout.kind == TOPI_NCHWC) c = (c + v->layout.block - 1) / v->layout.block * v->layout.block;
  return v->n * c * v->h * v->w;
}

static void arg(qnet_layer *L, void *data, tec_dtype t, int ndim, const int64_t *shape) {
  int k = L->nargs++;
  memcpy(L->shape[k], shape, sizeof(int64_t) * (size_t)ndim);
  L->t[k] = tec_dl_view(data, t, ndim, L->shape[k]);
  L->args[k] = &L->t[k];
}

/* an activation: [n][C/x][h][w][x] (or [n][c] for the logits and the dense layer's input) */
static void act_arg(qnet_layer *L, const qnet_value *v, int flat) {
  if (flat) {
    arg(L, v->data, TEC_I8, 2, (int64_t[]){v->n, v->c});
    return;
  }
  int64_t b = v->layout.block;
  arg(L, v->data, TEC_I8, 5, (int64_t[]){v->n, (v->c + b - 1) / b, v->h, v->w, b});
}

static void make_args(qnet *q, qnet_layer *L) {
  const qnet_value *in = &q->values[L->in], *out = &q->values[L->out];
  L->nargs = 0;
  if (!strcmp(L->tmpl, "qnn_dense")) {
    act_arg(L, in, 1);
    arg(L, L->w, TEC_I8, 2, (int64_t[]){L->fc.n, L->fc.k});
    arg(L, L->b, TEC_I32, 1, (int64_t[]){L->fc.n});
    arg(L, L->w_scale, TEC_F32, 1, (int64_t[]){L->fc.n});
    act_arg(L, out, 1);
    return;
  }
  act_arg(L, in, 0);
  if (L->w) {
    const topi_conv2d *p = &L->conv.conv;
    arg(L, L->w, TEC_I8, 4, (int64_t[]){p->c_out, p->c_in / p->groups, p->kh, p->kw});
    arg(L, L->b, TEC_I32, 1, (int64_t[]){p->c_out});
    arg(L, L->w_scale, TEC_F32, 1, (int64_t[]){p->c_out});
  }
  if (L->in2 >= 0) act_arg(L, &q->values[L->in2], 0);
  act_arg(L, out, 0);
}

/* every layer on its template's default config for tg, lowered into funcs */
static int lower_for(qnet *q, const char *who, const tec_target *tg, lower_func **funcs) {
  for (int i = 0; i < q->nlayers; i++) {
    qnet_layer *L = &q->layers[i];
    topi_op op;
    if (topi_instantiate(q->ctx, topi_template_find(L->tmpl), problem(L), tg, &op) ||
        !(funcs[i] = tec_lower(op.sched, L->name, op.nargs, op.args)))
      return qfail(q, who, L->name, tec_ctx_error(q->ctx));
  }
  return 0;
}

int qnet_lower(qnet *q, const char *target, lower_func **funcs) {
  const tec_target *tg = tec_target_parse(q->ctx, target); /* once for every layer */
  if (!tg) return qfail(q, "qnet_lower", "(all)", tec_ctx_error(q->ctx));
  return lower_for(q, "qnet_lower", tg, funcs);
}

int qnet_compile(qnet *q) {
  if (q->mod) return 0;
  const tec_target *host = tec_target_parse(q->ctx, NULL);
  if (!host) return qfail(q, "qnet_compile", "(all)", tec_ctx_error(q->ctx));
  lower_func *funcs[QNET_MAX_LAYERS];
  if (lower_for(q, "qnet_compile", host, funcs)) return -1;
  /* the buffers first: q->mod is set only once everything is in place, so a compile that ran
   * out of memory is retried whole, never taken as done */
  for (int i = -1; i < q->nlayers; i++) { /* value 0 and what the layers write */
    qnet_value *v = &q->values[i < 0 ? 0 : q->layers[i].out];
    size_t bytes = ((size_t)qnet_value_bytes(v) + 63) / 64 * 64;
    if (!v->data && !(v->data = aligned_alloc(64, bytes)))
      return qfail(q, "qnet_compile", i < 0 ? "(input)" : q->layers[i].name, "out of memory");
    memset(v->data, v->q.zero_point, bytes);
  }
  const qnet_value *lv = &q->values[q->logits];
  if (!q->out && !(q->out = malloc(sizeof(float) * (size_t)(lv->n * lv->c))))
    return qfail(q, "qnet_compile", "(logits)", "out of memory");
  if (!(q->mod = tec_build_for(q->ctx, q->nlayers, funcs, host)))
    return qfail(q, "qnet_compile", "(all)", tec_ctx_error(q->ctx));
  for (int i = 0; i < q->nlayers; i++) make_args(q, &q->layers[i]);
  return 0;
}

int qnet_prepare(qnet *q) {
  if (!q->mod) return qfail(q, "qnet_prepare", "(all)", "compile the network first");
  for (int i = 0; i < q->nlayers; i++) {
    qnet_layer *L = &q->layers[i];
    if (L->w && tec_module_bind_constants(q->mod, L->name, L->nargs, L->args))
      return qfail(q, "qnet_prepare", L->name, tec_rt_last_error());
  }
  return 0;
}

int qnet_quantize_image(qnet *q, const float *image, int8_t *out) {
  const qnet_value *v = &q->values[0];
  int64_t b = v->layout.block, cb = (v->c + b - 1) / b, hw = v->h * v->w;
  if (!q->image && !(q->image = malloc((size_t)(v->n * v->c * hw))))
    return qfail(q, "qnet_run", "(input)", "out of memory");
  if (topi_qnn_quantize(q->ctx, image, v->n * v->c * hw, v->q, q->image)) /* plain NCHW */
    return qfail(q, "qnet_run", "(input)", tec_ctx_error(q->ctx));
  memset(out, v->q.zero_point, (size_t)qnet_value_bytes(v)); /* the lanes past c */
  for (int64_t n = 0; n < v->n; n++)
    for (int64_t c = 0; c < v->c; c++) {
      const int8_t *src = q->image + (n * v->c + c) * hw;
      int8_t *dst = out + ((n * cb + c / b) * hw) * b + c % b;
      for (int64_t i = 0; i < hw; i++) dst[i * b] = src[i];
    }
  return 0;
}

int qnet_run(qnet *q, const float *image, double *secs) {
  if (!q->mod) return qfail(q, "qnet_run", "(all)", "compile the network first");
  if (!image) return qfail(q, "qnet_run", "(input)", "the image is NULL");
  if (qnet_quantize_image(q, image, q->values[0].data)) return -1;
  for (int i = 0; i < q->nlayers; i++) {
    qnet_layer *L = &q->layers[i];
    double t0 = secs ? tec_rt_now() : 0;
    if (tec_module_run(q->mod, L->name, L->nargs, L->args))
      return qfail(q, "qnet_run", L->name, tec_rt_last_error());
    if (secs) secs[i] = tec_rt_now() - t0;
  }
  const qnet_value *lv = &q->values[q->logits];
  for (int64_t k = 0; k < lv->n * lv->c; k++)
    q->out[k] = lv->q.scale * (float)(lv->data[k] - lv->q.zero_point);
  return 0;
}

const float *qnet_logits(const qnet *q) { return q->out; }

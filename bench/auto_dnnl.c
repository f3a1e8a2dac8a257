/* auto_dnnl.c — oneDNN 2.6 on the programs of `bench/run auto` that it has as one operation:
 * GEMM (dnnl_sgemm), the 3x3 conv and the depthwise layer (convolution primitives with the
 * ReLU post-op; activations in the bench's NHWC buffers as they are, the constant weights
 * reordered once into the layout oneDNN picks, as a user would), max pool, softmax and layer
 * norm (its scale-shift is the bench's gamma_beta buffer). Same buffers as tec and Halide, so
 * the output is checked against the same reference. */
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "auto.h"

struct auto_dnnl {
  int gemm;                 /* 1: dnnl_sgemm on args */
  int64_t n;
  float *a, *b, *c;
  dnnl_primitive_t prim;
  int nargs;
  dnnl_exec_arg_t args[6];
  dnnl_memory_t mem[6];
  int nmem;
};

static dnnl_engine_t engine;
static dnnl_stream_t stream;

#define TRY(call)                                                                      \
  do {                                                                                 \
    dnnl_status_t st_ = (call);                                                        \
    if (st_ != dnnl_success) {                                                         \
      snprintf(msg, (size_t)n, "oneDNN: %s: status %d", #call, (int)st_);              \
      auto_dnnl_free(d);                                                               \
      return NULL;                                                                     \
    }                                                                                  \
  } while (0)

static dnnl_memory_t memory(auto_dnnl *d, const dnnl_memory_desc_t *md, void *data) {
  dnnl_memory_t m = NULL;
  if (dnnl_memory_create(&m, md, engine, data ? data : DNNL_MEMORY_ALLOCATE) != dnnl_success) return NULL;
  d->mem[d->nmem++] = m;
  return m;
}
static void arg(auto_dnnl *d, int what, dnnl_memory_t m) { d->args[d->nargs++] = (dnnl_exec_arg_t){what, m}; }

/* the user's weights (md, data) reordered into the primitive's (pd's) layout, once */
static dnnl_memory_t weights(auto_dnnl *d, const_dnnl_primitive_desc_t pd, const dnnl_memory_desc_t *user, void *data) {
  const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  dnnl_memory_t src = memory(d, user, data), dst = memory(d, want, NULL);
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t r;
  if (!src || !dst || dnnl_reorder_primitive_desc_create(&rpd, user, engine, want, engine, NULL) != dnnl_success)
    return NULL;
  int ok = dnnl_primitive_create(&r, rpd) == dnnl_success;
  dnnl_primitive_desc_destroy(rpd);
  if (!ok) return NULL;
  dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
  ok = dnnl_primitive_execute(r, stream, 2, a) == dnnl_success && dnnl_stream_wait(stream) == dnnl_success;
  dnnl_primitive_destroy(r);
  return ok ? dst : NULL;
}

auto_dnnl *auto_dnnl_create(const char *prog, int nargs, DLTensor *const *t, char *msg, int n) {
  auto_dnnl *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  if (!strcmp(prog, "gemm")) {
    d->gemm = 1, d->n = t[0]->shape[0], d->a = t[0]->data, d->b = t[1]->data, d->c = t[2]->data;
    return d;
  }
  if (!engine) TRY(dnnl_engine_create(&engine, dnnl_cpu, 0));
  if (!stream) TRY(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
  dnnl_primitive_desc_t pd = NULL;
  dnnl_memory_desc_t src, dst, w, wany, bias, ss;
  dnnl_primitive_attr_t attr = NULL;
  if (!strcmp(prog, "conv") || !strcmp(prog, "dw")) {
    int dwise = !strcmp(prog, "dw");
    int64_t hp = t[0]->shape[0], wp = t[0]->shape[1], c = t[0]->shape[2], h = hp - 2, wd = wp - 2;
    int64_t k = dwise ? c : t[1]->shape[3];
    TRY(dnnl_memory_desc_init_by_tag(&src, 4, (dnnl_dims_t){1, c, hp, wp}, dnnl_f32, dnnl_nhwc));
    TRY(dnnl_memory_desc_init_by_tag(&dst, 4, (dnnl_dims_t){1, k, h, wd}, dnnl_f32, dnnl_nhwc));
    TRY(dnnl_memory_desc_init_by_tag(&bias, 1, (dnnl_dims_t){k}, dnnl_f32, dnnl_a));
    if (dwise) { /* ours [ky][kx][c]: goihw dims with its strides */
      TRY(dnnl_memory_desc_init_by_strides(&w, 5, (dnnl_dims_t){c, 1, 1, 3, 3}, dnnl_f32,
                                           (dnnl_dims_t){1, 9 * c, 9 * c, 3 * c, c}));
      TRY(dnnl_memory_desc_init_by_tag(&wany, 5, (dnnl_dims_t){c, 1, 1, 3, 3}, dnnl_f32, dnnl_format_tag_any));
    } else { /* ours [ci][ky][kx][co] */
      TRY(dnnl_memory_desc_init_by_strides(&w, 4, (dnnl_dims_t){k, c, 3, 3}, dnnl_f32,
                                           (dnnl_dims_t){1, 9 * k, 3 * k, k}));
      TRY(dnnl_memory_desc_init_by_tag(&wany, 4, (dnnl_dims_t){k, c, 3, 3}, dnnl_f32, dnnl_format_tag_any));
    }
    dnnl_convolution_desc_t cd;
    TRY(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src, &wany, &bias,
                                           &dst, (dnnl_dims_t){1, 1}, (dnnl_dims_t){0, 0}, (dnnl_dims_t){0, 0}));
    dnnl_post_ops_t po;
    TRY(dnnl_post_ops_create(&po));
    TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
    TRY(dnnl_primitive_attr_create(&attr));
    TRY(dnnl_primitive_attr_set_post_ops(attr, po));
    dnnl_post_ops_destroy(po);
    dnnl_status_t st = dnnl_primitive_desc_create(&pd, &cd, attr, engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    TRY(st);
    dnnl_memory_t wm = weights(d, pd, &w, t[1]->data);
    if (!wm) dnnl_primitive_desc_destroy(pd);
    if (!wm) TRY(dnnl_runtime_error);
    arg(d, DNNL_ARG_SRC, memory(d, &src, t[0]->data));
    arg(d, DNNL_ARG_WEIGHTS, wm);
    arg(d, DNNL_ARG_BIAS, memory(d, &bias, t[2]->data));
    arg(d, DNNL_ARG_DST, memory(d, &dst, t[3]->data));
  } else if (!strcmp(prog, "maxpool")) {
    int64_t c = t[0]->shape[0], hp = t[0]->shape[1], h = t[1]->shape[1];
    TRY(dnnl_memory_desc_init_by_tag(&src, 4, (dnnl_dims_t){1, c, hp, hp}, dnnl_f32, dnnl_nchw));
    TRY(dnnl_memory_desc_init_by_tag(&dst, 4, (dnnl_dims_t){1, c, h, h}, dnnl_f32, dnnl_nchw));
    dnnl_pooling_v2_desc_t pdsc;
    TRY(dnnl_pooling_v2_forward_desc_init(&pdsc, dnnl_forward_inference, dnnl_pooling_max, &src, &dst,
                                          (dnnl_dims_t){2, 2}, (dnnl_dims_t){3, 3}, (dnnl_dims_t){0, 0},
                                          (dnnl_dims_t){0, 0}, (dnnl_dims_t){0, 0}));
    TRY(dnnl_primitive_desc_create(&pd, &pdsc, NULL, engine, NULL));
    arg(d, DNNL_ARG_SRC, memory(d, &src, t[0]->data));
    arg(d, DNNL_ARG_DST, memory(d, &dst, t[1]->data));
  } else if (!strcmp(prog, "softmax") || !strcmp(prog, "layernorm")) {
    int64_t m = t[0]->shape[0], cols = t[0]->shape[1];
    TRY(dnnl_memory_desc_init_by_tag(&src, 2, (dnnl_dims_t){m, cols}, dnnl_f32, dnnl_ab));
    if (!strcmp(prog, "softmax")) {
      dnnl_softmax_desc_t sd;
      TRY(dnnl_softmax_forward_desc_init(&sd, dnnl_forward_inference, &src, 1));
      TRY(dnnl_primitive_desc_create(&pd, &sd, NULL, engine, NULL));
      arg(d, DNNL_ARG_SRC, memory(d, &src, t[0]->data));
      arg(d, DNNL_ARG_DST, memory(d, &src, t[1]->data));
    } else {
      dnnl_layer_normalization_desc_t ld;
      TRY(dnnl_memory_desc_init_by_tag(&ss, 2, (dnnl_dims_t){2, cols}, dnnl_f32, dnnl_ab));
      TRY(dnnl_layer_normalization_forward_desc_init(&ld, dnnl_forward_inference, &src, NULL, 1e-5f,
                                                     dnnl_use_scaleshift));
      TRY(dnnl_primitive_desc_create(&pd, &ld, NULL, engine, NULL));
      arg(d, DNNL_ARG_SRC, memory(d, &src, t[0]->data));
      arg(d, DNNL_ARG_SCALE_SHIFT, memory(d, &ss, t[1]->data));
      arg(d, DNNL_ARG_DST, memory(d, &src, t[2]->data));
    }
  } else {
    snprintf(msg, (size_t)n, "oneDNN has no single operation for this program");
    auto_dnnl_free(d);
    return NULL;
  }
  (void)nargs;
  for (int i = 0; i < d->nargs; i++)
    if (!d->args[i].memory) {
      dnnl_primitive_desc_destroy(pd);
      TRY(dnnl_out_of_memory);
    }
  dnnl_status_t st = dnnl_primitive_create(&d->prim, pd);
  dnnl_primitive_desc_destroy(pd);
  TRY(st);
  return d;
}

int auto_dnnl_run(auto_dnnl *d) {
  if (d->gemm)
    return dnnl_sgemm('N', 'N', d->n, d->n, d->n, 1.0f, d->a, d->n, d->b, d->n, 0.0f, d->c, d->n) == dnnl_success ? 0 : -1;
  if (dnnl_primitive_execute(d->prim, stream, d->nargs, d->args) != dnnl_success) return -1;
  return dnnl_stream_wait(stream) == dnnl_success ? 0 : -1;
}

void auto_dnnl_free(auto_dnnl *d) {
  if (!d) return;
  if (d->prim) dnnl_primitive_destroy(d->prim);
  for (int i = 0; i < d->nmem; i++) dnnl_memory_destroy(d->mem[i]);
  free(d);
}

/* net_dnnl_int8.c — oneDNN running tec's int8 network (include/tec/qnet.h) for bench/net.c
 * --dtype int8: the same layers, shapes, int8 weights, int32 biases and params, in oneDNN's
 * int8 primitives the way a oneDNN user would write them (../shared/workloads.md: per-channel
 * output scales, mask 2; zero points as run-time arguments):
 *   qnn_conv2d / qnn_depthwise  convolution (auto) s8 src, s8 weights (format any), s32 bias,
 *                               s8 dst; output scales w_scale[c] * in.scale / out.scale; src and
 *                               dst zero points; ReLU6 as eltwise clip [0, 6 / out.scale];
 *                               a residual add that follows fused as a sum post-op
 *                               (sum_v3: scale res.scale / out.scale, the residual's zero
 *                               point), written in place into the residual's buffer when no
 *                               later layer reads it (the add layer gets no step)
 *   qnn_pool (global average)   pooling avg, s8 -> s8 (no requantization: oneDNN's pooling has
 *                               no output scale; the params differ by a few percent here)
 *   qnn_dense                   inner product s8 -> f32 logits (no zero points there in 2.6:
 *                               the source's folded into the bias)
 * The arithmetic is oneDNN's own (fp32 scaling, its rounding), so its logits are compared with
 * tec's loosely (printed), not bit for bit. */
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "net_dnnl.h"
#include "tec/qnet.h"

/* does a layer after li read value v? */
static int read_later(const qnet *q, int li, int v) {
  for (int j = li + 1; j < q->nlayers; j++)
    if (q->layers[j].in == v || q->layers[j].in2 == v) return 1;
  return 0;
}

/* a run-time zero point argument: an s32 memory of one value */
static int zp_mem(dn_net *d, const char *who, int32_t zp, dnnl_memory_t *out) {
  if (d->nzp >= (int)(sizeof d->zp / sizeof d->zp[0])) {
    snprintf(d->err, sizeof d->err, "%s: too many zero points", who);
    return -1;
  }
  d->zp[d->nzp] = zp;
  return dn_user_mem(d, who, 1, (dnnl_dims_t){1}, dnnl_x, dnnl_s32, &d->zp[d->nzp++], out);
}

static int attr_common(dn_net *d, const char *who, dnnl_primitive_attr_t attr, int64_t c,
                       const float *scales) {
  static const int32_t rt = DNNL_RUNTIME_S32_VAL;
  DN(dnnl_primitive_attr_set_output_scales(attr, c, 1 << 1, scales));
  DN(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &rt));
  DN(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_DST, 1, 0, &rt));
  return 0;
}

static int q_conv(dn_net *d, const qnet *q, int li) {
  const qnet_layer *L = &q->layers[li];
  const char *who = L->name;
  const topi_conv2d *p = &L->conv.conv;
  const qnet_layer *A = li + 1 < q->nlayers && !strcmp(q->layers[li + 1].tmpl, "qnn_add") &&
                                q->layers[li + 1].in == L->out
                            ? &q->layers[li + 1]
                            : NULL; /* the residual add this convolution absorbs */
  const qnet_value *x = &q->values[L->in], *y = &q->values[A ? A->out : L->out];
  dnnl_dims_t sd = {x->n, x->c, x->h, x->w}, dd = {y->n, y->c, y->h, y->w}, bd = {p->c_out};
  dnnl_dims_t str = {p->stride_h, p->stride_w}, pad = {p->pad_h, p->pad_w};
  int dw = p->groups > 1;
  dnnl_dims_t wd = {p->c_out, p->c_in, p->kh, p->kw};
  dnnl_dims_t gwd = {p->groups, p->c_out / p->groups, p->c_in / p->groups, p->kh, p->kw};
  dnnl_memory_desc_t src_any, wei_any, dst_md, bias_md;
  DN(dnnl_memory_desc_init_by_tag(&src_any, 4, sd, dnnl_s8, dnnl_format_tag_any));
  DN(dnnl_memory_desc_init_by_tag(&wei_any, dw ? 5 : 4, dw ? gwd : wd, dnnl_s8, dnnl_format_tag_any));
  DN(dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_s32, dnnl_x));
  int in_place = A && !read_later(q, li + 1, A->in2);
  if (in_place) {
    const dnnl_memory_desc_t *rmd;
    DN(dnnl_memory_get_memory_desc(d->mem[A->in2], &rmd));
    dst_md = *rmd;
  } else {
    DN(dnnl_memory_desc_init_by_tag(&dst_md, 4, dd, dnnl_s8, dnnl_format_tag_any));
  }
  float scales[4096];
  if (p->c_out > 4096) {
    snprintf(d->err, sizeof d->err, "%s: more than 4096 channels", who);
    return -1;
  }
  for (int64_t c = 0; c < p->c_out; c++) scales[c] = L->w_scale[c] * (x->q.scale / y->q.scale);
  dnnl_post_ops_t po;
  dnnl_primitive_attr_t attr;
  DN(dnnl_post_ops_create(&po));
  if (A) DN(dnnl_post_ops_append_sum_v3(po, A->add.b.scale / y->q.scale, A->add.b.zero_point, dnnl_s8));
  topi_act act = A ? A->add.act : p->epi.act;
  if (act == TOPI_ACT_RELU) DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0, 0));
  if (act == TOPI_ACT_RELU6)
    DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0.0f, 6.0f / y->q.scale));
  DN(dnnl_primitive_attr_create(&attr));
  DN(dnnl_primitive_attr_set_post_ops(attr, po));
  int rc = attr_common(d, who, attr, p->c_out, scales);
  dnnl_primitive_desc_t pd = NULL;
  dnnl_convolution_desc_t cd;
  dnnl_status_t st = rc ? dnnl_invalid_arguments
                        : dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                             dnnl_convolution_auto, &src_any,
                                                             &wei_any, &bias_md, &dst_md, str, pad, pad);
  if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &cd, attr, d->eng, NULL);
  d->alg_used[li] = dnnl_convolution_auto;
  dnnl_primitive_attr_destroy(attr), dnnl_post_ops_destroy(po);
  if (rc) return -1;
  DN(st);
  const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  dnnl_memory_t src, wei, wu, bias, dst, zs, zd;
  dnnl_primitive_t prim;
  if (dn_source(d, who, li, L->in, smd, &src) ||
      dn_user_mem(d, who, dw ? 5 : 4, dw ? gwd : wd, dw ? dnnl_goihw : dnnl_oihw, dnnl_s8, L->w, &wu) ||
      dn_user_mem(d, who, 1, bd, dnnl_x, dnnl_s32, L->b, &bias) || zp_mem(d, who, x->q.zero_point, &zs) ||
      zp_mem(d, who, y->q.zero_point, &zd) || dn_pd_finish(d, who, li, pd, &prim)) {
    dnnl_primitive_desc_destroy(pd);
    return -1;
  }
  st = dnnl_memory_create(&wei, wmd, d->eng, DNNL_MEMORY_ALLOCATE);
  if (st == dnnl_success && !in_place) st = dnnl_memory_create(&dst, dmd, d->eng, DNNL_MEMORY_ALLOCATE);
  dnnl_primitive_desc_destroy(pd);
  DN(st);
  dn_keep(d, wei);
  if (dn_reorder(d, who, -1, wu, wei)) return -1;
  if (in_place) dst = d->mem[A->in2];
  else d->own[y - q->values] = 1;
  d->mem[y - q->values] = dst;
  dnnl_exec_arg_t a[6] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_BIAS, bias},
                          {DNNL_ARG_DST, dst}, {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zs},
                          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, zd}};
  return dn_add_step(d, li, prim, 6, a);
}

static int q_pool(dn_net *d, const qnet *q, int li) {
  const qnet_layer *L = &q->layers[li];
  const topi_pool *p = &L->pool.pool;
  const qnet_value *y = &q->values[L->out];
  dnnl_dims_t dd = {y->n, y->c, y->h, y->w}, str = {p->stride_h, p->stride_w}, ker = {p->kh, p->kw};
  dnnl_dims_t pad = {p->pad_h, p->pad_w};
  return dn_pool_step(d, L->name, li, L->in, L->out, dd,
                      p->mode == TOPI_POOL_MAX ? dnnl_pooling_max : dnnl_pooling_avg_exclude_padding,
                      str, ker, pad, dnnl_s8);
}

/* The inner product has no zero points in oneDNN 2.6 (unimplemented): the source's is folded
 * into the bias (b - zp_in * sum w, as tec's prepare does), and the output is f32 in real units
 * (scales w_scale[c] * in.scale): the logits themselves. */
static int q_fc(dn_net *d, const qnet *q, int li) {
  const qnet_layer *L = &q->layers[li];
  const char *who = L->name;
  const qnet_value *x = &q->values[L->in];
  dnnl_dims_t wd = {L->fc.n, x->c, x->h, x->w}, bd = {L->fc.n}, dd = {L->fc.m, L->fc.n};
  const dnnl_memory_desc_t *smd;
  dnnl_memory_desc_t wei_any, bias_md, dst_md;
  DN(dnnl_memory_get_memory_desc(d->mem[L->in], &smd));
  DN(dnnl_memory_desc_init_by_tag(&wei_any, 4, wd, dnnl_s8, dnnl_format_tag_any));
  DN(dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_s32, dnnl_x));
  DN(dnnl_memory_desc_init_by_tag(&dst_md, 2, dd, dnnl_f32, dnnl_nc));
  float scales[4096];
  if (L->fc.n > 4096) {
    snprintf(d->err, sizeof d->err, "%s: more than 4096 outputs", who);
    return -1;
  }
  for (int64_t c = 0; c < L->fc.n; c++) scales[c] = L->w_scale[c] * x->q.scale;
  dnnl_primitive_attr_t attr;
  DN(dnnl_primitive_attr_create(&attr));
  dnnl_status_t st = dnnl_primitive_attr_set_output_scales(attr, L->fc.n, 1 << 1, scales);
  dnnl_inner_product_desc_t ipd;
  dnnl_primitive_desc_t pd = NULL;
  if (st == dnnl_success)
    st = dnnl_inner_product_forward_desc_init(&ipd, dnnl_forward_inference, smd, &wei_any,
                                              &bias_md, &dst_md);
  if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &ipd, attr, d->eng, NULL);
  dnnl_primitive_attr_destroy(attr);
  DN(st);
  dnnl_primitive_t prim;
  dnnl_memory_t wu, wei, bias, dst;
  if (dn_user_mem(d, who, 4, wd, dnnl_oihw, dnnl_s8, L->w, &wu) || dn_pd_finish(d, who, li, pd, &prim)) {
    dnnl_primitive_desc_destroy(pd);
    return -1;
  }
  st = dnnl_memory_create(&wei, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), d->eng,
                          DNNL_MEMORY_ALLOCATE);
  dnnl_primitive_desc_destroy(pd);
  DN(st);
  dn_keep(d, wei);
  if (dn_reorder(d, who, -1, wu, wei)) return -1;
  DN(dnnl_memory_create(&bias, &bias_md, d->eng, DNNL_MEMORY_ALLOCATE));
  dn_keep(d, bias);
  int32_t *b = NULL;
  DN(dnnl_memory_get_data_handle(bias, (void **)&b));
  for (int64_t c = 0; c < L->fc.n; c++) {
    int64_t sw = 0;
    for (int64_t k = 0; k < L->fc.k; k++) sw += L->w[c * L->fc.k + k];
    b[c] = (int32_t)(L->b[c] - (int64_t)x->q.zero_point * sw);
  }
  DN(dnnl_memory_create(&dst, &dst_md, d->eng, DNNL_MEMORY_ALLOCATE));
  d->mem[L->out] = dst, d->own[L->out] = 1;
  dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, d->mem[L->in]}, {DNNL_ARG_WEIGHTS, wei},
                          {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}};
  return dn_add_step(d, li, prim, 4, a);
}

int dn_build_int8(dn_net *d, const qnet *q) {
  memset(d, 0, sizeof *d);
  const char *who = "(input)";
  if (q->nlayers > DN_MAX || q->nvalues > DN_MAX) {
    snprintf(d->err, sizeof d->err, "more than %d layers or values", DN_MAX);
    return -1;
  }
  d->alg = dnnl_convolution_auto;
  DN(dnnl_engine_create(&d->eng, dnnl_cpu, 0));
  DN(dnnl_stream_create(&d->strm, d->eng, dnnl_stream_default_flags));
  d->nlayers = q->nlayers;
  const qnet_value *x = &q->values[0]; /* tec's blocked s8 input */
  dnnl_format_tag_t tag = x->layout.block == 16 ? dnnl_nChw16c : x->layout.block == 8 ? dnnl_nChw8c
                          : x->layout.block == 4 ? dnnl_nChw4c : dnnl_format_tag_undef;
  if (tag == dnnl_format_tag_undef) {
    snprintf(d->err, sizeof d->err, "the input's block %lld: 4, 8 or 16", (long long)x->layout.block);
    return -1;
  }
  if (dn_user_mem(d, who, 4, (dnnl_dims_t){x->n, x->c, x->h, x->w}, tag, dnnl_s8, x->data, &d->mem[0]))
    return -1;
  for (int i = 0; i < q->nlayers; i++) {
    const char *t = q->layers[i].tmpl;
    int rc = 0;
    if (!strcmp(t, "qnn_conv2d") || !strcmp(t, "qnn_depthwise")) rc = q_conv(d, q, i);
    else if (!strcmp(t, "qnn_pool")) rc = q_pool(d, q, i);
    else if (!strcmp(t, "qnn_dense")) rc = q_fc(d, q, i);
    else if (i > 0 && q->layers[i - 1].out == q->layers[i].in && q->layers[i - 1].w)
      snprintf(d->impl[i], sizeof d->impl[i], "(a sum post-op of %s)", q->layers[i - 1].name);
    else {
      snprintf(d->err, sizeof d->err, "%s: an add that does not follow its convolution", q->layers[i].name);
      return -1;
    }
    if (rc) return -1;
  }
  return 0;
}

const float *dn_logits_f32(dn_net *d, int v) {
  void *h = NULL;
  dnnl_memory_get_data_handle(d->mem[v], &h);
  return h;
}

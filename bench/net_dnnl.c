/* net_dnnl.c — oneDNN running the same network as tec, for bench/net.c (which says how each
 * layer is mapped: a convolution by the network's algorithm (direct, auto, or winograd with
 * auto where oneDNN has none) with format any and post-ops, the residual as an in-place
 * sum, pooling, inner product, softmax; reorders only where formats differ and at the input). */
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "net_dnnl.h"

dnnl_memory_t dn_keep(dn_net *d, dnnl_memory_t m) {
  if (d->nextra < (int)(sizeof d->extra / sizeof d->extra[0])) d->extra[d->nextra++] = m;
  return m;
}

int dn_add_step(dn_net *d, int li, dnnl_primitive_t p, int nargs, const dnnl_exec_arg_t *a) {
  if (d->nsteps[li] >= MAX_STEPS) return -1;
  dn_step *s = &d->steps[li][d->nsteps[li]++];
  s->prim = p, s->nargs = nargs;
  memcpy(s->args, a, sizeof *a * (size_t)nargs);
  return 0;
}

/* runs a reorder once (weights) or, with li >= 0, adds it as a step of layer li */
int dn_reorder(dn_net *d, const char *who, int li, dnnl_memory_t src, dnnl_memory_t dst) {
  const dnnl_memory_desc_t *smd, *dmd;
  DN(dnnl_memory_get_memory_desc(src, &smd));
  DN(dnnl_memory_get_memory_desc(dst, &dmd));
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t r;
  DN(dnnl_reorder_primitive_desc_create(&pd, smd, d->eng, dmd, d->eng, NULL));
  dnnl_status_t st = dnnl_primitive_create(&r, pd);
  dnnl_primitive_desc_destroy(pd);
  DN(st);
  dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
  if (li >= 0 && src == d->mem[0]) { /* the network's input edge: timed apart */
    d->edge = (dn_step){r, 2, {a[0], a[1]}};
    d->has_edge = 1;
    return 0;
  }
  if (li >= 0) return dn_add_step(d, li, r, 2, a);
  st = dnnl_primitive_execute(r, d->strm, 2, a);
  if (st == dnnl_success) st = dnnl_stream_wait(d->strm);
  dnnl_primitive_destroy(r);
  DN(st);
  return 0;
}

/* user memory of the given plain format over data (weights, bias) */
int dn_user_mem(dn_net *d, const char *who, int nd, const dnnl_dims_t dims,
                dnnl_format_tag_t tag, dnnl_data_type_t dt, void *data, dnnl_memory_t *out) {
  dnnl_memory_desc_t md;
  DN(dnnl_memory_desc_init_by_tag(&md, nd, dims, dt, tag));
  DN(dnnl_memory_create(out, &md, d->eng, data));
  dn_keep(d, *out);
  return 0;
}

/* the source of layer li: value v's memory, reordered into want (adding the step) if the
 * primitive chose another format */
int dn_source(dn_net *d, const char *who, int li, int v, const dnnl_memory_desc_t *want,
                  dnnl_memory_t *out) {
  const dnnl_memory_desc_t *have;
  DN(dnnl_memory_get_memory_desc(d->mem[v], &have));
  if (dnnl_memory_desc_equal(have, want)) return *out = d->mem[v], 0;
  DN(dnnl_memory_create(out, want, d->eng, DNNL_MEMORY_ALLOCATE));
  dn_keep(d, *out);
  return dn_reorder(d, who, li, d->mem[v], *out);
}

/* a value's logical dims (n, c, h, w) */
static void vdims(const net_value *v, dnnl_dims_t dims) {
  dims[0] = v->n, dims[1] = v->c, dims[2] = v->h, dims[3] = v->w;
}

/* does a layer after li read value v? */
static int read_later(const net *n, int li, int v) {
  for (int j = li + 1; j < n->nlayers; j++)
    if (n->layers[j].in == v || n->layers[j].res == v) return 1;
  return 0;
}

int dn_pd_finish(dn_net *d, const char *who, int li, dnnl_primitive_desc_t pd,
                     dnnl_primitive_t *prim) {
  const char *impl = NULL;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  const char *alg = d->alg_used[li] == dnnl_convolution_winograd ? " (winograd)"
                    : d->alg_used[li] == dnnl_convolution_auto     ? " (auto)"
                    : d->alg_used[li] == dnnl_convolution_direct   ? " (direct)"
                                                                   : "";
  snprintf(d->impl[li], sizeof d->impl[li], "%s%s", impl ? impl : "?", alg);
  dnnl_status_t st = dnnl_primitive_create(prim, pd);
  DN(st);
  return 0;
}

static int dn_conv(dn_net *d, const net *n, int li) {
  const net_layer *L = &n->layers[li];
  const char *who = L->name;
  const topi_conv2d *p = &L->conv;
  const net_value *x = &n->values[L->in], *y = &n->values[L->out];
  dnnl_dims_t sd, dd, bd = {p->c_out}, str = {p->stride_h, p->stride_w}, pad = {p->pad_h, p->pad_w};
  vdims(x, sd), vdims(y, dd);
  int dw = p->groups > 1;
  dnnl_dims_t wd = {p->c_out, p->c_in, p->kh, p->kw};
  dnnl_dims_t gwd = {p->groups, p->c_out / p->groups, p->c_in / p->groups, p->kh, p->kw};
  dnnl_memory_desc_t src_any, wei_any, dst_md, bias_md;
  DN(dnnl_memory_desc_init_by_tag(&src_any, 4, sd, dnnl_f32, dnnl_format_tag_any));
  DN(dnnl_memory_desc_init_by_tag(&wei_any, dw ? 5 : 4, dw ? gwd : wd, dnnl_f32, dnnl_format_tag_any));
  DN(dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_f32, dnnl_x));
  /* with a residual the conv sums into the shortcut's buffer: dst takes its format */
  int in_place = L->res >= 0 && !read_later(n, li, L->res);
  if (in_place) {
    const dnnl_memory_desc_t *rmd;
    DN(dnnl_memory_get_memory_desc(d->mem[L->res], &rmd));
    dst_md = *rmd;
  } else {
    DN(dnnl_memory_desc_init_by_tag(&dst_md, 4, dd, dnnl_f32, dnnl_format_tag_any));
  }
  dnnl_post_ops_t po;
  dnnl_primitive_attr_t attr;
  DN(dnnl_post_ops_create(&po));
  if (L->res >= 0) DN(dnnl_post_ops_append_sum(po, 1.0f));
  if (p->epi.act == TOPI_ACT_RELU) DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0, 0));
  if (p->epi.act == TOPI_ACT_RELU6)
    DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0.0f, 6.0f));
  DN(dnnl_primitive_attr_create(&attr));
  DN(dnnl_primitive_attr_set_post_ops(attr, po));
  /* the network's algorithm; where oneDNN has no winograd for a layer (1x1, depthwise,
   * stride 2), its own choice (auto) */
  dnnl_alg_kind_t algs[2] = {d->alg, dnnl_convolution_auto};
  dnnl_primitive_desc_t pd = NULL;
  dnnl_status_t st = dnnl_unimplemented;
  for (int k = 0; k < 2 && st != dnnl_success; k++) {
    dnnl_convolution_desc_t cd;
    st = dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, algs[k], &src_any,
                                            &wei_any, &bias_md, &dst_md, str, pad, pad);
    if (st == dnnl_success) st = dnnl_primitive_desc_create(&pd, &cd, attr, d->eng, NULL);
    d->alg_used[li] = algs[k];
    if (d->alg != dnnl_convolution_winograd) break;
  }
  dnnl_primitive_attr_destroy(attr), dnnl_post_ops_destroy(po);
  DN(st);
  const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  dnnl_memory_t src, wei, wu, bias, dst;
  dnnl_primitive_t prim;
  if (dn_source(d, L->name, li, L->in, smd, &src) ||
      dn_user_mem(d, L->name, dw ? 5 : 4, dw ? gwd : wd, dw ? dnnl_goihw : dnnl_oihw, dnnl_f32, L->w, &wu) ||
      dn_user_mem(d, L->name, 1, bd, dnnl_x, dnnl_f32, L->b, &bias) || dn_pd_finish(d, L->name, li, pd, &prim)) {
    dnnl_primitive_desc_destroy(pd);
    return -1;
  }
  st = dnnl_memory_create(&wei, wmd, d->eng, DNNL_MEMORY_ALLOCATE);
  if (st == dnnl_success && !in_place) st = dnnl_memory_create(&dst, dmd, d->eng, DNNL_MEMORY_ALLOCATE);
  dnnl_primitive_desc_destroy(pd);
  DN(st);
  dn_keep(d, wei);
  if (dn_reorder(d, L->name, -1, wu, wei)) return -1;
  if (in_place) dst = d->mem[L->res];
  else d->own[L->out] = 1;
  d->mem[L->out] = dst;
  dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_BIAS, bias},
                          {DNNL_ARG_DST, dst}};
  return dn_add_step(d, li, prim, 4, a);
}

int dn_pool_step(dn_net *d, const char *who, int li, int in, int out, const dnnl_dims_t dd,
                 dnnl_alg_kind_t alg, const dnnl_dims_t str, const dnnl_dims_t ker,
                 const dnnl_dims_t pad, dnnl_data_type_t dt) {
  const dnnl_memory_desc_t *smd;
  dnnl_memory_desc_t dst_any;
  DN(dnnl_memory_get_memory_desc(d->mem[in], &smd));
  DN(dnnl_memory_desc_init_by_tag(&dst_any, 4, dd, dt, dnnl_format_tag_any));
  dnnl_pooling_desc_t pdsc;
  DN(dnnl_pooling_forward_desc_init(&pdsc, dnnl_forward_inference, alg, smd, &dst_any, str, ker,
                                    pad, pad));
  dnnl_primitive_desc_t pd;
  DN(dnnl_primitive_desc_create(&pd, &pdsc, NULL, d->eng, NULL));
  dnnl_primitive_t prim;
  dnnl_memory_t dst;
  if (dn_pd_finish(d, who, li, pd, &prim)) {
    dnnl_primitive_desc_destroy(pd);
    return -1;
  }
  dnnl_status_t st = dnnl_memory_create(&dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                                        d->eng, DNNL_MEMORY_ALLOCATE);
  dnnl_primitive_desc_destroy(pd);
  DN(st);
  d->mem[out] = dst, d->own[out] = 1;
  dnnl_exec_arg_t a[2] = {{DNNL_ARG_SRC, d->mem[in]}, {DNNL_ARG_DST, dst}};
  return dn_add_step(d, li, prim, 2, a);
}

static int dn_pool(dn_net *d, const net *n, int li) {
  const net_layer *L = &n->layers[li];
  const topi_pool *p = &L->pool;
  int global = L->op == NET_GPOOL;
  dnnl_dims_t dd, str = {global ? 1 : p->stride_h, global ? 1 : p->stride_w};
  dnnl_dims_t ker = {global ? p->h : p->kh, global ? p->w : p->kw};
  dnnl_dims_t pad = {global ? 0 : p->pad_h, global ? 0 : p->pad_w};
  vdims(&n->values[L->out], dd);
  return dn_pool_step(d, L->name, li, L->in, L->out, dd,
                      global ? dnnl_pooling_avg_exclude_padding : dnnl_pooling_max, str, ker, pad,
                      dnnl_f32);
}

static int dn_fc(dn_net *d, const net *n, int li) {
  const net_layer *L = &n->layers[li];
  const char *who = L->name;
  const net_value *x = &n->values[L->in];
  dnnl_dims_t wd = {L->fc.n, x->c, x->h, x->w}, bd = {L->fc.n}, dd = {L->fc.m, L->fc.n};
  const dnnl_memory_desc_t *smd;
  dnnl_memory_desc_t wei_any, bias_md, dst_md;
  DN(dnnl_memory_get_memory_desc(d->mem[L->in], &smd));
  DN(dnnl_memory_desc_init_by_tag(&wei_any, 4, wd, dnnl_f32, dnnl_format_tag_any));
  DN(dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_f32, dnnl_x));
  DN(dnnl_memory_desc_init_by_tag(&dst_md, 2, dd, dnnl_f32, dnnl_nc));
  dnnl_inner_product_desc_t ipd;
  DN(dnnl_inner_product_forward_desc_init(&ipd, dnnl_forward_inference, smd, &wei_any, &bias_md,
                                          &dst_md));
  dnnl_primitive_desc_t pd;
  DN(dnnl_primitive_desc_create(&pd, &ipd, NULL, d->eng, NULL));
  dnnl_primitive_t prim;
  dnnl_memory_t wu, wei, bias, dst;
  if (dn_user_mem(d, L->name, 4, wd, dnnl_oihw, dnnl_f32, L->w, &wu) || dn_user_mem(d, L->name, 1, bd, dnnl_x, dnnl_f32, L->b, &bias) ||
      dn_pd_finish(d, L->name, li, pd, &prim)) {
    dnnl_primitive_desc_destroy(pd);
    return -1;
  }
  dnnl_status_t st = dnnl_memory_create(
      &wei, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), d->eng, DNNL_MEMORY_ALLOCATE);
  dnnl_primitive_desc_destroy(pd);
  DN(st);
  dn_keep(d, wei);
  if (dn_reorder(d, L->name, -1, wu, wei)) return -1;
  DN(dnnl_memory_create(&dst, &dst_md, d->eng, DNNL_MEMORY_ALLOCATE));
  d->mem[L->out] = dst, d->own[L->out] = 1;
  dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, d->mem[L->in]}, {DNNL_ARG_WEIGHTS, wei},
                          {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}};
  return dn_add_step(d, li, prim, 4, a);
}

static int dn_softmax(dn_net *d, const net *n, int li) {
  const net_layer *L = &n->layers[li];
  const char *who = L->name;
  const dnnl_memory_desc_t *md;
  DN(dnnl_memory_get_memory_desc(d->mem[L->in], &md));
  dnnl_softmax_desc_t sd;
  DN(dnnl_softmax_forward_desc_init(&sd, dnnl_forward_inference, md, 1));
  dnnl_primitive_desc_t pd;
  DN(dnnl_primitive_desc_create(&pd, &sd, NULL, d->eng, NULL));
  dnnl_primitive_t prim;
  dnnl_memory_t dst;
  int rc = dn_pd_finish(d, L->name, li, pd, &prim);
  dnnl_primitive_desc_destroy(pd);
  if (rc) return -1;
  DN(dnnl_memory_create(&dst, md, d->eng, DNNL_MEMORY_ALLOCATE));
  d->mem[L->out] = dst, d->own[L->out] = 1;
  dnnl_exec_arg_t a[2] = {{DNNL_ARG_SRC, d->mem[L->in]}, {DNNL_ARG_DST, dst}};
  return dn_add_step(d, li, prim, 2, a);
}

void dn_free(dn_net *d) {
  if (d->has_edge) dnnl_primitive_destroy(d->edge.prim);
  for (int i = 0; i < d->nlayers; i++)
    for (int s = 0; s < d->nsteps[i]; s++) dnnl_primitive_destroy(d->steps[i][s].prim);
  for (int v = 0; v < DN_MAX; v++)
    if (d->own[v] && d->mem[v]) dnnl_memory_destroy(d->mem[v]);
  for (int i = 0; i < d->nextra; i++) dnnl_memory_destroy(d->extra[i]);
  if (d->strm) dnnl_stream_destroy(d->strm);
  if (d->eng) dnnl_engine_destroy(d->eng);
  memset(d, 0, sizeof *d);
}

/* oneDNN's network for tec's layer list n, reading the NCHW image at `image`. */
int dn_build(dn_net *d, const net *n, float *image, dnnl_alg_kind_t alg) {
  memset(d, 0, sizeof *d);
  d->alg = alg;
  const net_layer *L = &n->layers[0];
  const char *who = L->name;
  DN(dnnl_engine_create(&d->eng, dnnl_cpu, 0));
  DN(dnnl_stream_create(&d->strm, d->eng, dnnl_stream_default_flags));
  d->nlayers = n->nlayers;
  dnnl_dims_t id;
  vdims(&n->values[0], id);
  if (dn_user_mem(d, L->name, 4, id, dnnl_nchw, dnnl_f32, image, &d->mem[0])) return -1;
  for (int i = 0; i < n->nlayers; i++) {
    int rc;
    switch (n->layers[i].op) {
    case NET_CONV: rc = dn_conv(d, n, i); break;
    case NET_POOL:
    case NET_GPOOL: rc = dn_pool(d, n, i); break;
    case NET_FC: rc = dn_fc(d, n, i); break;
    default: rc = dn_softmax(d, n, i); break;
    }
    if (rc) return -1;
  }
  return 0;
}

/* secs[0..nlayers): each layer; secs[nlayers]: the input edge's reorder */
int dn_run(dn_net *d, double *secs) {
  double e0 = bench_now(CLOCK_MONOTONIC);
  if (d->has_edge && (dnnl_primitive_execute(d->edge.prim, d->strm, 2, d->edge.args) != dnnl_success ||
                      dnnl_stream_wait(d->strm) != dnnl_success)) {
    snprintf(d->err, sizeof d->err, "the input reorder failed");
    return -1;
  }
  secs[d->nlayers] = bench_now(CLOCK_MONOTONIC) - e0;
  for (int i = 0; i < d->nlayers; i++) {
    double t0 = bench_now(CLOCK_MONOTONIC);
    for (int s = 0; s < d->nsteps[i]; s++) {
      dn_step *st = &d->steps[i][s];
      if (dnnl_primitive_execute(st->prim, d->strm, st->nargs, st->args) != dnnl_success ||
          dnnl_stream_wait(d->strm) != dnnl_success) {
        snprintf(d->err, sizeof d->err, "layer %d: dnnl_primitive_execute failed", i);
        return -1;
      }
    }
    secs[i] = bench_now(CLOCK_MONOTONIC) - t0;
  }
  return 0;
}

const float *dn_logits(dn_net *d, int v) {
  void *h = NULL;
  dnnl_memory_get_data_handle(d->mem[v], &h);
  return h;
}

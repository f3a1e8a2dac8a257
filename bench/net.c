/* net.c — a whole network end to end: tec (examples/net/net.c: every layer a topi template,
 * activations NCHW16c, weights packed once) against oneDNN running the same network with the
 * same weights, in one run, round-robin, 1 and 2 threads.
 *
 *   net [--net mobilenet|resnet18] [--threads 1,2] [--runs 30] [--layers] [--prepadded]
 *       [--csv FILE] [--size 224] [--width 1.0]
 *
 * oneDNN's network (built from tec's layer list, so the shapes and weights are the same):
 *   conv      dnnl convolution_direct, src / weights / dst format `any` (oneDNN picks blocked
 *             layouts); bias, then post-ops: residual as a sum post-op (the conv writes in place
 *             into the shortcut's buffer, which no later layer reads), relu as eltwise relu,
 *             relu6 as eltwise clip [0, 6]
 *   max pool  pooling max, dst `any`; global pool: pooling avg over the whole plane
 *   fc        inner product (weights `any`), bias; softmax over the classes
 * A reorder runs only where a layer's chosen src format differs from what its producer wrote
 * (counted in that layer's time; none in MobileNet v1 and ResNet-18 here) and at the edge: the
 * NCHW image into the first convolution's format, timed on a line of its own. tec's net_run
 * copies the image into its input buffer (untimed per layer). Both are in the whole network's
 * time, neither in "convs". Weights are reordered once, outside the timing.
 *
 * Per thread count: oneDNN's primitives are made after omp_set_num_threads; both networks run
 * once and their logits are compared (max |a - b| / max |b|, limit 1e-3), then `runs` times
 * round-robin (tec, oneDNN, tec, ...) so the machine's load falls on both alike; each run times
 * every layer (clock around each call) and the whole run. Medians. "convs" is the sum of the
 * convolution layers' medians (the network's body); ratios are oneDNN / tec (above 1: tec is
 * faster). "cores used" is the process's CPU time over the wall time of a run (median): below
 * the thread count, its workers were not on a core (other tenants of the machine) or idle;
 * the calling thread's share beside it (the rest is the workers': their work and spinning). GNU OpenMP reads GOMP_SPINCOUNT when loaded: main() re-executes itself once with 2000,
 * tec's own spin budget (as bench/conv.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dnnl.h>
#include "common.h"
#include "net/net.h"
#include "peak.h"

#define MAX_THREADS 8
#define MAX_STEPS 4 /* oneDNN primitives per tec layer (a reorder, the op) */

typedef struct opts {
  net_kind kind;
  int nthreads, threads[MAX_THREADS], runs, layers, prepadded;
  int64_t size;
  double width;
  const char *csv;
} opts;

static int parse_opts(int argc, char **argv, opts *o) {
  *o = (opts){.kind = NET_MOBILENET_V1, .nthreads = 2, .threads = {1, 2}, .runs = 30,
              .size = 224, .width = 1.0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--layers") || !strcmp(a, "--prepadded")) {
      *(a[2] == 'l' ? &o->layers : &o->prepadded) = 1;
      continue;
    }
    if (!v) {
      fprintf(stderr, "net: %s: unknown option or missing value\n", a);
      return -1;
    }
    i++;
    if (!strcmp(a, "--net")) {
      if (!strcmp(v, "mobilenet")) o->kind = NET_MOBILENET_V1;
      else if (!strcmp(v, "resnet18")) o->kind = NET_RESNET18;
      else {
        fprintf(stderr, "net: --net %s: mobilenet or resnet18\n", v);
        return -1;
      }
    } else if (!strcmp(a, "--threads")) {
      if ((o->nthreads = bench_parse_list(v, o->threads, MAX_THREADS, 1, 256)) < 1) {
        fprintf(stderr, "net: --threads %s: a list of 1 to %d positive counts, like 1,2\n", v,
                MAX_THREADS);
        return -1;
      }
    } else if (!strcmp(a, "--runs")) {
      o->runs = atoi(v);
      if (o->runs < 5 || o->runs > 10000) {
        fprintf(stderr, "net: --runs %s: 5 to 10000\n", v);
        return -1;
      }
    } else if (!strcmp(a, "--size")) {
      o->size = atoll(v);
      if (o->size < 32 || o->size > 1024) {
        fprintf(stderr, "net: --size %s: 32 to 1024\n", v);
        return -1;
      }
    } else if (!strcmp(a, "--width")) {
      o->width = atof(v);
      if (!(o->width > 0 && o->width <= 4)) {
        fprintf(stderr, "net: --width %s: above 0, at most 4\n", v);
        return -1;
      }
    } else if (!strcmp(a, "--csv")) {
      o->csv = v;
    } else {
      fprintf(stderr, "net: unknown option '%s'\n", a);
      return -1;
    }
  }
  return 0;
}

/* ---------------- oneDNN's network ---------------- */

typedef struct dn_step {
  dnnl_primitive_t prim;
  int nargs;
  dnnl_exec_arg_t args[5];
} dn_step;

typedef struct dn_net {
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  int nlayers;
  int nsteps[64];
  dn_step steps[64][MAX_STEPS];
  dn_step edge;          /* the image (NCHW) reordered into the first layer's format, or none */
  int has_edge;
  dnnl_memory_t mem[64]; /* per net value (aliases allowed: see own[]) */
  int own[64];           /* mem[v] is v's own (destroyed with the net) */
  dnnl_memory_t extra[256]; /* weights, biases, reorder targets, the user image */
  int nextra;
  char impl[64][48];
  char err[256];
} dn_net;

#define DN(call)                                                                                   \
  do {                                                                                             \
    dnnl_status_t st_ = (call);                                                                    \
    if (st_ != dnnl_success) {                                                                     \
      snprintf(d->err, sizeof d->err, "%s: %s: status %d", L->name, #call, (int)st_);             \
      return -1;                                                                                   \
    }                                                                                              \
  } while (0)

static dnnl_memory_t keep(dn_net *d, dnnl_memory_t m) {
  if (d->nextra < 256) d->extra[d->nextra++] = m;
  return m;
}

static int add_step(dn_net *d, int li, dnnl_primitive_t p, int nargs, const dnnl_exec_arg_t *a) {
  if (d->nsteps[li] >= MAX_STEPS) return -1;
  dn_step *s = &d->steps[li][d->nsteps[li]++];
  s->prim = p, s->nargs = nargs;
  memcpy(s->args, a, sizeof *a * (size_t)nargs);
  return 0;
}

/* runs a reorder once (weights) or, with li >= 0, adds it as a step of layer li */
static int reorder(dn_net *d, const net_layer *L, int li, dnnl_memory_t src, dnnl_memory_t dst) {
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
  if (li >= 0) return add_step(d, li, r, 2, a);
  st = dnnl_primitive_execute(r, d->strm, 2, a);
  if (st == dnnl_success) st = dnnl_stream_wait(d->strm);
  dnnl_primitive_destroy(r);
  DN(st);
  return 0;
}

/* user memory of the given plain format over data (weights, bias) */
static int user_mem(dn_net *d, const net_layer *L, int nd, const dnnl_dims_t dims,
                    dnnl_format_tag_t tag, void *data, dnnl_memory_t *out) {
  dnnl_memory_desc_t md;
  DN(dnnl_memory_desc_init_by_tag(&md, nd, dims, dnnl_f32, tag));
  DN(dnnl_memory_create(out, &md, d->eng, data));
  keep(d, *out);
  return 0;
}

/* the source of layer li: value v's memory, reordered into want (adding the step) if the
 * primitive chose another format */
static int source(dn_net *d, const net_layer *L, int li, int v, const dnnl_memory_desc_t *want,
                  dnnl_memory_t *out) {
  const dnnl_memory_desc_t *have;
  DN(dnnl_memory_get_memory_desc(d->mem[v], &have));
  if (dnnl_memory_desc_equal(have, want)) return *out = d->mem[v], 0;
  DN(dnnl_memory_create(out, want, d->eng, DNNL_MEMORY_ALLOCATE));
  keep(d, *out);
  return reorder(d, L, li, d->mem[v], *out);
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

static int pd_finish(dn_net *d, const net_layer *L, int li, dnnl_primitive_desc_t pd,
                     dnnl_primitive_t *prim) {
  const char *impl = NULL;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  snprintf(d->impl[li], sizeof d->impl[li], "%s", impl ? impl : "?");
  dnnl_status_t st = dnnl_primitive_create(prim, pd);
  DN(st);
  return 0;
}

static int dn_conv(dn_net *d, const net *n, int li) {
  const net_layer *L = &n->layers[li];
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
  dnnl_convolution_desc_t cd;
  DN(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                        &src_any, &wei_any, &bias_md, &dst_md, str, pad, pad));
  dnnl_post_ops_t po;
  dnnl_primitive_attr_t attr;
  DN(dnnl_post_ops_create(&po));
  if (L->res >= 0) DN(dnnl_post_ops_append_sum(po, 1.0f));
  if (p->epi.act == TOPI_ACT_RELU) DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0, 0));
  if (p->epi.act == TOPI_ACT_RELU6)
    DN(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0.0f, 6.0f));
  DN(dnnl_primitive_attr_create(&attr));
  DN(dnnl_primitive_attr_set_post_ops(attr, po));
  dnnl_primitive_desc_t pd;
  dnnl_status_t st = dnnl_primitive_desc_create(&pd, &cd, attr, d->eng, NULL);
  dnnl_primitive_attr_destroy(attr), dnnl_post_ops_destroy(po);
  DN(st);
  const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  dnnl_memory_t src, wei, wu, bias, dst;
  dnnl_primitive_t prim;
  if (source(d, L, li, L->in, smd, &src) ||
      user_mem(d, L, dw ? 5 : 4, dw ? gwd : wd, dw ? dnnl_goihw : dnnl_oihw, L->w, &wu) ||
      user_mem(d, L, 1, bd, dnnl_x, L->b, &bias) || pd_finish(d, L, li, pd, &prim)) {
    dnnl_primitive_desc_destroy(pd);
    return -1;
  }
  st = dnnl_memory_create(&wei, wmd, d->eng, DNNL_MEMORY_ALLOCATE);
  if (st == dnnl_success && !in_place) st = dnnl_memory_create(&dst, dmd, d->eng, DNNL_MEMORY_ALLOCATE);
  dnnl_primitive_desc_destroy(pd);
  DN(st);
  keep(d, wei);
  if (reorder(d, L, -1, wu, wei)) return -1;
  if (in_place) dst = d->mem[L->res];
  else d->own[L->out] = 1;
  d->mem[L->out] = dst;
  dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_BIAS, bias},
                          {DNNL_ARG_DST, dst}};
  return add_step(d, li, prim, 4, a);
}

static int dn_pool(dn_net *d, const net *n, int li) {
  const net_layer *L = &n->layers[li];
  const topi_pool *p = &L->pool;
  const net_value *y = &n->values[L->out];
  int global = L->op == NET_GPOOL;
  dnnl_dims_t dd, str = {global ? 1 : p->stride_h, global ? 1 : p->stride_w};
  dnnl_dims_t ker = {global ? p->h : p->kh, global ? p->w : p->kw};
  dnnl_dims_t pad = {global ? 0 : p->pad_h, global ? 0 : p->pad_w};
  vdims(y, dd);
  const dnnl_memory_desc_t *smd;
  dnnl_memory_desc_t dst_any;
  DN(dnnl_memory_get_memory_desc(d->mem[L->in], &smd));
  DN(dnnl_memory_desc_init_by_tag(&dst_any, 4, dd, dnnl_f32, dnnl_format_tag_any));
  dnnl_pooling_desc_t pdsc;
  DN(dnnl_pooling_forward_desc_init(&pdsc, dnnl_forward_inference,
                                    global ? dnnl_pooling_avg_exclude_padding : dnnl_pooling_max,
                                    smd, &dst_any, str, ker, pad, pad));
  dnnl_primitive_desc_t pd;
  DN(dnnl_primitive_desc_create(&pd, &pdsc, NULL, d->eng, NULL));
  dnnl_primitive_t prim;
  dnnl_memory_t dst;
  if (pd_finish(d, L, li, pd, &prim)) {
    dnnl_primitive_desc_destroy(pd);
    return -1;
  }
  dnnl_status_t st = dnnl_memory_create(&dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                                        d->eng, DNNL_MEMORY_ALLOCATE);
  dnnl_primitive_desc_destroy(pd);
  DN(st);
  d->mem[L->out] = dst, d->own[L->out] = 1;
  dnnl_exec_arg_t a[2] = {{DNNL_ARG_SRC, d->mem[L->in]}, {DNNL_ARG_DST, dst}};
  return add_step(d, li, prim, 2, a);
}

static int dn_fc(dn_net *d, const net *n, int li) {
  const net_layer *L = &n->layers[li];
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
  if (user_mem(d, L, 4, wd, dnnl_oihw, L->w, &wu) || user_mem(d, L, 1, bd, dnnl_x, L->b, &bias) ||
      pd_finish(d, L, li, pd, &prim)) {
    dnnl_primitive_desc_destroy(pd);
    return -1;
  }
  dnnl_status_t st = dnnl_memory_create(
      &wei, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), d->eng, DNNL_MEMORY_ALLOCATE);
  dnnl_primitive_desc_destroy(pd);
  DN(st);
  keep(d, wei);
  if (reorder(d, L, -1, wu, wei)) return -1;
  DN(dnnl_memory_create(&dst, &dst_md, d->eng, DNNL_MEMORY_ALLOCATE));
  d->mem[L->out] = dst, d->own[L->out] = 1;
  dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, d->mem[L->in]}, {DNNL_ARG_WEIGHTS, wei},
                          {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}};
  return add_step(d, li, prim, 4, a);
}

static int dn_softmax(dn_net *d, const net *n, int li) {
  const net_layer *L = &n->layers[li];
  const dnnl_memory_desc_t *md;
  DN(dnnl_memory_get_memory_desc(d->mem[L->in], &md));
  dnnl_softmax_desc_t sd;
  DN(dnnl_softmax_forward_desc_init(&sd, dnnl_forward_inference, md, 1));
  dnnl_primitive_desc_t pd;
  DN(dnnl_primitive_desc_create(&pd, &sd, NULL, d->eng, NULL));
  dnnl_primitive_t prim;
  dnnl_memory_t dst;
  int rc = pd_finish(d, L, li, pd, &prim);
  dnnl_primitive_desc_destroy(pd);
  if (rc) return -1;
  DN(dnnl_memory_create(&dst, md, d->eng, DNNL_MEMORY_ALLOCATE));
  d->mem[L->out] = dst, d->own[L->out] = 1;
  dnnl_exec_arg_t a[2] = {{DNNL_ARG_SRC, d->mem[L->in]}, {DNNL_ARG_DST, dst}};
  return add_step(d, li, prim, 2, a);
}

static void dn_free(dn_net *d) {
  if (d->has_edge) dnnl_primitive_destroy(d->edge.prim);
  for (int i = 0; i < d->nlayers; i++)
    for (int s = 0; s < d->nsteps[i]; s++) dnnl_primitive_destroy(d->steps[i][s].prim);
  for (int v = 0; v < 64; v++)
    if (d->own[v] && d->mem[v]) dnnl_memory_destroy(d->mem[v]);
  for (int i = 0; i < d->nextra; i++) dnnl_memory_destroy(d->extra[i]);
  if (d->strm) dnnl_stream_destroy(d->strm);
  if (d->eng) dnnl_engine_destroy(d->eng);
  memset(d, 0, sizeof *d);
}

/* oneDNN's network for tec's layer list n, reading the NCHW image at `image`. */
static int dn_build(dn_net *d, const net *n, float *image) {
  memset(d, 0, sizeof *d);
  const net_layer *L = &n->layers[0];
  DN(dnnl_engine_create(&d->eng, dnnl_cpu, 0));
  DN(dnnl_stream_create(&d->strm, d->eng, dnnl_stream_default_flags));
  d->nlayers = n->nlayers;
  dnnl_dims_t id;
  vdims(&n->values[0], id);
  if (user_mem(d, L, 4, id, dnnl_nchw, image, &d->mem[0])) return -1;
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
static int dn_run(dn_net *d, double *secs) {
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

static const float *dn_logits(dn_net *d, int v) {
  void *h = NULL;
  dnnl_memory_get_data_handle(d->mem[v], &h);
  return h;
}

/* ---------------- --prepadded: what a padded layer costs without its pad copy ----------------
 * A convolution with padding p whose template copies its input into a zero-bordered buffer
 * first (conv2d_nchwc's pad_copy) is timed again as the same layer declared over an input that
 * already has the border (h + 2p, w + 2p, padding 0): same output, same arithmetic, no copy and
 * no border test, which is what a producer writing into the consumer's padded buffer would
 * give. Layers without padding, or whose input is not blocked, get no variant. */

typedef struct prepad {
  int on[64];
  tec_ctx *ctx;
  tec_module *mod;
  DLTensor t[64][5];
  DLTensor *args[64][5];
  int64_t shape[64][5][5];
  int nargs[64];
} prepad;

static int prepad_build(prepad *pp, const net *n) {
  memset(pp, 0, sizeof *pp);
  if (!(pp->ctx = tec_ctx_new())) return -1;
  lower_func *fs[64];
  int nf = 0;
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    const topi_conv2d *p = &L->conv;
    if (L->op != NET_CONV || !(p->pad_h || p->pad_w) || p->in_layout.kind != TOPI_NCHWC) continue;
    topi_conv2d q = *p;
    q.h += 2 * p->pad_h, q.w += 2 * p->pad_w, q.pad_h = q.pad_w = 0;
    topi_op op;
    const topi_template *t = topi_template_find(L->tmpl);
    if (!t || topi_instantiate(pp->ctx, t, &q, NULL, &op) ||
        !(fs[nf] = tec_lower(op.sched, L->name, op.nargs, op.args))) {
      fprintf(stderr, "net: --prepadded: %s: %s\n", L->name, tec_ctx_error(pp->ctx));
      return -1;
    }
    nf++, pp->on[i] = 1;
    /* arguments: data (padded), the layer's own weights, bias, residual, out */
    int64_t cb = (q.c_in + p->in_layout.block - 1) / p->in_layout.block;
    int64_t xs[5] = {q.n, cb, q.h, q.w, p->in_layout.block};
    DLTensor x;
    if (tec_dl_alloc(&x, TEC_F32, 5, xs)) return -1;
    memset(x.data, 0, sizeof(float) * (size_t)tec_dl_numel(&x));
    pp->nargs[i] = L->nargs;
    for (int k = 0; k < L->nargs; k++) {
      pp->t[i][k] = k ? L->t[k] : x;
      memcpy(pp->shape[i][k], k ? L->shape[k] : xs, sizeof xs);
      pp->t[i][k].shape = pp->shape[i][k];
      pp->args[i][k] = &pp->t[i][k];
    }
  }
  if (!nf) return 0;
  if (!(pp->mod = tec_build(pp->ctx, nf, fs, NULL))) {
    fprintf(stderr, "net: --prepadded: %s\n", tec_ctx_error(pp->ctx));
    return -1;
  }
  for (int i = 0; i < n->nlayers; i++)
    if (pp->on[i] && tec_module_bind_constants(pp->mod, n->layers[i].name, pp->nargs[i], pp->args[i])) {
      fprintf(stderr, "net: --prepadded: %s: %s\n", n->layers[i].name, tec_rt_last_error());
      return -1;
    }
  return 0;
}

/* the variants once each, in the network's order; secs[i] (0 where layer i has none) */
static int prepad_run(prepad *pp, const net *n, double *secs) {
  for (int i = 0; i < n->nlayers; i++) {
    secs[i] = 0;
    if (!pp->on[i]) continue;
    double t0 = bench_now(CLOCK_MONOTONIC);
    if (tec_module_run(pp->mod, n->layers[i].name, pp->nargs[i], pp->args[i])) {
      fprintf(stderr, "net: --prepadded: %s: %s\n", n->layers[i].name, tec_rt_last_error());
      return -1;
    }
    secs[i] = bench_now(CLOCK_MONOTONIC) - t0;
  }
  return 0;
}

/* ---------------- the run ---------------- */

static void set_threads(int t) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", t);
  setenv("TEC_NUM_THREADS", buf, 1);
  tec_rt_set_num_threads(t);
  omp_set_num_threads(t);
}

static void reexec_for_omp(char **argv) {
  if (getenv("GOMP_SPINCOUNT") || getenv("TEC_BENCH_REEXEC")) return;
  setenv("GOMP_SPINCOUNT", "2000", 0);
  setenv("TEC_BENCH_REEXEC", "1", 1);
  execv("/proc/self/exe", argv);
  fprintf(stderr, "net: re-exec with GOMP_SPINCOUNT=2000 failed: %s\n", strerror(errno));
}

int main(int argc, char **argv) {
  reexec_for_omp(argv);
  opts o;
  if (parse_opts(argc, argv, &o)) {
    fprintf(stderr, "usage: net [--net mobilenet|resnet18] [--threads 1,2] [--runs 30] [--layers]\n"
                    "           [--prepadded] [--csv FILE] [--size 224] [--width 1.0]\n");
    return 2;
  }
  char cpu[256];
  bench_cpu_model(cpu, sizeof cpu);
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  const dnnl_version_t *dv = dnnl_version();
  printf("CPU: %s, %ld online CPUs, load %.2f %.2f %.2f; oneDNN %d.%d.%d; GOMP_SPINCOUNT=%s\n",
         cpu, sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1], load[2], dv->major, dv->minor,
         dv->patch, getenv("GOMP_SPINCOUNT") ? getenv("GOMP_SPINCOUNT") : "unset");
  char err[256];
  net *n = net_create(&(net_options){.kind = o.kind, .size = o.size, .width = o.width, .seed = 1},
                      err, sizeof err);
  if (!n) {
    fprintf(stderr, "net: %s\n", err);
    return 1;
  }
  double t0 = bench_now(CLOCK_MONOTONIC);
  if (net_compile(n) || net_prepare(n)) {
    fprintf(stderr, "net: %s\n", net_error(n));
    return 1;
  }
  printf("%s %lldx%lld width %.2f: %d layers, tec compiled and prepared in %.1f s\n",
         o.kind == NET_RESNET18 ? "ResNet-18" : "MobileNet v1", (long long)o.size,
         (long long)o.size, o.width, n->nlayers, bench_now(CLOCK_MONOTONIC) - t0);
  int nl = n->nlayers, R = o.runs;
  float *img = net_image(n, 7);
  /* per run: nl layers, then the edge (oneDNN's input reorder; tec: its image copy, untimed) */
  int nc = nl + 1;
  double *ts = calloc((size_t)(nc * R), sizeof(double)), *ds = calloc((size_t)(nc * R), sizeof(double));
  double *tt = malloc(sizeof(double) * (size_t)R), *dt = malloc(sizeof(double) * (size_t)R);
  double *col = malloc(sizeof(double) * (size_t)R), *tmed = malloc(sizeof(double) * (size_t)nl);
  double *dmed = malloc(sizeof(double) * (size_t)nc);
  /* process CPU seconds per run over wall seconds: the cores each one actually got */
  double *cu = malloc(sizeof(double) * (size_t)(4 * R)); /* per run: tec, oneDNN, callers' */
  if (!cu) return 1;
  double *ps = malloc(sizeof(double) * (size_t)(nl * R)), *pmed = calloc((size_t)nl, sizeof(double));
  if (!img || !ts || !ds || !tt || !dt || !col || !tmed || !dmed || !ps || !pmed) return 1;
  static prepad pp;
  if (o.prepadded && prepad_build(&pp, n)) return 1;
  FILE *csv = NULL;
  if (o.csv && !(csv = fopen(o.csv, "w"))) {
    fprintf(stderr, "net: cannot write %s: %s\n", o.csv, strerror(errno));
    return 1;
  }
  if (csv) fprintf(csv, "net,threads,layer,tec_ms,onednn_ms\n");
  const char *nname = o.kind == NET_RESNET18 ? "resnet18" : "mobilenet";
  int status = 0;
  for (int ti = 0; ti < o.nthreads && !status; ti++) {
    int t = o.threads[ti];
    set_threads(t);
    dn_net *d = calloc(1, sizeof *d);
    if (!d || dn_build(d, n, img)) {
      fprintf(stderr, "net: oneDNN: %s\n", d ? d->err : "out of memory");
      return 1;
    }
    /* once each, checked: the logits (value nvalues - 2) */
    if (net_run(n, img, ts) || dn_run(d, ds)) {
      fprintf(stderr, "net: %s\n", n->err[0] ? net_error(n) : d->err);
      return 1;
    }
    const float *a = net_logits(n), *b = dn_logits(d, n->nvalues - 2);
    double worst = 0, mag = 0;
    for (int64_t k = 0; k < n->opt.classes; k++) {
      worst = fmax(worst, fabs((double)a[k] - b[k]));
      mag = fmax(mag, fabs((double)b[k]));
    }
    double rel = worst / (mag + 1e-30);
    if (!(rel < 1e-3)) {
      printf("CHECK FAILED: %d threads: logits differ, max |tec - oneDNN| / max |oneDNN| = %.3g\n", t, rel);
      status = 1;
    }
    for (int r = 0; r < R; r++) { /* round-robin */
      double s = bench_now(CLOCK_MONOTONIC), c = bench_now(CLOCK_PROCESS_CPUTIME_ID);
      double m = bench_now(CLOCK_THREAD_CPUTIME_ID);
      if (net_run(n, img, ts + (size_t)r * (size_t)nc)) return 1;
      tt[r] = bench_now(CLOCK_MONOTONIC) - s;
      cu[r] = (bench_now(CLOCK_PROCESS_CPUTIME_ID) - c) / tt[r];
      cu[2 * R + r] = (bench_now(CLOCK_THREAD_CPUTIME_ID) - m) / tt[r];
      s = bench_now(CLOCK_MONOTONIC), c = bench_now(CLOCK_PROCESS_CPUTIME_ID);
      m = bench_now(CLOCK_THREAD_CPUTIME_ID);
      if (dn_run(d, ds + (size_t)r * (size_t)nc)) return 1;
      dt[r] = bench_now(CLOCK_MONOTONIC) - s;
      cu[R + r] = (bench_now(CLOCK_PROCESS_CPUTIME_ID) - c) / dt[r];
      cu[3 * R + r] = (bench_now(CLOCK_THREAD_CPUTIME_ID) - m) / dt[r];
      if (o.prepadded && prepad_run(&pp, n, ps + (size_t)r * (size_t)nl)) return 1;
    }
    double tconv = 0, dconv = 0;
    for (int i = 0; i < nl; i++) {
      for (int r = 0; r < R; r++) col[r] = ts[(size_t)r * (size_t)nc + (size_t)i];
      tmed[i] = bench_median(col, R);
      for (int r = 0; r < R; r++) col[r] = ds[(size_t)r * (size_t)nc + (size_t)i];
      dmed[i] = bench_median(col, R);
      if (o.prepadded && pp.on[i]) {
        for (int r = 0; r < R; r++) col[r] = ps[(size_t)r * (size_t)nl + (size_t)i];
        pmed[i] = bench_median(col, R);
      }
      if (n->layers[i].op == NET_CONV) tconv += tmed[i], dconv += dmed[i];
      if (csv) fprintf(csv, "%s,%d,%s,%.4f,%.4f\n", nname, t, n->layers[i].name, tmed[i] * 1e3, dmed[i] * 1e3);
    }
    for (int r = 0; r < R; r++) col[r] = ds[(size_t)r * (size_t)nc + (size_t)nl];
    double edge = bench_median(col, R);
    double tm = bench_median(tt, R), dm = bench_median(dt, R);
    if (csv) {
      fprintf(csv, "%s,%d,convs,%.4f,%.4f\n", nname, t, tconv * 1e3, dconv * 1e3);
      fprintf(csv, "%s,%d,total,%.4f,%.4f\n", nname, t, tm * 1e3, dm * 1e3);
    }
    printf("\n%d thread%s (%d runs each, round-robin; logits agree to %.1e):\n", t,
           t > 1 ? "s" : "", R, rel);
    if (o.layers) {
      printf("%-16s %-16s %9s %9s %7s  %s\n", "layer", "tec template", "tec ms", "oneDNN ms",
             "ratio", o.prepadded ? "tec prepadded ms  oneDNN impl" : "oneDNN impl");
      for (int i = 0; i < nl; i++) {
        printf("%-16s %-16s %9.3f %9.3f %7.2f  ", n->layers[i].name, n->layers[i].tmpl,
               tmed[i] * 1e3, dmed[i] * 1e3, dmed[i] / tmed[i]);
        if (o.prepadded && pp.on[i]) printf("%16.3f  ", pmed[i] * 1e3);
        else if (o.prepadded) printf("%16s  ", "-");
        printf("%s%s\n", d->impl[i], d->nsteps[i] > 1 ? " (+reorder)" : "");
      }
      printf("%-16s %-16s %9s %9.3f %7s  the NCHW image into %s's format\n", "(input edge)",
             "(memcpy)", "-", edge * 1e3, "", n->layers[0].name);
      if (o.prepadded) {
        double a = 0, b = 0;
        for (int i = 0; i < nl; i++)
          if (pp.on[i]) a += tmed[i], b += pmed[i];
        printf("padded layers: %.3f ms as run, %.3f ms over an input with the border already "
               "there (the copies and border tests: %.3f ms)\n", a * 1e3, b * 1e3, (a - b) * 1e3);
      }
    }
    printf("  %-34s %9s %9s %7s\n", "", "tec ms", "oneDNN ms", "oneDNN/tec");
    printf("  %-34s %9.3f %9.3f %7.2f\n", "convs (sum of the layers' medians)", tconv * 1e3,
           dconv * 1e3, dconv / tconv);
    printf("  %-34s %9.3f %9.3f %7.2f\n", "whole network (median run)", tm * 1e3, dm * 1e3, dm / tm);
    bench_sort(tt, R), bench_sort(dt, R);
    printf("  %-34s %9.3f %9.3f %7.2f\n", "whole network (fastest run)", tt[0] * 1e3, dt[0] * 1e3,
           dt[0] / tt[0]);
    printf("  %-34s %9.2f %9.2f\n", "cores used (process CPU / wall)", bench_median(cu, R),
           bench_median(cu + R, R));
    printf("  %-34s %9.2f %9.2f\n", "  of which the calling thread's", bench_median(cu + 2 * R, R),
           bench_median(cu + 3 * R, R));
    dn_free(d);
    free(d);
  }
  if (csv) fclose(csv);
  getloadavg(load, 3);
  printf("load at the end %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  for (int i = 0; i < nl; i++)
    if (pp.on[i]) tec_dl_free(&pp.t[i][0]);
  if (pp.mod) tec_module_free(pp.mod);
  tec_ctx_free(pp.ctx);
  free(ps), free(pmed), free(cu);
  free(img), free(ts), free(ds), free(tt), free(dt), free(col), free(tmed), free(dmed);
  net_free(n);
  return status;
}

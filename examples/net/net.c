/* net.c — MobileNet v1 and ResNet-18 as lists of topi layers (see net.h): building the layer
 * list with seeded weights, compiling every layer into one module (each on its template's
 * default config, or on the best tuning record of its workload), packing the weights once,
 * and running the layers in order with a per-layer clock.
 *
 *   MobileNet v1: conv 3x3/2 (relu6), 13 x [depthwise 3x3/s (relu6), pointwise 1x1 (relu6)],
 *                 global average pool, fully connected, softmax
 *   ResNet-18:    conv 7x7/2 (relu), max pool 3x3/2, 4 stages x 2 basic blocks [conv 3x3/s
 *                 (relu), conv 3x3 + residual (relu); a 1x1/s projection where the shape
 *                 changes], global average pool, fully connected, softmax
 *
 * Batch norm is taken as folded into the convolutions' weights and biases (inference). */
#include "net.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tec/tune.h"
#include "../example_args.h"

#define NET_MAX 64

static int fail(net *n, const char *fmt, const char *a, const char *b) {
  snprintf(n->err, sizeof n->err, fmt, a, b);
  return -1;
}

/* ---- the seeded generator ---- */

static uint32_t next(uint32_t *s) {
  uint32_t x = *s;
  x ^= x << 13, x ^= x >> 17, x ^= x << 5;
  return *s = x;
}
/* uniform in [-a, a) */
static float uni(uint32_t *s, double a) {
  return (float)(a * ((double)(next(s) >> 8) / 8388608.0 - 1.0));
}
/* count values in a 64-byte aligned block (the generated code's alignment rule) */
static float *weights(uint32_t *s, int64_t count, double a) {
  float *w = aligned_alloc(64, (sizeof(float) * (size_t)count + 63) / 64 * 64);
  if (w)
    for (int64_t i = 0; i < count; i++) w[i] = uni(s, a);
  return w;
}

/* ---- building the layer list ---- */

typedef struct builder {
  net *n;
  uint32_t rng;
  topi_layout packed;
  int bad;
} builder;

static int value(builder *b, int64_t c, int64_t h, int64_t w, topi_layout l) {
  net *n = b->n;
  if (n->nvalues >= NET_MAX) return b->bad = 1, 0;
  n->values[n->nvalues] = (net_value){n->opt.batch, c, h, w, l, NULL};
  return n->nvalues++;
}

static net_layer *layer(builder *b, net_op op, const char *tmpl, const char *name, int in) {
  net *n = b->n;
  if (n->nlayers >= NET_MAX) return b->bad = 1, NULL;
  net_layer *L = &n->layers[n->nlayers++];
  memset(L, 0, sizeof *L);
  snprintf(L->name, sizeof L->name, "%s", name);
  L->op = op, L->tmpl = tmpl, L->in = in, L->res = -1;
  return L;
}

/* A convolution (groups 1 or depthwise) from value in, bias and act fused, plus the residual
 * value res (or -1). Returns the output value. */
static int conv(builder *b, const char *name, int in, int64_t c_out, int64_t k, int64_t s,
                int depthwise, topi_act act, int res) {
  if (b->bad) return 0;
  const net_value *x = &b->n->values[in];
  topi_conv2d p = {.n = x->n, .c_in = x->c, .h = x->h, .w = x->w, .c_out = c_out, .kh = k,
                   .kw = k, .stride_h = s, .stride_w = s, .pad_h = (k - 1) / 2,
                   .pad_w = (k - 1) / 2, .groups = depthwise ? x->c : 1,
                   .in_layout = x->layout, .out_layout = b->packed,
                   .epi = {.bias = 1, .residual = res >= 0, .act = act}};
  int64_t oh, ow;
  if (topi_conv2d_out_hw(NULL, &p, &oh, &ow)) return b->bad = 1, 0;
  const char *tmpl = depthwise ? "depthwise_nchwc" : "conv2d_nchwc";
  if (!b->n->opt.direct) { /* the rule table's template for this layer */
    tec_ctx *c = tec_ctx_new();
    const topi_template *t = NULL;
    if (!c || topi_conv2d_pick(c, &p, NULL, &t, NULL) != 0) b->bad = 1;
    else tmpl = t->name;
    tec_ctx_free(c);
    if (b->bad) return 0;
  }
  net_layer *L = layer(b, NET_CONV, tmpl, name, in);
  if (!L) return 0;
  L->conv = p, L->res = res;
  int64_t fan_in = (x->c / p.groups) * k * k;
  /* He-uniform: the activations keep their scale through relu */
  L->w = weights(&b->rng, c_out * (x->c / p.groups) * k * k, sqrt(6.0 / (double)fan_in));
  L->b = weights(&b->rng, c_out, 0.1);
  if (!L->w || !L->b) b->bad = 1;
  return L->out = value(b, c_out, oh, ow, b->packed);
}

static int max_pool(builder *b, const char *name, int in, int64_t k, int64_t s, int64_t pad) {
  if (b->bad) return 0;
  const net_value *x = &b->n->values[in];
  net_layer *L = layer(b, NET_POOL, "pool2d", name, in);
  if (!L) return 0;
  L->pool = (topi_pool){.n = x->n, .c = x->c, .h = x->h, .w = x->w, .kh = k, .kw = k,
                        .stride_h = s, .stride_w = s, .pad_h = pad, .pad_w = pad,
                        .mode = TOPI_POOL_MAX, .in_layout = x->layout, .out_layout = b->packed};
  int64_t oh, ow;
  if (topi_pool_out_hw(NULL, &L->pool, &oh, &ow)) return b->bad = 1, 0;
  return L->out = value(b, x->c, oh, ow, b->packed);
}

/* global average pool (packed -> NCHW [n][c][1][1]), fully connected, softmax */
static void head(builder *b, int in) {
  if (b->bad) return;
  net *n = b->n;
  const net_value *x = &n->values[in];
  int64_t c = x->c, classes = n->opt.classes;
  net_layer *L = layer(b, NET_GPOOL, "global_pool", "avgpool", in);
  if (!L) return;
  L->pool = (topi_pool){.n = x->n, .c = c, .h = x->h, .w = x->w, .mode = TOPI_POOL_AVG,
                        .in_layout = x->layout, .out_layout = {.kind = TOPI_NCHW, .block = 0}};
  int pooled = L->out = value(b, c, 1, 1, (topi_layout){.kind = TOPI_NCHW, .block = 0});
  L = layer(b, NET_FC, "dense", "fc", pooled);
  if (!L) return;
  L->fc = (topi_dense){.m = n->opt.batch, .n = classes, .k = c, .b_transposed = 1, .const_b = 1,
                       .epi = {.bias = 1}};
  L->w = weights(&b->rng, classes * c, sqrt(3.0 / (double)c));
  L->b = weights(&b->rng, classes, 0.1);
  if (!L->w || !L->b) b->bad = 1;
  int logits = L->out = value(b, classes, 1, 1, (topi_layout){.kind = TOPI_NCHW, .block = 0});
  L = layer(b, NET_SOFTMAX, "softmax", "softmax", logits);
  if (!L) return;
  L->softmax = (topi_softmax){.m = n->opt.batch, .n = classes};
  L->out = value(b, classes, 1, 1, (topi_layout){.kind = TOPI_NCHW, .block = 0});
}

static int64_t scaled(double width, int64_t c) {
  int64_t v = (int64_t)(c * width + 0.5);
  return v < 1 ? 1 : v;
}

static void mobilenet_v1(builder *b) {
  static const struct { int64_t c, s; } blocks[13] = {
      {64, 1}, {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2}, {512, 1},
      {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
  double a = b->n->opt.width;
  int x = conv(b, "conv1", 0, scaled(a, 32), 3, 2, 0, TOPI_ACT_RELU6, -1);
  char name[32];
  for (int i = 0; i < 13 && !b->bad; i++) {
    snprintf(name, sizeof name, "dw%d", i + 1);
    x = conv(b, name, x, b->n->values[x].c, 3, blocks[i].s, 1, TOPI_ACT_RELU6, -1);
    snprintf(name, sizeof name, "pw%d", i + 1);
    x = conv(b, name, x, scaled(a, blocks[i].c), 1, 1, 0, TOPI_ACT_RELU6, -1);
  }
  head(b, x);
}

static void resnet18(builder *b) {
  double a = b->n->opt.width;
  int x = conv(b, "conv1", 0, scaled(a, 64), 7, 2, 0, TOPI_ACT_RELU, -1);
  x = max_pool(b, "maxpool", x, 3, 2, 1);
  char name[32];
  for (int st = 0; st < 4 && !b->bad; st++)
    for (int blk = 0; blk < 2 && !b->bad; blk++) {
      int64_t c = scaled(a, 64 << st), s = st > 0 && blk == 0 ? 2 : 1;
      int shortcut = x;
      if (s != 1 || b->n->values[x].c != c) {
        snprintf(name, sizeof name, "layer%d_%d_down", st + 1, blk);
        shortcut = conv(b, name, x, c, 1, s, 0, TOPI_ACT_NONE, -1);
      }
      snprintf(name, sizeof name, "layer%d_%d_conv1", st + 1, blk);
      int y = conv(b, name, x, c, 3, s, 0, TOPI_ACT_RELU, -1);
      snprintf(name, sizeof name, "layer%d_%d_conv2", st + 1, blk);
      x = conv(b, name, y, c, 3, 1, 0, TOPI_ACT_RELU, shortcut);
    }
  head(b, x);
}

/* ---- margins: the padding of a convolution's input written once, not per call ---- */

/* 1 if layer L reads and writes activations with margins (topi.h, "Margins"). */
static int honours_margins(const net_layer *L) {
  return L->op == NET_CONV &&
         (!strcmp(L->tmpl, "conv2d_nchwc") || !strcmp(L->tmpl, "depthwise_nchwc"));
}

static int root(int *up, int v) {
  while (up[v] != v) v = up[v] = up[up[v]];
  return v;
}

/* Each activation's margin: the largest padding of the convolutions reading it, when every
 * layer writing or reading it honours margins (else 0). The image (value 0) is the caller's,
 * copied in: none. A residual has its consumer's output layout, so the residual and that
 * output share one margin (grouped: the largest of the group, 0 if any member cannot). The
 * layers' problems then carry their values' layouts. */
static void set_margins(net *n) {
  int up[NET_MAX], ok[NET_MAX];
  int64_t m[NET_MAX];
  for (int v = 0; v < n->nvalues; v++) up[v] = v, ok[v] = v > 0, m[v] = 0;
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    if (!honours_margins(L)) {
      ok[L->in] = ok[L->out] = 0;
      if (L->res >= 0) ok[L->res] = 0;
      continue;
    }
    int64_t pad = L->conv.pad_h > L->conv.pad_w ? L->conv.pad_h : L->conv.pad_w;
    if (pad > m[L->in]) m[L->in] = pad;
    if (L->res >= 0) up[root(up, L->res)] = root(up, L->out);
  }
  for (int v = 0; v < n->nvalues; v++) { /* the group's verdict and margin at its root */
    int r = root(up, v);
    ok[r] = ok[r] && ok[v];
    if (m[v] > m[r]) m[r] = m[v];
  }
  for (int v = 0; v < n->nvalues; v++) {
    int r = root(up, v);
    n->values[v].layout.margin = ok[r] ? m[r] : 0;
  }
  for (int i = 0; i < n->nlayers; i++) {
    net_layer *L = &n->layers[i];
    if (L->op != NET_CONV) continue;
    L->conv.in_layout = n->values[L->in].layout;
    L->conv.out_layout = n->values[L->out].layout;
  }
}

net *net_create(const net_options *o, char *err, size_t errlen) {
  net_options opt = *o;
  if (!opt.batch) opt.batch = 1;
  if (!opt.size) opt.size = 224;
  if (opt.width == 0) opt.width = 1.0;
  if (!opt.classes) opt.classes = 1000;
  if (!opt.block) {
    tec_ctx *c = tec_ctx_new();
    int bits = c ? tec_target_vector_bits(c, NULL) : -1;
    tec_ctx_free(c);
    opt.block = bits >= 128 ? bits / 32 : 4;
  }
  const char *bad = NULL;
  if (opt.kind != NET_MOBILENET_V1 && opt.kind != NET_RESNET18) bad = "unknown network kind";
  else if (opt.batch < 1 || opt.classes < 1 || opt.block < 1 || opt.width <= 0)
    bad = "batch, classes and block must be >= 1 and width > 0";
  else if (opt.size < 32)
    bad = "the input must be at least 32x32 (five stride-2 steps)";
  if (bad) {
    snprintf(err, errlen, "net_create: %s", bad);
    return NULL;
  }
  net *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->opt = opt;
  n->layers = calloc(NET_MAX, sizeof *n->layers);
  n->values = calloc(NET_MAX, sizeof *n->values);
  builder b = {.n = n, .rng = opt.seed ? opt.seed : 1u,
               .packed = {.kind = TOPI_NCHWC, .block = opt.block},
               .bad = !n->layers || !n->values};
  if (!b.bad) {
    value(&b, 3, opt.size, opt.size, (topi_layout){.kind = TOPI_NCHW, .block = 0});
    if (opt.kind == NET_MOBILENET_V1) mobilenet_v1(&b);
    else resnet18(&b);
    if (!b.bad && !opt.no_margins) set_margins(n);
  }
  if (b.bad) {
    snprintf(err, errlen, "net_create: out of memory or more than %d layers", NET_MAX);
    net_free(n);
    return NULL;
  }
  return n;
}

/* ---- compiling, packing, running ---- */

static DLTensor tensor(float *data, int ndim, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device = (DLDevice){kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = (DLDataType){kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

/* Appends an argument of ndim dims (the shape given) over data to L's call. */
static void arg(net_layer *L, float *data, int ndim, const int64_t *shape) {
  int k = L->nargs++;
  memcpy(L->shape[k], shape, sizeof(int64_t) * (size_t)ndim);
  L->t[k] = tensor(data, ndim, L->shape[k]);
  L->args[k] = &L->t[k];
}

/* An activation in its layout's tensor shape: its whole buffer (the margin's ring included). */
static void act_arg(net_layer *L, const net_value *v) {
  int64_t s[5], h = v->h + 2 * v->layout.margin, w = v->w + 2 * v->layout.margin;
  int nd = 4;
  if (v->layout.kind == TOPI_NCHWC) {
    s[0] = v->n, s[1] = (v->c + v->layout.block - 1) / v->layout.block, s[2] = h;
    s[3] = w, s[4] = v->layout.block, nd = 5;
  } else {
    s[0] = v->n, s[1] = v->c, s[2] = h, s[3] = w;
  }
  arg(L, v->data, nd, s);
}

static int64_t numel(const net_value *v) {
  int64_t c = v->c, m = v->layout.margin;
  if (v->layout.kind == TOPI_NCHWC) c = (c + v->layout.block - 1) / v->layout.block * v->layout.block;
  return v->n * c * (v->h + 2 * m) * (v->w + 2 * m);
}

static void make_args(net *n, net_layer *L) {
  const net_value *in = &n->values[L->in], *out = &n->values[L->out];
  L->nargs = 0;
  switch (L->op) {
  case NET_CONV: {
    const topi_conv2d *p = &L->conv;
    act_arg(L, in);
    arg(L, L->w, 4, (int64_t[]){p->c_out, p->c_in / p->groups, p->kh, p->kw});
    arg(L, L->b, 1, (int64_t[]){p->c_out});
    if (L->res >= 0) act_arg(L, &n->values[L->res]);
    act_arg(L, out);
    break;
  }
  case NET_POOL:
  case NET_GPOOL: act_arg(L, in), act_arg(L, out); break;
  case NET_FC:
    arg(L, in->data, 2, (int64_t[]){L->fc.m, L->fc.k});
    arg(L, L->w, 2, (int64_t[]){L->fc.n, L->fc.k});
    arg(L, L->b, 1, (int64_t[]){L->fc.n});
    arg(L, out->data, 2, (int64_t[]){L->fc.m, L->fc.n});
    break;
  case NET_SOFTMAX:
    arg(L, in->data, 2, (int64_t[]){L->softmax.m, L->softmax.n});
    arg(L, out->data, 2, (int64_t[]){L->softmax.m, L->softmax.n});
    break;
  }
}

static const void *problem(const net_layer *L) {
  switch (L->op) {
  case NET_CONV: return &L->conv;
  case NET_POOL:
  case NET_GPOOL: return &L->pool;
  case NET_FC: return &L->fc;
  default: return &L->softmax;
  }
}

/* topi_layout_str's text (the workload's "in=NCHW16c+m1") in buf. */
static const char *layout_str(topi_layout l, char *buf, size_t len) {
  tec_ctx *c = tec_ctx_new();
  snprintf(buf, len, "%s", c ? topi_layout_str(c, l) : "?");
  tec_ctx_free(c);
  return buf;
}

static const char *act_str(topi_act a) {
  return a == TOPI_ACT_RELU ? "relu" : a == TOPI_ACT_RELU6 ? "relu6" : "none";
}

const char *net_layer_shape(const net *n, int i, char *buf, size_t len) {
  const net_layer *L = &n->layers[i];
  char in[24], out[24];
  switch (L->op) {
  case NET_CONV: {
    const topi_conv2d *p = &L->conv;
    snprintf(buf, len, "n=%lld,c=%lld,h=%lld,w=%lld,oc=%lld,kh=%lld,kw=%lld,stride_h=%lld,"
             "stride_w=%lld,pad_h=%lld,pad_w=%lld,dilation_h=%lld,dilation_w=%lld,groups=%lld,"
             "in=%s,out=%s,bias=%d,residual=%d,act=%s",
             (long long)p->n, (long long)p->c_in, (long long)p->h, (long long)p->w,
             (long long)p->c_out, (long long)p->kh, (long long)p->kw, (long long)p->stride_h,
             (long long)p->stride_w, (long long)p->pad_h, (long long)p->pad_w,
             (long long)topi_conv2d_dilation_h(p), (long long)topi_conv2d_dilation_w(p),
             (long long)(p->groups ? p->groups : 1), layout_str(p->in_layout, in, sizeof in),
             layout_str(p->out_layout, out, sizeof out), p->epi.bias != 0, p->epi.residual != 0,
             act_str(p->epi.act));
    break;
  }
  case NET_POOL:
  case NET_GPOOL: {
    const topi_pool *p = &L->pool;
    snprintf(buf, len, "n=%lld,c=%lld,h=%lld,w=%lld,kh=%lld,kw=%lld,stride_h=%lld,stride_w=%lld,"
             "pad_h=%lld,pad_w=%lld,mode=%s,count_include_pad=%d,in=%s,out=%s",
             (long long)p->n, (long long)p->c, (long long)p->h, (long long)p->w, (long long)p->kh,
             (long long)p->kw, (long long)p->stride_h, (long long)p->stride_w, (long long)p->pad_h,
             (long long)p->pad_w, p->mode == TOPI_POOL_MAX ? "max" : "avg",
             p->count_include_pad != 0, layout_str(p->in_layout, in, sizeof in),
             layout_str(p->out_layout, out, sizeof out));
    /* the keys a port from ONNX / TVM adds, only when set (older records keep their text) */
    size_t at = strlen(buf);
    if (p->pad_end_given && at < len)
      at += (size_t)snprintf(buf + at, len - at, ",pad_bottom=%lld,pad_right=%lld",
                             (long long)p->pad_bottom, (long long)p->pad_right);
    if ((p->dilation_h > 1 || p->dilation_w > 1) && at < len)
      at += (size_t)snprintf(buf + at, len - at, ",dilation_h=%lld,dilation_w=%lld",
                             (long long)(p->dilation_h > 1 ? p->dilation_h : 1),
                             (long long)(p->dilation_w > 1 ? p->dilation_w : 1));
    if (p->ceil_mode && at < len) snprintf(buf + at, len - at, ",ceil_mode=1");
    break;
  }
  case NET_FC: {
    const topi_dense *p = &L->fc;
    snprintf(buf, len, "m=%lld,n=%lld,k=%lld,bt=%d,const_b=%d,bias=%d,residual=%d,act=%s",
             (long long)p->m, (long long)p->n, (long long)p->k, p->b_transposed != 0,
             p->const_b != 0, p->epi.bias != 0, p->epi.residual != 0, act_str(p->epi.act));
    break;
  }
  default:
    snprintf(buf, len, "m=%lld,n=%lld", (long long)L->softmax.m, (long long)L->softmax.n);
  }
  return buf;
}

/* With options.records: the file read once up front, its unreadable lines reported on stderr
 * (once, not per layer) and a file that cannot be read refused. 0, or -1 with net_error(). */
static int check_records(net *n, const char *who) {
  if (!n->opt.records) return 0;
  tec_ctx *tmp = tec_ctx_new();
  tune_record *recs;
  int nrec;
  if (!tmp || tune_records_load(tmp, n->opt.records, stderr, &recs, &nrec) != 0) {
    snprintf(n->err, sizeof n->err, "%s: %s", who, tmp ? tec_ctx_error(tmp) : "out of memory");
    tec_ctx_free(tmp);
    return -1;
  }
  tec_ctx_free(tmp);
  return 0;
}

/* Layer i's template scheduled into op in n's ctx for target: the default config
 * (topi_instantiate), or with options.records the best record of the layer's workload for the
 * target (tune_apply_best: a warning naming the workload and the default used when there is
 * none, kept in L->note). 0, or -1 with net_error() ("who: layer NAME: why"). */
static int instantiate(net *n, int i, const char *who, const tec_target *target, topi_op *op) {
  net_layer *L = &n->layers[i];
  const topi_template *t = topi_template_find(L->tmpl);
  if (!t) return fail(n, "%s: no template %s", who, L->tmpl);
  const void *p = problem(L);
  if (!n->opt.records) {
    if (topi_instantiate(n->ctx, t, p, target, op) == 0) return 0;
    snprintf(n->err, sizeof n->err, "%s: layer %s: %s", who, L->name, tec_ctx_error(n->ctx));
    return -1;
  }
  const char *why = NULL;
  tune_space sp;
  topi_decl *d = tec_ctx_alloc(n->ctx, sizeof *d);
  if (!d || !t->applies(n->ctx, p, &why) || t->declare(n->ctx, p, d) ||
      t->space(n->ctx, p, target, &sp)) {
    snprintf(n->err, sizeof n->err, "%s: layer %s: %s", who, L->name,
             why ? why : tec_ctx_error(n->ctx));
    return -1;
  }
  void *cfg = tec_ctx_alloc(n->ctx, sp.config_size);
  tec_ctx *tmp = tec_ctx_new(); /* the records are read into its arena, freed per layer */
  char shape[512];
  const char *warning = NULL;
  int rc = cfg && tmp ? tune_apply_best_for(tmp, n->opt.records, t->name,
                                        net_layer_shape(n, i, shape, sizeof shape), target, &sp,
                                        cfg, &warning, 0)
                      : -1;
  if (rc < 0) {
    snprintf(n->err, sizeof n->err, "%s: layer %s: %s", who, L->name,
             cfg && tmp ? tec_ctx_error(tmp) : "out of memory");
    tec_ctx_free(tmp);
    return -1;
  }
  L->tuned = rc == 1;
  snprintf(L->note, sizeof L->note, "%s", warning ? warning : "");
  if (warning) fprintf(stderr, "%s: layer %s: %s\n", who, L->name, warning);
  tec_ctx_free(tmp);
  const char *cs = tune_config_str(n->ctx, &sp, cfg);
  snprintf(L->config, sizeof L->config, "%s", cs ? cs : "");
  if (t->schedule(d, cfg, target, op) == 0) return 0;
  snprintf(n->err, sizeof n->err, "%s: layer %s: %s", who, L->name, tec_ctx_error(n->ctx));
  return -1;
}

int net_compile(net *n) {
  if (n->mod) return 0;
  tec_ctx_free(n->ctx); /* a failed compile's */
  n->ctx = tec_ctx_new();
  if (!n->ctx) return fail(n, "net_compile: %s%s", "out of memory", "");
  lower_func *funcs[NET_MAX];
  if (check_records(n, "net_compile")) return -1;
  const tec_target *host = tec_target_parse(n->ctx, NULL); /* once for every layer */
  if (!host) return fail(n, "net_compile: %s%s", tec_ctx_error(n->ctx), "");
  for (int i = 0; i < n->nlayers; i++) {
    net_layer *L = &n->layers[i];
    topi_op op;
    if (instantiate(n, i, "net_compile", host, &op)) return -1;
    if (!(funcs[i] = tec_lower(op.sched, L->name, op.nargs, op.args)))
      return fail(n, "net_compile: layer %s: %s", L->name, tec_ctx_error(n->ctx));
  }
  n->mod = tec_build_for(n->ctx, n->nlayers, funcs, host);
  if (!n->mod) return fail(n, "net_compile: %s%s", tec_ctx_error(n->ctx), "");
  for (int v = 0; v < n->nvalues; v++) {
    size_t bytes = ((size_t)numel(&n->values[v]) * sizeof(float) + 63) / 64 * 64;
    n->values[v].data = aligned_alloc(64, bytes);
    if (!n->values[v].data) return fail(n, "net_compile: %s%s", "out of memory", "");
    memset(n->values[v].data, 0, bytes);
  }
  for (int i = 0; i < n->nlayers; i++) make_args(n, &n->layers[i]);
  return 0;
}

int net_lower(net *n, const char *target, lower_func **funcs) {
  if (!n->ctx && !(n->ctx = tec_ctx_new())) return fail(n, "net_lower: %s%s", "out of memory", "");
  if (check_records(n, "net_lower")) return -1;
  const tec_target *tg = tec_target_parse(n->ctx, target); /* once for every layer */
  if (!tg) return fail(n, "net_lower: %s%s", tec_ctx_error(n->ctx), "");
  for (int i = 0; i < n->nlayers; i++) {
    net_layer *L = &n->layers[i];
    topi_op op;
    if (instantiate(n, i, "net_lower", tg, &op)) return -1;
    if (!(funcs[i] = tec_lower(op.sched, L->name, op.nargs, op.args)))
      return fail(n, "net_lower: layer %s: %s", L->name, tec_ctx_error(n->ctx));
  }
  return 0;
}

int64_t net_value_floats(const net *n, int v) { return numel(&n->values[v]); }

int net_prepare(net *n) {
  if (!n->mod) return fail(n, "net_prepare: %s%s", "compile the network first", "");
  for (int i = 0; i < n->nlayers; i++) {
    net_layer *L = &n->layers[i];
    if (tec_module_bind_constants(n->mod, L->name, L->nargs, L->args))
      return fail(n, "net_prepare: layer %s: %s", L->name, tec_rt_last_error());
  }
  return 0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int net_run(net *n, const float *image, double *secs) {
  if (!n->mod) return fail(n, "net_run: %s%s", "compile the network first", "");
  if (!image) return fail(n, "net_run: %s%s", "the image is NULL", "");
  memcpy(n->values[0].data, image, sizeof(float) * (size_t)numel(&n->values[0]));
  for (int i = 0; i < n->nlayers; i++) {
    net_layer *L = &n->layers[i];
    double t0 = secs ? now() : 0;
    if (tec_module_run(n->mod, L->name, L->nargs, L->args))
      return fail(n, "net_run: layer %s: %s", L->name, tec_rt_last_error());
    if (secs) secs[i] = now() - t0;
  }
  return 0;
}

const float *net_probs(const net *n) { return n->values[n->nvalues - 1].data; }
const float *net_logits(const net *n) { return n->values[n->nvalues - 2].data; }

float *net_image(const net *n, unsigned seed) {
  uint32_t s = seed ? seed : 1u;
  return weights(&s, numel(&n->values[0]), 1.0);
}

const char *net_error(const net *n) { return n->err; }

void net_free(net *n) {
  if (!n) return;
  for (int i = 0; n->layers && i < n->nlayers; i++) free(n->layers[i].w), free(n->layers[i].b);
  for (int v = 0; n->values && v < n->nvalues; v++) free(n->values[v].data);
  free(n->layers), free(n->values);
  tec_ctx_free(n->ctx);
  free(n);
}

/* ---- the examples' report ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int k) {
  qsort(v, (size_t)k, sizeof *v, cmp_double);
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

int net_bench(net *n, int iters) {
  if (iters < 1) iters = 1;
  double t0 = now();
  if (net_compile(n)) return -1;
  double t1 = now();
  if (net_prepare(n)) return -1;
  double t2 = now();
  printf("compile %.2f s (%d layers, one module), prepare (weights packed) %.1f ms, %d "
         "thread(s)\n", t1 - t0, n->nlayers, 1e3 * (t2 - t1), tec_rt_get_num_threads());
  float *img = net_image(n, 7);
  double *secs = malloc(sizeof(double) * (size_t)(n->nlayers * iters));
  double *tot = malloc(sizeof(double) * (size_t)iters), *col = malloc(sizeof(double) * (size_t)iters);
  if (!img || !secs || !tot || !col) {
    free(img), free(secs), free(tot), free(col);
    return fail(n, "net_bench: %s%s", "out of memory", "");
  }
  int rc = net_run(n, img, secs); /* warm-up */
  for (int it = 0; it < iters && !rc; it++) {
    double s = now();
    rc = net_run(n, img, secs + (size_t)it * (size_t)n->nlayers);
    tot[it] = now() - s;
  }
  if (!rc) {
    printf("%-18s %-16s %-22s %10s\n", "layer", "template", "output", "median ms");
    double sum = 0;
    for (int i = 0; i < n->nlayers; i++) {
      for (int it = 0; it < iters; it++) col[it] = secs[(size_t)it * (size_t)n->nlayers + (size_t)i];
      double m = median(col, iters);
      sum += m;
      const net_layer *L = &n->layers[i];
      const net_value *o = &n->values[L->out];
      char shape[64];
      snprintf(shape, sizeof shape, "%lldx%lldx%lld %s", (long long)o->c, (long long)o->h,
               (long long)o->w, o->layout.kind == TOPI_NCHWC ? "packed" : "NCHW");
      printf("%-18s %-16s %-22s %10.3f\n", L->name, L->tmpl, shape, 1e3 * m);
    }
    double fastest = tot[0];
    for (int it = 1; it < iters; it++) fastest = tot[it] < fastest ? tot[it] : fastest;
    /* on a loaded machine a run's total collects the preemptions of all its layers: the
     * fastest run and the sum of the layers' medians say more than the median run */
    printf("total: median %.3f ms, fastest %.3f ms of %d runs; the layers' medians sum to "
           "%.3f ms\n", 1e3 * median(tot, iters), 1e3 * fastest, iters, 1e3 * sum);
    const float *p = net_probs(n);
    int64_t classes = n->opt.classes, best[5];
    printf("top-5:");
    for (int k = 0; k < 5 && k < classes; k++) {
      best[k] = -1;
      for (int64_t c = 0; c < classes; c++) {
        int taken = 0;
        for (int j = 0; j < k; j++) taken |= best[j] == c;
        if (!taken && (best[k] < 0 || p[c] > p[best[k]])) best[k] = c;
      }
      printf(" class %lld (%.4f)", (long long)best[k], (double)p[best[k]]);
    }
    printf("\n");
  }
  free(img), free(secs), free(tot), free(col);
  return rc;
}

int net_example_main(net_kind kind, const char *title, int argc, char **argv) {
  int64_t iters = 20, size = 224;
  double width = 1.0;
  ex_opt opts[] = {{"iters", EX_INT, &iters, 1, 1e6, "timed runs of the whole network"},
                   {"size", EX_INT, &size, 8, 4096, "the input image's height and width"},
                   {"width", EX_REAL, &width, 0.0625, 4, "the width multiplier of every layer's channels"}};
  char about[160];
  snprintf(about, sizeof about, "%s, batch 1, fp32: built from tec's templates, checked and timed layer by layer.",
           title);
  int arc = ex_args_parse(about, argc, argv, opts, 3);
  if (arc) return arc == 1 ? 0 : 2;
  net_options o = {.kind = kind, .size = size, .width = width, .seed = 1};
  char err[256];
  net *n = net_create(&o, err, sizeof err);
  if (!n) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  printf("%s: batch 1, fp32, %lldx%lld, width %.2f, packed layout NCHW%lldc, seeded weights\n",
         title, (long long)n->opt.size, (long long)n->opt.size, n->opt.width,
         (long long)n->opt.block);
  int rc = net_bench(n, (int)iters);
  if (rc) fprintf(stderr, "%s\n", net_error(n));
  net_free(n);
  return rc ? 1 : 0;
}

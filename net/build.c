/* build.c — a network's layer list (include/tec/net.h): the input value, one builder per layer
 * kind (each checks what the layer reads — the value exists, its shape and layout are what the
 * layer's template can take, a residual matches the output — and refuses by name), the seeded
 * He-uniform weights kept plain in the layer, the seeded image, and freeing. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net/internal.h"

int net_fail(net *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(n->err, sizeof n->err, fmt, ap);
  va_end(ap);
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

float *net_image(const net *n, unsigned seed) {
  uint32_t s = seed ? seed : 1u;
  return weights(&s, net_value_floats(n, 0), 1.0);
}

/* ---- values and layers ---- */

static const topi_layout nchw = {.kind = TOPI_NCHW, .block = 0};

static int value(net *n, int64_t c, int64_t h, int64_t w, topi_layout l) {
  n->values[n->nvalues] = (net_value){n->opt.batch, c, h, w, l, NULL};
  return n->nvalues++;
}

/* "NCHW16c" or "NCHW" for messages */
static const char *layout_name(topi_layout l, char *buf, size_t len) {
  if (l.kind == TOPI_NCHWC) snprintf(buf, len, "NCHW%lldc", (long long)l.block);
  else snprintf(buf, len, "%s", l.kind == TOPI_NCHW ? "NCHW" : "NHWC");
  return buf;
}

/* Checks a new layer can be added reading value in (and res, unless -1): 0, or -1 with the
 * message ("net_conv: layer 'x': ..."). A -1 input (an earlier refusal) fails quietly. */
static int open_layer(net *n, const char *who, const char *name, int in, int res) {
  if (in == -1 && n->err[0]) return -1;
  if (!name || !*name) return net_fail(n, "%s: a layer needs a name", who);
  if (strlen(name) >= sizeof n->layers[0].name)
    return net_fail(n, "%s: layer name '%s' is longer than %d characters", who, name,
                    (int)sizeof n->layers[0].name - 1);
  if (n->finished)
    return net_fail(n, "%s: layer '%s': the network is already compiled or lowered; add layers "
                       "before net_compile / net_lower", who, name);
  if (n->nlayers >= NET_MAX_LAYERS || n->nvalues >= NET_MAX_LAYERS)
    return net_fail(n, "%s: layer '%s': a network holds at most %d layers and values", who, name,
                    NET_MAX_LAYERS);
  for (int i = 0; i < n->nlayers; i++)
    if (!strcmp(n->layers[i].name, name))
      return net_fail(n, "%s: layer '%s' exists already (layer names are function names: unique)",
                      who, name);
  if (in < 0 || in >= n->nvalues)
    return net_fail(n, "%s: layer '%s' reads value %d; the values are 0..%d", who, name, in,
                    n->nvalues - 1);
  if (res != -1 && (res < 0 || res >= n->nvalues))
    return net_fail(n, "%s: layer '%s': residual value %d; the values are 0..%d (or -1: none)", who,
                    name, res, n->nvalues - 1);
  return 0;
}

static net_layer *layer(net *n, net_op op, const char *tmpl, const char *name, int in) {
  net_layer *L = &n->layers[n->nlayers++];
  memset(L, 0, sizeof *L);
  snprintf(L->name, sizeof L->name, "%s", name);
  L->op = op, L->tmpl = tmpl, L->in = in, L->res = -1;
  return L;
}

/* The layer just added is dropped again (its weights could not be allocated). */
static int drop_layer(net *n, const char *who) {
  net_layer *L = &n->layers[--n->nlayers];
  free(L->w), free(L->b);
  L->w = L->b = NULL;
  return net_fail(n, "%s: layer '%s': out of memory (weights)", who, L->name);
}

int net_conv(net *n, const char *name, int in, int64_t c_out, int64_t k, int64_t s, int depthwise,
             topi_act act, int res) {
  if (open_layer(n, "net_conv", name, in, res)) return -1;
  const net_value *x = &n->values[in];
  topi_layout packed = {.kind = TOPI_NCHWC, .block = n->opt.block};
  if (c_out < 1 || k < 1 || s < 1)
    return net_fail(n, "net_conv: layer '%s': %lld channels, kernel %lld, stride %lld; each must be "
                       ">= 1", name, (long long)c_out, (long long)k, (long long)s);
  if (depthwise && c_out != x->c)
    return net_fail(n, "net_conv: layer '%s' is depthwise: its %lld output channels must be the "
                       "input's %lld", name, (long long)c_out, (long long)x->c);
  if (x->layout.kind == TOPI_NHWC)
    return net_fail(n, "net_conv: layer '%s' reads value %d in NHWC; a convolution reads NCHW or "
                       "NCHW<x>c", name, in);
  topi_conv2d p = {.n = x->n, .c_in = x->c, .h = x->h, .w = x->w, .c_out = c_out, .kh = k,
                   .kw = k, .stride_h = s, .stride_w = s, .pad_h = (k - 1) / 2,
                   .pad_w = (k - 1) / 2, .groups = depthwise ? x->c : 1,
                   .in_layout = x->layout, .out_layout = packed,
                   .epi = {.bias = 1, .residual = res >= 0, .act = act}};
  int64_t oh, ow;
  tec_ctx *c = tec_ctx_new();
  if (!c) return net_fail(n, "net_conv: out of memory");
  if (topi_conv2d_out_hw(c, &p, &oh, &ow)) {
    net_fail(n, "net_conv: layer '%s': %s", name, tec_ctx_error(c));
    return tec_ctx_free(c), -1;
  }
  const char *tmpl = depthwise ? "depthwise_nchwc" : "conv2d_nchwc";
  if (!n->opt.direct) { /* the rule table's template for this layer */
    const topi_template *t = NULL;
    if (topi_conv2d_pick(c, &p, NULL, &t, NULL) != 0) {
      net_fail(n, "net_conv: layer '%s': %s", name, tec_ctx_error(c));
      return tec_ctx_free(c), -1;
    }
    tmpl = t->name;
  }
  tec_ctx_free(c);
  if (res >= 0) {
    const net_value *r = &n->values[res];
    char a[24], b[24];
    if (r->c != c_out || r->h != oh || r->w != ow || r->layout.kind != packed.kind ||
        r->layout.block != packed.block)
      return net_fail(n, "net_conv: layer '%s': residual value %d is %lldx%lldx%lld %s, the output "
                         "is %lldx%lldx%lld %s; a residual must match the output", name, res,
                      (long long)r->c, (long long)r->h, (long long)r->w,
                      layout_name(r->layout, a, sizeof a), (long long)c_out, (long long)oh,
                      (long long)ow, layout_name(packed, b, sizeof b));
  }
  net_layer *L = layer(n, NET_CONV, tmpl, name, in);
  L->conv = p, L->res = res;
  int64_t fan_in = (x->c / p.groups) * k * k;
  /* He-uniform: the activations keep their scale through relu */
  L->w = weights(&n->rng, c_out * (x->c / p.groups) * k * k, sqrt(6.0 / (double)fan_in));
  L->b = weights(&n->rng, c_out, 0.1);
  if (!L->w || !L->b) return drop_layer(n, "net_conv");
  return L->out = value(n, c_out, oh, ow, packed);
}

int net_max_pool(net *n, const char *name, int in, int64_t k, int64_t s, int64_t pad) {
  if (open_layer(n, "net_max_pool", name, in, -1)) return -1;
  const net_value *x = &n->values[in];
  topi_layout packed = {.kind = TOPI_NCHWC, .block = n->opt.block};
  topi_pool p = {.n = x->n, .c = x->c, .h = x->h, .w = x->w, .kh = k, .kw = k, .stride_h = s,
                 .stride_w = s, .pad_h = pad, .pad_w = pad, .mode = TOPI_POOL_MAX,
                 .in_layout = x->layout, .out_layout = packed};
  int64_t oh, ow;
  tec_ctx *c = tec_ctx_new();
  if (!c) return net_fail(n, "net_max_pool: out of memory");
  if (topi_pool_out_hw(c, &p, &oh, &ow)) {
    net_fail(n, "net_max_pool: layer '%s': %s", name, tec_ctx_error(c));
    return tec_ctx_free(c), -1;
  }
  tec_ctx_free(c);
  net_layer *L = layer(n, NET_POOL, "pool2d", name, in);
  L->pool = p;
  return L->out = value(n, x->c, oh, ow, packed);
}

int net_global_pool(net *n, const char *name, int in) {
  if (open_layer(n, "net_global_pool", name, in, -1)) return -1;
  const net_value *x = &n->values[in];
  net_layer *L = layer(n, NET_GPOOL, "global_pool", name, in);
  L->pool = (topi_pool){.n = x->n, .c = x->c, .h = x->h, .w = x->w, .mode = TOPI_POOL_AVG,
                        .in_layout = x->layout, .out_layout = nchw};
  return L->out = value(n, x->c, 1, 1, nchw);
}

/* 0 if value in is NCHW [batch][c][1][1] (what dense and softmax read as [batch][c]) */
static int flat(net *n, const char *who, const char *name, int in) {
  const net_value *x = &n->values[in];
  char l[24];
  if (x->h != 1 || x->w != 1 || x->layout.kind != TOPI_NCHW || x->layout.margin)
    return net_fail(n, "%s: layer '%s' reads value %d as [batch][c], but it is %lldx%lldx%lld %s; it "
                       "must be NCHW [n][c][1][1] (net_global_pool writes that)", who, name, in,
                    (long long)x->c, (long long)x->h, (long long)x->w,
                    layout_name(x->layout, l, sizeof l));
  return 0;
}

int net_dense(net *n, const char *name, int in, int64_t classes) {
  if (open_layer(n, "net_dense", name, in, -1) || flat(n, "net_dense", name, in)) return -1;
  if (classes < 1)
    return net_fail(n, "net_dense: layer '%s': %lld outputs; legal: >= 1", name, (long long)classes);
  int64_t c = n->values[in].c;
  net_layer *L = layer(n, NET_FC, "dense", name, in);
  L->fc = (topi_dense){.m = n->opt.batch, .n = classes, .k = c, .b_transposed = 1, .const_b = 1,
                       .epi = {.bias = 1}};
  L->w = weights(&n->rng, classes * c, sqrt(3.0 / (double)c));
  L->b = weights(&n->rng, classes, 0.1);
  if (!L->w || !L->b) return drop_layer(n, "net_dense");
  return L->out = value(n, classes, 1, 1, nchw);
}

int net_softmax(net *n, const char *name, int in) {
  if (open_layer(n, "net_softmax", name, in, -1) || flat(n, "net_softmax", name, in)) return -1;
  int64_t c = n->values[in].c;
  net_layer *L = layer(n, NET_SOFTMAX, "softmax", name, in);
  L->softmax = (topi_softmax){.m = n->opt.batch, .n = c};
  return L->out = value(n, c, 1, 1, nchw);
}

/* ---- the network ---- */

net *net_new(const net_options *o, int64_t c, int64_t h, int64_t w, char *err, size_t errlen) {
  net_options opt = o ? *o : (net_options){0};
  if (!opt.batch) opt.batch = 1;
  if (!opt.block) {
    tec_ctx *x = tec_ctx_new();
    int bits = x ? tec_target_vector_bits(x, NULL) : -1;
    tec_ctx_free(x);
    opt.block = bits >= 128 ? bits / 32 : 4;
  }
  if (opt.autosched != 0 && opt.autosched != 1) {
    snprintf(err, errlen, "net_new: autosched %d; legal: 0 (the templates) or 1 (the "
             "auto-scheduler)", opt.autosched);
    return NULL;
  }
  if (opt.autosched) opt.direct = 1; /* the direct templates' declarations */
  if (opt.batch < 1 || opt.block < 1 || c < 1 || h < 1 || w < 1) {
    snprintf(err, errlen, "net_new: batch %lld, block %lld, input %lldx%lldx%lld; each must be >= 1",
             (long long)opt.batch, (long long)opt.block, (long long)c, (long long)h, (long long)w);
    return NULL;
  }
  net *n = calloc(1, sizeof *n);
  if (n) {
    n->opt = opt;
    n->rng = opt.seed ? opt.seed : 1u;
    n->layers = calloc(NET_MAX_LAYERS, sizeof *n->layers);
    n->values = calloc(NET_MAX_LAYERS, sizeof *n->values);
  }
  if (!n || !n->layers || !n->values) {
    snprintf(err, errlen, "net_new: out of memory");
    net_free(n);
    return NULL;
  }
  value(n, c, h, w, nchw);
  return n;
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

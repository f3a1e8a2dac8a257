/* driver_params.c — the `tec` command's --shape text: "key=value" pairs (commas or spaces),
 * read into a topi problem (conv2d, layout, dense) with every key checked, or handed to a
 * generator (tec_gen_int / tec_gen_str, unread keys refused afterwards). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/driver_internal.h"

int drv_params_parse(tec_ctx *ctx, const char *text, tec_gen_params *p) {
  memset(p, 0, sizeof *p);
  p->ctx = ctx;
  const char *s = text ? text : "";
  while (*s) {
    while (*s == ',' || *s == ' ') s++;
    if (!*s) break;
    size_t len = strcspn(s, ", ");
    const char *eq = memchr(s, '=', len);
    if (!eq || eq == s || eq == s + len - 1) {
      tec_ctx_set_error(ctx, "--shape: '%.*s' is not key=value (e.g. --shape n=1,c=16,h=14,w=14)",
                        (int)len, s);
      return -1;
    }
    if (p->n == DRV_MAX_PARAMS) {
      tec_ctx_set_error(ctx, "--shape: more than %d key=value pairs", DRV_MAX_PARAMS);
      return -1;
    }
    p->key[p->n] = tec_ctx_printf(ctx, "%.*s", (int)(eq - s), s);
    p->val[p->n] = tec_ctx_printf(ctx, "%.*s", (int)(s + len - eq - 1), eq + 1);
    for (int i = 0; i < p->n; i++)
      if (!strcmp(p->key[i], p->key[p->n])) {
        tec_ctx_set_error(ctx, "--shape: '%s' given twice", p->key[i]);
        return -1;
      }
    p->n++;
    s += len;
  }
  return 0;
}

static int find(const tec_gen_params *p, const char *key) {
  tec_gen_params *q = (tec_gen_params *)p;
  int seen = 0;
  for (int i = 0; i < q->nasked; i++) seen |= !strcmp(q->asked[i], key);
  if (!seen && q->nasked < DRV_MAX_PARAMS) q->asked[q->nasked++] = tec_ctx_strdup(q->ctx, key);
  for (int i = 0; i < p->n; i++)
    if (!strcmp(p->key[i], key)) return i;
  return -1;
}

int64_t tec_gen_int(const tec_gen_params *p, const char *key, int64_t dflt) {
  tec_gen_params *q = (tec_gen_params *)p;
  int i = find(p, key);
  if (i < 0) return dflt;
  q->used[i] = 1;
  char *end;
  long long v = strtoll(p->val[i], &end, 10);
  if (*end || end == p->val[i]) {
    if (!q->bad) q->bad = tec_ctx_printf(p->ctx, "--shape: %s=%s is not an integer", key, p->val[i]);
    return dflt;
  }
  return v;
}

const char *tec_gen_str(const tec_gen_params *p, const char *key, const char *dflt) {
  int i = find(p, key);
  if (i < 0) return dflt;
  ((tec_gen_params *)p)->used[i] = 1;
  return p->val[i];
}

const char *tec_gen_target(const tec_gen_params *p) { return p->target; }

int drv_params_finish(const tec_gen_params *p, const char *legal) {
  if (p->bad) return tec_ctx_set_error(p->ctx, "%s", p->bad), -1;
  if (!legal) { /* a generator: the keys it asked for */
    char *l = tec_ctx_alloc(p->ctx, 1024);
    if (!l) return -1;
    l[0] = 0;
    for (int i = 0; i < p->nasked; i++)
      snprintf(l + strlen(l), 1024 - strlen(l), "%s%s", i ? " " : "", p->asked[i]);
    legal = p->nasked ? l : "none";
  }
  for (int i = 0; i < p->n; i++)
    if (!p->used[i]) {
      tec_ctx_set_error(p->ctx, "--shape: unknown key '%s'%s%s", p->key[i],
                        legal ? "; the keys are " : "", legal ? legal : "");
      return -1;
    }
  return 0;
}

static int layout(const tec_gen_params *p, const char *key, const char *dflt, topi_layout *out) {
  const char *s = tec_gen_str(p, key, dflt);
  if (topi_layout_parse(p->ctx, s, out) != 0) {
    const char *why = tec_ctx_strdup(p->ctx, tec_ctx_error(p->ctx));
    tec_ctx_clear_error(p->ctx);
    tec_ctx_set_error(p->ctx, "--shape: %s=%s: %s", key, s, why ? why : "");
    return -1;
  }
  return 0;
}

static int activation(const tec_gen_params *p, topi_act *act) {
  const char *a = tec_gen_str(p, "act", "none");
  if (!strcmp(a, "none")) *act = TOPI_ACT_NONE;
  else if (!strcmp(a, "relu")) *act = TOPI_ACT_RELU;
  else if (!strcmp(a, "relu6")) *act = TOPI_ACT_RELU6;
  else return tec_ctx_set_error(p->ctx, "--shape: act=%s; the activations are none, relu, relu6", a), -1;
  return 0;
}

static int epilogue(const tec_gen_params *p, topi_epilogue *e) {
  e->bias = tec_gen_int(p, "bias", 0) != 0;
  e->residual = tec_gen_int(p, "residual", 0) != 0;
  return activation(p, &e->act);
}

#define CONV_KEYS                                                                          \
  "n c h w oc kh kw (k: both) stride (stride_h stride_w) pad (pad_h pad_w) dilation "      \
  "(dilation_h dilation_w) groups in out bias residual act"
#define LAYOUT_KEYS "n c h w from to"
#define DENSE_KEYS "m n k bt const_b bias residual act"
#define DW_PW_KEYS "n c h w oc k stride layout out bias act"
#define POOL_KEYS                                                                          \
  "n c h w kh kw (k: both) stride (stride_h stride_w) pad (pad_h pad_w) mode "              \
  "count_include_pad in out"
#define SOFTMAX_KEYS "m n"
#define ELTWISE_KEYS "n c h w layout act"

const char *drv_problem_keys(const topi_template *t) {
  switch (t->problem_kind) {
  case TOPI_PROBLEM_CONV2D: return CONV_KEYS;
  case TOPI_PROBLEM_LAYOUT: return LAYOUT_KEYS;
  case TOPI_PROBLEM_DW_PW: return DW_PW_KEYS;
  case TOPI_PROBLEM_POOL: return POOL_KEYS;
  case TOPI_PROBLEM_SOFTMAX: return SOFTMAX_KEYS;
  case TOPI_PROBLEM_ELTWISE: return ELTWISE_KEYS;
  case TOPI_PROBLEM_DENSE: return DENSE_KEYS;
  }
  return DENSE_KEYS;
}

/* Sizes not given default to 1 (n) or are required (0 here: the template refuses them). */
int drv_problem_parse(const topi_template *t, const tec_gen_params *p, drv_problem *out) {
  memset(out, 0, sizeof *out);
  switch (t->problem_kind) {
  case TOPI_PROBLEM_CONV2D: {
    topi_conv2d *c = &out->conv;
    c->n = tec_gen_int(p, "n", 1);
    c->c_in = tec_gen_int(p, "c", 0);
    c->h = tec_gen_int(p, "h", 0);
    c->w = tec_gen_int(p, "w", 0);
    int64_t k = tec_gen_int(p, "k", 1), s = tec_gen_int(p, "stride", 1), pad = tec_gen_int(p, "pad", 0);
    int64_t dil = tec_gen_int(p, "dilation", 1);
    c->kh = tec_gen_int(p, "kh", k);
    c->kw = tec_gen_int(p, "kw", k);
    c->stride_h = tec_gen_int(p, "stride_h", s);
    c->stride_w = tec_gen_int(p, "stride_w", s);
    c->pad_h = tec_gen_int(p, "pad_h", pad);
    c->pad_w = tec_gen_int(p, "pad_w", pad);
    c->dilation_h = tec_gen_int(p, "dilation_h", dil);
    c->dilation_w = tec_gen_int(p, "dilation_w", dil);
    c->groups = tec_gen_int(p, "groups", 1);
    c->c_out = tec_gen_int(p, "oc", c->groups > 1 ? c->c_in : 0);
    if (layout(p, "in", "NCHW", &c->in_layout) || layout(p, "out", "NCHW", &c->out_layout) ||
        epilogue(p, &c->epi))
      return -1;
    break;
  }
  case TOPI_PROBLEM_DW_PW: { /* MobileNet's block: depthwise k x k (pad k/2), then 1x1 to oc;
                               bias and act on both */
    topi_dw_pw *b = &out->dw_pw;
    topi_conv2d *dw = &b->dw, *pw = &b->pw;
    dw->n = tec_gen_int(p, "n", 1);
    dw->c_in = dw->c_out = dw->groups = tec_gen_int(p, "c", 0);
    dw->h = tec_gen_int(p, "h", 0);
    dw->w = tec_gen_int(p, "w", 0);
    dw->kh = dw->kw = tec_gen_int(p, "k", 3);
    dw->stride_h = dw->stride_w = tec_gen_int(p, "stride", 1);
    dw->pad_h = dw->pad_w = dw->kh / 2;
    if (layout(p, "layout", "NCHW16c", &dw->in_layout) ||
        layout(p, "out", "NCHW16c", &pw->out_layout) || epilogue(p, &dw->epi))
      return -1;
    dw->out_layout = pw->in_layout = dw->in_layout;
    dw->out_layout.margin = pw->in_layout.margin = 0; /* the intermediate: no margin */
    int64_t oh = 0, ow = 0;
    topi_conv2d_out_hw(NULL, dw, &oh, &ow); /* a bad size: the template says which */
    *pw = (topi_conv2d){.n = dw->n, .c_in = dw->c_in, .h = oh, .w = ow,
                        .c_out = tec_gen_int(p, "oc", 0), .kh = 1, .kw = 1, .stride_h = 1,
                        .stride_w = 1, .groups = 1, .in_layout = dw->out_layout,
                        .out_layout = pw->out_layout, .epi = dw->epi};
    break;
  }
  case TOPI_PROBLEM_LAYOUT: {
    topi_layout_problem *l = &out->layout;
    l->n = tec_gen_int(p, "n", 1);
    l->c = tec_gen_int(p, "c", 0);
    l->h = tec_gen_int(p, "h", 0);
    l->w = tec_gen_int(p, "w", 0);
    if (layout(p, "from", "NCHW", &l->from) || layout(p, "to", "NCHW", &l->to)) return -1;
    break;
  }
  case TOPI_PROBLEM_POOL: { /* pool2d, and global_pool with the window keys left out (0) */
    topi_pool *q = &out->pool;
    q->n = tec_gen_int(p, "n", 1);
    q->c = tec_gen_int(p, "c", 0);
    q->h = tec_gen_int(p, "h", 0);
    q->w = tec_gen_int(p, "w", 0);
    int64_t k = tec_gen_int(p, "k", 0), s = tec_gen_int(p, "stride", k ? 1 : 0);
    int64_t pad = tec_gen_int(p, "pad", 0);
    q->kh = tec_gen_int(p, "kh", k);
    q->kw = tec_gen_int(p, "kw", k);
    q->stride_h = tec_gen_int(p, "stride_h", s);
    q->stride_w = tec_gen_int(p, "stride_w", s);
    q->pad_h = tec_gen_int(p, "pad_h", pad);
    q->pad_w = tec_gen_int(p, "pad_w", pad);
    q->count_include_pad = tec_gen_int(p, "count_include_pad", 0) != 0;
    const char *m = tec_gen_str(p, "mode", "max");
    if (!strcmp(m, "max")) q->mode = TOPI_POOL_MAX;
    else if (!strcmp(m, "avg")) q->mode = TOPI_POOL_AVG;
    else return tec_ctx_set_error(p->ctx, "--shape: mode=%s; the modes are max, avg", m), -1;
    if (layout(p, "in", "NCHW", &q->in_layout) || layout(p, "out", "NCHW", &q->out_layout))
      return -1;
    break;
  }
  case TOPI_PROBLEM_SOFTMAX:
    out->softmax.m = tec_gen_int(p, "m", 1);
    out->softmax.n = tec_gen_int(p, "n", 0);
    break;
  case TOPI_PROBLEM_ELTWISE: {
    topi_eltwise *e = &out->eltwise;
    e->n = tec_gen_int(p, "n", 1);
    e->c = tec_gen_int(p, "c", 0);
    e->h = tec_gen_int(p, "h", 0);
    e->w = tec_gen_int(p, "w", 0);
    if (layout(p, "layout", "NCHW", &e->layout) || activation(p, &e->act)) return -1;
    break;
  }
  case TOPI_PROBLEM_DENSE: {
    topi_dense *d = &out->dense;
    d->m = tec_gen_int(p, "m", 0);
    d->n = tec_gen_int(p, "n", 0);
    d->k = tec_gen_int(p, "k", 0);
    d->b_transposed = tec_gen_int(p, "bt", 0) != 0;
    d->const_b = tec_gen_int(p, "const_b", 1) != 0;
    if (epilogue(p, &d->epi)) return -1;
    break;
  }
  }
  return drv_params_finish(p, drv_problem_keys(t));
}

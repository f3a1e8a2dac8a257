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

/* key's default for template t as a number: the table's (driver_keys.c), ref when it names
 * another key ("k", "stride", "c"), 0 when the key is required (checked before) */
static int64_t dflt(const topi_template *t, const char *key, int64_t ref) {
  const char *d = drv_key_default(t, key);
  if (!d) return 0;
  return (*d >= '0' && *d <= '9') ? strtoll(d, NULL, 10) : ref;
}
#define INT(key, ref) tec_gen_int(p, key, dflt(t, key, ref))

/* kh kw stride_h stride_w pad_h pad_w (conv2d and pooling), from k, stride and pad */
static void window(const topi_template *t, const tec_gen_params *p, int64_t k, int64_t s, int64_t pad,
                   int64_t *const w[6]) {
  static const char *const keys[] = {"kh", "kw", "stride_h", "stride_w", "pad_h", "pad_w"};
  const int64_t ref[] = {k, k, s, s, pad, pad};
  for (int i = 0; i < 6; i++) *w[i] = INT(keys[i], ref[i]);
}

static int layout(const topi_template *t, const tec_gen_params *p, const char *key, topi_layout *out) {
  const char *s = tec_gen_str(p, key, drv_key_default(t, key));
  if (topi_layout_parse(p->ctx, s, out) != 0) {
    const char *why = tec_ctx_strdup(p->ctx, tec_ctx_error(p->ctx));
    tec_ctx_clear_error(p->ctx);
    tec_ctx_set_error(p->ctx, "--shape: %s=%s: %s", key, s, why ? why : "");
    return -1;
  }
  return 0;
}

static int activation(const topi_template *t, const tec_gen_params *p, topi_act *act) {
  const char *a = tec_gen_str(p, "act", drv_key_default(t, "act"));
  if (!strcmp(a, "none")) *act = TOPI_ACT_NONE;
  else if (!strcmp(a, "relu")) *act = TOPI_ACT_RELU;
  else if (!strcmp(a, "relu6")) *act = TOPI_ACT_RELU6;
  else return tec_ctx_set_error(p->ctx, "--shape: act=%s; the activations are none, relu, relu6", a), -1;
  return 0;
}

static int epilogue(const topi_template *t, const tec_gen_params *p, topi_epilogue *e) {
  e->bias = INT("bias", 0) != 0;
  e->residual = drv_key_default(t, "residual") ? INT("residual", 0) != 0 : 0;
  return activation(t, p, &e->act);
}

/* pooling's end paddings, dilation, ceil_mode and ONNX auto_pad (pool2d; global_pool refuses
 * any of them but auto_pad=notset) */
static int pool_extras(const topi_template *t, const tec_gen_params *p, topi_pool *q) {
  int64_t pb = INT("pad_bottom", q->pad_h), pr = INT("pad_right", q->pad_w), dil = INT("dilation", 1);
  q->pad_end_given = pb != q->pad_h || pr != q->pad_w;
  q->pad_bottom = q->pad_end_given ? pb : 0, q->pad_right = q->pad_end_given ? pr : 0;
  int64_t dh = INT("dilation_h", dil), dw = INT("dilation_w", dil), cm = INT("ceil_mode", 0);
  if (dh < 1 || dw < 1)
    return tec_ctx_set_error(p->ctx, "--shape: dilation %lldx%lld; a dilation is >= 1 (1: none)",
                             (long long)dh, (long long)dw), -1;
  if (cm != 0 && cm != 1)
    return tec_ctx_set_error(p->ctx, "--shape: ceil_mode=%lld; legal: 0, 1", (long long)cm), -1;
  int global = !q->kh && !q->kw;
  q->dilation_h = global && dh == 1 ? 0 : dh, q->dilation_w = global && dw == 1 ? 0 : dw;
  q->ceil_mode = (int)cm;
  static const char *const modes[] = {"notset", "same_upper", "same_lower", "valid"};
  const char *a = tec_gen_str(p, "auto_pad", drv_key_default(t, "auto_pad"));
  for (int i = 0; i < 4; i++) {
    if (strcmp(a, modes[i])) continue;
    if (i && (q->pad_h || q->pad_w || q->pad_end_given))
      return tec_ctx_set_error(p->ctx, "--shape: auto_pad=%s sets the paddings: leave out pad, "
                                       "pad_h, pad_w, pad_bottom, pad_right", a), -1;
    return topi_pool_auto_pad(p->ctx, q, (topi_auto_pad)i);
  }
  return tec_ctx_set_error(p->ctx, "--shape: auto_pad=%s; legal: notset, same_upper, same_lower, "
                                   "valid", a), -1;
}

/* Keys not given take the template's defaults (driver_keys.c); a required one missing is
 * refused by name (after bad values and unknown keys). */
int drv_problem_parse(const topi_template *t, const tec_gen_params *p, drv_problem *out) {
  memset(out, 0, sizeof *out);
  switch (t->problem_kind) {
  case TOPI_PROBLEM_CONV2D: {
    topi_conv2d *c = &out->conv;
    c->n = INT("n", 1);
    c->c_in = INT("c", 0);
    c->h = INT("h", 0);
    c->w = INT("w", 0);
    int64_t k = INT("k", 1), s = INT("stride", 1), pad = INT("pad", 0), dil = INT("dilation", 1);
    window(t, p, k, s, pad, (int64_t *const[]){&c->kh, &c->kw, &c->stride_h, &c->stride_w, &c->pad_h, &c->pad_w});
    c->dilation_h = INT("dilation_h", dil);
    c->dilation_w = INT("dilation_w", dil);
    c->groups = INT("groups", c->c_in);
    c->c_out = tec_gen_int(p, "oc", c->groups > 1 ? c->c_in : dflt(t, "oc", c->c_in));
    if (layout(t, p, "in", &c->in_layout) || layout(t, p, "out", &c->out_layout) || epilogue(t, p, &c->epi))
      return -1;
    break;
  }
  case TOPI_PROBLEM_DW_PW: { /* MobileNet's block: depthwise k x k (pad k/2), then 1x1 to oc;
                               bias and act on both */
    topi_dw_pw *b = &out->dw_pw;
    topi_conv2d *dw = &b->dw, *pw = &b->pw;
    dw->n = INT("n", 1);
    dw->c_in = dw->c_out = dw->groups = INT("c", 0);
    dw->h = INT("h", 0);
    dw->w = INT("w", 0);
    dw->kh = dw->kw = INT("k", 3);
    dw->stride_h = dw->stride_w = INT("stride", 1);
    dw->pad_h = dw->pad_w = dw->kh / 2;
    if (layout(t, p, "layout", &dw->in_layout) || layout(t, p, "out", &pw->out_layout) || epilogue(t, p, &dw->epi))
      return -1;
    dw->out_layout = pw->in_layout = dw->in_layout;
    dw->out_layout.margin = pw->in_layout.margin = 0; /* the intermediate: no margin */
    int64_t oh = 0, ow = 0;
    topi_conv2d_out_hw(NULL, dw, &oh, &ow); /* a bad size: the template says which */
    *pw = (topi_conv2d){.n = dw->n, .c_in = dw->c_in, .h = oh, .w = ow,
                        .c_out = INT("oc", 0), .kh = 1, .kw = 1, .stride_h = 1,
                        .stride_w = 1, .groups = 1, .in_layout = dw->out_layout,
                        .out_layout = pw->out_layout, .epi = dw->epi};
    break;
  }
  case TOPI_PROBLEM_LAYOUT: {
    topi_layout_problem *l = &out->layout;
    l->n = INT("n", 1);
    l->c = INT("c", 0);
    l->h = INT("h", 0);
    l->w = INT("w", 0);
    if (layout(t, p, "from", &l->from) || layout(t, p, "to", &l->to)) return -1;
    break;
  }
  case TOPI_PROBLEM_POOL: { /* pool2d, and global_pool with the window keys left out (0) */
    topi_pool *q = &out->pool;
    q->n = INT("n", 1);
    q->c = INT("c", 0);
    q->h = INT("h", 0);
    q->w = INT("w", 0);
    int64_t k = INT("k", 0), s = tec_gen_int(p, "stride", k ? dflt(t, "stride", 1) : 0);
    int64_t pad = INT("pad", 0);
    window(t, p, k, s, pad, (int64_t *const[]){&q->kh, &q->kw, &q->stride_h, &q->stride_w, &q->pad_h, &q->pad_w});
    q->count_include_pad = INT("count_include_pad", 0) != 0;
    if (pool_extras(t, p, q)) return -1;
    const char *m = tec_gen_str(p, "mode", drv_key_default(t, "mode"));
    if (!strcmp(m, "max")) q->mode = TOPI_POOL_MAX;
    else if (!strcmp(m, "avg")) q->mode = TOPI_POOL_AVG;
    else return tec_ctx_set_error(p->ctx, "--shape: mode=%s; the modes are max, avg", m), -1;
    if (layout(t, p, "in", &q->in_layout) || layout(t, p, "out", &q->out_layout)) return -1;
    break;
  }
  case TOPI_PROBLEM_BATCH_MATMUL: {
    topi_batch_matmul *b = &out->bmm;
    b->batch = INT("batch", 1);
    b->m = INT("m", 0), b->n = INT("n", 0), b->k = INT("k", 0);
    int64_t ta = INT("ta", 0), tb = INT("tb", 0);
    if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
      return tec_ctx_set_error(p->ctx, "--shape: ta=%lld, tb=%lld; legal: 0, 1", (long long)ta,
                               (long long)tb), -1;
    b->transpose_a = (int)ta, b->transpose_b = (int)tb;
    break;
  }
  case TOPI_PROBLEM_SOFTMAX:
    out->softmax.m = INT("m", 1);
    out->softmax.n = INT("n", 0);
    break;
  case TOPI_PROBLEM_ELTWISE: {
    topi_eltwise *e = &out->eltwise;
    e->n = INT("n", 1);
    e->c = INT("c", 0);
    e->h = INT("h", 0);
    e->w = INT("w", 0);
    if (layout(t, p, "layout", &e->layout) || activation(t, p, &e->act)) return -1;
    break;
  }
  case TOPI_PROBLEM_DENSE: {
    topi_dense *d = &out->dense;
    d->m = INT("m", 0);
    d->n = INT("n", 0);
    d->k = INT("k", 0);
    d->b_transposed = INT("bt", 0) != 0;
    d->const_b = INT("const_b", 1) != 0;
    if (epilogue(t, p, &d->epi)) return -1;
    break;
  }
  case TOPI_PROBLEM_QCONV2D: case TOPI_PROBLEM_QDENSE: case TOPI_PROBLEM_QPOOL:
  case TOPI_PROBLEM_QADD:
    return tec_ctx_set_error(p->ctx, "%s: the int8 templates are not in the command yet (their "
                                     "quantization params); call them from C (docs/quantized.md)",
                             t->name), -1;
  }
  /* a bad value or an unknown key first (a typo of a required key is named as unknown) */
  if (drv_params_finish(p, drv_problem_keys(t)) != 0) return -1;
  return drv_keys_check(t, p);
}

/* problem_text.c — a problem as text and back, the one place both directions live: the
 * printer spells out every key of the problem's kind (so the text names the workload whatever
 * a template's defaults are: what a network's layer keys its tuning records with), the parser
 * reads "key=value" pairs into the problem with the template's defaults for keys not given
 * (problem_keys.c), every key and value checked.
 *
 *   topi_conv2d {n 1, c_in 16, h 14, ...}  <->  "n=1,c=16,h=14,w=14,oc=32,kh=3,kw=3,stride_h=1,..."
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topi/problem_text.h"

/* ---- printing ---- */

static const char *act_str(topi_act a) {
  return a == TOPI_ACT_RELU ? "relu" : a == TOPI_ACT_RELU6 ? "relu6" : "none";
}

#define LL(x) ((long long)(x))

/* "x_scale=S,x_zp=Z": the scale with 9 significant digits, which read back to the same fp32 */
static const char *qp_str(tec_ctx *ctx, const char *x, topi_qparams q) {
  const char *s = tec_ctx_printf(ctx, "%s_scale=%.9g,%s_zp=%d", x, (double)q.scale, x, (int)q.zero_point);
  return s ? s : ""; /* out of memory: the caller's printf fails too */
}

const char *topi_problem_str(tec_ctx *ctx, topi_problem_kind kind, const void *problem) {
  switch (kind) {
  case TOPI_PROBLEM_CONV2D: {
    const topi_conv2d *p = problem;
    return tec_ctx_printf(ctx, "n=%lld,c=%lld,h=%lld,w=%lld,oc=%lld,kh=%lld,kw=%lld,stride_h=%lld,"
                          "stride_w=%lld,pad_h=%lld,pad_w=%lld,dilation_h=%lld,dilation_w=%lld,groups=%lld,"
                          "in=%s,out=%s,bias=%d,residual=%d,act=%s",
                          LL(p->n), LL(p->c_in), LL(p->h), LL(p->w), LL(p->c_out), LL(p->kh), LL(p->kw),
                          LL(p->stride_h), LL(p->stride_w), LL(p->pad_h), LL(p->pad_w),
                          LL(topi_conv2d_dilation_h(p)), LL(topi_conv2d_dilation_w(p)),
                          LL(p->groups ? p->groups : 1), topi_layout_str(ctx, p->in_layout),
                          topi_layout_str(ctx, p->out_layout), p->epi.bias != 0, p->epi.residual != 0,
                          act_str(p->epi.act));
  }
  case TOPI_PROBLEM_POOL: {
    const topi_pool *p = problem;
    const char *s = tec_ctx_printf(
        ctx, "n=%lld,c=%lld,h=%lld,w=%lld,kh=%lld,kw=%lld,stride_h=%lld,stride_w=%lld,pad_h=%lld,"
             "pad_w=%lld,mode=%s,count_include_pad=%d,in=%s,out=%s",
        LL(p->n), LL(p->c), LL(p->h), LL(p->w), LL(p->kh), LL(p->kw), LL(p->stride_h), LL(p->stride_w),
        LL(p->pad_h), LL(p->pad_w), p->mode == TOPI_POOL_MAX ? "max" : "avg", p->count_include_pad != 0,
        topi_layout_str(ctx, p->in_layout), topi_layout_str(ctx, p->out_layout));
    /* the keys a port from ONNX / TVM adds, only when set (older records keep their text) */
    if (s && p->pad_end_given && (p->pad_bottom != p->pad_h || p->pad_right != p->pad_w))
      s = tec_ctx_printf(ctx, "%s,pad_bottom=%lld,pad_right=%lld", s, LL(p->pad_bottom), LL(p->pad_right));
    if (s && (p->dilation_h > 1 || p->dilation_w > 1))
      s = tec_ctx_printf(ctx, "%s,dilation_h=%lld,dilation_w=%lld", s,
                         LL(p->dilation_h > 1 ? p->dilation_h : 1), LL(p->dilation_w > 1 ? p->dilation_w : 1));
    if (s && p->ceil_mode) s = tec_ctx_printf(ctx, "%s,ceil_mode=1", s);
    return s;
  }
  case TOPI_PROBLEM_DENSE: {
    const topi_dense *p = problem;
    return tec_ctx_printf(ctx, "m=%lld,n=%lld,k=%lld,bt=%d,const_b=%d,bias=%d,residual=%d,act=%s", LL(p->m),
                          LL(p->n), LL(p->k), p->b_transposed != 0, p->const_b != 0, p->epi.bias != 0,
                          p->epi.residual != 0, act_str(p->epi.act));
  }
  case TOPI_PROBLEM_SOFTMAX: {
    const topi_softmax *p = problem;
    return tec_ctx_printf(ctx, "m=%lld,n=%lld", LL(p->m), LL(p->n));
  }
  case TOPI_PROBLEM_LAYOUT: {
    const topi_layout_problem *p = problem;
    return tec_ctx_printf(ctx, "n=%lld,c=%lld,h=%lld,w=%lld,from=%s,to=%s", LL(p->n), LL(p->c), LL(p->h),
                          LL(p->w), topi_layout_str(ctx, p->from), topi_layout_str(ctx, p->to));
  }
  case TOPI_PROBLEM_ELTWISE: {
    const topi_eltwise *p = problem;
    return tec_ctx_printf(ctx, "n=%lld,c=%lld,h=%lld,w=%lld,layout=%s,act=%s", LL(p->n), LL(p->c), LL(p->h),
                          LL(p->w), topi_layout_str(ctx, p->layout), act_str(p->act));
  }
  case TOPI_PROBLEM_DW_PW: { /* what the parser reads: the pointwise half follows from it */
    const topi_dw_pw *p = problem;
    return tec_ctx_printf(ctx, "n=%lld,c=%lld,h=%lld,w=%lld,oc=%lld,k=%lld,stride=%lld,layout=%s,out=%s,"
                          "bias=%d,act=%s",
                          LL(p->dw.n), LL(p->dw.c_in), LL(p->dw.h), LL(p->dw.w), LL(p->pw.c_out), LL(p->dw.kh),
                          LL(p->dw.stride_h), topi_layout_str(ctx, p->dw.in_layout),
                          topi_layout_str(ctx, p->pw.out_layout), p->dw.epi.bias != 0, act_str(p->dw.epi.act));
  }
  case TOPI_PROBLEM_BATCH_MATMUL: {
    const topi_batch_matmul *p = problem;
    return tec_ctx_printf(ctx, "batch=%lld,m=%lld,n=%lld,k=%lld,ta=%d,tb=%d", LL(p->batch), LL(p->m), LL(p->n),
                          LL(p->k), p->transpose_a != 0, p->transpose_b != 0);
  }
  /* int8: the fp32 kind's keys, then the quantization params */
  case TOPI_PROBLEM_QCONV2D: {
    const topi_qconv2d *q = problem;
    const topi_conv2d *p = &q->conv;
    return tec_ctx_printf(ctx, "n=%lld,c=%lld,h=%lld,w=%lld,oc=%lld,kh=%lld,kw=%lld,stride_h=%lld,"
                          "stride_w=%lld,pad_h=%lld,pad_w=%lld,groups=%lld,in=%s,out=%s,bias=%d,act=%s,%s,%s",
                          LL(p->n), LL(p->c_in), LL(p->h), LL(p->w), LL(p->c_out), LL(p->kh), LL(p->kw),
                          LL(p->stride_h), LL(p->stride_w), LL(p->pad_h), LL(p->pad_w),
                          LL(p->groups ? p->groups : 1), topi_layout_str(ctx, p->in_layout),
                          topi_layout_str(ctx, p->out_layout), p->epi.bias != 0, act_str(p->epi.act),
                          qp_str(ctx, "in", q->in), qp_str(ctx, "out", q->out));
  }
  case TOPI_PROBLEM_QDENSE: {
    const topi_qdense *p = problem;
    return tec_ctx_printf(ctx, "m=%lld,n=%lld,k=%lld,bias=%d,act=%s,%s,%s", LL(p->m), LL(p->n), LL(p->k),
                          p->bias != 0, act_str(p->act), qp_str(ctx, "in", p->in), qp_str(ctx, "out", p->out));
  }
  case TOPI_PROBLEM_QPOOL: {
    const topi_qpool *q = problem;
    const topi_pool *p = &q->pool;
    return tec_ctx_printf(ctx, "n=%lld,c=%lld,h=%lld,w=%lld,kh=%lld,kw=%lld,stride_h=%lld,stride_w=%lld,"
                          "pad_h=%lld,pad_w=%lld,mode=%s,count_include_pad=%d,layout=%s,%s,%s",
                          LL(p->n), LL(p->c), LL(p->h), LL(p->w), LL(p->kh), LL(p->kw), LL(p->stride_h),
                          LL(p->stride_w), LL(p->pad_h), LL(p->pad_w), p->mode == TOPI_POOL_MAX ? "max" : "avg",
                          p->count_include_pad != 0, topi_layout_str(ctx, p->in_layout),
                          qp_str(ctx, "in", q->in), qp_str(ctx, "out", q->out));
  }
  case TOPI_PROBLEM_QADD: {
    const topi_qadd *p = problem;
    return tec_ctx_printf(ctx, "n=%lld,c=%lld,h=%lld,w=%lld,layout=%s,act=%s,%s,%s,%s", LL(p->n), LL(p->c),
                          LL(p->h), LL(p->w), topi_layout_str(ctx, p->layout), act_str(p->act),
                          qp_str(ctx, "a", p->a), qp_str(ctx, "b", p->b), qp_str(ctx, "out", p->out));
  }
  }
  tec_ctx_set_error(ctx, "topi_problem_str: unknown problem kind %d", (int)kind);
  return NULL;
}

/* ---- parsing ---- */

/* key's default for template t as a number: the table's (problem_keys.c), ref when it names
 * another key ("k", "stride", "c"), 0 when the key is required (checked before) */
static int64_t dflt(const topi_template *t, const char *key, int64_t ref) {
  const char *d = topi_problem_key_default(t, key);
  if (!d) return 0;
  return (*d >= '0' && *d <= '9') ? strtoll(d, NULL, 10) : ref;
}
#define INT(key, ref) topi_kv_int(p, key, dflt(t, key, ref))

/* kh kw stride_h stride_w pad_h pad_w (conv2d and pooling), from k, stride and pad */
static void window(const topi_template *t, const topi_kv *p, int64_t k, int64_t s, int64_t pad,
                   int64_t *const w[6]) {
  static const char *const keys[] = {"kh", "kw", "stride_h", "stride_w", "pad_h", "pad_w"};
  const int64_t ref[] = {k, k, s, s, pad, pad};
  for (int i = 0; i < 6; i++) *w[i] = INT(keys[i], ref[i]);
}

static int layout(const topi_template *t, const topi_kv *p, const char *key, topi_layout *out) {
  const char *s = topi_kv_str(p, key, topi_problem_key_default(t, key));
  if (topi_layout_parse(p->ctx, s, out) != 0) {
    const char *why = tec_ctx_strdup(p->ctx, tec_ctx_error(p->ctx));
    tec_ctx_clear_error(p->ctx);
    tec_ctx_set_error(p->ctx, "%s%s%s=%s: %s", p->what, p->sep, key, s, why ? why : "");
    return -1;
  }
  return 0;
}

static int activation(const topi_template *t, const topi_kv *p, topi_act *act) {
  const char *a = topi_kv_str(p, "act", topi_problem_key_default(t, "act"));
  if (!strcmp(a, "none")) *act = TOPI_ACT_NONE;
  else if (!strcmp(a, "relu")) *act = TOPI_ACT_RELU;
  else if (!strcmp(a, "relu6")) *act = TOPI_ACT_RELU6;
  else return tec_ctx_set_error(p->ctx, "%s%sact=%s; the activations are none, relu, relu6", p->what, p->sep, a), -1;
  return 0;
}

static int epilogue(const topi_template *t, const topi_kv *p, topi_epilogue *e) {
  e->bias = INT("bias", 0) != 0;
  e->residual = topi_problem_key_default(t, "residual") ? INT("residual", 0) != 0 : 0;
  return activation(t, p, &e->act);
}

/* the int8 params `x`_scale (an fp32 > 0, finite) and `x`_zp (-128..127) */
static int qparams(const topi_template *t, const topi_kv *p, const char *x, topi_qparams *q) {
  char ks[32], kz[32];
  snprintf(ks, sizeof ks, "%s_scale", x), snprintf(kz, sizeof kz, "%s_zp", x);
  const char *v = topi_kv_str(p, ks, topi_problem_key_default(t, ks));
  char *end = NULL;
  float f = v ? strtof(v, &end) : 0.0f;
  if (!v || end == v || *end || !(f > 0.0f) || f > 3.4e38f)
    return tec_ctx_set_error(p->ctx, "%s%s%s=%s; a scale is a finite number > 0 (e.g. 0.05)",
                             p->what, p->sep, ks, v ? v : ""), -1;
  int64_t z = INT(kz, 0);
  if (z < -128 || z > 127)
    return tec_ctx_set_error(p->ctx, "%s%s%s=%lld; an int8 zero point is in -128..127", p->what,
                             p->sep, kz, (long long)z), -1;
  *q = (topi_qparams){f, (int32_t)z};
  return 0;
}

/* pooling's end paddings, dilation, ceil_mode and ONNX auto_pad (pool2d; global_pool refuses
 * any of them but auto_pad=notset) */
static int pool_extras(const topi_template *t, const topi_kv *p, topi_pool *q) {
  int64_t pb = INT("pad_bottom", q->pad_h), pr = INT("pad_right", q->pad_w), dil = INT("dilation", 1);
  q->pad_end_given = pb != q->pad_h || pr != q->pad_w;
  q->pad_bottom = q->pad_end_given ? pb : 0, q->pad_right = q->pad_end_given ? pr : 0;
  int64_t dh = INT("dilation_h", dil), dw = INT("dilation_w", dil), cm = INT("ceil_mode", 0);
  if (dh < 1 || dw < 1)
    return tec_ctx_set_error(p->ctx, "%s%sdilation %lldx%lld; a dilation is >= 1 (1: none)", p->what, p->sep,
                             (long long)dh, (long long)dw), -1;
  if (cm != 0 && cm != 1)
    return tec_ctx_set_error(p->ctx, "%s%sceil_mode=%lld; legal: 0, 1", p->what, p->sep, (long long)cm), -1;
  int global = !q->kh && !q->kw;
  q->dilation_h = global && dh == 1 ? 0 : dh, q->dilation_w = global && dw == 1 ? 0 : dw;
  q->ceil_mode = (int)cm;
  static const char *const modes[] = {"notset", "same_upper", "same_lower", "valid"};
  const char *a = topi_kv_str(p, "auto_pad", topi_problem_key_default(t, "auto_pad"));
  for (int i = 0; i < 4; i++) {
    if (strcmp(a, modes[i])) continue;
    if (i && (q->pad_h || q->pad_w || q->pad_end_given))
      return tec_ctx_set_error(p->ctx, "%s%sauto_pad=%s sets the paddings: leave out pad, "
                                       "pad_h, pad_w, pad_bottom, pad_right", p->what, p->sep, a), -1;
    return topi_pool_auto_pad(p->ctx, q, (topi_auto_pad)i);
  }
  return tec_ctx_set_error(p->ctx, "%s%sauto_pad=%s; legal: notset, same_upper, same_lower, "
                                   "valid", p->what, p->sep, a), -1;
}

/* Keys not given take the template's defaults (problem_keys.c); a required one missing is
 * refused by name (after bad values and unknown keys). */
static int parse_kv(const topi_template *t, const topi_kv *p, topi_problem *out) {
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
    c->c_out = topi_kv_int(p, "oc", c->groups > 1 ? c->c_in : dflt(t, "oc", c->c_in));
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
    int64_t k = INT("k", 0), s = topi_kv_int(p, "stride", k ? dflt(t, "stride", 1) : 0);
    int64_t pad = INT("pad", 0);
    window(t, p, k, s, pad, (int64_t *const[]){&q->kh, &q->kw, &q->stride_h, &q->stride_w, &q->pad_h, &q->pad_w});
    q->count_include_pad = INT("count_include_pad", 0) != 0;
    if (pool_extras(t, p, q)) return -1;
    if (q->pad_end_given && q->pad_bottom == q->pad_h && q->pad_right == q->pad_w) /* symmetric */
      q->pad_end_given = 0, q->pad_bottom = q->pad_right = 0;
    const char *m = topi_kv_str(p, "mode", topi_problem_key_default(t, "mode"));
    if (!strcmp(m, "max")) q->mode = TOPI_POOL_MAX;
    else if (!strcmp(m, "avg")) q->mode = TOPI_POOL_AVG;
    else return tec_ctx_set_error(p->ctx, "%s%smode=%s; the modes are max, avg", p->what, p->sep, m), -1;
    if (layout(t, p, "in", &q->in_layout) || layout(t, p, "out", &q->out_layout)) return -1;
    break;
  }
  case TOPI_PROBLEM_BATCH_MATMUL: {
    topi_batch_matmul *b = &out->bmm;
    b->batch = INT("batch", 1);
    b->m = INT("m", 0), b->n = INT("n", 0), b->k = INT("k", 0);
    int64_t ta = INT("ta", 0), tb = INT("tb", 0);
    if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
      return tec_ctx_set_error(p->ctx, "%s%sta=%lld, tb=%lld; legal: 0, 1", p->what, p->sep, (long long)ta,
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
  case TOPI_PROBLEM_QCONV2D: {
    topi_conv2d *c = &out->qconv.conv;
    c->n = INT("n", 1);
    c->c_in = INT("c", 0);
    c->h = INT("h", 0);
    c->w = INT("w", 0);
    int64_t k = INT("k", 1), s = INT("stride", 1), pad = INT("pad", 0);
    window(t, p, k, s, pad, (int64_t *const[]){&c->kh, &c->kw, &c->stride_h, &c->stride_w, &c->pad_h, &c->pad_w});
    c->groups = INT("groups", c->c_in);
    c->c_out = topi_kv_int(p, "oc", c->groups > 1 ? c->c_in : dflt(t, "oc", c->c_in));
    c->epi.bias = INT("bias", 0) != 0;
    if (layout(t, p, "in", &c->in_layout) || layout(t, p, "out", &c->out_layout) ||
        activation(t, p, &c->epi.act) || qparams(t, p, "in", &out->qconv.in) ||
        qparams(t, p, "out", &out->qconv.out))
      return -1;
    break;
  }
  case TOPI_PROBLEM_QDENSE: {
    topi_qdense *d = &out->qdense;
    d->m = INT("m", 0), d->n = INT("n", 0), d->k = INT("k", 0);
    d->bias = INT("bias", 0) != 0;
    if (activation(t, p, &d->act) || qparams(t, p, "in", &d->in) || qparams(t, p, "out", &d->out))
      return -1;
    break;
  }
  case TOPI_PROBLEM_QPOOL: {
    topi_pool *q = &out->qpool.pool;
    q->n = INT("n", 1), q->c = INT("c", 0), q->h = INT("h", 0), q->w = INT("w", 0);
    int64_t k = INT("k", 2), s = INT("stride", 2), pad = INT("pad", 0);
    window(t, p, k, s, pad, (int64_t *const[]){&q->kh, &q->kw, &q->stride_h, &q->stride_w, &q->pad_h, &q->pad_w});
    q->count_include_pad = INT("count_include_pad", 0) != 0;
    const char *m = topi_kv_str(p, "mode", topi_problem_key_default(t, "mode"));
    if (!strcmp(m, "max")) q->mode = TOPI_POOL_MAX;
    else if (!strcmp(m, "avg")) q->mode = TOPI_POOL_AVG;
    else return tec_ctx_set_error(p->ctx, "%s%smode=%s; the modes are max, avg", p->what, p->sep, m), -1;
    if (layout(t, p, "layout", &q->in_layout) || qparams(t, p, "in", &out->qpool.in) ||
        qparams(t, p, "out", &out->qpool.out))
      return -1;
    q->out_layout = q->in_layout;
    break;
  }
  case TOPI_PROBLEM_QADD: {
    topi_qadd *e = &out->qadd;
    e->n = INT("n", 1), e->c = INT("c", 0), e->h = INT("h", 0), e->w = INT("w", 0);
    if (layout(t, p, "layout", &e->layout) || activation(t, p, &e->act) ||
        qparams(t, p, "a", &e->a) || qparams(t, p, "b", &e->b) || qparams(t, p, "out", &e->out))
      return -1;
    break;
  }
  }
  /* a bad value or an unknown key first (a typo of a required key is named as unknown) */
  if (topi_kv_finish(p, topi_problem_key_names(p->ctx, t)) != 0) return -1;
  return topi_problem_keys_check(t, p);
}

int topi_problem_parse(tec_ctx *ctx, const topi_template *t, const char *text, topi_problem *out) {
  topi_kv p;
  if (!t) return tec_ctx_set_error(ctx, "topi_problem_parse: no template");
  if (topi_kv_parse(ctx, "--shape", text, &p) != 0) return -1;
  return parse_kv(t, &p, out);
}

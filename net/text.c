/* text.c — a network as text and back: one line per layer, the builders' arguments as
 * key=value pairs (topi/problem_kv.c), values named by the layer that writes them ("input":
 * the image). What `tec net FILE` reads; net_text prints a network the same way, so text ->
 * network -> text is the identity for every network the builders make.
 *
 *   input c=3 h=32 w=32
 *   conv conv1 in=input oc=8 k=3 stride=2 act=relu6
 *   conv dw1 in=conv1 oc=8 k=3 depthwise=1 act=relu6
 *   conv c2 in=dw1 oc=8 k=3 res=conv1                 (the residual: conv1's output)
 *   maxpool mp in=c2 k=3 stride=2 pad=1
 *   gpool gap in=mp
 *   dense fc in=gap n=10
 *   softmax prob in=fc
 * Blank lines and lines starting with '#' are skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net/internal.h"
#include "topi/problem_kv.h"

static const char *const acts[] = {"none", "relu", "relu6"};

/* value id of a name: "input" (0) or the layer writing it; -1 with the message */
static int value_named(net *n, const char *key, const char *name, int line) {
  if (!strcmp(name, "input")) return 0;
  for (int i = 0; i < n->nlayers; i++)
    if (!strcmp(n->layers[i].name, name)) return n->layers[i].out;
  return net_fail(n, "net_parse: line %d: %s=%s: no layer of that name above (or input)", line, key, name);
}

/* one layer line (op, name, key=value pairs in kv): 0, or -1 with the message */
static int layer_line(net *n, const char *op, const char *name, topi_kv *kv, int line) {
  const char *in_name = topi_kv_str(kv, "in", NULL);
  if (!in_name) return net_fail(n, "net_parse: line %d: layer '%s' needs in=VALUE", line, name);
  int in = value_named(n, "in", in_name, line);
  if (in < 0) return -1;
  int out = -1;
  if (!strcmp(op, "conv")) {
    const char *res_name = topi_kv_str(kv, "res", NULL), *act = topi_kv_str(kv, "act", "none");
    int res = res_name ? value_named(n, "res", res_name, line) : -1, a = -1;
    if (res_name && res < 0) return -1;
    for (int k = 0; k < 3; k++)
      if (!strcmp(act, acts[k])) a = k;
    if (a < 0) return net_fail(n, "net_parse: line %d: act=%s; legal: none, relu, relu6", line, act);
    int64_t oc = topi_kv_int(kv, "oc", 0), k = topi_kv_int(kv, "k", 1), s = topi_kv_int(kv, "stride", 1);
    int64_t dw = topi_kv_int(kv, "depthwise", 0);
    if (topi_kv_finish(kv, "in oc k stride depthwise act res")) goto kv_failed;
    out = net_conv(n, name, in, oc, k, s, dw != 0, (topi_act)a, res);
  } else if (!strcmp(op, "maxpool")) {
    int64_t k = topi_kv_int(kv, "k", 2), s = topi_kv_int(kv, "stride", k), pad = topi_kv_int(kv, "pad", 0);
    if (topi_kv_finish(kv, "in k stride pad")) goto kv_failed;
    out = net_max_pool(n, name, in, k, s, pad);
  } else if (!strcmp(op, "gpool") || !strcmp(op, "softmax")) {
    if (topi_kv_finish(kv, "in")) goto kv_failed;
    out = op[0] == 'g' ? net_global_pool(n, name, in) : net_softmax(n, name, in);
  } else if (!strcmp(op, "dense")) {
    int64_t classes = topi_kv_int(kv, "n", 0);
    if (topi_kv_finish(kv, "in n")) goto kv_failed;
    out = net_dense(n, name, in, classes);
  } else {
    return net_fail(n, "net_parse: line %d: '%s'; a layer is conv, maxpool, gpool, dense or softmax", line, op);
  }
  if (out < 0) {
    char why[sizeof n->err];
    snprintf(why, sizeof why, "%s", n->err);
    return net_fail(n, "net_parse: line %d: %s", line, why);
  }
  return 0;
kv_failed:
  return net_fail(n, "net_parse: line %d: %s", line, tec_ctx_error(kv->ctx));
}

net *net_parse(const net_options *o, const char *text, char *err, size_t errlen) {
  tec_ctx *ctx = tec_ctx_new();
  net *n = NULL;
  char *copy = text ? strdup(text) : NULL;
  if (!ctx || !copy) {
    snprintf(err, errlen, "net_parse: %s", text ? "out of memory" : "no text");
    goto done;
  }
  int line = 0, bad = 0;
  for (char *l = copy, *next; l && !bad; l = next) {
    next = strchr(l, '\n');
    if (next) *next++ = '\0';
    line++;
    while (*l == ' ' || *l == '\t' || *l == '\r') l++;
    if (!*l || *l == '#') continue;
    char op[16] = "", name[64] = "";
    int used = 0;
    if (sscanf(l, "%15s %n", op, &used) < 1) continue;
    const char *rest = l + used;
    topi_kv kv;
    if (!strcmp(op, "input")) {
      if (n) {
        snprintf(err, errlen, "net_parse: line %d: a second input line", line);
        bad = 1;
      } else if (topi_kv_parse(ctx, NULL, rest, &kv) != 0) {
        snprintf(err, errlen, "net_parse: line %d: %s", line, tec_ctx_error(ctx));
        bad = 1;
      } else {
        net_options no = o ? *o : (net_options){0};
        int64_t c = topi_kv_int(&kv, "c", 0), h = topi_kv_int(&kv, "h", 0), w = topi_kv_int(&kv, "w", 0);
        no.batch = topi_kv_int(&kv, "n", no.batch);
        if (topi_kv_finish(&kv, "n c h w")) {
          snprintf(err, errlen, "net_parse: line %d: %s", line, tec_ctx_error(ctx));
          bad = 1;
        } else if (!(n = net_new(&no, c, h, w, err, errlen))) {
          bad = 1;
        }
      }
      continue;
    }
    if (!n) {
      snprintf(err, errlen, "net_parse: line %d: the first line is the input: input c=C h=H w=W", line);
      bad = 1;
      continue;
    }
    used = 0;
    if (sscanf(rest, "%63s %n", name, &used) < 1 || strchr(name, '=')) {
      snprintf(err, errlen, "net_parse: line %d: %s needs a name before its key=value pairs", line, op);
      bad = 1;
      continue;
    }
    tec_ctx_clear_error(ctx);
    if (topi_kv_parse(ctx, NULL, rest + used, &kv) != 0) {
      snprintf(err, errlen, "net_parse: line %d: %s", line, tec_ctx_error(ctx));
      bad = 1;
    } else if (layer_line(n, op, name, &kv, line) != 0) {
      snprintf(err, errlen, "%s", net_error(n));
      bad = 1;
    }
  }
  if (!bad && !n) snprintf(err, errlen, "net_parse: no input line (input c=C h=H w=W)"), bad = 1;
  if (!bad && n->nlayers == 0) snprintf(err, errlen, "net_parse: no layers"), bad = 1;
  if (bad) net_free(n), n = NULL;
done:
  free(copy);
  tec_ctx_free(ctx);
  return n;
}

/* the name of value v: "input" or its writer's */
static const char *value_name(const net *n, int v) {
  for (int i = 0; i < n->nlayers; i++)
    if (n->layers[i].out == v) return n->layers[i].name;
  return "input";
}

const char *net_text(const net *n, tec_ctx *ctx) {
  const net_value *x = &n->values[0];
  const char *s = tec_ctx_printf(ctx, "input n=%lld c=%lld h=%lld w=%lld\n", (long long)x->n, (long long)x->c,
                                 (long long)x->h, (long long)x->w);
  for (int i = 0; s && i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    const char *in = value_name(n, L->in);
    switch (L->op) {
    case NET_CONV: {
      const topi_conv2d *p = &L->conv;
      s = tec_ctx_printf(ctx, "%sconv %s in=%s oc=%lld k=%lld stride=%lld%s act=%s%s%s\n", s, L->name, in,
                         (long long)p->c_out, (long long)p->kh, (long long)p->stride_h,
                         p->groups > 1 ? " depthwise=1" : "", acts[p->epi.act], L->res >= 0 ? " res=" : "",
                         L->res >= 0 ? value_name(n, L->res) : "");
      break;
    }
    case NET_POOL:
      s = tec_ctx_printf(ctx, "%smaxpool %s in=%s k=%lld stride=%lld pad=%lld\n", s, L->name, in,
                         (long long)L->pool.kh, (long long)L->pool.stride_h, (long long)L->pool.pad_h);
      break;
    case NET_GPOOL: s = tec_ctx_printf(ctx, "%sgpool %s in=%s\n", s, L->name, in); break;
    case NET_FC: s = tec_ctx_printf(ctx, "%sdense %s in=%s n=%lld\n", s, L->name, in, (long long)L->fc.n); break;
    case NET_SOFTMAX: s = tec_ctx_printf(ctx, "%ssoftmax %s in=%s\n", s, L->name, in); break;
    }
  }
  return s;
}

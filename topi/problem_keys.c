/* problem_keys.c — a problem's text keys, as data: per problem kind each key with its default
 * (or none: required) and its legal values, per template the defaults that differ
 * (conv2d_nchwc writes NCHW16c, the depthwise templates default groups to c), and an example
 * value for each required key. problem_text.c parses with it, `tec list OP` prints it; a
 * missing required key is named as missing; tests/test_cli.c runs every template's example
 * (its defaults) and checks the template accepts it. */
#include <stdio.h>
#include <string.h>
#include "topi/problem_text.h"

#define END {NULL, NULL, NULL, NULL}
#define LAYOUTS "NCHW, NHWC, NCHW<x>c (e.g. NCHW16c)"
/* n, c, h, w of an input (conv, pool and their int8 kinds) */
#define INPUT_KEYS(cwhat)                                                                         \
  {"n", "1", "batch, >= 1", NULL}, {"c", NULL, cwhat, "16"}, {"h", NULL, "input height, >= 1", "14"}, \
      {"w", NULL, "input width, >= 1", "14"}
/* a window's size, strides and symmetric paddings, each pair from one key */
#define WINDOW_KEYS(k, kwhat, s, swhat)                                                           \
  {"k", k, kwhat, NULL}, {"kh", "k", ">= 1", NULL}, {"kw", "k", ">= 1", NULL},                    \
      {"stride", s, swhat, NULL}, {"stride_h", "stride", ">= 1", NULL},                           \
      {"stride_w", "stride", ">= 1", NULL}, {"pad", "0", "both paddings", NULL},                  \
      {"pad_h", "pad", ">= 0", NULL}, {"pad_w", "pad", ">= 0", NULL}
#define CONV_KEYS                                                                                 \
  INPUT_KEYS("input channels, >= 1"),                                                             \
      {"oc", NULL, "output channels, >= 1 (default c when groups > 1)", "32"},                    \
      WINDOW_KEYS("1", "kernel height and width", "1", "both strides")
static const topi_problem_key conv_keys[] = {
    CONV_KEYS,
    {"dilation", "1", "both dilations", NULL},
    {"dilation_h", "dilation", ">= 1", NULL},
    {"dilation_w", "dilation", ">= 1", NULL},
    {"groups", "1", "divides c and oc; c = oc = groups: depthwise", NULL},
    {"in", "NCHW", LAYOUTS, NULL},
    {"out", "NCHW", LAYOUTS, NULL},
    {"bias", "0", "0 or 1", NULL},
    {"residual", "0", "0 or 1", NULL},
    {"act", "none", "none, relu, relu6", NULL},
    END};
static const topi_problem_key layout_keys[] = {
    {"n", "1", "batch, >= 1", NULL},         {"c", NULL, "channels, >= 1", "16"},
    {"h", NULL, "height, >= 1", "14"},       {"w", NULL, "width, >= 1", "14"},
    {"from", "NCHW", LAYOUTS, NULL},         {"to", "NCHW", LAYOUTS, NULL},
    END};
static const topi_problem_key dense_keys[] = {
    {"m", NULL, "rows of a and out, >= 1", "64"},
    {"n", NULL, "columns of b and out, >= 1", "64"},
    {"k", NULL, "the reduction, >= 1", "64"},
    {"bt", "0", "0 or 1: b given transposed ([n][k])", NULL},
    {"const_b", "1", "0 or 1: b is a constant (packed once, in prepare)", NULL},
    {"bias", "0", "0 or 1", NULL},
    {"residual", "0", "0 or 1", NULL},
    {"act", "none", "none, relu, relu6", NULL},
    END};
static const topi_problem_key dw_pw_keys[] = {
    {"n", "1", "batch, >= 1", NULL},
    {"c", NULL, "channels of the depthwise, >= 1", "16"},
    {"h", NULL, "input height, >= 1", "14"},
    {"w", NULL, "input width, >= 1", "14"},
    {"oc", NULL, "output channels of the pointwise, >= 1", "32"},
    {"k", "3", "depthwise kernel (padding k/2)", NULL},
    {"stride", "1", "depthwise stride", NULL},
    {"layout", "NCHW16c", "NCHW<x>c", NULL},
    {"out", "NCHW16c", "NCHW<y>c", NULL},
    {"bias", "0", "0 or 1", NULL},
    {"act", "none", "none, relu, relu6", NULL},
    END};
static const topi_problem_key pool_keys[] = {
    INPUT_KEYS("channels, >= 1"),
    WINDOW_KEYS("0", "window height and width (0: the whole input)", "1",
                "both strides (0 when k is 0)"),
    {"pad_bottom", "pad_h", ">= 0 (pad_h: top)", NULL},
    {"pad_right", "pad_w", ">= 0 (pad_w: left)", NULL},
    {"auto_pad", "notset", "notset, same_upper, same_lower, valid (ONNX; sets the paddings)", NULL},
    {"dilation", "1", "both dilations", NULL},
    {"dilation_h", "dilation", ">= 1", NULL},
    {"dilation_w", "dilation", ">= 1", NULL},
    {"ceil_mode", "0", "0 or 1: output size rounded up", NULL},
    {"mode", "max", "max, avg", NULL},
    {"count_include_pad", "0", "0 or 1 (avg)", NULL},
    {"in", "NCHW", LAYOUTS, NULL},
    {"out", "NCHW", LAYOUTS, NULL},
    END};
/* the int8 problems: the fp32 kind's keys and the quantization params (docs/quantized.md) */
#define QKEYS(x, what)                                                                            \
  {x "_scale", "1", what " scale, > 0 (fp32)", NULL}, {x "_zp", "0", what " zero point, -128..127", NULL}
static const topi_problem_key qconv_keys[] = {
    CONV_KEYS,
    {"groups", "1", "1, or c = oc = groups: depthwise", NULL},
    {"in", "NCHW16c", "NCHW<x>c, x a multiple of 4", NULL},
    {"out", "NCHW16c", "NCHW<y>c, y a multiple of 4", NULL},
    {"bias", "0", "0 or 1 (int32)", NULL},
    {"act", "none", "none, relu, relu6 (clamps)", NULL},
    QKEYS("in", "input"),
    QKEYS("out", "output"),
    END};
static const topi_problem_key qdense_keys[] = {
    {"m", NULL, "rows of a and out, >= 1", "64"},
    {"n", NULL, "columns of out (rows of w [n][k]), >= 1", "64"},
    {"k", NULL, "the reduction, >= 1", "64"},
    {"bias", "0", "0 or 1 (int32)", NULL},
    {"act", "none", "none, relu, relu6 (clamps)", NULL},
    QKEYS("in", "input"),
    QKEYS("out", "output"),
    END};
static const topi_problem_key qpool_keys[] = {
    INPUT_KEYS("channels, >= 1"),
    WINDOW_KEYS("2", "window height and width", "2", "both strides"),
    {"mode", "max", "max, avg", NULL},
    {"count_include_pad", "0", "0 or 1 (avg)", NULL},
    {"layout", "NCHW", LAYOUTS " (in and out)", NULL},
    QKEYS("in", "input"),
    QKEYS("out", "output"),
    END};
static const topi_problem_key qadd_keys[] = {
    {"n", "1", "batch, >= 1", NULL},   {"c", NULL, "channels, >= 1", "16"},
    {"h", NULL, "height, >= 1", "14"}, {"w", NULL, "width, >= 1", "14"},
    {"layout", "NCHW", LAYOUTS, NULL}, {"act", "none", "none, relu, relu6 (clamps)", NULL},
    QKEYS("a", "first input"),
    QKEYS("b", "second input"),
    QKEYS("out", "output"),
    END};
static const topi_problem_key bmm_keys[] = {
    {"batch", "1", "batch entries (attention: heads), >= 1", NULL},
    {"m", NULL, "rows of a and out, >= 1", "128"},
    {"n", NULL, "columns of b and out, >= 1", "64"},
    {"k", NULL, "the reduction, >= 1", "64"},
    {"ta", "0", "0 or 1: a given transposed ([batch][k][m])", NULL},
    {"tb", "0", "0 or 1: b given transposed ([batch][n][k])", NULL},
    END};
static const topi_problem_key softmax_keys[] = {
    {"m", "1", "rows, >= 1", NULL}, {"n", NULL, "row length, >= 1", "64"}, END};
static const topi_problem_key eltwise_keys[] = {
    {"n", "1", "batch, >= 1", NULL},   {"c", NULL, "channels, >= 1", "16"},
    {"h", NULL, "height, >= 1", "14"}, {"w", NULL, "width, >= 1", "14"},
    {"layout", "NCHW", LAYOUTS, NULL}, {"act", "none", "none, relu, relu6", NULL},
    END};

/* Defaults that differ per template (what the template computes); "c": the value of c. */
static const struct {
  const char *tmpl, *key, *dflt;
} overrides[] = {
    {"conv2d_nchwc", "out", "NCHW16c"},
    {"conv2d_winograd", "out", "NCHW16c"},
    {"conv2d_winograd", "k", "3"},
    {"conv2d_winograd", "pad", "1"},
    {"conv2d_im2col", "out", "NHWC"},
    {"depthwise_nchwc", "groups", "c"},
    {"depthwise_nchwc", "oc", "c"},
    {"depthwise_nchwc", "in", "NCHW16c"},
    {"depthwise_nchwc", "out", "NCHW16c"},
    {"depthwise_nchwc", "k", "3"},
    {"depthwise_nchwc", "pad", "1"},
    {"dw_spatial_pack", "groups", "c"},
    {"dw_spatial_pack", "oc", "c"},
    {"dw_spatial_pack", "k", "3"},
    {"dw_spatial_pack", "pad", "1"},
    {"pool2d", "k", "2"},
    {"pool2d", "stride", "2"},
    {"qnn_depthwise", "groups", "c"},
    {"qnn_depthwise", "oc", "c"},
    {"qnn_depthwise", "k", "3"},
    {"qnn_depthwise", "pad", "1"},
};

static const topi_problem_key no_keys[] = {END};

const topi_problem_key *topi_problem_keys(const topi_template *t) {
  switch (t->problem_kind) {
  case TOPI_PROBLEM_CONV2D: return conv_keys;
  case TOPI_PROBLEM_LAYOUT: return layout_keys;
  case TOPI_PROBLEM_DW_PW: return dw_pw_keys;
  case TOPI_PROBLEM_POOL: return pool_keys;
  case TOPI_PROBLEM_SOFTMAX: return softmax_keys;
  case TOPI_PROBLEM_ELTWISE: return eltwise_keys;
  case TOPI_PROBLEM_DENSE: return dense_keys;
  case TOPI_PROBLEM_BATCH_MATMUL: return bmm_keys;
  case TOPI_PROBLEM_QCONV2D: return qconv_keys;
  case TOPI_PROBLEM_QDENSE: return qdense_keys;
  case TOPI_PROBLEM_QPOOL: return qpool_keys;
  case TOPI_PROBLEM_QADD: return qadd_keys;
  }
  return no_keys;
}

const char *topi_problem_key_default(const topi_template *t, const char *key) {
  for (size_t i = 0; i < sizeof overrides / sizeof *overrides; i++)
    if (!strcmp(overrides[i].tmpl, t->name) && !strcmp(overrides[i].key, key)) return overrides[i].dflt;
  for (const topi_problem_key *k = topi_problem_keys(t); k->key; k++)
    if (!strcmp(k->key, key)) return k->dflt;
  return NULL;
}

const char *topi_problem_key_names(tec_ctx *ctx, const topi_template *t) {
  char buf[512];
  buf[0] = 0;
  for (const topi_problem_key *k = topi_problem_keys(t); k->key; k++)
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", k == topi_problem_keys(t) ? "" : " ", k->key);
  return tec_ctx_strdup(ctx, buf);
}

/* "c=16,h=14,w=14,oc=32": a value for every key t requires */
const char *topi_problem_example(tec_ctx *ctx, const topi_template *t) {
  char buf[256];
  buf[0] = 0;
  for (const topi_problem_key *k = topi_problem_keys(t); k->key; k++)
    if (!topi_problem_key_default(t, k->key))
      snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s=%s", *buf ? "," : "", k->key, k->example);
  return tec_ctx_strdup(ctx, buf);
}

int topi_problem_keys_check(const topi_template *t, const topi_kv *p) {
  for (const topi_problem_key *k = topi_problem_keys(t); k->key; k++) {
    if (topi_problem_key_default(t, k->key)) continue;
    int given = 0;
    for (int i = 0; i < p->n; i++) /* oc: c when groups > 1 */
      given |= !strcmp(p->key[i], k->key) ||
               (!strcmp(k->key, "oc") && !strcmp(p->key[i], "groups") && strcmp(p->val[i], "1"));
    if (!given)
      return tec_ctx_set_error(p->ctx, "%s%s%s is missing (%s: %s); e.g. --shape %s (tec list %s)", p->what, p->sep,
                               k->key, t->name, k->legal, topi_problem_example(p->ctx, t), t->name),
             -1;
  }
  return 0;
}

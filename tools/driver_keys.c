/* driver_keys.c — the `tec` command's --shape keys, as data: per problem kind each key with
 * its default (or none: required) and its legal values, per template the defaults that differ
 * (conv2d_nchwc writes NCHW16c, the depthwise templates default groups to c), and an example
 * value for each required key. `tec list OP` prints the table and an example command line;
 * a missing required key is named as missing; tests/test_cli.c runs every template's example
 * (its defaults) and checks the template accepts it. */
#include <stdio.h>
#include <string.h>
#include "tec/space.h"
#include "tools/driver_internal.h"

typedef struct drv_key {
  const char *key;
  const char *dflt;    /* NULL: required */
  const char *legal;   /* the values, for people */
  const char *example; /* a required key: a value for the example line */
} drv_key;

#define END {NULL, NULL, NULL, NULL}
#define LAYOUTS "NCHW, NHWC, NCHW<x>c (e.g. NCHW16c)"
static const drv_key conv_keys[] = {
    {"n", "1", "batch, >= 1", NULL},
    {"c", NULL, "input channels, >= 1", "16"},
    {"h", NULL, "input height, >= 1", "14"},
    {"w", NULL, "input width, >= 1", "14"},
    {"oc", NULL, "output channels, >= 1 (default c when groups > 1)", "32"},
    {"k", "1", "kernel height and width", NULL},
    {"kh", "k", ">= 1", NULL},
    {"kw", "k", ">= 1", NULL},
    {"stride", "1", "both strides", NULL},
    {"stride_h", "stride", ">= 1", NULL},
    {"stride_w", "stride", ">= 1", NULL},
    {"pad", "0", "both paddings", NULL},
    {"pad_h", "pad", ">= 0", NULL},
    {"pad_w", "pad", ">= 0", NULL},
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
static const drv_key layout_keys[] = {
    {"n", "1", "batch, >= 1", NULL},         {"c", NULL, "channels, >= 1", "16"},
    {"h", NULL, "height, >= 1", "14"},       {"w", NULL, "width, >= 1", "14"},
    {"from", "NCHW", LAYOUTS, NULL},         {"to", "NCHW", LAYOUTS, NULL},
    END};
static const drv_key dense_keys[] = {
    {"m", NULL, "rows of a and out, >= 1", "64"},
    {"n", NULL, "columns of b and out, >= 1", "64"},
    {"k", NULL, "the reduction, >= 1", "64"},
    {"bt", "0", "0 or 1: b given transposed ([n][k])", NULL},
    {"const_b", "1", "0 or 1: b is a constant (packed once, in prepare)", NULL},
    {"bias", "0", "0 or 1", NULL},
    {"residual", "0", "0 or 1", NULL},
    {"act", "none", "none, relu, relu6", NULL},
    END};
static const drv_key dw_pw_keys[] = {
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
static const drv_key pool_keys[] = {
    {"n", "1", "batch, >= 1", NULL},
    {"c", NULL, "channels, >= 1", "16"},
    {"h", NULL, "input height, >= 1", "14"},
    {"w", NULL, "input width, >= 1", "14"},
    {"k", "0", "window height and width (0: the whole input)", NULL},
    {"kh", "k", ">= 1", NULL},
    {"kw", "k", ">= 1", NULL},
    {"stride", "1", "both strides (0 when k is 0)", NULL},
    {"stride_h", "stride", ">= 1", NULL},
    {"stride_w", "stride", ">= 1", NULL},
    {"pad", "0", "both paddings", NULL},
    {"pad_h", "pad", ">= 0", NULL},
    {"pad_w", "pad", ">= 0", NULL},
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
static const drv_key bmm_keys[] = {
    {"batch", "1", "batch entries (attention: heads), >= 1", NULL},
    {"m", NULL, "rows of a and out, >= 1", "128"},
    {"n", NULL, "columns of b and out, >= 1", "64"},
    {"k", NULL, "the reduction, >= 1", "64"},
    {"ta", "0", "0 or 1: a given transposed ([batch][k][m])", NULL},
    {"tb", "0", "0 or 1: b given transposed ([batch][n][k])", NULL},
    END};
static const drv_key softmax_keys[] = {
    {"m", "1", "rows, >= 1", NULL}, {"n", NULL, "row length, >= 1", "64"}, END};
static const drv_key eltwise_keys[] = {
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
};

static const drv_key *keys_of(const topi_template *t) {
  switch (t->problem_kind) {
  case TOPI_PROBLEM_CONV2D: return conv_keys;
  case TOPI_PROBLEM_LAYOUT: return layout_keys;
  case TOPI_PROBLEM_DW_PW: return dw_pw_keys;
  case TOPI_PROBLEM_POOL: return pool_keys;
  case TOPI_PROBLEM_SOFTMAX: return softmax_keys;
  case TOPI_PROBLEM_ELTWISE: return eltwise_keys;
  case TOPI_PROBLEM_DENSE: return dense_keys;
  case TOPI_PROBLEM_BATCH_MATMUL: return bmm_keys;
  case TOPI_PROBLEM_QCONV2D: case TOPI_PROBLEM_QDENSE: case TOPI_PROBLEM_QPOOL:
  case TOPI_PROBLEM_QADD: break; /* not in the command (driver_params.c refuses them) */
  }
  return dense_keys;
}

const char *drv_key_default(const topi_template *t, const char *key) {
  for (size_t i = 0; i < sizeof overrides / sizeof *overrides; i++)
    if (!strcmp(overrides[i].tmpl, t->name) && !strcmp(overrides[i].key, key)) return overrides[i].dflt;
  for (const drv_key *k = keys_of(t); k->key; k++)
    if (!strcmp(k->key, key)) return k->dflt;
  return NULL;
}

const char *drv_problem_keys(const topi_template *t) {
  static char buf[512];
  buf[0] = 0;
  for (const drv_key *k = keys_of(t); k->key; k++)
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", k == keys_of(t) ? "" : " ", k->key);
  return buf;
}

/* "c=16,h=14,w=14,oc=32": a value for every key t requires */
static const char *example(const topi_template *t) {
  static char buf[256];
  buf[0] = 0;
  for (const drv_key *k = keys_of(t); k->key; k++)
    if (!drv_key_default(t, k->key))
      snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s=%s", *buf ? "," : "", k->key, k->example);
  return buf;
}

int drv_keys_check(const topi_template *t, const tec_gen_params *p) {
  for (const drv_key *k = keys_of(t); k->key; k++) {
    if (drv_key_default(t, k->key)) continue;
    int given = 0;
    for (int i = 0; i < p->n; i++) /* oc: c when groups > 1 */
      given |= !strcmp(p->key[i], k->key) ||
               (!strcmp(k->key, "oc") && !strcmp(p->key[i], "groups") && strcmp(p->val[i], "1"));
    if (!given)
      return tec_ctx_set_error(p->ctx, "--shape: %s is missing (%s: %s); e.g. --shape %s (tec list %s)",
                               k->key, t->name, k->legal, example(t), t->name),
             -1;
  }
  return 0;
}

int drv_list_op(const topi_template *t) {
  printf("%s: %s\n--shape keys (KEY=VALUE, comma separated):\n", t->name, t->doc);
  printf("  %-18s %-10s %s\n", "key", "default", "legal values");
  for (const drv_key *k = keys_of(t); k->key; k++) {
    const char *d = drv_key_default(t, k->key);
    printf("  %-18s %-10s %s\n", k->key, d ? d : "required", k->legal);
  }
  printf("e.g. tec print %s --shape %s\n", t->name, example(t));
  /* the knobs (--config), for the example on the host: what the space looks like */
  tec_ctx *ctx = tec_ctx_new();
  tec_gen_params p;
  drv_problem prob;
  tune_space sp;
  const tec_target *host = ctx ? tec_target_parse(ctx, NULL) : NULL;
  if (host && drv_params_parse(ctx, example(t), &p) == 0 && drv_problem_parse(t, &p, &prob) == 0 &&
      t->space(ctx, &prob, host, &sp) == 0) {
    printf("--config knobs (tec print ... --config KNOB=V,...), for the example on this host:\n");
    tune_space_print(stdout, &sp);
  } else {
    printf("--config knobs: (the example's space: %s)\n", ctx ? tec_ctx_error(ctx) : "out of memory");
  }
  tec_ctx_free(ctx);
  return 0;
}

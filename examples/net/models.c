/* models.c — MobileNet v1, MobileNet v2 and ResNet-18 as lists of topi layers
 * (include/tec/net.h builders):
 *
 *   MobileNet v1: conv 3x3/2 (relu6), 13 x [depthwise 3x3/s (relu6), pointwise 1x1 (relu6)],
 *                 global average pool, fully connected, softmax
 *   MobileNet v2: conv 3x3/2 (relu6), 17 inverted residual blocks [expand 1x1 x t (relu6; not
 *                 in the first block, t = 1), depthwise 3x3/s (relu6), project 1x1 (linear)
 *                 + the block's input fused into the project's epilogue where s = 1 and the
 *                 channels agree], conv 1x1 to 1280 (relu6), global average pool, fully
 *                 connected, softmax (channels: width x c rounded to a multiple of 8, as the
 *                 reference model's _make_divisible; the 1280 head only grows with width > 1)
 *   ResNet-18:    conv 7x7/2 (relu), max pool 3x3/2, 4 stages x 2 basic blocks [conv 3x3/s
 *                 (relu), conv 3x3 + residual (relu); a 1x1/s projection where the shape
 *                 changes], global average pool, fully connected, softmax
 *
 * Batch norm is taken as folded into the convolutions' weights and biases (inference). */
#include "models.h"
#include <stdio.h>

static int64_t scaled(double width, int64_t c) {
  int64_t v = (int64_t)(c * width + 0.5);
  return v < 1 ? 1 : v;
}

/* global average pool, fully connected, softmax */
static int head(net *n, int x, int64_t classes) {
  x = net_global_pool(n, "avgpool", x);
  x = net_dense(n, "fc", x, classes);
  return net_softmax(n, "softmax", x);
}

static int mobilenet_v1(net *n, double a, int64_t classes) {
  static const struct { int64_t c, s; } blocks[13] = {
      {64, 1}, {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2}, {512, 1},
      {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
  int x = net_conv(n, "conv1", 0, scaled(a, 32), 3, 2, 0, TOPI_ACT_RELU6, -1);
  char name[32];
  for (int i = 0; i < 13 && x >= 0; i++) {
    snprintf(name, sizeof name, "dw%d", i + 1);
    x = net_conv(n, name, x, n->values[x].c, 3, blocks[i].s, 1, TOPI_ACT_RELU6, -1);
    if (x < 0) break;
    snprintf(name, sizeof name, "pw%d", i + 1);
    x = net_conv(n, name, x, scaled(a, blocks[i].c), 1, 1, 0, TOPI_ACT_RELU6, -1);
  }
  return head(n, x, classes);
}

/* round(c * width) to a multiple of 8, at least 8 and not below 90 % of c * width (the
 * reference MobileNet v2's _make_divisible) */
static int64_t div8(double width, int64_t c) {
  double v = c * width;
  int64_t r = (int64_t)(v + 4) / 8 * 8;
  if (r < 8) r = 8;
  if (r < 0.9 * v) r += 8;
  return r;
}

static int mobilenet_v2(net *n, double a, int64_t classes) {
  static const struct { int64_t t, c, reps, s; } stages[7] = {
      {1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int x = net_conv(n, "conv1", 0, div8(a, 32), 3, 2, 0, TOPI_ACT_RELU6, -1);
  char name[32];
  int b = 0;
  for (int st = 0; st < 7; st++)
    for (int r = 0; r < stages[st].reps && x >= 0; r++) {
      int64_t c_in = n->values[x].c, c = div8(a, stages[st].c), s = r == 0 ? stages[st].s : 1;
      int y = x;
      b++;
      if (stages[st].t != 1) {
        snprintf(name, sizeof name, "b%d_expand", b);
        y = net_conv(n, name, y, c_in * stages[st].t, 1, 1, 0, TOPI_ACT_RELU6, -1);
      }
      snprintf(name, sizeof name, "b%d_dw", b);
      if (y >= 0) y = net_conv(n, name, y, n->values[y].c, 3, s, 1, TOPI_ACT_RELU6, -1);
      snprintf(name, sizeof name, "b%d_project", b);
      int res = s == 1 && c_in == c ? x : -1; /* linear bottleneck, the residual fused */
      x = net_conv(n, name, y, c, 1, 1, 0, TOPI_ACT_NONE, res);
    }
  x = net_conv(n, "conv_last", x, div8(a > 1 ? a : 1, 1280), 1, 1, 0, TOPI_ACT_RELU6, -1);
  return head(n, x, classes);
}

static int resnet18(net *n, double a, int64_t classes) {
  int x = net_conv(n, "conv1", 0, scaled(a, 64), 7, 2, 0, TOPI_ACT_RELU, -1);
  x = net_max_pool(n, "maxpool", x, 3, 2, 1);
  char name[32];
  for (int st = 0; st < 4 && x >= 0; st++)
    for (int blk = 0; blk < 2 && x >= 0; blk++) {
      int64_t c = scaled(a, 64 << st), s = st > 0 && blk == 0 ? 2 : 1;
      int shortcut = x;
      if (s != 1 || n->values[x].c != c) {
        snprintf(name, sizeof name, "layer%d_%d_down", st + 1, blk);
        shortcut = net_conv(n, name, x, c, 1, s, 0, TOPI_ACT_NONE, -1);
      }
      snprintf(name, sizeof name, "layer%d_%d_conv1", st + 1, blk);
      int y = net_conv(n, name, x, c, 3, s, 0, TOPI_ACT_RELU, -1);
      snprintf(name, sizeof name, "layer%d_%d_conv2", st + 1, blk);
      x = net_conv(n, name, y, c, 3, 1, 0, TOPI_ACT_RELU, shortcut);
    }
  return head(n, x, classes);
}

const char *model_title(net_kind kind) {
  return kind == NET_RESNET18 ? "ResNet-18" : kind == NET_MOBILENET_V2 ? "MobileNet v2" : "MobileNet v1";
}

net *model_create(const model_options *o, char *err, size_t errlen) {
  model_options m = *o;
  if (!m.size) m.size = 224;
  if (m.width == 0) m.width = 1.0;
  if (!m.classes) m.classes = 1000;
  const char *bad = NULL;
  if (m.kind != NET_MOBILENET_V1 && m.kind != NET_MOBILENET_V2 && m.kind != NET_RESNET18) bad = "unknown network kind";
  else if (m.batch < 0 || m.classes < 1 || m.block < 0 || m.width <= 0)
    bad = "batch, classes and block must be >= 1 and width > 0";
  else if (m.size < 32)
    bad = "the input must be at least 32x32 (five stride-2 steps)";
  if (bad) {
    snprintf(err, errlen, "model_create: %s", bad);
    return NULL;
  }
  net_options no = {.batch = m.batch, .block = m.block, .seed = m.seed, .no_margins = m.no_margins,
                    .direct = m.direct, .records = m.records};
  net *n = net_new(&no, 3, m.size, m.size, err, errlen);
  if (!n) return NULL;
  int out = m.kind == NET_MOBILENET_V1   ? mobilenet_v1(n, m.width, m.classes)
            : m.kind == NET_MOBILENET_V2 ? mobilenet_v2(n, m.width, m.classes)
                                         : resnet18(n, m.width, m.classes);
  if (out < 0 || net_finish(n)) { /* finished: the margins decided, as the test checks */
    snprintf(err, errlen, "model_create: %s", net_error(n));
    net_free(n);
    return NULL;
  }
  return n;
}

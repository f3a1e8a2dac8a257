/* test_mobilenet_v2.c — MobileNet v2 (examples/net/models.c over the network library,
 * include/tec/net.h) at a reduced size (32x32, width 0.25: every stage and stride, the fused
 * residuals, 8-channel depthwise layers in blocks of the host's lanes) against the naive C
 * reference of the same network (support/netref.c). Its structure is checked too: 17 inverted
 * residual blocks, ReLU6 fused into every expand / depthwise layer and none into the linear
 * projections, the residual fused into the projection of each stride-1 block whose channels
 * agree (10 of them at 224), nothing between the layers but the layers.
 * int8 (include/tec/qnet.h): the same network on the qnn templates, calibrated on the fp32
 * network, bit-exact in every activation against a plain-C int8 forward pass over the same
 * quantized weights and params (support/qnnref.c: qref_conv2d, qref_add, qref_pool,
 * qref_dense; the image quantized here too), its dequantized logits near the fp32 ones; bad
 * networks and calls refused with their messages. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "netref.h"
#include "qnnref.h"
#include "tec/qnet.h"
#include "testutil.h"

static net *create(model_options o) {
  char err[256];
  net *n = model_create(&o, err, sizeof err);
  ck_assert_msg(n != NULL, "%s", err);
  return n;
}

/* the layers and their fusions */
START_TEST(structure) {
  net *n = create((model_options){.kind = NET_MOBILENET_V2, .size = 224, .seed = 1});
  int expand = 0, dw = 0, project = 0, res = 0, stride2 = 0;
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    if (L->op != NET_CONV) continue;
    const topi_conv2d *p = &L->conv;
    if (strstr(L->name, "_expand")) {
      expand++;
      ck_assert_int_eq(p->kh, 1); ck_assert_int_eq(p->epi.act, TOPI_ACT_RELU6);
      ck_assert_int_eq(p->c_out, 6 * p->c_in);
    } else if (strstr(L->name, "_dw")) {
      dw++, stride2 += p->stride_h == 2;
      ck_assert_int_eq(p->groups, p->c_in); ck_assert_int_eq(p->kh, 3);
      ck_assert_int_eq(p->epi.act, TOPI_ACT_RELU6);
    } else if (strstr(L->name, "_project")) {
      project++;
      ck_assert_int_eq(p->kh, 1); ck_assert_int_eq(p->epi.act, TOPI_ACT_NONE);
      if (L->res >= 0) { /* the block's input: the expand's (or the dw's) input */
        res++;
        ck_assert(p->epi.residual);
        const net_layer *first = &n->layers[i - 1];
        if (strstr(n->layers[i - 2].name, "_expand")) first = &n->layers[i - 2];
        ck_assert_int_eq(L->res, first->in);
        ck_assert_int_eq(n->layers[i - 1].conv.stride_h, 1);
      }
    }
  }
  ck_assert_int_eq(expand, 16); ck_assert_int_eq(dw, 17); ck_assert_int_eq(project, 17);
  ck_assert_int_eq(res, 10); ck_assert_int_eq(stride2, 4);
  /* stem 32 at 112, the last block 320 at 7, the head 1280, fc 1000 */
  ck_assert_int_eq(n->values[n->layers[0].out].c, 32);
  ck_assert_int_eq(n->values[n->layers[0].out].h, 112);
  int last = n->nlayers - 4; /* conv_last, avgpool, fc, softmax */
  ck_assert_str_eq(n->layers[last].name, "conv_last");
  ck_assert_int_eq(n->values[n->layers[last].in].c, 320);
  ck_assert_int_eq(n->values[n->layers[last].in].h, 7);
  ck_assert_int_eq(n->values[n->layers[last].out].c, 1280);
  ck_assert_int_eq(net_classes(n), 1000);
  /* 2 x MACs of the convolutions and the fc: about 0.60 GFLOP (../shared/workloads.md) */
  double flops = 0;
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    const net_value *o = &n->values[L->out];
    if (L->op == NET_CONV)
      flops += 2.0 * (double)(o->c * o->h * o->w) * (double)(L->conv.c_in / L->conv.groups) * 9.0 /
               (L->conv.kh == 1 ? 9.0 : 1.0);
    if (L->op == NET_FC) flops += 2.0 * (double)(L->fc.n * L->fc.k);
  }
  ck_assert_msg(flops > 0.58e9 && flops < 0.62e9, "%g FLOP", flops);
  /* as text (`tec net FILE`): net_parse(net_text(n)) builds the same layers and residuals */
  tec_ctx *ctx = tec_ctx_new();
  char err[256];
  const char *text = net_text(n, ctx);
  ck_assert_ptr_nonnull(text);
  tu_assert_contains(text, "conv b3_project in=b3_dw oc=24 k=1 stride=1 act=none res=b2_project");
  net *t = net_parse(&(net_options){.seed = 1}, text, err, sizeof err);
  ck_assert_msg(t != NULL, "%s", err);
  ck_assert_int_eq(t->nlayers, n->nlayers);
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *a = &n->layers[i], *b = &t->layers[i];
    ck_assert_str_eq(a->name, b->name);
    ck_assert_int_eq(a->op, b->op);
    ck_assert_int_eq(a->in, b->in);
    ck_assert_int_eq(a->res, b->res);
    ck_assert_int_eq(a->conv.c_out, b->conv.c_out);
    ck_assert_int_eq(a->conv.stride_h, b->conv.stride_h);
    ck_assert_int_eq(a->conv.groups, b->conv.groups);
    ck_assert_int_eq(a->conv.epi.act, b->conv.epi.act);
  }
  net_free(t);
  tec_ctx_free(ctx);
  net_free(n);
}
END_TEST

/* builds, runs and checks n against the reference; the logits' max error relative to their
 * largest magnitude */
static double fp32_error(net *n) {
  ck_assert_msg(net_compile(n) == 0, "%s", net_error(n));
  ck_assert_msg(net_prepare(n) == 0, "%s", net_error(n));
  float *img = net_image(n, 5);
  int64_t out = n->opt.batch * net_classes(n);
  float *logits = malloc(sizeof(float) * (size_t)out), *probs = malloc(sizeof(float) * (size_t)out);
  nr_forward(n, img, logits, probs);
  ck_assert_msg(net_run(n, img, NULL) == 0, "%s", net_error(n));
  double lmax = 0, dmax = 0;
  for (int64_t i = 0; i < out; i++) {
    lmax = fmax(lmax, fabs(logits[i]));
    dmax = fmax(dmax, fabs((double)net_logits(n)[i] - logits[i]));
  }
  ck_assert_msg(lmax > 0.1, "the reference's logits are all near 0 (%g): a weak test", lmax);
  ck_assert_double_lt(tu_max_err(net_probs(n), probs, out), 1e-5);
  free(img), free(logits), free(probs);
  return dmax / lmax;
}

/* the image quantized with value 0's params into its blocked layout: clamp(round_even(x /
 * scale) + zp) in fp32 (docs/quantized.md), lanes past c the zero point */
static void quantize(const qnet_value *v, const float *img, int8_t *out) {
  memset(out, v->q.zero_point, (size_t)qref_numel(v->layout, v->n, v->c, v->h, v->w));
  for (int64_t n = 0; n < v->n; n++)
    for (int64_t c = 0; c < v->c; c++)
      for (int64_t y = 0; y < v->h; y++)
        for (int64_t x = 0; x < v->w; x++) {
          float f = rintf(img[((n * v->c + c) * v->h + y) * v->w + x] / v->q.scale) + (float)v->q.zero_point;
          out[qref_index(v->layout, v->c, v->h, v->w, n, c, y, x)] = (int8_t)fmaxf(-128.0f, fminf(127.0f, f));
        }
}

/* fp32 against the reference, then int8 calibrated on it (one fp32 build for both) */
START_TEST(fp32_int8) {
  net *n = create((model_options){.kind = NET_MOBILENET_V2, .size = 32, .width = 0.25,
                                  .classes = 10, .seed = 3});
  ck_assert_int_eq(n->nlayers, 55);
  double e = fp32_error(n);
  printf("MobileNet v2 32x32 width 0.25, fp32: logits' max error %.3g of the largest\n", e);
  ck_assert_msg(e < 1e-4, "logits: max error %g of the largest", e);
  int res = 0; /* width 0.25: b1 keeps its 8 channels, so 11 residual blocks */
  for (int i = 0; i < n->nlayers; i++) res += n->layers[i].res >= 0;
  ck_assert_int_eq(res, 11);
  float *calib = net_image(n, 11), *img = net_image(n, 5);
  char err[512];
  qnet *q = qnet_new(n, calib, err, sizeof err);
  ck_assert_msg(q != NULL, "%s", err);
  /* the layers: 52 convolutions, 11 residual adds, the pool and the dense layer */
  int conv = 0, dw = 0, add = 0;
  for (int i = 0; i < q->nlayers; i++) {
    const qnet_layer *L = &q->layers[i];
    conv += !strcmp(L->tmpl, "qnn_conv2d"), dw += !strcmp(L->tmpl, "qnn_depthwise");
    add += !strcmp(L->tmpl, "qnn_add");
    if (L->w) /* per-channel scales from the calibration: not all one value */
      ck_assert_float_ne(L->w_scale[0], L->w_scale[1]);
  }
  ck_assert_int_eq(conv, 35);
  ck_assert_int_eq(dw, 17);
  ck_assert_int_eq(add, res);
  ck_assert_int_eq(q->nlayers, 54 + res);
  ck_assert_msg(qnet_compile(q) == 0 && qnet_prepare(q) == 0, "%s", qnet_error(q));
  ck_assert_msg(qnet_run(q, img, NULL) == 0, "%s", qnet_error(q));
  /* the reference, value by value */
  int8_t **v = calloc((size_t)q->nvalues, sizeof *v);
  for (int i = 0; i < q->nvalues; i++) {
    const qnet_value *x = &q->values[i];
    v[i] = malloc((size_t)qref_numel(x->layout, x->n, x->c, x->h, x->w));
  }
  quantize(&q->values[0], img, v[0]);
  int64_t checked = 0;
  for (int i = 0; i < q->nlayers; i++) {
    const qnet_layer *L = &q->layers[i];
    if (!strcmp(L->tmpl, "qnn_add")) qref_add(&L->add, v[L->in], v[L->in2], v[L->out]);
    else if (!strcmp(L->tmpl, "qnn_pool")) qref_pool(&L->pool, v[L->in], v[L->out]);
    else if (!strcmp(L->tmpl, "qnn_dense")) qref_dense(&L->fc, v[L->in], L->w, L->b, L->w_scale, v[L->out], NULL);
    else qref_conv2d(&L->conv, v[L->in], L->w, L->b, L->w_scale, v[L->out], NULL);
    const qnet_value *o = &q->values[L->out];
    int64_t cnt = qref_numel(o->layout, o->n, o->c, o->h, o->w), bad = 0, first = -1;
    for (int64_t k = 0; k < cnt; k++)
      if (o->data[k] != v[L->out][k] && !bad++) first = k;
    ck_assert_msg(bad == 0, "layer %s (%s): %lld of %lld outputs differ, the first at %lld: %d, "
                  "reference %d", L->name, L->tmpl, (long long)bad, (long long)cnt, (long long)first,
                  first < 0 ? 0 : o->data[first], first < 0 ? 0 : v[L->out][first]);
    checked += cnt;
  }
  /* the int8 logits against the fp32 network's on the same image */
  ck_assert_int_eq(net_run(n, img, NULL), 0);
  double lmax = 0, dmax = 0;
  int am = 0, bm = 0;
  for (int k = 0; k < 10; k++) {
    lmax = fmax(lmax, fabs(net_logits(n)[k]));
    dmax = fmax(dmax, fabs((double)qnet_logits(q)[k] - net_logits(n)[k]));
    am = net_logits(n)[k] > net_logits(n)[am] ? k : am, bm = qnet_logits(q)[k] > qnet_logits(q)[bm] ? k : bm;
  }
  printf("MobileNet v2 32x32 width 0.25, int8: %lld outputs of %d layers bit-exact; logits' max "
         "error against fp32 %.3g of the largest (%.3g), top class %d (fp32 %d)\n",
         (long long)checked, q->nlayers, dmax / lmax, lmax, bm, am);
  /* quantization noise through 17 blocks of random weights, calibrated on another image
   * (0.27 measured): a gross check only; wrong params or a skipped layer give errors near or
   * above the logits themselves */
  ck_assert_msg(dmax / lmax < 0.5, "int8 logits: max error %g of the largest", dmax / lmax);
  for (int i = 0; i < q->nvalues; i++) free(v[i]);
  free(v), free(calib), free(img);
  qnet_free(q);
  net_free(n);
}
END_TEST

/* qnet_emit (net/qnet_emit.c) on the small network c (8 channels, 3x3) -> pool -> fc (5): bad
 * arguments refused by name; for the host, qparams.bin holds the int8 weights, then the int32
 * biases, then the f32 scales, each array from a 64-byte boundary (the run itself:
 * examples/net_aot, test net_aot_host_mobilenet_v2_int8) */
static void emit_checks(qnet *q) {
  ck_assert_int_eq(qnet_emit(q, NULL, NULL, "test", "small", NULL), -1);
  ck_assert_str_eq(qnet_error(q), "qnet_emit: (arguments): dir, generator and title are required");
  ck_assert_int_eq(qnet_emit(q, "llvm -mtriple=sparc9-unknown", "/tmp", "test", "small", NULL), -1);
  ck_assert_msg(strstr(qnet_error(q), "qnet_lower: layer (all): ") == qnet_error(q) &&
                strstr(qnet_error(q), "sparc9"), "%s", qnet_error(q));
  ck_assert_int_eq(qnet_emit(q, NULL, "/nonexistent-dir/x", "test", "small", NULL), -1);
  ck_assert_msg(strstr(qnet_error(q), "/nonexistent-dir/x/qnet_layers.o"), "%s", qnet_error(q));
  char dir[] = "/tmp/tec_qnet_emit_XXXXXX", path[256];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  int64_t bytes = 0;
  ck_assert_msg(qnet_emit(q, NULL, dir, "test", "small", &bytes) == 0, "%s", qnet_error(q));
  /* weights 8*3*3*3 = 216 -> 256 bytes, 5*8 = 40 -> 64; biases and scales 8 -> 16, 5 -> 16 */
  ck_assert_int_eq(bytes, 256 + 64 + 4 * 32 + 4 * 32);
  snprintf(path, sizeof path, "%s/qparams.bin", dir);
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  unsigned char *b = malloc((size_t)bytes + 1);
  ck_assert_int_eq((int64_t)fread(b, 1, (size_t)bytes + 1, f), bytes);
  fclose(f);
  const qnet_layer *c = &q->layers[0], *fc = &q->layers[q->nlayers - 1];
  ck_assert_str_eq(fc->tmpl, "qnn_dense");
  ck_assert_int_eq(memcmp(b, c->w, 216), 0);
  ck_assert_int_eq(memcmp(b + 256, fc->w, 40), 0);
  ck_assert_int_eq(memcmp(b + 320, c->b, 4 * 8), 0);
  ck_assert_int_eq(memcmp(b + 320 + 64, fc->b, 4 * 5), 0);
  ck_assert_int_eq(memcmp(b + 448, c->w_scale, 4 * 8), 0);
  ck_assert_int_eq(memcmp(b + 448 + 64, fc->w_scale, 4 * 5), 0);
  free(b);
  static const char *const files[] = {"qparams.bin", "qnet_layers.o", "qnet_layers.h",
                                      "qnet_model.c", "qnet_model.h"};
  for (int i = 0; i < 5; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    ck_assert_msg(remove(path) == 0, "%s was not written", path);
  }
  rmdir(dir);
}

START_TEST(int8_refused) {
  char err[512];
  net *n = create((model_options){.kind = NET_MOBILENET_V2, .size = 32, .width = 0.25,
                                  .classes = 10, .seed = 3});
  float *img = net_image(n, 1);
  ck_assert_ptr_null(qnet_new(n, NULL, err, sizeof err));
  ck_assert_str_eq(err, "qnet_new: needs a network and a calibration image");
  ck_assert_ptr_null(qnet_new(n, img, err, sizeof err)); /* not compiled */
  ck_assert_str_eq(err, "qnet_new: the fp32 network: net_run: compile the network first");
  free(img);
  net_free(n);
  /* a block the int8 templates cannot take */
  n = net_new(&(net_options){.block = 2}, 3, 8, 8, err, sizeof err);
  ck_assert_ptr_nonnull(n);
  img = net_image(n, 1);
  ck_assert_ptr_null(qnet_new(n, img, err, sizeof err));
  ck_assert_str_eq(err, "qnet_new: the network's block is 2; the int8 templates take a multiple of 4");
  free(img);
  net_free(n);
  /* a head of 6 channels in blocks of 4: the pooled value is not [n][c] */
  n = net_new(&(net_options){.block = 4}, 3, 8, 8, err, sizeof err);
  int x = net_conv(n, "c", 0, 6, 3, 1, 0, TOPI_ACT_RELU, -1);
  x = net_global_pool(n, "pool", x);
  net_dense(n, "fc", x, 5);
  ck_assert_msg(net_compile(n) == 0 && net_prepare(n) == 0, "%s", net_error(n));
  img = net_image(n, 1);
  ck_assert_ptr_null(qnet_new(n, img, err, sizeof err));
  ck_assert_str_eq(err, "qnet_new: layer pool: its channels are not a multiple of the block (the "
                        "dense layer reads the packed output as [n][c])");
  /* 8 channels: accepted; running before compiling is refused */
  net_free(n);
  n = net_new(&(net_options){.block = 4}, 3, 8, 8, err, sizeof err);
  x = net_conv(n, "c", 0, 8, 3, 1, 0, TOPI_ACT_RELU, -1);
  net_dense(n, "fc", net_global_pool(n, "pool", x), 5);
  ck_assert_msg(net_compile(n) == 0 && net_prepare(n) == 0, "%s", net_error(n));
  qnet *q = qnet_new(n, img, err, sizeof err);
  ck_assert_msg(q != NULL, "%s", err);
  ck_assert_int_eq(qnet_run(q, img, NULL), -1);
  ck_assert_str_eq(qnet_error(q), "qnet_run: layer (all): compile the network first");
  ck_assert_int_eq(qnet_prepare(q), -1);
  ck_assert_msg(qnet_compile(q) == 0 && qnet_prepare(q) == 0, "%s", qnet_error(q));
  ck_assert_int_eq(qnet_run(q, NULL, NULL), -1);
  ck_assert_str_eq(qnet_error(q), "qnet_run: layer (input): the image is NULL");
  ck_assert_int_eq(qnet_run(q, img, NULL), 0);
  emit_checks(q);
  qnet_free(q);
  free(img);
  net_free(n);
}
END_TEST

int main(void) {
  Suite *s = suite_create("mobilenet_v2");
  TCase *tc = tcase_create("mobilenet_v2");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, structure);
  tcase_add_test(tc, fp32_int8);
  tcase_add_test(tc, int8_refused);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

/* test_mobilenet_v2.c — MobileNet v2 (examples/net/models.c over the network library,
 * include/tec/net.h) at a reduced size (32x32, width 0.25: every stage and stride, the fused
 * residuals, 8-channel depthwise layers in blocks of the host's lanes) against the naive C
 * reference of the same network (support/netref.c). Its structure is checked too: 17 inverted
 * residual blocks, ReLU6 fused into every expand / depthwise layer and none into the linear
 * projections, the residual fused into the projection of each stride-1 block whose channels
 * agree (10 of them), nothing between the layers but the layers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "netref.h"
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

START_TEST(fp32) {
  net *n = create((model_options){.kind = NET_MOBILENET_V2, .size = 32, .width = 0.25,
                                  .classes = 10, .seed = 3});
  ck_assert_int_eq(n->nlayers, 55);
  double e = fp32_error(n);
  printf("MobileNet v2 32x32 width 0.25, fp32: logits' max error %.3g of the largest\n", e);
  ck_assert_msg(e < 1e-4, "logits: max error %g of the largest", e);
  net_free(n);
}
END_TEST

int main(void) {
  Suite *s = suite_create("mobilenet_v2");
  TCase *tc = tcase_create("mobilenet_v2");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, structure);
  tcase_add_test(tc, fp32);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

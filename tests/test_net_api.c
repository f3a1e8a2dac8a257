/* test_net_api.c — the network library itself (include/tec/net.h), without the example models:
 * a small network built with the builders (three 3x3 convolutions + relu, the third adding the
 * second's output as its residual, global average pool, dense), compiled, prepared and run, against a plain C
 * reference of the same layers on NCHW arrays written here (the layers' plain weights);
 * margins decided between the two convolutions; and bad networks refused by the builders with
 * messages naming the layer and what would be legal (a residual of another shape, a dense
 * layer on a packed 4-D value, a depthwise layer changing the channels, a value that does not
 * exist, a duplicate name, a layer added after compiling, running before compiling); a network
 * as text (net_parse / net_text) round-trips, and bad lines are refused with their number. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tec/net.h"
#include "testutil.h"

enum { C0 = 3, H = 12, W = 10, C1 = 8, CLASSES = 5 };

/* out[co][y][x] = relu?(bias + sum w[co][ci][ky][kx] in[ci][y+ky-1][x+kx-1] (+ res)), 3x3 pad 1 */
static void ref_conv(const float *in, int ci_n, const float *w, const float *b, const float *res,
                     float *out, int co_n) {
  for (int co = 0; co < co_n; co++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        double s = b[co];
        for (int ci = 0; ci < ci_n; ci++)
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
              int iy = y + ky - 1, ix = x + kx - 1;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                s += (double)w[((co * ci_n + ci) * 3 + ky) * 3 + kx] * in[(ci * H + iy) * W + ix];
            }
        if (res) s += res[(co * H + y) * W + x];
        out[(co * H + y) * W + x] = (float)(s > 0 ? s : 0);
      }
}

static net *small_net(int *layers_out) {
  char err[256];
  net *n = net_new(&(net_options){.seed = 11}, C0, H, W, err, sizeof err);
  ck_assert_msg(n != NULL, "%s", err);
  int a = net_conv(n, "c1", 0, C1, 3, 1, 0, TOPI_ACT_RELU, -1);
  int b = net_conv(n, "c2", a, C1, 3, 1, 0, TOPI_ACT_RELU, -1);
  int c = net_conv(n, "c3", b, C1, 3, 1, 0, TOPI_ACT_RELU, b);
  int p = net_global_pool(n, "gap", c);
  int d = net_dense(n, "fc", p, CLASSES);
  ck_assert_msg(a > 0 && b > a && c > b && p > c && d > p, "%s", net_error(n));
  if (layers_out) *layers_out = d;
  return n;
}

START_TEST(runs_like_the_reference) {
  net *n = small_net(NULL);
  ck_assert_int_eq(n->nlayers, 5);
  ck_assert_msg(net_compile(n) == 0, "%s", net_error(n));
  /* c2 reads its padding from c1's ring (margin 1); c2's output is also c3's residual, which
   * shares c3's output margin, and the pool that reads that output takes none: 0 */
  ck_assert_int_eq(n->values[1].layout.margin, 1);
  ck_assert_int_eq(n->layers[1].conv.in_layout.margin, 1);
  ck_assert_int_eq(n->values[2].layout.margin, 0);
  ck_assert_int_eq(n->values[3].layout.margin, 0);
  ck_assert_int_eq(net_classes(n), CLASSES);
  ck_assert_msg(net_prepare(n) == 0, "%s", net_error(n));
  float *img = net_image(n, 3);
  double secs[5];
  ck_assert_msg(net_run(n, img, secs) == 0, "%s", net_error(n));
  for (int i = 0; i < 5; i++) ck_assert(secs[i] >= 0);
  /* the reference */
  const net_layer *L = n->layers;
  float *v1 = malloc(sizeof(float) * C1 * H * W), *v2 = malloc(sizeof(float) * C1 * H * W);
  float *v3 = malloc(sizeof(float) * C1 * H * W);
  float pooled[C1], want[CLASSES];
  ref_conv(img, C0, L[0].w, L[0].b, NULL, v1, C1);
  ref_conv(v1, C1, L[1].w, L[1].b, NULL, v2, C1);
  ref_conv(v2, C1, L[2].w, L[2].b, v2, v3, C1);
  for (int c = 0; c < C1; c++) {
    double s = 0;
    for (int i = 0; i < H * W; i++) s += v3[c * H * W + i];
    pooled[c] = (float)(s / (H * W));
  }
  double mag = 0;
  for (int k = 0; k < CLASSES; k++) {
    double s = L[4].b[k];
    for (int c = 0; c < C1; c++) s += (double)L[4].w[k * C1 + c] * pooled[c];
    want[k] = (float)s, mag = fmax(mag, fabs(s));
  }
  ck_assert_msg(mag > 0.05, "the reference's outputs are all near 0 (%g): a weak test", mag);
  const float *got = net_probs(n); /* the last value: the dense output */
  for (int k = 0; k < CLASSES; k++)
    ck_assert_msg(fabs(got[k] - want[k]) <= 1e-4 * (1 + fabs(want[k])), "output %d: %g, reference %g", k,
                  (double)got[k], (double)want[k]);
  /* a second run gives the same numbers bit for bit (the weights were packed once) */
  float first[CLASSES];
  memcpy(first, got, sizeof first);
  ck_assert_msg(net_run(n, img, NULL) == 0, "%s", net_error(n));
  ck_assert_int_eq(memcmp(first, net_probs(n), sizeof first), 0);
  /* the tuner's task of a layer names the workload its records are looked up by */
  tec_ctx *ctx = tec_ctx_new();
  tune_task task;
  char shape[512];
  OK(ctx, net_task(n, 1, ctx, NULL, &task));
  const char *wl = tec_ctx_printf(ctx, "%s %s", n->layers[1].tmpl,
                                  tune_problem_canon(ctx, net_layer_shape(n, 1, shape, sizeof shape)));
  ck_assert_str_eq(task.workload, wl);
  tu_assert_contains(shape, "in=NCHW");
  tu_assert_contains(shape, "+m1,"); /* the margin is part of the workload */
  ck_assert_int_eq(net_task(n, 9, ctx, NULL, &task), -1);
  ck_assert_str_eq(tec_ctx_error(ctx), "net_task: layer 9; the layers are 0..4");
  tec_ctx_free(ctx);
  free(v1), free(v2), free(v3), free(img);
  net_free(n);
}
END_TEST

/* the message holds want; the network kept its layers */
#define REFUSED(call, n, nl, want)                                                              \
  do {                                                                                         \
    ck_assert_int_eq((call), -1);                                                              \
    tu_assert_contains(net_error(n), want);                                                    \
    ck_assert_int_eq((n)->nlayers, nl);                                                        \
  } while (0)

START_TEST(bad_networks_refused) {
  char err[256], want[300];
  ck_assert_ptr_null(net_new(&(net_options){0}, 0, H, W, err, sizeof err));
  tu_assert_contains(err, "input 0x12x10; each must be >= 1");
  net *n = net_new(&(net_options){.seed = 1}, C0, H, W, err, sizeof err);
  ck_assert_msg(n != NULL, "%s", err);
  long long blk = (long long)n->opt.block;
  int a = net_conv(n, "c1", 0, C1, 3, 1, 0, TOPI_ACT_RELU, -1);
  ck_assert_int_eq(a, 1);
  /* a residual whose shape differs from the output's (4 channels against 8) */
  snprintf(want, sizeof want, "net_conv: layer 'c2': residual value 1 is 8x12x10 NCHW%lldc, the output is "
           "4x12x10 NCHW%lldc; a residual must match the output", blk, blk);
  REFUSED(net_conv(n, "c2", a, 4, 3, 1, 0, TOPI_ACT_RELU, a), n, 1, want);
  /* ... or whose size differs (stride 2 halves the output) */
  REFUSED(net_conv(n, "c2", a, C1, 3, 2, 0, TOPI_ACT_RELU, a), n, 1, "the output is 8x6x5");
  /* a residual that is the NCHW image: another layout */
  REFUSED(net_conv(n, "c2", 0, C0, 3, 1, 0, TOPI_ACT_RELU, 0), n, 1, "residual value 0 is 3x12x10 NCHW, ");
  /* depthwise must keep the channels */
  REFUSED(net_conv(n, "dw", a, 16, 3, 1, 1, TOPI_ACT_RELU, -1), n, 1,
          "net_conv: layer 'dw' is depthwise: its 16 output channels must be the input's 8");
  /* dense reads [batch][c]: a packed 4-D activation is refused, naming what it must be */
  snprintf(want, sizeof want, "net_dense: layer 'fc' reads value 1 as [batch][c], but it is 8x12x10 NCHW%lldc; "
           "it must be NCHW [n][c][1][1] (net_global_pool writes that)", blk);
  REFUSED(net_dense(n, "fc", a, CLASSES), n, 1, want);
  REFUSED(net_softmax(n, "sm", a), n, 1, "net_softmax: layer 'sm' reads value 1 as [batch][c]");
  /* values and names */
  REFUSED(net_max_pool(n, "mp", 7, 3, 2, 1), n, 1, "net_max_pool: layer 'mp' reads value 7; the values are 0..1");
  REFUSED(net_conv(n, "c1", a, C1, 3, 1, 0, TOPI_ACT_RELU, -1), n, 1,
          "net_conv: layer 'c1' exists already (layer names are function names: unique)");
  REFUSED(net_conv(n, "c2", a, C1, 3, 1, 0, TOPI_ACT_RELU, 5), n, 1, "residual value 5; the values are 0..1 (or -1: none)");
  REFUSED(net_conv(n, "c2", a, 0, 3, 1, 0, TOPI_ACT_RELU, -1), n, 1, "0 channels, kernel 3, stride 1; each must be >= 1");
  /* a chain after a refusal keeps the first message */
  REFUSED(net_dense(n, "fc", net_global_pool(n, "gap", 9), CLASSES), n, 1, "net_global_pool: layer 'gap' reads value 9");
  /* running before compiling */
  float *img = net_image(n, 1);
  ck_assert_int_eq(net_run(n, img, NULL), -1);
  ck_assert_str_eq(net_error(n), "net_run: compile the network first");
  ck_assert_int_eq(net_prepare(n), -1);
  ck_assert_str_eq(net_error(n), "net_prepare: compile the network first");
  /* the refusals left a network that still compiles and runs */
  int p = net_global_pool(n, "gap", a);
  ck_assert_int_eq(net_dense(n, "fc", p, CLASSES), 3);
  ck_assert_msg(net_compile(n) == 0 && net_prepare(n) == 0 && net_run(n, img, NULL) == 0, "%s", net_error(n));
  ck_assert_int_eq(net_run(n, NULL, NULL), -1);
  ck_assert_str_eq(net_error(n), "net_run: the image is NULL");
  /* no layer after compiling */
  REFUSED(net_softmax(n, "sm", 3), n, 3, "net_softmax: layer 'sm': the network is already compiled or lowered");
  free(img);
  net_free(n);
  /* a network without layers does not compile */
  n = net_new(NULL, C0, H, W, err, sizeof err);
  ck_assert_ptr_nonnull(n);
  ck_assert_int_eq(net_compile(n), -1);
  ck_assert_str_eq(net_error(n), "net_finish: the network has no layers");
  net_free(n);
}
END_TEST

/* a network as text: parse -> print -> parse -> print identical, the same layers; bad lines
 * refused with their line number */
START_TEST(network_text) {
  static const char *text = "# a network\n"
                            "input c=3 h=20 w=20\n"
                            "conv c1 in=input oc=8 k=3 stride=2 act=relu\n"
                            "\n"
                            "conv dw1 in=c1 oc=8 k=3 depthwise=1 act=relu6\n"
                            "conv c2 in=dw1 oc=8 k=1 res=c1\n"
                            "maxpool p1 in=c2 k=3 stride=2 pad=1\n"
                            "gpool gap in=p1\n"
                            "dense fc in=gap n=10\n"
                            "softmax prob in=fc\n";
  static const char *printed = "input n=1 c=3 h=20 w=20\n"
                               "conv c1 in=input oc=8 k=3 stride=2 act=relu\n"
                               "conv dw1 in=c1 oc=8 k=3 stride=1 depthwise=1 act=relu6\n"
                               "conv c2 in=dw1 oc=8 k=1 stride=1 act=none res=c1\n"
                               "maxpool p1 in=c2 k=3 stride=2 pad=1\n"
                               "gpool gap in=p1\n"
                               "dense fc in=gap n=10\n"
                               "softmax prob in=fc\n";
  char err[600];
  tec_ctx *ctx = tec_ctx_new();
  net *a = net_parse(&(net_options){.seed = 2}, text, err, sizeof err);
  ck_assert_msg(a != NULL, "%s", err);
  ck_assert_int_eq(a->nlayers, 7);
  ck_assert_int_eq(a->layers[2].res, a->layers[0].out);
  const char *t1 = net_text(a, ctx);
  ck_assert_str_eq(t1, printed);
  net *b = net_parse(&(net_options){.seed = 2}, t1, err, sizeof err);
  ck_assert_msg(b != NULL, "%s", err);
  ck_assert_str_eq(net_text(b, ctx), t1);
  for (int i = 0; i < a->nlayers; i++) {
    char sa[512], sb[512];
    ck_assert_str_eq(net_layer_shape(a, i, sa, sizeof sa), net_layer_shape(b, i, sb, sizeof sb));
    ck_assert_str_eq(a->layers[i].tmpl, b->layers[i].tmpl);
  }
  net_free(a), net_free(b);
  static const struct { const char *text, *want; } bad[] = {
      {"conv c1 in=input oc=8 k=3\n", "net_parse: line 1: the first line is the input: input c=C h=H w=W"},
      {"input c=3 h=8 w=8\n", "net_parse: no layers"},
      {"", "net_parse: no input line (input c=C h=H w=W)"},
      {"input c=3 h=8 w=8\n#\nconv a in=input oc=4 k=3\nconv b in=a oc=8 k=3 res=a\n",
       "net_parse: line 4: net_conv: layer 'b': residual value 1 is 4x8x8 NCHW"},
      {"input c=3 h=8 w=8\nconv a in=nowhere oc=4 k=3\n",
       "net_parse: line 2: in=nowhere: no layer of that name above (or input)"},
      {"input c=3 h=8 w=8\nconv a in=input oc=4 k=3 colour=2\n",
       "net_parse: line 2: unknown key 'colour'; the keys are in oc k stride depthwise act res"},
      {"input c=3 h=8 w=8\nconv a in=input oc=4 k=3 act=tanh\n", "net_parse: line 2: act=tanh; legal: none, relu, relu6"},
      {"input c=3 h=8 w=8\nlstm a in=input\n", "net_parse: line 2: 'lstm'; a layer is conv, maxpool, gpool, dense or softmax"},
      {"input c=3 h=8 w=8\nconv in=input\n", "net_parse: line 2: conv needs a name before its key=value pairs"},
      {"input c=3 h=8 w=8\ngpool g in=input\ndense f in=g n=x\n", "net_parse: line 3: n=x is not an integer"},
      {"input c=3 h=0 w=8\n", "net_new: batch 1, block "},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_ptr_null(net_parse(NULL, bad[i].text, err, sizeof err));
    tu_assert_contains(err, bad[i].want);
  }
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("net_api");
  TCase *tc = tcase_create("net_api");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, runs_like_the_reference);
  tcase_add_test(tc, bad_networks_refused);
  tcase_add_test(tc, network_text);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

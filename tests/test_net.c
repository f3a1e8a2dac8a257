/* test_net.c — whole networks (the network library, include/tec/net.h, over the examples' models in examples/net/models.c) at a reduced size
 * against a naive C reference of the same network (support/netref.c: the same layers and
 * weights through cr_conv2d / or_pool2d / or_fc / or_softmax on plain NCHW): MobileNet v1
 * (width 0.25, 40x40: odd sizes down the stride-2 steps, 8 channels in blocks of the host's
 * lanes) and ResNet-18 (width 0.125, 36x36, batch 2: projections, fused residuals, max pool).
 * Also: the activations stay packed between layers (no layout-transform layer), every weight
 * is packed once (prepare), two runs agree bit for bit, and bad options are refused. Tuning
 * records applied (options.records): a layer whose workload has a record is built on that
 * record's config (every layer of the same workload), the others on their default with a
 * warning naming their workload, and the network still computes the reference's numbers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "netref.h"
#include "tec/tune.h"
#include "testutil.h"

/* builds, runs and checks the network against the reference; returns it (the caller frees) */
static net *check_net(const model_options *o, double tol_logits) {
  char err[256];
  net *n = model_create(o, err, sizeof err);
  ck_assert_msg(n != NULL, "%s", err);
  /* packed between layers: only the input (NCHW image) and the head are not NCHW[x]c */
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    ck_assert_str_ne(L->tmpl, "layout_transform");
    if (L->op == NET_CONV || L->op == NET_POOL)
      ck_assert_int_eq(n->values[L->out].layout.kind, TOPI_NCHWC);
    if (L->op == NET_CONV && i > 0) ck_assert_int_eq(n->values[L->in].layout.kind, TOPI_NCHWC);
    /* margins: a direct 3x3 layer whose input another direct layer writes reads its padding
     * from the input's ring (include/tec/net.h) */
    int direct = L->op == NET_CONV && (!strcmp(L->tmpl, "conv2d_nchwc") ||
                                       !strcmp(L->tmpl, "depthwise_nchwc"));
    const net_layer *P = NULL;
    for (int j = 0; j < i; j++)
      if (n->layers[j].out == L->in) P = &n->layers[j];
    int only_direct = P && P->op == NET_CONV && (!strcmp(P->tmpl, "conv2d_nchwc") ||
                                                 !strcmp(P->tmpl, "depthwise_nchwc"));
    for (int j = 0; j < n->nlayers; j++) /* every reader honours margins; no residual chain
                                             (a residual shares its consumer's output margin) */
      if (n->layers[j].in == L->in || n->layers[j].res == L->in)
        only_direct &= n->layers[j].res != L->in && n->layers[j].op == NET_CONV &&
                       (!strcmp(n->layers[j].tmpl, "conv2d_nchwc") ||
                        !strcmp(n->layers[j].tmpl, "depthwise_nchwc"));
    only_direct &= !P || P->res < 0;
    if (direct && only_direct && !o->no_margins && L->conv.pad_h == 1)
      ck_assert_msg(n->values[L->in].layout.margin >= 1 && L->conv.in_layout.margin >= 1,
                    "layer %s: no margin on its input", L->name);
    if (o->no_margins) ck_assert_int_eq(n->values[L->in].layout.margin, 0);
  }
  ck_assert_msg(net_compile(n) == 0, "%s", net_error(n));
  ck_assert_msg(net_prepare(n) == 0, "%s", net_error(n));
  float *img = net_image(n, 5);
  int64_t out = n->opt.batch * net_classes(n);
  float *logits = malloc(sizeof(float) * (size_t)out), *probs = malloc(sizeof(float) * (size_t)out);
  float *first = malloc(sizeof(float) * (size_t)out);
  nr_forward(n, img, logits, probs);
  ck_assert_msg(net_run(n, img, NULL) == 0, "%s", net_error(n));
  memcpy(first, net_logits(n), sizeof(float) * (size_t)out);
  double *secs = calloc((size_t)n->nlayers, sizeof(double));
  ck_assert_msg(net_run(n, img, secs) == 0, "%s", net_error(n));
  ck_assert_int_eq(memcmp(first, net_logits(n), sizeof(float) * (size_t)out), 0);
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    ck_assert_double_ge(secs[i], 0);
    if (L->op == NET_CONV || L->op == NET_FC) /* the weights packed once, in net_prepare */
      ck_assert_int_eq(tec_module_prepare_count(n->mod, L->name), 1);
  }
  /* the logits' error relative to their largest magnitude (small logits would hide an error
   * in tu_max_err's 1 + |b|) */
  double lmax = 0, dmax = 0, ep = tu_max_err(net_probs(n), probs, out);
  for (int64_t i = 0; i < out; i++) {
    lmax = fmax(lmax, fabs(logits[i]));
    dmax = fmax(dmax, fabs((double)net_logits(n)[i] - logits[i]));
  }
  double el = dmax / lmax;
  printf("%s %lldx%lld width %.3f batch %lld: max error logits %.3g of max |logit| %.3g, "
         "probabilities %.3g\n", model_title(o->kind),
         (long long)o->size, (long long)o->size, o->width, (long long)n->opt.batch,
         el, lmax, ep);
  ck_assert_msg(lmax > 0.1, "the reference's logits are all near 0 (%g): a weak test", lmax);
  ck_assert_msg(el < tol_logits, "logits: max error %g of the largest", el);
  ck_assert_msg(ep < 1e-5, "probabilities: max error %g", ep);
  for (int64_t b = 0; b < n->opt.batch; b++) {
    double s = 0;
    for (int64_t c = 0; c < net_classes(n); c++) s += net_probs(n)[b * net_classes(n) + c];
    ck_assert_double_eq_tol(s, 1.0, 1e-5);
  }
  free(img), free(logits), free(probs), free(first), free(secs);
  return n;
}

START_TEST(mobilenet_v1) {
  model_options o = {.kind = NET_MOBILENET_V1, .size = 40, .width = 0.25, .classes = 10, .seed = 3};
  net_free(check_net(&o, 1e-4));
  o.no_margins = 1; /* the layouts before margins */
  net_free(check_net(&o, 1e-4));
}
END_TEST

/* At 64x64 ResNet's layer1 runs 16x16: topi_conv2d_pick puts its 3x3 layers (residual add
 * fused) on conv2d_winograd (F(4x4): test_conv_classic's error bound), checked against the
 * reference; .direct = 1 keeps them on conv2d_nchwc (the other tests' networks run that way). */
START_TEST(resnet18_picked) {
  model_options o = {.kind = NET_RESNET18, .size = 64, .width = 0.125, .classes = 10, .seed = 6};
  if (tu_emulated()) return; /* two networks' builds: minutes under qemu (winograd's own test
                                runs there: test_conv_classic) */
  char err[256];
  for (int direct = 0; direct < 2; direct++) {
    o.direct = direct;
    net *n = model_create(&o, err, sizeof err);
    ck_assert_msg(n != NULL, "%s", err);
    int wino = 0;
    for (int i = 0; i < n->nlayers; i++) wino += !strcmp(n->layers[i].tmpl, "conv2d_winograd");
    ck_assert_int_eq(wino, direct ? 0 : 4); /* layer1: two blocks of two 3x3 convs */
    net_free(n);
  }
  o.direct = 0;
#ifndef __SANITIZE_ADDRESS__ /* building the four winograd layers takes ~100 s here, minutes
                                under ASan: the numbers are checked in the normal builds */
  net_free(check_net(&o, 3e-4));
#endif
}
END_TEST

START_TEST(resnet18) {
  model_options o = {.kind = NET_RESNET18, .batch = 2, .size = 36, .width = 0.125, .classes = 10,
                   .seed = 4};
  net_free(check_net(&o, 1e-4));
}
END_TEST

/* A record for layer `name`'s workload (as `tec tune` writes it) with a config that is not the
 * default (the space's last one, or its first); its text in cfgtext. */
static void write_record(const net *n, const char *name, const char *path, char *cfgtext, size_t len) {
  int i = 0;
  while (i < n->nlayers && strcmp(n->layers[i].name, name)) i++;
  ck_assert_int_lt(i, n->nlayers);
  const net_layer *L = &n->layers[i];
  const topi_template *t = topi_template_find(L->tmpl);
  tec_ctx *ctx = tec_ctx_new();
  tune_task task; /* the layer's task: the workload net_compile looks its records up by */
  ck_assert_msg(net_task(n, i, ctx, NULL, &task) == 0, "%s", tec_ctx_error(ctx));
  tune_space sp;
  ck_assert_int_eq(t->space(ctx, &L->conv, NULL, &sp), 0);
  int64_t size = tune_space_size(&sp), idx = tune_space_range(&sp) - 1;
  ck_assert_int_gt(size, 1);
  void *cfg = tec_ctx_alloc(ctx, sp.config_size);
  while (idx == task.default_index || tune_space_config(&sp, idx, cfg) != 0) idx--; /* in the space */
  ck_assert_int_ge(idx, 0);
  const char *text = tune_config_str(ctx, &sp, cfg);
  ck_assert_str_ne(text, tune_config_str(ctx, &sp, sp.default_config));
  snprintf(cfgtext, len, "%s", text);
  tune_trial tr = {.index = idx, .config = text, .status = TUNE_OK, .error = "", .ncosts = 1,
                   .costs = {1e-3}, .median = 1e-3, .gflops = 1.0};
  const char *line = tune_record_json(ctx, &task, &tr);
  ck_assert_ptr_nonnull(line);
  ck_assert_int_eq(tune_record_append(ctx, path, line, 0), 0);
  tec_ctx_free(ctx);
}

START_TEST(mobilenet_records) {
  model_options o = {.kind = NET_MOBILENET_V1, .size = 40, .width = 0.25, .classes = 10, .seed = 3};
  char err[256], path[64] = "/tmp/tec_net_records_XXXXXX", pw[256], dw[256], shape[512], want[600];
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  net *n0 = model_create(&o, err, sizeof err);
  ck_assert_ptr_nonnull(n0);
  /* the shape text `tec tune --shape` reads, every key spelled out (dw1's input: conv1's
   * output, with the margin dw1's padding takes) */
  snprintf(want, sizeof want, "n=1,c=8,h=20,w=20,oc=8,kh=3,kw=3,stride_h=1,stride_w=1,pad_h=1,"
           "pad_w=1,dilation_h=1,dilation_w=1,groups=8,in=NCHW%lldc+m1,out=NCHW%lldc,bias=1,"
           "residual=0,act=relu6", (long long)n0->opt.block, (long long)n0->opt.block);
  ck_assert_str_eq(net_layer_shape(n0, 1, shape, sizeof shape), want); /* dw1 */
  ck_assert_str_eq(n0->layers[1].name, "dw1");
  write_record(n0, "pw2", path, pw, sizeof pw);
  write_record(n0, "dw8", path, dw, sizeof dw); /* dw7..dw11: one workload */
  o.records = path;
  net *n = check_net(&o, 1e-4); /* built on the records, checked against the reference */
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    int dup = !strcmp(L->name, "dw7") || !strcmp(L->name, "dw8") || !strcmp(L->name, "dw9") ||
              !strcmp(L->name, "dw10") || !strcmp(L->name, "dw11");
    if (!strcmp(L->name, "pw2") || dup) {
      ck_assert_msg(L->tuned, "%s: %s", L->name, L->note);
      ck_assert_str_eq(L->config, dup ? dw : pw);
      ck_assert_str_eq(L->note, "");
      continue;
    }
    ck_assert_msg(!L->tuned, "%s tuned", L->name);
    /* the warning names the workload: the template and the canonical shape */
    tec_ctx *ctx = tec_ctx_new();
    const char *wl = tec_ctx_printf(ctx, "tune: no record for %s %s in %s; using the default config ",
                                    L->tmpl, tune_problem_canon(ctx, net_layer_shape(n, i, shape, sizeof shape)), path);
    ck_assert_msg(strncmp(L->note, wl, strlen(wl)) == 0, "%s: note '%s'", L->name, L->note);
    tec_ctx_free(ctx);
  }
  net_free(n);
  /* the config is the one scheduled: pw2 lowered by net_lower is the template lowered with the
   * record's config, and not with the default */
  n = model_create(&o, err, sizeof err);
  lower_func *funcs[64];
  ck_assert_msg(net_lower(n, NULL, funcs) == 0, "%s", net_error(n));
  int i = 0;
  while (strcmp(n->layers[i].name, "pw2")) i++;
  const topi_template *t = topi_template_find(n->layers[i].tmpl);
  tec_ctx *ctx = tec_ctx_new();
  tune_space sp;
  ck_assert_int_eq(t->space(ctx, &n->layers[i].conv, NULL, &sp), 0);
  void *cfg = tec_ctx_alloc(ctx, sp.config_size);
  ck_assert_int_eq(tune_config_parse(ctx, &sp, pw, cfg), 0);
  const void *cfgs[2] = {cfg, sp.default_config};
  for (int k = 0; k < 2; k++) {
    topi_decl d;
    topi_op op;
    ck_assert_int_eq(t->declare(ctx, &n->layers[i].conv, &d), 0);
    ck_assert_int_eq(t->schedule(&d, cfgs[k], NULL, &op), 0);
    lower_func *f = tec_lower(op.sched, "pw2", op.nargs, op.args);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(strcmp(tec_lower_str(funcs[i]), tec_lower_str(f)) == 0, k == 0);
  }
  tec_ctx_free(ctx);
  net_free(n);
  /* a records file that cannot be read is an error, not the defaults */
  o.records = "/nonexistent/records.jsonl";
  n = model_create(&o, err, sizeof err);
  ck_assert_int_eq(net_compile(n), -1);
  ck_assert_str_eq(net_error(n), "net_compile: tune: cannot read the records file "
                                 "/nonexistent/records.jsonl: No such file or directory");
  net_free(n);
  net_free(n0);
  unlink(path);
}
END_TEST

START_TEST(bad_options) {
  char err[256];
  model_options o = {.kind = NET_MOBILENET_V1, .size = 16};
  ck_assert_ptr_null(model_create(&o, err, sizeof err));
  ck_assert_str_eq(err, "model_create: the input must be at least 32x32 (five stride-2 steps)");
  o = (model_options){.kind = (net_kind)5};
  ck_assert_ptr_null(model_create(&o, err, sizeof err));
  ck_assert_str_eq(err, "model_create: unknown network kind");
  o = (model_options){.kind = NET_RESNET18, .width = -1};
  ck_assert_ptr_null(model_create(&o, err, sizeof err));
  ck_assert_str_eq(err, "model_create: batch, classes and block must be >= 1 and width > 0");
  /* running before compiling is refused */
  o = (model_options){.kind = NET_RESNET18, .size = 32, .width = 0.125, .classes = 4};
  net *n = model_create(&o, err, sizeof err);
  ck_assert_ptr_nonnull(n);
  float *img = net_image(n, 1);
  ck_assert_int_eq(net_run(n, img, NULL), -1);
  ck_assert_str_eq(net_error(n), "net_run: compile the network first");
  ck_assert_int_eq(net_prepare(n), -1);
  ck_assert_str_eq(net_error(n), "net_prepare: compile the network first");
  free(img);
  net_free(n);
}
END_TEST

int main(void) {
  Suite *s = suite_create("net");
  TCase *tc = tcase_create("net");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, mobilenet_v1);
  tcase_add_test(tc, resnet18);
  tcase_add_test(tc, resnet18_picked);
  tcase_add_test(tc, mobilenet_records);
  tcase_add_test(tc, bad_options);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

/* gen.c — a whole network ahead of time: MobileNet v1, v2 or ResNet-18 (examples/net/models.c)
 * lowered for a target and written as files a plain C program links with libtec_runtime.a only
 * (net_emit, include/tec/net.h):
 *
 *   net_aot_gen [--int8] TARGET OUTDIR [mobilenet|mobilenet_v2|resnet18 [SIZE [WIDTH [expect]]]]
 *     OUTDIR/net_layers.o, .h   every layer (one object and header)
 *     OUTDIR/net_model.c, .h    the network's prepare/run pair over those layers
 *     OUTDIR/params.bin         the seeded weights and biases
 *     OUTDIR/layers.txt         one line per convolution: name c_in h w c_out k stride pad groups
 *                               (scripts/net_insn.sh counts XNNPACK on the same shapes)
 *     OUTDIR/expected.txt       with `expect`: the logits of the same network JIT-compiled for
 *                               this machine (net_compile, net_run) on driver.c's seeded image,
 *                               what the driver's output is compared with
 *
 * --int8: the network's int8 twin (qnet_emit, include/tec/qnet.h), calibrated on the fp32
 * network JIT-compiled here (another seeded image than the driver's), instead:
 *     OUTDIR/qnet_layers.o, .h, qnet_model.c, .h, qparams.bin   (qdriver.c runs them)
 *     OUTDIR/expected.txt       with `expect`: the int8 logits of the same int8 network
 *                               JIT-compiled here (qnet_compile, qnet_run), one integer a line
 *
 * TARGET is a tec target string ("llvm" for this machine, "rasp4b", ...); the activations'
 * channel block is the target's float lanes. Compile net_model.c with the target's C compiler
 * and link it with net_layers.o (run.sh also merges the two into one object, net.o). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net/models.h"
#include "tec/qnet.h"
#include "aot_driver.h" /* the drivers' seeded image */


/* expected.txt: the logits of the network m (block: the host's) JIT-compiled for this machine */
static int expect(model_options m, const char *dir) {
  char err[256], path[1024];
  m.block = 0;
  net *n = model_create(&m, err, sizeof err);
  if (!n) {
    fprintf(stderr, "net_aot_gen: %s\n", err);
    return -1;
  }
  int64_t count = net_value_floats(n, 0);
  float *x = malloc(sizeof(float) * (size_t)count);
  int rc = !x;
  if (!rc) seeded_image(x, count, 7);
  if (!rc && (net_compile(n) || net_prepare(n) || net_run(n, x, NULL))) {
    fprintf(stderr, "net_aot_gen: %s\n", net_error(n));
    rc = 1;
  }
  snprintf(path, sizeof path, "%s/expected.txt", dir);
  FILE *o = rc ? NULL : fopen(path, "w");
  if (o) {
    const float *l = net_logits(n);
    for (int64_t k = 0; k < net_classes(n); k++) fprintf(o, "%.9g\n", (double)l[k]);
    rc = fclose(o) != 0;
  } else {
    rc = 1;
  }
  free(x);
  net_free(n);
  return rc ? -1 : 0;
}

/* --int8: the int8 twin of n (its block: the target's, also for the host's fp32 network the
 * calibration runs on: one calibration for both) emitted for target, and with want_expect
 * the int8 logits of the same qnet JIT-compiled here. 0 or -1. */
static int emit_int8(net *n, const char *target, const char *dir, const char *title,
                     int want_expect) {
  char err[256], path[1024];
  int64_t count = net_value_floats(n, 0);
  float *calib = malloc(sizeof(float) * (size_t)count), *x = malloc(sizeof(float) * (size_t)count);
  qnet *q = NULL;
  int rc = !calib || !x;
  if (!rc) {
    seeded_image(x, count, 7);
    seeded_image(calib, count, 11);
  }
  if (!rc && (net_compile(n) || net_prepare(n))) {
    fprintf(stderr, "net_aot_gen: %s\n", net_error(n));
    rc = 1;
  }
  if (!rc && !(q = qnet_new(n, calib, err, sizeof err))) {
    fprintf(stderr, "net_aot_gen: %s\n", err);
    rc = 1;
  }
  int64_t bytes = 0;
  if (!rc && qnet_emit(q, target, dir, "net_aot_gen --int8", title, &bytes)) {
    fprintf(stderr, "net_aot_gen: %s\n", qnet_error(q));
    rc = 1;
  }
  if (!rc && want_expect) {
    if (qnet_compile(q) || qnet_prepare(q) || qnet_run(q, x, NULL)) {
      fprintf(stderr, "net_aot_gen: %s\n", qnet_error(q));
      rc = 1;
    }
    snprintf(path, sizeof path, "%s/expected.txt", dir);
    FILE *o = rc ? NULL : fopen(path, "w");
    const qnet_value *lv = rc ? NULL : &q->values[q->logits];
    if (o) {
      for (int64_t k = 0; k < lv->n * lv->c; k++) fprintf(o, "%d\n", lv->data[k]);
      rc = fclose(o) != 0;
    } else {
      rc = 1;
    }
  }
  if (!rc)
    printf("net_aot_gen: %s int8: %d layers for %s (NCHW%lldc) -> %s/qnet_layers.{o,h}, "
           "qnet_model.{c,h}, qparams.bin (%lld bytes)\n",
           title, q->nlayers, target, (long long)n->opt.block, dir, (long long)bytes);
  qnet_free(q);
  free(calib), free(x);
  return rc ? -1 : 0;
}

/* layers.txt: the convolutions' shapes */
static int layers_txt(const net *n, const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s/layers.txt", dir);
  FILE *lt = fopen(path, "w");
  if (!lt) return -1;
  for (int i = 0; i < n->nlayers; i++) {
    const topi_conv2d *p = &n->layers[i].conv;
    if (n->layers[i].op == NET_CONV)
      fprintf(lt, "%s %lld %lld %lld %lld %lld %lld %lld %lld\n", n->layers[i].name,
              (long long)p->c_in, (long long)p->h, (long long)p->w, (long long)p->c_out,
              (long long)p->kh, (long long)p->stride_h, (long long)p->pad_h, (long long)p->groups);
  }
  return fclose(lt) ? -1 : 0;
}

int main(int argc, char **argv) {
  int int8 = argc > 1 && !strcmp(argv[1], "--int8");
  if (int8) argc--, argv++;
  if (argc < 3) {
    fprintf(stderr, "usage: net_aot_gen [--int8] TARGET OUTDIR [mobilenet|mobilenet_v2|resnet18 [SIZE [WIDTH]]]\n");
    return 2;
  }
  const char *target = argv[1], *dir = argv[2];
  net_kind kind = NET_MOBILENET_V1;
  if (argc > 3 && !strcmp(argv[3], "resnet18")) kind = NET_RESNET18;
  else if (argc > 3 && !strcmp(argv[3], "mobilenet_v2")) kind = NET_MOBILENET_V2;
  else if (argc > 3 && strcmp(argv[3], "mobilenet")) {
    fprintf(stderr, "net_aot_gen: network %s: mobilenet, mobilenet_v2 or resnet18\n", argv[3]);
    return 2;
  }
  tec_ctx *tc = tec_ctx_new();
  int bits = tc ? tec_target_vector_bits(tc, target) : -1;
  if (bits < 0) {
    fprintf(stderr, "net_aot_gen: %s\n", tc ? tec_ctx_error(tc) : "out of memory");
    return 1;
  }
  tec_ctx_free(tc);
  model_options m = {.kind = kind, .size = argc > 4 ? atoll(argv[4]) : 224,
                     .width = argc > 5 ? atof(argv[5]) : 1.0, .block = bits >= 128 ? bits / 32 : 4,
                     .seed = 1};
  char err[256], title[128];
  net *n = model_create(&m, err, sizeof err);
  if (!n) {
    fprintf(stderr, "net_aot_gen: %s\n", err);
    return 1;
  }
  snprintf(title, sizeof title, "%s %lldx%lld, width %.3g", model_title(kind), (long long)m.size,
           (long long)m.size, m.width);
  if (layers_txt(n, dir)) return 1;
  if (int8) {
    int rc = emit_int8(n, target, dir, title, argc > 6 && !strcmp(argv[6], "expect"));
    net_free(n);
    return rc ? 1 : 0;
  }
  int64_t np = 0;
  if (net_emit(n, target, dir, "net_aot_gen", title, &np)) {
    fprintf(stderr, "net_aot_gen: %s\n", net_error(n));
    return 1;
  }
  if (argc > 6 && !strcmp(argv[6], "expect") && expect(m, dir)) return 1;
  printf("net_aot_gen: %s: %d layers for %s (NCHW%lldc) -> %s/net_layers.{o,h}, net_model.{c,h}, "
         "params.bin (%lld floats)\n",
         model_title(kind), n->nlayers, target, (long long)n->opt.block, dir, (long long)np);
  net_free(n);
  return 0;
}

/* gen.c — a whole network ahead of time: MobileNet v1 or ResNet-18 (examples/net/net.c) lowered
 * for a target and written as files a plain C program links with libtec_runtime.a only:
 *
 *   net_aot_gen TARGET OUTDIR [mobilenet|resnet18 [SIZE [WIDTH [expect]]]]
 *     OUTDIR/net_layers.o, .h   every layer (tec_emit: object and header; <layer>_prepare packs
 *                               its constants, <layer>_run or <layer> runs it)
 *     OUTDIR/net_model.c, .h    the network's prepare/run pair over those layers:
 *                                 net_model_prepare(params)          once: the weights packed
 *                                 net_model_run(image, logits, probs) per image
 *                               (activations and packed weights in static 64-byte aligned
 *                               buffers; net_model_hook, if set, is called after each layer)
 *     OUTDIR/params.bin         the seeded weights and biases (floats, layer order, each array
 *                               starting on a 16-float boundary), what net_model_prepare reads
 *
 *     OUTDIR/layers.txt         one line per convolution: name c_in h w c_out k stride pad groups
 *                               (scripts/net_insn.sh counts XNNPACK on the same shapes)
 *     OUTDIR/expected.txt       with `expect`: the logits of the same network JIT-compiled for
 *                               this machine (net_compile, net_run) on driver.c's seeded image,
 *                               what the driver's output is compared with
 *
 * TARGET is a tec target string ("llvm" for this machine, "rasp4b", ...); the activations'
 * channel block is the target's float lanes. Compile net_model.c with the target's C compiler
 * and link it with net_layers.o (run.sh also merges the two into one object, net.o). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net/net.h"

/* where user argument k of layer L comes from: a value (>= 0), the weights (-1), the bias (-2) */
static int arg_source(const net_layer *L, int k) {
  switch (L->op) {
  case NET_CONV:
    if (k == 0) return L->in;
    if (k == 1) return -1;
    if (k == 2) return -2;
    if (k == 3 && L->res >= 0) return L->res;
    return L->out;
  case NET_FC: return k == 0 ? L->in : k == 1 ? -1 : k == 2 ? -2 : L->out;
  default: return k == 0 ? L->in : L->out;
  }
}

static int64_t wcount(const net_layer *L) {
  if (L->op == NET_CONV)
    return L->conv.c_out * (L->conv.c_in / L->conv.groups) * L->conv.kh * L->conv.kw;
  return L->op == NET_FC ? L->fc.n * L->fc.k : 0;
}
static int64_t bcount(const net_layer *L) {
  return L->op == NET_CONV ? L->conv.c_out : L->op == NET_FC ? L->fc.n : 0;
}
static int64_t round16(int64_t v) { return (v + 15) / 16 * 16; }

static int64_t tensor_floats(const te_tensor *t) {
  int64_t c = 1, e;
  for (int d = 0; d < t->ndim; d++) c *= ir_is_const_int(t->shape[d], &e) ? e : 0;
  return c;
}

/* the C expression for tensor t of layer i's function f (run or prepare) */
static void arg_expr(FILE *o, const lower_func *f, const lower_func *run, const net_layer *L, int i,
                     const int64_t *woff, const te_tensor *t) {
  for (int k = 0; k < run->nuser; k++)
    if (run->user_args[k] == t) {
      int s = arg_source(L, k);
      if (s >= 0) fprintf(o, "v%d", s);
      else fprintf(o, "params + %lld", (long long)(s == -1 ? woff[2 * i] : woff[2 * i + 1]));
      return;
    }
  for (int k = 0; k < run->npacked; k++)
    if (run->packed[k] == t) {
      fprintf(o, "pk%d_%d", i, k);
      return;
    }
  (void)f;
  fprintf(o, "NULL /* ? */");
}

static void call(FILE *o, const lower_func *f, const lower_func *run, const net_layer *L, int i,
                 const int64_t *woff) {
  fprintf(o, "  if (%s_raw(", f->name);
  for (int a = 0; a < f->nargs; a++) {
    if (a) fprintf(o, ", ");
    arg_expr(o, f, run, L, i, woff, f->args[a]);
  }
  fprintf(o, ")) return -1;\n");
}

/* driver.c's seeded image (the same generator) */
static void image(float *x, int64_t count) {
  unsigned s = 7;
  for (int64_t i = 0; i < count; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
  }
}

/* expected.txt: the logits of g's network (same kind, size, width, weights) JIT-compiled for
 * this machine */
static int expect(const net *g, const char *dir) {
  char err[256], path[1024];
  net *n = net_create(&(net_options){.kind = g->opt.kind, .size = g->opt.size,
                                     .width = g->opt.width, .seed = g->opt.seed},
                      err, sizeof err);
  if (!n) {
    fprintf(stderr, "net_aot_gen: %s\n", err);
    return -1;
  }
  int64_t count = net_value_floats(n, 0);
  float *x = malloc(sizeof(float) * (size_t)count);
  int rc = !x;
  if (!rc) image(x, count);
  if (!rc && (net_compile(n) || net_prepare(n) || net_run(n, x, NULL))) {
    fprintf(stderr, "net_aot_gen: %s\n", net_error(n));
    rc = 1;
  }
  snprintf(path, sizeof path, "%s/expected.txt", dir);
  FILE *o = rc ? NULL : fopen(path, "w");
  if (o) {
    const float *l = net_logits(n);
    for (int64_t k = 0; k < n->opt.classes; k++) fprintf(o, "%.9g\n", (double)l[k]);
    rc = fclose(o) != 0;
  } else {
    rc = 1;
  }
  free(x);
  net_free(n);
  return rc ? -1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: net_aot_gen TARGET OUTDIR [mobilenet|resnet18 [SIZE [WIDTH]]]\n");
    return 2;
  }
  const char *target = argv[1], *dir = argv[2];
  net_kind kind = NET_MOBILENET_V1;
  if (argc > 3 && !strcmp(argv[3], "resnet18")) kind = NET_RESNET18;
  else if (argc > 3 && strcmp(argv[3], "mobilenet")) {
    fprintf(stderr, "net_aot_gen: network %s: mobilenet or resnet18\n", argv[3]);
    return 2;
  }
  tec_ctx *tc = tec_ctx_new();
  int bits = tc ? tec_target_vector_bits(tc, target) : -1;
  if (bits < 0) {
    fprintf(stderr, "net_aot_gen: %s\n", tc ? tec_ctx_error(tc) : "out of memory");
    return 1;
  }
  tec_ctx_free(tc);
  char err[256];
  net *n = net_create(&(net_options){.kind = kind, .size = argc > 4 ? atoll(argv[4]) : 224,
                                     .width = argc > 5 ? atof(argv[5]) : 1.0,
                                     .block = bits >= 128 ? bits / 32 : 4, .seed = 1},
                      err, sizeof err);
  if (!n) {
    fprintf(stderr, "net_aot_gen: %s\n", err);
    return 1;
  }
  lower_func *fs[64];
  char path[1024];
  if (net_lower(n, target, fs)) {
    fprintf(stderr, "net_aot_gen: %s\n", net_error(n));
    return 1;
  }
  for (int i = 0; i < n->nlayers; i++)
    if (fs[i]->nsize || (fs[i]->prepare && fs[i]->prepare->nsize)) {
      fprintf(stderr, "net_aot_gen: layer %s has symbolic sizes\n", n->layers[i].name);
      return 1;
    }
  snprintf(path, sizeof path, "%s/net_layers.o", dir);
  int rc = tec_emit(n->ctx, n->nlayers, fs, target, TEC_EMIT_OBJECT, path);
  snprintf(path, sizeof path, "%s/net_layers.h", dir);
  if (!rc) rc = tec_emit(n->ctx, n->nlayers, fs, target, TEC_EMIT_HEADER, path);
  if (rc) {
    fprintf(stderr, "net_aot_gen: %s\n", tec_ctx_error(n->ctx));
    return 1;
  }
  /* params.bin: weights then bias of each layer that has them */
  int64_t woff[128], np = 0;
  snprintf(path, sizeof path, "%s/params.bin", dir);
  FILE *pf = fopen(path, "wb");
  if (!pf) {
    fprintf(stderr, "net_aot_gen: cannot write %s\n", path);
    return 1;
  }
  static const float zeros[16];
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    int64_t c[2] = {wcount(L), bcount(L)};
    const float *src[2] = {L->w, L->b};
    for (int k = 0; k < 2; k++) {
      woff[2 * i + k] = np;
      if (!c[k]) continue;
      fwrite(src[k], sizeof(float), (size_t)c[k], pf);
      fwrite(zeros, sizeof(float), (size_t)(round16(c[k]) - c[k]), pf);
      np += round16(c[k]);
    }
  }
  if (fclose(pf)) return 1;
  const net_value *in = &n->values[0];
  int logits = n->nvalues - 2, probs = n->nvalues - 1;
  snprintf(path, sizeof path, "%s/net_model.h", dir);
  FILE *h = fopen(path, "w");
  if (!h) return 1;
  fprintf(h,
          "/* net_model.h — generated by net_aot_gen: %s %lldx%lld, width %.3g, for %s. */\n"
          "#ifndef NET_MODEL_H\n#define NET_MODEL_H\n"
          "#define NET_MODEL_IMAGE_FLOATS %lld /* NCHW [%lld][3][%lld][%lld] */\n"
          "#define NET_MODEL_CLASSES %lld\n#define NET_MODEL_PARAMS %lld /* floats of params.bin */\n"
          "#define NET_MODEL_LAYERS %d\n"
          "/* once: copies params and packs every layer's constants. 0, or -1 */\n"
          "int net_model_prepare(const float *params);\n"
          "/* one image: logits and probabilities [classes] (either may be NULL). 0, or -1 */\n"
          "int net_model_run(const float *image, float *logits, float *probs);\n"
          "/* called after each layer of net_model_run when set (layer index) */\n"
          "extern void (*net_model_hook)(int layer);\n"
          "extern const char *const net_model_layer_names[NET_MODEL_LAYERS];\n#endif\n",
          kind == NET_RESNET18 ? "ResNet-18" : "MobileNet v1", (long long)in->h, (long long)in->w,
          n->opt.width, target, (long long)net_value_floats(n, 0), (long long)in->n,
          (long long)in->h, (long long)in->w, (long long)n->opt.classes, (long long)np, n->nlayers);
  if (fclose(h)) return 1;
  snprintf(path, sizeof path, "%s/net_model.c", dir);
  FILE *o = fopen(path, "w");
  if (!o) return 1;
  fprintf(o, "/* net_model.c — generated by net_aot_gen: the network's prepare/run pair. */\n"
             "#include <stddef.h>\n#include <string.h>\n#include \"net_layers.h\"\n"
             "#include \"net_model.h\"\n#define A __attribute__((aligned(64)))\n\n"
             "void (*net_model_hook)(int layer);\n"
             "static float params[%lld] A;\n", (long long)(np ? np : 16));
  fprintf(o, "const char *const net_model_layer_names[NET_MODEL_LAYERS] = {");
  for (int i = 0; i < n->nlayers; i++) fprintf(o, "%s\"%s\"", i ? ", " : "", n->layers[i].name);
  fprintf(o, "};\n");
  for (int v = 0; v < n->nvalues; v++)
    fprintf(o, "static float v%d[%lld] A;\n", v, (long long)round16(net_value_floats(n, v)));
  for (int i = 0; i < n->nlayers; i++)
    for (int k = 0; k < fs[i]->npacked; k++)
      fprintf(o, "static float pk%d_%d[%lld] A; /* %s */\n", i, k,
              (long long)round16(tensor_floats(fs[i]->packed[k])), fs[i]->packed[k]->name);
  fprintf(o, "\nint net_model_prepare(const float *p) {\n  memcpy(params, p, sizeof(float) * %lld);\n",
          (long long)np);
  for (int i = 0; i < n->nlayers; i++)
    if (fs[i]->prepare) call(o, fs[i]->prepare, fs[i], &n->layers[i], i, woff);
  fprintf(o, "  return 0;\n}\n\nint net_model_run(const float *image, float *logits, float *probs) {\n"
             "  memcpy(v0, image, sizeof(float) * %lld);\n", (long long)net_value_floats(n, 0));
  for (int i = 0; i < n->nlayers; i++) {
    call(o, fs[i], fs[i], &n->layers[i], i, woff);
    fprintf(o, "  if (net_model_hook) net_model_hook(%d);\n", i);
  }
  fprintf(o, "  if (logits) memcpy(logits, v%d, sizeof(float) * %lld);\n"
             "  if (probs) memcpy(probs, v%d, sizeof(float) * %lld);\n  return 0;\n}\n",
          logits, (long long)n->opt.classes, probs, (long long)n->opt.classes);
  if (fclose(o)) return 1;
  snprintf(path, sizeof path, "%s/layers.txt", dir);
  FILE *lt = fopen(path, "w");
  if (!lt) return 1;
  for (int i = 0; i < n->nlayers; i++) {
    const topi_conv2d *p = &n->layers[i].conv;
    if (n->layers[i].op == NET_CONV)
      fprintf(lt, "%s %lld %lld %lld %lld %lld %lld %lld %lld\n", n->layers[i].name,
              (long long)p->c_in, (long long)p->h, (long long)p->w, (long long)p->c_out,
              (long long)p->kh, (long long)p->stride_h, (long long)p->pad_h, (long long)p->groups);
  }
  if (fclose(lt)) return 1;
  if (argc > 6 && !strcmp(argv[6], "expect") && expect(n, dir)) return 1;
  printf("net_aot_gen: %s: %d layers for %s (NCHW%lldc) -> %s/net_layers.{o,h}, net_model.{c,h}, "
         "params.bin (%lld floats)\n",
         kind == NET_RESNET18 ? "ResNet-18" : "MobileNet v1", n->nlayers, target,
         (long long)n->opt.block, dir, (long long)np);
  net_free(n);
  return 0;
}

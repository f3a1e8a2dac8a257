/* qnet_emit.c — an int8 network (include/tec/qnet.h) ahead of time: every layer lowered for a
 * target and emitted as one object and header (tec_emit), its int8 weights, int32 biases and
 * f32 per-channel scales written as qparams.bin, and the network's prepare/run pair generated
 * as C over static buffers (qnet_model.c, .h): the image quantized with value 0's params into
 * the blocked input, the layers in order, the int8 logits and their dequantized floats. A plain
 * C program runs it linking libtec_runtime.a only (examples/net_aot/qdriver.c).
 *
 *   qnet_model_run(image, logits, qlogits):
 *     v0 = quantize(image) (lanes past c: the zero point)     as qnet_quantize_image
 *     b1_expand_raw(v0, qw + 0, qb + 0, qs + 0, v1, pk0_0, pk0_1, ...)      one call a layer
 *     ...
 *     qlogits = vL;  logits = scale * (vL - zp) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net/internal.h"
#include "tec/qnet.h"

static int efail(qnet *q, const char *what, const char *why) {
  snprintf(q->err, sizeof q->err, "qnet_emit: %.240s: %.240s", what, why);
  return -1;
}

/* the parameter arrays of one layer: elements of w, b (== w_scale's) */
static int64_t wcount(const qnet_layer *L) {
  if (!L->w) return 0;
  if (!strcmp(L->tmpl, "qnn_dense")) return L->fc.n * L->fc.k;
  const topi_conv2d *p = &L->conv.conv;
  return p->c_out * (p->c_in / p->groups) * p->kh * p->kw;
}
static int64_t bcount(const qnet_layer *L) {
  if (!L->w) return 0;
  return !strcmp(L->tmpl, "qnn_dense") ? L->fc.n : L->conv.conv.c_out;
}
/* elements of size bytes each, rounded up to a 64-byte boundary */
static int64_t round64(int64_t count, int size) { return (count * size + 63) / 64 * 64 / size; }

/* where user argument k of L comes from: a value (>= 0), the weights (-1), bias (-2), scales (-3)
 * (qnet_run.c's make_args order: in, [w, b, w_scale], [in2], out) */
static int arg_source(const qnet_layer *L, int k) {
  if (k == 0) return L->in;
  if (L->w) {
    if (k <= 3) return -k;
    k -= 3;
  }
  if (L->in2 >= 0 && k == 1) return L->in2;
  return L->out;
}

static const char *c_type(tec_dtype t) {
  if (t.code == TEC_FLOAT) return "float";
  if (t.code == TEC_UINT || t.code == TEC_BOOL)
    return t.bits == 8 ? "uint8_t" : t.bits == 16 ? "uint16_t" : "uint32_t";
  return t.bits == 8 ? "int8_t" : t.bits == 16 ? "int16_t" : t.bits == 32 ? "int32_t" : "int64_t";
}

static int64_t tensor_count(const te_tensor *t) {
  int64_t c = 1, e;
  for (int d = 0; d < t->ndim; d++) c *= ir_is_const_int(t->shape[d], &e) ? e : 0;
  return c;
}

/* user argument k of layer L (index i): a value, or its weights, bias or scales (off: each
 * layer's offsets into qw, qb and qs) */
typedef struct arg_ctx {
  const qnet_layer *L;
  int i;
  const int64_t *off;
} arg_ctx;

static void user_arg(FILE *o, int k, void *u) {
  static const char *const arrays[] = {"qw", "qb", "qs"};
  const arg_ctx *c = u;
  int s = arg_source(c->L, k);
  if (s >= 0) fprintf(o, "v%d", s);
  else fprintf(o, "%s + %lld", arrays[-s - 1], (long long)c->off[3 * c->i + (s == -1 ? 0 : 1)]);
}

static void call(FILE *o, const lower_func *f, const lower_func *run, const qnet_layer *L, int i,
                 const int64_t *off) {
  arg_ctx c = {L, i, off};
  net_emit_call(o, f, run, i, user_arg, &c);
}

static FILE *open_in(qnet *q, const char *dir, const char *file, const char *mode) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, mode);
  if (!f) efail(q, path, "cannot write it");
  return f;
}

static int closed(qnet *q, FILE *f, const char *file) {
  return fclose(f) ? efail(q, file, "writing it failed") : 0;
}

/* qparams.bin: every layer's weights (int8), then every bias (int32), then every scale (f32),
 * each array from a 64-byte boundary. off[3i]: layer i's weights in qw (elements), off[3i+1]:
 * its bias in qb and scales in qs (the same count); tot[3]: each array's elements. */
static int params(qnet *q, const char *dir, int64_t *off, int64_t *tot) {
  FILE *pf = open_in(q, dir, "qparams.bin", "wb");
  if (!pf) return -1;
  static const char zeros[64];
  tot[0] = tot[1] = tot[2] = 0;
  for (int part = 0; part < 3; part++)
    for (int i = 0; i < q->nlayers; i++) {
      const qnet_layer *L = &q->layers[i];
      int64_t c = part ? bcount(L) : wcount(L);
      int size = part ? 4 : 1;
      if (part < 2) off[3 * i + part] = tot[part];
      if (!c) continue;
      const void *src = part == 0 ? (const void *)L->w : part == 1 ? (const void *)L->b : (const void *)L->w_scale;
      fwrite(src, (size_t)size, (size_t)c, pf);
      fwrite(zeros, 1, (size_t)((round64(c, size) - c) * size), pf);
      tot[part] += round64(c, size);
    }
  return closed(q, pf, "qparams.bin");
}

static int model_h(qnet *q, const char *dir, const char *gen, const char *title, const char *target,
                   int64_t bytes) {
  FILE *h = open_in(q, dir, "qnet_model.h", "w");
  if (!h) return -1;
  const qnet_value *in = &q->values[0], *lv = &q->values[q->logits];
  fprintf(h,
          "/* qnet_model.h — generated by %s: %s, int8, for %s. */\n"
          "#ifndef QNET_MODEL_H\n#define QNET_MODEL_H\n#include <stdint.h>\n"
          "#define QNET_MODEL_IMAGE_FLOATS %lld /* NCHW [%lld][%lld][%lld][%lld] */\n"
          "#define QNET_MODEL_CLASSES %lld\n"
          "#define QNET_MODEL_PARAM_BYTES %lld /* of qparams.bin */\n"
          "#define QNET_MODEL_LAYERS %d\n"
          "/* once: copies params and packs every layer's constants. 0, or -1 */\n"
          "int qnet_model_prepare(const void *params);\n"
          "/* one image: the logits dequantized and/or int8 [classes] (either may be NULL). 0, or -1 */\n"
          "int qnet_model_run(const float *image, float *logits, int8_t *qlogits);\n"
          "/* called after each layer of qnet_model_run when set (layer index; -1: after the image\n"
          " * is quantized, before the first layer) */\n"
          "extern void (*qnet_model_hook)(int layer);\n"
          "extern const char *const qnet_model_layer_names[QNET_MODEL_LAYERS];\n#endif\n",
          gen, title, target, (long long)(in->n * in->c * in->h * in->w), (long long)in->n,
          (long long)in->c, (long long)in->h, (long long)in->w, (long long)(lv->n * lv->c),
          (long long)bytes, q->nlayers);
  return closed(q, h, "qnet_model.h");
}

/* the quantization of the image into v0 (qnet_quantize_image's arithmetic: nearbyintf of x /
 * scale, plus the zero point, clamped) and the logits' dequantization */
static void io_code(FILE *o, const qnet *q) {
  const qnet_value *v = &q->values[0], *lv = &q->values[q->logits];
  int64_t b = v->layout.block, cb = (v->c + b - 1) / b;
  fprintf(o,
          "static void quantize(const float *x) {\n"
          "  memset(v0, %d, %lld);\n"
          "  for (long n = 0; n < %lld; n++)\n"
          "    for (long c = 0; c < %lld; c++)\n"
          "      for (long i = 0; i < %lld; i++) {\n"
          "        float f = nearbyintf(x[(n * %lld + c) * %lld + i] / %af) + (float)%d;\n"
          "        v0[((n * %lld + c / %lld) * %lld + i) * %lld + c %% %lld] =\n"
          "            (int8_t)(f < -128.0f ? -128 : f > 127.0f ? 127 : (int)f);\n"
          "      }\n}\n\n",
          v->q.zero_point, (long long)qnet_value_bytes(v), (long long)v->n, (long long)v->c,
          (long long)(v->h * v->w), (long long)v->c, (long long)(v->h * v->w), (double)v->q.scale,
          v->q.zero_point, (long long)cb, (long long)b, (long long)(v->h * v->w), (long long)b,
          (long long)b);
  fprintf(o,
          "static void dequantize(float *out) {\n"
          "  for (long k = 0; k < %lld; k++) out[k] = %af * (float)(v%d[k] - %d);\n}\n\n",
          (long long)(lv->n * lv->c), (double)lv->q.scale, q->logits, lv->q.zero_point);
}

static int model_c(qnet *q, const char *dir, const char *gen, lower_func **fs, const int64_t *off,
                   const int64_t *tot) {
  FILE *o = open_in(q, dir, "qnet_model.c", "w");
  if (!o) return -1;
  const qnet_value *lv = &q->values[q->logits];
  fprintf(o, "/* qnet_model.c — generated by %s: the int8 network's prepare/run pair. */\n"
             "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n"
             "#include \"qnet_layers.h\"\n#include \"qnet_model.h\"\n"
             "#define A __attribute__((aligned(64)))\n\n"
             "void (*qnet_model_hook)(int layer);\n"
             "static int8_t qw[%lld] A;\nstatic int32_t qb[%lld] A;\nstatic float qs[%lld] A;\n",
          gen, (long long)(tot[0] ? tot[0] : 64), (long long)(tot[1] ? tot[1] : 16),
          (long long)(tot[2] ? tot[2] : 16));
  fprintf(o, "const char *const qnet_model_layer_names[QNET_MODEL_LAYERS] = {");
  for (int i = 0; i < q->nlayers; i++) fprintf(o, "%s\"%s\"", i ? ", " : "", q->layers[i].name);
  fprintf(o, "};\n");
  /* value 0 and what the layers write (qnet_compile's buffers) */
  char *made = calloc((size_t)q->nvalues, 1);
  if (!made) {
    fclose(o);
    return efail(q, "qnet_model.c", "out of memory");
  }
  made[0] = 1;
  for (int i = 0; i < q->nlayers; i++) made[q->layers[i].out] = 1;
  for (int v = 0; v < q->nvalues; v++)
    if (made[v])
      fprintf(o, "static int8_t v%d[%lld] A;\n", v, (long long)round64(qnet_value_bytes(&q->values[v]), 1));
  for (int i = 0; i < q->nlayers; i++)
    for (int k = 0; k < fs[i]->npacked; k++) {
      const te_tensor *t = fs[i]->packed[k];
      fprintf(o, "static %s pk%d_%d[%lld] A; /* %s */\n", c_type(t->type), i, k,
              (long long)round64(tensor_count(t), tec_dtype_bytes(t->type)), t->name);
    }
  fprintf(o, "\n");
  io_code(o, q);
  fprintf(o, "int qnet_model_prepare(const void *p) {\n"
             "  const char *c = p;\n"
             "  memcpy(qw, c, %lld);\n  memcpy(qb, c + %lld, %lld);\n  memcpy(qs, c + %lld, %lld);\n",
          (long long)tot[0], (long long)tot[0], (long long)(4 * tot[1]),
          (long long)(tot[0] + 4 * tot[1]), (long long)(4 * tot[2]));
  for (int v = 0; v < q->nvalues; v++) /* the lanes past c hold the zero point */
    if (made[v])
      fprintf(o, "  memset(v%d, %d, sizeof v%d);\n", v, q->values[v].q.zero_point, v);
  free(made);
  for (int i = 0; i < q->nlayers; i++)
    if (fs[i]->prepare) call(o, fs[i]->prepare, fs[i], &q->layers[i], i, off);
  fprintf(o, "  return 0;\n}\n\nint qnet_model_run(const float *image, float *logits, int8_t *qlogits) {\n"
             "  quantize(image);\n  if (qnet_model_hook) qnet_model_hook(-1);\n");
  for (int i = 0; i < q->nlayers; i++) {
    call(o, fs[i], fs[i], &q->layers[i], i, off);
    fprintf(o, "  if (qnet_model_hook) qnet_model_hook(%d);\n", i);
  }
  fprintf(o, "  if (qlogits) memcpy(qlogits, v%d, %lld);\n"
             "  if (logits) dequantize(logits);\n  return 0;\n}\n",
          q->logits, (long long)(lv->n * lv->c));
  return closed(q, o, "qnet_model.c");
}

int qnet_emit(qnet *q, const char *target, const char *dir, const char *generator,
              const char *title, int64_t *nbytes) {
  if (!q) return -1;
  if (!dir || !generator || !title)
    return efail(q, "(arguments)", "dir, generator and title are required");
  lower_func *fs[QNET_MAX_LAYERS];
  if (qnet_lower(q, target, fs)) return -1;
  for (int i = 0; i < q->nlayers; i++)
    if (fs[i]->nsize || (fs[i]->prepare && fs[i]->prepare->nsize))
      return efail(q, q->layers[i].name, "the layer has symbolic sizes");
  char path[1024];
  snprintf(path, sizeof path, "%s/qnet_layers.o", dir);
  int rc = tec_emit(q->ctx, q->nlayers, fs, target, TEC_EMIT_OBJECT, path);
  snprintf(path, sizeof path, "%s/qnet_layers.h", dir);
  if (!rc) rc = tec_emit(q->ctx, q->nlayers, fs, target, TEC_EMIT_HEADER, path);
  if (rc) return efail(q, "(all)", tec_ctx_error(q->ctx));
  int64_t *off = malloc(sizeof(int64_t) * 3 * (size_t)q->nlayers), tot[3];
  if (!off) return efail(q, "(all)", "out of memory");
  const char *tname = target ? target : "llvm";
  rc = params(q, dir, off, tot);
  int64_t bytes = tot[0] + 4 * (tot[1] + tot[2]);
  if (!rc) rc = model_h(q, dir, generator, title, tname, bytes);
  if (!rc) rc = model_c(q, dir, generator, fs, off, tot);
  free(off);
  if (!rc && nbytes) *nbytes = bytes;
  return rc;
}

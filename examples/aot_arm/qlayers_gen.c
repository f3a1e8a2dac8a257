/* qlayers_gen.c — ahead of time, the int8 rows of scripts/arm_insn.sh (TEC_ARM_FP=i8): a
 * pointwise, a 3x3, a depthwise, the 3-channel stem of the qemu-insn layers (tools/qemu-insn/
 * layers.h) on qnn_conv2d / qnn_depthwise, and a 256 x 1024 x 1024 GEMM on qnn_dense, each at its
 * template's default config for TARGET: bias fused, no activation (clamp [-128, 127]), padding
 * inside the call, activations NCHW[BLOCK]c (the stem's input NCHW4c) — XNNPACK's conditions in
 * tools/qemu-insn/xnn_qconv_bench.c. Writes
 *   qlayers.o, .h      the layers (tec_emit: object and header)
 *   qlayers.c          per layer: static buffers filled by qfill.h's seeds, the prepare call,
 *                      one warm-up run, INSN_MARK() and CALLS runs each followed by INSN_MARK(),
 *                      the output's FNV-1a hash; and the table qinsn_bench.c reads, with each
 *                      layer's expected hash: the same layer JIT-compiled for this machine on
 *                      the same arguments (its own default config: int8 results are the same
 *                      bits on every target, docs/quantized.md)
 *
 *   qlayers_gen TARGET OUTDIR [BLOCK [LAYER:KNOBS ...]]
 *     BLOCK: a multiple of 4, default 4 (the network's on NEON); LAYER:KNOBS: that layer on
 *     another config of its template's space ("mbv1_pw_mid:ow_tile=8,oc_tile=2",
 *     tune_config_parse's text) for the target */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "qfill.h"
#include "tec/tec.h"

typedef struct qlay {
  const char *name;
  int c, h, w, k, kh, s, p, g; /* a GEMM M x N x K: c = K, h = M, w = 1, k = N */
  int gemm;
} qlay;

static const qlay layers[] = {
    {"mbv1_pw_mid", 256, 28, 28, 256, 1, 1, 0, 1, 0}, {"resnet_c3", 128, 28, 28, 128, 3, 1, 1, 1, 0},
    {"mbv1_dw_mid", 256, 28, 28, 256, 3, 1, 1, 256, 0}, {"mbv1_conv0", 3, 224, 224, 32, 3, 2, 1, 1, 0},
    {"gemm_256x1024x1024", 1024, 256, 1, 1024, 1, 1, 0, 1, 1},
};
#define NLAY ((int)(sizeof layers / sizeof layers[0]))
#define MAXARGS 8

static int64_t count(const te_tensor *t) {
  int64_t c = 1, e;
  for (int d = 0; d < t->ndim; d++) c *= ir_is_const_int(t->shape[d], &e) ? e : -1;
  return c < 0 ? -1 : c;
}

static const char *c_type(tec_dtype t) {
  return t.code == TEC_FLOAT ? "float" : t.bits == 32 ? "int32_t" : t.bits == 16 ? "int16_t"
                                                                               : t.code == TEC_UINT ? "uint8_t" : "int8_t";
}

/* the problem of layer L (its output params spread the outputs over the int8 range) */
static const void *problem(const qlay *L, int64_t block, topi_qconv2d *qc, topi_qdense *qd) {
  topi_qparams in = {0.05f, 3};
  int taps = L->c / L->g * L->kh * L->kh;
  topi_qparams out = {0.002f * 0.05f * 64.0f * 74.0f * sqrtf((float)taps) / 40.0f, -5};
  if (L->gemm) {
    *qd = (topi_qdense){.m = L->h, .n = L->k, .k = L->c, .bias = 1, .act = TOPI_ACT_NONE, .in = in, .out = out};
    return qd;
  }
  topi_layout lb = {.kind = TOPI_NCHWC, .block = block}, l4 = {.kind = TOPI_NCHWC, .block = 4};
  *qc = (topi_qconv2d){.conv = {.n = 1, .c_in = L->c, .h = L->h, .w = L->w, .c_out = L->k, .kh = L->kh,
                                .kw = L->kh, .stride_h = L->s, .stride_w = L->s, .pad_h = L->p,
                                .pad_w = L->p, .groups = L->g, .in_layout = L->c < block ? l4 : lb,
                                .out_layout = lb, .epi = {.bias = 1, .act = TOPI_ACT_NONE}},
                       .in = in, .out = out};
  return qc;
}

/* layer op run JIT-compiled for the host on qfill's arguments: the output's hash */
static int host_hash(tec_ctx *ctx, const char *name, const topi_op *op, lower_func *f,
                     const tec_target *host, uint32_t *hash) {
  tec_module *m = tec_build_for(ctx, 1, &f, host);
  if (!m) return -1;
  DLTensor t[MAXARGS], *args[MAXARGS];
  int64_t shape[MAXARGS][8], e;
  void *data[MAXARGS] = {0};
  int rc = 0;
  for (int k = 0; k < op->nargs && !rc; k++) {
    const te_tensor *a = op->args[k];
    for (int d = 0; d < a->ndim; d++) shape[k][d] = ir_is_const_int(a->shape[d], &e) ? e : 0;
    size_t bytes = (size_t)count(a) * (size_t)tec_dtype_bytes(a->type);
    if (!(data[k] = tec_rt_alloc(bytes))) rc = -1;
    else if (a == op->out) memset(data[k], 0, bytes);
    else ql_fill(data[k], a->type.code == TEC_FLOAT, a->type.bits, a->is_const, (long)count(a), (unsigned)k + 1);
    t[k] = tec_dl_view(data[k], a->type, a->ndim, shape[k]);
    args[k] = &t[k];
  }
  if (!rc && f->prepare && tec_module_bind_constants(m, name, op->nargs, args)) rc = -1;
  if (!rc && tec_module_run(m, name, op->nargs, args)) rc = -1;
  if (rc) tec_ctx_set_error(ctx, "%s", tec_rt_last_error());
  else *hash = ql_hash(data[op->nargs - 1], (long)(count(op->out) * tec_dtype_bytes(op->out->type)));
  for (int k = 0; k < op->nargs; k++) tec_rt_free(data[k]);
  tec_module_free(m);
  return rc;
}

/* a call of g (f's prepare or run half) over layer i's buffers */
static void call(FILE *o, const lower_func *g, const lower_func *f, const topi_op *op, int i) {
  fprintf(o, "  if (%s_raw(", g->name);
  for (int a = 0; a < g->nargs; a++) {
    const char *sep = a ? ", " : "";
    for (int k = 0; k < op->nargs; k++)
      if (g->args[a] == op->args[k]) fprintf(o, "%sa%d_%d", sep, i, k);
    for (int j = 0; j < f->npacked; j++)
      if (g->args[a] == f->packed[j]) fprintf(o, "%sp%d_%d", sep, i, j);
  }
  fprintf(o, ")) return -1;\n");
}

/* layer i in qlayers.c: its buffers and run function */
static void layer_c(FILE *o, const topi_op *op, const lower_func *f, int i) {
  for (int k = 0; k < op->nargs; k++)
    fprintf(o, "static %s a%d_%d[%lld] A; /* %s */\n", c_type(op->args[k]->type), i, k,
            (long long)count(op->args[k]), op->args[k]->name);
  for (int j = 0; j < f->npacked; j++)
    fprintf(o, "static %s p%d_%d[%lld] A; /* %s */\n", c_type(f->packed[j]->type), i, j,
            (long long)count(f->packed[j]), f->packed[j]->name);
  fprintf(o, "static int run%d(int calls, uint32_t *hash) {\n", i);
  for (int k = 0; k < op->nargs; k++) {
    const te_tensor *a = op->args[k];
    if (a == op->out) fprintf(o, "  memset(a%d_%d, 0, sizeof a%d_%d);\n", i, k, i, k);
    else
      fprintf(o, "  ql_fill(a%d_%d, %d, %d, %d, %lld, %d);\n", i, k, a->type.code == TEC_FLOAT,
              a->type.bits, a->is_const, (long long)count(a), k + 1);
  }
  if (f->prepare) call(o, f->prepare, f, op, i);
  call(o, f, f, op, i); /* warm-up */
  fprintf(o, "  INSN_MARK();\n  for (int c = 0; c < calls; c++) {\n  ");
  call(o, f, f, op, i);
  fprintf(o, "    INSN_MARK();\n  }\n  *hash = ql_hash(a%d_%d, sizeof a%d_%d);\n  return 0;\n}\n\n",
          i, op->nargs - 1, i, op->nargs - 1);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: qlayers_gen TARGET OUTDIR [BLOCK [LAYER:KNOBS ...]]\n");
    return 2;
  }
  const char *target = argv[1], *dir = argv[2];
  int64_t block = argc > 3 ? atoll(argv[3]) : 4;
  if (block < 4 || block % 4) {
    fprintf(stderr, "qlayers_gen: BLOCK %s: a multiple of 4\n", argv[3]);
    return 2;
  }
  tec_ctx *ctx = tec_ctx_new();
  const tec_target *tg = ctx ? tec_target_parse(ctx, target) : NULL;
  const tec_target *host = tg ? tec_target_parse(ctx, NULL) : NULL;
  if (!host) {
    fprintf(stderr, "qlayers_gen: %s\n", ctx ? tec_ctx_error(ctx) : "out of memory");
    return 1;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/qlayers.c", dir);
  FILE *o = fopen(path, "w");
  if (!o) return fprintf(stderr, "qlayers_gen: cannot write %s\n", path), 1;
  fprintf(o, "/* qlayers.c — generated by qlayers_gen for %s (NCHW%lldc). */\n#include <stdint.h>\n"
             "#include <string.h>\n#include \"insn_marker.h\"\n#include \"qfill.h\"\n"
             "#include \"qlayers.h\"\n#include \"qlayers_table.h\"\n"
             "#define A __attribute__((aligned(64)))\n\n", target, (long long)block);
  lower_func *fs[NLAY];
  char table[NLAY][256];
  for (int i = 0; i < NLAY; i++) {
    const qlay *L = &layers[i];
    topi_qconv2d qc;
    topi_qdense qd;
    const void *p = problem(L, block, &qc, &qd);
    const topi_template *t = topi_template_find(L->gemm ? "qnn_dense" : L->g > 1 ? "qnn_depthwise" : "qnn_conv2d");
    topi_decl d;
    tune_space sp;
    topi_op op, oh;
    lower_func *fh;
    uint32_t hash = 0;
    const char *knobs = NULL;
    size_t nl = strlen(L->name);
    for (int a = 4; a < argc; a++)
      if (!strncmp(argv[a], L->name, nl) && argv[a][nl] == ':') knobs = argv[a] + nl + 1;
    void *cfg = NULL;
    if (!t || t->declare(ctx, p, &d) || t->space(ctx, p, tg, &sp) ||
        !(cfg = tec_ctx_alloc(ctx, sp.config_size)) ||
        (knobs ? tune_config_parse(ctx, &sp, knobs, cfg) : (memcpy(cfg, sp.default_config, sp.config_size), 0)) ||
        t->schedule(&d, cfg, tg, &op) || op.nargs > MAXARGS ||
        !(fs[i] = tec_lower(op.sched, L->name, op.nargs, op.args)) || fs[i]->nsize ||
        topi_instantiate(ctx, t, p, host, &oh) || !(fh = tec_lower(oh.sched, L->name, oh.nargs, oh.args)) ||
        host_hash(ctx, L->name, &oh, fh, host, &hash)) {
      fprintf(stderr, "qlayers_gen: %s: %s\n", L->name, tec_ctx_error(ctx) ? tec_ctx_error(ctx) : "symbolic sizes");
      return 1;
    }
    layer_c(o, &op, fs[i], i);
    double macs = (double)L->k * ((L->h + 2 * L->p - L->kh) / L->s + 1) *
                  ((L->w + 2 * L->p - L->kh) / L->s + 1) * (L->c / L->g) * L->kh * L->kh;
    snprintf(table[i], sizeof table[i], "  {\"%s\", \"%s\", \"%s\", %.0f, run%d, 0x%08xu},\n", L->name,
             t->name, tune_config_str(ctx, &sp, cfg), macs, i, hash);
    printf("qlayers_gen: %s: %s %s, expected hash 0x%08x\n", L->name, t->name,
           tune_config_str(ctx, &sp, cfg), hash);
  }
  fprintf(o, "const ql_layer ql_layers[QL_NLAYERS] = {\n");
  for (int i = 0; i < NLAY; i++) fputs(table[i], o);
  fprintf(o, "};\n");
  if (fclose(o)) return fprintf(stderr, "qlayers_gen: writing %s failed\n", path), 1;
  snprintf(path, sizeof path, "%s/qlayers_table.h", dir);
  FILE *h = fopen(path, "w");
  if (!h) return fprintf(stderr, "qlayers_gen: cannot write %s\n", path), 1;
  fprintf(h, "/* generated by qlayers_gen for %s */\n#include <stdint.h>\n"
             "typedef struct ql_layer {\n  const char *name, *tmpl, *config;\n  double macs;\n"
             "  int (*run)(int calls, uint32_t *hash); /* prepare, warm-up, CALLS marked runs */\n"
             "  uint32_t expect; /* the host JIT's output hash */\n} ql_layer;\n"
             "#define QL_NLAYERS %d\nextern const ql_layer ql_layers[QL_NLAYERS];\n", target, NLAY);
  if (fclose(h)) return 1;
  static const struct { tec_emit_kind kind; const char *ext; } out[] = {
      {TEC_EMIT_OBJECT, "o"}, {TEC_EMIT_ASM, "s"}, {TEC_EMIT_HEADER, "h"}};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/qlayers.%s", dir, out[i].ext);
    if (tec_emit_for(ctx, NLAY, fs, tg, out[i].kind, path) != 0) {
      fprintf(stderr, "qlayers_gen: %s\n", tec_ctx_error(ctx));
      return 1;
    }
  }
  tec_ctx_free(ctx);
  return 0;
}

/* qconv.c — `bench/run conv --dtype int8`: tec's int8 templates (qnn_conv2d, qnn_depthwise,
 * qnn_dense; requantization fused) beside tec's fp32 direct templates (conv2d_nchwc,
 * depthwise_nchwc, dense), oneDNN int8 and XNNPACK int8 (qc8, bench/qconv_xnn.c) on MobileNet
 * v1 and ResNet-18 layers and a GEMM, one thread, timed in interleaved rounds.
 *
 *   qconv [--layers NAME,...|all] [--rounds 7] [--runs 20] [--isa vnni|max] [--list]
 *         [--int8-knobs "ow_tile=7 oc_tile=2"]   (tec int8's knobs, the rest at the default)
 *
 * --isa: oneDNN's instruction set (dnnl_set_max_cpu_isa): vnni (the default, avx512_core_vnni:
 * the instruction tec uses, what issue #37 compares with) or max (on this CPU, AMX: oneDNN's
 * avx512_core_amx_int8 kernels multiply 16x64 int8 tiles, a different class of hardware).
 *
 * One scheme for all three (docs/quantized.md): int8 activations with a zero point (calibrated
 * on generated data), symmetric per-output-channel int8 weights, int32 bias, fp32 multiplier
 * m[c] = w_scale[c] * (in.scale / out.scale), round to nearest even, bias + ReLU6 (MobileNet)
 * or ReLU (ResNet, GEMM) as a clamp. oneDNN (u8s8 -> u8, the s8 activations shifted by 128 with
 * their zero points): per-channel output scales (mask 2) with the same m[c], zero points of src
 * and dst as run-time arguments, an eltwise post-op (clip or relu) for the activation, s32 bias;
 * src and weights reordered once into the formats it chooses ("any"). tec: NCHW16c in and out
 * (fp32 and int8). Each round times `runs` calls of each implementation (order rotating round
 * by round) in the calling thread's CPU time and keeps the median call; reported: the median
 * over rounds of each, of fp32/int8 and of best/tec (best: the faster library of the round,
 * oneDNN or XNNPACK; above 1: tec's int8 faster), each ratio with its smallest and largest
 * round, the library that was faster in most rounds, and tec's int8 output against oneDNN's
 * and XNNPACK's (elements that differ, the largest difference in LSB). XNNPACK gets the same
 * int8 numbers: its s8 activations with zero point zp are oneDNN's u8 with zp + 128. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dnnl.h>
#include "common.h"
#include "qconv_xnn.h"
#include "tec/tec.h"
#include "tec/topi.h"

typedef struct qlayer {
  const char *name;
  int64_t c_in, h, w, c_out, k, stride, pad, groups; /* GEMM: h = m, c_in = k, c_out = n */
  int gemm;
} qlayer;

static const qlayer layers[] = {
    {"mb04_pw", 64, 56, 56, 128, 1, 1, 0, 1, 0},    {"mb06_pw", 128, 56, 56, 128, 1, 1, 0, 1, 0},
    {"mb10_pw", 256, 28, 28, 256, 1, 1, 0, 1, 0},   {"mb14_pw", 512, 14, 14, 512, 1, 1, 0, 1, 0},
    {"mb26_pw", 1024, 7, 7, 1024, 1, 1, 0, 1, 0},   {"mb05_dw", 128, 56, 56, 128, 3, 1, 1, 128, 0},
    {"mb07_dw", 128, 56, 56, 128, 3, 2, 1, 128, 0}, {"mb13_dw", 512, 14, 14, 512, 3, 1, 1, 512, 0},
    /* the rest of MobileNet v1's depthwise layers and MobileNet v2's (its 32 x 112 x 112 is
     * mb01_dw), stride 1 and 2 */
    {"mb01_dw", 32, 112, 112, 32, 3, 1, 1, 32, 0},  {"mb03_dw", 64, 112, 112, 64, 3, 2, 1, 64, 0},
    {"mb09_dw", 256, 28, 28, 256, 3, 1, 1, 256, 0}, {"mb11_dw", 256, 28, 28, 256, 3, 2, 1, 256, 0},
    {"mb23_dw", 512, 14, 14, 512, 3, 2, 1, 512, 0}, {"mb25_dw", 1024, 7, 7, 1024, 3, 1, 1, 1024, 0},
    {"v2_dw96s2", 96, 112, 112, 96, 3, 2, 1, 96, 0}, {"v2_dw144", 144, 56, 56, 144, 3, 1, 1, 144, 0},
    {"v2_dw144s2", 144, 56, 56, 144, 3, 2, 1, 144, 0}, {"v2_dw192", 192, 28, 28, 192, 3, 1, 1, 192, 0},
    {"v2_dw192s2", 192, 28, 28, 192, 3, 2, 1, 192, 0}, {"v2_dw384", 384, 14, 14, 384, 3, 1, 1, 384, 0},
    {"v2_dw576", 576, 14, 14, 576, 3, 1, 1, 576, 0}, {"v2_dw576s2", 576, 14, 14, 576, 3, 2, 1, 576, 0},
    {"v2_dw960", 960, 7, 7, 960, 3, 1, 1, 960, 0},
    {"rn_l1", 64, 56, 56, 64, 3, 1, 1, 1, 0},       {"rn_l2_0", 64, 56, 56, 128, 3, 2, 1, 1, 0},
    {"rn_l2", 128, 28, 28, 128, 3, 1, 1, 1, 0},     {"rn_l3", 256, 14, 14, 256, 3, 1, 1, 1, 0},
    {"rn_l4", 512, 7, 7, 512, 3, 1, 1, 1, 0},       {"gemm", 1024, 256, 1, 1024, 1, 1, 0, 1, 1},
};
#define NLAYER ((int)(sizeof layers / sizeof layers[0]))
enum { I8, F32, DNNL, XNN, NIMPL };
static const char *const impl_name[NIMPL] = {"tec-int8", "tec-fp32", "onednn-int8", "xnnpack-int8"};

static uint32_t rng = 1;
static const char *int8_knobs; /* --int8-knobs: tec int8's config (others at the default) */
static float frand(float lo, float hi) {
  rng = rng * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(rng >> 8) / 16777216.0f;
}

/* ---- tec ---- */
typedef struct tmod {
  tec_module *m;
  int nargs;
  DLTensor args[8], *ap[8];
  char desc[160];
} tmod;

/* Instantiates tmpl at its host default, builds it and allocates its arguments (filled with
 * small values: the fp32 module's timing does not depend on them; the int8 caller overwrites). */
static int tec_make(tec_ctx *ctx, const char *tmpl, const void *problem, const char *knobs,
                    tmod *o) {
  topi_op op;
  topi_decl d;
  tune_space sp;
  const topi_template *t = topi_template_find(tmpl);
  if (!t || t->space(ctx, problem, NULL, &sp) || t->declare(ctx, problem, &d)) return -1;
  void *cfg = sp.default_config;
  if (knobs && !(cfg = tec_ctx_alloc(ctx, sp.config_size))) return -1;
  if ((knobs && tune_config_parse(ctx, &sp, knobs, cfg)) || t->schedule(&d, cfg, NULL, &op))
    return -1;
  const char *cs = tune_config_str(ctx, &sp, cfg);
  snprintf(o->desc, sizeof o->desc, "%s", cs ? cs : "?");
  lower_func *f = tec_lower(op.sched, "f", op.nargs, op.args);
  if (!f || !(o->m = tec_build(ctx, 1, &f, NULL))) return -1;
  return (o->nargs = bench_args_alloc(f, o->args, o->ap)) < 0 ? -1 : 0;
}

/* ---- oneDNN ---- */
static dnnl_engine_t engine;
static dnnl_stream_t stream;

typedef struct dmod {
  dnnl_primitive_t prim;
  dnnl_memory_t src, wei, bias, dst, zsrc, zdst;
  char impl[96];
} dmod;

#define DTRY(call)                                                                            \
  do {                                                                                        \
    dnnl_status_t st_ = (call);                                                               \
    if (st_ != dnnl_success) {                                                                \
      fprintf(stderr, "qconv: oneDNN: %s failed (status %d)\n", #call, (int)st_);             \
      return -1;                                                                              \
    }                                                                                         \
  } while (0)

static int reorder(dnnl_memory_t from, dnnl_memory_t to) {
  const dnnl_memory_desc_t *a, *b;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t r;
  DTRY(dnnl_memory_get_memory_desc(from, &a));
  DTRY(dnnl_memory_get_memory_desc(to, &b));
  DTRY(dnnl_reorder_primitive_desc_create(&pd, a, engine, b, engine, NULL));
  DTRY(dnnl_primitive_create(&r, pd));
  dnnl_primitive_desc_destroy(pd);
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  DTRY(dnnl_primitive_execute(r, stream, 2, args));
  DTRY(dnnl_stream_wait(stream));
  dnnl_primitive_destroy(r);
  return 0;
}

static int dnnl_run(dmod *d) {
  dnnl_exec_arg_t a[6] = {{DNNL_ARG_SRC, d->src},
                          {DNNL_ARG_WEIGHTS, d->wei},
                          {DNNL_ARG_BIAS, d->bias},
                          {DNNL_ARG_DST, d->dst},
                          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, d->zsrc},
                          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, d->zdst}};
  DTRY(dnnl_primitive_execute(d->prim, stream, 6, a));
  DTRY(dnnl_stream_wait(stream));
  return 0;
}

/* The int8 primitive: src u8 (user: xu, nchw or [m][k]), weights s8 (user: wq, oihw, goihw or
 * [n][k] read as ba), bias s32, dst u8 (dst_user receives it in nchw / [m][n] for the check). */
static int dnnl_make(const qlayer *L, int64_t oh, int64_t ow, uint8_t *xu, int8_t *wq, int32_t *bq,
                     const float *m, int32_t zsrc, int32_t zdst, float clip_hi, int relu6,
                     uint8_t *dst_user, dmod *d, dnnl_memory_t *udst) {
  int dw = L->groups > 1;
  dnnl_memory_desc_t s_any, w_any, d_any, b_md, s_u, w_u, d_u, z_md;
  dnnl_dims_t one = {1};
  DTRY(dnnl_memory_desc_init_by_tag(&z_md, 1, one, dnnl_s32, dnnl_x));
  dnnl_primitive_attr_t attr;
  dnnl_post_ops_t po;
  DTRY(dnnl_primitive_attr_create(&attr));
  DTRY(dnnl_primitive_attr_set_output_scales(attr, L->c_out, 2, m));
  const int32_t rt = DNNL_RUNTIME_S32_VAL;
  DTRY(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &rt));
  DTRY(dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_DST, 1, 0, &rt));
  DTRY(dnnl_post_ops_create(&po));
  DTRY(relu6 ? dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0.0f, clip_hi)
             : dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
  DTRY(dnnl_primitive_attr_set_post_ops(attr, po));
  dnnl_primitive_desc_t pd;
  if (L->gemm) {
    dnnl_dims_t sd = {L->h, L->c_in}, wd = {L->c_in, L->c_out}, dd = {L->h, L->c_out},
                bd = {1, L->c_out}, wt = {1, L->c_in}; /* weights [k][n] strided from [n][k] */
    DTRY(dnnl_memory_desc_init_by_tag(&s_any, 2, sd, dnnl_u8, dnnl_ab));
    DTRY(dnnl_memory_desc_init_by_tag(&w_any, 2, wd, dnnl_s8, dnnl_format_tag_any));
    DTRY(dnnl_memory_desc_init_by_tag(&d_any, 2, dd, dnnl_u8, dnnl_ab));
    DTRY(dnnl_memory_desc_init_by_tag(&b_md, 2, bd, dnnl_s32, dnnl_ab));
    DTRY(dnnl_memory_desc_init_by_tag(&s_u, 2, sd, dnnl_u8, dnnl_ab));
    DTRY(dnnl_memory_desc_init_by_strides(&w_u, 2, wd, dnnl_s8, wt));
    DTRY(dnnl_memory_desc_init_by_tag(&d_u, 2, dd, dnnl_u8, dnnl_ab));
    dnnl_matmul_desc_t md;
    DTRY(dnnl_matmul_desc_init(&md, &s_any, &w_any, &b_md, &d_any));
    DTRY(dnnl_primitive_desc_create(&pd, &md, attr, engine, NULL));
  } else {
    dnnl_dims_t sd = {1, L->c_in, L->h, L->w}, dd = {1, L->c_out, oh, ow}, bd = {L->c_out};
    dnnl_dims_t wd = {L->c_out, L->c_in, L->k, L->k}, gwd = {L->groups, 1, 1, L->k, L->k};
    dnnl_dims_t st = {L->stride, L->stride}, pad = {L->pad, L->pad};
    DTRY(dnnl_memory_desc_init_by_tag(&s_any, 4, sd, dnnl_u8, dnnl_format_tag_any));
    DTRY(dnnl_memory_desc_init_by_tag(&w_any, dw ? 5 : 4, dw ? gwd : wd, dnnl_s8, dnnl_format_tag_any));
    DTRY(dnnl_memory_desc_init_by_tag(&d_any, 4, dd, dnnl_u8, dnnl_format_tag_any));
    DTRY(dnnl_memory_desc_init_by_tag(&b_md, 1, bd, dnnl_s32, dnnl_x));
    DTRY(dnnl_memory_desc_init_by_tag(&s_u, 4, sd, dnnl_u8, dnnl_nchw));
    DTRY(dnnl_memory_desc_init_by_tag(&w_u, dw ? 5 : 4, dw ? gwd : wd, dnnl_s8, dw ? dnnl_goihw : dnnl_oihw));
    DTRY(dnnl_memory_desc_init_by_tag(&d_u, 4, dd, dnnl_u8, dnnl_nchw));
    dnnl_convolution_desc_t cd;
    DTRY(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                            &s_any, &w_any, &b_md, &d_any, st, pad, pad));
    DTRY(dnnl_primitive_desc_create(&pd, &cd, attr, engine, NULL));
  }
  dnnl_primitive_attr_destroy(attr);
  dnnl_post_ops_destroy(po);
  const char *impl = NULL;
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  snprintf(d->impl, sizeof d->impl, "%s", impl ? impl : "?");
  DTRY(dnnl_primitive_create(&d->prim, pd));
  DTRY(dnnl_memory_create(&d->src, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), engine, DNNL_MEMORY_ALLOCATE));
  DTRY(dnnl_memory_create(&d->wei, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), engine, DNNL_MEMORY_ALLOCATE));
  DTRY(dnnl_memory_create(&d->dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), engine, DNNL_MEMORY_ALLOCATE));
  dnnl_primitive_desc_destroy(pd);
  DTRY(dnnl_memory_create(&d->bias, &b_md, engine, bq));
  DTRY(dnnl_memory_create(&d->zsrc, &z_md, engine, DNNL_MEMORY_ALLOCATE));
  DTRY(dnnl_memory_create(&d->zdst, &z_md, engine, DNNL_MEMORY_ALLOCATE));
  void *p;
  DTRY(dnnl_memory_get_data_handle(d->zsrc, &p));
  *(int32_t *)p = zsrc;
  DTRY(dnnl_memory_get_data_handle(d->zdst, &p));
  *(int32_t *)p = zdst;
  dnnl_memory_t us, uw;
  DTRY(dnnl_memory_create(&us, &s_u, engine, xu));
  DTRY(dnnl_memory_create(&uw, &w_u, engine, wq));
  DTRY(dnnl_memory_create(udst, &d_u, engine, dst_user));
  if (reorder(us, d->src) || reorder(uw, d->wei)) return -1;
  dnnl_memory_destroy(us), dnnl_memory_destroy(uw);
  return 0;
}

/* ---- one layer ---- */
typedef struct result {
  double t[NIMPL], r_fp32, r_fp32_lo, r_fp32_hi, r_dnnl, r_dnnl_lo, r_dnnl_hi;
  int64_t n, bad, maxd, xbad, xmaxd;
  int dnnl_wins; /* rounds in which oneDNN was the faster library */
} result;

static int run_layer(const qlayer *L, int rounds, int runs, result *res) {
  tec_ctx *ctx = tec_ctx_new();
  rng = (uint32_t)(L->c_in * 131 + L->c_out * 7 + L->h + L->k * 1000);
  int dw = L->groups > 1, relu6 = !strncmp(L->name, "mb", 2);
  int64_t oh = L->gemm ? L->h : (L->h + 2 * L->pad - L->k) / L->stride + 1;
  int64_t ow = L->gemm ? 1 : (L->w + 2 * L->pad - L->k) / L->stride + 1;
  int64_t nx = L->c_in * L->h * L->w, per = (dw ? 1 : L->c_in) * L->k * L->k, nw = L->c_out * per;
  int64_t ny = L->c_out * oh * ow;
  float *xf = malloc(sizeof(float) * (size_t)nx), *wf = malloc(sizeof(float) * (size_t)nw);
  float *bf = malloc(sizeof(float) * (size_t)L->c_out), *wsc = malloc(sizeof(float) * (size_t)L->c_out);
  float *real = malloc(sizeof(float) * (size_t)ny), *mul = malloc(sizeof(float) * (size_t)L->c_out);
  int8_t *xq = malloc((size_t)nx), *wq = malloc((size_t)nw), *yt = malloc((size_t)ny);
  uint8_t *xu = malloc((size_t)nx), *yd = malloc((size_t)ny);
  int32_t *bq = malloc(sizeof(int32_t) * (size_t)L->c_out);
  for (int64_t i = 0; i < nx; i++) xf[i] = frand(-1.0f, 3.0f);
  for (int64_t o = 0; o < L->c_out; o++) {
    for (int64_t i = 0; i < per; i++) wf[o * per + i] = frand(-0.5f, 0.5f) * (float)(1 + o % 5);
    bf[o] = frand(-1.0f, 1.0f);
  }
  topi_qparams qin, qout;
  if (topi_qnn_calibrate(ctx, xf, nx, &qin) || topi_qnn_quantize(ctx, xf, nx, qin, xq) ||
      topi_qnn_quantize_weights(ctx, wf, L->c_out, per, wq, wsc) ||
      topi_qnn_quantize_bias(ctx, bf, L->c_out, qin.scale, wsc, bq))
    return fprintf(stderr, "qconv: %s\n", tec_ctx_error(ctx)), -1;
  /* the real outputs (int accumulators, scaled, the activation) calibrate the output params */
  for (int64_t o = 0; o < L->c_out; o++)
    for (int64_t y = 0; y < oh; y++)
      for (int64_t x = 0; x < ow; x++) {
        int64_t acc = bq[o];
        for (int64_t ci = 0; ci < (dw ? 1 : L->c_in); ci++)
          for (int64_t ky = 0; ky < L->k; ky++)
            for (int64_t kx = 0; kx < L->k; kx++) {
              int64_t c = dw ? o : ci;
              int64_t iy = y * L->stride + ky - L->pad, ix = x * L->stride + kx - L->pad;
              int64_t xv = L->gemm ? xq[y * L->c_in + ci]
                                   : (iy < 0 || iy >= L->h || ix < 0 || ix >= L->w)
                                         ? qin.zero_point : xq[(c * L->h + iy) * L->w + ix];
              acc += (xv - qin.zero_point) * wq[((o * (dw ? 1 : L->c_in) + ci) * L->k + ky) * L->k + kx];
            }
        float v = (float)acc * qin.scale * wsc[o];
        v = v < 0 ? 0 : relu6 && v > 6 ? 6 : v;
        real[(o * oh + y) * ow + x] = v;
      }
  if (topi_qnn_calibrate(ctx, real, ny, &qout)) return -1;
  for (int64_t i = 0; i < nx; i++) xu[i] = (uint8_t)(xq[i] + 128);
  float ratio = qin.scale / qout.scale;
  for (int64_t o = 0; o < L->c_out; o++) mul[o] = wsc[o] * ratio;
  int32_t lo, hi;
  topi_act act = relu6 ? TOPI_ACT_RELU6 : TOPI_ACT_RELU;
  topi_qnn_bounds(qout, act, &lo, &hi);
  /* tec: int8 and fp32 */
  tmod tm[2];
  memset(tm, 0, sizeof tm);
  const topi_layout l16 = {TOPI_NCHWC, 16, 0};
  topi_conv2d p = {.n = 1, .c_in = L->c_in, .h = L->h, .w = L->w, .c_out = L->c_out, .kh = L->k,
                   .kw = L->k, .stride_h = L->stride, .stride_w = L->stride, .pad_h = L->pad,
                   .pad_w = L->pad, .groups = L->groups, .in_layout = l16, .out_layout = l16,
                   .epi = {1, 0, act}};
  topi_qconv2d qp = {.conv = p, .in = qin, .out = qout};
  topi_qdense qd = {.m = L->h, .n = L->c_out, .k = L->c_in, .bias = 1, .act = act, .in = qin, .out = qout};
  topi_dense fd = {.m = L->h, .n = L->c_out, .k = L->c_in, .b_transposed = 1, .const_b = 1,
                   .epi = {1, 0, act}};
  const char *ti = L->gemm ? "qnn_dense" : dw ? "qnn_depthwise" : "qnn_conv2d";
  const char *tf = L->gemm ? "dense" : dw ? "depthwise_nchwc" : "conv2d_nchwc";
  if (tec_make(ctx, ti, L->gemm ? (const void *)&qd : &qp, int8_knobs, &tm[0]) ||
      tec_make(ctx, tf, L->gemm ? (const void *)&fd : &p, NULL, &tm[1]))
    return fprintf(stderr, "qconv: %s: %s\n", L->name, tec_ctx_error(ctx)), -1;
  /* the int8 arguments: data (NCHW16c or [m][k]), kernel, bias, w_scale */
  int8_t *td = tm[0].args[0].data;
  if (L->gemm) memcpy(td, xq, (size_t)nx);
  else
    for (int64_t c = 0; c < L->c_in; c++)
      for (int64_t i = 0; i < L->h * L->w; i++) td[((c / 16) * L->h * L->w + i) * 16 + c % 16] = xq[c * L->h * L->w + i];
  memcpy(tm[0].args[1].data, wq, (size_t)nw);
  memcpy(tm[0].args[2].data, bq, sizeof(int32_t) * (size_t)L->c_out);
  memcpy(tm[0].args[3].data, wsc, sizeof(float) * (size_t)L->c_out);
  /* oneDNN */
  dmod dm = {0};
  dnnl_memory_t udst;
  if (dnnl_make(L, oh, ow, xu, wq, bq, mul, qin.zero_point + 128, qout.zero_point + 128,
                (float)(hi - qout.zero_point), relu6, yd, &dm, &udst))
    return fprintf(stderr, "qconv: %s: oneDNN refused the layer\n", L->name), -1;
  /* XNNPACK: the same int8 numbers (s8 with zp) */
  qxnn xm;
  qxnn_layer xl = {L->c_in, L->h, L->w, L->c_out, L->k, L->stride, L->pad, L->groups, oh, ow, L->gemm};
  if (qxnn_make(&xl, xq, wq, bq, wsc, qin.scale, qin.zero_point, qout.scale, qout.zero_point, lo,
                hi, &xm))
    return fprintf(stderr, "qconv: %s: XNNPACK refused the layer\n", L->name), -1;
  /* warm-up (prepare), then the check: tec's int8 against oneDNN's, elementwise */
  for (int k = 0; k < 2; k++) bench_module_median(tm[k].m, "f", tm[k].nargs, tm[k].ap, 2, "qconv");
  if (dnnl_run(&dm) || reorder(dm.dst, udst) || qxnn_run(&xm)) return -1;
  const int8_t *to = tm[0].args[tm[0].nargs - 1].data;
  res->n = ny, res->bad = res->maxd = res->xbad = res->xmaxd = 0;
  for (int64_t o = 0; o < L->c_out; o++)
    for (int64_t i = 0; i < oh * ow; i++) {
      int t = L->gemm ? to[i * L->c_out + o] : to[((o / 16) * oh * ow + i) * 16 + o % 16];
      int d = L->gemm ? yd[i * L->c_out + o] - 128 : yd[o * oh * ow + i] - 128;
      int diff = abs(t - d), xdiff = abs(t - qxnn_at(&xm, o, i));
      res->bad += diff != 0, res->xbad += xdiff != 0;
      if (diff > res->maxd) res->maxd = diff;
      if (xdiff > res->xmaxd) res->xmaxd = xdiff;
    }
  /* interleaved rounds */
  double *t[NIMPL], *rf = malloc(sizeof(double) * (size_t)rounds), *rd = malloc(sizeof(double) * (size_t)rounds);
  double *tt = malloc(sizeof(double) * (size_t)runs);
  for (int k = 0; k < NIMPL; k++) t[k] = malloc(sizeof(double) * (size_t)rounds);
  for (int r = 0; r < rounds; r++) {
    for (int j = 0; j < NIMPL; j++) {
      int k = (j + r) % NIMPL;
      if (k < DNNL) {
        t[k][r] = bench_module_median(tm[k].m, "f", tm[k].nargs, tm[k].ap, runs, "qconv");
        continue;
      }
      for (int q = 0; q < runs; q++) {
        double t0 = bench_now(CLOCK_THREAD_CPUTIME_ID);
        if (k == DNNL ? dnnl_run(&dm) : qxnn_run(&xm)) return -1;
        tt[q] = bench_now(CLOCK_THREAD_CPUTIME_ID) - t0;
      }
      t[k][r] = bench_median(tt, runs);
    }
    double best = t[DNNL][r] < t[XNN][r] ? t[DNNL][r] : t[XNN][r];
    res->dnnl_wins += t[DNNL][r] <= t[XNN][r];
    rf[r] = t[F32][r] / t[I8][r], rd[r] = best / t[I8][r];
  }
  for (int k = 0; k < NIMPL; k++) res->t[k] = bench_median(t[k], rounds);
  res->r_fp32 = bench_median(rf, rounds), res->r_fp32_lo = rf[0], res->r_fp32_hi = rf[rounds - 1];
  res->r_dnnl = bench_median(rd, rounds), res->r_dnnl_lo = rd[0], res->r_dnnl_hi = rd[rounds - 1];
  printf("%-8s %5lld %4lldx%-4lld -> %5lld k%lld s%lld%s | %8.3f %8.3f %8.3f %8.3f | %5.2f (%4.2f..%4.2f) | "
         "%5.2f (%4.2f..%4.2f) %-4s | %lld, %lld of %lld differ (%.2f%%, %.2f%%), max %lld, %lld LSB\n",
         L->name, (long long)L->c_in, (long long)L->h, (long long)L->w, (long long)L->c_out,
         (long long)L->k, (long long)L->stride, dw ? " dw" : L->gemm ? " mm" : "   ",
         res->t[I8] * 1e3, res->t[F32] * 1e3, res->t[DNNL] * 1e3, res->t[XNN] * 1e3, res->r_fp32,
         res->r_fp32_lo, res->r_fp32_hi, res->r_dnnl, res->r_dnnl_lo, res->r_dnnl_hi,
         2 * res->dnnl_wins >= rounds ? "dnnl" : "xnn", (long long)res->bad, (long long)res->xbad,
         (long long)res->n, 100.0 * (double)res->bad / (double)res->n,
         100.0 * (double)res->xbad / (double)res->n, (long long)res->maxd, (long long)res->xmaxd);
  printf("         tec int8 %s [%s]; fp32 %s [%s]; oneDNN %s; XNNPACK qc8 %s\n", ti, tm[0].desc, tf,
         tm[1].desc, dm.impl, L->gemm ? "1x1 conv (GEMM)" : dw ? "dwconv" : "conv");
  fflush(stdout);
  for (int k = 0; k < NIMPL; k++) free(t[k]);
  free(rf), free(rd), free(tt), free(xf), free(wf), free(bf), free(wsc), free(real), free(mul);
  free(xq), free(wq), free(yt), free(xu), free(yd), free(bq);
  dnnl_memory_t ms[] = {dm.src, dm.wei, dm.bias, dm.dst, dm.zsrc, dm.zdst, udst};
  for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) dnnl_memory_destroy(ms[i]);
  dnnl_primitive_destroy(dm.prim);
  qxnn_free(&xm);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < tm[k].nargs; i++) tec_dl_free(&tm[k].args[i]);
  tec_ctx_free(ctx);
  return 0;
}

int main(int argc, char **argv) {
  int rounds = 7, runs = 20, list = 0, max_isa = 0;
  const char *sel = "all";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--layers") && i + 1 < argc) sel = argv[++i];
    else if (!strcmp(argv[i], "--list")) list = 1;
    else if (!strcmp(argv[i], "--int8-knobs") && i + 1 < argc) int8_knobs = argv[++i];
    else if (!strcmp(argv[i], "--isa") && i + 1 < argc && (!strcmp(argv[i + 1], "vnni") || !strcmp(argv[i + 1], "max")))
      max_isa = !strcmp(argv[++i], "max");
    else
      return fprintf(stderr, "usage: qconv [--layers NAME,...|all] [--rounds N] [--runs N] "
                             "[--isa vnni|max] [--int8-knobs TEXT] [--list] (got '%s')\n", argv[i]), 2;
  }
  if (rounds < 1 || runs < 1) return fprintf(stderr, "qconv: rounds and runs must be >= 1\n"), 2;
  if (list) {
    for (int i = 0; i < NLAYER; i++) printf("%s\n", layers[i].name);
    return 0;
  }
  tec_rt_set_num_threads(1);
  omp_set_num_threads(1); /* Debian's oneDNN runs on GNU OpenMP */
  if (!max_isa && dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx512_core_vnni) != dnnl_success)
    return fprintf(stderr, "qconv: oneDNN refused dnnl_set_max_cpu_isa(avx512_core_vnni)\n"), 1;
  if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) != dnnl_success)
    return fprintf(stderr, "qconv: no oneDNN CPU engine\n"), 1;
  const dnnl_version_t *dv = dnnl_version();
  printf("int8 conv: tec int8 vs tec fp32 vs oneDNN %d.%d.%d int8 (isa: %s) vs XNNPACK qc8, 1 thread, "
         "%d rounds x %d runs (medians of thread CPU time, ms); ratios: fp32/int8 and best/tec-int8 "
         "(best: the faster library of each round, named by the one faster in most rounds; above 1: "
         "tec int8 faster), (smallest..largest round); outputs: tec against oneDNN, XNNPACK\n",
         dv->major, dv->minor, dv->patch, max_isa ? "max" : "avx512_core_vnni", rounds, runs);
  printf("layer                                  |     int8     fp32   onednn  xnnpack | fp32/int8         "
         "| best/int8             | differ: oneDNN, XNNPACK\n");
  int ran = 0, fail = 0;
  for (int i = 0; i < NLAYER; i++) {
    if (strcmp(sel, "all")) { /* a comma list of names */
      const char *s = strstr(sel, layers[i].name);
      size_t n = strlen(layers[i].name);
      if (!s || (s != sel && s[-1] != ',') || (s[n] && s[n] != ',')) continue;
    }
    result r = {0};
    if (run_layer(&layers[i], rounds, runs, &r)) fail++;
    ran++;
  }
  dnnl_stream_destroy(stream), dnnl_engine_destroy(engine);
  if (!ran) return fprintf(stderr, "qconv: no layer named in '%s' (--list)\n", sel), 2;
  return fail ? 1 : 0;
}

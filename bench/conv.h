/* conv.h — bench/conv.c's driver and conv_impl.c's three implementations of one convolution
 * layer (tec's template, oneDNN, XNNPACK), with the data, the reference and the check they
 * share. Every layer is fp32, batch 1, bias + ReLU fused; data and weights seeded random. */
#ifndef TEC_BENCH_CONV_H
#define TEC_BENCH_CONV_H

#include <stdint.h>
#include <dnnl.h>
#include <xnnpack.h>
#include "tec/tec.h"

/* One layer of a network (sizes as in /work/shared/workloads.md). */
typedef struct conv_layer {
  const char *name; /* "mb09_dw": net prefix (mb: MobileNet v1, rn: ResNet-18), index, kind */
  int count;        /* how many times the network runs this layer */
  int64_t c_in, h, w, c_out, k, stride, pad, groups;
} conv_layer;

enum { IMPL_TEC, IMPL_DNNL, IMPL_XNN, NIMPL };
extern const char *const conv_impl_name[NIMPL]; /* "tec", "onednn", "xnnpack" (CSV names) */

#define CONV_MAX_THREADS 8 /* thread counts per run (--threads) */

/* oneDNN's state for one thread count: the primitive is made after omp_set_num_threads (its
 * kernels fix their thread count when made), src and weights reordered into the formats it
 * chose ("any"), once. */
typedef struct conv_dnnl {
  int tried, ok;
  dnnl_primitive_t conv, dst_reorder; /* dst_reorder: to the user's nchw, for the check */
  dnnl_memory_t src, wei, bias, dst, user_dst;
  char impl[64];    /* dnnl_query_impl_info_str and the algorithm: "jit:avx512_core (auto)" */
  char algs[256];   /* each algorithm tried, its implementation and time, or "none" */
  char formats[128]; /* the chosen src / weights / dst formats */
  dnnl_memory_t chain_src; /* conv_dnnl_chain: src is another case's dst (NULL: its own) */
} conv_dnnl;

typedef struct conv_case {
  const conv_layer *L;
  int64_t oh, ow;
  double flops;       /* 2 * multiply-adds */
  float *x, *w, *b;   /* input NCHW, weights OIHW [c_out][c_in/groups][k][k], bias [c_out] */
  float *ref, *mag;   /* reference output NCHW (double accumulation, bias, ReLU) and, per
                         output, |bias| + sum |x * w|: the scale its error is measured against */
  float *nchw;        /* an implementation's output converted to NCHW, for the check */
  /* tec */
  int tec_ok;
  int tec_quiet;            /* 1: conv_tec_setup's failure only in tec_desc, not printed */
  int borrowed;             /* 1: x, w, b, ref, mag, nchw belong to another case */
  const char *tec_template; /* name */
  char tec_desc[320];       /* "conv2d_nchwc NCHW16c->NCHW16c ow_tile=...", or why not */
  tec_ctx *ctx;
  tec_module *mod;
  topi_layout in_l, out_l;
  DLTensor tx, tw, tb, ty;
  /* XNNPACK: NHWC */
  int xnn_ok;
  xnn_operator_t xop;
  float *xin, *xw, *xout;
  pthreadpool_t xnn_pool;   /* the pool the operator was last set up with */
  /* oneDNN: one per thread-count index */
  conv_dnnl dnnl[CONV_MAX_THREADS];
} conv_case;

/* Global library state: oneDNN's engine and stream, xnn_initialize. 0 or -1 (printed). */
int conv_libs_init(void);
void conv_libs_free(void);

/* Allocates and fills the case (seed: data and weights), computes the reference. 0 or -1. */
int conv_case_init(conv_case *c, const conv_layer *L, unsigned seed);
void conv_case_free(conv_case *c);

/* tec: the template `forced` (NULL: depthwise_nchwc for groups == c_in, else conv2d_nchwc) at
 * its default config with the knobs of `config` ("ow_tile=7 oc_tiles=2", NULL: none) set,
 * NCHW<lanes>c in and out (or the first layout pair it applies to), lowered and built. Prints
 * why and returns -1 when tec cannot run this layer. */
int conv_tec_setup(conv_case *c, const char *forced, const char *config);
/* A case for template `name` on base's layer that shares base's data and reference (its own
 * tec module only; no oneDNN or XNNPACK state): conv_tec_setup, quiet (why it does not apply:
 * in v->tec_desc). conv_case_free(v) frees only v's tec state; free v before base. */
int conv_tec_variant(conv_case *v, const conv_case *base, const char *name);
/* XNNPACK: the operator (bias, clamp [0, inf), padding inside; yield: XNN_FLAG_YIELD_WORKERS). */
int conv_xnn_setup(conv_case *c, int yield);
/* oneDNN for thread-count index ti (call after omp_set_num_threads). */
int conv_dnnl_setup(conv_case *c, int ti);

/* After both setups: to's oneDNN call reads from's oneDNN output in place, as a network does
 * (bench/pw_dw.c), when from's dst format is to's src format. 1 chained, 0 the formats differ
 * (to keeps its own input), -1 on error (printed). */
int conv_dnnl_chain(conv_case *from, conv_case *to, int ti);

/* One call of impl (tec: tec_module_run; the first one packs the weights). pool: XNNPACK's,
 * ti: oneDNN's state. 0, or -1 with a message printed. */
int conv_run(conv_case *c, int impl, int ti, pthreadpool_t pool);
/* Zeroes impl's output buffer (before a checked call, so a stale result cannot pass). */
void conv_clear_output(conv_case *c, int impl, int ti);
/* Max relative error of impl's last output against the reference: |out - ref| / mag. */
double conv_check(conv_case *c, int impl, int ti);

/* conv.c: TEC_NUM_THREADS, tec's pool, OpenMP's thread count */
void conv_set_threads(int t);
/* conv_all.c, --all-templates: every conv2d template of the registry on each of the n layers
 * beside oneDNN and XNNPACK, one table per thread count. 0, 1 if a check failed, -1 on error. */
int conv_all_templates(const conv_layer *const *layers, int n, const int *threads, int nthreads,
                       int reps, int xnn_yield);

#endif

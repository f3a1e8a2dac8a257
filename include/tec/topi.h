/* topi.h — operator templates: functions that declare an operator's tensors from its shapes
 * and schedule them from a config (the knobs a tuner turns).
 *
 *   topi_op op;
 *   topi_depthwise_spatial_pack(ctx, &problem, &config, &op);
 *   lower_func *f = tec_lower(op.sched, "dw", op.nargs, op.args);
 */
#ifndef TEC_TOPI_H
#define TEC_TOPI_H

#include "tec/schedule.h"

/* An operator ready to lower: its schedule and its arguments in call order. */
typedef struct topi_op {
  sch_schedule *sched;
  int nargs;
  te_tensor *args[8];
  te_tensor *out;
} topi_op;

/* Depthwise 2-d convolution, NCHW, channel multiplier 1, followed by bias and ReLU. */
typedef struct topi_dw_problem {
  int64_t n, c, h, w;     /* input */
  int64_t kh, kw;         /* kernel window */
  int64_t stride, pad;    /* the same in both directions */
} topi_dw_problem;

typedef struct topi_dw_config {
  int64_t vc;             /* channels per packed block (the vector lanes) */
  int64_t tile_h, tile_w; /* output rows / columns per register tile */
  int parallel;           /* parallel over channel blocks */
} topi_dw_config;

/* The arm_cpu depthwise schedule of TVM's topi (2018) in tec: zero padding inlined; data
 * packed [n, c, h, w] -> [n, C, h, w, VC] and the kernel [c, 1, kh, kw] -> [C, 1, kh, kw, VC]
 * through cache_read + split/reorder + cache_write + compute_inline; the accumulator in the
 * packed layout; VC vectorized; bias + ReLU fused into the output stage. The kernel and bias are
 * constant placeholders, so the kernel packing runs once (prepare) unless the schedule's
 * precompute is turned off. Arguments: data, kernel, bias, out. 0, or -1 with an error. */
int topi_depthwise_spatial_pack(tec_ctx *ctx, const topi_dw_problem *p, const topi_dw_config *cfg,
                                topi_op *op);

#endif

/* topi/qnn_internal.h — what the int8 templates (topi/qnn_*.c) share: the problem checks, the
 * fused requantization, the padding read with the zero point, and the prepare-time per-channel
 * stages (multipliers, bias with the zero point's term folded in). Scheme: docs/quantized.md. */
#ifndef TEC_TOPI_QNN_INTERNAL_H
#define TEC_TOPI_QNN_INTERNAL_H

#include "topi/internal.h"

/* NULL if conv's layouts suit the int8 conv templates (NCHW[x]c in and out, x % 4 == 0, no
 * margin, no residual), the params are legal and the act known; else why not (arena). */
const char *qnn_conv_why(tec_ctx *ctx, const char *who, const topi_qconv2d *p);
/* 0 if t applies to problem, else -1 with the reason (which names t, unlike topi_refuse's). */
int qnn_refuse(tec_ctx *ctx, const topi_template *t, const void *problem);
/* The arguments of an int8 convolution (conv and depthwise) and its prepare-time per-channel
 * stages: data int8 [n][C_in/x][h][w][x], kernel int8 OIHW (constant), bias int32 [c_out] or
 * NULL, w_scale f32 [c_out], mult and bias_q ([C_out/y][y], qnn_mult / qnn_bias), oh x ow. */
typedef struct qnn_conv_args {
  topi_qconv2d p;   /* the problem */
  te_tensor *data, *kernel, *bias, *w_scale, *mult, *bias_q;
  int64_t bx, by, oh, ow;
} qnn_conv_args;
/* Declares a's tensors for template t (qnn_conv_why checked, with t's own rule `why` on top:
 * NULL or a reason), then d: the argument list (data, kernel, [bias], w_scale, out), out, priv
 * (whose first member is a qnn_conv_args: a). -1 with error. */
int qnn_conv_declare(tec_ctx *ctx, const topi_template *t, const topi_qconv2d *p,
                     qnn_conv_args *a);
int qnn_conv_finish(tec_ctx *ctx, const topi_template *t, qnn_conv_args *a, te_tensor *out,
                    topi_decl *d);

/* int8 clamp(round_even((float)acc * mult) + out.zero_point, bounds of act): acc i32, mult f32
 * (any lanes: both scalar expressions here). The clamp is on the float, before rounding. */
const ir_expr *qnn_requant(tec_ctx *ctx, const ir_expr *acc, const ir_expr *mult,
                           topi_qparams out, topi_act act);
/* The same from the scaled value f (f32 or f64): clamp, round_even, + zero point, to int8. */
const ir_expr *qnn_requant_f(tec_ctx *ctx, const ir_expr *f, topi_qparams out, topi_act act);
/* v (an int8 read at input row y, column x) as type t, or zp where (y, x) lies in the padding
 * of an h x w input (likely() conditions: loop partitioning frees the interior of them). */
const ir_expr *qnn_pad(tec_ctx *ctx, tec_dtype t, const ir_expr *v, const ir_expr *y,
                       const ir_expr *x, int64_t h, int64_t w, int64_t pad_h, int64_t pad_w,
                       int32_t zp);
/* a * b as int32 from an int16 product (exact: |int8 x int8| and |int8 x int16 weight <= 127|
 * fit 16 bits), the one-instruction multiply LLVM widens; a and b int16 */
static inline const ir_expr *qnn_mul16(const ir_expr *a, const ir_expr *b) {
  return ir_cast(TEC_I32, ir_mul(a, b));
}
/* The per-channel stages of the requantization, in blocks of `block` channels ([C][block];
 * block 1: [c]), both derived from constants (prepare):
 *   mult[c] = w_scale[c] * (in.scale / out.scale)           f32, 0 past c
 *   bias[c] = (bias ? bias[c] : 0) - in.zero_point * wsum[c]  i32, 0 past c
 * wsum: an i32 [c] stage summing each output channel's weights (qnn_wsum). */
te_tensor *qnn_mult(tec_ctx *ctx, te_tensor *w_scale, int64_t c, int64_t block,
                    topi_qparams in, topi_qparams out);
te_tensor *qnn_bias(tec_ctx *ctx, te_tensor *bias, te_tensor *wsum, int64_t c, int64_t block,
                    int32_t zp_in);
/* wsum[o] = sum over the other dimensions of the int8 weight w (rank 2 or 4), int32. */
te_tensor *qnn_wsum(tec_ctx *ctx, te_tensor *w);

/* The dot-product path (sch_tensorize dot4) of qnn_conv2d and qnn_dense: whether the int8
 * activations are read shifted to uint8 (q + 128; x86 with vpdpbusd, which multiplies u8 by
 * s8; the zero point folded into the bias is then zp + 128), and dot4's lane count for a block
 * of `block` int32 outputs on a target of `lanes` int32 lanes (16, 8 or 4 dividing block). */
int qnn_dot_shift(const tec_target *t);
int64_t qnn_dot_lanes(int64_t block, int lanes);
/* The dot paths' padded input data_p, element i = (n, block, yy, xx, lane) of rows x cols: the
 * input's (yy - pad_h, xx - pad_w), the zero point (zp, or zp + 128 shifted) wherever that is
 * outside the input: the padding and the rows or columns a padded tile reads past it. With
 * shift, read as uint8(q) + 128. */
const ir_expr *qnn_dot_input(tec_ctx *ctx, const ir_expr *const *i, te_tensor *data,
                             const topi_conv2d *p, int64_t rows, int64_t cols, int shift,
                             int32_t zp);

/* qnn_depthwise's dot path (topi/qnn_depthwise_dot.c): whether a block of `block` channels
 * can be dot4's lanes on a target of `lanes` int32 lanes, and the schedule (dc->priv read as
 * a qnn_conv_args), which builds its own stages. */
int qnn_depthwise_dot_ok(int64_t block, int lanes);
int qnn_depthwise_dot_schedule(const topi_decl *dc, const topi_qdepthwise_config *cfg,
                               const tec_target *target, topi_op *op);

/* The one-pass templates' schedule (qnn_pool, qnn_add; topi/qnn_pool.c): out's two outer
 * dimensions fused and parallel, its innermost (extent inner) split by the lanes and
 * vectorized, red (or NULL) computed per output vector. Their space: vectorize, parallel. */
int qnn_elem_schedule(const topi_decl *dc, const topi_qelem_config *cfg,
                      const tec_target *target, sch_schedule *sched, te_tensor *red,
                      int64_t inner);
int qnn_elem_space(tec_ctx *ctx, const topi_template *t, const tec_target *target,
                   tune_space *sp);
/* The innermost dimension's extent of an (n, c, h, w) activation in layout l. */
int64_t qnn_inner_extent(topi_layout l, int64_t c, int64_t w);

#endif

/* topi/internal.h — pieces the templates share: the registry entries, space building, layout
 * indexing and margins, the declared arguments of a convolution, the fused epilogue and the blocked
 * kernel/bias packing. Not installed; templates only. */
#ifndef TEC_TOPI_INTERNAL_H
#define TEC_TOPI_INTERNAL_H

#include "tec/te.h"
#include "tec/topi.h"
#include "tec/build.h"

/* ---- the registry: one entry per template file ---- */
extern const topi_template topi_tmpl_conv2d_nchwc;
extern const topi_template topi_tmpl_depthwise_nchwc;
extern const topi_template topi_tmpl_dw_spatial_pack;
extern const topi_template topi_tmpl_layout;
extern const topi_template topi_tmpl_dense;
extern const topi_template topi_tmpl_pool;
extern const topi_template topi_tmpl_batch_matmul;
extern const topi_template topi_tmpl_global_pool;
extern const topi_template topi_tmpl_softmax;
extern const topi_template topi_tmpl_eltwise;
extern const topi_template topi_tmpl_conv2d_winograd;
extern const topi_template topi_tmpl_conv2d_im2col;
extern const topi_template topi_tmpl_conv2d_spatial_pack;
extern const topi_template topi_tmpl_dw_pw_fused;
extern const topi_template topi_tmpl_qnn_conv2d;
extern const topi_template topi_tmpl_qnn_depthwise;
extern const topi_template topi_tmpl_qnn_dense;
extern const topi_template topi_tmpl_qnn_pool;
extern const topi_template topi_tmpl_qnn_add;

/* ---- spaces ----
 * A template's space is a tune_space (tec/space.h): tune_space_init with the template's name
 * and config size, a tune_define_field per knob, tune_space_set_rule for a rule across them. */
/* Templates take a parsed target (tec/target.h); NULL is the host, parsed on the call. The
 * target, or the host's value (NULL with an error if it cannot be made). */
const tec_target *topi_target_of(tec_ctx *ctx, const tec_target *target);
/* Vector registers of the target (tec_target.vector_regs: AVX-512 and AArch64 NEON 32 zmm /
 * q; AVX2 16 ymm; ARMv7 NEON 16 q); lanes (its float lanes) is not read. */
int topi_target_regs(tec_ctx *ctx, const tec_target *target, int lanes);
/* tec_target.lane_fma of the target, -1 with an error. */
int topi_target_lane_fma(tec_ctx *ctx, const tec_target *target);
/* 1 if the target's vector arithmetic can read an operand from memory (x86: an FMA loads its
 * third operand), 0 on the load/store architectures (AArch64, ARMv7), where every operand a
 * register tile's body uses takes a register. */
int topi_target_mem_operand(tec_ctx *ctx, const tec_target *target);
/* 1 where a register tile must fit 16 vector registers with every operand in one (ARMv7 NEON:
 * 16 q registers, no memory operand): the templates' defaults shrink their tiles there. */
int topi_target_tight_regs(tec_ctx *ctx, const tec_target *target);
/* The divisors of n that are <= cap, ascending, into out (at most max); returns the count. */
int topi_divisors(int64_t n, int64_t cap, int64_t *out, int max);
/* The largest divisor of n that is <= cap (1 when cap <= 1). */
int64_t topi_divisor_upto(int64_t n, int64_t cap);
/* The cap on a space's unrolled body (docs/tuning.md, "What is in a space"): LLVM's time and
 * memory grow faster than a straight-line body, so no config of a template's space unrolls more
 * than TOPI_UNROLL_MAX statements into one loop body, counted as tec_lower_program_size counts
 * them (stores, loop partitioning's border copies beside the interior loop included). Each
 * space's rule estimates its body from the knobs (an upper bound) and asks topi_unroll_ok;
 * tests/test_unroll_cap.c lowers the configs and counts. A template's smallest tile stays in
 * whatever it unrolls (its spaces are never empty). depthwise_nchwc 96x56x56 7x7 NCHW16c,
 * 1632 statements: 4.8 CPU s to build (issue #38). */
#define TOPI_UNROLL_MAX 1536
/* dense's register rule (the mr x nr tile's accumulators within the vector registers) as the
 * rule of space sp, whose config struct holds the GEMM's mr and nr as int64 fields at mr_off
 * and nr_off (knob_mask: those knobs); dense: the GEMM's own dense space. 0 (nothing set where
 * dense has no rule), -1 with an error. */
int topi_dense_rule_on(tec_ctx *ctx, tune_space *sp, unsigned knob_mask, const tune_space *dense,
                       size_t mr_off, size_t nr_off);
static inline int topi_unroll_ok(int64_t body) { return body <= TOPI_UNROLL_MAX; }

/* ---- schedules ---- */
/* Starts op from declaration d: a schedule of d->out, the arguments copied. -1 with error. */
int topi_op_begin(const topi_decl *d, topi_op *op);
/* The same over a schedule's own output `out` (a template whose schedule builds its stages,
 * as the int8 ones do): the arguments d's, with out in place of the last. -1 with error. */
int topi_op_begin_out(const topi_decl *d, te_tensor *out, topi_op *op);
/* Vector lanes of 32-bit floats for target (16 with AVX-512, 4 on NEON), -1 with an error. */
int topi_target_lanes(tec_ctx *ctx, const tec_target *target);
/* Checks that d was declared by template t and that cfg lies in the space of d's problem for
 * target; -1 with an error naming the template or the knob. Every schedule starts with it. */
int topi_config_check(const topi_template *t, const topi_decl *d, const void *cfg,
                      const tec_target *target);

/* Pieces of two templates that dw_pw_fused chains (no config check: the caller's space did it).
 * conv2d_nchwc declared on a given data tensor (a producer's output in p's input layout; NULL:
 * its own placeholder). Its stages of declaration d scheduled in s (any schedule that reaches
 * d->out): rows 0 as topi_conv2d_nchwc_schedule; rows > 0 (GEMM form only) out's outermost loop
 * is (n, tiles of `rows` output rows) fused, parallel per cfg, returned in *row_loop (where a
 * producer of those rows is computed), then the output-channel tiles, then the row tile's
 * positions in register tiles of cfg->ow_tile. depthwise_nchwc declared on a given data tensor
 * the same way (pw_dw_fused), its stages of d scheduled in s: rows_outer 0 as
 * topi_depthwise_nchwc_schedule; 1: out's outermost loop is (n, tiles of cfg->oh_tile output
 * rows) fused, parallel per cfg, returned in *row_loop (where the producer of the rows those
 * tiles read is computed), then the channel blocks and the column tiles. */
int topi_conv2d_nchwc_declare_on(tec_ctx *ctx, const topi_conv2d *p, te_tensor *data,
                                 topi_decl *out);
int topi_conv2d_nchwc_schedule_in(const topi_decl *d, const topi_conv2d_nchwc_config *cfg,
                                  sch_schedule *s, int64_t rows, sch_iter **row_loop);
/* The pw -> stride-2 dw chain's pieces of conv2d_nchwc (topi/conv2d_nchwc.c, bench/pw_dw.c): declare_on's declaration but with
 * conv over [n][O][oy][ox][y] for a 1x1 too (no GEMM form: rows apart, for a sliding window);
 * schedule_slid: that conv computed at loop `at` of consumer, stored at the top level with a
 * sliding window along oy, out inlined into the consumer. */
int topi_conv2d_nchwc_declare_rows(tec_ctx *ctx, const topi_conv2d *p, te_tensor *data,
                                   topi_decl *out);
int topi_conv2d_nchwc_schedule_slid(const topi_decl *d, const topi_conv2d_nchwc_config *cfg,
                                    sch_schedule *s, sch_stage *consumer, sch_iter *at);
int topi_depthwise_nchwc_declare_on(tec_ctx *ctx, const topi_conv2d *p, te_tensor *data,
                                    topi_decl *out);
int topi_depthwise_nchwc_schedule_in(const topi_decl *d, const topi_depthwise_nchwc_config *cfg,
                                     sch_schedule *s, int rows_outer, sch_iter **row_loop);

/* The register tiling of a (batched) GEMM, dense's schedule (topi/dense.c). so stores the
 * result: its leaves `batch` (nbatch of them, outermost), then i (rows) and j (columns), in that
 * order; sa is its accumulator, whose last two axes are i and j and whose reduction is axis 0,
 * computed at so's tile. so becomes [batch x jo fused (parallel per cfg), io, (js), ii, ji
 * (vectorized)]; the acc tile k-outer (split by ku), mr rows unrolled, nr columns vectorized.
 * *panel_loop: jo, fused with the batch loops when there are (where a per-panel packing of b goes), *row_loop: io (where a per-row-block
 * producer of a goes); either may be NULL. */
int topi_gemm_tile_schedule(tec_ctx *ctx, const topi_dense_config *cfg, sch_stage *so,
                            int nbatch, sch_iter *const *batch, sch_iter *i, sch_iter *j,
                            sch_stage *sa, sch_iter **panel_loop, sch_iter **row_loop);
/* The copy of b into panels (a stage with leaves "k" and "ji", dense's and batch_matmul's
 * b_p): b transposed, k innermost (b's rows read in order); else ji vectorized by the lanes. */
int topi_gemm_pack_schedule(sch_stage *sp, int b_transposed, int64_t nr, int lanes);
/* b transposed (b_p's leaves "k", "ji"; k and n b's sizes): lanes x lanes blocks transposed in
 * registers (k and ji split by the lanes, pragma transpose_block); 1 when the shape does not
 * allow it (lanes not a power of two dividing k and nr, or n not a multiple of nr), -1 on
 * error. */
int topi_gemm_pack_transposed_block(sch_stage *sp, int64_t k, int64_t n, int64_t nr, int lanes);
/* Winograd F(m, r) transform matrices from interpolation points (m = 2 or 4, r = 3):
 * at [m][m+r-1], g [m+r-1][r], bt [m+r-1][m+r-1], row-major; -1 if m or r is not supported.
 * y = AT ((G w) . (BT d)) is the correlation y[i] = sum_k w[k] d[i+k]. */
int topi_winograd_matrices(int m, int r, double *at, double *g, double *bt);
/* idx == 0 ? e[0] : idx == 1 ? e[1] : ... e[n-1] (a select that folds once idx is a constant) */
const ir_expr *topi_wino_pick(tec_ctx *ctx, const ir_expr *idx, int n, const ir_expr *const *e);
/* Winograd's output transform of one element (y, x) of an m x m tile: sum_{e,f} AT[y%m][e]
 * AT[x%m][f] mv[e*n + f] (n = alpha), as selects over y%m and x%m */
const ir_expr *topi_wino_output(tec_ctx *ctx, int n, int m, const double *at,
                                const ir_expr *const *mv, const ir_expr *y, const ir_expr *x);
/* sum_k coef[k] * term[k] over the nonzero coefficients (+-1 without a multiply); 0.0 if none */
const ir_expr *topi_wino_lincomb(tec_ctx *ctx, int n, const double *coef,
                                 const ir_expr *const *term);

/* ---- layouts ---- */
int topi_layout_check(tec_ctx *ctx, const char *who, const char *what, topi_layout l);
/* The tensor shape of an (n, c, h, w) activation in layout l (arena), the margin left out (the
 * logical shape). ndim in *nd. */
const ir_expr *const *topi_layout_shape(tec_ctx *ctx, topi_layout l, int64_t n, int64_t c,
                                        int64_t h, int64_t w, int *nd);
/* The same with the margin: the whole buffer ([..][h + 2m][w + 2m][..]). */
const ir_expr *const *topi_layout_buffer_shape(tec_ctx *ctx, topi_layout l, int64_t n, int64_t c,
                                               int64_t h, int64_t w, int *nd);
/* Reads logical element (n, c, y, x) of t, which has layout l: a tensor of l's buffer shape,
 * (y, x) read at (y + margin, x + margin). */
const ir_expr *topi_layout_read(const te_tensor *t, topi_layout l, const ir_expr *n,
                                const ir_expr *c, const ir_expr *y, const ir_expr *x);
/* The logical (n, c, y, x) of a tensor element whose indices are idx in layout l. */
void topi_layout_coords(tec_ctx *ctx, topi_layout l, const ir_expr *const *idx,
                        const ir_expr **n, const ir_expr **c, const ir_expr **y,
                        const ir_expr **x);

/* Zero padding, inlined: logical element (n, c, y, x) of t (layout l, spatial size h x w) when
 * 0 <= y < h and 0 <= x < w, else 0. The condition is marked likely(), so loop partitioning
 * gives the interior a body without it (only the comparisons that can fail are emitted: a pad
 * of 0 gives none). With a margin m (t the buffer), the ring's zeros are read in place: a pad
 * <= m gives no compare, a larger one compares against -m and h + m. */
const ir_expr *topi_pad_read(const te_tensor *t, topi_layout l, int64_t h, int64_t w,
                             const ir_expr *n, const ir_expr *c, const ir_expr *y,
                             const ir_expr *x, int64_t pad_h, int64_t pad_w);

/* ---- margins (topi/margin.c) ---- */
/* NULL if l has no margin, else "<what> layout <l> has a margin ...; <who> takes margin 0
 * only" (arena): the applies of a template that does not honour margins. */
const char *topi_margin_refused(tec_ctx *ctx, const char *who, const char *what, topi_layout l);
/* The same for a convolution's input and output layouts. */
const char *topi_conv2d_margin_refused(tec_ctx *ctx, const char *who, const topi_conv2d *p);
/* The margins of l's dimensions (m on h and w, 0 elsewhere) into before/after (5 entries
 * room); returns the rank. */
int topi_layout_margins(topi_layout l, int64_t *before, int64_t *after);
/* An argument t (the output, a residual) in layout l: with a margin, t (l's logical shape) is
 * made the window of the buffer with l's ring (te_tensor_set_margin; tec never touches the
 * ring). 0, or -1 with an error naming who. */
int topi_set_margin(tec_ctx *ctx, const char *who, te_tensor *t, topi_layout l);

/* ---- convolution arguments and epilogue ---- */
typedef struct topi_conv_args {
  te_tensor *data;      /* in_layout */
  te_tensor *kernel;    /* OIHW, constant */
  te_tensor *bias;      /* [c_out], constant, or NULL */
  te_tensor *residual;  /* out_layout, or NULL */
  int64_t oh, ow;
} topi_conv_args;
/* Declares the arguments of p (names: data, kernel, bias, residual): data with in_layout's
 * buffer shape (its margin included), the residual the window of out_layout's buffer. */
int topi_conv_declare_args(tec_ctx *ctx, const char *who, const topi_conv2d *p, topi_conv_args *a);
/* Fills d's argument list from a and out, in the documented order. */
int topi_conv_finish_decl(tec_ctx *ctx, const topi_template *t, const topi_conv2d *p,
                          const topi_conv_args *a, te_tensor *out, void *priv, topi_decl *d);
/* v + bias + residual, then the activation; bias_v / res_v may be NULL (absent). */
const ir_expr *topi_epilogue_expr(tec_ctx *ctx, const topi_epilogue *e, const ir_expr *v,
                                  const ir_expr *bias_v, const ir_expr *res_v);
/* The bias packed into blocks of `block` channels, zero past c: [ceil(c/block)][block]
 * (constant-derived: computed in prepare). */
te_tensor *topi_pack_bias(tec_ctx *ctx, te_tensor *bias, int64_t c, int64_t block);
/* kernel[oc, ic, ky, kx] (OIHW; ic NULL: 0, a depthwise kernel) for packing into whole channel
 * blocks: where the blocks overshoot the channels (guard_oc: c_out % block, guard_ic: c_in %
 * block), the index is clamped and the element is 0 past c_out / c_in, so no read leaves the
 * kernel. */
const ir_expr *topi_kernel_at(tec_ctx *ctx, const te_tensor *kernel, const ir_expr *oc,
                              int64_t c_out, int guard_oc, const ir_expr *ic, int64_t c_in,
                              int guard_ic, const ir_expr *ky, const ir_expr *kx);
/* A kernel tap's offset i * dilation (dilation 0 or 1: i itself, no multiply in the IR). */
static inline const ir_expr *topi_dilate(tec_ctx *ctx, const ir_expr *i, int64_t dilation) {
  return dilation > 1 ? ir_mul(i, ir_int(ctx, dilation)) : i;
}
/* ceil(a / b) */
static inline int64_t topi_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
/* 1 for a pointwise convolution: 1x1 kernel, stride 1, no padding (output pixel = input pixel:
 * conv2d_nchwc's GEMM form, qnn_conv2d's plane, dw_pw_fused's pointwise half) */
static inline int topi_conv2d_is_pointwise(const topi_conv2d *p) {
  return p->kh == 1 && p->kw == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_h == 0 &&
         p->pad_w == 0;
}

/* ---- float16 (fp16.c; topi_fp in tec/topi.h) ---- */
/* 0 if template `who` takes fp (float32: every template; float16: conv2d_nchwc,
 * depthwise_nchwc, dense), else -1 with an error naming the ones that do. */
int topi_fp_check(tec_ctx *ctx, const char *who, topi_fp fp);
const char *topi_fp_why(tec_ctx *ctx, const char *who, topi_fp fp); /* the reason, or NULL */
tec_dtype topi_fp_storage(topi_fp fp); /* the arguments' type: float32 or float16 */
tec_dtype topi_fp_acc(topi_fp fp);     /* the reduction's and epilogue's type */
const ir_expr *topi_fp_widen(topi_fp fp, const ir_expr *v);  /* v in the accumulation type */
const ir_expr *topi_fp_narrow(topi_fp fp, const ir_expr *v); /* v in the storage type */
/* 0, or -1 naming the feature when fp accumulates in float16 on a target without half
 * arithmetic (every schedule of a float16 template calls it). */
int topi_fp_target_check(tec_ctx *ctx, const char *who, topi_fp fp, const tec_target *target);
/* topi_epilogue_expr in the accumulation type (bias and residual widened), rounded to the
 * storage type (one rounding of the float32 result for TOPI_FP16_ACC32). */
const ir_expr *topi_fp_epilogue(tec_ctx *ctx, topi_fp fp, const topi_epilogue *e,
                                const ir_expr *v, const ir_expr *bias_v, const ir_expr *res_v);
/* Lanes of the accumulation type per vector (float32 lanes, twice that for TOPI_FP16). */
int topi_fp_lanes(tec_ctx *ctx, const tec_target *target, topi_fp fp);

/* 0 if template t applies to problem, else -1 with "<t's name>: <why not>" in the ctx. */
int topi_refuse(tec_ctx *ctx, const topi_template *t, const void *problem);
/* NULL if p reads NCHW[x]c or NCHW and writes NCHW[y]c, else why not (arena). */
const char *topi_conv2d_blocked_out_why(tec_ctx *ctx, const topi_conv2d *p);

#endif

/* topi.h — operator templates: every template is three functions, as in TVM's topi.
 *
 *   declare   the tensors of one problem (shapes, layouts, fused epilogue): topi_decl
 *   schedule  a schedule of those tensors from a config (the knobs) and a target: topi_op
 *   space     the knobs a tuner turns, each with its legal values for this problem and target,
 *             and the default config for that target (AVX-512 host and NEON alike): a
 *             tune_space (tec/space.h) whose int knobs are the config struct's fields
 *
 * A template is reached by name through the registry (topi_template_find("conv2d_nchwc")); the
 * checked calls take the problem and config structs a user fills, and refuse a problem or
 * config of another template's type:
 *
 *   const tec_target *target = tec_target_parse(ctx, "rasp4b");  // once (NULL: the host)
 *   topi_decl d;
 *   tune_space sp;
 *   topi_op op;
 *   topi_declare(ctx, "conv2d_nchwc", &problem, &d);
 *   topi_space_of(ctx, "conv2d_nchwc", &problem, target, &sp);
 *   topi_schedule(&d, sp.default_config, target, &op);
 *   lower_func *f = tec_lower(op.sched, "conv", op.nargs, op.args);
 *
 * Benchmarks, networks, the tuner and the `tec` command call the same functions through the
 * registry. A declaration can be scheduled many times (every schedule is a separate view:
 * cache_read/cache_write never change the declared tensors). A config of the space by index:
 * tune_space_config(&sp, index, &cfg); by text: tune_config_parse(ctx, &sp, "mr=4", &cfg).
 * The target is a parsed value (tec/target.h): templates read its lanes, registers, lane FMA
 * and default tiles and never a target text; NULL stands for the host (parsed on each call
 * that gets it).
 *
 * Layouts. Activations are NCHW, NHWC or NCHW[x]c ("NCHW16c": channel blocks of x, the block
 * innermost, [n][ceil(c/x)][h][w][x]; the channels past c in the last block are zero on input
 * and written as zero by the templates). Convolution weights are given plain, OIHW
 * [c_out][c_in/groups][kh][kw] (or [c][1][kh][kw] for depthwise), as constant placeholders:
 * the templates pack them into their own layout in the prepare step (lower.h). Bias is plain
 * [c_out], constant. A residual operand has the output's layout.
 *
 *   NCHW16c, c = 40:   block 0: c 0..15 | block 1: c 16..31 | block 2: c 32..39, 8 zero lanes
 *                      [n][3][h][w][16]
 *
 * Errors: every function returns 0, or -1 with a message in the ctx naming the template and
 * what was wrong (a size, a knob value out of its legal set, a layout the template cannot
 * read) and what would be legal.
 */
#ifndef TEC_TOPI_H
#define TEC_TOPI_H

#include <stddef.h>
#include "tec/schedule.h"
#include "tec/space.h"
#include "tec/target.h"

/* ---------------- the three-function shape ---------------- */

typedef struct topi_template topi_template;

/* A declared operator: its tensors for one problem. */
typedef struct topi_decl {
  const topi_template *tmpl;
  tec_ctx *ctx;
  const void *problem;   /* a copy of the problem, in the arena */
  int nargs;
  te_tensor **args;      /* the call's arguments: inputs (data, weights, bias, residual), then the
                            output; the order is the template's (its problem struct says) */
  te_tensor *out;
  void *priv;            /* the template's own intermediate tensors, for its schedule */
} topi_decl;

/* A scheduled operator, ready to lower: tec_lower(op.sched, name, op.nargs, op.args). */
typedef struct topi_op {
  const topi_decl *decl;
  sch_schedule *sched;
  int nargs;
  te_tensor **args;
  te_tensor *out;
} topi_op;

typedef enum topi_problem_kind {
  TOPI_PROBLEM_CONV2D, /* topi_conv2d (depthwise too: groups == c_in == c_out) */
  TOPI_PROBLEM_LAYOUT, /* topi_layout_problem */
  TOPI_PROBLEM_DENSE,  /* topi_dense */
  TOPI_PROBLEM_POOL,   /* topi_pool */
  TOPI_PROBLEM_SOFTMAX,/* topi_softmax */
  TOPI_PROBLEM_ELTWISE,/* topi_eltwise */
  TOPI_PROBLEM_DW_PW,  /* topi_dw_pw */
  TOPI_PROBLEM_BATCH_MATMUL, /* topi_batch_matmul */
  TOPI_PROBLEM_QCONV2D,  /* topi_qconv2d (int8; depthwise too) */
  TOPI_PROBLEM_QDENSE,   /* topi_qdense */
  TOPI_PROBLEM_QPOOL,    /* topi_qpool */
  TOPI_PROBLEM_QADD      /* topi_qadd */
} topi_problem_kind;

struct topi_template {
  const char *name;            /* "conv2d_nchwc", "depthwise_nchwc", ... */
  const char *doc;             /* one line */
  topi_problem_kind problem_kind;
  size_t config_size;
  /* 1 if the template can compute this problem; else 0 and, if why is not NULL, a reason in
   * the ctx's arena */
  int (*applies)(tec_ctx *ctx, const void *problem, const char **why);
  int (*declare)(tec_ctx *ctx, const void *problem, topi_decl *out);
  int (*schedule)(const topi_decl *d, const void *config, const tec_target *target, topi_op *out);
  int (*space)(tec_ctx *ctx, const void *problem, const tec_target *target, tune_space *out);
  const char *config_type;     /* "topi_dense_config": the config struct schedule reads */
};

/* The registered templates: by name (NULL if unknown), and all of them in order (the int8
 * qnn_* templates last). */
const topi_template *topi_template_find(const char *name);
int topi_template_count(void);
const topi_template *topi_template_at(int i);

/* The three functions of template `name`, reached through the registry with the problem's and
 * the config's C type checked against the template's (the macros below pass the type's name;
 * a void pointer is not checked):
 *
 *   topi_declare(ctx, "dense", &problem, &d)          d: a topi_decl
 *   topi_space_of(ctx, "dense", &problem, target, &sp) sp: a tune_space (tec/space.h)
 *   topi_schedule(&d, &cfg, target, &op)              the template of d's declaration
 *
 * -1 with an error naming the template and what was wrong: an unknown name (the registered
 * ones listed), a problem of another type ("template 'dense' takes a topi_dense problem, not a
 * topi_conv2d"), a config of another type, or the template's own error. */
int topi_declare_as(tec_ctx *ctx, const char *name, const char *problem_type, const void *problem,
                    topi_decl *out);
int topi_space_as(tec_ctx *ctx, const char *name, const char *problem_type, const void *problem,
                  const tec_target *target, tune_space *out);
int topi_schedule_as(const topi_decl *d, const char *config_type, const void *config,
                     const tec_target *target, topi_op *out);
#define topi_declare(ctx, name, problem, out) \
  topi_declare_as((ctx), (name), TOPI_PROBLEM_TYPE(problem), (problem), (out))
#define topi_space_of(ctx, name, problem, target, out) \
  topi_space_as((ctx), (name), TOPI_PROBLEM_TYPE(problem), (problem), (target), (out))
#define topi_schedule(d, config, target, out) \
  topi_schedule_as((d), TOPI_CONFIG_TYPE(config), (config), (target), (out))

/* declare + space + schedule with the target's default config. */
int topi_instantiate(tec_ctx *ctx, const topi_template *t, const void *problem,
                     const tec_target *target, topi_op *out);

/* ---------------- shared vocabulary ---------------- */

typedef enum topi_act {
  TOPI_ACT_NONE,  /* identity */
  TOPI_ACT_RELU,  /* max(x, 0) */
  TOPI_ACT_RELU6  /* min(max(x, 0), 6) */
} topi_act;

/* The element type and the accumulation of a float template (docs/fp16.md). conv2d_nchwc,
 * depthwise_nchwc and dense take all three; every other template float32 only (refused,
 * naming the three). float16: every argument (data, weights, bias, residual, out) is float16;
 * the reduction and the epilogue run in the accumulation type, the output rounded once to
 * float16. Not a knob of the space: it changes the results (the error of each on a K = 1024
 * dot product is in docs/fp16.md), so the problem states it and a tuner never trades it. */
typedef enum topi_fp {
  TOPI_FP32 = 0,     /* float32 tensors and arithmetic (the default) */
  TOPI_FP16,         /* float16 tensors, products and sums in float16 (acc=f16: AArch64 fmla
                        v.8h, x86 vfmadd231ph); the target needs half arithmetic (AArch64/ARMv7
                        +fullfp16, x86 avx512fp16), refused at schedule time without it */
  TOPI_FP16_ACC32    /* float16 tensors, products and sums in float32 (acc=f32: AArch64
                        +fp16fml fmlal/fmlal2; elsewhere widened, fcvtl/vcvtph2ps + float32 FMA):
                        float16 storage, any target */
} topi_fp;

/* What is fused into a producer's output stage, in this order: + bias[c], + residual, act. */
typedef struct topi_epilogue {
  int bias;       /* 1: a bias argument [c_out] (constant) */
  int residual;   /* 1: a residual argument in the output's layout */
  topi_act act;
} topi_epilogue;

typedef enum topi_layout_kind {
  TOPI_NCHW,  /* [n][c][h][w] */
  TOPI_NHWC,  /* [n][h][w][c] */
  TOPI_NCHWC  /* [n][ceil(c/block)][h][w][block] */
} topi_layout_kind;

typedef struct topi_layout {
  topi_layout_kind kind;
  int64_t block;  /* TOPI_NCHWC: channels per block (>= 1); otherwise 0 */
  int64_t margin; /* a zero ring of margin rows and columns around h and w, part of the buffer
                     (0 <= margin <= 1024; 0: none, today's tensors) */
} topi_layout;

/* Margins. An activation whose layout has margin m lives in the interior of a buffer whose
 * spatial dims are m larger on each side, the ring holding zeros:
 *
 *   NCHW16c+m1, h = w = 3:  buffer [n][C/16][5][5][16]     . . . . .    . ring (zeros)
 *                           element (y, x) at [y+1][x+1]    . # # # .    # the activation
 *                                                           . # # # .
 *   (NCHW: [n][c][h+2m][w+2m]; NHWC: [n][h+2m][w+2m][c])    . # # # .
 *                                                           . . . . .
 * A template reading such an input takes its padding from the ring: a convolution with pad <=
 * m reads with no compare and copies nothing (pad > m: compares for the rest). A template
 * writing such an output writes the interior only and never touches the ring (the caller
 * zeroes it once: tec leaves it as it is). conv2d_nchwc and depthwise_nchwc honour margins on
 * input, output and residual (the residual has the output's layout, margin included), and
 * dw_pw_fused on its data, output and residual (its intermediate, dw's output, takes none);
 * every other template refuses a non-zero margin in its applies ("... takes margin 0 only").
 * As tensors: the input is a placeholder of the whole buffer ([..][h+2m][w+2m][..]); the output
 * and the residual have the logical shape and are windows of their buffers
 * (te_tensor_set_margin, margins {0, 0, m, m, 0} in NCHW[x]c): every argument's DLTensor has
 * the buffer's extents. */

/* "NCHW", "NHWC", "NCHW16c", with an optional margin suffix "+m<k>" ("NCHW16c+m1", "NHWC+m2";
 * k a decimal 0..1024) -> layout; -1 with an error listing the accepted forms. topi_layout_str
 * writes the suffix only for a margin > 0 (a layout without one prints as it always did). */
int topi_layout_parse(tec_ctx *ctx, const char *s, topi_layout *out);
const char *topi_layout_str(tec_ctx *ctx, topi_layout l);

/* For whatever allocates and fills a template's arguments (tec bench, the tuner, tests): the
 * zero ring of argument `arg` (call order) of template t on problem: an input whose layout has
 * a margin is declared with its whole buffer, whose ring must hold zeros. before/after (room
 * for 5) get the ring of each dimension of the argument's shape; returns the rank, or 0 when
 * the argument has no ring. (An output or residual with a margin is a window instead: its
 * tensor's te_buffer_shape gives the buffer, and its ring is the caller's, never read.) */
int topi_arg_zero_ring(const topi_template *t, const void *problem, int arg, int64_t *before,
                       int64_t *after);
/* Zeroes the ring of a compact float buffer of ndim extents: the elements within before[d] of
 * the start or after[d] of the end of some dimension d. */
void topi_zero_ring(float *data, int ndim, const int64_t *extents, const int64_t *before,
                    const int64_t *after);

/* ---------------- problems ---------------- */

/* A 2-d convolution, fp32. Depthwise: groups == c_in == c_out (channel multiplier 1).
 * Arguments in call order: data, kernel (OIHW, constant), [bias (constant)], [residual], out. */
typedef struct topi_conv2d {
  int64_t n, c_in, h, w;        /* input */
  int64_t c_out;
  int64_t kh, kw;
  int64_t stride_h, stride_w;   /* >= 1 */
  int64_t pad_h, pad_w;         /* zero padding on both sides, >= 0 */
  int64_t groups;               /* 1, or c_in (depthwise); 0 is read as 1 */
  topi_layout in_layout, out_layout;
  topi_epilogue epi;
  int64_t dilation_h, dilation_w; /* kernel taps dilation apart (0 or 1: none): tap (i, j) reads
                                     input (oy*stride_h + i*dilation_h - pad_h, ...); the
                                     kernel's extent is (kh - 1) * dilation_h + 1 */
  topi_fp fp;                   /* float32 (0) or float16 with its accumulation (topi_fp) */
} topi_conv2d;

/* The output size of a convolution, floor((h + 2 pad - ((kh - 1) dilation + 1)) / stride) + 1,
 * or -1 with an error in ctx (ctx may be NULL). */
int topi_conv2d_out_hw(tec_ctx *ctx, const topi_conv2d *p, int64_t *oh, int64_t *ow);
/* Checks the sizes, strides, padding, dilation, groups and layouts of p for template `who`. */
int topi_conv2d_check(tec_ctx *ctx, const char *who, const topi_conv2d *p);
/* The dilation of p along h and w: 1 when the field is 0. */
int64_t topi_conv2d_dilation_h(const topi_conv2d *p);
int64_t topi_conv2d_dilation_w(const topi_conv2d *p);
/* 2 * multiply-adds (the FLOP count benchmarks report; dilation does not change it). */
double topi_conv2d_flops(const topi_conv2d *p);

/* A layout transform of an activation tensor. Arguments: in, out. */
typedef struct topi_layout_problem {
  int64_t n, c, h, w;
  topi_layout from, to;
} topi_layout_problem;

/* Dense / matmul, fp32: out[i, j] = sum_k a[i, k] * b[k, j] (b_transposed: b[j, k], the fully
 * connected layer's [out_features][in_features] weight), then the epilogue (bias [n]).
 * Arguments: a, b, [bias], [residual [m][n]], out. b constant (const_b): packed in prepare. */
typedef struct topi_dense {
  int64_t m, n, k;
  int b_transposed;
  int const_b;
  topi_epilogue epi;
  topi_fp fp;     /* float32 (0) or float16 with its accumulation (topi_fp) */
} topi_dense;

/* Batched matmul, fp32 (TVM's batch_matmul): out[b][i][j] = sum_k a[b][i][k] * b[b][k][j].
 * Arguments: a ([batch][m][k]; transpose_a: [batch][k][m]), b ([batch][k][n]; transpose_b:
 * [batch][n][k], attention's Q·Kᵀ), out ([batch][m][n]). */
typedef struct topi_batch_matmul {
  int64_t batch, m, n, k;
  int transpose_a, transpose_b; /* 0 or 1 */
} topi_batch_matmul;

/* 2-d pooling, fp32, from layout in_layout to out_layout (any pair: a pool may be the edge's
 * layout change, e.g. the global pool of a network writing NCHW [n][c][1][1], the dense
 * layer's [n][c]). Tap (i, j) of output (oy, ox) reads input (oy*stride_h - pad_h + i*dil_h,
 * ox*stride_w - pad_w + j*dil_w); the window's extent is (kh - 1) * dil_h + 1 (TVM's / ONNX's
 * dilation). Output size floor((h + pad_h + pad_bottom - extent) / stride_h) + 1, or with
 * ceil_mode the ceiling, less one when that last window would start past the input and its
 * top padding (PyTorch's and ONNX Runtime's rule). Max: the padding never wins (it is
 * excluded, not zero). Average: by default (count_include_pad 0) the sum is divided by the
 * number of taps inside the input; with count_include_pad 1 by the taps inside the padded
 * input [-pad_h, h + pad_bottom) (so kh*kw unless a ceil_mode window runs past the bottom
 * padding, as ONNX defines it). Every window must hold a tap of the input (refused if not).
 * Global pooling (template global_pool): the window is the whole input; kh, kw, strides,
 * padding, dilation and ceil_mode must be 0. Arguments: in, out. */
typedef enum topi_pool_mode { TOPI_POOL_MAX, TOPI_POOL_AVG } topi_pool_mode;
typedef struct topi_pool {
  int64_t n, c, h, w;
  int64_t kh, kw;
  int64_t stride_h, stride_w;   /* >= 1 */
  int64_t pad_h, pad_w;         /* top and left padding: 0 <= pad < the window's extent */
  topi_pool_mode mode;
  int count_include_pad;        /* average only: 0 (default) excludes the padding, 1 counts it */
  topi_layout in_layout, out_layout;
  int pad_end_given;            /* 0: bottom = pad_h, right = pad_w (symmetric); 1: the two
                                   fields below apply (TVM's (top, left, bottom, right), ONNX's
                                   pads, SAME_UPPER / SAME_LOWER: topi_pool_auto_pad) */
  int64_t pad_bottom, pad_right;/* 0 <= pad < the window's extent */
  int64_t dilation_h, dilation_w; /* taps this far apart; 0 or 1: none (< 0 refused) */
  int ceil_mode;                /* 0 or 1: the output size rounded up (see above) */
} topi_pool;
/* The output size of a (non-global) pooling, or -1 with an error in ctx (ctx may be NULL). */
int topi_pool_out_hw(tec_ctx *ctx, const topi_pool *p, int64_t *oh, int64_t *ow);
/* ONNX's auto_pad: the paddings of p (pad_h, pad_w, pad_bottom, pad_right; pad_end_given set)
 * from h, w, the kernel, strides and dilation so that the output is ceil(h / stride) x
 * ceil(w / stride): total = max(0, (out - 1) * stride + extent - size), the odd one at the end
 * (TOPI_AUTO_PAD_SAME_UPPER) or at the start (SAME_LOWER); TOPI_AUTO_PAD_VALID: no padding.
 * -1 with an error for a bad mode or sizes (p unchanged). */
typedef enum topi_auto_pad {
  TOPI_AUTO_PAD_NOTSET, TOPI_AUTO_PAD_SAME_UPPER, TOPI_AUTO_PAD_SAME_LOWER, TOPI_AUTO_PAD_VALID
} topi_auto_pad;
int topi_pool_auto_pad(tec_ctx *ctx, topi_pool *p, topi_auto_pad mode);

/* Softmax over the rows of a [m][n] tensor (the classifier's [batch][classes]), numerically
 * stable: out[i, j] = exp(in[i, j] - max_j in[i, :]) / sum_j exp(in[i, j] - max). Arguments:
 * in, out. */
typedef struct topi_softmax {
  int64_t m, n;
} topi_softmax;

/* Element-wise add of two activations of the same layout (the residual add), then the
 * activation: out = act(a + b). Arguments: a, b, out. */
typedef struct topi_eltwise {
  int64_t n, c, h, w;
  topi_layout layout;
  topi_act act;
} topi_eltwise;

/* A depthwise convolution followed by a 1x1 (pointwise) one: MobileNet's block. dw is
 * depthwise (groups == c_in == c_out, no residual), NCHW[x]c -> NCHW[x]c; pw reads dw's output
 * (c_in, h, w and layout equal to dw's output), 1x1, stride 1, no padding, groups 1, -> NCHW[y]c.
 * Arguments in call order: data, dw kernel [c][1][kh][kw], [dw bias], pw kernel
 * [c_out][c][1][1], [pw bias], [pw residual], out (kernels and biases constant). */
typedef struct topi_dw_pw {
  topi_conv2d dw, pw;
} topi_dw_pw;

/* ---------------- templates ----------------
 * Each template's config struct, the fields its space's knobs are bound to; the template is
 * reached by the name in its comment through topi_declare / topi_space_of / topi_schedule. */

/* "conv2d_nchwc": conv2d NCHW[x]c (or NCHW: the first layer) -> NCHW[y]c, direct: blocked input and output
 * channels, a register tile over output width and output-channel blocks, the kernel packed once
 * ([C_out/y][C_in/x][kh][kw][x][y]) in prepare, the epilogue fused into the output stage; a 1x1
 * stride-1 unpadded convolution is scheduled as a GEMM over the packed layout (oh*ow as M).
 * groups must be 1. */
typedef struct topi_conv2d_nchwc_config {
  int64_t ow_tile;    /* output columns per register tile (GEMM form: output positions) */
  int64_t oc_tiles;   /* output-channel blocks per register tile */
  int64_t ic_split;   /* input-channel blocks per pass over the kernel window: all of them puts
                         the window (kh, kw) outermost in the reduction, 1 innermost */
  int64_t ic_unroll;  /* 1: those ic_split blocks unrolled inside a window step; 0: a loop */
  int64_t oh_tile;    /* output rows per parallel task (the row loop inside a task is what loop
                         partitioning splits at the padded rows); in the GEMM form 1, or with
                         parallel 2 the rows of a task (a divisor of oh up to 8) */
  int64_t pad_copy;   /* 1: the zero-padded input copied once per call (root, parallel); 0: the
                         padding inlined into the reads (topi_pad_read); only 0 without padding
                         or with all of it in the input's margin (the ring read in place) */
  int64_t parallel;   /* 1: parallel over (n, output-channel tiles, row tiles) fused; 2: over
                         (n, row tiles, output-channel tiles): with contiguous static ranges each
                         thread reads only its rows of the input, not all of it (the default
                         where the input is larger than the kernel); 0: serial */
  int64_t oh_reg;     /* output rows per register tile (direct form): the tile is oh_reg rows x
                         ow_tile columns x oc_tiles blocks, for rows too narrow to fill the
                         registers (ResNet's 7x7 layers); 1 in the GEMM form, whose ow_tile
                         positions already cross rows. At most oh_tile. */
} topi_conv2d_nchwc_config;

/* "depthwise_nchwc": depthwise conv2d NCHW[x]c -> NCHW[x]c: the zero padding inlined under likely() conditions,
 * so loop partitioning leaves the interior without a compare; a register tile of output columns
 * with the block's lanes vectorized; the kernel packed once ([C/x][kh][kw][x]) in prepare. */
typedef struct topi_depthwise_nchwc_config {
  int64_t ow_tile;    /* output columns per register tile */
  int64_t oh_tile;    /* output rows per register tile */
  int64_t parallel;   /* 1: parallel over (n, channel block, row tiles) */
} topi_depthwise_nchwc_config;

/* "dw_spatial_pack": depthwise conv2d NCHW -> NCHW with spatial packing: TVM's arm_cpu schedule (2018), the seed
 * of tec. Zero padding inlined into the packed copy of the data [n][C][h][w][VC], the kernel
 * packed to [C][1][kh][kw][VC] (prepare), the accumulator in the packed layout, VC
 * vectorized, the epilogue fused into the unpacking output stage. */
typedef struct topi_dw_spatial_pack_config {
  int64_t vc;             /* channels per packed block (the vector lanes) */
  int64_t tile_h, tile_w; /* output rows / columns per register tile */
  int64_t parallel;       /* parallel over channel blocks */
} topi_dw_spatial_pack_config;

/* "dense": dense / matmul (topi_dense): bench/gemm.c's GEMM. b packed into nr-column panels
 * bp[ceil(n/nr)][k][nr] (zero past n; when b is constant, once in prepare), an mr x nr register
 * tile of accumulators over the whole k loop (k unrolled by ku), jb panels per pass over a's
 * rows, the panel loop parallel; the epilogue applied as the tile is written. The packed layout
 * depends on nr, so each schedule builds its own packing and output stages over the declared
 * placeholders: op.out is a new tensor of d->out's shape (lower with op.args, as always).
 *
 *   for jo (parallel): bp[jb panels]; for io: for js in jb: tile = a[mr rows] x bp[panel];
 *                                                          out[tile] = epilogue(tile)
 *
 * Legal values (space): mr 1..12 (AVX-512; 8 elsewhere) and <= m; nr 1..4 vectors (lanes
 * floats), none of them entirely past n; ku 1, 2, 4, 8 (<= k); jb 1..4 (<= ceil(n / lanes));
 * parallel 0, 1, 2; pack root and none (not with b_transposed), panel (not with const_b).
 * Defaults: AVX-512 6 x 64, ku 8, pack panel (bench/gemm.c's best); AArch64 NEON 4 x 16
 * (examples/aot_arm/arm_kernels.c's tile), ARMv7 NEON 4 x 8, AVX2 6 x 16; jb as many panels
 * as fit 512 KiB (AVX-512; 256 KiB elsewhere) leaving >= 4 parallel steps. */
typedef struct topi_dense_config {
  int64_t mr;       /* rows per register tile (unrolled) */
  int64_t nr;       /* columns per register tile (vectorized) = the panel width of packed b */
  int64_t ku;       /* the tile's k loop split by ku, the inner part unrolled (1: not split) */
  int64_t jb;       /* panels per pass over a's rows: a's mr rows reused from L1 for jb tiles */
  int64_t parallel; /* the panel loop: 0 serial, 1 parallel in static ranges (one per thread),
                       2 parallel in dynamic chunks of automatic size (pragma parallel_dynamic) */
  int64_t pack;     /* b's panels: 0 all before the loop (parallel with the loop; in prepare when
                       const_b), 1 per group of jb panels inside the parallel loop, 2 not packed
                       (the tile reads b's rows in place) */
} topi_dense_config;

/* Dense int8 on the target's dot-product instruction (topi/dense_int8.c; docs/tensorize.md):
 * out[i, j] = sum_k int32(a[i, k]) * int32(w[j, k]), a uint8 [m][k] (activations), w int8
 * [n][k] constant (weights, fully connected layout), out int32 [m][n]; bit-exact (int32).
 * w is packed once in prepare into the VNNI layout wp[n/L][k/4][L][4] (L: the target's int32
 * lanes, at most 16) and an mr x nv*L register tile is computed with sch_tensorize(dot4):
 * vpdpbusd with VNNI, vpmaddwd without, sdot/usdot/widening NEON on ARM. k % 4 == 0, n a
 * multiple of L, m a multiple of mr (refused otherwise, naming the rule). Not a registered
 * template (no space yet): a config of zeros picks the default tile. Arguments: a, w, out. */
typedef struct topi_dense_int8_problem {
  int64_t m, n, k;
  int a_signed; /* a is int8: shifted to uint8 (a + 128) in a pass of its own, and the
                 * compensation 128 * sum_k w[j, k] (prepare, once) subtracted per column */
} topi_dense_int8_problem;
typedef struct topi_dense_int8_config {
  int64_t mr;   /* rows per register tile (unrolled); 0: the largest divisor of m that fits */
  int64_t nv;   /* int32 vectors per tile row (unrolled); 0: 4, 2 or 1, the first dividing n */
} topi_dense_int8_config;
int topi_dense_int8(tec_ctx *ctx, const topi_dense_int8_problem *p,
                    const topi_dense_int8_config *cfg,
                    const tec_target *target, topi_op *out);

/* "batch_matmul" (topi_batch_matmul): dense's GEMM per batch entry, the batch fused with the
 * panel loop (parallel); the knobs, their legal values, defaults and register rule are dense's
 * for one entry's GEMM (b transposed as transpose_b; pack none not with transpose_b). a
 * transposed is read in place. Same fields and meaning as topi_dense_config. */
typedef struct topi_batch_matmul_config {
  int64_t mr, nr, ku, jb, parallel, pack;
} topi_batch_matmul_config;

/* "conv2d_winograd": conv2d Winograd F(m x m, 3 x 3), m = 2 or 4: 3x3, stride 1, dilation 1, groups 1, NCHW[x]c
 * (or NCHW) -> NCHW[y]c. Input, kernel and output transforms are stages (matrices built from
 * interpolation points, topi/conv2d_winograd.c), the kernel transform runs in prepare, the
 * batched GEMM in the transformed domain is dense's register tile. Not bit-comparable with the
 * direct convolution: on ResNet-18's 3x3 layers F(4x4)'s error is 3-5x the direct template's
 * (<= 1.7e-4 relative, |a-b|/(1+|b|), against a double reference; F(2x2) about the same as
 * direct), measured in tests/test_conv_classic.c. */
typedef struct topi_conv2d_winograd_config {
  int64_t m;        /* output tile m x m: 2 or 4 */
  int64_t mr, nr;   /* the GEMM's register tile: output tiles x output channels (nr: lanes * k) */
  int64_t ku;       /* the GEMM's channel loop unrolled by ku */
  int64_t jb;       /* GEMM panels per pass over the transformed input */
  int64_t parallel; /* 1: transforms and GEMM parallel */
} topi_conv2d_winograd_config;

/* "conv2d_im2col": conv2d as im2col + GEMM: any kernel, stride, padding, dilation and groups; input in any layout
 * (NHWC reads contiguously), output NHWC. Per (image, group) a GEMM of the output positions (rows)
 * by the group's output channels (columns), dense's register tile; the im2col rows computed
 * per block of mr positions inside the GEMM's loops (never the whole matrix); the kernel packed
 * into the GEMM's panels in prepare. The knobs are dense's (its space for this GEMM). */
typedef struct topi_conv2d_im2col_config {
  int64_t mr, nr, ku, jb; /* dense's knobs (topi_dense_config) */
  int64_t parallel;       /* 1: parallel over (n, groups, panel groups) */
} topi_conv2d_im2col_config;

/* "conv2d_spatial_pack": conv2d NCHW -> NCHW with spatial packing, TVM's arm_cpu conv2d_nchw_spatial_pack: the input
 * windows of the VH x VW tiles packed (data_vec, a whole-tensor pass as in TVM), the kernel packed into VC
 * output-channel vectors (kernel_vec, prepare), a VH x VW x VC register tile (VC vectorized),
 * the epilogue fused into the unpacking output stage. Any kernel, stride, padding, dilation;
 * groups 1. */
typedef struct topi_conv2d_spatial_pack_config {
  int64_t vc;       /* output channels per register tile (a multiple of the vector lanes) */
  int64_t vh, vw;   /* output rows / columns per register tile */
  int64_t parallel; /* 1: parallel over (n, row tiles) */
} topi_conv2d_spatial_pack_config;

/* "dw_pw_fused": the depthwise + pointwise block (topi_dw_pw) in one loop nest: depthwise_nchwc's stages
 * (its register tile) compute the rows of dw's output that one tile of `fused` output rows of
 * the pointwise needs, inside the pointwise's loop (compute_at), so that tile (fused x ow x c
 * floats) stays in cache between the two; the pointwise is conv2d_nchwc's GEMM form over the
 * tile's positions (its register tile and knobs). fused = 0 computes dw's whole output first
 * (at root): the two templates' loop nests in one function, which is what the two layers do.
 *
 *   for (n, oy / fused) parallel
 *     mid[fused rows][ow][all channel blocks] = act(dw(data) + dw bias)   (depthwise tiles)
 *     for O / oc_tiles, for positions of the rows / ow_tile: the GEMM tile over mid
 *
 * Legal values: fused 0 or a divisor of the output height; the pointwise's ow_tile, oc_tiles,
 * ic_split, ic_unroll as in conv2d_nchwc (ow_tile up to 32 positions); the depthwise's dw_ow_tile,
 * dw_oh_tile as in depthwise_nchwc; parallel 0, 1. Defaults: the two templates' defaults (the
 * pointwise's for an R-row problem when fused), fused = R only where the whole intermediate
 * exceeds 1 MiB and the pointwise's kernel fits 256 KiB, R the smallest divisor of the output
 * height whose tile holds >= 48 KiB (<= 128 KiB); elsewhere 0 (bench/README.md, "fused"). */
typedef struct topi_dw_pw_fused_config {
  int64_t fused;      /* 0: dw at root (two passes); R > 0: dw computed per tile of R output rows */
  int64_t ow_tile;    /* pointwise: output positions per register tile */
  int64_t oc_tiles;   /* pointwise: output-channel blocks per register tile */
  int64_t ic_split;   /* pointwise: input-channel blocks per unrolled step (conv2d_nchwc) */
  int64_t ic_unroll;  /* pointwise: 1 those blocks unrolled, 0 a loop */
  int64_t dw_ow_tile; /* depthwise: output columns per register tile */
  int64_t dw_oh_tile; /* depthwise: output rows per register tile */
  int64_t parallel;   /* 1: parallel (fused: over (n, row tiles); fused = 0: each pass as its
                         template is) */
} topi_dw_pw_fused_config;

/* "layout_transform": layout transform NCHW <-> NHWC <-> NCHW[x]c (any pair; zero channels written past c). */
typedef struct topi_layout_config {
  int64_t vectorize;  /* 1: the innermost output dimension vectorized */
  int64_t parallel;   /* 1: parallel over the outer dimensions */
} topi_layout_config;

/* Pooling (topi_pool): template "pool2d" (max / average windows) and "global_pool" (the whole
 * input; output h = w = 1). A reduction stage per output vector (compute_at), the window
 * taps unrolled when unroll is 1, the innermost output dimension (the block's lanes in
 * NCHW[x]c) vectorized in groups of the target's lanes; parallel over the two outer
 * dimensions. Channels past c in an NCHW[x]c output are written as zero. */
typedef struct topi_pool_config {
  int64_t vectorize;  /* 1: the innermost output dimension vectorized (split by the lanes) */
  int64_t unroll;     /* 1: the window's taps unrolled (pool2d only; global_pool: 0) */
  int64_t parallel;   /* 1: parallel over the two outer output dimensions, fused */
} topi_pool_config;

/* Softmax (topi_softmax), template "softmax": the row maxima, the exponentials, their sums and
 * the quotients, a row at a time (the first three computed at the output's row loop). */
typedef struct topi_softmax_config {
  int64_t vectorize;  /* 1: the exponential and the quotient loops vectorized, the max and the
                       * sum factored by the lanes (rfactor) */
  int64_t parallel;   /* 1: parallel over the rows */
} topi_softmax_config;

/* Residual add (topi_eltwise), template "eltwise_add": out = act(a + b), one pass, the
 * innermost dimension vectorized, the outer two parallel. (Inside a network, prefer the
 * residual epilogue of the convolution that produces a or b: no extra pass at all.) */
typedef struct topi_eltwise_config {
  int64_t vectorize;  /* 1: the innermost dimension vectorized (split by the lanes) */
  int64_t parallel;   /* 1: parallel over the two outer dimensions, fused */
} topi_eltwise_config;

/* ---------------- quantized (int8) templates: docs/quantized.md ----------------
 * The scheme (one for every template, checked bit-exact against tests/support/qnnref.c):
 * an int8 activation q stands for scale * (q - zero_point) (a topi_qparams: scale > 0 and
 * finite, zero_point in [-128, 127]); int8 weights are symmetric (zero point 0) with one fp32
 * scale per output channel, w_scale[c] > 0 (an argument: f32 [c_out], constant); accumulation
 * is int32; the requantization is fused into the output stage:
 *
 *   acc  = sum (q_in - zp_in) * w + bias[c]            int32 (bias: int32, scale in*w_scale[c])
 *   m[c] = w_scale[c] * (in.scale / out.scale)         fp32, the quotient rounded first
 *   q    = clamp(round_even((float)acc * m[c]) + zp_out, lo, hi)
 *
 * (float)acc and the product are fp32 operations rounded to nearest even; the clamp is done on
 * the float before rounding (lo - zp_out, hi - zp_out: the same result, and no float -> int
 * overflow). lo, hi: [-128, 127], narrowed by the activation: RELU [zp_out, 127], RELU6
 * [zp_out, zp_out + round_even(6 / out.scale)] (clamps, no separate pass). Templates compute
 * sum q_in * w (padding reads zp_in) and fold -zp_in * sum w into the bias in prepare, so the
 * inner reduction is a plain int8 x int8 -> int32 dot product.
 * The convolutions' activations are NCHW[x]c int8 with x a multiple of 4 (the 4 input channels
 * a dot-product instruction reduces are consecutive); they write the channels past c in the
 * last block as the zero point and never count what they read there (weights past c are
 * packed as 0). Pooling and add (any layout) treat those lanes as channels: give them the
 * zero point. */
typedef struct topi_qparams {
  float scale;        /* > 0, finite */
  int32_t zero_point; /* -128..127 */
} topi_qparams;

/* A quantized conv2d: conv's geometry and layouts (NCHW[x]c in and out, x % 4 == 0, margin 0),
 * conv.epi.bias (an int32 [c_out] bias argument) and conv.epi.act (NONE, RELU, RELU6 as
 * clamps); conv.epi.residual 0 (the residual add is template qnn_add). Depthwise:
 * groups == c_in == c_out, template qnn_depthwise. Arguments in call order: data (int8),
 * kernel (int8 OIHW, constant), [bias (int32 [c_out], constant)], w_scale (f32 [c_out],
 * constant), out (int8). */
typedef struct topi_qconv2d {
  topi_conv2d conv;
  topi_qparams in, out;
} topi_qconv2d;

/* A quantized dense (fully connected) layer: out[i, j] = requant(sum_k (a[i, k] - zp_in) *
 * w[j, k] + bias[j]). Arguments: a (int8 [m][k]), w (int8 [n][k], constant), [bias (int32 [n],
 * constant)], w_scale (f32 [n], constant), out (int8 [m][n]). */
typedef struct topi_qdense {
  int64_t m, n, k;
  int bias;           /* 1: a bias argument */
  topi_act act;
  topi_qparams in, out;
} topi_qdense;

/* Quantized pooling: pool's window, strides and symmetric padding (no dilation, ceil_mode or
 * pad_end_given), in and out layouts equal (NCHW, NHWC or NCHW[x]c, margin 0). Max: the padding
 * never wins; out = requant(max - zp_in) with m = in.scale / out.scale (the identity when the
 * two params are equal). Average: acc = sum of (q - zp_in) over the taps inside the input,
 * cnt the taps counted (count_include_pad), out = clamp(round_even(((float)acc * m) / (float)cnt)
 * + zp_out). Arguments: in (int8), out (int8). */
typedef struct topi_qpool {
  topi_pool pool;
  topi_qparams in, out;
} topi_qpool;

/* Quantized elementwise add of two activations of one shape and layout (NCHW, NHWC,
 * NCHW[x]c; margin 0), each with its own params:
 *   v = (double)(a - zp_a) * (double)(a.scale / out.scale) + (double)(b - zp_b) *
 *       (double)(b.scale / out.scale)      (the ratios fp32; products exact in double)
 *   out = clamp(round_even(v) + zp_out, lo, hi) with act as for conv. Arguments: a, b, out. */
typedef struct topi_qadd {
  int64_t n, c, h, w;
  topi_layout layout;
  topi_act act;
  topi_qparams a, b, out;
} topi_qadd;

/* "qnn_conv2d" (topi_qconv2d, groups 1): the kernel packed in prepare into
 * [C_out/y][C_in/x][kh][kw][x/4][y][4] (oneDNN's OIhw4i16o4i for x = y = 16: 4 input channels
 * innermost, a dot-product instruction's operand), its sums folded into the bias and the
 * multipliers m[c] computed there too; a register tile of oc_tile output-channel blocks x
 * ow_tile output columns, the reduction (ci block, ky, kx, x/4) outside it and the 4 input
 * channels x the block's lanes mapped onto the target's dot-product instruction by
 * sch_tensorize (vpdpbusd on VNNI, the input then read as uint8 from a per-call padded copy;
 * vpmaddwd without VNNI; sdot on AArch64 +dotprod; docs/tensorize.md), the requantization
 * applied as the tile is written. wlayout 1: the older plain nest (no instruction mapping). */
typedef struct topi_qconv2d_config {
  int64_t ow_tile;    /* output columns per register tile */
  int64_t parallel;   /* 1: parallel over (n, output-channel block, rows) fused */
  int64_t wlayout;    /* the packed kernel's two innermost dimensions: 0 [y][4] (OIhw4i16o4i:
                         the dot-product path, the default), 1 [4][y] (output channels
                         innermost: plain widening multiplies LLVM vectorizes) */
  int64_t oc_tile;    /* output-channel blocks per register tile: one broadcast of 4 input
                         bytes feeds oc_tile * y / lanes dot-product instructions */
  int64_t in_row;     /* 1: the input copy (padding, uint8 shift) made per output row inside
                         the row loop, the output blocks inside it (the rows stay in L1); 0:
                         once per call. The default: 1 for 1x1 kernels */
  int64_t plane;      /* 1: a 1x1 stride-1 unpadded convolution whose input needs no copy
                         (no uint8 shift) tiles its plane as one row of h*w pixels, ow_tile
                         pixels per tile (no columns wasted at a row's end), the accumulators
                         started from the bias, each tile's ow_tile * y output bytes
                         requantized and stored as one vector; 0: row by row. Offered only
                         there; the default on AArch64 +dotprod when h*w is a multiple of 4
                         (docs/quantized.md) */
} topi_qconv2d_config;

/* "qnn_depthwise" (topi_qconv2d, groups == c_in == c_out, any kh x kw, stride, padding): the
 * kernel packed to int16 [C/x][kh][kw][x] in prepare (the reduction is the taps, s16 x s16 ->
 * s32 the fast path), a register tile of oh_tile x ow_tile pixels, lanes vectorized. */
typedef struct topi_qdepthwise_config {
  int64_t ow_tile;    /* output columns per register tile */
  int64_t oh_tile;    /* output rows per register tile */
  int64_t parallel;   /* 1: parallel over (n, channel block) */
  int64_t dot;        /* 1: the row's taps as the dot-product instruction's group of 4 (the
                       * default with VNNI), 0: s16 multiply-adds per tap */
  int64_t in_row;     /* dot path: the padded input copied per row tile (1: in L1, the default
                       * at stride 2) or per channel block (0) */
} topi_qdepthwise_config;

/* "qnn_dense" (topi_qdense): w packed in prepare into [ceil(n/nr)][ceil(k/4)][nr][4] (zero
 * past n and k; wlayout 1: [..][4][nr]), an mr x nr register tile over the whole k loop; the
 * dot-product path (wlayout 0, the default) maps each 4 k x lanes columns onto the target's
 * instruction (sch_tensorize, as qnn_conv2d), the requantization applied as the tile is
 * written. */
typedef struct topi_qdense_config {
  int64_t mr;         /* rows per register tile */
  int64_t nr;         /* columns per register tile (the packed panel width) */
  int64_t parallel;   /* 1: the panel loop parallel */
  int64_t wlayout;    /* the panel's two innermost dimensions: 0 [nr][4] (4 k innermost: the
                         dot-product path, the default), 1 [4][nr] (plain vectorization) */
} topi_qdense_config;

/* "qnn_pool" (topi_qpool) and "qnn_add" (topi_qadd): one pass, the innermost dimension
 * vectorized, the outer two fused and parallel. */
typedef struct topi_qelem_config {
  int64_t vectorize;  /* 1: the innermost output dimension vectorized */
  int64_t parallel;   /* 1: parallel over the two outer dimensions, fused */
} topi_qelem_config;

/* Checks a params pair for `who` ("qnn_conv2d: in.scale must be > 0 and finite (got 0)",
 * "... out.zero_point must be in [-128, 127] (got 200)"). what names it. 0 or -1 with error. */
int topi_qparams_check(tec_ctx *ctx, const char *who, const char *what, topi_qparams q);
/* Checks per-channel weight scales before a call: count == c_out (a per-tensor scale is
 * given as c_out copies), each > 0 and finite; -1 with an error naming the channel. */
int topi_qnn_check_scales(tec_ctx *ctx, const char *who, const float *w_scale, int64_t count,
                          int64_t c_out);
/* The clamp bounds [lo, hi] of an int8 output with params out and activation act. */
void topi_qnn_bounds(topi_qparams out, topi_act act, int32_t *lo, int32_t *hi);

/* Calibration (deterministic, from min/max; docs/quantized.md):
 * topi_qnn_calibrate: the asymmetric params of n values x: the range [min(x, 0), max(x, 0)]
 * (0 is exact), scale = (hi - lo) / 255 (1 when the range is 0), zero_point =
 * clamp(round_even(-128 - lo / scale), -128, 127).
 * topi_qnn_quantize: q[i] = clamp(round_even(x[i] / p.scale) + zp, -128, 127).
 * topi_qnn_quantize_weights: w is [c_out][per] (OIHW, or [n][k]); per channel c scale[c] =
 * max |w[c, :]| / 127 (1 when all zero), q = clamp(round_even(w / scale[c]), -127, 127).
 * topi_qnn_quantize_bias: q[c] = round_even(b[c] / (in_scale * w_scale[c])) in double,
 * saturated to int32. All -1 with an error on a NULL pointer, a size < 1 or a bad scale. */
int topi_qnn_calibrate(tec_ctx *ctx, const float *x, int64_t n, topi_qparams *out);
int topi_qnn_quantize(tec_ctx *ctx, const float *x, int64_t n, topi_qparams p, int8_t *q);
int topi_qnn_quantize_weights(tec_ctx *ctx, const float *w, int64_t c_out, int64_t per,
                              int8_t *q, float *scale);
int topi_qnn_quantize_bias(tec_ctx *ctx, const float *b, int64_t c_out, float in_scale,
                           const float *w_scale, int32_t *q);
/* ---------- a problem as text (topi/problem_text.c, the keys: topi/problem_keys.c) ----------
 * The one text form of a problem: "key=value" pairs separated by commas (or spaces), what
 * `tec ... --shape` takes and what the workload of a tuning record names (tune_problem_canon
 * sorts the pairs). topi_problem_str prints every key of the kind spelled out (pooling's ONNX
 * keys only when set), so the text does not depend on any template's defaults, and
 * topi_problem_parse(topi_problem_str(p)) gives p back: print -> parse -> print is the
 * identity (tests/test_problem_text.c, every kind). Parsing takes keys not given from the
 * template's defaults (the table), refuses bad values, unknown keys and missing required keys
 * by name ("--shape: oc is missing (conv2d_nchwc: output channels, >= 1 ...); e.g. ..."). */
typedef union topi_problem {
  topi_conv2d conv;
  topi_layout_problem layout;
  topi_dense dense;
  topi_dw_pw dw_pw;
  topi_pool pool;
  topi_softmax softmax;
  topi_eltwise eltwise;
  topi_batch_matmul bmm;
  topi_qconv2d qconv;
  topi_qdense qdense;
  topi_qpool qpool;
  topi_qadd qadd;
} topi_problem;
/* problem (of kind) as text in ctx's arena; NULL with an error (out of memory) */
const char *topi_problem_str(tec_ctx *ctx, topi_problem_kind kind, const void *problem);
/* text into *out, for template t (its kind and its defaults). 0, or -1 with an error in ctx. */
int topi_problem_parse(tec_ctx *ctx, const topi_template *t, const char *text, topi_problem *out);
/* One key of a problem kind: its default (NULL: required; a key's name: that key's value),
 * its legal values for people, and for a required key an example value. */
typedef struct topi_problem_key {
  const char *key;
  const char *dflt;
  const char *legal;
  const char *example;
} topi_problem_key;
/* t's problem keys (ending with a NULL key); key's default for t (template overrides first;
 * NULL: required); the keys' names ("n c h w ..."); a text giving every required key
 * ("c=16,h=14,w=14,oc=32"). The last two in ctx's arena. */
const topi_problem_key *topi_problem_keys(const topi_template *t);
const char *topi_problem_key_default(const topi_template *t, const char *key);
const char *topi_problem_key_names(tec_ctx *ctx, const topi_template *t);
const char *topi_problem_example(tec_ctx *ctx, const topi_template *t);

/* ---------- the C type names the checked calls pass ---------- */

#define TOPI_TYPE_CASE_(T) T *: #T, const T *: #T
#define TOPI_PROBLEM_TYPE(p)                                                                  \
  _Generic((p), TOPI_TYPE_CASE_(topi_conv2d), TOPI_TYPE_CASE_(topi_layout_problem),           \
           TOPI_TYPE_CASE_(topi_dense), TOPI_TYPE_CASE_(topi_pool),                           \
           TOPI_TYPE_CASE_(topi_softmax), TOPI_TYPE_CASE_(topi_eltwise),                      \
           TOPI_TYPE_CASE_(topi_dw_pw), TOPI_TYPE_CASE_(topi_batch_matmul),                   \
           TOPI_TYPE_CASE_(topi_qconv2d), TOPI_TYPE_CASE_(topi_qdense),                       \
           TOPI_TYPE_CASE_(topi_qpool), TOPI_TYPE_CASE_(topi_qadd),                           \
           default: (const char *)0)
#define TOPI_CONFIG_TYPE(c)                                                                   \
  _Generic((c), TOPI_TYPE_CASE_(topi_conv2d_nchwc_config),                                   \
           TOPI_TYPE_CASE_(topi_depthwise_nchwc_config),                                      \
           TOPI_TYPE_CASE_(topi_dw_spatial_pack_config), TOPI_TYPE_CASE_(topi_dense_config),  \
           TOPI_TYPE_CASE_(topi_conv2d_winograd_config),                                      \
           TOPI_TYPE_CASE_(topi_conv2d_im2col_config),                                        \
           TOPI_TYPE_CASE_(topi_conv2d_spatial_pack_config),                                  \
           TOPI_TYPE_CASE_(topi_dw_pw_fused_config), TOPI_TYPE_CASE_(topi_layout_config),     \
           TOPI_TYPE_CASE_(topi_pool_config), TOPI_TYPE_CASE_(topi_softmax_config),           \
           TOPI_TYPE_CASE_(topi_eltwise_config), TOPI_TYPE_CASE_(topi_batch_matmul_config),   \
           TOPI_TYPE_CASE_(topi_qconv2d_config), TOPI_TYPE_CASE_(topi_qdepthwise_config),     \
           TOPI_TYPE_CASE_(topi_qdense_config), TOPI_TYPE_CASE_(topi_qelem_config),           \
           default: (const char *)0)

/* ---------- choice ---------- */

/* Picks the conv2d template for p from the rule table in topi/conv2d_pick.c (depthwise ->
 * depthwise_nchwc / dw_spatial_pack; 3x3 stride 1 undilated with an output of 14x14 or more ->
 * conv2d_winograd; blocked output -> conv2d_nchwc; NHWC output or groups -> conv2d_im2col;
 * NCHW -> NCHW -> conv2d_spatial_pack): the first rule that holds and whose template applies.
 * force (a template name, or NULL) overrides the table. *why (may be NULL) says which rule
 * picked it ("conv2d_winograd: rule 3 (...)"). The rules do not depend on the target yet (they
 * were measured on AVX-512). Use the template's space for its default config. -1 with an error
 * when no rule applies or the forced template does not apply. */
int topi_conv2d_pick(tec_ctx *ctx, const topi_conv2d *p, const char *force,
                     const topi_template **out, const char **why);

#endif

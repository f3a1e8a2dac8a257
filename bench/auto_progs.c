/* auto_progs.c — the programs of `bench/run auto`, declared in tec with no schedule (what
 * the auto-scheduler gets). Their twins in Halide are in halide_progs.cpp: same stages, same
 * arithmetic in the same order, same buffers (auto.h's layout contract). Sizes: the issue's
 * (quick: small ones for the smoke mode). */
#include <string.h>
#include "auto.h"

const char *const auto_prog_names[] = {"gemm",    "blur",    "conv",      "dw",   "unsharp", "harris",
                                       "maxpool", "softmax", "layernorm", "attention", "stencil",
                                       /* held out: added after the rules were written (session 28) */
                                       "pyramid", "lcn",     "conv1d",    "mlp",  "colmean", "resize", NULL};

typedef struct U {
  te_tensor *t[4];
  const ir_expr *r[3];
  int64_t n[2];
  double f;
  int kind;
} U;

static U *u_new(tec_ctx *ctx, U u) {
  U *p = tec_ctx_alloc(ctx, sizeof *p);
  *p = u;
  return p;
}
static te_tensor *stage(tec_ctx *ctx, const char *name, int nd, const int64_t *shape, te_body_fn body, U u) {
  return te_compute(ctx, &(te_compute_decl){.name = name, .ndim = nd, .shape = te_shape(ctx, nd, shape),
                                            .body = body, .user = u_new(ctx, u)});
}
static te_tensor *input(tec_ctx *ctx, const char *name, int nd, const int64_t *shape, int constant) {
  return constant ? te_const_placeholder(ctx, name, TEC_F32, nd, te_shape(ctx, nd, shape))
                  : te_placeholder(ctx, name, TEC_F32, nd, te_shape(ctx, nd, shape));
}
#define SH(...) ((const int64_t[]){__VA_ARGS__})
#define F(v) ir_float(ctx, (v))
#define I(v) ir_int(ctx, (v))
#define ADD ir_add
#define MUL ir_mul
#define SUB ir_sub

/* ---- GEMM: C[i][j] = sum_k A[i][k] B[k][j] ---- */
static const ir_expr *gemm_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  return TE_SUM(MUL(TE_AT(u->t[0], i[0], u->r[0]), TE_AT(u->t[1], u->r[0], i[1])), u->r[0]);
}
static int gemm(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t n = quick ? 128 : 1024;
  te_tensor *A = input(ctx, "A", 2, SH(n, n), 0), *B = input(ctx, "B", 2, SH(n, n), 0);
  te_tensor *C = stage(ctx, "C", 2, SH(n, n), gemm_b, (U){.t = {A, B}, .r = {te_reduce_axis_n(ctx, "k", n)}});
  topi_dense *d = tec_ctx_alloc(ctx, sizeof *d);
  *d = (topi_dense){.m = n, .n = n, .k = n};
  *p = (auto_prog){tec_ctx_printf(ctx, "GEMM %lld", (long long)n), 3, {A, B, C}, "dense", d, 2.0 * n * n * n};
  return 0;
}

/* ---- 3x3 blur (apps/blur): in [H+2][W+2], blur_x [H+2][W], blur_y [H][W] ---- */
static const ir_expr *three(tec_ctx *ctx, const ir_expr *a, const ir_expr *b, const ir_expr *c) {
  return MUL(ADD(ADD(a, b), c), F(1.0 / 3.0));
}
static const ir_expr *blurx_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return three(ctx, TE_AT(u->t[0], i[0], i[1]), TE_AT(u->t[0], i[0], ADD(i[1], I(1))),
               TE_AT(u->t[0], i[0], ADD(i[1], I(2))));
}
static const ir_expr *blury_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return three(ctx, TE_AT(u->t[0], i[0], i[1]), TE_AT(u->t[0], ADD(i[0], I(1)), i[1]),
               TE_AT(u->t[0], ADD(i[0], I(2)), i[1]));
}
static int blur(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t h = quick ? 64 : 2160, w = quick ? 72 : 3840;
  te_tensor *in = input(ctx, "input", 2, SH(h + 2, w + 2), 0);
  te_tensor *bx = stage(ctx, "blur_x", 2, SH(h + 2, w), blurx_b, (U){.t = {in}});
  te_tensor *by = stage(ctx, "blur_y", 2, SH(h, w), blury_b, (U){.t = {bx}});
  *p = (auto_prog){tec_ctx_printf(ctx, "blur 3x3 %lldx%lld", (long long)w, (long long)h), 2, {in, by}, NULL, NULL, 0};
  return 0;
}

/* ---- ResNet 3x3 conv + bias + ReLU (apps/conv_layer's layouts): input [H+2][W+2][CI],
 * filter [CI][3][3][CO], bias [CO], relu [H][W][CO] ---- */
static const ir_expr *conv_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  const ir_expr *rc = u->r[0], *ry = u->r[1], *rx = u->r[2];
  return TE_SUM(MUL(TE_AT(u->t[1], rc, ry, rx, i[2]), TE_AT(u->t[0], ADD(i[0], ry), ADD(i[1], rx), rc)), rc, ry, rx);
}
static const ir_expr *bias_relu_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return ir_max(ADD(TE_AT(u->t[0], i[0], i[1], i[2]), TE_AT(u->t[1], i[2])), F(0));
}
static int conv(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t c = quick ? 64 : 128, h = quick ? 10 : 28;
  te_tensor *in = input(ctx, "input", 3, SH(h + 2, h + 2, c), 0);
  te_tensor *f = input(ctx, "filter", 4, SH(c, 3, 3, c), 1), *b = input(ctx, "bias", 1, SH(c), 1);
  te_tensor *cv = stage(ctx, "conv", 3, SH(h, h, c), conv_b,
                        (U){.t = {in, f}, .r = {te_reduce_axis_n(ctx, "rc", c), te_reduce_axis_n(ctx, "ry", 3),
                                                te_reduce_axis_n(ctx, "rx", 3)}});
  te_tensor *out = stage(ctx, "relu", 3, SH(h, h, c), bias_relu_b, (U){.t = {cv, b}});
  topi_conv2d *q = tec_ctx_alloc(ctx, sizeof *q);
  *q = (topi_conv2d){.n = 1, .c_in = c, .h = h, .w = h, .c_out = c, .kh = 3, .kw = 3, .stride_h = 1, .stride_w = 1,
                     .pad_h = 1, .pad_w = 1, .groups = 1, .in_layout = {TOPI_NCHWC, 16, 0},
                     .out_layout = {TOPI_NCHWC, 16, 0}, .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
  *p = (auto_prog){tec_ctx_printf(ctx, "conv3x3 %lldx%lldx%lld", (long long)c, (long long)h, (long long)h),
                   4, {in, f, b, out}, "conv2d_nchwc", q, 2.0 * h * h * c * c * 9};
  return 0;
}

/* ---- MobileNet v1 depthwise layer 1 (+ bias, ReLU), NHWC: input [H+2][W+2][C], filter
 * [3][3][C], bias [C], out [H][W][C] ---- */
static const ir_expr *dw_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  const ir_expr *ry = u->r[0], *rx = u->r[1];
  return TE_SUM(MUL(TE_AT(u->t[0], ADD(i[0], ry), ADD(i[1], rx), i[2]), TE_AT(u->t[1], ry, rx, i[2])), ry, rx);
}
static int dw(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t c = quick ? 16 : 32, h = quick ? 12 : 112;
  te_tensor *in = input(ctx, "input", 3, SH(h + 2, h + 2, c), 0);
  te_tensor *f = input(ctx, "filter", 3, SH(3, 3, c), 1), *b = input(ctx, "bias", 1, SH(c), 1);
  te_tensor *d = stage(ctx, "dw", 3, SH(h, h, c), dw_b,
                       (U){.t = {in, f}, .r = {te_reduce_axis_n(ctx, "ry", 3), te_reduce_axis_n(ctx, "rx", 3)}});
  te_tensor *out = stage(ctx, "relu", 3, SH(h, h, c), bias_relu_b, (U){.t = {d, b}});
  topi_conv2d *q = tec_ctx_alloc(ctx, sizeof *q);
  *q = (topi_conv2d){.n = 1, .c_in = c, .h = h, .w = h, .c_out = c, .kh = 3, .kw = 3, .stride_h = 1, .stride_w = 1,
                     .pad_h = 1, .pad_w = 1, .groups = c, .in_layout = {TOPI_NCHWC, 16, 0},
                     .out_layout = {TOPI_NCHWC, 16, 0}, .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
  *p = (auto_prog){tec_ctx_printf(ctx, "depthwise %lldx%lldx%lld", (long long)c, (long long)h, (long long)h),
                   4, {in, f, b, out}, "depthwise_nchwc", q, 2.0 * h * h * c * 9};
  return 0;
}

/* ---- unsharp mask (apps/unsharp, sigma 1.5): input [3][H+6][W+6] (planar), gray
 * [H+6][W+6], blur_y [H][W+6], blur_x [H][W], sharpen, ratio [H][W], out [3][H][W] ---- */
static double kern(int k) { /* exp(-k^2 / (2 sigma^2)) / (sqrt(2 pi) sigma), sigma 1.5 */
  static const double v[4] = {0.26596152026762, 0.21970564473946, 0.12384140315297, 0.04332165452180};
  return v[k];
}
static const ir_expr *gray_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return ADD(ADD(MUL(F(0.299), TE_AT(u->t[0], I(0), i[0], i[1])), MUL(F(0.587), TE_AT(u->t[0], I(1), i[0], i[1]))),
             MUL(F(0.114), TE_AT(u->t[0], I(2), i[0], i[1])));
}
/* k0 f(0) + k1 (f(-1) + f(1)) + k2 (...) + k3 (...), centred at offset 3 along axis u->kind */
static const ir_expr *gauss_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *y = i[0], *x = i[1];
#define AT(o) (u->kind == 0 ? TE_AT(u->t[0], ADD(y, I(o)), x) : TE_AT(u->t[0], y, ADD(x, I(o))))
  const ir_expr *e = MUL(F(kern(0)), AT(3));
  for (int k = 1; k <= 3; k++) e = ADD(e, MUL(F(kern(k)), ADD(AT(3 - k), AT(3 + k))));
#undef AT
  return e;
}
static const ir_expr *sharpen_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return SUB(MUL(F(2), TE_AT(u->t[0], ADD(i[0], I(3)), ADD(i[1], I(3)))), TE_AT(u->t[1], i[0], i[1]));
}
static const ir_expr *ratio_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return ir_div(TE_AT(u->t[0], i[0], i[1]), TE_AT(u->t[1], ADD(i[0], I(3)), ADD(i[1], I(3))));
}
static const ir_expr *unsharp_out_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return MUL(TE_AT(u->t[0], i[1], i[2]), TE_AT(u->t[1], i[0], ADD(i[1], I(3)), ADD(i[2], I(3))));
}
static int unsharp(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t h = quick ? 64 : 2160, w = quick ? 72 : 3840;
  te_tensor *in = input(ctx, "input", 3, SH(3, h + 6, w + 6), 0);
  te_tensor *g = stage(ctx, "gray", 2, SH(h + 6, w + 6), gray_b, (U){.t = {in}});
  te_tensor *by = stage(ctx, "blur_y", 2, SH(h, w + 6), gauss_b, (U){.t = {g}, .kind = 0});
  te_tensor *bx = stage(ctx, "blur_x", 2, SH(h, w), gauss_b, (U){.t = {by}, .kind = 1});
  te_tensor *sh = stage(ctx, "sharpen", 2, SH(h, w), sharpen_b, (U){.t = {g, bx}});
  te_tensor *ra = stage(ctx, "ratio", 2, SH(h, w), ratio_b, (U){.t = {sh, g}});
  te_tensor *out = stage(ctx, "output", 3, SH(3, h, w), unsharp_out_b, (U){.t = {ra, in}});
  *p = (auto_prog){tec_ctx_printf(ctx, "unsharp %lldx%lldx3", (long long)w, (long long)h), 2, {in, out}, NULL, NULL, 0};
  return 0;
}

/* ---- Harris corners (apps/harris): input [3][H+4][W+4], gray [H+4][W+4], Ix, Iy and their
 * products [H+2][W+2], the 3x3 sums, det, trace and the output [H][W] ---- */
static const ir_expr *grad_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  /* centred at (y + 1, x + 1); kind 0: Iy, 1: Ix (the app's term order) */
  const ir_expr *y = i[0], *x = i[1];
#define G(dy, dx) TE_AT(u->t[0], ADD(y, I(1 + (dy))), ADD(x, I(1 + (dx))))
  if (u->kind == 0)
    return ADD(ADD(ADD(ADD(ADD(MUL(G(-1, -1), F(-1.0 / 12)), MUL(G(1, -1), F(1.0 / 12))), MUL(G(-1, 0), F(-2.0 / 12))),
                       MUL(G(1, 0), F(2.0 / 12))), MUL(G(-1, 1), F(-1.0 / 12))), MUL(G(1, 1), F(1.0 / 12)));
  return ADD(ADD(ADD(ADD(ADD(MUL(G(-1, -1), F(-1.0 / 12)), MUL(G(-1, 1), F(1.0 / 12))), MUL(G(0, -1), F(-2.0 / 12))),
                     MUL(G(0, 1), F(2.0 / 12))), MUL(G(1, -1), F(-1.0 / 12))), MUL(G(1, 1), F(1.0 / 12)));
#undef G
}
static const ir_expr *prod_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  return MUL(TE_AT(u->t[0], i[0], i[1]), TE_AT(u->t[1], i[0], i[1]));
}
static const ir_expr *sum3_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *e = NULL;
  for (int dy = 0; dy < 3; dy++)
    for (int dx = 0; dx < 3; dx++) {
      const ir_expr *t = TE_AT(u->t[0], ADD(i[0], I(dy)), ADD(i[1], I(dx)));
      e = e ? ADD(e, t) : t;
    }
  return e;
}
static const ir_expr *det_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  const ir_expr *sxx = TE_AT(u->t[0], i[0], i[1]), *syy = TE_AT(u->t[1], i[0], i[1]), *sxy = TE_AT(u->t[2], i[0], i[1]);
  return SUB(MUL(sxx, syy), MUL(sxy, sxy));
}
static const ir_expr *trace_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  return ADD(TE_AT(u->t[0], i[0], i[1]), TE_AT(u->t[1], i[0], i[1]));
}
static const ir_expr *harris_out_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *tr = TE_AT(u->t[1], i[0], i[1]);
  return SUB(TE_AT(u->t[0], i[0], i[1]), MUL(MUL(F(0.04), tr), tr));
}
static int harris(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t h = quick ? 64 : 2160, w = quick ? 72 : 3840;
  te_tensor *in = input(ctx, "input", 3, SH(3, h + 4, w + 4), 0);
  te_tensor *g = stage(ctx, "gray", 2, SH(h + 4, w + 4), gray_b, (U){.t = {in}});
  te_tensor *iy = stage(ctx, "Iy", 2, SH(h + 2, w + 2), grad_b, (U){.t = {g}, .kind = 0});
  te_tensor *ix = stage(ctx, "Ix", 2, SH(h + 2, w + 2), grad_b, (U){.t = {g}, .kind = 1});
  te_tensor *ixx = stage(ctx, "Ixx", 2, SH(h + 2, w + 2), prod_b, (U){.t = {ix, ix}});
  te_tensor *iyy = stage(ctx, "Iyy", 2, SH(h + 2, w + 2), prod_b, (U){.t = {iy, iy}});
  te_tensor *ixy = stage(ctx, "Ixy", 2, SH(h + 2, w + 2), prod_b, (U){.t = {ix, iy}});
  te_tensor *sxx = stage(ctx, "Sxx", 2, SH(h, w), sum3_b, (U){.t = {ixx}});
  te_tensor *syy = stage(ctx, "Syy", 2, SH(h, w), sum3_b, (U){.t = {iyy}});
  te_tensor *sxy = stage(ctx, "Sxy", 2, SH(h, w), sum3_b, (U){.t = {ixy}});
  te_tensor *det = stage(ctx, "det", 2, SH(h, w), det_b, (U){.t = {sxx, syy, sxy}});
  te_tensor *tr = stage(ctx, "trace", 2, SH(h, w), trace_b, (U){.t = {sxx, syy}});
  te_tensor *out = stage(ctx, "output", 2, SH(h, w), harris_out_b, (U){.t = {det, tr}});
  *p = (auto_prog){tec_ctx_printf(ctx, "harris %lldx%lldx3", (long long)w, (long long)h), 2, {in, out}, NULL, NULL, 0};
  return 0;
}

/* ---- max pool 3x3 stride 2 (ResNet-18's, 64 x 112 x 112, padding given): input
 * [C][2H+2][2W+2], out [C][H][W] ---- */
static const ir_expr *pool_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return TE_MAX(TE_AT(u->t[0], i[0], ADD(MUL(i[1], I(2)), u->r[0]), ADD(MUL(i[2], I(2)), u->r[1])), u->r[0], u->r[1]);
}
static int maxpool(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t c = quick ? 16 : 64, h = quick ? 7 : 56;
  te_tensor *in = input(ctx, "input", 3, SH(c, 2 * h + 2, 2 * h + 2), 0);
  te_tensor *out = stage(ctx, "pool", 3, SH(c, h, h), pool_b,
                         (U){.t = {in}, .r = {te_reduce_axis_n(ctx, "ry", 3), te_reduce_axis_n(ctx, "rx", 3)}});
  *p = (auto_prog){tec_ctx_printf(ctx, "maxpool 3x3/2 %lldx%lldx%lld", (long long)c, (long long)(2 * h),
                                  (long long)(2 * h)), 2, {in, out}, NULL, NULL, 0};
  return 0;
}

/* ---- softmax over rows (and the attention's): max, exp, sum, divide; rows of length n,
 * the leading dims whatever they are (1 or 2 of them) ---- */
#define LEAD(u, i, ...) ((u)->kind == 2 ? TE_AT((u)->t[0], i[0], i[1], __VA_ARGS__) : TE_AT((u)->t[0], i[0], __VA_ARGS__))
static const ir_expr *rmax_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  return TE_MAX(LEAD(u, i, u->r[0]), u->r[0]);
}
static const ir_expr *rsum_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  return TE_SUM(LEAD(u, i, u->r[0]), u->r[0]);
}
static const ir_expr *rowop_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  int nd = u->kind + 1;
  const ir_expr *x = te_read(u->t[0], nd, i), *r = te_read(u->t[1], nd - 1, i);
  return u->f == 0 ? ir_exp(SUB(x, r)) : ir_div(x, r);
}
static te_tensor *softmax_of(tec_ctx *ctx, te_tensor *x, int lead, const int64_t *shape, const char *pre) {
  int64_t n = shape[lead];
  const ir_expr *k = te_reduce_axis_n(ctx, "k", n);
  te_tensor *mx = stage(ctx, tec_ctx_printf(ctx, "%smax", pre), lead, shape, rmax_b, (U){.t = {x}, .r = {k}, .kind = lead});
  te_tensor *e = stage(ctx, tec_ctx_printf(ctx, "%sexp", pre), lead + 1, shape, rowop_b,
                       (U){.t = {x, mx}, .kind = lead, .f = 0});
  te_tensor *s = stage(ctx, tec_ctx_printf(ctx, "%ssum", pre), lead, shape, rsum_b,
                       (U){.t = {e}, .r = {te_reduce_axis_n(ctx, "k2", n)}, .kind = lead});
  return stage(ctx, tec_ctx_printf(ctx, "%ssoftmax", pre), lead + 1, shape, rowop_b,
               (U){.t = {e, s}, .kind = lead, .f = 1});
}
static int softmax(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t m = quick ? 9 : 4096, n = quick ? 50 : 4096;
  te_tensor *x = input(ctx, "x", 2, SH(m, n), 0);
  te_tensor *out = softmax_of(ctx, x, 1, SH(m, n), "");
  topi_softmax *q = tec_ctx_alloc(ctx, sizeof *q);
  *q = (topi_softmax){.m = m, .n = n};
  *p = (auto_prog){tec_ctx_printf(ctx, "softmax %lldx%lld", (long long)m, (long long)n), 2, {x, out}, "softmax", q, 0};
  return 0;
}

/* ---- layer norm over rows: mean, variance (two passes), normalize, scale and shift ---- */
static const ir_expr *mean_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  return TE_SUM(MUL(TE_AT(u->t[0], i[0], u->r[0]), F(u->f)), u->r[0]);
}
static const ir_expr *var_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *d = SUB(TE_AT(u->t[0], i[0], u->r[0]), TE_AT(u->t[1], i[0]));
  return TE_SUM(MUL(MUL(d, d), F(u->f)), u->r[0]);
}
static const ir_expr *norm_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *d = SUB(TE_AT(u->t[0], i[0], i[1]), TE_AT(u->t[1], i[0]));
  const ir_expr *inv = ir_div(F(1), ir_sqrt(ADD(TE_AT(u->t[2], i[0]), F(1e-5))));
  return ADD(MUL(MUL(d, inv), TE_AT(u->t[3], i[1])), TE_AT(u->t[3], ADD(i[1], I(u->n[0]))));
}
static int layernorm(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t m = quick ? 9 : 4096, n = quick ? 50 : 1024;
  te_tensor *x = input(ctx, "x", 2, SH(m, n), 0);
  te_tensor *gb = input(ctx, "gamma_beta", 1, SH(2 * n), 1); /* gamma, then beta */
  te_tensor *mean = stage(ctx, "mean", 1, SH(m), mean_b, (U){.t = {x}, .r = {te_reduce_axis_n(ctx, "k", n)}, .f = 1.0 / n});
  te_tensor *var = stage(ctx, "var", 1, SH(m), var_b,
                         (U){.t = {x, mean}, .r = {te_reduce_axis_n(ctx, "k2", n)}, .f = 1.0 / n});
  te_tensor *out = stage(ctx, "norm", 2, SH(m, n), norm_b, (U){.t = {x, mean, var, gb}, .n = {n}});
  *p = (auto_prog){tec_ctx_printf(ctx, "layernorm %lldx%lld", (long long)m, (long long)n), 3, {x, gb, out}, NULL, NULL, 0};
  return 0;
}

/* ---- attention: S = Q K^T / 8, softmax over keys, O = P V; [heads][tokens][dims] ---- */
static const ir_expr *qk_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *d = u->r[0];
  return TE_SUM(MUL(MUL(TE_AT(u->t[0], i[0], i[1], d), TE_AT(u->t[1], i[0], i[2], d)), F(u->f)), d);
}
static const ir_expr *pv_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  const ir_expr *j = u->r[0];
  return TE_SUM(MUL(TE_AT(u->t[0], i[0], i[1], j), TE_AT(u->t[1], i[0], j, i[2])), j);
}
static int attention(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t h = quick ? 2 : 12, t = quick ? 13 : 128, d = quick ? 8 : 64;
  te_tensor *q = input(ctx, "Q", 3, SH(h, t, d), 0), *k = input(ctx, "K", 3, SH(h, t, d), 0);
  te_tensor *v = input(ctx, "V", 3, SH(h, t, d), 0);
  te_tensor *s = stage(ctx, "S", 3, SH(h, t, t), qk_b, (U){.t = {q, k}, .r = {te_reduce_axis_n(ctx, "d", d)}, .f = 0.125});
  te_tensor *pr = softmax_of(ctx, s, 2, SH(h, t, t), "P_");
  /* the reduce axis is not called "j": O's data axes are i, j, k by default, and a stage with
   * two loops of one name defeats the auto-scheduler's trace replay (O left unscheduled) */
  te_tensor *o = stage(ctx, "O", 3, SH(h, t, d), pv_b, (U){.t = {pr, v}, .r = {te_reduce_axis_n(ctx, "rj", t)}});
  *p = (auto_prog){tec_ctx_printf(ctx, "attention %lldh %lldt %lldd", (long long)h, (long long)t, (long long)d),
                   4, {q, k, v, o}, NULL, NULL, 4.0 * h * t * t * d};
  return 0;
}

/* ---- apps/stencil_chain in fp32: 32 stages of a 5x5 stencil, weights (i+1)(j+1)/225, each
 * stage 4 smaller than its input (the app's uint16 and repeat_edge dropped) ---- */
static const ir_expr *st5_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *e = NULL;
  for (int a = 0; a < 5; a++)
    for (int b = 0; b < 5; b++) {
      const ir_expr *t = MUL(F((a + 1) * (b + 1) / 225.0), TE_AT(u->t[0], ADD(i[0], I(a)), ADD(i[1], I(b))));
      e = e ? ADD(e, t) : t;
    }
  return e;
}
static int stencil(tec_ctx *ctx, int quick, auto_prog *p) {
  int stages = quick ? 4 : 32;
  int64_t h = quick ? 64 : 2560, w = quick ? 72 : 1536;
  te_tensor *in = input(ctx, "input", 2, SH(h + 4 * stages, w + 4 * stages), 0), *cur = in;
  for (int s = 0; s < stages; s++) {
    int64_t e = 4 * (stages - 1 - s);
    cur = stage(ctx, tec_ctx_printf(ctx, "stage_%d", s), 2, SH(h + e, w + e), st5_b, (U){.t = {cur}});
  }
  *p = (auto_prog){tec_ctx_printf(ctx, "stencil chain %d x 5x5 %lldx%lld", stages, (long long)w, (long long)h),
                   2, {in, cur}, NULL, NULL, 0};
  return 0;
}

/* ==== held-out programs (session 28): structures the rules were not written for ==== */

/* ---- a 3-level pyramid (Halide's interpolate / local laplacian flavour): [1 2 1] / 4
 * downsampling by 2, separable (rows then columns), twice; the level-1 detail d1 - up(d2) and
 * the output in + 0.5 (in - up(d1)) + 0.25 up(l1), up(f)[y][x] = f[y / 2][x / 2] (nearest).
 * in [N+3][N+3], dx1 [N+3][N/2+1], d1 [N/2+1][N/2+1], dx2 [N/2+1][N/4], d2 [N/4][N/4],
 * l1 [N/2][N/2], out [N][N] ---- */
static const ir_expr *w121(tec_ctx *ctx, const ir_expr *a, const ir_expr *b, const ir_expr *c) {
  return MUL(ADD(ADD(a, MUL(F(2), b)), c), F(0.25));
}
static const ir_expr *downx_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *x2 = MUL(i[1], I(2));
  return w121(ctx, TE_AT(u->t[0], i[0], x2), TE_AT(u->t[0], i[0], ADD(x2, I(1))), TE_AT(u->t[0], i[0], ADD(x2, I(2))));
}
static const ir_expr *downy_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *y2 = MUL(i[0], I(2));
  return w121(ctx, TE_AT(u->t[0], y2, i[1]), TE_AT(u->t[0], ADD(y2, I(1)), i[1]), TE_AT(u->t[0], ADD(y2, I(2)), i[1]));
}
static const ir_expr *half(tec_ctx *ctx, const ir_expr *v) { return ir_div(v, I(2)); }
static const ir_expr *detail_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return SUB(TE_AT(u->t[0], i[0], i[1]), TE_AT(u->t[1], half(ctx, i[0]), half(ctx, i[1])));
}
static const ir_expr *pyr_out_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *c = TE_AT(u->t[0], i[0], i[1]), *y = half(ctx, i[0]), *x = half(ctx, i[1]);
  return ADD(ADD(c, MUL(F(0.5), SUB(c, TE_AT(u->t[1], y, x)))), MUL(F(0.25), TE_AT(u->t[2], y, x)));
}
static int pyramid(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t n = quick ? 64 : 2048;
  te_tensor *in = input(ctx, "input", 2, SH(n + 3, n + 3), 0);
  te_tensor *dx1 = stage(ctx, "dx1", 2, SH(n + 3, n / 2 + 1), downx_b, (U){.t = {in}});
  te_tensor *d1 = stage(ctx, "d1", 2, SH(n / 2 + 1, n / 2 + 1), downy_b, (U){.t = {dx1}});
  te_tensor *dx2 = stage(ctx, "dx2", 2, SH(n / 2 + 1, n / 4), downx_b, (U){.t = {d1}});
  te_tensor *d2 = stage(ctx, "d2", 2, SH(n / 4, n / 4), downy_b, (U){.t = {dx2}});
  te_tensor *l1 = stage(ctx, "l1", 2, SH(n / 2, n / 2), detail_b, (U){.t = {d1, d2}});
  te_tensor *out = stage(ctx, "output", 2, SH(n, n), pyr_out_b, (U){.t = {in, d1, l1}});
  *p = (auto_prog){tec_ctx_printf(ctx, "pyramid 3 levels %lldx%lld", (long long)n, (long long)n), 2, {in, out},
                   NULL, NULL, 0};
  return 0;
}

/* ---- local contrast normalization: 5x5 box mean of the input and of its square (separable,
 * rows then columns: two branches sharing the input), out = (x - mean) / sqrt(meansq - mean^2
 * + 1e-3). in [H+4][W+4], bx, bxs [H+4][W], mean, msq, out [H][W] ---- */
static const ir_expr *box5x_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *e = NULL;
  for (int k = 0; k < 5; k++) {
    const ir_expr *t = TE_AT(u->t[0], i[0], ADD(i[1], I(k)));
    if (u->kind) t = MUL(t, t);
    e = e ? ADD(e, t) : t;
  }
  return MUL(e, F(0.2));
}
static const ir_expr *box5y_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *e = NULL;
  for (int k = 0; k < 5; k++) {
    const ir_expr *t = TE_AT(u->t[0], ADD(i[0], I(k)), i[1]);
    e = e ? ADD(e, t) : t;
  }
  return MUL(e, F(0.2));
}
static const ir_expr *lcn_out_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *m = TE_AT(u->t[1], i[0], i[1]);
  const ir_expr *var = ADD(SUB(TE_AT(u->t[2], i[0], i[1]), MUL(m, m)), F(1e-3));
  return ir_div(SUB(TE_AT(u->t[0], ADD(i[0], I(2)), ADD(i[1], I(2))), m), ir_sqrt(var));
}
static int lcn(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t h = quick ? 64 : 1080, w = quick ? 72 : 1920;
  te_tensor *in = input(ctx, "input", 2, SH(h + 4, w + 4), 0);
  te_tensor *bx = stage(ctx, "box_x", 2, SH(h + 4, w), box5x_b, (U){.t = {in}, .kind = 0});
  te_tensor *bxs = stage(ctx, "box_x_sq", 2, SH(h + 4, w), box5x_b, (U){.t = {in}, .kind = 1});
  te_tensor *mean = stage(ctx, "mean", 2, SH(h, w), box5y_b, (U){.t = {bx}});
  te_tensor *msq = stage(ctx, "mean_sq", 2, SH(h, w), box5y_b, (U){.t = {bxs}});
  te_tensor *out = stage(ctx, "output", 2, SH(h, w), lcn_out_b, (U){.t = {in, mean, msq}});
  *p = (auto_prog){tec_ctx_printf(ctx, "LCN 5x5 %lldx%lld", (long long)w, (long long)h), 2, {in, out}, NULL, NULL, 0};
  return 0;
}

/* ---- conv1d (kernel 3, no padding: the input has 2 more steps) + bias + GELU (tanh form)
 * over a sequence, channels last: in [T+2][CI], weight [3][CI][CO], bias [CO], out [T][CO] ---- */
static const ir_expr *conv1d_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  (void)ctx;
  const ir_expr *k = u->r[0], *c = u->r[1];
  return TE_SUM(MUL(TE_AT(u->t[0], ADD(i[0], k), c), TE_AT(u->t[1], k, c, i[1])), k, c);
}
static const ir_expr *gelu_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *v = ADD(TE_AT(u->t[0], i[0], i[1]), TE_AT(u->t[1], i[1]));
  const ir_expr *in = MUL(F(0.7978845608), ADD(v, MUL(MUL(MUL(F(0.044715), v), v), v)));
  return MUL(MUL(F(0.5), v), ADD(F(1), ir_tanh(in)));
}
static int conv1d(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t t = quick ? 24 : 512, c = quick ? 32 : 256;
  te_tensor *in = input(ctx, "input", 2, SH(t + 2, c), 0);
  te_tensor *w = input(ctx, "weight", 3, SH(3, c, c), 1), *b = input(ctx, "bias", 1, SH(c), 1);
  te_tensor *cv = stage(ctx, "conv1d", 2, SH(t, c), conv1d_b,
                        (U){.t = {in, w}, .r = {te_reduce_axis_n(ctx, "rk", 3), te_reduce_axis_n(ctx, "rc", c)}});
  te_tensor *out = stage(ctx, "gelu", 2, SH(t, c), gelu_b, (U){.t = {cv, b}});
  *p = (auto_prog){tec_ctx_printf(ctx, "conv1d+GELU %lld->%lld k3 %lld steps", (long long)c, (long long)c, (long long)t),
                   4, {in, w, b, out}, NULL, NULL, 2.0 * t * c * c * 3};
  return 0;
}

/* ---- two-layer MLP: h = relu(x W1 + b1), out = h W2 + b2; x [B][D], W1 [D][F], b1 [F],
 * W2 [F][D], b2 [D] (weights and biases constant) ---- */
static const ir_expr *bias_act_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *v = ADD(TE_AT(u->t[0], i[0], i[1]), TE_AT(u->t[1], i[1]));
  return u->kind ? ir_max(v, F(0)) : v;
}
static int mlp(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t b = quick ? 8 : 64, d = quick ? 64 : 1024, f = quick ? 128 : 4096;
  te_tensor *x = input(ctx, "x", 2, SH(b, d), 0);
  te_tensor *w1 = input(ctx, "W1", 2, SH(d, f), 1), *b1 = input(ctx, "b1", 1, SH(f), 1);
  te_tensor *w2 = input(ctx, "W2", 2, SH(f, d), 1), *b2 = input(ctx, "b2", 1, SH(d), 1);
  te_tensor *m1 = stage(ctx, "mm1", 2, SH(b, f), gemm_b, (U){.t = {x, w1}, .r = {te_reduce_axis_n(ctx, "k", d)}});
  te_tensor *h = stage(ctx, "hidden", 2, SH(b, f), bias_act_b, (U){.t = {m1, b1}, .kind = 1});
  te_tensor *m2 = stage(ctx, "mm2", 2, SH(b, d), gemm_b, (U){.t = {h, w2}, .r = {te_reduce_axis_n(ctx, "k2", f)}});
  te_tensor *out = stage(ctx, "output", 2, SH(b, d), bias_act_b, (U){.t = {m2, b2}, .kind = 0});
  *p = (auto_prog){tec_ctx_printf(ctx, "MLP %lld x %lld-%lld-%lld", (long long)b, (long long)d, (long long)f,
                                  (long long)d), 6, {x, w1, b1, w2, b2, out}, NULL, NULL, 4.0 * b * d * f};
  return 0;
}

/* ---- column means: out[j] = sum_i A[i][j] / M (a reduction along the non-unit axis) ---- */
static const ir_expr *colmean_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  return TE_SUM(MUL(TE_AT(u->t[0], u->r[0], i[0]), F(u->f)), u->r[0]);
}
static int colmean(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t m = quick ? 100 : 4096, n = quick ? 72 : 4096;
  te_tensor *a = input(ctx, "A", 2, SH(m, n), 0);
  te_tensor *out = stage(ctx, "colmean", 1, SH(n), colmean_b, (U){.t = {a}, .r = {te_reduce_axis_n(ctx, "r", m)}, .f = 1.0 / m});
  *p = (auto_prog){tec_ctx_printf(ctx, "column mean %lldx%lld", (long long)m, (long long)n), 2, {a, out}, NULL, NULL, 0};
  return 0;
}

/* ---- bilinear resize by 2/3 (3840x2160 -> 2560x1440) with computed indices (non-affine
 * reads): per axis s = max((o + 0.5) 1.5 - 0.5, 0), i0 = clamp(int(s), 0, n - 2), f = s - i0
 * (1.5 o + 0.25: exact in float, so every implementation gets the same weights); in [H][W],
 * out [2H/3][2W/3] ---- */
static const ir_expr *src_of(tec_ctx *ctx, const ir_expr *o, int64_t n, const ir_expr **i0) {
  const ir_expr *s = ir_max(SUB(MUL(ADD(ir_cast(TEC_F32, o), F(0.5)), F(1.5)), F(0.5)), F(0));
  *i0 = ir_max(ir_min(ir_cast(TEC_INDEX, s), I(n - 2)), I(0));
  return SUB(s, ir_cast(TEC_F32, *i0));
}
static const ir_expr *resize_b(tec_ctx *ctx, const ir_expr *const *i, void *p) {
  U *u = p;
  const ir_expr *y0, *x0;
  const ir_expr *fy = src_of(ctx, i[0], u->n[0], &y0), *fx = src_of(ctx, i[1], u->n[1], &x0);
  const ir_expr *y1 = ADD(y0, I(1)), *x1 = ADD(x0, I(1));
  const ir_expr *top = ADD(MUL(SUB(F(1), fx), TE_AT(u->t[0], y0, x0)), MUL(fx, TE_AT(u->t[0], y0, x1)));
  const ir_expr *bot = ADD(MUL(SUB(F(1), fx), TE_AT(u->t[0], y1, x0)), MUL(fx, TE_AT(u->t[0], y1, x1)));
  return ADD(MUL(SUB(F(1), fy), top), MUL(fy, bot));
}
static int resize(tec_ctx *ctx, int quick, auto_prog *p) {
  int64_t h = quick ? 60 : 2160, w = quick ? 72 : 3840;
  te_tensor *in = input(ctx, "input", 2, SH(h, w), 0);
  te_tensor *out = stage(ctx, "resized", 2, SH(h * 2 / 3, w * 2 / 3), resize_b, (U){.t = {in}, .n = {h, w}});
  *p = (auto_prog){tec_ctx_printf(ctx, "bilinear resize %lldx%lld -> %lldx%lld", (long long)w, (long long)h,
                                  (long long)(w * 2 / 3), (long long)(h * 2 / 3)), 2, {in, out}, NULL, NULL, 0};
  return 0;
}

int auto_prog_declare(tec_ctx *ctx, const char *name, int quick, auto_prog *p) {
  static const struct {
    const char *name;
    int (*fn)(tec_ctx *, int, auto_prog *);
  } tab[] = {{"gemm", gemm},       {"blur", blur},           {"conv", conv},           {"dw", dw},
             {"unsharp", unsharp}, {"harris", harris},       {"maxpool", maxpool},     {"softmax", softmax},
             {"layernorm", layernorm}, {"attention", attention}, {"stencil", stencil},
             {"pyramid", pyramid},     {"lcn", lcn},             {"conv1d", conv1d},       {"mlp", mlp},
             {"colmean", colmean},     {"resize", resize}};
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (!strcmp(tab[i].name, name)) return tab[i].fn(ctx, quick, p);
  return -1;
}

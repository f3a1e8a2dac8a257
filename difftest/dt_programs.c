/* dt_programs.c — the programs the tester schedules, each as tensor expressions (build) and
 * as plain C loops (reference), with a few variants each: shapes that divide and shapes that
 * do not, a symbolic size, sum and max. Shapes are small: a case must take milliseconds.
 *
 *   matmul     C = A B                          (8x12x6, 7x9x5, 16x16x8, 4x40x3)
 *   conv2d     pad = select(in bounds, data, 0); out = sum pad * kernel   (3x3, pad 1)
 *   depthwise  dw = sum over a 3x3 window per channel; out = dw + bias[c]
 *   elemwise   B = 2A, C = exp(B)/2, D = relu(C - 1), E = D + A  (variant 1: symbolic rows)
 *   reduce     R = sum (variant 1: max) of A over a 3x2 window
 *   prodcons   B = A*A + 1; C = B[i,j] + 2 B[i+1,j+1] + B[i+2,j]
 *   extern     B = A*A + 1; E = B[i,j] + B[i+1,j] by a C function (te_extern); C = 2E + B[i+1,j]
 *   scan       Y[0] = A[0]; Y[t] = Y[t-1]/2 + A[t], or through M[t] = Y[t-1] W / 4 (te_scan)
 */
#include <math.h>
#include <string.h>
#include "tec/tec.h"
#include "difftest/dt_internal.h"
#include "schedule/internal.h"

int64_t dt_numel(const dt_instance *in, int arg) {
  int64_t n = 1;
  for (int d = 0; d < in->ndim[arg]; d++) n *= in->shape[arg][d];
  return n;
}

void dt_fill_input(float *p, int64_t n, dt_program prog, int variant, int arg) {
  dt_rng r = dt_rng_make(0x5EEDull + (uint64_t)prog * 131 + (uint64_t)variant * 17, (uint64_t)arg);
  for (int64_t i = 0; i < n; i++) p[i] = (float)dt_rng_int(&r, 0, 19999) / 10000.0f - 1.0f;
}

/* Records argument k: tensor t with concrete shape dims. */
static void arg(dt_instance *in, te_tensor *t, int ndim, const int64_t *dims) {
  int k = in->nargs++;
  in->args[k] = t;
  in->ndim[k] = ndim;
  for (int d = 0; d < ndim; d++) in->shape[k][d] = dims[d];
}

static te_tensor *compute(tec_ctx *ctx, const char *name, int ndim, const ir_expr *const *shape,
                          te_body_fn body, void *user, const char *const *names) {
  return te_compute(ctx, &(te_compute_decl){.name = name, .ndim = ndim, .shape = shape,
                                            .body = body, .user = user, .axis_names = names});
}

/* A user struct for bodies, in the arena (cache_write re-runs nothing, but keep it alive). */
typedef struct dt_body {
  te_tensor *t[4];
  const ir_expr *r[3];
  int64_t n[4];
  int variant;
} dt_body;

static dt_body *body_new(tec_ctx *ctx) { return tec_ctx_alloc(ctx, sizeof(dt_body)); }

/* ---------- matmul ---------- */
/* M, N, K; N = 40: a vectorized j is wider than any target's registers (codegen slices it) */
static const int64_t mm_shapes[][3] = {{8, 12, 6}, {7, 9, 5}, {16, 16, 8}, {4, 40, 3}};

static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dt_body *b = u;
  return te_sum(ir_mul(TE_AT(b->t[0], i[0], b->r[0]), TE_AT(b->t[1], b->r[0], i[1])), 1, b->r,
                NULL);
}

static int mm_build(dt_instance *in) {
  tec_ctx *ctx = in->ctx;
  const int64_t *s = mm_shapes[in->variant];
  dt_body *b = body_new(ctx);
  if (!b) return -1;
  b->t[0] = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, s[0], s[2]));
  b->t[1] = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, s[2], s[1]));
  b->r[0] = te_reduce_axis_n(ctx, "k", s[2]);
  te_tensor *C = compute(ctx, "C", 2, TE_SHAPE(ctx, s[0], s[1]), mm_body, b, NULL);
  if (!C) return -1;
  arg(in, b->t[0], 2, (int64_t[]){s[0], s[2]});
  arg(in, b->t[1], 2, (int64_t[]){s[2], s[1]});
  arg(in, C, 2, (int64_t[]){s[0], s[1]});
  return 0;
}

static void mm_ref(int v, const float *const *x, float *out) {
  const int64_t M = mm_shapes[v][0], N = mm_shapes[v][1], K = mm_shapes[v][2];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) acc += (double)x[0][i * K + k] * x[1][k * N + j];
      out[i * N + j] = (float)acc;
    }
}

/* ---------- conv2d with zero padding ---------- */
static const int64_t cv_shapes[][4] = {{2, 3, 6, 7}, {3, 2, 5, 8}}; /* CI, CO, H, W */

static const ir_expr *pad_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dt_body *b = u;
  const ir_expr *h = ir_sub(i[1], ir_int(ctx, 1)), *w = ir_sub(i[2], ir_int(ctx, 1));
  const ir_expr *inb = ir_and(ir_and(ir_ge(h, ir_int(ctx, 0)), ir_lt(h, ir_int(ctx, b->n[0]))),
                              ir_and(ir_ge(w, ir_int(ctx, 0)), ir_lt(w, ir_int(ctx, b->n[1]))));
  return ir_select(inb, TE_AT(b->t[0], i[0], h, w), ir_float(ctx, 0.0));
}

static const ir_expr *conv_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dt_body *b = u;
  const ir_expr *x = TE_AT(b->t[2], b->r[0], ir_add(i[1], b->r[1]), ir_add(i[2], b->r[2]));
  return te_sum(ir_mul(x, TE_AT(b->t[1], i[0], b->r[0], b->r[1], b->r[2])), 3, b->r, NULL);
}

static int cv_build(dt_instance *in) {
  tec_ctx *ctx = in->ctx;
  const int64_t CI = cv_shapes[in->variant][0], CO = cv_shapes[in->variant][1];
  const int64_t H = cv_shapes[in->variant][2], W = cv_shapes[in->variant][3];
  dt_body *b = body_new(ctx);
  if (!b) return -1;
  b->n[0] = H, b->n[1] = W;
  b->t[0] = te_placeholder(ctx, "data", TEC_F32, 3, TE_SHAPE(ctx, CI, H, W));
  b->t[1] = te_const_placeholder(ctx, "kernel", TEC_F32, 4, TE_SHAPE(ctx, CO, CI, 3, 3));
  b->t[2] = compute(ctx, "pad", 3, TE_SHAPE(ctx, CI, H + 2, W + 2), pad_body, b, NULL);
  b->r[0] = te_reduce_axis_n(ctx, "rc", CI);
  b->r[1] = te_reduce_axis_n(ctx, "ry", 3);
  b->r[2] = te_reduce_axis_n(ctx, "rx", 3);
  te_tensor *out = compute(ctx, "out", 3, TE_SHAPE(ctx, CO, H, W), conv_body, b,
                           (const char *[]){"co", "h", "w"});
  if (!out) return -1;
  arg(in, b->t[0], 3, (int64_t[]){CI, H, W});
  arg(in, b->t[1], 4, (int64_t[]){CO, CI, 3, 3});
  arg(in, out, 3, (int64_t[]){CO, H, W});
  return 0;
}

static void cv_ref(int v, const float *const *x, float *out) {
  const int64_t CI = cv_shapes[v][0], CO = cv_shapes[v][1], H = cv_shapes[v][2], W = cv_shapes[v][3];
  for (int64_t co = 0; co < CO; co++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t w = 0; w < W; w++) {
        double acc = 0;
        for (int64_t c = 0; c < CI; c++)
          for (int64_t y = 0; y < 3; y++)
            for (int64_t z = 0; z < 3; z++) {
              int64_t hh = h + y - 1, ww = w + z - 1;
              if (hh < 0 || hh >= H || ww < 0 || ww >= W) continue;
              acc += (double)x[0][(c * H + hh) * W + ww] * x[1][((co * CI + c) * 3 + y) * 3 + z];
            }
        out[(co * H + h) * W + w] = (float)acc;
      }
}

/* ---------- depthwise convolution (valid) + bias ---------- */
static const int64_t dw_shapes[][3] = {{4, 6, 6}, {3, 5, 9}}; /* C, H, W (output) */

static const ir_expr *dw_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dt_body *b = u;
  const ir_expr *x = TE_AT(b->t[0], i[0], ir_add(i[1], b->r[0]), ir_add(i[2], b->r[1]));
  return te_sum(ir_mul(x, TE_AT(b->t[1], i[0], b->r[0], b->r[1])), 2, b->r, NULL);
}

static const ir_expr *bias_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dt_body *b = u;
  return ir_add(TE_AT(b->t[3], i[0], i[1], i[2]), TE_AT(b->t[2], i[0]));
}

static int dw_build(dt_instance *in) {
  tec_ctx *ctx = in->ctx;
  const int64_t C = dw_shapes[in->variant][0], H = dw_shapes[in->variant][1];
  const int64_t W = dw_shapes[in->variant][2];
  dt_body *b = body_new(ctx);
  if (!b) return -1;
  b->t[0] = te_placeholder(ctx, "data", TEC_F32, 3, TE_SHAPE(ctx, C, H + 2, W + 2));
  b->t[1] = te_placeholder(ctx, "kernel", TEC_F32, 3, TE_SHAPE(ctx, C, 3, 3));
  b->t[2] = te_placeholder(ctx, "bias", TEC_F32, 1, TE_SHAPE(ctx, C));
  b->r[0] = te_reduce_axis_n(ctx, "ry", 3);
  b->r[1] = te_reduce_axis_n(ctx, "rx", 3);
  b->t[3] = compute(ctx, "dw", 3, TE_SHAPE(ctx, C, H, W), dw_body, b,
                    (const char *[]){"c", "h", "w"});
  te_tensor *out = compute(ctx, "out", 3, TE_SHAPE(ctx, C, H, W), bias_body, b,
                           (const char *[]){"c", "h", "w"});
  if (!out) return -1;
  arg(in, b->t[0], 3, (int64_t[]){C, H + 2, W + 2});
  arg(in, b->t[1], 3, (int64_t[]){C, 3, 3});
  arg(in, b->t[2], 1, (int64_t[]){C});
  arg(in, out, 3, (int64_t[]){C, H, W});
  return 0;
}

static void dw_ref(int v, const float *const *x, float *out) {
  const int64_t C = dw_shapes[v][0], H = dw_shapes[v][1], W = dw_shapes[v][2];
  for (int64_t c = 0; c < C; c++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t w = 0; w < W; w++) {
        double acc = 0;
        for (int64_t y = 0; y < 3; y++)
          for (int64_t z = 0; z < 3; z++)
            acc += (double)x[0][(c * (H + 2) + h + y) * (W + 2) + w + z] * x[1][(c * 3 + y) * 3 + z];
        out[(c * H + h) * W + w] = (float)((float)acc + x[2][c]);
      }
}

/* ---------- an element-wise chain ---------- */
static const int64_t ew_shapes[][2] = {{6, 10}, {5, 8}, {9, 4}}; /* rows, cols; v1: rows symbolic */

static const ir_expr *ew_scale(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 2.0));
}
static const ir_expr *ew_exp(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(ir_exp(TE_AT((te_tensor *)u, i[0], i[1])), ir_float(ctx, 0.5));
}
static const ir_expr *ew_relu(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ir_expr *x = ir_sub(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 1.0));
  return ir_select(ir_gt(x, ir_float(ctx, 0.0)), x, ir_float(ctx, 0.0));
}
static const ir_expr *ew_add(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dt_body *b = u;
  return ir_add(TE_AT(b->t[1], i[0], i[1]), TE_AT(b->t[0], i[0], i[1]));
}

static int ew_build(dt_instance *in) {
  tec_ctx *ctx = in->ctx;
  const int64_t R = ew_shapes[in->variant][0], Cc = ew_shapes[in->variant][1];
  const ir_expr *rows = in->variant == 1 ? te_size_var(ctx, "n") : ir_int(ctx, R);
  const ir_expr *const *shp = (const ir_expr *[]){rows, ir_int(ctx, Cc)};
  const ir_expr **sh = tec_ctx_alloc(ctx, 2 * sizeof *sh);
  dt_body *b = body_new(ctx);
  if (!b || !sh) return -1;
  sh[0] = shp[0], sh[1] = shp[1];
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, sh);
  te_tensor *B = compute(ctx, "B", 2, sh, ew_scale, A, NULL);
  te_tensor *C = compute(ctx, "C", 2, sh, ew_exp, B, NULL);
  te_tensor *D = compute(ctx, "D", 2, sh, ew_relu, C, NULL);
  b->t[0] = A, b->t[1] = D;
  te_tensor *E = compute(ctx, "E", 2, sh, ew_add, b, NULL);
  if (!E) return -1;
  arg(in, A, 2, (int64_t[]){R, Cc});
  arg(in, E, 2, (int64_t[]){R, Cc});
  return 0;
}

static void ew_ref(int v, const float *const *x, float *out) {
  const int64_t n = ew_shapes[v][0] * ew_shapes[v][1];
  for (int64_t i = 0; i < n; i++) {
    float c = expf(x[0][i] * 2.0f) * 0.5f - 1.0f;
    out[i] = (c > 0 ? c : 0) + x[0][i];
  }
}

/* ---------- a windowed reduction (sum, or max) ---------- */
static const int64_t rd_shapes[][2] = {{6, 8}, {5, 7}}; /* output rows, cols; window 3x2 */

static const ir_expr *rd_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dt_body *b = u;
  const ir_expr *x = TE_AT(b->t[0], ir_add(i[0], b->r[0]), ir_add(i[1], b->r[1]));
  return b->variant == 1 ? te_max(x, 2, b->r, NULL) : te_sum(x, 2, b->r, NULL);
}

static int rd_build(dt_instance *in) {
  tec_ctx *ctx = in->ctx;
  const int64_t H = rd_shapes[in->variant][0], W = rd_shapes[in->variant][1];
  dt_body *b = body_new(ctx);
  if (!b) return -1;
  b->variant = in->variant;
  b->t[0] = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, H + 2, W + 1));
  b->r[0] = te_reduce_axis_n(ctx, "ka", 3);
  b->r[1] = te_reduce_axis_n(ctx, "kb", 2);
  te_tensor *R = compute(ctx, "R", 2, TE_SHAPE(ctx, H, W), rd_body, b, NULL);
  if (!R) return -1;
  arg(in, b->t[0], 2, (int64_t[]){H + 2, W + 1});
  arg(in, R, 2, (int64_t[]){H, W});
  return 0;
}

static void rd_ref(int v, const float *const *x, float *out) {
  const int64_t H = rd_shapes[v][0], W = rd_shapes[v][1];
  for (int64_t i = 0; i < H; i++)
    for (int64_t j = 0; j < W; j++) {
      double acc = v == 1 ? -INFINITY : 0;
      for (int64_t a = 0; a < 3; a++)
        for (int64_t c = 0; c < 2; c++) {
          double e = x[0][(i + a) * (W + 1) + j + c];
          acc = v == 1 ? (e > acc ? e : acc) : acc + e;
        }
      out[i * W + j] = (float)acc;
    }
}

/* ---------- producer / consumer with a halo ---------- */
static const int64_t pc_shapes[][2] = {{8, 8}, {7, 11}}; /* output rows, cols */

static const ir_expr *pc_prod(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  const ir_expr *a = TE_AT((te_tensor *)u, i[0], i[1]);
  return ir_add(ir_mul(a, a), ir_float(ctx, 1.0));
}
static const ir_expr *pc_cons(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor *B = u;
  const ir_expr *one = ir_int(ctx, 1), *two = ir_int(ctx, 2);
  return ir_add(ir_add(TE_AT(B, i[0], i[1]),
                       ir_mul(TE_AT(B, ir_add(i[0], one), ir_add(i[1], one)), ir_float(ctx, 2.0))),
                TE_AT(B, ir_add(i[0], two), i[1]));
}

static int pc_build(dt_instance *in) {
  tec_ctx *ctx = in->ctx;
  const int64_t H = pc_shapes[in->variant][0], W = pc_shapes[in->variant][1];
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, H + 2, W + 1));
  te_tensor *B = compute(ctx, "B", 2, A->shape, pc_prod, A, NULL);
  te_tensor *C = compute(ctx, "C", 2, TE_SHAPE(ctx, H, W), pc_cons, B, NULL);
  if (!C) return -1;
  arg(in, A, 2, (int64_t[]){H + 2, W + 1});
  arg(in, C, 2, (int64_t[]){H, W});
  return 0;
}

static void pc_ref(int v, const float *const *x, float *out) {
  const int64_t H = pc_shapes[v][0], W = pc_shapes[v][1];
#define PC_B(i, j) (x[0][(i) * (W + 1) + (j)] * x[0][(i) * (W + 1) + (j)] + 1.0f)
  for (int64_t i = 0; i < H; i++)
    for (int64_t j = 0; j < W; j++)
      out[i * W + j] = PC_B(i, j) + PC_B(i + 1, j + 1) * 2.0f + PC_B(i + 2, j);
#undef PC_B
}

/* ---------- an extern stage between tec stages ---------- */
static const int64_t ex_shapes[][2] = {{8, 8}, {7, 11}}; /* output rows, cols */

/* E's region from the rows [m, m + e + 1) of B it is given (strides in elements) */
static int32_t ex_pair_rows(const tec_extern_buffer *b, int32_t nbuf) {
  if (nbuf != 2 || b[0].dl.shape[0] < b[1].dl.shape[0] + 1 || b[0].min[0] != b[1].min[0] ||
      b[0].min[1] != b[1].min[1] || b[0].dl.shape[1] < b[1].dl.shape[1])
    return 1; /* not the region the region function asked for */
  const float *x = b[0].dl.data;
  float *e = b[1].dl.data;
  const int64_t *xs = b[0].dl.strides, *es = b[1].dl.strides;
  for (int64_t i = 0; i < b[1].dl.shape[0]; i++)
    for (int64_t j = 0; j < b[1].dl.shape[1]; j++)
      e[i * es[0] + j * es[1]] = x[i * xs[0] + j * xs[1]] + x[(i + 1) * xs[0] + j * xs[1]];
  return 0;
}

static int ex_region(tec_ctx *ctx, int input, const ir_expr *const *omin,
                     const ir_expr *const *oext, const ir_expr **imin, const ir_expr **iext,
                     void *user) {
  (void)input, (void)user;
  imin[0] = omin[0], iext[0] = ir_add(oext[0], ir_int(ctx, 1));
  imin[1] = omin[1], iext[1] = oext[1];
  return 0;
}

typedef struct ex_ins {
  te_tensor *B, *E;
} ex_ins;
static const ir_expr *ex_cons(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  ex_ins *x = u;
  return ir_add(ir_mul(TE_AT(x->E, i[0], i[1]), ir_float(ctx, 2.0)),
                TE_AT(x->B, ir_add(i[0], ir_int(ctx, 1)), i[1]));
}

static int ex_build(dt_instance *in) {
  tec_ctx *ctx = in->ctx;
  const int64_t H = ex_shapes[in->variant][0], W = ex_shapes[in->variant][1];
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, H + 1, W));
  te_tensor *B = compute(ctx, "B", 2, A->shape, pc_prod, A, NULL);
  te_tensor *E = B ? te_extern(ctx, &(te_extern_decl){.name = "E", .type = TEC_F32, .ndim = 2,
                                                      .shape = TE_SHAPE(ctx, H, W),
                                                      .ninputs = 1, .inputs = &B,
                                                      .symbol = "dt_pair_rows",
                                                      .fn = ex_pair_rows, .region = ex_region,
                                                      .thread_safe = in->variant == 1})
                   : NULL;
  ex_ins *x = tec_ctx_alloc(ctx, sizeof *x);
  if (!E || !x) return -1;
  *x = (ex_ins){B, E};
  te_tensor *C = compute(ctx, "C", 2, TE_SHAPE(ctx, H, W), ex_cons, x, NULL);
  if (!C) return -1;
  arg(in, A, 2, (int64_t[]){H + 1, W});
  arg(in, C, 2, (int64_t[]){H, W});
  return 0;
}

static void ex_ref(int v, const float *const *x, float *out) {
  const int64_t H = ex_shapes[v][0], W = ex_shapes[v][1];
#define EX_B(i, j) (x[0][(i) * W + (j)] * x[0][(i) * W + (j)] + 1.0f)
  for (int64_t i = 0; i < H; i++)
    for (int64_t j = 0; j < W; j++)
      out[i * W + j] = (EX_B(i, j) + EX_B(i + 1, j)) * 2.0f + EX_B(i + 1, j);
#undef EX_B
}

/* ---------- a recurrence (te_scan) ---------- */
static const int64_t sc_shapes[][2] = {{9, 12}, {6, 7}}; /* steps, columns */

static const ir_expr *sc_init(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  return TE_AT(((dt_body *)u)->t[0], i[0], i[1]);
}
/* M[t, x] = sum_k S[t - 1, k] * W[k, x] / 4 */
static const ir_expr *sc_mat(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dt_body *b = u;
  const ir_expr *prev = TE_AT(b->t[2], ir_sub(i[0], ir_int(ctx, 1)), b->r[0]);
  return te_sum(ir_mul(ir_mul(prev, TE_AT(b->t[1], b->r[0], i[1])), ir_float(ctx, 0.25)), 1,
                b->r, NULL);
}
static const ir_expr *sc_upd(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  dt_body *b = u;
  const ir_expr *a = TE_AT(b->t[0], i[0], i[1]);
  if (b->variant == 1) return ir_add(TE_AT(b->t[3], i[0], i[1]), a);
  return ir_add(ir_mul(TE_AT(b->t[2], ir_sub(i[0], ir_int(ctx, 1)), i[1]), ir_float(ctx, 0.5)), a);
}

static int sc_build(dt_instance *in) {
  tec_ctx *ctx = in->ctx;
  const int64_t T = sc_shapes[in->variant][0], W = sc_shapes[in->variant][1];
  dt_body *b = body_new(ctx);
  if (!b) return -1;
  b->variant = in->variant;
  const char *const tx[] = {"t", "x"};
  b->t[0] = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, T, W));
  b->t[1] = te_placeholder(ctx, "W", TEC_F32, 2, TE_SHAPE(ctx, W, W));
  b->t[2] = te_placeholder(ctx, "S", TEC_F32, 2, TE_SHAPE(ctx, T, W));
  b->r[0] = te_reduce_axis_n(ctx, "k", W);
  if (in->variant == 1 && !(b->t[3] = compute(ctx, "M", 2, b->t[0]->shape, sc_mat, b, tx)))
    return -1;
  te_tensor *I = compute(ctx, "I", 2, TE_SHAPE(ctx, 1, W), sc_init, b, tx);
  te_tensor *U = compute(ctx, "U", 2, b->t[0]->shape, sc_upd, b, tx);
  te_tensor *Y = I && U ? te_scan(ctx, &(te_scan_decl){.name = "Y", .state = b->t[2], .init = I,
                                                       .update = U})
                        : NULL;
  if (!Y) return -1;
  arg(in, b->t[0], 2, (int64_t[]){T, W});
  if (in->variant == 1) arg(in, b->t[1], 2, (int64_t[]){W, W});
  arg(in, Y, 2, (int64_t[]){T, W});
  return 0;
}

static void sc_ref(int v, const float *const *x, float *out) {
  const int64_t T = sc_shapes[v][0], W = sc_shapes[v][1];
  for (int64_t j = 0; j < W; j++) out[j] = x[0][j];
  for (int64_t t = 1; t < T; t++)
    for (int64_t j = 0; j < W; j++) {
      float m = 0;
      if (v == 1)
        for (int64_t k = 0; k < W; k++) m += out[(t - 1) * W + k] * x[1][k * W + j] * 0.25f;
      else
        m = out[(t - 1) * W + j] * 0.5f;
      out[t * W + j] = m + x[0][t * W + j];
    }
}

const dt_program_def dt_programs[DT_NPROGRAMS] = {
    [DT_MATMUL] = {"matmul", 4, mm_build, mm_ref},
    [DT_CONV2D] = {"conv2d", 2, cv_build, cv_ref},
    [DT_DEPTHWISE] = {"depthwise", 2, dw_build, dw_ref},
    [DT_ELEMWISE] = {"elemwise", 3, ew_build, ew_ref},
    [DT_REDUCE] = {"reduce", 2, rd_build, rd_ref},
    [DT_PRODCONS] = {"prodcons", 2, pc_build, pc_ref},
    [DT_EXTERN] = {"extern", 2, ex_build, ex_ref},
    [DT_SCAN] = {"scan", 2, sc_build, sc_ref},
};

const char *dt_program_name(dt_program p) {
  return p >= 0 && p < DT_NPROGRAMS ? dt_programs[p].name : "?";
}

int dt_program_by_name(const char *name) {
  for (int p = 0; p < DT_NPROGRAMS && name; p++)
    if (strcmp(dt_programs[p].name, name) == 0) return p;
  return -1;
}

int dt_program_variants(dt_program p) {
  return p >= 0 && p < DT_NPROGRAMS ? dt_programs[p].nvariants : 0;
}

dt_instance *dt_instance_new(tec_ctx *ctx, dt_program p, int variant) {
  if (!ctx) return NULL;
  if (p < 0 || p >= DT_NPROGRAMS || variant < 0 || variant >= dt_programs[p].nvariants) {
    tec_ctx_set_error(ctx, "dt_instance_new: program %d variant %d does not exist", (int)p,
                      variant);
    return NULL;
  }
  dt_instance *in = tec_ctx_alloc(ctx, sizeof *in);
  if (!in) return NULL;
  in->ctx = ctx;
  in->program = p;
  in->variant = variant;
  if (dt_programs[p].build(in) != 0) return NULL;
  in->sched = sch_create(ctx, 1, &in->args[in->nargs - 1]);
  return in->sched ? in : NULL;
}

te_tensor *dt_instance_tensor(dt_instance *in, const char *name) {
  if (!in || !in->sched || !name) return NULL;
  for (int i = 0; i < in->sched->nstage; i++)
    if (strcmp(in->sched->stages[i]->tensor->name, name) == 0) return in->sched->stages[i]->tensor;
  return NULL;
}

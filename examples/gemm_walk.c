/* gemm_walk.c — how to optimize GEMM with tec, one schedule step at a time (the C counterpart
 * of TVM's "How to optimize GEMM on CPU"). Each step prints its lowered IR, checks the result
 * against a naive reference and reports GFLOP/s:
 *
 *   1. naive            the default schedule: i, j, k
 *   2. blocking         32 x 32 tiles of C, k split by 4
 *   3. vectorization    the innermost j loop as 32-lane vectors
 *   4. loop permutation k.inner outside i.inner: B is read row by row, A broadcast
 *   5. array packing    B copied into 32-column panels, [N/32][K][32], read contiguously
 *   6. write cache      a 32 x 32 accumulator block (cache_write) per tile of C
 *   7. parallel         the outer loop over row blocks in parallel
 *   8. register tile    an 8 x 32 accumulator tile that LLVM keeps in 16 zmm registers for the
 *                       whole k loop
 *   9. panels per pass  a 6 x 64 tile (24 zmm accumulators), B packed per pair of 64-column
 *                       panels inside the parallel loop (hot in L2, no 4 MB copy up front),
 *                       two panels per pass over A
 *  10. topi dense      the same schedule from the operator template (topi/dense.c, what
 *                       bench/gemm.c measures): declare, the host's default config, schedule;
 *                       its result must equal step 9's bit for bit (same k order per element)
 *
 *   usage: gemm_walk [N]   (N x N x N, default 1024; any N works, tails become guards)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "example_args.h"
#include "tec/tec.h"

#define BN 32 /* the panel width of packed B and the j tile in steps 5-8: two zmm of floats */

/* ---------------- declarations ---------------- */
typedef struct gemm {
  int64_t n;
  te_tensor *a, *b;
  te_tensor *bp; /* packed B, or NULL: C reads B itself */
  int64_t bn;    /* its panel width */
  te_tensor *c;
  const ir_expr *k;
} gemm;

/* Packed B: Bp[jo, k, ji] = B[k, jo*BN + ji], 0 past the last column.
 *
 *   B (K x N, row-major)           Bp (N/BN panels, each K x BN, contiguous)
 *   k0: |b00 b01 ... b0,31|b0,32 ...     panel 0: k0: b00 .. b0,31   k1: b10 .. b1,31  ...
 *   k1: |b10 b11 ... b1,31|b1,32 ...     panel 1: k0: b0,32 .. b0,63 ...
 *
 * Why a compute tensor and not sch_cache_read: cache_read makes a copy stage with B's own
 * shape [K][N] (its loops can be split and reordered, but the buffer it writes stays
 * row-major [K][N]), so the inner kernel would still step N floats from one k to the next. The
 * packed layout is a different shape, and in tec a layout is declared, not scheduled: Bp is an
 * ordinary compute op whose body is the index map, and C reads Bp[j / BN, k, j % BN]. The
 * simplifier turns that read back into plain affine indices once j is split by BN. */
static const ir_expr *pack_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  gemm *g = user;
  const ir_expr *col = ir_add(ir_mul(i[0], ir_int(ctx, g->bn)), i[2]);
  /* the select's untaken arm is never loaded: no read past B's last column */
  return ir_select(ir_lt(col, ir_int(ctx, g->n)), TE_AT(g->b, i[1], col), ir_float(ctx, 0));
}

static const ir_expr *gemm_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  gemm *g = user;
  const ir_expr *b;
  if (g->bp) {
    const ir_expr *bn = ir_int(ctx, g->bn);
    b = TE_AT(g->bp, ir_floordiv(i[1], bn), g->k, ir_floormod(i[1], bn));
  } else {
    b = TE_AT(g->b, g->k, i[1]);
  }
  return te_sum(ir_mul(TE_AT(g->a, i[0], g->k), b), 1, &g->k, NULL);
}

static const char *const pack_axes[3] = {"jo", "k", "ji"};

/* packed: the panel width of Bp, or 0 for none */
static void declare(tec_ctx *ctx, gemm *g, int64_t n, int64_t packed) {
  *g = (gemm){.n = n, .bn = packed};
  g->a = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, n, n));
  g->b = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, n, n));
  g->k = te_reduce_axis_n(ctx, "k", n);
  if (packed)
    g->bp = te_compute(ctx, &(te_compute_decl){.name = "Bp", .ndim = 3,
                                               .shape = TE_SHAPE(ctx, (n + packed - 1) / packed, n, packed),
                                               .body = pack_body, .user = g,
                                               .axis_names = pack_axes});
  g->c = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = TE_SHAPE(ctx, n, n),
                                            .body = gemm_body, .user = g});
}

/* ---------------- the schedules ---------------- */
/* Each returns 0 or -1 (the message is in the ctx). */
#define TRY(x)                   \
  do {                           \
    if ((x) != 0) return -1;     \
  } while (0)

static int s_naive(sch_schedule *s, gemm *g) {
  (void)s, (void)g;
  return 0;
}

/* C's tile loops and k split: io, jo, ko, <inner order>, with the inner order chosen by `perm`
 * (0: ki, ii, ji as in step 2; 1: ii, ki, ji as in step 4). */
static int tile_c(sch_schedule *s, gemm *g, int perm, int vec, sch_iter **io_out) {
  sch_stage *sc = sch_stage_of(s, g->c);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 32, BN, &io, &jo, &ii, &ji));
  TRY(sch_split(sc, sch_reduce_axis(sc, 0), 4, &ko, &ki));
  if (perm)
    TRY(sch_reorder(sc, 6, (sch_iter *[]){io, jo, ko, ii, ki, ji}));
  else
    TRY(sch_reorder(sc, 6, (sch_iter *[]){io, jo, ko, ki, ii, ji}));
  if (vec) TRY(sch_vectorize(sc, ji));
  if (io_out) *io_out = io;
  return 0;
}

static int s_blocking(sch_schedule *s, gemm *g) { return tile_c(s, g, 0, 0, NULL); }
static int s_vectorize(sch_schedule *s, gemm *g) { return tile_c(s, g, 0, 1, NULL); }
static int s_permute(sch_schedule *s, gemm *g) { return tile_c(s, g, 1, 1, NULL); }

/* The packing copy: one panel row (bn floats) per vector store. */
static int vectorize_pack(sch_schedule *s, gemm *g) {
  sch_stage *sp = sch_stage_of(s, g->bp);
  return sch_vectorize(sp, sch_axis(sp, 2));
}

/* The register tile of steps 8 and 9: C.local (mr x bn) is computed at C's io and keeps k
 * outermost, the mr rows unrolled, the bn columns one vector (codegen cuts it into zmm). ku > 1:
 * k split by ku and the inner part unrolled too (the loop's counter, add and branch once per
 * ku steps of k). */
static int register_tile(sch_stage *sl, int ku) {
  sch_iter *li = sch_axis(sl, 0), *lj = sch_axis(sl, 1), *lk = sch_reduce_axis(sl, 0), *lki;
  if (ku > 1) {
    TRY(sch_split(sl, lk, ku, &lk, &lki));
    TRY(sch_reorder(sl, 4, (sch_iter *[]){lk, lki, li, lj}));
    TRY(sch_unroll(sl, lki));
  } else {
    TRY(sch_reorder(sl, 3, (sch_iter *[]){lk, li, lj}));
  }
  TRY(sch_unroll(sl, li));
  return sch_vectorize(sl, lj);
}

static int s_packed(sch_schedule *s, gemm *g) {
  TRY(tile_c(s, g, 1, 1, NULL));
  return vectorize_pack(s, g);
}

/* C.local (the accumulator, 32 x 32 floats) is computed per (io, jo) tile; C copies it out. */
static int write_cache(sch_schedule *s, gemm *g, int par) {
  te_tensor *cl = sch_cache_write(s, g->c, "local");
  if (!cl) return -1;
  sch_stage *sc = sch_stage_of(s, g->c), *sl = sch_stage_of(s, cl);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 32, BN, &io, &jo, &ii, &ji));
  TRY(sch_vectorize(sc, ji));
  TRY(sch_compute_at(sl, sc, jo));
  sch_iter *li = sch_axis(sl, 0), *lj = sch_axis(sl, 1);
  TRY(sch_split(sl, sch_reduce_axis(sl, 0), 4, &ko, &ki));
  TRY(sch_reorder(sl, 4, (sch_iter *[]){ko, li, ki, lj}));
  TRY(sch_unroll(sl, ki));
  TRY(sch_vectorize(sl, lj));
  if (par) TRY(sch_parallel(sc, io));
  return vectorize_pack(s, g);
}

static int s_cache(sch_schedule *s, gemm *g) { return write_cache(s, g, 0); }
static int s_parallel(sch_schedule *s, gemm *g) { return write_cache(s, g, 1); }

/* The register tile: 8 rows x 32 columns of C accumulate in 16 zmm registers over the whole
 * k loop (k outermost in C.local, the 8 rows unrolled, the 32 columns one 32-lane vector that
 * LLVM splits into two zmm). Per k: two loads of the packed B row, eight broadcasts of A,
 * sixteen FMAs. Panels (jo) outermost, so one 32-column panel of Bp stays in L2 while every
 * row block passes over it; jo is the parallel loop. */
static int s_register(sch_schedule *s, gemm *g) {
  te_tensor *cl = sch_cache_write(s, g->c, "local");
  if (!cl) return -1;
  sch_stage *sc = sch_stage_of(s, g->c), *sl = sch_stage_of(s, cl);
  sch_iter *io, *jo, *ii, *ji;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 8, BN, &io, &jo, &ii, &ji));
  TRY(sch_reorder(sc, 4, (sch_iter *[]){jo, io, ii, ji}));
  TRY(sch_vectorize(sc, ji));
  TRY(sch_parallel(sc, jo));
  TRY(sch_compute_at(sl, sc, io));
  TRY(register_tile(sl, 1));
  return vectorize_pack(s, g);
}

/* Step 9, what bench/gemm.c runs. A 6 x 64 tile holds 24 zmm accumulators: per k, four loads
 * of the Bp row, six broadcasts of A, 24 FMAs; k is unrolled by 8, so the loop's own three
 * instructions come once per 8 k (it matters when another thread shares the core). The panel
 * loop is split by two (jo2, js) with the row tiles between them: the six rows of A a tile
 * reads stay in L1 for the second panel, halving the traffic from L3. Bp is computed at jo2,
 * inside the parallel loop: each thread packs the two panels it is about to use (2 x 256 KB at
 * N = 1024, in its own L2) instead of all of B up front. */
static int s_panels(sch_schedule *s, gemm *g) {
  te_tensor *cl = sch_cache_write(s, g->c, "local");
  if (!cl) return -1;
  sch_stage *sc = sch_stage_of(s, g->c), *sl = sch_stage_of(s, cl), *sp = sch_stage_of(s, g->bp);
  sch_iter *io, *jo, *ii, *ji, *jo2, *js, *po, *pi;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 6, g->bn, &io, &jo, &ii, &ji));
  TRY(sch_split(sc, jo, 2, &jo2, &js));
  TRY(sch_reorder(sc, 5, (sch_iter *[]){jo2, io, js, ii, ji}));
  TRY(sch_vectorize(sc, ji));
  TRY(sch_parallel(sc, jo2));
  TRY(sch_compute_at(sl, sc, js));
  TRY(register_tile(sl, 8));
  TRY(sch_compute_at(sp, sc, jo2));
  TRY(sch_split(sp, sch_leaf_named(sp, "ji"), 16, &po, &pi)); /* one zmm per copy */
  return sch_vectorize(sp, pi);
}

typedef struct step {
  const char *name;
  int packed; /* Bp's panel width, 0: B is read directly */
  int (*schedule)(sch_schedule *, gemm *); /* NULL: topi dense (step 10) */
} step;

static const step steps[] = {
    {"1. naive", 0, s_naive},
    {"2. blocking (32x32 tiles, k split by 4)", 0, s_blocking},
    {"3. vectorization (j.inner as vectors)", 0, s_vectorize},
    {"4. loop permutation (io, jo, ko, ii, ki, ji)", 0, s_permute},
    {"5. array packing (B -> Bp[N/32][K][32])", BN, s_packed},
    {"6. write cache (32x32 accumulator block per tile)", BN, s_cache},
    {"7. parallel (row blocks)", BN, s_parallel},
    {"8. register tile (8x32 in zmm registers, panels outermost)", BN, s_register},
    {"9. panels per pass (6x64 tile, k unrolled by 8, Bp packed per panel pair in the parallel "
     "loop)", 64, s_panels},
    {"10. topi dense (the template's default config for this host)", 0, NULL},
};

/* ---------------- running and checking ---------------- */
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

typedef struct data {
  int64_t n;
  DLTensor a, b, c;
  double *ref;  /* the naive result, in double */
  double *mag;  /* sum of |a*b| per element: the scale of its rounding error */
  float *prev;  /* the previous step's result */
} data;

/* Step 10: the GEMM as the dense operator template gives it. Declare the problem (a [n][n],
 * b [n][n], out [n][n]), take the default config of its space for the host (on AVX-512 6 x 64,
 * ku 8, jb 2 at 1024: step 9) and schedule it; the arguments are op.args. */
static lower_func *topi_gemm(tec_ctx *ctx, int64_t n) {
  topi_dense p = {.m = n, .n = n, .k = n};
  topi_decl dc;
  tune_space sp;
  topi_op op;
  if (topi_declare(ctx, "dense", &p, &dc) || topi_space_of(ctx, "dense", &p, NULL, &sp) ||
      topi_schedule(&dc, sp.default_config, NULL, &op))
    return NULL;
  printf("topi dense config: %s\n", tune_config_str(ctx, &sp, sp.default_config));
  return tec_lower(op.sched, "gemm", op.nargs, op.args);
}

/* Builds, prints, checks and times one step. 0, or 1 if the result is wrong or it fails. */
static int run_step(const step *st, data *d) {
  int64_t n = d->n;
  tec_ctx *ctx = tec_ctx_new();
  lower_func *f = NULL;
  tec_module *m = NULL;
  printf("==== %s ====\n", st->name);
  if (st->schedule) {
    gemm g;
    declare(ctx, &g, n, st->packed);
    sch_schedule *s = sch_create(ctx, 1, &g.c);
    if (s && st->schedule(s, &g) == 0)
      f = tec_lower(s, "gemm", 3, (te_tensor *[]){g.a, g.b, g.c});
  } else {
    f = topi_gemm(ctx, n);
  }
  if (f) m = tec_build(ctx, 1, &f, NULL);
  if (!m) {
    printf("failed: %s\n\n", tec_ctx_error(ctx));
    tec_ctx_free(ctx);
    return 1;
  }
  tec_lower_print(stdout, f);
  tec_packed_fn fn = tec_module_get(m, "gemm");
  DLTensor *args[3] = {&d->a, &d->b, &d->c};
  float *c = d->c.data;
  memset(c, 0, sizeof(float) * (size_t)(n * n));
  double t0 = now();
  if (fn(args, 3) != 0) {
    printf("failed: %s\n\n", tec_rt_last_error());
    tec_ctx_free(ctx);
    return 1;
  }
  double first = now() - t0;
  double worst = 0;
  for (int64_t i = 0; i < n * n; i++) {
    double e = fabs(c[i] - d->ref[i]) / (1.0 + d->mag[i]);
    if (e > worst) worst = e;
  }
  /* time: a few calls for slow steps, more for fast ones; the median (a step slower than half
   * a second is timed by its checked call alone, to keep the walk short) */
  int reps = first > 0.5 ? 0 : first > 0.05 ? 5 : 15;
  double ts[15] = {first};
  for (int r = 0; r < reps; r++) {
    t0 = now();
    fn(args, 3);
    ts[r] = now() - t0;
  }
  if (reps) qsort(ts, (size_t)reps, sizeof(double), cmp_double);
  double t = ts[reps / 2];
  int ok = worst < 1e-5;
  printf("-> %s: %.3f ms, %.1f GFLOP/s, max relative error %.2g (%s)\n", st->name, t * 1e3,
         2.0 * (double)n * (double)n * (double)n / t * 1e-9, worst, ok ? "ok" : "WRONG");
  if (!st->schedule) { /* the template against step 9: the same sums in the same order */
    int same = memcmp(c, d->prev, sizeof(float) * (size_t)(n * n)) == 0;
    printf("-> the same numbers as step 9, bit for bit: %s\n", same ? "yes" : "NO");
    ok &= same;
  }
  printf("\n");
  memcpy(d->prev, c, sizeof(float) * (size_t)(n * n));
  tec_ctx_free(ctx);
  return !ok;
}

int main(int argc, char **argv) {
  int64_t n = 1024;
  ex_opt opts[] = {{"n", EX_INT, &n, 1, 4096, "the size: C (n x n) = A (n x n) * B (n x n)"}};
  int rc = ex_args_parse("GEMM optimized one schedule step at a time; each step printed, checked and timed.", argc, argv,
                         opts, 1);
  if (rc) return rc == 1 ? 0 : 2;
  data d = {.n = n};
  int64_t shape[2] = {n, n};
  if (tec_dl_alloc(&d.a, TEC_F32, 2, shape) || tec_dl_alloc(&d.b, TEC_F32, 2, shape) ||
      tec_dl_alloc(&d.c, TEC_F32, 2, shape)) {
    fprintf(stderr, "gemm_walk: %s\n", tec_rt_last_error());
    return 1;
  }
  float *a = d.a.data, *b = d.b.data;
  unsigned seed = 2024;
  for (int64_t i = 0; i < n * n; i++) {
    seed = seed * 1103515245u + 12345u;
    a[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    seed = seed * 1103515245u + 12345u;
    b[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
  /* the reference: i, k, j order (unit stride), in double */
  d.ref = calloc((size_t)(n * n), sizeof(double));
  d.mag = calloc((size_t)(n * n), sizeof(double));
  d.prev = calloc((size_t)(n * n), sizeof(float));
  if (!d.ref || !d.mag || !d.prev) {
    fprintf(stderr, "gemm_walk: out of memory\n");
    return 1;
  }
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = 0; k < n; k++) {
      double aik = a[i * n + k];
      for (int64_t j = 0; j < n; j++) {
        double t = aik * b[k * n + j];
        d.ref[i * n + j] += t;
        d.mag[i * n + j] += fabs(t);
      }
    }
  int status = 0;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) status |= run_step(&steps[i], &d);
  free(d.ref), free(d.mag), free(d.prev);
  tec_dl_free(&d.a), tec_dl_free(&d.b), tec_dl_free(&d.c);
  return status;
}

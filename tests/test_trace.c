/* test_trace.c — schedules as data: every schedule of examples/ and of the tests that can be
 * rebuilt on its own (README, matmul, gemm_walk's steps, the topi templates through the
 * registry, caches, packing, rfactor, prefetch, pragmas, storage_align) is traced, declared
 * again in a fresh ctx, replayed (directly, and through JSON printed and parsed back) and must
 * lower to the identical program; the C printer's text; one replayed schedule run against a
 * naive matmul; bad JSON and traces that do not fit their declaration, asserted as text. */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
/* white-box: one test changes a loop behind the primitives' back (the trace check must see it) */
#include "schedule/internal.h"

/* ---------------- declarations ---------------- */

/* One declared operator: its arguments (inputs, then the output) and what bodies need. */
typedef struct decl {
  int nargs;
  te_tensor *args[6];
  te_tensor *a, *b, *bp, *c;
  const ir_expr *k, *k2; /* reduce axes */
  int64_t n, bn;
} decl;

static te_tensor *out_of(decl *d) { return d->args[d->nargs - 1]; }

static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  decl *d = user;
  const ir_expr *b;
  if (d->bp) {
    const ir_expr *bn = ir_int(ctx, d->bn);
    b = TE_AT(d->bp, ir_floordiv(i[1], bn), d->k, ir_floormod(i[1], bn));
  } else {
    b = TE_AT(d->b, d->k, i[1]);
  }
  return te_sum(ir_mul(TE_AT(d->a, i[0], d->k), b), 1, &d->k, NULL);
}

/* gemm_walk's packed B: Bp[jo, k, ji] = B[k, jo*bn + ji], 0 past the last column */
static const ir_expr *pack_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  decl *d = user;
  const ir_expr *col = ir_add(ir_mul(i[0], ir_int(ctx, d->bn)), i[2]);
  return ir_select(ir_lt(col, ir_int(ctx, d->n)), TE_AT(d->b, i[1], col), ir_float(ctx, 0));
}

static void set_args(decl *d, int n, te_tensor *const *t) {
  d->nargs = n;
  memcpy(d->args, t, sizeof *t * (size_t)n);
}

/* C[m x n] = A[m x k] B[k x n]; bn > 0: through gemm_walk's packed Bp */
static void declare_mm(tec_ctx *ctx, decl *d, int64_t m, int64_t n, int64_t k, int64_t bn) {
  static const char *const pack_axes[3] = {"jo", "k", "ji"};
  *d = (decl){.n = n, .bn = bn};
  d->a = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, m, k));
  d->b = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, k, n));
  d->k = te_reduce_axis_n(ctx, "k", k);
  if (bn)
    d->bp = te_compute(ctx, &(te_compute_decl){.name = "Bp", .ndim = 3,
                                               .shape = TE_SHAPE(ctx, (n + bn - 1) / bn, k, bn),
                                               .body = pack_body, .user = d,
                                               .axis_names = pack_axes});
  d->c = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = TE_SHAPE(ctx, m, n),
                                            .body = mm_body, .user = d});
  set_args(d, 3, (te_tensor *[]){d->a, d->b, d->c});
}

static void decl_mm64(tec_ctx *ctx, decl *d) { declare_mm(ctx, d, 64, 48, 80, 0); }
static void decl_mm100(tec_ctx *ctx, decl *d) { declare_mm(ctx, d, 100, 100, 100, 0); }
static void decl_walk32(tec_ctx *ctx, decl *d) { declare_mm(ctx, d, 100, 100, 100, 32); }
static void decl_walk64(tec_ctx *ctx, decl *d) { declare_mm(ctx, d, 100, 100, 100, 64); }

/* README: a symbolic n */
static void decl_readme(tec_ctx *ctx, decl *d) {
  *d = (decl){0};
  const ir_expr *n = te_size_var(ctx, "n");
  d->a = te_placeholder(ctx, "A", TEC_F32, 2, (const ir_expr *[]){n, n});
  d->b = te_placeholder(ctx, "B", TEC_F32, 2, (const ir_expr *[]){n, n});
  d->k = te_reduce_axis(ctx, "k", ir_int(ctx, 0), n);
  d->c = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                            .shape = (const ir_expr *[]){n, n}, .body = mm_body,
                                            .user = d});
  set_args(d, 3, (te_tensor *[]){d->a, d->b, d->c});
}

/* R[i] = sum over k of A[i, k] (13 x 70) */
static const ir_expr *rowsum(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  decl *d = u;
  return te_sum(TE_AT(d->a, i[0], d->k), 1, &d->k, NULL);
}
static void decl_rowsum(tec_ctx *ctx, decl *d) {
  *d = (decl){0};
  d->a = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 13, 70));
  d->k = te_reduce_axis_n(ctx, "k", 70);
  d->c = te_compute(ctx, &(te_compute_decl){.name = "R", .ndim = 1, .shape = TE_SHAPE(ctx, 13),
                                            .body = rowsum, .user = d});
  set_args(d, 2, (te_tensor *[]){d->a, d->c});
}

/* B = A + 1, C = B + 1 (5 x 7): for storage_align, compute_at/inline, pragmas */
static const ir_expr *plus1(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT((te_tensor *)u, i[0], i[1]), ir_float(ctx, 1.0));
}
static void decl_chain(tec_ctx *ctx, decl *d) {
  *d = (decl){0};
  d->a = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 5, 7));
  d->b = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = d->a->shape,
                                            .body = plus1, .user = d->a});
  d->c = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = d->a->shape,
                                            .body = plus1, .user = d->b});
  set_args(d, 2, (te_tensor *[]){d->a, d->c});
}

/* examples/hello.c: C = A + B over a symbolic n */
static const ir_expr *vadd(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  decl *d = u;
  return ir_add(TE_AT(d->a, i[0]), TE_AT(d->b, i[0]));
}
static void decl_hello(tec_ctx *ctx, decl *d) {
  *d = (decl){0};
  const ir_expr *n = te_size_var(ctx, "n");
  d->a = te_placeholder(ctx, "A", TEC_F32, 1, &n);
  d->b = te_placeholder(ctx, "B", TEC_F32, 1, &n);
  d->c = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 1, .shape = &n, .body = vadd,
                                            .user = d});
  set_args(d, 3, (te_tensor *[]){d->a, d->b, d->c});
}

/* examples/aot_arm/arm_kernels.c: the NHWC depthwise 3x3 (In [H+2, W+2, C], Wt [3, 3, C]) */
static const ir_expr *dw_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  decl *d = u;
  const ir_expr *ry = d->k, *rx = d->k2;
  const ir_expr *x = TE_AT(d->a, ir_add(i[0], ry), ir_add(i[1], rx), i[2]);
  return te_sum(ir_mul(x, TE_AT(d->b, ry, rx, i[2])), 2, (const ir_expr *[]){ry, rx}, NULL);
}
static void decl_arm_dw(tec_ctx *ctx, decl *d) {
  *d = (decl){0};
  d->a = te_placeholder(ctx, "In", TEC_F32, 3, TE_SHAPE(ctx, 10, 18, 16));
  d->b = te_placeholder(ctx, "Wt", TEC_F32, 3, TE_SHAPE(ctx, 3, 3, 16));
  d->k = te_reduce_axis_n(ctx, "ry", 3);
  d->k2 = te_reduce_axis_n(ctx, "rx", 3);
  d->c = te_compute(ctx, &(te_compute_decl){.name = "Out", .ndim = 3,
                                            .shape = TE_SHAPE(ctx, 8, 16, 16), .body = dw_body,
                                            .user = d,
                                            .axis_names = (const char *[]){"h", "w", "c"}});
  set_args(d, 3, (te_tensor *[]){d->a, d->b, d->c});
}

/* ---------------- schedules ---------------- */

static int s_hello(sch_schedule *s, decl *d) {
  sch_stage *sc = sch_stage_of(s, d->c);
  sch_iter *outer, *inner;
  return sch_split(sc, sch_axis(sc, 0), 4, &outer, &inner);
}
#define TRY(x)               \
  do {                       \
    if ((x) != 0) return -1; \
  } while (0)

static int s_readme(sch_schedule *s, decl *d) {
  sch_stage *sc = sch_stage_of(s, d->c);
  sch_iter *io, *jo, *ii, *ji;
  return sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 32, 32, &io, &jo, &ii, &ji);
}

/* examples/matmul.c */
static int s_matmul(sch_schedule *s, decl *d) {
  sch_stage *sc = sch_stage_of(s, d->c);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 32, 64, &io, &jo, &ii, &ji));
  TRY(sch_split(sc, sch_reduce_axis(sc, 0), 4, &ko, &ki));
  return sch_reorder(sc, 6, (sch_iter *[]){io, jo, ko, ii, ki, ji});
}

/* examples/gemm_walk.c, steps 2 to 9 */
static int tile_c(sch_schedule *s, decl *d, int perm, int vec) {
  sch_stage *sc = sch_stage_of(s, d->c);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 32, 32, &io, &jo, &ii, &ji));
  TRY(sch_split(sc, sch_reduce_axis(sc, 0), 4, &ko, &ki));
  if (perm)
    TRY(sch_reorder(sc, 6, (sch_iter *[]){io, jo, ko, ii, ki, ji}));
  else
    TRY(sch_reorder(sc, 6, (sch_iter *[]){io, jo, ko, ki, ii, ji}));
  return vec ? sch_vectorize(sc, ji) : 0;
}
static int s_blocking(sch_schedule *s, decl *d) { return tile_c(s, d, 0, 0); }
static int s_vectorize(sch_schedule *s, decl *d) { return tile_c(s, d, 0, 1); }
static int s_permute(sch_schedule *s, decl *d) { return tile_c(s, d, 1, 1); }
static int vectorize_pack(sch_schedule *s, decl *d) {
  sch_stage *sp = sch_stage_of(s, d->bp);
  return sch_vectorize(sp, sch_axis(sp, 2));
}
static int s_packed(sch_schedule *s, decl *d) {
  TRY(tile_c(s, d, 1, 1));
  return vectorize_pack(s, d);
}
static int write_cache(sch_schedule *s, decl *d, int par) {
  te_tensor *cl = sch_cache_write(s, d->c, "local");
  if (!cl) return -1;
  sch_stage *sc = sch_stage_of(s, d->c), *sl = sch_stage_of(s, cl);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 32, 32, &io, &jo, &ii, &ji));
  TRY(sch_vectorize(sc, ji));
  TRY(sch_compute_at(sl, sc, jo));
  sch_iter *li = sch_axis(sl, 0), *lj = sch_axis(sl, 1);
  TRY(sch_split(sl, sch_reduce_axis(sl, 0), 4, &ko, &ki));
  TRY(sch_reorder(sl, 4, (sch_iter *[]){ko, li, ki, lj}));
  TRY(sch_unroll(sl, ki));
  TRY(sch_vectorize(sl, lj));
  if (par) TRY(sch_parallel(sc, io));
  return vectorize_pack(s, d);
}
static int s_cache(sch_schedule *s, decl *d) { return write_cache(s, d, 0); }
static int s_parallel(sch_schedule *s, decl *d) { return write_cache(s, d, 1); }
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
static int s_register(sch_schedule *s, decl *d) {
  te_tensor *cl = sch_cache_write(s, d->c, "local");
  if (!cl) return -1;
  sch_stage *sc = sch_stage_of(s, d->c), *sl = sch_stage_of(s, cl);
  sch_iter *io, *jo, *ii, *ji;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 8, 32, &io, &jo, &ii, &ji));
  TRY(sch_reorder(sc, 4, (sch_iter *[]){jo, io, ii, ji}));
  TRY(sch_vectorize(sc, ji));
  TRY(sch_parallel(sc, jo));
  TRY(sch_compute_at(sl, sc, io));
  TRY(register_tile(sl, 1));
  return vectorize_pack(s, d);
}
static int s_panels(sch_schedule *s, decl *d) {
  te_tensor *cl = sch_cache_write(s, d->c, "local");
  if (!cl) return -1;
  sch_stage *sc = sch_stage_of(s, d->c), *sl = sch_stage_of(s, cl), *sp = sch_stage_of(s, d->bp);
  sch_iter *io, *jo, *ii, *ji, *jo2, *js, *po, *pi;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 6, d->bn, &io, &jo, &ii, &ji));
  TRY(sch_split(sc, jo, 2, &jo2, &js));
  TRY(sch_reorder(sc, 5, (sch_iter *[]){jo2, io, js, ii, ji}));
  TRY(sch_vectorize(sc, ji));
  TRY(sch_parallel(sc, jo2));
  TRY(sch_compute_at(sl, sc, js));
  TRY(register_tile(sl, 8));
  TRY(sch_compute_at(sp, sc, jo2));
  TRY(sch_split(sp, sch_leaf_named(sp, "ji"), 16, &po, &pi));
  return sch_vectorize(sp, pi);
}

/* examples/aot_arm/arm_kernels.c: the GEMM micro-kernel (mr 4, nr 16) and the depthwise */
static int s_arm_gemm(sch_schedule *s, decl *d) {
  te_tensor *CL = sch_cache_write(s, d->c, "local");
  if (!CL) return -1;
  sch_stage *sc = sch_stage_of(s, d->c), *sl = sch_stage_of(s, CL);
  sch_iter *io, *jo, *ii, *ji;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 4, 16, &io, &jo, &ii, &ji));
  TRY(sch_vectorize(sc, ji));
  TRY(sch_compute_at(sl, sc, jo));
  sch_iter *li = sch_axis(sl, 0), *lj = sch_axis(sl, 1), *lk = sch_reduce_axis(sl, 0);
  TRY(sch_reorder(sl, 3, (sch_iter *[]){lk, li, lj}));
  TRY(sch_unroll(sl, li));
  return sch_vectorize(sl, lj);
}
static int s_arm_dw(sch_schedule *s, decl *d) {
  te_tensor *OL = sch_cache_write(s, d->c, "local");
  if (!OL) return -1;
  sch_stage *so = sch_stage_of(s, d->c), *sl = sch_stage_of(s, OL);
  sch_iter *wo, *wi, *co, *ci;
  TRY(sch_split(so, sch_axis(so, 1), 4, &wo, &wi));
  TRY(sch_split(so, sch_axis(so, 2), 4, &co, &ci));
  TRY(sch_reorder(so, 5, (sch_iter *[]){sch_axis(so, 0), wo, co, wi, ci}));
  TRY(sch_vectorize(so, ci));
  TRY(sch_compute_at(sl, so, co));
  sch_iter *lw = sch_axis(sl, 1), *lc = sch_axis(sl, 2);
  sch_iter *ry = sch_reduce_axis(sl, 0), *rx = sch_reduce_axis(sl, 1);
  TRY(sch_reorder(sl, 4, (sch_iter *[]){ry, rx, lw, lc}));
  TRY(sch_unroll(sl, ry));
  TRY(sch_unroll(sl, rx));
  TRY(sch_unroll(sl, lw));
  return sch_vectorize(sl, lc);
}

/* tests/test_attach.c's gemm (how = 6): cache_write, compute_at, a packed cache_read of B
 * attached to the column tile, unroll, parallel, a pragma with a value */
static int s_attach_gemm(sch_schedule *s, decl *d) {
  te_tensor *CL = sch_cache_write(s, d->c, "local");
  if (!CL) return -1;
  sch_stage *sc = sch_stage_of(s, d->c), *sl = sch_stage_of(s, CL);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki, *bo, *bi;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 4, 16, &io, &jo, &ii, &ji));
  TRY(sch_compute_at(sl, sc, jo));
  sch_iter *li = sch_axis(sl, 0), *lj = sch_axis(sl, 1), *lk = sch_reduce_axis(sl, 0);
  TRY(sch_split(sl, lk, 4, &ko, &ki));
  TRY(sch_reorder(sl, 4, (sch_iter *[]){ko, ki, li, lj}));
  TRY(sch_vectorize(sl, lj));
  TRY(sch_vectorize(sc, ji));
  TRY(sch_unroll(sl, li));
  TRY(sch_parallel(sc, io));
  te_tensor *BP = sch_cache_read(s, d->b, "global", 1, &CL);
  if (!BP) return -1;
  sch_stage *sb = sch_stage_of(s, BP);
  TRY(sch_split(sb, sch_axis(sb, 1), 16, &bo, &bi));
  TRY(sch_reorder(sb, 3, (sch_iter *[]){bo, sch_axis(sb, 0), bi}));
  TRY(sch_vectorize(sb, bi));
  TRY(sch_pragma(sl, ko, "auto_unroll_max_step", ir_int(sch_schedule_ctx(s), 16)));
  return sch_compute_at(sb, sc, jo);
}

/* The packing idiom: a cache_read copy of B, split and reordered, cache_write'd into the leaf
 * layout [j.outer][k][j.inner], the copy inlined. */
static int s_pack_idiom(sch_schedule *s, decl *d) {
  te_tensor *C = d->c;
  te_tensor *BG = sch_cache_read(s, d->b, "global", 1, &C);
  if (!BG) return -1;
  sch_stage *sb = sch_stage_of(s, BG);
  sch_iter *bo, *bi;
  TRY(sch_split(sb, sch_axis(sb, 1), 16, &bo, &bi));
  TRY(sch_reorder(sb, 3, (sch_iter *[]){bo, sch_axis(sb, 0), bi}));
  te_tensor *BW = sch_cache_write(s, BG, "global");
  if (!BW) return -1;
  TRY(sch_compute_inline(sch_stage_of(s, BG)));
  sch_stage *sw = sch_stage_of(s, BW);
  TRY(sch_vectorize(sw, sch_leaf_named(sw, "j.inner")));
  sch_stage *sc = sch_stage_of(s, C);
  sch_iter *io, *jo, *ii, *ji;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 8, 16, &io, &jo, &ii, &ji));
  return sch_vectorize(sc, ji);
}

/* rfactor (tests/test_attach.c rfactor_rowsum, how 1 and 3) */
static int rfactor_how(sch_schedule *s, decl *d, int how) {
  sch_stage *sr = sch_stage_of(s, d->c);
  sch_iter *ko, *ki;
  TRY(sch_split(sr, sch_reduce_axis(sr, 0), 8, &ko, &ki));
  te_tensor *RF = sch_rfactor(s, d->c, how == 1 ? ki : ko, how == 3 ? 1 : 0);
  if (!RF) return -1;
  sch_stage *sf = sch_stage_of(s, RF);
  return how == 1 ? sch_vectorize(sf, sch_axis(sf, 0)) : sch_parallel(sr, sch_axis(sr, 0));
}
static int s_rfactor1(sch_schedule *s, decl *d) { return rfactor_how(s, d, 1); }
static int s_rfactor3(sch_schedule *s, decl *d) { return rfactor_how(s, d, 3); }

/* prefetch (tests/test_prefetch.c): B two k-blocks ahead, A one column tile ahead */
static int s_prefetch(sch_schedule *s, decl *d) {
  sch_stage *sc = sch_stage_of(s, d->c);
  sch_iter *io, *jo, *ii, *ji, *ko, *ki;
  TRY(sch_tile(sc, sch_axis(sc, 0), sch_axis(sc, 1), 8, 16, &io, &jo, &ii, &ji));
  TRY(sch_split(sc, sch_reduce_axis(sc, 0), 8, &ko, &ki));
  TRY(sch_reorder(sc, 6, (sch_iter *[]){io, jo, ko, ii, ki, ji}));
  TRY(sch_prefetch(sc, d->b, ko, 2));
  TRY(sch_prefetch(sc, d->a, jo, 1));
  return sch_fuse(sc, io, jo, &io);
}

/* storage_align, compute_at, pragmas of every value kind, the prepare split off */
static int s_chain(sch_schedule *s, decl *d) {
  tec_ctx *ctx = sch_schedule_ctx(s);
  sch_stage *sb = sch_stage_of(s, d->b), *sc = sch_stage_of(s, d->c);
  sch_iter *o, *in;
  TRY(sch_storage_align(sb, sch_axis(sb, 0), 16, 1));
  TRY(sch_split_nparts(sc, sch_axis(sc, 0), 2, &o, &in));
  TRY(sch_compute_at(sb, sc, o));
  TRY(sch_parallel(sc, o));
  TRY(sch_pragma(sc, o, "parallel_dynamic", ir_int_t(ctx, TEC_I32, 2)));
  TRY(sch_pragma(sc, in, "user_note", ir_float(ctx, 0.25)));
  TRY(sch_pragma(sc, in, "user_flag", NULL));
  TRY(sch_unroll(sc, in));
  return sch_set_precompute(s, 0);
}
static int s_inline(sch_schedule *s, decl *d) {
  sch_stage *sc = sch_stage_of(s, d->c);
  sch_iter *f;
  TRY(sch_compute_inline(sch_stage_of(s, d->b)));
  TRY(sch_fuse(sc, sch_axis(sc, 0), sch_axis(sc, 1), &f));
  return sch_compute_root(sch_stage_of(s, d->b)) == 0 ? sch_compute_inline(sch_stage_of(s, d->b)) : -1;
}

typedef struct tcase {
  const char *name;
  void (*declare)(tec_ctx *, decl *);
  int (*schedule)(sch_schedule *, decl *);
} tcase;

static const tcase cases[] = {
    {"readme", decl_readme, s_readme},
    {"hello", decl_hello, s_hello},
    {"arm gemm", decl_mm64, s_arm_gemm},
    {"arm depthwise", decl_arm_dw, s_arm_dw},
    {"matmul", decl_mm100, s_matmul},
    {"walk blocking", decl_mm100, s_blocking},
    {"walk vectorize", decl_mm100, s_vectorize},
    {"walk permute", decl_mm100, s_permute},
    {"walk packed", decl_walk32, s_packed},
    {"walk cache", decl_walk32, s_cache},
    {"walk parallel", decl_walk32, s_parallel},
    {"walk register", decl_walk32, s_register},
    {"walk panels", decl_walk64, s_panels},
    {"attach gemm", decl_mm64, s_attach_gemm},
    {"packing idiom", decl_mm64, s_pack_idiom},
    {"rfactor inner", decl_rowsum, s_rfactor1},
    {"rfactor axis 1", decl_rowsum, s_rfactor3},
    {"prefetch", decl_mm64, s_prefetch},
    {"chain", decl_chain, s_chain},
    {"inline", decl_chain, s_inline},
};

/* ---------------- the round trip ---------------- */

static const char *lowered(sch_schedule *s, int nargs, te_tensor *const *args, const char *what) {
  lower_func *f = tec_lower(s, "f", nargs, args);
  ck_assert_msg(f != NULL, "%s: %s", what, tec_ctx_error(sch_schedule_ctx(s)));
  return tec_lower_str(f);
}

/* Lowers s1, then the same declaration in fresh ctxs with t replayed directly and through its
 * JSON: the three programs must be identical, and so must the replays' own traces. */
static void round_trip(const char *name, sch_schedule *s1, int nargs, te_tensor *const *args,
                       void (*redeclare)(tec_ctx *, void *, int *, te_tensor **, te_tensor **),
                       void *user) {
  tec_ctx *ctx1 = s1->ctx;
  const sch_trace *t = sch_get_trace(s1);
  ck_assert_msg(sch_trace_len(t) > 0, "%s: an empty trace", name);
  const char *json = sch_trace_json(ctx1, t), *c = sch_trace_c(ctx1, t);
  ck_assert_msg(json && c, "%s: %s", name, tec_ctx_error(ctx1));
  const char *want = lowered(s1, nargs, args, name);
  for (int via_json = 0; via_json < 2; via_json++) {
    tec_ctx *ctx2 = tec_ctx_new();
    int n2;
    te_tensor *args2[8], *out2;
    redeclare(ctx2, user, &n2, args2, &out2);
    sch_schedule *s2 = sch_create(ctx2, 1, &out2);
    const sch_trace *t2 = via_json ? sch_trace_parse_json(ctx2, json) : t;
    ck_assert_msg(t2 != NULL, "%s: %s", name, tec_ctx_error(ctx2));
    ck_assert_msg(sch_trace_replay(s2, t2) == 0, "%s: %s", name, tec_ctx_error(ctx2));
    ck_assert_ptr_null(tec_ctx_error(ctx2));
    ck_assert_int_eq(sch_trace_len(sch_get_trace(s2)), sch_trace_len(t));
    ck_assert_str_eq(sch_trace_json(ctx2, sch_get_trace(s2)), json);
    ck_assert_str_eq(sch_trace_c(ctx2, sch_get_trace(s2)), c);
    const char *got = lowered(s2, n2, args2, name);
    ck_assert_msg(strcmp(got, want) == 0, "%s (%s): the replay lowers to\n%.2000s\ninstead of\n%.2000s",
                  name, via_json ? "through JSON" : "direct", got, want);
    tec_ctx_free(ctx2);
  }
  /* sch_clone: the same ctx, the same program */
  sch_schedule *c1 = sch_clone(s1);
  ck_assert_msg(c1 != NULL, "%s: %s", name, tec_ctx_error(ctx1));
  ck_assert_str_eq(lowered(c1, nargs, args, name), want);
}

static void redeclare_case(tec_ctx *ctx, void *user, int *n, te_tensor **args, te_tensor **out) {
  const tcase *tc = user;
  decl *d = tec_ctx_alloc(ctx, sizeof *d);
  ck_assert_ptr_nonnull(d);
  tc->declare(ctx, d);
  *n = d->nargs;
  memcpy(args, d->args, sizeof *args * (size_t)d->nargs);
  *out = out_of(d);
}

START_TEST(replay_examples_and_tests) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const tcase *tc = &cases[i];
    tec_ctx *ctx = tec_ctx_new();
    decl *d = tec_ctx_alloc(ctx, sizeof *d);
    tc->declare(ctx, d);
    te_tensor *out = out_of(d);
    sch_schedule *s = sch_create(ctx, 1, &out);
    ck_assert_msg(tc->schedule(s, d) == 0, "%s: %s", tc->name, tec_ctx_error(ctx));
    round_trip(tc->name, s, d->nargs, d->args, redeclare_case, (void *)tc);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* ---------------- the topi templates, through the registry ---------------- */

typedef struct topi_user {
  const topi_template *t;
  const void *problem;
  int default_config; /* the traced schedule is the template's default */
} topi_user;

/* The template's declaration, again. A template whose tensors depend on its config (dense: the
 * packed panel width is a knob, so its schedule builds the packing and accumulator stages over
 * the declared placeholders, op.out != decl.out) is instantiated at the same default config
 * first, and the replay goes onto a fresh schedule of the graph that built. */
static void redeclare_topi(tec_ctx *ctx, void *user, int *n, te_tensor **args, te_tensor **out) {
  topi_user *u = user;
  topi_decl d;
  ck_assert_msg(u->t->declare(ctx, u->problem, &d) == 0, "%s", tec_ctx_error(ctx));
  *n = d.nargs;
  memcpy(args, d.args, sizeof *args * (size_t)d.nargs);
  *out = d.out;
  if (u->default_config) {
    tune_space sp;
    topi_op op;
    ck_assert_msg(u->t->space(ctx, u->problem, NULL, &sp) == 0 &&
                      u->t->schedule(&d, sp.default_config, NULL, &op) == 0,
                  "%s", tec_ctx_error(ctx));
    /* d.out, or the graph the schedule built over d's placeholders */
    *n = op.nargs;
    memcpy(args, op.args, sizeof *args * (size_t)op.nargs);
    *out = op.out;
  }
}

START_TEST(replay_topi_templates) {
  topi_layout nchw = {.kind = TOPI_NCHW, .block = 0}, b8 = {.kind = TOPI_NCHWC, .block = 8};
  topi_conv2d dw = {.n = 1, .c_in = 16, .h = 9, .w = 9, .c_out = 16, .kh = 3, .kw = 3,
                    .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1, .groups = 16,
                    .in_layout = nchw, .out_layout = nchw, .epi = {.bias = 1, .act = TOPI_ACT_RELU}};
  topi_conv2d dwc = dw, conv = dw;
  dwc.in_layout = dwc.out_layout = b8;
  conv.groups = 1;
  conv.c_out = 24;
  conv.in_layout = conv.out_layout = b8;
  topi_layout_problem lp = {.n = 1, .c = 20, .h = 5, .w = 6, .from = nchw,
                            .to = {.kind = TOPI_NCHWC, .block = 16}};
  topi_dense dense = {.m = 8, .n = 24, .k = 16, .const_b = 1, .epi = {.bias = 1}};
  topi_pool mp = {.n = 1, .c = 20, .h = 9, .w = 9, .kh = 3, .kw = 3, .stride_h = 2,
                  .stride_w = 2, .pad_h = 1, .pad_w = 1, .mode = TOPI_POOL_MAX, .in_layout = b8,
                  .out_layout = b8};
  topi_pool gp = {.n = 1, .c = 20, .h = 5, .w = 5, .mode = TOPI_POOL_AVG, .in_layout = b8,
                  .out_layout = nchw};
  topi_softmax sm = {.m = 2, .n = 37};
  topi_eltwise ew = {.n = 1, .c = 20, .h = 5, .w = 6, .layout = b8, .act = TOPI_ACT_RELU};
  const void *problems[] = {&dw, &dwc, &conv, &lp, &dense, &mp, &gp, &sm, &ew};
  const topi_problem_kind kinds[] = {TOPI_PROBLEM_CONV2D, TOPI_PROBLEM_CONV2D,
                                     TOPI_PROBLEM_CONV2D, TOPI_PROBLEM_LAYOUT, TOPI_PROBLEM_DENSE,
                                     TOPI_PROBLEM_POOL,   TOPI_PROBLEM_POOL,
                                     TOPI_PROBLEM_SOFTMAX, TOPI_PROBLEM_ELTWISE};
  int traced = 0;
  for (int i = 0; i < topi_template_count(); i++) {
    const topi_template *t = topi_template_at(i);
    for (int p = 0; p < (int)(sizeof kinds / sizeof kinds[0]); p++) {
      if (kinds[p] != t->problem_kind) continue;
      tec_ctx *ctx = tec_ctx_new();
      if (!t->applies(ctx, problems[p], NULL)) {
        tec_ctx_free(ctx);
        continue;
      }
      topi_op op;
      ck_assert_msg(topi_instantiate(ctx, t, problems[p], NULL, &op) == 0, "%s: %s", t->name,
                    tec_ctx_error(ctx));
      ck_assert_int_eq(op.sched->nout, 1);
      topi_user u = {t, problems[p], 1};
      round_trip(t->name, op.sched, op.nargs, op.args, redeclare_topi, &u);
      traced++;
      tec_ctx_free(ctx);
    }
  }
  ck_assert_int_ge(traced, 3); /* depthwise_nchwc, dw_spatial_pack, layout_transform at least */
  /* examples/depthwise_spatial_pack.c and examples/aot_prepare: explicit configs, the prepare
   * split on and off */
  const topi_template *sp = topi_template_find("dw_spatial_pack");
  ck_assert_ptr_nonnull(sp);
  static const topi_dw_spatial_pack_config cfgs[] = {
      {.vc = 16, .tile_h = 2, .tile_w = 4, .parallel = 1},
      {.vc = 4, .tile_h = 2, .tile_w = 4, .parallel = 0}};
  for (int c = 0; c < 2; c++)
    for (int pre = 0; pre < 2; pre++) {
      tec_ctx *ctx = tec_ctx_new();
      topi_decl d;
      topi_op op;
      ck_assert_int_eq(topi_declare(ctx, "dw_spatial_pack", &dw, &d), 0);
      ck_assert_msg(topi_schedule(&d, &cfgs[c], NULL, &op) == 0, "%s",
                    tec_ctx_error(ctx));
      ck_assert_int_eq(sch_set_precompute(op.sched, pre), 0);
      topi_user u = {sp, &dw, 0};
      round_trip("dw_spatial_pack config", op.sched, op.nargs, op.args, redeclare_topi, &u);
      tec_ctx_free(ctx);
    }
}
END_TEST

/* ---------------- the printers' text ---------------- */

/* got == want, or a failure showing where they part (Check limits a message's length). */
static void assert_text(const char *got, const char *want) {
  ck_assert_ptr_nonnull(got);
  size_t i = 0;
  while (got[i] && got[i] == want[i]) i++;
  size_t from = i > 80 ? i - 80 : 0;
  ck_assert_msg(got[i] == want[i], "texts differ at %zu:\n got ...%.300s\nwant ...%.300s", i,
                got + from, want + from);
}

START_TEST(trace_text) {
  tec_ctx *ctx = tec_ctx_new();
  decl d;
  decl_mm64(ctx, &d);
  sch_schedule *s = sch_create(ctx, 1, &d.c);
  ck_assert_int_eq(sch_trace_len(sch_get_trace(s)), 0);
  ck_assert_int_eq(s_attach_gemm(s, &d), 0);
  /* a refused call leaves no record */
  int before = sch_trace_len(sch_get_trace(s));
  ck_assert_int_eq(sch_split(sch_stage_of(s, d.c), NULL, 4, NULL, NULL), -1);
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_trace_len(sch_get_trace(s)), before);
  ck_assert_int_eq(before, 15);
  assert_text(
      sch_trace_c(ctx, sch_get_trace(s)),
      "/* a tec schedule trace: 15 records; `ctx` and the schedule `s` in scope */\n"
      "te_tensor *C = sch_tensor_named(s, \"C\");\n"
      "te_tensor *C_local = sch_cache_write(s, C, \"local\");\n"
      "sch_stage *s_C = sch_stage_of(s, C);\n"
      "sch_iter *C_i = sch_leaf_named(s_C, \"i\");\n"
      "sch_iter *C_j = sch_leaf_named(s_C, \"j\");\n"
      "sch_iter *C_i_outer, *C_j_outer, *C_i_inner, *C_j_inner;\n"
      "sch_tile(s_C, C_i, C_j, 4, 16, &C_i_outer, &C_j_outer, &C_i_inner, &C_j_inner);\n"
      "sch_stage *s_C_local = sch_stage_of(s, C_local);\n"
      "sch_compute_at(s_C_local, s_C, C_j_outer);\n"
      "sch_iter *C_local_k = sch_leaf_named(s_C_local, \"k\");\n"
      "sch_iter *C_local_k_outer, *C_local_k_inner;\n"
      "sch_split(s_C_local, C_local_k, 4, &C_local_k_outer, &C_local_k_inner);\n"
      "sch_iter *C_local_i = sch_leaf_named(s_C_local, \"i\");\n"
      "sch_iter *C_local_j = sch_leaf_named(s_C_local, \"j\");\n"
      "sch_reorder(s_C_local, 4, (sch_iter *[]){C_local_k_outer, C_local_k_inner, C_local_i, "
      "C_local_j});\n"
      "sch_vectorize(s_C_local, C_local_j);\n"
      "sch_vectorize(s_C, C_j_inner);\n"
      "sch_unroll(s_C_local, C_local_i);\n"
      "sch_parallel(s_C, C_i_outer);\n"
      "te_tensor *B = sch_tensor_named(s, \"B\");\n"
      "te_tensor *B_global = sch_cache_read(s, B, \"global\", 1, (te_tensor *[]){C_local});\n"
      "sch_stage *s_B_global = sch_stage_of(s, B_global);\n"
      "sch_iter *B_global_j = sch_leaf_named(s_B_global, \"j\");\n"
      "sch_iter *B_global_j_outer, *B_global_j_inner;\n"
      "sch_split(s_B_global, B_global_j, 16, &B_global_j_outer, &B_global_j_inner);\n"
      "sch_iter *B_global_i = sch_leaf_named(s_B_global, \"i\");\n"
      "sch_reorder(s_B_global, 3, (sch_iter *[]){B_global_j_outer, B_global_i, "
      "B_global_j_inner});\n"
      "sch_vectorize(s_B_global, B_global_j_inner);\n"
      "sch_pragma(s_C_local, C_local_k_outer, \"auto_unroll_max_step\", ir_int(ctx, 16));\n"
      "sch_compute_at(s_B_global, s_C, C_j_outer);\n");
  tec_ctx_free(ctx);

  ctx = tec_ctx_new();
  decl_chain(ctx, &d);
  s = sch_create(ctx, 1, &d.c);
  ck_assert_int_eq(s_chain(s, &d), 0);
  assert_text(
      sch_trace_json(ctx, sch_get_trace(s)),
      "{\"tec_trace\": 2, \"records\": [\n"
      "  {\"prim\": \"storage_align\", \"stage\": \"B\", \"axis\": 0, \"factor\": 16, \"offset\": 1},\n"
      "  {\"prim\": \"split_nparts\", \"stage\": \"C\", \"iter\": \"i\", \"nparts\": 2, "
      "\"outer\": \"i.outer\", \"inner\": \"i.inner\"},\n"
      "  {\"prim\": \"compute_at\", \"stage\": \"B\", \"consumer\": \"C\", \"at\": \"i.outer\"},\n"
      "  {\"prim\": \"parallel\", \"stage\": \"C\", \"iter\": \"i.outer\"},\n"
      "  {\"prim\": \"pragma\", \"stage\": \"C\", \"iter\": \"i.outer\", \"key\": "
      "\"parallel_dynamic\", \"value\": {\"type\": \"int32\", \"int\": 2}},\n"
      "  {\"prim\": \"pragma\", \"stage\": \"C\", \"iter\": \"i.inner\", \"key\": \"user_note\", "
      "\"value\": {\"type\": \"float32\", \"float\": 0.25}},\n"
      "  {\"prim\": \"pragma\", \"stage\": \"C\", \"iter\": \"i.inner\", \"key\": \"user_flag\", "
      "\"value\": null},\n"
      "  {\"prim\": \"unroll\", \"stage\": \"C\", \"iter\": \"i.inner\"},\n"
      "  {\"prim\": \"set_precompute\", \"enable\": 0}\n"
      "]}\n");
  const char *c = sch_trace_c(ctx, sch_get_trace(s));
  tu_assert_contains(c, "sch_storage_align(s_B, sch_axis(s_B, 0), 16, 1);\n");
  tu_assert_contains(c, "sch_pragma(s_C, C_i_outer, \"parallel_dynamic\", ir_int_t(ctx, "
                        "TEC_DTYPE(TEC_INT, 32, 1), 2));\n");
  tu_assert_contains(c, "sch_pragma(s_C, C_i_inner, \"user_note\", ir_float_t(ctx, "
                        "TEC_DTYPE(TEC_FLOAT, 32, 1), 0.25));\n");
  tu_assert_contains(c, "sch_pragma(s_C, C_i_inner, \"user_flag\", NULL);\n");
  tu_assert_contains(c, "sch_set_precompute(s, 0);\n");
  tec_ctx_free(ctx);
}
END_TEST

/* A replayed schedule computes the right numbers (not only the same text). */
START_TEST(replayed_matmul_runs) {
  tec_ctx *ctx = tec_ctx_new();
  decl d;
  decl_mm64(ctx, &d);
  sch_schedule *s = sch_create(ctx, 1, &d.c);
  ck_assert_int_eq(s_attach_gemm(s, &d), 0);
  const char *json = sch_trace_json(ctx, sch_get_trace(s));
  tec_ctx *ctx2 = tec_ctx_new();
  decl d2;
  decl_mm64(ctx2, &d2);
  sch_schedule *s2 = sch_create(ctx2, 1, &d2.c);
  ck_assert_int_eq(sch_trace_replay(s2, sch_trace_parse_json(ctx2, json)), 0);
  tec_packed_fn fn = tu_build(ctx2, s2, "gemm", 3, d2.args);
  int64_t sa[2] = {64, 80}, sb[2] = {80, 48}, sc[2] = {64, 48};
  DLTensor a = tu_rand_f32(2, sa, 1), b = tu_rand_f32(2, sb, 2), c = tu_zeros(TEC_F32, 2, sc);
  ck_assert_msg(fn((DLTensor *[]){&a, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
  float *ref = malloc(sizeof(float) * 64 * 48);
  tu_ref_matmul(tu_f32(&a), tu_f32(&b), ref, 64, 48, 80);
  ck_assert_double_lt(tu_max_err(tu_f32(&c), ref, 64 * 48), 1e-4);
  free(ref);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  tec_ctx_free(ctx2);
  tec_ctx_free(ctx);
}
END_TEST

/* rfactor's remaining reduce axes in TVM's order (trace version 2) and in the loop order a
 * version 1 trace was written with. R[i] = sum over k1 (16), k2 (5) of A[i, k1, k2]; split k1
 * by 4, rfactor k1.inner: TVM leaves (k2, k1.outer), version 1 (k1.outer, k2). Both compute
 * the sum (plain-C reference), and each trace replays in its own order. */
typedef struct rf2 { te_tensor *a; const ir_expr *k1, *k2; } rf2;
static const ir_expr *rf2_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  rf2 *d = u;
  return TE_SUM(TE_AT(d->a, i[0], d->k1, d->k2), d->k1, d->k2);
}
static te_tensor *rf2_decl(tec_ctx *ctx, rf2 *d) {
  d->a = te_placeholder(ctx, "A", TEC_F32, 3, TE_SHAPE(ctx, 6, 16, 5));
  d->k1 = te_reduce_axis_n(ctx, "k1", 16);
  d->k2 = te_reduce_axis_n(ctx, "k2", 5);
  return te_compute(ctx, &(te_compute_decl){.name = "R", .ndim = 1, .shape = TE_SHAPE(ctx, 6),
                                            .body = rf2_body, .user = d});
}
/* schedules R, returns the rf stage's reduce axis names "a,b" (static buffer) or NULL */
static const char *rf2_schedule(sch_schedule *s, te_tensor *R) {
  static char names[64];
  sch_stage *sr = sch_stage_of(s, R);
  sch_iter *ko, *ki;
  if (sch_split(sr, sch_reduce_axis(sr, 0), 4, &ko, &ki)) return NULL;
  te_tensor *RF = sch_rfactor(s, R, ki, 0);
  if (!RF) return NULL;
  sch_stage *sf = sch_stage_of(s, RF);
  snprintf(names, sizeof names, "%s,%s", sch_iter_name(sch_reduce_axis(sf, 0)),
           sch_iter_name(sch_reduce_axis(sf, 1)));
  return names;
}
static void rf2_check_runs(tec_ctx *ctx, sch_schedule *s, rf2 *d, te_tensor *R) {
  tec_packed_fn fn = tu_build(ctx, s, "rsum", 2, (te_tensor *[]){d->a, R});
  int64_t sa[3] = {6, 16, 5}, sr[1] = {6};
  DLTensor a = tu_rand_f32(3, sa, 7), r = tu_zeros(TEC_F32, 1, sr);
  ck_assert_msg(fn((DLTensor *[]){&a, &r}, 2) == 0, "%s", tec_rt_last_error());
  float ref[6];
  for (int i = 0; i < 6; i++) {
    double acc = 0;
    for (int k = 0; k < 80; k++) acc += tu_f32(&a)[i * 80 + k];
    ref[i] = (float)acc;
  }
  ck_assert_double_lt(tu_max_err(tu_f32(&r), ref, 6), 1e-5);
  tec_dl_free(&a), tec_dl_free(&r);
}
START_TEST(rfactor_tvm_order) {
  tec_ctx *ctx = tec_ctx_new();
  rf2 d;
  te_tensor *R = rf2_decl(ctx, &d);
  sch_schedule *s = sch_create(ctx, 1, &R);
  const char *names = rf2_schedule(s, R);
  ck_assert_msg(names != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_str_eq(names, "k2,k1.outer"); /* TVM's order */
  rf2_check_runs(ctx, s, &d, R);
  const char *json = sch_trace_json(ctx, sch_get_trace(s));
  tu_assert_contains(json, "{\"tec_trace\": 2,");
  /* the version can no longer change: the trace holds an rfactor in version 2's order */
  ck_assert_int_eq(sch_set_trace_version(s, 1), -1);
  assert_err(ctx, "sch_set_trace_version: the schedule has already factored a reduction "
                  "(record 1) in version 2's order; set the version before the first rfactor");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_set_trace_version(s, 3), -1);
  assert_err(ctx, "sch_set_trace_version: version 3; the versions are 1 (rfactor keeps the loop "
                  "order) and 2 (TVM's order)");
  tec_ctx_clear_error(ctx);

  /* version 1: the loop order, and its trace replays as written */
  sch_schedule *s1 = sch_create(ctx, 1, &R);
  ck_assert_int_eq(sch_set_trace_version(s1, 1), 0);
  names = rf2_schedule(s1, R);
  ck_assert_msg(names != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_str_eq(names, "k1.outer,k2");
  rf2_check_runs(ctx, s1, &d, R);
  const char *json1 = sch_trace_json(ctx, sch_get_trace(s1));
  tu_assert_contains(json1, "{\"tec_trace\": 1,");
  tu_assert_contains(sch_trace_c(ctx, sch_get_trace(s1)), "sch_set_trace_version(s, 1);\n");
  sch_schedule *r1 = sch_create(ctx, 1, &R);
  ck_assert_msg(sch_trace_replay(r1, sch_trace_parse_json(ctx, json1)) == 0, "%s",
                tec_ctx_error(ctx));
  sch_stage *rf = sch_stage_of(r1, sch_tensor_named(r1, "R.rf"));
  ck_assert_str_eq(sch_iter_name(sch_reduce_axis(rf, 0)), "k1.outer");
  ck_assert_str_eq(sch_trace_json(ctx, sch_get_trace(r1)), json1);
  /* and the version 2 trace replays in TVM's order */
  sch_schedule *r2 = sch_create(ctx, 1, &R);
  ck_assert_msg(sch_trace_replay(r2, sch_trace_parse_json(ctx, json)) == 0, "%s",
                tec_ctx_error(ctx));
  rf = sch_stage_of(r2, sch_tensor_named(r2, "R.rf"));
  ck_assert_str_eq(sch_iter_name(sch_reduce_axis(rf, 0)), "k2");
  rf2_check_runs(ctx, r2, &d, R);
  tec_ctx_free(ctx);
}
END_TEST

/* TEC_CHECK_TRACE=1: tec_lower replays the trace and compares. A schedule changed behind the
 * primitives' back (a loop kind written into the iter, no record) lowers differently from its
 * replay and is refused; the same change made by sch_unroll lowers. */
START_TEST(check_trace_env) {
  const char *old = getenv("TEC_CHECK_TRACE");
  char *saved = old ? strdup(old) : NULL;
  setenv("TEC_CHECK_TRACE", "1", 1);
  tec_ctx *ctx = tec_ctx_new();
  decl d;
  decl_mm64(ctx, &d);
  sch_schedule *s = sch_create(ctx, 1, &d.c);
  ck_assert_int_eq(s_attach_gemm(s, &d), 0);
  ck_assert_msg(tec_lower(s, "gemm", 3, d.args) != NULL, "%s", tec_ctx_error(ctx));
  sch_stage *st = sch_stage_of(s, d.c);
  sch_iter *k = sch_leaf_named(st, "i.inner");
  ck_assert_ptr_nonnull(k);
  k->for_kind = IR_FOR_UNROLLED; /* no record */
  ck_assert_ptr_null(tec_lower(s, "gemm", 3, d.args));
  ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_INTERNAL);
  tu_assert_contains(tec_ctx_error(ctx), "TEC_CHECK_TRACE: 'gemm' lowers differently after its "
                                         "trace is replayed; line ");
  tu_assert_contains(tec_ctx_error(ctx), "\n  scheduled: ");
  tec_ctx_clear_error(ctx);
  k->for_kind = IR_FOR_SERIAL;
  ck_assert_int_eq(sch_unroll(st, k), 0); /* the same change, recorded */
  ck_assert_msg(tec_lower(s, "gemm", 3, d.args) != NULL, "%s", tec_ctx_error(ctx));
  tec_ctx_free(ctx);
  if (saved) setenv("TEC_CHECK_TRACE", saved, 1), free(saved);
  else unsetenv("TEC_CHECK_TRACE");
}
END_TEST

/* ---------------- bad JSON ---------------- */

static void bad_json(const char *text, const char *want) {
  tec_ctx *ctx = tec_ctx_new();
  ck_assert_ptr_null(sch_trace_parse_json(ctx, text));
  assert_err(ctx, want);
  tec_ctx_free(ctx);
}

START_TEST(parse_errors) {
  bad_json("{\"tec_trace\": 1, \"records\": [\n"
           "  {\"prim\": \"split\", \"stage\": \"C\" \"iter\": \"i\"}\n]}",
           "sch_trace_parse_json: line 2: expected ',' or '}' after a field, found '\"iter\": \"i\"}'");
  bad_json("{\"tec_trace\": 1, \"records\": [\n"
           "  {\"prim\": \"splt\", \"stage\": \"C\"}\n]}",
           "sch_trace_parse_json: line 2: record 0: field 'prim': expected one of split, "
           "split_nparts, split_tail, split_expr, fuse, reorder, tile, compute_at, "
           "compute_inline, compute_root, cache_read, cache_write, rfactor, parallel, "
           "vectorize, unroll, pragma, "
           "storage_align, prefetch, set_precompute, store_at, store_root, compute_with, found the string \"splt\"");
  bad_json("{\"tec_trace\": 1, \"records\": [\n"
           "  {\"prim\": \"compute_root\", \"stage\": \"B\"},\n"
           "  {\"prim\": \"split\", \"stage\": \"C\", \"iter\": \"i\",\n"
           "   \"factor\": \"8\", \"outer\": \"i.outer\", \"inner\": \"i.inner\"}\n]}",
           "sch_trace_parse_json: line 4: record 1 (split): field 'factor': expected an "
           "integer, found the string \"8\"");
  bad_json("{\"tec_trace\": 1, \"records\": [\n"
           "  {\"prim\": \"fuse\", \"stage\": \"C\", \"outer\": \"i\", \"fused\": \"i.j.fused\"}\n]}",
           "sch_trace_parse_json: line 2: record 0 (fuse): field 'inner': expected this field, "
           "found none");
  bad_json("{\"tec_trace\": 1, \"records\": [\n"
           "  {\"prim\": \"parallel\", \"stage\": \"C\", \"iter\": \"i\", \"factor\": 2}\n]}",
           "sch_trace_parse_json: line 2: record 0 (parallel): field 'factor': expected only "
           "the fields of parallel (stage, iter), found a field it does not take");
  bad_json("{\"tec_trace\": 1, \"records\": [\n"
           "  {\"prim\": \"pragma\", \"stage\": \"C\", \"iter\": \"i\", \"key\": \"k\",\n"
           "   \"value\": {\"type\": \"int7\", \"int\": 2}}\n]}",
           "sch_trace_parse_json: line 3: record 0 (pragma): field 'value': expected an "
           "integer type (int8 .. int64, uint8 .. uint64), found \"int7\"");
  bad_json("{\"tec_trace\": 3, \"records\": []}",
           "sch_trace_parse_json: line 1: field 'tec_trace': expected a version from 1 to 2, "
           "found 3");
  bad_json("{\"tec_trace\": 0, \"records\": []}",
           "sch_trace_parse_json: line 1: field 'tec_trace': expected a version from 1 to 2, "
           "found 0");
  bad_json("[1, 2]", "sch_trace_parse_json: line 1: expected an object with the fields "
                     "\"tec_trace\" (a version) and \"records\" (an array), found an array");
  bad_json("{\"tec_trace\": 1, \"records\": [\n  {\"prim\": \"split\", \"stage\": \"C",
           "sch_trace_parse_json: line 2: expected the closing '\"' of a string, found the "
           "end of the text");
  bad_json("{\"tec_trace\": 1, \"records\": []} x",
           "sch_trace_parse_json: line 1: expected the end of the text after the trace, found "
           "'x'");
  bad_json("{\"tec_trace\": 1, \"records\": [{\"prim\": \"split\", \"stage\": \"C\", \"iter\": "
           "\"i\", \"factor\": 99999999999999999999, \"outer\": \"a\", \"inner\": \"b\"}]}",
           "sch_trace_parse_json: line 1: expected an integer in the int64 range, found "
           "'999999999999'");
  tec_ctx *ctx = tec_ctx_new();
  ck_assert_ptr_null(sch_trace_parse_json(ctx, NULL));
  assert_err(ctx, "sch_trace_parse_json: the text is NULL");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------------- traces that do not fit ---------------- */

static void bad_replay(void (*declare)(tec_ctx *, decl *), const char *json, const char *want) {
  tec_ctx *ctx = tec_ctx_new();
  decl d;
  declare(ctx, &d);
  sch_schedule *s = sch_create(ctx, 1, &d.args[d.nargs - 1]);
  sch_trace *t = sch_trace_parse_json(ctx, json);
  ck_assert_msg(t != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_int_eq(sch_trace_replay(s, t), -1);
  assert_err(ctx, want);
  tec_ctx_free(ctx);
}

static const ir_expr *plus1_1d(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_add(TE_AT((te_tensor *)u, i[0]), ir_float(ctx, 1.0));
}
static const ir_expr *cplus(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  te_tensor **t = u;
  return ir_add(TE_AT(t[0], i[0], i[1]), TE_AT(t[1], ir_int(ctx, 0)));
}
/* C.local exists already in this declaration: a cache_write gets another name */
static void decl_taken2(tec_ctx *ctx, decl *d) {
  decl_mm64(ctx, d);
  te_tensor *x = te_placeholder(ctx, "C.local", TEC_F32, 1, TE_SHAPE(ctx, 4));
  te_tensor *y = te_compute(ctx, &(te_compute_decl){.name = "Y", .ndim = 1, .shape = x->shape,
                                                    .body = plus1_1d, .user = x});
  te_tensor *pair[2] = {d->c, y};
  d->c = te_compute(ctx, &(te_compute_decl){.name = "Z", .ndim = 2, .shape = d->c->shape,
                                            .body = cplus, .user = pair});
  set_args(d, 4, (te_tensor *[]){d->a, d->b, x, d->c});
}

START_TEST(replay_errors) {
  /* a tensor the declaration does not have */
  bad_replay(decl_chain,
             "{\"tec_trace\": 1, \"records\": [{\"prim\": \"compute_inline\", \"stage\": \"Q\"}]}",
             "sch_trace_replay: record 0 {\"prim\": \"compute_inline\", \"stage\": \"Q\"} could "
             "not be applied: the schedule has no tensor 'Q' (it has 'A', 'B', 'C')");
  /* a loop it does not have */
  bad_replay(decl_chain,
             "{\"tec_trace\": 1, \"records\": [\n"
             "{\"prim\": \"compute_root\", \"stage\": \"B\"},\n"
             "{\"prim\": \"vectorize\", \"stage\": \"C\", \"iter\": \"i.inner\"}]}",
             "sch_trace_replay: record 1 {\"prim\": \"vectorize\", \"stage\": \"C\", \"iter\": "
             "\"i.inner\"} could not be applied: stage 'C' has no loop 'i.inner' (loops: i, j)");
  /* the primitive refuses: its own message, after the record */
  bad_replay(decl_chain,
             "{\"tec_trace\": 1, \"records\": [{\"prim\": \"split\", \"stage\": \"C\", \"iter\": "
             "\"i\", \"factor\": 0, \"outer\": \"i.outer\", \"inner\": \"i.inner\"}]}",
             "sch_trace_replay: record 0 {\"prim\": \"split\", \"stage\": \"C\", \"iter\": \"i\", "
             "\"factor\": 0, \"outer\": \"i.outer\", \"inner\": \"i.inner\"} could not be "
             "applied: split: factor 0 for axis 'i' of stage 'C'; it must be >= 1");
  /* a placeholder where the trace has a computed stage */
  bad_replay(decl_chain,
             "{\"tec_trace\": 1, \"records\": [{\"prim\": \"compute_inline\", \"stage\": \"A\"}]}",
             "sch_trace_replay: record 0 {\"prim\": \"compute_inline\", \"stage\": \"A\"} could "
             "not be applied: 'A' is a placeholder here, not a computed stage");
  /* a storage_align axis past the stage's dimensions */
  bad_replay(decl_chain,
             "{\"tec_trace\": 1, \"records\": [{\"prim\": \"storage_align\", \"stage\": \"B\", "
             "\"axis\": 5, \"factor\": 8, \"offset\": 0}]}",
             "sch_trace_replay: record 0 {\"prim\": \"storage_align\", \"stage\": \"B\", \"axis\": "
             "5, \"factor\": 8, \"offset\": 0} could not be applied: sch_axis: stage 'B' has 2 "
             "axes (0 to 1), asked for 5");
  /* the cache gets another name here than in the traced schedule */
  bad_replay(decl_taken2,
             "{\"tec_trace\": 1, \"records\": [{\"prim\": \"cache_write\", \"tensor\": \"C\", "
             "\"scope\": \"local\", \"result\": \"C.local\"}]}",
             "sch_trace_replay: record 0 {\"prim\": \"cache_write\", \"tensor\": \"C\", \"scope\": "
             "\"local\", \"result\": \"C.local\"} could not be applied: it made tensor "
             "'C.local1' where the trace has 'C.local' (the declaration differs from the traced "
             "one)");

  /* a pragma value that is not a constant cannot be printed or replayed */
  tec_ctx *ctx = tec_ctx_new();
  decl d;
  decl_chain(ctx, &d);
  sch_schedule *s = sch_create(ctx, 1, &d.c);
  sch_stage *sc = sch_stage_of(s, d.c);
  OK(ctx, sch_pragma(sc, sch_axis(sc, 0), "user_note", sch_iter_var(sch_axis(sc, 1))));
  ck_assert_ptr_null(sch_trace_json(ctx, sch_get_trace(s)));
  assert_err(ctx, "sch_trace_json: record 0 (pragma): the value j is not a constant; a trace "
                  "holds integer and float constants only");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_trace_c(ctx, sch_get_trace(s)));
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_clone(s));
  assert_err(ctx, "sch_trace_replay: record 0 (pragma): the value j is not a constant; a trace "
                  "holds integer and float constants only");
  tec_ctx_clear_error(ctx);
  /* a schedule's own trace onto itself */
  ck_assert_int_eq(sch_trace_replay(s, sch_get_trace(s)), -1);
  assert_err(ctx, "sch_trace_replay: the trace is the schedule's own; replay it onto a fresh "
                  "schedule (sch_create) of the declaration");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_trace_replay(s, NULL), -1);
  assert_err(ctx, "sch_trace_replay: the trace is NULL");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_tensor_named(s, "nope"));
  assert_err(ctx, "sch_tensor_named: the schedule has no tensor 'nope' (it has 'A', 'B', 'C')");
  tec_ctx_free(ctx);

  /* an earlier ignored error does not hide the replay's own, nor fail a good replay */
  ctx = tec_ctx_new();
  decl_chain(ctx, &d);
  s = sch_create(ctx, 1, &d.c);
  tec_ctx_set_error(ctx, "an older error");
  sch_trace *t = sch_trace_parse_json(ctx, "{\"tec_trace\": 1, \"records\": [{\"prim\": "
                                           "\"compute_inline\", \"stage\": \"B\"}]}");
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(sch_trace_replay(s, t), 0);
  assert_err(ctx, "an older error");
  t = sch_trace_parse_json(ctx, "{\"tec_trace\": 1, \"records\": [{\"prim\": \"compute_inline\", "
                                "\"stage\": \"C\"}]}");
  ck_assert_int_eq(sch_trace_replay(s, t), -1);
  assert_err(ctx, "sch_trace_replay: record 0 {\"prim\": \"compute_inline\", \"stage\": \"C\"} "
                  "could not be applied: compute_inline: 'C' is an output of the schedule; "
                  "outputs are computed at root (schedule a cache_write stage instead)");
  tec_ctx_free(ctx);
}
END_TEST

/* ---------------- out of memory ---------------- */

/* The arena runs out part way: primitives, printers, the parser and the replay fail with an
 * error (never a crash or a leak), and a trace that lost a record refuses to print. */
START_TEST(out_of_memory) {
  tec_ctx *ctx0 = tec_ctx_new();
  decl d0;
  decl_mm64(ctx0, &d0);
  sch_schedule *s0 = sch_create(ctx0, 1, &d0.c);
  ck_assert_int_eq(s_attach_gemm(s0, &d0), 0);
  const char *json = sch_trace_json(ctx0, sch_get_trace(s0));
  const char *want = lowered(s0, 3, d0.args, "reference");
  int complete = 0, replayed = 0;
  for (long budget = 0; budget < 1200; budget += 7) {
    tec_ctx *ctx = tec_ctx_new();
    decl d;
    decl_mm64(ctx, &d);
    sch_schedule *s = sch_create(ctx, 1, &d.c);
    tec_ctx_set_alloc_budget(ctx, budget);
    int rc = s_attach_gemm(s, &d);
    const char *js = sch_trace_json(ctx, sch_get_trace(s));
    const char *c = js ? sch_trace_c(ctx, sch_get_trace(s)) : NULL;
    if (rc == 0 && js && c) {
      ck_assert_str_eq(js, json);
      complete++;
    } else {
      ck_assert_ptr_nonnull(tec_ctx_error(ctx));
    }
    if (sch_get_trace(s)->broken) ck_assert_ptr_null(js);
    tec_ctx_free(ctx);

    ctx = tec_ctx_new();
    decl_mm64(ctx, &d);
    s = sch_create(ctx, 1, &d.c);
    tec_ctx_set_alloc_budget(ctx, budget);
    sch_trace *t = sch_trace_parse_json(ctx, json);
    rc = t ? sch_trace_replay(s, t) : -1;
    tec_ctx_set_alloc_budget(ctx, -1);
    if (rc == 0) {
      ck_assert_str_eq(lowered(s, 3, d.args, "replay"), want);
      replayed++;
    } else {
      ck_assert_ptr_nonnull(tec_ctx_error(ctx));
      ck_assert_int_eq(tec_ctx_error_kind(ctx), TEC_ERR_OOM);
    }
    tec_ctx_free(ctx);
  }
  ck_assert_int_gt(complete, 0); /* the sweep reaches budgets that suffice */
  ck_assert_int_gt(replayed, 0);
  tec_ctx_free(ctx0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("trace");
  TCase *tc = tcase_create("trace");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, trace_text);
  tcase_add_test(tc, parse_errors);
  tcase_add_test(tc, replay_errors);
  tcase_add_test(tc, replayed_matmul_runs);
  tcase_add_test(tc, rfactor_tvm_order);
  tcase_add_test(tc, check_trace_env);
  tcase_add_test(tc, out_of_memory);
  tcase_add_test(tc, replay_examples_and_tests);
  tcase_add_test(tc, replay_topi_templates);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

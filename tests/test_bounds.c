/* test_bounds.c — reads checked against declared bounds (issue #38 item 1): a read provably
 * outside its tensor's shape refused by tec_lower (lower/read_bounds.c), one the sizes decide
 * refused by the checked entry with -1, anything else caught by the run-time bound checkers
 * (tec_lower_options.check_bounds, lower/bound_checkers.c). Each message names the tensor and
 * the dimension (or the flat index and the extent). Inputs live in guard-page buffers — the
 * byte past the end (or before the start) is a PROT_NONE page — so a read that slipped
 * through would crash the suite (generated code is not ASan-instrumented). Legal programs
 * that read near the edges (shifted, padded with a select, margins, templates with margin
 * layouts) still run, with the checkers on too, and match plain C loops. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "convref.h"
#include "testutil.h"
#include "tec/topi.h"

/* ---- guard-page buffers ---- */

typedef struct guarded {
  void *map;
  size_t len;
  int64_t shape[4];
  DLTensor t;
} guarded;

/* A float32 (or int32) tensor whose bytes end right at a PROT_NONE page (at_start: begin
 * right after one), filled with k * 0.5 - 3 (int32: k % 7). Its byte count must be a multiple
 * of 64 (the entry requires 64-byte aligned data). */
static DLTensor *guard_alloc(guarded *g, tec_dtype type, int ndim, const int64_t *shape,
                             int at_start) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= (g->shape[d] = shape[d]);
  size_t bytes = (size_t)n * 4, pg = (size_t)sysconf(_SC_PAGESIZE);
  ck_assert_msg(bytes % 64 == 0 && bytes > 0, "guard_alloc: %zu bytes", bytes);
  size_t pages = (bytes + pg - 1) / pg;
  g->len = (pages + 2) * pg;
  g->map = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert(g->map != MAP_FAILED);
  char *base = g->map;
  ck_assert_int_eq(mprotect(base, pg, PROT_NONE), 0);
  ck_assert_int_eq(mprotect(base + (pages + 1) * pg, pg, PROT_NONE), 0);
  char *data = at_start ? base + pg : base + (pages + 1) * pg - bytes;
  for (int64_t k = 0; k < n; k++) {
    if (type.code == TEC_INT) ((int32_t *)data)[k] = (int32_t)(k % 7);
    else ((float *)data)[k] = (float)k * 0.5f - 3.0f;
  }
  g->t = tec_dl_view(data, type, ndim, g->shape);
  return &g->t;
}

static void guard_free(guarded *g) { munmap(g->map, g->len); }

static float *fl(guarded *g) { return g->t.data; }

/* ---- bodies: out = A at an index made by a callback of the axes ---- */

typedef const ir_expr *(*index_fn)(tec_ctx *ctx, const ir_expr *const *i, int d, void *u);
typedef struct reader {
  te_tensor *a;
  index_fn idx;
  const ir_expr *k;  /* a reduce axis, or NULL */
  int pad;           /* guard the read with select(0 <= index < 16, A[index], 0) (dim 0) */
  void *u;
} reader;

static const ir_expr *read_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  reader *r = user;
  const ir_expr *idx[4];
  for (int d = 0; d < r->a->ndim; d++) idx[d] = r->idx(ctx, i, d, r);
  const ir_expr *v = te_read(r->a, r->a->ndim, idx);
  if (r->pad)
    v = ir_select(ir_likely(ir_and(ir_ge(idx[0], ir_int(ctx, 0)), ir_lt(idx[0], r->a->shape[0]))),
                  v, ir_float(ctx, 0));
  return r->k ? TE_SUM(v, r->k) : v;
}

static te_tensor *out_of(tec_ctx *ctx, const char *name, int ndim, const ir_expr *const *shape,
                         reader *r) {
  return te_compute(ctx, &(te_compute_decl){.name = name, .ndim = ndim, .shape = shape,
                                            .body = read_body, .user = r});
}

static const ir_expr *c(tec_ctx *ctx, int64_t v) { return ir_int(ctx, v); }

/* the index callbacks (1-d: d is 0; 2-d: per dimension) */
static const ir_expr *i_plus5(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)d, (void)u;
  return ir_add(i[0], c(ctx, 5));
}
static const ir_expr *i_minus1(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)d, (void)u;
  return ir_sub(i[0], c(ctx, 1));
}
static const ir_expr *i_plus1(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)d, (void)u;
  return ir_add(i[0], c(ctx, 1));
}
static const ir_expr *i_plus16(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)d, (void)u;
  return ir_add(i[0], c(ctx, 16));
}
static const ir_expr *two_i(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)d, (void)u;
  return ir_mul(i[0], c(ctx, 2));
}
static const ir_expr *three_i1(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)d, (void)u;
  return ir_add(ir_mul(i[0], c(ctx, 3)), c(ctx, 1));
}
static const ir_expr *ident(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)ctx, (void)u;
  return i[d];
}
static const ir_expr *col_plus1(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)u;
  return d == 1 ? ir_add(i[1], c(ctx, 1)) : i[0];
}
static const ir_expr *row_k1(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  reader *r = u; /* A[i, k + 1] */
  return d == 1 ? ir_add(r->k, c(ctx, 1)) : i[0];
}
static const ir_expr *four_i_k(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  reader *r = u; /* A[i*4 + k] */
  (void)d;
  return ir_add(ir_mul(i[0], c(ctx, 4)), r->k);
}
static const ir_expr *square_mod(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)d, (void)u; /* A[(i*i) % 19]: not affine, only the run-time checks see it */
  return ir_mod(ir_mul(i[0], i[0]), c(ctx, 19));
}
static const ir_expr *half_plus9(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)d, (void)u; /* A[i / 2 + 9] */
  return ir_add(ir_div(i[0], c(ctx, 2)), c(ctx, 9));
}
static const ir_expr *plus_n_minus17(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)d; /* A[i + n - 17] */
  return ir_add(i[0], ir_sub(((reader *)u)->u, c(ctx, 17)));
}
static const ir_expr *k_only(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  (void)ctx; /* A[i, k] */
  return d == 1 ? ((reader *)u)->k : i[0];
}

/* ---- refused by tec_lower ---- */

/* one input A of shape sa, output B of shape sb reading A through r; refused with want */
static void refused_1(const char *what, int nd, const int64_t *sa, const int64_t *sb,
                      index_fn idx, int has_k, int64_t kext, const char *const *want) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, nd, te_shape(ctx, nd, sa));
  reader r = {A, idx, has_k ? te_reduce_axis_n(ctx, "k", kext) : NULL, 0, NULL};
  int ob = has_k ? 1 : nd;
  te_tensor *B = out_of(ctx, "B", ob, te_shape(ctx, ob, sb), &r);
  sch_schedule *s = sch_create(ctx, 1, &B);
  ck_assert_msg(TEC_LOWER(s, "f", A, B) == NULL, "%s: lowered", what);
  for (int k = 0; want[k]; k++) tu_assert_contains(tec_ctx_error(ctx), want[k]);
  tec_ctx_free(ctx);
}

START_TEST(refused_at_lower) {
  /* the case, word for word */
  {
    tec_ctx *ctx = tec_ctx_new();
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, 8));
    reader r = {A, i_plus5, NULL, 0, NULL};
    te_tensor *B = out_of(ctx, "B", 1, TE_SHAPE(ctx, 8), &r);
    sch_schedule *s = sch_create(ctx, 1, &B);
    ck_assert_ptr_null(TEC_LOWER(s, "f", A, B));
    assert_err(ctx, "tec_lower 'f': tensor 'A' is accessed at 12 in dimension 0, which is beyond "
                    "the max (7) of its shape [8]: 'B' reads A[(i + 5)] at indices 5 to 12 over "
                    "its domain; keep the index inside the shape, or guard the read with a "
                    "select on the index (as a padding does)");
    tec_ctx_free(ctx);
  }
  /* 2. below the min */
  refused_1("shift -1", 1, (int64_t[]){16}, (int64_t[]){16}, i_minus1, 0, 0,
            (const char *[]){"tensor 'A' is accessed at -1 in dimension 0, which is below the min (0)",
                             NULL});
  /* 3. strided by 2 */
  refused_1("2i", 1, (int64_t[]){16}, (int64_t[]){16}, two_i, 0, 0,
            (const char *[]){"tensor 'A' is accessed at 30 in dimension 0, which is beyond the max (15)",
                             NULL});
  /* 4. strided by 3, shifted */
  refused_1("3i+1", 1, (int64_t[]){32}, (int64_t[]){16}, three_i1, 0, 0,
            (const char *[]){"accessed at 46 in dimension 0", "max (31)", "at indices 1 to 46", NULL});
  /* 5. a column past the end: dimension 1 */
  refused_1("2-d j+1", 2, (int64_t[]){4, 16}, (int64_t[]){4, 16}, col_plus1, 0, 0,
            (const char *[]){"accessed at 16 in dimension 1, which is beyond the max (15) of its "
                             "shape [4, 16]", NULL});
  /* 6. an output larger than its input: dimension 0 */
  refused_1("2-d rows", 2, (int64_t[]){4, 16}, (int64_t[]){16, 16}, ident, 0, 0,
            (const char *[]){"accessed at 15 in dimension 0, which is beyond the max (3)", NULL});
  /* 7. a reduction reading A[i, k + 1] */
  refused_1("sum k+1", 2, (int64_t[]){4, 16}, (int64_t[]){4}, row_k1, 1, 16,
            (const char *[]){"accessed at 16 in dimension 1", "'B' reads A[i, (k + 1)]", NULL});
  /* 8. a strided reduction A[i*4 + k] */
  refused_1("sum 4i+k", 1, (int64_t[]){32}, (int64_t[]){16}, four_i_k, 1, 4,
            (const char *[]){"accessed at 63 in dimension 0, which is beyond the max (31)", NULL});
}
END_TEST

/* 9. a read in a select's condition happens on every iteration */
static const ir_expr *cond_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  te_tensor *A = user;
  return ir_select(ir_gt(TE_AT(A, ir_add(i[0], c(ctx, 16))), ir_float(ctx, 0)), ir_float(ctx, 1),
                   ir_float(ctx, 0));
}
/* 10./11. B[i] = P[i + 1] + 1 with P[i] = A[i] (P inlined or at root) */
static const ir_expr *p_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  (void)ctx;
  return TE_AT((te_tensor *)user, i[0]);
}
static const ir_expr *p_plus1_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  return ir_add(TE_AT((te_tensor *)user, ir_add(i[0], c(ctx, 1))), ir_float(ctx, 1));
}
static te_tensor *compute1(tec_ctx *ctx, const char *name, int64_t n, te_body_fn b, void *u) {
  return te_compute(ctx, &(te_compute_decl){.name = name, .ndim = 1, .shape = TE_SHAPE(ctx, n),
                                            .body = b, .user = u});
}

START_TEST(refused_other_forms) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, 16));
  te_tensor *B = compute1(ctx, "B", 16, cond_body, A);
  sch_schedule *s = sch_create(ctx, 1, &B);
  ck_assert_ptr_null(TEC_LOWER(s, "f", A, B));
  tu_assert_contains(tec_ctx_error(ctx), "tensor 'A' is accessed at 31 in dimension 0");
  /* through an inlined stage: the reader is the stage it is inlined into */
  te_tensor *P = compute1(ctx, "P", 16, p_body, A);
  te_tensor *C = compute1(ctx, "C", 16, p_plus1_body, P);
  s = sch_create(ctx, 1, &C);
  OK(ctx, sch_compute_inline(sch_stage_of(s, P)));
  ck_assert_ptr_null(TEC_LOWER(s, "f", A, C));
  tu_assert_contains(tec_ctx_error(ctx), "tensor 'A' is accessed at 16 in dimension 0, which is "
                                         "beyond the max (15) of its shape [16]: 'C' reads");
  /* a computed tensor read past its own shape */
  s = sch_create(ctx, 1, &C);
  ck_assert_ptr_null(TEC_LOWER(s, "f", A, C));
  tu_assert_contains(tec_ctx_error(ctx), "tensor 'P' is accessed at 16 in dimension 0");
  /* an argument with a margin may be read in its whole buffer, not past it */
  te_tensor *M = te_placeholder(ctx, "M", TEC_F32, 1, TE_SHAPE(ctx, 16));
  OK(ctx, te_tensor_set_margin(ctx, M, (int64_t[]){1}, (int64_t[]){1}));
  reader r = {M, three_i1, NULL, 0, NULL};
  te_tensor *D = out_of(ctx, "D", 1, TE_SHAPE(ctx, 8), &r); /* M[3i + 1]: up to 22 */
  s = sch_create(ctx, 1, &D);
  ck_assert_ptr_null(TEC_LOWER(s, "g", M, D));
  tu_assert_contains(tec_ctx_error(ctx), "tensor 'M' is accessed at 22 in dimension 0, which is "
                                         "beyond the max (16) of its buffer (shape [16], margin "
                                         "[1+1])");
  tec_ctx_free(ctx);
}
END_TEST

/* ---- refused by the checked entry: the sizes decide ---- */

typedef struct sym_case {
  const char *what;
  index_fn idx;
  int off;       /* A of n + off */
  int64_t n;     /* the size passed */
  const char *want;
} sym_case;

START_TEST(refused_at_entry) {
  const sym_case cases[] = {
      /* 12. the case: both of n */
      {"i+1", i_plus1, 0, 16, "f: tensor 'A' is accessed at 16 in dimension 0, which is beyond "
                             "the max (15) for the sizes passed: 'B' reads A[(i + 1)] over its "
                             "whole domain"},
      /* 13. strided */
      {"2i", two_i, 0, 32, "f: tensor 'A' is accessed at 62 in dimension 0, which is beyond the "
                          "max (31)"},
      /* 14. an input 16 shorter than the output, read at i + 16 */
      {"i+16", i_plus16, 0, 16, "f: tensor 'A' is accessed at 31 in dimension 0, which is "
                                "beyond the max (15)"},
      /* 15. below the min when n < 17 */
      {"i+n-17", plus_n_minus17, 0, 16, "f: tensor 'A' is accessed at -1 in dimension 0, which "
                                        "is below the min (0)"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const sym_case *sc = &cases[k];
    tec_ctx *ctx = tec_ctx_new();
    const ir_expr *n = te_size_var(ctx, "n");
    const ir_expr *na = ir_add(n, c(ctx, sc->off));
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &na);
    reader r = {A, sc->idx, NULL, 0, (void *)n};
    te_tensor *B = out_of(ctx, "B", 1, &n, &r);
    sch_schedule *s = sch_create(ctx, 1, &B);
    tec_packed_fn fn = tu_build(ctx, s, "f", 2, (te_tensor *[]){A, B});
    guarded ga, gb;
    int64_t ext = sc->n + sc->off;
    DLTensor *a = guard_alloc(&ga, TEC_F32, 1, &ext, sc->idx == plus_n_minus17);
    DLTensor *b = guard_alloc(&gb, TEC_F32, 1, &sc->n, 0);
    ck_assert_msg(TEC_CALL(fn, a, b) == -1, "%s: ran", sc->what);
    tu_assert_contains(tec_rt_last_error(), sc->want);
    guard_free(&ga), guard_free(&gb);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* 16. B[i] = A[i] with A of m and B of n: fine while n <= m, refused past it; 17. the same in
 * dimension 1 of a 2-d pair; 18. a reduction over [0, n + 1) of a row of n (at tec_lower) */
START_TEST(entry_depends_on_sizes) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *m = te_size_var(ctx, "m"), *n = te_size_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &m);
  reader r = {A, ident, NULL, 0, NULL};
  te_tensor *B = out_of(ctx, "B", 1, &n, &r);
  sch_schedule *s = sch_create(ctx, 1, &B);
  sch_stage *st = sch_stage_of(s, B);
  sch_iter *o, *in;
  OK(ctx, sch_split(st, sch_axis(st, 0), 16, &o, &in));
  OK(ctx, sch_vectorize(st, in));
  tec_packed_fn fn = tu_build(ctx, s, "f", 2, (te_tensor *[]){A, B});
  guarded ga, gb, gc;
  DLTensor *a = guard_alloc(&ga, TEC_F32, 1, (int64_t[]){32}, 0);
  DLTensor *b = guard_alloc(&gb, TEC_F32, 1, (int64_t[]){32}, 0);
  ck_assert_int_eq(TEC_CALL(fn, a, b), 0);
  for (int i = 0; i < 32; i++) ck_assert_float_eq(fl(&gb)[i], fl(&ga)[i]);
  DLTensor *b2 = guard_alloc(&gc, TEC_F32, 1, (int64_t[]){48}, 0);
  ck_assert_int_eq(TEC_CALL(fn, a, b2), -1);
  ck_assert_str_eq(tec_rt_last_error(), "f: tensor 'A' is accessed at 47 in dimension 0, which "
                                        "is beyond the max (31) for the sizes passed: 'B' reads "
                                        "A[i] over its whole domain");
  guard_free(&ga), guard_free(&gb), guard_free(&gc);

  /* 17. 2-d: A[i, j + 1], both (4, n) */
  const ir_expr *sh[2] = {c(ctx, 4), n};
  te_tensor *A2 = te_placeholder(ctx, "A2", TEC_F32, 2, sh);
  reader r2 = {A2, col_plus1, NULL, 0, NULL};
  te_tensor *B2 = out_of(ctx, "B2", 2, sh, &r2);
  fn = tu_build(ctx, sch_create(ctx, 1, &B2), "g", 2, (te_tensor *[]){A2, B2});
  a = guard_alloc(&ga, TEC_F32, 2, (int64_t[]){4, 16}, 0);
  b = guard_alloc(&gb, TEC_F32, 2, (int64_t[]){4, 16}, 0);
  ck_assert_int_eq(TEC_CALL(fn, a, b), -1);
  tu_assert_contains(tec_rt_last_error(), "g: tensor 'A2' is accessed at 16 in dimension 1, "
                                          "which is beyond the max (15)");
  guard_free(&ga), guard_free(&gb);

  /* 18. C[i] = sum over k in [0, n + 1) of A3[i, k], A3 of (4, n): k runs for every n >= 0
   * and reaches n, so no size makes it legal: refused at tec_lower, symbolically */
  te_tensor *A3 = te_placeholder(ctx, "A3", TEC_F32, 2, sh);
  reader r3 = {A3, k_only, te_reduce_axis(ctx, "k", c(ctx, 0), ir_add(n, c(ctx, 1))), 0, NULL};
  te_tensor *C3 = out_of(ctx, "C3", 1, TE_SHAPE(ctx, 4), &r3);
  ck_assert_ptr_null(TEC_LOWER(sch_create(ctx, 1, &C3), "h", A3, C3));
  assert_err(ctx, "tec_lower 'h': tensor 'A3' is accessed at n in dimension 1, which is beyond "
                  "the max (n - 1) of its shape [4, n]: 'C3' reads A3[i, k] at indices 0 to n "
                  "over its domain; keep the index inside the shape, or guard the read with a "
                  "select on the index (as a padding does)");
  tec_ctx_free(ctx);
}
END_TEST

/* ---- caught by the run-time checks (tec_lower_options.check_bounds) ---- */

/* Builds B = read of A (16) through idx with the checks on (schedule: 0 plain, 1 vectorized,
 * 2 parallel) and runs it on guarded buffers: -1 with want. */
static void caught(const char *what, index_fn idx, int sched, const char *want) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, 16));
  reader r = {A, idx, NULL, 0, NULL};
  te_tensor *B = out_of(ctx, "B", 1, TE_SHAPE(ctx, 16), &r);
  sch_schedule *s = sch_create(ctx, 1, &B);
  sch_stage *st = sch_stage_of(s, B);
  sch_iter *o, *in;
  if (sched) OK(ctx, sch_split(st, sch_axis(st, 0), 4, &o, &in));
  if (sched == 1) OK(ctx, sch_vectorize(st, in));
  if (sched == 2) OK(ctx, sch_parallel(st, o));
  /* without the option it lowers: nothing proves the read wrong */
  ck_assert_msg(TEC_LOWER(s, "f", A, B) != NULL, "%s: %s", what, tec_ctx_error(ctx));
  lower_func *f = tec_lower_with(s, "f", 2, (te_tensor *[]){A, B},
                                 &(tec_lower_options){.check_bounds = 1});
  ck_assert_msg(f != NULL, "%s: %s", what, tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s: %s", what, tec_ctx_error(ctx));
  guarded ga, gb;
  DLTensor *a = guard_alloc(&ga, TEC_F32, 1, (int64_t[]){16}, 0);
  DLTensor *b = guard_alloc(&gb, TEC_F32, 1, (int64_t[]){16}, 0);
  ck_assert_msg(TEC_RUN(m, "f", a, b) == -1, "%s: ran", what);
  tu_assert_contains(tec_rt_last_error(), want);
  guard_free(&ga), guard_free(&gb);
  tec_ctx_free(ctx);
}

/* 19.-21. A[(i*i) % 19], scalar, vectorized (lane by lane), in a parallel chunk; 22. A[i/2 + 9]
 * (division: not affine) */
START_TEST(caught_at_run_time) {
  const char *sq = "f: 'A' is loaded at flat index 16, outside its 16 elements "
                   "(tec_lower_options.check_bounds)";
  caught("i*i % 19", square_mod, 0, sq);
  caught("i*i % 19 vectorized", square_mod, 1, sq);
  /* (the chunk that fails first may be another: 16 at i = 4 or 15, 17 at i = 6 or 13) */
  caught("i*i % 19 parallel", square_mod, 2, "outside its 16 elements");
  caught("i/2 + 9", half_plus9, 1, "f: 'A' is loaded at flat index 16, outside its 16 elements "
                                   "(tec_lower_options.check_bounds)");
}
END_TEST

/* 23. a gather: B[i] = A[I[i]], the index read from memory */
static const ir_expr *gather_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  te_tensor **t = user;
  (void)ctx;
  return TE_AT(t[0], ir_cast(TEC_I64, TE_AT(t[1], i[0])));
}

START_TEST(gather_and_aot) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, 16));
  te_tensor *I = te_placeholder(ctx, "I", TEC_I32, 1, TE_SHAPE(ctx, 16));
  te_tensor *in[2] = {A, I};
  te_tensor *B = compute1(ctx, "B", 16, gather_body, in);
  sch_schedule *s = sch_create(ctx, 1, &B);
  tec_lower_options on = {.check_bounds = 1};
  lower_func *f = tec_lower_with(s, "gather", 3, (te_tensor *[]){A, I, B}, &on);
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  guarded ga, gi, gb;
  DLTensor *a = guard_alloc(&ga, TEC_F32, 1, (int64_t[]){16}, 0);
  DLTensor *ix = guard_alloc(&gi, TEC_I32, 1, (int64_t[]){16}, 0);
  DLTensor *b = guard_alloc(&gb, TEC_F32, 1, (int64_t[]){16}, 0);
  ck_assert_int_eq(TEC_RUN(m, "gather", a, ix, b), 0); /* indices k % 7: inside */
  for (int k = 0; k < 16; k++) ck_assert_float_eq(fl(&gb)[k], fl(&ga)[k % 7]);
  ((int32_t *)ix->data)[5] = 16;
  ck_assert_int_eq(TEC_RUN(m, "gather", a, ix, b), -1);
  ck_assert_str_eq(tec_rt_last_error(), "gather: 'A' is loaded at flat index 16, outside its 16 "
                                        "elements (tec_lower_options.check_bounds)");
  ((int32_t *)ix->data)[5] = -3;
  ck_assert_int_eq(TEC_RUN(m, "gather", a, ix, b), -1);
  tu_assert_contains(tec_rt_last_error(), "at flat index -3");
  /* AOT: the emitted code carries the same checks; without the option it has none */
  char *ll = tu_emit_text(ctx, f, NULL, TEC_EMIT_LLVM_IR);
  tu_assert_contains(ll, "gather: 'A' is loaded at flat index %lld, outside its %lld elements");
  free(ll);
  lower_func *plain = TEC_LOWER(s, "gather", A, I, B);
  ck_assert_ptr_nonnull(plain);
  ll = tu_emit_text(ctx, plain, NULL, TEC_EMIT_LLVM_IR);
  assert_not_contains(ll, "is loaded at flat index");
  free(ll);
  guard_free(&ga), guard_free(&gi), guard_free(&gb);
  tec_ctx_free(ctx);
}
END_TEST

/* ---- legal programs near the edges: they run, with the checks on too ---- */

/* Builds (with check_bounds = chk) and runs f(a, b) on guarded buffers, 0 expected. */
static void run_ok(tec_ctx *ctx, sch_schedule *s, te_tensor *A, te_tensor *B, int chk,
                   DLTensor *a, DLTensor *b) {
  lower_func *f = tec_lower_with(s, "f", 2, (te_tensor *[]){A, B},
                                 &(tec_lower_options){.check_bounds = chk});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_msg(TEC_RUN(m, "f", a, b) == 0, "%s", tec_rt_last_error());
}

START_TEST(legal_edges) {
  for (int chk = 0; chk < 2; chk++)
    for (int sched = 0; sched < 3; sched++) {
      tec_ctx *ctx = tec_ctx_new();
      /* shifted: B[i] = A[i + 16], A of 32, B of 16 (reads the last element) */
      te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, 32));
      reader r = {A, i_plus16, NULL, 0, NULL};
      te_tensor *B = out_of(ctx, "B", 1, TE_SHAPE(ctx, 16), &r);
      sch_schedule *s = sch_create(ctx, 1, &B);
      sch_stage *st = sch_stage_of(s, B);
      sch_iter *o, *in;
      if (sched) OK(ctx, sch_split(st, sch_axis(st, 0), 8, &o, &in));
      if (sched == 1) OK(ctx, sch_vectorize(st, in));
      if (sched == 2) OK(ctx, sch_parallel(st, o));
      guarded ga, gb;
      DLTensor *a = guard_alloc(&ga, TEC_F32, 1, (int64_t[]){32}, 0);
      DLTensor *b = guard_alloc(&gb, TEC_F32, 1, (int64_t[]){16}, 0);
      run_ok(ctx, s, A, B, chk, a, b);
      for (int i = 0; i < 16; i++) ck_assert_float_eq(fl(&gb)[i], fl(&ga)[i + 16]);
      guard_free(&ga), guard_free(&gb);

      /* padded: B[i] = select(0 <= i - 1 < 16, A[i - 1], 0), B of 32 (both guards touched) */
      te_tensor *P = te_placeholder(ctx, "P", TEC_F32, 1, TE_SHAPE(ctx, 16));
      reader rp = {P, i_minus1, NULL, 1, NULL};
      te_tensor *Q = out_of(ctx, "Q", 1, TE_SHAPE(ctx, 32), &rp);
      s = sch_create(ctx, 1, &Q);
      st = sch_stage_of(s, Q);
      if (sched) OK(ctx, sch_split(st, sch_axis(st, 0), 8, &o, &in));
      if (sched == 1) OK(ctx, sch_vectorize(st, in));
      if (sched == 2) OK(ctx, sch_parallel(st, o));
      for (int at_start = 0; at_start < 2; at_start++) {
        DLTensor *p = guard_alloc(&ga, TEC_F32, 1, (int64_t[]){16}, at_start);
        DLTensor *q = guard_alloc(&gb, TEC_F32, 1, (int64_t[]){32}, 0);
        run_ok(ctx, s, P, Q, chk, p, q);
        for (int i = 0; i < 32; i++)
          ck_assert_float_eq(fl(&gb)[i], i >= 1 && i <= 16 ? fl(&ga)[i - 1] : 0.0f);
        guard_free(&ga), guard_free(&gb);
      }
      tec_ctx_free(ctx);
    }
}
END_TEST

/* A[s*i + off], s and off in the reader's user words */
static const ir_expr *strided_off(tec_ctx *ctx, const ir_expr *const *i, int d, void *u) {
  const int64_t *so = ((reader *)u)->u;
  (void)d;
  return ir_add(ir_mul(i[0], c(ctx, so[0])), c(ctx, so[1]));
}

/* vectorized reads moving by 2-8 elements per lane (codegen_mem.c loads them as whole
 * vectors and shuffles): B[i] = A[s*i + off], the last lane of the last vector reading A's last
 * element, right before a PROT_NONE page: no load may reach past it */
START_TEST(legal_strided_vectors) {
  const int cases[][2] = {{2, 16}, {3, 16}, {4, 8}, {8, 4}, {2, 4}, {5, 16}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    int64_t st = cases[k][0], lanes = cases[k][1], w = 32, span = st * (w - 1) + 1;
    int64_t len = (span + 15) / 16 * 16, so[2] = {st, len - span}; /* 64-byte multiple */
    tec_ctx *ctx = tec_ctx_new();
    te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, len));
    reader r = {A, strided_off, NULL, 0, so};
    te_tensor *B = out_of(ctx, "B", 1, TE_SHAPE(ctx, w), &r);
    sch_schedule *s = sch_create(ctx, 1, &B);
    sch_stage *sg = sch_stage_of(s, B);
    sch_iter *o, *in;
    OK(ctx, sch_split(sg, sch_axis(sg, 0), lanes, &o, &in));
    OK(ctx, sch_vectorize(sg, in));
    lower_func *f = TEC_LOWER(s, "f", A, B);
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
#if defined(__x86_64__)
    /* whole loads and shuffles, not a gather */
    ck_assert_msg(!strstr(tec_module_asm(m), "gather"), "stride %lld: a gather", (long long)st);
#endif
    guarded ga, gb;
    DLTensor *a = guard_alloc(&ga, TEC_F32, 1, (int64_t[]){len}, 0);
    DLTensor *b = guard_alloc(&gb, TEC_F32, 1, (int64_t[]){w}, 0);
    ck_assert_msg(TEC_RUN(m, "f", a, b) == 0, "%s", tec_rt_last_error());
    for (int64_t i = 0; i < w; i++)
      ck_assert_msg(fl(&gb)[i] == fl(&ga)[st * i + so[1]], "stride %lld lanes %lld: B[%lld]",
                    (long long)st, (long long)lanes, (long long)i);
    guard_free(&ga), guard_free(&gb);
    tec_ctx_free(ctx);
  }
}
END_TEST

/* symbolic but legal: B[i] = A[i + 1] with A of n + 1 and B of n; the entry lets it run */
START_TEST(legal_symbolic) {
  tec_ctx *ctx = tec_ctx_new();
  const ir_expr *n = te_size_var(ctx, "n"), *n1 = ir_add(n, c(ctx, 16));
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 1, &n1);
  reader r = {A, i_plus16, NULL, 0, NULL};
  te_tensor *B = out_of(ctx, "B", 1, &n, &r);
  sch_schedule *s = sch_create(ctx, 1, &B);
  lower_func *f = TEC_LOWER(s, "f", A, B);
  ck_assert_ptr_nonnull(f);
  ck_assert_ptr_null(f->read_checks); /* n + 15 <= n + 15: nothing left to check */
  guarded ga, gb;
  DLTensor *a = guard_alloc(&ga, TEC_F32, 1, (int64_t[]){48}, 0);
  DLTensor *b = guard_alloc(&gb, TEC_F32, 1, (int64_t[]){32}, 0);
  run_ok(ctx, s, A, B, 1, a, b);
  for (int i = 0; i < 32; i++) ck_assert_float_eq(fl(&gb)[i], fl(&ga)[i + 16]);
  guard_free(&ga), guard_free(&gb);
  tec_ctx_free(ctx);
}
END_TEST

/* 3-tap filter over an argument with a margin of 1: reads the margin (its buffer), legal */
static const ir_expr *taps_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  te_tensor *M = user;
  return ir_add(ir_add(TE_AT(M, ir_sub(i[0], c(ctx, 1))), TE_AT(M, i[0])),
                TE_AT(M, ir_add(i[0], c(ctx, 1))));
}

START_TEST(legal_margins) {
  for (int chk = 0; chk < 2; chk++) {
    tec_ctx *ctx = tec_ctx_new();
    te_tensor *M = te_placeholder(ctx, "M", TEC_F32, 1, TE_SHAPE(ctx, 14));
    OK(ctx, te_tensor_set_margin(ctx, M, (int64_t[]){1}, (int64_t[]){1}));
    te_tensor *B = compute1(ctx, "B", 14, taps_body, M);
    sch_schedule *s = sch_create(ctx, 1, &B);
    guarded ga, gb;
    DLTensor *a = guard_alloc(&ga, TEC_F32, 1, (int64_t[]){16}, 0); /* 14 + 1 + 1 */
    DLTensor *b = guard_alloc(&gb, TEC_F32, 1, (int64_t[]){16}, 0);
    int64_t fourteen = 14;
    DLTensor b14 = tec_dl_view(b->data, TEC_F32, 1, &fourteen);
    run_ok(ctx, s, M, B, chk, a, &b14);
    for (int i = 0; i < 14; i++)
      ck_assert_float_eq(fl(&gb)[i], fl(&ga)[i] + fl(&ga)[i + 1] + fl(&ga)[i + 2]);
    guard_free(&ga), guard_free(&gb);
    tec_ctx_free(ctx);
  }
  /* templates in margin layouts (NCHW16c+m1 in, m1 out), with every access checked at run time
   * too: against the naive convolution */
  setenv("TEC_CHECK_BOUNDS", "1", 1);
  const topi_layout m1 = {.kind = TOPI_NCHWC, .block = 16, .margin = 1};
  const topi_conv2d dw = {.n = 1, .c_in = 32, .h = 8, .w = 8, .c_out = 32, .kh = 3, .kw = 3,
                          .stride_h = 1, .stride_w = 1, .pad_h = 1, .pad_w = 1, .groups = 32,
                          .in_layout = m1, .out_layout = m1, .epi = {1, 0, TOPI_ACT_RELU}};
  topi_conv2d cv = dw;
  cv.groups = 1, cv.c_out = 16, cv.pad_h = cv.pad_w = 2; /* pad past the margin: a select */
  double e1 = cr_check_template("depthwise_nchwc", &dw, NULL);
  double e2 = cr_check_template("conv2d_nchwc", &cv, NULL);
  unsetenv("TEC_CHECK_BOUNDS");
  ck_assert_msg(e1 < 1e-4 && e2 < 1e-4, "relative errors %g %g", e1, e2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("bounds");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, refused_at_lower);
  tcase_add_test(tc, refused_other_forms);
  tcase_add_test(tc, refused_at_entry);
  tcase_add_test(tc, entry_depends_on_sizes);
  tcase_add_test(tc, caught_at_run_time);
  tcase_add_test(tc, gather_and_aot);
  tcase_add_test(tc, legal_edges);
  tcase_add_test(tc, legal_strided_vectors);
  tcase_add_test(tc, legal_symbolic);
  tcase_add_test(tc, legal_margins);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

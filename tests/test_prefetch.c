/* test_prefetch.c — sch_prefetch: the statements it lowers to, the llvm.prefetch calls they
 * become, results unchanged against a naive reference (tails, a parallel loop), and each
 * misuse refused with its message, at the primitive or at tec_lower. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"


/* C[i, j] = sum_k A[i, k] * B[k, j] (M x K times K x N), or with sq: A[i, (k*k) % K] */
typedef struct mm {
  tec_ctx *ctx;
  te_tensor *A, *B, *P, *C; /* P: A * 2 when made with a producer (C then reads P, not A) */
  const ir_expr *k;
  sch_schedule *s;
  sch_stage *st;
  int sq;
} mm;

static const ir_expr *twice(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u;
  return ir_mul(TE_AT(m->A, i[0], i[1]), ir_float(ctx, 2));
}
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u;
  const ir_expr *kk = m->sq ? ir_mod(ir_mul(m->k, m->k), ir_int(ctx, m->A->shape[1]->v.i)) : m->k;
  te_tensor *a = m->P ? m->P : m->A;
  return te_sum(ir_mul(TE_AT(a, i[0], kk), TE_AT(m->B, m->k, i[1])), 1, &m->k, NULL);
}
static void mm_make(mm *m, int64_t M, int64_t N, int64_t K, int producer, int sq) {
  tec_ctx *ctx = tec_ctx_new();
  *m = (mm){.ctx = ctx, .sq = sq};
  m->A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, M, K));
  m->B = te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, K, N));
  if (producer)
    m->P = te_compute(ctx, &(te_compute_decl){.name = "P", .ndim = 2, .shape = m->A->shape,
                                              .body = twice, .user = m});
  m->k = te_reduce_axis_n(ctx, "k", K);
  m->C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2,
                                            .shape = TE_SHAPE(ctx, M, N), .body = mm_body,
                                            .user = m});
  m->s = m->C ? sch_create(ctx, 1, &m->C) : NULL;
  m->st = m->s ? sch_stage_of(m->s, m->C) : NULL;
  ck_assert_msg(m->st != NULL, "%s", tec_ctx_error(ctx));
}

/* tiles: io, jo, k, ii (unrolled), ji (vectorized); the leaves in *io ... *ji */
static void mm_tile(mm *m, int64_t ti, int64_t tj, sch_iter **io, sch_iter **jo, sch_iter **k,
                    sch_iter **ii, sch_iter **ji) {
  sch_stage *st = m->st;
  ck_assert_int_eq(sch_tile(st, sch_axis(st, 0), sch_axis(st, 1), ti, tj, io, jo, ii, ji), 0);
  *k = sch_reduce_axis(st, 0);
  ck_assert_int_eq(sch_reorder(st, 5, (sch_iter *[]){*io, *jo, *k, *ii, *ji}), 0);
  ck_assert_int_eq(sch_unroll(st, *ii), 0);
  ck_assert_int_eq(sch_vectorize(st, *ji), 0);
}

/* the 8 x 32 times 32 x 64 product, tiled 2 x 16 */
static void mm_small(mm *m, int producer, int sq, sch_iter **io, sch_iter **jo, sch_iter **k,
                     sch_iter **ii, sch_iter **ji) {
  mm_make(m, 8, 64, 32, producer, sq);
  mm_tile(m, 2, 16, io, jo, k, ii, ji);
}

static lower_func *mm_lower(mm *m) {
  lower_func *f = tec_lower(m->s, "mm", 3, (te_tensor *[]){m->A, m->B, m->C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(m->ctx));
  return f;
}

START_TEST(prefetch_lowers_and_runs) {
  const int64_t M = 37, N = 40, K = 29; /* no tile divides: tails peeled */
  mm m;
  mm_make(&m, M, N, K, 0, 0);
  sch_iter *io, *jo, *k, *ii, *ji;
  mm_tile(&m, 4, 16, &io, &jo, &k, &ii, &ji);
  ck_assert_int_eq(sch_parallel(m.st, io), 0); /* the prefetch runs in an outlined body */
  ck_assert_int_eq(sch_prefetch(m.st, m.B, k, 2), 0);
  ck_assert_int_eq(sch_prefetch(m.st, m.A, jo, 1), 0);
  lower_func *f = mm_lower(&m);
  const char *ir = tec_lower_str(f);
  if (getenv("TEC_TEST_PRINT")) puts(ir);
  /* B: the row k + 2 of the tile's 16 columns, one line; A: the tile's 4 rows, k over [0, 29)
   * is 116 bytes: two lines per row, for the next jo */
  tu_assert_contains(ir, "prefetch(B[");
  tu_assert_contains(ir, "prefetch(A[");
  tu_assert_contains(ir, "for (pf.A.0, ");
  tec_module *mod = tec_build(m.ctx, 1, &f, NULL);
  ck_assert_msg(mod != NULL, "%s", tec_ctx_error(m.ctx));
  tu_assert_contains(tec_module_llvm_ir(mod), "@llvm.prefetch");
  tec_packed_fn fn = tec_module_get(mod, "mm");
  ck_assert_ptr_nonnull(fn);
  DLTensor a = tu_rand_f32(2, (int64_t[]){M, K}, 1), b = tu_rand_f32(2, (int64_t[]){K, N}, 2);
  DLTensor c = tu_zeros(TEC_F32, 2, (int64_t[]){M, N});
  float *ref = malloc(sizeof(float) * (size_t)(M * N));
  tu_ref_matmul(tu_f32(&a), tu_f32(&b), ref, M, N, K);
  ck_assert_msg(fn((DLTensor *[]){&a, &b, &c}, 3) == 0, "%s", tec_rt_last_error());
  ck_assert_double_lt(tu_max_err(tu_f32(&c), ref, M * N), 1e-5);
  free(ref);
  tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&c);
  tec_ctx_free(m.ctx);
}
END_TEST

START_TEST(prefetch_exact_statement) {
  /* 8 x 32 times 32 x 64, tile 2 x 16: at k, B's row k + 3, columns jo*16 .. +15: one line */
  mm m;
  sch_iter *io, *jo, *k, *ii, *ji;
  mm_small(&m, 0, 0, &io, &jo, &k, &ii, &ji);
  ck_assert_int_eq(sch_prefetch(m.st, m.B, k, 3), 0);
  lower_func *f = mm_lower(&m);
  tu_assert_contains(tec_lower_str(f), "prefetch(B[(((k*64) + (j.outer*16)) + 192)])");
  tec_ctx_free(m.ctx);
}
END_TEST

/* The instruction each target gets: emitted assembly for x86-64, AArch64 and ARMv7 */
START_TEST(prefetch_instructions) {
  static const struct {
    const char *target, *insn;
  } t[] = {{"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512", "prefetcht0"},
           {"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon", "prfm\tpldl1keep"},
           {"llvm -mtriple=armv7a-linux-gnueabihf -mattr=+neon,+vfp4", "pld\t"}};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    mm m;
    sch_iter *io, *jo, *k, *ii, *ji;
    mm_small(&m, 0, 0, &io, &jo, &k, &ii, &ji);
    ck_assert_int_eq(sch_prefetch(m.st, m.B, k, 3), 0);
    lower_func *f = mm_lower(&m);
    char path[] = "/tmp/tec_prefetch_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(tec_emit(m.ctx, 1, &f, t[i].target, TEC_EMIT_ASM, path) == 0, "%s: %s",
                  t[i].target, tec_ctx_error(m.ctx));
    char *as = tu_read_file(path, NULL);
    unlink(path);
    tu_assert_contains(as, t[i].insn);
    free(as);
    tec_ctx_free(m.ctx);
  }
}
END_TEST

START_TEST(prefetch_primitive_errors) {
  mm m;
  sch_iter *io, *jo, *k, *ii, *ji;
  mm_small(&m, 0, 0, &io, &jo, &k, &ii, &ji);
  ck_assert_int_eq(sch_prefetch(m.st, NULL, k, 1), -1);
  assert_err(m.ctx, "prefetch: the tensor to prefetch at loop 'k' of stage 'C' is NULL");
  tec_ctx_clear_error(m.ctx);
  ck_assert_int_eq(sch_prefetch(m.st, m.C, k, 1), -1);
  assert_err(m.ctx, "prefetch: stage 'C' does not read 'C'; it reads 'A', 'B'");
  tec_ctx_clear_error(m.ctx);
  ck_assert_int_eq(sch_prefetch(m.st, m.B, k, 0), -1);
  assert_err(m.ctx, "prefetch: offset 0 for 'B' at loop 'k' of stage 'C'; it is how many "
                    "iterations ahead to fetch and must be >= 1");
  tec_ctx_clear_error(m.ctx);
  ck_assert_int_eq(sch_prefetch(m.st, m.B, k, -4), -1);
  ck_assert_ptr_nonnull(tec_ctx_error(m.ctx));
  tec_ctx_clear_error(m.ctx);
  ck_assert_int_eq(sch_prefetch(m.st, m.B, NULL, 1), -1);
  assert_err(m.ctx, "prefetch: the axis given for stage 'C' is NULL");
  tec_ctx_clear_error(m.ctx);
  ck_assert_int_eq(sch_prefetch(NULL, m.B, k, 1), -1);
  /* a split loop is no longer a leaf */
  sch_iter *ko, *ki;
  ck_assert_int_eq(sch_split(m.st, k, 8, &ko, &ki), 0);
  ck_assert_int_eq(sch_prefetch(m.st, m.B, k, 1), -1);
  tu_assert_contains(tec_ctx_error(m.ctx), "prefetch: axis 'k' of stage 'C' was already split");
  tec_ctx_clear_error(m.ctx);
  /* nothing was recorded by the refused calls: the program lowers without a prefetch */
  lower_func *f = mm_lower(&m);
  ck_assert_ptr_null(strstr(tec_lower_str(f), "prefetch"));
  tec_ctx_free(m.ctx);
}
END_TEST

START_TEST(prefetch_lower_errors) {
  sch_iter *io, *jo, *k, *ii, *ji;
  { /* on the vectorized loop, and on a loop inside it */
    mm m;
    mm_small(&m, 0, 0, &io, &jo, &k, &ii, &ji);
    ck_assert_int_eq(sch_prefetch(m.st, m.B, ji, 1), 0);
    ck_assert_ptr_null(tec_lower(m.s, "mm", 3, (te_tensor *[]){m.A, m.B, m.C}));
    assert_err(m.ctx, "prefetch at loop 'j.inner' of stage 'C': the loop is vectorized; put the "
                      "prefetch on a loop outside the vectorized one");
    tec_ctx_free(m.ctx);
  }
  { /* P computed inside the loop it would be prefetched at */
    mm m;
    mm_small(&m, 1, 0, &io, &jo, &k, &ii, &ji);
    sch_stage *sp = sch_stage_of(m.s, m.P);
    ck_assert_int_eq(sch_compute_at(sp, m.st, jo), 0);
    ck_assert_int_eq(sch_prefetch(m.st, m.P, io, 1), 0); /* outside: fine */
    ck_assert_int_eq(sch_prefetch(m.st, m.P, jo, 1), 0); /* P is realized inside jo */
    ck_assert_ptr_null(tec_lower(m.s, "mm", 3, (te_tensor *[]){m.A, m.B, m.C}));
    assert_err(m.ctx, "prefetch of 'P' at loop 'j.outer' of stage 'C': 'P' is computed inside "
                      "that loop (compute_at), so its next iterations do not exist yet; prefetch "
                      "it at a loop inside its attach point, or prefetch what it reads");
    tec_ctx_free(m.ctx);
  }
  { /* an index that is not affine in the loops inside: A[i, (k*k) % 32] */
    mm m;
    mm_small(&m, 0, 1, &io, &jo, &k, &ii, &ji);
    ck_assert_int_eq(sch_prefetch(m.st, m.A, jo, 1), 0);
    ck_assert_ptr_null(tec_lower(m.s, "mm", 3, (te_tensor *[]){m.A, m.B, m.C}));
    tu_assert_contains(tec_ctx_error(m.ctx), "prefetch of 'A' at loop 'j.outer' of stage 'C': "
                                             "index ");
    tu_assert_contains(tec_ctx_error(m.ctx), "is not affine in the loops inside 'j.outer'");
    tec_ctx_clear_error(m.ctx);
    /* at k itself the same index is fine: nothing varies inside k but ii and ji */
    mm m2;
    mm_small(&m2, 0, 1, &io, &jo, &k, &ii, &ji);
    ck_assert_int_eq(sch_prefetch(m2.st, m2.A, k, 1), 0);
    mm_lower(&m2);
    tec_ctx_free(m.ctx);
    tec_ctx_free(m2.ctx);
  }
  { /* P inlined after the prefetch: the loop reads no P */
    mm m;
    mm_small(&m, 1, 0, &io, &jo, &k, &ii, &ji);
    ck_assert_int_eq(sch_prefetch(m.st, m.P, k, 1), 0);
    ck_assert_int_eq(sch_compute_inline(sch_stage_of(m.s, m.P)), 0);
    ck_assert_ptr_null(tec_lower(m.s, "mm", 3, (te_tensor *[]){m.A, m.B, m.C}));
    assert_err(m.ctx, "prefetch of 'P' at loop 'k' of stage 'C': that loop reads no element of "
                      "'P' (was it inlined, or read through a cache_read made after the "
                      "prefetch?)");
    tec_ctx_free(m.ctx);
  }
}
END_TEST

START_TEST(prefetch_ir_constructor) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *T = te_placeholder(ctx, "T", TEC_F32, 1, TE_SHAPE(ctx, 8));
  const ir_expr *i = ir_var(ctx, "i", TEC_INDEX, IR_VAR_INDEX);
  const ir_expr *p = ir_prefetch(ir_read(ctx, T, 1, &i));
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(ir_expr_str(p), "prefetch(T[i])");
  ck_assert_ptr_null(ir_prefetch(ir_float(ctx, 1)));
  tu_assert_contains(tec_ctx_error(ctx), "ir_prefetch: the argument must be a scalar tensor read");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_prefetch(NULL));
  ck_assert_ptr_null(ir_call(ctx, IR_INTRIN_PREFETCH, 1, (const ir_expr *const[]){ir_float(ctx, 1)}));
  assert_err(ctx, "ir_call: prefetch takes a memory access, not a value; use ir_prefetch(read)");
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("prefetch");
  TCase *tc = tcase_create("prefetch");
  tcase_add_test(tc, prefetch_lowers_and_runs);
  tcase_add_test(tc, prefetch_exact_statement);
  tcase_add_test(tc, prefetch_instructions);
  tcase_add_test(tc, prefetch_primitive_errors);
  tcase_add_test(tc, prefetch_lower_errors);
  tcase_add_test(tc, prefetch_ir_constructor);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

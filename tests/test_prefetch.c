/* test_prefetch.c — sch_prefetch: the statements it lowers to, the instruction each target
 * gets, results unchanged against a naive reference (tails, a parallel loop), and each misuse
 * refused with its message, at the primitive or at tec_lower. */
#include <stdlib.h>
#include "testutil.h"

/* C[i, j] = sum_k A[i, k] * B[k, j] (M x K times K x N); with sq, A is read at
 * (k*k) / (k + 1), an index interval arithmetic cannot bound over k */
typedef struct mm {
  tec_ctx *ctx;
  te_tensor *A, *B, *P, *C; /* P: A * 2 when made with a producer (C then reads P, not A) */
  const ir_expr *k;
  sch_schedule *s;
  sch_stage *st;
  sch_iter *io, *jo, *ko, *ii, *ji; /* after mm_tile: ko is the reduce axis k */
  int sq;
} mm;

static const ir_expr *twice(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u;
  return ir_mul(TE_AT(m->A, i[0], i[1]), ir_float(ctx, 2));
}
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  mm *m = u;
  const ir_expr *kk = m->sq ? ir_div(ir_mul(m->k, m->k), ir_add(m->k, ir_int(ctx, 1))) : m->k;
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

/* tiles ti x tj: io, jo, k, ii (unrolled), ji (vectorized) */
static void mm_tile(mm *m, int64_t ti, int64_t tj) {
  sch_stage *st = m->st;
  ck_assert_int_eq(
      sch_tile(st, sch_axis(st, 0), sch_axis(st, 1), ti, tj, &m->io, &m->jo, &m->ii, &m->ji), 0);
  m->ko = sch_reduce_axis(st, 0);
  ck_assert_int_eq(sch_reorder(st, 5, (sch_iter *[]){m->io, m->jo, m->ko, m->ii, m->ji}), 0);
  ck_assert_int_eq(sch_unroll(st, m->ii), 0);
  ck_assert_int_eq(sch_vectorize(st, m->ji), 0);
}

/* the 8 x 32 times 32 x 64 product, tiled 2 x 16 */
static void mm_small(mm *m, int producer, int sq) {
  mm_make(m, 8, 64, 32, producer, sq);
  mm_tile(m, 2, 16);
}

static lower_func *mm_lower(mm *m) {
  lower_func *f = tec_lower(m->s, "mm", 3, (te_tensor *[]){m->A, m->B, m->C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(m->ctx));
  return f;
}

static void mm_refused(mm *m, const char *want) {
  ck_assert_ptr_null(tec_lower(m->s, "mm", 3, (te_tensor *[]){m->A, m->B, m->C}));
  assert_err(m->ctx, want);
}

START_TEST(prefetch_lowers_and_runs) {
  const int64_t M = 37, N = 40, K = 29; /* no tile divides: tails peeled */
  mm m;
  mm_make(&m, M, N, K, 0, 0);
  mm_tile(&m, 4, 16);
  ck_assert_int_eq(sch_parallel(m.st, m.io), 0); /* the prefetch runs in an outlined body */
  ck_assert_int_eq(sch_prefetch(m.st, m.B, m.ko, 2), 0);
  ck_assert_int_eq(sch_prefetch(m.st, m.A, m.jo, 1), 0);
  lower_func *f = mm_lower(&m);
  const char *ir = tec_lower_str(f);
  /* B: row k + 2 of the tile's 16 columns, one line (the 8-column tail: its own); A: the
   * tile's 4 rows, k over [0, 29) is 116 bytes: two lines a row (the same rows for the next
   * jo; the last row tile, rows 36..39, reaches past A's 37 rows: harmless) */
  tu_assert_contains(ir, "prefetch(B[(((k*40) + (j.outer*16)) + 80)])");
  tu_assert_contains(ir, "prefetch(B[((k*40) + 112)])");
  tu_assert_contains(ir, "for (pf.A.0, (i.outer*4), 4) {\n");
  tu_assert_contains(ir, "for (pf.A.1, 0, 2) {\n");
  tu_assert_contains(ir, "prefetch(A[((pf.A.0*29) + (pf.A.1*16))])");
  tu_assert_contains(ir, "for (pf.A.0, 36, 4) {\n");
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

/* B's row k + 3, columns jo*16 .. +15: one line; the instruction each target makes of it */
START_TEST(prefetch_statement_and_instructions) {
  static const struct {
    const char *target, *insn;
  } t[] = {{"llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512", "prefetcht0"},
           {"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon", "prfm\tpldl1keep"},
           {"llvm -mtriple=armv7a-linux-gnueabihf -mattr=+neon,+vfp4", "pld\t"}};
  mm m;
  mm_small(&m, 0, 0);
  ck_assert_int_eq(sch_prefetch(m.st, m.B, m.ko, 3), 0);
  lower_func *f = mm_lower(&m);
  tu_assert_contains(tec_lower_str(f), "prefetch(B[(((k*64) + (j.outer*16)) + 192)])");
  for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
    char *as = tu_emit_text(m.ctx, f, t[i].target, TEC_EMIT_ASM);
    tu_assert_contains(as, t[i].insn);
    free(as);
  }
  tec_ctx_free(m.ctx);
}
END_TEST

START_TEST(prefetch_primitive_errors) {
  mm m;
  mm_small(&m, 0, 0);
  ck_assert_int_eq(sch_prefetch(m.st, NULL, m.ko, 1), -1);
  assert_err(m.ctx, "prefetch: the tensor to prefetch at loop 'k' of stage 'C' is NULL");
  tec_ctx_clear_error(m.ctx);
  ck_assert_int_eq(sch_prefetch(m.st, m.C, m.ko, 1), -1);
  assert_err(m.ctx, "prefetch: stage 'C' does not read 'C'; it reads 'A', 'B'");
  tec_ctx_clear_error(m.ctx);
  ck_assert_int_eq(sch_prefetch(m.st, m.B, m.ko, 0), -1);
  assert_err(m.ctx, "prefetch: offset 0 for 'B' at loop 'k' of stage 'C'; it is how many "
                    "iterations ahead to fetch and must be >= 1");
  tec_ctx_clear_error(m.ctx);
  ck_assert_int_eq(sch_prefetch(m.st, m.B, m.ko, -4), -1);
  assert_err(m.ctx, "prefetch: offset -4 for 'B' at loop 'k' of stage 'C'; it is how many "
                    "iterations ahead to fetch and must be >= 1");
  tec_ctx_clear_error(m.ctx);
  ck_assert_int_eq(sch_prefetch(m.st, m.B, NULL, 1), -1);
  assert_err(m.ctx, "prefetch: the axis given for stage 'C' is NULL");
  tec_ctx_clear_error(m.ctx);
  ck_assert_int_eq(sch_prefetch(NULL, m.B, m.ko, 1), -1);
  assert_err(m.ctx, "prefetch: the stage is NULL (give the result of sch_stage_of)");
  tec_ctx_clear_error(m.ctx);
  /* a split loop is no longer a leaf */
  sch_iter *ko, *ki;
  ck_assert_int_eq(sch_split(m.st, m.ko, 8, &ko, &ki), 0);
  ck_assert_int_eq(sch_prefetch(m.st, m.B, m.ko, 1), -1);
  assert_err(m.ctx, "prefetch: axis 'k' of stage 'C' was already split or fused away; the "
                    "current loops are: i.outer, j.outer, k.outer, k.inner, i.inner, j.inner");
  tec_ctx_clear_error(m.ctx);
  /* nothing was recorded by the refused calls: the program lowers without a prefetch */
  assert_not_contains(tec_lower_str(mm_lower(&m)), "prefetch");
  tec_ctx_free(m.ctx);
}
END_TEST

START_TEST(prefetch_lower_errors) {
  { /* on the vectorized loop */
    mm m;
    mm_small(&m, 0, 0);
    ck_assert_int_eq(sch_prefetch(m.st, m.B, m.ji, 1), 0);
    mm_refused(&m, "prefetch at loop 'j.inner' of stage 'C': the loop is vectorized; put the "
                   "prefetch on a loop outside the vectorized one");
    tec_ctx_free(m.ctx);
  }
  { /* on a loop inside the vectorized one */
    mm m;
    mm_small(&m, 0, 0);
    ck_assert_int_eq(sch_reorder(m.st, 2, (sch_iter *[]){m.ji, m.ii}), 0);
    ck_assert_int_eq(sch_prefetch(m.st, m.B, m.ii, 1), 0);
    mm_refused(&m, "prefetch at loop 'i.inner' of stage 'C': it is inside 'j.inner', which is "
                   "vectorized; put the prefetch on a loop outside the vectorized one");
    tec_ctx_free(m.ctx);
  }
  { /* P computed at C's vectorized loop: its own loops are inside that one */
    mm m;
    mm_small(&m, 1, 0);
    sch_stage *sp = sch_stage_of(m.s, m.P);
    ck_assert_int_eq(sch_compute_at(sp, m.st, m.ji), 0);
    ck_assert_int_eq(sch_prefetch(sp, m.A, sch_axis(sp, 0), 1), 0);
    ck_assert_ptr_null(tec_lower(m.s, "mm", 3, (te_tensor *[]){m.A, m.B, m.C}));
    tu_assert_contains(tec_ctx_error(m.ctx), "of stage 'P': it is inside 'j.inner', which is "
                                             "vectorized; put the prefetch on a loop outside");
    tec_ctx_free(m.ctx);
  }
  { /* P computed inside the loop it would be prefetched at */
    mm m;
    mm_small(&m, 1, 0);
    ck_assert_int_eq(sch_compute_at(sch_stage_of(m.s, m.P), m.st, m.jo), 0);
    ck_assert_int_eq(sch_prefetch(m.st, m.P, m.io, 1), 0); /* outside: fine */
    ck_assert_int_eq(sch_prefetch(m.st, m.P, m.jo, 1), 0); /* P is realized inside jo */
    mm_refused(&m, "prefetch of 'P' at loop 'j.outer' of stage 'C': 'P' is computed inside "
                   "that loop (compute_at), so its next iterations do not exist yet; prefetch "
                   "it at a loop inside its attach point, or prefetch what it reads");
    tec_ctx_free(m.ctx);
  }
  { /* an index without a bound over the loops inside: A[i, (k*k) / (k + 1)] at jo */
    mm m;
    mm_small(&m, 0, 1);
    ck_assert_int_eq(sch_prefetch(m.st, m.A, m.jo, 1), 0);
    mm_refused(&m, "prefetch of 'A' at loop 'j.outer' of stage 'C': index floordiv((k*k), "
                   "(k + 1)) has no bound over the loops inside 'j.outer' (sums, multiples "
                   "by a factor of known sign that does not vary, division and modulo by a "
                   "positive divisor that does not vary, min, max and select of their "
                   "variables have one); prefetch at a loop where it has");
    tec_ctx_free(m.ctx);
    /* at k itself the same index is fine: nothing varies inside k but ii and ji */
    mm_small(&m, 0, 1);
    ck_assert_int_eq(sch_prefetch(m.st, m.A, m.ko, 1), 0);
    tu_assert_contains(tec_lower_str(mm_lower(&m)), "prefetch(A[");
    tec_ctx_free(m.ctx);
  }
  { /* P inlined after the prefetch: the loop reads no P */
    mm m;
    mm_small(&m, 1, 0);
    ck_assert_int_eq(sch_prefetch(m.st, m.P, m.ko, 1), 0);
    ck_assert_int_eq(sch_compute_inline(sch_stage_of(m.s, m.P)), 0);
    mm_refused(&m, "prefetch of 'P' at loop 'k' of stage 'C': that loop reads no element of "
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
  assert_err(ctx, "ir_prefetch: the argument must be a scalar tensor read or buffer load (the "
                  "element whose cache line to prefetch), got a float");
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
  tcase_add_test(tc, prefetch_statement_and_instructions);
  tcase_add_test(tc, prefetch_primitive_errors);
  tcase_add_test(tc, prefetch_lower_errors);
  tcase_add_test(tc, prefetch_ir_constructor);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

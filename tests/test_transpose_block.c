/* test_transpose_block.c — pragma transpose_block (lower/transpose_block.c) and the zip
 * intrinsics it makes: a transposing copy B[k, j] = A[j, k] blocked L x L (k.inner under the
 * pragma, j.inner vectorized) against the plain C transpose (exact: a copy), for L = 4, 8 and
 * the target's lanes; the zips in the program (L log2 L per block); remainders and copies the
 * pass does not take fall back to the strided copy, correct, with a note; bad input (a pragma
 * value, zips of the wrong operands). The assembly shows shuffles, not gathers or per-lane
 * inserts: on the host (x86: AVX-512 here), for AVX2 and for AArch64 (zip1/zip2). Then the two templates that use it
 * (batch_matmul Q·Kᵀ, dense with b transposed) against C. */
#include <math.h>
#include <stdlib.h>
#include "testutil.h"

typedef struct tp {
  tec_ctx *ctx;
  te_tensor *A, *B;
  sch_schedule *s;
} tp;

static const ir_expr *transposed(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  return TE_AT((te_tensor *)u, i[1], i[0]);
}
static const ir_expr *transposed_x2(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  return ir_mul(TE_AT((te_tensor *)u, i[1], i[0]), ir_float(ctx, 2.0));
}
static const ir_expr *straight(tec_ctx *ctx, const ir_expr *const *i, void *u) {
  (void)ctx;
  return TE_AT((te_tensor *)u, i[0], i[1]);
}

enum { PLAIN, TIMES2, STRAIGHT };

/* B[k, j] = A[j, k] (A: n x k), or the variants; k and j split by L, (k.o, j.o, k.i, j.i),
 * j.i vectorized, k.i under the pragma unless pragma is 0 (then unrolled). */
static tp make(int64_t n, int64_t k, int L, int body, int pragma) {
  tp t = {tec_ctx_new(), NULL, NULL, NULL};
  tec_ctx *ctx = t.ctx;
  t.A = body == STRAIGHT ? te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, k, n))
                         : te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, n, k));
  static const char *const names[] = {"k", "j"};
  te_body_fn fn = body == PLAIN ? transposed : body == TIMES2 ? transposed_x2 : straight;
  t.B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = TE_SHAPE(ctx, k, n),
                                           .body = fn, .user = t.A, .axis_names = names});
  ck_assert_msg(t.B != NULL, "%s", tec_ctx_error(ctx));
  t.s = sch_create(ctx, 1, &t.B);
  sch_stage *st = sch_stage_of(t.s, t.B);
  sch_iter *ko, *ki, *jo, *ji;
  OK(ctx, sch_split(st, sch_axis(st, 0), L, &ko, &ki));
  OK(ctx, sch_split(st, sch_axis(st, 1), L, &jo, &ji));
  OK(ctx, sch_reorder(st, 4, (sch_iter *[]){ko, jo, ki, ji}));
  OK(ctx, sch_vectorize(st, ji));
  OK(ctx, pragma ? sch_pragma(st, ki, "transpose_block", NULL) : sch_unroll(st, ki));
  return t;
}

static void count_zip(ir_visitor *v, const ir_expr *e) {
  if (e->kind == IR_CALL && (e->v.i == IR_INTRIN_ZIP_LO || e->v.i == IR_INTRIN_ZIP_HI))
    (*(int *)v->user)++;
  ir_visit_expr_default(v, e);
}

/* zip calls in f's program */
static int zips(const lower_func *f) {
  int n = 0;
  ir_visitor v;
  ir_visitor_init(&v, &n);
  v.expr[IR_CALL] = count_zip;
  ir_visit_stmt(&v, f->body);
  return n;
}

static int log2i(int L) {
  int r = 0;
  while ((1 << r) < L) r++;
  return r;
}

/* runs t's function and checks B against the C transpose (or the variant); returns f */
static lower_func *check(tp *t, int64_t n, int64_t k, int body) {
  lower_func *f = tec_lower(t->s, "tr", 2, (te_tensor *[]){t->A, t->B});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(t->ctx));
  tec_module *m = tec_build(t->ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "%s", tec_ctx_error(t->ctx));
  int64_t sa[2] = {body == STRAIGHT ? k : n, body == STRAIGHT ? n : k}, sb[2] = {k, n};
  DLTensor a = tu_rand_f32(2, sa, 5), b = tu_zeros(TEC_F32, 2, sb);
  ck_assert_msg(tec_module_run(m, "tr", 2, (DLTensor *[]){&a, &b}) == 0, "%s", tec_rt_last_error());
  const float *x = tu_f32(&a), *y = tu_f32(&b);
  for (int64_t kk = 0; kk < k; kk++)
    for (int64_t j = 0; j < n; j++) {
      float want = body == STRAIGHT ? x[kk * n + j] : x[j * k + kk] * (body == TIMES2 ? 2.0f : 1.0f);
      ck_assert_msg(y[kk * n + j] == want, "n %lld k %lld: B[%lld, %lld] = %g, want %g",
                    (long long)n, (long long)k, (long long)kk, (long long)j, (double)y[kk * n + j],
                    (double)want);
    }
  tec_dl_free(&a), tec_dl_free(&b);
  return f;
}

static int host_lanes(void) {
  tec_ctx *ctx = tec_ctx_new();
  int l = tec_target_parse(ctx, NULL)->vector_lanes;
  tec_ctx_free(ctx);
  return l;
}

START_TEST(blocks_match_c) {
  int Ls[3] = {4, 8, host_lanes()};
  for (int i = 0; i < 3; i++) {
    int L = Ls[i];
    if (i == 2 && (L == 4 || L == 8)) continue;
    tp t = make(3 * L, 2 * L, L, PLAIN, 1);
    lower_func *f = check(&t, 3 * L, 2 * L, PLAIN);
    ck_assert_msg(f->nnotes == 0, "L %d: %s", L, f->nnotes ? f->notes[0] : "");
    ck_assert_int_eq(zips(f), L * log2i(L)); /* one block's network, inside the loops */
    tec_ctx_free(t.ctx);
  }
}
END_TEST

/* sizes the split does not divide: the full blocks are transposed, the tails stay strided
 * copies (a note says so), and every element is right */
START_TEST(remainders_fall_back) {
  int L = host_lanes() >= 8 ? 8 : 4;
  int64_t shapes[3][2] = {{2 * L + 1, 3 * L}, {3 * L, 2 * L + 3}, {L + 5, L + 7}};
  for (int i = tu_emulated() ? 2 : 0; i < 3; i++) { /* under qemu: both tails at once */
    int64_t n = shapes[i][0], k = shapes[i][1];
    tp t = make(n, k, L, PLAIN, 1);
    lower_func *f = check(&t, n, k, PLAIN);
    ck_assert_int_ge(zips(f), L * log2i(L));
    ck_assert_int_ge(f->nnotes, 1);
    tu_assert_contains(f->notes[0], "transpose_block: ");
    tec_ctx_free(t.ctx);
  }
  /* smaller than one block: no block, all strided */
  tp t = make(3, 2, L, PLAIN, 1);
  lower_func *f = check(&t, 3, 2, PLAIN);
  ck_assert_int_eq(zips(f), 0);
  tec_ctx_free(t.ctx);
}
END_TEST

/* loops the pass does not take: the program is left as it was (right numbers), the note says
 * why */
START_TEST(refused_with_a_note) {
  struct { int L, body; const char *why; } c[] = {
      {8, TIMES2, "the value stored is not one load"},
      {6, PLAIN, "its extent is not a constant power of two"},
      {8, STRAIGHT, "successive steps do not read successive elements"},
  };
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    tp t = make(2 * c[i].L, 2 * c[i].L, c[i].L, c[i].body, 1);
    lower_func *f = check(&t, 2 * c[i].L, 2 * c[i].L, c[i].body);
    ck_assert_int_eq(zips(f), 0);
    ck_assert_int_eq(f->nnotes, 1);
    tu_assert_contains(f->notes[0], "transpose_block: loop 'k.inner' stays a strided copy");
    tu_assert_contains(f->notes[0], c[i].why);
    tec_ctx_free(t.ctx);
  }
  /* with another pragma on the same loop (its attribute between): still taken */
  tp u = make(16, 16, 8, PLAIN, 1);
  sch_stage *us = sch_stage_of(u.s, u.B);
  OK(u.ctx, sch_pragma(us, sch_leaf_named(us, "k.inner"), "user_note", NULL));
  lower_func *g = check(&u, 16, 16, PLAIN);
  ck_assert_int_eq(g->nnotes, 0);
  ck_assert_int_eq(zips(g), 8 * 3);
  tec_ctx_free(u.ctx);
  /* strict mode makes the note an error */
  tp t = make(16, 16, 8, TIMES2, 1);
  tec_ctx_set_strict(t.ctx, 1);
  ck_assert_ptr_null(tec_lower(t.s, "tr", 2, (te_tensor *[]){t.A, t.B}));
  tu_assert_contains(tec_ctx_error(t.ctx), "transpose_block: ");
  tec_ctx_free(t.ctx);
}
END_TEST

START_TEST(bad_input) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 8, 8));
  static const char *const names[] = {"k", "j"};
  te_tensor *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 2, .shape = A->shape,
                                                    .body = transposed, .user = A, .axis_names = names});
  sch_schedule *s = sch_create(ctx, 1, &B);
  sch_stage *st = sch_stage_of(s, B);
  ck_assert_int_ne(sch_pragma(st, sch_axis(st, 0), "transpose_block", ir_int(ctx, 4)), 0);
  tu_assert_contains(tec_ctx_error(ctx), "transpose_block on loop 'k' of stage 'B' takes no value");
  tec_ctx_clear_error(ctx);
  /* zips: vectors of one type, an even lane count */
  const ir_expr *v4 = ir_ramp(ir_int(ctx, 0), ir_int(ctx, 1), 4);
  const ir_expr *v3 = ir_ramp(ir_int(ctx, 0), ir_int(ctx, 1), 3);
  const ir_expr *f4 = ir_broadcast(ir_float(ctx, 1.0), 4);
  ck_assert_ptr_nonnull(ir_zip(v4, v4, 0));
  ck_assert_ptr_null(ir_zip(v3, v3, 1));
  tu_assert_contains(tec_ctx_error(ctx), "even number of lanes");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_zip(v4, f4, 0));
  tu_assert_contains(tec_ctx_error(ctx), "ir_zip (zip_lo): operands are");
  ck_assert_ptr_null(ir_zip(ir_int(ctx, 1), ir_int(ctx, 2), 0));
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(ir_call(ctx, IR_INTRIN_ZIP_HI, 1, (const ir_expr *[]){v4}));
  tu_assert_contains(tec_ctx_error(ctx), "zip_hi takes 2 arguments");
  tec_ctx_clear_error(ctx);
  /* the pragma on a loop whose body is a loop (j not vectorized): a note, right numbers */
  sch_iter *ko, *ki, *jo, *ji;
  OK(ctx, sch_split(st, sch_axis(st, 0), 4, &ko, &ki));
  OK(ctx, sch_split(st, sch_axis(st, 1), 4, &jo, &ji));
  OK(ctx, sch_reorder(st, 4, (sch_iter *[]){ko, jo, ki, ji}));
  OK(ctx, sch_pragma(st, ki, "transpose_block", NULL));
  tp t = {ctx, A, B, s};
  lower_func *f = check(&t, 8, 8, PLAIN);
  ck_assert_int_eq(f->nnotes, 1);
  tu_assert_contains(f->notes[0], "its body is not one store of a 4-lane vector");
  tec_ctx_free(ctx);
}
END_TEST

/* the copy's assembly: with the pragma shuffles and no gather; without it (unrolled, the
 * baseline) the strided vector is built element by element or gathered */
static char *emit(int L, int pragma, const char *target) {
  tp t = make(4 * L, 4 * L, L, PLAIN, pragma);
  lower_func *f = tec_lower(t.s, "tr", 2, (te_tensor *[]){t.A, t.B});
  char *as = tu_emit_text(t.ctx, f, target, TEC_EMIT_ASM);
  tec_ctx_free(t.ctx);
  return as;
}

START_TEST(assembly_shuffles) {
#if defined(__x86_64__)
  int L = host_lanes();
  char *as = emit(L, 1, NULL), *base = emit(L, 0, NULL);
  assert_not_contains(as, "gather");
  assert_not_contains(as, "vpinsrd");
  assert_not_contains(as, "vinsertps");
  ck_assert_msg(strstr(as, "vpermt2ps") || strstr(as, "vpermi2ps") || strstr(as, "vunpcklps") ||
                    strstr(as, "vunpckhps") || strstr(as, "vshuff") || strstr(as, "vperm2f128"),
                "no shuffle in\n%.3000s", as);
  ck_assert_msg(strstr(base, "gather") || strstr(base, "vinsertps"), "baseline:\n%.3000s", base);
  free(as), free(base);
#endif
  /* AVX2 (8 lanes, 8 x 8 blocks): shuffles, no gather or insert (read on the host only) */
  const char *avx2 = "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell";
  char *h = tu_emulated() ? NULL : emit(8, 1, avx2), *hb = h ? emit(8, 0, avx2) : NULL;
  if (h) {
    assert_not_contains(h, "gather");
    assert_not_contains(h, "vinsertps");
    ck_assert_msg(strstr(h, "vunpcklps") || strstr(h, "vperm2f128") || strstr(h, "vpermps") ||
                      strstr(h, "vshufps") || strstr(h, "vinsertf128"),
                  "no shuffle in\n%.3000s", h);
    ck_assert_msg(strstr(hb, "gather") || strstr(hb, "vinsertps"), "baseline:\n%.3000s", hb);
  }
  free(h), free(hb);
  /* AArch64 (NEON, 4 lanes): zip1 / zip2, no loads of single lanes */
  const char *arm = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon";
  char *a = emit(4, 1, arm), *b = emit(4, 0, arm);
  tu_assert_contains(a, "zip1\t");
  tu_assert_contains(a, "zip2\t");
  assert_not_contains(a, ".s }["); /* ld1 { v2.s }[1], [x15]: one lane loaded */
  assert_not_contains(a, ".s[");    /* mov v2.s[1], w8 / ins: one lane inserted */
  ck_assert_msg(strstr(b, ".s }[") || strstr(b, ".s["), "baseline:\n%.3000s", b);
  free(a), free(b);
}
END_TEST

/* the templates' transposed packs: numbers against C, and the pack is a transpose_block */
START_TEST(templates) {
  int L = host_lanes();
  tec_ctx *ctx = tec_ctx_new();
  topi_batch_matmul bp = {.batch = 2, .m = 8, .n = 128, .k = 64, .transpose_b = 1};
  topi_dense dp = {.m = 8, .n = 128, .k = 64, .b_transposed = 1};
  for (int which = 0; which < 2; which++) {
    const char *name = which ? "dense" : "batch_matmul";
    const void *p = which ? (const void *)&dp : (const void *)&bp;
    topi_decl d;
    tune_space sp;
    topi_op op;
    OK(ctx, topi_declare(ctx, name, p, &d));
    OK(ctx, topi_space_of(ctx, name, p, NULL, &sp));
    OK(ctx, topi_schedule(&d, sp.default_config, NULL, &op));
    lower_func *f = tec_lower(op.sched, "g", op.nargs, op.args);
    ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
    ck_assert_int_eq(f->nnotes, 0);
    ck_assert_int_eq(zips(f), L * log2i(L));
    tec_module *m = tec_build(ctx, 1, &f, NULL);
    ck_assert_msg(m != NULL, "%s", tec_ctx_error(ctx));
    int64_t nb = which ? 1 : 2, sa[3] = {nb, 8, 64}, sb[3] = {nb, 128, 64}, so[3] = {nb, 8, 128};
    int nd = which ? 2 : 3, off = which ? 1 : 0;
    DLTensor a = tu_rand_f32(nd, sa + off, 3), b = tu_rand_f32(nd, sb + off, 4),
             o = tu_zeros(TEC_F32, nd, so + off);
    ck_assert_msg(tec_module_run(m, "g", 3, (DLTensor *[]){&a, &b, &o}) == 0, "%s",
                  tec_rt_last_error());
    const float *x = tu_f32(&a), *y = tu_f32(&b), *z = tu_f32(&o);
    for (int64_t bb = 0; bb < nb; bb++)
      for (int64_t i = 0; i < 8; i++)
        for (int64_t j = 0; j < 128; j++) {
          double s = 0;
          for (int64_t kk = 0; kk < 64; kk++)
            s += (double)x[(bb * 8 + i) * 64 + kk] * y[(bb * 128 + j) * 64 + kk];
          double got = z[(bb * 8 + i) * 128 + j];
          ck_assert_msg(fabs(got - s) < 1e-4 * (1 + fabs(s)), "%s: out[%lld, %lld, %lld] = %g, want %g",
                        name, (long long)bb, (long long)i, (long long)j, got, s);
        }
    tec_dl_free(&a), tec_dl_free(&b), tec_dl_free(&o);
  }
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("transpose_block");
  TCase *tc = tcase_create("transpose_block");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, blocks_match_c);
  tcase_add_test(tc, remainders_fall_back);
  tcase_add_test(tc, refused_with_a_note);
  tcase_add_test(tc, bad_input);
  tcase_add_test(tc, assembly_shuffles);
  tcase_add_test(tc, templates);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

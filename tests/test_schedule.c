/* test_schedule.c — schedule primitives through the lowered program they produce
 * (tec_lower_str), then one test per misuse asserting the exact message, and the argument
 * errors of tec_lower. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
/* white-box: the split and fuse relations a primitive records are checked directly */
#include "schedule/internal.h"


/* ---- programs ----
 *   A[64, 32] (input);  B[i, j] = A[i, j] + 1;  C[i, j] = B[i, j] * 2
 *   MA[8, 16], MB[16, 4];  M[i, j] = sum(MA[i, k] * MB[k, j], axis=[k])
 *   X[4, 8, 16];  Y[i, j, k] = X[i, j, k] + 1 */
static tec_ctx *ctx;
static te_tensor *A, *B, *C, *MA, *MB, *M, *X, *Y;
static sch_schedule *sB, *sC, *sM, *sY;
static sch_stage *stB, *stC, *stM, *stY, *stCB; /* stCB: stage B in C's schedule */

static const ir_expr *plus_one(tec_ctx *c, const ir_expr *const *idx, void *u) {
  te_tensor *in = u;
  return ir_add(te_read(in, in->ndim, idx), ir_float(c, 1));
}
static const ir_expr *times_two(tec_ctx *c, const ir_expr *const *idx, void *u) {
  te_tensor *in = u;
  return ir_mul(te_read(in, in->ndim, idx), ir_float(c, 2));
}
static const ir_expr *matmul(tec_ctx *c, const ir_expr *const *idx, void *u) {
  const ir_expr *k = te_reduce_axis_n(c, "k", 16);
  return te_sum(ir_mul(TE_AT(MA, idx[0], k), TE_AT(MB, k, idx[1])), 1, &k, NULL);
}

static te_tensor *compute(const char *name, int ndim, const ir_expr *const *shape, te_body_fn fn,
                          void *user) {
  te_tensor *t = te_compute(ctx, &(te_compute_decl){.name = name, .ndim = ndim, .shape = shape,
                                                    .body = fn, .user = user});
  ck_assert_msg(t != NULL, "%s: %s", name, tec_ctx_error(ctx));
  return t;
}

static void setup(void) {
  ctx = tec_ctx_new();
  A = te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 64, 32));
  B = compute("B", 2, A->shape, plus_one, A);
  C = compute("C", 2, A->shape, times_two, B);
  MA = te_placeholder(ctx, "MA", TEC_F32, 2, TE_SHAPE(ctx, 8, 16));
  MB = te_placeholder(ctx, "MB", TEC_F32, 2, TE_SHAPE(ctx, 16, 4));
  M = compute("M", 2, TE_SHAPE(ctx, 8, 4), matmul, NULL);
  X = te_placeholder(ctx, "X", TEC_F32, 3, TE_SHAPE(ctx, 4, 8, 16));
  Y = compute("Y", 3, X->shape, plus_one, X);
  sB = sch_create(ctx, 1, &B);
  sC = sch_create(ctx, 1, &C);
  sM = sch_create(ctx, 1, &M);
  sY = sch_create(ctx, 1, &Y);
  ck_assert_msg(sB && sC && sM && sY, "%s", tec_ctx_error(ctx));
  stB = sch_stage_of(sB, B);
  stC = sch_stage_of(sC, C);
  stCB = sch_stage_of(sC, B);
  stM = sch_stage_of(sM, M);
  stY = sch_stage_of(sY, Y);
  ck_assert_msg(stB && stC && stCB && stM && stY, "%s", tec_ctx_error(ctx));
}
static void teardown(void) {
  tec_ctx_free(ctx);
  ctx = NULL;
}

/* The lowered program of a schedule, failing the test on a lowering error. */
static const char *lowered(sch_schedule *s, int nargs, te_tensor *const *args) {
  lower_func *f = tec_lower(s, "f", nargs, args);
  ck_assert_msg(f != NULL, "lower: %s", tec_ctx_error(ctx));
  return tec_lower_str(f);
}
static const char *lowered_B(void) { return lowered(sB, 2, (te_tensor *const[]){A, B}); }

/* The program right after the first simplify pass (from the TEC_DUMP_IR dump): guards the
 * simplifier cannot prove are still there as `if`s; later passes (loop partitioning) may turn
 * them into loop bounds, so the guard tests look here. */
static const char *after_simplify(sch_schedule *s, int nargs, te_tensor *const *args) {
  setenv("TEC_DUMP_IR", "simplify", 1);
  FILE *tmp = tmpfile();
  ck_assert_ptr_nonnull(tmp);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  dup2(fileno(tmp), STDERR_FILENO);
  lower_func *f = tec_lower(s, "f", nargs, args);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  unsetenv("TEC_DUMP_IR");
  ck_assert_msg(f != NULL, "lower: %s", tec_ctx_error(ctx));
  long len = ftell(tmp);
  rewind(tmp);
  char *text = tec_ctx_alloc(ctx, (size_t)len + 1);
  ck_assert_int_eq(fread(text, 1, (size_t)len, tmp), (size_t)len);
  text[len] = '\0';
  fclose(tmp);
  const char *h = "// ---- after simplify ----\n";
  char *p = strstr(text, h);
  ck_assert_msg(p != NULL, "no dump after simplify in\n%s", text);
  p += strlen(h);
  char *end = strstr(p, "// ---- after ");
  if (end) *end = '\0';
  return p;
}
static const char *after_simplify_B(void) {
  return after_simplify(sB, 2, (te_tensor *const[]){A, B});
}
static const char *lowered_M(void) { return lowered(sM, 3, (te_tensor *const[]){MA, MB, M}); }

/* ======== primitives, through the lowered program ======== */

START_TEST(no_schedule) {
  ck_assert_str_eq(sch_stage_str(stB), "i, j");
  ck_assert_str_eq(lowered_B(),
                   "func f(A: float32[64, 32], B: float32[64, 32]) {\n"
                   "  produce B {\n"
                   "    for (i, 0, 64) {\n"
                   "      for (j, 0, 32) {\n"
                   "        B[((i*32) + j)] = (A[((i*32) + j)] + 1f)\n"
                   "      }\n"
                   "    }\n"
                   "  }\n"
                   "}\n");
}
END_TEST

START_TEST(split_dividing) {
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 0), 8, &o, &in), 0);
  ck_assert_str_eq(o->name, "i.outer");
  ck_assert_str_eq(in->name, "i.inner");
  ck_assert_str_eq(sch_stage_str(stB), "i.outer, i.inner, j");
  ck_assert(sch_axis(stB, 0)->dead);
  ck_assert_int_eq(stB->nrel, 1);
  ck_assert_int_eq(stB->rel[0].kind, SCH_REL_SPLIT);
  /* 8 divides 64: the simplifier proves the guard and drops it */
  ck_assert_str_eq(lowered_B(),
                   "func f(A: float32[64, 32], B: float32[64, 32]) {\n"
                   "  produce B {\n"
                   "    for (i.outer, 0, 8) {\n"
                   "      for (i.inner, 0, 8) {\n"
                   "        for (j, 0, 32) {\n"
                   "          B[(((i.outer*256) + (i.inner*32)) + j)] = "
                   "(A[(((i.outer*256) + (i.inner*32)) + j)] + 1f)\n"
                   "        }\n"
                   "      }\n"
                   "    }\n"
                   "  }\n"
                   "}\n");
}
END_TEST

START_TEST(split_non_dividing) {
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 0), 10, &o, &in), 0);
  const char *t = after_simplify_B();
  tu_assert_contains(t, "for (i.outer, 0, 7) {");
  tu_assert_contains(t, "for (i.inner, 0, 10) {");
  tu_assert_contains(t, "if ((((i.outer*10) + i.inner) < 64)) {");
  /* the guard protects the store */
  const char *g = strstr(t, "if (");
  ck_assert_ptr_nonnull(g);
  tu_assert_contains(g, "B[");
  /* the final program still has the inner loop of 10 */
  tu_assert_contains(lowered_B(), "for (i.inner, 0, 10) {");
}
END_TEST

START_TEST(split_larger_than_extent) {
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 0), 128, &o, &in), 0);
  const char *t = after_simplify_B();
  /* one outer iteration: the loop disappears, the guard stays */
  assert_not_contains(t, "i.outer");
  tu_assert_contains(t, "for (i.inner, 0, 128) {");
  tu_assert_contains(t, "if ((i.inner < 64)) {");
  assert_not_contains(lowered_B(), "i.outer");
}
END_TEST

/* a factor past 65536 is clamped to the extent (issue #38): no loop of the factor's length */
START_TEST(split_far_larger_than_extent) {
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 0), 65537, &o, &in), 0);
  const char *t = after_simplify_B();
  assert_not_contains(t, "i.outer");
  tu_assert_contains(t, "for (i.inner, 0, 64) {");
  assert_not_contains(t, "if (");
  /* the trace keeps the factor given */
  tu_assert_contains(sch_trace_json(ctx, sch_get_trace(sB)), "\"factor\": 65537");
}
END_TEST

START_TEST(split_twice) {
  sch_iter *o, *in, *io, *ii;
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 0), 16, &o, &in), 0);
  ck_assert_int_eq(sch_split(stB, in, 4, &io, &ii), 0);
  ck_assert_str_eq(sch_stage_str(stB), "i.outer, i.inner.outer, i.inner.inner, j");
  const char *t = lowered_B();
  tu_assert_contains(t, "for (i.outer, 0, 4) {");
  tu_assert_contains(t, "for (i.inner.outer, 0, 4) {");
  tu_assert_contains(t, "for (i.inner.inner, 0, 4) {");
  tu_assert_contains(t, "B[((((i.outer*512) + (i.inner.outer*128)) + (i.inner.inner*32)) + j)]");
  assert_not_contains(t, "if (");
}
END_TEST

START_TEST(split_nparts) {
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split_nparts(stB, sch_axis(stB, 1), 4, &o, &in), 0);
  ck_assert_str_eq(sch_stage_str(stB), "i, j.outer, j.inner");
  ck_assert_ptr_null(stB->rel[0].factor);
  const char *t = lowered_B();
  tu_assert_contains(t, "for (j.outer, 0, 4) {");
  tu_assert_contains(t, "for (j.inner, 0, 8) {");
  tu_assert_contains(t, "B[(((i*32) + (j.outer*8)) + j.inner)]");
  assert_not_contains(t, "if (");
}
END_TEST

START_TEST(split_nparts_non_dividing) {
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split_nparts(stB, sch_axis(stB, 1), 3, &o, &in), 0);
  const char *t = after_simplify_B();
  tu_assert_contains(t, "for (j.outer, 0, 3) {");
  tu_assert_contains(t, "for (j.inner, 0, 11) {"); /* ceil(32 / 3) */
  tu_assert_contains(t, "if ((((j.outer*11) + j.inner) < 32)) {");
}
END_TEST

START_TEST(fuse) {
  sch_iter *fz;
  ck_assert_int_eq(sch_fuse(stB, sch_axis(stB, 0), sch_axis(stB, 1), &fz), 0);
  ck_assert_str_eq(fz->name, "i.j.fused");
  ck_assert_str_eq(sch_stage_str(stB), "i.j.fused");
  ck_assert_ptr_eq(sch_leaf_named(stB, "i.j.fused"), fz);
  ck_assert_str_eq(lowered_B(),
                   "func f(A: float32[64, 32], B: float32[64, 32]) {\n"
                   "  produce B {\n"
                   "    for (i.j.fused, 0, 2048) {\n"
                   "      B[i.j.fused] = (A[i.j.fused] + 1f)\n"
                   "    }\n"
                   "  }\n"
                   "}\n");
}
END_TEST

START_TEST(fuse_then_split) {
  sch_iter *fz, *o, *in;
  ck_assert_int_eq(sch_fuse(stB, sch_axis(stB, 0), sch_axis(stB, 1), &fz), 0);
  ck_assert_int_eq(sch_split(stB, fz, 100, &o, &in), 0);
  ck_assert_str_eq(sch_stage_str(stB), "i.j.fused.outer, i.j.fused.inner");
  const char *t = after_simplify_B();
  tu_assert_contains(t, "for (i.j.fused.outer, 0, 21) {");
  tu_assert_contains(t, "for (i.j.fused.inner, 0, 100) {");
  tu_assert_contains(t, "if ((((i.j.fused.outer*100) + i.j.fused.inner) < 2048)) {");
  tu_assert_contains(lowered_B(), "for (i.j.fused.inner, 0, 100) {");
}
END_TEST

START_TEST(split_then_fuse) {
  sch_iter *o, *in, *fz;
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 0), 8, &o, &in), 0);
  ck_assert_int_eq(sch_fuse(stB, in, sch_axis(stB, 1), &fz), 0);
  ck_assert_str_eq(sch_stage_str(stB), "i.outer, i.inner.j.fused");
  const char *t = lowered_B();
  tu_assert_contains(t, "for (i.outer, 0, 8) {");
  tu_assert_contains(t, "for (i.inner.j.fused, 0, 256) {");
  tu_assert_contains(t, "B[((i.outer*256) + i.inner.j.fused)] = (A[((i.outer*256) + i.inner.j.fused)] + 1f)");
}
END_TEST

START_TEST(reorder) {
  ck_assert_int_eq(sch_reorder(stB, 2, (sch_iter *const[]){sch_axis(stB, 1), sch_axis(stB, 0)}), 0);
  ck_assert_str_eq(sch_stage_str(stB), "j, i");
  const char *t = lowered_B();
  tu_assert_contains(t, "    for (j, 0, 32) {\n"
                        "      for (i, 0, 64) {\n"
                        "        B[((i*32) + j)] = (A[((i*32) + j)] + 1f)\n");
  /* a partial reorder keeps the other loops where they are */
  ck_assert_int_eq(sch_reorder(stY, 2, (sch_iter *const[]){sch_axis(stY, 2), sch_axis(stY, 0)}), 0);
  ck_assert_str_eq(sch_stage_str(stY), "k, j, i");
  ck_assert_int_eq(sch_reorder(stY, 1, (sch_iter *const[]){sch_axis(stY, 1)}), 0);
  ck_assert_str_eq(sch_stage_str(stY), "k, j, i");
  ck_assert_int_eq(sch_reorder(stY, 2, (sch_iter *const[]){sch_axis(stY, 1), sch_axis(stY, 2)}), 0);
  ck_assert_str_eq(sch_stage_str(stY), "j, k, i");
  t = lowered(sY, 2, (te_tensor *const[]){X, Y});
  tu_assert_contains(t, "for (j, 0, 8) {\n      for (k, 0, 16) {\n        for (i, 0, 4) {");
  tu_assert_contains(t, "Y[(((i*128) + (j*16)) + k)]");
}
END_TEST

START_TEST(tile) {
  sch_iter *xo, *yo, *xi, *yi;
  ck_assert_int_eq(sch_tile(stB, sch_axis(stB, 0), sch_axis(stB, 1), 8, 4, &xo, &yo, &xi, &yi), 0);
  ck_assert_str_eq(sch_stage_str(stB), "i.outer, j.outer, i.inner, j.inner");
  ck_assert_str_eq(yo->name, "j.outer");
  ck_assert_str_eq(xi->name, "i.inner");
  const char *t = lowered_B();
  tu_assert_contains(t, "    for (i.outer, 0, 8) {\n"
                        "      for (j.outer, 0, 8) {\n"
                        "        for (i.inner, 0, 8) {\n"
                        "          for (j.inner, 0, 4) {\n");
  tu_assert_contains(t, "B[((((i.outer*256) + (i.inner*32)) + (j.outer*4)) + j.inner)]");
  assert_not_contains(t, "if (");
}
END_TEST

START_TEST(tile_non_dividing) {
  sch_iter *xo, *yo, *xi, *yi;
  ck_assert_int_eq(sch_tile(stB, sch_axis(stB, 0), sch_axis(stB, 1), 10, 3, &xo, &yo, &xi, &yi), 0);
  const char *t = after_simplify_B();
  tu_assert_contains(t, "for (i.outer, 0, 7) {");
  tu_assert_contains(t, "for (j.outer, 0, 11) {");
  /* both guards, one condition */
  tu_assert_contains(t, "(((j.outer*3) + j.inner) < 32)");
  tu_assert_contains(t, "(((i.outer*10) + i.inner) < 64)");
  tu_assert_contains(t, " && ");
}
END_TEST

START_TEST(reduction_default) {
  ck_assert_str_eq(sch_stage_str(stM), "i, j, k");
  ck_assert_int_eq(sch_reduce_axis(stM, 0)->kind, SCH_ITER_REDUCE);
  ck_assert_str_eq(lowered_M(),
                   "func f(MA: float32[8, 16], MB: float32[16, 4], M: float32[8, 4]) {\n"
                   "  produce M {\n"
                   "    for (i, 0, 8) {\n"
                   "      for (j, 0, 4) {\n"
                   "        M[((i*4) + j)] = 0f\n"
                   "        for (k, 0, 16) {\n"
                   "          M[((i*4) + j)] = (M[((i*4) + j)] + (MA[((i*16) + k)]*MB[((k*4) + j)]))\n"
                   "        }\n"
                   "      }\n"
                   "    }\n"
                   "  }\n"
                   "}\n");
}
END_TEST

START_TEST(reduction_split_reorder) {
  sch_iter *ko, *ki;
  ck_assert_int_eq(sch_split(stM, sch_reduce_axis(stM, 0), 4, &ko, &ki), 0);
  ck_assert_int_eq(ko->kind, SCH_ITER_REDUCE);
  ck_assert_int_eq(ki->kind, SCH_ITER_REDUCE);
  ck_assert_int_eq(sch_reorder(stM, 3, (sch_iter *const[]){ko, sch_axis(stM, 0), ki}), 0);
  ck_assert_str_eq(sch_stage_str(stM), "k.outer, j, i, k.inner");
  /* the init nest covers the data loops inside the first reduce loop, before it */
  ck_assert_str_eq(lowered_M(),
                   "func f(MA: float32[8, 16], MB: float32[16, 4], M: float32[8, 4]) {\n"
                   "  produce M {\n"
                   "    for (j, 0, 4) {\n"
                   "      for (i, 0, 8) {\n"
                   "        M[((i*4) + j)] = 0f\n"
                   "      }\n"
                   "    }\n"
                   "    for (k.outer, 0, 4) {\n"
                   "      for (j, 0, 4) {\n"
                   "        for (i, 0, 8) {\n"
                   "          for (k.inner, 0, 4) {\n"
                   "            M[((i*4) + j)] = (M[((i*4) + j)] + (MA[(((i*16) + (k.outer*4)) + "
                   "k.inner)]*MB[(((k.outer*16) + (k.inner*4)) + j)]))\n"
                   "          }\n"
                   "        }\n"
                   "      }\n"
                   "    }\n"
                   "  }\n"
                   "}\n");
}
END_TEST

START_TEST(reduction_k_between_data) {
  ck_assert_int_eq(sch_reorder(stM, 2, (sch_iter *const[]){sch_reduce_axis(stM, 0), sch_axis(stM, 1)}), 0);
  ck_assert_str_eq(sch_stage_str(stM), "i, k, j");
  const char *t = lowered_M();
  /* init over j inside i, then the k loop */
  tu_assert_contains(t, "    for (i, 0, 8) {\n"
                        "      for (j, 0, 4) {\n"
                        "        M[((i*4) + j)] = 0f\n"
                        "      }\n"
                        "      for (k, 0, 16) {\n"
                        "        for (j, 0, 4) {\n"
                        "          M[((i*4) + j)] = (M[((i*4) + j)] + ");
}
END_TEST

START_TEST(reduction_split_non_dividing) {
  sch_iter *ko, *ki;
  ck_assert_int_eq(sch_split(stM, sch_reduce_axis(stM, 0), 5, &ko, &ki), 0);
  const char *t = after_simplify(sM, 3, (te_tensor *const[]){MA, MB, M});
  /* the init is not guarded by the reduce guard; the update is */
  tu_assert_contains(t, "      M[((i*4) + j)] = 0f\n"
                        "      for (k.outer, 0, 4) {\n"
                        "        for (k.inner, 0, 5) {\n"
                        "          if ((((k.outer*5) + k.inner) < 16)) {\n"
                        "            M[((i*4) + j)] = (M[((i*4) + j)] + ");
  /* the final program initializes once */
  t = lowered_M();
  ck_assert_msg(strstr(t, "= 0f\n") && !strstr(strstr(t, "= 0f\n") + 1, "= 0f\n"),
                "one init expected:\n%s", t);
}
END_TEST

START_TEST(symbolic_size) {
  tec_ctx *c = ctx;
  const ir_expr *n = te_size_var(c, "n");
  te_tensor *P = te_placeholder(c, "P", TEC_F32, 1, &n);
  te_tensor *Q = compute("Q", 1, P->shape, times_two, P);
  te_tensor *R = compute("R", 1, P->shape, plus_one, Q);
  sch_schedule *s = sch_create(c, 1, &R);
  sch_stage *st = sch_stage_of(s, R);
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split(st, sch_axis(st, 0), 4, &o, &in), 0);
  lower_func *f = tec_lower(s, "f", 2, (te_tensor *const[]){P, R});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(c));
  ck_assert_int_eq(f->nsize, 1);
  ck_assert_ptr_eq(f->size_vars[0], n);
  const char *t = tec_lower_str(f);
  tu_assert_contains(t, "func f(P: float32[n], R: float32[n]) {\n");
  tu_assert_contains(t, "allocate Q[float32 * n] {");
  tu_assert_contains(t, "for (Q.i, 0, n) {");
  tu_assert_contains(t, "for (i.outer, ");
  /* n is unknown: the guard cannot be dropped by the simplifier */
  t = after_simplify(s, 2, (te_tensor *const[]){P, R});
  tu_assert_contains(t, "for (i.outer, 0, ");
  tu_assert_contains(t, "for (i.inner, 0, 4) {");
  tu_assert_contains(t, "if ((((i.outer*4) + i.inner) < n)) {");
}
END_TEST

START_TEST(two_outputs) {
  sch_schedule *s = sch_create(ctx, 2, (te_tensor *const[]){B, C});
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(s->nstage, 3);
  ck_assert(sch_stage_of(s, B)->is_output && sch_stage_of(s, C)->is_output);
  const char *t = lowered(s, 3, (te_tensor *const[]){A, B, C});
  assert_not_contains(t, "allocate"); /* B is an argument, not an intermediate */
  const char *pb = strstr(t, "produce B {"), *pc = strstr(t, "produce C {");
  ck_assert_msg(pb && pc && pb < pc, "B must be produced before C:\n%s", t);
}
END_TEST

/* ======== misuse: one test each, the message asserted as text ======== */

START_TEST(err_axis_of_other_stage) {
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split(stC, sch_axis(stCB, 0), 8, &o, &in), -1);
  assert_err(ctx, "split: axis 'i' does not belong to stage 'C' (it is an axis of stage 'B'); "
                  "use an axis of 'C': i, j");
  ck_assert_ptr_null(o);
  ck_assert_ptr_null(in);
  ck_assert_str_eq(sch_stage_str(stC), "i, j");
  ck_assert_str_eq(sch_stage_str(stCB), "i, j");
}
END_TEST

START_TEST(err_axis_of_other_schedule) {
  /* the same tensor in another schedule is another stage */
  sch_iter *fz;
  ck_assert_int_eq(sch_fuse(stCB, sch_axis(stB, 0), sch_axis(stB, 1), &fz), -1);
  assert_err(ctx, "fuse: axis 'i' does not belong to stage 'B' (it is an axis of stage 'B' of "
                  "another schedule); use an axis of 'B': i, j");
  ck_assert_ptr_null(fz);
}
END_TEST

START_TEST(err_already_split) {
  sch_iter *o, *in, *o2, *in2;
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 0), 8, &o, &in), 0);
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 0), 4, &o2, &in2), -1);
  assert_err(ctx, "split: axis 'i' of stage 'B' was already split or fused away; the current "
                  "loops are: i.outer, i.inner, j");
  ck_assert_str_eq(sch_stage_str(stB), "i.outer, i.inner, j");
}
END_TEST

START_TEST(err_already_fused) {
  sch_iter *fz;
  ck_assert_int_eq(sch_fuse(stB, sch_axis(stB, 0), sch_axis(stB, 1), &fz), 0);
  ck_assert_int_eq(sch_reorder(stB, 1, (sch_iter *const[]){sch_axis(stB, 1)}), -1);
  assert_err(ctx, "reorder: axis 'j' of stage 'B' was already split or fused away; the current "
                  "loops are: i.j.fused");
}
END_TEST

START_TEST(err_reorder_twice) {
  sch_iter *i = sch_axis(stB, 0);
  ck_assert_int_eq(sch_reorder(stB, 2, (sch_iter *const[]){i, i}), -1);
  assert_err(ctx, "reorder: axis 'i' of stage 'B' is listed twice; list each loop once");
  ck_assert_str_eq(sch_stage_str(stB), "i, j");
}
END_TEST

START_TEST(err_reorder_too_many) {
  sch_iter *i = sch_axis(stB, 0), *j = sch_axis(stB, 1);
  ck_assert_int_eq(sch_reorder(stB, 3, (sch_iter *const[]){j, i, j}), -1);
  assert_err(ctx, "reorder: stage 'B' has 2 loops, 3 axes given");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_reorder(stB, 0, NULL), -1);
  assert_err(ctx, "reorder: stage 'B': give at least one axis");
}
END_TEST

START_TEST(err_factor_nonpositive) {
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 0), 0, &o, &in), -1);
  assert_err(ctx, "split: factor 0 for axis 'i' of stage 'B'; it must be >= 1");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 1), -4, &o, &in), -1);
  assert_err(ctx, "split: factor -4 for axis 'j' of stage 'B'; it must be >= 1");
  ck_assert_str_eq(sch_stage_str(stB), "i, j");
  ck_assert_int_eq(stB->nrel, 0);
}
END_TEST

START_TEST(err_nparts_nonpositive) {
  sch_iter *o, *in;
  ck_assert_int_eq(sch_split_nparts(stB, sch_axis(stB, 1), 0, &o, &in), -1);
  assert_err(ctx, "split_nparts: nparts 0 for axis 'j' of stage 'B'; it must be >= 1");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_split_nparts(stB, sch_axis(stB, 1), -2, &o, &in), -1);
  assert_err(ctx, "split_nparts: nparts -2 for axis 'j' of stage 'B'; it must be >= 1");
  ck_assert_str_eq(sch_stage_str(stB), "i, j");
}
END_TEST

START_TEST(err_fuse_not_adjacent) {
  sch_iter *fz;
  ck_assert_int_eq(sch_fuse(stY, sch_axis(stY, 0), sch_axis(stY, 2), &fz), -1);
  assert_err(ctx, "fuse: axes 'i' and 'k' of stage 'Y' are not adjacent (outer immediately "
                  "before inner); the loops are: i, j, k. Reorder them first");
  tec_ctx_clear_error(ctx);
  /* adjacent but in the wrong order */
  ck_assert_int_eq(sch_fuse(stY, sch_axis(stY, 1), sch_axis(stY, 0), &fz), -1);
  assert_err(ctx, "fuse: axes 'j' and 'i' of stage 'Y' are not adjacent (outer immediately "
                  "before inner); the loops are: i, j, k. Reorder them first");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_fuse(stY, sch_axis(stY, 1), sch_axis(stY, 1), &fz), -1);
  assert_err(ctx, "fuse: cannot fuse axis 'j' of stage 'Y' with itself");
  ck_assert_str_eq(sch_stage_str(stY), "i, j, k");
}
END_TEST

/* (refused until issue #13 item 6; lowering and numbers: test_shapes.c) */
START_TEST(err_fuse_data_reduce) {
  sch_iter *fz;
  OK(ctx, sch_fuse(stM, sch_axis(stM, 1), sch_reduce_axis(stM, 0), &fz));
  ck_assert_int_eq(fz->kind, SCH_ITER_REDUCE); /* a reduce loop */
  ck_assert_str_eq(sch_stage_str(stM), "i, j.k.fused");
}
END_TEST

START_TEST(err_tile_same_axis) {
  sch_iter *xo, *yo, *xi, *yi;
  sch_iter *i = sch_axis(stB, 0);
  ck_assert_int_eq(sch_tile(stB, i, i, 8, 8, &xo, &yo, &xi, &yi), -1);
  assert_err(ctx, "tile: x and y are the same axis 'i' of stage 'B'; tile two different axes");
  ck_assert_str_eq(sch_stage_str(stB), "i, j");
}
END_TEST

START_TEST(err_tile_factor) {
  sch_iter *xo, *yo, *xi, *yi;
  ck_assert_int_eq(sch_tile(stB, sch_axis(stB, 0), sch_axis(stB, 1), 0, 4, &xo, &yo, &xi, &yi), -1);
  assert_err(ctx, "tile: factors 0 and 4 for stage 'B'; both must be >= 1");
  ck_assert_str_eq(sch_stage_str(stB), "i, j");
  ck_assert_int_eq(stB->nrel, 0);
}
END_TEST

START_TEST(err_axis_out_of_range) {
  ck_assert_ptr_null(sch_axis(stB, 2));
  assert_err(ctx, "sch_axis: stage 'B' has 2 axes (0 to 1), asked for 2");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_axis(stB, -1));
  assert_err(ctx, "sch_axis: stage 'B' has 2 axes (0 to 1), asked for -1");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_reduce_axis(stB, 0));
  assert_err(ctx, "sch_reduce_axis: stage 'B' has 0 reduce axes, asked for 0");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_reduce_axis(stM, 1));
  assert_err(ctx, "sch_reduce_axis: stage 'M' has 1 reduce axes, asked for 1");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_leaf_named(stB, "i.outer"));
  assert_err(ctx, "sch_leaf_named: stage 'B' has no loop 'i.outer' (loops: i, j)");
}
END_TEST

START_TEST(err_stage_of_placeholder) {
  ck_assert_ptr_null(sch_stage_of(sB, A));
  assert_err(ctx, "sch_stage_of: 'A' is a placeholder (an input); it has no loops to schedule");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_stage_of(sB, C));
  assert_err(ctx, "sch_stage_of: tensor 'C' is not computed by this schedule (it is not "
                  "reachable from its outputs)");
}
END_TEST

START_TEST(err_create_placeholder_output) {
  ck_assert_ptr_null(sch_create(ctx, 1, &A));
  assert_err(ctx, "sch_create: output 0 ('A') is a placeholder; outputs must be compute ops");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_create(ctx, 2, (te_tensor *const[]){B, A}));
  assert_err(ctx, "sch_create: output 1 ('A') is a placeholder; outputs must be compute ops");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_create(ctx, 2, (te_tensor *const[]){B, NULL}));
  assert_err(ctx, "sch_create: output 1 is NULL");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(sch_create(ctx, 0, NULL));
  assert_err(ctx, "sch_create: needs at least one output tensor");
}
END_TEST

START_TEST(err_null_iters) {
  sch_iter *o, *in, *fz;
  ck_assert_int_eq(sch_split(stB, NULL, 8, &o, &in), -1);
  assert_err(ctx, "split: the axis given for stage 'B' is NULL");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_fuse(stB, sch_axis(stB, 0), NULL, &fz), -1);
  assert_err(ctx, "fuse: the axis given for stage 'B' is NULL");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_reorder(stB, 2, (sch_iter *const[]){sch_axis(stB, 1), NULL}), -1);
  assert_err(ctx, "reorder: the axis given for stage 'B' is NULL");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_tile(stB, NULL, sch_axis(stB, 1), 4, 4, NULL, NULL, NULL, NULL), -1);
  assert_err(ctx, "tile: the axis given for stage 'B' is NULL");
  tec_ctx_clear_error(ctx);
  /* a NULL from an earlier failure propagates: the first message stays */
  ck_assert_int_eq(sch_split(stB, sch_axis(stB, 5), 8, &o, &in), -1);
  assert_err(ctx, "sch_axis: stage 'B' has 2 axes (0 to 1), asked for 5");
  tec_ctx_clear_error(ctx);
  /* a NULL stage is reported in the ctx of an axis given with it (issue #38) */
  ck_assert_int_eq(sch_split(NULL, sch_axis(stB, 0), 8, &o, &in), -1);
  assert_err(ctx, "split: the stage is NULL (give the result of sch_stage_of)");
  tec_ctx_clear_error(ctx);
  ck_assert_int_eq(sch_reorder(NULL, 1, (sch_iter *const[]){sch_axis(stB, 1)}), -1);
  assert_err(ctx, "reorder: the stage is NULL (give the result of sch_stage_of)");
  tec_ctx_clear_error(ctx);
  /* with no argument that has a ctx there is nowhere to say it */
  ck_assert_int_eq(sch_fuse(NULL, NULL, NULL, &fz), -1);
  ck_assert_int_eq(sch_reorder(NULL, 0, NULL), -1);
  ck_assert_ptr_null(sch_axis(NULL, 0));
  ck_assert_ptr_null(tec_ctx_error(ctx));
  ck_assert_str_eq(sch_stage_str(stB), "i, j");
}
END_TEST

/* ---- tec_lower's argument errors ---- */

START_TEST(err_lower_bad_name) {
  ck_assert_ptr_null(tec_lower(sB, "1f", 2, (te_tensor *const[]){A, B}));
  assert_err(ctx, "tec_lower: function name '1f' is not a C identifier (letters, digits and '_', "
                  "not starting with a digit)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_lower(sB, "my-func", 2, (te_tensor *const[]){A, B}));
  assert_err(ctx, "tec_lower: function name 'my-func' is not a C identifier (letters, digits and "
                  "'_', not starting with a digit)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_lower(sB, NULL, 2, (te_tensor *const[]){A, B}));
  assert_err(ctx, "tec_lower: function name '(null)' is not a C identifier (letters, digits and "
                  "'_', not starting with a digit)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_lower(sB, "", 2, (te_tensor *const[]){A, B}));
  ck_assert_ptr_nonnull(tec_ctx_error(ctx));
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_nonnull(tec_lower(sB, "_ok_2", 2, (te_tensor *const[]){A, B}));
}
END_TEST

START_TEST(err_lower_missing_input) {
  ck_assert_ptr_null(tec_lower(sB, "f", 1, (te_tensor *const[]){B}));
  assert_err(ctx, "tec_lower 'f': input 'A' must be one of the arguments");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_lower(sB, "f", 1, (te_tensor *const[]){A}));
  assert_err(ctx, "tec_lower 'f': output 'B' must be one of the arguments");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_lower(sB, "f", 0, NULL));
  assert_err(ctx, "tec_lower 'f': needs the argument tensors (inputs and outputs)");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_lower(sB, "f", 2, (te_tensor *const[]){A, NULL}));
  assert_err(ctx, "tec_lower 'f': argument 1 is NULL");
  tec_ctx_clear_error(ctx);
  /* issue 13: an input the outputs do not read is an unused parameter, accepted; a computed
   * tensor of another schedule is refused */
  ck_assert_msg(tec_lower(sB, "f", 3, (te_tensor *const[]){A, B, X}) != NULL, "%s",
                tec_ctx_error(ctx));
  ck_assert_ptr_null(tec_lower(sB, "f", 3, (te_tensor *const[]){A, B, Y}));
  assert_err(ctx, "tec_lower 'f': argument 2 ('Y') is computed, but not by this schedule (its "
                  "outputs do not read it); pass the schedule's inputs and outputs");
}
END_TEST

START_TEST(err_lower_duplicate_arg) {
  ck_assert_ptr_null(tec_lower(sB, "f", 3, (te_tensor *const[]){A, B, A}));
  assert_err(ctx, "tec_lower 'f': tensor 'A' is passed twice (arguments 0 and 2)");
}
END_TEST

static const ir_expr *scaled(tec_ctx *c, const ir_expr *const *idx, void *u) {
  const ir_expr *m = u;
  return ir_mul(TE_AT(A, idx[0], idx[1]), ir_cast(TEC_F32, m));
}
static const ir_expr *sum_to_m(tec_ctx *c, const ir_expr *const *idx, void *u) {
  const ir_expr *k = te_reduce_axis(c, "k", ir_int(c, 0), (const ir_expr *)u);
  return te_sum(TE_AT(A, idx[0], k), 1, &k, NULL);
}

START_TEST(err_lower_unbound_size) {
  const ir_expr *m = te_size_var(ctx, "m");
  /* m used in the body */
  te_tensor *S = compute("S", 2, A->shape, scaled, (void *)m);
  sch_schedule *s = sch_create(ctx, 1, &S);
  ck_assert_ptr_null(tec_lower(s, "f", 2, (te_tensor *const[]){A, S}));
  assert_err(ctx, "tec_lower 'f': size variable 'm' is not the extent of any argument's "
                  "dimension, so a call cannot bind it; make it the shape of an input or output");
  tec_ctx_clear_error(ctx);
  /* m as a reduce extent */
  te_tensor *R = compute("R", 1, TE_SHAPE(ctx, 64), sum_to_m, (void *)m);
  s = sch_create(ctx, 1, &R);
  ck_assert_ptr_null(tec_lower(s, "g", 2, (te_tensor *const[]){A, R}));
  assert_err(ctx, "tec_lower 'g': size variable 'm' is not the extent of any argument's "
                  "dimension, so a call cannot bind it; make it the shape of an input or output");
}
END_TEST

Suite *schedule_suite(void) {
  Suite *s = suite_create("schedule");
  TCase *p = tcase_create("primitives");
  tcase_add_checked_fixture(p, setup, teardown);
  tcase_add_test(p, no_schedule);
  tcase_add_test(p, split_dividing);
  tcase_add_test(p, split_non_dividing);
  tcase_add_test(p, split_larger_than_extent);
  tcase_add_test(p, split_far_larger_than_extent);
  tcase_add_test(p, split_twice);
  tcase_add_test(p, split_nparts);
  tcase_add_test(p, split_nparts_non_dividing);
  tcase_add_test(p, fuse);
  tcase_add_test(p, fuse_then_split);
  tcase_add_test(p, split_then_fuse);
  tcase_add_test(p, reorder);
  tcase_add_test(p, tile);
  tcase_add_test(p, tile_non_dividing);
  tcase_add_test(p, reduction_default);
  tcase_add_test(p, reduction_split_reorder);
  tcase_add_test(p, reduction_k_between_data);
  tcase_add_test(p, reduction_split_non_dividing);
  tcase_add_test(p, symbolic_size);
  tcase_add_test(p, two_outputs);
  suite_add_tcase(s, p);

  TCase *e = tcase_create("misuse");
  tcase_add_checked_fixture(e, setup, teardown);
  tcase_add_test(e, err_axis_of_other_stage);
  tcase_add_test(e, err_axis_of_other_schedule);
  tcase_add_test(e, err_already_split);
  tcase_add_test(e, err_already_fused);
  tcase_add_test(e, err_reorder_twice);
  tcase_add_test(e, err_reorder_too_many);
  tcase_add_test(e, err_factor_nonpositive);
  tcase_add_test(e, err_nparts_nonpositive);
  tcase_add_test(e, err_fuse_not_adjacent);
  tcase_add_test(e, err_fuse_data_reduce);
  tcase_add_test(e, err_tile_same_axis);
  tcase_add_test(e, err_tile_factor);
  tcase_add_test(e, err_axis_out_of_range);
  tcase_add_test(e, err_stage_of_placeholder);
  tcase_add_test(e, err_create_placeholder_output);
  tcase_add_test(e, err_null_iters);
  tcase_add_test(e, err_lower_bad_name);
  tcase_add_test(e, err_lower_missing_input);
  tcase_add_test(e, err_lower_duplicate_arg);
  tcase_add_test(e, err_lower_unbound_size);
  suite_add_tcase(s, e);
  return s;
}

int main(void) { return tu_run(schedule_suite()); }

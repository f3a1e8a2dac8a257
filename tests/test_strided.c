/* test_strided.c — any buffer a user holds (issue #40 item 3): a generated function called
 * with padded rows, negative strides, a zero-stride (broadcast) input, column-major views,
 * byte offsets and misaligned data computes what compact copies of the same arguments give,
 * checked against plain C over the views' elements; the compact path copies nothing (the
 * allocator hook counts) and the strided path copies exactly the arguments that are not
 * compact; refused with the reason: a written argument with a zero stride, a compact output
 * overlapping a compact input. Host and, in the target tier, AArch64 under qemu. */
#include <stdlib.h>
#include <string.h>
#include "support/testutil.h"

/* element (i, j) of a 2-d float view, through its strides (NULL: compact) */
static float *at2(const DLTensor *t, int64_t i, int64_t j) {
  int64_t s0 = t->strides ? t->strides[0] : t->shape[1], s1 = t->strides ? t->strides[1] : 1;
  return (float *)((char *)t->data + t->byte_offset) + i * s0 + j * s1;
}
static float *at1(const DLTensor *t, int64_t i) {
  return (float *)((char *)t->data + t->byte_offset) + i * (t->strides ? t->strides[0] : 1);
}

static int allocs;
static void *count_alloc(size_t n, void *user) {
  (void)user;
  allocs++;
  void *p = NULL;
  return posix_memalign(&p, TEC_ALIGN, n ? n : 1) == 0 ? p : NULL;
}
static void count_free(void *p, void *user) {
  (void)user;
  free(p);
}

/* C[i, j] = 2 A[i, j] + B[j] over m x n, vectorized by 8 along j, rows in parallel */
typedef struct ew { te_tensor *a, *b; } ew;
static const ir_expr *ew_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  ew *e = user;
  return ir_add(ir_mul(ir_float(ctx, 2), TE_AT(e->a, i[0], i[1])), TE_AT(e->b, i[1]));
}
static tec_packed_fn build_ew(tec_ctx *ctx, int64_t m, int64_t n) {
  ew e = {te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, m, n)), te_placeholder(ctx, "B", TEC_F32, 1, TE_SHAPE(ctx, n))};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = TE_SHAPE(ctx, m, n), .body = ew_body, .user = &e});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *st = sch_stage_of(s, C);
  sch_iter *jo, *ji;
  OK(ctx, sch_split(st, sch_axis(st, 1), 8, &jo, &ji));
  OK(ctx, sch_vectorize(st, ji));
  OK(ctx, sch_parallel(st, sch_axis(st, 0)));
  return tu_build(ctx, s, "ew", 3, (te_tensor *[]){e.a, e.b, C});
}

/* a view of m x n floats inside buf (row stride rs, column stride cs, first element at
 * element offset `first`, plus `skew` bytes) */
static DLTensor view2(float *buf, int64_t *shape, int64_t *strides, int64_t first, int64_t skew) {
  DLTensor t = tec_dl_view(buf, TEC_F32, 2, shape);
  t.strides = strides;
  t.byte_offset = (uint64_t)(first * (int64_t)sizeof(float) + skew);
  return t;
}

static void check_ew(tec_packed_fn fn, DLTensor *A, DLTensor *B, DLTensor *C, int m, int n, int want_allocs,
                     const char *what) {
  float *ref = malloc(sizeof(float) * (size_t)(m * n));
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) ref[i * n + j] = 2 * *at2(A, i, j) + *at1(B, j);
  allocs = 0;
  ck_assert_msg(fn((DLTensor *[]){A, B, C}, 3) == 0, "%s: %s", what, tec_rt_last_error());
  ck_assert_msg(allocs == want_allocs, "%s: %d copies, expected %d", what, allocs, want_allocs);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      ck_assert_msg(*at2(C, i, j) == ref[i * n + j], "%s: C[%d, %d] = %g, expected %g", what, i, j, *at2(C, i, j),
                    ref[i * n + j]);
  free(ref);
}

START_TEST(strided_views) {
  tec_ctx *ctx = tec_ctx_new();
  enum { M = 5, N = 19, W = 32 }; /* N: two vectors and a tail; W: a padded row */
  tec_packed_fn fn = build_ew(ctx, M, N);
  tec_rt_set_allocator(count_alloc, count_free, NULL);
  float *abuf = aligned_alloc(64, sizeof(float) * M * W * 2), *cbuf = aligned_alloc(64, sizeof(float) * M * W * 2);
  float *bbuf = aligned_alloc(64, sizeof(float) * W * 2);
  for (int k = 0; k < M * W * 2; k++) abuf[k] = (float)((k * 37) % 101) - 50, cbuf[k] = -999;
  for (int k = 0; k < W * 2; k++) bbuf[k] = (float)((k * 13) % 17) - 8;
  int64_t shape[2] = {M, N}, bshape = N;
  int64_t compact[2] = {N, 1}, padded[2] = {W, 1}, reversed[2] = {-W, 1}, colmajor[2] = {1, M}, zero = 0, two = 2;
  DLTensor B = tec_dl_view(bbuf, TEC_F32, 1, &bshape);

  DLTensor A = view2(abuf, shape, compact, 0, 0), C = view2(cbuf, shape, compact, 0, 0);
  check_ew(fn, &A, &B, &C, M, N, 0, "compact (the fast path: no copy)");
  A = view2(abuf, shape, padded, 0, 0), C = view2(cbuf, shape, padded, 0, 0);
  check_ew(fn, &A, &B, &C, M, N, 2, "padded rows in and out");
  A = view2(abuf, shape, reversed, (M - 1) * W, 0);
  C = view2(cbuf, shape, compact, 0, 0);
  check_ew(fn, &A, &B, &C, M, N, 1, "rows reversed (a negative stride)");
  A = view2(abuf, shape, colmajor, 0, 0);
  check_ew(fn, &A, &B, &C, M, N, 1, "a column-major view");
  A = view2(abuf, shape, compact, 3, 0), C = view2(cbuf, shape, compact, 1, 0);
  check_ew(fn, &A, &B, &C, M, N, 2, "byte_offset off the alignment");
  DLTensor mis = tec_dl_view((char *)abuf + 4, TEC_F32, 2, shape);
  C = view2(cbuf, shape, compact, 0, 0);
  check_ew(fn, &mis, &B, &C, M, N, 1, "misaligned data");
  A = view2(abuf, shape, compact, 0, 0);
  DLTensor Bz = B; /* one value broadcast along j */
  Bz.strides = &zero;
  check_ew(fn, &A, &Bz, &C, M, N, 1, "a zero-stride input");
  DLTensor B2 = B; /* every other element */
  B2.strides = &two;
  check_ew(fn, &A, &B2, &C, M, N, 1, "a strided vector");
  /* an output sharing memory with a copied input: the input is copied before the call */
  A = view2(cbuf, shape, colmajor, 0, 0);
  for (int k = 0; k < M * N; k++) cbuf[k] = (float)k;
  C = view2(cbuf, shape, compact, 0, 0);
  float before[M * N];
  memcpy(before, cbuf, sizeof before);
  ck_assert_msg(fn((DLTensor *[]){&A, &B, &C}, 3) == 0, "%s", tec_rt_last_error());
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) ck_assert_float_eq(cbuf[i * N + j], 2 * before[j * M + i] + bbuf[j]);

  /* refused */
  C = view2(cbuf, shape, compact, 0, 0);
  int64_t zero_row[2] = {0, 1};
  DLTensor Cz = view2(cbuf, shape, zero_row, 0, 0);
  A = view2(abuf, shape, compact, 0, 0);
  ck_assert_int_eq(fn((DLTensor *[]){&A, &B, &Cz}, 3), -1);
  tu_assert_contains(tec_rt_last_error(), "ew: argument 2 is written but has stride 0 in dimension 0 (extent 5): "
                                          "its elements would share one place");
  DLTensor Calias = view2(abuf, shape, compact, 0, 0);
  ck_assert_int_eq(fn((DLTensor *[]){&A, &B, &Calias}, 3), -1);
  tu_assert_contains(tec_rt_last_error(), "ew: argument 2 ('C') overlaps argument 0 ('A') in memory");
  DLTensor Apad = view2(abuf, shape, padded, 0, 0), Cin = view2(abuf, shape, compact, 0, 0);
  DLTensor Bs = B; /* on the strided path, a compact written argument over a compact input */
  Bs.strides = &two;
  ck_assert_int_eq(fn((DLTensor *[]){&A, &Bs, &Cin}, 3), -1);
  tu_assert_contains(tec_rt_last_error(), "ew: argument 2 overlaps argument 0 in memory");
  (void)Apad;
  tec_rt_set_allocator(NULL, NULL, NULL);
  free(abuf), free(bbuf), free(cbuf);
  tec_ctx_free(ctx);
}
END_TEST

/* A 16x16x16 matrix multiply (a register tile: cache_write, vectorized) on slices of larger
 * matrices and a transposed view, against the plain-C product of the same elements. */
typedef struct mm { te_tensor *a, *b; const ir_expr *k; } mm;
static const ir_expr *mm_body(tec_ctx *ctx, const ir_expr *const *i, void *user) {
  mm *m = user;
  return te_sum(ir_mul(TE_AT(m->a, i[0], m->k), TE_AT(m->b, m->k, i[1])), 1, &m->k, NULL);
}

START_TEST(strided_matmul) {
  tec_ctx *ctx = tec_ctx_new();
  enum { S = 16, R = 24 };
  mm u = {te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, S, S)), te_placeholder(ctx, "B", TEC_F32, 2, TE_SHAPE(ctx, S, S)),
          te_reduce_axis_n(ctx, "k", S)};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = TE_SHAPE(ctx, S, S), .body = mm_body, .user = &u});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *st = sch_stage_of(s, C);
  sch_iter *io, *ii, *jo, *ji;
  OK(ctx, sch_tile(st, sch_axis(st, 0), sch_axis(st, 1), 4, 8, &io, &jo, &ii, &ji));
  OK(ctx, sch_vectorize(st, ji));
  tec_packed_fn fn = tu_build(ctx, s, "mm", 3, (te_tensor *[]){u.a, u.b, C});
  float *big = aligned_alloc(64, sizeof(float) * R * R), *cb = aligned_alloc(64, sizeof(float) * R * R);
  for (int q = 0; q < R * R; q++) big[q] = (float)((q * 7) % 13) - 6, cb[q] = 0;
  int64_t shape[2] = {S, S}, rows[2] = {R, 1}, trans[2] = {1, R};
  DLTensor A = view2(big, shape, rows, 2 * R + 3, 0);  /* rows 2..17, columns 3..18 */
  DLTensor B = view2(big, shape, trans, 5, 0);         /* a transposed view */
  DLTensor Cv = view2(cb, shape, rows, R + 1, 0);      /* into a slice */
  ck_assert_msg(fn((DLTensor *[]){&A, &B, &Cv}, 3) == 0, "%s", tec_rt_last_error());
  for (int i = 0; i < S; i++)
    for (int j = 0; j < S; j++) {
      float ref = 0;
      for (int q = 0; q < S; q++) ref += *at2(&A, i, q) * *at2(&B, q, j);
      ck_assert_msg(*at2(&Cv, i, j) == ref, "C[%d, %d] = %g, expected %g", i, j, *at2(&Cv, i, j), ref);
    }
  for (int q = 0; q < R; q++) ck_assert_float_eq(cb[q], 0); /* nothing outside the slice */
  free(big), free(cb);
  tec_ctx_free(ctx);
}
END_TEST

/* AOT: the same function as an object, called from C with a padded-row input. Linked with
 * libtec_runtime.a the strided path computes it; linked without (the caller defines
 * tec_rt_check_fail, as a runtime-free program may), the compact call still runs and the
 * strided one is refused, naming what to link. */
static const char *aot_main =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"ew.h\"\n"
    "#ifdef NO_RUNTIME\nstatic char msg[512];\n"
    "int32_t tec_rt_check_fail(const char *f, int64_t a, int64_t b) { snprintf(msg, sizeof msg, f, (long long)a, (long long)b); return -1; }\n"
    "#define ERR msg\n#else\n#include \"tec/runtime.h\"\n#define ERR tec_rt_last_error()\n#endif\n"
    "int main(void) {\n"
    "  static float a[5 * 32] __attribute__((aligned(64))), b[19] __attribute__((aligned(64))), c[5 * 19] __attribute__((aligned(64)));\n"
    "  for (int k = 0; k < 5 * 32; k++) a[k] = (float)(k % 23);\n"
    "  for (int k = 0; k < 19; k++) b[k] = (float)k;\n"
    "  int64_t sa[2] = {5, 19}, sb[1] = {19}, st[2] = {32, 1};\n"
    "  DLTensor ta = {a, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, sa, NULL, 0}, tb = {b, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, sb, NULL, 0};\n"
    "  DLTensor tc = {c, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, sa, NULL, 0};\n"
    "  if (ew((DLTensor *[]){&ta, &tb, &tc}, 3) != 0) { printf(\"compact: %s\\n\", ERR); return 1; }\n"
    "  ta.strides = st;\n"
    "  int rc = ew((DLTensor *[]){&ta, &tb, &tc}, 3);\n"
    "  if (rc != 0) { printf(\"strided: rc %d: %s\\n\", rc, ERR); return 0; }\n"
    "  for (int i = 0; i < 5; i++) for (int j = 0; j < 19; j++)\n"
    "    if (c[i * 19 + j] != 2 * a[i * 32 + j] + b[j]) { printf(\"wrong at %d %d\\n\", i, j); return 1; }\n"
    "  printf(\"strided: ok\\n\");\n  return 0;\n}\n";

START_TEST(strided_aot) {
  const char *cc = getenv("TEC_TEST_CC") ? getenv("TEC_TEST_CC") : "cc";
  const char *run = getenv("TEC_TEST_RUN") ? getenv("TEC_TEST_RUN") : "";
  char probe[512], dir[] = "/tmp/tec_strided_XXXXXX", path[512], cmd[2048];
  snprintf(probe, sizeof probe, "%s --version > /dev/null 2>&1", cc);
  if (system(probe) != 0) return; /* no C compiler: nothing to link */
  tec_ctx *ctx = tec_ctx_new();
  ew e = {te_placeholder(ctx, "A", TEC_F32, 2, TE_SHAPE(ctx, 5, 19)), te_placeholder(ctx, "B", TEC_F32, 1, TE_SHAPE(ctx, 19))};
  te_tensor *C = te_compute(ctx, &(te_compute_decl){.name = "C", .ndim = 2, .shape = TE_SHAPE(ctx, 5, 19), .body = ew_body, .user = &e});
  sch_schedule *s = sch_create(ctx, 1, &C);
  sch_stage *st = sch_stage_of(s, C);
  sch_iter *jo, *ji;
  OK(ctx, sch_split(st, sch_axis(st, 1), 8, &jo, &ji));
  OK(ctx, sch_vectorize(st, ji));
  lower_func *f = tec_lower(s, "ew", 3, (te_tensor *[]){e.a, e.b, C});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const char *target = NULL; /* the machine the test runs on (qemu's, in a cross build) */
  snprintf(path, sizeof path, "%s/ew.o", dir);
  ck_assert_msg(tec_emit(ctx, 1, &f, target, TEC_EMIT_OBJECT, path) == 0, "%s", tec_ctx_error(ctx));
  snprintf(path, sizeof path, "%s/ew.h", dir);
  ck_assert_msg(tec_emit(ctx, 1, &f, target, TEC_EMIT_HEADER, path) == 0, "%s", tec_ctx_error(ctx));
  snprintf(path, sizeof path, "%s/main.c", dir);
  FILE *fp = fopen(path, "w");
  ck_assert_ptr_nonnull(fp);
  fputs(aot_main, fp);
  fclose(fp);
  snprintf(cmd, sizeof cmd, "cd %s && %s -std=c11 %s -I%s/include -o with main.c ew.o %s -lpthread -lm && %s ./with > with.txt 2>&1",
           dir, cc, tu_san_flags(), TEC_SRC_DIR, TEC_RUNTIME_LIB, run);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(path, sizeof path, "%s/with.txt", dir);
  char *out = tu_read_file(path, NULL);
  ck_assert_str_eq(out, "strided: ok\n");
  free(out);
  snprintf(cmd, sizeof cmd, "cd %s && %s -std=c11 -DNO_RUNTIME -I%s/include -o without main.c ew.o -lm && %s ./without > without.txt 2>&1",
           dir, cc, TEC_SRC_DIR, run);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(path, sizeof path, "%s/without.txt", dir);
  out = tu_read_file(path, NULL);
  tu_assert_contains(out, "strided: rc -1: ew: an argument is not compact and 64-byte aligned (strides, byte_offset or "
                          "data); calling with it needs tec_rt_call_strided: link libtec_runtime.a");
  free(out);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "test_strided: could not remove %s\n", dir);
  tec_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("strided");
  TCase *tc = tcase_create("strided");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, strided_views);
  tcase_add_test(tc, strided_matmul);
  tcase_add_test(tc, strided_aot);
  suite_add_tcase(s, tc);
  return tu_run(s);
}

/* test_cycles.c — 2000 (TEC_TEST_LONG=1: 10^4) lower + build + call + free cycles of one declaration in one ctx hold
 * bounded memory: after a warm-up, the ctx's arena and the heap stay within a constant bound
 * whatever the count (a freed module leaves nothing behind, its handle's slot is reused), the
 * built function computes the right numbers (checked against plain C every 100th cycle and at
 * the end), and every freed module's handle, the first one's included, still says "the
 * module was freed". The builds use the cheap path "llvm -O0" (build.h): a default -O3 build
 * costs 40-80 ms, which would make 10^4 cycles take ten minutes. The optimization levels of
 * a target string are checked here too. */
#include <check.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "testutil.h"
#if defined(__SANITIZE_ADDRESS__)
size_t __sanitizer_get_current_allocated_bytes(void); /* the ASan runtime's (no header needed) */
#endif

#define N 1000 /* elements: 62 vectors of 16 and a tail of 8 */

static te_tensor *A;

static const ir_expr *body(tec_ctx *c, const ir_expr *const *i, void *u) {
  (void)u;
  return ir_add(ir_mul(TE_AT(A, i[0]), ir_float(c, 3.0)), ir_float(c, 1.0));
}

/* B = 3A + 1 over N elements (A in the global), split by 16 with the inner loop vectorized:
 * the declaration and schedule both tests lower. */
static sch_schedule *axpb(tec_ctx *ctx, te_tensor **B) {
  A = te_placeholder(ctx, "A", TEC_F32, 1, TE_SHAPE(ctx, N));
  *B = te_compute(ctx, &(te_compute_decl){.name = "B", .ndim = 1, .shape = TE_SHAPE(ctx, N),
                                          .body = body});
  sch_schedule *s = sch_create(ctx, 1, B);
  sch_stage *st = sch_stage_of(s, *B);
  sch_iter *o, *in;
  OK(ctx, sch_split(st, sch_axis(st, 0), 16, &o, &in));
  OK(ctx, sch_vectorize(st, in));
  return s;
}

/* Bytes the heap holds now: the sanitizer's allocator under ASan (it replaces malloc, and
 * mallinfo2 would see only glibc's untouched arena), else glibc's. */
static size_t heap_bytes(void) {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

START_TEST(cycles_bounded) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *B;
  sch_schedule *s = axpb(ctx, &B);
  te_tensor *args[] = {A, B};
  int64_t sh[1] = {N};
  DLTensor ta = tu_rand_f32(1, sh, 7), tb = tu_zeros(TEC_F32, 1, sh);
  float ref[N];
  for (int i = 0; i < N; i++) ref[i] = tu_f32(&ta)[i] * 3.0f + 1.0f;
  /* A cycle takes about 6 ms in a release build. The suite runs a CI-sized slice of 2000
   * cycles (300 under qemu-user, tu_emulated, where every build is some 20 times slower); the
   * bound is the same, it does not depend on the count. TEC_TEST_LONG=1 runs the full 10^4
   * (docs/testing.md, long runs). */
  const char *long_run = getenv("TEC_TEST_LONG");
  int n = long_run && !strcmp(long_run, "1") ? 10000 : tu_emulated() ? 300 : 2000, warm = 50,
      checked = 0;
  size_t arena0 = 0, heap0 = 0, arena_max = 0, heap_max = 0;
  tec_module *first = NULL, *m = NULL;
  double t0 = now_s();
  for (int r = 0; r < n; r++) {
    if (r == warm) arena0 = arena_max = tec_ctx_arena_bytes(ctx), heap0 = heap_max = heap_bytes();
    lower_func *f = tec_lower(s, "axpb", 2, args);
    ck_assert_msg(f != NULL, "cycle %d: %s", r, tec_ctx_error(ctx));
    m = tec_build(ctx, 1, &f, "llvm -O0");
    ck_assert_msg(m != NULL, "cycle %d: %s", r, tec_ctx_error(ctx));
    if (!first) first = m;
    if (r % 100 == 0 || r == n - 1) {
      memset(tb.data, 0, sizeof(float) * N);
      ck_assert_int_eq(TEC_CALL(tec_module_get(m, "axpb"), &ta, &tb), 0);
      /* 1e-5: with a fused multiply-add or without */
      ck_assert_double_lt(tu_max_err(tu_f32(&tb), ref, N), 1e-5);
      checked++;
    }
    tec_module_free(m);
    tec_lower_free(f);
    if (r >= warm) {
      size_t a = tec_ctx_arena_bytes(ctx), h = heap_bytes();
      if (a > arena_max) arena_max = a;
      if (h > heap_max) heap_max = h;
    }
  }
  double secs = now_s() - t0;
  ck_assert_int_eq(checked, n / 100 + 1);
  /* the first handle and the last: freed, and said so, after n - 1 reuses of the slot */
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_module_get(first, "axpb"));
  tu_assert_contains(tec_ctx_error(ctx), "tec_module_get: the module was freed");
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_module_get(m, "axpb"));
  tu_assert_contains(tec_ctx_error(ctx), "the module was freed");
  ck_assert_ptr_ne(first, m);
  fprintf(stderr, "%d build cycles in %.1f s (%.2f ms each): arena %zu -> max %zu, heap %zu -> "
          "max %zu bytes after %d warm-up cycles\n", n, secs, 1e3 * secs / n, arena0, arena_max,
          heap0, heap_max, warm);
  /* constant bounds, whatever n: the arena gives every cycle's bytes back; the heap may move
   * by what LLVM and malloc keep in their caches (measured: under 100 KiB), where one kept
   * module costs some 50 KiB and one kept handle or message dozens of bytes */
  ck_assert_msg(arena_max == arena0, "the arena grew from %zu to %zu bytes", arena0, arena_max);
  ck_assert_msg(heap_max <= heap0 + (512u << 10), "the heap grew from %zu to %zu bytes", heap0,
                heap_max);
  tec_dl_free(&ta), tec_dl_free(&tb);
  tec_ctx_free(ctx);
}
END_TEST

/* The optimization level of a target string: -O0 .. -O3 build the same numbers; no level is
 * -O3 (the IR is the same text); -O0 leaves what the optimizer would remove; bad levels are
 * refused with the known ones. */
START_TEST(opt_levels) {
  tec_ctx *ctx = tec_ctx_new();
  te_tensor *B;
  sch_schedule *s = axpb(ctx, &B);
  lower_func *f = tec_lower(s, "axpb", 2, (te_tensor *[]){A, B});
  ck_assert_msg(f != NULL, "%s", tec_ctx_error(ctx));
  int64_t sh[1] = {N};
  DLTensor ta = tu_rand_f32(1, sh, 3), tb = tu_zeros(TEC_F32, 1, sh);
  float ref[N];
  for (int i = 0; i < N; i++) ref[i] = tu_f32(&ta)[i] * 3.0f + 1.0f;
  const char *targets[] = {"llvm -O0", "llvm -O1", "llvm -O2", "llvm -O3", NULL};
  const char *ir[5];
  for (int k = 0; k < 5; k++) {
    tec_module *m = tec_build(ctx, 1, &f, targets[k]);
    ck_assert_msg(m != NULL, "%s: %s", targets[k] ? targets[k] : "NULL", tec_ctx_error(ctx));
    memset(tb.data, 0, sizeof(float) * N);
    ck_assert_int_eq(TEC_CALL(tec_module_get(m, "axpb"), &ta, &tb), 0);
    ck_assert_double_lt(tu_max_err(tu_f32(&tb), ref, N), 1e-5);
    ir[k] = tec_ctx_strdup(ctx, tec_module_llvm_ir(m));
    ck_assert_ptr_nonnull(ir[k]);
    const char *head = tu_ir_head(ir[k], "axpb"); /* without LLVM 19's return attributes */
    ck_assert_msg(head != NULL, "%s: axpb is not defined", targets[k] ? targets[k] : "NULL");
    tu_assert_contains(head, "define i32 @axpb(");
    tu_assert_contains(tec_module_asm(m), "axpb_raw:");
    tec_module_free(m);
  }
  ck_assert_str_eq(ir[3], ir[4]);             /* the default is -O3 */
  tu_assert_contains(ir[0], "br label %start"); /* a jump to the next block, kept at -O0 */
  assert_not_contains(ir[3], "br label %start");
  /* the level is part of the spelled-out target, but for the default */
  const char *t0 = tec_target_str(ctx, "llvm -O0"), *t3 = tec_target_str(ctx, "llvm -O3");
  ck_assert_ptr_nonnull(t0);
  ck_assert_ptr_nonnull(t3);
  ck_assert_str_eq(t0 + strlen(t0) - 4, " -O0");
  assert_not_contains(t3, " -O");
  tu_assert_contains(tec_target_str(ctx, "rasp4b -O1"), "-mtriple=aarch64");
  tu_assert_contains(tec_target_str(ctx, "rasp4b -O1"), " -O1");
  const struct {
    const char *target, *msg;
  } bad[] = {
      {"llvm -O7", "target 'llvm -O7': unknown optimization level '-O7' (known: -O0, -O1, -O2, "
                   "-O3; the default is -O3)"},
      {"llvm -O", "unknown optimization level '-O'"},
      {"llvm -Ofast", "unknown optimization level '-Ofast'"},
      {"llvm -O=0", "unknown optimization level '-O=0'"},
      {"llvm -O0 -O3", "the optimization level is given twice (-O0, -O3)"},
      {"llvm -O2 -mcpu=nope", "unknown CPU 'nope'"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    tec_ctx_clear_error(ctx);
    ck_assert_ptr_null(tec_build(ctx, 1, &f, bad[k].target));
    tu_assert_contains(tec_ctx_error(ctx), bad[k].msg);
    tec_ctx_clear_error(ctx);
    ck_assert_ptr_null(tec_target_str(ctx, bad[k].target));
    tu_assert_contains(tec_ctx_error(ctx), bad[k].msg);
  }
  tec_ctx_clear_error(ctx);
  ck_assert_ptr_null(tec_build(ctx, 1, &f, "llvm -march=x86-64"));
  tu_assert_contains(tec_ctx_error(ctx), "-mattr=, -O0 .. -O3"); /* the known options */
  tec_dl_free(&ta), tec_dl_free(&tb);
  tec_ctx_free(ctx);
}
END_TEST

static Suite *cycles_suite(void) {
  Suite *s = suite_create("cycles");
  TCase *t = tcase_create("memory");
  tcase_set_timeout(t, 900);
  tcase_add_test(t, cycles_bounded);
  suite_add_tcase(s, t);
  TCase *l = tcase_create("levels");
  tcase_add_test(l, opt_levels);
  suite_add_tcase(s, l);
  return s;
}

int main(void) { return tu_run(cycles_suite()); }

/* testutil.h — helpers shared by the Check suites: tensors with random data, a naive matmul
 * reference and comparison against references, reading a whole file, building + running a
 * lowered function in one call, and assertions on texts and error messages. */
#ifndef TEC_TESTUTIL_H
#define TEC_TESTUTIL_H

#include <check.h>
#include <string.h>
#include "tec/tec.h"

/* A fresh 64-byte aligned float32 tensor filled with values in [-1, 1) from seed. */
DLTensor tu_rand_f32(int ndim, const int64_t *shape, unsigned seed);
DLTensor tu_zeros(tec_dtype t, int ndim, const int64_t *shape);
float *tu_f32(const DLTensor *t);
/* Largest |a - b| / (1 + |b|) over n floats. */
double tu_max_err(const float *a, const float *b, int64_t n);
/* The naive reference c = a * b, all row-major: a is MxK, b is KxN, c is MxN; each element is
 * accumulated in double and rounded to float once. */
void tu_ref_matmul(const float *a, const float *b, float *c, int64_t M, int64_t N, int64_t K);
/* The whole file at path, malloc'd and NUL-terminated; its length in *size unless size is
 * NULL. NULL if it cannot be opened or read. */
char *tu_read_file(const char *path, long *size);
/* What tec_emit writes for f and target (NULL: the host) in the text kinds (assembly, LLVM IR,
 * header), malloc'd; fails the test when f is NULL or the emission fails. */
char *tu_emit_text(tec_ctx *ctx, lower_func *f, const char *target, tec_emit_kind kind);
/* Lowers s (args as given), JIT-builds for the host and returns the entry; fails the test
 * with the ctx's error otherwise. */
tec_packed_fn tu_build(tec_ctx *ctx, sch_schedule *s, const char *name, int nargs,
                       te_tensor *const *args);
/* tu_build, and when text is not NULL, what tec_emit writes for the host in kind for the same
 * lowered function (malloc'd: tu_emit_text) in *text. */
tec_packed_fn tu_build_text(tec_ctx *ctx, sch_schedule *s, const char *name, int nargs,
                            te_tensor *const *args, tec_emit_kind kind, char **text);
/* The definition of function fn in LLVM IR text: a pointer into ir at the "define" that starts
 * it, or NULL. tu_ir_head: that line, in a static buffer, without the "noundef" and
 * "range(...)" return attributes LLVM 18 and 19 infer, so a check of a definition's head
 * reads the same on LLVM 14 and 19 ("define internal i32 @f(i64 ..."); NULL if fn is not
 * defined. */
const char *tu_ir_define(const char *ir, const char *fn);
const char *tu_ir_head(const char *ir, const char *fn);
/* Asserts that str contains sub, printing both otherwise. */
#define tu_assert_contains(str, sub)                                                     \
  do {                                                                                   \
    const char *tu_s_ = (str);                                                           \
    /* at most 3000 characters of the text: Check refuses longer messages */               \
    ck_assert_msg(tu_s_ && strstr(tu_s_, (sub)), "expected to find\n  %s\nin\n  %.3000s", (sub), \
                  tu_s_ ? tu_s_ : "(null)");                                             \
  } while (0)
/* Asserts that str does not contain sub (str must not be NULL). */
#define assert_not_contains(str, sub)                                                        \
  ck_assert_msg((str) && !strstr((str), (sub)), "did not expect\n  %s\nin\n  %.3000s", (sub), \
                (str) ? (str) : "(null)")
/* Asserts that the ctx's error message is exactly want. */
#define assert_err(ctx, want)                                                                \
  do {                                                                                       \
    const char *e_ = tec_ctx_error(ctx);                                                     \
    ck_assert_msg(e_ && strcmp(e_, (want)) == 0, "expected error\n  %s\ngot\n  %s", (want),  \
                  e_ ? e_ : "(none)");                                                       \
  } while (0)
/* Asserts that a schedule call x returned 0, printing the ctx's error otherwise. */
#define OK(ctx, x) ck_assert_msg((x) == 0, "%s", tec_ctx_error(ctx))
/* 1 when the suite runs under qemu-user (TEC_TEST_EMULATED, set by the cross build's ctest):
 * JIT compiles and generated code run 10-50x slower there, so the big sweeps run a subset. */
int tu_emulated(void);
/* 1 in the AddressSanitizer build (the CI's ASan phase): the naive references and the library
 * run several times slower there, so the suites that sample their large layers under qemu
 * sample them there too (the host build runs every layer). */
int tu_sanitized(void);
/* The flags a program linked against this build's libtec_runtime.a needs: the sanitizers the
 * library was compiled with ("-fsanitize=address,undefined", "-fsanitize=thread"), else "". */
const char *tu_san_flags(void);
/* Runs a suite and returns the exit status for main. */
int tu_run(Suite *s);

#endif

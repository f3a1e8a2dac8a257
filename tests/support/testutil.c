/* testutil.c — see testutil.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

static unsigned next_rand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

DLTensor tu_zeros(tec_dtype t, int ndim, const int64_t *shape) {
  DLTensor d;
  ck_assert_int_eq(tec_dl_alloc(&d, t, ndim, shape), 0);
  memset(d.data, 0, (size_t)(tec_dl_numel(&d) * tec_dtype_bytes(t)));
  return d;
}

DLTensor tu_rand_f32(int ndim, const int64_t *shape, unsigned seed) {
  DLTensor d = tu_zeros(TEC_F32, ndim, shape);
  float *p = d.data;
  unsigned s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < tec_dl_numel(&d); i++)
    p[i] = (float)(next_rand(&s) % 20000) / 10000.0f - 1.0f;
  return d;
}

float *tu_f32(const DLTensor *t) { return (float *)t->data; }

double tu_max_err(const float *a, const float *b, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)a[i] - (double)b[i]) / (1.0 + fabs((double)b[i]));
    if (!(e <= m)) m = e; /* NaN propagates as a failure */
  }
  return m;
}

void tu_ref_matmul(const float *a, const float *b, float *c, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) acc += (double)a[i * K + k] * b[k * N + j];
      c[i * N + j] = (float)acc;
    }
}

char *tu_read_file(const char *path, long *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (s = malloc((size_t)n + 1)) != NULL) {
    if (fread(s, 1, (size_t)n, f) == (size_t)n) {
      s[n] = '\0';
    } else {
      free(s);
      s = NULL;
    }
  }
  fclose(f);
  if (s && size) *size = n;
  return s;
}

char *tu_emit_text(tec_ctx *ctx, lower_func *f, const char *target, tec_emit_kind kind) {
  ck_assert_msg(f != NULL, "lower: %s", tec_ctx_error(ctx));
  char path[] = "/tmp/tec_emit_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  int rc = tec_emit(ctx, 1, &f, target, kind, path);
  char *s = rc == 0 ? tu_read_file(path, NULL) : NULL;
  unlink(path);
  ck_assert_msg(rc == 0, "emit for %s: %s", target ? target : "the host", tec_ctx_error(ctx));
  ck_assert_ptr_nonnull(s);
  return s;
}

tec_packed_fn tu_build(tec_ctx *ctx, sch_schedule *s, const char *name, int nargs,
                       te_tensor *const *args) {
  return tu_build_text(ctx, s, name, nargs, args, TEC_EMIT_ASM, NULL);
}

tec_packed_fn tu_build_text(tec_ctx *ctx, sch_schedule *s, const char *name, int nargs,
                            te_tensor *const *args, tec_emit_kind kind, char **text) {
  ck_assert_msg(s != NULL, "schedule: %s", tec_ctx_error(ctx));
  lower_func *f = tec_lower(s, name, nargs, args);
  ck_assert_msg(f != NULL, "lower: %s", tec_ctx_error(ctx));
  if (text) *text = tu_emit_text(ctx, f, NULL, kind);
  tec_module *m = tec_build(ctx, 1, &f, NULL);
  ck_assert_msg(m != NULL, "build: %s", tec_ctx_error(ctx));
  tec_packed_fn fn = tec_module_get(m, name);
  ck_assert_msg(fn != NULL, "get: %s", tec_ctx_error(ctx));
  return fn;
}

int tu_emulated(void) { return getenv("TEC_TEST_EMULATED") != NULL; }

int tu_sanitized(void) { return strstr(tu_san_flags(), "address") != NULL; }

int tu_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

const char *tu_ir_define(const char *ir, const char *fn) {
  char pat[256];
  snprintf(pat, sizeof pat, " @%s(", fn);
  for (const char *p = ir ? strstr(ir, pat) : NULL; p; p = strstr(p + 1, pat)) {
    const char *line = p;
    while (line > ir && line[-1] != '\n') line--;
    if (strncmp(line, "define ", 7) == 0) return line;
  }
  return NULL;
}

const char *tu_ir_head(const char *ir, const char *fn) {
  static char head[1024];
  const char *p = tu_ir_define(ir, fn);
  if (!p) return NULL;
  size_t n = 0;
  int params = 0; /* past the '(' of the parameter list: attributes there are kept */
  while (*p && *p != '\n' && n + 1 < sizeof head) {
    if (!params && strncmp(p, " noundef ", 9) == 0) p += 8;
    if (!params && strncmp(p, " range(", 7) == 0) { /* LLVM 19's return range(i32 -1, 1) */
      const char *e = strchr(p, ')');
      if (e) p = e + 1;
      continue;
    }
    if (*p == '(') params = 1;
    head[n++] = *p++;
  }
  head[n] = 0;
  return head;
}

const char *tu_san_flags(void) {
#if defined(__SANITIZE_ADDRESS__) /* ASan + UBSan build (CMakeLists.txt, TEC_SANITIZE) */
  return "-fsanitize=address,undefined";
#elif defined(__SANITIZE_THREAD__)
  return "-fsanitize=thread";
#else
  return "";
#endif
}

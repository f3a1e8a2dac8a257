/* common.c — what every bench program shares: the clock, medians, comma lists, a check, the
 * median time of a module's calls, a lowered function's arguments allocated for a timing. */
#include "common.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "tec/runtime.h"
#include "tec/tec.h"

double bench_now(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

void bench_sort(double *x, int n) { qsort(x, (size_t)n, sizeof(double), cmp_double); }

double bench_median(double *x, int n) {
  bench_sort(x, n);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

int bench_parse_list(const char *s, int *out, int max, long lo, long hi) {
  int n = 0;
  while (*s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < lo || v > hi || n == max || (*end && *end != ',')) return -1;
    out[n++] = (int)v;
    s = *end ? end + 1 : end;
  }
  return n ? n : -1;
}

double bench_max_err(const float *got, const float *want, int64_t n) {
  double e = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - (double)want[i]) / (1.0 + fabs((double)want[i]));
    if (!(d <= e)) e = d; /* a NaN sticks */
  }
  return e;
}

double bench_module_median(tec_module *m, const char *name, int nargs, DLTensor *const *args,
                           int runs, const char *who) {
  double *t = malloc(sizeof *t * (size_t)runs);
  if (!t) exit(1);
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now(CLOCK_THREAD_CPUTIME_ID);
    if (tec_module_run(m, name, nargs, args)) {
      fprintf(stderr, "%s: %s\n", who, tec_rt_last_error());
      exit(1);
    }
    t[r] = bench_now(CLOCK_THREAD_CPUTIME_ID) - t0;
  }
  double med = bench_median(t, runs);
  free(t);
  return med;
}

int bench_args_alloc(const struct lower_func *f, DLTensor *args, DLTensor **ap) {
  for (int i = 0; i < f->nuser; i++) {
    const te_tensor *t = f->user_args[i];
    int64_t shape[8];
    if (t->ndim > 8) return -1;
    for (int d = 0; d < t->ndim; d++)
      if (!ir_is_const_int(te_buffer_shape(t)[d], &shape[d])) return -1;
    if (tec_dl_alloc(&args[i], t->type, t->ndim, shape)) return -1;
    int64_t n = tec_dl_numel(&args[i]);
    for (int64_t k = 0; k < n; k++) {
      int v = (int)((k * 7919) % 17) - 8;
      if (t->type.code == TEC_FLOAT) ((float *)args[i].data)[k] = (float)(v + 9) / 160.0f;
      else if (t->type.bits == 8) ((int8_t *)args[i].data)[k] = (int8_t)(v * 7);
      else ((int32_t *)args[i].data)[k] = v * 100;
    }
    ap[i] = &args[i];
  }
  return f->nuser;
}

/* timer.c — the one timing loop: warm-up calls, then timed runs of a number of calls each
 * (seconds per call per run), and the median. The tuner's measurement (tune/measure.c),
 * `tec bench` (tools/driver_run.c), networks (net/run.c) and the benches time through it. In
 * the runtime (no LLVM) so an ahead-of-time program can time its kernels the same way. */
#include <stdlib.h>
#include <time.h>
#include "tec/runtime.h"

double tec_rt_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int32_t tec_rt_time(tec_rt_timed_fn fn, void *user, int warmup, int runs, int64_t calls,
                    double *secs) {
  int32_t rc = 0;
  for (int i = 0; i < warmup && rc == 0; i++) rc = fn(user);
  if (calls < 1) calls = 1;
  for (int r = 0; r < runs && rc == 0; r++) {
    int64_t k = 0;
    double t0 = tec_rt_now();
    while (k < calls && rc == 0) rc = fn(user), k++;
    if (secs) secs[r] = (tec_rt_now() - t0) / (double)k;
  }
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double tec_rt_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

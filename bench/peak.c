/* peak.c — the machine's FMA peak, measured: T threads run a loop of independent FMAs whose
 * operands never leave the registers, started together, and the bench reports its layers'
 * GFLOP/s as a share of what this loop reaches with the same number of threads. It is the
 * ceiling of the core (two 512-bit FMA pipes on Zen 5 and on the Xeons here), not of memory.
 *
 *   acc[0..15] = acc[i] * m + a      (16 chains, 4-cycle latency x 2 pipes needs >= 8)
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "common.h"
#include "peak.h"

void bench_cpu_model(char *buf, size_t size) {
  snprintf(buf, size, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512], model[256] = "", family[32] = "", mod[32] = "";
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (!colon) continue;
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    v[strcspn(v, "\n")] = 0;
    if (!strncmp(line, "model name", 10) && !model[0]) snprintf(model, sizeof model, "%s", v);
    else if (!strncmp(line, "cpu family", 10) && !family[0]) snprintf(family, sizeof family, "%s", v);
    else if (!strncmp(line, "model\t", 6) && !mod[0]) snprintf(mod, sizeof mod, "%s", v);
    if (model[0] && family[0] && mod[0]) break;
  }
  fclose(f);
  if (model[0]) snprintf(buf, size, "%s (family %s model %s)", model, family, mod);
}


static volatile float sink;

/* 16 chains x 16 lanes x 2 flops per iteration */
__attribute__((target("avx512f"))) static double loop_avx512(long iters) {
  __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  /* distinct starting values: equal chains would be merged into one by the compiler */
#define START(k) _mm512_set1_ps(1.0f + 0.01f * (k))
  __m512 c0 = START(0), c1 = START(1), c2 = START(2), c3 = START(3), c4 = START(4), c5 = START(5),
         c6 = START(6), c7 = START(7), c8 = START(8), c9 = START(9), c10 = START(10),
         c11 = START(11), c12 = START(12), c13 = START(13), c14 = START(14), c15 = START(15);
#undef START
  for (long i = 0; i < iters; i++) {
    c0 = _mm512_fmadd_ps(c0, m, a), c1 = _mm512_fmadd_ps(c1, m, a);
    c2 = _mm512_fmadd_ps(c2, m, a), c3 = _mm512_fmadd_ps(c3, m, a);
    c4 = _mm512_fmadd_ps(c4, m, a), c5 = _mm512_fmadd_ps(c5, m, a);
    c6 = _mm512_fmadd_ps(c6, m, a), c7 = _mm512_fmadd_ps(c7, m, a);
    c8 = _mm512_fmadd_ps(c8, m, a), c9 = _mm512_fmadd_ps(c9, m, a);
    c10 = _mm512_fmadd_ps(c10, m, a), c11 = _mm512_fmadd_ps(c11, m, a);
    c12 = _mm512_fmadd_ps(c12, m, a), c13 = _mm512_fmadd_ps(c13, m, a);
    c14 = _mm512_fmadd_ps(c14, m, a), c15 = _mm512_fmadd_ps(c15, m, a);
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                           _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)),
                                     _mm512_add_ps(_mm512_add_ps(c12, c13), _mm512_add_ps(c14, c15))));
  sink = _mm512_reduce_add_ps(s);
  return (double)iters * 16 * 16 * 2;
}

__attribute__((target("avx2,fma"))) static double loop_avx2(long iters) {
  __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  __m256 c[16];
  for (int k = 0; k < 16; k++) c[k] = _mm256_set1_ps(1.0f + 0.01f * (float)k); /* distinct */
  for (long i = 0; i < iters; i++)
    for (int k = 0; k < 16; k++) c[k] = _mm256_fmadd_ps(c[k], m, a); /* unrolled by -O2 */
  float out[8], s = 0;
  for (int k = 1; k < 16; k++) c[0] = _mm256_add_ps(c[0], c[k]);
  _mm256_storeu_ps(out, c[0]);
  for (int k = 0; k < 8; k++) s += out[k];
  sink = s;
  return (double)iters * 16 * 8 * 2;
}

static double loop_scalar(long iters) {
  float c[8] = {1.00f, 1.01f, 1.02f, 1.03f, 1.04f, 1.05f, 1.06f, 1.07f};
  for (long i = 0; i < iters; i++)
    for (int k = 0; k < 8; k++) c[k] = c[k] * 0.999999f + 1e-7f;
  sink = c[0] + c[7];
  return (double)iters * 8 * 2;
}

typedef double (*fma_loop)(long);

typedef struct worker {
  fma_loop loop;
  long iters;
  atomic_int *go; /* 0: wait, 1: run, -1: give up (a thread could not be started) */
  double flops;
} worker;

static void *run_worker(void *arg) {
  worker *w = arg;
  int go;
  while ((go = atomic_load(w->go)) == 0) _mm_pause();
  w->flops = go > 0 ? w->loop(w->iters) : 0;
  return NULL;
}

/* The GFLOP/s of `threads` copies of loop running iters iterations at once; -1 on failure. */
static double run_once(fma_loop loop, long iters, int threads) {
  pthread_t tid[64];
  worker w[64];
  atomic_int go = 0;
  if (threads < 1 || threads > 64) return -1;
  int started = 0;
  for (int t = 0; t < threads; t++) {
    w[t] = (worker){loop, iters, &go, 0};
    if (pthread_create(&tid[t], NULL, run_worker, &w[t])) break;
    started++;
  }
  double t0 = bench_now(CLOCK_MONOTONIC), flops = 0;
  atomic_store(&go, started == threads ? 1 : -1);
  for (int t = 0; t < started; t++) pthread_join(tid[t], NULL), flops += w[t].flops;
  double dt = bench_now(CLOCK_MONOTONIC) - t0;
  return started == threads && dt > 0 ? flops / dt * 1e-9 : -1;
}

double bench_fma_peak(int threads, double seconds, int tries, const char **isa) {
  fma_loop loop = loop_scalar;
  *isa = "scalar";
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) loop = loop_avx512, *isa = "AVX-512";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    loop = loop_avx2, *isa = "AVX2+FMA";
  /* calibrate: iterations for `seconds` on one thread (as fast as the first try ran) */
  long iters = 1 << 16;
  double g = run_once(loop, iters, 1);
  if (g <= 0) return -1;
  double per_iter = loop(1); /* flops per iteration */
  iters = (long)(seconds * g * 1e9 / per_iter);
  if (iters < (1 << 16)) iters = 1 << 16;
  double best = -1;
  for (int k = 0; k < tries; k++) {
    double r = run_once(loop, iters, threads);
    if (r > best) best = r;
  }
  return best;
}

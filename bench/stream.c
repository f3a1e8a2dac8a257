/* stream.c — a stream-like read probe: one thread sums a buffer with vector loads and 8
 * independent accumulators (loads, not FMAs, bound it), timed per pass. With `cold`, an
 * 8 MiB buffer is read before each pass so the probed one comes from L3, which is where the
 * round-robin of bench/run conv leaves a layer's input (every other implementation's calls
 * run in between). A layer's roofline bound is then max(FLOP / FMA peak, bytes / this).
 *
 *   for each pass: [read evict buffer]; t0; s[0..7] += buf[i + 0..7 vectors]; t1
 */
#include <immintrin.h>
#include <stdlib.h>
#include <time.h>
#include "common.h"
#include "stream.h"

static volatile float sink;

__attribute__((target("avx512f"))) static void sum_avx512(const float *p, size_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  for (size_t i = 0; i + 128 <= n; i += 128) {
    s0 = _mm512_add_ps(s0, _mm512_load_ps(p + i)), s1 = _mm512_add_ps(s1, _mm512_load_ps(p + i + 16));
    s2 = _mm512_add_ps(s2, _mm512_load_ps(p + i + 32)), s3 = _mm512_add_ps(s3, _mm512_load_ps(p + i + 48));
    s4 = _mm512_add_ps(s4, _mm512_load_ps(p + i + 64)), s5 = _mm512_add_ps(s5, _mm512_load_ps(p + i + 80));
    s6 = _mm512_add_ps(s6, _mm512_load_ps(p + i + 96)), s7 = _mm512_add_ps(s7, _mm512_load_ps(p + i + 112));
  }
  s0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)),
                     _mm512_add_ps(_mm512_add_ps(s4, s5), _mm512_add_ps(s6, s7)));
  sink = _mm512_reduce_add_ps(s0);
}

__attribute__((target("avx2"))) static void sum_avx2(const float *p, size_t n) {
  __m256 s[8];
  for (int k = 0; k < 8; k++) s[k] = _mm256_setzero_ps();
  for (size_t i = 0; i + 64 <= n; i += 64)
    for (int k = 0; k < 8; k++) s[k] = _mm256_add_ps(s[k], _mm256_load_ps(p + i + 8 * k));
  float o[8], t = 0;
  for (int k = 1; k < 8; k++) s[0] = _mm256_add_ps(s[0], s[k]);
  _mm256_storeu_ps(o, s[0]);
  for (int k = 0; k < 8; k++) t += o[k];
  sink = t;
}

static float *filled(size_t n) {
  float *p = aligned_alloc(64, n * sizeof *p);
  if (p)
    for (size_t i = 0; i < n; i++) p[i] = (float)(i & 7);
  return p;
}

double bench_read_bw(size_t bytes, int cold, int tries) {
  __builtin_cpu_init();
  void (*sum)(const float *, size_t) =
      __builtin_cpu_supports("avx512f") ? sum_avx512 : sum_avx2;
  size_t n = bytes / 512 * 128, ne = (8u << 20) / sizeof(float);
  if (n == 0) return -1;
  float *buf = filled(n), *ev = cold ? filled(ne) : NULL;
  if (!buf || (cold && !ev)) return free(buf), free(ev), -1;
  double best = 0;
  sum(buf, n);
  for (int k = 0; k < tries; k++) {
    if (cold) sum(ev, ne);
    double t0 = bench_now(CLOCK_MONOTONIC);
    sum(buf, n);
    double dt = bench_now(CLOCK_MONOTONIC) - t0;
    if (dt > 0 && n * sizeof(float) / dt * 1e-9 > best) best = n * sizeof(float) / dt * 1e-9;
  }
  free(buf), free(ev);
  return best;
}

/* driver_arm.c — the board's side of extern_sgemm: extern_gemm.o (emitted by extern_sgemm
 * --emit for AArch64) calls user_sgemm, the function its header declares; here it is a plain-C
 * GEMM over the regions it is given. Runs Y = relu((X * s) . W + b) (M 100, N 48, K 40, tiles
 * of 16 rows) and checks it against plain C. Cross-compiled and run under qemu by run_arm.sh.
 * Prints "ok". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "extern_gemm.h"
#include "tec/runtime.h"

enum { M = 100, N = 48, K = 40, TILE = 16 };
static int ncalls;

/* bufs: Xn's rows [rows, K], W [K, N], G's rows [rows, N]; strides in elements */
int32_t user_sgemm(const struct tec_extern_buffer *b, int32_t nbuf) {
  if (nbuf != 3) return 1;
  const DLTensor *a = &b[0].dl, *w = &b[1].dl, *g = &b[2].dl;
  const float *av = a->data, *wv = w->data;
  float *gv = g->data;
  for (int64_t i = 0; i < g->shape[0]; i++)
    for (int64_t j = 0; j < g->shape[1]; j++) {
      float acc = 0;
      for (int64_t k = 0; k < a->shape[1]; k++)
        acc += av[i * a->strides[0] + k * a->strides[1]] * wv[k * w->strides[0] + j * w->strides[1]];
      gv[i * g->strides[0] + j * g->strides[1]] = acc;
    }
  ncalls++;
  return 0;
}

static float *buffer(size_t n, unsigned seed) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
  }
  return p;
}

int main(void) {
  float *x = buffer(M * K, 1), *s = buffer(K, 2), *w = buffer(K * N, 3), *b = buffer(N, 4),
        *y = buffer(M * N, 5);
  if (extern_gemm_raw(x, s, w, b, y) != 0) {
    printf("extern_gemm_raw failed: %s\n", tec_rt_last_error());
    return 1;
  }
  double worst = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc += (double)(x[i * K + k] * s[k]) * w[k * N + j];
      double want = acc + b[j] > 0 ? acc + b[j] : 0;
      double e = fabs(y[i * N + j] - want) / (1 + fabs(want));
      if (!(e <= worst)) worst = e;
    }
  printf("aarch64: %d user_sgemm calls (tiles of %d rows), max relative error %.2e vs plain C\n",
         ncalls, TILE, worst);
  int ok = worst < 1e-5 && ncalls == (M + TILE - 1) / TILE;
  puts(ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

/* driver.c — a plain C program for the board: links kernels.o (from aot_gen) with
 * libtec_runtime.a, runs the GEMM and the depthwise 3x3 through both entry points and checks
 * them against naive loops. Cross-compiled and run under qemu by run.sh. Prints "ok". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"
#include "tec/runtime.h"

static float *buffer(size_t n, unsigned seed) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
  }
  return p;
}

static double max_err(const float *a, const float *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)a[i] - b[i]) / (1 + fabs((double)b[i]));
    if (!(e <= m)) m = e;
  }
  return m;
}

int main(void) {
  int bad = 0;
  enum { M = 64, N = 96, K = 128 };
  float *a = buffer(M * K, 1), *b = buffer(K * N, 2), *c = buffer(M * N, 3);
  float *ref = malloc(sizeof(float) * M * N);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += (double)a[i * K + k] * b[k * N + j];
      ref[i * N + j] = (float)s;
    }
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  DLTensor ta = tec_dl_view(a, TEC_F32, 2, sa), tb = tec_dl_view(b, TEC_F32, 2, sb),
           tc = tec_dl_view(c, TEC_F32, 2, sc);
  if (gemm((DLTensor *[]){&ta, &tb, &tc}, 3) != 0) {
    printf("gemm: %s\n", tec_rt_last_error());
    bad = 1;
  }
  double eg = max_err(c, ref, M * N);
  for (int i = 0; i < M * N; i++) c[i] = 0;
  gemm_raw(a, b, c);
  eg = fmax(eg, max_err(c, ref, M * N));
  printf("gemm %dx%dx%d: max error %.3g\n", M, N, K, eg);
  bad |= !(eg < 1e-5);
  /* the checked entry refuses a wrong shape instead of reading out of bounds */
  sc[1] = N - 1;
  if (gemm((DLTensor *[]){&ta, &tb, &tc}, 3) != -1) bad = 1;
  printf("gemm with a wrong shape: %s\n", tec_rt_last_error());

  enum { C = 32, H = 14, W = 16 };
  float *in = buffer((H + 2) * (W + 2) * C, 4), *wt = buffer(9 * C, 5), *out = buffer(H * W * C, 6);
  float *dref = malloc(sizeof(float) * H * W * C);
  for (int h = 0; h < H; h++)
    for (int w = 0; w < W; w++)
      for (int ch = 0; ch < C; ch++) {
        double s = 0;
        for (int y = 0; y < 3; y++)
          for (int x = 0; x < 3; x++)
            s += (double)in[((h + y) * (W + 2) + w + x) * C + ch] * wt[(y * 3 + x) * C + ch];
        dref[(h * W + w) * C + ch] = (float)s;
      }
  int64_t si[3] = {H + 2, W + 2, C}, sw[3] = {3, 3, C}, so[3] = {H, W, C};
  DLTensor tin = tec_dl_view(in, TEC_F32, 3, si), twt = tec_dl_view(wt, TEC_F32, 3, sw),
           tout = tec_dl_view(out, TEC_F32, 3, so);
  if (dw((DLTensor *[]){&tin, &twt, &tout}, 3) != 0) {
    printf("dw: %s\n", tec_rt_last_error());
    bad = 1;
  }
  double ed = max_err(out, dref, H * W * C);
  printf("depthwise 3x3 %dx%dx%d: max error %.3g\n", C, H, W, ed);
  bad |= !(ed < 1e-5);
  puts(bad ? "FAILED" : "ok");
  return bad;
}

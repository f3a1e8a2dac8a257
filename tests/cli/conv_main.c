/* conv_main.c — links the object `tec compile conv2d_nchwc ... --name conv` wrote (test_cli):
 * packs the kernel once with conv_prepare_raw, runs conv_run_raw twice on seeded data and
 * compares with a naive convolution written here on the NCHW8c indices. Prints the max error;
 * exit 0 if it is below 1e-4. Problem: n=1, c=16, h=10, w=9, oc=16, 3x3, stride 1, pad 1,
 * relu, NCHW8c in and out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conv.h"

enum { C = 16, H = 10, W = 9, OC = 16, K = 3, B = 8 };

static float *fill(size_t n, unsigned seed) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  for (size_t i = 0; p && i < n; i++)
    seed = seed * 1103515245u + 12345u, p[i] = (float)((seed >> 9) & 0xffff) / 32768.0f - 1.0f;
  return p;
}

int main(void) {
  float *x = fill((size_t)C * H * W, 1), *w = fill((size_t)OC * C * K * K, 2);
  float *out = fill((size_t)OC * H * W, 3); /* garbage: every element must be written */
  float *packed = aligned_alloc(64, (CONV_PACKED_KERNEL_P_BYTES + 63) / 64 * 64);
  if (!x || !w || !out || !packed) return 3;
  if (conv_prepare_raw(w, packed) != 0) return 4;
  for (int rep = 0; rep < 2; rep++)
    if (conv_run_raw(x, out, packed) != 0) return 5;
  double err = 0;
  for (int o = 0; o < OC; o++)
    for (int y = 0; y < H; y++)
      for (int xx = 0; xx < W; xx++) {
        double acc = 0;
        for (int c = 0; c < C; c++)
          for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++) {
              int yy = y + i - 1, xj = xx + j - 1;
              if (yy < 0 || yy >= H || xj < 0 || xj >= W) continue;
              acc += (double)x[(((c / B) * H + yy) * W + xj) * B + c % B] * w[((o * C + c) * K + i) * K + j];
            }
        if (acc < 0) acc = 0;
        double got = out[(((o / B) * H + y) * W + xx) * B + o % B];
        double e = fabs(got - acc) / (1 + fabs(acc));
        if (!(e <= err)) err = e; /* NaN too */
      }
  printf("conv: max error %.3g\n", err);
  free(x), free(w), free(out), free(packed);
  return err < 1e-4 ? 0 : 1;
}

/* insn_bench.c — tec's NEON kernels on the qemu-insn layers (shared/tools/qemu-insn), for
 * counting executed AArch64 instructions per call (scripts/arm_insn.sh builds and runs it).
 *
 *   insn_bench LAYER [CALLS]     LAYER: mbv1_pw_mid | mbv1_dw_mid | mbv1_dw1
 *
 * One warm-up call, then INSN_MARK() and CALLS calls each followed by INSN_MARK(), as the
 * XNNPACK benchmark beside the plugin does. Calls go through the checked DLTensor entry.
 * Layouts: pw_mid is the GEMM weights[256, 256] x input[256, 784] (NCHW 1x1); the depthwise
 * layers are NHWC on an input already zero-padded by one pixel. 257 output points are checked
 * against a double-precision reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "insn_marker.h"
#include "layers.h"     /* the layer table of shared/tools/qemu-insn */
#include "tec/runtime.h"
#include "tec_layers.h" /* aot_gen TARGET DIR layers */

static float *buf(size_t n, unsigned seed) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  fill_rand(p, n, seed);
  return p;
}

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "mbv1_dw_mid";
  int calls = argc > 2 ? atoi(argv[2]) : 3;
  const layer_t *l = find_layer(name);
  if (!l) return fprintf(stderr, "insn_bench: unknown layer %s\n", name), 2;
  int32_t (*fn)(DLTensor *const *, int32_t) = NULL;
  int64_t s0[3], s1[3], s2[3];
  int nd;
  float *x, *w, *y;
  if (strcmp(name, "mbv1_pw_mid") == 0) {
    int64_t P = (int64_t)l->H * l->W;
    nd = 2, fn = pw_mid;
    s0[0] = l->K, s0[1] = l->C, s1[0] = l->C, s1[1] = P, s2[0] = l->K, s2[1] = P;
    w = buf((size_t)(l->K * l->C), 1), x = buf((size_t)(l->C * P), 2), y = buf((size_t)(l->K * P), 3);
  } else if (strcmp(name, "mbv1_dw_mid") == 0 || strcmp(name, "mbv1_dw1") == 0) {
    nd = 3, fn = strcmp(name, "mbv1_dw1") == 0 ? dw1 : dw_mid;
    s0[0] = l->H + 2, s0[1] = l->W + 2, s0[2] = l->C;
    s1[0] = 3, s1[1] = 3, s1[2] = l->C;
    s2[0] = l->H, s2[1] = l->W, s2[2] = l->C;
    x = buf((size_t)(s0[0] * s0[1] * s0[2]), 2), w = buf((size_t)(9 * l->C), 1);
    y = buf((size_t)(l->H * l->W * l->C), 3);
    for (int64_t h = 0; h < s0[0]; h++) /* the zero border */
      for (int64_t c = 0; c < s0[1]; c++)
        if (h == 0 || c == 0 || h == s0[0] - 1 || c == s0[1] - 1)
          memset(&x[(h * s0[1] + c) * l->C], 0, sizeof(float) * (size_t)l->C);
  } else {
    return fprintf(stderr, "insn_bench: tec has no kernel for %s here\n", name), 2;
  }
  DLTensor t0, t1, t2;
  if (nd == 2) t0 = tec_dl_view(w, TEC_F32, 2, s0), t1 = tec_dl_view(x, TEC_F32, 2, s1);
  else t0 = tec_dl_view(x, TEC_F32, 3, s0), t1 = tec_dl_view(w, TEC_F32, 3, s1);
  t2 = tec_dl_view(y, TEC_F32, nd, s2);
  DLTensor *args[3] = {&t0, &t1, &t2};
  if (fn(args, 3) != 0) return fprintf(stderr, "insn_bench: %s\n", tec_rt_last_error()), 1;
  INSN_MARK();
  for (int i = 0; i < calls; i++) {
    fn(args, 3);
    INSN_MARK();
  }
  double maxerr = 0;
  for (int k = 0; k < 257; k++) {
    double ref = 0, got;
    if (nd == 2) {
      int64_t P = s1[1], co = (k * 7919) % l->K, p = (k * 104729) % P;
      for (int ci = 0; ci < l->C; ci++) ref += (double)w[co * l->C + ci] * x[ci * P + p];
      got = y[co * P + p];
    } else {
      int64_t h = (k * 7) % l->H, ww = (k * 13) % l->W, c = (k * 31) % l->C;
      for (int ry = 0; ry < 3; ry++)
        for (int rx = 0; rx < 3; rx++)
          ref += (double)x[((h + ry) * s0[1] + ww + rx) * l->C + c] * w[(ry * 3 + rx) * l->C + c];
      got = y[(h * l->W + ww) * l->C + c];
    }
    if (!(fabs(got - ref) <= maxerr)) maxerr = fabs(got - ref);
  }
  printf("%s: %d calls, check %s (max abs error %.3g over 257 points)\n", name, calls,
         maxerr < 1e-4 ? "OK" : "FAILED", maxerr);
  return maxerr < 1e-4 ? 0 : 1;
}

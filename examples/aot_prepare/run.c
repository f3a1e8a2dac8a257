/* run.c — a C program that uses the ahead-of-time depthwise operator: it packs the constant
 * kernel once with dw_prepare into a buffer of DW_PACKED_..._BYTES, then calls dw_run a few
 * times, and checks the output against a naive loop. Needs only the object, its header and
 * libtec_runtime.a (no LLVM). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "tec/runtime.h"
#include "dw.h"

#define C 32
#define H 14
#define W 14

int main(void) {
  int64_t sx[4] = {1, C, H, W}, sk[4] = {C, 1, 3, 3}, sb[1] = {C};
  DLTensor x, k, b, o;
  if (tec_dl_alloc(&x, TEC_F32, 4, sx) || tec_dl_alloc(&k, TEC_F32, 4, sk) ||
      tec_dl_alloc(&b, TEC_F32, 1, sb) || tec_dl_alloc(&o, TEC_F32, 4, sx)) {
    fprintf(stderr, "run: %s\n", tec_rt_last_error());
    return 1;
  }
  float *px = x.data, *pk = k.data, *pb = b.data, *po = o.data;
  for (int i = 0; i < C * H * W; i++) px[i] = (float)((i * 7) % 19) / 19.0f - 0.5f;
  for (int i = 0; i < C * 9; i++) pk[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
  for (int i = 0; i < C; i++) pb[i] = (float)(i % 5) / 5.0f - 0.2f;
  /* the packed kernel: allocated by the caller (size and shape from the header), filled
   * once by prepare, then read by every run */
  int64_t ps[DW_PACKED_KERNEL_GLOBAL_GLOBAL_NDIM] = DW_PACKED_KERNEL_GLOBAL_GLOBAL_SHAPE;
  void *packed = tec_rt_alloc(DW_PACKED_KERNEL_GLOBAL_GLOBAL_BYTES);
  if (!packed) return 1;
  DLTensor pk_t = tec_dl_view(packed, TEC_F32, DW_PACKED_KERNEL_GLOBAL_GLOBAL_NDIM, ps);
  int status = 0;
  if (dw_prepare((DLTensor *[]){&k, &pk_t}, 2) != 0) {
    fprintf(stderr, "dw_prepare: %s\n", tec_rt_last_error());
    return 1;
  }
  for (int call = 0; call < 3; call++)
    if (dw_run((DLTensor *[]){&x, &b, &o, &pk_t}, 4) != 0) {
      fprintf(stderr, "dw_run: %s\n", tec_rt_last_error());
      return 1;
    }
  double err = 0;
  for (int c = 0; c < C; c++)
    for (int y = 0; y < H; y++)
      for (int xx = 0; xx < W; xx++) {
        float acc = 0;
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++) {
            int yy = y + i - 1, xj = xx + j - 1;
            if (yy >= 0 && yy < H && xj >= 0 && xj < W)
              acc += px[(c * H + yy) * W + xj] * pk[(c * 3 + i) * 3 + j];
          }
        acc += pb[c];
        acc = acc > 0 ? acc : 0;
        double e = fabs((double)acc - po[(c * H + y) * W + xx]);
        if (e > err) err = e;
      }
  if (err > 1e-4) status = 1;
  printf("aot depthwise: dw_prepare once, dw_run 3 times: max error %.3g (%s)\n", err,
         status ? "WRONG" : "ok");
  tec_rt_free(packed);
  tec_dl_free(&x), tec_dl_free(&k), tec_dl_free(&b), tec_dl_free(&o);
  return status;
}

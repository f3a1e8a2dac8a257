/* xnn_qconv_bench.c - XNNPACK NHWC int8 convolution (qc8: int8 activations with a zero point,
 * int8 weights with one scale per output channel, int32 bias, fp32 requantization: tec's scheme,
 * docs/quantized.md), one layer, 1 thread (no pthreadpool), with insn markers around each timed
 * call, for counting under qemu-aarch64 + libinsn.so. The int8 twin of xnn_conv_bench.c.
 *
 *   xnn_qconv_bench LAYER [CALLS]     (CALLS timed calls, default 3, after 1 warm-up call)
 *
 * A GEMM M x N x K is the layer {C = K, H = M, W = 1, K = N, 1x1}: XNNPACK runs a 1x1
 * convolution as its GEMM microkernel over the pixels. Markers: one before the first timed call
 * and one after each call. Output clamp [-128, 127] (no activation), bias random; 257 outputs
 * checked against a reference of the scheme (double accumulation, requantization rounded to
 * nearest even), within 1 LSB (XNNPACK folds the scales in another order). */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "insn_marker.h"
#include "layers.h"

#define IN_SCALE 0.05f
#define IN_ZP 3
#define OUT_ZP (-5)

static void fill_i8(int8_t *p, size_t n, unsigned seed, int lo, int hi) {
  unsigned s = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = (int8_t)(lo + (int)((s >> 8) % (unsigned)(hi - lo + 1)));
  }
}

/* reference int8 output (NHWC) of one element; kernel [G][Kg][kh][kw][Cg] */
static int ref_out(const layer_t *l, const int8_t *in, const int8_t *w, const int32_t *b,
                   const float *ws, float out_scale, int oh, int ow, int k) {
  int G = l->g, Cg = l->C / G, Kg = l->K / G, g = k / Kg;
  int64_t acc = b[k];
  for (int y = 0; y < l->kh; y++) {
    int ih = oh * l->s - l->p + y;
    if (ih < 0 || ih >= l->H) continue;
    for (int x = 0; x < l->kw; x++) {
      int iw = ow * l->s - l->p + x;
      if (iw < 0 || iw >= l->W) continue;
      for (int c = 0; c < Cg; c++)
        acc += (int64_t)(in[((size_t)ih * l->W + iw) * l->C + g * Cg + c] - IN_ZP) *
               w[(((size_t)k * l->kh + y) * l->kw + x) * Cg + c];
    }
  }
  double f = nearbyint((double)acc * ((double)ws[k] * IN_SCALE / out_scale)) + OUT_ZP;
  return f < -128 ? -128 : f > 127 ? 127 : (int)f;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LAYER [CALLS]\n", argv[0]);
    return 2;
  }
  const layer_t *l = find_layer(argv[1]);
  int calls = argc > 2 ? atoi(argv[2]) : 3;
  if (!l) {
    fprintf(stderr, "unknown layer %s\n", argv[1]);
    return 2;
  }
  enum xnn_status st = xnn_initialize(NULL);
  if (st != xnn_status_success) {
    fprintf(stderr, "xnn_initialize failed: status %d\n", (int)st);
    return 1;
  }
  int Ho = out_h(l), Wo = out_w(l), G = l->g, Cg = l->C / G, Kg = l->K / G;
  size_t nin = (size_t)l->C * l->H * l->W, nout = (size_t)l->K * Ho * Wo;
  size_t nw = (size_t)l->K * Cg * l->kh * l->kw;
  /* XNNPACK may read a little past the end of the input (XNN_EXTRA_BYTES) */
  int8_t *in = calloc(nin + 64, 1), *out = calloc(nout + 64, 1), *w = calloc(nw, 1);
  int32_t *b = calloc((size_t)l->K, sizeof(int32_t));
  float *ws = calloc((size_t)l->K, sizeof(float));
  fill_i8(in, nin, 3, -128, 127);
  fill_i8(w, nw, 4, -127, 127);
  for (int k = 0; k < l->K; k++) {
    b[k] = (int32_t)((k * 7919) % 2001) - 1000;
    ws[k] = 0.002f * (1.0f + (float)(k % 7) / 7.0f);
  }
  /* outputs spread over the int8 range: |acc| ~ 64 * 74 * sqrt(taps) */
  float out_scale = 0.002f * IN_SCALE * 64.0f * 74.0f * sqrtf((float)(Cg * l->kh * l->kw)) / 40.0f;
  xnn_operator_t op = NULL;
  st = xnn_create_convolution2d_nhwc_qc8(l->p, l->p, l->p, l->p, l->kh, l->kw, l->s, l->s, 1, 1, G, Cg,
                                         Kg, l->C, l->K, IN_ZP, IN_SCALE, ws, w, b, OUT_ZP, out_scale,
                                         -128, 127, 0, &op);
  if (st != xnn_status_success) {
    fprintf(stderr, "xnn_create_convolution2d_nhwc_qc8 failed: status %d\n", (int)st);
    return 1;
  }
  st = xnn_setup_convolution2d_nhwc_qc8(op, 1, l->H, l->W, in, out, NULL);
  if (st != xnn_status_success) {
    fprintf(stderr, "xnn_setup_convolution2d_nhwc_qc8 failed: status %d\n", (int)st);
    return 1;
  }
  if (calls > 0 && xnn_run_operator(op, NULL) != xnn_status_success) { /* warm-up */
    fprintf(stderr, "xnn_run_operator failed\n");
    return 1;
  }
  INSN_MARK();
  for (int c = 0; c < calls; c++) {
    xnn_run_operator(op, NULL);
    INSN_MARK();
  }
  int maxerr = 0, checked = 0, spread_lo = 127, spread_hi = -128;
  if (calls > 0) {
    for (int t = 0; t < 257; t++) {
      int oh = (t * 7) % Ho, ow = (t * 13 + t / 5) % Wo, k = (t * 31) % l->K;
      if (t == 0) oh = ow = 0;
      if (t == 1) oh = Ho - 1, ow = Wo - 1, k = l->K - 1;
      int r = ref_out(l, in, w, b, ws, out_scale, oh, ow, k);
      int got = out[((size_t)oh * Wo + ow) * l->K + k];
      if (abs(r - got) > maxerr) maxerr = abs(r - got);
      spread_lo = got < spread_lo ? got : spread_lo, spread_hi = got > spread_hi ? got : spread_hi;
      checked++;
    }
  }
  printf("layer %s impl xnnpack_qc8_nhwc calls %d macs %.0f check %d points (outputs %d..%d) "
         "max LSB error %d %s\n", l->name, calls, layer_macs(l), checked, spread_lo, spread_hi, maxerr,
         calls == 0 ? "n/a" : (maxerr <= 1 ? "OK" : "MISMATCH"));
  xnn_delete_operator(op);
  free(in), free(out), free(w), free(b), free(ws);
  return maxerr <= 1 ? 0 : 1;
}

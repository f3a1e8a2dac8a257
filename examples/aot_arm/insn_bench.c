/* insn_bench.c — tec's topi templates on the qemu-insn layers (shared/tools/qemu-insn), for
 * counting executed AArch64 instructions per call (scripts/arm_insn.sh builds and runs it).
 *
 *   insn_bench LAYER [CALLS]     LAYER: a name of tec_layers_meta.h (layers_gen TARGET DIR)
 *
 * The layer's prepare runs once (the weights packed: not counted), then one warm-up call of
 * run, then INSN_MARK() and CALLS calls each followed by INSN_MARK(), as the XNNPACK benchmark
 * beside the plugin does. Calls go through the checked DLTensor entries, each given the
 * arguments its meta row names (prepare_args / run_args: d data, k kernel, b bias, o out), then
 * the packed tensors. Data in the layer's layout (NCHW[b]c: the block after the spatial dims;
 * NCHW; NHWC), weights OIHW, bias, ReLU fused; 257 output points are checked against a
 * double-precision reference (float16 layers, TL_F16: on the float16-rounded inputs, within
 * 0.1 absolute: float16 accumulation over up to 1152 products, docs/fp16.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "insn_marker.h"
#include "tec/runtime.h"
#include "tec_layers_meta.h"

#if TL_F16
typedef _Float16 tl_t; /* the layers' element type */
#define TL_DT TEC_F16
#define TL_TOL 0.1
#else
typedef float tl_t;
#define TL_DT TEC_F32
#define TL_TOL 1e-4
#endif

/* "NCHW4c", "NCHW", "NHWC" for a meta block */
static const char *layout(int b, char *buf, size_t n) {
  if (b > 0) snprintf(buf, n, "NCHW%dc", b);
  else snprintf(buf, n, "%s", b ? "NHWC" : "NCHW");
  return buf;
}

static void rnd(float *p, size_t n, unsigned seed) {
  unsigned s = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = ((float)(s >> 8) / 16777216.0f) - 0.5f;
  }
}

/* element (c, y, x) of an activation of C channels in block b (0: NCHW, -1: NHWC), batch 1 */
static size_t at(int b, int C, int H, int W, int c, int y, int x) {
  if (!b) return ((size_t)c * H + y) * W + x;
  if (b < 0) return ((size_t)y * W + x) * C + c;
  return (((size_t)(c / b) * H + y) * W + x) * b + c % b;
}

/* shape: 5 int64 that outlive the view */
static DLTensor act(int b, int C, int H, int W, tl_t **data, int64_t *s) {
  s[0] = 1, s[1] = C, s[2] = H, s[3] = W, s[4] = 0;
  int nd = 4;
  if (b > 0) s[1] = (C + b - 1) / b, s[4] = b, nd = 5;
  size_t n = (size_t)s[1] * H * W * (b > 0 ? b : 1);
  if (b < 0) s[1] = H, s[2] = W, s[3] = C;
  *data = tec_rt_alloc(n * sizeof(tl_t));
  memset(*data, 0, n * sizeof(tl_t));
  return tec_dl_view(*data, TL_DT, nd, s);
}

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "mbv1_dw_mid";
  int calls = argc > 2 ? atoi(argv[2]) : 3;
  const tl_layer *l = NULL;
  for (int i = 0; i < TL_NLAYERS; i++)
    if (!strcmp(tl_layers[i].name, name)) l = &tl_layers[i];
  if (!l) return fprintf(stderr, "insn_bench: no layer %s in tec_layers_meta.h\n", name), 2;
  int OH = (l->h + 2 * l->p - l->kh) / l->s + 1, OW = (l->w + 2 * l->p - l->kh) / l->s + 1;
  int cig = l->c / l->g;
  size_t nx = (size_t)l->c * l->h * l->w, nw = (size_t)l->k * cig * l->kh * l->kh;
  float *x = malloc(nx * sizeof(float)), *wf = malloc(nw * sizeof(float));
  float *bf = malloc((size_t)l->k * sizeof(float));
  tl_t *xl, *yl, *packed[6];
  tl_t *w = tec_rt_alloc(nw * sizeof(tl_t)), *b = tec_rt_alloc((size_t)l->k * sizeof(tl_t));
  rnd(x, nx, 2), rnd(wf, nw, 1), rnd(bf, (size_t)l->k, 3);
  /* the reference reads the values the layer reads (rounded to float16 for TL_F16) */
  for (size_t i = 0; i < nx; i++) x[i] = (float)(tl_t)x[i];
  for (size_t i = 0; i < nw; i++) w[i] = (tl_t)wf[i];
  for (int i = 0; i < l->k; i++) b[i] = (tl_t)bf[i];
  static int64_t sx[5], sy[5];
  DLTensor tx = act(l->in_block, l->c, l->h, l->w, &xl, sx);
  DLTensor ty = act(l->out_block, l->k, OH, OW, &yl, sy);
  for (int c = 0; c < l->c; c++)
    for (int y = 0; y < l->h; y++)
      for (int xx = 0; xx < l->w; xx++)
        xl[at(l->in_block, l->c, l->h, l->w, c, y, xx)] = x[((size_t)c * l->h + y) * l->w + xx];
  int64_t sw[4] = {l->k, cig, l->kh, l->kh}, sb = l->k;
  DLTensor tw = tec_dl_view(w, TL_DT, 4, sw), tb = tec_dl_view(b, TL_DT, 1, &sb), tp[6];
  DLTensor *pargs[12], *rargs[12];
  int np = 0, nr = 0;
  const char *roles[2] = {l->prepare_args, l->run_args};
  for (int r = 0; r < 2; r++)
    for (const char *c = roles[r]; *c; c++) {
      DLTensor *t = *c == 'd' ? &tx : *c == 'k' ? &tw : *c == 'b' ? &tb : &ty;
      if (r) rargs[nr++] = t;
      else pargs[np++] = t;
    }
  for (int j = 0; j < l->npacked; j++) {
    size_t n = 1;
    for (int k = 0; k < l->packed_ndim[j]; k++) n *= (size_t)l->packed_shape[j][k];
    packed[j] = tec_rt_alloc(n * sizeof(tl_t));
    tp[j] = tec_dl_view(packed[j], TL_DT, l->packed_ndim[j], l->packed_shape[j]);
    pargs[np++] = rargs[nr++] = &tp[j];
  }
  if (l->prepare(pargs, np) != 0 || l->run(rargs, nr) != 0)
    return fprintf(stderr, "insn_bench: %s\n", tec_rt_last_error()), 1;
  INSN_MARK();
  for (int i = 0; i < calls; i++) {
    l->run(rargs, nr);
    INSN_MARK();
  }
  double maxerr = 0;
  for (int k = 0; k < 257; k++) {
    int co = (k * 31) % l->k, oy = (k * 7) % OH, ox = (k * 13) % OW, g = co / (l->k / l->g);
    double ref = (double)b[co];
    for (int ci = 0; ci < cig; ci++)
      for (int ry = 0; ry < l->kh; ry++)
        for (int rx = 0; rx < l->kh; rx++) {
          int y = oy * l->s + ry - l->p, xx = ox * l->s + rx - l->p;
          if (y < 0 || y >= l->h || xx < 0 || xx >= l->w) continue;
          ref += (double)x[((size_t)(g * cig + ci) * l->h + y) * l->w + xx] *
                 (double)w[(((size_t)co * cig + ci) * l->kh + ry) * l->kh + rx];
        }
    ref = ref > 0 ? ref : 0;
    double got = (double)yl[at(l->out_block, l->k, OH, OW, co, oy, ox)];
    if (!(fabs(got - ref) <= maxerr)) maxerr = fabs(got - ref);
  }
  double macs = (double)l->k * OH * OW * cig * l->kh * l->kh;
  char li[16], lo[16];
  printf("%s: %s %s->%s %s, %d calls, check %s (max abs error %.3g over 257 points) macs=%.0f\n",
         name, l->tmpl, layout(l->in_block, li, sizeof li), layout(l->out_block, lo, sizeof lo),
         l->config, calls, maxerr < TL_TOL ? "OK" : "FAILED", maxerr, macs);
  return maxerr < TL_TOL ? 0 : 1;
}

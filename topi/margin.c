/* margin.c — activations with a zero margin (topi.h, "Margins"): the refusal of the templates
 * that take margin 0, the margins of a layout's dimensions set on an output or residual
 * (te_tensor_set_margin: the window of the caller's buffer), and for whatever fills arguments,
 * which input has a ring that must hold zeros and the fill itself:
 *
 *   NCHW16c+m1, logical [1][2][3][3][16]:  data [1][2][5][5][16], ring zeroed (topi_zero_ring)
 *                                           out  [1][2][3][3][16] margin[0+0, 0+0, 1+1, 1+1, 0+0]
 */
#include <string.h>
#include "topi/internal.h"

const char *topi_margin_refused(tec_ctx *ctx, const char *who, const char *what, topi_layout l) {
  if (!l.margin) return NULL;
  return tec_ctx_printf(ctx, "%s layout %s has a margin of %lld; %s takes margin 0 only (margins: "
                             "conv2d_nchwc, depthwise_nchwc, dw_pw_fused's data and out)",
                        what, topi_layout_str(ctx, l), (long long)l.margin, who);
}

int topi_layout_margins(topi_layout l, int64_t *before, int64_t *after) {
  int nd = l.kind == TOPI_NCHWC ? 5 : 4, hd = l.kind == TOPI_NHWC ? 1 : 2;
  for (int i = 0; i < nd; i++) before[i] = after[i] = i == hd || i == hd + 1 ? l.margin : 0;
  return nd;
}

int topi_arg_zero_ring(const topi_template *t, const void *problem, int arg, int64_t *before,
                       int64_t *after) {
  if (!t || !problem || arg != 0) return 0; /* the data argument comes first everywhere */
  topi_layout l;
  switch (t->problem_kind) {
  case TOPI_PROBLEM_CONV2D: l = ((const topi_conv2d *)problem)->in_layout; break;
  case TOPI_PROBLEM_DW_PW: l = ((const topi_dw_pw *)problem)->dw.in_layout; break;
  case TOPI_PROBLEM_POOL: l = ((const topi_pool *)problem)->in_layout; break;
  case TOPI_PROBLEM_LAYOUT: l = ((const topi_layout_problem *)problem)->from; break;
  case TOPI_PROBLEM_ELTWISE: l = ((const topi_eltwise *)problem)->layout; break;
  default: return 0;
  }
  return l.margin > 0 ? topi_layout_margins(l, before, after) : 0;
}

/* Zeroes the ring of dimensions d.. of the block at data (inner: elements per index of d). */
static void zero_ring_dim(float *data, int d, int ndim, const int64_t *ext, const int64_t *inner,
                          const int64_t *before, const int64_t *after) {
  for (int64_t i = 0; i < ext[d]; i++) {
    float *p = data + i * inner[d];
    if (i < before[d] || i >= ext[d] - after[d]) memset(p, 0, sizeof *p * (size_t)inner[d]);
    else if (d + 1 < ndim) zero_ring_dim(p, d + 1, ndim, ext, inner, before, after);
  }
}

void topi_zero_ring(float *data, int ndim, const int64_t *extents, const int64_t *before,
                    const int64_t *after) {
  int64_t inner[8];
  if (ndim < 1 || ndim > 8) return;
  inner[ndim - 1] = 1;
  for (int d = ndim - 1; d > 0; d--) inner[d - 1] = inner[d] * extents[d];
  zero_ring_dim(data, 0, ndim, extents, inner, before, after);
}

const char *topi_conv2d_margin_refused(tec_ctx *ctx, const char *who, const topi_conv2d *p) {
  const char *w = topi_margin_refused(ctx, who, "input", p->in_layout);
  return w ? w : topi_margin_refused(ctx, who, "output", p->out_layout);
}

int topi_set_margin(tec_ctx *ctx, const char *who, te_tensor *t, topi_layout l) {
  if (!l.margin) return 0;
  int64_t before[5], after[5];
  topi_layout_margins(l, before, after);
  if (te_tensor_set_margin(ctx, t, before, after) == 0) return 0;
  const char *why = tec_ctx_strdup(ctx, tec_ctx_error(ctx));
  tec_ctx_clear_error(ctx);
  return tec_ctx_set_error(ctx, "%s: %s in layout %s: %s", who, t->name, topi_layout_str(ctx, l),
                           why ? why : "");
}

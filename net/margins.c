/* margins.c — the padding of a convolution's input written once, not per call: each
 * activation's margin (a zero ring around h and w, topi.h "Margins") is the largest padding of
 * the convolutions reading it, when every layer writing or reading it honours margins (else 0).
 * The image (value 0) is the caller's, copied in: none. A residual has its consumer's output
 * layout, so the residual and that output share one margin (grouped: the largest of the group,
 * 0 if any member cannot). The layers' problems then carry their values' layouts.
 *
 *   before: conv1 -> v1 [NCHW16c] -> dw1 (pad 1)     after: v1 [NCHW16c+m1]: conv1 writes the
 *                                                    interior, dw1 reads its ring as padding */
#include <string.h>
#include "net/internal.h"

/* 1 if layer L reads and writes activations with margins. */
static int honours_margins(const net_layer *L) {
  return L->op == NET_CONV &&
         (!strcmp(L->tmpl, "conv2d_nchwc") || !strcmp(L->tmpl, "depthwise_nchwc"));
}

static int root(int *up, int v) {
  while (up[v] != v) v = up[v] = up[up[v]];
  return v;
}

void net_set_margins(net *n) {
  int up[NET_MAX_LAYERS], ok[NET_MAX_LAYERS];
  int64_t m[NET_MAX_LAYERS];
  for (int v = 0; v < n->nvalues; v++) up[v] = v, ok[v] = v > 0, m[v] = 0;
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    if (!honours_margins(L)) {
      ok[L->in] = ok[L->out] = 0;
      if (L->res >= 0) ok[L->res] = 0;
      continue;
    }
    int64_t pad = L->conv.pad_h > L->conv.pad_w ? L->conv.pad_h : L->conv.pad_w;
    if (pad > m[L->in]) m[L->in] = pad;
    if (L->res >= 0) up[root(up, L->res)] = root(up, L->out);
  }
  for (int v = 0; v < n->nvalues; v++) { /* the group's verdict and margin at its root */
    int r = root(up, v);
    ok[r] = ok[r] && ok[v];
    if (m[v] > m[r]) m[r] = m[v];
  }
  for (int v = 0; v < n->nvalues; v++) {
    int r = root(up, v);
    n->values[v].layout.margin = ok[r] ? m[r] : 0;
  }
  for (int i = 0; i < n->nlayers; i++) {
    net_layer *L = &n->layers[i];
    if (L->op != NET_CONV) continue;
    L->conv.in_layout = n->values[L->in].layout;
    L->conv.out_layout = n->values[L->out].layout;
  }
}

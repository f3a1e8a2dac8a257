/* netref.c — see netref.h. */
#include <stdlib.h>
#include <string.h>
#include "convref.h"
#include "netref.h"
#include "opsref.h"

void nr_forward(const net *n, const float *image, float *logits, float *probs) {
  float **v = calloc((size_t)n->nvalues, sizeof *v);
  for (int i = 0; i < n->nvalues; i++) {
    const net_value *x = &n->values[i];
    v[i] = calloc((size_t)(x->n * x->c * x->h * x->w), sizeof(float));
  }
  memcpy(v[0], image, sizeof(float) * (size_t)(n->values[0].n * n->values[0].c * n->values[0].h * n->values[0].w));
  for (int i = 0; i < n->nlayers; i++) {
    const net_layer *L = &n->layers[i];
    switch (L->op) {
    case NET_CONV: cr_conv2d(&L->conv, v[L->in], L->w, L->b, L->res >= 0 ? v[L->res] : NULL, v[L->out]); break;
    case NET_POOL: or_pool2d(&L->pool, 0, v[L->in], v[L->out]); break;
    case NET_GPOOL: or_pool2d(&L->pool, 1, v[L->in], v[L->out]); break;
    case NET_FC:
      or_fc(L->fc.m, L->fc.n, L->fc.k, v[L->in], L->w, L->b, L->fc.epi.act, v[L->out]);
      memcpy(logits, v[L->out], sizeof(float) * (size_t)(L->fc.m * L->fc.n));
      break;
    case NET_SOFTMAX:
      or_softmax(L->softmax.m, L->softmax.n, v[L->in], v[L->out]);
      memcpy(probs, v[L->out], sizeof(float) * (size_t)(L->softmax.m * L->softmax.n));
      break;
    }
  }
  for (int i = 0; i < n->nvalues; i++) free(v[i]);
  free(v);
}

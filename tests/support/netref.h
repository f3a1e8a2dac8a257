/* netref.h — the naive reference of a whole network (include/tec/net.h, examples/net/models.h): the same layer list
 * and weights, computed layer by layer on plain NCHW arrays with the naive references
 * (cr_conv2d, or_pool2d, or_fc, or_softmax), no tec involved. */
#ifndef TEC_NETREF_H
#define TEC_NETREF_H

#include "net/models.h"

/* logits and probs: [batch][classes] each. */
void nr_forward(const net *n, const float *image, float *logits, float *probs);

#endif

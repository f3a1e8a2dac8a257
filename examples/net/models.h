/* models.h — the example networks as builder calls over the network library
 * (include/tec/net.h): MobileNet v1, MobileNet v2 and ResNet-18, seeded weights. Shared by the examples
 * (examples/mobilenet_v1.c, examples/resnet18.c, examples/net_aot), the test
 * (tests/test_net.c) and the benches (bench/net.c, bench/tune_study.c).
 *
 *   net *n = model_create(&(model_options){.kind = NET_MOBILENET_V1, .size = 224,
 *                                          .width = 1.0, .classes = 1000, .seed = 1},
 *                         err, sizeof err);
 *   net_compile(n); net_prepare(n); net_run(n, image, NULL); net_probs(n) ... net_free(n); */
#ifndef TEC_EXAMPLES_MODELS_H
#define TEC_EXAMPLES_MODELS_H

#include "tec/net.h"

typedef enum net_kind { NET_MOBILENET_V1, NET_RESNET18, NET_MOBILENET_V2 } net_kind;

typedef struct model_options {
  net_kind kind;
  int64_t batch;    /* 0: 1 */
  int64_t size;     /* input height = width; 0: 224 */
  double width;     /* channel multiplier (MobileNet's alpha; ResNet: 64 * width first); 0: 1 */
  int64_t classes;  /* 0: 1000 */
  int64_t block;    /* channels per block of the packed layout; 0: the host's float lanes */
  unsigned seed;    /* the weights' and biases' generator */
  int no_margins;   /* net_options.no_margins */
  int direct;       /* net_options.direct */
  const char *records; /* net_options.records */
} model_options;

/* The network of kind with its weights (no tec work yet). NULL with a message in err. */
net *model_create(const model_options *o, char *err, size_t errlen);
/* "MobileNet v1", "MobileNet v2" or "ResNet-18" */
const char *model_title(net_kind kind);

#endif

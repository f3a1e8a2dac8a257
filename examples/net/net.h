/* net.h — whole networks (MobileNet v1, ResNet-18) declared from topi templates, shared by the
 * examples (examples/mobilenet_v1.c, examples/resnet18.c) and the test (tests/test_net.c).
 *
 *   net *n = net_create(&(net_options){.kind = NET_MOBILENET_V1, .size = 224, .width = 1.0,
 *                                      .classes = 1000, .seed = 1}, err, sizeof err);
 *   net_compile(n);             every layer instantiated (default config, or the best tuning
 *                               record of its workload with .records), one module
 *   net_prepare(n);             every weight packed once (the templates' prepare steps)
 *   net_run(n, image, secs);    the layers in order; secs[i]: layer i's time (or NULL)
 *   net_probs(n)                [batch][classes], the softmax output
 *
 * The activations stay in NCHW[x]c (x = options.block) between layers: the stem convolution
 * reads the NCHW image in place and the global pool writes NCHW [n][c][1][1], which the fully
 * connected layer reads as [n][c], so no layout-transform pass runs anywhere. Bias, relu /
 * relu6 and ResNet's residual add are fused into the convolutions' epilogues. Weights and
 * biases come from a seeded generator (He-uniform), stored plain (OIHW, [classes][c]) in the
 * layer, so a reference can compute the same network (tests/support/netref.c).
 *
 * Margins (topi.h): an activation that only convolutions on conv2d_nchwc / depthwise_nchwc
 * write and read gets the largest padding of its readers as a zero ring (NCHW16c+m1): the
 * producer writes the interior, the next 3x3 convolution reads its padding from the ring with
 * no compare and no copy. A residual shares its consumer's output margin. Value buffers
 * (net_value_floats: the ring included) are zeroed once, in net_compile; nothing writes the
 * rings. MobileNet v1: every pointwise output (the depthwise layers' inputs); ResNet-18 with
 * the picked templates: the 7x7 stage (winograd takes the rest, and takes margin 0). */
#ifndef TEC_NET_H
#define TEC_NET_H

#include "tec/tec.h"

typedef enum net_kind { NET_MOBILENET_V1, NET_RESNET18 } net_kind;

typedef struct net_options {
  net_kind kind;
  int64_t batch;    /* 0: 1 */
  int64_t size;     /* input height = width; 0: 224 */
  double width;     /* channel multiplier (MobileNet's alpha; ResNet: 64 * width first); 0: 1 */
  int64_t classes;  /* 0: 1000 */
  int64_t block;    /* channels per block of the packed layout; 0: the host's float lanes */
  unsigned seed;    /* the weights' and biases' generator */
  int no_margins;   /* 1: every activation without a margin (the layouts before margins) */
  int direct;       /* 1: every convolution on the direct templates (conv2d_nchwc,
                       depthwise_nchwc); 0: topi_conv2d_pick's choice per layer (winograd on
                       ResNet's 3x3 stride-1 layers of 14x14 and up) */
  const char *records; /* tuning records (tune/, JSON lines; NULL: every layer on its
                          template's default config). net_compile / net_lower give each layer
                          the fastest record of its workload (template + net_layer_shape) for
                          the target (tune_apply_best); a layer without one keeps the default,
                          with a warning naming it on stderr and in its `note`. The string must
                          outlive the network. */
} net_options;

typedef enum net_op { NET_CONV, NET_POOL, NET_GPOOL, NET_FC, NET_SOFTMAX } net_op;

/* One activation: logical (n, c, h, w), its layout and its buffer (after net_compile). */
typedef struct net_value {
  int64_t n, c, h, w;
  topi_layout layout;
  float *data;
} net_value;

typedef struct net_layer {
  char name[32];       /* "conv1", "dw3", "layer2_0_conv1", ... (also the function's name) */
  net_op op;
  const char *tmpl;    /* the topi template */
  topi_conv2d conv;    /* NET_CONV (depthwise: groups == c_in) */
  topi_pool pool;      /* NET_POOL, NET_GPOOL */
  topi_dense fc;       /* NET_FC: a [batch][c] x w [classes][c]^T + bias */
  topi_softmax softmax;
  int in, out, res;    /* value ids; res: the residual (conv epilogue) or -1 */
  float *w, *b;        /* plain weights (OIHW or [classes][c]) and bias, or NULL */
  /* with options.records (set by net_compile / net_lower): the config the layer was built
   * with ("oc_tiles=2 ow_tile=14 ..."), 1 if a record gave it (0: the default), and the
   * warning that names the layer's workload and the default used ("" when tuned) */
  int tuned;
  char config[256];
  char note[768];
  /* the call (net_compile) */
  int nargs;
  DLTensor t[5];
  DLTensor *args[5];
  int64_t shape[5][5];
} net_layer;

typedef struct net {
  net_options opt;
  int nlayers, nvalues;
  net_layer *layers;
  net_value *values;   /* value 0: the NCHW input image; the last: the probabilities */
  tec_ctx *ctx;
  tec_module *mod;
  char err[512];
} net;

/* The network's layers and weights (no tec work yet). NULL with a message in err. */
net *net_create(const net_options *o, char *err, size_t errlen);
/* Instantiates every layer's template with its default config for the host (or its best
 * record: options.records), lowers them and builds one module; allocates the activations. 0,
 * or -1 with net_error() (also when the records file cannot be read). */
int net_compile(net *n);
/* Instantiates every layer's template with its default config (or best record for the
 * target: options.records) for `target` (NULL: the host;
 * "rasp4b", "llvm -mtriple=...": tec_target_str) and lowers it into funcs[0..nlayers), in
 * n's context, without building anything: what an ahead-of-time generator emits
 * (examples/net_aot). Create the network with .block = the target's float lanes. 0, or -1
 * with net_error(). */
int net_lower(net *n, const char *target, lower_func **funcs);
/* Layer i's problem as `tec tune --shape` text ("n=1,c=32,h=112,w=112,oc=32,kh=3,...": every
 * key of its template's problem kind spelled out, so `tec tune TEMPLATE --shape TEXT` tunes the
 * same workload), written into buf (truncated to len); returns buf. The workload a tuning
 * record names is the layer's template, a space, then this text canonicalized
 * (tune_problem_canon). */
const char *net_layer_shape(const net *n, int i, char *buf, size_t len);
/* The floats value v's buffer holds (its layout's padded channel blocks and its margin's ring
 * included). */
int64_t net_value_floats(const net *n, int v);
/* Packs every constant (the templates' prepare steps). 0, or -1 with net_error(). */
int net_prepare(net *n);
/* Runs the layers on image (NCHW [batch][3][size][size]); layer i's seconds in secs[i] unless
 * secs is NULL. 0, or -1 with net_error(). */
int net_run(net *n, const float *image, double *secs);
/* The output [batch][classes] (probabilities) and the logits before the softmax. */
const float *net_probs(const net *n);
const float *net_logits(const net *n);
/* A seeded image in [-1, 1) (the caller frees). */
float *net_image(const net *n, unsigned seed);
const char *net_error(const net *n);
/* What both examples do: compile (timed), prepare (timed), one warm-up run, then `iters` runs
 * of a seeded image; prints each layer's template, output shape and median time, the median
 * total and the top-5 classes to stdout. 0, or -1 with net_error(). */
int net_bench(net *n, int iters);
/* The examples' main: argv [iters [size [width]]]; prints the error and returns 1 on failure. */
int net_example_main(net_kind kind, const char *title, int argc, char **argv);
void net_free(net *n);

#endif

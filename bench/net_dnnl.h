/* net_dnnl.h — oneDNN running the same network as tec (bench/net.c): built from tec's layer
 * list (include/tec/net.h), same shapes and weights. */
#ifndef TEC_BENCH_NET_DNNL_H
#define TEC_BENCH_NET_DNNL_H
#include <dnnl.h>
#include "net/models.h"

#define MAX_STEPS 4 /* oneDNN primitives per tec layer (a reorder, the op) */

typedef struct dn_step {
  dnnl_primitive_t prim;
  int nargs;
  dnnl_exec_arg_t args[5];
} dn_step;

typedef struct dn_net {
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  int nlayers;
  int nsteps[64];
  dn_step steps[64][MAX_STEPS];
  dn_step edge;          /* the image (NCHW) reordered into the first layer's format, or none */
  int has_edge;
  dnnl_memory_t mem[64]; /* per net value (aliases allowed: see own[]) */
  int own[64];           /* mem[v] is v's own (destroyed with the net) */
  dnnl_memory_t extra[256]; /* weights, biases, reorder targets, the user image */
  int nextra;
  dnnl_alg_kind_t alg;   /* the convolutions' algorithm (winograd: auto where it has none) */
  dnnl_alg_kind_t alg_used[64]; /* per layer, what it got (convolutions only) */
  char impl[64][64];
  char err[256];
} dn_net;

/* oneDNN's network for tec's layer list n, reading the NCHW image at `image`, its
 * convolutions by algorithm alg (dnnl_convolution_direct, _auto, or _winograd: auto for the
 * layers oneDNN has no winograd for). 0, or -1 with d->err. */
int dn_build(dn_net *d, const net *n, float *image, dnnl_alg_kind_t alg);
/* One run: secs[0..nlayers) each layer, secs[nlayers] the input edge's reorder. 0 or -1. */
int dn_run(dn_net *d, double *secs);
/* value v's buffer (plain for the logits: format nc) */
const float *dn_logits(dn_net *d, int v);
void dn_free(dn_net *d);

#endif

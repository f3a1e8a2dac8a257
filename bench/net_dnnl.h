/* net_dnnl.h — oneDNN running the same network as tec (bench/net.c): built from tec's layer
 * list (include/tec/net.h), same shapes and weights. */
#ifndef TEC_BENCH_NET_DNNL_H
#define TEC_BENCH_NET_DNNL_H
#include <dnnl.h>
#include "net/models.h"

#define MAX_STEPS 4 /* oneDNN primitives per tec layer (a reorder, the op) */
#define DN_MAX 128  /* layers and values (the int8 network's residual adds are layers) */

/* a oneDNN call; on failure d->err names the layer (who) and the call, and -1 is returned */
#define DN(call)                                                                                   \
  do {                                                                                             \
    dnnl_status_t st_ = (call);                                                                    \
    if (st_ != dnnl_success) {                                                                     \
      snprintf(d->err, sizeof d->err, "%s: %s: status %d", who, #call, (int)st_);                  \
      return -1;                                                                                   \
    }                                                                                              \
  } while (0)

typedef struct dn_step {
  dnnl_primitive_t prim;
  int nargs;
  dnnl_exec_arg_t args[6];
} dn_step;

typedef struct dn_net {
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  int nlayers;
  int nsteps[DN_MAX];
  dn_step steps[DN_MAX][MAX_STEPS];
  dn_step edge;          /* the image (NCHW) reordered into the first layer's format, or none */
  int has_edge;
  dnnl_memory_t mem[DN_MAX]; /* per net value (aliases allowed: see own[]) */
  int own[DN_MAX];          /* mem[v] is v's own (destroyed with the net) */
  dnnl_memory_t extra[512]; /* weights, biases, reorder targets, the user image, zero points */
  int nextra;
  dnnl_alg_kind_t alg;   /* the convolutions' algorithm (winograd: auto where it has none) */
  dnnl_alg_kind_t alg_used[DN_MAX]; /* per layer, what it got (convolutions only) */
  char impl[DN_MAX][64];
  int32_t zp[2 * DN_MAX]; /* int8: the runtime zero points' storage */
  int nzp;
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

/* oneDNN's int8 network for tec's int8 layer list q (include/tec/qnet.h; bench/net_dnnl_int8.c),
 * reading q's quantized input (value 0, NCHW[x]c s8): s8 activations and weights, s32 bias,
 * per-channel output scales, zero points as run-time arguments, clip and the residual as
 * post-ops (a residual add fused into its convolution as a sum with its scale and zero point;
 * the add layer then has no step). Logits (f32, real units): dn_logits_f32. 0, or -1 with d->err. */
struct qnet;
int dn_build_int8(dn_net *d, const struct qnet *q);
const float *dn_logits_f32(dn_net *d, int v);

/* the helpers net_dnnl.c shares with net_dnnl_int8.c; who names the layer in errors */
dnnl_memory_t dn_keep(dn_net *d, dnnl_memory_t m);
int dn_add_step(dn_net *d, int li, dnnl_primitive_t p, int nargs, const dnnl_exec_arg_t *a);
/* runs a reorder once (weights) or, with li >= 0, adds it as a step of layer li */
int dn_reorder(dn_net *d, const char *who, int li, dnnl_memory_t src, dnnl_memory_t dst);
/* user memory of the given plain format and type over data (weights, bias, the input) */
int dn_user_mem(dn_net *d, const char *who, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag,
                dnnl_data_type_t dt, void *data, dnnl_memory_t *out);
/* value v's memory, reordered into want (a step of layer li) if the primitive chose another */
int dn_source(dn_net *d, const char *who, int li, int v, const dnnl_memory_desc_t *want,
              dnnl_memory_t *out);
/* a pooling step of layer li: value in to a new value out (dims dd, type dt, format any) */
int dn_pool_step(dn_net *d, const char *who, int li, int in, int out, const dnnl_dims_t dd,
                 dnnl_alg_kind_t alg, const dnnl_dims_t str, const dnnl_dims_t ker,
                 const dnnl_dims_t pad, dnnl_data_type_t dt);
/* the primitive of pd, its implementation's name kept for --layers */
int dn_pd_finish(dn_net *d, const char *who, int li, dnnl_primitive_desc_t pd, dnnl_primitive_t *prim);

#endif

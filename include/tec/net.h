/* net.h — a network of topi operators: the layers (each a topi template on its problem), the
 * activations between them, their layouts and margins; built into one module, its weights
 * packed once, run layer by layer; or lowered and emitted ahead of time as one object, a header
 * and a C prepare/run pair. The models themselves (MobileNet v1 and v2, ResNet-18) are the
 * examples' (examples/net/models.c): a model is a list of builder calls. A network's int8 twin:
 * include/tec/qnet.h. With options.autosched the same layers have no template: each is declared
 * as plain te compute and scheduled by the auto-scheduler (net/auto.c; net_tune_auto tunes them
 * with its task scheduler).
 *
 *   net *n = net_new(&(net_options){.seed = 1}, 3, 224, 224, err, sizeof err);
 *   int x = net_conv(n, "conv1", 0, 32, 3, 2, 0, TOPI_ACT_RELU6, -1);   value 0: the image
 *   ...                                                                  (NCHW [batch][c][h][w])
 *   x = net_global_pool(n, "avgpool", x);  x = net_dense(n, "fc", x, 1000);
 *   net_softmax(n, "softmax", x);
 *   net_compile(n);             every layer instantiated (default config, or the best tuning
 *                               record of its workload with .records), one module
 *   net_prepare(n);             every weight packed once (the templates' prepare steps)
 *   net_run(n, image, secs);    the layers in order; secs[i]: layer i's time (or NULL)
 *   net_probs(n)                the last value (the softmax output)
 *
 * A builder refuses what the layer cannot read (a residual whose shape or layout differs from
 * the output, a dense input that is not NCHW [n][c][1][1], a value that does not exist, ...)
 * with a message in net_error() naming the layer, and the network stays as it was. A builder
 * given -1 as its input (an earlier refusal) returns -1 and keeps the first message, so a model
 * checks once, at the end.
 *
 * The activations stay in NCHW[x]c (x = options.block) between convolutions: the stem reads the
 * NCHW image in place and the global pool writes NCHW [n][c][1][1], which the dense layer reads
 * as [n][c]. Bias, the activation and a residual add are fused into the convolutions'
 * epilogues. Weights and biases come from a seeded generator (He-uniform), stored plain (OIHW,
 * [classes][c]) in the layer, so a reference can compute the same network.
 *
 * Margins (topi.h): an activation that only convolutions on conv2d_nchwc / depthwise_nchwc
 * write and read gets the largest padding of its readers as a zero ring (NCHW16c+m1): the
 * producer writes the interior, the next 3x3 convolution reads its padding from the ring with
 * no compare and no copy. A residual shares its consumer's output margin. Margins are decided
 * when the network is compiled or lowered (net_finish); value buffers (net_value_floats: the
 * ring included) are zeroed once, in net_compile; nothing writes the rings. */
#ifndef TEC_NET_H
#define TEC_NET_H

#include <stdio.h>
#include "tec/tec.h"
#include "tec/tune.h"
#include "tec/autosched.h"

#define NET_MAX_LAYERS 64 /* layers and values of one network */

typedef struct net_options {
  int64_t batch;    /* 0: 1 */
  int64_t block;    /* channels per block of the packed layout; 0: the host's float lanes */
  unsigned seed;    /* the weights' and biases' generator (0: 1) */
  int no_margins;   /* 1: every activation without a margin (the layouts before margins) */
  int direct;       /* 1: every convolution on the direct templates (conv2d_nchwc,
                       depthwise_nchwc); 0: topi_conv2d_pick's choice per layer (winograd on
                       3x3 stride-1 layers of 14x14 and up) */
  const char *records; /* tuning records (tune/, JSON lines; NULL: every layer on its
                          template's default config). net_compile / net_lower give each layer
                          the fastest record of its workload (template + net_layer_shape) for
                          the target (tune_apply_best); a layer without one keeps the default,
                          with a warning naming it on stderr and in its `note`. The string must
                          outlive the network. */
  int autosched;    /* 1: no template: every layer is its direct template's declaration (te
                       compute: conv2d_nchwc, depthwise_nchwc, pool2d, global_pool, dense,
                       softmax; the same NCHW[x]c layouts and margins, .direct implied) scheduled
                       by the auto-scheduler (tec/autosched.h): the instant mode, or with
                       .records each layer's best record of its program (tec_autoschedule_tuned:
                       keyed by the program's structural hash; a layer without one keeps the
                       instant schedule, with the warning in its `note`). net_tune_auto tunes
                       such a network. */
} net_options;

typedef enum net_op {
  NET_CONV,    /* conv2d (groups 1) or depthwise, bias + act + optional residual fused */
  NET_POOL,    /* pool2d */
  NET_GPOOL,   /* global_pool: packed -> NCHW [n][c][1][1] */
  NET_FC,      /* dense: a [batch][c] x w [classes][c]^T + bias */
  NET_SOFTMAX  /* softmax over [batch][classes] */
} net_op;

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
  topi_dense fc;       /* NET_FC */
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
  net_value *values;   /* value 0: the NCHW input image; the last: the network's output */
  int finished;        /* margins decided (net_finish) */
  uint32_t rng;        /* the weights' generator state */
  tec_ctx *ctx;
  tec_module *mod;
  char err[512];
} net;

/* ---- building (net/build.c) ---- */

/* An empty network whose value 0 is the input image NCHW [batch][c][h][w]. NULL with a message
 * in err (bad options or sizes, out of memory). */
net *net_new(const net_options *o, int64_t c, int64_t h, int64_t w, char *err, size_t errlen);
/* Each builder appends one layer reading value `in` and returns its output value's id, or -1
 * with net_error() naming the layer and what is wrong (the network is left as it was).
 * A k x k convolution, stride s, padding (k-1)/2, c_out channels (depthwise: c_out must equal
 * the input's channels), bias and act fused, plus the residual value res (or -1), which must
 * have the output's channels, height, width and layout. */
int net_conv(net *n, const char *name, int in, int64_t c_out, int64_t k, int64_t s, int depthwise,
             topi_act act, int res);
/* Max pool k x k, stride s, padding pad (packed in, packed out). */
int net_max_pool(net *n, const char *name, int in, int64_t k, int64_t s, int64_t pad);
/* Global average pool: any layout in, NCHW [n][c][1][1] out. */
int net_global_pool(net *n, const char *name, int in);
/* Fully connected to `classes`, bias fused; in must be NCHW [batch][c][1][1]. */
int net_dense(net *n, const char *name, int in, int64_t classes);
/* Softmax over the channels of an NCHW [batch][c][1][1] value. */
int net_softmax(net *n, const char *name, int in);
/* Decides every activation's margin (unless options.no_margins) and writes the values' layouts
 * into the layers' problems; net_compile and net_lower call it. No layer may be added after. */
int net_finish(net *n);

/* ---- compiling and running (net/compile.c, net/run.c) ---- */

/* Instantiates every layer's template with its default config for the host (or its best
 * record: options.records), lowers them and builds one module; allocates the activations. 0,
 * or -1 with net_error() (also when the records file cannot be read). */
int net_compile(net *n);
/* Instantiates every layer's template with its default config (or best record for the
 * target: options.records) for `target` (NULL: the host; "rasp4b", "llvm -mtriple=...":
 * tec_target_str) and lowers it into funcs[0..nlayers), in n's context, without building
 * anything: what an ahead-of-time generator emits (net_emit). Create the network with .block =
 * the target's float lanes. 0, or -1 with net_error(). */
int net_lower(net *n, const char *target, lower_func **funcs);
/* Layer i's problem as `tec tune --shape` text (topi_problem_str: every key of its template's
 * problem kind spelled out, so `tec tune TEMPLATE --shape TEXT` tunes the same workload),
 * written into buf (truncated to len); returns buf. The workload a tuning record names is the
 * layer's template, a space, then this text canonicalized (tune_problem_canon). */
const char *net_layer_shape(const net *n, int i, char *buf, size_t len);
/* Layer i's tuning task for target (NULL: the host) in ctx (tune_task_topi): its template on
 * its problem, the workload net_compile / net_lower look its records up by (a layer tuned
 * through this task is found by options.records). 0, or -1 with an error in ctx. */
int net_task(const net *n, int i, tec_ctx *ctx, const char *target, tune_task *task);
/* Layer i's problem (a topi_conv2d, topi_pool, topi_dense or topi_softmax). */
const void *net_layer_problem(const net_layer *L);
/* The floats value v's buffer holds (its layout's padded channel blocks and its margin's ring
 * included). */
int64_t net_value_floats(const net *n, int v);
/* Packs every constant (the templates' prepare steps). 0, or -1 with net_error(). */
int net_prepare(net *n);
/* Runs the layers on image (NCHW, value 0's shape); layer i's seconds in secs[i] unless secs is
 * NULL. 0, or -1 with net_error(). */
int net_run(net *n, const float *image, double *secs);
/* The output (the last value) and the value before it (the logits before a softmax). */
const float *net_probs(const net *n);
const float *net_logits(const net *n);
/* The output's channels (classes). */
int64_t net_classes(const net *n);
/* A seeded image in [-1, 1) (the caller frees). */
float *net_image(const net *n, unsigned seed);
/* The message of the last refusal. */
const char *net_error(const net *n);
void net_free(net *n);

/* Compiles (timed), prepares (timed), one warm-up run, then `iters` runs of a seeded image
 * (tec_rt_time); prints to f each layer's template, output shape and median time, the median
 * total and the top-5 classes. 0, or -1 with net_error(). */
int net_report(net *n, int iters, FILE *f);

/* ---- the auto-scheduler's network tuning (net/auto.c) ---- */

typedef struct net_tune_auto_options {
  int trials;          /* the trial budget over the network's tasks (>= the number of tasks) */
  int batch;           /* trials per round (0: 4) */
  const char *tuner;   /* NULL: xgb when built in, else random */
  unsigned seed;
  const char *records; /* appended, one record per trial (required: what options.records of a
                          later network reads) */
  int repeats;         /* timed calls per trial, each after its predecessor's call (0: 5) */
  double rtol;         /* output check: |x - ref| <= rtol * (1 + |ref|) (0: 1e-3) */
  int progress;        /* 1: a line per round on stderr */
  int wall;            /* 1: each call timed on the wall clock; 0: in the process's CPU time
                          when the runtime runs one thread (another tenant's preemptions are
                          not counted: on a loaded machine a 2 ms call measured on the wall
                          clock was 7x its time), else the wall clock */
} net_tune_auto_options;

/* Tunes network n (options.autosched = 1) with the task scheduler (tec_autosched_tune_tasks):
 * its layers' programs deduplicated into tasks by structural hash, a budget of trials shared
 * by their share of the network's time, each candidate measured where its layer runs: the
 * network compiled (instant, or n's records) and run once on a seeded image, then per trial the
 * candidate built, its weights packed, and `repeats` times the predecessor layer run (the layer
 * before it, or the image copied in for the first) and right after it the candidate, timed
 * alone: its inputs are the activations the network computed, in the cache state the
 * predecessor left. Its first output is checked against the network's own (a wrong candidate
 * is recorded as such and the activation restored). The result (tasks, trials, the rounds'
 * order) in ctx's arena. n stays compiled as it was: build a network with options.records =
 * o->records to run the tuned schedules. 0, or -1 with net_error(). */
int net_tune_auto(net *n, const net_tune_auto_options *o, tec_ctx *ctx,
                  tec_autosched_tasks_result *r);

/* ---- as text (net/text.c) ---- */

/* A network from text, one line per layer, the builders' arguments as key=value pairs, values
 * named by the layer writing them ("input": the image):
 *   input c=3 h=32 w=32                       (n=BATCH: options.batch)
 *   conv NAME in=VALUE oc=N k=K [stride=S] [depthwise=1] [act=none|relu|relu6] [res=VALUE]
 *   maxpool NAME in=VALUE k=K [stride=S] [pad=P]
 *   gpool NAME in=VALUE      dense NAME in=VALUE n=N      softmax NAME in=VALUE
 * '#' starts a comment line. NULL with "net_parse: line L: why" in err (a builder's refusal
 * included). What `tec net FILE` reads. */
net *net_parse(const net_options *o, const char *text, char *err, size_t errlen);
/* n as that text (ctx's arena): net_parse(net_text(n)) builds the same layers. */
const char *net_text(const net *n, tec_ctx *ctx);

/* ---- ahead of time (net/emit.c) ---- */

/* Lowers the network for target (net_lower) and writes into dir files a plain C program links
 * with libtec_runtime.a only:
 *   net_layers.o, .h   every layer (tec_emit: object and header)
 *   net_model.c, .h    the network's prepare/run pair over those layers:
 *                        net_model_prepare(params)            once: the weights packed
 *                        net_model_run(image, logits, probs)  per image
 *                      (activations and packed weights in static 64-byte aligned buffers;
 *                      net_model_hook, if set, is called after each layer)
 *   params.bin         the seeded weights and biases (floats, layer order, each array starting
 *                      on a 16-float boundary), what net_model_prepare reads
 * The generated comments say "generated by GENERATOR: TITLE, for TARGET". *nparams: the floats
 * of params.bin (may be NULL). 0, or -1 with net_error(). */
int net_emit(net *n, const char *target, const char *dir, const char *generator, const char *title,
             int64_t *nparams);

#endif

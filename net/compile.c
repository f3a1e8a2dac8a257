/* compile.c — a network's layers to code: each layer's template instantiated for a target on
 * its default config, or on the best tuning record of its workload (tune_apply_best), lowered,
 * and either built into one JIT module with the activations allocated and every layer's call
 * (its DLTensors) made once (net_compile), or left lowered for an ahead-of-time emitter
 * (net_lower). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net/internal.h"
#include "tec/tune.h"

int net_finish(net *n) {
  if (n->finished) return 0;
  if (n->nlayers == 0) return net_fail(n, "net_finish: the network has no layers");
  if (!n->opt.no_margins) net_set_margins(n);
  n->finished = 1;
  return 0;
}

const void *net_layer_problem(const net_layer *L) {
  switch (L->op) {
  case NET_CONV: return &L->conv;
  case NET_POOL:
  case NET_GPOOL: return &L->pool;
  case NET_FC: return &L->fc;
  default: return &L->softmax;
  }
}

static topi_problem_kind problem_kind(const net_layer *L) {
  switch (L->op) {
  case NET_CONV: return TOPI_PROBLEM_CONV2D;
  case NET_POOL:
  case NET_GPOOL: return TOPI_PROBLEM_POOL;
  case NET_FC: return TOPI_PROBLEM_DENSE;
  default: return TOPI_PROBLEM_SOFTMAX;
  }
}

const char *net_layer_shape(const net *n, int i, char *buf, size_t len) {
  tec_ctx *c = tec_ctx_new();
  const char *s = c ? topi_problem_str(c, problem_kind(&n->layers[i]), net_layer_problem(&n->layers[i])) : NULL;
  snprintf(buf, len, "%s", s ? s : "?");
  tec_ctx_free(c);
  return buf;
}

int net_task(const net *n, int i, tec_ctx *ctx, const char *target, tune_task *task) {
  if (i < 0 || i >= n->nlayers)
    return tec_ctx_set_error(ctx, "net_task: layer %d; the layers are 0..%d", i, n->nlayers - 1);
  if (n->opt.autosched) /* its layers have no template: their records come from net_tune_auto */
    return tec_ctx_set_error(ctx, "net_task: the network was made with options.autosched = 1: its "
                                  "layers are scheduled by the auto-scheduler, not a template; "
                                  "tune them with net_tune_auto");
  const net_layer *L = &n->layers[i];
  char shape[512];
  return tune_task_topi(ctx, topi_template_find(L->tmpl), net_layer_problem(L),
                        net_layer_shape(n, i, shape, sizeof shape), target, task);
}

/* With options.records: the file read once up front, its unreadable lines reported on stderr
 * (once, not per layer) and a file that cannot be read refused. 0, or -1 with net_error(). */
static int check_records(net *n, const char *who) {
  if (!n->opt.records) return 0;
  tec_ctx *tmp = tec_ctx_new();
  tune_record *recs;
  int nrec;
  if (!tmp || tune_records_load(tmp, n->opt.records, stderr, &recs, &nrec) != 0) {
    net_fail(n, "%s: %s", who, tmp ? tec_ctx_error(tmp) : "out of memory");
    tec_ctx_free(tmp);
    return -1;
  }
  tec_ctx_free(tmp);
  return 0;
}

/* Layer i's template scheduled into op in n's ctx for target: the default config
 * (topi_instantiate), or with options.records the best record of the layer's workload for the
 * target (tune_apply_best: a warning naming the workload and the default used when there is
 * none, kept in L->note). 0, or -1 with net_error() ("who: layer NAME: why"). */
static int instantiate(net *n, int i, const char *who, const tec_target *target, topi_op *op) {
  net_layer *L = &n->layers[i];
  const topi_template *t = topi_template_find(L->tmpl);
  if (!t) return net_fail(n, "%s: no template %s", who, L->tmpl);
  if (n->opt.autosched) return net_auto_instantiate(n, i, who, target, op);
  const void *p = net_layer_problem(L);
  if (!n->opt.records) {
    if (topi_instantiate(n->ctx, t, p, target, op) == 0) return 0;
    return net_fail(n, "%s: layer %s: %s", who, L->name, tec_ctx_error(n->ctx));
  }
  const char *why = NULL;
  tune_space sp;
  topi_decl *d = tec_ctx_alloc(n->ctx, sizeof *d);
  if (!d || !t->applies(n->ctx, p, &why) || t->declare(n->ctx, p, d) ||
      t->space(n->ctx, p, target, &sp))
    return net_fail(n, "%s: layer %s: %s", who, L->name, why ? why : tec_ctx_error(n->ctx));
  void *cfg = tec_ctx_alloc(n->ctx, sp.config_size);
  tec_ctx *tmp = tec_ctx_new(); /* the records are read into its arena, freed per layer */
  char shape[512];
  const char *warning = NULL;
  int rc = cfg && tmp ? tune_apply_best_for(tmp, n->opt.records, t->name,
                                            net_layer_shape(n, i, shape, sizeof shape), target,
                                            &sp, cfg, &warning, 0)
                      : -1;
  if (rc < 0) {
    net_fail(n, "%s: layer %s: %s", who, L->name, cfg && tmp ? tec_ctx_error(tmp) : "out of memory");
    tec_ctx_free(tmp);
    return -1;
  }
  L->tuned = rc == 1;
  snprintf(L->note, sizeof L->note, "%s", warning ? warning : "");
  if (warning) fprintf(stderr, "%s: layer %s: %s\n", who, L->name, warning);
  tec_ctx_free(tmp);
  const char *cs = tune_config_str(n->ctx, &sp, cfg);
  snprintf(L->config, sizeof L->config, "%s", cs ? cs : "");
  if (t->schedule(d, cfg, target, op) == 0) return 0;
  return net_fail(n, "%s: layer %s: %s", who, L->name, tec_ctx_error(n->ctx));
}

/* Every layer lowered for target tg into funcs. 0, or -1 with net_error(). */
static int lower_all(net *n, const char *who, const tec_target *tg, lower_func **funcs) {
  for (int i = 0; i < n->nlayers; i++) {
    net_layer *L = &n->layers[i];
    topi_op op;
    if (instantiate(n, i, who, tg, &op)) return -1;
    if (!(funcs[i] = tec_lower(op.sched, L->name, op.nargs, op.args)))
      return net_fail(n, "%s: layer %s: %s", who, L->name, tec_ctx_error(n->ctx));
  }
  return 0;
}

int net_lower(net *n, const char *target, lower_func **funcs) {
  if (net_finish(n)) return -1;
  if (!n->ctx && !(n->ctx = tec_ctx_new())) return net_fail(n, "net_lower: out of memory");
  if (check_records(n, "net_lower")) return -1;
  const tec_target *tg = tec_target_parse(n->ctx, target); /* once for every layer */
  if (!tg) return net_fail(n, "net_lower: %s", tec_ctx_error(n->ctx));
  return lower_all(n, "net_lower", tg, funcs);
}

/* ---- the calls: one DLTensor per argument, made once ---- */

static DLTensor tensor(float *data, int ndim, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device = (DLDevice){kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = (DLDataType){kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

/* Appends an argument of ndim dims (the shape given) over data to L's call. */
static void arg(net_layer *L, float *data, int ndim, const int64_t *shape) {
  int k = L->nargs++;
  memcpy(L->shape[k], shape, sizeof(int64_t) * (size_t)ndim);
  L->t[k] = tensor(data, ndim, L->shape[k]);
  L->args[k] = &L->t[k];
}

/* An activation in its layout's tensor shape: its whole buffer (the margin's ring included). */
static void act_arg(net_layer *L, const net_value *v) {
  int64_t s[5], h = v->h + 2 * v->layout.margin, w = v->w + 2 * v->layout.margin;
  int nd = 4;
  if (v->layout.kind == TOPI_NCHWC) {
    s[0] = v->n, s[1] = (v->c + v->layout.block - 1) / v->layout.block, s[2] = h;
    s[3] = w, s[4] = v->layout.block, nd = 5;
  } else {
    s[0] = v->n, s[1] = v->c, s[2] = h, s[3] = w;
  }
  arg(L, v->data, nd, s);
}

int64_t net_value_floats(const net *n, int v) {
  const net_value *x = &n->values[v];
  int64_t c = x->c, m = x->layout.margin;
  if (x->layout.kind == TOPI_NCHWC) c = (c + x->layout.block - 1) / x->layout.block * x->layout.block;
  return x->n * c * (x->h + 2 * m) * (x->w + 2 * m);
}

static void make_args(net *n, net_layer *L) {
  const net_value *in = &n->values[L->in], *out = &n->values[L->out];
  L->nargs = 0;
  switch (L->op) {
  case NET_CONV: {
    const topi_conv2d *p = &L->conv;
    act_arg(L, in);
    arg(L, L->w, 4, (int64_t[]){p->c_out, p->c_in / p->groups, p->kh, p->kw});
    arg(L, L->b, 1, (int64_t[]){p->c_out});
    if (L->res >= 0) act_arg(L, &n->values[L->res]);
    act_arg(L, out);
    break;
  }
  case NET_POOL:
  case NET_GPOOL: act_arg(L, in), act_arg(L, out); break;
  case NET_FC:
    arg(L, in->data, 2, (int64_t[]){L->fc.m, L->fc.k});
    arg(L, L->w, 2, (int64_t[]){L->fc.n, L->fc.k});
    arg(L, L->b, 1, (int64_t[]){L->fc.n});
    arg(L, out->data, 2, (int64_t[]){L->fc.m, L->fc.n});
    break;
  case NET_SOFTMAX:
    arg(L, in->data, 2, (int64_t[]){L->softmax.m, L->softmax.n});
    arg(L, out->data, 2, (int64_t[]){L->softmax.m, L->softmax.n});
    break;
  }
}

int net_compile(net *n) {
  if (n->mod) return 0;
  if (net_finish(n)) return -1;
  tec_ctx_free(n->ctx); /* a failed compile's */
  n->ctx = tec_ctx_new();
  if (!n->ctx) return net_fail(n, "net_compile: out of memory");
  lower_func *funcs[NET_MAX_LAYERS];
  if (check_records(n, "net_compile")) return -1;
  const tec_target *host = tec_target_parse(n->ctx, NULL); /* once for every layer */
  if (!host) return net_fail(n, "net_compile: %s", tec_ctx_error(n->ctx));
  if (lower_all(n, "net_compile", host, funcs)) return -1;
  /* the buffers first: n->mod is set only once everything is in place, so a compile that ran
   * out of memory is retried whole, never taken as done */
  for (int v = 0; v < n->nvalues; v++) {
    size_t bytes = ((size_t)net_value_floats(n, v) * sizeof(float) + 63) / 64 * 64;
    free(n->values[v].data);
    n->values[v].data = aligned_alloc(64, bytes);
    if (!n->values[v].data) return net_fail(n, "net_compile: out of memory");
    memset(n->values[v].data, 0, bytes);
  }
  n->mod = tec_build_for(n->ctx, n->nlayers, funcs, host);
  if (!n->mod) return net_fail(n, "net_compile: %s", tec_ctx_error(n->ctx));
  for (int i = 0; i < n->nlayers; i++) make_args(n, &n->layers[i]);
  return 0;
}

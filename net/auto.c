/* auto.c — a network scheduled by the auto-scheduler instead of its templates: each layer is
 * its direct template's declaration (the same te compute, layouts and margins) scheduled by
 * tec_autoschedule (instant) or tec_autoschedule_tuned (options.records); and its tuning
 * (net_tune_auto): the task scheduler over the layers' programs, each candidate measured where
 * its layer runs, right after its predecessor layer, on the activations the network computed. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "net/internal.h"

/* Layer L declared in ctx (a convolution as plain te compute: auto_decl.c; the other layers by
 * their templates' declarations) and an unscheduled schedule of it. NULL with an error in ctx. */
static sch_schedule *declared(tec_ctx *ctx, const net_layer *L, topi_decl *d) {
  const topi_template *t = topi_template_find(L->tmpl);
  const char *why = NULL;
  if (!t) return tec_ctx_set_error(ctx, "no template %s", L->tmpl), NULL;
  if (!t->applies(ctx, net_layer_problem(L), &why)) {
    if (why) tec_ctx_set_error(ctx, "%s", why);
    return NULL;
  }
  if (L->op == NET_CONV  ? net_auto_declare_conv(ctx, t, &L->conv, d)
      : L->op == NET_FC ? net_auto_declare_dense(ctx, t, &L->fc, d)
                        : t->declare(ctx, net_layer_problem(L), d))
    return NULL;
  return sch_create(ctx, 1, &d->out);
}

int net_auto_instantiate(net *n, int i, const char *who, const tec_target *target, topi_op *op) {
  net_layer *L = &n->layers[i];
  topi_decl *d = tec_ctx_alloc(n->ctx, sizeof *d);
  sch_schedule *s = d ? declared(n->ctx, L, d) : NULL;
  /* the auto-scheduler takes target text: the host as NULL, another as its triple and CPU */
  const char *tg = !target || target->is_host ? NULL
                   : *target->cpu ? tec_ctx_printf(n->ctx, "llvm -mtriple=%s -mcpu=%s", target->triple, target->cpu)
                                  : tec_ctx_printf(n->ctx, "llvm -mtriple=%s", target->triple);
  tec_autosched_report rep;
  if (!s || (n->opt.records ? tec_autoschedule_tuned(s, tg, NULL, n->opt.records, &rep)
                            : tec_autoschedule(s, tg, NULL, &rep)))
    return net_fail(n, "%s: layer %s: %s", who, L->name, tec_ctx_error(n->ctx));
  L->tuned = n->opt.records && !rep.warning;
  snprintf(L->config, sizeof L->config, "auto %s", rep.config ? rep.config : "(instant)");
  snprintf(L->note, sizeof L->note, "%s", rep.warning ? rep.warning : "");
  if (rep.warning) fprintf(stderr, "%s: layer %s: %s\n", who, L->name, rep.warning);
  *op = (topi_op){.decl = d, .sched = s, .nargs = d->nargs, .args = d->args, .out = d->out};
  return 0;
}

/* ---- tuning: the candidates measured in place ---- */

typedef struct in_place {
  net *n;
  float *img;
  float **ref;     /* [layer]: its output as the network computed it */
  int repeats;
  double rtol;
  int cpu; /* time calls in the process's CPU time (1 thread), else the wall clock */
} in_place;

static double clock_of(const in_place *ip) {
  if (!ip->cpu) return tec_rt_now();
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the layer before i run again (its inputs are as the network left them): its output, layer
 * i's input, is in the cache as in a run */
static int run_predecessor(in_place *ip, int i) {
  net *n = ip->n;
  if (i == 0) {
    memcpy(n->values[0].data, ip->img, sizeof(float) * (size_t)net_value_floats(n, 0));
    return 0;
  }
  const net_layer *P = &n->layers[i - 1];
  return tec_module_run(n->mod, P->name, P->nargs, P->args);
}

static tune_status fail(char *err, size_t len, tune_status st, const char *what, const char *why) {
  snprintf(err, len, "%s: %s", what, why);
  return st;
}

static tune_status measure(void *user, int i, int64_t index, double *seconds, char *err, size_t len) {
  in_place *ip = user;
  net *n = ip->n;
  net_layer *L = &n->layers[i];
  tec_ctx *c = tec_ctx_new();
  if (!c) return fail(err, len, TUNE_BUILD_ERROR, L->name, "out of memory");
  topi_decl d;
  sch_schedule *s = declared(c, L, &d);
  lower_func *f = s && !tec_autoschedule_config(s, NULL, NULL, index, NULL)
                      ? tec_lower(s, L->name, d.nargs, d.args)
                      : NULL;
  tec_module *m = f ? tec_build_for(c, 1, &f, tec_target_parse(c, NULL)) : NULL;
  tune_status st = TUNE_OK;
  if (!m) {
    st = fail(err, len, TUNE_BUILD_ERROR, L->name, tec_ctx_error(c));
    tec_ctx_free(c);
    return st;
  }
  if (tec_module_bind_constants(m, L->name, L->nargs, L->args) || run_predecessor(ip, i) ||
      tec_module_run(m, L->name, L->nargs, L->args))
    st = fail(err, len, TUNE_RUN_ERROR, L->name, tec_rt_last_error());
  float *out = n->values[L->out].data, *ref = ip->ref[i];
  int64_t cnt = net_value_floats(n, L->out);
  for (int64_t k = 0; st == TUNE_OK && k < cnt; k++)
    if (!(fabs((double)out[k] - ref[k]) <= ip->rtol * (1 + fabs((double)ref[k])))) {
      snprintf(err, len, "%s: output element %lld is %g, the network's %g", L->name, (long long)k,
               (double)out[k], (double)ref[k]);
      st = TUNE_WRONG;
    }
  double costs[64];
  for (int r = 0; st == TUNE_OK && r < ip->repeats; r++) {
    if (run_predecessor(ip, i)) st = fail(err, len, TUNE_RUN_ERROR, "predecessor", tec_rt_last_error());
    double t0 = clock_of(ip);
    if (st == TUNE_OK && tec_module_run(m, L->name, L->nargs, L->args))
      st = fail(err, len, TUNE_RUN_ERROR, L->name, tec_rt_last_error());
    costs[r] = clock_of(ip) - t0;
  }
  if (st == TUNE_OK) *seconds = tec_rt_median(costs, ip->repeats);
  memcpy(out, ref, sizeof(float) * (size_t)cnt); /* the next layers read what the network wrote */
  tec_module_free(m);
  tec_ctx_free(c);
  return st;
}

int net_tune_auto(net *n, const net_tune_auto_options *o, tec_ctx *ctx,
                  tec_autosched_tasks_result *r) {
  if (!n) return -1;
  if (!o || !ctx || !r) return net_fail(n, "net_tune_auto: options, ctx and result must be given");
  if (!n->opt.autosched)
    return net_fail(n, "net_tune_auto: the network is not auto-scheduled; create it with "
                       "options.autosched = 1");
  if (!o->records) return net_fail(n, "net_tune_auto: options.records is NULL; give the file the "
                                      "trials are appended to");
  if (o->repeats < 0 || o->repeats > 64 || o->rtol < 0)
    return net_fail(n, "net_tune_auto: repeats %d, rtol %g; legal: repeats 0..64 (0: 5), rtol >= 0 "
                       "(0: 1e-3)", o->repeats, o->rtol);
  if (net_compile(n) || net_prepare(n)) return -1;
  in_place ip = {.n = n, .repeats = o->repeats ? o->repeats : 5, .rtol = o->rtol > 0 ? o->rtol : 1e-3,
                 .cpu = !o->wall && tec_rt_get_num_threads() == 1};
  ip.img = net_image(n, 7);
  ip.ref = calloc((size_t)n->nlayers, sizeof *ip.ref);
  sch_schedule **progs = calloc((size_t)n->nlayers, sizeof *progs);
  int rc = -1;
  if (!ip.img || !ip.ref || !progs) {
    net_fail(n, "net_tune_auto: out of memory");
    goto out;
  }
  if (net_run(n, ip.img, NULL)) goto out;
  for (int i = 0; i < n->nlayers; i++) {
    int64_t cnt = net_value_floats(n, n->layers[i].out);
    if (!(ip.ref[i] = malloc(sizeof(float) * (size_t)cnt))) {
      net_fail(n, "net_tune_auto: out of memory");
      goto out;
    }
    memcpy(ip.ref[i], n->values[n->layers[i].out].data, sizeof(float) * (size_t)cnt);
    topi_decl *d = tec_ctx_alloc(ctx, sizeof *d);
    if (!d || !(progs[i] = declared(ctx, &n->layers[i], d))) {
      net_fail(n, "net_tune_auto: layer %s: %s", n->layers[i].name, tec_ctx_error(ctx));
      goto out;
    }
  }
  tec_autosched_tasks_options to = {.trials = o->trials, .batch = o->batch, .tuner = o->tuner,
                                    .seed = o->seed, .records = o->records,
                                    .progress = o->progress, .measure = measure, .user = &ip};
  if (tec_autosched_tune_tasks(ctx, n->nlayers, progs, &to, r)) {
    net_fail(n, "net_tune_auto: %s", tec_ctx_error(ctx));
    goto out;
  }
  rc = 0;
out:
  for (int i = 0; ip.ref && i < n->nlayers; i++) free(ip.ref[i]);
  free(ip.ref), free(ip.img), free(progs);
  return rc;
}

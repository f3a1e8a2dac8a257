/* prepare.c — running functions that have a prepare/run split (constant precompute).
 *
 * tec_lower moves the stages that depend on constants alone into <name>_prepare; the module
 * owns the packed buffers they fill. tec_module_run(m, "conv", args) with the argument list
 * given to tec_lower runs prepare on the first call (or after tec_module_bind_constants), then
 * only <name>_run on every call: constants are read once, by design. Functions without a split
 * are called directly, so callers can use tec_module_run for everything.
 *
 * The module (module.c) resolves the handle and the function's entries and calls in here;
 * nothing here calls back.
 *
 * Threads: any number of threads may call tec_module_run on one module at once, the first
 * calls included: prepare runs once, under the record's lock, and the others wait for it
 * (`bound` is published with release/acquire). tec_module_bind_constants takes the same lock,
 * but replaces the packed buffers that concurrent runs read: call it while no run is in
 * flight. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ir/eval.h"
#include "module/module.h"

struct mod_prepared {
  const lower_func *f;     /* the run half (f->prepare is the other) */
  DLTensor *packed;        /* npacked module-owned tensors */
  int64_t *shapes;         /* their shapes (npacked * 16) */
  int bound;               /* packed buffers filled (atomic: read without the lock) */
  int64_t count;           /* prepare executions (atomic) */
  pthread_mutex_t lock;    /* serializes prepare */
  int lock_ok;             /* lock initialized */
};

int mod_prepared_init(tec_ctx *ctx, int n, lower_func *const *funcs, mod_prepared **out,
                     int *nout) {
  mod_prepared *p = tec_ctx_alloc(ctx, sizeof *p * (size_t)(n ? n : 1));
  if (!p) return -1;
  for (int i = 0; i < n; i++) {
    p[i].f = funcs[i];
    p[i].lock_ok = pthread_mutex_init(&p[i].lock, NULL) == 0;
    if (!p[i].lock_ok) {
      mod_prepared_release(p, i);
      return tec_ctx_set_error(ctx, "tec_build: cannot create a lock for the prepare step");
    }
  }
  *out = p;
  *nout = n;
  return 0;
}

void mod_prepared_release(mod_prepared *p, int n) {
  for (int i = 0; p && i < n; i++) {
    for (int k = 0; p[i].packed && k < p[i].f->npacked; k++) tec_rt_free(p[i].packed[k].data);
    free(p[i].packed);
    free(p[i].shapes);
    p[i].packed = NULL;
    p[i].shapes = NULL;
    p[i].bound = 0;
    if (p[i].lock_ok) pthread_mutex_destroy(&p[i].lock);
    p[i].lock_ok = 0;
  }
}

mod_prepared *mod_prepared_find(mod_prepared *p, int n, const char *name) {
  for (int i = 0; name && i < n; i++)
    if (p[i].f->user_name && strcmp(p[i].f->user_name, name) == 0) return &p[i];
  return NULL;
}

const lower_func *mod_prepared_func(const mod_prepared *p) { return p->f; }

/* Binds the size variables of the tensors among args (user order) from their DLTensors. */
static int bind_sizes(const lower_func *f, DLTensor *const *args, int only_const, int *n,
                      const ir_expr **vars, int64_t *vals) {
  for (int a = 0; a < f->nuser; a++) {
    const te_tensor *t = f->user_args[a];
    if (only_const && !t->is_const) continue;
    if (te_has_margin(t)) continue; /* its extents are not its shape (constants have none) */
    if (!args[a] || !args[a]->shape || args[a]->ndim != t->ndim) continue;
    for (int d = 0; d < t->ndim; d++) {
      const ir_expr *e = t->shape[d];
      if (e->kind != IR_VAR || *n >= 64) continue;
      int seen = 0;
      for (int k = 0; k < *n; k++) seen |= vars[k] == e;
      if (!seen) vars[*n] = e, vals[(*n)++] = args[a]->shape[d];
    }
  }
  return 0;
}

/* The argument list of fn (one half of f's split): each of its tensors is either one of the
 * caller's arguments (user order) or a module-owned packed buffer. -1 past 64 arguments. */
static int half_args(const lower_func *f, const lower_func *fn, const mod_prepared *p,
                     DLTensor *const *user_args, DLTensor **out) {
  if (fn->nargs > 64)
    return tec_rt_set_error("%s: %d arguments; at most 64 are supported", f->user_name, fn->nargs);
  for (int a = 0; a < fn->nargs; a++) {
    const te_tensor *t = fn->args[a];
    out[a] = NULL;
    for (int u = 0; u < f->nuser; u++)
      if (f->user_args[u] == t) out[a] = user_args[u];
    for (int k = 0; k < f->npacked; k++)
      if (f->packed[k] == t) out[a] = &p->packed[k];
  }
  return 0;
}

/* Allocates the packed buffers (once per shape) and runs prepare with the constants. */
static int32_t run_prepare(mod_prepared *p, tec_packed_fn prep, DLTensor *const *user_args) {
  const lower_func *f = p->f, *pf = f->prepare;
  const ir_expr *vars[64];
  int64_t vals[64];
  int nv = 0;
  bind_sizes(f, user_args, 1, &nv, vars, vals);
  if (!p->packed) {
    p->packed = calloc((size_t)f->npacked, sizeof *p->packed);
    p->shapes = calloc((size_t)f->npacked * 16, sizeof *p->shapes);
    if (!p->packed || !p->shapes)
      return tec_rt_set_error("%s: out of memory for the packed constants", f->user_name);
  }
  for (int k = 0; k < f->npacked; k++) {
    const te_tensor *t = f->packed[k];
    int64_t numel = 1;
    for (int d = 0; d < t->ndim; d++) {
      ir_eval_env env = {.n = nv, .vars = vars, .vals = vals};
      int64_t v = ir_eval_int(t->shape[d], &env);
      if (env.bad || v < 0)
        return tec_rt_set_error("%s: the shape of packed tensor '%s' depends on sizes the "
                                "constant arguments do not bind", f->user_name, t->name);
      p->shapes[k * 16 + d] = v;
      numel *= v;
    }
    DLTensor *d = &p->packed[k];
    size_t bytes = (size_t)numel * (size_t)tec_dtype_bytes(t->type);
    if (d->data) tec_rt_free(d->data);
    d->data = tec_rt_alloc(bytes ? bytes : 1);
    if (!d->data) return tec_rt_set_error("%s: out of memory for packed tensor '%s'", f->user_name, t->name);
    d->device.device_type = kDLCPU;
    d->ndim = t->ndim;
    d->dtype.code = t->type.code == TEC_BOOL ? kDLUInt : t->type.code;
    d->dtype.bits = t->type.code == TEC_BOOL ? 8 : t->type.bits;
    d->dtype.lanes = 1;
    d->shape = &p->shapes[k * 16];
    d->strides = NULL;
    d->byte_offset = 0;
  }
  DLTensor *args[64];
  if (half_args(f, pf, p, user_args, args)) return -1;
  int na = pf->nargs;
  if (!prep) return tec_rt_set_error("%s: prepare function missing", f->user_name);
  int32_t rc = prep(args, na);
  if (rc == 0) {
    __atomic_fetch_add(&p->count, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&p->bound, 1, __ATOMIC_RELEASE);
  }
  return rc;
}

/* run_prepare under the record's lock; with only_if_unbound, skipped when another thread has
 * bound the constants meanwhile. */
static int32_t locked_prepare(mod_prepared *p, tec_packed_fn prep, DLTensor *const *args,
                              int only_if_unbound) {
  if (!p->lock_ok) return tec_rt_set_error("%s: the module was freed", p->f->user_name);
  pthread_mutex_lock(&p->lock);
  int32_t rc = 0;
  if (!only_if_unbound || !__atomic_load_n(&p->bound, __ATOMIC_ACQUIRE)) {
    __atomic_store_n(&p->bound, 0, __ATOMIC_RELAXED);
    rc = run_prepare(p, prep, args);
  }
  pthread_mutex_unlock(&p->lock);
  return rc;
}

int32_t mod_prepared_bind(mod_prepared *p, tec_packed_fn prep, int32_t nargs,
                          DLTensor *const *args) {
  if (!p->f->prepare) return 0; /* nothing to precompute */
  if (nargs != p->f->nuser || !args)
    return tec_rt_set_error("%s: expected the %d arguments given to tec_lower, got %d",
                            p->f->user_name, p->f->nuser, nargs);
  return locked_prepare(p, prep, args, 0);
}

int32_t mod_prepared_run(mod_prepared *p, tec_packed_fn fn, tec_packed_fn prep, int32_t nargs,
                         DLTensor *const *args) {
  const lower_func *f = p->f;
  if (nargs != f->nuser || !args)
    return tec_rt_set_error("%s: expected %d arguments, got %d", f->user_name, f->nuser, nargs);
  if (!fn) return tec_rt_set_error("%s: function missing", f->user_name);
  if (!f->prepare) return fn(args, nargs);
  if (!__atomic_load_n(&p->bound, __ATOMIC_ACQUIRE)) {
    int32_t rc = locked_prepare(p, prep, args, 1);
    if (rc) return rc;
  }
  DLTensor *a[64];
  if (half_args(f, f, p, args, a)) return -1;
  return fn(a, f->nargs);
}

int64_t mod_prepared_count(const mod_prepared *p) {
  return __atomic_load_n(&p->count, __ATOMIC_RELAXED);
}

/* clone.c — the program copied into another ctx, node for node: every tensor reachable from the
 * outputs, every expression of their shapes, axes and bodies (variables and shared subtrees
 * stay shared: a map from old node to new), the user reducers. The tuned mode schedules each
 * candidate on its own copy in the tuner's ctx for it: the IR constructors allocate in their
 * first operand's ctx, so lowering a candidate on the user's tensors would allocate in the
 * user's ctx, from the tuner's compiling thread while its main thread lowers others. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "autosched/tuned.h"

typedef struct cmap {
  const void **key;
  void **val;
  size_t cap, n;
  tec_ctx *dst;
  int oom;
} cmap;

static size_t slot(const cmap *m, const void *k) {
  uint64_t h = (uint64_t)(uintptr_t)k * 0x9e3779b97f4a7c15ull;
  size_t i = (size_t)(h >> 20) & (m->cap - 1);
  while (m->key[i] && m->key[i] != k) i = (i + 1) & (m->cap - 1);
  return i;
}

static void *get(const cmap *m, const void *k) {
  if (!m->cap) return NULL;
  size_t i = slot(m, k);
  return m->key[i] ? m->val[i] : NULL;
}

static void put(cmap *m, const void *k, void *v) {
  if (2 * (m->n + 1) > m->cap) {
    cmap g = {.cap = m->cap ? 2 * m->cap : 1024, .dst = m->dst};
    g.key = calloc(g.cap, sizeof *g.key);
    g.val = calloc(g.cap, sizeof *g.val);
    if (!g.key || !g.val) {
      free(g.key), free(g.val);
      m->oom = 1;
      return;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->key[i]) {
        size_t j = slot(&g, m->key[i]);
        g.key[j] = m->key[i], g.val[j] = m->val[i];
      }
    g.n = m->n;
    free(m->key), free(m->val);
    *m = g;
  }
  size_t i = slot(m, k);
  if (!m->key[i]) m->n++;
  m->key[i] = k, m->val[i] = v;
}

static const te_tensor *tensor(cmap *m, const te_tensor *t);
static const te_reducer *reducer(cmap *m, const te_reducer *r);

static const ir_expr *expr(cmap *m, const ir_expr *e) {
  if (!e || m->oom) return e;
  ir_expr *c = get(m, e);
  if (c) return c;
  if (!(c = tec_ctx_alloc(m->dst, sizeof *c))) return m->oom = 1, NULL;
  *c = *e;
  c->ctx = m->dst;
  put(m, e, c);
  if (e->name) c->name = tec_ctx_strdup(m->dst, e->name);
  c->a = expr(m, e->a), c->b = expr(m, e->b), c->c = expr(m, e->c);
  c->var = expr(m, e->var);
  c->dom_min = expr(m, e->dom_min), c->dom_extent = expr(m, e->dom_extent);
  if (e->nargs > 0) {
    const ir_expr **args = tec_ctx_alloc(m->dst, sizeof *args * (size_t)e->nargs);
    if (!args) return m->oom = 1, NULL;
    for (int i = 0; i < e->nargs; i++) args[i] = expr(m, e->args[i]);
    c->args = args;
  }
  c->tensor = e->tensor ? tensor(m, e->tensor) : NULL;
  c->reducer = e->reducer ? reducer(m, e->reducer) : NULL;
  return c;
}

static const ir_expr *const *exprs(cmap *m, const ir_expr *const *v, int n) {
  if (!v || n <= 0) return v;
  const ir_expr **o = tec_ctx_alloc(m->dst, sizeof *o * (size_t)n);
  if (!o) return m->oom = 1, NULL;
  for (int i = 0; i < n; i++) o[i] = expr(m, v[i]);
  return o;
}

static const te_reducer *reducer(cmap *m, const te_reducer *r) {
  te_reducer *c = get(m, r);
  if (c || m->oom) return c;
  if (!(c = tec_ctx_alloc(m->dst, sizeof *c))) return m->oom = 1, NULL;
  *c = *r;
  put(m, r, c);
  c->name = r->name ? tec_ctx_strdup(m->dst, r->name) : NULL;
  tec_dtype *types = tec_ctx_alloc(m->dst, sizeof *types * (size_t)(r->k > 0 ? r->k : 1));
  if (!types) return m->oom = 1, NULL;
  if (r->k > 0) memcpy(types, r->types, sizeof *types * (size_t)r->k);
  c->types = types;
  c->lhs = exprs(m, r->lhs, r->k), c->rhs = exprs(m, r->rhs, r->k);
  c->result = exprs(m, r->result, r->k), c->identity = exprs(m, r->identity, r->k);
  return c;
}

static const te_tensor *tensor(cmap *m, const te_tensor *t) {
  te_tensor *c = get(m, t);
  if (c || m->oom) return c;
  if (!(c = tec_ctx_alloc(m->dst, sizeof *c))) return m->oom = 1, NULL;
  *c = *t;
  c->ctx = m->dst;
  put(m, t, c);
  c->name = tec_ctx_strdup(m->dst, t->name);
  c->tag = t->tag ? tec_ctx_strdup(m->dst, t->tag) : NULL;
  c->shape = exprs(m, t->shape, t->ndim);
  c->axis = exprs(m, t->axis, t->ndim);
  c->reduce_axis = exprs(m, t->reduce_axis, t->nreduce);
  c->body = expr(m, t->body);
  if (t->ninputs > 0) {
    const te_tensor **in = tec_ctx_alloc(m->dst, sizeof *in * (size_t)t->ninputs);
    if (!in) return m->oom = 1, NULL;
    for (int i = 0; i < t->ninputs; i++) in[i] = tensor(m, t->inputs[i]);
    c->inputs = in;
  }
  if (t->outputs && t->nout > 0) {
    te_tensor **o = tec_ctx_alloc(m->dst, sizeof *o * (size_t)t->nout);
    if (!o) return m->oom = 1, NULL;
    for (int i = 0; i < t->nout; i++) o[i] = (te_tensor *)tensor(m, t->outputs[i]);
    c->outputs = o;
  }
  if (t->margin) {
    int64_t *mg = tec_ctx_alloc(m->dst, sizeof *mg * 2 * (size_t)t->ndim);
    if (!mg) return m->oom = 1, NULL;
    memcpy(mg, t->margin, sizeof *mg * 2 * (size_t)t->ndim);
    c->margin = mg;
    c->buffer_shape = exprs(m, t->buffer_shape, t->ndim);
  }
  if (t->scan) { /* a recurrence: its parts are this copy's tensors */
    te_scan_info *sc = tec_ctx_alloc(m->dst, sizeof *sc);
    te_tensor **ch = tec_ctx_alloc(m->dst, sizeof *ch * (size_t)(t->scan->nchain + 1));
    if (!sc || !ch) return m->oom = 1, NULL;
    *sc = *t->scan;
    c->scan = sc;
    sc->state = (te_tensor *)tensor(m, t->scan->state);
    sc->init = (te_tensor *)tensor(m, t->scan->init);
    sc->update = (te_tensor *)tensor(m, t->scan->update);
    for (int i = 0; i < t->scan->nchain; i++) ch[i] = (te_tensor *)tensor(m, t->scan->chain[i]);
    sc->chain = ch;
  }
  if (t->scan_of) c->scan_of = tensor(m, t->scan_of);
  c->margin_fixed_by = t->margin_fixed_by ? tec_ctx_strdup(m->dst, t->margin_fixed_by) : NULL;
  return c;
}

int as_clone_program(tec_ctx *dst, int nout, te_tensor *const *outs, te_tensor **copy) {
  cmap m = {.dst = dst};
  for (int o = 0; o < nout && !m.oom; o++) copy[o] = (te_tensor *)tensor(&m, outs[o]);
  free(m.key), free(m.val);
  return m.oom ? tec_ctx_set_error_kind(dst, TEC_ERR_OOM, "autosched: out of memory copying "
                                                          "the program for a candidate")
               : 0;
}

/* hash.c — the structural hash of a te program: FNV-1a over every tensor in topological order
 * (its name, op kind, dtype, constness, shape, whether it is an output, the ranges of its data
 * and reduce axes, and its body: node kinds, types, constants bit for bit, variable names, the
 * tensors read). Editing a constant, an index, a shape or a dtype in the compute changes it;
 * re-declaring the same program gives the same hash in any process. The auto-scheduler's
 * records (autosched/hash.c) and a generator's (tools/driver_gen.c) are keyed by it. */
#include <string.h>
#include "tec/te.h"

void te_hash_bytes(uint64_t *h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 0x100000001b3ull;
}
static void h_i64(uint64_t *h, int64_t v) { te_hash_bytes(h, &v, sizeof v); }
void te_hash_str(uint64_t *h, const char *s) {
  if (s) te_hash_bytes(h, s, strlen(s) + 1);
  else h_i64(h, -7);
}

static void h_expr(uint64_t *h, const ir_expr *e, int depth) {
  if (!e) {
    h_i64(h, -1);
    return;
  }
  if (depth > 200) return; /* the bodies a user writes are far shallower */
  h_i64(h, e->kind);
  te_hash_bytes(h, &e->type, sizeof e->type);
  switch (e->kind) {
    case IR_INT_IMM: h_i64(h, e->v.i); break;
    case IR_FLOAT_IMM: te_hash_bytes(h, &e->v.f, sizeof e->v.f); break;
    case IR_VAR:
      te_hash_str(h, e->name);
      h_i64(h, e->v.i);
      return;
    case IR_CALL: h_i64(h, e->v.i), te_hash_str(h, e->name); break;
    case IR_REDUCE: h_i64(h, e->v.i), h_i64(h, e->value_index); break;
    case IR_READ: te_hash_str(h, e->tensor ? e->tensor->name : NULL); break;
    default: break;
  }
  h_expr(h, e->a, depth + 1);
  h_expr(h, e->b, depth + 1);
  h_expr(h, e->c, depth + 1);
  h_i64(h, e->nargs);
  for (int i = 0; i < e->nargs; i++) h_expr(h, e->args[i], depth + 1);
  if (e->var) h_expr(h, e->var, depth + 1);
}

static void h_axis(uint64_t *h, const ir_expr *v) {
  h_expr(h, v, 0);
  h_expr(h, v ? v->dom_min : NULL, 0);
  h_expr(h, v ? v->dom_extent : NULL, 0);
}

void te_hash_tensors(uint64_t *h, int n, te_tensor *const *ts, int nout, te_tensor *const *outs) {
  h_i64(h, n);
  for (int i = 0; i < n; i++) {
    const te_tensor *t = ts[i];
    te_hash_str(h, t->name);
    h_i64(h, t->op);
    te_hash_bytes(h, &t->type, sizeof t->type);
    h_i64(h, t->is_const);
    h_i64(h, t->ndim);
    for (int d = 0; d < t->ndim; d++) h_expr(h, t->shape[d], 0);
    for (int o = 0; o < nout; o++) h_i64(h, outs[o] == t);
    if (t->op != TE_COMPUTE) continue;
    for (int d = 0; d < t->ndim; d++) h_axis(h, t->axis[d]);
    h_i64(h, t->nreduce);
    for (int r = 0; r < t->nreduce; r++) h_axis(h, t->reduce_axis[r]);
    h_i64(h, t->nout);
    h_expr(h, t->body, 0);
    if (t->ext) te_hash_str(h, t->ext->symbol); /* an extern stage's function, by name (a
                                                  * pointer would differ between processes) */
    if (t->scan) { /* a recurrence: its init (not read by the body) and its state */
      te_hash_str(h, t->scan->init->name);
      te_hash_str(h, t->scan->state->name);
      h_i64(h, t->scan->ninit);
    }
  }
}

int te_program_hash(tec_ctx *ctx, int nout, te_tensor *const *outs, uint64_t *out) {
  te_tensor **ts;
  int n = te_topo_order(ctx, nout, outs, &ts);
  if (n < 0) return -1;
  uint64_t h = 0xcbf29ce484222325ull;
  te_hash_str(&h, "tec-te-1");
  te_hash_tensors(&h, n, ts, nout, outs);
  *out = h;
  return 0;
}
